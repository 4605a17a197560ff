/*
 * Planning points of background drains (DESIGN.md section 6): collective, on the application's
 * thread, at the end of collective calls on the file. Here too: the bracket of every collective
 * call (Coll_begin, Coll_end), which counts the calls that order writes (ad_bblog_base_order.c),
 * and the fence that the drain thread checks.
 *
 * Why. Two processes' writes to the same bytes are ordered by the collective calls between them,
 * and each process's thread drains on its own, so a process must not write an older extent after
 * another process wrote a newer one over it (write order: ad_bblog_base_order.c).
 *
 * Where. Every sync, set_size, set_atomicity and collective read is a point, and some collective
 * writes: all processes count them alike (Coll_begin, Coll_end), and each point sets the next the
 * same everywhere (next_spacing). A point costs three collective calls, so those at writes are
 * spaced: ADIOI_BBLOG_PLAN_EVERY calls after the first write of an output phase on any process,
 * twice as many after each point that brought some bytes but fewer than ADIOI_BBLOG_PLAN_BYTES per
 * process, up to ADIOI_BBLOG_PLAN_MAX_EVERY. A point that brought nothing keeps the spacing (it
 * says nothing of the write rate). Once every process reports that its output phases begin at the
 * same collective calls, the same number of calls apart (the phases' key), the next point is the
 * last call of a phase, so that a whole phase may drain during the computation after it, and that
 * point ends the phase for the pacer.
 *
 * What. At a point all threads are paused (a segment in flight ends after the write under way),
 * each process sends the pieces it logged or wrote through since the previous point, with their
 * stamps, and each process forgets the parts of its extents that another process wrote later (they
 * would only be overwritten), so that what remains of all processes' planned extents is disjoint
 * wherever the stamps differ, and may be written in any order. Each process also adds the other
 * processes' pieces to its fence: an extent logged after the last point is drained in the
 * background only if no collective call came since that point, an independent call wrote it, and no
 * other process's earlier extent lies there (both logged since the last point with no collective
 * call between means unordered). A collective drain (sync, close, set_size, a collective read)
 * pauses the thread and drains the rest with the usual rounds and exchange; the fence is then empty
 * again. A point may also start a node batch of small pieces (ad_bblog_bg_batch.c), where every
 * process can take part and the runs of what all processes wrote since the last point average under
 * ADIOI_BBLOG_CLOSE_PIECE.
 *
 * Locking. A point holds ls->lock from the pause to the thread's resumption; a batch of another
 * handle of the file is finished first (Bg_batch_settle), as that batch's processes need not be at
 * this point.
 *
 * Invariants. Every process decides alike, from what all know after the exchange: the spacing to
 * the next point, whether it ends a phase, whether a batch starts. Where any process may trim its
 * log, a process's pieces are made durable (the log synced, writes through flushed) before they go
 * to the others, which may then forget and trim what the pieces overwrote.
 *
 * Failures. A process that cannot plan (no memory, or its pieces could not be made durable) still
 * takes part in the exchange, so that every process learns of it; its thread stays paused until the
 * next collective drain, so nothing is written out of order, and it says so once on stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_bg_priv.h"
#include "adioi.h"
#include "bblog_pace.h"

/* The bracket of every collective call on the file (ad_bblog.h): ls->colls orders writes
 * (ad_bblog_base_order.c), and the end of a call may be a planning point. */
void ADIOI_BBLOG_Coll_begin(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    if (st->ls && st->nprocs > 1)
        st->ls->in_coll++;
}

void ADIOI_BBLOG_Coll_end(ADIO_File fd, int began, int may_wait)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    if (!st->ls || st->nprocs <= 1)
        return;
    ADIOI_BBLOG_Lock(st->ls);         /* the drain thread reads colls */
    if (began)
        st->ls->in_coll--;
    st->ls->colls++;
    ADIOI_BBLOG_Unlock(st->ls);
    /* With background drains, collective calls are the planning points (above): every sync,
     * set_size, set_atomicity and collective read, and collective writes spaced as Bg_plan
     * agreed (an exchange at each of IOR's thousands of small write_all calls would cost more
     * than the drain saves); with bblog_drain=on_demand, where the thread only makes room for
     * a small budget, the collective writes that plan are chosen by ad_bblog_bg_cap.c. A failure
     * leaves the thread paused until the next collective drain: nothing is lost. A nonblocking
     * collective write is no planning point: its caller may still have to reach another
     * process before that one enters the call. */
    if (st->ls->bg && may_wait && st->ls->planning &&
        (!began || (st->hints.drain != ADIOI_BBLOG_DRAIN_ON_DEMAND &&
                    ADIOI_BBLOG_Bg_plan_due(st->ls))))
        ADIOI_BBLOG_Bg_plan(fd);
}

