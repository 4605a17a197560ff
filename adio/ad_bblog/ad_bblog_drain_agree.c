/*
 * The collective drain's agreements (ad_bblog_drain.c): what every process knows alike at its
 * start, and the file's growth to the logged end.
 *
 * Owns. Drain_agree_start: each process's summary (its logged range, bytes, flags, check word)
 * reduced across the processes in one MPI_Allreduce (an MPI_Allgather on one node with the node
 * exchange, which needs each process's flags), from which every process computes the same plan,
 * path and rounds.
 * Drain_check: the word a process sends with each agreement, from the open, the drain, the
 * agreement and the rank, so that an agreement that missed a process (a dead one) does not add
 * up. Drain_grow: the first aggregator grows the file to the greatest logged end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_drain_priv.h"
#include "adioi.h"

/* end: the greatest end of logged data over all processes (agreed by the caller). The first
 * aggregator checks the size and grows the file. With the POSIX inner drivers (ROMIO's generic
 * resize: ufs, lustre, gpfs) it calls ftruncate itself, as that resize would, and nobody
 * waits for it here: before any process writes a byte of a round it passes a collective call
 * that the first aggregator enters only after the truncate (the round's MPI_Allreduce, or,
 * in a drain of one round, the node exchange's MPI_Allgather or the two-phase write's own
 * exchanges); a failure is its own, and the drain's final agreement makes it fail on every
 * process. Other drivers resize collectively. */
int ADIOI_BBLOG_Drain_grow(ADIO_File fd, struct ADIOI_BBLOG_state *st, uint64_t end)
{
    static const char myname[] = "ADIOI_BBLOG_DRAIN";
    int root = st->inner->hints->ranklist[0], err = MPI_SUCCESS;
    int posix = st->inner->fns->ADIOI_xxx_Resize == ADIOI_GEN_Resize;
    long long grow = 0;

    if (st->rank == root) {
        ADIO_Fcntl_t fc;
        /* The first aggregator has the inner file open even under deferred open. */
        ADIO_Fcntl(st->inner, ADIO_FCNTL_GET_FSIZE, &fc, &err);
        grow = err == MPI_SUCCESS && (uint64_t) fc.fsize < end;
        if (posix && grow && ftruncate(st->inner->fd_sys, (off_t) end) != 0)
            err = ADIOI_BBLOG_Err_rc(myname, __LINE__, errno, "cannot grow", st->pfs_path);
    }
    if (posix)
        return err;
    if (ADIOI_BBLOG_Bcast(&grow, 1, MPI_LONG_LONG, root, fd->comm) != MPI_SUCCESS)
        return err != MPI_SUCCESS ? err : ADIOI_BBLOG_Err_rc(myname, __LINE__, ADIOI_BBLOG_ECOLL,
                                                             "cannot grow", st->pfs_path);
    if (grow)
        ADIO_Resize(st->inner, (ADIO_Offset) end, &err);
    return err;
}

/*
 * A drain's agreements carry a check word from every process. MPI does not always fail a
 * collective call on the survivors when a process of the file dies during it: under MPICH's
 * ch3 device, with the processes of one node killed in the middle of a drain, the drain's last
 * MPI_Allreduce returned MPI_SUCCESS on the other node's processes, which had never heard from
 * them, and ROMIO's two-phase write before it had gone on without their data; the survivors
 * marked their logs drained and MPI_File_sync succeeded over bytes that never reached the PFS
 * (run-crash.sh on the emulated cluster). The word of a process depends on the open (its set
 * id), the drain (drain_seq, which every process counts alike: drains are collective), the
 * agreement (phase) and the rank, so an agreement that missed a process, or took a word sent
 * for another call, does not add up to what every process can compute alone.
 */
