/* Helpers of the HDF5 application tests: see h5common.h. */
#define _GNU_SOURCE
#include "h5common.h"

#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int h5t_rank;
int h5t_size;
static long failures;

void h5t_fatal(const char *what, const char *file, int line)
{
    fprintf(stderr, "rank %d: %s:%d: %s failed\n", h5t_rank, file, line, what);
    H5Eprint2(H5E_DEFAULT, stderr);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    abort();
}

void h5t_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    failures++;
    if (failures > 20)
        return;
    fprintf(stderr, "rank %d: %s:%d: ", h5t_rank, file, line);
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
        fprintf(stderr, "rank %d: MPI library %s is not under %s\n", h5t_rank,
                info->dlpi_name, libs->prefix);
    }
    return 0;
}

void h5t_init(int *argc, char ***argv, const char **name, int *coll)
{
    struct mpi_libs libs = {getenv("BBLOG_MPI_PREFIX"), 0, 0};

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &h5t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &h5t_size);
    if (*argc != 3 || (strcmp((*argv)[2], "coll") != 0 && strcmp((*argv)[2], "indep") != 0)) {
        if (h5t_rank == 0)
            fprintf(stderr, "usage: %s FILE coll|indep\n", (*argv)[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *name = (*argv)[1];
    *coll = strcmp((*argv)[2], "coll") == 0;
    if (libs.prefix == NULL || libs.prefix[0] == '\0') {
        fprintf(stderr, "rank %d: BBLOG_MPI_PREFIX not set (source bblog-env.sh)\n", h5t_rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    dl_iterate_phdr(visit_lib, &libs);
    if (libs.seen == 0 || libs.foreign != 0) {
        fprintf(stderr, "rank %d: not running on the bblog MPI (%d MPI libraries, %d foreign)\n",
                h5t_rank, libs.seen, libs.foreign);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

int h5t_finalize(const char *prog)
{
    long total = 0;

    MPI_Allreduce(&failures, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (h5t_rank == 0)
        printf("%s: %d ranks: %s (%ld failed checks)\n", prog, h5t_size,
               total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total ? 1 : 0;
}

/* The small metadata cache of APPS_MDC=small: 16 KiB, no automatic resizing, so that entries
 * are evicted, hence written, all through the run; distributed writes. (HDF5 1.10.8 itself fails
 * with a 4 KiB cache on 4 ranks, on plain ROMIO too: ranks disagree on the size of an object
 * header broadcast in H5C_protect, "Message truncated".) */
static void small_mdc(hid_t fapl)
{
    H5AC_cache_config_t cfg;

    memset(&cfg, 0, sizeof cfg);
    cfg.version = H5AC__CURR_CACHE_CONFIG_VERSION;
    H5OK(H5Pget_mdc_config(fapl, &cfg));
    cfg.set_initial_size = 1;
    cfg.initial_size = 16384;
    cfg.min_size = 1024;
    cfg.max_size = 16384;
    cfg.incr_mode = H5C_incr__off;
    cfg.flash_incr_mode = H5C_flash_incr__off;
    cfg.decr_mode = H5C_decr__off;
    cfg.dirty_bytes_threshold = 1024;
    cfg.metadata_write_strategy = H5AC_METADATA_WRITE_STRATEGY__DISTRIBUTED;
    H5OK(H5Pset_mdc_config(fapl, &cfg));
    H5OK(H5Pset_meta_block_size(fapl, 0));
    H5OK(H5Pset_small_data_block_size(fapl, 0));
}

hid_t h5t_fapl(void)
{
    hid_t fapl = H5OK(H5Pcreate(H5P_FILE_ACCESS));
    const char *mdc = getenv("APPS_MDC");

    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    if (mdc != NULL && strcmp(mdc, "small") == 0) {
        small_mdc(fapl);
        H5OK(H5Pset_coll_metadata_write(fapl, 1));
    }
    return fapl;
}

hid_t h5t_dxpl(int coll)
{
    hid_t dxpl = H5OK(H5Pcreate(H5P_DATASET_XFER));

    H5OK(H5Pset_dxpl_mpio(dxpl, coll ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
    return dxpl;
}

hid_t h5t_dcpl(int rank, const hsize_t *chunk)
{
    hid_t dcpl = H5OK(H5Pcreate(H5P_DATASET_CREATE));

    const char *fill = getenv("APPS_FILL");

    H5OK(H5Pset_obj_track_times(dcpl, 0));
    if (rank > 0)
        H5OK(H5Pset_chunk(dcpl, rank, chunk));
    /* Parallel HDF5 allocates chunks at creation and writes the fill value into them, spread
     * over the ranks, with a barrier but no MPI_File_sync before the ranks write their data
     * into the same chunks: see h5common.h. */
    if (fill == NULL || strcmp(fill, "default") != 0)
        H5OK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
    return dcpl;
}
