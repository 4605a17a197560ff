/*
 * HDF5 datasets written in blocks per rank: what a domain-decomposed simulation writes.
 *
 *   contig2d   contiguous, rows split between ranks (one 2-D block each)
 *   chunk2d    the same shape, chunked with chunks that straddle rank boundaries; written twice
 *              (the second step overwrites the first)
 *   strided    chunked, each rank owns every size-th pair of columns (a strided hyperslab:
 *              start 2r, stride 2 * size, block 2)
 *   cube       contiguous 3-D, a (px, py) decomposition from MPI_Dims_create, one block each
 *   cubechunk  the same, chunked
 *
 * Each rank reads its own part back right after writing it; every rank reads each dataset back
 * whole after H5Fflush, barrier, H5Fflush, before the file is closed, then again after it is
 * re-opened read-only.
 */
#include "h5common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 3

/* One dataset and this rank's hyperslab in it. */
struct ds {
    const char *name;
    int rank;
    hsize_t dims[MAXD];
    hsize_t chunk[MAXD];  /* all zero: contiguous */
    hsize_t start[MAXD], stride[MAXD], count[MAXD], block[MAXD];
    int step;             /* the step of the last write */
};

/* The n-th selected coordinate along dimension d of the hyperslab (n < count * block). */
static hsize_t coord(const struct ds *s, int d, hsize_t n)
{
    return s->start[d] + (n / s->block[d]) * s->stride[d] + n % s->block[d];
}

static void write_ds(hid_t file, struct ds *s, hid_t dxpl, int step, int create)
{
    hsize_t sel[MAXD] = {1, 1, 1}, total = 1, n, idx[MAXD] = {0, 0, 0};
    hid_t dset, fspace, mspace;
    double *buf;
    int d, bad = 0;

    for (d = 0; d < s->rank; d++) {
        sel[d] = s->count[d] * s->block[d];
        total *= sel[d];
    }
    buf = malloc(total * sizeof *buf);
    if (buf == NULL)
        h5t_fatal("malloc", __FILE__, __LINE__);
    /* Row-major over the selected coordinates: HDF5's order for a hyperslab selection. */
    for (n = 0; n < total; n++) {
        hsize_t r = n;
        for (d = s->rank - 1; d >= 0; d--) {
            idx[d] = coord(s, d, r % sel[d]);
            r /= sel[d];
        }
        buf[n] = h5t_value(idx[0], idx[1], idx[2], step);
    }
    if (create) {
        hid_t space = H5OK(H5Screate_simple(s->rank, s->dims, NULL));
        hid_t dcpl = h5t_dcpl(s->chunk[0] ? s->rank : 0, s->chunk);
        dset = H5OK(H5Dcreate2(file, s->name, H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl,
                                  H5P_DEFAULT));
        H5OK(H5Pclose(dcpl));
        H5OK(H5Sclose(space));
    } else {
        dset = H5OK(H5Dopen2(file, s->name, H5P_DEFAULT));
    }
    fspace = H5OK(H5Dget_space(dset));
    H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, s->start, s->stride, s->count,
                                s->block));
    mspace = H5OK(H5Screate_simple(1, &total, NULL));
    H5OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf));
    /* Read-back of this rank's own part at once, before any flush: a process always sees its
     * own writes (DESIGN.md section 3). */
    memset(buf, 0, total * sizeof *buf);
    H5OK(H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf));
    for (n = 0; n < total; n++) {
        hsize_t r = n;
        for (d = s->rank - 1; d >= 0; d--) {
            idx[d] = coord(s, d, r % sel[d]);
            r /= sel[d];
        }
        if (buf[n] != h5t_value(idx[0], idx[1], idx[2], step) && bad++ < 5)
            CHECK(0, "own read-back %s: element %llu of the selection is %.17g", s->name,
                  (unsigned long long)n, buf[n]);
    }
    CHECK(bad == 0, "own read-back %s: %d wrong elements of %llu", s->name, bad,
          (unsigned long long)total);
    H5OK(H5Sclose(mspace));
    H5OK(H5Sclose(fspace));
    H5OK(H5Dclose(dset));
    s->step = step;
    free(buf);
}

