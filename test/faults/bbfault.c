/*
 * An LD_PRELOAD fault injector for the I/O of bblog jobs (test/faults/run-faults.sh).
 *
 * It wraps pwrite, pwritev, pread, preadv, ftruncate, fallocate (and their 64 variants), fsync,
 * fdatasync, open
 * (without O_CREAT), io_submit, io_getevents, fcntl and listen, and makes chosen calls on chosen
 * files fail. Selection, all by environment variables:
 *   BBFAULT_OP     pwrite | pread | preadv | aio_submit | aio_complete | open | ftruncate |
 *                  fsync (fsync or fdatasync of the file fails, EIO unless BBFAULT_ERR says
 *                  otherwise) |
 *                  fallocate (BBFAULT_OFF: its offset; a node pair's slot is emptied by
 *                  punching its payloads, then its records, each a fallocate) |
 *                  lock (a waiting fcntl lock, F_SETLKW, fails: ENOLCK unless BBFAULT_ERR
 *                  says otherwise) |
 *                  listen: which call (listen: a socket's listen fails, EADDRINUSE unless
 *                  BBFAULT_ERR says otherwise; only calls after MPI_Init or MPI_Init_thread
 *                  returned count, since an MPI may listen there, and how often differs
 *                  between MPIs and their transports)
 *                  (ftruncate: a resize of the file, which fails; BBFAULT_ERR short is EIO
 *                  there). pread covers
 *                  preadv too (preadv alone: the drain's reads of the node's logs), pwrite
 *                  pwritev (the drain's writes from mapped logs). aio_submit makes io_submit of a write refuse it; aio_complete
 *                  rewrites the completion of a write that io_getevents reports (the write
 *                  itself happened, in full). open: an open of an existing file by path (the
 *                  drain's node exchange opening other processes' logs) fails.
 *   BBFAULT_PATH   a substring of the file's path (/proc/self/fd/N): ".data" for the data
 *                  logs, ".meta" for the metadata logs, the PFS file's name...
 *   BBFAULT_GLOB   a shell pattern the whole path must match (fnmatch, no flags: * matches /
 *                  too), e.g. "*.r[0-9]*.b[0-9]*" for node batches' lists (with BBFAULT_PATH,
 *                  both must match)
 *   BBFAULT_ERR    EIO | ENOSPC | short | kill | corrupt. short: a write or read moves only half
 *                  of its bytes (at least one) and reports that count, which is not an error.
 *                  kill: the process dies by SIGKILL instead of making the call (a crash at
 *                  that very point). corrupt (pwrite, pwritev): the write succeeds in full, but
 *                  its first byte reaches the file inverted (silent damage on the way).
 *   BBFAULT_OFF    only calls at this file offset (pwrite, pread), e.g. 0 for log headers
 *   BBFAULT_PEER   with kill on a log file: first wait (at most 20 s) until the same log of
 *                  rank PEER (the path with .rPEER. for .rME.) is down to its 4096-byte header,
 *                  i.e. PEER has marked its log drained; the log line says whether it was.
 *   BBFAULT_SKIP   how many matching calls pass untouched first (default 0)
 *   BBFAULT_TIMES  how many matching calls are then hit (default 1; 0: every one after)
 *   BBFAULT_RANK   only in this MPI rank (the launcher's PMI_RANK, or Open MPI's
 *                  OMPI_COMM_WORLD_RANK; default every process)
 *   BBFAULT_LOG    a file to which one line per injected fault is appended, so that a test can
 *                  tell that its fault was injected at all
 * Without BBFAULT_OP nothing is changed. Counts are per process.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <libaio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

enum op { OP_NONE, OP_PWRITE, OP_PREAD, OP_PREADV, OP_AIO_SUBMIT, OP_AIO_COMPLETE, OP_OPEN,
    OP_FTRUNCATE, OP_FALLOCATE, OP_FSYNC, OP_LISTEN, OP_LOCK };

static struct {
    int ready;
    enum op op;
    const char *path;
    const char *glob;
    int err;                    /* errno to inject; 0: short transfer; -1: SIGKILL; -2: corrupt */
    long long off;              /* -1: any offset */
    long skip, times, seen, hit;
    int mpi_ready;              /* MPI_Init or MPI_Init_thread has returned */
} cfg;

