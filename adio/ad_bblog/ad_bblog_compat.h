/*
 * Every difference between the ROMIO versions bblog builds against lives here, so that the
 * driver sources stay one set of files.
 *   MPICH 4.0.x: I/O counts are int.
 *   MPICH 4.1 and later: I/O counts are MPI_Aint.
 *   MPICH 4.x: ADIO_File has dirty_write, which ROMIO's flush checks before its fsync: bblog
 *     sets it on the inner file when it writes there with pwrite itself (ADIOI_BBLOG_DIRTY).
 *   MPICH 4.x: ADIOI_Fns has a SetLock slot, through which ROMIO's common code takes the locks
 *     of atomic mode and of the shared file pointer; bblog forwards it to the inner file.
 *   Open MPI 5.0 (ROMIO 3.4.1, io/romio341): as MPICH 4.0 (int counts, the SetLock slot), but
 *     ADIO_File has no dirty_write, and errors lose their message as in Open MPI 4.1 (below).
 *   Open MPI 4.1 (ROMIO 3.2.1, io/romio321): I/O counts are int; ADIOI_Fns ends at
 *     IwriteStridedColl, and the lock macros call fcntl on fd->fd_sys directly, which bblog's
 *     open sets to the inner file's descriptor, so the locks reach the inner file all the same.
 *     Its MPIO_Err_create_code (glue/openmpi/mpio_err.c) drops the message and returns the bare
 *     class, so bblog also prints its messages to stderr there (ADIOI_BBLOG_ERR_TO_STDERR):
 *     otherwise a user would get "MPI_ERR_IO" with no word of which hint or path was wrong.
 */
#ifndef AD_BBLOG_COMPAT_H_INCLUDED
#define AD_BBLOG_COMPAT_H_INCLUDED

#include "adio.h"

/* ROMIO's count type follows its generation, told by the version of the MPI it came with. A
 * ROMIO built standalone over another MPI (scripts/build-layer.sh: ROMIO 4.0.2 over MPICH 5.0.2,
 * whose mpi.h says 5) names its own with -DADIOI_BBLOG_ROMIO_NUMVERSION. */
#if !defined(ADIOI_BBLOG_ROMIO_NUMVERSION) && defined(MPICH_NUMVERSION)
#define ADIOI_BBLOG_ROMIO_NUMVERSION MPICH_NUMVERSION
#endif
#if defined(ADIOI_BBLOG_ROMIO_NUMVERSION) && ADIOI_BBLOG_ROMIO_NUMVERSION >= 40100000
typedef MPI_Aint ADIOI_BBLOG_count_t;
#else
typedef int ADIOI_BBLOG_count_t;
#endif

/* (adio.h ends by including adioi.h, which defines ADIOI_WRITE_LOCK_FUNC where the locks go
 * through the SetLock slot.) */
#if defined(MPICH_NUMVERSION) || defined(ADIOI_WRITE_LOCK_FUNC)
#define ADIOI_BBLOG_HAVE_SETLOCK 1
#endif

#ifdef MPICH_NUMVERSION
#define ADIOI_BBLOG_DIRTY(fd) ((fd)->dirty_write = 1)
#else
#define ADIOI_BBLOG_DIRTY(fd) ((void) (fd))
#define ADIOI_BBLOG_ERR_TO_STDERR 1
#endif

#ifdef HAVE_STATUS_SET_BYTES
#define ADIOI_BBLOG_SET_BYTES(status, bytes) \
    do { if (status) MPIR_Status_set_bytes((status), MPI_BYTE, (bytes)); } while (0)
#else
#define ADIOI_BBLOG_SET_BYTES(status, bytes) do { (void) (status); } while (0)
#endif

#endif
