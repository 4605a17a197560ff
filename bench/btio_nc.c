/*
 * btio_nc.c - the BTIO-like kernel of btio.c written with PnetCDF, to run one workload plain,
 * through PnetCDF's own burst-buffer driver (seed paper 000: hints nc_burst_buf=enable,
 * nc_burst_buf_dirname=DIR) and through bblog (ROMIO_FSTYPE_FORCE=bblog: or a bblog: name),
 * in the same run of bench/run-matrix.py.
 *
 * The file (CDF-5) has one record variable u(time, z, y, x, 5) of doubles, N points per edge;
 * the ranks split the grid with BT's diagonal multi-partition (mpibench.h, P = q*q ranks), and
 * each time step is written with q calls of ncmpi_put_vara_all per rank (one cell each; -i:
 * ncmpi_put_vara in independent data mode). The values are those of btio.c, so the variable's
 * bytes are the same whatever the decomposition or driver.
 *
 * Timing (maximum over ranks): create, write phase (first put to last put return), close
 * (ncmpi_close: PnetCDF's burst-buffer driver and bblog drain there), end-to-end (create start
 * to close end). Rank 0 prints one JSON object. Exit: 0, 1 PnetCDF error, 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <pnetcdf.h>

#include "mpibench.h"

enum { T_OPEN, T_WRITE, T_CLOSE, T_TOTAL, T_RSS, T_COUNT };

static int g_rank;

#define CHECK(call, what)                                                                        \
    do {                                                                                         \
        int e_ = (call);                                                                         \
        if (e_ != NC_NOERR) {                                                                    \
            fprintf(stderr, "btio_nc: rank %d: %s %s: %s\n", g_rank, what, file,                 \
                    ncmpi_strerror(e_));                                                         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                        \
        }                                                                                        \
    } while (0)

static void usage(FILE *out)
{
    fputs("usage: btio_nc [-n N] [-s STEPS] [-i] [-H key=value]... [--json] -o FILE\n"
          "  -n  grid points per edge (default 64; each point is 5 doubles)\n"
          "  -s  time steps (records) written (default 5)\n"
          "  -i  independent data mode (ncmpi_put_vara), else ncmpi_put_vara_all\n"
          "  -H  MPI_Info hint (repeatable), e.g. nc_burst_buf=enable\n"
          "  the number of ranks must be a square (1, 4, 9, ...)\n",
          out);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'J' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
    };
    long long n = 64, steps = 5, per_step = 0, k;
    int independent = 0, json = 0, nprocs, q, c, ncid, varid, dimids[5];
    const char *file = NULL;
    MPI_Info info;
    struct bt_cell *cells;
    double *buf, t_local[T_COUNT] = { 0 }, t[T_COUNT], t_start, t0, mib = 1048576.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Info_create(&info);
    while ((c = getopt_long(argc, argv, "n:s:iH:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'n':
        case 's':
            if (bench_parse_size(optarg, c == 'n' ? &n : &steps) != 0 || n > 1 << 20 ||
                steps > 1 << 20) {
                if (g_rank == 0)
                    fprintf(stderr, "btio_nc: bad value '%s' for -%c\n", optarg, c);
                MPI_Finalize();
                return 2;
            }
            break;
        case 'i':
            independent = 1;
            break;
        case 'H':
            if (bench_info_set(info, optarg) != 0) {
                if (g_rank == 0)
                    fprintf(stderr, "btio_nc: hint '%s' is not key=value\n", optarg);
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
            fprintf(stderr, "btio_nc: %s\n", file == NULL ? "-o FILE is required"
                                             : optind != argc ? "unexpected argument"
                                             : q < 0 ? "the number of ranks must be a square"
                                                     : "-n must be at least sqrt(ranks)");
            usage(stderr);
        }
        MPI_Finalize();
        return 2;
    }

    cells = calloc((size_t)q, sizeof(*cells));
    for (c = 0; c < q; c++) {
        bt_cell_of(g_rank, q, c, (int)n, &cells[c]);
        per_step += (long long)cells[c].n[0] * cells[c].n[1] * cells[c].n[2];
    }
    buf = malloc((size_t)(per_step * steps * 5) * sizeof(double));
    if (cells == NULL || buf == NULL) {
        fprintf(stderr, "btio_nc: rank %d: out of memory\n", g_rank);
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

    MPI_Barrier(MPI_COMM_WORLD);
    t_start = MPI_Wtime();
    CHECK(ncmpi_create(MPI_COMM_WORLD, file, NC_CLOBBER | NC_64BIT_DATA, info, &ncid), "create");
    CHECK(ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dimids[0]), "def_dim time in");
    CHECK(ncmpi_def_dim(ncid, "z", n, &dimids[1]), "def_dim z in");
    CHECK(ncmpi_def_dim(ncid, "y", n, &dimids[2]), "def_dim y in");
    CHECK(ncmpi_def_dim(ncid, "x", n, &dimids[3]), "def_dim x in");
    CHECK(ncmpi_def_dim(ncid, "component", 5, &dimids[4]), "def_dim component in");
    CHECK(ncmpi_def_var(ncid, "u", NC_DOUBLE, 5, dimids, &varid), "def_var u in");
    CHECK(ncmpi_enddef(ncid), "enddef of");
    if (independent)
        CHECK(ncmpi_begin_indep_data(ncid), "begin_indep_data of");
    t_local[T_OPEN] = MPI_Wtime() - t_start;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    k = 0;
    for (int s = 0; s < steps; s++) {
        for (c = 0; c < q; c++) {
            MPI_Offset start[5] = { s, cells[c].lo[2], cells[c].lo[1], cells[c].lo[0], 0 };
            MPI_Offset count[5] = { 1, cells[c].n[2], cells[c].n[1], cells[c].n[0], 5 };

            if (independent)
                CHECK(ncmpi_put_vara_double(ncid, varid, start, count, buf + k), "put_vara to");
            else
                CHECK(ncmpi_put_vara_double_all(ncid, varid, start, count, buf + k),
                      "put_vara_all to");
            k += count[1] * count[2] * count[3] * 5;
        }
    }
    t_local[T_WRITE] = MPI_Wtime() - t0;
    if (independent)
        CHECK(ncmpi_end_indep_data(ncid), "end_indep_data of");
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CHECK(ncmpi_close(ncid), "close");
    t_local[T_CLOSE] = MPI_Wtime() - t0;
    t_local[T_TOTAL] = MPI_Wtime() - t_start;
    t_local[T_RSS] = bench_max_rss_kib();
    MPI_Reduce(t_local, t, T_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    if (g_rank == 0) {
        double total = (double)(n * n * n * 40 * steps);

        if (json) {
            printf("{\"benchmark\": \"btio_nc\", \"api\": \"PnetCDF\", \"file\": ");
            bench_json_str(stdout, file);
            printf(", \"nprocs\": %d, \"grid\": %lld, \"steps\": %lld, \"collective\": %s, "
                   "\"cells_per_rank\": %d, \"bytes_total\": %.0f, \"open_s\": %.6f, "
                   "\"write_s\": %.6f, \"close_s\": %.6f, \"total_s\": %.6f, "
                   "\"write_MiBps\": %.2f, \"total_MiBps\": %.2f, \"max_rss_kib\": %.0f}\n",
                   nprocs, n, steps, independent ? "false" : "true", q, total, t[T_OPEN],
                   t[T_WRITE], t[T_CLOSE], t[T_TOTAL], total / mib / t[T_WRITE],
                   total / mib / t[T_TOTAL], t[T_RSS]);
        } else {
            printf("btio_nc: %d ranks, grid %lld^3, %lld steps: %.1f MiB, write %.3f s, total "
                   "%.3f s (%.1f MiB/s end-to-end)\n",
                   nprocs, n, steps, total / mib, t[T_WRITE], t[T_TOTAL],
                   total / mib / t[T_TOTAL]);
        }
    }
    MPI_Info_free(&info);
    free(buf);
    free(cells);
    MPI_Finalize();
    return 0;
}
