/* Helpers shared by the MPI differential test programs; see common.h. */
#define _GNU_SOURCE /* dladdr */
#include "common.h"

#include <dlfcn.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tst_rank;
int tst_size;
const char *tst_prog = "t_?";

static long failures;

/* At most this many differing bytes are printed per comparison: enough to see the shape of a
 * difference (shift, hole, stale generation) without flooding the log. */
#define MAX_REPORT 5

long tst_failures(void)
{
    return failures;
}

void tst_abort(void)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2); /* MPI_Abort does not return; this keeps the noreturn promise if it did */
}

void tst_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s rank %d: %s:%d: FAIL: %s\n", tst_prog, tst_rank, file, line, msg);
    fflush(stderr);
    failures++;
}

const char *tst_err_string(int rc)
{
    static char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;

    if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
        snprintf(s, sizeof s, "(no error string for code %d)", rc);
    else
        s[len] = '\0';
    return s;
}

int tst_err_class(int rc)
{
    int cls = -1;

    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        return -1;
    return cls;
}

const char *tst_class_name(int cls)
{
    static char other[32];

    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY";
    case MPI_ERR_NOT_SAME: return "MPI_ERR_NOT_SAME";
    case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE";
    case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS";
    case MPI_ERR_BAD_FILE: return "MPI_ERR_BAD_FILE";
    case MPI_ERR_READ_ONLY: return "MPI_ERR_READ_ONLY";
    case MPI_ERR_FILE: return "MPI_ERR_FILE";
    case MPI_ERR_IO: return "MPI_ERR_IO";
    case MPI_ERR_NO_SPACE: return "MPI_ERR_NO_SPACE";
    case MPI_ERR_FILE_EXISTS: return "MPI_ERR_FILE_EXISTS";
    case MPI_ERR_AMODE: return "MPI_ERR_AMODE";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
    default:
        snprintf(other, sizeof other, "error class %d", cls);
        return other;
    }
}

void tst_mpi_fatal(int rc, const char *what, const char *file, int line)
{
    fprintf(stderr, "%s rank %d: %s:%d: FATAL: %s failed: [%s] %s\n", tst_prog, tst_rank, file,
            line, what, tst_class_name(tst_err_class(rc)), tst_err_string(rc));
    failures++;
    tst_abort();
}

const char *tst_init(int *argc, char ***argv)
{
    const char *slash;
    int inited;

    MPI_Initialized(&inited);
    if (!inited)                /* a program may have called MPI_Init_thread itself */
        MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &tst_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tst_size);
    slash = strrchr((*argv)[0], '/');
    tst_prog = slash ? slash + 1 : (*argv)[0];
    /* Files get MPI_ERRORS_RETURN by default; set it explicitly, since the checks rely on it. */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    if (*argc < 2) {
        if (tst_rank == 0)
            fprintf(stderr, "usage: %s FILE (ufs:/path, bblog:/path or /path)\n", tst_prog);
        MPI_Finalize();
        exit(2);
    }
    return (*argv)[1];
}

int tst_finalize(void)
{
    long mine = failures, all = 0;

    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (tst_rank == 0) {
        if (all == 0)
            printf("%s: %d ranks: ok\n", tst_prog, tst_size);
        else
            printf("%s: %d ranks: %ld failures\n", tst_prog, tst_size, all);
        fflush(stdout);
    }
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}

void tst_fill(void *buf, size_t len, int64_t off, int writer, int gen)
{
    unsigned char *p = buf;

    for (size_t i = 0; i < len; i++)
        p[i] = tst_pattern(off + (int64_t)i, writer, gen);
}

/* Reports one mismatching byte. */
static void report_byte(const char *what, int64_t off, unsigned got, unsigned expect)
{
    fprintf(stderr, "%s rank %d:   %s: offset %lld: got 0x%02x, expected 0x%02x\n", tst_prog,
            tst_rank, what, (long long)off, got, expect);
}

size_t tst_verify(const void *buf, size_t len, int64_t off, int writer, int gen,
                  const char *what)
{
    const unsigned char *p = buf;
    size_t bad = 0;
    size_t first = 0;

    for (size_t i = 0; i < len; i++) {
        unsigned char e = tst_pattern(off + (int64_t)i, writer, gen);
        if (p[i] != e) {
            if (bad == 0)
                first = i;
            if (bad < MAX_REPORT)
                report_byte(what, off + (int64_t)i, p[i], e);
            bad++;
        }
    }
    if (bad)
        tst_fail(__FILE__, __LINE__,
                 "%s: %zu of %zu bytes differ from pattern(writer %d, gen %d), first at "
                 "offset %lld",
                 what, bad, len, writer, gen, (long long)(off + (int64_t)first));
    return bad;
}

