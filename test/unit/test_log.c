/*
 * Unit tests of the log appender (logfs/log.c) and of bblog_log_userdir (logfs/userdir.c).
 *
 * Oracle: a model of the current epoch (the data log's bytes, and the list of records with
 * their expected fields). Random appends of random sizes (fixed seeds) go to the log and the
 * model; random reads through bblog_log_read are compared with the model before and after
 * syncs, and after close(remove=0) the scanner must give back exactly the model's records and
 * payloads. Every configuration runs in a directory on /dev/shm (tmpfs) and one on disk
 * (/var/tmp), through libaio and through pwrite, with and without O_DIRECT, with small staging
 * buffers (8 KiB x 2) so that buffers fill, wait and flush many times.
 *
 * Faults are injected by wrapping, at link time (-Wl,--wrap, logfs/Makefile.mk), the calls the
 * appender makes to write and sync: pwrite, fdatasync, io_submit and io_getevents. Transparent
 * faults (EINTR, short writes, EAGAIN from io_submit) must change nothing; hard ones (ENOSPC,
 * EIO) must surface from the call that meets them, turn the log sticky (BBLOG_ESTICKY), and
 * never leave anything but valid records on disk.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <cmocka.h>

#include "bblog_log.h"
#include "testutil.h"

/* ---- fault injection --------------------------------------------------------------------- */

/* After `skip` matching calls pass, the next `times` ones (forever if < 0) fail with err. */
struct inject {
    long skip, times;
    int err;
    long hits;
};

static struct {
    dev_t dev;
    ino_t ino;                  /* only calls on this file are faulted (0: every file) */
    struct inject pwrite_fail, fdatasync_fail, submit_fail, getev_fail;
    int pwrite_eintr, pwrite_short, fdatasync_eintr, submit_eintr, submit_short, getev_eintr;
    int pwrite_short_unaligned; /* one-shot count of unaligned short writes on O_DIRECT fds */
    long flip;                  /* alternates EINTR injections with passing calls */
    long eintr_hits, short_hits;
    dev_t einval_dev;           /* a real direct pwrite refused with EINVAL: file and offset */
    ino_t einval_ino;
    off_t einval_off;
    long fallback_hits;         /* later buffered pwrites of that file at that offset */
    long pwrite_calls, fdatasync_calls, submit_calls;
    /* Ordering observer: the two files of one log, and what is not yet durable in them. */
    ino_t o_data, o_meta;
    int o_data_dirty, o_header_dirty;
    long o_record_writes, o_truncates, o_violations;
} F;

ssize_t __real_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off);
int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);
int __real_ftruncate(int fd, off_t len);
int __wrap_ftruncate(int fd, off_t len);
int __real_io_submit(io_context_t ctx, long nr, struct iocb *ios[]);
int __wrap_io_submit(io_context_t ctx, long nr, struct iocb *ios[]);
int __real_io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
                        struct timespec *timeout);
int __wrap_io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
                        struct timespec *timeout);
int __real_io_setup(int nr, io_context_t *ctx);
int __wrap_io_setup(int nr, io_context_t *ctx);
int __real_io_destroy(io_context_t ctx);
int __wrap_io_destroy(io_context_t ctx);

/* AIO contexts made and destroyed (the appender keeps idle ones for the next log). */
static long g_setups, g_destroys;

int __wrap_io_setup(int nr, io_context_t *ctx)
{
    g_setups++;
    return __real_io_setup(nr, ctx);
}

int __wrap_io_destroy(io_context_t ctx)
{
    g_destroys++;
    return __real_io_destroy(ctx);
}

static void faults_off(void)
{
    memset(&F, 0, sizeof F);
}

/* Faults target one file: the one PATH names. */
static void faults_target(const char *path)
{
    struct stat sb;

    assert_int_equal(stat(path, &sb), 0);
    F.dev = sb.st_dev;
    F.ino = sb.st_ino;
}

static int targeted(int fd)
{
    struct stat sb;

    if (F.ino == 0)
        return 1;
    return fstat(fd, &sb) == 0 && sb.st_ino == F.ino && sb.st_dev == F.dev;
}

static ino_t ino_of(int fd)
{
    struct stat sb;

    return fstat(fd, &sb) == 0 ? sb.st_ino : 0;
}

/*
 * The ordering rules of the format header and of mark_drained, checked on every call: a record
 * is written only when no data write is waiting for its fdatasync, and the files are truncated
 * only when the new header is durable.
 */
static void observe_write(int fd, off_t off)
{
    ino_t ino;

    if (F.o_data == 0)
        return;
    ino = ino_of(fd);
    if (ino == F.o_data) {
        F.o_data_dirty = 1;
    } else if (ino == F.o_meta && off == 0) {
        F.o_header_dirty = 1;
    } else if (ino == F.o_meta) {
        F.o_record_writes++;
        if (F.o_data_dirty)
            F.o_violations++;
    }
}

static void observe_sync(int fd)
{
    ino_t ino;

    if (F.o_data == 0)
        return;
    ino = ino_of(fd);
    if (ino == F.o_data)
        F.o_data_dirty = 0;
    else if (ino == F.o_meta)
        F.o_header_dirty = 0;
}

int __wrap_ftruncate(int fd, off_t len)
{
    ino_t ino = F.o_data != 0 ? ino_of(fd) : 0;

    if (ino != 0 && (ino == F.o_data || ino == F.o_meta)) {
        F.o_truncates++;
        if (F.o_header_dirty)
            F.o_violations++;
    }
    return __real_ftruncate(fd, len);
}

static int inject_now(struct inject *in)
{
    if (in->err == 0 || in->times == 0)
        return 0;
    if (in->skip > 0) {
        in->skip--;
        return 0;
    }
    if (in->times > 0)
        in->times--;
    in->hits++;
    return in->err;
}

static int is_direct(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    return fl >= 0 && (fl & O_DIRECT) != 0;
}

ssize_t __wrap_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    ssize_t r;
    int e;

    F.pwrite_calls++;
    observe_write(fd, off);
    if (!targeted(fd))
        return __real_pwrite(fd, buf, n, off);
    e = inject_now(&F.pwrite_fail);
    if (e != 0) {
        errno = e;
        return -1;
    }
    if (F.pwrite_eintr && (F.flip++ & 1) == 0) {
        F.eintr_hits++;
        errno = EINTR;
        return -1;
    }
    if (is_direct(fd) && F.pwrite_short_unaligned > 0 && n >= 2 * 4096) {
        /* A direct write that stops off a block boundary: the prefix goes through a buffered
         * description of the same file, as a kernel stopping mid-block would leave it. */
        char proc[64];
        size_t k = n / 2 + 1;
        int bfd;

        F.pwrite_short_unaligned--;
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        bfd = open(proc, O_WRONLY | O_CLOEXEC);
        assert_true(bfd >= 0);
        r = __real_pwrite(bfd, buf, k, off);
        close(bfd);
        F.short_hits++;
        return r;
    }
    if (!is_direct(fd) && F.einval_ino != 0 && off == F.einval_off) {
        struct stat sb;

        if (fstat(fd, &sb) == 0 && sb.st_ino == F.einval_ino && sb.st_dev == F.einval_dev)
            F.fallback_hits++;
    }
    if (F.pwrite_short && n > 1) {
        /* Half, kept block-aligned on O_DIRECT descriptors as the kernel would. */
        size_t k = is_direct(fd) ? (n / 2) & ~(size_t) 4095 : n / 2;

        if (k > 0) {
            F.short_hits++;
            return __real_pwrite(fd, buf, k, off);
        }
    }
    r = __real_pwrite(fd, buf, n, off);
    if (r < 0 && errno == EINVAL) {
        struct stat sb;
        int saved = errno;

        if (fstat(fd, &sb) == 0) {
            F.einval_dev = sb.st_dev;
            F.einval_ino = sb.st_ino;
            F.einval_off = off;
        }
        errno = saved;
    }
    return r;
}

int __wrap_fdatasync(int fd)
{
    int e;

    F.fdatasync_calls++;
    if (!targeted(fd)) {
        if (__real_fdatasync(fd) != 0)
            return -1;
        observe_sync(fd);
        return 0;
    }
    e = inject_now(&F.fdatasync_fail);
    if (e != 0) {
        errno = e;
        return -1;
    }
    if (F.fdatasync_eintr && (F.flip++ & 1) == 0) {
        F.eintr_hits++;
        errno = EINTR;
        return -1;
    }
    if (__real_fdatasync(fd) != 0)
        return -1;
    observe_sync(fd);
    return 0;
}

int __wrap_io_submit(io_context_t ctx, long nr, struct iocb *ios[])
{
    int e;

    F.submit_calls++;
    for (long i = 0; i < nr; i++)
        observe_write(ios[i]->aio_fildes, (off_t) ios[i]->u.c.offset);
    if (nr < 1 || !targeted(ios[0]->aio_fildes))
        return __real_io_submit(ctx, nr, ios);
    e = inject_now(&F.submit_fail);
    if (e != 0)
        return -e;
    if (F.submit_eintr && (F.flip++ & 1) == 0) {
        F.eintr_hits++;
        return -EINTR;
    }
    if (F.submit_short) {
        for (long i = 0; i < nr; i++) {
            /* The kernel will write (and report) only the first half: a short completion. */
            size_t half = (ios[i]->u.c.nbytes / 2) & ~(size_t) 4095;

            if (half > 0) {
                ios[i]->u.c.nbytes = half;
                F.short_hits++;
            }
        }
    }
    return __real_io_submit(ctx, nr, ios);
}

