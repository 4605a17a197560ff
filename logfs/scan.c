/*
 * The log scanner (DESIGN.md section 4; layout in bblog_format.h): reads a log pair back,
 * record by record, and hands out only payloads whose CRC matches the record that a valid
 * rec_crc vouches for. It never trusts a length before checking it against the file it points
 * into, so corrupt input cannot make it allocate or read absurd amounts.
 *
 * How damage is classified. The writer writes payloads, makes them durable, then writes the
 * records that point at them, and records each completed sync in the header's sync slot
 * (bblog_format.h). So a crash can only leave a torn tail of records written after the last
 * sync, and:
 * - a record slot that is bad (partial, all zeros or failing its CRC) is a torn tail
 *   (BBLOG_ETORN) when it lies past the last sync's meta_end and no record with a valid CRC
 *   follows it; an all-zero slot there ends the log whatever follows, since file systems may
 *   extend a file with zeros whose contents never arrived;
 * - everything else is corruption (BBLOG_ECORRUPT), damage done after the fact: a bad slot
 *   below meta_end or followed by a valid record, a record with a valid CRC but impossible
 *   contents (len 0, seq not the previous + 1, epoch after the header's), a record of the
 *   header's epoch whose payload is missing, cut or fails its CRC (its payload was durable
 *   before it was written; those of earlier epochs are drained and not read),
 *   a data log that is missing while records exist, and a meta log that ends before meta_end.
 * bblog_scan_damage says what was found, and bblog_scan_resume goes on past it, for tools that
 * list every damaged record or salvage the intact ones.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bblog_io.h"
#include "bblog_log.h"

/* Meta log bytes read per pread: 1024 slots. */
#define CHUNK ((size_t) 65536)
/* Data log bytes read per pread. Payloads lie in the data log in record order, so a scan
 * reads it front to back: in reads this large rather than one per record, which on a FUSE or
 * network file system (logs gathered on the PFS after a crash) costs a round trip each. */
#define DATA_WINDOW ((size_t) 1 << 20)
#define RS BBLOG_RECORD_SIZE

/* Payload verdicts of payload_check besides errnos. */
#define PAYLOAD_OK 0
#define PAYLOAD_BAD (-1)

struct bblog_scan {
    int fd_meta, fd_data;               /* fd_data -1 when the data log is missing */
    uint64_t meta_size, data_size;      /* as found at open */
    uint64_t mbase, dbase;              /* a node pair's slot (bblog_format.h), else 0 */
    uint64_t synced_end;                /* meta_end of the last sync, 0 if none */
    uint64_t trim;                      /* the last sync's trim point (bblog_format.h) */
    uint64_t trimmed;                   /* records skipped below it */
    struct bblog_log_header hdr;
    uint64_t pos;                       /* next slot */
    uint64_t last_seq;                  /* seq of the previous record, when have_seq */
    int have_seq;                       /* 0 before the first record and after damage */
    int err;                            /* sticky result once the scan stopped */
    uint64_t bad_pos;
    struct bblog_scan_damage dmg;       /* what stopped it */
    unsigned char *chunk;               /* meta bytes [chunk_off, chunk_off + chunk_len) */
    uint64_t chunk_off;
    size_t chunk_len;
    unsigned char *payload;
    size_t payload_cap;
    struct bblog_window win;            /* over the data log, for small payloads */
};

/* Copies slot pos (pos + RS <= meta_size) to out. */
static int slot_read(struct bblog_scan *s, uint64_t pos, unsigned char *out)
{
    if (pos < s->chunk_off || pos + RS > s->chunk_off + s->chunk_len) {
        uint64_t want = s->meta_size - pos;
        size_t done = 0;
        int rc;

        if (want > CHUNK)
            want = CHUNK;
        rc = bblog_io_full(s->fd_meta, s->chunk, (size_t) want, s->mbase + pos, 0, &done);
        if (rc != 0)
            return rc;
        s->chunk_off = pos;
        s->chunk_len = done;
        /* The file shrank under us: whatever is missing now reads as a torn tail. */
        if (done < RS)
            memset(s->chunk, 0, RS);
    }
    memcpy(out, s->chunk + (pos - s->chunk_off), RS);
    return 0;
}

/* PAYLOAD_OK when r's payload lies inside the data log and matches crc, PAYLOAD_BAD when not,
 * or an errno from reading it. */
