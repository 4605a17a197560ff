/*
 * Fuzz target: the log header decoder and the record scanner (logfs/format.c, logfs/scan.c)
 * and bblog_replay_inspect on top of them. One input is one log pair (fuzzlog.h), written to
 * the scratch directory, then scanned to its end.
 *
 * Besides the sanitizers, the scanner's promises (bblog_log.h, scan.c) are checked on every
 * input: a record is handed out only with a valid rec_crc, len > 0, consecutive seq (after
 * the last damage), an epoch not after the header's, a payload inside the data log whose CRC
 * matches; the scan visits each slot once and ends at the end of the meta file or at a bad
 * slot it reports, a failed scan keeps failing the same way until resumed past corruption, a
 * torn tail is never below the last sync mark; inspect agrees with the scan.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bblog_log.h"
#include "bblog_replay.h"
#include "fuzzlog.h"

/* Scans the log at META, whose bytes are M (l->meta_len of them), and checks every promise of
 * the scanner against what INS, bblog_replay_inspect of the same file, found. */
static void scan_all(const char *meta, const uint8_t *m, const struct fuzz_log *l,
                     const struct bblog_replay_log *ins)
{
    struct bblog_scan *s = NULL;
    const struct bblog_log_header *h;
    struct bblog_log_record r;
    const void *payload;
    uint64_t nrec = 0, undrained = 0, bytes = 0, next_slot = BBLOG_HEADER_SIZE, seq = 0;
    uint64_t max_slots, damaged = 0;
    struct bblog_scan_damage last = { 0 };
    int rc, n;

    rc = bblog_scan_open(meta, &s);
    FUZZ_CHECK(rc == ins->open_rc);
    if (rc != 0) {
        FUZZ_CHECK(s == NULL);
        return;
    }
    h = bblog_scan_header(s);
    FUZZ_CHECK(l->meta_len >= BBLOG_HEADER_SIZE);
    FUZZ_CHECK(h->nprocs > 0 && h->rank < h->nprocs);
    FUZZ_CHECK(strlen(h->pfs_path) < BBLOG_PATH_MAX && strlen(h->job_id) < BBLOG_JOB_ID_MAX);
    FUZZ_CHECK(h->file_id == bblog_fnv1a64(h->pfs_path));
    FUZZ_CHECK(strcmp(h->pfs_path, ins->pfs_path) == 0 && strcmp(h->job_id, ins->job_id) == 0);

    max_slots = (l->meta_len - BBLOG_HEADER_SIZE) / BBLOG_RECORD_SIZE;
resume:
    while ((n = bblog_scan_next(s, &r, &payload)) == 1) {
        struct bblog_log_record d;
        uint32_t crc;

        FUZZ_CHECK(nrec < max_slots);
        FUZZ_CHECK(r.slot == next_slot);
        FUZZ_CHECK(r.slot + BBLOG_RECORD_SIZE <= l->meta_len);
        FUZZ_CHECK(bblog_record_decode(m + r.slot, &d, &crc) == 0);
        /* A record the trim point cut comes back as its part past the trim point. */
        FUZZ_CHECK(r.cut == 0 || (r.flags & BBLOG_REC_CUT));
        FUZZ_CHECK(d.seq == r.seq && d.off + r.cut == r.off && d.len == r.len + r.cut &&
                   d.epoch == r.epoch);
        FUZZ_CHECK(d.data_off + r.cut == r.data_off && d.gen == r.gen &&
                   d.flags == (r.flags & ~(BBLOG_REC_CUT | BBLOG_REC_TRIMMED |
                                           BBLOG_REC_DRAINED)));
        FUZZ_CHECK(r.len > 0);
        FUZZ_CHECK(r.seq != 0 && (seq == 0 || r.seq == seq + 1));
        FUZZ_CHECK(r.epoch <= h->epoch);
        seq = r.seq;
        next_slot += BBLOG_RECORD_SIZE;
        nrec++;
        if (r.flags & BBLOG_REC_NO_PAYLOAD) {
            /* A keep or PFS record: no payload, data_crc 0 (bblog_format.h); not undrained
             * data. */
            FUZZ_CHECK(payload == NULL && crc == 0);
            continue;
        }
        if (r.flags & BBLOG_REC_DRAINED) {
            /* Of an earlier epoch than the header's: drained, its payload not read. */
            FUZZ_CHECK(payload == NULL && r.epoch < h->epoch &&
                       !(r.flags & (BBLOG_REC_CUT | BBLOG_REC_TRIMMED)));
            continue;
        }
        FUZZ_CHECK(r.epoch == h->epoch);
        if (r.flags & BBLOG_REC_TRIMMED) {
            /* Wholly below the trim point of the header's sync slot: no payload. */
            FUZZ_CHECK(payload == NULL && r.epoch == h->epoch &&
                       r.data_off + r.len <= h->synced.trim);
            continue;
        }
        FUZZ_CHECK(!(r.flags & BBLOG_REC_CUT) || (r.epoch == h->epoch &&
                                                 r.data_off == h->synced.trim));
        FUZZ_CHECK((r.flags & BBLOG_REC_CUT) || bblog_crc32c(0, payload, (size_t) r.len) == crc);
        FUZZ_CHECK(r.data_off <= l->data_len && r.len <= l->data_len - r.data_off);
        FUZZ_CHECK(memcmp(payload, l->data + r.data_off, (size_t) r.len) == 0);
        if (r.epoch == h->epoch && r.gen >= h->drained_gen) {
            undrained++;
            bytes += r.len;
        }
    }
    if (n == 0) {
        /* A clean end is the end of the meta file, with nothing but whole slots in it, or a
         * file cut before its sync mark, which was reported (and resumed past) already. */
        FUZZ_CHECK(next_slot == l->meta_len || (damaged > 0 && next_slot > l->meta_len) ||
                   (damaged > 0 && last.kind == BBLOG_DMG_TRUNCATED));
    } else {
        uint64_t bad = bblog_scan_bad_pos(s);
        struct bblog_scan_damage d;

        FUZZ_CHECK(n == BBLOG_ETORN || n == BBLOG_ECORRUPT);
        FUZZ_CHECK(bblog_scan_damage(s, &d) == 0 && d.pos == bad);
        /* A torn tail lies past the last sync and ends the scan; corruption stops at the bad
         * slot, or at the end of a meta file cut before its sync mark. */
        FUZZ_CHECK(bad == next_slot);
        FUZZ_CHECK(bad < l->meta_len || (n == BBLOG_ECORRUPT && d.kind == BBLOG_DMG_TRUNCATED));
        FUZZ_CHECK(n == BBLOG_ECORRUPT || !d.synced);
        FUZZ_CHECK(bblog_scan_next(s, &r, &payload) == n);
        FUZZ_CHECK(bblog_scan_bad_pos(s) == bad);
        if (n == BBLOG_ECORRUPT) {
            damaged++;
            last = d;
            FUZZ_CHECK(bblog_scan_resume(s) == 0);
            next_slot = d.kind == BBLOG_DMG_TRUNCATED ? l->meta_len : bad + BBLOG_RECORD_SIZE;
            seq = 0;
            goto resume;
        }
    }
    FUZZ_CHECK(ins->scan_rc == (damaged > 0 && n <= 0 ? BBLOG_ECORRUPT : n));
    FUZZ_CHECK(ins->records == nrec && ins->damaged == damaged);
    FUZZ_CHECK(ins->undrained_records == undrained && ins->undrained_bytes == bytes);
    bblog_scan_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_log l;
    struct bblog_replay_log ins;
    const char *dir = fuzz_tmpdir();
    char meta[4200];
    uint8_t *m;
    unsigned flags;
    size_t nlogs;

    if (fuzz_parse(data, size, &flags, &l, 1, &nlogs) != 0)
        return 0;
    fuzz_write_log(dir, "scan", &l, flags, &m);
    snprintf(meta, sizeof meta, "%s/scan.meta", dir);
    FUZZ_CHECK(bblog_replay_inspect(meta, &ins) == 0);
    scan_all(meta, m, &l, &ins);
    bblog_replay_log_release(&ins);
    free(m);
    return 0;
}
