/*
 * Giving log space back while the file is open (bblog_high_water, bblog_max_size; the budget and
 * when to drain: ad_bblog_bg_cap.c): the notes of appends by log offset, the walk over the live log
 * bytes from the oldest, and the trim point.
 *
 * Data path. Finding the oldest bytes: the index is keyed by file offset, so every append is also
 * noted in rev, keyed by data log offset (its log_off field holds the file offset). A rev entry is
 * live where the index still maps those file bytes to those log bytes; the rest was drained or
 * overwritten since, and is dropped from rev as the walk meets it (a bounded number per walk: the
 * trim point then stops at the first entry left).
 *
 * Locking. The drain thread, after a segment, finds the first live log byte and, once the PFS file
 * is flushed, offers it (trim_ready); the application thread takes it at its next write
 * (Trim_apply), because the trim also rewrites the list other processes read this log through
 * (ad_bblog_peer_list.c), which only the application thread writes. Both under ls->lock.
 *
 * Invariants. The trim point only moves forward, and never past a live byte. Bytes that another
 * process overwrote leave the index at a planning point, and that process made its newer pieces
 * durable before it sent them there (ad_bblog_bg_plan.c): a trim point past them cannot, after a
 * crash, leave older bytes in the PFS file than the acknowledged ones. The list's entries below the
 * trim point name the PFS file before those log bytes become holes. A drain that empties the log
 * resets rev and the trim point (Trim_reset).
 *
 * Failures. A trim that fails (of the list or of the log) leaves the space taken and sets
 * cap_failed: the drain tries no more, and a full log falls back to the PFS file.
 */
#include <stdint.h>

#include "ad_bblog.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
#include "adioi.h"

int ADIOI_BBLOG_Trim_note_append(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                                 uint64_t data_off)
{
    return ls->rev ? bblog_idx_insert(ls->rev, data_off, len, off) : 0;
}

void ADIOI_BBLOG_Trim_reset(struct ADIOI_BBLOG_logstate *ls)
{
    if (ls->rev)
        bblog_idx_clear(ls->rev);
    ls->trim = ls->trim_ready = 0;
}

/*
 * Calls fn on the live pieces of the log in log order, from the oldest, until it returns
 * nonzero; rev entries found dead on the way are dropped. Returns the data log offset of the
 * first live byte not consumed (ls->log_end when none is left), for the trim point. Lock held.
 */
uint64_t ADIOI_BBLOG_Trim_walk(struct ADIOI_BBLOG_logstate *ls, ADIOI_BBLOG_trim_fn fn, void *arg)
{
    struct bblog_idx_iter rit, it;
    struct bblog_extent r, e;
    uint64_t dead[2 * 32], first = ls->log_end;
    size_t nd = 0, i;
    int stop = 0;

    if (!ls->rev)
        return ls->trim;
    bblog_idx_iter_init(ls->rev, &rit, 0, UINT64_MAX);
    while (!stop && bblog_idx_iter_next(&rit, &r)) {
        uint64_t live_from = UINT64_MAX;

        /* r: log bytes [r.off, r.off + r.len) hold file bytes from r.log_off on. */
        bblog_idx_iter_init(ls->idx, &it, r.log_off, r.len);
        while (!stop && bblog_idx_iter_next(&it, &e)) {
            uint64_t at = r.off + (e.off - r.log_off);
            if (e.log_off != at)
                continue;
            if (live_from == UINT64_MAX)
                live_from = at;
            if (!fn || (stop = fn(arg, &e)) != 0) {
                first = at;
                stop = 1;
            }
        }
        /* The part of the entry before its first live byte is dead: drop it. */
        if (live_from != r.off && nd < 32) {
            dead[2 * nd] = r.off;
            dead[2 * nd + 1] = (live_from == UINT64_MAX ? r.off + r.len : live_from) - r.off;
            nd++;
        }
        if (nd == 32)
            break;              /* the rest on the next walk */
    }
    for (i = 0; i < nd; i++)
        bblog_idx_remove(ls->rev, dead[2 * i], dead[2 * i + 1]);
    if (nd == 32 && !stop) {    /* cut short: the trim point is no further than here */
        bblog_idx_iter_init(ls->rev, &rit, 0, UINT64_MAX);
        if (bblog_idx_iter_next(&rit, &r) && r.off < first)
            first = r.off;
    }
    return first < ls->trim ? ls->trim : first;
}

/* Application thread, lock held (with bg): takes the trim point the drain offers. */
int ADIOI_BBLOG_Trim_apply(struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    uint64_t upto = ls->trim_ready;
    int rc;

    if (upto <= ls->trim || !ls->log)
        return 0;
    /* Readers of this log through its list first: its entries below the trim point now name
     * PFS bytes, before those log bytes become holes. */
    if ((rc = ADIOI_BBLOG_Peer_trim(ls, upto)) != 0 || (rc = bblog_log_trim(ls->log, upto)) != 0) {
        ls->trim_ready = ls->trim;      /* the space stays taken; the drain tries no more */
        ls->cap_failed = 1;
        return rc;
    }
    st->stats.bytes_trimmed += upto - ls->trim;
    ls->trim = upto;
    return 0;
}
