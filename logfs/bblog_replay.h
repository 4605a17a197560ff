/*
 * Crash recovery (DESIGN.md section 4): finding the logs a crashed job left behind, telling what
 * each belongs to, and applying the undrained data of one parallel-file-system (PFS) file's
 * logs to that file. Plain C, no MPI, built on the scanner of bblog_log.h. Functions return 0,
 * a positive errno or a negative BBLOG_E* code, and fill a struct bblog_replay_err with the file
 * at fault and why; none prints or exits (the bblog tool does the talking).
 *
 * Replay rules, decided here and relied on by the tool and its manual page:
 * - The logs of one PFS file are those whose header names that path (exact string match).
 *   Those with data to replay must share one job id, unless a job is named (then the other
 *   jobs' logs are ignored), and one nprocs; no two of them may carry the same rank. Anything
 *   else is BBLOG_EMISMATCH: replaying logs of two runs (or two opens of the file) over each
 *   other would be ordered by nothing meaningful.
 * - Logs that hold nothing to replay (fully drained, e.g. kept by an earlier open or an
 *   earlier job with bblog_keep_logs) take no part in these checks: they are only counted.
 * - Missing ranks are allowed (a rank that wrote nothing, or whose log was drained and
 *   removed, leaves no log) and are reported.
 * - Logs with data to replay must be regular files (meta and data) owned by the caller, or
 *   the replay is refused (EPERM) before anything is written: replay writes with the caller's
 *   rights what the logs say where their headers say, so root must not replay logs another
 *   user planted in a shared directory (it replays them as that user).
 * - The logs of one open of the file by one job share a set id (the header's set_id); logs
 *   with data of two sets of one file (two runs, job ids repeat) are BBLOG_EMISMATCH unless
 *   a set is named. bblog_replay_sets lists the sets.
 * - Damage (scan.c) decides. A log that ends in BBLOG_ETORN is accepted: its torn tail holds
 *   records written after its last sync, which no sync acknowledged, and is dropped; such
 *   logs are reported. Anything else is corruption: a damaged record or payload, synced or
 *   followed by valid records, a missing data log, a meta log cut before its last sync mark,
 *   a log of the set whose header is damaged (told by its name: the set's logs are named
 *   STEM.rRANK.meta), and a rank of the set whose .meta file is missing beside its .data file.
 *   Every damaged item of every log of the file is reported (struct
 *   bblog_replay_loss: the file range lost where the record is intact) and nothing is written
 *   (BBLOG_ECORRUPT), unless opts->salvage: then the intact records are replayed and the
 *   call still returns BBLOG_ECORRUPT, with rep->salvaged set. Skipping a damaged record can
 *   let older bytes of another record show through in its range: those ranges are reported.
 * - Only records whose epoch equals their header's epoch are applied (older ones were drained
 *   already; format header), in the order gen, then rank, then seq.
 * - Replay writes the logged bytes and nothing else: it neither truncates nor extends the file
 *   beyond the last logged byte, and leaves the logs in place. Running it twice gives the same
 *   file: it is idempotent by construction, so a replay interrupted by another crash is simply
 *   run again. The logs must not change while it runs (the job that wrote them is gone).
 */
#ifndef BBLOG_REPLAY_H
#define BBLOG_REPLAY_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "bblog_log.h"

#define BBLOG_REPLAY_REASON_MAX 512

/* Why a call failed: the file at fault (a log, a directory or the PFS file; "" when none) and a
 * sentence saying what is wrong with it. rc repeats the return code. */
struct bblog_replay_err {
    int rc;
    char path[PATH_MAX];
    char reason[BBLOG_REPLAY_REASON_MAX];
};

