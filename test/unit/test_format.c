/*
 * Unit tests of the log format (logfs/format.c, logfs/crc32c.c; layout in bblog_format.h).
 *
 * The checksum is checked against the published iSCSI vectors (RFC 3720 B.4) and, on random
 * buffers, lengths and alignments, against a bit-at-a-time oracle written from the definition;
 * both implementations (the accelerated one and the portable tables) must agree with it.
 * Header and record encoders are checked byte for byte against the offsets of the format
 * header, round-tripped, and every single-bit corruption must be refused with the right code.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bblog_io.h"
#include "bblog_log.h"
#include "testutil.h"

/* CRC32C straight from the definition: reflected polynomial, one bit at a time. */
static uint32_t crc_oracle(uint32_t crc, const unsigned char *p, size_t n)
{
    crc = ~crc;
    while (n-- > 0) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
    }
    return ~crc;
}

static void check_vector(const unsigned char *buf, size_t len, uint32_t want)
{
    assert_int_equal(bblog_crc32c(0, buf, len), want);
    assert_int_equal(bblog_crc32c_sw(0, buf, len), want);
    assert_int_equal(crc_oracle(0, buf, len), want);
}

static void test_crc_vectors(void **state)
{
    unsigned char buf[32];

    (void) state;
    check_vector((const unsigned char *) "123456789", 9, 0xE3069283u);
    memset(buf, 0, sizeof buf);
    check_vector(buf, sizeof buf, 0x8A9136AAu);
    memset(buf, 0xff, sizeof buf);
    check_vector(buf, sizeof buf, 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char) i;
    check_vector(buf, sizeof buf, 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (unsigned char) (31 - i);
    check_vector(buf, sizeof buf, 0x113FDB5Cu);
    check_vector(buf, 0, 0);
}

static void test_crc_random(void **state)
{
    enum { MAX = 3000 };
    unsigned char *buf = malloc(MAX + 16);
    uint64_t rs = 42;

    (void) state;
    assert_non_null(buf);
    tu_fill(&rs, buf, MAX + 16);
    for (int it = 0; it < 3000; it++) {
        size_t start = (size_t) tu_range(&rs, 0, 15);
        size_t len = (size_t) tu_range(&rs, 0, MAX);
        size_t cut = (size_t) tu_range(&rs, 0, len);
        uint32_t want = crc_oracle(0, buf + start, len);

        assert_int_equal(bblog_crc32c(0, buf + start, len), want);
        assert_int_equal(bblog_crc32c_sw(0, buf + start, len), want);
        /* Chaining over any split point gives the checksum of the whole. */
        assert_int_equal(bblog_crc32c(bblog_crc32c(0, buf + start, cut), buf + start + cut,
                                      len - cut), want);
        assert_int_equal(bblog_crc32c_sw(bblog_crc32c_sw(0, buf + start, cut),
                                         buf + start + cut, len - cut), want);
    }
    free(buf);
}

/* Long buffers take the interleaved-lane path of the accelerated CRC (blocks of 3 x 256 and
 * 3 x 4096 bytes): it must agree with the tables on every length around the block sizes. */
static void test_crc_long(void **state)
{
    enum { MAX = 70000 };
    unsigned char *buf = malloc(MAX + 16);
    const size_t edges[] = {768, 12288, 2 * 12288, 12288 + 768};
    uint64_t rs = 43;

    (void) state;
    assert_non_null(buf);
    tu_fill(&rs, buf, MAX + 16);
    for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++)
        for (size_t len = edges[e] - 9; len <= edges[e] + 9; len++)
            for (size_t start = 0; start < 9; start += 4)
                assert_int_equal(bblog_crc32c(0, buf + start, len),
                                 bblog_crc32c_sw(0, buf + start, len));
    for (int it = 0; it < 300; it++) {
        size_t start = (size_t) tu_range(&rs, 0, 15);
        size_t len = (size_t) tu_range(&rs, 0, MAX);
        uint32_t seed = (uint32_t) tu_rand(&rs);

        assert_int_equal(bblog_crc32c(seed, buf + start, len),
                         bblog_crc32c_sw(seed, buf + start, len));
    }
    assert_int_equal(bblog_crc32c(0, buf, MAX), crc_oracle(0, buf, MAX));
    free(buf);
}

