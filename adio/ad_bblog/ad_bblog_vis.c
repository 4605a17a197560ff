/*
 * Reads that see what other processes wrote (bblog_consistency=posix, the default).
 *
 * Parallel HDF5, and programs like it, read within one open bytes that another process wrote
 * just before, ordered only by a message or a barrier, with no MPI_File_sync between. MPI does
 * not promise that, but every POSIX file system gives it; with bblog those bytes would still
 * be in the writer's log. So every process of a multi-process handle publishes what it logs,
 * and a read lays what the processes of its node published over the bytes of the PFS file,
 * with what other nodes' read servers send of theirs (ad_bblog_remote.c).
 *
 * Publishing, at the end of each write call: the staged payload goes into the data log file
 * (bblog_log_flush; the page cache is shared by the node), then the call's extents are
 * appended to the process's list, a small file beside the log that every reader maps. An entry
 * is {file offset, length, data log offset, stamp}, or a range written straight to the PFS
 * file (no data offset). Entries are never changed once published; the count is stored after
 * them with release order, so a reader that loads it with acquire order reads complete entries
 * and finds their payloads in the data log.
 *
 * Draining: when a drain has put everything on the PFS and the log is about to be emptied, the
 * list's epoch is bumped and its count reset, before the data log is truncated. A reader loads
 * the epoch of every list it used before and after it reads the payloads, and does the whole
 * read again when one changed: those bytes are in the PFS file by then.
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
 * in stamp order (ad_bblog_order.c): a write made after a collective call shows over one made
 * before it, whoever made them, and on one node a write made after another (ordered by a
 * barrier or a message) shows over it, as on a POSIX file system. At equal stamps (writes of
 * one process, or without a write clock) other processes' bytes go before its own, so its own
 * last write shows (read-your-writes).
 *
 * Finding a peer's list: the list is BASE.vlist, after the log name of the handle that made
 * it, and each handle links it under its own log name plus ".vis", so rank k of the handle's
 * communicator is at <token>.r<k>.vis in the burst-buffer directory. The link is made at
 * open, before the call returns: a write that a read is ordered after was made after the
 * writer's link existed. A peer without a list (a read-only handle, bblog_consistency=mpi)
 * contributes nothing; one of another node is asked through its node's server. A read
 * server reads the lists with a view of its own (Vis_view, Vis_serve).
 *
 * The list is node-local scratch, not part of the log format: replay never reads it, and it is
 * removed at close (the `bblog` tool ignores it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "adioi.h"

#define VIS_MAGIC UINT64_C(0x31534956474f4c42)      /* "BLOGVIS1" */
#define VIS_HDR 512
#define VIS_MIN_LEN ((size_t) 64 << 10)
#define VIS_THROUGH 1u           /* the bytes are in the PFS file, not in the log */

struct vis_hdr {
    uint64_t magic;
    uint64_t epoch;             /* bumped each time the log is emptied */
    uint64_t count;             /* entries published in this epoch */
    uint64_t data_base;         /* where the data log starts in that file (a node pair's slot) */
    char data_name[VIS_HDR - 32];       /* the data log's name in the same directory, or "" */
};

struct vis_ent {
    uint64_t off, len, data_off;
    uint64_t gen;               /* the write's ordering stamp */
    uint32_t flags, pad;
};

/* The process's list of one file (in its logstate). */
struct ADIOI_BBLOG_vis {
    int fd;
    char path[PATH_MAX];
    struct vis_hdr *map;
    size_t map_len;
    struct vis_ent *pend;       /* logged since the last publication */
    size_t npend, pend_cap;
};

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
 * at), or a read server's (ad_bblog_remote.c: every process of its node, self -1). */
struct ADIOI_BBLOG_peers {
    int n;                      /* the communicator's size */
    struct peer *p;
    int self;
    char logdir[PATH_MAX];
    char token[256];            /* the lists are TOKEN.rRANK.vis in logdir */
    unsigned char *here;        /* which ranks share this node, or NULL when unknown */
    int always;                 /* look for a missing list at every read: all ranks are here */
};

