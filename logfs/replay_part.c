/*
 * Part files of a replay in parts (bblog_replay.h): what one node publishes of its logs so
 * that the other nodes can order their records against its own. A part file holds one section
 * per file the node has logs of:
 *   file     u64 magic "BBLGPART", u32 version, u32 number of sections
 *   section  a head (struct part_head), the PFS path and the job id (no terminating NUL), the
 *            ranks (u32 each), the blocks' index (struct part_block each) and the CRC-32C of
 *            all of these (u32); then the records (struct bblog_replay_prec, 32 B each) sorted
 *            by offset, in blocks of PART_BLOCK (the last one shorter), each block's CRC-32C
 *            and range of offsets in its index entry
 * in the writer's byte order (a reader of the other order sees a wrong magic). A reader takes
 * only the blocks whose range meets the bytes it writes (bblog_replay_parts_read_for), so a
 * node reads the records near its own, not every node's. Parts are read by every node while
 * the others may still be writing theirs: a part file appears whole, by a rename, or not at
 * all.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bblog_format.h"
#include "bblog_grow.h"
#include "bblog_io.h"
#include "bblog_replay.h"

#define PART_MAGIC      0x54524150474c4242ull   /* "BBLGPART" read as a little-endian u64 */
#define PART_VERSION    2u
#define PART_BLOCK      4096u                   /* records per block: 128 KiB */

struct part_file_head {
    uint64_t magic;
    uint32_t version, nparts;
};

struct part_head {
    uint64_t set_id, nlosses, nrecs, bytes, runs;
    uint32_t nprocs, drained_gen, nranks, path_len, job_len;
    int32_t status;
};

/* A block of records: the offsets its records start at and end before, their count and CRC. */
struct part_block {
    uint64_t lo, hi;
    uint32_t n, crc;
};

_Static_assert(sizeof(struct bblog_replay_prec) == 32, "a part's record is 32 bytes");
_Static_assert(sizeof(struct part_head) == 64, "a part's head is 64 bytes");
_Static_assert(sizeof(struct part_block) == 24, "a part's block entry is 24 bytes");

static uint64_t blocks_of(uint64_t nrecs)
{
    return (nrecs + PART_BLOCK - 1) / PART_BLOCK;
}

/* The replay files' short name for it. */
#define part_err bblog_replay_set_err

void bblog_replay_part_release(struct bblog_replay_part *p)
{
    free(p->from);
    free(p->pfs_path);
    free(p->job_id);
    free(p->ranks);
    free(p->recs);
    memset(p, 0, sizeof *p);
}