/* Lock held. Whether another process logged [off, off+len) before the last planning point
 * (its background drain may still write those older bytes). */
int ADIOI_BBLOG_Bg_fenced(const struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len)
{
    struct bblog_idx_iter it;
    struct bblog_extent e;

    if (!ls->bg)
        return 0;
    /* A collective call since the last planning point: other processes' older pieces may be
     * missing from the fence, and their threads may still write them. Stay in the log. */
    if (ls->colls != ls->bg->plan_colls && ls->multi)
        return 1;
    bblog_idx_iter_init(ls->bg->fence, &it, off, len);
    return bblog_idx_iter_next(&it, &e);
}

int ADIOI_BBLOG_Bg_plan_due(const struct ADIOI_BBLOG_logstate *ls)
{
    return ls->bg && ls->colls - ls->bg->plan_at >= ls->bg->plan_every;
}

struct trim_arg {
    uint64_t *cut;              /* pairs (off, len) to forget */
    size_t n, cap;
    uint64_t before;            /* cut_older: forget runs of stamps below this one */
};

static int collect_cut(void *arg, uint64_t off, uint64_t len)
{
    struct trim_arg *t = arg;

    if (bblog_grow((void **) &t->cut, &t->cap, t->n + 1, 2 * sizeof(*t->cut)) != 0)
        return ENOMEM;      /* pairs: an element is (off, len) */
    t->cut[2 * t->n] = off;
    t->cut[2 * t->n + 1] = len;
    t->n++;
    return 0;
}

static int cut_older(void *arg, uint64_t off, uint64_t len, uint64_t log_off, uint64_t stamp)
{
    struct trim_arg *t = arg;

    (void) log_off;
    return stamp < t->before ? collect_cut(t, off, len) : 0;
}

/* Another process forgets what it logged that this process's pieces overwrote later, and may
 * then trim it from its log (ad_bblog_bg_trim.c): before it learns of them, the pieces must
 * outlive a crash of this process, in the log or, for writes through, in the PFS file. */
static int make_pieces_durable(struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_logstate *ls)
{
    int err = MPI_SUCCESS;

    if (ls->nthrough > ls->bg->plan_through && st->through_unsynced && st->inner->is_open) {
        ADIO_Flush(st->inner, &err);
        if (err != MPI_SUCCESS)
            return EIO;
        st->through_unsynced = 0;
    }
    return ls->nrecent > 0 && ls->log ? bblog_log_sync(ls->log) : 0;
}

/*
 * Planning point (collective; at the end of each collective call on the file, all processes
 * alike). The thread's segment in flight ends first (after the write under way), on every
 * process, before any process learns what the others wrote: once the plan is over, another
 * process may write its newer bytes over ours at once, and ours must have landed. Returns 0,
 * or an errno value when this process could not plan (no memory, or its pieces could not be
 * made durable): then its thread stays paused until the next collective drain, so nothing is
 * written out of order.
 */
/* Lock held. The pieces this process wrote since the last planning point, as (offset,
 * length, stamp) triples: its appends, then its writes through. 0 or ENOMEM. */
static int my_pieces(struct ADIOI_BBLOG_logstate *ls, uint64_t **out, size_t *n)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    uint64_t *mine;
    size_t i, k = 0;

    *n = ls->nrecent + (ls->nthrough - bg->plan_through);
    if (!(mine = malloc((*n ? *n : 1) * 3 * sizeof(*mine))))
        return ENOMEM;
    for (i = 0; i < ls->nrecent; i++, k++) {
        mine[3 * k] = ls->recent[i].off, mine[3 * k + 1] = ls->recent[i].len;
        mine[3 * k + 2] = ls->recent[i].stamp;
    }
    for (i = bg->plan_through; i < ls->nthrough; i++, k++) {
        mine[3 * k] = ls->through[i].off, mine[3 * k + 1] = ls->through[i].len;
        mine[3 * k + 2] = ls->through[i].stamp;
    }
    *out = mine;
    return 0;
}

/* Lock held. Forgets what other processes wrote later than this one (their pieces of the
 * exchange o), and fences off what they wrote at all. 0 or ENOMEM. */
