#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bblog_log.h"
#include "simlog.h"

struct sim_write {
    uint32_t rank, gen;
    uint64_t seq;               /* append number within the rank */
    uint64_t off, len;
    unsigned char *data;
};

static uint64_t next_rand(uint64_t *x)
{
    /* xorshift64*: plenty for payload bytes, and the same on every host. */
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * UINT64_C(2685821657736338717);
}

static int write_all(int fd, const unsigned char *p, size_t n, off_t off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, off);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t) w;
        off += w;
    }
    return 0;
}

int sim_read_file(const char *path, unsigned char **buf, size_t *len)
{
    struct stat st;
    unsigned char *b = NULL;
    size_t got = 0;
    int fd, rc = 0;

    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY);
    if (fd < 0)
        return errno;
    if (fstat(fd, &st) != 0) {
        rc = errno;
        goto out;
    }
    if (st.st_size > 0) {
        b = malloc((size_t) st.st_size);
        if (!b) {
            rc = ENOMEM;
            goto out;
        }
    }
    while (got < (size_t) st.st_size) {
        ssize_t r = pread(fd, b + got, (size_t) st.st_size - got, (off_t) got);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? errno : EIO;
            goto out;
        }
        got += (size_t) r;
    }
    *buf = b;
    *len = got;
    b = NULL;
out:
    free(b);
    close(fd);
    return rc;
}

/* Where RANK's log starts in its meta and data files: 0, or its slot in the node pair. */
static uint64_t mbase(const struct sim *s, uint32_t rank)
{
    return s->node ? bblog_node_meta_base(bblog_node_lg(s->nprocs), rank) : 0;
}

static uint64_t dbase(const struct sim *s, uint32_t rank)
{
    return s->node ? bblog_node_data_base(bblog_node_lg(s->nprocs), rank) : 0;
}

static int open_logs(struct sim *s, const char *dir, const char *tag, const char *pfs_path,
                     const char *job_id, uint32_t nprocs, uint64_t seed);

int sim_open(struct sim *s, const char *dir, const char *tag, const char *pfs_path,
             const char *job_id, uint32_t nprocs, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    return open_logs(s, dir, tag, pfs_path, job_id, nprocs, seed);
}

int sim_open_node(struct sim *s, const char *dir, const char *tag, const char *pfs_path,
                  const char *job_id, uint32_t nprocs, uint64_t seed)
{
    memset(s, 0, sizeof *s);
    s->node = 1;
    return open_logs(s, dir, tag, pfs_path, job_id, nprocs, seed);
}

static int open_logs(struct sim *s, const char *dir, const char *tag, const char *pfs_path,
                     const char *job_id, uint32_t nprocs, uint64_t seed)
{
    int rc = ENOMEM;

    s->nprocs = nprocs;
    s->rng = seed ? seed : 1;
    s->dir = strdup(dir);
    s->tag = strdup(tag);
    s->pfs_path = strdup(pfs_path);
    s->job_id = strdup(job_id);
    s->logs = calloc(nprocs, sizeof *s->logs);
    s->meta_paths = calloc(nprocs, sizeof *s->meta_paths);
    s->appends = calloc(nprocs, sizeof *s->appends);
    if (!s->dir || !s->tag || !s->pfs_path || !s->job_id || !s->logs || !s->meta_paths ||
        !s->appends)
        return rc;
    /* One set per simulated open: the job and the seed name it (two sims of one job and seed
     * are one open's logs, as the driver's token makes them). */
    s->set_id = bblog_fnv1a64(job_id) ^ (seed * UINT64_C(0x9e3779b97f4a7c15));
    if (s->set_id == 0)
        s->set_id = 1;
    for (uint32_t r = 0; r < nprocs; r++) {
        char name[256];
        /* pwrite, not libaio: io_destroy at close waits for an RCU grace period (about 30 ms
         * a log here), which would dominate these tests; the AIO path is test_log's. */
        struct bblog_log_params p = {
            .dir = dir, .name = name, .pfs_path = pfs_path, .job_id = job_id,
            .rank = r, .nprocs = nprocs, .staging_size = 64 << 10, .staging_count = 2,
            .flags = BBLOG_LOG_NO_AIO, .set_id = s->set_id,
            .slots = s->node ? nprocs : 0, .slot = s->node ? r : 0,
        };

        if (s->node)
            snprintf(name, sizeof name, "%s.n0", tag);
        else
            snprintf(name, sizeof name, "%s.r%u", tag, r);
        rc = bblog_log_create(&p, &s->logs[r]);
        if (rc != 0)
            return rc;
        s->meta_paths[r] = strdup(bblog_log_meta_path(s->logs[r]));
        if (!s->meta_paths[r])
            return ENOMEM;
    }
    return 0;
}

