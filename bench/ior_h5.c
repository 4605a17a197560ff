/*
 * ior_h5.c - IOR's HDF5 back end pattern: the segmented IOR of ior.c written through parallel
 * HDF5 (the MPI-IO file driver), so that bench/run-matrix.py can compare bblog with plain ROMIO
 * under a library that adds its own metadata and per-call work (a hyperslab selection and, when
 * collective, a file view per write).
 *
 * The file holds one 1-D dataset "data" of H5T_NATIVE_UCHAR, contiguous layout, P*B elements for
 * P ranks and B bytes per rank (-b), allocated at creation and never filled. Rank r owns elements
 * [r*B, (r+1)*B), IOR's default layout (one segment), and writes them in order in B/t H5Dwrite
 * calls of t bytes (-t), each selecting its hyperslab of the file space; the transfer is
 * collective (H5Pset_dxpl_mpio H5FD_MPIO_COLLECTIVE, the default) or independent (-i). The file
 * is opened with H5Pset_fapl_mpio(MPI_COMM_WORLD, hints).
 *
 * Data: element o (owned by rank r = o / B) is byte (o mod 8) of a 64-bit hash of (r, o / 8), the
 * function of ior.c with the element index for the file offset; it is generated before the clock
 * starts, so the write phase times HDF5 calls only. Objects carry no time stamps, so the file's
 * bytes depend only on P and B and md5 can compare drivers.
 *
 * Timing (MPI_Wtime, a barrier before each phase, each phase reduced to its maximum over ranks):
 *   open   H5Fcreate + H5Dcreate2
 *   write  first H5Dwrite call to last H5Dwrite return
 *   close  H5Dclose + H5Fclose (metadata writes and, through bblog, the drain)
 *   total  open start to close end, barriers between phases included
 * With -V the file is re-opened read-only (H5Fopen, same hints) after close and each rank checks
 * the block of rank (r + 1) mod P, so every byte is checked by a process that did not write it.
 * The file is left in place. Rank 0 prints the parameters and timings, as text or (--json) as
 * one JSON object on one line with the keys of ior.c.
 *
 * Exit status: 0 success, 1 HDF5 or MPI error, 2 usage error, 3 verification found errors.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>

#include "mpibench.h"

#define EXIT_LIB_ERROR 1
#define EXIT_USAGE 2
#define EXIT_VERIFY 3

/* The verification reads at most this much per call, so it needs no second block of memory. */
#define VERIFY_CHUNK ((hsize_t)4 << 20)

struct opts {
    long long block;    /* bytes per rank */
    long long transfer; /* bytes per H5Dwrite */
    int independent;
    int verify;
    int json;
    const char *file;
};

/* Per-rank phase durations and peak resident memory (KiB), reduced with MPI_MAX. */
enum { T_OPEN, T_WRITE, T_CLOSE, T_TOTAL, T_VERIFY, T_RSS, T_COUNT };

static int g_rank;

/* HDF5 calls return a negative value on failure, after printing their error stack. */
#define CHECK(call, what)                                                                        \
    do {                                                                                         \
        if ((call) < 0) {                                                                        \
            fprintf(stderr, "ior_h5: rank %d: %s %s failed (HDF5 error stack above)\n", g_rank,  \
                    what, o->file);                                                              \
            MPI_Abort(MPI_COMM_WORLD, EXIT_LIB_ERROR);                                           \
        }                                                                                        \
    } while (0)

static void usage(FILE *out)
{
    fputs("usage: ior_h5 [-b BYTES] [-t BYTES] [-i] [-V] [-H key=value]... [--json] -o FILE\n"
          "  -b  block bytes per rank (default 16m; k/m/g suffixes, powers of 1024)\n"
          "  -t  transfer bytes per H5Dwrite (default 4k; must divide -b)\n"
          "  -i  independent transfers (H5FD_MPIO_INDEPENDENT), else H5FD_MPIO_COLLECTIVE\n"
          "  -V  verify: re-open read-only after close and check every byte\n"
          "  -H  MPI_Info hint key=value (repeatable), given to H5Pset_fapl_mpio\n"
          "  -o  file name, with any ROMIO prefix (ufs:, bblog:, ...)\n"
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
            fprintf(stderr, "ior_h5: %s\n", o->file == NULL ? "-o FILE is required"
                                                             : "unexpected argument");
            usage(stderr);
        }
        return EXIT_USAGE;
    }
    if (o->block % o->transfer != 0 || o->transfer > INT_MAX) {
        if (g_rank == 0)
            fprintf(stderr, "ior_h5: the transfer size (-t %lld) must divide the block size "
                            "(-b %lld) and be at most %d bytes\n",
                    o->transfer, o->block, INT_MAX);
        return EXIT_USAGE;
    }
    return 0;

