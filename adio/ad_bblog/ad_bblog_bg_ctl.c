/*
 * The background drain controlled from the application's thread (DESIGN.md section 6).
 *
 * Owns. The thread's life: Bg_start at open (a thread per logstate, with the pacing
 * controller's parameters from the hints), Bg_pause and Bg_resume around every collective drain,
 * Bg_note_write after each logged write (wakes the thread only where the write can change what
 * it does now), Bg_make_room for a write that waits for log space, Bg_close and Bg_stop, and
 * the wait for a thread that outlives its handle.
 *
 * bblog_close=bb. Close plans a last time, makes the log durable on the burst buffer and
 * returns; the thread drains the rest, then fsyncs the PFS file. The logstate outlives the
 * handle until then (the thread holds a reference). Re-opening or deleting the file in this
 * process waits for it (Bg_wait), and so does MPI_Finalize (an attribute on MPI_COMM_SELF whose
 * delete callback runs before MPI shuts down).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
#include "ad_bblog_bg_priv.h"
#include "adioi.h"
#include "bblog_pace.h"

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
    bg->t0_real = ADIOI_BBLOG_Realtime();
    if ((rc = bblog_pace_init(&bg->pace, &par, bg->t0_mono)) != 0)
        goto fail;
    rc = ENOMEM;
    if (!(bg->buf = malloc(seg)) || (bg->verify && !(bg->vbuf = malloc(seg))))
        goto fail;
    if ((rc = bblog_idx_create(&bg->fence)) != 0)
        goto fail;
    bg->pfs_fd = open(st->pfs_path, (bg->verify ? O_RDWR : O_WRONLY) | O_CLOEXEC);
    if (bg->pfs_fd < 0) {
        rc = errno;
        goto fail;
    }
    if ((rc = pthread_cond_init(&bg->cond, NULL)) != 0)
        goto fail;
    ls->bg = bg;
    ls->refs++;                 /* the thread's own reference: it may outlive the handle */
    if ((rc = pthread_create(&bg->thread, NULL, ADIOI_BBLOG_Bg_main, ls)) != 0) {
        ls->bg = NULL;
        ls->refs--;
        pthread_cond_destroy(&bg->cond);
        goto fail;
    }
    if (finalize_keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &finalize_keyval,
                               NULL) == MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL);
    return MPI_SUCCESS;
  fail:
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

/* Lock held on entry and exit. */
void ADIOI_BBLOG_Bg_pause_locked(struct ADIOI_BBLOG_logstate *ls)
{
    __atomic_add_fetch(&ls->bg->paused, 1, __ATOMIC_RELAXED); /* read by a segment in flight */
    while (ls->bg->busy)
        pthread_cond_wait(&ls->bg->cond, &ls->lock);
}

void ADIOI_BBLOG_Bg_resume_locked(struct ADIOI_BBLOG_logstate *ls)
{
    __atomic_sub_fetch(&ls->bg->paused, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&ls->bg->cond);
}

void ADIOI_BBLOG_Bg_pause(struct ADIOI_BBLOG_logstate *ls)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    ADIOI_BBLOG_Bg_pause_locked(ls);
    pthread_mutex_unlock(&ls->lock);
}

void ADIOI_BBLOG_Bg_settle(struct ADIOI_BBLOG_logstate *ls, const struct ADIOI_BBLOG_state *st)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    if (ls->bg->batch && ls->bg->batch_st != st)
        ADIOI_BBLOG_Bg_batch_settle(ls);
    pthread_mutex_unlock(&ls->lock);
}

void ADIOI_BBLOG_Bg_resume(struct ADIOI_BBLOG_logstate *ls, int drained)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    /* Every process paused its thread before the drain's collective calls: no chunk of a
     * batch is in flight, and the drain wrote what the batch had not. */
    ADIOI_BBLOG_Bg_batch_end(ls);
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
    ADIOI_BBLOG_Bg_resume_locked(ls);
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

/* Lock held (application thread). The thread is woken only where this write can change what
 * it does now: it waits with no deadline (idle, or starved for eligible bytes), the write opens
 * an output phase (bytes carried from earlier phases drain at once), or the log passed its
 * high-water mark. A thread in a timed wait (the quiet gap that ends a phase, the next paced
 * segment) finds the later write when it wakes. Waking it at every logged write cost a context
 * switch per write (RATIONALE: bench/results/rationale.md, wake-thread). */
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
    if (bg->idle || bg->starved || bg->pace.nstarted != phases || ADIOI_BBLOG_Bg_pressure(ls)) {
        bg->starved = 0;
        pthread_cond_broadcast(&bg->cond);
    }
}

/* The application ended an output phase (a sync, a close): the pacer opens its drain window now
 * instead of a quiet gap later. */
void ADIOI_BBLOG_Bg_phase_end(struct ADIOI_BBLOG_logstate *ls)
{
    if (!ls || !ls->bg)
        return;
    pthread_mutex_lock(&ls->lock);
    bblog_pace_on_mark(&ls->bg->pace, ADIOI_BBLOG_Now());
    pthread_cond_broadcast(&ls->bg->cond);
    pthread_mutex_unlock(&ls->lock);
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
        ADIOI_BBLOG_Peer_emptied(ls);
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

