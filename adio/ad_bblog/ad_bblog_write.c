/*
 * Writes. Every write, whatever its datatype, view, file pointer or collectiveness, ends up as
 * flattened (offset, length) extents handed to ADIOI_BBLOG_Log_extent: the payload is copied
 * into the log's staging buffer and the extent inserted in the index. That is the whole hot
 * path; the PFS sees nothing until a drain.
 *
 * Writes go straight to the inner file instead when the log must not or cannot hold them:
 * atomic mode, the shared-file-pointer file, and the burst buffer full (its capacity reached
 * and the background drain unable to make room, ad_bblog_bg_cap.c, or the log refused the
 * append), the last for bytes that no logged extent covers. So do extents of
 * bblog_through_threshold bytes or more when nothing drains the file in the background
 * (bblog_drain=on_demand, bblog_close=pfs): the drain at sync or close would write the same
 * extent back after one more copy, while the application waits, where the PFS client takes
 * it now and writes it behind (bench/results/README.md, output phases). With a background
 * drain they are logged like the rest: the write call returns at the burst buffer's speed and
 * the drain writes them while the application computes. Bytes that a logged
 * extent covers stay in the log even then, while the log takes appends (bblog_max_size):
 * writing them through would let the drain put the older logged bytes back over the newer
 * ones. A failed log takes nothing: then the index forgets the older bytes (replace_through).
 *
 * With bblog_consistency=posix each write call ends by publishing what it logged to the
 * other processes' reads (ad_bblog_peer_list.c).
 */
#include <stdio.h>
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_ops.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_bg.h"
#include "ad_bblog_peer.h"
#include "adioi.h"

/* Writes [off, off+len) of buf to the inner file, and remembers it for the drain's order. */
/* A write that went straight to the PFS file: in no log, flushed only by the next sync. */
static void wrote_through(struct ADIOI_BBLOG_state *st)
{
    if (st->ls)
        __atomic_store_n(&st->ls->through_wgen, ADIOI_BBLOG_Wrote(st->ls), __ATOMIC_RELAXED);
}

static int write_inner(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, const void *buf)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    const char *p = buf;
    ADIO_Status status;
    ADIO_Offset off0 = off, len0 = len;
    int err = ADIOI_BBLOG_Inner_ready(fd), locked;

    /* A write small enough to lie in a hole between another process's pieces, which that
     * process's one-process drain may be reading and writing back (data sieving,
     * ad_bblog_drain.c), waits for its lock: the full burst buffer's fallback, mostly. */
    locked = err == MPI_SUCCESS && (uint64_t) len <= ADIOI_BBLOG_SIEVE_GAP &&
        ADIOI_BBLOG_Inner_sieves(st) &&
        ADIOI_BBLOG_Inner_lock(st->inner->fd_sys, F_WRLCK, (uint64_t) off, (uint64_t) len) == 0;
    while (err == MPI_SUCCESS && len > 0) {
        int n = len > (1 << 30) ? (1 << 30) : (int) len;
        ADIO_WriteContig(st->inner, (void *) p, n, MPI_BYTE, ADIO_EXPLICIT_OFFSET, off, &status,
                         &err);
        if (err != MPI_SUCCESS)
            break;
        p += n;
        off += n;
        len -= n;
        st->stats.bytes_through += n;
    }
    if (locked)
        ADIOI_BBLOG_Inner_lock(st->inner->fd_sys, F_UNLCK, (uint64_t) off0, (uint64_t) len0);
    /* A failed write may have changed some of the bytes all the same: the next sync flushes
     * them, but only a whole write counts, or stands before later logged bytes. */
    st->through_unsynced = 1;
    wrote_through(st);
    if (err == MPI_SUCCESS)
        st->stats.writes_through++;
    /* Newer than what other processes logged before the last collective call: the drain must
     * not put that back over these bytes. */
    if (err == MPI_SUCCESS && st->ls && st->ls->multi &&
        ADIOI_BBLOG_Note_through(st->ls, (uint64_t) off0, (uint64_t) len0,
                                 ADIOI_BBLOG_Stamp(st->ls)) != 0)
        err = ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_WRITE_THROUGH", __LINE__, ENOMEM,
                                 "cannot record a write through to", st->pfs_path);
    return err;
}

