/*
 * Opening a file through bblog. All processes of the communicator call OpenColl together: it
 * validates the bblog_* hints (same decision everywhere), opens the inner file with ROMIO's own
 * ADIO_Open (which does the inner driver's create pass, deferred open and hint handling; for a file
 * on ufs rank 0 makes the create pass before the agreement instead: RATIONALE:
 * bench/results/rationale.md, create-pass), and prepares the log, which is created at the first
 * write so that readers leave no files.
 *
 * Collective calls. The open's checks are one reduction (agree_open) that carries at once whether
 * any process failed, the range of each hint that decides which collective calls a process makes,
 * and what rank 0 alone knows (the log-name token, the secret of remote reads, the write clock's
 * origin, the PFS file's type, whether it created the file). Every process returns the same
 * verdict: its own error, "failed on another process", or the hint that differs. Where several
 * processes open a file on ufs (no O_EXCL, an aggregator list that names no host), each opens the
 * inner file alone on a duplicate of MPI_COMM_SELF and one MPI_Allreduce agrees on the result,
 * instead of the collective calls of ROMIO's collective open. bblog has no create pass of its own
 * on the outer file: ADIO_Open calls this OpenColl, never the Open slot, so the collective drain
 * always runs on the communicator that opened the file (the Open slot serves ROMIO's deferred open
 * later, and only makes sure the inner file is open).
 *
 * Invariants. The file's communicator has MPI_ERRORS_ARE_FATAL: the drain and ROMIO's two-phase
 * writes under it cannot go on from a collective call that failed, so such a failure ends the job,
 * as MPI's default error handler does (the file's own error handler is not changed). The
 * shared-file-pointer file that ROMIO opens through this driver (.NAME.shfp.NNN, on MPI_COMM_SELF,
 * deleted on close) is a pass-through, never logged. The log's name and set id come from rank 0's
 * token, the same in every process of the open; the set id tells this open's logs from those of
 * another run whose job id, PID and count happen to match. A closed handle's background drain of
 * the file (bblog_close=bb) finishes before the file is opened again. SetInfo hands ROMIO hints to
 * the inner file; the bblog_* hints stay as opened.
 *
 * Failures. Without the node's write clock, ticks stay 0 (ad_bblog_base_order.c); without the list
 * of published writes, or a read server for other nodes, the open still works and this process's
 * writes go straight to the PFS file, where everyone sees them (a warning says so). A failed open
 * frees the state SetInfo made, on every process alike: ADIO_Open calls no Close then.
 */
#include <errno.h>
#include <sys/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
#include "adioi.h"

/* ROMIO names the shared-file-pointer file ".NAME.shfp.NNN" and opens it on MPI_COMM_SELF with
 * ADIO_DELETE_ON_CLOSE through the same driver. It is locked and updated in place: never logged. */
static int is_shared_fp_file(ADIO_File fd, int access_mode)
{
    const char *base = strrchr(fd->filename, '/');
    int size;

    base = base ? base + 1 : fd->filename;
    MPI_Comm_size(fd->comm, &size);
    return size == 1 && (access_mode & ADIO_DELETE_ON_CLOSE) && base[0] == '.' &&
        strstr(base, ".shfp.") != NULL;
}

/* An identifier shared by all ranks of the job, for the log headers and names. */
static void job_id(char *out, size_t n)
{
    static const char *const vars[] = {
        "BBLOG_JOB_ID", "SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "COBALT_JOBID", "FLUX_JOB_ID"
    };
    char host[64];
    size_t i;

    for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            snprintf(out, n, "%s", v);
            return;
        }
    }
    if (gethostname(host, sizeof(host)) != 0)
        strcpy(host, "localhost");
    host[sizeof(host) - 1] = '\0';
    snprintf(out, n, "%s-%ld", host, (long) getpid());
}

/* Copies the inner file's hints (striping, cb_*, ...) into the outer info, so that
 * MPI_File_get_info shows what the PFS driver really uses. */
