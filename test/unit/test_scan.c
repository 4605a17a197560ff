/*
 * Unit tests of the log scanner (logfs/scan.c), on logs written by the appender and then
 * damaged on purpose: the meta log cut at every byte of its last record, payloads cut, single
 * bits flipped in every byte of every record and payload, zeroed slots, and records rewritten
 * with valid CRCs but impossible contents, in logs whose records no sync acknowledged and in
 * logs whose records a sync did. The oracle is the list of what was appended: the scanner must
 * return exactly the records before the damage, intact, then BBLOG_ETORN for a bad slot past
 * the last sync that no valid record follows and BBLOG_ECORRUPT otherwise, with bad_pos naming
 * the slot, and keep returning that code until resumed.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "bblog_log.h"
#include "testutil.h"

#define SLOT(i) (BBLOG_HEADER_SIZE + (uint64_t) (i) * BBLOG_RECORD_SIZE)

struct built {
    char meta[4096], data[4096];
    size_t n;                   /* records */
    uint64_t off[256], len[256], data_off[256];
    unsigned char *bytes;       /* the logical data log */
    size_t size;
};

static char *g_dir;
static unsigned g_name;

static int group_setup(void **state)
{
    (void) state;
    g_dir = tu_mkdtemp("/dev/shm");
    return g_dir != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void) state;
    tu_rmtree(g_dir);
    free(g_dir);
    return 0;
}

/* Writes a log of n records with payloads of 1..maxlen random bytes, of which the first nsync
 * are acknowledged by syncs (after every fifth record and after record nsync - 1); the rest
 * are written but not synced when the log is abandoned, as a crash leaves them. */
static struct built *build_synced(size_t n, size_t maxlen, uint64_t seed, size_t nsync)
{
    struct bblog_log_params p = {
        .dir = g_dir, .pfs_path = "/pfs/x", .job_id = "scan", .rank = 1, .nprocs = 2,
        .staging_size = 8192, .staging_count = 2,
    };
    struct built *b = calloc(1, sizeof *b);
    struct bblog_log *log = NULL;
    uint64_t rs = seed;
    char name[32];

    assert_non_null(b);
    assert_true(n <= 256);
    b->bytes = malloc(n * maxlen);
    assert_non_null(b->bytes);
    snprintf(name, sizeof name, "scan%u", g_name++);
    p.name = name;
    assert_int_equal(bblog_log_create(&p, &log), 0);
    snprintf(b->meta, sizeof b->meta, "%s", bblog_log_meta_path(log));
    snprintf(b->data, sizeof b->data, "%s", bblog_log_data_path(log));
    for (size_t i = 0; i < n; i++) {
        size_t len = (size_t) tu_range(&rs, 1, maxlen);

        tu_fill(&rs, b->bytes + b->size, len);
        b->off[i] = tu_rand(&rs) >> 16;
        b->len[i] = len;
        assert_int_equal(bblog_log_append(log, b->off[i], len, b->bytes + b->size,
                                          &b->data_off[i]), 0);
        assert_true(b->data_off[i] == b->size);
        b->size += len;
        if (i < nsync && (i % 5 == 4 || i == nsync - 1))
            assert_int_equal(bblog_log_sync(log), 0);
    }
    assert_int_equal(bblog_log_abandon(log), 0);
    b->n = n;
    assert_true(tu_fsize(b->meta) == (long long) SLOT(n));
    return b;
}

/* A log that no sync acknowledged: every damage a crash could do reads as a torn tail. */
static struct built *build(size_t n, size_t maxlen, uint64_t seed)
{
    return build_synced(n, maxlen, seed, 0);
}

static void destroy(struct built *b)
{
    unlink(b->meta);
    unlink(b->data);
    free(b->bytes);
    free(b);
}

