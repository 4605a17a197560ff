/*
 * Helpers shared by the PnetCDF application tests (test/apps/pnc_*.c, DESIGN.md section 8,
 * "Apps").
 *
 * Every program is what a scientist would write against PnetCDF: it takes the target file name
 * as argv[1] (`ufs:/d/ufs.nc`, `bblog:/d/bb.nc`, or a plain name with ROMIO_FSTYPE_FORCE=bblog:)
 * and the way it writes as argv[2]:
 *   coll    blocking collective puts (ncmpi_put_vara_all and friends)
 *   indep   blocking independent puts, between ncmpi_begin_indep_data and ncmpi_end_indep_data
 *   nb      nonblocking ncmpi_iput_* requests completed by ncmpi_wait_all
 * It checks what it wrote by reading it back (its own data at once, other ranks' data after
 * ncmpi_sync, everything after close and re-open) and exits non-zero on any failure. The runner
 * (run-pnetcdf.sh) then compares the files of the three legs with ncmpidiff and cmp.
 *
 * The environment says which drivers must be underneath; the programs check it from the hints
 * PnetCDF reports (ncmpi_inq_file_info), so a leg cannot pass on the wrong path:
 *   PNCT_EXPECT_BBLOG=1|0   the MPI-IO file is (is not) opened by bblog (its bblog_dir hint)
 *   PNCT_EXPECT_BB=1|0      PnetCDF's own burst-buffer driver is (is not) on (nc_burst_buf,
 *                           set by the runner through PNETCDF_HINTS)
 *
 * Values are a pure function of a variable number, a step and global coordinates, so read-back
 * needs no stored copy.
 */
#ifndef TEST_APPS_PNC_COMMON_H
#define TEST_APPS_PNC_COMMON_H

#include <mpi.h>
#include <pnetcdf.h>
#include <stdint.h>

extern int pnct_rank;
extern int pnct_size;

enum pnct_mode { PNCT_COLL, PNCT_INDEP, PNCT_NB };

/* A failed PnetCDF call: prints it with file:line and PnetCDF's message, and aborts the job (a
 * failed collective would leave the other ranks waiting). */
#define NCOK(call)                                                                          \
    do {                                                                                    \
        int pnct_e_ = (call);                                                               \
        if (pnct_e_ != NC_NOERR)                                                            \
            pnct_fatal(#call, ncmpi_strerror(pnct_e_), __FILE__, __LINE__);                 \
    } while (0)

/* A non-fatal check: prints and counts a failure; the program goes on. */
#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (!(cond))                                                                        \
            pnct_fail(__FILE__, __LINE__, __VA_ARGS__);                                     \
    } while (0)

void pnct_fatal(const char *what, const char *why, const char *file, int line)
    __attribute__((noreturn));
void pnct_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* MPI_Init, argument checks, and the check that the MPI library this process runs on is the
 * bblog one (every loaded libmpi / libmpich lies under $BBLOG_MPI_PREFIX). */
void pnct_init(int *argc, char ***argv, const char **name, enum pnct_mode *mode);
/* Checks the drivers under the open file ncid against PNCT_EXPECT_BBLOG / PNCT_EXPECT_BB. */
void pnct_check_drivers(int ncid);
/* PNCT_FILL=fill or share: ncmpi_set_fill(NC_FILL) on a new file, so that ncmpi_enddef writes
 * fill values into the fixed-size variables, each rank a share, and the ranks then write their
 * data over other ranks' fill without MPI_File_sync: the write-after-write between processes
 * that bblog does not order (see the README and test/mpi/known/xwrite.c). With `share`, the
 * file is also created NC_SHARE, and PnetCDF calls MPI_File_sync after the fill. */
void pnct_set_fill(int ncid);
/* NC_SHARE when PNCT_FILL=share, else 0: for ncmpi_create's cmode. */
int pnct_share(void);
/* Whether PnetCDF's burst-buffer driver is expected on (PNCT_EXPECT_BB=1). */
int pnct_pnetcdf_bb(void);
/* Sums failures over all ranks, prints one line on rank 0, MPI_Finalize; the exit status. */
int pnct_finalize(const char *prog);

/* The value of variable `var` at global coordinates (i, j, k) in step `step`. Exact in a
 * double. */
static inline double pnct_value(int var, int step, uint64_t i, uint64_t j, uint64_t k)
{
    return (double)(((i * 1000 + j) * 1000 + k) % 100000007) + 1e9 * (double)step +
           1e11 * (double)var;
}

#endif
