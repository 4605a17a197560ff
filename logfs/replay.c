/*
 * Crash recovery: discovery of logs, their inspection, and replay of one PFS file's undrained
 * records (bblog_replay.h states the rules). The scanner (scan.c) verifies every checksum; this
 * file decides what to apply, in which order, and writes it.
 *
 * Replay works in two passes so that nothing is written unless every log of the file is sound,
 * and so that the memory it needs is the record list, not the payloads:
 *   pass 1  scan each log with the scanner (which verifies every record and payload checksum),
 *           keep its undrained records (off, len, gen, rank, seq, data_off), refuse on
 *           corruption; give each record a "virtual source" range, its payload's position in
 *           the concatenation of all kept payloads, so that one bblog_reorder over all records
 *           (in gen, rank, seq order) tells which piece of which payload ends up at each byte;
 *   pass 2  walk the merged list in file order, read each piece from its data log, and gather
 *           file-contiguous pieces, whichever ranks they come from, into one pwrite of up to
 *           the buffer size: an N-1 strided file comes back in a few large writes.
 * One merge over all generations gives the same bytes as replaying generation by generation,
 * because (gen, rank, seq) is a total order and the merge is later-wins; it writes each file
 * byte once instead of once per generation that touched it.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "bblog_grow.h"
#include "bblog_io.h"
#include "bblog_reorder.h"
#include "bblog_replay.h"

#define REPLAY_DEFAULT_BUFFER   ((size_t) 4 << 20)

/* The replay files' short name for it. */
#define set_err bblog_replay_set_err

void bblog_replay_set_err(struct bblog_replay_err *err, int rc, const char *path,
                          const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return;
    err->rc = rc;
    snprintf(err->path, sizeof err->path, "%s", path ? path : "");
    va_start(ap, fmt);
    vsnprintf(err->reason, sizeof err->reason, fmt, ap);
    va_end(ap);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n > m && memcmp(s + n - m, suffix, m) == 0;
}

/* ---- inspection and discovery ----------------------------------------------------------- */

void bblog_replay_log_release(struct bblog_replay_log *log)
{
    free(log->meta_path);
    free(log->pfs_path);
    memset(log, 0, sizeof *log);
}

int bblog_replay_inspect(const char *meta_path, struct bblog_replay_log *out)
{
    return bblog_replay_inspect_slot(meta_path, BBLOG_NODE_HEADER, out);
}

int bblog_replay_inspect_slot(const char *meta_path, uint32_t slot, struct bblog_replay_log *out)
{
    struct bblog_scan *s = NULL;
    const struct bblog_log_header *h;
    struct bblog_log_record r;
    const void *payload;
    int rc = 0, n;

    memset(out, 0, sizeof *out);
    out->meta_path = strdup(meta_path);
    if (!out->meta_path)
        return ENOMEM;
    out->slot = slot;
    out->open_rc = bblog_scan_open_slot(meta_path, slot, &s);
    if (out->open_rc != 0)
        return 0;

    h = bblog_scan_header(s);
    out->slots = h->slots;
    out->slot = h->slot;
    out->dbase = h->slots && h->slot != BBLOG_NODE_HEADER ? bblog_node_data_base(h->lg, h->slot)
        : 0;
    out->version = h->version;
    out->rank = h->rank;
    out->nprocs = h->nprocs;
    out->create_time_ns = h->create_time_ns;
    out->epoch = h->epoch;
    out->drained_gen = h->drained_gen;
    out->file_id = h->file_id;
    out->set_id = h->set_id;
    out->synced_count = h->synced.count;
    out->synced_seq = h->synced.seq;
    memcpy(out->job_id, h->job_id, sizeof out->job_id);
    out->job_id[BBLOG_JOB_ID_MAX] = '\0';
    out->pfs_path = strdup(h->pfs_path);
    if (!out->pfs_path) {
        rc = ENOMEM;
        goto out_close;
    }
    /* Past each damaged item, so that the counts cover the whole log. */
    while ((n = bblog_scan_next(s, &r, &payload)) != 0) {
        if (n == BBLOG_ECORRUPT) {
            struct bblog_scan_damage d;

            if (out->damaged++ == 0)
                out->bad_pos = bblog_scan_bad_pos(s);
            (void) bblog_scan_damage(s, &d);
            out->damaged_synced += d.synced;
            out->data_missing |= d.kind == BBLOG_DMG_NO_DATA;
            (void) bblog_scan_resume(s);
            continue;
        }
        if (n != 1)
            break;
        out->records++;
        if (r.epoch != out->epoch || r.gen < out->drained_gen || (r.flags & BBLOG_REC_KEEP))
            continue;
        if (r.flags & (BBLOG_REC_PFS | BBLOG_REC_TRIMMED)) {
            out->marked_records++;
            continue;
        }
        if (out->undrained_records == 0 || r.gen < out->min_gen)
            out->min_gen = r.gen;
        if (out->undrained_records == 0 || r.gen > out->max_gen)
            out->max_gen = r.gen;
        out->undrained_records++;
        out->undrained_bytes += r.len;
    }
    out->scan_rc = n > 0 ? n : out->damaged > 0 ? BBLOG_ECORRUPT : n;
    if (n < 0 && out->damaged == 0)
        out->bad_pos = bblog_scan_bad_pos(s);

out_close:
    bblog_scan_close(s);
    if (rc != 0)
        bblog_replay_log_release(out);
    return rc;
}

void bblog_replay_list_free(struct bblog_replay_list *list)
{
    for (size_t i = 0; i < list->n; i++)
        bblog_replay_log_release(&list->logs[i]);
    free(list->logs);
    list->logs = NULL;
    list->n = 0;
}