static int payload_check(struct bblog_scan *s, const struct bblog_log_record *r, uint32_t crc)
{
    size_t done = 0;
    int rc;

    if (r->flags & BBLOG_REC_NO_PAYLOAD)       /* bblog_format.h */
        return crc == 0 ? PAYLOAD_OK : PAYLOAD_BAD;
    if (s->fd_data < 0)
        return PAYLOAD_BAD;
    /* The bounds check comes before any allocation: len is bounded by a real file size. */
    if (r->len == 0 || r->data_off > s->data_size || r->len > s->data_size - r->data_off
        || r->len > SIZE_MAX)
        return PAYLOAD_BAD;
    if (r->len > s->payload_cap) {
        unsigned char *p = realloc(s->payload, (size_t) r->len);

        if (p == NULL)
            return ENOMEM;
        s->payload = p;
        s->payload_cap = (size_t) r->len;
    }
    rc = bblog_window_read(&s->win, DATA_WINDOW, s->fd_data, s->payload, (size_t) r->len,
                           s->dbase + r->data_off, &done);
    if (rc != 0)
        return rc;
    if (done < r->len)
        return PAYLOAD_BAD;
    /* A record the trim point cut: what lay below was punched, the CRC cannot be checked. */
    if (!(r->flags & BBLOG_REC_CUT) && bblog_crc32c(0, s->payload, (size_t) r->len) != crc)
        return PAYLOAD_BAD;
    return PAYLOAD_OK;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* Stops the scan at slot pos with result rc, which every later call repeats. */
static int scan_stop(struct bblog_scan *s, uint64_t pos, int rc)
{
    s->err = rc;
    s->bad_pos = pos;
    return rc;
}

/* Stops at damage of the given kind; r is the record when its CRC vouches for it. */
static int damage(struct bblog_scan *s, uint64_t pos, int kind, const struct bblog_log_record *r)
{
    memset(&s->dmg, 0, sizeof s->dmg);
    s->dmg.pos = pos;
    s->dmg.kind = kind;
    s->dmg.synced = pos < s->synced_end;
    if (r != NULL) {
        s->dmg.record_known = 1;
        s->dmg.rec = *r;
        s->dmg.rec.slot = pos;
    }
    if (kind == BBLOG_DMG_TRUNCATED)
        s->dmg.lost_records = (s->synced_end - pos) / RS;
    return scan_stop(s, pos, BBLOG_ECORRUPT);
}

/* The slot at pos is bad (KIND: cut, zeros or failing its CRC): corrupt below the last sync's
 * meta_end, else torn unless a record with a valid CRC follows it. */
static int scan_bad(struct bblog_scan *s, uint64_t pos, int kind)
{
    unsigned char slot[RS];
    struct bblog_log_record r;
    uint32_t crc;

    if (pos < s->synced_end)
        return damage(s, pos, kind, NULL);
    if (kind != BBLOG_DMG_SLOT)         /* zeros or a cut slot end the log */
        goto torn;
    for (uint64_t q = pos + RS; q + RS <= s->meta_size; q += RS) {
        int rc = slot_read(s, q, slot);

        if (rc != 0)
            return scan_stop(s, pos, rc);
        if (!all_zero(slot, RS) && bblog_record_decode(slot, &r, &crc) == 0)
            return damage(s, pos, kind, NULL);
    }
torn:
    memset(&s->dmg, 0, sizeof s->dmg);
    s->dmg.pos = pos;
    s->dmg.kind = kind;
    return scan_stop(s, pos, BBLOG_ETORN);
}

/* Hands the record at pos out to the caller (with its payload, or NULL) and moves past it. */
static int hand_out(struct bblog_scan *s, uint64_t pos, struct bblog_log_record *r,
                    struct bblog_log_record *rec, const void **payload, const void *p)
{
    r->slot = pos;
    *rec = *r;
    *payload = p;
    s->pos = pos + RS;
    s->last_seq = r->seq;
    s->have_seq = 1;
    return 1;
}

int bblog_scan_next(struct bblog_scan *s, struct bblog_log_record *rec, const void **payload)
{
    unsigned char slot[RS];
    struct bblog_log_record r;
    uint64_t pos = s->pos;
    uint32_t crc;
    int rc;

    if (s->err != 0)
        return s->err;
    if (pos >= s->meta_size)
        return pos < s->synced_end ? damage(s, pos, BBLOG_DMG_TRUNCATED, NULL) : 0;
    if (s->meta_size - pos < RS)
        return scan_bad(s, pos, BBLOG_DMG_CUT);
    rc = slot_read(s, pos, slot);
    if (rc != 0)
        return scan_stop(s, pos, rc);
    if (all_zero(slot, RS)) {
        /* A slot of a node pair is followed by zeros (holes), not by the end of the file:
         * past the last sync they end its log cleanly. */
        if (s->hdr.slots > 0 && pos >= s->synced_end) {
            s->meta_size = pos;
            return 0;
        }
        return scan_bad(s, pos, BBLOG_DMG_ZEROS);
    }
    if (bblog_record_decode(slot, &r, &crc) != 0)
        return scan_bad(s, pos, BBLOG_DMG_SLOT);
    if (r.len == 0 || r.epoch > s->hdr.epoch || r.seq == 0
        || (s->have_seq && (s->last_seq == UINT64_MAX || r.seq != s->last_seq + 1)))
        return damage(s, pos, BBLOG_DMG_IMPOSSIBLE, &r);
    /* never written: a damaged record */
    if (r.flags & (BBLOG_REC_CUT | BBLOG_REC_TRIMMED | BBLOG_REC_DRAINED))
        return damage(s, pos, BBLOG_DMG_IMPOSSIBLE, &r);
    r.cut = 0;
    /* A record of an earlier epoch was drained before the header took the epoch on (the new
     * epoch is written only after the drain): nothing reads its payload, which may be gone. A
     * node pair's slot is emptied by punching its payloads before its records are zeroed, and
     * a process killed in between leaves records that point at holes. */
    if (!(r.flags & BBLOG_REC_NO_PAYLOAD) && r.epoch < s->hdr.epoch) {
        r.flags |= BBLOG_REC_DRAINED;
        return hand_out(s, pos, &r, rec, payload, NULL);
    }
    if (!(r.flags & BBLOG_REC_NO_PAYLOAD) && r.epoch == s->hdr.epoch && r.data_off < s->trim) {
        uint64_t cut = s->trim - r.data_off;
        if (cut >= r.len) {     /* no payload left to check */
            r.flags |= BBLOG_REC_TRIMMED;
            s->trimmed++;
            return hand_out(s, pos, &r, rec, payload, NULL);
        }
        r.off += cut, r.len -= cut, r.data_off += cut;
        r.cut = cut;
        r.flags |= BBLOG_REC_CUT;
    }
    if (s->fd_data < 0 && !(r.flags & BBLOG_REC_NO_PAYLOAD))
        return damage(s, pos, BBLOG_DMG_NO_DATA, &r);
    rc = payload_check(s, &r, crc);
    if (rc == PAYLOAD_BAD)
        return damage(s, pos, r.data_off > s->data_size || r.len > s->data_size - r.data_off
                      ? BBLOG_DMG_PAYLOAD_CUT : BBLOG_DMG_PAYLOAD, &r);
    if (rc != PAYLOAD_OK)
        return scan_stop(s, pos, rc);
    return hand_out(s, pos, &r, rec, payload,
                    r.flags & BBLOG_REC_NO_PAYLOAD ? NULL : s->payload);
}

int bblog_scan_damage(const struct bblog_scan *s, struct bblog_scan_damage *d)
{
    if (s->err != BBLOG_ECORRUPT && s->err != BBLOG_ETORN)
        return BBLOG_EINVAL;
    *d = s->dmg;
    return 0;
}

int bblog_scan_resume(struct bblog_scan *s)
{
    if (s->err != BBLOG_ECORRUPT)
        return BBLOG_EINVAL;
    if (s->dmg.kind == BBLOG_DMG_TRUNCATED) {
        s->synced_end = 0;      /* reported once: the scan ends here */
        s->pos = s->meta_size;
    } else {
        s->pos = s->bad_pos + RS;
    }
    /* Whatever the damaged slot held, the next record's seq can't be checked against it. */
    s->have_seq = 0;
    s->err = 0;
    return 0;
}

const char *bblog_scan_damage_what(int kind)
{
    switch (kind) {
    case BBLOG_DMG_SLOT:
        return "record fails its checksum";
    case BBLOG_DMG_ZEROS:
        return "record slot is all zeros";
    case BBLOG_DMG_CUT:
        return "meta log ends inside a record";
    case BBLOG_DMG_IMPOSSIBLE:
        return "record holds impossible values (length, sequence or epoch)";
    case BBLOG_DMG_PAYLOAD:
        return "payload fails its checksum";
    case BBLOG_DMG_PAYLOAD_CUT:
        return "payload lies past the end of the data log";
    case BBLOG_DMG_NO_DATA:
        return "the data log (.data file) is missing";
    case BBLOG_DMG_TRUNCATED:
        return "meta log ends before its last sync mark";
    default:
        return "unknown damage";
    }
}

/* The bytes of a node pair's file from base that belong to a slot of size lim: up to the
 * file's end, and for the meta log up to the first hole (records follow the header without a
 * gap; a drained slot's old records are punched), so that a look past a bad record does not
 * read gigabytes of holes. */
static uint64_t slot_extent(int fd, uint64_t fsize, uint64_t base, uint64_t lim, int to_hole)
{
    uint64_t n = fsize > base ? fsize - base : 0;

    if (to_hole && n > 0) {
        off_t h = lseek(fd, (off_t) base, SEEK_HOLE);

        if (h >= (off_t) base && (uint64_t) h - base < n)
            n = (uint64_t) h - base;
    }
    return n < lim ? n : lim;
}

/* Opens slot `slot` of a node pair whose own header (at meta byte 0) is *pair: reads and checks
 * the slot's header. */
static int open_slot(struct bblog_scan *s, const struct bblog_log_header *pair, uint32_t slot,
                     uint64_t meta_fsize)
{
    unsigned char hbuf[BBLOG_HEADER_SIZE];
    size_t done = 0;
    int rc;

    if (pair->slots == 0 || pair->slot != BBLOG_NODE_HEADER || slot >= pair->slots)
        return BBLOG_EINVAL;
    s->mbase = bblog_node_meta_base(pair->lg, slot);
    s->dbase = bblog_node_data_base(pair->lg, slot);
    s->meta_size = slot_extent(s->fd_meta, meta_fsize, s->mbase,
                               (uint64_t) 1 << (pair->lg - 4), 1);
    memset(hbuf, 0, sizeof hbuf);
    rc = bblog_io_full(s->fd_meta, hbuf, sizeof hbuf, s->mbase, 0, &done);
    if (rc != 0)
        return rc;
    rc = bblog_header_decode(hbuf, &s->hdr);
    if (rc != 0)
        return rc;
    /* A slot's header says what its pair's does, and where it is. */
    if (s->hdr.slots != pair->slots || s->hdr.slot != slot || s->hdr.set_id != pair->set_id
        || strcmp(s->hdr.pfs_path, pair->pfs_path) != 0)
        return BBLOG_EBADHDR;
    return 0;
}

/* Opens meta_path into s->fd_meta and decodes its header into s->hdr (s->meta_size its size).
 * 0 or an error. */
static int read_header(struct bblog_scan *s, const char *meta_path)
{
    unsigned char hbuf[BBLOG_HEADER_SIZE];
    struct stat sb;
    size_t done = 0;
    int rc;

    s->fd_meta = open(meta_path, O_RDONLY | O_CLOEXEC);
    if (s->fd_meta < 0 || fstat(s->fd_meta, &sb) != 0)
        return errno;
    if (!S_ISREG(sb.st_mode))
        return BBLOG_EBADMAGIC;
    /* The header is the first thing written to a new log (or pair), in one write, before any
     * record: an empty file is one whose creator was killed in between, and holds nothing. */
    if (sb.st_size == 0)
        return BBLOG_EUNBORN;
    s->meta_size = (uint64_t) sb.st_size;
    memset(hbuf, 0, sizeof hbuf);
    rc = bblog_io_full(s->fd_meta, hbuf, sizeof hbuf, 0, 0, &done);
    if (rc != 0)
        return rc;
    /* The decoder checks magic, then version, then CRC, then values; a file cut inside the
     * header reads as zeros past its end, so it fails one of them, and is called a bad header
     * unless it already fails as no log at all. */
    rc = bblog_header_decode(hbuf, &s->hdr);
    if (done < sizeof hbuf && rc != BBLOG_EBADMAGIC && rc != BBLOG_EENDIAN
        && (rc != BBLOG_EVERSION || done < BBLOG_H_VERSION + 4))
        rc = BBLOG_EBADHDR;
    return rc;
}

/* Opens the data log data_path into s->fd_data and sizes it (0 when it is missing). 0 or an
 * errno. */
static int open_data(struct bblog_scan *s, const char *data_path)
{
    struct stat sb;

    /* The data log is found by name beside the meta file: never through a symlink, which
     * would let whoever can write the log directory make a reader (replay run by root) read
     * any file as payload. */
    s->fd_data = open(data_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (s->fd_data < 0 && errno == ENOENT) {
        s->data_size = 0;       /* missing: every record with a payload is damaged */
    } else if (s->fd_data < 0 || fstat(s->fd_data, &sb) != 0) {
        return errno;
    } else if (s->hdr.slots > 0) {
        s->data_size = slot_extent(s->fd_data, (uint64_t) sb.st_size, s->dbase,
                                   (uint64_t) 1 << s->hdr.lg, 0);
    } else {
        s->data_size = (uint64_t) sb.st_size;
    }
    return 0;
}

int bblog_scan_open(const char *meta_path, struct bblog_scan **out)
{
    return bblog_scan_open_slot(meta_path, BBLOG_NODE_HEADER, out);
}

int bblog_scan_open_slot(const char *meta_path, uint32_t slot, struct bblog_scan **out)
{
    static const char suffix[] = ".meta";
    struct bblog_scan *s = NULL;
    char *data_path = NULL;
    size_t len;
    int rc = 0;

    if (out == NULL || meta_path == NULL)
        return BBLOG_EINVAL;
    *out = NULL;
    len = strlen(meta_path);
    if (len < sizeof suffix || strcmp(meta_path + len - (sizeof suffix - 1), suffix) != 0)
        return BBLOG_EINVAL;
    s = calloc(1, sizeof *s);
    data_path = malloc(len + 1);
    if (s == NULL || data_path == NULL) {
        rc = ENOMEM;
        goto fail;
    }
    s->fd_meta = s->fd_data = -1;
    memcpy(data_path, meta_path, len - (sizeof suffix - 1));
    strcpy(data_path + len - (sizeof suffix - 1), ".data");

    rc = read_header(s, meta_path);
    if (rc != 0)
        goto fail;
    if (s->hdr.slots > 0 && s->hdr.slot == BBLOG_NODE_HEADER && slot == BBLOG_NODE_HEADER) {
        s->meta_size = BBLOG_HEADER_SIZE;       /* the pair itself: no records */
    } else if (slot != BBLOG_NODE_HEADER || s->hdr.slots > 0) {
        struct bblog_log_header pair = s->hdr;

        rc = open_slot(s, &pair, slot, s->meta_size);
        if (rc != 0)
            goto fail;
    }

    rc = open_data(s, data_path);
    if (rc != 0)
        goto fail;
    /* A damaged sync slot can only be torn by a crash while it was written, after the records
     * it covered were durable, or damaged after the fact: either way no record in the file
     * is a torn tail, and every bad one is corruption. */
    if (s->hdr.synced.count > 0) {
        s->synced_end = s->hdr.synced.meta_end;
        s->trim = s->hdr.synced.trim;
    }
    if (s->hdr.bad_slots > 0 && s->meta_size > s->synced_end)
        s->synced_end = s->meta_size;
    s->chunk = malloc(CHUNK);
    if (s->chunk == NULL) {
        rc = ENOMEM;
        goto fail;
    }
    s->pos = BBLOG_HEADER_SIZE;
    free(data_path);
    *out = s;
    return 0;

fail:
    free(data_path);
    bblog_scan_close(s);
    return rc;
}

const struct bblog_log_header *bblog_scan_header(const struct bblog_scan *s)
{
    return &s->hdr;
}

uint64_t bblog_scan_trimmed(const struct bblog_scan *s)
{
    return s->trimmed;
}

uint64_t bblog_scan_bad_pos(const struct bblog_scan *s)
{
    return s->bad_pos;
}

void bblog_scan_close(struct bblog_scan *s)
{
    if (s == NULL)
        return;
    if (s->fd_meta >= 0)
        close(s->fd_meta);
    if (s->fd_data >= 0)
        close(s->fd_data);
    free(s->chunk);
    free(s->payload);
    bblog_window_free(&s->win);
    free(s);
}
