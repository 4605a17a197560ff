/*
 * sync_probe.c - what one synchronisation of all ranks costs right now: the mean time of
 * MPI_Barrier and of an 8-byte MPI_Allreduce over -n iterations (default 20). run-matrix.py
 * runs it before every point: on an oversubscribed machine (more busy-polling ranks than cores,
 * other jobs) one barrier can cost tens of milliseconds, and then every collective call of a
 * workload (open, each write_at_all, each drain round, close) costs that much, whatever the
 * file system does. Prints one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, nprocs, iters = argc > 2 ? atoi(argv[2]) : 20;
    double t, tb, ta, x = 1.0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (iters < 1)
        iters = 20;
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    tb = (MPI_Wtime() - t) / iters;
    t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    ta = (MPI_Wtime() - t) / iters;
    if (rank == 0)
        printf("{\"benchmark\": \"sync_probe\", \"nprocs\": %d, \"iterations\": %d, "
               "\"barrier_ms\": %.3f, \"allreduce_ms\": %.3f}\n",
               nprocs, iters, tb * 1e3, ta * 1e3);
    MPI_Finalize();
    return 0;
}
