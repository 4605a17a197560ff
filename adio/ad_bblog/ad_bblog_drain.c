/*
 * The collective drain (DESIGN.md section 6; seed paper 000, sections IV.D-E).
 *
 * 1. Each process takes its index in file order: already sorted, non-overlapping, coalesced,
 *    later writes having replaced earlier ones.
 * 2. The drain is cut into rounds that all processes agree on, one MPI_Allreduce (MIN) per
 *    round over bblog_plan_round_end: every round covers one contiguous range of the file
 *    across all processes, and no process holds more than bblog_flush_buffer_size bytes in it.
 *    Cutting by file range, not by each process's own buffer, keeps the aggregated access of a
 *    round dense, so two-phase I/O writes whole stripes instead of reading-modifying-writing.
 *    An independent drain (large extents) has one round, the whole file: each process writes
 *    its pieces alone, a buffer at a time, with no collective call between the buffers. A
 *    drain that every process can see fits one round (from what all said at its start) has
 *    that round without the MPI_Allreduce.
 * 3. Per round, when writes of different processes may need ordering, the processes exchange
 *    their pieces of the round and each leaves out what another process wrote later
 *    (ad_bblog_order.c). Each process then reads its pieces from the data log into the flush
 *    buffer (pieces contiguous in the log in one read) and describes their file side with an
 *    hindexed type of non-decreasing offsets; all processes then call the inner driver's
 *    collective write.
 *    A process with nothing in a round still takes part, with an empty access.
 * 4. Only when every process succeeded: inner flush (for sync), then the logs are marked
 *    drained and the indexes emptied. On any failure nothing is marked: the data stays in the
 *    logs, and the error is returned on all processes.
 * drain() runs these as stages: drain_plan (1, and what all processes have), drain_choose (the
 * path, the same everywhere: independent; the node exchange, alone on one node (solo) or into
 * ROMIO's two-phase write across nodes; two-phase with or without the Order exchange),
 * drain_rounds (2, 3), drain_commit and drain_finish (4).
 *
 * A drain alone (Drain_alone: a sync that the processes with nothing logged left at once,
 * ad_bblog_flush.c) runs the same stages on this process only: no collective call, the
 * independent path, the pieces that others wrote later (their notes of the sync) left out as
 * the Order exchange would, and only this process's log marked drained.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "adioi.h"
#include "bblog_format.h"
#include "bblog_io.h"
#include "bblog_plan.h"

struct snap {
    struct bblog_seg *segs;
    uint64_t *stamps;
    size_t n, seg_cap, stamp_cap;
    uint64_t lo, hi;
};

static int snap_run(void *arg, uint64_t off, uint64_t len, uint64_t log_off, uint64_t stamp)
{
    struct snap *s = arg;

    if (bblog_grow((void **) &s->segs, &s->seg_cap, s->n + 1, sizeof(*s->segs)) ||
        bblog_grow((void **) &s->stamps, &s->stamp_cap, s->n + 1, sizeof(*s->stamps)))
        return ENOMEM;
    s->segs[s->n].off = off;
    s->segs[s->n].len = len;
    s->segs[s->n].src = log_off;
    s->stamps[s->n++] = stamp;
    s->lo = stamp < s->lo ? stamp : s->lo;
    s->hi = stamp > s->hi ? stamp : s->hi;
    return 0;
}

/* Snapshot of the index as segments (off, len, src = data-log offset), each within one run of
 * one ordering stamp (stamps[i]): an extent coalesced across stamps is cut at the run
 * boundaries. *lo and *hi: the least and greatest stamp, with the bytes written through since
 * the last drain. *segs and *stamps are the caller's to free, after a failure too. */
static int snapshot(struct ADIOI_BBLOG_state *st, struct bblog_seg **segs, uint64_t **stamps,
                    size_t *n, uint64_t *lo, uint64_t *hi)
{
    struct ADIOI_BBLOG_logstate *ls = st->ls;
    struct bblog_idx_iter it;
    struct bblog_extent e;
    struct snap s = { 0 };
    size_t i;
    int rc = 0;

    s.lo = INT64_MAX;           /* stamps go to an MPI_LONG_LONG reduction */
    bblog_idx_iter_init(ls->idx, &it, 0, UINT64_MAX);
    while (rc == 0 && bblog_idx_iter_next(&it, &e))
        rc = ADIOI_BBLOG_Stamp_runs(ls, e.off, e.len, e.log_off, snap_run, &s);
    for (i = 0; i < ls->nthrough; i++) {
        s.lo = ls->through[i].stamp < s.lo ? ls->through[i].stamp : s.lo;
        s.hi = ls->through[i].stamp > s.hi ? ls->through[i].stamp : s.hi;
    }
    *segs = s.segs;
    *stamps = s.stamps;
    *n = rc == 0 ? s.n : 0;
    *lo = s.lo;
    *hi = s.hi;
    return rc;
}

int ADIOI_BBLOG_Drain_pieces(struct ADIOI_BBLOG_state *st, uint64_t **triples, size_t *n)
{
    struct bblog_seg *segs = NULL;
    uint64_t *stamps = NULL, lo, hi, *t = NULL;
    size_t i;
    int rc = snapshot(st, &segs, &stamps, n, &lo, &hi);

    if (rc == 0 && *n > 0 && !(t = malloc(3 * *n * sizeof(*t))))
        rc = ENOMEM;
    for (i = 0; rc == 0 && i < *n; i++) {
        t[3 * i] = segs[i].off;
        t[3 * i + 1] = segs[i].len;
        t[3 * i + 2] = stamps[i];
    }
    free(segs);
    free(stamps);
    *triples = t;
    if (rc != 0)
        *n = 0;
    return rc;
}

/* A piece this process wrote in a drain, and the CRC-32C of its bytes. */
static const char myname_drain[] = "ADIOI_BBLOG_DRAIN";

struct written {
    uint64_t off, len;
    uint32_t crc;
};

struct round {
    char *buf;
    int *lens;
    MPI_Aint *disps;
    size_t cap;                 /* entries in lens/disps */
    size_t k;                   /* pieces in this round */
    uint64_t bytes;
    uint64_t added;             /* bytes added over the whole drain (spills empty `bytes`) */
    uint64_t read_src, read_len, read_pos;      /* pending coalesced log read */
    int collect;                /* node exchange: list the pieces in quad, read nothing */
    uint64_t stamp;             /* with collect: the stamp of the pieces being added */
    uint64_t *quad;             /* (off, len, log offset, stamp) quadruples */
    size_t nquad, quad_cap;
    /* Independent drain: the round is the whole file, and the buffer (budget bytes) is
     * written out by the process alone whenever it is full (spill). */
    ADIO_File fd;
    uint64_t budget;
    int werr;
    /* ... and with its own log mapped (map_own_log), the pieces are (off, len, log offset)
     * triples in mp, written from the mapping: nothing is read into buf. */
    const char *map;
    size_t map_len;
    uint64_t *mp;
    size_t nmp, mp_cap;
    /* bblog_verify: what this process handed to the inner file, to read back at the end. */
    int verify;
    struct written *ver;
    size_t nver, ver_cap;
    /* Independent drain of a one-process handle with data sieving (sieve_setup): windows of
     * up to swin bytes read into sbuf, the pieces laid over them, written back whole. */
    int sieve;
    size_t swin;
    char *sbuf;
    struct sieved *sv;
    size_t nsv, sv_cap;
};

struct sieved {
    uint64_t off, len;
    const char *p;
};

static int flush_read(struct ADIOI_BBLOG_state *st, struct round *r)
{
    int rc = 0;

    if (r->read_len)
        rc = bblog_log_read(st->ls->log, r->read_src, r->read_len, r->buf + r->read_pos);
    r->read_len = 0;
    return rc;
}

/* Appends a file piece to the round's description. The round's buffer holds the pieces in
 * order, so a piece that continues the previous one in the file extends it: stamps cut the
 * snapshot at every collective call (and every tick of the write clock), and without this
 * an IOR segmented run of 4 KiB calls was written back 4 KiB at a time. */
static int push_piece(struct round *r, uint64_t off, uint64_t len)
{
    if (r->k > 0 && (uint64_t) r->disps[r->k - 1] + (uint64_t) r->lens[r->k - 1] == off &&
        (uint64_t) r->lens[r->k - 1] + len <= INT_MAX) {
        r->lens[r->k - 1] += (int) len;
        return 0;
    }
    if (r->k == r->cap) {
        size_t c1 = r->cap, c2 = r->cap;    /* two arrays, one capacity */

        if (bblog_grow((void **) &r->lens, &c1, r->k + 1, sizeof(*r->lens)) != 0 ||
            bblog_grow((void **) &r->disps, &c2, r->k + 1, sizeof(*r->disps)) != 0)
            return ENOMEM;
        r->cap = c1;
    }
    r->lens[r->k] = (int) len;
    r->disps[r->k] = (MPI_Aint) off;
    r->k++;
    return 0;
}

/* bblog_verify: notes the pieces the buffer holds, which the caller is about to write. */
static int note_written(struct round *r)
{
    uint64_t pos = 0;

    if (!r->verify)
        return 0;
    if (bblog_grow((void **) &r->ver, &r->ver_cap, r->nver + r->k, sizeof(*r->ver)))
        return ENOMEM;
    for (size_t i = 0; i < r->k; i++) {
        struct written *w = &r->ver[r->nver++];
        w->off = (uint64_t) r->disps[i];
        w->len = (uint64_t) r->lens[i];
        w->crc = bblog_crc32c(0, r->buf + pos, (size_t) w->len);
        pos += w->len;
    }
    return 0;
}

