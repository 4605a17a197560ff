/*
 * Noncontiguous memory and file datatypes: vector (resized, tiled), subarray with a halo in
 * memory, darray (block-cyclic), hindexed with zero-length blocks on both sides (memory side
 * not monotone), struct with holes in memory, and struct memory against a vector file type
 * written independently (ROMIO's data-sieving path). Each case has its own file region. The
 * file is first filled with background data (see tst_background) so that holes are defined.
 *
 * The oracle flattens every type by hand (lists of byte extents), so it does not depend on the
 * MPI under test: memory byte m that lands at file offset f holds pattern(f, rank, gen). Reads
 * go back through the same view and memory type and must leave memory holes untouched.
 */
#include "common.h"

#define HOLE 0x5A

struct ncase {
    const char *label;
    MPI_Offset disp;
    MPI_Datatype etype, ftype, mtype;
    int mcount;
    int coll;
    struct tst_list memx, filex;
};

/* Writes and reads back one case through its view, then restores the byte view. */
static void run_case(MPI_File fh, struct ncase *c, int gen)
{
    int64_t msize = 0;
    unsigned char *wbuf, *rbuf, *mask;
    MPI_Status st;
    int64_t nbytes = tst_list_bytes(&c->filex);

    for (size_t i = 0; i < c->memx.n; i++)
        if (c->memx.e[i].off + c->memx.e[i].len > msize)
            msize = c->memx.e[i].off + c->memx.e[i].len;
    wbuf = malloc((size_t)msize + 1);
    rbuf = malloc((size_t)msize + 1);
    mask = calloc((size_t)msize + 1, 1);
    REQUIRE(wbuf && rbuf && mask, "out of memory");
    memset(wbuf, 0xEE, (size_t)msize); /* holes hold bytes that must never reach the file */
    tst_stream_fill(wbuf, &c->memx, &c->filex, tst_rank, gen);

    CHECK_MPI(MPI_File_set_view(fh, c->disp, c->etype, c->ftype, "native", MPI_INFO_NULL));
    if (c->coll)
        CHECK_MPI(MPI_File_write_at_all(fh, 0, wbuf, c->mcount, c->mtype, &st));
    else
        CHECK_MPI(MPI_File_write_at(fh, 0, wbuf, c->mcount, c->mtype, &st));
    CHECK(tst_status_bytes(&st) == nbytes, "%s: write moved %lld bytes, expected %lld",
          c->label, (long long)tst_status_bytes(&st), (long long)nbytes);

    /* Read back the other way: collectively what was written independently and vice versa. */
    memset(rbuf, HOLE, (size_t)msize);
    if (c->coll)
        CHECK_MPI(MPI_File_read_at(fh, 0, rbuf, c->mcount, c->mtype, &st));
    else
        CHECK_MPI(MPI_File_read_at_all(fh, 0, rbuf, c->mcount, c->mtype, &st));
    CHECK(tst_status_bytes(&st) == nbytes, "%s: read moved %lld bytes, expected %lld", c->label,
          (long long)tst_status_bytes(&st), (long long)nbytes);
    tst_stream_verify(rbuf, &c->memx, &c->filex, tst_rank, gen, c->label);
    for (size_t i = 0; i < c->memx.n; i++)
        memset(mask + c->memx.e[i].off, 1, (size_t)c->memx.e[i].len);
    for (int64_t m = 0; m < msize; m++)
        if (!mask[m] && rbuf[m] != HOLE) {
            CHECK(0, "%s: read wrote into memory hole at byte %lld", c->label, (long long)m);
            break;
        }
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    free(wbuf);
    free(rbuf);
    free(mask);
}

/* A: vector of byte blocks, resized so that tiles interleave the ranks; memory contiguous. */
#define VC 64
#define VB 100
#define VT 2 /* tiles written */
static int64_t vec_region(void)
{
    return (int64_t)VT * VC * VB * tst_size;
}

