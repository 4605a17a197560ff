/*
 * The interval index (DESIGN.md section 5): a B+tree of extents keyed by their file offset
 * (Bayer & McCreight 1972; the B+tree variant with every record in a chained leaf level as
 * surveyed by Comer, "The Ubiquitous B-Tree", 1979), with wide nodes prefetched whole before
 * they are searched (Chen, Gibbons & Mowry, "Improving Index Performance through Prefetching",
 * SIGMOD 2001).
 *
 * Why a B+tree: a binary tree of 2 million extents is ~21 levels deep and each level is a cache
 * miss, so a random insert costs ~21 misses. Here a leaf holds up to LEAF_CAP extents in sorted
 * arrays and an inner node up to INNER_CAP children: the same index is 4 levels deep, the upper
 * two stay in cache, and the lines of each node below are fetched in parallel (one miss latency
 * per node, not one per line). Leaves are chained both ways so that iteration, neighbour lookups
 * and drains walk arrays, not pointers.
 *
 * Why a plain start-keyed tree suffices: the index never holds two extents that share a byte
 * (last writer wins, enforced on every insert), so extents sorted by start are also sorted by
 * end. The extents overlapping [off, end) are therefore the predecessor of off (if it reaches
 * past off) followed by a run of successors starting before end; no augmented maximum, as in an
 * interval tree for overlapping intervals, is needed.
 *
 * Separators are loose: inner->key[i] only has to lie above every key under child[i] and at or
 * below every key under child[i + 1]. Deleting extents therefore never updates a separator
 * (only merging leaves does); the few changes that raise the last key of a leaf (an extent
 * losing its head) or lower its first (an extent growing to the left) past the enclosing
 * separator move that one separator, found on the descent path (raise_hi(), lower_lo()). The
 * separator bounding a leaf from above (below) is the one in the deepest ancestor where the
 * leaf's path is not the last (first) child: deeper separators are tighter, because they
 * satisfy the same rule inside the shallower one's subtree.
 *
 * Every change is planned before it is made: the nodes an insert may need (a leaf and a chain of
 * full inner nodes to split) are reserved first, then the tree is modified with no failure point
 * in between, so ENOMEM leaves the index unchanged. An operation allocates only to add an entry
 * (a new extent, or the tail of a split extent); trimming, joining and reusing a covered entry
 * never do, and removing entries only frees (merging and borrowing keep the tree balanced).
 *
 * Invariants (checked by bblog_idx_check()):
 *   shape  - every leaf is at depth height; an inner node has 2..INNER_CAP children, and at
 *            least INNER_MIN unless it is the root; a leaf other than the root holds
 *            1..LEAF_CAP extents and at least LEAF_MIN unless it is the last one (appending
 *            at the end fills leaves completely, so the last may hold few). Hence memory per
 *            extent is bounded (at most sizeof(leaf) / LEAF_MIN plus the inner nodes, about
 *            50 bytes, whatever sequence of operations ran) and the height is logarithmic.
 *   keys   - for every inner node and i: every key under child[i] < key[i] <= every key under
 *            child[i + 1]. The leaf chain (next/prev) lists the leaves in tree order; last is
 *            the rightmost leaf.
 *   order  - in file order each extent has len > 0, off + len and log_off + len do not
 *            overflow, and it ends at or before the next one starts (no two share a byte).
 *   canon  - no two neighbours are contiguous both in the file and in the log
 *            (a.off + a.len == b.off && a.log_off + a.len == b.log_off); together with the
 *            rules above this makes the set of extents a function of the file->log mapping
 *            alone: the maximal runs of bytes that are contiguous in the file and in the log.
 *   totals - count is the number of extents, bytes the sum of their len; hint is NULL or a
 *            leaf of the tree with hint_pos < its n.
 *   pool   - every node allocated is in the tree or on a free list, and memory is this
 *            struct plus every node allocated.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bblog_err.h"
#include "bblog_index.h"

/*
 * Node sizes. 64 extents make a 1560-byte leaf whose search touches only the 512-byte off array,
 * and 64 children a 1024-byte inner node; both are a few dozen lines that a prefetch brings in
 * at once. The unit tests also build this file with capacity 4 to drive every split and merge
 * through deep trees (test_index_small in index.mk).
 */
#ifndef BBLOG_IDX_LEAF_CAP
#define BBLOG_IDX_LEAF_CAP 64
#endif
#ifndef BBLOG_IDX_INNER_CAP
#define BBLOG_IDX_INNER_CAP 64
#endif
#define LEAF_CAP BBLOG_IDX_LEAF_CAP
#define LEAF_MIN (LEAF_CAP / 2)
#define INNER_CAP BBLOG_IDX_INNER_CAP
#define INNER_MIN (INNER_CAP / 2)

/*
 * Inner levels at most. The root has two children or more, and the subtree of its first child
 * holds neither the last leaf nor the root, so a tree of height h holds at least
 * INNER_MIN^(h-1) * LEAF_MIN extents; with each extent taking 24 bytes of a leaf no address
 * space holds 2^60 of them. That bounds h to 11 with the default sizes and 59 with capacity 4.
 */
#define MAX_HEIGHT (INNER_CAP >= 64 ? 12 : 60)

/* Nodes freed by merges that are kept for the next split instead of going back to malloc. */
#define SPARE_LEAVES 2
#define SPARE_INNER 2

_Static_assert(LEAF_CAP >= 4 && LEAF_CAP % 2 == 0, "a split or merge needs room for 2");
_Static_assert(INNER_CAP >= 4 && INNER_CAP % 2 == 0, "a split or merge needs room for 2");

struct idx_leaf {
    unsigned n;                 /* extents in use, [0, n) sorted by off */
    struct idx_leaf *prev;      /* leaf chain in file order; free list: next only */
    struct idx_leaf *next;
    uint64_t off[LEAF_CAP];     /* searched alone: kept apart from len and log_off */
    uint64_t len[LEAF_CAP];
    uint64_t log_off[LEAF_CAP];
};

struct idx_inner {
    unsigned n;                 /* children in use */
    uint64_t key[INNER_CAP - 1];        /* key[i] separates child[i] from child[i + 1] */
    void *child[INNER_CAP];     /* leaves at depth height - 1, else inner nodes;
                                 * free list: next in child[0] */
};

/* Where a descent went: node[d] is the inner node at depth d, slot[d] the child taken there. */
struct idx_path {
    struct idx_inner *node[MAX_HEIGHT];
    unsigned slot[MAX_HEIGHT];
    struct idx_leaf *leaf;
};