/* Scans: records [0, n_ok) must come back intact, then `want` (0, or a code with bad_pos). */
static void expect_scan(const struct built *b, size_t n_ok, int want, uint64_t bad_pos)
{
    struct bblog_scan *s = NULL;
    struct bblog_log_record r;
    const void *payload;

    assert_int_equal(bblog_scan_open(b->meta, &s), 0);
    for (size_t i = 0; i < n_ok; i++) {
        assert_int_equal(bblog_scan_next(s, &r, &payload), 1);
        assert_true(r.seq == i + 1);
        assert_true(r.off == b->off[i] && r.len == b->len[i] && r.data_off == b->data_off[i]);
        assert_true(r.slot == SLOT(i));
        assert_memory_equal(payload, b->bytes + b->data_off[i], b->len[i]);
    }
    assert_int_equal(bblog_scan_next(s, &r, &payload), want);
    if (want < 0)
        assert_true(bblog_scan_bad_pos(s) == bad_pos);
    /* The verdict sticks. */
    assert_int_equal(bblog_scan_next(s, &r, &payload), want);
    bblog_scan_close(s);
}

static void test_clean(void **state)
{
    struct built *b = build(40, 3000, 1);
    struct bblog_scan *s = NULL;

    (void) state;
    expect_scan(b, b->n, 0, 0);
    assert_int_equal(bblog_scan_open(b->meta, &s), 0);
    assert_string_equal(bblog_scan_header(s)->pfs_path, "/pfs/x");
    assert_string_equal(bblog_scan_header(s)->job_id, "scan");
    assert_int_equal(bblog_scan_header(s)->rank, 1);
    assert_int_equal(bblog_scan_header(s)->nprocs, 2);
    bblog_scan_close(s);
    destroy(b);
}

/* The meta log cut at every byte of its last record: torn; cut at the slot boundary: clean. */
static void test_torn_meta_every_byte(void **state)
{
    struct built *b = build(12, 500, 2);
    unsigned char *meta;
    size_t mlen;

    (void) state;
    for (uint64_t len = SLOT(b->n) - 1; len > SLOT(b->n - 1); len--) {
        assert_int_equal(truncate(b->meta, (off_t) len), 0);
        expect_scan(b, b->n - 1, BBLOG_ETORN, SLOT(b->n - 1));
    }
    assert_int_equal(truncate(b->meta, (off_t) SLOT(b->n - 1)), 0);
    expect_scan(b, b->n - 1, 0, 0);
    /* A meta log cut inside its header is no log (magic cut), or a bad one; an empty one is a
     * log whose creation did not finish. */
    meta = tu_slurp(b->meta, &mlen);
    assert_non_null(meta);
    for (size_t len = 0; len < BBLOG_HEADER_SIZE; len += len < 16 ? 1 : 509) {
        struct bblog_scan *s = NULL;

        assert_int_equal(tu_spit(b->meta, meta, len), 0);
        assert_int_equal(bblog_scan_open(b->meta, &s),
                         len == 0 ? BBLOG_EUNBORN : len < 8 ? BBLOG_EBADMAGIC : BBLOG_EBADHDR);
        assert_null(s);
    }
    free(meta);
    destroy(b);
}

/* Zeroed slots end the log: a file extended with zeros whose contents never arrived. */
static void test_zero_slots(void **state)
{
    struct built *b = build(10, 300, 3);
    size_t mlen;
    unsigned char *meta = tu_slurp(b->meta, &mlen);
    unsigned char *bigger = calloc(1, mlen + 4096);

    (void) state;
    assert_non_null(meta);
    assert_non_null(bigger);
    memcpy(bigger, meta, mlen);
    assert_int_equal(tu_spit(b->meta, bigger, mlen + 4096), 0);
    expect_scan(b, b->n, BBLOG_ETORN, SLOT(b->n));
    /* Zeros in the middle, valid records after: still the end of the log. */
    memset(bigger + SLOT(4), 0, BBLOG_RECORD_SIZE);
    assert_int_equal(tu_spit(b->meta, bigger, mlen), 0);
    expect_scan(b, 4, BBLOG_ETORN, SLOT(4));
    free(meta);
    free(bigger);
    destroy(b);
}

