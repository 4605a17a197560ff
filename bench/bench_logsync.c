/*
 * Log sync benchmark: what one bblog_log_sync costs after a small append, the price of
 * MPI_File_sync with bblog_sync=bb and of a close that keeps the log. Each sync makes the
 * payload durable, then the record, then the header's sync slot (logfs/log.c), three
 * fdatasync calls on a real device. Prints one JSON object; asserts nothing.
 *
 *   bench/bench_logsync DIR [N [BYTES]]    N appends of BYTES (default 1000 of 4096), each
 *                                          followed by a sync, in a log in DIR
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

int main(int argc, char **argv)
{
    struct bblog_log_params p = {
        .name = "bench_logsync", .pfs_path = "/pfs/bench", .job_id = "bench", .nprocs = 1,
    };
    struct bblog_log *log = NULL;
    long n = argc > 2 ? atol(argv[2]) : 1000, len = argc > 3 ? atol(argv[3]) : 4096;
    char *buf;
    double t0, t;
    int rc;

    if (argc < 2 || n <= 0 || len <= 0) {
        fprintf(stderr, "usage: bench_logsync DIR [N [BYTES]]\n");
        return 2;
    }
    p.dir = argv[1];
    buf = malloc((size_t) len);
    if (!buf)
        return 1;
    memset(buf, 0x5a, (size_t) len);
    rc = bblog_log_create(&p, &log);
    if (rc != 0) {
        fprintf(stderr, "bench_logsync: %s: %s\n", argv[1], bblog_strerror(rc));
        return 1;
    }
    t0 = now();
    for (long i = 0; i < n && rc == 0; i++) {
        rc = bblog_log_append(log, (uint64_t) (i * len), (uint64_t) len, buf, NULL);
        if (rc == 0)
            rc = bblog_log_sync(log);
    }
    t = now() - t0;
    if (rc != 0)
        fprintf(stderr, "bench_logsync: %s\n", bblog_strerror(rc));
    bblog_log_close(log, 1);
    free(buf);
    if (rc != 0)
        return 1;
    printf("{\"dir\": \"%s\", \"syncs\": %ld, \"bytes\": %ld, \"us_per_append_sync\": %.1f}\n",
           argv[1], n, len, t / (double) n * 1e6);
    return 0;
}
