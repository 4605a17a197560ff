/*
 * ior.c - an IOR-like MPI-IO write benchmark.
 *
 * It follows the call sequence of IOR's MPIIO back end as used in seed paper 000, section V.A:
 * MPI_File_open (MPI_MODE_CREATE | MPI_MODE_WRONLY, hints in an MPI_Info), one
 * MPI_File_write_at_all (-c) or MPI_File_write_at per transfer, MPI_File_close; with -V a separate
 * MPI_File_open (read-only) reads the data back and checks it; the file is deleted unless -k.
 *
 * Layouts, with P ranks, block b, transfer t, s segments (n = s * b / t transfers per rank):
 *   contiguous  rank r writes block b of segment s at s*P*b + r*b, in b/t transfers; with b = t
 *               every rank appends one record per segment (the paper's "contiguous" IOR).
 *   strided     IOR "-s N -b t": one segment per transfer, so the ranks' transfers interleave;
 *               transfer i of rank r is at (i*P + r)*t (the paper's "strided" IOR).
 *
 * With -F (IOR's file per process) rank r opens FILE.rrrrrrrr (IOR's name) alone, on
 * MPI_COMM_SELF, and lays its transfers out in it as the only rank of the layout.
 *
 * Data: the byte at file offset o written by rank r is byte (o mod 8) of a 64-bit hash of
 * (r, o / 8), so any misplaced, lost or stale byte is detected by the check, and the data of the
 * whole run is generated before the clock starts: the write phase times MPI calls only.
 *
 * Timing (MPI_Wtime, a barrier before each phase, each phase reduced to its maximum over ranks):
 * open, write phase (first write call to last write return), close, and end-to-end (open start to
 * close end, barriers between phases included). Bandwidths are aggregate bytes over those times.
 * The longest single write call of any rank is reported too (max_call_s). Rank 0 prints the
 * parameters and timings, as text or (--json) as one JSON object on one line,
 * with the peak resident memory of the largest rank (max_rss_kib).
 *
 * Exit status: 0 success, 1 MPI-IO error, 2 usage error, 3 verification found errors.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <mpi.h>

#define EXIT_MPI_ERROR 1
#define EXIT_USAGE 2
#define EXIT_VERIFY 3

enum access_pattern { ACCESS_CONTIGUOUS, ACCESS_STRIDED };

struct opts {
    enum access_pattern access;
    MPI_Offset block;    /* bytes per rank per segment */
    MPI_Offset transfer; /* bytes per write call */
    MPI_Offset segments;
    int collective;
    int fpp;             /* -F: a file per process */
    int keep;
    int verify;
    int json;
    const char *file;
    int nhints;
    char **hints; /* "key=value" strings from argv, not copied */
};

/* Per-rank phase durations and peak resident memory (KiB), reduced with MPI_MAX. */
enum { T_OPEN, T_WRITE, T_CLOSE, T_TOTAL, T_VERIFY, T_RSS, T_MAXCALL, T_COUNT };

static int g_rank;

static void usage(FILE *out)
{
    fputs("usage: ior [-a contiguous|strided] [-b BYTES] [-t BYTES] [-s N] [-c] [-k] [-V]\n"
          "           [-H key=value]... [--json] -o FILE\n"
          "  -a  access pattern (default contiguous)\n"
          "  -b  block bytes per rank per segment (default 1m; k/m/g suffixes, powers of 1024)\n"
          "  -t  transfer bytes per write call (default 256k; must divide -b)\n"
          "  -s  segments (default 1)\n"
          "  -c  collective writes (MPI_File_write_at_all), else MPI_File_write_at\n"
          "  -F  a file per process: FILE.00000000, ... opened on MPI_COMM_SELF\n"
          "  -o  file name, with any ROMIO prefix (ufs:, bblog:, ...)\n"
          "  -k  keep the file (default: delete it at the end)\n"
          "  -V  verify: re-open after close and check every byte\n"
          "  -H  MPI_Info hint key=value (repeatable), used for every open\n"
          "  --json  print one JSON object instead of text\n",
          out);
}

