/*
 * A time series written with PnetCDF: record variables appended step by step, ncmpi_sync
 * between steps, and a restart that re-opens the file, grows its header and adds a variable
 * (PnetCDF then moves the data already in the file), and appends more steps.
 *
 *   grid(x)          fixed size; each rank writes its block of X columns at creation
 *   temp(time, x)    each rank writes its block of X columns per step (ncmpi_put_vara)
 *   wind(time, y, x) each rank writes every size-th column, all Y rows (ncmpi_put_vars: many
 *                    small writes interleaved with the other ranks')
 *   step(time)       one int per step, by rank 0 only (in collective mode the other ranks take
 *                    part with an empty request)
 *   final(x)         added at the restart, after grid: the record section moves
 *   global attributes "title" at creation, "history" (a long one, so the header grows past
 *   its free space and moves everything behind it) at the restart
 *
 * Run 1 writes STEPS1 steps and closes; run 2 re-opens read-write, re-defines, writes STEPS2
 * more steps and final, and closes; then the file is re-opened read-only and checked whole.
 * Each step is read back before the file is closed: each rank its own data at once (ncmpi_iget
 * in nb mode), then every rank everything after ncmpi_sync.
 */
#include "pnc_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define X 6 /* columns per rank */
#define Y 5
#define STEPS1 4
#define STEPS2 3
#define HISTORY_LEN 3000
#define TITLE "pnc_record: bblog application test"

enum { V_GRID, V_TEMP, V_WIND, V_STEP, V_FINAL, NVARS };

struct file {
    int ncid;
    int var[NVARS];
    enum pnct_mode mode;
    MPI_Offset nx;
};

static double temp_value(int step, MPI_Offset x)
{
    return pnct_value(V_TEMP, step, 0, 0, (uint64_t)x);
}

static double wind_value(int step, MPI_Offset y, MPI_Offset x)
{
    return pnct_value(V_WIND, step, 0, (uint64_t)y, (uint64_t)x);
}

/* Writes a fixed-size variable var(x) from `vals` (this rank's block), in the file's mode. */
static void put_block(struct file *f, int varid, const double *vals)
{
    MPI_Offset start = (MPI_Offset)pnct_rank * X, count = X;
    int req, st;

    switch (f->mode) {
    case PNCT_COLL:
        NCOK(ncmpi_put_vara_double_all(f->ncid, varid, &start, &count, vals));
        break;
    case PNCT_INDEP:
        NCOK(ncmpi_begin_indep_data(f->ncid));
        NCOK(ncmpi_put_vara_double(f->ncid, varid, &start, &count, vals));
        NCOK(ncmpi_end_indep_data(f->ncid));
        break;
    case PNCT_NB:
        NCOK(ncmpi_iput_vara_double(f->ncid, varid, &start, &count, vals, &req));
        NCOK(ncmpi_wait_all(f->ncid, 1, &req, &st));
        NCOK(st);
        break;
    }
}

/* Checks a fixed-size variable var(x) whole, read collectively. */
static void check_fixed(struct file *f, int varid, int vnum, const char *name)
{
    MPI_Offset start = 0, count = f->nx;
    double *got = malloc(sizeof(double) * (size_t)f->nx);

    if (got == NULL)
        pnct_fatal("malloc", "out of memory", __FILE__, __LINE__);
    NCOK(ncmpi_get_vara_double_all(f->ncid, varid, &start, &count, got));
    for (MPI_Offset x = 0; x < f->nx; x++)
        CHECK(got[x] == pnct_value(vnum, 0, 0, 0, (uint64_t)x), "%s[%lld] = %.17g", name,
              (long long)x, got[x]);
    free(got);
}

/* Writes step `t`: this rank's temp block, its wind columns, and step[t] on rank 0. Then reads
 * its own data back at once, except under PnetCDF's burst-buffer driver: PnetCDF 1.12.3's
 * driver counts the new record only when it flushes its log, so a read of the record just
 * written fails with NC_EINVALCOORDS ("Index exceeds dimension bound") until ncmpi_sync, on
 * plain ROMIO too; check_step reads it after ncmpi_sync. */
