/*
 * The driver's own collective calls (the agreements of open, sync, close and the drains), which
 * wait for the other processes without spinning, and Reduce_vec, one reduction of a vector whose
 * first elements are summed and the rest taken at their largest.
 *
 * Why. MPICH's blocking collectives poll until the last process arrives and keep a processor busy
 * all that time; in a drain the processes that have written their share wait so for those still
 * writing, which need that processor, as does the PFS client (RATIONALE:
 * bench/results/rationale.md, idle-waits).
 *
 * Waiting. Each call here is the nonblocking form, tested at once and then after sleeps that double
 * from 10 us to 250 us: a wait that ends at once costs what the blocking call does, a long one
 * gives the processor back and ends at most one sleep late per step of the collective.
 * BBLOG_DEBUG_SPIN=1 makes them the blocking calls (for comparisons; read at each open, for the
 * whole process).
 *
 * Sparse exchanges. ADIOI_BBLOG_Sparse sends each process's few messages with MPI_Issend, then
 * takes in whatever arrives while it waits for its sends to be received; once they all are, it
 * enters an MPI_Ibarrier (or an MPI_Iallreduce, MPI_MAX, of the words the caller agrees on at
 * the same time), and goes on taking in messages until that completes. A process enters it only
 * when everything it sent has been received, so when it completes every message of the exchange
 * has been received, and no process needs to know who sends to it: no MPI_Alltoall of counts,
 * whose size grows with the job. Messages are at most
 * ADIOI_BBLOG_SPARSE_CHUNK words, so that a receiver without memory for what arrives still
 * receives it (into its scratch buffer, then drops it and says so) and no sender waits for ever.
 *
 * Failures. Each call returns MPI's error code, of the call's start or of a test, and every caller
 * checks it: after a failed call the output is undefined (ad_bblog_base.h says what the caller does
 * then; test/check-driver.py fails on a call whose result is dropped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"

int ADIOI_BBLOG_spin_waits;

/* BBLOG_DEBUG_FAIL_COLL=N (tests: run-faults.sh's coll cases): the Nth collective call made here
 * since the open that read it fails, and with BBLOG_DEBUG_FAIL_COLL_ALL=1 every one after it
 * too. The call is still made and completed, so no other process is left waiting in it; then
 * its output is overwritten and it returns MPI_ERR_OTHER, as a call that failed would. Each
 * such failure is said on stderr, so that a test knows it happened. */
static int fail_at, fail_all;
static long ncalls;

void ADIOI_BBLOG_Debug_fail_coll(int nth, int all)
{
    fail_at = nth;
    fail_all = all;
    ncalls = 0;
}

/* rc, or the injected failure of this call (its n output bytes at out garbled). */
static int injected(int rc, const char *what, void *out, MPI_Datatype type, long long n)
{
    MPI_Aint lb, extent = 0;

    if (rc != MPI_SUCCESS || fail_at <= 0 || ++ncalls < fail_at ||
        (ncalls > fail_at && !fail_all))
        return rc;
    if (out && n > 0 && MPI_Type_get_extent(type, &lb, &extent) == MPI_SUCCESS)
        memset(out, 0xa5, (size_t) n * (size_t) extent);
    fprintf(stderr, "bblog: BBLOG_DEBUG_FAIL_COLL: collective call %ld (%s) fails\n", ncalls,
            what);
    return MPI_ERR_OTHER;
}

static int comm_size(MPI_Comm comm)
{
    int size = 0;

    MPI_Comm_size(comm, &size);
    return size;
}

#define FIRST_SLEEP_NS 10000L
#define LONGEST_SLEEP_NS 250000L

int ADIOI_BBLOG_Wait_idle(MPI_Request *req)
{
    long ns = FIRST_SLEEP_NS;
    int done = 0, rc;

    rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    while (rc == MPI_SUCCESS && !done) {
        struct timespec t = { 0, ns };
        nanosleep(&t, NULL);
        ns = ns < LONGEST_SLEEP_NS / 2 ? 2 * ns : LONGEST_SLEEP_NS;
        rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    }
    return rc;
}

/* The blocking call, or the nonblocking one and an idle wait for it. */
#define WAIT_IDLE(blocking, nonblocking) \
    (ADIOI_BBLOG_spin_waits ? (blocking) : (rc = (nonblocking)) == MPI_SUCCESS ? \
     ADIOI_BBLOG_Wait_idle(&req) : rc)

