/*
 * Small helpers shared by the logfs unit tests: scratch directories, whole-file access and a
 * seeded random generator. Everything is static inline, so a test uses what it needs.
 */
#ifndef BBLOG_TESTUTIL_H
#define BBLOG_TESTUTIL_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh directory BASE/bblog-test-XXXXXX (malloc'd path), or NULL. */
static inline char *tu_mkdtemp(const char *base)
{
    size_t n = strlen(base) + sizeof "/bblog-test-XXXXXX";
    char *path = malloc(n);

    if (path == NULL)
        return NULL;
    snprintf(path, n, "%s/bblog-test-XXXXXX", base);
    if (mkdtemp(path) == NULL) {
        free(path);
        return NULL;
    }
    return path;
}

static inline int tu_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) flag;
    (void) ftw;
    return remove(path);
}

/* Removes PATH and everything under it (symlinks are removed, not followed). */
static inline int tu_rmtree(const char *path)
{
    return nftw(path, tu_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Size of a file, or -1. */
static inline long long tu_fsize(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 ? (long long) sb.st_size : -1;
}

/* Inode number of a file, or 0. */
static inline unsigned long long tu_ino(const char *path)
{
    struct stat sb;

    return stat(path, &sb) == 0 ? (unsigned long long) sb.st_ino : 0;
}

/* Reads a whole file into a malloc'd buffer (*len gets its size); NULL on failure. */
static inline unsigned char *tu_slurp(const char *path, size_t *len)
{
    long long sz = tu_fsize(path);
    unsigned char *buf;
    size_t got = 0;
    int fd;

    *len = 0;
    if (sz < 0)
        return NULL;
    buf = malloc((size_t) sz + 1);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (buf == NULL || fd < 0)
        goto fail;
    while (got < (size_t) sz) {
        ssize_t n = read(fd, buf + got, (size_t) sz - got);

        if (n <= 0)
            goto fail;
        got += (size_t) n;
    }
    close(fd);
    *len = got;
    return buf;
fail:
    if (fd >= 0)
        close(fd);
    free(buf);
    return NULL;
}

/* Replaces a file's contents with len bytes of buf; 0 or -1. */
static inline int tu_spit(const char *path, const unsigned char *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    size_t put = 0;

    if (fd < 0)
        return -1;
    while (put < len) {
        ssize_t n = write(fd, buf + put, len - put);

        if (n <= 0) {
            close(fd);
            return -1;
        }
        put += (size_t) n;
    }
    return close(fd);
}

/* xorshift64* (Vigna): a fixed seed gives the same sequence everywhere. */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t x = *state;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(2685821657736338717);
}

/* Uniform in [lo, hi] (hi - lo small against 2^64). */
static inline uint64_t tu_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
    return lo + tu_rand(state) % (hi - lo + 1);
}

static inline void tu_fill(uint64_t *state, unsigned char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char) (tu_rand(state) >> 56);
}

#endif
