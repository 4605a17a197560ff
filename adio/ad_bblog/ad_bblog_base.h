/*
 * The driver's infrastructure, used by every concept: hints (ad_bblog_base_hints.c), the inner
 * file on the PFS (_base_inner.c), write order across processes (_base_order.c), one
 * logstate per file shared by its handles (_base_state.c), statistics (_base_stats.c),
 * collective calls that wait without spinning (_base_wait.c), errors (_base_err.c) and
 * system helpers (_base_sys.c).
 */
#ifndef AD_BBLOG_BASE_H_INCLUDED
#define AD_BBLOG_BASE_H_INCLUDED

#include <errno.h>

#include "ad_bblog.h"

/* ---- hints ---- */
/* ad_bblog_base_hints.c: parses and validates the bblog_* hints of info (environment defaults
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

void ADIOI_BBLOG_Refresh_info(ADIO_File fd);

/* ---- the inner file ---- */
/* ad_bblog_base_inner.c */
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
/* Data sieving of one-process drains (ad_bblog_drain_sieve.c): holes of at most this many bytes
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

/* ---- write order across processes ---- */
/* ad_bblog_base_order.c: write order across processes. The stamp of a write made now (it counts
 * the collective calls bracketed by Coll_begin and Coll_end, ad_bblog_bg_plan.c); every write call
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
                                         * node batch (ad_bblog_bg_batch.c); out: some process */
    size_t runs;                        /* out, with every: runs of one process's pieces that
                                         * continue each other in the file, all processes' */
    uint64_t lo, hi;                    /* in, without every: a span that most pieces of every
                                         * process lie in, the same on all (cut into domains) */
};
typedef int (*ADIOI_BBLOG_keep_fn) (void *arg, uint64_t off, uint64_t len);
int ADIOI_BBLOG_Order_init(ADIO_File fd, struct ADIOI_BBLOG_order *o);      /* 0 or ENOMEM */
void ADIOI_BBLOG_Order_fini(struct ADIOI_BBLOG_order *o);
/* Collective: every process passes its n_mine pieces (off, len, stamp triples); every: learn
 * all the others' pieces, not only those that overlap one's own. */
int ADIOI_BBLOG_Order_exchange(ADIO_File fd, struct ADIOI_BBLOG_order *o, const uint64_t *mine,
                               int n_mine, int every);
/* The exchange without `every` (ad_bblog_base_overlap.c): this process's n_mine pieces, its nr
 * ranges (off, end) and rix[c], the range of piece c; leaves in o->pieces (*ngot triples, not
 * indexed) the other processes' pieces that lie in their ranges that overlap another process's
 * range, from the processes whose ranges overlap this process's. Collective; 0, ENOMEM or
 * ADIOI_BBLOG_ECOLL, the same on every process but for ENOMEM at the very end (room for the
 * pieces received: the drain's commit agrees on it). */
int ADIOI_BBLOG_Order_local(ADIO_File fd, struct ADIOI_BBLOG_order *o, const uint64_t *mine,
                            size_t n_mine, const uint64_t *ranges, const size_t *rix, size_t nr,
                            int failed, size_t *ngot);
/* Calls keep for each part of [lo, hi) that no other process wrote with a stamp above stamp,
 * in file order; returns the first non-zero keep result, or 0. */
/* o from n (off, len, stamp) triples of other processes, as an exchange would leave it; 0 or
 * ENOMEM. */
int ADIOI_BBLOG_Order_set(struct ADIOI_BBLOG_order *o, const uint64_t *pieces, size_t n);
int ADIOI_BBLOG_Order_keep(const struct ADIOI_BBLOG_order *o, uint64_t lo, uint64_t hi,
                           uint64_t stamp, ADIOI_BBLOG_keep_fn keep, void *arg);

/* ---- the logstate ---- */
/* ad_bblog_base_state.c: 0 or ENOMEM / BBLOG_E*; detach closes the log (removing its files when
 * remove) once the last handle lets go and returns what that close returned. */
