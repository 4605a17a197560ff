/*
 * ad_bblog: the burst-buffer log driver for ROMIO.
 *
 * An ADIO file opened through bblog (the "outer" file) owns a real ADIO file on the parallel
 * file system (the "inner" file, opened with ROMIO's own ADIO_Open so the inner driver's hints
 * and two-phase code apply), a log on the burst buffer (logfs/) and an interval index of what
 * the log holds (bblog_index.h). Writes go to the log; reads overlay the log on the inner file;
 * sync, close, resize and atomic mode drain the log into the inner file with collective
 * two-phase writes cut into rounds (ad_bblog_drain.c, DESIGN.md section 6).
 *
 * The hidden shared-file-pointer file that ROMIO opens through the same driver is a
 * pass-through: it is never logged (ROMIO locks it and needs every update on disk at once).
 *
 * Files, by concept (DESIGN.md section 1): ROMIO's operations (ad_bblog.c, ad_bblog_OP.c;
 * ad_bblog_ops.h), the collective drain (ad_bblog_drain*.c; ad_bblog_drain.h), background
 * drains (ad_bblog_bg*.c; ad_bblog_bg.h), reads of other processes' bytes (ad_bblog_peer*.c;
 * ad_bblog_peer.h), infrastructure (ad_bblog_base_*.c; ad_bblog_base.h). Each concept's header
 * declares what it offers the others; its _priv.h what only its own files share. This header
 * holds the types all of them share: the hints, the statistics, a file's logstate and state.
 */
#ifndef AD_BBLOG_H_INCLUDED
#define AD_BBLOG_H_INCLUDED

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "adio.h"
#include "ad_bblog_compat.h"
#include "bblog_grow.h"
#include "bblog_index.h"
#include "bblog_log.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

enum { ADIOI_BBLOG_DRAIN_ON_DEMAND, ADIOI_BBLOG_DRAIN_REACTIVE, ADIOI_BBLOG_DRAIN_PROACTIVE };

/* bblog_* hints in force for one file (ad_bblog_base_hints.c, man/bblog.7). */
struct ADIOI_BBLOG_hints {
    char dir[PATH_MAX];                 /* burst-buffer directory */
    int sync_bb;                        /* bblog_sync=bb: sync makes the log durable only */
    int close_bb;                       /* bblog_close=bb: close returns, drain goes on */
    int drain;                          /* ADIOI_BBLOG_DRAIN_* */
    ADIO_Offset segment_size;           /* background drain segment, 0 = stripe row or 4m */
    double drain_interval;              /* first predicted period, s; 0 = learn it */
    ADIO_Offset drain_max_rate;         /* bytes/s, 0 = no cap */
    int keep_logs;                      /* bblog_keep_logs=true */
    int verify;                         /* bblog_verify=true: drains read back what they wrote */
    ADIO_Offset flush_buffer_size;      /* bytes per process per drain round */
    ADIO_Offset max_size;               /* burst-buffer budget per process, 0 = a share of
                                         * the free space at open (ad_bblog_bg_cap.c) */
    int high_water;                     /* percent of it that starts draining; 0 = never */
    ADIO_Offset indep_threshold;        /* mean extent size drained independently, 0 = never */
    ADIO_Offset through_threshold;      /* with no background drain, writes this large go to
                                         * the PFS file at once; 0 = every write logged */
    int node_exchange;                  /* bblog_node_exchange=bb: drain reads node peers' logs */
    int mapping_node;                   /* bblog_mapping=node: one log pair per node */
    int shared_bb;                      /* bblog_shared_bb=true: every node sees bblog_dir */
    int posix_reads;                    /* bblog_consistency=posix: reads see others' writes */
    char stats[PATH_MAX];               /* "" = off, "stderr", or a file to append JSON to */
    char server_addr[64];               /* "" = auto, an IPv4 address or an interface name */
    /* The tests' environment variables (bblog(7), ENVIRONMENT), 0 when unset: */
    int debug_node_size;                /* BBLOG_DEBUG_NODE_SIZE: nodes of N consecutive ranks */
    int debug_static_chunks;            /* BBLOG_DEBUG_STATIC_CHUNKS: no shared chunk counter */
    int debug_no_map;                   /* BBLOG_DEBUG_NO_MAP: the drain reads the logs */
    int debug_close_alone;              /* BBLOG_DEBUG_CLOSE_ALONE: close=bb never drains */
    int debug_no_batch;                 /* BBLOG_DEBUG_NO_BATCH: no node batches */
    int debug_sync_agree;               /* BBLOG_DEBUG_SYNC_AGREE: every sync agrees */
    int debug_spin;                     /* BBLOG_DEBUG_SPIN: blocking collective waits */
    int debug_fail_coll;                /* BBLOG_DEBUG_FAIL_COLL: which collective call fails */
    int debug_fail_coll_all;            /* BBLOG_DEBUG_FAIL_COLL_ALL: and every one after */
};