struct bblog_index {
    void *root;                 /* NULL (no node yet), the only leaf, or an inner node */
    unsigned height;            /* inner levels above the leaves */
    struct idx_leaf *last;      /* rightmost leaf, NULL iff root is */
    struct idx_leaf *hint;      /* leaf of the extent the last insert wrote, or NULL */
    unsigned hint_pos;
    uint64_t bytes;             /* sum of len over the extents */
    size_t count;               /* extents */

    struct idx_leaf *free_leaves;       /* linked through next */
    struct idx_inner *free_inner;       /* linked through child[0] */
    size_t nfree_leaves, nfree_inner;
    size_t nleaves, ninner;     /* nodes allocated: in the tree or free */
    size_t memory;              /* this struct plus every node allocated, in bytes */
};

/* Small helpers. */

static inline uint64_t leaf_end(const struct idx_leaf *l, unsigned i)
{
    return l->off[i] + l->len[i];
}

static inline void leaf_set(struct idx_leaf *l, unsigned i, uint64_t off, uint64_t len,
                            uint64_t log_off)
{
    l->off[i] = off;
    l->len[i] = len;
    l->log_off[i] = log_off;
}

/* Moves cnt extents from src[si] to dst[di]; the ranges may overlap. */
static inline void leaf_move(struct idx_leaf *dst, unsigned di, const struct idx_leaf *src,
                             unsigned si, unsigned cnt)
{
    memmove(&dst->off[di], &src->off[si], cnt * sizeof(dst->off[0]));
    memmove(&dst->len[di], &src->len[si], cnt * sizeof(dst->len[0]));
    memmove(&dst->log_off[di], &src->log_off[si], cnt * sizeof(dst->log_off[0]));
}

/* First i in [0, n] with a[i] >= x (a sorted). Branch-free: the compiler emits a cmov. */
static inline unsigned lower_bound(const uint64_t *a, unsigned n, uint64_t x)
{
    const uint64_t *base = a;

    if (n == 0)
        return 0;
    /* The answer stays in [base, base + n]. */
    while (n > 1) {
        unsigned half = n / 2;

        base = base[half] < x ? base + half : base;
        n -= half;
    }
    return (unsigned)(base - a) + (*base < x);
}

/* First i in [0, n] with a[i] > x, for n >= 1 (the keys of an inner node). */
static inline unsigned upper_bound(const uint64_t *a, unsigned n, uint64_t x)
{
    const uint64_t *base = a;

    while (n > 1) {
        unsigned half = n / 2;

        base = base[half] <= x ? base + half : base;
        n -= half;
    }
    return (unsigned)(base - a) + (*base <= x);
}

/* Starts loading [p, p + bytes) so that the search that follows waits for one miss, not many. */
static inline void prefetch(const void *p, size_t bytes)
{
    const char *c = p;
    size_t i;

    for (i = 0; i < bytes; i += 64)
        __builtin_prefetch(c + i);
}

/* A leaf search reads n and off[]; an insert then moves the tail of all three arrays. */
#define LEAF_PREFETCH sizeof(struct idx_leaf)

/*
 * The pool: plain malloc (the tests wrap it to inject failures), with free lists so that clear()
 * keeps the memory and a split soon after a merge reuses the node the merge gave back.
 */

/*
 * Makes sure the free lists hold at least the given numbers of nodes. All or nothing: on
 * ENOMEM what this call allocated is freed again, so the index (memory included) is unchanged.
 */
static int pool_reserve(struct bblog_index *idx, size_t leaves, size_t inner)
{
    struct idx_leaf *new_leaves = NULL, *l;
    struct idx_inner *new_inner = NULL, *in;
    size_t nl = 0, ni = 0;

    while (idx->nfree_leaves + nl < leaves) {
        l = malloc(sizeof(*l));
        if (l == NULL)
            goto fail;
        l->next = new_leaves;
        new_leaves = l;
        nl++;
    }
    while (idx->nfree_inner + ni < inner) {
        in = malloc(sizeof(*in));
        if (in == NULL)
            goto fail;
        in->child[0] = new_inner;
        new_inner = in;
        ni++;
    }
    while ((l = new_leaves) != NULL) {
        new_leaves = l->next;
        l->next = idx->free_leaves;
        idx->free_leaves = l;
    }
    while ((in = new_inner) != NULL) {
        new_inner = in->child[0];
        in->child[0] = idx->free_inner;
        idx->free_inner = in;
    }
    idx->nfree_leaves += nl;
    idx->nfree_inner += ni;
    idx->nleaves += nl;
    idx->ninner += ni;
    idx->memory += nl * sizeof(struct idx_leaf) + ni * sizeof(struct idx_inner);
    return 0;

fail:
    while ((l = new_leaves) != NULL) {
        new_leaves = l->next;
        free(l);
    }
    while ((in = new_inner) != NULL) {
        new_inner = in->child[0];
        free(in);
    }
    return ENOMEM;
}

/* Takes a reserved node: never fails. */
static struct idx_leaf *take_leaf(struct bblog_index *idx)
{
    struct idx_leaf *l = idx->free_leaves;

    idx->free_leaves = l->next;
    idx->nfree_leaves--;
    return l;
}

static struct idx_inner *take_inner(struct bblog_index *idx)
{
    struct idx_inner *in = idx->free_inner;

    idx->free_inner = in->child[0];
    idx->nfree_inner--;
    return in;
}

static void stash_leaf(struct bblog_index *idx, struct idx_leaf *l)
{
    l->next = idx->free_leaves;
    idx->free_leaves = l;
    idx->nfree_leaves++;
}

static void stash_inner(struct bblog_index *idx, struct idx_inner *in)
{
    in->child[0] = idx->free_inner;
    idx->free_inner = in;
    idx->nfree_inner++;
}

/* Gives back a node a merge emptied: kept if few are spare, else freed (memory stays bounded). */
static void put_leaf(struct bblog_index *idx, struct idx_leaf *l)
{
    if (idx->nfree_leaves < SPARE_LEAVES) {
        stash_leaf(idx, l);
        return;
    }
    free(l);
    idx->nleaves--;
    idx->memory -= sizeof(*l);
}

static void put_inner(struct bblog_index *idx, struct idx_inner *in)
{
    if (idx->nfree_inner < SPARE_INNER) {
        stash_inner(idx, in);
        return;
    }
    free(in);
    idx->ninner--;
    idx->memory -= sizeof(*in);
}

/* Descent and paths. */

