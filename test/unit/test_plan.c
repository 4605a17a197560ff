/*
 * Round planning (DESIGN.md section 6) against a brute-force model: for random per-process
 * extent lists and budgets, the plan must cover every byte of every process exactly once, in
 * consecutive rounds, with at most budget bytes per process per round, cutting only on extent
 * boundaries (or inside an extent larger than the budget), and each round must end where the
 * greedy sweep says: at the minimum over processes of the largest round each can take.
 * The node exchange's shares (bblog_share_cut) against a per-byte model of which piece wins
 * each byte (stamps, bytes written through, concurrent writes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bblog_plan.h"

static uint64_t rnd_state;

static uint64_t rnd(void)
{
    uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
    return rnd() % n;
}

#define MAXP 8
#define MAXN 80

struct procs {
    struct bblog_seg seg[MAXP][MAXN];
    const struct bblog_seg *lists[MAXP];
    size_t counts[MAXP];
    size_t nprocs;
};

/* Bytes of one process inside [a, b). */
static uint64_t bytes_in(const struct bblog_seg *s, size_t n, uint64_t a, uint64_t b)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < n; i++) {
        uint64_t lo = s[i].off > a ? s[i].off : a;
        uint64_t hi = s[i].off + s[i].len < b ? s[i].off + s[i].len : b;

        if (hi > lo)
            sum += hi - lo;
    }
    return sum;
}

/*
 * The largest round [start, end) one process can take, from its definition: everything if the
 * rest fits; a split of the first piece if that piece alone is over budget; otherwise the
 * largest extent offset such that the bytes before it fit.
 */
static uint64_t model_fit(const struct bblog_seg *s, size_t n, uint64_t start, uint64_t budget)
{
    uint64_t best = 0;

    if (bytes_in(s, n, start, UINT64_MAX) <= budget)
        return UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t from;

        if (s[i].len == 0 || s[i].off + s[i].len <= start)
            continue;
        from = s[i].off > start ? s[i].off : start;
        if (s[i].off + s[i].len - from > budget)
            return from + budget;
        break;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i].len > 0 && s[i].off > start && bytes_in(s, n, start, s[i].off) <= budget &&
            s[i].off > best)
            best = s[i].off;
    }
    assert_true(best > start);
    return best;
}

/* Sorted extents with random gaps (often none), lengths (some over budget), zero lengths. */
static void gen_procs(struct procs *p, size_t nprocs, uint64_t budget)
{
    p->nprocs = nprocs;
    for (size_t q = 0; q < nprocs; q++) {
        size_t n = rnd_below(4) == 0 ? 0 : rnd_below(MAXN);
        uint64_t pos = rnd_below(500);

        for (size_t i = 0; i < n; i++) {
            uint64_t len = 1 + rnd_below(budget > 1 ? budget : 2);

            if (rnd_below(10) == 0)
                len = 0;
            else if (rnd_below(12) == 0)
                len = budget + rnd_below(4 * budget + 1);
            if (rnd_below(3) != 0)
                pos += rnd_below(3 * budget + 1);
            p->seg[q][i].off = pos;
            p->seg[q][i].len = len;
            p->seg[q][i].src = rnd();
            pos += len;
        }
        p->lists[q] = p->seg[q];
        p->counts[q] = n;
    }
}

/* Is x an offset or an end of some extent, or strictly inside one larger than the budget? */
static int legal_cut(const struct procs *p, uint64_t x, uint64_t budget)
{
    for (size_t q = 0; q < p->nprocs; q++) {
        for (size_t i = 0; i < p->counts[q]; i++) {
            const struct bblog_seg *s = &p->seg[q][i];

            if (s->len == 0)
                continue;
            if (x == s->off || x == s->off + s->len)
                return 1;
            if (s->len > budget && x > s->off && x < s->off + s->len)
                return 1;
        }
    }
    return 0;
}

