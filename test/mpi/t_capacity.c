/*
 * Far more data than the burst buffer holds, with no sync to drain it: run with a small
 * bblog_max_size (TEST_HINTS), so that the background drain must write the oldest logged
 * bytes to the PFS file and give their log space back while the file stays open (bblog(7),
 * bblog_high_water). No MPI_File_sync before close: every byte the file ends with went
 * through the log's trim point or through close's drain.
 *  A. collective writes of 4 KiB, each rank filling its own region (IOR's segmented layout);
 *     every 64th call each rank reads back one of its own earlier blocks and, after a barrier
 *     (which orders the next rank's writes before the read, as parallel HDF5 relies on), one
 *     of the next rank's;
 *  B. independent 64 KiB writes interleaved across the ranks, and overwrites of blocks of
 *     the rank's own phase-A region (new data over bytes long drained and trimmed), read back;
 *  C. collective overwrites of the start of every region;
 * then close, and every byte checked against the image.
 */
#include "common.h"

#define BLK 4096
#define NA 768                           /* phase A calls: 3 MiB per rank */
#define IB (64 * 1024)
#define NB 48                            /* phase B writes per rank: 3 MiB */
#define NOV 24                           /* phase B overwrites per rank */
#define NC 8                             /* phase C calls */

static int64_t a_off(int rank, int i)
{
    return ((int64_t)rank * NA + i) * BLK;
}

static int64_t b_off(int rank, int i)
{
    return (int64_t)tst_size * NA * BLK + ((int64_t)i * tst_size + rank) * IB;
}

static int ov_block(uint64_t *seed)
{
    return (int)(tst_rand(seed) % NA);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(IB), *expect = malloc(IB);
    struct tst_image img;
    uint64_t seed = 0xCA9AC17ULL + (uint64_t)tst_rank;
    int next = (tst_rank + 1) % tst_size;
    MPI_File fh;
    MPI_Status st;

    REQUIRE(buf && expect, "out of memory");
    tst_img_init(&img);
    for (int r = 0; r < tst_size; r++) {
        uint64_t s = 0x5EEDULL + (uint64_t)r;
        for (int i = 0; i < NA; i++)
            tst_img_write(&img, a_off(r, i), BLK, r, 0);
        for (int i = 0; i < NB; i++)
            tst_img_write(&img, b_off(r, i), IB, r, 1);
        for (int i = 0; i < NOV; i++)
            tst_img_write(&img, a_off(r, ov_block(&s)), BLK, r, 2);
        for (int i = 0; i < NC; i++)
            tst_img_write(&img, a_off(r, i), BLK, r, 3);
    }

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    /* A */
    for (int i = 0; i < NA; i++) {
        tst_fill(buf, BLK, a_off(tst_rank, i), tst_rank, 0);
        CHECK_MPI(MPI_File_write_at_all(fh, a_off(tst_rank, i), buf, BLK, MPI_BYTE, &st));
        if (i % 64 == 63) {
            int j = (int)(tst_rand(&seed) % (uint64_t)(i + 1));
            tst_fill(expect, BLK, a_off(tst_rank, j), tst_rank, 0);
            tst_read_expect(fh, a_off(tst_rank, j), expect, BLK, "phase A, own block");
            j = (int)(tst_rand(&seed) % (uint64_t)(i + 1));
            MPI_Barrier(MPI_COMM_WORLD);
            tst_fill(expect, BLK, a_off(next, j), next, 0);
            tst_read_expect(fh, a_off(next, j), expect, BLK, "phase A, next rank's block");
        }
    }

    /* B */
    {
        uint64_t s = 0x5EEDULL + (uint64_t)tst_rank;
        for (int i = 0; i < NB; i++) {
            tst_fill(buf, IB, b_off(tst_rank, i), tst_rank, 1);
            CHECK_MPI(MPI_File_write_at(fh, b_off(tst_rank, i), buf, IB, MPI_BYTE, &st));
            if (i < NOV) {
                int64_t o = a_off(tst_rank, ov_block(&s));
                tst_fill(buf, BLK, o, tst_rank, 2);
                CHECK_MPI(MPI_File_write_at(fh, o, buf, BLK, MPI_BYTE, &st));
                tst_read_expect(fh, o, buf, BLK, "phase B, overwritten block");
            }
        }
        tst_fill(expect, IB, b_off(tst_rank, 0), tst_rank, 1);
        tst_read_expect(fh, b_off(tst_rank, 0), expect, IB, "phase B, first write");
    }

    /* C */
    for (int i = 0; i < NC; i++) {
        tst_fill(buf, BLK, a_off(tst_rank, i), tst_rank, 3);
        CHECK_MPI(MPI_File_write_at_all(fh, a_off(tst_rank, i), buf, BLK, MPI_BYTE, &st));
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    free(expect);
    return tst_finalize();
}
