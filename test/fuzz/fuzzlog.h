/*
 * What the fuzz targets of test/fuzz share: how one fuzzer input becomes one or several log
 * pairs on disk, and the scratch directory they go into.
 *
 * Input layout (all integers little-endian):
 *     0  u8   flags       FUZZ_FIX_* below
 *     1  u8   nlogs - 1   (low 2 bits: 1 to 4 logs; the scanner target uses the first only)
 *   then per log:
 *          u32  meta_len, u32 data_len, meta_len bytes of BASE.meta, data_len bytes of
 *          BASE.data
 * Lengths are clamped to what the input still holds, so every input means something.
 *
 * The fix-up flags let the fuzzer go past the checksums: with FUZZ_FIX_HEADER the header's
 * file_id and CRC are recomputed, with FUZZ_FIX_RECORDS each non-zero record slot gets the
 * CRC of the payload it names (when that lies inside the data) and a valid rec_crc. Without
 * them the bytes are written as they are, which is how checksum failures are explored.
 */
#ifndef BBLOG_FUZZLOG_H
#define BBLOG_FUZZLOG_H

#include <stddef.h>
#include <stdint.h>

#define FUZZ_FIX_HEADER     0x01u
#define FUZZ_FIX_RECORDS    0x02u
#define FUZZ_MAX_LOGS       4

/* libFuzzer's entry point, defined by each target; the corpus runner (corpus_main.c) calls it
 * without the fuzzing engine. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_log {
    const uint8_t *meta, *data;
    size_t meta_len, data_len;
};

/* Splits an input into *nlogs (1 to max) logs; *flags gets the FUZZ_FIX_* bits. Returns -1
 * when the input is too short to name any (fewer than 2 bytes). */
int fuzz_parse(const uint8_t *in, size_t n, unsigned *flags, struct fuzz_log *logs, size_t max,
               size_t *nlogs);

/* Appends one log to a growing input (for the seed generator): *buf is realloc'ed. */
int fuzz_pack(uint8_t **buf, size_t *len, const void *meta, size_t meta_len, const void *data,
              size_t data_len);

/* The scratch directory of this process (made once, under $BBLOG_FUZZ_TMPDIR, else /dev/shm
 * when it exists, else $TMPDIR or /tmp; removed at exit). Aborts when it can't be made: a fuzz
 * target has no other way to say that its setup failed. */
const char *fuzz_tmpdir(void);

/* Writes DIR/NAME.meta and DIR/NAME.data from L, applying the fix-ups of FLAGS; replaces
 * earlier files of that name. *META_OUT (unless META_OUT is NULL) gets a malloc'ed copy of the
 * meta bytes as written (l->meta_len of them). Aborts on I/O errors (the scratch directory is
 * ours). */
void fuzz_write_log(const char *dir, const char *name, const struct fuzz_log *l, unsigned flags,
                    uint8_t **meta_out);

/* Aborts with a message naming the failed invariant: fuzz targets check with this, not
 * assert(), so that the checks stay in NDEBUG builds too. */
#define FUZZ_CHECK(cond)                                                                       \
    do {                                                                                       \
        if (!(cond))                                                                           \
            fuzz_fail(__FILE__, __LINE__, #cond);                                              \
    } while (0)
void fuzz_fail(const char *file, int line, const char *what) __attribute__((noreturn));

#endif
