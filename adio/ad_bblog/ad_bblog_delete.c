/*
 * MPI_File_delete: remove the PFS file through its own driver, and the stale logs of it that this
 * user left in the burst-buffer directory (logs no live process holds open; BBLOG_DIR or its
 * defaults: MPI_File_delete takes no hints), so that a later `bblog replay` cannot resurrect a
 * deleted file.
 *
 * Invariants. A log is removed only when its header names this file and no live process holds it
 * open (bblog_log_live): another group of processes may delete the name right after its own close.
 * A closed handle's background drain of the file in this process (bblog_close=bb) finishes first.
 * ROMIO's hidden shared-file-pointer files, never logged, have no logs to look for. Logs that
 * cannot be listed or read are left as they are: the result is the inner driver's.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "ad_bblog_bg.h"
#include "adioi.h"

static void remove_stale_logs(const char *pfs_path)
{
    struct ADIOI_BBLOG_hints h;
    char dir[PATH_MAX], meta[PATH_MAX + 300], data[PATH_MAX + 300];
    struct dirent *de;
    DIR *d;

    if (ADIOI_BBLOG_Parse_hints(MPI_INFO_NULL, &h) != MPI_SUCCESS ||
        bblog_log_userdir(h.dir, dir, sizeof(dir)) != 0 || !(d = opendir(dir)))
        return;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        struct bblog_scan *s;
        int match;

        if (n < 6 || strcmp(de->d_name + n - 5, ".meta") != 0)
            continue;
        snprintf(meta, sizeof(meta), "%s/%s", dir, de->d_name);
        /* A log of a file still open (or being closed) by another process is not stale:
         * another group of processes may delete the name right after its own close. */
        if (bblog_log_live(meta) || bblog_scan_open(meta, &s) != 0)
            continue;
        match = strcmp(bblog_scan_header(s)->pfs_path, pfs_path) == 0;
        bblog_scan_close(s);
        if (!match)
            continue;
        snprintf(data, sizeof(data), "%.*s.data", (int) (strlen(meta) - 5), meta);
        unlink(meta);
        unlink(data);
    }
    closedir(d);
}

void ADIOI_BBLOG_Delete(const char *filename, int *error_code)
{
    const char *inner_name, *base;
    char path[PATH_MAX];
    int fstype;
    ADIOI_Fns *ops;

    *error_code = ADIOI_BBLOG_Inner_resolve(filename, &inner_name, &fstype, &ops);
    if (*error_code != MPI_SUCCESS)
        return;
    base = strrchr(inner_name, '/');
    base = base ? base + 1 : inner_name;
    /* ROMIO's hidden shared-file-pointer files are never logged. */
    if (!(base[0] == '.' && strstr(base, ".shfp."))) {
        if (ADIOI_BBLOG_Abspath(inner_name, path, sizeof(path)) == 0) {
            ADIOI_BBLOG_Bg_wait(path);  /* bblog_close=bb: its drain finishes first */
            remove_stale_logs(path);
        }
    }
    ops->ADIOI_xxx_Delete(inner_name, error_code);
}
