/*
 * Reads. A process always reads its own earlier writes (DESIGN.md section 3) without any
 * collective: the bytes come from the inner file, and this process's logged extents are laid over
 * them from the log.
 *
 * Data path. With bblog_consistency=posix (the default) it also reads what the other processes
 * logged and published (ad_bblog_peer_list.c): those of its node from their lists, those of other
 * nodes through their read servers (ad_bblog_peer_read.c, ad_bblog_peer_remote.c). Bytes past the
 * end of the inner file that lie before the end of an overlaid extent read as zeros, as they will
 * once drained. A strided read goes to the inner driver whole where neither this process nor
 * another has logged bytes to lay over it; otherwise it is read one contiguous piece at a time.
 * Nonblocking reads are done when their call returns.
 *
 * Locking. The logstate's lock is held across the inner read and the overlay: a background drain
 * forgets an extent only after writing it, and only under the lock, so the bytes are in the inner
 * read or in the overlay.
 *
 * Collective calls. A collective read drains first where any process holds logged data (one
 * MPI_Allreduce tells), then the inner two-phase read serves everyone: programs (PnetCDF's among
 * them) read there what other processes wrote just before, without the sync-barrier-sync MPI asks
 * for, and get it on plain ROMIO. It counts as a collective call (write order, planning points).
 */
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
#include "adioi.h"

static int has_logged(struct ADIOI_BBLOG_state *st)
{
    return !st->passthrough && st->ls->idx && bblog_idx_count(st->ls->idx) > 0;
}

/* Lays this process's logged bytes of [off, off+len) over buf; returns through *end the end
 * (relative to off) of the last overlaid extent, 0 if none. */
static int overlay(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, char *buf, ADIO_Offset got,
                   ADIO_Offset * end)
{
    static const char myname[] = "ADIOI_BBLOG_READ";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct bblog_idx_iter it;
    struct bblog_extent e;
    int rc;

    *end = 0;
    bblog_idx_iter_init(st->ls->idx, &it, (uint64_t) off, (uint64_t) len);
    while (bblog_idx_iter_next(&it, &e)) {
        ADIO_Offset rel = (ADIO_Offset) e.off - off;
        /* Bytes between the inner file's end and this extent are a hole: zeros. */
        if (rel > got && rel > *end)
            memset(buf + (got > *end ? got : *end), 0, rel - (got > *end ? got : *end));
        rc = bblog_log_read(st->ls->log, e.log_off, e.len, buf + rel);
        if (rc != 0)
            return ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot read back the log",
                                      bblog_log_data_path(st->ls->log));
        *end = rel + (ADIO_Offset) e.len;
        st->stats.bytes_overlaid += e.len;
    }
    return MPI_SUCCESS;
}

void ADIOI_BBLOG_ReadContig(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status * status, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    MPI_Count size;
    ADIO_Offset off = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind : offset, len, got, end;
    int done;

    *error_code = MPI_SUCCESS;
    MPI_Type_size_x(datatype, &size);
    len = (ADIO_Offset) size * count;
    st->stats.read_calls++;
    /* Held across both steps: a background drain forgets an extent only after writing it, and
     * only under the lock, so the bytes are in the inner read or in the overlay. */
    ADIOI_BBLOG_Lock(st->ls);
    end = 0;
    done = 0;
    if (st->peers)
        *error_code = ADIOI_BBLOG_Peer_read(fd, off, len, buf, &got, &done);
    if (*error_code == MPI_SUCCESS && !done) {
        *error_code = ADIOI_BBLOG_Read_inner(fd, off, len, buf, &got);
        if (*error_code == MPI_SUCCESS && has_logged(st))
            *error_code = overlay(fd, off, len, buf, got, &end);
    }
    ADIOI_BBLOG_Unlock(st->ls);
    if (*error_code != MPI_SUCCESS)
        return;
    if (end > got)
        got = end;
    ADIOI_BBLOG_SET_BYTES(status, got);
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = off + got;
    fd->fp_sys_posn = off + got;
}

void ADIOI_BBLOG_ReadStrided(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Status * status, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    /* Contiguous in memory and file (a collective read lands here): one piece. */
    if (ADIOI_BBLOG_Contig_access(fd, datatype, file_ptr_type, offset, &offset)) {
        ADIOI_BBLOG_ReadContig(fd, buf, count, datatype, file_ptr_type, offset, status,
                               error_code);
        return;
    }
    if (!has_logged(st) && !(st->peers && ADIOI_BBLOG_Peer_any(fd))) {
        ADIOI_BBLOG_INNER_STRIDED(fd, st,
                                  ADIO_ReadStrided(st->inner, buf, count, datatype,
                                                   file_ptr_type, offset, status, error_code));
        return;
    }
    /* One ReadContig (inner read + overlay) per contiguous piece of the access. */
    ADIOI_GEN_ReadStrided_naive(fd, buf, count, datatype, file_ptr_type, offset, status,
                                error_code);
}

void ADIOI_BBLOG_ReadStridedColl(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int mine, any;

    if ((*error_code = ADIOI_BBLOG_SETTLE(st)) != MPI_SUCCESS)
        return;
    mine = has_logged(st);
    /* A collective read is a point all processes reach together. Programs (PnetCDF's among
     * them) read there what other processes wrote just before, without the sync-barrier-sync
     * MPI asks for, and get it on plain ROMIO; so when any process holds logged data, the
     * logs are drained first, then the inner two-phase read serves everyone. */
    if (ADIOI_BBLOG_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, fd->comm) != MPI_SUCCESS)
        *error_code = ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_READSTRIDEDCOLL", __LINE__,
                                         ADIOI_BBLOG_ECOLL, "cannot read", st->pfs_path);
    else
        *error_code = any ? ADIOI_BBLOG_Drain(fd, 0) : MPI_SUCCESS;
    if (*error_code == MPI_SUCCESS)
        ADIOI_BBLOG_INNER_STRIDED(fd, st,
                                  ADIO_ReadStridedColl(st->inner, buf, count, datatype,
                                                       file_ptr_type, offset, status,
                                                       error_code));
    ADIOI_BBLOG_Coll_end(fd, 0, 1);
}

void ADIOI_BBLOG_IreadContig(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Request * request, int *error_code)
{
    ADIOI_FAKE_IreadContig(fd, buf, count, datatype, file_ptr_type, offset, request,
                           error_code);
}

void ADIOI_BBLOG_IreadStrided(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Request * request, int *error_code)
{
    ADIOI_FAKE_IreadStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                            error_code);
}

void ADIOI_BBLOG_IreadStridedColl(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code)
{
    ADIO_Status status;
    int bytes = 0;

    ADIOI_BBLOG_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                                error_code);
    if (*error_code == MPI_SUCCESS)
        MPI_Get_count(&status, MPI_BYTE, &bytes);
    MPIO_Completed_request_create(&fd, bytes, error_code, request);
}