/* The data log cut anywhere: the first record whose payload is cut is corruption, since a
 * record reaches the meta log only after its payload is durable: no crash cuts it. */
static void test_torn_payloads(void **state)
{
    struct built *b = build(30, 700, 4);
    long long full = tu_fsize(b->data);
    uint64_t rs = 44;

    (void) state;
    for (int it = 0; it < 300; it++) {
        uint64_t cut = it < 100 ? b->data_off[b->n - 1] + (uint64_t) it % b->len[b->n - 1]
                                : tu_range(&rs, 0, b->size);
        size_t first_bad = b->n;

        for (size_t i = 0; i < b->n; i++)
            if (b->data_off[i] + b->len[i] > cut) {
                first_bad = i;
                break;
            }
        assert_int_equal(truncate(b->data, (off_t) cut), 0);
        if (first_bad == b->n)
            expect_scan(b, b->n, 0, 0);
        else
            expect_scan(b, first_bad, BBLOG_ECORRUPT, SLOT(first_bad));
        /* Restore the cut bytes (and the padding the appender may have written). */
        assert_int_equal(truncate(b->data, (off_t) full), 0);
        {
            int fd = open(b->data, O_WRONLY);

            assert_true(fd >= 0);
            assert_true(pwrite(fd, b->bytes + cut, b->size - cut, (off_t) cut)
                        == (ssize_t) (b->size - cut));
            close(fd);
        }
    }
    expect_scan(b, b->n, 0, 0);
    destroy(b);
}

/* One flipped bit in any byte of any record: caught; torn if it is the last record. */
static void test_bitflip_records(void **state)
{
    struct built *b = build(12, 200, 5);
    size_t mlen;
    unsigned char *meta = tu_slurp(b->meta, &mlen);

    (void) state;
    assert_non_null(meta);
    for (size_t at = BBLOG_HEADER_SIZE; at < mlen; at++) {
        size_t slot = (at - BBLOG_HEADER_SIZE) / BBLOG_RECORD_SIZE;

        meta[at] ^= (unsigned char) (1u << (at % 8));
        assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
        expect_scan(b, slot, slot == b->n - 1 ? BBLOG_ETORN : BBLOG_ECORRUPT, SLOT(slot));
        meta[at] ^= (unsigned char) (1u << (at % 8));
    }
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    expect_scan(b, b->n, 0, 0);
    free(meta);
    destroy(b);
}

/* One flipped bit in any byte of any payload: the record that owns it is corrupt, even the
 * last one (its payload was durable before it was written). */
static void test_bitflip_payloads(void **state)
{
    struct built *b = build(10, 150, 6);
    size_t dlen;
    unsigned char *data = tu_slurp(b->data, &dlen);
    size_t owner = 0;

    (void) state;
    assert_non_null(data);
    assert_true(dlen >= b->size);
    for (size_t at = 0; at < b->size; at++) {
        while (at >= b->data_off[owner] + b->len[owner])
            owner++;
        data[at] ^= (unsigned char) (0x80u >> (at % 8));
        assert_int_equal(tu_spit(b->data, data, dlen), 0);
        expect_scan(b, owner, BBLOG_ECORRUPT, SLOT(owner));
        data[at] ^= (unsigned char) (0x80u >> (at % 8));
    }
    /* Bytes past the logical end (O_DIRECT padding) belong to no record. */
    for (size_t at = b->size; at < dlen; at++)
        data[at] ^= 0xff;
    assert_int_equal(tu_spit(b->data, data, dlen), 0);
    expect_scan(b, b->n, 0, 0);
    free(data);
    destroy(b);
}

