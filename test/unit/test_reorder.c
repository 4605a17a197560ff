/*
 * bblog_reorder against two brute-force models (DESIGN.md section 8):
 *  - painting: every request, in issue order, writes its source positions into a byte array;
 *    the expected list is the maximal runs of consecutive sources;
 *  - flatten + qsort + dedupe: every segment flattened, its boundaries sorted, and each
 *    elementary interval given to the latest request covering it (for sparse, wide offsets).
 * Both give the unique sorted, non-overlapping, fully coalesced list, so outputs must be equal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bblog_reorder.h"

#define UNSET UINT64_MAX

/* splitmix64: small, fixed-seed, good enough for test shapes. */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
    uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static uint64_t rnd_below(uint64_t n)
{
    return rnd() % n;
}

/* A generated input: nreqs requests, their segments in one block. */
struct tcase {
    struct bblog_req *reqs;
    struct bblog_seg *segs;
    size_t nreqs;
    size_t nsegs;
};

static void tcase_free(struct tcase *t)
{
    free(t->reqs);
    free(t->segs);
    memset(t, 0, sizeof(*t));
}

/* Builds a case from a flat array of segments and the segment count of each request. */
static void tcase_build(struct tcase *t, const struct bblog_seg *segs, const size_t *counts,
                        size_t nreqs)
{
    size_t total = 0;

    for (size_t r = 0; r < nreqs; r++)
        total += counts[r];
    t->nreqs = nreqs;
    t->nsegs = total;
    t->reqs = calloc(nreqs > 0 ? nreqs : 1, sizeof(*t->reqs));
    t->segs = calloc(total > 0 ? total : 1, sizeof(*t->segs));
    assert_non_null(t->reqs);
    assert_non_null(t->segs);
    if (total > 0)
        memcpy(t->segs, segs, total * sizeof(*segs));
    total = 0;
    for (size_t r = 0; r < nreqs; r++) {
        t->reqs[r].segs = &t->segs[total];
        t->reqs[r].nsegs = counts[r];
        total += counts[r];
    }
}

/*
 * Random requests inside [0, space): each request is either strided (fixed length and stride,
 * the shape of a subarray row set) or random (random gaps and lengths), from a random start,
 * so requests interleave, overlap, nest and duplicate at random. Zero-length segments are
 * sprinkled in at arbitrary offsets. Sources: either packed as in a data log (consecutive
 * segments of a request follow each other) or the file offset plus a per-request shift that is
 * often shared, so that pieces from different requests may coalesce.
 */
static void gen_random(struct tcase *t, size_t nreqs, size_t maxsegs, uint64_t space)
{
    size_t cap = nreqs * (maxsegs + 4) + 1;
    struct bblog_seg *segs = malloc(cap * sizeof(*segs));
    size_t *counts = calloc(nreqs > 0 ? nreqs : 1, sizeof(*counts));
    int packed = rnd_below(2) == 0;
    uint64_t logpos = 1u << 20;
    size_t n = 0;

    assert_non_null(segs);
    assert_non_null(counts);
    for (size_t r = 0; r < nreqs; r++) {
        size_t want = 1 + rnd_below(maxsegs);
        uint64_t pos = rnd_below(space);
        uint64_t shift = rnd_below(3) == 0 ? 0 : ((uint64_t)(r + 1) << 32);
        int strided = rnd_below(2) == 0;
        uint64_t slen = 1 + rnd_below(16);
        uint64_t stride;
        size_t start_n = n;

        if (rnd_below(8) == 0)
            slen = 1 + rnd_below(space / 4 + 1); /* some long segments that cover others */
        stride = slen + rnd_below(64);
        for (size_t k = 0; k < want && pos < space; k++) {
            uint64_t len = strided ? slen : 1 + rnd_below(32);
            uint64_t gap = strided ? stride - slen : rnd_below(48);

            if (len > space - pos)
                len = space - pos;
            if (rnd_below(10) == 0 && n < cap) {
                /* Zero length, anywhere: must be ignored, even out of order. */
                segs[n].off = rnd_below(space);
                segs[n].len = 0;
                segs[n].src = rnd();
                n++;
            }
            segs[n].off = pos;
            segs[n].len = len;
            segs[n].src = packed ? logpos : pos + shift;
            logpos += len;
            n++;
            pos += len;
            if (rnd_below(4) != 0 || strided)
                pos += gap;
        }
        if (rnd_below(20) == 0) {
            /* A request of zero-length segments only. */
            n = start_n;
            segs[n].off = rnd_below(space);
            segs[n].len = 0;
            segs[n].src = 7;
            n++;
        }
        counts[r] = n - start_n;
    }
    tcase_build(t, segs, counts, nreqs);
    free(counts);
    free(segs);
}

