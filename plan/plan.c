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
#include <string.h>

#include "bblog_grow.h"
#include "bblog_plan.h"

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
    if (bblog_grow((void **) v, cap, *n + 1, sizeof(**v)) != 0)
        return ENOMEM;
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

/*
 * Sorts p by npiece_cmp. The node exchange hands over the processes' lists one after the
 * other, each already in file order: a few ascending runs, merged pairwise in O(n log runs)
 * through tmp (n entries). Otherwise, or without tmp, qsort.
 */
static void sort_pieces(struct bblog_npiece *p, size_t n, struct bblog_npiece *tmp)
{
    size_t runs = 1, i;

    for (i = 1; i < n; i++)
        runs += npiece_cmp(&p[i - 1], &p[i]) > 0;
    if (runs == 1)
        return;
    if (!tmp || runs > 64) {
        qsort(p, n, sizeof(*p), npiece_cmp);
        return;
    }
    /* Bottom-up: each pass merges neighbouring runs (found again each pass) into tmp. */
    while (runs > 1) {
        size_t a = 0, out = 0;
        runs = 0;
        while (a < n) {
            size_t b = a + 1, c, x, y;
            while (b < n && npiece_cmp(&p[b - 1], &p[b]) <= 0)
                b++;
            c = b < n ? b + 1 : n;
            while (c < n && npiece_cmp(&p[c - 1], &p[c]) <= 0)
                c++;
            for (x = a, y = b; x < b || y < c;)
                tmp[out++] = y >= c || (x < b && npiece_cmp(&p[x], &p[y]) <= 0) ? p[x++] : p[y++];
            runs++;
            a = c;
        }
        memcpy(p, tmp, n * sizeof(*p));
    }
}

/* Whether piece a wins a byte over piece b (see bblog_share_cut; the last rule only orders
 * pieces of one process, which never overlap in a drain). */
static int wins(const struct bblog_npiece *a, const struct bblog_npiece *b)
{
    if (a->stamp != b->stamp)
        return a->stamp > b->stamp;
    if ((a->who >= 0) != (b->who >= 0))
        return a->who >= 0;
    if (a->who != b->who)
        return a->who < b->who;
    return a->off != b->off ? a->off < b->off : a->src < b->src;
}

/* Binary heaps of piece indices: by precedence (max first) or by end (min first). */
struct heap {
    size_t *v, n;
};

static int heap_before(const struct bblog_npiece *p, int by_end, size_t a, size_t b)
{
    return by_end ? p[a].off + p[a].len < p[b].off + p[b].len : wins(&p[a], &p[b]);
}

static void heap_push(struct heap *h, const struct bblog_npiece *p, int by_end, size_t x)
{
    size_t i = h->n++;

    while (i > 0 && heap_before(p, by_end, x, h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
}

static void heap_pop(struct heap *h, const struct bblog_npiece *p, int by_end)
{
    size_t x = h->v[--h->n], i = 0;

    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && heap_before(p, by_end, h->v[c + 1], h->v[c]))
            c++;
        if (!heap_before(p, by_end, h->v[c], x))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0)
        h->v[i] = x;
}

/* Appends [off, off+len) of piece w to r, merged with the last entry when it continues it. */
static void emit(struct bblog_npiece *r, size_t *k, const struct bblog_npiece *w, uint64_t off,
                 uint64_t len)
{
    uint64_t src = w->src + (off - w->off);

    if (*k > 0 && r[*k - 1].who == w->who && r[*k - 1].off + r[*k - 1].len == off &&
        r[*k - 1].src + r[*k - 1].len == src) {
        r[*k - 1].len += len;
        return;
    }
    r[*k].off = off;
    r[*k].len = len;
    r[*k].src = src;
    r[*k].stamp = w->stamp;
    r[*k].who = w->who;
    (*k)++;
}

/*
 * Overlaps: a sweep over the piece boundaries, with the live pieces in two heaps (by
 * precedence, and by end); each stretch between two boundaries goes to the live piece of
 * highest precedence. At most 2n - 1 stretches, so r needs 2n entries.
 */
static int resolve(const struct bblog_npiece *p, size_t n, struct bblog_npiece *r, size_t *k)
{
    struct heap win = { malloc(n * sizeof(size_t)), 0 }, end = { malloc(n * sizeof(size_t)), 0 };
    size_t i = 0;
    uint64_t x = 0;

    *k = 0;
    if (!win.v || !end.v) {
        free(win.v);
        free(end.v);
        return ENOMEM;
    }
    while (i < n || end.n > 0) {
        uint64_t next;
        if (end.n == 0)
            x = p[i].off;
        while (i < n && p[i].off == x) {
            heap_push(&win, p, 0, i);
            heap_push(&end, p, 1, i);
            i++;
        }
        while (win.n > 0 && p[win.v[0]].off + p[win.v[0]].len <= x)
            heap_pop(&win, p, 0);               /* ended: dropped once it surfaces */
        next = p[end.v[0]].off + p[end.v[0]].len;
        if (i < n && p[i].off < next)
            next = p[i].off;
        if (p[win.v[0]].who >= 0)
            emit(r, k, &p[win.v[0]], x, next - x);
        x = next;
        while (end.n > 0 && p[end.v[0]].off + p[end.v[0]].len <= x)
            heap_pop(&end, p, 1);
    }
    free(win.v);
    free(end.v);
    return 0;
}

