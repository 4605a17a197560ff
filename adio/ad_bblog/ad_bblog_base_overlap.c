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
 * Data path. The caller gives a span [lo, hi) that most ranges lie in, the same on every
 * process (the drain: its round within the range its first agreement found). The span is cut
 * into nprocs equal domains, domain i owned by process i (what lies outside, in the first or the
 * last). Each process cuts its ranges at the domains' borders and sends each part (off, end,
 * index of its range) to the domain's owner: a sparse exchange (ADIOI_BBLOG_Sparse,
 * ad_bblog_base_wait.c). The owner sorts what it got and finds, for each part, the other
 * processes' parts that overlap it; it answers each sender with its ranges that overlap another
 * process's (by index) and the processes they overlap (a second sparse exchange). Overlap is
 * symmetric and every overlapping byte lies in one domain, so two processes whose ranges overlap
 * both learn that of each other. Only then, and only where some owner found an overlap, each
 * process sends the pieces of its overlapping ranges, with their stamps, to those processes (a
 * third). A job whose processes' ranges do not overlap pays one message per domain its ranges
 * touch and two collective steps, whatever the number of processes.
 *
 * Collective calls. Each sparse exchange ends in an MPI_Iallreduce that agrees on what the next
 * step needs (any failure; after the answers, whether any overlap was found): two collective
 * calls without an overlap, where the gathered form made three, three with one. Every process
 * makes them in the same order, after a failure too (with nothing to send).
 *
 * Failures. A process that cannot allocate sends nothing more and says so at the end of the
 * exchange it is in; every process then returns ENOMEM (ADIOI_BBLOG_ECOLL when a collective call
 * failed), with nothing exchanged. Only the room for the pieces received, after the last
 * agreement, fails on one process alone: the drain's commit makes that fail on every process.
 */
#include <stdlib.h>
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"

/* Below the sync notes' tags (ADIOI_BBLOG_Tag). */
enum { TAG_RANGES = ADIOI_BBLOG_NOTES_TAGS, TAG_ANSWERS, TAG_PIECES };
enum { ANSWER_RANGE, ANSWER_PEER };     /* an answer: (kind, value) */

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
    qsort(v, in->n, 4 * sizeof(*v), ADIOI_BBLOG_By_first);
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

/* The domain of offset x: [lo, lo + nprocs * dsz) cut into nprocs, what lies outside it in the
 * first or the last (the same on every process). */
static uint64_t domain(uint64_t x, uint64_t lo, uint64_t dsz, int nprocs)
{
    uint64_t d = x < lo ? 0 : (x - lo) / dsz;

    return d < (uint64_t) nprocs ? d : (uint64_t) nprocs - 1;
}

/* This process's ranges (off, end), cut at the domains' borders into (owner, off, end, index)
 * records sorted by owner (*nparts). NULL without memory. */
