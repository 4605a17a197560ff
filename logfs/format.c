/*
 * Encoding and decoding of the log header and records (bblog_format.h, DESIGN.md section 4):
 * the only code that knows the byte layout. Everything goes through the little-endian helpers,
 * never through a cast of a buffer to a struct, so the files are the same on any host.
 */
#include "config.h"

#include <string.h>

#include "bblog_log.h"

/* True when bytes [from, to) of p are all zero. */
static int all_zero(const unsigned char *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

void bblog_header_encode(const struct bblog_log_header *h, unsigned char buf[BBLOG_HEADER_SIZE])
{
    /* The fields are NUL-padded and their last byte always stays NUL, which caps a string at
     * field size - 1 bytes (callers check lengths first; this only keeps a bad caller from
     * writing an unterminated field). */
    size_t jlen = strnlen(h->job_id, BBLOG_JOB_ID_MAX - 1);
    size_t plen = strnlen(h->pfs_path, BBLOG_PATH_MAX - 1);

    memset(buf, 0, BBLOG_HEADER_SIZE);
    bblog_put_le64(buf + BBLOG_H_MAGIC, BBLOG_MAGIC);
    bblog_put_le32(buf + BBLOG_H_VERSION, h->slots ? BBLOG_FORMAT_VERSION_NODE
                   : BBLOG_FORMAT_VERSION);
    if (h->slots)
        bblog_put_le32(buf + BBLOG_H_NODE, h->slots | (h->slot == BBLOG_NODE_HEADER ? 0
                                                        : h->slot + 1) << 12 | h->lg << 24);
    bblog_put_le32(buf + BBLOG_H_HEADER_SIZE, BBLOG_HEADER_SIZE);
    bblog_put_le32(buf + BBLOG_H_RECORD_SIZE, BBLOG_RECORD_SIZE);
    bblog_put_le32(buf + BBLOG_H_DRAINED_GEN, h->drained_gen);
    bblog_put_le32(buf + BBLOG_H_RANK, h->rank);
    bblog_put_le32(buf + BBLOG_H_NPROCS, h->nprocs);
    bblog_put_le64(buf + BBLOG_H_CTIME, h->create_time_ns);
    bblog_put_le64(buf + BBLOG_H_EPOCH, h->epoch);
    memcpy(buf + BBLOG_H_JOB_ID, h->job_id, jlen);
    bblog_put_le64(buf + BBLOG_H_SET_ID, h->set_id);
    bblog_put_le32(buf + BBLOG_H_PATH_LEN, (uint32_t) plen);
    memcpy(buf + BBLOG_H_PATH, h->pfs_path, plen);
    /* file_id is by definition the hash of the path as stored, so it is computed here rather
     * than trusted from the caller; the decoder checks the same equation. */
    bblog_put_le64(buf + BBLOG_H_FILE_ID, bblog_fnv1a64((const char *) buf + BBLOG_H_PATH));
    bblog_put_le32(buf + BBLOG_H_CRC, bblog_crc32c(0, buf, BBLOG_H_CRC));
    if (h->synced.count > 0)
        bblog_sync_slot_encode(&h->synced, buf + (h->synced.count % 2 ? BBLOG_H_SYNC1
                                                  : BBLOG_H_SYNC0));
}

void bblog_sync_slot_encode(const struct bblog_log_synced *y, unsigned char *buf)
{
    memset(buf, 0, BBLOG_SYNC_SLOT_SIZE);
    bblog_put_le64(buf + BBLOG_S_COUNT, y->count);
    bblog_put_le64(buf + BBLOG_S_EPOCH, y->epoch);
    bblog_put_le64(buf + BBLOG_S_SEQ, y->seq);
    bblog_put_le64(buf + BBLOG_S_META_END, y->meta_end);
    bblog_put_le64(buf + BBLOG_S_DATA_END, y->data_end);
    bblog_put_le64(buf + BBLOG_S_TRIM, y->trim);
    bblog_put_le32(buf + BBLOG_S_CRC, bblog_crc32c(0, buf, BBLOG_S_CRC));
}

int bblog_sync_slot_decode(const unsigned char *buf, struct bblog_log_synced *y)
{
    memset(y, 0, sizeof *y);
    if (all_zero(buf, 0, BBLOG_SYNC_SLOT_SIZE))
        return 1;
    /* count 0 and a meta_end inside the header are never written: only damage makes them. */
    if (bblog_get_le32(buf + BBLOG_S_CRC) != bblog_crc32c(0, buf, BBLOG_S_CRC)
        || !all_zero(buf, BBLOG_S_TRIM + 8, BBLOG_S_CRC)
        || bblog_get_le64(buf + BBLOG_S_TRIM) > bblog_get_le64(buf + BBLOG_S_DATA_END)
        || bblog_get_le64(buf + BBLOG_S_COUNT) == 0
        || bblog_get_le64(buf + BBLOG_S_META_END) < BBLOG_HEADER_SIZE
        || (bblog_get_le64(buf + BBLOG_S_META_END) - BBLOG_HEADER_SIZE) % BBLOG_RECORD_SIZE)
        return BBLOG_ECORRUPT;
    y->count = bblog_get_le64(buf + BBLOG_S_COUNT);
    y->epoch = bblog_get_le64(buf + BBLOG_S_EPOCH);
    y->seq = bblog_get_le64(buf + BBLOG_S_SEQ);
    y->meta_end = bblog_get_le64(buf + BBLOG_S_META_END);
    y->data_end = bblog_get_le64(buf + BBLOG_S_DATA_END);
    y->trim = bblog_get_le64(buf + BBLOG_S_TRIM);
    return 0;
}

int bblog_header_decode(const unsigned char buf[BBLOG_HEADER_SIZE], struct bblog_log_header *h)
{
    uint64_t magic = bblog_get_le64(buf + BBLOG_H_MAGIC);
    const unsigned char *job = buf + BBLOG_H_JOB_ID;
    const unsigned char *path = buf + BBLOG_H_PATH;
    uint32_t rank, nprocs, plen, version, node, slots = 0, code = 0, lg = 0;
    size_t jlen;

    /* Magic, then version, before anything else: a future version may move every other
     * field, the CRC included. */
    if (magic == BBLOG_MAGIC_SWAPPED)
        return BBLOG_EENDIAN;
    if (magic != BBLOG_MAGIC)
        return BBLOG_EBADMAGIC;
    version = bblog_get_le32(buf + BBLOG_H_VERSION);
    if (version < BBLOG_FORMAT_VERSION_MIN || version > BBLOG_FORMAT_VERSION_NODE)
        return BBLOG_EVERSION;
    if (bblog_get_le32(buf + BBLOG_H_CRC) != bblog_crc32c(0, buf, BBLOG_H_CRC))
        return BBLOG_EBADHDR;

    /* A header with a good CRC can still be impossible (a writer bug, or a hand-made file):
     * every value the readers rely on is checked, so that they need not. */
    rank = bblog_get_le32(buf + BBLOG_H_RANK);
    nprocs = bblog_get_le32(buf + BBLOG_H_NPROCS);
    plen = bblog_get_le32(buf + BBLOG_H_PATH_LEN);
    jlen = strnlen((const char *) job, BBLOG_JOB_ID_MAX);
    node = bblog_get_le32(buf + BBLOG_H_NODE);
    if (version == BBLOG_FORMAT_VERSION_NODE) {
        slots = node & 0xfff;
        code = node >> 12 & 0xfff;
        lg = node >> 24;
        if (slots == 0 || code > slots || lg != bblog_node_lg(slots))
            return BBLOG_EBADHDR;
    } else if (node != 0) {
        return BBLOG_EBADHDR;
    }
    if (bblog_get_le32(buf + BBLOG_H_HEADER_SIZE) != BBLOG_HEADER_SIZE
        || bblog_get_le32(buf + BBLOG_H_RECORD_SIZE) != BBLOG_RECORD_SIZE
        || nprocs == 0 || rank >= nprocs
        || jlen == BBLOG_JOB_ID_MAX || !all_zero(job, jlen, BBLOG_JOB_ID_MAX)
        || plen >= BBLOG_PATH_MAX || memchr(path, 0, plen) != NULL
        || !all_zero(path, plen, BBLOG_PATH_MAX)
        || bblog_get_le64(buf + BBLOG_H_FILE_ID) != bblog_fnv1a64((const char *) path))
        return BBLOG_EBADHDR;

    memset(h, 0, sizeof *h);
    h->version = version;
    h->slots = slots;
    h->slot = code == 0 ? BBLOG_NODE_HEADER : code - 1;
    h->lg = lg;
    h->rank = rank;
    h->nprocs = nprocs;
    h->create_time_ns = bblog_get_le64(buf + BBLOG_H_CTIME);
    h->epoch = bblog_get_le64(buf + BBLOG_H_EPOCH);
    h->drained_gen = bblog_get_le32(buf + BBLOG_H_DRAINED_GEN);
    h->file_id = bblog_get_le64(buf + BBLOG_H_FILE_ID);
    h->set_id = bblog_get_le64(buf + BBLOG_H_SET_ID);
    memcpy(h->job_id, job, jlen);
    memcpy(h->pfs_path, path, plen);
    for (unsigned i = 0; i < 2; i++) {
        struct bblog_log_synced y;
        int rc = bblog_sync_slot_decode(buf + (i ? BBLOG_H_SYNC1 : BBLOG_H_SYNC0), &y);

        if (rc < 0)
            h->bad_slots++;
        else if (rc == 0 && y.epoch == h->epoch && y.count % 2 == i &&
                 y.count > h->synced.count)
            h->synced = y;
    }
    return 0;
}

void bblog_record_encode(const struct bblog_log_record *r, uint32_t data_crc,
                         unsigned char buf[BBLOG_RECORD_SIZE])
{
    memset(buf, 0, BBLOG_RECORD_SIZE);
    bblog_put_le64(buf + BBLOG_R_SEQ, r->seq);
    bblog_put_le64(buf + BBLOG_R_OFF, r->off);
    bblog_put_le64(buf + BBLOG_R_LEN, r->len);
    bblog_put_le64(buf + BBLOG_R_DATA_OFF, r->data_off);
    bblog_put_le64(buf + BBLOG_R_EPOCH, r->epoch);
    bblog_put_le32(buf + BBLOG_R_GEN, r->gen);
    bblog_put_le32(buf + BBLOG_R_FLAGS, r->flags);
    bblog_put_le32(buf + BBLOG_R_DATA_CRC, data_crc);
    bblog_put_le32(buf + BBLOG_R_CRC, bblog_crc32c(0, buf, BBLOG_R_CRC));
}

int bblog_record_decode(const unsigned char buf[BBLOG_RECORD_SIZE], struct bblog_log_record *r,
                        uint32_t *data_crc)
{
    if (bblog_get_le32(buf + BBLOG_R_CRC) != bblog_crc32c(0, buf, BBLOG_R_CRC))
        return BBLOG_ECORRUPT;
    /* r->slot is where the caller found the bytes, not part of them: left as it is. */
    r->seq = bblog_get_le64(buf + BBLOG_R_SEQ);
    r->off = bblog_get_le64(buf + BBLOG_R_OFF);
    r->len = bblog_get_le64(buf + BBLOG_R_LEN);
    r->data_off = bblog_get_le64(buf + BBLOG_R_DATA_OFF);
    r->epoch = bblog_get_le64(buf + BBLOG_R_EPOCH);
    r->gen = bblog_get_le32(buf + BBLOG_R_GEN);
    r->flags = bblog_get_le32(buf + BBLOG_R_FLAGS);
    *data_crc = bblog_get_le32(buf + BBLOG_R_DATA_CRC);
    return 0;
}
