/*
 * bblog: the crash-recovery tool (DESIGN.md section 4). Lists, dumps and checks logs, and
 * replays the undrained data of a crashed job into its parallel-file-system files. No MPI.
 * The library (logfs/replay.c) decides; this file only parses arguments and talks to the user:
 * every message names the file concerned and, where there is one, says what to do.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bblog_replay.h"
#include "bblog_size.h"

/* Exit codes of `bblog check`, in order of severity (the worst log decides). */
enum {
    CHECK_CLEAN = 0,
    CHECK_TORN = 1,
    CHECK_CORRUPT = 2,
    CHECK_UNREADABLE = 3,
};

static void usage(FILE *f);

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);

    return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* The .meta file a LOG argument means: BASE.meta as given, BASE.data's partner, or BASE plus
 * ".meta" when that exists. Returns a malloc'ed path, NULL when out of memory. */
static char *meta_path_of(const char *arg)
{
    char *p;
    size_t n = strlen(arg);

    if (ends_with(arg, ".data")) {
        p = strdup(arg);
        if (p)
            memcpy(p + n - 5, ".meta", 5);
        return p;
    }
    if (!ends_with(arg, ".meta")) {
        if (asprintf(&p, "%s.meta", arg) < 0)
            return NULL;
        if (access(p, F_OK) == 0)
            return p;
        free(p);
    }
    return strdup(arg);
}

static void oom(void)
{
    fprintf(stderr, "bblog: out of memory\n");
}

/* One line describing where a scan ended. */
static const char *scan_state(const struct bblog_replay_log *l)
{
    if (l->open_rc != 0)
        return "unreadable";
    switch (l->scan_rc) {
    case 0:
        return "clean";
    case BBLOG_ETORN:
        return "torn";
    case BBLOG_ECORRUPT:
        return "corrupt";
    default:
        return "unreadable";
    }
}

static void print_gens(const struct bblog_replay_log *l)
{
    if (l->undrained_records == 0)
        printf(" gens=-");
    else if (l->min_gen == l->max_gen)
        printf(" gens=%" PRIu32, l->min_gen);
    else
        printf(" gens=%" PRIu32 "-%" PRIu32, l->min_gen, l->max_gen);
}

/* Why a log could not be opened. Discovery found its .meta file, so ENOENT means the .data
 * file beside it is gone. */
/* What the tool says of an empty .meta file (BBLOG_EUNBORN). */
#define UNBORN "empty: its creation did not finish (its process was killed while opening the " \
    "file), so it holds nothing"

static const char *open_problem(const struct bblog_replay_log *l)
{
    if (l->open_rc == ENOENT && access(l->meta_path, F_OK) == 0)
        return "its .data file is missing";
    return bblog_strerror(l->open_rc);
}

/* One line about one damaged item of a log: PREFIX, where, what, and what was lost. */
static void print_damage(FILE *f, const char *prefix, const struct bblog_scan_damage *d)
{
    const char *acked = d->synced ? "acknowledged by a sync" : "not yet synced";

    if (d->kind == BBLOG_DMG_TRUNCATED)
        fprintf(f, "%s at meta byte %" PRIu64 ": %s: %" PRIu64 " synced records lost, file ranges "
               "unknown\n", prefix, d->pos, bblog_scan_damage_what(d->kind), d->lost_records);
    else if (d->record_known)
        fprintf(f, "%s at meta byte %" PRIu64 ": %s: record seq=%" PRIu64 " lost, file bytes [%"
               PRIu64 ", %" PRIu64 ") (%s)\n", prefix, d->pos, bblog_scan_damage_what(d->kind),
               d->rec.seq, d->rec.off, d->rec.off + d->rec.len, acked);
    else
        fprintf(f, "%s at meta byte %" PRIu64 ": %s: one record lost, file range unknown (%s)\n",
               prefix, d->pos, bblog_scan_damage_what(d->kind), acked);
}

/* ---- ls ---------------------------------------------------------------------------------- */

/* How a log is named to the user: its .meta file, and in a node's log pair its slot. */
static const char *lname(const struct bblog_replay_log *l)
{
    static char buf[4][PATH_MAX + 32];
    static unsigned next;
    char *b = buf[next++ % 4];

    if (l->slots == 0 || l->slot == BBLOG_NODE_HEADER)
        return l->meta_path;
    snprintf(b, sizeof buf[0], "%s[slot %" PRIu32 "]", l->meta_path, l->slot);
    return b;
}

static void ls_line(const struct bblog_replay_log *l)
{
    if (l->open_rc == BBLOG_EBADMAGIC) {
        printf("%s: not a bblog log\n", lname(l));
        return;
    }
    if (l->open_rc == BBLOG_EUNBORN) {
        printf("%s: %s\n", lname(l), UNBORN);
        return;
    }
    if (l->open_rc != 0) {
        printf("%s: unreadable: %s\n", lname(l), open_problem(l));
        return;
    }
    printf("%s: file=%s job=%s rank=%" PRIu32 "/%" PRIu32 " epoch=%" PRIu64 " state=%s"
           " records=%" PRIu64 " undrained=%" PRIu64 " bytes (%" PRIu64 " records)",
           lname(l), l->pfs_path, l->job_id[0] ? l->job_id : "-", l->rank, l->nprocs,
           l->epoch, scan_state(l), l->records, l->undrained_bytes, l->undrained_records);
    print_gens(l);
    printf(" set=%016" PRIx64 " synced=%" PRIu64, l->set_id, l->synced_seq);
    if (l->scan_rc == BBLOG_ECORRUPT)
        printf(" damaged=%" PRIu64 " (%" PRIu64 " synced)", l->damaged, l->damaged_synced);
    if (l->scan_rc == BBLOG_ETORN || l->scan_rc == BBLOG_ECORRUPT)
        printf(" bad_pos=%" PRIu64, l->bad_pos);
    else if (l->scan_rc != 0)
        printf(" error=\"%s\"", bblog_strerror(l->scan_rc));
    putchar('\n');
}

/* The arguments of `bblog dump` for a log. */
static const char *dump_arg(const struct bblog_replay_log *l)
{
    static char buf[PATH_MAX + 32];

    if (l->slots == 0 || l->slot == BBLOG_NODE_HEADER)
        return l->meta_path;
    snprintf(buf, sizeof buf, "--slot %" PRIu32 " %s", l->slot, l->meta_path);
    return buf;
}

/* A summary per (file, job): the list is sorted that way, so each group is one run. */
static void ls_summary(const struct bblog_replay_list *list, const char *dir)
{
    size_t i = 0;

    while (i < list->n && list->logs[i].open_rc == 0) {
        const struct bblog_replay_log *a = &list->logs[i];
        uint64_t bytes = 0;
        size_t j, torn = 0, corrupt = 0, logs = 0;
        int sets_differ = 0;

        for (j = i; j < list->n && list->logs[j].open_rc == 0 &&
                    strcmp(list->logs[j].pfs_path, a->pfs_path) == 0 &&
                    strcmp(list->logs[j].job_id, a->job_id) == 0 &&
                    list->logs[j].set_id == a->set_id; j++) {
            bytes += list->logs[j].undrained_bytes;
            torn += list->logs[j].scan_rc == BBLOG_ETORN;
            corrupt += list->logs[j].scan_rc == BBLOG_ECORRUPT;
            logs++;
        }
        sets_differ = (i > 0 && list->logs[i - 1].open_rc == 0 &&
                       strcmp(list->logs[i - 1].pfs_path, a->pfs_path) == 0) ||
                      (j < list->n && list->logs[j].open_rc == 0 &&
                       strcmp(list->logs[j].pfs_path, a->pfs_path) == 0);
        printf("file %s: job %s set %016" PRIx64 " (%" PRIu32 " processes): %zu logs, %" PRIu64
               " bytes undrained", a->pfs_path, a->job_id[0] ? a->job_id : "-", a->set_id,
               a->nprocs, logs, bytes);
        if (torn)
            printf(", %zu torn", torn);
        if (corrupt)
            printf(", %zu CORRUPT (replay refuses this file unless --salvage)", corrupt);
        if (bytes > 0 && !corrupt)
            printf("; replay with: bblog replay %s --file %s", dir, a->pfs_path);
        if (bytes > 0 && !corrupt && sets_differ)
            printf(" --set %016" PRIx64, a->set_id);
        putchar('\n');
        i = j;
    }
}

