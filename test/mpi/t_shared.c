/*
 * Shared file pointer and ordered mode. ROMIO keeps the shared pointer in a hidden file opened
 * through the same driver; bblog must not log it (DESIGN.md section 3).
 *  1. write_shared one rank at a time (barriers between), two rounds; get_position_shared;
 *     seek_shared back into the last record (later wins);
 *  2. write_shared by all ranks at once: the order is not deterministic, so rank 0 checks that
 *     every record arrived whole, then rewrites the region with the records sorted;
 *  3. write_ordered and write_ordered_begin/end (deterministic), read back with read_ordered and
 *     read_ordered_begin/end;
 *  4. the file reopened with MPI_MODE_APPEND: both pointers start at the end (which must count
 *     everything drained at close), write_ordered appends in rank order;
 *  5. views without waiting: rank 0 sets three views one after the other and writes through
 *     the shared pointer in each; the last rank first writes in the old view, through the
 *     shared pointer, then sets the same views. Each view starts with the pointer at 0, and the
 *     late rank's write lands at the old view's pointer, as when set_view holds every process
 *     until all have entered it (ROMIO's barrier, which bblog leaves out: ad_bblog_sharedfp.c).
 */
#include "common.h"

#define NR 5    /* records per rank in part 2 */
#define RS 256  /* record size in part 2 */
#define HDR 8   /* rank and sequence number, two int32 */

static int64_t len1(int k, int round)
{
    return 100 + 13 * k + 7 * round;
}

static int64_t len3(int r)
{
    return 50 + 31 * r;
}

static int64_t len4(int r)
{
    return 20 + 3 * r;
}

static MPI_Offset pos_shared(MPI_File fh)
{
    MPI_Offset p = -1;

    CHECK_MPI(MPI_File_get_position_shared(fh, &p));
    return p;
}

/* get_position_shared is not collective and others move the pointer: look only while nobody
 * writes (barrier before: all moves are done; barrier after: nobody moves it before all looked). */