static void write_step(struct file *f, int t)
{
    MPI_Offset t_start[2] = {t, (MPI_Offset)pnct_rank * X}, t_count[2] = {1, X};
    MPI_Offset w_start[3] = {t, 0, pnct_rank}, w_count[3] = {1, Y, X};
    MPI_Offset w_stride[3] = {1, 1, pnct_size};
    MPI_Offset s_start = t, s_count = pnct_rank == 0 ? 1 : 0;
    double temp[X], wind[Y * X], got_temp[X], got_wind[Y * X];
    int stepv = 1000 + t, got_step = -1;
    int req[6], st[6], nreq = 0;
    int readback = !pnct_pnetcdf_bb();

    for (int x = 0; x < X; x++)
        temp[x] = temp_value(t, (MPI_Offset)pnct_rank * X + x);
    for (int y = 0; y < Y; y++)
        for (int x = 0; x < X; x++)
            wind[y * X + x] = wind_value(t, y, (MPI_Offset)x * pnct_size + pnct_rank);

    switch (f->mode) {
    case PNCT_COLL:
        NCOK(ncmpi_put_vara_double_all(f->ncid, f->var[V_TEMP], t_start, t_count, temp));
        NCOK(ncmpi_put_vars_double_all(f->ncid, f->var[V_WIND], w_start, w_count, w_stride,
                                       wind));
        NCOK(ncmpi_put_vara_int_all(f->ncid, f->var[V_STEP], &s_start, &s_count, &stepv));
        if (!readback)
            return;
        NCOK(ncmpi_get_vara_double_all(f->ncid, f->var[V_TEMP], t_start, t_count, got_temp));
        NCOK(ncmpi_get_vars_double_all(f->ncid, f->var[V_WIND], w_start, w_count, w_stride,
                                       got_wind));
        NCOK(ncmpi_get_vara_int_all(f->ncid, f->var[V_STEP], &s_start, &s_count, &got_step));
        break;
    case PNCT_INDEP:
        NCOK(ncmpi_begin_indep_data(f->ncid));
        NCOK(ncmpi_put_vara_double(f->ncid, f->var[V_TEMP], t_start, t_count, temp));
        NCOK(ncmpi_put_vars_double(f->ncid, f->var[V_WIND], w_start, w_count, w_stride, wind));
        if (pnct_rank == 0)
            NCOK(ncmpi_put_vara_int(f->ncid, f->var[V_STEP], &s_start, &s_count, &stepv));
        if (!readback) {
            NCOK(ncmpi_end_indep_data(f->ncid));
            return;
        }
        NCOK(ncmpi_get_vara_double(f->ncid, f->var[V_TEMP], t_start, t_count, got_temp));
        NCOK(ncmpi_get_vars_double(f->ncid, f->var[V_WIND], w_start, w_count, w_stride,
                                   got_wind));
        if (pnct_rank == 0)
            NCOK(ncmpi_get_vara_int(f->ncid, f->var[V_STEP], &s_start, &s_count, &got_step));
        /* The number of records is agreed on here, collectively. */
        NCOK(ncmpi_end_indep_data(f->ncid));
        break;
    case PNCT_NB:
        NCOK(ncmpi_iput_vara_double(f->ncid, f->var[V_TEMP], t_start, t_count, temp,
                                    &req[nreq++]));
        NCOK(ncmpi_iput_vars_double(f->ncid, f->var[V_WIND], w_start, w_count, w_stride, wind,
                                    &req[nreq++]));
        if (pnct_rank == 0)
            NCOK(ncmpi_iput_vara_int(f->ncid, f->var[V_STEP], &s_start, &s_count, &stepv,
                                     &req[nreq++]));
        NCOK(ncmpi_wait_all(f->ncid, nreq, req, st));
        for (int i = 0; i < nreq; i++)
            NCOK(st[i]);
        if (!readback)
            return;
        nreq = 0;
        NCOK(ncmpi_iget_vara_double(f->ncid, f->var[V_TEMP], t_start, t_count, got_temp,
                                    &req[nreq++]));
        NCOK(ncmpi_iget_vars_double(f->ncid, f->var[V_WIND], w_start, w_count, w_stride,
                                    got_wind, &req[nreq++]));
        if (pnct_rank == 0)
            NCOK(ncmpi_iget_vara_int(f->ncid, f->var[V_STEP], &s_start, &s_count, &got_step,
                                     &req[nreq++]));
        NCOK(ncmpi_wait_all(f->ncid, nreq, req, st));
        for (int i = 0; i < nreq; i++)
            NCOK(st[i]);
        break;
    }
    for (int x = 0; x < X; x++)
        CHECK(got_temp[x] == temp[x], "step %d: own temp[%d] read back as %.17g, wrote %.17g", t,
              x, got_temp[x], temp[x]);
    for (int i = 0; i < Y * X; i++)
        CHECK(got_wind[i] == wind[i], "step %d: own wind element %d read back as %.17g", t, i,
              got_wind[i]);
    if (pnct_rank == 0)
        CHECK(got_step == stepv, "step %d: step read back as %d", t, got_step);
}

