/*
 * Many small writes that continue each other in the file, by collective and by independent
 * calls, with later writes over earlier ones: IOR's segmented layout (each rank one block, in
 * 4 KiB transfers) and a checkpoint rewritten in part. Each rank's block ends up one range of
 * the file, so however many calls wrote it, the drain has one piece per rank to write: the
 * runner's [stats] cases check that bblog drained at most one extent per process
 * (extents_drained), where a drain that kept each call's bytes apart would write 4 KiB at a time.
 *
 *   1 coll     MPI_File_write_at_all, 4 KiB transfers over the first half of the block;
 *   2 indep    MPI_File_write_at, 4 KiB transfers over the second half (continues phase 1 in the
 *              file and in the log);
 *   3 over     MPI_File_write_at_all, 8 KiB transfers over the middle half (later wins);
 *   4 own      MPI_File_write_at, 1000 bytes at the middle of the block (this process's later
 *              write over its own phase 3).
 * After close the file is reopened and every byte checked against the writer that must win.
 */
#include "common.h"

#include <stdlib.h>

#define XFER 4096
#define BLK ((int64_t)64 * XFER)
#define OWN_OFF (BLK / 2 - 500)
#define OWN_LEN 1000

/* The generation that must be found at offset `pos` of a block after all four phases. */
static int final_gen(int64_t pos)
{
    if (pos >= OWN_OFF && pos < OWN_OFF + OWN_LEN)
        return 3;
    if (pos >= BLK / 4 && pos < 3 * BLK / 4)
        return 2;
    return pos < BLK / 2 ? 0 : 1;
}

static void write_range(MPI_File fh, int64_t from, int64_t to, int64_t xfer, int gen, int coll,
                        unsigned char *buf)
{
    int64_t base = (int64_t)tst_rank * BLK;
    MPI_Status st;

    for (int64_t pos = from; pos < to; pos += xfer) {
        int n = (int)(to - pos < xfer ? to - pos : xfer);
        tst_fill(buf, (size_t)n, base + pos, tst_rank, gen);
        if (coll)
            CHECK_MPI(MPI_File_write_at_all(fh, base + pos, buf, n, MPI_BYTE, &st));
        else
            CHECK_MPI(MPI_File_write_at(fh, base + pos, buf, n, MPI_BYTE, &st));
        memset(buf, 0xEE, (size_t)n);   /* the call has returned: the data is stored */
    }
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(BLK), *rd = malloc(BLK);
    int64_t base = (int64_t)tst_rank * BLK;
    MPI_File fh;
    MPI_Status st;
    MPI_Offset size;

    REQUIRE(buf && rd, "out of memory");
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    write_range(fh, 0, BLK / 2, XFER, 0, 1, buf);
    write_range(fh, BLK / 2, BLK, XFER, 1, 0, buf);
    write_range(fh, BLK / 4, 3 * BLK / 4, 2 * XFER, 2, 1, buf);
    write_range(fh, OWN_OFF, OWN_OFF + OWN_LEN, OWN_LEN, 3, 0, buf);
    CHECK_MPI(MPI_File_close(&fh));

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset)tst_size * BLK, "file size %lld, expected %lld", (long long)size,
          (long long)tst_size * BLK);
    CHECK_MPI(MPI_File_read_at_all(fh, base, rd, (int)BLK, MPI_BYTE, &st));
    for (int64_t pos = 0; pos < BLK;) {
        int gen = final_gen(pos);
        int64_t end = pos + 1;
        while (end < BLK && final_gen(end) == gen)
            end++;
        tst_verify(rd + pos, (size_t)(end - pos), base + pos, tst_rank, gen, "block");
        pos = end;
    }
    CHECK_MPI(MPI_File_close(&fh));
    free(buf);
    free(rd);
    return tst_finalize();
}
