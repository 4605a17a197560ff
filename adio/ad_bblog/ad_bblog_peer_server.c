/*
 * The read server of a node, and the open and close of remote reads (the design and the wire:
 * ad_bblog_peer_remote.c). At open every process starts a server and tells the others, with one
 * MPI_Allgather, its node, port and address; the first process of each node keeps its server, which
 * answers other nodes' requests from its node's lists and logs (ad_bblog_peer_list.c), the others
 * stop theirs.
 *
 * Data path. The server is a thread that makes no MPI call. It listens on one address:
 * bblog_server_addr's, else the host name's first IPv4 address that is not loopback, else the first
 * up interface's, else loopback. Connections wait in the listening socket's queue until the open
 * has told it which processes share the node. It makes the node's coverage table of announced
 * ranges (<token>.n<leader>.cov, under a temporary name renamed once whole, so that a process of
 * the node maps a whole one or none) and grows a process's slot before it answers the announcement.
 *
 * Threat model (bblog(7), READ SERVERS). The server listens on one address of the node, inside the
 * application's process, for the length of an open. Any process that can reach that address, of any
 * user, can connect. Without the open's secret it learns nothing but a nonce; it cannot read a
 * byte, stall the job's readers, or take the application's descriptors. The server never waits on
 * one client: every socket is nonblocking and each connection is a small state machine (hello sent;
 * reading a request; sending an answer), so a request is read as its bytes come, an answer written
 * as the socket takes it, between everyone else's. Deadlines: a connection must send a complete,
 * valid request within AUTH_MS of its accept; a request, once begun, must be complete within
 * REQUEST_MS; an answer must make progress within SEND_MS; past one, the connection is dropped.
 * Authentication comes before anything is allocated or read from the logs: the request's MAC,
 * compared in constant time, over this connection's nonce and the request's number; a bad one drops
 * the connection. Resources are bounded: at most one connection per process of the other nodes of
 * this open, plus SPARE_CONNS; when full, a new connection evicts the oldest one not yet
 * authenticated, or is closed if every one is. No descriptor at or above RLIMIT_NOFILE - FD_RESERVE
 * is kept, so the application's own open()s always find room. An unauthenticated connection holds a
 * request buffer of a fixed size; an answer is what the node logged in the range asked, to the
 * job's own processes only.
 *
 * Invariants. s->c[0..nc) are open connections; a connection is sending (c->total > 0) or reading,
 * never both; every connection has a deadline but authenticated idle ones.
 *
 * Failures. Where the first process of a node has no server, every process of that node learns it
 * from the Allgather and fails Remote_open: its writes then go straight to the PFS file
 * (ad_bblog_open.c), and the other nodes never ask it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* accept4, pipe2 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_peer.h"
#include "ad_bblog_peer_priv.h"
#include "adioi.h"

struct conn {
    int fd;
    int authed;                 /* has sent a valid request */
    uint64_t nonce[2], seq;     /* its hello's nonce; the number its next request must carry */
    int64_t deadline_ms;        /* drop it then; 0: none (authenticated and idle) */
    int64_t accepted_ms;
    struct req q;
    size_t qgot;                /* bytes of q received */
    struct ans a;
    struct ADIOI_BBLOG_served out;      /* the answer being sent */
    size_t sent, total;         /* of sizeof(a) + candidates + data; total 0: reading */
    struct ADIOI_BBLOG_peers *view;
};

struct ADIOI_BBLOG_server {
    pthread_t th;
    int lfd, wake[2];           /* wake: 'g' to start serving, anything else to stop */
    int ready;
    uint64_t key[2];
    char logdir[PATH_MAX], log_name[256];
    int n;
    unsigned char *here;
    const uint64_t *clock;      /* the node's write clock, or NULL */
    struct conn *c;
    size_t nc, cap, max_conns;
    int fd_limit;               /* no connection's descriptor at or above this */
    struct cov_hdr *cov;        /* the node's coverage table (ad_bblog_peer_remote.c), or NULL */
    char cov_path[PATH_MAX];
    struct ADIOI_BBLOG_server_stats stats;      /* read by the application thread (atomics) */
};

