/*
 * The shared file pointer, with no communication in MPI_File_set_view.
 *
 * Why. ROMIO keeps the shared pointer in a small file beside the data file (fd->shared_fp_fname,
 * opened on first use on MPI_COMM_SELF, locked around each fetch-and-add). MPI_File_set_view resets
 * it to zero and then holds every process in a barrier, so that no process uses the new view's
 * pointer before every process has left the old view. PnetCDF sets a view for every put and HDF5
 * two for every H5Dwrite: with the barrier (and the check of the info argument, an MPI_Allreduce) a
 * collective write through bblog would cost two collective calls where the write itself costs none.
 *
 * Data path. For a bblog file the graft (adio/graft/graft.py) has MPI_File_set_view call
 * ADIOI_BBLOG_View_changed instead of the reset, the barrier and the info check, and has
 * ADIO_Get_shared_fp and ADIO_Set_shared_fp call the functions below. Every process counts its
 * views (set_view is collective, so the count is the same on all processes at the same point of the
 * program), and the pointer file holds a slot {view, pointer} per view, view modulo NSLOT. An
 * access in view v takes slot v mod NSLOT under the file lock of that slot: a slot of an older view
 * is the reset (pointer 0 in view v).
 *
 * Invariants. No process waits for another, and a process that has not yet left an older view still
 * uses that view's pointer, as under ROMIO's barrier. A process NSLOT views or more behind another
 * that has used the pointer gets an error.
 *
 * Failures. Every process creates the pointer file at its first use, without O_EXCL; a create that
 * loses the race with another node's and fails with EEXIST (GlusterFS) opens the file again, a few
 * times at most.
 */
#include <stdint.h>
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "adioi.h"

#define NSLOT 4096

struct slot {
    uint64_t view;
    int64_t fp;
};

void ADIOI_BBLOG_View_changed(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    if (st)
        st->view++;
}

/* Opens the pointer file on first use, as ROMIO does; locks the slot of this process's view
 * and reads it (zeros past the end of the file). Returns the slot's offset, or -1 with
 * *error_code set. */
static ADIO_Offset slot_lock(ADIO_File fd, struct slot *s, int *error_code)
{
    static const char myname[] = "ADIOI_BBLOG_SHARED_FP";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    ADIO_Offset off = (ADIO_Offset) (st->view % NSLOT) * (ADIO_Offset) sizeof(*s);
    ADIO_Status status;
    MPI_Comm self;

    *error_code = MPI_SUCCESS;
    /* Every process creates the file on its first use, without O_EXCL. On a FUSE file system
     * (GlusterFS) a create that loses the race with another node's create fails with EEXIST
     * all the same: the file exists then, so open it again. */
    for (int tries = 0; fd->shared_fp_fd == ADIO_FILE_NULL; tries++) {
        int cls = MPI_SUCCESS;

        MPI_Comm_dup(MPI_COMM_SELF, &self);
        fd->shared_fp_fd = ADIO_Open(MPI_COMM_SELF, self, fd->shared_fp_fname, fd->file_system,
                                     fd->fns, ADIO_CREATE | ADIO_RDWR | ADIO_DELETE_ON_CLOSE, 0,
                                     MPI_BYTE, MPI_BYTE, MPI_INFO_NULL, ADIO_PERM_NULL,
                                     error_code);
        if (*error_code == MPI_SUCCESS)
            break;
        MPI_Comm_free(&self);   /* a failed ADIO_Open leaves the communicator to its caller */
        MPI_Error_class(*error_code, &cls);
        if (cls != MPI_ERR_FILE_EXISTS || tries == 3)
            return -1;
    }
    memset(s, 0, sizeof(*s));
    ADIOI_WRITE_LOCK(fd->shared_fp_fd, off, SEEK_SET, sizeof(*s));
    ADIO_ReadContig(fd->shared_fp_fd, s, sizeof(*s), MPI_BYTE, ADIO_EXPLICIT_OFFSET, off,
                    &status, error_code);
    if (*error_code == MPI_SUCCESS && s->view > st->view)
        *error_code = ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_OTHER,
                                      "bblog: %s: this process uses the shared file pointer of "
                                      "its view %llu, but another process has used it in view "
                                      "%llu already (%d views apart at most)", fd->filename,
                                      (unsigned long long) st->view,
                                      (unsigned long long) s->view, NSLOT - 1);
    if (*error_code != MPI_SUCCESS) {
        ADIOI_UNLOCK(fd->shared_fp_fd, off, SEEK_SET, sizeof(*s));
        return -1;
    }
    if (s->view < st->view) {   /* first use in this view: the reset of set_view */
        s->view = st->view;
        s->fp = 0;
    }
    return off;
}

/* Writes the slot back (when fp is not NULL) and unlocks it. */
static void slot_unlock(ADIO_File fd, ADIO_Offset off, struct slot *s, const ADIO_Offset *fp,
                        int *error_code)
{
    ADIO_Status status;

    if (fp) {
        s->fp = (int64_t) *fp;
        ADIO_WriteContig(fd->shared_fp_fd, s, sizeof(*s), MPI_BYTE, ADIO_EXPLICIT_OFFSET, off,
                         &status, error_code);
    }
    ADIOI_UNLOCK(fd->shared_fp_fd, off, SEEK_SET, sizeof(*s));
}

void ADIOI_BBLOG_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                               int *error_code)
{
    struct slot s;
    ADIO_Offset off = slot_lock(fd, &s, error_code), next;

    *shared_fp = 0;
    if (off < 0)
        return;
    *shared_fp = (ADIO_Offset) s.fp;
    next = *shared_fp + incr;
    slot_unlock(fd, off, &s, incr ? &next : NULL, error_code);
}

void ADIOI_BBLOG_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code)
{
    struct slot s;
    ADIO_Offset off = slot_lock(fd, &s, error_code);

    if (off >= 0)
        slot_unlock(fd, off, &s, &offset, error_code);
}
