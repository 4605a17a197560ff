/*
 * MPI_File_close (collective): drain what is left, report stats, close the inner file, and
 * remove the logs unless bblog_keep_logs=true. If the drain fails, the logs are kept and the
 * error says where they are, so `bblog replay` can finish the job.
 */
#include <stdio.h>

#include "ad_bblog.h"
#include "adioi.h"

void ADIOI_BBLOG_Close(ADIO_File fd, int *error_code)
{
    static const char myname[] = "ADIOI_BBLOG_CLOSE";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err = MPI_SUCCESS, rc;

    *error_code = MPI_SUCCESS;
    if (!st)
        return;
    if (st->inner != ADIO_FILE_NULL && !st->passthrough)
        err = ADIOI_BBLOG_Drain(fd, 0);
    if (!st->passthrough && st->hints_parsed && st->hints.stats[0])
        ADIOI_BBLOG_Stats_report(fd);
    if (st->ls) {
        int had_log = st->ls->log != NULL;
        rc = ADIOI_BBLOG_Logstate_detach(st->ls, err == MPI_SUCCESS && !st->hints.keep_logs);
        if (rc != 0 && err == MPI_SUCCESS)
            err = ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot close the log in",
                                     st->logdir);
        if (err != MPI_SUCCESS && had_log)
            fprintf(stderr, "bblog: rank %d: %s was not fully drained; its log stays in %s: "
                    "run `bblog replay %s --file %s` to apply it\n", st->rank, st->pfs_path,
                    st->logdir, st->logdir, st->pfs_path);
        st->ls = NULL;
    }
    if (st->inner != ADIO_FILE_NULL) {
        int ierr;
        ADIO_Close(st->inner, &ierr);
        MPIO_File_free(&st->inner);
        if (err == MPI_SUCCESS)
            err = ierr;
    }
    if (st->user_info != MPI_INFO_NULL)
        MPI_Info_free(&st->user_info);
    /* With MPI_MODE_DELETE_ON_CLOSE, ROMIO's ADIO_Close has one process delete the file right
     * after this returns, and our Delete also removes logs of the file: no process may still
     * be closing its log then. */
    if ((fd->access_mode & ADIO_DELETE_ON_CLOSE) && !st->passthrough)
        MPI_Barrier(fd->comm);
    ADIOI_Free(st);
    fd->fs_ptr = NULL;
    *error_code = err;
}
