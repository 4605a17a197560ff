/*
 * bblog_stats (BBLOG_STATS): at close, rank 0 writes one JSON object per file, on one line, to
 * stderr or appended to the named file: the figures of the table ADIOI_BBLOG_STATS (ad_bblog.h),
 * each summed over processes or the largest of any, then a few derived from them.
 *
 * Collective calls. Stats_report is collective over the file's communicator: all figures go to
 * rank 0 in one reduction (ADIOI_BBLOG_Reduce_vec), the sums first, then the maxima, a time as the
 * bits of a non-negative double, which order as the unsigned integers do. One reduction, not one
 * per kind: at close every collective call costs a synchronisation of all processes. The log
 * layer's figures and the read server's counters are copied in before it.
 *
 * Failures. A reduction that fails leaves a line on stderr on each process and no object; a file
 * that cannot be appended to is said on stderr by rank 0.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_peer.h"
#include "adioi.h"

enum { FIG_SUM, FIG_MAX, FIG_SEC };

/* The table of ad_bblog.h, with each figure's place in struct ADIOI_BBLOG_stats. */
static const struct figure {
    int how;
    const char *key;
    size_t off;
} figures[] = {
#define FIGURE(how, field, key) {FIG_##how, key, offsetof(struct ADIOI_BBLOG_stats, field)},
    ADIOI_BBLOG_STATS(FIGURE)
#undef FIGURE
};
#define NFIGURES (sizeof(figures) / sizeof(figures[0]))

/* bblog_stats' last_drain: how the file's last collective drain ended (agreed by all). */
static const char *const last_drain[] = { "none", "completed", "verified", "failed",
    "verify_mismatch" };

/* The reduced value of the figure at offset off of struct ADIOI_BBLOG_stats. */
static unsigned long long total(const unsigned long long *out_v, const int *pos, size_t off)
{
    size_t i;

    for (i = 0; i < NFIGURES; i++)
        if (figures[i].off == off)
            return out_v[pos[i]];
    return 0;
}

static FILE *open_out(const char *path)
{
    FILE *out;
    int sfd;

    if (strcmp(path, "stderr") == 0)
        return stderr;
    sfd = ADIOI_BBLOG_Open_append(path);
    if (sfd < 0 || !(out = fdopen(sfd, "a"))) {
        fprintf(stderr, "bblog: cannot append stats to %s (hint bblog_stats): %m\n", path);
        if (sfd >= 0)
            close(sfd);
        return NULL;
    }
    return out;
}

void ADIOI_BBLOG_Stats_report(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_stats s = st->stats;
    unsigned long long v[NFIGURES], out_v[NFIGURES], inner_calls, through, drained;
    int pos[NFIGURES], how, n = 0, nsum = 0;
    size_t i;
    struct bblog_log_stats ls;
    FILE *out;

    memset(&ls, 0, sizeof(ls));
    if (st->ls->log)
        bblog_log_get_stats(st->ls->log, &ls);
    s.records = ls.records;
    s.aio_submits = ls.aio_submits;
    s.pwrite_flushes = ls.sync_writes;
    s.straight_writes = ls.straight_writes;
    s.staging_waits = ls.waits;
    s.logs_in_pairs = st->ls->log && bblog_log_in_pair(st->ls->log);
    s.t_log_sync = ls.sync_seconds;
    ADIOI_BBLOG_Remote_stats(st, &s);
    /* The vector: the sums first, then the maxima; a time goes as the bits of a non-negative
     * double, which order as the unsigned integers do. One reduction, not one per kind: at
     * close every collective call costs a synchronisation of all processes. */
    for (how = FIG_SUM; how <= FIG_SEC; how++) {
        for (i = 0; i < NFIGURES; i++) {
            const char *f = (const char *) &s + figures[i].off;
            if (figures[i].how != how)
                continue;
            pos[i] = n;
            if (how == FIG_SEC) {
                double x;
                memcpy(&x, f, sizeof(x));
                x = x > 0 ? x : 0.0;
                memcpy(&v[n++], &x, sizeof(x));
            } else {
                uint64_t x;
                memcpy(&x, f, sizeof(x));
                v[n++] = x;
            }
        }
        if (how == FIG_SUM)
            nsum = n;
    }
    if (ADIOI_BBLOG_Reduce_vec(v, out_v, n, nsum, 0, fd->comm) != MPI_SUCCESS) {
        fprintf(stderr, "bblog: rank %d: no statistics of %s: %s\n", st->rank, st->pfs_path,
                ADIOI_BBLOG_Strerror(ADIOI_BBLOG_ECOLL));
        return;
    }
    if (st->rank != 0 || !(out = open_out(st->hints.stats)))
        return;
    fprintf(out, "{\"bblog_stats\": 1, \"file\": \"%s\", \"nprocs\": %d, \"log_dir\": \"%s\", "
            "\"flush_buffer_size\": %lld", st->pfs_path, st->nprocs, st->logdir,
            (long long) st->hints.flush_buffer_size);
    for (i = 0; i < NFIGURES; i++) {
        if (figures[i].how == FIG_SEC) {
            double x;
            memcpy(&x, &out_v[pos[i]], sizeof(x));
            fprintf(out, ", \"%s\": %.6f", figures[i].key, x);
        } else {
            fprintf(out, ", \"%s\": %llu", figures[i].key, out_v[pos[i]]);
        }
    }
    /* Write calls bblog made on the inner (PFS) driver, summed over processes: collective
     * drain rounds, independent drain writes, write-through. What ROMIO's two-phase code then
     * issues to the file system is below this level (strace shows it). */
#define TOTAL(field) total(out_v, pos, offsetof(struct ADIOI_BBLOG_stats, field))
    inner_calls = TOTAL(coll_writes) + TOTAL(indep_writes) + TOTAL(writes_through);
    through = TOTAL(bytes_through);
    drained = TOTAL(bytes_drained);
#undef TOTAL
    fprintf(out, ", \"inner_write_calls\": %llu, \"inner_write_mean_bytes\": %llu, "
            "\"direct_io\": %d, \"libaio\": %d, \"last_drain\": \"%s\"}\n", inner_calls,
            inner_calls ? (drained + through) / inner_calls : 0ULL, ls.direct, ls.aio,
            last_drain[st->stats.last_drain]);
    if (out != stderr)
        fclose(out);
}
