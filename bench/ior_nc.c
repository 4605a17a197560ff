/*
 * ior_nc.c - IOR's PnetCDF (NCMPI) back end pattern: the segmented IOR of ior.c written through
 * PnetCDF, so that bench/run-matrix.py can run one library workload plain, through bblog
 * (ROMIO_FSTYPE_FORCE=bblog:) and through PnetCDF's own burst-buffer driver (hints
 * nc_burst_buf=enable, nc_burst_buf_dirname=DIR), as seed paper 000 compares them.
 *
 * The file (CDF-5, NC_64BIT_DATA) holds one 1-D variable "data" of NC_BYTE with P*B elements,
 * P ranks and B bytes per rank (-b). Rank r owns elements [r*B, (r+1)*B), IOR's default layout
 * (one segment), and writes them in order in B/t calls of t bytes (-t):
 * ncmpi_put_vara_schar_all (collective, the default) or, with -i, ncmpi_put_vara_schar in
 * independent data mode (ncmpi_begin_indep_data after enddef, ncmpi_end_indep_data before close,
 * as IOR's back end does).
 *
 * Data: element o (owned by rank r = o / B) is byte (o mod 8) of a 64-bit hash of (r, o / 8), the
 * function of ior.c with the element index for the file offset; it is generated before the clock
 * starts, so the write phase times PnetCDF calls only. The header has no time stamp, so the
 * file's bytes depend only on P and B and md5 can compare drivers.
 *
 * Timing (MPI_Wtime, a barrier before each phase, each phase reduced to its maximum over ranks):
 *   open   ncmpi_create + def_dim + def_var + enddef (+ begin_indep_data with -i)
 *   write  first put call to last put return
 *   close  (end_indep_data with -i +) ncmpi_close: bblog and PnetCDF's burst-buffer driver drain
 *          there
 *   total  open start to close end, barriers between phases included
 * With -V the file is re-opened read-only (ncmpi_open, same hints) after close and each rank
 * checks the block of rank (r + 1) mod P, so every byte is checked by a process that did not
 * write it. The file is left in place. Rank 0 prints the parameters and timings, as text or
 * (--json) as one JSON object on one line with the keys of ior.c.
 *
 * Exit status: 0 success, 1 PnetCDF or MPI error, 2 usage error, 3 verification found errors.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <pnetcdf.h>

#include "mpibench.h"

#define EXIT_LIB_ERROR 1
#define EXIT_USAGE 2
#define EXIT_VERIFY 3

/* The verification reads at most this much per call, so it needs no second block of memory. */
#define VERIFY_CHUNK ((MPI_Offset)4 << 20)

struct opts {
    long long block;    /* bytes per rank */
    long long transfer; /* bytes per put call */
    int independent;
    int verify;
    int json;
    const char *file;
};

/* Per-rank phase durations and peak resident memory (KiB), reduced with MPI_MAX. */
enum { T_OPEN, T_WRITE, T_CLOSE, T_TOTAL, T_VERIFY, T_RSS, T_COUNT };

static int g_rank;

#define CHECK(call, what)                                                                        \
    do {                                                                                         \
        int e_ = (call);                                                                         \
        if (e_ != NC_NOERR) {                                                                    \
            fprintf(stderr, "ior_nc: rank %d: %s %s: %s\n", g_rank, what, o->file,               \
                    ncmpi_strerror(e_));                                                         \
            MPI_Abort(MPI_COMM_WORLD, EXIT_LIB_ERROR);                                           \
        }                                                                                        \
    } while (0)

static void usage(FILE *out)
{
    fputs("usage: ior_nc [-b BYTES] [-t BYTES] [-i] [-V] [-H key=value]... [--json] -o FILE\n"
          "  -b  block bytes per rank (default 16m; k/m/g suffixes, powers of 1024)\n"
          "  -t  transfer bytes per put call (default 4k; must divide -b)\n"
          "  -i  independent data mode (ncmpi_put_vara_schar), else ncmpi_put_vara_schar_all\n"
          "  -V  verify: re-open read-only after close and check every byte\n"
          "  -H  MPI_Info hint key=value (repeatable) for ncmpi_create and ncmpi_open,\n"
          "      e.g. nc_burst_buf=enable\n"
          "  -o  file name (ROMIO_FSTYPE_FORCE=bblog: routes it through bblog)\n"
          "  --json  print one JSON object instead of text\n",
          out);
}