static void publish_inner_hints(ADIO_File fd, ADIO_File inner)
{
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    int nkeys, i, flag;

    if (inner->info == MPI_INFO_NULL)
        return;
    MPI_Info_get_nkeys(inner->info, &nkeys);
    for (i = 0; i < nkeys; i++) {
        MPI_Info_get_nthkey(inner->info, i, key);
        if (strcmp(key, "romio_filesystem_type") == 0)
            continue;
        ADIOI_Info_get(inner->info, key, MPI_MAX_INFO_VAL, val, &flag);
        if (flag)
            ADIOI_Info_set(fd->info, key, val);
    }
}

void ADIOI_BBLOG_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static const char myname[] = "ADIOI_BBLOG_SETINFO";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    *error_code = MPI_SUCCESS;
    if (st == NULL) {
        /* First call, from ADIO_Open before OpenColl: keep the user's hints for the inner
         * open and for bblog's own validation there. */
        st = ADIOI_Calloc(1, sizeof(*st));
        if (!st) {
            *error_code = ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_NO_MEM,
                                          "bblog: out of memory opening %s", fd->filename);
            return;
        }
        st->inner = ADIO_FILE_NULL;
        st->user_info = MPI_INFO_NULL;
        st->synced_filetype = MPI_DATATYPE_NULL;
        st->notes_comm = MPI_COMM_NULL;
        if (users_info != MPI_INFO_NULL)
            MPI_Info_dup(users_info, &st->user_info);
        fd->fs_ptr = st;
    } else if (st->inner != ADIO_FILE_NULL && users_info != MPI_INFO_NULL) {
        int nkeys = 0;

        MPI_Info_get_nkeys(users_info, &nkeys);
        if (nkeys == 0) {
            /* An info without keys changes nothing: HDF5 passes its file's (often empty)
             * info to both set_view calls of every H5Dwrite. */
            users_info = MPI_INFO_NULL;
        } else {
            /* MPI_File_set_info / set_view: ROMIO hints reach the inner driver. bblog_* hints
             * are fixed at open (bblog(7)), but a bad one is refused as at open. */
            if (!st->passthrough &&
                (*error_code = ADIOI_BBLOG_Check_info(users_info)) != MPI_SUCCESS)
                return;
            ADIO_SetInfo(st->inner, users_info, error_code);
            if (*error_code != MPI_SUCCESS)
                return;
        }
    }
    ADIOI_GEN_SetInfo(fd, users_info, error_code);
    /* The bblog_* keys stay in fd->info once published at open; a call with new hints may
     * have changed the info, one without (PnetCDF's set_view at every put, HDF5's two per
     * H5Dwrite with an empty info) cannot: no republishing there, which cost each such call
     * about 19 searches of the info's key list. */
    if (*error_code == MPI_SUCCESS && st->hints_parsed &&
        (users_info != MPI_INFO_NULL || !st->hints_published)) {
        ADIOI_BBLOG_Publish_hints(fd, &st->hints);
        st->hints_published = 1;
    }
}

/* Makes every process return the same verdict: the first failing rank's code, or success. */
static int agree(ADIO_File fd, int code)
{
    static const char myname[] = "ADIOI_BBLOG_OPENCOLL";
    int failed = code != MPI_SUCCESS, any;

    if (ADIOI_BBLOG_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, fd->comm) != MPI_SUCCESS)
        return code != MPI_SUCCESS ? code : ADIOI_BBLOG_Err_rc(myname, __LINE__,
                                                               ADIOI_BBLOG_ECOLL,
                                                               "cannot open", fd->filename);
    if (any && code == MPI_SUCCESS)
        code = ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_IO,
                               "bblog: open of %s failed on another process", fd->filename);
    return code;
}

/* The log's directory (DIR/bblog-UID), checked before anything else is touched, and the index;
 * rank 0 also makes the name token that all ranks of this open share (agree_open sends it). */
