/*
 * MPI_File_sync (collective). bblog_sync=pfs (default): drain every process's log into the
 * inner file and flush it, so data is on the PFS and visible to all after sync-barrier-sync,
 * as on any ROMIO file system. bblog_sync=bb: make the logs durable on the burst buffer only;
 * the data reaches the PFS at a later drain (close at the latest).
 *
 * Like every collective call, a sync orders the writes before it before those after it, across
 * processes (ad_bblog_order.c).
 *
 * Write-through epochs. A sync whose drain found nothing logged on any process and bytes
 * written straight to the PFS file on some (every write was of bblog_through_threshold or more:
 * a checkpoint of large blocks, under the default hints) starts one. From then on this
 * process writes the file straight through whatever the size, so nothing is logged anywhere,
 * and a sync is each process's own flush of the PFS file, as under plain ROMIO, with no
 * collective call: the drain's agreement made every process wait at each sync for the slowest
 * writer, then flush at the same moment, and enter the next phase in step (the checkpoint
 * benchmark, bench/results/README.md). Each epoch sync sends every other process one flag,
 * whether a write since the previous sync went through that the log would have taken (below
 * the threshold), and receives the flags they sent at the previous sync: a process waits only
 * for another that is a whole phase behind. When a flag is set the epoch ends at that sync,
 * on every process alike, with the drain's agreement, and that sync starts none. So small
 * writes go straight through for at most the two phases after the epoch's last sync without
 * them, or until close. Only where nothing drains in the background (it would log them), under
 * bblog_sync=pfs, with 2 to ADIOI_BBLOG_EPOCH_PROCS processes (the flags are nprocs - 1
 * messages each way a sync), and not under BBLOG_DEBUG_NO_EPOCH=1.
 */
#include "ad_bblog.h"
#include "adioi.h"

#define ADIOI_BBLOG_EPOCH_PROCS 256

