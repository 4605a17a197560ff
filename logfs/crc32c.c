/*
 * CRC32C (Castagnoli) and 64-bit FNV-1a, the two hashes of the log format (bblog_format.h).
 *
 * CRC32C is the CRC with generator polynomial 0x1EDC6F41, bit-reflected (0x82F63B78 in the
 * reflected form used below), initial value and final XOR all ones: the checksum of iSCSI
 * (RFC 3720, appendix B.4, whose test vectors the unit tests check) and of ext4 metadata.
 *
 * Two implementations compute the same function:
 * - slice-by-8 (Kankowski's "slicing-by-8", Intel 2006): table t[k][b] is the CRC of byte b
 *   followed by k zero bytes, so eight input bytes are folded with eight independent lookups
 *   instead of eight dependent ones. Portable; about 1-2 GB/s.
 * - the SSE4.2 CRC32 instruction, which implements exactly this polynomial, on x86-64 CPUs that
 *   have it (chosen once at run time). The appender checksums every payload on the append path,
 *   so this is what keeps an append close to memcpy speed. One instruction stream is bound by
 *   the instruction's latency (3 cycles per 8 bytes), so long buffers are cut into blocks of
 *   three equal lanes checksummed in parallel and joined with the "shift" below (the method of
 *   Gopal et al., "Fast CRC Computation for iSCSI Polynomial Using CRC32 Instruction", Intel
 *   2011), which about triples the throughput.
 *
 * Joining lanes. CRC without the final inversions is linear: running the register r over bytes
 * D gives shift(r, |D|) ^ crc_raw(0, D), where shift(r, n) is the register run over n zero
 * bytes, i.e. r * x^(8n) mod P. For lanes A, B, C of L bytes each:
 *     raw(r, ABC) = shift(raw(r, A), 2L) ^ shift(raw(0, B), L) ^ raw(0, C).
 * shift by a fixed n is linear in r, so it is four lookups in a table t[k][b] = shift of byte b
 * placed at byte k of the register, built once from x^(8n) mod P.
 *
 * Chaining convention (as zlib's crc32): crc = 0 starts a checksum and
 * bblog_crc32c(bblog_crc32c(0, a, n), b, m) equals the CRC of a followed by b. Internally the
 * register holds the complement, hence the ~ on entry and exit.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include "bblog_format.h"
#include "bblog_io.h"

#define CRC32C_POLY_REFLECTED 0x82F63B78u

typedef uint32_t crc_fn(uint32_t reg, const unsigned char *p, size_t n);

/* Lane lengths of the interleaved hardware path: long buffers use 4 KiB lanes (the join costs
 * ~1% there), shorter ones 256-byte lanes. Both multiples of 8. */
#define LANE_LONG ((size_t) 4096)
#define LANE_SHORT ((size_t) 256)

struct shift_table {
    uint32_t t[4][256];
};

static uint32_t crc_table[8][256];
static crc_fn *crc_best;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static uint32_t crc_sw(uint32_t reg, const unsigned char *p, size_t n)
{
    /* Byte at a time up to 8-byte alignment, so that the main loop reads aligned words. */
    while (n > 0 && ((uintptr_t) p & 7) != 0) {
        reg = crc_table[0][(reg ^ *p++) & 0xff] ^ (reg >> 8);
        n--;
    }
    while (n >= 8) {
        /* The register is XORed into the first four bytes; the byte with seven bytes after it
         * in the block is folded through t[7], the last byte through t[0]. */
        uint32_t lo = bblog_get_le32(p) ^ reg;
        uint32_t hi = bblog_get_le32(p + 4);
        reg = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff]
            ^ crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24]
            ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff]
            ^ crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n-- > 0)
        reg = crc_table[0][(reg ^ *p++) & 0xff] ^ (reg >> 8);
    return reg;
}

#if defined(__x86_64__)
/* shift by LANE_LONG, 2 * LANE_LONG, LANE_SHORT, 2 * LANE_SHORT bytes. */
static struct shift_table shift_long1, shift_long2, shift_short1, shift_short2;

