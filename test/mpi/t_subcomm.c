/*
 * Files opened on part of the processes: communicators made by MPI_Comm_split, with ranks that
 * are not contiguous in MPI_COMM_WORLD, several at once on one node, and a file name that
 * another group uses again afterwards (parallel HDF5's "dataset using split communicators":
 * the even ranks create and close a file while the odd ranks wait). Each file must be drained
 * and closed without error and leave no log behind (the runner checks the burst-buffer
 * directory), and every rank of a group reads what the others of its group wrote.
 *
 *   1 even      the even ranks write, read back and close NAME.even; the odd ranks only wait
 *               on their own communicator;
 *   2 thirds    groups of ranks r % 3 (non-contiguous), each with a file of its own, all open
 *               at once; each rank writes a block of its group's file collectively and reads
 *               its group neighbour's block;
 *   3 reuse     group r % 2 == 1 writes NAME.reuse and closes it; after a barrier the other
 *               group opens the same name and overwrites part of it; then everyone checks it;
 *   4 self      every rank also opens NAME.self.RANK alone on MPI_COMM_SELF, writes and
 *               closes it while the group files of case 2 are open;
 *   5 delete    as parallel HDF5's test: the even ranks write and close NAME.del, and their
 *               group's first rank deletes it at once, while the others may still be
 *               closing (their logs are not stale: the delete must leave them alone).
 * The main file NAME gets each group's results too, written by all ranks at the end, so that
 * the runner's byte comparison with the ufs run covers them.
 */
#include "common.h"

#include <unistd.h>

#define BLK 4096

static unsigned char buf[BLK], rbuf[BLK];

/* Each rank of comm writes its block (writer = world rank, gen) collectively, then reads the
 * next rank's block of the group and checks it, then closes. */
static void group_file(MPI_Comm comm, const char *name, int gen, const char *what)
{
    int gr, gn, next;
    MPI_File fh;
    MPI_Status st;
    int *world;

    MPI_Comm_rank(comm, &gr);
    MPI_Comm_size(comm, &gn);
    world = malloc((size_t) gn * sizeof(*world));
    REQUIRE(world != NULL, "out of memory");
    MPI_Allgather(&tst_rank, 1, MPI_INT, world, 1, MPI_INT, comm);
    tst_open(comm, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    tst_fill(buf, BLK, (int64_t) gr * BLK, tst_rank, gen);
    CHECK_MPI(MPI_File_write_at_all(fh, (int64_t) gr * BLK, buf, BLK, MPI_BYTE, &st));
    MPI_Barrier(comm);
    next = (gr + 1) % gn;
    CHECK_MPI(MPI_File_read_at(fh, (int64_t) next * BLK, rbuf, BLK, MPI_BYTE, &st));
    tst_verify(rbuf, BLK, (int64_t) next * BLK, world[next], gen, what);
    CHECK_MPI(MPI_File_close(&fh));
    free(world);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    char *even = tst_name(name, ".even"), *reuse = tst_name(name, ".reuse"), *third;
    char suffix[32];
    MPI_Comm half, tri;
    MPI_File fh, self;
    MPI_Status st;
    int r = tst_rank, color;

    /* 1 even */
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &half);
    if (r % 2 == 0)
        group_file(half, even, 1, "1 even");
    else
        MPI_Barrier(half);
    MPI_Barrier(MPI_COMM_WORLD);

    /* 5 delete */
    if (r % 2 == 0) {
        char *del = tst_name(name, ".del");
        int gr;
        group_file(half, del, 6, "5 delete");
        MPI_Comm_rank(half, &gr);
        if (gr == 0)
            CHECK_MPI(MPI_File_delete(del, MPI_INFO_NULL));
        free(del);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2 thirds, with 4 self inside */
    color = r % 3;
    MPI_Comm_split(MPI_COMM_WORLD, color, r, &tri);
    snprintf(suffix, sizeof(suffix), ".third%d", color);
    third = tst_name(name, suffix);
    snprintf(suffix, sizeof(suffix), ".self%d", r);
    {
        char *sname = tst_name(name, suffix);
        tst_open(MPI_COMM_SELF, sname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &self);
        tst_fill(buf, BLK, 0, r, 4);
        CHECK_MPI(MPI_File_write_at(self, 0, buf, BLK, MPI_BYTE, &st));
        group_file(tri, third, 2, "2 thirds");
        CHECK_MPI(MPI_File_read_at(self, 0, rbuf, BLK, MPI_BYTE, &st));
        tst_verify(rbuf, BLK, 0, r, 4, "4 self");
        CHECK_MPI(MPI_File_close(&self));
        free(sname);
    }

    /* 3 reuse */
    if (r % 2 == 1)
        group_file(half, reuse, 3, "3 reuse: first group");
    MPI_Barrier(MPI_COMM_WORLD);
    if (r % 2 == 0)
        group_file(half, reuse, 5, "3 reuse: second group");
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every rank checks what the groups left, through a plain read, and writes a summary:
     * block r of NAME holds what rank r found at its own block of each group file. */
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    {
        MPI_File g;
        int gr;
        MPI_Comm_rank(half, &gr);
        if (r % 2 == 0) {
            tst_open(MPI_COMM_SELF, even, MPI_MODE_RDONLY, MPI_INFO_NULL, &g);
            CHECK_MPI(MPI_File_read_at(g, (int64_t) gr * BLK, rbuf, BLK, MPI_BYTE, &st));
            tst_verify(rbuf, BLK, (int64_t) gr * BLK, r, 1, "1 even: after close");
            CHECK_MPI(MPI_File_close(&g));
        }
        tst_open(MPI_COMM_SELF, reuse, MPI_MODE_RDONLY, MPI_INFO_NULL, &g);
        CHECK_MPI(MPI_File_read_at(g, (int64_t) gr * BLK, rbuf, BLK, MPI_BYTE, &st));
        /* The second group (even ranks) overwrote the blocks it has; odd ranks' blocks of
         * the group-local numbering are the same offsets: rank r's block now holds the even
         * rank of the same group index, when there is one. */
        CHECK_MPI(MPI_File_write_at_all(fh, (int64_t) r * BLK, rbuf, BLK, MPI_BYTE, &st));
        CHECK_MPI(MPI_File_close(&g));
    }
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Comm_free(&half);
    MPI_Comm_free(&tri);
    free(even);
    free(reuse);
    free(third);
    return tst_finalize();
}
