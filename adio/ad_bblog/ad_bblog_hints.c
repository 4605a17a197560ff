/*
 * bblog_* hints (man/bblog.7). Each comes from MPI_Info, else from the environment variable
 * BBLOG_<NAME> (the job-wide default), else from the built-in default. A value that does not
 * parse is an error naming the key (or variable) and the value, never a silent default. The
 * tests' BBLOG_DEBUG_* variables are read at the same moment and refused the same way.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ad_bblog.h"
#include "adioi.h"

#define DEFAULT_FLUSH_BUFFER_SIZE (16 * 1024 * 1024)
#define MIN_FLUSH_BUFFER_SIZE     4096
#define DEFAULT_INDEP_THRESHOLD   (1024 * 1024)
#define DEFAULT_HIGH_WATER        50      /* percent of the log's capacity (ad_bblog_cap.c) */
/* Drain rounds describe their extents with int lengths: keep a round well inside that. */
#define MAX_FLUSH_BUFFER_SIZE     (1024 * 1024 * 1024)

enum hint_kind { H_PATH, H_SIZE, H_ENUM, H_BOOL, H_SECONDS, H_PERCENT };

struct hint_def {
    const char *key;            /* MPI_Info key */
    const char *env;            /* environment default */
    enum hint_kind kind;
    const char *values;         /* H_ENUM: accepted values, '|'-separated */
};

static const struct hint_def hint_defs[] = {
    /* First: the mode sets drain, sync and close, which the hints after it may change. */
    {"bblog_mode", "BBLOG_MODE", H_ENUM, "pfs|bb"},
    {"bblog_dir", "BBLOG_DIR", H_PATH, NULL},
    {"bblog_mapping", "BBLOG_MAPPING", H_ENUM, "process"},
    {"bblog_drain", "BBLOG_DRAIN", H_ENUM, "on_demand|reactive|proactive"},
    {"bblog_sync", "BBLOG_SYNC", H_ENUM, "pfs|bb"},
    {"bblog_close", "BBLOG_CLOSE", H_ENUM, "pfs|bb"},
    {"bblog_segment_size", "BBLOG_SEGMENT_SIZE", H_SIZE, NULL},
    {"bblog_drain_interval", "BBLOG_DRAIN_INTERVAL", H_SECONDS, NULL},
    {"bblog_drain_max_rate", "BBLOG_DRAIN_MAX_RATE", H_SIZE, NULL},
    {"bblog_flush_buffer_size", "BBLOG_FLUSH_BUFFER_SIZE", H_SIZE, NULL},
    {"bblog_max_size", "BBLOG_MAX_SIZE", H_SIZE, NULL},
    {"bblog_high_water", "BBLOG_HIGH_WATER", H_PERCENT, NULL},
    {"bblog_indep_threshold", "BBLOG_INDEP_THRESHOLD", H_SIZE, NULL},
    {"bblog_node_exchange", "BBLOG_NODE_EXCHANGE", H_ENUM, "bb|mpi"},
    {"bblog_shared_bb", "BBLOG_SHARED_BB", H_BOOL, NULL},
    {"bblog_consistency", "BBLOG_CONSISTENCY", H_ENUM, "posix|mpi"},
    {"bblog_keep_logs", "BBLOG_KEEP_LOGS", H_BOOL, NULL},
    {"bblog_verify", "BBLOG_VERIFY", H_BOOL, NULL},
    {"bblog_stats", "BBLOG_STATS", H_PATH, NULL},
};
#define NHINTS (sizeof(hint_defs) / sizeof(hint_defs[0]))

/* Environment variables of the tests (bblog(7), ENVIRONMENT): whole numbers from 0 (off) to
 * max, read at open with the hints, so that a drain never reads the environment. */
struct knob_def {
    const char *env;
    int max;
    size_t off;                 /* of the int in struct ADIOI_BBLOG_hints */
};

static const struct knob_def knob_defs[] = {
    {"BBLOG_DEBUG_NODE_SIZE", INT_MAX, offsetof(struct ADIOI_BBLOG_hints, debug_node_size)},
    {"BBLOG_DEBUG_STATIC_CHUNKS", 1, offsetof(struct ADIOI_BBLOG_hints, debug_static_chunks)},
    {"BBLOG_DEBUG_NO_MAP", 1, offsetof(struct ADIOI_BBLOG_hints, debug_no_map)},
};
#define NKNOBS (sizeof(knob_defs) / sizeof(knob_defs[0]))