/*
 * Goes down to the leaf whose key range holds x (child i of a node is the one with
 * key[i - 1] <= x < key[i]), recording the way in path if it is not NULL. Each node is
 * prefetched whole as soon as its address is known, so that the lines its search and the
 * change that follows read arrive together rather than one miss after another.
 */
static struct idx_leaf *descend(const struct bblog_index *idx, uint64_t x, struct idx_path *path)
{
    void *n = idx->root;
    unsigned d;

    for (d = 0; d < idx->height; d++) {
        struct idx_inner *in = n;
        unsigned i = upper_bound(in->key, in->n - 1, x);

        if (path != NULL) {
            path->node[d] = in;
            path->slot[d] = i;
        }
        n = in->child[i];
        prefetch(n, d + 1 < idx->height ? sizeof(struct idx_inner) : LEAF_PREFETCH);
    }
    if (path != NULL)
        path->leaf = n;
    return n;
}

/* Moves path to the next leaf, which must exist. */
static void path_step_next(const struct bblog_index *idx, struct idx_path *path)
{
    unsigned d = idx->height;
    void *c;

    while (path->slot[d - 1] + 1 == path->node[d - 1]->n)
        d--;
    d--;
    c = path->node[d]->child[++path->slot[d]];
    for (d++; d < idx->height; d++) {
        path->node[d] = c;
        path->slot[d] = 0;
        c = path->node[d]->child[0];
    }
    path->leaf = c;
}

/*
 * Finds where x belongs: returns the index of the first extent with off >= x in path->leaf, the
 * leaf whose range holds x; that is the leaf's n if all its extents start before x (the first
 * extent at or after x is then the next leaf's first, if any).
 */
static unsigned seek(const struct bblog_index *idx, uint64_t x, struct idx_path *path)
{
    struct idx_leaf *l = descend(idx, x, path);

    return lower_bound(l->off, l->n, x);
}

/*
 * Lets path->leaf's range start at x: lowers the separator below the leaf to x if it is above.
 * Valid only when every key of the leaves before it is below x (then every separator inside
 * their subtree is too, being at or below one of their keys).
 */
static void lower_lo(struct idx_path *path, unsigned height, uint64_t x)
{
    unsigned d;

    for (d = height; d-- > 0;) {
        if (path->slot[d] > 0) {
            uint64_t *sep = &path->node[d]->key[path->slot[d] - 1];

            if (*sep > x)
                *sep = x;
            return;
        }
    }
}

/*
 * Lets path->leaf's range reach key: if the separator above the leaf is at or below key, raises
 * it to v, where key < v <= every key of the leaves after this one.
 */
static void raise_hi(struct idx_path *path, unsigned height, uint64_t key, uint64_t v)
{
    unsigned d;

    for (d = height; d-- > 0;) {
        if (path->slot[d] + 1 < path->node[d]->n) {
            uint64_t *sep = &path->node[d]->key[path->slot[d]];

            if (*sep <= key)
                *sep = v;
            return;
        }
    }
}

/* Insertion. */

/*
 * Nodes that inserting k (<= 2) extents into path->leaf may take: none if they fit, else a leaf
 * for the split and one inner node for every full ancestor in a row above it, plus a new root
 * if they are all full. Reserves them.
 */
static int reserve_insert(struct bblog_index *idx, const struct idx_path *path, unsigned k)
{
    size_t inner = 0;
    unsigned d = idx->height;

    if (path->leaf->n + k <= LEAF_CAP)
        return 0;
    while (d > 0 && path->node[d - 1]->n == INNER_CAP) {
        inner++;
        d--;
    }
    if (d == 0) {
        /* Unreachable (see MAX_HEIGHT) but it guards the path arrays. */
        if (idx->height + 1 >= MAX_HEIGHT)
            return ENOMEM;
        inner++;
    }
    return pool_reserve(idx, 1, inner);
}

/*
 * Adds child, whose keys are all >= sep, right after path's child at the bottom inner level,
 * splitting full nodes upwards with reserved nodes; a new root if the root splits.
 */
static void inner_insert(struct bblog_index *idx, struct idx_path *path, uint64_t sep,
                         void *child)
{
    unsigned d = idx->height;
    struct idx_inner *root;

    while (d-- > 0) {
        struct idx_inner *p = path->node[d], *q;
        unsigned i = path->slot[d] + 1, n = p->n, left;
        uint64_t keys[INNER_CAP];
        void *kids[INNER_CAP + 1];

        if (n < INNER_CAP) {
            memmove(&p->key[i], &p->key[i - 1], (n - i) * sizeof(p->key[0]));
            memmove(&p->child[i + 1], &p->child[i], (n - i) * sizeof(p->child[0]));
            p->key[i - 1] = sep;
            p->child[i] = child;
            p->n = n + 1;
            return;
        }
        /* Full: lay the INNER_CAP + 1 children out in order, split them in two halves. */
        memcpy(keys, p->key, (i - 1) * sizeof(keys[0]));
        keys[i - 1] = sep;
        memcpy(&keys[i], &p->key[i - 1], (n - i) * sizeof(keys[0]));
        memcpy(kids, p->child, i * sizeof(kids[0]));
        kids[i] = child;
        memcpy(&kids[i + 1], &p->child[i], (n - i) * sizeof(kids[0]));
        left = (INNER_CAP + 1) / 2;
        q = take_inner(idx);
        p->n = left;
        memcpy(p->key, keys, (left - 1) * sizeof(keys[0]));
        memcpy(p->child, kids, left * sizeof(kids[0]));
        q->n = INNER_CAP + 1 - left;
        memcpy(q->key, &keys[left], (q->n - 1) * sizeof(keys[0]));
        memcpy(q->child, &kids[left], q->n * sizeof(kids[0]));
        /* keys[left - 1] lay between the two halves: it now separates p from q. */
        sep = keys[left - 1];
        child = q;
    }
    root = take_inner(idx);
    root->n = 2;
    root->key[0] = sep;
    root->child[0] = idx->root;
    root->child[1] = child;
    idx->root = root;
    idx->height++;
}

/*
 * Puts the k (<= 2) extents e, in order, at position pos of path->leaf; their keys must lie
 * in the leaf's range and between its neighbours at pos. A full leaf splits in two halves,
 * except that appending at the end of the last leaf leaves it full and starts a new one
 * (sequential and strided writers then fill their leaves completely). Nodes reserved with
 * reserve_insert(); path is stale afterwards. Points the hint at e[0].
 */