/* Expected output by painting bytes in issue order; every offset must be below space. */
static struct bblog_seg *model_paint(const struct tcase *t, uint64_t space, size_t *nexp)
{
    uint64_t *map = malloc(space * sizeof(*map));
    struct bblog_seg *exp = malloc((space + 1) * sizeof(*exp));
    size_t n = 0;

    assert_non_null(map);
    assert_non_null(exp);
    for (uint64_t b = 0; b < space; b++)
        map[b] = UNSET;
    for (size_t r = 0; r < t->nreqs; r++) {
        for (size_t i = 0; i < t->reqs[r].nsegs; i++) {
            const struct bblog_seg *s = &t->reqs[r].segs[i];

            for (uint64_t k = 0; k < s->len; k++)
                map[s->off + k] = s->src + k;
        }
    }
    for (uint64_t b = 0; b < space; b++) {
        if (map[b] == UNSET)
            continue;
        if (n > 0 && exp[n - 1].off + exp[n - 1].len == b &&
            exp[n - 1].src + exp[n - 1].len == map[b]) {
            exp[n - 1].len++;
        } else {
            exp[n].off = b;
            exp[n].len = 1;
            exp[n].src = map[b];
            n++;
        }
    }
    free(map);
    *nexp = n;
    return exp;
}

struct flat {
    uint64_t off;
    uint64_t end;
    uint64_t src;
    size_t req;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a;
    uint64_t y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Expected output by flatten + qsort + dedupe: O(n^2), independent of offsets' magnitude. */
static struct bblog_seg *model_flat(const struct tcase *t, size_t *nexp)
{
    struct flat *f = malloc((t->nsegs + 1) * sizeof(*f));
    uint64_t *bnd = malloc((2 * t->nsegs + 1) * sizeof(*bnd));
    struct bblog_seg *exp = malloc((2 * t->nsegs + 1) * sizeof(*exp));
    size_t nf = 0;
    size_t nb = 0;
    size_t n = 0;

    assert_non_null(f);
    assert_non_null(bnd);
    assert_non_null(exp);
    for (size_t r = 0; r < t->nreqs; r++) {
        for (size_t i = 0; i < t->reqs[r].nsegs; i++) {
            const struct bblog_seg *s = &t->reqs[r].segs[i];

            if (s->len == 0)
                continue;
            f[nf].off = s->off;
            f[nf].end = s->off + s->len;
            f[nf].src = s->src;
            f[nf].req = r;
            bnd[nb++] = s->off;
            bnd[nb++] = s->off + s->len;
            nf++;
        }
    }
    qsort(bnd, nb, sizeof(*bnd), cmp_u64);
    for (size_t b = 0; b + 1 < nb; b++) {
        uint64_t lo = bnd[b];
        uint64_t hi = bnd[b + 1];
        const struct flat *w = NULL;
        uint64_t src;

        if (lo == hi)
            continue;
        for (size_t i = 0; i < nf; i++) {
            if (f[i].off <= lo && f[i].end >= hi && (w == NULL || f[i].req > w->req))
                w = &f[i];
        }
        if (w == NULL)
            continue;
        src = w->src + (lo - w->off);
        if (n > 0 && exp[n - 1].off + exp[n - 1].len == lo &&
            exp[n - 1].src + exp[n - 1].len == src) {
            exp[n - 1].len += hi - lo;
        } else {
            exp[n].off = lo;
            exp[n].len = hi - lo;
            exp[n].src = src;
            n++;
        }
    }
    free(bnd);
    free(f);
    *nexp = n;
    return exp;
}

/* The output contract on its own: sorted, no empty piece, no overlap, nothing left to merge. */
static void check_shape(const struct bblog_seg *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_true(v[i].len > 0);
        if (i > 0) {
            assert_true(v[i - 1].off + v[i - 1].len <= v[i].off);
            assert_false(v[i - 1].off + v[i - 1].len == v[i].off &&
                         v[i - 1].src + v[i - 1].len == v[i].src);
        }
    }
}