int ADIOI_BBLOG_Barrier(MPI_Comm comm)
{
    MPI_Request req;
    int rc;

    rc = WAIT_IDLE(MPI_Barrier(comm), MPI_Ibarrier(comm, &req));
    return injected(rc, "MPI_Ibarrier", NULL, MPI_BYTE, 0);
}

int ADIOI_BBLOG_Bcast(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm)
{
    MPI_Request req;
    int rc;

    rc = WAIT_IDLE(MPI_Bcast(buf, n, type, root, comm),
                   MPI_Ibcast(buf, n, type, root, comm, &req));
    return injected(rc, "MPI_Ibcast", buf, type, n);
}

int ADIOI_BBLOG_Allreduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm)
{
    MPI_Request req;
    int rc;

    rc = WAIT_IDLE(MPI_Allreduce(in, out, n, type, op, comm),
                   MPI_Iallreduce(in, out, n, type, op, comm, &req));
    return injected(rc, "MPI_Iallreduce", out, type, n);
}

int ADIOI_BBLOG_Reduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op, int root,
                       MPI_Comm comm)
{
    MPI_Request req;
    int rc, me = -1;

    rc = WAIT_IDLE(MPI_Reduce(in, out, n, type, op, root, comm),
                   MPI_Ireduce(in, out, n, type, op, root, comm, &req));
    MPI_Comm_rank(comm, &me);
    return injected(rc, "MPI_Ireduce", me == root ? out : NULL, type, n);
}

int ADIOI_BBLOG_Allgather(const void *in, int n, MPI_Datatype type, void *out, int m,
                          MPI_Datatype rtype, MPI_Comm comm)
{
    MPI_Request req;
    int rc;

    rc = WAIT_IDLE(MPI_Allgather(in, n, type, out, m, rtype, comm),
                   MPI_Iallgather(in, n, type, out, m, rtype, comm, &req));
    return injected(rc, "MPI_Iallgather", out, rtype, (long long) m * comm_size(comm));
}

int ADIOI_BBLOG_Allgatherv(const void *in, int n, MPI_Datatype type, void *out, const int *counts,
                           const int *displs, MPI_Datatype rtype, MPI_Comm comm)
{
    MPI_Request req;
    long long end = 0;
    int rc, i, size = comm_size(comm);

    rc = WAIT_IDLE(MPI_Allgatherv(in, n, type, out, counts, displs, rtype, comm),
                   MPI_Iallgatherv(in, n, type, out, counts, displs, rtype, comm, &req));
    for (i = 0; i < size; i++)
        if ((long long) displs[i] + counts[i] > end)
            end = (long long) displs[i] + counts[i];
    return injected(rc, "MPI_Iallgatherv", out, rtype, end);
}

int ADIOI_BBLOG_Tag(int k)
{
    static int top;             /* MPI_TAG_UB, the same for the whole process */
    int t = __atomic_load_n(&top, __ATOMIC_RELAXED);

    if (t == 0) {
        int *ub, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        t = flag ? *ub : 32767;
        __atomic_store_n(&top, t, __ATOMIC_RELAXED);
    }
    return t - k;
}

/* Receives the message s announced into scratch and appends its records to in, the sender's
 * rank after each (dropped, and in->failed set, without room). */
