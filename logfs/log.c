/*
 * The log appender (DESIGN.md section 4; on-disk layout in bblog_format.h).
 *
 * Data path. bblog_log_append checksums the caller's bytes and copies them into the filling
 * staging buffer; nothing else happens unless that buffer fills. A full buffer is written
 * asynchronously with libaio (one iocb per buffer) and the next buffer of the ring starts
 * filling; an append waits only when the buffer it needs is still in flight. Without libaio
 * (BBLOG_LOG_NO_AIO, or io_setup refused) a full buffer is written with pwrite on the spot.
 * Without O_DIRECT a large append (straight_min) skips the buffers: the kernel copies a
 * buffered write into the page cache before io_submit returns anyway, so staging it first
 * only adds a copy (append_straight).
 *
 * O_DIRECT. The data log is opened a second time with O_DIRECT when the file system takes it
 * (decided once in create by an aligned test write). Then every write starts at a 4096-aligned
 * log offset and has a multiple of 4096 bytes: full buffers do by construction (the staging
 * size is rounded up to 4096 and buffers are filled back to back from offset 0); a partial
 * buffer written by a flush is padded with zeros up to the next block, and the bytes of its
 * last, partial block stay at the head of the staging buffer ("carry") so that the next write
 * rewrites that block with more data after them. The logical size of the data log (data_end)
 * is therefore tracked here and in the records, never taken from the file size, which may
 * include padding. Rewriting a block is crash-safe: its old bytes are rewritten with the same
 * values, so whatever mix of old and new sectors a crash leaves, the bytes that synced records
 * point at are intact. All reads go through a second, buffered descriptor.
 *
 * Records. Each append encodes its 64-byte record into the record buffer at once (its CRC
 * covers the payload CRC). Records are written to the meta log only after their payloads are
 * durable (written and fdatasync'd), so a record that survives a crash always points at a
 * payload that survived too: a crash can only ever leave a torn tail, never a record followed
 * by a lost payload (which the scanner would have to call corruption). They are written at
 * sync, and when the record buffer fills; the latter costs a data flush + fdatasync once per
 * record buffer (a quarter of the staging size: 16384 records with the defaults).
 *
 * Failures. Any failed write, fdatasync or truncate makes the log sticky-failed: log->err keeps
 * the first error, the API call that saw it returns it, and every later call returns
 * BBLOG_ESTICKY. Bytes are never silently dropped: a write is only considered done when the
 * kernel reported all its bytes written (short writes are completed, EINTR retried, in
 * bblog_io_full).
 *
 * Invariants (between API calls):
 * - st[cur] is the buffer the next append fills; if its state is ST_FILLING it holds log bytes
 *   [start, start + fill) and start + fill == data_end. Full buffers have been submitted.
 * - A buffer of any state with fill > 0 holds the log bytes [start, start + fill) (on disk
 *   already unless filling or in flight), which lets reads be served from memory.
 * - Buffers are submitted in log-offset order, submitted_end is the end of the last one; two
 *   writes in flight never overlap, because the only rewritten block (the carry) is written
 *   again only after every earlier write completed (flushes wait for all writes).
 * - Records [0, rec_written) are on disk in slots 0, 1, ...; the rcount records in rbuf follow
 *   them, in seq order; their payloads end at or before data_end.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "bblog_io.h"
#include "bblog_log.h"

/* Write-lifetime hints (Linux 4.13); older libc headers lack them. */
#ifndef F_LINUX_SPECIFIC_BASE
#define F_LINUX_SPECIFIC_BASE 1024
#endif
#ifndef F_SET_RW_HINT
#define F_SET_RW_HINT (F_LINUX_SPECIFIC_BASE + 12)
#endif
#ifndef RWH_WRITE_LIFE_SHORT
#define RWH_WRITE_LIFE_SHORT 2
#endif

/* statfs f_type of the memory file systems (linux/magic.h, not included for two numbers). */
#define TMPFS_MAGIC_ 0x01021994L
#define RAMFS_MAGIC_ 0x858458f6L

/* O_DIRECT alignment of buffers, offsets and lengths: 4096 covers every logical block size in
 * use (512 and 4096), so no probe of the device is needed. */
#define ALIGN ((size_t) 4096)
#define DEFAULT_STAGING_SIZE ((size_t) 4 << 20)
#define DEFAULT_STAGING_COUNT 4u
#define MAX_STAGING_COUNT 1024u
#define MIN_RECORD_BUF ((size_t) 1024)
/* crc-then-copy granularity: the chunk is still in L1/L2 when memcpy reads it again. */
#define COPY_CHUNK ((size_t) 16384)
/* Appends of at least this many bytes skip the staging buffers on a log without O_DIRECT
 * (append_straight): from 4 KiB up a write call per append costs less than the second copy
 * (bench/bench_append into /dev/shm: 4 KiB 1.1-1.4 GB/s straight against 1.0-1.2 staged, 8 KiB
 * 1.4-1.6 against 1.2; at 2 KiB staging wins, 1.0-1.2 against 0.9-1.1). Then the crc-then-write
 * granularity on that path, as COPY_CHUNK above. */
#define DEFAULT_STRAIGHT_MIN ((size_t) 4096)
/* In a node's log pair each write to the data file takes the inode lock that the node's other
 * processes wait on: appends below 1 MiB are staged there, so that the file sees one write per
 * staging buffer instead of one per append. */
#define PAIR_STRAIGHT_MIN ((size_t) 1 << 20)
#define STRAIGHT_CHUNK ((size_t) 65536)

enum stage_state { ST_FREE, ST_FILLING, ST_BUSY };

struct stage {
    unsigned char *buf;         /* ssize bytes, ALIGN-aligned */
    uint64_t start;             /* data log offset of buf[0] */
    size_t fill;                /* valid bytes in buf */
    size_t wlen;                /* bytes of the current/last write (fill, padded under direct) */
    enum stage_state state;
    struct iocb cb;
};

struct bblog_log {
    int dirfd;                  /* the log directory: creation, unlink and its fsync */
    int fd_meta;
    int fd_data;                /* writes: O_DIRECT when direct, else == fd_rdata */
    int fd_rdata;               /* buffered: reads, truncation, unaligned remainders */
    /* In a node's log pair (bblog_format.h) the slot's place: every meta and data offset of
     * this log is relative to mbase and dbase, and stays below mlim and dlim; a log of its
     * own has bases 0 and no limits (UINT64_MAX). */
    uint64_t mbase, dbase, mlim, dlim;
    uint32_t slots, slot;
    int joined;                 /* counted in the pair's processes: must leave it */
    int own_slot;               /* found the slot free: it is this log's to empty */
    int direct, aio, aio_dead;  /* aio_dead: io_getevents failed, completions unknowable */
    io_context_t ctx;
    struct io_event *events;    /* nst entries */
    struct stage *st;
    unsigned nst, cur, nbusy;
    size_t ssize;
    size_t straight_min;        /* appends this large skip the staging buffers (not direct) */
    uint64_t data_end;          /* logical size of the data log in this epoch */
    uint64_t trim;              /* trim point of this epoch (bblog_log_trim) */
    uint64_t punched;           /* data log bytes below this are holes */
    uint64_t submitted_end;
    unsigned char *rbuf;        /* pending encoded records */
    size_t rcount, rcap;
    uint64_t rec_written;       /* records on disk in this epoch */
    uint64_t seq;               /* last sequence number handed out */
    uint32_t gen;
    int err, err_reported;
    int data_dirty, meta_dirty, dir_synced;
    struct bblog_log_header hdr;
    char *meta_name, *data_name, *meta_path, *data_path;
    struct bblog_log_stats stats;
};

