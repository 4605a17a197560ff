/*
 * MPI_File_sync (collective). bblog_sync=pfs (default): drain every process's log into the inner
 * file and flush it, so data is on the PFS and visible to all after sync-barrier-sync, as on any
 * ROMIO file system. bblog_sync=bb: make the logs durable on the burst buffer only; the data
 * reaches the PFS at a later drain (close at the latest).
 *
 * Data path. Under bblog_sync=bb what this process wrote around its log is flushed to the PFS file
 * first, before the log's records name it (ad_bblog_write.c). Under bblog_sync=pfs with the drain's
 * agreement, a process with nothing logged flushes what it wrote through before the agreement,
 * while slower processes still write, as each process flushes alone under plain ROMIO (RATIONALE:
 * bench/results/rationale.md, early-flush).
 *
 * Collective calls. Like every collective call, a sync orders the writes before it before those
 * after it, across processes (ad_bblog_base_order.c); it is a planning point of background drains,
 * and ends an I/O phase for their pacing.
 *
 * Syncs without an agreement. Where nothing drains in the background, a sync does not start with
 * the drain's MPI_Allgather, which would make every process wait for the slowest writer and leave
 * the sync together with the others: the next phases would then be written by all processes at
 * once, where under plain ROMIO (each process's own fsync) they drift apart and take turns
 * (RATIONALE: bench/results/rationale.md, sync-notes). Instead each process sends every other one
 * its notes of the sync, point to point, on the file's communicator with tags just under
 * MPI_TAG_UB: whether it logged anything, and the pieces (offset, length, stamp) it wrote straight
 * to the PFS since the last drain, with those it logged. A process that logged nothing then flushes
 * its writes to the PFS file and returns at once. A process that logged hears every other process's
 * notes (it waits for all of them to enter the sync). When every process logged, they drain
 * together (two-phase writes of everything). Otherwise it drains its own log alone
 * (ad_bblog_drain.c), leaving out what another process wrote later (a higher stamp, from the
 * notes), flushes, and sends every other process "done". Where nothing is ever logged (every write
 * of bblog_through_threshold or more), a sync is each process's own flush plus 2 x (nprocs - 1)
 * small messages. Only with 2 to ADIOI_BBLOG_NOTES_PROCS processes, and not under
 * BBLOG_DEBUG_SYNC_AGREE=1 (every sync agrees, for comparisons).
 *
 * Invariants. A process that left a sync early learns the notes of that sync at its next write,
 * collective call or close on the file (Notes_settle), and waits there for the "done" of every
 * process that drained alone: so a write made after the sync cannot be overwritten by an older
 * logged byte another process was still draining, and a collective drain never starts while one
 * process's lone drain goes on. After sync-barrier-sync every byte written before the first sync is
 * in the PFS file, as with the agreement: each process's own sync returns only when its bytes are
 * there. The waits are those of a collective call that synchronises, which MPI allows any
 * collective call to do. Sends are kept until they complete, and not waited for before close: a
 * process that has not yet come back to the file may be the one that must receive them.
 *
 * Failures. A process that cannot list its pieces still sends every other process a header, marked
 * failed, and a process that drained alone sends "done" after a failure too, so that no process
 * waits for ever. A process that hears of a failed list fails its sync, the data staying in the
 * logs.
 */
#include <stdlib.h>
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "adioi.h"

#define ADIOI_BBLOG_NOTES_PROCS 256

enum { TAG_HEAD, TAG_PIECES, TAG_DONE, TAGS };
_Static_assert(TAGS == ADIOI_BBLOG_NOTES_TAGS, "the sparse exchanges' tags lie below these");
enum { H_LOGGED, H_FAILED, H_N, H_WORDS };

/* Sends in flight, kept until they complete: a sync's notes to every other process, or its
 * "done". Never waited for before close: a process that has not yet come back to the file
 * may be the one that must receive them. */
struct ADIOI_BBLOG_batch {
    struct ADIOI_BBLOG_batch *next;
    int n;                      /* requests */
    MPI_Request *reqs;
    uint64_t words[];
};

static struct ADIOI_BBLOG_batch *batch_new(size_t words, int nreq)
{
    struct ADIOI_BBLOG_batch *b = malloc(sizeof(*b) + words * sizeof(uint64_t));

    if (!b)
        return NULL;
    b->reqs = malloc((size_t) (nreq > 0 ? nreq : 1) * sizeof(*b->reqs));
    if (!b->reqs) {
        free(b);
        return NULL;
    }
    b->n = 0;
    b->next = NULL;
    return b;
}

