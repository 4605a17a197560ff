/*
 * The Order exchange of a drain's round, in proportion to each process's own ranges: which other
 * processes' ranges overlap this process's, and their pieces there (ad_bblog_base_order.c says
 * what the exchange is for).
 *
 * Why. Gathering every process's ranges on every process costs each one 16 B per range of every
 * other process: at 64 processes that was 70% of what a rank received in a whole strided job
 * (bench/results/scaling.md). Here each process sends its ranges only to the processes that own
 * the parts of the file they fall in, and hears back only about its own.
 *
 * Data path. One reduction gives every process the span [lo, hi) of all ranges (and the failure
 * and flag agreements the gather made). The span is cut into nprocs equal domains, domain i
 * owned by process i. Each process cuts its ranges at the domains' borders and sends each part
 * (off, end, index of its range) to the domain's owner: a sparse exchange
 * (ADIOI_BBLOG_Sparse, ad_bblog_base_wait.c). The owner sorts what it got and finds, for each
 * part, the other processes' parts that overlap it; it answers each sender with its ranges that
 * overlap another process's (by index) and the processes they overlap (a second sparse
 * exchange). Overlap is symmetric and every overlap lies in some domain, so two processes whose
 * ranges overlap both learn that of each other. Each process then sends the pieces of its
 * overlapping ranges, with their stamps, to those processes only (a third). A job whose
 * processes' ranges do not overlap pays one message per domain its ranges touch, and two
 * barriers' rounds, whatever the number of processes.
 *
 * Collective calls. Two reductions (the span first, the failure last) and three sparse
 * exchanges, on every process, in that order, after a failure too (with nothing to send).
 *
 * Failures. A process that cannot allocate sends nothing more and says so in the last
 * reduction; every process then returns ENOMEM (ADIOI_BBLOG_ECOLL when a collective call
 * failed), with nothing exchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"

enum { TAG_RANGES, TAG_ANSWERS, TAG_PIECES };
enum { ANSWER_RANGE, ANSWER_PEER };     /* an answer: (kind, value) */