static int prepare_log(ADIO_File fd, struct ADIOI_BBLOG_state *st, char *token, size_t tlen)
{
    static const char myname[] = "ADIOI_BBLOG_OPENCOLL";
    static unsigned opens;      /* per process; rank 0's count names the open */
    int rc;

    rc = bblog_log_userdir(st->hints.dir, st->logdir, sizeof(st->logdir));
    if (rc != 0)
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, rc,
                                  "cannot use burst-buffer directory (hint bblog_dir)",
                                  st->hints.dir);
    if (access(st->logdir, W_OK | X_OK) != 0)
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, errno,
                                  "burst-buffer directory not writable (hint bblog_dir)",
                                  st->logdir);
    if (st->rank == 0) {
        char job[BBLOG_JOB_ID_MAX];
        struct timespec ts;

        job_id(job, sizeof(job));
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(token, tlen, "%.63s|%016llx.%ld.%u|%lld.%09ld", job,
                 (unsigned long long) bblog_fnv1a64(st->pfs_path), (long) getpid(), opens++,
                 (long long) ts.tv_sec, (long) ts.tv_nsec);
    }
    /* A closed handle's background drain (bblog_close=bb) finishes first. */
    ADIOI_BBLOG_Bg_wait(st->pfs_path);
    rc = ADIOI_BBLOG_Logstate_attach(st->pfs_path, &st->ls);
    if (rc != 0)
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot create the index for",
                                  fd->filename);
    return MPI_SUCCESS;
}

/* The log's name and set id, from rank 0's token "JOB|FILE.PID.N|TIME": the set id tells
 * this open's logs from those of another run whose job id, PID and count happen to match
 * (job ids are reused across clusters and restarts). */
static void name_log(struct ADIOI_BBLOG_state *st, char *token)
{
    char *bar = strchr(token, '|'), *bar2 = strrchr(token, '|');

    st->set_id = bblog_fnv1a64(token);
    if (st->set_id == 0)
        st->set_id = 1;         /* 0 means "any set" to the replay tool */
    *bar2 = '\0';
    *bar = '\0';
    snprintf(st->job, sizeof(st->job), "%.63s", token);
    snprintf(st->log_name, sizeof(st->log_name), "%s.%s.r%d", token, bar + 1, st->rank);
    /* Job ids may hold characters that do not belong in a file name. */
    for (char *p = st->log_name; *p; p++)
        if (*p == '/' || *p == ' ')
            *p = '_';
}

#define TOKEN_WORDS 25          /* 200 bytes */

/* Order-preserving map of a signed value into the unsigned range, for MPI_MAX on unsigned. */
static unsigned long long biased(long long v)
{
    return (unsigned long long) v ^ (1ULL << 63);
}

/* Processes of this open that share its burst buffer: those on this node, or all with
 * bblog_shared_bb (collective when the open spans nodes). */
