/*
 * Node batches of the background drain (ad_bblog_bg.c; DESIGN.md section 6): the processes of a
 * node publish the small extents they logged, and their drain threads write the node's bytes
 * together, in chunks, from whichever logs hold them.
 *
 * Why. Each process's drain thread writes its own log. Where the processes' pieces are small and
 * interleaved in the file (IOR strided 4 KiB), that is one PFS request per piece, far slower than
 * the collective drain, which writes the same bytes at the PFS's speed by reading the node's logs
 * (ad_bblog_drain_share.c; RATIONALE: bench/results/rationale.md, close-small). A batch does the
 * same in the background.
 *
 * Data path. At a planning point every process of the node publishes the extents it has logged
 * under ADIOI_BBLOG_CLOSE_PIECE (file offset, length, log offset, stamp; ad_bblog_bg_plan.c;
 * RATIONALE: bench/results/rationale.md, batch-large) in a list file on the burst buffer, and the
 * threads take chunks of the node's bytes in turn from a counter in a shared mapping, each chunk a
 * file range with about a drain buffer of data (the smallest paced segment under proactive pacing),
 * read from whichever logs hold it and written with one request per run of adjacent bytes. A
 * claim's chunks are written one after the other, flushed (fdatasync) at its end when it is paced
 * under proactive pacing or the open spans nodes (otherwise the owners flush before they give log
 * space back), and marked done in the mapping. The owners of their bytes forget them (the bytes
 * that still map to the published log offsets: an owner's newer write over them stays) when the
 * batch is over: every chunk finished, or the next planning point or collective drain, whose
 * collective calls come after every thread has paused, so that no chunk of the batch is in flight
 * then.
 *
 * Files. In the burst-buffer directory, named after the open's token, the node's first process (its
 * rank in the file's communicator) and the batch's number (its planning point's, counted alike in
 * every process): TOKEN.nFIRST.bN the mapping (struct batch_map), TOKEN.rRANK.bN each process's
 * list. Every process creates both before the planning point's exchange, opens the others' lists
 * after it, and removes its own names when it ends the batch, which is after every process opened
 * them. Under bblog_mapping=node a process's data log is its slot of the node's pair
 * (Node_data_path).
 *
 * Cut. The first process to find every list published (it wins a compare-and-swap in the mapping)
 * reads them all, cuts the node's kept bytes into chunks and writes the cut after its own list:
 * each chunk's first piece, each chunk's file range, then the pieces. Each other process reads
 * the chunks' starts and ranges once, and a chunk's pieces when it takes the chunk, through the
 * descriptor it opened at the publish (the cutter's list may be unlinked by then): a node reads
 * its lists once per batch, not once per process (R^2 pieces per node).
 *
 * Invariants. Every process sees the same chunks: disjoint file ranges in file order, each taken
 * by one thread. Several nodes: each node's processes form a batch of their
 * own, of their own bytes. Those are disjoint from other nodes' wherever their stamps differ: the
 * planning point made every process forget the parts of its extents that another process wrote
 * later (ad_bblog_bg_plan.c), so no order between the nodes' chunks is needed. A batch needs the
 * node's processes to share a directory and a mapping: not a burst buffer that several nodes share;
 * processes of a node whose bblog_dir differ start none (Batch_shared). No MPI call here.
 *
 * Failures. A process that cannot publish its list, or a cut that fails (more than CHUNKS_MAX
 * chunks, the lists unreadable, the cut not written), fails the batch for every process of the
 * node before any chunk is taken, and each then drains its own pieces again. A process that
 * cannot read the cut (no memory) must still not write its own pieces while others may be
 * writing them: it waits until the chunks are all finished, or until every process is as unable
 * as it is, and then drains all its pieces again (the same bytes written twice). A chunk that failed,
 * or that a pause left unwritten, is marked failed: its owners keep its bytes.
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
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "adioi.h"
#include "bblog_io.h"
#include "bblog_plan.h"

#define CHUNKS_MAX 65536
#define FIN_DONE 1
#define FIN_FAILED 2

struct batch_map {
    uint64_t claim;             /* the next chunk to take */
    uint32_t joined;            /* processes that mapped it (before the planning point's
                                 * exchange): all of them unless their bblog_dir differ */
    uint32_t published;         /* processes whose list is written */
    uint32_t failed;            /* processes that could not write theirs */
    uint32_t finished;          /* chunks written or failed */
    uint32_t unloadable;        /* processes that could not read the cut (no memory) */
    uint32_t cutter;            /* 1 + the process that cuts the chunks; 0 before one took it */
    uint32_t cut_failed;        /* the cutter could not cut (the batch fails) */
    uint64_t cut_at;            /* where the cut starts in the cutter's list file */
    uint64_t nchunks1;          /* 1 + the chunks, once the cutter wrote them; 0 before */
    unsigned char fin[CHUNKS_MAX];      /* per chunk: 0, FIN_DONE or FIN_FAILED */
};

