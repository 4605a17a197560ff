/*
 * Reads that see what other processes logged (bblog_consistency=posix): the reader's side of
 * the published lists (ad_bblog_peer_list.c has the writer's side and the format).
 *
 * Data path. A read of [lo, hi) gathers every candidate extent of the range: this process's
 * logged bytes and writes through, its node's peers' (peer_update, gather), other nodes'
 * through their read servers (add_remote, ad_bblog_peer_remote.c); and paints them over the
 * PFS bytes (paint) in the order below.
 *
 * What a read sees: the writes of collective calls the reader has made too, and the
 * independent writes made after no more collective calls than the reader has made. With
 * plain ROMIO a collective write reaches the file only once every process has entered it (its
 * two-phase exchange), so a process that reads before entering the call never sees that
 * call's bytes; bblog's collective writes are local appends, and a process ahead of the
 * others must not show them early either. Entries are in stamp order (a process's stamps
 * never decrease), so a reader takes a peer's entries up to the first one made after more
 * collective calls than its own (the high half of the stamps), and the rest once it has made
 * that call too.
 *
 * Order: a reader builds, per peer, an interval index of that peer's published extents (the
 * later entry wins within a peer, as in the peer's own index) and the peer's stamp of each
 * run of its data log. Over the PFS bytes it then paints every candidate extent of the range
 * in stamp order (ad_bblog_base_order.c): a write made after a collective call shows over one made
 * before it, whoever made them, and on one node a write made after another (ordered by a
 * barrier or a message) shows over it, as on a POSIX file system. At equal stamps (writes of
 * one process, or without a write clock) other processes' bytes go before its own, so its own
 * last write shows (read-your-writes).
 *
 * Invariants. The epoch of every list used is loaded before and after the payloads are read;
 * when one changed, the whole read is done again: those bytes are in the PFS file by then. A
 * peer without a list contributes nothing. A read server reads the lists with a view of its
 * own (Peer_view, Peer_serve).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_peer.h"
#include "ad_bblog_peer_priv.h"
#include "adioi.h"

/* What this handle knows of one other process's list. */
struct peer {
    int fd, data_fd;
    uint64_t data_base;         /* of its data log in data_fd's file */
    const struct vis_hdr *map;
    size_t map_len;
    uint64_t epoch, seen, colls_tried;
    struct bblog_index *idx;
    struct ADIOI_BBLOG_run *runs;
    size_t nruns, runs_cap;
    struct ADIOI_BBLOG_piece *through;
    size_t nthrough, through_cap;
    uint64_t end;               /* end of the furthest byte published */
};

/* A view of the lists of one open's processes: a handle's own (self: its rank, not looked
 * at), or a read server's (ad_bblog_peer_remote.c: every process of its node, self -1). */
struct ADIOI_BBLOG_peers {
    int n;                      /* the communicator's size */
    struct peer *p;
    int self;
    char logdir[PATH_MAX];
    char token[256];            /* the lists are TOKEN.rRANK.vis in logdir */
    unsigned char *here;        /* which ranks share this node, or NULL when unknown */
    int always;                 /* look for a missing list at every read: all ranks are here */
};

static void peer_forget(struct peer *p)
{
    if (p->idx)
        bblog_idx_clear(p->idx);
    p->nruns = 0;
    p->nthrough = 0;
    p->seen = 0;
    p->end = 0;
}

static void peer_close(struct peer *p)
{
    if (p->map)
        munmap((void *) p->map, p->map_len);
    if (p->fd >= 0)
        close(p->fd);
    if (p->data_fd >= 0)
        close(p->data_fd);
    bblog_idx_destroy(p->idx);
    free(p->runs);
    free(p->through);
}

struct ADIOI_BBLOG_peers *ADIOI_BBLOG_Peer_view(const char *logdir, const char *log_name, int n,
                                                int self)
{
    struct ADIOI_BBLOG_peers *ps;
    const char *r = strrchr(log_name, '.');     /* log_name is TOKEN.rRANK */

    ps = calloc(1, sizeof(*ps));
    if (!ps || !(ps->p = calloc((size_t) n, sizeof(*ps->p)))) {
        free(ps);
        return NULL;
    }
    ps->n = n;
    ps->self = self;
    snprintf(ps->logdir, sizeof(ps->logdir), "%s", logdir);
    snprintf(ps->token, sizeof(ps->token), "%.*s", r ? (int) (r - log_name) : 0, log_name);
    for (int i = 0; i < n; i++) {
        ps->p[i].fd = ps->p[i].data_fd = -1;
        ps->p[i].colls_tried = UINT64_MAX;
    }
    return ps;
}

