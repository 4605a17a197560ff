/*
 * Nonblocking I/O completed through each of MPI's completion calls, with point-to-point
 * requests in the same arrays, as programs mix them. Each rank writes NP pieces of S bytes
 * (piece k of rank r at (k * P + r) * S):
 *   pieces 0-2  iwrite_at, and an Isend/Irecv ring: MPI_Waitany until every one is done;
 *   piece 3     iwrite_at_all and piece 4 iwrite_at: MPI_Testsome until both are done;
 *   piece 5     iwrite_at_all: MPI_Request_get_status polled until it says done, then
 *               MPI_Wait (get_status alone must move the request on: nothing else is called;
 *               not asked of MPICH 4.0's plain ROMIO, whose get_status never polls it);
 * then reads them back: pieces 0-2 by iread_at_all under MPI_Testall, 3-4 by iread_at under
 * MPI_Waitsome, 5 by iread_at under MPI_Testany with an Irecv. Every status must count the
 * bytes of its piece and every read the pattern written. Over an MPI without MPICH's extended
 * generalized requests, plain ROMIO's nonblocking collectives and POSIX AIO complete only if
 * these calls run their poll functions (adio/layer/layer_greq.c); without that, the polling
 * loops here never end and the case times out.
 */
#include "common.h"

#define S 65536
#define NP 6

static int64_t piece_off(int rank, int k)
{
    return ((int64_t)k * tst_size + rank) * S;
}

static void check_bytes(const MPI_Status *st, int64_t want, const char *what)
{
    CHECK(tst_status_bytes(st) == want, "%s: status says %lld bytes, expected %lld", what,
          (long long)tst_status_bytes(st), (long long)want);
}

/* Completes both of rq[0..1] with MPI_Waitsome (wait) or MPI_Testsome, checking that each
 * status counts S bytes ("what") and that both complete before MPI_UNDEFINED. */
