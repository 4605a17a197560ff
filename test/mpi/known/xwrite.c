/* KNOWN GAP, not in the test run (it fails through bblog today): see the session note of issue 3.
 * Build: mpicc -o xwrite xwrite.c; run: mpiexec -n 3 ./xwrite ufs:/tmp/x, then bblog:/tmp/y.
 *
 * Cross-rank overwrite after a barrier, no MPI_File_sync: the pattern of HDF5's chunk fill.
 * Rank r first writes zeros to block r (collectively), barrier, then writes its id+1 into
 * block (r+1)%n (independently). Prints what each block holds after close and re-open. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#define B 4096
int main(int argc, char **argv)
{
    int rank, n, i, bad = 0;
    char buf[B];
    MPI_File fh;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    memset(buf, 0, B);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * B, buf, B, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(buf, 'a' + rank, B);
    MPI_File_write_at(fh, (MPI_Offset)((rank + 1) % n) * B, buf, B, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rank == 0)
        for (i = 0; i < n; i++) {
            MPI_File_read_at(fh, (MPI_Offset)i * B, buf, B, MPI_BYTE, MPI_STATUS_IGNORE);
            int w = (i + n - 1) % n;
            printf("block %d: '%c' (expected '%c' from rank %d)\n", i, buf[0] ? buf[0] : '0', 'a' + w, w);
            bad += buf[0] != 'a' + w;
        }
    MPI_File_close(&fh);
    MPI_Finalize();
    return bad != 0;
}
