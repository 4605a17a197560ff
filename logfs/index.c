/*
 * The interval index (DESIGN.md section 5): an intrusive red-black tree of extents keyed by
 * their file offset, with nodes from a pool owned by the index.
 *
 * Why a plain start-keyed tree suffices: the index never holds two extents that share a byte
 * (last writer wins, enforced on every insert), so extents sorted by start are also sorted by
 * end. The extents overlapping [off, end) are therefore the predecessor of off (if it reaches
 * past off) followed by a run of in-order successors starting before end; no augmented subtree
 * maximum, as in an interval tree for overlapping intervals, is needed.
 *
 * The tree follows the textbook red-black rules (Guibas & Sedgewick 1978; Cormen et al.,
 * "Introduction to Algorithms", ch. 13) in the intrusive style of FreeBSD's sys/tree.h and
 * Linux's rbtree: the links live in the node, the colour is bit 0 of the parent pointer, and the
 * tree itself never allocates. Erasing relinks nodes rather than swapping their contents, so a
 * pointer to any node other than the erased one stays valid across an erase; insert and remove
 * rely on that while they walk successors and erase behind themselves.
 *
 * Invariants (checked by bblog_idx_check()):
 *   tree   - the root is black and has no parent; a red node has no red child; every path from
 *            a node down to a NULL link passes the same number of black nodes (so the height
 *            is at most 2 log2(count + 1)); child->parent points back to the parent.
 *   order  - in-order traversal is strictly increasing in off; each node has len > 0, and
 *            off + len and log_off + len do not overflow; a node ends at or before the next
 *            one starts (no two extents share a byte).
 *   canon  - no two in-order neighbours are contiguous both in the file and in the log
 *            (a.off + a.len == b.off && a.log_off + a.len == b.log_off); together with the
 *            two rules above this makes the set of nodes a function of the file->log mapping
 *            alone: the maximal runs of bytes that are contiguous in the file and in the log.
 *   totals - count is the number of nodes in the tree, bytes the sum of their len; last is
 *            the rightmost node (NULL iff the tree is empty); hint is NULL or a node in the tree.
 *   pool   - every slot handed out from the chunks is either in the tree or on the free list:
 *            (slots of the chunks before cur) + cur_used == count + nfree.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "bblog_err.h"
#include "bblog_index.h"

struct idx_node {
    /* child[] and off first: they are all the descent reads. */
    struct idx_node *child[2];  /* [0] left (smaller off), [1] right; free list: next in [0] */
    uint64_t off;
    uintptr_t parent_red;       /* parent pointer | 1 if the node is red */
    uint64_t len;
    uint64_t log_off;
};

_Static_assert(sizeof(struct idx_node) == 48, "an extent costs 48 bytes in the pool");
_Static_assert(_Alignof(struct idx_node) >= 2, "bit 0 of a node address must be free");

/*
 * A chunk of the pool. Chunks are never returned before bblog_idx_destroy(); their sizes double
 * from IDX_CHUNK_MIN to IDX_CHUNK_MAX nodes, so a small index (one per open file) costs little
 * and a large one wastes at most one partly used chunk of IDX_CHUNK_MAX nodes.
 */
struct idx_chunk {
    struct idx_chunk *next;
    size_t cap;                 /* nodes in this chunk */
    struct idx_node nodes[];
};

#define IDX_CHUNK_MIN 32
#define IDX_CHUNK_MAX 1024

struct bblog_index {
    struct idx_node *root;
    struct idx_node *last;      /* rightmost node: its end is the index's end */
    struct idx_node *hint;      /* the node the last insert wrote into, or NULL */
    uint64_t bytes;             /* sum of len over the tree */
    size_t count;               /* nodes in the tree */

    /* Pool: nodes are taken from the free list first, then bumped from cur. */
    struct idx_chunk *chunks;   /* all chunks, oldest first */
    struct idx_chunk *tail;     /* newest chunk, NULL iff chunks is */
    struct idx_chunk *cur;      /* chunk being bumped from, NULL before the first bump */
    size_t cur_used;            /* slots of cur handed out */
    struct idx_node *free;      /* released nodes, linked through child[0] */
    size_t nfree;
    size_t memory;              /* this struct plus every chunk, in bytes */
};

