/*
 * Turning bblog conditions into MPI error codes whose message says what went wrong and where, the
 * text of bblog's return codes (ADIOI_BBLOG_Strerror, ADIOI_BBLOG_ECOLL among them), and the
 * warning that the burst buffer is full, said once per job.
 *
 * Invariants. An error's message is bblog's text alone (ROMIO's "Other I/O error" is not put before
 * it); Err_rc names what failed and the path, and picks the class that fits the return code (a
 * missing file, an access problem, no space; a failed collective call is MPI_ERR_OTHER). The
 * warning is said at most once per handle and, of all the job's processes, only by the one that
 * makes the marker LOGDIR/JOB.full (O_EXCL: one process wins, on any node that shares the
 * directory), which removes it at MPI_Finalize.
 *
 * Failures. A marker left by a crashed run under the same job id (ids are reused) on this host is
 * taken over when its maker is gone. When no marker can be made (the directory refuses even an
 * empty file), every process speaks: better several warnings than none.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"

int ADIOI_BBLOG_Err(const char *myname, int line, int error_class, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
#ifdef ADIOI_BBLOG_ERR_TO_STDERR
    fprintf(stderr, "%s\n", msg);
#endif
    /* The message is bblog's text alone: MPI_Error_string starts with the class's own text
     * ("Invalid MPI_Info value"), and ROMIO's "**io %s" would put "Other I/O error" before it
     * whatever the class. "%s" is no key of MPICH's message table, so it is the format. */
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line, error_class,
                                "**io", "%s", msg);
}

/* The MPI error class that fits a bblog return code. */
static int class_of(int rc)
{
    switch (rc) {
    case ENOENT:
        return MPI_ERR_NO_SUCH_FILE;
    case ENOTDIR:
    case ENAMETOOLONG:
        return MPI_ERR_BAD_FILE;
    case EACCES:
    case EPERM:
    case EROFS:
        /* bblog's own files (the logs): a read-only burst buffer is an access problem. */
        return MPI_ERR_ACCESS;
    case ENOSPC:
    case EDQUOT:
        return MPI_ERR_NO_SPACE;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case ENOMEM:
    case ADIOI_BBLOG_ECOLL:
        return MPI_ERR_OTHER;
    default:
        return MPI_ERR_IO;
    }
}

const char *ADIOI_BBLOG_Strerror(int rc)
{
    return rc == ADIOI_BBLOG_ECOLL ? "a collective call among the file's processes failed" :
        bblog_strerror(rc);
}

int ADIOI_BBLOG_Err_rc(const char *myname, int line, int rc, const char *what, const char *path)
{
    return ADIOI_BBLOG_Err(myname, line, class_of(rc), "bblog: %s %s: %s", what,
                           path ? path : "", ADIOI_BBLOG_Strerror(rc));
}

/* The markers this process made (first_to_warn), removed at MPI_Finalize. */
struct full_marker {
    struct full_marker *next;
    char path[];
};
static struct full_marker *markers;
static int markers_keyval = MPI_KEYVAL_INVALID;

/* Delete callback of an attribute on MPI_COMM_SELF: runs at the start of MPI_Finalize. */
static int remove_markers(MPI_Comm comm, int keyval, void *val, void *extra)
{
    while (markers) {
        struct full_marker *m = markers;
        markers = m->next;
        unlink(m->path);
        free(m);
    }
    return MPI_SUCCESS;
}

/* Whether the process that made the marker at path ("PID HOST") is gone: it ran on this host
 * and no process has its id. A marker being written, or made on another host, counts as live. */
static int maker_gone(const char *path, const char *host)
{
    char text[300], maker[256];
    long pid;
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0)
        return 0;
    n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    if (sscanf(text, "%ld %255s", &pid, maker) != 2 || strcmp(maker, host) != 0 || pid <= 0)
        return 0;
    return kill((pid_t) pid, 0) != 0 && errno == ESRCH;
}

/*
 * Whether this process is the job's first to find the burst-buffer directory full: the one
 * that makes the marker LOGDIR/JOB.full (O_EXCL: one process of the job wins, on any node that
 * shares the directory) speaks, and removes it at MPI_Finalize. A marker left by a crashed
 * run under the same job id (ids are reused) on this host is taken over when its maker is
 * gone (two processes taking over one marker at the same moment may both speak). When no
 * marker can be made (the directory refuses even an empty file), every process speaks: better
 * several warnings than none.
 */
static int first_to_warn(const struct ADIOI_BBLOG_state *st)
{
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
    char path[PATH_MAX + BBLOG_JOB_ID_MAX + 8], host[256];
    size_t dirlen = strlen(st->logdir) + 1;
    struct full_marker *m;
    int fd, err;

    snprintf(path, sizeof(path), "%s/%s.full", st->logdir, st->job);
    /* Job ids may hold characters that do not belong in a file name. */
    for (char *p = path + dirlen; *p; p++)
        if (*p == '/' || *p == ' ')
            *p = '_';
    if (gethostname(host, sizeof(host)) != 0)
        strcpy(host, "localhost");
    host[sizeof(host) - 1] = '\0';
    fd = open(path, flags, 0600);
    err = fd < 0 ? errno : 0;
    if (err == EEXIST && maker_gone(path, host)) {
        unlink(path);
        fd = open(path, flags, 0600);
        err = fd < 0 ? errno : 0;
    }
    if (err == EEXIST)
        return 0;               /* another process of the job spoke */
    if (fd < 0)
        return 1;
    /* Left empty (write failed), the marker reads as live: it still keeps the others quiet. */
    dprintf(fd, "%ld %s\n", (long) getpid(), host);
    close(fd);
    m = malloc(sizeof(*m) + strlen(path) + 1);
    if (!m)
        return 1;               /* the marker stays behind, harmless (bblog(7), FILES) */
    strcpy(m->path, path);
    m->next = markers;
    markers = m;
    if (markers_keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, remove_markers, &markers_keyval,
                               NULL) == MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, markers_keyval, NULL);
    return 1;
}

void ADIOI_BBLOG_Warn_full(struct ADIOI_BBLOG_state *st, const char *why)
{
    char dir[PATH_MAX];

    if (st->bb_full_warned)
        return;
    st->bb_full_warned = 1;     /* each handle asks once */
    if (!first_to_warn(st))
        return;
    if (!realpath(st->logdir, dir))
        snprintf(dir, sizeof(dir), "%s", st->logdir);
    fprintf(stderr, "bblog: warning: rank %d, writing %s: burst buffer %s %s; bblog writes what "
            "it cannot hold there straight to the parallel file system, correct but slower: "
            "free space there or raise bblog_max_size (said once per job)\n", st->rank,
            st->pfs_path, dir, why);
}
