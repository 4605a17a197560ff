/*
 * Interval index benchmark (DESIGN.md section 5): insert, append, overwrite, query and drain
 * rates and the memory cost per extent. Prints one JSON object; asserts nothing.
 *
 *   bench/bench_index [extents]      (default 2000000 for the random-insert and query parts)
 *
 * Each phase reports wall seconds and the CPU seconds of this thread, and rates per both; on a
 * shared machine the rates per CPU second ("per_cpu_second") are the steadier figure.
 *
 * Targets: random non-overlapping inserts >= 2 million/s; 1 million sequential adjacent appends
 * end as 1 extent; random overlapping inserts >= 1 million/s; <= 64 bytes per extent
 * (memory_per_extent, rss_per_extent), also after overlapping inserts and after the
 * split-then-remove pattern of phase (6), which makes leaves shrink and merge.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bblog_index.h"

#define KIB 1024ULL
#define MIB (1024ULL * KIB)

struct phase {
    double wall, cpu;           /* at start, then elapsed after phase_end() */
};

static double clock_seconds(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void phase_start(struct phase *p)
{
    p->wall = clock_seconds(CLOCK_MONOTONIC);
    p->cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}

static void phase_end(struct phase *p)
{
    p->wall = clock_seconds(CLOCK_MONOTONIC) - p->wall;
    p->cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - p->cpu;
}

/* "seconds", "cpu_seconds", "<unit>_per_second", "<unit>_per_cpu_second" for ops operations. */
static void print_rates(const struct phase *p, const char *unit, uint64_t ops)
{
    printf("\"seconds\": %.4f, \"cpu_seconds\": %.4f, \"%s_per_second\": %.0f, "
           "\"%s_per_cpu_second\": %.0f",
           p->wall, p->cpu, unit, (double)ops / p->wall, unit, (double)ops / p->cpu);
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Resident set size in bytes, from /proc/self/statm; 0 if unreadable. */
static uint64_t rss_bytes(void)
{
    unsigned long size, resident;
    FILE *f = fopen("/proc/self/statm", "r");
    int n;

    if (f == NULL)
        return 0;
    n = fscanf(f, "%lu %lu", &size, &resident);
    fclose(f);
    return n == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "bench_index: %s: %s\n", what, rc > 0 ? strerror(rc) : "bblog error");
    return 1;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
    const uint64_t n_seq = 1000000, n_ovl = 1000000, n_query = 1000000;
    const uint64_t ovl_range = 256 * MIB, ovl_max_len = 64 * KIB, query_len = 64 * KIB;
    struct bblog_index *idx = NULL;
    struct bblog_idx_iter it;
    struct bblog_extent e;
    const uint64_t n_adv = 500000;
    struct phase p_rand, p_seq, p_ovl, p_query, p_walk, p_drain, p_split, p_punch;
    uint64_t *perm, *args, i, rng = 42, rss0, rss1, visited = 0, sum = 0;
    size_t count_rand, mem_rand, count_seq, count_ovl, mem_ovl;
    size_t count_split, mem_split, count_punch, mem_punch, count_thin, mem_thin;
    int rc;

    if (n == 0)
        n = 1;
    perm = malloc((n > n_adv ? n : n_adv) * sizeof(*perm));
    args = malloc(3 * (n_ovl > n_query ? n_ovl : n_query) * sizeof(*args));
    if (perm == NULL || args == NULL)
        return fail("allocating the workload", ENOMEM);

    /*
     * (1) Random non-overlapping inserts: 4 KiB extents at distinct 8 KiB slots in shuffled
     * order, the log written in insertion order. The gaps keep every extent a node of its own.
     */
    for (i = 0; i < n; i++)
        perm[i] = i;
    for (i = n - 1; i > 0; i--) {
        uint64_t j = rng_next(&rng) % (i + 1), t = perm[i];

        perm[i] = perm[j];
        perm[j] = t;
    }
    rss0 = rss_bytes();
    if ((rc = bblog_idx_create(&idx)) != 0)
        return fail("bblog_idx_create", rc);
    phase_start(&p_rand);
    for (i = 0; i < n; i++)
        if ((rc = bblog_idx_insert(idx, perm[i] * 8 * KIB, 4 * KIB, i * 4 * KIB)) != 0)
            return fail("bblog_idx_insert", rc);
    phase_end(&p_rand);
    rss1 = rss_bytes();
    count_rand = bblog_idx_count(idx);
    mem_rand = bblog_idx_memory(idx);

    /* (5) Range queries of 64 KiB at random offsets over that index (8 or 9 extents each). */
    for (i = 0; i < n_query; i++)
        args[i] = rng_next(&rng) % (n * 8 * KIB);
    phase_start(&p_query);
    for (i = 0; i < n_query; i++) {
        bblog_idx_iter_init(idx, &it, args[i], query_len);
        while (bblog_idx_iter_next(&it, &e)) {
            visited++;
            sum += e.log_off;
        }
    }
    phase_end(&p_query);

    /* A full ordered walk (what a drain does), then a drain that removes in file order. */
    phase_start(&p_walk);
    bblog_idx_iter_init(idx, &it, 0, UINT64_MAX);
    while (bblog_idx_iter_next(&it, &e))
        sum += e.len;
    phase_end(&p_walk);
    phase_start(&p_drain);
    for (i = 0; i < n; i++)
        if ((rc = bblog_idx_remove(idx, i * 8 * KIB, 8 * KIB)) != 0)
            return fail("bblog_idx_remove", rc);
    phase_end(&p_drain);
    bblog_idx_destroy(idx);

    /* (3) Sequential appends of adjacent extents: one node in the end. */
    if ((rc = bblog_idx_create(&idx)) != 0)
        return fail("bblog_idx_create", rc);
    phase_start(&p_seq);
    for (i = 0; i < n_seq; i++)
        if ((rc = bblog_idx_insert(idx, i * 4 * KIB, 4 * KIB, i * 4 * KIB)) != 0)
            return fail("bblog_idx_insert", rc);
    phase_end(&p_seq);
    count_seq = bblog_idx_count(idx);
    bblog_idx_destroy(idx);

    /*
     * (4) Random overlapping inserts: offsets in a 256 MiB range, lengths 1 B..64 KiB, the log
     * appended in order; every byte is overwritten about 128 times over the run.
     */
    {
        uint64_t log = 0;

        for (i = 0; i < n_ovl; i++) {
            args[3 * i] = rng_next(&rng) % ovl_range;
            args[3 * i + 1] = 1 + rng_next(&rng) % ovl_max_len;
            args[3 * i + 2] = log;
            log += args[3 * i + 1];
        }
    }
    if ((rc = bblog_idx_create(&idx)) != 0)
        return fail("bblog_idx_create", rc);
    phase_start(&p_ovl);
    for (i = 0; i < n_ovl; i++)
        if ((rc = bblog_idx_insert(idx, args[3 * i], args[3 * i + 1], args[3 * i + 2])) != 0)
            return fail("bblog_idx_insert", rc);
    phase_end(&p_ovl);
    count_ovl = bblog_idx_count(idx);
    mem_ovl = bblog_idx_memory(idx);
    bblog_idx_destroy(idx);

    /*
     * (6) Split then remove: one extent of n_adv 16-byte slots, split by 4-byte writes into the
     * middle of every slot in shuffled order (2 n_adv + 1 extents), then those writes punched
     * out again in another order (n_adv + 1 extents [s * 16 + 8, s * 16 + 20), as the halves of
     * neighbouring slots join again: every leaf loses half its extents), then every other one
     * of those (about n_adv / 2 left). Memory per extent must stay bounded.
     */
    for (i = 0; i < n_adv; i++)
        perm[i] = i;
    for (i = n_adv - 1; i > 0; i--) {
        uint64_t j = rng_next(&rng) % (i + 1), t = perm[i];

        perm[i] = perm[j];
        perm[j] = t;
    }
    if ((rc = bblog_idx_create(&idx)) != 0)
        return fail("bblog_idx_create", rc);
    if ((rc = bblog_idx_insert(idx, 0, n_adv * 16, 0)) != 0)
        return fail("bblog_idx_insert", rc);
    phase_start(&p_split);
    for (i = 0; i < n_adv; i++)
        if ((rc = bblog_idx_insert(idx, perm[i] * 16 + 4, 4, (1ULL << 40) + i * 4)) != 0)
            return fail("bblog_idx_insert", rc);
    phase_end(&p_split);
    count_split = bblog_idx_count(idx);
    mem_split = bblog_idx_memory(idx);
    for (i = n_adv - 1; i > 0; i--) {
        uint64_t j = rng_next(&rng) % (i + 1), t = perm[i];

        perm[i] = perm[j];
        perm[j] = t;
    }
    phase_start(&p_punch);
    for (i = 0; i < n_adv; i++)
        if ((rc = bblog_idx_remove(idx, perm[i] * 16 + 4, 4)) != 0)
            return fail("bblog_idx_remove", rc);
    phase_end(&p_punch);
    count_punch = bblog_idx_count(idx);
    mem_punch = bblog_idx_memory(idx);
    for (i = 0; i < n_adv; i += 2)
        if ((rc = bblog_idx_remove(idx, perm[i] * 16 + 8, 12)) != 0)
            return fail("bblog_idx_remove", rc);
    count_thin = bblog_idx_count(idx);
    mem_thin = bblog_idx_memory(idx);
    bblog_idx_destroy(idx);

    printf("{\"random_insert\": {\"extents\": %" PRIu64 ", ", n);
    print_rates(&p_rand, "inserts", n);
    printf(", \"count\": %zu, \"memory_bytes\": %zu, \"memory_per_extent\": %.1f, "
           "\"rss_delta_bytes\": %" PRIu64 ", \"rss_per_extent\": %.1f},\n",
           count_rand, mem_rand, (double)mem_rand / (double)count_rand, rss1 - rss0,
           (double)(rss1 - rss0) / (double)count_rand);
    printf(" \"sequential_append\": {\"appends\": %" PRIu64 ", ", n_seq);
    print_rates(&p_seq, "appends", n_seq);
    printf(", \"count\": %zu},\n", count_seq);
    printf(" \"random_overlapping_insert\": {\"inserts\": %" PRIu64 ", \"range_bytes\": %" PRIu64
           ", \"max_len\": %" PRIu64 ", ", n_ovl, ovl_range, ovl_max_len);
    print_rates(&p_ovl, "inserts", n_ovl);
    printf(", \"count\": %zu, \"memory_bytes\": %zu, \"memory_per_extent\": %.1f},\n", count_ovl,
           mem_ovl, (double)mem_ovl / (double)count_ovl);
    printf(" \"range_query\": {\"queries\": %" PRIu64 ", \"len\": %" PRIu64 ", ", n_query,
           query_len);
    print_rates(&p_query, "queries", n_query);
    printf(", \"extents_per_query\": %.2f},\n", (double)visited / (double)n_query);
    printf(" \"full_walk\": {\"extents\": %zu, ", count_rand);
    print_rates(&p_walk, "extents", count_rand);
    printf("},\n \"drain_remove_in_order\": {\"removes\": %" PRIu64 ", ", n);
    print_rates(&p_drain, "removes", n);
    printf("},\n \"split_insert\": {\"inserts\": %" PRIu64 ", ", n_adv);
    print_rates(&p_split, "inserts", n_adv);
    printf(", \"count\": %zu, \"memory_per_extent\": %.1f},\n", count_split,
           (double)mem_split / (double)count_split);
    printf(" \"split_then_remove\": {\"removes\": %" PRIu64 ", ", n_adv);
    print_rates(&p_punch, "removes", n_adv);
    printf(", \"count\": %zu, \"memory_per_extent\": %.1f, \"count_after_half_more\": %zu, "
           "\"memory_per_extent_after_half_more\": %.1f},\n", count_punch,
           (double)mem_punch / (double)count_punch, count_thin,
           (double)mem_thin / (double)count_thin);
    printf(" \"checksum\": %" PRIu64 "}\n", sum);
    free(args);
    free(perm);
    return 0;
}