/* How the last collective drain of a file ended (bblog_stats' last_drain). */
enum { ADIOI_BBLOG_LAST_NONE, ADIOI_BBLOG_LAST_DONE, ADIOI_BBLOG_LAST_VERIFIED,
    ADIOI_BBLOG_LAST_FAILED, ADIOI_BBLOG_LAST_MISMATCH };

/* The figures of bblog_stats (ad_bblog_base_stats.c), each declared once here: the field of struct
 * ADIOI_BBLOG_stats, how it goes over processes, and its key in the JSON object (every key is
 * described in bblog(7), STATISTICS). SUM: summed over processes; MAX: the largest of any
 * process (drains and rounds are collective, the same everywhere); SEC: seconds, the largest.
 * LOG rows are the log layer's (struct bblog_log_stats), copied in at the report. */
#define ADIOI_BBLOG_STATS(X) \
    X(SUM, write_calls, "write_calls")          /* extents handed to the driver */ \
    X(SUM, bytes_logged, "bytes_logged") \
    X(SUM, records, "records")                  /* LOG: records appended */ \
    X(MAX, drains, "drains")                    /* collective drains that moved data */ \
    X(MAX, drains_again, "drains_again_through_mpi") /* after a process could not read its \
                                                 * node's logs (drain.c, node_ready) */ \
    X(MAX, rounds, "rounds")                    /* drain rounds */ \
    X(SUM, extents_drained, "extents_drained")  /* index extents written (after coalescing) */ \
    X(SUM, bytes_drained, "bytes_drained") \
    X(SUM, bytes_superseded, "bytes_superseded") /* logged bytes another process wrote later */ \
    X(SUM, bytes_from_peers, "bytes_from_peers") /* drained from other processes' logs */ \
    X(SUM, indep_writes, "indep_writes")        /* drain writes without a collective call */ \
    X(SUM, coll_writes, "coll_writes")          /* collective write calls on the inner file */ \
    X(SUM, bytes_sieved, "bytes_sieved")        /* holes read and written back (drain.c) */ \
    X(SUM, bytes_through, "bytes_through")      /* straight to the PFS (fallback, atomic) */ \
    X(SUM, writes_through, "writes_through") \
    X(MAX, syncs_alone, "syncs_alone")          /* syncs with no collective call (flush.c) */ \
    X(SUM, read_calls, "read_calls") \
    X(SUM, bytes_overlaid, "bytes_overlaid")    /* read from the own log over the PFS bytes */ \
    X(SUM, bytes_from_others, "bytes_read_from_others")     /* ad_bblog_peer_list.c */ \
    X(SUM, bytes_from_nodes, "bytes_read_from_other_nodes") /* of those, ad_bblog_peer_remote.c */ \
    X(SUM, remote_asks, "other_node_asks")      /* reads that asked other nodes */ \
    X(SUM, remote_requests, "other_node_requests") /* requests sent for them, announcements */ \
    X(SUM, remote_skipped, "other_node_skips")  /* nodes not asked: nothing in the range */ \
    X(SUM, remote_announces, "other_node_announcements") /* ranges told to other nodes */ \
    X(SUM, srv_accepted, "server_connections")  /* the read server's (ad_bblog_peer_server.c) */ \
    X(SUM, srv_refused, "server_refused")       /* closed at once: no room */ \
    X(SUM, srv_evicted, "server_evicted")       /* unauthenticated, dropped for a newer one */ \
    X(SUM, srv_deadline, "server_deadline_drops") \
    X(SUM, srv_bad, "server_bad_requests")      /* not the job's: no valid MAC */ \
    X(MAX, srv_max_conns, "server_max_connections") \
    X(SUM, aio_submits, "aio_submits")          /* LOG: staging buffers written with libaio */ \
    X(SUM, pwrite_flushes, "pwrite_flushes")    /* LOG: staging buffers written with pwrite */ \
    X(SUM, straight_writes, "straight_writes")  /* LOG: appends written from the user buffer */ \
    X(SUM, staging_waits, "staging_waits")      /* LOG: appends that waited for a buffer */ \
    X(SUM, logs_in_pairs, "logs_in_node_pairs") /* LOG: logs in a slot of a node's pair */ \
    X(SEC, t_append, "max_time_append_s") \
    X(SEC, t_drain, "max_time_drain_s") \
    X(SEC, t_sync, "max_time_sync_s") \
    X(SEC, t_settle, "max_time_settle_s")       /* waits for the rest of a sync (flush.c) */ \
    X(SEC, t_log_sync, "max_time_log_fsync_s")  /* LOG */ \
    /* What grows with the job (the scaling notes in bench/results/cluster.md): */ \
    X(MAX, max_index_bytes, "max_index_bytes")  /* the index's memory at a drain's start */ \
    X(MAX, max_plan_bytes, "max_plan_bytes")    /* a drain's list of this process's pieces */ \
    X(MAX, max_exchange_bytes, "max_exchange_buffer_bytes") /* one exchange: all pieces */ \
    X(MAX, exchange_bytes, "max_exchange_bytes") /* received in the piece exchanges, in all */ \
    X(SUM, bytes_verified, "bytes_verified")    /* read back by verifying drains */ \
    X(SEC, t_verify, "max_time_verify_s") \
    X(SUM, bytes_trimmed, "bytes_given_back")   /* log space given back while open */ \
    X(SUM, capacity_waits, "capacity_waits")    /* writes that waited for log space */ \
    X(SEC, max_capacity_wait, "max_capacity_wait_s")