static void check_plan(const struct procs *p, uint64_t budget)
{
    uint64_t *cuts = (uint64_t *)&cuts;
    size_t ncuts = 77;
    uint64_t lo = UINT64_MAX, hi = 0, total = 0;

    assert_int_equal(bblog_plan_rounds(p->lists, p->counts, p->nprocs, budget, &cuts, &ncuts),
                     0);
    for (size_t q = 0; q < p->nprocs; q++) {
        for (size_t i = 0; i < p->counts[q]; i++) {
            const struct bblog_seg *s = &p->seg[q][i];

            if (s->len == 0)
                continue;
            lo = s->off < lo ? s->off : lo;
            hi = s->off + s->len > hi ? s->off + s->len : hi;
            total += s->len;
        }
    }
    if (total == 0) {
        assert_int_equal(ncuts, 0);
        assert_null(cuts);
        return;
    }
    assert_true(ncuts >= 2);
    assert_int_equal(cuts[0], lo);
    assert_int_equal(cuts[ncuts - 1], hi);
    for (size_t r = 0; r + 1 < ncuts; r++) {
        uint64_t in_round = 0;
        uint64_t want = UINT64_MAX;

        /* Consecutive, non-empty ranges: with cuts[0] = lo and the last = hi, every byte of
         * every process lies in exactly one round. */
        assert_true(cuts[r] < cuts[r + 1]);
        for (size_t q = 0; q < p->nprocs; q++) {
            uint64_t b = bytes_in(p->seg[q], p->counts[q], cuts[r], cuts[r + 1]);
            uint64_t f = model_fit(p->seg[q], p->counts[q], cuts[r], budget);

            assert_true(b <= budget);
            in_round += b;
            want = f < want ? f : want;
        }
        assert_true(in_round > 0);
        /* Greedy: the round ends at the smallest of the processes' largest rounds. */
        if (r + 2 < ncuts) {
            assert_int_equal(cuts[r + 1], want);
            assert_true(legal_cut(p, cuts[r + 1], budget));
        } else {
            assert_int_equal(want, UINT64_MAX);
        }
    }
    /* Coverage, counted per process as well. */
    for (size_t q = 0; q < p->nprocs; q++) {
        uint64_t sum = 0, all = 0;

        for (size_t r = 0; r + 1 < ncuts; r++)
            sum += bytes_in(p->seg[q], p->counts[q], cuts[r], cuts[r + 1]);
        for (size_t i = 0; i < p->counts[q]; i++)
            all += p->seg[q][i].len;
        assert_int_equal(sum, all);
    }
    free(cuts);
}

static void test_random_plans(void **state)
{
    struct procs *p = malloc(sizeof(*p));

    (void)state;
    assert_non_null(p);
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        uint64_t budget;

        rnd_state = seed * 104729;
        budget = rnd_below(5) == 0 ? 1 + rnd_below(4) : 1 + rnd_below(300);
        gen_procs(p, 1 + rnd_below(MAXP), budget);
        check_plan(p, budget);
    }
    free(p);
}

/* round_end alone: against the model from random starts, cursor reused as starts grow. */
static void test_round_end_model(void **state)
{
    struct procs *p = malloc(sizeof(*p));

    (void)state;
    assert_non_null(p);
    for (uint64_t seed = 1; seed <= 200; seed++) {
        uint64_t budget, start = 0;
        size_t cursor = 0;

        rnd_state = 0x77770000ULL + seed;
        budget = 1 + rnd_below(200);
        gen_procs(p, 1, budget);
        for (int k = 0; k < 60; k++) {
            const struct bblog_seg *s = p->seg[0];
            size_t n = p->counts[0];
            size_t fresh = 0;
            uint64_t e = bblog_plan_round_end(s, n, &cursor, start, budget);

            assert_int_equal(e, model_fit(s, n, start, budget));
            assert_true(e > start);
            /* A fresh cursor gives the same answer and the same position. */
            assert_int_equal(bblog_plan_round_end(s, n, &fresh, start, budget), e);
            assert_int_equal(fresh, cursor);
            for (size_t i = 0; i < cursor; i++)
                assert_true(s[i].off + s[i].len <= start);
            if (cursor < n)
                assert_true(s[cursor].off + s[cursor].len > start);
            start += rnd_below(3 * budget + 1);
        }
    }
    free(p);
}

