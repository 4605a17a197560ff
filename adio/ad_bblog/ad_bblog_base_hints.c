/*
 * bblog_* hints (man/bblog.7). Each comes from MPI_Info, else from the environment variable
 * BBLOG_<NAME> (the job-wide default), else from the built-in default. One table (hint_defs) gives
 * each hint's key, variable, kind, default and accepted values: the parsing, the checks and what
 * MPI_File_get_info reports all come from it.
 *
 * Invariants. A value that does not parse is an error naming the key (or variable) and the value,
 * never a silent default; a bblog_ key that is no hint is an error too, but for the two that
 * get_info only reports (bblog_pending_bytes, bblog_durable), which programs hand back to set_info.
 * The tests' BBLOG_DEBUG_* variables are read at the same moment and refused the same way, so that
 * a drain never reads the environment. bblog_mode comes first: it sets bblog_drain, bblog_sync and
 * bblog_close, which the hints after it may change; get_info then reports it as mixed, which given
 * back sets nothing.
 *
 * After the open. The bblog_* hints are fixed at open: Check_info refuses a bad one given to
 * set_info or set_view, as the open would, and changes nothing. Refresh_info reports to get_info,
 * for the calling process alone and without communication, the bytes it logged that are not yet in
 * the PFS file (bblog_pending_bytes) and whether everything it wrote is in the PFS file and flushed
 * there (bblog_durable).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <net/if.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "bblog_size.h"
#include "adioi.h"

/* Drain rounds describe their extents with int lengths: a round stays well inside that. */
#define KIB ((ADIO_Offset) 1 << 10)
#define GIB ((ADIO_Offset) 1 << 30)
#define ANY_SIZE ((ADIO_Offset) INT64_MAX)

enum hint_kind { H_PATH, H_SIZE, H_ENUM, H_BOOL, H_SECONDS, H_PERCENT, H_ADDR };

#define NO_FIELD ((size_t) -1)
#define F(field) offsetof(struct ADIOI_BBLOG_hints, field)

/* Each hint once: its key, its variable, its kind, its field, its default (parsed like any
 * value) and what it accepts. The parsing, the defaults, the checks and what get_info reports
 * come from here; bblog(7) describes every key (test/check-driver.py checks that). */
struct hint_def {
    const char *key;            /* MPI_Info key */
    const char *env;            /* environment default */
    enum hint_kind kind;
    size_t off;                 /* of its field in struct ADIOI_BBLOG_hints, or NO_FIELD */
    const char *dflt;           /* the default value; NULL: bblog_dir's, from the environment */
    const char *values;         /* H_ENUM: accepted values, '|'-separated; the field (an int)
                                 * takes the index of the value given */
    ADIO_Offset lo, hi;         /* H_SIZE: the accepted range (and 0, with zero_ok) */
    int zero_ok;
};

/* Designated, so that each kind names the fields it uses and the others are zero. */
#define HINT(k, e, kd, f, d) .key = k, .env = e, .kind = kd, .off = f, .dflt = d
#define PLAIN(k, e, kd, f, d) {HINT(k, e, kd, f, d)}
#define ENUM(k, e, f, d, v) {HINT(k, e, H_ENUM, f, d), .values = v}
#define SIZE(k, e, f, d, l, h, z) {HINT(k, e, H_SIZE, f, d), .lo = l, .hi = h, .zero_ok = z}

