/*
 * A collective read of what other processes wrote just before, collectively, without
 * MPI_File_sync in between: MPI promises the data only after sync-barrier-sync, but plain ROMIO
 * delivers it and PnetCDF programs (put_*_all then get_*_all) count on it, so bblog drains at a
 * collective read. Each rank writes an interleaved strided pattern, then every rank reads the
 * whole region collectively and checks every byte; an independent write by rank 0 followed by
 * a second collective read checks the same again. The file is then checked against the image.
 */
#include "common.h"

#include <stdlib.h>

#define PIECE 3000
#define NPIECE 16

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int64_t total = (int64_t) PIECE * NPIECE * tst_size;
    unsigned char *buf = malloc(PIECE), *all = malloc((size_t) total);
    struct tst_image img;
    MPI_File fh;
    MPI_Status st;
    int r;

    REQUIRE(buf && all, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    tst_write_interleaved(fh, NPIECE, PIECE, 1, &img);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, all, (int) total, MPI_BYTE, &st));
    CHECK(tst_status_bytes(&st) == total, "read_at_all: %lld bytes, expected %lld",
          (long long) tst_status_bytes(&st), (long long) total);
    tst_compare(all, img.data, (size_t) total, 0, "read_at_all after write_at_all");

    /* Rank 0 overwrites a piece of every other rank independently; the next collective read
     * must see it everywhere. */
    if (tst_rank == 0) {
        for (r = 1; r < tst_size; r++) {
            int64_t off = (int64_t) r * PIECE + 100;
            tst_fill(buf, 500, off, 0, 2);
            CHECK_MPI(MPI_File_write_at(fh, off, buf, 500, MPI_BYTE, &st));
        }
    }
    for (r = 1; r < tst_size; r++)
        tst_img_write(&img, (int64_t) r * PIECE + 100, 500, 0, 2);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, all, (int) total, MPI_BYTE, &st));
    tst_compare(all, img.data, (size_t) total, 0, "read_at_all after an independent write");
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    free(all);
    return tst_finalize();
}