static void expect_cuts(const struct bblog_seg *const *lists, const size_t *counts, size_t np,
                        uint64_t budget, const uint64_t *exp, size_t nexp)
{
    uint64_t *cuts = NULL;
    size_t ncuts = 0;

    assert_int_equal(bblog_plan_rounds(lists, counts, np, budget, &cuts, &ncuts), 0);
    assert_int_equal(ncuts, nexp);
    for (size_t i = 0; i < nexp; i++)
        assert_int_equal(cuts[i], exp[i]);
    free(cuts);
}

static void test_straddle_and_split(void **state)
{
    /* P0's single extent is over budget and split; P1 fits whole in every round. */
    const struct bblog_seg p0[] = { { 0, 100, 0 } };
    const struct bblog_seg p1[] = { { 50, 10, 0 }, { 70, 10, 0 } };
    const struct bblog_seg *lists[] = { p0, p1 };
    const size_t counts[] = { 1, 2 };
    const uint64_t exp[] = { 0, 30, 60, 90, 100 };

    (void)state;
    expect_cuts(lists, counts, 2, 30, exp, 5);
}

static void test_cut_between_extents(void **state)
{
    /* Three 10-byte extents, budget 25: the third does not fit and is not split. */
    const struct bblog_seg p0[] = { { 0, 10, 0 }, { 10, 10, 0 }, { 20, 10, 0 } };
    const struct bblog_seg *lists[] = { p0 };
    const size_t counts[] = { 3 };
    const uint64_t exp[] = { 0, 20, 30 };

    (void)state;
    expect_cuts(lists, counts, 1, 25, exp, 3);
}

static void test_split_after_gap(void **state)
{
    /* P1's extent starts after a gap: its largest round ends budget bytes into it. */
    const struct bblog_seg p0[] = { { 0, 10, 0 } };
    const struct bblog_seg p1[] = { { 50, 100, 0 } };
    const struct bblog_seg *lists[] = { p0, p1 };
    const size_t counts[] = { 1, 1 };
    const uint64_t exp[] = { 0, 90, 130, 150 };

    (void)state;
    expect_cuts(lists, counts, 2, 40, exp, 4);
}

static void test_one_empty(void **state)
{
    const struct bblog_seg p1[] = { { 5, 10, 0 }, { 20, 10, 0 } };
    const struct bblog_seg *lists[] = { NULL, p1, p1 };
    const size_t counts[] = { 0, 2, 0 };
    const uint64_t exp[] = { 5, 20, 30 };

    (void)state;
    expect_cuts(lists, counts, 3, 15, exp, 3);
}

static void test_all_empty(void **state)
{
    const struct bblog_seg z[] = { { 40, 0, 0 } };
    const struct bblog_seg *lists[] = { NULL, z };
    const size_t counts[] = { 0, 1 };
    uint64_t *cuts = (uint64_t *)&cuts;
    size_t ncuts = 3;

    (void)state;
    assert_int_equal(bblog_plan_rounds(lists, counts, 2, 10, &cuts, &ncuts), 0);
    assert_null(cuts);
    assert_int_equal(ncuts, 0);
    cuts = (uint64_t *)&cuts;
    ncuts = 3;
    assert_int_equal(bblog_plan_rounds(NULL, NULL, 0, 10, &cuts, &ncuts), 0);
    assert_null(cuts);
    assert_int_equal(ncuts, 0);
}

static void test_one_huge_extent(void **state)
{
    /* 1 TB in 1 GiB rounds: 932 rounds, the last one short. */
    const uint64_t len = 1000000000000ULL;
    const uint64_t budget = 1ULL << 30;
    const struct bblog_seg p0[] = { { 4096, len, 0 } };
    const struct bblog_seg *lists[] = { p0 };
    const size_t counts[] = { 1 };
    uint64_t *cuts = NULL;
    size_t ncuts = 0;

    (void)state;
    assert_int_equal(bblog_plan_rounds(lists, counts, 1, budget, &cuts, &ncuts), 0);
    assert_int_equal(ncuts, (len + budget - 1) / budget + 1);
    for (size_t i = 0; i + 1 < ncuts; i++)
        assert_int_equal(cuts[i], 4096 + i * budget);
    assert_int_equal(cuts[ncuts - 1], 4096 + len);
    free(cuts);
}

