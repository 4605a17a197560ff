/*
 * vpic_h5.c - the particle output of a plasma code through parallel HDF5 (VPIC-IO's pattern),
 * with computation between the time steps: the output-phase workload of issue 21.
 *
 * One file. Each of -N time steps creates a group "Step#k" holding 8 one-dimensional datasets
 * of P*n elements (n = -n particles per rank): x, y, z, px, py, pz (32-bit float) and id1, id2
 * (32-bit int). Rank r writes elements [r*n, (r+1)*n) of each with one H5Dwrite, collective
 * unless -i. Between two time steps the program computes for -T seconds (sleeping, or spinning
 * with --busy); after the last step it calls H5Fflush (global scope), then closes the file.
 * Datasets are contiguous, never filled, without time stamps, so the file's bytes depend only on
 * the data and md5 can compare runs. The file is kept unless --delete.
 *
 * Times (maximum over ranks; t0 is a barrier before H5Fcreate): open_s = H5Fcreate; write_s =
 * the time steps' group, dataset and H5Dwrite calls, summed; flush_s, close_s; compute_s = the
 * computation; visible_s = open to close minus this rank's computation; total_s = t0 to the
 * barrier after H5Fclose; bytes_total = the datasets' bytes of all ranks and steps; max_rss_kib
 * = the largest rank's peak resident memory.
 * Rank 0 prints one JSON object. Exit: 0, 1 HDF5 or MPI error, 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>

#include "mpibench.h"

#define NVARS 8

static const char *const var_name[NVARS] = { "x", "y", "z", "px", "py", "pz", "id1", "id2" };
static int g_rank;

static void die_h5(const char *what, const char *name)
{
    fprintf(stderr, "vpic_h5: rank %d: %s %s failed (HDF5 error stack above)\n", g_rank, what,
            name);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void usage_exit(const char *why)
{
    if (g_rank == 0)
        fprintf(stderr,
                "vpic_h5: %s\n"
                "usage: vpic_h5 [-n particles] [-N steps] [-T seconds] [--busy] [-i]\n"
                "               [-H key=value]... [--delete] -o FILE\n"
                "  -n  particles per rank per step (k, m suffixes; default 1m: 32 MiB)\n",
                why);
    MPI_Finalize();
    exit(2);
}

/* Value of variable v of particle g at step k: exact in a float for g < 2^22. */
static float fvalue(int v, long long g, int k)
{
    return (float)(g % 4194304) * 0.25f + (float)(v * 16 + k);
}

