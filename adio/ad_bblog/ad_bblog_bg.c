/*
 * Background drains (bblog_drain=reactive|proactive, bblog_close=bb; DESIGN.md section 6,
 * seed paper 003).
 *
 * One thread per file and process (per logstate) writes this process's logged extents to the
 * PFS file with pwrite on a descriptor of its own, in file order, a segment at a time, when the
 * pacing controller (pace/bblog_pace.h) says so. It makes no MPI call. The index, the log
 * and the controller are shared with the application's thread under ls->lock; the thread holds
 * it to pick a segment and copy its bytes out of the log, not while writing to the PFS. After
 * the write it forgets from the index only the bytes that still map to the log bytes it wrote:
 * an extent overwritten meanwhile stays, newer, for a later drain.
 *
 * Order across processes (ad_bblog_order.c). Two processes' writes to the same bytes are
 * ordered by the collective calls between them, and each process drains on its own, so a
 * process must not write an older extent after another process wrote a newer one over it.
 * Collective calls on the file are therefore the planning points (every sync, set_size,
 * set_atomicity and collective read, and some collective writes: all processes count them
 * alike, and each point sets the next the same everywhere). A point costs three collective
 * calls, so those at writes are spaced: ADIOI_BBLOG_PLAN_EVERY calls after the first write of
 * an output phase on any process (its pace controller started a phase since the last point),
 * twice as many calls after each point that brought some bytes but fewer than
 * ADIOI_BBLOG_PLAN_BYTES per process, up to ADIOI_BBLOG_PLAN_MAX_EVERY: IOR's thousands of
 * 4 KiB write_all calls plan a few times per phase, 1 MiB calls every 8. A point that brought
 * nothing (a set_size before the first write, as HDF5 makes over an existing file) says nothing
 * of the write rate and keeps the spacing: doubled there, the first phases of 8 collective
 * writes planned nothing and drained nothing while the application computed. The first
 * spacing is short because the first phase's length is unknown: with 16, VPIC-IO's first
 * step of 8 collective writes drained only after the second, and the PFS stayed a step
 * behind to the end. Once every process reports at a point that its current output phase
 * began at the same collective call as all the others', the same number of calls after its
 * previous one, the points follow the phases instead: the next one is the last call of a
 * phase, so that a whole phase may drain during the computation after it, with one point per
 * phase (VPIC-IO's 8 collective writes per step had one every 16 calls: every second step's
 * data waited a step). That point also ends the phase for the pacer, which would otherwise
 * wait for a quiet gap before opening the drain window. At a point all threads are paused (a
 * segment in flight ends after the write under way), each process sends the pieces it logged
 * since the previous point, with their stamps, and each process
 *   - forgets the parts of its extents that another process wrote later (they would only be
 *     overwritten), so that what remains of all processes' planned extents is disjoint
 *     wherever the stamps differ, and may be written in any order;
 *   - adds the other processes' pieces to its fence: an extent logged after the last point
 *     is drained in the background only if no collective call came since that point, an
 *     independent call wrote it, and no other process's earlier extent lies there (both
 *     logged since the last point with no collective call between means unordered).
 * A collective drain (sync, close, set_size, a collective read) pauses the thread and drains
 * the rest with the usual rounds and exchange; the fence is then empty again.
 *
 * bblog_close=bb: close plans a last time, makes the log durable on the burst buffer and
 * returns; the thread drains the rest, then fsyncs the PFS file. The logstate outlives the
 * handle until then. Re-opening or deleting the file in this process waits for it, and so does
 * MPI_Finalize (an attribute on MPI_COMM_SELF whose delete callback runs before MPI shuts down).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "adioi.h"
#include "bblog_io.h"
#include "bblog_pace.h"

#define DEFAULT_SEGMENT_SIZE (4 * 1024 * 1024)
/* Seconds without a write that end an I/O phase: longer than the pauses inside a phase
 * (collective calls of 4 ranks on 2 cores take about 10 ms), short enough that a phase followed
 * by half a second of computation ends with time left to drain it (0.5 s ended none). */
#define QUIET_GAP 0.2
#define MARGIN 0.1              /* of the predicted period, kept free before the next phase */
#define MIN_PIECE (256 * 1024)  /* smallest paced segment: bblog_pace.h, min_piece */
#define BATCH_LOOK 0.02         /* seconds between looks at a node batch's end (batch_idle) */
#define BATCH_WAIT 0.002        /* for another process's list or chunk, which needs no MPI call
                                 * of anyone */

struct ADIOI_BBLOG_bg {
    pthread_t thread;
    pthread_cond_t cond;        /* any change of the fields below */
    int stop;                   /* the thread must return */
    int paused;                 /* the application thread works on the index */
    int busy;                   /* segments or chunks being written (lock released) */
    int hold;                   /* bblog_drain=on_demand with bblog_close=bb: idle until close */
    int closing;                /* the handle was closed: drain everything, then done */
    int hurry;                  /* someone waits for the end (re-open, delete, MPI_Finalize):
                                 * no more pacing, nothing is left to overlap with */
    int done;                   /* closing and all drained (or failed) */
    int starved;                /* nothing eligible: wait for the next planning point */
    int idle;                   /* the thread waits with no deadline: a write must wake it */
    int want_space;             /* a write waits for log space (ad_bblog_cap.c) */
    int pfs_fd;
    uint64_t plan_log_end;      /* log bytes below were logged before the last planning point */
    uint32_t plan_colls;        /* ls->colls at the last planning point */
    uint32_t plan_at;           /* ls->colls at the last point, on every process (plan_colls
                                 * stays behind on a process that could not plan) */
    uint32_t plan_every;        /* collective writes from plan_at to the next point */
    int plan_ends_phase;        /* that point is the last call of an output phase (the
                                 * phases' key): it ends the phase for the pacer */
    int point_ended;            /* the last planning point ended the pacer's phase */
    uint64_t plan_phases;       /* pace.nstarted at the last planning point */
    uint32_t phase_start;       /* ls->colls when this process's output phase began */
    uint32_t phase_period;      /* collective calls from the phase before to it, 0: unknown */
    size_t plan_through;        /* ls->through entries already sent */
    struct bblog_index *fence;  /* other processes' pieces since the last collective drain */
    struct bblog_pace pace;
    uint64_t cursor;            /* file offset to go on from */
    char *buf;
    size_t bufsz;
    int err;                    /* errno of the last failed PFS write, 0 if none */
    int warned;
    int keep_logs, stats;
    int verify;                 /* bblog_verify: each run written is read back into vbuf */
    int nodes;                  /* the open spans nodes: each segment flushed when written */
    char *vbuf;
    char stats_path[PATH_MAX];
    double t0_mono, t0_real;
    uint64_t bytes, writes, plans;
    uint64_t cap_bytes;         /* of bytes, written to make room (ad_bblog_cap.c) */
    uint64_t vbytes;            /* read back from the PFS file (bblog_verify) */
    double plan_s;              /* seconds in planning points, the pause to the resume */
    /* Node batches (ad_bblog_batch.c): the one this process takes part in, or NULL; whether
     * the last planning point started one (the same in every process of the node); close's
     * last point. */
    struct ADIOI_BBLOG_batch *batch;
    const struct ADIOI_BBLOG_state *batch_st;  /* the handle whose planning point started it */
    int batched, last_plan;
    uint64_t batches, batch_chunks;
};