size_t tst_compare(const void *buf, const void *expect, size_t len, int64_t off,
                   const char *what)
{
    const unsigned char *p = buf, *e = expect;
    size_t bad = 0;
    size_t first = 0;

    for (size_t i = 0; i < len; i++) {
        if (p[i] != e[i]) {
            if (bad == 0)
                first = i;
            if (bad < MAX_REPORT)
                report_byte(what, off + (int64_t)i, p[i], e[i]);
            bad++;
        }
    }
    if (bad)
        tst_fail(__FILE__, __LINE__, "%s: %zu of %zu bytes differ, first at offset %lld", what,
                 bad, len, (long long)(off + (int64_t)first));
    return bad;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p) {
        fprintf(stderr, "%s rank %d: out of memory (%zu bytes)\n", tst_prog, tst_rank, n);
        tst_abort();
    }
    return p;
}

static void *xrealloc(void *old, size_t n)
{
    void *p = realloc(old, n ? n : 1);

    if (!p) {
        fprintf(stderr, "%s rank %d: out of memory (%zu bytes)\n", tst_prog, tst_rank, n);
        tst_abort();
    }
    return p;
}

char *tst_name(const char *base, const char *suffix)
{
    size_t a = strlen(base), b = strlen(suffix);
    char *s = xmalloc(a + b + 1);

    memcpy(s, base, a);
    memcpy(s + a, suffix, b + 1);
    return s;
}

const char *tst_plain_path(const char *name)
{
    const char *colon = strchr(name, ':');

    /* ROMIO skips a prefix only when it is longer than one character (Windows drive letters). */
    if (colon && colon - name > 1)
        return colon + 1;
    return name;
}

int tst_is_bblog(const char *name)
{
    const char *force = getenv("ROMIO_FSTYPE_FORCE");

    if (strncmp(name, "bblog:", 6) == 0)
        return 1;
    if (tst_plain_path(name) != name)
        return 0; /* another explicit prefix wins over nothing; ROMIO_FSTYPE_FORCE wins over all */
    return force && strncmp(force, "bblog", 5) == 0;
}

/* Splits TEST_HINTS into key/value pairs and calls fn on each. Malformed items (no '=') abort:
 * a typo in the runner must not silently test the defaults. */
static void each_hint(void (*fn)(const char *key, const char *val, void *arg), void *arg)
{
    const char *env = getenv("TEST_HINTS");
    char *copy, *save = NULL, *item;

    if (!env || !*env)
        return;
    copy = tst_name(env, "");
    for (item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        if (!eq || eq == item) {
            fprintf(stderr, "%s: malformed TEST_HINTS item '%s' (want key=value)\n", tst_prog,
                    item);
            free(copy);
            tst_abort();
        }
        *eq = '\0';
        fn(item, eq + 1, arg);
    }
    free(copy);
}

static void set_one(const char *key, const char *val, void *arg)
{
    MPI_Info *info = arg;

    CHECK_MPI(MPI_Info_set(*info, key, val));
}

MPI_Info tst_info(void)
{
    MPI_Info info;

    CHECK_MPI(MPI_Info_create(&info));
    each_hint(set_one, &info);
    return info;
}

struct find_arg {
    const char *key;
    char *val;
};

static void find_one(const char *key, const char *val, void *arg)
{
    struct find_arg *f = arg;

    if (strcmp(key, f->key) == 0) {
        free(f->val);
        f->val = tst_name(val, "");
    }
}

const char *tst_hint(const char *key)
{
    static char *last;
    struct find_arg f = {key, NULL};

    each_hint(find_one, &f);
    free(last);
    last = f.val;
    return last;
}