static void test_budget_one(void **state)
{
    /* No process takes more than one byte per round; a round may span a gap of P0. */
    const struct bblog_seg p0[] = { { 0, 3, 0 }, { 10, 2, 0 } };
    const struct bblog_seg p1[] = { { 1, 1, 0 }, { 11, 4, 0 } };
    const struct bblog_seg *lists[] = { p0, p1 };
    const size_t counts[] = { 2, 2 };
    const uint64_t exp[] = { 0, 1, 2, 10, 11, 12, 13, 14, 15 };
    struct procs *p = calloc(1, sizeof(*p));

    (void)state;
    expect_cuts(lists, counts, 2, 1, exp, 9);
    assert_non_null(p);
    memcpy(p->seg[0], p0, sizeof(p0));
    memcpy(p->seg[1], p1, sizeof(p1));
    p->lists[0] = p->seg[0];
    p->lists[1] = p->seg[1];
    p->counts[0] = 2;
    p->counts[1] = 2;
    p->nprocs = 2;
    check_plan(p, 1);
    free(p);
}

static void test_budget_covers_all(void **state)
{
    const struct bblog_seg p0[] = { { 100, 10, 0 }, { 300, 10, 0 } };
    const struct bblog_seg p1[] = { { 0, 10, 0 } };
    const struct bblog_seg *lists[] = { p0, p1 };
    const size_t counts[] = { 2, 1 };
    const uint64_t exp[] = { 0, 310 };

    (void)state;
    expect_cuts(lists, counts, 2, 20, exp, 2);
}

static void test_invalid(void **state)
{
    const struct bblog_seg back[] = { { 10, 5, 0 }, { 0, 5, 0 } };
    const struct bblog_seg over[] = { { 0, 10, 0 }, { 5, 5, 0 } };
    const struct bblog_seg wrap[] = { { UINT64_MAX - 4, 10, 0 } };
    const struct bblog_seg ok[] = { { 0, 10, 0 } };
    const struct bblog_seg *lists[] = { ok };
    size_t counts[] = { 2 };
    uint64_t *cuts = NULL;
    size_t ncuts = 0;

    (void)state;
    lists[0] = back;
    assert_int_equal(bblog_plan_rounds(lists, counts, 1, 10, &cuts, &ncuts), EINVAL);
    lists[0] = over;
    assert_int_equal(bblog_plan_rounds(lists, counts, 1, 10, &cuts, &ncuts), EINVAL);
    lists[0] = wrap;
    counts[0] = 1;
    assert_int_equal(bblog_plan_rounds(lists, counts, 1, 10, &cuts, &ncuts), EINVAL);
    lists[0] = ok;
    assert_int_equal(bblog_plan_rounds(lists, counts, 1, 0, &cuts, &ncuts), EINVAL);
    assert_int_equal(bblog_plan_rounds(lists, counts, 1, 10, NULL, &ncuts), EINVAL);
    assert_int_equal(bblog_plan_rounds(lists, counts, 1, 10, &cuts, NULL), EINVAL);
    assert_int_equal(bblog_plan_rounds(NULL, counts, 1, 10, &cuts, &ncuts), EINVAL);
    lists[0] = NULL;
    assert_int_equal(bblog_plan_rounds(lists, counts, 1, 10, &cuts, &ncuts), EINVAL);
    assert_null(cuts);
}

/* ---- bblog_share_cut: the node exchange's shares, against a per-byte model ---- */

#define SPACE 256

/* The model's precedence as one number (greater wins): the stamp, then logged over written
 * through, then the lower who, then (pieces of one process) the lower offset and src. */
