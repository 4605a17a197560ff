/*
 * Replay end to end: simulated ranks write real logs (bblog_log_create), drain, crash, tear and
 * corrupt them (test/unit/simlog.c); the replayed PFS file is compared byte for byte with the
 * brute-force model of the simulation.
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bblog_log.h"
#include "bblog_replay.h"
#include "simlog.h"

#define NPROCS 4
#define NO_RANK UINT32_MAX

struct fixture {
    char dir[64];
    char pfs[128];              /* the PFS file the simulated job writes */
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);

    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/bblog-test-replay-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->pfs, sizeof f->pfs, "%s/pfs.out", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    nftw(f->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* Replays PFS's logs found in DIR; returns bblog_replay_file's code. */
static int replay(const char *dir, const char *pfs, const char *job, size_t bufsize,
                  int dry_run, struct bblog_replay_report *rep, struct bblog_replay_err *err)
{
    struct bblog_replay_list list;
    struct bblog_replay_opts o = {
        .pfs_path = pfs, .job_id = job, .buffer_size = bufsize, .dry_run = dry_run,
    };
    int rc;

    rc = bblog_replay_discover(dir, &list, err);
    assert_int_equal(rc, 0);
    rc = bblog_replay_file(&list, &o, rep, err);
    bblog_replay_list_free(&list);
    return rc;
}

static void assert_file_is(const char *path, const unsigned char *want, size_t want_len)
{
    unsigned char *got;
    size_t len;

    assert_int_equal(sim_read_file(path, &got, &len), 0);
    assert_int_equal(len, want_len);
    if (len > 0)
        assert_memory_equal(got, want, len);
    free(got);
}

static void assert_matches_model(const struct sim *s, const char *path)
{
    unsigned char *want;
    size_t len;

    assert_int_equal(sim_expected(s, &want, &len), 0);
    assert_file_is(path, want, len);
    free(want);
}

/*
 * The scenario of the issue: four ranks, overlapping extents inside a generation (ordered by
 * rank) and across generations (ordered by gen), a rank overwriting itself (ordered by seq), a
 * drain in the middle, a torn tail on rank 3. Replayed twice: the same file.
 */
static void test_four_ranks_overlap(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    unsigned char *first;
    size_t first_len;
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, "job1", f->pfs, "job-1", NPROCS, 42), 0);
    /* gen 0: each rank's extent overlaps its neighbours'; rank 1 rewrites part of its own. */
    for (uint32_t r = 0; r < NPROCS; r++)
        assert_int_equal(sim_write(&s, r, r * 3000, 5000), 0);
    assert_int_equal(sim_write(&s, 1, 3500, 100), 0);
    sim_set_gen(&s, 1);
    for (uint32_t r = 0; r < NPROCS; r++)
        assert_int_equal(sim_write(&s, NPROCS - 1 - r, 1000 + r * 700, 2000), 0);
    assert_int_equal(sim_drain(&s, NO_RANK), 0);
    /* gens 2 and 3, after the drain: overwrite drained bytes, extend the file, leave holes. */
    sim_set_gen(&s, 2);
    for (uint32_t r = 0; r < NPROCS; r++) {
        assert_int_equal(sim_write(&s, r, 2000 + r * 50, 300), 0);
        assert_int_equal(sim_write(&s, r, 40000 + r * 4096, 4096), 0);
    }
    sim_set_gen(&s, 3);
    assert_int_equal(sim_write(&s, 3, 0, 64), 0);
    assert_int_equal(sim_write(&s, 0, 40000, 10000), 0);
    assert_int_equal(sim_write(&s, 2, 41000, 512), 0);
    assert_int_equal(sim_write(&s, 3, 60000, 1000), 0);      /* torn below */
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_tear(&s, 3), 0);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nlogs, NPROCS);
    assert_int_equal(rep.nprocs, NPROCS);
    assert_string_equal(rep.job_id, "job-1");
    assert_int_equal(rep.nmissing, 0);
    assert_int_equal(rep.records, 4 * 2 + 3);
    assert_int_equal(rep.ntorn, 1);
    assert_int_equal(rep.created, 0);
    assert_int_equal(rep.file_end, 40000 + 3 * 4096 + 4096);
    assert_true(rep.pwrites >= 1 && rep.pwrites <= rep.extents);
    assert_matches_model(&s, f->pfs);
    bblog_replay_report_free(&rep);

    /* Idempotent: a second replay (as after a crash during the first) changes nothing. */
    assert_int_equal(sim_read_file(f->pfs, &first, &first_len), 0);
    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_file_is(f->pfs, first, first_len);
    bblog_replay_report_free(&rep);
    free(first);
    sim_free(&s);
}

/*
 * bblog_close=bb: after close each process drains alone and removes its log when done. Rank 1
 * logged [0, 8 KiB) in gen 1; rank 0 overwrote [0, 4 KiB) in gen 3, so rank 1 owes only
 * [4, 8 KiB), which its keep record says. Rank 0 finished (its data on the PFS, its log
 * removed), then the job died: replaying rank 1's log alone must not put its older bytes back
 * over rank 0's. Without the keep record (rank 1 of the control run) it does: the hazard the
 * keep records close.
 */
static void keep_case(struct fixture *f, int with_keep)
{
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    unsigned char *want, *got;
    size_t len, got_len;
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, with_keep ? "keep" : "nokeep", f->pfs, "job-k", 2, 7),
                     0);
    sim_set_gen(&s, 1);
    assert_int_equal(sim_write(&s, 1, 0, 8192), 0);
    assert_int_equal(sim_write(&s, 0, 8192, 4096), 0);
    sim_set_gen(&s, 3);
    assert_int_equal(sim_write(&s, 0, 0, 4096), 0);
    assert_int_equal(bblog_log_keep(s.logs[0], 0, 4096), 0);
    assert_int_equal(bblog_log_keep(s.logs[0], 8192, 4096), 0);
    if (with_keep)
        assert_int_equal(bblog_log_keep(s.logs[1], 4096, 4096), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_expected(&s, &want, &len), 0);
    assert_int_equal(len, 12288);

    /* Both logs: the keep records change nothing, the later write wins anyway. */
    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.records, 3);
    assert_int_equal(rep.bytes_logged, with_keep ? 12288 : 16384);
    assert_file_is(f->pfs, want, len);
    bblog_replay_report_free(&rep);

    /* Rank 0 had finished: its bytes are in the file, its log is gone. */
    assert_int_equal(sim_remove(&s, 0), 0);
    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.file_end, 8192);
    assert_int_equal(sim_read_file(f->pfs, &got, &got_len), 0);
    assert_int_equal(got_len, len);
    if (with_keep)
        assert_memory_equal(got, want, len);
    else
        assert_memory_not_equal(got, want, 4096);       /* rank 1's stale bytes came back */
    bblog_replay_report_free(&rep);
    free(got);
    free(want);
    sim_free(&s);
}

static void test_keep_records(void **state)
{
    keep_case(*state, 1);
}

static void test_keep_records_control(void **state)
{
    keep_case(*state, 0);
}

/* The torn log is the one reported, by its index in the list. */
static void test_torn_reported(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_list list;
    struct bblog_replay_opts o = { .pfs_path = f->pfs };
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, "t", f->pfs, "job-t", NPROCS, 7), 0);
    for (uint32_t r = 0; r < NPROCS; r++) {
        assert_int_equal(sim_write(&s, r, r * 100, 100), 0);
        assert_int_equal(sim_write(&s, r, 1000 + r * 100, 100), 0);
    }
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_tear(&s, 2), 0);
    assert_int_equal(bblog_replay_discover(f->dir, &list, &err), 0);
    assert_int_equal(list.n, NPROCS);
    for (size_t i = 0; i < list.n; i++) {
        assert_int_equal(list.logs[i].open_rc, 0);
        assert_int_equal(list.logs[i].rank, i);         /* sorted by rank */
        assert_int_equal(list.logs[i].scan_rc, i == 2 ? BBLOG_ETORN : 0);
        assert_int_equal(list.logs[i].undrained_records, i == 2 ? 1 : 2);
        assert_int_equal(list.logs[i].undrained_bytes, i == 2 ? 100 : 200);
    }
    assert_int_equal(bblog_replay_file(&list, &o, &rep, &err), 0);
    assert_int_equal(rep.ntorn, 1);
    assert_string_equal(list.logs[rep.torn[0]].meta_path, s.meta_paths[2]);
    assert_int_equal(rep.created, 1);
    assert_matches_model(&s, f->pfs);
    bblog_replay_report_free(&rep);
    bblog_replay_list_free(&list);
    sim_free(&s);
}