int __wrap_io_getevents(io_context_t ctx, long min_nr, long nr, struct io_event *ev,
                        struct timespec *timeout)
{
    int n;

    if (F.getev_eintr && (F.flip++ & 1) == 0) {
        F.eintr_hits++;
        return -EINTR;
    }
    n = __real_io_getevents(ctx, min_nr, nr, ev, timeout);
    for (int i = 0; i < n; i++) {
        int e = targeted(ev[i].obj->aio_fildes) ? inject_now(&F.getev_fail) : 0;

        if (e != 0)
            ev[i].res = (unsigned long) (long) -e;
    }
    return n;
}

/* ---- environment ------------------------------------------------------------------------- */

static char *g_shm, *g_disk;
static unsigned g_name;
static size_t g_straight_min;   /* straight_min of the logs mklog makes (0: the default) */

static int group_setup(void **state)
{
    (void) state;
    umask(022);
    g_shm = tu_mkdtemp("/dev/shm");
    g_disk = tu_mkdtemp("/var/tmp");
    if (g_disk == NULL)
        g_disk = tu_mkdtemp("/tmp");
    return g_shm != NULL && g_disk != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void) state;
    if (g_shm != NULL)
        tu_rmtree(g_shm);
    if (g_disk != NULL)
        tu_rmtree(g_disk);
    free(g_shm);
    free(g_disk);
    return 0;
}

static int test_setup(void **state)
{
    (void) state;
    faults_off();
    return 0;
}

/* Whether this directory is on a memory file system, where the appender never uses O_DIRECT. */
static int in_memory(const char *dir)
{
    struct statfs sf;

    assert_int_equal(statfs(dir, &sf), 0);
    return (unsigned long) sf.f_type == 0x01021994UL || (unsigned long) sf.f_type == 0x858458f6UL;
}

/* Whether this directory takes O_DIRECT writes: the capability the appender must detect. */
static int direct_works(const char *dir)
{
    char path[4096];
    void *buf = NULL;
    int fd, fd2, ok = 0;

    snprintf(path, sizeof path, "%s/probe-direct", dir);
    fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    fd2 = open(path, O_WRONLY | O_DIRECT);
    assert_int_equal(posix_memalign(&buf, 4096, 4096), 0);
    memset(buf, 0, 4096);
    if (fd2 >= 0) {
        ok = __real_pwrite(fd2, buf, 4096, 0) == 4096;
        close(fd2);
    }
    free(buf);
    close(fd);
    unlink(path);
    return ok;
}

/* Probed once (test_aio_ctx_reuse counts the appender's own io_setup calls). */
static int aio_works(void)
{
    static int known = -1;
    io_context_t ctx;

    if (known >= 0)
        return known;
    memset(&ctx, 0, sizeof ctx);
    known = io_setup(2, &ctx) == 0;
    if (known)
        io_destroy(ctx);
    return known;
}

/* ---- model ------------------------------------------------------------------------------- */

struct mrec {
    uint64_t seq, off, len, data_off, epoch;
    uint32_t gen;
};

struct model {
    unsigned char *data;        /* the data log of the current epoch */
    size_t size, cap;
    struct mrec *recs;          /* records of the current epoch */
    size_t nrec, rcap;
    uint64_t next_seq, epoch;
    uint32_t gen;
    uint64_t trim;              /* data below are holes: not read back */
};

static void model_init(struct model *m)
{
    memset(m, 0, sizeof *m);
    m->next_seq = 1;
}

static void model_free(struct model *m)
{
    free(m->data);
    free(m->recs);
}

/* The drain: the log restarts empty, seq continues. */
static void model_drained(struct model *m)
{
    m->size = 0;
    m->nrec = 0;
    m->trim = 0;
    m->epoch++;
}

static struct bblog_log *mklog(const char *dir, unsigned flags, size_t ssize, unsigned count)
{
    struct bblog_log_params p = {
        .dir = dir, .pfs_path = "/pfs/project/out.h5", .job_id = "job-4242",
        .rank = 3, .nprocs = 8, .staging_size = ssize, .staging_count = count, .flags = flags,
        .straight_min = g_straight_min,
    };
    struct bblog_log *log = NULL;
    char name[64];

    snprintf(name, sizeof name, "log%u", g_name++);
    p.name = name;
    assert_int_equal(bblog_log_create(&p, &log), 0);
    assert_non_null(log);
    return log;
}

/* Appends len random bytes at a random file offset, to the log and the model. */
static int do_append(struct bblog_log *log, struct model *m, uint64_t *rs, size_t len)
{
    unsigned char *buf = malloc(len);
    uint64_t off = tu_rand(rs) >> 20, data_off = UINT64_MAX;
    int rc;

    assert_non_null(buf);
    tu_fill(rs, buf, len);
    rc = bblog_log_append(log, off, len, buf, &data_off);
    if (rc == 0) {
        assert_true(data_off == m->size);
        if (m->size + len > m->cap) {
            m->cap = (m->size + len) * 2;
            m->data = realloc(m->data, m->cap);
            assert_non_null(m->data);
        }
        memcpy(m->data + m->size, buf, len);
        if (m->nrec == m->rcap) {
            m->rcap = m->rcap ? 2 * m->rcap : 64;
            m->recs = realloc(m->recs, m->rcap * sizeof *m->recs);
            assert_non_null(m->recs);
        }
        m->recs[m->nrec++] = (struct mrec){.seq = m->next_seq++, .off = off, .len = len,
                                           .data_off = m->size, .epoch = m->epoch,
                                           .gen = m->gen};
        m->size += len;
    }
    free(buf);
    return rc;
}

static void check_read(struct bblog_log *log, const struct model *m, uint64_t off, uint64_t len)
{
    unsigned char *buf = malloc(len + 1);

    assert_non_null(buf);
    assert_int_equal(bblog_log_read(log, off, len, buf), 0);
    assert_memory_equal(buf, m->data + off, len);
    free(buf);
}

static void check_read_random(struct bblog_log *log, const struct model *m, uint64_t *rs)
{
    uint64_t off, len;

    if (m->size <= m->trim)
        return;
    off = tu_range(rs, m->trim, m->size - 1);
    len = tu_range(rs, 1, m->size - off);
    check_read(log, m, off, len);
}

static size_t random_len(uint64_t *rs, size_t ssize)
{
    switch (tu_range(rs, 0, 9)) {
    case 0:
        return (size_t) tu_range(rs, ssize, 3 * ssize);        /* larger than a buffer */
    case 1: case 2: case 3:
        return (size_t) tu_range(rs, 1, 64);
    default:
        return (size_t) tu_range(rs, 1, ssize / 2);
    }
}

/* n random appends with reads, syncs and generation changes mixed in. */
static void workload(struct bblog_log *log, struct model *m, uint64_t *rs, int n, size_t ssize)
{
    for (int i = 0; i < n; i++) {
        unsigned what = (unsigned) tu_range(rs, 0, 99);

        assert_int_equal(do_append(log, m, rs, random_len(rs, ssize)), 0);
        if (what < 10)
            check_read_random(log, m, rs);
        else if (what < 12)
            assert_int_equal(bblog_log_sync(log), 0);
        else if (what < 14)
            bblog_log_set_gen(log, ++m->gen);
    }
}

/* The scanner must give back exactly the model's records and payloads, then a clean end. */
static void check_scan(const char *meta_path, const struct model *m)
{
    struct bblog_scan *s = NULL;
    struct bblog_log_record r;
    const void *payload;
    const struct bblog_log_header *h;

    assert_int_equal(bblog_scan_open(meta_path, &s), 0);
    h = bblog_scan_header(s);
    assert_true(h->epoch == m->epoch);
    assert_int_equal(h->rank, 3);
    assert_int_equal(h->nprocs, 8);
    assert_string_equal(h->pfs_path, "/pfs/project/out.h5");
    assert_string_equal(h->job_id, "job-4242");
    assert_true(h->file_id == bblog_fnv1a64("/pfs/project/out.h5"));
    for (size_t i = 0; i < m->nrec; i++) {
        const struct mrec *e = &m->recs[i];

        assert_int_equal(bblog_scan_next(s, &r, &payload), 1);
        assert_true(r.seq == e->seq);
        assert_true(r.off == e->off);
        assert_true(r.len == e->len);
        assert_true(r.data_off == e->data_off);
        assert_true(r.epoch == e->epoch);
        assert_int_equal(r.gen, e->gen);
        assert_int_equal(r.flags, 0);
        assert_true(r.slot == BBLOG_HEADER_SIZE + i * BBLOG_RECORD_SIZE);
        assert_memory_equal(payload, m->data + e->data_off, e->len);
    }
    assert_int_equal(bblog_scan_next(s, &r, &payload), 0);
    assert_int_equal(bblog_scan_next(s, &r, &payload), 0);
    bblog_scan_close(s);
}