/* Writes time step k: group Step#k and its 8 datasets, this rank's n particles of each. */
static void write_step(hid_t file, hid_t dxpl, int k, long long n, long long first,
                       long long total, float **fbuf, int *ibuf)
{
    char gname[32];
    hsize_t dims[1] = { (hsize_t)total }, start[1] = { (hsize_t)first }, count[1] = { (hsize_t)n };
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t group, space, mspace;

    H5Pset_obj_track_times(gcpl, 0);
    H5Pset_obj_track_times(dcpl, 0);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    snprintf(gname, sizeof(gname), "Step#%d", k);
    group = H5Gcreate2(file, gname, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    if (group < 0)
        die_h5("H5Gcreate2 of", gname);
    space = H5Screate_simple(1, dims, NULL);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    mspace = H5Screate_simple(1, count, NULL);
    for (long long i = 0; i < n; i++)
        ibuf[n + i] = k; /* id2: the step */
    for (int v = 0; v < NVARS; v++) {
        int is_int = v >= 6;
        hid_t dset = H5Dcreate2(group, var_name[v], is_int ? H5T_STD_I32LE : H5T_IEEE_F32LE,
                                space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        const void *buf = is_int ? (const void *)(ibuf + (v - 6) * n) : (const void *)fbuf[v];

        if (dset < 0)
            die_h5("H5Dcreate2 of", var_name[v]);
        if (H5Dwrite(dset, is_int ? H5T_NATIVE_INT : H5T_NATIVE_FLOAT, mspace, space, dxpl,
                     buf) < 0)
            die_h5("H5Dwrite of", var_name[v]);
        H5Dclose(dset);
    }
    H5Sclose(mspace);
    H5Sclose(space);
    H5Gclose(group);
    H5Pclose(dcpl);
    H5Pclose(gcpl);
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        { "busy", no_argument, NULL, 'b' },  { "delete", no_argument, NULL, 'd' },
        { "json", no_argument, NULL, 'J' },  { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    long long n = 1 << 20, first, total;
    int steps = 4, busy = 0, collective = 1, del = 0, nprocs, c;
    /* open, write, flush, close, compute, visible, peak RSS (KiB) */
    double compute_s = 2, t0, t, tm[7] = { 0 }, g[7];
    const char *path = NULL;
    float *fbuf[6];
    int *ibuf;
    hid_t fapl, dxpl, fcpl, file;
    MPI_Info info;
    char *end;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Info_create(&info);
    while ((c = getopt_long(argc, argv, "n:N:T:iH:o:h", lo, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (bench_parse_size(optarg, &n) != 0 || n > (1 << 22))
                usage_exit("bad -n (1 to 4m particles)");
            break;
        case 'N':
            steps = atoi(optarg);
            if (steps <= 0)
                usage_exit("bad -N (steps > 0)");
            break;
        case 'T':
            compute_s = strtod(optarg, &end);
            if (*end != '\0' || end == optarg || !(compute_s >= 0))
                usage_exit("bad -T (seconds >= 0)");
            break;
        case 'i':
            collective = 0;
            break;
        case 'H':
            if (bench_info_set(info, optarg) != 0)
                usage_exit("bad -H (key=value)");
            break;
        case 'o':
            path = optarg;
            break;
        case 'b':
            busy = 1;
            break;
        case 'd':
            del = 1;
            break;
        case 'J':
            break; /* JSON is the only output */
        default:
            usage_exit("see usage");
        }
    }
    if (path == NULL || optind != argc)
        usage_exit("-o FILE expected");
    first = n * g_rank;
    total = n * nprocs;
    ibuf = malloc((size_t)n * 2 * sizeof(int));
    for (int v = 0; v < 6; v++)
        fbuf[v] = malloc((size_t)n * sizeof(float));
    for (long long i = 0; i < n; i++) {
        for (int v = 0; v < 6; v++)
            fbuf[v][i] = fvalue(v, first + i, 0);
        ibuf[i] = (int)(first + i);
    }
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
    dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
    fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl);
    if (file < 0)
        die_h5("H5Fcreate of", path);
    tm[0] = MPI_Wtime() - t0;
    for (int k = 0; k < steps; k++) {
        if (k > 0) {
            t = MPI_Wtime();
            bench_compute(compute_s, busy);
            tm[4] += MPI_Wtime() - t;
        }
        t = MPI_Wtime();
        write_step(file, dxpl, k, n, first, total, fbuf, ibuf);
        tm[1] += MPI_Wtime() - t;
    }
    t = MPI_Wtime();
    if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        die_h5("H5Fflush of", path);
    tm[2] = MPI_Wtime() - t;
    t = MPI_Wtime();
    if (H5Fclose(file) < 0)
        die_h5("H5Fclose of", path);
    tm[3] = MPI_Wtime() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime() - t0;
    tm[5] = t - tm[4];
    tm[6] = bench_max_rss_kib();
    MPI_Reduce(tm, g, 7, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        printf("{\"bench\":\"vpic_h5\",\"file\":");
        bench_json_str(stdout, path);
        printf(",\"nprocs\":%d,\"particles_per_rank\":%lld,\"bytes_per_rank\":%lld,"
               "\"steps\":%d,\"collective\":%s,\"busy\":%s,\"open_s\":%.6f,\"write_s\":%.6f,"
               "\"flush_s\":%.6f,\"close_s\":%.6f,\"compute_s\":%.6f,\"visible_s\":%.6f,"
               "\"total_s\":%.6f,\"bytes_total\":%lld,\"max_rss_kib\":%.0f,"
               "\"ok\":true}\n",
               nprocs, n, n * NVARS * 4, steps, collective ? "true" : "false",
               busy ? "true" : "false", g[0], g[1], g[2], g[3], g[4], g[5], t,
               n * NVARS * 4 * steps * nprocs, g[6]);
        fflush(stdout);
    }
    if (del && g_rank == 0)
        MPI_File_delete(path, info);
    H5Pclose(fcpl);
    H5Pclose(dxpl);
    H5Pclose(fapl);
    MPI_Info_free(&info);
    for (int v = 0; v < 6; v++)
        free(fbuf[v]);
    free(ibuf);
    MPI_Finalize();
    return 0;
}