static const struct hint_def hint_defs[] = {
    /* First: the mode sets drain, sync and close, which the hints after it may change. */
    ENUM("bblog_mode", "BBLOG_MODE", NO_FIELD, "pfs", "pfs|bb"),
    PLAIN("bblog_dir", "BBLOG_DIR", H_PATH, F(dir), NULL),
    ENUM("bblog_mapping", "BBLOG_MAPPING", F(mapping_node), "process", "process|node"),
    ENUM("bblog_drain", "BBLOG_DRAIN", F(drain), "on_demand",
         "on_demand|reactive|proactive"),       /* the order of ADIOI_BBLOG_DRAIN_* */
    ENUM("bblog_sync", "BBLOG_SYNC", F(sync_bb), "pfs", "pfs|bb"),
    ENUM("bblog_close", "BBLOG_CLOSE", F(close_bb), "pfs", "pfs|bb"),
    SIZE("bblog_segment_size", "BBLOG_SEGMENT_SIZE", F(segment_size), "0", 4 * KIB, GIB, 1),
    PLAIN("bblog_drain_interval", "BBLOG_DRAIN_INTERVAL", H_SECONDS, F(drain_interval), "0"),
    SIZE("bblog_drain_max_rate", "BBLOG_DRAIN_MAX_RATE", F(drain_max_rate), "0", 0, ANY_SIZE,
         0),
    SIZE("bblog_flush_buffer_size", "BBLOG_FLUSH_BUFFER_SIZE", F(flush_buffer_size), "16m",
         4 * KIB, GIB, 0),
    SIZE("bblog_max_size", "BBLOG_MAX_SIZE", F(max_size), "0", 0, ANY_SIZE, 0),
    PLAIN("bblog_high_water", "BBLOG_HIGH_WATER", H_PERCENT, F(high_water), "50"),
    SIZE("bblog_indep_threshold", "BBLOG_INDEP_THRESHOLD", F(indep_threshold), "1m", 0,
         ANY_SIZE, 0),
    SIZE("bblog_through_threshold", "BBLOG_THROUGH_THRESHOLD", F(through_threshold), "1m", 0,
         ANY_SIZE, 0),
    ENUM("bblog_node_exchange", "BBLOG_NODE_EXCHANGE", F(node_exchange), "bb", "mpi|bb"),
    PLAIN("bblog_shared_bb", "BBLOG_SHARED_BB", H_BOOL, F(shared_bb), "false"),
    ENUM("bblog_consistency", "BBLOG_CONSISTENCY", F(posix_reads), "posix", "mpi|posix"),
    PLAIN("bblog_keep_logs", "BBLOG_KEEP_LOGS", H_BOOL, F(keep_logs), "false"),
    PLAIN("bblog_verify", "BBLOG_VERIFY", H_BOOL, F(verify), "false"),
    PLAIN("bblog_stats", "BBLOG_STATS", H_PATH, F(stats), "off"),
    PLAIN("bblog_server_addr", "BBLOG_SERVER_ADDR", H_ADDR, F(server_addr), "auto"),
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
    {"BBLOG_DEBUG_CLOSE_ALONE", 1, offsetof(struct ADIOI_BBLOG_hints, debug_close_alone)},
    {"BBLOG_DEBUG_NO_BATCH", 1, offsetof(struct ADIOI_BBLOG_hints, debug_no_batch)},
    {"BBLOG_DEBUG_SYNC_AGREE", 1, offsetof(struct ADIOI_BBLOG_hints, debug_sync_agree)},
    {"BBLOG_DEBUG_SPIN", 1, offsetof(struct ADIOI_BBLOG_hints, debug_spin)},
    {"BBLOG_DEBUG_FAIL_COLL", INT_MAX, offsetof(struct ADIOI_BBLOG_hints, debug_fail_coll)},
    {"BBLOG_DEBUG_FAIL_COLL_ALL", 1, offsetof(struct ADIOI_BBLOG_hints, debug_fail_coll_all)},
};
#define NKNOBS (sizeof(knob_defs) / sizeof(knob_defs[0]))

/* Characters of a value shown in an error message: MPICH keeps 256 of a message's line, and
 * the name and the reason must survive a long value. */
#define SHOWN_VALUE 64

/* A size hint ("64k", "16M": bblog_size.h), at most INT64_MAX bytes. Returns 0 on success. */
static int parse_size(const char *s, ADIO_Offset * out)
{
    uint64_t v;

    if (bblog_parse_size(s, INT64_MAX, &v) != 0)
        return -1;
    *out = (ADIO_Offset) v;
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

/* The index of v among values ('|'-separated), or -1. */
static int enum_index(const char *values, const char *v)
{
    size_t n = strlen(v);
    const char *p = values;
    int i = 0;

    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t) (bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0)
            return i;
        p += len + (bar != NULL);
        i++;
    }
    return -1;
}

/* The i-th of values ('|'-separated) into out. */
static void enum_name(const char *values, int i, char *out, size_t n)
{
    const char *p = values;

    while (i-- > 0 && strchr(p, '|'))
        p = strchr(p, '|') + 1;
    snprintf(out, n, "%.*s", (int) (strchr(p, '|') ? strchr(p, '|') - p : (long) strlen(p)), p);
}