struct ADIOI_BBLOG_batch {
    int nproc, me;              /* the node's processes, and this one's place among them */
    int *ranks;                 /* their ranks in the file's communicator */
    int loaded;                 /* 0: chunks not known yet; 1: known; -1: the batch failed;
                                 * -2: this process could not read the cut */
    struct batch_map *m;
    char *prefix;               /* DIR/TOKEN */
    char *map_path, *list_path; /* this process's names, until Batch_close */
    uint32_t id;
    uint64_t chunk;             /* bytes of data per chunk (the same in every process) */
    int list_fd;
    int *lfds, *dfds;           /* each process's list, data log (opened when first read) */
    char **dpath;               /* each one's data log, and where its bytes start in it */
    uint64_t *dbase;
    uint64_t *own;              /* this process's published pieces, (off, len, log_off, stamp) */
    size_t nown;
    struct bblog_npiece *p;     /* the cutter's: the node's kept bytes in file order, cut at
                                 * chunk ends; NULL in the others (read per chunk) */
    size_t np;                  /* the cutter's pieces */
    uint64_t *cstart;           /* chunk c: pieces cstart[c] .. cstart[c + 1] - 1 */
    uint64_t *cb;               /* chunk c: file bytes [cb[2c], cb[2c + 1]) */
    int cutter;                 /* the process that cut, once known */
    uint64_t cut_at;            /* where the cut is in its list file */
    uint64_t nchunks;
};

/* The mapping's name (list 0) or process rank's list's. */
static char *name_of(const char *prefix, int list, int rank, uint32_t id)
{
    size_t len = strlen(prefix) + 40;
    char *s = malloc(len);

    if (s)
        snprintf(s, len, "%s.%c%d.b%u", prefix, list ? 'r' : 'n', rank, id);
    return s;
}

