/*
 * btio.c - a BTIO-like MPI-IO write benchmark (NAS BT-IO, "full" MPI-IO mode; seed paper 000,
 * section V.A).
 *
 * A global N x N x N grid of 5-double points (BT's solution vector u(5, ...)) is cut with BT's
 * diagonal multi-partition (mpibench.h) over P = q*q ranks (1, 4, 9, ...): each rank owns q
 * cells, one per z slab, so its part of every time step is q sub-blocks, each a set of short
 * x-rows scattered through the file. Each of --steps time steps is appended to the file (step t
 * at byte t * N^3 * 40) with one call per rank: a file view made of the rank's cells
 * (MPI_Type_create_subarray per cell, in z order so offsets only grow), then
 * MPI_File_write_all (-c) or MPI_File_write (independent; ROMIO's data sieving decides how that
 * reaches the file).
 *
 * Timing (MPI_Wtime, maximum over ranks): open, write phase (first write call to last write
 * return, all steps), close, end-to-end (open start to close end). Rank 0 prints one JSON object.
 * The file is left in place for the caller (md5 against other runs); it is replaced when it
 * exists. Exit: 0, 1 MPI-IO error, 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpibench.h"

enum { T_OPEN, T_WRITE, T_CLOSE, T_TOTAL, T_RSS, T_COUNT };

static int g_rank;

static void usage(FILE *out)
{
    fputs("usage: btio [-n N] [-s STEPS] [-c] [-H key=value]... [--json] -o FILE\n"
          "  -n  grid points per edge (default 64; each point is 5 doubles)\n"
          "  -s  time steps appended (default 5)\n"
          "  -c  collective writes (MPI_File_write_all), else MPI_File_write\n"
          "  -H  MPI_Info hint (repeatable)\n"
          "  -o  file name, any ROMIO prefix (ufs:, bblog:)\n"
          "  the number of ranks must be a square (1, 4, 9, ...)\n",
          out);
}

static void die_mpi(int err, const char *what, const char *file)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "btio: rank %d: %s %s: %s\n", g_rank, what, file, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'J' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    long long n = 64, steps = 5;
    int collective = 0, json = 0, nprocs, q, c, err;
    const char *file = NULL;
    MPI_Info info;
    MPI_Datatype point, *cell_types, view;
    MPI_File fh;
    struct bt_cell *cells;
    double *buf, t_local[T_COUNT] = { 0 }, t[T_COUNT], t_start, t0, mib = 1048576.0;
    long long per_step = 0, k;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Info_create(&info);
    while ((c = getopt_long(argc, argv, "n:s:cH:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
        case 's':
            if (bench_parse_size(optarg, c == 'n' ? &n : &steps) != 0 || n > 1 << 20 ||
                steps > 1 << 20) {
                if (g_rank == 0)
                    fprintf(stderr, "btio: bad value '%s' for -%c\n", optarg, c);
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
                    fprintf(stderr, "btio: hint '%s' is not key=value\n", optarg);
                MPI_Finalize();
                return 2;
            }
            break;
        case 'o':
            file = optarg;
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
    q = bt_side(nprocs);
    if (file == NULL || optind != argc || q < 0 || n < q) {
        if (g_rank == 0) {
            fprintf(stderr, "btio: %s\n", file == NULL ? "-o FILE is required"
                                          : optind != argc ? "unexpected argument"
                                          : q < 0 ? "the number of ranks must be a square"
                                                  : "-n must be at least sqrt(ranks)");
            usage(stderr);
        }
        MPI_Finalize();
        return 2;
    }

    /* The rank's cells, their file types, and all steps' data, made before the clock starts. */
    cells = calloc((size_t)q, sizeof(*cells));
    cell_types = calloc((size_t)q, sizeof(*cell_types));
    MPI_Type_contiguous(5, MPI_DOUBLE, &point);
    MPI_Type_commit(&point);
    for (c = 0; c < q; c++) {
        int sizes[3] = { (int)n, (int)n, (int)n }, sub[3], start[3];

        bt_cell_of(g_rank, q, c, (int)n, &cells[c]);
        for (int d = 0; d < 3; d++) { /* C order: z, y, x */
            sub[d] = cells[c].n[2 - d];
            start[d] = cells[c].lo[2 - d];
        }
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, point, &cell_types[c]);
        per_step += (long long)sub[0] * sub[1] * sub[2];
    }
    {
        int *ones = malloc((size_t)q * sizeof(int));
        MPI_Aint *zeros = calloc((size_t)q, sizeof(MPI_Aint));

        for (c = 0; c < q; c++)
            ones[c] = 1;
        /* Cell c lies in z slab c, so the cells' bytes follow each other in the file. */
        MPI_Type_create_struct(q, ones, zeros, cell_types, &view);
        MPI_Type_commit(&view);
        free(ones);
        free(zeros);
    }
    buf = malloc((size_t)(per_step * steps * 5) * sizeof(double));
    if (cells == NULL || cell_types == NULL || buf == NULL) {
        fprintf(stderr, "btio: rank %d: out of memory\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    k = 0;
    for (int s = 0; s < steps; s++)
        for (c = 0; c < q; c++)
            for (int z = cells[c].lo[2]; z < cells[c].lo[2] + cells[c].n[2]; z++)
                for (int y = cells[c].lo[1]; y < cells[c].lo[1] + cells[c].n[1]; y++)
                    for (int x = cells[c].lo[0]; x < cells[c].lo[0] + cells[c].n[0]; x++)
                        for (int m = 0; m < 5; m++)
                            buf[k++] = bt_value(n, s, z, y, x, m);

    if (g_rank == 0)
        MPI_File_delete(file, info);
    MPI_Barrier(MPI_COMM_WORLD);
    t_start = MPI_Wtime();
    err = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
    t_local[T_OPEN] = MPI_Wtime() - t_start;
    if (err != MPI_SUCCESS)
        die_mpi(err, "open", file);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        MPI_Offset disp = (MPI_Offset)s * n * n * n * 40;
        const double *p = buf + (size_t)s * per_step * 5;

        err = MPI_File_set_view(fh, disp, point, view, "native", info);
        if (err != MPI_SUCCESS)
            die_mpi(err, "set_view on", file);
        if (collective)
            err = MPI_File_write_all(fh, p, (int)per_step, point, MPI_STATUS_IGNORE);
        else
            err = MPI_File_write(fh, p, (int)per_step, point, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            die_mpi(err, "write to", file);
    }
    t_local[T_WRITE] = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    err = MPI_File_close(&fh);
    t_local[T_CLOSE] = MPI_Wtime() - t0;
    t_local[T_TOTAL] = MPI_Wtime() - t_start;
    if (err != MPI_SUCCESS)
        die_mpi(err, "close", file);
    t_local[T_RSS] = bench_max_rss_kib();
    MPI_Reduce(t_local, t, T_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    if (g_rank == 0) {
        double total = (double)(n * n * n * 40 * steps);

        if (json) {
            printf("{\"benchmark\": \"btio\", \"api\": \"MPIIO\", \"file\": ");
            bench_json_str(stdout, file);
            printf(", \"nprocs\": %d, \"grid\": %lld, \"steps\": %lld, \"collective\": %s, "
                   "\"cells_per_rank\": %d, \"bytes_total\": %.0f, \"open_s\": %.6f, "
                   "\"write_s\": %.6f, \"close_s\": %.6f, \"total_s\": %.6f, "
                   "\"write_MiBps\": %.2f, \"total_MiBps\": %.2f, \"max_rss_kib\": %.0f}\n",
                   nprocs, n, steps, collective ? "true" : "false", q, total, t[T_OPEN],
                   t[T_WRITE], t[T_CLOSE], t[T_TOTAL], total / mib / t[T_WRITE],
                   total / mib / t[T_TOTAL], t[T_RSS]);
        } else {
            printf("btio: %d ranks, grid %lld^3, %lld steps, %s: %.1f MiB, write %.3f s, "
                   "total %.3f s (%.1f MiB/s end-to-end)\n",
                   nprocs, n, steps, collective ? "collective" : "independent", total / mib,
                   t[T_WRITE], t[T_TOTAL], total / mib / t[T_TOTAL]);
        }
    }
    for (c = 0; c < q; c++)
        MPI_Type_free(&cell_types[c]);
    MPI_Type_free(&view);
    MPI_Type_free(&point);
    MPI_Info_free(&info);
    free(buf);
    free(cell_types);
    free(cells);
    MPI_Finalize();
    return 0;
}