/* Characters of a value shown in an error message: MPICH keeps 256 of a message's line, and
 * the name and the reason must survive a long value. */
#define SHOWN_VALUE 64

/* Parses "123", "64k", "16M", "1g" (powers of 1024). Returns 0 on success. */
static int parse_size(const char *s, ADIO_Offset * out)
{
    char *end;
    unsigned long long v, mul = 1;

    while (isspace((unsigned char) *s))
        s++;
    if (!isdigit((unsigned char) *s))
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    switch (tolower((unsigned char) *end)) {
    case 'k':
        mul = 1ULL << 10;
        end++;
        break;
    case 'm':
        mul = 1ULL << 20;
        end++;
        break;
    case 'g':
        mul = 1ULL << 30;
        end++;
        break;
    case 't':
        mul = 1ULL << 40;
        end++;
        break;
    }
    if (*end != '\0' || v > (unsigned long long) INT64_MAX / mul)
        return -1;
    *out = (ADIO_Offset) (v * mul);
    return 0;
}

static int enum_ok(const char *values, const char *v)
{
    size_t n = strlen(v);
    const char *p = values;

    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t) (bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return 1;
        p += len + (bar != NULL);
    }
    return 0;
}

/* The error of a bad value: MPI_ERR_INFO_VALUE, naming the hint or variable first. */
static int bad_setting(int from_env, const char *name, const char *v, const char *why)
{
    static const char myname[] = "ADIOI_BBLOG_PARSE_HINTS";

    return ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_INFO_VALUE,
                           "bblog: invalid %s %s='%.*s%s': %s",
                           from_env ? "environment variable" : "hint", name, SHOWN_VALUE, v,
                           strlen(v) > SHOWN_VALUE ? "..." : "", why);
}

static int bad_value(const struct hint_def *d, int from_env, const char *v, const char *why)
{
    return bad_setting(from_env, from_env ? d->env : d->key, v, why);
}

/* Reads one BBLOG_DEBUG_* variable into h (unset: 0). */
static int read_knob(const struct knob_def *k, struct ADIOI_BBLOG_hints *h)
{
    const char *v = getenv(k->env);
    char *end, why[64];
    long n;

    if (!v)
        return MPI_SUCCESS;
    errno = 0;
    n = strtol(v, &end, 10);
    if (!isdigit((unsigned char) v[0]) || *end != '\0' || errno || n > k->max) {
        if (k->max == 1)
            snprintf(why, sizeof(why), "expected 0 or 1");
        else
            snprintf(why, sizeof(why), "expected a whole number from 0 to %d", k->max);
        return bad_setting(1, k->env, v, why);
    }
    *(int *) ((char *) h + k->off) = (int) n;
    return MPI_SUCCESS;
}

/* H_ENUM: the value is one of d->values; bblog_mode sets the three hints it stands for. */
static int apply_enum(const struct hint_def *d, int from_env, const char *v,
                      struct ADIOI_BBLOG_hints *h)
{
    /* get_info reports bblog_mode=mixed when the three hints it sets were set otherwise;
     * handed back to set_info or to an open, it sets nothing (the three keys do). */
    if (strcmp(d->key, "bblog_mode") == 0 && strcmp(v, "mixed") == 0)
        return MPI_SUCCESS;
    if (!enum_ok(d->values, v)) {
        char why[128];
        snprintf(why, sizeof(why), "expected one of %s", d->values);
        return bad_value(d, from_env, v, why);
    }
    if (strcmp(d->key, "bblog_mode") == 0) {
        /* bb: the logs drain in the background while the application computes, and
         * sync and close return with the data durable on the burst buffer (bblog(7)). */
        h->close_bb = strcmp(v, "bb") == 0;
        h->sync_bb = h->close_bb;
        h->drain = h->close_bb ? ADIOI_BBLOG_DRAIN_PROACTIVE : ADIOI_BBLOG_DRAIN_ON_DEMAND;
    } else if (strcmp(d->key, "bblog_sync") == 0)
        h->sync_bb = strcmp(v, "bb") == 0;
    else if (strcmp(d->key, "bblog_close") == 0)
        h->close_bb = strcmp(v, "bb") == 0;
    else if (strcmp(d->key, "bblog_node_exchange") == 0)
        h->node_exchange = strcmp(v, "bb") == 0;
    else if (strcmp(d->key, "bblog_consistency") == 0)
        h->posix_reads = strcmp(v, "posix") == 0;
    else if (strcmp(d->key, "bblog_drain") == 0)
        h->drain = strcmp(v, "reactive") == 0 ? ADIOI_BBLOG_DRAIN_REACTIVE :
            strcmp(v, "proactive") == 0 ? ADIOI_BBLOG_DRAIN_PROACTIVE :
            ADIOI_BBLOG_DRAIN_ON_DEMAND;
    return MPI_SUCCESS;
}

