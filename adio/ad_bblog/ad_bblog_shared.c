/*
 * The log and index of one file are shared by every handle this process has open on it.
 *
 * Programs open one file twice (PnetCDF: a collective handle, and one on MPI_COMM_SELF for
 * independent data mode) and overwrite through one handle what they wrote through the other.
 * With a log per handle, the drain of the first handle at its close would put the older bytes
 * back. With one log and one interval index per file and process, the later write wins
 * whichever handle carried it, and whichever handle drains first drains both.
 *
 * ROMIO serialises MPI-IO calls (ROMIO_THREAD_CS), which also protects this list.
 */
#include <stdlib.h>
#include <string.h>

#include "ad_bblog.h"
#include "adioi.h"

static struct ADIOI_BBLOG_logstate *open_files;

int ADIOI_BBLOG_Logstate_attach(const char *pfs_path, struct ADIOI_BBLOG_logstate **out)
{
    struct ADIOI_BBLOG_logstate *ls;
    int rc;

    for (ls = open_files; ls; ls = ls->next) {
        if (strcmp(ls->pfs_path, pfs_path) == 0) {
            ls->refs++;
            *out = ls;
            return 0;
        }
    }
    ls = calloc(1, sizeof(*ls));
    if (!ls)
        return ENOMEM;
    rc = bblog_idx_create(&ls->idx);
    if (rc != 0) {
        free(ls);
        return rc;
    }
    if ((rc = pthread_mutex_init(&ls->lock, NULL)) != 0) {
        bblog_idx_destroy(ls->idx);
        free(ls);
        return rc;
    }
    strcpy(ls->pfs_path, pfs_path);
    ls->refs = 1;
    ls->next = open_files;
    open_files = ls;
    *out = ls;
    return 0;
}

int ADIOI_BBLOG_Logstate_detach(struct ADIOI_BBLOG_logstate *ls, int remove)
{
    struct ADIOI_BBLOG_logstate **p;
    int rc = 0;

    if (--ls->refs > 0)
        return 0;
    for (p = &open_files; *p; p = &(*p)->next) {
        if (*p == ls) {
            *p = ls->next;
            break;
        }
    }
    ADIOI_BBLOG_Vis_free(ls);
    if (ls->log)
        rc = bblog_log_close(ls->log, remove);
    bblog_idx_destroy(ls->idx);
    bblog_idx_destroy(ls->rev);
    ADIOI_BBLOG_Order_free(ls);
    pthread_mutex_destroy(&ls->lock);
    free(ls);
    return rc;
}

struct ADIOI_BBLOG_logstate *ADIOI_BBLOG_Logstate_closing(const char *pfs_path)
{
    struct ADIOI_BBLOG_logstate *ls;

    for (ls = open_files; ls; ls = ls->next)
        if (ls->bg && ls->refs == 1 && (!pfs_path || strcmp(ls->pfs_path, pfs_path) == 0))
            return ls;
    return NULL;
}