static int drop_superseded(struct ADIOI_BBLOG_state *st, const struct ADIOI_BBLOG_order *o)
{
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    struct trim_arg t = { NULL, 0, 0, 0 };
    struct bblog_idx_iter it;
    struct bblog_extent e;
    uint64_t before;
    size_t i;
    int rc = 0;

    for (i = 0; rc == 0 && i < o->n; i++) {
        uint64_t qoff = o->pieces[3 * i], qlen = o->pieces[3 * i + 1];
        t.before = o->pieces[3 * i + 2];
        bblog_idx_iter_init(ls->idx, &it, qoff, qlen);
        while (rc == 0 && bblog_idx_iter_next(&it, &e))
            rc = ADIOI_BBLOG_Stamp_runs(ls, e.off, e.len, e.log_off, cut_older, &t);
        if (rc == 0)
            rc = bblog_idx_insert(ls->bg->fence, qoff, qlen, 0);
    }
    before = bblog_idx_bytes(ls->idx);
    for (i = 0; rc == 0 && i < t.n; i++)
        rc = bblog_idx_remove(ls->idx, t.cut[2 * i], t.cut[2 * i + 1]);
    st->stats.bytes_superseded += before - bblog_idx_bytes(ls->idx);
    free(t.cut);
    return rc;
}

/* The spacing to the next planning point, from what every process knows alike after the
 * exchange o (failed: it did not happen): the flag, the phases' key, and the bytes of all
 * processes' pieces. */
static void next_spacing(struct ADIOI_BBLOG_logstate *ls, const struct ADIOI_BBLOG_order *o,
                         int failed, uint64_t bytes, int nprocs)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;

    bg->plan_at = ls->colls;
    bg->plan_ends_phase = 0;
    if (!failed && o->key != 0 && o->key != UINT64_MAX) {
        /* Every process's phases began at the same collective calls, period calls apart: the
         * next point ends a phase (or one ADIOI_BBLOG_PLAN_MAX_EVERY on), and the whole phase
         * may drain during the computation that follows it. */
        uint32_t start = (uint32_t) (o->key >> 32), period = (uint32_t) o->key;
        uint32_t next = start + ((ls->colls - start) / period + 1) * period;
        bg->plan_every = next - ls->colls;
        bg->plan_ends_phase = bg->plan_every <= ADIOI_BBLOG_PLAN_MAX_EVERY;
        if (!bg->plan_ends_phase)
            bg->plan_every = ADIOI_BBLOG_PLAN_MAX_EVERY;
    } else if (failed || o->flag)
        bg->plan_every = ADIOI_BBLOG_PLAN_EVERY;
    else if (bytes > 0 && bytes < (uint64_t) ADIOI_BBLOG_PLAN_BYTES * (uint64_t) nprocs &&
             bg->plan_every < ADIOI_BBLOG_PLAN_MAX_EVERY)
        bg->plan_every *= 2;
}

/* Whether this process may take part in a node batch at this point (ad_bblog_bg_batch.c): from
 * inputs every process of the open agreed on, so that only a failure makes the processes
 * differ, which the exchange tells them. The file's one handle in this process (refs: it and
 * the thread; the batch's number and its processes are the handle's), the node exchange on
 * (its logs of each process, or slots of the node's pair), a node whose processes share the
 * burst buffer's directory and no other
 * node does (a mapping on a file system that several nodes share is no shared memory), no
 * read-back; under bblog_drain=on_demand only at close (the thread waits for it). */
static int batch_candidate(const struct ADIOI_BBLOG_state *st, const struct ADIOI_BBLOG_bg *bg)
{
    return st->ls->refs == 2 && st->hints.node_exchange && !st->node_off &&
        (st->one_node || !st->hints.shared_bb || st->hints.debug_node_size > 0) &&
        !st->hints.debug_no_batch && !bg->verify && (!bg->hold || bg->last_plan);
}

/* Makes this process's files of the point's batch among its node's processes (Node_members,
 * collective the first time: every process comes here at every point). 0 or an errno. */
static int batch_open(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_bg *bg,
                      struct ADIOI_BBLOG_batch **nb)
{
    const int *ranks;
    int me, size = st->hints.node_exchange ? ADIOI_BBLOG_Node_members(fd, &ranks, &me) : 0;

    *nb = NULL;
    if (size < 1 || !batch_candidate(st, bg))
        return EINVAL;
    return ADIOI_BBLOG_Batch_open(st, ranks, size, me, st->points, ADIOI_BBLOG_Bg_chunk_size(bg),
                                  nb);
}

