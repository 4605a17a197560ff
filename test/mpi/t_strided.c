/*
 * IOR-like segmented-strided pattern: in each segment every rank writes one 4 KiB transfer at
 * (segment * nprocs + rank) * 4 KiB. The first half of the segments is written with independent
 * MPI_File_write_at, one transfer per call; the second half collectively: the first NCOLL1
 * segments with one MPI_File_write_at_all per transfer (as IOR does), the rest BATCH segments per
 * MPI_File_write_at_all through a strided view (one collective per segment costs too much time
 * with 8 ranks on 2 cores). Then read back both ways. About 4 MiB in total, whatever the rank
 * count. This is the pattern that makes two-phase aggregation worth it, and a drain that cuts
 * rounds per process instead of per file range (DESIGN.md section 6, step 2) turns into
 * read-modify-write.
 */
#include "common.h"

#define XFER 4096
#define TOTAL ((int64_t)4 << 20)
#define NCOLL1 8
#define BATCH 16

static int64_t xfer_off(int seg, int rank)
{
    return ((int64_t)seg * tst_size + rank) * XFER;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int nseg = (int)(TOTAL / ((int64_t)XFER * tst_size));
    int half = nseg / 2;
    unsigned char buf[XFER], rd[XFER];
    struct tst_image img;
    MPI_File fh;
    MPI_Status st;

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (int s = 0; s < half; s++) {
        tst_fill(buf, XFER, xfer_off(s, tst_rank), tst_rank, 0);
        CHECK_MPI(MPI_File_write_at(fh, xfer_off(s, tst_rank), buf, XFER, MPI_BYTE, &st));
    }
    for (int s = half; s < nseg && s < half + NCOLL1; s++) {
        tst_fill(buf, XFER, xfer_off(s, tst_rank), tst_rank, 0);
        CHECK_MPI(MPI_File_write_at_all(fh, xfer_off(s, tst_rank), buf, XFER, MPI_BYTE, &st));
    }
    {
        /* Batches of BATCH segments: a view of one 4 KiB block per segment for this rank. */
        MPI_Datatype v, vr;
        unsigned char *big = malloc((size_t)BATCH * XFER);
        REQUIRE(big, "out of memory");
        MPI_Type_vector(BATCH, XFER, XFER * tst_size, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)BATCH * XFER * tst_size, &vr);
        MPI_Type_commit(&vr);
        for (int s0 = half + NCOLL1; s0 < nseg; s0 += BATCH) {
            int nb = nseg - s0 < BATCH ? nseg - s0 : BATCH;
            for (int k = 0; k < nb; k++)
                tst_fill(big + (size_t)k * XFER, XFER, xfer_off(s0 + k, tst_rank), tst_rank, 0);
            CHECK_MPI(MPI_File_set_view(fh, xfer_off(s0, tst_rank), MPI_BYTE, vr, "native",
                                        MPI_INFO_NULL));
            CHECK_MPI(MPI_File_write_at_all(fh, 0, big, nb * XFER, MPI_BYTE, &st));
        }
        /* Read back own transfers: collectively, in batches, what was written independently. */
        for (int s0 = 0; s0 < half; s0 += BATCH) {
            int nb = half - s0 < BATCH ? half - s0 : BATCH;
            memset(big, 0, (size_t)BATCH * XFER);
            CHECK_MPI(MPI_File_set_view(fh, xfer_off(s0, tst_rank), MPI_BYTE, vr, "native",
                                        MPI_INFO_NULL));
            CHECK_MPI(MPI_File_read_at_all(fh, 0, big, nb * XFER, MPI_BYTE, &st));
            CHECK(tst_status_bytes(&st) == nb * XFER, "segments %d+: read %lld bytes", s0,
                  (long long)tst_status_bytes(&st));
            for (int k = 0; k < nb; k++)
                tst_verify(big + (size_t)k * XFER, XFER, xfer_off(s0 + k, tst_rank), tst_rank, 0,
                           "strided collective read-back");
        }
        CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&vr);
        MPI_Type_free(&v);
        free(big);
    }

    /* ... and independently what was written collectively. */
    for (int s = half; s < nseg; s++) {
        memset(rd, 0, sizeof rd);
        CHECK_MPI(MPI_File_read_at(fh, xfer_off(s, tst_rank), rd, XFER, MPI_BYTE, &st));
        CHECK(tst_status_bytes(&st) == XFER, "segment %d: read %lld bytes", s,
              (long long)tst_status_bytes(&st));
        tst_verify(rd, XFER, xfer_off(s, tst_rank), tst_rank, 0, "strided read-back");
    }

    /* After sync-barrier-sync every rank sees every rank's data (DESIGN.md section 3). */
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    {
        int peer = (tst_rank + 1) % tst_size;
        for (int s = 0; s < nseg; s += 7) {
            memset(rd, 0, sizeof rd);
            CHECK_MPI(MPI_File_read_at(fh, xfer_off(s, peer), rd, XFER, MPI_BYTE, &st));
            tst_verify(rd, XFER, xfer_off(s, peer), peer, 0, "peer data after sync-barrier-sync");
        }
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_img_init(&img);
    for (int s = 0; s < nseg; s++)
        for (int r = 0; r < tst_size; r++)
            tst_img_write(&img, xfer_off(s, r), XFER, r, 0);
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    return tst_finalize();
}