static void vec_files(int rank, int64_t base, struct tst_list *fx)
{
    for (int t = 0; t < VT; t++)
        for (int i = 0; i < VC; i++)
            tst_list_add(fx, base + (int64_t)rank * VB + (int64_t)t * VC * VB * tst_size +
                                 (int64_t)i * VB * tst_size,
                         VB);
}

static void vec_case(struct ncase *c, int64_t base)
{
    MPI_Datatype v;

    c->label = "vector";
    c->disp = base + (MPI_Offset)tst_rank * VB;
    c->etype = MPI_BYTE;
    MPI_Type_vector(VC, VB, VB * tst_size, MPI_BYTE, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)VC * VB * tst_size, &c->ftype);
    MPI_Type_free(&v);
    MPI_Type_commit(&c->ftype);
    c->mtype = MPI_BYTE;
    c->mcount = VT * VC * VB;
    c->coll = 1;
    tst_list_add(&c->memx, 0, (int64_t)VT * VC * VB);
    vec_files(tst_rank, base, &c->filex);
}

/* B: 2-D subarray of ints, column blocks per rank; memory is the interior of a haloed array. */
#define SR 40
#define SC 30
#define HALO 2
static int64_t sub_region(void)
{
    return (int64_t)SR * SC * tst_size * 4;
}

static void sub_files(int rank, int64_t base, struct tst_list *fx)
{
    for (int i = 0; i < SR; i++)
        tst_list_add(fx, base + ((int64_t)i * SC * tst_size + (int64_t)SC * rank) * 4, SC * 4);
}

static void sub_case(struct ncase *c, int64_t base)
{
    int gs[2] = {SR, SC * tst_size}, ss[2] = {SR, SC}, st[2] = {0, SC * tst_rank};
    int ms[2] = {SR + 2 * HALO, SC + 2 * HALO}, mst[2] = {HALO, HALO};

    c->label = "subarray";
    c->disp = base;
    c->etype = MPI_INT;
    MPI_Type_create_subarray(2, gs, ss, st, MPI_ORDER_C, MPI_INT, &c->ftype);
    MPI_Type_commit(&c->ftype);
    MPI_Type_create_subarray(2, ms, ss, mst, MPI_ORDER_C, MPI_INT, &c->mtype);
    MPI_Type_commit(&c->mtype);
    c->mcount = 1;
    c->coll = 0;
    for (int i = 0; i < SR; i++)
        tst_list_add(&c->memx, ((int64_t)(i + HALO) * (SC + 2 * HALO) + HALO) * 4, SC * 4);
    sub_files(tst_rank, base, &c->filex);
}

/* C: darray, block-cyclic in both dimensions over the grid MPI_Dims_create gives. */
#define DG0 37
#define DG1 53
#define DA0 3
#define DA1 2
static int64_t dar_region(void)
{
    return (int64_t)DG0 * DG1 * 8;
}

static void dar_files(int rank, const int *ps, int64_t base, struct tst_list *fx)
{
    int c0 = rank / ps[1], c1 = rank % ps[1]; /* C order process grid */

    for (int i = 0; i < DG0; i++) {
        if ((i / DA0) % ps[0] != c0)
            continue;
        for (int j = 0; j < DG1;) {
            if ((j / DA1) % ps[1] != c1) {
                j++;
                continue;
            }
            int j0 = j;
            while (j < DG1 && (j / DA1) % ps[1] == c1)
                j++;
            tst_list_add(fx, base + ((int64_t)i * DG1 + j0) * 8, (int64_t)(j - j0) * 8);
        }
    }
}