/* Reads back every piece this process wrote and compares its CRC; 0, or 1 with *bad the first
 * piece that differs (or could not be read: *crc_got 0 and *err its error). */
static int verify_written(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                          uint64_t budget, struct written *bad, uint32_t *crc_got, int *err)
{
    double t0 = ADIOI_BBLOG_Now();
    int mismatch = 0;

    *err = MPI_SUCCESS;
    for (size_t i = 0; i < r->nver && !mismatch; i++) {
        const struct written *w = &r->ver[i];
        uint32_t crc = 0;
        uint64_t done = 0;
        while (done < w->len && *err == MPI_SUCCESS) {
            ADIO_Offset n = (ADIO_Offset) (w->len - done < budget ? w->len - done : budget), got;
            *err = ADIOI_BBLOG_Read_inner(fd, (ADIO_Offset) (w->off + done), n, r->buf, &got);
            if (*err == MPI_SUCCESS && got < n)
                memset(r->buf + got, 0, (size_t) (n - got));
            crc = bblog_crc32c(crc, r->buf, (size_t) n);
            done += (uint64_t) n;
        }
        st->st.bytes_verified += done;
        if (*err != MPI_SUCCESS || crc != w->crc) {
            *bad = *w;
            *crc_got = crc;
            mismatch = 1;
        }
    }
    st->st.t_verify += ADIOI_BBLOG_Now() - t0;
    return mismatch;
}

/* Each piece of the buffer with its own write to the (ready) inner file. */
static void put_pieces(struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    ADIO_Status status;
    uint64_t pos = 0;
    size_t i;

    for (i = 0; i < r->k && *err == MPI_SUCCESS; i++) {
        ADIO_WriteContig(st->inner, r->buf + pos, r->lens[i], MPI_BYTE, ADIO_EXPLICIT_OFFSET,
                         (ADIO_Offset) r->disps[i], &status, err);
        pos += (uint64_t) r->lens[i];
    }
    st->st.indep_writes += r->k;
}

/* Independent drain: each piece of the buffer with its own write to the inner file. */
static void write_pieces(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    if (note_written(r) != 0) {
        *err = ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_NO_MEM, "bblog: out of memory "
                               "verifying the drain of %s", st->pfs_path);
        return;
    }
    *err = r->k ? ADIOI_BBLOG_Inner_ready(fd) : MPI_SUCCESS;
    put_pieces(st, r, err);
}

static void account(struct ADIOI_BBLOG_state *st, const struct round *r)
{
    st->st.extents_drained += r->k;
    st->st.bytes_drained += r->bytes;
}

static int add_piece_fit(struct ADIOI_BBLOG_state *st, struct round *r, uint64_t off,
                         uint64_t len, uint64_t src)
{
    int rc;

    if (len == 0)
        return 0;
    if (r->collect) {
        if (bblog_grow((void **) &r->quad, &r->quad_cap, r->nquad + 1,
                             4 * sizeof(*r->quad)) != 0)
            return ENOMEM;
        r->quad[4 * r->nquad] = off;
        r->quad[4 * r->nquad + 1] = len;
        r->quad[4 * r->nquad + 2] = src;
        r->quad[4 * r->nquad + 3] = r->stamp;
        r->nquad++;
        if (src != UINT64_MAX)
            r->bytes += len, r->added += len;
        return 0;
    }
    if (r->map) {
        if (bblog_grow((void **) &r->mp, &r->mp_cap, r->nmp + 1, 3 * sizeof(*r->mp)))
            return ENOMEM;
        r->mp[3 * r->nmp] = off;
        r->mp[3 * r->nmp + 1] = len;
        r->mp[3 * r->nmp + 2] = src;
        r->nmp++;
        r->bytes += len;
        r->added += len;
        return 0;
    }
    rc = push_piece(r, off, len);
    if (rc != 0)
        return rc;
    if (r->read_len && r->read_src + r->read_len == src) {
        r->read_len += len;
    } else {
        rc = flush_read(st, r);
        r->read_src = src;
        r->read_len = len;
        r->read_pos = r->bytes;
    }
    r->bytes += len;
    r->added += len;
    return rc;
}

/*
 * Independent drain with the log in memory: the pieces go to the inner file with pwritev
 * straight from the log's mapping, one call for each run of pieces that follow each other in
 * the file. That is one copy of every byte less than reading the log into the buffer and
 * writing it from there (IOR, 1 rank, 16 MiB: the drain's read-back took 0.014 s of its
 * 0.060 s, at /dev/shm's 1 GB/s on this project's VM).
 */
static void write_mapped(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    struct iovec iov[IOV_MAX];
    size_t i = 0, runs = 0;

    *err = ADIOI_BBLOG_Inner_ready(fd);
    while (i < r->nmp && *err == MPI_SUCCESS) {
        uint64_t at = r->mp[3 * i], end = at;
        int m = 0, rc = 0;
        for (; i < r->nmp && m < IOV_MAX && r->mp[3 * i] == end; i++, m++) {
            uint64_t len = r->mp[3 * i + 1], src = r->mp[3 * i + 2];
            if (src > r->map_len || len > r->map_len - src) {
                rc = EIO;       /* the index points past the log: never written whole */
                break;
            }
            iov[m].iov_base = (void *) (r->map + src);
            iov[m].iov_len = (size_t) len;
            end += len;
        }
        if (rc == 0)
            rc = ADIOI_BBLOG_Io_vec(st->inner->fd_sys, iov, m, at, 1);
        if (rc != 0)
            *err = ADIOI_BBLOG_Err_rc(myname_drain, __LINE__, rc, "cannot write",
                                      st->pfs_path);
        runs++;
    }
    ADIOI_BBLOG_DIRTY(st->inner);
    st->inner->fp_sys_posn = -1;        /* as after any write of ROMIO's own */
    st->st.indep_writes += runs;
    r->k = runs;
}

/* Independent drain: maps this process's own log when it lives in memory and the inner
 * driver writes with ROMIO's generic pwrite (as the node exchange does: ad_bblog_node.c),
 * not when verifying (which takes its CRCs from the buffer). */