/* A write straight to the PFS file, in place in the log's order: a PFS record (bblog_format.h),
 * so that a replay after a crash puts no older logged bytes, this process's or another's, back
 * over these. With bblog_sync=bb a sync acknowledges the log, so the bytes are made durable on
 * the PFS before the record can be. Under ls->lock. */
static int note_pfs(ADIO_File fd, ADIO_Offset off, ADIO_Offset len)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err = MPI_SUCCESS;

    if (!st->ls->log || st->ls->log_failed || !st->ls->multi)
        return MPI_SUCCESS;
    if (st->hints.sync_bb)
        ADIO_Flush(st->inner, &err);
    if (err == MPI_SUCCESS) {
        bblog_log_set_gen(st->ls->log, ADIOI_BBLOG_COLL_STAMP(ADIOI_BBLOG_Stamp(st->ls)));
        /* The log takes nothing more: all goes through, said as for the other log failures
         * (a replay after a crash cannot order these bytes against what was logged). */
        if (bblog_log_pfs(st->ls->log, (uint64_t) off, (uint64_t) len) != 0) {
            st->ls->log_failed = 1;
            ADIOI_BBLOG_Warn_full(st, "is full or failing (a log record could not be written)");
        }
    }
    return err;
}

static int write_through(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, const void *buf)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err = write_inner(fd, off, len, buf);

    if (err == MPI_SUCCESS)
        err = note_pfs(fd, off, len);

    /* Other processes' reads must not show what they logged earlier over these bytes. */
    if (err == MPI_SUCCESS && st->ls &&
        ADIOI_BBLOG_Peer_note(st->ls, (uint64_t) off, (uint64_t) len, 0,
                             ADIOI_BBLOG_Stamp(st->ls), 1) != 0)
        err = ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_WRITE_THROUGH", __LINE__, ENOMEM,
                                 "cannot record a write through to", st->pfs_path);
    return err;
}

/* The log could not write out what this call staged (the burst buffer is full or failing), so
 * other processes cannot read it there: the bytes go to the PFS file as well, from the log's
 * memory. The log and the index keep them for the drain, which writes the same bytes again. */
static int through_from_log(ADIO_File fd, uint64_t off, uint64_t len, uint64_t data_off)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    uint64_t chunk = len < ((uint64_t) 4 << 20) ? len : (uint64_t) 4 << 20, done = 0;
    char *b = ADIOI_Malloc(chunk);
    int err = MPI_SUCCESS, rc;

    if (!b)
        return ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_WRITE_THROUGH", __LINE__, ENOMEM,
                                  "cannot write through to", st->pfs_path);
    if (!st->vis_failed) {
        st->ls->log_failed = 1;
        ADIOI_BBLOG_Warn_full(st, "is full or failing (a log write failed)");
    }
    while (err == MPI_SUCCESS && done < len) {
        uint64_t n = len - done < chunk ? len - done : chunk;
        rc = bblog_log_read(st->ls->log, data_off + done, n, b);
        err = rc ? ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_WRITE_THROUGH", __LINE__, rc,
                                      "cannot read back the log", st->logdir) :
            write_inner(fd, (ADIO_Offset) (off + done), (ADIO_Offset) n, b);
        done += n;
    }
    ADIOI_Free(b);
    return err;
}

/* At the end of a write call: what it logged becomes readable by the other processes. */
static int publish(ADIO_File fd)
{
    return ADIOI_BBLOG_Peer_publish(fd, through_from_log);
}

/* Bytes that must stay behind logged ones: this process's, or, with background drains,
 * another process's logged before the last planning point (ad_bblog_bg_plan.c). */
static int logged_overlap(struct ADIOI_BBLOG_state *st, ADIO_Offset off, ADIO_Offset len)
{
    struct bblog_idx_iter it;
    struct bblog_extent e;

    bblog_idx_iter_init(st->ls->idx, &it, (uint64_t) off, (uint64_t) len);
    return bblog_idx_iter_next(&it, &e) ||
        ADIOI_BBLOG_Bg_fenced(st->ls, (uint64_t) off, (uint64_t) len);
}