static int cmd_ls(int argc, char **argv)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, status = 0;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            printf("usage: bblog ls DIR|LOG...\n"
                   "Lists the logs in each DIR and its bblog-UID subdirectories (or the LOGs\n"
                   "named), one line each, then one summary line per file and job.\n");
            return 0;
        }
        fprintf(stderr, "bblog ls: try 'bblog ls --help'\n");
        return 1;
    }
    if (optind >= argc) {
        fprintf(stderr, "bblog ls: name a log directory, e.g. 'bblog ls $BBLOG_DIR'\n");
        return 1;
    }
    for (int a = optind; a < argc; a++) {
        struct bblog_replay_list list = { 0 };
        struct bblog_replay_err err;
        struct stat st;
        int rc;

        if (stat(argv[a], &st) != 0) {
            fprintf(stderr, "bblog ls: %s: %s\n", argv[a], strerror(errno));
            status = 1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            rc = bblog_replay_discover(argv[a], &list, &err);
            if (rc != 0) {
                fprintf(stderr, "bblog ls: %s: %s\n", err.path, err.reason);
                status = 1;
                continue;
            }
            if (list.n == 0)
                printf("%s: no logs (no *.meta files here or in bblog-UID subdirectories)\n",
                       argv[a]);
        } else {
            char *meta = meta_path_of(argv[a]);

            if (!meta || bblog_replay_list_file(meta, &list) != 0) {
                free(meta);
                oom();
                return 1;
            }
            free(meta);
        }
        for (size_t i = 0; i < list.n; i++)
            ls_line(&list.logs[i]);
        if (S_ISDIR(st.st_mode))
            ls_summary(&list, argv[a]);
        bblog_replay_list_free(&list);
    }
    return status;
}

/* ---- dump -------------------------------------------------------------------------------- */

/* The options of dump into *slot: -1 to go on, else the exit status. */
static int dump_options(int argc, char **argv, uint32_t *slot)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { "slot", required_argument, NULL, 's' },
        { NULL, 0, NULL, 0 },
    };
    unsigned long v;
    char *end;
    int c;

    while ((c = getopt_long(argc, argv, "hs:", opts, NULL)) != -1) {
        if (c == 'h') {
            printf("usage: bblog dump [--slot K] LOG\n"
                   "Prints the header of LOG and one line per record, then how the log ends.\n"
                   "In a node's log pair (bblog_mapping=node), --slot K dumps the log of slot K\n"
                   "(without it, the pair's own header).\n");
            return 0;
        }
        if (c != 's') {
            fprintf(stderr, "bblog dump: try 'bblog dump --help'\n");
            return 1;
        }
        v = strtoul(optarg, &end, 10);
        if (*optarg == '\0' || *end != '\0' || v >= BBLOG_NODE_SLOTS_MAX) {
            fprintf(stderr, "bblog dump: --slot wants a slot number below %u, not '%s'\n",
                    BBLOG_NODE_SLOTS_MAX, optarg);
            return 1;
        }
        *slot = (uint32_t) v;
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "bblog dump: name exactly one log (its .meta file)\n");
        return 1;
    }
    return -1;
}

static void dump_header(const char *meta, const struct bblog_log_header *h)
{
    char when[64] = "?";
    time_t t = (time_t) (h->create_time_ns / 1000000000u);
    struct tm tm;

    if (localtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %z", &tm);
    printf("log %s\n", meta);
    printf("version %" PRIu32 "\n", h->version);
    if (h->slots > 0 && h->slot == BBLOG_NODE_HEADER)
        printf("node log pair of %" PRIu32 " slots (dump one with --slot K)\n", h->slots);
    else if (h->slots > 0)
        printf("slot %" PRIu32 " of %" PRIu32 " of a node's log pair\n", h->slot, h->slots);
    printf("file %s\n", h->pfs_path);
    printf("file_id 0x%016" PRIx64 "\n", h->file_id);
    printf("job %s\n", h->job_id[0] ? h->job_id : "-");
    printf("rank %" PRIu32 " of %" PRIu32 "\n", h->rank, h->nprocs);
    printf("epoch %" PRIu64 "\n", h->epoch);
    printf("drained_gen %" PRIu32 "\n", h->drained_gen);
    printf("created %s (%" PRIu64 " ns)\n", when, h->create_time_ns);
    printf("set %016" PRIx64 "\n", h->set_id);
    if (h->synced.count > 0)
        printf("synced count=%" PRIu64 " seq=%" PRIu64 " meta_end=%" PRIu64 " data_end=%" PRIu64
               " trim=%" PRIu64 "\n", h->synced.count, h->synced.seq, h->synced.meta_end,
               h->synced.data_end, h->synced.trim);
    else
        printf("synced none in this epoch\n");
    if (h->bad_slots > 0)
        printf("damaged sync slots %u\n", h->bad_slots);
}

/* One record's line; *undrained and *bytes count the live data records. Records of older
 * epochs, and those below the job-wide drained_gen this log knows of, were drained (replay also
 * uses the other logs' drained_gen). */
static void dump_record(const struct bblog_log_header *h, const struct bblog_log_record *r,
                        uint64_t *undrained, uint64_t *bytes)
{
    int live = r->epoch == h->epoch && r->gen >= h->drained_gen;

    if (r->flags & (BBLOG_REC_PFS | BBLOG_REC_TRIMMED))
        printf("%s seq=%" PRIu64 " off=%" PRIu64 " len=%" PRIu64 " epoch=%" PRIu64
               " gen=%" PRIu32 " slot=%" PRIu64 "\n", r->flags & BBLOG_REC_PFS ? "pfs" :
               "trimmed", r->seq, r->off, r->len, r->epoch, r->gen, r->slot);
    else if (r->flags & BBLOG_REC_KEEP)
        printf("keep seq=%" PRIu64 " off=%" PRIu64 " len=%" PRIu64 " epoch=%" PRIu64
               " gen=%" PRIu32 " slot=%" PRIu64 " %s\n", r->seq, r->off, r->len, r->epoch,
               r->gen, r->slot, live ? "owed" : "drained");
    else {
        printf("record seq=%" PRIu64 " off=%" PRIu64 " len=%" PRIu64 " data_off=%" PRIu64
               " epoch=%" PRIu64 " gen=%" PRIu32 " slot=%" PRIu64 " %s\n", r->seq, r->off,
               r->len, r->data_off, r->epoch, r->gen, r->slot, live ? "undrained" : "drained");
        *undrained += live;
        *bytes += live ? r->len : 0;
    }
}

/* Every record of s, then how the log ends. */
static void dump_records(struct bblog_scan *s, const struct bblog_log_header *h)
{
    struct bblog_log_record r;
    struct bblog_scan_damage d;
    const void *payload;
    uint64_t n = 0, undrained = 0, bytes = 0, damaged = 0;
    int rc;

    while ((rc = bblog_scan_next(s, &r, &payload)) != 0) {
        if (rc == BBLOG_ECORRUPT) {
            (void) bblog_scan_damage(s, &d);
            print_damage(stdout, "DAMAGED", &d);
            damaged++;
            (void) bblog_scan_resume(s);
            continue;
        }
        if (rc != 1)
            break;
        dump_record(h, &r, &undrained, &bytes);
        n++;
    }
    if ((rc == 0 || rc == BBLOG_ETORN) && damaged > 0)
        printf("end CORRUPT: %" PRIu64 " valid records, %" PRIu64 " damaged items; replay "
               "refuses this log's file unless --salvage\n", n, damaged);
    else if (rc == 0)
        printf("end clean: %" PRIu64 " records, %" PRIu64 " undrained (%" PRIu64 " bytes)\n", n,
               undrained, bytes);
    else if (rc == BBLOG_ETORN)
        printf("end torn at meta byte %" PRIu64 ": %" PRIu64 " valid records before it, %" PRIu64
               " undrained (%" PRIu64 " bytes); no sync acknowledged the torn record: replay "
               "drops it\n", bblog_scan_bad_pos(s), n, undrained, bytes);
    else
        printf("end unreadable after %" PRIu64 " records: %s\n", n, bblog_strerror(rc));
}

static int cmd_dump(int argc, char **argv)
{
    uint32_t slot = BBLOG_NODE_HEADER;
    struct bblog_scan *s = NULL;
    char *meta;
    int rc;

    if ((rc = dump_options(argc, argv, &slot)) >= 0)
        return rc;
    meta = meta_path_of(argv[optind]);
    if (!meta) {
        oom();
        return 1;
    }
    rc = bblog_scan_open_slot(meta, slot, &s);
    if (rc != 0) {
        fprintf(stderr, "bblog dump: %s: %s%s\n", meta, bblog_strerror(rc),
                rc == BBLOG_EINVAL ? " (--slot names a slot of a node's log pair)" : "");
    } else {
        dump_header(meta, bblog_scan_header(s));
        dump_records(s, bblog_scan_header(s));
    }
    bblog_scan_close(s);
    free(meta);
    return rc != 0;
}

/* ---- check ------------------------------------------------------------------------------- */

/* One log's verdict (a CHECK_ code), said unless quiet. */
static int check_log(const struct bblog_replay_log *l, int quiet)
{
    int code;

    if (l->open_rc == BBLOG_EUNBORN) {
        code = CHECK_CLEAN;
        if (!quiet)
            printf("%s: %s\n", lname(l), UNBORN);
    } else if (l->open_rc != 0) {
        code = CHECK_UNREADABLE;
        if (!quiet)
            printf("%s: unreadable: %s\n", lname(l), open_problem(l));
    } else if (l->scan_rc == 0) {
        code = CHECK_CLEAN;
        if (!quiet)
            printf("%s: clean: %" PRIu64 " records, %" PRIu64 " undrained (%" PRIu64
                   " bytes)\n", lname(l), l->records, l->undrained_records,
                   l->undrained_bytes);
    } else if (l->scan_rc == BBLOG_ETORN) {
        code = CHECK_TORN;
        if (!quiet)
            printf("%s: torn: the last record (meta byte %" PRIu64 ") was partly written "
                   "when the job stopped; %" PRIu64 " valid records before it, %" PRIu64
                   " undrained (%" PRIu64 " bytes); replay drops the torn record\n",
                   lname(l), l->bad_pos, l->records, l->undrained_records,
                   l->undrained_bytes);
    } else if (l->scan_rc == BBLOG_ECORRUPT) {
        code = CHECK_CORRUPT;
        if (!quiet)
            printf("%s: corrupt: %" PRIu64 " damaged %s, the first at meta byte %" PRIu64
                   "; %" PRIu64 " of them acknowledged by a sync%s; replay refuses this "
                   "log's file unless --salvage (inspect it with 'bblog dump %s')\n",
                   lname(l), l->damaged, l->damaged == 1 ? "item" : "items", l->bad_pos,
                   l->damaged_synced, l->data_missing ? "; its .data file is missing" : "",
                   dump_arg(l));
    } else {
        code = CHECK_UNREADABLE;
        if (!quiet)
            printf("%s: unreadable after %" PRIu64 " records: %s\n", lname(l),
                   l->records, bblog_strerror(l->scan_rc));
    }
    return code;
}

static int cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { "quiet", no_argument, NULL, 'q' },
        { NULL, 0, NULL, 0 },
    };
    int c, quiet = 0, worst = CHECK_CLEAN;

    while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
        if (c == 'h') {
            printf("usage: bblog check [-q] LOG...\n"
                   "Verifies every record and payload checksum of each LOG. Exit status: 0 all\n"
                   "clean (or empty: a creation cut short), 1 a torn tail (replay drops it),\n"
                   "2 corrupt (replay refuses it), 3 unreadable or not a log; the worst log\n"
                   "decides.\n");
            return 0;
        }
        if (c == 'q') {
            quiet = 1;
            continue;
        }
        fprintf(stderr, "bblog check: try 'bblog check --help'\n");
        return CHECK_UNREADABLE;
    }
    if (optind >= argc) {
        fprintf(stderr, "bblog check: name at least one log (its .meta file)\n");
        return CHECK_UNREADABLE;
    }
    for (int a = optind; a < argc; a++) {
        struct bblog_replay_list list;
        char *meta = meta_path_of(argv[a]);

        if (!meta || bblog_replay_list_file(meta, &list) != 0) {
            free(meta);
            oom();
            return CHECK_UNREADABLE;
        }
        free(meta);
        if (list.n == 0 && !quiet)
            printf("%s: a node's log pair with no log in any slot\n", argv[a]);
        for (size_t i = 0; i < list.n; i++) {
            int code = check_log(&list.logs[i], quiet);

            if (code > worst)
                worst = code;
        }
        bblog_replay_list_free(&list);
    }
    return worst;
}

