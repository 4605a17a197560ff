/*
 * devdir.c - writes one file with a per-rank burst-buffer directory (issue 8: "a bblog_dir on a
 * different device per rank"); run by test/mpi/run-devdir.sh.
 *
 * Usage: devdir FILE EVEN_DIR ODD_DIR [SIDE_DIR]
 * Even ranks set the hint bblog_dir=EVEN_DIR, odd ranks bblog_dir=ODD_DIR (only for bblog:
 * names; a ufs: name gets no bblog_ hint). With P ranks and S = 4096, the file is P regions of S
 * bytes, region r starting at r*S:
 *   1. MPI_File_write_at_all: rank r fills its region r (collective call 0);
 *   2. after a barrier, MPI_File_write_at: rank r writes 8 chunks of 300 bytes, 512 apart, into
 *      region (r+1) mod P (another rank's bytes, whose log lives on the other device when P is
 *      even), then rewrites its first chunk there with other bytes (a rewrite of its own bytes);
 *   3. MPI_File_sync, MPI_Barrier, MPI_File_sync (what MPI requires before another process's
 *      later write counts as later: without the barrier plain ROMIO itself may apply step 5
 *      of one rank before step 2 of another);
 *   4. with SIDE_DIR: rank r creates SIDE_DIR/acked.r and waits to be killed (the crash case:
 *      with bblog_sync=bb the data of steps 1-2 is then only in the logs);
 *   5. MPI_File_write_at: rank r writes 4 chunks of 700 bytes, 1024 apart, starting 256 bytes
 *      into region (r+P-1) mod P, over bytes of step 1 and 2 of other ranks;
 *   6. MPI_File_close.
 * Plain ROMIO writes at once, so the later write wins everywhere; bblog gives the same bytes by
 * ordering writes of different processes by the collective calls between them. The runner
 * compares the file with the ufs: one byte for byte.
 * Exit: 0 done, 1 an MPI-IO error (the message names the call).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define REGION 4096

static int rank, nprocs;

static void check(int err, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;

    if (err == MPI_SUCCESS)
        return;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "devdir: rank %d: %s: %s\n", rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Byte j of the write numbered id of this rank: different for every write and rank. */
static void pattern(unsigned char *buf, int len, int id)
{
    for (int j = 0; j < len; j++)
        buf[j] = (unsigned char)(rank * 53 + id * 17 + j * 7 + (j >> 8) + 1);
}

static void write_at(MPI_File fh, MPI_Offset off, int len, int id, int coll)
{
    unsigned char buf[REGION];
    MPI_Status st;

    pattern(buf, len, id);
    if (coll)
        check(MPI_File_write_at_all(fh, off, buf, len, MPI_BYTE, &st), "MPI_File_write_at_all");
    else
        check(MPI_File_write_at(fh, off, buf, len, MPI_BYTE, &st), "MPI_File_write_at");
}

int main(int argc, char **argv)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Offset next, prev;
    int id = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 4 && argc != 5) {
        if (rank == 0)
            fprintf(stderr, "usage: devdir FILE EVEN_DIR ODD_DIR [SIDE_DIR]\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Info_create(&info);
    if (strncmp(argv[1], "bblog:", 6) == 0)
        MPI_Info_set(info, "bblog_dir", argv[rank % 2 == 0 ? 2 : 3]);
    check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh),
          "MPI_File_open");
    MPI_Info_free(&info);

    next = (MPI_Offset)((rank + 1) % nprocs) * REGION;
    prev = (MPI_Offset)((rank + nprocs - 1) % nprocs) * REGION;
    write_at(fh, (MPI_Offset)rank * REGION, REGION, id++, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 8; i++)
        write_at(fh, next + i * 512, 300, id++, 0);
    write_at(fh, next, 200, id++, 0);
    check(MPI_File_sync(fh), "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    check(MPI_File_sync(fh), "MPI_File_sync");
    if (argc == 5) {
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s/acked.%d", argv[4], rank);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
        for (;;)
            pause(); /* the runner kills the job with SIGKILL */
    }
    for (int i = 0; i < 4; i++)
        write_at(fh, prev + 256 + i * 1024, 700, id++, 0);
    check(MPI_File_close(&fh), "MPI_File_close");
    MPI_Finalize();
    return 0;
}
