/*
 * IOR-like segmented-strided pattern: in each segment every rank writes one 4 KiB transfer at
 * (segment * nprocs + rank) * 4 KiB. The first half of the segments is written with independent
 * MPI_File_write_at, the second half with collective MPI_File_write_at_all, then read back both
 * ways. About 4 MiB in total, whatever the rank count. This is the pattern that makes two-phase
 * aggregation worth it, and a drain that cuts rounds per process instead of per file range
 * (DESIGN.md section 6, step 2) turns into read-modify-write.
 */
#include "common.h"

#define XFER 4096
#define TOTAL ((int64_t)4 << 20)

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
    for (int s = half; s < nseg; s++) {
        tst_fill(buf, XFER, xfer_off(s, tst_rank), tst_rank, 0);
        CHECK_MPI(MPI_File_write_at_all(fh, xfer_off(s, tst_rank), buf, XFER, MPI_BYTE, &st));
    }

    /* Read back own transfers: collective where written independently and vice versa. */
    for (int s = 0; s < nseg; s++) {
        memset(rd, 0, sizeof rd);
        if (s < half)
            CHECK_MPI(MPI_File_read_at_all(fh, xfer_off(s, tst_rank), rd, XFER, MPI_BYTE, &st));
        else
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
