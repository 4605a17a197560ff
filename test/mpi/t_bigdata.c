/*
 * Several MiB per rank, meant to be run with small bblog budgets through TEST_HINTS
 * (bblog_flush_buffer_size=64k: many drain rounds; bblog_max_size=256k: the burst buffer
 * overflows and bblog drains or writes through), with MPI_File_sync in between:
 *  A. independent writes of interleaved 48 KiB slots, each slot in 1-3 pieces of random size,
 *     some in reverse order;                                                       sync
 *  B. collective writes, one slot per call;                                        sync
 *  C. random overwrites inside the rank's own phase-A slots (new data over drained data);
 *     read-back;                                                                    sync
 *  D. one 1 MiB independent write per rank (larger than the whole 256k budget at once), and
 *     one collective 1 MiB write;
 *  E. many small writes: NSMALL 8-byte writes in sequence (they coalesce in the index) and
 *     NSMALL 64-byte writes interleaved with the other ranks (they cannot), then read-back; sync
 *  F. overlapping writes around the budget: 100 KiB, then 512 KiB over its second half (more
 *     than bblog_max_size at once), then 10 KiB into its first half; later wins, whatever
 *     was logged and whatever was written through.
 */
#include "common.h"

#define SLOT ((int64_t)(48 * 1024 + 5))
#define NS 21
#define BIG ((int64_t)1 << 20)
#define NC 40 /* overwrites in phase C */
#define NSMALL 8192
#define FREG ((int64_t)(50 + 512) << 10) /* phase F region per rank: what F writes */

static int64_t slot_off(int phase, int c, int rank)
{
    return ((int64_t)phase * NS * tst_size + (int64_t)c * tst_size + rank) * SLOT;
}

static int64_t big_off(int k, int rank)
{
    return 2 * NS * tst_size * SLOT + ((int64_t)k * tst_size + rank) * BIG;
}

static int64_t seq_off(void)
{
    return big_off(2, 0);
}

static int64_t small_off(int i, int rank)
{
    return seq_off() + (int64_t)tst_size * NSMALL * 8 + ((int64_t)i * tst_size + rank) * 64;
}

static int64_t f_off(int rank)
{
    return small_off(NSMALL, 0) + (int64_t)rank * FREG;
}

static void overwrite(uint64_t *seed, int rank, int64_t *off, int64_t *len)
{
    int c = (int)(tst_rand(seed) % NS);
    int64_t o = (int64_t)(tst_rand(seed) % SLOT);

    *off = slot_off(0, c, rank) + o;
    *len = 1 + (int64_t)(tst_rand(seed) % (uint64_t)(SLOT - o));
}