/* A bad record followed only by bad ones is still a torn tail. */
static void test_bad_then_nothing_valid(void **state)
{
    struct built *b = build(10, 100, 7);
    size_t mlen;
    unsigned char *meta = tu_slurp(b->meta, &mlen);

    (void) state;
    assert_non_null(meta);
    for (size_t i = 6; i < b->n; i++)
        meta[SLOT(i) + 9] ^= 0x10;     /* every record from 6 on fails its CRC */
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    expect_scan(b, 6, BBLOG_ETORN, SLOT(6));
    /* Records 6, 7 and 9 stay bad, but record 8 is valid again. */
    meta[SLOT(8) + 9] ^= 0x10;
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    expect_scan(b, 6, BBLOG_ECORRUPT, SLOT(6));
    free(meta);
    destroy(b);
}

/* Rewrites slot i with r under a valid CRC (keeping its payload CRC). */
static void rewrite_slot(const struct built *b, size_t i, void (*edit)(struct bblog_log_record *))
{
    size_t mlen;
    unsigned char *meta = tu_slurp(b->meta, &mlen);
    struct bblog_log_record r;
    uint32_t crc;

    assert_non_null(meta);
    assert_int_equal(bblog_record_decode(meta + SLOT(i), &r, &crc), 0);
    edit(&r);
    bblog_record_encode(&r, crc, meta + SLOT(i));
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    free(meta);
}

static void edit_seq_skip(struct bblog_log_record *r)
{
    r->seq++;
}

static void edit_len_zero(struct bblog_log_record *r)
{
    r->len = 0;
}

static void edit_epoch_future(struct bblog_log_record *r)
{
    r->epoch++;
}

static void edit_len_absurd(struct bblog_log_record *r)
{
    r->len = UINT64_C(1) << 62;
}

static void edit_data_off_absurd(struct bblog_log_record *r)
{
    r->data_off = UINT64_MAX - 10;
}

static void edit_len_past_end(struct bblog_log_record *r)
{
    r->len += 1u << 20;
}

/* Valid CRCs over impossible contents: corruption, never garbage, never a huge allocation. */
static void test_impossible_records(void **state)
{
    struct {
        void (*edit)(struct bblog_log_record *);
        int mid, last;          /* verdicts for a middle record and for the last one */
    } cases[] = {
        {edit_seq_skip, BBLOG_ECORRUPT, BBLOG_ECORRUPT},
        {edit_len_zero, BBLOG_ECORRUPT, BBLOG_ECORRUPT},
        {edit_epoch_future, BBLOG_ECORRUPT, BBLOG_ECORRUPT},
        {edit_len_absurd, BBLOG_ECORRUPT, BBLOG_ECORRUPT},
        {edit_data_off_absurd, BBLOG_ECORRUPT, BBLOG_ECORRUPT},
        {edit_len_past_end, BBLOG_ECORRUPT, BBLOG_ECORRUPT},
    };

    (void) state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct built *b = build(8, 100, 8 + c);

        rewrite_slot(b, 3, cases[c].edit);
        expect_scan(b, 3, cases[c].mid, SLOT(3));
        destroy(b);
        b = build(8, 100, 8 + c);
        rewrite_slot(b, 7, cases[c].edit);
        expect_scan(b, 7, cases[c].last, SLOT(7));
        destroy(b);
    }
}

/* A record repeated (slot copied over the next): seq does not increase. */
static void test_duplicate_record(void **state)
{
    struct built *b = build(8, 100, 20);
    size_t mlen;
    unsigned char *meta = tu_slurp(b->meta, &mlen);

    (void) state;
    assert_non_null(meta);
    memcpy(meta + SLOT(5), meta + SLOT(4), BBLOG_RECORD_SIZE);
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    expect_scan(b, 5, BBLOG_ECORRUPT, SLOT(5));
    free(meta);
    destroy(b);
}

/* Scans to the end, resuming past each damage; checks that the records not listed in BAD come
 * back intact and that each damage is where and what KINDS says, synced as SYNCED says. */