static void test_fnv(void **state)
{
    (void) state;
    assert_true(bblog_fnv1a64("") == UINT64_C(0xcbf29ce484222325));
    assert_true(bblog_fnv1a64("a") == UINT64_C(0xaf63dc4c8601ec8c));
    assert_true(bblog_fnv1a64("foobar") == UINT64_C(0x85944171f73967e8));
}

static void sample_header(struct bblog_log_header *h, size_t path_len, size_t job_len)
{
    memset(h, 0, sizeof *h);
    h->version = BBLOG_FORMAT_VERSION;
    h->rank = 7;
    h->nprocs = 64;
    h->create_time_ns = UINT64_C(0x0123456789abcdef);
    h->epoch = UINT64_C(0xfedcba9876543210);
    h->set_id = UINT64_C(0x1122334455667788);
    for (size_t i = 0; i < path_len; i++)
        h->pfs_path[i] = (char) ('a' + i % 26);
    for (size_t i = 0; i < job_len; i++)
        h->job_id[i] = (char) ('0' + i % 10);
    h->file_id = bblog_fnv1a64(h->pfs_path);
}

/* Recomputes the header CRC after a deliberate edit, so that a later check is reached. */
static void reseal(unsigned char *buf)
{
    bblog_put_le32(buf + BBLOG_H_CRC, bblog_crc32c(0, buf, BBLOG_H_CRC));
}

static void check_header_roundtrip(size_t path_len, size_t job_len)
{
    static unsigned char buf[BBLOG_HEADER_SIZE];
    static struct bblog_log_header h, d;

    sample_header(&h, path_len, job_len);
    memset(&d, 0x5a, sizeof d);
    bblog_header_encode(&h, buf);
    /* The magic reads "BBBLOGM1" in file order whatever the host. */
    assert_memory_equal(buf, "BBBLOGM1", 8);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_VERSION), BBLOG_FORMAT_VERSION);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_HEADER_SIZE), 4096);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_RECORD_SIZE), 64);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_DRAINED_GEN), 0);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_RANK), 7);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_NPROCS), 64);
    assert_int_equal(buf[BBLOG_H_CTIME], 0xef);
    assert_true(bblog_get_le64(buf + BBLOG_H_CTIME) == h.create_time_ns);
    assert_int_equal(buf[BBLOG_H_EPOCH], 0x10);
    assert_true(bblog_get_le64(buf + BBLOG_H_EPOCH) == h.epoch);
    assert_true(bblog_get_le64(buf + BBLOG_H_FILE_ID) == bblog_fnv1a64(h.pfs_path));
    assert_int_equal(buf[BBLOG_H_SET_ID], 0x88);
    assert_true(bblog_get_le64(buf + BBLOG_H_SET_ID) == h.set_id);
    assert_memory_equal(buf + BBLOG_H_JOB_ID, h.job_id, job_len);
    for (size_t i = job_len; i < BBLOG_JOB_ID_MAX; i++)
        assert_int_equal(buf[BBLOG_H_JOB_ID + i], 0);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_PATH_LEN), path_len);
    assert_memory_equal(buf + BBLOG_H_PATH, h.pfs_path, path_len);
    for (size_t i = path_len; i < BBLOG_PATH_MAX; i++)
        assert_int_equal(buf[BBLOG_H_PATH + i], 0);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_NODE), 0);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_CRC), crc_oracle(0, buf, 3068));
    /* No sync yet: both sync slots empty. */
    for (size_t i = BBLOG_H_SYNC0; i < BBLOG_HEADER_SIZE; i++)
        assert_int_equal(buf[i], 0);

    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_int_equal(d.version, BBLOG_FORMAT_VERSION);
    assert_true(d.set_id == h.set_id);
    assert_true(d.synced.count == 0);
    assert_int_equal(d.bad_slots, 0);
    assert_int_equal(d.rank, h.rank);
    assert_int_equal(d.nprocs, h.nprocs);
    assert_true(d.create_time_ns == h.create_time_ns);
    assert_true(d.epoch == h.epoch);
    assert_true(d.file_id == h.file_id);
    assert_string_equal(d.job_id, h.job_id);
    assert_string_equal(d.pfs_path, h.pfs_path);
}