/* ---- replay ------------------------------------------------------------------------------ */

/* Exit codes of `bblog replay`. */
enum {
    REPLAY_OK = 0,
    REPLAY_ERROR = 1,
    REPLAY_DAMAGED = 2,         /* damage found, nothing written */
    REPLAY_SALVAGED = 3,        /* damage found, the intact records written */
    REPLAY_GATHER = 4,          /* --parts: the job is to be recovered by gathering its logs */
};

static void replay_hint(const struct bblog_replay_err *err, const char *dir)
{
    switch (err->rc) {
    case BBLOG_ECORRUPT:
        fprintf(stderr, "bblog replay: inspect the damage with 'bblog dump %s'; to replay what "
                "is intact anyway, add --salvage (the lost ranges then keep whatever the file "
                "held, or older logged bytes)\n", err->path);
        break;
    case BBLOG_EMISMATCH:
        fprintf(stderr, "bblog replay: 'bblog replay --list %s' shows each run's logs (job, "
                "set, ranks, time); choose one with --set SET (or --job JOB_ID)\n", dir);
        break;
    case ENOENT:
        fprintf(stderr, "bblog replay: 'bblog ls %s' lists the files that have logs\n", dir);
        break;
    default:
        break;
    }
}

static int cmp_range(const void *pa, const void *pb)
{
    const uint64_t *a = pa, *b = pb;

    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* The damage of one replay: one line per damaged item (up to a limit per log), a hint where a
 * log's data file is plainly not its own, then the merged file ranges known to be lost. */
/* The file ranges lost, merged: the first 20, their count and their bytes. */
static void lost_ranges(const char *path, uint64_t (*ranges)[2], size_t nr)
{
    size_t k = 0;
    uint64_t bytes = 0;

    qsort(ranges, nr, sizeof ranges[0], cmp_range);
    for (size_t i = 1; i < nr; i++) {
        if (ranges[i][0] <= ranges[k][1]) {
            if (ranges[i][1] > ranges[k][1])
                ranges[k][1] = ranges[i][1];
        } else {
            k++;
            memcpy(ranges[k], ranges[i], sizeof ranges[0]);
        }
    }
    fprintf(stderr, "bblog replay: %s: file bytes lost:", path);
    for (size_t i = 0; i <= k; i++) {
        bytes += ranges[i][1] - ranges[i][0];
        if (i < 20)
            fprintf(stderr, " [%" PRIu64 ", %" PRIu64 ")", ranges[i][0], ranges[i][1]);
    }
    fprintf(stderr, "%s (%zu ranges, %" PRIu64 " bytes)\n", k >= 20 ? " ..." : "", k + 1,
            bytes);
}

static void replay_losses(const struct bblog_replay_list *list, const char *path,
                          const struct bblog_replay_report *rep)
{
    enum { PER_LOG = 10 };
    uint64_t (*ranges)[2] = malloc((rep->nlosses + 1) * sizeof *ranges);
    size_t nr = 0, unknown = 0, shown = 0;
    uint64_t synced = 0, unknown_synced_records = 0;

    for (size_t i = 0; i < rep->nlosses; i++) {
        const struct bblog_replay_loss *x = &rep->losses[i];
        const struct bblog_replay_log *l = &list->logs[x->log];
        char prefix[PATH_MAX + 64];

        shown = i > 0 && rep->losses[i - 1].log == x->log ? shown + 1 : 0;
        synced += x->header_rc != 0 || x->d.synced;
        if (x->orphan) {
            const char *slash = strrchr(l->meta_path, '/');

            fprintf(stderr, "bblog replay: %s: LOST: rank %" PRIu32 ": its .meta file is "
                    "missing while its .data file is in %.*s: whatever it logged is lost\n",
                    path, x->rank, slash ? (int) (slash - l->meta_path) : 1,
                    slash ? l->meta_path : ".");
            unknown++;
            continue;
        }
        if (x->header_rc != 0) {
            fprintf(stderr, "bblog replay: %s: LOST: rank %" PRIu32 ": %s: %s, so everything "
                    "this log holds is lost\n", path, x->rank, l->meta_path,
                    x->header_rc == ENOENT ? "its .data file is missing"
                    : bblog_strerror(x->header_rc));
            unknown++;
            continue;
        }
        if (x->d.record_known && ranges)
            memcpy(ranges[nr++], (uint64_t[2]) { x->d.rec.off, x->d.rec.off + x->d.rec.len },
                   sizeof ranges[0]);
        else if (x->d.kind == BBLOG_DMG_TRUNCATED)
            unknown_synced_records += x->d.lost_records;
        else
            unknown++;
        if (shown < PER_LOG) {
            snprintf(prefix, sizeof prefix, "bblog replay: %s: LOST: rank %" PRIu32 ": %s",
                     path, x->rank, l->meta_path);
            print_damage(stderr, prefix, &x->d);
        } else if (shown == PER_LOG) {
            fprintf(stderr, "bblog replay: %s: LOST: rank %" PRIu32 ": %s: more damaged items "
                    "follow ('bblog dump %s' lists them all)\n", path, x->rank, l->meta_path,
                    l->meta_path);
        }
        if (l->records == 0 && l->damaged > 0 && !l->data_missing &&
            (i + 1 == rep->nlosses || rep->losses[i + 1].log != x->log) &&
            (x->d.kind == BBLOG_DMG_PAYLOAD || x->d.kind == BBLOG_DMG_PAYLOAD_CUT))
            fprintf(stderr, "bblog replay: %s: rank %" PRIu32 ": no payload of %s matches its "
                    "records: its .data file is not its own (swapped with another log's, or "
                    "overwritten?)\n", path, x->rank, l->meta_path);
    }
    if (ranges && nr > 0)
        lost_ranges(path, ranges, nr);
    if (unknown > 0)
        fprintf(stderr, "bblog replay: %s: the file ranges of %zu lost %s are unknown (the "
                "records themselves are damaged)\n", path, unknown,
                unknown == 1 ? "record or log" : "records or logs");
    if (unknown_synced_records > 0)
        fprintf(stderr, "bblog replay: %s: %" PRIu64 " synced records were cut off the end of "
                "a log; their file ranges are unknown\n", path, unknown_synced_records);
    fprintf(stderr, "bblog replay: %s: %zu damaged %s, %" PRIu64 " of them acknowledged by a "
            "sync (MPI_File_sync or close)\n", path, rep->nlosses,
            rep->nlosses == 1 ? "item" : "items", synced);
    free(ranges);
}

static void replay_summary(const struct bblog_replay_list *list, const char *path,
                           const char *target, const struct bblog_replay_report *rep,
                           int dry_run)
{
    for (size_t i = 0; i < rep->ntorn; i++)
        printf("bblog replay: %s: torn tail dropped (the unacknowledged last write of the "
               "crash)\n", list->logs[rep->torn[i]].meta_path);
    for (size_t i = 0; i < rep->nmissing_ranges; i++) {
        if (rep->missing[i].first == rep->missing[i].last)
            printf("bblog replay: %s: no log of rank %" PRIu32, path, rep->missing[i].first);
        else
            printf("bblog replay: %s: no logs of ranks %" PRIu32 "-%" PRIu32, path,
                   rep->missing[i].first, rep->missing[i].last);
        printf(" (of %" PRIu32 "): nothing logged, drained and removed, or on another node's"
               " burst buffer (replay the logs of all nodes together: bblog(1))\n", rep->nprocs);
    }
    if (rep->records == 0) {
        printf("bblog replay: %s: nothing to replay: its %zu logs hold no undrained data; "
               "file not touched\n", path, rep->nlogs + rep->nempty);
        return;
    }
    if (rep->nempty > 0)
        printf("bblog replay: %s: ignored %zu %s with nothing undrained\n", path, rep->nempty,
               rep->nempty == 1 ? "log" : "logs");
    printf("bblog replay: %s: %s %" PRIu64 " records (%" PRIu64 " bytes) of %zu logs of job %s"
           " (%" PRIu32 " processes) -> %" PRIu64 " bytes in %" PRIu64 " extents",
           path, dry_run ? "would replay" : "replayed", rep->records, rep->bytes_logged,
           rep->nlogs, rep->job_id[0] ? rep->job_id : "-", rep->nprocs, rep->bytes_written,
           rep->extents);
    if (dry_run)
        printf(", up to byte %" PRIu64 "; dry run: nothing written\n", rep->file_end);
    else
        printf(" with %" PRIu64 " writes into %s (%s), up to byte %" PRIu64 "; %" PRIu64
               " drained records skipped\n", rep->pwrites, target,
               rep->created ? "created" : "existing", rep->file_end, rep->stale_records);
    if (rep->nparts > 0)
        printf("bblog replay: %s: in parts: ordered against %zu other %s (%" PRIu64 " of their "
               "records meet this node's); this node wrote only the bytes its records win\n",
               path, rep->nparts, rep->nparts == 1 ? "node's part" : "nodes' parts",
               rep->foreign_records);
}

static int has_job_log(const struct bblog_replay_list *list, const char *path, const char *job)
{
    for (size_t i = 0; i < list->n; i++) {
        const struct bblog_replay_log *l = &list->logs[i];

        if (l->open_rc == 0 && strcmp(l->pfs_path, path) == 0 && strcmp(l->job_id, job) == 0)
            return 1;
    }
    return 0;
}

/* A buffer size ("64m": bblog_size.h), neither 0 nor past half the address space. */
static int parse_size(const char *s, size_t *out)
{
    uint64_t v;

    if (bblog_parse_size(s, SIZE_MAX / 2, &v) != 0 || v == 0)
        return -1;
    *out = (size_t) v;
    return 0;
}

/* The logs of every directory named, in one list: the logs of one file may be spread over
 * several directories (bblog_dir differing per rank, e.g. node-local devices), and one replay
 * must see all of them to apply their records in one order. */
static int discover_all(char **dirs, int n, struct bblog_replay_list *out,
                        struct bblog_replay_err *err)
{
    out->logs = NULL;
    out->n = 0;
    for (int i = 0; i < n; i++) {
        struct bblog_replay_list one;
        struct bblog_replay_log *v;
        int rc = bblog_replay_discover(dirs[i], &one, err);

        if (rc != 0) {
            bblog_replay_list_free(out);
            return rc;
        }
        v = realloc(out->logs, (out->n + one.n + 1) * sizeof *v);
        if (!v) {
            bblog_replay_list_free(&one);
            bblog_replay_list_free(out);
            snprintf(err->path, sizeof err->path, "%s", dirs[i]);
            snprintf(err->reason, sizeof err->reason, "out of memory");
            return ENOMEM;
        }
        memcpy(v + out->n, one.logs, one.n * sizeof *v);
        out->logs = v;
        out->n += one.n;
        free(one.logs);         /* its entries now belong to out */
    }
    return 0;
}

/* ---- status ------------------------------------------------------------------------------ */

enum { STATUS_DRAINED = 0, STATUS_ERROR = 1, STATUS_DRAINING = 2, STATUS_REPLAY = 3 };

struct set_status {
    size_t live;                /* logs a process still holds: an open handle or its drain */
    size_t damaged;             /* corrupt logs, and logs named after the set it can't read */
    int state;
};

static const char *state_name(int state)
{
    return state == STATUS_DRAINING ? "draining" : state == STATUS_REPLAY ? "replay_needed"
        : "drained";
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char) *s < 0x20)
            printf("\\u%04x", (unsigned char) *s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* The state of each set of the list, as far as its logs tell. */
static void set_states(const struct bblog_replay_list *list, const struct bblog_replay_set *sets,
                       size_t nsets, struct set_status *out)
{
    for (size_t j = 0; j < nsets; j++) {
        memset(&out[j], 0, sizeof out[j]);
        out[j].damaged = sets[j].ncorrupt + sets[j].nunreadable;
    }
    for (size_t i = 0; i < list->n; i++) {
        const struct bblog_replay_log *l = &list->logs[i];

        for (size_t j = 0; j < nsets; j++)
            if (l->open_rc == 0 && l->set_id == sets[j].set_id &&
                strcmp(l->pfs_path, sets[j].pfs_path) == 0 &&
                strcmp(l->job_id, sets[j].job_id) == 0 && bblog_log_live(l->meta_path))
                out[j].live++;
    }
    for (size_t j = 0; j < nsets; j++)
        out[j].state = out[j].live > 0 ? STATUS_DRAINING :
            sets[j].undrained_bytes > 0 || out[j].damaged > 0 ? STATUS_REPLAY : STATUS_DRAINED;
}

/* The options of status: -1 to go on, else the exit status. */
static int status_options(int argc, char **argv, const char **file, int *json, int *wait)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { "file", required_argument, NULL, 'f' },
        { "json", no_argument, NULL, 'J' },
        { "wait", no_argument, NULL, 'w' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, "hf:Jw", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            printf("usage: bblog status DIR... [--file PFS_PATH] [--json] [--wait]\n"
                   "Tells, for each file with logs in the DIRs (or only PFS_PATH) and each run\n"
                   "that wrote it, whether its data is still on its way to the PFS: logs that a\n"
                   "live process holds (an open file, or the background drain that goes on\n"
                   "after close with bblog_close=bb) are draining; logs nobody holds with data\n"
                   "in them were left by a crash and need 'bblog replay'.\n"
                   "  -f, --file PFS_PATH   only this file (a file with no logs is drained)\n"
                   "  -J, --json            one JSON object per run and file\n"
                   "  -w, --wait            wait until no live process holds a log, then tell\n"
                   "Exit status: 0 nothing pending, 1 error, 2 draining, 3 replay needed.\n");
            return 0;
        case 'f':
            *file = optarg;
            break;
        case 'J':
            *json = 1;
            break;
        case 'w':
            *wait = 1;
            break;
        default:
            fprintf(stderr, "bblog status: try 'bblog status --help'\n");
            return STATUS_ERROR;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "bblog status: name the log directories, e.g. "
                "'bblog status $BBLOG_DIR --file /pfs/out.dat'\n");
        return STATUS_ERROR;
    }
    return -1;
}