/* The process's MPI rank as its launcher gives it: MPICH's hydra sets PMI_RANK, Open MPI's
 * OMPI_COMM_WORLD_RANK; NULL outside a launcher. */
static const char *launcher_rank(void)
{
    const char *r = getenv("PMI_RANK");

    return r ? r : getenv("OMPI_COMM_WORLD_RANK");
}

static void setup(void)
{
    const char *op, *err, *rank, *want;

    if (cfg.ready)
        return;
    cfg.ready = 1;
    op = getenv("BBFAULT_OP");
    if (!op || !*op)
        return;
    want = getenv("BBFAULT_RANK");
    rank = launcher_rank();
    if (want && *want && (!rank || strcmp(rank, want) != 0))
        return;
    if (strcmp(op, "pwrite") == 0)
        cfg.op = OP_PWRITE;
    else if (strcmp(op, "pread") == 0)
        cfg.op = OP_PREAD;
    else if (strcmp(op, "preadv") == 0)
        cfg.op = OP_PREADV;
    else if (strcmp(op, "aio_submit") == 0)
        cfg.op = OP_AIO_SUBMIT;
    else if (strcmp(op, "aio_complete") == 0)
        cfg.op = OP_AIO_COMPLETE;
    else if (strcmp(op, "open") == 0)
        cfg.op = OP_OPEN;
    else if (strcmp(op, "ftruncate") == 0)
        cfg.op = OP_FTRUNCATE;
    else if (strcmp(op, "fallocate") == 0)
        cfg.op = OP_FALLOCATE;
    else if (strcmp(op, "fsync") == 0)
        cfg.op = OP_FSYNC;
    else if (strcmp(op, "listen") == 0)
        cfg.op = OP_LISTEN;
    else if (strcmp(op, "lock") == 0)
        cfg.op = OP_LOCK;
    else {
        fprintf(stderr, "bbfault: BBFAULT_OP=%s: not pwrite, pread, preadv, aio_submit, "
                "aio_complete, open, ftruncate, fallocate, fsync, listen or lock\n", op);
        abort();
    }
    err = getenv("BBFAULT_ERR");
    if (!err || strcmp(err, "EIO") == 0)
        cfg.err = EIO;
    else if (strcmp(err, "ENOSPC") == 0)
        cfg.err = ENOSPC;
    else if (strcmp(err, "short") == 0)
        cfg.err = 0;
    else if (strcmp(err, "kill") == 0)
        cfg.err = -1;
    else if (strcmp(err, "corrupt") == 0)
        cfg.err = -2;
    else {
        fprintf(stderr, "bbfault: BBFAULT_ERR=%s: not EIO, ENOSPC, short, kill or corrupt\n",
                err);
        abort();
    }
    cfg.path = getenv("BBFAULT_PATH");
    cfg.glob = getenv("BBFAULT_GLOB");
    cfg.skip = getenv("BBFAULT_SKIP") ? atol(getenv("BBFAULT_SKIP")) : 0;
    cfg.times = getenv("BBFAULT_TIMES") ? atol(getenv("BBFAULT_TIMES")) : 1;
    cfg.off = getenv("BBFAULT_OFF") ? atoll(getenv("BBFAULT_OFF")) : -1;
}

/* BBFAULT_PEER: waits until the peer's copy of log `path` is an emptied (drained) log; returns
 * whether it became one. */
static int wait_peer(const char *path)
{
    const char *peer = getenv("BBFAULT_PEER"), *me = launcher_rank();
    char mine[32], theirs[32], other[4096];
    const char *at;
    struct stat sb;

    if (!peer || !*peer || !me)
        return 0;
    snprintf(mine, sizeof mine, ".r%s.", me);
    snprintf(theirs, sizeof theirs, ".r%s.", peer);
    at = strstr(path, mine);
    if (!at)
        return 0;
    snprintf(other, sizeof other, "%.*s%s%s", (int) (at - path), path, theirs, at + strlen(mine));
    for (int i = 0; i < 2000; i++) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };

        if (stat(other, &sb) == 0 && sb.st_size == 4096)
            return 1;
        nanosleep(&ts, NULL);
    }
    return 0;
}

