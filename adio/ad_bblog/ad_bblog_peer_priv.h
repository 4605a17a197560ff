/*
 * Reads of other processes' logged bytes, private parts: the format of the published lists
 * (written by ad_bblog_peer_list.c, read by ad_bblog_peer_read.c), and the remote reads' wire
 * and per-open state, shared by the reader (ad_bblog_peer_remote.c) and the read server with
 * the open that starts it (ad_bblog_peer_server.c). What the rest of the driver calls is in
 * ad_bblog_peer.h.
 */
#ifndef AD_BBLOG_PEER_PRIV_H
#define AD_BBLOG_PEER_PRIV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "ad_bblog.h"
#include "ad_bblog_peer.h"

/* ---- the published lists (one per process and file, mapped by readers) ---- */

#define VIS_MAGIC UINT64_C(0x31534956474f4c42)      /* "BLOGVIS1" */
#define VIS_HDR 512
#define VIS_MIN_LEN ((size_t) 64 << 10)
#define VIS_THROUGH 1u           /* the bytes are in the PFS file, not in the log */

struct vis_hdr {
    uint64_t magic;
    uint64_t epoch;             /* bumped each time the log is emptied */
    uint64_t count;             /* entries published in this epoch */
    uint64_t data_base;         /* where the data log starts in that file (a node pair's slot) */
    char data_name[VIS_HDR - 32];       /* the data log's name in the same directory, or "" */
};

struct vis_ent {
    uint64_t off, len, data_off;
    uint64_t gen;               /* the write's ordering stamp */
    uint32_t flags, pad;
};

/* The entry count and the epoch are stored with release order after what they cover, and
 * loaded with acquire order. */
static inline uint64_t ADIOI_BBLOG_Peer_load(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* ---- remote reads ---- */

/* The wire. On accept the server sends a hello with a fresh nonce; every request then carries
 * its sequence number on that connection (0, 1, ...) and a MAC over the nonce, the sequence
 * number and the request's fields, keyed with the open's secret, which never travels on the
 * wire. An answer is struct ans, then its candidates, then the bytes of the logged ones. */
#define HELLO_MAGIC UINT64_C(0x324f4c48474f4c42)    /* "BLOGHLO2" */
#define REQ_MAGIC UINT64_C(0x32514552474f4c42)      /* "BLOGREQ2" */
#define ANS_MAGIC UINT64_C(0x32534e41474f4c42)      /* "BLOGANS2" */
#define ANN_MAGIC UINT64_C(0x324e4e41474f4c42)      /* "BLOGANN2": a request that announces */
#define COV_MAGIC UINT64_C(0x31564f43474f4c42)      /* "BLOGCOV1": a node's coverage table */
#define CONNECT_MS 3000
#define IO_TIMEOUT_S 60         /* a server that stops answering mid-message (the reader) */
#define AUTH_MS 1000            /* server: a connection's first request, complete and valid */
#define REQUEST_MS 1000         /* server: the rest of a request once its first byte came */
#define SEND_MS 10000           /* server: an answer's next bytes to a reader that takes none */
#define FD_RESERVE 64           /* server: descriptors below RLIMIT_NOFILE it never takes */
#define SPARE_CONNS 8           /* server: connections beyond one per process of other nodes */

struct hello {
    uint64_t magic, nonce[2];
};

/* A read (REQ_MAGIC): [lo, lo + len) as a reader that made limit collective calls sees it.
 * An announcement (ANN_MAGIC): rank limit may publish writes in [lo, lo + len) from now on. */
struct req {
    uint64_t magic, seq;
    uint64_t lo, len;
    uint32_t limit, pad;
    uint64_t mac[2];
};

/* A node's coverage table: a file beside the node's lists, <token>.n<leader>.cov, made by the
 * node's read server and mapped by every process of the node. Slot k holds the range rank k
 * (of another node) announced, [lo, hi); hi 0: nothing yet. A slot only grows, and only the
 * server writes it; lo is stored before hi, each with release order. */
struct cov_slot {
    uint64_t lo, hi;
};
struct cov_hdr {
    uint64_t magic, n;
};
#define COV_LEN(n) (sizeof(struct cov_hdr) + (size_t) (n) * sizeof(struct cov_slot))

struct ans {
    uint64_t magic;
    uint32_t err, pad;          /* errno of the server, 0 */
    uint64_t n, ndata, esum, end, nent;
    uint64_t clock;             /* the node's write clock */
};

/* The MAC of request q on a connection whose hello carried nonce (q->mac is not read). */
void ADIOI_BBLOG_Remote_mac(const uint64_t key[2], const uint64_t nonce[2], const struct req *q,
                            uint64_t mac[2]);

/* What each process tells the others at open (one MPI_Allgather). */
struct rec {
    uint64_t node;              /* host name hash, or pseudo-node */
    uint32_t port;              /* 0: no server */
    uint32_t addr;              /* IPv4, network order */
};

struct ADIOI_BBLOG_server;

/* What the read server met (bblog_stats' server_* keys). */
struct ADIOI_BBLOG_server_stats {
    uint64_t accepted, refused, evicted, deadline_drops, bad_requests, max_conns;
};

struct rnode {
    int leader;                 /* the rank that serves it */
    struct rec r;
    int fd;
    uint64_t nonce[2], seq;     /* of the connection fd: its hello, the next request's number */
    uint64_t esum;
    struct ADIOI_BBLOG_served ans;
};

struct ADIOI_BBLOG_remote {
    struct ADIOI_BBLOG_server *srv;     /* this process serves its node, or NULL */
    int n;
    struct rnode *nd;
    int bad;                    /* the node that could not be asked */
    int nprocs;
    int *node_of;               /* rank -> its node's index in nd, -1 for this node */
    char cov_path[PATH_MAX];    /* this node's coverage table */
    const struct cov_hdr *cov;  /* mapped, or NULL (not found yet: every node is asked) */
    uint64_t ann_lo, ann_hi;    /* what this process announced to the other nodes */
    unsigned char *ask;         /* per node: asked by the current read (Remote_ask) */
};


/* send (is_write) or receive exactly len bytes on a socket: 0 or an errno (ECONNRESET at
 * the peer's close, ETIMEDOUT after IO_TIMEOUT_S). */
int ADIOI_BBLOG_Remote_io(int fd, void *buf, size_t len, int is_write);
/* IO_TIMEOUT_S both ways and no Nagle delay on a connected socket. */
void ADIOI_BBLOG_Remote_timeouts(int fd);

#endif