static int by_first(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;

    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int by_first_three(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    int i;

    for (i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* Records of w + 1 words sorted by their first word (the destination) become the messages of a
 * sparse exchange: each record's other w words packed in place at v, one message per
 * destination. *nout messages in *out (NULL without memory: returns 1). */
static int pack(uint64_t *v, size_t n, size_t w, struct ADIOI_BBLOG_sparse_out **out, int *nout)
{
    size_t i, k = 0;

    *nout = 0;
    if (n > 0 && !(*out = malloc(n * sizeof(**out))))
        return 1;
    for (i = 0; i < n; i++) {
        int dest = (int) v[(w + 1) * i];
        memmove(v + w * i, v + (w + 1) * i + 1, w * sizeof(*v));
        if (k == 0 || (*out)[k - 1].dest != dest) {
            (*out)[k].dest = dest;
            (*out)[k].w = v + w * i;
            (*out)[k].n = 0;
            k++;
        }
        (*out)[k - 1].n += w;
    }
    *nout = (int) k;
    return 0;
}

/* The owner's part: in holds (off, end, index, sender) parts, sorted here. Appends to *ans
 * (n records of (dest, kind, value)) each sender's parts that overlap another sender's, and
 * the senders they overlap. 0, or 1 without memory. */
static int find_overlaps(struct ADIOI_BBLOG_inbox *in, uint64_t **ans, size_t *nans)
{
    size_t *active = NULL, nact = 0, cap = 0, i, a, keep;
    unsigned char *hit = NULL;
    uint64_t *v = in->v;
    int failed = 0;

    *nans = 0;
    if (in->n == 0)
        return 0;
    qsort(v, in->n, 4 * sizeof(*v), by_first);
    if (!(hit = calloc(in->n, 1)) || !(active = malloc(in->n * sizeof(*active)))) {
        free(hit);
        return 1;
    }
    /* active: the parts before i that end after part i's start. */
    for (i = 0; i < in->n && !failed; i++) {
        const uint64_t *p = v + 4 * i;
        for (a = 0, keep = 0; a < nact; a++)
            if (v[4 * active[a] + 1] > p[0])
                active[keep++] = active[a];
        nact = keep;
        for (a = 0; a < nact && !failed; a++) {
            const uint64_t *q = v + 4 * active[a];
            if (q[3] == p[3])
                continue;
            hit[i] = hit[active[a]] = 1;
            if (bblog_grow((void **) ans, &cap, *nans + 2, 3 * sizeof(**ans)) != 0) {
                failed = 1;
                break;
            }
            (*ans)[3 * *nans] = p[3], (*ans)[3 * *nans + 1] = ANSWER_PEER;
            (*ans)[3 * *nans + 2] = q[3];
            (*ans)[3 * *nans + 3] = q[3], (*ans)[3 * *nans + 4] = ANSWER_PEER;
            (*ans)[3 * *nans + 5] = p[3];
            *nans += 2;
        }
        active[nact++] = i;
    }
    for (i = 0; i < in->n && !failed; i++)
        if (hit[i]) {
            if (bblog_grow((void **) ans, &cap, *nans + 1, 3 * sizeof(**ans)) != 0) {
                failed = 1;
                break;
            }
            (*ans)[3 * *nans] = v[4 * i + 3], (*ans)[3 * *nans + 1] = ANSWER_RANGE;
            (*ans)[3 * *nans + 2] = v[4 * i + 2];
            (*nans)++;
        }
    free(active);
    free(hit);
    if (!failed && *nans > 0) {         /* one answer per (dest, kind, value) */
        size_t k = 1;
        qsort(*ans, *nans, 3 * sizeof(**ans), by_first_three);
        for (i = 1; i < *nans; i++)
            if (by_first_three(*ans + 3 * i, *ans + 3 * (k - 1)) != 0)
                memmove(*ans + 3 * k++, *ans + 3 * i, 3 * sizeof(**ans));
        *nans = k;
    }
    return failed;
}

/* This process's ranges (off, end; empty ones left out), cut at the domains' borders into (owner, off, end, index)
 * records sorted by owner. NULL without memory. */
static uint64_t *cut(const uint64_t *ranges, size_t nr, uint64_t lo, uint64_t dsz, int nprocs,
                     size_t *nparts)
{
    size_t j, n = 0;
    uint64_t *v;

    for (j = 0; j < nr; j++)
        if (ranges[2 * j + 1] > ranges[2 * j])
            n += (ranges[2 * j + 1] - 1 - lo) / dsz - (ranges[2 * j] - lo) / dsz + 1;
    *nparts = n;
    if (!(v = malloc((n ? n : 1) * 4 * sizeof(*v))))
        return NULL;
    for (j = 0, n = 0; j < nr; j++) {
        uint64_t off = ranges[2 * j], end = ranges[2 * j + 1];
        while (off < end) {
            uint64_t d = (off - lo) / dsz, border = lo + (d + 1) * dsz;
            uint64_t e = border > off && border < end ? border : end;
            v[4 * n] = d < (uint64_t) nprocs ? d : (uint64_t) nprocs - 1;
            v[4 * n + 1] = off, v[4 * n + 2] = e, v[4 * n + 3] = j;
            n++;
            off = e;
        }
    }
    qsort(v, n, 4 * sizeof(*v), by_first);
    return v;
}

/* From the owners' answers (kind, value, owner), the messages of the last exchange: this
 * process's pieces in its ranges that overlap another process's, to each such process (*out,
 * *nout; the words in *send). 0, or 1 without memory. */
static int to_peers(const struct ADIOI_BBLOG_inbox *answers, const uint64_t *mine,
                    size_t n_mine, const size_t *rix, size_t nr, uint64_t **send,
                    struct ADIOI_BBLOG_sparse_out **out, int *nout)
{
    unsigned char *flag = NULL;
    uint64_t *peers = NULL;
    size_t j, c, npeers = 0, ns = 0;
    int failed;

    failed = (nr > 0 && !(flag = calloc(nr, 1))) ||
        (answers->n > 0 && !(peers = malloc(answers->n * sizeof(*peers)))) ||
        (n_mine > 0 && !(*send = malloc(3 * n_mine * sizeof(**send))));
    for (j = 0; !failed && j < answers->n; j++) {
        const uint64_t *a = answers->v + 3 * j;
        if (a[0] == ANSWER_RANGE && a[1] < nr)
            flag[a[1]] = 1;
        else if (a[0] == ANSWER_PEER)
            peers[npeers++] = a[1];
    }
    for (c = 0; !failed && c < n_mine; c++)
        if (flag[rix[c]])
            memcpy(*send + 3 * ns++, mine + 3 * c, 3 * sizeof(**send));
    if (!failed && npeers > 0 && ns > 0) {
        qsort(peers, npeers, sizeof(*peers), by_first);
        failed = !(*out = malloc(npeers * sizeof(**out)));
        for (j = 0; !failed && j < npeers; j++)
            if (j == 0 || peers[j] != peers[j - 1]) {
                (*out)[*nout].dest = (int) peers[j];
                (*out)[*nout].w = *send;
                (*out)[(*nout)++].n = 3 * ns;
            }
    }
    free(peers);
    free(flag);
    return failed;
}

/* The first reduction: whether any process failed (every process then returns ENOMEM, or
 * ADIOI_BBLOG_ECOLL), o->flag whether any process set it, and [*lo, *hi) the span of every
 * process's ranges (empty where no process has one). */
static int agree_span(ADIO_File fd, struct ADIOI_BBLOG_order *o, const uint64_t *ranges,
                      size_t nr, int failed, uint64_t *lo, uint64_t *hi)
{
    uint64_t in[3] = { failed ? 2 : o->flag != 0, 0, 0 }, res[3];
    size_t j;
    int coll = 0;

    for (j = 0; j < nr; j++) {          /* in[1]: the largest complement of a start */
        in[1] = UINT64_MAX - ranges[2 * j] > in[1] ? UINT64_MAX - ranges[2 * j] : in[1];
        in[2] = ranges[2 * j + 1] > in[2] ? ranges[2 * j + 1] : in[2];
    }
    if (ADIOI_BBLOG_Allreduce(in, res, 3, MPI_UINT64_T, MPI_MAX, fd->comm) != MPI_SUCCESS) {
        res[0] = 2;
        coll = 1;
    }
    o->flag = res[0] == 1;
    *lo = UINT64_MAX - res[1];
    *hi = res[2];
    return res[0] != 2 ? 0 : coll ? ADIOI_BBLOG_ECOLL : ENOMEM;
}

int ADIOI_BBLOG_Order_local(ADIO_File fd, struct ADIOI_BBLOG_order *o, const uint64_t *mine,
                            size_t n_mine, const uint64_t *ranges, const size_t *rix, size_t nr,
                            int failed, size_t *ngot)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_inbox box[3] = { {.width = 3}, {.width = 2}, {.width = 3} };
    struct ADIOI_BBLOG_sparse_out *out = NULL;
    uint64_t lo, hi, *parts = NULL, *ans = NULL, *send = NULL, *scratch = NULL;
    size_t j, nparts = 0, nans = 0;
    int nout = 0, coll = 0, k, f;

    *ngot = 0;
    failed = failed || !(scratch = malloc(ADIOI_BBLOG_SPARSE_CHUNK * sizeof(*scratch)));
    if ((k = agree_span(fd, o, ranges, nr, failed, &lo, &hi)) != 0 || hi <= lo) {
        free(scratch);
        return k;
    }

    /* 1. The ranges' parts to the domains' owners. */
    if (!(parts = cut(ranges, nr, lo, (hi - lo) / st->nprocs + ((hi - lo) % st->nprocs != 0),
                      st->nprocs, &nparts)) ||
        pack(parts, nparts, 3, &out, &nout) != 0)
        failed = 1, nout = 0;
    if (ADIOI_BBLOG_Sparse(fd->comm, ADIOI_BBLOG_Tag(TAG_RANGES), out, nout, &box[0],
                           scratch) != MPI_SUCCESS)
        coll = failed = 1;
    free(out);
    out = NULL, nout = 0;

    /* 2. The owner's answers. */
    failed = failed || box[0].failed || find_overlaps(&box[0], &ans, &nans) != 0 ||
        pack(ans, nans, 2, &out, &nout) != 0;
    if (ADIOI_BBLOG_Sparse(fd->comm, ADIOI_BBLOG_Tag(TAG_ANSWERS), failed ? NULL : out,
                           failed ? 0 : nout, &box[1], scratch) != MPI_SUCCESS)
        coll = failed = 1;
    free(out);
    out = NULL, nout = 0;

    /* 3. The pieces of this process's overlapping ranges, to the processes they overlap. */
    failed = failed || box[1].failed ||
        to_peers(&box[1], mine, n_mine, rix, nr, &send, &out, &nout) != 0;
    if (ADIOI_BBLOG_Sparse(fd->comm, ADIOI_BBLOG_Tag(TAG_PIECES), failed ? NULL : out,
                           failed ? 0 : nout, &box[2], scratch) != MPI_SUCCESS)
        coll = failed = 1;
    failed = failed || box[2].failed ||
        bblog_grow((void **) &o->pieces, &o->cap, box[2].n + 1, 3 * sizeof(uint64_t)) != 0 ||
        bblog_grow((void **) &o->reach, &o->reach_cap, box[2].n + 1, sizeof(uint64_t)) != 0;
    for (k = 0; k < 3; k++)
        st->stats.exchange_bytes += box[k].n * (box[k].width + 1) * sizeof(uint64_t);

    /* 4. Whether every process got everything. */
    f = failed;
    if (ADIOI_BBLOG_Allreduce(&f, &k, 1, MPI_INT, MPI_MAX, fd->comm) != MPI_SUCCESS)
        k = 1, coll = 1;
    if (k == 0) {               /* the pieces, (off, len, stamp, sender) to (off, len, stamp) */
        for (j = 0; j < box[2].n; j++)
            memcpy(o->pieces + 3 * j, box[2].v + 4 * j, 3 * sizeof(*o->pieces));
        *ngot = box[2].n;
    }
    free(box[0].v);
    free(box[1].v);
    free(box[2].v);
    free(out);
    free(send);
    free(ans);
    free(parts);
    free(scratch);
    return k == 0 ? 0 : coll ? ADIOI_BBLOG_ECOLL : ENOMEM;
}
