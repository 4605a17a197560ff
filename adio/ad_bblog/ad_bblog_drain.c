/*
 * The collective drain (DESIGN.md section 6; seed paper 000, sections IV.D-E).
 *
 * 1. Each process takes its index in file order: already sorted, non-overlapping, coalesced,
 *    later writes having replaced earlier ones.
 * 2. The drain is cut into rounds that all processes agree on, one MPI_Allreduce (MIN) per
 *    round over bblog_plan_round_end: every round covers one contiguous range of the file
 *    across all processes, and no process holds more than bblog_flush_buffer_size bytes in it.
 *    Cutting by file range, not by each process's own buffer, keeps the aggregated access of a
 *    round dense, so two-phase I/O writes whole stripes instead of reading-modifying-writing.
 *    An independent drain (large extents) has one round, the whole file: each process writes
 *    its pieces alone, a buffer at a time, with no collective call between the buffers. A
 *    drain that every process can see fits one round (from what all said at its start) has
 *    that round without the MPI_Allreduce.
 * 3. Per round, when writes of different processes may need ordering, the processes exchange
 *    their pieces of the round and each leaves out what another process wrote later
 *    (ad_bblog_base_order.c). Each process then reads its pieces from the data log into the flush
 *    buffer (pieces contiguous in the log in one read) and describes their file side with an
 *    hindexed type of non-decreasing offsets; all processes then call the inner driver's
 *    collective write.
 *    A process with nothing in a round still takes part, with an empty access.
 * 4. Only when every process succeeded: inner flush (for sync), then the logs are marked
 *    drained and the indexes emptied. On any failure nothing is marked: the data stays in the
 *    logs, and the error is returned on all processes.
 * drain() runs these as stages: drain_plan (1, and what all processes have), drain_choose (the
 * path, the same everywhere: independent; the node exchange, alone on one node (solo) or into
 * ROMIO's two-phase write across nodes; two-phase with or without the Order exchange),
 * drain_rounds (2, 3), drain_commit and drain_finish (4).
 *
 * Files. The stages are here; the start's agreement and the file's growth in
 * ad_bblog_drain_agree.c; a round's pieces and writes in _drain_round.c, with data sieving in
 * _drain_sieve.c; a round under the node exchange in _drain_node.c, the node's shares in
 * _drain_share.c; the private types in ad_bblog_drain.h.
 *
 * A drain alone (Drain_alone: a sync that the processes with nothing logged left at once,
 * ad_bblog_flush.c) runs the same stages on this process only: no collective call, the
 * independent path, the pieces that others wrote later (their notes of the sync) left out as
 * the Order exchange would, and only this process's log marked drained.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
#include "ad_bblog_drain_priv.h"
#include "adioi.h"
#include "bblog_format.h"
#include "bblog_plan.h"
struct snap {
    struct bblog_seg *segs;
    uint64_t *stamps;
    size_t n, seg_cap, stamp_cap;
    uint64_t lo, hi;
};

static int snap_run(void *arg, uint64_t off, uint64_t len, uint64_t log_off, uint64_t stamp)
{
    struct snap *s = arg;

    if (bblog_grow((void **) &s->segs, &s->seg_cap, s->n + 1, sizeof(*s->segs)) ||
        bblog_grow((void **) &s->stamps, &s->stamp_cap, s->n + 1, sizeof(*s->stamps)))
        return ENOMEM;
    s->segs[s->n].off = off;
    s->segs[s->n].len = len;
    s->segs[s->n].src = log_off;
    s->stamps[s->n++] = stamp;
    s->lo = stamp < s->lo ? stamp : s->lo;
    s->hi = stamp > s->hi ? stamp : s->hi;
    return 0;
}

/* Snapshot of the index as segments (off, len, src = data-log offset), each within one run of
 * one ordering stamp (stamps[i]): an extent coalesced across stamps is cut at the run
 * boundaries. *lo and *hi: the least and greatest stamp, with the bytes written through since
 * the last drain. *segs and *stamps are the caller's to free, after a failure too. */
static int snapshot(struct ADIOI_BBLOG_state *st, struct bblog_seg **segs, uint64_t **stamps,
                    size_t *n, uint64_t *lo, uint64_t *hi)
{
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    struct bblog_idx_iter it;
    struct bblog_extent e;
    struct snap s = { 0 };
    size_t i;
    int rc = 0;

    s.lo = INT64_MAX;           /* stamps go to an MPI_LONG_LONG reduction */
    bblog_idx_iter_init(ls->idx, &it, 0, UINT64_MAX);
    while (rc == 0 && bblog_idx_iter_next(&it, &e))
        rc = ADIOI_BBLOG_Stamp_runs(ls, e.off, e.len, e.log_off, snap_run, &s);
    for (i = 0; i < ls->nthrough; i++) {
        s.lo = ls->through[i].stamp < s.lo ? ls->through[i].stamp : s.lo;
        s.hi = ls->through[i].stamp > s.hi ? ls->through[i].stamp : s.hi;
    }
    *segs = s.segs;
    *stamps = s.stamps;
    *n = rc == 0 ? s.n : 0;
    *lo = s.lo;
    *hi = s.hi;
    return rc;
}