static int local_procs(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    MPI_Comm node;
    int n = st->nprocs;

    if ((st->one_node || st->hints.shared_bb) && st->hints.debug_node_size <= 0)
        return n;
    if (st->hints.debug_node_size > 0)
        return st->hints.debug_node_size < n ? st->hints.debug_node_size : n;
    if (MPI_Comm_split_type(fd->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_size(node, &n);
        MPI_Comm_free(&node);
    }
    return n;
}

/*
 * The one collective of the open's checks (each costs a synchronisation of all processes,
 * which on an oversubscribed node is milliseconds): a MPI_MAX reduction that carries at once
 * whether any process failed, the minimum and maximum of each hint that decides which
 * collective calls a process makes (as max of v and of ~v), whether all processes run on one
 * host (the same way, with a hash of its name), and rank 0's log-name token, statfs type of
 * the PFS file (*magic) and whether it created the file (*created; the others contribute
 * zeros). Every process returns the same verdict: its own error, "failed on
 * another process", or the hint that differs.
 */
static int agree_open(ADIO_File fd, struct ADIOI_BBLOG_state *st, int code, char *token,
                      long *magic, int *created)
{
    static const char myname[] = "ADIOI_BBLOG_OPENCOLL";
    static const char *const names[] = {
        "bblog_flush_buffer_size", "bblog_sync", "bblog_max_size (set or unset)",
        "bblog_indep_threshold", "bblog_drain (on_demand or not)", "bblog_close",
        "bblog_node_exchange", "bblog_consistency", "bblog_verify",
        "bblog_high_water (0 or not)", "bblog_shared_bb", "bblog_mapping"
    };
    enum { NH = 12, FAILED = 0, HI = 1, LO = HI + NH, HOST = LO + NH, TOK = HOST + 2,
        KEY = TOK + TOKEN_WORDS, ORIGIN = KEY + 2, WATCH = ORIGIN + 1, MAGIC = WATCH + 1,
        CREATED = MAGIC + 1, N = CREATED + 1 };
    unsigned long long in[N], out[N];
    long long h[NH] = { 0 };
    char host[MPI_MAX_PROCESSOR_NAME + 1];
    struct timespec now;
    int i, len = 0, rc;

    memset(in, 0, sizeof(in));
    in[FAILED] = code != MPI_SUCCESS;
    if (st->hints_parsed) {
        h[0] = st->hints.flush_buffer_size;
        h[1] = st->hints.sync_bb;
        h[2] = st->hints.max_size > 0;
        h[3] = st->hints.indep_threshold;
        h[4] = st->hints.drain != ADIOI_BBLOG_DRAIN_ON_DEMAND;
        h[5] = st->hints.close_bb;
        h[6] = st->hints.node_exchange;
        h[7] = st->hints.posix_reads;
        h[8] = st->hints.verify;
        h[9] = st->hints.high_water > 0;
        h[10] = st->hints.shared_bb;
        h[11] = st->hints.mapping_node;
    }
    for (i = 0; i < NH; i++) {
        in[HI + i] = biased(h[i]);
        in[LO + i] = ~biased(h[i]);
    }
    /* The host name's hash, as max and max of ~: equal everywhere when all processes share
     * one node, which the drain's node exchange uses (ad_bblog_drain_share.c). */
    MPI_Get_processor_name(host, &len);
    host[len] = '\0';
    in[HOST] = st->host_hash = bblog_fnv1a64(host);
    in[HOST + 1] = ~in[HOST];
    /* Rank 0's secret of this open: other nodes' reads must show it (ad_bblog_peer_remote.c). */
    if (st->rank == 0) {
        memcpy(&in[TOK], token, TOKEN_WORDS * sizeof(in[0]));
        if (getrandom(&in[KEY], 2 * sizeof(in[0]), 0) != (ssize_t) (2 * sizeof(in[0])))
            in[FAILED] = 1;
        clock_gettime(CLOCK_REALTIME, &now);
        in[ORIGIN] = (unsigned long long) now.tv_sec * 1000000 + now.tv_nsec / 1000;
        in[MAGIC] = (unsigned long long) *magic;
        in[CREATED] = (unsigned long long) *created;
    }
    /* The smallest share of free burst-buffer space, as max of ~ (ad_bblog_bg_cap.c). */
    in[WATCH] = st->hints_parsed ? ~(unsigned long long) ADIOI_BBLOG_Cap_free(st) : 0;
    rc = ADIOI_BBLOG_Reduce_vec(in, out, N, 0, -1, fd->comm);
    if (rc != MPI_SUCCESS || out[FAILED])
        return code != MPI_SUCCESS ? code : rc != MPI_SUCCESS ?
            ADIOI_BBLOG_Err_rc(myname, __LINE__, ADIOI_BBLOG_ECOLL, "cannot open", fd->filename) :
            ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_IO,
                            "bblog: open of %s failed on another process", fd->filename);
    for (i = 0; i < NH; i++)
        if (out[HI + i] != ~out[LO + i])
            return ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_NOT_SAME,
                                   "bblog: hint %s differs between processes of %s; it must be "
                                   "the same on all of them", names[i], fd->filename);
    st->one_node = out[HOST] == ~out[HOST + 1];
    st->bb_min_free = ~out[WATCH];
    memcpy(token, &out[TOK], TOKEN_WORDS * sizeof(out[0]));
    token[TOKEN_WORDS * sizeof(out[0]) - 1] = '\0';
    st->key[0] = out[KEY];
    st->key[1] = out[KEY + 1];
    *magic = (long) out[MAGIC];
    *created = (int) out[CREATED];
    /* Across nodes the write clock follows real time (ad_bblog_base_order.c). */
    st->clock_origin = st->one_node ? 0 : (int64_t) out[ORIGIN];
    return MPI_SUCCESS;
}