/* H_SIZE: a byte count, in the range its hint allows. */
static int apply_size(const struct hint_def *d, int from_env, const char *v,
                      struct ADIOI_BBLOG_hints *h)
{
    ADIO_Offset sz;

    if (parse_size(v, &sz) != 0)
        return bad_value(d, from_env, v, "expected a byte count such as 4096, 64k, 16m, 1g");
    if (strcmp(d->key, "bblog_flush_buffer_size") == 0) {
        if (sz < MIN_FLUSH_BUFFER_SIZE || sz > MAX_FLUSH_BUFFER_SIZE)
            return bad_value(d, from_env, v, "must be between 4k and 1g");
        h->flush_buffer_size = sz;
    } else if (strcmp(d->key, "bblog_max_size") == 0) {
        h->max_size = sz;
    } else if (strcmp(d->key, "bblog_segment_size") == 0) {
        if (sz != 0 && (sz < MIN_FLUSH_BUFFER_SIZE || sz > MAX_FLUSH_BUFFER_SIZE))
            return bad_value(d, from_env, v, "must be 0 (automatic) or between 4k and 1g");
        h->segment_size = sz;
    } else if (strcmp(d->key, "bblog_drain_max_rate") == 0) {
        h->drain_max_rate = sz;
    } else {
        h->indep_threshold = sz;
    }
    return MPI_SUCCESS;
}

/* Checks the value v of the hint d and sets it in h; an error names the hint and the value. */
static int apply(const struct hint_def *d, int from_env, const char *v,
                 struct ADIOI_BBLOG_hints *h)
{
    switch (d->kind) {
    case H_PATH:
        if (strlen(v) >= PATH_MAX)
            return bad_value(d, from_env, v, "path too long");
        if (strcmp(d->key, "bblog_dir") == 0) {
            if (v[0] == '\0')
                return bad_value(d, from_env, v, "empty path");
            strcpy(h->dir, v);
        } else {
            strcpy(h->stats, strcmp(v, "off") == 0 || strcmp(v, "false") == 0 ? "" : v);
        }
        return MPI_SUCCESS;
    case H_ENUM:
        return apply_enum(d, from_env, v, h);
    case H_PERCENT: {
            char *end;
            long pct;
            errno = 0;
            pct = strtol(v, &end, 10);
            if (*end == '%')
                end++;
            if (errno || end == v || *end != '\0' || pct < 0 || pct > 100)
                return bad_value(d, from_env, v, "expected a percentage from 0 (never drain "
                                 "early) to 100, such as 50 or 50%");
            h->high_water = (int) pct;
            return MPI_SUCCESS;
        }
    case H_SECONDS: {
            char *end;
            double sec;
            errno = 0;
            sec = strtod(v, &end);
            if (errno || end == v || *end != '\0' || !(sec >= 0 && sec <= 1e7))
                return bad_value(d, from_env, v, "expected seconds, such as 60 or 0.5 (0: learn "
                                 "the period from the application)");
            h->drain_interval = sec;
            return MPI_SUCCESS;
        }
    case H_BOOL:
        {
            int *b = strcmp(d->key, "bblog_verify") == 0 ? &h->verify :
                strcmp(d->key, "bblog_shared_bb") == 0 ? &h->shared_bb : &h->keep_logs;
            if (strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0)
                *b = 1;
            else if (strcasecmp(v, "false") == 0 || strcmp(v, "0") == 0 ||
                     strcasecmp(v, "no") == 0)
                *b = 0;
            else
                return bad_value(d, from_env, v, "expected true or false");
            return MPI_SUCCESS;
        }
    case H_SIZE:
        return apply_size(d, from_env, v, h);
    }
    return MPI_SUCCESS;
}