static int take_in(MPI_Comm comm, int tag, const MPI_Status *s, struct ADIOI_BBLOG_inbox *in,
                   uint64_t *scratch)
{
    size_t w = (size_t) in->width, r, nrec;
    int count = 0, rc;

    rc = MPI_Get_count(s, MPI_UINT64_T, &count);
    if (rc == MPI_SUCCESS)
        rc = MPI_Recv(scratch, count, MPI_UINT64_T, s->MPI_SOURCE, tag, comm,
                      MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return rc;
    nrec = (size_t) count / w;
    if (in->failed || (size_t) count % w != 0 ||
        bblog_grow((void **) &in->v, &in->cap, in->n + nrec, (w + 1) * sizeof(*in->v)) != 0) {
        in->failed = 1;
        return MPI_SUCCESS;
    }
    for (r = 0; r < nrec; r++) {
        memcpy(in->v + (w + 1) * (in->n + r), scratch + w * r, w * sizeof(*in->v));
        in->v[(w + 1) * (in->n + r) + w] = (uint64_t) s->MPI_SOURCE;
    }
    in->n += nrec;
    return MPI_SUCCESS;
}

int ADIOI_BBLOG_Sparse(MPI_Comm comm, int tag, const struct ADIOI_BBLOG_sparse_out *out,
                       int nout, struct ADIOI_BBLOG_inbox *in, uint64_t *scratch,
                       const uint64_t *agree, uint64_t *agreed, int nagree)
{
    const size_t chunk = ADIOI_BBLOG_SPARSE_CHUNK;
    MPI_Request *reqs = NULL, bar = MPI_REQUEST_NULL;
    MPI_Status s;
    size_t nreq = 0, posted = 0, off;
    long ns = FIRST_SLEEP_NS;
    int rc = MPI_SUCCESS, got = 0, sent = 0, done = 0, k;

    for (k = 0; k < nout; k++)
        nreq += (out[k].n + chunk - 1) / chunk;
    /* Without room for the requests nothing is sent: the receivers miss it, and the failure,
     * said in in->failed, is agreed by the caller after the exchange. */
    if (nreq > 0 && !(reqs = malloc(nreq * sizeof(*reqs))))
        in->failed = 1;
    for (k = 0; reqs && k < nout && rc == MPI_SUCCESS; k++)
        for (off = 0; off < out[k].n && rc == MPI_SUCCESS; off += chunk)
            rc = MPI_Issend(out[k].w + off, (int) (out[k].n - off < chunk ? out[k].n - off :
                                                   chunk), MPI_UINT64_T, out[k].dest, tag, comm,
                            &reqs[posted++]);
    while (rc == MPI_SUCCESS && !done) {
        rc = MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &got, &s);
        if (rc == MPI_SUCCESS && got) {
            rc = take_in(comm, tag, &s, in, scratch);
            ns = FIRST_SLEEP_NS;
            continue;
        }
        if (rc == MPI_SUCCESS && !sent) {
            rc = MPI_Testall((int) posted, reqs, &sent, MPI_STATUSES_IGNORE);
            if (rc == MPI_SUCCESS && sent)
                rc = nagree > 0 ? MPI_Iallreduce(agree, agreed, nagree, MPI_UINT64_T, MPI_MAX,
                                                 comm, &bar) : MPI_Ibarrier(comm, &bar);
        } else if (rc == MPI_SUCCESS) {
            rc = MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
        }
        if (rc == MPI_SUCCESS && !done && !ADIOI_BBLOG_spin_waits) {
            struct timespec t = { 0, ns };
            nanosleep(&t, NULL);
            ns = ns < LONGEST_SLEEP_NS / 2 ? 2 * ns : LONGEST_SLEEP_NS;
        }
    }
    free(reqs);
    rc = injected(rc, "sparse exchange", in->v, MPI_UINT64_T,
                  (long long) (in->n * (size_t) (in->width + 1)));
    if (rc != MPI_SUCCESS && nagree > 0)        /* the agreement's output is undefined too */
        memset(agreed, 0xa5, (size_t) nagree * sizeof(*agreed));
    return rc;
}

/* One vector of Reduce_vec: its element 0 says how many of the others are summed. */
static void sum_then_max(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const unsigned long long *a = in;
    unsigned long long *b = inout;
    int size, n, i, v;

    MPI_Type_size(*type, &size);
    n = size / (int) sizeof(*a);
    for (v = 0; v < *len; v++, a += n, b += n)
        for (i = 1; i < n; i++)
            if ((unsigned long long) i <= a[0])
                b[i] += a[i];
            else if (a[i] > b[i])
                b[i] = a[i];
}

int ADIOI_BBLOG_Reduce_vec(const unsigned long long *in, unsigned long long *out, int n, int nsum,
                           int root, MPI_Comm comm)
{
    unsigned long long *a = ADIOI_Malloc(2 * ((size_t) n + 1) * sizeof(*a)), *b = a + n + 1;
    MPI_Datatype vec;
    MPI_Op op;
    int rc;

    a[0] = (unsigned long long) nsum;
    memcpy(a + 1, in, (size_t) n * sizeof(*a));
    MPI_Type_contiguous(n + 1, MPI_UNSIGNED_LONG_LONG, &vec);
    MPI_Type_commit(&vec);
    MPI_Op_create(sum_then_max, 1, &op);
    if (root < 0)
        rc = ADIOI_BBLOG_Allreduce(a, b, 1, vec, op, comm);
    else
        rc = ADIOI_BBLOG_Reduce(a, b, 1, vec, op, root, comm);
    MPI_Op_free(&op);
    MPI_Type_free(&vec);
    memcpy(out, b + 1, (size_t) n * sizeof(*out));
    ADIOI_Free(a);
    return rc;
}
