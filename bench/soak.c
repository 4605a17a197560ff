/*
 * soak.c - the soak benchmark of issue 8 ("Sanitizers and load"): many files open at once,
 * about a million small writes, repeated open/close cycles, and the memory and file
 * descriptors of every rank measured at the start, after the first cycle and at the end.
 *
 * Workload. --files files bblog:DIR/soak-NNN.dat are opened together on MPI_COMM_WORLD, then
 * written, then closed, --cycles times (the files are created in the first cycle and re-opened
 * without truncation after it). Each file is --slots slots of --max-len bytes. A cycle has
 * --phases phases separated by MPI_File_sync on every file (periodic sync); in phase p of cycle
 * c, slot s belongs to rank (s + c * phases + p) mod P, so the slots of one rank are strided
 * through the file, interleaved with the other ranks', and every slot changes hands from one
 * phase to the next (cross-rank overwrites, ordered by the sync between them). In a phase each
 * rank makes --per-phase writes to every file, the files interleaved (write k goes to file 0,
 * 1, ..., F-1 before write k+1 does): write k of rank r picks one of r's slots and a length
 * 64 << u (u uniform in 0..6, capped at --max-len; at least --min-len) at the start of the
 * slot, so a rank rewrites its own slots several times per phase with different lengths (same
 * rank overwrites). Every --coll-every-th write (same k on all ranks) is MPI_File_write_at_all,
 * the others MPI_File_write_at. The writes' slot, length and bytes come from a hash of (file,
 * cycle, phase, rank, k): every rank can recompute everyone's writes.
 *
 * Check. After the last cycle rank r re-reads (pread on the PFS path) the files f with
 * f mod P == r and compares them with the result of applying every write in order (cycle,
 * phase, rank, k: writes of different ranks never overlap inside a phase). Any differing byte
 * is a failure.
 *
 * Measures, per rank: VmRSS (and its RssAnon, RssFile, RssShmem parts) and VmHWM
 * (/proc/self/status), the number of open descriptors
 * (/proc/self/fd) and glibc's mallinfo2() totals over all arenas (uordblks: bytes allocated and
 * not yet freed, "malloc_used"; arena + hblkhd: bytes malloc holds from the kernel, "malloc_held";
 * -1 without glibc 2.33) after MPI_Init ("start"), after the first cycle's close ("cycle1"),
 * with all files open in the last cycle ("open"), after every cycle's close ("cycle_end") and
 * after the last close ("end"); and the entries left in the log directory (bblog_dir/bblog-UID)
 * at the end. malloc_used growing across cycles is memory the program still holds (a leak, even
 * one still reachable); VmRSS growing while malloc_used stays flat is memory freed to malloc
 * and kept by it (fragmentation, retention). Rank 0 prints one JSON object on
 * stdout: parameters, times, and one entry per rank. bench/run-soak.sh decides pass or fail
 * from it (memory growth bound, descriptor leak); the program itself fails only on wrong file
 * contents, logs left behind or an MPI-IO error.
 *
 * --plain runs the same workload on ufs: names (plain ROMIO, no logs) for reference times.
 *
 * Exit status: 0 success, 1 MPI-IO or system error, 2 usage error, 3 wrong file contents,
 * 4 logs left in the log directory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "mpibench.h"

#define EXIT_MPI_ERROR 1
#define EXIT_USAGE     2
#define EXIT_VERIFY    3
#define EXIT_LOGS_LEFT 4

enum { AT_START, AT_CYCLE1, AT_OPEN, AT_END, NPOINTS };
static const char *const point_names[NPOINTS] = { "start", "cycle1", "open", "end" };

struct opts {
    int files, cycles, phases, per_phase, slots, coll_every;
    int min_len, max_len;
    long long target_writes; /* --writes: total over all ranks; sets per_phase when given */
    const char *pfs_dir;
    const char *bb_dir;      /* NULL: the driver's default (BBLOG_DIR, ...) */
    unsigned seed;
    int plain;               /* --plain: ufs: names, plain ROMIO (reference; no log checks) */
    int nhints;
    char **hints;
};