/* Byte k * total / size of the node's bytes, without overflow for any total. */
static uint64_t share_bound(uint64_t total, int k, int size)
{
    return total / (uint64_t) size * (uint64_t) k + total % (uint64_t) size * (uint64_t) k /
        (uint64_t) size;
}

/* Appends to out the bytes at positions [lo, hi) of the order of the kept pieces r[0..k),
 * scanning from r[*i], whose first byte is at position *pos; leaves *i and *pos at the first
 * piece that reaches past hi (a piece cut at hi starts the next range). Returns the number of
 * pieces appended. out may be r: an entry is written only after it has been read. */
static size_t cut_range(const struct bblog_npiece *r, size_t k, size_t *i, uint64_t *pos,
                        uint64_t lo, uint64_t hi, struct bblog_npiece *out)
{
    size_t m = 0;

    while (*i < k && *pos < hi) {
        struct bblog_npiece e = r[*i];
        uint64_t a = *pos > lo ? *pos : lo;
        uint64_t b = *pos + e.len < hi ? *pos + e.len : hi;

        if (b > a) {
            out[m] = e;
            out[m].off = e.off + (a - *pos);
            out[m].len = b - a;
            out[m].src = e.src + (a - *pos);
            m++;
        }
        if (*pos + e.len > hi)
            break;
        *pos += e.len;
        (*i)++;
    }
    return m;
}

int bblog_share_cut(struct bblog_npiece *p, size_t n, int rank, int size,
                    struct bblog_npiece **out, size_t *nout, uint64_t *total,
                    uint64_t *own_kept)
{
    struct bblog_npiece *r;
    uint64_t reach = 0, sum = 0, lo, hi, pos = 0;
    size_t i, m = 0, k = 0;
    int overlap = 0;

    *out = NULL;
    *nout = 0;
    *total = 0;
    *own_kept = 0;
    /* Empty pieces out; sorted by offset. */
    for (i = 0; i < n; i++)
        if (p[i].len > 0)
            p[m++] = p[i];
    if (m == 0)
        return 0;
    /* r serves as the merge buffer first: it has room for m entries in any case. */
    r = malloc(2 * m * sizeof(*r));
    if (!r)
        return ENOMEM;
    sort_pieces(p, m, r);
    for (i = 0; i < m; i++) {
        overlap |= p[i].off < reach || p[i].who < 0;
        if (p[i].off + p[i].len > reach)
            reach = p[i].off + p[i].len;
    }
    if (overlap) {
        if (resolve(p, m, r, &k) != 0) {
            free(r);
            return ENOMEM;
        }
    } else {
        memcpy(r, p, m * sizeof(*r));
        k = m;
    }
    for (i = 0; i < k; i++) {
        sum += r[i].len;
        if (r[i].who == rank)
            *own_kept += r[i].len;
    }
    *total = sum;
    lo = size > 0 ? share_bound(sum, rank, size) : 0;
    hi = size > 0 ? share_bound(sum, rank + 1, size) : sum;
    i = 0;
    m = cut_range(r, k, &i, &pos, lo, hi, r);
    if (m == 0) {
        free(r);
        r = NULL;
    }
    *out = r;
    *nout = m;
    return 0;
}

int bblog_share_parts(const struct bblog_npiece *kept, size_t k, uint64_t total, size_t nparts,
                      uint64_t chunk, struct bblog_npiece **out, size_t *starts)
{
    struct bblog_npiece *r;
    uint64_t pos = 0;
    size_t c, i = 0, m = 0;

    *out = NULL;
    /* Each bound inside a piece cuts it in two: at most k + nparts - 1 pieces. */
    r = malloc((k + nparts + 1) * sizeof(*r));
    if (!r)
        return ENOMEM;
    for (c = 0; c < nparts; c++) {
        uint64_t lo, hi;
        if (chunk > 0) {
            lo = c * chunk < total ? c * chunk : total;
            hi = total - lo > chunk ? lo + chunk : total;
        } else {
            lo = share_bound(total, (int) c, (int) nparts);
            hi = share_bound(total, (int) c + 1, (int) nparts);
        }
        starts[c] = m;
        m += cut_range(kept, k, &i, &pos, lo, hi, r + m);
    }
    starts[nparts] = m;
    *out = r;
    return 0;
}
