/*
 * bblog_stats (BBLOG_STATS): at close, rank 0 writes one JSON object per file, on one line,
 * to stderr or appended to the named file. Counters are summed over processes; times are the
 * maximum over processes (the slowest one is what the application waits for), all in one
 * MPI_Reduce; drains and rounds are collective, the same count on every process. The memory
 * and exchange figures are each process's largest, and the maximum over processes:
 * max_index_bytes (the index at a drain's start), max_plan_bytes (a drain's list of the
 * process's own pieces), and max_exchange_buffer_bytes / max_exchange_bytes (the pieces every
 * process received in one exchange round, and in all: the Order exchange across the file's
 * processes, the node exchange within a node).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "adioi.h"

enum {
    C_WRITE_CALLS, C_BYTES_LOGGED, C_RECORDS, C_EXTENTS_DRAINED,
    C_BYTES_DRAINED, C_BYTES_SUPERSEDED, C_INDEP_WRITES, C_COLL_WRITES, C_BYTES_THROUGH,
    C_WRITES_THROUGH,
    C_READ_CALLS, C_BYTES_OVERLAID, C_BYTES_FROM_PEERS, C_BYTES_FROM_OTHERS,
    C_BYTES_FROM_NODES, C_REMOTE_ASKS, C_BYTES_VERIFIED, C_BYTES_TRIMMED, C_CAPACITY_WAITS,
    C_AIO_SUBMITS, C_SYNC_WRITES, C_WAITS, C_NCOUNTERS
};

enum { T_APPEND, T_DRAIN, T_SYNC, T_LOG_SYNC, T_VERIFY, T_CAPACITY_WAIT, T_NTIMES };

/* The reduced vector: the counters (summed), then 6 per-process figures and the times
 * (maximum). A time goes as the bits of a non-negative double, which order as the unsigned
 * integers do. */
enum { V_COLL = C_NCOUNTERS, V_TIMES = V_COLL + 6, V_N = V_TIMES + T_NTIMES };

/* bblog_stats' last_drain: how the file's last collective drain ended (agreed by all). */
static const char *const last_drain[] = { "none", "completed", "verified", "failed",
    "verify_mismatch" };

