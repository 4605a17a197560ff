/*
 * nc4_par PATH: a netCDF-4 (HDF5) file written in parallel through Debian's libnetcdf-mpi.
 *
 * Run under mpiexec by test/ompi/run-ompi.sh. Variables:
 *   temp(y, x) float, contiguous, collective access: rank r writes rows [ROWS r, ROWS (r + 1));
 *   ids(n) int, chunked, independent access: rank r writes elements r, r + nprocs, ... with one
 *     strided nc_put_vars_int (many small pieces per rank);
 *   a global attribute.
 * Fill values are off (NC_NOFILL): HDF5 would otherwise write fill into chunks at creation, and
 * other ranks then write the same chunks with no MPI_File_sync in between, a write-after-write
 * MPI leaves undefined and bblog does not order (README, "Known limit").
 * Then re-opens the file (nc_open_par) and checks every value on every rank. Rank 0 prints
 * "LIBMPI <path>" for the libmpi this process loaded. Exits 1 on any error or mismatch.
 */
#include <mpi.h>
#include <netcdf.h>
#include <netcdf_par.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 8
#define COLS 100
#define PER_RANK 50

static int rank, nprocs, errors;

#define NC(call)                                                                  \
    do {                                                                          \
        int rc_ = (call);                                                         \
        if (rc_ != NC_NOERR) {                                                    \
            fprintf(stderr, "nc4_par rank %d: %s:%d: %s: %s\n", rank, __FILE__,   \
                    __LINE__, #call, nc_strerror(rc_));                           \
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

static float temp_value(size_t y, size_t x)
{
    return (float) (y * 1000 + x) + 0.25f;
}

static int ids_value(size_t i)
{
    return (int) (i * 13 + 5);
}

static void write_file(const char *path)
{
    int ncid, dimids[2], nid, temp, ids;
    size_t start[2], count[2];
    ptrdiff_t stride[1];
    float *t = malloc(sizeof(float) * ROWS * COLS);
    int *v = malloc(sizeof(int) * PER_RANK);

    if (t == NULL || v == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    NC(nc_create_par(path, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    NC(nc_def_dim(ncid, "y", (size_t) ROWS * nprocs, &dimids[0]));
    NC(nc_def_dim(ncid, "x", COLS, &dimids[1]));
    NC(nc_def_dim(ncid, "n", (size_t) PER_RANK * nprocs, &nid));
    NC(nc_def_var(ncid, "temp", NC_FLOAT, 2, dimids, &temp));
    NC(nc_def_var_chunking(ncid, temp, NC_CONTIGUOUS, NULL));
    NC(nc_def_var_fill(ncid, temp, NC_NOFILL, NULL));
    NC(nc_def_var(ncid, "ids", NC_INT, 1, &nid, &ids));
    NC(nc_def_var_fill(ncid, ids, NC_NOFILL, NULL));
    NC(nc_put_att_text(ncid, NC_GLOBAL, "title", 15, "bblog nc4 test"));
    NC(nc_enddef(ncid));

    NC(nc_var_par_access(ncid, temp, NC_COLLECTIVE));
    for (size_t y = 0; y < ROWS; y++)
        for (size_t x = 0; x < COLS; x++)
            t[y * COLS + x] = temp_value((size_t) rank * ROWS + y, x);
    start[0] = (size_t) rank * ROWS;
    start[1] = 0;
    count[0] = ROWS;
    count[1] = COLS;
    NC(nc_put_vara_float(ncid, temp, start, count, t));

    NC(nc_var_par_access(ncid, ids, NC_INDEPENDENT));
    for (size_t i = 0; i < PER_RANK; i++)
        v[i] = ids_value((size_t) rank + i * (size_t) nprocs);
    start[0] = (size_t) rank;
    count[0] = PER_RANK;
    stride[0] = nprocs;
    NC(nc_put_vars_int(ncid, ids, start, count, stride, v));
    NC(nc_close(ncid));
    free(t);
    free(v);
}

static void check_file(const char *path)
{
    int ncid, temp, ids;
    size_t ny = (size_t) ROWS * nprocs, n = (size_t) PER_RANK * nprocs;
    size_t start[2] = {0, 0}, count[2] = {ny, COLS};
    float *t = malloc(sizeof(float) * ny * COLS);
    int *v = malloc(sizeof(int) * n);
    char title[32] = "";

    if (t == NULL || v == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    NC(nc_open_par(path, NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    NC(nc_inq_varid(ncid, "temp", &temp));
    NC(nc_inq_varid(ncid, "ids", &ids));
    NC(nc_var_par_access(ncid, temp, NC_COLLECTIVE));
    NC(nc_get_vara_float(ncid, temp, start, count, t));
    count[0] = n;
    NC(nc_get_vara_int(ncid, ids, start, count, v));
    NC(nc_get_att_text(ncid, NC_GLOBAL, "title", title));
    NC(nc_close(ncid));
    for (size_t y = 0; y < ny; y++)
        for (size_t x = 0; x < COLS; x++)
            if (t[y * COLS + x] != temp_value(y, x) && errors++ < 5)
                fprintf(stderr, "nc4_par rank %d: temp[%zu][%zu] = %g, expected %g\n", rank, y,
                        x, t[y * COLS + x], temp_value(y, x));
    for (size_t i = 0; i < n; i++)
        if (v[i] != ids_value(i) && errors++ < 10)
            fprintf(stderr, "nc4_par rank %d: ids[%zu] = %d, expected %d\n", rank, i, v[i],
                    ids_value(i));
    if (strcmp(title, "bblog nc4 test") != 0 && errors++ < 11)
        fprintf(stderr, "nc4_par rank %d: title is \"%s\"\n", rank, title);
    free(t);
    free(v);
}

int main(int argc, char **argv)
{
    int total = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: nc4_par PATH\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        print_libmpi();
    write_file(argv[1]);
    check_file(argv[1]);
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("nc4_par: %s (%d mismatches)\n", total == 0 ? "ok" : "FAILED", total);
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}
