/*
 * The checker of the crash harness (run-crash.sh): after a killed crashwrite job and a
 * `bblog replay`, checks the PFS file against the schedule of crashpat.h and the acknowledged
 * steps the ranks recorded.
 *
 * Usage: crashcheck FILE NPROCS STEPS pfs|bb SIDEDIR [BEFORE]
 * With BEFORE (a copy of the file taken before `bblog replay`), also counts the bytes that were
 * right in BEFORE and are wrong in FILE: bytes the replay broke.
 *
 * A write of rank r in step s is acknowledged when s <= ack(r), where ack(r) is what r recorded
 * in SIDEDIR/ack.r; with bblog_sync=pfs a completed sync on any rank means every rank's data is
 * on the PFS (the drain is collective), so there ack(r) is the maximum over all ranks. Writes are
 * taken in their one global order (step, then rank: ranks write disjoint bytes between syncs,
 * then issue order). For each byte, with k the last acknowledged write covering it, the file
 * must hold the value of write k or of a later write covering it; with no acknowledged write,
 * zero (never written, or past the end of the file) or the value of any write covering it.
 * Anything else is lost or garbage. The file must not extend past the region written.
 *
 * Exit: 0 the file is right; 1 it is not (the first bad bytes are printed); 2 usage or I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crashpat.h"

#define MAX_PROCS 64
#define MAX_SHOWN 10

/* Allowed values of one byte: a 256-bit set. */
struct allowed {
    uint64_t bits[4];
};

static void set_only(struct allowed *a, unsigned char v)
{
    memset(a->bits, 0, sizeof a->bits);
    a->bits[v >> 6] |= UINT64_C(1) << (v & 63);
}

static void add(struct allowed *a, unsigned char v)
{
    a->bits[v >> 6] |= UINT64_C(1) << (v & 63);
}

static int has(const struct allowed *a, unsigned char v)
{
    return (int) ((a->bits[v >> 6] >> (v & 63)) & 1);
}

/* Names the writes whose byte o had value v: an older, overwritten write (stale data) or none
 * (garbage). */
static void origin(int64_t o, unsigned char v, int nprocs, long steps)
{
    struct crash_write w[CRASH_WIDS];
    int found = 0;

    for (int64_t s = 0; s < steps; s++)
        for (int r = 0; r < nprocs; r++) {
            int n = crash_writes(s, r, nprocs, w);

            for (int i = 0; i < n; i++)
                if (o >= w[i].off && o < w[i].off + w[i].len && crash_byte(o, r, w[i].wid) == v
                    && found++ < 3)
                    printf("crashcheck:       0x%02x is what rank %d wrote there in step %lld "
                           "(write %lld)\n", v, r, (long long) s,
                           (long long) (w[i].wid % CRASH_WIDS));
        }
    if (!found)
        printf("crashcheck:       no write of the schedule put 0x%02x there: garbage\n", v);
}