void ADIOI_BBLOG_Stats_report(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    unsigned long long v[V_N], out_v[V_N], inner_calls;
    unsigned long long *c = v, *csum = out_v, *coll = v + V_COLL, *collmax = out_v + V_COLL;
    double t[T_NTIMES], tmax[T_NTIMES];
    int i;
    struct bblog_log_stats ls;
    FILE *out;

    memset(&ls, 0, sizeof(ls));
    if (st->ls->log)
        bblog_log_get_stats(st->ls->log, &ls);
    c[C_WRITE_CALLS] = st->st.write_calls;
    c[C_BYTES_LOGGED] = st->st.bytes_logged;
    c[C_RECORDS] = ls.records;
    c[C_EXTENTS_DRAINED] = st->st.extents_drained;
    c[C_BYTES_DRAINED] = st->st.bytes_drained;
    c[C_BYTES_SUPERSEDED] = st->st.bytes_superseded;
    c[C_INDEP_WRITES] = st->st.indep_writes;
    c[C_COLL_WRITES] = st->st.coll_writes;
    c[C_BYTES_THROUGH] = st->st.bytes_through;
    c[C_WRITES_THROUGH] = st->st.writes_through;
    c[C_READ_CALLS] = st->st.read_calls;
    c[C_BYTES_OVERLAID] = st->st.bytes_overlaid;
    c[C_BYTES_FROM_PEERS] = st->st.bytes_from_peers;
    c[C_BYTES_FROM_OTHERS] = st->st.bytes_from_others;
    c[C_BYTES_FROM_NODES] = st->st.bytes_from_nodes;
    c[C_REMOTE_ASKS] = st->st.remote_asks;
    c[C_BYTES_VERIFIED] = st->st.bytes_verified;
    c[C_BYTES_TRIMMED] = st->st.bytes_trimmed;
    c[C_CAPACITY_WAITS] = st->st.capacity_waits;
    c[C_AIO_SUBMITS] = ls.aio_submits;
    c[C_SYNC_WRITES] = ls.sync_writes;
    c[C_WAITS] = ls.waits;
    t[T_APPEND] = st->st.t_append;
    t[T_DRAIN] = st->st.t_drain;
    t[T_SYNC] = st->st.t_sync;
    t[T_LOG_SYNC] = ls.sync_seconds;
    t[T_VERIFY] = st->st.t_verify;
    t[T_CAPACITY_WAIT] = st->st.max_capacity_wait;
    coll[0] = st->st.drains;
    coll[1] = st->st.rounds;
    coll[2] = st->st.max_index_bytes;
    coll[3] = st->st.max_plan_bytes;
    coll[4] = st->st.max_exchange_bytes;
    coll[5] = st->st.exchange_bytes;
    for (i = 0; i < T_NTIMES; i++) {
        double x = t[i] > 0 ? t[i] : 0.0;
        memcpy(&v[V_TIMES + i], &x, sizeof(x));
    }
    /* One reduction, not one per kind: at close every collective call costs a
     * synchronisation of all processes. */
    ADIOI_BBLOG_Reduce_vec(v, out_v, V_N, V_COLL, 0, fd->comm);
    if (st->rank != 0)
        return;
    for (i = 0; i < T_NTIMES; i++)
        memcpy(&tmax[i], &out_v[V_TIMES + i], sizeof(tmax[i]));
    /* Write calls bblog made on the inner (PFS) driver, summed over processes: collective
     * drain rounds, independent drain writes, write-through. What ROMIO's two-phase code then
     * issues to the file system is below this level (strace shows it). */
    inner_calls = csum[C_COLL_WRITES] + csum[C_INDEP_WRITES] + csum[C_WRITES_THROUGH];
    if (strcmp(st->hints.stats, "stderr") == 0) {
        out = stderr;
    } else {
        int sfd = ADIOI_BBLOG_Open_append(st->hints.stats);
        if (sfd < 0 || !(out = fdopen(sfd, "a"))) {
            fprintf(stderr, "bblog: cannot append stats to %s (hint bblog_stats): %m\n",
                    st->hints.stats);
            if (sfd >= 0)
                close(sfd);
            return;
        }
    }
    fprintf(out, "{\"bblog_stats\": 1, \"file\": \"%s\", \"nprocs\": %d, \"log_dir\": \"%s\", "
            "\"flush_buffer_size\": %lld, \"write_calls\": %llu, \"bytes_logged\": %llu, "
            "\"records\": %llu, \"drains\": %llu, \"rounds\": %llu, "
            "\"extents_drained\": %llu, \"bytes_drained\": %llu, \"bytes_superseded\": %llu, "
            "\"bytes_from_peers\": %llu, \"indep_writes\": %llu, "
            "\"bytes_through\": %llu, \"inner_write_calls\": %llu, "
            "\"inner_write_mean_bytes\": %llu, "
            "\"writes_through\": %llu, \"read_calls\": %llu, \"bytes_overlaid\": %llu, "
            "\"bytes_read_from_others\": %llu, \"bytes_read_from_other_nodes\": %llu, "
            "\"other_node_asks\": %llu, "
            "\"aio_submits\": %llu, \"pwrite_flushes\": %llu, \"staging_waits\": %llu, "
            "\"max_time_append_s\": %.6f, \"max_time_drain_s\": %.6f, \"max_time_sync_s\": %.6f, "
            "\"max_time_log_fsync_s\": %.6f, \"direct_io\": %d, \"libaio\": %d, "
            "\"max_index_bytes\": %llu, \"max_plan_bytes\": %llu, "
            "\"max_exchange_buffer_bytes\": %llu, \"max_exchange_bytes\": %llu, "
            "\"last_drain\": \"%s\", \"bytes_verified\": %llu, \"max_time_verify_s\": %.6f, "
            "\"bytes_given_back\": %llu, \"capacity_waits\": %llu, "
            "\"max_capacity_wait_s\": %.6f}\n",
            st->pfs_path, st->nprocs, st->logdir, (long long) st->hints.flush_buffer_size,
            csum[C_WRITE_CALLS], csum[C_BYTES_LOGGED], csum[C_RECORDS], collmax[0],
            collmax[1], csum[C_EXTENTS_DRAINED], csum[C_BYTES_DRAINED],
            csum[C_BYTES_SUPERSEDED], csum[C_BYTES_FROM_PEERS], csum[C_INDEP_WRITES],
            csum[C_BYTES_THROUGH], inner_calls,
            inner_calls ? (csum[C_BYTES_DRAINED] + csum[C_BYTES_THROUGH]) / inner_calls : 0ULL,
            csum[C_WRITES_THROUGH], csum[C_READ_CALLS],
            csum[C_BYTES_OVERLAID], csum[C_BYTES_FROM_OTHERS], csum[C_BYTES_FROM_NODES],
            csum[C_REMOTE_ASKS], csum[C_AIO_SUBMITS], csum[C_SYNC_WRITES], csum[C_WAITS],
            tmax[T_APPEND], tmax[T_DRAIN], tmax[T_SYNC], tmax[T_LOG_SYNC], ls.direct, ls.aio,
            collmax[2], collmax[3], collmax[4], collmax[5], last_drain[st->st.last_drain],
            csum[C_BYTES_VERIFIED], tmax[T_VERIFY], csum[C_BYTES_TRIMMED],
            csum[C_CAPACITY_WAITS], tmax[T_CAPACITY_WAIT]);
    if (out != stderr)
        fclose(out);
}