/* a * b mod P, both in the reflected representation (bit 31 is x^0, bit 0 is x^31). */
static uint32_t mulmod(uint32_t a, uint32_t b)
{
    uint32_t prod = 0;

    for (uint32_t m = UINT32_C(1) << 31; m != 0; m >>= 1) {
        if (a & m)
            prod ^= b;
        b = (b & 1) ? (b >> 1) ^ CRC32C_POLY_REFLECTED : b >> 1;    /* b *= x */
    }
    return prod;
}

static void shift_init(struct shift_table *st, size_t nbytes)
{
    uint32_t xn = UINT32_C(1) << 31;    /* x^0 */

    for (size_t i = 0; i < 8 * nbytes; i++)
        xn = (xn & 1) ? (xn >> 1) ^ CRC32C_POLY_REFLECTED : xn >> 1;
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++)
            st->t[k][b] = mulmod(b << (8 * k), xn);
}

static inline uint32_t shift(const struct shift_table *st, uint32_t r)
{
    return st->t[0][r & 0xff] ^ st->t[1][(r >> 8) & 0xff] ^ st->t[2][(r >> 16) & 0xff]
        ^ st->t[3][r >> 24];
}

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;

    /* The instruction consumes the word as little-endian bytes, which x86 is. */
    memcpy(&w, p, sizeof w);
    return w;
}

/* Runs the register over n bytes (n multiple of 3 * lane) in blocks of three parallel lanes. */
__attribute__((target("sse4.2")))
static uint32_t crc_hw_lanes(uint32_t reg, const unsigned char *p, size_t n, size_t lane,
                             const struct shift_table *by1, const struct shift_table *by2)
{
    for (; n >= 3 * lane; n -= 3 * lane, p += 3 * lane) {
        uint64_t a = reg, b = 0, c = 0;

        for (size_t i = 0; i < lane; i += 8) {
            a = _mm_crc32_u64(a, load64(p + i));
            b = _mm_crc32_u64(b, load64(p + lane + i));
            c = _mm_crc32_u64(c, load64(p + 2 * lane + i));
        }
        reg = shift(by2, (uint32_t) a) ^ shift(by1, (uint32_t) b) ^ (uint32_t) c;
    }
    return reg;
}

__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t reg, const unsigned char *p, size_t n)
{
    uint64_t r64;
    size_t k;

    while (n > 0 && ((uintptr_t) p & 7) != 0) {
        reg = _mm_crc32_u8(reg, *p++);
        n--;
    }
    k = n - n % (3 * LANE_LONG);
    reg = crc_hw_lanes(reg, p, k, LANE_LONG, &shift_long1, &shift_long2);
    p += k;
    n -= k;
    k = n - n % (3 * LANE_SHORT);
    reg = crc_hw_lanes(reg, p, k, LANE_SHORT, &shift_short1, &shift_short2);
    p += k;
    n -= k;
    r64 = reg;
    for (; n >= 8; n -= 8, p += 8)
        r64 = _mm_crc32_u64(r64, load64(p));
    reg = (uint32_t) r64;
    while (n-- > 0)
        reg = _mm_crc32_u8(reg, *p++);
    return reg;
}
#endif

static void crc_init(void)
{
    for (unsigned b = 0; b < 256; b++) {
        uint32_t c = b;

        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY_REFLECTED : c >> 1;
        crc_table[0][b] = c;
    }
    /* t[k][b]: one more zero byte after t[k-1][b] shifts the register by a byte. */
    for (unsigned b = 0; b < 256; b++)
        for (int k = 1; k < 8; k++)
            crc_table[k][b] = (crc_table[k - 1][b] >> 8) ^ crc_table[0][crc_table[k - 1][b] & 0xff];

    crc_best = crc_sw;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        shift_init(&shift_long1, LANE_LONG);
        shift_init(&shift_long2, 2 * LANE_LONG);
        shift_init(&shift_short1, LANE_SHORT);
        shift_init(&shift_short2, 2 * LANE_SHORT);
        crc_best = crc_hw;
    }
#endif
}

uint32_t bblog_crc32c(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return ~crc_best(~crc, buf, len);
}

uint32_t bblog_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);
    return ~crc_sw(~crc, buf, len);
}

/* FNV-1a, 64-bit (Fowler, Noll, Vo): offset basis and prime from the FNV reference. */
uint64_t bblog_fnv1a64(const char *s)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++) {
        h ^= *p;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}
