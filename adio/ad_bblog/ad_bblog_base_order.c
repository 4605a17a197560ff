/*
 * Write order across processes: the ordering stamp of every write, the node's write clock it holds,
 * the stamps of the log's runs and of the bytes written through, and the exchange at drain that
 * leaves out what another process wrote later.
 *
 * Why. Each process drains its own log, so when two processes logged the same bytes, the drain
 * alone does not know which write came later. MPI leaves that undefined unless the writes are
 * separated by sync-barrier-sync, but programs rely on something weaker: a collective call between
 * the two writes. Parallel HDF5 fills a new dataset with one collective write, then each process
 * writes its own part, which other processes filled; plain ROMIO writes the fill at once, so the
 * later write wins.
 *
 * Stamps. bblog orders such writes with a stamp. Every process counts the collective calls it made
 * on the file (write_all, read_all, sync, set_size, set_atomicity: calls that every process of the
 * communicator makes in the same order, so the counts agree; Coll_begin and Coll_end,
 * ad_bblog_bg_plan.c). A write made inside collective call number c (counting from 0) is
 * stamped 2c + 1, a write made after c collective calls and outside any is stamped 2c: a write
 * after a collective call always has a higher stamp than one made in it or before it, on any
 * process. Collective calls on a one-process communicator are not counted: they order nothing
 * between processes. That is the high part of the stamp (24 bits; past 2^24 - 1 it stays there). It
 * is also the records' gen, which orders replay after a crash (bblog_format.h).
 *
 * The write clock. The low 40 bits order the writes that no collective call separates. Parallel
 * HDF5 has rank 0 fill a dataset alone, then calls MPI_Barrier, and then every process writes its
 * part independently: all those writes are stamped 2c, and on a POSIX file system the later ones
 * win. The processes of a node that opened the file together share a write clock, a counter in a
 * small file mapped from the burst buffer (TOKEN.clock; TOKEN.HASH.clock, HASH of the host name,
 * where the open spans nodes). A process takes a new tick at a write call only when another process
 * took one since its own last take: then (counter + 1, atomically) > every tick taken before on the
 * node. Otherwise its last tick is still the node's latest. So a write made after another process's
 * write, ordered by any message or barrier, gets the higher stamp; a process that writes alone
 * keeps one tick, and its log one run per collective call.
 *
 * Across nodes. A counter says nothing across nodes, so an open that spans several nodes makes the
 * clock a hybrid one: a take is max(clock + 1, microseconds since the open's origin, which is
 * rank 0's real time at open), and a process takes a new tick also whenever real time has passed
 * its last one. A write made after another node's write, ordered by a barrier, then gets the higher
 * tick as long as the nodes' clocks agree better than the time between the two writes (MPI leaves
 * the order undefined; POSIX file systems give the real-time one). A read that returns another
 * node's bytes raises the node's clock to that node's (ad_bblog_peer_remote.c), so what a process
 * writes after reading them is stamped later whatever the clocks say. The price: on several nodes a
 * process that writes alone takes a tick at almost every write call, so its log has a run per call
 * and the drain a piece per call (they are still written together). The real-time part ends
 * 2^40 microseconds (12.7 days) after the open; the clock then stops (ties).
 *
 * Invariants. Stamps are kept per run of the data log (appends are in log order and stamps never
 * decrease), so the index needs no extra field. Bytes written straight to the PFS (large extents, a
 * full burst buffer) are remembered with their stamp until the next drain, as they can be newer
 * than what another process logged; with a background drain, so are the pieces logged since the
 * last planning point and those the drain wrote since the last drain. The node's clock only grows,
 * no two takes of a node get the same tick, and no process shortens or rewrites the clock's file.
 *
 * Collective calls. At drain, each round's pieces (offset, length, stamp) are exchanged among the
 * processes and each process leaves out the parts of its pieces that another process wrote with a
 * higher stamp. Only pieces that overlap another process's can lose, and most drains have none: the
 * processes first find, through the owners of equal parts of the file, whose ranges overlap, then
 * send the pieces with their stamps only to those processes (ad_bblog_base_overlap.c; a planning
 * point of the background drains gathers every piece on every process, in one step). Equal stamps (writes of different nodes that no collective call separates,
 * or no clock) are left as they are: ROMIO then decides, as it would without bblog. The exchange is
 * skipped when all stamps are equal.
 *
 * Failures. Without a clock (no room on the burst buffer) ticks stay 0: the order of writes that no
 * collective call separates is left to the drain's tie rule, as across nodes. An exchange that
 * fails on any process fails on every one, with nothing exchanged: each still takes part in every
 * collective call of it, and returns ENOMEM, or ADIOI_BBLOG_ECOLL where a collective call failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "adioi.h"


uint64_t ADIOI_BBLOG_Stamp(const struct ADIOI_BBLOG_logstate *ls)
{
    uint64_t c = 2 * (uint64_t) ls->colls + (ls->in_coll ? 1 : 0);

    return (c < ADIOI_BBLOG_COLL_MAX ? c : ADIOI_BBLOG_COLL_MAX) << ADIOI_BBLOG_CLOCK_BITS |
        ls->tick;
}

/* Microseconds since the open's origin: the physical half of the clock of an open that spans
 * several nodes (0 on one node). */
