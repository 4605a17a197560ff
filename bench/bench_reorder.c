/*
 * bblog_reorder (two-level, seed paper 000 section IV.D) against the one-level baseline the
 * paper argues against: flatten every segment, qsort them all, then resolve overlaps (later
 * request wins) and coalesce. Same inputs, same output (checked). Prints one JSON object.
 *
 * Cases:
 *  a: few large requests, each a strided run over its own region of the file, issued out of
 *     order (every group holds one request);
 *  b: IOR-like strided: P processes' worth of 4 KiB strided requests, all interleaving (one
 *     group of P requests);
 *  c: BTIO-like: a 3-D array of doubles cut into blocks, each request one block flattened to its
 *     rows; blocks in the same z slab interleave (groups of blocks per slab), issued shuffled.
 *
 * Usage: bench_reorder [reps]   (default 5; the best time of the reps is reported)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bblog_reorder.h"

struct input {
    const char *name;
    const char *shape;
    struct bblog_req *reqs;
    struct bblog_seg *segs;
    size_t nreqs;
    size_t nsegs;
};

static uint64_t rnd_state = 42;

static uint64_t rnd(void)
{
    uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Allocates nreqs requests of per segments each, as one block; the caller fills segs. */
static int input_alloc(struct input *in, size_t nreqs, size_t per)
{
    in->nreqs = nreqs;
    in->nsegs = nreqs * per;
    in->reqs = calloc(nreqs, sizeof(*in->reqs));
    in->segs = calloc(in->nsegs, sizeof(*in->segs));
    if (in->reqs == NULL || in->segs == NULL)
        return ENOMEM;
    for (size_t r = 0; r < nreqs; r++) {
        in->reqs[r].segs = &in->segs[r * per];
        in->reqs[r].nsegs = per;
    }
    return 0;
}

/* Fisher-Yates over the request order (the segment blocks stay where they are). */
static void shuffle_reqs(struct input *in)
{
    for (size_t i = in->nreqs; i > 1; i--) {
        size_t j = rnd() % i;
        struct bblog_req t = in->reqs[i - 1];

        in->reqs[i - 1] = in->reqs[j];
        in->reqs[j] = t;
    }
}

/* Data-log positions: requests appended one after the other, in issue order. */
static void pack_sources(struct input *in)
{
    uint64_t pos = 0;

    for (size_t r = 0; r < in->nreqs; r++) {
        struct bblog_seg *s = (struct bblog_seg *)in->reqs[r].segs;

        for (size_t i = 0; i < in->reqs[r].nsegs; i++) {
            s[i].src = pos;
            pos += s[i].len;
        }
    }
}

static int make_few_large(struct input *in)
{
    const size_t nreqs = 8, per = 65536;
    const uint64_t xfer = 4096, region = per * 2 * xfer;
    int rc = input_alloc(in, nreqs, per);

    if (rc != 0)
        return rc;
    in->name = "a_few_large";
    in->shape = "8 requests x 65536 segments of 4 KiB, stride 8 KiB, disjoint regions, shuffled";
    for (size_t r = 0; r < nreqs; r++) {
        for (size_t i = 0; i < per; i++) {
            in->segs[r * per + i].off = r * region + i * 2 * xfer;
            in->segs[r * per + i].len = xfer;
        }
    }
    shuffle_reqs(in);
    pack_sources(in);
    return 0;
}

static int make_ior_strided(struct input *in)
{
    const size_t nprocs = 64, per = 8192;
    const uint64_t xfer = 4096;
    int rc = input_alloc(in, nprocs, per);

    if (rc != 0)
        return rc;
    in->name = "b_ior_strided";
    in->shape = "64 requests (one per process) x 8192 segments of 4 KiB, interleaved by rank";
    for (size_t p = 0; p < nprocs; p++) {
        for (size_t i = 0; i < per; i++) {
            in->segs[p * per + i].off = (i * nprocs + p) * xfer;
            in->segs[p * per + i].len = xfer;
        }
    }
    pack_sources(in);
    return 0;
}