static void map_own_log(struct ADIOI_BBLOG_state *st, struct round *r)
{
    int fd;

    /* Not a slot of a node's log pair: a mapping of the pair's sparse terabytes would be
     * populated with the other slots' holes. */
    if (r->verify || !st->ls->log || st->hints.debug_no_map || bblog_log_in_pair(st->ls->log) ||
        st->inner->fns->ADIOI_xxx_WriteContig != ADIOI_GEN_WriteContig)
        return;
    fd = open(bblog_log_data_path(st->ls->log), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    /* The staged bytes go to the file first, where the mapping sees them. */
    if (bblog_io_in_memory(fd) && bblog_log_flush(st->ls->log) == 0)
        r->map = ADIOI_BBLOG_Map_in_memory(fd, &r->map_len);
    close(fd);
}

/* On one node a round's bytes are written in chunks of at most this many bytes. Measured on
 * the GlusterFS stand-in (IOR strided 64 KiB, 4 ranks x 64 MiB, 6 runs each): the
 * drain took 1.29 s (median) in chunks of 4 MiB, 1.33 s in 8 MiB, 1.45 s in 16 MiB; plain
 * ROMIO's own contiguous writes there are of 4 MiB too. */
#define SOLO_CHUNK ((uint64_t) 4 << 20)

/*
 * Data sieving for the drain of a one-process handle of a file that the process also has open
 * on several processes: PnetCDF's independent data mode, whose MPI_COMM_SELF handle drains
 * alone, at its sync or close, the small pieces of every independent put (BTIO at 4 ranks:
 * 10240 pieces of 1280 bytes a process, interleaved with the other processes'). One write per
 * piece is one request to the PFS each; plain ROMIO writes those puts with data sieving
 * (read a window, lay the pieces over it, write it back), under a byte-range lock. So does
 * this: under an fcntl write lock over each window of at most swin bytes, the pieces no more
 * than ADIOI_BBLOG_SIEVE_GAP (64 KiB) apart go out as one read and one write of their span,
 * and a piece alone is written alone, under the lock too (another process's window may span
 * it). The lock keeps out the other processes' one-process drains, which take it for every
 * write, and their writes through of up to that size (ad_bblog_write.c); their collective
 * drains cannot run meanwhile (they need this process), and a larger write through cannot fit
 * in a hole without overlapping these pieces. Bytes past the end of the file read as zeros,
 * as the file system shows them.
 */

/* Whether this drain sieves: a one-process handle of a file that sieves (Inner_sieves); no
 * background drain (its thread writes without the lock); not verifying (it checks what each
 * piece's write put there). */
static void sieve_setup(struct ADIOI_BBLOG_state *st, struct round *r)
{
    uint64_t w = st->inner->hints->ind_wr_buffer_size > 0 ?
        (uint64_t) st->inner->hints->ind_wr_buffer_size : 0;

    /* At least the node exchange's chunk: the processes' drains of one region take the
     * windows' locks one after the other, and fewer, larger windows keep that pipeline short
     * (BTIO through PnetCDF in independent mode, 4 ranks, the GlusterFS stand-in: close
     * 0.80 s with ROMIO's 512 KiB, 0.75 with 2 MiB, 0.61 with 4 MiB; plain ROMIO's whole
     * run 0.74-0.78 s). */
    if (w > r->budget)
        w = r->budget;          /* a window of the drain's buffer at most */
    r->swin = (size_t) (w > SOLO_CHUNK ? w : SOLO_CHUNK);
    r->sieve = st->nprocs == 1 && !st->ls->bg && !r->verify && ADIOI_BBLOG_Inner_sieves(st);
}

static int sieve_add(struct round *r, uint64_t off, uint64_t len, const char *p)
{
    if (bblog_grow((void **) &r->sv, &r->sv_cap, r->nsv + 1, sizeof(*r->sv)) != 0)
        return ENOMEM;
    r->sv[r->nsv].off = off;
    r->sv[r->nsv].len = len;
    r->sv[r->nsv].p = p;
    r->nsv++;
    return 0;
}

/* Writes v[0..n) under one lock over their range: the pieces no more than the sieve gap apart
 * as one read and one write of their span (if can_sieve), a piece alone as itself. *runs:
 * adjacent pieces. */
static int sieve_window(struct ADIOI_BBLOG_state *st, struct round *r, int fd, int can_sieve,
                        const struct sieved *v, size_t n, size_t *runs)
{
    size_t i, j, k, got;
    int rc = 0;

    for (i = 0; i < n && rc == 0; i = j) {
        uint64_t a = v[i].off, b = a + v[i].len, data = v[i].len;
        for (j = i + 1; j < n && can_sieve && v[j].off - b <= ADIOI_BBLOG_SIEVE_GAP; j++) {
            *runs += v[j].off != b;
            b = v[j].off + v[j].len;
            data += v[j].len;
        }
        ++*runs;
        st->st.indep_writes++;
        if (j - i == 1) {
            rc = bblog_io_full(fd, (void *) v[i].p, (size_t) v[i].len, a, 1, NULL);
            continue;
        }
        if (data < b - a)       /* holes: what the file holds there goes back unchanged */
            rc = bblog_io_full(fd, r->sbuf, (size_t) (b - a), a, 0, &got);
        else
            got = b - a;
        if (rc == 0 && got < b - a)
            memset(r->sbuf + got, 0, (size_t) (b - a - got));
        for (k = i; rc == 0 && k < j; k++)
            memcpy(r->sbuf + (v[k].off - a), v[k].p, (size_t) v[k].len);
        if (rc == 0)
            rc = bblog_io_full(fd, r->sbuf, (size_t) (b - a), a, 1, NULL);
        st->st.bytes_sieved += (b - a) - data;
    }
    return rc;
}

/* Writes the batch (the mapped triples, or the buffer's pieces) a window of at most swin
 * bytes at a time, each under its own lock, sieved where its holes are small: the processes'
 * drains of one region then follow each other window by window instead of one waiting for
 * another's whole batch (BTIO, 4 ranks: drains of 0.36 / 0.59 / 0.93 / 1.13 s with one lock
 * per batch). Pieces far apart are written under the lock too: another process's window may
 * span them, and a write between its read and its write back would be lost. Returns 0 when
 * the file system takes no lock: the caller writes the pieces one by one; otherwise 1, *err
 * the result and r->k the runs of adjacent pieces. */
static int sieve_write(struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    const struct sieved *v;
    uint64_t pos = 0;
    size_t i, w, n, runs = 0;
    int fd, rc = 0, can_sieve;

    r->nsv = 0;
    for (i = 0; r->sieve && rc == 0 && r->map && i < r->nmp; i++) {
        if (r->mp[3 * i + 2] > r->map_len || r->mp[3 * i + 1] > r->map_len - r->mp[3 * i + 2])
            return 0;       /* past the mapped log: the usual path reports it */
        rc = sieve_add(r, r->mp[3 * i], r->mp[3 * i + 1], r->map + r->mp[3 * i + 2]);
    }
    for (i = 0; r->sieve && rc == 0 && !r->map && i < r->k; i++) {
        rc = sieve_add(r, (uint64_t) r->disps[i], (uint64_t) r->lens[i], r->buf + pos);
        pos += (uint64_t) r->lens[i];
    }
    n = r->nsv;
    v = r->sv;
    if (rc != 0 || n == 0)
        return 0;
    *err = ADIOI_BBLOG_Inner_ready(r->fd);
    if (*err != MPI_SUCCESS)
        return 1;
    fd = st->inner->fd_sys;
    /* Without a window buffer, or a file open for writing only, the pieces are written one by
     * one, still under the locks, which the other processes' windows need. */
    if (!r->sbuf)
        r->sbuf = ADIOI_Malloc(r->swin);
    can_sieve = r->sbuf && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR;
    for (i = 0; i < n && rc == 0; i = w) {
        uint64_t lo = v[i].off, hi;
        for (w = i + 1; w < n && v[w].off + v[w].len - lo <= r->swin; w++)
            ;
        hi = v[w - 1].off + v[w - 1].len;
        if (ADIOI_BBLOG_Inner_lock(fd, F_WRLCK, lo, hi - lo) != 0) {
            if (i == 0) {
                r->sieve = 0;   /* no byte-range locks here: for the rest of the drain too */
                return 0;
            }
            rc = ENOLCK;
            break;
        }
        rc = sieve_window(st, r, fd, can_sieve, v + i, w - i, &runs);
        ADIOI_BBLOG_Inner_lock(fd, F_UNLCK, lo, hi - lo);
    }
    ADIOI_BBLOG_DIRTY(st->inner);
    st->inner->fp_sys_posn = -1;        /* as after any write of ROMIO's own */
    if (rc != 0)
        *err = ADIOI_BBLOG_Err_rc(myname_drain, __LINE__, rc, "cannot write", st->pfs_path);
    r->k = runs;
    return 1;
}

/* Independent drain: writes what the buffer holds and empties it. */
static int spill(struct ADIOI_BBLOG_state *st, struct round *r)
{
    int rc, werr = MPI_SUCCESS;

    if (r->map) {
        if (r->nmp > 0 && r->werr == MPI_SUCCESS) {
            if (!sieve_write(st, r, &werr))
                write_mapped(r->fd, st, r, &werr);
            account(st, r);
            if (werr != MPI_SUCCESS)
                r->werr = werr;
        }
        r->nmp = 0;
        r->k = 0;
        r->bytes = 0;
        return 0;
    }
    rc = flush_read(st, r);

    /* After a failed write nothing more is written; the drain fails on every process. */
    if (rc == 0 && r->k > 0 && r->werr == MPI_SUCCESS) {
        if (!sieve_write(st, r, &werr))
            write_pieces(r->fd, st, r, &werr);
        account(st, r);
        if (werr != MPI_SUCCESS && r->werr == MPI_SUCCESS)
            r->werr = werr;
    }
    r->k = 0;
    r->bytes = 0;
    return rc;
}

static int add_piece(struct ADIOI_BBLOG_state *st, struct round *r, uint64_t off, uint64_t len,
                     uint64_t src)
{
    int rc;

    /* Independent drain: a piece that does not fit in what is left of the buffer goes out in
     * buffer-sized parts, each written when the buffer is full. */
    while (r->fd != ADIO_FILE_NULL && r->bytes + len > r->budget) {
        uint64_t part = r->budget - r->bytes;
        if (part > 0 && (rc = add_piece_fit(st, r, off, part, src)) != 0)
            return rc;
        if ((rc = spill(st, r)) != 0)
            return rc;
        off += part, src += part, len -= part;
    }
    return add_piece_fit(st, r, off, len, src);
}

struct keep_arg {
    struct ADIOI_BBLOG_state *st;
    struct round *r;
    uint64_t off, src;          /* the segment being cut */
};

static int keep_piece(void *arg, uint64_t off, uint64_t len)
{
    struct keep_arg *k = arg;

    return add_piece(k->st, k->r, off, len, k->src + (off - k->off));
}

/* This process's pieces of the round [start, end) (segments, and bytes written through) as
 * (off, len, stamp) triples in *mine. */
static int round_pieces(struct ADIOI_BBLOG_state *st, const struct bblog_seg *segs,
                        const uint64_t *stamps, size_t cursor, size_t n, uint64_t start,
                        uint64_t end, uint64_t **mine, size_t *cap, int *count)
{
    size_t i, k = 0, need = 0;

    for (i = cursor; i < n && segs[i].off < end; i++)
        need++;
    need += st->ls->nthrough;
    if (need > *cap) {
        uint64_t *m = realloc(*mine, need * 3 * sizeof(*m));
        if (!m)
            return ENOMEM;
        *mine = m;
        *cap = need;
    }
    for (i = cursor; i < n && segs[i].off < end; i++) {
        uint64_t lo = segs[i].off > start ? segs[i].off : start;
        uint64_t hi = segs[i].off + segs[i].len < end ? segs[i].off + segs[i].len : end;
        if (hi > lo) {
            (*mine)[3 * k] = lo, (*mine)[3 * k + 1] = hi - lo, (*mine)[3 * k + 2] = stamps[i];
            k++;
        }
    }
    for (i = 0; i < st->ls->nthrough; i++) {
        const struct ADIOI_BBLOG_piece *t = &st->ls->through[i];
        uint64_t lo = t->off > start ? t->off : start;
        uint64_t hi = t->off + t->len < end ? t->off + t->len : end;
        if (hi > lo) {
            (*mine)[3 * k] = lo, (*mine)[3 * k + 1] = hi - lo, (*mine)[3 * k + 2] = t->stamp;
            k++;
        }
    }
    *count = (int) k;
    return 0;
}

/* Collective two-phase write of the round's pieces on the inner file: every process calls it
 * once per round, with an empty access when it has nothing. */
static void coll_write(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    ADIO_Status status;
    MPI_Datatype ftype = MPI_BYTE;
    int nomem;

    /* Out of memory to note them: nothing is written, the drain fails on every process. */
    nomem = note_written(r) != 0;
    if (nomem)
        r->k = 0, r->bytes = 0;
    if (r->k > 0) {
        MPI_Type_create_hindexed((int) r->k, r->lens, r->disps, MPI_BYTE, &ftype);
        MPI_Type_commit(&ftype);
    }
    ADIOI_BBLOG_Inner_set_bytes_view(fd, ftype, err);
    if (ftype != MPI_BYTE)
        MPI_Type_free(&ftype);
    if (*err == MPI_SUCCESS)
        ADIO_WriteStridedColl(st->inner, r->buf, (int) r->bytes, MPI_BYTE, ADIO_EXPLICIT_OFFSET,
                              0, &status, err);
    if (nomem && *err == MPI_SUCCESS)
        *err = ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_NO_MEM, "bblog: out of memory "
                               "verifying the drain of %s", st->pfs_path);
    st->st.coll_writes++;
}

