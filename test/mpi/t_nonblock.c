/*
 * Nonblocking and split-collective writes: they complete when the data is in the log (DESIGN.md
 * section 3), so after MPI_Wait/MPI_Test the user buffer is overwritten and must not matter.
 *  0. four iwrite_at outstanding at once, then one over them after completion (later wins);
 *  1. two iwrite through the individual pointer, completed by MPI_Test polling;
 *  2. two iwrite_at_all outstanding at once;
 *  3. iwrite_all through the individual pointer;
 *  4. write_all_begin/end;  5. write_at_all_begin/end;
 *  6. iwrite_at_all through a strided view (ranks interleaved);
 * then read back with iread_at_all / iread_at before close.
 * On Open MPI the plain ROMIO leg (the reference) cannot make nonblocking collective calls (see
 * icoll_blocking): there they are blocking collectives wrapped in a completed request.
 */
#include "common.h"

#define S ((int64_t)(32 * 1024 + 11))
#define NPH 6
#define VB 1024
#define VN 32

static int64_t base(int ph, int r)
{
    return ((int64_t)ph * tst_size + r) * S;
}

static int64_t vbase(void)
{
    return (int64_t)NPH * tst_size * S;
}

/* Open MPI 4.1's ROMIO 3.2.1 is configured without --enable-grequest-extensions (Open MPI's
 * default, Debian's build too): adio/include/adioi.h then defines ADIOI_GEN_IwriteStridedColl
 * and ADIOI_GEN_IreadStridedColl as NULL, which is what the ufs and nfs tables hold, and
 * MPIOI_File_iwrite_all / MPIOI_File_iread_all (mpi-io/iwrite_all.c, iread_all.c) call through
 * it: MPI_File_iwrite_at_all, iwrite_all and iread_at_all crash with SIGSEGV at address 0 on
 * plain ROMIO. MPICH 4's ROMIO always has them. bblog implements them itself (a collective call
 * and a completed request, ad_bblog_write.c and ad_bblog_read.c), so its legs use them on both
 * MPIs; only Open MPI's plain leg makes the blocking collective call instead (same file). */
static int icoll_blocking;

