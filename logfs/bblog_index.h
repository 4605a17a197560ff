/*
 * The interval index (DESIGN.md section 5): which bytes of the file are logged, and where in
 * the data log they are. Last writer wins: inserting an extent trims or splits the older
 * extents it overlaps, so the index never holds two extents covering the same byte, and
 * in-order traversal yields the drain list already sorted, non-overlapping and coalesced.
 *
 * Extents are half-open in this API: file bytes [off, off + len) are stored at data log bytes
 * [log_off, log_off + len). An insert that touches an existing extent in the file and
 * continues it in the log (prev.off + prev.len == off && prev.log_off + prev.len == log_off)
 * extends that extent instead of adding one, so a sequential or strided writer with one
 * request per extent costs one node per contiguous run, not one per write.
 *
 * Not thread-safe: the caller serialises access (the driver holds its drain lock).
 */
#ifndef BBLOG_INDEX_H
#define BBLOG_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct bblog_extent {
    uint64_t off;
    uint64_t len;
    uint64_t log_off;
};

struct bblog_index;

/* Returns 0 or ENOMEM. */
int bblog_idx_create(struct bblog_index **out);
void bblog_idx_destroy(struct bblog_index *idx);

/* Records that [off, off+len) now lives at log_off; len == 0 is a no-op. 0, ENOMEM, or
 * BBLOG_EINVAL when off + len or log_off + len would pass UINT64_MAX (the index is unchanged
 * on any error). */
int bblog_idx_insert(struct bblog_index *idx, uint64_t off, uint64_t len, uint64_t log_off);

/* Forgets [off, off+len) (after those bytes were drained), splitting an extent that straddles
 * the range. 0 or ENOMEM. */
int bblog_idx_remove(struct bblog_index *idx, uint64_t off, uint64_t len);

/* Forgets everything; keeps the memory for reuse. */
void bblog_idx_clear(struct bblog_index *idx);

/*
 * Iteration in file order over the extents that overlap [off, off+len), each clipped to that
 * range (log_off adjusted accordingly). Allocation-free: the iterator lives on the caller's
 * stack. The index must not be modified while an iterator is in use.
 *   struct bblog_idx_iter it; struct bblog_extent e;
 *   bblog_idx_iter_init(idx, &it, 0, UINT64_MAX);
 *   while (bblog_idx_iter_next(&it, &e)) ...
 * len == UINT64_MAX - off (or more) means "to the end of the file".
 */
struct bblog_idx_iter {
    const struct bblog_index *idx;
    const void *node;           /* next node to visit, NULL when done */
    uint64_t lo, hi;            /* clip range, half-open; hi saturates at UINT64_MAX */
};
void bblog_idx_iter_init(const struct bblog_index *idx, struct bblog_idx_iter *it,
                         uint64_t off, uint64_t len);
int bblog_idx_iter_next(struct bblog_idx_iter *it, struct bblog_extent *out);

/* Totals, all O(1). */
uint64_t bblog_idx_bytes(const struct bblog_index *idx);       /* bytes covered */
size_t bblog_idx_count(const struct bblog_index *idx);         /* extents (nodes) */
uint64_t bblog_idx_end(const struct bblog_index *idx);         /* max off+len, 0 if empty */
size_t bblog_idx_memory(const struct bblog_index *idx);        /* bytes allocated */

/* Self-check for tests: NULL if every invariant holds, else what is broken. O(count). */
const char *bblog_idx_check(const struct bblog_index *idx);

#endif