static void record(const char *what, int fd, const char *path)
{
    const char *logname = getenv("BBFAULT_LOG");
    char line[4400];
    int lfd, n;

    if (!logname || !*logname)
        return;
    n = snprintf(line, sizeof line, "pid %ld rank %s: %s on fd %d (%s): %s\n", (long) getpid(),
                 launcher_rank() ? launcher_rank() : "?", what, fd, path,
                 cfg.err == EIO ? "EIO" : cfg.err == ENOSPC ? "ENOSPC" : cfg.err == 0 ? "short"
                 : cfg.err == -2 ? "corrupt" : "SIGKILL");
    lfd = open(logname, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (lfd >= 0) {
        if (write(lfd, line, (size_t) n) < 0)
            n = 0;
        close(lfd);
    }
}

/* Whether this call on path (fd, or -1 for open; at offset off, -1 when not known) is to be
 * hit; counts the matching calls. With BBFAULT_ERR=kill a hit does not return. */
static int hit_path(int fd, const char *path, long long off, const char *what)
{
    if (cfg.path && *cfg.path && !strstr(path, cfg.path))
        return 0;
    if (cfg.glob && *cfg.glob && fnmatch(cfg.glob, path, 0) != 0)
        return 0;
    if (cfg.off >= 0 && off != cfg.off)
        return 0;
    if (cfg.seen++ < cfg.skip)
        return 0;
    if (cfg.times > 0 && cfg.hit >= cfg.times)
        return 0;
    cfg.hit++;
    if (cfg.err == -1) {
        char w[200];

        snprintf(w, sizeof w, "%s, %s", what,
                 getenv("BBFAULT_PEER") ? (wait_peer(path) ? "after the peer marked its log "
                                           "drained" : "the peer never marked its log drained")
                 : "at once");
        record(w, fd, path);
        raise(SIGKILL);
    }
    record(what, fd, path);
    return 1;
}

static int hit(enum op op, int fd, long long off, const char *what)
{
    char link[64], path[4096];
    ssize_t n;

    setup();
    if (cfg.op != op)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n < 0)
        return 0;
    path[n] = '\0';
    return hit_path(fd, path, off, what);
}

static void *next(const char *name, const char *version)
{
    void *f = version ? dlvsym(RTLD_NEXT, name, version) : NULL;

    if (!f)
        f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "bbfault: no %s to wrap\n", name);
        abort();
    }
    return f;
}

typedef ssize_t (*rw_fn)(int, void *, size_t, off_t);

/* corrupt: after the write, its first byte inverted in the file. */
static ssize_t corrupt_first(int fd, unsigned char first, off_t off, ssize_t written)
{
    rw_fn real = (rw_fn) next("pwrite", NULL);
    unsigned char bad = (unsigned char) ~first;

    if (written > 0 && real(fd, &bad, 1, off) != 1)
        return -1;
    return written;
}

static ssize_t do_pwrite(const char *name, int fd, const void *buf, size_t len, off_t off)
{
    rw_fn real = (rw_fn) next(name, NULL);

    if (len > 0 && hit(OP_PWRITE, fd, (long long) off, "pwrite")) {
        if (cfg.err == -2)
            return corrupt_first(fd, *(const unsigned char *) buf, off,
                                 real(fd, (void *) buf, len, off));
        if (cfg.err) {
            errno = cfg.err;
            return -1;
        }
        return real(fd, (void *) buf, len > 1 ? len / 2 : 1, off);
    }
    return real(fd, (void *) buf, len, off);
}

static ssize_t do_pread(const char *name, int fd, void *buf, size_t len, off_t off)
{
    rw_fn real = (rw_fn) next(name, NULL);

    if (len > 0 && hit(OP_PREAD, fd, (long long) off, "pread")) {
        if (cfg.err) {
            errno = cfg.err;
            return -1;
        }
        return real(fd, buf, len > 1 ? len / 2 : 1, off);
    }
    return real(fd, buf, len, off);
}

typedef int (*trunc_fn)(int, off_t);

