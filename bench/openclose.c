/*
 * openclose.c - what a file's open and close cost: -n times (default 20) MPI_File_open of FILE
 * (create, write only), one MPI_File_write_at_all of -b bytes per rank (default 4096, each rank
 * its own block), MPI_File_close; the mean of each step over the iterations, in milliseconds,
 * as one JSON object from rank 0. Library workloads of tens of milliseconds (IOR through PnetCDF
 * at 4 MiB per rank, FLASH-IO's three files) spend much of their time here, and on an
 * oversubscribed node every collective call in it costs milliseconds.
 *
 *   mpicc -O2 -o openclose bench/openclose.c
 *   mpiexec -n 4 ./openclose -n 20 -b 4096 bblog:/mnt/pfs/oc      (or ufs:/mnt/pfs/oc)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    double t_open = 0, t_write = 0, t_close = 0;
    long iters = 20, bytes = 4096;
    int rank, nprocs, opt;
    char *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    while ((opt = getopt(argc, argv, "n:b:")) != -1) {
        if (opt == 'n')
            iters = atol(optarg);
        else if (opt == 'b')
            bytes = atol(optarg);
    }
    if (optind != argc - 1 || iters < 1 || bytes < 1 || !(buf = malloc((size_t) bytes))) {
        if (rank == 0)
            fprintf(stderr, "usage: openclose [-n ITERATIONS] [-b BYTES] FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
        return 2;
    }
    memset(buf, 'a' + rank % 26, (size_t) bytes);
    for (long i = 0; i < iters; i++) {
        MPI_File fh;
        double t0, t1, t2, t3;

        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (MPI_File_open(MPI_COMM_WORLD, argv[optind], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
            fprintf(stderr, "openclose: cannot open %s\n", argv[optind]);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        t1 = MPI_Wtime();
        MPI_File_write_at_all(fh, (MPI_Offset) rank * bytes, buf, (int) bytes, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        t2 = MPI_Wtime();
        MPI_File_close(&fh);
        t3 = MPI_Wtime();
        t_open += t1 - t0;
        t_write += t2 - t1;
        t_close += t3 - t2;
    }
    if (rank == 0)
        printf("{\"ranks\": %d, \"iterations\": %ld, \"bytes\": %ld, \"open_ms\": %.3f, "
               "\"write_ms\": %.3f, \"close_ms\": %.3f}\n", nprocs, iters, bytes,
               1e3 * t_open / iters, 1e3 * t_write / iters, 1e3 * t_close / iters);
    free(buf);
    MPI_Finalize();
    return 0;
}