bad_value:
    if (g_rank == 0) {
        fprintf(stderr, "ior_h5: bad value '%s' for -%c\n", optarg, c);
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

/* The same word as ior.c's, so the programs' data are the same function. */
static uint64_t pattern_word(int rank, uint64_t word)
{
    return mix64(word * 0x9e3779b97f4a7c15ULL + ((uint64_t)rank + 1) * 0xd1b54a32d192ed03ULL);
}

/* Fills buf with rank's pattern for elements [off, off + len). */
static void pattern_fill(unsigned char *buf, uint64_t off, size_t len, int rank)
{
    size_t k = 0;

    while (k < len) {
        uint64_t pos = off + k;
        uint64_t v = pattern_word(rank, pos / 8);
        unsigned sh = (unsigned)(pos % 8);

        for (; sh < 8 && k < len; sh++, k++)
            buf[k] = (unsigned char)(v >> (8 * sh));
    }
}

/* Counts bytes of buf that differ from rank's pattern at [off, off + len); *first gets the
 * element index of the first bad byte when there is one. */
static uint64_t pattern_check(const unsigned char *buf, uint64_t off, size_t len, int rank,
                              long long *first)
{
    uint64_t bad = 0;
    size_t k = 0;

    while (k < len) {
        uint64_t pos = off + k;
        uint64_t v = pattern_word(rank, pos / 8);
        unsigned sh = (unsigned)(pos % 8);

        for (; sh < 8 && k < len; sh++, k++) {
            if (buf[k] != (unsigned char)(v >> (8 * sh))) {
                if (bad == 0)
                    *first = (long long)(off + k);
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
    long long first_bad; /* -1 when none */
    long long size;      /* the dataset's extent after the re-open */
};

/*
 * Re-opens the file read-only and checks the block of rank (rank + 1) mod P, in independent
 * H5Dread calls of at most VERIFY_CHUNK into buf: the check is not timed against anything, and
 * independent reads do not make the ranks wait for each other.
 */
static void verify(const struct opts *o, hid_t fapl, int nprocs, unsigned char *buf,
                   struct verify_result *res)
{
    int owner = (g_rank + 1) % nprocs;
    hsize_t chunk = (hsize_t)o->block, dims[1] = { 0 };
    long long first = -1, first_all = -1;
    uint64_t bad = 0;
    hid_t file, dset, fspace;

    if (chunk > VERIFY_CHUNK)
        chunk = VERIFY_CHUNK;
    CHECK(file = H5Fopen(o->file, H5F_ACC_RDONLY, fapl), "re-open (H5Fopen) of");
    CHECK(dset = H5Dopen2(file, "data", H5P_DEFAULT), "H5Dopen2 data in");
    CHECK(fspace = H5Dget_space(dset), "H5Dget_space of data in");
    CHECK(H5Sget_simple_extent_dims(fspace, dims, NULL), "H5Sget_simple_extent_dims in");
    res->size = (long long)dims[0];
    for (hsize_t done = 0; done < (hsize_t)o->block; done += chunk) {
        hsize_t start[1] = { (hsize_t)owner * (hsize_t)o->block + done };
        hsize_t count[1] = { (hsize_t)o->block - done < chunk ? (hsize_t)o->block - done
                                                              : chunk };
        long long f = -1;
        uint64_t b;
        hid_t mspace;

        memset(buf, 0, (size_t)count[0]);
        CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL),
              "H5Sselect_hyperslab (verify) in");
        CHECK(mspace = H5Screate_simple(1, count, NULL), "H5Screate_simple (verify) for");
        CHECK(H5Dread(dset, H5T_NATIVE_UCHAR, mspace, fspace, H5P_DEFAULT, buf), "read of");
        H5Sclose(mspace);
        b = pattern_check(buf, start[0], (size_t)count[0], owner, &f);
        if (b != 0 && first < 0)
            first = f;
        bad += b;
    }
    H5Sclose(fspace);
    CHECK(H5Dclose(dset), "H5Dclose (verify) of data in");
    CHECK(H5Fclose(file), "close after verification of");

    MPI_Allreduce(&bad, &res->bad_bytes, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    /* MPI_MIN over indices, with "none" mapped above every real index. */
    if (first < 0)
        first = LLONG_MAX;
    MPI_Allreduce(&first, &first_all, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    res->first_bad = first_all == LLONG_MAX ? -1 : first_all;
}

static void report(const struct opts *o, MPI_Info hints, MPI_Info info_used, int nprocs,
                   const double *t, const struct verify_result *vr, long long expected)
{
    double total = (double)o->block * nprocs, mib = 1024.0 * 1024.0;
    long long writes = o->block / o->transfer;
    int ok = vr->bad_bytes == 0 && vr->size == expected;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], h5[32];
    unsigned maj = 0, min = 0, rel = 0;
    int liblen = 0;
    FILE *f = stdout;

    MPI_Get_library_version(lib, &liblen);
    lib[strcspn(lib, "\n")] = '\0';
    H5get_libversion(&maj, &min, &rel);
    snprintf(h5, sizeof(h5), "%u.%u.%u", maj, min, rel);
    if (!o->json) {
        fprintf(f, "ior_h5: segmented %s, %d ranks, block %lld, transfer %lld, file %s\n",
                o->independent ? "independent" : "collective", nprocs, o->block, o->transfer,
                o->file);
        fprintf(f, "  bytes %.0f (%.1f MiB), %lld H5Dwrite calls per rank, HDF5 %s\n", total,
                total / mib, writes, h5);
        fprintf(f, "  open %.6f s  write %.6f s  close %.6f s  total %.6f s\n", t[T_OPEN],
                t[T_WRITE], t[T_CLOSE], t[T_TOTAL]);
        fprintf(f, "  write phase %.1f MiB/s  end-to-end %.1f MiB/s\n",
                total / mib / t[T_WRITE], total / mib / t[T_TOTAL]);
        if (o->verify)
            fprintf(f, "  verify: %s (%" PRIu64 " bad bytes, first at %lld; extent %lld, "
                       "expected %lld) in %.3f s\n",
                    ok ? "OK" : "FAILED", vr->bad_bytes, vr->first_bad, vr->size, expected,
                    t[T_VERIFY]);
        fflush(f);
        return;
    }
    fputs("{\"benchmark\": \"ior_h5\", \"api\": \"HDF5\", \"library\": ", f);
    bench_json_str(f, h5);
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
                ok ? "true" : "false", vr->bad_bytes, vr->first_bad, vr->size, expected,
                t[T_VERIFY]);
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
    hid_t fapl = -1, dxpl = -1, fcpl = -1, dcpl = -1, file, dset, fspace, mspace;
    hsize_t dims[1], count[1];
    long long n, expected;
    unsigned char *data = NULL, *rbuf = NULL;
    int nprocs, rc;

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
            fprintf(stderr, "ior_h5: -b %lld x %d ranks overflows\n", o->block, nprocs);
        rc = EXIT_USAGE;
        goto out;
    }
    n = o->block / o->transfer;
    expected = o->block * nprocs;

    /* The whole run's data, generated before the clock starts. */
    data = malloc((size_t)o->block);
    if (o->verify)
        rbuf = malloc((size_t)o->block < (size_t)VERIFY_CHUNK ? (size_t)o->block
                                                               : (size_t)VERIFY_CHUNK);
    if (data == NULL || (o->verify && rbuf == NULL)) {
        fprintf(stderr, "ior_h5: rank %d: cannot allocate %lld bytes\n", g_rank, o->block);
        MPI_Abort(MPI_COMM_WORLD, EXIT_LIB_ERROR);
    }
    pattern_fill(data, (uint64_t)g_rank * (uint64_t)o->block, (size_t)o->block, g_rank);

    /* Property lists, outside the clock: MPI-IO driver with the hints; collective or
     * independent transfers; no time stamps (md5 compares runs); a contiguous dataset
     * allocated at creation and never filled, so the only data writes are the H5Dwrite calls. */
    CHECK(fapl = H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate(FILE_ACCESS) for");
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info), "H5Pset_fapl_mpio for");
    CHECK(dxpl = H5Pcreate(H5P_DATASET_XFER), "H5Pcreate(DATASET_XFER) for");
    CHECK(H5Pset_dxpl_mpio(dxpl, o->independent ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE),
          "H5Pset_dxpl_mpio for");
    CHECK(fcpl = H5Pcreate(H5P_FILE_CREATE), "H5Pcreate(FILE_CREATE) for");
    CHECK(H5Pset_obj_track_times(fcpl, 0), "H5Pset_obj_track_times for");
    CHECK(dcpl = H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate(DATASET_CREATE) for");
    CHECK(H5Pset_layout(dcpl, H5D_CONTIGUOUS), "H5Pset_layout for");
    CHECK(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time for");
    CHECK(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time for");
    CHECK(H5Pset_obj_track_times(dcpl, 0), "H5Pset_obj_track_times for");
    dims[0] = (hsize_t)expected;
    count[0] = (hsize_t)o->transfer;
    CHECK(fspace = H5Screate_simple(1, dims, NULL), "H5Screate_simple for");
    CHECK(mspace = H5Screate_simple(1, count, NULL), "H5Screate_simple for");

    MPI_Barrier(MPI_COMM_WORLD);
    t_start = MPI_Wtime();
    CHECK(file = H5Fcreate(o->file, H5F_ACC_TRUNC, fcpl, fapl), "H5Fcreate of");
    CHECK(dset = H5Dcreate2(file, "data", H5T_NATIVE_UCHAR, fspace, H5P_DEFAULT, dcpl,
                            H5P_DEFAULT),
          "H5Dcreate2 data in");
    t_local[T_OPEN] = MPI_Wtime() - t_start;
    /* What the MPI-IO layer made of the hints, from HDF5's MPI_File (local, outside every
     * phase). */
    if (g_rank == 0) {
        void *handle = NULL;

        if (H5Fget_vfd_handle(file, fapl, &handle) < 0 || handle == NULL ||
            MPI_File_get_info(*(MPI_File *)handle, &info_used) != MPI_SUCCESS)
            info_used = MPI_INFO_NULL;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long long i = 0; i < n; i++) {
        hsize_t start[1] = { (hsize_t)g_rank * (hsize_t)o->block + (hsize_t)(i * o->transfer) };

        CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL),
              "H5Sselect_hyperslab in");
        CHECK(H5Dwrite(dset, H5T_NATIVE_UCHAR, mspace, fspace, dxpl, data + i * o->transfer),
              "H5Dwrite to");
    }
    t_local[T_WRITE] = MPI_Wtime() - t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CHECK(H5Dclose(dset), "H5Dclose of data in");
    CHECK(H5Fclose(file), "H5Fclose of");
    t_local[T_CLOSE] = MPI_Wtime() - t0;
    t_local[T_TOTAL] = MPI_Wtime() - t_start;

    if (o->verify) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        verify(o, fapl, nprocs, rbuf, &vr);
        t_local[T_VERIFY] = MPI_Wtime() - t0;
        if (vr.bad_bytes != 0 || vr.size != expected)
            rc = EXIT_VERIFY;
    }

    t_local[T_RSS] = bench_max_rss_kib();
    MPI_Reduce(t_local, t, T_COUNT, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        report(o, info, info_used, nprocs, t, &vr, expected);
        if (rc == EXIT_VERIFY)
            fprintf(stderr, "ior_h5: verification of %s FAILED: %" PRIu64 " bad bytes (first at "
                            "element %lld), extent %lld, expected %lld\n",
                    o->file, vr.bad_bytes, vr.first_bad, vr.size, expected);
    }
    H5Sclose(mspace);
    H5Sclose(fspace);

out:
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    if (dxpl >= 0)
        H5Pclose(dxpl);
    if (fapl >= 0)
        H5Pclose(fapl);
    if (info_used != MPI_INFO_NULL)
        MPI_Info_free(&info_used);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    free(rbuf);
    free(data);
    MPI_Finalize();
    return rc;
}
