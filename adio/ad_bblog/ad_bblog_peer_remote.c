/*
 * Reads of what processes of other nodes logged (bblog_consistency=posix, the default): the design
 * and the wire of remote reads, and the reader's side of them; the read server is
 * ad_bblog_peer_server.c.
 *
 * Data path. On one node a read maps the other processes' lists of published writes
 * (ad_bblog_peer_list.c). With node-local burst buffers those of other nodes cannot be mapped, and
 * their bytes sit in logs that only their node can read. So the first process of each node's share
 * of an open runs a read server, a thread that reads its node's lists and logs for the other nodes.
 * A read that has to see other processes' writes asks every other node's server for the range,
 * after it has read the PFS file's bytes, and paints what the answers hold over them with its own
 * node's candidates, in stamp order. Every node asked gets its request before any answer is read,
 * so they work at the same time.
 *
 * Why. A server of our own rather than MPI: an independent read cannot make a collective call (a
 * drain), a message to the writing process would wait until that process next calls MPI, and
 * one-sided MPI needs the logs in memory and, with MPICH's ch3 and Open MPI's TCP transports, the
 * target's progress as well. The server answers at once, whatever the writer is doing, and it costs
 * nothing while no one reads. It makes no MPI call, so the application's thread level does not
 * matter.
 *
 * The wire. TCP, the same byte order on every node (checked by the magics). The server opens each
 * connection with a hello holding a fresh random nonce; each request (struct req) carries its
 * number on the connection and a MAC (SipHash-2-4, twice, domain-separated: 128 bits) over the
 * nonce, the number and its fields, keyed with the open's secret (random, 128 bits, from rank 0
 * with the open's agreement, sent only through MPI). A request recorded on one connection is worth
 * nothing on another (other nonce) or again on the same (other number). An answer is struct ans,
 * then its candidates, then the bytes of the logged ones. Each reader keeps one connection per
 * node, and the server one view of its node's lists per connection, since readers that made
 * different numbers of collective calls see different entries (ad_bblog_peer_list.c). What the
 * server does against clients that are not the job's: ad_bblog_peer_server.c.
 *
 * Announcements. Which nodes a read asks: those whose processes announced writes in its range.
 * Before a write call's entries become visible (ad_bblog_peer_list.c, Peer_publish), a process
 * whose entries leave the range it announced so far sends every other node's server a larger one
 * (ANN_MAGIC, signed as a read request): its first range as it is, after that twice what it needs,
 * so that a process writing on through the file announces O(log) times. The server stores it in its
 * node's coverage table, one slot per process of the open, and answers only then; the node's
 * processes map the table and ask a node only when a slot of one of its processes meets the range
 * (a size query: ends past the reader's). A slot never shrinks within an open (a drain does not
 * take a range back), so the table is never behind what a reader must see: a write that a read is
 * ordered after was announced before it could be seen. A process that finds no table (not made yet,
 * or its node's server could not make it) asks every node.
 *
 * Invariants. Order against a drain: a node's answer carries the sum of its lists' epochs, which
 * grows whenever one is emptied (its bytes then are in the PFS file). A reader whose answer shows a
 * sum other than that node's last answer reads again, PFS bytes first: what was emptied after the
 * last answer may have reached the file after this read's PFS bytes. The first answer of an open
 * therefore always takes two requests. Each answer also raises this node's write clock to the
 * answering node's (ad_bblog_base_order.c).
 *
 * Failures. Where a server is found: the open's MPI_Allgather tells every process the address and
 * port of each node's server (ad_bblog_peer_server.c chooses the one address it listens on). A
 * connection that breaks is tried once more on a new one; a node that still does not answer fails
 * the read (or the write that announces) with an error naming its server. A server that cannot be
 * started leaves its node's processes writing straight to the PFS file, where everyone sees their
 * bytes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_peer.h"
#include "ad_bblog_peer_priv.h"
#include "adioi.h"

/* SipHash-2-4 (Aumasson and Bernstein, 2012) of n words, each taken as 8 bytes in the host's
 * order: the MAC's building block, one per half. */
#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND \
    do { \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
    } while (0)

