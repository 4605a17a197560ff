/*
 * Reads of what processes of other nodes logged (bblog_consistency=posix, the default).
 *
 * On one node a read maps the other processes' lists of published writes (ad_bblog_vis.c).
 * With node-local burst buffers those of other nodes cannot be mapped, and their bytes sit in
 * logs that only their node can read. So the first process of each node's share of an open
 * runs a read server, a thread that reads its node's lists and logs for the other nodes. A
 * read that has to see other processes' writes asks every other node's server for the range,
 * after it has read the PFS file's bytes, and paints what the answers hold over them with its
 * own node's candidates, in stamp order.
 *
 * Why a server of our own rather than MPI: an independent read cannot make a collective call
 * (a drain), a message to the writing process would wait until that process next calls MPI,
 * and one-sided MPI needs the logs in memory and, with MPICH's ch3 and Open MPI's TCP
 * transports, the target's progress as well. The server answers at once, whatever the writer
 * is doing, and it costs nothing while no one reads. It makes no MPI call, so the
 * application's thread level does not matter.
 *
 * The wire: TCP, the same byte order on every node (checked by the magic). A request is
 * struct req; an answer is struct ans, then its candidates, then the bytes of the logged
 * ones. The open's secret (random, from rank 0 with the open's agreement) is in every request:
 * a connection without it is closed. Each reader keeps one connection per node, and the
 * server one view of its node's lists per connection, since readers that made different
 * numbers of collective calls see different entries (ad_bblog_vis.c).
 *
 * Order against a drain: a node's answer carries the sum of its lists' epochs, which grows
 * whenever one is emptied (its bytes then are in the PFS file). A reader whose answer shows a
 * sum other than that node's last answer reads again, PFS bytes first: what was emptied after
 * the last answer may have reached the file after this read's PFS bytes. The first answer of
 * an open therefore always takes two requests.
 *
 * Where a server is found: every process offers the addresses of its host name, then of its
 * other interfaces, then the loopback address (at most ADDRS); a reader connects to the first
 * that accepts and knows the secret. A server that cannot be started leaves its node's
 * processes writing straight to the PFS file, where everyone sees their bytes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* accept4, pipe2 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "adioi.h"
#include "bblog_format.h"

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

struct conn {
    int fd;
    struct ADIOI_BBLOG_peers *view;
};

struct server {
    pthread_t th;
    int lfd, wake[2];           /* wake: 'g' to start serving, anything else to stop */
    int ready;
    uint64_t key[2];
    char logdir[PATH_MAX], log_name[256];
    int n;
    unsigned char *here;
    const uint64_t *clock;      /* the node's write clock, or NULL */
    struct conn *c;
    size_t nc, cap;
    struct ADIOI_BBLOG_served out;
};

struct rnode {
    int leader;                 /* the rank that serves it */
    struct rec r;
    int fd;
    uint64_t esum;
    struct ADIOI_BBLOG_served ans;
};

struct ADIOI_BBLOG_remote {
    struct server *srv;         /* this process serves its node, or NULL */
    int n;
    struct rnode *nd;
    int bad;                    /* the node that could not be asked */
};

static int io_full(int fd, void *buf, size_t len, int is_write)
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