static double realtime(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* ---- the thread ---- */

struct pick {
    uint64_t off, len, log_off;
};

/* Whether the background may write e now; e is cut to the part that the answer is for. An
 * extent logged since the last planning point qualifies only if an independent call wrote it
 * (a collective call's data must not reach the file before every process entered the call, as
 * with ROMIO's two-phase write) and no other process logged those bytes before that point. */
static int eligible(const struct ADIOI_BBLOG_logstate *ls, struct bblog_extent *e)
{
    struct bblog_idx_iter it;
    struct bblog_extent f;
    uint64_t run_end;

    if (e->log_off < ls->bg->plan_log_end && e->log_off + e->len > ls->bg->plan_log_end)
        e->len = ls->bg->plan_log_end - e->log_off;
    /* One process writes the file: no planning points, everything is eligible. */
    if (ls->bg->closing || e->log_off + e->len <= ls->bg->plan_log_end || !ls->multi)
        return 1;
    /* The fence holds every other process's piece logged before the last planning point;
     * after a collective call that was no planning point, older pieces may be missing. */
    if (ls->colls != ls->bg->plan_colls)
        return 0;
    if (ADIOI_BBLOG_COLL_STAMP(ADIOI_BBLOG_Stamp_at(ls, e->log_off, &run_end)) % 2)
        return 0;
    if (run_end - e->log_off < e->len)
        e->len = run_end - e->log_off;
    bblog_idx_iter_init(ls->bg->fence, &it, e->off, e->len);
    return !bblog_idx_iter_next(&it, &f);
}

/* Up to want bytes of eligible extents from the cursor on (wrapping once), read from the log
 * into bg->buf. Lock held. Returns the number of picks (0: nothing eligible). */
static size_t pick_segment(struct ADIOI_BBLOG_logstate *ls, uint64_t want, struct pick **picks,
                           size_t *cap)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    struct bblog_idx_iter it;
    struct bblog_extent e;
    uint64_t got = 0, start = bg->cursor;
    size_t n = 0;
    int pass;

    if (want > bg->bufsz)
        want = bg->bufsz;
    for (pass = 0; pass < 2 && got < want; pass++) {
        uint64_t lo = pass == 0 ? start : 0, len = pass == 0 ? UINT64_MAX - start : start;
        bblog_idx_iter_init(ls->idx, &it, lo, len);
        while (got < want && bblog_idx_iter_next(&it, &e)) {
            if (!eligible(ls, &e))
                continue;
            if (e.len > want - got)
                e.len = want - got;
            if (bblog_grow((void **) picks, cap, n + 1, sizeof(**picks)) != 0)
                return n;
            if (bblog_log_read(ls->log, e.log_off, e.len, bg->buf + got) != 0)
                return n;
            (*picks)[n].off = e.off;
            (*picks)[n].len = e.len;
            (*picks)[n].log_off = e.log_off;
            n++;
            got += e.len;
            bg->cursor = e.off + e.len;
        }
    }
    return n;
}

/* The log is past its high-water mark, or a write waits for room (ad_bblog_cap.c): drain
 * the oldest bytes now, whatever the pacing or the hold says. */
static int pressure(const struct ADIOI_BBLOG_logstate *ls)
{
    return ls->cap && ls->rev && !ls->cap_failed &&
        (ls->log_end - ls->trim_ready >= ls->hwm || ls->bg->want_space);
}

struct oldest {
    struct ADIOI_BBLOG_logstate *ls;
    uint64_t want, got;
    struct pick **picks;
    size_t *cap, n;
    int failed;
};

static int take_oldest(void *arg, struct bblog_extent *piece)
{
    struct oldest *o = arg;
    struct ADIOI_BBLOG_bg *bg = o->ls->bg;
    struct bblog_extent e = *piece;
    uint64_t whole;

    if (!eligible(o->ls, &e))
        return 1;
    whole = e.len;
    if (e.len > o->want - o->got)
        e.len = o->want - o->got;
    if (bblog_grow((void **) o->picks, o->cap, o->n + 1, sizeof(**o->picks)) != 0)
        return o->failed = 1;
    if (bblog_log_read(o->ls->log, e.log_off, e.len, bg->buf + o->got) != 0)
        return o->failed = 1;
    (*o->picks)[o->n].off = e.off;
    (*o->picks)[o->n].len = e.len;
    (*o->picks)[o->n].log_off = e.log_off;
    o->n++;
    o->got += e.len;
    /* Stop at a piece not taken whole: its rest is not eligible, or the segment is full. */
    return e.len < piece->len || whole < piece->len || o->got == o->want;
}

/* Up to want bytes of the oldest logged bytes, in log order, stopping at the first that may
 * not be written yet (the trim point cannot pass it anyway). Lock held. */
static size_t pick_oldest(struct ADIOI_BBLOG_logstate *ls, uint64_t want, struct pick **picks,
                          size_t *cap)
{
    struct oldest o = { ls, want > ls->bg->bufsz ? ls->bg->bufsz : want, 0, picks, cap, 0, 0 };

    ADIOI_BBLOG_Trim_walk(ls, take_oldest, &o);
    return o.n;
}

/* After a segment under pressure: the first live log byte becomes the trim point the
 * application thread may take, once the PFS file holds everything below it durably. Lock
 * held; released while flushing. */