static void insert_at(struct bblog_index *idx, struct idx_path *path, unsigned pos,
                      const struct bblog_extent *e, unsigned k)
{
    struct idx_leaf *x = path->leaf, *r;
    unsigned n = x->n, t = n + k, keep, i;
    struct {
        uint64_t off[LEAF_CAP + 2], len[LEAF_CAP + 2], log_off[LEAF_CAP + 2];
    } s;

    idx->count += k;
    if (t <= LEAF_CAP) {
        leaf_move(x, pos + k, x, pos, n - pos);
        for (i = 0; i < k; i++)
            leaf_set(x, pos + i, e[i].off, e[i].len, e[i].log_off);
        x->n = t;
        idx->hint = x;
        idx->hint_pos = pos;
        return;
    }
    memcpy(s.off, x->off, pos * sizeof(s.off[0]));
    memcpy(s.len, x->len, pos * sizeof(s.len[0]));
    memcpy(s.log_off, x->log_off, pos * sizeof(s.log_off[0]));
    for (i = 0; i < k; i++) {
        s.off[pos + i] = e[i].off;
        s.len[pos + i] = e[i].len;
        s.log_off[pos + i] = e[i].log_off;
    }
    memcpy(&s.off[pos + k], &x->off[pos], (n - pos) * sizeof(s.off[0]));
    memcpy(&s.len[pos + k], &x->len[pos], (n - pos) * sizeof(s.len[0]));
    memcpy(&s.log_off[pos + k], &x->log_off[pos], (n - pos) * sizeof(s.log_off[0]));
    keep = x == idx->last && pos == n ? n : t / 2;

    r = take_leaf(idx);
    memcpy(x->off, s.off, keep * sizeof(s.off[0]));
    memcpy(x->len, s.len, keep * sizeof(s.len[0]));
    memcpy(x->log_off, s.log_off, keep * sizeof(s.log_off[0]));
    x->n = keep;
    memcpy(r->off, &s.off[keep], (t - keep) * sizeof(s.off[0]));
    memcpy(r->len, &s.len[keep], (t - keep) * sizeof(s.len[0]));
    memcpy(r->log_off, &s.log_off[keep], (t - keep) * sizeof(s.log_off[0]));
    r->n = t - keep;
    r->prev = x;
    r->next = x->next;
    if (x->next != NULL)
        x->next->prev = r;
    else
        idx->last = r;
    x->next = r;
    idx->hint = pos < keep ? x : r;
    idx->hint_pos = pos < keep ? pos : pos - keep;
    inner_insert(idx, path, r->off[0], r);
}

/* Deletion and rebalancing. */

/* Evens out two adjacent leaves a and b (a first); returns the new key of their separator. */
static uint64_t leaf_redistribute(struct idx_leaf *a, struct idx_leaf *b)
{
    unsigned t = a->n + b->n, na = t / 2, m;

    if (a->n < na) {
        m = na - a->n;
        leaf_move(a, a->n, b, 0, m);
        leaf_move(b, 0, b, m, b->n - m);
    } else {
        m = a->n - na;
        leaf_move(b, m, b, 0, b->n);
        leaf_move(b, 0, a, na, m);
    }
    a->n = na;
    b->n = t - na;
    return b->off[0];
}

/* Appends leaf b to its left neighbour a and frees it. */
static void leaf_merge(struct bblog_index *idx, struct idx_leaf *a, struct idx_leaf *b)
{
    leaf_move(a, a->n, b, 0, b->n);
    a->n += b->n;
    a->next = b->next;
    if (b->next != NULL)
        b->next->prev = a;
    else
        idx->last = a;
    put_leaf(idx, b);
}

/* Evens out two adjacent inner nodes a and b under the separator *sep (rotating keys). */
static void inner_redistribute(struct idx_inner *a, struct idx_inner *b, uint64_t *sep)
{
    unsigned t = a->n + b->n, na = t / 2, m;

    if (a->n < na) {
        /* b's first m children move to a's end; *sep comes down between the two groups. */
        m = na - a->n;
        a->key[a->n - 1] = *sep;
        memcpy(&a->key[a->n], b->key, (m - 1) * sizeof(a->key[0]));
        memcpy(&a->child[a->n], b->child, m * sizeof(a->child[0]));
        *sep = b->key[m - 1];
        memmove(b->key, &b->key[m], (b->n - m - 1) * sizeof(b->key[0]));
        memmove(b->child, &b->child[m], (b->n - m) * sizeof(b->child[0]));
    } else {
        /* a's last m children move to b's front. */
        m = a->n - na;
        memmove(&b->key[m], b->key, (b->n - 1) * sizeof(b->key[0]));
        memmove(&b->child[m], b->child, b->n * sizeof(b->child[0]));
        b->key[m - 1] = *sep;
        memcpy(b->key, &a->key[na], (m - 1) * sizeof(b->key[0]));
        memcpy(b->child, &a->child[na], m * sizeof(b->child[0]));
        *sep = a->key[na - 1];
    }
    a->n = na;
    b->n = t - na;
}

/* Appends inner node b, which followed a under separator sep, to a and frees it. */
static void inner_merge(struct bblog_index *idx, struct idx_inner *a, struct idx_inner *b,
                        uint64_t sep)
{
    a->key[a->n - 1] = sep;
    memcpy(&a->key[a->n], b->key, (b->n - 1) * sizeof(a->key[0]));
    memcpy(&a->child[a->n], b->child, b->n * sizeof(a->child[0]));
    a->n += b->n;
    put_inner(idx, b);
}

/* Drops child[i + 1] of p and the separator before it. */
static void inner_drop(struct idx_inner *p, unsigned i)
{
    memmove(&p->key[i], &p->key[i + 1], (p->n - 2 - i) * sizeof(p->key[0]));
    memmove(&p->child[i + 1], &p->child[i + 2], (p->n - 2 - i) * sizeof(p->child[0]));
    p->n--;
}

/*
 * Restores the shape rule after path->leaf lost extents: the leaf and its sibling (the left one
 * if there is one, under the same parent) are evened out if they hold 2 * LEAF_MIN or more
 * between them, else merged; a merge takes a child from the parent, which is then rebalanced
 * the same way, up to the root, which goes when it is left with one child.
 */