struct sample {
    long long rss_kib, hwm_kib, fds;
    long long anon_kib, file_kib, shmem_kib; /* VmRSS = RssAnon + RssFile + RssShmem */
    long long used_kib; /* mallinfo2 uordblks: bytes the program has allocated and not freed */
    long long held_kib; /* mallinfo2 arena + hblkhd: bytes malloc holds from the kernel */
};
#define SAMPLE_FIELDS 8

static int rank, nprocs;

static void usage_exit(const char *why)
{
    if (rank == 0)
        fprintf(stderr,
                "soak: %s\n"
                "usage: soak --pfs-dir DIR [--bb-dir DIR] [--files N] [--cycles N] [--phases N]\n"
                "            [--writes N | --per-phase N] [--slots N] [--min-len B]\n"
                "            [--max-len B] [--coll-every N] [--seed N] [--plain]\n"
                "            [-H key=value]...\n",
                why);
    MPI_Finalize();
    exit(EXIT_USAGE);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    long long v;

    if (bench_parse_size(s, &v) != 0 || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        { "files", required_argument, NULL, 'f' },
        { "cycles", required_argument, NULL, 'c' },
        { "phases", required_argument, NULL, 'p' },
        { "per-phase", required_argument, NULL, 'k' },
        { "writes", required_argument, NULL, 'w' },
        { "slots", required_argument, NULL, 's' },
        { "min-len", required_argument, NULL, 'm' },
        { "max-len", required_argument, NULL, 'M' },
        { "coll-every", required_argument, NULL, 'C' },
        { "pfs-dir", required_argument, NULL, 'd' },
        { "bb-dir", required_argument, NULL, 'b' },
        { "seed", required_argument, NULL, 'S' },
        { "hint", required_argument, NULL, 'H' },
        { "plain", no_argument, NULL, 'P' },
        { NULL, 0, NULL, 0 },
    };
    int ch, per_phase_set = 0, seed;
    char msg[256];

    memset(o, 0, sizeof(*o));
    o->files = 64;
    o->cycles = 8;
    o->phases = 4;
    o->per_phase = 61;
    o->slots = 256;
    o->coll_every = 4;
    o->min_len = 64;
    o->max_len = 4096;
    o->seed = 1;
    o->hints = calloc((size_t)argc, sizeof(char *));
    while ((ch = getopt_long(argc, argv, "H:", longopts, NULL)) != -1) {
        const char *a = optarg;
        int bad = 0;

        switch (ch) {
        case 'f':
            bad = parse_int(a, 1, 4096, &o->files);
            break;
        case 'c':
            bad = parse_int(a, 1, 1 << 20, &o->cycles);
            break;
        case 'p':
            bad = parse_int(a, 1, 1 << 20, &o->phases);
            break;
        case 'k':
            bad = parse_int(a, 1, 1 << 30, &o->per_phase);
            per_phase_set = 1;
            break;
        case 'w':
            bad = bench_parse_size(a, &o->target_writes);
            break;
        case 's':
            bad = parse_int(a, 1, 1 << 24, &o->slots);
            break;
        case 'm':
            bad = parse_int(a, 1, 1 << 24, &o->min_len);
            break;
        case 'M':
            bad = parse_int(a, 1, 1 << 24, &o->max_len);
            break;
        case 'C':
            bad = parse_int(a, 1, 1 << 30, &o->coll_every);
            break;
        case 'd':
            o->pfs_dir = a;
            break;
        case 'b':
            o->bb_dir = a;
            break;
        case 'S':
            bad = parse_int(a, 0, 1 << 30, &seed);
            o->seed = (unsigned)seed;
            break;
        case 'P':
            o->plain = 1;
            break;
        case 'H':
            if (strchr(a, '=') == NULL || a[0] == '=')
                bad = 1;
            o->hints[o->nhints++] = optarg;
            break;
        default:
            usage_exit("unknown option");
        }
        if (bad) {
            snprintf(msg, sizeof(msg), "bad value '%s' for --%s", a,
                     ch == 'H' ? "hint (expected key=value)" : "option");
            usage_exit(msg);
        }
    }
    if (optind != argc)
        usage_exit("unexpected argument");
    if (o->pfs_dir == NULL)
        usage_exit("--pfs-dir is required");
    if (o->min_len > o->max_len)
        usage_exit("--min-len is larger than --max-len");
    if (o->slots % nprocs != 0) {
        snprintf(msg, sizeof(msg), "--slots %d is not a multiple of the %d ranks", o->slots,
                 nprocs);
        usage_exit(msg);
    }
    if (o->target_writes > 0 && per_phase_set)
        usage_exit("give --writes or --per-phase, not both");
    if (o->target_writes > 0) {
        long long per = (long long)o->files * o->cycles * o->phases * nprocs;
        long long k = (o->target_writes + per - 1) / per;

        if (k > (1 << 30))
            usage_exit("--writes too large for the other parameters");
        o->per_phase = (int)k;
    }
}