int tst_open_rc(MPI_Comm comm, const char *name, int amode, MPI_Info extra, MPI_File *fh)
{
    MPI_Info info = tst_info();
    int rc;

    if (extra != MPI_INFO_NULL) {
        int nkeys = 0;
        CHECK_MPI(MPI_Info_get_nkeys(extra, &nkeys));
        for (int i = 0; i < nkeys; i++) {
            char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
            int vlen = 0, flag = 0;
            CHECK_MPI(MPI_Info_get_nthkey(extra, i, key));
            CHECK_MPI(MPI_Info_get_valuelen(extra, key, &vlen, &flag));
            CHECK_MPI(MPI_Info_get(extra, key, MPI_MAX_INFO_VAL, val, &flag));
            CHECK_MPI(MPI_Info_set(info, key, val));
        }
    }
    rc = MPI_File_open(comm, name, amode, info, fh);
    MPI_Info_free(&info);
    return rc;
}

void tst_open(MPI_Comm comm, const char *name, int amode, MPI_Info extra, MPI_File *fh)
{
    int rc = tst_open_rc(comm, name, amode, extra, fh);

    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "%s rank %d: MPI_File_open(%s) failed: [%s] %s\n", tst_prog, tst_rank,
                name, tst_class_name(tst_err_class(rc)), tst_err_string(rc));
        failures++;
        tst_abort();
    }
}

void tst_list_add(struct tst_list *l, int64_t off, int64_t len)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->e = xrealloc(l->e, l->cap * sizeof *l->e);
    }
    l->e[l->n].off = off;
    l->e[l->n].len = len;
    l->n++;
}

void tst_list_free(struct tst_list *l)
{
    free(l->e);
    l->e = NULL;
    l->n = l->cap = 0;
}

int64_t tst_list_bytes(const struct tst_list *l)
{
    int64_t sum = 0;

    for (size_t i = 0; i < l->n; i++)
        sum += l->e[i].len;
    return sum;
}

/* Calls fn(mem_pos, file_off, n) for each maximal run where both sides are contiguous. */
static void stream_walk(const struct tst_list *memx, const struct tst_list *filex,
                        void (*fn)(int64_t m, int64_t f, int64_t n, void *arg), void *arg)
{
    size_t im = 0, iff = 0;
    int64_t um = 0, uf = 0; /* bytes of the current extent already consumed */

    REQUIRE(tst_list_bytes(memx) == tst_list_bytes(filex),
            "test bug: memory side has %lld bytes, file side %lld",
            (long long)tst_list_bytes(memx), (long long)tst_list_bytes(filex));
    while (im < memx->n && iff < filex->n) {
        int64_t lm = memx->e[im].len - um, lf = filex->e[iff].len - uf;
        int64_t n = lm < lf ? lm : lf;
        if (n > 0)
            fn(memx->e[im].off + um, filex->e[iff].off + uf, n, arg);
        um += n;
        uf += n;
        if (um == memx->e[im].len) {
            im++;
            um = 0;
        }
        if (uf == filex->e[iff].len) {
            iff++;
            uf = 0;
        }
    }
}

struct walk_arg {
    unsigned char *wmem;
    const unsigned char *rmem;
    int writer, gen;
    const char *what;
    size_t bad;
};

static void fill_run(int64_t m, int64_t f, int64_t n, void *arg)
{
    struct walk_arg *w = arg;

    tst_fill(w->wmem + m, (size_t)n, f, w->writer, w->gen);
}

static void verify_run(int64_t m, int64_t f, int64_t n, void *arg)
{
    struct walk_arg *w = arg;

    w->bad += tst_verify(w->rmem + m, (size_t)n, f, w->writer, w->gen, w->what);
}

void tst_stream_fill(unsigned char *mem, const struct tst_list *memx, const struct tst_list *filex,
                     int writer, int gen)
{
    struct walk_arg w = {.wmem = mem, .writer = writer, .gen = gen};

    stream_walk(memx, filex, fill_run, &w);
}

size_t tst_stream_verify(const unsigned char *mem, const struct tst_list *memx,
                         const struct tst_list *filex, int writer, int gen, const char *what)
{
    struct walk_arg w = {.rmem = mem, .writer = writer, .gen = gen, .what = what};

    stream_walk(memx, filex, verify_run, &w);
    return w.bad;
}

void tst_img_init(struct tst_image *img)
{
    img->data = NULL;
    img->size = 0;
    img->cap = 0;
}

void tst_img_free(struct tst_image *img)
{
    free(img->data);
    tst_img_init(img);
}