/*
 * Replay in parts: the logs of the simulated job are spread over NNODES node directories (rank
 * r on node NODE_OF[r]); each node prepares its logs of PFS, writes its part to DIR/parts, and
 * once every part is there replays with the others' parts. The nodes' states stay alive across
 * the exchange, as in the tool.
 */
struct node_replay {
    char dir[160], part[200];
    struct bblog_replay_list list;
    struct bblog_replay *r;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    const char *pfs;            /* the file replayed */
    int have;                   /* the node has logs of the file */
};

static void move_log(const char *meta, const char *dir)
{
    char to[400], data[300];
    const char *base = strrchr(meta, '/') + 1;

    snprintf(to, sizeof to, "%s/%s", dir, base);
    assert_int_equal(rename(meta, to), 0);
    snprintf(data, sizeof data, "%.*s.data", (int) (strlen(meta) - 5), meta);
    snprintf(to, sizeof to, "%s/%.*s.data", dir, (int) (strlen(base) - 5), base);
    if (access(data, F_OK) == 0)
        assert_int_equal(rename(data, to), 0);
}

/* Splits the job's logs over the nodes and prepares each node's replay, writing its part. */
static void spread(const char *top, const struct sim *s, const char *pfs, const unsigned *node_of,
                   unsigned nnodes, struct node_replay *nr, char *parts, size_t parts_len)
{
    struct bblog_replay_opts o = { .pfs_path = pfs, .buffer_size = 700 };
    struct bblog_replay_err err;

    snprintf(parts, parts_len, "%s/parts-%s", top, s->tag);
    assert_int_equal(mkdir(parts, 0700), 0);
    for (unsigned n = 0; n < nnodes; n++) {
        snprintf(nr[n].dir, sizeof nr[n].dir, "%s/node%u-%s", top, n, s->tag);
        assert_int_equal(mkdir(nr[n].dir, 0700), 0);
    }
    for (uint32_t r = 0; r < s->nprocs; r++)
        move_log(s->meta_paths[r], nr[node_of[r]].dir);
    for (unsigned n = 0; n < nnodes; n++) {
        struct bblog_replay_part p;
        int rc;

        assert_int_equal(bblog_replay_discover(nr[n].dir, &nr[n].list, &err), 0);
        snprintf(nr[n].part, sizeof nr[n].part, "node%u.part", n);
        nr[n].pfs = pfs;
        rc = bblog_replay_prepare(&nr[n].list, &o, &nr[n].r, &nr[n].rep, &nr[n].err);
        if (rc == ENOENT)               /* no log of the file on that node */
            continue;
        assert_non_null(nr[n].r);
        nr[n].have = 1;
        assert_int_equal(bblog_replay_part_of(nr[n].r, &p), 0);
        {
            char path[400];

            snprintf(path, sizeof path, "%s/%s", parts, nr[n].part);
            assert_int_equal(bblog_replay_parts_write(path, &p, 1, &err), 0);
        }
        bblog_replay_part_release(&p);
    }
}

/* Node N's pass 2 with every other node's part; returns bblog_replay_finish's code. */
static int finish_node(struct node_replay *nr, const char *parts)
{
    struct bblog_replay_parts others;
    struct bblog_replay_err err;
    int rc;

    struct bblog_replay_want w = { .pfs_path = nr->pfs };
    uint64_t *ranges;

    /* As `bblog replay --parts` reads them: only the records near this node's bytes. */
    assert_int_equal(bblog_replay_ranges(nr->r, &ranges, &w.n), 0);
    w.ranges = ranges;
    assert_int_equal(bblog_replay_parts_read_for(parts, nr->part, &w, 1, &others, &err), 0);
    rc = bblog_replay_finish(nr->r, &others);
    bblog_replay_parts_free(&others);
    free(ranges);
    return rc;
}

static void free_nodes(struct node_replay *nr, unsigned nnodes)
{
    for (unsigned n = 0; n < nnodes; n++) {
        bblog_replay_free(nr[n].r);
        if (nr[n].have)
            bblog_replay_report_free(&nr[n].rep);
        bblog_replay_list_free(&nr[n].list);
    }
}

/* The whole replay in parts over NNODES nodes, in a random node order; every node succeeds. */
static void replay_in_parts(const char *top, const struct sim *s, const char *pfs,
                            unsigned nnodes, uint64_t x)
{
    struct node_replay nr[4] = { 0 };
    struct bblog_replay_parts all;
    struct bblog_replay_err err;
    unsigned node_of[NPROCS];
    char parts[200];

    for (uint32_t r = 0; r < NPROCS; r++)
        node_of[r] = (unsigned) (x >> (8 * r)) % nnodes;
    spread(top, s, pfs, node_of, nnodes, nr, parts, sizeof parts);
    assert_int_equal(bblog_replay_parts_read(parts, NULL, 0, &all, &err), 0);
    assert_int_equal(bblog_replay_parts_complete(&all, &err), 1);
    bblog_replay_parts_free(&all);
    for (unsigned k = 0; k < nnodes; k++) {
        unsigned n = (k + (unsigned) (x >> 40)) % nnodes;

        if (nr[n].have)
            assert_int_equal(finish_node(&nr[n], parts), 0);
    }
    free_nodes(nr, nnodes);
}

/*
 * Randomized against the model (fixed seeds): random overlapping extents over several gens,
 * random drains (some with a rank stuck between the epoch bump and the truncation), a random
 * torn tail, small random gather buffers so that flushes and direct writes both happen.
 * NNODES > 0: replayed in parts, the ranks spread at random over that many nodes.
 */
static void random_rounds(struct fixture *f, int node, unsigned nnodes)
{
    uint64_t x = 20240611;

    for (int round = 0; round < 16; round++) {
        struct bblog_replay_report rep;
        struct bblog_replay_err err;
        char tag[32], pfs[160];
        uint32_t stuck = NO_RANK;
        struct sim s;

        snprintf(tag, sizeof tag, "rnd%u-%d", nnodes, round);
        snprintf(pfs, sizeof pfs, "%s/pfs.%s", f->dir, tag);
        assert_int_equal((node ? sim_open_node : sim_open)(&s, f->dir, tag, pfs, tag, NPROCS,
                                                           (uint64_t) round + 1), 0);
        for (uint32_t gen = 0; gen < 6; gen++) {
            int writes = 2 + (int) (x % 12);

            sim_set_gen(&s, gen);
            for (int i = 0; i < writes; i++) {
                uint32_t rank;
                uint64_t off, len;

                x = x * 6364136223846793005u + 1442695040888963407u;
                rank = (uint32_t) (x >> 60) % NPROCS;
                off = (x >> 20) % 65536;
                len = 1 + (x >> 40) % 6000;
                if (rank == stuck)
                    rank = (rank + 1) % NPROCS;
                assert_int_equal(sim_write(&s, rank, off, len), 0);
            }
            if (gen == 2 || (gen == 4 && (x >> 33) % 2)) {
                uint32_t st = stuck == NO_RANK && (x >> 35) % 3 == 0 ? (uint32_t) (x >> 37) %
                              NPROCS : NO_RANK;

                assert_int_equal(sim_drain(&s, st), 0);
                if (st != NO_RANK)
                    stuck = st;
            }
        }
        assert_int_equal(sim_crash(&s), 0);
        /* Every third round, tear the first rank from round % NPROCS on that has undrained
         * records (ENOENT: it has none). */
        for (uint32_t k = 0; round % 3 == 0 && k < NPROCS; k++) {
            uint32_t r = ((uint32_t) round + k) % NPROCS;
            int rc = r != stuck ? sim_tear(&s, r) : ENOENT;

            if (rc == 0)
                break;
            if (rc != ENOENT)
                fail_msg("round %d: tearing rank %u: %s", round, r, bblog_strerror(rc));
        }
        x = x * 6364136223846793005u + 1442695040888963407u;
        if (nnodes > 0) {
            replay_in_parts(f->dir, &s, pfs, nnodes, x);
        } else {
            assert_int_equal(replay(f->dir, pfs, NULL, 512 + (size_t) (x >> 50) % 16384, 0,
                                    &rep, &err), 0);
            bblog_replay_report_free(&rep);
        }
        assert_matches_model(&s, pfs);
        sim_free(&s);
    }
}

