/* Helpers of the PnetCDF application tests: see pnc_common.h. */
#define _GNU_SOURCE
#include "pnc_common.h"

#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pnct_rank;
int pnct_size;
static long failures;

void pnct_fatal(const char *what, const char *why, const char *file, int line)
{
    fprintf(stderr, "rank %d: %s:%d: %s failed: %s\n", pnct_rank, file, line, what, why);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    abort();
}

void pnct_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    failures++;
    if (failures > 20)
        return;
    fprintf(stderr, "rank %d: %s:%d: ", pnct_rank, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

struct mpi_libs {
    const char *prefix;
    int seen;
    int foreign;
};

/* dl_iterate_phdr callback: counts the loaded MPI libraries, and those outside the prefix. */
static int visit_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct mpi_libs *libs = arg;
    const char *base = strrchr(info->dlpi_name, '/');

    (void)size;
    base = base ? base + 1 : info->dlpi_name;
    if (strncmp(base, "libmpi.so", 9) != 0 && strncmp(base, "libmpich.so", 11) != 0)
        return 0;
    libs->seen++;
    if (strncmp(info->dlpi_name, libs->prefix, strlen(libs->prefix)) != 0) {
        libs->foreign++;
        fprintf(stderr, "rank %d: MPI library %s is not under %s\n", pnct_rank,
                info->dlpi_name, libs->prefix);
    }
    return 0;
}

void pnct_init(int *argc, char ***argv, const char **name, enum pnct_mode *mode)
{
    struct mpi_libs libs = {getenv("BBLOG_MPI_PREFIX"), 0, 0};
    const char *m = *argc == 3 ? (*argv)[2] : "";

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &pnct_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &pnct_size);
    if (strcmp(m, "coll") == 0) {
        *mode = PNCT_COLL;
    } else if (strcmp(m, "indep") == 0) {
        *mode = PNCT_INDEP;
    } else if (strcmp(m, "nb") == 0) {
        *mode = PNCT_NB;
    } else {
        if (pnct_rank == 0)
            fprintf(stderr, "usage: %s FILE coll|indep|nb (got mode \"%s\")\n", (*argv)[0], m);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *name = (*argv)[1];
    if (libs.prefix == NULL || libs.prefix[0] == '\0') {
        fprintf(stderr, "rank %d: BBLOG_MPI_PREFIX not set (source bblog-env.sh)\n", pnct_rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    dl_iterate_phdr(visit_lib, &libs);
    if (libs.seen == 0 || libs.foreign != 0) {
        fprintf(stderr, "rank %d: not running on the bblog MPI (%d MPI libraries, %d foreign)\n",
                pnct_rank, libs.seen, libs.foreign);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Whether environment variable `var` is set to 1 (1), 0 (0) or not set (-1). */
static int expectation(const char *var)
{
    const char *v = getenv(var);

    if (v == NULL || v[0] == '\0')
        return -1;
    if (strcmp(v, "1") != 0 && strcmp(v, "0") != 0) {
        fprintf(stderr, "rank %d: %s must be 1 or 0, not \"%s\"\n", pnct_rank, var, v);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v[0] == '1';
}

void pnct_check_drivers(int ncid)
{
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0, want;

    NCOK(ncmpi_inq_file_info(ncid, &info));
    want = expectation("PNCT_EXPECT_BBLOG");
    if (want >= 0) {
        MPI_Info_get(info, "bblog_dir", MPI_MAX_INFO_VAL, val, &flag);
        CHECK(flag == want, "the file is %sopened by bblog (hint bblog_dir %s), expected %s",
              flag ? "" : "not ", flag ? val : "absent", want ? "bblog" : "another driver");
    }
    want = expectation("PNCT_EXPECT_BB");
    if (want >= 0) {
        flag = 0;
        MPI_Info_get(info, "nc_burst_buf", MPI_MAX_INFO_VAL, val, &flag);
        flag = flag && strcmp(val, "enable") == 0;
        CHECK(flag == want, "PnetCDF's burst-buffer driver is %s, expected %s",
              flag ? "on" : "off", want ? "on" : "off");
    }
    MPI_Info_free(&info);
}

static const char *fill_mode(void)
{
    const char *v = getenv("PNCT_FILL");

    if (v == NULL || v[0] == '\0')
        return NULL;
    if (strcmp(v, "fill") != 0 && strcmp(v, "share") != 0) {
        fprintf(stderr, "rank %d: PNCT_FILL must be fill or share, not \"%s\"\n", pnct_rank, v);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

void pnct_set_fill(int ncid)
{
    if (fill_mode() != NULL)
        NCOK(ncmpi_set_fill(ncid, NC_FILL, NULL));
}

int pnct_share(void)
{
    const char *v = fill_mode();

    return v != NULL && strcmp(v, "share") == 0 ? NC_SHARE : 0;
}

int pnct_pnetcdf_bb(void)
{
    return expectation("PNCT_EXPECT_BB") == 1;
}

int pnct_finalize(const char *prog)
{
    long total = 0;

    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (pnct_rank == 0)
        printf("%s: %d ranks: %s (%ld failed checks)\n", prog, pnct_size,
               total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}