static int make_btio_blocks(struct input *in)
{
    const uint64_t n = 256, b = 32, nb = n / b, esz = 8;
    const size_t per = (size_t)(b * b);
    int rc = input_alloc(in, (size_t)(nb * nb * nb), per);
    size_t r = 0;

    if (rc != 0)
        return rc;
    in->name = "c_btio_3d";
    in->shape = "256^3 doubles, 512 blocks of 32^3 (1024 rows of 256 B each), shuffled";
    for (uint64_t bz = 0; bz < nb; bz++) {
        for (uint64_t by = 0; by < nb; by++) {
            for (uint64_t bx = 0; bx < nb; bx++, r++) {
                size_t k = 0;

                for (uint64_t z = bz * b; z < bz * b + b; z++) {
                    for (uint64_t y = by * b; y < by * b + b; y++, k++) {
                        in->segs[r * per + k].off = ((z * n + y) * n + bx * b) * esz;
                        in->segs[r * per + k].len = b * esz;
                    }
                }
            }
        }
    }
    shuffle_reqs(in);
    pack_sources(in);
    return 0;
}

/* The baseline: flatten + qsort + dedupe (later wins) + coalesce. */
struct flat {
    uint64_t off;
    uint64_t len;
    uint64_t src;
    size_t req;
};

static int flat_cmp(const void *a, const void *b)
{
    const struct flat *x = a;
    const struct flat *y = b;

    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->req < y->req ? -1 : x->req > y->req;
}

static void emit(struct bblog_seg *o, size_t *n, uint64_t off, uint64_t len, uint64_t src)
{
    if (*n > 0 && o[*n - 1].off + o[*n - 1].len == off && o[*n - 1].src + o[*n - 1].len == src) {
        o[*n - 1].len += len;
        return;
    }
    o[*n].off = off;
    o[*n].len = len;
    o[*n].src = src;
    (*n)++;
}

/*
 * After the sort, a sweep resolves overlaps: a max-heap (by request) of the flattened segments
 * that started at or before the position, dropped lazily once they end. It costs next to
 * nothing when nothing overlaps, so the baseline's time is its sort.
 */
static int baseline(const struct input *in, struct bblog_seg **out, size_t *nout)
{
    struct flat *f = malloc(in->nsegs * sizeof(*f));
    size_t *h = malloc(in->nsegs * sizeof(*h));
    struct bblog_seg *o = malloc(2 * in->nsegs * sizeof(*o));
    size_t nf = 0, nh = 0, no = 0, i = 0;
    uint64_t x = 0;

    if (f == NULL || h == NULL || o == NULL) {
        free(f);
        free(h);
        free(o);
        return ENOMEM;
    }
    for (size_t r = 0; r < in->nreqs; r++) {
        for (size_t k = 0; k < in->reqs[r].nsegs; k++) {
            const struct bblog_seg *s = &in->reqs[r].segs[k];

            if (s->len == 0)
                continue;
            f[nf].off = s->off;
            f[nf].len = s->len;
            f[nf].src = s->src;
            f[nf].req = r;
            nf++;
        }
    }
    qsort(f, nf, sizeof(*f), flat_cmp);
    if (nf > 0)
        x = f[0].off;
    for (;;) {
        while (i < nf && f[i].off <= x) {
            size_t c = nh++;

            while (c > 0 && f[h[(c - 1) / 2]].req < f[i].req) {
                h[c] = h[(c - 1) / 2];
                c = (c - 1) / 2;
            }
            h[c] = i++;
        }
        while (nh > 0 && f[h[0]].off + f[h[0]].len <= x) {
            size_t last = h[--nh], c = 0;

            for (;;) {
                size_t k = 2 * c + 1;

                if (k >= nh)
                    break;
                if (k + 1 < nh && f[h[k + 1]].req > f[h[k]].req)
                    k++;
                if (f[h[k]].req <= f[last].req)
                    break;
                h[c] = h[k];
                c = k;
            }
            if (nh > 0)
                h[c] = last;
        }
        if (nh == 0) {
            if (i == nf)
                break;
            x = f[i].off;
            continue;
        }
        {
            const struct flat *w = &f[h[0]];
            uint64_t nx = w->off + w->len;

            if (i < nf && f[i].off < nx)
                nx = f[i].off;
            emit(o, &no, x, nx - x, w->src + (x - w->off));
            x = nx;
        }
    }
    free(h);
    free(f);
    *out = o;
    *nout = no;
    return 0;
}

