/*
 * What close leaves to the background drain under bblog_close=bb (ad_bblog_close.c). Two files,
 * written and closed at once: the first gets NPIECE pieces of 4 KiB per rank, interleaved with
 * the other ranks' (one MPI_File_write_at_all each, IOR's strided sequence), the second one
 * block of 1 MiB per rank. The pieces written after the last planning point among the
 * collective writes (the points are spaced 8, 16, 32 ... calls apart) are still logged at
 * close, so what is left there is small pieces in the first file and large extents in the
 * second (all of it with bblog_drain=on_demand, whose thread waits for close). Both files are
 * re-opened and checked; the runner compares the first with plain ROMIO's. run-diff's
 * [closebb,stats] case asserts that the first close drained collectively (bytes_drained > 0)
 * and the second did not; with BBLOG_DEBUG_CLOSE_ALONE=1, that neither did.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

#define PIECE 4096
#define NPIECE 200
#define BLOCK (1 << 20)

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int n = tst_size, r = tst_rank, i, w;
    unsigned char *buf = malloc(BLOCK);
    char big[4096];
    struct tst_image small, large;
    MPI_File fh;
    MPI_Status st;

    REQUIRE(buf, "out of memory");
    snprintf(big, sizeof(big), "%s.big", name);
    tst_img_init(&small);
    tst_img_init(&large);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (i = 0; i < NPIECE; i++) {
        int64_t off = ((int64_t) i * n + r) * PIECE;
        tst_fill(buf, PIECE, off, r, 0);
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, PIECE, MPI_BYTE, &st));
    }
    CHECK_MPI(MPI_File_close(&fh));
    for (w = 0; w < n; w++)
        for (i = 0; i < NPIECE; i++)
            tst_img_write(&small, ((int64_t) i * n + w) * PIECE, PIECE, w, 0);

    tst_open(MPI_COMM_WORLD, big, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    tst_fill(buf, BLOCK, (int64_t) r * BLOCK, r, 1);
    CHECK_MPI(MPI_File_write_at_all(fh, (int64_t) r * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_close(&fh));
    for (w = 0; w < n; w++)
        tst_img_write(&large, (int64_t) w * BLOCK, BLOCK, w, 1);

    tst_check_file(MPI_COMM_WORLD, name, &small);
    tst_check_file(MPI_COMM_WORLD, big, &large);
    tst_img_free(&small);
    tst_img_free(&large);
    free(buf);
    return tst_finalize();
}