static void test_header_roundtrip(void **state)
{
    (void) state;
    check_header_roundtrip(20, 10);
    check_header_roundtrip(0, 0);
    check_header_roundtrip(BBLOG_PATH_MAX - 1, BBLOG_JOB_ID_MAX - 1);
    check_header_roundtrip(1, 1);
}

static void test_header_identity_errors(void **state)
{
    static unsigned char buf[BBLOG_HEADER_SIZE], good[BBLOG_HEADER_SIZE];
    static struct bblog_log_header h, d;

    (void) state;
    sample_header(&h, 30, 5);
    bblog_header_encode(&h, good);

    /* Written by a host that stored the magic big-endian. */
    memcpy(buf, good, sizeof buf);
    for (int i = 0; i < 8; i++)
        buf[i] = (unsigned char) (BBLOG_MAGIC >> (56 - 8 * i));
    assert_true(bblog_get_le64(buf) == BBLOG_MAGIC_SWAPPED);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EENDIAN);
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EENDIAN);

    memcpy(buf, good, sizeof buf);
    memcpy(buf, "NOTALOG!", 8);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADMAGIC);
    memset(buf, 0, sizeof buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADMAGIC);

    /* The version is checked before the CRC: a future version may place it elsewhere. */
    memcpy(buf, good, sizeof buf);
    bblog_put_le32(buf + BBLOG_H_VERSION, BBLOG_FORMAT_VERSION_NODE + 1);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EVERSION);
    /* Version 2 (no trim point) is still read. */
    bblog_put_le32(buf + BBLOG_H_VERSION, 2);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADHDR);
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_int_equal(d.version, 2);
    bblog_put_le32(buf + BBLOG_H_VERSION, 1);       /* the format before sync slots */
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EVERSION);
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EVERSION);
    bblog_put_le32(buf + BBLOG_H_VERSION, 0);
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EVERSION);

    memcpy(buf, good, sizeof buf);
    buf[BBLOG_H_CRC] ^= 1;
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADHDR);
}

/* Every single-bit error anywhere in the header is refused, by the check that owns the bit;
 * one in a sync slot costs only that slot: the other one still says what was synced. */
static void test_header_bitflips(void **state)
{
    static unsigned char buf[BBLOG_HEADER_SIZE];
    static struct bblog_log_header h, d;

    (void) state;
    sample_header(&h, 100, 20);
    h.synced = (struct bblog_log_synced) { .count = 4, .epoch = h.epoch, .seq = 9,
                                           .meta_end = 4096 + 9 * 64, .data_end = 777 };
    bblog_header_encode(&h, buf);
    /* Slot 1 holds the sync before (count 3). */
    bblog_sync_slot_encode(&(struct bblog_log_synced) { .count = 3, .epoch = h.epoch, .seq = 5,
                                                       .meta_end = 4096 + 5 * 64,
                                                       .data_end = 500 }, buf + BBLOG_H_SYNC1);
    for (size_t bit = 0; bit < 8 * BBLOG_HEADER_SIZE; bit++) {
        uint32_t v = BBLOG_FORMAT_VERSION ^ (bit >= 64 && bit < 96 ? 1u << (bit - 64) : 0);
        int want = bit < 64 ? BBLOG_EBADMAGIC
            : bit < 96 && (v < BBLOG_FORMAT_VERSION_MIN || v > BBLOG_FORMAT_VERSION) ?
            BBLOG_EVERSION : bit < 8 * BBLOG_H_SYNC0 ? BBLOG_EBADHDR : 0;

        buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
        assert_int_equal(bblog_header_decode(buf, &d), want);
        if (want == 0) {
            assert_int_equal(d.bad_slots, 1);
            assert_true(d.synced.count == (bit < 8 * BBLOG_H_SYNC1 ? 3 : 4));
        }
        buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
    }
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_true(d.synced.count == 4 && d.synced.seq == 9 && d.synced.data_end == 777);
    assert_true(d.synced.meta_end == 4096 + 9 * 64 && d.synced.epoch == h.epoch);
}

