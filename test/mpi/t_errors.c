/*
 * Error paths of bblog's MPI_File_open (the hint specification, DESIGN.md section 7). Run only
 * through bblog; not differential. Every case is checked on every rank: the error class, that all
 * ranks agree (a collective open that fails on some ranks only would hang the others later), and
 * for bad values that the message names the key and the value.
 *
 *   t_errors FILE             invalid hint values, bblog_dir missing / a regular file /
 *                             read-only ($TEST_RO_DIR, prepared by the runner) with the path in
 *                             the message, the PFS file in a missing directory, hints that differ
 *                             between ranks, valid spellings as controls; then FILE is written.
 *                             Then the same bad values (and an unknown bblog_ key, and a valid
 *                             value as a control) given to MPI_File_set_info and
 *                             MPI_File_set_view of an open file.
 *   t_errors FILE env:CLASS [VAR]
 *                             open FILE once; it must fail with CLASS (e.g. MPI_ERR_INFO_VALUE)
 *                             because of BBLOG_* variables the runner set, with a message that
 *                             names VAR and its value; `env:MPI_SUCCESS` expects success.
 * The message of a rejected hint must not be ROMIO's "Other I/O error". On Open MPI the error
 * messages cannot name anything (see names_in_message): there the test asserts that the error
 * code is the bare class instead.
 */
#include "common.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

struct bad {
    const char *key, *val;
};

/* A value longer than the 256 bytes MPICH keeps of a message line: the message must still name
 * the hint (filled in main; no longer than MPI_MAX_INFO_VAL allows, 256 in Open MPI). */
static char long_value[300];

/* Values the specification rejects with MPI_ERR_INFO_VALUE. */
static const struct bad bad_values[] = {
    {"bblog_flush_buffer_size", "garbage"},
    {"bblog_flush_buffer_size", "12q"},
    {"bblog_flush_buffer_size", "64kk"},
    {"bblog_flush_buffer_size", "0"},
    {"bblog_flush_buffer_size", "-1"},
    {"bblog_flush_buffer_size", "-64k"},
    {"bblog_flush_buffer_size", "4095"}, /* below the 4k minimum */
    {"bblog_flush_buffer_size", "99999999999999999999999"},
    {"bblog_max_size", "garbage"},
    {"bblog_max_size", "-1"},
    {"bblog_max_size", "1x"},
    {"bblog_max_size", "99999999999g"},
    {"bblog_mapping", "Node"},
    {"bblog_mapping", "bogus"},
    {"bblog_drain", "bogus"},
    {"bblog_drain", "Reactive"},
    {"bblog_sync", "bogus"},
    {"bblog_close", "bogus"},
    {"bblog_segment_size", "1k"},        /* below the 4k minimum */
    {"bblog_segment_size", "2g"},        /* above 1g */
    {"bblog_drain_interval", "-1"},
    {"bblog_drain_interval", "soon"},
    {"bblog_drain_interval", "5s"},
    {"bblog_drain_max_rate", "fast"},
    {"bblog_keep_logs", "maybe"},
    {"bblog_drain_max_rate", long_value},
};

/* Spellings the specification accepts: controls, so that a driver failing every open with
 * hints does not pass the cases above. */
static const struct bad good_values[] = {
    {"bblog_flush_buffer_size", "4k"},   {"bblog_flush_buffer_size", "4096"},
    {"bblog_flush_buffer_size", "1M"},   {"bblog_max_size", "0"},
    {"bblog_max_size", "256K"},          {"bblog_mapping", "process"},
    {"bblog_mapping", "node"},
    {"bblog_drain", "on_demand"},        {"bblog_sync", "bb"},
    {"bblog_close", "pfs"},              {"bblog_keep_logs", "false"},
    {"bblog_drain", "reactive"},         {"bblog_drain", "proactive"},
    {"bblog_close", "bb"},               {"bblog_segment_size", "0"},
    {"bblog_segment_size", "64k"},       {"bblog_drain_interval", "2.5"},
    {"bblog_drain_max_rate", "100m"},
};