static void dar_case(struct ncase *c, int64_t base, const int *ps)
{
    int gs[2] = {DG0, DG1}, db[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int da[2] = {DA0, DA1}, psz[2] = {ps[0], ps[1]};
    int size = 0;

    c->label = "darray";
    c->disp = base;
    c->etype = MPI_DOUBLE;
    MPI_Type_create_darray(tst_size, tst_rank, 2, gs, db, da, psz, MPI_ORDER_C, MPI_DOUBLE,
                           &c->ftype);
    MPI_Type_commit(&c->ftype);
    MPI_Type_size(c->ftype, &size);
    c->mtype = MPI_DOUBLE;
    c->mcount = size / 8;
    c->coll = 1;
    tst_list_add(&c->memx, 0, size);
    dar_files(tst_rank, ps, base, &c->filex);
    REQUIRE(tst_list_bytes(&c->filex) == size, "test bug: darray flattening has %lld bytes, "
            "MPI says %d", (long long)tst_list_bytes(&c->filex), size);
}

/* D: hindexed with zero-length blocks first, last and in between, on both sides. */
static const int hf_len[] = {0, 5, 0, 17, 0, 0, 300, 1, 0, 64, 0};
static const MPI_Aint hf_disp[] = {0, 2, 7, 9, 40, 41, 50, 400, 402, 410, 474};
#define HF_N ((int)(sizeof hf_len / sizeof hf_len[0]))
#define HF_EXT 480 /* per-rank stretch of one tile */
#define HF_T 3
static const int hm_len[] = {284, 0, 3, 0, 100};
static const MPI_Aint hm_disp[] = {300, 3, 0, 200, 10}; /* memory side need not be monotone */
#define HM_N ((int)(sizeof hm_len / sizeof hm_len[0]))
#define HM_EXT 700

static int64_t hix_region(void)
{
    return (int64_t)HF_T * HF_EXT * tst_size;
}

static void hix_files(int rank, int64_t base, struct tst_list *fx)
{
    for (int t = 0; t < HF_T; t++)
        for (int k = 0; k < HF_N; k++)
            if (hf_len[k])
                tst_list_add(fx, base + (int64_t)rank * HF_EXT +
                                     (int64_t)t * HF_EXT * tst_size + hf_disp[k],
                             hf_len[k]);
}

static void hix_case(struct ncase *c, int64_t base)
{
    MPI_Datatype t;

    c->label = "hindexed-zero-blocks";
    c->disp = base + (MPI_Offset)tst_rank * HF_EXT;
    c->etype = MPI_BYTE;
    MPI_Type_create_hindexed(HF_N, hf_len, hf_disp, MPI_BYTE, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint)HF_EXT * tst_size, &c->ftype);
    MPI_Type_free(&t);
    MPI_Type_commit(&c->ftype);
    MPI_Type_create_hindexed(HM_N, hm_len, hm_disp, MPI_BYTE, &t);
    MPI_Type_create_resized(t, 0, HM_EXT, &c->mtype);
    MPI_Type_free(&t);
    MPI_Type_commit(&c->mtype);
    c->mcount = HF_T;
    c->coll = 1;
    for (int e = 0; e < HF_T; e++)
        for (int k = 0; k < HM_N; k++)
            if (hm_len[k])
                tst_list_add(&c->memx, (int64_t)e * HM_EXT + hm_disp[k], hm_len[k]);
    hix_files(tst_rank, base, &c->filex);
}

/* E: struct { int a; <4-byte hole> double b; char c[3]; <5-byte hole> } in memory, contiguous
 * in the file. F: the same memory type against a vector file type, independent. */
#define SN 200
#define SREC 15 /* data bytes per struct element */
#define FN 50   /* struct elements in case F: 750 bytes = FV blocks of FB */
#define FV 25
#define FB 30

static MPI_Datatype struct_type(void)
{
    int bl[3] = {1, 1, 3};
    MPI_Aint dp[3] = {0, 8, 16};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, s, r;

    MPI_Type_create_struct(3, bl, dp, ty, &s);
    MPI_Type_create_resized(s, 0, 24, &r);
    MPI_Type_free(&s);
    MPI_Type_commit(&r);
    return r;
}

