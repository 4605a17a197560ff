/*
 * linkorder.c - the program of test/layer/run-layer-checks.sh: each rank writes its rank's
 * 64-byte block of argv[1] (MPI_File_write_at_all) and exits 0 when every MPI call returned
 * MPI_SUCCESS; which MPI-IO answered is for the runner to tell (bblog's stats and messages).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    char buf[64];
    MPI_File fh;
    int rank, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2) {
        fprintf(stderr, "usage: linkorder FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(buf, 'a' + rank % 26, sizeof buf);
    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                       MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_write_at_all(fh, (MPI_Offset) rank * 64, buf, 64, MPI_BYTE,
                                   MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_close(&fh);
    if (rc != MPI_SUCCESS)
        fprintf(stderr, "linkorder: rank %d: MPI-IO call failed (%d)\n", rank, rc);
    MPI_Finalize();
    return rc != MPI_SUCCESS;
}