/* A size for the user: 4096 as "4k", 1 GiB as "1g". */
static void size_name(ADIO_Offset v, char *out, size_t n)
{
    static const char unit[] = "kmgt";
    int u = -1;

    while (u < 3 && v >= 1024 && v % 1024 == 0)
        v /= 1024, u++;
    if (u >= 0)
        snprintf(out, n, "%lld%c", (long long) v, unit[u]);
    else
        snprintf(out, n, "%lld", (long long) v);
}

/* H_ENUM: the value is one of d->values; bblog_mode sets the three hints it stands for. */
static int apply_enum(const struct hint_def *d, int from_env, const char *v,
                      struct ADIOI_BBLOG_hints *h)
{
    int i;

    /* get_info reports bblog_mode=mixed when the three hints it sets were set otherwise;
     * handed back to set_info or to an open, it sets nothing (the three keys do). */
    if (strcmp(d->key, "bblog_mode") == 0 && strcmp(v, "mixed") == 0)
        return MPI_SUCCESS;
    if ((i = enum_index(d->values, v)) < 0) {
        char why[128];
        snprintf(why, sizeof(why), "expected one of %s", d->values);
        return bad_value(d, from_env, v, why);
    }
    if (d->off != NO_FIELD) {
        *(int *) ((char *) h + d->off) = i;
    } else if (strcmp(d->key, "bblog_mode") == 0) {
        /* bb: the logs drain in the background while the application computes, and
         * sync and close return with the data durable on the burst buffer (bblog(7)). */
        h->close_bb = h->sync_bb = i;
        h->drain = i ? ADIOI_BBLOG_DRAIN_PROACTIVE : ADIOI_BBLOG_DRAIN_ON_DEMAND;
    }
    return MPI_SUCCESS;
}

/* H_SIZE: a byte count, in the range of its hint. */
static int apply_size(const struct hint_def *d, int from_env, const char *v,
                      struct ADIOI_BBLOG_hints *h)
{
    ADIO_Offset sz;

    if (parse_size(v, &sz) != 0)
        return bad_value(d, from_env, v, "expected a byte count such as 4096, 64k, 16m, 1g");
    if ((sz < d->lo || sz > d->hi) && !(sz == 0 && d->zero_ok)) {
        char why[96], lo[24], hi[24];
        size_name(d->lo, lo, sizeof(lo));
        size_name(d->hi, hi, sizeof(hi));
        snprintf(why, sizeof(why), "must be %sbetween %s and %s", d->zero_ok ?
                 "0 (automatic) or " : "", lo, hi);
        return bad_value(d, from_env, v, why);
    }
    *(ADIO_Offset *) ((char *) h + d->off) = sz;
    return MPI_SUCCESS;
}

/* The read server's address: auto (""), an IPv4 address, or a network interface's name (looked
 * up on each node at the open, where a missing one means no read server there). */
static int apply_addr(const struct hint_def *d, int from_env, const char *v,
                      struct ADIOI_BBLOG_hints *h)
{
    struct in_addr in;
    size_t i, n = strlen(v);
    int name_ok = n > 0 && n < IF_NAMESIZE;

    for (i = 0; name_ok && i < n; i++)
        name_ok = isalnum((unsigned char) v[i]) || strchr("._-:", v[i]);
    if (strcmp(v, "auto") == 0)
        v = "";
    else if (inet_pton(AF_INET, v, &in) != 1 && !name_ok)
        return bad_value(d, from_env, v, "expected auto, an IPv4 address or the name of a "
                         "network interface");
    snprintf((char *) h + d->off, sizeof(h->server_addr), "%s", v);
    return MPI_SUCCESS;
}

/* Checks the value v of the hint d and sets it in h; an error names the hint and the value. */
static int apply(const struct hint_def *d, int from_env, const char *v,
                 struct ADIOI_BBLOG_hints *h)
{
    char *end;

