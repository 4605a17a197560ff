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

/* bblog_* hints in force for one file (ad_bblog_hints.c, man/bblog.7). */
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
                                         * the free space at open (ad_bblog_cap.c) */
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
};

/* How the last collective drain of a file ended (bblog_stats' last_drain). */
enum { ADIOI_BBLOG_LAST_NONE, ADIOI_BBLOG_LAST_DONE, ADIOI_BBLOG_LAST_VERIFIED,
    ADIOI_BBLOG_LAST_FAILED, ADIOI_BBLOG_LAST_MISMATCH };

/* The figures of bblog_stats (ad_bblog_stats.c), each declared once here: the field of struct
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
    X(SUM, bytes_from_others, "bytes_read_from_others")     /* ad_bblog_vis.c */ \
    X(SUM, bytes_from_nodes, "bytes_read_from_other_nodes") /* of those, ad_bblog_remote.c */ \
    X(SUM, remote_asks, "other_node_asks")      /* reads that asked other nodes */ \
    X(SUM, remote_requests, "other_node_requests") /* requests sent for them, announcements */ \
    X(SUM, remote_skipped, "other_node_skips")  /* nodes not asked: nothing in the range */ \
    X(SUM, remote_announces, "other_node_announcements") /* ranges told to other nodes */ \
    X(SUM, srv_accepted, "server_connections")  /* the read server's (ad_bblog_server.c) */ \
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

/* An ordering stamp (ad_bblog_order.c): 2c, or 2c + 1 inside collective call c, in the
 * high 24 bits (ADIOI_BBLOG_COLL_STAMP), the node's write clock in the low 40. */
#define ADIOI_BBLOG_CLOCK_BITS 40
#define ADIOI_BBLOG_CLOCK_MAX ((UINT64_C(1) << ADIOI_BBLOG_CLOCK_BITS) - 1)
#define ADIOI_BBLOG_COLL_MAX ((UINT32_C(1) << (64 - ADIOI_BBLOG_CLOCK_BITS)) - 1)
#define ADIOI_BBLOG_COLL_STAMP(stamp) ((uint32_t) ((stamp) >> ADIOI_BBLOG_CLOCK_BITS))

/* A run of the data log written under one ordering stamp (ad_bblog_order.c). */
struct ADIOI_BBLOG_run {
    uint64_t log_off;                   /* where the run starts in the data log */
    uint64_t stamp;
};

/* File bytes written under a stamp, straight to the PFS (ad_bblog_order.c). */
struct ADIOI_BBLOG_piece {
    uint64_t off, len;
    uint64_t stamp;
};

/* What one process logged for one file, shared by its handles on it (ad_bblog_shared.c). */
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
    /* write order across processes (ad_bblog_order.c) */
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
    struct ADIOI_BBLOG_vis *vis;        /* what other processes' reads see (ad_bblog_vis.c) */
    /* A burst buffer smaller than the output (ad_bblog_cap.c); cap 0: no limit known. */
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
    uint64_t view;                      /* MPI_File_set_view calls so far (ad_bblog_shfp.c) */
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
    struct ADIOI_BBLOG_stats st;
};

#define ADIOI_BBLOG_STATE(fd) ((struct ADIOI_BBLOG_state *) (fd)->fs_ptr)
/* The hints start no background drain (bblog_drain=on_demand, bblog_close=pfs). */
#define ADIOI_BBLOG_NO_BG(h) ((h)->drain == ADIOI_BBLOG_DRAIN_ON_DEMAND && !(h)->close_bb)
/* Collective writes between planning points of background drains (ad_bblog_bg.c): the first
 * spacing of an output phase, doubled at each point up to the most, while a point brings some
 * bytes but fewer than ADIOI_BBLOG_PLAN_BYTES per process; once the processes' phases are
 * regular in collective calls, up to the end of the phase (at most the most). */
#define ADIOI_BBLOG_PLAN_EVERY 8
#define ADIOI_BBLOG_PLAN_MAX_EVERY 4096
#define ADIOI_BBLOG_PLAN_BYTES (4 * 1024 * 1024)
/* Pieces averaging less than this are small: the background drain would write them one
 * request each. A planning point whose new pieces are small starts a node batch where it can
 * (ad_bblog_batch.c); bblog_close=bb drains what is left at close when it is small and no
 * batch can take it (ad_bblog_close.c). */
#define ADIOI_BBLOG_CLOSE_PIECE ((uint64_t) 64 << 10)
/* Collective writes between the agreements of a small budget (ad_bblog_cap.c): once some
 * process is past its high-water mark, and at most before. */
#define ADIOI_BBLOG_CAP_EVERY 64
#define ADIOI_BBLOG_CAP_MAX_EVERY 4096
#define ADIOI_BBLOG_MAX(var, v) do { if ((v) > (var)) (var) = (v); } while (0)

