/*
 * Every rank writes one shared file through a handle of its own on MPI_COMM_SELF: small
 * pieces, interleaved with the other ranks' (rank r has piece k at (k * size + r) * PIECE),
 * a sync halfway, the second half, then close. The ranks' drains (at the sync and at close)
 * run at the same moment, each alone, while the others extend the file.
 *
 * Such a drain must not grow the file with a resize: a size read just before another process
 * extends the file would cut that process's bytes off (PnetCDF's independent-mode
 * SELF handles lost a value so in 1 of 10 runs). run-diff's case t_selfgrow[notrunc] runs
 * this with every ftruncate of the file failing (test/faults/bbfault.c), which makes that
 * bug certain to show: the last rank's pieces end past everything the others write, so its
 * drain always found the file shorter than its data.
 */
#include "common.h"

#include <stdlib.h>

#define PIECE 1000
#define PIECES 64

static void write_half(MPI_File fh, unsigned char *buf, int first, struct tst_image *img)
{
    MPI_Status st;
    int k, w;

    for (k = first; k < first + PIECES / 2; k++) {
        int64_t off = ((int64_t) k * tst_size + tst_rank) * PIECE;
        tst_fill(buf, PIECE, off, tst_rank, 1);
        CHECK_MPI(MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, &st));
        for (w = 0; w < tst_size; w++)
            tst_img_write(img, ((int64_t) k * tst_size + w) * PIECE, PIECE, w, 1);
    }
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(PIECE);
    struct tst_image img;
    MPI_File fh;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    /* Rank 0 creates the file first: creates of one new file from several GlusterFS clients
     * at once can fail with EEXIST (plain ROMIO's ufs open then fails), which is not what
     * this test is about. */
    if (tst_rank == 0) {
        tst_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        CHECK_MPI(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tst_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    write_half(fh, buf, 0, &img);
    CHECK_MPI(MPI_File_sync(fh));
    write_half(fh, buf, PIECES / 2, &img);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