static void batches_reap(struct ADIOI_BBLOG_state *st, int wait)
{
    struct ADIOI_BBLOG_batch **pb = &st->notes_sends;

    while (*pb) {
        struct ADIOI_BBLOG_batch *b = *pb;
        int done = 1, i;
        for (i = 0; i < b->n && done; i++) {
            /* A send that failed needs nothing more here: the receive it was for fails. */
            if (wait)
                (void) ADIOI_BBLOG_Wait_idle(&b->reqs[i]);
            else
                MPI_Test(&b->reqs[i], &done, MPI_STATUS_IGNORE);
        }
        if (!done) {
            pb = &b->next;
            continue;
        }
        *pb = b->next;
        free(b->reqs);
        free(b);
    }
}

/* Sends b's first n words with tag to every other process. */
static int send_others(struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_batch *b,
                       const uint64_t *w, int n, int tag)
{
    int p, rc = MPI_SUCCESS;

    for (p = 0; p < st->nprocs && rc == MPI_SUCCESS; p++)
        if (p != st->rank)
            rc = MPI_Isend(w, n, MPI_UINT64_T, p, st->notes_tag + tag, st->notes_comm,
                           &b->reqs[b->n++]);
    return rc;
}

static int recv_idle(struct ADIOI_BBLOG_state *st, void *buf, int n, int p, int tag)
{
    MPI_Request rq;
    int rc = MPI_Irecv(buf, n, MPI_UINT64_T, p, st->notes_tag + tag, st->notes_comm, &rq);

    return rc == MPI_SUCCESS ? ADIOI_BBLOG_Wait_idle(&rq) : rc;
}

/* Process p's notes of the last notes sync: its header, and its pieces appended to *pcs
 * (n triples, room for cap) or dropped when pcs is NULL. */
static int recv_notes(struct ADIOI_BBLOG_state *st, int p, uint64_t *head, uint64_t **pcs,
                      size_t *n, size_t *cap)
{
    uint64_t *buf;
    int rc = recv_idle(st, head, H_WORDS, p, TAG_HEAD);

    if (rc != MPI_SUCCESS || head[H_N] == 0)
        return rc;
    buf = malloc(3 * head[H_N] * sizeof(*buf));
    if (!buf)
        return ADIOI_BBLOG_Err("ADIOI_BBLOG_FLUSH", __LINE__, MPI_ERR_NO_MEM, "bblog: out of "
                               "memory for another process's notes of a sync of %s",
                               st->pfs_path);
    rc = recv_idle(st, buf, (int) (3 * head[H_N]), p, TAG_PIECES);
    if (rc == MPI_SUCCESS && pcs) {
        if (bblog_grow((void **) pcs, cap, *n + head[H_N], 3 * sizeof(**pcs)) != 0)
            head[H_FAILED] = 1;
        else {
            memcpy(*pcs + 3 * *n, buf, 3 * head[H_N] * sizeof(*buf));
            *n += head[H_N];
        }
    }
    free(buf);
    return rc;
}

/* The rest of the last notes sync: the notes not heard yet, then the "done" of every process
 * that drained alone in it (some process logged and some did not). */
int ADIOI_BBLOG_Notes_settle(struct ADIOI_BBLOG_state *st)
{
    int p, any = 0, all = 1, rc = MPI_SUCCESS;
    double t0;

    if (!st->notes_pending)
        return MPI_SUCCESS;
    t0 = ADIOI_BBLOG_Now();
    st->notes_pending = 0;
    for (p = 0; p < st->nprocs; p++) {
        if (!st->notes_heard[p] && rc == MPI_SUCCESS) {
            uint64_t head[H_WORDS];
            rc = recv_notes(st, p, head, NULL, NULL, NULL);
            st->notes_logged[p] = rc == MPI_SUCCESS && head[H_LOGGED] != 0;
            st->notes_heard[p] = 1;
        }
        any |= st->notes_logged[p];
        all &= st->notes_logged[p];
    }
    for (p = 0; any && !all && p < st->nprocs && rc == MPI_SUCCESS; p++)
        if (p != st->rank && st->notes_logged[p]) {
            uint64_t done;
            rc = recv_idle(st, &done, 1, p, TAG_DONE);
        }
    batches_reap(st, 0);
    st->stats.t_settle += ADIOI_BBLOG_Now() - t0;
    return rc;
}