/* One chunk of this process's node share, written alone: on one node the shares do not
 * interleave, and ROMIO's collective write would find that and write each independently. */
static void solo_write(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    ADIO_Status status;
    MPI_Datatype ftype;

    *err = r->k ? ADIOI_BBLOG_Inner_ready(fd) : MPI_SUCCESS;
    if (*err == MPI_SUCCESS && note_written(r) != 0)
        *err = ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_NO_MEM, "bblog: out of memory "
                               "verifying the drain of %s", st->pfs_path);
    if (*err != MPI_SUCCESS || r->k == 0)
        return;
    if (ADIOI_BBLOG_RUNS_ALONE(r->k, (uint64_t) (r->disps[r->k - 1] + r->lens[r->k - 1] -
                                                r->disps[0]))) {
        /* One piece, or holes few enough to leave as they are: a write per piece (adjacent
         * pieces are one already, push_piece), no read of the PFS file. */
        put_pieces(st, r, err);
        return;
    }
    /* Holes between many pieces: the inner driver's strided write (data sieving) */
    MPI_Type_create_hindexed((int) r->k, r->lens, r->disps, MPI_BYTE, &ftype);
    MPI_Type_commit(&ftype);
    ADIOI_BBLOG_Inner_set_bytes_view(fd, ftype, err);
    MPI_Type_free(&ftype);
    if (*err == MPI_SUCCESS)
        ADIO_WriteStrided(st->inner, r->buf, (int) r->bytes, MPI_BYTE, ADIO_EXPLICIT_OFFSET, 0,
                          &status, err);
    st->st.indep_writes++;
}

/* One chunk written alone with pwritev straight from the mapped logs, when they are (only
 * under ROMIO's generic pwrite: ad_bblog_node.c, map_log), a call per run of adjacent pieces.
 * Returns 0 when it cannot: read the pieces instead. */
static int mapped_write(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                        const struct bblog_npiece *p, size_t k, int *werr)
{
    size_t i, runs = 0;
    int w;

    *werr = ADIOI_BBLOG_Inner_ready(fd);
    if (*werr != MPI_SUCCESS)
        return 1;
    w = ADIOI_BBLOG_Node_write_mapped(st, p, k, st->inner->fd_sys, &st->st.bytes_from_peers,
                                      &runs);
    if (w < 0)
        return 0;
    if (w != 0)
        *werr = ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_DRAIN", __LINE__, w, "cannot write",
                                   st->pfs_path);
    ADIOI_BBLOG_DIRTY(st->inner);
    st->inner->fp_sys_posn = -1;        /* as after any write of ROMIO's own */
    r->k = runs;
    for (i = 0; i < k; i++)
        r->bytes += p[i].len;
    st->st.indep_writes += runs;
    account(st, r);
    return 1;
}

/* Reads pieces p[0..k) of the node's logs into r->buf and writes them: alone (solo; straight
 * from the mapped logs when it can) or with ROMIO's collective write, which every process
 * calls, empty after a failure. */
static void write_node_chunk(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                             const struct bblog_npiece *p, size_t k, int solo, int *rc,
                             int *werr)
{
    size_t i;

    r->k = 0;
    r->bytes = 0;
    /* Verified drains write from the buffer, whose bytes they note. */
    if (solo && !r->verify && *rc == 0 && k > 0 && mapped_write(fd, st, r, p, k, werr))
        return;
    if (*rc == 0 && k > 0)
        *rc = ADIOI_BBLOG_Node_read(st, p, k, r->buf, &st->st.bytes_from_peers);
    for (i = 0; *rc == 0 && i < k; i++) {
        *rc = push_piece(r, p[i].off, p[i].len);
        r->bytes += p[i].len;
    }
    if (*rc != 0)
        r->k = 0, r->bytes = 0;
    if (solo)
        solo_write(fd, st, r, werr);
    else
        coll_write(fd, st, r, werr);
    account(st, r);
}

/*
 * A round under the node exchange. With several nodes each process gets its share of its
 * node's bytes, at most one drain buffer (no process has more than a buffer in the round), and
 * writes it with ROMIO's collective write. On one node (solo) every process gets the node's
 * bytes of the round, in file order, cut into chunks of `chunk` bytes, and the processes take
 * the chunks in turn (Node_claim) and write each alone, with no collective call: a process
 * that is slower (descheduled, or behind a slow server) writes fewer of them. A process out of
 * chunks then sleeps until the others are done (Node_rest) rather than spin in MPI. After a failure
 * a process still takes its turns, writing nothing, so that the others' chunks stay theirs;
 * the drain's final agreement makes it fail everywhere.
 */
static void node_round(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r, int solo,
                       uint64_t chunk, int skip, int *rc, int *werr)
{
    struct bblog_npiece *p = NULL, *q = NULL;
    size_t ns = 0, i = 0, j, k;
    uint64_t own = 0, mine = r->bytes, total = 0, pos = 0, jpos, nch, c, next = 0;
    int xrc;

    xrc = ADIOI_BBLOG_Node_share(fd, r->quad, *rc == 0 ? (int) r->nquad : 0, solo, &p, &ns,
                                 &own);
    *rc = *rc ? *rc : xrc;
    if (*rc != 0)
        ns = 0;
    else if (solo)
        st->st.bytes_superseded += mine - own;  /* no Order exchange on one node: counted here */
    for (i = 0; i < ns; i++)
        total += p[i].len;
    if (!solo) {
        if (*rc == 0 && total > chunk)
            *rc = EOVERFLOW;    /* cannot happen: a share is at most one buffer here */
        write_node_chunk(fd, st, r, p, *rc == 0 && !skip ? ns : 0, 0, rc, werr);
        free(p);
        return;
    }
    nch = (total + chunk - 1) / chunk;
    /* A chunk's pieces: at most all of them. */
    if (ns > 0 && !(q = malloc(ns * sizeof(*q))))
        *rc = ENOMEM;
    i = 0;
    while ((c = ADIOI_BBLOG_Node_claim(st, nch, &next)) < nch) {
        uint64_t a = c * chunk, b = a + chunk < total ? a + chunk : total;
        if (*rc != 0 || *werr != MPI_SUCCESS || skip)
            continue;
        /* Chunks come in increasing order: the pieces before this one are passed for good. */
        while (pos + p[i].len <= a)
            pos += p[i++].len;
        for (j = i, jpos = pos, k = 0; j < ns && jpos < b; jpos += p[j++].len) {
            uint64_t lo = a > jpos ? a : jpos;
            uint64_t hi = b < jpos + p[j].len ? b : jpos + p[j].len;
            q[k] = p[j];
            q[k].off += lo - jpos;
            q[k].src += lo - jpos;
            q[k].len = hi - lo;
            k++;
        }
        write_node_chunk(fd, st, r, q, k, 1, rc, werr);
    }
    ADIOI_BBLOG_Node_rest(st);
    free(q);
    free(p);
}

/* end: the greatest end of logged data over all processes (agreed by the caller). The first
 * aggregator checks the size and grows the file. With the POSIX inner drivers (ROMIO's generic
 * resize: ufs, lustre, gpfs) it calls ftruncate itself, as that resize would, and nobody
 * waits for it here: before any process writes a byte of a round it passes a collective call
 * that the first aggregator enters only after the truncate (the round's MPI_Allreduce, or,
 * in a drain of one round, the node exchange's MPI_Allgather or the two-phase write's own
 * exchanges); a failure is its own, and the drain's final agreement makes it fail on every
 * process. Other drivers resize collectively. */
