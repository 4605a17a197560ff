/*
 * Reads of what other processes wrote, within one open, with no MPI_File_sync between: the
 * writer's call returned, and a message or a barrier ordered the reader after it. MPI asks
 * for sync-barrier-sync; POSIX file systems (and so plain ROMIO) give it without, and parallel
 * HDF5 relies on it (its t_mpi "1 write Many read", a chunk written by one rank's collective
 * write and read back by all). Each case uses its own region of the file:
 *
 *   1 one-many   rank 0 writes a block independently; after a broadcast and a barrier every
 *                rank reads it (independent read, then a strided read through a file view),
 *                and MPI_File_get_size sees its end;
 *   2 coll       every rank writes its block with one collective write; after a barrier each
 *                reads its neighbour's block, and every rank reads the whole region;
 *   3 order      rank 0 writes a block independently, a collective call follows, then the
 *                last rank writes its middle half: every rank, rank 0 included, reads the
 *                later bytes over the earlier ones;
 *   4 through    rank 0 logs small pieces; after a collective call the last rank writes one
 *                large write over them (straight to the PFS file: past bblog_through_threshold
 *                draining on demand, or with the burst buffer full, the runner's [max256k]):
 *                every rank reads the later bytes;
 *   5 chain      each rank in turn reads what the previous ones wrote (token passing), adds
 *                its own block after theirs and passes on;
 *   6 sync       after MPI_File_sync (the logs are drained and emptied) rank 0 overwrites
 *                part of case 1's block: every rank reads the new bytes, and the old ones
 *                around them from the PFS file;
 *   7 early      rank 0 starts a nonblocking collective write over case 2's region and tells
 *                the last rank, which reads the region before it enters the call itself: it
 *                reads the old bytes (with plain ROMIO the call's bytes reach the file only
 *                once every process has entered it), and the new ones after the call;
 *   8 barrier    parallel HDF5's dataset fill: rank 0 writes a region independently, then
 *                after an MPI_Barrier (no collective call on the file) every rank writes part
 *                of it independently, then after another barrier rank 0 writes over the last
 *                rank's part: every rank reads the later bytes over the earlier ones, and the
 *                file ends as on a POSIX file system (testphdf5's ccontw caught the drain
 *                keeping rank 0's fill).
 * The file is checked at the end against the image of what plain ROMIO leaves, and the runner
 * compares it byte for byte with the ufs run's.
 */
#include "common.h"

#define BLK 8192
#define BIG (1536 * 1024)       /* above bblog_through_threshold (1m) and bblog_max_size=256k */

static struct tst_image img;
static unsigned char *buf, *expect;

static void wr(MPI_File fh, int64_t off, int64_t len, int writer, int gen, int coll)
{
    MPI_Status st;

    tst_fill(buf, (size_t) len, off, writer, gen);
    if (coll)
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, (int) len, MPI_BYTE, &st));
    else
        CHECK_MPI(MPI_File_write_at(fh, off, buf, (int) len, MPI_BYTE, &st));
}

/* What img holds at [off, off+len). */
static const unsigned char *img_at(int64_t off, int64_t len)
{
    memset(expect, 0, (size_t) len);
    if (off < img.size)
        memcpy(expect, img.data + off, (size_t) (img.size - off < len ? img.size - off : len));
    return expect;
}

