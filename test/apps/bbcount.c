/*
 * bbcount: an LD_PRELOAD library that counts the MPI communication calls a program makes, those
 * made inside the MPI library included (ROMIO calls MPI_ and PMPI_ entry points of its own MPI),
 * between MPI_Pcontrol(1) (reset, start) and MPI_Pcontrol(0) (stop); MPI_Pcontrol(3) starts
 * again without a reset.
 * MPI_Pcontrol(2, const char *label, int ncalls) prints, on stdout, one line per process:
 *   bbcount LABEL rank=R ncalls=N coll=C p2p=P Barrier=.. Allreduce=.. ...
 * with the calls counted since the last start (names with a zero count left out), so that the
 * runner (run-count.sh) can give the calls per write call of the library under test.
 * Each wrapper counts and calls the MPI's own PMPI_ function, found with dlsym(RTLD_NEXT).
 * A nonblocking collective (MPI_Iallreduce, ...) counts as one collective call, as its blocking
 * form does (the driver waits for its own that way: ad_bblog_base_wait.c).
 * A call on a communicator of one process (MPI_COMM_SELF or a duplicate) communicates with
 * no one and is not counted.
 * It also sums the bytes each counted call delivers to this process from the others, the
 * collective calls' (bytes=N) apart from the point-to-point ones (p2pbytes=N), and with
 * BBCOUNT_BYTES=1 per call (NAME.bytes=N):
 * a reduction's result (n elements, at the root only for Reduce), the others' parts of a
 * gather or an all-to-all, a broadcast's buffer (not at the root), a receive's posted count.
 * That is the data the process must take in, whatever the MPI's algorithm moves to get it
 * there, so that a count that grows with the job's size shows in the sum. Point-to-point calls
 * with bblog's own tags (ctl_tag) are also counted apart: ctl=N calls, ctlbytes=N.
 * It also counts the process's statfs calls on paths that begin with $BBCOUNT_PATH, where set
 * (statfs=N in the line where N > 0): asking which file system holds a file is a request to
 * the file system's servers when the file does not exist yet, which one process of an open
 * makes for all of them (ad_bblog_base_inner.c). And it counts the opens with O_CREAT of such paths
 * (creat=N): a create is a request to the metadata servers that ROMIO's create pass makes on
 * one process of an open.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>

#include <mpi.h>

#define COLLECTIVES(X) \
    X(Barrier, (MPI_Comm c), (c), \
      0) \
    X(Bcast, (void *b, int n, MPI_Datatype t, int r, MPI_Comm c), (b, n, t, r, c), \
      me(c) == r ? 0 : span(t, n)) \
    X(Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), \
      (s, r, n, t, o, c), \
      span(t, n)) \
    X(Reduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c), \
      (s, r, n, t, o, root, c), \
      me(c) == root ? span(t, n) : 0) \
    X(Allgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, \
                  MPI_Comm c), (s, sn, st, r, rn, rt, c), \
      span(rt, (long long) rn * (size(c) - 1))) \
    X(Allgatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int *rn, \
                   const int *d, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, d, rt, c), \
      others_v(c, rn, rt)) \
    X(Gather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, \
               int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c), \
      me(c) == root ? span(rt, (long long) rn * (size(c) - 1)) : 0) \
    X(Alltoall, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, \
                 MPI_Comm c), (s, sn, st, r, rn, rt, c), \
      span(rt, (long long) rn * (size(c) - 1))) \
    X(Alltoallv, (const void *s, const int *sn, const int *sd, MPI_Datatype st, void *r, \
                  const int *rn, const int *rd, MPI_Datatype rt, MPI_Comm c), \
      (s, sn, sd, st, r, rn, rd, rt, c), \
      others_v(c, rn, rt)) \
    X(Scan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), \
      (s, r, n, t, o, c), \
      span(t, n)) \
    X(Exscan, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c), \
      (s, r, n, t, o, c), \
      span(t, n)) \
    X(Comm_dup, (MPI_Comm c, MPI_Comm *n), (c, n), \
      0) \
    X(Comm_split, (MPI_Comm c, int color, int key, MPI_Comm *n), (c, color, key, n), \
      0) \
    X(Comm_idup, (MPI_Comm c, MPI_Comm *n, MPI_Request *q), (c, n, q), \
      0) \
    X(Ibarrier, (MPI_Comm c, MPI_Request *q), (c, q), \
      0) \
    X(Ibcast, (void *b, int n, MPI_Datatype t, int r, MPI_Comm c, MPI_Request *q), \
      (b, n, t, r, c, q), \
      me(c) == r ? 0 : span(t, n)) \
    X(Iallreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c, \
                   MPI_Request *q), (s, r, n, t, o, c, q), \
      span(t, n)) \
    X(Ireduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c, \
                MPI_Request *q), (s, r, n, t, o, root, c, q), \
      me(c) == root ? span(t, n) : 0) \
    X(Iallgather, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, \
                   MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, c, q), \
      span(rt, (long long) rn * (size(c) - 1))) \
    X(Iallgatherv, (const void *s, int sn, MPI_Datatype st, void *r, const int *rn, \
                    const int *d, MPI_Datatype rt, MPI_Comm c, MPI_Request *q), \
      (s, sn, st, r, rn, d, rt, c, q), \
      others_v(c, rn, rt))

#define P2P(X) \
    X(Send, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c), \
      (b, n, t, d, tag, c), \
      0, tag) \
    X(Isend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *q), \
      (b, n, t, d, tag, c, q), \
      0, tag) \
    X(Issend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, \
               MPI_Request *q), (b, n, t, d, tag, c, q), \
      0, tag) \
    X(Recv, (void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st), \
      (b, n, t, s, tag, c, st), \
      span(t, n), tag) \
    X(Irecv, (void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *q), \
      (b, n, t, s, tag, c, q), \
      span(t, n), tag) \
    X(Sendrecv, (const void *sb, int sn, MPI_Datatype st, int d, int stag, void *rb, int rn, \
                 MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Status *status), \
      (sb, sn, st, d, stag, rb, rn, rt, s, rtag, c, status), \
      span(rt, rn), rtag)

#define ENUM(name, params, args, ...) I_##name,
enum { COLLECTIVES(ENUM) N_COLL_, P2P(ENUM) N_ALL_ };
#undef ENUM
#define NAME(name, params, args, ...) #name,
static const char *const names[] = { COLLECTIVES(NAME) "", P2P(NAME) };
#undef NAME

static long counts[N_ALL_], nstatfs, ncreat;
static long long nbytes[2];           /* collective, point-to-point */
static long nctl;                     /* the driver's own point-to-point calls (ctl_tag) */
static long long ctlbytes;
static long long bytes_of[N_ALL_];
static int on;