static void set_timeouts(int fd)
{
    struct timeval tv = { IO_TIMEOUT_S, 0 };
    int one = 1;

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- the server ---- */

static void drop(struct server *s, size_t i)
{
    close(s->c[i].fd);
    ADIOI_BBLOG_Vis_view_free(s->c[i].view);
    s->c[i] = s->c[--s->nc];
}

/* One request of connection i: 0, or an errno that ends the connection. */
static int serve(struct server *s, struct conn *c)
{
    struct req q;
    struct ans a;
    int rc = io_full(c->fd, &q, sizeof(q), 0);

    if (rc != 0)
        return rc;
    if (q.magic != REQ_MAGIC || q.key[0] != s->key[0] || q.key[1] != s->key[1])
        return EPERM;
    if (!c->view) {
        c->view = ADIOI_BBLOG_Vis_view(s->logdir, s->log_name, s->n, -1);
        if (c->view && ADIOI_BBLOG_Vis_here(c->view, s->here) != 0) {
            ADIOI_BBLOG_Vis_view_free(c->view);
            c->view = NULL;
        }
    }
    memset(&a, 0, sizeof(a));
    a.magic = ANS_MAGIC;
    s->out.n = s->out.ndata = 0;
    a.err = c->view ? (uint32_t) ADIOI_BBLOG_Vis_serve(c->view, q.limit, q.lo, q.lo + q.len,
                                                         &s->out) : ENOMEM;
    if (a.err == 0) {
        a.n = s->out.n;
        a.ndata = s->out.ndata;
        a.esum = s->out.esum;
        a.end = s->out.end;
        a.nent = s->out.nent;
    }
    if (s->clock)
        a.clock = __atomic_load_n(s->clock, __ATOMIC_ACQUIRE);
    rc = io_full(c->fd, &a, sizeof(a), 1);
    if (rc == 0 && a.n)
        rc = io_full(c->fd, s->out.c, a.n * sizeof(*s->out.c), 1);
    if (rc == 0 && a.ndata)
        rc = io_full(c->fd, s->out.data, a.ndata, 1);
    return rc;
}

static void *server_main(void *arg)
{
    struct server *s = arg;
    struct pollfd *pf = NULL;
    size_t pf_cap = 0, i, n;

    for (;;) {
        if (ADIOI_BBLOG_Grow((void **) &pf, &pf_cap, s->nc + 2, sizeof(*pf)))
            break;
        pf[0].fd = s->wake[0];
        pf[1].fd = s->lfd;
        for (i = 0; i < s->nc; i++)
            pf[i + 2].fd = s->c[i].fd;
        /* Until the open has told it which processes share the node, connections wait in
         * the listening socket's queue. */
        n = s->ready ? s->nc + 2 : 1;
        for (i = 0; i < n; i++) {
            pf[i].events = POLLIN;
            pf[i].revents = 0;
        }
        if (poll(pf, n, -1) < 0) {
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
        /* Answers first, newest connection last; a connection that ends is dropped (the
         * last takes its place, so walk down). */
        for (i = n; i-- > 2;)
            if (pf[i].revents && serve(s, &s->c[i - 2]) != 0)
                drop(s, i - 2);
        if (pf[1].revents & POLLIN) {
            int cfd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
            if (cfd >= 0 && ADIOI_BBLOG_Grow((void **) &s->c, &s->cap, s->nc + 1,
                                             sizeof(*s->c)) == 0) {
                set_timeouts(cfd);
                s->c[s->nc].fd = cfd;
                s->c[s->nc].view = NULL;
                s->nc++;
            } else if (cfd >= 0) {
                close(cfd);
            }
        }
    }
    free(pf);
    return NULL;
}

static void server_free(struct server *s)
{
    if (!s)
        return;
    while (s->nc)
        drop(s, s->nc - 1);
    if (s->lfd >= 0)
        close(s->lfd);
    if (s->wake[0] >= 0)
        close(s->wake[0]);
    if (s->wake[1] >= 0)
        close(s->wake[1]);
    free(s->c);
    free(s->here);
    free(s->out.c);
    free(s->out.data);
    free(s);
}

static void server_tell(struct server *s, char b)
{
    while (write(s->wake[1], &b, 1) < 0 && errno == EINTR);
}

static void server_stop(struct server *s)
{
    char b = 'q';

    if (!s)
        return;
    while (write(s->wake[1], &b, 1) < 0 && errno == EINTR);
    pthread_join(s->th, NULL);
    server_free(s);
}

/* A server listening on every address, port chosen by the system, its thread waiting for
 * server_tell(s, 'g'): *port, 0 and NULL on failure. */
static struct server *server_start(uint32_t *port, const struct ADIOI_BBLOG_state *st)
{
    struct server *s = calloc(1, sizeof(*s));
    struct sockaddr_in sa;
    socklen_t sl = sizeof(sa);

    *port = 0;
    if (!s)
        return NULL;
    s->lfd = s->wake[0] = s->wake[1] = -1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if ((s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(s->lfd, (struct sockaddr *) &sa, sizeof(sa)) != 0 || listen(s->lfd, 128) != 0 ||
        getsockname(s->lfd, (struct sockaddr *) &sa, &sl) != 0 || pipe2(s->wake, O_CLOEXEC)) {
        server_free(s);
        return NULL;
    }
    s->key[0] = st->key[0];
    s->key[1] = st->key[1];
    snprintf(s->logdir, sizeof(s->logdir), "%s", st->logdir);
    snprintf(s->log_name, sizeof(s->log_name), "%s", st->log_name);
    s->n = st->nprocs;
    s->clock = st->clock;
    if (!(s->here = calloc((size_t) st->nprocs, 1)) ||
        pthread_create(&s->th, NULL, server_main, s) != 0) {
        server_free(s);
        return NULL;
    }
    *port = ntohs(sa.sin_port);
    return s;
}

/* ---- where a node is ---- */

static int add_addr(struct rec *r, uint32_t a)
{
    for (uint32_t i = 0; i < r->naddr; i++)
        if (r->addr[i] == a)
            return 0;
    if (r->naddr == ADDRS)
        return 1;
    r->addr[r->naddr++] = a;
    return 0;
}

static int loopback(uint32_t a)
{
    return (ntohl(a) >> 24) == 127;
}

/* The host name's IPv4 addresses, then the other interfaces', loopback last. */
static void my_addrs(struct rec *r, const char *host)
{
    struct addrinfo hints, *ai = NULL, *p;
    struct ifaddrs *ifa = NULL, *q;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, NULL, &hints, &ai) == 0) {
        for (p = ai; p; p = p->ai_next) {
            uint32_t a = ((struct sockaddr_in *) p->ai_addr)->sin_addr.s_addr;
            if (!loopback(a))
                add_addr(r, a);
        }
        freeaddrinfo(ai);
    }
    if (getifaddrs(&ifa) == 0) {
        for (q = ifa; q; q = q->ifa_next) {
            uint32_t a;
            if (!q->ifa_addr || q->ifa_addr->sa_family != AF_INET || !(q->ifa_flags & IFF_UP))
                continue;
            a = ((struct sockaddr_in *) q->ifa_addr)->sin_addr.s_addr;
            if (!loopback(a))
                add_addr(r, a);
        }
        freeifaddrs(ifa);
    }
    if (r->naddr < ADDRS)
        add_addr(r, htonl(INADDR_LOOPBACK));
    else
        r->addr[ADDRS - 1] = htonl(INADDR_LOOPBACK);
}

static int connect_to(uint32_t addr, uint32_t port)
{
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
    set_timeouts(fd);
    return fd;
  fail:
    close(fd);
    return -1;
}

/* ---- open and close ---- */

int ADIOI_BBLOG_Remote_open(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_remote *rm = calloc(1, sizeof(*rm));
    struct rec mine, *all = ADIOI_Malloc((size_t) st->nprocs * sizeof(*all));
    unsigned char *here = ADIOI_Malloc((size_t) st->nprocs);
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    struct server *s;
    size_t cap = 0;
    int len = 0, k, j, leader = -1, rc = 0;

    memset(&mine, 0, sizeof(mine));
    MPI_Get_processor_name(host, &len);
    host[len] = '\0';
    /* BBLOG_DEBUG_NODE_SIZE cuts each host into nodes of N consecutive ranks. */
    mine.node = st->host_hash;
    if (st->hints.debug_node_size > 0)
        mine.node += 1 + (uint64_t) (st->rank / st->hints.debug_node_size);
    /* Every process starts one, so that the first of each node has one running before
     * anyone learns its port; the others stop theirs below. */
    s = rm ? server_start(&mine.port, st) : NULL;
    if (s)
        my_addrs(&mine, host);
    MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, fd->comm);
    for (k = 0; k < st->nprocs; k++) {
        here[k] = all[k].node == mine.node;
        if (here[k] && leader < 0)
            leader = k;
    }
    if (leader != st->rank) {
        server_stop(s);
        s = NULL;
    } else if (s) {
        memcpy(s->here, here, (size_t) st->nprocs);
        server_tell(s, 'g');
    }
    if (!rm) {
        rc = ENOMEM;
        goto out;
    }
    rm->srv = s;
    st->remote = rm;
    /* The other nodes, each served by its first rank. */
    for (k = 0; rc == 0 && k < st->nprocs; k++) {
        for (j = 0; j < k && all[j].node != all[k].node; j++);
        if (j < k || here[k])
            continue;
        if (ADIOI_BBLOG_Grow((void **) &rm->nd, &cap, (size_t) rm->n + 1, sizeof(*rm->nd))) {
            rc = ENOMEM;
            break;
        }
        memset(&rm->nd[rm->n], 0, sizeof(*rm->nd));
        rm->nd[rm->n].leader = k;
        rm->nd[rm->n].r = all[k];
        rm->nd[rm->n].fd = -1;
        rm->nd[rm->n].esum = UINT64_MAX;
        rm->n++;
    }
    if (rc == 0)
        rc = ADIOI_BBLOG_Vis_here(st->peers, here);
    /* No one can read this node's logged bytes from another node. */
    if (rc == 0 && all[leader].port == 0)
        rc = EHOSTUNREACH;
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
    free(rm->nd);
    free(rm);
    st->remote = NULL;
}