int sim_write(struct sim *s, uint32_t rank, uint64_t off, uint64_t len)
{
    struct sim_write *w;
    int rc;

    if (rank >= s->nprocs || !s->logs[rank] || len == 0)
        return EINVAL;
    if (s->npending == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 64;
        struct sim_write *v = realloc(s->pending, ncap * sizeof *v);

        if (!v)
            return ENOMEM;
        s->pending = v;
        s->cap = ncap;
    }
    w = &s->pending[s->npending];
    *w = (struct sim_write) { .rank = rank, .gen = s->gen, .off = off, .len = len };
    w->data = malloc(len);
    if (!w->data)
        return ENOMEM;
    for (uint64_t i = 0; i < len; i++)
        w->data[i] = (unsigned char) (next_rand(&s->rng) >> 56);
    rc = bblog_log_append(s->logs[rank], off, len, w->data, NULL);
    if (rc != 0) {
        free(w->data);
        return rc;
    }
    w->seq = ++s->appends[rank];
    s->npending++;
    return 0;
}

void sim_set_gen(struct sim *s, uint32_t gen)
{
    s->gen = gen;
    for (uint32_t r = 0; r < s->nprocs; r++)
        if (s->logs[r])
            bblog_log_set_gen(s->logs[r], gen);
}

