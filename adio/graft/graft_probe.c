/*
 * graft_probe PATH: does the MPI library this is linked against route PATH to the bblog driver?
 *
 * Run by check-mpi.sh under mpiexec after a build: opens PATH collectively (create, read-write),
 * and prints one RESULT line on rank 0:
 *   RESULT unresolved <msg>   ROMIO did not know the prefix: the graft did not take.
 *   RESULT driver-error <msg> ROMIO chose a driver, whose open (or a later call) failed.
 *   RESULT ok fs=<name> data=<ok|bad>
 *                             the file opened; fs is ROMIO's romio_filesystem_type hint, i.e. the
 *                             name in the driver's operations table; data says whether each
 *                             rank's record reads back, after close, through plain ufs.
 * Exits 0 whenever it could tell which of these happened; the caller decides what is fatal.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * How MPICH reports a prefix no driver claims: the generic text of **iofstypeunsupported
 * (src/mpi/errhan/errnames.txt), or, in the error stack, the key of its specific form.
 */
static int fs_unresolved(const char *msg)
{
    return strstr(msg, "filesystem is not available") != NULL ||
           strstr(msg, "iofstypeunsupported") != NULL;
}

static int rank;

static void report_error(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    MPI_Error_string(rc, msg, &len);
    msg[len] = '\0';
    /* One line per result: MPICH's error stacks span several. */
    for (char *p = msg; (p = strchr(p, '\n')) != NULL;)
        *p = ' ';
    if (rank == 0) {
        printf("RESULT %s %s: %s\n",
               fs_unresolved(msg) ? "unresolved" : "driver-error", what, msg);
    }
}

/* Strips one "prefix:" so that the reread goes through ufs, not through the driver under test. */
static const char *plain_path(const char *path)
{
    const char *colon = strchr(path, ':');

    return colon && colon > path + 1 ? colon + 1 : path;
}

/* Rank 0 reads every rank's record back with the ufs driver (where the name "ufs:PATH" reaches
 * no ROMIO, as under Open MPI 5's OMPIO, with the plain path); returns 1 if all match. */
static int reread_ok(const char *path, int nprocs)
{
    char ufs[4096];
    MPI_File fh;
    int ok = 0;
    int *got;

    snprintf(ufs, sizeof ufs, "ufs:%s", plain_path(path));
    got = calloc((size_t)nprocs, sizeof *got);
    if (got == NULL)
        return 0;
    if (MPI_File_open(MPI_COMM_SELF, ufs, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) == MPI_SUCCESS ||
        MPI_File_open(MPI_COMM_SELF, plain_path(path), MPI_MODE_RDONLY, MPI_INFO_NULL,
                      &fh) == MPI_SUCCESS) {
        MPI_Status st;
        int count = 0;

        if (MPI_File_read_at(fh, 0, got, nprocs, MPI_INT, &st) == MPI_SUCCESS &&
            MPI_Get_count(&st, MPI_INT, &count) == MPI_SUCCESS && count == nprocs) {
            ok = 1;
            for (int i = 0; i < nprocs; i++)
                ok &= got[i] == 1000 + i;
        }
        MPI_File_close(&fh);
    }
    free(got);
    return ok;
}

int main(int argc, char **argv)
{
    char fsname[MPI_MAX_INFO_VAL + 1] = "?";
    MPI_File fh;
    MPI_Info info;
    int nprocs, rc, flag = 0, data_ok;
    int record;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: graft_probe PATH\n");
        MPI_Finalize();
        return 2;
    }

    rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                       &fh);
    if (rc != MPI_SUCCESS) {
        report_error("open", rc);
        MPI_Finalize();
        return 0;
    }
    if (MPI_File_get_info(fh, &info) == MPI_SUCCESS) {
        MPI_Info_get(info, "romio_filesystem_type", MPI_MAX_INFO_VAL, fsname, &flag);
        MPI_Info_free(&info);
    }

    record = 1000 + rank;
    rc = MPI_File_write_at_all(fh, (MPI_Offset)rank * (MPI_Offset)sizeof record, &record, 1,
                               MPI_INT, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        report_error("write_at_all", rc);
        MPI_File_close(&fh);
        MPI_Finalize();
        return 0;
    }
    rc = MPI_File_close(&fh);
    if (rc != MPI_SUCCESS) {
        report_error("close", rc);
        MPI_Finalize();
        return 0;
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        data_ok = reread_ok(argv[1], nprocs);
        printf("RESULT ok fs=%s data=%s\n", flag ? fsname : "?", data_ok ? "ok" : "bad");
    }
    MPI_Finalize();
    return 0;
}
