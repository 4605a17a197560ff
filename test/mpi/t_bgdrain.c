/*
 * Writes while a background drain runs (bblog_drain=reactive|proactive): the same region is
 * rewritten over and over, by its owner and, after a collective call, by the next rank, so that
 * extents are overwritten while the drain thread is writing them to the PFS, and older bytes
 * of one process meet newer bytes of another. Reads of the process's own writes are checked in
 * between (the overlay and the drain thread share the index). Every few steps MPI_File_sync.
 * Then one long phase of NMANY small collective writes, each rank's over the next rank's older
 * pieces (IOR's strided pattern, shifted): the planning points at collective writes are spaced
 * (ad_bblog_bg.c), and the bytes must not depend on where they fall; run-diff's [stats] case
 * counts them. The final file is checked against the image; the runner compares it with plain
 * ROMIO.
 */
#include "common.h"

#include <stdlib.h>

#define PIECE 4096
#define NPIECE 16
#define STEPS 12
#define NMANY 160

/* Work between I/O phases, so that the drain thread runs while the application computes
 * (no sleep: what matters is that the data is right whatever the timing). */
static unsigned compute(const unsigned char *buf, size_t len, int rounds)
{
    unsigned h = 2166136261u;
    int r;
    size_t i;

    for (r = 0; r < rounds; r++)
        for (i = 0; i < len; i++)
            h = (h ^ buf[i]) * 16777619u;
    return h;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int n = tst_size, r = tst_rank, next = (tst_rank + 1) % tst_size, step, i, w;
    unsigned char *buf = malloc(PIECE), *rd = malloc(PIECE);
    struct tst_image img;
    volatile unsigned sink = 0;
    MPI_File fh;
    MPI_Status st;

    REQUIRE(buf && rd, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (step = 0; step < STEPS; step++) {
        int gen = 3 * step;
        /* Phase: interleaved pieces, collectively, one call per piece (IOR's sequence). */
        for (i = 0; i < NPIECE; i++) {
            int64_t off = ((int64_t) i * n + r) * PIECE;
            tst_fill(buf, PIECE, off, r, gen);
            CHECK_MPI(MPI_File_write_at_all(fh, off, buf, PIECE, MPI_BYTE, &st));
        }
        /* The owner rewrites every third piece at once, independently. */
        for (i = step % 3; i < NPIECE; i += 3) {
            int64_t off = ((int64_t) i * n + r) * PIECE + 512;
            tst_fill(buf, 1024, off, r, gen + 1);
            CHECK_MPI(MPI_File_write_at(fh, off, buf, 1024, MPI_BYTE, &st));
        }
        /* After a collective call (an empty write_all: a collective read would drain), the
         * next rank's piece (step % NPIECE) gets a new middle. */
        CHECK_MPI(MPI_File_write_at_all(fh, 0, rd, 0, MPI_BYTE, &st));
        {
            int64_t off = ((int64_t) (step % NPIECE) * n + next) * PIECE + 1536;
            tst_fill(buf, 2048, off, r, gen + 2);
            CHECK_MPI(MPI_File_write_at(fh, off, buf, 2048, MPI_BYTE, &st));
        }
        for (w = 0; w < n; w++) {
            for (i = 0; i < NPIECE; i++)
                tst_img_write(&img, ((int64_t) i * n + w) * PIECE, PIECE, w, gen);
            for (i = step % 3; i < NPIECE; i += 3)
                tst_img_write(&img, ((int64_t) i * n + w) * PIECE + 512, 1024, w, gen + 1);
        }
        for (w = 0; w < n; w++)
            tst_img_write(&img, ((int64_t) (step % NPIECE) * n + (w + 1) % n) * PIECE + 1536,
                          2048, w, gen + 2);
        /* Own piece read back at once (own writes are visible without sync); for n == 1 the
         * cross write above was this rank's too. */
        {
            int64_t off = ((int64_t) ((step + 1) % NPIECE) * n + r) * PIECE;
            tst_read_expect(fh, off, img.data + off, PIECE, "own piece during drain");
        }
        sink += compute(img.data, (size_t) img.size < 65536 ? (size_t) img.size : 65536, 20);
        if (step % 4 == 3)
            CHECK_MPI(MPI_File_sync(fh));
    }
    for (i = 0; i < NMANY; i++) {
        int64_t off = ((int64_t) i * n + next) * PIECE;
        tst_fill(buf, PIECE, off, r, 3 * STEPS);
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, PIECE, MPI_BYTE, &st));
    }
    for (w = 0; w < n; w++)
        for (i = 0; i < NMANY; i++)
            tst_img_write(&img, ((int64_t) i * n + (w + 1) % n) * PIECE, PIECE, w, 3 * STEPS);
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    free(rd);
    (void) sink;
    return tst_finalize();
}