static int64_t now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void count(uint64_t *counter)
{
    __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* ---- the server ---- */

static void drop(struct ADIOI_BBLOG_server *s, size_t i)
{
    struct conn *c = &s->c[i];

    close(c->fd);
    ADIOI_BBLOG_Peer_view_free(c->view);
    free(c->out.c);
    free(c->out.data);
    s->c[i] = s->c[--s->nc];
}

/* Whether q is the next request of c, signed with the open's secret: constant time in the MAC. */
static int valid(const struct ADIOI_BBLOG_server *s, const struct conn *c, const struct req *q)
{
    uint64_t mac[2], diff;

    ADIOI_BBLOG_Remote_mac(s->key, c->nonce, q, mac);
    diff = (mac[0] ^ q->mac[0]) | (mac[1] ^ q->mac[1]);
    return (diff == 0) & ((q->magic == REQ_MAGIC) | (q->magic == ANN_MAGIC)) & (q->seq == c->seq);
}

/* Rank q->limit of another node may publish writes in [q->lo, q->lo + q->len) from now on: its
 * slot in the coverage table grows to hold that, before the answer lets the writer go on. */
static uint32_t take_announcement(struct ADIOI_BBLOG_server *s, const struct req *q)
{
    struct cov_slot *slot;
    uint64_t lo = q->lo, hi = q->lo + q->len;

    if (q->limit >= (uint32_t) s->n || s->here[q->limit])
        return EINVAL;
    if (hi < lo)
        hi = UINT64_MAX;
    if (!s->cov || q->len == 0)
        return 0;               /* no table: this node's readers ask every node */
    slot = (struct cov_slot *) (s->cov + 1) + q->limit;
    if (slot->hi == 0 || lo < slot->lo)
        __atomic_store_n(&slot->lo, lo, __ATOMIC_RELEASE);
    if (hi > slot->hi)
        __atomic_store_n(&slot->hi, hi, __ATOMIC_RELEASE);
    return 0;
}

/* The answer to c's request, made ready to send: to an announcement, an empty one. */
static void answer(struct ADIOI_BBLOG_server *s, struct conn *c)
{
    struct ans *a = &c->a;

    memset(a, 0, sizeof(*a));
    a->magic = ANS_MAGIC;
    c->out.n = c->out.ndata = 0;
    if (c->q.magic == ANN_MAGIC) {
        a->err = take_announcement(s, &c->q);
    } else {
        if (!c->view) {
            c->view = ADIOI_BBLOG_Peer_view(s->logdir, s->log_name, s->n, -1);
            if (c->view && ADIOI_BBLOG_Peer_here(c->view, s->here) != 0) {
                ADIOI_BBLOG_Peer_view_free(c->view);
                c->view = NULL;
            }
        }
        a->err = c->view ? (uint32_t) ADIOI_BBLOG_Peer_serve(c->view, c->q.limit, c->q.lo,
                                                              c->q.lo + c->q.len, &c->out)
            : ENOMEM;
        if (a->err == 0) {
            a->n = c->out.n;
            a->ndata = c->out.ndata;
            a->esum = c->out.esum;
            a->end = c->out.end;
            a->nent = c->out.nent;
        }
    }
    if (s->clock)
        a->clock = __atomic_load_n(s->clock, __ATOMIC_ACQUIRE);
    c->sent = 0;
    c->total = sizeof(*a) + (size_t) a->n * sizeof(*c->out.c) + (size_t) a->ndata;
}

/* Sends what the socket takes of c's answer: 0, or an errno that ends the connection. */
static int send_some(struct conn *c, int64_t now)
{
    size_t lens[3] = { sizeof(c->a), (size_t) c->a.n * sizeof(*c->out.c), (size_t) c->a.ndata };
    char *bufs[3] = { (char *) &c->a, (char *) c->out.c, c->out.data };
    struct iovec iov[3];
    struct msghdr m;
    size_t skip = c->sent;
    int k = 0;
    ssize_t w;

    for (int i = 0; i < 3; i++) {
        if (skip >= lens[i]) {
            skip -= lens[i];
            continue;
        }
        iov[k].iov_base = bufs[i] + skip;
        iov[k++].iov_len = lens[i] - skip;
        skip = 0;
    }
    memset(&m, 0, sizeof(m));
    m.msg_iov = iov;
    m.msg_iovlen = (size_t) k;
    w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : errno;
    c->sent += (size_t) w;
    c->deadline_ms = now + SEND_MS;
    if (c->sent == c->total) {
        c->total = 0;
        c->deadline_ms = 0;     /* authenticated and idle */
    }
    return 0;
}

/* Receives what came of c's request and answers a complete one: 0, or an errno that ends the
 * connection (EPERM: not the job's). */
static int recv_some(struct ADIOI_BBLOG_server *s, struct conn *c, int64_t now)
{
    ssize_t r = recv(c->fd, (char *) &c->q + c->qgot, sizeof(c->q) - c->qgot, MSG_DONTWAIT);

    if (r == 0)
        return ECONNRESET;
    if (r < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : errno;
    if (c->qgot == 0 && c->authed)
        c->deadline_ms = now + REQUEST_MS;
    c->qgot += (size_t) r;
    if (c->qgot < sizeof(c->q))
        return 0;
    c->qgot = 0;
    if (!valid(s, c, &c->q)) {
        count(&s->stats.bad_requests);
        return EPERM;
    }
    c->authed = 1;
    c->seq++;
    answer(s, c);
    return send_some(c, now);
}

/* A new connection: its hello sent, or closed when no room is left for it. */
static void admit(struct ADIOI_BBLOG_server *s, int cfd, int64_t now)
{
    struct hello h;
    struct conn *c;
    size_t i, oldest = SIZE_MAX;

    if (cfd >= s->fd_limit) {
        count(&s->stats.refused);
        close(cfd);
        return;
    }
    if (s->nc >= s->max_conns) {
        for (i = 0; i < s->nc; i++)
            if (!s->c[i].authed && (oldest == SIZE_MAX ||
                                    s->c[i].accepted_ms < s->c[oldest].accepted_ms))
                oldest = i;
        if (oldest == SIZE_MAX) {
            count(&s->stats.refused);
            close(cfd);
            return;
        }
        count(&s->stats.evicted);
        drop(s, oldest);
    }
    if (bblog_grow((void **) &s->c, &s->cap, s->nc + 1, sizeof(*s->c))) {
        close(cfd);
        return;
    }
    c = &s->c[s->nc];
    memset(c, 0, sizeof(*c));
    c->fd = cfd;
    c->accepted_ms = now;
    c->deadline_ms = now + AUTH_MS;
    h.magic = HELLO_MAGIC;
    if (getrandom(c->nonce, sizeof(c->nonce), 0) != (ssize_t) sizeof(c->nonce) ||
        (h.nonce[0] = c->nonce[0], h.nonce[1] = c->nonce[1],
         send(cfd, &h, sizeof(h), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) sizeof(h))) {
        close(cfd);             /* a new socket's buffer takes 24 bytes: not one of ours */
        return;
    }
    s->nc++;
    count(&s->stats.accepted);
    if (s->nc > __atomic_load_n(&s->stats.max_conns, __ATOMIC_RELAXED))
        __atomic_store_n(&s->stats.max_conns, (uint64_t) s->nc, __ATOMIC_RELAXED);
}

/* Until the open has told it which processes share the node, connections wait in the listening
 * socket's queue (pf[1] not polled). Returns the poll timeout: the nearest deadline. */
static int fill_poll(struct ADIOI_BBLOG_server *s, struct pollfd *pf, size_t *n, int64_t now)
{
    int64_t first = -1;

    pf[0].fd = s->wake[0];
    pf[0].events = POLLIN;
    pf[1].fd = s->lfd;
    pf[1].events = POLLIN;
    *n = s->ready ? s->nc + 2 : 1;
    for (size_t i = 0; s->ready && i < s->nc; i++) {
        struct conn *c = &s->c[i];
        pf[i + 2].fd = c->fd;
        pf[i + 2].events = c->total ? POLLOUT : POLLIN;
        if (c->deadline_ms && (first < 0 || c->deadline_ms < first))
            first = c->deadline_ms;
    }
    for (size_t i = 0; i < *n; i++)
        pf[i].revents = 0;
    if (first < 0)
        return -1;
    return first <= now ? 0 : (int) (first - now);
}

static void *server_main(void *arg)
{
    struct ADIOI_BBLOG_server *s = arg;
    struct pollfd *pf = NULL;
    size_t pf_cap = 0, i, n;
    int64_t now;
    int tmo, k, rc;

    for (;;) {
        if (bblog_grow((void **) &pf, &pf_cap, s->nc + 2, sizeof(*pf)))
            break;
        tmo = fill_poll(s, pf, &n, now_ms());
        if (poll(pf, n, tmo) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (pf[0].revents) {
            char b = 0;
            if (read(s->wake[0], &b, 1) != 1 || b != 'g')
                break;
            s->ready = 1;
            continue;
        }
        now = now_ms();
        /* Each connection as far as it goes without waiting; one that ends or runs past its
         * deadline is dropped (the last takes its place, so walk down). */
        for (i = n; i-- > 2;) {
            struct conn *c = &s->c[i - 2];
            rc = 0;
            if (pf[i].revents & (POLLERR | POLLNVAL))
                rc = EPIPE;
            else if (pf[i].revents)
                rc = c->total ? send_some(c, now) : recv_some(s, c, now);
            if (rc == 0 && c->deadline_ms && now >= c->deadline_ms) {
                count(&s->stats.deadline_drops);
                rc = ETIMEDOUT;
            }
            if (rc != 0)
                drop(s, i - 2);
        }
        for (k = 0; n > 1 && (pf[1].revents & POLLIN) && k < 64; k++) {
            int cfd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (cfd < 0)
                break;          /* EAGAIN: none left; EMFILE: the limit is not ours to take */
            admit(s, cfd, now);
        }
    }
    free(pf);
    return NULL;
}

static void server_free(struct ADIOI_BBLOG_server *s)
{
    if (!s)
        return;
    while (s->nc)
        drop(s, s->nc - 1);
    if (s->cov) {
        munmap(s->cov, COV_LEN(s->n));
        unlink(s->cov_path);
    }
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->wake[0] >= 0)
        close(s->wake[0]);
    if (s->wake[1] >= 0)
        close(s->wake[1]);
    free(s->c);
    free(s->here);
    free(s);
}

static void server_tell(struct ADIOI_BBLOG_server *s, char b)
{
    while (write(s->wake[1], &b, 1) < 0 && errno == EINTR);
}

static void server_stop(struct ADIOI_BBLOG_server *s)
{
    char b = 'q';

    if (!s)
        return;
    while (write(s->wake[1], &b, 1) < 0 && errno == EINTR);
    pthread_join(s->th, NULL);
    server_free(s);
}

/* ---- where a server listens ---- */

static int loopback(uint32_t a)
{
    return (ntohl(a) >> 24) == 127;
}

/* The first IPv4 address of interface name (or of any up interface but loopback when name is
 * NULL): 0 or ENODEV. */
static int iface_addr(const char *name, uint32_t *addr)
{
    struct ifaddrs *ifa = NULL, *q;
    int rc = ENODEV;

    if (getifaddrs(&ifa) != 0)
        return errno;
    for (q = ifa; q && rc; q = q->ifa_next) {
        uint32_t a;
        if (!q->ifa_addr || q->ifa_addr->sa_family != AF_INET || !(q->ifa_flags & IFF_UP))
            continue;
        a = ((struct sockaddr_in *) q->ifa_addr)->sin_addr.s_addr;
        if (name ? strcmp(q->ifa_name, name) == 0 : !loopback(a)) {
            *addr = a;
            rc = 0;
        }
    }
    freeifaddrs(ifa);
    return rc;
}

/* The one address the server listens on: bblog_server_addr's (an IPv4 address, or an
 * interface's first), else the host name's first IPv4 address that is not loopback (the name
 * the MPI launcher reaches the node by), else the first up interface's, else loopback. */
static int server_addr(const char *want, const char *host, uint32_t *addr)
{
    struct addrinfo hints, *ai = NULL, *p;
    struct in_addr in;

    if (want[0]) {
        if (inet_pton(AF_INET, want, &in) == 1) {
            *addr = in.s_addr;
            return 0;
        }
        return iface_addr(want, addr);
    }
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &ai) == 0) {
        for (p = ai; p; p = p->ai_next) {
            uint32_t a = ((struct sockaddr_in *) p->ai_addr)->sin_addr.s_addr;
            if (!loopback(a)) {
                *addr = a;
                freeaddrinfo(ai);
                return 0;
            }
        }
        freeaddrinfo(ai);
    }
    if (iface_addr(NULL, addr) != 0)
        *addr = htonl(INADDR_LOOPBACK);
    return 0;
}