/* Whether a call on c reaches another process. */
static int others(MPI_Comm c)
{
    int size = 2;

    PMPI_Comm_size(c, &size);
    return size > 1;
}

static int me(MPI_Comm c)
{
    int rank = 0;

    PMPI_Comm_rank(c, &rank);
    return rank;
}

static int size(MPI_Comm c)
{
    int n = 1;

    PMPI_Comm_size(c, &n);
    return n;
}

/* The bytes of n elements of type t. */
static long long span(MPI_Datatype t, long long n)
{
    int sz = 0;

    PMPI_Type_size(t, &sz);
    return n > 0 ? n * sz : 0;
}

/* The others' parts of a v-collective's receive counts. */
static long long others_v(MPI_Comm c, const int *rn, MPI_Datatype t)
{
    long long n = 0;
    int i, self = me(c), p = size(c);

    for (i = 0; i < p; i++)
        if (i != self)
            n += rn[i];
    return span(t, n);
}

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);

    if (!f) {
        fprintf(stderr, "bbcount: %s not found in the MPI library\n", name);
        abort();
    }
    return f;
}

/* Whether tag is one of bblog's own (its sync notes and sparse exchanges: within 16 of
 * MPI_TAG_UB, ad_bblog_base.h): those messages are coordination, not the data of a two-phase
 * write, and are also summed apart (ctl=, ctlbytes=). */
static int ctl_tag(int tag)
{
    int *ub, flag = 0;

    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    return flag && tag >= 0 && tag > *ub - 16;
}

