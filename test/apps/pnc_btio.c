/*
 * The I/O of NAS BT-IO, written with PnetCDF: a 3-D grid of 5-component cells decomposed in
 * 3-D blocks over the ranks (MPI_Dims_create; uneven blocks, since the grid sizes are not
 * multiples of the process grid), one record per time step. Each rank keeps its block in memory
 * with GHOST ghost cells on every side, as a solver does, and writes the interior with the
 * flexible API: one MPI subarray datatype describes the interior of the buffer.
 *
 *   u(time, z, y, x, c)   double; rank r writes its block of every step
 *   coords(z, y, x)       int; the rank that owns each cell (fixed size, written once)
 *
 * Steps 0..STEPS-1 are written with ncmpi_put_vara_all (coll), ncmpi_put_vara (indep), or all
 * as nonblocking ncmpi_iput_vara requests, completed by one ncmpi_wait_all after the last step
 * (nb; each step keeps its own buffer until then). After step SYNC_STEP each rank reads its
 * own block of that step back into a fresh ghosted buffer (the ghosts must stay untouched), then
 * after ncmpi_sync it reads the block of the next rank. After close, the file is re-opened
 * read-only and every rank checks, in a different decomposition (the blocks shifted by one
 * rank), every step.
 */
#include "pnc_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GZ 9
#define GY 11
#define GX 13
#define NC 5 /* components per cell */
#define GHOST 2
#define STEPS 4
#define SYNC_STEP 1
#define GHOST_VALUE (-7.0)

struct block {
    MPI_Offset start[3], count[3];
    size_t cells; /* interior cells */
    size_t dim[3]; /* buffer dimensions, ghosts included */
    MPI_Datatype interior;
};

/* The block of rank r in the process grid pdims (row-major rank order), its buffer shape and
 * the subarray type of its interior. */
static void block_of(int r, const int pdims[3], struct block *b)
{
    static const MPI_Offset global[3] = {GZ, GY, GX};
    int coord[3] = {r / (pdims[1] * pdims[2]), (r / pdims[2]) % pdims[1], r % pdims[2]};
    int sizes[4], subsizes[4], starts[4];

    b->cells = 1;
    for (int d = 0; d < 3; d++) {
        MPI_Offset base = global[d] / pdims[d], rest = global[d] % pdims[d];

        b->start[d] = coord[d] * base + (coord[d] < rest ? coord[d] : rest);
        b->count[d] = base + (coord[d] < rest ? 1 : 0);
        b->dim[d] = (size_t)b->count[d] + 2 * GHOST;
        b->cells *= (size_t)b->count[d];
        sizes[d] = (int)b->dim[d];
        subsizes[d] = (int)b->count[d];
        starts[d] = GHOST;
    }
    sizes[3] = subsizes[3] = NC;
    starts[3] = 0;
    MPI_Type_create_subarray(4, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &b->interior);
    MPI_Type_commit(&b->interior);
}

static size_t buf_len(const struct block *b)
{
    return b->dim[0] * b->dim[1] * b->dim[2] * NC;
}

static double *new_buf(const struct block *b)
{
    double *buf = malloc(sizeof(double) * buf_len(b));

    if (buf == NULL)
        pnct_fatal("malloc", "out of memory", __FILE__, __LINE__);
    for (size_t i = 0; i < buf_len(b); i++)
        buf[i] = GHOST_VALUE;
    return buf;
}

/* Index in a ghosted buffer of interior cell (z, y, x) (block coordinates), component c. */
static size_t at(const struct block *b, MPI_Offset z, MPI_Offset y, MPI_Offset x, int c)
{
    return ((((size_t)z + GHOST) * b->dim[1] + (size_t)y + GHOST) * b->dim[2] + (size_t)x +
            GHOST) * NC + (size_t)c;
}

static double u_value(int step, MPI_Offset z, MPI_Offset y, MPI_Offset x, int c)
{
    return pnct_value(c, step, (uint64_t)z, (uint64_t)y, (uint64_t)x);
}

static void fill(const struct block *b, double *buf, int step)
{
    for (MPI_Offset z = 0; z < b->count[0]; z++)
        for (MPI_Offset y = 0; y < b->count[1]; y++)
            for (MPI_Offset x = 0; x < b->count[2]; x++)
                for (int c = 0; c < NC; c++)
                    buf[at(b, z, y, x, c)] = u_value(step, b->start[0] + z, b->start[1] + y,
                                                     b->start[2] + x, c);
}

/* Checks a ghosted buffer read back for block b of step `step`: interior values, and ghosts
 * untouched; prints the first few wrong values. */
static void check_buf(const struct block *b, const double *buf, int step, const char *what)
{
    size_t bad = 0, ghosts_bad = 0;
    double *want = new_buf(b);

    fill(b, want, step);
    for (size_t i = 0; i < buf_len(b); i++) {
        if (buf[i] == want[i])
            continue;
        if (want[i] == GHOST_VALUE)
            ghosts_bad++;
        else if (bad++ < 3)
            CHECK(0, "%s, step %d: element %zu = %.17g, expected %.17g", what, step, i, buf[i],
                  want[i]);
    }
    CHECK(bad == 0, "%s, step %d: %zu wrong values", what, step, bad);
    CHECK(ghosts_bad == 0, "%s, step %d: %zu ghost cells overwritten", what, step, ghosts_bad);
    free(want);
}