/* A failed open: ADIO_Open calls no Close then (every process fails alike, see agree()), so
 * the state made by SetInfo goes here. */
static void discard_state(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    ADIOI_BBLOG_Remote_close(st);
    ADIOI_BBLOG_Peer_detach(st);
    ADIOI_BBLOG_Peer_close(st);
    ADIOI_BBLOG_Clock_close(st);
    if (st->ls)
        ADIOI_BBLOG_Logstate_detach(st->ls, 1);
    if (st->user_info != MPI_INFO_NULL)
        MPI_Info_free(&st->user_info);
    ADIOI_Free(st);
    fd->fs_ptr = NULL;
}

/* The open's local part, before the processes agree: the inner file's driver where a prefix
 * names it (else rank 0's statfs type of the file in *magic, shared by the agreement), the
 * hints, the absolute path, the burst buffer (checked before the PFS file is touched: an
 * unusable bblog_dir fails the open without creating the file) and the list of published
 * writes. Last, rank 0 makes the create pass of a file on ufs (*created: the file exists), so
 * that after the agreement every process opens it without O_CREAT, as under plain ROMIO
 * (RATIONALE: bench/results/rationale.md, create-pass). Returns this process's MPI error code. */
static int open_local(ADIO_File fd, struct ADIOI_BBLOG_state *st, int access_mode,
                      const char **inner_name, int *fstype, ADIOI_Fns ** ops, long *magic,
                      int *created, char *token, size_t tlen)
{
    static const char myname[] = "ADIOI_BBLOG_OPENCOLL";
    int err = ADIOI_BBLOG_Inner_prefix(fd->filename, inner_name, fstype, ops);

    *magic = 0;
    *created = 0;
    if (err == MPI_SUCCESS && !st->passthrough) {
        err = ADIOI_BBLOG_Parse_hints(st->user_info, &st->hints);
        if (err == MPI_SUCCESS) {
            st->hints_parsed = 1;
            /* process-wide (_base_wait.c) */
            ADIOI_BBLOG_spin_waits = st->hints.debug_spin;
            ADIOI_BBLOG_Debug_fail_coll(st->hints.debug_fail_coll,
                                        st->hints.debug_fail_coll_all);
        }
    }
    /* The log header names the file by absolute path, so that `bblog replay` finds it. */
    if (err == MPI_SUCCESS && ADIOI_BBLOG_Abspath(*inner_name, st->pfs_path, sizeof(st->pfs_path)))
        err = ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_BAD_FILE,
                              "bblog: path of %s too long", *inner_name);
    memset(token, 0, tlen);
    if (err == MPI_SUCCESS && !st->passthrough)
        err = prepare_log(fd, st, token, tlen);
    /* Once a handle of several processes shares the process's log of this file, its other
     * handles' writes (MPI_COMM_SELF ones, as PnetCDF's) are ordered against the other
     * processes' too (ad_bblog_bg_plan.c). */
    if (err == MPI_SUCCESS && !st->passthrough && st->nprocs > 1) {
        ADIOI_BBLOG_Lock(st->ls);
        st->ls->multi = 1;
        ADIOI_BBLOG_Unlock(st->ls);
    }
    /* Reads that see the other processes' writes (ad_bblog_peer_list.c). */
    if (err == MPI_SUCCESS && !st->passthrough && st->nprocs > 1 && st->hints.posix_reads &&
        ADIOI_BBLOG_Peer_open(st) != 0)
        err = ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_NO_MEM, "bblog: out of memory "
                              "opening %s", fd->filename);
    if (err == MPI_SUCCESS && st->rank == 0) {
        if ((access_mode & ADIO_CREATE) && !(access_mode & ADIO_EXCL) &&
            (!*ops || *fstype == ADIO_UFS))
            *created = ADIOI_BBLOG_Inner_create(*inner_name, access_mode, fd->perm,
                                                *ops ? NULL : magic);
        else if (!*ops)
            *magic = ADIOI_BBLOG_Inner_magic(*inner_name);
    }
    return err;
}

