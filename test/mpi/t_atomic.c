/*
 * Atomic mode (MPI_File_set_atomicity). bblog drains on entering atomic mode and writes through
 * while it lasts (DESIGN.md section 3), so:
 *  - data logged before atomic mode and overwritten in atomic mode must not come back at the
 *    final drain (later wins across the mode switch);
 *  - in atomic mode a write completed before a barrier is seen by another rank's read after it,
 *    with no sync (MPI sequential consistency);
 *  - after atomic mode ends, logged writes again win over the atomic ones they overwrite.
 */
#include "common.h"

#define A ((int64_t)(64 * 1024))
#define T 4096

static void write_at(MPI_File fh, int64_t off, int64_t len, int writer, int gen, int coll)
{
    unsigned char *buf = malloc((size_t)len + 1);
    MPI_Status st;

    REQUIRE(buf, "out of memory");
    tst_fill(buf, (size_t)len, off, writer, gen);
    if (coll)
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, (int)len, MPI_BYTE, &st));
    else
        CHECK_MPI(MPI_File_write_at(fh, off, buf, (int)len, MPI_BYTE, &st));
    free(buf);
}

/* The writes of part 1 and 3 of rank r, applied to a model. */
static void model_own(struct tst_image *img, int r)
{
    tst_img_write(img, r * A, A, r, 0);
    tst_img_write(img, r * A + 1000, 2000, r, 1);
    for (int b = 0; b < 8; b++)
        tst_img_write(img, r * A + 4000 + b * 300, 100, r, 2);
    tst_img_write(img, r * A + 2000, 500, r, 3);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int64_t shared = tst_size * A;
    struct tst_image img;
    MPI_File fh;
    MPI_Status st;
    int flag = -1;

    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    write_at(fh, tst_rank * A, A, tst_rank, 0, 0); /* logged */

    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    CHECK_MPI(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "get_atomicity says %d after set_atomicity(true)", flag);

    write_at(fh, tst_rank * A + 1000, 2000, tst_rank, 1, 1); /* atomic, over logged gen 0 */
    {
        /* A strided atomic write: ROMIO locks the whole range for its read-modify-write. */
        MPI_Datatype v;
        unsigned char buf[800];
        struct tst_list fx = {0}, mx = {0};
        MPI_Type_vector(8, 100, 300, MPI_BYTE, &v);
        MPI_Type_commit(&v);
        CHECK_MPI(MPI_File_set_view(fh, tst_rank * A + 4000, MPI_BYTE, v, "native",
                                    MPI_INFO_NULL));
        for (int b = 0; b < 8; b++)
            tst_list_add(&fx, tst_rank * A + 4000 + b * 300, 100);
        tst_list_add(&mx, 0, 800);
        tst_stream_fill(buf, &mx, &fx, tst_rank, 2);
        CHECK_MPI(MPI_File_write_at(fh, 0, buf, 800, MPI_BYTE, &st));
        CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&v);
        tst_list_free(&fx);
        tst_list_free(&mx);
    }

    /* Turns over a shared region: write, barrier, the next rank reads (no sync). */
    for (int r = 0; r < tst_size; r++) {
        tst_img_write(&img, r * A, A, r, 0); /* gen 0 is part of the model read below */
        tst_img_write(&img, r * A + 1000, 2000, r, 1);
        for (int b = 0; b < 8; b++)
            tst_img_write(&img, r * A + 4000 + b * 300, 100, r, 2);
    }
    for (int k = 0; k < tst_size; k++) {
        int64_t off = shared + k * 100;
        if (tst_rank == k)
            write_at(fh, off, T, k, 10 + k, 0);
        tst_img_write(&img, off, T, k, 10 + k);
        MPI_Barrier(MPI_COMM_WORLD);
        if (tst_rank == (k + 1) % tst_size) {
            char what[80];
            snprintf(what, sizeof what, "atomic mode: rank %d reads after rank %d's write",
                     tst_rank, k);
            tst_read_expect(fh, shared, img.data + shared, img.size - shared, what);
            /* The peer's region: gen 0 was logged before atomic mode, which MPI alone would
             * only make visible after a sync; bblog drains on set_atomicity(true) (DESIGN.md
             * section 3), and on a plain file system it is there anyway. */
            tst_read_expect(fh, k * A, img.data + k * A, A, "peer region in atomic mode");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    CHECK_MPI(MPI_File_set_atomicity(fh, 0));
    CHECK_MPI(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "get_atomicity says %d after set_atomicity(false)", flag);
    write_at(fh, tst_rank * A + 2000, 500, tst_rank, 3, 0); /* logged, over atomic gen 1 */
    for (int r = 0; r < tst_size; r++)
        tst_img_write(&img, r * A + 2000, 500, r, 3);
    tst_read_expect(fh, tst_rank * A, img.data + tst_rank * A, A, "own region at the end");
    CHECK_MPI(MPI_File_close(&fh));

    {
        struct tst_image m;
        tst_img_init(&m);
        for (int r = 0; r < tst_size; r++)
            model_own(&m, r);
        for (int k = 0; k < tst_size; k++)
            tst_img_write(&m, shared + k * 100, T, k, 10 + k);
        tst_compare(m.data, img.data, (size_t)m.size, 0, "test bug: two models disagree");
        tst_img_free(&m);
    }
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    return tst_finalize();
}