/* Whether the message of error code rc names needle. Open MPI 4.1's ROMIO 3.2.1 builds its
 * error codes with mpi-io/glue/openmpi/mpio_err.c, whose MPIO_Err_create_code formats the
 * message into a buffer, frees it and returns the bare error class: MPI_Error_string then gives
 * Open MPI's text for the class, naming no hint, value or path, for bblog's errors as for plain
 * ROMIO's. There, instead of the needle, the code must be the class itself (a dynamic code
 * carrying a message would fail this and ask for the needle check again). MPICH's ROMIO keeps
 * the message (MPIR_Err_create_code). */
static void names_in_message(int rc, const char *needle, const char *label)
{
    const char *msg = tst_err_string(rc);

    if (tst_mpi_is_ompi())
        CHECK(rc == tst_err_class(rc), "%s: Open MPI gave error code %d, not the bare class %d "
              "(ROMIO 3.2.1's MPIO_Err_create_code returns the class): %s", label, rc,
              tst_err_class(rc), msg);
    else
        CHECK(strstr(msg, needle) != NULL, "%s: error message does not name '%s': %s", label,
              needle, msg);
}

/* The start of a value, as a needle: a message shows a long value cut short (at 64 characters
 * with MPICH's ROMIO). */
static const char *value_needle(const char *val)
{
    static char start[33];

    snprintf(start, sizeof start, "%s", val);
    return start;
}

/* Checks an error code: class `want`; for a failure, needles (if given) in the message, and
 * not ROMIO's generic "Other I/O error" (bblog's message is the whole text) unless the class
 * is MPI_ERR_IO itself. Returns whether rc is MPI_SUCCESS. */
static int expect_rc(int rc, int want, const char *label, const char *needle1,
                     const char *needle2)
{
    int cls = tst_err_class(rc);
    char msg[MPI_MAX_ERROR_STRING + 1] = "";

    if (rc != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "%s", tst_err_string(rc));
    CHECK(cls == want, "%s: gave [%s] %s; expected %s", label, tst_class_name(cls), msg,
          tst_class_name(want));
    if (rc == MPI_SUCCESS)
        return 1;
    if (needle1)
        names_in_message(rc, needle1, label);
    if (needle2)
        names_in_message(rc, needle2, label);
    if (!tst_mpi_is_ompi() && want != MPI_ERR_IO)
        CHECK(strstr(msg, "Other I/O error") == NULL, "%s: message says \"Other I/O error\" "
              "for class %s: %s", label, tst_class_name(want), msg);
    return 0;
}

static int class_by_name(const char *s)
{
    static const int all[] = {MPI_SUCCESS,       MPI_ERR_INFO_VALUE, MPI_ERR_NOT_SAME,
                              MPI_ERR_NO_SUCH_FILE, MPI_ERR_ACCESS,  MPI_ERR_BAD_FILE};

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(tst_class_name(all[i]), s) == 0)
            return all[i];
    return -1;
}

/* Opens fname on all ranks with `info` added to TEST_HINTS and checks the outcome: error class
 * `want` on every rank (MPI_SUCCESS: the open must work, then the file is closed). Needles, if
 * given, must appear in the error message. A mixed outcome is reported and the job aborted:
 * the ranks that succeeded cannot close the file without the others. */
static void expect_open(const char *fname, MPI_Info info, int want, const char *label,
                        const char *needle1, const char *needle2)
{
    MPI_File fh = MPI_FILE_NULL;
    int rc = tst_open_rc(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    int ok = expect_rc(rc, want, label, needle1, needle2), all_ok = 0, any_ok = 0;

    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &any_ok, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any_ok && !all_ok) {
        CHECK(0, "%s: open succeeded on some ranks and failed on others", label);
        tst_abort();
    }
    if (ok)
        CHECK_MPI(MPI_File_close(&fh));
}

/* Whether the PFS file exists (plain path). */
static int exists(const char *fname)
{
    struct stat sb;

    return stat(tst_plain_path(fname), &sb) == 0;
}

static void remove_plain(const char *fname)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (tst_rank == 0)
        unlink(tst_plain_path(fname));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Directory part of the plain path of fname (static buffer). */