struct quads_arg {
    uint64_t *q;
    size_t n, cap;
};

static int add_quad(void *arg, uint64_t off, uint64_t len, uint64_t log_off, uint64_t stamp)
{
    struct quads_arg *a = arg;

    if (bblog_grow((void **) &a->q, &a->cap, a->n + 1, 4 * sizeof(*a->q)) != 0)
        return ENOMEM;
    a->q[4 * a->n] = off;
    a->q[4 * a->n + 1] = len;
    a->q[4 * a->n + 2] = log_off;
    a->q[4 * a->n + 3] = stamp;
    a->n++;
    return 0;
}

/* Lock held, at a planning point that starts batch b: every small extent this process has
 * logged (all eligible from this point on), with its stamps, goes into its list, its log's
 * staged bytes into the data file the others read. 0 or an errno (the batch then fails for
 * all). An extent of ADIOI_BBLOG_CLOSE_PIECE or more stays with the thread, which writes it as
 * one run once the batch is over: a batch is for pieces too small to go out one request each,
 * and its chunks (256 KiB when paced) would cut a large extent into requests smaller than the
 * thread's segments (VPIC-IO through HDF5: H5Fflush's metadata pieces started a batch that
 * took the last step's 32 MiB per process in 256 KiB chunks). What stays out is disjoint from
 * every other process's pieces wherever the stamps differ (the point's exchange), so it may
 * be written before or after the chunks. */
static int batch_start(struct ADIOI_BBLOG_logstate *ls, struct ADIOI_BBLOG_batch *b)
{
    struct quads_arg a = { NULL, 0, 0 };
    struct bblog_idx_iter it;
    struct bblog_extent e;
    int rc = ls->log && bblog_idx_count(ls->idx) > 0 ? bblog_log_flush(ls->log) : 0;

    bblog_idx_iter_init(ls->idx, &it, 0, UINT64_MAX);
    while (rc == 0 && bblog_idx_iter_next(&it, &e))
        if (e.len < ADIOI_BBLOG_CLOSE_PIECE)
            rc = ADIOI_BBLOG_Stamp_runs(ls, e.off, e.len, e.log_off, add_quad, &a);
    if (rc != 0) {
        free(a.q);
        ADIOI_BBLOG_Batch_fail(b);
        return rc;
    }
    return ADIOI_BBLOG_Batch_publish(b, a.q, a.n);
}

/* Lock held, after a planning point's exchange: batch b (opened by this process, NULL if
 * not) becomes the thread's when the point starts one and this process planned (rc 0); one
 * started that this process cannot publish fails for every process. */
static void batch_begin(const struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_logstate *ls,
                        struct ADIOI_BBLOG_batch *b, int start, int rc)
{
    if (start && rc == 0 && batch_start(ls, b) == 0) {
        ls->bg->batch = b;
        ls->bg->batch_st = st;
        ls->bg->batches++;
        return;
    }
    if (start && rc != 0)
        ADIOI_BBLOG_Batch_fail(b);      /* the others must not wait for this list */
    ADIOI_BBLOG_Batch_close(b);
}

/* Lock held, after a planning point that succeeded: everything logged so far may drain, the
 * thread resumes. At the point the phases' key placed at the last call of an output phase
 * (phase_end), every process ends its phase for the pacer, as the key says, instead of a quiet
 * gap later: its drain window opens now. */
static void planned(struct ADIOI_BBLOG_logstate *ls, int phase_end)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;

    bg->plan_log_end = ls->log_end;
    bg->plan_colls = ls->colls;
    bg->plan_through = ls->nthrough;
    ls->nrecent = 0;
    bg->plans++;
    bg->starved = 0;
    bblog_pace_set_pending(&bg->pace, ADIOI_BBLOG_Now(), bblog_idx_bytes(ls->idx));
    if (phase_end) {
        bblog_pace_on_mark(&bg->pace, ADIOI_BBLOG_Now());
        bg->point_ended = 1;
    }
    ADIOI_BBLOG_Bg_resume_locked(ls);
}