/*
 * AIO contexts are kept for the next log of the process instead of destroyed: io_destroy
 * waits for an RCU grace period, measured at 32 ms here, which every close of a file paid
 * (about a quarter of a small file's close). A context goes back to the pool only idle
 * (every write reaped); the pool is bounded, and the kernel frees what it holds at exit.
 */
#define CTX_POOL 8

static struct {
    pthread_mutex_t lock;
    io_context_t ctx[CTX_POOL];
    unsigned nr[CTX_POOL];      /* capacity each was set up with */
    unsigned n;
} ctx_pool = { PTHREAD_MUTEX_INITIALIZER, { 0 }, { 0 }, 0 };

/* A context for at least nr writes in flight: from the pool, else io_setup. */
static int ctx_get(unsigned nr, io_context_t *ctx)
{
    unsigned i;

    pthread_mutex_lock(&ctx_pool.lock);
    for (i = 0; i < ctx_pool.n; i++)
        if (ctx_pool.nr[i] >= nr) {
            *ctx = ctx_pool.ctx[i];
            ctx_pool.n--;
            ctx_pool.ctx[i] = ctx_pool.ctx[ctx_pool.n];
            ctx_pool.nr[i] = ctx_pool.nr[ctx_pool.n];
            pthread_mutex_unlock(&ctx_pool.lock);
            return 0;
        }
    pthread_mutex_unlock(&ctx_pool.lock);
    *ctx = 0;
    return io_setup((int) nr, ctx);
}

/* An idle context back to the pool; destroyed when the pool is full. */
static void ctx_put(io_context_t ctx, unsigned nr)
{
    pthread_mutex_lock(&ctx_pool.lock);
    if (ctx_pool.n < CTX_POOL) {
        ctx_pool.ctx[ctx_pool.n] = ctx;
        ctx_pool.nr[ctx_pool.n++] = nr;
        ctx = 0;
    }
    pthread_mutex_unlock(&ctx_pool.lock);
    if (ctx)
        io_destroy(ctx);
}

int bblog_window_read(struct bblog_window *w, size_t cap, int fd, void *out, size_t n,
                      uint64_t off, size_t *done)
{
    size_t k;

    if (n >= cap)
        return bblog_io_full(fd, out, n, off, 0, done);
    if (!w->buf && !(w->buf = malloc(cap)))
        return ENOMEM;
    if (off < w->off || off + n > w->off + w->len) {
        size_t got = 0;
        int rc = bblog_io_full(fd, w->buf, cap, off, 0, &got);

        if (rc != 0)
            return rc;
        w->off = off;
        w->len = got;
    }
    k = off + n <= w->off + w->len ? n : (size_t) (w->off + w->len - off);
    memcpy(out, w->buf + (off - w->off), k);
    *done = k;
    return 0;
}

void bblog_window_free(struct bblog_window *w)
{
    free(w->buf);
    w->buf = NULL;
    w->len = 0;
}

int bblog_io_full(int fd, void *buf, size_t len, uint64_t off, int is_write, size_t *done)
{
    unsigned char *p = buf;
    size_t got = 0;
    int rc = 0;

    if (off > (uint64_t) INT64_MAX || len > (uint64_t) INT64_MAX - off) {
        rc = EOVERFLOW;
        goto out;
    }
    while (got < len) {
        ssize_t n = is_write ? pwrite(fd, p + got, len - got, (off_t) (off + got))
                             : pread(fd, p + got, len - got, (off_t) (off + got));

        if (n > 0) {
            got += (size_t) n;
        } else if (n == 0) {
            /* End of file for a read; for a write, no progress and no error: give up
             * rather than spin. */
            if (is_write)
                rc = EIO;
            break;
        } else if (errno != EINTR) {
            rc = errno;
            break;
        }
    }
out:
    if (done != NULL)
        *done = got;
    return rc;
}

