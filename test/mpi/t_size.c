/*
 * MPI_File_get_size, MPI_File_set_size and MPI_File_preallocate around buffered writes.
 * get_size is not collective: with bblog it is max(PFS size, end of this process's logged data)
 * (DESIGN.md section 3). So after all ranks wrote and before any sync, each rank must see at
 * least its own end and at most the global end; after sync-barrier-sync, the global end.
 * set_size drains first: logged data beyond a new, smaller size is cut, data below it kept, and
 * growing the file exposes zeros. preallocate grows the file with zeros and keeps logged data.
 */
#include "common.h"

#define B ((int64_t)100000)

static int64_t own_end(int r)
{
    return r * B + B - 7 * r;
}

static MPI_Offset size_of(MPI_File fh)
{
    MPI_Offset s = -1;

    CHECK_MPI(MPI_File_get_size(fh, &s));
    return s;
}

static void write_at(MPI_File fh, int64_t off, int64_t len, int gen, struct tst_image *img)
{
    unsigned char *buf = malloc((size_t)len);
    MPI_Status st;

    REQUIRE(buf, "out of memory");
    tst_fill(buf, (size_t)len, off, tst_rank, gen);
    CHECK_MPI(MPI_File_write_at(fh, off, buf, (int)len, MPI_BYTE, &st));
    free(buf);
    tst_img_write(img, off, len, tst_rank, gen);
}

/* Everyone tells everyone about a write made by `rank`, so all models stay equal. */
static void model_write(struct tst_image *img, int rank, int64_t off, int64_t len, int gen)
{
    if (rank != tst_rank)
        tst_img_write(img, off, len, rank, gen);
}

static void expect_size(MPI_File fh, int64_t expect, const char *when)
{
    MPI_Offset s = size_of(fh);

    CHECK(s == expect, "%s: get_size %lld, expected %lld", when, (long long)s,
          (long long)expect);
}

/* Collective form: nobody writes again before everyone has looked (on a plain file system the
 * writes of others show up in get_size at once). */
static void expect_size_all(MPI_File fh, int64_t expect, const char *when)
{
    expect_size(fh, expect, when);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int last = tst_size - 1;
    int64_t gend = own_end(last), s1, s2;
    struct tst_image img;
    MPI_File fh;

    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect_size_all(fh, 0, "new file");

    write_at(fh, tst_rank * B, own_end(tst_rank) - tst_rank * B, 0, &img);
    {
        MPI_Offset s = size_of(fh);
        CHECK(s >= own_end(tst_rank), "own write, before barrier: get_size %lld < own end %lld",
              (long long)s, (long long)own_end(tst_rank));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        MPI_Offset s = size_of(fh);
        CHECK(s >= own_end(tst_rank) && s <= gend,
              "all wrote, before sync: get_size %lld not in [own end %lld, global end %lld]",
              (long long)s, (long long)own_end(tst_rank), (long long)gend);
    }
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_size_all(fh, gend, "after sync and barrier");
    for (int r = 0; r < tst_size; r++)
        model_write(&img, r, r * B, own_end(r) - r * B, 0);

    /* Shrink: cuts everybody's data. */
    s1 = gend / 2 + 3;
    CHECK_MPI(MPI_File_set_size(fh, s1));
    tst_img_set_size(&img, s1);
    expect_size_all(fh, s1, "after set_size down");

    /* Rank 0 logs a write beyond s1 + 2000, then the file is cut to s1 + 2000: the logged data
     * lies wholly beyond the new end and must not come back. */
    if (tst_rank == 0)
        write_at(fh, s1 + 5000, 1000, 1, &img);
    model_write(&img, 0, s1 + 5000, 1000, 1);
    CHECK_MPI(MPI_File_set_size(fh, s1 + 2000));
    tst_img_set_size(&img, s1 + 2000);
    expect_size_all(fh, s1 + 2000, "after set_size below logged data");

    /* The last rank logs a write straddling the end; growing the file keeps it. */
    if (tst_rank == last) {
        write_at(fh, s1 + 1000, 2000, 2, &img);
        expect_size(fh, s1 + 3000, "own view after straddling write");
    }
    model_write(&img, last, s1 + 1000, 2000, 2);
    s2 = s1 + 10000;
    CHECK_MPI(MPI_File_set_size(fh, s2));
    tst_img_set_size(&img, s2);
    expect_size_all(fh, s2, "after set_size up");
    tst_read_expect(fh, s1 - 100, img.data + s1 - 100, s2 - s1 + 100, "after set_size up");

    /* Cut through the middle of that write. */
    CHECK_MPI(MPI_File_set_size(fh, s1 + 2500));
    tst_img_set_size(&img, s1 + 2500);
    expect_size_all(fh, s1 + 2500, "after set_size through logged data");

    /* Preallocate grows the file (zeros); a smaller preallocation changes nothing. */
    if (tst_rank == 0)
        write_at(fh, 100, 100, 3, &img);
    model_write(&img, 0, 100, 100, 3);
    CHECK_MPI(MPI_File_preallocate(fh, s1 + 20000));
    tst_img_set_size(&img, s1 + 20000);
    expect_size_all(fh, s1 + 20000, "after preallocate up");
    CHECK_MPI(MPI_File_preallocate(fh, 10));
    expect_size_all(fh, s1 + 20000, "after preallocate below size");
    /* Rank 0's logged bytes at [100, 200) survive preallocation (ROMIO rewrites existing bytes
     * on one rank only). Rank 0 sees them at once; the others only after sync-barrier-sync:
     * preallocate is not a sync in MPI, and bblog cannot drain there (ROMIO calls the driver on
     * one rank alone, see ad_bblog_fcntl.c). */
    if (tst_rank == 0)
        tst_read_expect(fh, 0, img.data, 1000, "head after preallocate, own data");
    tst_read_expect(fh, s1, img.data + s1, 20000, "tail after preallocate");
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    tst_read_expect(fh, 0, img.data, 1000, "head after preallocate and sync-barrier-sync");

    /* Buffered writes past the end by every rank, then the view of each. */
    write_at(fh, s1 + 20000 + tst_rank * 1000, 500, 4, &img);
    {
        /* Others may be writing too: at least this rank's end, at most the last one's. */
        MPI_Offset s = size_of(fh);
        int64_t mine = s1 + 20000 + tst_rank * 1000 + 500, all = s1 + 20000 + last * 1000 + 500;
        CHECK(s >= mine && s <= all, "after own write past end: get_size %lld not in [%lld, %lld]",
              (long long)s, (long long)mine, (long long)all);
    }
    for (int r = 0; r < tst_size; r++)
        model_write(&img, r, s1 + 20000 + r * 1000, 500, 4);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_size_all(fh, s1 + 20000 + last * 1000 + 500, "final, after sync and barrier");
    {
        /* MPI_SEEK_END of the individual pointer is relative to the same size. */
        MPI_Offset p = -1;
        CHECK_MPI(MPI_File_seek(fh, -10, MPI_SEEK_END));
        CHECK_MPI(MPI_File_get_position(fh, &p));
        CHECK(p == s1 + 20000 + last * 1000 + 490, "seek(-10, MPI_SEEK_END): position %lld",
              (long long)p);
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    return tst_finalize();
}