static uint64_t phys_now(const struct ADIOI_BBLOG_state *st)
{
    struct timespec ts;
    int64_t us;

    if (!st->clock_origin)
        return 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    us = (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000 - st->clock_origin;
    return us <= 0 ? 0 : (uint64_t) us < ADIOI_BBLOG_CLOCK_MAX ? (uint64_t) us :
        ADIOI_BBLOG_CLOCK_MAX;
}

/* Moves the node's clock to at least v (v: a take's candidate); returns the clock after. */
static uint64_t clock_raise(uint64_t *clock, uint64_t v)
{
    uint64_t cur = __atomic_load_n(clock, __ATOMIC_ACQUIRE);

    if (v > ADIOI_BBLOG_CLOCK_MAX)
        v = ADIOI_BBLOG_CLOCK_MAX;
    while (cur < v && !__atomic_compare_exchange_n(clock, &cur, v, 0, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_ACQUIRE));
    return cur < v ? v : cur;
}

void ADIOI_BBLOG_Tick(struct ADIOI_BBLOG_state *st)
{
    uint64_t now, phys, t;

    if (!st->clock || !st->ls)
        return;
    now = __atomic_load_n(st->clock, __ATOMIC_ACQUIRE);
    phys = phys_now(st);
    /* Tick 0: none taken yet. Still the node's latest, and real time has not passed it. */
    if ((st->ls->tick != 0 && now == st->ls->tick && phys <= st->ls->tick) ||
        now >= ADIOI_BBLOG_CLOCK_MAX)
        return;
    /* The node's clock + 1, or real time when that is later: atomically, so that no two
     * takes of the node get the same tick. */
    do {
        t = now + 1 > phys ? now + 1 : phys;
        if (t > ADIOI_BBLOG_CLOCK_MAX)
            t = ADIOI_BBLOG_CLOCK_MAX;
    } while (!__atomic_compare_exchange_n(st->clock, &now, t, 0, __ATOMIC_SEQ_CST,
                                          __ATOMIC_ACQUIRE));
    ADIOI_BBLOG_Lock(st->ls);           /* a background drain reads stamps */
    st->ls->tick = t;
    ADIOI_BBLOG_Unlock(st->ls);
}

uint64_t ADIOI_BBLOG_Clock_now(const struct ADIOI_BBLOG_state *st)
{
    return st->clock ? __atomic_load_n(st->clock, __ATOMIC_ACQUIRE) : 0;
}

void ADIOI_BBLOG_Clock_seen(struct ADIOI_BBLOG_state *st, uint64_t remote)
{
    if (st->clock && remote)
        clock_raise(st->clock, remote);
}

/* Without a clock (no room on the burst buffer) ticks stay 0: the order of writes that no
 * collective call separates is left to the drain's tie rule, as across nodes. */
void ADIOI_BBLOG_Clock_open(struct ADIOI_BBLOG_state *st)
{
    const char *r = strrchr(st->log_name, '.');         /* log_name is TOKEN.rRANK */
    void *m;
    int fd;

    if (st->nprocs <= 1 || !r)
        return;
    /* One per node: on a burst buffer that several nodes share, each node's processes map a
     * file of their own (mappings of one file are not coherent across nodes). */
    if (st->one_node)
        snprintf(st->clock_path, sizeof(st->clock_path), "%s/%.*s.clock", st->logdir,
                 (int) (r - st->log_name), st->log_name);
    else
        snprintf(st->clock_path, sizeof(st->clock_path), "%s/%.*s.%016llx.clock", st->logdir,
                 (int) (r - st->log_name), st->log_name, (unsigned long long) st->host_hash);
    fd = open(st->clock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        st->clock_path[0] = '\0';
        return;
    }
    /* Allocated, not only sized: a store into a page a full tmpfs cannot back is a SIGBUS.
     * Every process of the node does this; it never shortens the file or changes its bytes. */
    if (posix_fallocate(fd, 0, sizeof(uint64_t)) == 0 &&
        (m = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) !=
        MAP_FAILED)
        st->clock = m;
    close(fd);
}

/* After the close's collective calls: every process of the open has mapped the clock. */
void ADIOI_BBLOG_Clock_close(struct ADIOI_BBLOG_state *st)
{
    if (st->clock)
        munmap(st->clock, sizeof(uint64_t));
    st->clock = NULL;
    if (st->clock_path[0])
        unlink(st->clock_path);
    st->clock_path[0] = '\0';
}

int ADIOI_BBLOG_Note_append(struct ADIOI_BBLOG_logstate *ls, uint64_t log_off, uint64_t stamp)
{
    if (ls->nruns > 0 && ls->runs[ls->nruns - 1].stamp == stamp)
        return 0;
    if (bblog_grow((void **) &ls->runs, &ls->runs_cap, ls->nruns + 1, sizeof(*ls->runs)) != 0)
        return ENOMEM;
    ls->runs[ls->nruns].log_off = log_off;
    ls->runs[ls->nruns].stamp = stamp;
    ls->nruns++;
    return 0;
}

static int note_piece(struct ADIOI_BBLOG_piece **v, size_t *n, size_t *cap, uint64_t off,
                      uint64_t len, uint64_t stamp)
{
    struct ADIOI_BBLOG_piece *last = *n ? &(*v)[*n - 1] : NULL;

    if (last && last->stamp == stamp && last->off + last->len == off) {
        last->len += len;
        return 0;
    }
    if (bblog_grow((void **) v, cap, *n + 1, sizeof(**v)) != 0)
        return ENOMEM;
    (*v)[*n].off = off;
    (*v)[*n].len = len;
    (*v)[*n].stamp = stamp;
    (*n)++;
    return 0;
}

int ADIOI_BBLOG_Note_through(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                             uint64_t stamp)
{
    return note_piece(&ls->through, &ls->nthrough, &ls->through_cap, off, len, stamp);
}

int ADIOI_BBLOG_Note_drained(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                             uint64_t stamp)
{
    return note_piece(&ls->drained, &ls->ndrained, &ls->drained_cap, off, len, stamp);
}

int ADIOI_BBLOG_Note_recent(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                            uint64_t stamp)
{
    return note_piece(&ls->recent, &ls->nrecent, &ls->recent_cap, off, len, stamp);
}

void ADIOI_BBLOG_Order_reset(struct ADIOI_BBLOG_logstate *ls)
{
    ls->nruns = 0;
    ls->nthrough = 0;
    ls->nrecent = 0;
    ls->ndrained = 0;
}

void ADIOI_BBLOG_Order_free(struct ADIOI_BBLOG_logstate *ls)
{
    free(ls->runs);
    free(ls->through);
    free(ls->recent);
    free(ls->drained);
    ls->runs = NULL;
    ls->through = NULL;
    ls->recent = NULL;
    ls->drained = NULL;
    ls->nruns = ls->runs_cap = ls->nthrough = ls->through_cap = 0;
    ls->nrecent = ls->recent_cap = ls->ndrained = ls->drained_cap = 0;
}

size_t ADIOI_BBLOG_Run_find(const struct ADIOI_BBLOG_run *runs, size_t n, uint64_t log_off,
                            uint64_t *run_end)
{
    size_t lo = 0, hi = n;

    /* The last run starting at or before log_off. */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (runs[mid].log_off <= log_off)
            lo = mid;
        else
            hi = mid;
    }
    *run_end = lo + 1 < n ? runs[lo + 1].log_off : UINT64_MAX;
    return lo;
}

