/*
 * The pacing controller of background drains (DESIGN.md section 6; seed paper 003, sections
 * III and VI). Plain C, no MPI, no threads, no clock: every call takes the current time `now`
 * in seconds (any monotonic clock, the caller's), so the controller is a pure state machine of
 * (bytes, times, history) and is tested with a fake clock. The caller serialises the calls
 * (the driver holds its drain lock around them). Returns are 0 or a positive errno.
 *
 * The application alternates compute and I/O phases. A phase starts at the first write after
 * the previous phase ended; it ends when no write came for params.quiet_gap seconds, or at an
 * explicit mark (bblog_pace_on_mark: MPI_File_sync, close, re-open of the file).
 *
 * proactive (seed 003, III): when a phase ends, all undrained bytes (its own and those left over
 * from earlier phases) are cut into segments of params.segment_size and issued at even
 * intervals over the window [phase end, deadline), deadline = predicted start of the next phase
 * minus params.margin x the predicted period; a segment that takes no longer than the spacing
 * therefore ends before the deadline. The prediction is the start of this phase plus the
 * previous interval between phase starts (seed 003, VI: no prior knowledge of the period, and
 * it follows a period that changes). For the first phase it is params.interval, or, when that
 * is 0, the time from bblog_pace_init to the last write of the first phase: seed 003, III takes
 * "the time difference between the start of application and the start of data dump", which is
 * the compute time alone; the next phase starts after the compute time plus the dump itself,
 * and a window that leaves the dump out drains the first phase faster than the later ones
 * (measured: 1.4x the steady rate with 1.2-s dumps every 6.2 s). The bytes of an open phase
 * are not drained while it is open. A phase that starts before the drain of the earlier ones
 * ended finds bytes left (carried): there is no computation left to hide them behind, so they
 * are issued at once, one whole segment after another, while the phase is open (the
 * application writes to the burst buffer then, the PFS is idle); what is still pending when
 * the phase ends joins that phase's window.
 *
 * reactive: undrained bytes are drained at once, one segment after another, phases or not;
 * while a phase is open a segment waits until a whole one (segment_size) is pending, and
 * what is left goes when the phase ends.
 *
 * params.stagger delays a window's first segment by that fraction of the spacing (the others
 * follow at the same spacing, so the last still ends by the deadline): the processes of a job
 * plan the same windows, and without it they would all issue their segments at once, a burst
 * of P segments every spacing instead of one segment every spacing / P.
 *
 * params.min_piece: with whole segments a window of a few seconds holds a few segments, and the
 * PFS takes a whole segment in some seconds and nothing in others; a window then cuts its bytes
 * into pieces of pending / (window x BBLOG_PACE_ISSUES_PER_S), at least min_piece and at most
 * segment_size, fixed for the window; a piece under segment_size is a whole number of
 * min_piece units (rounded down), which a drain in units of min_piece takes exactly.
 *
 * params.max_rate (bytes/s, both modes) caps the rate: a segment of b bytes issued at t delays
 * the next issue to t + b / max_rate at least, even if that misses the deadline.
 */
#ifndef BBLOG_PACE_H
#define BBLOG_PACE_H

#include <stddef.h>
#include <stdint.h>

enum bblog_pace_mode {
    BBLOG_PACE_REACTIVE = 1,  /* drain as fast as possible */
    BBLOG_PACE_PROACTIVE = 2, /* seed 003: spread each phase over the predicted interval */
};

struct bblog_pace_params {
    enum bblog_pace_mode mode;
    uint64_t segment_size; /* bytes of one segment, > 0 */
    double interval;       /* first predicted period between phase starts, s; 0: learn it */
    double max_rate;       /* bytes/s, 0: no cap */
    double margin;         /* fraction of the predicted period kept free before it, [0, 1) */
    double quiet_gap;      /* s without a write that end a phase, > 0 */
    double stagger;        /* [0, 1): the first segment of a window is issued this fraction of
                            * the spacing after the phase end; process r of P passes r / P, so
                            * that P processes' segments interleave instead of coinciding */
    uint64_t min_piece;    /* proactive, > 0: a window's segments shrink, down to this many
                            * bytes, until about BBLOG_PACE_ISSUES_PER_S go per second; 0: whole
                            * segments */
};

/* Proactive windows with min_piece > 0 issue at least about this many segments a second (more
 * when min_piece or the segment size needs it): any second of a window then takes at most one
 * piece more than the mean, 1/8 above it, where whole segments, a few per window, make seconds
 * with one segment more than the mean (up to twice the mean). */
#define BBLOG_PACE_ISSUES_PER_S 8

/* One drained segment, for the stats time series: issued at start, reported done after
 * duration, bytes as reported by the caller. */
struct bblog_pace_segment {
    double start;
    double duration;
    uint64_t bytes;
};

/* One I/O phase (bblog_pace_phases lists the ended ones). */
struct bblog_pace_phase {
    double start;
    double end;
    uint64_t bytes;        /* bytes written during the phase (bblog_pace_on_write) */
    uint64_t carried;      /* undrained bytes when it started: > 0 means the drain was late */
    double period;         /* the predicted period in force for this phase */
    double deadline;       /* end of its drain window (set when the phase ends) */
};

