/*
 * Syncs without an agreement (ad_bblog_flush.c): at a sync each process sends the others its
 * notes; one that logged nothing returns at once, one that logged drains with all the others
 * when every process logged, and alone otherwise, leaving out what the others wrote later; a
 * process that left early waits, before its next write, for the lone drains to end. Ten
 * phases, each ended by MPI_File_sync and a barrier, after which every rank reads the whole
 * file back (the other ranks' bytes included) before a barrier lets the next phase begin:
 *   1, 2, 6. blocks of BIG bytes per rank (bblog_through_threshold's default), the second over
 *      the next rank's: nothing logged anywhere, each sync is every process's own;
 *   3, 4, 5, 7. small pieces on every rank (collectively, independently over the previous
 *      rank's, with blocks in 7): every process logged, the sync drains them all together;
 *   8. rank 0 logs a small piece in one collective write, then rank 1 writes a block over it
 *      straight to the PFS in the next (a higher stamp): rank 0 drains alone and must leave
 *      the piece out (last writer wins);
 *   9. rank 0 logs a piece, then rank 1 logs one over it in the next collective write; the
 *      other ranks log nothing: with 3 or more ranks both drain alone, and rank 1's must win;
 *   10. rank 0 logs a piece independently; after a barrier and a sync that rank 0 drains
 *      alone, rank 1 at once (no barrier) writes a block over the piece: rank 1's write waits
 *      for rank 0's drain, and wins (plain ROMIO wrote rank 0's piece before the barrier).
 * Through bblog with the default hints and 3 processes the open's statistics say syncs_alone
 * 7 (phases 1, 2, 6, 8, 9 and both syncs of 10): run-diff's t_syncalone[stats] case checks it,
 * and 0 under BBLOG_DEBUG_SYNC_AGREE=1. Whatever the hints, the file must equal plain ROMIO's.
 */
#include "common.h"

#include <stdlib.h>

#define BIG (1 << 20)
#define PIECE 4096
#define NPIECE 8

static void sync_and_check(MPI_File fh, const struct tst_image *img, const char *what)
{
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    tst_read_expect(fh, 0, img->data, img->size, what);
    MPI_Barrier(MPI_COMM_WORLD);        /* no rank writes the next phase while another reads */
}

static void blocks(MPI_File fh, unsigned char *buf, int shift, int gen, struct tst_image *img)
{
    int n = tst_size, w;
    int64_t off = (int64_t) ((tst_rank + shift) % n) * BIG;
    MPI_Status st;

    tst_fill(buf, BIG, off, tst_rank, gen);
    CHECK_MPI(MPI_File_write_at_all(fh, off, buf, BIG, MPI_BYTE, &st));
    for (w = 0; w < n; w++)
        tst_img_write(img, (int64_t) ((w + shift) % n) * BIG, BIG, w, gen);
}

/* Piece i of rank (r + shift) % n, written by rank r, past the blocks. */
static void pieces(MPI_File fh, unsigned char *buf, int shift, int coll, int gen,
                   struct tst_image *img)
{
    int n = tst_size, i, w;
    MPI_Status st;

    for (i = 0; i < NPIECE; i++) {
        int64_t off = (int64_t) n * BIG + ((int64_t) i * n + (tst_rank + shift) % n) * PIECE;
        tst_fill(buf, PIECE, off, tst_rank, gen);
        if (coll)
            CHECK_MPI(MPI_File_write_at_all(fh, off, buf, PIECE, MPI_BYTE, &st));
        else
            CHECK_MPI(MPI_File_write_at(fh, off, buf, PIECE, MPI_BYTE, &st));
    }
    for (w = 0; w < n; w++)
        for (i = 0; i < NPIECE; i++)
            tst_img_write(img, (int64_t) n * BIG + ((int64_t) i * n + (w + shift) % n) * PIECE,
                          PIECE, w, gen);
}

/* Rank `who` (taken modulo the size) writes len bytes at off in a collective write that the
 * others join with nothing. */
static void one_coll(MPI_File fh, unsigned char *buf, int who, int64_t off, int len, int gen,
                     struct tst_image *img)
{
    MPI_Status st;
    int me = tst_rank == who % tst_size;

    if (me)
        tst_fill(buf, (size_t) len, off, tst_rank, gen);
    CHECK_MPI(MPI_File_write_at_all(fh, off, buf, me ? len : 0, MPI_BYTE, &st));
    tst_img_write(img, off, len, who % tst_size, gen);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(BIG);
    struct tst_image img;
    MPI_File fh;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    blocks(fh, buf, 0, 1, &img);
    sync_and_check(fh, &img, "phase 1 (blocks)");
    blocks(fh, buf, 1, 2, &img);
    sync_and_check(fh, &img, "phase 2 (blocks over the next rank's)");
    pieces(fh, buf, 0, 1, 3, &img);
    sync_and_check(fh, &img, "phase 3 (small pieces)");
    pieces(fh, buf, tst_size - 1, 0, 4, &img);
    sync_and_check(fh, &img, "phase 4 (small pieces over the previous rank's)");
    pieces(fh, buf, 0, 1, 5, &img);
    sync_and_check(fh, &img, "phase 5 (small pieces logged)");
    blocks(fh, buf, 0, 6, &img);
    sync_and_check(fh, &img, "phase 6 (blocks again)");
    blocks(fh, buf, 1, 7, &img);
    pieces(fh, buf, 1, 1, 7, &img);
    sync_and_check(fh, &img, "phase 7 (blocks and small pieces)");
    one_coll(fh, buf, 0, BIG / 2, PIECE, 8, &img);
    one_coll(fh, buf, 1, 0, BIG, 8, &img);
    sync_and_check(fh, &img, "phase 8 (a logged piece under a later block)");
    one_coll(fh, buf, 0, BIG / 4, PIECE, 9, &img);
    one_coll(fh, buf, 1, BIG / 4 + PIECE / 2, PIECE, 9, &img);
    sync_and_check(fh, &img, "phase 9 (two logged pieces, the later one wins)");
    if (tst_rank == 0) {
        MPI_Status st;
        tst_fill(buf, PIECE, BIG / 8, 0, 10);
        CHECK_MPI(MPI_File_write_at(fh, BIG / 8, buf, PIECE, MPI_BYTE, &st));
    }
    tst_img_write(&img, BIG / 8, PIECE, 0, 10);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    if (tst_rank == 1 % tst_size) {
        MPI_Status st;
        tst_fill(buf, BIG, 0, tst_rank, 11);
        CHECK_MPI(MPI_File_write_at(fh, 0, buf, BIG, MPI_BYTE, &st));
    }
    tst_img_write(&img, 0, BIG, 1 % tst_size, 11);
    sync_and_check(fh, &img, "phase 10 (a block right after a lone drain of a piece under it)");
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