static void set_defaults(struct ADIOI_BBLOG_hints *h)
{
    const char *d = getenv("DW_JOB_PRIVATE");

    memset(h, 0, sizeof(*h));
    if (!d || !*d)
        d = getenv("TMPDIR");
    if (!d || !*d || strlen(d) >= PATH_MAX)
        d = "/tmp";
    strcpy(h->dir, d);
    h->flush_buffer_size = DEFAULT_FLUSH_BUFFER_SIZE;
    h->indep_threshold = DEFAULT_INDEP_THRESHOLD;
    h->node_exchange = 1;
    h->posix_reads = 1;
    h->high_water = DEFAULT_HIGH_WATER;
}

/* Applies the bblog_* keys of info to h; a bblog_ key that is no hint is MPI_ERR_INFO_KEY. */
static int apply_info(MPI_Info info, struct ADIOI_BBLOG_hints *h)
{
    static const char myname[] = "ADIOI_BBLOG_PARSE_HINTS";
    char value[MPI_MAX_INFO_VAL + 1];
    int flag, rc, nkeys, i;
    size_t k;

    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    for (k = 0; k < NHINTS; k++) {
        ADIOI_Info_get(info, hint_defs[k].key, MPI_MAX_INFO_VAL, value, &flag);
        if (flag && (rc = apply(&hint_defs[k], 0, value, h)) != MPI_SUCCESS)
            return rc;
    }
    /* A misspelt bblog_ key would otherwise be ignored without a word. The keys get_info
     * only reports are accepted and ignored: programs hand get_info's object back to
     * set_info (mpi4py's tests do). */
    MPI_Info_get_nkeys(info, &nkeys);
    for (i = 0; i < nkeys; i++) {
        static const char *const reported[] = { "bblog_pending_bytes", "bblog_durable" };
        char key[MPI_MAX_INFO_KEY + 1];
        MPI_Info_get_nthkey(info, i, key);
        if (strncmp(key, "bblog_", 6) != 0 || strcmp(key, reported[0]) == 0 ||
            strcmp(key, reported[1]) == 0)
            continue;
        for (k = 0; k < NHINTS; k++)
            if (strcmp(key, hint_defs[k].key) == 0)
                break;
        if (k == NHINTS)
            return ADIOI_BBLOG_Err(myname, __LINE__, MPI_ERR_INFO_KEY,
                                   "bblog: unknown hint %s (see bblog(7) for the hints)", key);
    }
    return MPI_SUCCESS;
}

int ADIOI_BBLOG_Parse_hints(MPI_Info info, struct ADIOI_BBLOG_hints *h)
{
    int rc;
    size_t k;

    set_defaults(h);
    /* Environment first (job-wide defaults), then MPI_Info on top. */
    for (k = 0; k < NHINTS; k++) {
        const char *v = getenv(hint_defs[k].env);
        if (v && (rc = apply(&hint_defs[k], 1, v, h)) != MPI_SUCCESS)
            return rc;
    }
    for (k = 0; k < NKNOBS; k++)
        if ((rc = read_knob(&knob_defs[k], h)) != MPI_SUCCESS)
            return rc;
    return apply_info(info, h);
}

int ADIOI_BBLOG_Check_info(MPI_Info info)
{
    struct ADIOI_BBLOG_hints scratch;

    set_defaults(&scratch);
    return apply_info(info, &scratch);
}

void ADIOI_BBLOG_Note_hints(const struct ADIOI_BBLOG_state *st)
{
    static int said;            /* once per process */

    if (said || st->rank != 0 || !st->hints.sync_bb)
        return;
    said = 1;
    fprintf(stderr, "bblog: note: bblog_sync=bb (%s): MPI_File_sync keeps the data on the burst "
            "buffer; sync-barrier-sync no longer shows it to other processes' reads of the PFS "
            "file (bblog(7))\n", st->pfs_path);
}

