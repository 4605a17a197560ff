/*
 * flash_h5.c - a FLASH-I/O-like benchmark through parallel HDF5 (seed paper 000, section V.A).
 *
 * Each rank holds 80, 81 or 82 blocks (80 + rank mod 3: load imbalance) of NXB^3 cells
 * (-b 8 or 16) and NVARS (24) variables per cell. Three files are written, as FLASH does:
 *   PREFIX_chk.h5    checkpoint: every variable, double, dataset [blocks][z][y][x] each, plus
 *                    the per-block "refine level", "coordinates" and "bounding box"
 *   PREFIX_plt0.h5,  plot files: the first 4 variables in single precision, plus the same
 *   PREFIX_plt1.h5   per-block datasets
 * A rank's blocks are one contiguous hyperslab of each dataset (blocks are numbered rank by
 * rank), written with one H5Dwrite per dataset, collective (-c, H5FD_MPIO_COLLECTIVE) or
 * independent. Datasets are contiguous, allocated at creation, never filled, without time
 * stamps, so the bytes of the files depend only on the data (md5 can compare runs).
 *
 * Timing (maximum over ranks): write phase = time inside H5Dwrite calls; end-to-end = first
 * H5Fcreate to last H5Fclose return (metadata, flushes and, through bblog, drains included).
 * Rank 0 prints one JSON object. Exit: 0, 1 HDF5 error, 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>

#include "mpibench.h"

enum { T_CREATE, T_WRITE, T_CLOSE, T_TOTAL, T_RSS, T_COUNT };

static int g_rank;
static const char *g_prefix;

struct run {
    hid_t fapl, dxpl;
    int nxb, nvars, nblocks; /* nblocks: this rank's */
    long long first_block, total_blocks;
    double *dbuf; /* one variable, this rank's blocks */
    float *fbuf;
    double t_write, t_close;
};

static void die_h5(const char *what, const char *name)
{
    fprintf(stderr, "flash_h5: rank %d: %s %s failed (HDF5 error stack above)\n", g_rank, what,
            name);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static double cell_value(int var, long long block, long long cell)
{
    return (double)var * 1e9 + (double)block * 1e4 + (double)cell;
}

/* Writes one dataset of total_blocks x per_block elements of mem_type/file_type; this rank's
 * part (nblocks x per_block) is in buf. */
static void write_dataset(struct run *r, hid_t file, const char *dname, const char *fname,
                          hid_t file_type, hid_t mem_type, int rank_dims, const hsize_t *inner,
                          const void *buf)
{
    hsize_t dims[5], start[5] = { 0 }, count[5];
    hid_t dcpl, space, mspace, dset;
    double t0;

    dims[0] = (hsize_t)r->total_blocks;
    count[0] = (hsize_t)r->nblocks;
    start[0] = (hsize_t)r->first_block;
    for (int d = 1; d < rank_dims; d++)
        dims[d] = count[d] = inner[d - 1];
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
    H5Pset_obj_track_times(dcpl, 0);
    space = H5Screate_simple(rank_dims, dims, NULL);
    dset = H5Dcreate2(file, dname, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dset < 0)
        die_h5("H5Dcreate2 of", dname);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    mspace = H5Screate_simple(rank_dims, count, NULL);
    t0 = MPI_Wtime();
    if (H5Dwrite(dset, mem_type, mspace, space, r->dxpl, buf) < 0)
        die_h5("H5Dwrite to", fname);
    r->t_write += MPI_Wtime() - t0;
    H5Sclose(mspace);
    H5Sclose(space);
    H5Dclose(dset);
    H5Pclose(dcpl);
}

static void write_file(struct run *r, const char *suffix, int nvars, int single)
{
    char name[4096], dname[32];
    hsize_t cells[3] = { (hsize_t)r->nxb, (hsize_t)r->nxb, (hsize_t)r->nxb };
    hsize_t three[1] = { 3 }, box[2] = { 3, 2 };
    long long ncell = (long long)r->nxb * r->nxb * r->nxb;
    int *lref = malloc((size_t)r->nblocks * sizeof(int));
    double *coord = malloc((size_t)r->nblocks * 6 * sizeof(double));
    hid_t fcpl, file;
    double t0;

    snprintf(name, sizeof(name), "%s_%s.h5", g_prefix, suffix);
    fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0);
    file = H5Fcreate(name, H5F_ACC_TRUNC, fcpl, r->fapl);
    if (file < 0)
        die_h5("H5Fcreate of", name);
    for (int b = 0; b < r->nblocks; b++) {
        long long g = r->first_block + b;

        lref[b] = (int)(1 + g % 4);
        for (int k = 0; k < 6; k++)
            coord[b * 6 + k] = (double)g + k * 0.125;
    }
    write_dataset(r, file, "refine level", name, H5T_STD_I32LE, H5T_NATIVE_INT, 1, NULL, lref);
    write_dataset(r, file, "coordinates", name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, three,
                  coord);
    write_dataset(r, file, "bounding box", name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 3, box,
                  coord);
    for (int v = 0; v < nvars; v++) {
        for (int b = 0; b < r->nblocks; b++)
            for (long long c = 0; c < ncell; c++) {
                double x = cell_value(v, r->first_block + b, c);

                if (single)
                    r->fbuf[b * ncell + c] = (float)x;
                else
                    r->dbuf[b * ncell + c] = x;
            }
        snprintf(dname, sizeof(dname), "var%02d", v);
        if (single)
            write_dataset(r, file, dname, name, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 4, cells,
                          r->fbuf);
        else
            write_dataset(r, file, dname, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 4, cells,
                          r->dbuf);
    }
    t0 = MPI_Wtime();
    if (H5Fclose(file) < 0)
        die_h5("H5Fclose of", name);
    r->t_close += MPI_Wtime() - t0;
    H5Pclose(fcpl);
    free(coord);
    free(lref);
}