int bblog_io_sync(int fd, int data_only)
{
    while ((data_only ? fdatasync(fd) : fsync(fd)) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

int bblog_io_in_memory(int fd)
{
    struct statfs sf;

    return fstatfs(fd, &sf) == 0
        && ((long) sf.f_type == TMPFS_MAGIC_ || (long) sf.f_type == RAMFS_MAGIC_);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Records the first failure of a durable write; returns the error the caller must give up
 * with (the first one). */
static int fail(struct bblog_log *log, int rc)
{
    if (log->err == 0)
        log->err = rc;
    log->stats.failures++;
    log->stats.last_failure = rc;
    return log->err;
}

/* At the entry of an API call: 0, or the code to return on a failed log. */
static int check_failed(struct bblog_log *log)
{
    if (log->err == 0)
        return 0;
    if (log->err_reported)
        return BBLOG_ESTICKY;
    log->err_reported = 1;
    return log->err;
}

/* At the exit of an API call: once a failure was returned, later calls say BBLOG_ESTICKY. */
static int leave(struct bblog_log *log, int rc)
{
    if (rc != 0 && log->err != 0)
        log->err_reported = 1;
    return rc;
}

/* Writes bytes [from, wlen) of b to the data log, synchronously. */
static int stage_write(struct bblog_log *log, struct stage *b, size_t from)
{
    size_t done = 0;
    int rc = bblog_io_full(log->fd_data, b->buf + from, b->wlen - from,
                           log->dbase + b->start + from, 1, &done);

    if (rc == EINVAL && log->direct && (from + done) % ALIGN != 0) {
        /* A short write that stopped off a block boundary leaves a remainder O_DIRECT refuses;
         * the buffered descriptor takes it (the kernel keeps its page cache coherent with
         * direct I/O to the same range, and fdatasync covers both). */
        from += done;
        rc = bblog_io_full(log->fd_rdata, b->buf + from, b->wlen - from,
                           log->dbase + b->start + from, 1, NULL);
    }
    return rc;
}

/* Starts the write of b's fill bytes (padded under O_DIRECT). */
static int stage_submit(struct bblog_log *log, struct stage *b)
{
    size_t wlen = b->fill;
    int rc;

    if (log->direct) {
        wlen = (b->fill + ALIGN - 1) & ~(ALIGN - 1);
        memset(b->buf + b->fill, 0, wlen - b->fill);
    }
    b->wlen = wlen;
    log->submitted_end = b->start + b->fill;
    log->data_dirty = 1;
    if (log->aio) {
        struct iocb *cbp = &b->cb;

        io_prep_pwrite(cbp, log->fd_data, b->buf, wlen, (long long) (log->dbase + b->start));
        cbp->data = b;
        do
            rc = io_submit(log->ctx, 1, &cbp);
        while (rc == -EINTR);
        if (rc == 1) {
            b->state = ST_BUSY;
            log->nbusy++;
            log->stats.aio_submits++;
            return 0;
        }
        /* EAGAIN (or nothing queued): the kernel is short of AIO resources right now. The
         * buffer is written synchronously instead: slower, but nothing is lost. Anything else
         * is a broken descriptor or context. */
        if (rc < 0 && rc != -EAGAIN)
            return fail(log, -rc);
    }
    log->stats.sync_writes++;
    rc = stage_write(log, b, 0);
    b->state = ST_FREE;
    return rc != 0 ? fail(log, rc) : 0;
}

/* Collects at least min_nr completions and finishes them: a short write is completed
 * synchronously, a failed one fails the log. */
static int stage_reap(struct bblog_log *log, long min_nr)
{
    long n;
    int rc = 0;

    if (log->aio_dead)
        return fail(log, EIO);
    do
        n = io_getevents(log->ctx, min_nr, (long) log->nbusy, log->events, NULL);
    while (n == -EINTR);
    if (n < 0) {
        /* Without io_getevents the fate of the writes in flight cannot be known: the log is
         * failed, and close relies on io_destroy to wait for them before freeing buffers. */
        log->aio_dead = 1;
        return fail(log, (int) -n);
    }
    for (long i = 0; i < n; i++) {
        struct stage *b = log->events[i].data;
        long res = (long) log->events[i].res;
        int r = 0;

        b->state = ST_FREE;
        log->nbusy--;
        if (res < 0)
            r = (int) -res;
        else if ((size_t) res < b->wlen)
            r = stage_write(log, b, (size_t) res);
        if (r != 0 && rc == 0)
            rc = fail(log, r);
    }
    return rc;
}

/* Waits for every write in flight; returns the first error among them. */
static int stage_wait_all(struct bblog_log *log)
{
    int rc = 0;

    while (log->nbusy > 0 && !log->aio_dead) {
        int r = stage_reap(log, (long) log->nbusy);

        if (r != 0 && rc == 0)
            rc = r;
    }
    if (log->aio_dead && rc == 0)
        rc = fail(log, EIO);
    return rc;
}

/* Makes st[cur] a filling buffer, waiting for its previous write if still in flight. */
static int stage_acquire(struct bblog_log *log)
{
    struct stage *b = &log->st[log->cur];

    if (b->state == ST_FILLING)
        return 0;
    if (b->state == ST_BUSY) {
        log->stats.waits++;
        while (b->state == ST_BUSY) {
            int rc = stage_reap(log, 1);

            if (rc != 0)
                return rc;
        }
    }
    b->state = ST_FILLING;
    b->start = log->data_end;
    b->fill = 0;
    return 0;
}

/* Writes out the filling buffer, even partial, and waits for every write: afterwards all of
 * [0, data_end) has been written. Under O_DIRECT the partial last block is carried over. */
static int stage_flush(struct bblog_log *log)
{
    struct stage *b = &log->st[log->cur];
    int submitted = 0;
    int rc = 0, r;

    if (b->state == ST_FILLING && b->start + b->fill > log->submitted_end) {
        rc = stage_submit(log, b);
        submitted = 1;
    }
    r = stage_wait_all(log);
    if (rc == 0)
        rc = r;
    if (rc == 0 && submitted && log->direct) {
        size_t keep = b->fill % ALIGN;
        size_t drop = b->fill - keep;

        if (keep > 0) {
            memmove(b->buf, b->buf + drop, keep);
            b->start += drop;
            b->fill = keep;
            b->state = ST_FILLING;
        }
    }
    return rc;
}

/* Makes every appended payload durable: written (stage_flush), then fdatasync'd. */
static int payloads_durable(struct bblog_log *log)
{
    int rc = stage_flush(log);

    if (rc == 0 && log->data_dirty) {
        rc = bblog_io_sync(log->fd_data, 1);
        if (rc != 0)
            return fail(log, rc);
        log->data_dirty = 0;
    }
    return rc;
}

/* Writes the pending records after those on disk. Only call when their payloads are durable
 * (payloads_durable), so that no record can ever be on disk without its payload. */
static int records_write(struct bblog_log *log)
{
    int rc;

    if (log->rcount == 0)
        return 0;
    if ((log->rec_written + log->rcount) * BBLOG_RECORD_SIZE > log->mlim - BBLOG_HEADER_SIZE)
        return fail(log, ENOSPC);       /* the slot is full (bblog_format.h) */
    rc = bblog_io_full(log->fd_meta, log->rbuf, log->rcount * BBLOG_RECORD_SIZE,
                       log->mbase + BBLOG_HEADER_SIZE + log->rec_written * BBLOG_RECORD_SIZE, 1,
                       NULL);
    if (rc != 0)
        return fail(log, rc);
    log->rec_written += log->rcount;
    log->rcount = 0;
    log->meta_dirty = 1;
    return 0;
}

/* crc32c of n bytes of src, copied to dst chunk by chunk while the chunk is still in cache:
 * the caller's bytes cross the memory bus once. */
static uint32_t copy_crc(unsigned char *dst, const unsigned char *src, size_t n, uint32_t crc)
{
    while (n > 0) {
        size_t k = n < COPY_CHUNK ? n : COPY_CHUNK;

        crc = bblog_crc32c(crc, src, k);
        memcpy(dst, src, k);
        dst += k;
        src += k;
        n -= k;
    }
    return crc;
}

/* Copies len bytes of src into the staging buffers, submitting each one that fills. */
static int append_staged(struct bblog_log *log, const unsigned char *src, uint64_t len,
                         uint32_t *crc)
{
    while (len > 0) {
        struct stage *b;
        size_t n;
        int rc = stage_acquire(log);

        if (rc != 0)
            return rc;
        b = &log->st[log->cur];
        n = log->ssize - b->fill;
        if (n > len)
            n = (size_t) len;
        *crc = copy_crc(b->buf + b->fill, src, n, *crc);
        b->fill += n;
        src += n;
        len -= n;
        log->data_end += n;
        if (b->fill == log->ssize) {
            log->cur = (log->cur + 1) % log->nst;
            rc = stage_submit(log, b);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

/*
 * Writes len bytes of src to the data log from the caller's buffer. Without O_DIRECT the
 * kernel copies every write into the page cache, synchronously even under libaio, so for a
 * large payload a staging buffer is only a second copy (on a memory-backed burst buffer, where
 * the page cache is the device, half the cost of logging). The CRC is taken chunk by chunk
 * just before the kernel reads the chunk. The filling buffer is submitted first: the log's
 * bytes keep going out in offset order and the buffer invariants hold. data_end moves only
 * once every byte is written.
 */
static int append_straight(struct bblog_log *log, const unsigned char *src, uint64_t len,
                           uint32_t *crc)
{
    struct stage *b = &log->st[log->cur];
    uint64_t pos = log->data_end;
    int rc;

    if (b->state == ST_FILLING && b->fill > 0) {
        log->cur = (log->cur + 1) % log->nst;
        rc = stage_submit(log, b);
        if (rc != 0)
            return rc;
    } else if (b->state == ST_FILLING) {
        b->state = ST_FREE;     /* empty: the next append starts it at the new data_end */
    }
    log->data_dirty = 1;
    while (len > 0) {
        size_t k = len < STRAIGHT_CHUNK ? (size_t) len : STRAIGHT_CHUNK;

        *crc = bblog_crc32c(*crc, src, k);
        /* bblog_io_full takes one buffer type for both directions; a write only reads it. */
        rc = bblog_io_full(log->fd_data, (void *) (uintptr_t) src, k, log->dbase + pos, 1, NULL);
        if (rc != 0)
            return fail(log, rc);
        src += k;
        pos += k;
        len -= k;
    }
    log->data_end = pos;
    log->submitted_end = pos;
    log->stats.straight_writes++;
    return 0;
}

int bblog_log_append(struct bblog_log *log, uint64_t off, uint64_t len, const void *buf,
                     uint64_t *data_off)
{
    struct bblog_log_record r;
    uint32_t crc = 0;
    double t0;
    int rc;

    if (log == NULL)
        return BBLOG_EINVAL;
    rc = check_failed(log);
    if (rc != 0)
        return rc;
    if (len == 0) {
        if (data_off != NULL)
            *data_off = log->data_end;
        return 0;
    }
    if (buf == NULL || len > UINT64_MAX - off || len > (uint64_t) INT64_MAX - log->data_end)
        return BBLOG_EINVAL;
    if (len > log->dlim - log->data_end)
        return leave(log, fail(log, ENOSPC));   /* the slot is full (bblog_format.h) */

    t0 = now();
    if (log->rcount == log->rcap) {
        rc = payloads_durable(log);
        if (rc == 0)
            rc = records_write(log);
        if (rc != 0)
            goto out;
    }
    r.data_off = log->data_end;
    if (!log->direct && len >= log->straight_min)
        rc = append_straight(log, buf, len, &crc);
    else
        rc = append_staged(log, buf, len, &crc);
    if (rc != 0)
        goto out;
    r.seq = ++log->seq;
    r.off = off;
    r.len = len;
    r.epoch = log->hdr.epoch;
    r.gen = log->gen;
    r.flags = 0;
    bblog_record_encode(&r, crc, log->rbuf + log->rcount * BBLOG_RECORD_SIZE);
    log->rcount++;
    log->stats.bytes_appended += len;
    log->stats.records++;
    if (data_off != NULL)
        *data_off = r.data_off;
out:
    log->stats.append_seconds += now() - t0;
    return leave(log, rc);
}

static int no_payload_record(struct bblog_log *log, uint64_t off, uint64_t len,
                             uint32_t flags);

int bblog_log_keep(struct bblog_log *log, uint64_t off, uint64_t len)
{
    return no_payload_record(log, off, len, BBLOG_REC_KEEP);
}

int bblog_log_pfs(struct bblog_log *log, uint64_t off, uint64_t len)
{
    return no_payload_record(log, off, len, BBLOG_REC_PFS);
}

static int no_payload_record(struct bblog_log *log, uint64_t off, uint64_t len,
                             uint32_t flags)
{
    struct bblog_log_record r;
    int rc;

    if (log == NULL || len == 0 || len > UINT64_MAX - off)
        return BBLOG_EINVAL;
    rc = check_failed(log);
    if (rc != 0)
        return rc;
    if (log->rcount == log->rcap) {
        rc = payloads_durable(log);
        if (rc == 0)
            rc = records_write(log);
        if (rc != 0)
            return leave(log, rc);
    }
    r.seq = ++log->seq;
    r.off = off;
    r.len = len;
    r.data_off = log->data_end;
    r.epoch = log->hdr.epoch;
    r.gen = log->gen;
    r.flags = flags;
    bblog_record_encode(&r, 0, log->rbuf + log->rcount * BBLOG_RECORD_SIZE);
    log->rcount++;
    return 0;
}

/* Records the sync just completed in the header's sync slot count % 2 and makes it durable
 * (bblog_format.h): from then on, damage to the records and payloads it covers is reported as
 * corruption, never dropped as a torn tail. Nothing to do when nothing was written since. */
static int sync_slot_write(struct bblog_log *log)
{
    struct bblog_log_synced *y = &log->hdr.synced;
    unsigned char slot[BBLOG_SYNC_SLOT_SIZE];
    uint64_t meta_end = BBLOG_HEADER_SIZE + log->rec_written * BBLOG_RECORD_SIZE;
    int rc;

    if (y->count > 0 && y->meta_end == meta_end && y->data_end == log->data_end &&
        y->trim == log->trim)
        return 0;
    if (y->count == 0 && log->rec_written == 0)
        return 0;
    y->count++;
    y->epoch = log->hdr.epoch;
    y->seq = log->seq;
    y->meta_end = meta_end;
    y->data_end = log->data_end;
    y->trim = log->trim;
    bblog_sync_slot_encode(y, slot);
    rc = bblog_io_full(log->fd_meta, slot, sizeof slot,
                       log->mbase + (y->count % 2 ? BBLOG_H_SYNC1 : BBLOG_H_SYNC0), 1, NULL);
    if (rc == 0)
        rc = bblog_io_sync(log->fd_meta, 1);
    return rc != 0 ? fail(log, rc) : 0;
}

/*
 * Durability order, and why:
 * 1. complete every data write (including the padded tail block under O_DIRECT);
 * 2. fdatasync the data log: the payloads reach stable storage;
 * 3. only then write the pending records: the kernel may write the meta log's pages back at any
 *    moment after pwrite, so a record written before step 2 could survive a crash that its
 *    payload did not, and replay would meet a record with a bad payload in the middle of the
 *    log (corruption) instead of a torn tail;
 * 4. fdatasync the meta log: the records are durable;
 * 5. once per log, fsync the directory, so that the two names survive a crash too;
 * 6. write the sync slot and fdatasync the meta log again: only now may sync return. The slot
 *    is written after the records are durable, so it never names a record a crash could tear.
 */
int bblog_log_sync(struct bblog_log *log)
{
    double t0;
    int rc;

    if (log == NULL)
        return BBLOG_EINVAL;
    rc = check_failed(log);
    if (rc != 0)
        return rc;
    t0 = now();
    rc = payloads_durable(log);
    if (rc == 0)
        rc = records_write(log);
    if (rc == 0 && log->meta_dirty) {
        rc = bblog_io_sync(log->fd_meta, 1);
        if (rc != 0)
            rc = fail(log, rc);
        else
            log->meta_dirty = 0;
    }
    if (rc == 0 && !log->dir_synced) {
        rc = bblog_io_sync(log->dirfd, 0);
        if (rc != 0)
            rc = fail(log, rc);
        else
            log->dir_synced = 1;
    }
    if (rc == 0)
        rc = sync_slot_write(log);
    log->stats.sync_seconds += now() - t0;
    return leave(log, rc);
}

int bblog_log_trim(struct bblog_log *log, uint64_t upto)
{
    uint64_t end;
    int rc;

    if (log == NULL || upto > log->data_end)
        return BBLOG_EINVAL;
    if (upto <= log->trim)
        return 0;
    log->trim = upto;
    rc = bblog_log_sync(log);
    if (rc != 0)
        return rc;
    /* Only now, with the slot that names the new trim point durable (sync waited for every
     * write in flight), may its bytes become holes. */
    end = upto & ~(uint64_t) (ALIGN - 1);
    if (end > log->punched) {
        if (fallocate(log->fd_rdata, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      (off_t) (log->dbase + log->punched), (off_t) (end - log->punched)) == 0)
            log->punched = end;
        /* else: no holes on this file system; the bytes stay allocated until the drain. */
    }
    return 0;
}

int bblog_log_flush(struct bblog_log *log)
{
    if (log == NULL)
        return BBLOG_EINVAL;
    /* A failed log is not reported here (the driver then drains it the other way, and its
     * next append reports the failure as usual). */
    if (log->err != 0)
        return log->err;
    return stage_flush(log);
}

/*
 * Bytes still in a staging buffer (filling, in flight, or written but not yet reused) are
 * copied from memory: a buffer is not modified while the kernel writes it, so no wait is
 * needed. Every other byte belongs to a write that completed before its buffer was reused, and
 * is read from the file through the buffered descriptor.
 */
int bblog_log_read(struct bblog_log *log, uint64_t data_off, uint64_t len, void *buf)
{
    unsigned char *dst = buf;
    uint64_t pos = data_off, end;
    int rc;

    if (log == NULL)
        return BBLOG_EINVAL;
    /* No check_failed here: after a failure the bytes of the log are still where the
     * invariants say (in a staging buffer, or on disk), and reading them back is how the
     * driver drains or writes through what was acknowledged before the failure. */
    if (len == 0)
        return 0;
    if (buf == NULL || data_off > log->data_end || len > log->data_end - data_off)
        return BBLOG_EINVAL;
    end = data_off + len;
    while (pos < end) {
        const struct stage *hit = NULL;
        uint64_t next = end, n;

        for (unsigned i = 0; i < log->nst; i++) {
            const struct stage *b = &log->st[i];

            if (b->fill == 0)
                continue;
            if (b->start <= pos && pos < b->start + b->fill) {
                hit = b;
                break;
            }
            if (b->start > pos && b->start < next)
                next = b->start;
        }
        if (hit != NULL) {
            n = hit->start + hit->fill - pos;
            if (n > end - pos)
                n = end - pos;
            memcpy(dst, hit->buf + (pos - hit->start), (size_t) n);
        } else {
            size_t done = 0;

            n = next - pos;
            rc = bblog_io_full(log->fd_rdata, dst, (size_t) n, log->dbase + pos, 0, &done);
            /* Short: the file ends before data_end, which only an outside truncation does. */
            if (rc == 0 && done < n)
                rc = EIO;
            if (rc != 0)
                return rc;
        }
        dst += n;
        pos += n;
    }
    return 0;
}

/* Zeros bytes [off, off + len) of fd: a hole where the file system punches one, else written
 * zeros. */
static int zero_range(int fd, uint64_t off, uint64_t len)
{
    static const unsigned char zeros[65536];

    if (len == 0 || fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t) off,
                              (off_t) len) == 0)
        return 0;
    while (len > 0) {
        size_t k = len < sizeof zeros ? (size_t) len : sizeof zeros;
        int rc = bblog_io_full(fd, (void *) (uintptr_t) zeros, k, off, 1, NULL);

        if (rc != 0)
            return rc;
        off += k;
        len -= k;
    }
    return 0;
}

/* Empties the log after its header: both files truncated, or in a node's pair the slot's
 * records zeroed (a zero slot ends a log) and its payloads punched where possible (only
 * space: no record names them any more). */
static int log_empty(struct bblog_log *log)
{
    uint64_t used;

    if (!log->slots) {
        if (ftruncate(log->fd_meta, BBLOG_HEADER_SIZE) != 0 || ftruncate(log->fd_rdata, 0) != 0)
            return errno;
        return 0;
    }
    used = (log->rec_written + log->rcount) * BBLOG_RECORD_SIZE;
    if (used > log->mlim - BBLOG_HEADER_SIZE)
        used = log->mlim - BBLOG_HEADER_SIZE;
    if (log->data_end > 0)
        (void) fallocate(log->fd_rdata, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                         (off_t) log->dbase, (off_t) log->data_end);
    return zero_range(log->fd_meta, log->mbase + BBLOG_HEADER_SIZE, used);
}

/*
 * Order, and why:
 * 1. wait for every write in flight: none may land after the truncation below (it would
 *    re-extend the emptied data log); staged bytes and pending records are dropped, they are
 *    drained;
 * 2. write the header with epoch + 1, fdatasync the meta log: from then on replay ignores
 *    every record of the drained epoch, whatever happens next. Truncating first would not do:
 *    if the truncation of the data log reached the disk but not that of the meta log, the
 *    drained records would be left pointing at missing payloads in the still current epoch;
 * 3. truncate both files to an empty log (in a node's pair: zero the slot's records);
 * 4. fdatasync the meta log again: the truncation must be durable before records of the new
 *    epoch are written over the old slots, or a crash could leave old records after new ones
 *    (a break in seq that the scanner must call corruption).
 */
int bblog_log_mark_drained(struct bblog_log *log)
{
    return bblog_log_mark_drained_gen(log, log ? log->hdr.drained_gen : 0);
}

int bblog_log_mark_drained_gen(struct bblog_log *log, uint32_t drained_gen)
{
    unsigned char hbuf[BBLOG_HEADER_SIZE];
    int rc;

    if (log == NULL)
        return BBLOG_EINVAL;
    /* A failed log may still be marked drained once its data is safe elsewhere (a full burst
     * buffer, drained): the header is rewritten in place and the files emptied, after which
     * the log is consistent and usable again. Not when libaio itself broke: writes of unknown
     * fate could land after the truncation. */
    if (log->aio_dead)
        return check_failed(log);
    /* A staged write that failed does not matter any more: the drain read its bytes from the
     * staging buffer, which still held them, and they are on the PFS now. Waiting is what
     * matters: no write of the old epoch may land after the truncation below. */
    (void) stage_wait_all(log);
    log->hdr.epoch++;
    if (drained_gen > log->hdr.drained_gen)
        log->hdr.drained_gen = drained_gen;
    memset(&log->hdr.synced, 0, sizeof log->hdr.synced);     /* nothing of the new epoch */
    bblog_header_encode(&log->hdr, hbuf);
    rc = bblog_io_full(log->fd_meta, hbuf, sizeof hbuf, log->mbase, 1, NULL);
    if (rc == 0)
        rc = bblog_io_sync(log->fd_meta, 1);
    if (rc == 0)
        rc = log_empty(log);
    if (rc == 0)
        rc = bblog_io_sync(log->fd_meta, 1);
    if (rc != 0) {
        rc = fail(log, rc);
        goto out;
    }
    for (unsigned i = 0; i < log->nst; i++) {
        log->st[i].state = ST_FREE;
        log->st[i].start = 0;
        log->st[i].fill = 0;
    }
    log->data_end = 0;
    log->trim = 0;
    log->punched = 0;
    log->submitted_end = 0;
    log->rcount = 0;
    log->rec_written = 0;
    log->data_dirty = 0;
    log->meta_dirty = 0;
    log->err = 0;
    log->err_reported = 0;
out:
    return leave(log, rc);
}

void bblog_log_set_gen(struct bblog_log *log, uint32_t gen)
{
    log->gen = gen;
}

void bblog_log_get_stats(const struct bblog_log *log, struct bblog_log_stats *st)
{
    *st = log->stats;
    st->data_size = log->data_end;
    st->trim = log->trim;
    st->punched = log->punched;
    st->epoch = log->hdr.epoch;
    st->direct = log->direct;
    st->aio = log->aio;
}

int bblog_log_in_pair(const struct bblog_log *log)
{
    return log->slots > 0;
}

uint64_t bblog_log_data_base(const struct bblog_log *log)
{
    return log->dbase;
}

const char *bblog_log_meta_path(const struct bblog_log *log)
{
    return log->meta_path;
}

const char *bblog_log_data_path(const struct bblog_log *log)
{
    return log->data_path;
}

/* Takes (op LOCK_EX) or releases (LOCK_UN) a node pair's lock, held while a process joins or
 * leaves it, so that the last one out removes the names only when no one is joining: a
 * record lock on the count of processes (bblog_format.h). Record locks only, for this and
 * for the slots' (an flock of the whole file would conflict with them where a FUSE file
 * system makes flock a record lock of the whole file). */
static int pair_lock(struct bblog_log *log, int op)
{
    struct flock fl = { .l_type = op == LOCK_EX ? F_WRLCK : F_UNLCK, .l_whence = SEEK_SET,
                        .l_start = BBLOG_NODE_USERS, .l_len = 8 };

    while (fcntl(log->fd_meta, F_OFD_SETLKW, &fl) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* 1 when slot k of the pair holds no log (its header reads as zeros), 0, or an errno. */
static int slot_empty(struct bblog_log *log, uint32_t k)
{
    unsigned char m[8];
    size_t done = 0;
    int rc = bblog_io_full(log->fd_meta, m, sizeof m, bblog_node_meta_base(log->hdr.lg, k), 0,
                           &done);

    if (rc != 0)
        return -rc;
    return done < sizeof m || bblog_get_le64(m) == 0;
}

/* The count of processes in the pair (bblog_format.h): read into *n (0 when never written), or
 * written from n. 0 or an errno. */
static int pair_users(struct bblog_log *log, uint64_t *n, int is_write)
{
    unsigned char b[8] = { 0 };
    size_t done = 0;
    int rc;

    if (is_write)
        bblog_put_le64(b, *n);
    rc = bblog_io_full(log->fd_meta, b, sizeof b, BBLOG_NODE_USERS, is_write, &done);
    if (rc == 0 && !is_write)
        *n = done < sizeof b ? 0 : bblog_get_le64(b);
    return rc;
}

/* Leaves a node pair: this slot's log is emptied (a zero header: no log), and the last
 * process out (the count of processes in the pair back at 0, under the pair's lock, which is
 * held for the count alone) removes the two names. A count that reads 0 (damage) removes
 * nothing. */
static int slot_leave(struct bblog_log *log)
{
    int rc, last = 0;
    uint64_t n = 0;

    rc = 0;
    if (log->own_slot) {
        (void) fallocate(log->fd_rdata, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                         (off_t) log->dbase, (off_t) log->dlim);
        rc = zero_range(log->fd_meta, log->mbase,
                        BBLOG_HEADER_SIZE + log->rec_written * BBLOG_RECORD_SIZE);
    }
    if (rc == 0)
        rc = pair_lock(log, LOCK_EX);
    if (rc != 0)
        return rc;
    rc = pair_users(log, &n, 0);
    if (rc == 0 && n > 0) {
        n--;
        last = n == 0;
        rc = pair_users(log, &n, 1);
    }
    if (rc == 0 && last) {
        if (unlinkat(log->dirfd, log->meta_name, 0) != 0 && errno != ENOENT)
            rc = errno;
        if (unlinkat(log->dirfd, log->data_name, 0) != 0 && errno != ENOENT && rc == 0)
            rc = errno;
    }
    (void) pair_lock(log, LOCK_UN);
    return rc;
}

/* Releases everything and unlinks the names asked for (in a node's pair: leaves it). Returns
 * the first error. */
static int log_destroy(struct bblog_log *log, int unlink_meta, int unlink_data)
{
    int rc = 0;

    if (log->aio && (log->aio_dead || log->nbusy > 0))
        io_destroy(log->ctx);   /* also waits for any write io_getevents could not report */
    else if (log->aio)
        ctx_put(log->ctx, log->nst);
    /* Names first, descriptors after: the meta log's lock (bblog_log_live) is held until
     * the names are gone. */
    if (log->slots) {
        if (unlink_meta && log->joined)
            rc = slot_leave(log);
    } else {
        if (unlink_meta && unlinkat(log->dirfd, log->meta_name, 0) != 0 && rc == 0)
            rc = errno;
        if (unlink_data && unlinkat(log->dirfd, log->data_name, 0) != 0 && rc == 0)
            rc = errno;
    }
    if (log->fd_data >= 0 && log->fd_data != log->fd_rdata && close(log->fd_data) != 0)
        rc = errno;
    if (log->fd_rdata >= 0 && close(log->fd_rdata) != 0 && rc == 0)
        rc = errno;
    if (log->fd_meta >= 0 && close(log->fd_meta) != 0 && rc == 0)
        rc = errno;
    if (log->dirfd >= 0)
        close(log->dirfd);
    if (log->st != NULL)
        for (unsigned i = 0; i < log->nst; i++)
            free(log->st[i].buf);
    free(log->st);
    free(log->events);
    free(log->rbuf);
    free(log->meta_name);
    free(log->data_name);
    free(log->meta_path);
    free(log->data_path);
    free(log);
    return rc;
}

int bblog_log_live(const char *meta_path)
{
    int fd = open(meta_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), live;
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };

    if (fd < 0)
        return 0;
    live = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    /* The processes of a node's pair each hold a lock on the first byte of their slot. */
    if (!live && fcntl(fd, F_OFD_GETLK, &fl) == 0)
        live = fl.l_type != F_UNLCK;
    close(fd);
    return live;
}

int bblog_log_close(struct bblog_log *log, int remove)
{
    int rc, r;

    if (log == NULL)
        return 0;
    if (log->err != 0)
        rc = check_failed(log);
    else if (!remove)
        rc = bblog_log_sync(log);   /* kept logs are complete and durable */
    else
        rc = 0;
    r = stage_wait_all(log);
    if (rc == 0 && r != 0)
        rc = leave(log, r);
    r = log_destroy(log, remove, remove);
    return rc != 0 ? rc : r;
}

int bblog_log_abandon(struct bblog_log *log)
{
    int rc, r;

    if (log == NULL)
        return 0;
    rc = check_failed(log);
    if (rc == 0)
        rc = stage_flush(log);
    if (rc == 0)
        rc = records_write(log);
    r = stage_wait_all(log);
    if (rc == 0 && r != 0)
        rc = r;
    r = log_destroy(log, 0, 0);
    return rc != 0 ? rc : r;
}

/* A short write-lifetime hint: the logs live until the next drain. It is advice, so a kernel or
 * file system that does not take it (EINVAL, ENOTTY, EOPNOTSUPP...) changes nothing. */
static void set_rw_hint(int fd)
{
    uint64_t hint = RWH_WRITE_LIFE_SHORT;

    (void) fcntl(fd, F_SET_RW_HINT, &hint);
}

static char *concat3(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *s = malloc(la + lb + lc + 1);

    if (s != NULL) {
        memcpy(s, a, la);
        memcpy(s + la, b, lb);
        memcpy(s + la + lb, c, lc + 1);
    }
    return s;
}

/*
 * Opens the data log a second time with O_DIRECT and checks that an aligned write of the first
 * block goes through; on success the descriptor becomes the write descriptor. O_DIRECT is
 * simply not used when the open or the test write says EINVAL (or the open fails otherwise:
 * the buffered path still works); other write errors (ENOSPC, EIO) are real and returned.
 */
static int probe_direct(struct bblog_log *log)
{
    struct stat a, b;
    int fd, rc = 0;

    /* tmpfs takes O_DIRECT (Linux 6.6 on) and still copies through its page cache: direct
     * would only add the padding and the staging copy that append_straight avoids. */
    if (bblog_io_in_memory(log->fd_rdata))
        return 0;
    fd = openat(log->dirfd, log->data_name, O_WRONLY | O_DIRECT | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    /* The name was just created (O_EXCL, or joined under the pair's lock) in our directory;
     * make sure it is still that file. */
    if (fstat(fd, &a) != 0 || fstat(log->fd_rdata, &b) != 0) {
        rc = errno;
        goto fail;
    }
    if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
        rc = EEXIST;
        goto fail;
    }
    memset(log->st[0].buf, 0, ALIGN);
    rc = bblog_io_full(fd, log->st[0].buf, ALIGN, log->dbase, 1, NULL);
    if (rc == EINVAL) {
        rc = 0;
        goto fail;
    }
    if (rc == 0 && log->slots)
        (void) fallocate(log->fd_rdata, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                         (off_t) log->dbase, (off_t) ALIGN);
    else if (rc == 0 && ftruncate(log->fd_rdata, 0) != 0)
        rc = errno;
    if (rc != 0)
        goto fail;
    log->fd_data = fd;
    log->direct = 1;
    return 0;
fail:
    close(fd);
    return rc;
}

/* A regular file of ours, still under its name in the log directory. */
static int same_file(struct bblog_log *log, int fd, const char *name)
{
    struct stat a, b;

    if (fstat(fd, &a) != 0 || fstatat(log->dirfd, name, &b, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? EAGAIN : errno;
    if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return EAGAIN;
    return S_ISREG(a.st_mode) && a.st_uid == geteuid() ? 0 : EPERM;
}

/* Opens or creates NAME of a node's pair in the log directory. Where two processes create it at
 * once, some FUSE file systems (GlusterFS) fail one O_CREAT with EEXIST: it then opens what the
 * other made. */
static int open_pair_file(struct bblog_log *log, const char *name)
{
    const int oflags = O_RDWR | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(log->dirfd, name, oflags | O_CREAT, 0600);

    if (fd < 0 && errno == EEXIST)
        fd = openat(log->dirfd, name, oflags);
    return fd;
}

/*
 * Joins a node's log pair (bblog_format.h) in slot p->slot: opens or creates the meta file and,
 * under the pair's lock (against the last process out removing the names), checks that it is
 * still the file of that name and counts itself in; from then on the names stay. Then, with
 * no lock held (the node's processes join at once), opens or creates the data file, checks
 * that the slot is free, writes the pair's header (every process writes the same bytes, so
 * that a pair whose slots hold logs has it whoever came first) and takes the slot's lock
 * (bblog_log_live). The caller writes the slot's header.
 */
static int slot_join(struct bblog_log *log, const struct bblog_log_params *p,
                     const struct bblog_log_header *pair)
{
    unsigned char hbuf[BBLOG_HEADER_SIZE];
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1 };
    uint64_t n = 0;
    int rc = EAGAIN;

    for (int tries = 0; rc == EAGAIN && tries < 100; tries++) {
        if (log->fd_meta >= 0)
            close(log->fd_meta);
        log->fd_meta = open_pair_file(log, log->meta_name);
        if (log->fd_meta < 0)
            return errno;
        rc = pair_lock(log, LOCK_EX);
        if (rc != 0)
            return rc;
        rc = same_file(log, log->fd_meta, log->meta_name);
        if (rc == 0)
            rc = pair_users(log, &n, 0);
        if (rc == 0) {
            n++;
            rc = pair_users(log, &n, 1);
        }
        (void) pair_lock(log, LOCK_UN);
    }
    if (rc != 0)
        return rc;
    log->joined = 1;
    log->fd_rdata = open_pair_file(log, log->data_name);
    if (log->fd_rdata < 0)
        return errno;
    rc = same_file(log, log->fd_rdata, log->data_name);
    if (rc == 0) {
        int e = slot_empty(log, p->slot);
        rc = e < 0 ? -e : e == 0 ? EEXIST : 0;
        log->own_slot = rc == 0;
    }
    if (rc == 0) {
        bblog_header_encode(pair, hbuf);
        rc = bblog_io_full(log->fd_meta, hbuf, sizeof hbuf, 0, 1, NULL);
    }
    fl.l_start = (off_t) log->mbase;
    if (rc == 0 && fcntl(log->fd_meta, F_OFD_SETLK, &fl) != 0)
        rc = errno;
    return rc;
}

/* Sets up a zeroed log for p: its geometry (a slot of a node's pair, or a log of its own), its
 * names and its buffers (nst staging buffers of ssize bytes). 0 or ENOMEM. */
static int log_alloc(struct bblog_log *log, const struct bblog_log_params *p, size_t ssize,
                     unsigned nst)
{
    int rc;

    log->dirfd = log->fd_meta = log->fd_data = log->fd_rdata = -1;
    log->mlim = log->dlim = UINT64_MAX;
    if (p->slots) {
        log->slots = p->slots;
        log->slot = p->slot;
        log->hdr.slots = p->slots;
        log->hdr.lg = bblog_node_lg(p->slots);
        log->mbase = bblog_node_meta_base(log->hdr.lg, p->slot);
        log->dbase = bblog_node_data_base(log->hdr.lg, p->slot);
        log->mlim = (uint64_t) 1 << (log->hdr.lg - 4);
        log->dlim = (uint64_t) 1 << log->hdr.lg;
    }
    log->ssize = ssize;
    log->straight_min = p->straight_min != 0 ? p->straight_min :
        p->slots > 1 ? PAIR_STRAIGHT_MIN : DEFAULT_STRAIGHT_MIN;
    log->nst = nst;
    log->rcap = ssize / 4 / BBLOG_RECORD_SIZE;
    if (log->rcap < MIN_RECORD_BUF / BBLOG_RECORD_SIZE)
        log->rcap = MIN_RECORD_BUF / BBLOG_RECORD_SIZE;
    log->meta_name = concat3(p->name, ".meta", "");
    log->data_name = concat3(p->name, ".data", "");
    log->meta_path = concat3(p->dir, "/", log->meta_name != NULL ? log->meta_name : "");
    log->data_path = concat3(p->dir, "/", log->data_name != NULL ? log->data_name : "");
    log->st = calloc(nst, sizeof *log->st);
    log->events = calloc(nst, sizeof *log->events);
    log->rbuf = malloc(log->rcap * BBLOG_RECORD_SIZE);
    if (log->meta_name == NULL || log->data_name == NULL || log->meta_path == NULL
        || log->data_path == NULL || log->st == NULL || log->events == NULL
        || log->rbuf == NULL)
        return ENOMEM;
    for (unsigned i = 0; i < nst; i++) {
        void *mem;

        rc = posix_memalign(&mem, ALIGN, ssize);
        if (rc != 0)
            return rc;
        log->st[i].buf = mem;
        log->st[i].state = ST_FREE;
    }
    return 0;
}

/* Opens the log's directory and creates its files (or joins its slot of the node's pair), each
 * with O_EXCL; *created_meta and *created_data say which names are ours to remove on failure. */
static int log_files(struct bblog_log *log, const struct bblog_log_params *p, const char *job_id,
                     int *created_meta, int *created_data)
{
    const int oflags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int rc;

    log->dirfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (log->dirfd < 0)
        return errno;
    log->hdr.rank = p->rank;
    log->hdr.nprocs = p->nprocs;
    log->hdr.file_id = bblog_fnv1a64(p->pfs_path);
    log->hdr.set_id = p->set_id;
    strcpy(log->hdr.job_id, job_id);
    strcpy(log->hdr.pfs_path, p->pfs_path);
    if (p->slots) {
        struct bblog_log_header pair = log->hdr;

        pair.rank = 0;
        pair.slot = BBLOG_NODE_HEADER;
        rc = slot_join(log, p, &pair);
        if (rc != 0)
            return rc;
        *created_meta = *created_data = 1;
    } else {
        log->fd_meta = openat(log->dirfd, log->meta_name, oflags, 0600);
        if (log->fd_meta < 0)
            return errno;
        *created_meta = 1;
        /* Held while the log is open: a cleaner (MPI_File_delete's removal of stale logs)
         * tells a live log from a crashed job's by it. Advice: a file system without flock
         * still logs. */
        (void) flock(log->fd_meta, LOCK_EX | LOCK_NB);
        log->fd_rdata = openat(log->dirfd, log->data_name, oflags, 0600);
        if (log->fd_rdata < 0)
            return errno;
        *created_data = 1;
    }
    log->fd_data = log->fd_rdata;
    set_rw_hint(log->fd_meta);
    set_rw_hint(log->fd_rdata);
    return 0;
}

/* Writes the new log's header, the first thing in its meta file (or slot). Not synced here:
 * the first bblog_log_sync makes it durable before it returns. */
static int write_header(struct bblog_log *log, const struct bblog_log_params *p)
{
    unsigned char hbuf[BBLOG_HEADER_SIZE];
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    log->hdr.version = p->slots ? BBLOG_FORMAT_VERSION_NODE : BBLOG_FORMAT_VERSION;
    log->hdr.slot = p->slot;
    log->hdr.create_time_ns = (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
    log->hdr.epoch = 0;
    bblog_header_encode(&log->hdr, hbuf);
    return bblog_io_full(log->fd_meta, hbuf, sizeof hbuf, log->mbase, 1, NULL);
}

int bblog_log_create(const struct bblog_log_params *p, struct bblog_log **out)
{
    struct bblog_log *log = NULL;
    const char *job_id;
    size_t ssize;
    unsigned nst;
    int created_meta = 0, created_data = 0;
    int rc = 0;

    if (out == NULL || p == NULL || p->dir == NULL || p->name == NULL || p->pfs_path == NULL)
        return BBLOG_EINVAL;
    *out = NULL;
    job_id = p->job_id != NULL ? p->job_id : "";
    if (p->name[0] == '\0' || strchr(p->name, '/') != NULL
        || strlen(p->pfs_path) >= BBLOG_PATH_MAX || strlen(job_id) >= BBLOG_JOB_ID_MAX
        || p->nprocs == 0 || p->rank >= p->nprocs || p->staging_count > MAX_STAGING_COUNT
        || p->staging_size > ((size_t) 1 << 40)
        || p->slots > BBLOG_NODE_SLOTS_MAX || (p->slots && p->slot >= p->slots))
        return BBLOG_EINVAL;
    ssize = p->staging_size != 0 ? p->staging_size : DEFAULT_STAGING_SIZE;
    ssize = (ssize + ALIGN - 1) & ~(ALIGN - 1);
    nst = p->staging_count != 0 ? p->staging_count : DEFAULT_STAGING_COUNT;
    if (nst < 2)
        nst = 2;

    log = calloc(1, sizeof *log);
    if (log == NULL)
        return ENOMEM;
    rc = log_alloc(log, p, ssize, nst);
    if (rc == 0)
        rc = log_files(log, p, job_id, &created_meta, &created_data);
    if (rc != 0)
        goto fail;
    if (!(p->flags & BBLOG_LOG_NO_DIRECT)) {
        rc = probe_direct(log);
        if (rc != 0)
            goto fail;
    }
    /* One iocb per staging buffer can be in flight. io_setup fails where AIO is unavailable
     * (ENOSYS) or the system-wide aio-max-nr is exhausted (EAGAIN): pwrite then. */
    if (!(p->flags & BBLOG_LOG_NO_AIO) && ctx_get(nst, &log->ctx) == 0)
        log->aio = 1;

    rc = write_header(log, p);
    if (rc != 0)
        goto fail;
    *out = log;
    return 0;

fail:
    /* A failed create leaves nothing behind: the names it created (O_EXCL, in this very
     * directory, so ours) are removed, and only those; a slot of a node's pair is left (the
     * pair's names removed if no other slot is in use). */
    log_destroy(log, created_meta || log->joined, created_data);
    return rc;
}