#define ADIOI_BBLOG_STAT_TYPE_SUM uint64_t
#define ADIOI_BBLOG_STAT_TYPE_MAX uint64_t
#define ADIOI_BBLOG_STAT_TYPE_SEC double

struct ADIOI_BBLOG_stats {
#define ADIOI_BBLOG_STAT_FIELD(how, field, key) ADIOI_BBLOG_STAT_TYPE_##how field;
    ADIOI_BBLOG_STATS(ADIOI_BBLOG_STAT_FIELD)
#undef ADIOI_BBLOG_STAT_FIELD
    int last_drain;                     /* ADIOI_BBLOG_LAST_*, of the last collective drain */
};

/* An ordering stamp (ad_bblog_base_order.c): 2c, or 2c + 1 inside collective call c, in the
 * high 24 bits (ADIOI_BBLOG_COLL_STAMP), the node's write clock in the low 40. */
#define ADIOI_BBLOG_CLOCK_BITS 40
#define ADIOI_BBLOG_CLOCK_MAX ((UINT64_C(1) << ADIOI_BBLOG_CLOCK_BITS) - 1)
#define ADIOI_BBLOG_COLL_MAX ((UINT32_C(1) << (64 - ADIOI_BBLOG_CLOCK_BITS)) - 1)
#define ADIOI_BBLOG_COLL_STAMP(stamp) ((uint32_t) ((stamp) >> ADIOI_BBLOG_CLOCK_BITS))

/* A run of the data log written under one ordering stamp (ad_bblog_base_order.c). */
struct ADIOI_BBLOG_run {
    uint64_t log_off;                   /* where the run starts in the data log */
    uint64_t stamp;
};

/* File bytes written under a stamp, straight to the PFS (ad_bblog_base_order.c). */
struct ADIOI_BBLOG_piece {
    uint64_t off, len;
    uint64_t stamp;
};