/* The flags of the last epoch sync: this process's, sent, and the others', received. */
static int epoch_recv(struct ADIOI_BBLOG_state *st, int *any)
{
    int n = st->nprocs - 1, p, k = 0, rc = MPI_SUCCESS;

    for (p = 0; p < st->nprocs; p++)
        if (p != st->rank) {
            MPI_Irecv(&st->epoch_in[k], 1, MPI_INT, p, 0, st->epoch_comm,
                      &st->epoch_reqs[n + k]);
            k++;
        }
    for (k = 0; k < 2 * n; k++) {
        int r = MPI_Wait(&st->epoch_reqs[k], MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = r;
    }
    *any = st->epoch_out;
    for (k = 0; k < n; k++)
        *any |= st->epoch_in[k];
    return rc;
}

static void epoch_send(struct ADIOI_BBLOG_state *st)
{
    int p, k = 0;

    st->epoch_out = st->ls->epoch_small;
    st->ls->epoch_small = 0;
    for (p = 0; p < st->nprocs; p++)
        if (p != st->rank)
            MPI_Isend(&st->epoch_out, 1, MPI_INT, p, 0, st->epoch_comm, &st->epoch_reqs[k++]);
}

static int epoch_due(const struct ADIOI_BBLOG_state *st)
{
    return st->through_only && ADIOI_BBLOG_NO_BG(&st->hints) && !st->hints.debug_no_epoch &&
        st->nprocs > 1 && st->nprocs <= ADIOI_BBLOG_EPOCH_PROCS && st->ls;
}

/* At a sync whose drain found what epoch_due asks, on every process alike. */
static int epoch_start(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    int rc;

    if (st->epoch_comm == MPI_COMM_NULL) {
        rc = MPI_Comm_dup(fd->comm, &st->epoch_comm);
        if (rc != MPI_SUCCESS)
            return rc;
        st->epoch_in = ADIOI_Malloc((size_t) st->nprocs * sizeof(*st->epoch_in));
        st->epoch_reqs = ADIOI_Malloc(2 * (size_t) st->nprocs * sizeof(*st->epoch_reqs));
    }
    st->epoch = 1;
    st->ls->epoch++;
    st->ls->epoch_small = 0;
    epoch_send(st);
    return MPI_SUCCESS;
}

static void epoch_end(struct ADIOI_BBLOG_state *st)
{
    st->epoch = 0;
    st->ls->epoch--;
}

/* Flushes what this process wrote straight to the PFS file, if anything; then its writes up to
 * count w0 are flushed there (when nothing is logged). */
static int flush_through(struct ADIOI_BBLOG_state *st, uint64_t w0)
{
    int err = MPI_SUCCESS;

    if (st->through_unsynced && st->inner->is_open)
        ADIO_Flush(st->inner, &err);
    if (err == MPI_SUCCESS)
        ADIOI_BBLOG_Flushed(st->ls, w0);
    return err;
}

/* A sync in the epoch: the previous sync's flags; 1 when the epoch goes on, and then this
 * process's flush of the PFS file and its flag for the next. */
static int sync_alone(ADIO_File fd, struct ADIOI_BBLOG_state *st, int *error_code)
{
    uint64_t w0 = __atomic_load_n(&st->ls->wgen, __ATOMIC_RELAXED);
    int any = 0;

    *error_code = epoch_recv(st, &any);
    if (*error_code != MPI_SUCCESS || any) {
        epoch_end(st);
        return *error_code != MPI_SUCCESS;
    }
    *error_code = flush_through(st, w0);
    /* What was written through is ordered against logged bytes at a drain; none are logged
     * anywhere now, so the notes go, unless another handle of the file may still drain. */
    ADIOI_BBLOG_Lock(st->ls);
    if (st->ls->refs - (st->ls->bg ? 1 : 0) == 1)
        ADIOI_BBLOG_Order_reset(st->ls);
    ADIOI_BBLOG_Unlock(st->ls);
    st->st.syncs_alone++;
    epoch_send(st);
    return 1;
}

void ADIOI_BBLOG_Epoch_close(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int any;

    if (st->epoch) {            /* the flags of its last sync are in flight */
        epoch_recv(st, &any);
        epoch_end(st);
    }
    if (st->epoch_comm == MPI_COMM_NULL)
        return;
    MPI_Comm_free(&st->epoch_comm);
    ADIOI_Free(st->epoch_in);
    ADIOI_Free(st->epoch_reqs);
    st->epoch_in = NULL;
    st->epoch_reqs = NULL;
}

/* A process with nothing logged flushes what it wrote through before the drain's agreement,
 * while slower processes still write, as each process flushes alone under plain ROMIO; after
 * the agreement every process would flush at once, and the PFS take the flushes together
 * (the first sync of a checkpoint of large blocks: 74 ms against 5 at 4 processes on the
 * GlusterFS stand-in). The drain then finds those writes flushed (drain_nothing). An error is
 * kept for after the drain, which every process must still enter. */
static int flush_early(struct ADIOI_BBLOG_state *st)
{
    int err;

    if (!st->through_unsynced || !st->inner->is_open || !ADIOI_BBLOG_NO_BG(&st->hints) ||
        bblog_idx_count(st->ls->idx) != 0)
        return MPI_SUCCESS;
    err = flush_through(st, __atomic_load_n(&st->ls->wgen, __ATOMIC_RELAXED));
    if (err == MPI_SUCCESS)
        st->through_unsynced = 0;
    return err;
}

void ADIOI_BBLOG_Flush(ADIO_File fd, int *error_code)
{
    static const char myname[] = "ADIOI_BBLOG_FLUSH";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    double t0 = ADIOI_BBLOG_Now();
    int was_epoch;

    *error_code = MPI_SUCCESS;
    if (st->passthrough) {
        ADIO_Flush(st->inner, error_code);
        return;
    }
    ADIOI_BBLOG_Bg_mark(st->ls);     /* a sync ends an I/O phase (pacing) */
    was_epoch = st->epoch;
    if (st->hints.sync_bb) {
        int rc = 0;
        /* What went around the log must be durable too, on the PFS, before the log's PFS
         * records name it (ad_bblog_write.c). */
        if (st->through_unsynced && st->inner->is_open)
            ADIO_Flush(st->inner, error_code);
        ADIOI_BBLOG_Lock(st->ls);
        if (*error_code == MPI_SUCCESS && st->ls->log)
            rc = bblog_log_sync(st->ls->log);
        ADIOI_BBLOG_Unlock(st->ls);
        if (rc != 0)
            *error_code = ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot make the log durable",
                                             bblog_log_meta_path(st->ls->log));
    } else if (!(st->epoch && sync_alone(fd, st, error_code))) {
        int early = flush_early(st);

        *error_code = ADIOI_BBLOG_Drain(fd, 1);
        /* Whether an epoch starts is agreed (epoch_due's inputs are the drain's agreement);
         * a flush that failed on one process must not keep it out of the epoch's start. */
        if (!was_epoch && epoch_due(st)) {
            int rc = epoch_start(fd, st);
            if (*error_code == MPI_SUCCESS)
                *error_code = rc;
        }
        if (*error_code == MPI_SUCCESS)
            *error_code = early;
    }
    if (*error_code == MPI_SUCCESS)
        st->through_unsynced = 0;
    ADIOI_BBLOG_Coll_end(fd, 0, 1);
    st->st.t_sync += ADIOI_BBLOG_Now() - t0;
}