/* After the agreement: the node's write clock, and what lets other processes read this one's
 * logged bytes (its list, and across nodes the read server). Failures here leave the open
 * working: the writes then go to the PFS file, where everyone sees them. */
static void open_reads(ADIO_File fd, struct ADIOI_BBLOG_state *st, int access_mode)
{
    if (!st->passthrough)
        ADIOI_BBLOG_Clock_open(st);
    if (st->peers)
        ADIOI_BBLOG_Peer_named(st);
    /* Processes of other nodes read this node's logged bytes through its read server. Where
     * there is none, writes go to the PFS file, where everyone sees them. */
    if (st->peers && !(access_mode & ADIO_RDONLY) &&
        (!st->one_node || st->hints.debug_node_size > 0)) {
        int rc = ADIOI_BBLOG_Remote_open(fd, st);
        if (rc != 0) {
            st->vis_failed = 1;
            fprintf(stderr, "bblog: warning: rank %d, writing %s: processes of other nodes "
                    "cannot read this node's logged bytes (no read server: %s); its writes go "
                    "straight to the parallel file system, correct but slower\n", st->rank,
                    st->pfs_path, ADIOI_BBLOG_Strerror(rc));
        }
    }
    /* The list that shows this process's writes to the others, before any write is made. If
     * it cannot be made, nothing is logged: every write goes to the PFS file, where the
     * others see it. */
    if (st->peers && !(access_mode & ADIO_RDONLY)) {
        int rc = ADIOI_BBLOG_Peer_attach(st);
        if (rc != 0) {
            char why[PATH_MAX + 64];
            snprintf(why, sizeof(why), "cannot hold the list of logged writes (%s)",
                     strerror(rc));
            st->vis_failed = 1;
            ADIOI_BBLOG_Warn_full(st, why);
        }
    }
}

/*
 * The inner file of a multi-process handle on ROMIO's ufs driver, opened by each process
 * alone: ROMIO's collective ADIO_Open makes six collective calls on the file's communicator
 * (the system hints, the aggregator list's two broadcasts, the create pass and the file's
 * block size broadcast, the error check), the outer file's open has made the same decisions
 * already, and a plain file needs nothing of another process to open. Each process opens it
 * on a duplicate of MPI_COMM_SELF (creating it where asked: a create that loses a race with
 * another process's gets EEXIST on some FUSE file systems, and then opens what exists), the
 * processes agree on the result (one MPI_Allreduce), and the inner file then takes the outer
 * file's communicator and aggregators, which the collective open would have computed from
 * the same hints (where the aggregator list names no host: any_host). Returns the MPI error
 * code (collective); NULL *inner on failure.
 */
static int open_inner_alone(ADIO_File fd, struct ADIOI_BBLOG_state *st, const char *inner_name,
                            int fstype, ADIOI_Fns * ops, int access_mode, ADIO_File * inner)
{
    MPI_Comm self;
    char v[16];
    int err, cls, i;

    MPI_Comm_dup(MPI_COMM_SELF, &self);
    *inner = ADIO_Open(MPI_COMM_SELF, self, inner_name, fstype, ops, access_mode, 0, MPI_BYTE,
                       MPI_BYTE, st->user_info, fd->perm, &err);
    if (err != MPI_SUCCESS && (access_mode & ADIO_CREATE)) {
        MPI_Error_class(err, &cls);
        if (cls == MPI_ERR_FILE_EXISTS)
            *inner = ADIO_Open(MPI_COMM_SELF, self, inner_name, fstype, ops,
                               access_mode & ~ADIO_CREATE, 0, MPI_BYTE, MPI_BYTE,
                               st->user_info, fd->perm, &err);
    }
    if (err != MPI_SUCCESS)
        MPI_Comm_free(&self);   /* a failed ADIO_Open leaves the communicator to its caller */
    err = agree(fd, err);
    if (err != MPI_SUCCESS) {
        if (*inner != ADIO_FILE_NULL && (*inner)->comm == self) {
            int ierr;
            ADIO_Close(*inner, &ierr);          /* frees self */
            MPIO_File_free(inner);
        }
        *inner = ADIO_FILE_NULL;
        return err;
    }
    (*inner)->comm = fd->comm;
    MPI_Comm_free(&self);
    if ((*inner)->hints->ranklist)
        ADIOI_Free((*inner)->hints->ranklist);
    (*inner)->hints->ranklist = ADIOI_Malloc(fd->hints->cb_nodes * sizeof(int));
    memcpy((*inner)->hints->ranklist, fd->hints->ranklist, fd->hints->cb_nodes * sizeof(int));
    (*inner)->hints->cb_nodes = fd->hints->cb_nodes;
    snprintf(v, sizeof(v), "%d", fd->hints->cb_nodes);
    ADIOI_Info_set((*inner)->info, "cb_nodes", v);
    (*inner)->is_agg = 0;
    for (i = 0; i < fd->hints->cb_nodes; i++)
        (*inner)->is_agg |= fd->hints->ranklist[i] == st->rank;
    (*inner)->hints->deferred_open = 0;         /* every process has it open */
    return MPI_SUCCESS;
}