static int do_ftruncate(const char *name, int fd, off_t len)
{
    trunc_fn real = (trunc_fn) next(name, NULL);

    if (hit(OP_FTRUNCATE, fd, (long long) len, "ftruncate")) {
        errno = cfg.err ? cfg.err : EIO;
        return -1;
    }
    return real(fd, len);
}

int ftruncate(int fd, off_t len)
{
    return do_ftruncate("ftruncate", fd, len);
}

int ftruncate64(int fd, off_t len)
{
    return do_ftruncate("ftruncate64", fd, len);
}

typedef int (*sync_fn)(int);

static int do_fsync(const char *name, int fd)
{
    sync_fn real = (sync_fn) next(name, NULL);

    if (hit(OP_FSYNC, fd, -1, "fsync")) {
        errno = cfg.err > 0 ? cfg.err : EIO;
        return -1;
    }
    return real(fd);
}

int fsync(int fd)
{
    return do_fsync("fsync", fd);
}

int fdatasync(int fd)
{
    return do_fsync("fdatasync", fd);
}

typedef int (*falloc_fn)(int, int, off_t, off_t);

static int do_fallocate(const char *name, int fd, int mode, off_t off, off_t len)
{
    falloc_fn real = (falloc_fn) next(name, NULL);

    if (hit(OP_FALLOCATE, fd, (long long) off, "fallocate")) {
        errno = cfg.err > 0 ? cfg.err : EIO;
        return -1;
    }
    return real(fd, mode, off, len);
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    return do_fallocate("fallocate", fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
    return do_fallocate("fallocate64", fd, mode, off, len);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
    return do_pwrite("pwrite", fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
    return do_pwrite("pwrite64", fd, buf, len, off);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
    return do_pread("pread", fd, buf, len, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
    return do_pread("pread64", fd, buf, len, off);
}

typedef ssize_t (*rwv_fn)(int, const struct iovec *, int, off_t);

/* short: the first half of the bytes (at least one) */
static ssize_t do_rwv(enum op op, const char *name, int fd, const struct iovec *iov, int n,
                      off_t off)
{
    rwv_fn real = (rwv_fn) next(name, NULL);
    struct iovec cut[64];
    size_t total = 0, want;
    int k;

    setup();
    if (op == OP_PREAD && cfg.op == OP_PREADV)
        op = OP_PREADV;
    for (k = 0; k < n; k++)
        total += iov[k].iov_len;
    if (total == 0 || !hit(op, fd, (long long) off, op == OP_PWRITE ? "pwritev" : "preadv"))
        return real(fd, iov, n, off);
    if (cfg.err == -2 && op == OP_PWRITE) {
        for (k = 0; iov[k].iov_len == 0; k++);
        return corrupt_first(fd, *(const unsigned char *) iov[k].iov_base, off,
                             real(fd, iov, n, off));
    }
    if (cfg.err) {
        errno = cfg.err;
        return -1;
    }
    want = total > 1 ? total / 2 : 1;
    for (k = 0; k < n && k < 64 && want > 0; k++) {
        cut[k] = iov[k];
        if (cut[k].iov_len > want)
            cut[k].iov_len = want;
        want -= cut[k].iov_len;
    }
    return real(fd, cut, k, off);
}

ssize_t preadv(int fd, const struct iovec *iov, int n, off_t off)
{
    return do_rwv(OP_PREAD, "preadv", fd, iov, n, off);
}

ssize_t preadv64(int fd, const struct iovec *iov, int n, off_t off)
{
    return do_rwv(OP_PREAD, "preadv64", fd, iov, n, off);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
    return do_rwv(OP_PWRITE, "pwritev", fd, iov, n, off);
}

ssize_t pwritev64(int fd, const struct iovec *iov, int n, off_t off)
{
    return do_rwv(OP_PWRITE, "pwritev64", fd, iov, n, off);
}

/* lock: a waiting fcntl lock (F_SETLKW) of the file fails, ENOLCK unless BBFAULT_ERR says
 * otherwise, as where the file system has no byte-range locks. */
static int do_fcntl(const char *name, int fd, int cmd, void *arg)
{
    typedef int (*fn)(int, int, ...);
    fn real = (fn) next(name, NULL);

    if (cmd == F_SETLKW && hit(OP_LOCK, fd, -1, "fcntl lock")) {
        errno = cfg.err > 0 && getenv("BBFAULT_ERR") ? cfg.err : ENOLCK;
        return -1;
    }
    return real(fd, cmd, arg);
}

/* The third argument is an int or a pointer; either travels in one register-sized slot. */
#define FCNTL_WRAPPER(name)                                  \
    int name(int fd, int cmd, ...)                           \
    {                                                        \
        va_list ap;                                          \
        void *arg;                                           \
                                                             \
        va_start(ap, cmd);                                   \
        arg = va_arg(ap, void *);                            \
        va_end(ap);                                          \
        return do_fcntl(#name, fd, cmd, arg);                \
    }
FCNTL_WRAPPER(fcntl)
FCNTL_WRAPPER(fcntl64)

/* The MPI's own initialisation may listen (the number of calls depends on the MPI and its
 * transport); a listen fault counts only the calls made after it. The prototypes are the MPI
 * standard's C bindings, so no mpi.h is needed. */
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);

int MPI_Init(int *argc, char ***argv)
{
    typedef int (*fn)(int *, char ***);
    int rc = ((fn) next("MPI_Init", NULL))(argc, argv);

    cfg.mpi_ready = 1;
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    typedef int (*fn)(int *, char ***, int, int *);
    int rc = ((fn) next("MPI_Init_thread", NULL))(argc, argv, required, provided);

    cfg.mpi_ready = 1;
    return rc;
}

int listen(int fd, int backlog)
{
    typedef int (*fn)(int, int);
    fn real = (fn) next("listen", NULL);

    if (cfg.mpi_ready && hit(OP_LISTEN, fd, -1, "listen")) {
        errno = cfg.err > 0 && getenv("BBFAULT_ERR") ? cfg.err : EADDRINUSE;
        return -1;
    }
    return real(fd, backlog);
}

typedef int (*open_fn)(const char *, int, ...);

static int do_open(const char *name, const char *path, int flags, mode_t mode)
{
    open_fn real = (open_fn) next(name, NULL);

    setup();
    if (!(flags & O_CREAT) && cfg.op == OP_OPEN && hit_path(-1, path, -1, "open")) {
        errno = cfg.err > 0 ? cfg.err : EIO;
        return -1;
    }
    return real(path, flags, mode);
}

/* open and open64: the mode argument only exists with O_CREAT. */
#define OPEN_WRAPPER(fn)                                                \
    int fn(const char *path, int flags, ...)                            \
    {                                                                   \
        va_list ap;                                                     \
        mode_t mode = 0;                                                \
                                                                        \
        if (flags & O_CREAT) {                                          \
            va_start(ap, flags);                                        \
            mode = (mode_t) va_arg(ap, int);                            \
            va_end(ap);                                                 \
        }                                                               \
        return do_open(#fn, path, flags, mode);                         \
    }

OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

int io_submit(io_context_t ctx, long nr, struct iocb *ios[])
{
    typedef int (*fn)(io_context_t, long, struct iocb **);
    fn real = (fn) next("io_submit", "LIBAIO_0.1");

    if (nr > 0 && ios[0]->aio_lio_opcode == IO_CMD_PWRITE &&
        hit(OP_AIO_SUBMIT, ios[0]->aio_fildes, -1, "io_submit")) {
        if (cfg.err)
            return -cfg.err;
        /* a short submit: none of them queued, as the kernel may answer */
        return 0;
    }
    return real(ctx, nr, ios);
}

int io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event *events,
                 struct timespec *timeout)
{
    typedef int (*fn)(io_context_t, long, long, struct io_event *, struct timespec *);
    fn real = (fn) next("io_getevents", "LIBAIO_0.4");
    int n = real(ctx, min_nr, nr, events, timeout);

    for (int i = 0; i < n; i++) {
        struct iocb *cb = events[i].obj;

        if (cb && cb->aio_lio_opcode == IO_CMD_PWRITE && (long) events[i].res > 0 &&
            hit(OP_AIO_COMPLETE, cb->aio_fildes, -1, "io_getevents")) {
            if (cfg.err)
                events[i].res = (unsigned long) (long) -cfg.err;
            else
                events[i].res = events[i].res > 1 ? events[i].res / 2 : events[i].res;
        }
    }
    return n;
}
