/*
 * An outside process attacking a job's read servers (test/mpi/run-srvattack.sh): no MPI, no
 * secret, only the addresses and ports the job listens on. Loopback or the emulated cluster's
 * own namespaces only: the harness gives the addresses, found in the job's sockets.
 *
 * Usage: srvattack MODE SECONDS ADDR:PORT... [-c CAPTURE]
 * Modes (each keeps at it until SECONDS pass, then closes everything and exits):
 *   garbage   connections that send random bytes, 2,000 in all, a few at a time
 *   stall     4 connections (fewer than a server's room, so that only its deadlines can
 *             end them) that each send the first 8 bytes of a request and then nothing,
 *             opened again as the server drops them
 *   flood     as many connections held open as the process may have (up to 2,500), opened
 *             again as the server drops them
 *   wrongkey  well-formed requests after the hello, signed with a random key
 *   absurd    the same with absurd sizes (a range of 2^63 bytes, the largest limit)
 *   replay    the requests in CAPTURE (bytes a job's reader sent, recorded by srvcap.so),
 *             each sent again on a new connection after its hello
 *   halfclose connections that read the hello, send half a request and shut their write side
 * Prints one line: srvattack MODE: connections C answers A (answers: bytes the server sent
 * after its hello to a request of ours). Exit status: 0, or 1 when the server answered a
 * request it should have refused (wrongkey, absurd, replay), or 2 on a usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXT 8
#define REQ_BYTES 56            /* the size of the driver's struct req */
#define HELLO_BYTES 24

struct target {
    struct sockaddr_in sa;
};

static struct target tg[MAXT];
static int ntg;
static long conns, answers;
static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* A connection to target i (blocking, 1 s timeouts), or -1. */
static int dial(int i)
{
    struct timeval tv = { 1, 0 };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *) &tg[i].sa, sizeof(tg[i].sa)) != 0) {
        close(fd);
        return -1;
    }
    conns++;
    return fd;
}

static int read_full(int fd, void *b, size_t n)
{
    size_t got = 0;

    while (got < n) {
        ssize_t r = recv(fd, (char *) b + got, n - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t) r;
    }
    return 0;
}

/* Sends req after the hello; counts an answer if any byte comes back before the server
 * closes the connection or 1 s passes. */
static void try_request(int i, const unsigned char *req)
{
    unsigned char hello[HELLO_BYTES], b[64];
    int fd = dial(i);

    if (fd < 0)
        return;
    if (read_full(fd, hello, sizeof(hello)) == 0 && send(fd, req, REQ_BYTES, MSG_NOSIGNAL) ==
        REQ_BYTES && recv(fd, b, sizeof(b), 0) > 0)
        answers++;
    close(fd);
}

/* A request laid out as the driver's struct req, with a random MAC. */
static void forged(unsigned char *req, uint64_t lo, uint64_t len, uint32_t limit)
{
    uint64_t w[7] = { UINT64_C(0x32514552474f4c42), 0, lo, len, 0, rnd(), rnd() };

    memcpy(&w[4], &limit, sizeof(limit));
    memcpy(req, w, REQ_BYTES);
}

/* Keeps up to want connections to the targets open, each sent first (bytes) once. */
static void hold(int *fds, int want, const unsigned char *first, size_t bytes, double until)
{
    struct pollfd pf;
    unsigned char b[256];

    for (int k = 0; k < want; k++)
        fds[k] = -1;
    while (now_s() < until) {
        for (int k = 0; k < want && now_s() < until; k++) {
            if (fds[k] >= 0) {
                pf.fd = fds[k];
                pf.events = POLLIN;
                /* Dropped by the server (EOF or reset): open it again. */
                if (poll(&pf, 1, 0) == 1 && recv(fds[k], b, sizeof(b), MSG_DONTWAIT) <= 0) {
                    close(fds[k]);
                    fds[k] = -1;
                }
                continue;
            }
            fds[k] = dial(k % ntg);
            if (fds[k] >= 0 && bytes)
                send(fds[k], first, bytes, MSG_NOSIGNAL);
            if (fds[k] < 0 && (errno == EMFILE || errno == ENFILE))
                break;
        }
        usleep(20000);
    }
    for (int k = 0; k < want; k++)
        if (fds[k] >= 0)
            close(fds[k]);
}