int ADIOI_BBLOG_Logstate_attach(const char *pfs_path, struct ADIOI_BBLOG_logstate **out);
int ADIOI_BBLOG_Logstate_detach(struct ADIOI_BBLOG_logstate *ls, int remove);
/* A logstate of pfs_path (any, when NULL) whose handles are closed but whose background drain
 * may still run, or NULL. */
struct ADIOI_BBLOG_logstate *ADIOI_BBLOG_Logstate_closing(const char *pfs_path);
/* Records an append of [off, off+len) at log offset data_off, made under stamp, in every table
 * the logstate keeps beside the log, and counts it. 0 or ENOMEM (the write then fails; the
 * index may already hold the extent, and the log holds its bytes). */
int ADIOI_BBLOG_Logstate_record(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                                uint64_t data_off, uint64_t stamp);

/* ---- statistics ---- */
/* ad_bblog_base_stats.c: one JSON object per file from rank 0 (collective). */
void ADIOI_BBLOG_Stats_report(ADIO_File fd);

/* ---- collective calls ---- */
/* ad_bblog_base_wait.c: the driver's collective calls, which wait for the other processes without
 * spinning (ADIOI_BBLOG_spin_waits: BBLOG_DEBUG_SPIN, the blocking calls instead). Each returns
 * MPI's error code, and every caller checks it (test/check-driver.py fails on a call whose
 * result is dropped): after a failed call the output is undefined, so the caller takes the
 * value that fails safe (the drain keeps the logs, an agreement reads as "some process
 * failed"), goes on with the collective calls left in its step with that value, so that a
 * failure every process sees keeps them in step, and reports ADIOI_BBLOG_ECOLL (MPI_ERR_OTHER)
 * unless an earlier error is reported. */
#define ADIOI_BBLOG_MUST_USE __attribute__ ((warn_unused_result))
extern int ADIOI_BBLOG_spin_waits;
/* BBLOG_DEBUG_FAIL_COLL, BBLOG_DEBUG_FAIL_COLL_ALL (read at each open): which of the calls
 * below, counted from here, fails (0: none), and whether every one after it does too. */
void ADIOI_BBLOG_Debug_fail_coll(int nth, int all);
int ADIOI_BBLOG_Wait_idle(MPI_Request *req);
int ADIOI_BBLOG_Barrier(MPI_Comm comm) ADIOI_BBLOG_MUST_USE;
int ADIOI_BBLOG_Bcast(void *buf, int n, MPI_Datatype type, int root, MPI_Comm comm)
    ADIOI_BBLOG_MUST_USE;
int ADIOI_BBLOG_Allreduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm) ADIOI_BBLOG_MUST_USE;
int ADIOI_BBLOG_Reduce(const void *in, void *out, int n, MPI_Datatype type, MPI_Op op, int root,
                       MPI_Comm comm) ADIOI_BBLOG_MUST_USE;
int ADIOI_BBLOG_Allgather(const void *in, int n, MPI_Datatype type, void *out, int m,
                          MPI_Datatype rtype, MPI_Comm comm) ADIOI_BBLOG_MUST_USE;
int ADIOI_BBLOG_Allgatherv(const void *in, int n, MPI_Datatype type, void *out, const int *counts,
                           const int *displs, MPI_Datatype rtype, MPI_Comm comm)
    ADIOI_BBLOG_MUST_USE;

/* A sparse exchange (ADIOI_BBLOG_Sparse): each process sends a few messages of 64-bit words to
 * the processes it names, and receives whatever the others send it, without anyone knowing in
 * advance who sends to whom. Records of `width` words; what arrives is kept as records of
 * width + 1 words, the sender's rank appended, in `v` (n records, room for cap). */