static int done_query(void *extra, MPI_Status *s)
{
    MPI_Status_set_elements_x(s, MPI_BYTE, *(MPI_Count *)extra);
    MPI_Status_set_cancelled(s, 0);
    s->MPI_SOURCE = MPI_UNDEFINED;
    s->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int done_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static int done_cancel(void *extra, int complete)
{
    return MPI_SUCCESS;
}

/* A completed request whose status says what st says. */
static void done_request(const MPI_Status *st, MPI_Request *rq)
{
    MPI_Count *n = malloc(sizeof *n);

    REQUIRE(n, "out of memory");
    CHECK_MPI(MPI_Get_elements_x(st, MPI_BYTE, n));
    CHECK_MPI(MPI_Grequest_start(done_query, done_free, done_cancel, n, rq));
    CHECK_MPI(MPI_Grequest_complete(*rq));
}

static int iwrite_at_all(MPI_File fh, MPI_Offset off, const void *buf, int n, MPI_Request *rq)
{
    MPI_Status st;
    int rc;

    if (!icoll_blocking)
        return MPI_File_iwrite_at_all(fh, off, buf, n, MPI_BYTE, rq);
    rc = MPI_File_write_at_all(fh, off, buf, n, MPI_BYTE, &st);
    if (rc == MPI_SUCCESS)
        done_request(&st, rq);
    return rc;
}

static int iwrite_all(MPI_File fh, const void *buf, int n, MPI_Request *rq)
{
    MPI_Status st;
    int rc;

    if (!icoll_blocking)
        return MPI_File_iwrite_all(fh, buf, n, MPI_BYTE, rq);
    rc = MPI_File_write_all(fh, buf, n, MPI_BYTE, &st);
    if (rc == MPI_SUCCESS)
        done_request(&st, rq);
    return rc;
}

static int iread_at_all(MPI_File fh, MPI_Offset off, void *buf, int n, MPI_Request *rq)
{
    MPI_Status st;
    int rc;

    if (!icoll_blocking)
        return MPI_File_iread_at_all(fh, off, buf, n, MPI_BYTE, rq);
    rc = MPI_File_read_at_all(fh, off, buf, n, MPI_BYTE, &st);
    if (rc == MPI_SUCCESS)
        done_request(&st, rq);
    return rc;
}

/* Completes n requests by polling each with MPI_Test; returns the statuses in sts.
 * (Not MPI_Testall: MPICH 4.0.2 intermittently fails the assertion `ref_count >= 0` in
 * mpir_request.h when MPI_Testall polls ROMIO's generalized requests, even on plain ufs.) */
static void wait_polling(MPI_Request *rq, int n, MPI_Status *sts)
{
    for (int i = 0; i < n; i++) {
        int done = 0;
        while (!done)
            CHECK_MPI(MPI_Test(&rq[i], &done, &sts[i]));
    }
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *b[NPH + 1];
    MPI_Request rq[4];
    MPI_Status sts[4], st;
    struct tst_image img;
    MPI_File fh;
    int64_t q = S / 4;

    for (int i = 0; i <= NPH; i++) {
        b[i] = malloc(S > VB * VN ? S : VB * VN);
        REQUIRE(b[i], "out of memory");
    }
    icoll_blocking = tst_mpi_is_ompi() && !tst_is_bblog(name);
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    /* 0 */
    tst_fill(b[0], S, base(0, tst_rank), tst_rank, 0);
    for (int k = 0; k < 4; k++) {
        int64_t len = k == 3 ? S - 3 * q : q;
        CHECK_MPI(MPI_File_iwrite_at(fh, base(0, tst_rank) + k * q, b[0] + k * q, (int)len,
                                     MPI_BYTE, &rq[k]));
    }
    CHECK_MPI(MPI_Waitall(4, rq, sts));
    for (int k = 0; k < 4; k++)
        CHECK(tst_status_bytes(&sts[k]) == (k == 3 ? S - 3 * q : q), "iwrite_at %d: %lld bytes",
              k, (long long)tst_status_bytes(&sts[k]));
    memset(b[0], 0xEE, S);
    tst_fill(b[0], 1000, base(0, tst_rank) + S / 8, tst_rank, 10);
    CHECK_MPI(MPI_File_iwrite_at(fh, base(0, tst_rank) + S / 8, b[0], 1000, MPI_BYTE, &rq[0]));
    CHECK_MPI(MPI_Wait(&rq[0], &st));
    memset(b[0], 0xEE, 1000);

    /* 1 */
    tst_fill(b[1], S, base(1, tst_rank), tst_rank, 1);
    CHECK_MPI(MPI_File_seek(fh, base(1, tst_rank), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_iwrite(fh, b[1], (int)(S / 2), MPI_BYTE, &rq[0]));
    CHECK_MPI(MPI_File_iwrite(fh, b[1] + S / 2, (int)(S - S / 2), MPI_BYTE, &rq[1]));
    wait_polling(rq, 2, sts);
    CHECK(tst_status_bytes(&sts[0]) + tst_status_bytes(&sts[1]) == S, "two iwrite: %lld bytes",
          (long long)(tst_status_bytes(&sts[0]) + tst_status_bytes(&sts[1])));
    memset(b[1], 0xEE, S);
    {
        MPI_Offset p = -1;
        CHECK_MPI(MPI_File_get_position(fh, &p));
        CHECK(p == base(1, tst_rank) + S, "pointer after two iwrite: %lld, expected %lld",
              (long long)p, (long long)(base(1, tst_rank) + S));
    }

    /* 2 */
    tst_fill(b[2], S, base(2, tst_rank), tst_rank, 2);
    CHECK_MPI(iwrite_at_all(fh, base(2, tst_rank), b[2], (int)(S / 3), &rq[0]));
    CHECK_MPI(iwrite_at_all(fh, base(2, tst_rank) + S / 3, b[2] + S / 3, (int)(S - S / 3),
                            &rq[1]));
    CHECK_MPI(MPI_Waitall(2, rq, sts));
    CHECK(tst_status_bytes(&sts[1]) == S - S / 3, "second iwrite_at_all: %lld bytes",
          (long long)tst_status_bytes(&sts[1]));
    memset(b[2], 0xEE, S);

    /* 3 */
    tst_fill(b[3], S, base(3, tst_rank), tst_rank, 3);
    CHECK_MPI(MPI_File_seek(fh, base(3, tst_rank), MPI_SEEK_SET));
    CHECK_MPI(iwrite_all(fh, b[3], (int)S, &rq[0]));
    CHECK_MPI(MPI_Wait(&rq[0], &st));
    memset(b[3], 0xEE, S);

    /* 4 */
    tst_fill(b[4], S, base(4, tst_rank), tst_rank, 4);
    CHECK_MPI(MPI_File_seek(fh, base(4, tst_rank), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_write_all_begin(fh, b[4], (int)S, MPI_BYTE));
    CHECK_MPI(MPI_File_write_all_end(fh, b[4], &st));
    CHECK(tst_status_bytes(&st) == S, "write_all_end: %lld bytes",
          (long long)tst_status_bytes(&st));
    memset(b[4], 0xEE, S);

    /* 5 */
    tst_fill(b[5], S, base(5, tst_rank), tst_rank, 5);
    CHECK_MPI(MPI_File_write_at_all_begin(fh, base(5, tst_rank), b[5], (int)S, MPI_BYTE));
    CHECK_MPI(MPI_File_write_at_all_end(fh, b[5], &st));
    memset(b[5], 0xEE, S);

    /* 6 */
    {
        MPI_Datatype v, vr;
        struct tst_list fx = {0}, mx = {0};
        MPI_Type_vector(VN, VB, VB * tst_size, MPI_BYTE, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)VN * VB * tst_size, &vr);
        MPI_Type_commit(&vr);
        for (int i = 0; i < VN; i++)
            tst_list_add(&fx, vbase() + (int64_t)tst_rank * VB + (int64_t)i * VB * tst_size,
                         VB);
        tst_list_add(&mx, 0, VN * VB);
        tst_stream_fill(b[6], &mx, &fx, tst_rank, 6);
        CHECK_MPI(MPI_File_set_view(fh, vbase() + (MPI_Offset)tst_rank * VB, MPI_BYTE, vr,
                                    "native", MPI_INFO_NULL));
        CHECK_MPI(iwrite_at_all(fh, 0, b[6], VN * VB, &rq[0]));
        CHECK_MPI(MPI_Wait(&rq[0], &st));
        memset(b[6], 0xEE, VN * VB);
        CHECK_MPI(iread_at_all(fh, 0, b[6], VN * VB, &rq[0]));
        CHECK_MPI(MPI_Wait(&rq[0], &st));
        tst_stream_verify(b[6], &mx, &fx, tst_rank, 6, "iread_at_all through strided view");
        CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&v);
        MPI_Type_free(&vr);
        tst_list_free(&fx);
        tst_list_free(&mx);
    }

    /* Read back phases 0..5. */
    for (int r = 0; r < tst_size; r++) {
        for (int ph = 0; ph < NPH; ph++)
            tst_img_write(&img, base(ph, r), S, r, ph);
        tst_img_write(&img, base(0, r) + S / 8, 1000, r, 10);
        for (int i = 0; i < VN; i++)
            tst_img_write(&img, vbase() + (int64_t)r * VB + (int64_t)i * VB * tst_size, VB, r, 6);
    }
    for (int ph = 0; ph < NPH; ph++) {
        memset(b[ph], 0, S);
        if (ph % 2)
            CHECK_MPI(iread_at_all(fh, base(ph, tst_rank), b[ph], (int)S, &rq[0]));
        else
            CHECK_MPI(MPI_File_iread_at(fh, base(ph, tst_rank), b[ph], (int)S, MPI_BYTE, &rq[0]));
        CHECK_MPI(MPI_Wait(&rq[0], &st));
        tst_compare(b[ph], img.data + base(ph, tst_rank), S, base(ph, tst_rank),
                    "nonblocking read-back");
    }
    CHECK_MPI(MPI_File_close(&fh));

    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    for (int i = 0; i <= NPH; i++)
        free(b[i]);
    return tst_finalize();
}
