/*
 * mkseeds: generates the seed corpus of the fuzz targets from simulated jobs (the simlog
 * helpers of the unit tests write real logs with bblog_log_create): clean logs, drained and
 * undrained epochs, a rank stuck in its drain, torn tails, corrupt records and payloads,
 * missing ranks, two jobs' logs of one file, and damage to records a sync acknowledged (a
 * flipped bit in a slot or a payload, a meta log cut before its sync mark), and a log of format
 * 3 with a PFS record and a trim point inside a record. Each case is written twice, with and without
 * the checksum fix-up flags (fuzzlog.h). Payloads are kept small so that the seeds are.
 *
 *   mkseeds WORKDIR OUTDIR     writes OUTDIR/scan/NAME and OUTDIR/replay/NAME
 * The logs name WORKDIR/pfs.dat as their file; the fuzz targets never write there.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bblog_log.h"
#include "fuzzlog.h"
#include "simlog.h"

#define NONE UINT32_MAX

struct scenario {
    const char *name;
    uint32_t nprocs;
    int drain;                  /* a collective drain after generation 1 */
    uint32_t stuck;             /* rank that crashes inside the drain */
    uint32_t torn;              /* rank whose last record is cut in half */
    uint32_t corrupt;           /* rank whose second undrained record gets a flipped bit */
    int corrupt_payload;        /* ... in its payload rather than in its slot */
    uint32_t missing;           /* rank whose log is removed */
    int sync;                   /* a sync after generation 1: what came before is acknowledged */
    uint32_t cut;               /* rank whose meta log is cut after its first record */
    uint32_t trim;              /* rank that writes a PFS record and trims half its log */
};

static const struct scenario scenarios[] = {
    { "clean1", 1, 0, NONE, NONE, NONE, 0, NONE, 0, NONE, NONE },
    { "clean3", 3, 0, NONE, NONE, NONE, 0, NONE, 0, NONE, NONE },
    { "drained4", 4, 1, NONE, NONE, NONE, 0, NONE, 0, NONE, NONE },
    { "stuck3", 3, 1, 1, NONE, NONE, 0, NONE, 0, NONE, NONE },
    { "torn2", 2, 1, NONE, 1, NONE, 0, NONE, 0, NONE, NONE },
    { "corrupt_slot2", 2, 0, NONE, NONE, 0, 0, NONE, 0, NONE, NONE },
    { "corrupt_payload2", 2, 0, NONE, NONE, 1, 1, NONE, 0, NONE, NONE },
    { "missing4", 4, 1, NONE, NONE, NONE, 0, 2, 0, NONE, NONE },
    { "synced_slot3", 3, 0, NONE, NONE, 1, 0, NONE, 1, NONE, NONE },
    { "synced_payload2", 2, 0, NONE, NONE, 0, 1, NONE, 1, NONE, NONE },
    { "synced_cut2", 2, 0, NONE, NONE, NONE, 0, NONE, 1, 1, NONE },
    { "synced_torn2", 2, 0, NONE, 0, NONE, 0, NONE, 1, NONE, NONE },
    { "trim_pfs3", 3, 0, NONE, NONE, NONE, 0, NONE, 0, NONE, 1 },
};

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005u + 1442695040888963407u;
    return *x >> 17;
}

/* Three generations of small overlapping writes, two per rank each, with an optional drain
 * after the second; the job then crashes. */
static int run(struct sim *s, const struct scenario *sc, uint64_t seed)
{
    uint64_t x = seed;
    int rc = 0;

    for (uint32_t gen = 0; gen < 3 && rc == 0; gen++) {
        sim_set_gen(s, gen);
        for (uint32_t r = 0; r < s->nprocs && rc == 0; r++) {
            if (gen == 2 && r == sc->stuck)
                continue;
            for (int i = 0; i < 2 && rc == 0; i++)
                rc = sim_write(s, r, lcg(&x) % 2048, 1 + lcg(&x) % 300);
        }
        if (rc == 0 && gen == 1 && sc->drain)
            rc = sim_drain(s, sc->stuck);
        if (rc == 0 && gen == 1 && sc->sync)
            rc = sim_sync(s);
        if (rc == 0 && gen == 1 && sc->trim != NONE) {
            struct bblog_log_stats st;
            rc = bblog_log_pfs(s->logs[sc->trim], lcg(&x) % 2048, 1 + lcg(&x) % 300);
            bblog_log_get_stats(s->logs[sc->trim], &st);
            if (rc == 0)
                rc = bblog_log_trim(s->logs[sc->trim], st.data_size / 2 + 5);
        }
    }
    if (rc == 0)
        rc = sim_crash(s);
    if (rc == 0 && sc->torn != NONE)
        rc = sim_tear(s, sc->torn);
    if (rc == 0 && sc->corrupt != NONE)
        rc = sim_corrupt(s, sc->corrupt, 1, sc->corrupt_payload);
    if (rc == 0 && sc->missing != NONE)
        rc = sim_remove(s, sc->missing);
    if (rc == 0 && sc->cut != NONE &&
        truncate(s->meta_paths[sc->cut], BBLOG_HEADER_SIZE + BBLOG_RECORD_SIZE) != 0)
        rc = errno;
    return rc;
}

