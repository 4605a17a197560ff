/*
 * Background drains (ad_bblog_bg*.c): what they offer the rest of the driver: the bracket of
 * collective calls, the thread's control, node batches, log trimming and the budget of a log.
 * Their private types are in ad_bblog_bg_priv.h.
 */
#ifndef AD_BBLOG_BG_H_INCLUDED
#define AD_BBLOG_BG_H_INCLUDED

#include "ad_bblog.h"
#include "ad_bblog_base.h"

/* ad_bblog_bg_plan.c: a collective call on the file is bracketed by Coll_begin
 * and Coll_end(fd, 1, may_wait), or followed by Coll_end(fd, 0, may_wait) when it writes
 * nothing; may_wait 0 (a nonblocking call) makes no planning point of it. */
void ADIOI_BBLOG_Coll_begin(ADIO_File fd);
void ADIOI_BBLOG_Coll_end(ADIO_File fd, int began, int may_wait);
int ADIOI_BBLOG_Bg_plan(ADIO_File fd);                  /* collective: 0 or ENOMEM */
/* close with bblog_close=bb: the last planning point (collective); *batched: the node's
 * threads write what is left as one batch (the same answer in every process). */
int ADIOI_BBLOG_Bg_plan_close(ADIO_File fd, int *batched);
/* Whether the collective write just counted is the next planning point agreed at the last. */
int ADIOI_BBLOG_Bg_plan_due(const struct ADIOI_BBLOG_logstate *ls);
/* Lock held. Whether another process logged [off, off+len) before the last planning point. */
int ADIOI_BBLOG_Bg_fenced(const struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len);

/* ad_bblog_bg_ctl.c: the thread's control from the application's thread. */
int ADIOI_BBLOG_Bg_start(ADIO_File fd);                 /* at open: MPI error code */
int ADIOI_BBLOG_Bg_make_room(struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Bg_pause(struct ADIOI_BBLOG_logstate *ls);
/* Before a drain of handle st: a node batch that another handle started (a one-process
 * handle's drain, which the batch's other processes do not wait for) is finished first. */
void ADIOI_BBLOG_Bg_settle(struct ADIOI_BBLOG_logstate *ls, const struct ADIOI_BBLOG_state *st);
/* drained: a collective drain emptied every process's log */
void ADIOI_BBLOG_Bg_resume(struct ADIOI_BBLOG_logstate *ls, int drained);
void ADIOI_BBLOG_Bg_note_write(struct ADIOI_BBLOG_logstate *ls, uint64_t idx_bytes_before);
void ADIOI_BBLOG_Bg_phase_end(struct ADIOI_BBLOG_logstate *ls);  /* a sync or close ends a phase */
void ADIOI_BBLOG_Bg_close(struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Bg_stop(struct ADIOI_BBLOG_logstate *ls, int rank);
/* Waits for the background drains of closed files (of pfs_path, or all when NULL). */
void ADIOI_BBLOG_Bg_wait(const char *pfs_path);
void ADIOI_BBLOG_Bg_wait_all(void);

/* ad_bblog_bg_batch.c: node batches of the background drain (no MPI). Batch_open, before a
 * planning point's exchange, makes this process's files of batch id (chunks of chunk bytes)
 * among the node's nranks processes (ranks in the file's communicator; this one is ranks[me]);
 * Batch_shared, after it, says whether every one made the same (the same answer in all);
 * Batch_publish, writes its pieces (n (off, len, log offset, stamp) quadruples,
 * malloc'ed, kept by the batch) and opens the others' lists; Batch_fail tells the others it
 * cannot. Batch_ready: 1 when every list is there and the chunks are cut, 0 not yet, -1 the
 * batch failed. Batch_left: whether a chunk is left to take (once ready); Batch_claim takes
 * up to k in a row that nobody took (the first in *c; returns how many, 0: none left).
 * Batch_write writes a claim's chunks (buf: a chunk), but those after *stop turned positive,
 * and marks them (done or failed). Batch_done_walk calls fn for this process's published
 * bytes inside chunks marked done. Batch_close removes this process's names and frees it. */
struct ADIOI_BBLOG_batch;
int ADIOI_BBLOG_Batch_open(const struct ADIOI_BBLOG_state *st, const int *ranks, int nranks, int me,
                           uint32_t id, uint64_t chunk, struct ADIOI_BBLOG_batch **out);
int ADIOI_BBLOG_Batch_shared(const struct ADIOI_BBLOG_batch *b);
int ADIOI_BBLOG_Batch_publish(struct ADIOI_BBLOG_batch *b, uint64_t *own, size_t n);
void ADIOI_BBLOG_Batch_fail(struct ADIOI_BBLOG_batch *b);
int ADIOI_BBLOG_Batch_ready(struct ADIOI_BBLOG_batch *b);
int ADIOI_BBLOG_Batch_left(const struct ADIOI_BBLOG_batch *b);
uint64_t ADIOI_BBLOG_Batch_claim(struct ADIOI_BBLOG_batch *b, uint64_t k, int64_t *c);
int ADIOI_BBLOG_Batch_write(struct ADIOI_BBLOG_batch *b, int64_t c, uint64_t k, int pfs_fd,
                            char *buf, int flush, const int *stop, uint64_t *bytes,
                            uint64_t *writes);
int ADIOI_BBLOG_Batch_finished(const struct ADIOI_BBLOG_batch *b);
int ADIOI_BBLOG_Batch_done_walk(struct ADIOI_BBLOG_batch *b, ADIOI_BBLOG_run_fn fn, void *arg);
void ADIOI_BBLOG_Batch_close(struct ADIOI_BBLOG_batch *b);

/* ---- a burst buffer smaller than the output ---- */
/* ad_bblog_bg_trim.c: every append noted by log offset; Trim_walk calls fn on the log's live
 * pieces from the oldest and returns the first live log byte left; Trim_apply takes the trim
 * point the drain thread offered. */
typedef int (*ADIOI_BBLOG_trim_fn) (void *arg, struct bblog_extent * piece);
int ADIOI_BBLOG_Trim_note_append(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                                 uint64_t data_off);
void ADIOI_BBLOG_Trim_reset(struct ADIOI_BBLOG_logstate *ls);
uint64_t ADIOI_BBLOG_Trim_walk(struct ADIOI_BBLOG_logstate *ls, ADIOI_BBLOG_trim_fn fn, void *arg);
int ADIOI_BBLOG_Trim_apply(struct ADIOI_BBLOG_state *st);
/* ad_bblog_bg_cap.c: the budget of each log, and when the drain that makes room runs. */
void ADIOI_BBLOG_Cap_open(struct ADIOI_BBLOG_state *st, int local_procs);
int ADIOI_BBLOG_Cap_wait(struct ADIOI_BBLOG_state *st, uint64_t len);
void ADIOI_BBLOG_Cap_start_solo(ADIO_File fd);
uint64_t ADIOI_BBLOG_Cap_free(const struct ADIOI_BBLOG_state *st);
int ADIOI_BBLOG_Cap_small(ADIO_File fd, uint64_t min_free, int local_procs);
int ADIOI_BBLOG_Cap_coll(ADIO_File fd, uint64_t bytes);

#endif /* AD_BBLOG_BG_H_INCLUDED */
