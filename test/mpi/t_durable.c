/*
 * Durability a program can ask about: MPI_File_get_info on a bblog file reports, for the
 * calling process, bblog_pending_bytes (logged, not yet in the PFS file) and bblog_durable
 * (everything it wrote is in the PFS file and flushed there). What must hold depends on the
 * hints in force, read back from get_info:
 * - after a small logged write: pending is its size unless a background drain may already
 *   have taken it, and durable is false unless that drain also flushed it;
 * - bblog_sync=pfs: after MPI_File_sync nothing is pending and everything is durable; a write
 *   straight to the PFS file (in atomic mode) is not durable until the next sync, which
 *   flushes it even when nothing was logged anywhere;
 * - bblog_sync=bb with a background drain: the process's data becomes durable on its own
 *   (polled, with a deadline, since the drain is asynchronous);
 * - bblog_sync=bb without one: the data stays pending until close.
 * With bblog_close=bb, `bblog status` (BBLOG_TOOL, run by rank 0 after close) must say the
 * file is still draining: its logs are held until MPI_Finalize has waited for their drain.
 * Through ufs the keys are absent and nothing is checked but the file.
 */
#include "common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define SMALL 4096
#define BIG (2 << 20)

static int info_get(MPI_File fh, const char *key, char *val)
{
    MPI_Info info;
    int flag;

    CHECK_MPI(MPI_File_get_info(fh, &info));
    CHECK_MPI(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag));
    MPI_Info_free(&info);
    return flag;
}

static long long pending(MPI_File fh)
{
    char v[MPI_MAX_INFO_VAL + 1];

    REQUIRE(info_get(fh, "bblog_pending_bytes", v), "get_info has no bblog_pending_bytes");
    return atoll(v);
}

static int durable(MPI_File fh)
{
    char v[MPI_MAX_INFO_VAL + 1];

    REQUIRE(info_get(fh, "bblog_durable", v), "get_info has no bblog_durable");
    REQUIRE(strcmp(v, "true") == 0 || strcmp(v, "false") == 0, "bblog_durable is '%s'", v);
    return strcmp(v, "true") == 0;
}

/* What get_info returns, handed back to set_info, is accepted: the reported keys too. */
static void info_roundtrip(MPI_File fh)
{
    MPI_Info info;
    int rc;

    CHECK_MPI(MPI_File_get_info(fh, &info));
    rc = MPI_File_set_info(fh, info);
    CHECK(rc == MPI_SUCCESS, "set_info of get_info's object: %s", tst_err_string(rc));
    MPI_Info_free(&info);
}

static int hint_is(MPI_File fh, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];

    return info_get(fh, key, v) && strcmp(v, want) == 0;
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    unsigned char *buf = malloc(BIG);
    int64_t small_off = (int64_t) tst_rank * SMALL;
    int64_t big_off = (int64_t) tst_size * SMALL + (int64_t) tst_rank * BIG;
    int bb = tst_is_bblog(name), bg = 0, sync_bb = 0, close_bb = 0;
    struct tst_image img;
    MPI_File fh;
    MPI_Status st;

    REQUIRE(buf, "out of memory");
    tst_img_init(&img);
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (bb) {
        bg = !hint_is(fh, "bblog_drain", "on_demand");
        sync_bb = hint_is(fh, "bblog_sync", "bb");
        close_bb = hint_is(fh, "bblog_close", "bb");
        CHECK(pending(fh) == 0 && durable(fh), "a new file: pending %lld, durable %d",
              pending(fh), durable(fh));
    }

    tst_fill(buf, SMALL, small_off, tst_rank, 1);
    CHECK_MPI(MPI_File_write_at(fh, small_off, buf, SMALL, MPI_BYTE, &st));
    for (int w = 0; w < tst_size; w++)
        tst_img_write(&img, (int64_t) w * SMALL, SMALL, w, 1);
    if (bb && !bg)
        CHECK(pending(fh) == SMALL && !durable(fh), "after a %d-byte write: pending %lld, "
              "durable %d", SMALL, pending(fh), durable(fh));
    if (bb && bg)
        CHECK(pending(fh) <= SMALL, "after a %d-byte write: pending %lld", SMALL, pending(fh));

    CHECK_MPI(MPI_File_sync(fh));
    if (bb && !sync_bb)
        CHECK(pending(fh) == 0 && durable(fh), "after a sync to the PFS: pending %lld, "
              "durable %d", pending(fh), durable(fh));
    if (bb && sync_bb && !bg)
        CHECK(pending(fh) == SMALL && !durable(fh), "after a sync to the burst buffer: pending "
              "%lld, durable %d", pending(fh), durable(fh));
    if (bb && sync_bb && bg) {
        double deadline = now() + 60;

        while (!durable(fh) && now() < deadline)
            ;
        CHECK(durable(fh) && pending(fh) == 0, "the background drain did not make the data "
              "durable within 60 s: pending %lld", pending(fh));
    }

    /* In atomic mode a write goes straight to the PFS file: in no log, but not flushed. */
    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    tst_fill(buf, BIG, big_off, tst_rank, 2);
    CHECK_MPI(MPI_File_write_at(fh, big_off, buf, BIG, MPI_BYTE, &st));
    for (int w = 0; w < tst_size; w++)
        tst_img_write(&img, (int64_t) tst_size * SMALL + (int64_t) w * BIG, BIG, w, 2);
    if (bb && !sync_bb && !bg)
        CHECK(pending(fh) == 0 && !durable(fh), "after a write straight to the PFS: pending "
              "%lld, durable %d", pending(fh), durable(fh));
    CHECK_MPI(MPI_File_sync(fh));
    if (bb && !sync_bb)
        CHECK(pending(fh) == 0 && durable(fh), "after the sync of a write straight to the "
              "PFS: pending %lld, durable %d", pending(fh), durable(fh));
    CHECK_MPI(MPI_File_set_atomicity(fh, 0));
    info_roundtrip(fh);
    CHECK_MPI(MPI_File_close(&fh));

    /* Closed with bblog_close=bb: the logs stay held by their drains until MPI_Finalize. */
    if (bb && close_bb && tst_rank == 0 && getenv("BBLOG_TOOL") && getenv("BBLOG_DIR")) {
        char cmd[8192];
        int rc;

        snprintf(cmd, sizeof(cmd), "'%s' status '%s' --file '%s' >/dev/null",
                 getenv("BBLOG_TOOL"), getenv("BBLOG_DIR"), tst_plain_path(name));
        rc = system(cmd);
        CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "bblog status after close with "
              "bblog_close=bb: exit %d, expected 2 (draining)", WIFEXITED(rc) ?
              WEXITSTATUS(rc) : -1);
    }
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(buf);
    return tst_finalize();
}