static void test_random_against_model(void **state)
{
    random_rounds(*state, 0, 0);
}

/* The same rounds replayed in parts, the ranks spread over 2 and over 3 nodes: the nodes
 * together write the model's bytes. */
static void test_random_in_parts(void **state)
{
    random_rounds(*state, 0, 2);
    random_rounds(*state, 0, 3);
}

/* The same job with the logs of the 4 ranks in the slots of one node log pair
 * (bblog_mapping=node): drains, a rank stuck between the two halves of mark_drained, torn
 * appends and crashes replay to the model's bytes. */
static void test_random_node_pair(void **state)
{
    random_rounds(*state, 1, 0);
}

/*
 * Drained job-wide, known only on another node: rank 0 dies after a drain wrote its record but
 * before marking its log, and alone on its node; the other node's logs say the drain completed
 * (drained_gen), and a later drain wrote newer bytes over rank 0's. Node 0 must not write its
 * drained record back over them, although nothing in its own logs says it was drained.
 */
static void test_parts_drained_elsewhere(void **state)
{
    struct fixture *f = *state;
    struct node_replay nr[2] = { 0 };
    const unsigned node_of[NPROCS] = { 0, 1, 1, 1 };
    char parts[200];
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, "de", f->pfs, "job-de", NPROCS, 11), 0);
    assert_int_equal(sim_write(&s, 0, 0, 4096), 0);
    assert_int_equal(sim_kill(&s, 0), 0);
    assert_int_equal(sim_drain(&s, NO_RANK), 0);
    sim_set_gen(&s, 1);
    assert_int_equal(sim_write(&s, 1, 1000, 2000), 0);
    assert_int_equal(sim_drain(&s, NO_RANK), 0);
    sim_set_gen(&s, 2);
    assert_int_equal(sim_write(&s, 2, 2500, 4000), 0);      /* meets rank 0's record */
    assert_int_equal(sim_crash(&s), 0);

    spread(f->dir, &s, f->pfs, node_of, 2, nr, parts, sizeof parts);
    assert_int_equal(finish_node(&nr[0], parts), 0);
    assert_int_equal(nr[0].rep.drained_gen, 2);
    assert_int_equal(nr[0].rep.bytes_written, 0);
    assert_int_equal(finish_node(&nr[1], parts), 0);
    assert_int_equal(nr[1].rep.bytes_written, 4000);
    assert_matches_model(&s, f->pfs);
    free_nodes(nr, 2);
    sim_free(&s);
}

/*
 * The checks across parts: a node whose other parts are missing writes nothing (EAGAIN); a rank
 * claimed twice is refused; a damaged part file is refused, naming it; damage in another
 * node's logs refuses the file on every node unless salvaging.
 */
static void test_parts_refused(void **state)
{
    struct fixture *f = *state;
    struct node_replay nr[2] = { 0 };
    const unsigned node_of[NPROCS] = { 0, 0, 1, 1 };
    struct bblog_replay_parts got;
    struct bblog_replay_err err;
    char parts[200], path[300], moved[300];
    struct sim s;
    FILE *fp;

    assert_int_equal(sim_open(&s, f->dir, "pr", f->pfs, "job-pr", NPROCS, 12), 0);
    for (uint32_t r = 0; r < NPROCS; r++)
        assert_int_equal(sim_write(&s, r, r * 300, 700), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_corrupt(&s, 3, 0, 1), 0);
    spread(f->dir, &s, f->pfs, node_of, 2, nr, parts, sizeof parts);
    assert_int_equal(nr[1].r ? 0 : 1, 0);               /* prepared, though damaged */

    /* Node 1's part missing: incomplete. */
    snprintf(path, sizeof path, "%s/node1.part", parts);
    snprintf(moved, sizeof moved, "%s/node1.hidden", parts);
    assert_int_equal(rename(path, moved), 0);
    assert_int_equal(bblog_replay_parts_read(parts, NULL, 0, &got, &err), 0);
    assert_int_equal(bblog_replay_parts_complete(&got, &err), 0);
    bblog_replay_parts_free(&got);
    assert_int_equal(finish_node(&nr[0], parts), EAGAIN);
    assert_non_null(strstr(nr[0].err.reason, "only 2 of the set's 4 ranks"));
    assert_int_equal(access(f->pfs, F_OK), -1);
    assert_int_equal(rename(moved, path), 0);

    /* Node 0's own part read as another's: ranks 0 and 1 twice. */
    assert_int_equal(bblog_replay_parts_read(parts, "node1.part", 1, &got, &err), 0);
    assert_int_equal(bblog_replay_finish(nr[0].r, &got), BBLOG_EMISMATCH);
    assert_non_null(strstr(nr[0].err.reason, "rank 0 of the set has logs on two nodes"));
    bblog_replay_parts_free(&got);

    /* Node 1's logs are damaged: node 0 refuses too, naming node 1's part. */
    assert_int_equal(finish_node(&nr[0], parts), BBLOG_ECORRUPT);
    assert_string_equal(nr[0].err.path, path);
    assert_int_equal(access(f->pfs, F_OK), -1);

    /* A damaged part file. */
    fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, -6, SEEK_END), 0);
    assert_int_equal(fputc('#', fp), '#');
    assert_int_equal(fclose(fp), 0);
    assert_int_equal(bblog_replay_parts_read(parts, "node0.part", 1, &got, &err), BBLOG_ECORRUPT);
    assert_string_equal(err.path, path);
    assert_int_equal(got.n, 0);
    free_nodes(nr, 2);
    sim_free(&s);
}

/* A part file with any one byte changed is refused (never read as another part), and the
 * intact one reads back as written. */
