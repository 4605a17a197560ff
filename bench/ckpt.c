/*
 * ckpt.c - a periodic-checkpoint MPI-IO workload (issue 5; seed paper 003, section II: an
 * application that computes, then dumps, again and again).
 *
 * N times: a compute phase of T seconds (sleep, or a busy loop with --busy), then a write burst
 * of S bytes per rank made of small strided collective writes: with P ranks and transfer t,
 * transfer i of rank r in checkpoint k lands at k*P*S + (i*P + r)*t, one MPI_File_write_at_all
 * per transfer (IOR's strided pattern, bench/ior.c), so each checkpoint fills its own P*S
 * region of one shared file. With -a segmented (IOR's default layout) rank r's transfers are
 * contiguous instead: transfer i at k*P*S + r*S + i*t. After each burst MPI_File_sync (unless --no-sync): the explicit
 * end of an I/O phase. The file is opened once, before the first compute phase, and closed
 * after the last burst; hints come from -H key=value.
 *
 * The byte at file offset o is byte (o mod 8) of a 64-bit hash of o / 8: --verify re-opens the
 * file after close and checks every byte (each rank reads a contiguous 1/P of the file).
 *
 * Times: t0 is taken after a barrier right after open; each rank's phase boundaries are
 * MPI_Wtime() - t0 (one node: one clock), reduced with MPI_MAX for the ends and MPI_MIN for
 * the starts. t0_unix is CLOCK_REALTIME at t0 on rank 0, to line the run up with the PFS
 * sampler and the probe client. Rank 0 prints one JSON object on one line.
 *
 * Exit status: 0 success, 1 MPI-IO error, 2 usage error, 3 verification found errors.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "mpibench.h"

#define EXIT_MPI_ERROR 1
#define EXIT_USAGE     2
#define EXIT_VERIFY    3

struct opts {
    double compute_s;
    MPI_Offset size;     /* bytes per rank per checkpoint */
    MPI_Offset transfer; /* bytes per write call */
    int count;
    int busy;
    int sync;
    int verify;
    int keep;
    int segmented;
    const char *file;
    int nhints;
    char **hints;
};

struct ckpt_times {
    double compute_start, write_start, write_end, sync_end;
};

static int rank, nprocs;

static void usage_exit(const char *why)
{
    if (rank == 0)
        fprintf(stderr,
                "ckpt: %s\n"
                "usage: ckpt [-T seconds] [-S size] [-t transfer] [-N count] [-a strided|segmented]\n"
                "            [--busy] [--no-sync] [--verify] [--keep] [-H key=value]... FILE\n"
                "  sizes take k, m, g suffixes (powers of 1024); S must be a multiple of t\n",
                why);
    MPI_Finalize();
    exit(EXIT_USAGE);
}

/* A size with a k/m/g suffix (mpibench.h), at most 1 TiB; exits with usage on anything else. */
static MPI_Offset parse_size(const char *s, const char *what)
{
    static char msg[128];
    long long v;

    if (bench_parse_size(s, &v) != 0 || v > (1LL << 40)) {
        snprintf(msg, sizeof(msg), "bad %s '%s'", what, s);
        usage_exit(msg);
    }
    return (MPI_Offset) v;
}

static void parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        {"busy", no_argument, NULL, 'b'},   {"no-sync", no_argument, NULL, 'n'},
        {"verify", no_argument, NULL, 'v'}, {"keep", no_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},   {NULL, 0, NULL, 0},
    };
    int c;
    char *end;

    memset(o, 0, sizeof(*o));
    o->compute_s = 5;
    o->size = 16 << 20;
    o->transfer = 4096;
    o->count = 4;
    o->sync = 1;
    o->hints = calloc((size_t) argc, sizeof(char *));
    while ((c = getopt_long(argc, argv, "T:S:t:N:H:a:h", lo, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (strcmp(optarg, "segmented") == 0)
                o->segmented = 1;
            else if (strcmp(optarg, "strided") != 0)
                usage_exit("bad -a (strided or segmented)");
            break;
        case 'T':
            o->compute_s = strtod(optarg, &end);
            if (*end != '\0' || end == optarg || !(o->compute_s >= 0))
                usage_exit("bad -T (seconds >= 0)");
            break;
        case 'S':
            o->size = parse_size(optarg, "-S");
            break;
        case 't':
            o->transfer = parse_size(optarg, "-t");
            break;
        case 'N':
            o->count = atoi(optarg);
            if (o->count <= 0)
                usage_exit("bad -N (count > 0)");
            break;
        case 'H':
            if (strchr(optarg, '=') == NULL || optarg[0] == '=')
                usage_exit("bad -H (key=value)");
            o->hints[o->nhints++] = optarg;
            break;
        case 'b':
            o->busy = 1;
            break;
        case 'n':
            o->sync = 0;
            break;
        case 'v':
            o->verify = 1;
            break;
        case 'k':
            o->keep = 1;
            break;
        default:
            usage_exit("see usage");
        }
    }
    if (optind != argc - 1)
        usage_exit("one FILE expected");
    o->file = argv[optind];
    if (o->size % o->transfer != 0)
        usage_exit("-S is not a multiple of -t");
    if (o->transfer > INT32_MAX)
        usage_exit("-t too large");
}