/* The newest slot of the header's epoch wins; slots of another epoch, in the wrong place for
 * their count, or impossible, name no sync. */
static void test_sync_slots(void **state)
{
    static unsigned char buf[BBLOG_HEADER_SIZE], good[BBLOG_HEADER_SIZE];
    static struct bblog_log_header h, d;
    struct bblog_log_synced y = { .count = 2, .seq = 4, .meta_end = 4096 + 4 * 64, .data_end = 8 };

    (void) state;
    sample_header(&h, 30, 5);
    y.epoch = h.epoch;
    h.synced = y;
    bblog_header_encode(&h, good);
    assert_int_equal(bblog_header_decode(good, &d), 0);
    assert_true(d.synced.count == 2 && d.synced.seq == 4);

    memcpy(buf, good, sizeof buf);              /* an older epoch's sync: drained since */
    y.epoch = h.epoch - 1;
    y.count = 3;
    bblog_sync_slot_encode(&y, buf + BBLOG_H_SYNC1);
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_true(d.synced.count == 2);
    y.epoch = h.epoch;                          /* the same epoch: newer */
    bblog_sync_slot_encode(&y, buf + BBLOG_H_SYNC1);
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_true(d.synced.count == 3);
    y.count = 5;                                /* odd count in slot 0: misplaced */
    bblog_sync_slot_encode(&y, buf + BBLOG_H_SYNC0);
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_true(d.synced.count == 3);
    y.count = 4;                                /* meta_end not on a record boundary */
    y.meta_end = 4096 + 10;
    bblog_sync_slot_encode(&y, buf + BBLOG_H_SYNC0);
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_true(d.synced.count == 3);
    assert_int_equal(d.bad_slots, 1);
    assert_int_equal(bblog_sync_slot_decode(buf + BBLOG_H_SYNC0, &y), BBLOG_ECORRUPT);
    memset(buf + BBLOG_H_SYNC0, 0, BBLOG_SYNC_SLOT_SIZE);
    assert_int_equal(bblog_sync_slot_decode(buf + BBLOG_H_SYNC0, &y), 1);
}