/* Scans what a failed log left: a prefix of the model, each record intact, then a clean end. */
static size_t check_scan_prefix(const char *meta_path, const struct model *m)
{
    struct bblog_scan *s = NULL;
    struct bblog_log_record r;
    const void *payload;
    size_t i = 0;
    int rc;

    assert_int_equal(bblog_scan_open(meta_path, &s), 0);
    while ((rc = bblog_scan_next(s, &r, &payload)) == 1) {
        assert_true(i < m->nrec);
        assert_true(r.seq == m->recs[i].seq && r.len == m->recs[i].len);
        assert_memory_equal(payload, m->data + m->recs[i].data_off, r.len);
        i++;
    }
    assert_int_equal(rc, 0);
    bblog_scan_close(s);
    return i;
}

static void remove_log_files(const char *meta, const char *data)
{
    assert_int_equal(unlink(meta), 0);
    assert_int_equal(unlink(data), 0);
}

/* One full round trip: workload, read back, sync, read back, close(keep), scan. */
static void roundtrip(const char *dir, unsigned flags, uint64_t seed, int n, size_t ssize,
                      unsigned count)
{
    struct bblog_log *log = mklog(dir, flags, ssize, count);
    struct bblog_log_stats st;
    struct model m;
    uint64_t rs = seed;
    char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
    size_t eff = ssize ? ssize : 4 << 20;

    model_init(&m);
    bblog_log_get_stats(log, &st);
    assert_int_equal(st.direct, !(flags & BBLOG_LOG_NO_DIRECT) && direct_works(dir)
                                && !in_memory(dir));
    assert_int_equal(st.aio, !(flags & BBLOG_LOG_NO_AIO) && aio_works());

    workload(log, &m, &rs, n, eff);
    check_read(log, &m, 0, m.size);
    for (int i = 0; i < 20; i++)
        check_read_random(log, &m, &rs);
    assert_int_equal(bblog_log_sync(log), 0);
    check_read(log, &m, 0, m.size);
    for (int i = 0; i < 20; i++)
        check_read_random(log, &m, &rs);

    bblog_log_get_stats(log, &st);
    assert_true(st.records == m.nrec);
    assert_true(st.data_size == m.size);
    assert_true(st.bytes_appended == m.size);
    assert_true(st.epoch == 0);
    if (st.aio)
        assert_true(st.aio_submits > 0);
    else
        assert_true(st.sync_writes > 0 && st.aio_submits == 0);
    /* Large appends skip the staging buffers only where there is no O_DIRECT. */
    if (st.direct)
        assert_true(st.straight_writes == 0);
    else if (g_straight_min != 0)
        assert_true(st.straight_writes > 0);
    /* The data log holds at least the logical bytes; under O_DIRECT, whole blocks. */
    assert_true(tu_fsize(data) >= (long long) m.size);
    if (st.direct)
        assert_int_equal(tu_fsize(data) % 4096, 0);
    assert_true(tu_fsize(meta) == (long long) (BBLOG_HEADER_SIZE + m.nrec * BBLOG_RECORD_SIZE));

    assert_int_equal(bblog_log_close(log, 0), 0);
    check_scan(meta, &m);
    remove_log_files(meta, data);
    model_free(&m);
    free(meta);
    free(data);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_roundtrip_matrix(void **state)
{
    const unsigned modes[] = {0, BBLOG_LOG_NO_AIO, BBLOG_LOG_NO_DIRECT,
                              BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT};
    const char *dirs[] = {g_shm, g_disk};

    (void) state;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 4; i++)
            roundtrip(dirs[d], modes[i], 1000 + (uint64_t) (10 * d + i), 200, 8192, 2);
}

/* Defaults (4 MiB x 4), larger appends, more buffers in flight. */
static void test_roundtrip_defaults(void **state)
{
    (void) state;
    roundtrip(g_disk, 0, 77, 8, 0, 0);
    roundtrip(g_shm, 0, 78, 12, 0, 0);
    roundtrip(g_disk, 0, 79, 300, 16384, 8);
}

/* Syncs after odd sizes: the O_DIRECT tail block is written padded, kept, and rewritten. */
static void test_sync_tail(void **state)
{
    const char *dirs[] = {g_disk, g_shm};

    (void) state;
    for (int d = 0; d < 2; d++) {
        struct bblog_log *log = mklog(dirs[d], 0, 8192, 2);
        char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
        struct model m;
        uint64_t rs = 555 + (uint64_t) d;

        model_init(&m);
        /* Fewer rounds on disk, where each costs two fdatasyncs. */
        for (int i = 0; i < (dirs[d] == g_disk ? 30 : 60); i++) {
            assert_int_equal(do_append(log, &m, &rs, (size_t) tu_range(&rs, 1, 6000)), 0);
            assert_int_equal(bblog_log_sync(log), 0);
            if (i % 7 == 0)
                assert_int_equal(bblog_log_sync(log), 0);  /* nothing new: a no-op */
            check_read_random(log, &m, &rs);
            assert_true(tu_fsize(meta)
                        == (long long) (BBLOG_HEADER_SIZE + m.nrec * BBLOG_RECORD_SIZE));
        }
        check_read(log, &m, 0, m.size);
        assert_int_equal(bblog_log_close(log, 0), 0);
        check_scan(meta, &m);
        remove_log_files(meta, data);
        model_free(&m);
        free(meta);
        free(data);
    }
}

/* The hot path makes no system call: appends that fit in staging and in the record buffer
 * touch neither the files nor the AIO context. */
static void test_append_no_syscalls(void **state)
{
    struct bblog_log *log = mklog(g_disk, 0, 0, 0);
    unsigned char buf[100];
    struct model m;

    (void) state;
    model_init(&m);
    memset(buf, 'x', sizeof buf);
    F.pwrite_calls = F.fdatasync_calls = F.submit_calls = 0;
    for (int i = 0; i < 10000; i++)
        assert_int_equal(bblog_log_append(log, (uint64_t) i * 100, sizeof buf, buf, NULL), 0);
    assert_int_equal(F.pwrite_calls, 0);
    assert_int_equal(F.fdatasync_calls, 0);
    assert_int_equal(F.submit_calls, 0);
    assert_int_equal(bblog_log_sync(log), 0);
    assert_true(F.fdatasync_calls >= 2);
    assert_int_equal(bblog_log_close(log, 1), 0);
    model_free(&m);
}

static void test_read_and_append_args(void **state)
{
    struct bblog_log *log = mklog(g_shm, 0, 8192, 2);
    struct bblog_log_stats st;
    unsigned char buf[16] = "0123456789abcdef";
    uint64_t doff = 99;

    (void) state;
    assert_int_equal(bblog_log_append(log, 0, 0, NULL, &doff), 0);    /* len 0: no-op */
    assert_true(doff == 0);
    bblog_log_get_stats(log, &st);
    assert_true(st.records == 0);
    assert_int_equal(bblog_log_append(log, 0, 16, NULL, NULL), BBLOG_EINVAL);
    assert_int_equal(bblog_log_append(log, UINT64_MAX - 3, 16, buf, NULL), BBLOG_EINVAL);
    assert_int_equal(bblog_log_append(log, 5, 16, buf, &doff), 0);
    assert_true(doff == 0);
    assert_int_equal(bblog_log_read(log, 0, 0, NULL), 0);
    assert_int_equal(bblog_log_read(log, 0, 17, buf), BBLOG_EINVAL);
    assert_int_equal(bblog_log_read(log, 17, 1, buf), BBLOG_EINVAL);
    assert_int_equal(bblog_log_read(log, UINT64_MAX, 2, buf), BBLOG_EINVAL);
    assert_int_equal(bblog_log_read(log, 4, 12, buf), 0);
    assert_memory_equal(buf, "456789abcdef", 12);
    /* Argument errors do not fail the log. */
    assert_int_equal(bblog_log_sync(log), 0);
    assert_int_equal(bblog_log_close(log, 1), 0);
    assert_int_equal(bblog_log_close(NULL, 1), 0);
}

