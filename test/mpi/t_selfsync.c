/*
 * PnetCDF's pattern of two handles per file and process: one on MPI_COMM_WORLD for collective
 * calls, one on MPI_COMM_SELF for independent data mode, which PnetCDF syncs on its own. Each
 * rank fills its block collectively through the WORLD handle, then writes the next rank's
 * block collectively (later: it wins), then every rank syncs its SELF handle, one rank after
 * the other (rank 0 first: its data reaches the file before the owner's older fill could).
 * A SELF handle cannot order its process's writes against other processes', so it must not
 * drain the older ones (bblog then drains them at the next collective drain, with the
 * exchange). Finally an independent write through the SELF handle after the collective calls,
 * synced there, must be on the file at once for the others (sync-barrier-sync).
 */
#include "common.h"

#include <stdlib.h>

#define BLK 4096

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    int n = tst_size, r = tst_rank, next = (tst_rank + 1) % tst_size, k, w;
    unsigned char *buf = malloc(BLK);
    struct tst_image img;
    MPI_File fw, fs;
    MPI_Status st;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fw);
    tst_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fs);

    tst_fill(buf, BLK, (int64_t) r * BLK, r, 1);                /* the "fill" */
    CHECK_MPI(MPI_File_write_at_all(fw, (int64_t) r * BLK, buf, BLK, MPI_BYTE, &st));
    tst_fill(buf, BLK, (int64_t) next * BLK, r, 2);             /* the data, later */
    CHECK_MPI(MPI_File_write_at_all(fw, (int64_t) next * BLK, buf, BLK, MPI_BYTE, &st));
    for (w = 0; w < n; w++)
        tst_img_write(&img, (int64_t) ((w + 1) % n) * BLK, BLK, w, 2);
    for (k = 0; k < n; k++) {
        if (k == r)
            CHECK_MPI(MPI_File_sync(fs));
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* Independent write through the SELF handle, synced there: visible after the barrier. */
    tst_fill(buf, BLK / 2, (int64_t) r * BLK, r, 3);
    CHECK_MPI(MPI_File_write_at(fs, (int64_t) r * BLK, buf, BLK / 2, MPI_BYTE, &st));
    for (w = 0; w < n; w++)
        tst_img_write(&img, (int64_t) w * BLK, BLK / 2, w, 3);
    CHECK_MPI(MPI_File_sync(fs));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fw));
    tst_read_expect(fw, (int64_t) next * BLK, img.data + (int64_t) next * BLK, BLK / 2,
                    "next rank's SELF-handle write after sync-barrier-sync");

    CHECK_MPI(MPI_File_close(&fs));
    CHECK_MPI(MPI_File_close(&fw));
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