/* What one process logged for one file, shared by its handles on it (ad_bblog_base_state.c). */
struct ADIOI_BBLOG_logstate {
    struct ADIOI_BBLOG_logstate *next;
    char pfs_path[PATH_MAX];            /* the key */
    int refs;                           /* handles attached */
    struct bblog_log *log;              /* created at the first logged write */
    struct bblog_index *idx;
    ADIO_Offset log_bytes;              /* payload bytes in the log since the last drain */
    int log_failed;                     /* the log refused an append: write through */
    uint64_t log_end;                   /* end of the data appended to the log */
    int rank;                           /* this process in the file's communicator */
    pthread_mutex_t lock;               /* with a background drain: index, log, bg */
    struct ADIOI_BBLOG_bg *bg;          /* background drain (ad_bblog_bg.c), or NULL */
    /* write order across processes (ad_bblog_base_order.c) */
    int multi;                          /* a handle of several processes shares this log */
    /* Durability (MPI_File_get_info's bblog_durable): writes made by this process, the count
     * of those known to be in the PFS file and flushed there, and the count at its latest
     * write straight to the PFS file. Atomic: the background drain reads and sets them. */
    uint64_t wgen, flushed_wgen, through_wgen;
    uint32_t colls;                     /* collective calls made on the file */
    int in_coll;                        /* inside one now */
    uint64_t tick;                      /* the node's write clock at this process's last take */
    struct ADIOI_BBLOG_run *runs;       /* stamps of the log since the last drain */
    size_t nruns, runs_cap;
    struct ADIOI_BBLOG_piece *through;  /* written through since the last drain */
    size_t nthrough, through_cap;
    struct ADIOI_BBLOG_piece *recent;   /* with bg: appended since the last planning point */
    size_t nrecent, recent_cap;
    struct ADIOI_BBLOG_piece *drained;  /* with bg: written by it since the last drain */
    size_t ndrained, drained_cap;
    struct ADIOI_BBLOG_vis *vis;        /* what other processes' reads see (ad_bblog_peer_list.c) */
    /* A burst buffer smaller than the output (ad_bblog_bg_cap.c); cap 0: no limit known. */
    uint64_t cap, hwm, gran;            /* log bytes allowed, drain start, trim step */
    uint64_t trim;                      /* data log bytes below are given back */
    uint64_t trim_ready;                /* the drain thread's offer: flushed on the PFS below */
    struct bblog_index *rev;            /* appends by log offset (log_off: file offset) */
    int cap_failed;                     /* trimming failed: the old fallback from now on */
    int trims;                          /* some process of the open may trim its log */
    int planning;                       /* the drain thread plans at collective writes */
    uint32_t cap_next;                  /* colls at which Cap_coll next agrees (all alike) */
};

/* The logstate's lock, with a background drain (its thread shares the index, the log and its
 * own state); without one there is no other thread, and these do nothing. */
static inline void ADIOI_BBLOG_Lock(struct ADIOI_BBLOG_logstate *ls)
{
    if (ls && ls->bg)
        pthread_mutex_lock(&ls->lock);
}

static inline void ADIOI_BBLOG_Unlock(struct ADIOI_BBLOG_logstate *ls)
{
    if (ls && ls->bg)
        pthread_mutex_unlock(&ls->lock);
}