/* splitmix64: the schedule's hash. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Write k of rank r to file f in phase p of cycle c: which slot, how long, which bytes. */
struct wr {
    long long off;
    int len;
    uint64_t tag;
};

static void schedule(const struct opts *o, int f, int c, int p, int r, int k, struct wr *w)
{
    uint64_t h = mix64(((((((uint64_t)o->seed * 4099 + (uint64_t)f) * 1048583 + (uint64_t)c) *
                            1048583 + (uint64_t)p) * 4099 + (uint64_t)r) << 20) ^ (uint64_t)k);
    int per_rank = o->slots / nprocs;
    /* Rank r owns slots s with (s + c * phases + p) mod P == r: s = j*P + (r - shift) mod P. */
    int shift = (int)(((long long)c * o->phases + p) % nprocs);
    int first = ((r - shift) % nprocs + nprocs) % nprocs;
    long long slot = (long long)(h % (uint64_t)per_rank) * nprocs + first;
    int len = 64 << (int)((h >> 32) % 7);

    if (len > o->max_len)
        len = o->max_len;
    if (len < o->min_len)
        len = o->min_len;
    w->off = slot * o->max_len;
    w->len = len;
    w->tag = mix64(h);
}

static void fill(unsigned char *buf, const struct wr *w)
{
    for (int j = 0; j < w->len; j++)
        buf[j] = (unsigned char)((w->tag >> ((j & 7) * 8)) + (unsigned)(j >> 3) * 29u);
}

static void take_sample(struct sample *s)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    DIR *d;
    struct dirent *e;

    s->rss_kib = s->hwm_kib = s->fds = s->used_kib = s->held_kib = -1;
    s->anon_kib = s->file_kib = s->shmem_kib = -1;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    {
        /* Summed over every arena (the driver's threads have their own). */
        struct mallinfo2 mi = mallinfo2();

        s->used_kib = (long long)(mi.uordblks / 1024);
        s->held_kib = (long long)((mi.arena + mi.hblkhd) / 1024);
    }
#endif
    if (f != NULL) {
        while (fgets(line, sizeof(line), f) != NULL) {
            if (strncmp(line, "VmRSS:", 6) == 0)
                s->rss_kib = strtoll(line + 6, NULL, 10);
            else if (strncmp(line, "VmHWM:", 6) == 0)
                s->hwm_kib = strtoll(line + 6, NULL, 10);
            else if (strncmp(line, "RssAnon:", 8) == 0)
                s->anon_kib = strtoll(line + 8, NULL, 10);
            else if (strncmp(line, "RssFile:", 8) == 0)
                s->file_kib = strtoll(line + 8, NULL, 10);
            else if (strncmp(line, "RssShmem:", 9) == 0)
                s->shmem_kib = strtoll(line + 9, NULL, 10);
        }
        fclose(f);
    }
    d = opendir("/proc/self/fd");
    if (d != NULL) {
        long long n = 0;

        while ((e = readdir(d)) != NULL)
            if (e->d_name[0] != '.')
                n++;
        closedir(d);
        s->fds = n - 1; /* the directory stream's own descriptor */
    }
}