static void img_reserve(struct tst_image *img, int64_t size)
{
    if (size <= img->cap)
        return;
    int64_t cap = img->cap ? img->cap : 65536;
    while (cap < size)
        cap *= 2;
    img->data = xrealloc(img->data, (size_t)cap);
    memset(img->data + img->cap, 0, (size_t)(cap - img->cap));
    img->cap = cap;
}

void tst_img_write(struct tst_image *img, int64_t off, int64_t len, int writer, int gen)
{
    if (len <= 0)
        return;
    img_reserve(img, off + len);
    tst_fill(img->data + off, (size_t)len, off, writer, gen);
    if (off + len > img->size)
        img->size = off + len;
}

void tst_img_write_list(struct tst_image *img, const struct tst_list *filex, int writer, int gen)
{
    for (size_t i = 0; i < filex->n; i++)
        tst_img_write(img, filex->e[i].off, filex->e[i].len, writer, gen);
}

void tst_img_set_size(struct tst_image *img, int64_t size)
{
    img_reserve(img, size);
    /* Bytes beyond the new end read as zeros if the file grows again. */
    if (size < img->size)
        memset(img->data + size, 0, (size_t)(img->size - size));
    img->size = size;
}

int64_t tst_status_bytes(const MPI_Status *st)
{
    MPI_Count n = 0;

    CHECK_MPI(MPI_Get_elements_x(st, MPI_BYTE, &n));
    return (int64_t)n;
}

void tst_status_unset(MPI_Status *st)
{
    CHECK_MPI(MPI_Status_set_elements_x(st, MPI_BYTE, TST_STATUS_UNSET));
}

/* MPI_Get_library_version's string, asked once. */
static const char *library_version(void)
{
    static char v[MPI_MAX_LIBRARY_VERSION_STRING + 1];

    if (!v[0]) {
        int len = 0;

        CHECK_MPI(MPI_Get_library_version(v, &len));
        v[len] = '\0';
    }
    return v;
}

/* 1: Open MPI, 4: Open MPI 4.x (ROMIO 3.2.1), 0: another MPI. */
static int ompi_kind(void)
{
    static int known = -1;

    if (known < 0) {
        const char *v = library_version();

        known = strstr(v, "Open MPI v4.") ? 4 : strstr(v, "Open MPI") != NULL;
        /* MPI-IO from another library than MPI_Init's: bblog's layer, MPICH's ROMIO. */
        Dl_info io, init;
        if (known && dladdr((void *)MPI_File_open, &io) && dladdr((void *)MPI_Init, &init) &&
            io.dli_fbase != init.dli_fbase)
            known = 0;
    }
    return known;
}

int tst_mpi_is_ompi(void)
{
    return ompi_kind() != 0;
}

int tst_romio_321(void)
{
    return ompi_kind() == 4;
}

int tst_mpich_40(void)
{
    const char *at = strstr(library_version(), "MPICH Version:");

    if (!at)
        return 0;
    at += strlen("MPICH Version:");
    at += strspn(at, " \t");
    return strncmp(at, "4.0", 3) == 0;
}

void tst_read_expect(MPI_File fh, int64_t off, const unsigned char *expect, int64_t len,
                     const char *what)
{
    unsigned char *buf = xmalloc((size_t)len);
    MPI_Status st;

    memset(buf, 0xA5, (size_t)len);
    CHECK_MPI(MPI_File_read_at(fh, off, buf, (int)len, MPI_BYTE, &st));
    int64_t got = tst_status_bytes(&st);
    CHECK(got == len, "%s: read_at(%lld, %lld) returned %lld bytes", what, (long long)off,
          (long long)len, (long long)got);
    tst_compare(buf, expect, (size_t)(got < len ? got : len), off, what);
    free(buf);
}

void tst_background(MPI_File fh, int64_t size, int gen, struct tst_image *img)
{
    int64_t lo = size * tst_rank / tst_size, hi = size * (tst_rank + 1) / tst_size;
    unsigned char *buf = xmalloc((size_t)(hi - lo));
    MPI_Status st;

    tst_fill(buf, (size_t)(hi - lo), lo, TST_BG_WRITER, gen);
    CHECK_MPI(MPI_File_write_at(fh, lo, buf, (int)(hi - lo), MPI_BYTE, &st));
    free(buf);
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_File_sync(fh));
    if (img)
        tst_img_write(img, 0, size, TST_BG_WRITER, gen);
}