static void test_create(void **state)
{
    struct bblog_log_params p = {
        .dir = g_shm, .name = "created", .pfs_path = "/pfs/a", .job_id = "j1",
        .rank = 0, .nprocs = 1, .staging_size = 8192, .staging_count = 2,
    };
    struct bblog_log *log = NULL, *log2 = NULL;
    const struct bblog_log_header *h;
    struct bblog_scan *s = NULL;
    char path[4096], target[4096];
    char longpath[BBLOG_PATH_MAX + 1], longjob[BBLOG_JOB_ID_MAX + 1];
    struct timespec ts;
    struct stat sb;
    uint64_t now_ns;

    (void) state;
    clock_gettime(CLOCK_REALTIME, &ts);
    now_ns = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    assert_int_equal(bblog_log_create(&p, &log), 0);
    snprintf(path, sizeof path, "%s/created.meta", g_shm);
    assert_string_equal(bblog_log_meta_path(log), path);
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    assert_int_equal(sb.st_mode & 07777, 0600);
    assert_int_equal(sb.st_size, BBLOG_HEADER_SIZE);
    snprintf(path, sizeof path, "%s/created.data", g_shm);
    assert_string_equal(bblog_log_data_path(log), path);
    assert_int_equal(lstat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0600);
    assert_int_equal(sb.st_size, 0);

    /* The header is readable as soon as create returns. */
    assert_int_equal(bblog_scan_open(bblog_log_meta_path(log), &s), 0);
    h = bblog_scan_header(s);
    assert_int_equal(h->version, BBLOG_FORMAT_VERSION);
    assert_int_equal(h->rank, 0);
    assert_int_equal(h->nprocs, 1);
    assert_true(h->epoch == 0);
    assert_string_equal(h->job_id, "j1");
    assert_string_equal(h->pfs_path, "/pfs/a");
    assert_true(h->create_time_ns >= now_ns - 1000000000u);
    assert_true(h->create_time_ns <= now_ns + 60 * UINT64_C(1000000000));
    bblog_scan_close(s);

    /* O_EXCL: a second log of the same name is refused, the first left alone. */
    assert_int_equal(bblog_log_create(&p, &log2), EEXIST);
    assert_null(log2);
    assert_int_equal(tu_fsize(bblog_log_meta_path(log)), BBLOG_HEADER_SIZE);
    assert_int_equal(bblog_log_close(log, 1), 0);
    assert_int_equal(tu_fsize(path), -1);

    /* A planted symlink is never followed, and its target never touched or created. */
    snprintf(target, sizeof target, "%s/victim", g_shm);
    snprintf(path, sizeof path, "%s/trap.meta", g_shm);
    assert_int_equal(symlink(target, path), 0);
    p.name = "trap";
    assert_int_equal(bblog_log_create(&p, &log2), EEXIST);
    assert_int_equal(tu_fsize(target), -1);
    unlink(path);
    snprintf(path, sizeof path, "%s/trap.data", g_shm);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(bblog_log_create(&p, &log2), EEXIST);
    assert_int_equal(tu_fsize(target), -1);
    /* ... and a failed create removes the half it made, not the name it did not make. */
    snprintf(target, sizeof target, "%s/trap.meta", g_shm);
    assert_int_equal(tu_fsize(target), -1);
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    unlink(path);

    /* Impossible arguments. */
    p.name = "bad";
    assert_int_equal(bblog_log_create(NULL, &log2), BBLOG_EINVAL);
    assert_int_equal(bblog_log_create(&p, NULL), BBLOG_EINVAL);
    p.rank = 1;
    assert_int_equal(bblog_log_create(&p, &log2), BBLOG_EINVAL);
    p.rank = 0;
    p.nprocs = 0;
    assert_int_equal(bblog_log_create(&p, &log2), BBLOG_EINVAL);
    p.nprocs = 1;
    p.name = "a/b";
    assert_int_equal(bblog_log_create(&p, &log2), BBLOG_EINVAL);
    p.name = "";
    assert_int_equal(bblog_log_create(&p, &log2), BBLOG_EINVAL);
    p.name = "bad";
    memset(longpath, 'p', BBLOG_PATH_MAX);
    longpath[BBLOG_PATH_MAX] = '\0';
    p.pfs_path = longpath;
    assert_int_equal(bblog_log_create(&p, &log2), BBLOG_EINVAL);
    longpath[BBLOG_PATH_MAX - 1] = '\0';   /* the longest that fits */
    assert_int_equal(bblog_log_create(&p, &log2), 0);
    assert_int_equal(bblog_log_close(log2, 1), 0);
    p.pfs_path = "/pfs/a";
    memset(longjob, 'j', BBLOG_JOB_ID_MAX);
    longjob[BBLOG_JOB_ID_MAX] = '\0';
    p.job_id = longjob;
    assert_int_equal(bblog_log_create(&p, &log2), BBLOG_EINVAL);
    p.job_id = "j1";
    snprintf(path, sizeof path, "%s/no/such/dir", g_shm);
    p.dir = path;
    assert_int_equal(bblog_log_create(&p, &log2), ENOENT);
    assert_null(log2);
}

/* The O_DIRECT probe: a file system that refuses the aligned test write with EINVAL (tmpfs on
 * kernels before 6.6) gets the buffered path, decided at create; any other error fails create
 * and leaves no file behind. The probe's write is the first pwrite create makes. */
static void test_direct_probe(void **state)
{
    struct bblog_log_params p = {
        .dir = g_disk, .name = "probe", .pfs_path = "/pfs/p", .job_id = "j",
        .rank = 0, .nprocs = 1, .staging_size = 8192, .staging_count = 2,
    };
    struct bblog_log *log = NULL;
    struct bblog_log_stats st;
    char path[4096];
    struct model m;
    uint64_t rs = 71;

    (void) state;
    /* Needs a directory that takes O_DIRECT, or the probe never writes. */
    if (!direct_works(g_disk))
        p.dir = g_shm;
    assert_true(direct_works(p.dir));
    F.pwrite_fail = (struct inject){.times = 1, .err = EINVAL};
    assert_int_equal(bblog_log_create(&p, &log), 0);
    assert_int_equal(F.pwrite_fail.hits, 1);
    bblog_log_get_stats(log, &st);
    assert_int_equal(st.direct, 0);
    model_init(&m);
    workload(log, &m, &rs, 40, 8192);
    check_read(log, &m, 0, m.size);
    snprintf(path, sizeof path, "%s", bblog_log_meta_path(log));
    assert_int_equal(bblog_log_close(log, 0), 0);
    {
        struct bblog_scan *s = NULL;
        struct bblog_log_record r;
        const void *payload;
        size_t n = 0;

        assert_int_equal(bblog_scan_open(path, &s), 0);
        while (bblog_scan_next(s, &r, &payload) == 1) {
            assert_memory_equal(payload, m.data + m.recs[n].data_off, r.len);
            n++;
        }
        assert_int_equal(n, m.nrec);
        bblog_scan_close(s);
    }
    unlink(path);
    snprintf(path, sizeof path, "%s/probe.data", p.dir);
    unlink(path);
    model_free(&m);

    F.pwrite_fail = (struct inject){.times = 1, .err = ENOSPC};
    log = NULL;
    assert_int_equal(bblog_log_create(&p, &log), ENOSPC);
    assert_null(log);
    assert_int_equal(tu_fsize(path), -1);
    snprintf(path, sizeof path, "%s/probe.meta", p.dir);
    assert_int_equal(tu_fsize(path), -1);
}

/* Drained: the header epoch is bumped, both files emptied, offsets restart, seq goes on. */
static void test_mark_drained(void **state)
{
    const unsigned modes[] = {0, BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT};
    const char *dirs[] = {g_disk, g_shm};

    (void) state;
    for (int k = 0; k < 2; k++) {
        struct bblog_log *log = mklog(dirs[k], modes[k], 8192, 2);
        char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
        struct bblog_log_stats st;
        struct bblog_scan *s = NULL;
        struct bblog_log_record r;
        const void *payload;
        unsigned char c;
        struct model m;
        uint64_t rs = 31 + (uint64_t) k;

        model_init(&m);
        workload(log, &m, &rs, 80, 8192);
        assert_int_equal(bblog_log_sync(log), 0);
        workload(log, &m, &rs, 30, 8192);       /* unsynced, some in flight: drained too */
        assert_int_equal(bblog_log_mark_drained(log), 0);
        model_drained(&m);
        assert_int_equal(tu_fsize(meta), BBLOG_HEADER_SIZE);
        assert_int_equal(tu_fsize(data), 0);
        bblog_log_get_stats(log, &st);
        assert_true(st.epoch == 1 && st.data_size == 0);
        assert_int_equal(bblog_log_read(log, 0, 1, &c), BBLOG_EINVAL);

        /* What a crash right now would leave: a valid, empty log of epoch 1. */
        assert_int_equal(bblog_scan_open(meta, &s), 0);
        assert_true(bblog_scan_header(s)->epoch == 1);
        assert_int_equal(bblog_scan_next(s, &r, &payload), 0);
        bblog_scan_close(s);

        workload(log, &m, &rs, 60, 8192);
        assert_true(m.recs[0].data_off == 0 && m.recs[0].seq > 110);
        check_read(log, &m, 0, m.size);
        assert_int_equal(bblog_log_sync(log), 0);
        check_read(log, &m, 0, m.size);
        assert_int_equal(bblog_log_close(log, 0), 0);
        check_scan(meta, &m);

        remove_log_files(meta, data);
        model_free(&m);
        free(meta);
        free(data);
    }
}

/* The sync slot read back from META's header. */
static struct bblog_log_synced synced_of(const char *meta)
{
    struct bblog_scan *s = NULL;
    struct bblog_log_synced y;

    assert_int_equal(bblog_scan_open(meta, &s), 0);
    y = bblog_scan_header(s)->synced;
    bblog_scan_close(s);
    return y;
}

/* N appends and no sync. */
static void appends(struct bblog_log *log, struct model *m, uint64_t *rs, int n)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(do_append(log, m, rs, random_len(rs, 8192)), 0);
}

/* Allocated bytes of the file at PATH (holes take none). */
static uint64_t allocated(const char *path)
{
    struct stat sb;

    assert_int_equal(stat(path, &sb), 0);
    return (uint64_t) sb.st_blocks * 512;
}