/* Parses a positive size with an optional k/m/g suffix (powers of 1024). Returns 0 or -1. */
static int parse_size(const char *s, MPI_Offset *out)
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
    *out = (MPI_Offset)(v * mult);
    return 0;
}

/* Parses argv (identically on every rank). Returns 0, -1 after --help, or EXIT_USAGE after
 * printing why. */
static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'J' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    memset(o, 0, sizeof(*o));
    o->access = ACCESS_CONTIGUOUS;
    o->block = 1 << 20;
    o->transfer = 256 << 10;
    o->segments = 1;
    o->hints = calloc((size_t)argc, sizeof(*o->hints));
    if (o->hints == NULL) {
        fprintf(stderr, "ior: out of memory\n");
        return EXIT_USAGE;
    }
    while ((c = getopt_long(argc, argv, "a:b:t:s:cFo:kH:Vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'a':
            if (strcmp(optarg, "contiguous") == 0)
                o->access = ACCESS_CONTIGUOUS;
            else if (strcmp(optarg, "strided") == 0)
                o->access = ACCESS_STRIDED;
            else
                goto bad_value;
            break;
        case 'b':
            if (parse_size(optarg, &o->block) != 0)
                goto bad_value;
            break;
        case 't':
            if (parse_size(optarg, &o->transfer) != 0)
                goto bad_value;
            break;
        case 's':
            if (parse_size(optarg, &o->segments) != 0)
                goto bad_value;
            break;
        case 'c':
            o->collective = 1;
            break;
        case 'F':
            o->fpp = 1;
            break;
        case 'o':
            o->file = optarg;
            break;
        case 'k':
            o->keep = 1;
            break;
        case 'H':
            if (strchr(optarg, '=') == NULL || optarg[0] == '=')
                goto bad_value;
            o->hints[o->nhints++] = optarg;
            break;
        case 'V':
            o->verify = 1;
            break;
        case 'J':
            o->json = 1;
            break;
        case 'h':
            if (g_rank == 0)
                usage(stdout);
            return -1;
        default:
            if (g_rank == 0)
                usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc || o->file == NULL) {
        if (g_rank == 0) {
            fprintf(stderr, "ior: %s\n", o->file == NULL ? "-o FILE is required"
                                                          : "unexpected argument");
            usage(stderr);
        }
        return EXIT_USAGE;
    }
    if (o->block % o->transfer != 0 || o->transfer > INT_MAX) {
        if (g_rank == 0)
            fprintf(stderr, "ior: the transfer size (-t %lld) must divide the block size "
                            "(-b %lld) and be at most %d bytes\n",
                    (long long)o->transfer, (long long)o->block, INT_MAX);
        return EXIT_USAGE;
    }
    if (o->segments > INT64_MAX / o->block) {
        if (g_rank == 0)
            fprintf(stderr, "ior: -s %lld x -b %lld overflows\n", (long long)o->segments,
                    (long long)o->block);
        return EXIT_USAGE;
    }
    return 0;

bad_value:
    if (g_rank == 0) {
        fprintf(stderr, "ior: bad value '%s' for -%c\n", optarg, c);
        usage(stderr);
    }
    return EXIT_USAGE;
}

/* splitmix64's finalizer: a bijective 64-bit mix, so distinct inputs give distinct words. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static uint64_t pattern_word(int rank, uint64_t word)
{
    return mix64(word * 0x9e3779b97f4a7c15ULL + ((uint64_t)rank + 1) * 0xd1b54a32d192ed03ULL);
}

/* Fills buf with rank's pattern for file bytes [off, off + len). */
static void pattern_fill(unsigned char *buf, MPI_Offset off, size_t len, int rank)
{
    size_t k = 0;

    while (k < len) {
        uint64_t pos = (uint64_t)off + k;
        uint64_t v = pattern_word(rank, pos / 8);
        unsigned sh = (unsigned)(pos % 8);

        for (; sh < 8 && k < len; sh++, k++)
            buf[k] = (unsigned char)(v >> (8 * sh));
    }
}

/* Counts bytes of buf that differ from rank's pattern at [off, off + len); *first gets the file
 * offset of the first bad byte when there is one. */
static uint64_t pattern_check(const unsigned char *buf, MPI_Offset off, size_t len, int rank,
                              MPI_Offset *first)
{
    uint64_t bad = 0;
    size_t k = 0;

    while (k < len) {
        uint64_t pos = (uint64_t)off + k;
        uint64_t v = pattern_word(rank, pos / 8);
        unsigned sh = (unsigned)(pos % 8);

        for (; sh < 8 && k < len; sh++, k++) {
            if (buf[k] != (unsigned char)(v >> (8 * sh))) {
                if (bad == 0)
                    *first = off + (MPI_Offset)k;
                bad++;
            }
        }
    }
    return bad;
}

static MPI_Offset transfers_per_rank(const struct opts *o)
{
    return o->segments * (o->block / o->transfer);
}

/* File offset of transfer i of rank r (see the layouts at the top). */
static MPI_Offset xfer_offset(const struct opts *o, int r, int nprocs, MPI_Offset i)
{
    MPI_Offset per_block, seg, j;

    if (o->access == ACCESS_STRIDED)
        return (i * nprocs + r) * o->transfer;
    per_block = o->block / o->transfer;
    seg = i / per_block;
    j = i % per_block;
    return seg * nprocs * o->block + (MPI_Offset)r * o->block + j * o->transfer;
}

/* The file rank r writes (-F: its own, with IOR's 8-digit suffix), in buf. */
static const char *rank_file(const struct opts *o, int r, char *buf, size_t n)
{
    if (!o->fpp)
        return o->file;
    snprintf(buf, n, "%s.%08d", o->file, r);
    return buf;
}

/* Offset of transfer i of rank r in the file it writes: with -F it is that file's only rank. */
static MPI_Offset rank_offset(const struct opts *o, int r, int nprocs, MPI_Offset i)
{
    return o->fpp ? xfer_offset(o, 0, 1, i) : xfer_offset(o, r, nprocs, i);
}

static void die_mpi(int err, const char *what, const char *file)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "ior: rank %d: %s %s: %s\n", g_rank, what, file, msg);
    MPI_Abort(MPI_COMM_WORLD, EXIT_MPI_ERROR);
}

