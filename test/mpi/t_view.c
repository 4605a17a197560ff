/*
 * File views with a displacement that is not aligned to anything and etypes other than bytes:
 *  view 1: etype = 3 ints (12 bytes), filetype = vector of 4 blocks of 2 etypes, resized so that
 *          the ranks' blocks interleave; written with explicit offsets, the individual pointer
 *          (seek in etype units), collective calls; get_position and get_byte_offset checked;
 *  view 2: etype = double, each rank a contiguous stretch at its own displacement, written in
 *          pieces out of order, read back with etype offsets.
 * The ranks' data tile both regions completely, so no hole is left beyond EOF.
 */
#include "common.h"

#define DISP0 1003   /* bytes; odd on purpose */
#define ESZ 12       /* etype size: 3 ints */
#define BLKE 2       /* etypes per block */
#define NBLK 4       /* blocks per tile */
#define NTILE 4      /* tiles written */
#define NE (NBLK * BLKE * NTILE) /* etypes per rank in view 1 */
#define ND 100       /* doubles per rank in view 2 */

static int64_t tile_bytes(void)
{
    return (int64_t)NBLK * BLKE * ESZ * tst_size;
}

/* Byte offset of etype k of rank r under view 1 (written out from the MPI definition). */
static int64_t v1_byte(int r, int64_t k)
{
    int64_t tile = k / (NBLK * BLKE), j = k % (NBLK * BLKE);

    return DISP0 + (int64_t)r * BLKE * ESZ + tile * tile_bytes() +
           (j / BLKE) * BLKE * ESZ * tst_size + (j % BLKE) * ESZ;
}

/* File extents of etypes [k0, k0 + n) of rank r under view 1. */
static void v1_extents(int r, int64_t k0, int64_t n, struct tst_list *fx)
{
    for (int64_t k = k0; k < k0 + n; k++)
        tst_list_add(fx, v1_byte(r, k), ESZ);
}

static int64_t v2_disp(int r)
{
    return DISP0 + NTILE * tile_bytes() + (int64_t)r * ND * 8;
}

/* Writes etypes [k0, k0+n) of view 1 with the given call kind; buffer filled for its target. */
enum how { AT, AT_ALL, PTR, PTR_ALL };

static void v1_write(MPI_File fh, int64_t k0, int64_t n, enum how how, MPI_Datatype mtype,
                     int msize)
{
    struct tst_list fx = {0}, mx = {0};
    unsigned char *buf = malloc((size_t)(n * ESZ));
    MPI_Status st;
    int count = (int)(n * ESZ / msize);

    REQUIRE(buf, "out of memory");
    v1_extents(tst_rank, k0, n, &fx);
    tst_list_add(&mx, 0, n * ESZ);
    tst_stream_fill(buf, &mx, &fx, tst_rank, 1);
    switch (how) {
    case AT: CHECK_MPI(MPI_File_write_at(fh, k0, buf, count, mtype, &st)); break;
    case AT_ALL: CHECK_MPI(MPI_File_write_at_all(fh, k0, buf, count, mtype, &st)); break;
    case PTR: CHECK_MPI(MPI_File_write(fh, buf, count, mtype, &st)); break;
    case PTR_ALL: CHECK_MPI(MPI_File_write_all(fh, buf, count, mtype, &st)); break;
    }
    CHECK(tst_status_bytes(&st) == n * ESZ, "view 1 write of etypes [%lld,+%lld): %lld bytes",
          (long long)k0, (long long)n, (long long)tst_status_bytes(&st));
    free(buf);
    tst_list_free(&fx);
    tst_list_free(&mx);
}