static uint64_t load(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* ---- the writer's side ---- */

static int vis_map(struct ADIOI_BBLOG_vis *v, size_t len)
{
    void *m;
    int rc;

    /* Space reserved first: a store into a mapped page that a full file system cannot back
     * is a SIGBUS; an allocation that fails is an error here. */
    rc = posix_fallocate(v->fd, (off_t) v->map_len, (off_t) (len - v->map_len));
    if (rc != 0)
        return rc;
    m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
    if (m == MAP_FAILED)
        return errno;
    if (v->map)
        munmap(v->map, v->map_len);
    v->map = m;
    v->map_len = len;
    return 0;
}

int ADIOI_BBLOG_Vis_attach(struct ADIOI_BBLOG_state *st)
{
    char link_path[PATH_MAX + 300];
    struct ADIOI_BBLOG_vis *v = st->ls->vis;
    int rc = 0;

    /* The list's own name belongs to the process's state of the file (removed when the last
     * handle lets go); each handle links its name to it. */
    if (!v) {
        v = calloc(1, sizeof(*v));
        if (!v)
            return ENOMEM;
        snprintf(v->path, sizeof(v->path), "%s/%s.vlist", st->logdir, st->log_name);
        v->fd = open(v->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (v->fd < 0) {
            rc = errno;
            free(v);
            return rc;
        }
        rc = vis_map(v, VIS_MIN_LEN);
        if (rc != 0) {
            close(v->fd);
            unlink(v->path);
            free(v);
            return rc;
        }
        v->map->magic = VIS_MAGIC;
        st->ls->vis = v;
    }
    snprintf(link_path, sizeof(link_path), "%s/%s.vis", st->logdir, st->log_name);
    if (link(v->path, link_path) != 0)
        return errno;
    snprintf(st->vis_link, sizeof(st->vis_link), "%s", link_path);
    return 0;
}

void ADIOI_BBLOG_Vis_detach(struct ADIOI_BBLOG_state *st)
{
    if (st->vis_link[0])
        unlink(st->vis_link);
    st->vis_link[0] = '\0';
}

void ADIOI_BBLOG_Vis_free(struct ADIOI_BBLOG_logstate *ls)
{
    struct ADIOI_BBLOG_vis *v = ls->vis;

    if (!v)
        return;
    if (v->map)
        munmap(v->map, v->map_len);
    close(v->fd);
    unlink(v->path);
    free(v->pend);
    free(v);
    ls->vis = NULL;
}

int ADIOI_BBLOG_Vis_note(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                         uint64_t data_off, uint64_t gen, int through)
{
    struct ADIOI_BBLOG_vis *v = ls->vis;
    struct vis_ent *last;

    if (!v)
        return 0;
    last = v->npend ? &v->pend[v->npend - 1] : NULL;
    /* The pieces of one strided call that follow each other in the file and in the log. */
    if (last && !through && !last->flags && last->gen == gen && last->off + last->len == off &&
        last->data_off + last->len == data_off) {
        last->len += len;
        return 0;
    }
    if (bblog_grow((void **) &v->pend, &v->pend_cap, v->npend + 1, sizeof(*v->pend)))
        return ENOMEM;
    v->pend[v->npend].off = off;
    v->pend[v->npend].len = len;
    v->pend[v->npend].data_off = through ? 0 : data_off;
    v->pend[v->npend].gen = gen;
    v->pend[v->npend].flags = through ? VIS_THROUGH : 0;
    v->pend[v->npend].pad = 0;
    v->npend++;
    return 0;
}

int ADIOI_BBLOG_Vis_publish(ADIO_File fd, ADIOI_BBLOG_through_fn through)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_vis *v = st->ls ? st->ls->vis : NULL;
    uint64_t count;
    size_t need, i;
    int rc = 0, logged = 0, err;

    if (!v || v->npend == 0 || st->vis_hold)
        return MPI_SUCCESS;
    if (st->vis_failed) {       /* the bytes went to the PFS file (ad_bblog_write.c) */
        v->npend = 0;
        return MPI_SUCCESS;
    }
    for (i = 0; i < v->npend; i++)
        logged |= !v->pend[i].flags;
    /* The payloads reach the data log file before any entry names them. When the log cannot
     * write them out, they go to the PFS file instead, and the entries say so. */
    if (logged && st->ls->log && bblog_log_flush(st->ls->log) != 0) {
        for (i = 0; i < v->npend; i++) {
            struct vis_ent *e = &v->pend[i];
            if (e->flags)
                continue;
            err = through(fd, e->off, e->len, e->data_off);
            if (err != MPI_SUCCESS)
                return err;
            e->flags = VIS_THROUGH;
            e->data_off = 0;
        }
        logged = 0;
    }
    if (logged && !v->map->data_name[0]) {
        const char *name = strrchr(bblog_log_data_path(st->ls->log), '/');
        v->map->data_base = bblog_log_data_base(st->ls->log);
        __atomic_thread_fence(__ATOMIC_RELEASE);        /* the base before the name */
        snprintf(v->map->data_name, sizeof(v->map->data_name), "%s", name ? name + 1 : "");
    }
    /* The other nodes' readers ask only nodes that announced the range (ad_bblog_remote.c):
     * before the entries can be seen, their range is announced. */
    if (st->remote) {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (i = 0; i < v->npend; i++) {
            if (v->pend[i].off < lo)
                lo = v->pend[i].off;
            if (v->pend[i].off + v->pend[i].len > hi)
                hi = v->pend[i].off + v->pend[i].len;
        }
        rc = ADIOI_BBLOG_Remote_announce(st, lo, hi);
        if (rc != 0)
            return ADIOI_BBLOG_Remote_err(st, "ADIOI_BBLOG_WRITE", __LINE__, rc, 1);
    }
    count = v->map->count;
    need = VIS_HDR + (count + v->npend) * sizeof(struct vis_ent);
    if (need > v->map_len) {
        size_t len = v->map_len;
        while (len < need)
            len *= 2;
        rc = vis_map(v, len);
    }
    if (rc != 0) {
        /* No room for the list to grow: these bytes go to the PFS file, where the others read
         * them, and so does every later write of this handle (bblog(7)). */
        for (i = 0; i < v->npend; i++) {
            struct vis_ent *e = &v->pend[i];
            if (!e->flags && (err = through(fd, e->off, e->len, e->data_off)) != MPI_SUCCESS)
                return err;
        }
        v->npend = 0;
        st->vis_failed = 1;
        return MPI_SUCCESS;
    }
    memcpy((char *) v->map + VIS_HDR + count * sizeof(struct vis_ent), v->pend,
           v->npend * sizeof(struct vis_ent));
    store(&v->map->count, count + v->npend);
    v->npend = 0;
    return MPI_SUCCESS;
}

void ADIOI_BBLOG_Vis_emptied(struct ADIOI_BBLOG_logstate *ls)
{
    struct ADIOI_BBLOG_vis *v = ls->vis;

    if (!v)
        return;
    /* An odd epoch while the count is reset: a reader that sees an even epoch, then the
     * count, then the same epoch again, read a count of that epoch. */
    store(&v->map->epoch, v->map->epoch + 1);
    store(&v->map->count, 0);
    store(&v->map->epoch, v->map->epoch + 1);
    v->npend = 0;
}

/* Entry e with its log bytes below upto turned into bytes of the PFS file (VIS_THROUGH, the
 * same stamp): out gets 1 or 2 entries; returns how many. */
static size_t trim_ent(const struct vis_ent *e, uint64_t upto, struct vis_ent *out)
{
    uint64_t cut;

    out[0] = *e;
    if (e->flags || e->data_off >= upto)
        return 1;
    cut = upto - e->data_off;
    out[0].flags = VIS_THROUGH;
    out[0].data_off = 0;
    if (cut >= e->len)
        return 1;
    out[0].len = cut;
    out[1] = *e;
    out[1].off += cut;
    out[1].len -= cut;
    out[1].data_off += cut;
    return 2;
}

/*
 * The log's bytes below upto are about to become holes (ad_bblog_trim.c): they are in the PFS
 * file (or overwritten by a later entry). The entries naming them are rewritten to name the PFS
 * file instead, keeping their stamps, so that a reader still ranks those bytes against other
 * processes' older ones. A rewrite, not an append: the epoch is odd while it lasts and moves
 * on after, so a reader that looked before reads again. Application thread only.
 */
int ADIOI_BBLOG_Vis_trim(struct ADIOI_BBLOG_logstate *ls, uint64_t upto)
{
    struct ADIOI_BBLOG_vis *v = ls->vis;
    struct vis_ent *ents, *tmp, two[2];
    size_t count, n = 0, i, k;
    int rc;

    if (!v || !v->map)
        return 0;
    count = v->map->count;
    ents = (struct vis_ent *) ((char *) v->map + VIS_HDR);
    for (i = 0; i < count; i++)
        if (!ents[i].flags && ents[i].data_off < upto)
            break;
    if (i < count) {
        if (!(tmp = malloc(2 * count * sizeof(*tmp))))
            return ENOMEM;
        for (i = 0; i < count; i++) {
            k = trim_ent(&ents[i], upto, two);
            memcpy(tmp + n, two, k * sizeof(*tmp));
            n += k;
        }
        if (VIS_HDR + n * sizeof(*tmp) > v->map_len) {
            size_t len = v->map_len;
            while (len < VIS_HDR + n * sizeof(*tmp))
                len *= 2;
            if ((rc = vis_map(v, len)) != 0) {
                free(tmp);
                return rc;
            }
        }
        store(&v->map->epoch, v->map->epoch + 1);
        memcpy((char *) v->map + VIS_HDR, tmp, n * sizeof(*tmp));
        store(&v->map->count, n);
        store(&v->map->epoch, v->map->epoch + 1);
        free(tmp);
    }
    /* Entries of the call in progress, not published yet. */
    for (i = 0; i < v->npend; i++) {
        if (v->pend[i].flags || v->pend[i].data_off >= upto)
            continue;
        k = trim_ent(&v->pend[i], upto, two);
        if (k == 2 && bblog_grow((void **) &v->pend, &v->pend_cap, v->npend + 1,
                                       sizeof(*v->pend)))
            return ENOMEM;
        v->pend[i] = two[0];
        if (k == 2) {
            memmove(&v->pend[i + 2], &v->pend[i + 1], (v->npend - i - 1) * sizeof(*v->pend));
            v->pend[i + 1] = two[1];
            v->npend++;
            i++;
        }
    }
    return 0;
}

/* ---- the reader's side ---- */

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

struct ADIOI_BBLOG_peers *ADIOI_BBLOG_Vis_view(const char *logdir, const char *log_name, int n,
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

void ADIOI_BBLOG_Vis_view_free(struct ADIOI_BBLOG_peers *ps)
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
int ADIOI_BBLOG_Vis_here(struct ADIOI_BBLOG_peers *ps, const unsigned char *here)
{
    if (here) {
        if (!(ps->here = malloc((size_t) ps->n)))
            return ENOMEM;
        memcpy(ps->here, here, (size_t) ps->n);
    }
    ps->always = 1;
    return 0;
}

int ADIOI_BBLOG_Vis_open(struct ADIOI_BBLOG_state *st)
{
    st->peers = ADIOI_BBLOG_Vis_view(st->logdir, "", st->nprocs, st->rank);
    return st->peers ? 0 : ENOMEM;
}

void ADIOI_BBLOG_Vis_named(struct ADIOI_BBLOG_state *st)
{
    const char *r = strrchr(st->log_name, '.');

    snprintf(st->peers->token, sizeof(st->peers->token), "%.*s",
             r ? (int) (r - st->log_name) : 0, st->log_name);
    if (st->one_node)
        ADIOI_BBLOG_Vis_here(st->peers, NULL);
}

void ADIOI_BBLOG_Vis_close(struct ADIOI_BBLOG_state *st)
{
    ADIOI_BBLOG_Vis_view_free(st->peers);
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
    uint64_t e = load(&p->map->epoch), n = load(&p->map->count);
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
    /* Entries are rewritten in place when the writer trims its log (Vis_trim): what was read
     * under an epoch that moved on may be torn. */
    if (load(&p->map->epoch) != e) {
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
        if (ps->p[k].fd >= 0 && load(&ps->p[k].map->epoch) != epochs[k])
            return 1;
    return 0;
}

static uint32_t limit_of(const struct ADIOI_BBLOG_state *st)
{
    return ADIOI_BBLOG_COLL_STAMP(ADIOI_BBLOG_Stamp(st->ls));
}

int ADIOI_BBLOG_Vis_serve(struct ADIOI_BBLOG_peers *ps, uint32_t limit, uint64_t lo,
                          uint64_t hi, struct ADIOI_BBLOG_served *out)
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
            if (rc == EIO && load(&ps->p[x->who].map->epoch) != epochs[x->who])
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

/* What the other nodes' read servers hold of [lo, hi), as candidates (ad_bblog_remote.c):
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

int ADIOI_BBLOG_Vis_any(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_peers *ps = st->peers;
    int changed, nn;

    for (int k = 0; ps && k < ps->n; k++)
        if (peer_find(ps, k, st->ls->colls) && load(&ps->p[k].map->count) > 0)
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
            st->st.bytes_from_others += x->len;
            st->st.bytes_from_nodes += x->len;
        } else if (x->who < 0) {
            if (ADIOI_BBLOG_Read_inner(fd, (ADIO_Offset) x->off, (ADIO_Offset) x->len, dst, &n)
                != MPI_SUCCESS)
                return EIO;
            if (n < (ADIO_Offset) x->len)
                memset(dst + n, 0, (size_t) (x->len - (uint64_t) n));
        } else if (x->who == st->rank) {
            rc = bblog_log_read(st->ls->log, x->log_off, x->len, dst);
            st->st.bytes_overlaid += x->len;
        } else {
            struct peer *p = &st->peers->p[x->who];
            rc = open_data(st->peers, p);
            if (rc == 0)
                rc = pread_full(p->data_fd, dst, x->len, p->data_base + x->log_off);
            /* A log emptied under us (its drain was over): the caller sees the new epoch. */
            if (rc == EIO && load(&p->map->epoch) != epochs[x->who])
                rc = 0;
            st->st.bytes_from_others += x->len;
        }
        if (rel_end > *end)
            *end = rel_end;
    }
    return rc;
}

int ADIOI_BBLOG_Vis_read(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, char *buf,
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

ADIO_Offset ADIOI_BBLOG_Vis_end(ADIO_File fd)
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