static uint64_t model_key(const struct bblog_npiece *a)
{
    return (uint64_t) a->stamp << 48 | (uint64_t) (a->who >= 0) << 47 |
        (uint64_t) (MAXP - a->who) << 40 | (uint64_t) (SPACE - a->off) << 24 |
        ((1u << 20) - a->src);
}

static int model_wins(const struct bblog_npiece *a, const struct bblog_npiece *b)
{
    return model_key(a) > model_key(b);
}

/* For each byte, the index of the piece that wins it, or -1 (no piece, or the winner was
 * written through: not kept). */
static void share_model(const struct bblog_npiece *p, size_t n, int *owner)
{
    for (int b = 0; b < SPACE; b++) {
        int w = -1;
        for (size_t i = 0; i < n; i++)
            if (p[i].off <= (uint64_t) b && (uint64_t) b < p[i].off + p[i].len &&
                (w < 0 || model_wins(&p[i], &p[w])))
                w = (int) i;
        owner[b] = w >= 0 && p[w].who >= 0 ? w : -1;
    }
}

/* Chunks of chunk bytes of the kept list: each exactly chunk bytes but the last, together
 * the kept list's bytes in its order (the same pieces, cut only at the chunk bounds). */
static void check_chunks(const struct bblog_npiece *whole, size_t wk, uint64_t total,
                         uint64_t chunk)
{
    size_t nparts = (size_t) ((total + chunk - 1) / chunk), starts[SPACE + 2], wi = 0;
    struct bblog_npiece *parts;
    uint64_t pos = 0, wpos = 0;

    assert_int_equal(bblog_share_parts(whole, wk, total, nparts, chunk, &parts, starts), 0);
    assert_int_equal(starts[0], 0);
    for (size_t c = 0; c < nparts; c++) {
        uint64_t sum = 0;
        for (size_t i = starts[c]; i < starts[c + 1]; i++) {
            assert_true(parts[i].len > 0);
            while (pos >= wpos + whole[wi].len)
                wpos += whole[wi++].len;
            assert_int_equal(parts[i].off, whole[wi].off + (pos - wpos));
            assert_int_equal(parts[i].src, whole[wi].src + (pos - wpos));
            assert_int_equal(parts[i].who, whole[wi].who);
            assert_true(parts[i].len <= wpos + whole[wi].len - pos);
            pos += parts[i].len;
            sum += parts[i].len;
        }
        assert_int_equal(sum, c + 1 < nparts ? chunk : total - c * chunk);
    }
    assert_int_equal(pos, total);
    free(parts);
}

/* All shares of one node's round: each sorted, non-empty, never written-through pieces;
 * together every kept byte once, from its winner's log; share r ends before share r+1
 * begins; sizes differ by at most one byte and add up to the total. The whole list (size 0)
 * holds every kept byte at the same position in the byte order as the shares do. */