void ADIOI_BBLOG_Peer_view_free(struct ADIOI_BBLOG_peers *ps)
{
    if (!ps)
        return;
    for (int i = 0; i < ps->n; i++)
        peer_close(&ps->p[i]);
    free(ps->p);
    free(ps->here);
    free(ps);
}

/* Which ranks share this node (here[k] != 0), or all of them (here NULL): their lists are
 * looked for at every read, the others' never. */
int ADIOI_BBLOG_Peer_here(struct ADIOI_BBLOG_peers *ps, const unsigned char *here)
{
    if (here) {
        if (!(ps->here = malloc((size_t) ps->n)))
            return ENOMEM;
        memcpy(ps->here, here, (size_t) ps->n);
    }
    ps->always = 1;
    return 0;
}

int ADIOI_BBLOG_Peer_open(struct ADIOI_BBLOG_state *st)
{
    st->peers = ADIOI_BBLOG_Peer_view(st->logdir, "", st->nprocs, st->rank);
    return st->peers ? 0 : ENOMEM;
}

void ADIOI_BBLOG_Peer_named(struct ADIOI_BBLOG_state *st)
{
    const char *r = strrchr(st->log_name, '.');

    snprintf(st->peers->token, sizeof(st->peers->token), "%.*s",
             r ? (int) (r - st->log_name) : 0, st->log_name);
    if (st->one_node)
        ADIOI_BBLOG_Peer_here(st->peers, NULL);
}

void ADIOI_BBLOG_Peer_close(struct ADIOI_BBLOG_state *st)
{
    ADIOI_BBLOG_Peer_view_free(st->peers);
    st->peers = NULL;
}

/* Maps rank k's list once it exists. 0 when there is none (yet), 1 when mapped. */
static int peer_find(struct ADIOI_BBLOG_peers *ps, int k, uint64_t colls)
{
    struct peer *p = &ps->p[k];
    char path[PATH_MAX + 300];
    struct stat sb;
    void *m;

    if (p->fd >= 0)
        return 1;
    if (k == ps->self || (ps->here && !ps->here[k]))
        return 0;
    /* A process of this node makes its link before its open returns, so a list not there yet
     * is looked for at every read. When it is not known which processes share the node, one
     * may be on another and is looked for once per collective call. */
    if (!ps->always && p->colls_tried == colls)
        return 0;
    p->colls_tried = colls;
    snprintf(path, sizeof(path), "%s/%s.r%d.vis", ps->logdir, ps->token, k);
    p->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (p->fd < 0)
        return 0;
    if (fstat(p->fd, &sb) != 0 || (size_t) sb.st_size < VIS_HDR ||
        (m = mmap(NULL, (size_t) sb.st_size, PROT_READ, MAP_SHARED, p->fd, 0)) == MAP_FAILED) {
        close(p->fd);
        p->fd = -1;
        return 0;
    }
    p->map = m;
    p->map_len = (size_t) sb.st_size;
    if (p->map->magic != VIS_MAGIC || bblog_idx_create(&p->idx) != 0) {
        munmap(m, p->map_len);
        p->map = NULL;
        close(p->fd);
        p->fd = -1;
        return 0;
    }
    p->epoch = UINT64_MAX;
    return 1;
}
static int note_run(struct peer *p, uint64_t log_off, uint64_t gen)
{
    if (p->nruns && p->runs[p->nruns - 1].stamp == gen)
        return 0;
    if (bblog_grow((void **) &p->runs, &p->runs_cap, p->nruns + 1, sizeof(*p->runs)))
        return ENOMEM;
    p->runs[p->nruns].log_off = log_off;
    p->runs[p->nruns].stamp = gen;
    p->nruns++;
    return 0;
}

static uint64_t run_gen(const struct peer *p, uint64_t log_off, uint64_t *run_end)
{
    size_t i = ADIOI_BBLOG_Run_find(p->runs, p->nruns, log_off, run_end);

    return p->nruns ? p->runs[i].stamp : 0;
}

/* Takes in what rank k published since the last look, up to the first entry made after more
 * collective calls than limit says (the high half of a stamp); *epoch gets the epoch it read
 * under. */
