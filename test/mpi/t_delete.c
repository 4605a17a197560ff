/*
 * MPI_File_delete: it removes the file (DESIGN.md section 3: the PFS file and any stale logs of
 * it). Checked: the file is gone (stat of the plain path, and opening it fails with
 * MPI_ERR_NO_SUCH_FILE); deleting a missing file fails with MPI_ERR_NO_SUCH_FILE; a file created
 * again under the same name holds only its new data (nothing of the old logs comes back); with
 * bblog_keep_logs=true the kept logs go with the file, so on bblog the burst-buffer directory
 * ($BBLOG_DIR, set by the runner per run) holds no file at the end.
 * argv[1] receives a short record of the steps, for the runner's comparison.
 */
#include "common.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#define N ((int64_t)70000)

static void write_file(const char *fname, int gen, MPI_Info extra)
{
    MPI_File fh;
    MPI_Status st;
    unsigned char *buf = malloc(N);

    REQUIRE(buf, "out of memory");
    tst_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, extra, &fh);
    tst_fill(buf, N, tst_rank * N, tst_rank, gen);
    if (gen % 2)
        CHECK_MPI(MPI_File_write_at_all(fh, tst_rank * N, buf, (int)N, MPI_BYTE, &st));
    else
        CHECK_MPI(MPI_File_write_at(fh, tst_rank * N, buf, (int)N, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_close(&fh));
    free(buf);
}

static void expect_gone(const char *fname, const char *when)
{
    struct stat sb;
    MPI_File fh;
    int rc;

    CHECK(stat(tst_plain_path(fname), &sb) != 0 && errno == ENOENT,
          "%s: %s still exists after MPI_File_delete", when, tst_plain_path(fname));
    rc = tst_open_rc(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(tst_err_class(rc) == MPI_ERR_NO_SUCH_FILE,
          "%s: opening a deleted file gave [%s] %s, expected MPI_ERR_NO_SUCH_FILE", when,
          tst_class_name(tst_err_class(rc)), rc == MPI_SUCCESS ? "" : tst_err_string(rc));
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
}

/* Counts regular files below dir (recursively). */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat sb;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &sb) != 0)
            continue;
        if (S_ISDIR(sb.st_mode))
            n += count_files(path);
        else {
            fprintf(stderr, "%s rank %d: left in the burst buffer: %s\n", tst_prog, tst_rank,
                    path);
            n++;
        }
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    char *del = tst_name(name, ".del"), *kept = tst_name(name, ".kept");
    char *missing = tst_name(name, ".never-created");
    struct tst_image img;
    MPI_Info keep;
    MPI_File fh;
    MPI_Status st;
    int rc;

    /* Delete a closed file that was written through the logs. */
    write_file(del, 1, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tst_rank == 0)
        CHECK_MPI(MPI_File_delete(del, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_gone(del, "first delete");

    /* A new file under the same name holds only new data. */
    write_file(del, 2, MPI_INFO_NULL);
    tst_img_init(&img);
    for (int r = 0; r < tst_size; r++)
        tst_img_write(&img, r * N, N, r, 2);
    tst_check_file(MPI_COMM_WORLD, del, &img);
    tst_img_free(&img);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tst_rank == tst_size - 1)
        CHECK_MPI(MPI_File_delete(del, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_gone(del, "second delete");

    /* Missing file. */
    rc = MPI_File_delete(missing, MPI_INFO_NULL);
    CHECK(tst_err_class(rc) == MPI_ERR_NO_SUCH_FILE,
          "deleting a missing file gave [%s], expected MPI_ERR_NO_SUCH_FILE",
          tst_class_name(tst_err_class(rc)));

    /* Kept logs go with the file. */
    MPI_Info_create(&keep);
    MPI_Info_set(keep, "bblog_keep_logs", "true");
    write_file(kept, 3, keep);
    MPI_Info_free(&keep);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tst_rank == 0)
        CHECK_MPI(MPI_File_delete(kept, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    expect_gone(kept, "delete of a file with kept logs");
    MPI_Barrier(MPI_COMM_WORLD);
    if (tst_is_bblog(name) && getenv("BBLOG_DIR") && tst_rank == 0) {
        int n = count_files(getenv("BBLOG_DIR"));
        CHECK(n == 0, "%d files left in BBLOG_DIR=%s after deleting the only file with kept "
              "logs", n, getenv("BBLOG_DIR"));
    }

    /* Delete on close, with data still in the logs at close. */
    {
        char *doc = tst_name(name, ".doc");
        unsigned char buf[5000];
        tst_open(MPI_COMM_WORLD, doc, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                 MPI_INFO_NULL, &fh);
        tst_fill(buf, sizeof buf, tst_rank * 5000, tst_rank, 4);
        CHECK_MPI(MPI_File_write_at(fh, tst_rank * 5000, buf, 5000, MPI_BYTE, &st));
        CHECK_MPI(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
        expect_gone(doc, "MPI_MODE_DELETE_ON_CLOSE");
        free(doc);
    }

    /* MPI_MODE_EXCL on a file that exists. */
    write_file(del, 5, MPI_INFO_NULL);
    rc = tst_open_rc(MPI_COMM_WORLD, del, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                     MPI_INFO_NULL, &fh);
    CHECK(tst_err_class(rc) == MPI_ERR_FILE_EXISTS,
          "MPI_MODE_EXCL on an existing file gave [%s], expected MPI_ERR_FILE_EXISTS",
          tst_class_name(tst_err_class(rc)));
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tst_rank == 0)
        CHECK_MPI(MPI_File_delete(del, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);

    /* The record for the runner. */
    tst_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (tst_rank == 0) {
        static const char rec[] = "t_delete: deleted, recreated, kept logs, on close, excl\n";
        CHECK_MPI(MPI_File_write_at(fh, 0, rec, (int)strlen(rec), MPI_CHAR, &st));
    }
    CHECK_MPI(MPI_File_close(&fh));
    free(del);
    free(kept);
    free(missing);
    return tst_finalize();
}