static void offer_trim(struct ADIOI_BBLOG_logstate *ls, int flushed)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    uint64_t t = ADIOI_BBLOG_Trim_walk(ls, NULL, NULL);

    if (t <= ls->trim_ready || (t - ls->trim_ready < ls->gran && !bg->want_space &&
                                t < ls->log_end))
        return;
    if (!flushed) {
        int rc;
        bg->busy++;
        pthread_mutex_unlock(&ls->lock);
        rc = fdatasync(bg->pfs_fd) != 0 ? errno : 0;
        pthread_mutex_lock(&ls->lock);
        bg->busy--;
        if (rc != 0) {
            bg->err = rc;
            return;
        }
    }
    if (t > ls->trim_ready && t <= ls->log_end)
        ls->trim_ready = t;
}

/* Forgets [off, off+len) where the index still maps it to log_off + (x - off). Lock held. */
/* The bytes [off, off+len), logged at log_off, are in the PFS file now and no longer in the
 * index: this process's reads must still rank them by their stamps against what other
 * processes published (ad_bblog_vis.c), or an older extent of another process would show over
 * them. Without memory the read falls back to the PFS bytes, which are these. */
static int drained_run(void *arg, uint64_t off, uint64_t len, uint64_t log_off, uint64_t stamp)
{
    (void) log_off;
    return ADIOI_BBLOG_Note_drained(arg, off, len, stamp);
}

static void note_drained(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                         uint64_t log_off)
{
    (void) ADIOI_BBLOG_Stamp_runs(ls, off, len, log_off, drained_run, ls);
}

static void forget_current(struct ADIOI_BBLOG_logstate *ls, const struct pick *p)
{
    struct bblog_idx_iter it;
    struct bblog_extent e;
    uint64_t cut[2 * 16];
    size_t k = 0, i;
    int more = 1;

    while (more) {
        k = 0;
        more = 0;
        bblog_idx_iter_init(ls->idx, &it, p->off, p->len);
        while (bblog_idx_iter_next(&it, &e)) {
            if (e.log_off != p->log_off + (e.off - p->off))
                continue;
            if (k == 16) {
                more = 1;
                break;
            }
            cut[2 * k] = e.off;
            cut[2 * k + 1] = e.len;
            k++;
        }
        for (i = 0; i < k; i++) {
            if (bblog_idx_remove(ls->idx, cut[2 * i], cut[2 * i + 1]) != 0)
                return;         /* no memory to split: the bytes stay, drained twice */
            note_drained(ls, cut[2 * i], cut[2 * i + 1], p->log_off + (cut[2 * i] - p->off));
        }
    }
}

static int write_all(int fd, const char *buf, uint64_t len, uint64_t off)
{
    return bblog_io_full(fd, (void *) buf, (size_t) len, off, 1, NULL);
}

/* bblog_verify: reads back len bytes at off into vbuf; 0 when they are buf's, EBADMSG when
 * not (the bytes stay logged: the next collective drain writes and checks them again). */
static int read_back(int fd, const char *buf, char *vbuf, uint64_t len, uint64_t off)
{
    size_t done;
    int rc = bblog_io_full(fd, vbuf, (size_t) len, off, 0, &done);

    if (rc != 0)
        return rc;
    return done == len && memcmp(buf, vbuf, (size_t) len) == 0 ? 0 : EBADMSG;
}

/* Lock held: waits until the thread's condition is signalled or secs seconds have passed. */
static void wait_for(struct ADIOI_BBLOG_logstate *ls, double secs)
{
    struct timespec ts;
    double w = realtime() + secs;

    ts.tv_sec = (time_t) w;
    ts.tv_nsec = (long) ((w - (double) ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&ls->bg->cond, &ls->lock, &ts);
}

/* Lock held. Whether the thread has a segment to write now (act->bytes of it); otherwise it
 * waits (for a change, or until the pacer's next time), or ends the drain after close, and the
 * caller looks again. */
static int next_segment(struct ADIOI_BBLOG_logstate *ls, int press, struct bblog_pace_action *act)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;

    if (bg->paused || bg->done || (bg->hold && !bg->closing && !press) || bg->starved) {
        bg->idle = 1;
        pthread_cond_wait(&bg->cond, &ls->lock);
        bg->idle = 0;
        return 0;
    }
    if (bg->closing && bblog_idx_count(ls->idx) == 0) {
        if (bg->pfs_fd >= 0 && fdatasync(bg->pfs_fd) != 0 && !bg->err)
            bg->err = errno;
        bg->done = 1;
        pthread_cond_broadcast(&bg->cond);
        return 0;
    }
    if (press || (bg->closing && (bg->hold || bg->hurry ||
                                  bg->pace.par.mode != BBLOG_PACE_PROACTIVE))) {
        act->bytes = bg->bufsz;         /* after close, or out of room: as fast as possible */
    } else if (bblog_pace_next(&bg->pace, ADIOI_BBLOG_Now(), act) != 0) {
        act->bytes = 0, act->wake = ADIOI_BBLOG_Now() + 0.1;
    }
    if (act->bytes > 0)
        return 1;
    if (isinf(act->wake) && !bg->batch) {
        bg->idle = 1;
        pthread_cond_wait(&bg->cond, &ls->lock);
        bg->idle = 0;
    } else {
        /* While a node batch is on, the others' threads may finish it any time, which only a
         * look at its mapping tells: at most BATCH_LOOK between looks. */
        double wake = bg->batch && act->wake > ADIOI_BBLOG_Now() + BATCH_LOOK ?
            ADIOI_BBLOG_Now() + BATCH_LOOK : act->wake;
        wait_for(ls, wake - ADIOI_BBLOG_Now());
    }
    return 0;
}

/* Bytes written between two looks at a pause inside one run of a segment. */
#define PAUSE_STEP ((uint64_t) 1024 * 1024)

/* Lock released. Writes the picks (their bytes in bg->buf, in file order) to the PFS file:
 * extents adjacent in the file are adjacent in buf too, one run of writes for each. A pause
 * (a planning point or a collective drain waits for this segment) ends the segment at the
 * next PAUSE_STEP of the run being written: a segment of scattered 4 KiB extents is a
 * thousand writes, one of 4 MiB takes 20-150 ms on the GlusterFS stand-in, and the
 * collective call of every process waits for the slowest pause (VPIC-IO through HDF5,
 * bblog_mode=bb, 4 ranks: 20-80 ms per pause, most of a planning point). *n becomes the
 * picks written, the last one cut to what was written when the pause came inside it (the
 * rest stays in the index for later), *bytes their bytes, *cut whether the pause ended it
 * early. 0 or an errno. */