/* ---- the reader ---- */

static int send_req(struct ADIOI_BBLOG_remote *rm, struct rnode *nd, const struct req *q)
{
    int rc = ECONNREFUSED;

    if (nd->fd >= 0 && io_full(nd->fd, (void *) q, sizeof(*q), 1) == 0)
        return 0;
    if (nd->fd >= 0)
        close(nd->fd);
    nd->fd = -1;
    for (uint32_t i = 0; i < nd->r.naddr && i < ADDRS; i++) {
        nd->fd = connect_to(nd->r.addr[i], nd->r.port);
        if (nd->fd < 0)
            continue;
        rc = io_full(nd->fd, (void *) q, sizeof(*q), 1);
        if (rc == 0)
            return 0;
        close(nd->fd);
        nd->fd = -1;
    }
    (void) rm;
    return rc;
}

static int recv_ans(struct rnode *nd)
{
    struct ans a;
    int rc = io_full(nd->fd, &a, sizeof(a), 0);

    if (rc != 0)
        return rc;
    if (a.magic != ANS_MAGIC)
        return EPROTO;
    if (a.err != 0)
        return (int) a.err;
    if (ADIOI_BBLOG_Grow((void **) &nd->ans.c, &nd->ans.cap, a.n + 1, sizeof(*nd->ans.c)) ||
        ADIOI_BBLOG_Grow((void **) &nd->ans.data, &nd->ans.data_cap, a.ndata + 1, 1))
        return ENOMEM;
    rc = io_full(nd->fd, nd->ans.c, a.n * sizeof(*nd->ans.c), 0);
    if (rc == 0)
        rc = io_full(nd->fd, nd->ans.data, a.ndata, 0);
    nd->ans.n = a.n;
    nd->ans.ndata = a.ndata;
    nd->ans.esum = a.esum;
    nd->ans.end = a.end;
    nd->ans.nent = a.nent;
    nd->ans.clock = a.clock;
    return rc;
}