static void struct_mem(int n, struct tst_list *mx)
{
    for (int e = 0; e < n; e++) {
        tst_list_add(mx, (int64_t)e * 24, 4);
        tst_list_add(mx, (int64_t)e * 24 + 8, 8);
        tst_list_add(mx, (int64_t)e * 24 + 16, 3);
    }
}

static int64_t str_region(void)
{
    return (int64_t)SN * SREC * tst_size;
}

static void str_files(int rank, int64_t base, struct tst_list *fx)
{
    tst_list_add(fx, base + (int64_t)rank * SN * SREC, (int64_t)SN * SREC);
}

static void str_case(struct ncase *c, int64_t base)
{
    c->label = "struct-holes";
    c->disp = base + (MPI_Offset)tst_rank * SN * SREC;
    c->etype = MPI_BYTE;
    c->ftype = MPI_BYTE;
    c->mtype = struct_type();
    c->mcount = SN;
    c->coll = 1;
    struct_mem(SN, &c->memx);
    str_files(tst_rank, base, &c->filex);
}

static void sv_files(int rank, int64_t base, struct tst_list *fx)
{
    for (int i = 0; i < FV; i++)
        tst_list_add(fx, base + (int64_t)rank * FB + (int64_t)i * FB * tst_size, FB);
}

static void sv_case(struct ncase *c, int64_t base)
{
    c->label = "struct-vs-vector-independent";
    c->disp = base + (MPI_Offset)tst_rank * FB;
    c->etype = MPI_BYTE;
    MPI_Type_vector(FV, FB, FB * tst_size, MPI_BYTE, &c->ftype);
    MPI_Type_commit(&c->ftype);
    c->mtype = struct_type();
    c->mcount = FN;
    c->coll = 0;
    struct_mem(FN, &c->memx);
    sv_files(tst_rank, base, &c->filex);
}

static void free_case(struct ncase *c)
{
    if (c->ftype != MPI_BYTE)
        MPI_Type_free(&c->ftype);
    if (c->mtype != MPI_BYTE && c->mtype != MPI_DOUBLE)
        MPI_Type_free(&c->mtype);
    tst_list_free(&c->memx);
    tst_list_free(&c->filex);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int ps[2] = {0, 0};
    int64_t base[6];
    struct ncase c[6];
    struct tst_image img;
    MPI_File fh;

    MPI_Dims_create(tst_size, 2, ps);
    /* Regions one after the other, each starting at an odd offset. */
    base[0] = 13;
    base[1] = base[0] + vec_region() + 7;
    base[2] = base[1] + sub_region() + 5;
    base[3] = base[2] + dar_region() + 3;
    base[4] = base[3] + hix_region() + 11;
    base[5] = base[4] + str_region() + 1;

    memset(c, 0, sizeof c);
    vec_case(&c[0], base[0]);
    sub_case(&c[1], base[1]);
    dar_case(&c[2], base[2], ps);
    hix_case(&c[3], base[3]);
    str_case(&c[4], base[4]);
    sv_case(&c[5], base[5]);

    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    tst_background(fh, base[5] + (int64_t)FV * FB * tst_size + 100, 0, &img);
    for (int i = 0; i < 6; i++)
        run_case(fh, &c[i], i);
    CHECK_MPI(MPI_File_close(&fh));

    for (int r = 0; r < tst_size; r++) {
        struct tst_list fx[6];
        memset(fx, 0, sizeof fx);
        vec_files(r, base[0], &fx[0]);
        sub_files(r, base[1], &fx[1]);
        dar_files(r, ps, base[2], &fx[2]);
        hix_files(r, base[3], &fx[3]);
        str_files(r, base[4], &fx[4]);
        sv_files(r, base[5], &fx[5]);
        for (int i = 0; i < 6; i++) {
            tst_img_write_list(&img, &fx[i], r, i);
            tst_list_free(&fx[i]);
        }
    }
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    for (int i = 0; i < 6; i++)
        free_case(&c[i]);
    return tst_finalize();
}