static void test_part_file_damage(void **state)
{
    struct fixture *f = *state;
    uint32_t ranks[2] = { 1, 3 };
    struct bblog_replay_prec recs[3] = {
        { 0, 100, 1, 0, 1 }, { 4096, 7, 2, 1, 3 }, { 50, 60, 3, 2, 1 },
    };
    struct bblog_replay_part p = {
        .pfs_path = "/pfs/x.dat", .job_id = "job-9", .set_id = 0x1234, .nprocs = 4,
        .drained_gen = 2, .ranks = ranks, .nranks = 2, .recs = recs, .nrecs = 3,
    };
    struct bblog_replay_parts got;
    struct bblog_replay_err err;
    char dir[128], path[200];
    unsigned char *bytes;
    size_t len;

    snprintf(dir, sizeof dir, "%s/pd", f->dir);
    snprintf(path, sizeof path, "%s/n.part", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(bblog_replay_parts_write(path, &p, 1, &err), 0);
    assert_int_equal(bblog_replay_parts_read(dir, NULL, 1, &got, &err), 0);
    assert_int_equal(got.n, 1);
    assert_string_equal(got.v[0].pfs_path, p.pfs_path);
    assert_string_equal(got.v[0].job_id, p.job_id);
    assert_true(got.v[0].set_id == p.set_id && got.v[0].nprocs == 4 && got.v[0].drained_gen == 2);
    assert_int_equal(got.v[0].nranks, 2);
    assert_memory_equal(got.v[0].ranks, ranks, sizeof ranks);
    assert_int_equal(got.v[0].nrecs, 3);
    assert_int_equal(got.v[0].nread, 3);
    {                   /* read back sorted by offset */
        const struct bblog_replay_prec sorted[3] = { recs[0], recs[2], recs[1] };

        assert_memory_equal(got.v[0].recs, sorted, sizeof sorted);
    }
    {                   /* its runs: [0, 110) and [4096, 4103) */
        uint64_t nbytes, runs;

        assert_int_equal(bblog_replay_parts_runs(&got, &nbytes, &runs), 0);
        assert_true(nbytes == 117 && runs == 2);
    }
    bblog_replay_parts_free(&got);

    assert_int_equal(sim_read_file(path, &bytes, &len), 0);
    for (size_t i = 0; i < len; i++) {
        FILE *fp = fopen(path, "wb");

        bytes[i] ^= 0x10;
        assert_non_null(fp);
        assert_int_equal(fwrite(bytes, 1, len, fp), len);
        assert_int_equal(fclose(fp), 0);
        bytes[i] ^= 0x10;
        if (bblog_replay_parts_read(dir, NULL, 1, &got, &err) == 0)
            fail_msg("byte %zu of %zu changed: the part file was read", i, len);
    }
    free(bytes);
}

/*
 * A part's records are read by blocks near the reader's bytes: of three blocks (4096, 4096 and
 * 5 records) over three stretches of the file, a range in the middle one reads that block
 * alone, a range meeting none reads none, ranges of another file none, a full read all; a
 * damaged block is refused when it is read and not seen when it is not.
 */
static void test_part_blocks(void **state)
{
    struct fixture *f = *state;
    const size_t nrecs = 2 * 4096 + 5;
    struct bblog_replay_prec *recs = calloc(nrecs, sizeof *recs);
    uint32_t ranks[1] = { 0 };
    struct bblog_replay_part p = {
        .pfs_path = "/pfs/b.dat", .job_id = "job-b", .nprocs = 1, .ranks = ranks, .nranks = 1,
        .recs = recs, .nrecs = nrecs,
    };
    const uint64_t mid[2] = { 5000 * 100 + 50, 5000 * 100 + 60 }, none[2] = { 1 << 30, 1ull << 31 };
    struct bblog_replay_want w = { .pfs_path = "/pfs/b.dat", .ranges = mid, .n = 1 };
    struct bblog_replay_want other = { .pfs_path = "/pfs/other.dat", .ranges = mid, .n = 1 };
    struct bblog_replay_parts got;
    struct bblog_replay_err err;
    char dir[128], path[200];
    unsigned char *bytes;
    size_t len;

    assert_non_null(recs);
    for (size_t i = 0; i < nrecs; i++)  /* written in reverse: the file holds them sorted */
        recs[nrecs - 1 - i] = (struct bblog_replay_prec) { .off = i * 100, .len = 100,
                                                           .seq = i + 1 };
    snprintf(dir, sizeof dir, "%s/pb", f->dir);
    snprintf(path, sizeof path, "%s/n.part", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(bblog_replay_parts_write(path, &p, 1, &err), 0);

    assert_int_equal(bblog_replay_parts_read_for(dir, NULL, &w, 1, &got, &err), 0);
    assert_int_equal(got.v[0].nrecs, nrecs);
    assert_int_equal(got.v[0].nread, 4096);
    for (size_t i = 0; i < 4096; i++)
        assert_true(got.v[0].recs[i].off == (4096 + i) * 100 && got.v[0].recs[i].len == 100);
    assert_true(got.v[0].bytes == nrecs * 100 && got.v[0].runs == 1);
    bblog_replay_parts_free(&got);
    w.ranges = none;
    assert_int_equal(bblog_replay_parts_read_for(dir, NULL, &w, 1, &got, &err), 0);
    assert_int_equal(got.v[0].nread, 0);
    bblog_replay_parts_free(&got);
    assert_int_equal(bblog_replay_parts_read_for(dir, NULL, &other, 1, &got, &err), 0);
    assert_int_equal(got.v[0].nread, 0);
    bblog_replay_parts_free(&got);
    assert_int_equal(bblog_replay_parts_read(dir, NULL, 1, &got, &err), 0);
    assert_int_equal(got.v[0].nread, nrecs);
    bblog_replay_parts_free(&got);

    /* A byte of the first block's records changed: refused by a read that takes that block. */
    assert_int_equal(sim_read_file(path, &bytes, &len), 0);
    bytes[len - nrecs * sizeof *recs + 7] ^= 1;
    {
        FILE *fp = fopen(path, "wb");

        assert_non_null(fp);
        assert_int_equal(fwrite(bytes, 1, len, fp), len);
        assert_int_equal(fclose(fp), 0);
    }
    w.ranges = mid;
    assert_int_equal(bblog_replay_parts_read_for(dir, NULL, &w, 1, &got, &err), 0);
    assert_int_equal(got.v[0].nread, 4096);
    bblog_replay_parts_free(&got);
    w.ranges = (const uint64_t[2]) { 0, 1 };
    assert_int_equal(bblog_replay_parts_read_for(dir, NULL, &w, 1, &got, &err), BBLOG_ECORRUPT);
    assert_int_equal(bblog_replay_parts_read(dir, NULL, 1, &got, &err), BBLOG_ECORRUPT);
    free(bytes);
    free(recs);
}

/*
 * Salvage across parts: node 1's logs are damaged, every node salvages; the intact records of
 * all nodes are written and each node reports the salvage (BBLOG_ECORRUPT).
 */
static void test_parts_salvage(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_opts o = { .pfs_path = f->pfs, .salvage = 1 };
    struct bblog_replay_report rep[2];
    struct bblog_replay_err err[2];
    struct bblog_replay_list list[2];
    struct bblog_replay *r[2];
    struct bblog_replay_part p[2];
    struct bblog_replay_parts other;
    char dir[2][200];
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, "ps", f->pfs, "job-ps", 2, 13), 0);
    assert_int_equal(sim_write(&s, 0, 0, 500), 0);
    assert_int_equal(sim_write(&s, 1, 1000, 500), 0);
    assert_int_equal(sim_write(&s, 1, 2000, 500), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_corrupt(&s, 1, 0, 1), 0);      /* rank 1's first payload */
    for (int n = 0; n < 2; n++) {
        snprintf(dir[n], sizeof dir[n], "%s/salv%d", f->dir, n);
        assert_int_equal(mkdir(dir[n], 0700), 0);
        move_log(s.meta_paths[n], dir[n]);
        assert_int_equal(bblog_replay_discover(dir[n], &list[n], &err[n]), 0);
        assert_int_equal(bblog_replay_prepare(&list[n], &o, &r[n], &rep[n], &err[n]), 0);
        assert_int_equal(bblog_replay_part_of(r[n], &p[n]), 0);
    }
    assert_int_equal(p[1].nlosses, 1);
    for (int n = 0; n < 2; n++) {
        other = (struct bblog_replay_parts) { &p[1 - n], 1 };
        p[1 - n].from = strdup("other");
        assert_int_equal(bblog_replay_finish(r[n], &other), BBLOG_ECORRUPT);
        assert_int_equal(rep[n].salvaged, 1);
        assert_int_equal(rep[n].nparts, 1);
    }
    {
        unsigned char *got;
        size_t len;

        assert_int_equal(sim_read_file(f->pfs, &got, &len), 0);
        assert_int_equal(len, 2500);
        free(got);
    }
    for (int n = 0; n < 2; n++) {
        bblog_replay_part_release(&p[n]);
        bblog_replay_free(r[n]);
        bblog_replay_report_free(&rep[n]);
        bblog_replay_list_free(&list[n]);
    }
    sim_free(&s);
}

/* Mid-log corruption, in a record slot or in a payload: refused before anything is written,
 * the error names the log, and the PFS file (absent, or holding drained data) is untouched. */
