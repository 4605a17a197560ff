/*
 * Nothing to write:
 *  - argv[1]: opened with MPI_MODE_CREATE and closed without a write: exists, size 0;
 *  - argv[1].zero: writes of 0 bytes in every form (independent, collective, nonblocking, a
 *    zero-size datatype, at offset 0 and far beyond EOF), syncs and set_size(0): size 0;
 *  - argv[1].tail: some data, then 0-byte writes beyond its end: the size does not move.
 */
#include "common.h"

#include <errno.h>
#include <sys/stat.h>

static void expect_size(MPI_File fh, MPI_Offset expect, const char *when)
{
    MPI_Offset s = -1;

    CHECK_MPI(MPI_File_get_size(fh, &s));
    CHECK(s == expect, "%s: get_size %lld, expected %lld", when, (long long)s,
          (long long)expect);
}

/* Every flavour of a 0-byte write at `off`. */
static void zero_writes(MPI_File fh, MPI_Offset off)
{
    unsigned char b[1] = {0x77};
    MPI_Datatype none;
    MPI_Request rq;
    MPI_Status st;

    MPI_Type_contiguous(0, MPI_BYTE, &none);
    MPI_Type_commit(&none);
    CHECK_MPI(MPI_File_write_at(fh, off, b, 0, MPI_BYTE, &st));
    CHECK(tst_status_bytes(&st) == 0, "0-byte write_at moved %lld bytes",
          (long long)tst_status_bytes(&st));
    CHECK_MPI(MPI_File_write_at_all(fh, off, b, 0, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_write_at(fh, off, b, 3, none, &st));
    CHECK_MPI(MPI_File_write_at_all(fh, off + 1000000, b, 5, none, &st));
    CHECK_MPI(MPI_File_iwrite_at(fh, off, b, 0, MPI_BYTE, &rq));
    CHECK_MPI(MPI_Wait(&rq, &st));
    CHECK_MPI(MPI_File_seek(fh, off + 12345, MPI_SEEK_SET));
    CHECK_MPI(MPI_File_write(fh, b, 0, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_write_all(fh, b, 0, MPI_BYTE, &st));
    MPI_Type_free(&none);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    char *zero = tst_name(name, ".zero"), *tail = tst_name(name, ".tail");
    struct tst_image img;
    struct stat sb;
    MPI_File fh;
    MPI_Status st;

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_MPI(MPI_File_close(&fh));
    CHECK(stat(tst_plain_path(name), &sb) == 0 && sb.st_size == 0,
          "empty file: stat says %s, size %lld", strerror(errno), (long long)sb.st_size);
    tst_img_init(&img);
    tst_check_file(MPI_COMM_WORLD, name, &img);

    tst_open(MPI_COMM_WORLD, zero, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    zero_writes(fh, 0);
    expect_size(fh, 0, "after 0-byte writes at 0");
    zero_writes(fh, 1 << 20);
    expect_size(fh, 0, "after 0-byte writes past EOF");
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_File_set_size(fh, 0));
    CHECK_MPI(MPI_File_sync(fh));
    expect_size(fh, 0, "after sync and set_size(0)");
    CHECK_MPI(MPI_File_close(&fh));
    tst_check_file(MPI_COMM_WORLD, zero, &img);

    tst_open(MPI_COMM_WORLD, tail, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    {
        unsigned char buf[1000];
        tst_fill(buf, sizeof buf, tst_rank * 1000, tst_rank, 0);
        CHECK_MPI(MPI_File_write_at_all(fh, tst_rank * 1000, buf, 1000, MPI_BYTE, &st));
    }
    zero_writes(fh, tst_size * 1000 + 10);
    MPI_Barrier(MPI_COMM_WORLD);
    {
        MPI_Offset s = -1;
        CHECK_MPI(MPI_File_get_size(fh, &s));
        CHECK(s >= (tst_rank + 1) * 1000 && s <= tst_size * 1000,
              "after data and 0-byte writes beyond it: get_size %lld", (long long)s);
    }
    CHECK_MPI(MPI_File_close(&fh));
    for (int r = 0; r < tst_size; r++)
        tst_img_write(&img, r * 1000, 1000, r, 0);
    tst_check_file(MPI_COMM_WORLD, tail, &img);
    tst_img_free(&img);
    free(zero);
    free(tail);
    return tst_finalize();
}