static void check_equal(const struct bblog_seg *got, size_t ngot, const struct bblog_seg *exp,
                        size_t nexp)
{
    assert_int_equal(ngot, nexp);
    for (size_t i = 0; i < nexp; i++) {
        assert_int_equal(got[i].off, exp[i].off);
        assert_int_equal(got[i].len, exp[i].len);
        assert_int_equal(got[i].src, exp[i].src);
    }
}

static void run_case(const struct tcase *t, const struct bblog_seg *exp, size_t nexp)
{
    struct bblog_seg *out = NULL;
    size_t nout = 12345;

    assert_int_equal(bblog_reorder(t->reqs, t->nreqs, &out, &nout), 0);
    check_shape(out, nout);
    check_equal(out, nout, exp, nexp);
    if (nout == 0)
        assert_null(out);
    free(out);
}

/* Random shapes against both models, many fixed seeds. */
static void test_random_small(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 2000; seed++) {
        struct tcase t;
        struct bblog_seg *e1, *e2;
        size_t n1, n2;
        size_t nreqs;
        uint64_t space;

        rnd_state = seed * 7919;
        nreqs = rnd_below(12);
        space = 64 + rnd_below(1024);
        gen_random(&t, nreqs, 1 + rnd_below(24), space);
        e1 = model_paint(&t, space, &n1);
        e2 = model_flat(&t, &n2);
        check_equal(e2, n2, e1, n1); /* the two models agree */
        run_case(&t, e1, n1);
        free(e2);
        free(e1);
        tcase_free(&t);
    }
}

/* Larger inputs: up to a few thousand segments, many requests, dense overlaps. */
static void test_random_large(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        struct tcase t;
        struct bblog_seg *e;
        size_t n;
        uint64_t space;
        size_t nreqs;

        rnd_state = 0xabcdef00ULL + seed;
        space = 4096 + rnd_below(1 << 16);
        nreqs = 1 + rnd_below(200);
        gen_random(&t, nreqs, 1 + rnd_below(8000 / nreqs + 1), space);
        e = model_paint(&t, space, &n);
        run_case(&t, e, n);
        free(e);
        if (seed <= 6) {
            e = model_flat(&t, &n);
            run_case(&t, e, n);
            free(e);
        }
        tcase_free(&t);
    }
}

/* Offsets spread over 2^60 with lengths in the gigabytes: only the flat model can follow. */
static void test_random_wide(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct tcase t;
        struct bblog_seg *e;
        size_t n;

        rnd_state = 0x5eed0000ULL + seed;
        gen_random(&t, 1 + rnd_below(16), 1 + rnd_below(40), 4096);
        /* Stretch every offset and length by the same factor: same shape, huge numbers. */
        for (size_t i = 0; i < t.nsegs; i++) {
            t.segs[i].off = t.segs[i].off * (1ULL << 48) + (1ULL << 40);
            t.segs[i].len *= 1ULL << 48;
            t.segs[i].src *= 1ULL << 20;
        }
        e = model_flat(&t, &n);
        run_case(&t, e, n);
        free(e);
        tcase_free(&t);
    }
}

static void test_no_request(void **state)
{
    struct bblog_seg *out = (struct bblog_seg *)&out;
    size_t nout = 99;

    (void)state;
    assert_int_equal(bblog_reorder(NULL, 0, &out, &nout), 0);
    assert_null(out);
    assert_int_equal(nout, 0);
}

static void test_only_empty_segments(void **state)
{
    const struct bblog_seg s[] = { { 100, 0, 1 }, { 5, 0, 2 }, { 50, 0, 3 } };
    const size_t counts[] = { 2, 0, 1 };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 3);
    run_case(&t, NULL, 0);
    tcase_free(&t);
}

static void test_single_request(void **state)
{
    /* Adjacent in off and src merge; adjacent in off only do not; zero length vanishes. */
    const struct bblog_seg s[] = {
        { 0, 10, 100 }, { 10, 5, 110 }, { 15, 0, 0 }, { 15, 5, 200 }, { 30, 5, 205 },
    };
    const size_t counts[] = { 5 };
    const struct bblog_seg exp[] = { { 0, 15, 100 }, { 15, 5, 200 }, { 30, 5, 205 } };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 1);
    run_case(&t, exp, 3);
    tcase_free(&t);
}

/*
 * Seed paper 000, Fig. 3: two subarrays of a 2-D variable that are disjoint in the variable
 * but interleave in the file. Variable: 4 rows x 8 columns of 4-byte elements at offset 1000.
 * Red (issued first): rows 1-2, columns 4-7. Blue: rows 0-3, columns 0-2.
 */