/* The tree. */

static inline uint64_t node_end(const struct idx_node *n)
{
    return n->off + n->len;
}

static inline struct idx_node *rb_parent(const struct idx_node *n)
{
    return (struct idx_node *)(n->parent_red & ~(uintptr_t)1);
}

static inline bool rb_is_red(const struct idx_node *n)
{
    return n != NULL && (n->parent_red & 1) != 0;
}

static inline void rb_set_parent(struct idx_node *n, struct idx_node *p)
{
    n->parent_red = (uintptr_t)p | (n->parent_red & 1);
}

static inline void rb_set_red(struct idx_node *n)
{
    n->parent_red |= 1;
}

static inline void rb_set_black(struct idx_node *n)
{
    n->parent_red &= ~(uintptr_t)1;
}

static inline void rb_copy_colour(struct idx_node *to, const struct idx_node *from)
{
    to->parent_red = (to->parent_red & ~(uintptr_t)1) | (from->parent_red & 1);
}

/* Makes p's link to old point to new (the root link if p is NULL). */
static inline void rb_replace_child(struct bblog_index *idx, struct idx_node *p,
                                    struct idx_node *old, struct idx_node *new)
{
    if (p == NULL)
        idx->root = new;
    else if (p->child[0] == old)
        p->child[0] = new;
    else
        p->child[1] = new;
}

/*
 * Rotates x down towards side dir: its child on the other side, y, takes x's place and x becomes
 * y's child on side dir (dir 0 is the classic left rotation). In-order sequence is unchanged.
 */
static void rb_rotate(struct bblog_index *idx, struct idx_node *x, int dir)
{
    struct idx_node *y = x->child[!dir];
    struct idx_node *p = rb_parent(x);

    x->child[!dir] = y->child[dir];
    if (y->child[dir] != NULL)
        rb_set_parent(y->child[dir], x);
    rb_set_parent(y, p);
    rb_replace_child(idx, p, x, y);
    y->child[dir] = x;
    rb_set_parent(x, y);
}

static struct idx_node *node_first(const struct bblog_index *idx)
{
    struct idx_node *n = idx->root;

    if (n != NULL)
        while (n->child[0] != NULL)
            n = n->child[0];
    return n;
}

/* In-order successor (dir 1) or predecessor (dir 0); amortised O(1) over a whole walk. */
static struct idx_node *node_step(const struct idx_node *n, int dir)
{
    const struct idx_node *p;

    if (n->child[dir] != NULL) {
        n = n->child[dir];
        while (n->child[!dir] != NULL)
            n = n->child[!dir];
        return (struct idx_node *)n;
    }
    while ((p = rb_parent(n)) != NULL && p->child[dir] == n)
        n = p;
    return (struct idx_node *)p;
}

static inline struct idx_node *node_next(const struct idx_node *n)
{
    return node_step(n, 1);
}

static inline struct idx_node *node_prev(const struct idx_node *n)
{
    return node_step(n, 0);
}

/* Restores the red-black rules after n was linked in red as a leaf. */
static void rb_insert_fixup(struct bblog_index *idx, struct idx_node *n)
{
    struct idx_node *p, *g, *u;

    while ((p = rb_parent(n)) != NULL && rb_is_red(p)) {
        int dir;

        g = rb_parent(p);      /* exists: a red node is never the root */
        dir = g->child[1] == p;
        u = g->child[!dir];
        if (rb_is_red(u)) {
            /* Red uncle: push the blackness of g down one level, retry two levels up. */
            rb_set_black(p);
            rb_set_black(u);
            rb_set_red(g);
            n = g;
            continue;
        }
        if (n == p->child[!dir]) {
            /* Inner grandchild: make it the outer one. */
            rb_rotate(idx, p, dir);
            n = p;
            p = rb_parent(n);
        }
        rb_rotate(idx, g, !dir);
        rb_set_black(p);
        rb_set_red(g);
        break;
    }
    rb_set_black(idx->root);
}

/*
 * Links n (key fields set) between left and right, its in-order neighbours to be (either may be
 * NULL), and rebalances. If left has no right child n becomes it; otherwise right is the
 * leftmost node of left's right subtree and has no left child, and n becomes that.
 */