static void usage(FILE *out)
{
    fputs("usage: flash_h5 [-b 8|16] [-v NVARS] [-c] [-H key=value]... [--json] -o PREFIX\n"
          "  -b  cells per block edge (default 8)\n"
          "  -v  variables in the checkpoint (default 24; plot files get 4)\n"
          "  -c  collective H5Dwrite, else independent\n"
          "  -H  MPI_Info hint (repeatable), given to H5Pset_fapl_mpio\n"
          "  -o  file name prefix, any ROMIO prefix (ufs:, bblog:): PREFIX_chk.h5, "
          "PREFIX_plt0.h5, PREFIX_plt1.h5\n",
          out);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'J' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    struct run r;
    long long nxb = 8, nvars = 24;
    int collective = 0, json = 0, nprocs, c;
    MPI_Info info;
    double t_local[T_COUNT] = { 0 }, t[T_COUNT], t_start, mib = 1048576.0;
    long long nblocks = 0, ncell;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Info_create(&info);
    memset(&r, 0, sizeof(r));
    while ((c = getopt_long(argc, argv, "b:v:cH:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
        case 'v':
            if (bench_parse_size(optarg, c == 'b' ? &nxb : &nvars) != 0 || nxb > 64 ||
                nvars > 100 || nvars < 4) {
                if (g_rank == 0)
                    fprintf(stderr, "flash_h5: bad value '%s' for -%c (-b 1..64, -v 4..100)\n",
                            optarg, c);
                MPI_Finalize();
                return 2;
            }
            break;
        case 'c':
            collective = 1;
            break;
        case 'H':
            if (bench_info_set(info, optarg) != 0) {
                if (g_rank == 0)
                    fprintf(stderr, "flash_h5: hint '%s' is not key=value\n", optarg);
                MPI_Finalize();
                return 2;
            }
            break;
        case 'o':
            g_prefix = optarg;
            break;
        case 'J':
            json = 1;
            break;
        default:
            if (g_rank == 0)
                usage(c == 'h' ? stdout : stderr);
            MPI_Finalize();
            return c == 'h' ? 0 : 2;
        }
    }
    if (g_prefix == NULL || optind != argc) {
        if (g_rank == 0) {
            fprintf(stderr, "flash_h5: %s\n", g_prefix ? "unexpected argument"
                                                       : "-o PREFIX is required");
            usage(stderr);
        }
        MPI_Finalize();
        return 2;
    }

    r.nxb = (int)nxb;
    r.nvars = (int)nvars;
    r.nblocks = 80 + g_rank % 3;
    for (int p = 0; p < nprocs; p++) {
        if (p == g_rank)
            r.first_block = nblocks;
        nblocks += 80 + p % 3;
    }
    r.total_blocks = nblocks;
    ncell = nxb * nxb * nxb;
    r.dbuf = malloc((size_t)(r.nblocks * ncell) * sizeof(double));
    r.fbuf = malloc((size_t)(r.nblocks * ncell) * sizeof(float));
    if (r.dbuf == NULL || r.fbuf == NULL) {
        fprintf(stderr, "flash_h5: rank %d: out of memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    r.fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(r.fapl, MPI_COMM_WORLD, info);
    r.dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(r.dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);

    MPI_Barrier(MPI_COMM_WORLD);
    t_start = MPI_Wtime();
    write_file(&r, "chk", r.nvars, 0);
    write_file(&r, "plt0", 4, 1);
    write_file(&r, "plt1", 4, 1);
    t_local[T_TOTAL] = MPI_Wtime() - t_start;
    t_local[T_WRITE] = r.t_write;
    t_local[T_CLOSE] = r.t_close;
    t_local[T_RSS] = bench_max_rss_kib();
    MPI_Reduce(t_local, t, T_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    if (g_rank == 0) {
        /* Array bytes only (what FLASH-IO reports), not HDF5 metadata. */
        double per_block = (double)ncell * (8.0 * nvars + 2 * 4 * 4.0) + 3 * (4 + 24 + 48);
        double total = per_block * (double)nblocks;

        if (json) {
            printf("{\"benchmark\": \"flash_h5\", \"api\": \"HDF5\", \"file\": ");
            bench_json_str(stdout, g_prefix);
            printf(", \"nprocs\": %d, \"nxb\": %lld, \"nvars\": %lld, \"blocks_total\": %lld, "
                   "\"collective\": %s, \"bytes_total\": %.0f, \"write_s\": %.6f, "
                   "\"close_s\": %.6f, \"total_s\": %.6f, \"write_MiBps\": %.2f, "
                   "\"total_MiBps\": %.2f, \"max_rss_kib\": %.0f}\n",
                   nprocs, nxb, nvars, nblocks, collective ? "true" : "false", total,
                   t[T_WRITE], t[T_CLOSE], t[T_TOTAL], total / mib / t[T_WRITE],
                   total / mib / t[T_TOTAL], t[T_RSS]);
        } else {
            printf("flash_h5: %d ranks, %lld blocks of %lld^3, %lld vars: %.1f MiB, write %.3f "
                   "s, total %.3f s (%.1f MiB/s end-to-end)\n",
                   nprocs, nblocks, nxb, nvars, total / mib, t[T_WRITE], t[T_TOTAL],
                   total / mib / t[T_TOTAL]);
        }
    }
    H5Pclose(r.dxpl);
    H5Pclose(r.fapl);
    MPI_Info_free(&info);
    free(r.fbuf);
    free(r.dbuf);
    MPI_Finalize();
    return 0;
}