/* A server listening on addr, port chosen by the system, its thread waiting for
 * server_tell(s, 'g'): 0 with *out and *port, or an errno. */
static int server_start(uint32_t addr, uint32_t *port, const struct ADIOI_BBLOG_state *st,
                        struct ADIOI_BBLOG_server **out)
{
    struct ADIOI_BBLOG_server *s = calloc(1, sizeof(*s));
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);
    struct rlimit rl;
    int rc = 0;

    *port = 0;
    *out = NULL;
    if (!s)
        return ENOMEM;
    s->lfd = s->wake[0] = s->wake[1] = -1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = addr;
    if ((s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
        bind(s->lfd, (struct sockaddr *) &sa, sizeof(sa)) != 0 || listen(s->lfd, 128) != 0 ||
        getsockname(s->lfd, (struct sockaddr *) &sa, &sl) != 0 || pipe2(s->wake, O_CLOEXEC)) {
        rc = errno;
        goto fail;
    }
    s->key[0] = st->key[0];
    s->key[1] = st->key[1];
    snprintf(s->logdir, sizeof(s->logdir), "%s", st->logdir);
    snprintf(s->log_name, sizeof(s->log_name), "%s", st->log_name);
    s->n = st->nprocs;
    s->clock = st->clock;
    s->fd_limit = INT_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t) INT_MAX)
        s->fd_limit = (int) rl.rlim_cur - FD_RESERVE;
    if (!(s->here = calloc((size_t) st->nprocs, 1))) {
        rc = ENOMEM;
        goto fail;
    }
    if ((rc = pthread_create(&s->th, NULL, server_main, s)) != 0)
        goto fail;
    *port = ntohs(sa.sin_port);
    *out = s;
    return 0;
  fail:
    server_free(s);
    return rc;
}