/* "bblog-" followed by digits only: the per-user directories bblog_log_userdir makes. */
static int is_userdir_name(const char *name)
{
    const char *p = name + 6;

    if (strncmp(name, "bblog-", 6) != 0 || *p == '\0')
        return 0;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

static int list_push(struct bblog_replay_list *list, size_t *cap, const char *meta_path)
{
    struct bblog_replay_log *l;
    uint32_t slots;
    int rc;

    rc = bblog_grow((void **) &list->logs, cap, list->n + 1, sizeof *list->logs);
    if (rc != 0)
        return rc;
    l = &list->logs[list->n];
    rc = bblog_replay_inspect(meta_path, l);
    if (rc != 0 || l->open_rc != 0 || l->slots == 0) {
        list->n += rc == 0;
        return rc;
    }
    /* A node's log pair: each slot that holds a log is listed as one log; empty slots (their
     * processes never wrote, or removed their logs) are not. */
    slots = l->slots;
    bblog_replay_log_release(l);
    for (uint32_t k = 0; k < slots && rc == 0; k++) {
        rc = bblog_grow((void **) &list->logs, cap, list->n + 1, sizeof *list->logs);
        if (rc != 0)
            break;
        l = &list->logs[list->n];
        rc = bblog_replay_inspect_slot(meta_path, k, l);
        if (rc == 0 && l->open_rc == BBLOG_EBADMAGIC)
            bblog_replay_log_release(l);
        else if (rc == 0)
            list->n++;
    }
    return rc;
}

int bblog_replay_list_file(const char *meta_path, struct bblog_replay_list *out)
{
    size_t cap = 0;
    int rc;

    out->logs = NULL;
    out->n = 0;
    rc = list_push(out, &cap, meta_path);
    if (rc != 0)
        bblog_replay_list_free(out);
    return rc;
}

/* Adds the logs of DIR; at the top level also descends into per-user subdirectories, which
 * are skipped when unreadable (they belong to other users). lstat, not stat: a symbolic link
 * planted in a shared directory must not lead the tool elsewhere. */
static int discover_dir(const char *dir, int top, struct bblog_replay_list *list, size_t *cap,
                        struct bblog_replay_err *err)
{
    DIR *d;
    struct dirent *de;
    char *path = NULL;
    int rc = 0;

    d = opendir(dir);
    if (!d) {
        rc = errno;
        if (!top && rc == EACCES)
            return 0;
        set_err(err, rc, dir, "can't read the log directory: %s", strerror(rc));
        return rc;
    }
    for (;;) {
        struct stat st;

        errno = 0;
        de = readdir(d);
        if (!de) {
            rc = errno;
            if (rc != 0)
                set_err(err, rc, dir, "can't read the log directory: %s", strerror(rc));
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        free(path);
        if (asprintf(&path, "%s/%s", dir, de->d_name) < 0) {
            path = NULL;
            rc = ENOMEM;
            break;
        }
        if (lstat(path, &st) != 0)
            continue;           /* removed since readdir: nothing to list */
        if (S_ISREG(st.st_mode) && ends_with(de->d_name, ".meta"))
            rc = list_push(list, cap, path);
        else if (top && S_ISDIR(st.st_mode) && is_userdir_name(de->d_name))
            rc = discover_dir(path, 0, list, cap, err);
        if (rc != 0)
            break;
    }
    if (rc == ENOMEM)
        set_err(err, rc, dir, "out of memory while listing the logs");
    free(path);
    closedir(d);
    return rc;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int cmp_listed(const void *pa, const void *pb)
{
    const struct bblog_replay_log *a = pa, *b = pb;
    int c;

    if ((a->open_rc != 0) != (b->open_rc != 0))
        return a->open_rc != 0 ? 1 : -1;
    if (a->open_rc == 0) {
        if ((c = cmp_str(a->pfs_path, b->pfs_path)) != 0)
            return c;
        if ((c = strcmp(a->job_id, b->job_id)) != 0)
            return c;
        if (a->set_id != b->set_id)
            return a->set_id < b->set_id ? -1 : 1;
        if (a->rank != b->rank)
            return a->rank < b->rank ? -1 : 1;
    }
    if ((c = strcmp(a->meta_path, b->meta_path)) != 0)
        return c;
    return a->slot < b->slot ? -1 : a->slot > b->slot;
}

int bblog_replay_discover(const char *dir, struct bblog_replay_list *out,
                          struct bblog_replay_err *err)
{
    size_t cap = 0;
    int rc;

    out->logs = NULL;
    out->n = 0;
    rc = discover_dir(dir, 1, out, &cap, err);
    if (rc != 0) {
        bblog_replay_list_free(out);
        return rc;
    }
    if (out->n > 1)
        qsort(out->logs, out->n, sizeof *out->logs, cmp_listed);
    return 0;
}

int bblog_replay_paths(const struct bblog_replay_list *list, const char ***paths, size_t *n)
{
    const char **v = NULL;
    size_t k = 0;

    *paths = NULL;
    *n = 0;
    if (list->n > 0) {
        v = malloc(list->n * sizeof *v);
        if (!v)
            return ENOMEM;
    }
    for (size_t i = 0; i < list->n; i++) {
        const char *p = list->logs[i].pfs_path;
        size_t j;

        if (list->logs[i].open_rc != 0 || !p)
            continue;
        for (j = 0; j < k && strcmp(v[j], p) != 0; j++)
            ;
        if (j == k)
            v[k++] = p;
    }
    *paths = v;
    *n = k;
    return 0;
}

/* The name stem of a log: its file name without ".rRANK.meta" (the driver names the logs of
 * one open STEM.rRANK.meta); *len 0 when the name is not of that form. */
static const char *name_stem(const char *meta_path, size_t *len, uint32_t *rank)
{
    const char *base = strrchr(meta_path, '/'), *p, *end;
    unsigned long v = 0;

    base = base ? base + 1 : meta_path;
    *len = 0;
    end = base + strlen(base);
    if (end - base < 8 || strcmp(end - 5, ".meta") != 0)
        return base;
    end -= 5;
    for (p = end; p > base && p[-1] >= '0' && p[-1] <= '9'; p--)
        ;
    if (p == end || p - base < 3 || p[-1] != 'r' || p[-2] != '.' || end - p > 9)
        return base;
    for (const char *q = p; q < end; q++)
        v = v * 10 + (unsigned long) (*q - '0');
    *rank = (uint32_t) v;
    *len = (size_t) (p - 2 - base);
    return base;
}

static int in_set(const struct bblog_replay_log *l, const struct bblog_replay_set *set)
{
    return l->open_rc == 0 && strcmp(l->pfs_path, set->pfs_path) == 0 &&
           strcmp(l->job_id, set->job_id) == 0 && l->set_id == set->set_id;
}

int bblog_replay_named_in_set(const struct bblog_replay_list *list,
                              const struct bblog_replay_set *set,
                              const struct bblog_replay_log *log, uint32_t *rank)
{
    size_t n, m;
    uint32_t r, r2;
    const char *stem = name_stem(log->meta_path, &n, &r);

    /* an empty log is no damage of its set: it never held anything */
    if (log->open_rc == 0 || log->open_rc == BBLOG_EUNBORN || n == 0)
        return 0;
    for (size_t i = 0; i < list->n; i++) {
        const struct bblog_replay_log *l = &list->logs[i];
        const char *other;

        if (!in_set(l, set))
            continue;
        other = name_stem(l->meta_path, &m, &r2);
        if (m == n && memcmp(other, stem, n) == 0) {
            *rank = r;
            return 1;
        }
    }
    return 0;
}

static int cmp_set(const void *pa, const void *pb)
{
    const struct bblog_replay_set *a = pa, *b = pb;
    int c = strcmp(a->pfs_path, b->pfs_path);

    if (c != 0)
        return c;
    if (a->create_time_ns != b->create_time_ns)
        return a->create_time_ns < b->create_time_ns ? -1 : 1;
    return a->set_id < b->set_id ? -1 : a->set_id > b->set_id;
}

int bblog_replay_sets(const struct bblog_replay_list *list, struct bblog_replay_set **sets,
                      size_t *n)
{
    struct bblog_replay_set *v = NULL;
    size_t k = 0;

    *sets = NULL;
    *n = 0;
    if (list->n > 0) {
        v = calloc(list->n, sizeof *v);
        if (!v)
            return ENOMEM;
    }
    for (size_t i = 0; i < list->n; i++) {
        const struct bblog_replay_log *l = &list->logs[i];
        size_t j;

        if (l->open_rc != 0)
            continue;
        for (j = 0; j < k && !in_set(l, &v[j]); j++)
            ;
        if (j == k) {
            v[k] = (struct bblog_replay_set) {
                .pfs_path = l->pfs_path, .job_id = l->job_id, .set_id = l->set_id,
                .nprocs = l->nprocs, .create_time_ns = l->create_time_ns,
            };
            k++;
        }
        v[j].nlogs++;
        v[j].undrained_bytes += l->undrained_bytes;
        v[j].ntorn += l->scan_rc == BBLOG_ETORN;
        v[j].ncorrupt += l->scan_rc == BBLOG_ECORRUPT;
        if (l->create_time_ns < v[j].create_time_ns)
            v[j].create_time_ns = l->create_time_ns;
    }
    for (size_t i = 0; i < list->n; i++) {
        uint32_t rank;

        for (size_t j = 0; j < k; j++) {
            if (bblog_replay_named_in_set(list, &v[j], &list->logs[i], &rank)) {
                v[j].nunreadable++;
                break;
            }
        }
    }
    if (k > 1)
        qsort(v, k, sizeof *v, cmp_set);
    *sets = v;
    *n = k;
    return 0;
}

/* ---- replay ----------------------------------------------------------------------------- */

/* One undrained record kept for replay. */
struct rrec {
    uint64_t off, len, seq, data_off;
    uint64_t vsrc;              /* payload position in the concatenation of all kept payloads */
    uint32_t gen, rank;
    int trimmed;                /* below its log's trim point: ordered, never written */
    size_t log;                 /* index of its log in the selection */
};

/* One log taking part in the replay. */
struct rlog {
    const struct bblog_replay_log *log;
    size_t index;               /* in the caller's list */
    char *data_path;            /* BASE.data beside the .meta file */
    int fd;                     /* BASE.data, opened on demand by pass 2; -1 when closed */
    struct stat meta_st, data_st;       /* both files as pass 1 found them */
    struct bblog_window win;    /* pass 2's read window over the data log */
};

/* Gathers file-contiguous pieces into one buffer, so that a run of pieces costs one pwrite
 * whichever logs they come from. */
struct wbuf {
    int fd;
    unsigned char *buf;
    size_t cap, used;
    uint64_t off;               /* file offset of buf[0] */
    uint64_t pwrites;
};

static int cmp_rlog_rank(const void *pa, const void *pb)
{
    const struct rlog *a = pa, *b = pb;

    if (a->log->rank != b->log->rank)
        return a->log->rank < b->log->rank ? -1 : 1;
    return strcmp(a->log->meta_path, b->log->meta_path);
}

/* Replay order (bblog_format.h): gen, then rank, then seq. */
static int cmp_rrec_order(const void *pa, const void *pb)
{
    const struct rrec *a = pa, *b = pb;

    if (a->gen != b->gen)
        return a->gen < b->gen ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return 0;
}

void bblog_replay_report_free(struct bblog_replay_report *rep)
{
    free(rep->missing);
    free(rep->torn);
    free(rep->losses);
    memset(rep, 0, sizeof *rep);
}

/* Whether a log takes part in the checks and the replay: it has undrained records (or
 * markers that order against other logs' records, bblog_format.h), or it
 * ended in a way (corruption, a read error) that must refuse its file. A fully drained log,
 * e.g. one an earlier open or an earlier job kept with bblog_keep_logs, holds nothing to apply
 * and is only counted. */
static int has_data(const struct bblog_replay_log *l)
{
    return l->undrained_records > 0 || l->marked_records > 0 ||
        (l->scan_rc != 0 && l->scan_rc != BBLOG_ETORN);
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *) pa, b = *(const uint32_t *) pb;

    return a < b ? -1 : a > b;
}

/* Ranks of [0, nprocs) that have no log of the job: the gaps between the sorted ranks. */
static int find_missing(uint32_t *ranks, size_t n, struct bblog_replay_report *rep)
{
    uint32_t next = 0;

    qsort(ranks, n, sizeof *ranks, cmp_u32);
    rep->missing = malloc((n + 1) * sizeof *rep->missing);
    if (!rep->missing)
        return ENOMEM;
    for (size_t i = 0; i <= n; i++) {
        uint32_t upto = i < n ? ranks[i] : rep->nprocs;

        if (upto > next) {
            rep->missing[rep->nmissing_ranges].first = next;
            rep->missing[rep->nmissing_ranges].last = upto - 1;
            rep->nmissing_ranges++;
            rep->nmissing += upto - next;
        }
        if (i < n && upto >= next)
            next = upto + 1;
    }
    return 0;
}

/* Appends one damaged item to the report; 0 or ENOMEM. */
static int add_loss(struct bblog_replay_report *rep, const struct bblog_replay_loss *loss)
{
    if ((rep->nlosses & (rep->nlosses - 1)) == 0) {     /* 0, 1, 2, 4, ...: grow */
        struct bblog_replay_loss *v = realloc(rep->losses, (rep->nlosses ? 2 * rep->nlosses : 1)
                                              * sizeof *v);

        if (!v)
            return ENOMEM;
        rep->losses = v;
    }
    rep->losses[rep->nlosses++] = *loss;
    return 0;
}

static int rank_missing(const struct bblog_replay_report *rep, uint32_t r)
{
    for (size_t m = 0; m < rep->nmissing_ranges; m++)
        if (r >= rep->missing[m].first && r <= rep->missing[m].last)
            return 1;
    return 0;
}

/* Ranks the set has no log of whose .data file is there beside a log of the set (same
 * directory and name stem) while the .meta file is gone: their data is lost, not absent. Each
 * directory of the selected logs is read once, so the cost is its size, not nprocs. */
static int find_orphans(const struct rlog *v, size_t n, struct bblog_replay_report *rep)
{
    int rc = 0;

    for (size_t i = 0; i < n && rc == 0 && rep->nmissing > 0; i++) {
        const char *path = v[i].log->meta_path, *base = strrchr(path, '/');
        size_t dir_len, stem_len;
        uint32_t own;
        char *dir;
        DIR *d;
        struct dirent *de;

        base = base ? base + 1 : path;
        dir_len = (size_t) (base - path);
        name_stem(path, &stem_len, &own);
        if (stem_len == 0 ||
            (i > 0 && strncmp(v[i - 1].log->meta_path, path, dir_len + stem_len) == 0))
            continue;           /* not a driver name, or this directory and stem were read */
        dir = dir_len > 0 ? strndup(path, dir_len) : strdup(".");
        if (!dir)
            return ENOMEM;
        d = opendir(dir);
        while (d && rc == 0 && (de = readdir(d)) != NULL) {
            size_t len = strlen(de->d_name), m;
            uint32_t r;
            char *meta;
            struct stat st;

            if (len < 6 || strcmp(de->d_name + len - 5, ".data") != 0 ||
                strncmp(de->d_name, base, stem_len) != 0)
                continue;
            memcpy(de->d_name + len - 5, ".meta", 5);       /* name_stem wants a .meta name */
            name_stem(de->d_name, &m, &r);
            if (m != stem_len || !rank_missing(rep, r))
                continue;
            if (asprintf(&meta, "%s/%s", dir, de->d_name) < 0) {
                rc = ENOMEM;
                break;
            }
            if (lstat(meta, &st) != 0 && errno == ENOENT)
                rc = add_loss(rep, &(struct bblog_replay_loss) {
                    .log = v[i].index, .rank = r, .header_rc = ENOENT, .orphan = 1 });
            free(meta);
        }
        if (d)
            closedir(d);
        free(dir);
    }
    return rc;
}

/* Whether L is an empty log (BBLOG_EUNBORN: killed while being created) named for o->pfs_path
 * (and o->job_id). Its header never reached the disk, so only its name tells: the driver names
 * a log JOB.HASH.PID.N.rRANK.meta, or JOB.HASH.PID.N.nNODE.meta for a node's pair, HASH the
 * file path's bblog_fnv1a64 in 16 hex digits, JOB at most 63 bytes with '/' and ' ' as '_'
 * (ad_bblog_open.c). A set id cannot be told from a name. */
static int unborn_of(const struct bblog_replay_log *l, const struct bblog_replay_opts *o)
{
    const char *base = strrchr(l->meta_path, '/'), *end, *p;
    char want[17];
    size_t jlen;

    if (l->open_rc != BBLOG_EUNBORN || o->set_id)
        return 0;
    base = base ? base + 1 : l->meta_path;
    end = base + strlen(base);
    if (end - base < 5 || strcmp(end - 5, ".meta") != 0)
        return 0;
    end -= 5;
    for (int field = 0; field < 3; field++) {   /* .rRANK or .nNODE, .N, .PID */
        for (p = end; p > base && p[-1] >= '0' && p[-1] <= '9'; p--)
            ;
        if (p == end)
            return 0;
        if (field == 0) {
            if (p == base || (p[-1] != 'r' && p[-1] != 'n'))
                return 0;
            p--;
        }
        if (p == base || p[-1] != '.')
            return 0;
        end = p - 1;
    }
    if (end - base < 17 || end[-17] != '.')
        return 0;
    snprintf(want, sizeof want, "%016llx", (unsigned long long) bblog_fnv1a64(o->pfs_path));
    if (memcmp(end - 16, want, 16) != 0)
        return 0;
    if (!o->job_id)
        return 1;
    jlen = strlen(o->job_id);
    if (jlen > 63)
        jlen = 63;
    if ((size_t) (end - 17 - base) != jlen)
        return 0;
    for (size_t i = 0; i < jlen; i++) {
        char c = o->job_id[i] == '/' || o->job_id[i] == ' ' ? '_' : o->job_id[i];

        if (base[i] != c)
            return 0;
    }
    return 1;
}

/* The error of a replay that found no log of the file (of the job, of the set). */
static int no_log_error(const struct bblog_replay_opts *o, struct bblog_replay_err *err)
{
    if (o->set_id)
        set_err(err, ENOENT, o->pfs_path, "no log of this file belongs to set %016llx%s%s",
                (unsigned long long) o->set_id, o->job_id ? " of job " : "",
                o->job_id ? o->job_id : "");
    else if (o->job_id)
        set_err(err, ENOENT, o->pfs_path, "no log of this file belongs to job '%s'", o->job_id);
    else
        set_err(err, ENOENT, o->pfs_path, "no log of this file was found");
    return ENOENT;
}

/* Checks that the logs v[0..n) with data form one process set (one job, one open, a log per
 * rank at most) and sorts them by rank. */
static int one_set(struct rlog *v, size_t n, struct bblog_replay_err *err)
{
    int rc;

    for (size_t i = 1; i < n; i++) {
        const struct bblog_replay_log *a = v[0].log, *b = v[i].log;

        if (strcmp(a->job_id, b->job_id) != 0) {
            rc = BBLOG_EMISMATCH;
            set_err(err, rc, b->meta_path,
                    "log belongs to job '%s', but %s belongs to job '%s': logs of two runs of "
                    "the same file can't be ordered against each other", b->job_id,
                    a->meta_path, a->job_id);
            return rc;
        }
        if (a->nprocs != b->nprocs) {
            rc = BBLOG_EMISMATCH;
            set_err(err, rc, b->meta_path,
                    "log was written by a job of %u processes, but %s by one of %u", b->nprocs,
                    a->meta_path, a->nprocs);
            return rc;
        }
        if (a->set_id != b->set_id) {
            rc = BBLOG_EMISMATCH;
            set_err(err, rc, b->meta_path,
                    "log belongs to set %016llx, but %s to set %016llx of the same job: logs "
                    "of two opens or runs of the file can't be ordered against each other",
                    (unsigned long long) b->set_id, a->meta_path,
                    (unsigned long long) a->set_id);
            return rc;
        }
    }
    qsort(v, n, sizeof *v, cmp_rlog_rank);
    for (size_t i = 0; i < n; i++) {
        if (v[i].log->rank >= v[i].log->nprocs) {
            rc = BBLOG_EBADHDR;
            set_err(err, rc, v[i].log->meta_path, "header names rank %u of only %u processes",
                    v[i].log->rank, v[i].log->nprocs);
            return rc;
        }
        if (i > 0 && v[i].log->rank == v[i - 1].log->rank) {
            rc = BBLOG_EMISMATCH;
            set_err(err, rc, v[i].log->meta_path,
                    "log holds undrained data of rank %u of job '%s', and so does %s: the "
                    "replay order would be undefined", v[i].log->rank, v[i].log->job_id,
                    v[i - 1].log->meta_path);
            return rc;
        }
    }
    return 0;
}

/* Fills the report's job, set, process count and logs from the set v[0..n), and finds the ranks
 * of the set that left no log with data: a drained log of the same set still shows its rank was
 * there; ranks[] (room for every log of the list) collects them. 0 or ENOMEM. */
static int ranks_seen(const struct bblog_replay_list *list, const struct bblog_replay_opts *o,
                      const struct rlog *v, size_t n, uint32_t *ranks,
                      struct bblog_replay_report *rep)
{
    size_t nranks = 0;
    int rc = 0;

    snprintf(rep->job_id, sizeof rep->job_id, "%s", v[0].log->job_id);
    rep->set_id = v[0].log->set_id;
    rep->nprocs = v[0].log->nprocs;
    rep->nlogs = n;
    /* A drained log of the same job and process set still shows its rank was there. */
    for (size_t i = 0; i < list->n; i++) {
        const struct bblog_replay_log *l = &list->logs[i];

        if (l->open_rc == 0 && strcmp(l->pfs_path, o->pfs_path) == 0 &&
            strcmp(l->job_id, rep->job_id) == 0 && l->set_id == rep->set_id &&
            l->nprocs == rep->nprocs) {
            ranks[nranks++] = l->rank;
            /* Drained logs count here most: their processes lived to mark them. */
            if (l->drained_gen > rep->drained_gen)
                rep->drained_gen = l->drained_gen;
        }
    }
    /* A log named after the set whose header is damaged: its rank was there, and whatever it
     * logged is lost. */
    {
        struct bblog_replay_set set = {
            .pfs_path = v[0].log->pfs_path, .job_id = v[0].log->job_id,
            .set_id = v[0].log->set_id,
        };

        for (size_t i = 0; i < list->n && rc == 0; i++) {
            uint32_t rank;

            if (!bblog_replay_named_in_set(list, &set, &list->logs[i], &rank))
                continue;
            if (rank < rep->nprocs)
                ranks[nranks++] = rank;
            rc = add_loss(rep, &(struct bblog_replay_loss) {
                .log = i, .rank = rank, .header_rc = list->logs[i].open_rc,
            });
        }
    }
    if (rc == 0)
        rc = find_missing(ranks, nranks, rep);
    if (rc == 0)
        rc = find_orphans(v, n, rep);
    return rc;
}

/*
 * Picks the logs of opts->pfs_path (and job) that have data, checks that they form one process
 * set, fills the report's job, nprocs, counts and missing ranks, and returns them sorted by
 * rank in *sel (none when every log of the file is drained).
 */
static int select_logs(const struct bblog_replay_list *list, const struct bblog_replay_opts *o,
                       struct rlog **sel, size_t *nsel, struct bblog_replay_report *rep,
                       struct bblog_replay_err *err)
{
    struct rlog *v = NULL;
    uint32_t *ranks = NULL;
    size_t n = 0, ncand = 0, nunborn = 0;
    const struct bblog_replay_log *first = NULL;
    int rc = 0;

    if (list->n > 0) {
        v = calloc(list->n, sizeof *v);
        ranks = malloc(list->n * sizeof *ranks);
        if (!v || !ranks) {
            rc = ENOMEM;
            set_err(err, rc, o->pfs_path, "out of memory");
            goto out;
        }
    }
    for (size_t i = 0; i < list->n; i++) {
        const struct bblog_replay_log *l = &list->logs[i];

        nunborn += unborn_of(l, o);
        if (l->open_rc != 0 || strcmp(l->pfs_path, o->pfs_path) != 0)
            continue;
        if (o->job_id && strcmp(l->job_id, o->job_id) != 0)
            continue;
        if (o->set_id && l->set_id != o->set_id)
            continue;
        if (!first)
            first = l;
        ncand++;
        if (!has_data(l))
            continue;
        v[n].log = l;
        v[n].index = i;
        v[n].fd = -1;
        n++;
    }
    /* Only logs whose creation was cut short: the job was killed while opening the file, before
     * anything was logged. Nothing to replay, rather than no log at all. */
    if (ncand == 0 && nunborn > 0) {
        rep->nempty = nunborn;
        goto out;
    }
    if (ncand == 0) {
        rc = no_log_error(o, err);
        goto out;
    }
    rep->nempty = ncand - n;
    if (n == 0) {
        snprintf(rep->job_id, sizeof rep->job_id, "%s", first->job_id);
        rep->set_id = first->set_id;
        rep->nprocs = first->nprocs;
        goto out;
    }
    rc = one_set(v, n, err);
    if (rc != 0)
        goto out;
    rc = ranks_seen(list, o, v, n, ranks, rep);
    if (rc != 0)
        set_err(err, rc, o->pfs_path, "out of memory");
out:
    free(ranks);
    if (rc != 0 || n == 0) {
        free(v);
        v = NULL;
        n = 0;
    }
    *sel = v;
    *nsel = n;
    return rc;
}

/* The replay state shared by both passes. */
struct bblog_replay {
    const struct bblog_replay_list *list;
    struct bblog_replay_opts opts;      /* the caller's, copied */
    const struct bblog_replay_opts *o;  /* &opts */
    const char *target;
    int status;                 /* pass 1's outcome */
    struct bblog_replay_report *rep;
    struct bblog_replay_err *err;
    struct rlog *sel;
    size_t nsel;
    struct rrec *recs;          /* in pass-1 order, so vsrc ascends with the index */
    size_t nrecs, cap;
};

static void close_data_logs(struct bblog_replay *R)
{
    for (size_t i = 0; i < R->nsel; i++) {
        if (R->sel[i].fd >= 0)
            close(R->sel[i].fd);
        R->sel[i].fd = -1;
    }
}

/* Stats both files of a selected log (lstat: a symlink is seen as one, and refused). A missing
 * data log is damage the scan reports, not an error here: *data is then all zeros. */
static int stat_log(const struct rlog *rl, struct stat *meta, struct stat *data)
{
    if (lstat(rl->log->meta_path, meta) != 0)
        return errno;
    if (lstat(rl->data_path, data) != 0) {
        if (errno != ENOENT || !rl->log->data_missing)
            return errno;
        memset(data, 0, sizeof *data);
        data->st_mode = S_IFREG;
        data->st_uid = meta->st_uid;
    }
    return 0;
}

static int same_file_state(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Opens a selected log for scanning and checks that its header is still the one that
 * selected it. */
static int reopen_log(struct bblog_replay *R, const struct rlog *rl, struct bblog_scan **s)
{
    const struct bblog_replay_log *l = rl->log;
    const struct bblog_log_header *h;
    int rc;

    rc = bblog_scan_open_slot(l->meta_path, l->slot, s);
    if (rc != 0) {
        set_err(R->err, rc, l->meta_path, "can't open the log: %s", bblog_strerror(rc));
        return rc;
    }
    h = bblog_scan_header(*s);
    if (h->rank != l->rank || h->nprocs != l->nprocs || h->epoch != l->epoch ||
        strcmp(h->job_id, l->job_id) != 0 || strcmp(h->pfs_path, l->pfs_path) != 0) {
        rc = BBLOG_EMISMATCH;
        set_err(R->err, rc, l->meta_path,
                "log header changed since the log was listed: is a job still writing to it?");
        bblog_scan_close(*s);
        *s = NULL;
    }
    return rc;
}

/* Appends *r to the record list; 0 or ENOMEM. */
static int push_rec(struct bblog_replay *R, const struct rrec *r)
{
    if (bblog_grow((void **) &R->recs, &R->cap, R->nrecs + 1, sizeof *R->recs) != 0)
        return ENOMEM;
    R->recs[R->nrecs++] = *r;
    return 0;
}

static int keep_record(struct bblog_replay *R, size_t li, const struct bblog_log_record *r,
                       uint64_t *vsrc)
{
    const struct bblog_replay_log *l = R->sel[li].log;
    int rc;

    if (r->len == 0 || r->off > (uint64_t) INT64_MAX - r->len) {
        rc = EOVERFLOW;
        set_err(R->err, rc, l->meta_path,
                "record %llu (meta byte %llu) names file bytes [%llu, +%llu), which no file can "
                "hold", (unsigned long long) r->seq, (unsigned long long) r->slot,
                (unsigned long long) r->off, (unsigned long long) r->len);
        return rc;
    }
    if (push_rec(R, &(struct rrec) {
        .off = r->off, .len = r->len, .seq = r->seq, .data_off = r->data_off, .vsrc = *vsrc,
        .gen = r->gen, .rank = l->rank, .log = li,
    }) != 0) {
        set_err(R->err, ENOMEM, l->meta_path, "out of memory for the record list");
        return ENOMEM;
    }
    *vsrc += r->len;
    R->rep->records++;
    R->rep->bytes_logged += r->len;
    return 0;
}

struct range {
    uint64_t lo, hi;
};

/* File bytes that replay must not write older records over, without writing them itself: a PFS
 * record's, and those below the trim point (bblog_format.h). */
struct marks {
    struct rrec *v;
    size_t n, cap;
};

static int add_mark(struct marks *m, const struct bblog_log_record *r, uint64_t off,
                    uint64_t len, uint32_t rank, size_t li)
{
    if (bblog_grow((void **) &m->v, &m->cap, m->n + 1, sizeof *m->v) != 0)
        return ENOMEM;
    m->v[m->n++] = (struct rrec) { .off = off, .len = len, .seq = r->seq, .gen = r->gen,
        .rank = rank, .log = li, .trimmed = 1 };
    return 0;
}

static int cmp_range(const void *pa, const void *pb)
{
    const struct range *a = pa, *b = pb;

    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/*
 * A log with keep records (bblog_format.h) owes only the bytes inside their union: its kept
 * records recs[first, nrecs) are cut down to those bytes, in place of the whole records, with
 * their virtual sources renumbered from vfirst (the first one's) so that they still tile
 * without gaps; *vsrc gets the next free virtual source.
 */
static int restrict_to_keeps(struct bblog_replay *R, size_t first, uint64_t vfirst,
                             struct range *keep, size_t nkeep, uint64_t *vsrc)
{
    size_t nk = 0, n = R->nrecs - first, m = 0, cap = n + nkeep;
    struct rrec *out;
    uint64_t v;

    qsort(keep, nkeep, sizeof *keep, cmp_range);
    for (size_t i = 0; i < nkeep; i++) {            /* merge into disjoint, sorted ranges */
        if (nk > 0 && keep[i].lo <= keep[nk - 1].hi) {
            if (keep[i].hi > keep[nk - 1].hi)
                keep[nk - 1].hi = keep[i].hi;
        } else {
            keep[nk++] = keep[i];
        }
    }
    /* A record becomes one piece per range it meets: usually one; grown as needed. */
    out = malloc((cap ? cap : 1) * sizeof *out);
    if (!out)
        return ENOMEM;
    v = vfirst;
    for (size_t i = first; i < R->nrecs; i++) {
        const struct rrec r = R->recs[i];
        size_t lo = 0, hi = nk;

        R->rep->bytes_logged -= r.len;
        while (lo < hi) {                           /* first range ending after r.off */
            size_t mid = lo + (hi - lo) / 2;

            if (keep[mid].hi <= r.off)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; k < nk && keep[k].lo < r.off + r.len; k++) {
            uint64_t a = keep[k].lo > r.off ? keep[k].lo : r.off;
            uint64_t b = keep[k].hi < r.off + r.len ? keep[k].hi : r.off + r.len;

            if (bblog_grow((void **) &out, &cap, m + 1, sizeof *out) != 0) {
                free(out);
                return ENOMEM;
            }
            out[m] = r;
            out[m].off = a;
            out[m].len = b - a;
            out[m].data_off = r.data_off + (a - r.off);
            out[m].vsrc = v;
            v += b - a;
            R->rep->bytes_logged += b - a;
            m++;
        }
    }
    R->nrecs = first;
    for (size_t i = 0; i < m; i++) {
        if (push_rec(R, &out[i]) != 0) {
            free(out);
            return ENOMEM;
        }
    }
    free(out);
    *vsrc = v;
    return 0;
}

/*
 * Pass 1: scans every selected log to its end with the scanner, which verifies each record and
 * payload checksum; keeps the undrained records; refuses on anything but a clean end or a torn
 * tail. Writes nothing. Each log's files are stat'ed first, so that pass 2 can tell whether
 * they changed after being verified.
 */
/* Names log rl's .data file and stats both files; refuses what is not the caller's own regular
 * files. 0 or an errno (R->err set). */
static int safe_log(struct bblog_replay *R, struct rlog *rl)
{
    const struct bblog_replay_log *l = rl->log;
    size_t n_meta = strlen(l->meta_path);
    int rc;

    rl->data_path = strdup(l->meta_path);
    if (!rl->data_path) {
        set_err(R->err, ENOMEM, l->meta_path, "out of memory");
        return ENOMEM;
    }
    if (ends_with(rl->data_path, ".meta"))
        memcpy(rl->data_path + n_meta - 5, ".data", 5);
    rc = stat_log(rl, &rl->meta_st, &rl->data_st);
    if (rc != 0) {
        set_err(R->err, rc, l->meta_path, "can't stat the log or its .data file: %s",
                strerror(rc));
        return rc;
    }
    /* Replay writes what a log says where its header says, with the rights of whoever runs
     * it: root replaying a shared bblog_dir must not write another user's data into files
     * that user could not write (nor read, through a planted symlink, files that user
     * could not read). Logs are the caller's own regular files, or refused. */
    if (!S_ISREG(rl->meta_st.st_mode) || !S_ISREG(rl->data_st.st_mode)) {
        set_err(R->err, EPERM, l->meta_path, "log or its .data file is not a regular file (a "
                "symbolic link?): refused; %s was not written", R->target);
        return EPERM;
    }
    if (rl->meta_st.st_uid != geteuid() || rl->data_st.st_uid != geteuid()) {
        set_err(R->err, EPERM, l->meta_path,
                "log belongs to uid %lu, not to you (uid %lu): replay it as its owner, so "
                "that it writes with that user's rights; %s was not written",
                (unsigned long) (rl->meta_st.st_uid != geteuid() ? rl->meta_st.st_uid
                                 : rl->data_st.st_uid),
                (unsigned long) geteuid(), R->target);
        return EPERM;
    }
    return 0;
}

/* What pass 1 gathers of one log besides its records: the ranges its keep records say it owes,
 * and its marks (bytes it wrote to the PFS or trimmed, which no older record may cover). */
struct verify_acc {
    struct range *keep;
    size_t nkeep, keep_cap;
    struct marks marks;
};

/* One record of log i in pass 1: kept, counted as stale or marked, or noted as owed. 0 or an
 * error (R->err set). */
static int verify_record(struct bblog_replay *R, size_t i, const struct bblog_log_record *r,
                         struct verify_acc *a, uint64_t *vsrc)
{
    const struct bblog_replay_log *l = R->sel[i].log;
    /* A drain of all processes completed for every record of gen below the greatest
     * drained_gen of the file's logs (select_logs), even in a log whose process died before
     * marking it (bblog_format.h): those records are on the PFS, and may be older than what
     * other processes wrote there since. */
    uint32_t drained_gen = R->rep->drained_gen;
    int rc = 0;

    if ((r->flags & BBLOG_REC_KEEP) && r->epoch == l->epoch) {
        if (bblog_grow((void **) &a->keep, &a->keep_cap, a->nkeep + 1, sizeof *a->keep) != 0)
            goto oom;
        a->keep[a->nkeep++] = (struct range) { r->off, r->off + r->len };
        return 0;
    }
    if (r->epoch != l->epoch || r->gen < drained_gen || (r->flags & BBLOG_REC_KEEP)) {
        R->rep->stale_records++;
        return 0;
    }
    if (r->flags & (BBLOG_REC_PFS | BBLOG_REC_TRIMMED)) {
        R->rep->marked_records++;
        rc = add_mark(&a->marks, r, r->off, r->len, l->rank, i);
    } else if (r->cut > 0) {
        rc = add_mark(&a->marks, r, r->off - r->cut, r->cut, l->rank, i);
    }
    if (rc != 0)
        goto oom;
    if (!(r->flags & (BBLOG_REC_PFS | BBLOG_REC_TRIMMED)))
        return keep_record(R, i, r, vsrc);
    return 0;
oom:
    set_err(R->err, ENOMEM, l->meta_path, "out of memory");
    return ENOMEM;
}

/* Scans log i to its end (every damaged item listed: the scan resumes past it; only with
 * salvage do the intact records of a damaged log take part in the replay), then restricts its
 * records to what its keep records owe and adds its marks. 0 or an error (R->err set). */
static int verify_log(struct bblog_replay *R, size_t i, struct verify_acc *a, uint64_t *vsrc)
{
    struct rlog *rl = &R->sel[i];
    const struct bblog_replay_log *l = rl->log;
    size_t first = R->nrecs;
    uint64_t vfirst = *vsrc;
    struct bblog_scan *s = NULL;
    struct bblog_log_record r;
    const void *payload;
    int n, rc = safe_log(R, rl);

    if (rc == 0)
        rc = reopen_log(R, rl, &s);
    if (rc != 0)
        return rc;
    a->nkeep = 0;
    while (rc == 0 && (n = bblog_scan_next(s, &r, &payload)) != 0) {
        if (n == BBLOG_ECORRUPT) {
            struct bblog_replay_loss loss = { .log = rl->index, .rank = l->rank };

            (void) bblog_scan_damage(s, &loss.d);
            if ((rc = add_loss(R->rep, &loss)) != 0)
                set_err(R->err, rc, l->meta_path, "out of memory");
            (void) bblog_scan_resume(s);
            continue;
        }
        if (n != 1)
            break;
        rc = verify_record(R, i, &r, a, vsrc);
    }
    if (rc == 0 && a->nkeep > 0 && (n == 0 || n == BBLOG_ETORN) &&
        (rc = restrict_to_keeps(R, first, vfirst, a->keep, a->nkeep, vsrc)) != 0)
        set_err(R->err, rc, l->meta_path, "out of memory");
    /* After the keep restriction, which is about what the log owes, not about what it
     * must protect. */
    for (size_t j = 0; rc == 0 && j < a->marks.n; j++) {
        a->marks.v[j].vsrc = *vsrc;
        *vsrc += a->marks.v[j].len;
        if (push_rec(R, &a->marks.v[j]) != 0) {
            rc = ENOMEM;
            set_err(R->err, rc, l->meta_path, "out of memory for the record list");
        }
    }
    a->marks.n = 0;
    if (rc == 0 && n == BBLOG_ETORN) {
        R->rep->torn[R->rep->ntorn++] = rl->index;
    } else if (rc == 0 && n != 0) {
        rc = n;
        set_err(R->err, rc, l->meta_path, "reading the log failed: %s; %s was not written",
                bblog_strerror(rc), R->target);
    }
    bblog_scan_close(s);
    return rc;
}

/* Damage found in pass 1: salvaged with --salvage, else the replay refuses (BBLOG_ECORRUPT). */
static int damage_verdict(struct bblog_replay *R)
{
    const struct bblog_replay_loss *f = &R->rep->losses[0];
    uint64_t synced = 0;

    for (size_t j = 0; j < R->rep->nlosses; j++)
        synced += R->rep->losses[j].header_rc != 0 || R->rep->losses[j].d.synced;
    if (R->o->salvage) {
        R->rep->salvaged = 1;
        return 0;
    }
    set_err(R->err, BBLOG_ECORRUPT, R->list->logs[f->log].meta_path,
            "%zu damaged %s in the logs of this file (%llu acknowledged by a sync): "
            "%s was not written", R->rep->nlosses,
            R->rep->nlosses == 1 ? "item" : "items", (unsigned long long) synced, R->target);
    return BBLOG_ECORRUPT;
}

static int verify_pass(struct bblog_replay *R)
{
    struct verify_acc a = { NULL, 0, 0, { NULL, 0, 0 } };
    uint64_t vsrc = 0;
    int rc = 0;

    R->rep->torn = malloc(R->nsel * sizeof *R->rep->torn);
    if (!R->rep->torn) {
        set_err(R->err, ENOMEM, R->o->pfs_path, "out of memory");
        return ENOMEM;
    }
    for (size_t i = 0; i < R->nsel && rc == 0; i++)
        rc = verify_log(R, i, &a, &vsrc);
    free(a.keep);
    free(a.marks.v);
    if (rc == 0 && R->rep->nlosses > 0)
        rc = damage_verdict(R);
    for (size_t j = 0; j < R->nrecs; j++)       /* after any keep restriction */
        if (!R->recs[j].trimmed && R->recs[j].off + R->recs[j].len > R->rep->file_end)
            R->rep->file_end = R->recs[j].off + R->recs[j].len;
    return rc;
}

/* Merges all kept records, in replay order, into one sorted, coalesced, later-wins list. */
static int merge(struct bblog_replay *R, struct bblog_seg **out, size_t *nout)
{
    struct rrec *ord = NULL;
    struct bblog_seg *segs = NULL;
    struct bblog_req *reqs = NULL;
    int rc = ENOMEM;

    ord = malloc(R->nrecs * sizeof *ord);
    segs = malloc(R->nrecs * sizeof *segs);
    reqs = malloc(R->nrecs * sizeof *reqs);
    if (!ord || !segs || !reqs)
        goto out;
    memcpy(ord, R->recs, R->nrecs * sizeof *ord);
    qsort(ord, R->nrecs, sizeof *ord, cmp_rrec_order);
    for (size_t i = 0; i < R->nrecs; i++) {
        segs[i] = (struct bblog_seg) { .off = ord[i].off, .len = ord[i].len, .src = ord[i].vsrc };
        reqs[i] = (struct bblog_req) { .segs = &segs[i], .nsegs = 1 };
    }
    rc = bblog_reorder(reqs, R->nrecs, out, nout);
out:
    if (rc != 0)
        set_err(R->err, rc, R->o->pfs_path, "merging the logged extents failed: %s",
                bblog_strerror(rc));
    free(reqs);
    free(segs);
    free(ord);
    return rc;
}

/* The kept record whose virtual source range holds v (records are in ascending vsrc order and
 * tile [0, total) without gaps). */
static size_t rec_at(const struct rrec *recs, size_t n, uint64_t v)
{
    size_t lo = 0, hi = n;

    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;

        if (recs[mid].vsrc <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Bytes of the merged extents that replay writes: all but those of trimmed records. */
static uint64_t to_write(const struct bblog_replay *R, const struct bblog_seg *segs, size_t nseg)
{
    uint64_t total = 0;

    for (size_t j = 0; j < nseg; j++) {
        uint64_t v = segs[j].src, n = segs[j].len;
        size_t k = rec_at(R->recs, R->nrecs, v);

        while (n > 0) {
            const struct rrec *r = &R->recs[k++];
            uint64_t piece = r->vsrc + r->len - v;

            if (piece > n)
                piece = n;
            total += r->trimmed ? 0 : piece;
            v += piece;
            n -= piece;
        }
    }
    return total;
}

static int wbuf_flush(struct bblog_replay *R, struct wbuf *w)
{
    int rc = 0;

    if (w->used > 0) {
        rc = bblog_io_full(w->fd, w->buf, w->used, w->off, 1, NULL);
        w->pwrites++;
        if (rc != 0)
            set_err(R->err, rc, R->target,
                    "writing the replayed data failed: %s; the file is partly replayed: fix the "
                    "cause and replay again", strerror(rc));
    }
    w->used = 0;
    return rc;
}

/* The data log of selected log I, opened on first use. When the process runs out of file
 * descriptors (thousands of ranks), the cached ones are closed and the open is retried. */
static int data_fd(struct bblog_replay *R, size_t i, int *fd)
{
    struct rlog *rl = &R->sel[i];

    if (rl->fd < 0) {
        rl->fd = open(rl->data_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (rl->fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            close_data_logs(R);
            rl->fd = open(rl->data_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (rl->fd < 0) {
            int rc = errno;

            set_err(R->err, rc, rl->data_path, "can't open the data log: %s", strerror(rc));
            return rc;
        }
    }
    *fd = rl->fd;
    return 0;
}

/*
 * Reads data bytes [off, off + len) of log I into out. Pass 2 takes each log's payloads in
 * file order, which for the usual patterns is the log's own order: through a window per log
 * it reads each data log in large reads, not one pread per record (a round trip each when
 * the logs were gathered on a FUSE or network file system). The windows share 64 MiB, at
 * least 64 KiB and at most 1 MiB each; *done < len when the file ends first.
 */
static int data_read(struct bblog_replay *R, size_t i, int fd, unsigned char *out, size_t len,
                     uint64_t off, size_t *done)
{
    size_t win = ((size_t) 64 << 20) / (R->nsel ? R->nsel : 1);

    win = win < ((size_t) 64 << 10) ? (size_t) 64 << 10 : win > ((size_t) 1 << 20) ?
        (size_t) 1 << 20 : win;
    return bblog_window_read(&R->sel[i].win, win, fd, out, len, R->sel[i].log->dbase + off,
                             done);
}

/* Appends file bytes [off, off+n), found at data_off in log I's data file, to the write run. */
static int gather(struct bblog_replay *R, struct wbuf *w, size_t i, uint64_t data_off, uint64_t off,
                  uint64_t n)
{
    int rc = 0, fd = -1;

    while (n > 0 && rc == 0) {
        size_t chunk, done = 0;

        if (w->used > 0 && (off != w->off + w->used || w->used == w->cap)) {
            rc = wbuf_flush(R, w);
            if (rc != 0)
                break;
        }
        if (w->used == 0)
            w->off = off;
        chunk = n < w->cap - w->used ? (size_t) n : w->cap - w->used;
        rc = data_fd(R, i, &fd);
        if (rc != 0)
            break;
        rc = data_read(R, i, fd, w->buf + w->used, chunk, data_off, &done);
        if (rc == 0 && done < chunk)
            rc = BBLOG_EMISMATCH;
        if (rc != 0) {
            set_err(R->err, rc, R->sel[i].data_path,
                    "reading the data log failed: %s; %s is partly replayed: replay again once "
                    "nothing writes to the logs", rc == BBLOG_EMISMATCH ? "it got shorter after "
                    "it was verified" : strerror(rc), R->target);
            break;
        }
        w->used += chunk;
        off += chunk;
        data_off += chunk;
        n -= chunk;
    }
    return rc;
}

/*
 * Pass 2: walks the merged extents in file order and gathers their bytes, read from the data
 * logs at the positions pass 1 recorded, into file-contiguous runs of up to w->cap bytes, one
 * pwrite each. Reading in file order needs random access to the payloads, which the scanner
 * does not give; pass 1 verified these bytes with the scanner, and both files of every log
 * must look exactly as they did then when the writes are done, or the replay fails.
 */
static int apply_pass(struct bblog_replay *R, const struct bblog_seg *segs, size_t nseg,
                      struct wbuf *w)
{
    int rc = 0;

    for (size_t j = 0; j < nseg && rc == 0; j++) {
        uint64_t off = segs[j].off, v = segs[j].src, n = segs[j].len;
        size_t k = rec_at(R->recs, R->nrecs, v);

        /* A merged extent may span records whose sources happen to be adjacent. */
        while (n > 0 && rc == 0) {
            const struct rrec *r = &R->recs[k++];
            uint64_t piece = r->vsrc + r->len - v;

            if (piece > n)
                piece = n;
            /* Trimmed bytes: the PFS file holds them (or what wins over them) already. */
            if (!r->trimmed)
                rc = gather(R, w, r->log, r->data_off + (v - r->vsrc), off, piece);
            off += piece;
            v += piece;
            n -= piece;
        }
    }
    if (rc == 0)
        rc = wbuf_flush(R, w);
    for (size_t i = 0; i < R->nsel && rc == 0; i++) {
        struct stat meta, data;

        rc = stat_log(&R->sel[i], &meta, &data);
        if (rc == 0 && (!same_file_state(&meta, &R->sel[i].meta_st) ||
                        !same_file_state(&data, &R->sel[i].data_st)))
            rc = BBLOG_EMISMATCH;
        if (rc != 0)
            set_err(R->err, rc, R->sel[i].log->meta_path,
                    "log changed during the replay (%s); %s is partly replayed: replay again "
                    "once nothing writes to the logs", rc == BBLOG_EMISMATCH ? "it was modified"
                    : strerror(rc), R->target);
    }
    return rc;
}

/* Opens the target, creating it with mode 0644 if it does not exist, and says which. */
static int open_target(const char *path, int *created, int *fd)
{
    *created = 0;
    *fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (*fd >= 0) {
        *created = 1;
        return 0;
    }
    if (errno != EEXIST)
        return errno;
    *fd = open(path, O_WRONLY | O_CLOEXEC);
    return *fd >= 0 ? 0 : errno;
}

/* Pass 2 into R->target: opens it (created if missing), writes the merged extents, fsyncs
 * and closes it. 0 or an error (R->err set). */
static int write_pass(struct bblog_replay *R, const struct bblog_seg *merged, size_t nmerged)
{
    struct wbuf w = { .fd = -1 };
    int rc;

    w.cap = R->o->buffer_size ? R->o->buffer_size : REPLAY_DEFAULT_BUFFER;
    w.buf = malloc(w.cap);
    if (!w.buf) {
        set_err(R->err, ENOMEM, R->target, "out of memory for a %zu-byte write buffer", w.cap);
        return ENOMEM;
    }
    rc = open_target(R->target, &R->rep->created, &w.fd);
    if (rc != 0) {
        set_err(R->err, rc, R->target, "can't open the file to replay into: %s", strerror(rc));
        free(w.buf);
        return rc;
    }
    rc = apply_pass(R, merged, nmerged, &w);
    /* The replay is done only when its data is durable on the PFS: the logs are the only other
     * copy, and the user may remove them once bblog reports success. */
    if (rc == 0) {
        rc = bblog_io_sync(w.fd, 0);
        if (rc != 0)
            set_err(R->err, rc, R->target, "fsync after replay failed: %s; replay again",
                    strerror(rc));
    }
    if (close(w.fd) != 0 && rc == 0) {
        rc = errno;
        set_err(R->err, rc, R->target, "close after replay failed: %s; replay again",
                strerror(rc));
    }
    R->rep->pwrites = w.pwrites;
    free(w.buf);
    return rc;
}


/* ---- replay in parts ---------------------------------------------------------------------- */

/* The ranks of the replayed set with a log in the list (drained ones too, and those whose
 * header is damaged: their rank was there), ascending and distinct, into a malloc'ed *out. */
static int local_ranks(const struct bblog_replay *R, uint32_t **out, size_t *n)
{
    const struct bblog_replay_report *rep = R->rep;
    uint32_t *v = malloc((R->list->n + 1) * sizeof *v);
    size_t k = 0, m = 0;

    if (!v)
        return ENOMEM;
    for (size_t i = 0; i < R->list->n; i++) {
        const struct bblog_replay_log *l = &R->list->logs[i];

        if (l->open_rc == 0 && strcmp(l->pfs_path, R->o->pfs_path) == 0 &&
            strcmp(l->job_id, rep->job_id) == 0 && l->set_id == rep->set_id &&
            l->nprocs == rep->nprocs)
            v[k++] = l->rank;
    }
    for (size_t j = 0; j < rep->nlosses; j++)
        if (rep->losses[j].header_rc != 0 && rep->losses[j].rank < rep->nprocs)
            v[k++] = rep->losses[j].rank;
    qsort(v, k, sizeof *v, cmp_u32);
    for (size_t i = 0; i < k; i++)
        if (m == 0 || v[i] != v[m - 1])
            v[m++] = v[i];
    *out = v;
    *n = m;
    return 0;
}

int bblog_replay_part_of(const struct bblog_replay *R, struct bblog_replay_part *out)
{
    const struct bblog_replay_report *rep = R->rep;

    memset(out, 0, sizeof *out);
    out->pfs_path = strdup(R->o->pfs_path);
    out->job_id = strdup(rep->job_id);
    out->set_id = rep->set_id;
    out->nprocs = rep->nprocs;
    out->drained_gen = rep->drained_gen;
    out->status = R->status;
    out->nlosses = rep->nlosses;
    if (!out->pfs_path || !out->job_id || local_ranks(R, &out->ranks, &out->nranks) != 0)
        goto oom;
    if (R->status == 0 && R->nrecs > 0) {
        out->recs = malloc(R->nrecs * sizeof *out->recs);
        if (!out->recs)
            goto oom;
        for (size_t i = 0; i < R->nrecs; i++)
            out->recs[i] = (struct bblog_replay_prec) {
                .off = R->recs[i].off, .len = R->recs[i].len, .seq = R->recs[i].seq,
                .gen = R->recs[i].gen, .rank = R->recs[i].rank,
            };
        out->nread = out->nrecs = R->nrecs;
    }
    return 0;
oom:
    bblog_replay_part_release(out);
    return ENOMEM;
}

/* Whether part P is of the replayed file and set (0: another file's or job's; an error when it
 * is of this file and job but cannot be ordered with it). */
static int part_matches(struct bblog_replay *R, const struct bblog_replay_part *p)
{
    const struct bblog_replay_report *rep = R->rep;

    if (p->nprocs == 0 || strcmp(p->pfs_path, R->o->pfs_path) != 0 ||
        strcmp(p->job_id, rep->job_id) != 0)
        return 0;
    if (p->set_id != rep->set_id) {
        if (R->o->set_id || p->nrecs == 0)
            return 0;
        set_err(R->err, BBLOG_EMISMATCH, p->from, "part holds records of set %016llx of this "
                "file, but this node's logs are of set %016llx: name the set to replay (--set)",
                (unsigned long long) p->set_id, (unsigned long long) rep->set_id);
        return BBLOG_EMISMATCH;
    }
    if (p->nprocs != rep->nprocs) {
        set_err(R->err, BBLOG_EMISMATCH, p->from, "part is of a job of %u processes, this "
                "node's logs of one of %u", p->nprocs, rep->nprocs);
        return BBLOG_EMISMATCH;
    }
    if (p->status != 0) {
        set_err(R->err, p->status, p->from, "the logs of %s on that node failed their "
                "verification (%s): nothing written here either", R->o->pfs_path,
                bblog_strerror(p->status));
        return p->status;
    }
    if (p->nlosses > 0 && !R->o->salvage) {
        set_err(R->err, BBLOG_ECORRUPT, p->from, "the logs of %s on that node hold %llu "
                "damaged items: nothing written (--salvage writes what is intact)",
                R->o->pfs_path, (unsigned long long) p->nlosses);
        return BBLOG_ECORRUPT;
    }
    return 1;
}

/* Checks the parts of this file and set against this node's logs: every rank accounted for
 * once; *gen gets the greatest drained_gen. 0 or an error (R->err set). */
static int check_parts(struct bblog_replay *R, const struct bblog_replay_parts *others,
                       uint32_t *gen)
{
    uint32_t *v = NULL;
    size_t n = 0, cap = R->list->n + 1;
    int rc = local_ranks(R, &v, &n);

    for (size_t i = 0, k = n; rc == 0 && i < others->n; i++) {
        const struct bblog_replay_part *p = &others->v[i];
        int m = part_matches(R, p);

        if (m <= 0) {
            rc = m;
            continue;
        }
        if (p->nlosses > 0)
            R->rep->salvaged = 1;
        if (p->drained_gen > *gen)
            *gen = p->drained_gen;
        R->rep->nparts++;
        if (bblog_grow((void **) &v, &cap, k + p->nranks, sizeof *v) != 0) {
            rc = ENOMEM;
            break;
        }
        memcpy(v + k, p->ranks, p->nranks * sizeof *v);
        n = k += p->nranks;
    }
    if (rc == 0) {
        qsort(v, n, sizeof *v, cmp_u32);
        for (size_t i = 1; i < n && rc == 0; i++)
            if (v[i] == v[i - 1]) {
                rc = BBLOG_EMISMATCH;
                set_err(R->err, rc, R->o->pfs_path, "rank %u of the set has logs on two nodes "
                        "(two parts, or a part and this node's logs): the replay order would "
                        "be undefined", v[i]);
            }
    }
    if (rc == 0 && (n < R->rep->nprocs || (n > 0 && v[n - 1] >= R->rep->nprocs))) {
        rc = EAGAIN;
        set_err(R->err, rc, R->o->pfs_path, "only %zu of the set's %u ranks have a log here or "
                "in a part: another node's part is missing; nothing written", n,
                R->rep->nprocs);
    } else if (rc == ENOMEM) {
        set_err(R->err, rc, R->o->pfs_path, "out of memory");
    }
    free(v);
    return rc;
}

/* Drops this node's records of gens below GEN (another node's logs say that a drain of all
 * processes completed them) and numbers the rest's virtual sources again, without gaps. */
static void drop_drained(struct bblog_replay *R, uint32_t gen)
{
    uint64_t v = 0;
    size_t m = 0;

    R->rep->file_end = 0;
    for (size_t i = 0; i < R->nrecs; i++) {
        struct rrec r = R->recs[i];

        if (r.gen < gen) {
            R->rep->stale_records++;
            if (!r.trimmed) {
                R->rep->records--;
                R->rep->bytes_logged -= r.len;
            }
            continue;
        }
        r.vsrc = v;
        v += r.len;
        if (!r.trimmed && r.off + r.len > R->rep->file_end)
            R->rep->file_end = r.off + r.len;
        R->recs[m++] = r;
    }
    R->nrecs = m;
}

/* This node's bytes to write: its records' ranges, sorted and merged, into a malloc'ed *out. */
static int local_ranges(const struct bblog_replay *R, struct range **out, size_t *n)
{
    struct range *v = malloc((R->nrecs ? R->nrecs : 1) * sizeof *v);
    size_t k = 0, m = 0;

    if (!v)
        return ENOMEM;
    for (size_t i = 0; i < R->nrecs; i++)
        if (!R->recs[i].trimmed)
            v[k++] = (struct range) { R->recs[i].off, R->recs[i].off + R->recs[i].len };
    qsort(v, k, sizeof *v, cmp_range);
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && v[i].lo <= v[m - 1].hi) {
            if (v[i].hi > v[m - 1].hi)
                v[m - 1].hi = v[i].hi;
        } else {
            v[m++] = v[i];
        }
    }
    *out = v;
    *n = m;
    return 0;
}

int bblog_replay_ranges(const struct bblog_replay *R, uint64_t **ranges, size_t *n)
{
    struct range *v;
    int rc = local_ranges(R, &v, n);

    if (rc != 0)
        return rc;
    if (!(*ranges = malloc((*n ? *n : 1) * 2 * sizeof **ranges))) {
        free(v);
        return ENOMEM;
    }
    for (size_t i = 0; i < *n; i++) {
        (*ranges)[2 * i] = v[i].lo;
        (*ranges)[2 * i + 1] = v[i].hi;
    }
    free(v);
    return 0;
}

/* Appends the other nodes' records of gen GEN or later that meet this node's bytes, as records
 * that order but are never written (no log of this node holds them). */
static int add_foreign(struct bblog_replay *R, const struct bblog_replay_parts *others,
                       uint32_t gen)
{
    uint64_t *mine = NULL;
    size_t nmine = 0;
    uint64_t v = R->nrecs ? R->recs[R->nrecs - 1].vsrc + R->recs[R->nrecs - 1].len : 0;
    int rc = bblog_replay_ranges(R, &mine, &nmine);

    for (size_t i = 0; rc == 0 && i < others->n; i++) {
        const struct bblog_replay_part *p = &others->v[i];

        if (part_matches(R, p) != 1)
            continue;
        for (size_t j = 0; rc == 0 && j < p->nread; j++) {
            const struct bblog_replay_prec *q = &p->recs[j];

            if (q->gen < gen || !bblog_replay_meets(mine, nmine, q->off, q->off + q->len))
                continue;
            rc = push_rec(R, &(struct rrec) {
                .off = q->off, .len = q->len, .seq = q->seq, .gen = q->gen, .rank = q->rank,
                .vsrc = v, .trimmed = 1, .log = SIZE_MAX,
            });
            v += q->len;
            R->rep->foreign_records++;
        }
    }
    if (rc != 0)
        set_err(R->err, rc, R->o->pfs_path, "out of memory for the other nodes' records");
    free(mine);
    return rc;
}

/* Orders the other nodes' parts of this file against this node's records (bblog_replay.h). */
static int add_parts(struct bblog_replay *R, const struct bblog_replay_parts *others)
{
    uint32_t gen = R->rep->drained_gen;
    int rc = check_parts(R, others, &gen);

    if (rc != 0)
        return rc;
    /* Every rank is accounted for: those without a log here have one on another node. */
    free(R->rep->missing);
    R->rep->missing = NULL;
    R->rep->nmissing_ranges = 0;
    R->rep->nmissing = 0;
    if (gen > R->rep->drained_gen) {
        R->rep->drained_gen = gen;
        drop_drained(R, gen);
    }
    return R->nrecs > 0 ? add_foreign(R, others, gen) : 0;
}

/* ---- the entry points ---------------------------------------------------------------------- */

int bblog_replay_prepare(const struct bblog_replay_list *list,
                         const struct bblog_replay_opts *opts, struct bblog_replay **out,
                         struct bblog_replay_report *rep, struct bblog_replay_err *err)
{
    struct bblog_replay *R;
    int rc;

    *out = NULL;
    memset(rep, 0, sizeof *rep);
    if (err) {
        err->rc = 0;
        err->path[0] = '\0';
        err->reason[0] = '\0';
    }
    if (!opts || !opts->pfs_path || !list) {
        rc = BBLOG_EINVAL;
        set_err(err, rc, NULL, "no PFS file named to replay");
        return rc;
    }
    R = calloc(1, sizeof *R);
    if (!R) {
        set_err(err, ENOMEM, opts->pfs_path, "out of memory");
        return ENOMEM;
    }
    R->list = list;
    R->opts = *opts;
    R->o = &R->opts;
    R->rep = rep;
    R->err = err;
    R->target = opts->target ? opts->target : opts->pfs_path;
    rc = select_logs(list, R->o, &R->sel, &R->nsel, rep, err);
    if (rc != 0) {
        free(R);
        return rc;
    }
    if (R->nsel > 0)
        rc = verify_pass(R);
    R->status = rc;
    *out = R;
    return rc;
}

int bblog_replay_finish(struct bblog_replay *R, const struct bblog_replay_parts *others)
{
    struct bblog_replay_report *rep = R->rep;
    struct bblog_seg *merged = NULL;
    size_t nmerged = 0;
    int rc = R->status;

    if (rc == 0 && others)
        rc = add_parts(R, others);
    if (rc == 0 && R->nrecs > 0 && (rc = merge(R, &merged, &nmerged)) == 0) {
        rep->extents = nmerged;
        rep->bytes_written = to_write(R, merged, nmerged);
        if (!R->o->dry_run)
            rc = write_pass(R, merged, nmerged);
    }
    if (rc == 0 && rep->salvaged) {
        const char *done = R->o->dry_run ? "would be replayed (dry run)" : "were replayed";

        rc = BBLOG_ECORRUPT;
        if (rep->nlosses > 0)
            set_err(R->err, rc, R->list->logs[rep->losses[0].log].meta_path,
                    "%zu damaged %s in the logs of this file: the intact records %s",
                    rep->nlosses, rep->nlosses == 1 ? "item" : "items", done);
        else
            set_err(R->err, rc, R->o->pfs_path, "damaged items in the logs of this file on "
                    "other nodes (their parts say how many): the intact records %s", done);
    }
    free(merged);
    close_data_logs(R);
    return rc;
}

void bblog_replay_free(struct bblog_replay *R)
{
    if (!R)
        return;
    close_data_logs(R);
    for (size_t i = 0; i < R->nsel; i++) {
        free(R->sel[i].data_path);
        bblog_window_free(&R->sel[i].win);
    }
    free(R->recs);
    free(R->sel);
    free(R);
}

int bblog_replay_file(const struct bblog_replay_list *list, const struct bblog_replay_opts *opts,
                      struct bblog_replay_report *rep, struct bblog_replay_err *err)
{
    struct bblog_replay *R;
    int rc = bblog_replay_prepare(list, opts, &R, rep, err);

    if (R) {
        if (rc == 0)
            rc = bblog_replay_finish(R, NULL);
        bblog_replay_free(R);
    }
    return rc;
}
