/*
 * Shared by the fuzz targets: input splitting, scratch directory, writing log pairs with the
 * optional checksum fix-ups (fuzzlog.h describes the input layout).
 */
#include "config.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bblog_log.h"
#include "fuzzlog.h"

void fuzz_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what);
    abort();
}

static size_t take_u32(const uint8_t **p, size_t *left)
{
    uint32_t v = 0;

    for (int i = 0; i < 4; i++) {
        if (*left == 0)
            break;
        v |= (uint32_t) **p << (8 * i);
        (*p)++;
        (*left)--;
    }
    return v;
}

int fuzz_parse(const uint8_t *in, size_t n, unsigned *flags, struct fuzz_log *logs, size_t max,
               size_t *nlogs)
{
    const uint8_t *p = in + 2;
    size_t left, want;

    if (n < 2 || max == 0)
        return -1;
    *flags = in[0];
    want = (size_t) (in[1] & 3) + 1;
    if (want > max)
        want = max;
    left = n - 2;
    for (size_t i = 0; i < want; i++) {
        size_t ml = take_u32(&p, &left), dl = take_u32(&p, &left);

        if (ml > left)
            ml = left;
        logs[i].meta = p;
        logs[i].meta_len = ml;
        p += ml;
        left -= ml;
        if (dl > left)
            dl = left;
        logs[i].data = p;
        logs[i].data_len = dl;
        p += dl;
        left -= dl;
    }
    *nlogs = want;
    return 0;
}

static int put_u32(uint8_t **buf, size_t *len, uint32_t v)
{
    uint8_t *nb = realloc(*buf, *len + 4);

    if (nb == NULL)
        return -1;
    bblog_put_le32(nb + *len, v);
    *buf = nb;
    *len += 4;
    return 0;
}

int fuzz_pack(uint8_t **buf, size_t *len, const void *meta, size_t meta_len, const void *data,
              size_t data_len)
{
    uint8_t *nb;

    if (meta_len > UINT32_MAX || data_len > UINT32_MAX || put_u32(buf, len, (uint32_t) meta_len)
        || put_u32(buf, len, (uint32_t) data_len))
        return -1;
    nb = realloc(*buf, *len + meta_len + data_len + 1);
    if (nb == NULL)
        return -1;
    if (meta_len > 0)
        memcpy(nb + *len, meta, meta_len);
    if (data_len > 0)
        memcpy(nb + *len + meta_len, data, data_len);
    *buf = nb;
    *len += meta_len + data_len;
    return 0;
}

/* ---- scratch directory ------------------------------------------------------------------ */

static char tmpdir[4096];

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) flag;
    (void) ftw;
    return remove(path);
}

static void rm_tmpdir(void)
{
    if (tmpdir[0] != '\0')
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_tmpdir(void)
{
    const char *base = getenv("BBLOG_FUZZ_TMPDIR");
    struct stat sb;

    if (tmpdir[0] != '\0')
        return tmpdir;
    if (base == NULL || base[0] == '\0')
        base = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0
                   ? "/dev/shm"
                   : getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/bblog-fuzz-XXXXXX", base);
    if (mkdtemp(tmpdir) == NULL) {
        fprintf(stderr, "fuzz: can't make a scratch directory under %s\n", base);
        abort();
    }
    atexit(rm_tmpdir);
    return tmpdir;
}

/* ---- writing logs ----------------------------------------------------------------------- */

static void write_file(const char *path, const void *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t done = 0;

    if (fd < 0) {
        perror(path);
        abort();
    }
    while (done < len) {
        ssize_t n = write(fd, (const char *) buf + done, len - done);

        if (n <= 0) {
            perror(path);
            abort();
        }
        done += (size_t) n;
    }
    close(fd);
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

/* The header's file_id is the FNV-1a hash of the NUL-padded path field, which may lack a NUL:
 * hash a terminated copy, as bblog_header_decode does on a valid header. */
static void fix_header(uint8_t *m)
{
    char path[BBLOG_PATH_MAX + 1];

    memcpy(path, m + BBLOG_H_PATH, BBLOG_PATH_MAX);
    path[BBLOG_PATH_MAX] = '\0';
    bblog_put_le64(m + BBLOG_H_FILE_ID, bblog_fnv1a64(path));
    bblog_put_le32(m + BBLOG_H_CRC, bblog_crc32c(0, m, BBLOG_H_CRC));
    /* Sync slots that hold anything get their own CRC fixed, so that mutated sync marks reach
     * the checks behind the CRC. */
    for (size_t at = BBLOG_H_SYNC0; at < BBLOG_HEADER_SIZE; at += BBLOG_SYNC_SLOT_SIZE) {
        uint8_t *y = m + at;
        size_t i;

        for (i = 0; i < BBLOG_SYNC_SLOT_SIZE && y[i] == 0; i++)
            ;
        if (i < BBLOG_SYNC_SLOT_SIZE)
            bblog_put_le32(y + BBLOG_S_CRC, bblog_crc32c(0, y, BBLOG_S_CRC));
    }
}

static void fix_records(uint8_t *m, size_t mlen, const uint8_t *data, size_t dlen)
{
    for (size_t pos = BBLOG_HEADER_SIZE; pos + BBLOG_RECORD_SIZE <= mlen;
         pos += BBLOG_RECORD_SIZE) {
        uint8_t *slot = m + pos;
        uint64_t doff = bblog_get_le64(slot + BBLOG_R_DATA_OFF);
        uint64_t len = bblog_get_le64(slot + BBLOG_R_LEN);

        if (all_zero(slot, BBLOG_RECORD_SIZE))
            continue;
        if (doff <= dlen && len <= dlen - doff)
            bblog_put_le32(slot + BBLOG_R_DATA_CRC, bblog_crc32c(0, data + doff, (size_t) len));
        bblog_put_le32(slot + BBLOG_R_CRC, bblog_crc32c(0, slot, BBLOG_R_CRC));
    }
}

void fuzz_write_log(const char *dir, const char *name, const struct fuzz_log *l, unsigned flags,
                    uint8_t **meta_out)
{
    char path[4200];
    uint8_t *m = malloc(l->meta_len + 1);

    if (m == NULL)
        abort();
    if (l->meta_len > 0)
        memcpy(m, l->meta, l->meta_len);
    if ((flags & FUZZ_FIX_HEADER) && l->meta_len >= BBLOG_HEADER_SIZE)
        fix_header(m);
    if (flags & FUZZ_FIX_RECORDS)
        fix_records(m, l->meta_len, l->data, l->data_len);
    snprintf(path, sizeof path, "%s/%s.meta", dir, name);
    write_file(path, m, l->meta_len);
    snprintf(path, sizeof path, "%s/%s.data", dir, name);
    write_file(path, l->data, l->data_len);
    if (meta_out != NULL)
        *meta_out = m;
    else
        free(m);
}