static void rebalance(struct bblog_index *idx, struct idx_path *path)
{
    unsigned d = idx->height - 1, i = path->slot[d] > 0 ? path->slot[d] - 1 : 0;
    struct idx_inner *p = path->node[d];
    struct idx_leaf *la = p->child[i], *lb = p->child[i + 1];

    if (la->n + lb->n >= 2 * LEAF_MIN) {
        p->key[i] = leaf_redistribute(la, lb);
        return;
    }
    leaf_merge(idx, la, lb);
    inner_drop(p, i);
    while (d > 0 && p->n < INNER_MIN) {
        struct idx_inner *g = path->node[d - 1], *a, *b;

        i = path->slot[d - 1] > 0 ? path->slot[d - 1] - 1 : 0;
        a = g->child[i];
        b = g->child[i + 1];
        if (a->n + b->n >= 2 * INNER_MIN) {
            inner_redistribute(a, b, &g->key[i]);
            return;
        }
        inner_merge(idx, a, b, g->key[i]);
        inner_drop(g, i);
        p = g;
        d--;
    }
    while (idx->height > 0 && ((struct idx_inner *)idx->root)->n == 1) {
        struct idx_inner *old = idx->root;

        idx->root = old->child[0];
        idx->height--;
        put_inner(idx, old);
    }
}

/*
 * Removes extents [a, b) of path->leaf and rebalances. Returns true if the tree was
 * restructured (path and positions are then stale), false if only this leaf's tail moved.
 */
static bool delete_run(struct bblog_index *idx, struct idx_path *path, unsigned a, unsigned b)
{
    struct idx_leaf *x = path->leaf;

    leaf_move(x, a, x, b, x->n - b);
    x->n -= b - a;
    idx->count -= b - a;
    idx->hint = NULL;
    if (idx->height == 0 || x->n >= LEAF_MIN || (x == idx->last && x->n > 0))
        return false;
    rebalance(idx, path);
    return true;
}

/*
 * Cuts [lo, end) out of the extents from position q of path->leaf on (the first one with
 * off >= lo, as seek(lo) gives): drops those that end by end and cuts the head off the
 * one that straddles end. Returns the bytes dropped; *moved tells whether the tree was
 * restructured (the caller's path is stale then). Never allocates.
 */
static uint64_t punch(struct bblog_index *idx, const struct idx_path *at, unsigned q, uint64_t lo,
                      uint64_t end, bool *moved)
{
    struct idx_path path = *at;
    uint64_t dropped = 0;

    *moved = false;
    for (;;) {
        struct idx_leaf *x = path.leaf;
        unsigned r;

        if (q == x->n) {
            if (x->next == NULL)
                break;
            path_step_next(idx, &path);
            q = 0;
            x = path.leaf;
        }
        for (r = q; r < x->n && x->off[r] < end && x->len[r] <= end - x->off[r]; r++)
            dropped += x->len[r];
        if (r > q) {
            if (delete_run(idx, &path, q, r)) {
                *moved = true;
                q = seek(idx, lo, &path);
            }
            continue;
        }
        if (q < x->n && x->off[q] < end) {
            uint64_t cut = end - x->off[q], e = leaf_end(x, q);

            dropped += cut;
            x->off[q] = end;
            x->len[q] -= cut;
            x->log_off[q] += cut;
            /* Its old end is at or below every later key. */
            if (q + 1 == x->n)
                raise_hi(&path, idx->height, end, e);
        }
        break;
    }
    return dropped;
}

/* Whether b continues a in both the file and the log. */
static inline bool contiguous(const struct idx_leaf *a, unsigned i, const struct idx_leaf *b,
                              unsigned j)
{
    return leaf_end(a, i) == b->off[j] && a->log_off[i] + a->len[i] == b->log_off[j];
}

/*
 * Joins the extent at position q of path->leaf with its neighbours where they continue it in
 * both file and log (the "canon" invariant). Never allocates.
 */
static void coalesce(struct bblog_index *idx, struct idx_path *path, unsigned q)
{
    struct idx_leaf *y = path->leaf, *lf = NULL, *rl = NULL;
    unsigned li = 0, ri = 0;
    uint64_t rkey = 0;
    bool jl, jr;

    if (q > 0) {
        lf = y;
        li = q - 1;
    } else if (y->prev != NULL) {
        lf = y->prev;
        li = lf->n - 1;
    }
    if (q + 1 < y->n) {
        rl = y;
        ri = q + 1;
    } else if (y->next != NULL) {
        rl = y->next;
        ri = 0;
    }
    jl = lf != NULL && contiguous(lf, li, y, q);
    jr = rl != NULL && contiguous(y, q, rl, ri);
    if (!jl && !jr) {
        idx->hint = y;
        idx->hint_pos = q;
        return;
    }
    /* The survivor grows first; then the absorbed extents go. */
    if (jr)
        rkey = rl->off[ri];
    if (jl)
        lf->len[li] += y->len[q] + (jr ? rl->len[ri] : 0);
    else
        y->len[q] += rl->len[ri];
    if (jl)
        delete_run(idx, path, q, q + 1 + (jr && rl == y));
    else if (rl == y)
        delete_run(idx, path, q + 1, q + 2);
    if (jr && rl != y) {
        /* First in the next leaf, and the deletion before may have moved it: find it again. */
        ri = seek(idx, rkey, path);
        delete_run(idx, path, ri, ri + 1);
    }
}

/*
 * The O(1) cases of an insert, which involve one existing extent and no node: appending at or
 * after the start of the last extent without splitting it (joining it, or into a free slot of
 * the last leaf), and continuing the extent the last insert wrote (an appender in the middle
 * of the file) when nothing follows within [off, end) to cut or join. Returns whether it did
 * the insert.
 */
static bool insert_fast(struct bblog_index *idx, uint64_t off, uint64_t end, uint64_t log_off)
{
    struct idx_leaf *l = idx->last;
    unsigned i;
    uint64_t k, e;

    if (l != NULL && l->n > 0 && off > l->off[l->n - 1]) {
        i = l->n - 1;
        k = l->off[i];
        e = leaf_end(l, i);
        if (e > end)
            return false;       /* strictly inside: a split */
        if (e >= off && l->log_off[i] + (off - k) == log_off) {
            idx->bytes += end - e;
            l->len[i] = end - k;
            idx->hint = l;
            idx->hint_pos = i;
            return true;
        }
        if (l->n == LEAF_CAP)
            return false;
        if (e > off) {
            idx->bytes -= e - off;
            l->len[i] = off - k;
        }
        leaf_set(l, l->n, off, end - off, log_off);
        idx->hint = l;
        idx->hint_pos = l->n++;
        idx->count++;
        idx->bytes += end - off;
        return true;
    }
    l = idx->hint;
    if (l == NULL)
        return false;
    i = idx->hint_pos;
    k = l->off[i];
    e = leaf_end(l, i);
    /* It is off's predecessor: the next extent starts at or after e >= off. */
    if (k < off && off <= e && e <= end && l->log_off[i] + (off - k) == log_off) {
        const struct idx_leaf *s = l;
        unsigned j = i + 1;

        if (j == l->n) {
            s = l->next;
            j = 0;
        }
        if (s == NULL || s->off[j] > end ||
            (s->off[j] == end && s->log_off[j] != log_off + (end - off))) {
            idx->bytes += end - e;
            l->len[i] = end - k;
            return true;
        }
    }
    return false;
}