/* MPI_File_get_info on a bblog file (graft: mpi-io/get_info.c) reports, for the calling
 * process, the bytes it logged that are not yet in the PFS file, and whether everything it
 * wrote is in the PFS file and flushed there (by a sync that drains, a close, or the
 * background drain once it wrote everything). Local: no communication. */
void ADIOI_BBLOG_Refresh_info(ADIO_File fd)
{
    struct ADIOI_BBLOG_state *st = ADIOI_BBLOG_STATE(fd);
    struct ADIOI_BBLOG_logstate *ls = st ? st->ls : NULL;
    uint64_t pending;
    char v[32];

    if (!ls || st->passthrough)
        return;
    ADIOI_BBLOG_Lock(ls);
    pending = bblog_idx_bytes(ls->idx);
    ADIOI_BBLOG_Unlock(ls);
    snprintf(v, sizeof(v), "%llu", (unsigned long long) pending);
    ADIOI_Info_set(fd->info, "bblog_pending_bytes", v);
    ADIOI_Info_set(fd->info, "bblog_durable", pending == 0 &&
                   __atomic_load_n(&ls->flushed_wgen, __ATOMIC_RELAXED) ==
                   __atomic_load_n(&ls->wgen, __ATOMIC_RELAXED) ? "true" : "false");
}

void ADIOI_BBLOG_Publish_hints(ADIO_File fd, const struct ADIOI_BBLOG_hints *h)
{
    char v[64];

    ADIOI_Info_set(fd->info, "bblog_mode", h->sync_bb && h->close_bb &&
                   h->drain == ADIOI_BBLOG_DRAIN_PROACTIVE ? "bb" :
                   !h->sync_bb && !h->close_bb && h->drain == ADIOI_BBLOG_DRAIN_ON_DEMAND ?
                   "pfs" : "mixed");
    ADIOI_Info_set(fd->info, "bblog_dir", h->dir);
    ADIOI_Info_set(fd->info, "bblog_mapping", "process");
    ADIOI_Info_set(fd->info, "bblog_drain", h->drain == ADIOI_BBLOG_DRAIN_REACTIVE ? "reactive" :
                   h->drain == ADIOI_BBLOG_DRAIN_PROACTIVE ? "proactive" : "on_demand");
    ADIOI_Info_set(fd->info, "bblog_sync", h->sync_bb ? "bb" : "pfs");
    ADIOI_Info_set(fd->info, "bblog_close", h->close_bb ? "bb" : "pfs");
    snprintf(v, sizeof(v), "%lld", (long long) h->segment_size);
    ADIOI_Info_set(fd->info, "bblog_segment_size", v);
    snprintf(v, sizeof(v), "%g", h->drain_interval);
    ADIOI_Info_set(fd->info, "bblog_drain_interval", v);
    snprintf(v, sizeof(v), "%lld", (long long) h->drain_max_rate);
    ADIOI_Info_set(fd->info, "bblog_drain_max_rate", v);
    snprintf(v, sizeof(v), "%lld", (long long) h->flush_buffer_size);
    ADIOI_Info_set(fd->info, "bblog_flush_buffer_size", v);
    snprintf(v, sizeof(v), "%lld", (long long) h->max_size);
    ADIOI_Info_set(fd->info, "bblog_max_size", v);
    snprintf(v, sizeof(v), "%d", h->high_water);
    ADIOI_Info_set(fd->info, "bblog_high_water", v);
    snprintf(v, sizeof(v), "%lld", (long long) h->indep_threshold);
    ADIOI_Info_set(fd->info, "bblog_indep_threshold", v);
    ADIOI_Info_set(fd->info, "bblog_node_exchange", h->node_exchange ? "bb" : "mpi");
    ADIOI_Info_set(fd->info, "bblog_shared_bb", h->shared_bb ? "true" : "false");
    ADIOI_Info_set(fd->info, "bblog_consistency", h->posix_reads ? "posix" : "mpi");
    ADIOI_Info_set(fd->info, "bblog_keep_logs", h->keep_logs ? "true" : "false");
    ADIOI_Info_set(fd->info, "bblog_verify", h->verify ? "true" : "false");
    ADIOI_Info_set(fd->info, "bblog_stats", h->stats[0] ? h->stats : "off");
}
