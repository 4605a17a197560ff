/*
 * The background drain's private parts, shared by its thread (ad_bblog_bg.c), its control
 * from the application's thread (ad_bblog_bg_ctl.c) and its planning points
 * (ad_bblog_bg_plan.c). What the rest of the driver calls is in ad_bblog_bg.h.
 */
#ifndef AD_BBLOG_BG_PRIV_H_INCLUDED
#define AD_BBLOG_BG_PRIV_H_INCLUDED

#include <pthread.h>

#include "ad_bblog.h"
#include "bblog_pace.h"

#define DEFAULT_SEGMENT_SIZE (4 * 1024 * 1024)
/* Seconds without a write that end an I/O phase: longer than the pauses inside a phase, short
 * enough that a phase followed by half a second of computation ends with time left to drain it
 * (RATIONALE: bench/results/rationale.md, quiet-gap). */
#define QUIET_GAP 0.2
#define MARGIN 0.1              /* of the predicted period, kept free before the next phase */
#define MIN_PIECE (256 * 1024)  /* smallest paced segment: bblog_pace.h, min_piece */
#define BATCH_LOOK 0.02         /* seconds between looks at a node batch's end (batch_idle) */
#define BATCH_WAIT 0.002        /* for another process's list or chunk, which needs no MPI call
                                 * of anyone */

struct ADIOI_BBLOG_bg {
    pthread_t thread;
    pthread_cond_t cond;        /* any change of the fields below */
    int stop;                   /* the thread must return */
    int paused;                 /* the application thread works on the index */
    int busy;                   /* segments or chunks being written (lock released) */
    int hold;                   /* bblog_drain=on_demand with bblog_close=bb: idle until close */
    int closing;                /* the handle was closed: drain everything, then done */
    int hurry;                  /* someone waits for the end (re-open, delete, MPI_Finalize):
                                 * no more pacing, nothing is left to overlap with */
    int done;                   /* closing and all drained (or failed) */
    int starved;                /* nothing eligible: wait for the next planning point */
    int idle;                   /* the thread waits with no deadline: a write must wake it */
    int want_space;             /* a write waits for log space (ad_bblog_bg_cap.c) */
    int pfs_fd;
    uint64_t plan_log_end;      /* log bytes below were logged before the last planning point */
    uint32_t plan_colls;        /* ls->colls at the last planning point */
    uint32_t plan_at;           /* ls->colls at the last point, on every process (plan_colls
                                 * stays behind on a process that could not plan) */
    uint32_t plan_every;        /* collective writes from plan_at to the next point */
    int plan_ends_phase;        /* that point is the last call of an output phase (the
                                 * phases' key): it ends the phase for the pacer */
    int point_ended;            /* the last planning point ended the pacer's phase */
    uint64_t plan_phases;       /* pace.nstarted at the last planning point */
    uint32_t phase_start;       /* ls->colls when this process's output phase began */
    uint32_t phase_period;      /* collective calls from the phase before to it, 0: unknown */
    size_t plan_through;        /* ls->through entries already sent */
    struct bblog_index *fence;  /* other processes' pieces since the last collective drain */
    struct bblog_pace pace;
    uint64_t cursor;            /* file offset to go on from */
    char *buf;
    size_t bufsz;
    int err;                    /* errno of the last failed PFS write, 0 if none */
    int warned;
    int keep_logs, stats;
    int verify;                 /* bblog_verify: each run written is read back into vbuf */
    int nodes;                  /* the open spans nodes: each segment flushed when written */
    char *vbuf;
    char stats_path[PATH_MAX];
    double t0_mono, t0_real;
    uint64_t bytes, writes, plans;
    uint64_t cap_bytes;         /* of bytes, written to make room (ad_bblog_bg_cap.c) */
    uint64_t vbytes;            /* read back from the PFS file (bblog_verify) */
    double plan_s;              /* seconds in planning points, the pause to the resume */
    /* Node batches (ad_bblog_bg_batch.c): the one this process takes part in, or NULL; whether
     * the last planning point started one (the same in every process of the node); close's
     * last point. */
    struct ADIOI_BBLOG_batch *batch;
    const struct ADIOI_BBLOG_state *batch_st;  /* the handle whose planning point started it */
    int batched, last_plan;
    uint64_t batches, batch_chunks;
};

/* The thread (ad_bblog_bg.c). Bg_main is its body (arg: the logstate). Lock held for the rest:
 * Bg_pressure says whether the log passed its high-water mark; Bg_batch_end leaves the node
 * batch once no chunk of it is in flight anywhere; Bg_batch_settle finishes the batch from the
 * application's thread; Bg_chunk_size is a batch's chunk (the same in every process). */
void *ADIOI_BBLOG_Bg_main(void *arg);
int ADIOI_BBLOG_Bg_pressure(const struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Bg_batch_end(struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Bg_batch_settle(struct ADIOI_BBLOG_logstate *ls);
uint64_t ADIOI_BBLOG_Bg_chunk_size(const struct ADIOI_BBLOG_bg *bg);

/* Control (ad_bblog_bg_ctl.c), lock held: the thread stops after the write under way and until
 * as many resumes as pauses. */
void ADIOI_BBLOG_Bg_pause_locked(struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Bg_resume_locked(struct ADIOI_BBLOG_logstate *ls);

#endif /* AD_BBLOG_BG_PRIV_H_INCLUDED */
