/*
 * Overlapping writes.
 * Part 1: each rank rewrites parts of its own region many times, across calls (MPI forbids
 *   overlap within one call's file type): nested, partially overlapping at either end, exact
 *   repeats, single bytes, a strided view over everything, independent and collective, and more
 *   after a sync (new data over drained data). The later write wins (DESIGN.md section 3).
 * Part 2: the ranks take turns over one shared region; between turns all ranks do
 *   MPI_File_sync, MPI_Barrier, MPI_File_sync, after which the next rank must read exactly what
 *   the model says (another process's data is visible after sync-barrier-sync).
 * Part 3: the file is reopened (no MPI_MODE_CREATE) and each rank overwrites a stretch that
 *   straddles its neighbour's region and the shared region (new logs over an existing file).
 */
#include "common.h"

#define R ((int64_t)(64 * 1024 + 123)) /* own region per rank */
#define L ((int64_t)(32 * 1024))       /* shared region */

enum kind { IND, COLL };
struct op {
    int gen;
    enum kind kind;
    int64_t off, len; /* relative to the rank's region */
};

/* Part 1, before the sync. */
static const struct op ops1[] = {
    {0, IND, 0, R},          /* everything */
    {1, IND, 1000, 4000},    /* [1000, 5000) */
    {2, IND, 4000, 100},     /* inside gen 1 */
    {3, COLL, 4050, 4950},   /* over the tail of gen 2 and gen 1, and beyond */
    {5, IND, 0, 10},         /* first bytes */
    {5, IND, R - 10, 10},    /* last bytes */
    {6, COLL, 4000, 100},    /* exact repeat of gen 2's range */
    {7, IND, 2000, 1},       /* one byte */
    {8, COLL, 0, 0},         /* nothing, collectively */
};
/* Part 1, after the sync. */
static const struct op ops2[] = {
    {9, IND, 500, 1000},
    {10, COLL, 4090, 20},
    {11, IND, 499, 1002},    /* covers gen 9 by one byte at each end */
};
#define N1 ((int)(sizeof ops1 / sizeof ops1[0]))
#define N2 ((int)(sizeof ops2 / sizeof ops2[0]))

/* Gen 4: a strided view starting at 3000, 100 blocks of 10 bytes every 50 bytes. */
#define SV_OFF 3000
#define SV_N 100
#define SV_B 10
#define SV_S 50
#define SV_GEN 4

static void do_op(MPI_File fh, const struct op *o, unsigned char *buf)
{
    int64_t off = tst_rank * R + o->off;
    MPI_Status st;

    tst_fill(buf, (size_t)o->len, off, tst_rank, o->gen);
    if (o->kind == IND)
        CHECK_MPI(MPI_File_write_at(fh, off, buf, (int)o->len, MPI_BYTE, &st));
    else
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, (int)o->len, MPI_BYTE, &st));
    memset(buf, 0xEE, (size_t)o->len);
}

static void img_op(struct tst_image *img, int rank, const struct op *o)
{
    tst_img_write(img, rank * R + o->off, o->len, rank, o->gen);
}

static void img_strided(struct tst_image *img, int rank)
{
    for (int i = 0; i < SV_N; i++)
        tst_img_write(img, rank * R + SV_OFF + (int64_t)i * SV_S, SV_B, rank, SV_GEN);
}