static void check_shares(const struct bblog_npiece *in, size_t n, int size)
{
    int owner[SPACE], seen[SPACE];
    uint64_t kept = 0, prev_end = 0, smin = UINT64_MAX, smax = 0, wt, wown, pos = 0, wpos = 0;
    struct bblog_npiece p[MAXN], *out, *whole, *parts;
    size_t wk, wi = 0, starts[MAXN + 2];

    share_model(in, n, owner);
    memset(seen, 0, sizeof(seen));
    for (int b = 0; b < SPACE; b++)
        kept += owner[b] >= 0;
    memcpy(p, in, n * sizeof(*p));
    assert_int_equal(bblog_share_cut(p, n, 0, 0, &whole, &wk, &wt, &wown), 0);
    assert_int_equal(wt, kept);
    /* All shares at once, as the node's first process cuts them: share r is part r. */
    assert_int_equal(bblog_share_parts(whole, wk, wt, (size_t) size, 0, &parts, starts), 0);
    for (int r = 0; r < size; r++) {
        uint64_t t, own, own_model = 0, sum = 0;
        size_t k;

        memcpy(p, in, n * sizeof(*p));
        assert_int_equal(bblog_share_cut(p, n, r, size, &out, &k, &t, &own), 0);
        assert_int_equal(t, kept);
        for (int b = 0; b < SPACE; b++)
            own_model += owner[b] >= 0 && in[owner[b]].who == r;
        assert_int_equal(own, own_model);
        assert_true(k == 0 || out != NULL);
        assert_int_equal(starts[r + 1] - starts[r], k);
        for (size_t i = 0; i < k; i++) {
            const struct bblog_npiece *q = &parts[starts[r] + i];
            assert_true(q->off == out[i].off && q->len == out[i].len && q->src == out[i].src &&
                        q->stamp == out[i].stamp && q->who == out[i].who);
        }
        for (size_t i = 0; i < k; i++) {
            assert_true(out[i].len > 0);
            assert_true(out[i].who >= 0);
            assert_true(out[i].off >= prev_end);    /* sorted, disjoint, after earlier shares */
            prev_end = out[i].off + out[i].len;
            for (uint64_t b = out[i].off; b < out[i].off + out[i].len; b++) {
                const struct bblog_npiece *o;
                assert_true(b < SPACE);
                assert_true(owner[b] >= 0);
                o = &in[owner[b]];
                assert_int_equal(out[i].who, o->who);
                assert_int_equal(out[i].src + (b - out[i].off), o->src + (b - o->off));
                seen[b]++;
                /* the same byte, next in the whole list */
                while (wi < wk && pos >= wpos + whole[wi].len)
                    wpos += whole[wi++].len;
                assert_true(wi < wk);
                assert_int_equal(whole[wi].off + (pos - wpos), b);
                assert_int_equal(whole[wi].who, o->who);
                assert_int_equal(whole[wi].src + (pos - wpos), o->src + (b - o->off));
                pos++;
            }
            sum += out[i].len;
        }
        free(out);
        smin = sum < smin ? sum : smin;
        smax = sum > smax ? sum : smax;
    }
    for (int b = 0; b < SPACE; b++)
        assert_int_equal(seen[b], owner[b] >= 0);
    assert_true(smax - smin <= 1);
    assert_int_equal(pos, kept);
    free(parts);
    check_chunks(whole, wk, wt, (uint64_t) size);
    free(whole);
}

/* Share r of size of a copy of in[0..n) into res; returns its pieces. */
static size_t cut1(const struct bblog_npiece *in, size_t n, int r, int size, uint64_t *t,
                   struct bblog_npiece *res)
{
    struct bblog_npiece p[8], *out;
    uint64_t own;
    size_t k;

    memcpy(p, in, n * sizeof(*p));
    assert_int_equal(bblog_share_cut(p, n, r, size, &out, &k, t, &own), 0);
    if (k)
        memcpy(res, out, k * sizeof(*out));
    free(out);
    return k;
}

static void expect_piece(const struct bblog_npiece *s, uint64_t off, uint64_t len,
                         uint64_t src, int who)
{
    assert_int_equal(s->off, off);
    assert_int_equal(s->len, len);
    assert_int_equal(s->src, src);
    assert_int_equal(s->who, who);
}