/* What to do now: drain `bytes` (> 0, at most one segment) and report with
 * bblog_pace_on_drained; or, with bytes == 0, call bblog_pace_next again at time `wake`
 * (INFINITY: only after the next bblog_pace_on_write, _on_mark, _on_drained or _set_pending). */
struct bblog_pace_action {
    uint64_t bytes;
    double wake;
};

/* A snapshot of the state, for the driver's stats and for tests. */
struct bblog_pace_status {
    int in_phase;          /* a phase is open */
    int in_flight;         /* a segment was issued and not yet reported */
    uint64_t pending;      /* undrained bytes known to the controller */
    double period;         /* predicted period between phase starts (0 before the first) */
    double deadline;       /* end of the current drain window (proactive; 0 if none) */
    double spacing;        /* interval between segment issues in it (0: back to back) */
    uint64_t piece;        /* bytes of one issue (segment_size, or less in a proactive window) */
    size_t nphases;
    size_t nsegments;
};

/* The state. Embedded by the caller; its fields are private: use the functions. */
struct bblog_pace {
    struct bblog_pace_params par;
    double t_init;
    double t_last;             /* latest time passed in: times never go back */
    int in_phase;
    uint64_t nstarted;         /* phases started so far */
    struct bblog_pace_phase cur; /* the open phase, or the last one */
    double last_write;         /* time of the latest write of the open phase */
    double period;
    uint64_t pending;
    /* Drain window of the last phase that ended (proactive); sched_on is 0 while a phase is
     * open. The next segment is due at next_due, the following ones every spacing seconds;
     * the spacing is re-planned after each segment so that the rest still ends by deadline. */
    int sched_on;
    double next_due, deadline, spacing;
    uint64_t piece;            /* bytes of one issue: segment_size, or the window's piece */
    double rate_next;          /* max_rate: no issue before this time */
    uint64_t carry;            /* proactive, in a phase: carried bytes not yet issued */
    int in_flight;
    double flight_start;
    struct bblog_pace_segment *seg;
    size_t nseg, seg_cap;
    struct bblog_pace_phase *phase;
    size_t nphase, phase_cap;
};

/* Validates params (EINVAL naming nothing: the caller knows which hint it parsed) and starts
 * the controller at time now, with nothing pending. */
int bblog_pace_init(struct bblog_pace *p, const struct bblog_pace_params *params, double now);
void bblog_pace_free(struct bblog_pace *p);

/* bytes more undrained data were logged at now (the growth of the caller's undrained total,
 * so an overwrite of undrained bytes adds less than its length). Opens a phase if none is open.
 *
 * For every function taking now: EINVAL if now is not finite or earlier than a time passed
 * before (nothing changes then). ENOMEM: a phase or segment record could not be stored; the
 * state (and *act) are still valid and complete, only the stats lose that record. */
int bblog_pace_on_write(struct bblog_pace *p, double now, uint64_t bytes);

/* Explicit end of the open phase (MPI_File_sync, close, re-open). No effect without one. */
int bblog_pace_on_mark(struct bblog_pace *p, double now);

/* What to do at now (see struct bblog_pace_action). Issuing a segment marks it in flight; no
 * other segment is issued until bblog_pace_on_drained. */
int bblog_pace_next(struct bblog_pace *p, double now, struct bblog_pace_action *act);

/* The segment in flight ended at now after draining bytes (may differ from what was asked:
 * extents are not cut at arbitrary bytes, and overwritten data may be gone). EINVAL if no
 * segment is in flight. ENOMEM: the segment was accounted but not recorded. */
int bblog_pace_on_drained(struct bblog_pace *p, double now, uint64_t bytes);

/* How many units of UNIT bytes (> 0) a drain that moves whole units takes for a segment of
 * BYTES: enough to cover it, at least one. Fewer (BYTES / UNIT rounded down) would drain less
 * than the window's piece at every issue; the re-plan after each then shortens the spacing, and
 * the window's last second drains several times its mean rate. */
static inline uint64_t bblog_pace_units(uint64_t bytes, uint64_t unit)
{
    return bytes > unit ? (bytes + unit - 1) / unit : 1;
}

/* The caller's own count of undrained bytes, after anything the controller did not issue: a
 * collective drain (sync, close, a full burst buffer), or overwrites that shrank the data. */
int bblog_pace_set_pending(struct bblog_pace *p, double now, uint64_t bytes);

void bblog_pace_get_status(const struct bblog_pace *p, struct bblog_pace_status *st);

/* The time of the latest bblog_pace_on_write (0 before the first). */
static inline double bblog_pace_last_write(const struct bblog_pace *p)
{
    return p->last_write;
}

/* The recorded segments and phases, oldest first; valid until the next call on p. */
const struct bblog_pace_segment *bblog_pace_segments(const struct bblog_pace *p, size_t *n);
const struct bblog_pace_phase *bblog_pace_phases(const struct bblog_pace *p, size_t *n);

#endif
