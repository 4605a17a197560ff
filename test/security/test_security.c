/*
 * Security of the logs (issue 8): logs are created O_EXCL|O_NOFOLLOW with mode 0600 in a
 * per-user 0700 directory DIR/bblog-UID (logfs/log.c, logfs/userdir.c), so that in a shared,
 * world-writable bblog_dir nobody can redirect the logs with a planted symlink, read them, or
 * replace them. The checks against another user run in a child process that became `nobody`,
 * so this test needs root: run by hand as another user it skips (77) unless CI is set, where
 * it fails (CI runs as root).
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bblog_log.h"
#include "bblog_replay.h"
#include "testutil.h"

struct fx {
    char *base;                 /* a shared directory, mode 1777 like /tmp */
    char udir[4096];            /* base/bblog-UID, once made */
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    const char *tmp = getenv("TMPDIR");

    if (f == NULL)
        return -1;
    f->base = tu_mkdtemp(tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (f->base == NULL || chmod(f->base, 01777) != 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    tu_rmtree(f->base);
    free(f->base);
    free(f);
    return 0;
}

static char *path_in(const char *dir, const char *name)
{
    char *p = NULL;

    assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
    return p;
}

/* A log NAME in DIR with one 100-byte record, closed and kept. */
static void make_log(const char *dir, const char *name)
{
    struct bblog_log_params p = {
        .dir = dir, .name = name, .pfs_path = "/pfs/secret.dat", .job_id = "sec",
        .rank = 0, .nprocs = 1, .staging_size = 4096, .staging_count = 2,
        .flags = BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT,
    };
    struct bblog_log *log = NULL;
    char buf[100];

    memset(buf, 's', sizeof buf);
    assert_int_equal(bblog_log_create(&p, &log), 0);
    assert_int_equal(bblog_log_append(log, 0, sizeof buf, buf, NULL), 0);
    assert_int_equal(bblog_log_close(log, 0), 0);
}

static int try_create(const char *dir, const char *name)
{
    struct bblog_log_params p = {
        .dir = dir, .name = name, .pfs_path = "/pfs/x", .job_id = "sec", .rank = 0,
        .nprocs = 1, .staging_size = 4096, .staging_count = 2,
        .flags = BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT,
    };
    struct bblog_log *log = NULL;
    int rc = bblog_log_create(&p, &log);

    if (rc == 0)
        bblog_log_close(log, 1);
    return rc;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");

    assert_non_null(fp);
    assert_int_equal(fputs(text, fp) >= 0, 1);
    assert_int_equal(fclose(fp), 0);
}

static void assert_text(const char *path, const char *text)
{
    char buf[256] = { 0 };
    FILE *fp = fopen(path, "r");

    assert_non_null(fp);
    assert_true(fread(buf, 1, sizeof buf - 1, fp) == strlen(text));
    fclose(fp);
    assert_string_equal(buf, text);
}

/* Mode 0600 files in a 0700 directory owned by the caller, whatever the umask. */
static void test_modes(void **state)
{
    struct fx *f = *state;
    mode_t old = umask(0);
    struct stat st;
    char *meta, *data;

    assert_int_equal(bblog_log_userdir(f->base, f->udir, sizeof f->udir), 0);
    make_log(f->udir, "m");
    umask(old);
    assert_int_equal(lstat(f->udir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0700);
    assert_int_equal(st.st_uid, geteuid());
    meta = path_in(f->udir, "m.meta");
    data = path_in(f->udir, "m.data");
    assert_int_equal(lstat(meta, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(lstat(data, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0600);
    free(meta);
    free(data);
}

/* A symlink (or any file) planted at a log's name is refused, and what it points to is left
 * alone: not written, not created, not truncated. */
static void test_symlink_at_log_path(void **state)
{
    struct fx *f = *state;
    char *victim = path_in(f->base, "victim");
    char *absent = path_in(f->base, "absent");
    char *meta, *data;
    struct stat st;

    assert_int_equal(bblog_log_userdir(f->base, f->udir, sizeof f->udir), 0);
    write_text(victim, "precious");
    meta = path_in(f->udir, "a.meta");
    data = path_in(f->udir, "a.data");

    assert_int_equal(symlink(victim, meta), 0);
    assert_int_equal(try_create(f->udir, "a"), EEXIST);
    assert_text(victim, "precious");
    assert_int_equal(lstat(data, &st), -1);     /* nothing left behind */
    assert_int_equal(unlink(meta), 0);

    /* A dangling link must not create its target either. */
    assert_int_equal(symlink(absent, meta), 0);
    assert_int_equal(try_create(f->udir, "a"), EEXIST);
    assert_int_equal(lstat(absent, &st), -1);
    assert_int_equal(unlink(meta), 0);

    /* At the data log's name: the meta file just created is removed again. */
    assert_int_equal(symlink(victim, data), 0);
    assert_int_equal(try_create(f->udir, "a"), EEXIST);
    assert_text(victim, "precious");
    assert_int_equal(lstat(meta, &st), -1);
    assert_int_equal(unlink(data), 0);

    /* A hard link to a file of ours is no way in either. */
    assert_int_equal(link(victim, meta), 0);
    assert_int_equal(try_create(f->udir, "a"), EEXIST);
    assert_text(victim, "precious");
    free(meta);
    free(data);
    free(victim);
    free(absent);
}

static char *userdir_name(const struct fx *f)
{
    char *p = NULL;

    assert_true(asprintf(&p, "%s/bblog-%lu", f->base, (unsigned long) geteuid()) > 0);
    return p;
}

/* A symlink planted at the per-user directory is refused, even when it leads to a directory
 * that would pass every other check; nothing is created where it points. */
static void test_symlink_at_userdir(void **state)
{
    struct fx *f = *state;
    char *ud = userdir_name(f), *elsewhere = path_in(f->base, "elsewhere");
    char out[4096];
    DIR *d;
    struct dirent *de;
    int entries = 0;

    assert_int_equal(mkdir(elsewhere, 0700), 0);
    assert_int_equal(symlink(elsewhere, ud), 0);
    assert_int_equal(bblog_log_userdir(f->base, out, sizeof out), EPERM);
    d = opendir(elsewhere);
    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        entries += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    assert_int_equal(entries, 0);
    free(ud);
    free(elsewhere);
}

/* A per-user directory that others could read or enter, that another user owns, or that is
 * not a directory, is refused rather than used. */
static void test_userdir_not_private(void **state)
{
    struct fx *f = *state;
    char *ud = userdir_name(f);
    struct passwd *pw = getpwnam("nobody");
    char out[4096];

    assert_int_equal(mkdir(ud, 0700), 0);
    assert_int_equal(chmod(ud, 0755), 0);
    assert_int_equal(bblog_log_userdir(f->base, out, sizeof out), EPERM);
    assert_int_equal(chmod(ud, 0701), 0);
    assert_int_equal(bblog_log_userdir(f->base, out, sizeof out), EPERM);
    assert_int_equal(chmod(ud, 0700), 0);
    assert_int_equal(bblog_log_userdir(f->base, out, sizeof out), 0);
    assert_non_null(pw);
    assert_int_equal(chown(ud, pw->pw_uid, pw->pw_gid), 0);
    assert_int_equal(bblog_log_userdir(f->base, out, sizeof out), EPERM);
    assert_int_equal(rmdir(ud), 0);
    write_text(ud, "");
    assert_int_equal(bblog_log_userdir(f->base, out, sizeof out), EPERM);
    free(ud);
}

/* In the child, as nobody: every attempt on the log must fail. Returns the failures. */
static int attack_as_nobody(const struct fx *f, const char *meta, const char *data)
{
    char *stray = path_in(f->base, "stray"), *moved = path_in(f->base, "moved");
    char *planted = path_in(f->udir, "planted.meta");
    struct bblog_replay_list list;
    struct bblog_replay_err err;
    int bad = 0, fd;

#define MUST_FAIL(what, call)                                                                  \
    do {                                                                                       \
        errno = 0;                                                                             \
        if ((call) >= 0) {                                                                     \
            fprintf(stderr, "as nobody, %s succeeded\n", what);                                \
            bad++;                                                                             \
        }                                                                                      \
    } while (0)

    MUST_FAIL("reading the meta log", fd = open(meta, O_RDONLY));
    MUST_FAIL("reading the data log", fd = open(data, O_RDONLY));
    MUST_FAIL("writing the meta log", fd = open(meta, O_WRONLY));
    MUST_FAIL("truncating the data log", truncate(data, 0));
    MUST_FAIL("removing the meta log", unlink(meta));
    fd = open(stray, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        fprintf(stderr, "as nobody, can't make %s: %s\n", stray, strerror(errno));
        bad++;
    } else {
        close(fd);
    }
    MUST_FAIL("replacing the meta log by rename", rename(stray, meta));
    MUST_FAIL("planting a file in the per-user directory",
              fd = open(planted, O_WRONLY | O_CREAT | O_EXCL, 0644));
    MUST_FAIL("planting a symlink in the per-user directory", symlink(stray, planted));
    MUST_FAIL("moving the per-user directory away", rename(f->udir, moved));
    MUST_FAIL("removing the per-user directory", rmdir(f->udir));
    MUST_FAIL("listing the per-user directory", opendir(f->udir) ? 0 : -1);
    MUST_FAIL("changing the per-user directory's mode", chmod(f->udir, 0777));
#undef MUST_FAIL
    /* The replay library as nobody does not see (nor fail on) other users' directories. */
    if (bblog_replay_discover(f->base, &list, &err) != 0) {
        fprintf(stderr, "as nobody, discovery failed: %s: %s\n", err.path, err.reason);
        bad++;
    } else {
        if (list.n != 0) {
            fprintf(stderr, "as nobody, discovery listed %zu logs of another user\n", list.n);
            bad++;
        }
        bblog_replay_list_free(&list);
    }
    unlink(stray);
    free(stray);
    free(moved);
    free(planted);
    return bad;
}

/* Another user (nobody) can neither read, change, replace, nor move a log or its directory. */
static void test_other_user(void **state)
{
    struct fx *f = *state;
    struct passwd *pw = getpwnam("nobody");
    char *meta, *data;
    unsigned long long ino;
    long long size;
    pid_t pid;
    int status;

    assert_non_null(pw);
    assert_int_equal(bblog_log_userdir(f->base, f->udir, sizeof f->udir), 0);
    make_log(f->udir, "o");
    meta = path_in(f->udir, "o.meta");
    data = path_in(f->udir, "o.data");
    ino = tu_ino(meta);
    size = tu_fsize(meta);
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) {
            fprintf(stderr, "can't become nobody: %s\n", strerror(errno));
            _exit(100);
        }
        _exit(attack_as_nobody(f, meta, data) == 0 ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* And the log is the one we wrote. */
    assert_int_equal(tu_ino(meta), ino);
    assert_int_equal(tu_fsize(meta), size);
    free(meta);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_modes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_at_log_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_at_userdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_userdir_not_private, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_user, setup, teardown),
    };

    if (geteuid() != 0) {
        const char *ci = getenv("CI");

        fprintf(stderr, "test_security: needs root (to become nobody and to chown)%s\n",
                ci != NULL && ci[0] != '\0' ? "; CI is set, so this is a failure" : ": skipped");
        return ci != NULL && ci[0] != '\0' ? 1 : 77;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