static void test_paper_fig3(void **state)
{
    const uint64_t b = 1000;
    const uint64_t row = 32;
    const struct bblog_seg s[] = {
        /* red, packed in the log from 0 */
        { b + 1 * row + 16, 16, 0 }, { b + 2 * row + 16, 16, 16 },
        /* blue, packed in the log from 32 */
        { b + 0 * row, 12, 32 }, { b + 1 * row, 12, 44 },
        { b + 2 * row, 12, 56 }, { b + 3 * row, 12, 68 },
    };
    const size_t counts[] = { 2, 4 };
    const struct bblog_seg exp[] = {
        { b + 0 * row, 12, 32 }, { b + 1 * row, 12, 44 }, { b + 1 * row + 16, 16, 0 },
        { b + 2 * row, 12, 56 }, { b + 2 * row + 16, 16, 16 }, { b + 3 * row, 12, 68 },
    };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 2);
    run_case(&t, exp, 6);
    tcase_free(&t);
}

/* Adds a subarray of an 8 x 8 byte variable (rows r0..r1, columns c0..c1) as one request,
 * packed in the log at *logpos. */
static size_t add_block(struct bblog_seg *s, size_t n, unsigned r0, unsigned r1, unsigned c0,
                        unsigned c1, uint64_t *logpos)
{
    for (unsigned r = r0; r <= r1; r++) {
        s[n].off = r * 8 + c0;
        s[n].len = c1 - c0 + 1;
        s[n].src = *logpos;
        *logpos += s[n].len;
        n++;
    }
    return n;
}

/*
 * Seed paper 000, Fig. 4 in miniature: six subarrays of an 8 x 8 variable fall into three
 * groups, {A, B} (rows 0-1), {C} (rows 2-3, contiguous), {D, E, F} (rows 4-7), issued in a
 * scrambled order F, C, A, E, B, D.
 */
static void test_paper_fig4(void **state)
{
    struct bblog_seg s[32];
    size_t counts[6];
    uint64_t lp = 5000;
    size_t n = 0, m;
    struct tcase t;
    struct bblog_seg *e;

    (void)state;
    m = n, n = add_block(s, n, 6, 7, 2, 7, &lp), counts[0] = n - m; /* F */
    m = n, n = add_block(s, n, 2, 3, 0, 7, &lp), counts[1] = n - m; /* C */
    m = n, n = add_block(s, n, 0, 1, 0, 3, &lp), counts[2] = n - m; /* A */
    m = n, n = add_block(s, n, 4, 5, 2, 7, &lp), counts[3] = n - m; /* E */
    m = n, n = add_block(s, n, 0, 1, 4, 7, &lp), counts[4] = n - m; /* B */
    m = n, n = add_block(s, n, 4, 7, 0, 1, &lp), counts[5] = n - m; /* D */
    tcase_build(&t, s, counts, 6);
    e = model_paint(&t, 64, &m);
    /* Rows 0-1: A and B side by side; rows 2-3: C as one piece (its two rows are adjacent in
     * file and log); rows 4-7: D then E or F. */
    assert_int_equal(m, 13);
    run_case(&t, e, m);
    free(e);
    tcase_free(&t);
}

static void test_later_covers_earlier(void **state)
{
    const struct bblog_seg s[] = { { 10, 10, 100 }, { 30, 5, 300 }, { 0, 40, 1000 } };
    const size_t counts[] = { 2, 1 };
    const struct bblog_seg exp[] = { { 0, 40, 1000 } };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 2);
    run_case(&t, exp, 1);
    tcase_free(&t);
}

static void test_earlier_covers_later(void **state)
{
    /* The earlier segment survives on both sides; its right part's src moves with the trim. */
    const struct bblog_seg s[] = { { 0, 40, 100 }, { 10, 10, 1000 } };
    const size_t counts[] = { 1, 1 };
    const struct bblog_seg exp[] = { { 0, 10, 100 }, { 10, 10, 1000 }, { 20, 20, 120 } };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 2);
    run_case(&t, exp, 3);
    tcase_free(&t);
}

static void test_several_later_over_one(void **state)
{
    /* One long early segment, three later requests over it, one starting before it. */
    const struct bblog_seg s[] = {
        { 10, 100, 0 },                         /* r0 */
        { 5, 10, 1000 }, { 50, 5, 1010 },       /* r1: starts before r0 */
        { 20, 10, 2000 }, { 52, 10, 2010 },     /* r2 */
        { 25, 30, 3000 },                       /* r3 */
    };
    const size_t counts[] = { 1, 2, 2, 1 };
    const struct bblog_seg exp[] = {
        { 5, 10, 1000 }, { 15, 5, 5 }, { 20, 5, 2000 }, { 25, 30, 3000 },
        { 55, 7, 2013 }, { 62, 48, 52 },
    };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 4);
    run_case(&t, exp, 6);
    tcase_free(&t);
}

