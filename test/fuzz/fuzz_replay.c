/*
 * Fuzz target: replay planning and application (logfs/replay.c with reorder/ and plan/ underneath).
 * One input is up to four log pairs (fuzzlog.h), written to the scratch directory; the
 * directory is discovered and every PFS path found in it is replayed, first as a dry run,
 * then for real into a scratch file (never into the path the headers name: the fuzzer
 * chooses those).
 *
 * Checks besides the sanitizers: discovery lists every log; the dry run and the real run
 * agree on the plan; and a successful replay left exactly the bytes of a brute-force model:
 * the undrained records of the file's logs (less those below the greatest drained_gen, and
 * cut down to their log's keep records if it has any), read back with the scanner, applied byte by byte
 * in (gen, rank, seq) order, later wins (bblog_format.h), nothing written past the last
 * logged byte, holes left as zeros.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bblog_log.h"
#include "bblog_replay.h"
#include "fuzzlog.h"

/* Beyond these, an input is replayed but not checked byte by byte (the model's memory and
 * time), or only dry-run (the scratch file would take too much of /dev/shm). */
#define ORACLE_MAX_BYTES    ((uint64_t) 4 << 20)
#define WRITE_MAX_BYTES     ((uint64_t) 16 << 20)
#define WRITE_MAX_CALLS     ((uint64_t) 100000)
#define HOLE_CHECK_MAX      ((uint64_t) 1 << 20)

/* An undrained record as the model sees it. */
struct orec {
    uint64_t off, len, seq;
    uint32_t gen, rank;
    unsigned char *buf;
};

struct model {
    struct orec *v;
    size_t n, cap;
    uint64_t bytes;             /* payload bytes the model applies */
    uint64_t records;           /* undrained data records, before any keep restriction */
};

static void model_push(struct model *m, struct orec o)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->v = realloc(m->v, m->cap * sizeof *m->v);
        FUZZ_CHECK(m->v != NULL);
    }
    m->v[m->n++] = o;
}

/* Keep records (bblog_format.h): the log's records v[first, n) shrink, byte by byte, to the
 * bytes some keep record [keep[2k], keep[2k+1]) covers. */
static void model_keep(struct model *m, size_t first, const uint64_t *keep, size_t nkeep)
{
    size_t n = m->n;

    for (size_t i = first; i < n; i++) {
        struct orec r = m->v[i];
        unsigned char *mask = calloc((size_t) r.len, 1);

        FUZZ_CHECK(mask != NULL);
        for (size_t k = 0; k < nkeep; k++) {
            uint64_t a = keep[2 * k] > r.off ? keep[2 * k] : r.off;
            uint64_t b = keep[2 * k + 1] < r.off + r.len ? keep[2 * k + 1] : r.off + r.len;

            if (a < b)
                memset(mask + (a - r.off), 1, (size_t) (b - a));
        }
        m->bytes -= r.len;
        for (uint64_t j = 0; j < r.len;) {
            uint64_t e = j;

            if (!mask[j]) {
                j++;
                continue;
            }
            while (e < r.len && mask[e])
                e++;
            struct orec p = r;
            p.off = r.off + j;
            p.len = e - j;
            p.buf = malloc((size_t) p.len);
            FUZZ_CHECK(p.buf != NULL);
            memcpy(p.buf, r.buf + j, (size_t) p.len);
            model_push(m, p);
            m->bytes += p.len;
            j = e;
        }
        free(mask);
        free(r.buf);
        m->v[i].buf = NULL;
        m->v[i].len = 0;        /* removed below */
    }
    /* Drop the whole records, keep their pieces. */
    {
        size_t k = first;
        for (size_t i = first; i < m->n; i++)
            if (m->v[i].len > 0)
                m->v[k++] = m->v[i];
        m->n = k;
    }
}

static void model_free(struct model *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].buf);
    free(m->v);
    memset(m, 0, sizeof *m);
}

static int cmp_order(const void *pa, const void *pb)
{
    const struct orec *a = pa, *b = pb;

    if (a->gen != b->gen)
        return a->gen < b->gen ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *) pa, b = *(const uint64_t *) pb;

    return a < b ? -1 : a > b;
}

/* The undrained records of the logs of PATH's replayed set (REP) in LIST, payloads copied.
 * Returns 0, or -1 when they exceed ORACLE_MAX_BYTES (no check then). */