static int cmp_write(const void *pa, const void *pb)
{
    const struct sim_write *a = pa, *b = pb;

    if (a->gen != b->gen)
        return a->gen < b->gen ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Applies the pending writes, in replay order, to a copy of the drained content. */
static int model_apply(const struct sim *s, unsigned char **buf, size_t *len)
{
    struct sim_write *v = NULL;
    size_t n = s->pfs_len;
    unsigned char *b = NULL;

    for (size_t i = 0; i < s->npending; i++)
        if (s->pending[i].off + s->pending[i].len > n)
            n = (size_t) (s->pending[i].off + s->pending[i].len);
    if (s->npending > 0) {
        v = malloc(s->npending * sizeof *v);
        if (!v)
            return ENOMEM;
        memcpy(v, s->pending, s->npending * sizeof *v);
        qsort(v, s->npending, sizeof *v, cmp_write);
    }
    if (n > 0) {
        b = calloc(1, n);
        if (!b) {
            free(v);
            return ENOMEM;
        }
        if (s->pfs_len)
            memcpy(b, s->pfs, s->pfs_len);
    }
    for (size_t i = 0; i < s->npending; i++)
        memcpy(b + v[i].off, v[i].data, v[i].len);
    free(v);
    *buf = b;
    *len = n;
    return 0;
}

int sim_expected(const struct sim *s, unsigned char **buf, size_t *len)
{
    return model_apply(s, buf, len);
}

static void drop_pending(struct sim *s)
{
    for (size_t i = 0; i < s->npending; i++)
        free(s->pending[i].data);
    s->npending = 0;
}

/* Rewrites RANK's header (at BASE) with the next epoch, as the first half of
 * bblog_log_mark_drained. */
static int bump_epoch(const char *meta_path, uint64_t base)
{
    unsigned char hdr[BBLOG_HEADER_SIZE];
    struct bblog_log_header h;
    int fd, rc;

    fd = open(meta_path, O_RDWR);
    if (fd < 0)
        return errno;
    rc = pread(fd, hdr, sizeof hdr, (off_t) base) == (ssize_t) sizeof hdr ? 0 : EIO;
    if (rc == 0)
        rc = bblog_header_decode(hdr, &h);
    if (rc == 0) {
        h.epoch++;
        bblog_header_encode(&h, hdr);
        rc = write_all(fd, hdr, sizeof hdr, base);
    }
    close(fd);
    return rc;
}

int sim_drain(struct sim *s, uint32_t stuck_rank)
{
    unsigned char *b;
    size_t n;
    int fd, rc;

    for (uint32_t r = 0; r < s->nprocs; r++) {
        if (s->logs[r] && (rc = bblog_log_sync(s->logs[r])) != 0)
            return rc;
    }
    rc = model_apply(s, &b, &n);
    if (rc != 0)
        return rc;
    fd = open(s->pfs_path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0) {
        rc = errno;
        free(b);
        return rc;
    }
    rc = write_all(fd, b, n, 0);
    if (close(fd) != 0 && rc == 0)
        rc = errno;
    if (rc != 0) {
        free(b);
        return rc;
    }
    free(s->pfs);
    s->pfs = b;
    s->pfs_len = n;
    drop_pending(s);
    for (uint32_t r = 0; r < s->nprocs; r++) {
        if (!s->logs[r])
            continue;
        if (r == stuck_rank) {
            rc = bblog_log_close(s->logs[r], 0);
            s->logs[r] = NULL;
            if (rc == 0)
                rc = bump_epoch(s->meta_paths[r], mbase(s, r));
        } else {
            rc = bblog_log_mark_drained_gen(s->logs[r], s->gen + 1);
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

int sim_kill(struct sim *s, uint32_t rank)
{
    int rc;

    if (rank >= s->nprocs || !s->logs[rank])
        return EINVAL;
    rc = bblog_log_sync(s->logs[rank]);
    if (rc == 0)
        rc = bblog_log_close(s->logs[rank], 0);
    s->logs[rank] = NULL;
    return rc;
}

int sim_sync(struct sim *s)
{
    for (uint32_t r = 0; r < s->nprocs; r++) {
        int rc = s->logs[r] ? bblog_log_sync(s->logs[r]) : 0;

        if (rc != 0)
            return rc;
    }
    return 0;
}

int sim_crash(struct sim *s)
{
    int rc = 0;

    for (uint32_t r = 0; r < s->nprocs; r++) {
        int rc2;

        if (!s->logs[r])
            continue;
        rc2 = bblog_log_abandon(s->logs[r]);
        if (rc == 0)
            rc = rc2;
        s->logs[r] = NULL;
    }
    return rc;
}

/* Finds the slot and data offset of RANK's undrained record number WHICH, or of its last one
 * when WHICH is SIZE_MAX. */
static int find_record(const struct sim *s, uint32_t rank, size_t which,
                       struct bblog_log_record *out)
{
    struct bblog_scan *sc;
    struct bblog_log_record r;
    const void *p;
    size_t k = 0;
    int found = 0, rc, n;

    rc = bblog_scan_open_slot(s->meta_paths[rank], s->node ? rank : BBLOG_NODE_HEADER, &sc);
    if (rc != 0)
        return rc;
    while ((n = bblog_scan_next(sc, &r, &p)) == 1) {
        if (r.epoch != bblog_scan_header(sc)->epoch)
            continue;
        if (which == SIZE_MAX || k == which) {
            *out = r;
            found = 1;
        }
        k++;
    }
    bblog_scan_close(sc);
    if (n != 0)
        return n;
    return found ? 0 : ENOENT;
}

/* The model's last pending write of RANK. */
static size_t last_pending(const struct sim *s, uint32_t rank)
{
    size_t best = SIZE_MAX;

    for (size_t i = 0; i < s->npending; i++)
        if (s->pending[i].rank == rank && (best == SIZE_MAX ||
                                           s->pending[i].seq > s->pending[best].seq))
            best = i;
    return best;
}

int sim_tear(struct sim *s, uint32_t rank)
{
    struct bblog_log_record r;
    size_t i = last_pending(s, rank);
    int rc;

    if (i == SIZE_MAX)
        return ENOENT;
    rc = find_record(s, rank, SIZE_MAX, &r);
    if (rc != 0)
        return rc;
    if (r.off != s->pending[i].off || r.len != s->pending[i].len)
        return EPROTO;
    if (s->node) {
        /* In a shared pair a torn append is a record slot written only in part. */
        static const unsigned char zeros[BBLOG_RECORD_SIZE / 2];
        int fd = open(s->meta_paths[rank], O_RDWR);

        if (fd < 0)
            return errno;
        rc = write_all(fd, zeros, sizeof zeros, mbase(s, rank) + r.slot + sizeof zeros);
        close(fd);
        if (rc != 0)
            return rc;
    } else if (truncate(s->meta_paths[rank], (off_t) (r.slot + BBLOG_RECORD_SIZE / 2)) != 0) {
        return errno;
    }
    free(s->pending[i].data);
    memmove(&s->pending[i], &s->pending[i + 1], (s->npending - i - 1) * sizeof *s->pending);
    s->npending--;
    return 0;
}

int sim_corrupt(struct sim *s, uint32_t rank, size_t which, int payload)
{
    struct bblog_log_record r;
    char *path = NULL;
    unsigned char byte;
    off_t pos;
    int fd, rc;

    rc = find_record(s, rank, which, &r);
    if (rc != 0)
        return rc;
    if (payload) {
        size_t n = strlen(s->meta_paths[rank]);

        path = strdup(s->meta_paths[rank]);
        if (!path)
            return ENOMEM;
        memcpy(path + n - 5, ".data", 5);
        pos = (off_t) (dbase(s, rank) + r.data_off + r.len / 2);
    } else {
        pos = (off_t) (mbase(s, rank) + r.slot + BBLOG_R_OFF);
    }
    fd = open(payload ? path : s->meta_paths[rank], O_RDWR);
    free(path);
    if (fd < 0)
        return errno;
    if (pread(fd, &byte, 1, pos) != 1) {
        close(fd);
        return EIO;
    }
    byte ^= 0x10;
    rc = write_all(fd, &byte, 1, pos);
    close(fd);
    return rc;
}

int sim_remove(struct sim *s, uint32_t rank)
{
    size_t n = strlen(s->meta_paths[rank]);
    char *data = strdup(s->meta_paths[rank]);
    int rc = 0;

    if (!data)
        return ENOMEM;
    memcpy(data + n - 5, ".data", 5);
    if (s->node) {
        /* A slot whose log is gone reads as zeros. */
        static const unsigned char zeros[BBLOG_HEADER_SIZE];
        int fd = open(s->meta_paths[rank], O_RDWR);

        rc = fd < 0 ? errno : write_all(fd, zeros, sizeof zeros, mbase(s, rank));
        if (fd >= 0)
            close(fd);
    } else if (unlink(s->meta_paths[rank]) != 0 || unlink(data) != 0) {
        rc = errno;
    }
    free(data);
    for (size_t i = 0; i < s->npending;) {
        if (s->pending[i].rank == rank) {
            free(s->pending[i].data);
            memmove(&s->pending[i], &s->pending[i + 1],
                    (s->npending - i - 1) * sizeof *s->pending);
            s->npending--;
        } else {
            i++;
        }
    }
    return rc;
}

int sim_write_expected(const struct sim *s, const char *path)
{
    unsigned char *b;
    size_t n;
    int fd, rc;

    rc = sim_expected(s, &b, &n);
    if (rc != 0)
        return rc;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        rc = errno;
    } else {
        rc = write_all(fd, b, n, 0);
        if (close(fd) != 0 && rc == 0)
            rc = errno;
    }
    free(b);
    return rc;
}

void sim_free(struct sim *s)
{
    for (uint32_t r = 0; s->logs && r < s->nprocs; r++)
        if (s->logs[r])
            bblog_log_close(s->logs[r], 0);
    for (uint32_t r = 0; s->meta_paths && r < s->nprocs; r++)
        free(s->meta_paths[r]);
    drop_pending(s);
    free(s->pending);
    free(s->pfs);
    free(s->logs);
    free(s->meta_paths);
    free(s->appends);
    free(s->dir);
    free(s->tag);
    free(s->pfs_path);
    free(s->job_id);
    memset(s, 0, sizeof *s);
}
