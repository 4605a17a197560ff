/*
 * A node batch of the background drain (ad_bblog_bg_batch.c) and a second handle of the file.
 * Every rank writes interleaved 4 KiB pieces through a handle on MPI_COMM_WORLD (generation
 * 1) and syncs it: a planning point, whose small pieces go to a node batch under a background
 * drain (bblog_mode=bb), which the drain threads of all ranks write. Then each rank opens the
 * file on MPI_COMM_SELF, overwrites its own pieces through that handle (generation 2) and
 * closes it: a one-process drain, which the other ranks do not wait for, so it must finish
 * the batch before it writes (no thread may put a generation-1 chunk over generation 2 after
 * it). Then generation 3 over every second piece through the collective handle, the close,
 * and the file must equal the image.
 */
#include "common.h"

#include <stdlib.h>

#define PIECE 4096
#define COUNT 64

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(PIECE);
    struct tst_image img;
    MPI_File coll, self;
    MPI_Status st;
    int i, r;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &coll);
    tst_write_interleaved(coll, COUNT, PIECE, 1, &img);
    CHECK_MPI(MPI_File_sync(coll));

    tst_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &self);
    for (i = 0; i < COUNT; i++) {
        int64_t off = ((int64_t) i * tst_size + tst_rank) * PIECE;
        tst_fill(buf, PIECE, off, tst_rank, 2);
        CHECK_MPI(MPI_File_write_at(self, off, buf, PIECE, MPI_BYTE, &st));
    }
    for (r = 0; r < tst_size; r++)
        for (i = 0; i < COUNT; i++)
            tst_img_write(&img, ((int64_t) i * tst_size + r) * PIECE, PIECE, r, 2);
    CHECK_MPI(MPI_File_close(&self));

    for (i = 0; i < COUNT; i += 2) {
        int64_t off = ((int64_t) i * tst_size + tst_rank) * PIECE;
        tst_fill(buf, PIECE, off, tst_rank, 3);
        CHECK_MPI(MPI_File_write_at_all(coll, off, buf, PIECE, MPI_BYTE, &st));
    }
    for (r = 0; r < tst_size; r++)
        for (i = 0; i < COUNT; i += 2)
            tst_img_write(&img, ((int64_t) i * tst_size + r) * PIECE, PIECE, r, 3);
    CHECK_MPI(MPI_File_close(&coll));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
