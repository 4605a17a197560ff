/*
 * coord.c - the communication of one open-write-close as the job grows (bench/run-coord.sh,
 * issue: coordination that does not grow with the number of processes). Under the LD_PRELOAD
 * counter test/apps/bbcount.c, every rank counts the MPI calls and the bytes they deliver to
 * it from MPI_File_open to MPI_File_close: COUNT pieces of SIZE bytes each, strided across the
 * ranks (piece i of rank r at (i * nprocs + r) * SIZE), written with MPI_File_write_at_all (or
 * MPI_File_write_at with --indep), so that each rank's work stays the same whatever nprocs.
 * bbcount prints one line per rank ("bbcount coord rank=R ... bytes=N"); rank 0 prints the
 * slowest rank's seconds from open to close ("coord seconds=S"), for before/after timings.
 *
 * Usage: coord [--indep] COUNT SIZE FILE
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (err == MPI_SUCCESS)
        return;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "coord: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank, nprocs, indep = 0, a = 1;
    double t, slowest;
    long count, size, i;
    MPI_File fh;
    char *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (a < argc && strcmp(argv[a], "--indep") == 0)
        indep = 1, a++;
    if (argc - a != 3 || (count = atol(argv[a])) <= 0 || (size = atol(argv[a + 1])) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: coord [--indep] COUNT SIZE FILE\n");
        MPI_Finalize();
        return 2;
    }
    buf = malloc((size_t) size);
    if (!buf)
        check("malloc", MPI_ERR_NO_MEM);
    memset(buf, 'a' + rank % 26, (size_t) size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    t = MPI_Wtime();
    check("open", MPI_File_open(MPI_COMM_WORLD, argv[a + 2], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                MPI_INFO_NULL, &fh));
    for (i = 0; i < count; i++) {
        MPI_Offset off = (MPI_Offset) (i * nprocs + rank) * size;
        check("write", indep ? MPI_File_write_at(fh, off, buf, (int) size, MPI_BYTE,
                                                 MPI_STATUS_IGNORE) :
              MPI_File_write_at_all(fh, off, buf, (int) size, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    check("close", MPI_File_close(&fh));
    t = MPI_Wtime() - t;
    MPI_Pcontrol(0);
    MPI_Pcontrol(2, "coord", (int) count);
    MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("coord seconds=%.6f\n", slowest);
    free(buf);
    MPI_Finalize();
    return 0;
}