/* The trim point: records wholly below it are skipped by the scan, one it cuts comes back from
 * the trim point on (unverified, flagged), the rest whole; holes take the trimmed space off the
 * device; a torn write of the next slot leaves the older trim point, below which every byte
 * is a hole already; appends and reads above it go on. */
static void test_trim(void **state)
{
    const unsigned modes[] = {0, BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT};
    const char *dirs[] = {g_disk, g_shm};

    (void) state;
    for (int k = 0; k < 2; k++) {
        struct bblog_log *log = mklog(dirs[k], modes[k], 65536, 2);
        char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
        struct bblog_log_stats st;
        struct bblog_scan *s = NULL;
        struct bblog_log_record r;
        const void *payload;
        struct model m;
        uint64_t rs = 77 + (uint64_t) k, trim, before;
        size_t cut_rec = 0, i;
        int rc;

        model_init(&m);
        workload(log, &m, &rs, 200, 65536);
        assert_int_equal(bblog_log_sync(log), 0);
        /* A trim point inside a record, well past the first MiB. */
        cut_rec = m.nrec / 2;
        trim = m.recs[cut_rec].data_off + m.recs[cut_rec].len / 2;
        assert_true(m.recs[cut_rec].len >= 2 && trim > 4096);
        before = allocated(data);
        assert_int_equal(bblog_log_trim(log, m.size + 1), BBLOG_EINVAL);
        assert_int_equal(bblog_log_trim(log, trim), 0);
        assert_int_equal(bblog_log_trim(log, trim - 1), 0);    /* never backwards */
        m.trim = trim;
        bblog_log_get_stats(log, &st);
        assert_true(st.trim == trim);
        assert_true(synced_of(meta).trim == trim);
        if (st.punched > 0) {       /* every file system here punches; if one does not, no holes */
            assert_true(st.punched == (trim & ~(uint64_t) 4095));
            assert_true(allocated(data) + st.punched <= before + 4096);
        }
        check_read(log, &m, trim, m.size - trim);

        assert_int_equal(bblog_scan_open(meta, &s), 0);
        for (i = 0; i < m.nrec; i++) {
            const struct mrec *e = &m.recs[i];
            uint64_t c = i == cut_rec ? trim - e->data_off : 0;

            assert_int_equal(bblog_scan_next(s, &r, &payload), 1);
            assert_true(r.seq == e->seq);
            if (i < cut_rec) {
                assert_int_equal(r.flags, BBLOG_REC_TRIMMED);
                assert_true(r.off == e->off && r.len == e->len && payload == NULL);
                continue;
            }
            assert_true(r.off == e->off + c && r.len == e->len - c && r.data_off == e->data_off + c);
            assert_true(r.cut == c);
            assert_int_equal(r.flags, i == cut_rec ? BBLOG_REC_CUT : 0);
            assert_memory_equal(payload, m.data + e->data_off + c, e->len - c);
        }
        assert_int_equal(bblog_scan_next(s, &r, &payload), 0);
        assert_true(bblog_scan_trimmed(s) == cut_rec);
        bblog_scan_close(s);

        /* More appends and a sync whose slot is then torn: the older slot still names the
         * trim point, and every record it leaves live has its payload. */
        workload(log, &m, &rs, 50, 65536);
        assert_int_equal(bblog_log_sync(log), 0);
        {
            struct bblog_log_synced y = synced_of(meta);
            unsigned char junk[16];
            int fd = open(meta, O_WRONLY);

            assert_true(y.trim == trim);
            memset(junk, 0xa5, sizeof junk);
            assert_true(fd >= 0);
            assert_int_equal(pwrite(fd, junk, sizeof junk, y.count % 2 ? BBLOG_H_SYNC1 :
                                    BBLOG_H_SYNC0), (ssize_t) sizeof junk);
            close(fd);
            assert_true(synced_of(meta).trim == trim);
        }
        assert_int_equal(bblog_scan_open(meta, &s), 0);
        while ((rc = bblog_scan_next(s, &r, &payload)) == 1)
            assert_true((r.flags & BBLOG_REC_TRIMMED) || r.data_off >= trim);
        assert_int_equal(rc, 0);
        assert_true(bblog_scan_trimmed(s) == cut_rec);
        bblog_scan_close(s);
        /* A second trim point, past the records appended since. */
        assert_int_equal(bblog_log_trim(log, m.recs[m.nrec - 10].data_off), 0);
        m.trim = m.recs[m.nrec - 10].data_off;
        check_read(log, &m, m.trim, m.size - m.trim);

        /* A drain starts the next epoch with no trim point. */
        assert_int_equal(bblog_log_mark_drained(log), 0);
        model_drained(&m);
        bblog_log_get_stats(log, &st);
        assert_true(st.trim == 0 && st.punched == 0);
        workload(log, &m, &rs, 20, 65536);
        assert_int_equal(bblog_log_close(log, 0), 0);
        check_scan(meta, &m);
        remove_log_files(meta, data);
        model_free(&m);
        free(meta);
        free(data);
    }
}

/* Each sync that wrote something records it in the header's next sync slot, after its records;
 * a sync with nothing new writes nothing; a drain empties both slots; abandon leaves the
 * records written after the last sync out of it. */
static void test_sync_marks(void **state)
{
    const unsigned modes[] = {0, BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT};
    const char *dirs[] = {g_disk, g_shm};

    (void) state;
    for (int k = 0; k < 2; k++) {
        struct bblog_log *log = mklog(dirs[k], modes[k], 8192, 2);
        char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
        struct bblog_log_synced y;
        struct model m;
        uint64_t rs = 71 + (uint64_t) k;

        model_init(&m);
        assert_int_equal(bblog_log_sync(log), 0);       /* nothing logged: no mark */
        assert_true(synced_of(meta).count == 0);
        appends(log, &m, &rs, 40);
        assert_true(synced_of(meta).count == 0);
        assert_int_equal(bblog_log_sync(log), 0);
        y = synced_of(meta);
        assert_true(y.count == 1 && y.epoch == 0 && y.seq == 40);
        assert_true(y.meta_end == BBLOG_HEADER_SIZE + 40 * BBLOG_RECORD_SIZE);
        assert_true(y.meta_end == (uint64_t) tu_fsize(meta) && y.data_end == m.size);
        assert_int_equal(bblog_log_sync(log), 0);       /* nothing new */
        assert_true(synced_of(meta).count == 1);
        appends(log, &m, &rs, 10);
        assert_int_equal(bblog_log_sync(log), 0);
        y = synced_of(meta);
        assert_true(y.count == 2 && y.seq == 50 && y.data_end == m.size);
        assert_int_equal(bblog_log_mark_drained(log), 0);
        model_drained(&m);
        assert_true(synced_of(meta).count == 0);
        appends(log, &m, &rs, 5);
        assert_int_equal(bblog_log_sync(log), 0);
        y = synced_of(meta);
        assert_true(y.count == 1 && y.epoch == 1 && y.seq == 55);
        appends(log, &m, &rs, 7);
        assert_int_equal(bblog_log_abandon(log), 0);
        y = synced_of(meta);
        assert_true(y.count == 1 && y.seq == 55);
        assert_true((uint64_t) tu_fsize(meta) == BBLOG_HEADER_SIZE + 12 * BBLOG_RECORD_SIZE);
        check_scan(meta, &m);
        remove_log_files(meta, data);
        model_free(&m);
        free(meta);
        free(data);
    }
}

static void test_mark_drained_twice(void **state)
{
    struct bblog_log *log = mklog(g_shm, 0, 8192, 2);
    char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
    struct model m;
    uint64_t rs = 9;

    (void) state;
    model_init(&m);
    for (int round = 0; round < 3; round++) {
        workload(log, &m, &rs, 20, 8192);
        assert_int_equal(bblog_log_sync(log), 0);
        assert_int_equal(bblog_log_mark_drained(log), 0);
        model_drained(&m);
    }
    workload(log, &m, &rs, 20, 8192);
    assert_int_equal(bblog_log_close(log, 0), 0);
    assert_true(m.epoch == 3);
    check_scan(meta, &m);
    remove_log_files(meta, data);
    model_free(&m);
    free(meta);
    free(data);
}

/* Records never reach the meta log before their payloads are durable, in any mode, and the
 * drain truncates only after the new epoch is durable. */
static void test_ordering(void **state)
{
    const unsigned modes[] = {0, BBLOG_LOG_NO_AIO, BBLOG_LOG_NO_DIRECT,
                              BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT};

    (void) state;
    for (int i = 0; i < 4; i++) {
        struct bblog_log *log = mklog(g_shm, modes[i], 8192, 2);
        char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
        struct model m;
        uint64_t rs = 600 + (uint64_t) i;

        model_init(&m);
        F.o_data = (ino_t) tu_ino(data);
        F.o_meta = (ino_t) tu_ino(meta);
        workload(log, &m, &rs, 150, 8192);
        assert_int_equal(bblog_log_mark_drained(log), 0);
        model_drained(&m);
        workload(log, &m, &rs, 50, 8192);
        assert_int_equal(bblog_log_close(log, 0), 0);
        assert_true(F.o_record_writes > 5);
        assert_int_equal(F.o_truncates, 2);
        assert_int_equal(F.o_violations, 0);
        check_scan(meta, &m);
        faults_off();
        remove_log_files(meta, data);
        model_free(&m);
        free(meta);
        free(data);
    }
}

