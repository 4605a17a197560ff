/*
 * layer_greq.c - part of libbblog-mpiio.so over an MPI without MPICH's extended generalized
 * requests (Open MPI; scripts/build-layer.sh builds it only there).
 *
 * What it owns: the requests ROMIO starts with MPIX_Grequest_class_allocate (nonblocking
 * collective reads and writes, POSIX AIO), each a standard generalized request
 * (MPI_Grequest_start) plus an entry in one list with the poll function that moves it on.
 *
 * Progress: MPICH calls a request's poll function from inside its own waits and tests; here the
 * layer exports the completion calls (MPI_Wait, _Test, _Waitall, _Testall, _Waitany,
 * _Testany, _Waitsome, _Testsome, MPI_Request_get_status, and their PMPI_ names, which Open
 * MPI's Fortran bindings and profiling tools call), and each of them first runs the poll
 * function of every listed request, then the MPI's own call (found with dlsym(RTLD_NEXT)). A
 * wait that includes a listed request loops: poll, then the MPI's test, until done. With no
 * listed request every call goes straight to the MPI's.
 *
 * Invariants: an entry lives exactly as long as its MPI request: the MPI calls the entry's free
 * function when it frees the request, and that unlinks it, so a polled handle is always live.
 * The list and the poll functions run under ROMIO's lock (MPIO_Layer_cs_enter, recursive); a
 * poll function's own completion calls (ROMIO tests its internal requests) do not poll again.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include "greqx.h"

void MPIO_Layer_cs_enter(void);
void MPIO_Layer_cs_exit(void);

struct layer_greq_class {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    MPIX_Grequest_poll_function *poll;
};

struct entry {
    struct layer_greq_class *cls;
    void *state;
    MPI_Request req;
    int done;                   /* the MPI says it is complete: poll no more (ROMIO's poll
                                 * functions complete a request each time they find it done) */
    int freed;                  /* the MPI freed the request during a poll: unlink after it */
    struct entry *next;
};

static struct entry *listed;
static int n_listed;            /* read without the lock only to skip the lock when 0 */
static int polling;             /* a poll pass is running (under the lock) */

static int query_entry(void *extra, MPI_Status * status)
{
    struct entry *e = extra;

    return e->cls->query(e->state, status);
}

static void unlink_entry(struct entry *e)
{
    for (struct entry ** p = &listed; *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            break;
        }
    __atomic_store_n(&n_listed, n_listed - 1, __ATOMIC_RELEASE);
    free(e);
}

static int free_entry(void *extra)
{
    struct entry *e = extra;
    int rc = e->cls->free(e->state);

    MPIO_Layer_cs_enter();
    if (polling)
        e->freed = 1;
    else
        unlink_entry(e);
    MPIO_Layer_cs_exit();
    return rc;
}

static int cancel_entry(void *extra, int complete)
{
    struct entry *e = extra;

    return e->cls->cancel(e->state, complete);
}

int PMPIX_Grequest_class_create(MPI_Grequest_query_function * query_fn,
                                MPI_Grequest_free_function * free_fn,
                                MPI_Grequest_cancel_function * cancel_fn,
                                MPIX_Grequest_poll_function * poll_fn,
                                MPIX_Grequest_wait_function * wait_fn,
                                MPIX_Grequest_class * greq_class)
{
    struct layer_greq_class *c = malloc(sizeof *c);

    (void) wait_fn;             /* waits poll until done (above) */
    if (!c)
        return MPI_ERR_NO_MEM;
    *c = (struct layer_greq_class) {
    query_fn, free_fn, cancel_fn, poll_fn};
    *greq_class = c;
    return MPI_SUCCESS;
}

int PMPIX_Grequest_class_allocate(MPIX_Grequest_class greq_class, void *extra_state,
                                  MPI_Request * request)
{
    struct entry *e = calloc(1, sizeof *e);
    int rc;

    if (!e)
        return MPI_ERR_NO_MEM;
    e->cls = greq_class;
    e->state = extra_state;
    rc = PMPI_Grequest_start(query_entry, free_entry, cancel_entry, e, request);
    if (rc != MPI_SUCCESS) {
        free(e);
        return rc;
    }
    e->req = *request;
    MPIO_Layer_cs_enter();
    e->next = listed;
    listed = e;
    __atomic_store_n(&n_listed, n_listed + 1, __ATOMIC_RELEASE);
    MPIO_Layer_cs_exit();
    return MPI_SUCCESS;
}

/* The MPI's own NAME: the next definition after this library's (which exports the same names). */
static void *real_fn(const char *name, void **slot)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        if (!fn) {
            fprintf(stderr, "bblog layer: the MPI library has no %s\n", name);
            abort();
        }
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

#define REAL(name) ((__typeof__(&name)) real_fn(#name, &slot_##name))
static void *slot_PMPI_Wait, *slot_PMPI_Test, *slot_PMPI_Waitall, *slot_PMPI_Testall,
    *slot_PMPI_Waitany, *slot_PMPI_Testany, *slot_PMPI_Waitsome, *slot_PMPI_Testsome,
    *slot_PMPI_Request_get_status;