/* Whether an aggregator list (cb_config_list) matches a process on any host: the default
 * "*:1", "*:*" or "*". A list that names hosts matches no aggregator in an open on
 * MPI_COMM_SELF of a process on another host ("No aggregators match"). */
static int any_host(const char *list)
{
    return !list || strcmp(list, "*:1") == 0 || strcmp(list, "*:*") == 0 ||
        strcmp(list, "*") == 0;
}

/* The inner file, opened by ROMIO's own ADIO_Open on the PFS path (by each process alone
 * where that makes the same file: open_inner_alone; without O_CREAT where rank 0 created it,
 * open_local); the outer file takes its descriptor, file pointer and hints. Returns the MPI
 * error code (collective). */
static int open_inner(ADIO_File fd, struct ADIOI_BBLOG_state *st, const char *inner_name,
                      int fstype, ADIOI_Fns * ops, int access_mode, int created)
{
    int inner_mode = access_mode & ~(ADIO_DELETE_ON_CLOSE | (created ? ADIO_CREATE : 0)), err;

    /* The inner file shares the outer file's communicator: a duplicate would cost a
     * collective call at every open (25-35 ms with 4 processes on 2 cores here), and bblog's
     * collectives and the inner file's never overlap (all blocking, in the calling thread).
     * ADIOI_BBLOG_Inner_close gives it a handle of its own to free. Delete-on-close is the
     * outer file's business: ADIO_Close of the outer file calls our Delete, which removes
     * the PFS file and its logs once. An exclusive create needs one process to create the
     * file before the others look: ROMIO's collective open does that. */
    if (fstype == ADIO_UFS && st->nprocs > 1 && !(access_mode & ADIO_EXCL) &&
        fd->hints->ranklist && fd->hints->cb_nodes > 0 && any_host(fd->hints->cb_config_list))
        err = open_inner_alone(fd, st, inner_name, fstype, ops, inner_mode, &st->inner);
    else
        st->inner = ADIO_Open(fd->comm, fd->comm, inner_name, fstype, ops, inner_mode, 0,
                              MPI_BYTE, MPI_BYTE, st->user_info, fd->perm, &err);
    if (err != MPI_SUCCESS)
        return err;
    fd->fd_sys = st->inner->fd_sys;
    fd->fp_ind = st->inner->fp_ind;     /* MPI_MODE_APPEND: the inner open found the end */
    fd->fp_sys_posn = st->inner->fp_sys_posn;
    fd->blksize = st->inner->blksize;
    fd->access_mode = access_mode;
    /* The outer file is always open: ROMIO must never try a deferred open of it. Deferred
     * open (romio_no_indep_rw) stays a property of the inner file. */
    fd->is_open = 1;
    fd->hints->deferred_open = 0;
    publish_inner_hints(fd, st->inner);
    if (!st->passthrough) {
        ADIOI_BBLOG_Publish_hints(fd, &st->hints);
        st->hints_published = 1;
    }
    if (!st->passthrough && !(access_mode & ADIO_RDONLY))
        ADIOI_BBLOG_Note_hints(st);
    return MPI_SUCCESS;
}

