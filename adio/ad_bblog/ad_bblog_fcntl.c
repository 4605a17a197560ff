/*
 * get_size, preallocate and atomicity.
 *
 * Sizes. MPI_File_get_size is not collective: a process answers max(size of the inner file, end of
 * its own logged data, end of the other processes' published writes), so it always sees its own
 * writes (DESIGN.md section 3) and, as on a POSIX file system, those the others published
 * (bblog_consistency=posix). All three are read under the logstate's lock.
 *
 * Collective calls. MPI_File_preallocate reaches the driver on rank 0 alone (ROMIO's prealloc.c),
 * so no collective drain can run there; it is forwarded to the inner file, which is safe: ROMIO's
 * preallocation rewrites existing bytes with themselves and zero-fills past the end, and the later
 * drain writes the logged bytes over both, which is what plain ROMIO's file holds. It waits first
 * for the lone drains of the last sync (ad_bblog_flush.c), which must not run under that rewrite.
 * set_atomicity(true) is collective: drain, then every write goes through to the inner file (under
 * its locks) until atomicity is turned off again. set_atomicity counts as a collective call (write
 * order, planning points: ad_bblog_bg_plan.c).
 */
#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
#include "adioi.h"

void ADIOI_BBLOG_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    static const char myname[] = "ADIOI_BBLOG_FCNTL";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    *error_code = MPI_SUCCESS;
    switch (flag) {
    case ADIO_FCNTL_GET_FSIZE:
        *error_code = ADIOI_BBLOG_Inner_ready(fd);
        if (*error_code != MPI_SUCCESS)
            return;
        ADIOI_BBLOG_Lock(st->ls);
        ADIO_Fcntl(st->inner, flag, fcntl_struct, error_code);
        if (*error_code == MPI_SUCCESS && !st->passthrough && st->ls->idx &&
            (ADIO_Offset) bblog_idx_end(st->ls->idx) > fcntl_struct->fsize)
            fcntl_struct->fsize = (ADIO_Offset) bblog_idx_end(st->ls->idx);
        /* As on a POSIX file system: the other processes' published writes count too. */
        if (*error_code == MPI_SUCCESS && st->peers) {
            ADIO_Offset e = ADIOI_BBLOG_Peer_end(fd);
            if (e > fcntl_struct->fsize)
                fcntl_struct->fsize = e;
        }
        ADIOI_BBLOG_Unlock(st->ls);
        return;
    case ADIO_FCNTL_SET_DISKSPACE:
        /* ROMIO's preallocation reads the file's bytes and writes them back: not over a
         * lone drain of the last sync (ad_bblog_flush.c) still under way. */
        *error_code = st->passthrough ? MPI_SUCCESS : ADIOI_BBLOG_SETTLE(st);
        if (*error_code == MPI_SUCCESS)
            *error_code = ADIOI_BBLOG_Inner_ready(fd);
        if (*error_code == MPI_SUCCESS)
            ADIO_Fcntl(st->inner, flag, fcntl_struct, error_code);
        return;
    case ADIO_FCNTL_SET_ATOMICITY:
        if (!st->passthrough)
            *error_code = ADIOI_BBLOG_SETTLE(st);
        if (*error_code == MPI_SUCCESS && fcntl_struct->atomicity && !fd->atomicity &&
            !st->passthrough)
            *error_code = ADIOI_BBLOG_Drain(fd, 0);
        if (*error_code == MPI_SUCCESS) {
            fd->atomicity = fcntl_struct->atomicity ? 1 : 0;
            st->inner->atomicity = fd->atomicity;
        }
        ADIOI_BBLOG_Coll_end(fd, 0, 1);
        return;
    default:
        *error_code = ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_ARG,
                                      "bblog: unknown fcntl flag %d on %s", flag, fd->filename);
        return;
    }
}