static void check_corrupt(struct fixture *f, int payload, int drained, int node)
{
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    unsigned char *before = NULL;
    size_t before_len = 0;
    struct sim s;

    assert_int_equal((node ? sim_open_node : sim_open)(&s, f->dir, payload ? "cp" : "cr", f->pfs,
                                                       "job-c", NPROCS, 9), 0);
    if (drained) {
        for (uint32_t r = 0; r < NPROCS; r++)
            assert_int_equal(sim_write(&s, r, r * 512, 512), 0);
        assert_int_equal(sim_drain(&s, NO_RANK), 0);
        sim_set_gen(&s, 1);
    }
    for (uint32_t r = 0; r < NPROCS; r++)
        for (int i = 0; i < 4; i++)
            assert_int_equal(sim_write(&s, r, (uint64_t) (i * NPROCS + r) * 256, 300), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_corrupt(&s, 1, 1, payload), 0);
    if (drained)
        assert_int_equal(sim_read_file(f->pfs, &before, &before_len), 0);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), BBLOG_ECORRUPT);
    assert_int_equal(err.rc, BBLOG_ECORRUPT);
    assert_string_equal(err.path, s.meta_paths[1]);
    assert_non_null(strstr(err.reason, "1 damaged item"));
    assert_int_equal(rep.nlosses, 1);
    assert_int_equal(rep.losses[0].rank, 1);
    assert_int_equal(rep.losses[0].d.synced, 0);
    assert_int_equal(rep.salvaged, 0);
    if (payload) {      /* the record is intact: its file range is known */
        assert_true(rep.losses[0].d.record_known);
        assert_true(rep.losses[0].d.rec.off == (uint64_t) (1 * NPROCS + 1) * 256);
    }
    if (drained) {
        assert_file_is(f->pfs, before, before_len);
    } else {
        assert_int_equal(access(f->pfs, F_OK), -1);
        assert_int_equal(errno, ENOENT);
    }
    bblog_replay_report_free(&rep);
    free(before);
    sim_free(&s);
}

static void test_corrupt_record_refused(void **state)
{
    check_corrupt(*state, 0, 0, 0);
}

static void test_corrupt_payload_refused(void **state)
{
    check_corrupt(*state, 1, 1, 0);
}

/* The same in the slots of a node log pair: the damage is found in slot 1's log, and only
 * that slot's log is named. */
static void test_corrupt_node_record(void **state)
{
    check_corrupt(*state, 0, 1, 1);
}

static void test_corrupt_node_payload(void **state)
{
    check_corrupt(*state, 1, 0, 1);
}

/* Logs of two jobs for one path: refused unless a job is named; naming one replays only it. */
static void test_two_jobs(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct sim a, b;

    assert_int_equal(sim_open(&a, f->dir, "ja", f->pfs, "job-A", NPROCS, 1), 0);
    assert_int_equal(sim_open(&b, f->dir, "jb", f->pfs, "job-B", NPROCS, 2), 0);
    for (uint32_t r = 0; r < NPROCS; r++) {
        assert_int_equal(sim_write(&a, r, r * 1000, 1500), 0);
        assert_int_equal(sim_write(&b, r, r * 1000 + 200, 900), 0);
    }
    assert_int_equal(sim_crash(&a), 0);
    assert_int_equal(sim_crash(&b), 0);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), BBLOG_EMISMATCH);
    assert_true(strcmp(err.path, a.meta_paths[0]) == 0 || strcmp(err.path, b.meta_paths[0]) == 0);
    assert_non_null(strstr(err.reason, "job-A"));
    assert_non_null(strstr(err.reason, "job-B"));
    assert_int_equal(access(f->pfs, F_OK), -1);
    bblog_replay_report_free(&rep);

    assert_int_equal(replay(f->dir, f->pfs, "job-B", 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nlogs, NPROCS);
    assert_matches_model(&b, f->pfs);
    bblog_replay_report_free(&rep);

    assert_int_equal(replay(f->dir, f->pfs, "job-C", 0, 0, &rep, &err), ENOENT);
    assert_string_equal(err.path, f->pfs);
    bblog_replay_report_free(&rep);
    sim_free(&a);
    sim_free(&b);
}

/* Fully drained logs (an earlier job's, or an earlier open's in the same job, kept with
 * bblog_keep_logs) hold nothing to replay: they neither refuse the replay nor count as
 * replayed, nor as ranks of the crashed open. */
static void test_drained_logs_ignored(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct sim old_job, old_open, s;

    assert_int_equal(sim_open(&old_job, f->dir, "old", f->pfs, "job-OLD", 8, 1), 0);
    assert_int_equal(sim_open(&old_open, f->dir, "o1", f->pfs, "job-NEW", NPROCS, 2), 0);
    assert_int_equal(sim_open(&s, f->dir, "o2", f->pfs, "job-NEW", NPROCS, 3), 0);
    for (uint32_t r = 0; r < NPROCS; r++) {
        assert_int_equal(sim_write(&old_job, r, r * 1024, 1024), 0);
        assert_int_equal(sim_write(&old_open, r, r * 1024 + 512, 1024), 0);
    }
    assert_int_equal(sim_drain(&old_job, NO_RANK), 0);
    assert_int_equal(sim_drain(&old_open, NO_RANK), 0);
    assert_int_equal(sim_crash(&old_job), 0);
    assert_int_equal(sim_crash(&old_open), 0);
    /* The crashed open covers every byte the drained ones wrote, so its model is the file. */
    for (uint32_t r = 0; r < NPROCS - 1; r++)
        assert_int_equal(sim_write(&s, r, r * 2048, 2048), 0);
    assert_int_equal(sim_write(&s, 0, 100, 10), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_remove(&s, NPROCS - 1), 0);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nlogs, NPROCS - 1);
    assert_int_equal(rep.nempty, 8 + NPROCS);
    assert_string_equal(rep.job_id, "job-NEW");
    /* Rank 3's drained log belongs to the earlier open (another set): this open has none. */
    assert_int_equal(rep.nmissing, 1);
    assert_matches_model(&s, f->pfs);
    bblog_replay_report_free(&rep);

    /* Nothing but drained logs: nothing to do, and the file is not touched. */
    assert_int_equal(replay(f->dir, f->pfs, "job-OLD", 0, 0, &rep, &err), 0);
    assert_int_equal(rep.records, 0);
    assert_int_equal(rep.nlogs, 0);
    assert_int_equal(rep.nempty, 8);
    assert_int_equal(rep.pwrites, 0);
    assert_matches_model(&s, f->pfs);
    bblog_replay_report_free(&rep);
    sim_free(&old_job);
    sim_free(&old_open);
    sim_free(&s);
}

/* Replays with explicit set and salvage options. */
static int replay_opts(const char *dir, const struct bblog_replay_opts *o,
                       struct bblog_replay_report *rep, struct bblog_replay_err *err)
{
    struct bblog_replay_list list;
    int rc;

    assert_int_equal(bblog_replay_discover(dir, &list, err), 0);
    rc = bblog_replay_file(&list, o, rep, err);
    bblog_replay_list_free(&list);
    return rc;
}

/* Two crashed runs with the same job id (job ids repeat): listed as two sets, refused together,
 * and either one replays alone when named. */