void bblog_replay_parts_free(struct bblog_replay_parts *parts)
{
    for (size_t i = 0; i < parts->n; i++)
        bblog_replay_part_release(&parts->v[i]);
    free(parts->v);
    parts->v = NULL;
    parts->n = 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* fwrite that also folds the bytes into *crc; 0 or an errno. */
static int put(FILE *f, const void *buf, size_t len, uint32_t *crc)
{
    if (crc)
        *crc = bblog_crc32c(*crc, buf, len);
    if (len > 0 && fwrite(buf, 1, len, f) != len)
        return errno ? errno : EIO;
    return 0;
}

static int by_off(const void *pa, const void *pb)
{
    const struct bblog_replay_prec *a = pa, *b = pb;

    return a->off < b->off ? -1 : a->off > b->off;
}

/* The union of N records sorted by offset: its bytes and file-contiguous runs. */
static void union_of(const struct bblog_replay_prec *v, size_t n, uint64_t *bytes,
                     uint64_t *runs)
{
    uint64_t lo = 0, hi = 0;

    *bytes = *runs = 0;
    for (size_t j = 0; j < n; j++) {
        if (j > 0 && v[j].off <= hi) {
            hi = v[j].off + v[j].len > hi ? v[j].off + v[j].len : hi;
            continue;
        }
        *bytes += hi - lo;
        (*runs)++;
        lo = v[j].off;
        hi = v[j].off + v[j].len;
    }
    *bytes += hi - lo;
}

/* P's records sorted by offset into a malloc'ed *out, and the blocks' index into *blk. */
static int sort_blocks(const struct bblog_replay_part *p, struct bblog_replay_prec **out,
                       struct part_block **blk)
{
    uint64_t nb = blocks_of(p->nrecs);
    struct bblog_replay_prec *v = malloc((p->nrecs ? p->nrecs : 1) * sizeof *v);
    struct part_block *b = malloc((nb ? nb : 1) * sizeof *b);

    if (!v || !b) {
        free(v);
        free(b);
        return ENOMEM;
    }
    if (p->nrecs > 0)
        memcpy(v, p->recs, p->nrecs * sizeof *v);
    qsort(v, p->nrecs, sizeof *v, by_off);
    for (uint64_t i = 0; i < nb; i++) {
        const struct bblog_replay_prec *r = &v[i * PART_BLOCK];
        uint32_t n = (uint32_t) (p->nrecs - i * PART_BLOCK < PART_BLOCK ?
                                 p->nrecs - i * PART_BLOCK : PART_BLOCK);

        b[i] = (struct part_block) { .lo = r[0].off, .n = n,
                                     .crc = bblog_crc32c(0, r, n * sizeof *r) };
        for (uint32_t j = 0; j < n; j++)
            if (r[j].off + r[j].len > b[i].hi)
                b[i].hi = r[j].off + r[j].len;
    }
    *out = v;
    *blk = b;
    return 0;
}

static int put_part(FILE *f, const struct bblog_replay_part *p)
{
    struct part_head h = {
        .set_id = p->set_id, .nlosses = p->nlosses, .nrecs = p->nrecs, .nprocs = p->nprocs,
        .drained_gen = p->drained_gen, .nranks = (uint32_t) p->nranks,
        .path_len = (uint32_t) strlen(p->pfs_path), .job_len = (uint32_t) strlen(p->job_id),
        .status = p->status,
    };
    struct bblog_replay_prec *v;
    struct part_block *blk;
    uint32_t crc = 0;
    int rc = sort_blocks(p, &v, &blk);

    if (rc != 0)
        return rc;
    union_of(v, p->nrecs, &h.bytes, &h.runs);
    rc = put(f, &h, sizeof h, &crc);
    if (rc == 0)
        rc = put(f, p->pfs_path, h.path_len, &crc);
    if (rc == 0)
        rc = put(f, p->job_id, h.job_len, &crc);
    if (rc == 0)
        rc = put(f, p->ranks, p->nranks * sizeof *p->ranks, &crc);
    if (rc == 0)
        rc = put(f, blk, blocks_of(p->nrecs) * sizeof *blk, &crc);
    if (rc == 0)
        rc = put(f, &crc, sizeof crc, NULL);
    if (rc == 0)
        rc = put(f, v, p->nrecs * sizeof *v, NULL);
    free(v);
    free(blk);
    return rc;
}

int bblog_replay_parts_write(const char *path, const struct bblog_replay_part *v, size_t n,
                             struct bblog_replay_err *err)
{
    struct part_file_head fh = { PART_MAGIC, PART_VERSION, (uint32_t) n };
    char tmp[PATH_MAX];
    FILE *f;
    int rc;

    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int) sizeof tmp) {
        part_err(err, ENAMETOOLONG, path, "part file name too long");
        return ENAMETOOLONG;
    }
    f = fopen(tmp, "wbx");
    if (!f && errno == EEXIST && unlink(tmp) == 0)      /* left by an earlier, killed try */
        f = fopen(tmp, "wbx");
    if (!f) {
        rc = errno;
        part_err(err, rc, tmp, "can't create the part file: %s", strerror(rc));
        return rc;
    }
    rc = put(f, &fh, sizeof fh, NULL);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = put_part(f, &v[i]);
    if (rc == 0 && fflush(f) != 0)
        rc = errno;
    if (rc == 0)
        rc = bblog_io_sync(fileno(f), 0);
    if (fclose(f) != 0 && rc == 0)
        rc = errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = errno;
    if (rc != 0) {
        part_err(err, rc, tmp, "writing the part file failed: %s", strerror(rc));
        unlink(tmp);
    }
    return rc;
}

/* ---- reading ------------------------------------------------------------------------------ */

/* fread of exactly len bytes, folded into *crc; 0, or BBLOG_ECORRUPT when the file ends. */
static int get(FILE *f, void *buf, size_t len, uint32_t *crc)
{
    if (len > 0 && fread(buf, 1, len, f) != len)
        return ferror(f) ? (errno ? errno : EIO) : BBLOG_ECORRUPT;
    if (crc)
        *crc = bblog_crc32c(*crc, buf, len);
    return 0;
}