/* One run's line (or JSON object) of status; dir: the first directory named. */
static void status_line(const struct bblog_replay_set *x, const struct set_status *ss, int json,
                        const char *dir)
{
    if (json) {
        printf("{\"file\": ");
        json_str(x->pfs_path);
        printf(", \"job\": ");
        json_str(x->job_id);
        printf(", \"set\": \"%016" PRIx64 "\", \"nprocs\": %" PRIu32 ", \"logs\": %zu, "
               "\"live\": %zu, \"pending_bytes\": %" PRIu64 ", \"damaged\": %zu, "
               "\"state\": \"%s\"}\n", x->set_id, x->nprocs, x->nlogs + x->nunreadable,
               ss->live, x->undrained_bytes, ss->damaged, state_name(ss->state));
        return;
    }
    printf("%s: job %s set %016" PRIx64 ": %s: %zu logs", x->pfs_path,
           x->job_id[0] ? x->job_id : "-", x->set_id, state_name(ss->state),
           x->nlogs + x->nunreadable);
    if (ss->live)
        printf(", %zu held by live processes", ss->live);
    printf(", %" PRIu64 " bytes logged and not marked drained", x->undrained_bytes);
    if (ss->damaged)
        printf(", %zu damaged", ss->damaged);
    if (ss->state == STATUS_REPLAY)
        printf("; no process holds them: run 'bblog replay %s --file %s'", dir, x->pfs_path);
    putchar('\n');
}

