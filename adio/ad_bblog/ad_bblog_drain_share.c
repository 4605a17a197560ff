/*
 * Node-level aggregation of a drain round through the burst buffer (DESIGN.md section 6, hint
 * bblog_node_exchange), and the slots of bblog_mapping=node's log pairs (Node_slot).
 *
 * Data path. The processes of one node share its burst buffer: each can read the others' data logs
 * (files in the same per-user directory, or in per-process directories on the node). So the first
 * phase of the drain's two-phase write needs no messages inside a node: the node's first process
 * reads the lists of the others' pieces of the round, splits the node's bytes of the round into
 * equal shares in file order (or chunks) and leaves them where the others read them, and each
 * reads its share straight from the logs that hold it, one preadv per run of log-contiguous
 * pieces. A share is contiguous in the file wherever the node's
 * data is dense, so what reaches ROMIO's collective write is one large piece per process: with one
 * node ROMIO finds nothing interleaved and writes each share with one call; with several nodes its
 * two-phase exchange moves node-sized pieces between them. On one node, with the logs in memory and
 * ROMIO's generic pwrite below, the processes write their chunks to the PFS straight from the
 * mapped logs (map_log), without reading them first, taking the chunks in turn from a counter that
 * the node's processes map.
 *
 * Why. Moving the data through MPI instead costs two copies through shared memory, with sender and
 * receiver both running (RATIONALE: bench/results/rationale.md, node-exchange).
 *
 * Files. In the burst-buffer directory, named after the log's name: LOGNAME.list, each process's
 * piece lists of the rounds (only their counts go through MPI) and, in the node's first
 * process's, the parts it cut for all (Node_share), and TOKEN.claim, the chunk counter
 * of a one-node drain, made by the node's first process. Each name is removed once every process
 * has opened it. A process holds the node's logs open only during a drain (Node_end), so at most
 * one node's worth of descriptors at a time.
 *
 * Collective calls. Node_share is collective over the node, once per round, on every process, after
 * a failure too (with nothing): an MPI_Allgather of counts, then an MPI_Bcast of the first
 * process's word that the parts are there (or MPI_Allgatherv of the lists without list files).
 * Making the node's communicator, the first time a drain, a planning point or the open needs it,
 * is collective over the file's.
 *
 * Invariants. Every process of the node reads the same parts (cut once, or by each from the same
 * lists). A process that cannot map the chunk counter writes an equal run of the chunks
 * instead: the others still take every chunk in turn, so such a run is written twice, with the
 * same bytes.
 *
 * Failures. A list or part that cannot be read, or counts that did not come, leave this
 * process's share empty and fail the drain at its end (the agreement of all); the first
 * process's failure to cut reaches every process in the broadcast. A process without the node state does
 * without the node exchange, and the drain's agreements make every process do so.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_drain.h"
#include "adioi.h"
#include "bblog_io.h"
#include "bblog_plan.h"

struct ADIOI_BBLOG_node {
    MPI_Comm comm;              /* the processes of the file's communicator on this node */
    int own_comm;               /* comm was made here (else it is the file's own) */
    int size, rank;
    int *ranks;                 /* the rank in the file's communicator of each */
    int stage_ok;               /* this drain's Node_stage flushed the log */
    int prepared;               /* this drain's Node_prepare ran: every process mapped the
                                 * counter it could */
    int *fds;                   /* during a drain: their data logs, read-only; -1: none */
    uint64_t *bases;            /* where each one's data log starts in that file */
    int *pair;                  /* bblog_mapping=node: per process, its node's first rank, its
                                 * slot and the node's slots (0: a log of its own); else NULL */
    int *counts, *displs;       /* per round: allgatherv of the pieces */
    /* One node: the round's chunks are taken in turn from a counter in a shared mapping. */
    int claim;                  /* 1: counter mapped; 0: not tried yet; -1: none */
    uint64_t *ctr;
    char *claim_path;           /* the node's first process, until all have mapped it */
    /* During a drain: the round's piece lists pass through one file per process. */
    int list_fd;                /* this process's list file, -1: none */
    char *list_path;            /* its name, until every process has opened it */
    int *lfds;                  /* the others' list files, read-only */
    int lists_ok;               /* all of them open */
    int *pairs;                 /* per round: (count, list written, counter mapped) of each */
    int all_claim;              /* this round: every process mapped the counter */
    uint32_t rests;             /* Node_await_chunks calls so far (the same in every process) */
    /* During a drain on a burst buffer in memory: the logs mapped (NULL: not), see map_log. */
    char **maps;
    size_t *map_len;
};

#define CLAIM_SIZE 4096

/* Removes a name this process made (the list file, the counter) once the others have opened
 * it; NULL: nothing (left) to remove. */
static void drop_name(char **path)
{
    if (*path) {
        unlink(*path);
        free(*path);
        *path = NULL;
    }
}

void ADIOI_BBLOG_Node_free(struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_node *nd = st->node;

    if (!nd)
        return;
    ADIOI_BBLOG_Node_end(st);
    drop_name(&nd->claim_path);
    if (nd->claim > 0)
        munmap(nd->ctr, CLAIM_SIZE);
    if (nd->own_comm)
        MPI_Comm_free(&nd->comm);
    free(nd->ranks);
    free(nd->fds);
    free(nd->lfds);
    free(nd->maps);
    free(nd->map_len);
    free(nd->bases);
    if (nd->pair)
        ADIOI_Free(nd->pair);
    free(nd->pairs);
    free(nd->counts);
    free(nd->displs);
    free(nd);
    st->node = NULL;
}