static void sync_all(MPI_File fh)
{
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(BIG);
    struct tst_image img;
    uint64_t seed = 0xB16DA7AULL + (uint64_t)tst_rank;
    MPI_File fh;
    MPI_Status st;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    for (int r = 0; r < tst_size; r++) {
        uint64_t s = 0xC0FFEEULL + (uint64_t)r;
        for (int c = 0; c < NS; c++) {
            tst_img_write(&img, slot_off(0, c, r), SLOT, r, 0);
            tst_img_write(&img, slot_off(1, c, r), SLOT, r, 1);
        }
        for (int i = 0; i < NC; i++) {
            int64_t o, n;
            overwrite(&s, r, &o, &n);
            tst_img_write(&img, o, n, r, 2);
        }
        for (int k = 0; k < 2; k++)
            tst_img_write(&img, big_off(k, r), BIG, r, 3 + k);
        tst_img_write(&img, seq_off() + (int64_t)r * NSMALL * 8, NSMALL * 8, r, 5);
        for (int i = 0; i < NSMALL; i++)
            tst_img_write(&img, small_off(i, r), 64, r, 6);
        tst_img_write(&img, f_off(r), 100 << 10, r, 7);
        tst_img_write(&img, f_off(r) + (50 << 10), 512 << 10, r, 8);
        tst_img_write(&img, f_off(r) + (10 << 10), 10 << 10, r, 9);
    }

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    /* A */
    for (int c = 0; c < NS; c++) {
        int64_t base = slot_off(0, c, tst_rank);
        int np = 1 + (int)(tst_rand(&seed) % 3);
        int64_t cut1 = np > 1 ? 1 + (int64_t)(tst_rand(&seed) % (SLOT - 1)) : SLOT;
        int64_t cut2 = np > 2 ? cut1 + (int64_t)(tst_rand(&seed) % (uint64_t)(SLOT - cut1)) : SLOT;
        int64_t piece[3][2] = {{0, cut1}, {cut1, cut2}, {cut2, SLOT}};
        int reverse = c % 2;
        for (int k = 0; k < 3; k++) {
            int p = reverse ? 2 - k : k;
            int64_t o = piece[p][0], n = piece[p][1] - piece[p][0];
            if (n <= 0)
                continue;
            tst_fill(buf, (size_t)n, base + o, tst_rank, 0);
            CHECK_MPI(MPI_File_write_at(fh, base + o, buf, (int)n, MPI_BYTE, &st));
        }
    }
    sync_all(fh);

    /* B */
    for (int c = 0; c < NS; c++) {
        tst_fill(buf, SLOT, slot_off(1, c, tst_rank), tst_rank, 1);
        CHECK_MPI(MPI_File_write_at_all(fh, slot_off(1, c, tst_rank), buf, (int)SLOT, MPI_BYTE,
                                        &st));
    }
    sync_all(fh);

    /* C */
    {
        uint64_t s = 0xC0FFEEULL + (uint64_t)tst_rank;
        for (int i = 0; i < NC; i++) {
            int64_t o, n;
            overwrite(&s, tst_rank, &o, &n);
            tst_fill(buf, (size_t)n, o, tst_rank, 2);
            CHECK_MPI(MPI_File_write_at(fh, o, buf, (int)n, MPI_BYTE, &st));
        }
    }
    for (int c = 0; c < NS; c++) {
        tst_read_expect(fh, slot_off(0, c, tst_rank), img.data + slot_off(0, c, tst_rank), SLOT,
                        "own phase A/C slot");
        tst_read_expect(fh, slot_off(1, c, tst_rank), img.data + slot_off(1, c, tst_rank), SLOT,
                        "own phase B slot");
    }
    sync_all(fh);

    /* D */
    tst_fill(buf, BIG, big_off(0, tst_rank), tst_rank, 3);
    CHECK_MPI(MPI_File_write_at(fh, big_off(0, tst_rank), buf, (int)BIG, MPI_BYTE, &st));
    CHECK(tst_status_bytes(&st) == BIG, "1 MiB write_at: %lld bytes",
          (long long)tst_status_bytes(&st));
    tst_fill(buf, BIG, big_off(1, tst_rank), tst_rank, 4);
    CHECK_MPI(MPI_File_write_at_all(fh, big_off(1, tst_rank), buf, (int)BIG, MPI_BYTE, &st));
    tst_read_expect(fh, big_off(0, tst_rank), img.data + big_off(0, tst_rank), BIG,
                    "own 1 MiB write");
    tst_read_expect(fh, big_off(1, tst_rank), img.data + big_off(1, tst_rank), BIG,
                    "own 1 MiB collective write");

    /* E */
    {
        int64_t seq = seq_off() + (int64_t)tst_rank * NSMALL * 8;
        for (int i = 0; i < NSMALL; i++) {
            tst_fill(buf, 8, seq + i * 8, tst_rank, 5);
            CHECK_MPI(MPI_File_write_at(fh, seq + i * 8, buf, 8, MPI_BYTE, &st));
        }
        for (int i = 0; i < NSMALL; i++) {
            tst_fill(buf, 64, small_off(i, tst_rank), tst_rank, 6);
            CHECK_MPI(MPI_File_write_at(fh, small_off(i, tst_rank), buf, 64, MPI_BYTE, &st));
        }
        tst_read_expect(fh, seq, img.data + seq, NSMALL * 8, "own 8-byte writes");
        for (int i = 0; i < NSMALL; i += 97)
            tst_read_expect(fh, small_off(i, tst_rank), img.data + small_off(i, tst_rank), 64,
                            "own 64-byte write");
    }
    sync_all(fh);

    /* F */
    {
        static const int64_t piece[3][2] = {{0, 100 << 10}, {50 << 10, 512 << 10},
                                            {10 << 10, 10 << 10}};
        for (int k = 0; k < 3; k++) {
            int64_t o = f_off(tst_rank) + piece[k][0], n = piece[k][1];
            tst_fill(buf, (size_t)n, o, tst_rank, 7 + k);
            CHECK_MPI(MPI_File_write_at(fh, o, buf, (int)n, MPI_BYTE, &st));
        }
        tst_read_expect(fh, f_off(tst_rank), img.data + f_off(tst_rank), FREG,
                        "own overlapping writes around the budget");
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
