/*
 * MPI_File_close (collective): drain what is left, report stats, close the inner file, and remove
 * the logs unless bblog_keep_logs=true.
 *
 * Data path. With bblog_close=bb the log is only made durable here, with keep records for what it
 * still owes the PFS after a last planning point (a log that owes nothing is marked drained), and
 * the background drain (ad_bblog_bg.c) finishes the job after close: it removes the log once the
 * data is on the PFS, when this process next opens or deletes the file, or at MPI_Finalize
 * (ad_bblog_bg_ctl.c). Where what is left is small pieces that no node batch can take, or some
 * process could not get there, close drains collectively instead, as bblog_close=pfs would
 * (RATIONALE: bench/results/rationale.md, close-small).
 *
 * Invariants. No process removes its log before all have marked theirs drained (a barrier): a
 * process that dies in between leaves the others' marked logs behind, whose drained_gen tells
 * replay that its records are on the PFS already. Only the file's last handle in this process stops
 * the background drain or leaves it running; handles are closed in the same order on all processes,
 * so they agree on which is last. With MPI_MODE_DELETE_ON_CLOSE a barrier ends the close, as one
 * process deletes the file and its logs right after. With the graft's close hook the shared file
 * pointer's file is closed (and so deleted) here, once every process has entered the close.
 *
 * Failures. If the drain fails, the logs are kept and the error says where they are, so
 * `bblog replay` can finish the job. A barrier that fails makes the close fail (ADIOI_BBLOG_ECOLL),
 * the log kept.
 */
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
#include "adioi.h"

/* What the log still owes the PFS after the last planning point: keep records for the
 * index's ranges, so that a replay after a crash in which other processes had finished (and
 * removed their logs) applies none of this log's superseded or drained records
 * (bblog_format.h); a log that owes nothing is marked drained instead. Under ls->lock. */
static int write_keeps(struct ADIOI_BBLOG_logstate *ls)
{
    struct bblog_idx_iter it;
    struct bblog_extent e;
    uint64_t lo = 0, hi = 0;
    int rc = 0;

    if (bblog_idx_count(ls->idx) == 0) {
        ADIOI_BBLOG_Peer_emptied(ls);
        return bblog_log_mark_drained(ls->log);
    }
    bblog_idx_iter_init(ls->idx, &it, 0, UINT64_MAX);
    while (rc == 0 && bblog_idx_iter_next(&it, &e)) {
        if (hi > lo && e.off == hi) {           /* adjacent extents: one range */
            hi += e.len;
            continue;
        }
        if (hi > lo)
            rc = bblog_log_keep(ls->log, lo, hi - lo);
        lo = e.off;
        hi = e.off + e.len;
    }
    if (rc == 0 && hi > lo)
        rc = bblog_log_keep(ls->log, lo, hi - lo);
    return rc == 0 ? bblog_log_sync(ls->log) : rc;
}

/* bblog_close=bb: a last planning point, the log made durable on the burst buffer with what
 * it still owes, and the background drain told to finish alone. Returns 1 when it goes on
 * after close; 0 when any process could not get there, or when what is left is small pieces
 * (below), and all then drained collectively (err: the result). No process starts finishing
 * alone before all have written their keep records (the reduction below).
 *
 * Each process's background drain writes each extent that does not continue another with its
 * own PFS request; small extents interleaved with other processes' (IOR strided 4 KiB) go out
 * at a few MB/s per process, where this collective drain writes them through the node exchange
 * and two-phase at the PFS's speed (RATIONALE: bench/results/rationale.md, close-small). The
 * last point hands small pieces to node batches instead, which the threads write
 * in large chunks from their node's logs after close (ad_bblog_bg_batch.c), where every node has
 * several of the processes (a node's pieces then continue each other's). Where no batch can
 * take them (on some node) and the extents left (over all processes) average less than
 * ADIOI_BBLOG_CLOSE_PIECE, close drains them now, as bblog_close=pfs would; larger ones the
 * thread writes at the PFS's speed after close (BBLOG_DEBUG_CLOSE_ALONE=1: always), where
 * computation after close can hide them. */
static int close_to_bb(ADIO_File fd, struct ADIOI_BBLOG_state *st, int *err)
{
    uint64_t mine[4] = { 0, 0, 0, 0 }, all[4];
    int rc, batched;

    /* Counted before the plan makes the pieces since the last point eligible: after it, the
     * resumed thread may already be writing them. */
    ADIOI_BBLOG_Lock(st->ls);
    mine[1] = bblog_idx_bytes(st->ls->idx);
    mine[2] = bblog_idx_count(st->ls->idx);
    ADIOI_BBLOG_Unlock(st->ls);
    mine[0] = ADIOI_BBLOG_Bg_plan_close(fd, &batched) != 0;
    ADIOI_BBLOG_Bg_phase_end(st->ls);
    ADIOI_BBLOG_Lock(st->ls);
    rc = st->ls->log ? write_keeps(st->ls) : 0;
    ADIOI_BBLOG_Unlock(st->ls);
    mine[0] |= rc != 0;
    mine[3] = !batched;
    /* Not agreed: as a plan that failed, a collective drain now. */
    if (ADIOI_BBLOG_Allreduce(mine, all, 4, MPI_UINT64_T, MPI_SUM, fd->comm) != MPI_SUCCESS)
        all[0] = 1;
    if (all[0] != 0 || (!st->hints.debug_close_alone && all[3] > 0 && all[2] > 0 &&
                        all[1] / all[2] < ADIOI_BBLOG_CLOSE_PIECE)) {
        *err = ADIOI_BBLOG_Drain(fd, 0);
        return 0;
    }
    ADIOI_BBLOG_Bg_close(st->ls);
    return 1;
}

