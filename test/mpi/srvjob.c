/*
 * The job of test/mpi/run-srvattack.sh: processes on different nodes (pseudo-nodes of one rank,
 * or the emulated cluster) that read each other's logged bytes through the read servers while
 * an outside process attacks those servers.
 *
 * Usage: srvjob FILE DIR SECONDS
 * Each rank logs a 4 KiB block (independent write), then tells the harness it is ready
 * (DIR/ready.RANK holds its pid, then the ADDR:PORT its open started to listen on: the read
 * server of its node), and then, until DIR/stop exists or SECONDS pass, every 50 ms:
 * reads the next rank's block (an independent read of another node's logged bytes, answered
 * by that node's read server) and checks it, opens /dev/null 64 times and closes those
 * descriptors, and counts its own open descriptors. At the end rank 0 prints one line:
 *   srvjob: reads N worst_ms W bad_reads B failed_opens F max_fds M
 * (worst over ranks, sums of failures). The exit status is non-zero only when a read returned
 * wrong bytes or failed: the harness judges the times and counts against its bounds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

#define BLOCK 4096
#define OPENS 64

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

/* The TCP sockets this process listens on (/proc/self/net/tcp, state 0A, whose inode is one of
 * its descriptors'), as "inode addr:port" lines into out (at most max). Returns how many. */
static int listening(char out[][64], int max)
{
    char line[512], link[64], want[64];
    unsigned a, port, st, n = 0;
    unsigned long inode;
    FILE *f = fopen("/proc/self/net/tcp", "r");
    DIR *d;
    struct dirent *e;

    if (!f)
        return 0;
    while ((int) n < max && fgets(line, sizeof(line), f)) {
        int found = 0;
        if (sscanf(line, " %*d: %8x:%4x %*x:%*x %2x %*x:%*x %*x:%*x %*x %*u %*u %lu", &a, &port,
                   &st, &inode) != 4 || st != 0x0A)
            continue;
        snprintf(want, sizeof(want), "socket:[%lu]", inode);
        if ((d = opendir("/proc/self/fd"))) {
            while (!found && (e = readdir(d))) {
                char fdp[300];
                ssize_t k;
                snprintf(fdp, sizeof(fdp), "/proc/self/fd/%s", e->d_name);
                k = readlink(fdp, link, sizeof(link) - 1);
                found = k > 0 && (link[k] = '\0', strcmp(link, want) == 0);
            }
            closedir(d);
        }
        /* The kernel prints the address as the 32-bit word in host order. */
        if (found)
            snprintf(out[n++], 64, "%lu %u.%u.%u.%u:%u", inode, a & 255, (a >> 8) & 255,
                     (a >> 16) & 255, a >> 24, port);
    }
    fclose(f);
    return (int) n;
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;               /* the directory's own descriptor */
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    char path[4096];
    unsigned char buf[BLOCK];
    double t0, end_at, worst = 0;
    long reads = 0, bad = 0, failed_opens = 0;
    int next, fds[OPENS], max_fds = 0, stop = 0, nbefore, nafter;
    char before[16][64], after[16][64];
    long in[3], out[3];
    double w;
    MPI_File fh;
    MPI_Status st;
    FILE *f;

    REQUIRE(argc >= 4, "usage: srvjob FILE DIR SECONDS");
    next = (tst_rank + 1) % tst_size;
    nbefore = listening(before, 16);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    nafter = listening(after, 16);
    tst_fill(buf, BLOCK, (int64_t) tst_rank * BLOCK, tst_rank, 1);
    CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset) tst_rank * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof(path), "%s/ready.%d", argv[2], tst_rank);
    f = fopen(path, "w");
    REQUIRE(f, "cannot write %s", path);
    fprintf(f, "%ld\n", (long) getpid());
    /* What the open started to listen on: this node's read server, not the MPI's sockets. */
    for (int i = 0; i < nafter; i++) {
        int old = 0;
        for (int j = 0; j < nbefore; j++)
            old |= strcmp(after[i], before[j]) == 0;
        if (!old)
            fprintf(f, "%s\n", strchr(after[i], ' ') + 1);
    }
    fclose(f);
    end_at = now_s() + atof(argv[3]);
    snprintf(path, sizeof(path), "%s/stop", argv[2]);
    while (!stop) {
        struct timespec pause = { 0, 50 * 1000 * 1000 };
        int k, n;

        t0 = now_s();
        memset(buf, 0, sizeof(buf));
        if (MPI_File_read_at(fh, (MPI_Offset) next * BLOCK, buf, BLOCK, MPI_BYTE, &st) !=
            MPI_SUCCESS || tst_status_bytes(&st) != BLOCK ||
            tst_verify(buf, BLOCK, (int64_t) next * BLOCK, next, 1, "the next rank's block"))
            bad++;
        w = now_s() - t0;
        worst = w > worst ? w : worst;
        reads++;
        for (k = 0; k < OPENS; k++)
            if ((fds[k] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
                failed_opens++;
        n = count_fds();
        max_fds = n > max_fds ? n : max_fds;
        for (k = 0; k < OPENS; k++)
            if (fds[k] >= 0)
                close(fds[k]);
        nanosleep(&pause, NULL);
        stop = access(path, F_OK) == 0 || now_s() > end_at;
    }
    /* Whoever stops first waits for the others here, before the collective close. */
    CHECK_MPI(MPI_File_close(&fh));
    in[0] = bad;
    in[1] = failed_opens;
    in[2] = reads;
    MPI_Reduce(in, out, 3, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&worst, &w, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&max_fds, &next, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (tst_rank == 0)
        printf("srvjob: reads %ld worst_ms %.1f bad_reads %ld failed_opens %ld max_fds %d\n",
               out[2], w * 1e3, out[0], out[1], next);
    CHECK(bad == 0, "%ld reads of the next rank's block failed or returned other bytes", bad);
    return tst_finalize();
}
