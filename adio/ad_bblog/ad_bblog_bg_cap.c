/*
 * A burst buffer smaller than the output (bblog_high_water, bblog_max_size; bblog(7)): the budget
 * of each process's log, and when the drain that makes room runs. Which log bytes are live, the
 * walk over them from the oldest and the trim point are in ad_bblog_bg_trim.c.
 *
 * Budget. Each process's log may take cap bytes of the device: bblog_max_size, or else a share of
 * the space free in the burst-buffer directory at open (CAP_SHARE of it, split between the
 * processes of the open on this node). Once the log holds high_water percent of that, the
 * background drain (ad_bblog_bg.c) writes the oldest logged bytes to the PFS file, in log order,
 * and the space they took is given back: the log's trim point moves past them and holes are punched
 * below it (bblog_log_trim). With bblog_high_water=0 there is no budget.
 *
 * Data path. A write that does not fit waits for that space (Cap_wait, on the application's thread,
 * under the logstate's lock), as long as the drain can make progress; only when it cannot
 * (everything left was written after the last planning point by collective calls, say) does it fall
 * back as with a full burst buffer: the bytes go straight to the PFS file.
 *
 * Collective calls. Without a background drain (bblog_drain=on_demand, the default) the thread
 * starts when it is needed: at once for a file of one process; for several processes, at a
 * collective write that finds some process past its high-water mark, all start it together, and
 * such writes are planning points from then on. Finding out costs an Allreduce at collective
 * writes: until the first process reaches its mark, spaced by the room left to it (at most
 * ADIOI_BBLOG_CAP_MAX_EVERY apart); from then on at every ADIOI_BBLOG_CAP_EVERY-th (they feed the
 * drain) and at every one while a budget is nearly used (Cap_coll). It is paid only where the
 * smallest budget of the open is small (bblog_max_size set, or under CAP_WATCH of free space per
 * process sharing a burst buffer: Cap_small, which costs an Allreduce at an open that spans nodes);
 * with larger ones a write phase that fills the device falls back to the PFS file. Processes that
 * only write independently cannot agree without a message: their full burst buffer falls back to
 * the PFS file too.
 *
 * Invariants. Every process computes the same next agreement (cap_next) and the same decisions from
 * the reduced values, and Cap_small returns the same on every process, so that all make the same
 * collective calls. The index by log offset that trimming needs costs an insert per write: it is
 * kept only where some process of the open may trim.
 *
 * Failures. A drain thread that could not start on some process, or trimming that failed, sets
 * cap_failed: from then on a full log falls back to the PFS file. An agreement that fails at open
 * reads as a small budget (watched); one that fails at a collective write fails the write.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "adioi.h"

#define CAP_SHARE 0.75          /* of the free space at open, when bblog_max_size is unset */
#define MIN_GRAN ((uint64_t) 1 << 20)
#define CAP_WATCH ((double) (1 << 30))  /* budgets below this may need early drains */

void ADIOI_BBLOG_Cap_open(struct ADIOI_BBLOG_state *st, int local_procs)
{
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    struct statvfs sv;
    uint64_t cap = 0;

    if (ls->cap || st->hints.high_water == 0)
        return;
    /* From inputs every process of the open agreed on: whether any of them may trim. */
    ls->trims = st->cap_watch || st->nprocs == 1 || st->hints.close_bb ||
        st->hints.drain != ADIOI_BBLOG_DRAIN_ON_DEMAND;
    if (st->hints.max_size > 0) {
        cap = (uint64_t) st->hints.max_size;
    } else if (statvfs(st->logdir, &sv) == 0) {
        double free_b = (double) sv.f_bavail * (double) sv.f_frsize;
        cap = (uint64_t) (free_b * CAP_SHARE / (local_procs > 0 ? local_procs : 1));
    }
    if (cap == 0)
        return;
    /* The index by log offset costs an insert per write: kept only where a drain thread may
     * make room, which a default open of several processes with a large budget never starts. */
    if (!ls->rev && ls->trims && bblog_idx_create(&ls->rev) != 0)
        return;                 /* no memory: no capacity drains, the old fallback */
    ls->rank = st->rank;
    ls->cap = cap;
    ls->hwm = cap / 100 * (uint64_t) st->hints.high_water;
    ls->gran = cap / 16 < MIN_GRAN ? MIN_GRAN : cap / 16;
}

/*
 * Application thread, lock held, bg running: waits until len more bytes fit in the log, or
 * the drain can free nothing more. Returns 1 when they fit.
 */
