/*
 * The pacing controller (pace/pace.c, seed 003 sections III and VI) under a fake clock.
 *
 * A small event simulator plays the driver's part: it feeds writes and marks at given times,
 * asks bblog_pace_next what to do, "drains" each issued segment at a fixed PFS rate (its
 * duration is bytes / rate; rate 0: instantly) and reports it, and jumps the clock to the next
 * event, wake-up or segment end. No sleeps, no wall clock: every time is computed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bblog_pace.h"

#define MiB  (1024.0 * 1024.0)
#define EPS  1e-9
#define MAXE 4096

/* A write of bytes at t, or (mark) an explicit phase end. */
struct ev {
    double t;
    uint64_t bytes;
    int mark;
};

struct script {
    struct ev e[MAXE];
    size_t n;
    size_t next; /* the first event not yet played */
};

static void add_write(struct script *s, double t, uint64_t bytes)
{
    assert_true(s->n < MAXE);
    s->e[s->n++] = (struct ev){t, bytes, 0};
}

static void add_mark(struct script *s, double t)
{
    assert_true(s->n < MAXE);
    s->e[s->n++] = (struct ev){t, 0, 1};
}

/* A checkpoint at t0: nw writes of bytes/nw each, every dt seconds, then a mark if asked. */
static void add_burst(struct script *s, double t0, uint64_t bytes, int nw, double dt, int mark)
{
    for (int i = 0; i < nw; i++)
        add_write(s, t0 + i * dt, bytes / nw + (i == nw - 1 ? bytes % nw : 0));
    if (mark)
        add_mark(s, t0 + nw * dt);
}

/* How much a drain that moves whole units of unit bytes takes for a segment of bytes. */
typedef uint64_t (*take_fn)(uint64_t bytes, uint64_t unit);

/* Runs the script from the controller's current time to `until` with the PFS draining at
 * rate bytes/s (0: instantly). Events (in time order) are applied before the controller is
 * asked at the same instant; a segment that ends at an event's time is reported first. With
 * take, each segment drains take(bytes, unit) units of unit bytes (at most what is pending)
 * instead of the bytes asked, as the node batches' chunks do (ad_bblog_bg.c). */
static void run_units(struct bblog_pace *p, struct script *s, double rate, double until,
                      take_fn take, uint64_t unit)
{
    double t = p->t_last, done_at = INFINITY;
    uint64_t flight = 0;
    size_t i = s->next;

    while (i < s->n && s->e[i].t <= t) {
        if (s->e[i].mark)
            assert_int_equal(bblog_pace_on_mark(p, t), 0);
        else
            assert_int_equal(bblog_pace_on_write(p, t, s->e[i].bytes), 0);
        i++;
    }
    for (;;) {
        struct bblog_pace_action a = {0, INFINITY};
        double tn;

        if (flight == 0) {
            assert_int_equal(bblog_pace_next(p, t, &a), 0);
            if (a.bytes > 0) {
                assert_true(a.bytes <= p->par.segment_size);
                flight = a.bytes;
                if (take) {
                    flight = take(a.bytes, unit) * unit;
                    flight = flight < p->pending ? flight : p->pending;
                }
                done_at = t + (rate > 0 ? (double) a.bytes / rate : 0);
                if (done_at <= t) {
                    assert_int_equal(bblog_pace_on_drained(p, t, flight), 0);
                    flight = 0;
                    continue;
                }
            } else {
                assert_true(a.wake > t);
            }
        }
        tn = flight ? done_at : a.wake;
        if (i < s->n && s->e[i].t < tn)
            tn = s->e[i].t;
        if (tn > until)
            break;
        t = tn;
        if (flight && done_at <= t) {
            assert_int_equal(bblog_pace_on_drained(p, t, flight), 0);
            flight = 0;
        }
        while (i < s->n && s->e[i].t <= t) {
            if (s->e[i].mark)
                assert_int_equal(bblog_pace_on_mark(p, t), 0);
            else
                assert_int_equal(bblog_pace_on_write(p, t, s->e[i].bytes), 0);
            i++;
        }
    }
    assert_int_equal(flight, 0);
    s->next = i;
}

static void run(struct bblog_pace *p, struct script *s, double rate, double until)
{
    run_units(p, s, rate, until, NULL, 0);
}

