/*
 * The workload of the fault tests (test/faults/run-faults.sh), shared by the MPI writer (fio.c)
 * and the checker (fcheck.c, no MPI).
 *
 * Rank r of P owns regions i = 0 .. NW-1 of T bytes at (i * P + r) * T (strided, interleaved
 * between ranks, disjoint). Writes, in this order:
 *   phase A  regions [0, NW/2), MPI_File_write_at_all, generation 0; then MPI_File_sync;
 *   phase B  regions [NW/2, NW), MPI_File_write_at, generation 0;
 *   phase C  (with overlap) for every fourth region of phase B, its middle half again,
 *            MPI_File_write_at, generation 1: rewrites of bytes the log still holds.
 * Byte o of a generation-g write of rank r holds fault_byte(o, r, g).
 */
#ifndef FAULTPAT_H
#define FAULTPAT_H

#include <stdint.h>

static inline unsigned char fault_byte(int64_t off, int rank, int gen)
{
    uint64_t x = (uint64_t) off * UINT64_C(0x9E3779B97F4A7C15) ^
        ((uint64_t) rank + 1) * UINT64_C(0xC2B2AE3D27D4EB4F) ^
        ((uint64_t) gen + 1) * UINT64_C(0x165667B19E3779F9);

    x ^= x >> 30;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 27;
    x *= UINT64_C(0x94D049BB133111EB);
    x ^= x >> 31;
    return (unsigned char) x;
}

static inline int64_t fault_region(int64_t i, int rank, int nprocs, int64_t t)
{
    return (i * nprocs + rank) * t;
}

/* Whether region i gets a phase-C rewrite, and where: [off, off + len). */
static inline int fault_rewrite(int64_t i, int64_t nw, int rank, int nprocs, int64_t t,
                                int64_t *off, int64_t *len)
{
    if (i < nw / 2 || i % 4 != 0)
        return 0;
    *off = fault_region(i, rank, nprocs, t) + t / 4;
    *len = t / 2;
    return 1;
}

#endif