static void expect_shared(MPI_File fh, int64_t expect, const char *when)
{
    MPI_Offset p;

    MPI_Barrier(MPI_COMM_WORLD);
    p = pos_shared(fh);
    CHECK(p == expect, "%s: shared pointer at %lld, expected %lld", when, (long long)p,
          (long long)expect);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A part-2 record of (rank, seq) as it must look at `off` once sorted. */
static void make_record(unsigned char *rec, int rank, int seq, int64_t off)
{
    int32_t h[2] = {rank, seq};

    memcpy(rec, h, HDR);
    tst_fill(rec + HDR, RS - HDR, off + HDR, rank, 2);
}

/* Part 5. */
#define BIG5 (1 << 20)
static void views_and_shared_fp(const char *name)
{
    char *fname = tst_name(name, ".views");
    int last = tst_size - 1;
    unsigned char *buf = malloc(BIG5);
    struct tst_image img;
    MPI_Status st;
    MPI_File fh;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (tst_rank == 0) {
        tst_fill(buf, 100, 0, 0, 10);
        CHECK_MPI(MPI_File_write_shared(fh, buf, 100, MPI_BYTE, &st));
    }
    expect_shared(fh, 100, "part 5, first view");
    if (tst_rank == last) {
        /* Some work first, so that rank 0 is likely to be views ahead. */
        tst_fill(buf, BIG5, 10000, last, 11);
        CHECK_MPI(MPI_File_write_at(fh, 10000, buf, BIG5, MPI_BYTE, &st));
        tst_fill(buf, 77, 100, last, 12);
        CHECK_MPI(MPI_File_write_shared(fh, buf, 77, MPI_BYTE, &st));
    }
    for (int k = 1; k <= 3; k++) {
        CHECK_MPI(MPI_File_set_view(fh, 1000 * k, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        if (tst_rank == 0) {
            tst_fill(buf, (size_t)(50 + k), 1000 * k, 0, 12 + k);
            CHECK_MPI(MPI_File_write_shared(fh, buf, 50 + k, MPI_BYTE, &st));
        }
    }
    expect_shared(fh, 53, "part 5, after three views");
    CHECK_MPI(MPI_File_close(&fh));
    tst_img_write(&img, 0, 100, 0, 10);
    tst_img_write(&img, 100, 77, last, 12);
    for (int k = 1; k <= 3; k++)
        tst_img_write(&img, 1000 * k, 50 + k, 0, 12 + k);
    tst_img_write(&img, 10000, BIG5, last, 11);
    tst_check_file(MPI_COMM_WORLD, fname, &img);
    tst_img_free(&img);
    free(buf);
    free(fname);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    struct tst_image img;
    unsigned char buf[1024];
    int64_t pos = 0, start2, start3, start4;
    MPI_File fh;
    MPI_Status st;

    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect_shared(fh, 0, "new file");

    /* Part 1. */
    for (int round = 0; round < 2; round++)
        for (int k = 0; k < tst_size; k++) {
            int64_t n = len1(k, round);
            if (tst_rank == k) {
                tst_fill(buf, (size_t)n, pos, k, 1);
                CHECK_MPI(MPI_File_write_shared(fh, buf, (int)n, MPI_BYTE, &st));
                CHECK(tst_status_bytes(&st) == n, "write_shared: %lld bytes",
                      (long long)tst_status_bytes(&st));
            }
            tst_img_write(&img, pos, n, k, 1);
            pos += n;
            MPI_Barrier(MPI_COMM_WORLD);
        }
    expect_shared(fh, pos, "after serialized write_shared");
    CHECK_MPI(MPI_File_seek_shared(fh, pos - 50, MPI_SEEK_SET));
    expect_shared(fh, pos - 50, "after seek_shared");
    if (tst_rank == tst_size - 1) {
        tst_fill(buf, 80, pos - 50, tst_rank, 5);
        CHECK_MPI(MPI_File_write_shared(fh, buf, 80, MPI_BYTE, &st));
    }
    tst_img_write(&img, pos - 50, 80, tst_size - 1, 5);
    pos += 30;
    MPI_Barrier(MPI_COMM_WORLD);
    /* MPI_SEEK_END is relative to the file size: everything so far must be visible for it. */
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    expect_shared(fh, pos, "after seek_shared to the end");

    /* Part 2. */
    start2 = pos;
    for (int s = 0; s < NR; s++) {
        make_record(buf, tst_rank, s, start2 + (int64_t)(tst_rank * NR + s) * RS);
        CHECK_MPI(MPI_File_write_shared(fh, buf, RS, MPI_BYTE, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    start3 = start2 + (int64_t)tst_size * NR * RS;
    expect_shared(fh, start3, "after concurrent write_shared");
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    if (tst_rank == 0) {
        int64_t n = (int64_t)tst_size * NR * RS;
        unsigned char *all = malloc((size_t)n), *sorted = malloc((size_t)n);
        char *seen = calloc((size_t)tst_size * NR, 1);
        REQUIRE(all && sorted && seen, "out of memory");
        CHECK_MPI(MPI_File_read_at(fh, start2, all, (int)n, MPI_BYTE, &st));
        CHECK(tst_status_bytes(&st) == n, "reading part 2: %lld bytes",
              (long long)tst_status_bytes(&st));
        for (int i = 0; i < tst_size * NR; i++) {
            int32_t h[2];
            memcpy(h, all + (int64_t)i * RS, HDR);
            if (h[0] < 0 || h[0] >= tst_size || h[1] < 0 || h[1] >= NR ||
                seen[h[0] * NR + h[1]]) {
                CHECK(0, "record %d of part 2 has a bad or repeated header (%d, %d)", i, h[0],
                      h[1]);
                continue;
            }
            seen[h[0] * NR + h[1]] = 1;
            int64_t dst = (int64_t)(h[0] * NR + h[1]) * RS;
            unsigned char expect[RS];
            make_record(expect, h[0], h[1], start2 + dst);
            tst_compare(all + (int64_t)i * RS, expect, RS, start2 + (int64_t)i * RS,
                        "write_shared record body");
            memcpy(sorted + dst, all + (int64_t)i * RS, RS);
        }
        CHECK_MPI(MPI_File_write_at(fh, start2, sorted, (int)n, MPI_BYTE, &st));
        free(all);
        free(sorted);
        free(seen);
    }
    for (int r = 0; r < tst_size; r++)
        for (int s = 0; s < NR; s++) {
            int64_t off = start2 + (int64_t)(r * NR + s) * RS;
            make_record(buf, r, s, off);
            tst_img_write(&img, off, RS, 0, 0); /* reserve, then overwrite with the record */
            memcpy(img.data + off, buf, RS);
        }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Part 3: ordered mode. The shared pointer is at start3. */
    {
        int64_t mine = start3, total3 = 0, mine4, total4 = 0;
        for (int r = 0; r < tst_rank; r++)
            mine += len3(r);
        for (int r = 0; r < tst_size; r++)
            total3 += len3(r);
        start4 = start3 + total3;
        mine4 = start4;
        for (int r = 0; r < tst_rank; r++)
            mine4 += len4(r);
        for (int r = 0; r < tst_size; r++)
            total4 += len4(r);

        tst_fill(buf, (size_t)len3(tst_rank), mine, tst_rank, 3);
        CHECK_MPI(MPI_File_write_ordered(fh, buf, (int)len3(tst_rank), MPI_BYTE, &st));
        expect_shared(fh, start4, "after write_ordered");
        tst_fill(buf, (size_t)len4(tst_rank), mine4, tst_rank, 4);
        CHECK_MPI(MPI_File_write_ordered_begin(fh, buf, (int)len4(tst_rank), MPI_BYTE));
        CHECK_MPI(MPI_File_write_ordered_end(fh, buf, &st));
        expect_shared(fh, start4 + total4, "after write_ordered_end");

        /* Read back in ordered mode (own data only: no sync needed). */
        CHECK_MPI(MPI_File_seek_shared(fh, start3, MPI_SEEK_SET));
        memset(buf, 0, sizeof buf);
        CHECK_MPI(MPI_File_read_ordered(fh, buf, (int)len3(tst_rank), MPI_BYTE, &st));
        CHECK(tst_status_bytes(&st) == len3(tst_rank), "read_ordered: %lld bytes",
              (long long)tst_status_bytes(&st));
        tst_verify(buf, (size_t)len3(tst_rank), mine, tst_rank, 3, "read_ordered");
        memset(buf, 0, sizeof buf);
        CHECK_MPI(MPI_File_read_ordered_begin(fh, buf, (int)len4(tst_rank), MPI_BYTE));
        CHECK_MPI(MPI_File_read_ordered_end(fh, buf, &st));
        tst_verify(buf, (size_t)len4(tst_rank), mine4, tst_rank, 4, "read_ordered_end");
        expect_shared(fh, start4 + total4, "after read_ordered_end");

        for (int r = 0, o3 = 0, o4 = 0; r < tst_size; r++) {
            tst_img_write(&img, start3 + o3, len3(r), r, 3);
            tst_img_write(&img, start4 + o4, len4(r), r, 4);
            o3 += (int)len3(r);
            o4 += (int)len4(r);
        }
    }
    CHECK_MPI(MPI_File_close(&fh));

    /* Part 4. */
    {
        int64_t end = img.size, mine = end, total = 0;
        MPI_Offset p = -1;
        for (int r = 0; r < tst_rank; r++)
            mine += len3(r);
        for (int r = 0; r < tst_size; r++)
            total += len3(r);
        tst_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh);
        CHECK_MPI(MPI_File_get_position(fh, &p));
        CHECK(p == end, "MPI_MODE_APPEND: individual pointer at %lld, expected the end %lld",
              (long long)p, (long long)end);
        expect_shared(fh, end, "MPI_MODE_APPEND: shared pointer");
        tst_fill(buf, (size_t)len3(tst_rank), mine, tst_rank, 6);
        CHECK_MPI(MPI_File_write_ordered(fh, buf, (int)len3(tst_rank), MPI_BYTE, &st));
        expect_shared(fh, end + total, "after write_ordered in append mode");
        CHECK_MPI(MPI_File_close(&fh));
        for (int r = 0, o = 0; r < tst_size; r++) {
            tst_img_write(&img, end + o, len3(r), r, 6);
            o += (int)len3(r);
        }
    }

    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    views_and_shared_fp(name);
    return tst_finalize();
}