static struct bblog_pace_params proactive(void)
{
    struct bblog_pace_params q = {
        .mode = BBLOG_PACE_PROACTIVE,
        .segment_size = 1 << 20,
        .interval = 10,
        .max_rate = 0,
        .margin = 0.1,
        .quiet_gap = 0.5,
    };
    return q;
}

static uint64_t sum_bytes(const struct bblog_pace *p)
{
    size_t n;
    const struct bblog_pace_segment *sg = bblog_pace_segments(p, &n);
    uint64_t sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += sg[i].bytes;
    return sum;
}

/* Segments whose start lies in [a, b). */
static size_t count_in(const struct bblog_pace *p, double a, double b)
{
    size_t n, c = 0;
    const struct bblog_pace_segment *sg = bblog_pace_segments(p, &n);

    for (size_t i = 0; i < n; i++)
        c += sg[i].start >= a && sg[i].start < b;
    return c;
}

static void test_params(void **state)
{
    struct bblog_pace p;
    struct bblog_pace_params q;
    (void) state;

    q = proactive();
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    bblog_pace_free(&p);
    assert_int_equal(bblog_pace_init(&p, NULL, 0), EINVAL);
    q = proactive(), q.mode = 0;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive(), q.segment_size = 0;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive(), q.interval = -1;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive(), q.interval = NAN;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive(), q.max_rate = -1;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive(), q.max_rate = INFINITY;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive(), q.margin = 1;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive(), q.margin = -0.1;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive(), q.quiet_gap = 0;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q = proactive();
    assert_int_equal(bblog_pace_init(&p, &q, NAN), EINVAL);
}

/* Times never go back; a report without a segment in flight is refused; both leave the state
 * as it was. */
static void test_bad_calls(void **state)
{
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    struct bblog_pace_action a;
    struct bblog_pace_status st;
    (void) state;

    assert_int_equal(bblog_pace_init(&p, &q, 5), 0);
    assert_int_equal(bblog_pace_on_write(&p, 4, 100), EINVAL);
    assert_int_equal(bblog_pace_on_write(&p, 6, 100), 0);
    assert_int_equal(bblog_pace_next(&p, 5.5, &a), EINVAL);
    assert_int_equal(bblog_pace_on_mark(&p, INFINITY), EINVAL);
    assert_int_equal(bblog_pace_on_drained(&p, 7, 100), EINVAL);
    bblog_pace_get_status(&p, &st);
    assert_int_equal(st.pending, 100);
    assert_true(st.in_phase);
    bblog_pace_free(&p);
}

/*
 * One phase of 8 MiB ended by a mark at 0.1 s, predicted period 10 s, margin 10%: 8 segments
 * of 1 MiB, the first at the mark, then evenly every (9 - 0.1) / 8 s, the last one ending
 * before 9 s; none while the application writes.
 */
static void test_segments_spacing(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    const struct bblog_pace_segment *sg;
    size_t n;
    double h = (9.0 - 0.1) / 8;
    (void) state;

    s.n = s.next = 0;
    add_burst(&s, 0, 8 << 20, 10, 0.01, 1);
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 100 * MiB, 30);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(sg[i].bytes, 1 << 20);
        assert_true(fabs(sg[i].start - (0.1 + i * h)) < EPS);
        assert_true(fabs(sg[i].duration - 0.01) < EPS);
    }
    assert_true(sg[n - 1].start + sg[n - 1].duration <= 9.0);
    assert_int_equal(count_in(&p, 0, 0.1), 0);
    bblog_pace_free(&p);
}

/* Stagger: process 3 of 4 (stagger 0.75) issues the same 8 segments 0.75 spacing later than
 * process 0 would, still one spacing apart and still ending before 9 s; together the four
 * processes issue one segment every spacing / 4 instead of four at once. */
static void test_stagger(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    const struct bblog_pace_segment *sg;
    size_t n;
    double h = (9.0 - 0.1) / 8;
    (void) state;

    s.n = s.next = 0;
    add_burst(&s, 0, 8 << 20, 10, 0.01, 1);
    q.stagger = 0.75;
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 100 * MiB, 30);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(sg[i].start - (0.1 + (i + 0.75) * h)) < EPS);
    assert_true(sg[n - 1].start + sg[n - 1].duration <= 9.0);
    bblog_pace_free(&p);
    q.stagger = 1;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
    q.stagger = -0.5;
    assert_int_equal(bblog_pace_init(&p, &q, 0), EINVAL);
}

