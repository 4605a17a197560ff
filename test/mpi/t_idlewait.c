/*
 * The driver's collective calls wait without spinning (ad_bblog_base_wait.c). Every rank logs small
 * interleaved pieces with collective writes; then every rank but 0 sleeps WAIT_S seconds before
 * MPI_File_close, so that rank 0 waits about that long in the close's drain agreement. Through
 * bblog the processor time rank 0 uses in its close (getrusage: user and system time of all its
 * threads) must stay under a third of the wait: MPI's blocking collectives poll all that time
 * (with BBLOG_DEBUG_SPIN=1, which makes the driver use them, this check fails). Through plain
 * ROMIO the time is printed, not checked (its close's barrier polls). The file must equal
 * plain ROMIO's.
 */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>

#define PIECE 4096
#define NPIECE 64
#define WAIT_S 1.0

static double cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double) ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
        (double) ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char buf[PIECE];
    struct tst_image img;
    MPI_File fh;
    MPI_Status st;
    double cpu0, wall0, cpu, wall;
    int i, w;

    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    for (i = 0; i < NPIECE; i++) {
        int64_t off = ((int64_t) i * tst_size + tst_rank) * PIECE;
        tst_fill(buf, PIECE, off, tst_rank, 1);
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, PIECE, MPI_BYTE, &st));
    }
    for (w = 0; w < tst_size; w++)
        for (i = 0; i < NPIECE; i++)
            tst_img_write(&img, ((int64_t) i * tst_size + w) * PIECE, PIECE, w, 1);
    if (tst_rank != 0) {
        struct timespec t = { (time_t) WAIT_S, (long) ((WAIT_S - (time_t) WAIT_S) * 1e9) };
        nanosleep(&t, NULL);
    }
    cpu0 = cpu_seconds();
    wall0 = MPI_Wtime();
    CHECK_MPI(MPI_File_close(&fh));
    cpu = cpu_seconds() - cpu0;
    wall = MPI_Wtime() - wall0;
    if (tst_rank == 0 && tst_size > 1) {
        printf("t_idlewait: rank 0's close took %.3f s, %.3f s of processor time (%s)\n", wall,
               cpu, tst_is_bblog(name) ? "bblog" : "plain ROMIO");
        if (tst_is_bblog(name))
            CHECK(cpu < WAIT_S / 3, "rank 0 used %.3f s of processor time waiting %.3f s in "
                  "its close for the others: the driver's collective calls poll", cpu, wall);
    }
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    return tst_finalize();
}