static uint64_t siphash(const uint64_t key[2], const uint64_t *w, size_t n)
{
    uint64_t v0 = key[0] ^ UINT64_C(0x736f6d6570736575), v1 = key[1] ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = key[0] ^ UINT64_C(0x6c7967656e657261), v3 = key[1] ^ UINT64_C(0x7465646279746573);
    uint64_t last = (uint64_t) (n * 8) << 56;

    for (size_t i = 0; i < n; i++) {
        v3 ^= w[i];
        SIPROUND;
        SIPROUND;
        v0 ^= w[i];
    }
    v3 ^= last;
    SIPROUND;
    SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

void ADIOI_BBLOG_Remote_mac(const uint64_t key[2], const uint64_t nonce[2], const struct req *q,
                            uint64_t mac[2])
{
    uint64_t w[8] = { 0, nonce[0], nonce[1], q->magic, q->seq, q->lo, q->len, q->limit };

    w[0] = 1;
    mac[0] = siphash(key, w, 8);
    w[0] = 2;
    mac[1] = siphash(key, w, 8);
}

int ADIOI_BBLOG_Remote_io(int fd, void *buf, size_t len, int is_write)
{
    char *p = buf;

    while (len > 0) {
        ssize_t k = is_write ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k == 0 ? ECONNRESET : errno == EAGAIN ? ETIMEDOUT : errno;
        p += k;
        len -= (size_t) k;
    }
    return 0;
}

void ADIOI_BBLOG_Remote_timeouts(int fd)
{
    struct timeval tv = { IO_TIMEOUT_S, 0 };
    int one = 1;

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* A connection to a server, its hello read into nonce: the socket, or -1. */
static int connect_to(uint32_t addr, uint32_t port, uint64_t nonce[2])
{
    struct hello h;
    struct sockaddr_in sa;
    struct pollfd pf;
    int fd, err = 0, flags;
    socklen_t el = sizeof(err);

    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = addr;
    sa.sin_port = htons((uint16_t) port);
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
        return -1;
    if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) != 0) {
        if (errno != EINPROGRESS)
            goto fail;
        pf.fd = fd;
        pf.events = POLLOUT;
        if (poll(&pf, 1, CONNECT_MS) != 1 ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0)
            goto fail;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
        goto fail;
    ADIOI_BBLOG_Remote_timeouts(fd);
    if (ADIOI_BBLOG_Remote_io(fd, &h, sizeof(h), 0) != 0 || h.magic != HELLO_MAGIC)
        goto fail;
    nonce[0] = h.nonce[0];
    nonce[1] = h.nonce[1];
    return fd;
  fail:
    close(fd);
    return -1;
}

/* ---- the reader ---- */

/* q, numbered and signed for nd's connection, sent on it. */
static int sign_send(const struct ADIOI_BBLOG_state *st, struct rnode *nd, const struct req *q)
{
    struct req s = *q;

    s.seq = nd->seq++;
    ADIOI_BBLOG_Remote_mac(st->key, nd->nonce, &s, s.mac);
    return ADIOI_BBLOG_Remote_io(nd->fd, &s, sizeof(s), 1);
}

static int send_req(const struct ADIOI_BBLOG_state *st, struct rnode *nd, const struct req *q)
{
    int rc = ECONNREFUSED;

    if (nd->fd >= 0 && sign_send(st, nd, q) == 0)
        return 0;
    if (nd->fd >= 0)
        close(nd->fd);
    nd->fd = -1;
    nd->fd = connect_to(nd->r.addr, nd->r.port, nd->nonce);
    if (nd->fd < 0)
        return rc;
    nd->seq = 0;
    rc = sign_send(st, nd, q);
    if (rc == 0)
        return 0;
    close(nd->fd);
    nd->fd = -1;
    return rc;
}

static int recv_ans(struct rnode *nd)
{
    struct ans a;
    int rc = ADIOI_BBLOG_Remote_io(nd->fd, &a, sizeof(a), 0);

    if (rc != 0)
        return rc;
    if (a.magic != ANS_MAGIC)
        return EPROTO;
    if (a.err != 0)
        return (int) a.err;
    if (bblog_grow((void **) &nd->ans.c, &nd->ans.cap, a.n + 1, sizeof(*nd->ans.c)) ||
        bblog_grow((void **) &nd->ans.data, &nd->ans.data_cap, a.ndata + 1, 1))
        return ENOMEM;
    rc = ADIOI_BBLOG_Remote_io(nd->fd, nd->ans.c, a.n * sizeof(*nd->ans.c), 0);
    if (rc == 0)
        rc = ADIOI_BBLOG_Remote_io(nd->fd, nd->ans.data, a.ndata, 0);
    nd->ans.n = a.n;
    nd->ans.ndata = a.ndata;
    nd->ans.esum = a.esum;
    nd->ans.end = a.end;
    nd->ans.nent = a.nent;
    nd->ans.clock = a.clock;
    return rc;
}

/* Maps the coverage table at path, made by a server for n processes: the header, or NULL. */
static const struct cov_hdr *cov_map(const char *path, int n)
{
    struct stat sb;
    void *m = MAP_FAILED;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0)
        return NULL;
    if (fstat(fd, &sb) == 0 && (size_t) sb.st_size == COV_LEN(n))
        m = mmap(NULL, COV_LEN(n), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    if (((const struct cov_hdr *) m)->magic != COV_MAGIC ||
        ((const struct cov_hdr *) m)->n != (uint64_t) n) {
        munmap(m, COV_LEN(n));
        return NULL;
    }
    return m;
}

/* ask[i]: whether node i may hold published bytes of [lo, hi) (hi > lo), or any past lo
 * (hi == lo), by this node's coverage table (one pass over the open's processes); with no
 * table, every node. Nodes without a server are never asked. */
static void choose(struct ADIOI_BBLOG_remote *rm, uint64_t lo, uint64_t hi, unsigned char *ask)
{
    const struct cov_slot *slot;
    int i, k;

    if (!rm->cov && !rm->srv)
        rm->cov = cov_map(rm->cov_path, rm->nprocs);
    for (i = 0; i < rm->n; i++)
        ask[i] = !rm->cov;
    if (rm->cov) {
        slot = (const struct cov_slot *) (rm->cov + 1);
        for (k = 0; k < rm->nprocs; k++) {
            uint64_t shi, slo;
            if ((i = rm->node_of[k]) < 0 || ask[i])
                continue;
            shi = __atomic_load_n(&slot[k].hi, __ATOMIC_ACQUIRE);
            slo = __atomic_load_n(&slot[k].lo, __ATOMIC_ACQUIRE);
            ask[i] = shi > lo && (hi == lo || slo < hi);
        }
    }
    for (i = 0; i < rm->n; i++)
        ask[i] &= rm->nd[i].r.port != 0;
}

/* Sends q to every node with a server in ask[] (all when ask is NULL) and reads their answers
 * into nd->ans, one more try on a new connection for a node whose connection broke: 0 or the
 * first errno (rm->bad: that node). */
static int exchange(struct ADIOI_BBLOG_state *st, const struct req *q, const unsigned char *ask)
{
    struct ADIOI_BBLOG_remote *rm = st->remote;
    int i, rc = 0, sent = 0;

    /* Every node is asked before any answer is read: they work at the same time. */
    for (i = 0; i < rm->n; i++) {
        if ((ask && !ask[i]) || rm->nd[i].r.port == 0)
            continue;
        if ((rc = send_req(st, &rm->nd[i], q)) != 0) {
            rm->bad = i;
            break;
        }
        sent = i + 1;
    }
    for (i = 0; i < sent; i++) {
        struct rnode *nd = &rm->nd[i];
        int r;
        if ((ask && !ask[i]) || nd->r.port == 0)
            continue;
        r = recv_ans(nd);
        if (r != 0) {
            /* A broken connection says nothing about the data: one more try on a new one. */
            close(nd->fd);
            nd->fd = -1;
            r = send_req(st, nd, q);
            if (r == 0)
                r = recv_ans(nd);
        }
        if (r != 0 && rc == 0) {
            rc = r;
            rm->bad = i;
        }
    }
    return rc;
}

int ADIOI_BBLOG_Remote_ask(struct ADIOI_BBLOG_state *st, uint64_t lo, uint64_t len, uint32_t limit,
                           int *changed)
{
    struct ADIOI_BBLOG_remote *rm = st->remote;
    unsigned char *ask;
    struct req q;
    int i, rc;

    if (!rm->ask && !(rm->ask = malloc((size_t) rm->n + 1)))
        return ENOMEM;
    ask = rm->ask;
    memset(&q, 0, sizeof(q));
    q.magic = REQ_MAGIC;
    q.lo = lo;
    q.len = len;
    q.limit = limit;
    *changed = 0;
    st->stats.remote_asks++;
    /* A node without a server has its processes write straight to the PFS file; one whose
     * processes announced nothing in the range has no bytes of it to send. */
    choose(rm, lo, lo + len < lo ? UINT64_MAX : lo + len, ask);
    for (i = 0; i < rm->n; i++) {
        struct rnode *nd = &rm->nd[i];
        nd->ans.n = nd->ans.ndata = nd->ans.nent = nd->ans.end = 0;
        st->stats.remote_skipped += nd->r.port != 0 && !ask[i];
        st->stats.remote_requests += ask[i];
    }
    rc = exchange(st, &q, ask);
    for (i = 0; rc == 0 && i < rm->n; i++) {
        struct rnode *nd = &rm->nd[i];
        if (!ask[i])
            continue;
        /* What this process writes from now on may follow what it read: stamped after. */
        ADIOI_BBLOG_Clock_seen(st, nd->ans.clock);
        if (nd->ans.esum != nd->esum) {
            *changed = 1;
            nd->esum = nd->ans.esum;
        }
    }
    return rc;
}

int ADIOI_BBLOG_Remote_announce(struct ADIOI_BBLOG_state *st, uint64_t lo, uint64_t hi)
{
    struct ADIOI_BBLOG_remote *rm = st->remote;
    struct req q;
    uint64_t nlo = lo, nhi = hi;
    int rc;

    if (!rm || rm->n == 0 || hi <= lo || (rm->ann_hi > rm->ann_lo && lo >= rm->ann_lo &&
                                          hi <= rm->ann_hi))
        return 0;
    /* The first range as it is; when it grows, twice what is needed, so that a process
     * writing on through the file announces a logarithmic number of times. */
    if (rm->ann_hi > rm->ann_lo) {
        nlo = lo < rm->ann_lo ? lo : rm->ann_lo;
        nhi = hi > rm->ann_hi ? hi : rm->ann_hi;
        if (nhi > rm->ann_hi)
            nhi = nhi - nlo > UINT64_MAX - nhi ? UINT64_MAX : nhi + (nhi - nlo);
    }
    memset(&q, 0, sizeof(q));
    q.magic = ANN_MAGIC;
    q.lo = nlo;
    q.len = nhi - nlo;
    q.limit = (uint32_t) st->rank;
    st->stats.remote_announces++;
    rc = exchange(st, &q, NULL);
    if (rc == 0) {
        rm->ann_lo = nlo;
        rm->ann_hi = nhi;
    }
    return rc;
}

int ADIOI_BBLOG_Remote_nodes(const struct ADIOI_BBLOG_state *st)
{
    return st->remote ? st->remote->n : 0;
}

const struct ADIOI_BBLOG_served *ADIOI_BBLOG_Remote_answer(const struct ADIOI_BBLOG_state *st,
                                                           int i)
{
    return &st->remote->nd[i].ans;
}

int ADIOI_BBLOG_Remote_err(const struct ADIOI_BBLOG_state *st, const char *myname, int line, int rc,
                           int writing)
{
    const struct rnode *nd = &st->remote->nd[st->remote->bad];
    char a[INET_ADDRSTRLEN] = "?";

    if (nd->r.port)
        inet_ntop(AF_INET, &nd->r.addr, a, sizeof(a));
    return ADIOI_BBLOG_Err(myname, line, MPI_ERR_IO,
                           writing ? "bblog: cannot tell another node's readers about writes to "
                           "%s: the read server of rank %d (%s port %u) did not answer (%s)" :
                           "bblog: cannot read what processes of another node logged in %s: "
                           "the read server of rank %d (%s port %u) did not answer (%s)",
                           st->pfs_path, nd->leader, a, (unsigned) nd->r.port, strerror(rc));
}