uint64_t ADIOI_BBLOG_Drain_check(const struct ADIOI_BBLOG_state *st, int phase, int rank)
{
    uint64_t x = st->set_id ^ (st->drain_seq * 4 + (uint64_t) phase) * UINT64_C(0x9E3779B97F4A7C15)
        ^ ((uint64_t) rank + 1) * UINT64_C(0xC2B2AE3D27D4EB4F);

    /* splitmix64's finaliser: unrelated words for neighbouring inputs */
    x ^= x >> 30;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 27;
    x *= UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

/* A process's summary at the start of a drain, and the job's: the first three words summed,
 * the next five at their largest, two at their smallest, the node flags or'ed, and G_DISJ
 * whether the ranges [G_LO, G_HI) are disjoint and in rank order. */
enum { G_BYTES, G_COUNT, G_CHECK, G_FAILED, G_SHI, G_END, G_HI, G_SNAP, G_SLO, G_LO, G_NODE,
    G_DISJ, G_N };

/* b becomes the summary of a's processes followed by b's (a: lower ranks). Associative, not
 * commutative: MPI applies it in rank order. */
static void fold(const uint64_t *a, uint64_t *b)
{
    int i;

    b[G_DISJ] = a[G_DISJ] && b[G_DISJ] &&
        (a[G_LO] >= a[G_HI] || b[G_LO] >= b[G_HI] || a[G_HI] <= b[G_LO]);
    for (i = G_BYTES; i <= G_CHECK; i++)
        b[i] += a[i];
    for (i = G_FAILED; i <= G_SNAP; i++)
        b[i] = a[i] > b[i] ? a[i] : b[i];
    for (i = G_SLO; i <= G_LO; i++)
        b[i] = a[i] < b[i] ? a[i] : b[i];
    b[G_NODE] |= a[G_NODE];
}

static void fold_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    int v;

    (void) type;
    for (v = 0; v < *len; v++)
        fold((const uint64_t *) in + (size_t) v * G_N, (uint64_t *) inout + (size_t) v * G_N);
}

static int by_lo(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;

    return x[G_LO] < y[G_LO] ? -1 : x[G_LO] > y[G_LO];
}

/* Whether the np processes' ranges [G_LO, G_HI) in all are disjoint, in any order (sorts all
 * by them). */
static int disjoint(uint64_t *all, int np)
{
    uint64_t reach = 0;
    int p;

    qsort(all, (size_t) np, G_N * sizeof(*all), by_lo);
    for (p = 0; p < np; p++) {
        const uint64_t *g = all + (size_t) p * G_N;
        if (g[G_LO] >= g[G_HI])
            continue;           /* nothing logged or written through */
        if (g[G_LO] < reach)
            return 0;
        reach = g[G_HI] > reach ? g[G_HI] : reach;
    }
    return 1;
}

/* The one-node form of the agreement: an MPI_Allgather of every process's summary, folded
 * here, each check word checked, the ranges' disjointness in any order, and each process's node
 * flags (the node is every process). */
static void agree_gathered(ADIO_File fd, struct ADIOI_BBLOG_state *st, const uint64_t *mine,
                           uint64_t *res, struct agreed *ag)
{
    uint64_t *all = ADIOI_Malloc((size_t) st->nprocs * G_N * sizeof(*all));
    int p;

    if (ADIOI_BBLOG_Allgather(mine, G_N, MPI_UINT64_T, all, G_N, MPI_UINT64_T, fd->comm) !=
        MPI_SUCCESS)
        memset(all, 0xff, (size_t) st->nprocs * G_N * sizeof(*all));  /* lost, below */
    memcpy(res, all, G_N * sizeof(*res));
    for (p = 1; p < st->nprocs; p++) {
        uint64_t next[G_N];
        memcpy(next, all + (size_t) p * G_N, sizeof(next));
        fold(res, next);
        memcpy(res, next, sizeof(next));
    }
    ag->node = malloc((size_t) st->nprocs);
    for (p = 0; p < st->nprocs; p++) {
        const uint64_t *g = all + (size_t) p * G_N;
        ag->lost |= g[G_CHECK] != ADIOI_BBLOG_Drain_check(st, CHECK_START, p);
        if (ag->node)
            ag->node[p] = (unsigned char) g[G_NODE];
    }
    ag->disjoint = disjoint(all, st->nprocs);
    ADIOI_Free(all);
}

/* Across nodes: one MPI_Allreduce of the summaries with fold, the check words' sum against the
 * sum every process can compute; then, where the node exchange is to run, the node's flags
 * from the node's processes only. */