int main(int argc, char **argv)
{
    static struct allowed al[CRASH_SIZE];
    static unsigned char file[CRASH_SIZE + 1], before[CRASH_SIZE + 1];
    static int64_t last_wid[CRASH_SIZE];      /* last acknowledged write: id, -1 none */
    static signed char last_rank[CRASH_SIZE];
    struct crash_write w[CRASH_WIDS];
    int64_t ack[MAX_PROCS], eff[MAX_PROCS], maxack = -1, fsize;
    int64_t n_acked = 0, n_newer = 0, n_unacked = 0, n_bad = 0, n_broken = 0;
    int nprocs, pfs;
    long steps;
    FILE *f;

    if ((argc != 6 && argc != 7) || (nprocs = atoi(argv[2])) <= 0 || nprocs > MAX_PROCS ||
        (steps = strtol(argv[3], NULL, 10)) <= 0 ||
        (strcmp(argv[4], "pfs") != 0 && strcmp(argv[4], "bb") != 0)) {
        fprintf(stderr, "usage: crashcheck FILE NPROCS(1-%d) STEPS pfs|bb SIDEDIR [BEFORE]\n",
                MAX_PROCS);
        return 2;
    }
    pfs = strcmp(argv[4], "pfs") == 0;
    for (int r = 0; r < nprocs; r++) {
        char path[4096];

        snprintf(path, sizeof path, "%s/ack.%d", argv[5], r);
        ack[r] = -1;    /* killed before it recorded anything */
        f = fopen(path, "rb");
        if (f) {
            if (fread(&ack[r], sizeof ack[r], 1, f) != 1)
                ack[r] = -1;
            fclose(f);
        }
        if (ack[r] > maxack)
            maxack = ack[r];
    }
    for (int r = 0; r < nprocs; r++)
        eff[r] = pfs ? maxack : ack[r];

    memset(before, 0, sizeof before);
    if (argc == 7) {
        f = fopen(argv[6], "rb");
        if (f) {
            if (fread(before, 1, sizeof before, f) == 0 && ferror(f)) {
                fprintf(stderr, "crashcheck: cannot read %s\n", argv[6]);
                return 2;
            }
            fclose(f);
        }
    }
    memset(file, 0, sizeof file);
    fsize = 0;
    f = fopen(argv[1], "rb");
    if (f) {
        fsize = (int64_t) fread(file, 1, sizeof file, f);
        if (ferror(f)) {
            fprintf(stderr, "crashcheck: cannot read %s: %s\n", argv[1], strerror(errno));
            return 2;
        }
        fclose(f);
    } else if (errno != ENOENT) {
        fprintf(stderr, "crashcheck: cannot open %s: %s\n", argv[1], strerror(errno));
        return 2;
    }

    for (int64_t o = 0; o < CRASH_SIZE; o++) {
        set_only(&al[o], 0);
        last_wid[o] = -1;
        last_rank[o] = -1;
    }
    for (int64_t s = 0; s < steps; s++) {
        for (int r = 0; r < nprocs; r++) {
            int n = crash_writes(s, r, nprocs, w);
            int acked = s <= eff[r];

            for (int i = 0; i < n; i++) {
                for (int64_t o = w[i].off; o < w[i].off + w[i].len; o++) {
                    unsigned char v = crash_byte(o, r, w[i].wid);

                    if (acked) {
                        set_only(&al[o], v);
                        last_wid[o] = w[i].wid;
                        last_rank[o] = (signed char) r;
                    } else {
                        add(&al[o], v);
                    }
                }
            }
        }
    }

    printf("crashcheck: %s, %d ranks, %ld steps, bblog_sync=%s; acknowledged step per rank:",
           argv[1], nprocs, steps, argv[4]);
    for (int r = 0; r < nprocs; r++)
        printf(" %lld", (long long) ack[r]);
    printf("\n");
    if (fsize > CRASH_SIZE) {
        printf("crashcheck: FAIL: %s is longer than the %lld bytes ever written\n", argv[1],
               (long long) CRASH_SIZE);
        n_bad++;
    }
    for (int64_t o = 0; o < CRASH_SIZE; o++) {
        unsigned char v = file[o];

        if (argc == 7 && !has(&al[o], v) && has(&al[o], before[o]))
            n_broken++;
        if (!has(&al[o], v)) {
            if (n_bad < MAX_SHOWN) {
                if (last_wid[o] >= 0)
                    printf("crashcheck: FAIL: byte %lld = 0x%02x: neither the acknowledged "
                           "value 0x%02x (rank %d, step %lld, write %lld) nor a later write's\n",
                           (long long) o, v,
                           crash_byte(o, last_rank[o], last_wid[o]), last_rank[o],
                           (long long) (last_wid[o] / CRASH_WIDS),
                           (long long) (last_wid[o] % CRASH_WIDS));
                else
                    printf("crashcheck: FAIL: byte %lld = 0x%02x: no acknowledged write here, "
                           "and no write gives this value\n", (long long) o, v);
                origin(o, v, nprocs, steps);
            }
            n_bad++;
        } else if (last_wid[o] < 0) {
            n_unacked++;
        } else if (v == crash_byte(o, last_rank[o], last_wid[o])) {
            n_acked++;
        } else {
            n_newer++;
        }
    }
    printf("crashcheck: %lld bytes hold their last acknowledged value, %lld a newer "
           "unacknowledged one, %lld have no acknowledged write; %lld bad\n",
           (long long) n_acked, (long long) n_newer, (long long) n_unacked, (long long) n_bad);
    if (argc == 7)
        printf("crashcheck: %lld bytes were right before the replay and are wrong after it\n",
               (long long) n_broken);
    return n_bad ? 1 : 0;
}