/* After a drain: the peers' logs are closed again, so that a process holds at most one node's
 * worth of descriptors at a time, whatever the number of files it has open. */
void ADIOI_BBLOG_Node_end(struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_node *nd = st->node;
    int i;

    if (!nd)
        return;
    for (i = 0; nd->fds && i < nd->size; i++) {
        if (nd->maps[i])
            munmap(nd->maps[i], nd->map_len[i]);
        nd->maps[i] = NULL;
        if (nd->fds[i] >= 0)
            close(nd->fds[i]);
        if (nd->lfds[i] >= 0)
            close(nd->lfds[i]);
        nd->fds[i] = nd->lfds[i] = -1;
    }
    if (nd->list_fd >= 0)
        close(nd->list_fd);
    nd->list_fd = -1;
    drop_name(&nd->list_path);
    /* The counter's name stays until a drain in which every process had the chance to map
     * it (one that used the node exchange), or until the handle's end (Node_free). */
    if (nd->prepared)
        drop_name(&nd->claim_path);
    nd->prepared = 0;
}

/*
 * The chunk counter of a one-node drain: 8 bytes in a file of the burst-buffer directory,
 * mapped by every process of the node. The node's first process creates it (space allocated,
 * so that no access can fault on a full device) before the drain's starting MPI_Allgather,
 * which says it did; the others map it after that call (Node_prepare), and the first process
 * removes its name once they have, so no crash leaves it behind but in that window. A
 * process that cannot map it writes an equal run of the chunks instead (Node_claim): the
 * others still take every chunk in turn, so such a run is written twice, with the same bytes.
 * A counter costs no collective call; MPI_Win_allocate_shared cost 40-50 ms per file here.
 * BBLOG_DEBUG_STATIC_CHUNKS=1 (the same in all processes) makes every process go without,
 * for the tests of that path.
 */
/* The length of the log name without its ".rRANK": the same in every process of the open. */
static int token_len(const struct ADIOI_BBLOG_state *st)
{
    const char *dot = strrchr(st->log_name, '.');

    return dot ? (int) (dot - st->log_name) : (int) strlen(st->log_name);
}

static char *claim_name(const struct ADIOI_BBLOG_state *st)
{
    int n = token_len(st);
    size_t len = strlen(st->logdir) + (size_t) n + 16;
    char *path = malloc(len);

    if (path)
        snprintf(path, len, "%s/%.*s.claim", st->logdir, n, st->log_name);
    return path;
}

/* The node's first process makes the counter (path NULL) in Node_stage; the others map it
 * (path: claim_name) in Node_prepare, when the first process's flags say it made one. A name
 * of an earlier crash is never taken for the counter: O_EXCL. */
static void claim_map(const struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_node *nd,
                      const char *path)
{
    int create = path == NULL, fd;
    char *mine = NULL;
    void *m = MAP_FAILED;

    nd->claim = -1;
    /* Across nodes a mapping is no place for a counter: updates made on one node need not be
     * seen on another, nor be atomic with theirs (a shared burst buffer). */
    if (st->hints.debug_static_chunks || !st->one_node)
        return;
    if (create && !(path = mine = claim_name(st)))
        return;
    if (!path)
        return;
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT | O_EXCL : 0), 0600);
    if (fd >= 0 && (!create || posix_fallocate(fd, 0, CLAIM_SIZE) == 0))
        m = mmap(NULL, CLAIM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0)
        close(fd);
    if (m != MAP_FAILED) {
        nd->ctr = m;
        nd->claim = 1;
    }
    if (create && fd >= 0)
        nd->claim_path = mine;  /* removed once every process has mapped it */
    else
        free(mine);
    if (create && m == MAP_FAILED)
        drop_name(&nd->claim_path);
}

/* Chunk k * n / size of n, without overflow. */
static uint64_t chunk_bound(uint64_t n, int k, int size)
{
    return n / (uint64_t) size * (uint64_t) k + n % (uint64_t) size * (uint64_t) k /
        (uint64_t) size;
}

uint64_t ADIOI_BBLOG_Node_claim(const struct ADIOI_BBLOG_state *st, uint64_t n, uint64_t *next)
{
    const struct ADIOI_BBLOG_node *nd = st->node;
    uint64_t c;

    if (nd->claim > 0) {
        c = __atomic_fetch_add(nd->ctr, 1, __ATOMIC_SEQ_CST);
        return c < n ? c : n;
    }
    /* Without the counter: an equal run of the chunks per process, in order (*next - 1 is
     * the next one). */
    if (*next == 0)
        *next = chunk_bound(n, nd->rank, nd->size) + 1;
    c = (*next)++ - 1;
    return c < chunk_bound(n, nd->rank + 1, nd->size) ? c : n;
}

/*
 * The end of a one-node round's chunks: waits, asleep, until every process of the node has
 * written its last chunk, on the word after the chunk counter. A process waiting inside MPI
 * spins: the last chunks, written while the others wait in the round's next collective call,
 * had to share the processors with them, and the PFS client most of all (RATIONALE:
 * bench/results/rationale.md, node-rest). When every process arrives here, that call finds
 * them all.
 * Without the counter in every process of the node (Node_share tells), nothing to do.
 */