/* Checks record t of every record variable, whole, read collectively. */
static void check_step(struct file *f, int t)
{
    MPI_Offset t_start[2] = {t, 0}, t_count[2] = {1, f->nx};
    MPI_Offset w_start[3] = {t, 0, 0}, w_count[3] = {1, Y, f->nx};
    MPI_Offset s_start = t, s_count = 1;
    double *temp = malloc(sizeof(double) * (size_t)f->nx);
    double *wind = malloc(sizeof(double) * (size_t)f->nx * Y);
    int stepv = -1;

    if (temp == NULL || wind == NULL)
        pnct_fatal("malloc", "out of memory", __FILE__, __LINE__);
    NCOK(ncmpi_get_vara_double_all(f->ncid, f->var[V_TEMP], t_start, t_count, temp));
    NCOK(ncmpi_get_vara_double_all(f->ncid, f->var[V_WIND], w_start, w_count, wind));
    NCOK(ncmpi_get_vara_int_all(f->ncid, f->var[V_STEP], &s_start, &s_count, &stepv));
    for (MPI_Offset x = 0; x < f->nx; x++)
        CHECK(temp[x] == temp_value(t, x), "step %d: temp[%lld] = %.17g, expected %.17g", t,
              (long long)x, temp[x], temp_value(t, x));
    for (MPI_Offset y = 0; y < Y; y++)
        for (MPI_Offset x = 0; x < f->nx; x++)
            CHECK(wind[y * f->nx + x] == wind_value(t, y, x),
                  "step %d: wind[%lld][%lld] = %.17g, expected %.17g", t, (long long)y,
                  (long long)x, wind[y * f->nx + x], wind_value(t, y, x));
    CHECK(stepv == 1000 + t, "step %d: step = %d", t, stepv);
    free(temp);
    free(wind);
}

static void check_nrecs(struct file *f, MPI_Offset want, const char *when)
{
    int dim;
    MPI_Offset n = -1;

    NCOK(ncmpi_inq_dimid(f->ncid, "time", &dim));
    NCOK(ncmpi_inq_dimlen(f->ncid, dim, &n));
    CHECK(n == want, "%s: %lld records, expected %lld", when, (long long)n, (long long)want);
}

static void steps(struct file *f, int first, int n)
{
    for (int t = first; t < first + n; t++) {
        write_step(f, t);
        NCOK(ncmpi_sync(f->ncid));
        check_nrecs(f, t + 1, "after ncmpi_sync");
        check_step(f, t);
    }
}

static void history(char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)('a' + (i * 7) % 26);
    buf[len] = '\0';
}

static void inq_vars(struct file *f, int with_final)
{
    static const char *const names[NVARS] = {"grid", "temp", "wind", "step", "final"};

    for (int v = 0; v < NVARS; v++)
        if (v != V_FINAL || with_final)
            NCOK(ncmpi_inq_varid(f->ncid, names[v], &f->var[v]));
}

