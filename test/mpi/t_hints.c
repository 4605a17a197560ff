/*
 * ROMIO hints pass through bblog, and bblog reports its own (DESIGN.md sections 3 and 7):
 *  argv[1]          romio_no_indep_rw=true, collective access only (deferred open);
 *  argv[1].cb1      cb_nodes=1, romio_cb_write=enable, cb_buffer_size=64k (many two-phase rounds);
 *  argv[1].cbwdis   romio_cb_write=disable (collective calls become independent);
 *  argv[1].ni1      romio_no_indep_rw=true and cb_nodes=1: only one process opens the file;
 *  argv[1].mode     bblog_mode=bb with bblog_close=pfs: the mode sets drain and sync, the
 *                   hint given apart wins for close.
 * Each file: strided collective writes through a view, a contiguous collective write, collective
 * read-back. MPI_File_get_info must echo the ROMIO hints; on bblog it must also list every
 * bblog_* key of the hint specification with the value in force (TEST_HINTS, else BBLOG_*
 * environment, else the default). On Open MPI 4.1, MPI_File_get_info answers from the info given
 * to the open, not from ROMIO (see check_info_ompi): there it must echo exactly the hints given,
 * and on a bblog file also list the bblog_* keys in force, which the graft's hook adds.
 */
#include "common.h"

#include <ctype.h>
#include <limits.h>

#define BLK 1024
#define NB 64

struct hint {
    const char *key, *val;
};

/* Parses a bblog size ("123", "64k", "16M", "1g"); -1 if malformed. */
static long long parse_size(const char *s)
{
    char *end;
    long long v;

    if (!s || !isdigit((unsigned char)*s))
        return -1;
    v = strtoll(s, &end, 10);
    switch (tolower((unsigned char)*end)) {
    case 'k': v <<= 10; end++; break;
    case 'm': v <<= 20; end++; break;
    case 'g': v <<= 30; end++; break;
    default: break;
    }
    return *end ? -1 : v;
}