static int grow_to_logged_end(ADIO_File fd, struct ADIOI_BBLOG_state *st, uint64_t end)
{
    static const char myname[] = "ADIOI_BBLOG_DRAIN";
    int root = st->inner->hints->ranklist[0], err = MPI_SUCCESS;
    int posix = st->inner->fns->ADIOI_xxx_Resize == ADIOI_GEN_Resize;
    long long grow = 0;

    if (st->rank == root) {
        ADIO_Fcntl_t fc;
        /* The first aggregator has the inner file open even under deferred open. */
        ADIO_Fcntl(st->inner, ADIO_FCNTL_GET_FSIZE, &fc, &err);
        grow = err == MPI_SUCCESS && (uint64_t) fc.fsize < end;
        if (posix && grow && ftruncate(st->inner->fd_sys, (off_t) end) != 0)
            err = ADIOI_BBLOG_Err_rc(myname, __LINE__, errno, "cannot grow", st->pfs_path);
    }
    if (posix)
        return err;
    ADIOI_BBLOG_Bcast(&grow, 1, MPI_LONG_LONG, root, fd->comm);
    if (grow)
        ADIO_Resize(st->inner, (ADIO_Offset) end, &err);
    return err;
}

/*
 * A drain's agreements carry a check word from every process. MPI does not always fail a
 * collective call on the survivors when a process of the file dies during it: under MPICH's
 * ch3 device, with the processes of one node killed in the middle of a drain, the drain's last
 * MPI_Allreduce returned MPI_SUCCESS on the other node's processes, which had never heard from
 * them, and ROMIO's two-phase write before it had gone on without their data; the survivors
 * marked their logs drained and MPI_File_sync succeeded over bytes that never reached the PFS
 * (run-crash.sh on the emulated cluster). The word of a process depends on the open (its set
 * id), the drain (drain_seq, which every process counts alike: drains are collective), the
 * agreement (phase) and the rank, so an agreement that missed a process, or took a word sent
 * for another call, does not add up to what every process can compute alone.
 */
static uint64_t check_word(const struct ADIOI_BBLOG_state *st, int phase, int rank)
{
    uint64_t x = st->set_id ^ (st->drain_seq * 4 + (uint64_t) phase) * UINT64_C(0x9E3779B97F4A7C15)
        ^ ((uint64_t) rank + 1) * UINT64_C(0xC2B2AE3D27D4EB4F);

    /* splitmix64's finaliser: unrelated words for neighbouring inputs */
    x ^= x >> 30;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 27;
    x *= UINT64_C(0x94D049BB133111EB);
    return x ^ (x >> 31);
}

enum { CHECK_START, CHECK_END };

/* What the processes agree on at the start of a drain, from one MPI_Allgather. */
struct agreed {
    uint64_t bytes, count;      /* logged bytes and index extents, summed */
    int failed;                 /* some process could not take its snapshot */
    uint64_t slo, shi;          /* least and greatest ordering stamp */
    uint64_t end;               /* greatest end of logged data */
    uint64_t lo, hi;            /* the file range all pieces span (bytes written through too) */
    uint64_t most;              /* the most bytes one process has in its snapshot */
    int disjoint;               /* no two processes' pieces can overlap */
    int lost;                   /* a process's check word is missing: nothing above holds */
    unsigned char *node;        /* each process's Node_stage flags (NULL: not staged) */
    int node_none;              /* some process has no node state */
    int node_unstaged;          /* some process could not flush its log for the others */
};

enum { G_BYTES, G_COUNT, G_FAILED, G_SLO, G_SHI, G_END, G_LO, G_HI, G_SNAP, G_CHECK, G_NODE,
    G_N };

static int by_lo(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;

    return x[G_LO] < y[G_LO] ? -1 : x[G_LO] > y[G_LO];
}

/* Each process brings its totals, stamps and the range of the file its pieces span (bytes
 * written through included); every process then computes the same sums, extremes and
 * whether those ranges are disjoint (IOR segmented: each process its own block), in which
 * case no piece can hide another process's and the drain needs no Order exchange. One
 * collective call where sums and maxima took two, and the exchange three. */
static void agree_start(ADIO_File fd, struct ADIOI_BBLOG_state *st, int rc,
                        const struct bblog_seg *segs, size_t n, uint64_t slo, uint64_t shi,
                        int staged, unsigned node, int alone, struct agreed *ag)
{
    int np = alone ? 1 : st->nprocs;
    uint64_t mine[G_N], *all = ADIOI_Malloc((size_t) np * sizeof(mine));
    uint64_t reach = 0;
    size_t i;
    int p;

    mine[G_BYTES] = bblog_idx_bytes(st->ls->idx);
    mine[G_COUNT] = bblog_idx_count(st->ls->idx);
    mine[G_FAILED] = rc != 0;
    mine[G_SLO] = rc == 0 ? slo : UINT64_MAX;
    mine[G_SHI] = rc == 0 ? shi : 0;
    mine[G_END] = bblog_idx_end(st->ls->idx);
    mine[G_LO] = UINT64_MAX;
    mine[G_HI] = 0;
    mine[G_SNAP] = 0;
    mine[G_CHECK] = check_word(st, CHECK_START, st->rank);
    mine[G_NODE] = node;
    for (i = 0; rc == 0 && i < n + st->ls->nthrough; i++) {
        uint64_t off = i < n ? segs[i].off : st->ls->through[i - n].off;
        uint64_t end = off + (i < n ? segs[i].len : st->ls->through[i - n].len);
        if (i < n)
            mine[G_SNAP] += segs[i].len;
        mine[G_LO] = off < mine[G_LO] ? off : mine[G_LO];
        mine[G_HI] = end > mine[G_HI] ? end : mine[G_HI];
    }
    if (alone)
        memcpy(all, mine, sizeof(mine));
    else
        ADIOI_BBLOG_Allgather(mine, G_N, MPI_UINT64_T, all, G_N, MPI_UINT64_T, fd->comm);
    memset(ag, 0, sizeof(*ag));
    ag->slo = UINT64_MAX;
    ag->lo = UINT64_MAX;
    if (staged)
        ag->node = malloc((size_t) st->nprocs);
    for (p = 0; p < np; p++) {
        const uint64_t *g = all + (size_t) p * G_N;
        ag->bytes += g[G_BYTES];
        ag->count += g[G_COUNT];
        ag->failed |= g[G_FAILED] != 0;
        ag->slo = g[G_SLO] < ag->slo ? g[G_SLO] : ag->slo;
        ag->shi = g[G_SHI] > ag->shi ? g[G_SHI] : ag->shi;
        ag->end = g[G_END] > ag->end ? g[G_END] : ag->end;
        ag->lo = g[G_LO] < ag->lo ? g[G_LO] : ag->lo;
        ag->hi = g[G_HI] > ag->hi ? g[G_HI] : ag->hi;
        ag->most = g[G_SNAP] > ag->most ? g[G_SNAP] : ag->most;
        ag->lost |= g[G_CHECK] != check_word(st, CHECK_START, alone ? st->rank : p);
        ag->node_none |= (g[G_NODE] & ADIOI_BBLOG_NODE_NONE) != 0;
        ag->node_unstaged |= (g[G_NODE] & ADIOI_BBLOG_NODE_UNSTAGED) != 0;
        if (ag->node)
            ag->node[p] = (unsigned char) g[G_NODE];
    }
    if (ag->lost) {
        /* Plan nothing from such sums (a size to grow the file to, above all), and fail as
         * after a failed snapshot: every process still takes part, with nothing. */
        free(ag->node);
        memset(ag, 0, sizeof(*ag));
        ag->count = 1;
        ag->failed = 1;
        ag->lost = 1;
        ag->disjoint = 1;
        ADIOI_Free(all);
        return;
    }
    qsort(all, (size_t) np, sizeof(mine), by_lo);
    ag->disjoint = 1;
    for (p = 0; p < np; p++) {
        const uint64_t *g = all + (size_t) p * G_N;
        if (g[G_LO] >= g[G_HI])
            continue;           /* nothing logged or written through */
        if (g[G_LO] < reach)
            ag->disjoint = 0;
        reach = g[G_HI] > reach ? g[G_HI] : reach;
    }
    ADIOI_Free(all);
}

/* Marks this process's log drained after a drain that left nothing in it. With more than one
 * process, every record of this file stamped up to now is on the PFS: the header says so
 * job-wide, for a replay after a crash in which some process died before marking its own log
 * (bblog_format.h, drained_gen). Returns 0 or the log's error. */
static int mark_log_drained(struct ADIOI_BBLOG_state *st, int alone)
{
    return st->nprocs > 1 && !alone ?
        bblog_log_mark_drained_gen(st->ls->log,
                                   ADIOI_BBLOG_COLL_STAMP(ADIOI_BBLOG_Stamp(st->ls)) + 1) :
        bblog_log_mark_drained(st->ls->log);
}

/* One collective drain, as a pipeline of stages (drain() below): plan what each process has,
 * choose the path every process takes, write it in rounds, commit, and mark the logs. */
struct drain {
    ADIO_File fd;
    struct ADIOI_BBLOG_state *st;
    int sync_inner;
    uint64_t w0;                /* the writes this drain covers (wgen at its start) */
    double t0;
    /* plan: this process's extents in file order, their stamps, and what all processes have */
    struct bblog_seg *segs;
    uint64_t *stamps, slo, shi;
    size_t n;
    int partial;                /* a one-process handle that drains its newest extents only */
    /* A drain of this process's log alone, at a sync the others left (ad_bblog_flush.c): no
     * collective call; what the others wrote later than its pieces, from their notes. */
    const struct ADIOI_BBLOG_order *alone;
    struct agreed ag;
    /* path: the same on every process */
    int indep;                  /* each process writes its own extents, no two-phase write */
    int one_round;              /* one round holds everything: its end needs no agreement */
    int solo;                   /* one node: the node exchange writes every chunk alone */
    int staged;                 /* Node_stage ran: the node exchange's files are ready */
    int exchange;               /* Order exchange: pieces of different stamps may overlap */
    int node_bad;               /* this process cannot read every log of the node: it writes
                                 * no chunk, and the drain is made again (node_ready) */
    uint64_t budget, plan_budget, span;
    struct ADIOI_BBLOG_order order;
    struct round r;
    uint64_t *mine;             /* this process's pieces of a round, for the Order exchange */
    size_t mine_cap;
    /* outcome */
    int rc;                     /* local failure (errno), before it is an MPI error */
    int err;
    int flushed, anyfail, lost, mismatch;
    int nospace;                /* some process's failure was a full PFS (MPI_ERR_NO_SPACE) */
    int node_retry;             /* some process had node_bad: drain again through MPI */
};

