/*
 * The private per-user log directory (DESIGN.md section 4): DIR/bblog-UID, mode 0700, owned by
 * the caller. bblog_dir is often a shared, world-writable /tmp, where another user could
 * pre-create the name as a symlink (redirecting our logs) or as a directory readable by them
 * (exposing the data): every such case is refused with EPERM instead of being used.
 *
 * Checks use lstat, so a symlink is seen as one. There is no window for substitution once the
 * checks pass: in a sticky /tmp nobody but the owner may rename or remove the owner's
 * directory, and the log files themselves are created O_EXCL|O_NOFOLLOW inside it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "bblog_log.h"

int bblog_log_userdir(const char *dir, char *out, size_t outlen)
{
    uid_t uid = geteuid();
    char path[4096];
    struct stat sb;
    size_t dlen;
    int n;

    if (dir == NULL || dir[0] == '\0' || out == NULL)
        return BBLOG_EINVAL;
    dlen = strlen(dir);
    while (dlen > 1 && dir[dlen - 1] == '/')
        dlen--;
    if (dlen > sizeof path)
        return ENAMETOOLONG;
    n = snprintf(path, sizeof path, "%.*s%sbblog-%lu", (int) dlen, dir,
                 dir[dlen - 1] == '/' ? "" : "/", (unsigned long) uid);
    if (n < 0 || (size_t) n >= sizeof path)
        return ENAMETOOLONG;
    if ((size_t) n >= outlen)
        return ERANGE;

    if (lstat(path, &sb) != 0) {
        if (errno != ENOENT)
            return errno;
        /* EEXIST: another process of ours (every rank of a node gets here at open) made it
         * between the lstat and the mkdir; it is checked below like any existing one. */
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return errno;
        if (lstat(path, &sb) != 0)
            return errno;
    }
    if (S_ISLNK(sb.st_mode) || !S_ISDIR(sb.st_mode) || sb.st_uid != uid
        || (sb.st_mode & 077) != 0)
        return EPERM;
    memcpy(out, path, (size_t) n + 1);
    return 0;
}
