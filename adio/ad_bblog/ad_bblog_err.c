/*
 * Turning bblog conditions into MPI error codes whose message says what went wrong and where.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "ad_bblog.h"

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
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, line, error_class,
                                "**io", "**io %s", msg);
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
        return MPI_ERR_OTHER;
    default:
        return MPI_ERR_IO;
    }
}

int ADIOI_BBLOG_Err_rc(const char *myname, int line, int rc, const char *what, const char *path)
{
    return ADIOI_BBLOG_Err(myname, line, class_of(rc), "bblog: %s %s: %s", what,
                           path ? path : "", bblog_strerror(rc));
}

double ADIOI_BBLOG_Now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}