    switch (d->kind) {
    case H_PATH:
        if (strlen(v) >= PATH_MAX)
            return bad_value(d, from_env, v, "path too long");
        /* A hint whose default is off (bblog_stats) takes off, false or nothing for it. */
        if (d->dflt && strcmp(d->dflt, "off") == 0 &&
            (strcmp(v, "off") == 0 || strcmp(v, "false") == 0))
            v = "";
        else if (v[0] == '\0' && !(d->dflt && strcmp(d->dflt, "off") == 0))
            return bad_value(d, from_env, v, "empty path");
        strcpy((char *) h + d->off, v);
        return MPI_SUCCESS;
    case H_ENUM:
        return apply_enum(d, from_env, v, h);
    case H_ADDR:
        return apply_addr(d, from_env, v, h);
    case H_PERCENT: {
            long pct;
            errno = 0;
            pct = strtol(v, &end, 10);
            if (*end == '%')
                end++;
            if (errno || end == v || *end != '\0' || pct < 0 || pct > 100)
                return bad_value(d, from_env, v, "expected a percentage from 0 (never drain "
                                 "early) to 100, such as 50 or 50%");
            *(int *) ((char *) h + d->off) = (int) pct;
            return MPI_SUCCESS;
        }
    case H_SECONDS: {
            double sec;
            errno = 0;
            sec = strtod(v, &end);
            if (errno || end == v || *end != '\0' || !(sec >= 0 && sec <= 1e7))
                return bad_value(d, from_env, v, "expected seconds, such as 60 or 0.5 (0: learn "
                                 "the period from the application)");
            *(double *) ((char *) h + d->off) = sec;
            return MPI_SUCCESS;
        }
    case H_BOOL: {
            int *b = (int *) ((char *) h + d->off);
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

/* Every hint's default from the table; bblog_dir's from the environment: the job's private
 * burst-buffer directory (DataWarp's DW_JOB_PRIVATE), else TMPDIR, else /tmp. */
static void set_defaults(struct ADIOI_BBLOG_hints *h)
{
    const char *d = getenv("DW_JOB_PRIVATE");
    size_t k;

    memset(h, 0, sizeof(*h));
    for (k = 0; k < NHINTS; k++)
        if (hint_defs[k].dflt)
            (void) apply(&hint_defs[k], 0, hint_defs[k].dflt, h);
    if (!d || !*d)
        d = getenv("TMPDIR");
    if (!d || !*d || strlen(d) >= PATH_MAX)
        d = "/tmp";
    strcpy(h->dir, d);
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

    if (info == MPI_INFO_NULL)  /* every set_view of PnetCDF and HDF5: nothing to check */
        return MPI_SUCCESS;
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
    size_t k;

    for (k = 0; k < NHINTS; k++) {
        const struct hint_def *d = &hint_defs[k];
        const char *f = d->off == NO_FIELD ? NULL : (const char *) h + d->off;
        char v[PATH_MAX];

        switch (d->kind) {
        case H_PATH:
            snprintf(v, sizeof(v), "%s", f[0] ? f : "off");
            break;
        case H_ADDR:
            snprintf(v, sizeof(v), "%s", f[0] ? f : "auto");
            break;
        case H_SIZE:
            snprintf(v, sizeof(v), "%lld", (long long) *(const ADIO_Offset *) f);
            break;
        case H_SECONDS:
            snprintf(v, sizeof(v), "%g", *(const double *) f);
            break;
        case H_PERCENT:
            snprintf(v, sizeof(v), "%d", *(const int *) f);
            break;
        case H_BOOL:
            snprintf(v, sizeof(v), "%s", *(const int *) f ? "true" : "false");
            break;
        case H_ENUM:
            if (f)
                enum_name(d->values, *(const int *) f, v, sizeof(v));
            else if (strcmp(d->key, "bblog_mode") == 0)
                snprintf(v, sizeof(v), "%s", h->sync_bb && h->close_bb &&
                         h->drain == ADIOI_BBLOG_DRAIN_PROACTIVE ? "bb" :
                         !h->sync_bb && !h->close_bb && h->drain == ADIOI_BBLOG_DRAIN_ON_DEMAND ?
                         "pfs" : "mixed");
            else
                snprintf(v, sizeof(v), "%s", d->dflt);
            break;
        }
        ADIOI_Info_set(fd->info, d->key, v);
    }
}