void ADIOI_BBLOG_Node_await_chunks(struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_node *nd = st->node;
    uint32_t *word, target, v;

    if (!nd || !nd->all_claim)         /* all_claim: this process mapped it too */
        return;
    word = (uint32_t *) (nd->ctr + 1);
    target = ++nd->rests * (uint32_t) nd->size;        /* wraps alike everywhere */
    v = __atomic_add_fetch(word, 1, __ATOMIC_SEQ_CST);
    if (v == target) {
        syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
        return;
    }
    while ((int32_t) (v - target) < 0) {
        /* A wake-up can be missed only by a waiter that read the word before the last
         * arrival; the timeout bounds that, and FUTEX_WAIT returns at once if the word moved. */
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        syscall(SYS_futex, word, FUTEX_WAIT, v, &ts, NULL, 0);
        v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    }
}

int ADIOI_BBLOG_Node_size(const struct ADIOI_BBLOG_state *st)
{
    return st->node ? st->node->size : 1;
}

/* Whether the node's communicator is the file's own (node_new): one node, or one burst buffer
 * that every node shares, and no pseudo-nodes. The same on every process. */
int ADIOI_BBLOG_Node_is_all(const struct ADIOI_BBLOG_state *st)
{
    return st->hints.debug_node_size <= 0 && (st->one_node || st->hints.shared_bb);
}

int ADIOI_BBLOG_Node_flags(ADIO_File fd, unsigned mine, unsigned char **flags)
{
    struct ADIOI_BBLOG_node *nd = ADIOI_BBLOG_STATE(fd)->node;
    int f = (int) mine, i;
    /* Into the rounds' (count, list, counter) triples, free until the rounds. */
    int rc = ADIOI_BBLOG_Allgather(&f, 1, MPI_INT, nd->pairs, 1, MPI_INT, nd->comm);

    *flags = rc == MPI_SUCCESS ? malloc((size_t) nd->size) : NULL;
    for (i = 0; *flags && i < nd->size; i++)
        (*flags)[i] = (unsigned char) nd->pairs[i];
    return rc;
}

static struct ADIOI_BBLOG_node *node_new(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_node *nd = calloc(1, sizeof(*nd));
    MPI_Comm comm;
    int i, own = 1, pseudo = st->hints.debug_node_size;

    /* Collective over fd->comm even when this process cannot allocate. The environment
     * variable BBLOG_DEBUG_NODE_SIZE=N (the same in all processes, read at open) makes nodes
     * of N consecutive ranks instead, so that tests on one machine cover the path of a
     * cluster: several nodes, ROMIO's two-phase exchange between them. A split has no
     * nonblocking form and would poll while the other processes are still on their way to
     * the drain: the driver's barrier, which does not (ad_bblog_base_wait.c), waits for them
     * first; where it fails, the split still runs, and this process has no node exchange
     * (the drain's agreements make every process do without it). */
    if ((pseudo > 0 || !(st->one_node || st->hints.shared_bb)) &&
        ADIOI_BBLOG_Barrier(fd->comm) != MPI_SUCCESS) {
        free(nd);
        nd = NULL;
    }
    if (pseudo > 0)
        MPI_Comm_split(fd->comm, st->rank / pseudo, st->rank, &comm);
    else if (st->one_node || st->hints.shared_bb)
        comm = fd->comm, own = 0;       /* a new communicator costs several collectives */
    else
        MPI_Comm_split_type(fd->comm, MPI_COMM_TYPE_SHARED, st->rank, MPI_INFO_NULL, &comm);
    if (!nd) {
        if (own)
            MPI_Comm_free(&comm);
        return NULL;
    }
    nd->comm = comm;
    nd->own_comm = own;
    MPI_Comm_size(comm, &nd->size);
    MPI_Comm_rank(comm, &nd->rank);
    nd->list_fd = -1;
    nd->ranks = malloc(nd->size * sizeof(*nd->ranks));
    nd->fds = malloc(nd->size * sizeof(*nd->fds));
    nd->bases = calloc(nd->size, sizeof(*nd->bases));
    nd->lfds = malloc(nd->size * sizeof(*nd->lfds));
    nd->pairs = malloc(3 * nd->size * sizeof(*nd->pairs));
    nd->counts = malloc(nd->size * sizeof(*nd->counts));
    nd->displs = malloc(nd->size * sizeof(*nd->displs));
    nd->maps = calloc(nd->size, sizeof(*nd->maps));
    nd->map_len = calloc(nd->size, sizeof(*nd->map_len));
    if (!nd->ranks || !nd->fds || !nd->bases || !nd->lfds || !nd->pairs || !nd->counts ||
        !nd->displs ||
        !nd->maps || !nd->map_len) {
        free(nd->fds);
        free(nd->lfds);
        nd->fds = nd->lfds = NULL;
        nd->size = 0;
        st->node = nd;
        ADIOI_BBLOG_Node_free(st);
        return NULL;
    }
    for (i = 0; i < nd->size; i++)
        nd->fds[i] = nd->lfds[i] = -1;
    /* Which process of the file each of the node's is (local calls): their files' names hold
     * that rank. */
    if (own) {
        MPI_Group g, fg;
        MPI_Comm_group(comm, &g);
        MPI_Comm_group(fd->comm, &fg);
        for (i = 0; i < nd->size; i++)
            nd->fds[i] = i;             /* scratch: the node ranks to translate */
        MPI_Group_translate_ranks(g, nd->size, nd->fds, fg, nd->ranks);
        MPI_Group_free(&g);
        MPI_Group_free(&fg);
        for (i = 0; i < nd->size; i++)
            nd->fds[i] = -1;
    } else {
        for (i = 0; i < nd->size; i++)
            nd->ranks[i] = i;
    }
    return nd;
}

