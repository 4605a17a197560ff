/*
 * The pacing controller of background drains (bblog_pace.h; seed paper 003, sections III, VI).
 *
 * Invariants between calls:
 * - in_flight => exactly one issued segment has not been reported by bblog_pace_on_drained;
 * - sched_on => !in_phase and mode is proactive; next_due is the earliest issue time of the
 *   next segment of the window, spacing >= 0, and issuing the remaining ceil(pending /
 *   piece) segments every spacing seconds from next_due ends the issues by deadline
 *   (or as early as possible when the window is already gone: spacing 0);
 * - 0 < piece <= segment_size: piece == segment_size outside proactive windows;
 * - carry <= pending, and carry == 0 outside a phase;
 * - t_last is the largest time passed in; every accepted time is >= t_last.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bblog_grow.h"
#include "bblog_pace.h"

static int time_ok(const struct bblog_pace *p, double now)
{
    return isfinite(now) && now >= p->t_last;
}

static uint64_t nsegments(const struct bblog_pace *p, uint64_t bytes)
{
    return bytes / p->piece + (bytes % p->piece != 0);
}

/*
 * Spreads the pending bytes over [t0, deadline) at even spacing. At a window's start (first)
 * the segments go at t0 + (i + stagger) x spacing, i = 0..n-1, with spacing = window / n;
 * later re-plans start from a point of that grid (the next segment's due time), from which
 * n segments take (n - stagger) spacings, so a process on schedule keeps its grid and stays
 * interleaved with the others.
 */
static void plan(struct bblog_pace *p, double t0, int first)
{
    double window = p->deadline - t0, s = p->par.stagger;
    uint64_t n;

    if (first) {
        p->piece = p->par.segment_size;
        if (p->par.min_piece > 0 && window > 0) {
            double want = ceil((double) p->pending / (window * BBLOG_PACE_ISSUES_PER_S));

            if (want < (double) p->piece)
                p->piece = want > (double) p->par.min_piece ? (uint64_t) want : p->par.min_piece;
            if (p->piece > p->par.segment_size)
                p->piece = p->par.segment_size;
            /* whole units of min_piece, as node batches drain them (bblog_pace_units) */
            if (p->piece < p->par.segment_size)
                p->piece -= p->piece % p->par.min_piece;
        }
    }
    n = nsegments(p, p->pending);
    if (n == 0 || window <= 0) {
        p->next_due = t0;
        p->spacing = 0;
    } else if (first) {
        p->spacing = window / (double) n;
        p->next_due = t0 + s * p->spacing;
    } else {
        p->spacing = window / ((double) n - s);
        p->next_due = t0;
    }
}

/* Ends the open phase at t_end and, proactive, opens its drain window. */
static int end_phase(struct bblog_pace *p, double t_end)
{
    int rc;

    p->in_phase = 0;
    p->carry = 0;               /* the window covers everything pending */
    p->cur.end = t_end;
    /* First phase, period learned (interval 0): the application computed from init to the
     * first write and then wrote until the last one; it will do both again before the next
     * phase starts, so the period is init to the last write of this phase, not init to its
     * first write (that would squeeze the first drain into the compute time minus the burst). */
    if (p->nstarted == 1 && p->par.interval <= 0) {
        p->period = p->last_write - p->t_init;
        p->cur.period = p->period;
    }
    /* Seed 003, III: the drain ends before the predicted start of the next phase, here with a
     * margin of the period kept free for jitter and the last segment's own duration. */
    p->deadline = p->cur.start + p->period - p->par.margin * p->period;
    p->cur.deadline = p->deadline;
    if (p->par.mode == BBLOG_PACE_PROACTIVE) {
        p->sched_on = 1;
        plan(p, t_end, 1);
    }
    rc = bblog_grow((void **) &p->phase, &p->phase_cap, p->nphase + 1, sizeof(*p->phase));
    if (rc == 0)
        p->phase[p->nphase++] = p->cur;
    return rc;
}

/* A phase whose quiet gap has passed by now ended when the gap passed, not when we noticed. */
static int settle(struct bblog_pace *p, double now)
{
    if (p->in_phase && now >= p->last_write + p->par.quiet_gap)
        return end_phase(p, p->last_write + p->par.quiet_gap);
    return 0;
}

int bblog_pace_init(struct bblog_pace *p, const struct bblog_pace_params *params, double now)
{
    const struct bblog_pace_params *q = params;

    if (q == NULL || (q->mode != BBLOG_PACE_REACTIVE && q->mode != BBLOG_PACE_PROACTIVE) ||
        q->segment_size == 0 || !isfinite(q->interval) || q->interval < 0 ||
        !isfinite(q->max_rate) || q->max_rate < 0 || !isfinite(q->margin) || q->margin < 0 ||
        q->margin >= 1 || !isfinite(q->quiet_gap) || q->quiet_gap <= 0 || !isfinite(now) ||
        !isfinite(q->stagger) || q->stagger < 0 || q->stagger >= 1)
        return EINVAL;
    memset(p, 0, sizeof(*p));
    p->par = *q;
    p->piece = q->segment_size;
    p->t_init = now;
    p->t_last = now;
    p->rate_next = now;
    return 0;
}

void bblog_pace_free(struct bblog_pace *p)
{
    free(p->seg);
    free(p->phase);
    p->seg = NULL;
    p->phase = NULL;
    p->nseg = p->seg_cap = p->nphase = p->phase_cap = 0;
}

