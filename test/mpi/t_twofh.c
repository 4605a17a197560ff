/*
 * Two handles on one file in every process: a collective one on MPI_COMM_WORLD and one on
 * MPI_COMM_SELF, as PnetCDF opens files (collective and independent data mode). Each rank
 * writes its block through the collective handle, overwrites part of it through the other, and
 * the reverse on a second block; it reads its bytes back through both handles before closing
 * either (the later write must win whichever handle carried it, for reads and at the drain);
 * handles are closed in both orders over the two files written. The file must equal the image.
 */
#include "common.h"

#include <stdlib.h>

#define BLK 20000

/* What rank r's four writes leave in the file (its two blocks; ranks do not overlap). */
static void expect(struct tst_image *img, int r)
{
    int64_t a = (int64_t) r * 2 * BLK, b = a + BLK;

    tst_img_write(img, a, BLK, r, 1);
    tst_img_write(img, a + BLK / 4, BLK / 2, r, 2);
    tst_img_write(img, b, BLK, r, 3);
    tst_img_write(img, b + BLK / 2, BLK / 2, r, 4);
}

static void one_file(const char *name, int close_self_first)
{
    struct tst_image mine;
    unsigned char *buf = malloc(BLK), *rd = malloc(BLK);
    int64_t a = (int64_t) tst_rank * 2 * BLK, b = a + BLK;
    MPI_File coll, self;
    MPI_Status st;

    REQUIRE(buf && rd, "out of memory");
    tst_img_init(&mine);
    expect(&mine, tst_rank);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &coll);
    tst_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &self);
    /* Block a: collective handle first, then the self handle over its middle. */
    tst_fill(buf, BLK, a, tst_rank, 1);
    CHECK_MPI(MPI_File_write_at_all(coll, a, buf, BLK, MPI_BYTE, &st));
    tst_fill(buf, BLK / 2, a + BLK / 4, tst_rank, 2);
    CHECK_MPI(MPI_File_write_at(self, a + BLK / 4, buf, BLK / 2, MPI_BYTE, &st));
    /* Block b: the self handle first, then the collective handle over its second half. */
    tst_fill(buf, BLK, b, tst_rank, 3);
    CHECK_MPI(MPI_File_write_at(self, b, buf, BLK, MPI_BYTE, &st));
    tst_fill(buf, BLK / 2, b + BLK / 2, tst_rank, 4);
    CHECK_MPI(MPI_File_write_at(coll, b + BLK / 2, buf, BLK / 2, MPI_BYTE, &st));
    /* Own bytes, through either handle, before any sync. */
    CHECK_MPI(MPI_File_read_at(coll, a, rd, BLK, MPI_BYTE, &st));
    tst_compare(rd, mine.data + a, BLK, a, "block a through the collective handle");
    CHECK_MPI(MPI_File_read_at(self, b, rd, BLK, MPI_BYTE, &st));
    tst_compare(rd, mine.data + b, BLK, b, "block b through the self handle");
    if (close_self_first) {
        CHECK_MPI(MPI_File_close(&self));
        CHECK_MPI(MPI_File_close(&coll));
    } else {
        CHECK_MPI(MPI_File_close(&coll));
        CHECK_MPI(MPI_File_close(&self));
    }
    tst_img_free(&mine);
    free(buf);
    free(rd);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    char *second = tst_name(name, ".2");
    struct tst_image img;
    int r;

    one_file(name, 1);
    one_file(second, 0);
    tst_img_init(&img);
    for (r = 0; r < tst_size; r++)
        expect(&img, r);
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_check_file(MPI_COMM_WORLD, second, &img);
    tst_img_free(&img);
    free(second);
    return tst_finalize();
}