static void coll_nothing(MPI_File fh)
{
    MPI_Status st;

    CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, 0, MPI_BYTE, &st));
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int n = tst_size, r = tst_rank, last = tst_size - 1, i, token;
    int64_t base;
    MPI_Offset sz;
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype every_other;

    buf = malloc(BIG + (size_t) n * BLK);
    expect = malloc(BIG + (size_t) n * BLK);
    REQUIRE(buf && expect, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    /* 1 one-many */
    base = 0;
    if (r == 0)
        wr(fh, base, 4 * BLK, 0, 1, 0);
    tst_img_write(&img, base, 4 * BLK, 0, 1);
    token = 42;
    MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    tst_read_expect(fh, base, img_at(base, 4 * BLK), 4 * BLK, "1 one-many: read");
    CHECK_MPI(MPI_File_get_size(fh, &sz));
    CHECK(sz >= 4 * BLK, "1 one-many: MPI_File_get_size %lld, expected at least %d",
          (long long) sz, 4 * BLK);
    /* Every other 1 KiB of the block through a file view: a strided independent read. */
    CHECK_MPI(MPI_Type_vector(2 * BLK / 1024, 1024, 2048, MPI_BYTE, &every_other));
    CHECK_MPI(MPI_Type_commit(&every_other));
    CHECK_MPI(MPI_File_set_view(fh, base, MPI_BYTE, every_other, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_read_at(fh, 0, buf, 2 * BLK, MPI_BYTE, &st));
    for (i = 0; i < 2 * BLK / 1024; i++)
        tst_compare(buf + i * 1024, img.data + base + i * 2048, 1024, base + i * 2048,
                    "1 one-many: strided read");
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&every_other);

    /* 2 coll */
    base = 4 * BLK;
    wr(fh, base + (int64_t) r * BLK, BLK, r, 2, 1);
    for (i = 0; i < n; i++)
        tst_img_write(&img, base + (int64_t) i * BLK, BLK, i, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    tst_read_expect(fh, base + (int64_t) ((r + 1) % n) * BLK,
                    img_at(base + (int64_t) ((r + 1) % n) * BLK, BLK), BLK,
                    "2 coll: the neighbour's block");
    tst_read_expect(fh, base, img_at(base, (int64_t) n * BLK), (int64_t) n * BLK,
                    "2 coll: the whole region");

    /* 3 order */
    base += (int64_t) n * BLK;
    if (r == 0)
        wr(fh, base, 2 * BLK, 0, 3, 0);
    tst_img_write(&img, base, 2 * BLK, 0, 3);
    coll_nothing(fh);
    if (r == last)
        wr(fh, base + BLK / 2, BLK, last, 4, 0);
    tst_img_write(&img, base + BLK / 2, BLK, last, 4);
    MPI_Barrier(MPI_COMM_WORLD);
    tst_read_expect(fh, base, img_at(base, 2 * BLK), 2 * BLK, "3 order");

    /* 4 through */
    base += 2 * BLK;
    if (r == 0)
        for (i = 0; i < 8; i++)
            wr(fh, base + (int64_t) i * 2 * BLK, BLK, 0, 5, 0);
    for (i = 0; i < 8; i++)
        tst_img_write(&img, base + (int64_t) i * 2 * BLK, BLK, 0, 5);
    coll_nothing(fh);
    if (r == last)
        wr(fh, base + BLK / 2, BIG, last, 6, 0);
    tst_img_write(&img, base + BLK / 2, BIG, last, 6);
    MPI_Barrier(MPI_COMM_WORLD);
    tst_read_expect(fh, base, img_at(base, BIG + BLK / 2), BIG + BLK / 2, "4 through");

    /* 5 chain */
    base += BIG + BLK;
    token = 0;
    if (r > 0)
        MPI_Recv(&token, 1, MPI_INT, r - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (i = 0; i < r; i++)
        tst_img_write(&img, base + (int64_t) i * BLK, BLK, i, 7);
    if (r > 0)
        tst_read_expect(fh, base, img_at(base, (int64_t) r * BLK), (int64_t) r * BLK,
                        "5 chain: what the previous ranks wrote");
    wr(fh, base + (int64_t) r * BLK, BLK, r, 7, 0);
    if (r < last)
        MPI_Send(&token, 1, MPI_INT, r + 1, 5, MPI_COMM_WORLD);
    for (i = r; i < n; i++)
        tst_img_write(&img, base + (int64_t) i * BLK, BLK, i, 7);
    MPI_Barrier(MPI_COMM_WORLD);
    tst_read_expect(fh, base, img_at(base, (int64_t) n * BLK), (int64_t) n * BLK,
                    "5 chain: all of it");

    /* 6 sync */
    CHECK_MPI(MPI_File_sync(fh));
    if (r == 0)
        wr(fh, BLK, BLK, 0, 8, 0);
    tst_img_write(&img, BLK, BLK, 0, 8);
    MPI_Barrier(MPI_COMM_WORLD);
    tst_read_expect(fh, 0, img_at(0, 4 * BLK), 4 * BLK, "6 sync");

    /* 7 early. Open MPI's plain ROMIO has no nonblocking collective writes (t_nonblock.c says
     * why): its leg, the reference, sends the token first and makes the blocking call. */
    if (n > 1) {
        MPI_Request req = MPI_REQUEST_NULL;
        int blocking = tst_mpi_is_ompi() && !tst_is_bblog(name);
        base = 4 * BLK;
        if (r == 0) {
            tst_fill(buf, BLK, base, 0, 9);
            if (blocking) {
                MPI_Send(&token, 1, MPI_INT, last, 7, MPI_COMM_WORLD);
                CHECK_MPI(MPI_File_write_at_all(fh, base, buf, BLK, MPI_BYTE, &st));
            } else {
                CHECK_MPI(MPI_File_iwrite_at_all(fh, base, buf, BLK, MPI_BYTE, &req));
                MPI_Send(&token, 1, MPI_INT, last, 7, MPI_COMM_WORLD);
            }
        } else {
            if (r == last) {
                MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                tst_read_expect(fh, base, img_at(base, BLK), BLK,
                                "7 early: before entering the collective call");
            }
            if (blocking)
                CHECK_MPI(MPI_File_write_at_all(fh, base, buf, 0, MPI_BYTE, &st));
            else
                CHECK_MPI(MPI_File_iwrite_at_all(fh, base, buf, 0, MPI_BYTE, &req));
        }
        CHECK_MPI(MPI_Wait(&req, &st));
        tst_img_write(&img, base, BLK, 0, 9);
        MPI_Barrier(MPI_COMM_WORLD);
        tst_read_expect(fh, base, img_at(base, BLK), BLK, "7 early: after the call");
    }

    /* 8 barrier */
    base = 4 * BLK + (int64_t) n * BLK + 2 * BLK + BIG + BLK + (int64_t) n * BLK;
    if (r == 0)
        wr(fh, base, (int64_t) n * BLK, 0, 10, 0);
    tst_img_write(&img, base, (int64_t) n * BLK, 0, 10);
    MPI_Barrier(MPI_COMM_WORLD);
    wr(fh, base + (int64_t) r * BLK + BLK / 4, BLK / 2, r, 11, 0);
    for (i = 0; i < n; i++)
        tst_img_write(&img, base + (int64_t) i * BLK + BLK / 4, BLK / 2, i, 11);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0)
        wr(fh, base + (int64_t) last * BLK + BLK / 2, BLK / 2, 0, 12, 0);
    tst_img_write(&img, base + (int64_t) last * BLK + BLK / 2, BLK / 2, 0, 12);
    MPI_Barrier(MPI_COMM_WORLD);
    tst_read_expect(fh, base, img_at(base, (int64_t) n * BLK), (int64_t) n * BLK,
                    "8 barrier: the later writes over the fill");

    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    free(expect);
    return tst_finalize();
}