/* Stage 1: the snapshot of this process's extents and the agreement on what all have. */
static void drain_plan(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    size_t i;

    ADIOI_BBLOG_MAX(st->st.max_index_bytes, (uint64_t) bblog_idx_memory(st->ls->idx));
    d->rc = snapshot(st, &d->segs, &d->stamps, &d->n, &d->slo, &d->shi);
    ADIOI_BBLOG_MAX(st->st.max_plan_bytes,
                    (uint64_t) d->n * (sizeof(*d->segs) + sizeof(*d->stamps)));
    /* A one-process handle of a file that a multi-process handle writes too (PnetCDF's
     * MPI_COMM_SELF handle, at its sync or close) cannot exchange with the other processes.
     * It drains only what this process wrote since the file's last collective call: no other
     * process can have written those bytes later. Older extents wait for a collective drain,
     * whose exchange also learns what this one wrote (kept like bytes written through); when
     * this handle is the last one open, it drains everything. */
    d->partial = d->rc == 0 && st->nprocs == 1 && st->ls->colls > 0 &&
        st->ls->refs - (st->ls->bg ? 1 : 0) > 1;        /* another handle drains the rest */
    if (d->partial) {
        uint32_t cur = ADIOI_BBLOG_COLL_STAMP(ADIOI_BBLOG_Stamp(st->ls));
        size_t k = 0;
        for (i = 0; i < d->n; i++)
            if (ADIOI_BBLOG_COLL_STAMP(d->stamps[i]) == cur)
                d->segs[k] = d->segs[i], d->stamps[k++] = d->stamps[i];
        d->n = k;
    }
    /* The node exchange's files are made ready before the agreement, which tells every
     * process which exist (ad_bblog_node.c); a process without node state means none for
     * anyone, and all forget theirs alike. */
    d->staged = st->hints.node_exchange && st->nprocs > 1 && !st->node_off && !d->alone;
    agree_start(d->fd, st, d->rc, d->segs, d->n, d->slo, d->shi, d->staged,
                d->staged ? ADIOI_BBLOG_Node_stage(d->fd) : 0, d->alone != NULL, &d->ag);
    if (d->ag.node_none)
        ADIOI_BBLOG_Node_free(st);
}

/* Nothing logged on any process: no round, but the logs are marked and a sync still flushes. */
static int drain_nothing(struct drain *d, int *emptied)
{
    struct ADIOI_BBLOG_state *st = d->st;
    int rc;

    ADIOI_BBLOG_Vis_emptied(st->ls);    /* what it lists is all in the PFS file */
    ADIOI_BBLOG_Node_end(st);           /* Node_stage's list file */
    free(d->ag.node);
    /* Nothing left to write, but the log may still hold records: of what the background
     * drain wrote, or PFS records. Marked drained like after any drain, or a replay after
     * a crash before close removes the log would put them back over newer bytes of
     * processes whose logs are gone. */
    if (d->rc == 0 && st->ls->log && (st->ls->log_end > 0 || st->ls->nthrough > 0)) {
        rc = mark_log_drained(st, d->alone != NULL);
        if (rc != 0)
            d->err = ADIOI_BBLOG_Err_rc(myname_drain, __LINE__, rc, "cannot mark drained",
                                        bblog_log_meta_path(st->ls->log));
        st->ls->log_bytes = 0;
        st->ls->log_end = 0;
        ADIOI_BBLOG_Trim_reset(st->ls);
    }
    ADIOI_BBLOG_Order_reset(st->ls);
    *emptied = 1;
    free(d->segs);
    free(d->stamps);
    /* Nothing logged anywhere, but bytes written straight to the PFS file (large
     * writes) must be flushed by a sync all the same; every process is here. */
    if (d->err == MPI_SUCCESS && d->sync_inner && st->inner->is_open &&
        __atomic_load_n(&st->ls->flushed_wgen, __ATOMIC_RELAXED) < d->w0) {
        ADIO_Flush(st->inner, &d->err);
        if (d->err == MPI_SUCCESS)
            ADIOI_BBLOG_Flushed(st->ls, d->w0);
    }
    return d->err;
}

/*
 * The node exchange (ad_bblog_node.c) serves the two-phase path of multi-process handles;
 * every input of the test for it is the same on all processes: the hints, the start's
 * agreement (every process staged its log) and whether the open spans one node. Across nodes
 * whether every process can read its node's logs is agreed before any round uses them. On one
 * node it is not, which saves a collective call per drain (5 ms with 4 processes on 2 cores):
 * the logs are files of one directory that the start's agreement says exist, and a process
 * that cannot open one (out of descriptors) takes part in the rounds but writes no chunk;
 * it says so at the commit, where every process learns it, and the drain is then made again
 * through MPI, as are the handle's later drains (node_off). What the first pass wrote are
 * bytes the second writes again.
 */
static int node_ready(struct drain *d)
{
    static int shared_warned;
    struct ADIOI_BBLOG_state *st = d->st;
    int bad, anybad;

    if (!d->staged || d->ag.node_none || d->ag.node_unstaged)
        return 0;
    bad = !ADIOI_BBLOG_Node_prepare(d->fd, d->ag.node);
    if (st->one_node && st->hints.debug_node_size <= 0) {
        d->node_bad = bad;
        return 1;
    }
    /* A failed agreement counts as a process that cannot: the drain goes through MPI. */
    if (ADIOI_BBLOG_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, d->fd->comm) != MPI_SUCCESS)
        anybad = 1;
    if (anybad && st->hints.shared_bb && !st->one_node && st->rank == 0 && !shared_warned++)
        fprintf(stderr, "bblog: warning: bblog_shared_bb=true, but some process of %s "
                "cannot open the logs of the others in %s: is that directory the same on "
                "every node? Drains move the data through MPI instead (said once per "
                "job)\n", st->pfs_path, st->logdir);
    return !anybad;
}

/* How far a round reaches (span) and how many bytes of pieces each process plans for one. */
static void size_rounds(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    const struct agreed *ag = &d->ag;

    /* A round spans at most cb_nodes x cb_buffer_size bytes, so that ROMIO's two-phase write
     * does it in one cycle on each aggregator: its write error path leaves the remaining
     * cycles' exchanges out on the failing aggregator only, and the other processes would wait
     * for them for ever. With one cycle an error reaches every process. */
    d->span = (uint64_t) (st->inner->hints->cb_nodes > 0 ? st->inner->hints->cb_nodes : 1);
    d->span *= st->inner->hints->cb_buffer_size > 0 ?
        (uint64_t) st->inner->hints->cb_buffer_size : d->budget;
    /* With the node exchange on a single node (solo), the processes take the node's bytes in
     * chunks of up to 4 MiB, each written alone (unless romio_cb_write=enable asks for
     * ROMIO's aggregation). A round then only bounds the memory of the piece lists:
     * about 56 bytes a piece on every process of the node, kept within one drain buffer, for
     * at most 16 buffers of data per process. */
    if (d->solo) {
        uint64_t f = ag->bytes / ag->count / (56 * (uint64_t) st->nprocs);
        d->plan_budget = d->budget * (f < 1 ? 1 : f > 16 ? 16 : f);
        d->span = UINT64_MAX;
    }
    /* Independent drain: one round, the whole file. Its pieces are exchanged once (ordering),
     * then each process streams its own through the buffer with no further collective call.
     * Rounds cut by file range would serialise the processes: with each process's data in one
     * block of the file (IOR segmented), the first round ends a buffer past the first block's
     * start and holds bytes of one process only. */
    if (d->indep) {
        d->r.fd = d->fd;
        d->r.budget = d->budget;
        d->plan_budget = UINT64_MAX;
        if (d->rc == 0 && d->n > 0)
            map_own_log(st, &d->r);
        sieve_setup(st, &d->r);
    }
    /* A drain in which every process's pieces fit its planning budget and all pieces lie
     * within one span is a single round, from inputs every process has since agree_start: the
     * rounds' MPI_Allreduce would only say so (and a second one that nothing is left). The
     * pieces and the writes are those of the agreed round [first byte, first byte + span). */
    d->one_round = !d->indep && !ag->failed && ag->most > 0 && ag->most <= d->plan_budget &&
        (d->span == UINT64_MAX || (ag->hi > ag->lo && ag->hi - ag->lo <= d->span));
}