static int range_cmp(const void *a, const void *b)
{
    const uint64_t *x = a;
    const uint64_t *y = b;

    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Groups the high level forms (requests sorted by first byte, merged while they interleave):
 * reported to show what each case asks of the low level. */
static size_t count_groups(const struct input *in)
{
    uint64_t (*rg)[2] = malloc(in->nreqs * sizeof(*rg));
    uint64_t end = 0;
    size_t g = 0;

    if (rg == NULL)
        return 0;
    for (size_t r = 0; r < in->nreqs; r++) {
        const struct bblog_req *q = &in->reqs[r];

        rg[r][0] = q->segs[0].off;
        rg[r][1] = q->segs[q->nsegs - 1].off + q->segs[q->nsegs - 1].len;
    }
    qsort(rg, in->nreqs, sizeof(*rg), range_cmp);
    for (size_t r = 0; r < in->nreqs; r++) {
        if (r == 0 || rg[r][0] >= end)
            g++;
        if (r == 0 || rg[r][1] > end)
            end = rg[r][1];
    }
    free(rg);
    return g;
}

static int same(const struct bblog_seg *a, size_t na, const struct bblog_seg *b, size_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, na * sizeof(*a)) == 0);
}

/* Runs one case, prints its JSON object; returns 0 or an errno. */
static int run(const struct input *in, int reps, int first)
{
    double t2 = 1e30, t1 = 1e30;
    struct bblog_seg *o2 = NULL, *o1 = NULL;
    size_t n2 = 0, n1 = 0;
    int rc = 0;

    for (int k = 0; k < reps && rc == 0; k++) {
        double t;

        free(o2);
        free(o1);
        o2 = o1 = NULL;
        t = now();
        rc = bblog_reorder(in->reqs, in->nreqs, &o2, &n2);
        t = now() - t;
        if (rc != 0)
            break;
        t2 = t < t2 ? t : t2;
        t = now();
        rc = baseline(in, &o1, &n1);
        t = now() - t;
        t1 = t < t1 ? t : t1;
    }
    if (rc == 0) {
        printf("%s    {\"case\": \"%s\", \"shape\": \"%s\", \"requests\": %zu, "
               "\"segments\": %zu, \"groups\": %zu, \"out_segments\": %zu,\n"
               "     \"two_level_s\": %.6f, \"flatten_qsort_s\": %.6f, "
               "\"speedup\": %.2f, \"same_output\": %s}",
               first ? "" : ",\n", in->name, in->shape, in->nreqs, in->nsegs,
               count_groups(in), n2, t2, t1, t1 / t2, same(o2, n2, o1, n1) ? "true" : "false");
    }
    free(o2);
    free(o1);
    return rc;
}

int main(int argc, char **argv)
{
    int (*const make[])(struct input *) = { make_few_large, make_ior_strided, make_btio_blocks };
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    int rc = 0;

    if (reps < 1) {
        fprintf(stderr, "usage: %s [reps >= 1]\n", argv[0]);
        return 2;
    }
    printf("{\"bench\": \"reorder\", \"reps\": %d, \"time\": \"best of reps, seconds\",\n"
           " \"speedup\": \"flatten_qsort_s / two_level_s\",\n \"cases\": [\n", reps);
    for (size_t c = 0; c < sizeof(make) / sizeof(make[0]) && rc == 0; c++) {
        struct input in;

        memset(&in, 0, sizeof(in));
        rc = make[c](&in);
        if (rc == 0)
            rc = run(&in, reps, c == 0);
        free(in.reqs);
        free(in.segs);
    }
    printf("\n]}\n");
    if (rc != 0) {
        fprintf(stderr, "bench_reorder: %s\n", strerror(rc));
        return 1;
    }
    return 0;
}
