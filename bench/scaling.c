/*
 * scaling.c - what a bblog open costs as the job grows (bench/run-scaling.sh, the scaling notes
 * in bench/results/cluster.md): files on each node's burst buffer while the file is open, and,
 * from bblog_stats at close, the index, the drain's piece lists and the exchanges.
 *
 * Every rank writes COUNT pieces of SIZE bytes, strided across the ranks (piece i of rank r
 * at (i * nprocs + r) * SIZE; with --segmented each rank's pieces one after the other, piece i
 * of rank r at (r * COUNT + i) * SIZE), with MPI_File_write_at_all (or MPI_File_write_at with
 * --indep),
 * then MPI_File_sync (the drain) and a barrier; then the first rank of each node counts the
 * entries of its burst buffer's log directory (DIR/bblog-UID) while the file is still open,
 * and rank 0 prints one JSON line: nodes, ranks, files per node (min and max), and the sync's
 * time. The file is then closed.
 *
 * With --crash the job dies (MPI_Abort) after the sync instead of closing the file: with
 * bblog_sync=bb the logs stay for `bblog replay`, whose time run-scaling.sh measures.
 *
 * Usage: scaling [--indep] [--crash] [--segmented] COUNT SIZE FILE BBDIR
 */
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "scaling: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank, nprocs, noderank, nodes, indep = 0, crash = 0, segmented = 0, err, files = -1;
    int lo, hi, a = 1;
    long count, size, i;
    char dir[4096], *buf;
    MPI_Comm node, leaders;
    MPI_File fh;
    double t0, t_sync;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (; a < argc && strncmp(argv[a], "--", 2) == 0; a++) {
        if (strcmp(argv[a], "--indep") == 0)
            indep = 1;
        else if (strcmp(argv[a], "--crash") == 0)
            crash = 1;
        else if (strcmp(argv[a], "--segmented") == 0)
            segmented = 1;
        else
            break;
    }
    if (argc != a + 4 || (count = atol(argv[a])) <= 0 || (size = atol(argv[a + 1])) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: scaling [--indep] [--crash] [--segmented] COUNT SIZE FILE "
                    "BBDIR\n");
        MPI_Finalize();
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/bblog-%u", argv[a + 3], (unsigned) getuid());
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &noderank);
    MPI_Comm_split(MPI_COMM_WORLD, noderank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
    nodes = 0;
    if (noderank == 0)
        MPI_Comm_size(leaders, &nodes);
    MPI_Bcast(&nodes, 1, MPI_INT, 0, MPI_COMM_WORLD);

    buf = malloc((size_t) size);
    memset(buf, 'a' + rank % 26, (size_t) size);
    err = MPI_File_open(MPI_COMM_WORLD, argv[a + 2], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS)
        die("open", err);
    for (i = 0; i < count; i++) {
        MPI_Offset off = (MPI_Offset) (segmented ? rank * count + i : i * nprocs + rank) * size;
        err = indep ? MPI_File_write_at(fh, off, buf, (int) size, MPI_BYTE, MPI_STATUS_IGNORE) :
            MPI_File_write_at_all(fh, off, buf, (int) size, MPI_BYTE, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            die("write", err);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if ((err = MPI_File_sync(fh)) != MPI_SUCCESS)
        die("sync", err);
    t_sync = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (noderank == 0) {
        DIR *d = opendir(dir);
        struct dirent *e;
        files = 0;
        while (d && (e = readdir(d)))
            files += e->d_name[0] != '.';
        if (d)
            closedir(d);
    }
    lo = files < 0 ? 1 << 30 : files;
    hi = files;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &t_sync, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (crash) {
        if (rank == 0) {
            printf("{\"crashed\": 1, \"ranks\": %d, \"sync_s\": %.4f}\n", nprocs, t_sync);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if ((err = MPI_File_close(&fh)) != MPI_SUCCESS)
        die("close", err);
    if (rank == 0)
        printf("{\"nodes\": %d, \"ranks\": %d, \"pieces_per_rank\": %ld, \"piece_bytes\": %ld, "
               "\"collective\": %d, \"bb_files_per_node_min\": %d, \"bb_files_per_node_max\": %d, "
               "\"sync_s\": %.4f}\n", nodes, nprocs, count, size, !indep, lo, hi, t_sync);
    free(buf);
    if (leaders != MPI_COMM_NULL)
        MPI_Comm_free(&leaders);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