/* Chunk for whole-file checks: bounded memory whatever the file size. */
#define CHECK_CHUNK (4 << 20)

void tst_check_file(MPI_Comm comm, const char *name, const struct tst_image *img)
{
    MPI_File fh;
    MPI_Offset size = -1;
    int rank, nprocs;
    char what[256];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    tst_open(comm, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == img->size, "%s: size after close is %lld, expected %lld", name,
          (long long)size, (long long)img->size);
    int64_t lo = img->size * rank / nprocs, hi = img->size * (rank + 1) / nprocs;
    snprintf(what, sizeof what, "%s after reopen", name);
    for (int64_t off = lo; off < hi; off += CHECK_CHUNK) {
        int64_t n = hi - off < CHECK_CHUNK ? hi - off : CHECK_CHUNK;
        tst_read_expect(fh, off, img->data + off, n, what);
    }
    /* Nothing may follow the expected end, whatever get_size said. */
    {
        unsigned char extra[16];
        MPI_Status st;
        CHECK_MPI(MPI_File_read_at(fh, img->size, extra, sizeof extra, MPI_BYTE, &st));
        CHECK(tst_status_bytes(&st) == 0, "%s: %lld bytes readable past the expected end %lld",
              name, (long long)tst_status_bytes(&st), (long long)img->size);
    }
    CHECK_MPI(MPI_File_close(&fh));
}

void tst_check_file_posix(MPI_Comm comm, const char *name, const struct tst_image *img)
{
    const char *path = tst_plain_path(name);
    const char *close_mode = tst_hint("bblog_close"), *mode;
    int rank;

    if (!close_mode)
        close_mode = getenv("BBLOG_CLOSE");
    /* bblog_mode=bb sets bblog_close=bb where close is not given itself. */
    if (!close_mode && ((mode = tst_hint("bblog_mode")) || (mode = getenv("BBLOG_MODE"))))
        close_mode = mode;
    if (tst_is_bblog(name) && close_mode && strcmp(close_mode, "bb") == 0) {
        /* bblog_close=bb: close returns with the data on the burst buffer and the drain thread
         * writes the PFS file afterwards; only a re-open (or MPI_File_delete, MPI_Finalize)
         * waits for it (README, "Background drains"). A POSIX read right after close races
         * with that thread (seen on Open MPI: files of size 0), so check through a re-open. */
        tst_check_file(comm, name, img);
        return;
    }

    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        struct stat sb;
        int fd = open(path, O_RDONLY);
        if (fd < 0 || fstat(fd, &sb) != 0) {
            CHECK(0, "%s: cannot open or stat: %s", path, strerror(errno));
        } else {
            unsigned char *buf = xmalloc((size_t)img->size + 1);
            int64_t got = 0;
            CHECK(sb.st_size == img->size, "%s: size %lld after close, expected %lld", path,
                  (long long)sb.st_size, (long long)img->size);
            while (got < img->size) {
                ssize_t n = pread(fd, buf + got, (size_t)(img->size - got), got);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0)
                    break;
                got += n;
            }
            CHECK(got == img->size || sb.st_size != img->size, "%s: read %lld of %lld bytes",
                  path, (long long)got, (long long)img->size);
            tst_compare(buf, img->data, (size_t)got, 0, path);
            free(buf);
        }
        if (fd >= 0)
            close(fd);
    }
    MPI_Barrier(comm);
}

uint64_t tst_rand(uint64_t *state)
{
    /* xorshift64*: fixed seeds give the same shapes on every run and every MPI. */
    uint64_t x = *state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

void tst_write_interleaved(MPI_File fh, int count, int piece, int gen, struct tst_image *img)
{
    unsigned char *buf = malloc((size_t) piece);
    MPI_Status st;
    int i, r;

    REQUIRE(buf, "out of memory");
    for (i = 0; i < count; i++) {
        int64_t off = ((int64_t) i * tst_size + tst_rank) * piece;
        tst_fill(buf, (size_t) piece, off, tst_rank, gen);
        CHECK_MPI(MPI_File_write_at_all(fh, off, buf, piece, MPI_BYTE, &st));
    }
    for (r = 0; r < tst_size; r++)
        for (i = 0; i < count; i++)
            tst_img_write(img, ((int64_t) i * tst_size + r) * piece, piece, r, gen);
    free(buf);
}