uint64_t ADIOI_BBLOG_Stamp_at(const struct ADIOI_BBLOG_logstate *ls, uint64_t log_off,
                              uint64_t *run_end)
{
    size_t i = ADIOI_BBLOG_Run_find(ls->runs, ls->nruns, log_off, run_end);

    return ls->nruns ? ls->runs[i].stamp : ADIOI_BBLOG_Stamp(ls);
}

int ADIOI_BBLOG_Stamp_runs(const struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                           uint64_t log_off, ADIOI_BBLOG_run_fn fn, void *arg)
{
    int rc = 0;

    while (rc == 0 && len > 0) {
        uint64_t run_end, stamp = ADIOI_BBLOG_Stamp_at(ls, log_off, &run_end);
        uint64_t n = run_end - log_off < len ? run_end - log_off : len;

        rc = fn(arg, off, n, log_off, stamp);
        off += n, log_off += n, len -= n;
    }
    return rc;
}

/* ---- the exchange at drain ---- */

int ADIOI_BBLOG_By_first(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;

    return x[0] < y[0] ? -1 : x[0] > y[0];
}

int ADIOI_BBLOG_Order_init(ADIO_File fd, struct ADIOI_BBLOG_order *o)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    memset(o, 0, sizeof(*o));
    o->counts = malloc(2 * (size_t) st->nprocs * sizeof(*o->counts));
    return o->counts ? 0 : ENOMEM;
}