/* Largest number of bytes whose segments start in any window [a, a + 1 s), a on a 10-ms grid
 * over [0, until). */
static uint64_t peak_1s(const struct bblog_pace *p, double until)
{
    size_t n;
    const struct bblog_pace_segment *sg = bblog_pace_segments(p, &n);
    uint64_t best = 0;

    for (double a = 0; a < until; a += 0.01) {
        uint64_t b = 0;

        for (size_t i = 0; i < n; i++)
            b += sg[i].start >= a && sg[i].start < a + 1 ? sg[i].bytes : 0;
        best = b > best ? b : best;
    }
    return best;
}

/*
 * min_piece: 10 MiB over the window [0.1, 9) in whole 1-MiB segments, one every 0.89 s, put two
 * segments in some seconds, 1.8x the mean of 1.12 MiB/s. Cut into pieces of 1/8 s of the
 * window's rate (147 KB), raised to min_piece (256 KiB), 40 of them, no second takes more than 5
 * (1.25 MiB, 1.11x), and the last still ends by 9 s. A window that needs more than a segment
 * every 1/8 s keeps whole segments; one in between gets pieces of pending / (window x 8),
 * rounded down to whole units of min_piece.
 */
static void test_pieces(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    struct bblog_pace_status st;
    const struct bblog_pace_segment *sg;
    size_t n;
    (void) state;

    s.n = s.next = 0;
    add_burst(&s, 0, 10 << 20, 10, 0.01, 1);
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 100 * MiB, 30);
    assert_int_equal(peak_1s(&p, 10), 2 << 20);
    bblog_pace_free(&p);

    q.min_piece = 256 << 10;
    s.next = 0;
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 100 * MiB, 30);
    bblog_pace_get_status(&p, &st); /* the last window's piece */
    assert_int_equal(st.piece, 256 << 10);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 40);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(sg[i].bytes, 256 << 10);
        assert_true(fabs(sg[i].start - (0.1 + i * 8.9 / 40)) < EPS);
    }
    assert_true(sg[n - 1].start + sg[n - 1].duration <= 9.0);
    assert_true(peak_1s(&p, 10) <= 5 * (256 << 10));
    bblog_pace_free(&p);

    /* 128 MiB in 8.9 s needs 1.9 MB every 1/8 s: whole 1-MiB segments. */
    s.n = s.next = 0;
    add_burst(&s, 0, 128 << 20, 10, 0.01, 1);
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 1000 * MiB, 30);
    bblog_pace_get_status(&p, &st);
    assert_int_equal(st.piece, 1 << 20);
    bblog_pace_free(&p);

    /* 64 MiB with 4-MiB segments: pieces of ceil(64 MiB / (8.9 x 8)), 920 KiB, rounded down
     * to whole units of min_piece: 768 KiB. */
    q.segment_size = 4 << 20;
    s.n = s.next = 0;
    add_burst(&s, 0, 64 << 20, 10, 0.01, 1);
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 1000 * MiB, 30);
    bblog_pace_get_status(&p, &st);
    assert_int_equal(st.piece, 3 * (256 << 10));
    assert_int_equal(sum_bytes(&p), 64 << 20);
    sg = bblog_pace_segments(&p, &n);
    assert_true(sg[n - 1].start + sg[n - 1].duration <= 9.0);
    bblog_pace_free(&p);
}

/*
 * A drain in whole units (node batches: chunks of min_piece, 256 KiB) under the pacing
 * benchmark's checkpoint, 16 MiB after a period of 5 s: the window's piece would be about
 * 470 KiB; it is 256 KiB, a whole unit, so each issue drains what was planned, every second
 * stays under 1.25x the window's mean rate and the last issue ends by the deadline. (Pieces of
 * 470 KiB drained as one chunk each drained half the plan at every issue, the re-plans shortened
 * the spacing, and the benchmark saw 1.9x its planned rate; as two chunks, 1.26x.)
 */
