/*
 * Communication per put through PnetCDF (run under test/apps/bbcount.c by run-count.sh): a 1-D
 * variable of NCALLS+1 blocks of XFER bytes per process, IOR's PnetCDF layout; one
 * ncmpi_put_vara_all per block, then in independent data mode one ncmpi_put_vara per block of a
 * second variable; each window after a first put of the same kind. argv[1]: the file.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <string.h>

#define NCALLS 32
#define XFER 4096

#define CHECK_NC(call) \
    do { \
        int e_ = (call); \
        if (e_ != NC_NOERR) { \
            fprintf(stderr, "cnt_pnetcdf: %s: %s\n", #call, ncmpi_strerror(e_)); \
            MPI_Abort(MPI_COMM_WORLD, 1); \
        } \
    } while (0)

static signed char buf[XFER];

static void put(int nc, int var, int coll, int rank, int nprocs, int i)
{
    MPI_Offset start = ((MPI_Offset) i * nprocs + rank) * XFER, count = XFER;

    memset(buf, (i + rank) % 100, XFER);
    if (coll)
        CHECK_NC(ncmpi_put_vara_schar_all(nc, var, &start, &count, buf));
    else
        CHECK_NC(ncmpi_put_vara_schar(nc, var, &start, &count, buf));
}

int main(int argc, char **argv)
{
    int rank, nprocs, nc, dim, var[2], coll, i;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2) {
        fprintf(stderr, "usage: cnt_pnetcdf FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    CHECK_NC(ncmpi_create(MPI_COMM_WORLD, argv[1], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL,
                          &nc));
    CHECK_NC(ncmpi_def_dim(nc, "x", (MPI_Offset) (NCALLS + 1) * nprocs * XFER, &dim));
    CHECK_NC(ncmpi_def_var(nc, "coll", NC_BYTE, 1, &dim, &var[0]));
    CHECK_NC(ncmpi_def_var(nc, "indep", NC_BYTE, 1, &dim, &var[1]));
    CHECK_NC(ncmpi_enddef(nc));
    for (coll = 1; coll >= 0; coll--) {
        if (!coll)
            CHECK_NC(ncmpi_begin_indep_data(nc));
        put(nc, var[!coll], coll, rank, nprocs, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(1);
        for (i = 1; i <= NCALLS; i++)
            put(nc, var[!coll], coll, rank, nprocs, i);
        MPI_Pcontrol(0);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(2, coll ? "ncmpi_put_vara_all" : "ncmpi_put_vara", NCALLS);
    }
    CHECK_NC(ncmpi_end_indep_data(nc));
    CHECK_NC(ncmpi_close(nc));
    MPI_Finalize();
    return 0;
}
