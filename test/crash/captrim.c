/*
 * The job of run-crash.sh's case trim-superseded[bbcap]: a process trims from its log bytes
 * that another process overwrote later, then the job dies before any sync.
 *
 * Usage: captrim TARGET SIDEDIR BBDIR
 * Hints come from the environment (BBLOG_SYNC=bb and a small BBLOG_MAX_SIZE). Rank 0 writes
 * OLD_BYTE over [0, CHUNK), and a sync acknowledges it. The last rank then writes NEW_BYTE over
 * the same bytes, in a later collective call, and makes no sync. Rank 0 goes on writing filler
 * elsewhere until its log no longer holds [0, CHUNK): its drain either wrote those bytes to the
 * PFS or left them out as overwritten, and gave their space back (its data log starts with a
 * hole past them). Then every rank records that in SIDEDIR/trimmed and kills itself.
 *
 * After a replay [0, CHUNK) must hold OLD_BYTE or NEW_BYTE in every byte: OLD_BYTE was
 * acknowledged, and NEW_BYTE is the newer write. Zeros mean rank 0 trimmed its bytes relying on
 * a write the crash took back. Exit 2: the trim never happened (the case proves nothing).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (64 * 1024)
#define OLD_BYTE 0xaa
#define NEW_BYTE 0xbb
#define FILLER_AT (1 << 20)
#define MAX_CALLS 256

static int rank;

static void check(int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return;
    MPI_Error_string(rc, s, &len);
    s[len] = '\0';
    fprintf(stderr, "captrim rank %d: %s: %s\n", rank, what, s);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* Whether rank 0's data log (BBDIR/bblog-UID/JOB...r0.data) no longer holds its first CHUNK
 * bytes: holes were punched there. */
static int first_chunk_given_back(const char *bbdir)
{
    char dir[4096], path[8192];
    struct dirent *d;
    DIR *sub;
    int found = 0;

    snprintf(dir, sizeof dir, "%s/bblog-%u", bbdir, (unsigned) getuid());
    if (!(sub = opendir(dir)))
        return 0;
    while (!found && (d = readdir(sub))) {
        size_t n = strlen(d->d_name);
        int fd;
        off_t at;

        if (n < 8 || strcmp(d->d_name + n - 8, ".r0.data") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, d->d_name);
        if ((fd = open(path, O_RDONLY)) < 0)
            continue;
        at = lseek(fd, 0, SEEK_DATA);
        found = (at < 0 && errno == ENXIO) || at >= CHUNK;
        close(fd);
    }
    closedir(sub);
    return found;
}

int main(int argc, char **argv)
{
    static unsigned char old[CHUNK], new[CHUNK], filler[CHUNK];
    char path[4096];
    MPI_File fh;
    int nprocs, last, i, done = 0, fd;

    if (argc != 4) {
        fprintf(stderr, "usage: captrim TARGET SIDEDIR BBDIR\n");
        return 1;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    last = nprocs - 1;
    if (nprocs < 2) {
        fprintf(stderr, "captrim: needs 2 processes or more\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(old, OLD_BYTE, sizeof old);
    memset(new, NEW_BYTE, sizeof new);
    memset(filler, 0x5f, sizeof filler);
    check(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh), "MPI_File_open");
    check(MPI_File_write_at_all(fh, 0, old, rank == 0 ? CHUNK : 0, MPI_BYTE,
                                MPI_STATUS_IGNORE), "writing the old bytes");
    check(MPI_File_sync(fh), "MPI_File_sync");
    check(MPI_File_write_at_all(fh, 0, new, rank == last ? CHUNK : 0, MPI_BYTE,
                                MPI_STATUS_IGNORE), "writing the new bytes");
    for (i = 0; i < MAX_CALLS && !done; i++) {
        check(MPI_File_write_at_all(fh, FILLER_AT + (MPI_Offset) i * CHUNK, filler,
                                    rank == 0 ? CHUNK : 0, MPI_BYTE, MPI_STATUS_IGNORE),
              "writing filler");
        if (rank == 0)
            done = first_chunk_given_back(argv[3]);
        MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (!done) {
        if (rank == 0)
            fprintf(stderr, "captrim: after %d filler writes rank 0's log still holds its "
                    "first bytes: nothing was trimmed\n", MAX_CALLS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) {
        snprintf(path, sizeof path, "%s/trimmed", argv[2]);
        if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 ||
            write(fd, "1\n", 2) != 2 || fsync(fd) != 0) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    raise(SIGKILL);
    return 0;
}