/* The value in force for a bblog key: info of the open call, TEST_HINTS, environment, default. */
static const char *expected(const char *key, const struct hint *own, int nown, const char *dflt)
{
    static char envname[64];
    const char *v;

    for (int i = 0; i < nown; i++)
        if (strcmp(own[i].key, key) == 0)
            return own[i].val;
    if ((v = tst_hint(key)) != NULL)
        return v;
    snprintf(envname, sizeof envname, "BBLOG_%s", key + strlen("bblog_"));
    for (char *p = envname; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    if ((v = getenv(envname)) != NULL && *v)
        return v;
    return dflt;
}

/* Open MPI 4.1: MPI_File_get_info (ompi/mpi/c/file_get_info.c) returns a copy of the info the
 * file was opened with (fh->super.s_info, opal_info_dup_mpistandard) and never calls the io
 * component's file_get_info, which would ask ROMIO (io/romio321/src/io_romio321_file_open.c).
 * So ROMIO's hints in force do not reach the caller: every hint given (the open's info and
 * TEST_HINTS, which tst_open merges) comes back with the value given, and through plain ROMIO a
 * bblog key not given is absent. On a bblog file the graft's hook (adio/graft/graft.py, Open MPI
 * 4.1) adds the driver's bblog_* keys in force, checked as on MPICH (check_info), whose
 * MPI_File_get_info is ROMIO's and returns fd->info as the drivers set it. */
static void check_info_ompi(MPI_File fh, const char *fname, const struct hint *own, int nown)
{
    static const char *const bb[] = {"bblog_mapping", "bblog_drain", "bblog_sync",
                                     "bblog_close", "bblog_flush_buffer_size", "bblog_max_size",
                                     "bblog_keep_logs", "bblog_stats", "bblog_dir"};
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag;

    CHECK_MPI(MPI_File_get_info(fh, &info));
    for (int i = 0; i < nown; i++) {
        flag = 0;
        CHECK_MPI(MPI_Info_get(info, own[i].key, MPI_MAX_INFO_VAL, val, &flag));
        CHECK(flag && strcmp(val, own[i].val) == 0, "%s: Open MPI get_info %s = %s, expected "
              "%s as given", fname, own[i].key, flag ? val : "(missing)", own[i].val);
    }
    for (size_t i = 0; i < sizeof bb / sizeof bb[0]; i++) {
        const char *given = tst_hint(bb[i]);
        for (int j = 0; j < nown; j++)
            if (strcmp(own[j].key, bb[i]) == 0)
                given = own[j].val;
        flag = 0;
        CHECK_MPI(MPI_Info_get(info, bb[i], MPI_MAX_INFO_VAL, val, &flag));
        if (given)
            CHECK(flag && strcmp(val, given) == 0, "%s: Open MPI get_info %s = %s, expected %s "
                  "as given", fname, bb[i], flag ? val : "(missing)", given);
        else
            CHECK(!flag, "%s: Open MPI get_info lists %s = %s, which was not given (Open MPI "
                  "4.1 answers from the open's info only)", fname, bb[i], val);
    }
    MPI_Info_free(&info);
}

/* What bblog_mode, given in the info of the open call or in TEST_HINTS (both MPI_Info, above
 * the environment), makes of drain, sync and close where they are not given themselves at that
 * level; NULL when no mode is given there. */
static const char *from_mode(const char *key, const struct hint *own, int nown)
{
    const char *mode = NULL;

    for (int i = 0; i < nown; i++)
        if (strcmp(own[i].key, key) == 0)
            return NULL;
    if (tst_hint(key))
        return NULL;
    for (int i = 0; i < nown; i++)
        if (strcmp(own[i].key, "bblog_mode") == 0)
            mode = own[i].val;
    if (!mode)
        mode = tst_hint("bblog_mode");
    if (!mode)
        return NULL;
    if (strcmp(key, "bblog_drain") == 0)
        return strcmp(mode, "bb") == 0 ? "proactive" : "on_demand";
    return strcmp(mode, "bb") == 0 ? "bb" : "pfs";
}

static void check_info(MPI_File fh, const char *fname, const struct hint *own, int nown)
{
    static const struct {
        const char *key, *dflt;
        int is_size;
    } bb[] = {
        {"bblog_mapping", "process", 0},     {"bblog_drain", "on_demand", 0},
        {"bblog_sync", "pfs", 0},            {"bblog_close", "pfs", 0},
        {"bblog_flush_buffer_size", "16m", 1}, {"bblog_max_size", "0", 1},
        {"bblog_keep_logs", "false", 0},     {"bblog_stats", "off", 0},
        {"bblog_through_threshold", "1m", 1}, {"bblog_dir", NULL, 0},
    };
    MPI_Info info;
    char val[MPI_MAX_INFO_VAL + 1];
    int flag;

    CHECK_MPI(MPI_File_get_info(fh, &info));
    for (int i = 0; i < nown; i++) {
        if (strncmp(own[i].key, "bblog_", 6) == 0)
            continue;
        flag = 0;
        CHECK_MPI(MPI_Info_get(info, own[i].key, MPI_MAX_INFO_VAL, val, &flag));
        CHECK(flag && strcmp(val, own[i].val) == 0, "%s: get_info %s = %s, expected %s", fname,
              own[i].key, flag ? val : "(missing)", own[i].val);
    }
    if (tst_is_bblog(fname)) {
        for (size_t i = 0; i < sizeof bb / sizeof bb[0]; i++) {
            const char *want = from_mode(bb[i].key, own, nown);
            if (!want || (strcmp(bb[i].key, "bblog_drain") && strcmp(bb[i].key, "bblog_sync") &&
                          strcmp(bb[i].key, "bblog_close")))
                want = expected(bb[i].key, own, nown, bb[i].dflt);
            flag = 0;
            CHECK_MPI(MPI_Info_get(info, bb[i].key, MPI_MAX_INFO_VAL, val, &flag));
            CHECK(flag, "%s: get_info does not list %s", fname, bb[i].key);
            if (!flag || !want)
                continue;
            if (bb[i].is_size)
                CHECK(parse_size(val) == parse_size(want),
                      "%s: get_info %s = %s, expected %s", fname, bb[i].key, val, want);
            else if (strcmp(bb[i].key, "bblog_dir") == 0) {
                char a[PATH_MAX], b[PATH_MAX];
                CHECK(strcmp(val, want) == 0 ||
                      (realpath(val, a) && realpath(want, b) && strcmp(a, b) == 0),
                      "%s: get_info bblog_dir = %s, expected %s", fname, val, want);
            } else
                CHECK(strcmp(val, want) == 0, "%s: get_info %s = %s, expected %s", fname,
                      bb[i].key, val, want);
        }
    }
    MPI_Info_free(&info);
}

static int64_t blk_off(int i, int rank)
{
    return ((int64_t)i * tst_size + rank) * BLK;
}

static void one_file(const char *fname, const struct hint *own, int nown, int gen,
                     struct tst_image *img)
{
    MPI_Info info;
    MPI_File fh;
    MPI_Datatype v, vr;
    MPI_Status st;
    unsigned char *buf = malloc(NB * BLK), *rd = malloc(NB * BLK);
    struct tst_list fx = {0}, mx = {0};
    int64_t tail = (int64_t)NB * BLK * tst_size;

    REQUIRE(buf && rd, "out of memory");
    MPI_Info_create(&info);
    for (int i = 0; i < nown; i++)
        MPI_Info_set(info, own[i].key, own[i].val);
    tst_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    if (tst_romio_321() && !tst_is_bblog(fname))
        check_info_ompi(fh, fname, own, nown);
    else
        check_info(fh, fname, own, nown);

    MPI_Type_vector(NB, BLK, BLK * tst_size, MPI_BYTE, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)NB * BLK * tst_size, &vr);
    MPI_Type_commit(&vr);
    for (int i = 0; i < NB; i++)
        tst_list_add(&fx, blk_off(i, tst_rank), BLK);
    tst_list_add(&mx, 0, NB * BLK);
    tst_stream_fill(buf, &mx, &fx, tst_rank, gen);
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)tst_rank * BLK, MPI_BYTE, vr, "native",
                                MPI_INFO_NULL));
    CHECK_MPI(MPI_File_write_all(fh, buf, NB * BLK, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    tst_fill(buf, 5000, tail + tst_rank * 5000, tst_rank, gen + 1);
    CHECK_MPI(MPI_File_write_at_all(fh, tail + tst_rank * 5000, buf, 5000, MPI_BYTE, &st));

    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)tst_rank * BLK, MPI_BYTE, vr, "native",
                                MPI_INFO_NULL));
    memset(rd, 0, NB * BLK);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, rd, NB * BLK, MPI_BYTE, &st));
    tst_stream_verify(rd, &mx, &fx, tst_rank, gen, fname);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    memset(rd, 0, 5000);
    CHECK_MPI(MPI_File_read_at_all(fh, tail + tst_rank * 5000, rd, 5000, MPI_BYTE, &st));
    tst_verify(rd, 5000, tail + tst_rank * 5000, tst_rank, gen + 1, fname);
    CHECK_MPI(MPI_File_close(&fh));

    tst_img_init(img);
    for (int r = 0; r < tst_size; r++) {
        for (int i = 0; i < NB; i++)
            tst_img_write(img, blk_off(i, r), BLK, r, gen);
        tst_img_write(img, tail + r * 5000, 5000, r, gen + 1);
    }
    MPI_Type_free(&vr);
    MPI_Type_free(&v);
    tst_list_free(&fx);
    tst_list_free(&mx);
    free(buf);
    free(rd);
}