static void agree_reduced(ADIO_File fd, struct ADIOI_BBLOG_state *st, const uint64_t *mine,
                          int staged, uint64_t *res, struct agreed *ag)
{
    MPI_Datatype vec;
    MPI_Op op;
    uint64_t want = 0;
    int p, rc;

    MPI_Type_contiguous(G_N, MPI_UINT64_T, &vec);
    MPI_Type_commit(&vec);
    MPI_Op_create(fold_op, 0, &op);
    rc = ADIOI_BBLOG_Allreduce(mine, res, 1, vec, op, fd->comm);
    MPI_Op_free(&op);
    MPI_Type_free(&vec);
    for (p = 0; p < st->nprocs; p++)
        want += ADIOI_BBLOG_Drain_check(st, CHECK_START, p);
    ag->lost = rc != MPI_SUCCESS || res[G_CHECK] != want;
    ag->disjoint = res[G_DISJ] != 0;
    if (staged && !ag->lost &&
        !(res[G_NODE] & (ADIOI_BBLOG_NODE_NONE | ADIOI_BBLOG_NODE_UNSTAGED)) &&
        ADIOI_BBLOG_Node_flags(fd, (unsigned) mine[G_NODE], &ag->node) != MPI_SUCCESS) {
        free(ag->node);         /* no node exchange: Node_prepare fails, and says so */
        ag->node = NULL;
    }
}

/* Each process brings its totals, stamps and the range of the file its pieces span (bytes
 * written through included); every process then learns the same sums, extremes and whether
 * those ranges are disjoint (IOR segmented: each process its own block), in which case no
 * piece can hide another process's and the drain needs no Order exchange. Across nodes, one
 * MPI_Allreduce (a rank's share does not grow with the job; disjoint only in rank order, else
 * the sparse Order exchange runs) and the node's flags on the node; on one node with the node
 * exchange, one MPI_Allgather, the node's own, which brings the node's flags in the same call
 * (a reduction would need a second call there). */
void ADIOI_BBLOG_Drain_agree_start(ADIO_File fd, struct ADIOI_BBLOG_state *st, int rc,
                                   const struct bblog_seg *segs, size_t n, uint64_t slo,
                                   uint64_t shi, int staged, unsigned node, int alone,
                                   struct agreed *ag)
{
    uint64_t mine[G_N], res[G_N];
    size_t i;

    mine[G_BYTES] = bblog_idx_bytes(st->ls->idx);
    mine[G_COUNT] = bblog_idx_count(st->ls->idx);
    mine[G_FAILED] = rc != 0;
    mine[G_SLO] = rc == 0 ? slo : UINT64_MAX;
    mine[G_SHI] = rc == 0 ? shi : 0;
    mine[G_END] = bblog_idx_end(st->ls->idx);
    mine[G_LO] = UINT64_MAX;
    mine[G_HI] = 0;
    mine[G_SNAP] = 0;
    mine[G_CHECK] = ADIOI_BBLOG_Drain_check(st, CHECK_START, st->rank);
    mine[G_NODE] = node;
    mine[G_DISJ] = 1;
    for (i = 0; rc == 0 && i < n + st->ls->nthrough; i++) {
        uint64_t off = i < n ? segs[i].off : st->ls->through[i - n].off;
        uint64_t end = off + (i < n ? segs[i].len : st->ls->through[i - n].len);
        if (i < n)
            mine[G_SNAP] += segs[i].len;
        mine[G_LO] = off < mine[G_LO] ? off : mine[G_LO];
        mine[G_HI] = end > mine[G_HI] ? end : mine[G_HI];
    }
    memset(ag, 0, sizeof(*ag));
    if (alone) {
        memcpy(res, mine, sizeof(res));
        ag->disjoint = 1;
    } else if (staged && ADIOI_BBLOG_Node_is_all(st)) {
        agree_gathered(fd, st, mine, res, ag);
    } else {
        agree_reduced(fd, st, mine, staged, res, ag);
    }
    if (ag->lost) {
        /* Plan nothing from such sums (a size to grow the file to, above all), and fail as
         * after a failed snapshot: every process still takes part, with nothing. */
        free(ag->node);
        memset(ag, 0, sizeof(*ag));
        ag->count = 1;
        ag->failed = 1;
        ag->lost = 1;
        ag->disjoint = 1;
        return;
    }
    ag->bytes = res[G_BYTES];
    ag->count = res[G_COUNT];
    ag->failed = res[G_FAILED] != 0;
    ag->slo = res[G_SLO];
    ag->shi = res[G_SHI];
    ag->end = res[G_END];
    ag->lo = res[G_LO];
    ag->hi = res[G_HI];
    ag->most = res[G_SNAP];
    ag->node_none = (res[G_NODE] & ADIOI_BBLOG_NODE_NONE) != 0;
    ag->node_unstaged = (res[G_NODE] & ADIOI_BBLOG_NODE_UNSTAGED) != 0;
}