static char *get_str(FILE *f, uint32_t len, uint32_t *crc, int *rc)
{
    char *s = malloc((size_t) len + 1);

    if (!s) {
        *rc = ENOMEM;
        return NULL;
    }
    *rc = get(f, s, len, crc);
    s[len] = '\0';
    return s;
}

/* Whether a section's head holds values a writer could have written, given the bytes left. */
static int sane_head(const struct part_head *h, uint64_t left)
{
    return h->nprocs > 0 && h->nranks <= h->nprocs && h->path_len > 0 &&
           h->path_len < PATH_MAX && h->job_len <= BBLOG_JOB_ID_MAX &&
           h->nrecs <= left / sizeof(struct bblog_replay_prec) &&
           (uint64_t) h->nranks * 4 + h->path_len + h->job_len +
           blocks_of(h->nrecs) * sizeof(struct part_block) <= left;
}

int bblog_replay_meets(const uint64_t *ranges, size_t n, uint64_t lo, uint64_t hi)
{
    size_t a = 0, b = n;

    while (a < b) {                     /* the first range ending after lo */
        size_t mid = a + (b - a) / 2;

        if (ranges[2 * mid + 1] <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    return a < n && ranges[2 * a] < hi;
}

/* What is read of each section: its records when ALL, else those of the blocks meeting the
 * ranges of its file in WANT (none when WANT has none). */
struct reading {
    int all;
    const struct bblog_replay_want *want;
    size_t nwant;
};

static const struct bblog_replay_want *want_of(const struct reading *rd, const char *path)
{
    for (size_t i = 0; i < rd->nwant; i++)
        if (strcmp(rd->want[i].pfs_path, path) == 0)
            return &rd->want[i];
    return NULL;
}

/* The head, path, job, ranks and blocks' index of a section into *p and *blk, CRC checked. */
static int get_head(FILE *f, uint64_t size, struct bblog_replay_part *p, struct part_block **blk)
{
    struct part_head h;
    uint32_t crc = 0, want;
    uint64_t nb;
    int rc = get(f, &h, sizeof h, &crc);

    if (rc != 0)
        return rc;
    if (!sane_head(&h, size - (uint64_t) ftello(f)))
        return BBLOG_ECORRUPT;
    *p = (struct bblog_replay_part) {
        .set_id = h.set_id, .nlosses = h.nlosses, .nrecs = h.nrecs, .nprocs = h.nprocs,
        .drained_gen = h.drained_gen, .nranks = h.nranks, .status = h.status,
        .bytes = h.bytes, .runs = h.runs,
    };
    nb = blocks_of(h.nrecs);
    p->pfs_path = get_str(f, h.path_len, &crc, &rc);
    if (rc == 0)
        p->job_id = get_str(f, h.job_len, &crc, &rc);
    if (rc == 0 && (!(p->ranks = malloc((h.nranks ? h.nranks : 1) * sizeof *p->ranks)) ||
                    !(*blk = malloc((nb ? nb : 1) * sizeof **blk))))
        rc = ENOMEM;
    if (rc == 0)
        rc = get(f, p->ranks, h.nranks * sizeof *p->ranks, &crc);
    if (rc == 0)
        rc = get(f, *blk, nb * sizeof **blk, &crc);
    if (rc == 0)
        rc = get(f, &want, sizeof want, NULL);
    if (rc == 0 && want != crc)
        rc = BBLOG_ECORRUPT;
    for (size_t i = 0; rc == 0 && i < p->nranks; i++)
        if (p->ranks[i] >= p->nprocs || (i > 0 && p->ranks[i] <= p->ranks[i - 1]))
            rc = BBLOG_ECORRUPT;
    for (uint64_t i = 0; rc == 0 && i < nb; i++)
        if ((*blk)[i].n != (i + 1 < nb ? PART_BLOCK : h.nrecs - i * PART_BLOCK))
            rc = BBLOG_ECORRUPT;
    return rc;
}

/* The records of the blocks RD takes into p->recs, their CRCs checked; leaves f after them. */
static int get_records(FILE *f, const struct reading *rd, const struct part_block *blk,
                       struct bblog_replay_part *p)
{
    const struct bblog_replay_want *w = rd->all ? NULL : want_of(rd, p->pfs_path);
    off_t start = ftello(f);
    uint64_t nb = blocks_of(p->nrecs), take = 0;
    int rc = 0;

    for (uint64_t i = 0; (rd->all || w) && i < nb; i++)
        if (!w || bblog_replay_meets(w->ranges, w->n, blk[i].lo, blk[i].hi))
            take += blk[i].n;
    if (take == 0)
        return fseeko(f, (off_t) (p->nrecs * sizeof *p->recs), SEEK_CUR) == 0 ? 0 : errno;
    if (!(p->recs = malloc(take * sizeof *p->recs)))
        return ENOMEM;
    for (uint64_t i = 0; rc == 0 && i < nb; i++) {
        struct bblog_replay_prec *r = p->recs + p->nread;

        if (w && !bblog_replay_meets(w->ranges, w->n, blk[i].lo, blk[i].hi))
            continue;
        if (fseeko(f, start + (off_t) (i * PART_BLOCK * sizeof *r), SEEK_SET) != 0)
            rc = errno;
        if (rc == 0)
            rc = get(f, r, blk[i].n * sizeof *r, NULL);
        if (rc == 0 && bblog_crc32c(0, r, blk[i].n * sizeof *r) != blk[i].crc)
            rc = BBLOG_ECORRUPT;
        p->nread += rc == 0 ? blk[i].n : 0;
    }
    if (rc == 0 && fseeko(f, start + (off_t) (p->nrecs * sizeof *p->recs), SEEK_SET) != 0)
        rc = errno;
    return rc;
}

/* Reads one section into *p: its head, path, job and ranks, and the records RD says. */
static int get_part(FILE *f, uint64_t size, const struct reading *rd,
                    struct bblog_replay_part *p)
{
    struct part_block *blk = NULL;
    int rc = get_head(f, size, p, &blk);

    if (rc == 0 && (uint64_t) ftello(f) + p->nrecs * sizeof *p->recs > size)
        rc = BBLOG_ECORRUPT;
    if (rc == 0)
        rc = get_records(f, rd, blk, p);
    free(blk);
    return rc;
}

/* Appends the sections of part file PATH to *out. */
static int read_file(const char *path, const struct reading *rd, struct bblog_replay_parts *out,
                     size_t *cap, struct bblog_replay_err *err)
{
    struct part_file_head fh;
    struct stat st;
    FILE *f = fopen(path, "rb");
    int rc;

    if (!f || fstat(fileno(f), &st) != 0) {
        rc = errno;
        part_err(err, rc, path, "can't read the part file: %s", strerror(rc));
        if (f)
            fclose(f);
        return rc;
    }
    rc = get(f, &fh, sizeof fh, NULL);
    if (rc == 0 && (fh.magic != PART_MAGIC || fh.version != PART_VERSION))
        rc = BBLOG_EBADMAGIC;
    for (uint32_t i = 0; rc == 0 && i < fh.nparts; i++) {
        struct bblog_replay_part *p;

        if (bblog_grow((void **) &out->v, cap, out->n + 1, sizeof *out->v) != 0) {
            rc = ENOMEM;
            break;
        }
        p = &out->v[out->n++];
        memset(p, 0, sizeof *p);
        rc = get_part(f, (uint64_t) st.st_size, rd, p);
        if (rc == 0 && !(p->from = strdup(path)))
            rc = ENOMEM;
    }
    if (rc == 0 && ftello(f) != st.st_size)     /* bytes past the last section */
        rc = BBLOG_ECORRUPT;
    fclose(f);
    if (rc != 0)
        part_err(err, rc, path, "%s", rc == BBLOG_EBADMAGIC ? "not a part file of this "
                 "version of bblog (or of a machine of the other byte order)" :
                 rc == BBLOG_ECORRUPT ? "the part file is damaged (cut short, or a checksum "
                 "or value is wrong): have its node write it again" : strerror(rc));
    return rc;
}

static int is_part_name(const struct dirent *d)
{
    size_t n = strlen(d->d_name);

    return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".part") == 0;
}

static int read_dir(const char *dir, const char *skip, const struct reading *rd,
                    struct bblog_replay_parts *out, struct bblog_replay_err *err)
{
    struct dirent **names = NULL;
    size_t cap = 0;
    int n = scandir(dir, &names, is_part_name, alphasort), rc = 0;

    out->v = NULL;
    out->n = 0;
    if (n < 0) {
        rc = errno;
        part_err(err, rc, dir, "can't list the parts: %s", strerror(rc));
        return rc;
    }
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];

        if (rc == 0 && !(skip && strcmp(names[i]->d_name, skip) == 0)) {
            if (snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name) >= (int) sizeof path) {
                rc = ENAMETOOLONG;
                part_err(err, rc, dir, "part file name too long");
            } else {
                rc = read_file(path, rd, out, &cap, err);
            }
        }
        free(names[i]);
    }
    free(names);
    if (rc != 0)
        bblog_replay_parts_free(out);
    return rc;
}