int ADIOI_BBLOG_Drain_pieces(struct ADIOI_BBLOG_state *st, uint64_t **triples, size_t *n)
{
    struct bblog_seg *segs = NULL;
    uint64_t *stamps = NULL, lo, hi, *t = NULL;
    size_t i;
    int rc = snapshot(st, &segs, &stamps, n, &lo, &hi);

    if (rc == 0 && *n > 0 && !(t = malloc(3 * *n * sizeof(*t))))
        rc = ENOMEM;
    for (i = 0; rc == 0 && i < *n; i++) {
        t[3 * i] = segs[i].off;
        t[3 * i + 1] = segs[i].len;
        t[3 * i + 2] = stamps[i];
    }
    free(segs);
    free(stamps);
    *triples = t;
    if (rc != 0)
        *n = 0;
    return rc;
}

/* Marks this process's log drained after a drain that left nothing in it. With more than one
 * process, every record of this file stamped up to now is on the PFS: the header says so
 * job-wide, for a replay after a crash in which some process died before marking its own log
 * (bblog_format.h, drained_gen). Returns 0 or the log's error. */
static int mark_log_drained(struct ADIOI_BBLOG_state *st, int alone)
{
    return st->nprocs > 1 && !alone ?
        bblog_log_mark_drained_gen(st->ls->log,
                                   ADIOI_BBLOG_COLL_STAMP(ADIOI_BBLOG_Stamp(st->ls)) + 1) :
        bblog_log_mark_drained(st->ls->log);
}

/* One collective drain, as a pipeline of stages (drain() below): plan what each process has,
 * choose the path every process takes, write it in rounds, commit, and mark the logs. */
struct drain {
    ADIO_File fd;
    struct ADIOI_BBLOG_state *st;
    int sync_inner;
    uint64_t w0;                /* the writes this drain covers (wgen at its start) */
    double t0;
    /* plan: this process's extents in file order, their stamps, and what all processes have */
    struct bblog_seg *segs;
    uint64_t *stamps, slo, shi;
    size_t n;
    int partial;                /* a one-process handle that drains its newest extents only */
    /* A drain of this process's log alone, at a sync the others left (ad_bblog_flush.c): no
     * collective call; what the others wrote later than its pieces, from their notes. */
    const struct ADIOI_BBLOG_order *alone;
    struct agreed ag;
    /* path: the same on every process */
    int indep;                  /* each process writes its own extents, no two-phase write */
    int one_round;              /* one round holds everything: its end needs no agreement */
    int solo;                   /* one node: the node exchange writes every chunk alone */
    int staged;                 /* Node_stage ran: the node exchange's files are ready */
    int exchange;               /* Order exchange: pieces of different stamps may overlap */
    int node_bad;               /* this process cannot read every log of the node: it writes
                                 * no chunk, and the drain is made again (node_ready) */
    uint64_t budget, plan_budget, span;
    struct ADIOI_BBLOG_order order;
    struct round r;
    uint64_t *mine;             /* this process's pieces of a round, for the Order exchange */
    size_t mine_cap;
    /* outcome */
    int rc;                     /* local failure (errno), before it is an MPI error */
    int err;
    int flushed, anyfail, lost, mismatch;
    int nospace;                /* some process's failure was a full PFS (MPI_ERR_NO_SPACE) */
    int node_retry;             /* some process had node_bad: drain again through MPI */
};