/* ---- the coverage table ---- */

/* The table of this node at path, for the n processes of the open, zeroed: made under a
 * temporary name and renamed, so that a process of the node maps a whole one or none. */
static int cov_create(struct ADIOI_BBLOG_server *s, const char *path)
{
    char tmp[PATH_MAX + 8];
    size_t len = COV_LEN(s->n);
    struct cov_hdr *h;
    int fd, rc = 0;

    if ((size_t) snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp) ||
        strlen(path) >= sizeof(s->cov_path))
        return ENAMETOOLONG;
    fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return errno;
    h = ftruncate(fd, (off_t) len) == 0 ?
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (h == MAP_FAILED) {
        rc = errno;
    } else {
        h->n = (uint64_t) s->n;
        __atomic_store_n(&h->magic, COV_MAGIC, __ATOMIC_RELEASE);
        if (rename(tmp, path) != 0) {
            rc = errno;
            munmap(h, len);
        }
    }
    close(fd);
    if (rc != 0) {
        unlink(tmp);
        return rc;
    }
    s->cov = h;
    snprintf(s->cov_path, sizeof(s->cov_path), "%s", path);
    return 0;
}

/* ---- open and close ---- */

/* (node, rank) pairs in that order: each node's ranks together, its first rank first. */
static int by_node_rank(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;

    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The other nodes (not here[]) from every process's rec, numbered in the order of their first
 * ranks, each served by its first rank, into rm->nd, and each rank's node into rm->node_of:
 * 0 or ENOMEM. Sorted by node, so that it takes O(P log P) at any process count P. */
static int list_nodes(struct ADIOI_BBLOG_remote *rm, const struct rec *all,
                      const unsigned char *here)
{
    uint64_t *v = malloc(2 * (size_t) rm->nprocs * sizeof(*v));
    size_t cap = 0;
    int k;

    if (!v)
        return ENOMEM;
    for (k = 0; k < rm->nprocs; k++) {
        v[2 * k] = all[k].node;
        v[2 * k + 1] = (uint64_t) k;
    }
    qsort(v, (size_t) rm->nprocs, 2 * sizeof(*v), by_node_rank);
    /* First each rank's node's first rank; then, in rank order, the node's number. */
    for (k = 0; k < rm->nprocs; k++)
        rm->node_of[v[2 * k + 1]] = k > 0 && v[2 * k] == v[2 * k - 2] ?
            rm->node_of[v[2 * k - 1]] : (int) v[2 * k + 1];
    free(v);
    for (k = 0; k < rm->nprocs; k++) {
        int first = rm->node_of[k];

        rm->node_of[k] = here[k] ? -1 : first < k ? rm->node_of[first] : rm->n;
        if (first < k || here[k])
            continue;
        if (bblog_grow((void **) &rm->nd, &cap, (size_t) rm->n + 1, sizeof(*rm->nd)))
            return ENOMEM;
        memset(&rm->nd[rm->n], 0, sizeof(*rm->nd));
        rm->nd[rm->n].leader = k;
        rm->nd[rm->n].r = all[k];
        rm->nd[rm->n].fd = -1;
        rm->nd[rm->n].esum = UINT64_MAX;
        rm->n++;
    }
    return 0;
}

int ADIOI_BBLOG_Remote_open(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_remote *rm = calloc(1, sizeof(*rm));
    struct rec mine, *all = ADIOI_Malloc((size_t) st->nprocs * sizeof(*all));
    unsigned char *here = ADIOI_Malloc((size_t) st->nprocs);
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    const char *token;
    struct ADIOI_BBLOG_server *s = NULL;
    uint32_t addr = 0;
    int len = 0, k, leader = -1, rc = 0, others = 0, why = 0;

    memset(&mine, 0, sizeof(mine));
    MPI_Get_processor_name(host, &len);
    host[len] = '\0';
    /* BBLOG_DEBUG_NODE_SIZE cuts each host into nodes of N consecutive ranks. */
    mine.node = st->host_hash;
    if (st->hints.debug_node_size > 0)
        mine.node += 1 + (uint64_t) (st->rank / st->hints.debug_node_size);
    /* Every process starts one, so that the first of each node has one running before
     * anyone learns its port; the others stop theirs below. */
    why = rm ? server_addr(st->hints.server_addr, host, &addr) : ENOMEM;
    if (why == 0)
        why = server_start(addr, &mine.port, st, &s);
    if (s)
        mine.addr = addr;
    if (ADIOI_BBLOG_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE,
                              fd->comm) != MPI_SUCCESS) {
        server_stop(s);
        free(rm);
        rc = ADIOI_BBLOG_ECOLL;
        goto out;
    }
    for (k = 0; k < st->nprocs; k++) {
        here[k] = all[k].node == mine.node;
        if (here[k] && leader < 0)
            leader = k;
        others += !here[k];
    }
    if (leader != st->rank) {
        server_stop(s);
        s = NULL;
    }
    if (!rm || !(rm->node_of = malloc((size_t) st->nprocs * sizeof(*rm->node_of)))) {
        server_stop(s);
        free(rm);
        rc = ENOMEM;
        goto out;
    }
    rm->nprocs = st->nprocs;
    /* Beside the lists, named after the open's token (ad_bblog_peer_list.c) and the node's
     * leader. */
    token = strrchr(st->log_name, '.');
    snprintf(rm->cov_path, sizeof(rm->cov_path), "%s/%.*s.n%d.cov", st->logdir,
             token ? (int) (token - st->log_name) : 0, st->log_name, leader);
    if (s) {
        /* Each process of the other nodes keeps one connection to this server. Without a
         * coverage table, this node's reads ask every other node. */
        s->max_conns = (size_t) others + SPARE_CONNS;
        memcpy(s->here, here, (size_t) st->nprocs);
        if (cov_create(s, rm->cov_path) == 0)
            rm->cov = s->cov;
        server_tell(s, 'g');
    }
    rm->srv = s;
    st->remote = rm;
    rc = list_nodes(rm, all, here);
    if (rc == 0)
        rc = ADIOI_BBLOG_Peer_here(st->peers, here);
    /* No one can read this node's logged bytes from another node. */
    if (rc == 0 && all[leader].port == 0)
        rc = leader == st->rank && why ? why : EHOSTUNREACH;
  out:
    ADIOI_Free(all);
    ADIOI_Free(here);
    return rc;
}