/* Reads block b of step `step` into a fresh ghosted buffer, collectively, and checks it. */
static void read_check(int ncid, int varid, const struct block *b, int step, const char *what)
{
    MPI_Offset start[5] = {step, b->start[0], b->start[1], b->start[2], 0};
    MPI_Offset count[5] = {1, b->count[0], b->count[1], b->count[2], NC};
    double *buf = new_buf(b);

    NCOK(ncmpi_get_vara_all(ncid, varid, start, count, buf, 1, b->interior));
    check_buf(b, buf, step, what);
    free(buf);
}

int main(int argc, char **argv)
{
    const char *name;
    enum pnct_mode mode;
    int pdims[3] = {0, 0, 0}, dims[5], u, owner, ncid, req[STEPS], st[STEPS];
    struct block mine, next;
    double *buf[STEPS];
    int *own;
    MPI_Offset nrecs = -1;

    pnct_init(&argc, &argv, &name, &mode);
    MPI_Dims_create(pnct_size, 3, pdims);
    block_of(pnct_rank, pdims, &mine);
    block_of((pnct_rank + 1) % pnct_size, pdims, &next);

    NCOK(ncmpi_create(MPI_COMM_WORLD, name, NC_CLOBBER | NC_64BIT_OFFSET | pnct_share(),
                      MPI_INFO_NULL, &ncid));
    pnct_check_drivers(ncid);
    pnct_set_fill(ncid);
    NCOK(ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dims[0]));
    NCOK(ncmpi_def_dim(ncid, "z", GZ, &dims[1]));
    NCOK(ncmpi_def_dim(ncid, "y", GY, &dims[2]));
    NCOK(ncmpi_def_dim(ncid, "x", GX, &dims[3]));
    NCOK(ncmpi_def_dim(ncid, "c", NC, &dims[4]));
    NCOK(ncmpi_def_var(ncid, "u", NC_DOUBLE, 5, dims, &u));
    NCOK(ncmpi_def_var(ncid, "owner", NC_INT, 3, &dims[1], &owner));
    NCOK(ncmpi_put_att_int(ncid, owner, "process_grid", NC_INT, 3, pdims));
    NCOK(ncmpi_enddef(ncid));

    /* owner: a contiguous buffer, the plain API. */
    own = malloc(sizeof(int) * (mine.cells > next.cells ? mine.cells : next.cells));
    if (own == NULL)
        pnct_fatal("malloc", "out of memory", __FILE__, __LINE__);
    for (size_t i = 0; i < mine.cells; i++)
        own[i] = pnct_rank;
    if (mode == PNCT_INDEP) {
        NCOK(ncmpi_begin_indep_data(ncid));
        NCOK(ncmpi_put_vara_int(ncid, owner, mine.start, mine.count, own));
    } else {
        NCOK(ncmpi_put_vara_int_all(ncid, owner, mine.start, mine.count, own));
    }

    for (int t = 0; t < STEPS; t++) {
        MPI_Offset s[5] = {t, mine.start[0], mine.start[1], mine.start[2], 0};
        MPI_Offset c[5] = {1, mine.count[0], mine.count[1], mine.count[2], NC};

        buf[t] = new_buf(&mine);
        fill(&mine, buf[t], t);
        switch (mode) {
        case PNCT_COLL:
            NCOK(ncmpi_put_vara_all(ncid, u, s, c, buf[t], 1, mine.interior));
            break;
        case PNCT_INDEP:
            NCOK(ncmpi_put_vara(ncid, u, s, c, buf[t], 1, mine.interior));
            break;
        case PNCT_NB:
            NCOK(ncmpi_iput_vara(ncid, u, s, c, buf[t], 1, mine.interior, &req[t]));
            break;
        }
        if (t == SYNC_STEP && mode != PNCT_NB) {
            if (mode == PNCT_INDEP)
                NCOK(ncmpi_end_indep_data(ncid));
            read_check(ncid, u, &mine, t, "own block before sync");
            NCOK(ncmpi_sync(ncid));
            read_check(ncid, u, &next, t, "next rank's block after sync");
            if (mode == PNCT_INDEP)
                NCOK(ncmpi_begin_indep_data(ncid));
        }
    }
    if (mode == PNCT_INDEP)
        NCOK(ncmpi_end_indep_data(ncid));
    if (mode == PNCT_NB) {
        NCOK(ncmpi_wait_all(ncid, STEPS, req, st));
        for (int t = 0; t < STEPS; t++)
            NCOK(st[t]);
        read_check(ncid, u, &mine, SYNC_STEP, "own block before sync");
        NCOK(ncmpi_sync(ncid));
        read_check(ncid, u, &next, SYNC_STEP, "next rank's block after sync");
    }
    for (int t = 0; t < STEPS; t++)
        free(buf[t]);
    NCOK(ncmpi_close(ncid));

    /* Every step, read-only, in the shifted decomposition. */
    NCOK(ncmpi_open(MPI_COMM_WORLD, name, NC_NOWRITE, MPI_INFO_NULL, &ncid));
    NCOK(ncmpi_inq_dimlen(ncid, dims[0], &nrecs));
    CHECK(nrecs == STEPS, "%lld records after re-open, expected %d", (long long)nrecs, STEPS);
    for (int t = 0; t < STEPS; t++)
        read_check(ncid, u, &next, t, "after re-open");
    NCOK(ncmpi_get_vara_int_all(ncid, owner, next.start, next.count, own));
    for (size_t i = 0; i < next.cells; i++)
        CHECK(own[i] == (pnct_rank + 1) % pnct_size, "owner[%zu] = %d", i, own[i]);
    NCOK(ncmpi_close(ncid));
    free(own);
    MPI_Type_free(&mine.interior);
    MPI_Type_free(&next.interior);
    return pnct_finalize("pnc_btio");
}