static int peer_update(struct peer *p, uint32_t limit, uint64_t *epoch)
{
    uint64_t e = ADIOI_BBLOG_Peer_load(&p->map->epoch), n = ADIOI_BBLOG_Peer_load(&p->map->count);
    size_t need = VIS_HDR + n * sizeof(struct vis_ent);
    int rc = 0;

    *epoch = e;
    if (e & 1)                  /* being emptied right now */
        return EAGAIN;
    if (e != p->epoch) {
        peer_forget(p);
        p->epoch = e;
    }
    if (n < p->seen)            /* emptied and refilled between our two loads */
        peer_forget(p);
    if (need > p->map_len) {
        struct stat sb;
        void *m;
        if (fstat(p->fd, &sb) != 0 || (size_t) sb.st_size < need)
            return EIO;
        m = mmap(NULL, (size_t) sb.st_size, PROT_READ, MAP_SHARED, p->fd, 0);
        if (m == MAP_FAILED)
            return errno;
        munmap((void *) p->map, p->map_len);
        p->map = m;
        p->map_len = (size_t) sb.st_size;
    }
    for (; rc == 0 && p->seen < n; p->seen++) {
        const struct vis_ent *x = (const struct vis_ent *) ((const char *) p->map + VIS_HDR) +
            p->seen;
        struct vis_ent ent = *x;

        if (ADIOI_BBLOG_COLL_STAMP(ent.gen) > limit)
            break;
        if (ent.off + ent.len > p->end)
            p->end = ent.off + ent.len;
        if (ent.flags & VIS_THROUGH) {
            /* Written to the PFS after what it covers was logged: the log no longer shows. */
            rc = bblog_idx_remove(p->idx, ent.off, ent.len);
            if (rc == 0 && bblog_grow((void **) &p->through, &p->through_cap,
                                            p->nthrough + 1, sizeof(*p->through)))
                rc = ENOMEM;
            if (rc == 0) {
                p->through[p->nthrough].off = ent.off;
                p->through[p->nthrough].len = ent.len;
                p->through[p->nthrough].stamp = ent.gen;
                p->nthrough++;
            }
        } else {
            rc = note_run(p, ent.data_off, ent.gen);
            if (rc == 0)
                rc = bblog_idx_insert(p->idx, ent.off, ent.len, ent.data_off);
        }
    }
    /* Entries are rewritten in place when the writer trims its log (Peer_trim): what was read
     * under an epoch that moved on may be torn. */
    if (ADIOI_BBLOG_Peer_load(&p->map->epoch) != e) {
        peer_forget(p);
        return EAGAIN;
    }
    return rc;
}

/* One candidate source of bytes of the range being read. */
struct cand {
    uint64_t off, len, log_off;
    uint64_t gen;
    int who;                    /* rank, or -1 for the PFS file */
    int order;                  /* at equal gen: others' PFS bytes, others' log, own PFS
                                 * bytes, own log */
    const char *mem;            /* the bytes, sent by another node's read server, or NULL */
};

struct cands {
    struct cand *v;
    size_t n, cap;
};

static int add(struct cands *c, uint64_t off, uint64_t len, uint64_t log_off, uint64_t gen,
               int who, int order)
{
    if (bblog_grow((void **) &c->v, &c->cap, c->n + 1, sizeof(*c->v)))
        return ENOMEM;
    c->v[c->n].off = off;
    c->v[c->n].len = len;
    c->v[c->n].log_off = log_off;
    c->v[c->n].gen = gen;
    c->v[c->n].who = who;
    c->v[c->n].order = order;
    c->v[c->n].mem = NULL;
    c->n++;
    return 0;
}

static int by_priority(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;

    if (x->gen != y->gen)
        return x->gen < y->gen ? -1 : 1;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return x->who < y->who ? -1 : x->who > y->who;
}

/* The logged extents of idx within [lo, hi), cut where the stamp changes. */
static int add_logged(struct cands *c, const struct bblog_index *idx, uint64_t lo, uint64_t hi,
                      const struct ADIOI_BBLOG_logstate *own, const struct peer *p, int who,
                      int order)
{
    struct bblog_idx_iter it;
    struct bblog_extent e;
    int rc = 0;

    bblog_idx_iter_init(idx, &it, lo, hi - lo);
    while (rc == 0 && bblog_idx_iter_next(&it, &e)) {
        while (rc == 0 && e.len > 0) {
            uint64_t run_end, n;
            uint64_t gen = own ? ADIOI_BBLOG_Stamp_at(own, e.log_off, &run_end) :
                run_gen(p, e.log_off, &run_end);
            n = run_end - e.log_off < e.len ? run_end - e.log_off : e.len;
            rc = add(c, e.off, n, e.log_off, gen, who, order);
            e.off += n;
            e.log_off += n;
            e.len -= n;
        }
    }
    return rc;
}