static void json_str(FILE *f, const char *s)
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

/* Writes the info object as JSON members "key": "value". */
static void json_info(FILE *f, MPI_Info info)
{
    int nkeys = 0;

    if (info == MPI_INFO_NULL || MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        nkeys = 0;
    fputc('{', f);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1];
        char val[MPI_MAX_INFO_VAL + 1];
        int flag = 0;

        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
        if (i > 0)
            fputs(", ", f);
        json_str(f, key);
        fputs(": ", f);
        json_str(f, flag ? val : "");
    }
    fputc('}', f);
}

struct verify_result {
    uint64_t bad_bytes;
    MPI_Offset first_bad; /* -1 when none */
    MPI_Offset size;      /* MPI_File_get_size after the re-open */
};

/*
 * Re-opens the file read-only and checks the data of rank (rank + 1) mod P, so that what is
 * checked crossed a process boundary through close and re-open (DESIGN.md section 3).
 * Reads follow the write pattern but are independent even after collective writes: a 4 KiB
 * collective read costs milliseconds when ranks outnumber cores, and the check is not timed
 * against anything; what it must show is the bytes.
 */
static void verify(const struct opts *o, MPI_Info info, int nprocs, unsigned char *buf,
                   struct verify_result *res)
{
    int owner = (g_rank + 1) % nprocs;
    MPI_Offset n = transfers_per_rank(o);
    MPI_Offset first = -1, first_all = -1, size, lo, hi;
    uint64_t bad = 0;
    MPI_File fh;
    char namebuf[4096];
    const char *name = rank_file(o, owner, namebuf, sizeof(namebuf));
    int err;