static int create_log(ADIO_File fd, struct ADIOI_BBLOG_state *st)
{
    struct bblog_log_params p;
    int world_rank, world_size;

    memset(&p, 0, sizeof(p));
    p.dir = st->logdir;
    p.name = st->slots ? st->pair_name : st->log_name;
    p.slots = st->slots;
    p.slot = st->slot;
    p.pfs_path = st->pfs_path;
    p.job_id = st->job;
    p.set_id = st->set_id;
    /* The process's place in the job, not in the file's communicator: handles opened on
     * MPI_COMM_SELF share this log too, and replay tells processes apart by it. */
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    p.rank = (uint32_t) world_rank;
    p.nprocs = (uint32_t) world_size;
    /* Other processes read this log while the file is open (ad_bblog_peer_list.c): each write call
     * ends by writing out what it staged, which O_DIRECT would turn into a wait for the
     * device; through the page cache it is a copy. */
    if (st->ls->vis)
        p.flags |= BBLOG_LOG_NO_DIRECT;
    return bblog_log_create(&p, &st->ls->log);
}

/* A failed log takes nothing more, not even bytes that overwrite logged ones: they go to the
 * PFS file, and the index forgets the older logged bytes they replace, so that the drain
 * cannot put those back over them. Bytes that a background drain fenced for another process
 * (ad_bblog_bg.c) cannot be handled so: that write fails, naming the log. */
static int replace_through(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, const void *buf)
{
    static const char myname[] = "ADIOI_BBLOG_LOG_EXTENT";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int rc;

    if (ADIOI_BBLOG_Bg_fenced(st->ls, (uint64_t) off, (uint64_t) len))
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, EIO, "cannot log a write that overwrites "
                                  "logged data; log", bblog_log_data_path(st->ls->log));
    rc = bblog_idx_remove(st->ls->idx, (uint64_t) off, (uint64_t) len);
    if (rc != 0)
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot index a write through to",
                                  st->pfs_path);
    return write_through(fd, off, len, buf);
}

/* Whether len more bytes may go into the log: within bblog_max_size, or the capacity of
 * ad_bblog_bg_cap.c, waiting for the background drain to make room where it can. */
static int fits(struct ADIOI_BBLOG_state *st, uint64_t len)
{
    struct ADIOI_BBLOG_logstate *ls = st->ls;

    if (ls->cap && !ls->cap_failed) {
        if (ls->log_end - ls->trim + len <= ls->cap)
            return 1;
        return ls->bg && ls->rev ? ADIOI_BBLOG_Cap_wait(st, len) : 0;
    }
    return st->hints.max_size <= 0 || ls->log_bytes + (ADIO_Offset) len <= st->hints.max_size;
}

static int log_extent(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, const void *buf)
{
    static const char myname[] = "ADIOI_BBLOG_LOG_EXTENT";
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    uint64_t data_off, stamp;
    double t0;
    int rc;

    if (len <= 0)
        return MPI_SUCCESS;
    st->stats.write_calls++;
    if (st->hints.through_threshold > 0 && len >= st->hints.through_threshold &&
        ADIOI_BBLOG_NO_BG(&st->hints) && !logged_overlap(st, off, len))
        return write_through(fd, off, len, buf);
    /* Without a list of logged writes, other processes read this process's bytes in the PFS
     * file: they go there (and stay in the log too where they overwrite logged bytes). */
    if (st->vis_failed && !logged_overlap(st, off, len))
        return write_through(fd, off, len, buf);
    if (st->ls->log_failed || !fits(st, (uint64_t) len)) {
        if (!logged_overlap(st, off, len)) {
            ADIOI_BBLOG_Warn_full(st, st->ls->log_failed ? "is full or failing (a log write "
                                  "failed)" : "is full (bblog_max_size reached)");
            return write_through(fd, off, len, buf);
        }
        if (st->ls->log_failed)
            return replace_through(fd, off, len, buf);
    }
    if (!st->ls->log && (rc = create_log(fd, st)) != 0) {
        /* No room (or no permission any more) for the log: nothing is logged yet, so every
         * write of this file can safely go straight to the PFS. */
        st->ls->log_failed = 1;
        ADIOI_BBLOG_Warn_full(st, "cannot hold a new log");
        return write_through(fd, off, len, buf);
    }
    t0 = ADIOI_BBLOG_Now();
    stamp = ADIOI_BBLOG_Stamp(st->ls);
    bblog_log_set_gen(st->ls->log, ADIOI_BBLOG_COLL_STAMP(stamp));
    rc = bblog_log_append(st->ls->log, (uint64_t) off, (uint64_t) len, buf, &data_off);
    st->stats.t_append += ADIOI_BBLOG_Now() - t0;
    if (rc != 0) {
        /* The log refused the bytes (device full, I/O error): they are not stored there. */
        char why[128];
        st->ls->log_failed = 1;
        snprintf(why, sizeof(why), "refused a write (%s)", bblog_strerror(rc));
        ADIOI_BBLOG_Warn_full(st, why);
        if (!logged_overlap(st, off, len))
            return write_through(fd, off, len, buf);
        return replace_through(fd, off, len, buf);
    }
    rc = ADIOI_BBLOG_Logstate_record(st->ls, (uint64_t) off, (uint64_t) len, data_off, stamp);
    if (rc != 0)
        return ADIOI_BBLOG_Err_rc(myname, __LINE__, rc, "cannot index a logged write of",
                                  st->pfs_path);
    st->stats.bytes_logged += len;
    if (st->vis_failed && (rc = through_from_log(fd, (uint64_t) off, (uint64_t) len, data_off)))
        return rc;
    return MPI_SUCCESS;
}