static void expect_damage(const struct built *b, const size_t *bad, const int *kinds,
                          const int *synced, size_t nbad, int end)
{
    struct bblog_scan *s = NULL;
    struct bblog_log_record r;
    struct bblog_scan_damage d;
    const void *payload;
    size_t k = 0, next = 0;
    int n;

    assert_int_equal(bblog_scan_open(b->meta, &s), 0);
    while ((n = bblog_scan_next(s, &r, &payload)) != 0 && n != BBLOG_ETORN) {
        if (n == BBLOG_ECORRUPT) {
            assert_true(k < nbad);
            assert_int_equal(bblog_scan_damage(s, &d), 0);
            assert_int_equal(d.kind, kinds[k]);
            assert_int_equal(d.synced, synced[k]);
            assert_true(d.pos == SLOT(bad[k]) && bblog_scan_bad_pos(s) == SLOT(bad[k]));
            if (d.record_known)
                assert_true(d.rec.off == b->off[bad[k]] && d.rec.len == b->len[bad[k]]);
            assert_int_equal(bblog_scan_resume(s), 0);
            next = bad[k++] + 1;
            continue;
        }
        assert_int_equal(n, 1);
        assert_true(r.slot == SLOT(next));
        assert_true(r.off == b->off[next] && r.len == b->len[next]);
        assert_memory_equal(payload, b->bytes + b->data_off[next], b->len[next]);
        next++;
    }
    assert_int_equal(n, end);
    assert_int_equal(k, nbad);
    assert_int_equal(bblog_scan_resume(s), BBLOG_EINVAL);     /* only corruption resumes */
    bblog_scan_close(s);
}

/* Damage to what a sync acknowledged is corruption, never a torn tail, wherever it is; past the
 * last sync the crash rules still hold; the scan resumes past each damaged item. */