struct ADIOI_BBLOG_sparse_out {
    int dest;
    const uint64_t *w;                  /* n words, a multiple of the exchange's width */
    size_t n;
};
struct ADIOI_BBLOG_inbox {
    uint64_t *v;
    size_t n, cap;
    int width;
    int failed;                         /* out: no room for what arrived (it was dropped) */
};
/* ADIOI_BBLOG_SPARSE_CHUNK words (a multiple of every width, 12 KiB): the largest message, and
 * the size of `scratch`. */
#define ADIOI_BBLOG_SPARSE_CHUNK 1536
/* Collective on comm, as one call of those above (counted, and failed, as they are). tag: one
 * of the driver's own (ADIOI_BBLOG_Tag). With nagree > 0 the exchange ends in an MPI_Allreduce
 * (MPI_MAX) of nagree words, agree to agreed, instead of a barrier. */
int ADIOI_BBLOG_Sparse(MPI_Comm comm, int tag, const struct ADIOI_BBLOG_sparse_out *out,
                       int nout, struct ADIOI_BBLOG_inbox *in, uint64_t *scratch,
                       const uint64_t *agree, uint64_t *agreed, int nagree)
    ADIOI_BBLOG_MUST_USE;
/* The driver's point-to-point tags, counted down from MPI_TAG_UB: Tag(k) is MPI_TAG_UB - k. The
 * sync notes (ad_bblog_flush.c) hold the top ADIOI_BBLOG_NOTES_TAGS, the sparse exchanges
 * those below. */
#define ADIOI_BBLOG_NOTES_TAGS 3
int ADIOI_BBLOG_Tag(int k);
/* qsort's comparison of records of 64-bit words by their first word. */
int ADIOI_BBLOG_By_first(const void *a, const void *b);

/* Reduces n unsigned long longs as one element of a vector type with a user operation: the
 * first nsum are summed, the others take their maximum; root < 0: to every process
 * (MPI_Allreduce), else to root (out is then valid there only). MPICH reduces a builtin
 * operation over as many elements as there are processes with twice the message rounds of
 * this (DESIGN.md section 6). Collective; aborts (ROMIO's allocator) without memory; returns MPI's
 * error code. */
int ADIOI_BBLOG_Reduce_vec(const unsigned long long *in, unsigned long long *out, int n, int nsum,
                           int root, MPI_Comm comm) ADIOI_BBLOG_MUST_USE;

/* ---- errors ---- */
/* Warns on stderr that the burst buffer is full or failing (why, which follows its path):
 * once per job and burst-buffer directory, by the first process that finds it so. */
void ADIOI_BBLOG_Warn_full(struct ADIOI_BBLOG_state *st, const char *why);
/* ad_bblog_base_err.c: MPI error codes for bblog_* codes and errno values, with a message. */
int ADIOI_BBLOG_Err(const char *myname, int line, int error_class, const char *fmt, ...)
    __attribute__ ((format(printf, 4, 5)));
int ADIOI_BBLOG_Err_rc(const char *myname, int line, int rc, const char *what, const char *path);
/* What a bblog return code (ADIOI_BBLOG_ECOLL among them) means, as text. */
const char *ADIOI_BBLOG_Strerror(int rc);
/* The return code of a step whose collective call failed (an errno value nothing else in the
 * driver returns): ADIOI_BBLOG_Err_rc makes it MPI_ERR_OTHER, "a collective call among the
 * file's processes failed". */
#define ADIOI_BBLOG_ECOLL ECOMM

/* ---- system helpers (ad_bblog_base_sys.c) ---- */
double ADIOI_BBLOG_Now(void);
double ADIOI_BBLOG_Realtime(void);
/* A read-only mapping of all of file fd (*len its size) where it lives in memory
 * (bblog_io_in_memory), else NULL: on a device a mapping turns an I/O error into SIGBUS. */
void *ADIOI_BBLOG_Map_in_memory(int fd, size_t *len);
/* ad_bblog_drain_share.c: reads the file bytes at off into iov[0..n) (is_write 0) or writes them
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

#endif /* AD_BBLOG_BASE_H_INCLUDED */
