/*
 * reorder/: turning flattened requests into what one MPI-IO collective call can take (the
 * drain's rounds are plan/'s). Plain C, no MPI. Returns 0 or a positive errno.
 */
#ifndef BBLOG_REORDER_H
#define BBLOG_REORDER_H

#include <stddef.h>
#include <stdint.h>

/* One contiguous piece: file bytes [off, off+len), whose data is at source position src
 * (a data-log offset or a buffer offset; carried through, adjusted when a piece is trimmed). */
struct bblog_seg {
    uint64_t off;
    uint64_t len;
    uint64_t src;
};

/* One request, as one MPI-IO call flattens it: segments with non-decreasing, non-overlapping
 * offsets. Requests are given in issue order; for overlapping bytes the later request wins. */
struct bblog_req {
    const struct bblog_seg *segs;
    size_t nsegs;
};

/*
 * Two-level reordering (seed paper 000, section IV.D): sort the requests by their first byte,
 * group the requests whose [first, last] byte ranges interleave, merge the segments only inside
 * each group (k-way, later request wins on overlap), and concatenate the groups. The cost is
 * O(n log n) in segments, never in bytes. The result is sorted, non-overlapping, and coalesced
 * (neighbours adjacent in both off and src are merged); *out is malloc'ed, the caller frees it.
 */
int bblog_reorder(const struct bblog_req *reqs, size_t nreqs, struct bblog_seg **out,
                  size_t *nout);

#endif