/* Gathers every process's n triples into *all (counts and displacements in o->counts, in
 * words), with room for as many in o->pieces and o->reach. Collective; when an allocation
 * failed here on any process every process returns ENOMEM, and one whose collective call failed ADIOI_BBLOG_ECOLL. o->flag becomes
 * whether any process set it, in the same reduction, and with o->agree so does o->key whether
 * all processes gave the same (UINT64_MAX if not), and o->nobatch whether any process set
 * it. */
static int gather(ADIO_File fd, struct ADIOI_BBLOG_order *o, const uint64_t *mine, int n,
                  uint64_t **all)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int *counts = o->counts, *displs = o->counts + st->nprocs;
    int total = 0, coll = 0, failed = 0, i;
    uint64_t in[4], res[4];

    n *= 3;
    if (ADIOI_BBLOG_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, fd->comm) != MPI_SUCCESS) {
        memset(counts, 0, (size_t) st->nprocs * sizeof(*counts));
        coll = failed = 1;
    }
    for (i = 0; i < st->nprocs; i++) {
        displs[i] = total;
        total += counts[i];
    }
    *all = malloc((total ? total : 1) * sizeof(**all));
    failed = failed || *all == NULL ||
        bblog_grow((void **) &o->pieces, &o->cap, total / 3 + 1,
                         3 * sizeof(uint64_t)) != 0 ||
        bblog_grow((void **) &o->reach, &o->reach_cap, total / 3 + 1,
                         sizeof(uint64_t)) != 0;
    /* Every process takes part in the same collectives: agree on failure first (2 under
     * MPI_MAX), and on the flag (1) while at it; the key's largest and smallest (as the
     * largest of its complement) are equal where every process gave the same. */
    in[0] = failed ? 2 : o->flag != 0;
    in[1] = o->key;
    in[2] = UINT64_MAX - o->key;
    in[3] = o->nobatch != 0;
    if (ADIOI_BBLOG_Allreduce(in, res, o->agree ? 4 : 1, MPI_UINT64_T, MPI_MAX, fd->comm) !=
        MPI_SUCCESS) {
        res[0] = 2, res[1] = UINT64_MAX, res[2] = 0, res[3] = 1;
        coll = 1;
    }
    o->flag = res[0] == 1;
    if (o->agree) {
        o->key = res[1] == UINT64_MAX - res[2] ? res[1] : UINT64_MAX;
        o->nobatch = res[3] != 0;
    }
    o->agree = 0;               /* the second gather of an exchange compares nothing */
    if (res[0] == 2) {
        free(*all);
        *all = NULL;
        return coll ? ADIOI_BBLOG_ECOLL : ENOMEM;
    }
    if (ADIOI_BBLOG_Allgatherv(mine, n, MPI_UINT64_T, *all, counts, displs, MPI_UINT64_T,
                               fd->comm) != MPI_SUCCESS) {
        free(*all);
        *all = NULL;
        return ADIOI_BBLOG_ECOLL;
    }
    st->stats.exchange_bytes += (uint64_t) total * sizeof(**all);
    ADIOI_BBLOG_MAX(st->stats.max_exchange_bytes, (uint64_t) total * sizeof(**all));
    return 0;
}

/* Sorts the n pieces of o by offset and sets reach[j], the furthest end among pieces 0..j, to
 * find by binary search the first piece that can overlap an offset, although pieces of
 * different processes overlap. */
static void index_pieces(struct ADIOI_BBLOG_order *o, size_t n)
{
    size_t j;

    qsort(o->pieces, n, 3 * sizeof(uint64_t), ADIOI_BBLOG_By_first);
    for (j = 0; j < n; j++) {
        uint64_t end = o->pieces[3 * j] + o->pieces[3 * j + 1];
        o->reach[j] = j > 0 && o->reach[j - 1] > end ? o->reach[j - 1] : end;
    }
    o->n = n;
}