/* Values no writer produces, under a valid CRC, are refused too. */
static void test_header_insane_values(void **state)
{
    static unsigned char buf[BBLOG_HEADER_SIZE], good[BBLOG_HEADER_SIZE];
    static struct bblog_log_header h, d;
    struct {
        size_t at;
        int width;
        uint64_t value;
    } cases[] = {
        {BBLOG_H_HEADER_SIZE, 4, 8192},
        {BBLOG_H_RECORD_SIZE, 4, 128},
        {BBLOG_H_NPROCS, 4, 0},
        {BBLOG_H_RANK, 4, 64},          /* == nprocs */
        {BBLOG_H_PATH_LEN, 4, BBLOG_PATH_MAX},
        {BBLOG_H_PATH_LEN, 4, 29},      /* path is 30 bytes: a non-NUL byte past path_len */
        {BBLOG_H_PATH_LEN, 4, 31},      /* a NUL inside path_len */
        {BBLOG_H_FILE_ID, 8, 12345},
        {BBLOG_H_JOB_ID + 10, 1, 'x'},  /* junk after the job id's NUL */
        {BBLOG_H_PATH + 200, 1, 'x'},   /* junk after the path */
    };

    (void) state;
    sample_header(&h, 30, 5);
    bblog_header_encode(&h, good);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(buf, good, sizeof buf);
        if (cases[i].width == 8)
            bblog_put_le64(buf + cases[i].at, cases[i].value);
        else if (cases[i].width == 4)
            bblog_put_le32(buf + cases[i].at, (uint32_t) cases[i].value);
        else
            buf[cases[i].at] = (unsigned char) cases[i].value;
        reseal(buf);
        assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADHDR);
    }
    /* A job id filling all 64 bytes has no terminator. */
    memcpy(buf, good, sizeof buf);
    memset(buf + BBLOG_H_JOB_ID, 'j', BBLOG_JOB_ID_MAX);
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADHDR);
    /* drained_gen round-trips. */
    memcpy(buf, good, sizeof buf);
    bblog_put_le32(buf + BBLOG_H_DRAINED_GEN, 7);
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_int_equal(d.drained_gen, 7);
}

static void test_record_roundtrip(void **state)
{
    unsigned char buf[BBLOG_RECORD_SIZE];
    struct bblog_log_record r, d;
    uint64_t rs = 7;
    uint32_t crc;

    (void) state;
    for (int it = 0; it < 1000; it++) {
        uint32_t dcrc = (uint32_t) tu_rand(&rs);

        r.seq = tu_rand(&rs);
        r.off = tu_rand(&rs);
        r.len = tu_rand(&rs);
        r.data_off = tu_rand(&rs);
        r.epoch = tu_rand(&rs);
        r.gen = (uint32_t) tu_rand(&rs);
        r.flags = (uint32_t) tu_rand(&rs);
        r.slot = 0;
        bblog_record_encode(&r, dcrc, buf);
        assert_true(bblog_get_le64(buf + BBLOG_R_SEQ) == r.seq);
        assert_true(bblog_get_le64(buf + BBLOG_R_OFF) == r.off);
        assert_true(bblog_get_le64(buf + BBLOG_R_LEN) == r.len);
        assert_true(bblog_get_le64(buf + BBLOG_R_DATA_OFF) == r.data_off);
        assert_true(bblog_get_le64(buf + BBLOG_R_EPOCH) == r.epoch);
        assert_int_equal(bblog_get_le32(buf + BBLOG_R_GEN), r.gen);
        assert_int_equal(bblog_get_le32(buf + BBLOG_R_FLAGS), r.flags);
        assert_int_equal(bblog_get_le32(buf + BBLOG_R_DATA_CRC), dcrc);
        assert_int_equal(bblog_get_le32(buf + 52), 0);
        assert_int_equal(bblog_get_le32(buf + 56), 0);
        assert_int_equal(bblog_get_le32(buf + BBLOG_R_CRC), crc_oracle(0, buf, 60));
        memset(&d, 0, sizeof d);
        assert_int_equal(bblog_record_decode(buf, &d, &crc), 0);
        assert_int_equal(crc, dcrc);
        assert_true(d.seq == r.seq && d.off == r.off && d.len == r.len);
        assert_true(d.data_off == r.data_off && d.epoch == r.epoch);
        assert_int_equal(d.gen, r.gen);
        assert_int_equal(d.flags, r.flags);
    }
}

