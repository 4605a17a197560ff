/*
 * Helpers shared by the HDF5 application tests (test/apps/h5_*.c, DESIGN.md section 8, "Apps").
 *
 * Every program is what a scientist would write against Debian's parallel HDF5: it takes the
 * target file name as argv[1] (`ufs:/d/ufs.h5`, `bblog:/d/bb.h5`, or a plain name with
 * ROMIO_FSTYPE_FORCE=bblog:) and the transfer mode as argv[2] (`coll` or `indep`, given to
 * H5Pset_dxpl_mpio). It checks what it wrote by reading it back, both before close and after a
 * re-open, and exits non-zero on any failure. The runner (run-apps.sh) then compares the files
 * of the three legs with h5diff.
 *
 * APPS_MDC=small in the environment gives the file a small metadata cache (evictions, hence many
 * small metadata writes during the run), no metadata block aggregation, and the distributed
 * metadata write strategy (every rank writes some of the metadata).
 *
 * Datasets are created with H5D_FILL_TIME_NEVER unless APPS_FILL=default. With the default,
 * parallel HDF5 1.10 writes fill values into every chunk at creation, each rank a share of the
 * chunks, then (after a barrier, without MPI_File_sync) the ranks write their data over them:
 * a write-after-write between processes that MPI leaves undefined without sync-barrier-sync,
 * and that bblog does not order (the fill can win at drain; see the README).
 *
 * Values are a pure function of their global coordinates and a step number, so read-back needs
 * no stored copy.
 */
#ifndef TEST_APPS_H5COMMON_H
#define TEST_APPS_H5COMMON_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

extern int h5t_rank;
extern int h5t_size;

/* A failed HDF5 or MPI call: prints it with file:line and aborts the job (a failed collective
 * would leave the other ranks waiting). HDF5 calls return a negative value on failure. */
#define H5OK(call)                                                                          \
    __extension__({                                                                         \
        __typeof__(call) h5t_r_ = (call);                                                   \
        if (h5t_r_ < 0)                                                                     \
            h5t_fatal(#call, __FILE__, __LINE__);                                           \
        h5t_r_;                                                                             \
    })

/* A non-fatal check: prints and counts a failure; the program goes on. */
#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (!(cond))                                                                        \
            h5t_fail(__FILE__, __LINE__, __VA_ARGS__);                                      \
    } while (0)

void h5t_fatal(const char *what, const char *file, int line) __attribute__((noreturn));
void h5t_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* MPI_Init, argument checks, and the check that the MPI library this process runs on is the
 * bblog one (every loaded libmpi / libmpich lies under $BBLOG_MPI_PREFIX), since Debian's
 * libhdf5-mpich would run just as well on Debian's own libmpich and then prove nothing.
 * Sets *name and *coll (1 for collective transfers). */
void h5t_init(int *argc, char ***argv, const char **name, int *coll);
/* Sums failures over all ranks, prints one line on rank 0, MPI_Finalize; the exit status. */
int h5t_finalize(const char *prog);

/* A file access property list for MPI-IO on MPI_COMM_WORLD, with the APPS_MDC settings. */
hid_t h5t_fapl(void);
/* A transfer property list: collective or independent MPI-IO. */
hid_t h5t_dxpl(int coll);
/* A dataset creation property list with object time stamps off (they would differ between
 * legs), chunked with the given dimensions when rank > 0. */
hid_t h5t_dcpl(int rank, const hsize_t *chunk);

/* The value stored at global coordinates (i, j, k) in step `step`. Exact in a double. */
static inline double h5t_value(uint64_t i, uint64_t j, uint64_t k, int step)
{
    return (double)(((i * 1000 + j) * 1000 + k) % 100000007) + 1e9 * (double)step;
}

#endif