/* Entries in DIR/bblog-UID (0 when it does not exist); -1 when it cannot be read. */
static long long logdir_entries(const char *bbdir, char *path, size_t n)
{
    DIR *d;
    struct dirent *e;
    long long count = 0;

    snprintf(path, n, "%s/bblog-%u", bbdir, (unsigned)getuid());
    d = opendir(path);
    if (d == NULL)
        return errno == ENOENT ? 0 : -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            count++;
    closedir(d);
    return count;
}

static void check_mpi(int err, const char *what, const char *path)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;

    if (err == MPI_SUCCESS)
        return;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "soak: rank %d: %s %s: %s\n", rank, what, path, msg);
    MPI_Abort(MPI_COMM_WORLD, EXIT_MPI_ERROR);
}

/* Recomputes file f from the schedule and compares it with the PFS file. Returns the number of
 * differing bytes (reports the first), or -1 when the file cannot be read. */
static long long verify_file(const struct opts *o, int f, const char *path)
{
    long long size = (long long)o->slots * o->max_len, bad = 0, first = -1;
    unsigned char *want = calloc(1, (size_t)size), *have = malloc((size_t)size);
    struct stat sb;
    struct wr w;
    int fd = -1;
    long long got = 0;

    if (want == NULL || have == NULL) {
        fprintf(stderr, "soak: rank %d: out of memory checking %s\n", rank, path);
        bad = -1;
        goto out;
    }
    for (int c = 0; c < o->cycles; c++)
        for (int p = 0; p < o->phases; p++)
            for (int r = 0; r < nprocs; r++)
                for (int k = 0; k < o->per_phase; k++) {
                    schedule(o, f, c, p, r, k, &w);
                    fill(want + w.off, &w);
                }
    fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &sb) != 0) {
        fprintf(stderr, "soak: rank %d: cannot read %s: %s\n", rank, path, strerror(errno));
        bad = -1;
        goto out;
    }
    while (got < size) {
        ssize_t n = pread(fd, have + got, (size_t)(size - got), got);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += n;
    }
    /* Bytes past the end of the file read as the zeros no write put there. */
    if (got < size)
        memset(have + got, 0, (size_t)(size - got));
    for (long long i = 0; i < size; i++) {
        if (have[i] != want[i]) {
            if (first < 0)
                first = i;
            bad++;
        }
    }
    if (bad > 0)
        fprintf(stderr, "soak: rank %d: %s: %lld bytes differ, first at offset %lld (%u, "
                "expected %u); file size %lld\n", rank, path, bad, first, have[first],
                want[first], (long long)sb.st_size);
out:
    if (fd >= 0)
        close(fd);
    free(want);
    free(have);
    return bad;
}

static void print_sample(const struct sample *s)
{
    printf("{\"rss_kib\":%lld,\"hwm_kib\":%lld,\"fds\":%lld,\"rss_anon_kib\":%lld,"
           "\"rss_file_kib\":%lld,\"rss_shmem_kib\":%lld,\"malloc_used_kib\":%lld,"
           "\"malloc_held_kib\":%lld}", s->rss_kib, s->hwm_kib, s->fds, s->anon_kib,
           s->file_kib, s->shmem_kib, s->used_kib, s->held_kib);
}

static void pack_sample(long long *v, const struct sample *s)
{
    v[0] = s->rss_kib;
    v[1] = s->hwm_kib;
    v[2] = s->fds;
    v[3] = s->used_kib;
    v[4] = s->held_kib;
    v[5] = s->anon_kib;
    v[6] = s->file_kib;
    v[7] = s->shmem_kib;
}

static void unpack_sample(struct sample *s, const long long *v)
{
    s->rss_kib = v[0];
    s->hwm_kib = v[1];
    s->fds = v[2];
    s->used_kib = v[3];
    s->held_kib = v[4];
    s->anon_kib = v[5];
    s->file_kib = v[6];
    s->shmem_kib = v[7];
}

