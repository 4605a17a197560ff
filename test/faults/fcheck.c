/*
 * The checker of the fault tests (run-faults.sh): compares FILE with faultpat.h's workload,
 * given the calls that fio reported failed (SIDEDIR/res.R).
 *
 * Usage: fcheck FILE SIDEDIR NPROCS NW T [overlap]
 *
 * A write that returned success must be in the file (unless a later write of the same bytes
 * replaced it); the bytes of a write that returned an error may hold its value or the value
 * they had before it (0 for never written), nothing else. The file must not extend past the
 * last region. Exit: 0 right; 1 wrong (first bad bytes printed); 2 usage or I/O error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultpat.h"

#define MAX_PROCS 64
#define MAX_SHOWN 8

/* failed[r][i * 2 + gen]: the write reported an error */
static unsigned char *failed[MAX_PROCS];

int main(int argc, char **argv)
{
    int nprocs, overlap;
    int64_t nw, t, size, bad = 0, loose = 0;
    unsigned char *got, *a1, *a2, *n;
    FILE *f;

    if (argc < 6 || (nprocs = atoi(argv[3])) <= 0 || nprocs > MAX_PROCS ||
        (nw = atoll(argv[4])) <= 0 || (t = atoll(argv[5])) <= 0) {
        fprintf(stderr, "usage: fcheck FILE SIDEDIR NPROCS NW T [overlap]\n");
        return 2;
    }
    overlap = argc > 6 && strcmp(argv[6], "overlap") == 0;
    for (int r = 0; r < nprocs; r++) {
        char path[4096], line[8192];
        long long i;
        int gen;

        failed[r] = calloc((size_t) nw * 2, 1);
        snprintf(path, sizeof path, "%s/res.%d", argv[2], r);
        f = fopen(path, "r");
        if (!f || !failed[r]) {
            fprintf(stderr, "fcheck: cannot read %s: %s\n", path, strerror(errno));
            return 2;
        }
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "write %lld %d", &i, &gen) == 2 && i >= 0 && i < nw &&
                (gen == 0 || gen == 1))
                failed[r][i * 2 + gen] = 1;
        fclose(f);
    }
    /* Region by region (each is one rank's): allowed values a1 (and a2 when n == 2). */
    got = malloc((size_t) t);
    a1 = malloc((size_t) t);
    a2 = malloc((size_t) t);
    n = malloc((size_t) t);
    f = fopen(argv[1], "rb");
    if (!got || !a1 || !a2 || !n || !f) {
        fprintf(stderr, "fcheck: cannot open %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    size = nw * nprocs * t;
    for (int64_t i = 0; i < nw; i++)
        for (int r = 0; r < nprocs; r++) {
            int64_t base = fault_region(i, r, nprocs, t), roff, rlen;
            size_t have;

            memset(got, 0, (size_t) t);
            if (fseeko(f, base, SEEK_SET) != 0) {
                fprintf(stderr, "fcheck: seek in %s: %s\n", argv[1], strerror(errno));
                return 2;
            }
            have = fread(got, 1, (size_t) t, f);
            (void) have;        /* past the end of the file: zeros */
            for (int64_t k = 0; k < t; k++) {
                unsigned char v = fault_byte(base + k, r, 0);

                if (failed[r][i * 2]) {
                    a1[k] = 0;
                    a2[k] = v;
                    n[k] = 2;
                } else {
                    a1[k] = v;
                    n[k] = 1;
                }
            }
            if (overlap && fault_rewrite(i, nw, r, nprocs, t, &roff, &rlen))
                for (int64_t k = roff - base; k < roff - base + rlen; k++) {
                    unsigned char v = fault_byte(base + k, r, 1);

                    if (!failed[r][i * 2 + 1]) {
                        a1[k] = v;
                        n[k] = 1;
                    } else if (n[k] == 1) {
                        a2[k] = v;
                        n[k] = 2;
                    } else {
                        loose++;        /* three possible values: take any of them */
                        a2[k] = got[k] == v ? v : a2[k];
                    }
                }
            for (int64_t k = 0; k < t; k++) {
                if (got[k] == a1[k] || (n[k] == 2 && got[k] == a2[k]))
                    continue;
                if (bad++ < MAX_SHOWN)
                    printf("fcheck: FAIL: byte %lld (rank %d, region %lld) = 0x%02x, expected "
                           "0x%02x%s\n", (long long) (base + k), r, (long long) i, got[k],
                           a1[k], n[k] == 2 ? " or the other value of a failed write" : "");
            }
        }
    if (fseeko(f, 0, SEEK_END) == 0 && ftello(f) > size) {
        printf("fcheck: FAIL: %s has %lld bytes, more than the %lld written\n", argv[1],
               (long long) ftello(f), (long long) size);
        bad++;
    }
    fclose(f);
    printf("fcheck: %s: %lld bytes checked, %lld bad%s\n", argv[1], (long long) size,
           (long long) bad, loose ? " (some bytes of doubly failed writes checked loosely)" : "");
    return bad ? 1 : 0;
}