static void test_synced_damage(void **state)
{
    struct built *b = build_synced(12, 300, 30, 8);     /* records 0-7 synced, 8-11 not */
    size_t mlen, dlen;
    unsigned char *meta = tu_slurp(b->meta, &mlen), *data = tu_slurp(b->data, &dlen);
    char moved[4200];

    (void) state;
    assert_non_null(meta);
    assert_non_null(data);
    expect_scan(b, b->n, 0, 0);

    /* Zeros in a synced slot: corrupt (in an unsynced one they end the log: torn). */
    memset(meta + SLOT(2), 0, BBLOG_RECORD_SIZE);
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    expect_scan(b, 2, BBLOG_ECORRUPT, SLOT(2));
    expect_damage(b, (size_t[]) { 2 }, (int[]) { BBLOG_DMG_ZEROS }, (int[]) { 1 }, 1, 0);
    free(meta);
    free(data);
    destroy(b);

    b = build_synced(12, 300, 30, 8);
    meta = tu_slurp(b->meta, &mlen);
    assert_non_null(meta);
    /* The last synced record fails its CRC, the first unsynced is zeros: corrupt, then torn. */
    meta[SLOT(7) + 20] ^= 4;
    memset(meta + SLOT(9), 0, BBLOG_RECORD_SIZE);
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    expect_damage(b, (size_t[]) { 7 }, (int[]) { BBLOG_DMG_SLOT }, (int[]) { 1 }, 1,
                  BBLOG_ETORN);
    /* The meta log cut inside synced record 5, or at its start: the synced records are lost. */
    assert_int_equal(tu_spit(b->meta, meta, SLOT(5) + 30), 0);
    expect_scan(b, 5, BBLOG_ECORRUPT, SLOT(5));
    assert_int_equal(tu_spit(b->meta, meta, SLOT(5)), 0);
    expect_damage(b, (size_t[]) { 5 }, (int[]) { BBLOG_DMG_TRUNCATED }, (int[]) { 1 }, 1, 0);
    {
        struct bblog_scan *s = NULL;
        struct bblog_log_record r;
        struct bblog_scan_damage d;
        const void *payload;

        assert_int_equal(bblog_scan_open(b->meta, &s), 0);
        for (int i = 0; i < 5; i++)
            assert_int_equal(bblog_scan_next(s, &r, &payload), 1);
        assert_int_equal(bblog_scan_next(s, &r, &payload), BBLOG_ECORRUPT);
        assert_int_equal(bblog_scan_damage(s, &d), 0);
        assert_true(d.lost_records == 3 && !d.record_known);
        bblog_scan_close(s);
    }
    free(meta);
    destroy(b);

    /* Cut inside unsynced record 9: torn, as a crash leaves it. */
    b = build_synced(12, 300, 30, 8);
    meta = tu_slurp(b->meta, &mlen);
    data = tu_slurp(b->data, &dlen);
    assert_non_null(meta);
    assert_non_null(data);
    assert_int_equal(tu_spit(b->meta, meta, SLOT(9) + 30), 0);
    expect_scan(b, 9, BBLOG_ETORN, SLOT(9));
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);

    /* Payloads of synced record 1 and unsynced record 10 damaged: both corrupt, ranges known. */
    data[b->data_off[1]] ^= 1;
    data[b->data_off[10] + b->len[10] - 1] ^= 1;
    assert_int_equal(tu_spit(b->data, data, dlen), 0);
    expect_damage(b, (size_t[]) { 1, 10 }, (int[]) { BBLOG_DMG_PAYLOAD, BBLOG_DMG_PAYLOAD },
                  (int[]) { 1, 0 }, 2, 0);
    data[b->data_off[1]] ^= 1;
    data[b->data_off[10] + b->len[10] - 1] ^= 1;
    assert_int_equal(tu_spit(b->data, data, dlen), 0);

    /* The data log missing: every record is damage, the synced ones flagged. */
    snprintf(moved, sizeof moved, "%s.moved", b->data);
    assert_int_equal(rename(b->data, moved), 0);
    {
        size_t all[12];
        int kinds[12], synced[12];

        for (size_t i = 0; i < 12; i++) {
            all[i] = i;
            kinds[i] = BBLOG_DMG_NO_DATA;
            synced[i] = i < 8;
        }
        expect_damage(b, all, kinds, synced, 12, 0);
    }
    assert_int_equal(rename(moved, b->data), 0);
    /* The data log cut below the synced data: the records whose payloads it cut are lost. */
    assert_int_equal(truncate(b->data, (off_t) b->data_off[6] + 1), 0);
    {
        size_t bad[6] = { 6, 7, 8, 9, 10, 11 };
        int kinds[6], synced[6] = { 1, 1, 0, 0, 0, 0 };

        for (int i = 0; i < 6; i++)
            kinds[i] = BBLOG_DMG_PAYLOAD_CUT;
        expect_damage(b, bad, kinds, synced, 6, 0);
    }
    assert_int_equal(tu_spit(b->data, data, dlen), 0);
    expect_scan(b, b->n, 0, 0);

    /* A damaged sync slot: what it covered is unknown, so every bad record is corruption. */
    meta[BBLOG_H_SYNC0 + 8] ^= 1;
    meta[BBLOG_H_SYNC1 + 8] ^= 1;
    memset(meta + SLOT(11), 0, BBLOG_RECORD_SIZE);
    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    expect_damage(b, (size_t[]) { 11 }, (int[]) { BBLOG_DMG_ZEROS }, (int[]) { 1 }, 1, 0);
    free(meta);
    free(data);
    destroy(b);
}