/* Reads the whole dataset and checks every value; `when` names the moment in messages. */
static void check_ds(hid_t file, const struct ds *s, hid_t dxpl, const char *when)
{
    hsize_t total = 1, n, idx[MAXD] = {0, 0, 0}, got[MAXD];
    hid_t dset, space;
    double *buf;
    int d, nd, bad = 0;

    for (d = 0; d < s->rank; d++)
        total *= s->dims[d];
    buf = malloc(total * sizeof *buf);
    if (buf == NULL)
        h5t_fatal("malloc", __FILE__, __LINE__);
    dset = H5OK(H5Dopen2(file, s->name, H5P_DEFAULT));
    space = H5OK(H5Dget_space(dset));
    nd = H5OK(H5Sget_simple_extent_dims(space, got, NULL));
    CHECK(nd == s->rank, "%s %s: rank %d, expected %d", when, s->name, nd, s->rank);
    for (d = 0; d < s->rank && d < nd; d++)
        CHECK(got[d] == s->dims[d], "%s %s: dimension %d is %llu, expected %llu", when, s->name,
              d, (unsigned long long)got[d], (unsigned long long)s->dims[d]);
    H5OK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, buf));
    for (n = 0; n < total; n++) {
        hsize_t r = n;
        double want;
        for (d = s->rank - 1; d >= 0; d--) {
            idx[d] = r % s->dims[d];
            r /= s->dims[d];
        }
        want = h5t_value(idx[0], idx[1], idx[2], s->step);
        if (buf[n] != want && bad++ < 5)
            CHECK(0, "%s %s: element %llu is %.17g, expected %.17g", when, s->name,
                  (unsigned long long)n, buf[n], want);
    }
    CHECK(bad == 0, "%s %s: %d wrong elements of %llu", when, s->name, bad,
          (unsigned long long)total);
    H5OK(H5Sclose(space));
    H5OK(H5Dclose(dset));
    free(buf);
}

static void flush_barrier_flush(hid_t file)
{
    H5OK(H5Fflush(file, H5F_SCOPE_GLOBAL));
    MPI_Barrier(MPI_COMM_WORLD);
    H5OK(H5Fflush(file, H5F_SCOPE_GLOBAL));
}

int main(int argc, char **argv)
{
    const char *name;
    int coll, dims2[2] = {0, 0}, px, py, cx, cy, i;
    hid_t fapl, dxpl, file;
    hsize_t p;

    h5t_init(&argc, &argv, &name, &coll);
    p = (hsize_t)h5t_size;
    MPI_Dims_create(h5t_size, 2, dims2);
    px = dims2[0];
    py = dims2[1];
    cx = h5t_rank / py;
    cy = h5t_rank % py;
    const hsize_t r = (hsize_t)h5t_rank;
    struct ds sets[] = {
        {"contig2d", 2, {4 * p, 1000}, {0}, {4 * r, 0}, {1, 1}, {1, 1}, {4, 1000}, 0},
        {"chunk2d", 2, {4 * p, 37}, {3, 10}, {4 * r, 0}, {1, 1}, {1, 1}, {4, 37}, 0},
        {"strided", 2, {6, 16 * p}, {6, 5}, {0, 2 * r}, {1, 2 * p}, {1, 8}, {6, 2}, 0},
        {"cube", 3, {3 * (hsize_t)px, 4 * (hsize_t)py, 5}, {0},
         {3 * (hsize_t)cx, 4 * (hsize_t)cy, 0}, {1, 1, 1}, {1, 1, 1}, {3, 4, 5}, 0},
        {"cubechunk", 3, {3 * (hsize_t)px, 4 * (hsize_t)py, 5}, {2, 3, 5},
         {3 * (hsize_t)cx, 4 * (hsize_t)cy, 0}, {1, 1, 1}, {1, 1, 1}, {3, 4, 5}, 0},
    };
    const int nsets = (int)(sizeof sets / sizeof sets[0]);

    fapl = h5t_fapl();
    dxpl = h5t_dxpl(coll);
    file = H5OK(H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    for (i = 0; i < nsets; i++)
        write_ds(file, &sets[i], dxpl, 1, 1);
    /* Read-back of what every rank wrote, before close: H5Fflush (MPI_File_sync in HDF5 1.10),
     * barrier, H5Fflush, as MPI requires for one process to see another's writes. */
    flush_barrier_flush(file);
    for (i = 0; i < nsets; i++)
        check_ds(file, &sets[i], dxpl, "before close");
    /* Overwrite one dataset in place once every rank has read it, and read it back again. */
    MPI_Barrier(MPI_COMM_WORLD);
    write_ds(file, &sets[1], dxpl, 2, 0);
    flush_barrier_flush(file);
    check_ds(file, &sets[1], dxpl, "after overwrite");
    H5OK(H5Fclose(file));

    file = H5OK(H5Fopen(name, H5F_ACC_RDONLY, fapl));
    for (i = 0; i < nsets; i++)
        check_ds(file, &sets[i], dxpl, "after re-open");
    H5OK(H5Fclose(file));
    H5OK(H5Pclose(dxpl));
    H5OK(H5Pclose(fapl));
    return h5t_finalize("h5_blocks");
}