int ADIOI_BBLOG_Node_members(ADIO_File fd, const int **ranks, int *me)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    if (!st->node)
        st->node = node_new(fd, st);
    if (!st->node)
        return 0;
    *ranks = st->node->ranks;
    *me = st->node->rank;
    return st->node->size;
}

static void map_log(struct ADIOI_BBLOG_node *nd, int i)
{
    nd->maps[i] = ADIOI_BBLOG_Map_in_memory(nd->fds[i], &nd->map_len[i]);
}

/* One node, no collective writes asked for: the drain takes chunks in turn from the node's
 * counter (the decision is the drain's, from the same inputs on every process). */
static int node_alone(const struct ADIOI_BBLOG_state *st, const struct ADIOI_BBLOG_node *nd)
{
    return nd->size == st->nprocs && st->inner->hints->cb_write != ADIOI_HINT_ENABLE;
}

/* The path of a file of node process i in this process's burst-buffer directory: its log
 * name (TOKEN.rRANK, the same token in every process of the open) with suffix; its data log
 * under bblog_mapping=node is the node pair's (TOKEN.nFIRST.data, from byte *base on).
 * Returns a malloc'ed string, or NULL. */
static char *peer_path(const struct ADIOI_BBLOG_state *st, const struct ADIOI_BBLOG_node *nd,
                       int i, const char *suffix, uint64_t *base)
{
    int n = token_len(st);
    size_t len = strlen(st->logdir) + (size_t) n + strlen(suffix) + 24;
    char *path = malloc(len);

    *base = 0;
    if (path && nd->pair && nd->pair[3 * i + 2] > 0 && strcmp(suffix, ".data") == 0) {
        const int *q = &nd->pair[3 * i];
        snprintf(path, len, "%s/%.*s.n%d%s", st->logdir, n, st->log_name, q[0], suffix);
        *base = bblog_node_data_base(bblog_node_lg((uint32_t) q[2]), (uint32_t) q[1]);
    } else if (path) {
        snprintf(path, len, "%s/%.*s.r%d%s", st->logdir, n, st->log_name, nd->ranks[i], suffix);
    }
    return path;
}

char *ADIOI_BBLOG_Node_data_path(const struct ADIOI_BBLOG_state *st, int i, uint64_t *base)
{
    return st->node ? peer_path(st, st->node, i, ".data", base) : NULL;
}

/*
 * bblog_mapping=node: the slot of this process in its node's log pair is its place among the
 * node's processes of the open, and the pair is named after the node's first process. The
 * node is the one the drain's node exchange uses (node_new), whose processes then know each
 * other's slots; on a burst buffer that several nodes share, the exchange spans the nodes, so
 * each process finds its node (MPI_Comm_split_type) and the processes gather their slots (one
 * MPI_Allgather, at open). Without memory for the node state a process keeps a log of its own
 * (slots 0), as on a node of more than BBLOG_NODE_SLOTS_MAX processes. Collective.
 */
void ADIOI_BBLOG_Node_slot(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_node *nd = st->node;
    int mine[3] = { 0, 0, 0 }, *all, across, i;

    across = st->hints.debug_node_size <= 0 && !st->one_node && st->hints.shared_bb;
    if (!nd)
        st->node = nd = node_new(fd, st);
    if (!across) {
        if (!nd || nd->size > (int) BBLOG_NODE_SLOTS_MAX)
            return;
        nd->pair = ADIOI_Malloc(3 * nd->size * sizeof(*nd->pair));
        for (i = 0; i < nd->size; i++) {
            nd->pair[3 * i] = nd->ranks[0];
            nd->pair[3 * i + 1] = i;
            nd->pair[3 * i + 2] = nd->size;
        }
        mine[0] = nd->ranks[0];
        mine[1] = nd->rank;
        mine[2] = nd->size;
    } else {
        MPI_Comm node;
        MPI_Group g, fg;
        int zero = 0, size;

        MPI_Comm_split_type(fd->comm, MPI_COMM_TYPE_SHARED, st->rank, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &size);
        MPI_Comm_rank(node, &mine[1]);
        MPI_Comm_group(node, &g);
        MPI_Comm_group(fd->comm, &fg);
        MPI_Group_translate_ranks(g, 1, &zero, fg, &mine[0]);
        MPI_Group_free(&g);
        MPI_Group_free(&fg);
        MPI_Comm_free(&node);
        mine[2] = nd && size <= (int) BBLOG_NODE_SLOTS_MAX ? size : 0;
        all = ADIOI_Malloc(3 * st->nprocs * sizeof(*all));
        if (ADIOI_BBLOG_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, fd->comm) != MPI_SUCCESS) {
            ADIOI_Free(all);
            return;             /* a log of its own (slots 0), as without memory */
        }
        if (nd && nd->size == st->nprocs)
            nd->pair = all;
        else
            ADIOI_Free(all);
    }
    if (mine[2] == 0)
        return;
    st->slots = (uint32_t) mine[2];
    st->slot = (uint32_t) mine[1];
    snprintf(st->pair_name, sizeof(st->pair_name), "%.*s.n%d", token_len(st), st->log_name,
             mine[0]);
}