static void test_two_runs_same_job(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct bblog_replay_list list;
    struct bblog_replay_set *sets;
    size_t nsets;
    struct sim a, b;

    assert_int_equal(sim_open(&a, f->dir, "run1", f->pfs, "job-R", NPROCS, 1), 0);
    assert_int_equal(sim_open(&b, f->dir, "run2", f->pfs, "job-R", NPROCS, 2), 0);
    assert_true(a.set_id != b.set_id);
    for (uint32_t r = 0; r < NPROCS; r++) {
        assert_int_equal(sim_write(&a, r, r * 1000, 1500), 0);
        assert_int_equal(sim_write(&b, r, r * 1000 + 200, 900), 0);
    }
    assert_int_equal(sim_crash(&a), 0);
    assert_int_equal(sim_crash(&b), 0);

    assert_int_equal(bblog_replay_discover(f->dir, &list, &err), 0);
    assert_int_equal(bblog_replay_sets(&list, &sets, &nsets), 0);
    assert_int_equal(nsets, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_true(sets[i].set_id == a.set_id || sets[i].set_id == b.set_id);
        assert_string_equal(sets[i].job_id, "job-R");
        assert_int_equal(sets[i].nlogs, NPROCS);
        assert_true(sets[i].undrained_bytes == NPROCS * (sets[i].set_id == a.set_id ? 1500
                                                                               : 900));
    }
    free(sets);
    bblog_replay_list_free(&list);

    assert_int_equal(replay(f->dir, f->pfs, "job-R", 0, 0, &rep, &err), BBLOG_EMISMATCH);
    assert_non_null(strstr(err.reason, "set"));
    assert_int_equal(access(f->pfs, F_OK), -1);
    bblog_replay_report_free(&rep);
    assert_int_equal(replay_opts(f->dir, &(struct bblog_replay_opts) {
        .pfs_path = f->pfs, .set_id = a.set_id }, &rep, &err), 0);
    assert_true(rep.set_id == a.set_id && rep.nlogs == NPROCS);
    assert_matches_model(&a, f->pfs);
    bblog_replay_report_free(&rep);
    assert_int_equal(unlink(f->pfs), 0);
    assert_int_equal(replay_opts(f->dir, &(struct bblog_replay_opts) {
        .pfs_path = f->pfs, .set_id = b.set_id }, &rep, &err), 0);
    assert_matches_model(&b, f->pfs);
    bblog_replay_report_free(&rep);
    assert_int_equal(replay_opts(f->dir, &(struct bblog_replay_opts) {
        .pfs_path = f->pfs, .set_id = 12345 }, &rep, &err), ENOENT);
    bblog_replay_report_free(&rep);
    sim_free(&a);
    sim_free(&b);
}

/* Damage to a synced record: refused with the loss listed; salvage writes every other byte
 * and leaves the lost range as it was (a hole here). */
static void test_salvage(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct bblog_replay_opts o = { .pfs_path = f->pfs };
    unsigned char *want, *got;
    size_t want_len, got_len;
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, "sv", f->pfs, "job-S", NPROCS, 7), 0);
    for (uint32_t r = 0; r < NPROCS; r++)
        assert_int_equal(sim_write(&s, r, r * 4096, 1000), 0);
    assert_int_equal(sim_sync(&s), 0);
    for (uint32_t r = 0; r < NPROCS; r++)
        assert_int_equal(sim_write(&s, r, r * 4096 + 1000, 1000), 0);
    assert_int_equal(sim_expected(&s, &want, &want_len), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_corrupt(&s, 2, 0, 1), 0);      /* rank 2's synced first payload */

    assert_int_equal(replay_opts(f->dir, &o, &rep, &err), BBLOG_ECORRUPT);
    assert_int_equal(rep.nlosses, 1);
    assert_true(rep.losses[0].rank == 2 && rep.losses[0].d.synced);
    assert_true(rep.losses[0].d.record_known && rep.losses[0].d.rec.off == 2 * 4096);
    assert_int_equal(rep.salvaged, 0);
    assert_int_equal(access(f->pfs, F_OK), -1);
    bblog_replay_report_free(&rep);

    o.salvage = 1;
    assert_int_equal(replay_opts(f->dir, &o, &rep, &err), BBLOG_ECORRUPT);
    assert_int_equal(rep.salvaged, 1);
    assert_int_equal(rep.nlosses, 1);
    assert_int_equal(rep.records, 2 * NPROCS - 1);
    assert_non_null(strstr(err.reason, "were replayed"));
    assert_int_equal(sim_read_file(f->pfs, &got, &got_len), 0);
    assert_int_equal(got_len, want_len);
    for (size_t i = 0; i < got_len; i++) {
        if (i >= 2 * 4096 && i < 2 * 4096 + 1000)
            assert_int_equal(got[i], 0);
        else
            assert_int_equal(got[i], want[i]);
    }
    free(got);
    free(want);
    bblog_replay_report_free(&rep);
    sim_free(&s);
}

/* A log of the set whose header is damaged is told by its name: it is a loss of the set, not
 * a missing rank, and the replay refuses (salvage replays the others). */
static void test_damaged_header_in_set(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct bblog_replay_opts o = { .pfs_path = f->pfs };
    struct sim s;
    int fd;

    assert_int_equal(sim_open(&s, f->dir, "hd", f->pfs, "job-H", NPROCS, 8), 0);
    for (uint32_t r = 0; r < NPROCS; r++)
        assert_int_equal(sim_write(&s, r, r * 100, 100), 0);
    assert_int_equal(sim_sync(&s), 0);
    assert_int_equal(sim_crash(&s), 0);
    fd = open(s.meta_paths[1], O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "XX", 2, 200), 2);       /* inside the header's job id */
    close(fd);

    assert_int_equal(replay_opts(f->dir, &o, &rep, &err), BBLOG_ECORRUPT);
    assert_int_equal(rep.nlosses, 1);
    assert_int_equal(rep.losses[0].rank, 1);
    assert_int_equal(rep.losses[0].header_rc, BBLOG_EBADHDR);
    assert_int_equal(rep.nmissing, 0);
    assert_int_equal(access(f->pfs, F_OK), -1);
    bblog_replay_report_free(&rep);
    o.salvage = 1;
    assert_int_equal(replay_opts(f->dir, &o, &rep, &err), BBLOG_ECORRUPT);
    assert_int_equal(rep.salvaged, 1);
    assert_int_equal(rep.records, NPROCS - 1);
    bblog_replay_report_free(&rep);
    sim_free(&s);
}

/* Same job and file, but the logs disagree on the process set: refused. */
static void test_process_set_mismatch(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct sim a, b;

    /* nprocs differs */
    assert_int_equal(sim_open(&a, f->dir, "n4", f->pfs, "job-N", 4, 1), 0);
    assert_int_equal(sim_open(&b, f->dir, "n8", f->pfs, "job-N", 8, 2), 0);
    assert_int_equal(sim_write(&a, 0, 0, 10), 0);
    assert_int_equal(sim_write(&b, 5, 0, 10), 0);
    assert_int_equal(sim_crash(&a), 0);
    assert_int_equal(sim_crash(&b), 0);
    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), BBLOG_EMISMATCH);
    assert_non_null(strstr(err.reason, "processes"));
    bblog_replay_report_free(&rep);
    for (uint32_t r = 0; r < 8; r++)
        assert_int_equal(sim_remove(&b, r), 0);
    sim_free(&b);

    /* the same ranks twice in one set (job and seed make the set) */
    assert_int_equal(sim_open(&b, f->dir, "dup", f->pfs, "job-N", 4, 1), 0);
    assert_int_equal(sim_write(&b, 0, 5, 10), 0);
    assert_int_equal(sim_crash(&b), 0);
    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), BBLOG_EMISMATCH);
    assert_non_null(strstr(err.reason, "and so does"));
    assert_int_equal(access(f->pfs, F_OK), -1);
    bblog_replay_report_free(&rep);
    sim_free(&a);
    sim_free(&b);
}

/* A rank without a log is allowed and reported; a rank stuck between the epoch bump and the
 * truncation of its drain keeps drained records that must not be re-applied over the newer
 * data another rank wrote to the same bytes. */