/* One pass over the listed requests: each one's poll function, once. */
static void poll_all(void)
{
    if (__atomic_load_n(&n_listed, __ATOMIC_ACQUIRE) == 0)
        return;
    MPIO_Layer_cs_enter();
    if (!polling) {
        polling = 1;
        for (struct entry * e = listed; e; e = e->next) {
            MPI_Status st;

            int flag = 0;

            if (e->done || e->freed || !e->cls->poll)
                continue;
            e->cls->poll(e->state, &st);
            if (!e->freed && REAL(PMPI_Request_get_status) (e->req, &flag, MPI_STATUS_IGNORE) ==
                MPI_SUCCESS && flag)
                e->done = 1;
        }
        polling = 0;
        for (struct entry * e = listed, *next; e; e = next) {
            next = e->next;
            if (e->freed)
                unlink_entry(e);
        }
    }
    MPIO_Layer_cs_exit();
}

/* Whether any of the n requests is listed (its poll function must run for it to complete). */
static int any_listed(int n, const MPI_Request * reqs)
{
    int found = 0;

    if (__atomic_load_n(&n_listed, __ATOMIC_ACQUIRE) == 0)
        return 0;
    MPIO_Layer_cs_enter();
    for (int i = 0; i < n && !found; i++)
        for (struct entry * e = listed; e && !found; e = e->next)
            found = reqs[i] != MPI_REQUEST_NULL && reqs[i] == e->req && !e->done;
    MPIO_Layer_cs_exit();
    return found;
}

static int wait_one(MPI_Request * r, MPI_Status * s)
{
    int flag = 0, rc;

    if (!any_listed(1, r))
        return REAL(PMPI_Wait)(r, s);
    do {
        poll_all();
        rc = REAL(PMPI_Test)(r, &flag, s);
    } while (rc == MPI_SUCCESS && !flag && (sched_yield(), 1));
    return rc;
}

static int test_one(MPI_Request * r, int *f, MPI_Status * s)
{
    poll_all();
    return REAL(PMPI_Test)(r, f, s);
}

static int wait_all(int n, MPI_Request * r, MPI_Status * s)
{
    int flag = 0, rc;

    if (!any_listed(n, r))
        return REAL(PMPI_Waitall)(n, r, s);
    do {
        poll_all();
        rc = REAL(PMPI_Testall)(n, r, &flag, s);
    } while (rc == MPI_SUCCESS && !flag && (sched_yield(), 1));
    return rc;
}

static int test_all(int n, MPI_Request * r, int *f, MPI_Status * s)
{
    poll_all();
    return REAL(PMPI_Testall)(n, r, f, s);
}

static int wait_any(int n, MPI_Request * r, int *i, MPI_Status * s)
{
    int flag = 0, rc;

    if (!any_listed(n, r))
        return REAL(PMPI_Waitany)(n, r, i, s);
    do {
        poll_all();
        rc = REAL(PMPI_Testany)(n, r, i, &flag, s);
    } while (rc == MPI_SUCCESS && !flag && (sched_yield(), 1));
    return rc;
}

static int test_any(int n, MPI_Request * r, int *i, int *f, MPI_Status * s)
{
    poll_all();
    return REAL(PMPI_Testany)(n, r, i, f, s);
}

static int wait_some(int n, MPI_Request * r, int *o, int *i, MPI_Status * s)
{
    int rc;

    if (!any_listed(n, r))
        return REAL(PMPI_Waitsome)(n, r, o, i, s);
    do {
        poll_all();
        rc = REAL(PMPI_Testsome)(n, r, o, i, s);
    } while (rc == MPI_SUCCESS && *o == 0 && (sched_yield(), 1));
    return rc;
}

static int test_some(int n, MPI_Request * r, int *o, int *i, MPI_Status * s)
{
    poll_all();
    return REAL(PMPI_Testsome)(n, r, o, i, s);
}

static int get_status(MPI_Request r, int *f, MPI_Status * s)
{
    poll_all();
    return REAL(PMPI_Request_get_status)(r, f, s);
}

/* Both names of each: programs call MPI_*, Fortran bindings and profiling tools PMPI_*. */
#define EXPORT(type, name, args, call)                                          \
    type MPI_##name args { return call; }                                       \
    type PMPI_##name args { return call; }

EXPORT(int, Wait, (MPI_Request * r, MPI_Status * s), wait_one(r, s))
EXPORT(int, Test, (MPI_Request * r, int *f, MPI_Status * s), test_one(r, f, s))
EXPORT(int, Waitall, (int n, MPI_Request r[], MPI_Status s[]), wait_all(n, r, s))
EXPORT(int, Testall, (int n, MPI_Request r[], int *f, MPI_Status s[]), test_all(n, r, f, s))
EXPORT(int, Waitany, (int n, MPI_Request r[], int *i, MPI_Status * s), wait_any(n, r, i, s))
EXPORT(int, Testany, (int n, MPI_Request r[], int *i, int *f, MPI_Status * s),
       test_any(n, r, i, f, s))
EXPORT(int, Waitsome, (int n, MPI_Request r[], int *o, int i[], MPI_Status s[]),
       wait_some(n, r, o, i, s))
EXPORT(int, Testsome, (int n, MPI_Request r[], int *o, int i[], MPI_Status s[]),
       test_some(n, r, o, i, s))
EXPORT(int, Request_get_status, (MPI_Request r, int *f, MPI_Status * s), get_status(r, f, s))