int ADIOI_BBLOG_Cap_wait(struct ADIOI_BBLOG_state *st, uint64_t len)
{
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    double t0 = ADIOI_BBLOG_Now(), t;
    int waited = 0, fits;

    ADIOI_BBLOG_Trim_apply(st);
    while (!(fits = ls->log_end - ls->trim + len <= ls->cap) && len <= ls->cap &&
           !ls->cap_failed) {
        if (ADIOI_BBLOG_Bg_make_room(ls) != 0)
            break;
        waited = 1;
        ADIOI_BBLOG_Trim_apply(st);
    }
    if (waited) {
        t = ADIOI_BBLOG_Now() - t0;
        st->stats.capacity_waits++;
        ADIOI_BBLOG_MAX(st->stats.max_capacity_wait, t);
    }
    return fits;
}

static int note_recent(void *arg, uint64_t off, uint64_t len, uint64_t log_off, uint64_t stamp)
{
    (void) log_off;
    return ADIOI_BBLOG_Note_recent(arg, off, len, stamp);
}

/* Pieces of the index split at their stamp runs, noted as appended since the last planning
 * point: a thread started late sends them at its first plan. Lock held. */
static int seed_recent(struct ADIOI_BBLOG_logstate *ls)
{
    struct bblog_idx_iter it;
    struct bblog_extent e;
    int rc = 0;

    bblog_idx_iter_init(ls->idx, &it, 0, UINT64_MAX);
    while (rc == 0 && bblog_idx_iter_next(&it, &e))
        rc = ADIOI_BBLOG_Stamp_runs(ls, e.off, e.len, e.log_off, note_recent, ls);
    return rc;
}

/* A file of one process, past its high-water mark with no drain thread: start one. */
void ADIOI_BBLOG_Cap_start_solo(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_logstate *ls = st->ls;

    if (ls->bg || !ls->cap || ls->cap_failed || ls->multi || st->nprocs > 1 ||
        ls->log_end - ls->trim < ls->hwm)
        return;
    if (ADIOI_BBLOG_Bg_start(fd) != MPI_SUCCESS)
        ls->cap_failed = 1;     /* the old fallback; Bg_start said why */
}

/* The share of bblog_dir's free space that budgets come from (0: unknown), for the open's
 * agreement, which keeps the smallest of all processes' (ad_bblog_open.c). */
uint64_t ADIOI_BBLOG_Cap_free(const struct ADIOI_BBLOG_state *st)
{
    struct statvfs sv;

    if (statvfs(st->logdir, &sv) != 0)
        return 0;
    return (uint64_t) ((double) sv.f_bavail * (double) sv.f_frsize * CAP_SHARE);
}

/*
 * Whether some process's budget is small enough that early drains may be needed in this open
 * (bblog_max_size set, or its share of the smallest free space, min_free from the agreement,
 * below CAP_WATCH): then every blocking collective write asks all processes (Cap_coll).
 * local_procs is this process's count of processes sharing its burst buffer. Where that count
 * is the same everywhere (one node, or one burst buffer for all), so is the answer; else the
 * processes agree on it (collective). Returns the same on every process.
 */
int ADIOI_BBLOG_Cap_small(ADIO_File fd, uint64_t min_free, int local_procs)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int small;

    if (st->hints.high_water == 0)
        return 0;
    if (st->hints.max_size > 0)
        return 1;
    small = (double) min_free / (local_procs > 0 ? local_procs : 1) < (double) CAP_WATCH;
    /* Not agreed: watched, the answer that keeps a small budget safe. */
    if ((!st->one_node || st->hints.debug_node_size > 0) && !st->hints.shared_bb &&
        ADIOI_BBLOG_Allreduce(MPI_IN_PLACE, &small, 1, MPI_INT, MPI_MAX, fd->comm) != MPI_SUCCESS)
        small = 1;
    return small;
}

/*
 * Collective, at blocking collective writes of an open whose budget is small (cap_watch),
 * when ls->colls reaches cap_next. Whether some process is past its high-water mark, or has
 * no room for this call's bytes even after its drain made what room it could; and when to ask
 * again (every process computes the same cap_next from the reduced values): at the next call
 * when calls like this one could fill some budget within ADIOI_BBLOG_CAP_EVERY calls;
 * ADIOI_BBLOG_CAP_EVERY calls on when some process is past its mark or the drains have started
 * (these agreements are the planning points that feed them); else once such calls could have
 * used half the smallest room left to a mark, at most ADIOI_BBLOG_CAP_MAX_EVERY calls on. A
 * later call much larger than this one may find no room before the next agreement: it falls
 * back as a full burst buffer does. Past the mark with no drain thread yet: every process
 * starts one. Then a planning point: everything logged so far may be drained, so a write
 * without room waits for a segment, not for a whole drain. Without drain threads (they could
 * not start), the old fallback, a collective drain. Returns an MPI error code, the same on
 * every process.
 */