/* A handle that writes: the burst-buffer budget, and the background drain where the hints ask
 * for one (it writes the PFS file with POSIX calls from a thread of its own). Returns the MPI
 * error code (collective). */
static int open_drains(ADIO_File fd, struct ADIOI_BBLOG_state *st, int rank, int access_mode)
{
    int err;

    if (st->passthrough || (access_mode & ADIO_RDONLY))
        return MPI_SUCCESS;
    if (st->hints.high_water > 0) {
        int local = local_procs(fd, st);
        st->cap_watch = ADIOI_BBLOG_Cap_small(fd, st->bb_min_free, local);
        ADIOI_BBLOG_Cap_open(st, local);
    }
    if (ADIOI_BBLOG_NO_BG(&st->hints))
        return MPI_SUCCESS;
    st->ls->rank = rank;
    err = agree(fd, ADIOI_BBLOG_Bg_start(fd));
    if (err == MPI_SUCCESS && st->hints.drain != ADIOI_BBLOG_DRAIN_ON_DEMAND)
        st->ls->planning = 1;
    else if (err != MPI_SUCCESS)
        ADIOI_BBLOG_Bg_stop(st->ls, rank);      /* started here, failed elsewhere: no thread */
    return err;
}

void ADIOI_BBLOG_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    const char *inner_name;
    int fstype, created, err;
    long magic;
    ADIOI_Fns *ops;
    char token[TOKEN_WORDS * sizeof(unsigned long long)];

    *error_code = MPI_SUCCESS;
    st->rank = rank;
    MPI_Comm_size(fd->comm, &st->nprocs);
    st->passthrough = is_shared_fp_file(fd, access_mode);
    /* fd->comm is the file's own duplicate of the user's communicator, used by the drain and by
     * ROMIO's two-phase writes under it, neither of which can go on from a collective call that
     * failed (a process of the file died): with MPI_ERRORS_RETURN inherited from the user's
     * communicator the survivors went on with what the failed call left in their buffers and
     * wrote terabytes past the end of the file. Such a failure ends the job instead, as MPI's
     * default error handler does; the file's own error handler is not changed. */
    MPI_Comm_set_errhandler(fd->comm, MPI_ERRORS_ARE_FATAL);

    err = open_local(fd, st, access_mode, &inner_name, &fstype, &ops, &magic, &created, token,
                     sizeof(token));
    *error_code = agree_open(fd, st, err, token, &magic, &created);
    if (*error_code == MPI_SUCCESS && !ops)
        *error_code = ADIOI_BBLOG_Inner_by_magic(fd->filename, magic, &fstype, &ops);
    if (*error_code == MPI_SUCCESS && !st->passthrough)
        name_log(st, token);
    if (*error_code != MPI_SUCCESS) {
        discard_state(fd, st);
        return;
    }
    /* One log pair per node: this process's slot in it (collective over the node). */
    if (st->hints.mapping_node && !st->passthrough && !(access_mode & ADIO_RDONLY))
        ADIOI_BBLOG_Node_slot(fd);
    open_reads(fd, st, access_mode);
    *error_code = open_inner(fd, st, inner_name, fstype, ops, access_mode, created);
    if (*error_code != MPI_SUCCESS) {
        discard_state(fd, st);
        return;
    }
    *error_code = open_drains(fd, st, rank, access_mode);
    if (*error_code != MPI_SUCCESS) {
        int ierr;
        ADIOI_BBLOG_Inner_close(st, &ierr);
        discard_state(fd, st);
    }
}

/* ROMIO calls a driver's Open slot for a deferred open (ADIO_ImmediateOpen). bblog's outer file
 * is open from OpenColl on, so this only has to make sure the inner file is open too. */
void ADIOI_BBLOG_Open(ADIO_File fd, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    *error_code = MPI_SUCCESS;
    if (st && st->inner != ADIO_FILE_NULL)
        *error_code = ADIOI_BBLOG_Inner_ready(fd);
    fd->is_open = 1;
}