/* Parses argv (identically on every rank) into o and the hints into info. Returns 0, -1 after
 * --help, or EXIT_USAGE after printing why. */
static int parse_args(int argc, char **argv, struct opts *o, MPI_Info info)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'J' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    memset(o, 0, sizeof(*o));
    o->block = 16 << 20;
    o->transfer = 4 << 10;
    while ((c = getopt_long(argc, argv, "b:t:iVH:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'b':
        case 't':
            if (bench_parse_size(optarg, c == 'b' ? &o->block : &o->transfer) != 0)
                goto bad_value;
            break;
        case 'i':
            o->independent = 1;
            break;
        case 'V':
            o->verify = 1;
            break;
        case 'H':
            if (bench_info_set(info, optarg) != 0)
                goto bad_value;
            break;
        case 'o':
            o->file = optarg;
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
            fprintf(stderr, "ior_nc: %s\n", o->file == NULL ? "-o FILE is required"
                                                             : "unexpected argument");
            usage(stderr);
        }
        return EXIT_USAGE;
    }
    if (o->block % o->transfer != 0 || o->transfer > INT_MAX) {
        if (g_rank == 0)
            fprintf(stderr, "ior_nc: the transfer size (-t %lld) must divide the block size "
                            "(-b %lld) and be at most %d bytes\n",
                    o->transfer, o->block, INT_MAX);
        return EXIT_USAGE;
    }
    return 0;

bad_value:
    if (g_rank == 0) {
        fprintf(stderr, "ior_nc: bad value '%s' for -%c\n", optarg, c);
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

/* The same word as ior.c's, so the two programs' data are the same function. */
static uint64_t pattern_word(int rank, uint64_t word)
{
    return mix64(word * 0x9e3779b97f4a7c15ULL + ((uint64_t)rank + 1) * 0xd1b54a32d192ed03ULL);
}

/* Fills buf with rank's pattern for elements [off, off + len). */
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

/* Counts bytes of buf that differ from rank's pattern at [off, off + len); *first gets the
 * element index of the first bad byte when there is one. */
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

/* Writes the info object as a JSON object of "key": "value" members. */
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
        fputs(i > 0 ? ", " : "", f);
        bench_json_str(f, key);
        fputs(": ", f);
        bench_json_str(f, flag ? val : "");
    }
    fputc('}', f);
}

struct verify_result {
    uint64_t bad_bytes;
    MPI_Offset first_bad; /* -1 when none */
    MPI_Offset size;      /* the variable's length after the re-open */
};

/*
 * Re-opens the file read-only and checks the block of rank (rank + 1) mod P, in independent
 * reads of at most VERIFY_CHUNK into buf: the check is not timed against anything, and
 * independent reads do not make the ranks wait for each other.
 */
static void verify(const struct opts *o, MPI_Info info, int nprocs, unsigned char *buf,
                   struct verify_result *res)
{
    int owner = (g_rank + 1) % nprocs;
    MPI_Offset first = -1, first_all = -1, chunk = o->block;
    uint64_t bad = 0;
    int ncid, varid, dimid;

    if (chunk > VERIFY_CHUNK)
        chunk = VERIFY_CHUNK;
    CHECK(ncmpi_open(MPI_COMM_WORLD, o->file, NC_NOWRITE, info, &ncid), "re-open of");
    CHECK(ncmpi_inq_varid(ncid, "data", &varid), "inq_varid data in");
    CHECK(ncmpi_inq_vardimid(ncid, varid, &dimid), "inq_vardimid data in");
    CHECK(ncmpi_inq_dimlen(ncid, dimid, &res->size), "inq_dimlen in");
    CHECK(ncmpi_begin_indep_data(ncid), "begin_indep_data (verify) of");
    for (MPI_Offset done = 0; done < o->block; done += chunk) {
        MPI_Offset start = (MPI_Offset)owner * o->block + done;
        MPI_Offset count = o->block - done < chunk ? o->block - done : chunk;
        MPI_Offset f = -1;
        uint64_t b;

        memset(buf, 0, (size_t)count);
        CHECK(ncmpi_get_vara_schar(ncid, varid, &start, &count, (signed char *)buf), "read of");
        b = pattern_check(buf, start, (size_t)count, owner, &f);
        if (b != 0 && first < 0)
            first = f;
        bad += b;
    }
    CHECK(ncmpi_end_indep_data(ncid), "end_indep_data (verify) of");
    CHECK(ncmpi_close(ncid), "close after verification of");