static int write_segment(struct ADIOI_BBLOG_bg *bg, struct pick *picks, size_t *n,
                         int paced, uint64_t *bytes, int *flushed, int *cut)
{
    size_t i, j;
    int rc = 0;

    *bytes = 0;
    *flushed = 0;
    *cut = 0;
    for (i = 0; i < *n && rc == 0 && !*cut; i = j) {
        uint64_t len = picks[i].len, done = 0;
        if (__atomic_load_n(&bg->paused, __ATOMIC_RELAXED) > 0 && i > 0) {
            *n = i;
            *cut = 1;
            break;
        }
        for (j = i + 1; j < *n && picks[j].off == picks[j - 1].off + picks[j - 1].len; j++)
            len += picks[j].len;
        while (rc == 0 && done < len) {
            uint64_t step = len - done < PAUSE_STEP ? len - done : PAUSE_STEP;
            if (done > 0 && __atomic_load_n(&bg->paused, __ATOMIC_RELAXED) > 0)
                break;
            rc = write_all(bg->pfs_fd, bg->buf + *bytes + done, step, picks[i].off + done);
            if (rc == 0 && bg->verify)
                rc = read_back(bg->pfs_fd, bg->buf + *bytes + done, bg->vbuf, step,
                               picks[i].off + done);
            if (rc == 0)
                done += step;
        }
        if (bg->verify)
            bg->vbytes += done;
        bg->writes++;
        if (rc == 0 && done < len) {
            /* Paused inside the run: keep the picks it covers, the last one cut. */
            uint64_t end = picks[i].off + done;
            for (j = i; picks[j].off + picks[j].len < end; j++)
                ;
            picks[j].len = end - picks[j].off;
            *n = j + 1;
            *cut = 1;
        }
        *bytes += done;
    }
    /* A paced segment is made durable before the next one: the PFS servers then never
     * hold much of our data dirty, so another client's sync does not wait for it to be
     * written back. Measured with bench/run-pacing-bench.sh on GlusterFS (probe samples
     * of 2-3 runs pooled): probe p99 under proactive 16.8 ms against 14.6 under reactive
     * without this, 12.7 against 12.9 with it; p95 2.3 against 4.5. A segment a pause cut
     * short on one node is not: the pause waits for it, and the next segment is flushed. */
    /* Across nodes, a write that returned may still sit in this node's client cache
     * (GlusterFS's write-behind, NFS): once the plan or drain that follows lets another
     * node write newer bytes there, ours could reach the servers after them. Flushed
     * first, ours land first. */
    if (rc == 0 && *bytes > 0 &&
        ((paced && bg->pace.par.mode == BBLOG_PACE_PROACTIVE && !*cut) || bg->nodes)) {
        if (fdatasync(bg->pfs_fd) != 0)
            rc = errno;
        *flushed = 1;
    }
    return rc;
}

/* Lock held. After a segment written (rc 0): its bytes leave the index, room is offered, and
 * once nothing is left the PFS file is flushed; after a failure the bytes stay for the next
 * collective drain. */
static void segment_done(struct ADIOI_BBLOG_logstate *ls, const struct pick *picks, size_t n,
                         int rc, uint64_t bytes, int flushed, int press)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    size_t i;

    if (rc != 0) {
        /* The bytes stay in the index and the log: the next collective drain writes them
         * (and reports the error if the PFS still refuses). */
        bg->err = rc;
        bg->starved = 1;
        if (!bg->warned++)
            fprintf(stderr, "bblog: warning: background drain of %s: %s; the data stays "
                    "in the log for the next drain\n", ls->pfs_path, rc == EBADMSG ?
                    "bytes read back differ from those written (bblog_verify)" :
                    strerror(rc));
        if (bg->closing)
            bg->done = 1;
        return;
    }
    for (i = 0; i < n; i++)
        forget_current(ls, &picks[i]);
    bg->bytes += bytes;
    if (press)
        bg->cap_bytes += bytes;
    if (ls->cap)
        offer_trim(ls, flushed);
    /* All logged data is in the PFS file: flush it, so that get_info can say the writes up
     * to here are durable there (unless some went straight to the PFS file through another
     * descriptor, which a sync flushes). */
    if (bblog_idx_count(ls->idx) == 0 && bg->pfs_fd >= 0) {
        uint64_t w = __atomic_load_n(&ls->wgen, __ATOMIC_RELAXED);
        int through = __atomic_load_n(&ls->through_wgen, __ATOMIC_RELAXED) >
            __atomic_load_n(&ls->flushed_wgen, __ATOMIC_RELAXED);

        bg->busy++;
        pthread_mutex_unlock(&ls->lock);
        rc = fdatasync(bg->pfs_fd) != 0 ? errno : 0;
        pthread_mutex_lock(&ls->lock);
        bg->busy--;
        if (rc == 0 && !through)
            ADIOI_BBLOG_Flushed(ls, w);
    }
}
/* ---- node batches (ad_bblog_batch.c) ---- */

struct picks_arg {
    struct pick *p;
    size_t n, cap;
};

static int add_pick(void *arg, uint64_t off, uint64_t len, uint64_t log_off, uint64_t stamp)
{
    struct picks_arg *a = arg;

    (void) stamp;
    if (bblog_grow((void **) &a->p, &a->cap, a->n + 1, sizeof(*a->p)) != 0)
        return ENOMEM;          /* the rest stays in the index: written twice, the same bytes */
    a->p[a->n].off = off;
    a->p[a->n].len = len;
    a->p[a->n].log_off = log_off;
    a->n++;
    return 0;
}

/* Lock held, and no chunk of the batch in flight anywhere (every chunk finished, or every
 * process's thread paused for a collective call that all have entered): this process forgets
 * its bytes that chunks wrote, as after a segment of its own, and leaves the batch. */
static void batch_end(struct ADIOI_BBLOG_logstate *ls)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    struct picks_arg a = { NULL, 0, 0 };

    if (!bg->batch)
        return;
    (void) ADIOI_BBLOG_Batch_done_walk(bg->batch, add_pick, &a);
    ADIOI_BBLOG_Batch_close(bg->batch);
    bg->batch = NULL;
    if (a.n > 0)
        segment_done(ls, a.p, a.n, 0, 0, 0, 0);        /* flushed before log space goes */
    free(a.p);
}