int bblog_replay_parts_read(const char *dir, const char *skip, int with_records,
                            struct bblog_replay_parts *out, struct bblog_replay_err *err)
{
    struct reading rd = { .all = with_records };

    return read_dir(dir, skip, &rd, out, err);
}

int bblog_replay_parts_read_for(const char *dir, const char *skip,
                                const struct bblog_replay_want *want, size_t nwant,
                                struct bblog_replay_parts *out, struct bblog_replay_err *err)
{
    struct reading rd = { .want = want, .nwant = nwant };

    return read_dir(dir, skip, &rd, out, err);
}

/* ---- completeness ------------------------------------------------------------------------- */

static int same_set(const struct bblog_replay_part *a, const struct bblog_replay_part *b)
{
    return a->set_id == b->set_id && strcmp(a->pfs_path, b->pfs_path) == 0 &&
           strcmp(a->job_id, b->job_id) == 0;
}

/* Whether the set of parts->v[first] is complete: 1, 0, or BBLOG_EMISMATCH. */
static int set_complete(const struct bblog_replay_parts *parts, size_t first, char *seen,
                        struct bblog_replay_err *err)
{
    const struct bblog_replay_part *a = &parts->v[first];
    uint32_t have = 0;

    memset(seen, 0, a->nprocs);
    for (size_t i = first; i < parts->n; i++) {
        const struct bblog_replay_part *b = &parts->v[i];

        if (!same_set(a, b))
            continue;
        if (b->nprocs != a->nprocs) {
            part_err(err, BBLOG_EMISMATCH, b->from, "part says %s (job %s) was opened by %u "
                     "processes, %s says %u", b->pfs_path, b->job_id, b->nprocs, a->from,
                     a->nprocs);
            return BBLOG_EMISMATCH;
        }
        for (size_t k = 0; k < b->nranks; k++) {
            if (seen[b->ranks[k]]) {
                part_err(err, BBLOG_EMISMATCH, b->from, "rank %u of %s (job %s) has logs on "
                         "two nodes: its replay order would be undefined", b->ranks[k],
                         b->pfs_path, b->job_id);
                return BBLOG_EMISMATCH;
            }
            seen[b->ranks[k]] = 1;
            have++;
        }
    }
    return have == a->nprocs;
}

