/*
 * File error handlers and handle conversions, as an application uses them:
 *  - a handler of MPI_File_create_errhandler set on a file runs once per failing call, with
 *    the file's handle and the call's error code, and the call then returns that code;
 *  - MPI_File_call_errhandler runs it too (and returns MPI_SUCCESS), MPI_File_get_errhandler
 *    gives it back, MPI_ERRORS_RETURN set again stops it;
 *  - set on MPI_FILE_NULL it is the default of files not open yet: a failed open runs it with
 *    MPI_FILE_NULL;
 *  - a handler from MPI_File_get_errhandler, predefined or not, is the caller's to free;
 *  - MPI_File_c2f/f2c (and MPI 4.2's toint/fromint where mpi.h has them) give back the same
 *    file, still usable; MPI_File_close sets the handle to MPI_FILE_NULL as the program's
 *    mpi.h defines it (Open MPI's is the address of its own null object, not 0).
 * Every rank writes its own 1000-byte block, so the file is compared with plain ROMIO's.
 */
#include "common.h"

#define BLOCK 1000

static int calls, last_class;
static MPI_File last_fh;

static void on_error(MPI_File *fh, int *code, ...)
{
    calls++;
    last_fh = *fh;
    MPI_Error_class(*code, &last_class);
}

/* Expects one call of the handler, for file fh, with an error of class cls; rc is what the
 * failing call returned. */
static void expect_call(const char *what, int rc, MPI_File fh, int cls)
{
    int rc_class = -1;

    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &rc_class);
    CHECK(calls == 1, "%s: the handler ran %d times, expected once", what, calls);
    CHECK(last_fh == fh, "%s: the handler got another file handle", what);
    CHECK(last_class == cls, "%s: the handler got class %d, expected %d", what, last_class, cls);
    CHECK(rc_class == cls, "%s: returned class %d, expected %d", what, rc_class, cls);
    calls = 0;
    last_class = -1;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    char *missing = tst_name(name, ".missing");
    unsigned char buf[BLOCK];
    MPI_Errhandler eh, got;
    MPI_File fh, fh2, nofile = MPI_FILE_NULL;
    MPI_Offset off = (MPI_Offset)tst_rank * BLOCK;
    int rc;

    CHECK_MPI(MPI_File_create_errhandler(on_error, &eh));

    /* The default handler of files: a failed open calls it with MPI_FILE_NULL. */
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == eh, "get_errhandler(MPI_FILE_NULL) is not the handler set");
    CHECK_MPI(MPI_Errhandler_free(&got));
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh2);
    expect_call("open of a missing file", rc, nofile, MPI_ERR_NO_SUCH_FILE);
    CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));

    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_MPI(MPI_File_set_errhandler(fh, eh));
    CHECK_MPI(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh, "get_errhandler(fh) is not the handler set");
    CHECK_MPI(MPI_Errhandler_free(&got));

    tst_fill(buf, BLOCK, off, tst_rank, 0);
    CHECK_MPI(MPI_File_write_at(fh, off, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(calls == 0, "a write that succeeded ran the handler");

    rc = MPI_File_write_at(fh, -1, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_call("write at offset -1", rc, fh, MPI_ERR_ARG);
    rc = MPI_File_read_at(fh, off, buf, -5, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_call("read of -5 bytes", rc, fh, MPI_ERR_COUNT);

    rc = MPI_File_call_errhandler(fh, MPI_ERR_OTHER);
    CHECK(rc == MPI_SUCCESS, "call_errhandler returned %d, expected MPI_SUCCESS", rc);
    expect_call("call_errhandler", MPI_ERR_OTHER, fh, MPI_ERR_OTHER);

    /* Handle conversions give the same, usable file. */
    fh2 = MPI_File_f2c(MPI_File_c2f(fh));
    CHECK(fh2 == fh, "MPI_File_f2c(MPI_File_c2f(fh)) is another handle");
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 2)
    fh2 = MPI_File_fromint(MPI_File_toint(fh));
    CHECK(fh2 == fh, "MPI_File_fromint(MPI_File_toint(fh)) is another handle");
#endif
    rc = MPI_File_read_at(fh2, off, buf, -1, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_call("read of -1 bytes through the converted handle", rc, fh, MPI_ERR_COUNT);

    CHECK_MPI(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    /* A predefined handler from get_errhandler is the caller's to free too (MPI 2.2), and
     * the file keeps it (mpi4py's testGetErrhandler does this, then closes the file). */
    for (int i = 0; i < 3; i++) {
        CHECK_MPI(MPI_File_get_errhandler(fh, &got));
        CHECK(got == MPI_ERRORS_RETURN, "get_errhandler(fh) is not MPI_ERRORS_RETURN");
        CHECK_MPI(MPI_Errhandler_free(&got));
    }
    rc = MPI_File_write_at(fh, -1, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK(rc != MPI_SUCCESS && calls == 0,
          "with MPI_ERRORS_RETURN again: rc %d, handler ran %d times", rc, calls);

    CHECK_MPI(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "MPI_File_close did not set the handle to this mpi.h's "
          "MPI_FILE_NULL");
    CHECK_MPI(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free left the handle set");
    free(missing);
    return tst_finalize();
}