/* Stage 1: the snapshot of this process's extents and the agreement on what all have. */
static void drain_plan(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    size_t i;

    ADIOI_BBLOG_MAX(st->stats.max_index_bytes, (uint64_t) bblog_idx_memory(st->ls->idx));
    d->rc = snapshot(st, &d->segs, &d->stamps, &d->n, &d->slo, &d->shi);
    ADIOI_BBLOG_MAX(st->stats.max_plan_bytes,
                    (uint64_t) d->n * (sizeof(*d->segs) + sizeof(*d->stamps)));
    /* A one-process handle of a file that a multi-process handle writes too (PnetCDF's
     * MPI_COMM_SELF handle, at its sync or close) cannot exchange with the other processes.
     * It drains only what this process wrote since the file's last collective call: no other
     * process can have written those bytes later. Older extents wait for a collective drain,
     * whose exchange also learns what this one wrote (kept like bytes written through); when
     * this handle is the last one open, it drains everything. */
    d->partial = d->rc == 0 && st->nprocs == 1 && st->ls->colls > 0 &&
        st->ls->refs - (st->ls->bg ? 1 : 0) > 1;        /* another handle drains the rest */
    if (d->partial) {
        uint32_t cur = ADIOI_BBLOG_COLL_STAMP(ADIOI_BBLOG_Stamp(st->ls));
        size_t k = 0;
        for (i = 0; i < d->n; i++)
            if (ADIOI_BBLOG_COLL_STAMP(d->stamps[i]) == cur)
                d->segs[k] = d->segs[i], d->stamps[k++] = d->stamps[i];
        d->n = k;
    }
    /* The node exchange's files are made ready before the agreement, which tells every
     * process which exist (ad_bblog_drain_share.c); a process without node state means none for
     * anyone, and all forget theirs alike. */
    d->staged = st->hints.node_exchange && st->nprocs > 1 && !st->node_off && !d->alone;
    ADIOI_BBLOG_Drain_agree_start(d->fd, st, d->rc, d->segs, d->n, d->slo, d->shi, d->staged,
                d->staged ? ADIOI_BBLOG_Node_stage(d->fd) : 0, d->alone != NULL, &d->ag);
    if (d->ag.node_none)
        ADIOI_BBLOG_Node_free(st);
}

/* Nothing logged on any process: no round, but the logs are marked and a sync still flushes. */
static int drain_nothing(struct drain *d, int *emptied)
{
    struct ADIOI_BBLOG_state *st = d->st;
    int rc;

    ADIOI_BBLOG_Peer_emptied(st->ls);    /* what it lists is all in the PFS file */
    ADIOI_BBLOG_Node_end(st);           /* Node_stage's list file */
    free(d->ag.node);
    /* Nothing left to write, but the log may still hold records: of what the background
     * drain wrote, or PFS records. Marked drained like after any drain, or a replay after
     * a crash before close removes the log would put them back over newer bytes of
     * processes whose logs are gone. */
    if (d->rc == 0 && st->ls->log && (st->ls->log_end > 0 || st->ls->nthrough > 0)) {
        rc = mark_log_drained(st, d->alone != NULL);
        if (rc != 0)
            d->err = ADIOI_BBLOG_Err_rc(DRAIN_MYNAME, __LINE__, rc, "cannot mark drained",
                                        bblog_log_meta_path(st->ls->log));
        st->ls->log_bytes = 0;
        st->ls->log_end = 0;
        ADIOI_BBLOG_Trim_reset(st->ls);
    }
    ADIOI_BBLOG_Order_reset(st->ls);
    *emptied = 1;
    free(d->segs);
    free(d->stamps);
    /* Nothing logged anywhere, but bytes written straight to the PFS file (large
     * writes) must be flushed by a sync all the same; every process is here. */
    if (d->err == MPI_SUCCESS && d->sync_inner && st->inner->is_open &&
        __atomic_load_n(&st->ls->flushed_wgen, __ATOMIC_RELAXED) < d->w0) {
        ADIO_Flush(st->inner, &d->err);
        if (d->err == MPI_SUCCESS)
            ADIOI_BBLOG_Flushed(st->ls, d->w0);
    }
    return d->err;
}

/*
 * The node exchange (ad_bblog_drain_share.c) serves the two-phase path of multi-process handles;
 * every input of the test for it is the same on all processes: the hints, the start's
 * agreement (every process staged its log) and whether the open spans one node. Across nodes
 * whether every process can read its node's logs is agreed before any round uses them. On one
 * node it is not, which saves a collective call per drain (5 ms with 4 processes on 2 cores):
 * the logs are files of one directory that the start's agreement says exist, and a process
 * that cannot open one (out of descriptors) takes part in the rounds but writes no chunk;
 * it says so at the commit, where every process learns it, and the drain is then made again
 * through MPI, as are the handle's later drains (node_off). What the first pass wrote are
 * bytes the second writes again.
 */
static int node_ready(struct drain *d)
{
    static int shared_warned;
    struct ADIOI_BBLOG_state *st = d->st;
    int bad, anybad;

    if (!d->staged || d->ag.node_none || d->ag.node_unstaged)
        return 0;
    bad = !ADIOI_BBLOG_Node_prepare(d->fd, d->ag.node);
    if (st->one_node && st->hints.debug_node_size <= 0) {
        d->node_bad = bad;
        return 1;
    }
    /* A failed agreement counts as a process that cannot: the drain goes through MPI. */
    if (ADIOI_BBLOG_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, d->fd->comm) != MPI_SUCCESS)
        anybad = 1;
    if (anybad && st->hints.shared_bb && !st->one_node && st->rank == 0 && !shared_warned++)
        fprintf(stderr, "bblog: warning: bblog_shared_bb=true, but some process of %s "
                "cannot open the logs of the others in %s: is that directory the same on "
                "every node? Drains move the data through MPI instead (said once per "
                "job)\n", st->pfs_path, st->logdir);
    return !anybad;
}

