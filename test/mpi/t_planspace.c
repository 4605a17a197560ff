/*
 * The spacing of a background drain's planning points (ad_bblog_bg_plan.c) after a collective call
 * that brought no bytes. MPI_File_set_size on the file just opened, as HDF5 does when it
 * creates a file over an existing one (H5F_ACC_TRUNC), is a planning point with nothing
 * logged anywhere. A point that brings few bytes doubles the spacing to the next one; one that
 * brings none says nothing about the write rate and must leave it as it is, or the first
 * output phases of the job plan nothing, and nothing they wrote with collective calls drains
 * while the application computes (HDF5's VPIC-IO pattern over an existing file drained
 * everything at MPI_Finalize). NCALLS collective writes follow the set_size; run-diff's
 * [stats] case checks that one of them was a planning point (the drain thread's "plans"),
 * and the file is checked against the image.
 */
#include "common.h"

#define PIECE 65536
#define NCALLS 12       /* more than ADIOI_BBLOG_PLAN_EVERY (8), less than twice that */

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    struct tst_image img;
    MPI_File fh;

    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_MPI(MPI_File_set_size(fh, 0));
    tst_img_set_size(&img, 0);
    tst_write_interleaved(fh, NCALLS, PIECE, 1, &img);
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    return tst_finalize();
}
