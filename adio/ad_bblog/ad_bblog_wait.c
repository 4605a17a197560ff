/*
 * The driver's own collective calls (the agreements of open, sync, close and the drains) wait
 * for the other processes without spinning. MPICH's blocking collectives poll until the last
 * process arrives and keep a processor busy all that time; in a drain the processes that have
 * written their share wait so for those still writing, which need that processor, as does
 * the PFS client (on the GlusterFS stand-in, 4 ranks on 2 cores, the drain's four 16 MiB
 * writes went one at a time while the finished processes polled). Each call here is the
 * nonblocking form, tested at once and then after sleeps that double from 10 us to 250 us:
 * a wait that ends at once costs what the blocking call does, a long one gives the processor
 * back and ends at most one sleep late per step of the collective. BBLOG_DEBUG_SPIN=1 makes
 * them the blocking calls (for comparisons; read at each open, for the whole process).
 */
#include <time.h>

#include "ad_bblog.h"

int ADIOI_BBLOG_spin_waits;

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

#define WAIT_IDLE(blocking, nonblocking) \
    do { \
        MPI_Request req; \
        int rc; \
        if (ADIOI_BBLOG_spin_waits) \
            return blocking; \
        rc = nonblocking; \
        return rc == MPI_SUCCESS ? ADIOI_BBLOG_Wait_idle(&req) : rc; \
    } while (0)

int ADIOI_BBLOG_Barrier(MPI_Comm comm)
{
    WAIT_IDLE(MPI_Barrier(comm), MPI_Ibarrier(comm, &req));
}

int ADIOI_BBLOG_Bcast(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm)
{
    WAIT_IDLE(MPI_Bcast(buf, n, type, root, comm), MPI_Ibcast(buf, n, type, root, comm, &req));
}

int ADIOI_BBLOG_Allreduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm)
{
    WAIT_IDLE(MPI_Allreduce(in, out, n, type, op, comm),
              MPI_Iallreduce(in, out, n, type, op, comm, &req));
}

int ADIOI_BBLOG_Reduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                       int root, MPI_Comm comm)
{
    WAIT_IDLE(MPI_Reduce(in, out, n, type, op, root, comm),
              MPI_Ireduce(in, out, n, type, op, root, comm, &req));
}

int ADIOI_BBLOG_Allgather(const void *in, int n, MPI_Datatype type, void *out, int m,
                          MPI_Datatype rtype, MPI_Comm comm)
{
    WAIT_IDLE(MPI_Allgather(in, n, type, out, m, rtype, comm),
              MPI_Iallgather(in, n, type, out, m, rtype, comm, &req));
}

int ADIOI_BBLOG_Allgatherv(const void *in, int n, MPI_Datatype type, void *out,
                           const int *counts, const int *displs, MPI_Datatype rtype,
                           MPI_Comm comm)
{
    WAIT_IDLE(MPI_Allgatherv(in, n, type, out, counts, displs, rtype, comm),
              MPI_Iallgatherv(in, n, type, out, counts, displs, rtype, comm, &req));
}