/* How far a round reaches (span) and how many bytes of pieces each process plans for one. */
static void size_rounds(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    const struct agreed *ag = &d->ag;

    /* A round spans at most cb_nodes x cb_buffer_size bytes, so that ROMIO's two-phase write
     * does it in one cycle on each aggregator: its write error path leaves the remaining
     * cycles' exchanges out on the failing aggregator only, and the other processes would wait
     * for them for ever. With one cycle an error reaches every process. */
    d->span = (uint64_t) (st->inner->hints->cb_nodes > 0 ? st->inner->hints->cb_nodes : 1);
    d->span *= st->inner->hints->cb_buffer_size > 0 ?
        (uint64_t) st->inner->hints->cb_buffer_size : d->budget;
    /* With the node exchange on a single node (solo), the processes take the node's bytes in
     * chunks of up to 4 MiB, each written alone (unless romio_cb_write=enable asks for
     * ROMIO's aggregation). A round then only bounds the memory of the piece lists:
     * about 56 bytes a piece on every process of the node, kept within one drain buffer, for
     * at most 16 buffers of data per process. */
    if (d->solo) {
        uint64_t f = ag->bytes / ag->count / (56 * (uint64_t) st->nprocs);
        d->plan_budget = d->budget * (f < 1 ? 1 : f > 16 ? 16 : f);
        d->span = UINT64_MAX;
    }
    /* Independent drain: one round, the whole file. Its pieces are exchanged once (ordering),
     * then each process streams its own through the buffer with no further collective call.
     * Rounds cut by file range would serialise the processes: with each process's data in one
     * block of the file (IOR segmented), the first round ends a buffer past the first block's
     * start and holds bytes of one process only. */
    if (d->indep) {
        d->r.fd = d->fd;
        d->r.budget = d->budget;
        d->plan_budget = UINT64_MAX;
        if (d->rc == 0 && d->n > 0)
            ADIOI_BBLOG_Drain_map_own_log(st, &d->r);
        ADIOI_BBLOG_Sieve_setup(st, &d->r);
    }
    /* A drain in which every process's pieces fit its planning budget and all pieces lie
     * within one span is a single round, from inputs every process has since agree_start: the
     * rounds' MPI_Allreduce would only say so (and a second one that nothing is left). The
     * pieces and the writes are those of the agreed round [first byte, first byte + span). */
    d->one_round = !d->indep && !ag->failed && ag->most > 0 && ag->most <= d->plan_budget &&
        (d->span == UINT64_MAX || (ag->hi > ag->lo && ag->hi - ag->lo <= d->span));
}

/* Stage 2: the path of this drain, from inputs that are the same on every process. */
static void drain_choose(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct agreed *ag = &d->ag;

    /* Two-phase aggregation pays off for small pieces; extents of a megabyte or more are
     * already what the PFS wants, and funnelling them through the aggregators only serialises
     * them (plain ROMIO writes such non-interleaved accesses independently too). The decision
     * is global, from the mean extent size, so every process takes the same path.
     * A one-process handle always writes its extents one by one: other processes may drain
     * the same file at the same moment through handles of their own (PnetCDF's MPI_COMM_SELF
     * handles in independent mode, at sync and close), so it must neither read-modify-write
     * the bytes between its extents nor grow the file (below). */
    d->indep = st->nprocs == 1 || d->alone ||
        (st->hints.indep_threshold > 0 && st->inner->hints->cb_write != ADIOI_HINT_ENABLE &&
         ag->bytes / ag->count >= (uint64_t) st->hints.indep_threshold);
    if (d->rc == 0)
        d->rc = ADIOI_BBLOG_Order_init(d->fd, &d->order);
    else
        memset(&d->order, 0, sizeof(d->order));
    if (!d->indep)
        d->r.collect = node_ready(d);
    /* ROMIO's two-phase write fills the holes of an aggregator's domain by reading the file
     * first (read-modify-write); past the end of the file that read comes back short and the
     * hole would be written with whatever its buffer held. Growing the file first to the end of
     * the logged data, which is its size after the drain anyway, makes such holes read as
     * zeros. Independent writes have no holes to fill, and there the check-then-truncate could
     * race with another handle's writes: a size read just before another process extends the
     * file would truncate its bytes (PnetCDF's SELF handles lost step[t] so). */
    if (!d->indep) {
        int gerr = ADIOI_BBLOG_Drain_grow(d->fd, st, ag->end);
        if (d->err == MPI_SUCCESS)
            d->err = gerr;
    }
    if (ag->failed) {
        if (d->rc == 0)
            d->rc = ENOMEM;     /* another process failed: nothing drains anywhere */
        d->n = 0;
        if (d->err == MPI_SUCCESS && ag->lost)
            d->err = ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_OTHER, "bblog: a process "
                                     "of %s did not take part in its drain (did it die, or a "
                                     "collective call fail?); the data stays in the logs "
                                     "under %s", st->pfs_path, st->logdir);
        else if (d->err == MPI_SUCCESS)
            d->err = ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_NO_MEM, "bblog: out of "
                                     "memory planning the drain of %s", st->pfs_path);
    }
    d->solo = d->r.collect && ADIOI_BBLOG_Node_size(st) == st->nprocs &&
        st->inner->hints->cb_write != ADIOI_HINT_ENABLE;
    /* Write order matters only between different stamps (with one stamp everywhere, or one
     * process, there is nothing to exchange) and where the pieces of two processes can
     * overlap. On one node (solo) the node exchange sees every process's pieces with their
     * stamps and keeps the later writes itself: no Order exchange. */
    d->exchange = st->nprocs > 1 && !ag->failed && ag->slo != ag->shi && !ag->disjoint &&
        !d->solo;
    if (d->alone)
        d->exchange = !ag->failed && d->alone->n > 0;
    size_rounds(d);
    /* Under the node exchange a process with nothing logged still receives a share. */
    if (d->rc == 0 && (d->n > 0 || d->r.collect) && !d->r.map &&
        !(d->r.buf = ADIOI_Malloc(d->budget)))
        d->rc = ENOMEM;
}