/* MPI_X and PMPI_X both count once and call the MPI's PMPI_X. */
#define WRAP_COUNT(name, params, args, bytes, ctl) \
    int PMPI_##name params \
    { \
        static int (*f) params; \
        if (!f) \
            f = (int (*) params) real("PMPI_" #name); \
        if (on && others(c)) { \
            counts[I_##name]++; \
            long long b_ = (bytes); \
            nbytes[I_##name > N_COLL_] += b_; \
            bytes_of[I_##name] += b_; \
            if (ctl) { \
                nctl++; \
                ctlbytes += b_; \
            } \
        } \
        return f args; \
    } \
    int MPI_##name params \
    { \
        return PMPI_##name args; \
    }
#define WRAP(name, params, args, bytes) WRAP_COUNT(name, params, args, bytes, 0)
#define WRAP_P2P(name, params, args, bytes, tag) WRAP_COUNT(name, params, args, bytes, \
                                                            ctl_tag(tag))
COLLECTIVES(WRAP)
P2P(WRAP_P2P)
#undef WRAP
#undef WRAP_P2P
#undef WRAP_COUNT

/* Whether counting is on and path lies under $BBCOUNT_PATH. */
static int counted_path(const char *path)
{
    const char *under = getenv("BBCOUNT_PATH");

    return on && under && *under && path && strncmp(path, under, strlen(under)) == 0;
}

/* statfs and statfs64 count, then call libc's. */
#define STATFS_WRAP(name, type) \
    int name(const char *path, type *buf) \
    { \
        static int (*f)(const char *, type *); \
        if (!f) \
            f = (int (*)(const char *, type *)) real(#name); \
        nstatfs += counted_path(path); \
        return f(path, buf); \
    }
STATFS_WRAP(statfs, struct statfs)
STATFS_WRAP(statfs64, struct statfs64)
#undef STATFS_WRAP

/* open, open64, openat and openat64 count the creates, then call libc's with the mode where
 * the flags take one. */
#define OPEN_WRAP(name, params, args, path) \
    int name params \
    { \
        static int (*f) params; \
        mode_t mode = 0; \
        va_list ap; \
        if (!f) \
            f = (int (*) params) real(#name); \
        if (flags & (O_CREAT | O_TMPFILE)) { \
            va_start(ap, flags); \
            mode = va_arg(ap, mode_t); \
            va_end(ap); \
        } \
        ncreat += (flags & O_CREAT) && counted_path(path); \
        return f args; \
    }
OPEN_WRAP(open, (const char *p, int flags, ...), (p, flags, mode), p)
OPEN_WRAP(open64, (const char *p, int flags, ...), (p, flags, mode), p)
OPEN_WRAP(openat, (int dir, const char *p, int flags, ...), (dir, p, flags, mode), p)
OPEN_WRAP(openat64, (int dir, const char *p, int flags, ...), (dir, p, flags, mode), p)
#undef OPEN_WRAP

int MPI_Pcontrol(const int level, ...)
{
    va_list ap;
    const char *label;
    char line[1024];
    long coll = 0, p2p = 0;
    int rank, ncalls, i, len;

    on = 0;
    if (level == 1) {
        for (i = 0; i < N_ALL_; i++)
            counts[i] = bytes_of[i] = 0;
        nstatfs = 0;
        ncreat = 0;
        nbytes[0] = nbytes[1] = 0;
        nctl = 0;
        ctlbytes = 0;
        on = 1;
    } else if (level == 3) {
        on = 1;
    } else if (level == 2) {
        va_start(ap, level);
        label = va_arg(ap, const char *);
        ncalls = va_arg(ap, int);
        va_end(ap);
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        for (i = 0; i < N_ALL_; i++)
            *(i < N_COLL_ ? &coll : &p2p) += counts[i];
        /* One write of the whole line: the launcher forwards the processes' output in
         * pieces, and lines written in parts would interleave. */
        len = snprintf(line, sizeof(line), "bbcount %s rank=%d ncalls=%d coll=%ld p2p=%ld "
                       "bytes=%lld p2pbytes=%lld ctl=%ld ctlbytes=%lld", label, rank, ncalls,
                       coll, p2p, nbytes[0], nbytes[1], nctl, ctlbytes);
        for (i = 0; i < N_ALL_; i++)
            if (i != N_COLL_ && counts[i] && len < (int) sizeof(line))
                len += snprintf(line + len, sizeof(line) - len, " %s=%ld", names[i], counts[i]);
        for (i = 0; getenv("BBCOUNT_BYTES") && i < N_ALL_; i++)
            if (i != N_COLL_ && bytes_of[i] && len < (int) sizeof(line))
                len += snprintf(line + len, sizeof(line) - len, " %s.bytes=%lld", names[i],
                                bytes_of[i]);
        if (nstatfs && len < (int) sizeof(line))
            len += snprintf(line + len, sizeof(line) - len, " statfs=%ld", nstatfs);
        if (ncreat && len < (int) sizeof(line))
            len += snprintf(line + len, sizeof(line) - len, " creat=%ld", ncreat);
        if (len < (int) sizeof(line) - 1) {
            line[len++] = '\n';
            fflush(stdout);
            if (write(STDOUT_FILENO, line, (size_t) len) != len)
                return MPI_ERR_OTHER;
        }
    }
    return MPI_SUCCESS;
}
