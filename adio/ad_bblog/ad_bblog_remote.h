/*
 * The remote reads' wire and per-open state, shared by the reader (ad_bblog_remote.c) and the
 * read server with the open that starts it (ad_bblog_server.c). Internal to those two files.
 */
#ifndef AD_BBLOG_REMOTE_H
#define AD_BBLOG_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "ad_bblog.h"

/* The wire: a request, an answer (then its candidates, then the bytes of the logged ones). */
#define REQ_MAGIC UINT64_C(0x31514552474f4c42)      /* "BLOGREQ1" */
#define ANS_MAGIC UINT64_C(0x31534e41474f4c42)      /* "BLOGANS1" */
#define ADDRS 4
#define CONNECT_MS 3000
#define IO_TIMEOUT_S 60         /* a server or reader that stops answering mid-message */

struct req {
    uint64_t magic, key[2];
    uint64_t lo, len;
    uint32_t limit, pad;
};

struct ans {
    uint64_t magic;
    uint32_t err, pad;          /* errno of the server, 0 */
    uint64_t n, ndata, esum, end, nent;
    uint64_t clock;             /* the node's write clock */
};

/* What each process tells the others at open (one MPI_Allgather). */
struct rec {
    uint64_t node;              /* host name hash, or pseudo-node */
    uint32_t port, naddr;       /* port 0: no server */
    uint32_t addr[ADDRS];       /* IPv4, network order */
};

struct ADIOI_BBLOG_server;

struct rnode {
    int leader;                 /* the rank that serves it */
    struct rec r;
    int fd;
    uint64_t esum;
    struct ADIOI_BBLOG_served ans;
};

struct ADIOI_BBLOG_remote {
    struct ADIOI_BBLOG_server *srv;     /* this process serves its node, or NULL */
    int n;
    struct rnode *nd;
    int bad;                    /* the node that could not be asked */
};

/* send (is_write) or receive exactly len bytes on a socket: 0 or an errno (ECONNRESET at
 * the peer's close, ETIMEDOUT after IO_TIMEOUT_S). */
int ADIOI_BBLOG_Remote_io(int fd, void *buf, size_t len, int is_write);
/* IO_TIMEOUT_S both ways and no Nagle delay on a connected socket. */
void ADIOI_BBLOG_Remote_timeouts(int fd);

#endif