/* File offset of this rank's transfer i in the checkpoint that starts at base. */
static MPI_Offset where(const struct opts *o, MPI_Offset base, MPI_Offset i)
{
    if (o->segmented)
        return base + rank * o->size + i * o->transfer;
    return base + (i * nprocs + rank) * o->transfer;
}

static uint64_t hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static void fill(unsigned char *buf, MPI_Offset off, MPI_Offset len)
{
    for (MPI_Offset i = 0; i < len; i++) {
        uint64_t o = (uint64_t) (off + i);
        buf[i] = (unsigned char) (hash64(o >> 3) >> (8 * (o & 7)));
    }
}

static int check_mpi(int err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;

    if (err == MPI_SUCCESS)
        return 0;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "ckpt: rank %d: %s: %s\n", rank, what, msg);
    return 1;
}

/* Each rank reads a contiguous 1/P of the file and checks it. Returns the bad bytes found. */
static long long verify(const struct opts *o, MPI_Info info, int *mpierr)
{
    MPI_File fh;
    MPI_Offset total = (MPI_Offset) nprocs * o->size * o->count, chunk = 4 << 20;
    MPI_Offset lo = total / nprocs * rank;
    MPI_Offset hi = rank == nprocs - 1 ? total : total / nprocs * (rank + 1);
    unsigned char *got = malloc((size_t) chunk), *want = malloc((size_t) chunk);
    long long bad = 0;

    *mpierr = 0;
    if (check_mpi(MPI_File_open(MPI_COMM_WORLD, o->file, MPI_MODE_RDONLY, info, &fh),
                  "open for --verify")) {
        *mpierr = 1;
        goto out;
    }
    for (MPI_Offset off = lo; off < hi; off += chunk) {
        MPI_Offset len = hi - off < chunk ? hi - off : chunk;

        if (check_mpi(MPI_File_read_at(fh, off, got, (int) len, MPI_BYTE, MPI_STATUS_IGNORE),
                      "read for --verify")) {
            *mpierr = 1;
            break;
        }
        fill(want, off, len);
        for (MPI_Offset i = 0; i < len; i++)
            bad += got[i] != want[i];
    }
    if (check_mpi(MPI_File_close(&fh), "close after --verify"))
        *mpierr = 1;
out:
    free(got);
    free(want);
    return bad;
}