static void complete_two(MPI_Request rq[2], int wait, const char *what)
{
    const char *call = wait ? "Waitsome" : "Testsome";
    MPI_Status sts[2];
    int out, idxs[2];

    for (int done = 0;;) {
        if (wait)
            CHECK_MPI(MPI_Waitsome(2, rq, &out, idxs, sts));
        else
            CHECK_MPI(MPI_Testsome(2, rq, &out, idxs, sts));
        if (out == MPI_UNDEFINED) {
            CHECK(done == 2, "%s: %d requests completed, expected 2", call, done);
            break;
        }
        for (int i = 0; i < out; i++)
            check_bytes(&sts[i], S, what);
        done += out;
    }
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *w[NP], *r[NP];
    MPI_Request rq[5];
    MPI_Status sts[5], st;
    int next = (tst_rank + 1) % tst_size, prev = (tst_rank + tst_size - 1) % tst_size;
    int token_out = tst_rank, token_in = -1, idx, flag;
    MPI_File fh;

    for (int k = 0; k < NP; k++) {
        w[k] = malloc(S);
        r[k] = malloc(S);
        REQUIRE(w[k] && r[k], "out of memory");
        tst_fill(w[k], S, piece_off(tst_rank, k), tst_rank, 0);
        memset(r[k], 0xEE, S);
    }
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);

    /* Pieces 0-2 and a ring message: MPI_Waitany until all are done. */
    for (int k = 0; k < 3; k++)
        CHECK_MPI(MPI_File_iwrite_at(fh, piece_off(tst_rank, k), w[k], S, MPI_BYTE, &rq[k]));
    CHECK_MPI(MPI_Irecv(&token_in, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &rq[3]));
    CHECK_MPI(MPI_Isend(&token_out, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &rq[4]));
    for (int done = 0;; done++) {
        CHECK_MPI(MPI_Waitany(5, rq, &idx, &st));
        if (idx == MPI_UNDEFINED) {
            CHECK(done == 5, "Waitany: %d requests completed, expected 5", done);
            break;
        }
        if (idx < 3)
            check_bytes(&st, S, "iwrite_at under Waitany");
    }
    CHECK(token_in == prev, "ring: received %d, expected %d", token_in, prev);

    /* Piece 3 collectively, piece 4 independently: MPI_Testsome until both are done. */
    CHECK_MPI(MPI_File_iwrite_at_all(fh, piece_off(tst_rank, 3), w[3], S, MPI_BYTE, &rq[0]));
    CHECK_MPI(MPI_File_iwrite_at(fh, piece_off(tst_rank, 4), w[4], S, MPI_BYTE, &rq[1]));
    complete_two(rq, 0, "write under Testsome");

    /* Piece 5: MPI_Request_get_status alone until done, then MPI_Wait frees the request.
     * MPICH 4.0's get_status does not run generalized requests' poll functions, so there plain
     * ROMIO's nonblocking collective never completes under it: MPI_Wait completes it (bblog's
     * requests are complete when started, under every MPI). */
    CHECK_MPI(MPI_File_iwrite_at_all(fh, piece_off(tst_rank, 5), w[5], S, MPI_BYTE, &rq[0]));
    if (tst_mpich_40() && !tst_is_bblog(name))
        CHECK_MPI(MPI_Wait(&rq[0], &st));
    else
        do
            CHECK_MPI(MPI_Request_get_status(rq[0], &flag, &st));
        while (!flag);
    check_bytes(&st, S, "iwrite_at_all under Request_get_status");
    CHECK_MPI(MPI_Wait(&rq[0], &st));
    CHECK(rq[0] == MPI_REQUEST_NULL, "Wait after get_status left the request");

    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));

    /* Pieces 0-2 read collectively: MPI_Testall. */
    for (int k = 0; k < 3; k++)
        CHECK_MPI(MPI_File_iread_at_all(fh, piece_off(tst_rank, k), r[k], S, MPI_BYTE, &rq[k]));
    do
        CHECK_MPI(MPI_Testall(3, rq, &flag, sts));
    while (!flag);
    for (int k = 0; k < 3; k++)
        check_bytes(&sts[k], S, "iread_at_all under Testall");

    /* Pieces 3-4: MPI_Waitsome. */
    for (int k = 3; k < 5; k++)
        CHECK_MPI(MPI_File_iread_at(fh, piece_off(tst_rank, k), r[k], S, MPI_BYTE, &rq[k - 3]));
    complete_two(rq, 1, "iread_at under Waitsome");

    /* Piece 5 and a ring message: MPI_Testany. */
    token_in = -1;
    CHECK_MPI(MPI_File_iread_at(fh, piece_off(tst_rank, 5), r[5], S, MPI_BYTE, &rq[0]));
    CHECK_MPI(MPI_Irecv(&token_in, 1, MPI_INT, prev, 8, MPI_COMM_WORLD, &rq[1]));
    CHECK_MPI(MPI_Isend(&token_out, 1, MPI_INT, next, 8, MPI_COMM_WORLD, &rq[2]));
    for (int done = 0;;) {
        CHECK_MPI(MPI_Testany(3, rq, &idx, &flag, &st));
        if (flag && idx == MPI_UNDEFINED) {
            CHECK(done == 3, "Testany: %d requests completed, expected 3", done);
            break;
        }
        if (flag) {
            if (idx == 0)
                check_bytes(&st, S, "iread_at under Testany");
            done++;
        }
    }
    CHECK(token_in == prev, "ring: received %d, expected %d", token_in, prev);

    for (int k = 0; k < NP; k++) {
        char what[32];

        snprintf(what, sizeof what, "piece %d", k);
        tst_verify(r[k], S, piece_off(tst_rank, k), tst_rank, 0, what);
        free(w[k]);
        free(r[k]);
    }
    CHECK_MPI(MPI_File_close(&fh));
    return tst_finalize();
}
