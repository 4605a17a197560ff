/*
 * Communication per write call through MPI-IO (run under test/apps/bbcount.c by run-count.sh):
 * NCALLS calls of each kind, each window after a first call of the same kind, the file named
 * by argv[1]. Kinds: MPI_File_write_at_all (IOR's MPIIO back end), MPI_File_set_view followed
 * by MPI_File_write_all (what PnetCDF and HDF5 do for every write), MPI_File_write_at; then
 * one MPI_File_sync of one write call's data, and the close after one more; the open first.
 * Last, in a second file, a sync of blocks written straight through (bblog's default hints:
 * blocks of bblog_through_threshold): two, the first counted as the second.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define NCALLS 32
#define XFER 4096
#define BLOCK (1 << 20)

static char buf[XFER], block[BLOCK];

static void one(MPI_File fh, int kind, int rank, int nprocs, int i)
{
    MPI_Offset off = ((MPI_Offset) kind * (NCALLS + 1) + i) * nprocs * XFER + rank * XFER;
    MPI_Datatype ft;

    memset(buf, 'a' + (i + rank) % 26, XFER);
    switch (kind) {
    case 0:
        MPI_File_write_at_all(fh, off, buf, XFER, MPI_BYTE, MPI_STATUS_IGNORE);
        break;
    case 1:
        MPI_Type_contiguous(XFER, MPI_BYTE, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, off, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        MPI_File_write_all(fh, buf, XFER, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Type_free(&ft);
        break;
    default:
        MPI_File_write_at(fh, off, buf, XFER, MPI_BYTE, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    static const char *const label[] = { "write_at_all", "set_view+write_all", "write_at" };
    int rank, nprocs, kind, i;
    char name[4096];
    MPI_File fh;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    /* The open (the job's first: ROMIO gathers the processor names once). */
    MPI_Pcontrol(1);
    if (argc != 2 || MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                   MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cnt_mpiio: cannot open %s\n", argc > 1 ? argv[1] : "(no name)");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(2, "open", 1);
    for (kind = 0; kind < 3; kind++) {
        if (kind == 2)  /* back to the whole file as bytes for the explicit offsets */
            MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        one(fh, kind, rank, nprocs, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(1);
        for (i = 1; i <= NCALLS; i++)
            one(fh, kind, rank, nprocs, i);
        MPI_Pcontrol(0);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(2, label[kind], NCALLS);
    }
    /* MPI_File_sync after one more collective write, the data of the loops drained first:
     * through bblog a drain of one round. */
    MPI_File_sync(fh);
    MPI_File_write_at_all(fh, (MPI_Offset) 3 * (NCALLS + 1) * nprocs * XFER + rank * XFER, buf,
                          XFER, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_File_sync(fh);
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(2, "sync", 1);
    /* MPI_File_close after one more collective write: its drain of one round, and the end of
     * the file (ufs: ROMIO's barrier only). */
    MPI_File_write_at_all(fh, (MPI_Offset) 3 * (NCALLS + 2) * nprocs * XFER + rank * XFER, buf,
                          XFER, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    MPI_File_close(&fh);
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(2, "close", 1);
    /* A block per process and a sync, then one more block and its sync: through bblog each
     * process's own flush, and its notes to each other process, the first sync as the second
     * (no communicator is made for the notes). */
    snprintf(name, sizeof(name), "%s.through", argv[1]);
    if (MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                      &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cnt_mpiio: cannot open %s\n", name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (i = 0; i < 2; i++) {
        MPI_File_write_at_all(fh, ((MPI_Offset) i * nprocs + rank) * BLOCK, block, BLOCK,
                              MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(i == 0 ? 1 : 3);
        MPI_File_sync(fh);
        MPI_Pcontrol(0);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Pcontrol(2, "sync(through)", 2);
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