/* ---- ROMIO operations ---- */
void ADIOI_BBLOG_Open(ADIO_File fd, int *error_code);
void ADIOI_BBLOG_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_BBLOG_Close(ADIO_File fd, int *error_code);
void ADIOI_BBLOG_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
void ADIOI_BBLOG_WriteContig(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_WriteStrided(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_WriteStridedColl(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_IwriteContig(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_IwriteStrided(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                               MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                               ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_IwriteStridedColl(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_ReadContig(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_ReadStrided(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_ReadStridedColl(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code);
void ADIOI_BBLOG_IreadContig(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_IreadStrided(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_IreadStridedColl(ADIO_File fd, void *buf, ADIOI_BBLOG_count_t count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code);
void ADIOI_BBLOG_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_BBLOG_Flush(ADIO_File fd, int *error_code);
void ADIOI_BBLOG_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_BBLOG_Delete(const char *filename, int *error_code);
int ADIOI_BBLOG_Feature(ADIO_File fd, int flag);
int ADIOI_BBLOG_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                        ADIO_Offset len);

/* ---- internals ---- */

/* ad_bblog_hints.c: parses and validates the bblog_* hints of info (environment defaults
 * under them) and the BBLOG_DEBUG_* variables into h; on a bad value returns an MPI error code
 * naming key (or variable) and value. */
int ADIOI_BBLOG_Parse_hints(MPI_Info info, struct ADIOI_BBLOG_hints *h);
/* Validates the bblog_* keys of info given after the open (MPI_File_set_info, set_view; they
 * change nothing there): MPI_SUCCESS or the error Parse_hints would give. The graft's
 * MPI_File_set_view calls it too. */
int ADIOI_BBLOG_Check_info(MPI_Info info);
/* At an open for writing: with bblog_sync=bb, says on stderr (rank 0, once per process) that
 * sync-barrier-sync no longer shows the data to other processes' reads of the PFS file. */
void ADIOI_BBLOG_Note_hints(const struct ADIOI_BBLOG_state *st);
/* Adds the bblog_* hints in force to fd->info (for MPI_File_get_info). */
void ADIOI_BBLOG_Publish_hints(ADIO_File fd, const struct ADIOI_BBLOG_hints *h);

/* ad_bblog_inner.c */
/* The inner driver of filename and the name it takes: a prefix's (bblog:lustre:/p), else the
 * one statfs tells. Inner_prefix: the prefix's alone (*ops NULL where there is none); then
 * Inner_by_magic with Inner_magic of the name, statfs of the file or of its directory. */
int ADIOI_BBLOG_Inner_resolve(const char *filename, const char **inner_name, int *fstype,
                              ADIOI_Fns ** ops);
int ADIOI_BBLOG_Inner_prefix(const char *filename, const char **inner_name, int *fstype,
                             ADIOI_Fns ** ops);
long ADIOI_BBLOG_Inner_magic(const char *path);
/* Rank 0's create pass of a ufs file before the open's agreement; 1 when the file exists. */
int ADIOI_BBLOG_Inner_create(const char *path, int access_mode, int perm, long *magic);
int ADIOI_BBLOG_Inner_by_magic(const char *filename, long magic, int *fstype, ADIOI_Fns ** ops);
void ADIOI_BBLOG_Inner_close(struct ADIOI_BBLOG_state *st, int *error_code);
int ADIOI_BBLOG_Inner_ready(ADIO_File fd);     /* deferred open of inner, if needed */
/* Data sieving of one-process drains (ad_bblog_drain.c): holes of at most this many bytes
 * between a drain's pieces are read and written back. Inner_sieves: whether the drains of a
 * handle's one-process handles may sieve (the process has the file open on several processes
 * too, romio_ds_write is not disabled, the inner driver writes with pwrite); Inner_lock: an
 * fcntl lock (F_WRLCK, waiting) or unlock (F_UNLCK) of a byte range, 0 or an errno. */
#define ADIOI_BBLOG_SIEVE_GAP ((uint64_t) 64 << 10)
/* Whether a chunk written alone, whose pieces span `span` bytes of the file in `runs` runs of
 * adjacent pieces, goes out as one write per run rather than as one read-modify-write of its
 * span (ROMIO's data sieving): so when its runs and holes average a sieve gap or more. */
#define ADIOI_BBLOG_RUNS_ALONE(runs, span) ((runs) <= 1 + (span) / ADIOI_BBLOG_SIEVE_GAP)
int ADIOI_BBLOG_Inner_sieves(const struct ADIOI_BBLOG_state *st);
int ADIOI_BBLOG_Inner_lock(int fd, short type, uint64_t off, uint64_t len);
/* Reads [off, off+len) of the inner file; *got = bytes before its end. */
int ADIOI_BBLOG_Read_inner(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, char *buf,
                           ADIO_Offset * got);
/* 1 if the access is contiguous in memory and in the file view, with *byte_off its first byte
 * (the strided entry points take offsets in etypes of the view, the contiguous ones in bytes). */
int ADIOI_BBLOG_Contig_access(ADIO_File fd, MPI_Datatype datatype, int file_ptr_type,
                              ADIO_Offset offset, ADIO_Offset * byte_off);
/* name made absolute against the working directory: 0 or ENAMETOOLONG. */
int ADIOI_BBLOG_Abspath(const char *name, char *out, size_t n);
void ADIOI_BBLOG_Inner_sync_view(ADIO_File fd);
void ADIOI_BBLOG_Inner_set_bytes_view(ADIO_File fd, MPI_Datatype filetype, int *error_code);

/* Runs a strided operation on the inner file with the outer view and file pointer (the
 * caller's int *error_code receives the result). */
#define ADIOI_BBLOG_INNER_STRIDED(fd, st, call)                              \
    do {                                                                     \
        *error_code = ADIOI_BBLOG_Inner_ready(fd);                           \
        if (*error_code == MPI_SUCCESS) {                                    \
            ADIOI_BBLOG_Inner_sync_view(fd);                                 \
            call;                                                            \
            (fd)->fp_ind = (st)->inner->fp_ind;                              \
        }                                                                    \
    } while (0)

/* ad_bblog_drain.c: collective drain of every process's log into the inner file; with
 * sync_inner the inner file is flushed before the logs are marked drained. */
int ADIOI_BBLOG_Drain(ADIO_File fd, int sync_inner);
/* Warns on stderr that the burst buffer is full or failing (why, which follows its path):
 * once per job and burst-buffer directory, by the first process that finds it so. */
void ADIOI_BBLOG_Warn_full(struct ADIOI_BBLOG_state *st, const char *why);
/* Independent: appends [off, off+len) of buf to the log (or writes it through). */
int ADIOI_BBLOG_Log_extent(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, const void *buf);

/* ad_bblog_order.c: write order across processes. The stamp of a write made now (it counts
 * the collective calls bracketed by Coll_begin and Coll_end, ad_bblog_bg.c); every write call
 * starts with Tick. Clock_open maps the node's write clock of the open (after the log is
 * named), Clock_close lets it go. */
uint64_t ADIOI_BBLOG_Stamp(const struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Tick(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Clock_open(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Clock_close(struct ADIOI_BBLOG_state *st);
/* The node's clock now (0 without one); Clock_seen: another node's clock was seen at remote
 * (a read's answer), so writes made from now on stamp after that node's. */
uint64_t ADIOI_BBLOG_Clock_now(const struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Clock_seen(struct ADIOI_BBLOG_state *st, uint64_t remote);
/* Records the stamp of an append at log_off, or of bytes written through; 0 or ENOMEM. */
int ADIOI_BBLOG_Note_append(struct ADIOI_BBLOG_logstate *ls, uint64_t log_off, uint64_t stamp);
/* Counts a write of this process (logged or through); returns the new count. */
static inline uint64_t ADIOI_BBLOG_Wrote(struct ADIOI_BBLOG_logstate *ls)
{
    return __atomic_add_fetch(&ls->wgen, 1, __ATOMIC_RELAXED);
}

/* The writes up to count w are in the PFS file and flushed there. */
static inline void ADIOI_BBLOG_Flushed(struct ADIOI_BBLOG_logstate *ls, uint64_t w)
{
    uint64_t cur = __atomic_load_n(&ls->flushed_wgen, __ATOMIC_RELAXED);

    while (w > cur && !__atomic_compare_exchange_n(&ls->flushed_wgen, &cur, w, 0,
                                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void ADIOI_BBLOG_Refresh_info(ADIO_File fd);
/* ad_bblog_flush.c: Notes_settle hears the rest of the last sync made without an agreement
 * (the other processes' notes, and the "done" of those that drained alone), before any write,
 * collective call or close on the file (ADIOI_BBLOG_SETTLE); Notes_close also waits for this
 * process's sends and frees the communicator, at close, on every process. */
int ADIOI_BBLOG_Notes_settle(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Notes_close(ADIO_File fd);
#define ADIOI_BBLOG_SETTLE(st) ((st)->notes_pending ? ADIOI_BBLOG_Notes_settle(st) : MPI_SUCCESS)
int ADIOI_BBLOG_Note_drained(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                             uint64_t stamp);
int ADIOI_BBLOG_Note_through(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                             uint64_t stamp);
int ADIOI_BBLOG_Note_recent(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                            uint64_t stamp);
/* The run of runs[0..n) (n > 0 for a meaningful result) that holds log offset log_off, and
 * where it ends in the log. */
size_t ADIOI_BBLOG_Run_find(const struct ADIOI_BBLOG_run *runs, size_t n, uint64_t log_off,
                            uint64_t *run_end);
/* The stamp of the log byte at log_off, and where its run ends in the log. */
uint64_t ADIOI_BBLOG_Stamp_at(const struct ADIOI_BBLOG_logstate *ls, uint64_t log_off,
                              uint64_t *run_end);
/* Calls fn for each piece of the logged extent [off, off+len) at log_off that lies in one run
 * of one stamp (an extent coalesced across calls spans several), in order; stops at fn's
 * first non-zero return and returns it. */
typedef int (*ADIOI_BBLOG_run_fn) (void *arg, uint64_t off, uint64_t len, uint64_t log_off,
                                   uint64_t stamp);
int ADIOI_BBLOG_Stamp_runs(const struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                           uint64_t log_off, ADIOI_BBLOG_run_fn fn, void *arg);
void ADIOI_BBLOG_Order_reset(struct ADIOI_BBLOG_logstate *ls);     /* after a drain */
void ADIOI_BBLOG_Order_free(struct ADIOI_BBLOG_logstate *ls);

/* The pieces other processes drain in one round, sorted by offset. */
struct ADIOI_BBLOG_order {
    int *counts;                        /* 2 * nprocs: allgatherv counts and displacements */
    uint64_t *pieces;                   /* n triples (off, len, stamp) */
    uint64_t *reach;                    /* reach[j]: max end of pieces[0..j] */
    size_t n, cap, reach_cap;
    int flag;                           /* in: this process's; out: whether any process's */
    int agree;                          /* in: 1 to compare `key` across the processes */
    uint64_t key;                       /* in: this process's; out: the same on all, or
                                         * UINT64_MAX when processes gave different ones */
    int nobatch;                        /* with agree, in: this process cannot take part in a
                                         * node batch (ad_bblog_batch.c); out: some process */
    size_t runs;                        /* out, with every: runs of one process's pieces that
                                         * continue each other in the file, all processes' */
};
typedef int (*ADIOI_BBLOG_keep_fn) (void *arg, uint64_t off, uint64_t len);
int ADIOI_BBLOG_Order_init(ADIO_File fd, struct ADIOI_BBLOG_order *o);      /* 0 or ENOMEM */
void ADIOI_BBLOG_Order_fini(struct ADIOI_BBLOG_order *o);
/* Collective: every process passes its n_mine pieces (off, len, stamp triples); every: learn
 * all the others' pieces, not only those that overlap one's own. */
int ADIOI_BBLOG_Order_exchange(ADIO_File fd, struct ADIOI_BBLOG_order *o, const uint64_t *mine,
                               int n_mine, int every);
/* Calls keep for each part of [lo, hi) that no other process wrote with a stamp above stamp,
 * in file order; returns the first non-zero keep result, or 0. */
/* o from n (off, len, stamp) triples of other processes, as an exchange would leave it; 0 or
 * ENOMEM. */
int ADIOI_BBLOG_Order_set(struct ADIOI_BBLOG_order *o, const uint64_t *pieces, size_t n);
int ADIOI_BBLOG_Order_keep(const struct ADIOI_BBLOG_order *o, uint64_t lo, uint64_t hi,
                           uint64_t stamp, ADIOI_BBLOG_keep_fn keep, void *arg);
/* ad_bblog_drain.c: this process's logged pieces as (off, len, stamp) triples, in file order
 * (*triples is the caller's to free); 0 or ENOMEM. Drain_alone drains this process's log
 * alone, with no collective call, leaving out what `later` lists with a higher stamp, and
 * flushes the inner file (a sync that the other processes left, ad_bblog_flush.c). */
int ADIOI_BBLOG_Drain_pieces(struct ADIOI_BBLOG_state *st, uint64_t **triples, size_t *n);
int ADIOI_BBLOG_Drain_alone(ADIO_File fd, const struct ADIOI_BBLOG_order *later);

/* ad_bblog_node.c: the drain's node exchange through the burst buffer. Node_stage, before the
 * drain's starting MPI_Allgather (collective over fd->comm the first time), makes this
 * process's files ready and returns the flags below for that Allgather; Node_prepare, after
 * it, opens the node's logs from all processes' flags (flags[rank], NULL: none) and returns 1
 * when this process can read every one; Node_share is collective over the node, once per
 * round: mine holds n (off, len, log offset, stamp) quadruples, and this process's share of
 * the node's bytes comes back as pieces of the node's logs; Node_read reads pieces of a share,
 * Node_write_mapped writes them to the inner file straight from the logs where it can, one
 * pwritev per run of adjacent pieces (-1: it cannot, read them). */
struct ADIOI_BBLOG_node;
struct bblog_npiece;
enum {
    ADIOI_BBLOG_NODE_NONE = 1,  /* no node state (allocation failed): no node exchange */
    ADIOI_BBLOG_NODE_LOG = 2,   /* a data log, flushed */
    ADIOI_BBLOG_NODE_LIST = 4,  /* a list file for the rounds */
    ADIOI_BBLOG_NODE_CLAIM = 8, /* the node's chunk counter, made by its first process */
    ADIOI_BBLOG_NODE_UNSTAGED = 16      /* a data log that could not be flushed: no node
                                         * exchange in this drain */
};
unsigned ADIOI_BBLOG_Node_stage(ADIO_File fd);
int ADIOI_BBLOG_Node_prepare(ADIO_File fd, const unsigned char *flags);
int ADIOI_BBLOG_Node_share(ADIO_File fd, const uint64_t *mine, int n, int whole,
                           struct bblog_npiece **share, size_t *ns, uint64_t *own_kept);
/* With whole (one node, collectively), Node_share returns all the node's bytes of the round,
 * and the processes take chunks of them in turn: Node_claim returns the next chunk of n not
 * taken yet by anyone, or n when none is left (*next: 0 at the start of a round). */
uint64_t ADIOI_BBLOG_Node_claim(const struct ADIOI_BBLOG_state *st, uint64_t n, uint64_t *next);
int ADIOI_BBLOG_Node_write_mapped(const struct ADIOI_BBLOG_state *st,
                                  const struct bblog_npiece *p, size_t k, int fd,
                                  uint64_t *from_peers, size_t *runs);
int ADIOI_BBLOG_Node_read(const struct ADIOI_BBLOG_state *st, const struct bblog_npiece *p,
                          size_t k, char *buf, uint64_t *from_peers);
void ADIOI_BBLOG_Node_free(struct ADIOI_BBLOG_state *st);      /* collective over the node */
void ADIOI_BBLOG_Node_end(struct ADIOI_BBLOG_state *st);       /* a drain is over: close logs */
/* A read-only mapping of all of file fd (*len its size) where it lives in memory
 * (bblog_io_in_memory), else NULL: on a device a mapping turns an I/O error into SIGBUS. */
void *ADIOI_BBLOG_Map_in_memory(int fd, size_t *len);
int ADIOI_BBLOG_Node_size(const struct ADIOI_BBLOG_state *st);  /* processes on this node */
void ADIOI_BBLOG_Node_slot(ADIO_File fd);   /* bblog_mapping=node, at open (collective) */
/* The node's processes (their ranks in the file's communicator) and this one's place among
 * them; 0: no node state. Collective over the file's communicator the first time. */
int ADIOI_BBLOG_Node_members(ADIO_File fd, const int **ranks, int *me);
/* The data log of the node's process i (malloc'ed path) and where its bytes start in it (a
 * slot of the node's pair under bblog_mapping=node, else 0); NULL without the node state. */
char *ADIOI_BBLOG_Node_data_path(const struct ADIOI_BBLOG_state *st, int i, uint64_t *base);
void ADIOI_BBLOG_Node_rest(struct ADIOI_BBLOG_state *st);       /* after a round's chunks */

/* ad_bblog_batch.c: node batches of the background drain (no MPI). Batch_open, before a
 * planning point's exchange, makes this process's files of batch id (chunks of chunk bytes)
 * among the node's nranks processes (ranks in the file's communicator; this one is ranks[me]);
 * Batch_shared, after it, says whether every one made the same (the same answer in all);
 * Batch_publish, writes its pieces (n (off, len, log offset, stamp) quadruples,
 * malloc'ed, kept by the batch) and opens the others' lists; Batch_fail tells the others it
 * cannot. Batch_ready: 1 when every list is there and the chunks are cut, 0 not yet, -1 the
 * batch failed. Batch_left: whether a chunk is left to take (once ready); Batch_claim takes
 * up to k in a row that nobody took (the first in *c; returns how many, 0: none left).
 * Batch_write writes a claim's chunks (buf: a chunk), but those after *stop turned positive,
 * and marks them (done or failed). Batch_done_walk calls fn for this process's published
 * bytes inside chunks marked done. Batch_close removes this process's names and frees it. */
struct ADIOI_BBLOG_batch;
int ADIOI_BBLOG_Batch_open(const struct ADIOI_BBLOG_state *st, const int *ranks, int nranks,
                           int me, uint32_t id, uint64_t chunk, struct ADIOI_BBLOG_batch **out);
int ADIOI_BBLOG_Batch_shared(const struct ADIOI_BBLOG_batch *b);
int ADIOI_BBLOG_Batch_publish(struct ADIOI_BBLOG_batch *b, uint64_t *own, size_t n);
void ADIOI_BBLOG_Batch_fail(struct ADIOI_BBLOG_batch *b);
int ADIOI_BBLOG_Batch_ready(struct ADIOI_BBLOG_batch *b);
int ADIOI_BBLOG_Batch_left(const struct ADIOI_BBLOG_batch *b);
uint64_t ADIOI_BBLOG_Batch_claim(struct ADIOI_BBLOG_batch *b, uint64_t k, int64_t *c);
int ADIOI_BBLOG_Batch_write(struct ADIOI_BBLOG_batch *b, int64_t c, uint64_t k, int pfs_fd,
                            char *buf, int flush, const int *stop, uint64_t *bytes,
                            uint64_t *writes);
int ADIOI_BBLOG_Batch_finished(const struct ADIOI_BBLOG_batch *b);
int ADIOI_BBLOG_Batch_done_walk(struct ADIOI_BBLOG_batch *b, ADIOI_BBLOG_run_fn fn, void *arg);
void ADIOI_BBLOG_Batch_close(struct ADIOI_BBLOG_batch *b);

/* ad_bblog_vis.c: what other processes logged, seen by this process's reads
 * (bblog_consistency=posix). Attach makes (or links) the process's list for this handle,
 * Open prepares the views of the other processes' lists; both at open. Note records an
 * extent logged (or written through to the PFS) for the next Publish, which every write call
 * makes at its end. Emptied: the log is about to be emptied after a drain. Vis_read serves a
 * contiguous read when another process published bytes of it (*done), Vis_any says whether
 * any has published anything, Vis_end the furthest byte they published. */
struct ADIOI_BBLOG_vis;
struct ADIOI_BBLOG_peers;
int ADIOI_BBLOG_Vis_attach(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Vis_detach(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Vis_free(struct ADIOI_BBLOG_logstate *ls);
int ADIOI_BBLOG_Vis_note(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                         uint64_t data_off, uint64_t stamp, int through);
/* through(fd, off, len, data_off) writes logged bytes to the PFS file when the log cannot
 * write out what it staged (MPI error code). */
typedef int (*ADIOI_BBLOG_through_fn) (ADIO_File fd, uint64_t off, uint64_t len,
                                       uint64_t data_off);
int ADIOI_BBLOG_Vis_publish(ADIO_File fd, ADIOI_BBLOG_through_fn through);
void ADIOI_BBLOG_Vis_emptied(struct ADIOI_BBLOG_logstate *ls);
int ADIOI_BBLOG_Vis_trim(struct ADIOI_BBLOG_logstate *ls, uint64_t upto);
int ADIOI_BBLOG_Vis_open(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Vis_close(struct ADIOI_BBLOG_state *st);
int ADIOI_BBLOG_Vis_read(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, char *buf,
                         ADIO_Offset * got, int *done);
int ADIOI_BBLOG_Vis_any(ADIO_File fd);
ADIO_Offset ADIOI_BBLOG_Vis_end(ADIO_File fd);
/* Named: the open agreed on the log names and whether all processes share one node. A view
 * (Vis_view) reads the lists of one open's processes, from any thread; Vis_here says which
 * ranks share the node (NULL: all). Vis_serve answers another node's read of [lo, hi) for a
 * reader that made limit collective calls (ad_bblog_remote.c). */
void ADIOI_BBLOG_Vis_named(struct ADIOI_BBLOG_state *st);
struct ADIOI_BBLOG_peers *ADIOI_BBLOG_Vis_view(const char *logdir, const char *log_name, int n,
                                              int self);
void ADIOI_BBLOG_Vis_view_free(struct ADIOI_BBLOG_peers *ps);
int ADIOI_BBLOG_Vis_here(struct ADIOI_BBLOG_peers *ps, const unsigned char *here);

/* A source of bytes of a range, found by another node's read server: logged bytes of rank
 * who (sent along), or bytes written straight to the PFS file (who -1); order breaks ties of
 * equal stamps as in ad_bblog_vis.c. */
struct ADIOI_BBLOG_rcand {
    uint64_t off, len, gen;
    int32_t who, order;
};

/* A server's answer: candidates, the logged bytes of those with who >= 0 one after the other,
 * the sum of its node's list epochs (changes when a list is emptied or found), the furthest
 * byte published and the number of entries taken. */
struct ADIOI_BBLOG_served {
    struct ADIOI_BBLOG_rcand *c;
    size_t n, cap;
    char *data;
    size_t ndata, data_cap;
    uint64_t esum, end, nent, clock;
};
int ADIOI_BBLOG_Vis_serve(struct ADIOI_BBLOG_peers *ps, uint32_t limit, uint64_t lo,
                          uint64_t hi, struct ADIOI_BBLOG_served *out);

/* Reads of what processes of other nodes logged (bblog_consistency=posix, a handle that can
 * write, processes on several nodes). ad_bblog_server.c: Open (collective, after the log
 * names are agreed) starts a read server on the first process of each node and tells every
 * process where the others are; Close stops it (after the close's collectives).
 * ad_bblog_remote.c: Ask sends [lo, lo + len) to every other node's server whose processes
 * announced writes in it (len 0: past lo) and takes the answers (Remote_answer(st, i),
 * i < Remote_nodes(st); empty for a node not asked); *changed when a node's lists were
 * emptied since its last answer. Announce tells every other node's server, before this
 * process publishes writes in [lo, hi), that it may have (0, or an errno). Err names the node
 * that could not be asked. */
struct ADIOI_BBLOG_remote;
int ADIOI_BBLOG_Remote_open(ADIO_File fd, struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Remote_close(struct ADIOI_BBLOG_state *st);
int ADIOI_BBLOG_Remote_ask(struct ADIOI_BBLOG_state *st, uint64_t lo, uint64_t len,
                           uint32_t limit, int *changed);
int ADIOI_BBLOG_Remote_announce(struct ADIOI_BBLOG_state *st, uint64_t lo, uint64_t hi);
int ADIOI_BBLOG_Remote_nodes(const struct ADIOI_BBLOG_state *st);
const struct ADIOI_BBLOG_served *ADIOI_BBLOG_Remote_answer(const struct ADIOI_BBLOG_state *st,
                                                          int i);
int ADIOI_BBLOG_Remote_err(const struct ADIOI_BBLOG_state *st, const char *myname, int line,
                           int rc, int writing);
/* The read server's counters so far (zero where this process runs none) into s. */
void ADIOI_BBLOG_Remote_stats(const struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_stats *s);

/* ad_bblog_node.c: reads the file bytes at off into iov[0..n) (is_write 0) or writes them
 * there, retrying EINTR and short transfers; advances iov. 0 or an errno (EIO at the end of
 * the file on a read). */
struct iovec;
int ADIOI_BBLOG_Io_vec(int fd, struct iovec *iov, int n, uint64_t off, int is_write);
/* open(path, O_WRONLY | O_APPEND | O_CREAT) for a file that processes of other nodes may create
 * at the same moment (the stats file): retried once on EEXIST, which GlusterFS's FUSE client
 * returns to the loser of such a race though the file then exists. -1 with errno on failure. */
int ADIOI_BBLOG_Open_append(const char *path);
#ifndef IOV_MAX
#define IOV_MAX 1024            /* POSIX's minimum is 16; glibc's limits.h says 1024 */
#endif

/* ad_bblog_bg.c: background drains. A collective call on the file is bracketed by Coll_begin
 * and Coll_end(fd, 1, may_wait), or followed by Coll_end(fd, 0, may_wait) when it writes
 * nothing; may_wait 0 (a nonblocking call) makes no planning point of it. */
void ADIOI_BBLOG_Coll_begin(ADIO_File fd);
void ADIOI_BBLOG_Coll_end(ADIO_File fd, int began, int may_wait);
int ADIOI_BBLOG_Bg_start(ADIO_File fd);                 /* at open: MPI error code */
int ADIOI_BBLOG_Bg_plan(ADIO_File fd);                  /* collective: 0 or ENOMEM */
/* close with bblog_close=bb: the last planning point (collective); *batched: the node's
 * threads write what is left as one batch (the same answer in every process). */
int ADIOI_BBLOG_Bg_plan_close(ADIO_File fd, int *batched);
int ADIOI_BBLOG_Bg_make_room(struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Bg_pause(struct ADIOI_BBLOG_logstate *ls);
/* Before a drain of handle st: a node batch that another handle started (a one-process
 * handle's drain, which the batch's other processes do not wait for) is finished first. */
void ADIOI_BBLOG_Bg_settle(struct ADIOI_BBLOG_logstate *ls, const struct ADIOI_BBLOG_state *st);
/* drained: a collective drain emptied every process's log */
void ADIOI_BBLOG_Bg_resume(struct ADIOI_BBLOG_logstate *ls, int drained);
void ADIOI_BBLOG_Bg_note_write(struct ADIOI_BBLOG_logstate *ls, uint64_t idx_bytes_before);
/* Whether the collective write just counted is the next planning point agreed at the last. */
int ADIOI_BBLOG_Bg_plan_due(const struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Bg_mark(struct ADIOI_BBLOG_logstate *ls);
int ADIOI_BBLOG_Bg_fenced(const struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len);
void ADIOI_BBLOG_Bg_close(struct ADIOI_BBLOG_logstate *ls);
void ADIOI_BBLOG_Bg_stop(struct ADIOI_BBLOG_logstate *ls, int rank);
/* Waits for the background drains of closed files (of pfs_path, or all when NULL). */
void ADIOI_BBLOG_Bg_wait(const char *pfs_path);
void ADIOI_BBLOG_Bg_wait_all(void);

/* ---- a burst buffer smaller than the output ---- */
/* ad_bblog_trim.c: every append noted by log offset; Trim_walk calls fn on the log's live
 * pieces from the oldest and returns the first live log byte left; Trim_apply takes the trim
 * point the drain thread offered. */
typedef int (*ADIOI_BBLOG_trim_fn) (void *arg, struct bblog_extent * piece);
int ADIOI_BBLOG_Trim_note_append(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                                 uint64_t data_off);
void ADIOI_BBLOG_Trim_reset(struct ADIOI_BBLOG_logstate *ls);
uint64_t ADIOI_BBLOG_Trim_walk(struct ADIOI_BBLOG_logstate *ls, ADIOI_BBLOG_trim_fn fn,
                               void *arg);
int ADIOI_BBLOG_Trim_apply(struct ADIOI_BBLOG_state *st);
/* ad_bblog_cap.c: the budget of each log, and when the drain that makes room runs. */
void ADIOI_BBLOG_Cap_open(struct ADIOI_BBLOG_state *st, int local_procs);
int ADIOI_BBLOG_Cap_wait(struct ADIOI_BBLOG_state *st, uint64_t len);
void ADIOI_BBLOG_Cap_start_solo(ADIO_File fd);
uint64_t ADIOI_BBLOG_Cap_free(const struct ADIOI_BBLOG_state *st);
int ADIOI_BBLOG_Cap_small(ADIO_File fd, uint64_t min_free, int local_procs);
int ADIOI_BBLOG_Cap_coll(ADIO_File fd, uint64_t bytes);

/* ad_bblog_shared.c: 0 or ENOMEM / BBLOG_E*; detach closes the log (removing its files when
 * remove) once the last handle lets go and returns what that close returned. */
int ADIOI_BBLOG_Logstate_attach(const char *pfs_path, struct ADIOI_BBLOG_logstate **out);
int ADIOI_BBLOG_Logstate_detach(struct ADIOI_BBLOG_logstate *ls, int remove);
/* A logstate of pfs_path (any, when NULL) whose handles are closed but whose background drain
 * may still run, or NULL. */
struct ADIOI_BBLOG_logstate *ADIOI_BBLOG_Logstate_closing(const char *pfs_path);

/* ad_bblog_shfp.c: the shared file pointer, one slot per view; called from ROMIO's
 * MPI_File_set_view, ADIO_Get_shared_fp and ADIO_Set_shared_fp (graft). */
void ADIOI_BBLOG_View_changed(ADIO_File fd);
void ADIOI_BBLOG_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,
                               int *error_code);
void ADIOI_BBLOG_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code);

/* ad_bblog_stats.c: one JSON object per file from rank 0 (collective). */
void ADIOI_BBLOG_Stats_report(ADIO_File fd);

/* ad_bblog_wait.c: the driver's collective calls, which wait for the other processes without
 * spinning (ADIOI_BBLOG_spin_waits: BBLOG_DEBUG_SPIN, the blocking calls instead). */
extern int ADIOI_BBLOG_spin_waits;
int ADIOI_BBLOG_Wait_idle(MPI_Request *req);
int ADIOI_BBLOG_Barrier(MPI_Comm comm);
int ADIOI_BBLOG_Bcast(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm);
int ADIOI_BBLOG_Allreduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm);
int ADIOI_BBLOG_Reduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                       int root, MPI_Comm comm);
int ADIOI_BBLOG_Allgather(const void *in, int n, MPI_Datatype type, void *out, int m,
                          MPI_Datatype rtype, MPI_Comm comm);
int ADIOI_BBLOG_Allgatherv(const void *in, int n, MPI_Datatype type, void *out,
                           const int *counts, const int *displs, MPI_Datatype rtype,
                           MPI_Comm comm);

/* ad_bblog_err.c: MPI error codes for bblog_* codes and errno values, with a message. */
int ADIOI_BBLOG_Err(const char *myname, int line, int error_class, const char *fmt, ...)
    __attribute__ ((format(printf, 4, 5)));
int ADIOI_BBLOG_Err_rc(const char *myname, int line, int rc, const char *what, const char *path);
double ADIOI_BBLOG_Now(void);
/* Reduces n unsigned long longs as one element of a vector type with a user operation: the
 * first nsum are summed, the others take their maximum; root < 0: to every process
 * (MPI_Allreduce), else to root (out is then valid there only). MPICH reduces a builtin
 * operation over as many elements as there are processes with twice the message rounds of
 * this (DESIGN.md section 6). Collective; aborts (ROMIO's allocator) without memory. */
void ADIOI_BBLOG_Reduce_vec(const unsigned long long *in, unsigned long long *out, int n,
                            int nsum, int root, MPI_Comm comm);

#endif
