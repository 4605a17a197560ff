/*
 * The one parser of byte sizes ("123", "64k", "16M", "1g", "2t": powers of 1024) for the
 * driver's hints and the bblog command's options. Plain C, no MPI.
 */
#ifndef BBLOG_SIZE_H
#define BBLOG_SIZE_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Parses s (leading blanks allowed, nothing after the unit) into *out, which must not exceed
 * max. Returns 0, or -1 with *out unchanged. */
static inline int bblog_parse_size(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;
    int shift = 0;

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
        shift = 10;
        break;
    case 'm':
        shift = 20;
        break;
    case 'g':
        shift = 30;
        break;
    case 't':
        shift = 40;
        break;
    }
    end += shift != 0;
    if (*end != '\0' || v > (max >> shift))
        return -1;
    *out = (uint64_t) v << shift;
    return 0;
}

#endif