/* Lock held, a batch on, the thread not paused. Returns 0 when a chunk is left to take, which
 * the thread then writes when its pacing says (write_chunk); else it does what needs no
 * pacing and returns 1: a batch that failed (a process could not publish, or too many chunks)
 * ends at once, and each process drains its own pieces again; one whose chunks are all
 * finished ends, its bytes forgotten; otherwise another process's list or last chunk is still
 * to come (or this process could not cut the chunks and waits for the others' to finish),
 * which needs no MPI call of anyone: a short wait. */
static int batch_idle(struct ADIOI_BBLOG_logstate *ls)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    int ready = ADIOI_BBLOG_Batch_ready(bg->batch);

    if (ready == -1) {
        ADIOI_BBLOG_Batch_close(bg->batch);
        bg->batch = NULL;
        return 1;
    }
    if (ready > 0 && ADIOI_BBLOG_Batch_left(bg->batch))
        return 0;
    if (ready > 0 && ADIOI_BBLOG_Batch_finished(bg->batch)) {
        batch_end(ls);
        pthread_cond_broadcast(&bg->cond);
        return 1;
    }
    wait_for(ls, BATCH_WAIT);
    return 1;
}

/* The data of one chunk of a node batch: a segment; paced (proactive), the smallest paced
 * segment, since a chunk carries every process's bytes where the pacer of the process that
 * writes it planned for its own (with 4 MiB chunks the PFS took 3 times the planned rate
 * while the program computed, IOR-like strided 4 KiB phases at 4 ranks); a thread then takes
 * as many in a row as its pacer's segment holds (write_chunk). The same in every process:
 * from the hints. */
static uint64_t batch_chunk_size(const struct ADIOI_BBLOG_bg *bg)
{
    return bg->pace.par.mode == BBLOG_PACE_PROACTIVE && bg->bufsz > MIN_PIECE ? MIN_PIECE :
        (uint64_t) bg->bufsz;
}

/* Lock held: takes the next chunks of the batch nobody took, as many in a row as cover want
 * bytes (bblog_pace_units; want at most a buffer's), if any is left, and writes them (lock
 * released, busy: a pause waits for them), flushed if paced under proactive pacing, and across
 * nodes, as a segment is (write_segment). A paced segment of the pacer's size is then one
 * claim and one flush, whatever the chunks' size. The thread's claim ends early when a pause
 * comes (its other chunks fail: their owners keep their bytes); the application thread's
 * (batch_settle) does not. Returns 0 when no chunk was left, else 1. */
static int write_chunk(struct ADIOI_BBLOG_logstate *ls, char *buf, int thread, int paced,
                       uint64_t want)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    uint64_t bytes, writes, chunk = batch_chunk_size(bg), k;
    int64_t c;
    int rc;

    if (want > bg->bufsz)
        want = bg->bufsz;
    k = bblog_pace_units(want, chunk);
    if (!(k = ADIOI_BBLOG_Batch_claim(bg->batch, k, &c)))
        return 0;
    bg->busy++;
    pthread_mutex_unlock(&ls->lock);
    rc = ADIOI_BBLOG_Batch_write(bg->batch, c, k, bg->pfs_fd, buf,
                                 (paced && bg->pace.par.mode == BBLOG_PACE_PROACTIVE) ||
                                 bg->nodes, thread ? &bg->paused : NULL, &bytes, &writes);
    pthread_mutex_lock(&ls->lock);
    bg->busy--;
    bg->bytes += bytes;
    bg->writes += writes;
    bg->batch_chunks += k;
    if (rc != 0 && !bg->warned++)
        fprintf(stderr, "bblog: warning: background drain of %s: %s; the data stays in the "
                "logs for a later drain\n", ls->pfs_path, strerror(rc));
    if (paced)
        bblog_pace_on_drained(&bg->pace, ADIOI_BBLOG_Now(), bytes);
    pthread_cond_broadcast(&bg->cond);
    return 1;
}

/* Lock held (application thread): finishes the batch from here, taking and writing chunks as
 * the thread does (into a buffer of its own), waiting for those that others took, then ends
 * it. Before a drain or planning point of another handle than the batch's: the batch's other
 * processes do not wait for that one, and none of them may still be writing this process's
 * older bytes when it writes newer ones. */
static void batch_settle(struct ADIOI_BBLOG_logstate *ls)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    char *buf = malloc(bg->bufsz);

    while (bg->batch) {
        struct ADIOI_BBLOG_batch *b = bg->batch;
        int ready = ADIOI_BBLOG_Batch_ready(b);

        if (ready == -1) {
            ADIOI_BBLOG_Batch_close(b);
            bg->batch = NULL;
            break;
        }
        if (ready > 0 && ADIOI_BBLOG_Batch_finished(b)) {
            batch_end(ls);
            break;
        }
        /* The buffer first: a chunk taken must be written. Without one, the others write. */
        if (ready > 0 && buf && write_chunk(ls, buf, 0, 0, bg->bufsz))
            continue;
        wait_for(ls, BATCH_WAIT);
    }
    free(buf);
}

/* The thread: picks a segment (the pacer's, or the oldest bytes when the log is out of room),
 * copies its bytes out of the log under the lock, writes them without it, and forgets them. */