static void test_share_examples(void **state)
{
    /* Three processes' strided pieces of 4 bytes: 12 bytes in shares of 4. */
    const struct bblog_npiece strided[] = {
        {0, 4, 100, 0, 0}, {4, 4, 200, 0, 1}, {8, 4, 300, 0, 2},
    };
    /* Overlap at one stamp: the lower who keeps [10, 15). */
    const struct bblog_npiece same[] = {
        {10, 10, 0, 0, 1}, {5, 10, 50, 0, 0},
    };
    /* A later fill over the middle of an older piece, and bytes written through later. */
    const struct bblog_npiece later[] = {
        {0, 30, 1000, 1, 0}, {10, 5, 0, 2, 1}, {20, 5, 0, 3, -1},
    };
    /* One byte among four shares: only the last one gets it. */
    const struct bblog_npiece tiny[] = {
        {0, 1, 100, 0, 0}, {4, 0, 200, 0, 1},
    };
    struct bblog_npiece s[8];
    uint64_t t;

    (void) state;
    assert_int_equal(cut1(strided, 3, 1, 3, &t, s), 1);
    assert_int_equal(t, 12);
    expect_piece(&s[0], 4, 4, 200, 1);
    assert_int_equal(cut1(strided, 3, 0, 2, &t, s), 2);        /* bytes 0..5 */
    expect_piece(&s[0], 0, 4, 100, 0);
    expect_piece(&s[1], 4, 2, 200, 1);
    assert_int_equal(cut1(strided, 3, 1, 2, &t, s), 2);        /* bytes 6..11 */
    expect_piece(&s[0], 6, 2, 202, 1);
    expect_piece(&s[1], 8, 4, 300, 2);
    assert_int_equal(cut1(same, 2, 0, 1, &t, s), 2);
    assert_int_equal(t, 15);
    expect_piece(&s[0], 5, 10, 50, 0);
    expect_piece(&s[1], 15, 5, 5, 1);
    /* [0,10) and [15,20) of 0, [10,15) of 1, [20,25) written through, [25,30) of 0 */
    assert_int_equal(cut1(later, 3, 0, 1, &t, s), 4);
    assert_int_equal(t, 25);
    expect_piece(&s[0], 0, 10, 1000, 0);
    expect_piece(&s[1], 10, 5, 0, 1);
    expect_piece(&s[2], 15, 5, 1015, 0);
    expect_piece(&s[3], 25, 5, 1025, 0);
    assert_int_equal(cut1(strided, 0, 0, 4, &t, s), 0);
    assert_int_equal(t, 0);
    assert_int_equal(cut1(tiny, 2, 0, 4, &t, s), 0);
    assert_int_equal(cut1(tiny, 2, 3, 4, &t, s), 1);
    expect_piece(&s[0], 0, 1, 100, 0);
}

static void test_share_random(void **state)
{
    struct bblog_npiece p[MAXN];

    (void) state;
    rnd_state = 42;
    for (int iter = 0; iter < 4000; iter++) {
        size_t n = (size_t) rnd_below(MAXN / 2 + 1);
        int size = 1 + (int) rnd_below(MAXP);
        int kind = iter % 5;    /* 0: strided, disjoint (IOR); 1: one stamp; 2, 3: stamps;
                                 * 4: as the node exchange hands them over, each process's
                                 * pieces in file order, one process after the other */

        for (size_t i = 0; i < n; i++) {
            p[i].who = (int) rnd_below((uint64_t) size);
            if (kind == 0) {
                p[i].off = i * 5;
                p[i].len = 5;
            } else {
                p[i].off = rnd_below(SPACE - 40);
                p[i].len = rnd_below(40);
            }
            p[i].stamp = kind >= 2 ? (uint32_t) rnd_below(4) : 0;
            if (kind == 3 && rnd_below(5) == 0)
                p[i].who = -1;
            p[i].src = rnd_below(1u << 20);
        }
        if (kind == 4) {
            /* sorted by (who, off): runs per process, like an allgather of sorted lists */
            for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && (p[j - 1].who > p[j].who ||
                                             (p[j - 1].who == p[j].who &&
                                              p[j - 1].off > p[j].off)); j--) {
                    struct bblog_npiece t = p[j];
                    p[j] = p[j - 1];
                    p[j - 1] = t;
                }
        }
        check_shares(p, n, size);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straddle_and_split),
        cmocka_unit_test(test_cut_between_extents),
        cmocka_unit_test(test_split_after_gap),
        cmocka_unit_test(test_one_empty),
        cmocka_unit_test(test_all_empty),
        cmocka_unit_test(test_one_huge_extent),
        cmocka_unit_test(test_budget_one),
        cmocka_unit_test(test_budget_covers_all),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_round_end_model),
        cmocka_unit_test(test_random_plans),
        cmocka_unit_test(test_share_examples),
        cmocka_unit_test(test_share_random),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