/* Appends the log pair of META_PATH to an input. */
static int pack_log(uint8_t **buf, size_t *len, const char *meta_path)
{
    unsigned char *meta = NULL, *data = NULL;
    size_t mlen = 0, dlen = 0, n = strlen(meta_path);
    char *data_path = strdup(meta_path);
    int rc;

    if (data_path == NULL)
        return ENOMEM;
    memcpy(data_path + n - 5, ".data", 5);
    rc = sim_read_file(meta_path, &meta, &mlen);
    if (rc == 0)
        rc = sim_read_file(data_path, &data, &dlen);
    if (rc == 0 && fuzz_pack(buf, len, meta, mlen, data, dlen) != 0)
        rc = ENOMEM;
    free(meta);
    free(data);
    free(data_path);
    return rc;
}

static int write_input(const char *outdir, const char *target, const char *name, unsigned flags,
                       const uint8_t *buf, size_t len)
{
    char path[4200];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s/%s_%s", outdir, target, name,
             flags ? "fix" : "raw");
    f = fopen(path, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

/* Writes both flag variants of an input whose logs are META_PATHS[0..n). */
static int emit(const char *outdir, const char *target, const char *name, char **meta_paths,
                size_t n)
{
    for (unsigned flags = 0; flags <= (FUZZ_FIX_HEADER | FUZZ_FIX_RECORDS); flags += 3) {
        uint8_t *buf = malloc(2);
        size_t len = 2;
        int rc = 0;

        if (buf == NULL)
            return -1;
        buf[0] = (uint8_t) flags;
        buf[1] = (uint8_t) (n - 1);
        for (size_t i = 0; i < n && rc == 0; i++)
            if (meta_paths[i] != NULL)
                rc = pack_log(&buf, &len, meta_paths[i]);
        if (rc == 0)
            rc = write_input(outdir, target, name, flags, buf, len);
        free(buf);
        if (rc != 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char pfs[4200], sub[4200], jobdir[4200];
    uint64_t seed = 1;

    if (argc != 3) {
        fprintf(stderr, "usage: mkseeds WORKDIR OUTDIR\n");
        return 1;
    }
    snprintf(pfs, sizeof pfs, "%s/pfs.dat", argv[1]);
    for (int i = 0; i < 2; i++) {
        snprintf(sub, sizeof sub, "%s/%s", argv[2], i ? "replay" : "scan");
        if (mkdir(sub, 0755) != 0 && errno != EEXIST) {
            perror(sub);
            return 1;
        }
    }
    for (size_t k = 0; k < sizeof scenarios / sizeof *scenarios; k++, seed++) {
        const struct scenario *sc = &scenarios[k];
        char *present[4];
        size_t np = 0;
        struct sim s;
        int rc;

        snprintf(jobdir, sizeof jobdir, "%s/%s", argv[1], sc->name);
        if (mkdir(jobdir, 0700) != 0) {
            perror(jobdir);
            return 1;
        }
        unlink(pfs);
        rc = sim_open(&s, jobdir, "seed", pfs, sc->name, sc->nprocs, seed);
        if (rc == 0)
            rc = run(&s, sc, seed);
        if (rc != 0) {
            fprintf(stderr, "mkseeds: %s: simulating the job failed: %s\n", sc->name,
                    bblog_strerror(rc));
            sim_free(&s);
            return 1;
        }
        for (uint32_t r = 0; r < sc->nprocs; r++)
            if (r != sc->missing)
                present[np++] = s.meta_paths[r];
        /* The scanner target: the log of the rank the scenario is about, else rank 0's. */
        {
            uint32_t r = sc->torn != NONE ? sc->torn : sc->corrupt != NONE ? sc->corrupt
                         : sc->stuck != NONE ? sc->stuck : sc->trim != NONE ? sc->trim : 0;

            if (emit(argv[2], "scan", sc->name, &s.meta_paths[r], 1) != 0 ||
                emit(argv[2], "replay", sc->name, present, np) != 0) {
                sim_free(&s);
                return 1;
            }
        }
        sim_free(&s);
    }
    /* Two runs of one file: replay must refuse them unless a job is named. */
    {
        struct sim a, b;
        char *both[4];
        int rc;

        snprintf(jobdir, sizeof jobdir, "%s/twojobs", argv[1]);
        if (mkdir(jobdir, 0700) != 0) {
            perror(jobdir);
            return 1;
        }
        rc = sim_open(&a, jobdir, "a", pfs, "job-a", 2, 101);
        if (rc == 0)
            rc = sim_open(&b, jobdir, "b", pfs, "job-b", 2, 102);
        for (uint32_t r = 0; r < 2 && rc == 0; r++) {
            rc = sim_write(&a, r, 100 * r, 50);
            if (rc == 0)
                rc = sim_write(&b, r, 100 * r + 25, 50);
        }
        if (rc == 0)
            rc = sim_crash(&a);
        if (rc == 0)
            rc = sim_crash(&b);
        if (rc != 0) {
            fprintf(stderr, "mkseeds: twojobs: simulating the jobs failed: %s\n",
                    bblog_strerror(rc));
            return 1;
        }
        both[0] = a.meta_paths[0];
        both[1] = a.meta_paths[1];
        both[2] = b.meta_paths[0];
        both[3] = b.meta_paths[1];
        if (emit(argv[2], "replay", "twojobs", both, 4) != 0)
            return 1;
        sim_free(&a);
        sim_free(&b);
    }
    return 0;
}