/* Gives an index without nodes its root leaf. */
static int make_root(struct bblog_index *idx)
{
    struct idx_leaf *l;

    if (pool_reserve(idx, 1, 0) != 0)
        return ENOMEM;
    l = take_leaf(idx);
    l->n = 0;
    l->prev = l->next = NULL;
    idx->root = idx->last = l;
    idx->height = 0;
    return 0;
}

/* The API. */

int bblog_idx_create(struct bblog_index **out)
{
    struct bblog_index *idx = malloc(sizeof(*idx));

    if (idx == NULL)
        return ENOMEM;
    *idx = (struct bblog_index){.memory = sizeof(*idx)};
    *out = idx;
    return 0;
}

/* Puts every node of the subtree on the free lists (keep) or frees it. */
static void release_subtree(struct bblog_index *idx, void *node, unsigned level, bool keep)
{
    unsigned i;

    if (level == 0) {
        if (keep)
            stash_leaf(idx, node);
        else
            free(node);
        return;
    }
    for (i = 0; i < ((struct idx_inner *)node)->n; i++)
        release_subtree(idx, ((struct idx_inner *)node)->child[i], level - 1, keep);
    if (keep)
        stash_inner(idx, node);
    else
        free(node);
}

void bblog_idx_destroy(struct bblog_index *idx)
{
    struct idx_leaf *l;
    struct idx_inner *in;

    if (idx == NULL)
        return;
    if (idx->root != NULL)
        release_subtree(idx, idx->root, idx->height, false);
    while ((l = idx->free_leaves) != NULL) {
        idx->free_leaves = l->next;
        free(l);
    }
    while ((in = idx->free_inner) != NULL) {
        idx->free_inner = in->child[0];
        free(in);
    }
    free(idx);
}

void bblog_idx_clear(struct bblog_index *idx)
{
    /* Every node goes to the free lists: refilling to the same size allocates nothing. */
    if (idx->root != NULL)
        release_subtree(idx, idx->root, idx->height, true);
    idx->root = NULL;
    idx->height = 0;
    idx->last = idx->hint = NULL;
    idx->bytes = 0;
    idx->count = 0;
}

/*
 * Last writer wins: [off, end) is cut out of the extents it overlaps, then recorded, joined to
 * the extents on either side where they continue it in both file and log. A new entry is
 * needed only when no older extent is covered entirely (one that is gets reused) and the new
 * extent joins neither neighbour; two when it falls strictly inside an older extent (the old
 * one splits around it). Nodes for that are reserved before anything changes.
 */
/* An insertion of [off, end) at log_off under way. a = path.leaf is the leaf whose range holds
 * off: a new extent goes there, at q. lf[li] is the extent before q (ending at lend), cl[ci] the
 * first one at or after off (in a, or first in a's next leaf, whose path cpath is then). */
struct ins {
    uint64_t off, end, len, log_off;
    struct idx_path path, cpath;
    struct idx_leaf *a, *lf, *cl;
    unsigned q, li, ci;
    uint64_t lend, dropped;
    bool join_left, join_right, covered, straddle;
};

static void ins_find(struct bblog_index *idx, struct ins *s)
{
    s->q = seek(idx, s->off, &s->path);
    s->a = s->path.leaf;
    if (s->q > 0) {
        s->lf = s->a;
        s->li = s->q - 1;
    } else if (s->a->prev != NULL) {
        s->lf = s->a->prev;
        s->li = s->lf->n - 1;
    }
    if (s->lf != NULL)
        s->lend = leaf_end(s->lf, s->li);
    if (s->q < s->a->n) {
        s->cl = s->a;
        s->ci = s->q;
    } else if (s->a->next != NULL) {
        s->cl = s->a->next;
        s->ci = 0;
    }
}

/* The new extent lies strictly inside lf: lf splits around it. */
static int ins_split(struct bblog_index *idx, struct ins *s)
{
    struct idx_leaf *lf = s->lf;
    struct bblog_extent e[2];
    int rc;

    /* The same mapping again changes nothing; any other mapping joins neither part. */
    if (lf->log_off[s->li] + (s->off - lf->off[s->li]) == s->log_off)
        return 0;
    if ((rc = reserve_insert(idx, &s->path, 2)) != 0)
        return rc;
    e[0] = (struct bblog_extent){.off = s->off, .len = s->len, .log_off = s->log_off};
    e[1] = (struct bblog_extent){.off = s->end, .len = s->lend - s->end,
                                 .log_off = lf->log_off[s->li] + (s->end - lf->off[s->li])};
    lf->len[s->li] = s->off - lf->off[s->li];
    /* Any extent after q starts at or after lend; a's range must reach end. */
    if (s->q == s->a->n)
        raise_hi(&s->path, idx->height, s->end, s->lend);
    insert_at(idx, &s->path, s->q, e, 2);
    return 0;                   /* bytes unchanged: len bytes replaced by len bytes */
}

/* cl[ci] is covered entirely: it is reused for the new extent. Its key drops to off, still
 * above lf's; if it is first in a's next leaf, that leaf's range now starts at off. */
static void ins_covered(struct bblog_index *idx, struct ins *s)
{
    struct idx_path *cp = s->cl == s->a ? &s->path : &s->cpath;
    bool moved;
    unsigned ci;

    s->dropped += s->cl->len[s->ci];
    leaf_set(s->cl, s->ci, s->off, s->len, s->log_off);
    if (s->cl != s->a)
        lower_lo(&s->cpath, idx->height, s->off);
    s->dropped += punch(idx, cp, s->ci + 1, s->off + 1, s->end, &moved);
    idx->bytes += s->len - s->dropped;
    if (moved) {
        ci = seek(idx, s->off, &s->path);
        coalesce(idx, &s->path, ci);
    } else {
        coalesce(idx, cp, s->ci);
    }
}

/* The new extent joins its neighbours where they continue it, else gets an entry of its own;
 * a straddler's head [cl->off[ci], end) is overwritten first. */