int bblog_pace_on_write(struct bblog_pace *p, double now, uint64_t bytes)
{
    int rc;

    if (!time_ok(p, now))
        return EINVAL;
    p->t_last = now;
    rc = settle(p, now);
    if (!p->in_phase) {
        /* Seed 003, VI: the period is re-learned at every phase start, so a period that
         * changes is followed one phase later. The first one comes from the hint, or from the
         * time between init (the open) and the first dump (section III). */
        if (p->nstarted > 0)
            p->period = now - p->cur.start;
        else
            p->period = p->par.interval > 0 ? p->par.interval : now - p->t_init;
        p->in_phase = 1;
        p->nstarted++;
        p->sched_on = 0;
        p->piece = p->par.segment_size;
        p->cur.start = now;
        p->cur.end = -1;
        p->cur.bytes = 0;
        p->cur.carried = p->pending;
        p->carry = p->pending;
        p->cur.period = p->period;
        p->cur.deadline = 0;
    }
    p->last_write = now;
    p->cur.bytes += bytes;
    p->pending = bytes > UINT64_MAX - p->pending ? UINT64_MAX : p->pending + bytes;
    return rc;
}

int bblog_pace_on_mark(struct bblog_pace *p, double now)
{
    int rc;

    if (!time_ok(p, now))
        return EINVAL;
    p->t_last = now;
    rc = settle(p, now);
    if (p->in_phase)
        rc = end_phase(p, now);
    return rc;
}

int bblog_pace_next(struct bblog_pace *p, double now, struct bblog_pace_action *act)
{
    double due;
    int rc;

    if (!time_ok(p, now))
        return EINVAL;
    p->t_last = now;
    rc = settle(p, now);
    act->bytes = 0;
    act->wake = INFINITY;
    if (p->in_flight)
        return rc;
    if (p->par.mode == BBLOG_PACE_PROACTIVE) {
        /* The open phase's bytes wait for its end (seed 003, III: the drain runs in the
         * compute phase); bytes carried from before it go now, back to back. */
        if (p->in_phase && (p->carry == 0 || p->pending == 0)) {
            act->wake = p->last_write + p->par.quiet_gap;
            return rc;
        }
        if (p->in_phase)
            due = p->rate_next;
        else if (!p->sched_on || p->pending == 0)
            return rc;
        else
            due = p->next_due > p->rate_next ? p->next_due : p->rate_next;
    } else {
        if (p->pending == 0)
            return rc;
        /* While the phase is open, whole segments only: issued at each write, the drain
         * chased the writer with the few KiB logged since the last one (IOR 4 KiB at 1 rank:
         * 711 PFS writes of 4 KiB median for 16 MiB, each a round trip on the stand-in). */
        if (p->in_phase && p->pending < p->piece) {
            act->wake = p->last_write + p->par.quiet_gap;
            return rc;
        }
        due = p->rate_next;
    }
    if (now < due) {
        act->wake = due;
        return rc;
    }
    act->bytes = p->pending < p->piece ? p->pending : p->piece;
    if (p->par.mode == BBLOG_PACE_PROACTIVE && p->in_phase && act->bytes > p->carry)
        act->bytes = p->carry;      /* > 0: checked above */
    p->in_flight = 1;
    p->flight_start = now;
    if (p->par.max_rate > 0)
        p->rate_next = now + (double) act->bytes / p->par.max_rate;
    /* The nominal time of the following segment; re-planned when this one is reported. */
    if (p->sched_on)
        p->next_due += p->spacing;
    return rc;
}

int bblog_pace_on_drained(struct bblog_pace *p, double now, uint64_t bytes)
{
    struct bblog_pace_segment s;
    int rc;

    if (!p->in_flight || !time_ok(p, now))
        return EINVAL;
    p->t_last = now;
    p->in_flight = 0;
    p->pending -= bytes < p->pending ? bytes : p->pending;
    if (p->in_phase)
        p->carry -= bytes < p->carry ? bytes : p->carry;
    /* A segment that overran its slot, or drained another amount than asked, leaves the rest
     * of the window to re-spread from now: the deadline holds whenever that is still possible. */
    if (p->sched_on)
        plan(p, now > p->next_due ? now : p->next_due, 0);
    s.start = p->flight_start;
    s.duration = now - p->flight_start;
    s.bytes = bytes;
    rc = bblog_grow((void **) &p->seg, &p->seg_cap, p->nseg + 1, sizeof(*p->seg));
    if (rc == 0)
        p->seg[p->nseg++] = s;
    return rc;
}

int bblog_pace_set_pending(struct bblog_pace *p, double now, uint64_t bytes)
{
    if (!time_ok(p, now))
        return EINVAL;
    p->t_last = now;
    p->pending = bytes;
    if (p->carry > bytes)
        p->carry = bytes;
    if (p->sched_on && !p->in_flight)
        plan(p, now > p->next_due ? now : p->next_due, 0);
    return settle(p, now);
}

void bblog_pace_get_status(const struct bblog_pace *p, struct bblog_pace_status *st)
{
    st->in_phase = p->in_phase;
    st->in_flight = p->in_flight;
    st->pending = p->pending;
    st->period = p->period;
    st->deadline = p->sched_on ? p->deadline : 0;
    st->spacing = p->sched_on ? p->spacing : 0;
    st->piece = p->piece;
    st->nphases = p->nphase;
    st->nsegments = p->nseg;
}

const struct bblog_pace_segment *bblog_pace_segments(const struct bblog_pace *p, size_t *n)
{
    *n = p->nseg;
    return p->seg;
}

const struct bblog_pace_phase *bblog_pace_phases(const struct bblog_pace *p, size_t *n)
{
    *n = p->nphase;
    return p->phase;
}
