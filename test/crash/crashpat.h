/*
 * The write schedule of the crash harness (test/crash/run-crash.sh), shared by the MPI writer
 * (crashwrite.c) and the checker (crashcheck.c, no MPI), so that the checker knows every write
 * the job could have made without being told.
 *
 * The file is a region of CRASH_NCELL cells of CRASH_CELL bytes. Steps are grouped into sync
 * intervals of CRASH_SYNC_EVERY steps; each interval ends with MPI_File_sync + MPI_Barrier.
 * Within an interval every cell has at most one owner rank (or none), so no two ranks write the
 * same byte without a sync in between (MPI leaves that undefined); from one interval to the next
 * the owners change, so ranks overwrite each other's bytes across syncs.
 *
 * In step s, rank r makes, in this order:
 *   phase 0: whole owned cells, picked by a hash, adjacent ones merged into one write; the first
 *            of them with MPI_File_write_at_all (every rank makes that call, maybe empty);
 *   phase 1: CRASH_NSUB sub-ranges of owned cells, overlapping phase 0 and each other.
 * Write number k of the step (k < CRASH_WIDS) carries id wid = s * CRASH_WIDS + k, and byte o of
 * it holds crash_byte(o, r, wid): any byte of the file names the write it came from, and a
 * stale, shifted or torn byte shows.
 */
#ifndef CRASHPAT_H
#define CRASHPAT_H

#include <stdint.h>

#define CRASH_CELL 1024
#define CRASH_NCELL 256
#define CRASH_SIZE ((int64_t) CRASH_CELL * CRASH_NCELL)
#define CRASH_SYNC_EVERY 2
#define CRASH_NSUB 8
#define CRASH_WIDS 64

static inline uint64_t crash_mix(uint64_t x)
{
    /* splitmix64 finaliser: unrelated outputs for neighbouring inputs */
    x ^= x >> 30;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 27;
    x *= UINT64_C(0x94D049BB133111EB);
    x ^= x >> 31;
    return x;
}

static inline uint64_t crash_hash(uint64_t a, uint64_t b, uint64_t c)
{
    return crash_mix(a * UINT64_C(0x9E3779B97F4A7C15) ^ crash_mix(b + UINT64_C(0x632BE59BD9B4E019))
                     ^ crash_mix(c * UINT64_C(0xC2B2AE3D27D4EB4F) + 1));
}

static inline unsigned char crash_byte(int64_t off, int rank, int64_t wid)
{
    return (unsigned char) crash_hash((uint64_t) off, (uint64_t) rank + 7, (uint64_t) wid + 11);
}

/* Owner of cell c in sync interval e: a rank, or -1 (nobody writes it in that interval). */
static inline int crash_owner(int64_t e, int c, int nprocs)
{
    int o = (int) (crash_hash((uint64_t) e, (uint64_t) c, 1) % (uint64_t) (nprocs + 1));
    return o == nprocs ? -1 : o;
}

struct crash_write {
    int64_t off, len, wid;
    int collective;             /* the phase-0 write made with MPI_File_write_at_all */
};

/*
 * The writes of rank r in step s, in issue order, into w (room for CRASH_WIDS); returns how
 * many. Phase 0 always yields entry 0 as the collective write (len 0 when r writes no cell).
 */
static inline int crash_writes(int64_t s, int r, int nprocs, struct crash_write *w)
{
    int64_t e = s / CRASH_SYNC_EVERY;
    int n = 0, c = 0;

    w[0].off = 0;
    w[0].len = 0;
    w[0].wid = s * CRASH_WIDS;
    w[0].collective = 1;
    n = 1;
    while (c < CRASH_NCELL) {
        int c0;

        if (crash_owner(e, c, nprocs) != r || crash_hash((uint64_t) s, (uint64_t) c, 2) % 2) {
            c++;
            continue;
        }
        c0 = c;
        while (c < CRASH_NCELL && crash_owner(e, c, nprocs) == r &&
               crash_hash((uint64_t) s, (uint64_t) c, 2) % 2 == 0)
            c++;
        if (w[0].len == 0) {
            w[0].off = (int64_t) c0 * CRASH_CELL;
            w[0].len = (int64_t) (c - c0) * CRASH_CELL;
        } else if (n < CRASH_WIDS - CRASH_NSUB) {
            w[n].off = (int64_t) c0 * CRASH_CELL;
            w[n].len = (int64_t) (c - c0) * CRASH_CELL;
            w[n].wid = s * CRASH_WIDS + n;
            w[n].collective = 0;
            n++;
        }
        /* else: out of write ids; the run is not written in this step (the schedule stays
         * deterministic, which is all the checker needs) */
    }
    for (int j = 0; j < CRASH_NSUB; j++) {
        uint64_t h = crash_hash((uint64_t) s, (uint64_t) r, (uint64_t) j + 100);
        int cell = (int) (h % CRASH_NCELL);
        int64_t in = (int64_t) ((h >> 16) % CRASH_CELL);
        int64_t len = 1 + (int64_t) ((h >> 32) % (uint64_t) (CRASH_CELL - in));
        int k = 0;

        /* the first cell r owns from the hashed one on */
        while (k < CRASH_NCELL && crash_owner(e, cell, nprocs) != r) {
            cell = (cell + 1) % CRASH_NCELL;
            k++;
        }
        if (k == CRASH_NCELL)
            break;
        /* A sub-range may run into the next cell when r owns it too. */
        if (cell + 1 < CRASH_NCELL && crash_owner(e, cell + 1, nprocs) == r && (h >> 48) % 2)
            len += (int64_t) ((h >> 50) % CRASH_CELL);
        w[n].off = (int64_t) cell * CRASH_CELL + in;
        w[n].len = len;
        w[n].wid = s * CRASH_WIDS + n;
        w[n].collective = 0;
        n++;
    }
    return n;
}

#endif