static int cmd_status(int argc, char **argv)
{
    const char *file = NULL;
    int json = 0, wait = 0, worst;

    if ((worst = status_options(argc, argv, &file, &json, &wait)) >= 0)
        return worst;
    for (;;) {
        struct bblog_replay_list list = { 0 };
        struct bblog_replay_set *sets = NULL;
        struct set_status *ss = NULL;
        struct bblog_replay_err err;
        size_t nsets = 0, shown = 0;

        if (discover_all(argv + optind, argc - optind, &list, &err) != 0) {
            fprintf(stderr, "bblog status: %s: %s\n", err.path, err.reason);
            return STATUS_ERROR;
        }
        if (bblog_replay_sets(&list, &sets, &nsets) != 0 ||
            !(ss = calloc(nsets ? nsets : 1, sizeof *ss))) {
            oom();
            free(sets);
            bblog_replay_list_free(&list);
            return STATUS_ERROR;
        }
        set_states(&list, sets, nsets, ss);
        worst = STATUS_DRAINED;
        for (size_t j = 0; j < nsets; j++)
            if ((!file || strcmp(sets[j].pfs_path, file) == 0) && ss[j].state > worst)
                worst = ss[j].state;
        for (size_t j = 0; !(wait && worst == STATUS_DRAINING) && j < nsets; j++)
            if (!file || strcmp(sets[j].pfs_path, file) == 0) {
                status_line(&sets[j], &ss[j], json, argv[optind]);
                shown++;
            }
        if (!(wait && worst == STATUS_DRAINING) && shown == 0 && !json)
            printf("%s: no logs: nothing pending\n", file ? file : argv[optind]);
        free(ss);
        free(sets);
        bblog_replay_list_free(&list);
        if (!(wait && worst == STATUS_DRAINING))
            return worst;
        usleep(200000);     /* the tool's poll; a drain takes seconds */
    }
}

/* Of two exit statuses, the one to report: damage outranks an error elsewhere, since it
 * names data that is lost; the decision to gather outranks all (the gathering's replay
 * reports the rest). */
static int worse(int a, int b)
{
    static const int rank[] = { [REPLAY_OK] = 0, [REPLAY_ERROR] = 1, [REPLAY_SALVAGED] = 2,
                                [REPLAY_DAMAGED] = 3, [REPLAY_GATHER] = 4 };

    return rank[b] > rank[a] ? b : a;
}

