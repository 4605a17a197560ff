/*
 * Reads that see what other processes wrote (bblog_consistency=posix, the default): this file is
 * the writer's side, the list of published writes each process keeps per file; the reader's is
 * ad_bblog_peer_read.c.
 *
 * Why. Parallel HDF5, and programs like it, read within one open bytes that another process wrote
 * just before, ordered only by a message or a barrier, with no MPI_File_sync between. MPI does not
 * promise that, but every POSIX file system gives it; with bblog those bytes would still be in the
 * writer's log. So every process of a multi-process handle publishes what it logs, and a read lays
 * what the processes of its node published over the bytes of the PFS file, with what other nodes'
 * read servers send of theirs (ad_bblog_peer_remote.c).
 *
 * Data path. Publishing, at the end of each write call: the staged payload goes into the data log
 * file (bblog_log_flush; the page cache is shared by the node), the call's range is announced to
 * the other nodes' read servers where there are any (ad_bblog_peer_remote.c), then the call's
 * extents are appended to the process's list, a small file beside the log that every reader maps.
 * An entry is {file offset, length, data log offset, stamp}, or a range written straight to the PFS
 * file (no data offset).
 *
 * Invariants. Entries are only appended, but for the two rewrites below; the count is stored after
 * them with release order, so a reader that loads it with acquire order reads complete entries and
 * finds their payloads in the data log. The list's space is reserved before it is mapped larger, so
 * that no store into it can fault. Draining: when a drain has put everything on the PFS and the log
 * is about to be emptied, the list's epoch is bumped and its count reset, before the data log is
 * truncated. Trimming: before log bytes become holes (ad_bblog_bg_trim.c), the entries naming them
 * are rewritten to name the PFS file, with their stamps. The epoch is odd while either lasts. A
 * reader loads the epoch of every list it used before and after it reads the payloads, and does the
 * whole read again when one changed: those bytes are in the PFS file by then.
 *
 * Files. Finding a peer's list: the list is BASE.vlist, after the log name of the handle that made
 * it, and each handle links it under its own log name plus ".vis", so rank k of the handle's
 * communicator is at <token>.r<k>.vis in the burst-buffer directory. The link is made at open,
 * before the call returns: a write that a read is ordered after was made after the writer's link
 * existed. A peer without a list (a read-only handle, bblog_consistency=mpi) contributes nothing;
 * one of another node is asked through its node's server. A read server reads the lists with a view
 * of its own (Peer_view, Peer_serve). The list is node-local scratch, not part of the log format:
 * replay never reads it, and it is removed at close (the `bblog` tool ignores it).
 *
 * Failures. When the data log cannot write the payloads out, they go to the PFS file instead, and
 * the entries say so. When the list cannot grow, the call's bytes go to the PFS file, where the
 * others read them, and so does every later write of the handle (bblog(7)).
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
#include "ad_bblog_peer.h"
#include "ad_bblog_peer_priv.h"
#include "adioi.h"
/* The process's list of one file (in its logstate). */
struct ADIOI_BBLOG_vis {
    int fd;
    char path[PATH_MAX];
    struct vis_hdr *map;
    size_t map_len;
    struct vis_ent *pend;       /* logged since the last publication */
    size_t npend, pend_cap;
};

static void store(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

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

int ADIOI_BBLOG_Peer_attach(struct ADIOI_BBLOG_state *st)
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

void ADIOI_BBLOG_Peer_detach(struct ADIOI_BBLOG_state *st)
{
    if (st->vis_link[0])
        unlink(st->vis_link);
    st->vis_link[0] = '\0';
}

void ADIOI_BBLOG_Peer_free(struct ADIOI_BBLOG_logstate *ls)
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

int ADIOI_BBLOG_Peer_note(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
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

int ADIOI_BBLOG_Peer_publish(ADIO_File fd, ADIOI_BBLOG_through_fn through)
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
    /* The other nodes' readers ask only nodes that announced the range (ad_bblog_peer_remote.c):
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

void ADIOI_BBLOG_Peer_emptied(struct ADIOI_BBLOG_logstate *ls)
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
 * The log's bytes below upto are about to become holes (ad_bblog_bg_trim.c): they are in the PFS
 * file (or overwritten by a later entry). The entries naming them are rewritten to name the PFS
 * file instead, keeping their stamps, so that a reader still ranks those bytes against other
 * processes' older ones. A rewrite, not an append: the epoch is odd while it lasts and moves
 * on after, so a reader that looked before reads again. Application thread only.
 */
int ADIOI_BBLOG_Peer_trim(struct ADIOI_BBLOG_logstate *ls, uint64_t upto)
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