static void test_missing_rank_and_stale_epoch(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, "st", f->pfs, "job-S", NPROCS, 5), 0);
    for (uint32_t r = 0; r < NPROCS; r++)
        assert_int_equal(sim_write(&s, r, r * 4096, 4096), 0);
    assert_int_equal(sim_drain(&s, 1), 0);          /* rank 1 keeps its drained record */
    sim_set_gen(&s, 1);
    assert_int_equal(sim_write(&s, 0, 4096, 4096), 0);      /* over rank 1's drained bytes */
    assert_int_equal(sim_write(&s, 3, 100, 50), 0);
    assert_int_equal(sim_write(&s, 2, 9000, 50), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(sim_remove(&s, 2), 0);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nlogs, 2);          /* rank 1 has only drained records */
    assert_int_equal(rep.nempty, 1);
    assert_int_equal(rep.nmissing, 1);
    assert_int_equal(rep.nmissing_ranges, 1);
    assert_int_equal(rep.missing[0].first, 2);
    assert_int_equal(rep.missing[0].last, 2);
    assert_int_equal(rep.records, 2);
    assert_matches_model(&s, f->pfs);
    bblog_replay_report_free(&rep);
    sim_free(&s);
}

/* A log pair written by hand with the format's encoders: a header of epoch HDR_EPOCH and the
 * given records, whose payload bytes are (seed + i). The format allows a writer to keep the
 * records of drained epochs (the truncation after the epoch bump is optional), so a log can
 * mix drained and undrained records; the driver's appender never leaves one. */
struct craft_rec {
    uint64_t off, len, epoch;
    uint32_t gen;
    unsigned char seed;
};

static void craft_log(const char *dir, const char *name, const char *pfs, uint32_t rank,
                      uint32_t nprocs, uint64_t hdr_epoch, const struct craft_rec *recs,
                      size_t n)
{
    struct bblog_log_header h = { .version = BBLOG_FORMAT_VERSION, .rank = rank,
                                  .nprocs = nprocs, .epoch = hdr_epoch };
    unsigned char hbuf[BBLOG_HEADER_SIZE], slot[BBLOG_RECORD_SIZE], payload[4096];
    char path[256];
    uint64_t data_off = 0;
    int fm, fd;

    snprintf(h.job_id, sizeof h.job_id, "job-craft");
    snprintf(h.pfs_path, sizeof h.pfs_path, "%s", pfs);
    h.file_id = bblog_fnv1a64(pfs);
    bblog_header_encode(&h, hbuf);
    snprintf(path, sizeof path, "%s/%s.meta", dir, name);
    fm = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    snprintf(path, sizeof path, "%s/%s.data", dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fm >= 0 && fd >= 0);
    assert_int_equal(write(fm, hbuf, sizeof hbuf), sizeof hbuf);
    for (size_t i = 0; i < n; i++) {
        struct bblog_log_record r = {
            .seq = i + 1, .off = recs[i].off, .len = recs[i].len, .data_off = data_off,
            .epoch = recs[i].epoch, .gen = recs[i].gen,
        };

        assert_true(recs[i].len <= sizeof payload);
        for (uint64_t b = 0; b < recs[i].len; b++)
            payload[b] = (unsigned char) (recs[i].seed + b);
        assert_int_equal(write(fd, payload, recs[i].len), recs[i].len);
        bblog_record_encode(&r, bblog_crc32c(0, payload, recs[i].len), slot);
        assert_int_equal(write(fm, slot, sizeof slot), sizeof slot);
        data_off += recs[i].len;
    }
    close(fm);
    close(fd);
}

/* Records of drained epochs are skipped even where they would win or extend the file; the
 * others apply in (gen, rank, seq) order. */
static void test_mixed_epochs(void **state)
{
    struct fixture *f = *state;
    const struct craft_rec r0[] = {
        { .off = 0, .len = 100, .epoch = 2, .gen = 5, .seed = 10 },         /* drained */
        { .off = 50, .len = 30, .epoch = 3, .gen = 6, .seed = 20 },         /* 1st */
        { .off = 60, .len = 10, .epoch = 3, .gen = 7, .seed = 30 },         /* 3rd */
    };
    const struct craft_rec r1[] = {
        { .off = 200, .len = 100, .epoch = 2, .gen = 4, .seed = 40 },       /* drained */
        { .off = 65, .len = 40, .epoch = 3, .gen = 6, .seed = 50 },         /* 2nd */
    };
    const struct craft_rec *order[] = { &r0[1], &r1[1], &r0[2] };
    const struct craft_rec r2[] = {
        { .off = 0, .len = 300, .epoch = 3, .gen = 9, .seed = 70 },         /* all drained */
    };
    unsigned char want[105] = { 0 };
    struct bblog_replay_report rep;
    struct bblog_replay_err err;

    craft_log(f->dir, "c0", f->pfs, 0, 3, 3, r0, 3);
    craft_log(f->dir, "c1", f->pfs, 1, 3, 3, r1, 2);
    craft_log(f->dir, "c2", f->pfs, 2, 3, 4, r2, 1);
    for (size_t i = 0; i < 3; i++)
        for (uint64_t b = 0; b < order[i]->len; b++)
            want[order[i]->off + b] = (unsigned char) (order[i]->seed + b);
    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.records, 3);
    assert_int_equal(rep.stale_records, 2);
    assert_int_equal(rep.nlogs, 2);
    assert_int_equal(rep.nempty, 1);
    assert_int_equal(rep.file_end, sizeof want);
    assert_file_is(f->pfs, want, sizeof want);
    bblog_replay_report_free(&rep);
}

/* Only the named file's logs are replayed; the others' files are not touched. */
static void test_file_filter(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_list list;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    char other[160];
    const char **paths;
    size_t npaths;
    struct sim a, b;

    snprintf(other, sizeof other, "%s/other.out", f->dir);
    assert_int_equal(sim_open(&a, f->dir, "fa", f->pfs, "job-F", NPROCS, 3), 0);
    assert_int_equal(sim_open(&b, f->dir, "fb", other, "job-F", 2, 4), 0);
    for (uint32_t r = 0; r < NPROCS; r++)
        assert_int_equal(sim_write(&a, r, r * 10, 25), 0);
    assert_int_equal(sim_write(&b, 1, 0, 99), 0);
    assert_int_equal(sim_crash(&a), 0);
    assert_int_equal(sim_crash(&b), 0);

    assert_int_equal(bblog_replay_discover(f->dir, &list, &err), 0);
    assert_int_equal(list.n, NPROCS + 2);
    assert_int_equal(bblog_replay_paths(&list, &paths, &npaths), 0);
    assert_int_equal(npaths, 2);
    assert_true((strcmp(paths[0], f->pfs) == 0 && strcmp(paths[1], other) == 0) ||
                (strcmp(paths[1], f->pfs) == 0 && strcmp(paths[0], other) == 0));
    free(paths);
    bblog_replay_list_free(&list);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nlogs, NPROCS);
    assert_matches_model(&a, f->pfs);
    assert_int_equal(access(other, F_OK), -1);
    bblog_replay_report_free(&rep);

    assert_int_equal(replay(f->dir, other, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nlogs, 1);          /* rank 0 wrote nothing: an empty log */
    assert_int_equal(rep.nempty, 1);
    assert_int_equal(rep.nmissing, 0);
    assert_int_equal(rep.nprocs, 2);
    assert_matches_model(&b, other);
    bblog_replay_report_free(&rep);
    sim_free(&a);
    sim_free(&b);
}

/* An empty .meta file named as the driver names DIR's logs of PFS for JOB (as in a name: '/'
 * and ' ' as '_'; a process's log, or with node a node's pair): what a process killed while
 * creating it leaves. */
static void make_unborn(const char *dir, const char *job, const char *pfs, int node, char *path,
                        size_t size)
{
    int fd;

    snprintf(path, size, "%s/%s.%016llx.4242.0.%c%d.meta", dir, job,
             (unsigned long long) bblog_fnv1a64(pfs), node ? 'n' : 'r', node ? 1 : 0);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    close(fd);
}

/* Only empty logs of a file (the job was killed while opening it): nothing to replay, and the
 * file untouched; the name decides which file and job they are of, and no set. */