static void ins_link(struct bblog_index *idx, struct ins *s)
{
    struct idx_leaf *lf = s->lf, *cl = s->cl;
    struct idx_path *cp = cl == s->a ? &s->path : &s->cpath;
    unsigned li = s->li, ci = s->ci;

    if (s->straddle) {
        s->dropped += s->end - cl->off[ci];
        if (!s->join_right) {
            uint64_t cut = s->end - cl->off[ci], e = leaf_end(cl, ci);

            cl->off[ci] = s->end;
            cl->len[ci] -= cut;
            cl->log_off[ci] += cut;
            if (ci + 1 == cl->n)
                raise_hi(cp, idx->height, s->end, e);
        }
    }
    if (s->join_left && s->join_right) {
        lf->len[li] = leaf_end(cl, ci) - lf->off[li];
        delete_run(idx, cp, ci, ci + 1);
    } else if (s->join_left) {
        lf->len[li] = s->end - lf->off[li];
        idx->hint = lf;
        idx->hint_pos = li;
    } else if (s->join_right) {
        uint64_t e = leaf_end(cl, ci);

        leaf_set(cl, ci, s->off, e - s->off, s->log_off);
        if (cl != s->a)
            lower_lo(&s->cpath, idx->height, s->off);
        idx->hint = cl;
        idx->hint_pos = ci;
    } else {
        const struct bblog_extent e = {.off = s->off, .len = s->len, .log_off = s->log_off};

        insert_at(idx, &s->path, s->q, &e, 1);
    }
    idx->bytes += s->len - s->dropped;
}

int bblog_idx_insert(struct bblog_index *idx, uint64_t off, uint64_t len, uint64_t log_off)
{
    struct ins s = {.off = off, .len = len, .log_off = log_off};
    int rc;

    if (len == 0)
        return 0;
    if (len > UINT64_MAX - off || len > UINT64_MAX - log_off)
        return BBLOG_EINVAL;
    s.end = off + len;
    if (insert_fast(idx, off, s.end, log_off))
        return 0;
    if (idx->root == NULL && (rc = make_root(idx)) != 0)
        return rc;
    ins_find(idx, &s);
    if (s.lf != NULL && s.lend > s.end)
        return ins_split(idx, &s);
    s.join_left = s.lf != NULL && s.lend >= off &&
        s.lf->log_off[s.li] + (off - s.lf->off[s.li]) == log_off;
    if (s.cl != NULL && s.cl->off[s.ci] < s.end) {
        s.covered = s.cl->len[s.ci] <= s.end - s.cl->off[s.ci];
        s.straddle = !s.covered;
        /* A straddler whose remaining tail continues the new extent in the log joins it. */
        if (s.straddle)
            s.join_right = s.cl->log_off[s.ci] + (s.end - s.cl->off[s.ci]) == log_off + len;
    } else if (s.cl != NULL) {
        s.join_right = s.cl->off[s.ci] == s.end && s.cl->log_off[s.ci] == log_off + len;
    }
    if (!s.covered && !s.join_left && !s.join_right &&
        (rc = reserve_insert(idx, &s.path, 1)) != 0)
        return rc;

    /* From here on nothing fails. */
    if (s.lf != NULL && s.lend > off) {
        s.dropped += s.lend - off;
        s.lf->len[s.li] = off - s.lf->off[s.li];
    }
    if (s.cl != NULL && s.cl != s.a) {
        s.cpath = s.path;
        path_step_next(idx, &s.cpath);
    }
    if (s.covered)
        ins_covered(idx, &s);
    else
        ins_link(idx, &s);
    return 0;
}

/* Punches [off, end) out of the index; one entry is needed only to split a straddler. */
int bblog_idx_remove(struct bblog_index *idx, uint64_t off, uint64_t len)
{
    struct idx_path path;
    struct idx_leaf *y, *lf = NULL;
    unsigned q, li = 0;
    uint64_t end, dropped = 0;
    bool moved;

    if (len == 0 || idx->root == NULL)
        return 0;
    end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
    q = seek(idx, off, &path);
    y = path.leaf;
    if (q > 0) {
        lf = y;
        li = q - 1;
    } else if (y->prev != NULL) {
        lf = y->prev;
        li = lf->n - 1;
    }
    if (lf != NULL && leaf_end(lf, li) > off) {
        uint64_t lend = leaf_end(lf, li);

        if (lend > end) {
            struct bblog_extent tail = {.off = end, .len = lend - end,
                                        .log_off = lf->log_off[li] + (end - lf->off[li])};

            if (reserve_insert(idx, &path, 1) != 0)
                return ENOMEM;
            lf->len[li] = off - lf->off[li];
            /* As for a split by insert: y's range must reach end. */
            if (q == y->n)
                raise_hi(&path, idx->height, end, lend);
            insert_at(idx, &path, q, &tail, 1);
            idx->bytes -= end - off;
            return 0;
        }
        dropped += lend - off;
        lf->len[li] = off - lf->off[li];
    }
    dropped += punch(idx, &path, q, off, end, &moved);
    idx->bytes -= dropped;
    return 0;
}

/*
 * The iterator: node is the leaf holding the next extent to return, and lo doubles as the
 * resume point (every extent before lo was returned), so the header's struct needs no slot
 * index; next() finds its place in the leaf with one binary search of a cached array.
 */
void bblog_idx_iter_init(const struct bblog_index *idx, struct bblog_idx_iter *it, uint64_t off,
                         uint64_t len)
{
    const struct idx_leaf *x;
    unsigned q;

    it->idx = idx;
    it->lo = off;
    it->hi = len > UINT64_MAX - off ? UINT64_MAX : off + len;
    it->node = NULL;
    if (it->lo == it->hi || idx->root == NULL)
        return;
    x = descend(idx, off, NULL);
    q = lower_bound(x->off, x->n, off);
    /* The first extent ending after off: the one before q if it reaches past off, else q. */
    if (q > 0)
        it->node = leaf_end(x, q - 1) > off || q < x->n ? x : x->next;
    else if (x->prev != NULL && leaf_end(x->prev, x->prev->n - 1) > off)
        it->node = x->prev;
    else if (x->n > 0)
        it->node = x;
}