int ADIOI_BBLOG_Cap_coll(ADIO_File fd, uint64_t bytes)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    int in[3], out[3], started = 0, rc = 0, fail, anyfail;
    uint64_t used, budget, room, calls, every;

    ADIOI_BBLOG_Lock(ls);
    if (ls->cap && !ls->cap_failed && ls->bg && ls->log_end - ls->trim + bytes > ls->cap)
        ADIOI_BBLOG_Cap_wait(st, bytes);
    used = ls->cap ? ls->log_end - ls->trim : (uint64_t) ls->log_bytes;
    budget = ls->cap ? ls->cap : (uint64_t) st->hints.max_size;
    room = budget > used ? budget - used : 0;
    in[0] = ls->cap && !ls->cap_failed && used >= ls->hwm;
    in[1] = ls->log_end > ls->trim && budget > 0 && used + bytes > budget;
    /* Calls like this one that still fit: 0 when fewer than ADIOI_BBLOG_CAP_EVERY fit in the
     * budget, else those up to the mark (to the budget past it); none to watch without a
     * budget (unknown free space). */
    calls = budget == 0 ? UINT64_MAX : room / (bytes > 0 ? bytes : 1);
    if (budget > 0 && calls >= ADIOI_BBLOG_CAP_EVERY && ls->cap && ls->hwm > used)
        calls = (ls->hwm - used) / (bytes > 0 ? bytes : 1);
    else if (calls < ADIOI_BBLOG_CAP_EVERY)
        calls = 0;
    /* As INT_MAX - calls under MPI_MAX: the fewest. Three ints: MPICH reduces as many
     * elements as there are processes or more with twice the message rounds (DESIGN.md
     * section 6 keeps such reductions small or one vector element). */
    in[2] = INT_MAX - (int) (calls < INT_MAX ? calls : INT_MAX);
    ADIOI_BBLOG_Unlock(ls);
    if (st->nprocs == 1)
        memcpy(out, in, sizeof(out));
    else if (ADIOI_BBLOG_Allreduce(in, out, 3, MPI_INT, MPI_MAX, fd->comm) != MPI_SUCCESS)
        return ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_WRITESTRIDEDCOLL", __LINE__, ADIOI_BBLOG_ECOLL,
                                  "cannot agree on the burst buffer's room for",
                                  st->pfs_path);
    calls = (uint64_t) (INT_MAX - out[2]);
    if (out[1] || calls == 0)
        every = 1;
    else if (out[0] || ls->planning)
        every = ADIOI_BBLOG_CAP_EVERY;
    else
        every = calls / 2;
    every = every < 1 ? 1 : every > ADIOI_BBLOG_CAP_MAX_EVERY ? ADIOI_BBLOG_CAP_MAX_EVERY : every;
    ls->cap_next = ls->colls + (uint32_t) every;
    if (!out[0] && !out[1])
        return MPI_SUCCESS;
    if (!ls->planning && !ls->cap_failed && st->nprocs > 1) {
        if (!ls->bg) {
            rc = ADIOI_BBLOG_Bg_start(fd) != MPI_SUCCESS;
            started = rc == 0;
        }
        if (rc == 0 && started) {
            ADIOI_BBLOG_Lock(ls);
            rc = seed_recent(ls) != 0;
            ADIOI_BBLOG_Unlock(ls);
        }
        fail = rc;
        if (ADIOI_BBLOG_Allreduce(&fail, &anyfail, 1, MPI_INT, MPI_MAX, fd->comm) != MPI_SUCCESS)
            anyfail = 1;        /* not agreed: as a thread that could not start */
        if (anyfail)
            ls->cap_failed = 1;         /* held threads stay held until close */
        else
            ls->planning = 1;
    }
    if (ls->planning) {
        int rc = ADIOI_BBLOG_Bg_plan(fd);
        return rc == 0 ? MPI_SUCCESS :
            ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_WRITESTRIDEDCOLL", __LINE__, rc,
                               "cannot plan the background drain of", st->pfs_path);
    }
    return out[1] ? ADIOI_BBLOG_Drain(fd, 0) : MPI_SUCCESS;
}
