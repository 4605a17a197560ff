/*
 * MPI-IO from several threads at once (MPI_THREAD_MULTIPLE): each of NTHREADS threads of every
 * rank opens its own file (argv[1].t<thread>.r<rank>) on a communicator of its own (a dup of
 * MPI_COMM_SELF, made before the threads start, since collectives on one communicator must not
 * run concurrently), sets a strided view of a type it made, writes ROUNDS blocks through its
 * individual file pointer, syncs, reads them back and checks them, and closes; repeated REPEAT
 * times, the threads of a rank all running at once. The files are compared with plain ROMIO's.
 * An MPI library whose MPI-IO is not thread-safe corrupts its shared tables here (the file
 * table, flattened types, error codes) and crashes or returns wrong bytes.
 */
#include "common.h"

#include <pthread.h>

#define NTHREADS 4
#define ROUNDS 64
#define BLOCK 96
#define REPEAT 3

static const char *base;
static MPI_Comm comms[NTHREADS];
static long failures[NTHREADS];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg, writer = tst_rank * NTHREADS + t;
    char suffix[32], *name;
    unsigned char buf[BLOCK], back[BLOCK];
    MPI_Datatype strided;
    MPI_File fh;
    MPI_Status st;

    snprintf(suffix, sizeof suffix, ".t%d.r%d", t, tst_rank);
    name = tst_name(base, suffix);
    /* one block of every other BLOCK bytes, so the view is not contiguous */
    MPI_Type_vector(1, BLOCK, 2 * BLOCK, MPI_BYTE, &strided);
    MPI_Type_create_resized(strided, 0, 2 * BLOCK, &strided);
    MPI_Type_commit(&strided);
    for (int rep = 0; rep < REPEAT; rep++) {
        if (MPI_File_open(comms[t], name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
            MPI_SUCCESS) {
            failures[t]++;
            break;
        }
        MPI_File_set_view(fh, t * BLOCK, MPI_BYTE, strided, "native", MPI_INFO_NULL);
        for (int i = 0; i < ROUNDS; i++) {
            tst_fill(buf, BLOCK, (int64_t)i * BLOCK, writer, rep);
            if (MPI_File_write(fh, buf, BLOCK, MPI_BYTE, &st) != MPI_SUCCESS)
                failures[t]++;
        }
        MPI_File_sync(fh);
        MPI_File_seek(fh, 0, MPI_SEEK_SET);
        for (int i = 0; i < ROUNDS; i++) {
            tst_fill(buf, BLOCK, (int64_t)i * BLOCK, writer, rep);
            memset(back, 0, BLOCK);
            if (MPI_File_read(fh, back, BLOCK, MPI_BYTE, &st) != MPI_SUCCESS ||
                memcmp(back, buf, BLOCK) != 0)
                failures[t]++;
        }
        if (MPI_File_close(&fh) != MPI_SUCCESS)
            failures[t]++;
    }
    MPI_Type_free(&strided);
    free(name);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[NTHREADS];
    int provided;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    base = tst_init(&argc, &argv);
    REQUIRE(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    for (int t = 0; t < NTHREADS; t++)
        CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &comms[t]));
    for (int t = 0; t < NTHREADS; t++)
        REQUIRE(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0,
                "pthread_create failed");
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(failures[t] == 0, "thread %d: %ld failed calls or wrong blocks", t, failures[t]);
        MPI_Comm_free(&comms[t]);
    }
    return tst_finalize();
}