static void test_record_bitflips(void **state)
{
    unsigned char buf[BBLOG_RECORD_SIZE];
    struct bblog_log_record r = {.seq = 1, .off = 4096, .len = 100, .data_off = 0, .epoch = 3,
                                 .gen = 2};
    uint32_t crc;

    (void) state;
    bblog_record_encode(&r, 0xdeadbeef, buf);
    for (size_t bit = 0; bit < 8 * BBLOG_RECORD_SIZE; bit++) {
        buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
        assert_int_equal(bblog_record_decode(buf, &r, &crc), BBLOG_ECORRUPT);
        buf[bit / 8] ^= (unsigned char) (1u << (bit % 8));
    }
    assert_int_equal(bblog_record_decode(buf, &r, &crc), 0);
    assert_int_equal(crc, 0xdeadbeef);
    /* An all-zero slot is never a valid record. */
    memset(buf, 0, sizeof buf);
    assert_int_equal(bblog_record_decode(buf, &r, &crc), BBLOG_ECORRUPT);
}

/* A slot of a node log pair (version 4) and the pair's own header: the node word round-trips,
 * and a word that contradicts itself, or one in a version 3 header, is refused. */
static void test_node_header(void **state)
{
    static unsigned char buf[BBLOG_HEADER_SIZE];
    static struct bblog_log_header h, d;

    (void) state;
    assert_int_equal(bblog_node_lg(1), 40);
    assert_int_equal(bblog_node_lg(15), 40);
    assert_int_equal(bblog_node_lg(16), 39);
    assert_int_equal(bblog_node_lg(100), 37);
    assert_int_equal(bblog_node_lg(BBLOG_NODE_SLOTS_MAX), 32);
    assert_true(bblog_node_meta_base(40, 0) == (UINT64_C(1) << 36));
    assert_true(bblog_node_data_base(39, 3) == 3 * (UINT64_C(1) << 39));

    sample_header(&h, 40, 8);
    h.slots = 5;
    h.slot = 3;
    h.lg = bblog_node_lg(5);
    bblog_header_encode(&h, buf);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_VERSION), BBLOG_FORMAT_VERSION_NODE);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_NODE), 5 | 4 << 12 | 40u << 24);
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_int_equal(d.version, BBLOG_FORMAT_VERSION_NODE);
    assert_int_equal(d.slots, 5);
    assert_int_equal(d.slot, 3);
    assert_int_equal(d.lg, 40);
    assert_string_equal(d.pfs_path, h.pfs_path);

    h.slot = BBLOG_NODE_HEADER;
    bblog_header_encode(&h, buf);
    assert_int_equal(bblog_get_le32(buf + BBLOG_H_NODE), 5 | 40u << 24);
    assert_int_equal(bblog_header_decode(buf, &d), 0);
    assert_true(d.slot == BBLOG_NODE_HEADER && d.slots == 5);

    bblog_put_le32(buf + BBLOG_H_NODE, 5 | 6 << 12 | 40u << 24);       /* slot 5 of 5 */
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADHDR);
    bblog_put_le32(buf + BBLOG_H_NODE, 5 | 1 << 12 | 39u << 24);       /* wrong stride */
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADHDR);
    bblog_put_le32(buf + BBLOG_H_NODE, 0 | 1 << 12 | 40u << 24);       /* no slots */
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADHDR);
    bblog_put_le32(buf + BBLOG_H_NODE, 5 | 1 << 12 | 40u << 24);
    bblog_put_le32(buf + BBLOG_H_VERSION, BBLOG_FORMAT_VERSION);       /* v3 with a node word */
    reseal(buf);
    assert_int_equal(bblog_header_decode(buf, &d), BBLOG_EBADHDR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc_vectors),
        cmocka_unit_test(test_crc_random),
        cmocka_unit_test(test_crc_long),
        cmocka_unit_test(test_fnv),
        cmocka_unit_test(test_header_roundtrip),
        cmocka_unit_test(test_header_identity_errors),
        cmocka_unit_test(test_header_bitflips),
        cmocka_unit_test(test_sync_slots),
        cmocka_unit_test(test_header_insane_values),
        cmocka_unit_test(test_node_header),
        cmocka_unit_test(test_record_roundtrip),
        cmocka_unit_test(test_record_bitflips),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
