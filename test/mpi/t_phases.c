/*
 * Planning points of a background drain at the ends of output phases (ad_bblog_bg_plan.c). NPHASES
 * phases of NCALLS collective writes each, every phase over the bytes of the one before (a new
 * generation: the later one must win, whatever the background drain wrote meanwhile),
 * separated by PAUSE_US of idleness that stands for the application's computation: longer
 * than the quiet gap that ends a phase, so each phase's first write starts a new one on every
 * process. Once the processes know the phases' length in collective calls, each phase's last
 * call is a planning point, and no other write is: it ends the phase (no quiet gap to wait
 * for), and its data drains during the computation that follows. run-diff's [stats] case
 * checks the number of points of each process (the drain thread's "plans"), which
 * phase-blind spacing exceeds, and that phases ended at their last call (the drain thread's
 * "phases"); the file is checked against the image.
 */
#include <unistd.h>

#include "common.h"

#define PIECE 4096
#define NPHASES 6
#define NCALLS 36       /* not a multiple of the first spacing (8) */
#define PAUSE_US 300000 /* above the quiet gap of 0.2 s */

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    struct tst_image img;
    MPI_File fh;
    int k;

    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (k = 0; k < NPHASES; k++) {
        if (k > 0)
            usleep(PAUSE_US);
        tst_write_interleaved(fh, NCALLS, PIECE, k + 1, &img);
    }
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    return tst_finalize();
}
