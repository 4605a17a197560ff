/*
 * MPI_File_sync (collective). bblog_sync=pfs (default): drain every process's log into the
 * inner file and flush it, so data is on the PFS and visible to all after sync-barrier-sync,
 * as on any ROMIO file system. bblog_sync=bb: make the logs durable on the burst buffer only;
 * the data reaches the PFS at a later drain (close at the latest).
 *
 * Like every collective call, a sync orders the writes before it before those after it, across
 * processes (ad_bblog_order.c).
 */
#include "ad_bblog.h"
#include "adioi.h"

void ADIOI_BBLOG_Flush(ADIO_File fd, int *error_code)
{
    static const char myname[] = "ADIOI_BBLOG_FLUSH";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    double t0 = ADIOI_BBLOG_Now();

    *error_code = MPI_SUCCESS;
    if (st->passthrough) {
        ADIO_Flush(st->inner, error_code);
        return;
    }
    ADIOI_BBLOG_Bg_mark(st->ls);     /* a sync ends an I/O phase (pacing) */
    if (st->hints.sync_bb) {
        int rc = 0;
        /* What went around the log must be durable too, on the PFS, before the log's PFS
         * records name it (ad_bblog_write.c). */
        if (st->through_unsynced && st->inner->is_open)
            ADIO_Flush(st->inner, error_code);
        ADIOI_BBLOG_Lock(st->ls);
        if (*error_code == MPI_SUCCESS && st->ls->log)
            rc = bblog_log_sync(st->ls->log);
        ADIOI_BBLOG_Unlock(st->ls);
        if (rc != 0)
            *error_code = ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot make the log durable",
                                             bblog_log_meta_path(st->ls->log));
    } else {
        *error_code = ADIOI_BBLOG_Drain(fd, 1);
    }
    if (*error_code == MPI_SUCCESS)
        st->through_unsynced = 0;
    ADIOI_BBLOG_Coll_end(fd, 0, 1);
    st->st.t_sync += ADIOI_BBLOG_Now() - t0;
}