static int notes_due(const struct ADIOI_BBLOG_state *st)
{
    return ADIOI_BBLOG_NO_BG(&st->hints) && !st->hints.debug_sync_agree && st->nprocs > 1 &&
        st->nprocs <= ADIOI_BBLOG_NOTES_PROCS && st->ls;
}

/* The notes travel on the file's own communicator, with the largest tags MPI allows: no
 * communicator of their own (a collective call to make, a context id held per open file; a
 * MPI_Comm_dup at the first sync lined the processes up there: a checkpoint of large blocks at
 * 4 processes, first sync 65-75 ms against plain ROMIO's 2), and no message of ROMIO's on it
 * can match them (its two-phase exchanges, and the ordered modes, use small tags from given
 * sources; the driver sends nothing else there). */
static void notes_start(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    st->notes_tag = ADIOI_BBLOG_Tag(TAGS - 1);
    st->notes_comm = fd->comm;
    st->notes_heard = ADIOI_Malloc((size_t) st->nprocs);
    st->notes_logged = ADIOI_Malloc((size_t) st->nprocs);
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

/* This process's notes of a sync, sent to every other process: the header, then the pieces
 * written through since the last drain and, when it logged, those in its log. */
static int send_notes(struct ADIOI_BBLOG_state *st, int logged)
{
    uint64_t *mine = NULL, *w;
    size_t nmine = 0, n, i;
    int failed = 0, rc;
    struct ADIOI_BBLOG_batch *b;

    if (logged)
        failed = ADIOI_BBLOG_Drain_pieces(st, &mine, &nmine) != 0;
    n = failed ? 0 : st->ls->nthrough + nmine;
    if (3 * n > INT_MAX)
        failed = 1, n = 0;
    b = batch_new(H_WORDS + 3 * n, 2 * (st->nprocs - 1));
    if (!b) {
        /* The others wait for a header all the same: a failed one, sent from static memory
         * (small enough to leave at once). */
        static const uint64_t no_notes[2][H_WORDS] = { {0, 1, 0}, {1, 1, 0} };
        int p;
        free(mine);
        for (p = 0; p < st->nprocs; p++)
            if (p != st->rank)
                MPI_Send(no_notes[logged], H_WORDS, MPI_UINT64_T, p, st->notes_tag + TAG_HEAD,
                         st->notes_comm);
        return ADIOI_BBLOG_Err("ADIOI_BBLOG_FLUSH", __LINE__, MPI_ERR_NO_MEM, "bblog: out of "
                               "memory for the notes of a sync of %s", st->pfs_path);
    }
    w = b->words;
    w[H_LOGGED] = (uint64_t) logged;
    w[H_FAILED] = (uint64_t) failed;
    w[H_N] = n;
    for (i = 0; n > 0 && i < st->ls->nthrough; i++, w += 3) {
        w[H_WORDS] = st->ls->through[i].off;
        w[H_WORDS + 1] = st->ls->through[i].len;
        w[H_WORDS + 2] = st->ls->through[i].stamp;
    }
    if (n > 0 && nmine > 0)
        memcpy(w + H_WORDS, mine, 3 * nmine * sizeof(*mine));
    free(mine);
    rc = send_others(st, b, b->words, H_WORDS, TAG_HEAD);
    if (rc == MPI_SUCCESS && n > 0)
        rc = send_others(st, b, b->words + H_WORDS, (int) (3 * n), TAG_PIECES);
    b->next = st->notes_sends;
    st->notes_sends = b;
    return rc;
}

/* A sync without the agreement (above). */
static int sync_notes(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    static const uint64_t done = 1;
    uint64_t w0 = __atomic_load_n(&st->ls->wgen, __ATOMIC_RELAXED), *others = NULL;
    size_t nothers = 0, cap = 0;
    int logged = bblog_idx_count(st->ls->idx) != 0, all = 1, failed = 0, p, rc;
    struct ADIOI_BBLOG_order later;
    struct ADIOI_BBLOG_batch *b;

    if (st->notes_comm == MPI_COMM_NULL)
        notes_start(fd, st);
    rc = send_notes(st, logged);
    memset(st->notes_heard, 0, (size_t) st->nprocs);
    st->notes_heard[st->rank] = 1;
    st->notes_logged[st->rank] = (unsigned char) logged;
    st->notes_pending = 1;
    if (!logged) {
        int frc = flush_through(st, w0);
        /* Its notes went out: a process that drains alone leaves out what they list, and
         * later logged bytes are stamped after them. Kept while another handle of the file
         * may still drain. */
        ADIOI_BBLOG_Lock(st->ls);
        if (st->ls->refs - (st->ls->bg ? 1 : 0) == 1)
            ADIOI_BBLOG_Order_reset(st->ls);
        ADIOI_BBLOG_Unlock(st->ls);
        st->stats.syncs_alone++;
        return rc != MPI_SUCCESS ? rc : frc;
    }
    /* Logged: hear everyone's notes of this sync. */
    for (p = 0; p < st->nprocs && rc == MPI_SUCCESS; p++) {
        uint64_t head[H_WORDS];
        if (p == st->rank)
            continue;
        rc = recv_notes(st, p, head, &others, &nothers, &cap);
        st->notes_heard[p] = 1;
        st->notes_logged[p] = (unsigned char) (head[H_LOGGED] != 0);
        all &= head[H_LOGGED] != 0;
        failed |= head[H_FAILED] != 0;
    }
    if (rc != MPI_SUCCESS) {
        free(others);
        return rc;
    }
    if (all) {                  /* every process is here: the collective drain */
        free(others);
        st->notes_pending = 0;
        return ADIOI_BBLOG_Drain(fd, 1);
    }
    if (failed)
        rc = ADIOI_BBLOG_Err("ADIOI_BBLOG_FLUSH", __LINE__, MPI_ERR_NO_MEM, "bblog: a process "
                             "of %s could not list what it wrote for a sync (out of memory); "
                             "the data stays in the logs under %s", st->pfs_path, st->logdir);
    else if ((rc = ADIOI_BBLOG_Order_set(&later, others, nothers)) != 0)
        rc = ADIOI_BBLOG_Err("ADIOI_BBLOG_FLUSH", __LINE__, MPI_ERR_NO_MEM, "bblog: out of "
                             "memory ordering the sync of %s", st->pfs_path);
    else {
        rc = ADIOI_BBLOG_Drain_alone(fd, &later);
        ADIOI_BBLOG_Order_fini(&later);
    }
    free(others);
    st->stats.syncs_alone++;
    /* Done, even after a failure: the others must not wait for ever. */
    b = batch_new(0, st->nprocs - 1);
    if (!b)
        return ADIOI_BBLOG_Err("ADIOI_BBLOG_FLUSH", __LINE__, MPI_ERR_NO_MEM, "bblog: out of "
                               "memory ending the sync of %s", st->pfs_path);
    p = send_others(st, b, &done, 1, TAG_DONE);
    b->next = st->notes_sends;
    st->notes_sends = b;
    return rc != MPI_SUCCESS ? rc : p;
}

void ADIOI_BBLOG_Notes_close(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    if (st->notes_comm == MPI_COMM_NULL)
        return;
    ADIOI_BBLOG_Notes_settle(st);
    batches_reap(st, 1);        /* every other process settles in its close too */
    st->notes_comm = MPI_COMM_NULL;
    ADIOI_Free(st->notes_heard);
    ADIOI_Free(st->notes_logged);
    st->notes_heard = NULL;
    st->notes_logged = NULL;
}

/* A process with nothing logged flushes what it wrote through before the drain's agreement,
 * while slower processes still write, as each process flushes alone under plain ROMIO; after
 * the agreement every process would flush at once, and the PFS take the flushes together
 * (RATIONALE: bench/results/rationale.md, early-flush). The drain then finds those writes
 * flushed (drain_nothing). An error is
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
    int serr;

    *error_code = MPI_SUCCESS;
    if (st->passthrough) {
        ADIO_Flush(st->inner, error_code);
        return;
    }
    ADIOI_BBLOG_Bg_phase_end(st->ls);     /* a sync ends an I/O phase (pacing) */
    serr = ADIOI_BBLOG_Notes_settle(st);
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
    } else if (notes_due(st)) {
        *error_code = sync_notes(fd, st);
    } else {
        int early = flush_early(st);

        *error_code = ADIOI_BBLOG_Drain(fd, 1);
        if (*error_code == MPI_SUCCESS)
            *error_code = early;
    }
    if (*error_code == MPI_SUCCESS)
        *error_code = serr;
    if (*error_code == MPI_SUCCESS)
        st->through_unsynced = 0;
    ADIOI_BBLOG_Coll_end(fd, 0, 1);
    st->stats.t_sync += ADIOI_BBLOG_Now() - t0;
}
