/*
 * Log append benchmark: what bblog_log_append costs per byte for one transfer size, the write
 * phase of a process logging its output. Appends TOTAL bytes in pieces of BYTES, then one
 * bblog_log_flush (every byte written to the data log file, no fsync), best of REPS fresh logs.
 * Prints one JSON object; asserts nothing.
 *
 *   bench/bench_append DIR [BYTES [TOTAL [REPS [STRAIGHT_MIN]]]]
 *
 * Defaults 65536 bytes, 64 MiB, 5 runs, the log's own straight_min (bblog_log.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bblog_log.h"

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Appends total bytes in len-byte pieces into a new log in dir; *t gets the seconds taken. */
static int one_run(const char *dir, const char *buf, long len, long total, long straight_min,
                   double *t, struct bblog_log_stats *st)
{
    struct bblog_log_params p = {
        .dir = dir, .name = "bench_append", .pfs_path = "/pfs/bench", .job_id = "bench",
        .nprocs = 1, .straight_min = (size_t) straight_min,
    };
    struct bblog_log *log = NULL;
    double t0;
    int rc = bblog_log_create(&p, &log);

    if (rc != 0)
        return rc;
    t0 = now();
    for (long off = 0; off + len <= total && rc == 0; off += len)
        rc = bblog_log_append(log, (uint64_t) off, (uint64_t) len, buf, NULL);
    if (rc == 0)
        rc = bblog_log_flush(log);
    *t = now() - t0;
    bblog_log_get_stats(log, st);
    bblog_log_close(log, 1);
    return rc;
}

int main(int argc, char **argv)
{
    long len = argc > 2 ? atol(argv[2]) : 65536;
    long total = argc > 3 ? atol(argv[3]) : 64L << 20;
    int reps = argc > 4 ? atoi(argv[4]) : 5;
    long straight_min = argc > 5 ? atol(argv[5]) : 0;
    struct bblog_log_stats st;
    double best = 0;
    char *buf;
    int rc = 0;

    if (argc < 2 || len <= 0 || total < len || reps <= 0 || straight_min < 0) {
        fprintf(stderr, "usage: bench_append DIR [BYTES [TOTAL [REPS [STRAIGHT_MIN]]]]\n");
        return 2;
    }
    buf = malloc((size_t) len);
    if (!buf)
        return 1;
    memset(buf, 0x5a, (size_t) len);
    for (int i = 0; i < reps && rc == 0; i++) {
        double t = 0;

        rc = one_run(argv[1], buf, len, total, straight_min, &t, &st);
        if (rc == 0 && (i == 0 || t < best))
            best = t;
    }
    free(buf);
    if (rc != 0) {
        fprintf(stderr, "bench_append: %s: %s\n", argv[1], bblog_strerror(rc));
        return 1;
    }
    printf("{\"bytes\": %ld, \"total\": %ld, \"reps\": %d, \"seconds\": %.6f, \"GBps\": %.3f, "
           "\"aio_submits\": %llu, \"sync_writes\": %llu, \"straight_writes\": %llu, "
           "\"direct\": %d}\n",
           len, total, reps, best, (double) total / best / 1e9,
           (unsigned long long) st.aio_submits, (unsigned long long) st.sync_writes,
           (unsigned long long) st.straight_writes, st.direct);
    return 0;
}