static void check_pos(MPI_File fh, MPI_Offset expect, const char *when)
{
    MPI_Offset pos = -1, byte = -1;

    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == expect, "%s: position %lld etypes, expected %lld", when, (long long)pos,
          (long long)expect);
    CHECK_MPI(MPI_File_get_byte_offset(fh, expect, &byte));
    CHECK(byte == v1_byte(tst_rank, expect), "%s: byte offset of etype %lld is %lld, expected "
          "%lld", when, (long long)expect, (long long)byte, (long long)v1_byte(tst_rank, expect));
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    MPI_Datatype etype, vec, ftype;
    struct tst_image img;
    MPI_File fh;
    MPI_Status st;

    MPI_Type_contiguous(3, MPI_INT, &etype);
    MPI_Type_commit(&etype);
    MPI_Type_vector(NBLK, BLKE, BLKE * tst_size, etype, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)tile_bytes(), &ftype);
    MPI_Type_commit(&ftype);

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_MPI(MPI_File_set_view(fh, DISP0 + (MPI_Offset)tst_rank * BLKE * ESZ, etype, ftype,
                                "native", MPI_INFO_NULL));
    {
        MPI_Offset d = -1;
        MPI_Datatype e, f;
        char rep[MPI_MAX_DATAREP_STRING + 1];
        int size = 0;
        CHECK_MPI(MPI_File_get_view(fh, &d, &e, &f, rep));
        CHECK(d == DISP0 + (MPI_Offset)tst_rank * BLKE * ESZ, "get_view displacement %lld",
              (long long)d);
        MPI_Type_size(e, &size);
        CHECK(size == ESZ, "get_view etype size %d", size);
        CHECK(strcmp(rep, "native") == 0, "get_view datarep '%s'", rep);
        MPI_Type_free(&e);
        MPI_Type_free(&f);
    }
    check_pos(fh, 0, "after set_view");
    v1_write(fh, 0, 5, AT, etype, ESZ);                   /* etypes 0..4 */
    check_pos(fh, 0, "after write_at");
    CHECK_MPI(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    v1_write(fh, 5, 11, PTR, MPI_INT, 4);                 /* etypes 5..15, counted in ints */
    check_pos(fh, 16, "after write through pointer");
    v1_write(fh, 16, 8, AT_ALL, etype, ESZ);              /* etypes 16..23 */
    check_pos(fh, 16, "after write_at_all");
    CHECK_MPI(MPI_File_seek(fh, 8, MPI_SEEK_CUR));
    v1_write(fh, 24, 8, PTR_ALL, etype, ESZ);             /* etypes 24..31 */
    check_pos(fh, 32, "after write_all");

    /* Read back all of view 1 as ints, collectively, before anything is synced. */
    {
        struct tst_list fx = {0}, mx = {0};
        unsigned char *rd = calloc(NE, ESZ);
        REQUIRE(rd, "out of memory");
        v1_extents(tst_rank, 0, NE, &fx);
        tst_list_add(&mx, 0, (int64_t)NE * ESZ);
        CHECK_MPI(MPI_File_read_at_all(fh, 0, rd, NE * 3, MPI_INT, &st));
        CHECK(tst_status_bytes(&st) == (int64_t)NE * ESZ, "view 1 read: %lld bytes",
              (long long)tst_status_bytes(&st));
        tst_stream_verify(rd, &mx, &fx, tst_rank, 1, "view 1 read-back");
        free(rd);
        tst_list_free(&fx);
        tst_list_free(&mx);
    }

    /* View 2: doubles, contiguous per rank, written out of order. */
    CHECK_MPI(MPI_File_set_view(fh, v2_disp(tst_rank), MPI_DOUBLE, MPI_DOUBLE, "native",
                                MPI_INFO_NULL));
    {
        MPI_Offset pos = -1, byte = -1;
        CHECK_MPI(MPI_File_get_position(fh, &pos));
        CHECK(pos == 0, "after second set_view: position %lld", (long long)pos);
        CHECK_MPI(MPI_File_get_byte_offset(fh, 7, &byte));
        CHECK(byte == v2_disp(tst_rank) + 56, "view 2: byte offset of etype 7 is %lld, "
              "expected %lld", (long long)byte, (long long)(v2_disp(tst_rank) + 56));
    }
    {
        static const int piece[3][2] = {{10, 20}, {0, 10}, {30, ND - 30}}; /* {first, count} */
        unsigned char buf[ND * 8], rd[ND * 8];
        for (int p = 0; p < 3; p++) {
            int64_t first = piece[p][0], n = piece[p][1];
            int64_t off = v2_disp(tst_rank) + first * 8;
            tst_fill(buf, (size_t)(n * 8), off, tst_rank, 2);
            if (p == 1)
                CHECK_MPI(MPI_File_write_at_all(fh, first, buf, (int)n, MPI_DOUBLE, &st));
            else
                CHECK_MPI(MPI_File_write_at(fh, first, buf, (int)n, MPI_DOUBLE, &st));
        }
        memset(rd, 0, sizeof rd);
        CHECK_MPI(MPI_File_read_at(fh, 5, rd, 30, MPI_DOUBLE, &st));
        CHECK(tst_status_bytes(&st) == 240, "view 2 read: %lld bytes",
              (long long)tst_status_bytes(&st));
        tst_verify(rd, 240, v2_disp(tst_rank) + 40, tst_rank, 2, "view 2 read_at(5, 30)");
        memset(rd, 0, sizeof rd);
        CHECK_MPI(MPI_File_read_at_all(fh, 0, rd, ND, MPI_DOUBLE, &st));
        tst_verify(rd, ND * 8, v2_disp(tst_rank), tst_rank, 2, "view 2 read_at_all");
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_img_init(&img);
    for (int r = 0; r < tst_size; r++) {
        struct tst_list fx = {0};
        v1_extents(r, 0, NE, &fx);
        tst_img_write_list(&img, &fx, r, 1);
        tst_list_free(&fx);
        tst_img_write(&img, v2_disp(r), ND * 8, r, 2);
    }
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
    MPI_Type_free(&etype);
    return tst_finalize();
}