static int add_through(struct cands *c, const struct ADIOI_BBLOG_piece *t, size_t nt,
                       uint64_t lo, uint64_t hi, int who, int order)
{
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < nt; i++) {
        uint64_t a = t[i].off > lo ? t[i].off : lo;
        uint64_t b = t[i].off + t[i].len < hi ? t[i].off + t[i].len : hi;
        if (a < b)
            rc = add(c, a, b - a, 0, t[i].stamp, -1, order);
    }
    return rc;
}

static int pread_full(int fd, char *buf, uint64_t len, uint64_t off)
{
    struct iovec iov = { buf, (size_t) len };

    return ADIOI_BBLOG_Io_vec(fd, &iov, 1, off, 0);
}

static int open_data(const struct ADIOI_BBLOG_peers *ps, struct peer *p)
{
    char path[PATH_MAX + 512];
    const char *name = p->map->data_name;

    if (p->data_fd >= 0)
        return 0;
    if (!name[0] || memchr(name, '\0', sizeof(p->map->data_name)) == NULL || strchr(name, '/'))
        return EIO;
    snprintf(path, sizeof(path), "%s/%s", ps->logdir, name);
    p->data_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    p->data_base = p->map->data_base;
    return p->data_fd < 0 ? errno : 0;
}

/* Takes in every listed process's new entries up to limit and lists the candidates of
 * [lo, hi): 0, EAGAIN while a list is being emptied, or an errno. colls: the reader's
 * collective calls, for peer_find. */
static int gather(struct ADIOI_BBLOG_peers *ps, uint32_t limit, uint64_t colls, uint64_t lo,
                  uint64_t hi, uint64_t *epochs, struct cands *c)
{
    int rc = 0;

    c->n = 0;
    for (int k = 0; rc == 0 && k < ps->n; k++) {
        struct peer *p = &ps->p[k];
        if (!peer_find(ps, k, colls))
            continue;
        rc = peer_update(p, limit, &epochs[k]);
        if (rc == 0 && p->nruns)
            rc = add_logged(c, p->idx, lo, hi, NULL, p, k, 1);
        if (rc == 0)
            rc = add_through(c, p->through, p->nthrough, lo, hi, k, 0);
    }
    return rc;
}

/* Whether a list was emptied since gather read the epochs: its bytes are in the PFS file. */
static int emptied(const struct ADIOI_BBLOG_peers *ps, const uint64_t *epochs)
{
    for (int k = 0; k < ps->n; k++)
        if (ps->p[k].fd >= 0 && ADIOI_BBLOG_Peer_load(&ps->p[k].map->epoch) != epochs[k])
            return 1;
    return 0;
}

static uint32_t limit_of(const struct ADIOI_BBLOG_state *st)
{
    return ADIOI_BBLOG_COLL_STAMP(ADIOI_BBLOG_Stamp(st->ls));
}

int ADIOI_BBLOG_Peer_serve(struct ADIOI_BBLOG_peers *ps, uint32_t limit, uint64_t lo, uint64_t hi,
                           struct ADIOI_BBLOG_served *out)
{
    uint64_t *epochs = calloc((size_t) ps->n, sizeof(*epochs));
    struct cands c = { NULL, 0, 0 };
    int rc, k;