static uint64_t *cut(const uint64_t *ranges, size_t nr, uint64_t lo, uint64_t dsz, int nprocs,
                     size_t *nparts)
{
    size_t j, n = 0, cap = 0;
    uint64_t *v = NULL;

    for (j = 0; j < nr; j++) {
        uint64_t off = ranges[2 * j], end = ranges[2 * j + 1];
        while (off < end) {
            uint64_t d = domain(off, lo, dsz, nprocs), e = end;
            if (d + 1 < (uint64_t) nprocs && lo + (d + 1) * dsz > off &&
                lo + (d + 1) * dsz < end)
                e = lo + (d + 1) * dsz;
            if (bblog_grow((void **) &v, &cap, n + 1, 4 * sizeof(*v)) != 0) {
                free(v);
                return NULL;
            }
            v[4 * n] = d, v[4 * n + 1] = off, v[4 * n + 2] = e, v[4 * n + 3] = j;
            n++;
            off = e;
        }
    }
    *nparts = n;
    if (!v)
        v = malloc(4 * sizeof(*v));
    if (v)
        qsort(v, n, 4 * sizeof(*v), ADIOI_BBLOG_By_first);
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
        qsort(peers, npeers, sizeof(*peers), ADIOI_BBLOG_By_first);
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

/* A failed exchange's result: ADIOI_BBLOG_ECOLL where a collective call failed. */
#define FAILED(coll) ((coll) ? ADIOI_BBLOG_ECOLL : ENOMEM)

int ADIOI_BBLOG_Order_local(ADIO_File fd, struct ADIOI_BBLOG_order *o, const uint64_t *mine,
                            size_t n_mine, const uint64_t *ranges, const size_t *rix, size_t nr,
                            int failed, size_t *ngot)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_inbox box[3] = { {.width = 3}, {.width = 2}, {.width = 3} };
    struct ADIOI_BBLOG_sparse_out *out = NULL;
    uint64_t scratch[ADIOI_BBLOG_SPARSE_CHUNK], agree[2], agreed[2];
    uint64_t lo = o->lo, hi = o->hi > o->lo ? o->hi : o->lo + 1;
    uint64_t *parts = NULL, *ans = NULL, *send = NULL;
    size_t j, nparts = 0, nans = 0;
    int nout = 0, coll = 0, rc = 0, k;

    *ngot = 0;
    /* 1. The ranges' parts to the domains' owners; its end agrees on failure (2) and o->flag. */
    if (!failed && (!(parts = cut(ranges, nr, lo, (hi - lo) / st->nprocs +
                                  ((hi - lo) % st->nprocs != 0), st->nprocs, &nparts)) ||
                    pack(parts, nparts, 3, &out, &nout) != 0))
        failed = 1, nout = 0;
    agree[0] = failed ? 2 : o->flag != 0;
    if (ADIOI_BBLOG_Sparse(fd->comm, ADIOI_BBLOG_Tag(TAG_RANGES), failed ? NULL : out,
                           failed ? 0 : nout, &box[0], scratch, agree, agreed, 1) != MPI_SUCCESS)
        agreed[0] = 2, coll = 1;
    o->flag = agreed[0] == 1;
    if (agreed[0] > 1) {
        rc = FAILED(coll);
        goto out;
    }
    free(out);
    out = NULL, nout = 0;

    /* 2. The owners' answers; its end agrees on failure and on whether any overlap was found. */
    failed = box[0].failed || find_overlaps(&box[0], &ans, &nans) != 0 ||
        pack(ans, nans, 2, &out, &nout) != 0;
    agree[0] = failed != 0;
    agree[1] = nans > 0;
    if (ADIOI_BBLOG_Sparse(fd->comm, ADIOI_BBLOG_Tag(TAG_ANSWERS), failed ? NULL : out,
                           failed ? 0 : nout, &box[1], scratch, agree, agreed, 2) != MPI_SUCCESS)
        agreed[0] = 1, coll = 1;
    if (agreed[0] != 0 || agreed[1] == 0) {     /* failed, or no range overlaps another */
        rc = agreed[0] != 0 ? FAILED(coll) : 0;
        goto out;
    }
    free(out);
    out = NULL, nout = 0;

    /* 3. The pieces of this process's overlapping ranges, to the processes they overlap; its
     * end agrees on failure. */
    failed = box[1].failed || to_peers(&box[1], mine, n_mine, rix, nr, &send, &out, &nout) != 0;
    agree[0] = failed != 0;
    if (ADIOI_BBLOG_Sparse(fd->comm, ADIOI_BBLOG_Tag(TAG_PIECES), failed ? NULL : out,
                           failed ? 0 : nout, &box[2], scratch, agree, agreed, 1) != MPI_SUCCESS)
        agreed[0] = 1, coll = 1;
    if (agreed[0] != 0) {
        rc = FAILED(coll);
        goto out;
    }
    /* Only this allocation fails alone: the drain's commit then fails on every process. */
    if (bblog_grow((void **) &o->pieces, &o->cap, box[2].n + 1, 3 * sizeof(uint64_t)) != 0 ||
        bblog_grow((void **) &o->reach, &o->reach_cap, box[2].n + 1, sizeof(uint64_t)) != 0) {
        rc = ENOMEM;
        goto out;
    }
    for (j = 0; j < box[2].n; j++)      /* (off, len, stamp, sender) to (off, len, stamp) */
        memcpy(o->pieces + 3 * j, box[2].v + 4 * j, 3 * sizeof(*o->pieces));
    *ngot = box[2].n;
  out:
    for (k = 0, j = 0; k < 3; k++) {
        j += box[k].n * (box[k].width + 1) * sizeof(uint64_t);
        free(box[k].v);
    }
    st->stats.exchange_bytes += j;      /* what this process received, as the gather counted */
    ADIOI_BBLOG_MAX(st->stats.max_exchange_bytes, (uint64_t) j);
    free(out);
    free(send);
    free(ans);
    free(parts);
    return rc;
}