int ADIOI_BBLOG_Batch_open(const struct ADIOI_BBLOG_state *st, const int *ranks, int nranks, int me,
                           uint32_t id, uint64_t chunk, struct ADIOI_BBLOG_batch **out)
{
    struct ADIOI_BBLOG_batch *b = calloc(1, sizeof(*b));
    const char *dot = strrchr(st->log_name, '.');       /* log_name is TOKEN.rRANK */
    size_t plen;
    void *m = MAP_FAILED;
    int fd, i, rc = 0;

    *out = NULL;
    if (!b || !dot || nranks < 1)
        goto fail;
    b->nproc = nranks;
    b->me = me;
    b->id = id;
    b->chunk = chunk > 0 ? chunk : 1;
    b->list_fd = -1;
    plen = strlen(st->logdir) + (size_t) (dot - st->log_name) + 2;
    b->prefix = malloc(plen);
    b->lfds = malloc((size_t) b->nproc * sizeof(*b->lfds));
    b->dfds = malloc((size_t) b->nproc * sizeof(*b->dfds));
    b->ranks = malloc((size_t) b->nproc * sizeof(*b->ranks));
    b->dpath = calloc((size_t) b->nproc, sizeof(*b->dpath));
    b->dbase = calloc((size_t) b->nproc, sizeof(*b->dbase));
    if (!b->prefix || !b->lfds || !b->dfds || !b->ranks || !b->dpath || !b->dbase)
        goto fail;
    memcpy(b->ranks, ranks, (size_t) b->nproc * sizeof(*b->ranks));
    for (i = 0; i < b->nproc; i++)
        if (!(b->dpath[i] = ADIOI_BBLOG_Node_data_path(st, i, &b->dbase[i])))
            goto fail;
    snprintf(b->prefix, plen, "%s/%.*s", st->logdir, (int) (dot - st->log_name), st->log_name);
    for (i = 0; i < b->nproc; i++)
        b->lfds[i] = b->dfds[i] = -1;
    if (!(b->map_path = name_of(b->prefix, 0, ranks[0], id)) ||
        !(b->list_path = name_of(b->prefix, 1, ranks[me], id)))
        goto fail;
    /* Every process makes or opens the mapping: allocated, so that no store into it can fault
     * on a full device; allocating never changes the bytes another process stored. */
    fd = open(b->map_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        if (posix_fallocate(fd, 0, sizeof(struct batch_map)) == 0)
            m = mmap(NULL, sizeof(struct batch_map), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    }
    if (m == MAP_FAILED)
        goto fail;
    b->m = m;
    __atomic_add_fetch(&b->m->joined, 1, __ATOMIC_SEQ_CST);
    b->list_fd = open(b->list_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (b->list_fd < 0)
        goto fail;
    *out = b;
    return 0;
  fail:
    rc = errno ? errno : ENOMEM;
    ADIOI_BBLOG_Batch_close(b);
    return rc;
}

/* After the exchange, which every process entered after Batch_open: whether they all mapped
 * this file. Processes of the node with different bblog_dir values each map their own, and
 * then none counts them all: every process of the node gets the same answer, and starts no
 * batch (whose lists they could not open: it would fail for all) and says so to the close. */
int ADIOI_BBLOG_Batch_shared(const struct ADIOI_BBLOG_batch *b)
{
    return __atomic_load_n(&b->m->joined, __ATOMIC_ACQUIRE) == (uint32_t) b->nproc;
}

/* After the exchange: every process has made its list file. Opens them, writes this process's
 * n pieces (quadruples) to its own and tells the others; on any failure the batch fails for
 * all (each then drains its own pieces). Returns 0 or an errno. */
int ADIOI_BBLOG_Batch_publish(struct ADIOI_BBLOG_batch *b, uint64_t *own, size_t n)
{
    int i, rc = 0;

    b->own = own;
    b->nown = n;
    for (i = 0; i < b->nproc && rc == 0; i++) {
        char *path;
        if (i == b->me)
            continue;
        if (!(path = name_of(b->prefix, 1, b->ranks[i], b->id)))
            rc = ENOMEM;
        else if ((b->lfds[i] = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            rc = errno;
        free(path);
    }
    if (rc == 0 && n > 0)
        rc = bblog_io_full(b->list_fd, own, n * 4 * sizeof(*own), 0, 1, NULL);
    __atomic_add_fetch(rc == 0 ? &b->m->published : &b->m->failed, 1, __ATOMIC_SEQ_CST);
    return rc;
}

/* This process cannot take part (it opened the batch but could not plan): the others give up
 * the batch too. */
void ADIOI_BBLOG_Batch_fail(struct ADIOI_BBLOG_batch *b)
{
    __atomic_add_fetch(&b->m->failed, 1, __ATOMIC_SEQ_CST);
}

/* The cutter: reads every list and cuts the node's kept bytes into chunks of at most chunk
 * bytes. */
static int cut(struct ADIOI_BBLOG_batch *b)
{
    uint64_t chunk = b->chunk;
    struct bblog_npiece *all = NULL, *kept = NULL;
    size_t n = 0, cap = 0, nk = 0, i, cc = 0;
    uint64_t total, own_kept, fill = 0;
    int w, rc = 0;

    for (w = 0; w < b->nproc && rc == 0; w++) {
        uint64_t *q = b->own;
        size_t k = b->nown, j;
        struct stat sb;
        if (w != b->me) {
            if (fstat(b->lfds[w], &sb) != 0) {
                rc = errno;
                break;
            }
            k = (size_t) sb.st_size / (4 * sizeof(*q));
            if (k > 0 && !(q = malloc(k * 4 * sizeof(*q)))) {
                rc = ENOMEM;
                break;
            }
            if (k > 0 && (rc = bblog_io_full(b->lfds[w], q, k * 4 * sizeof(*q), 0, 0, NULL)))
                k = 0;
        }
        if (rc == 0 && bblog_grow((void **) &all, &cap, n + k + 1, sizeof(*all)) != 0)
            rc = ENOMEM;
        for (j = 0; rc == 0 && j < k; j++, n++) {
            all[n].off = q[4 * j];
            all[n].len = q[4 * j + 1];
            all[n].src = q[4 * j + 2];
            all[n].stamp = q[4 * j + 3];
            all[n].who = w;
        }
        if (q != b->own)
            free(q);
    }
    if (rc == 0 && n > 0)
        rc = bblog_share_cut(all, n, 0, 0, &kept, &nk, &total, &own_kept);
    free(all);
    if (rc != 0)
        return rc;
    /* Chunk ends: every `chunk` bytes of data, a piece split where one falls inside it. */
    cap = 0;
    for (i = 0; i < nk && rc == 0; i++) {
        uint64_t off = kept[i].off, len = kept[i].len, src = kept[i].src;
        while (len > 0 && rc == 0) {
            uint64_t k = chunk - fill < len ? chunk - fill : len;
            if (fill == 0) {
                if (b->nchunks == CHUNKS_MAX || bblog_grow((void **) &b->cstart, &cc,
                                                           b->nchunks + 2,
                                                           sizeof(*b->cstart)) != 0) {
                    rc = ENOSPC;
                    break;
                }
                b->cstart[b->nchunks++] = b->np;
            }
            if (bblog_grow((void **) &b->p, &cap, b->np + 1, sizeof(*b->p)) != 0) {
                rc = ENOMEM;
                break;
            }
            b->p[b->np] = kept[i];
            b->p[b->np].off = off;
            b->p[b->np].len = k;
            b->p[b->np].src = src;
            b->np++;
            off += k, src += k, len -= k;
            fill = fill + k == chunk ? 0 : fill + k;
        }
    }
    free(kept);
    if (rc == 0 && b->nchunks > 0)
        b->cstart[b->nchunks] = b->np;
    return rc;
}

/* The cutter: each chunk's file range, from its first and last piece. */
static int chunk_bounds(struct ADIOI_BBLOG_batch *b)
{
    uint64_t i;

    if (b->nchunks > 0 && !(b->cb = malloc(2 * b->nchunks * sizeof(*b->cb))))
        return ENOMEM;
    for (i = 0; i < b->nchunks; i++) {
        const struct bblog_npiece *last = &b->p[b->cstart[i + 1] - 1];
        b->cb[2 * i] = b->p[b->cstart[i]].off;
        b->cb[2 * i + 1] = last->off + last->len;
    }
    return 0;
}

/* The cut as the cutter writes it after its own list, at `at`: the n + 1 chunk starts, the n
 * chunks' file ranges (two words each), then every piece in file order. */
static uint64_t ranges_at(uint64_t at, uint64_t n)
{
    return at + (n + 1) * sizeof(uint64_t);
}

/* Where chunk c's pieces are in the cut (chunks n, written at `at`). */
static uint64_t pieces_at(uint64_t at, uint64_t n, uint64_t c)
{
    return ranges_at(at, n) + n * 2 * sizeof(uint64_t) + c * sizeof(struct bblog_npiece);
}

/* The cutter: writes the cut after its own list, for the others. */
static int save_cut(struct ADIOI_BBLOG_batch *b, uint64_t at)
{
    uint64_t n = b->nchunks;
    int rc = 0;

    if (n > 0)
        rc = bblog_io_full(b->list_fd, b->cstart, (n + 1) * sizeof(*b->cstart), at, 1, NULL);
    if (rc == 0 && n > 0)
        rc = bblog_io_full(b->list_fd, b->cb, n * 2 * sizeof(*b->cb), ranges_at(at, n), 1,
                           NULL);
    if (rc == 0 && b->np > 0)
        rc = bblog_io_full(b->list_fd, b->p, b->np * sizeof(*b->p), pieces_at(at, n, 0), 1,
                           NULL);
    return rc;
}

/* Another process: reads the cut's chunk starts and ranges (pieces are read per chunk). */
static int read_cut(struct ADIOI_BBLOG_batch *b, uint64_t n, uint64_t at)
{
    int fd = b->lfds[b->cutter], rc;

    b->nchunks = n;
    b->cut_at = at;
    if (n == 0)
        return 0;
    if (!(b->cstart = malloc((n + 1) * sizeof(*b->cstart))) ||
        !(b->cb = malloc(n * 2 * sizeof(*b->cb))))
        return ENOMEM;
    rc = bblog_io_full(fd, b->cstart, (n + 1) * sizeof(*b->cstart), at, 0, NULL);
    if (rc == 0)
        rc = bblog_io_full(fd, b->cb, n * 2 * sizeof(*b->cb), ranges_at(at, n), 0, NULL);
    return rc;
}

/* Cuts the chunks if no other process does (the first to try), or reads the cut another one
 * wrote: 1 known, 0 not yet, -1 the cut failed, -2 this process could not read it. */
static int take_cut(struct ADIOI_BBLOG_batch *b)
{
    uint32_t none = 0;
    uint64_t n1, at = (uint64_t) b->nown * 4 * sizeof(*b->own);
    int rc;

    if (__atomic_compare_exchange_n(&b->m->cutter, &none, (uint32_t) b->me + 1, 0,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        b->cutter = b->me;
        rc = cut(b);
        if (rc == 0)
            rc = chunk_bounds(b);
        if (rc == 0)
            rc = save_cut(b, at);
        if (rc != 0) {
            __atomic_store_n(&b->m->cut_failed, 1, __ATOMIC_RELEASE);
            return -1;
        }
        __atomic_store_n(&b->m->cut_at, at, __ATOMIC_RELAXED);
        __atomic_store_n(&b->m->nchunks1, b->nchunks + 1, __ATOMIC_RELEASE);
        return 1;
    }
    n1 = __atomic_load_n(&b->m->nchunks1, __ATOMIC_ACQUIRE);
    if (n1 == 0)
        return __atomic_load_n(&b->m->cut_failed, __ATOMIC_ACQUIRE) ? -1 : 0;
    b->cutter = (int) none - 1;
    rc = read_cut(b, n1 - 1, __atomic_load_n(&b->m->cut_at, __ATOMIC_RELAXED));
    return rc == 0 ? 1 : -2;
}

/*
 * One process cuts the chunks (take_cut); a cut that fails, before any chunk can be taken,
 * fails the batch for all alike. A process that cannot read the cut (no memory) must still not
 * write its own pieces before the batch is over, which others may be writing: it waits, unable
 * to tell its bytes of done chunks, until the chunks are all finished (nchunks1 tells how
 * many), or until every process is as unable as it is, and then drains all its pieces again
 * (the same bytes written twice).
 */
int ADIOI_BBLOG_Batch_ready(struct ADIOI_BBLOG_batch *b)
{
    uint32_t pub, failed;
    uint64_t n1;
    int rc;

    if (b->loaded == -2) {
        n1 = __atomic_load_n(&b->m->nchunks1, __ATOMIC_ACQUIRE);
        if ((n1 > 0 && __atomic_load_n(&b->m->finished, __ATOMIC_ACQUIRE) >= n1 - 1) ||
            __atomic_load_n(&b->m->unloadable, __ATOMIC_ACQUIRE) == (uint32_t) b->nproc)
            b->loaded = -1;
    }
    if (b->loaded)
        return b->loaded;
    pub = __atomic_load_n(&b->m->published, __ATOMIC_ACQUIRE);
    failed = __atomic_load_n(&b->m->failed, __ATOMIC_ACQUIRE);
    if (pub + failed < (uint32_t) b->nproc)
        return 0;
    if (failed > 0)
        return b->loaded = -1;
    rc = take_cut(b);
    if (rc == -2)
        __atomic_add_fetch(&b->m->unloadable, 1, __ATOMIC_SEQ_CST);
    return b->loaded = rc;
}

int ADIOI_BBLOG_Batch_left(const struct ADIOI_BBLOG_batch *b)
{
    return b->loaded == 1 && __atomic_load_n(&b->m->claim, __ATOMIC_RELAXED) < b->nchunks;
}

uint64_t ADIOI_BBLOG_Batch_claim(struct ADIOI_BBLOG_batch *b, uint64_t k, int64_t *c)
{
    uint64_t first;

    if (b->loaded != 1 || k == 0 ||
        __atomic_load_n(&b->m->claim, __ATOMIC_RELAXED) >= b->nchunks)
        return 0;
    first = __atomic_fetch_add(&b->m->claim, k, __ATOMIC_SEQ_CST);
    if (first >= b->nchunks)
        return 0;
    *c = (int64_t) first;
    return first + k > b->nchunks ? b->nchunks - first : k;
}

/* The data log of process w, opened at its first read (its pieces are published, so it
 * exists, and every byte of them was written to it before: Bg_plan flushes the log). */
static int data_fd(struct ADIOI_BBLOG_batch *b, int w)
{
    if (b->dfds[w] < 0)
        b->dfds[w] = open(b->dpath[w], O_RDONLY | O_CLOEXEC);
    return b->dfds[w];
}

/* Chunk c's pieces: the cutter's own, or read from the cut into *mine (malloc'ed). */
static int chunk_pieces(struct ADIOI_BBLOG_batch *b, int64_t c, const struct bblog_npiece **p,
                        struct bblog_npiece **mine)
{
    size_t n = (size_t) (b->cstart[c + 1] - b->cstart[c]);

    *mine = NULL;
    if (b->p) {
        *p = &b->p[b->cstart[c]];
        return 0;
    }
    if (!(*mine = malloc((n ? n : 1) * sizeof(**mine))))
        return ENOMEM;
    *p = *mine;
    return bblog_io_full(b->lfds[b->cutter], *mine, n * sizeof(**mine),
                         pieces_at(b->cut_at, b->nchunks, b->cstart[c]), 0, NULL);
}

/* Writes chunk c: its pieces read into buf (at least a chunk), each run of adjacent bytes
 * written with one request; adds what it wrote to *bytes, *writes. 0 or an errno. */
static int write_one(struct ADIOI_BBLOG_batch *b, int64_t c, int pfs_fd, char *buf,
                     uint64_t *bytes, uint64_t *writes)
{
    const struct bblog_npiece *p;
    struct bblog_npiece *mine;
    size_t i, j, lo = 0, hi = (size_t) (b->cstart[c + 1] - b->cstart[c]);
    uint64_t at = 0;
    int rc = chunk_pieces(b, c, &p, &mine), fd;

    for (i = lo; i < hi && rc == 0; i = j) {
        /* Pieces that follow each other in one log: one read. */
        uint64_t len = p[i].len;
        for (j = i + 1; j < hi && p[j].who == p[i].who && p[j].src == p[j - 1].src + p[j - 1].len;
             j++)
            len += p[j].len;
        if ((fd = data_fd(b, p[i].who)) < 0)
            rc = errno ? errno : EBADF;
        else
            rc = bblog_io_full(fd, buf + at, (size_t) len, b->dbase[p[i].who] + p[i].src, 0,
                               NULL);
        at += len;
    }
    for (i = lo, at = 0; i < hi && rc == 0; i = j) {
        uint64_t len = p[i].len;
        for (j = i + 1; j < hi && p[j].off == p[j - 1].off + p[j - 1].len; j++)
            len += p[j].len;
        rc = bblog_io_full(pfs_fd, buf + at, (size_t) len, p[i].off, 1, NULL);
        at += len;
        *bytes += len;
        (*writes)++;
    }
    free(mine);
    return rc;
}

/* Writes chunks c .. c + k - 1 (a claim's) one after the other, the file flushed at the end
 * (flush), and marks them: done, or failed (their owners keep their bytes) after an error or
 * when *stop turned positive before them (a pause of the thread waits for no more than the
 * chunk under way, as for a segment). *bytes, *writes: what it wrote. 0 or an errno. */
int ADIOI_BBLOG_Batch_write(struct ADIOI_BBLOG_batch *b, int64_t c, uint64_t k, int pfs_fd,
                            char *buf, int flush, const int *stop, uint64_t *bytes,
                            uint64_t *writes)
{
    uint64_t d, n = 0;
    int rc = 0;

    *bytes = *writes = 0;
    for (d = 0; d < k && rc == 0; d++) {
        if (d > 0 && stop && __atomic_load_n(stop, __ATOMIC_RELAXED) > 0)
            break;
        rc = write_one(b, c + (int64_t) d, pfs_fd, buf, bytes, writes);
        n = d + 1;
    }
    /* Paced, each claim is made durable before the next, as a paced segment (ad_bblog_bg.c);
     * across nodes too, before the owners forget it (a write left in this node's client cache
     * could reach the servers after another node's newer one); otherwise the owners flush
     * before they give log space back (offer_trim). */
    if (rc == 0 && n > 0 && flush && fdatasync(pfs_fd) != 0)
        rc = errno;
    for (d = 0; d < k; d++)
        __atomic_store_n(&b->m->fin[c + (int64_t) d], rc == 0 && d < n ? FIN_DONE : FIN_FAILED,
                         __ATOMIC_RELEASE);
    __atomic_add_fetch(&b->m->finished, (uint32_t) k, __ATOMIC_SEQ_CST);
    return rc;
}

int ADIOI_BBLOG_Batch_finished(const struct ADIOI_BBLOG_batch *b)
{
    return b->loaded == 1 &&
        __atomic_load_n(&b->m->finished, __ATOMIC_ACQUIRE) >= (uint32_t) b->nchunks;
}

/* Calls fn for each part of this process's published pieces inside a chunk marked done (with
 * the log offset it was published at). Chunks are disjoint file ranges in file order, and so
 * are the pieces (the index's extents). A batch never loaded had no chunk taken. */
int ADIOI_BBLOG_Batch_done_walk(struct ADIOI_BBLOG_batch *b, ADIOI_BBLOG_run_fn fn, void *arg)
{
    size_t i = 0;
    uint64_t c = 0;
    int rc = 0;

    if (b->loaded == 0 && __atomic_load_n(&b->m->claim, __ATOMIC_ACQUIRE) > 0)
        (void) ADIOI_BBLOG_Batch_ready(b);   /* a chunk was taken: every list is there */
    if (b->loaded != 1)
        return 0;
    while (i < b->nown && c < b->nchunks && rc == 0) {
        uint64_t clo = b->cb[2 * c], chi = b->cb[2 * c + 1];
        uint64_t off = b->own[4 * i], end = off + b->own[4 * i + 1];
        uint64_t lo = off > clo ? off : clo, hi = end < chi ? end : chi;
        if (lo < hi && __atomic_load_n(&b->m->fin[c], __ATOMIC_ACQUIRE) == FIN_DONE)
            rc = fn(arg, lo, hi - lo, b->own[4 * i + 2] + (lo - off), b->own[4 * i + 3]);
        if (end <= chi)
            i++;
        else
            c++;
    }
    return rc;
}

void ADIOI_BBLOG_Batch_close(struct ADIOI_BBLOG_batch *b)
{
    int i;

    if (!b)
        return;
    if (b->m)
        munmap(b->m, sizeof(struct batch_map));
    if (b->list_fd >= 0)
        close(b->list_fd);
    for (i = 0; b->lfds && i < b->nproc; i++) {
        if (b->lfds[i] >= 0)
            close(b->lfds[i]);
        if (b->dfds[i] >= 0)
            close(b->dfds[i]);
    }
    if (b->list_path)
        unlink(b->list_path);
    if (b->map_path)
        unlink(b->map_path);
    free(b->list_path);
    free(b->map_path);
    free(b->prefix);
    free(b->lfds);
    free(b->dfds);
    for (i = 0; b->dpath && i < b->nproc; i++)
        free(b->dpath[i]);
    free(b->dpath);
    free(b->dbase);
    free(b->ranks);
    free(b->own);
    free(b->p);
    free(b->cstart);
    free(b->cb);
    free(b);
}