static int model_load(const struct bblog_replay_list *list, const char *path,
                      const struct bblog_replay_report *rep, struct model *m)
{
    uint32_t drained_gen = rep->drained_gen;
    uint64_t *keep = NULL;
    struct orec *marks = NULL;
    size_t first, nkeep, nmarks;

    for (size_t i = 0; i < list->n; i++) {
        const struct bblog_replay_log *l = &list->logs[i];
        struct bblog_scan *s = NULL;
        struct bblog_log_record r;
        const void *payload;

        /* The logs of the replayed set (and process count) only: another set's logs may hold
         * records that its own drained_gen, not this one's, marks drained. */
        if (l->open_rc != 0 || strcmp(l->pfs_path, path) != 0 || l->set_id != rep->set_id ||
            strcmp(l->job_id, rep->job_id) != 0 || l->nprocs != rep->nprocs)
            continue;
        FUZZ_CHECK(bblog_scan_open(l->meta_path, &s) == 0);
        first = m->n;
        nkeep = 0;
        nmarks = 0;
        while (bblog_scan_next(s, &r, &payload) == 1) {
            if (r.epoch != bblog_scan_header(s)->epoch)
                continue;
            /* PFS records and bytes below the trim point: ordered, never written, and not
             * restricted by keep records (bblog_format.h). */
            if (r.gen >= drained_gen && (r.flags & (BBLOG_REC_PFS | BBLOG_REC_TRIMMED) ||
                                         r.cut > 0)) {
                marks = realloc(marks, (nmarks + 1) * sizeof *marks);
                FUZZ_CHECK(marks != NULL);
                marks[nmarks++] = (struct orec) { .off = r.flags & BBLOG_REC_CUT ?
                    r.off - r.cut : r.off, .len = r.flags & BBLOG_REC_CUT ? r.cut : r.len,
                    .seq = r.seq, .gen = r.gen, .rank = l->rank, .buf = NULL };
                if (!(r.flags & BBLOG_REC_CUT))
                    continue;
            }
            if (r.flags & BBLOG_REC_KEEP) {
                keep = realloc(keep, 2 * (nkeep + 1) * sizeof *keep);
                FUZZ_CHECK(keep != NULL);
                keep[2 * nkeep] = r.off;
                keep[2 * nkeep + 1] = r.off + r.len;
                nkeep++;
                continue;
            }
            if (r.gen < drained_gen)    /* drained job-wide (bblog_format.h) */
                continue;
            m->bytes += r.len;
            m->records++;
            if (m->bytes > ORACLE_MAX_BYTES) {
                bblog_scan_close(s);
                free(keep);
                free(marks);
                return -1;
            }
            struct orec o = { .off = r.off, .len = r.len, .seq = r.seq, .gen = r.gen,
                              .rank = l->rank, .buf = malloc((size_t) r.len) };
            FUZZ_CHECK(o.buf != NULL);
            memcpy(o.buf, payload, (size_t) r.len);
            model_push(m, o);
        }
        bblog_scan_close(s);
        if (nkeep > 0)
            model_keep(m, first, keep, nkeep);
        for (size_t k = 0; k < nmarks; k++)
            model_push(m, marks[k]);
    }
    free(keep);
    free(marks);
    return 0;
}

/* Bytes [off, off + len) of the file at FD equal WANT (or zeros when WANT is NULL). */
static void check_range(int fd, uint64_t off, uint64_t len, const unsigned char *want)
{
    unsigned char buf[65536];

    while (len > 0) {
        size_t n = len < sizeof buf ? (size_t) len : sizeof buf;

        FUZZ_CHECK(pread(fd, buf, n, (off_t) off) == (ssize_t) n);
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(buf[i] == (want ? want[i] : 0));
        if (want)
            want += n;
        off += n;
        len -= n;
    }
}

/* Compares the replayed file OUT with the model of PATH's logs. */
static void check_replayed(const struct bblog_replay_list *list, const char *path,
                           const char *out, const struct bblog_replay_report *rep)
{
    struct model m = { 0 };
    uint64_t *b, end = 0, prev = 0;
    size_t nb = 0;
    struct stat st;
    int fd;

    if (model_load(list, path, rep, &m) != 0) {
        model_free(&m);
        return;
    }
    FUZZ_CHECK(m.records == rep->records && m.bytes == rep->bytes_logged);
    qsort(m.v, m.n, sizeof *m.v, cmp_order);
    b = malloc((2 * m.n + 1) * sizeof *b);
    FUZZ_CHECK(b != NULL);
    for (size_t i = 0; i < m.n; i++) {
        b[nb++] = m.v[i].off;
        b[nb++] = m.v[i].off + m.v[i].len;
        if (m.v[i].buf && m.v[i].off + m.v[i].len > end)
            end = m.v[i].off + m.v[i].len;
    }
    FUZZ_CHECK(rep->file_end == end);
    qsort(b, nb, sizeof *b, cmp_u64);

    fd = open(out, O_RDONLY | O_CLOEXEC);
    FUZZ_CHECK(fd >= 0 && fstat(fd, &st) == 0);
    FUZZ_CHECK((uint64_t) st.st_size == end);
    /* Between consecutive boundaries the winner is the same record throughout: the last one
     * in replay order that covers the piece, or none (a hole). */
    for (size_t i = 0; i < nb; i++) {
        uint64_t lo = prev, hi = b[i];
        const struct orec *w = NULL;

        prev = b[i];
        if (hi == lo)
            continue;
        for (size_t k = m.n; k-- > 0;) {
            if (m.v[k].off <= lo && hi <= m.v[k].off + m.v[k].len) {
                w = &m.v[k];
                break;
            }
        }
        /* A marker that wins leaves the target's bytes alone: zeros in this new file. */
        if (w && w->buf)
            check_range(fd, lo, hi - lo, w->buf + (lo - w->off));
        else if (hi - lo <= HOLE_CHECK_MAX && hi <= end)
            check_range(fd, lo, hi - lo, NULL);
    }
    close(fd);
    free(b);
    model_free(&m);
}