static void test_trim_left_adjusts_src(void **state)
{
    const struct bblog_seg s[] = { { 0, 40, 100 }, { 0, 10, 1000 } };
    const size_t counts[] = { 1, 1 };
    const struct bblog_seg exp[] = { { 0, 10, 1000 }, { 10, 30, 110 } };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 2);
    run_case(&t, exp, 2);
    tcase_free(&t);
}

static void test_exact_duplicates(void **state)
{
    /* The same extent three times: the last copy wins, whatever the sort did with ties. */
    const struct bblog_seg s[] = {
        { 0, 10, 0 }, { 20, 10, 10 }, { 0, 10, 100 }, { 20, 10, 110 }, { 0, 10, 200 },
        { 20, 10, 210 },
    };
    const size_t counts[] = { 2, 2, 2 };
    const struct bblog_seg exp[] = { { 0, 10, 200 }, { 20, 10, 210 } };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 3);
    run_case(&t, exp, 2);
    tcase_free(&t);
}

static void test_adjacency(void **state)
{
    /* Separate groups (r0, r1 only touch) merge when their sources follow; r2 interleaves
     * with r3 and the pieces merge across requests; r4 touches r3 in off but not in src. */
    const struct bblog_seg s[] = {
        { 0, 10, 0 },                          /* r0 */
        { 10, 10, 10 },                        /* r1 */
        { 100, 10, 100 }, { 120, 10, 120 },    /* r2 */
        { 110, 10, 110 }, { 130, 10, 130 },    /* r3 */
        { 140, 10, 999 },                      /* r4 */
    };
    const size_t counts[] = { 1, 1, 2, 2, 1 };
    const struct bblog_seg exp[] = { { 0, 20, 0 }, { 100, 40, 100 }, { 140, 10, 999 } };
    struct tcase t;

    (void)state;
    tcase_build(&t, s, counts, 5);
    run_case(&t, exp, 3);
    tcase_free(&t);
}

static void test_invalid(void **state)
{
    const struct bblog_seg back[] = { { 10, 5, 0 }, { 0, 5, 5 } };
    const struct bblog_seg over[] = { { 0, 10, 0 }, { 5, 5, 10 } };
    const struct bblog_seg wrap[] = { { UINT64_MAX - 4, 10, 0 } };
    const struct bblog_seg wsrc[] = { { 0, 10, UINT64_MAX - 4 } };
    struct bblog_req r = { back, 2 };
    struct bblog_seg *out = NULL;
    size_t nout = 0;

    (void)state;
    assert_int_equal(bblog_reorder(&r, 1, &out, &nout), EINVAL);
    r.segs = over;
    assert_int_equal(bblog_reorder(&r, 1, &out, &nout), EINVAL);
    r.segs = wrap;
    r.nsegs = 1;
    assert_int_equal(bblog_reorder(&r, 1, &out, &nout), EINVAL);
    r.segs = wsrc;
    assert_int_equal(bblog_reorder(&r, 1, &out, &nout), EINVAL);
    r.segs = NULL;
    assert_int_equal(bblog_reorder(&r, 1, &out, &nout), EINVAL);
    assert_int_equal(bblog_reorder(NULL, 1, &out, &nout), EINVAL);
    r.segs = back;
    assert_int_equal(bblog_reorder(&r, 1, NULL, &nout), EINVAL);
    assert_int_equal(bblog_reorder(&r, 1, &out, NULL), EINVAL);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_request),
        cmocka_unit_test(test_only_empty_segments),
        cmocka_unit_test(test_single_request),
        cmocka_unit_test(test_paper_fig3),
        cmocka_unit_test(test_paper_fig4),
        cmocka_unit_test(test_later_covers_earlier),
        cmocka_unit_test(test_earlier_covers_later),
        cmocka_unit_test(test_several_later_over_one),
        cmocka_unit_test(test_trim_left_adjusts_src),
        cmocka_unit_test(test_exact_duplicates),
        cmocka_unit_test(test_adjacency),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_random_small),
        cmocka_unit_test(test_random_large),
        cmocka_unit_test(test_random_wide),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