void ADIOI_BBLOG_Remote_close(struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_remote *rm = st->remote;

    if (!rm)
        return;
    server_stop(rm->srv);
    for (int i = 0; i < rm->n; i++) {
        if (rm->nd[i].fd >= 0)
            close(rm->nd[i].fd);
        free(rm->nd[i].ans.c);
        free(rm->nd[i].ans.data);
    }
    if (rm->cov && !rm->srv)
        munmap((void *) rm->cov, COV_LEN(rm->nprocs));
    free(rm->nd);
    free(rm->ask);
    free(rm->node_of);
    free(rm);
    st->remote = NULL;
}


void ADIOI_BBLOG_Remote_stats(const struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_stats *out)
{
    const struct ADIOI_BBLOG_server *s = st->remote ? st->remote->srv : NULL;

    if (!s)
        return;
    out->srv_accepted = __atomic_load_n(&s->stats.accepted, __ATOMIC_RELAXED);
    out->srv_refused = __atomic_load_n(&s->stats.refused, __ATOMIC_RELAXED);
    out->srv_evicted = __atomic_load_n(&s->stats.evicted, __ATOMIC_RELAXED);
    out->srv_deadline = __atomic_load_n(&s->stats.deadline_drops, __ATOMIC_RELAXED);
    out->srv_bad = __atomic_load_n(&s->stats.bad_requests, __ATOMIC_RELAXED);
    out->srv_max_conns = __atomic_load_n(&s->stats.max_conns, __ATOMIC_RELAXED);
}