    err = MPI_File_open(o->fpp ? MPI_COMM_SELF : MPI_COMM_WORLD, name, MPI_MODE_RDONLY, info,
                        &fh);
    if (err != MPI_SUCCESS)
        die_mpi(err, "re-open for verification of", name);
    err = MPI_File_get_size(fh, &size);
    if (err != MPI_SUCCESS)
        die_mpi(err, "get_size of", name);
    /* With -F every file must have the size: one that differs makes the size -1. */
    MPI_Allreduce(&size, &lo, 1, MPI_OFFSET, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&size, &hi, 1, MPI_OFFSET, MPI_MAX, MPI_COMM_WORLD);
    res->size = lo == hi ? lo : -1;
    for (MPI_Offset i = 0; i < n; i++) {
        MPI_Offset off = rank_offset(o, owner, nprocs, i);
        MPI_Offset f = -1;
        uint64_t b;

        memset(buf, 0, (size_t)o->transfer);
        err = MPI_File_read_at(fh, off, buf, (int)o->transfer, MPI_BYTE, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            die_mpi(err, "read of", name);
        b = pattern_check(buf, off, (size_t)o->transfer, owner, &f);
        if (b != 0 && first < 0)
            first = f;
        bad += b;
    }
    err = MPI_File_close(&fh);
    if (err != MPI_SUCCESS)
        die_mpi(err, "close after verification of", name);

    MPI_Allreduce(&bad, &res->bad_bytes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* MPI_MIN over offsets, with "none" mapped above every real offset. */
    if (first < 0)
        first = INT64_MAX;
    MPI_Allreduce(&first, &first_all, 1, MPI_OFFSET, MPI_MIN, MPI_COMM_WORLD);
    res->first_bad = first_all == INT64_MAX ? -1 : first_all;
}

static void report(const struct opts *o, MPI_Info info_used, int nprocs, const double *t,
                   const struct verify_result *vr, MPI_Offset expected_size)
{
    MPI_Offset per_rank = o->segments * o->block;
    double total = (double)per_rank * nprocs;
    double mib = 1024.0 * 1024.0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    FILE *f = stdout;

    MPI_Get_library_version(lib, &liblen);
    lib[strcspn(lib, "\n")] = '\0';
    if (!o->json) {
        fprintf(f, "ior: %s %s, %d ranks, block %lld, transfer %lld, segments %lld, file %s\n",
                o->access == ACCESS_STRIDED ? "strided" : "contiguous",
                o->collective ? "collective" : "independent", nprocs, (long long)o->block,
                (long long)o->transfer, (long long)o->segments, o->file);
        if (o->fpp)
            fprintf(f, "  a file per process: %s.00000000 ...\n", o->file);
        fprintf(f, "  bytes %.0f (%.1f MiB), %lld writes per rank\n", total, total / mib,
                (long long)transfers_per_rank(o));
        fprintf(f, "  open %.6f s  write %.6f s  close %.6f s  total %.6f s\n", t[T_OPEN],
                t[T_WRITE], t[T_CLOSE], t[T_TOTAL]);
        fprintf(f, "  write phase %.1f MiB/s  end-to-end %.1f MiB/s  longest write call %.6f s\n",
                total / mib / t[T_WRITE], total / mib / t[T_TOTAL], t[T_MAXCALL]);
        if (o->verify)
            fprintf(f, "  verify: %s (%" PRIu64 " bad bytes, first at %lld; size %lld, "
                       "expected %lld) in %.3f s\n",
                    vr->bad_bytes == 0 && vr->size == expected_size ? "OK" : "FAILED",
                    vr->bad_bytes, (long long)vr->first_bad, (long long)vr->size,
                    (long long)expected_size, t[T_VERIFY]);
        fflush(f);
        return;
    }
    fputs("{\"benchmark\": \"ior\", \"api\": \"MPIIO\", \"mpi_library\": ", f);
    json_str(f, lib);
    fputs(", \"file\": ", f);
    json_str(f, o->file);
    fprintf(f, ", \"nprocs\": %d, \"access\": \"%s\", \"collective\": %s", nprocs,
            o->access == ACCESS_STRIDED ? "strided" : "contiguous",
            o->collective ? "true" : "false");
    fprintf(f, ", \"file_per_process\": %s", o->fpp ? "true" : "false");
    fprintf(f, ", \"block\": %lld, \"transfer\": %lld, \"segments\": %lld",
            (long long)o->block, (long long)o->transfer, (long long)o->segments);
    fprintf(f, ", \"writes_per_rank\": %lld, \"bytes_per_rank\": %lld, \"bytes_total\": %.0f",
            (long long)transfers_per_rank(o), (long long)per_rank, total);
    fputs(", \"hints\": {", f);
    for (int i = 0; i < o->nhints; i++) {
        const char *eq = strchr(o->hints[i], '=');
        char key[MPI_MAX_INFO_KEY + 1];

        snprintf(key, sizeof(key), "%.*s", (int)(eq - o->hints[i]), o->hints[i]);
        fputs(i > 0 ? ", " : "", f);
        json_str(f, key);
        fputs(": ", f);
        json_str(f, eq + 1);
    }
    fputs("}, \"info_in_force\": ", f);
    json_info(f, info_used);
    fprintf(f, ", \"open_s\": %.6f, \"write_s\": %.6f, \"close_s\": %.6f, \"total_s\": %.6f",
            t[T_OPEN], t[T_WRITE], t[T_CLOSE], t[T_TOTAL]);
    fprintf(f, ", \"write_MiBps\": %.2f, \"total_MiBps\": %.2f, \"max_call_s\": %.6f",
            total / mib / t[T_WRITE], total / mib / t[T_TOTAL], t[T_MAXCALL]);
    if (o->verify)
        fprintf(f, ", \"verify\": {\"ok\": %s, \"bad_bytes\": %" PRIu64 ", \"first_bad\": %lld"
                   ", \"size\": %lld, \"expected_size\": %lld, \"time_s\": %.6f}",
                vr->bad_bytes == 0 && vr->size == expected_size ? "true" : "false",
                vr->bad_bytes, (long long)vr->first_bad, (long long)vr->size,
                (long long)expected_size, t[T_VERIFY]);
    else
        fputs(", \"verify\": null", f);
    fprintf(f, ", \"max_rss_kib\": %.0f}\n", t[T_RSS]);
    fflush(f);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct verify_result vr = { 0, -1, -1 };
    double t_local[T_COUNT] = { 0 }, t[T_COUNT];
    double t_start, t0, t_first, t_last;
    MPI_Info info = MPI_INFO_NULL, info_used = MPI_INFO_NULL;
    MPI_File fh;
    MPI_Offset n, expected_size;
    unsigned char *data = NULL, *rbuf = NULL;
    int nprocs, err, rc = 0;
    char namebuf[4096];
    const char *fname = NULL;
    MPI_Comm comm = MPI_COMM_WORLD;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        rc = rc < 0 ? 0 : rc;
        goto out;
    }
    n = transfers_per_rank(&o);
    fname = rank_file(&o, g_rank, namebuf, sizeof(namebuf));
    comm = o.fpp ? MPI_COMM_SELF : MPI_COMM_WORLD;
    expected_size = o.fpp ? o.segments * o.block
                    : o.access == ACCESS_STRIDED ? n * nprocs * o.transfer
                                                 : o.segments * nprocs * o.block;

    MPI_Info_create(&info);
    for (int i = 0; i < o.nhints; i++) {
        char *eq = strchr(o.hints[i], '=');

        *eq = '\0';
        MPI_Info_set(info, o.hints[i], eq + 1);
        *eq = '=';
    }

    /* The whole run's data, generated before the clock starts. */
    data = malloc((size_t)(o.segments * o.block));
    rbuf = malloc((size_t)o.transfer);
    if (data == NULL || rbuf == NULL) {
        fprintf(stderr, "ior: rank %d: cannot allocate %lld bytes\n", g_rank,
                (long long)(o.segments * o.block));
        MPI_Abort(MPI_COMM_WORLD, EXIT_MPI_ERROR);
    }
    for (MPI_Offset i = 0; i < n; i++)
        pattern_fill(data + i * o.transfer, rank_offset(&o, g_rank, nprocs, i),
                     (size_t)o.transfer, g_rank);

    /* A fresh file, as IOR gets one: a stale longer file would fail the size check. */
    if (g_rank == 0 || o.fpp)
        MPI_File_delete(fname, info);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Barrier(MPI_COMM_WORLD);
    t_start = MPI_Wtime();
    err = MPI_File_open(comm, fname, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
    t_local[T_OPEN] = MPI_Wtime() - t_start;
    if (err != MPI_SUCCESS)
        die_mpi(err, "open", fname);
    if (g_rank == 0 && MPI_File_get_info(fh, &info_used) != MPI_SUCCESS)
        info_used = MPI_INFO_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    t_first = MPI_Wtime();
    for (MPI_Offset i = 0; i < n; i++) {
        MPI_Offset off = rank_offset(&o, g_rank, nprocs, i);
        const unsigned char *p = data + i * o.transfer;
        double tc = MPI_Wtime();

        if (o.collective)
            err = MPI_File_write_at_all(fh, off, p, (int)o.transfer, MPI_BYTE,
                                        MPI_STATUS_IGNORE);
        else
            err = MPI_File_write_at(fh, off, p, (int)o.transfer, MPI_BYTE, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            die_mpi(err, "write to", fname);
        tc = MPI_Wtime() - tc;
        if (tc > t_local[T_MAXCALL])
            t_local[T_MAXCALL] = tc;   /* the longest single write call (a stall shows here) */
    }
    t_last = MPI_Wtime();
    t_local[T_WRITE] = t_last - t_first;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    err = MPI_File_close(&fh);
    t_local[T_CLOSE] = MPI_Wtime() - t0;
    t_local[T_TOTAL] = MPI_Wtime() - t_start;
    if (err != MPI_SUCCESS)
        die_mpi(err, "close", fname);

    if (o.verify) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        verify(&o, info, nprocs, rbuf, &vr);
        t_local[T_VERIFY] = MPI_Wtime() - t0;
        if (vr.bad_bytes != 0 || vr.size != expected_size)
            rc = EXIT_VERIFY;
    }

    {
        struct rusage ru;

        /* Peak RSS of the process so far (Linux: KiB), the data buffer included. */
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            t_local[T_RSS] = (double)ru.ru_maxrss;
    }
    MPI_Reduce(t_local, t, T_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        report(&o, info_used, nprocs, t, &vr, expected_size);
        if (rc == EXIT_VERIFY)
            fprintf(stderr, "ior: verification of %s FAILED: %" PRIu64 " bad bytes (first at "
                            "offset %lld), size %lld, expected %lld\n",
                    o.file, vr.bad_bytes, (long long)vr.first_bad, (long long)vr.size,
                    (long long)expected_size);
    }

    if (!o.keep) {
        MPI_Barrier(MPI_COMM_WORLD);
        if ((g_rank == 0 || o.fpp) && (err = MPI_File_delete(fname, info)) != MPI_SUCCESS)
            die_mpi(err, "delete", fname);
    }

out:
    if (info_used != MPI_INFO_NULL)
        MPI_Info_free(&info_used);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    free(rbuf);
    free(data);
    free(o.hints);
    MPI_Finalize();
    return rc;
}
