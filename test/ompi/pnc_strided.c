/*
 * pnc_strided PATH: a CDF-5 file written through Debian's PnetCDF (libpnetcdf, Open MPI build).
 *
 * Run under mpiexec by test/ompi/run-ompi.sh. Variables:
 *   grid(y, x) int: rank r writes rows [ROWS r, ROWS (r + 1)) with ncmpi_put_vara_int_all;
 *   ids(n) double: rank r writes elements r, r + nprocs, ... with ncmpi_put_vars_double_all
 *     (interleaved across ranks: many small pieces per rank);
 *   series(t, n) int with t unlimited: NREC records, each rank writes its interleaved elements
 *     of each record (record variables interleave in the file: strided again);
 *   a global attribute.
 * Then re-opens the file and checks every value on every rank (collective reads, which PnetCDF
 * also issues right after the writes, without ncmpi_sync). Rank 0 prints "LIBMPI <path>".
 * Exits 1 on any error or mismatch.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 6
#define COLS 40
#define PER_RANK 30
#define NREC 3

static int rank, nprocs, errors;

#define PNC(call)                                                                 \
    do {                                                                          \
        int rc_ = (call);                                                         \
        if (rc_ != NC_NOERR) {                                                    \
            fprintf(stderr, "pnc_strided rank %d: %s:%d: %s: %s\n", rank,         \
                    __FILE__, __LINE__, #call, ncmpi_strerror(rc_));              \
            MPI_Abort(MPI_COMM_WORLD, 1);                                         \
        }                                                                         \
    } while (0)

static void print_libmpi(void)
{
    char line[4096];
    FILE *f = fopen("/proc/self/maps", "r");

    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        char *p = strstr(line, "/");
        if (p != NULL && strstr(p, "libmpi.so") != NULL) {
            printf("LIBMPI %s", p);
            break;
        }
    }
    fclose(f);
}

static int grid_value(MPI_Offset y, MPI_Offset x)
{
    return (int) (y * 100 + x);
}

static double ids_value(MPI_Offset i)
{
    return (double) i * 0.5 + 1.0;
}

static int series_value(MPI_Offset t, MPI_Offset i)
{
    return (int) (t * 10000 + i);
}

int main(int argc, char **argv)
{
    int ncid, dy, dx, dn, dt, grid, ids, series, total = 0;
    int dims[2];
    MPI_Offset start[2], count[2], stride[2];
    MPI_Offset ny, n;
    int *g, *s;
    double *d;
    char title[32] = "";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: pnc_strided PATH\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        print_libmpi();
    ny = (MPI_Offset) ROWS * nprocs;
    n = (MPI_Offset) PER_RANK * nprocs;
    g = malloc(sizeof(int) * (size_t) (ny * COLS));
    s = malloc(sizeof(int) * (size_t) (NREC * n));
    d = malloc(sizeof(double) * (size_t) n);
    if (g == NULL || s == NULL || d == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);

    PNC(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &ncid));
    PNC(ncmpi_def_dim(ncid, "y", ny, &dy));
    PNC(ncmpi_def_dim(ncid, "x", COLS, &dx));
    PNC(ncmpi_def_dim(ncid, "n", n, &dn));
    PNC(ncmpi_def_dim(ncid, "t", NC_UNLIMITED, &dt));
    dims[0] = dy;
    dims[1] = dx;
    PNC(ncmpi_def_var(ncid, "grid", NC_INT, 2, dims, &grid));
    PNC(ncmpi_def_var(ncid, "ids", NC_DOUBLE, 1, &dn, &ids));
    dims[0] = dt;
    dims[1] = dn;
    PNC(ncmpi_def_var(ncid, "series", NC_INT, 2, dims, &series));
    PNC(ncmpi_put_att_text(ncid, NC_GLOBAL, "title", 15, "bblog pnc test"));
    PNC(ncmpi_enddef(ncid));

    for (MPI_Offset y = 0; y < ROWS; y++)
        for (MPI_Offset x = 0; x < COLS; x++)
            g[y * COLS + x] = grid_value(rank * ROWS + y, x);
    start[0] = (MPI_Offset) rank * ROWS;
    start[1] = 0;
    count[0] = ROWS;
    count[1] = COLS;
    PNC(ncmpi_put_vara_int_all(ncid, grid, start, count, g));

    for (MPI_Offset i = 0; i < PER_RANK; i++)
        d[i] = ids_value(rank + i * nprocs);
    start[0] = rank;
    count[0] = PER_RANK;
    stride[0] = nprocs;
    PNC(ncmpi_put_vars_double_all(ncid, ids, start, count, stride, d));

    for (MPI_Offset t = 0; t < NREC; t++)
        for (MPI_Offset i = 0; i < PER_RANK; i++)
            s[t * PER_RANK + i] = series_value(t, rank + i * nprocs);
    start[0] = 0;
    start[1] = rank;
    count[0] = NREC;
    count[1] = PER_RANK;
    stride[0] = 1;
    stride[1] = nprocs;
    PNC(ncmpi_put_vars_int_all(ncid, series, start, count, stride, s));
    PNC(ncmpi_close(ncid));

    PNC(ncmpi_open(MPI_COMM_WORLD, argv[1], NC_NOWRITE, MPI_INFO_NULL, &ncid));
    start[0] = start[1] = 0;
    count[0] = ny;
    count[1] = COLS;
    PNC(ncmpi_get_vara_int_all(ncid, grid, start, count, g));
    count[0] = n;
    PNC(ncmpi_get_vara_double_all(ncid, ids, start, count, d));
    count[0] = NREC;
    count[1] = n;
    PNC(ncmpi_get_vara_int_all(ncid, series, start, count, s));
    PNC(ncmpi_get_att_text(ncid, NC_GLOBAL, "title", title));
    PNC(ncmpi_close(ncid));

    for (MPI_Offset y = 0; y < ny; y++)
        for (MPI_Offset x = 0; x < COLS; x++)
            if (g[y * COLS + x] != grid_value(y, x) && errors++ < 5)
                fprintf(stderr, "pnc_strided rank %d: grid[%lld][%lld] = %d, expected %d\n",
                        rank, (long long) y, (long long) x, g[y * COLS + x], grid_value(y, x));
    for (MPI_Offset i = 0; i < n; i++)
        if (d[i] != ids_value(i) && errors++ < 10)
            fprintf(stderr, "pnc_strided rank %d: ids[%lld] = %g, expected %g\n", rank,
                    (long long) i, d[i], ids_value(i));
    for (MPI_Offset t = 0; t < NREC; t++)
        for (MPI_Offset i = 0; i < n; i++)
            if (s[t * n + i] != series_value(t, i) && errors++ < 15)
                fprintf(stderr, "pnc_strided rank %d: series[%lld][%lld] = %d, expected %d\n",
                        rank, (long long) t, (long long) i, s[t * n + i], series_value(t, i));
    if (strcmp(title, "bblog pnc test") != 0 && errors++ < 16)
        fprintf(stderr, "pnc_strided rank %d: title is \"%s\"\n", rank, title);

    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pnc_strided: %s (%d mismatches)\n", total == 0 ? "ok" : "FAILED", total);
    free(g);
    free(s);
    free(d);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