static void *bg_main(void *arg)
{
    struct ADIOI_BBLOG_logstate *ls = arg;
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    struct pick *picks = NULL;
    size_t cap = 0, n;

    pthread_mutex_lock(&ls->lock);
    while (!bg->stop) {
        struct bblog_pace_action act;
        uint64_t bytes;
        int rc, paced, press = pressure(ls), flushed, cut;

        if (bg->batch && !bg->paused && batch_idle(ls))
            continue;
        if (!next_segment(ls, press, &act))
            continue;
        /* Once someone waits for the end (hurry) nothing is paced, and the segments are not
         * flushed one by one either: one fdatasync when the index is empty. 4 ranks, 32 MiB
         * each in 1 MiB writes, bblog_mode=bb, 4 interleaved runs: whole job 1.19-1.22 s ->
         * 1.08-1.15 (a collective drain at close: 1.03-1.12). */
        paced = !press && !bg->hurry &&
            (!bg->closing || (!bg->hold && bg->pace.par.mode == BBLOG_PACE_PROACTIVE));
        if (bg->batch) {        /* its own bytes are in it: nothing else until it ends */
            (void) write_chunk(ls, bg->buf, 1, paced, act.bytes);
            continue;
        }
        n = press ? pick_oldest(ls, act.bytes, &picks, &cap) :
            pick_segment(ls, act.bytes, &picks, &cap);
        if (n == 0) {
            bg->starved = 1;
            pthread_cond_broadcast(&bg->cond);  /* a write waiting for room gives up */
            if (paced)
                bblog_pace_on_drained(&bg->pace, ADIOI_BBLOG_Now(), 0);
            if (bg->closing) {          /* nothing eligible, nothing readable: give up */
                bg->err = bg->err ? bg->err : EIO;
                bg->done = 1;
                pthread_cond_broadcast(&bg->cond);
            }
            continue;
        }
        bg->busy++;
        pthread_mutex_unlock(&ls->lock);
        rc = write_segment(bg, picks, &n, paced, &bytes, &flushed, &cut);
        pthread_mutex_lock(&ls->lock);
        bg->busy--;
        if (cut)                        /* the next segment goes on with the rest */
            bg->cursor = picks[n - 1].off + picks[n - 1].len;
        segment_done(ls, picks, n, rc, bytes, flushed, press);
        if (paced)
            bblog_pace_on_drained(&bg->pace, ADIOI_BBLOG_Now(), rc == 0 ? bytes : 0);
        pthread_cond_broadcast(&bg->cond);
    }
    pthread_mutex_unlock(&ls->lock);
    free(picks);
    return NULL;
}

/* ---- the application thread ---- */

/* The bracket of every collective call on the file (ad_bblog.h): ls->colls orders writes
 * (ad_bblog_order.c), and the end of a call may be a planning point. */
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
     * a small budget, the collective writes that plan are chosen by ad_bblog_cap.c. A failure
     * leaves the thread paused until the next collective drain: nothing is lost. A nonblocking
     * collective write is no planning point: its caller may still have to reach another
     * process before that one enters the call. */
    if (st->ls->bg && may_wait && st->ls->planning &&
        (!began || (st->hints.drain != ADIOI_BBLOG_DRAIN_ON_DEMAND &&
                    ADIOI_BBLOG_Bg_plan_due(st->ls))))
        ADIOI_BBLOG_Bg_plan(fd);
}

static int finalize_keyval = MPI_KEYVAL_INVALID;

static int at_finalize(MPI_Comm comm, int keyval, void *val, void *extra)
{
    ADIOI_BBLOG_Bg_wait_all();
    return MPI_SUCCESS;
}

/* The pacing controller's parameters from the hints (pace/bblog_pace.h). */
static void pace_params(const struct ADIOI_BBLOG_state *st, uint64_t seg,
                        struct bblog_pace_params *par)
{
    memset(par, 0, sizeof(*par));
    par->mode = st->hints.drain == ADIOI_BBLOG_DRAIN_PROACTIVE ? BBLOG_PACE_PROACTIVE :
        BBLOG_PACE_REACTIVE;
    par->segment_size = seg;
    par->interval = st->hints.drain_interval;
    par->max_rate = (double) st->hints.drain_max_rate;
    par->margin = MARGIN;
    par->quiet_gap = QUIET_GAP;
    par->stagger = st->nprocs > 1 ? (double) st->rank / st->nprocs : 0;
    par->min_piece = MIN_PIECE;
}

int ADIOI_BBLOG_Bg_start(ADIO_File fd)
{
    static const char myname[] = "ADIOI_BBLOG_BG_START";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    struct bblog_pace_params par;
    struct ADIOI_BBLOG_bg *bg;
    uint64_t seg = (uint64_t) st->hints.segment_size;
    int rc;

    if (ls->bg)                 /* another handle of this file started it */
        return MPI_SUCCESS;
    if (seg == 0) {
        /* One full stripe row of the PFS file when ROMIO knows the striping. */
        ADIOI_Hints *h = st->inner->hints;
        seg = h->striping_unit > 0 && h->striping_factor > 0 ?
            (uint64_t) h->striping_unit * (uint64_t) h->striping_factor : DEFAULT_SEGMENT_SIZE;
    }
    bg = calloc(1, sizeof(*bg));
    if (!bg)
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, ENOMEM, "cannot start the background "
                                  "drain of", st->pfs_path);
    bg->pfs_fd = -1;
    bg->bufsz = seg;
    bg->plan_at = ls->colls;            /* the same on every process: this call is collective */
    bg->plan_every = ADIOI_BBLOG_PLAN_EVERY;
    bg->hold = st->hints.drain == ADIOI_BBLOG_DRAIN_ON_DEMAND;
    bg->keep_logs = st->hints.keep_logs;
    bg->verify = st->hints.verify;
    bg->nodes = !st->one_node;
    if (st->hints.stats[0]) {
        bg->stats = 1;
        strcpy(bg->stats_path, st->hints.stats);
    }
    pace_params(st, seg, &par);
    bg->t0_mono = ADIOI_BBLOG_Now();
    bg->t0_real = realtime();
    rc = bblog_pace_init(&bg->pace, &par, bg->t0_mono);
    if (rc == 0 && (!(bg->buf = malloc(seg)) || (bg->verify && !(bg->vbuf = malloc(seg)))))
        rc = ENOMEM;
    if (rc == 0)
        rc = bblog_idx_create(&bg->fence);
    if (rc == 0 && (bg->pfs_fd = open(st->pfs_path, (bg->verify ? O_RDWR : O_WRONLY) |
                                      O_CLOEXEC)) < 0)
        rc = errno;
    if (rc == 0 && (rc = pthread_cond_init(&bg->cond, NULL)) == 0) {
        ls->bg = bg;
        ls->refs++;             /* the thread's own reference: it may outlive the handle */
        if ((rc = pthread_create(&bg->thread, NULL, bg_main, ls)) != 0) {
            ls->bg = NULL;
            ls->refs--;
            pthread_cond_destroy(&bg->cond);
        }
    }
    if (rc != 0) {
        if (bg->pfs_fd >= 0)
            close(bg->pfs_fd);
        if (bg->fence)
            bblog_idx_destroy(bg->fence);
        bblog_pace_free(&bg->pace);
        free(bg->buf);
        free(bg->vbuf);
        free(bg);
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot start the background drain of",
                                  st->pfs_path);
    }
    if (finalize_keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &finalize_keyval,
                               NULL) == MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL);
    return MPI_SUCCESS;
}