/* Stage 2: the path of this drain, from inputs that are the same on every process. */
static void drain_choose(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct agreed *ag = &d->ag;

    /* Two-phase aggregation pays off for small pieces; extents of a megabyte or more are
     * already what the PFS wants, and funnelling them through the aggregators only serialises
     * them (plain ROMIO writes such non-interleaved accesses independently too). The decision
     * is global, from the mean extent size, so every process takes the same path.
     * A one-process handle always writes its extents one by one: other processes may drain
     * the same file at the same moment through handles of their own (PnetCDF's MPI_COMM_SELF
     * handles in independent mode, at sync and close), so it must neither read-modify-write
     * the bytes between its extents nor grow the file (below). */
    d->indep = st->nprocs == 1 || d->alone ||
        (st->hints.indep_threshold > 0 && st->inner->hints->cb_write != ADIOI_HINT_ENABLE &&
         ag->bytes / ag->count >= (uint64_t) st->hints.indep_threshold);
    if (d->rc == 0)
        d->rc = ADIOI_BBLOG_Order_init(d->fd, &d->order);
    else
        memset(&d->order, 0, sizeof(d->order));
    if (!d->indep)
        d->r.collect = node_ready(d);
    /* ROMIO's two-phase write fills the holes of an aggregator's domain by reading the file
     * first (read-modify-write); past the end of the file that read comes back short and the
     * hole would be written with whatever its buffer held. Growing the file first to the end of
     * the logged data, which is its size after the drain anyway, makes such holes read as
     * zeros. Independent writes have no holes to fill, and there the check-then-truncate could
     * race with another handle's writes: a size read just before another process extends the
     * file would truncate its bytes (PnetCDF's SELF handles lost step[t] so). */
    if (!d->indep) {
        int gerr = grow_to_logged_end(d->fd, st, ag->end);
        if (d->err == MPI_SUCCESS)
            d->err = gerr;
    }
    if (ag->failed) {
        if (d->rc == 0)
            d->rc = ENOMEM;     /* another process failed: nothing drains anywhere */
        d->n = 0;
        if (d->err == MPI_SUCCESS && ag->lost)
            d->err = ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_OTHER, "bblog: a process "
                                     "of %s did not take part in its drain (did it die?); the "
                                     "data stays in the logs under %s", st->pfs_path,
                                     st->logdir);
        else if (d->err == MPI_SUCCESS)
            d->err = ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_NO_MEM, "bblog: out of "
                                     "memory planning the drain of %s", st->pfs_path);
    }
    d->solo = d->r.collect && ADIOI_BBLOG_Node_size(st) == st->nprocs &&
        st->inner->hints->cb_write != ADIOI_HINT_ENABLE;
    /* Write order matters only between different stamps (with one stamp everywhere, or one
     * process, there is nothing to exchange) and where the pieces of two processes can
     * overlap. On one node (solo) the node exchange sees every process's pieces with their
     * stamps and keeps the later writes itself: no Order exchange. */
    d->exchange = st->nprocs > 1 && !ag->failed && ag->slo != ag->shi && !ag->disjoint &&
        !d->solo;
    if (d->alone)
        d->exchange = !ag->failed && d->alone->n > 0;
    size_rounds(d);
    /* Under the node exchange a process with nothing logged still receives a share. */
    if (d->rc == 0 && (d->n > 0 || d->r.collect) && !d->r.map &&
        !(d->r.buf = ADIOI_Malloc(d->budget)))
        d->rc = ENOMEM;
}

/* The pieces of [start, end) that this process writes in a round: its extents there, less
 * what another process wrote later (with the Order exchange), and on one node the bytes it
 * wrote straight to the PFS, which hide older pieces. */
static void round_add(struct drain *d, size_t cursor, uint64_t start, uint64_t end)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct round *r = &d->r;
    size_t i;

    for (i = cursor; d->rc == 0 && i < d->n && d->segs[i].off < end; i++) {
        const struct bblog_seg *s = &d->segs[i];
        uint64_t lo = s->off > start ? s->off : start;
        uint64_t hi = s->off + s->len < end ? s->off + s->len : end;
        struct keep_arg k = { st, r, s->off, s->src };
        uint64_t before = r->added;
        if (hi <= lo)
            continue;
        r->stamp = d->stamps[i];
        if (d->exchange) {
            d->rc = ADIOI_BBLOG_Order_keep(d->alone ? d->alone : &d->order, lo, hi,
                                           d->stamps[i], keep_piece, &k);
            st->st.bytes_superseded += (hi - lo) - (r->added - before);
        } else {
            d->rc = add_piece(st, r, lo, hi - lo, s->src + (lo - s->off));
        }
    }
    if (d->rc == 0)
        d->rc = flush_read(st, r);
    for (i = 0; d->solo && d->rc == 0 && i < st->ls->nthrough; i++) {
        const struct ADIOI_BBLOG_piece *t = &st->ls->through[i];
        uint64_t lo = t->off > start ? t->off : start;
        uint64_t hi = t->off + t->len < end ? t->off + t->len : end;
        r->stamp = t->stamp;
        if (hi > lo)
            d->rc = add_piece(st, r, lo, hi - lo, UINT64_MAX);
    }
}

/* Stage 3: the rounds. Each covers the file from where the last ended to where the first
 * process runs out of budget; every process takes part in each, even after a failure. */
static void drain_rounds(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct round *r = &d->r;
    uint64_t start = 0, end, mm[2], mmin[2];
    size_t cursor = 0;

    do {
        int werr = MPI_SUCCESS, count = 0, xrc;

        /* {end of my round, first byte I have in it}: the round ends where the first process
         * runs out of budget, and spans at most `span` bytes from the first byte anyone has in
         * it (see drain_choose). */
        mm[0] = d->rc == 0 ? bblog_plan_round_end(d->segs, d->n, &cursor, start,
                                                  d->plan_budget) : UINT64_MAX;
        mm[1] = d->rc == 0 && cursor < d->n ?
            (d->segs[cursor].off > start ? d->segs[cursor].off : start) : UINT64_MAX;
        /* The independent drain's one round needs no agreement: it is the whole file, and
         * some process has bytes in it; nor does a drain known to be one round. */
        if (d->indep || d->one_round)
            mmin[0] = UINT64_MAX, mmin[1] = 0;
        else
            ADIOI_BBLOG_Allreduce(mm, mmin, 2, MPI_UINT64_T, MPI_MIN, d->fd->comm);
        /* Nobody has a byte left: no empty round (an empty two-phase write still costs all
         * its collectives). Every process sees the same minimum, so all stop here together. */
        if (mmin[1] == UINT64_MAX)
            break;
        end = mmin[0];
        if (!d->indep && !d->one_round && mmin[1] + d->span > mmin[1] &&
            mmin[1] + d->span < end)
            end = mmin[1] + d->span;
        r->k = 0;
        r->bytes = 0;
        r->nquad = 0;
        if (d->exchange && !d->alone) {
            xrc = d->rc == 0 ? round_pieces(st, d->segs, d->stamps, cursor, d->n, start, end,
                                            &d->mine, &d->mine_cap, &count) : 0;
            if (xrc != 0)
                count = 0;
            d->rc = d->rc ? d->rc : xrc;
            xrc = ADIOI_BBLOG_Order_exchange(d->fd, &d->order, d->mine, count, 0);
            d->rc = d->rc ? d->rc : xrc;
        }
        round_add(d, cursor, start, end);
        if (r->collect) {
            /* Every process of the node, each round, even after a failure (with nothing). */
            node_round(d->fd, st, r, d->solo, d->solo && d->budget > SOLO_CHUNK ? SOLO_CHUNK :
                       d->budget, d->node_bad, &d->rc, &werr);
        } else {
            if (d->rc != 0)
                r->k = 0, r->bytes = 0; /* still take part, with nothing */
            if (d->indep) {
                if (d->rc == 0)
                    d->rc = spill(st, r);
                werr = r->werr;
            } else {
                coll_write(d->fd, st, r, &werr);
                account(st, r);
            }
        }
        if (werr != MPI_SUCCESS && d->err == MPI_SUCCESS)
            d->err = werr;
        st->st.rounds++;
        start = end;
    } while (end != UINT64_MAX);
}

/* Stage 4: the commit point. Every process wrote and flushed its share, and says so with its
 * check word; without every word, nothing is marked drained. bblog_verify reads back here. */
