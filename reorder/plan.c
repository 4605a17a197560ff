/*
 * Cutting a collective drain into rounds (DESIGN.md section 6, seed paper 000 sections IV.D-E).
 *
 * Each round is one file range [start, end) shared by every process, so that two-phase I/O sees
 * a dense region; a process holds at most budget bytes in a round. Rounds are greedy: every
 * process proposes the end of the largest round it can take from start, and the smallest
 * proposal wins (the driver does this with one MPI_Allreduce MIN per round). A process cuts
 * only between its extents, unless a single extent is larger than the budget, which is split.
 */
#include <errno.h>
#include <stdlib.h>

#include "bblog_reorder.h"

/* off + len, saturated: round_end cannot report bad input, it must only stay finite. */
static uint64_t seg_end(const struct bblog_seg *s)
{
    return s->len > UINT64_MAX - s->off ? UINT64_MAX : s->off + s->len;
}

uint64_t bblog_plan_round_end(const struct bblog_seg *segs, size_t nsegs, size_t *cursor,
                              uint64_t start, uint64_t budget)
{
    uint64_t acc = 0;   /* bytes of this process in [start, off of extent i) */
    size_t i = *cursor;

    /* Budget 0 cannot make progress; one byte keeps the end above start, as promised. */
    if (budget == 0)
        budget = 1;
    while (i < nsegs && seg_end(&segs[i]) <= start)
        i++;
    *cursor = i;
    for (; i < nsegs; i++) {
        uint64_t from, part;

        if (segs[i].len == 0)
            continue;
        /* The first extent may straddle start: only its part at or after start counts. */
        from = segs[i].off > start ? segs[i].off : start;
        part = seg_end(&segs[i]) - from;
        if (part <= budget - acc) {
            acc += part;
            continue;
        }
        /* Nothing of ours before it in the round: the extent alone exceeds the budget and is
         * split (from + budget < its end, no overflow). Otherwise the round stops before it;
         * acc > 0 implies from > start. */
        return acc == 0 ? from + budget : from;
    }
    return UINT64_MAX;
}

/* Sorted, non-overlapping, no wrap-around; zero-length extents are ignored. Reports the range
 * [*lo, *hi) of the data and whether there is any. */
static int check_list(const struct bblog_seg *s, size_t n, uint64_t *lo, uint64_t *hi,
                      int *any)
{
    uint64_t prev_end = 0;
    int seen = 0;

    if (n > 0 && s == NULL)
        return EINVAL;
    for (size_t i = 0; i < n; i++) {
        if (s[i].len == 0)
            continue;
        if (s[i].len > UINT64_MAX - s[i].off || (seen && s[i].off < prev_end))
            return EINVAL;
        if (!seen && (!*any || s[i].off < *lo))
            *lo = s[i].off;
        prev_end = s[i].off + s[i].len;
        seen = 1;
    }
    if (seen) {
        if (!*any || prev_end > *hi)
            *hi = prev_end;
        *any = 1;
    }
    return 0;
}

static int push_cut(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap) {
        size_t ncap = *cap < 16 ? 16 : *cap * 2;
        uint64_t *nv;

        if (ncap < *cap || ncap > SIZE_MAX / sizeof(*nv))
            return ENOMEM;
        nv = realloc(*v, ncap * sizeof(*nv));
        if (nv == NULL)
            return ENOMEM;
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = x;
    return 0;
}

int bblog_plan_rounds(const struct bblog_seg *const *lists, const size_t *counts, size_t nprocs,
                      uint64_t budget, uint64_t **cuts, size_t *ncuts)
{
    size_t *cursor = NULL;
    uint64_t *v = NULL;
    size_t n = 0;
    size_t cap = 0;
    uint64_t lo = 0;
    uint64_t hi = 0;
    uint64_t start;
    int any = 0;
    int rc = 0;

    if (cuts == NULL || ncuts == NULL || budget == 0 ||
        (nprocs > 0 && (lists == NULL || counts == NULL)))
        return EINVAL;
    *cuts = NULL;
    *ncuts = 0;
    for (size_t p = 0; p < nprocs; p++) {
        rc = check_list(lists[p], counts[p], &lo, &hi, &any);
        if (rc != 0)
            return rc;
    }
    if (!any)
        return 0;

    cursor = calloc(nprocs, sizeof(*cursor));
    if (cursor == NULL)
        return ENOMEM;
    rc = push_cut(&v, &n, &cap, lo);
    start = lo;
    while (rc == 0) {
        uint64_t end = UINT64_MAX;

        /* What the driver's MPI_Allreduce(MIN) computes. */
        for (size_t p = 0; p < nprocs; p++) {
            uint64_t e = bblog_plan_round_end(lists[p], counts[p], &cursor[p], start, budget);

            if (e < end)
                end = e;
        }
        if (end == UINT64_MAX) {
            rc = push_cut(&v, &n, &cap, hi);
            break;
        }
        rc = push_cut(&v, &n, &cap, end);
        start = end;
    }
    if (rc != 0)
        goto out_free;
    *cuts = v;
    *ncuts = n;
    v = NULL;

out_free:
    free(v);
    free(cursor);
    return rc;
}

static int npiece_cmp(const void *a, const void *b)
{
    const struct bblog_npiece *x = a, *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return (x->who > y->who) - (x->who < y->who);
}

/* Byte k * total / size of the node's bytes, without overflow for any total. */
static uint64_t share_bound(uint64_t total, int k, int size)
{
    return total / (uint64_t) size * (uint64_t) k + total % (uint64_t) size * (uint64_t) k /
        (uint64_t) size;
}

size_t bblog_share_cut(struct bblog_npiece *p, size_t n, int rank, int size, uint64_t *total)
{
    uint64_t reach = 0, sum = 0, lo, hi, pos = 0;
    size_t i, k = 0;

    qsort(p, n, sizeof(*p), npiece_cmp);
    for (i = 0; i < n; i++) {
        if (p[i].off < reach) {
            uint64_t d = reach - p[i].off < p[i].len ? reach - p[i].off : p[i].len;
            p[i].off += d;
            p[i].src += d;
            p[i].len -= d;
        }
        if (p[i].off + p[i].len > reach)
            reach = p[i].off + p[i].len;
        sum += p[i].len;
    }
    *total = sum;
    lo = share_bound(sum, rank, size);
    hi = share_bound(sum, rank + 1, size);
    /* In place: entry k is written only after entry i >= k has been read. */
    for (i = 0; i < n && pos < hi; i++) {
        struct bblog_npiece e = p[i];
        uint64_t a = pos > lo ? pos : lo;
        uint64_t b = pos + e.len < hi ? pos + e.len : hi;

        if (b > a) {
            p[k].off = e.off + (a - pos);
            p[k].len = b - a;
            p[k].src = e.src + (a - pos);
            p[k].who = e.who;
            k++;
        }
        pos += e.len;
    }
    return k;
}