/* Identity checks on the file: magic, byte order, version, CRC, and the files themselves. */
static void test_header_file_errors(void **state)
{
    struct built *b = build(3, 100, 21);
    size_t mlen;
    unsigned char *meta = tu_slurp(b->meta, &mlen), *copy;
    struct bblog_scan *s = NULL;
    char path[4200];

    (void) state;
    assert_non_null(meta);
    assert_true(mlen >= BBLOG_HEADER_SIZE);
    copy = malloc(mlen > BBLOG_HEADER_SIZE ? mlen : BBLOG_HEADER_SIZE);
    assert_non_null(copy);

    memcpy(copy, meta, mlen);
    copy[0] ^= 1;
    assert_int_equal(tu_spit(b->meta, copy, mlen), 0);
    assert_int_equal(bblog_scan_open(b->meta, &s), BBLOG_EBADMAGIC);
    memcpy(copy, meta, mlen);
    for (int i = 0; i < 8; i++)
        copy[i] = meta[7 - i];
    assert_int_equal(tu_spit(b->meta, copy, mlen), 0);
    assert_int_equal(bblog_scan_open(b->meta, &s), BBLOG_EENDIAN);
    memcpy(copy, meta, mlen);
    copy[BBLOG_H_VERSION] = 9;
    assert_int_equal(tu_spit(b->meta, copy, mlen), 0);
    assert_int_equal(bblog_scan_open(b->meta, &s), BBLOG_EVERSION);
    memcpy(copy, meta, mlen);
    copy[BBLOG_H_PATH + 1] ^= 4;
    assert_int_equal(tu_spit(b->meta, copy, mlen), 0);
    assert_int_equal(bblog_scan_open(b->meta, &s), BBLOG_EBADHDR);
    assert_null(s);

    /* A header of a later epoch: the records are still returned, with their own epoch. */
    {
        struct bblog_log_header h;
        struct bblog_log_record r;
        const void *payload;

        assert_int_equal(bblog_header_decode(meta, &h), 0);
        h.epoch = 5;
        memcpy(copy, meta, mlen);
        bblog_header_encode(&h, copy);
        assert_int_equal(tu_spit(b->meta, copy, mlen), 0);
        assert_int_equal(bblog_scan_open(b->meta, &s), 0);
        assert_true(bblog_scan_header(s)->epoch == 5);
        assert_int_equal(bblog_scan_next(s, &r, &payload), 1);
        assert_true(r.epoch == 0);
        bblog_scan_close(s);
    }

    assert_int_equal(tu_spit(b->meta, meta, mlen), 0);
    /* A missing data log: the header is read, every record is damage (test_synced_damage). */
    snprintf(path, sizeof path, "%s.moved", b->data);
    assert_int_equal(rename(b->data, path), 0);
    expect_scan(b, 0, BBLOG_ECORRUPT, SLOT(0));
    assert_int_equal(rename(path, b->data), 0);
    expect_scan(b, b->n, 0, 0);

    snprintf(path, sizeof path, "%s/absent.meta", g_dir);
    assert_int_equal(bblog_scan_open(path, &s), ENOENT);
    assert_int_equal(bblog_scan_open(b->data, &s), BBLOG_EINVAL);
    assert_int_equal(bblog_scan_open(".meta", &s), BBLOG_EINVAL);
    assert_int_equal(bblog_scan_open(NULL, &s), BBLOG_EINVAL);
    snprintf(path, sizeof path, "%s/dir.meta", g_dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(bblog_scan_open(path, &s), BBLOG_EBADMAGIC);
    rmdir(path);
    bblog_scan_close(NULL);
    free(copy);
    free(meta);
    destroy(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clean),
        cmocka_unit_test(test_torn_meta_every_byte),
        cmocka_unit_test(test_zero_slots),
        cmocka_unit_test(test_torn_payloads),
        cmocka_unit_test(test_bitflip_records),
        cmocka_unit_test(test_bitflip_payloads),
        cmocka_unit_test(test_bad_then_nothing_valid),
        cmocka_unit_test(test_impossible_records),
        cmocka_unit_test(test_duplicate_record),
        cmocka_unit_test(test_header_file_errors),
        cmocka_unit_test(test_synced_damage),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