/* With a background drain, the index and the log are shared with its thread. */
int ADIOI_BBLOG_Log_extent(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, const void *buf)
{
    struct ADIOI_BBLOG_logstate *ls = ADIOI_BBLOG_STATE(fd)->ls;
    uint64_t before;
    int err;

    if (!ls->bg && ls->cap)
        ADIOI_BBLOG_Cap_start_solo(fd);
    if (!ls->bg)
        return log_extent(fd, off, len, buf);
    ADIOI_BBLOG_Lock(ls);
    if (ls->trim_ready > ls->trim)
        ADIOI_BBLOG_Trim_apply(ADIOI_BBLOG_STATE(fd));
    before = bblog_idx_bytes(ls->idx);
    err = log_extent(fd, off, len, buf);
    ADIOI_BBLOG_Bg_note_write(ls, before);
    ADIOI_BBLOG_Unlock(ls);
    return err;
}

/* Offset in bytes of a contiguous access, as ROMIO's MPI layer computes it. */
static ADIO_Offset contig_offset(ADIO_File fd, int file_ptr_type, ADIO_Offset offset)
{
    return file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind : offset;
}

void ADIOI_BBLOG_WriteContig(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Status * status, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    MPI_Count size;
    ADIO_Offset off = contig_offset(fd, file_ptr_type, offset), len;

    /* The last sync's lone drains are over before this write lands (ad_bblog_flush.c). */
    if ((*error_code = ADIOI_BBLOG_SETTLE(st)) != MPI_SUCCESS)
        return;
    MPI_Type_size_x(datatype, &size);
    len = (ADIO_Offset) size * count;
    if (st->passthrough || fd->atomicity) {
        *error_code = ADIOI_BBLOG_Inner_ready(fd);
        if (*error_code == MPI_SUCCESS)
            ADIO_WriteContig(st->inner, (void *) buf, count, datatype, ADIO_EXPLICIT_OFFSET, off,
                             status, error_code);
        if (fd->atomicity) {
            if (*error_code == MPI_SUCCESS)
                st->stats.bytes_through += len;
            wrote_through(st);  /* failed or not, some bytes may have changed */
        }
    } else {
        if (!st->vis_hold)
            ADIOI_BBLOG_Tick(st);
        *error_code = ADIOI_BBLOG_Log_extent(fd, off, len, buf);
        if (*error_code == MPI_SUCCESS)
            *error_code = publish(fd);
        ADIOI_BBLOG_SET_BYTES(status, len);
    }
    if (*error_code == MPI_SUCCESS && file_ptr_type == ADIO_INDIVIDUAL) {
        fd->fp_ind = off + len;
        fd->fp_sys_posn = off + len;
    }
}