int bblog_replay_parts_complete(const struct bblog_replay_parts *parts,
                                struct bblog_replay_err *err)
{
    uint32_t most = 1;
    char *seen;
    int all = 1;

    for (size_t i = 0; i < parts->n; i++)
        most = parts->v[i].nprocs > most ? parts->v[i].nprocs : most;
    if (!(seen = malloc(most))) {
        part_err(err, ENOMEM, NULL, "out of memory");
        return ENOMEM;
    }
    for (size_t i = 0; i < parts->n && all == 1; i++) {
        size_t j;

        for (j = 0; j < i && !same_set(&parts->v[j], &parts->v[i]); j++)
            ;
        if (j == i)                     /* the first part of its set */
            all = set_complete(parts, i, seen, err);
    }
    free(seen);
    return all;
}

/* ---- how finely the nodes' bytes are cut -------------------------------------------------- */

int bblog_replay_parts_runs(const struct bblog_replay_parts *parts, uint64_t *bytes,
                            uint64_t *runs)
{
    *bytes = *runs = 0;
    for (size_t i = 0; i < parts->n; i++) {
        const struct bblog_replay_part *p = &parts->v[i];
        struct bblog_replay_prec *v;
        uint64_t b = p->bytes, r = p->runs;

        if (!p->from && p->nrecs > 0) {         /* made here, not read: from its records */
            if (!(v = malloc(p->nrecs * sizeof *v)))
                return ENOMEM;
            memcpy(v, p->recs, p->nrecs * sizeof *v);
            qsort(v, p->nrecs, sizeof *v, by_off);
            union_of(v, p->nrecs, &b, &r);
            free(v);
        }
        *bytes += b;
        *runs += r;
    }
    return 0;
}