/* Part 2: the range rank k writes in its turn, relative to the shared region. */
static void turn_range(int k, int64_t *off, int64_t *len)
{
    *off = (k * L / 8) % (L / 2);
    *len = L / 2 + (k * 100) % (L / 4);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(R);
    struct tst_image img, mine;
    MPI_File fh;
    MPI_Status st;
    int64_t shared = tst_size * R;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    tst_img_init(&mine);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    /* Part 1. `mine` models this rank's region at the same offsets as the file. */
    for (int i = 0; i < N1; i++) {
        do_op(fh, &ops1[i], buf);
        img_op(&mine, tst_rank, &ops1[i]);
        if (ops1[i].gen == 3) {
            MPI_Datatype v;
            MPI_Type_vector(SV_N, SV_B, SV_S, MPI_BYTE, &v);
            MPI_Type_commit(&v);
            CHECK_MPI(MPI_File_set_view(fh, tst_rank * R + SV_OFF, MPI_BYTE, v, "native",
                                        MPI_INFO_NULL));
            struct tst_list fx = {0}, mx = {0};
            for (int b = 0; b < SV_N; b++)
                tst_list_add(&fx, tst_rank * R + SV_OFF + (int64_t)b * SV_S, SV_B);
            tst_list_add(&mx, 0, SV_N * SV_B);
            tst_stream_fill(buf, &mx, &fx, tst_rank, SV_GEN);
            CHECK_MPI(MPI_File_write_at(fh, 0, buf, SV_N * SV_B, MPI_BYTE, &st));
            CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
            MPI_Type_free(&v);
            tst_list_free(&fx);
            tst_list_free(&mx);
            img_strided(&mine, tst_rank);
        }
    }
    tst_read_expect(fh, tst_rank * R, mine.data + tst_rank * R, R, "own region before sync");
    CHECK_MPI(MPI_File_sync(fh));
    for (int i = 0; i < N2; i++) {
        do_op(fh, &ops2[i], buf);
        img_op(&mine, tst_rank, &ops2[i]);
    }
    tst_read_expect(fh, tst_rank * R, mine.data + tst_rank * R, R, "own region after sync");

    /* The global model of part 1. */
    for (int r = 0; r < tst_size; r++) {
        for (int i = 0; i < N1; i++) {
            img_op(&img, r, &ops1[i]);
            if (ops1[i].gen == 3)
                img_strided(&img, r);
        }
        for (int i = 0; i < N2; i++)
            img_op(&img, r, &ops2[i]);
    }

    /* Part 2: turns over the shared region. */
    for (int k = 0; k < tst_size; k++) {
        int64_t off, len;
        turn_range(k, &off, &len);
        if (tst_rank == k) {
            tst_fill(buf, (size_t)len, shared + off, k, 20 + k);
            if (k % 2)
                CHECK_MPI(MPI_File_write_at(fh, shared + off, buf, (int)len, MPI_BYTE, &st));
            else
                CHECK_MPI(MPI_File_write_at_all(fh, shared + off, buf, (int)len, MPI_BYTE, &st));
        } else if (k % 2 == 0) {
            CHECK_MPI(MPI_File_write_at_all(fh, shared + off, buf, 0, MPI_BYTE, &st));
        }
        tst_img_write(&img, shared + off, len, k, 20 + k);
        CHECK_MPI(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPI_File_sync(fh));
        if (tst_rank == (k + 1) % tst_size) {
            char what[80];
            int64_t end = img.size - shared;
            snprintf(what, sizeof what, "shared region read by rank %d after turn of rank %d",
                     tst_rank, k);
            tst_read_expect(fh, shared, img.data + shared, end, what);
        }
    }
    /* Every rank has written into the shared region in its turn and later turns overwrote parts
     * of it: what each rank reads now is the last writer's data, not its own earlier (drained)
     * bytes. */
    tst_read_expect(fh, shared, img.data + shared, img.size - shared,
                    "shared region read by everyone after all turns");
    /* Everyone's part 1 regions are visible to everyone now, too. */
    {
        int peer = (tst_rank + tst_size - 1) % tst_size;
        tst_read_expect(fh, peer * R, img.data + peer * R, R, "peer region after syncs");
    }
    CHECK_MPI(MPI_File_close(&fh));

    /* Part 3: rank r rewrites [r*R + R/2, (r+1)*R + R/4), within the file's current size. */
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    {
        int64_t off = tst_rank * R + R / 2, len = R / 2 + R / 4;
        tst_fill(buf, (size_t)len, off, tst_rank, 40);
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, (int)len, MPI_BYTE, &st));
        for (int r = 0; r < tst_size; r++)
            tst_img_write(&img, r * R + R / 2, R / 2 + R / 4, r, 40);
        tst_read_expect(fh, off, img.data + off, len, "own rewrite after reopen");
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    tst_img_free(&mine);
    free(buf);
    return tst_finalize();
}