void ADIOI_BBLOG_WriteStrided(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Status * status, int *error_code)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    if ((*error_code = ADIOI_BBLOG_SETTLE(st)) != MPI_SUCCESS)
        return;
    if (st->passthrough || fd->atomicity) {
        ADIOI_BBLOG_INNER_STRIDED(fd, st,
                                  ADIO_WriteStrided(st->inner, buf, count, datatype,
                                                    file_ptr_type, offset, status, error_code));
        if (fd->atomicity)
            wrote_through(st);
        return;
    }
    /* Contiguous in memory and in the file: one extent (ROMIO's naive code would take it
     * byte by byte). */
    if (ADIOI_BBLOG_Contig_access(fd, datatype, file_ptr_type, offset, &offset)) {
        ADIOI_BBLOG_WriteContig(fd, buf, count, datatype, file_ptr_type, offset, status,
                                error_code);
        return;
    }
    /* ROMIO's naive strided writer walks the memory type and the file view together and calls
     * our WriteContig once per contiguous piece: exactly the flattened extents to log. They
     * are published to other processes once, at the end. */
    ADIOI_BBLOG_Tick(st);
    st->vis_hold++;
    ADIOI_GEN_WriteStrided_naive(fd, buf, count, datatype, file_ptr_type, offset, status,
                                 error_code);
    st->vis_hold--;
    if (*error_code == MPI_SUCCESS)
        *error_code = publish(fd);
}

/* A collective write; may_wait 0 for a nonblocking one (MPI_File_iwrite_all), which must not
 * wait for the other processes: a process may start it and then message another one that
 * reads before it enters the call (t_peerread case 7). */
static void write_coll(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                       MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                       ADIO_Status * status, int *error_code, int may_wait)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);

    if ((*error_code = ADIOI_BBLOG_SETTLE(st)) != MPI_SUCCESS)
        return;
    if (st->passthrough || fd->atomicity) {
        ADIOI_BBLOG_INNER_STRIDED(fd, st,
                                  ADIO_WriteStridedColl(st->inner, buf, count, datatype,
                                                        file_ptr_type, offset, status,
                                                        error_code));
        if (fd->atomicity)
            wrote_through(st);
        return;
    }
    if (st->hints.high_water == 0 && st->hints.max_size > 0 && may_wait) {
        /* No background drain makes room (bblog_high_water=0): a collective call is the one
         * place where a full burst buffer can be drained without writing anything through,
         * all processes are here. */
        MPI_Count size;
        long long need, any;
        MPI_Type_size_x(datatype, &size);
        need = st->ls->log_bytes > 0 && st->ls->log_bytes + (ADIO_Offset) size * count >
            st->hints.max_size;
        if (ADIOI_BBLOG_Allreduce(&need, &any, 1, MPI_LONG_LONG, MPI_MAX, fd->comm) !=
            MPI_SUCCESS) {
            *error_code = ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_WRITESTRIDEDCOLL", __LINE__,
                                             ADIOI_BBLOG_ECOLL, "cannot write", st->pfs_path);
            return;
        }
        if (any && (*error_code = ADIOI_BBLOG_Drain(fd, 0)) != MPI_SUCCESS)
            return;
    } else if (may_wait && st->cap_watch && st->ls->colls >= st->ls->cap_next) {
        /* A small budget: make room, or start the drain that makes it (ad_bblog_bg_cap.c). */
        MPI_Count size;
        MPI_Type_size_x(datatype, &size);
        if ((*error_code = ADIOI_BBLOG_Cap_coll(fd, (uint64_t) size * count)) != MPI_SUCCESS)
            return;
    }
    ADIOI_BBLOG_Coll_begin(fd);
    ADIOI_BBLOG_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                             error_code);
    ADIOI_BBLOG_Coll_end(fd, 1, may_wait);
}

void ADIOI_BBLOG_WriteStridedColl(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Status * status, int *error_code)
{
    write_coll(fd, buf, count, datatype, file_ptr_type, offset, status, error_code, 1);
}

void ADIOI_BBLOG_IwriteContig(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                              MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                              ADIO_Request * request, int *error_code)
{
    /* Complete once logged: the log is the storage the request is about. */
    ADIOI_FAKE_IwriteContig(fd, buf, count, datatype, file_ptr_type, offset, request,
                            error_code);
}

void ADIOI_BBLOG_IwriteStrided(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                               MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                               ADIO_Request * request, int *error_code)
{
    ADIOI_FAKE_IwriteStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                             error_code);
}

void ADIOI_BBLOG_IwriteStridedColl(ADIO_File fd, const void *buf, ADIOI_BBLOG_count_t count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   ADIO_Request * request, int *error_code)
{
    ADIO_Status status;
    MPI_Count size;

    write_coll(fd, buf, count, datatype, file_ptr_type, offset, &status, error_code, 0);
    MPI_Type_size_x(datatype, &size);
    MPIO_Completed_request_create(&fd, (MPI_Offset) size * count, error_code, request);
}