static void drain_commit(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    struct round *r = &d->r;
    uint64_t v[3], sum[3], want = 0;
    int p;

    /* Before the logs can be marked drained and truncated. */
    if (r->map)
        munmap((void *) r->map, r->map_len);
    r->map = NULL;
    if (d->rc != 0 && d->err == MPI_SUCCESS)
        d->err = ADIOI_BBLOG_Err_rc(myname_drain, __LINE__, d->rc, "cannot read back the log",
                                    st->ls->log ? bblog_log_data_path(st->ls->log) :
                                    st->logdir);
    /* A verifying drain flushes too: what it reads back must be what the PFS holds, not what
     * one client's cache holds of another's writes. */
    if (d->err == MPI_SUCCESS && (d->sync_inner || r->verify) && st->inner->is_open)
        ADIO_Flush(st->inner, &d->err);
    d->flushed = d->err == MPI_SUCCESS && (d->sync_inner || r->verify) && st->inner->is_open;
    /* Failures count in the low half, those of a full file system in the high half: every
     * process then reports the class a plain ROMIO write of the same bytes would have. */
    v[0] = d->err != MPI_SUCCESS;
    if (d->err != MPI_SUCCESS) {
        int cls = MPI_ERR_IO;
        MPI_Error_class(d->err, &cls);
        if (cls == MPI_ERR_NO_SPACE || cls == MPI_ERR_QUOTA)
            v[0] |= UINT64_C(1) << 32;
    }
    v[1] = check_word(st, CHECK_END, st->rank);
    v[2] = (uint64_t) d->node_bad;
    if (d->alone) {
        want = v[1];
        memcpy(sum, v, sizeof(v));
    } else {
        for (p = 0; p < st->nprocs; p++)
            want += check_word(st, CHECK_END, p);
        ADIOI_BBLOG_Allreduce(v, sum, 3, MPI_UINT64_T, MPI_SUM, d->fd->comm);
    }
    d->lost = sum[1] != want;
    d->nospace = (sum[0] >> 32) != 0;
    d->anyfail = sum[0] != 0 || d->lost;
    d->node_retry = !d->anyfail && sum[2] != 0;
    if (d->node_retry)
        d->anyfail = 1;         /* nothing is marked drained by this pass */
    /* bblog_verify: every process has written and flushed its share (above); each reads back
     * what it wrote. A difference anywhere keeps every log, as a failed drain does. */
    if (!d->anyfail && r->verify) {
        struct written bad = { 0, 0, 0 };
        uint32_t got = 0;
        int verr, anybad;
        d->mismatch = verify_written(d->fd, st, r, d->budget, &bad, &got, &verr);
        if (d->alone)
            anybad = d->mismatch;
        else if (ADIOI_BBLOG_Allreduce(&d->mismatch, &anybad, 1, MPI_INT, MPI_MAX,
                                       d->fd->comm) != MPI_SUCCESS)
            anybad = 1;         /* unknown: kept, as a mismatch keeps every log */
        if (anybad) {
            d->anyfail = 1;
            if (!d->mismatch)
                d->err = ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_IO, "bblog: the "
                                         "verifying drain of %s read back bytes that differ "
                                         "from what was written, on another process; the "
                                         "data stays in the logs under %s", st->pfs_path,
                                         st->logdir);
            else if (verr != MPI_SUCCESS)
                d->err = verr;
            else
                d->err = ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_IO, "bblog: the "
                                         "verifying drain of %s read back bytes [%llu, %llu) "
                                         "that differ from what it wrote there (CRC-32C %08x, "
                                         "written %08x); the data stays in the logs under %s",
                                         st->pfs_path, (unsigned long long) bad.off,
                                         (unsigned long long) (bad.off + bad.len), got,
                                         bad.crc, st->logdir);
            d->mismatch = 1;
        }
    }
}

/* Stage 5, after a partial drain (drain_plan): what it wrote is kept like bytes written
 * through, for the next collective drain's exchange; the log keeps its older extents. */
static void drain_keep_partial(struct drain *d)
{
    struct ADIOI_BBLOG_state *st = d->st;
    size_t i;
    int rc = 0;

    for (i = 0; i < d->n && rc == 0; i++) {
        rc = ADIOI_BBLOG_Note_through(st->ls, d->segs[i].off, d->segs[i].len, d->stamps[i]);
        if (rc == 0)
            rc = bblog_idx_remove(st->ls->idx, d->segs[i].off, d->segs[i].len);
    }
    if (rc != 0)
        d->err = ADIOI_BBLOG_Err_rc(myname_drain, __LINE__, rc, "cannot record the drain of",
                                    st->pfs_path);
    d->anyfail = 1;             /* no mark, no clear */
}

/* Stage 5, after a complete drain everywhere: the log is marked drained and emptied. */
static void drain_empty_log(struct drain *d, int *emptied)
{
    struct ADIOI_BBLOG_state *st = d->st;
    int rc;

    /* Every process's bytes are in the PFS file: the others' reads stop looking in this log
     * before it is emptied (ad_bblog_vis.c). */
    ADIOI_BBLOG_Vis_emptied(st->ls);
    if (st->ls->log) {
        struct bblog_log_stats ls;

        rc = mark_log_drained(st, d->alone != NULL);
        if (rc != 0)
            d->err = ADIOI_BBLOG_Err_rc(myname_drain, __LINE__, rc, "cannot mark drained",
                                        bblog_log_meta_path(st->ls->log));
        else
            st->ls->log_failed = 0;         /* an emptied log takes appends again */
        /* A log write that failed before the drain read its bytes back from memory lost
         * nothing, but the burst buffer is too small (or failing): say so, once. */
        bblog_log_get_stats(st->ls->log, &ls);
        if (ls.failures > 0) {
            char why[160];
            snprintf(why, sizeof(why), "refused writes (%s; the drain wrote them from "
                     "memory)", bblog_strerror(ls.last_failure));
            ADIOI_BBLOG_Warn_full(st, why);
        }
    }
    bblog_idx_clear(st->ls->idx);
    ADIOI_BBLOG_Order_reset(st->ls);
    st->ls->log_bytes = 0;
    st->ls->log_end = 0;
    ADIOI_BBLOG_Trim_reset(st->ls);
    *emptied = 1;
    if (d->flushed)
        ADIOI_BBLOG_Flushed(st->ls, d->w0);
}

/* Stage 5: what the logs keep, the error every process reports, and the statistics. */
static void drain_finish(struct drain *d, int *emptied)
{
    struct ADIOI_BBLOG_state *st = d->st;

    /* Every process has read the node's logs: their mappings go before the truncation of the
     * logs, which would otherwise have to unmap the pages from all of them. */
    ADIOI_BBLOG_Node_end(st);
    if (!d->anyfail && d->partial)
        drain_keep_partial(d);
    if (!d->anyfail)
        drain_empty_log(d, emptied);
    else if (d->err == MPI_SUCCESS && !d->partial)
        d->err = d->lost ?
            ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_OTHER, "bblog: a process of %s did "
                            "not finish its drain (did it die?); the data stays in the logs "
                            "under %s", st->pfs_path, st->logdir) :
            d->nospace ?
            ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_NO_SPACE, "bblog: draining %s failed "
                            "on another process: no space left on the file system of %s; the "
                            "data stays in the logs under %s (make room, then sync or close "
                            "again, or run bblog replay)", st->pfs_path, st->pfs_path,
                            st->logdir) :
            ADIOI_BBLOG_Err(myname_drain, __LINE__, MPI_ERR_IO, "bblog: draining %s failed on "
                            "another process; the data stays in the logs under %s",
                            st->pfs_path, st->logdir);
    st->st.drains++;
    st->st.t_drain += ADIOI_BBLOG_Now() - d->t0;
    st->st.last_drain = d->mismatch ? ADIOI_BBLOG_LAST_MISMATCH :
        d->err != MPI_SUCCESS ? ADIOI_BBLOG_LAST_FAILED :
        d->r.verify ? ADIOI_BBLOG_LAST_VERIFIED : ADIOI_BBLOG_LAST_DONE;
}

static void drain_free(struct drain *d)
{
    free(d->r.ver);
    free(d->r.sv);
    if (d->r.sbuf)
        ADIOI_Free(d->r.sbuf);
    if (d->r.buf)
        ADIOI_Free(d->r.buf);
    ADIOI_BBLOG_Order_fini(&d->order);
    free(d->ag.node);
    free(d->r.lens);
    free(d->r.disps);
    free(d->r.quad);
    free(d->r.mp);
    free(d->segs);
    free(d->stamps);
    free(d->mine);
}

static int drain(ADIO_File fd, int sync_inner, const struct ADIOI_BBLOG_order *alone,
                 int *emptied)
{
    struct drain d;

    memset(&d, 0, sizeof(d));
    d.fd = fd;
    d.st = ADIOI_BBLOG_STATE(fd);
    d.sync_inner = sync_inner;
    d.t0 = ADIOI_BBLOG_Now();
    d.w0 = __atomic_load_n(&d.st->ls->wgen, __ATOMIC_RELAXED);
    d.err = MPI_SUCCESS;
    d.budget = d.plan_budget = (uint64_t) d.st->hints.flush_buffer_size;
    d.r.verify = d.st->hints.verify;
    d.alone = alone;
    *emptied = 0;
    if (!alone)
        d.st->drain_seq++;      /* counted alike on every process: collective drains only */
    drain_plan(&d);
    if (d.ag.count == 0)
        return drain_nothing(&d, emptied);
    drain_choose(&d);
    drain_rounds(&d);
    drain_commit(&d);
    if (d.node_retry) {
        /* A process could not read the node's logs (node_ready): again, through MPI. */
        ADIOI_BBLOG_Node_end(d.st);
        drain_free(&d);
        d.st->node_off = 1;
        d.st->st.drains_again++;
        return drain(fd, sync_inner, NULL, emptied);
    }
    drain_finish(&d, emptied);
    drain_free(&d);
    return d.err;
}

/* A background drain (ad_bblog_bg.c) is paused meanwhile: its segment in flight ends
 * after the write under way, and it forgets what it wrote, so nothing is written twice. */
static int drain_paused(ADIO_File fd, int sync_inner, const struct ADIOI_BBLOG_order *alone)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    int err, emptied = 0;

    ADIOI_BBLOG_Bg_settle(st->ls, st);
    ADIOI_BBLOG_Bg_pause(st->ls);
    err = drain(fd, sync_inner, alone, &emptied);
    ADIOI_BBLOG_Bg_resume(st->ls, emptied);
    return err;
}

int ADIOI_BBLOG_Drain(ADIO_File fd, int sync_inner)
{
    return drain_paused(fd, sync_inner, NULL);
}

int ADIOI_BBLOG_Drain_alone(ADIO_File fd, const struct ADIOI_BBLOG_order *later)
{
    return drain_paused(fd, 1, later);
}