static void test_whole_units(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    struct bblog_pace_status st;
    const struct bblog_pace_segment *sg;
    size_t n;
    double mean;
    (void) state;

    q.interval = 5;
    q.segment_size = 4 << 20;
    q.min_piece = 256 << 10;
    s.n = s.next = 0;
    add_burst(&s, 0, 16 << 20, 16, 0.005, 1);
    mean = (double) (16 << 20) / (0.9 * 5 - 0.08);     /* the window: mark to deadline */

    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run_units(&p, &s, 400 * MiB, 10, bblog_pace_units, q.min_piece);
    bblog_pace_get_status(&p, &st);
    assert_int_equal(st.piece, q.min_piece);
    assert_int_equal(sum_bytes(&p), 16 << 20);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 64);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sg[i].bytes, q.min_piece);
    assert_true(sg[n - 1].start + sg[n - 1].duration <= 4.5);
    assert_true((double) peak_1s(&p, 10) <= 1.25 * mean);
    bblog_pace_free(&p);

    assert_int_equal(bblog_pace_units(1, 256), 1);
    assert_int_equal(bblog_pace_units(256, 256), 1);
    assert_int_equal(bblog_pace_units(257, 256), 2);
    assert_int_equal(bblog_pace_units(4 << 20, 256 << 10), 16);
}

/* Without a mark the phase ends a quiet gap after its last write: the schedule starts there,
 * and bytes that do not fill the last segment make a short one. */
static void test_quiet_gap(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    const struct bblog_pace_segment *sg;
    const struct bblog_pace_phase *ph;
    size_t n, np;
    uint64_t total = (5 << 20) + 12345;
    (void) state;

    s.n = s.next = 0;
    add_burst(&s, 1, total, 50, 0.02, 0); /* last write at 1.98 */
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 0, 30);
    ph = bblog_pace_phases(&p, &np);
    assert_int_equal(np, 1);
    assert_true(fabs(ph[0].start - 1) < EPS);
    assert_true(fabs(ph[0].end - 2.48) < EPS);
    assert_int_equal(ph[0].bytes, total);
    assert_int_equal(ph[0].carried, 0);
    assert_true(fabs(ph[0].deadline - 10) < EPS); /* 1 + 10 - 0.1 * 10 */
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 6);
    assert_true(fabs(sg[0].start - 2.48) < EPS);
    assert_int_equal(sg[5].bytes, 12345);
    assert_int_equal(sum_bytes(&p), total);
    for (size_t i = 1; i < n; i++)
        assert_true(fabs(sg[i].start - sg[i - 1].start - (10 - 2.48) / 6) < EPS);
    bblog_pace_free(&p);
}

/* Periodic checkpoints every 10 s with a real drain time per segment (0.25 s): every phase is
 * drained before the next starts (nothing carried), no segment overlaps a write phase, and the
 * segments of each phase spread over its window instead of running back to back. */
static void test_finish_before_next(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    const struct bblog_pace_segment *sg;
    const struct bblog_pace_phase *ph;
    size_t n, np;
    uint64_t burst = (24 << 20) + 4096;
    (void) state;

    s.n = s.next = 0;
    for (int k = 0; k < 6; k++)
        add_burst(&s, 10.0 * k, burst, 100, 0.005, 1);
    q.interval = 10;
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 4 * MiB, 70);
    ph = bblog_pace_phases(&p, &np);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(np, 6);
    assert_int_equal(sum_bytes(&p), 6 * burst);
    for (size_t k = 0; k < np; k++) {
        assert_int_equal(ph[k].carried, 0);
        assert_true(fabs(ph[k].period - 10) < EPS);
        assert_int_equal(count_in(&p, ph[k].start, ph[k].end), 0);
        assert_int_equal(count_in(&p, ph[k].end, ph[k].start + 10), 25);
    }
    for (size_t i = 0; i < n; i++) {
        double start = floor(sg[i].start / 10) * 10;

        assert_true(sg[i].start + sg[i].duration <= start + 9.0 + EPS);
        /* Even spacing: never two segments back to back. */
        if (i > 0 && sg[i].start < start + 10 && sg[i - 1].start >= start)
            assert_true(sg[i].start - sg[i - 1].start > 0.3);
    }
    bblog_pace_free(&p);
}

/* Seed 003, VI: the period is learned at every phase start. Checkpoints every 10 s, then every
 * 20 s, then every 4 s: one phase after each change the prediction follows, and the drain
 * window stretches or shrinks with it. With interval 0 the first period is the time from init
 * to the last write of the first checkpoint (7 s of compute, then writes until 7.09). */