/* Fills *err (nothing when err is NULL): RC, the file at fault (PATH, or "" when NULL) and why. */
void bblog_replay_set_err(struct bblog_replay_err *err, int rc, const char *path,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* One log as found on disk: its header and the outcome of a full scan (every record and
 * payload checksum verified). The header fields are valid only when open_rc == 0. */
struct bblog_replay_log {
    char *meta_path;            /* malloc'ed path of BASE.meta */
    /* In a node's log pair (bblog_format.h): slots > 0 and the log's slot, its data at dbase
     * in BASE.data; slots 0 (slot BBLOG_NODE_HEADER) for a log of its own. */
    uint32_t slots, slot;
    uint64_t dbase;
    int open_rc;                /* bblog_scan_open: 0, an errno, or a header error code */
    uint32_t version, rank, nprocs;
    uint64_t create_time_ns, epoch, file_id, set_id;
    uint32_t drained_gen;       /* header: records of gen below it were drained job-wide */
    uint64_t synced_count, synced_seq;  /* the last sync of the epoch: count 0 if none */
    char job_id[BBLOG_JOB_ID_MAX + 1];
    char *pfs_path;             /* malloc'ed, NULL when open_rc != 0 */
    int scan_rc;                /* 0 clean end, BBLOG_ETORN, BBLOG_ECORRUPT or an errno */
    uint64_t bad_pos;           /* meta-file byte of the first bad slot when scan_rc < 0 */
    uint64_t damaged;           /* damaged items (BBLOG_ECORRUPT), the scan resumed past each */
    uint64_t damaged_synced;    /* of those, below the last sync mark */
    int data_missing;           /* its .data file is missing */
    uint64_t records;           /* valid records before the end or the bad slot */
    uint64_t undrained_records; /* of those, data records of the header's epoch whose gen is
                                 * not below the header's drained_gen */
    uint64_t undrained_bytes;   /* their payload bytes */
    uint32_t min_gen, max_gen;  /* over undrained records; both 0 when there are none */
    uint64_t marked_records;    /* PFS records and records below the trim point, of the same
                                 * epoch and gens: replay orders them against the others */
};

struct bblog_replay_list {
    struct bblog_replay_log *logs;
    size_t n;
};

/* Opens and scans one log (META_PATH is its .meta file). Returns 0 when the log was examined,
 * whatever its state (see open_rc and scan_rc), or ENOMEM; release *out with
 * bblog_replay_log_release. */
int bblog_replay_inspect(const char *meta_path, struct bblog_replay_log *out);
/* The same for slot SLOT of a node's log pair (BBLOG_NODE_HEADER: what bblog_replay_inspect
 * does; on a pair that lists the pair's own header, slots > 0, and no records). */
int bblog_replay_inspect_slot(const char *meta_path, uint32_t slot, struct bblog_replay_log *out);
void bblog_replay_log_release(struct bblog_replay_log *log);

/*
 * Finds the logs (files named *.meta) in DIR and in its per-user subdirectories DIR/bblog-UID
 * made by bblog_log_userdir, inspects each, and sorts them by PFS path, job id, set id, rank,
 * then path (logs whose header can't be read last). Symbolic links are not followed; per-user
 * subdirectories the caller may not read (other users') are skipped. Errors: those of
 * opendir on DIR itself (err names DIR), ENOMEM.
 */
int bblog_replay_discover(const char *dir, struct bblog_replay_list *out,
                          struct bblog_replay_err *err);
void bblog_replay_list_free(struct bblog_replay_list *list);
/* The log META_PATH as a list: one log, or on a node's log pair one per slot that holds a log.
 * Returns 0 or ENOMEM. */
int bblog_replay_list_file(const char *meta_path, struct bblog_replay_list *out);

/* The distinct PFS paths of a list's readable logs, in list order; *paths (malloc'ed, free it)
 * points into the list. Returns 0 or ENOMEM. */
int bblog_replay_paths(const struct bblog_replay_list *list, const char ***paths, size_t *n);

/* One open of one file by one job, as found: its logs of the list, by (path, job, set). */
struct bblog_replay_set {
    const char *pfs_path, *job_id;      /* point into the list */
    uint64_t set_id;
    uint32_t nprocs;
    size_t nlogs;                       /* readable logs */
    size_t nunreadable;                 /* logs named after the set whose header is damaged */
    uint64_t create_time_ns;            /* earliest log creation */
    uint64_t undrained_bytes;
    size_t ntorn, ncorrupt;
};

/* The sets of a list, sorted by path, then creation time. Returns 0 or ENOMEM. */
int bblog_replay_sets(const struct bblog_replay_list *list, struct bblog_replay_set **sets,
                      size_t *n);

/* The set a log belongs to by its name when its header can't be read: 1 with *rank set when
 * the log's file name is STEM.rRANK.meta and a readable log of SET is named STEM.rN.meta. */
int bblog_replay_named_in_set(const struct bblog_replay_list *list,
                              const struct bblog_replay_set *set,
                              const struct bblog_replay_log *log, uint32_t *rank);

struct bblog_replay_opts {
    const char *pfs_path;       /* replay the logs whose header names this file; required */
    const char *job_id;         /* only this job's logs; NULL: the file's logs share one job */
    uint64_t set_id;            /* only this set's logs; 0: the file's logs share one set */
    int salvage;                /* replay the intact records of damaged logs */
    const char *target;         /* write there instead of pfs_path; NULL: pfs_path */
    size_t buffer_size;         /* gather buffer for the writes; 0: 4 MiB */
    int dry_run;                /* verify and plan, write nothing */
};

/* A contiguous range of ranks [first, last] that have no log. */
struct bblog_rank_range {
    uint32_t first, last;
};

/* One damaged item: a record or payload of a log (d), a whole log whose header is damaged
 * (header_rc != 0), or a rank of the set whose .meta file is missing while its .data file is
 * there (orphan: then log is the set's log in whose directory it was found). */
struct bblog_replay_loss {
    size_t log;                         /* index into the list */
    uint32_t rank;
    int header_rc;                      /* the log's open_rc; 0 for damage inside the log */
    int orphan;
    struct bblog_scan_damage d;
};

struct bblog_replay_report {
    char job_id[BBLOG_JOB_ID_MAX + 1];
    uint64_t set_id;
    uint32_t nprocs;
    size_t nlogs;                       /* logs replayed */
    size_t nempty;                      /* logs of the file with nothing to replay, ignored */
    struct bblog_rank_range *missing;   /* malloc'ed, ascending */
    size_t nmissing_ranges;
    uint64_t nmissing;                  /* ranks without a log */
    size_t *torn;                       /* malloc'ed indices into the list: torn tails dropped */
    size_t ntorn;
    uint64_t records;                   /* undrained records applied */
    uint64_t stale_records;             /* records of older (drained) epochs skipped */
    uint64_t marked_records;            /* PFS records and records below their log's trim
                                         * point: ordered, not written (bblog_format.h) */
    uint32_t drained_gen;               /* greatest drained_gen of the file's logs of the job:
                                         * records of lower gen were drained, and skipped */
    uint64_t bytes_logged;              /* payload bytes of the applied records */
    uint64_t extents;                   /* write extents after merging */
    uint64_t bytes_written;             /* file bytes written (planned, in a dry run) */
    uint64_t pwrites;                   /* write calls issued (0 in a dry run) */
    uint64_t file_end;                  /* end of the last logged byte; 0 if nothing */
    int created;                        /* the target did not exist and was created */
    struct bblog_replay_loss *losses;   /* malloc'ed: damage found (BBLOG_ECORRUPT) */
    size_t nlosses;
    int salvaged;                       /* the intact records were written despite losses */
    size_t nparts;                      /* other nodes' parts ordered against (in parts) */
    uint64_t foreign_records;           /* their records that meet this node's */
};

/*
 * Replays the logs of LIST that belong to opts->pfs_path into opts->target (or the PFS path):
 * selects and checks them as described at the top of this header, scans them all before
 * writing anything, merges every undrained record into one sorted, coalesced, later-wins write
 * list with bblog_reorder, then rescans each log and writes the pieces of its payloads that
 * survived the merge, gathered into file-contiguous runs of up to buffer_size bytes. The
 * target is opened O_WRONLY|O_CREAT (mode 0644 before the umask) only when there is something
 * to write, and fsync'ed before success is returned. *rep is filled (release it with
 * bblog_replay_report_free) on success and, as far as it got, on failure.
 * Errors: ENOENT when no log of the file (and job) exists; BBLOG_EMISMATCH; BBLOG_ECORRUPT
 * (rep->losses lists the damage; with opts->salvage the intact records were written);
 * errors of the target (err names it); ENOMEM.
 */
int bblog_replay_file(const struct bblog_replay_list *list, const struct bblog_replay_opts *opts,
                      struct bblog_replay_report *rep, struct bblog_replay_err *err);
void bblog_replay_report_free(struct bblog_replay_report *rep);

/*
 * Replay in parts: recovery in parallel, each node replaying its own logs where they are
 * (DESIGN.md section 4). The nodes exchange their records' metadata, not their data: each
 * node verifies its logs of a file (pass 1, bblog_replay_prepare) and publishes what orders
 * its records (offset, length, gen, rank, seq: a part, bblog_replay_part_of, written to a
 * part file with bblog_replay_parts_write); once the parts of every rank of the set are there
 * (bblog_replay_parts_complete), each node replays with the other nodes' parts
 * (bblog_replay_finish): their records are ordered with its own but never written (as
 * trimmed records are), so the node writes exactly the bytes that its own records win, and
 * the nodes together write the bytes one replay of all the logs would, each byte once, by
 * the node that holds it. The same checks apply across the parts as within one replay (one
 * job, set and process count; no rank twice; damage or a failed pass 1 on any node refuses
 * the file everywhere unless salvaging), plus one: every rank of the set must be accounted
 * for by a log here or a part (else EAGAIN: a node's part is missing, nothing is written).
 * Records drained job-wide are those below the greatest drained_gen of all parts and logs.
 */

/* One record as a part carries it: what orders it against the others, not its data. */
struct bblog_replay_prec {
    uint64_t off, len, seq;
    uint32_t gen, rank;
};

/* One file's logs on one node. */
struct bblog_replay_part {
    char *from;                         /* the part file's path (malloc'ed; NULL if not read) */
    char *pfs_path, *job_id;            /* malloc'ed */
    uint64_t set_id;
    uint32_t nprocs, drained_gen;
    int status;                         /* 0, or why pass 1 failed on that node */
    uint64_t nlosses;                   /* damaged items found there (salvaged if status 0) */
    uint32_t *ranks;                    /* the ranks of the set with a log there, ascending */
    size_t nranks;
    size_t nrecs;                       /* its records (kept and ordering-only ones) */
    struct bblog_replay_prec *recs;     /* those in memory: all, some (read for ranges, */
    size_t nread;                       /* sorted by offset) or none (read without) */
    uint64_t bytes, runs;               /* the records' union: bytes, file-contiguous runs */
};

/* What a node reads of the other nodes' parts of PFS_PATH: the records that may meet its own
 * bytes, ranges[2i] .. ranges[2i + 1] (n ranges, sorted and disjoint). */
struct bblog_replay_want {
    const char *pfs_path;
    const uint64_t *ranges;
    size_t n;
};

struct bblog_replay_parts {
    struct bblog_replay_part *v;
    size_t n;
};

/* One file's replay between pass 1 and pass 2. */
struct bblog_replay;

/* Pass 1 of bblog_replay_file (selection, checks, verification of every log) for opts->pfs_path;
 * *out is set whenever the logs were selected, also when their verification failed (its
 * part then says so); rep and err must outlive *out. Returns what bblog_replay_file would
 * have returned at that point. */
int bblog_replay_prepare(const struct bblog_replay_list *list,
                         const struct bblog_replay_opts *opts, struct bblog_replay **out,
                         struct bblog_replay_report *rep, struct bblog_replay_err *err);
/* This node's part of a prepared replay (release it with bblog_replay_part_release). 0 or
 * ENOMEM. */
int bblog_replay_part_of(const struct bblog_replay *r, struct bblog_replay_part *out);
/* The bytes a prepared replay may write, as the (lo, hi) pairs of bblog_replay_want, into a
 * malloc'ed *ranges: what the other nodes' records matter for. 0 or ENOMEM. */
int bblog_replay_ranges(const struct bblog_replay *r, uint64_t **ranges, size_t *n);
/* Pass 2 of a prepared replay, ordering its records against OTHERS' records of the same file
 * and set (other files' parts are ignored; NULL: none, as bblog_replay_file). Fills the
 * report as bblog_replay_file does; rep->nparts counts the parts used. */
int bblog_replay_finish(struct bblog_replay *r, const struct bblog_replay_parts *others);
void bblog_replay_free(struct bblog_replay *r);

void bblog_replay_part_release(struct bblog_replay_part *p);
void bblog_replay_parts_free(struct bblog_replay_parts *parts);
/* Writes parts v[0..n) to PATH: to PATH.tmp, fsync'ed, then renamed, so that a reader sees the
 * whole file or none. 0 or an errno (err names the file). */
int bblog_replay_parts_write(const char *path, const struct bblog_replay_part *v, size_t n,
                             struct bblog_replay_err *err);
/* Reads every part file (named *.part) in DIR but SKIP (a file name, or NULL), with their
 * records or only their headers, into *out. A damaged part file is BBLOG_ECORRUPT, one of
 * another format BBLOG_EBADMAGIC (err names it). */
int bblog_replay_parts_read(const char *dir, const char *skip, int with_records,
                            struct bblog_replay_parts *out, struct bblog_replay_err *err);
/* As bblog_replay_parts_read, with only the records that may meet the ranges of WANT[i] of
 * their file (parts of a file not in WANT without records): a part's records are kept in
 * blocks, each with its range of offsets, and only the blocks that meet a range are read. */
int bblog_replay_parts_read_for(const char *dir, const char *skip,
                                const struct bblog_replay_want *want, size_t nwant,
                                struct bblog_replay_parts *out, struct bblog_replay_err *err);
/* Whether [lo, hi) meets one of the n (lo, hi) pairs of RANGES (sorted and disjoint). */
int bblog_replay_meets(const uint64_t *ranges, size_t n, uint64_t lo, uint64_t hi);
/* The bytes and the file-contiguous runs of every part's records (each part's union of them,
 * summed over the parts; a part read from a file says them in its head): how finely the
 * nodes' bytes are cut, the writes a replay in parts makes where each node writes its own. 0
 * or ENOMEM. */
int bblog_replay_parts_runs(const struct bblog_replay_parts *parts, uint64_t *bytes,
                            uint64_t *runs);
/* Whether the parts account for every rank of every set they name: 1 yes, 0 not yet, or
 * BBLOG_EMISMATCH (two parts claim one rank, or disagree on a set's process count; err says
 * which). */
int bblog_replay_parts_complete(const struct bblog_replay_parts *parts,
                                struct bblog_replay_err *err);

#endif
