/*
 * The MPI job of the crash harness (run-crash.sh): writes the schedule of crashpat.h through
 * bblog and records, after each completed MPI_File_sync, which step is acknowledged.
 *
 * Usage: crashwrite TARGET SIDEDIR STEPS
 * Hints come from the environment (BBLOG_SYNC, BBLOG_DIR, ...). Each rank keeps in SIDEDIR:
 *   pid.R   its process id, written before MPI_File_open (the harness kills single ranks by it);
 *   ack.R   8 bytes, the last step whose writes a completed sync covers (-1: none yet; STEPS
 *           after MPI_File_close returned). Written with pwrite + fdatasync after the sync
 *           returned, so a crash can only leave it behind the truth, never ahead of it.
 * SIDEDIR stands for node-local disk: the harness kills processes, not the machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crashpat.h"

static int rank;

static void die(const char *what, int rc)
{
    char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;

    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, s, &len);
        s[len] = '\0';
        fprintf(stderr, "crashwrite rank %d: %s: %s\n", rank, what, s);
    } else {
        fprintf(stderr, "crashwrite rank %d: %s: %s\n", rank, what, strerror(errno));
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

#define CHECK_MPI(call)                                                                     \
    do {                                                                                    \
        int rc_ = (call);                                                                   \
        if (rc_ != MPI_SUCCESS)                                                             \
            die(#call, rc_);                                                                \
    } while (0)

static void ack(int fd, int64_t step)
{
    if (pwrite(fd, &step, sizeof step, 0) != (ssize_t) sizeof step || fdatasync(fd) != 0)
        die("recording the acknowledged step", MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    struct crash_write w[CRASH_WIDS];
    static unsigned char buf[CRASH_SIZE + CRASH_CELL];
    char path[4096];
    int nprocs, fd;
    long steps;
    MPI_File fh;
    MPI_Status st;
    FILE *f;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (argc != 4 || (steps = strtol(argv[3], NULL, 10)) <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: crashwrite TARGET SIDEDIR STEPS\n");
        MPI_Finalize();
        return 2;
    }
    snprintf(path, sizeof path, "%s/ack.%d", argv[2], rank);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path, MPI_SUCCESS);
    ack(fd, -1);
    snprintf(path, sizeof path, "%s/pid.%d", argv[2], rank);
    f = fopen(path, "w");
    if (!f || fprintf(f, "%ld\n", (long) getpid()) < 0 || fclose(f) != 0)
        die(path, MPI_SUCCESS);

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh));
    for (int64_t s = 0; s < steps; s++) {
        int n = crash_writes(s, rank, nprocs, w);

        for (int i = 0; i < n; i++) {
            for (int64_t k = 0; k < w[i].len; k++)
                buf[k] = crash_byte(w[i].off + k, rank, w[i].wid);
            if (w[i].collective)
                CHECK_MPI(MPI_File_write_at_all(fh, w[i].off, buf, (int) w[i].len, MPI_BYTE,
                                                &st));
            else
                CHECK_MPI(MPI_File_write_at(fh, w[i].off, buf, (int) w[i].len, MPI_BYTE, &st));
        }
        if ((s + 1) % CRASH_SYNC_EVERY == 0) {
            CHECK_MPI(MPI_File_sync(fh));
            ack(fd, s);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    CHECK_MPI(MPI_File_close(&fh));
    ack(fd, steps);
    close(fd);
    MPI_Finalize();
    return 0;
}