static void rb_link_between(struct bblog_index *idx, struct idx_node *n, struct idx_node *left,
                            struct idx_node *right)
{
    struct idx_node *p = NULL;
    int dir = 0;

    n->child[0] = n->child[1] = NULL;
    if (left != NULL && left->child[1] == NULL) {
        p = left;
        dir = 1;
    } else if (right != NULL) {
        p = right;
        dir = 0;
    }
    n->parent_red = (uintptr_t)p | 1;
    if (p == NULL)
        idx->root = n;
    else
        p->child[dir] = n;
    if (right == NULL)
        idx->last = n;
    idx->count++;
    rb_insert_fixup(idx, n);
}

/*
 * Restores the black-height rule after a black node was unlinked: x (possibly NULL, then its
 * parent is xp) carries one black too few on its paths.
 */
static void rb_erase_fixup(struct bblog_index *idx, struct idx_node *x, struct idx_node *xp)
{
    while (x != idx->root && !rb_is_red(x)) {
        int dir = xp->child[0] == x ? 0 : 1;
        struct idx_node *w = xp->child[!dir];  /* non-NULL: its side has black height >= 1 */

        if (rb_is_red(w)) {
            /* Red sibling: rotate so that x gets a black sibling. */
            rb_set_black(w);
            rb_set_red(xp);
            rb_rotate(idx, xp, dir);
            w = xp->child[!dir];
        }
        if (!rb_is_red(w->child[0]) && !rb_is_red(w->child[1])) {
            /* Take one black off the sibling's side too and move the deficit up. */
            rb_set_red(w);
            x = xp;
            xp = rb_parent(x);
            continue;
        }
        if (!rb_is_red(w->child[!dir])) {
            /* Only the inner nephew is red: make it the outer one. */
            rb_set_black(w->child[dir]);
            rb_set_red(w);
            rb_rotate(idx, w, !dir);
            w = xp->child[!dir];
        }
        rb_copy_colour(w, xp);
        rb_set_black(xp);
        rb_set_black(w->child[!dir]);
        rb_rotate(idx, xp, dir);
        x = idx->root;
        break;
    }
    if (x != NULL)
        rb_set_black(x);
}

/* Puts v (possibly NULL) where u hangs. */
static inline void rb_transplant(struct bblog_index *idx, struct idx_node *u, struct idx_node *v)
{
    struct idx_node *p = rb_parent(u);

    rb_replace_child(idx, p, u, v);
    if (v != NULL)
        rb_set_parent(v, p);
}

/* Unlinks z. With two children, z's successor is relinked in z's place (never copied). */
static void rb_erase(struct bblog_index *idx, struct idx_node *z)
{
    struct idx_node *x, *xp;
    bool removed_black;

    if (z->child[0] == NULL || z->child[1] == NULL) {
        x = z->child[z->child[0] == NULL];
        xp = rb_parent(z);
        removed_black = !rb_is_red(z);
        rb_transplant(idx, z, x);
    } else {
        struct idx_node *y = z->child[1];

        while (y->child[0] != NULL)
            y = y->child[0];
        removed_black = !rb_is_red(y);
        x = y->child[1];
        if (rb_parent(y) == z) {
            xp = y;
        } else {
            xp = rb_parent(y);
            rb_transplant(idx, y, x);
            y->child[1] = z->child[1];
            rb_set_parent(y->child[1], y);
        }
        rb_transplant(idx, z, y);
        y->child[0] = z->child[0];
        rb_set_parent(y->child[0], y);
        rb_copy_colour(y, z);
    }
    if (removed_black)
        rb_erase_fixup(idx, x, xp);
}

/* The pool. */

/*
 * Makes sure that need (<= IDX_CHUNK_MIN) nodes can be taken without allocating, so that an
 * operation can reserve first and then modify the tree without a failure point in between.
 */