/* The pieces of [start, end) that this process writes in a round: its extents there, less
 * what another process wrote later (with the Order exchange), and on one node the bytes it
 * wrote straight to the PFS, which hide older pieces. */
static void round_add(struct drain *d, size_t cursor, uint64_t start, uint64_t end)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct round *r = &d->r;
    size_t i;

    for (i = cursor; d->rc == 0 && i < d->n && d->segs[i].off < end; i++) {
        const struct bblog_seg *s = &d->segs[i];
        uint64_t lo = s->off > start ? s->off : start;
        uint64_t hi = s->off + s->len < end ? s->off + s->len : end;
        struct keep_arg k = { st, r, s->off, s->src };
        uint64_t before = r->added;
        if (hi <= lo)
            continue;
        r->stamp = d->stamps[i];
        if (d->exchange) {
            d->rc = ADIOI_BBLOG_Order_keep(d->alone ? d->alone : &d->order, lo, hi,
                                           d->stamps[i], ADIOI_BBLOG_Round_keep_piece, &k);
            st->stats.bytes_superseded += (hi - lo) - (r->added - before);
        } else {
            d->rc = ADIOI_BBLOG_Round_add(st, r, lo, hi - lo, s->src + (lo - s->off));
        }
    }
    if (d->rc == 0)
        d->rc = ADIOI_BBLOG_Round_flush_read(st, r);
    for (i = 0; d->solo && d->rc == 0 && i < st->ls->nthrough; i++) {
        const struct ADIOI_BBLOG_piece *t = &st->ls->through[i];
        uint64_t lo = t->off > start ? t->off : start;
        uint64_t hi = t->off + t->len < end ? t->off + t->len : end;
        r->stamp = t->stamp;
        if (hi > lo)
            d->rc = ADIOI_BBLOG_Round_add(st, r, lo, hi - lo, UINT64_MAX);
    }
}

/* Stage 3: the rounds. Each covers the file from where the last ended to where the first
 * process runs out of budget; every process takes part in each, even after a failure. */