int main(int argc, char **argv)
{
    const char *name = tst_init(&argc, &argv);
    static const struct hint h0[] = {{"romio_no_indep_rw", "true"}};
    static const struct hint h1[] = {{"cb_nodes", "1"}, {"romio_cb_write", "enable"},
                                     {"cb_buffer_size", "65536"}, {"bblog_sync", "pfs"}};
    static const struct hint h2[] = {{"romio_cb_write", "disable"}};
    static const struct hint h3[] = {{"romio_no_indep_rw", "true"}, {"cb_nodes", "1"}};
    /* The mode, and one of the hints it sets given apart (which wins). */
    static const struct hint h4[] = {{"bblog_mode", "bb"}, {"bblog_close", "pfs"}};
    const struct {
        const char *suffix;
        const struct hint *h;
        int n;
    } files[] = {{"", h0, 1}, {".cb1", h1, 4}, {".cbwdis", h2, 1}, {".ni1", h3, 2},
                 {".mode", h4, 2}};

    for (int f = 0; f < 5; f++) {
        char *fname = tst_name(name, files[f].suffix);
        struct tst_image img;
        one_file(fname, files[f].h, files[f].n, 2 * f, &img);
        tst_check_file(MPI_COMM_WORLD, fname, &img);
        tst_img_free(&img);
        free(fname);
    }
    return tst_finalize();
}
