/*
 * Pieces of all processes with holes between them that nobody writes: a file laid out in
 * advance and filled in part (HDF5's allocated datasets and metadata blocks, a checkpoint that
 * skips some variables). Rank r writes PIECES pieces of PIECE bytes at (i * P + r) * STRIDE,
 * half of them with collective calls and half with independent ones, and nothing in between.
 * The file is neither read back here nor reopened: the runner compares it with plain ROMIO's
 * byte for byte, and its [nopfsread] case makes every read of the output file fail, so that a
 * drain that filled the holes by reading them back from the PFS file (read-modify-write, as
 * ROMIO's data sieving does) fails, where one that writes each run of pieces alone and leaves
 * the holes as they are succeeds.
 */
#include "common.h"

#include <stdlib.h>

#define PIECE ((int64_t)32 << 10)
#define STRIDE ((int64_t)96 << 10)
#define PIECES 16

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(PIECE);
    MPI_File fh;
    MPI_Status st;

    REQUIRE(buf, "out of memory");
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    for (int i = 0; i < PIECES; i++) {
        int64_t off = ((int64_t)i * tst_size + tst_rank) * STRIDE;
        tst_fill(buf, (size_t)PIECE, off, tst_rank, i);
        if (i < PIECES / 2)
            CHECK_MPI(MPI_File_write_at_all(fh, off, buf, (int)PIECE, MPI_BYTE, &st));
        else
            CHECK_MPI(MPI_File_write_at(fh, off, buf, (int)PIECE, MPI_BYTE, &st));
    }
    CHECK_MPI(MPI_File_close(&fh));
    free(buf);
    return tst_finalize();
}
