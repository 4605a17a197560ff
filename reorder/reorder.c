/*
 * Two-level reordering of flattened requests (seed paper 000, section IV.D).
 *
 * High level: every request is already sorted (MPI-IO flattens a file view into non-decreasing
 * offsets), so requests are handled as whole [first, end) ranges: they are sorted by their first
 * byte and swept into groups, a group growing while the next request starts before the largest
 * end seen in the group. Two consecutive groups therefore never interleave, and a group holding
 * one request is copied as it is.
 *
 * Low level, inside a group of k requests holding m segments: a k-way merge (min-heap of the
 * requests keyed by the offset of their next segment) delivers the segments in offset order,
 * and a sweep over the file keeps the requests whose current segment covers the sweep position
 * in a max-heap keyed by request index, so that the later request wins every byte (DESIGN.md
 * section 3). A request has at most one segment covering any byte, so both heaps hold at most k
 * entries; every step of the sweep either takes a segment from the merge or passes the end of
 * the winning segment, so a group costs O(m log k), never anything per byte.
 */
#include <errno.h>
#include <stdlib.h>

#include "bblog_grow.h"
#include "bblog_reorder.h"

/* A request that holds at least one byte, with its range [first, end) (end is exclusive). */
struct span {
    uint64_t first;
    uint64_t end;
    size_t idx;     /* index in the caller's array: the issue order, the priority on overlap */
};

/* Per request of the group being merged (indexed by its rank j inside the group). */
struct member {
    size_t req;         /* index in the caller's array */
    size_t next;        /* next segment of the request not yet taken by the merge */
    uint64_t act_off;   /* the segment last taken, which may cover the sweep position */
    uint64_t act_end;
    uint64_t act_src;
    int active;         /* 1 while j sits in the active heap */
};

/* Output under construction; append() coalesces as it goes. */
struct outbuf {
    struct bblog_seg *v;
    size_t n;
    size_t cap;
};

static int span_cmp(const void *a, const void *b)
{
    const struct span *x = a;
    const struct span *y = b;

    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    /* Ties keep issue order, which makes the sort stable. */
    if (x->idx != y->idx)
        return x->idx < y->idx ? -1 : 1;
    return 0;
}

/* Appends [off, off+len) at src, merging with the last piece when adjacent in both off and
 * src. Pieces arrive in non-decreasing, non-overlapping order, so only the last can merge. */
static int append(struct outbuf *o, uint64_t off, uint64_t len, uint64_t src)
{
    struct bblog_seg *last = o->n > 0 ? &o->v[o->n - 1] : NULL;

    if (last != NULL && last->off + last->len == off && last->src + last->len == src) {
        last->len += len;
        return 0;
    }
    if (bblog_grow((void **) &o->v, &o->cap, o->n + 1, sizeof(*o->v)) != 0)
        return ENOMEM;
    o->v[o->n].off = off;
    o->v[o->n].len = len;
    o->v[o->n].src = src;
    o->n++;
    return 0;
}

/* Skips zero-length segments: returns the first segment at or after pos that holds a byte. */
static size_t next_nonempty(const struct bblog_req *r, size_t pos)
{
    while (pos < r->nsegs && r->segs[pos].len == 0)
        pos++;
    return pos;
}

/*
 * Merge heap: a min-heap of group ranks j, ordered by the offset of the next segment of j (kept
 * in the node, so that sifting does not chase pointers). Ties go to either; the sweep does not
 * depend on the order of equal offsets.
 */
struct mnode {
    uint64_t off;
    size_t j;
};

static void merge_down(struct mnode *h, size_t n, size_t i)
{
    struct mnode x = h[i];

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1].off < h[c].off)
            c++;
        if (h[c].off >= x.off)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/*
 * Active heap: a max-heap of group ranks j by request index (the caller's array index). Entries
 * are dropped lazily: an entry whose segment ends at or before the sweep position is popped
 * only when it reaches the top. Replacing the segment of an entry keeps its key, so a request
 * that moves on to its next segment is updated in place without touching the heap.
 */