    if (!epochs)
        return ENOMEM;
    do {
        size_t i, need = 0;

        out->n = out->ndata = 0;
        rc = gather(ps, limit, 0, lo, hi, epochs, &c);
        if (rc == EAGAIN)
            continue;
        for (i = 0; i < c.n; i++)
            need += c.v[i].who >= 0 ? c.v[i].len : 0;
        if (rc == 0 && (bblog_grow((void **) &out->c, &out->cap, c.n + 1, sizeof(*out->c))
                        || bblog_grow((void **) &out->data, &out->data_cap, need + 1, 1)))
            rc = ENOMEM;
        for (i = 0; rc == 0 && i < c.n; i++) {
            const struct cand *x = &c.v[i];
            struct ADIOI_BBLOG_rcand *y = &out->c[out->n++];
            y->off = x->off;
            y->len = x->len;
            y->gen = x->gen;
            y->who = x->who;
            y->order = x->order;
            if (x->who < 0)
                continue;
            rc = open_data(ps, &ps->p[x->who]);
            if (rc == 0)
                rc = pread_full(ps->p[x->who].data_fd, out->data + out->ndata, x->len,
                                ps->p[x->who].data_base + x->log_off);
            if (rc == EIO && ADIOI_BBLOG_Peer_load(&ps->p[x->who].map->epoch) != epochs[x->who])
                rc = EAGAIN;    /* emptied under us: read again */
            out->ndata += x->len;
        }
        if (rc == 0 && emptied(ps, epochs))
            rc = EAGAIN;
    } while (rc == EAGAIN);
    out->esum = out->end = out->nent = 0;
    for (k = 0; rc == 0 && k < ps->n; k++) {
        if (ps->p[k].fd < 0)
            continue;
        out->esum += epochs[k] + 1;     /* a list found since the last answer changes it too */
        out->nent += ps->p[k].seen;
        if (ps->p[k].end > out->end)
            out->end = ps->p[k].end;
    }
    free(epochs);
    free(c.v);
    return rc;
}

/* What the other nodes' read servers hold of [lo, hi), as candidates (ad_bblog_peer_remote.c):
 * 0, EAGAIN when a node's lists were emptied since its last answer (read again), or an
 * errno. */
static int add_remote(struct ADIOI_BBLOG_state *st, uint64_t lo, uint64_t hi, struct cands *c)
{
    int changed = 0, rc, nn;

    rc = ADIOI_BBLOG_Remote_ask(st, lo, hi - lo, limit_of(st), &changed);
    if (rc != 0)
        return rc;
    if (changed)
        return EAGAIN;
    nn = ADIOI_BBLOG_Remote_nodes(st);
    for (int i = 0; rc == 0 && i < nn; i++) {
        const struct ADIOI_BBLOG_served *a = ADIOI_BBLOG_Remote_answer(st, i);
        const char *mem = a->data;
        for (size_t j = 0; rc == 0 && j < a->n; j++) {
            const struct ADIOI_BBLOG_rcand *y = &a->c[j];
            rc = add(c, y->off, y->len, 0, y->gen, y->who, y->order);
            if (rc == 0 && y->who >= 0) {
                c->v[c->n - 1].mem = mem;
                mem += y->len;
            }
        }
    }
    return rc;
}

int ADIOI_BBLOG_Peer_any(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_peers *ps = st->peers;
    int changed, nn;

    for (int k = 0; ps && k < ps->n; k++)
        if (peer_find(ps, k, st->ls->colls) && ADIOI_BBLOG_Peer_load(&ps->p[k].map->count) > 0)
            return 1;
    if (!st->remote || ADIOI_BBLOG_Remote_ask(st, 0, 0, limit_of(st), &changed) != 0)
        return st->remote != NULL;      /* unknown: the careful way */
    nn = ADIOI_BBLOG_Remote_nodes(st);
    for (int i = 0; i < nn; i++)
        if (ADIOI_BBLOG_Remote_answer(st, i)->nent > 0)
            return 1;
    return 0;
}

/* Paints the candidates over buf (the PFS bytes of [lo, lo + len), got of them before its
 * end) in priority order; *end: the end of the last painted byte, relative to lo. */
static int paint(ADIO_File fd, struct cands *c, uint64_t lo, char *buf, const uint64_t *epochs,
                 ADIO_Offset * end)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int rc = 0;

    qsort(c->v, c->n, sizeof(*c->v), by_priority);
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        const struct cand *x = &c->v[i];
        char *dst = buf + (x->off - lo);
        ADIO_Offset rel_end = (ADIO_Offset) (x->off + x->len - lo), n = 0;

        if (x->mem) {
            memcpy(dst, x->mem, x->len);
            st->stats.bytes_from_others += x->len;
            st->stats.bytes_from_nodes += x->len;
        } else if (x->who < 0) {
            if (ADIOI_BBLOG_Read_inner(fd, (ADIO_Offset) x->off, (ADIO_Offset) x->len, dst, &n)
                != MPI_SUCCESS)
                return EIO;
            if (n < (ADIO_Offset) x->len)
                memset(dst + n, 0, (size_t) (x->len - (uint64_t) n));
        } else if (x->who == st->rank) {
            rc = bblog_log_read(st->ls->log, x->log_off, x->len, dst);
            st->stats.bytes_overlaid += x->len;
        } else {
            struct peer *p = &st->peers->p[x->who];
            rc = open_data(st->peers, p);
            if (rc == 0)
                rc = pread_full(p->data_fd, dst, x->len, p->data_base + x->log_off);
            /* A log emptied under us (its drain was over): the caller sees the new epoch. */
            if (rc == EIO && ADIOI_BBLOG_Peer_load(&p->map->epoch) != epochs[x->who])
                rc = 0;
            st->stats.bytes_from_others += x->len;
        }
        if (rel_end > *end)
            *end = rel_end;
    }
    return rc;
}

