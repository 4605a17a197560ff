/*
 * Contiguous writes, independent and collective, through explicit offsets and individual file
 * pointers. Each rank owns one block per phase; block sizes are odd so that rank boundaries
 * never fall on a page or stripe. After every write the user buffer is overwritten: the MPI-IO
 * call has returned, so the data must already be stored (in the log) and not referenced.
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* Bytes per rank per phase: odd, a little over half a MiB. */
#define BLK ((int64_t)(512 * 1024 + 4099))
#define NPHASE 4
#define NCOLL 4 /* collective calls per collective phase */

static int64_t block_off(int phase, int rank)
{
    return ((int64_t)phase * tst_size + rank) * BLK;
}

/* Piece boundaries of a rank's block for the collective phases: NCOLL pieces, the first piece of
 * odd ranks empty (a rank with nothing to write still takes part in the collective). */
static void coll_piece(int rank, int k, int64_t *off, int64_t *len)
{
    int64_t cut[NCOLL + 1];

    cut[0] = 0;
    cut[1] = (rank % 2) ? 0 : 1000 + 17 * rank;
    cut[2] = BLK / 3 + rank;
    cut[3] = BLK / 2 + 4096;
    cut[4] = BLK;
    *off = cut[k];
    *len = cut[k + 1] - cut[k];
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(BLK), *rd = malloc(BLK);
    uint64_t seed = 0x1234567ULL + (uint64_t)tst_rank;
    struct tst_image img;
    MPI_File fh;
    MPI_Status st;

    REQUIRE(buf && rd, "out of memory");
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    /* Phase 0: independent write_at, pieces of 1 byte to 70 KB. */
    for (int64_t pos = 0; pos < BLK;) {
        int64_t n = 1 + (int64_t)(tst_rand(&seed) % 70000);
        if (n > BLK - pos)
            n = BLK - pos;
        int64_t off = block_off(0, tst_rank) + pos;
        tst_fill(buf, (size_t)n, off, tst_rank, 0);
        CHECK_MPI(MPI_File_write_at(fh, off, buf, (int)n, MPI_BYTE, &st));
        CHECK(tst_status_bytes(&st) == n, "write_at status says %lld bytes, wrote %lld",
              (long long)tst_status_bytes(&st), (long long)n);
        memset(buf, 0xEE, (size_t)n);
        pos += n;
    }

    /* Phase 1: independent writes through the individual file pointer. */
    CHECK_MPI(MPI_File_seek(fh, block_off(1, tst_rank), MPI_SEEK_SET));
    for (int64_t pos = 0; pos < BLK;) {
        int64_t n = 1 + (int64_t)(tst_rand(&seed) % 100000);
        if (n > BLK - pos)
            n = BLK - pos;
        tst_fill(buf, (size_t)n, block_off(1, tst_rank) + pos, tst_rank, 1);
        CHECK_MPI(MPI_File_write(fh, buf, (int)n, MPI_BYTE, &st));
        memset(buf, 0xEE, (size_t)n);
        pos += n;
    }
    {
        MPI_Offset p = -1;
        CHECK_MPI(MPI_File_get_position(fh, &p));
        CHECK(p == block_off(1, tst_rank) + BLK, "individual pointer at %lld, expected %lld",
              (long long)p, (long long)(block_off(1, tst_rank) + BLK));
    }

    /* Phase 2: collective write_at_all. */
    for (int k = 0; k < NCOLL; k++) {
        int64_t o, n;
        coll_piece(tst_rank, k, &o, &n);
        int64_t off = block_off(2, tst_rank) + o;
        tst_fill(buf, (size_t)n, off, tst_rank, 2);
        tst_status_unset(&st);
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, (int)n, MPI_BYTE, &st));
        if (n == 0 && tst_romio_321() && !tst_is_bblog(name))
            /* Open MPI's ROMIO 3.2.1: a collective write that is not interleaved goes to
             * ADIOI_GEN_WriteContig, which sets the status only after a pwrite (err != -1);
             * with nothing to write it leaves the caller's status as it was. MPICH 4's ROMIO
             * returns early for count 0 with err = 0 and sets 0 bytes. bblog sets 0 on both. */
            CHECK(tst_status_bytes(&st) == TST_STATUS_UNSET,
                  "write_at_all of 0 bytes on Open MPI's plain ROMIO: status says %lld bytes; "
                  "ROMIO 3.2.1 leaves it untouched", (long long)tst_status_bytes(&st));
        else
            CHECK(tst_status_bytes(&st) == n, "write_at_all status says %lld bytes, wrote %lld",
                  (long long)tst_status_bytes(&st), (long long)n);
        memset(buf, 0xEE, (size_t)n);
    }

    /* Phase 3: collective writes through the individual file pointer. */
    CHECK_MPI(MPI_File_seek(fh, block_off(3, tst_rank), MPI_SEEK_SET));
    for (int k = 0; k < NCOLL; k++) {
        int64_t o, n;
        coll_piece(tst_rank, k, &o, &n); /* pieces in order: the pointer walks the block */
        tst_fill(buf, (size_t)n, block_off(3, tst_rank) + o, tst_rank, 3);
        CHECK_MPI(MPI_File_write_all(fh, buf, (int)n, MPI_BYTE, &st));
        memset(buf, 0xEE, (size_t)n);
    }

    /* Read-back of own data before any sync: independent, then collective. */
    for (int ph = 0; ph < NPHASE; ph++) {
        char what[64];
        snprintf(what, sizeof what, "read_at own phase %d", ph);
        memset(rd, 0, BLK);
        CHECK_MPI(MPI_File_read_at(fh, block_off(ph, tst_rank), rd, (int)BLK, MPI_BYTE, &st));
        CHECK(tst_status_bytes(&st) == BLK, "%s: %lld bytes", what,
              (long long)tst_status_bytes(&st));
        tst_verify(rd, BLK, block_off(ph, tst_rank), tst_rank, ph, what);
        snprintf(what, sizeof what, "read_at_all own phase %d", ph);
        memset(rd, 0, BLK);
        CHECK_MPI(MPI_File_read_at_all(fh, block_off(ph, tst_rank), rd, (int)BLK, MPI_BYTE, &st));
        CHECK(tst_status_bytes(&st) == BLK, "%s: %lld bytes", what,
              (long long)tst_status_bytes(&st));
        tst_verify(rd, BLK, block_off(ph, tst_rank), tst_rank, ph, what);
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_img_init(&img);
    for (int ph = 0; ph < NPHASE; ph++)
        for (int r = 0; r < tst_size; r++)
            tst_img_write(&img, block_off(ph, r), BLK, r, ph);
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    free(rd);
    return tst_finalize();
}
