/*
 * Writes of different processes to the same bytes, separated by a collective call but by no
 * MPI_File_sync. MPI leaves the result undefined without sync-barrier-sync; plain ROMIO writes
 * at once, so the later write wins once a barrier (or a collective call that every process must
 * enter before any leaves) has made sure that the aggregators of a collective write are done
 * with it, and programs count on that (parallel HDF5 fills a dataset
 * collectively, then each process writes parts that others filled). bblog orders such writes
 * by the collective calls between them (ad_bblog_base_order.c). Each case is checked against the
 * image of what plain ROMIO leaves, and the runner compares the files byte for byte.
 *
 *   1 fill     collective write of every block by its owner, barrier, then each rank writes
 *              its neighbour's block independently (the HDF5 fill pattern);
 *   2 through  small collective writes by each rank, then a large independent write by the
 *              next rank over them (straight to the PFS: past bblog_through_threshold
 *              draining on demand, or with the burst buffer full, the runner's [max256k]);
 *   3 coll     like 1, but the overwrite is itself a collective write (stamps 1 then 3);
 *   4 split    rank 0 writes A independently; a collective write of rank 1 covers A and the
 *              next block B; then rank 0 writes B, adjacent to A in the file and in its log
 *              (one extent in rank 0's index, with two stamps): A must be rank 1's, B rank 0's;
 *   5 read     the overwrite follows a collective read instead of a collective write;
 *   6 halves   ranks 0 and 1 overwrite the two halves of the last rank's block after a
 *              collective call, rank 0 twice (the later of its own writes wins).
 * After every case the file is closed and checked; each case uses its own region.
 */
#include "common.h"

#include <stdlib.h>

#define BLK 4096
#define BIG (1536 * 1024)       /* above bblog_through_threshold (1m) and bblog_max_size=256k */

static struct tst_image img;
static unsigned char *buf;

static void wr_at(MPI_File fh, int64_t off, int64_t len, int writer, int gen, int coll)
{
    MPI_Status st;

    tst_fill(buf, (size_t) len, off, writer, gen);
    if (coll)
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, (int) len, MPI_BYTE, &st));
    else
        CHECK_MPI(MPI_File_write_at(fh, off, buf, (int) len, MPI_BYTE, &st));
}

/* The collective call every rank makes with nothing or something to write. */
static void coll_nothing(MPI_File fh)
{
    MPI_Status st;

    CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, 0, MPI_BYTE, &st));
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int n = tst_size, r = tst_rank, next = (tst_rank + 1) % tst_size, i;
    int64_t base = 0, region;
    MPI_File fh;
    MPI_Status st;

    buf = malloc(BIG);
    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    /* 1 fill */
    region = (int64_t) n * BLK;
    wr_at(fh, base + (int64_t) r * BLK, BLK, r, 1, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    wr_at(fh, base + (int64_t) next * BLK, BLK, r, 2, 0);
    for (i = 0; i < n; i++)
        tst_img_write(&img, base + (int64_t) ((i + 1) % n) * BLK, BLK, i, 2);
    base += region;

    /* 2 through: rank i's small pieces in [base + i*BIG, +BIG), overwritten whole by rank i+1. */
    region = (int64_t) n * BIG;
    for (i = 0; i < BIG / BLK; i += 64)
        wr_at(fh, base + (int64_t) r * BIG + (int64_t) i * BLK, BLK, r, 3, 1);
    for (i = 0; i < n; i++)         /* region i is written whole by rank i - 1 */
        tst_img_write(&img, base + (int64_t) i * BIG, BIG, (i + n - 1) % n, 4);
    MPI_Barrier(MPI_COMM_WORLD);
    wr_at(fh, base + (int64_t) next * BIG, BIG, r, 4, 0);
    base += region;

    /* 3 coll */
    region = (int64_t) n * BLK;
    wr_at(fh, base + (int64_t) r * BLK, BLK, r, 5, 1);
    wr_at(fh, base + (int64_t) next * BLK, BLK, r, 6, 1);
    for (i = 0; i < n; i++)
        tst_img_write(&img, base + (int64_t) ((i + 1) % n) * BLK, BLK, i, 6);
    base += region;

    /* 4 split (needs two ranks; with one, rank 0 plays both parts) */
    region = 2 * BLK;
    if (r == 0)
        wr_at(fh, base, BLK, 0, 7, 0);
    if (r == (n > 1 ? 1 : 0))
        wr_at(fh, base, 2 * BLK, r, 8, 1);
    else
        coll_nothing(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0)
        wr_at(fh, base + BLK, BLK, 0, 9, 0);
    tst_img_write(&img, base, 2 * BLK, n > 1 ? 1 : 0, 8);
    tst_img_write(&img, base + BLK, BLK, 0, 9);
    base += region;

    /* 5 read */
    region = (int64_t) n * BLK;
    wr_at(fh, base + (int64_t) r * BLK, BLK, r, 10, 0);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, buf, BLK, MPI_BYTE, &st));
    wr_at(fh, base + (int64_t) next * BLK, BLK, r, 11, 0);
    for (i = 0; i < n; i++)
        tst_img_write(&img, base + (int64_t) ((i + 1) % n) * BLK, BLK, i, 11);
    base += region;

    /* 6 same: block of the last rank, halves by ranks 0 and 1 (rank 0 twice) */
    region = BLK;
    if (r == n - 1)
        wr_at(fh, base, BLK, r, 12, 1);
    else
        coll_nothing(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0) {
        wr_at(fh, base, BLK / 2, 0, 13, 0);
        wr_at(fh, base, BLK / 4, 0, 14, 0);
    }
    if (r == (n > 1 ? 1 : 0))
        wr_at(fh, base + BLK / 2, BLK / 2, r, 15, 0);
    tst_img_write(&img, base, BLK / 2, 0, 13);
    tst_img_write(&img, base, BLK / 4, 0, 14);
    tst_img_write(&img, base + BLK / 2, BLK / 2, n > 1 ? 1 : 0, 15);
    base += region;

    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
