/*
 * mklogs: leaves behind the logs of a simulated crashed job, for test_tool.sh and
 * scripts/demo-core.sh, and writes the file a correct replay must produce.
 *
 * The job (NPROCS ranks, fixed seed): generation 0 is an N-1 strided pattern with every rank's
 * blocks overlapping its neighbours'; generation 1 is random overlapping writes; then a
 * collective drain writes the PFS file and marks the logs drained; generations 2 and 3 are
 * random writes again (three per rank), optionally with a sync after generation 2, and the job
 * crashes before draining them: what was logged since the last sync (or drain) is unsynced.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bblog_log.h"
#include "simlog.h"

#define NONE UINT32_MAX

static const char usage_text[] =
    "usage: mklogs [OPTION]... DIR PFS_PATH EXPECTED\n"
    "Writes the logs of a simulated crashed job into DIR, the drained part of its file to\n"
    "PFS_PATH, and what PFS_PATH must hold after a correct replay to EXPECTED.\n"
    "  --nprocs N      ranks (4)\n"
    "  --job ID        job id (mklogs-job)\n"
    "  --tag TAG       log base names TAG.rRANK (mklogs)\n"
    "  --seed S        payload and pattern seed (1)\n"
    "  --userdir       put the logs in DIR/bblog-UID, as the driver does\n"
    "  --torn RANK     cut RANK's last record in half after the crash\n"
    "  --corrupt RANK  flip a bit in RANK's second undrained record after the crash\n"
    "  --missing RANK  remove RANK's log after the crash\n"
    "  --stuck RANK    RANK crashes inside the drain, after its epoch bump\n"
    "  --no-drain      skip the drain: everything stays undrained\n"
    "  --node          the logs in the slots of one node log pair TAG.n0 (bblog_mapping=node)\n"
    "  --sync          sync after generation 2: its records are acknowledged, those of\n"
    "                  generation 3 are not\n"
    "Prints one line 'log META_PATH' per log left behind.\n";

static int parse_rank(const char *s, uint32_t *out)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v >= UINT32_MAX)
        return -1;
    *out = (uint32_t) v;
    return 0;
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005u + 1442695040888963407u;
    return *x >> 17;
}

/* Random overlapping writes of one generation; rank `skip` writes nothing. */
static int random_gen(struct sim *s, uint32_t gen, uint64_t *x, uint32_t skip)
{
    int rc = 0;

    sim_set_gen(s, gen);
    for (uint32_t r = 0; r < s->nprocs && rc == 0; r++) {
        if (r == skip)
            continue;
        for (int i = 0; i < 3 && rc == 0; i++)
            rc = sim_write(s, r, lcg(x) % (256 << 10), 1 + lcg(x) % (16 << 10));
    }
    return rc;
}

static int run(struct sim *s, uint64_t seed, uint32_t stuck, int drain, int sync)
{
    const uint64_t bs = 4096;
    uint64_t x = seed;
    int rc = 0;

    sim_set_gen(s, 0);
    for (uint64_t i = 0; i < 4 && rc == 0; i++)
        for (uint32_t r = 0; r < s->nprocs && rc == 0; r++)
            rc = sim_write(s, r, (i * s->nprocs + r) * bs, bs + bs / 4);
    if (rc == 0)
        rc = random_gen(s, 1, &x, NONE);
    if (rc == 0 && drain)
        rc = sim_drain(s, stuck);
    for (uint32_t gen = 2; gen < 4 && rc == 0; gen++) {
        rc = random_gen(s, gen, &x, stuck);
        if (rc == 0 && gen == 2 && sync)
            rc = sim_sync(s);
    }
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "nprocs", required_argument, NULL, 'n' },
        { "job", required_argument, NULL, 'j' },
        { "tag", required_argument, NULL, 't' },
        { "seed", required_argument, NULL, 's' },
        { "userdir", no_argument, NULL, 'u' },
        { "torn", required_argument, NULL, 'T' },
        { "corrupt", required_argument, NULL, 'C' },
        { "missing", required_argument, NULL, 'M' },
        { "stuck", required_argument, NULL, 'S' },
        { "no-drain", no_argument, NULL, 'D' },
        { "node", no_argument, NULL, 'N' },
        { "sync", no_argument, NULL, 'Y' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t nprocs = 4, torn = NONE, corrupt = NONE, missing = NONE, stuck = NONE;
    const char *job = "mklogs-job", *tag = "mklogs", *dir;
    uint64_t seed = 1;
    int c, userdir = 0, drain = 1, sync = 0, node = 0, rc;
    char udir[4096];
    struct sim s;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int bad = 0;

        switch (c) {
        case 'n':
            bad = parse_rank(optarg, &nprocs) != 0 || nprocs == 0;
            break;
        case 'j':
            job = optarg;
            break;
        case 't':
            tag = optarg;
            break;
        case 's':
            seed = strtoull(optarg, NULL, 10);
            break;
        case 'u':
            userdir = 1;
            break;
        case 'T':
            bad = parse_rank(optarg, &torn) != 0;
            break;
        case 'C':
            bad = parse_rank(optarg, &corrupt) != 0;
            break;
        case 'M':
            bad = parse_rank(optarg, &missing) != 0;
            break;
        case 'S':
            bad = parse_rank(optarg, &stuck) != 0;
            break;
        case 'N':
            node = 1;
            break;
        case 'D':
            drain = 0;
            break;
        case 'Y':
            sync = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            bad = 1;
        }
        if (bad) {
            fputs(usage_text, stderr);
            return 1;
        }
    }
    if (optind + 3 != argc) {
        fputs(usage_text, stderr);
        return 1;
    }
    dir = argv[optind];
    if (userdir) {
        rc = bblog_log_userdir(dir, udir, sizeof udir);
        if (rc != 0) {
            fprintf(stderr, "mklogs: %s: can't make the per-user directory: %s\n", dir,
                    bblog_strerror(rc));
            return 1;
        }
        dir = udir;
    }
    rc = (node ? sim_open_node : sim_open)(&s, dir, tag, argv[optind + 1], job, nprocs, seed);
    if (rc == 0)
        rc = run(&s, seed, stuck, drain, sync);
    if (rc == 0)
        rc = sim_crash(&s);
    if (rc == 0 && torn < nprocs)
        rc = sim_tear(&s, torn);
    if (rc == 0 && corrupt < nprocs)
        rc = sim_corrupt(&s, corrupt, 1, 0);
    if (rc == 0 && missing < nprocs)
        rc = sim_remove(&s, missing);
    if (rc == 0)
        rc = sim_write_expected(&s, argv[optind + 2]);
    if (rc != 0) {
        fprintf(stderr, "mklogs: simulating the job in %s failed: %s\n", dir,
                bblog_strerror(rc));
        sim_free(&s);
        return 1;
    }
    for (uint32_t r = 0; r < nprocs; r++)
        if (r != missing)
            printf("log %s\n", s.meta_paths[r]);
    sim_free(&s);
    return 0;
}
