/*
 * The log and index of one file are shared by every handle this process has open on it: one
 * logstate per file and process, keyed by the file's absolute path, on a list of the process's open
 * files.
 *
 * Why. Programs open one file twice (PnetCDF: a collective handle, and one on MPI_COMM_SELF for
 * independent data mode) and overwrite through one handle what they wrote through the other. With a
 * log per handle, the drain of the first handle at its close would put the older bytes back. With
 * one log and one interval index per file and process, the later write wins whichever handle
 * carried it, and whichever handle drains first drains both.
 *
 * Tables. Beside the log and the index a logstate keeps the stamps of its log's runs (write order),
 * the pieces logged since the last planning point (background drains), the trim notes (a small
 * budget), the published list (other processes' reads) and the log's counters. Logstate_record is
 * the one call that adds an append to all of them, so they agree.
 *
 * Invariants. refs counts the handles attached, and the background drain's thread, which holds a
 * reference of its own and may outlive the handles (bblog_close=bb): a logstate whose one reference
 * is its thread's has its handles closed while its drain may still run (Logstate_closing). The last
 * detach closes the log (removing its files when asked) and frees the tables.
 *
 * Locking. ROMIO serialises MPI-IO calls (ROMIO_THREAD_CS), which also protects this list.
 *
 * Failures. An append that a table cannot take (ENOMEM) fails the write; the index may already hold
 * the extent, and the log holds its bytes. A trim note that cannot be made only ends trimming
 * (cap_failed): without it the trim point could pass those bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
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
    ADIOI_BBLOG_Peer_free(ls);
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

int ADIOI_BBLOG_Logstate_record(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                                uint64_t data_off, uint64_t stamp)
{
    int rc;

    if ((rc = ADIOI_BBLOG_Note_append(ls, data_off, stamp)) != 0)
        return rc;
    if (ls->bg && ls->multi && (rc = ADIOI_BBLOG_Note_recent(ls, off, len, stamp)) != 0)
        return rc;
    if ((rc = bblog_idx_insert(ls->idx, off, len, data_off)) != 0)
        return rc;
    /* Without its note the trim point could pass these bytes: no more trimming then. */
    if (ADIOI_BBLOG_Trim_note_append(ls, off, len, data_off))
        ls->cap_failed = 1;
    if ((rc = ADIOI_BBLOG_Peer_note(ls, off, len, data_off, stamp, 0)) != 0)
        return rc;
    ls->log_bytes += (ADIO_Offset) len;
    ADIOI_BBLOG_Wrote(ls);
    if (data_off + len > ls->log_end)
        ls->log_end = data_off + len;
    return 0;
}
