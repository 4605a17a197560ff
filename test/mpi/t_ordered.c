/*
 * Ordered writes in rounds, as mpi4py's TestIOView tests make them: a view of etype int and
 * filetype contiguous(7 ints), ROUNDS calls of MPI_File_write_ordered of 7 ints per rank (and as
 * many of write_ordered_begin/end), then the view set again (which resets the shared pointer)
 * and as many read_ordered calls, each rank checking it reads its own values of that round. The
 * file must be round by round, rank by rank: rank r's round i at (i * P + r) * 7 ints. An
 * ordered write whose collective part does not hold processes together lets rank 0 take the
 * pointer for its next round before the last rank took it for this one.
 */
#include "common.h"

#define N 7
#define ROUNDS 4

static int value(int rank, int round, int k)
{
    return 1000 * (rank + 1) + 10 * round + k;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int buf[N];
    MPI_Datatype ft;
    MPI_File fh;
    MPI_Status st;

    MPI_Type_contiguous(N, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    for (int i = 0; i < 2 * ROUNDS; i++) {
        for (int k = 0; k < N; k++)
            buf[k] = value(tst_rank, i, k);
        if (i < ROUNDS) {
            CHECK_MPI(MPI_File_write_ordered(fh, buf, N, MPI_INT, &st));
        } else {
            CHECK_MPI(MPI_File_write_ordered_begin(fh, buf, N, MPI_INT));
            CHECK_MPI(MPI_File_write_ordered_end(fh, buf, &st));
        }
    }
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
    for (int i = 0; i < 2 * ROUNDS; i++) {
        memset(buf, 0, sizeof buf);
        CHECK_MPI(MPI_File_read_ordered(fh, buf, N, MPI_INT, &st));
        for (int k = 0; k < N; k++)
            if (buf[k] != value(tst_rank, i, k)) {
                CHECK(0, "round %d: int %d read %d, expected %d", i, k, buf[k],
                      value(tst_rank, i, k));
                break;
            }
    }
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    return tst_finalize();
}
