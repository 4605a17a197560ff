/*
 * The MPI program of the fault tests (run-faults.sh): writes faultpat.h's workload and records
 * what every call returned, going on after errors (files have MPI_ERRORS_RETURN), so that the
 * runner can check that each error reached the caller with the right class and that nothing
 * reported written is missing.
 *
 * Usage: fio TARGET SIDEDIR NW T [overlap]
 * Each rank writes SIDEDIR/res.R: one line per failed call,
 *   write I GEN CLASS   (a write of region I; GEN 1 is its phase-C rewrite)
 *   sync CLASS | close CLASS | open CLASS
 * with the MPI error class name and message, then "done" when MPI_Finalize is next.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faultpat.h"

static FILE *res;
static int rank;

static const char *class_name(int cls)
{
    switch (cls) {
    case MPI_ERR_IO: return "MPI_ERR_IO";
    case MPI_ERR_NO_SPACE: return "MPI_ERR_NO_SPACE";
    case MPI_ERR_QUOTA: return "MPI_ERR_QUOTA";
    case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS";
    case MPI_ERR_FILE: return "MPI_ERR_FILE";
    case MPI_ERR_BAD_FILE: return "MPI_ERR_BAD_FILE";
    case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE";
    case MPI_ERR_READ_ONLY: return "MPI_ERR_READ_ONLY";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    default: return "MPI_ERR_(other class)";
    }
}

/* Records a failed call; returns rc. */
static int note(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING + 1];
    int cls = 0, len = 0;

    if (rc == MPI_SUCCESS)
        return rc;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    msg[len] = '\0';
    for (char *p = msg; *p; p++)
        if (*p == '\n')
            *p = ' ';
    fprintf(res, "%s %s %s\n", what, class_name(cls), msg);
    fflush(res);
    fprintf(stderr, "fio rank %d: %s: %s: %s\n", rank, what, class_name(cls), msg);
    return rc;
}

int main(int argc, char **argv)
{
    char path[4096], what[64];
    unsigned char *buf;
    int nprocs, overlap;
    int64_t nw, t, off, len;
    MPI_File fh;
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 5 || (nw = atoll(argv[3])) <= 0 || (t = atoll(argv[4])) <= 0 || t > (1 << 30)) {
        if (rank == 0)
            fprintf(stderr, "usage: fio TARGET SIDEDIR NW T [overlap]\n");
        MPI_Finalize();
        return 2;
    }
    overlap = argc > 5 && strcmp(argv[5], "overlap") == 0;
    snprintf(path, sizeof path, "%s/res.%d", argv[2], rank);
    res = fopen(path, "w");
    buf = malloc((size_t) t);
    if (!res || !buf) {
        fprintf(stderr, "fio rank %d: cannot create %s or allocate\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (note(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                           MPI_INFO_NULL, &fh), "open") != MPI_SUCCESS) {
        fprintf(res, "done\n");
        fclose(res);
        MPI_Finalize();
        return 0;
    }
    for (int64_t i = 0; i < nw; i++) {
        int rc;

        off = fault_region(i, rank, nprocs, t);
        for (int64_t k = 0; k < t; k++)
            buf[k] = fault_byte(off + k, rank, 0);
        if (i < nw / 2)
            rc = MPI_File_write_at_all(fh, off, buf, (int) t, MPI_BYTE, &st);
        else
            rc = MPI_File_write_at(fh, off, buf, (int) t, MPI_BYTE, &st);
        snprintf(what, sizeof what, "write %lld 0", (long long) i);
        note(rc, what);
        if (i == nw / 2 - 1)
            note(MPI_File_sync(fh), "sync");
    }
    for (int64_t i = 0; overlap && i < nw; i++) {
        if (!fault_rewrite(i, nw, rank, nprocs, t, &off, &len))
            continue;
        for (int64_t k = 0; k < len; k++)
            buf[k] = fault_byte(off + k, rank, 1);
        snprintf(what, sizeof what, "write %lld 1", (long long) i);
        note(MPI_File_write_at(fh, off, buf, (int) len, MPI_BYTE, &st), what);
    }
    note(MPI_File_close(&fh), "close");
    fprintf(res, "done\n");
    fclose(res);
    free(buf);
    MPI_Finalize();
    return 0;
}