static int pool_reserve(struct bblog_index *idx, size_t need)
{
    struct idx_chunk *next = idx->cur != NULL ? idx->cur->next : idx->chunks;
    size_t avail = idx->nfree;
    struct idx_chunk *c;
    size_t cap;

    if (idx->cur != NULL)
        avail += idx->cur->cap - idx->cur_used;
    if (next != NULL)
        avail += next->cap;     /* a chunk kept by bblog_idx_clear() */
    if (avail >= need)
        return 0;
    /* No chunk follows cur here (next was NULL), so the new one is the next to bump from. */
    cap = idx->tail == NULL ? IDX_CHUNK_MIN : idx->tail->cap * 2;
    if (cap > IDX_CHUNK_MAX)
        cap = IDX_CHUNK_MAX;
    c = malloc(sizeof(*c) + cap * sizeof(c->nodes[0]));
    if (c == NULL)
        return ENOMEM;
    c->next = NULL;
    c->cap = cap;
    if (idx->tail == NULL)
        idx->chunks = c;
    else
        idx->tail->next = c;
    idx->tail = c;
    idx->memory += sizeof(*c) + cap * sizeof(c->nodes[0]);
    return 0;
}

/* Takes a node; only after pool_reserve() covered it, so it cannot fail. */
static struct idx_node *pool_get(struct bblog_index *idx)
{
    struct idx_node *n = idx->free;

    if (n != NULL) {
        idx->free = n->child[0];
        idx->nfree--;
        return n;
    }
    if (idx->cur == NULL || idx->cur_used == idx->cur->cap) {
        idx->cur = idx->cur != NULL ? idx->cur->next : idx->chunks;
        idx->cur_used = 0;
    }
    return &idx->cur->nodes[idx->cur_used++];
}

static void pool_put(struct bblog_index *idx, struct idx_node *n)
{
    n->child[0] = idx->free;
    idx->free = n;
    idx->nfree++;
}

/* Unlinks n from the tree, keeps last and hint valid, and returns n to the pool. */
static void node_erase(struct bblog_index *idx, struct idx_node *n)
{
    if (idx->last == n)
        idx->last = node_prev(n);
    if (idx->hint == n)
        idx->hint = NULL;
    rb_erase(idx, n);
    idx->count--;
    pool_put(idx, n);
}

/*
 * Finds *left, the node with the greatest off < off, and *right, the node with the smallest
 * off >= off (each NULL if there is none). The two shortcuts make appenders O(1): writing at
 * or past the end of the rightmost extent, and writing where the last insert stopped (the
 * hint h reaches off, so no other node can start in (h->off, off): it would overlap h).
 */
static void locate(const struct bblog_index *idx, uint64_t off, struct idx_node **left,
                   struct idx_node **right)
{
    struct idx_node *n = idx->last;
    struct idx_node *l = NULL, *r = NULL;

