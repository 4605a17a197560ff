/*
 * Communication per H5Dwrite through parallel HDF5 (run under test/apps/bbcount.c by
 * run-count.sh): a 1-D dataset of NCALLS+1 blocks of XFER bytes per process, contiguous
 * layout; one H5Dwrite per block with collective transfer, then one per block of a second
 * dataset with independent transfer; each window after a first write of the same kind.
 * argv[1]: the file.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define NCALLS 32
#define XFER 4096

static unsigned char buf[XFER];

static void fail(const char *what)
{
    fprintf(stderr, "cnt_hdf5: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void write_block(hid_t ds, hid_t dxpl, int rank, int nprocs, int i)
{
    hsize_t start = ((hsize_t) i * nprocs + rank) * XFER, count = XFER;
    hid_t fs = H5Dget_space(ds), ms = H5Screate_simple(1, &count, NULL);

    memset(buf, (i + rank) % 251, XFER);
    if (fs < 0 || ms < 0 ||
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
        H5Dwrite(ds, H5T_NATIVE_UCHAR, ms, fs, dxpl, buf) < 0)
        fail("H5Dwrite");
    H5Sclose(ms);
    H5Sclose(fs);
}

int main(int argc, char **argv)
{
    static const char *const label[] = { "H5Dwrite(independent)", "H5Dwrite(collective)" };
    int rank, nprocs, coll, i;
    hid_t fapl, file, space, ds[2], dxpl;
    hsize_t n;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 2) {
        fprintf(stderr, "usage: cnt_hdf5 FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    n = (hsize_t) (NCALLS + 1) * nprocs * XFER;
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    if ((file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        fail("H5Fcreate");
    space = H5Screate_simple(1, &n, NULL);
    ds[0] = H5Dcreate2(file, "indep", H5T_NATIVE_UCHAR, space, H5P_DEFAULT, H5P_DEFAULT,
                       H5P_DEFAULT);
    ds[1] = H5Dcreate2(file, "coll", H5T_NATIVE_UCHAR, space, H5P_DEFAULT, H5P_DEFAULT,
                       H5P_DEFAULT);
    if (ds[0] < 0 || ds[1] < 0)
        fail("H5Dcreate2");
    for (coll = 1; coll >= 0; coll--) {
        dxpl = H5Pcreate(H5P_DATASET_XFER);
        H5Pset_dxpl_mpio(dxpl, coll ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
        write_block(ds[coll], dxpl, rank, nprocs, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(1);
        for (i = 1; i <= NCALLS; i++)
            write_block(ds[coll], dxpl, rank, nprocs, i);
        MPI_Pcontrol(0);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(2, label[coll], NCALLS);
        H5Pclose(dxpl);
    }
    H5Dclose(ds[0]);
    H5Dclose(ds[1]);
    H5Sclose(space);
    H5Pclose(fapl);
    H5Fclose(file);
    MPI_Finalize();
    return 0;
}
