/*
 * Every call that reports or changes the file's extent or a pointer, on every rank, after every
 * kind of write: the checks a program makes after a resize (HDF5 compares the file's size with
 * its end of allocation at open and truncates at close, so a stale size is a wrong file).
 *
 * Each of ITERS rounds (TEST_ITERS, default 12) appends a region past the current end, every
 * rank a block of it, with one of four kinds of write (the round number picks it): small
 * independent writes (logged), small collective writes, and the same past bblog's
 * through-threshold (1 MiB and more: written straight to the PFS file by default, logged in
 * the background modes). Odd rounds look through a file view with a displacement. Then:
 *
 *   written  right after its own independent write a rank's get_size is at least its own
 *            end and at most the region's end (others may not have written yet);
 *   barrier  (rounds 0-3, 8-11, ...; the others go straight from their writes to the resize)
 *            after a barrier every rank's get_size is the region's end, as on a POSIX file
 *            system (and so with plain ROMIO); seek(0, MPI_SEEK_END), get_position and
 *            get_byte_offset agree with it; seek_shared(0, MPI_SEEK_END) and
 *            get_position_shared too; a read across the end returns the bytes up to it, a read
 *            at or past it nothing;
 *   shrink   set_size cuts the region (through the first block, through the last, or below it
 *            all, by round): at once, with no barrier, every rank sees the new size in all of
 *            the calls above, and no logged byte past it comes back in a read;
 *   grow     set_size past it: zeros after the cut, the new size everywhere;
 *   prealloc preallocate further: the new size everywhere; a smaller preallocation changes
 *            nothing.
 * The file is checked at the end against the image of what plain ROMIO leaves, and the runner
 * compares it byte for byte with the ufs run's. A race between one process's resize and
 * another's view of what it logged shows in some rounds only: ITERS rounds in one run make a
 * miss of such a race unlikely where a single round would pass by luck.
 */
#include "common.h"

#define SMALL 1000
#define LARGE ((1 << 20) + 1000)        /* past bblog_through_threshold (1m) */
#define DISP 512                        /* the file view's displacement, odd rounds */

static struct tst_image img;
static const char *fname;

static MPI_Offset size_of(MPI_File fh)
{
    MPI_Offset s = -1;

    CHECK_MPI(MPI_File_get_size(fh, &s));
    return s;
}

/* The individual and shared pointers at MPI_SEEK_END, through a view of displacement disp
 * (etype and filetype bytes). Collective (seek_shared). */
static void check_pointers(MPI_File fh, int64_t size, int64_t disp, const char *when, int round)
{
    MPI_Offset pos = -1, byte = -1, shpos = -1;

    CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == size - disp, "round %d, %s: seek(0, MPI_SEEK_END) then get_position %lld, "
          "expected %lld", round, when, (long long)pos, (long long)(size - disp));
    CHECK_MPI(MPI_File_get_byte_offset(fh, pos, &byte));
    CHECK(byte == size, "round %d, %s: get_byte_offset(%lld) %lld, expected %lld", round, when,
          (long long)pos, (long long)byte, (long long)size);
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    CHECK_MPI(MPI_File_get_position_shared(fh, &shpos));
    CHECK(shpos == size - disp, "round %d, %s: seek_shared(0, MPI_SEEK_END) then "
          "get_position_shared %lld, expected %lld", round, when, (long long)shpos,
          (long long)(size - disp));
}

/* A read across the end returns the bytes before it; reads at and past it return nothing. */
static void check_reads(MPI_File fh, int64_t size, int64_t disp, const char *when, int round)
{
    unsigned char buf[64];
    int64_t from = size - 10;
    MPI_Status st;

    memset(buf, 0xA5, sizeof buf);
    CHECK_MPI(MPI_File_read_at(fh, from - disp, buf, sizeof buf, MPI_BYTE, &st));
    CHECK(tst_status_bytes(&st) == size - from, "round %d, %s: read_at(%lld, %d) across the "
          "end %lld returned %lld bytes", round, when, (long long)(from - disp), (int)sizeof buf,
          (long long)size, (long long)tst_status_bytes(&st));
    tst_compare(buf, img.data + from, (size_t)(size - from), from, when);
    CHECK_MPI(MPI_File_read_at(fh, size - disp, buf, sizeof buf, MPI_BYTE, &st));
    CHECK(tst_status_bytes(&st) == 0, "round %d, %s: read_at the end %lld returned %lld bytes",
          round, when, (long long)size, (long long)tst_status_bytes(&st));
    CHECK_MPI(MPI_File_read_at(fh, size - disp + 4096, buf, sizeof buf, MPI_BYTE, &st));
    CHECK(tst_status_bytes(&st) == 0, "round %d, %s: read_at past the end %lld returned %lld "
          "bytes", round, when, (long long)size, (long long)tst_status_bytes(&st));
}