int ADIOI_BBLOG_Bg_plan(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    struct ADIOI_BBLOG_bg *bg;
    struct ADIOI_BBLOG_order o;
    struct ADIOI_BBLOG_batch *nb = NULL;
    uint64_t *mine = NULL, bytes = 0;
    size_t n = 0, i;
    int rc, xrc, phase_end;
    double t0;

    if (!ls || !(bg = ls->bg) || st->nprocs <= 1)
        return 0;
    t0 = ADIOI_BBLOG_Now();
    pthread_mutex_lock(&ls->lock);
    /* The point the phases' key placed at the last call of an output phase (not a sync or
     * set_size before it). */
    phase_end = bg->plan_ends_phase && ls->colls - bg->plan_at == bg->plan_every;
    if (bg->batch && bg->batch_st != st)
        ADIOI_BBLOG_Bg_batch_settle(ls);       /* another handle's processes need not be here */
    ADIOI_BBLOG_Bg_pause_locked(ls);
    /* What this process wrote since the last point: its appends, and its writes through.
     * A failure is carried into the exchange below, not returned: every process must reach
     * it (the driver's rule before a collective call, ad_bblog_base.h). */
    rc = ADIOI_BBLOG_Order_init(fd, &o);
    if (rc == 0)
        rc = my_pieces(ls, &mine, &n);
    if (rc == 0 && ls->trims && n > 0)
        rc = make_pieces_durable(st, ls);
    if (rc != 0)
        n = 0;
    o.flag = bg->pace.nstarted != bg->plan_phases;      /* a new output phase here */
    bg->plan_phases = bg->pace.nstarted;
    o.agree = 1;
    o.key = bg->phase_period ? (uint64_t) bg->phase_start << 32 | bg->phase_period : 0;
    /* A node batch's files are made before the exchange, which says whether every process
     * could (ad_bblog_bg_batch.c); they are used only if this point starts one. */
    st->points++;
    o.nobatch = batch_open(fd, st, bg, &nb) != 0;
    /* Collective even after a failure here, so that every process learns of it. */
    xrc = o.counts ? ADIOI_BBLOG_Order_exchange(fd, &o, mine, (int) n, 1) : ENOMEM;
    rc = rc ? rc : xrc;
    /* Every process paused its thread before it entered the exchange: no chunk of the last
     * batch is in flight any more, and what the batch did not write its owners keep. */
    ADIOI_BBLOG_Bg_batch_end(ls);
    /* The spacing to the next point, from what every process knows alike: the flag, and the
     * bytes of all pieces (this process's and the others'). */
    for (i = 0; xrc == 0 && i < n; i++)
        bytes += mine[3 * i + 1];
    for (i = 0; xrc == 0 && i < o.n; i++)
        bytes += o.pieces[3 * i + 1];
    next_spacing(ls, &o, xrc != 0, bytes, st->nprocs);
    if (rc == 0)
        rc = drop_superseded(st, &o);
    /* A batch when every process can take part and what the processes wrote since the last
     * point (all processes' alike, so every process decides the same) is small pieces: runs
     * of a process's pieces that continue each other average under ADIOI_BBLOG_CLOSE_PIECE
     * (IOR strided 4 KiB; segmented, each process's 4 KiB pieces continue each other and its
     * thread writes them as large extents); with none since, as the last point decided. */
    bg->batched = xrc == 0 && !o.nobatch && ADIOI_BBLOG_Batch_shared(nb) &&
        (o.runs > 0 ? bytes / o.runs < ADIOI_BBLOG_CLOSE_PIECE : bg->batched);
    batch_begin(st, ls, nb, bg->batched, rc);
    if (rc == 0) {
        planned(ls, phase_end);
    } else if (!bg->warned++) {
        fprintf(stderr, "bblog: warning: rank %d: cannot plan the background drain of %s "
                "(%s); it waits for the next sync or close\n", st->rank, ls->pfs_path,
                ADIOI_BBLOG_Strerror(rc));
    }
    /* On failure the thread stays paused: Bg_resume after the next collective drain. */
    bg->plan_s += ADIOI_BBLOG_Now() - t0;
    pthread_mutex_unlock(&ls->lock);
    ADIOI_BBLOG_Order_fini(&o);
    free(mine);
    return rc;
}

int ADIOI_BBLOG_Bg_plan_close(ADIO_File fd, int *batched)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int rc;

    *batched = 0;
    if (!st->ls || !st->ls->bg)
        return ADIOI_BBLOG_Bg_plan(fd);
    st->ls->bg->last_plan = 1;
    rc = ADIOI_BBLOG_Bg_plan(fd);
    /* A batch of one process writes its pieces one request each, as its thread would. */
    *batched = st->nprocs > 1 && st->ls->bg->batched && ADIOI_BBLOG_Node_size(st) > 1;
    return rc;
}