struct ADIOI_BBLOG_state {
    ADIO_File inner;                    /* the real file; ADIO_FILE_NULL until opened */
    int passthrough;                    /* shared-fp file: every call goes to inner */
    MPI_Info user_info;                 /* hints as given at open, forwarded to inner */
    struct ADIOI_BBLOG_hints hints;
    int hints_parsed;
    int hints_published;                /* the bblog_* keys are in fd->info */
    struct ADIOI_BBLOG_logstate *ls;    /* NULL for the pass-through shared-fp file */
    int rank, nprocs;
    int bb_full_warned;
    int through_unsynced;               /* written through since the last sync */
    MPI_Datatype synced_filetype;       /* outer view last copied to inner */
    uint64_t view;                      /* MPI_File_set_view calls so far (ad_bblog_sharedfp.c) */
    uint32_t points;                    /* planning points of this handle (batch numbers) */
    MPI_Datatype synced_etype;
    ADIO_Offset synced_disp;
    char logdir[PATH_MAX];              /* bblog_dir/bblog-UID */
    char log_name[256];                 /* JOB.FILEID.PID.N.rRANK: unique per job, file, rank */
    /* bblog_mapping=node: the node's log pair JOB.FILEID.PID.N.nFIRST (FIRST: the node's first
     * rank), this process's slot in it and the node's processes (Node_slot); slots 0: a log
     * of its own. */
    char pair_name[256];
    uint32_t slot, slots;
    char job[BBLOG_JOB_ID_MAX];
    uint64_t set_id;                    /* the same in the log headers of all ranks of this open */
    uint64_t drain_seq;                 /* drains of this handle: alike on every process */
    char pfs_path[PATH_MAX];            /* absolute path of the inner file */
    struct ADIOI_BBLOG_node *node;      /* node exchange of the drain, from the first drain */
    int one_node;                       /* all processes on one host (agreed at open) */
    int cap_watch;                      /* some budget is small: Cap_coll at collective writes */
    uint64_t bb_min_free;               /* smallest free-space share of the open (agreed) */
    uint64_t host_hash;                 /* this process's host name, hashed (at open) */
    struct ADIOI_BBLOG_peers *peers;    /* other processes' published writes, or NULL */
    struct ADIOI_BBLOG_remote *remote;  /* other nodes' read servers, or NULL */
    uint64_t key[2];                    /* the open's secret, from rank 0 */
    char vis_link[PATH_MAX + 300];      /* this handle's name of the process's list, or "" */
    int vis_hold;                       /* inside a write call: publish at its end */
    int vis_failed;                     /* no list: every write goes to the PFS file */
    int node_off;                       /* a process could not read the node's logs in a
                                         * drain: the drains go through MPI (drain.c) */
    uint64_t *clock;                    /* the node's write clock of this open, or NULL */
    int64_t clock_origin;               /* several nodes: rank 0's real time at open, in us */
    char clock_path[PATH_MAX + 300];
    /* Syncs without an agreement (ad_bblog_flush.c): their communicator (fd->comm, or
     * MPI_COMM_NULL before the first) and first tag; whether the last one still has notes or
     * a "done" to hear; whose notes of it were heard, and who logged; the sends in flight. */
    MPI_Comm notes_comm;
    int notes_tag;
    int notes_pending;
    unsigned char *notes_heard, *notes_logged;
    struct ADIOI_BBLOG_batch *notes_sends;
    struct ADIOI_BBLOG_stats stats;
};

#define ADIOI_BBLOG_STATE(fd) ((struct ADIOI_BBLOG_state *) (fd)->fs_ptr)
/* The hints start no background drain (bblog_drain=on_demand, bblog_close=pfs). */
#define ADIOI_BBLOG_NO_BG(h) ((h)->drain == ADIOI_BBLOG_DRAIN_ON_DEMAND && !(h)->close_bb)
/* Collective writes between planning points of background drains (ad_bblog_bg_plan.c): the first
 * spacing of an output phase, doubled at each point up to the most, while a point brings some
 * bytes but fewer than ADIOI_BBLOG_PLAN_BYTES per process; once the processes' phases are
 * regular in collective calls, up to the end of the phase (at most the most). */
#define ADIOI_BBLOG_PLAN_EVERY 8
#define ADIOI_BBLOG_PLAN_MAX_EVERY 4096
#define ADIOI_BBLOG_PLAN_BYTES (4 * 1024 * 1024)
/* Pieces averaging less than this are small: the background drain would write them one
 * request each. A planning point whose new pieces are small starts a node batch where it can
 * (ad_bblog_bg_batch.c); bblog_close=bb drains what is left at close when it is small and no
 * batch can take it (ad_bblog_close.c). */
#define ADIOI_BBLOG_CLOSE_PIECE ((uint64_t) 64 << 10)
/* Collective writes between the agreements of a small budget (ad_bblog_bg_cap.c): once some
 * process is past its high-water mark, and at most before. */
#define ADIOI_BBLOG_CAP_EVERY 64
#define ADIOI_BBLOG_CAP_MAX_EVERY 4096
#define ADIOI_BBLOG_MAX(var, v) do { if ((v) > (var)) (var) = (v); } while (0)

#endif