/* EINTR and short writes on every pwrite and fdatasync: retried and completed, invisibly. */
static void test_fault_transparent_pwrite(void **state)
{
    const unsigned modes[] = {BBLOG_LOG_NO_AIO, BBLOG_LOG_NO_AIO,
                              BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT};
    const char *dirs[] = {g_disk, g_shm, g_shm};

    (void) state;
    for (int i = 0; i < 3; i++) {
        faults_off();
        F.pwrite_eintr = F.pwrite_short = F.fdatasync_eintr = 1;
        roundtrip(dirs[i], modes[i], 2000 + (uint64_t) i, 120, 8192, 2);
        assert_true(F.eintr_hits > 10);
        assert_true(F.short_hits > 10);
    }
}

/* A direct write that stops off a block boundary: the remainder goes out buffered. */
static void test_fault_unaligned_short(void **state)
{
    (void) state;
    F.pwrite_short_unaligned = 5;
    roundtrip(g_disk, BBLOG_LOG_NO_AIO, 3000, 120, 8192, 2);
    if (direct_works(g_disk)) {
        assert_int_equal(F.pwrite_short_unaligned, 0);
        /* Where the file system refuses the unaligned direct remainder (ext4, xfs do), it
         * was written through the buffered descriptor, at that same offset. */
        if (F.einval_ino != 0)
            assert_true(F.fallback_hits > 0);
    }
}

/* One log after the other, each writing through AIO: the first context serves them all
 * (io_destroy waits for an RCU grace period, tens of milliseconds per close); a context with
 * a failed write reaped is still idle, so it is kept too. */
static void test_aio_ctx_reuse(void **state)
{
    (void) state;
    assert_true(aio_works());
    roundtrip(g_shm, BBLOG_LOG_NO_DIRECT, 8999, 50, 8192, 2);   /* one context in the pool */
    g_setups = g_destroys = 0;
    for (int i = 0; i < 5; i++)
        roundtrip(i & 1 ? g_disk : g_shm, i & 1 ? 0 : BBLOG_LOG_NO_DIRECT, 9000 + (uint64_t) i,
                  50, 8192, 2);
    assert_int_equal(g_setups, 0);
    assert_int_equal(g_destroys, 0);
}

/* libaio: EINTR from io_submit and io_getevents, short completions, EAGAIN from io_submit. */
static void test_fault_transparent_aio(void **state)
{
    const unsigned modes[] = {0, 0, BBLOG_LOG_NO_DIRECT};
    const char *dirs[] = {g_disk, g_shm, g_shm};

    (void) state;
    assert_true(aio_works());
    for (int i = 0; i < 3; i++) {
        faults_off();
        F.submit_eintr = F.getev_eintr = F.submit_short = 1;
        F.submit_fail = (struct inject){.skip = 3, .times = 4, .err = EAGAIN};
        roundtrip(dirs[i], modes[i], 4000 + (uint64_t) i, 150, 8192, 2);
        assert_true(F.eintr_hits > 10);
        assert_true(F.short_hits > 10);
        assert_int_equal(F.submit_fail.hits, 4);
    }
}

/* After the first error every write-side call says BBLOG_ESTICKY, close included; every byte
 * acknowledged before the failure still reads back (the driver drains or writes it through). */
static void check_sticky(struct bblog_log *log, const struct model *m)
{
    unsigned char c = 0, *back = malloc(m->size ? m->size : 1);

    assert_non_null(back);
    assert_int_equal(bblog_log_append(log, 0, 1, &c, NULL), BBLOG_ESTICKY);
    assert_int_equal(bblog_log_sync(log), BBLOG_ESTICKY);
    assert_int_equal(bblog_log_append(log, 0, 1, &c, NULL), BBLOG_ESTICKY);
    assert_int_equal(bblog_log_read(log, 0, m->size, back), 0);
    assert_memory_equal(back, m->data, m->size);
    free(back);
}

/*
 * Appends after a good sync until the injected error comes back; returns the code of the
 * first failing call (append, or the final sync when no append met it). The log is then
 * checked sticky, closed keeping its files, and its scan must be a valid prefix that holds at
 * least every synced record.
 */
static int fail_run(const char *dir, unsigned flags, void (*arm)(struct bblog_log *log),
                    uint64_t seed)
{
    struct bblog_log *log = mklog(dir, flags, 8192, 2);
    char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
    struct model m;
    uint64_t rs = seed;
    size_t synced, found;
    int rc = 0;

    model_init(&m);
    workload(log, &m, &rs, 40, 8192);
    assert_int_equal(bblog_log_sync(log), 0);
    synced = m.nrec;
    arm(log);
    for (int i = 0; i < 400 && rc == 0; i++)
        rc = do_append(log, &m, &rs, (size_t) tu_range(&rs, 1, 5000));
    if (rc == 0)
        rc = bblog_log_sync(log);
    assert_true(rc != 0);
    check_sticky(log, &m);
    faults_off();
    assert_int_equal(bblog_log_close(log, 0), BBLOG_ESTICKY);
    found = check_scan_prefix(meta, &m);
    assert_true(found >= synced);
    remove_log_files(meta, data);
    model_free(&m);
    free(meta);
    free(data);
    return rc;
}

static void arm_data_enospc(struct bblog_log *log)
{
    faults_target(bblog_log_data_path(log));
    F.pwrite_fail = (struct inject){.skip = 2, .times = -1, .err = ENOSPC};
}

static void arm_data_short_then_eio(struct bblog_log *log)
{
    /* A short write whose completion fails: the write cannot complete. */
    faults_target(bblog_log_data_path(log));
    F.pwrite_short = 1;
    F.pwrite_fail = (struct inject){.skip = 1, .times = -1, .err = EIO};
}

static void arm_meta_enospc(struct bblog_log *log)
{
    faults_target(bblog_log_meta_path(log));
    F.pwrite_fail = (struct inject){.skip = 0, .times = -1, .err = ENOSPC};
}

static void arm_event_eio(struct bblog_log *log)
{
    faults_target(bblog_log_data_path(log));
    F.getev_fail = (struct inject){.skip = 1, .times = 1, .err = EIO};
}

static void arm_submit_ebadf(struct bblog_log *log)
{
    faults_target(bblog_log_data_path(log));
    F.submit_fail = (struct inject){.skip = 1, .times = -1, .err = EBADF};
}

static void arm_fdatasync_eio(struct bblog_log *log)
{
    faults_target(bblog_log_data_path(log));
    F.fdatasync_fail = (struct inject){.skip = 0, .times = -1, .err = EIO};
}

static void test_fault_hard_errors(void **state)
{
    const unsigned pw = BBLOG_LOG_NO_AIO;

    (void) state;
    assert_int_equal(fail_run(g_shm, pw | BBLOG_LOG_NO_DIRECT, arm_data_enospc, 1), ENOSPC);
    assert_int_equal(fail_run(g_disk, pw, arm_data_enospc, 2), ENOSPC);
    assert_int_equal(fail_run(g_shm, pw, arm_data_short_then_eio, 3), EIO);
    assert_int_equal(fail_run(g_shm, 0, arm_meta_enospc, 4), ENOSPC);
    assert_int_equal(fail_run(g_disk, 0, arm_event_eio, 5), EIO);
    assert_int_equal(fail_run(g_shm, BBLOG_LOG_NO_DIRECT, arm_event_eio, 6), EIO);
    assert_int_equal(fail_run(g_disk, 0, arm_submit_ebadf, 7), EBADF);
    assert_int_equal(fail_run(g_shm, 0, arm_fdatasync_eio, 8), EIO);
    assert_int_equal(fail_run(g_shm, pw, arm_fdatasync_eio, 9), EIO);
}

/*
 * Appends of straight_min bytes or more go from the caller's buffer to a data log without
 * O_DIRECT: the round trip (reads from buffers, from the file and across both, syncs, the
 * scan), through libaio and pwrite, with transparent write faults, and hard ones that must
 * leave only valid records and a log that still reads back what it acknowledged.
 */
static void test_straight(void **state)
{
    const unsigned modes[] = {0, BBLOG_LOG_NO_AIO, BBLOG_LOG_NO_DIRECT,
                              BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT};
    const char *dirs[] = {g_shm, g_disk};

    (void) state;
    g_straight_min = 4096;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 4; i++)
            roundtrip(dirs[d], modes[i], 5000 + (uint64_t) (10 * d + i), 200, 8192, 2);
    faults_off();
    F.pwrite_eintr = F.pwrite_short = 1;
    roundtrip(g_shm, BBLOG_LOG_NO_AIO, 5100, 120, 8192, 2);
    assert_true(F.eintr_hits > 10);
    assert_true(F.short_hits > 10);
    faults_off();
    assert_int_equal(fail_run(g_shm, 0, arm_data_enospc, 5200), ENOSPC);
    assert_int_equal(fail_run(g_shm, BBLOG_LOG_NO_AIO, arm_data_short_then_eio, 5201), EIO);
    assert_int_equal(fail_run(g_disk, BBLOG_LOG_NO_DIRECT, arm_data_enospc, 5202), ENOSPC);
    g_straight_min = 0;
}