int main(int argc, char **argv)
{
    struct opts o;
    MPI_Info info;
    MPI_File fh;
    struct ckpt_times *tm, *tmin, *tmax;
    unsigned char *buf;
    double t0, t_open0, t_open, t_close, t_end, t_writes = 0, t_visible = 0;
    struct timespec now;
    int err = 0, gerr, vmpierr = 0;
    long long bad = 0, gbad = 0;
    MPI_Offset per = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    parse(argc, argv, &o);
    per = o.size / o.transfer;
    MPI_Info_create(&info);
    for (int i = 0; i < o.nhints; i++) {
        char *kv = strdup(o.hints[i]), *eq = strchr(kv, '=');

        *eq = '\0';
        MPI_Info_set(info, kv, eq + 1);
        free(kv);
    }
    tm = calloc((size_t) o.count, sizeof(*tm));
    tmin = calloc((size_t) o.count, sizeof(*tm));
    tmax = calloc((size_t) o.count, sizeof(*tm));
    buf = malloc((size_t) o.size);
    if (tm == NULL || tmin == NULL || tmax == NULL || buf == NULL) {
        fprintf(stderr, "ckpt: rank %d: out of memory for %lld bytes per rank\n", rank,
                (long long) o.size);
        MPI_Abort(MPI_COMM_WORLD, EXIT_MPI_ERROR);
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    MPI_Barrier(MPI_COMM_WORLD);
    t_open0 = MPI_Wtime();
    err = check_mpi(MPI_File_open(MPI_COMM_WORLD, o.file, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                  info, &fh),
                    o.file);
    MPI_Allreduce(&err, &gerr, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (gerr) {
        MPI_Finalize();
        return EXIT_MPI_ERROR;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    t_open = t0 - t_open0;
    clock_gettime(CLOCK_REALTIME, &now);

    for (int k = 0; k < o.count && !err; k++) {
        MPI_Offset base = (MPI_Offset) k * nprocs * o.size;

        tm[k].compute_start = MPI_Wtime() - t0;
        bench_compute(o.compute_s, o.busy);
        /* The data is computed in the compute phase: the burst times MPI calls only. */
        for (MPI_Offset i = 0; i < per; i++)
            fill(buf + i * o.transfer, where(&o, base, i), o.transfer);
        tm[k].write_start = MPI_Wtime() - t0;
        for (MPI_Offset i = 0; i < per && !err; i++)
            err = check_mpi(MPI_File_write_at_all(fh, where(&o, base, i),
                                                  buf + i * o.transfer, (int) o.transfer,
                                                  MPI_BYTE, MPI_STATUS_IGNORE),
                            "write_at_all");
        tm[k].write_end = MPI_Wtime() - t0;
        if (o.sync && !err)
            err = check_mpi(MPI_File_sync(fh), "sync");
        tm[k].sync_end = MPI_Wtime() - t0;
    }
    MPI_Allreduce(&err, &gerr, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    t_close = MPI_Wtime();
    err = check_mpi(MPI_File_close(&fh), "close") || gerr;
    t_close = MPI_Wtime() - t_close;
    MPI_Barrier(MPI_COMM_WORLD);
    t_end = MPI_Wtime() - t0;
    MPI_Reduce(tm, tmin, 4 * o.count, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(tm, tmax, 4 * o.count, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    {
        /* Per rank, then the maximum: the write calls' time, and the visible I/O time (open to
         * close minus this rank's compute phases, data generation included). */
        double local[4] = {t_open, t_close, 0, t_open + t_end}, g[4];

        for (int k = 0; k < o.count; k++) {
            local[2] += tm[k].write_end - tm[k].write_start;
            local[3] -= tm[k].write_start - tm[k].compute_start;
        }
        MPI_Reduce(local, g, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        t_open = g[0], t_close = g[1], t_writes = g[2], t_visible = g[3];
    }
    MPI_Allreduce(&err, &gerr, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!gerr && o.verify) {
        bad = verify(&o, info, &vmpierr);
        MPI_Allreduce(&bad, &gbad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &vmpierr, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        printf("{\"bench\":\"ckpt\",\"file\":\"%s\",\"nprocs\":%d,\"compute_s\":%g,"
               "\"busy\":%s,\"layout\":\"%s\",\"bytes_per_rank\":%lld,\"transfer\":%lld,\"count\":%d,"
               "\"sync\":%s,\"t0_unix\":%.6f,\"open_s\":%.6f,\"close_s\":%.6f,"
               "\"total_s\":%.6f,\"writes_s\":%.6f,\"visible_s\":%.6f,\"ckpts\":[",
               o.file, nprocs, o.compute_s, o.busy ? "true" : "false",
               o.segmented ? "segmented" : "strided", (long long) o.size,
               (long long) o.transfer, o.count, o.sync ? "true" : "false",
               (double) now.tv_sec + now.tv_nsec * 1e-9, t_open, t_close, t_end, t_writes,
               t_visible);
        for (int k = 0; k < o.count; k++)
            printf("%s{\"k\":%d,\"compute_start\":%.6f,\"write_start\":%.6f,"
                   "\"write_end\":%.6f,\"sync_end\":%.6f,\"write_s\":%.6f,\"sync_s\":%.6f}",
                   k ? "," : "", k, tmin[k].compute_start, tmin[k].write_start,
                   tmax[k].write_end, tmax[k].sync_end, tmax[k].write_end - tmin[k].write_start,
                   tmax[k].sync_end - tmax[k].write_end);
        printf("],\"ok\":%s", gerr ? "false" : "true");
        if (o.verify)
            printf(",\"verify\":{\"bad_bytes\":%lld,\"mpi_error\":%s}", gbad,
                   vmpierr ? "true" : "false");
        printf("}\n");
        fflush(stdout);
    }
    if (!gerr && !o.keep && rank == 0)
        MPI_File_delete(o.file, info);
    MPI_Info_free(&info);
    free(tm);
    free(tmin);
    free(tmax);
    free(buf);
    free(o.hints);
    MPI_Finalize();
    if (gerr || vmpierr)
        return EXIT_MPI_ERROR;
    return gbad ? EXIT_VERIFY : 0;
}