static void active_up(const struct member *mb, size_t *h, size_t i)
{
    size_t x = h[i];

    while (i > 0) {
        size_t p = (i - 1) / 2;

        if (mb[h[p]].req >= mb[x].req)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static void active_down(const struct member *mb, size_t *h, size_t n, size_t i)
{
    size_t x = h[i];

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= n)
            break;
        if (c + 1 < n && mb[h[c + 1]].req > mb[h[c]].req)
            c++;
        if (mb[h[c]].req <= mb[x].req)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/*
 * Low-level reordering of one group g[0..k) (k >= 2). mb, mh and ah are scratch arrays of at
 * least k entries. Invariants of the sweep at position x: every segment starting before x has
 * been taken from the merge; every request whose taken segment covers x is in the active heap;
 * the output holds exactly the winners of the bytes before x.
 */
static int merge_group(const struct bblog_req *reqs, const struct span *g, size_t k,
                       struct member *mb, struct mnode *mh, size_t *ah, struct outbuf *o)
{
    size_t nm = 0;
    size_t na = 0;
    uint64_t x = g[0].first;
    int rc = 0;

    for (size_t j = 0; j < k; j++) {
        mb[j].req = g[j].idx;
        mb[j].next = next_nonempty(&reqs[g[j].idx], 0);
        mb[j].active = 0;
        mh[nm].off = reqs[g[j].idx].segs[mb[j].next].off;
        mh[nm].j = j;
        nm++;
    }
    for (size_t i = nm / 2; i-- > 0;)
        merge_down(mh, nm, i);

    for (;;) {
        /* Take every segment that starts at or before x. */
        while (nm > 0 && mh[0].off <= x) {
            size_t j = mh[0].j;
            const struct bblog_req *r = &reqs[mb[j].req];
            const struct bblog_seg *s = &r->segs[mb[j].next];

            /* The previous segment of j, if still in the heap, ended at or before s->off <= x:
             * it is dead, and s replaces it under the same key. */
            mb[j].act_off = s->off;
            mb[j].act_end = s->off + s->len;
            mb[j].act_src = s->src;
            if (!mb[j].active) {
                mb[j].active = 1;
                ah[na] = j;
                active_up(mb, ah, na);
                na++;
            }
            mb[j].next = next_nonempty(r, mb[j].next + 1);
            if (mb[j].next == r->nsegs)
                mh[0] = mh[--nm];
            else
                mh[0].off = r->segs[mb[j].next].off;
            if (nm > 0)
                merge_down(mh, nm, 0);
        }
        /* Drop winners that no longer cover x. */
        while (na > 0 && mb[ah[0]].act_end <= x) {
            mb[ah[0]].active = 0;
            ah[0] = ah[--na];
            if (na > 0)
                active_down(mb, ah, na, 0);
        }
        if (na == 0) {
            if (nm == 0)
                break;
            x = mh[0].off;
            continue;
        }
        /* The top wins [x, nx): up to its end, or up to the next segment start, where a later
         * request may take over. */
        {
            const struct member *w = &mb[ah[0]];
            uint64_t nx = w->act_end;

            if (nm > 0 && mh[0].off < nx)
                nx = mh[0].off;
            rc = append(o, x, nx - x, w->act_src + (x - w->act_off));
            if (rc != 0)
                break;
            x = nx;
        }
    }
    return rc;
}

/* Checks one request and measures it: 0 and its range and byte-holding segment count, or
 * EINVAL when its segments overlap, go backwards, or wrap around 2^64 in off or src. */
static int measure(const struct bblog_req *r, uint64_t *first, uint64_t *end, size_t *nfull)
{
    uint64_t prev_end = 0;
    size_t cnt = 0;

    if (r->nsegs > 0 && r->segs == NULL)
        return EINVAL;
    for (size_t i = 0; i < r->nsegs; i++) {
        const struct bblog_seg *s = &r->segs[i];

        /* Zero-length segments carry nothing and are ignored, wherever they sit. */
        if (s->len == 0)
            continue;
        if (s->len > UINT64_MAX - s->off || s->len > UINT64_MAX - s->src)
            return EINVAL;
        if (cnt > 0 && s->off < prev_end)
            return EINVAL;
        if (cnt == 0)
            *first = s->off;
        prev_end = s->off + s->len;
        cnt++;
    }
    *end = prev_end;
    *nfull = cnt;
    return 0;
}

/* Input with no byte at all (no request, or only zero-length segments) gives *out = NULL and
 * *nout = 0, as bblog_plan_rounds does for no data; EINVAL for malformed requests. */
int bblog_reorder(const struct bblog_req *reqs, size_t nreqs, struct bblog_seg **out,
                  size_t *nout)
{
    struct span *sp = NULL;
    struct member *mb = NULL;
    struct mnode *mh = NULL;
    size_t *ah = NULL;
    struct outbuf o = { NULL, 0, 0 };
    size_t nsp = 0;
    size_t total = 0;
    size_t maxk = 0;
    int rc = 0;

    if (out == NULL || nout == NULL || (nreqs > 0 && reqs == NULL))
        return EINVAL;
    *out = NULL;
    *nout = 0;
    if (nreqs == 0)
        return 0;

    if (nreqs > SIZE_MAX / sizeof(*sp))
        return ENOMEM;
    sp = malloc(nreqs * sizeof(*sp));
    if (sp == NULL)
        return ENOMEM;
    for (size_t i = 0; i < nreqs; i++) {
        size_t cnt = 0;

        rc = measure(&reqs[i], &sp[nsp].first, &sp[nsp].end, &cnt);
        if (rc != 0)
            goto out_free;
        if (cnt == 0)
            continue;
        sp[nsp].idx = i;
        nsp++;
        total += cnt;
    }
    if (nsp == 0)
        goto out_free;

    /* High level: order the requests by first byte. */
    qsort(sp, nsp, sizeof(*sp), span_cmp);

    /* Size the scratch for the largest group, and the output for the no-overlap case (the
     * append grows it when overlaps split segments). */
    for (size_t i = 0; i < nsp;) {
        uint64_t gend = sp[i].end;
        size_t j = i + 1;

        while (j < nsp && sp[j].first < gend) {
            if (sp[j].end > gend)
                gend = sp[j].end;
            j++;
        }
        if (j - i > maxk)
            maxk = j - i;
        i = j;
    }
    if (maxk > 1) {
        mb = malloc(maxk * sizeof(*mb));
        mh = malloc(maxk * sizeof(*mh));
        ah = malloc(maxk * sizeof(*ah));
        if (mb == NULL || mh == NULL || ah == NULL) {
            rc = ENOMEM;
            goto out_free;
        }
    }
    if (total > SIZE_MAX / sizeof(*o.v)) {
        rc = ENOMEM;
        goto out_free;
    }
    o.v = malloc(total * sizeof(*o.v));
    if (o.v == NULL) {
        rc = ENOMEM;
        goto out_free;
    }
    o.cap = total;

    /* Groups never interleave: reorder inside each, concatenate in order. */
    for (size_t i = 0; i < nsp && rc == 0;) {
        uint64_t gend = sp[i].end;
        size_t j = i + 1;

        while (j < nsp && sp[j].first < gend) {
            if (sp[j].end > gend)
                gend = sp[j].end;
            j++;
        }
        if (j - i == 1) {
            const struct bblog_req *r = &reqs[sp[i].idx];

            for (size_t s = 0; s < r->nsegs && rc == 0; s++) {
                if (r->segs[s].len > 0)
                    rc = append(&o, r->segs[s].off, r->segs[s].len, r->segs[s].src);
            }
        } else {
            rc = merge_group(reqs, &sp[i], j - i, mb, mh, ah, &o);
        }
        i = j;
    }
    if (rc != 0)
        goto out_free;

    /* Coalescing and overlaps usually leave slack: give it back. */
    if (o.n < o.cap) {
        struct bblog_seg *nv = realloc(o.v, o.n * sizeof(*nv));

        if (nv != NULL)
            o.v = nv;
    }
    *out = o.v;
    *nout = o.n;
    o.v = NULL;

out_free:
    free(o.v);
    free(ah);
    free(mh);
    free(mb);
    free(sp);
    return rc;
}