int ADIOI_BBLOG_Peer_read(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, char *buf,
                          ADIO_Offset * got, int *done)
{
    static const char myname[] = "ADIOI_BBLOG_READ";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_peers *ps = st->peers;
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    uint64_t lo = (uint64_t) off, hi = lo + (uint64_t) len, *epochs;
    struct cands c = { NULL, 0, 0 };
    int rc, err = MPI_SUCCESS, changed;

    *done = 0;
    if (!(epochs = malloc((size_t) ps->n * sizeof(*epochs))))
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, ENOMEM, "cannot read", st->pfs_path);
    do {
        ADIO_Offset end = 0;

        changed = 1;
        rc = gather(ps, limit_of(st), ls->colls, lo, hi, epochs, &c);
        if (rc == EAGAIN)
            continue;
        /* Nothing of anyone else's in the range on this node, and no other node: the
         * caller's plain overlay does. */
        if (rc == 0 && c.n == 0 && !st->remote && emptied(ps, epochs))
            continue;
        if (rc != 0 || (c.n == 0 && !st->remote))
            break;
        rc = add_logged(&c, ls->idx, lo, hi, ls, NULL, st->rank, 3);
        if (rc == 0)
            rc = add_through(&c, ls->through, ls->nthrough, lo, hi, st->rank, 2);
        /* What the background drain wrote to the PFS file: the PFS bytes, at their stamps. */
        if (rc == 0)
            rc = add_through(&c, ls->drained, ls->ndrained, lo, hi, st->rank, 2);
        if (rc != 0)
            break;
        err = ADIOI_BBLOG_Read_inner(fd, off, len, buf, got);
        if (err != MPI_SUCCESS)
            break;
        /* Bytes past the PFS file's end read as zeros, as they will once drained. */
        if (*got < len)
            memset(buf + *got, 0, (size_t) (len - *got));
        /* Other nodes are asked after the PFS read: what they emptied since their last
         * answer may have reached the file after it, and then the whole read is made again. */
        if (st->remote && (rc = add_remote(st, lo, hi, &c)) != 0) {
            if (rc == EAGAIN)
                continue;
            break;
        }
        rc = paint(fd, &c, lo, buf, epochs, &end);
        if (rc != 0)
            break;
        if (end > *got)
            *got = end;
        /* A list emptied meanwhile: its bytes are in the PFS file now; read again. */
        changed = emptied(ps, epochs);
        *done = !changed;
    } while (changed);
    free(epochs);
    free(c.v);
    if (rc != 0 && err == MPI_SUCCESS)
        err = st->remote && rc != ENOMEM && rc != EIO ?
            ADIOI_BBLOG_Remote_err(st, myname, __LINE__, rc, 0) :
            ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot read what another process "
                               "logged in", st->logdir);
    return err;
}

ADIO_Offset ADIOI_BBLOG_Peer_end(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_peers *ps = st->peers;
    uint64_t end = 0, e;
    int changed, nn;

    for (int k = 0; ps && k < ps->n; k++) {
        struct peer *p = &ps->p[k];
        if (!peer_find(ps, k, st->ls->colls) || peer_update(p, limit_of(st), &e) != 0)
            continue;
        if (p->end > end)
            end = p->end;
    }
    /* Only nodes that announced writes past this end are asked. */
    if (st->remote && ADIOI_BBLOG_Remote_ask(st, end, 0, limit_of(st), &changed) == 0) {
        nn = ADIOI_BBLOG_Remote_nodes(st);
        for (int i = 0; i < nn; i++)
            if (ADIOI_BBLOG_Remote_answer(st, i)->end > end)
                end = ADIOI_BBLOG_Remote_answer(st, i)->end;
    }
    return (ADIO_Offset) end;
}