/* `bblog replay --list`: one paragraph per set of logs (one run's open of one file). */
static void list_sets(const struct bblog_replay_set *sets, size_t n, const char *dir)
{
    if (n == 0)
        printf("%s: no logs found\n", dir);
    for (size_t i = 0; i < n; i++) {
        const struct bblog_replay_set *x = &sets[i];
        char when[64] = "?";
        time_t t = (time_t) (x->create_time_ns / 1000000000u);
        struct tm tm;
        int same_file = (i > 0 && strcmp(sets[i - 1].pfs_path, x->pfs_path) == 0) ||
                        (i + 1 < n && strcmp(sets[i + 1].pfs_path, x->pfs_path) == 0);

        if (localtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S %z", &tm);
        printf("set %016" PRIx64 ": file %s, job %s, %zu of %" PRIu32 " ranks logged%s, "
               "opened %s, %" PRIu64 " bytes undrained", x->set_id, x->pfs_path,
               x->job_id[0] ? x->job_id : "-", x->nlogs + x->nunreadable, x->nprocs,
               x->nunreadable ? " (some unreadable)" : "", when, x->undrained_bytes);
        if (x->ntorn)
            printf(", %zu torn", x->ntorn);
        if (x->ncorrupt || x->nunreadable)
            printf(", %zu DAMAGED", x->ncorrupt + x->nunreadable);
        if (x->undrained_bytes > 0 || x->ncorrupt || x->nunreadable) {
            printf("; replay with: bblog replay %s --file %s", dir, x->pfs_path);
            if (same_file)
                printf(" --set %016" PRIx64, x->set_id);
            if (x->ncorrupt || x->nunreadable)
                printf(" (--salvage for what is intact)");
        } else
            printf("; nothing to replay");
        putchar('\n');
    }
}

static const char replay_help[] =
    "usage: bblog replay DIR... [--list] [--file PFS_PATH] [--job JOB_ID]\n"
    "                        [--set SET] [--salvage] [--output PATH]\n"
    "                        [--dry-run] [--buffer-size BYTES]\n"
    "Applies the undrained records of the logs in each DIR (and DIR/bblog-UID/)\n"
    "to the files they belong to, or only to PFS_PATH, in sync-generation, rank,\n"
    "sequence order. Name every directory the job's ranks logged to (bblog_dir\n"
    "may differ per rank): one replay orders them all. Idempotent: run it again\n"
    "after any failure. A torn tail (records no sync acknowledged, cut by the\n"
    "crash) is dropped; any other damage is reported with the file ranges lost,\n"
    "and nothing is written unless --salvage.\n"
    "  -l, --list            list the crashed runs (sets of logs) and exit\n"
    "  -f, --file PFS_PATH   only the logs of this file (as 'bblog ls' shows it)\n"
    "  -j, --job JOB_ID      only the logs of this job\n"
    "  -s, --set SET         only the logs of this set (one run's open of the\n"
    "                        file, as --list shows it)\n"
    "  -S, --salvage         replay the intact records of damaged logs too\n"
    "  -o, --output PATH     write to PATH instead of PFS_PATH (needs --file)\n"
    "  -n, --dry-run         verify and plan, write nothing\n"
    "  -b, --buffer-size N   bytes gathered per write (k, M, G, T suffixes; 4M)\n"
    "  -p, --parts DIR       replay in parts, one per node (needs --job): publish\n"
    "                        this node's part (its records' metadata) in DIR, a\n"
    "                        directory on the PFS that every node of the job sees\n"
    "                        (made if missing);\n"
    "                        once the parts of all the job's ranks are there, write\n"
    "                        the bytes this node's logs win; if they are not all\n"
    "                        there within --wait, the job is to be recovered by\n"
    "                        gathering its logs (exit status 4)\n"
    "  -N, --node NAME       this node's part is DIR/NAME.part (the host name)\n"
    "  -w, --wait SECONDS    how long to wait for the other nodes' parts (60)\n"
    "  -m, --min-run BYTES   gather instead when the nodes' runs of file-contiguous\n"
    "                        bytes average under BYTES (32k; 0: never)\n"
    "Exit status: 0 replayed, 1 error, 2 damage found (nothing written),\n"
    "3 damage found and the intact data replayed (--salvage), 4 (--parts) the\n"
    "job's recovery was decided to be by gathering its logs: nothing written.\n";

/* --parts, --node and --wait. */
struct parts_opts {
    const char *dir;
    char node[256];
    double wait;
    size_t min_run;
};

/* One of --parts, --node, --wait and --min-run into *po: 0, or 1 once it said what is wrong. */
static int parts_option(int c, const char *arg, struct parts_opts *po)
{
    char *end;

    if (c == 'p') {
        po->dir = arg;
    } else if (c == 'm') {
        if (strcmp(arg, "0") != 0 && parse_size(arg, &po->min_run) != 0) {
            fprintf(stderr, "bblog replay: --min-run %s: give a byte count, e.g. 32k, or 0\n",
                    arg);
            return 1;
        }
        if (strcmp(arg, "0") == 0)
            po->min_run = 0;
    } else if (c == 'N') {
        if (!*arg || *arg == '.' || strchr(arg, '/') || strlen(arg) >= sizeof po->node) {
            fprintf(stderr, "bblog replay: --node %s: give a name without '/' that does not "
                    "start with '.'\n", arg);
            return 1;
        }
        strcpy(po->node, arg);
    } else {
        errno = 0;
        po->wait = strtod(arg, &end);
        if (errno != 0 || end == arg || *end != '\0' || !(po->wait >= 0)) {
            fprintf(stderr, "bblog replay: --wait %s: give seconds, 0 or more\n", arg);
            return 1;
        }
    }
    return 0;
}

/* What --parts takes with it; the node's name from the host's by default. -1 to go on, else the
 * exit status. */
static int parts_check(const struct bblog_replay_opts *ro, int list_only, struct parts_opts *po)
{
    if (!ro->job_id || ro->target || ro->dry_run || list_only) {
        fprintf(stderr, "bblog replay: --parts replays one job's logs in place: it needs --job, "
                "and takes neither --output, --dry-run nor --list\n");
        return 1;
    }
    if (!po->node[0] && gethostname(po->node, sizeof po->node - 1) != 0) {
        fprintf(stderr, "bblog replay: can't get the host name: %s; name the node (--node)\n",
                strerror(errno));
        return 1;
    }
    return -1;
}

/* replay's long options. */
static const struct option replay_long[] = {
    { "help", no_argument, NULL, 'h' },
    { "file", required_argument, NULL, 'f' },
    { "job", required_argument, NULL, 'j' },
    { "output", required_argument, NULL, 'o' },
    { "dry-run", no_argument, NULL, 'n' },
    { "buffer-size", required_argument, NULL, 'b' },
    { "set", required_argument, NULL, 's' },
    { "salvage", no_argument, NULL, 'S' },
    { "list", no_argument, NULL, 'l' },
    { "parts", required_argument, NULL, 'p' },
    { "node", required_argument, NULL, 'N' },
    { "wait", required_argument, NULL, 'w' },
    { "min-run", required_argument, NULL, 'm' },
    { NULL, 0, NULL, 0 },
};

/* The options of replay into *ro and *list_only: -1 to go on, else the exit status. */
static int replay_options(int argc, char **argv, struct bblog_replay_opts *ro, int *list_only,
                          struct parts_opts *po)
{
    char *end;
    int c;

    while ((c = getopt_long(argc, argv, "hf:j:o:nb:s:Slp:N:w:m:", replay_long, NULL)) != -1) {
        switch (c) {
        case 'p':
        case 'N':
        case 'w':
        case 'm':
            if (parts_option(c, optarg, po) != 0)
                return 1;
            break;
        case 'h':
            fputs(replay_help, stdout);
            return 0;
        case 's':
            errno = 0;
            ro->set_id = strtoull(optarg, &end, 16);
            if (errno != 0 || end == optarg || *end != '\0' || ro->set_id == 0) {
                fprintf(stderr, "bblog replay: --set %s: give a set id as 'bblog replay --list' "
                        "shows it (16 hexadecimal digits)\n", optarg);
                return 1;
            }
            break;
        case 'S':
            ro->salvage = 1;
            break;
        case 'l':
            *list_only = 1;
            break;
        case 'f':
            ro->pfs_path = optarg;
            break;
        case 'j':
            ro->job_id = optarg;
            break;
        case 'o':
            ro->target = optarg;
            break;
        case 'n':
            ro->dry_run = 1;
            break;
        case 'b':
            if (parse_size(optarg, &ro->buffer_size) != 0) {
                fprintf(stderr, "bblog replay: --buffer-size %s: give a positive byte count, "
                        "e.g. 4M\n", optarg);
                return 1;
            }
            break;
        default:
            fprintf(stderr, "bblog replay: try 'bblog replay --help'\n");
            return 1;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "bblog replay: name the log directories, e.g. "
                "'bblog replay $BBLOG_DIR --file /pfs/out.dat'\n");
        return 1;
    }
    if (ro->target && !ro->pfs_path) {
        fprintf(stderr, "bblog replay: --output needs --file: it redirects one file's replay\n");
        return 1;
    }
    return po->dir ? parts_check(ro, *list_only, po) : -1;
}

/* A log whose header can't be read may belong to any file: says so, and returns 1 (the replay
 * fails at the end, so that nobody takes a replay that may have missed data for a complete
 * one). A log named after a set is that set's damage, reported by its replay. */
static int unowned_logs(const struct bblog_replay_list *list, const struct bblog_replay_set *sets,
                        size_t nsets)
{
    int status = 0;

    for (size_t i = 0; i < list->n; i++) {
        const struct bblog_replay_log *l = &list->logs[i];
        uint32_t rank;
        size_t j;

        for (j = 0; j < nsets && !bblog_replay_named_in_set(list, &sets[j], l, &rank); j++)
            ;
        if (j < nsets)
            continue;
        if (l->open_rc == BBLOG_EBADMAGIC) {
            printf("bblog replay: %s: not a bblog log; ignored\n", l->meta_path);
        } else if (l->open_rc == BBLOG_EUNBORN) {
            printf("bblog replay: %s: %s; ignored\n", l->meta_path, UNBORN);
        } else if (l->open_rc != 0) {
            fprintf(stderr, "bblog replay: %s: can't read the log (%s): which file it belongs "
                    "to is unknown, so its data is not applied anywhere; check it with 'bblog "
                    "check %s'\n", l->meta_path, open_problem(l), l->meta_path);
            status = 1;
        }
    }
    return status;
}

/* Reports the replay of one file (RC, *rep, *err: bblog_replay_file's); returns the exit
 * status for it. */
static int replay_report(const struct bblog_replay_list *list, const struct bblog_replay_opts *o,
                         int rc, const struct bblog_replay_report *rep,
                         const struct bblog_replay_err *err, const char *dir)
{
    const char *path = o->pfs_path;

    if (rep->nlosses > 0)
        replay_losses(list, path, rep);
    if (rc == 0 || (rc == BBLOG_ECORRUPT && rep->salvaged)) {
        replay_summary(list, path, o->target ? o->target : path, rep, o->dry_run);
        if (rc != 0) {
            fprintf(stderr, "bblog replay: %s: SALVAGED: %s\n", path, err->reason);
            return REPLAY_SALVAGED;
        }
        return 0;
    }
    fprintf(stderr, "bblog replay: %s: %s\n", err->path, err->reason);
    replay_hint(err, dir);
    return rc == BBLOG_ECORRUPT ? REPLAY_DAMAGED : REPLAY_ERROR;
}

/* Replays the logs of one file and reports; returns the exit status for it. */
static int replay_one(const struct bblog_replay_list *list, const struct bblog_replay_opts *ro,
                      const char *path, const char *dir)
{
    struct bblog_replay_report rep;
    struct bblog_replay_opts one = *ro;
    struct bblog_replay_err err;
    int rc, status;

    one.pfs_path = path;
    rc = bblog_replay_file(list, &one, &rep, &err);
    status = replay_report(list, &one, rc, &rep, &err, dir);
    bblog_replay_report_free(&rep);
    return status;
}

/* ---- replay in parts ----------------------------------------------------------------------- */

/* One file of a replay in parts. */
struct part_file {
    struct bblog_replay_opts o;
    struct bblog_replay *r;             /* NULL when its logs could not be selected */
    struct bblog_replay_report rep;
    struct bblog_replay_err err;
    int rc;                             /* bblog_replay_prepare's */
};

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/*
 * Once every part is there: whether the nodes' bytes are cut so finely (their file-contiguous
 * runs average under MIN_RUN bytes: N-1 strided small writes, the nodes' pieces interleaved)
 * that each node writing its own would make a request per small run, where one replay of the
 * gathered logs joins the runs of all nodes into large writes. ALL: every part (their heads
 * say their runs). 1 gather, 0 not, -1 error.
 */
static int too_fine(const struct parts_opts *po, const struct bblog_replay_parts *all)
{
    uint64_t bytes, runs;

    if (po->min_run == 0)
        return 0;
    if (bblog_replay_parts_runs(all, &bytes, &runs) != 0) {
        oom();
        return -1;
    }
    if (runs == 0 || bytes / runs >= po->min_run)
        return 0;
    printf("bblog replay: %s: the nodes' bytes come in runs of %" PRIu64 " bytes on average "
           "(under --min-run %zu): gathering the logs writes them in fewer, larger requests\n",
           po->dir, bytes / runs, po->min_run);
    return 1;
}

/*
 * How the job is recovered, decided with the other nodes: in parts once the parts in DIR
 * account for every rank of every set they name, unless the nodes' bytes are cut too finely
 * (too_fine); by gathering the logs then, or once WAIT seconds have passed without every part.
 * The first node to decide makes the symbolic link DIR/recovery name its choice (one atomic
 * call), and every node follows that link. Returns 0 (in parts), REPLAY_GATHER or
 * REPLAY_ERROR.
 */
static int decide(const struct parts_opts *po)
{
    char link[PATH_MAX], mode[16];
    double end = now_s() + po->wait;

    snprintf(link, sizeof link, "%s/recovery", po->dir);
    for (;;) {
        struct bblog_replay_parts all;
        struct bblog_replay_err err;
        ssize_t n = readlink(link, mode, sizeof mode - 1);
        const char *want = NULL;
        int complete, fine;

        if (n > 0) {
            mode[n] = '\0';
            if (strcmp(mode, "parts") == 0 || strcmp(mode, "gather") == 0)
                return strcmp(mode, "parts") == 0 ? 0 : REPLAY_GATHER;
            fprintf(stderr, "bblog replay: %s: names '%s', neither 'parts' nor 'gather'\n",
                    link, mode);
            return REPLAY_ERROR;
        }
        if (errno != ENOENT) {
            fprintf(stderr, "bblog replay: %s: %s\n", link, strerror(errno));
            return REPLAY_ERROR;
        }
        if (bblog_replay_parts_read(po->dir, NULL, 0, &all, &err) != 0 ||
            (complete = bblog_replay_parts_complete(&all, &err)) > 1 || complete < 0) {
            fprintf(stderr, "bblog replay: %s: %s\n", err.path, err.reason);
            bblog_replay_parts_free(&all);
            return REPLAY_ERROR;
        }
        fine = complete ? too_fine(po, &all) : 0;
        bblog_replay_parts_free(&all);
        if (fine < 0)
            return REPLAY_ERROR;
        if (complete)
            want = fine ? "gather" : "parts";
        else if (now_s() >= end)
            want = "gather";
        if (want && symlink(want, link) != 0 && errno != EEXIST) {
            fprintf(stderr, "bblog replay: %s: can't record the decision: %s\n", link,
                    strerror(errno));
            return REPLAY_ERROR;
        }
        if (!want)
            usleep(200000);     /* the other nodes' epilogs start within seconds */
    }
}

/* Pass 1 of every file of the job, and this node's part file; *nf files in *out. */
static int prepare_files(const struct bblog_replay_list *list, const struct bblog_replay_opts *ro,
                         const struct parts_opts *po, struct part_file **out, size_t *nf)
{
    const char **paths = NULL;
    size_t npaths = 0, np = 0;
    struct part_file *f = NULL;
    struct bblog_replay_part *parts = NULL;
    struct bblog_replay_err err;
    char path[PATH_MAX];
    int status = 0;

    if (ro->pfs_path) {
        if (!(paths = malloc(sizeof *paths)))
            goto oom;
        paths[npaths++] = ro->pfs_path;
    } else if (bblog_replay_paths(list, &paths, &npaths) != 0) {
        goto oom;
    }
    f = calloc(npaths + 1, sizeof *f);
    parts = calloc(npaths + 1, sizeof *parts);
    if (!f || !parts)
        goto oom;
    *nf = 0;
    for (size_t i = 0; i < npaths; i++) {
        struct part_file *x = &f[*nf];

        if (!has_job_log(list, paths[i], ro->job_id))
            continue;
        x->o = *ro;
        x->o.pfs_path = paths[i];
        x->rc = bblog_replay_prepare(list, &x->o, &x->r, &x->rep, &x->err);
        (*nf)++;
        if (!x->r || x->rc != 0)        /* reported after the decision, with the others */
            status = REPLAY_ERROR;
        if (x->r && x->rep.nprocs > 0 && bblog_replay_part_of(x->r, &parts[np++]) != 0)
            goto oom;
    }
    snprintf(path, sizeof path, "%s/%s.part", po->dir, po->node);
    /* Made by the first node if missing (the write below says why when it can't be). */
    (void) mkdir(po->dir, 0700);
    if (bblog_replay_parts_write(path, parts, np, &err) != 0) {
        fprintf(stderr, "bblog replay: %s: %s\n", err.path, err.reason);
        status = REPLAY_ERROR;
    } else {
        printf("bblog replay: %s: this node's part: %zu %s of job %s\n", path, np,
               np == 1 ? "file" : "files", ro->job_id);
    }
    for (size_t i = 0; i < np; i++)
        bblog_replay_part_release(&parts[i]);
    free(parts);
    free(paths);
    *out = f;
    return status;
oom:
    oom();
    free(paths);
    free(parts);
    free(f);
    *out = NULL;
    return -1;
}

/* How much of the other nodes' parts was read: the blocks near this node's bytes. */
static void read_summary(const struct parts_opts *po, const struct bblog_replay_parts *others)
{
    uint64_t read = 0, all = 0;

    for (size_t i = 0; i < others->n; i++) {
        read += others->v[i].nread;
        all += others->v[i].nrecs;
    }
    printf("bblog replay: %s: the other nodes' parts: %" PRIu64 " of their %" PRIu64
           " records read (those near this node's bytes)\n", po->dir, read, all);
}

/* The other nodes' parts, with the records that may meet the bytes this node's files write. */
static int read_others(const struct parts_opts *po, const struct part_file *f, size_t nf,
                       struct bblog_replay_parts *others)
{
    struct bblog_replay_want *w = calloc(nf + 1, sizeof *w);
    struct bblog_replay_err err;
    char own[PATH_MAX];
    size_t n = 0;
    int rc = w ? 0 : ENOMEM;

    for (size_t i = 0; rc == 0 && i < nf; i++) {
        uint64_t *r;

        if (f[i].rc != 0 || !f[i].r || (rc = bblog_replay_ranges(f[i].r, &r, &w[n].n)) != 0)
            continue;
        w[n].pfs_path = f[i].o.pfs_path;
        w[n++].ranges = r;
    }
    snprintf(own, sizeof own, "%s.part", po->node);
    if (rc != 0)
        oom();
    else if ((rc = bblog_replay_parts_read_for(po->dir, own, w, n, others, &err)) != 0)
        fprintf(stderr, "bblog replay: %s: %s\n", err.path, err.reason);
    else
        read_summary(po, others);
    for (size_t i = 0; i < n; i++)
        free((void *) w[i].ranges);
    free(w);
    return rc;
}

/* `bblog replay --parts`: this node's part of the job's recovery (bblog_replay.h). */
static int replay_in_parts(const struct bblog_replay_list *list,
                           const struct bblog_replay_opts *ro, const struct parts_opts *po,
                           const char *dir)
{
    struct part_file *f;
    struct bblog_replay_parts others = { 0 };
    size_t nf = 0;
    int status = prepare_files(list, ro, po, &f, &nf), how = REPLAY_ERROR;

    if (status >= 0)
        how = decide(po);
    if (how == REPLAY_GATHER)
        printf("bblog replay: %s/recovery: the job's logs are to be gathered and replayed "
               "together (not every node's part came within %g s, or their bytes are cut too "
               "finely): nothing written\n", po->dir, po->wait);
    else if (how == 0 && read_others(po, f, nf, &others) != 0)
        how = REPLAY_ERROR;
    for (size_t i = 0; status >= 0 && i < nf; i++) {
        int rc = f[i].rc;

        if (rc == 0 && how == 0)
            rc = bblog_replay_finish(f[i].r, &others);
        if (rc != 0 || how == 0)
            status = worse(status, replay_report(list, &f[i].o, rc, &f[i].rep, &f[i].err, dir));
        bblog_replay_free(f[i].r);
        bblog_replay_report_free(&f[i].rep);
    }
    bblog_replay_parts_free(&others);
    free(f);
    if (status < 0)
        return REPLAY_ERROR;
    return how != 0 ? how : status;
}

static int cmd_replay(int argc, char **argv)
{
    struct bblog_replay_opts ro = { 0 };
    struct bblog_replay_list list = { 0 };
    struct bblog_replay_err err;
    struct bblog_replay_set *sets = NULL;
    struct parts_opts po = { .wait = 60, .min_run = 32 << 10 };
    const char **paths = NULL, *dir;
    size_t npaths = 0, nsets = 0;
    int list_only = 0, status;

    if ((status = replay_options(argc, argv, &ro, &list_only, &po)) >= 0)
        return status;
    status = 0;
    dir = argv[optind];
    if (discover_all(argv + optind, argc - optind, &list, &err) != 0) {
        fprintf(stderr, "bblog replay: %s: %s\n", err.path, err.reason);
        return 1;
    }
    if (bblog_replay_sets(&list, &sets, &nsets) != 0)
        goto oom;
    if (list_only) {
        list_sets(sets, nsets, dir);
        goto out;
    }
    status = unowned_logs(&list, sets, nsets);
    if (po.dir) {
        status = worse(status, replay_in_parts(&list, &ro, &po, dir));
        goto out;
    }
    if (ro.pfs_path) {
        if (!(paths = malloc(sizeof *paths)))
            goto oom;
        paths[0] = ro.pfs_path;
        npaths = 1;
    } else if (bblog_replay_paths(&list, &paths, &npaths) != 0) {
        goto oom;
    }
    if (npaths == 0)
        printf("bblog replay: %s%s: no logs found: nothing to replay\n", dir,
               argc - optind > 1 ? " and the other directories" : "");
    for (size_t i = 0; i < npaths; i++)
        /* --job without --file: the files that job has logs of. */
        if (!ro.job_id || ro.pfs_path || has_job_log(&list, paths[i], ro.job_id))
            status = worse(status, replay_one(&list, &ro, paths[i], dir));
    goto out;
oom:
    oom();
    status = 1;
out:
    free(sets);
    free(paths);
    bblog_replay_list_free(&list);
    return status;
}

/* The commands: name, entry, its lines of the usage text, and the exit status when its output
 * cannot be written (check's says "unreadable"; the others' are errors). */
static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
    int write_failed;
} commands[] = {
    {"ls", cmd_ls,
     "  ls DIR|LOG...        list the logs in DIR (and DIR/bblog-UID/): file, job, rank,\n"
     "                       epoch, state and undrained bytes of each\n", 1},
    {"dump", cmd_dump,
     "  dump LOG             print a log's header and every record\n", 1},
    {"check", cmd_check,
     "  check [-q] LOG...    verify every checksum; exit 0 clean, 1 torn tail, 2 corrupt,\n"
     "                       3 unreadable or not a log\n", CHECK_UNREADABLE},
    {"status", cmd_status,
     "  status DIR... [--file PFS_PATH] [--json] [--wait]\n"
     "                       what is still on its way to the PFS: per file and run, the logs\n"
     "                       a live process still drains and those a crash left; exit 0\n"
     "                       nothing pending, 1 error, 2 draining, 3 replay needed\n", 1},
    {"replay", cmd_replay,
     "  replay DIR... [--list] [--file PFS_PATH] [--job JOB_ID] [--set SET] [--salvage]\n"
     "                       [--output PATH] [--dry-run] [--buffer-size BYTES]\n"
     "                       apply the undrained data of the logs in the DIRs to their files;\n"
     "                       exit 0 replayed, 1 error, 2 damage found (nothing written),\n"
     "                       3 damage found, intact data salvaged\n", 1},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
    size_t i;

    fputs("usage: bblog COMMAND [OPTION]... ARG...\n\n"
          "Lists, checks and replays the burst-buffer logs bblog keeps for MPI-IO files.\n\n"
          "commands:\n", f);
    for (i = 0; i < NCOMMANDS; i++)
        fputs(commands[i].help, f);
    fputs("\nLOG is a log's .meta file (its .data file or base name are accepted too).\n"
          "Run 'bblog COMMAND --help' for a command's options; see bblog(1).\n", f);
}

int main(int argc, char **argv)
{
    const struct command *c = NULL;
    const char *cmd;
    char *name;
    size_t i;
    int status = 1;

    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("bblog %s (log format %u)\n", PACKAGE_VERSION, BBLOG_FORMAT_VERSION);
        return 0;
    }
    for (i = 0; i < NCOMMANDS && !c; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            c = &commands[i];
    if (!c) {
        fprintf(stderr, "bblog: unknown command '%s'; try 'bblog --help'\n", cmd);
        return 1;
    }
    /* Each command parses its own options; getopt's messages then start with "bblog CMD". */
    if (asprintf(&name, "bblog %s", cmd) < 0) {
        oom();
        return 1;
    }
    argv[1] = name;
    status = c->run(argc - 1, argv + 1);
    /* A listing cut short by a full disk or a closed pipe must not look complete. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "bblog: can't write the output: %s\n", strerror(errno));
        if (status == 0)
            status = c->write_failed;
    }
    free(name);
    return status;
}
