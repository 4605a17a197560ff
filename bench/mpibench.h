/*
 * mpibench.h - small helpers shared by the MPI benchmark programs of bench/ (btio.c,
 * btio_nc.c, flash_h5.c, ckpt.c, vpic_h5.c): size parsing, "key=value" hints into an MPI_Info,
 * JSON strings, peak RSS, compute phases, and the BT diagonal multi-partition. Header-only
 * (static functions) so that each program stays one mpicc command.
 */
#ifndef BBLOG_MPIBENCH_H
#define BBLOG_MPIBENCH_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <mpi.h>

/* Parses a positive integer with an optional k/m/g suffix (powers of 1024). Returns 0 or -1. */
static inline int bench_parse_size(const char *s, long long *out)
{
    char *end;
    unsigned long long v, mult = 1;

    if (!isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    if (*end != '\0') {
        switch (tolower((unsigned char)*end)) {
        case 'k':
            mult = 1ULL << 10;
            break;
        case 'm':
            mult = 1ULL << 20;
            break;
        case 'g':
            mult = 1ULL << 30;
            break;
        default:
            return -1;
        }
        if (end[1] != '\0')
            return -1;
    }
    if (v == 0 || v > (unsigned long long)INT64_MAX / mult)
        return -1;
    *out = (long long)(v * mult);
    return 0;
}

/* Sets "key=value" into info; returns -1 (and leaves info alone) when there is no '=' or no key. */
static inline int bench_info_set(MPI_Info info, const char *kv)
{
    const char *eq = strchr(kv, '=');
    char key[MPI_MAX_INFO_KEY + 1];

    if (eq == NULL || eq == kv || (size_t)(eq - kv) > MPI_MAX_INFO_KEY)
        return -1;
    snprintf(key, sizeof(key), "%.*s", (int)(eq - kv), kv);
    MPI_Info_set(info, key, eq + 1);
    return 0;
}

static inline void bench_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;

        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* Peak resident set size of this process so far, KiB (Linux ru_maxrss unit). */
static inline double bench_max_rss_kib(void)
{
    struct rusage ru;

    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss : 0.0;
}

/* A compute phase of the given seconds between output phases: sleeping (the CPUs stay free for
 * a background drain) or, with busy, spinning on a floating-point loop. */
static inline void bench_compute(double seconds, int busy)
{
    double until = MPI_Wtime() + seconds;

    if (busy) {
        volatile double x = 1;

        while (MPI_Wtime() < until)
            for (int i = 0; i < 10000; i++)
                x = x * 1.0000001 + 1e-9;
        return;
    }
    while (MPI_Wtime() < until) {
        double left = until - MPI_Wtime();
        struct timespec ts;

        if (left <= 0)
            break;
        ts.tv_sec = (time_t)left;
        ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
    }
}

/*
 * NAS BT's diagonal multi-partition over P = q*q ranks: the grid is cut into q x q x q cells;
 * rank (i, j) = (p / q, p % q) owns q cells, one in each z slab c, at
 * (x, y, z) = ((j + c) mod q, (i + c) mod q, c). In every z slab the q*q ranks own one cell
 * each, so every rank's data is fragmented in all three dimensions, as in BTIO.
 * Cell k along an edge of n points spans [k*n/q, (k+1)*n/q).
 */
struct bt_cell {
    int lo[3]; /* first point, x y z */
    int n[3];  /* points, x y z */
};

static inline int bt_side(int nprocs)
{
    int q = 1;

    while ((q + 1) * (q + 1) <= nprocs)
        q++;
    return q * q == nprocs ? q : -1;
}

static inline void bt_cell_of(int rank, int q, int c, int n, struct bt_cell *cell)
{
    int k[3] = { (rank % q + c) % q, (rank / q + c) % q, c };

    for (int d = 0; d < 3; d++) {
        cell->lo[d] = (int)((long long)k[d] * n / q);
        cell->n[d] = (int)((long long)(k[d] + 1) * n / q) - cell->lo[d];
    }
}

/* The value BT-like benchmarks store at component m of point (x, y, z) of time step t: exact in
 * a double, different for every element of the run, independent of the decomposition. */
static inline double bt_value(long long n, int t, int z, int y, int x, int m)
{
    return (double)((((long long)t * n + z) * n + y) * n + x) * 5.0 + m;
}

#endif
