/*
 * Write-through epochs (ad_bblog_flush.c): a sync whose drain finds nothing logged on any
 * process and bytes written straight through on some starts one; in it every write goes
 * through, whatever its size, and a sync is each process's own flush; a small write ends it two
 * syncs later. Seven phases, each ended by MPI_File_sync and a barrier, after which every rank
 * reads the whole file back (the other ranks' bytes included) before a barrier lets the next
 * phase begin:
 *   1. a block of BIG bytes per rank (bblog_through_threshold's default): through; the sync
 *      finds nothing logged: the epoch starts;
 *   2. blocks over the next rank's blocks of phase 1: a sync alone;
 *   3. small pieces, interleaved, collectively (IOR strided): through in the epoch; a sync
 *      alone (phase 2 had no small write);
 *   4. small pieces over the previous rank's pieces of phase 3, independently: the sync hears
 *      of phase 3's small writes and ends the epoch (a drain: nothing logged);
 *   5. small pieces: logged again; the sync drains them and starts no epoch;
 *   6. blocks: only bytes through: a new epoch;
 *   7. blocks and a small piece: a sync alone; the close ends the epoch with its flags of
 *      phase 7 still in flight.
 * Through bblog with the default hints and more than one process the open's statistics say
 * syncs_alone 3 (phases 2, 3 and 7): run-diff's t_epoch[stats] case checks it, and 0 under
 * BBLOG_DEBUG_NO_EPOCH=1. Whatever the hints, the file must equal plain ROMIO's.
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
    sync_and_check(fh, &img, "phase 3 (small pieces in the epoch)");
    pieces(fh, buf, tst_size - 1, 0, 4, &img);
    sync_and_check(fh, &img, "phase 4 (the sync that ends the epoch)");
    pieces(fh, buf, 0, 1, 5, &img);
    sync_and_check(fh, &img, "phase 5 (small pieces logged)");
    blocks(fh, buf, 0, 6, &img);
    sync_and_check(fh, &img, "phase 6 (a new epoch)");
    blocks(fh, buf, 1, 7, &img);
    pieces(fh, buf, 1, 1, 7, &img);
    sync_and_check(fh, &img, "phase 7 (a small piece in the epoch)");
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
