/*
 * PnetCDF's independent data mode: every process has the file open twice, on MPI_COMM_WORLD
 * (the header, written collectively) and on MPI_COMM_SELF (the independent puts). Each rank's
 * puts go through a vector view of small blocks interleaved with the other ranks' (rank r owns
 * block k at HDR + (k * size + r) * PIECE), in three calls, the third overwriting parts of the
 * first two; then every rank closes its SELF handle at once, with no barrier, and the WORLD
 * handle after it.
 *
 * The SELF handles drain alone and at the same moment, each with data sieving (ad_bblog_drain.c:
 * the holes between its blocks, the other ranks' blocks, are read and written back under a
 * byte-range lock). A sieving drain without the lock writes back bytes another rank wrote in
 * between (without it, BTIO through PnetCDF lost bytes in 10 runs of 10 on ext4); with it, the
 * file must be exactly the image.
 */
#include "common.h"

#include <stdlib.h>

#define HDR 100
#define PIECE 1000
#define NB 48

/* Writes view bytes [from, from + len) of this rank's blocks with generation gen. */
static void put(MPI_File fh, int64_t from, int64_t len, int gen)
{
    unsigned char *buf = malloc((size_t) len);
    MPI_Status st;
    int64_t v;

    REQUIRE(buf, "out of memory");
    for (v = from; v < from + len; v += PIECE) {
        int64_t off = HDR + ((v / PIECE) * tst_size + tst_rank) * PIECE;
        tst_fill(buf + (v - from), PIECE, off, tst_rank, gen);
    }
    CHECK_MPI(MPI_File_write_at(fh, from, buf, (int) len, MPI_BYTE, &st));
    free(buf);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char hdr[HDR];
    struct tst_image all;
    MPI_Datatype blk, vec;
    MPI_File fw, fs;
    MPI_Status st;
    int w;

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fw);
    tst_fill(hdr, HDR, 0, 0, 1);
    CHECK_MPI(MPI_File_write_at_all(fw, 0, hdr, tst_rank == 0 ? HDR : 0, MPI_BYTE, &st));

    tst_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fs);
    MPI_Type_contiguous(PIECE, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint) tst_size * PIECE, &vec);
    MPI_Type_commit(&vec);
    CHECK_MPI(MPI_File_set_view(fs, HDR + (MPI_Offset) tst_rank * PIECE, MPI_BYTE, vec,
                                "native", MPI_INFO_NULL));
    put(fs, 0, (NB / 2) * PIECE, 1);
    put(fs, (NB / 2) * PIECE, (NB / 2) * PIECE, 2);
    put(fs, (NB / 4) * PIECE, (NB / 2) * PIECE, 3);
    CHECK_MPI(MPI_File_close(&fs));
    CHECK_MPI(MPI_File_close(&fw));
    MPI_Type_free(&vec);
    MPI_Type_free(&blk);

    /* Every rank's blocks: generation 3 in the middle half, 1 before it, 2 after it. */
    tst_img_init(&all);
    tst_img_write(&all, 0, HDR, 0, 1);
    for (w = 0; w < tst_size; w++) {
        int64_t k;
        for (k = 0; k < NB; k++) {
            int64_t off = HDR + (k * tst_size + w) * PIECE;
            tst_img_write(&all, off, PIECE, w, k >= NB / 4 && k < 3 * NB / 4 ? 3 :
                          k < NB / 2 ? 1 : 2);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tst_check_file(MPI_COMM_WORLD, name, &all);
    tst_img_free(&all);
    return tst_finalize();
}
