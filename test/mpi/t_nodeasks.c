/*
 * Reads of other processes' logged bytes that ask only the nodes holding bytes of the range
 * (ad_bblog_peer_remote.c: the coverage tables). Run on pseudo-nodes of one rank or on the emulated
 * cluster, where every rank's logged bytes are served by its node's read server.
 *
 *   file 1 (blocks)  every rank logs one block at rank x BLK (independent write); after a
 *                    barrier every rank reads every other rank's block, and rank 0's again:
 *                    each of those reads has bytes on one other node only. The runner's
 *                    stats=N:oneask checks this file's statistics: one request per ask.
 *   file 2 (grow)    ROUNDS rounds; in round i rank i % P writes a block at a new offset past
 *                    everything written so far (its announced range grows, ahead of the
 *                    write), or overwrites an earlier block of its own (already announced),
 *                    then broadcasts; every rank reads the block at once and must see the new
 *                    bytes: a range is announced before the write that needs it is visible.
 *                    Every 8 rounds every rank checks MPI_File_get_size (the end asked only of
 *                    nodes that announced past this process's own).
 * Each file is checked at the end against the image of what plain ROMIO leaves, and the
 * runner compares them byte for byte with the ufs run's.
 */
#include "common.h"

#define BLK 4096
#define ROUNDS 64

static struct tst_image img1, img2;
static unsigned char buf[BLK], got[BLK];

static void read_block(MPI_File fh, int64_t off, int writer, int gen, const char *what)
{
    MPI_Status st;

    memset(got, 0xee, BLK);
    CHECK_MPI(MPI_File_read_at(fh, off, got, BLK, MPI_BYTE, &st));
    CHECK(tst_status_bytes(&st) == BLK, "%s at %lld: read %lld bytes, expected %d", what,
          (long long) off, (long long) tst_status_bytes(&st), BLK);
    tst_verify(got, BLK, off, writer, gen, what);
}

static void blocks(const char *base, int rank, int np)
{
    char *name = tst_name(base, ".blocks");
    MPI_File fh;
    MPI_Status st;

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    tst_fill(buf, BLK, (int64_t) rank * BLK, rank, 1);
    CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset) rank * BLK, buf, BLK, MPI_BYTE, &st));
    for (int r = 0; r < np; r++)
        tst_img_write(&img1, (int64_t) r * BLK, BLK, r, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 1; k < np; k++) {
        int r = (rank + k) % np;
        read_block(fh, (int64_t) r * BLK, r, 1, "another rank's block");
    }
    if (rank != 0)
        read_block(fh, 0, 0, 1, "rank 0's block again");
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img1);
    free(name);
}

static void grow(const char *base, int rank, int np)
{
    char *name = tst_name(base, ".grow");
    int64_t off[ROUNDS];
    int gen[ROUNDS];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset size;
    uint64_t seed = 68;

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (int i = 0; i < ROUNDS; i++) {
        int w = i % np, j = i - np;
        /* Every third round from the second lap on rewrites the writer's block of the lap
         * before (inside what it announced); the others go past the end (spaced unevenly, so
         * that a range announced ahead holds some of the later blocks and not others). */
        if (i >= np && i % 3 == 0) {
            off[i] = off[j];
            gen[i] = gen[j] + 1;
        } else {
            off[i] = (i == 0 ? 0 : off[i - 1] + BLK) + (int64_t) (tst_rand(&seed) % 4) * BLK;
            for (int k = 0; k < i; k++)
                if (off[k] + BLK > off[i])
                    off[i] = off[k] + BLK;
            gen[i] = 1;
        }
        if (rank == w) {
            tst_fill(buf, BLK, off[i], w, gen[i]);
            CHECK_MPI(MPI_File_write_at(fh, off[i], buf, BLK, MPI_BYTE, &st));
        }
        tst_img_write(&img2, off[i], BLK, w, gen[i]);
        /* The message orders the readers after the write, as a barrier would. */
        MPI_Bcast(&gen[i], 1, MPI_INT, w, MPI_COMM_WORLD);
        read_block(fh, off[i], w, gen[i], "the block just written");
        if (i % 8 == 7) {
            /* Between barriers: no rank writes the next round's block meanwhile. */
            MPI_Barrier(MPI_COMM_WORLD);
            CHECK_MPI(MPI_File_get_size(fh, &size));
            CHECK(size == img2.size, "round %d: MPI_File_get_size %lld, expected %lld", i,
                  (long long) size, (long long) img2.size);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img2);
    free(name);
}

int main(int argc, char **argv)
{
    const char *base = tst_init(&argc, &argv);
    int rank, np;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    tst_img_init(&img1);
    tst_img_init(&img2);
    blocks(base, rank, np);
    grow(base, rank, np);
    tst_img_free(&img1);
    tst_img_free(&img2);
    return tst_finalize();
}