static void test_adapt(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    const struct bblog_pace_phase *ph;
    size_t np;
    double starts[] = {7, 17, 27, 37, 57, 77, 97, 101, 105, 109};
    double want[] = {7.09, 10, 10, 10, 20, 20, 20, 4, 4, 4};
    size_t nst = sizeof(starts) / sizeof(starts[0]);
    (void) state;

    s.n = s.next = 0;
    for (size_t k = 0; k < nst; k++)
        add_burst(&s, starts[k], 4 << 20, 10, 0.01, 1);
    q.interval = 0;
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 100 * MiB, 120);
    ph = bblog_pace_phases(&p, &np);
    assert_int_equal(np, nst);
    for (size_t k = 0; k < np; k++) {
        assert_true(fabs(ph[k].period - want[k]) < EPS);
        assert_true(fabs(ph[k].deadline - (starts[k] + 0.9 * want[k])) < EPS);
    }
    /* The phase at 37 still expects 10 s: its 4 segments end by 46. The phase at 57 expects
     * 20 s and spreads them over [57.1, 75). The phase at 97 expects 20 s too, but the next
     * comes at 101: 3 of its 4 MiB are carried, and go at once when it starts; its own 4 MiB
     * get the window [101.1, 104.6). */
    assert_int_equal(count_in(&p, 37, 46), 4);
    assert_int_equal(count_in(&p, 46, 57), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(count_in(&p, 57.1 + i * 4.475 - EPS, 57.1 + i * 4.475 + EPS), 1);
    assert_int_equal(count_in(&p, 97, 101), 1);
    assert_int_equal(count_in(&p, 101, 101.1), 3); /* back to back, 0.01 s each */
    assert_int_equal(count_in(&p, 101.1, 104.6), 4);
    for (size_t k = 0; k < np; k++)
        assert_int_equal(ph[k].carried, k == 7 ? 3 << 20 : 0);
    bblog_pace_free(&p);
}

/* bblog_drain_max_rate: segment issues are at least bytes / max_rate apart, even when that
 * misses the deadline; over any window of w seconds at most w * max_rate + one segment goes. */
static void test_max_rate(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    const struct bblog_pace_segment *sg;
    size_t n;
    (void) state;

    s.n = s.next = 0;
    add_burst(&s, 0, 8 << 20, 8, 0.01, 1);
    q.max_rate = 0.5 * MiB; /* 16 s for 8 MiB: past the 9 s deadline */
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 100 * MiB, 60);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 8);
    for (size_t i = 1; i < n; i++)
        assert_true(fabs(sg[i].start - sg[i - 1].start - 2.0) < EPS);
    for (double a = 0; a < 20; a += 0.25) {
        uint64_t b = 0;

        for (size_t i = 0; i < n; i++)
            b += sg[i].start >= a && sg[i].start < a + 4 ? sg[i].bytes : 0;
        assert_true(b <= 4 * q.max_rate + q.segment_size);
    }
    bblog_pace_free(&p);

    /* A cap looser than the schedule changes nothing. */
    q.max_rate = 100 * MiB;
    s.next = 0;
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 100 * MiB, 60);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 8);
    assert_true(fabs(sg[7].start - (0.08 + 7 * (9.0 - 0.08) / 8)) < EPS);
    bblog_pace_free(&p);
}

/* A phase that starts before the drain ended: the rest of the previous phase drains at once
 * (nothing is left to hide it behind), its own bytes wait for its end and then get its
 * window; the phase records what it carried, and the new period (4 s) is learned. */
static void test_early_phase(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    const struct bblog_pace_phase *ph;
    const struct bblog_pace_segment *sg;
    struct bblog_pace_status st;
    size_t np, n, before;
    (void) state;

    s.n = s.next = 0;
    add_burst(&s, 0, 8 << 20, 8, 0.01, 1);   /* mark at 0.08, segments every 1.115 s */
    add_burst(&s, 4, 3 << 20, 30, 0.01, 1);  /* at 4 s, while 4 segments are left */
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 0, 3.99);
    before = count_in(&p, 0, 4);
    assert_int_equal(before, 4);
    /* The carried 4 MiB go at once when the phase starts, back to back, while it is open;
     * its own bytes wait for its end. */
    run(&p, &s, 0, 4.25);
    bblog_pace_get_status(&p, &st);
    assert_int_equal(st.nsegments, 8);
    assert_int_equal(count_in(&p, 4, 4.001), 4);
    assert_true(st.in_phase);
    assert_true(fabs(st.period - 4) < EPS);
    assert_true(st.pending > 0 && st.pending < 3 << 20); /* only its own bytes so far */
    run(&p, &s, 0, 30);
    ph = bblog_pace_phases(&p, &np);
    assert_int_equal(np, 2);
    assert_int_equal(ph[1].carried, 4 << 20);
    assert_true(fabs(ph[1].end - 4.3) < EPS);
    assert_true(fabs(ph[1].deadline - (4 + 0.9 * 4)) < EPS);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 11);
    assert_int_equal(sum_bytes(&p), 11 << 20);
    for (size_t i = 8; i < n; i++)
        assert_true(fabs(sg[i].start - (4.3 + (i - 8) * (7.6 - 4.3) / 3)) < EPS);
    bblog_pace_free(&p);
}