int ADIOI_BBLOG_Remote_ask(struct ADIOI_BBLOG_state *st, uint64_t lo, uint64_t len,
                           uint32_t limit, int *changed)
{
    struct ADIOI_BBLOG_remote *rm = st->remote;
    struct req q;
    int i, rc = 0, sent = 0;

    memset(&q, 0, sizeof(q));
    q.magic = REQ_MAGIC;
    q.key[0] = st->key[0];
    q.key[1] = st->key[1];
    q.lo = lo;
    q.len = len;
    q.limit = limit;
    *changed = 0;
    st->st.remote_asks++;
    /* Every node is asked before any answer is read: they work at the same time. A node
     * without a server has its processes write straight to the PFS file. */
    for (i = 0; i < rm->n; i++) {
        struct rnode *nd = &rm->nd[i];
        nd->ans.n = nd->ans.ndata = 0;
        if (nd->r.port == 0)
            continue;
        if ((rc = send_req(rm, nd, &q)) != 0)
            break;
        sent = i + 1;
    }
    for (i = 0; i < sent; i++) {
        struct rnode *nd = &rm->nd[i];
        int r;
        if (nd->r.port == 0)
            continue;
        r = recv_ans(nd);
        if (r != 0) {
            /* A broken connection says nothing about the data: one more try on a new one. */
            close(nd->fd);
            nd->fd = -1;
            r = send_req(rm, nd, &q);
            if (r == 0)
                r = recv_ans(nd);
        }
        if (r != 0 && rc == 0) {
            rc = r;
            rm->bad = i;
        }
        /* What this process writes from now on may follow what it read: stamped after. */
        if (r == 0)
            ADIOI_BBLOG_Clock_seen(st, nd->ans.clock);
        if (r == 0 && nd->ans.esum != nd->esum) {
            *changed = 1;
            nd->esum = nd->ans.esum;
        }
    }
    if (rc != 0 && sent < rm->n)
        rm->bad = sent;
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

int ADIOI_BBLOG_Remote_err(const struct ADIOI_BBLOG_state *st, const char *myname, int line,
                           int rc)
{
    const struct rnode *nd = &st->remote->nd[st->remote->bad];
    char a[INET_ADDRSTRLEN] = "?";

    if (nd->r.naddr)
        inet_ntop(AF_INET, &nd->r.addr[0], a, sizeof(a));
    return ADIOI_BBLOG_Err(myname, line, MPI_ERR_IO,
                           "bblog: cannot read what processes of another node logged in %s: "
                           "the read server of rank %d (%s port %u) did not answer (%s)",
                           st->pfs_path, nd->leader, a, (unsigned) nd->r.port, strerror(rc));
}