/* Lock held on entry and exit. */
static void pause_locked(struct ADIOI_BBLOG_logstate *ls)
{
    __atomic_add_fetch(&ls->bg->paused, 1, __ATOMIC_RELAXED); /* read by a segment in flight */
    while (ls->bg->busy)
        pthread_cond_wait(&ls->bg->cond, &ls->lock);
}

static void resume_locked(struct ADIOI_BBLOG_logstate *ls)
{
    __atomic_sub_fetch(&ls->bg->paused, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&ls->bg->cond);
}

void ADIOI_BBLOG_Bg_pause(struct ADIOI_BBLOG_logstate *ls)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    pause_locked(ls);
    pthread_mutex_unlock(&ls->lock);
}

void ADIOI_BBLOG_Bg_settle(struct ADIOI_BBLOG_logstate *ls, const struct ADIOI_BBLOG_state *st)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    if (ls->bg->batch && ls->bg->batch_st != st)
        batch_settle(ls);
    pthread_mutex_unlock(&ls->lock);
}

void ADIOI_BBLOG_Bg_resume(struct ADIOI_BBLOG_logstate *ls, int drained)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    /* Every process paused its thread before the drain's collective calls: no chunk of a
     * batch is in flight, and the drain wrote what the batch had not. */
    batch_end(ls);
    if (drained) {
        /* A collective drain emptied every process's log: nothing older is left anywhere. */
        bblog_idx_clear(ls->bg->fence);
        ls->bg->plan_log_end = 0;
        ls->bg->plan_colls = ls->colls;
        ls->bg->plan_through = 0;
        ls->bg->cursor = 0;
        ls->bg->err = 0;
        bblog_pace_set_pending(&ls->bg->pace, ADIOI_BBLOG_Now(), bblog_idx_bytes(ls->idx));
    }
    ls->bg->starved = 0;
    resume_locked(ls);
    pthread_mutex_unlock(&ls->lock);
}

/* Lock held (application thread): wakes the thread to free log space and waits until it
 * offered a new trim point (0) or can free nothing more (EAGAIN). */
int ADIOI_BBLOG_Bg_make_room(struct ADIOI_BBLOG_logstate *ls)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    uint64_t ready = ls->trim_ready;

    if (!bg || bg->err || bg->done || bg->stop || bg->paused)
        return EAGAIN;
    bg->want_space = 1;
    bg->starved = 0;
    pthread_cond_broadcast(&bg->cond);
    while (ls->trim_ready == ready && !bg->starved && !bg->err && !bg->done)
        pthread_cond_wait(&bg->cond, &ls->lock);
    bg->want_space = 0;
    return ls->trim_ready == ready ? EAGAIN : 0;
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

/* Lock held (application thread). The thread is woken only where this write can change what
 * it does now: it waits with no deadline (idle, or starved for eligible bytes), the write opens
 * an output phase (bytes carried from earlier phases drain at once), or the log passed its
 * high-water mark. A thread in a timed wait (the quiet gap that ends a phase, the next paced
 * segment) finds the later write when it wakes. Waking it at every logged write cost a context
 * switch per write: IOR's 4096 4 KiB writes at 1 rank, proactive, made 770-900 context switches
 * against 190-320 without a drain thread. */
void ADIOI_BBLOG_Bg_note_write(struct ADIOI_BBLOG_logstate *ls, uint64_t before)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    uint64_t after = bblog_idx_bytes(ls->idx), phases = bg->pace.nstarted;
    double now = ADIOI_BBLOG_Now(), prev = bblog_pace_last_write(&bg->pace);

    /* A write over bytes still logged adds nothing to drain, but it is a write all the same:
     * the pacer starts a phase there too. Otherwise a process whose drain had not yet forgotten
     * the bytes that a new phase writes over began it one call later than the others, and the
     * processes no longer agreed on where phases begin (a node batch forgets in one process
     * when its last chunk is written, in another at the next planning point). */
    bblog_pace_on_write(&bg->pace, now, after > before ? after - before : 0);
    if (bg->pace.nstarted != phases) {
        /* A write sooner than a quiet gap after the point that ended a phase at its predicted
         * last call: the phase goes on, the prediction was wrong. Counted as a phase start,
         * it would confirm itself (a point every few calls, each ending a phase); the period
         * is unknown again until the next phase that starts after a quiet gap. */
        if (bg->point_ended && now - prev < bg->pace.par.quiet_gap) {
            bg->phase_period = 0;
        } else {
            bg->phase_period = phases ? ls->colls - bg->phase_start : 0;   /* a phase before */
            bg->phase_start = ls->colls;
        }
        bg->point_ended = 0;
    }
    if (bg->idle || bg->starved || bg->pace.nstarted != phases || pressure(ls)) {
        bg->starved = 0;
        pthread_cond_broadcast(&bg->cond);
    }
}

void ADIOI_BBLOG_Bg_mark(struct ADIOI_BBLOG_logstate *ls)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    bblog_pace_on_mark(&ls->bg->pace, ADIOI_BBLOG_Now());
    pthread_cond_broadcast(&ls->bg->cond);
    pthread_mutex_unlock(&ls->lock);
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
 * then trim it from its log (ad_bblog_trim.c): before it learns of them, the pieces must
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
    st->st.bytes_superseded += before - bblog_idx_bytes(ls->idx);
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

/* Whether this process may take part in a node batch at this point (ad_bblog_batch.c): from
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
    return ADIOI_BBLOG_Batch_open(st, ranks, size, me, st->points, batch_chunk_size(bg), nb);
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
    resume_locked(ls);
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
        batch_settle(ls);       /* another handle's processes need not be here */
    pause_locked(ls);
    /* What this process wrote since the last point: its appends, and its writes through. */
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
     * could (ad_bblog_batch.c); they are used only if this point starts one. */
    st->points++;
    o.nobatch = batch_open(fd, st, bg, &nb) != 0;
    /* Collective even after a failure here, so that every process learns of it. */
    xrc = o.counts ? ADIOI_BBLOG_Order_exchange(fd, &o, mine, (int) n, 1) : ENOMEM;
    rc = rc ? rc : xrc;
    /* Every process paused its thread before it entered the exchange: no chunk of the last
     * batch is in flight any more, and what the batch did not write its owners keep. */
    batch_end(ls);
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
                bblog_strerror(rc));
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