    if (n != NULL && n->off < off) {
        *left = n;
        *right = NULL;
        return;
    }
    n = idx->hint;
    if (n != NULL && n->off < off && node_end(n) >= off) {
        *left = n;
        *right = node_next(n);
        return;
    }
    for (n = idx->root; n != NULL;) {
        if (n->off < off) {
            l = n;
            n = n->child[1];
        } else {
            r = n;
            n = n->child[0];
        }
    }
    *left = l;
    *right = r;
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

void bblog_idx_destroy(struct bblog_index *idx)
{
    struct idx_chunk *c, *next;

    if (idx == NULL)
        return;
    for (c = idx->chunks; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    free(idx);
}

void bblog_idx_clear(struct bblog_index *idx)
{
    /* The chunks stay; bumping restarts at the first one. */
    idx->root = idx->last = idx->hint = NULL;
    idx->bytes = 0;
    idx->count = 0;
    idx->cur = NULL;
    idx->cur_used = 0;
    idx->free = NULL;
    idx->nfree = 0;
}

/*
 * Last writer wins: [off, end) is cut out of the extents it overlaps, then recorded, joined to
 * the extents on either side where they continue it in both file and log (the "canon"
 * invariant). Nodes needed: 2 when the new extent falls strictly inside an older one (the old
 * one splits around it), else 1 unless the new extent joins its left neighbour or reuses an
 * older node it covers entirely; they are reserved before anything changes.
 */
int bblog_idx_insert(struct bblog_index *idx, uint64_t off, uint64_t len, uint64_t log_off)
{
    struct idx_node *left, *right, *n, *target = NULL;
    uint64_t end, dropped = 0;
    bool join_left;

    if (len == 0)
        return 0;
    if (len > UINT64_MAX - off || len > UINT64_MAX - log_off)
        return BBLOG_EINVAL;
    end = off + len;
    locate(idx, off, &left, &right);

    if (left != NULL && node_end(left) > end) {
        /* Strictly inside left (left->off < off): split left around the new extent. */
        struct idx_node *tail;
        uint64_t head = off - left->off;

        /* The same mapping again changes nothing; any other mapping joins neither part. */
        if (left->log_off + head == log_off)
            return 0;
        if (pool_reserve(idx, 2) != 0)
            return ENOMEM;
        tail = pool_get(idx);
        tail->off = end;
        tail->len = node_end(left) - end;
        tail->log_off = left->log_off + (end - left->off);
        left->len = head;
        n = pool_get(idx);
        n->off = off;
        n->len = len;
        n->log_off = log_off;
        rb_link_between(idx, n, left, right);
        rb_link_between(idx, tail, n, right);
        idx->hint = n;
        return 0;               /* bytes unchanged: len bytes replaced by len bytes */
    }

    join_left = left != NULL && node_end(left) >= off &&
                left->log_off + (off - left->off) == log_off;
    if (!join_left && !(right != NULL && node_end(right) <= end) && pool_reserve(idx, 1) != 0)
        return ENOMEM;

    if (left != NULL && node_end(left) > off) {
        dropped += node_end(left) - off;
        left->len = off - left->off;
    }
    if (join_left) {
        target = left;
        left->len = end - left->off;
    }
    /* Older extents starting in [off, end): drop (or reuse) those inside, trim the last. */
    n = right;
    while (n != NULL && n->off < end) {
        struct idx_node *next;

        if (node_end(n) > end) {
            /* Its new key, end, still sorts between the new extent and n's successor. */
            uint64_t cut = end - n->off;

            dropped += cut;
            n->off = end;
            n->len -= cut;
            n->log_off += cut;
            break;
        }
        next = node_next(n);
        dropped += n->len;
        if (target == NULL) {
            /* n == right, the first node at or after off: off is a valid key for it. */
            target = n;
            n->off = off;
            n->len = len;
            n->log_off = log_off;
        } else {
            node_erase(idx, n);
        }
        n = next;
    }
    if (target == NULL) {
        /* Nothing was erased, so right is still left's successor. */
        target = pool_get(idx);
        target->off = off;
        target->len = len;
        target->log_off = log_off;
        rb_link_between(idx, target, left, right);
    }
    /* n is now target's successor. */
    if (n != NULL && n->off == end && n->log_off == target->log_off + (end - target->off)) {
        target->len += n->len;
        node_erase(idx, n);
    }
    idx->bytes += len - dropped;
    idx->hint = target;
    return 0;
}

/* Punches [off, end) out of the index; one node is needed only to split a straddler. */
int bblog_idx_remove(struct bblog_index *idx, uint64_t off, uint64_t len)
{
    struct idx_node *left, *right, *n;
    uint64_t end, dropped = 0;

    if (len == 0)
        return 0;
    end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
    locate(idx, off, &left, &right);

    if (left != NULL && node_end(left) > off) {
        uint64_t left_end = node_end(left);

        if (left_end > end) {
            struct idx_node *tail;

            if (pool_reserve(idx, 1) != 0)
                return ENOMEM;
            tail = pool_get(idx);
            tail->off = end;
            tail->len = left_end - end;
            tail->log_off = left->log_off + (end - left->off);
            left->len = off - left->off;
            rb_link_between(idx, tail, left, right);
            idx->bytes -= end - off;
            return 0;
        }
        dropped += left_end - off;
        left->len = off - left->off;
    }
    n = right;
    while (n != NULL && n->off < end) {
        struct idx_node *next;

        if (node_end(n) > end) {
            uint64_t cut = end - n->off;

            dropped += cut;
            n->off = end;
            n->len -= cut;
            n->log_off += cut;
            break;
        }
        next = node_next(n);
        dropped += n->len;
        node_erase(idx, n);
        n = next;
    }
    idx->bytes -= dropped;
    return 0;
}

void bblog_idx_iter_init(const struct bblog_index *idx, struct bblog_idx_iter *it, uint64_t off,
                         uint64_t len)
{
    const struct idx_node *n, *at_or_before = NULL, *after = NULL;

    it->idx = idx;
    it->lo = off;
    it->hi = len > UINT64_MAX - off ? UINT64_MAX : off + len;
    it->node = NULL;
    if (it->lo == it->hi)
        return;
    for (n = idx->root; n != NULL;) {
        if (n->off <= off) {
            at_or_before = n;
            n = n->child[1];
        } else {
            after = n;
            n = n->child[0];
        }
    }
    /* The first extent ending after off: the one starting at or before it, if it reaches. */
    it->node = at_or_before != NULL && node_end(at_or_before) > off ? at_or_before : after;
}

int bblog_idx_iter_next(struct bblog_idx_iter *it, struct bblog_extent *out)
{
    const struct idx_node *n = it->node;
    uint64_t lo, hi;

    if (n == NULL || n->off >= it->hi) {
        it->node = NULL;
        return 0;
    }
    lo = n->off > it->lo ? n->off : it->lo;
    hi = node_end(n) < it->hi ? node_end(n) : it->hi;
    out->off = lo;
    out->len = hi - lo;
    out->log_off = n->log_off + (lo - n->off);
    it->node = node_next(n);
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
    return idx->last != NULL ? node_end(idx->last) : 0;
}

size_t bblog_idx_memory(const struct bblog_index *idx)
{
    return idx->memory;
}

/* Black height of the subtree at n (NULL links count 0), or -1 with *why set. */
static int check_subtree(const struct idx_node *n, const struct idx_node *parent,
                         const char **why)
{
    int hl, hr;

    if (n == NULL)
        return 0;
    if (rb_parent(n) != parent) {
        *why = "a node's parent pointer does not point to its parent";
        return -1;
    }
    if (rb_is_red(n) && (rb_is_red(n->child[0]) || rb_is_red(n->child[1]))) {
        *why = "a red node has a red child";
        return -1;
    }
    hl = check_subtree(n->child[0], n, why);
    if (hl < 0)
        return -1;
    hr = check_subtree(n->child[1], n, why);
    if (hr < 0)
        return -1;
    if (hl != hr) {
        *why = "black heights differ between two subtrees";
        return -1;
    }
    return hl + !rb_is_red(n);
}

/* Verifies every invariant stated at the top of this file in O(count): NULL, or a sentence
 * naming the first one found broken. */
const char *bblog_idx_check(const struct bblog_index *idx)
{
    const struct idx_node *n, *prev = NULL;
    const struct idx_chunk *c;
    const char *why = NULL;
    uint64_t bytes = 0;
    size_t count = 0, slots = 0, nfree = 0;
    bool hint_found = idx->hint == NULL;

    if (idx->root != NULL && (rb_parent(idx->root) != NULL || rb_is_red(idx->root)))
        return "the root has a parent or is red";
    if (check_subtree(idx->root, NULL, &why) < 0)
        return why;
    for (n = node_first(idx); n != NULL; prev = n, n = node_next(n)) {
        if (n->len == 0)
            return "an extent is empty";
        if (n->len > UINT64_MAX - n->off || n->len > UINT64_MAX - n->log_off)
            return "an extent overflows the file or the log";
        if (prev != NULL && node_end(prev) > n->off)
            return "two extents overlap or are out of order";
        if (prev != NULL && node_end(prev) == n->off && prev->log_off + prev->len == n->log_off)
            return "two neighbours contiguous in file and log were not coalesced";
        if (n == idx->hint)
            hint_found = true;
        bytes += n->len;
        count++;
    }
    if (count != idx->count)
        return "count differs from the number of nodes";
    if (bytes != idx->bytes)
        return "bytes differs from the sum of extent lengths";
    if (idx->last != prev)
        return "last is not the rightmost node";
    if (!hint_found)
        return "hint is not a node of the tree";
    for (n = idx->free; n != NULL; n = n->child[0])
        nfree++;
    if (nfree != idx->nfree)
        return "nfree differs from the length of the free list";
    if (idx->cur != NULL) {
        for (c = idx->chunks; c != idx->cur; c = c->next) {
            if (c == NULL)
                return "cur is not one of the chunks";
            slots += c->cap;
        }
        slots += idx->cur_used;
    }
    if (slots != count + nfree)
        return "pool slots handed out differ from nodes in the tree plus free nodes";
    return NULL;
}
