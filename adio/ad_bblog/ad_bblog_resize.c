/*
 * MPI_File_set_size (collective): drain first, so that no logged byte past the new size can come
 * back later, then let the inner driver resize the file.
 *
 * Collective calls. Each process empties its list of published writes (ad_bblog_peer_list.c) on its
 * own, after the drain's commit. Until it has, another process's get_size and reads still count
 * what the list names, bytes the resize may just have cut. So no process returns before every list
 * is empty and the file resized: a barrier ends the call, as the new size must be what every
 * process sees at once (HDF5 compares it with its end of allocation). set_size counts as a
 * collective call (write order, planning points).
 *
 * Failures. A barrier that fails makes the call fail (ADIOI_BBLOG_ECOLL). The shared-file-pointer
 * file, never logged, is resized without a drain or a barrier.
 */
#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "adioi.h"

void ADIOI_BBLOG_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int rc;

    *error_code = st->passthrough ? MPI_SUCCESS : ADIOI_BBLOG_SETTLE(st);
    if (!st->passthrough && *error_code == MPI_SUCCESS)
        *error_code = ADIOI_BBLOG_Drain(fd, 0);
    if (*error_code == MPI_SUCCESS)
        ADIO_Resize(st->inner, size, error_code);
    if (!st->passthrough && st->nprocs > 1) {
        rc = ADIOI_BBLOG_Barrier(fd->comm);
        if (rc != MPI_SUCCESS && *error_code == MPI_SUCCESS)
            *error_code = ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_RESIZE", __LINE__, ADIOI_BBLOG_ECOLL,
                                             "cannot resize", st->pfs_path);
    }
    ADIOI_BBLOG_Coll_end(fd, 0, 1);
}
