/*
 * A time-stepping simulation's output: extendible datasets grown step by step, groups and
 * attributes, H5Fflush between steps, and a restart that re-opens the file to append.
 *
 *   /field       chunked (rows unlimited x W columns); every step appends size * ROWS rows,
 *                ROWS per rank, after H5Dset_extent
 *   /time        chunked 1-D, unlimited; one value per step, written by rank 0 only (the other
 *                ranks select nothing, as collective transfers need every rank to take part)
 *   /steps/N     one group per step, with attributes "rows" (int) and "label" (string)
 *   /            attributes "title" (string, at creation) and "nsteps" (int, updated each step)
 *
 * Run 1 writes STEPS1 steps and closes; run 2 re-opens read-write, appends STEPS2 more steps,
 * and closes; then the file is re-opened read-only and checked whole. Each step is read back
 * before the file is closed: each rank its own rows at once, then everything after H5Fflush,
 * barrier, H5Fflush.
 */
#include "h5common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 24
#define ROWS 3
#define STEPS1 4
#define STEPS2 3

static void set_int_attr(hid_t obj, const char *name, int value)
{
    hid_t space = H5OK(H5Screate(H5S_SCALAR)), attr;

    if (H5OK(H5Aexists(obj, name)))
        attr = H5OK(H5Aopen(obj, name, H5P_DEFAULT));
    else
        attr = H5OK(H5Acreate2(obj, name, H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT));
    H5OK(H5Awrite(attr, H5T_NATIVE_INT, &value));
    H5OK(H5Aclose(attr));
    H5OK(H5Sclose(space));
}

static int get_int_attr(hid_t obj, const char *name)
{
    hid_t attr = H5OK(H5Aopen(obj, name, H5P_DEFAULT));
    int value = -1;

    H5OK(H5Aread(attr, H5T_NATIVE_INT, &value));
    H5OK(H5Aclose(attr));
    return value;
}