/* mine: n_mine triples (off, len, stamp), in file order but for the bytes written through at
 * the end. Only pieces that overlap another process's can lose to them, and most drains have
 * none (each process writes its own part of the file): the processes first find whose ranges
 * overlap, the ranges their pieces cover, file-adjacent pieces merged whatever their stamps (IOR
 * segmented: one range per process for thousands of pieces, one per collective call), and
 * exchange pieces with their stamps only between processes whose ranges overlap, then only the
 * pieces in those ranges (ADIOI_BBLOG_Order_local, ad_bblog_base_overlap.c). With `every` (a
 * planning point of the background drains, ad_bblog_bg_plan.c, where each process sends only
 * what it wrote since the last point and must learn all the others' pieces, for its fence too),
 * every piece is gathered on every process, in one step. Collective; on failure every process
 * returns ENOMEM (or ADIOI_BBLOG_ECOLL) with nothing exchanged. */
int ADIOI_BBLOG_Order_exchange(ADIO_File fd, struct ADIOI_BBLOG_order *o, const uint64_t *mine,
                               int n_mine, int every)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int *counts = o->counts, *displs = o->counts + st->nprocs;
    uint64_t *ranges = NULL, *all = NULL;
    size_t *rix = NULL, k, j, nr = 0;
    int i, rc, c, failed;

    o->n = 0;
    if (every) {
        if ((rc = gather(fd, o, mine, n_mine, &all)) != 0)
            return rc;
        o->runs = 0;
        for (i = 0; i < st->nprocs; i++)
            for (j = 0; j < (size_t) counts[i] / 3; j++) {
                const uint64_t *q = all + displs[i] + 3 * j;
                o->runs += j == 0 || q[-3] + q[-2] != q[0];
            }
        for (i = 0, k = 0; i < st->nprocs; i++) {
            if (i == st->rank)
                continue;
            memcpy(o->pieces + 3 * k, all + displs[i], counts[i] * sizeof(*all));
            k += counts[i] / 3;
        }
        index_pieces(o, k);
        free(all);
        return 0;
    }
    /* This process's ranges (off, end); rix[c]: the range of piece c. */
    failed = n_mine > 0 && (!(ranges = malloc(2 * (size_t) n_mine * sizeof(*ranges))) ||
                            !(rix = malloc((size_t) n_mine * sizeof(*rix))));
    for (c = 0; !failed && c < n_mine; c++) {
        uint64_t off = mine[3 * c], end = off + mine[3 * c + 1];
        if (nr > 0 && ranges[2 * (nr - 1) + 1] == off)
            ranges[2 * (nr - 1) + 1] = end;
        else
            ranges[2 * nr] = off, ranges[2 * nr + 1] = end, nr++;
        rix[c] = nr - 1;
    }
    if ((rc = ADIOI_BBLOG_Order_local(fd, o, mine, (size_t) n_mine, ranges, rix, nr, failed,
                                      &k)) == 0)
        index_pieces(o, k);
    free(rix);
    free(ranges);
    return rc;
}

int ADIOI_BBLOG_Order_set(struct ADIOI_BBLOG_order *o, const uint64_t *pieces, size_t n)
{
    memset(o, 0, sizeof(*o));
    if (bblog_grow((void **) &o->pieces, &o->cap, n + 1, 3 * sizeof(uint64_t)) != 0 ||
        bblog_grow((void **) &o->reach, &o->reach_cap, n + 1, sizeof(uint64_t)) != 0) {
        ADIOI_BBLOG_Order_fini(o);
        return ENOMEM;
    }
    if (n > 0)
        memcpy(o->pieces, pieces, 3 * n * sizeof(uint64_t));
    index_pieces(o, n);
    return 0;
}

int ADIOI_BBLOG_Order_keep(const struct ADIOI_BBLOG_order *o, uint64_t lo, uint64_t hi,
                           uint64_t stamp, ADIOI_BBLOG_keep_fn keep, void *arg)
{
    size_t a = 0, b = o->n, j;
    uint64_t pos = lo;
    int rc;

    while (a < b) {             /* first j with reach[j] > lo */
        size_t mid = a + (b - a) / 2;
        if (o->reach[mid] > lo)
            b = mid;
        else
            a = mid + 1;
    }
    for (j = a; j < o->n && o->pieces[3 * j] < hi; j++) {
        uint64_t off = o->pieces[3 * j], end = off + o->pieces[3 * j + 1];
        if (o->pieces[3 * j + 2] <= stamp || end <= pos)
            continue;
        if (off > pos && (rc = keep(arg, pos, off - pos)) != 0)
            return rc;
        pos = end;
        if (pos >= hi)
            return 0;
    }
    return pos < hi ? keep(arg, pos, hi - pos) : 0;
}

void ADIOI_BBLOG_Order_fini(struct ADIOI_BBLOG_order *o)
{
    free(o->counts);
    free(o->pieces);
    free(o->reach);
    memset(o, 0, sizeof(*o));
}