/* reactive: drained as soon as it is logged, during the phase, one segment after another. */
static void test_reactive(void **state)
{
    static struct script s;
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    const struct bblog_pace_segment *sg;
    size_t n;
    (void) state;

    s.n = s.next = 0;
    add_write(&s, 1, 6 << 20);
    add_write(&s, 1.5, 2 << 20);
    add_mark(&s, 1.6);
    q.mode = BBLOG_PACE_REACTIVE;
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 4 * MiB, 30);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 8);
    assert_true(fabs(sg[0].start - 1) < EPS);
    for (size_t i = 1; i < n; i++)
        assert_true(fabs(sg[i].start - (sg[i - 1].start + sg[i - 1].duration)) < EPS);
    assert_true(fabs(sg[7].start + sg[7].duration - 3) < EPS);
    bblog_pace_free(&p);

    /* With a cap: every bytes / max_rate. */
    q.max_rate = 2 * MiB;
    s.next = 0;
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 0, 30);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++)
        assert_true(fabs(sg[i].start - (1 + i * 0.5)) < EPS);
    bblog_pace_free(&p);

    /* Small writes in an open phase: no segment before a whole one is pending (the writer is
     * not chased with a few KiB at a time); the rest goes when the phase ends. 64 KiB writes
     * every 10 ms from t = 1: the 16th makes 1 MiB (t = 1.15); 40 writes, 2.5 MiB, the last
     * at 1.39, the phase ends at its quiet gap (0.5 s: 1.89). */
    q.max_rate = 0;
    s.n = s.next = 0;
    add_burst(&s, 1, 40 << 16, 40, 0.01, 0);
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    run(&p, &s, 1000 * MiB, 1.149);
    bblog_pace_segments(&p, &n);
    assert_int_equal(n, 0);
    run(&p, &s, 1000 * MiB, 30);
    sg = bblog_pace_segments(&p, &n);
    assert_int_equal(n, 3);
    assert_true(fabs(sg[0].start - 1.15) < EPS);
    assert_int_equal(sg[0].bytes, 1 << 20);
    assert_int_equal(sg[1].bytes, 1 << 20);
    assert_true(sg[1].start >= 1.31 - EPS && sg[1].start < 1.39 + EPS);
    assert_true(fabs(sg[2].start - 1.89) < EPS);
    assert_int_equal(sg[2].bytes, 1 << 19);
    bblog_pace_free(&p);
}

/* Segments slower than their slot run back to back, and the rest of the window is re-spread
 * after a slow one, so the deadline still holds when the PFS allows it. */
static void test_slow_segments(void **state)
{
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    struct bblog_pace_action a;
    struct bblog_pace_status st;
    (void) state;

    q.quiet_gap = 2; /* the mark at 1 ends the phase */
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    assert_int_equal(bblog_pace_on_write(&p, 0, 4 << 20), 0);
    assert_int_equal(bblog_pace_on_mark(&p, 1), 0); /* window [1, 9): 2 s per segment */
    assert_int_equal(bblog_pace_next(&p, 1, &a), 0);
    assert_int_equal(a.bytes, 1 << 20);
    assert_int_equal(bblog_pace_next(&p, 1.5, &a), 0); /* in flight: nothing more */
    assert_int_equal(a.bytes, 0);
    assert_true(isinf(a.wake));
    assert_int_equal(bblog_pace_on_drained(&p, 5, 1 << 20), 0); /* took 4 s, due at 3 */
    bblog_pace_get_status(&p, &st);
    assert_true(fabs(st.spacing - 4.0 / 3) < EPS);
    assert_int_equal(bblog_pace_next(&p, 5, &a), 0);
    assert_int_equal(a.bytes, 1 << 20);
    assert_int_equal(bblog_pace_on_drained(&p, 5.1, 1 << 20), 0);
    assert_int_equal(bblog_pace_next(&p, 5.1, &a), 0);
    assert_int_equal(a.bytes, 0);
    assert_true(fabs(a.wake - (5 + 4.0 / 3)) < EPS);
    /* A drain that moved less than asked: the rest is re-spread too. */
    assert_int_equal(bblog_pace_next(&p, a.wake, &a), 0);
    assert_int_equal(a.bytes, 1 << 20);
    assert_int_equal(bblog_pace_on_drained(&p, 6.5, 1 << 19), 0);
    bblog_pace_get_status(&p, &st);
    assert_int_equal(st.pending, (1 << 20) + (1 << 19));
    assert_true(fabs(st.spacing - (9 - (5 + 8.0 / 3)) / 2) < EPS);
    bblog_pace_free(&p);
}