/* Appends that fit in staging; a write error met only at sync is reported by sync. */
static void test_fault_sync_reports(void **state)
{
    struct bblog_log *log = mklog(g_disk, BBLOG_LOG_NO_AIO, 8192, 2);
    unsigned char buf[1000];

    (void) state;
    struct model m;

    (void) state;
    model_init(&m);
    memset(buf, 1, sizeof buf);
    assert_int_equal(bblog_log_append(log, 0, sizeof buf, buf, NULL), 0);
    m.data = malloc(sizeof buf);
    assert_non_null(m.data);
    memcpy(m.data, buf, sizeof buf);
    m.size = sizeof buf;
    faults_target(bblog_log_data_path(log));
    F.pwrite_fail = (struct inject){.times = 1, .err = EIO};
    assert_int_equal(bblog_log_sync(log), EIO);
    check_sticky(log, &m);
    assert_int_equal(bblog_log_close(log, 1), BBLOG_ESTICKY);
    model_free(&m);
}

/*
 * A burst buffer that filled up (ENOSPC), once its data is safe elsewhere, is marked drained:
 * the log is then empty, consistent, and takes appends again; the scan sees only the new epoch.
 */
static void test_fault_recover_by_drain(void **state)
{
    struct bblog_log *log = mklog(g_shm, BBLOG_LOG_NO_AIO | BBLOG_LOG_NO_DIRECT, 8192, 2);
    char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
    struct model m;
    uint64_t rs = 77;
    int rc = 0;

    (void) state;
    model_init(&m);
    workload(log, &m, &rs, 20, 8192);
    faults_target(data);
    F.pwrite_fail = (struct inject){.times = -1, .err = ENOSPC};
    for (int i = 0; i < 400 && rc == 0; i++)
        rc = do_append(log, &m, &rs, (size_t) tu_range(&rs, 1, 5000));
    assert_int_equal(rc, ENOSPC);
    check_sticky(log, &m);
    /* Still full: marking drained needs no data write, only the header and truncation. */
    assert_int_equal(bblog_log_mark_drained(log), 0);
    faults_off();
    model_drained(&m);
    workload(log, &m, &rs, 20, 8192);
    assert_int_equal(bblog_log_close(log, 0), 0);
    check_scan(meta, &m);
    remove_log_files(meta, data);
    model_free(&m);
    free(meta);
    free(data);
}

/* Writes in flight at close: an error among them is close's to report, and remove still
 * removes. */
static void test_fault_close_reports(void **state)
{
    (void) state;
    for (int keep = 0; keep < 2; keep++) {
        struct bblog_log *log = mklog(g_disk, 0, 8192, 4);
        char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
        unsigned char buf[3 * 8192];
        struct bblog_log_stats st;

        memset(buf, 2, sizeof buf);
        assert_int_equal(bblog_log_append(log, 0, sizeof buf, buf, NULL), 0);
        bblog_log_get_stats(log, &st);
        assert_true(st.aio_submits == 3);
        faults_target(data);
        F.getev_fail = (struct inject){.times = 1, .err = EIO};
        assert_int_equal(bblog_log_close(log, !keep), EIO);
        assert_int_equal(F.getev_fail.hits, 1);
        faults_off();
        if (keep)
            remove_log_files(meta, data);
        assert_int_equal(tu_fsize(meta), -1);
        assert_int_equal(tu_fsize(data), -1);
        free(meta);
        free(data);
    }
}

/* A log is live from its creation until its names are removed: a cleaner that runs while
 * another process is closing it must not take its files (MPI_File_delete right after another
 * group's close). A log kept after close, and one whose writer went away, are not live. */
static void test_live(void **state)
{
    (void) state;
    struct bblog_log *log = mklog(g_disk, 0, 8192, 4);
    char *meta = strdup(bblog_log_meta_path(log)), *data = strdup(bblog_log_data_path(log));
    unsigned char buf[4096];

    memset(buf, 3, sizeof buf);
    assert_int_equal(bblog_log_append(log, 0, sizeof buf, buf, NULL), 0);
    assert_int_equal(bblog_log_live(meta), 1);
    assert_int_equal(bblog_log_close(log, 0), 0);
    assert_true(tu_fsize(meta) > 0);
    assert_int_equal(bblog_log_live(meta), 0);
    remove_log_files(meta, data);
    assert_int_equal(bblog_log_live(meta), 0);
    free(meta);
    free(data);
}

/* ---- bblog_log_userdir -------------------------------------------------------------------- */

struct race {
    pthread_barrier_t *bar;
    const char *dir;
    char out[4096];
    int rc;
};

static void *race_one(void *arg)
{
    struct race *r = arg;

    pthread_barrier_wait(r->bar);
    r->rc = bblog_log_userdir(r->dir, r->out, sizeof r->out);
    return NULL;
}

