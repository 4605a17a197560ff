/*
 * Sixteen files open at once, written interleaved: round after round, every file gets one chunk
 * from every rank, independent and collective calls alternating per file; files are closed in
 * another order than opened. Names are argv[1] followed by ".00" ... ".15"; the last NSELF
 * files are opened by each rank alone on MPI_COMM_SELF (names ".14.r<rank>"), as libraries do
 * for per-process files. argv[1] itself receives a small index written last. Each file has
 * its own logs, so none may leak into another.
 * Then argv[1].twice is opened twice at once (two handles): data written through one handle is
 * read through the other after sync-barrier-sync on both (MPI's rule for two handles), and
 * what the second handle writes after that wins over the first handle's data.
 */
#include "common.h"

#define NF 16
#define ROUNDS 4
#define CH ((int64_t)4099)
#define NSELF 2 /* the last NSELF files are per rank */

static int is_self(int f)
{
    return f >= NF - NSELF;
}

/* The comm a file is open on, and the ranks that write it. */
static MPI_Comm comm_of(int f)
{
    return is_self(f) ? MPI_COMM_SELF : MPI_COMM_WORLD;
}

static int64_t chunk_off(int f, int round, int rank)
{
    if (is_self(f))
        return (int64_t)round * CH;
    return ((int64_t)round * tst_size + rank) * CH;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    MPI_File fh[NF], idx;
    char *names[NF];
    unsigned char buf[CH];
    MPI_Status st;

    for (int f = 0; f < NF; f++) {
        char suffix[32];
        if (is_self(f))
            snprintf(suffix, sizeof suffix, ".%02d.r%d", f, tst_rank);
        else
            snprintf(suffix, sizeof suffix, ".%02d", f);
        names[f] = tst_name(name, suffix);
        tst_open(comm_of(f), names[f], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                 &fh[f]);
    }
    for (int round = 0; round < ROUNDS; round++)
        for (int f = 0; f < NF; f++) {
            int64_t off = chunk_off(f, round, tst_rank);
            /* Chunks differ per file (gen = file number): a log applied to the wrong file shows. */
            tst_fill(buf, CH, off, tst_rank, f);
            if ((f + round) % 2)
                CHECK_MPI(MPI_File_write_at_all(fh[f], off, buf, (int)CH, MPI_BYTE, &st));
            else
                CHECK_MPI(MPI_File_write_at(fh[f], off, buf, (int)CH, MPI_BYTE, &st));
        }
    for (int i = 0; i < NF; i++) {
        int f = (i * 7 + 3) % NF; /* 7 is coprime with 16: every file once */
        CHECK_MPI(MPI_File_close(&fh[f]));
    }

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &idx);
    {
        int32_t rec[2] = {NF, ROUNDS};
        if (tst_rank == 0)
            CHECK_MPI(MPI_File_write_at(idx, 0, rec, 2, MPI_INT32_T, &st));
    }
    CHECK_MPI(MPI_File_close(&idx));

    {
        char *twice = tst_name(name, ".twice");
        MPI_File h1, h2;
        struct tst_image img;
        int64_t off = tst_rank * CH, peer = (tst_rank + 1) % tst_size;
        tst_img_init(&img);
        tst_open(MPI_COMM_WORLD, twice, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &h1);
        tst_open(MPI_COMM_WORLD, twice, MPI_MODE_RDWR, MPI_INFO_NULL, &h2);
        tst_fill(buf, CH, off, tst_rank, 100);
        CHECK_MPI(MPI_File_write_at(h1, off, buf, (int)CH, MPI_BYTE, &st));
        for (int r = 0; r < tst_size; r++)
            tst_img_write(&img, r * CH, CH, r, 100);
        CHECK_MPI(MPI_File_sync(h1));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_MPI(MPI_File_sync(h2));
        tst_read_expect(h2, peer * CH, img.data + peer * CH, CH, "second handle reads the first's");
        tst_read_expect(h2, off, img.data + off, CH, "second handle reads own first handle's");
        /* The second handle overwrites the middle of this rank's chunk. */
        tst_fill(buf, CH / 2, off + CH / 4, tst_rank, 101);
        CHECK_MPI(MPI_File_write_at_all(h2, off + CH / 4, buf, (int)(CH / 2), MPI_BYTE, &st));
        for (int r = 0; r < tst_size; r++)
            tst_img_write(&img, r * CH + CH / 4, CH / 2, r, 101);
        /* Close the second handle first: the first's close must not bring old bytes back. */
        CHECK_MPI(MPI_File_close(&h2));
        CHECK_MPI(MPI_File_close(&h1));
        tst_check_file(MPI_COMM_WORLD, twice, &img);
        tst_img_free(&img);
        free(twice);
    }

    for (int f = 0; f < NF; f++) {
        struct tst_image img;
        tst_img_init(&img);
        for (int round = 0; round < ROUNDS; round++)
            for (int r = 0; r < tst_size; r++)
                if (!is_self(f) || r == tst_rank)
                    tst_img_write(&img, chunk_off(f, round, r), CH, r, f);
        tst_check_file_posix(comm_of(f), names[f], &img);
        tst_img_free(&img);
        free(names[f]);
    }
    return tst_finalize();
}
