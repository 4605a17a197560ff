/*
 * probe.c - a small latency-sensitive client of the parallel file system (issue 5; seed paper
 * 003, section V: "the tail latency other clients see").
 *
 * Every interval (default 100 ms, on an absolute schedule, so a slow operation does not shift
 * the following ones; ticks missed while an operation ran are counted, not made up) it writes
 * size bytes (default 4 KiB) at the next slot of a small ring in its file and fsyncs them, and
 * records the time of the pwrite+fsync pair. It runs until SIGINT/SIGTERM or --duration, then
 * prints one JSON object on one line: count, missed ticks, p50, p90, p99, max (seconds).
 * --series FILE writes every sample as "unix_time latency_s" lines (for the plot).
 * The file is created (truncated) and removed at the end unless --keep.
 *
 * No MPI. Exit status: 0 success, 1 I/O error (the message names the file), 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RING_SLOTS 16

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void) sig;
    stop = 1;
}

static double mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted values (n > 0). */
static double pct(const double *v, size_t n, double q)
{
    size_t i = (size_t) (q * (double) n + 0.999999999);

    if (i == 0)
        i = 1;
    return v[(i > n ? n : i) - 1];
}

/* The whole buffer at off, retrying short writes and EINTR. */
static int write_all(int fd, const char *buf, size_t len, off_t off)
{
    while (len > 0) {
        ssize_t w = pwrite(fd, buf, len, off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        buf += w, len -= (size_t) w, off += w;
    }
    return 0;
}

static void usage(const char *why)
{
    fprintf(stderr,
            "probe: %s\n"
            "usage: probe [--interval S] [--size BYTES] [--duration S] [--series FILE] [--keep]"
            " FILE\n",
            why);
    exit(2);
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"interval", required_argument, NULL, 'i'}, {"size", required_argument, NULL, 's'},
        {"duration", required_argument, NULL, 'd'}, {"series", required_argument, NULL, 'o'},
        {"keep", no_argument, NULL, 'k'},           {NULL, 0, NULL, 0},
    };
    double interval = 0.1, duration = 0, t_start, next;
    long size = 4096;
    const char *file, *series = NULL;
    int keep = 0, c, fd, rc = 0;
    char *buf, *end;
    double *lat = NULL, *when = NULL;
    size_t n = 0, cap = 0, missed = 0;
    struct sigaction sa;
    FILE *out;

    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'i':
            interval = strtod(optarg, &end);
            if (*end || !(interval > 0))
                usage("bad --interval (seconds > 0)");
            break;
        case 's':
            size = strtol(optarg, &end, 10);
            if (*end || size <= 0 || size > (64L << 20))
                usage("bad --size (1 to 64 MiB)");
            break;
        case 'd':
            duration = strtod(optarg, &end);
            if (*end || !(duration >= 0))
                usage("bad --duration (seconds >= 0; 0: until a signal)");
            break;
        case 'o':
            series = optarg;
            break;
        case 'k':
            keep = 1;
            break;
        default:
            usage("unknown option");
        }
    }
    if (optind != argc - 1)
        usage("one FILE expected");
    file = argv[optind];
    buf = malloc((size_t) size);
    if (buf == NULL)
        usage("out of memory");
    memset(buf, 0x5a, (size_t) size);
    fd = open(file, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "probe: cannot create %s: %s\n", file, strerror(errno));
        return 1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    t_start = mono();
    next = t_start;
    while (!stop && (duration == 0 || mono() - t_start < duration)) {
        double t1, t2;
        struct timespec ts;
        int err;

        t1 = mono();
        err = write_all(fd, buf, (size_t) size, (off_t) (n % RING_SLOTS) * size);
        if (err == 0 && fsync(fd) != 0)
            err = errno;
        t2 = mono();
        if (err) {
            fprintf(stderr, "probe: write+fsync of %s failed: %s\n", file, strerror(err));
            rc = 1;
            break;
        }
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 1024;
            double *a = realloc(lat, ncap * sizeof(*a)), *b;

            if (a == NULL) {
                rc = 1;
                break;
            }
            lat = a;
            b = realloc(when, ncap * sizeof(*b));
            if (b == NULL) {
                rc = 1;
                break;
            }
            when = b;
            cap = ncap;
        }
        lat[n] = t2 - t1;
        when[n] = wall() - (mono() - t1);
        n++;
        next += interval;
        while (next < t2)
            next += interval, missed++;
        ts.tv_sec = (time_t) next;
        ts.tv_nsec = (long) ((next - (double) ts.tv_sec) * 1e9);
        while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    close(fd);
    if (!keep)
        unlink(file);
    if (series != NULL && n > 0) {
        out = fopen(series, "w");
        if (out == NULL) {
            fprintf(stderr, "probe: cannot write %s: %s\n", series, strerror(errno));
            rc = 1;
        } else {
            for (size_t i = 0; i < n; i++)
                fprintf(out, "%.6f %.6f\n", when[i], lat[i]);
            fclose(out);
        }
    }
    if (n > 0)
        qsort(lat, n, sizeof(*lat), cmp_double);
    printf("{\"bench\":\"probe\",\"file\":\"%s\",\"interval_s\":%g,\"size\":%ld,\"count\":%zu,"
           "\"missed_ticks\":%zu",
           file, interval, size, n, missed);
    if (n > 0)
        printf(",\"p50_s\":%.6f,\"p90_s\":%.6f,\"p99_s\":%.6f,\"max_s\":%.6f", pct(lat, n, 0.5),
               pct(lat, n, 0.9), pct(lat, n, 0.99), lat[n - 1]);
    printf("}\n");
    free(lat);
    free(when);
    free(buf);
    return rc;
}
