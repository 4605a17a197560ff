/*
 * The collective drain (ad_bblog_drain*.c): what it offers the rest of the driver. Its private
 * types are in ad_bblog_drain_priv.h.
 */
#ifndef AD_BBLOG_DRAIN_H_INCLUDED
#define AD_BBLOG_DRAIN_H_INCLUDED

#include "ad_bblog.h"
#include "ad_bblog_base.h"

/* ad_bblog_drain.c: collective drain of every process's log into the inner file; with
 * sync_inner the inner file is flushed before the logs are marked drained. */
int ADIOI_BBLOG_Drain(ADIO_File fd, int sync_inner);
/* ad_bblog_drain.c: this process's logged pieces as (off, len, stamp) triples, in file order
 * (*triples is the caller's to free); 0 or ENOMEM. Drain_alone drains this process's log
 * alone, with no collective call, leaving out what `later` lists with a higher stamp, and
 * flushes the inner file (a sync that the other processes left, ad_bblog_flush.c). */
int ADIOI_BBLOG_Drain_pieces(struct ADIOI_BBLOG_state *st, uint64_t **triples, size_t *n);
int ADIOI_BBLOG_Drain_alone(ADIO_File fd, const struct ADIOI_BBLOG_order *later);

/* ad_bblog_drain_share.c: the drain's node exchange through the burst buffer. Node_stage, before
 * the drain's starting agreement (collective over fd->comm the first time), makes this
 * process's files ready and returns the flags below for it; Node_prepare, after it, opens the
 * node's logs from the node's processes' flags (flags[i] of the node's process i, NULL: none)
 * and returns 1 when this process can read every one; Node_share is collective over the node, once per round: mine holds n
 * (off, len, log offset, stamp) quadruples, and the node's bytes come back cut into parts of
 * pieces of the node's logs (a share per process, or chunks); Node_read reads pieces of a share, Node_write_mapped writes them to
 * the inner file straight from the logs where it can, one pwritev per run of adjacent pieces (-1:
 * it cannot, read them). */
struct ADIOI_BBLOG_node;
struct bblog_npiece;
enum {
    ADIOI_BBLOG_NODE_NONE = 1,  /* no node state (allocation failed): no node exchange */
    ADIOI_BBLOG_NODE_LOG = 2,   /* a data log, flushed */
    ADIOI_BBLOG_NODE_LIST = 4,  /* a list file for the rounds */
    ADIOI_BBLOG_NODE_CLAIM = 8, /* the node's chunk counter, made by its first process */
    ADIOI_BBLOG_NODE_UNSTAGED = 16      /* a data log that could not be flushed: no node
                                         * exchange in this drain */
};
unsigned ADIOI_BBLOG_Node_stage(ADIO_File fd);
int ADIOI_BBLOG_Node_prepare(ADIO_File fd, const unsigned char *flags);
/* A round's parts (Node_share): in memory (p: part c is p[starts[c]..starts[c+1])) or, where
 * p is NULL, in the node's first process's list file, read by Node_part into buf. */
struct ADIOI_BBLOG_parts {
    struct bblog_npiece *p;
    size_t *starts;
    size_t n;                   /* parts */
    size_t mine;                /* this process's share (SIZE_MAX: chunks, taken in turn) */
    uint64_t total;             /* bytes of all parts */
    uint64_t read;              /* bytes of lists and parts this process read (or received) */
    struct bblog_npiece *buf;   /* the last part read from the file */
    size_t cap;
};
int ADIOI_BBLOG_Node_share(ADIO_File fd, const uint64_t *mine, int n, uint64_t chunk,
                           struct ADIOI_BBLOG_parts *parts, uint64_t *own_kept);
/* Part c's k pieces at *p (valid until the next call); 0 or an errno. */
int ADIOI_BBLOG_Node_part(const struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_parts *parts,
                          size_t c, const struct bblog_npiece **p, size_t *k);
void ADIOI_BBLOG_Node_parts_free(struct ADIOI_BBLOG_parts *parts);
/* With chunks (one node, collectively), the processes take the chunks in turn: Node_claim
 * returns the next chunk of n not taken yet by anyone, or n when none is left (*next: 0 at
 * the start of a round). */
uint64_t ADIOI_BBLOG_Node_claim(const struct ADIOI_BBLOG_state *st, uint64_t n, uint64_t *next);
int ADIOI_BBLOG_Node_write_mapped(const struct ADIOI_BBLOG_state *st, const struct bblog_npiece *p,
                                  size_t k, int fd, uint64_t *from_peers, size_t *runs);
int ADIOI_BBLOG_Node_read(const struct ADIOI_BBLOG_state *st, const struct bblog_npiece *p,
                          size_t k, char *buf, uint64_t *from_peers);
void ADIOI_BBLOG_Node_free(struct ADIOI_BBLOG_state *st);      /* collective over the node */
void ADIOI_BBLOG_Node_end(struct ADIOI_BBLOG_state *st);       /* a drain is over: close logs */
int ADIOI_BBLOG_Node_size(const struct ADIOI_BBLOG_state *st);  /* processes on this node */
/* Whether the node is every process of the file (its communicator the file's own); the same on
 * every process. */
int ADIOI_BBLOG_Node_is_all(const struct ADIOI_BBLOG_state *st);
/* Collective over the node (every process of it has node state): each process's Node_stage
 * flags, node-ordered, in *flags (malloc'ed; NULL when the call failed or without memory);
 * returns MPI's error code. */
int ADIOI_BBLOG_Node_flags(ADIO_File fd, unsigned mine, unsigned char **flags)
    ADIOI_BBLOG_MUST_USE;
void ADIOI_BBLOG_Node_slot(ADIO_File fd);   /* bblog_mapping=node, at open (collective) */
/* The node's processes (their ranks in the file's communicator) and this one's place among
 * them; 0: no node state. Collective over the file's communicator the first time. */
int ADIOI_BBLOG_Node_members(ADIO_File fd, const int **ranks, int *me);
/* The data log of the node's process i (malloc'ed path) and where its bytes start in it (a
 * slot of the node's pair under bblog_mapping=node, else 0); NULL without the node state. */
char *ADIOI_BBLOG_Node_data_path(const struct ADIOI_BBLOG_state *st, int i, uint64_t *base);
void ADIOI_BBLOG_Node_await_chunks(struct ADIOI_BBLOG_state *st);       /* after a round's chunks */

#endif /* AD_BBLOG_DRAIN_H_INCLUDED */