/* Everything a rank can ask about the extent, against the size every rank must see. */
static void check_all(MPI_File fh, int64_t size, int64_t disp, const char *when, int round)
{
    MPI_Offset s = size_of(fh);

    CHECK(s == size, "round %d, %s: get_size %lld, expected %lld", round, when, (long long)s,
          (long long)size);
    check_pointers(fh, size, disp, when, round);
    check_reads(fh, size, disp, when, round);
}

static void round_of(MPI_File fh, int round, int64_t *size)
{
    int kind = round % 4, coll = kind & 1, straight = (round / 4) % 2;
    int64_t len = kind >= 2 ? LARGE : SMALL;
    int64_t disp = round % 2 ? DISP : 0;
    int64_t base = *size + (round % 3) * 777;   /* a hole before the region, some rounds */
    int64_t mine = base + (int64_t)tst_rank * len, end = base + (int64_t)tst_size * len;
    int64_t cut, grow, pre;
    unsigned char *buf = malloc((size_t)len);
    MPI_Status st;

    REQUIRE(buf, "out of memory");
    CHECK_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    tst_fill(buf, (size_t)len, mine, tst_rank, round);
    if (coll)
        CHECK_MPI(MPI_File_write_at_all(fh, mine - disp, buf, (int)len, MPI_BYTE, &st));
    else
        CHECK_MPI(MPI_File_write_at(fh, mine - disp, buf, (int)len, MPI_BYTE, &st));
    free(buf);
    for (int r = 0; r < tst_size; r++)
        tst_img_write(&img, base + (int64_t)r * len, len, r, round);
    if (!coll) {
        MPI_Offset s = size_of(fh);
        CHECK(s >= mine + len && s <= end, "round %d, written: get_size %lld not in "
              "[own end %lld, region end %lld]", round, (long long)s, (long long)(mine + len),
              (long long)end);
    }
    if (!straight) {
        MPI_Barrier(MPI_COMM_WORLD);
        check_all(fh, end, disp, "after the writes and a barrier", round);
    }

    /* Through the first block, through the last one, or below the whole region. */
    cut = round % 3 == 0 ? base + len / 2 : round % 3 == 1 ? end - len / 2 : base - 100;
    REQUIRE(cut - 10 >= disp, "round %d: cut %lld before the view", round, (long long)cut);
    CHECK_MPI(MPI_File_set_size(fh, cut));
    tst_img_set_size(&img, cut);
    check_all(fh, cut, disp, "right after set_size down", round);

    grow = cut + 3000;
    CHECK_MPI(MPI_File_set_size(fh, grow));
    tst_img_set_size(&img, grow);
    check_all(fh, grow, disp, "right after set_size up", round);
    tst_read_expect(fh, cut - 10 - disp, img.data + cut - 10, 110, "the zeros after the cut");

    pre = grow + 5000;
    CHECK_MPI(MPI_File_preallocate(fh, pre));
    tst_img_set_size(&img, pre);
    check_all(fh, pre, disp, "right after preallocate", round);
    CHECK_MPI(MPI_File_preallocate(fh, 10));
    check_all(fh, pre, disp, "after a smaller preallocate", round);
    *size = pre;
    MPI_Barrier(MPI_COMM_WORLD);        /* nobody writes the next region before all looked */
}

int main(int argc, char **argv)
{
    const char *it = getenv("TEST_ITERS");
    int iters = it ? atoi(it) : 12;
    int64_t size = 0;
    MPI_File fh;

    fname = tst_init(&argc, &argv);
    REQUIRE(iters > 0, "TEST_ITERS=%s: expected a positive number", it);
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    {
        MPI_Offset s = size_of(fh);
        CHECK(s == 0, "new file: get_size %lld", (long long)s);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < iters; round++)
        round_of(fh, round, &size);
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, fname, &img);
    tst_img_free(&img);
    return tst_finalize();
}