static void drain_rounds(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct round *r = &d->r;
    uint64_t start = 0, end, mm[2], mmin[2];
    size_t cursor = 0;

    do {
        int werr = MPI_SUCCESS, count = 0, xrc;

        /* {end of my round, first byte I have in it}: the round ends where the first process
         * runs out of budget, and spans at most `span` bytes from the first byte anyone has in
         * it (see drain_choose). */
        mm[0] = d->rc == 0 ? bblog_plan_round_end(d->segs, d->n, &cursor, start,
                                                  d->plan_budget) : UINT64_MAX;
        mm[1] = d->rc == 0 && cursor < d->n ?
            (d->segs[cursor].off > start ? d->segs[cursor].off : start) : UINT64_MAX;
        /* The independent drain's one round needs no agreement: it is the whole file, and
         * some process has bytes in it; nor does a drain known to be one round. */
        if (d->indep || d->one_round) {
            mmin[0] = UINT64_MAX, mmin[1] = 0;
        } else if (ADIOI_BBLOG_Allreduce(mm, mmin, 2, MPI_UINT64_T, MPI_MIN, d->fd->comm) !=
                   MPI_SUCCESS) {
            /* No round can be agreed: none is made (the logs keep their bytes). */
            d->rc = d->rc ? d->rc : ADIOI_BBLOG_ECOLL;
            break;
        }
        /* Nobody has a byte left: no empty round (an empty two-phase write still costs all
         * its collectives). Every process sees the same minimum, so all stop here together. */
        if (mmin[1] == UINT64_MAX)
            break;
        end = mmin[0];
        if (!d->indep && !d->one_round && mmin[1] + d->span > mmin[1] &&
            mmin[1] + d->span < end)
            end = mmin[1] + d->span;
        r->k = 0;
        r->bytes = 0;
        r->nquad = 0;
        if (d->exchange && !d->alone) {
            xrc = d->rc == 0 ? ADIOI_BBLOG_Round_pieces(st, d->segs, d->stamps, cursor, d->n,
                                                        start, end, &d->mine, &d->mine_cap,
                                                        &count) : 0;
            if (xrc != 0)
                count = 0;
            d->rc = d->rc ? d->rc : xrc;
            d->order.lo = start > d->ag.lo ? start : d->ag.lo;
            d->order.hi = end < d->ag.hi ? end : d->ag.hi;
            xrc = ADIOI_BBLOG_Order_exchange(d->fd, &d->order, d->mine, count, 0);
            d->rc = d->rc ? d->rc : xrc;
        }
        round_add(d, cursor, start, end);
        if (r->collect) {
            /* Every process of the node, each round, even after a failure (with nothing). */
            ADIOI_BBLOG_Drain_node_round(d->fd, st, r, d->solo,
                                         d->solo && d->budget > SOLO_CHUNK ? SOLO_CHUNK :
                                         d->budget, d->node_bad, &d->rc, &werr);
        } else {
            if (d->rc != 0)
                r->k = 0, r->bytes = 0; /* still take part, with nothing */
            if (d->indep) {
                if (d->rc == 0)
                    d->rc = ADIOI_BBLOG_Round_spill(st, r);
                werr = r->werr;
            } else {
                ADIOI_BBLOG_Round_coll_write(d->fd, st, r, &werr);
                ADIOI_BBLOG_Round_account(st, r);
            }
        }
        if (werr != MPI_SUCCESS && d->err == MPI_SUCCESS)
            d->err = werr;
        st->stats.rounds++;
        start = end;
    } while (end != UINT64_MAX);
}

/* bblog_verify, at the commit: every process has written and flushed its share; each reads
 * back what it wrote. A difference anywhere keeps every log, as a failed drain does. */
static void commit_verify(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct round *r = &d->r;
    struct written bad = { 0, 0, 0 };
    uint32_t got = 0;
    int verr, anybad;

    d->mismatch = ADIOI_BBLOG_Round_verify(d->fd, st, r, d->budget, &bad, &got, &verr);
    if (d->alone)
        anybad = d->mismatch;
    else if (ADIOI_BBLOG_Allreduce(&d->mismatch, &anybad, 1, MPI_INT, MPI_MAX,
                                   d->fd->comm) != MPI_SUCCESS)
        anybad = 1;         /* unknown: kept, as a mismatch keeps every log */
    if (anybad) {
        d->anyfail = 1;
        if (!d->mismatch)
            d->err = ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_IO, "bblog: the "
                                     "verifying drain of %s read back bytes that differ "
                                     "from what was written, on another process; the "
                                     "data stays in the logs under %s", st->pfs_path,
                                     st->logdir);
        else if (verr != MPI_SUCCESS)
            d->err = verr;
        else
            d->err = ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_IO, "bblog: the "
                                     "verifying drain of %s read back bytes [%llu, %llu) "
                                     "that differ from what it wrote there (CRC-32C %08x, "
                                     "written %08x); the data stays in the logs under %s",
                                     st->pfs_path, (unsigned long long) bad.off,
                                     (unsigned long long) (bad.off + bad.len), got,
                                     bad.crc, st->logdir);
        d->mismatch = 1;
    }
}

/* Stage 4: the commit point. Every process wrote and flushed its share, and says so with its
 * check word; without every word, nothing is marked drained. bblog_verify reads back here. */