/* With the graft's close hook (ROMIO 3.4 and later), MPI_File_close leaves the shared file
 * pointer to this close instead of ending it after a barrier of its own: every process has
 * entered the close, and so is done with the pointer, once the synchronisation above (the
 * barrier before the logs are removed, or close_to_bb's reduction) is behind it. Closing the
 * pointer's file deletes it (ROMIO opens it so). */
static void close_shared_fp(ADIO_File fd, int *err)
{
#ifdef ADIOI_BBLOG_CLOSE_HOOK
    int cerr;

    if (fd->shared_fp_fname)
        ADIOI_Free(fd->shared_fp_fname);
    fd->shared_fp_fname = NULL;
    if (fd->shared_fp_fd != ADIO_FILE_NULL) {
        ADIO_Close(fd->shared_fp_fd, &cerr);
        MPIO_File_free(&fd->shared_fp_fd);
        if (*err == MPI_SUCCESS)
            *err = cerr;
    }
#else
    (void) fd;
    (void) err;
#endif
}

void ADIOI_BBLOG_Close(ADIO_File fd, int *error_code)
{
    static const char myname[] = "ADIOI_BBLOG_CLOSE";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err = MPI_SUCCESS, rc, last, after = 0;

    *error_code = MPI_SUCCESS;
    if (!st)
        return;
    ADIOI_BBLOG_Notes_close(fd);
    /* The last handle of the file in this process: the background drain goes on after close
     * (bblog_close=bb) or stops here. Handles are closed in the same order on all processes
     * of the communicator, so "last" agrees among them for files opened on the same one. */
    last = st->ls && st->ls->bg && st->ls->refs == 2;
    if (last && st->hints.close_bb && st->inner != ADIO_FILE_NULL)
        after = close_to_bb(fd, st, &err);
    else if (st->inner != ADIO_FILE_NULL && !st->passthrough)
        err = ADIOI_BBLOG_Drain(fd, 0);
    if (last && !after)
        ADIOI_BBLOG_Bg_stop(st->ls, st->rank);
    /* No process removes its log before all have marked theirs drained: a process that dies
     * in between leaves the others' marked logs behind, whose drained_gen tells replay that
     * its records are on the PFS already (bblog_format.h). */
    if (!after && st->nprocs > 1 && !st->passthrough && st->inner != ADIO_FILE_NULL &&
        ADIOI_BBLOG_Barrier(fd->comm) != MPI_SUCCESS && err == MPI_SUCCESS)
        err = ADIOI_BBLOG_Err_rc(myname, __LINE__, ADIOI_BBLOG_ECOLL, "cannot close",
                                 st->pfs_path);  /* the log stays: replay finds it drained */
    close_shared_fp(fd, &err);
    if (!st->passthrough && st->hints_parsed && st->hints.stats[0])
        ADIOI_BBLOG_Stats_report(fd);
    ADIOI_BBLOG_Node_free(st);
    ADIOI_BBLOG_Remote_close(st);
    ADIOI_BBLOG_Peer_detach(st);
    ADIOI_BBLOG_Peer_close(st);
    ADIOI_BBLOG_Clock_close(st);
    if (st->ls) {
        int had_log = st->ls->log != NULL;
        rc = ADIOI_BBLOG_Logstate_detach(st->ls, err == MPI_SUCCESS && !st->hints.keep_logs);
        if (rc != 0 && err == MPI_SUCCESS)
            err = ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot close the log in",
                                     st->logdir);
        if (err != MPI_SUCCESS && had_log)
            fprintf(stderr, "bblog: rank %d: %s was not fully drained; its log stays in %s: "
                    "run `bblog replay %s --file %s` to apply it\n", st->rank, st->pfs_path,
                    st->logdir, st->logdir, st->pfs_path);
        st->ls = NULL;
    }
    if (st->inner != ADIO_FILE_NULL) {
        int ierr;
        ADIOI_BBLOG_Inner_close(st, &ierr);
        if (err == MPI_SUCCESS)
            err = ierr;
    }
    if (st->user_info != MPI_INFO_NULL)
        MPI_Info_free(&st->user_info);
    /* With MPI_MODE_DELETE_ON_CLOSE, ROMIO's ADIO_Close has one process delete the file right
     * after this returns, and our Delete also removes logs of the file: no process may still
     * be closing its log then. */
    if ((fd->access_mode & ADIO_DELETE_ON_CLOSE) && !st->passthrough &&
        ADIOI_BBLOG_Barrier(fd->comm) != MPI_SUCCESS && err == MPI_SUCCESS)
        err = ADIOI_BBLOG_Err_rc(myname, __LINE__, ADIOI_BBLOG_ECOLL, "cannot close",
                                 st->pfs_path);
    ADIOI_Free(st);
    fd->fs_ptr = NULL;
#ifdef __GLIBC__
    /* The drain's buffers (bblog_flush_buffer_size, ROMIO's cb_buffer_size) are large and
     * short-lived; once glibc has raised its mmap threshold past them they come from the heap,
     * and the small blocks allocated between them keep the freed pages resident: measured
     * with bench/run-soak.sh, RSS grew by 16-50 MiB per rank over 4 open/close cycles while
     * the bytes in use stayed flat. Giving the free pages back at close keeps RSS flat. */
    malloc_trim(0);
#endif
    *error_code = err;
}