int main(int argc, char **argv)
{
    struct opts o;
    struct sample smp[NPOINTS], *per_cycle;
    MPI_File *fh;
    MPI_Info info;
    char **paths;
    unsigned char *buf;
    const char *bbdir;
    char logdir[4096];
    double t0, t_cycle1 = 0, t_write = 0, t_close = 0, t_sync = 0, t_end;
    long long my_bytes = 0, my_writes = 0, my_coll = 0, bad = 0, left;
    int status = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    take_sample(&smp[AT_START]);
    parse_opts(argc, argv, &o);

    MPI_Info_create(&info);
    for (int i = 0; i < o.nhints; i++)
        bench_info_set(info, o.hints[i]);
    if (o.bb_dir != NULL)
        MPI_Info_set(info, "bblog_dir", o.bb_dir);
    bbdir = o.bb_dir;
    if (bbdir == NULL)
        bbdir = getenv("BBLOG_DIR");
    if (bbdir == NULL && !o.plain)
        usage_exit("no log directory: give --bb-dir or set BBLOG_DIR");

    fh = calloc((size_t)o.files, sizeof(*fh));
    paths = calloc((size_t)o.files, sizeof(*paths));
    buf = malloc((size_t)o.max_len);
    per_cycle = calloc((size_t)o.cycles, sizeof(*per_cycle));
    if (fh == NULL || paths == NULL || buf == NULL || per_cycle == NULL) {
        fprintf(stderr, "soak: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, EXIT_MPI_ERROR);
    }
    for (int f = 0; f < o.files; f++) {
        size_t n = strlen(o.pfs_dir) + 32;

        paths[f] = malloc(n);
        snprintf(paths[f], n, "%s/soak-%03d.dat", o.pfs_dir, f);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int c = 0; c < o.cycles; c++) {
        double t;

        for (int f = 0; f < o.files; f++) {
            char name[4200];

            snprintf(name, sizeof(name), "%s:%s", o.plain ? "ufs" : "bblog", paths[f]);
            check_mpi(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info,
                                    &fh[f]), "cannot open", name);
        }
        for (int p = 0; p < o.phases; p++) {
            t = MPI_Wtime();
            for (int k = 0; k < o.per_phase; k++) {
                for (int f = 0; f < o.files; f++) {
                    struct wr w;
                    MPI_Status st;
                    int err;

                    schedule(&o, f, c, p, rank, k, &w);
                    fill(buf, &w);
                    if (k % o.coll_every == 0) {
                        err = MPI_File_write_at_all(fh[f], w.off, buf, w.len, MPI_BYTE, &st);
                        my_coll++;
                    } else {
                        err = MPI_File_write_at(fh[f], w.off, buf, w.len, MPI_BYTE, &st);
                    }
                    check_mpi(err, "write to", paths[f]);
                    my_writes++;
                    my_bytes += w.len;
                }
            }
            t_write += MPI_Wtime() - t;
            if (p + 1 < o.phases) {
                t = MPI_Wtime();
                for (int f = 0; f < o.files; f++)
                    check_mpi(MPI_File_sync(fh[f]), "sync of", paths[f]);
                t_sync += MPI_Wtime() - t;
            }
        }
        if (c == o.cycles - 1)
            take_sample(&smp[AT_OPEN]);
        t = MPI_Wtime();
        for (int f = 0; f < o.files; f++)
            check_mpi(MPI_File_close(&fh[f]), "close of", paths[f]);
        t_close += MPI_Wtime() - t;
        take_sample(&per_cycle[c]);
        if (c == 0) {
            take_sample(&smp[AT_CYCLE1]);
            t_cycle1 = MPI_Wtime() - t0;
        }
    }
    take_sample(&smp[AT_END]);
    MPI_Barrier(MPI_COMM_WORLD);
    t_end = MPI_Wtime() - t0;

    left = o.plain ? 0 : logdir_entries(bbdir, logdir, sizeof(logdir));
    if (left != 0) {
        fprintf(stderr, "soak: rank %d: %s %s after the last close\n", rank, logdir,
                left < 0 ? "cannot be read" : "is not empty");
        status = EXIT_LOGS_LEFT;
    }
    for (int f = rank; f < o.files; f += nprocs) {
        long long b = verify_file(&o, f, paths[f]);

        bad += b < 0 ? 1 : b;
    }
    if (bad != 0)
        status = EXIT_VERIFY;

    {
        /* Per rank: the NPOINTS samples, 5 counters, then one sample per cycle. */
        const int base = SAMPLE_FIELDS * NPOINTS;
        long long *mine, *all = NULL;
        long long tot[3] = { my_writes, my_bytes, my_coll }, sum[3];
        int n = base + 5 + SAMPLE_FIELDS * o.cycles, worst;

        mine = malloc(sizeof(long long) * (size_t)n);
        if (mine == NULL) {
            fprintf(stderr, "soak: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, EXIT_MPI_ERROR);
        }
        for (int i = 0; i < NPOINTS; i++)
            pack_sample(mine + SAMPLE_FIELDS * i, &smp[i]);
        mine[base] = left;
        mine[base + 1] = bad;
        mine[base + 2] = my_writes;
        mine[base + 3] = my_bytes;
        mine[base + 4] = (long long)getpid();
        for (int c = 0; c < o.cycles; c++)
            pack_sample(mine + base + 5 + SAMPLE_FIELDS * c, &per_cycle[c]);
        if (rank == 0)
            all = malloc(sizeof(long long) * (size_t)n * (size_t)nprocs);
        MPI_Gather(mine, n, MPI_LONG_LONG, all, n, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        MPI_Reduce(tot, sum, 3, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("{\"bench\":\"soak\",\"nprocs\":%d,\"files\":%d,\"cycles\":%d,\"phases\":%d,"
                   "\"per_phase\":%d,\"slots\":%d,\"min_len\":%d,\"max_len\":%d,"
                   "\"coll_every\":%d,\"seed\":%u,\"pfs_dir\":",
                   nprocs, o.files, o.cycles, o.phases, o.per_phase, o.slots, o.min_len,
                   o.max_len, o.coll_every, o.seed);
            bench_json_str(stdout, o.pfs_dir);
            printf(",\"mode\":\"%s\",\"bb_dir\":", o.plain ? "plain" : "bblog");
            bench_json_str(stdout, bbdir != NULL ? bbdir : "");
            printf(",\"hints\":[");
            for (int i = 0; i < o.nhints; i++) {
                printf("%s", i ? "," : "");
                bench_json_str(stdout, o.hints[i]);
            }
            printf("],\"writes\":%lld,\"bytes\":%lld,\"collective_writes\":%lld,"
                   "\"time_s\":%.3f,\"cycle1_s\":%.3f,\"rank0_write_s\":%.3f,"
                   "\"rank0_sync_s\":%.3f,\"rank0_close_s\":%.3f,\"ok\":%s,\"ranks\":[",
                   sum[0], sum[1], sum[2], t_end, t_cycle1, t_write, t_sync, t_close,
                   worst == 0 ? "true" : "false");
            for (int r = 0; r < nprocs; r++) {
                const long long *v = all + (size_t)r * (size_t)n;

                printf("%s\n{\"rank\":%d,\"pid\":%lld", r ? "," : "", r, v[base + 4]);
                for (int i = 0; i < NPOINTS; i++) {
                    struct sample s;

                    unpack_sample(&s, v + SAMPLE_FIELDS * i);
                    printf(",\"%s\":", point_names[i]);
                    print_sample(&s);
                }
                /* After each cycle's close: cycle_end[0] is the "cycle1" sample. */
                printf(",\"cycle_end\":[");
                for (int c = 0; c < o.cycles; c++) {
                    struct sample s;

                    unpack_sample(&s, v + base + 5 + SAMPLE_FIELDS * c);
                    printf("%s", c ? "," : "");
                    print_sample(&s);
                }
                printf("],\"logdir_entries_end\":%lld,\"bad_bytes\":%lld,\"writes\":%lld,"
                       "\"bytes\":%lld}",
                       v[base], v[base + 1], v[base + 2], v[base + 3]);
            }
            printf("]}\n");
            fflush(stdout);
        }
        free(all);
        free(mine);
        status = worst;
    }

    for (int f = 0; f < o.files; f++)
        free(paths[f]);
    free(paths);
    free(fh);
    free(per_cycle);
    free(buf);
    free(o.hints);
    MPI_Info_free(&info);
    MPI_Finalize();
    return status;
}