static void drain_commit(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct round *r = &d->r;
    uint64_t v[3], sum[3], want = 0;
    int p;

    /* Before the logs can be marked drained and truncated. */
    if (r->map)
        munmap((void *) r->map, r->map_len);
    r->map = NULL;
    if (d->rc == ADIOI_BBLOG_ECOLL && d->err == MPI_SUCCESS)
        d->err = ADIOI_BBLOG_Err_rc(DRAIN_MYNAME, __LINE__, d->rc, "cannot drain",
                                    st->pfs_path);
    else if (d->rc != 0 && d->err == MPI_SUCCESS)
        d->err = ADIOI_BBLOG_Err_rc(DRAIN_MYNAME, __LINE__, d->rc, "cannot read back the log",
                                    st->ls->log ? bblog_log_data_path(st->ls->log) :
                                    st->logdir);
    /* A verifying drain flushes too: what it reads back must be what the PFS holds, not what
     * one client's cache holds of another's writes. */
    if (d->err == MPI_SUCCESS && (d->sync_inner || r->verify) && st->inner->is_open)
        ADIO_Flush(st->inner, &d->err);
    d->flushed = d->err == MPI_SUCCESS && (d->sync_inner || r->verify) && st->inner->is_open;
    /* Failures count in the low half, those of a full file system in the high half: every
     * process then reports the class a plain ROMIO write of the same bytes would have. */
    v[0] = d->err != MPI_SUCCESS;
    if (d->err != MPI_SUCCESS) {
        int cls = MPI_ERR_IO;
        MPI_Error_class(d->err, &cls);
        if (cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA)
            v[0] |= UINT64_C(1) << 32;
    }
    v[1] = ADIOI_BBLOG_Drain_check(st, CHECK_END, st->rank);
    v[2] = (uint64_t) d->node_bad;
    if (d->alone) {
        want = v[1];
        memcpy(sum, v, sizeof(v));
    } else {
        for (p = 0; p < st->nprocs; p++)
            want += ADIOI_BBLOG_Drain_check(st, CHECK_END, p);
        /* Not agreed: as a process lost, every log is kept. */
        if (ADIOI_BBLOG_Allreduce(v, sum, 3, MPI_UINT64_T, MPI_SUM, d->fd->comm) != MPI_SUCCESS)
            sum[0] = 1, sum[1] = ~want, sum[2] = 0;
    }
    d->lost = sum[1] != want;
    d->nospace = (sum[0] >> 32) != 0;
    d->anyfail = sum[0] != 0 || d->lost;
    d->node_retry = !d->anyfail && sum[2] != 0;
    if (d->node_retry)
        d->anyfail = 1;         /* nothing is marked drained by this pass */
    if (!d->anyfail && r->verify)
        commit_verify(d);
}

/* Stage 5, after a partial drain (drain_plan): what it wrote is kept like bytes written
 * through, for the next collective drain's exchange; the log keeps its older extents. */
static void drain_keep_partial(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    size_t i;
    int rc = 0;

    for (i = 0; i < d->n && rc == 0; i++) {
        rc = ADIOI_BBLOG_Note_through(st->ls, d->segs[i].off, d->segs[i].len, d->stamps[i]);
        if (rc == 0)
            rc = bblog_idx_remove(st->ls->idx, d->segs[i].off, d->segs[i].len);
    }
    if (rc != 0)
        d->err = ADIOI_BBLOG_Err_rc(DRAIN_MYNAME, __LINE__, rc, "cannot record the drain of",
                                    st->pfs_path);
    d->anyfail = 1;             /* no mark, no clear */
}

/* Stage 5, after a complete drain everywhere: the log is marked drained and emptied. */
static void drain_empty_log(struct drain *d, int *emptied)
{
    struct ADIOI_BBLOG_state *st = d->st;
    int rc;

    /* Every process's bytes are in the PFS file: the others' reads stop looking in this log
     * before it is emptied (ad_bblog_peer_list.c). */
    ADIOI_BBLOG_Peer_emptied(st->ls);
    if (st->ls->log) {
        struct bblog_log_stats ls;

        rc = mark_log_drained(st, d->alone != NULL);
        if (rc != 0)
            d->err = ADIOI_BBLOG_Err_rc(DRAIN_MYNAME, __LINE__, rc, "cannot mark drained",
                                        bblog_log_meta_path(st->ls->log));
        else
            st->ls->log_failed = 0;         /* an emptied log takes appends again */
        /* A log write that failed before the drain read its bytes back from memory lost
         * nothing, but the burst buffer is too small (or failing): say so, once. */
        bblog_log_get_stats(st->ls->log, &ls);
        if (ls.failures > 0) {
            char why[160];
            snprintf(why, sizeof(why), "refused writes (%s; the drain wrote them from "
                     "memory)", bblog_strerror(ls.last_failure));
            ADIOI_BBLOG_Warn_full(st, why);
        }
    }
    bblog_idx_clear(st->ls->idx);
    ADIOI_BBLOG_Order_reset(st->ls);
    st->ls->log_bytes = 0;
    st->ls->log_end = 0;
    ADIOI_BBLOG_Trim_reset(st->ls);
    *emptied = 1;
    if (d->flushed)
        ADIOI_BBLOG_Flushed(st->ls, d->w0);
}