    MPI_Allreduce(&bad, &res->bad_bytes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* MPI_MIN over indices, with "none" mapped above every real index. */
    if (first < 0)
        first = INT64_MAX;
    MPI_Allreduce(&first, &first_all, 1, MPI_OFFSET, MPI_MIN, MPI_COMM_WORLD);
    res->first_bad = first_all == INT64_MAX ? -1 : first_all;
}

static void report(const struct opts *o, MPI_Info hints, MPI_Info info_used, int nprocs,
                   const double *t, const struct verify_result *vr, MPI_Offset expected)
{
    double total = (double)o->block * nprocs, mib = 1024.0 * 1024.0;
    long long writes = o->block / o->transfer;
    int ok = vr->bad_bytes == 0 && vr->size == expected;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen = 0;
    FILE *f = stdout;

    MPI_Get_library_version(lib, &liblen);
    lib[strcspn(lib, "\n")] = '\0';
    if (!o->json) {
        fprintf(f, "ior_nc: segmented %s, %d ranks, block %lld, transfer %lld, file %s\n",
                o->independent ? "independent" : "collective", nprocs, o->block, o->transfer,
                o->file);
        fprintf(f, "  bytes %.0f (%.1f MiB), %lld puts per rank, PnetCDF %s\n", total,
                total / mib, writes, ncmpi_inq_libvers());
        fprintf(f, "  open %.6f s  write %.6f s  close %.6f s  total %.6f s\n", t[T_OPEN],
                t[T_WRITE], t[T_CLOSE], t[T_TOTAL]);
        fprintf(f, "  write phase %.1f MiB/s  end-to-end %.1f MiB/s\n",
                total / mib / t[T_WRITE], total / mib / t[T_TOTAL]);
        if (o->verify)
            fprintf(f, "  verify: %s (%" PRIu64 " bad bytes, first at %lld; length %lld, "
                       "expected %lld) in %.3f s\n",
                    ok ? "OK" : "FAILED", vr->bad_bytes, (long long)vr->first_bad,
                    (long long)vr->size, (long long)expected, t[T_VERIFY]);
        fflush(f);
        return;
    }
    fputs("{\"benchmark\": \"ior_nc\", \"api\": \"NCMPI\", \"library\": ", f);
    bench_json_str(f, ncmpi_inq_libvers());
    fputs(", \"mpi_library\": ", f);
    bench_json_str(f, lib);
    fputs(", \"file\": ", f);
    bench_json_str(f, o->file);
    fprintf(f, ", \"nprocs\": %d, \"access\": \"segmented\", \"collective\": %s", nprocs,
            o->independent ? "false" : "true");
    fprintf(f, ", \"block\": %lld, \"transfer\": %lld, \"segments\": 1", o->block, o->transfer);
    fprintf(f, ", \"writes_per_rank\": %lld, \"bytes_per_rank\": %lld, \"bytes_total\": %.0f",
            writes, o->block, total);
    fputs(", \"hints\": ", f);
    json_info(f, hints);
    fputs(", \"info_in_force\": ", f);
    json_info(f, info_used);
    fprintf(f, ", \"open_s\": %.6f, \"write_s\": %.6f, \"close_s\": %.6f, \"total_s\": %.6f",
            t[T_OPEN], t[T_WRITE], t[T_CLOSE], t[T_TOTAL]);
    fprintf(f, ", \"write_MiBps\": %.2f, \"total_MiBps\": %.2f", total / mib / t[T_WRITE],
            total / mib / t[T_TOTAL]);
    if (o->verify)
        fprintf(f, ", \"verify\": {\"ok\": %s, \"bad_bytes\": %" PRIu64 ", \"first_bad\": %lld"
                   ", \"size\": %lld, \"expected_size\": %lld, \"time_s\": %.6f}",
                ok ? "true" : "false", vr->bad_bytes, (long long)vr->first_bad,
                (long long)vr->size, (long long)expected, t[T_VERIFY]);
    else
        fputs(", \"verify\": null", f);
    fprintf(f, ", \"max_rss_kib\": %.0f}\n", t[T_RSS]);
    fflush(f);
}

int main(int argc, char **argv)
{
    struct opts opts, *o = &opts; /* o: the name CHECK uses */
    struct verify_result vr = { 0, -1, -1 };
    double t_local[T_COUNT] = { 0 }, t[T_COUNT], t_start, t0;
    MPI_Info info = MPI_INFO_NULL, info_used = MPI_INFO_NULL;
    MPI_Offset n, expected, verify_len;
    unsigned char *data = NULL, *rbuf = NULL;
    int nprocs, rc, ncid, varid, dimid;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Info_create(&info);

    rc = parse_args(argc, argv, o, info);
    if (rc != 0) {
        rc = rc < 0 ? 0 : rc;
        goto out;
    }
    if (o->block > INT64_MAX / nprocs) {
        if (g_rank == 0)
            fprintf(stderr, "ior_nc: -b %lld x %d ranks overflows\n", o->block, nprocs);
        rc = EXIT_USAGE;
        goto out;
    }
    n = o->block / o->transfer;
    expected = (MPI_Offset)o->block * nprocs;

    /* The whole run's data, generated before the clock starts. */
    verify_len = o->block < VERIFY_CHUNK ? o->block : VERIFY_CHUNK;
    data = malloc((size_t)o->block);
    rbuf = o->verify ? malloc((size_t)verify_len) : NULL;
    if (data == NULL || (o->verify && rbuf == NULL)) {
        fprintf(stderr, "ior_nc: rank %d: cannot allocate %lld bytes\n", g_rank, o->block);
        MPI_Abort(MPI_COMM_WORLD, EXIT_LIB_ERROR);
    }
    pattern_fill(data, (MPI_Offset)g_rank * o->block, (size_t)o->block, g_rank);

    MPI_Barrier(MPI_COMM_WORLD);
    t_start = MPI_Wtime();
    CHECK(ncmpi_create(MPI_COMM_WORLD, o->file, NC_CLOBBER | NC_64BIT_DATA, info, &ncid),
          "create");
    CHECK(ncmpi_def_dim(ncid, "n", expected, &dimid), "def_dim n in");
    CHECK(ncmpi_def_var(ncid, "data", NC_BYTE, 1, &dimid, &varid), "def_var data in");
    CHECK(ncmpi_enddef(ncid), "enddef of");
    if (o->independent)
        CHECK(ncmpi_begin_indep_data(ncid), "begin_indep_data of");
    t_local[T_OPEN] = MPI_Wtime() - t_start;
    /* What the MPI-IO layer and PnetCDF made of the hints (local, outside every phase). */
    if (g_rank == 0 && ncmpi_inq_file_info(ncid, &info_used) != NC_NOERR)
        info_used = MPI_INFO_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (MPI_Offset i = 0; i < n; i++) {
        MPI_Offset start = (MPI_Offset)g_rank * o->block + i * o->transfer;
        MPI_Offset count = o->transfer;
        const signed char *p = (const signed char *)(data + i * o->transfer);

        if (o->independent)
            CHECK(ncmpi_put_vara_schar(ncid, varid, &start, &count, p), "put_vara_schar to");
        else
            CHECK(ncmpi_put_vara_schar_all(ncid, varid, &start, &count, p),
                  "put_vara_schar_all to");
    }
    t_local[T_WRITE] = MPI_Wtime() - t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (o->independent)
        CHECK(ncmpi_end_indep_data(ncid), "end_indep_data of");
    CHECK(ncmpi_close(ncid), "close");
    t_local[T_CLOSE] = MPI_Wtime() - t0;
    t_local[T_TOTAL] = MPI_Wtime() - t_start;

    if (o->verify) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        verify(o, info, nprocs, rbuf, &vr);
        t_local[T_VERIFY] = MPI_Wtime() - t0;
        if (vr.bad_bytes != 0 || vr.size != expected)
            rc = EXIT_VERIFY;
    }

    t_local[T_RSS] = bench_max_rss_kib();
    MPI_Reduce(t_local, t, T_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        report(o, info, info_used, nprocs, t, &vr, expected);
        if (rc == EXIT_VERIFY)
            fprintf(stderr, "ior_nc: verification of %s FAILED: %" PRIu64 " bad bytes (first at "
                            "element %lld), length %lld, expected %lld\n",
                    o->file, vr.bad_bytes, (long long)vr.first_bad, (long long)vr.size,
                    (long long)expected);
    }

out:
    if (info_used != MPI_INFO_NULL)
        MPI_Info_free(&info_used);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    free(rbuf);
    free(data);
    MPI_Finalize();
    return rc;
}
