/*
 * PnetCDF's independent data mode: every process has the file open twice, on MPI_COMM_WORLD
 * (the header, written collectively, and the size) and on MPI_COMM_SELF (the independent
 * puts). Each rank's puts go through a vector view of small blocks interleaved with the other
 * ranks' (rank r owns block k at HDR + (k * size + r) * PIECE): in three calls, the third
 * overwriting parts of the first two; the last rank (of several) puts only every SPARSE-th of
 * its blocks, each alone, so far apart that its drain has nothing to sieve. Then every rank
 * closes its SELF handle at once, with no barrier, and the WORLD handle after it.
 *
 * The SELF handles drain alone and at the same moment, with data sieving (ad_bblog_drain_sieve.c:
 * the holes between a rank's blocks, the other ranks' blocks, are read and written back under
 * a byte-range lock). Without the lock, a rank writes back bytes another rank wrote in between
 * (BTIO through PnetCDF lost bytes in 10 runs of 10 on ext4, this test in 5 of 5); the sparse
 * rank's blocks lie inside the others' windows, so they must be written under the lock too.
 * The file must be exactly the image. The size is set first, so that no window reaches past
 * the end of the file, where plain ROMIO's data sieving writes 0xFF into holes.
 */
#include "common.h"

#include <stdlib.h>

#define HDR 100
#define PIECE 1000
#define NB 480
#define SPARSE 20

static int sparse_rank(int r)
{
    return tst_size > 1 && r == tst_size - 1;
}

/* Writes view blocks [from, from + n) of this rank with generation gen. */
static void put(MPI_File fh, int64_t from, int64_t n, int gen)
{
    unsigned char *buf = malloc((size_t) (n * PIECE));
    MPI_Status st;
    int64_t k;

    REQUIRE(buf, "out of memory");
    for (k = 0; k < n; k++)
        tst_fill(buf + k * PIECE, PIECE, HDR + ((from + k) * tst_size + tst_rank) * PIECE,
                 tst_rank, gen);
    CHECK_MPI(MPI_File_write_at(fh, from * PIECE, buf, (int) (n * PIECE), MPI_BYTE, &st));
    free(buf);
}

/* What rank w left in block k: 0 for none. */
static int gen_of(int w, int64_t k)
{
    if (sparse_rank(w))
        return k % SPARSE == 0 ? 1 : 0;
    return k >= NB / 4 && k < 3 * NB / 4 ? 3 : k < NB / 2 ? 1 : 2;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char hdr[HDR];
    struct tst_image all;
    MPI_Datatype blk, vec;
    MPI_File fw, fs;
    MPI_Status st;
    int64_t k;
    int w;

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fw);
    tst_fill(hdr, HDR, 0, 0, 1);
    CHECK_MPI(MPI_File_write_at_all(fw, 0, hdr, tst_rank == 0 ? HDR : 0, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_set_size(fw, HDR + (MPI_Offset) NB * tst_size * PIECE));

    tst_open(MPI_COMM_SELF, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fs);
    MPI_Type_contiguous(PIECE, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint) tst_size * PIECE, &vec);
    MPI_Type_commit(&vec);
    CHECK_MPI(MPI_File_set_view(fs, HDR + (MPI_Offset) tst_rank * PIECE, MPI_BYTE, vec,
                                "native", MPI_INFO_NULL));
    if (sparse_rank(tst_rank)) {
        for (k = 0; k < NB; k += SPARSE)
            put(fs, k, 1, 1);
    } else {
        put(fs, 0, NB / 2, 1);
        put(fs, NB / 2, NB / 2, 2);
        put(fs, NB / 4, NB / 2, 3);
    }
    CHECK_MPI(MPI_File_close(&fs));
    CHECK_MPI(MPI_File_close(&fw));
    MPI_Type_free(&vec);
    MPI_Type_free(&blk);

    tst_img_init(&all);
    tst_img_write(&all, 0, HDR, 0, 1);
    tst_img_set_size(&all, HDR + (int64_t) NB * tst_size * PIECE);
    for (w = 0; w < tst_size; w++)
        for (k = 0; k < NB; k++)
            if (gen_of(w, k))
                tst_img_write(&all, HDR + (k * tst_size + w) * PIECE, PIECE, w, gen_of(w, k));
    MPI_Barrier(MPI_COMM_WORLD);
    tst_check_file(MPI_COMM_WORLD, name, &all);
    tst_img_free(&all);
    return tst_finalize();
}