/* Stage 5: what the logs keep, the error every process reports, and the statistics. */
static void drain_finish(struct drain *d, int *emptied)
{
    struct ADIOI_BBLOG_state *st = d->st;

    /* Every process has read the node's logs: their mappings go before the truncation of the
     * logs, which would otherwise have to unmap the pages from all of them. */
    ADIOI_BBLOG_Node_end(st);
    if (!d->anyfail && d->partial)
        drain_keep_partial(d);
    if (!d->anyfail)
        drain_empty_log(d, emptied);
    else if (d->err == MPI_SUCCESS && !d->partial)
        d->err = d->lost ?
            ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_OTHER, "bblog: a process of %s did "
                            "not finish its drain (did it die, or a collective call fail?); "
                            "the data stays in the logs under %s", st->pfs_path,
                            st->logdir) :
            d->nospace ?
            ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_NO_SPACE, "bblog: draining %s failed "
                            "on another process: no space left on the file system of %s; the "
                            "data stays in the logs under %s (make room, then sync or close "
                            "again, or run bblog replay)", st->pfs_path, st->pfs_path,
                            st->logdir) :
            ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_IO, "bblog: draining %s failed on "
                            "another process; the data stays in the logs under %s",
                            st->pfs_path, st->logdir);
    st->stats.drains++;
    st->stats.t_drain += ADIOI_BBLOG_Now() - d->t0;
    st->stats.last_drain = d->mismatch ? ADIOI_BBLOG_LAST_MISMATCH :
        d->err != MPI_SUCCESS ? ADIOI_BBLOG_LAST_FAILED :
        d->r.verify ? ADIOI_BBLOG_LAST_VERIFIED : ADIOI_BBLOG_LAST_DONE;
}

static void drain_free(struct drain *d)
{
    free(d->r.ver);
    free(d->r.sv);
    if (d->r.sbuf)
        ADIOI_Free(d->r.sbuf);
    if (d->r.buf)
        ADIOI_Free(d->r.buf);
    ADIOI_BBLOG_Order_fini(&d->order);
    free(d->ag.node);
    free(d->r.lens);
    free(d->r.disps);
    free(d->r.quad);
    free(d->r.mp);
    free(d->segs);
    free(d->stamps);
    free(d->mine);
}

static int drain(ADIO_File fd, int sync_inner, const struct ADIOI_BBLOG_order *alone,
                 int *emptied)
{
    struct drain d;

    memset(&d, 0, sizeof(d));
    d.fd = fd;
    d.st = ADIOI_BBLOG_STATE(fd);
    d.sync_inner = sync_inner;
    d.t0 = ADIOI_BBLOG_Now();
    d.w0 = __atomic_load_n(&d.st->ls->wgen, __ATOMIC_RELAXED);
    d.err = MPI_SUCCESS;
    d.budget = d.plan_budget = (uint64_t) d.st->hints.flush_buffer_size;
    d.r.verify = d.st->hints.verify;
    d.alone = alone;
    *emptied = 0;
    if (!alone)
        d.st->drain_seq++;      /* counted alike on every process: collective drains only */
    drain_plan(&d);
    if (d.ag.count == 0)
        return drain_nothing(&d, emptied);
    drain_choose(&d);
    drain_rounds(&d);
    drain_commit(&d);
    if (d.node_retry) {
        /* A process could not read the node's logs (node_ready): again, through MPI. */
        ADIOI_BBLOG_Node_end(d.st);
        drain_free(&d);
        d.st->node_off = 1;
        d.st->stats.drains_again++;
        return drain(fd, sync_inner, NULL, emptied);
    }
    drain_finish(&d, emptied);
    drain_free(&d);
    return d.err;
}

/* A background drain (ad_bblog_bg.c) is paused meanwhile: its segment in flight ends
 * after the write under way, and it forgets what it wrote, so nothing is written twice. */
static int drain_paused(ADIO_File fd, int sync_inner, const struct ADIOI_BBLOG_order *alone)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err, emptied = 0;

    ADIOI_BBLOG_Bg_settle(st->ls, st);
    ADIOI_BBLOG_Bg_pause(st->ls);
    err = drain(fd, sync_inner, alone, &emptied);
    ADIOI_BBLOG_Bg_resume(st->ls, emptied);
    return err;
}

int ADIOI_BBLOG_Drain(ADIO_File fd, int sync_inner)
{
    return drain_paused(fd, sync_inner, NULL);
}

int ADIOI_BBLOG_Drain_alone(ADIO_File fd, const struct ADIOI_BBLOG_order *later)
{
    return drain_paused(fd, 1, later);
}