static void test_unborn_only(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_list list;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct bblog_replay_opts o = { .pfs_path = f->pfs, .set_id = 7 };
    char p1[320], p2[320], p3[320], other[160], third[160];

    snprintf(other, sizeof other, "%s.other", f->pfs);
    snprintf(third, sizeof third, "%s.third", f->pfs);
    make_unborn(f->dir, "job_U_1", f->pfs, 0, p1, sizeof p1);
    make_unborn(f->dir, "job_U_1", f->pfs, 1, p2, sizeof p2);
    make_unborn(f->dir, "job_U_1", other, 0, p3, sizeof p3);

    assert_int_equal(bblog_replay_discover(f->dir, &list, &err), 0);
    assert_int_equal(list.n, 3);
    for (size_t i = 0; i < list.n; i++)
        assert_int_equal(list.logs[i].open_rc, BBLOG_EUNBORN);
    bblog_replay_list_free(&list);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nempty, 2);
    assert_int_equal(rep.nlogs, 0);
    assert_int_equal(rep.records, 0);
    assert_int_equal(rep.nlosses, 0);
    assert_int_equal(access(f->pfs, F_OK), -1);
    bblog_replay_report_free(&rep);
    assert_int_equal(replay(f->dir, f->pfs, "job/U 1", 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nempty, 2);
    bblog_replay_report_free(&rep);
    assert_int_equal(replay(f->dir, other, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nempty, 1);
    bblog_replay_report_free(&rep);

    /* another job, another file, or a set id: no log of it */
    assert_int_equal(replay(f->dir, f->pfs, "job/U 2", 0, 0, &rep, &err), ENOENT);
    assert_non_null(strstr(err.reason, "job 'job/U 2'"));
    bblog_replay_report_free(&rep);
    assert_int_equal(replay(f->dir, third, NULL, 0, 0, &rep, &err), ENOENT);
    bblog_replay_report_free(&rep);
    assert_int_equal(replay_opts(f->dir, &o, &rep, &err), ENOENT);
    bblog_replay_report_free(&rep);
}

/* A rank killed while creating its log, the others' logs written: the empty one is no damage
 * of the set (replayed without --salvage), its rank has no log. */
static void test_unborn_in_set(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct sim s;
    char tag[96];

    snprintf(tag, sizeof tag, "job-M.%016llx.77.0", (unsigned long long) bblog_fnv1a64(f->pfs));
    assert_int_equal(sim_open(&s, f->dir, tag, f->pfs, "job-M", NPROCS, 9), 0);
    for (uint32_t r = 0; r < NPROCS; r++)
        if (r != 1)
            assert_int_equal(sim_write(&s, r, r * 100, 100), 0);
    assert_int_equal(sim_sync(&s), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(truncate(s.meta_paths[1], 0), 0);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.nlosses, 0);
    assert_int_equal(rep.nmissing, 1);
    assert_int_equal(rep.missing[0].first, 1);
    assert_int_equal(rep.records, NPROCS - 1);
    assert_matches_model(&s, f->pfs);
    bblog_replay_report_free(&rep);
    sim_free(&s);
}

/* Logs in DIR and in DIR/bblog-UID are both found; a .meta file that is no log is listed as
 * such and sorted last; a symbolic link is not followed. */
static void test_discovery(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_list list;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    char udir[256], junk[320], link[320];
    struct sim a, b;
    int fd;

    assert_int_equal(bblog_log_userdir(f->dir, udir, sizeof udir), 0);
    assert_int_equal(sim_open(&a, f->dir, "top", f->pfs, "job-D", NPROCS, 1), 0);
    assert_int_equal(sim_open(&b, udir, "sub", f->pfs, "job-E", NPROCS, 2), 0);
    assert_int_equal(sim_write(&b, 0, 0, 10), 0);
    assert_int_equal(sim_crash(&a), 0);
    assert_int_equal(sim_crash(&b), 0);
    snprintf(junk, sizeof junk, "%s/notes.meta", f->dir);
    fd = open(junk, O_WRONLY | O_CREAT | O_EXCL, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "hello, not a log\n", 17), 17);
    close(fd);
    snprintf(link, sizeof link, "%s/link.meta", f->dir);
    assert_int_equal(symlink(b.meta_paths[1], link), 0);

    assert_int_equal(bblog_replay_discover(f->dir, &list, &err), 0);
    assert_int_equal(list.n, 2 * NPROCS + 1);
    for (size_t i = 0; i < 2 * NPROCS; i++) {
        assert_int_equal(list.logs[i].open_rc, 0);
        assert_string_equal(list.logs[i].job_id, i < NPROCS ? "job-D" : "job-E");
        assert_int_equal(list.logs[i].rank, i % NPROCS);
        assert_string_equal(list.logs[i].meta_path, i < NPROCS ? a.meta_paths[i]
                                                               : b.meta_paths[i - NPROCS]);
    }
    assert_int_equal(list.logs[2 * NPROCS].open_rc, BBLOG_EBADMAGIC);
    assert_string_equal(list.logs[2 * NPROCS].meta_path, junk);
    bblog_replay_list_free(&list);

    assert_int_equal(replay(f->dir, f->pfs, "job-E", 0, 0, &rep, &err), 0);
    assert_matches_model(&b, f->pfs);
    bblog_replay_report_free(&rep);

    assert_int_equal(bblog_replay_discover("/nonexistent/bblog", &list, &err), ENOENT);
    assert_string_equal(err.path, "/nonexistent/bblog");
    sim_free(&a);
    sim_free(&b);
}

/* A dry run verifies and plans but creates nothing; a sequential writer's records merge into
 * one extent and one pwrite; interleaved ranks' extents are gathered into one pwrite too. */
static void test_dry_run_and_coalescing(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, "seq", f->pfs, "job-Q", NPROCS, 11), 0);
    for (uint64_t i = 0; i < 64; i++)
        assert_int_equal(sim_write(&s, 0, i * 512, 512), 0);
    for (uint64_t i = 0; i < 64; i++)
        assert_int_equal(sim_write(&s, (uint32_t) (i % NPROCS), 1 << 20 | i * 1024, 1024), 0);
    assert_int_equal(sim_crash(&s), 0);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 1, &rep, &err), 0);
    assert_int_equal(rep.records, 128);
    assert_int_equal(rep.bytes_written, 64 * 512 + 64 * 1024);
    assert_int_equal(rep.pwrites, 0);
    assert_int_equal(access(f->pfs, F_OK), -1);
    bblog_replay_report_free(&rep);

    assert_int_equal(replay(f->dir, f->pfs, NULL, 0, 0, &rep, &err), 0);
    assert_int_equal(rep.pwrites, 2);        /* one per file-contiguous run */
    assert_int_equal(rep.extents, 1 + 64);   /* the sequential run coalesces, ranks don't */
    assert_int_equal(rep.created, 1);
    assert_matches_model(&s, f->pfs);
    bblog_replay_report_free(&rep);
    sim_free(&s);
}

/* The target can't be opened: the error names it. */
static void test_target_error(void **state)
{
    struct fixture *f = *state;
    struct bblog_replay_list list;
    struct bblog_replay_opts o = { .pfs_path = f->pfs, .target = f->dir };
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    struct sim s;

    assert_int_equal(sim_open(&s, f->dir, "tg", f->pfs, "job-T", 1, 1), 0);
    assert_int_equal(sim_write(&s, 0, 0, 100), 0);
    assert_int_equal(sim_crash(&s), 0);
    assert_int_equal(bblog_replay_discover(f->dir, &list, &err), 0);
    assert_int_equal(bblog_replay_file(&list, &o, &rep, &err), EISDIR);
    assert_string_equal(err.path, f->dir);
    bblog_replay_report_free(&rep);
    bblog_replay_list_free(&list);
    sim_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_four_ranks_overlap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_records_control, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_against_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_node_pair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_in_parts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parts_drained_elsewhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parts_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parts_salvage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_part_file_damage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_part_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_record_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_payload_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_node_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_node_payload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_jobs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drained_logs_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_set_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_runs_same_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_salvage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged_header_in_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_rank_and_stale_epoch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed_epochs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unborn_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unborn_in_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run_and_coalescing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_error, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
