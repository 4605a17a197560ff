/*
 * The background drain's thread (bblog_drain=reactive|proactive, bblog_close=bb; DESIGN.md
 * section 6, seed paper 003). Started, paused and stopped from the application's thread by
 * ad_bblog_bg_ctl.c; what it may write is decided at planning points (ad_bblog_bg_plan.c).
 *
 * Data path. One thread per file and process (per logstate) writes this process's logged
 * extents to the PFS file with pwrite on a descriptor of its own, in file order, a segment at
 * a time, when the pacing controller (pace/bblog_pace.h) says so; or, when the log is out of
 * room, its oldest bytes; or the chunks of a node batch (ad_bblog_bg_batch.c) that it claims.
 *
 * Locking. The index, the log and the controller are shared with the application's thread
 * under ls->lock. The thread holds it to pick a segment and copy its bytes out of the log, not
 * while writing to the PFS: bg->busy counts such writes, and a pause waits for them.
 *
 * Invariants. The thread makes no MPI call. It writes only eligible bytes (eligible()). After a
 * write it forgets from the index only the bytes that still map to the log bytes it wrote: an
 * extent overwritten meanwhile stays, newer, for a later drain.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_bg_priv.h"
#include "adioi.h"
#include "bblog_io.h"
#include "bblog_pace.h"

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

/* The log is past its high-water mark, or a write waits for room (ad_bblog_bg_cap.c): drain
 * the oldest bytes now, whatever the pacing or the hold says. */
int ADIOI_BBLOG_Bg_pressure(const struct ADIOI_BBLOG_logstate *ls)
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
 * processes published (ad_bblog_peer_list.c), or an older extent of another process would show over
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
    double w = ADIOI_BBLOG_Realtime() + secs;

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
 * next PAUSE_STEP of the run being written: a segment may be a thousand writes, and the
 * collective call of every process waits for the slowest pause (RATIONALE:
 * bench/results/rationale.md, pause-step). *n becomes the
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
     * written back (RATIONALE: bench/results/rationale.md, paced-flush). A segment a pause cut
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
/* ---- node batches (ad_bblog_bg_batch.c) ---- */

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
void ADIOI_BBLOG_Bg_batch_end(struct ADIOI_BBLOG_logstate *ls)
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
        ADIOI_BBLOG_Bg_batch_end(ls);
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
uint64_t ADIOI_BBLOG_Bg_chunk_size(const struct ADIOI_BBLOG_bg *bg)
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
    uint64_t bytes, writes, chunk = ADIOI_BBLOG_Bg_chunk_size(bg), k;
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
void ADIOI_BBLOG_Bg_batch_settle(struct ADIOI_BBLOG_logstate *ls)
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
            ADIOI_BBLOG_Bg_batch_end(ls);
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
void *ADIOI_BBLOG_Bg_main(void *arg)
{
    struct ADIOI_BBLOG_logstate *ls = arg;
    struct ADIOI_BBLOG_bg *bg = ls->bg;
    struct pick *picks = NULL;
    size_t cap = 0, n;

    pthread_mutex_lock(&ls->lock);
    while (!bg->stop) {
        struct bblog_pace_action act;
        uint64_t bytes;
        int rc, paced, press = ADIOI_BBLOG_Bg_pressure(ls), flushed, cut;

        if (bg->batch && !bg->paused && batch_idle(ls))
            continue;
        if (!next_segment(ls, press, &act))
            continue;
        /* Once someone waits for the end (hurry) nothing is paced, and the segments are not
         * flushed one by one either: one fdatasync when the index is empty (RATIONALE:
         * bench/results/rationale.md, hurry-flush). */
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
