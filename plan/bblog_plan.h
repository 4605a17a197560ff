/*
 * plan/: cutting a drain into rounds, and a node's share of one round. Plain C, no MPI.
 * Returns 0 or a positive errno.
 */
#ifndef BBLOG_PLAN_H
#define BBLOG_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "bblog_reorder.h"      /* struct bblog_seg */

/*
 * Round planning for the collective drain (DESIGN.md section 6, seed 000 section IV.E). Every
 * round covers one contiguous file range [start, end) across all processes, so two-phase I/O
 * sees a dense region, and no process holds more than budget bytes of data in a round.
 *
 * bblog_plan_round_end: for one process, with its sorted non-overlapping extents (off, len
 * pairs in segs; src ignored) and a cursor (index of the first extent that may still reach past
 * start; start with 0), returns the end of the largest round [start, end) in which its bytes
 * are at most budget: the offset of the first extent (or the part of an extent that straddles
 * start) that no longer fits, or the first fitting end inside an extent that alone exceeds the
 * budget (the extent is split: start + budget if it straddles start, its offset + budget if it
 * starts later). It returns UINT64_MAX when all its data at or after start fits.
 * *cursor advances past extents that end at or before start.
 * The driver takes the minimum over all processes (MPI_Allreduce MIN) as the round's end, so
 * every process agrees on every round; a round whose end is UINT64_MAX is the last one.
 * budget must be > 0 (0 is taken as 1); the returned end is always > start.
 */
uint64_t bblog_plan_round_end(const struct bblog_seg *segs, size_t nsegs, size_t *cursor,
                              uint64_t start, uint64_t budget);

/*
 * The whole plan computed in one place, as the collective drain would compute it with one
 * allreduce per round: nprocs lists of extents, budget per process per round. Writes the round
 * boundaries to *cuts (malloc'ed): round i is [cuts[i], cuts[i+1]), *ncuts = rounds + 1, the
 * first cut is the smallest extent offset and the last is the largest end. Zero rounds (no data)
 * give *ncuts = 0 and *cuts = NULL. Used by unit tests and the replay tool.
 */
int bblog_plan_rounds(const struct bblog_seg *const *lists, const size_t *counts, size_t nprocs,
                      uint64_t budget, uint64_t **cuts, size_t *ncuts);

/* One piece of a node's drain round: file bytes [off, off+len), written under ordering stamp
 * stamp, at offset src of the data log of process who (its rank on the node); who = -1: bytes
 * that were written straight to the PFS file, which have no data here but hide older pieces. */
struct bblog_npiece {
    uint64_t off, len, src;
    uint64_t stamp;
    int who;
};

/*
 * The node exchange's share (ad_bblog_drain_share.c). p holds the pieces of all processes of one node
 * in one drain round, in any order (sorted in place). Where pieces overlap, each byte is kept
 * from the piece with the highest stamp (the later write); at equal stamps a logged piece wins
 * over one written through, and the lower who over a higher one (concurrent writes of one
 * byte are undefined in MPI-IO; pieces of one process never overlap); a byte whose winner was
 * written through is left out. The node's kept bytes, counted in file order, are then cut into
 * size nearly equal consecutive shares (they differ by at most one byte), and share rank
 * (0 <= rank < size) is returned in *out (malloc'ed, *nout pieces in file order, each
 * non-empty, none written through; NULL when empty); size 0 returns all the node's kept bytes
 * instead, as one list. *total receives the node's kept bytes, *own_kept those of process
 * rank's own pieces (the rest of its pieces' bytes were superseded). O(n log n). Returns 0 or
 * ENOMEM.
 */
int bblog_share_cut(struct bblog_npiece *p, size_t n, int rank, int size,
                    struct bblog_npiece **out, size_t *nout, uint64_t *total,
                    uint64_t *own_kept);

/*
 * All parts of a node's round at once (the node's first process cuts them for the others,
 * ad_bblog_drain_share.c): kept[0..k) is the node's kept bytes in file order (bblog_share_cut
 * with size 0), total their sum. With chunk 0 they are cut into nparts equal shares as
 * bblog_share_cut cuts them; with chunk > 0 into pieces of chunk bytes (the last one shorter),
 * nparts = ceil(total / chunk). *out (malloc'ed, at most k + nparts pieces) holds part c in
 * [starts[c], starts[c+1]); starts has nparts + 1 entries. O(k + nparts). 0 or ENOMEM.
 */
int bblog_share_parts(const struct bblog_npiece *kept, size_t k, uint64_t total, size_t nparts,
                      uint64_t chunk, struct bblog_npiece **out, size_t *starts);

#endif