static const char *dir_of(const char *fname)
{
    static char d[4096];
    const char *p = tst_plain_path(fname), *slash = strrchr(p, '/');

    if (!slash)
        return ".";
    snprintf(d, sizeof d, "%.*s", (int)(slash - p), p);
    return d;
}

static void one_hint(const char *fname, const char *key, const char *val, int want,
                     const char *label)
{
    MPI_Info info;

    MPI_Info_create(&info);
    MPI_Info_set(info, key, val);
    /* A bad value names the key and the value; an unusable bblog_dir names the directory. */
    if (strcmp(key, "bblog_dir") == 0)
        expect_open(fname, info, want, label, want != MPI_SUCCESS ? val : NULL, NULL);
    else
        expect_open(fname, info, want, label, want == MPI_ERR_INFO_VALUE ? key : NULL,
                    want == MPI_ERR_INFO_VALUE ? value_needle(val) : NULL);
    MPI_Info_free(&info);
}

static void dir_cases(const char *fname)
{
    char path[4096], label[256];
    const char *ro = getenv("TEST_RO_DIR");

    /* Missing directory: MPI_ERR_NO_SUCH_FILE, and the file is not created. */
    snprintf(path, sizeof path, "%s/no-such-dir/bb", dir_of(fname));
    one_hint(fname, "bblog_dir", path, MPI_ERR_NO_SUCH_FILE, "bblog_dir missing");
    CHECK(!exists(fname), "bblog_dir missing: %s was created although the open failed",
          tst_plain_path(fname));
    remove_plain(fname);

    /* A regular file where the directory should be: MPI_ERR_BAD_FILE. */
    snprintf(path, sizeof path, "%s/not-a-dir", dir_of(fname));
    if (tst_rank == 0) {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL, "cannot create %s: %s", path, strerror(errno));
        if (f)
            fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    one_hint(fname, "bblog_dir", path, MPI_ERR_BAD_FILE, "bblog_dir is a regular file");
    if (tst_rank == 0)
        printf("t_errors: note: after the open with bblog_dir a regular file, %s %s\n",
               tst_plain_path(fname), exists(fname) ? "exists" : "does not exist");
    remove_plain(fname);
    if (tst_rank == 0)
        unlink(path);

    /* Read-only directory (a read-only mount: root ignores permission bits). */
    if (ro && *ro) {
        snprintf(label, sizeof label, "bblog_dir read-only (%s)", ro);
        one_hint(fname, "bblog_dir", ro, MPI_ERR_ACCESS, label);
        if (tst_rank == 0)
            printf("t_errors: note: after the open with a read-only bblog_dir, %s %s\n",
                   tst_plain_path(fname), exists(fname) ? "exists" : "does not exist");
        remove_plain(fname);
    } else if (tst_rank == 0) {
        printf("t_errors: note: TEST_RO_DIR not set, read-only bblog_dir not checked\n");
    }

    /* The PFS file in a directory that does not exist: MPI_ERR_NO_SUCH_FILE on every rank (the
     * runner checks that no log is left). The path is named where plain ROMIO names it: in the
     * message of the process that opens first (rank 0); the others get only the class, as
     * with ufs:, which is noted. */
    {
        char pfs[4096], *name;
        MPI_File fh = MPI_FILE_NULL;
        int rc, named, any_named = 0, all_named = 0;

        snprintf(pfs, sizeof pfs, "%s/no-such-pfs-dir/out", dir_of(fname));
        name = tst_name(strncmp(fname, "bblog:", 6) == 0 ? "bblog:" : "", pfs);
        rc = tst_open_rc(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh);
        CHECK(tst_err_class(rc) == MPI_ERR_NO_SUCH_FILE, "PFS directory missing: open gave [%s] "
              "%s; expected MPI_ERR_NO_SUCH_FILE", tst_class_name(tst_err_class(rc)),
              rc == MPI_SUCCESS ? "" : tst_err_string(rc));
        if (rc == MPI_SUCCESS)
            CHECK_MPI(MPI_File_close(&fh));
        /* On Open MPI no message names anything (names_in_message): the code must be the bare
         * class on every rank instead, which "named" then stands for. */
        if (tst_mpi_is_ompi())
            named = rc != MPI_SUCCESS && rc == tst_err_class(rc);
        else
            named = rc != MPI_SUCCESS && strstr(tst_err_string(rc), pfs) != NULL;
        MPI_Allreduce(&named, &any_named, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        MPI_Allreduce(&named, &all_named, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (tst_rank == 0) {
            if (tst_mpi_is_ompi())
                CHECK(all_named, "PFS directory missing: on Open MPI every rank's error code must "
                      "be the bare class MPI_ERR_NO_SUCH_FILE");
            else
                CHECK(any_named, "PFS directory missing: no rank's error message names %s", pfs);
            if (!tst_mpi_is_ompi() && any_named && !all_named)
                printf("t_errors: note: PFS directory missing: only some ranks' messages name "
                       "the path (as with plain ROMIO)\n");
        }
        free(name);
    }
}

static void mismatch_cases(const char *fname)
{
    static const struct {
        const char *key, *v0, *vother;
        int want;
    } mm[] = {
        {"bblog_flush_buffer_size", "64k", "128k", MPI_ERR_NOT_SAME},
        {"bblog_sync", "pfs", "bb", MPI_ERR_NOT_SAME},
        {"bblog_flush_buffer_size", "64k", "65536", MPI_SUCCESS}, /* equal values */
    };

    if (tst_size < 2) {
        if (tst_rank == 0)
            printf("t_errors: note: 1 rank, hints differing between ranks not checked\n");
        return;
    }
    for (size_t i = 0; i < sizeof mm / sizeof mm[0]; i++) {
        char label[200];
        snprintf(label, sizeof label, "%s = %s on rank 0, %s elsewhere", mm[i].key, mm[i].v0,
                 mm[i].vother);
        one_hint(fname, mm[i].key, tst_rank == 0 ? mm[i].v0 : mm[i].vother, mm[i].want, label);
        remove_plain(fname);
    }
}

/* Gives key=val (class `want` expected) to MPI_File_set_info and MPI_File_set_view of fh. */
static void bad_after_open(MPI_File fh, const char *key, const char *val, int want)
{
    const char *vneedle = want == MPI_ERR_INFO_VALUE ? value_needle(val) : NULL;
    char label[200];
    MPI_Info info;

    MPI_Info_create(&info);
    MPI_Info_set(info, key, val);
    snprintf(label, sizeof label, "MPI_File_set_info %s=%s", key, value_needle(val));
    expect_rc(MPI_File_set_info(fh, info), want, label, key, vneedle);
    /* Open MPI 4.1's graft leaves ROMIO's set_view alone, whose ADIO_Set_view drops the
     * driver's error (MPICH's graft, and Open MPI 5's, have the driver check the info first). */
    if (!tst_romio_321()) {
        snprintf(label, sizeof label, "MPI_File_set_view %s=%s", key, value_needle(val));
        expect_rc(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info), want, label,
                  key, vneedle);
    }
    MPI_Info_free(&info);
}

/* bblog_* hints given to MPI_File_set_info or MPI_File_set_view of an open file change nothing
 * (they are fixed at open), but the driver checks them as at open: a bad value fails the call
 * with MPI_ERR_INFO_VALUE naming key and value, an unknown bblog_ key with MPI_ERR_INFO_KEY;
 * a valid value is accepted and the value in force stays. The file works on after all that. */
static void after_open_cases(const char *fname)
{
    MPI_File fh;
    MPI_Info info, got;
    char before[MPI_MAX_INFO_VAL + 1] = "", after[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;

    tst_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++)
        bad_after_open(fh, bad_values[i].key, bad_values[i].val, MPI_ERR_INFO_VALUE);
    bad_after_open(fh, "bblog_no_such_hint", "1", MPI_ERR_INFO_KEY);
    if (tst_romio_321() && tst_rank == 0)
        printf("t_errors: note: Open MPI 4.1: bad hints given to MPI_File_set_view not checked\n");

    /* A valid value: accepted, and the value in force stays (get_info reports it: ROMIO's on
     * MPICH, the graft's hook on Open MPI 4.1). */
    CHECK_MPI(MPI_File_get_info(fh, &got));
    CHECK_MPI(MPI_Info_get(got, "bblog_sync", MPI_MAX_INFO_VAL, before, &flag));
    MPI_Info_free(&got);
    MPI_Info_create(&info);
    MPI_Info_set(info, "bblog_sync", strcmp(before, "bb") == 0 ? "pfs" : "bb");
    expect_rc(MPI_File_set_info(fh, info), MPI_SUCCESS, "MPI_File_set_info valid bblog_sync",
              NULL, NULL);
    expect_rc(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info), MPI_SUCCESS,
              "MPI_File_set_view valid bblog_sync", NULL, NULL);
    MPI_Info_free(&info);
    CHECK_MPI(MPI_File_get_info(fh, &got));
    CHECK_MPI(MPI_Info_get(got, "bblog_sync", MPI_MAX_INFO_VAL, after, &flag));
    MPI_Info_free(&got);
    CHECK(strcmp(before, after) == 0, "bblog_sync in force changed from '%s' to '%s' after "
          "MPI_File_set_info (bblog hints are fixed at open)", before, after);
    {
        unsigned char buf[1000];
        MPI_Status st;
        tst_fill(buf, sizeof buf, tst_rank * 1000, tst_rank, 0);
        CHECK_MPI(MPI_File_write_at_all(fh, tst_rank * 1000, buf, 1000, MPI_BYTE, &st));
    }
    CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    char *scratch = tst_name(name, ".err");
    struct tst_image img;
    MPI_File fh;
    MPI_Status st;

    memset(long_value, 'x', (sizeof long_value < MPI_MAX_INFO_VAL ? sizeof long_value :
                             MPI_MAX_INFO_VAL) - 1);
    if (argc > 2 && strncmp(argv[2], "env:", 4) == 0) {
        int want = class_by_name(argv[2] + 4);
        const char *var = argc > 3 ? argv[3] : NULL, *val = var ? getenv(var) : NULL;
        REQUIRE(want >= 0, "unknown class %s", argv[2] + 4);
        REQUIRE(!var || val, "%s names %s, which is not set", argv[2], var);
        expect_open(name, MPI_INFO_NULL, want, argv[2], var, val ? value_needle(val) : NULL);
        free(scratch);
        return tst_finalize();
    }
    REQUIRE(tst_is_bblog(name), "t_errors runs only through bblog (got %s)", name);

    {
        /* Whether a rejected open leaves the PFS file behind is not specified: report it. */
        char left[2048] = "";
        for (size_t i = 0; i < sizeof bad_values / sizeof bad_values[0]; i++) {
            char label[200];
            snprintf(label, sizeof label, "%s=%s", bad_values[i].key, bad_values[i].val);
            one_hint(scratch, bad_values[i].key, bad_values[i].val, MPI_ERR_INFO_VALUE, label);
            if (tst_rank == 0 && exists(scratch) && strlen(left) + strlen(label) + 2 < sizeof left)
                snprintf(left + strlen(left), sizeof left - strlen(left), " %s", label);
            remove_plain(scratch);
        }
        if (tst_rank == 0 && *left)
            printf("t_errors: note: the file exists after the open with:%s\n", left);
    }
    for (size_t i = 0; i < sizeof good_values / sizeof good_values[0]; i++) {
        char label[200];
        snprintf(label, sizeof label, "valid %s=%s", good_values[i].key, good_values[i].val);
        one_hint(scratch, good_values[i].key, good_values[i].val, MPI_SUCCESS, label);
        remove_plain(scratch);
    }
    dir_cases(scratch);
    mismatch_cases(scratch);
    after_open_cases(scratch);
    remove_plain(scratch);

    /* After all that, the driver still works. */
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    {
        unsigned char buf[3000];
        tst_fill(buf, sizeof buf, tst_rank * 3000, tst_rank, 0);
        CHECK_MPI(MPI_File_write_at_all(fh, tst_rank * 3000, buf, 3000, MPI_BYTE, &st));
    }
    CHECK_MPI(MPI_File_close(&fh));
    tst_img_init(&img);
    for (int r = 0; r < tst_size; r++)
        tst_img_write(&img, r * 3000, 3000, r, 0);
    tst_check_file(MPI_COMM_WORLD, name, &img);
    tst_img_free(&img);
    free(scratch);
    return tst_finalize();
}