static const size_t buffer_sizes[4] = { 0, 7, 512, 65536 };

static void replay_path(const struct bblog_replay_list *list, const char *path, const char *out,
                        unsigned flags)
{
    struct bblog_replay_opts o = { .pfs_path = path, .target = out, .dry_run = 1 };
    struct bblog_replay_report dry, rep;
    struct bblog_replay_err err;
    int rc_dry, rc;

    o.buffer_size = buffer_sizes[(flags >> 2) & 3];
    FUZZ_CHECK(unlink(out) == 0 || errno == ENOENT);
    rc_dry = bblog_replay_file(list, &o, &dry, &err);
    FUZZ_CHECK(rc_dry == err.rc);
    FUZZ_CHECK(access(out, F_OK) != 0);
    if (rc_dry != 0 || dry.bytes_written > WRITE_MAX_BYTES) {
        bblog_replay_report_free(&dry);
        return;
    }
    if (o.buffer_size > 0 && dry.bytes_written / o.buffer_size > WRITE_MAX_CALLS)
        o.buffer_size = 0;
    o.dry_run = 0;
    rc = bblog_replay_file(list, &o, &rep, &err);
    FUZZ_CHECK(rc == err.rc);
    if (getenv("BBLOG_FUZZ_VERBOSE"))
        fprintf(stderr, "fuzz_replay: %s: %s, %llu records, %llu bytes written%s%s\n", path,
                bblog_strerror(rc), (unsigned long long) rep.records,
                (unsigned long long) rep.bytes_written, rc ? ": " : "", rc ? err.reason : "");
    if (rc == 0) {
        FUZZ_CHECK(rep.records == dry.records && rep.extents == dry.extents);
        FUZZ_CHECK(rep.bytes_written == dry.bytes_written && rep.file_end == dry.file_end);
        if (rep.records == 0)
            FUZZ_CHECK(access(out, F_OK) != 0);
        else
            check_replayed(list, path, out, &rep);
    }
    bblog_replay_report_free(&rep);
    bblog_replay_report_free(&dry);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_log logs[FUZZ_MAX_LOGS];
    struct bblog_replay_list list;
    struct bblog_replay_err err;
    const char **paths = NULL;
    char dir[4200], out[4200], name[32], path[4300];
    size_t nlogs, npaths;
    unsigned flags;

    if (fuzz_parse(data, size, &flags, logs, FUZZ_MAX_LOGS, &nlogs) != 0)
        return 0;
    snprintf(dir, sizeof dir, "%s/logs", fuzz_tmpdir());
    snprintf(out, sizeof out, "%s/out", fuzz_tmpdir());
    FUZZ_CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
    for (int i = 0; i < FUZZ_MAX_LOGS; i++) {
        snprintf(path, sizeof path, "%s/l%d.meta", dir, i);
        unlink(path);
        snprintf(path, sizeof path, "%s/l%d.data", dir, i);
        unlink(path);
    }
    for (size_t i = 0; i < nlogs; i++) {
        snprintf(name, sizeof name, "l%zu", i);
        fuzz_write_log(dir, name, &logs[i], flags, NULL);
    }
    FUZZ_CHECK(bblog_replay_discover(dir, &list, &err) == 0);
    FUZZ_CHECK(list.n == nlogs);
    FUZZ_CHECK(bblog_replay_paths(&list, &paths, &npaths) == 0);
    for (size_t i = 0; i < npaths; i++)
        replay_path(&list, paths[i], out, flags);
    free(paths);
    bblog_replay_list_free(&list);
    unlink(out);
    return 0;
}