int main(int argc, char **argv)
{
    const char *mode, *capture = NULL;
    unsigned char req[REQ_BYTES], junk[512];
    double until;
    int k, fds[2500];
    struct rlimit rl;

    if (argc < 4)
        goto usage;
    mode = argv[1];
    until = now_s() + atof(argv[2]);
    for (k = 3; k < argc; k++) {
        char host[64];
        unsigned port;
        if (strcmp(argv[k], "-c") == 0 && k + 1 < argc) {
            capture = argv[++k];
            continue;
        }
        if (ntg == MAXT || sscanf(argv[k], "%63[^:]:%u", host, &port) != 2)
            goto usage;
        memset(&tg[ntg].sa, 0, sizeof(tg[ntg].sa));
        tg[ntg].sa.sin_family = AF_INET;
        tg[ntg].sa.sin_port = htons((uint16_t) port);
        if (inet_pton(AF_INET, host, &tg[ntg].sa.sin_addr) != 1)
            goto usage;
        ntg++;
    }
    if (ntg == 0)
        goto usage;
    rng ^= (uint64_t) getpid();
    if (strcmp(mode, "garbage") == 0) {
        for (long n = 0; n < 2000 && now_s() < until; n++) {
            int fd = dial((int) (n % ntg));
            if (fd < 0)
                continue;
            for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (unsigned char) rnd();
            send(fd, junk, 1 + rnd() % sizeof(junk), MSG_NOSIGNAL);
            close(fd);
        }
        while (now_s() < until)
            usleep(20000);
    } else if (strcmp(mode, "stall") == 0) {
        forged(req, 0, 4096, 0);
        hold(fds, 4, req, 8, until);
    } else if (strcmp(mode, "flood") == 0) {
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2600) {
            rl.rlim_cur = rl.rlim_max < 2600 ? rl.rlim_max : 2600;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        hold(fds, 2500, NULL, 0, until);
    } else if (strcmp(mode, "wrongkey") == 0 || strcmp(mode, "absurd") == 0) {
        int absurd = strcmp(mode, "absurd") == 0;
        for (long n = 0; now_s() < until; n++) {
            forged(req, 0, absurd ? UINT64_C(1) << 63 : 4096, absurd ? UINT32_MAX : 0);
            try_request((int) (n % ntg), req);
        }
    } else if (strcmp(mode, "replay") == 0) {
        FILE *f = capture ? fopen(capture, "rb") : NULL;
        long got = 0;
        if (!f) {
            fprintf(stderr, "srvattack: replay needs -c CAPTURE (%s)\n", strerror(errno));
            return 2;
        }
        while (now_s() < until && fread(req, 1, REQ_BYTES, f) == REQ_BYTES) {
            got++;
            for (k = 0; k < ntg; k++)
                try_request(k, req);
        }
        fclose(f);
        if (got == 0) {
            fprintf(stderr, "srvattack: no request in %s to replay\n", capture);
            return 2;
        }
    } else if (strcmp(mode, "halfclose") == 0) {
        forged(req, 0, 4096, 0);
        for (long n = 0; now_s() < until; n++) {
            unsigned char hello[HELLO_BYTES];
            int fd = dial((int) (n % ntg));
            if (fd < 0)
                continue;
            if (read_full(fd, hello, sizeof(hello)) == 0) {
                send(fd, req, REQ_BYTES / 2, MSG_NOSIGNAL);
                shutdown(fd, SHUT_WR);
                if (recv(fd, junk, sizeof(junk), 0) > 0)
                    answers++;
            }
            close(fd);
        }
    } else {
        goto usage;
    }
    printf("srvattack %s: connections %ld answers %ld\n", mode, conns, answers);
    return answers > 0 && strcmp(mode, "garbage") != 0 && strcmp(mode, "stall") != 0 &&
        strcmp(mode, "flood") != 0 ? 1 : 0;
  usage:
    fprintf(stderr, "usage: srvattack garbage|stall|flood|wrongkey|absurd|replay|halfclose "
            "SECONDS ADDR:PORT... [-c CAPTURE]\n");
    return 2;
}