/*
 * Before the drain's starting MPI_Allgather, on every process of a handle that may use the
 * node exchange (collective over fd->comm the first time: the node's communicator). Writes
 * this process's staged log payload to its data file, makes its list file for the rounds'
 * piece lists and, on the node's first process at the file's first drain on one node, the
 * chunk counter. Returns what the others need to know of it (ADIOI_BBLOG_NODE_*), which the
 * Allgather carries: the names are the log name's (peer_path, claim_name), so no exchange of
 * paths is needed, and the Allgather orders every file's making before any process opens it.
 */
unsigned ADIOI_BBLOG_Node_stage(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_node *nd = st->node;
    unsigned flags = 0;
    size_t plen;

    if (!nd && !(st->node = nd = node_new(fd, st)))
        return ADIOI_BBLOG_NODE_NONE;
    nd->stage_ok = 1;
    if (st->ls->log) {
        if (bblog_log_flush(st->ls->log) == 0) {
            flags |= ADIOI_BBLOG_NODE_LOG;
        } else {
            nd->stage_ok = 0;
            flags |= ADIOI_BBLOG_NODE_UNSTAGED;
        }
    }
    /* This process's list file for the drain's rounds (BBLOG_DIR/bblog-UID/LOGNAME.list). */
    plen = strlen(st->logdir) + strlen(st->log_name) + 8;
    nd->list_path = malloc(plen);
    if (nd->list_path) {
        snprintf(nd->list_path, plen, "%s/%s.list", st->logdir, st->log_name);
        nd->list_fd = open(nd->list_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                           0600);
        if (nd->list_fd < 0) {
            free(nd->list_path);        /* not made: nothing to remove */
            nd->list_path = NULL;
        } else {
            flags |= ADIOI_BBLOG_NODE_LIST;
        }
    }
    /* The counter's name lives until a drain has had every process map it (Node_prepare), or
     * until the handle's end. */
    if (node_alone(st, nd) && nd->claim == 0 && nd->rank == 0)
        claim_map(st, nd, NULL);
    if (nd->claim_path)
        flags |= ADIOI_BBLOG_NODE_CLAIM;
    return flags;
}

/*
 * After the drain's starting agreement, which brought the node's processes' Node_stage flags
 * (flags[i] of the node's process i; NULL: that agreement failed), on every process of a handle that uses the
 * node exchange: opens the data logs and list files of the node's processes (until Node_end)
 * and maps the chunk counter. Makes no MPI call. Returns 1 when this process can read every
 * log; across nodes the caller agrees on the result before a round uses the node exchange, on
 * one node a process that cannot writes no chunk and the drain is made again (drain.c,
 * node_ready). (Missing list files only make the rounds exchange the lists through MPI,
 * agreed in Node_share.)
 */
int ADIOI_BBLOG_Node_prepare(ADIO_File fd, const unsigned char *flags)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_node *nd = st->node;
    int ok, i, claim, map;

    if (nd)
        nd->lists_ok = 0;
    if (!nd || !flags)
        return 0;
    ok = nd->stage_ok;
    claim = node_alone(st, nd) && nd->claim == 0 && (flags[0] & ADIOI_BBLOG_NODE_CLAIM);
    map = node_alone(st, nd) && st->inner->fns->ADIOI_xxx_WriteContig == ADIOI_GEN_WriteContig &&
        !st->hints.debug_no_map;
    nd->lists_ok = nd->list_fd >= 0;
    for (i = 0; i < nd->size; i++) {
        unsigned f = flags[i];
        char *path;
        if (f & ADIOI_BBLOG_NODE_LOG) {         /* no log: nothing to read from it */
            path = peer_path(st, nd, i, ".data", &nd->bases[i]);   /* this process's too */
            nd->fds[i] = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
            free(path);
            if (nd->fds[i] < 0)
                ok = 0;
            else if (map && !st->slots)    /* a pair's sparse file: see map_own_log */
                map_log(nd, i);
        }
        /* The first process reads every other list; the others only the first's, where it
         * leaves the parts (Node_share). */
        if (i != nd->rank && (nd->rank == 0 || i == 0)) {
            uint64_t base;
            if ((f & ADIOI_BBLOG_NODE_LIST) && (path = peer_path(st, nd, i, ".list", &base))) {
                nd->lfds[i] = open(path, O_RDONLY | O_CLOEXEC);
                free(path);
            }
            nd->lists_ok &= nd->lfds[i] >= 0;
        }
    }
    if (claim && nd->rank != 0) {
        char *path = claim_name(st);
        if (path)
            claim_map(st, nd, path);
        free(path);
    }
    nd->prepared = 1;
    return ok;
}

/* Words of a piece in the cut file: off, len, log offset, stamp, who. */
#define CUT_WORDS 5
_Static_assert(sizeof(struct bblog_npiece) >= CUT_WORDS * sizeof(uint64_t),
               "Node_part turns a piece's words into the piece in place");

/* How many parts a round of total bytes is cut into: one share per process of the node, or
 * chunks of chunk bytes. */
static size_t nparts(const struct ADIOI_BBLOG_node *nd, uint64_t total, uint64_t chunk)
{
    return chunk > 0 ? (size_t) ((total + chunk - 1) / chunk) : (size_t) nd->size;
}

/* The node's lists of the round, all (each process's quadruples in node order, ne pieces), as
 * pieces in e, their kept bytes cut into parts (chunk 0: one share per process; else chunks of
 * chunk bytes), in memory; *own_kept the kept bytes of this process's pieces, and own[w] (NULL:
 * not wanted) those of process w's. 0 or ENOMEM. */
