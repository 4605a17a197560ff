/*
 * peer_read.c FILE [BLOCK [COUNT]] - what a read of another process's logged bytes costs
 * (bblog_consistency=posix, ad_bblog_peer_list.c), and what publishing costs the writer.
 *
 * Rank 0 writes COUNT blocks of BLOCK bytes (default 4096 and 1024) with independent writes,
 * timed (the write phase: each call also publishes its extent); a barrier; the last rank reads
 * every block back with MPI_File_read_at (bytes rank 0 logged: "others_logged"); the last rank
 * then reads blocks it wrote itself ("own_logged"); MPI_File_sync drains everything, and the
 * last rank reads rank 0's blocks again, now from the PFS file ("drained"). Run it with
 * BBLOG_CONSISTENCY=mpi for the write phase without publication (the reads of rank 0's bytes
 * then return the old bytes: the benchmark reports how many blocks were wrong). Needs 2 or more
 * ranks; prints one JSON object with mean microseconds per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, nprocs, bs = argc > 2 ? atoi(argv[2]) : 4096, count = argc > 3 ? atoi(argv[3]) : 1024;
    double t, t_write = 0, t_others = 0, t_own = 0, t_drained = 0;
    long wrong = 0;
    char *buf, *rbuf;
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2 || nprocs < 2 || bs < 1 || count < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 %s FILE [BLOCK [COUNT]] (2 or more ranks)\n",
                    argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    buf = malloc((size_t) bs);
    rbuf = malloc((size_t) bs);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        t = MPI_Wtime();
        for (int i = 0; i < count; i++) {
            memset(buf, 'a' + i % 26, (size_t) bs);
            MPI_File_write_at(fh, (MPI_Offset) i * bs, buf, bs, MPI_BYTE, &st);
        }
        t_write = MPI_Wtime() - t;
    }
    if (rank == nprocs - 1)
        for (int i = 0; i < count; i++) {
            memset(buf, 'A' + i % 26, (size_t) bs);
            MPI_File_write_at(fh, (MPI_Offset) (count + i) * bs, buf, bs, MPI_BYTE, &st);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == nprocs - 1) {
        t = MPI_Wtime();
        for (int i = 0; i < count; i++) {
            MPI_File_read_at(fh, (MPI_Offset) i * bs, rbuf, bs, MPI_BYTE, &st);
            wrong += rbuf[0] != 'a' + i % 26 || rbuf[bs - 1] != 'a' + i % 26;
        }
        t_others = MPI_Wtime() - t;
        t = MPI_Wtime();
        for (int i = 0; i < count; i++)
            MPI_File_read_at(fh, (MPI_Offset) (count + i) * bs, rbuf, bs, MPI_BYTE, &st);
        t_own = MPI_Wtime() - t;
    }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == nprocs - 1) {
        t = MPI_Wtime();
        for (int i = 0; i < count; i++)
            MPI_File_read_at(fh, (MPI_Offset) i * bs, rbuf, bs, MPI_BYTE, &st);
        t_drained = MPI_Wtime() - t;
    }
    MPI_File_close(&fh);
    MPI_Bcast(&t_write, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == nprocs - 1) {
        const char *c = getenv("BBLOG_CONSISTENCY");
        printf("{\"benchmark\": \"peer_read\", \"file\": \"%s\", \"nprocs\": %d, \"block\": %d, "
               "\"count\": %d, \"consistency\": \"%s\", \"write_us\": %.2f, "
               "\"read_others_logged_us\": %.2f, \"read_own_logged_us\": %.2f, "
               "\"read_drained_us\": %.2f, \"wrong_blocks\": %ld}\n", argv[1], nprocs, bs, count,
               c ? c : "default", t_write / count * 1e6, t_others / count * 1e6,
               t_own / count * 1e6, t_drained / count * 1e6, wrong);
    }
    free(buf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
