/*
 * The read server of a node, and the open and close of remote reads (the design and the wire:
 * ad_bblog_remote.c). At open every process starts a server and tells the others, with one
 * MPI_Allgather, its node, port and addresses; the first process of each node keeps its server,
 * which answers other nodes' requests from its node's lists and logs (ad_bblog_vis.c), the
 * others stop theirs.
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
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "adioi.h"
#include "ad_bblog_remote.h"

struct conn {
    int fd;
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
    size_t nc, cap;
    struct ADIOI_BBLOG_served out;
};

/* ---- the server ---- */

static void drop(struct ADIOI_BBLOG_server *s, size_t i)
{
    close(s->c[i].fd);
    ADIOI_BBLOG_Vis_view_free(s->c[i].view);
    s->c[i] = s->c[--s->nc];
}

/* One request of connection i: 0, or an errno that ends the connection. */
static int serve(struct ADIOI_BBLOG_server *s, struct conn *c)
{
    struct req q;
    struct ans a;
    int rc = ADIOI_BBLOG_Remote_io(c->fd, &q, sizeof(q), 0);

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
    rc = ADIOI_BBLOG_Remote_io(c->fd, &a, sizeof(a), 1);
    if (rc == 0 && a.n)
        rc = ADIOI_BBLOG_Remote_io(c->fd, s->out.c, a.n * sizeof(*s->out.c), 1);
    if (rc == 0 && a.ndata)
        rc = ADIOI_BBLOG_Remote_io(c->fd, s->out.data, a.ndata, 1);
    return rc;
}

static void *server_main(void *arg)
{
    struct ADIOI_BBLOG_server *s = arg;
    struct pollfd *pf = NULL;
    size_t pf_cap = 0, i, n;

    for (;;) {
        if (bblog_grow((void **) &pf, &pf_cap, s->nc + 2, sizeof(*pf)))
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
            if (cfd >= 0 && bblog_grow((void **) &s->c, &s->cap, s->nc + 1,
                                             sizeof(*s->c)) == 0) {
                ADIOI_BBLOG_Remote_timeouts(cfd);
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

static void server_free(struct ADIOI_BBLOG_server *s)
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

/* A server listening on every address, port chosen by the system, its thread waiting for
 * server_tell(s, 'g'): *port, 0 and NULL on failure. */
static struct ADIOI_BBLOG_server *server_start(uint32_t *port, const struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_server *s = calloc(1, sizeof(*s));
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

/* ---- open and close ---- */

int ADIOI_BBLOG_Remote_open(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    struct ADIOI_BBLOG_remote *rm = calloc(1, sizeof(*rm));
    struct rec mine, *all = ADIOI_Malloc((size_t) st->nprocs * sizeof(*all));
    unsigned char *here = ADIOI_Malloc((size_t) st->nprocs);
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    struct ADIOI_BBLOG_server *s;
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
    ADIOI_BBLOG_Allgather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, fd->comm);
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
        if (bblog_grow((void **) &rm->nd, &cap, (size_t) rm->n + 1, sizeof(*rm->nd))) {
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