int bblog_idx_iter_next(struct bblog_idx_iter *it, struct bblog_extent *out)
{
    const struct idx_leaf *x = it->node;
    unsigned i;
    uint64_t k, e, lo, hi;

    if (x == NULL)
        return 0;
    /* The first extent of x ending after lo: the node always holds one (see init and below). */
    i = lower_bound(x->off, x->n, it->lo);
    if (i > 0 && leaf_end(x, i - 1) > it->lo)
        i--;
    k = x->off[i];
    if (k >= it->hi) {
        it->node = NULL;
        return 0;
    }
    e = leaf_end(x, i);
    lo = k > it->lo ? k : it->lo;
    hi = e < it->hi ? e : it->hi;
    out->off = lo;
    out->len = hi - lo;
    out->log_off = x->log_off[i] + (lo - k);
    if (hi == it->hi) {
        it->node = NULL;
    } else {
        it->lo = hi;
        if (i + 1 == x->n)
            it->node = x->next;
    }
    return 1;
}

uint64_t bblog_idx_bytes(const struct bblog_index *idx)
{
    return idx->bytes;
}

size_t bblog_idx_count(const struct bblog_index *idx)
{
    return idx->count;
}

uint64_t bblog_idx_end(const struct bblog_index *idx)
{
    /* Extents sorted by start are sorted by end too (no overlap): the last one ends last. */
    const struct idx_leaf *l = idx->last;

    return l != NULL && l->n > 0 ? leaf_end(l, l->n - 1) : 0;
}

size_t bblog_idx_memory(const struct bblog_index *idx)
{
    return idx->memory;
}

/* State of the in-order walk of bblog_idx_check(). */
struct check {
    const struct bblog_index *idx;
    const struct idx_leaf *prev_leaf;
    const struct idx_leaf *prev;        /* leaf of the previous extent, NULL before the first */
    unsigned prev_i;
    size_t leaves, inner, count;
    uint64_t bytes;
    bool hint_found;
    const char *why;
};

/* Checks the leaf's extents against each other and the previous one, in file order. */
static bool check_leaf(struct check *c, const struct idx_leaf *l, bool is_root)
{
    unsigned i;

    if (l->n > LEAF_CAP || (!is_root && l->n == 0)) {
        c->why = "a leaf is empty or over capacity";
        return false;
    }
    if (!is_root && l->n < LEAF_MIN && l != c->idx->last) {
        c->why = "a leaf other than the last is less than half full";
        return false;
    }
    if (l->prev != c->prev_leaf || (c->prev_leaf != NULL && c->prev_leaf->next != l)) {
        c->why = "the leaf chain differs from the tree order";
        return false;
    }
    c->prev_leaf = l;
    if (l == c->idx->hint) {
        if (c->idx->hint_pos >= l->n) {
            c->why = "hint_pos is past the hint leaf's extents";
            return false;
        }
        c->hint_found = true;
    }
    for (i = 0; i < l->n; i++) {
        if (l->len[i] == 0) {
            c->why = "an extent is empty";
            return false;
        }
        if (l->len[i] > UINT64_MAX - l->off[i] || l->len[i] > UINT64_MAX - l->log_off[i]) {
            c->why = "an extent overflows the file or the log";
            return false;
        }
        if (c->prev != NULL) {
            if (leaf_end(c->prev, c->prev_i) > l->off[i]) {
                c->why = "two extents overlap or are out of order";
                return false;
            }
            if (contiguous(c->prev, c->prev_i, l, i)) {
                c->why = "two neighbours contiguous in file and log were not coalesced";
                return false;
            }
        }
        c->prev = l;
        c->prev_i = i;
        c->bytes += l->len[i];
    }
    c->count += l->n;
    c->leaves++;
    return true;
}

/*
 * Checks the subtree at node (level 0: a leaf) and reports its smallest and largest key in
 * *min and *max (*min > *max if it holds none, which only an empty root leaf may).
 */
static bool check_node(struct check *c, const void *node, unsigned level, bool is_root,
                       uint64_t *min, uint64_t *max)
{
    const struct idx_inner *in = node;
    unsigned i;

    if (level == 0) {
        const struct idx_leaf *l = node;

        if (!check_leaf(c, l, is_root))
            return false;
        *min = l->n > 0 ? l->off[0] : 1;
        *max = l->n > 0 ? l->off[l->n - 1] : 0;
        return true;
    }
    if (in->n > INNER_CAP || in->n < 2 || (!is_root && in->n < INNER_MIN)) {
        c->why = "an inner node has too few or too many children";
        return false;
    }
    c->inner++;
    for (i = 0; i < in->n; i++) {
        uint64_t cmin, cmax;

        if (!check_node(c, in->child[i], level - 1, false, &cmin, &cmax))
            return false;
        if ((i > 0 && cmin < in->key[i - 1]) || (i + 1 < in->n && cmax >= in->key[i])) {
            c->why = "a key lies outside the range its separators give";
            return false;
        }
        if (i == 0)
            *min = cmin;
        *max = cmax;
    }
    return true;
}

/* Verifies every invariant stated at the top of this file in O(count): NULL, or a sentence
 * naming the first one found broken. */
const char *bblog_idx_check(const struct bblog_index *idx)
{
    struct check c = {.idx = idx, .hint_found = idx->hint == NULL};
    const struct idx_leaf *l;
    const struct idx_inner *in;
    size_t n;
    uint64_t min, max;

    if ((idx->root == NULL) != (idx->last == NULL))
        return "last is set without a root or missing with one";
    if (idx->root != NULL) {
        if (idx->height >= MAX_HEIGHT)
            return "the tree is higher than MAX_HEIGHT";
        if (!check_node(&c, idx->root, idx->height, true, &min, &max))
            return c.why;
        if (c.prev_leaf != idx->last || idx->last->next != NULL)
            return "last is not the rightmost leaf";
    } else if (idx->height != 0) {
        return "an index without nodes has a height";
    }
    if (c.count != idx->count)
        return "count differs from the number of extents";
    if (c.bytes != idx->bytes)
        return "bytes differs from the sum of extent lengths";
    if (!c.hint_found)
        return "hint is not a leaf of the tree";
    for (n = 0, l = idx->free_leaves; l != NULL; l = l->next)
        n++;
    if (n != idx->nfree_leaves || c.leaves + n != idx->nleaves)
        return "leaves in the tree plus free leaves differ from leaves allocated";
    for (n = 0, in = idx->free_inner; in != NULL; in = in->child[0])
        n++;
    if (n != idx->nfree_inner || c.inner + n != idx->ninner)
        return "inner nodes in the tree plus free ones differ from those allocated";
    if (idx->memory != sizeof(*idx) + idx->nleaves * sizeof(struct idx_leaf) +
                           idx->ninner * sizeof(struct idx_inner))
        return "memory differs from the nodes allocated";
    return NULL;
}