static int cut_parts(const struct ADIOI_BBLOG_node *nd, const uint64_t *all,
                     struct bblog_npiece *e, size_t ne, uint64_t chunk,
                     struct ADIOI_BBLOG_parts *parts, uint64_t *own_kept, uint64_t *own)
{
    struct bblog_npiece *kept;
    size_t nk, i, j;
    int w, rc;

    for (w = 0, i = 0; w < nd->size; w++)
        for (j = 0; j < (size_t) nd->counts[w] / 4; j++, i++) {
            e[i].off = all[4 * i];
            e[i].len = all[4 * i + 1];
            e[i].src = all[4 * i + 2];
            e[i].stamp = all[4 * i + 3];
            e[i].who = e[i].src == UINT64_MAX ? -1 : w;
        }
    rc = bblog_share_cut(e, ne, nd->rank, 0, &kept, &nk, &parts->total, own_kept);
    if (rc != 0)
        return rc;
    for (i = 0; own && i < nk; i++)
        own[kept[i].who] += kept[i].len;
    parts->n = nparts(nd, parts->total, chunk);
    parts->starts = malloc((parts->n + 1) * sizeof(*parts->starts));
    rc = parts->starts ? bblog_share_parts(kept, nk, parts->total, parts->n, chunk, &parts->p,
                                           parts->starts) : ENOMEM;
    free(kept);
    return rc;
}

/* The node's first process: reads the others' lists (its own is mine), cuts every part and
 * writes them to its list file for the others, after the words each one reads first: the kept
 * bytes of each process, then the parts' starts. Returns 0 or an errno. */
static int cut_for_node(struct ADIOI_BBLOG_node *nd, const uint64_t *mine, size_t ne,
                        uint64_t chunk, struct ADIOI_BBLOG_parts *parts, uint64_t *own_kept,
                        uint64_t *nread)
{
    uint64_t *all = NULL, *own = NULL, *out = NULL;
    struct bblog_npiece *e = NULL;
    size_t i, j, words;
    int w, rc = 0;

    all = malloc((ne ? ne : 1) * 4 * sizeof(*all));
    e = malloc((ne ? ne : 1) * sizeof(*e));
    own = calloc((size_t) nd->size, sizeof(*own));
    if (!all || !e || !own)
        rc = ENOMEM;
    for (w = 0; w < nd->size && rc == 0; w++) {
        size_t bytes = (size_t) nd->counts[w] * sizeof(*all);
        if (w == nd->rank)
            memcpy(all + nd->displs[w], mine, bytes);
        else if (bytes > 0)
            rc = bblog_io_full(nd->lfds[w], all + nd->displs[w], bytes, 0, 0, NULL);
        if (w != nd->rank)
            *nread += bytes;
    }
    if (rc == 0)
        rc = cut_parts(nd, all, e, ne, chunk, parts, own_kept, own);
    if (rc == 0) {
        size_t np = parts->starts[parts->n];
        words = (size_t) nd->size + parts->n + 1 + CUT_WORDS * np;
        if (!(out = malloc(words * sizeof(*out))))
            rc = ENOMEM;
        for (i = 0; rc == 0 && i < (size_t) nd->size; i++)
            out[i] = own[i];
        for (i = 0; rc == 0 && i <= parts->n; i++)
            out[nd->size + i] = parts->starts[i];
        for (i = 0, j = (size_t) nd->size + parts->n + 1; rc == 0 && i < np; i++) {
            const struct bblog_npiece *q = &parts->p[i];
            out[j++] = q->off, out[j++] = q->len, out[j++] = q->src, out[j++] = q->stamp;
            out[j++] = (uint64_t) q->who;
        }
        if (rc == 0)
            rc = bblog_io_full(nd->list_fd, out, words * sizeof(*out), 0, 1, NULL);
    }
    free(out);
    free(own);
    free(all);
    free(e);
    return rc;
}

void ADIOI_BBLOG_Node_parts_free(struct ADIOI_BBLOG_parts *parts)
{
    free(parts->p);
    free(parts->starts);
    free(parts->buf);
    memset(parts, 0, sizeof(*parts));
}

int ADIOI_BBLOG_Node_part(const struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_parts *parts,
                          size_t c, const struct bblog_npiece **p, size_t *k)
{
    const struct ADIOI_BBLOG_node *nd = st->node;
    uint64_t se[2], *w;
    size_t i, n, at;
    int rc;

    *p = NULL;
    *k = 0;
    if (c >= parts->n)
        return 0;
    if (parts->p) {
        *p = parts->p + parts->starts[c];
        *k = parts->starts[c + 1] - parts->starts[c];
        return 0;
    }
    /* From the first process's file: the part's start and end, then its pieces. */
    at = ((size_t) nd->size + c) * sizeof(uint64_t);
    if ((rc = bblog_io_full(nd->lfds[0], se, sizeof(se), (off_t) at, 0, NULL)) != 0)
        return rc;
    if (se[1] < se[0] || se[1] - se[0] > SIZE_MAX / (CUT_WORDS * sizeof(uint64_t)))
        return EIO;
    n = (size_t) (se[1] - se[0]);
    if (n > parts->cap) {
        struct bblog_npiece *b = realloc(parts->buf, n * sizeof(*b));
        if (!b)
            return ENOMEM;
        parts->buf = b;
        parts->cap = n;
    }
    /* The words into the buffer, then each piece made from its own words in place (a piece
     * takes at least as much memory as its words). */
    w = n ? (uint64_t *) parts->buf : NULL;
    at = ((size_t) nd->size + parts->n + 1 + CUT_WORDS * (size_t) se[0]) * sizeof(uint64_t);
    if (n && (rc = bblog_io_full(nd->lfds[0], w, n * CUT_WORDS * sizeof(uint64_t), (off_t) at,
                                 0, NULL)) != 0)
        return rc;
    for (i = 0; i < n; i++) {
        struct bblog_npiece q;
        q.off = w[CUT_WORDS * i];
        q.len = w[CUT_WORDS * i + 1];
        q.src = w[CUT_WORDS * i + 2];
        q.stamp = w[CUT_WORDS * i + 3];
        q.who = (int) w[CUT_WORDS * i + 4];
        parts->buf[i] = q;
    }
    parts->read += sizeof(se) + n * CUT_WORDS * sizeof(uint64_t);
    *p = parts->buf;
    *k = n;
    return 0;
}