/* Stats of the background drain, one JSON line per process (the segments are this process's
 * own: no MPI, so it also works after close with bblog_close=bb). Lock held. */
static void report(struct ADIOI_BBLOG_logstate *ls, int rank)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    const struct bblog_pace_segment *seg;
    const struct bblog_pace_phase *ph;
    size_t nseg, nph, i, len = 0;
    char *line = NULL;
    FILE *out;
    int fd;

    if (!bg->stats)
        return;
    /* The line is built in memory and appended with one write: the processes of the file
     * append theirs at the same time, and a stdio stream would split a long one. */
    if (!(out = open_memstream(&line, &len)))
        return;
    seg = bblog_pace_segments(&bg->pace, &nseg);
    fprintf(out, "{\"bblog_bg\": 1, \"file\": \"%s\", \"rank\": %d, \"mode\": \"%s\", "
            "\"t0_unix\": %.6f, \"bytes\": %llu, \"writes\": %llu, \"plans\": %llu, "
            "\"plan_s\": %.6f, \"batches\": %llu, \"batch_chunks\": %llu, "
            "\"capacity_bytes\": %llu, \"bytes_verified\": %llu, \"error\": %d, \"segments\": [",
            ls->pfs_path, rank,
            bg->hold ? "close_bb" : bg->pace.par.mode == BBLOG_PACE_PROACTIVE ? "proactive" :
            "reactive", bg->t0_real, (unsigned long long) bg->bytes,
            (unsigned long long) bg->writes, (unsigned long long) bg->plans, bg->plan_s,
            (unsigned long long) bg->batches, (unsigned long long) bg->batch_chunks,
            (unsigned long long) bg->cap_bytes, (unsigned long long) bg->vbytes, bg->err);
    for (i = 0; i < nseg; i++)
        fprintf(out, "%s[%.6f, %llu, %.6f]", i ? ", " : "", seg[i].start - bg->t0_mono,
                (unsigned long long) seg[i].bytes, seg[i].duration);
    ph = bblog_pace_phases(&bg->pace, &nph);
    fprintf(out, "], \"phases\": [");
    for (i = 0; i < nph; i++)
        fprintf(out, "%s[%.6f, %.6f, %llu]", i ? ", " : "", ph[i].start - bg->t0_mono,
                ph[i].end - bg->t0_mono, (unsigned long long) ph[i].bytes);
    fprintf(out, "]}\n");
    fclose(out);
    fd = strcmp(bg->stats_path, "stderr") == 0 ? 2 :
        ADIOI_BBLOG_Open_append(bg->stats_path);
    if (fd >= 0 && line) {
        ssize_t w = write(fd, line, len);
        (void) w;
    }
    if (fd > 2)
        close(fd);
    free(line);
}

/* Lock held; returns with the thread joined and the lock still held. */
static void stop_thread(struct ADIOI_BBLOG_logstate *ls)
{
    ls->bg->stop = 1;
    pthread_cond_broadcast(&ls->bg->cond);
    pthread_mutex_unlock(&ls->lock);
    pthread_join(ls->bg->thread, NULL);
    pthread_mutex_lock(&ls->lock);
}

static void free_bg(struct ADIOI_BBLOG_logstate *ls)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;

    ADIOI_BBLOG_Batch_close(bg->batch);
    if (bg->pfs_fd >= 0)
        close(bg->pfs_fd);
    bblog_idx_destroy(bg->fence);
    bblog_pace_free(&bg->pace);
    pthread_cond_destroy(&bg->cond);
    free(bg->buf);
    free(bg->vbuf);
    free(bg);
    ls->bg = NULL;
}

/* The handle closes while the thread keeps the logstate (bblog_close=bb). */
void ADIOI_BBLOG_Bg_close(struct ADIOI_BBLOG_logstate *ls)
{
    pthread_mutex_lock(&ls->lock);
    ls->bg->closing = 1;
    ls->bg->starved = 0;
    if (ls->bg->paused)
        __atomic_store_n(&ls->bg->paused, 0, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&ls->bg->cond);
    pthread_mutex_unlock(&ls->lock);
}

/* The last handle of a file in on_demand-less mode detaches normally: stop the thread. */
void ADIOI_BBLOG_Bg_stop(struct ADIOI_BBLOG_logstate *ls, int rank)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    stop_thread(ls);
    report(ls, rank);
    pthread_mutex_unlock(&ls->lock);
    free_bg(ls);
    ls->refs--;                 /* the thread's reference */
}

/* Waits for a closed file's background drain, then finishes what close left: the log is
 * marked drained and removed (kept, with a message, if the drain failed), the logstate freed.
 * The drain goes on unpaced from here: whoever waits (a re-open, a delete, MPI_Finalize) has
 * nothing left to overlap it with. Application thread only. */
static void finish(struct ADIOI_BBLOG_logstate *ls)
{
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    int ok, keep = bg->keep_logs, rank = ls->log ? (int) ls->rank : -1;

    pthread_mutex_lock(&ls->lock);
    bg->hurry = 1;
    pthread_cond_broadcast(&bg->cond);  /* out of a paced wait */
    while (!bg->done)
        pthread_cond_wait(&bg->cond, &ls->lock);
    ok = bg->err == 0 && bblog_idx_count(ls->idx) == 0;
    stop_thread(ls);
    report(ls, rank);
    pthread_mutex_unlock(&ls->lock);
    if (!ok)
        fprintf(stderr, "bblog: rank %d: the background drain of %s after close failed (%s); "
                "its log stays in the burst buffer: run `bblog replay DIR --file %s`\n", rank,
                ls->pfs_path, strerror(bg->err ? bg->err : EIO), ls->pfs_path);
    if (ok)
        ADIOI_BBLOG_Vis_emptied(ls);
    if (ok && ls->log && bblog_log_mark_drained(ls->log) != 0)
        ok = 0;
    free_bg(ls);
    ADIOI_BBLOG_Logstate_detach(ls, ok && !keep);
}

void ADIOI_BBLOG_Bg_wait(const char *pfs_path)
{
    struct ADIOI_BBLOG_logstate *ls;

    while ((ls = ADIOI_BBLOG_Logstate_closing(pfs_path)) != NULL)
        finish(ls);
}

void ADIOI_BBLOG_Bg_wait_all(void)
{
    ADIOI_BBLOG_Bg_wait(NULL);
}