static void test_userdir(void **state)
{
    char *base = tu_mkdtemp(g_shm);
    char want[4096], out[4096], path[4096], other[4096];
    struct stat sb;

    (void) state;
    assert_non_null(base);
    snprintf(want, sizeof want, "%s/bblog-%lu", base, (unsigned long) geteuid());
    assert_int_equal(bblog_log_userdir(base, out, sizeof out), 0);
    assert_string_equal(out, want);
    assert_int_equal(lstat(want, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(sb.st_mode & 07777, 0700);
    assert_int_equal(sb.st_uid, geteuid());
    /* Existing and right: accepted again; a trailing slash changes nothing. */
    assert_int_equal(bblog_log_userdir(base, out, sizeof out), 0);
    snprintf(path, sizeof path, "%s/", base);
    assert_int_equal(bblog_log_userdir(path, out, sizeof out), 0);
    assert_string_equal(out, want);
    assert_int_equal(bblog_log_userdir(base, out, strlen(want)), ERANGE);
    assert_int_equal(bblog_log_userdir(base, out, strlen(want) + 1), 0);

    /* Others can reach it: refused. */
    assert_int_equal(chmod(want, 0750), 0);
    assert_int_equal(bblog_log_userdir(base, out, sizeof out), EPERM);
    assert_int_equal(chmod(want, 0701), 0);
    assert_int_equal(bblog_log_userdir(base, out, sizeof out), EPERM);
    assert_int_equal(chmod(want, 0700), 0);
    if (geteuid() == 0) {
        /* Only root can make a directory someone else owns. */
        assert_int_equal(chown(want, 4242, 4242), 0);
        assert_int_equal(bblog_log_userdir(base, out, sizeof out), EPERM);
        assert_int_equal(chown(want, 0, 0), 0);
    }
    /* A symlink, even to a perfect directory of ours: refused, not followed. */
    snprintf(other, sizeof other, "%s/real", base);
    assert_int_equal(rename(want, other), 0);
    assert_int_equal(symlink(other, want), 0);
    assert_int_equal(bblog_log_userdir(base, out, sizeof out), EPERM);
    assert_int_equal(unlink(want), 0);
    /* A regular file: refused. */
    assert_int_equal(close(open(want, O_CREAT | O_WRONLY, 0600)), 0);
    assert_int_equal(bblog_log_userdir(base, out, sizeof out), EPERM);
    assert_int_equal(unlink(want), 0);
    /* DIR's own errors come back as they are. */
    snprintf(path, sizeof path, "%s/missing", base);
    assert_int_equal(bblog_log_userdir(path, out, sizeof out), ENOENT);
    snprintf(path, sizeof path, "%s/plainfile", base);
    assert_int_equal(close(open(path, O_CREAT | O_WRONLY, 0600)), 0);
    assert_int_equal(bblog_log_userdir(path, out, sizeof out), ENOTDIR);
    assert_int_equal(bblog_log_userdir(NULL, out, sizeof out), BBLOG_EINVAL);

    /* Every rank of a node makes the directory at once: all succeed (mkdir's EEXIST). */
    for (int round = 0; round < 20; round++) {
        enum { N = 6 };
        pthread_barrier_t bar;
        pthread_t th[N];
        struct race r[N];

        snprintf(path, sizeof path, "%s/race%d", base, round);
        assert_int_equal(mkdir(path, 0755), 0);
        pthread_barrier_init(&bar, NULL, N);
        for (int i = 0; i < N; i++) {
            r[i].bar = &bar;
            r[i].dir = path;
            assert_int_equal(pthread_create(&th[i], NULL, race_one, &r[i]), 0);
        }
        for (int i = 0; i < N; i++) {
            pthread_join(th[i], NULL);
            assert_int_equal(r[i].rc, 0);
        }
        pthread_barrier_destroy(&bar);
    }
    tu_rmtree(base);
    free(base);
}

/* Reads slot SLOT of pair META: *n records of the header's epoch, each payload compared with
 * want[i] (len bytes); returns the header's epoch. */
static uint64_t check_slot(const char *meta, uint32_t slot, unsigned n,
                           unsigned char want[][5000], size_t len)
{
    struct bblog_scan *s = NULL;
    struct bblog_log_record r;
    const void *p;
    unsigned k = 0;
    uint64_t epoch;
    int rc;

    assert_int_equal(bblog_scan_open_slot(meta, slot, &s), 0);
    assert_int_equal(bblog_scan_header(s)->slot, slot);
    epoch = bblog_scan_header(s)->epoch;
    while ((rc = bblog_scan_next(s, &r, &p)) == 1) {
        if (r.epoch != epoch)
            continue;
        assert_true(k < n);
        assert_int_equal(r.len, len);
        assert_memory_equal(p, want[k], len);
        k++;
    }
    assert_int_equal(rc, 0);    /* a clean end: the zeros after a slot's log are no tear */
    assert_int_equal(k, n);
    bblog_scan_close(s);
    return epoch;
}

/* Writes header *h with epoch EPOCH over its slot's header in pair META. */
static void put_slot_header(const char *meta, struct bblog_log_header *h, uint64_t epoch)
{
    unsigned char hbuf[BBLOG_HEADER_SIZE];
    int fd = open(meta, O_RDWR);

    assert_true(fd >= 0);
    h->epoch = epoch;
    bblog_header_encode(h, hbuf);
    assert_int_equal(pwrite(fd, hbuf, sizeof hbuf, (off_t) bblog_node_meta_base(h->lg, h->slot)),
                     (ssize_t) sizeof hbuf);
    close(fd);
}

/* A node log pair (bblog_mapping=node): slots 0 and 2 of 3 in one pair of files; each slot is
 * a log of its own (read back, scanned, drained, removed) that leaves the others alone, a used
 * slot cannot be joined twice, and the names go with the last slot. On a disk directory the
 * slots take the O_DIRECT and libaio paths. */
static void node_pair_case(const char *dir)
{
    static unsigned char data[2][4][5000], back[5000];
    struct bblog_log *l[3] = { NULL }, *dup = NULL;
    struct bblog_scan *s = NULL;
    struct bblog_log_record r;
    const void *p;
    char meta[4096], dpath[4096];
    uint64_t doff[2][4], x = 77;
    struct stat sb;

    for (uint32_t slot = 0; slot < 3; slot += 2) {
        struct bblog_log_params pp = {
            .dir = dir, .name = "pair", .pfs_path = "/pfs/node", .job_id = "jn",
            .rank = slot, .nprocs = 3, .set_id = 42, .staging_size = 8192,
            .staging_count = 2, .slots = 3, .slot = slot,
        };

        assert_int_equal(bblog_log_create(&pp, &l[slot]), 0);
        if (slot == 2)
            assert_int_equal(bblog_log_create(&pp, &dup), EEXIST);
    }
    snprintf(meta, sizeof meta, "%s/pair.meta", dir);
    snprintf(dpath, sizeof dpath, "%s/pair.data", dir);
    assert_string_equal(bblog_log_meta_path(l[0]), meta);
    assert_string_equal(bblog_log_data_path(l[2]), dpath);
    assert_int_equal(bblog_log_live(meta), 1);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++) {
            tu_fill(&x, data[k][i], sizeof data[k][i]);
            assert_int_equal(bblog_log_append(l[2 * k], (uint64_t) i * 10000 + k * 5000, 5000,
                                              data[k][i], &doff[k][i]), 0);
            assert_int_equal(doff[k][i], (uint64_t) i * 5000);     /* offsets within the slot */
        }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 4; i++) {
            assert_int_equal(bblog_log_read(l[2 * k], doff[k][i], 5000, back), 0);
            assert_memory_equal(back, data[k][i], 5000);
        }
    assert_int_equal(bblog_log_sync(l[0]), 0);
    assert_int_equal(bblog_log_sync(l[2]), 0);

    /* The pair's own header, and the slots. */
    assert_int_equal(bblog_scan_open(meta, &s), 0);
    assert_int_equal(bblog_scan_header(s)->slots, 3);
    assert_true(bblog_scan_header(s)->slot == BBLOG_NODE_HEADER);
    assert_int_equal(bblog_scan_next(s, &r, &p), 0);
    bblog_scan_close(s);
    assert_int_equal(check_slot(meta, 0, 4, data[0], 5000), 0);
    assert_int_equal(check_slot(meta, 2, 4, data[1], 5000), 0);
    assert_int_equal(bblog_scan_open_slot(meta, 1, &s), BBLOG_EBADMAGIC);
    assert_int_equal(bblog_scan_open_slot(meta, 3, &s), BBLOG_EINVAL);

    /* A kill inside the drain of slot 0, after its header took the next epoch and its
     * payloads were punched, before its records were zeroed (log_empty): the records stay and
     * point at holes. They were drained: the scan hands them back flagged, without payload,
     * and finds no damage; so does replay (the crash harness). */
    {
        struct bblog_log_header h;
        int fd, n = 0, rc;

        assert_int_equal(bblog_scan_open_slot(meta, 0, &s), 0);
        h = *bblog_scan_header(s);
        bblog_scan_close(s);
        assert_true(h.epoch == 0 && h.slots == 3);
        fd = open(dpath, O_RDWR);
        assert_true(fd >= 0);
        assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                   (off_t) bblog_node_data_base(h.lg, 0), 4 * 5000), 0);
        put_slot_header(meta, &h, 1);
        assert_int_equal(bblog_scan_open_slot(meta, 0, &s), 0);
        while ((rc = bblog_scan_next(s, &r, &p)) == 1) {
            assert_true(r.epoch == 0 && (r.flags & BBLOG_REC_DRAINED) && p == NULL);
            n++;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(n, 4);
        bblog_scan_close(s);
        /* Of the header's epoch, the same records are damage: their payloads are gone. */
        put_slot_header(meta, &h, 0);
        assert_int_equal(bblog_scan_open_slot(meta, 0, &s), 0);
        assert_int_equal(bblog_scan_next(s, &r, &p), BBLOG_ECORRUPT);
        bblog_scan_close(s);
        for (int i = 0; i < 4; i++)     /* the payloads back, for what follows */
            assert_int_equal(pwrite(fd, data[0][i], 5000,
                                    (off_t) (bblog_node_data_base(h.lg, 0) + doff[0][i])),
                             5000);
        close(fd);
        assert_int_equal(check_slot(meta, 0, 4, data[0], 5000), 0);
    }

    /* Draining slot 0 empties its log only; it takes appends again from data offset 0. */
    assert_int_equal(bblog_log_mark_drained(l[0]), 0);
    assert_int_equal(check_slot(meta, 0, 0, data[0], 5000), 1);
    assert_int_equal(check_slot(meta, 2, 4, data[1], 5000), 0);
    assert_int_equal(bblog_log_append(l[0], 7, 5000, data[1][3], &doff[0][0]), 0);
    assert_int_equal(doff[0][0], 0);
    assert_int_equal(bblog_log_sync(l[0]), 0);
    assert_int_equal(check_slot(meta, 0, 1, &data[1][3], 5000), 1);

    /* The first slot out leaves the names; the last removes them. */
    assert_int_equal(bblog_log_close(l[0], 1), 0);
    assert_int_equal(stat(meta, &sb), 0);
    assert_int_equal(bblog_scan_open_slot(meta, 0, &s), BBLOG_EBADMAGIC);
    assert_int_equal(check_slot(meta, 2, 4, data[1], 5000), 0);
    assert_int_equal(bblog_log_close(l[2], 1), 0);
    assert_int_equal(stat(meta, &sb), -1);
    assert_int_equal(stat(dpath, &sb), -1);
    assert_int_equal(bblog_log_live(meta), 0);
}

static void test_node_pair(void **state)
{
    (void) state;
    node_pair_case(g_shm);
    node_pair_case(g_disk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_create, test_setup),
        cmocka_unit_test_setup(test_read_and_append_args, test_setup),
        cmocka_unit_test_setup(test_roundtrip_matrix, test_setup),
        cmocka_unit_test_setup(test_roundtrip_defaults, test_setup),
        cmocka_unit_test_setup(test_sync_tail, test_setup),
        cmocka_unit_test_setup(test_append_no_syscalls, test_setup),
        cmocka_unit_test_setup(test_direct_probe, test_setup),
        cmocka_unit_test_setup(test_straight, test_setup),
        cmocka_unit_test_setup(test_mark_drained, test_setup),
        cmocka_unit_test_setup(test_mark_drained_twice, test_setup),
        cmocka_unit_test_setup(test_sync_marks, test_setup),
        cmocka_unit_test_setup(test_trim, test_setup),
        cmocka_unit_test_setup(test_ordering, test_setup),
        cmocka_unit_test_setup(test_fault_transparent_pwrite, test_setup),
        cmocka_unit_test_setup(test_fault_unaligned_short, test_setup),
        cmocka_unit_test_setup(test_fault_transparent_aio, test_setup),
        cmocka_unit_test_setup(test_aio_ctx_reuse, test_setup),
        cmocka_unit_test_setup(test_fault_hard_errors, test_setup),
        cmocka_unit_test_setup(test_fault_sync_reports, test_setup),
        cmocka_unit_test_setup(test_fault_close_reports, test_setup),
        cmocka_unit_test_setup(test_fault_recover_by_drain, test_setup),
        cmocka_unit_test_setup(test_live, test_setup),
        cmocka_unit_test_setup(test_node_pair, test_setup),
        cmocka_unit_test_setup(test_userdir, test_setup),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