/*
 * Collective over the node: every process of the node calls it once per round, with its n
 * pieces of the round as (off, len, log offset, stamp) quadruples (n = 0 after a failure); a
 * log offset of UINT64_MAX marks bytes written straight to the PFS, which hide older pieces.
 * The node's bytes, after the later writes won (bblog_share_cut), come back cut into parts
 * (chunk 0: one share per process, part i process i's; else chunks of chunk bytes, which the
 * processes take in turn), read with Node_part; *own_kept says how many bytes of this process's
 * own pieces were kept by anyone. Returns 0 or an errno; on failure there are no parts.
 *
 * Who cuts. With list files (the usual case) the node's first process alone reads the others'
 * lists and cuts every part into its own list file, which the others then read only their
 * parts of: the node reads each list once, not once per process (R lists of n pieces read R
 * times made R^2 n per node and round), and the cut is made once. An MPI_Bcast from the first
 * process says when the parts are there, and whether it could. Without list files every
 * process gets every list through MPI_Allgatherv and cuts for itself.
 *
 * Long: one collective step after another, which a failure must not skip.
 */
int ADIOI_BBLOG_Node_share(ADIO_File fd, const uint64_t *mine, int n, uint64_t chunk,
                           struct ADIOI_BBLOG_parts *parts, uint64_t *own_kept)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_node *nd = st->node;
    uint64_t *all = NULL, done[2], nread = 0;
    struct bblog_npiece *e = NULL;
    size_t ne;
    int mine4 = 4 * n, total, w, rc = 0, pair[3], lists = 1;

    memset(parts, 0, sizeof(*parts));
    parts->mine = chunk > 0 ? SIZE_MAX : (size_t) nd->rank;
    *own_kept = 0;
    /* A new round of chunks: the counter restarts. Nobody claims in this round before the
     * exchange below, which the first process enters only after this store, and nobody
     * claims any more in the last round: a collective of the drain lies between them. */
    if (chunk > 0 && nd->claim > 0 && nd->rank == 0)
        __atomic_store_n(nd->ctr, 0, __ATOMIC_SEQ_CST);
    /* Each process but the first writes its list to its list file, and the exchange of counts
     * says whether every one could. MPI moves only the counts: a large message between
     * processes of an oversubscribed node waits for both to run (RATIONALE:
     * bench/results/rationale.md, list-files). */
    pair[0] = mine4;
    pair[1] = nd->lists_ok && (mine4 == 0 || nd->rank == 0 ||
                               bblog_io_full(nd->list_fd, (void *) mine,
                                             (size_t) mine4 * sizeof(*mine), 0, 1, NULL) == 0);
    pair[2] = nd->claim > 0;
    if (ADIOI_BBLOG_Allgather(pair, 3, MPI_INT, nd->pairs, 3, MPI_INT, nd->comm) != MPI_SUCCESS) {
        /* Counts from nobody: the exchange below still runs, with nothing. */
        memset(nd->pairs, 0, 3 * (size_t) nd->size * sizeof(*nd->pairs));
        rc = ADIOI_BBLOG_ECOLL;
    }
    /* Every process mapped the counter and opened the list files in Node_prepare, before it
     * entered the exchange above: their names can go. */
    drop_name(&nd->claim_path);
    drop_name(&nd->list_path);
    nd->all_claim = 1;
    for (w = 0, total = 0; w < nd->size; w++) {
        nd->counts[w] = nd->pairs[3 * w];
        lists &= nd->pairs[3 * w + 1];
        nd->all_claim &= nd->pairs[3 * w + 2];
        nd->displs[w] = total;
        total += nd->counts[w];
    }
    ne = (size_t) total / 4;
    if (lists && nd->size > 1) {
        /* The first process cuts (every process agrees on lists: the same counts came to all;
         * where the exchange failed, rc says so and the broadcast below decides). */
        done[0] = (uint64_t) rc;
        if (nd->rank == 0 && rc == 0)
            done[0] = (uint64_t) cut_for_node(nd, mine, ne, chunk, parts, own_kept, &nread);
        done[1] = parts->total;
        if (ADIOI_BBLOG_Bcast(done, 2, MPI_UINT64_T, 0, nd->comm) != MPI_SUCCESS)
            done[0] = (uint64_t) ADIOI_BBLOG_ECOLL;
        rc = rc ? rc : (int) done[0];
        if (rc == 0 && nd->rank != 0) {
            parts->total = done[1];
            parts->n = nparts(nd, parts->total, chunk);
            rc = bblog_io_full(nd->lfds[0], own_kept, sizeof(*own_kept),
                               (off_t) (nd->rank * sizeof(uint64_t)), 0, NULL);
            nread += sizeof(*own_kept);
        }
        goto out;
    }
    nread = (uint64_t) total * sizeof(*all);
    /* ROMIO's allocator, which aborts rather than return NULL: a process without the
     * buffer could not take part in the exchange below, and agreeing on that first would
     * cost one more collective per round (the logs stay for `bblog replay`). */
    all = ADIOI_Malloc((ne ? ne : 1) * 4 * sizeof(*all));
    e = ADIOI_Malloc((ne ? ne : 1) * sizeof(*e));
    if (nd->size > 1) {
        if (ADIOI_BBLOG_Allgatherv(mine, rc ? 0 : mine4, MPI_UINT64_T, all, nd->counts,
                                   nd->displs, MPI_UINT64_T, nd->comm) != MPI_SUCCESS)
            rc = ADIOI_BBLOG_ECOLL;
    } else if (mine4 > 0) {
        memcpy(all, mine, (size_t) mine4 * sizeof(*all));
    }
    /* Counts or lists that did not come: this process fails the drain (the others' agreement
     * at its end), and takes part in the round with nothing. */
    if (rc != 0)
        goto out;
    rc = cut_parts(nd, all, e, ne, chunk, parts, own_kept, NULL);
  out:
    parts->read = nread;
    if (rc != 0)
        ADIOI_BBLOG_Node_parts_free(parts);
    if (all) {
        ADIOI_Free(all);
        ADIOI_Free(e);
    }
    return rc;
}