static void set_str_attr(hid_t obj, const char *name, const char *value)
{
    hid_t type = H5OK(H5Tcopy(H5T_C_S1));
    hid_t space = H5OK(H5Screate(H5S_SCALAR));
    hid_t attr;

    H5OK(H5Tset_size(type, strlen(value) + 1));
    attr = H5OK(H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
    H5OK(H5Awrite(attr, type, value));
    H5OK(H5Aclose(attr));
    H5OK(H5Sclose(space));
    H5OK(H5Tclose(type));
}

static void check_str_attr(hid_t obj, const char *name, const char *want)
{
    hid_t attr = H5OK(H5Aopen(obj, name, H5P_DEFAULT));
    hid_t type = H5OK(H5Aget_type(attr));
    size_t size = H5Tget_size(type);
    char *got = calloc(1, size + 1);

    if (got == NULL)
        h5t_fatal("calloc", __FILE__, __LINE__);
    H5OK(H5Aread(attr, type, got));
    CHECK(strcmp(got, want) == 0, "attribute %s is \"%s\", expected \"%s\"", name, got, want);
    free(got);
    H5OK(H5Tclose(type));
    H5OK(H5Aclose(attr));
}

static void create_file(const char *name, hid_t fapl)
{
    hid_t file = H5OK(H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    hsize_t dims[2] = {0, W}, maxdims[2] = {H5S_UNLIMITED, W}, chunk[2] = {ROWS, 8};
    hsize_t tdim = 0, tmax = H5S_UNLIMITED, tchunk = 4;
    hid_t space, dcpl, dset, group;

    space = H5OK(H5Screate_simple(2, dims, maxdims));
    dcpl = h5t_dcpl(2, chunk);
    dset = H5OK(H5Dcreate2(file, "field", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl,
                           H5P_DEFAULT));
    H5OK(H5Dclose(dset));
    H5OK(H5Pclose(dcpl));
    H5OK(H5Sclose(space));
    space = H5OK(H5Screate_simple(1, &tdim, &tmax));
    dcpl = h5t_dcpl(1, &tchunk);
    dset = H5OK(H5Dcreate2(file, "time", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl,
                           H5P_DEFAULT));
    H5OK(H5Dclose(dset));
    H5OK(H5Pclose(dcpl));
    H5OK(H5Sclose(space));
    group = H5OK(H5Gcreate2(file, "steps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5OK(H5Gclose(group));
    set_str_attr(file, "title", "bblog HDF5 extendible-dataset test");
    set_int_attr(file, "nsteps", 0);
    H5OK(H5Fclose(file));
}

/* Reads rows [row0, row0 + nrows) of /field and checks them against steps. */
static void check_rows(hid_t dset, hid_t dxpl, hsize_t row0, hsize_t nrows, const char *when)
{
    hsize_t start[2] = {row0, 0}, count[2] = {nrows, W}, n, total = nrows * W;
    hid_t fspace = H5OK(H5Dget_space(dset));
    hid_t mspace = H5OK(H5Screate_simple(2, count, NULL));
    double *buf = malloc(total * sizeof *buf);
    int bad = 0;

    if (buf == NULL)
        h5t_fatal("malloc", __FILE__, __LINE__);
    H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
    H5OK(H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf));
    for (n = 0; n < total; n++) {
        hsize_t row = row0 + n / W, col = n % W;
        /* Step s fills rows [s * size * ROWS, (s + 1) * size * ROWS). */
        int step = (int)(row / ((hsize_t)h5t_size * ROWS));
        double want = h5t_value(row, col, 0, step);
        if (buf[n] != want && bad++ < 5)
            CHECK(0, "%s: field[%llu][%llu] is %.17g, expected %.17g", when,
                  (unsigned long long)row, (unsigned long long)col, buf[n], want);
    }
    CHECK(bad == 0, "%s: %d wrong values in rows %llu..%llu", when, bad,
          (unsigned long long)row0, (unsigned long long)(row0 + nrows - 1));
    free(buf);
    H5OK(H5Sclose(mspace));
    H5OK(H5Sclose(fspace));
}

static void check_time(hid_t file, hid_t dxpl, int nsteps, const char *when)
{
    hid_t dset = H5OK(H5Dopen2(file, "time", H5P_DEFAULT));
    hid_t space = H5OK(H5Dget_space(dset));
    hsize_t n = 0;
    double *t;
    int i;

    H5OK(H5Sget_simple_extent_dims(space, &n, NULL));
    CHECK(n == (hsize_t)nsteps, "%s: /time has %llu values, expected %d", when,
          (unsigned long long)n, nsteps);
    t = calloc(n + 1, sizeof *t);
    if (t == NULL)
        h5t_fatal("calloc", __FILE__, __LINE__);
    H5OK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, t));
    for (i = 0; i < (int)n; i++)
        CHECK(t[i] == 0.5 * i, "%s: time[%d] is %g", when, i, t[i]);
    free(t);
    H5OK(H5Sclose(space));
    H5OK(H5Dclose(dset));
}

static void flush_barrier_flush(hid_t file)
{
    H5OK(H5Fflush(file, H5F_SCOPE_GLOBAL));
    MPI_Barrier(MPI_COMM_WORLD);
    H5OK(H5Fflush(file, H5F_SCOPE_GLOBAL));
}

/* Appends step `step` (0-based) to the open file. */
static void write_step(hid_t file, hid_t dxpl, int step)
{
    const hsize_t per_step = (hsize_t)h5t_size * ROWS;
    hsize_t dims[2] = {(hsize_t)(step + 1) * per_step, W};
    hsize_t start[2] = {(hsize_t)step * per_step + (hsize_t)h5t_rank * ROWS, 0};
    hsize_t count[2] = {ROWS, W}, tdims = (hsize_t)step + 1, tstart = (hsize_t)step, one = 1;
    double buf[ROWS * W], tval = 0.5 * step;
    hid_t dset, fspace, mspace, group;
    char gname[32], label[64];
    int i;

    for (i = 0; i < ROWS * W; i++)
        buf[i] = h5t_value(start[0] + (hsize_t)(i / W), (hsize_t)(i % W), 0, step);
    dset = H5OK(H5Dopen2(file, "field", H5P_DEFAULT));
    H5OK(H5Dset_extent(dset, dims));
    fspace = H5OK(H5Dget_space(dset));
    H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
    mspace = H5OK(H5Screate_simple(2, count, NULL));
    H5OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, buf));
    H5OK(H5Sclose(mspace));
    H5OK(H5Sclose(fspace));
    check_rows(dset, dxpl, start[0], ROWS, "own rows before flush");
    H5OK(H5Dclose(dset));

    dset = H5OK(H5Dopen2(file, "time", H5P_DEFAULT));
    H5OK(H5Dset_extent(dset, &tdims));
    fspace = H5OK(H5Dget_space(dset));
    mspace = H5OK(H5Screate_simple(1, &one, NULL));
    if (h5t_rank == 0) {
        H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &tstart, NULL, &one, NULL));
    } else {
        H5OK(H5Sselect_none(fspace));
        H5OK(H5Sselect_none(mspace));
    }
    H5OK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, dxpl, &tval));
    H5OK(H5Sclose(mspace));
    H5OK(H5Sclose(fspace));
    H5OK(H5Dclose(dset));

    snprintf(gname, sizeof gname, "steps/%d", step);
    snprintf(label, sizeof label, "step %d of a %d-rank run", step, h5t_size);
    group = H5OK(H5Gcreate2(file, gname, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    set_int_attr(group, "rows", (int)per_step);
    set_str_attr(group, "label", label);
    H5OK(H5Gclose(group));
    set_int_attr(file, "nsteps", step + 1);

    /* Everything written so far, read back by every rank before close. */
    flush_barrier_flush(file);
    dset = H5OK(H5Dopen2(file, "field", H5P_DEFAULT));
    check_rows(dset, dxpl, 0, dims[0], "after flush");
    H5OK(H5Dclose(dset));
    check_time(file, dxpl, step + 1, "after flush");
    /* The next step extends the datasets: every rank must be done reading them. */
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_file(hid_t file, hid_t dxpl, int nsteps, const char *when)
{
    hid_t dset = H5OK(H5Dopen2(file, "field", H5P_DEFAULT));
    char gname[32], label[64];
    int step;

    check_rows(dset, dxpl, 0, (hsize_t)nsteps * (hsize_t)h5t_size * ROWS, when);
    H5OK(H5Dclose(dset));
    check_time(file, dxpl, nsteps, when);
    CHECK(get_int_attr(file, "nsteps") == nsteps, "%s: attribute nsteps is %d, expected %d",
          when, get_int_attr(file, "nsteps"), nsteps);
    check_str_attr(file, "title", "bblog HDF5 extendible-dataset test");
    for (step = 0; step < nsteps; step++) {
        hid_t group;
        snprintf(gname, sizeof gname, "steps/%d", step);
        snprintf(label, sizeof label, "step %d of a %d-rank run", step, h5t_size);
        group = H5OK(H5Gopen2(file, gname, H5P_DEFAULT));
        CHECK(get_int_attr(group, "rows") == h5t_size * ROWS, "%s: %s rows wrong", when, gname);
        check_str_attr(group, "label", label);
        H5OK(H5Gclose(group));
    }
}

int main(int argc, char **argv)
{
    const char *name;
    int coll, step;
    hid_t fapl, dxpl, file;

    h5t_init(&argc, &argv, &name, &coll);
    fapl = h5t_fapl();
    dxpl = h5t_dxpl(coll);

    create_file(name, fapl);
    file = H5OK(H5Fopen(name, H5F_ACC_RDWR, fapl));
    for (step = 0; step < STEPS1; step++)
        write_step(file, dxpl, step);
    H5OK(H5Fclose(file));

    /* The restart: re-open for append. */
    file = H5OK(H5Fopen(name, H5F_ACC_RDWR, fapl));
    check_file(file, dxpl, STEPS1, "after re-open for append");
    MPI_Barrier(MPI_COMM_WORLD);
    for (step = STEPS1; step < STEPS1 + STEPS2; step++)
        write_step(file, dxpl, step);
    H5OK(H5Fclose(file));

    file = H5OK(H5Fopen(name, H5F_ACC_RDONLY, fapl));
    check_file(file, dxpl, STEPS1 + STEPS2, "after final re-open");
    H5OK(H5Fclose(file));
    H5OK(H5Pclose(dxpl));
    H5OK(H5Pclose(fapl));
    return h5t_finalize("h5_extend");
}