int main(int argc, char **argv)
{
    const char *name;
    struct file f;
    int dims[3];
    double vals[X];
    char hist[HISTORY_LEN + 1], got[HISTORY_LEN + 1];
    MPI_Offset len;

    pnct_init(&argc, &argv, &name, &f.mode);
    f.nx = (MPI_Offset)X * pnct_size;

    /* Run 1: create, define, STEPS1 steps. */
    NCOK(ncmpi_create(MPI_COMM_WORLD, name, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL,
                      &f.ncid));
    pnct_check_drivers(f.ncid);
    NCOK(ncmpi_def_dim(f.ncid, "time", NC_UNLIMITED, &dims[0]));
    NCOK(ncmpi_def_dim(f.ncid, "y", Y, &dims[1]));
    NCOK(ncmpi_def_dim(f.ncid, "x", f.nx, &dims[2]));
    NCOK(ncmpi_def_var(f.ncid, "grid", NC_DOUBLE, 1, &dims[2], &f.var[V_GRID]));
    NCOK(ncmpi_def_var(f.ncid, "temp", NC_DOUBLE, 2, (int[]){dims[0], dims[2]},
                       &f.var[V_TEMP]));
    NCOK(ncmpi_def_var(f.ncid, "wind", NC_DOUBLE, 3, dims, &f.var[V_WIND]));
    NCOK(ncmpi_def_var(f.ncid, "step", NC_INT, 1, &dims[0], &f.var[V_STEP]));
    NCOK(ncmpi_put_att_text(f.ncid, NC_GLOBAL, "title", strlen(TITLE), TITLE));
    NCOK(ncmpi_enddef(f.ncid));
    for (int x = 0; x < X; x++)
        vals[x] = pnct_value(V_GRID, 0, 0, 0, (uint64_t)pnct_rank * X + x);
    put_block(&f, f.var[V_GRID], vals);
    steps(&f, 0, STEPS1);
    check_fixed(&f, f.var[V_GRID], V_GRID, "grid");
    NCOK(ncmpi_close(f.ncid));

    /* Run 2: re-open, grow the header and add a fixed-size variable (PnetCDF moves the data
     * behind them), STEPS2 more steps. */
    NCOK(ncmpi_open(MPI_COMM_WORLD, name, NC_WRITE, MPI_INFO_NULL, &f.ncid));
    pnct_check_drivers(f.ncid);
    inq_vars(&f, 0);
    check_nrecs(&f, STEPS1, "after re-open");
    NCOK(ncmpi_redef(f.ncid));
    history(hist, HISTORY_LEN);
    NCOK(ncmpi_put_att_text(f.ncid, NC_GLOBAL, "history", HISTORY_LEN, hist));
    NCOK(ncmpi_def_var(f.ncid, "final", NC_DOUBLE, 1, &dims[2], &f.var[V_FINAL]));
    NCOK(ncmpi_enddef(f.ncid));
    for (int t = 0; t < STEPS1; t++)
        check_step(&f, t);
    check_fixed(&f, f.var[V_GRID], V_GRID, "grid after the move");
    steps(&f, STEPS1, STEPS2);
    for (int x = 0; x < X; x++)
        vals[x] = pnct_value(V_FINAL, 0, 0, 0, (uint64_t)pnct_rank * X + x);
    put_block(&f, f.var[V_FINAL], vals);
    NCOK(ncmpi_close(f.ncid));

    /* Everything, read-only. */
    NCOK(ncmpi_open(MPI_COMM_WORLD, name, NC_NOWRITE, MPI_INFO_NULL, &f.ncid));
    inq_vars(&f, 1);
    check_nrecs(&f, STEPS1 + STEPS2, "after the final re-open");
    for (int t = 0; t < STEPS1 + STEPS2; t++)
        check_step(&f, t);
    check_fixed(&f, f.var[V_GRID], V_GRID, "grid");
    check_fixed(&f, f.var[V_FINAL], V_FINAL, "final");
    NCOK(ncmpi_inq_attlen(f.ncid, NC_GLOBAL, "history", &len));
    CHECK(len == HISTORY_LEN, "history has %lld characters", (long long)len);
    if (len == HISTORY_LEN) {
        NCOK(ncmpi_get_att_text(f.ncid, NC_GLOBAL, "history", got));
        got[HISTORY_LEN] = '\0';
        CHECK(strcmp(got, hist) == 0, "history attribute differs");
    }
    NCOK(ncmpi_close(f.ncid));
    return pnct_finalize("pnc_record");
}