/*
 * Reads the k pieces p[0..k) (of this process's share) into buf, one after the other, log by
 * log: the pieces of one log that follow each other in it are read with one preadv. Adds the
 * bytes read from other processes' logs to *from_peers. Returns 0 or an errno.
 */
int ADIOI_BBLOG_Node_read(const struct ADIOI_BBLOG_state *st, const struct bblog_npiece *p,
                          size_t k, char *buf, uint64_t *from_peers)
{
    const struct ADIOI_BBLOG_node *nd = st->node;
    struct iovec iov[IOV_MAX];
    size_t i;
    int w, rc = 0;

    for (w = 0; w < nd->size && rc == 0; w++) {
        uint64_t at = 0, run_src = 0, next_src = 0;
        int m = 0;
        for (i = 0; i <= k && rc == 0; i++) {
            if (m > 0 && (i == k || (p[i].who == w && (m == IOV_MAX || p[i].src != next_src)))) {
                rc = nd->fds[w] >= 0 ?
                    ADIOI_BBLOG_Io_vec(nd->fds[w], iov, m, nd->bases[w] + run_src, 0) : EBADF;
                m = 0;
            }
            if (i == k)
                break;
            if (p[i].who == w) {
                if (m == 0)
                    run_src = p[i].src;
                iov[m].iov_base = buf + at;
                iov[m].iov_len = (size_t) p[i].len;
                m++;
                next_src = p[i].src + p[i].len;
                if (w != nd->rank)
                    *from_peers += p[i].len;
            }
            at += p[i].len;
        }
    }
    return rc;
}

/*
 * Writes the k pieces p[0..k) of a chunk (in file order) to the inner file with pwritev
 * straight from the mapped logs (see map_log), one call per run of pieces that follow each
 * other in the file, retrying short writes; the holes between runs are left as they are.
 * Returns -1 when it cannot (a piece outside the mapped logs, or runs too many for their span:
 * ADIOI_BBLOG_RUNS_ALONE; the caller reads and writes as usual), else 0 or an errno, with the
 * runs written in *runs. Adds the bytes of other processes' logs to *from_peers.
 */
int ADIOI_BBLOG_Node_write_mapped(const struct ADIOI_BBLOG_state *st, const struct bblog_npiece *p,
                                  size_t k, int fd, uint64_t *from_peers, size_t *runs)
{
    const struct ADIOI_BBLOG_node *nd = st->node;
    struct iovec iov[IOV_MAX];
    uint64_t peers = 0;
    size_t i, n = k ? 1 : 0;

    for (i = 0; i < k; i++) {
        int w = p[i].who;
        if (w < 0 || !nd->maps[w] || p[i].src > nd->map_len[w] ||
            p[i].len > nd->map_len[w] - p[i].src)
            return -1;
        n += i > 0 && p[i].off != p[i - 1].off + p[i - 1].len;
        if (w != nd->rank)
            peers += p[i].len;
    }
    if (k > 0 && !ADIOI_BBLOG_RUNS_ALONE(n, p[k - 1].off + p[k - 1].len - p[0].off))
        return -1;
    for (i = 0; i < k;) {
        int m = 0, rc;
        uint64_t at = p[i].off, end = at;
        for (; i < k && m < IOV_MAX && p[i].off == end; i++, m++) {
            iov[m].iov_base = nd->maps[p[i].who] + p[i].src;
            iov[m].iov_len = (size_t) p[i].len;
            end += p[i].len;
        }
        if ((rc = ADIOI_BBLOG_Io_vec(fd, iov, m, at, 1)) != 0)
            return rc;
    }
    *from_peers += peers;
    *runs = n;
    return 0;
}
