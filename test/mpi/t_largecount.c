/*
 * File views and memory types made by MPI 4's large-count constructors (MPI_Type_vector_c,
 * _create_hvector_c, _create_subarray_c, _create_resized_c, _create_struct_c), as mpi4py 4 makes
 * every type: each rank sets a view of its own strided blocks (a resized vector_c of a
 * contiguous_c, then a subarray_c), writes them collectively from a memory type of
 * hindexed/struct _c blocks, reads them back through the view, and checks them. The file is
 * compared with plain ROMIO's. A ROMIO that decodes types with the int queries only (MPICH 5
 * refuses them for large-count types) fails here.
 */
#include "common.h"

#define ELEMS 8          /* ints per block */
#define NBLK 16          /* blocks per rank */

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
#if MPI_VERSION >= 4
    int buf[NBLK * ELEMS * 2], back[NBLK * ELEMS];
    MPI_Datatype elem, vec, view, mem, sub;
    MPI_Count blens[2] = {NBLK * ELEMS / 2, NBLK * ELEMS / 2};
    MPI_Count displs[2] = {0, (NBLK * ELEMS / 2 + 3) * (MPI_Count)sizeof(int)};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Count sizes[2] = {NBLK, (MPI_Count)tst_size * ELEMS}, subsizes[2] = {NBLK, ELEMS};
    MPI_Count starts[2] = {0, (MPI_Count)tst_rank * ELEMS};
    MPI_File fh;
    MPI_Status st;

    /* memory: two halves with a 3-int gap between them */
    for (int i = 0; i < NBLK * ELEMS * 2; i++)
        buf[i] = -1;
    for (int i = 0; i < NBLK * ELEMS; i++)
        buf[i < NBLK * ELEMS / 2 ? i : i + 3] = tst_rank * 100000 + i;
    MPI_Type_create_struct_c(2, blens, displs, types, &mem);
    MPI_Type_commit(&mem);

    /* view 1: block j of rank r at (j * P + r) * ELEMS ints */
    MPI_Type_contiguous_c(ELEMS, MPI_INT, &elem);
    MPI_Type_vector_c(NBLK, 1, tst_size, elem, &vec);
    MPI_Type_create_resized_c(vec, 0, (MPI_Count)NBLK * tst_size * ELEMS * sizeof(int), &view);
    MPI_Type_commit(&view);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)tst_rank * ELEMS * sizeof(int), MPI_INT, view,
                                "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_write_all(fh, buf, 1, mem, &st));
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));

    /* view 2: the same bytes as a subarray of the NBLK x (P * ELEMS) matrix */
    MPI_Type_create_subarray_c(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, sub, "native", MPI_INFO_NULL));
    memset(back, 0, sizeof back);
    CHECK_MPI(MPI_File_read_all(fh, back, NBLK * ELEMS, MPI_INT, &st));
    for (int i = 0; i < NBLK * ELEMS; i++)
        if (back[i] != tst_rank * 100000 + i) {
            CHECK(0, "int %d of rank %d read back as %d", i, tst_rank, back[i]);
            break;
        }
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Type_free(&sub);
    MPI_Type_free(&view);
    MPI_Type_free(&vec);
    MPI_Type_free(&elem);
    MPI_Type_free(&mem);
#else
    (void)name;
#endif
    return tst_finalize();
}