/* The driver's own count: a collective drain (sync, close) empties the controller, and a
 * shrink (overwrites) re-plans the rest of the window. */
static void test_set_pending(void **state)
{
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    struct bblog_pace_action a;
    struct bblog_pace_status st;
    (void) state;

    q.quiet_gap = 2; /* the mark at 1 ends the phase */
    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    assert_int_equal(bblog_pace_on_write(&p, 0, 8 << 20), 0);
    assert_int_equal(bblog_pace_on_mark(&p, 1), 0);
    assert_int_equal(bblog_pace_next(&p, 1, &a), 0);
    assert_int_equal(a.bytes, 1 << 20);
    assert_int_equal(bblog_pace_on_drained(&p, 1, 1 << 20), 0);
    assert_int_equal(bblog_pace_set_pending(&p, 1.5, 2 << 20), 0);
    bblog_pace_get_status(&p, &st);
    assert_true(fabs(st.spacing - (9 - 2.0) / 2) < EPS); /* next due stays at 2 */
    assert_int_equal(bblog_pace_set_pending(&p, 1.6, 0), 0);
    assert_int_equal(bblog_pace_next(&p, 2, &a), 0);
    assert_int_equal(a.bytes, 0);
    assert_true(isinf(a.wake));
    bblog_pace_get_status(&p, &st);
    assert_int_equal(st.nsegments, 1);
    assert_int_equal(st.pending, 0);
    bblog_pace_free(&p);
}

/* A mark with no write since the last phase is no phase; a write after a mark with no gap is
 * a new one (sync, then the next dump right away). */
static void test_marks(void **state)
{
    struct bblog_pace p;
    struct bblog_pace_params q = proactive();
    struct bblog_pace_status st;
    const struct bblog_pace_phase *ph;
    size_t np;
    (void) state;

    assert_int_equal(bblog_pace_init(&p, &q, 0), 0);
    assert_int_equal(bblog_pace_on_mark(&p, 1), 0);
    bblog_pace_get_status(&p, &st);
    assert_int_equal(st.nphases, 0);
    assert_false(st.in_phase);
    assert_int_equal(bblog_pace_on_write(&p, 2, 10), 0);
    assert_int_equal(bblog_pace_on_mark(&p, 2.1), 0);
    assert_int_equal(bblog_pace_on_write(&p, 2.1, 10), 0);
    assert_int_equal(bblog_pace_on_mark(&p, 2.2), 0);
    assert_int_equal(bblog_pace_on_mark(&p, 2.3), 0);
    ph = bblog_pace_phases(&p, &np);
    assert_int_equal(np, 2);
    assert_true(fabs(ph[1].start - 2.1) < EPS && fabs(ph[1].end - 2.2) < EPS);
    assert_true(fabs(ph[1].period - 0.1) < EPS);
    assert_int_equal(ph[1].carried, 10);
    bblog_pace_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_bad_calls),
        cmocka_unit_test(test_segments_spacing),
        cmocka_unit_test(test_stagger),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_whole_units),
        cmocka_unit_test(test_quiet_gap),
        cmocka_unit_test(test_finish_before_next),
        cmocka_unit_test(test_adapt),
        cmocka_unit_test(test_max_rate),
        cmocka_unit_test(test_early_phase),
        cmocka_unit_test(test_reactive),
        cmocka_unit_test(test_slow_segments),
        cmocka_unit_test(test_set_pending),
        cmocka_unit_test(test_marks),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
