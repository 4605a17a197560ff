/*
 * A node batch beside large extents that the drain threads write each on its own: a batch
 * takes a process's small extents only (ad_bblog_bg_plan.c, batch_start). Generation 1: every rank
 * writes a block of BIG bytes, its own region. MPI_File_sync: a planning point (under
 * bblog_mode=bb the data stays on the burst buffer and the threads drain it). Generation 2:
 * every rank writes a block over the next rank's region (another process's older bytes, ordered
 * by the sync) and COUNT pieces of PIECE bytes interleaved with the other ranks' after the
 * blocks. MPI_File_sync again: the point's new pieces are small on average, so it starts a node
 * batch of the small extents while both generations' blocks wait for the threads. Generation
 * 3: every second piece, and the first PIECE of each rank's own region, again; close; the file
 * must equal the image (three writers over the first bytes of each region).
 */
#include "common.h"

#include <stdlib.h>

#define BIG (256 * 1024)
#define PIECE 4096
#define COUNT 64

static void put(MPI_File fh, unsigned char *buf, int64_t off, int len, int gen)
{
    MPI_Status st;

    tst_fill(buf, (size_t) len, off, tst_rank, gen);
    CHECK_MPI(MPI_File_write_at_all(fh, off, buf, len, MPI_BYTE, &st));
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int n = tst_size, r = tst_rank, i, w;
    int64_t base = (int64_t) n * BIG;
    unsigned char *buf = malloc(BIG);
    struct tst_image img;
    MPI_File fh;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    put(fh, buf, (int64_t) r * BIG, BIG, 1);
    for (w = 0; w < n; w++)
        tst_img_write(&img, (int64_t) w * BIG, BIG, w, 1);
    CHECK_MPI(MPI_File_sync(fh));

    put(fh, buf, (int64_t) ((r + 1) % n) * BIG, BIG, 2);
    for (i = 0; i < COUNT; i++)
        put(fh, buf, base + ((int64_t) i * n + r) * PIECE, PIECE, 2);
    for (w = 0; w < n; w++) {
        tst_img_write(&img, (int64_t) ((w + 1) % n) * BIG, BIG, w, 2);
        for (i = 0; i < COUNT; i++)
            tst_img_write(&img, base + ((int64_t) i * n + w) * PIECE, PIECE, w, 2);
    }
    CHECK_MPI(MPI_File_sync(fh));

    put(fh, buf, (int64_t) r * BIG, PIECE, 3);
    for (i = 0; i < COUNT; i += 2)
        put(fh, buf, base + ((int64_t) i * n + r) * PIECE, PIECE, 3);
    for (w = 0; w < n; w++) {
        tst_img_write(&img, (int64_t) w * BIG, PIECE, w, 3);
        for (i = 0; i < COUNT; i += 2)
            tst_img_write(&img, base + ((int64_t) i * n + w) * PIECE, PIECE, w, 3);
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
