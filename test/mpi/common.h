/*
 * Helpers shared by the MPI differential test programs (test/mpi/t_*.c, DESIGN.md section 8).
 *
 * Every program takes the target file name as argv[1] (`ufs:/d/ufs.out`, `bblog:/d/bb.out`, or a
 * plain name with ROMIO_FSTYPE_FORCE=bblog:), writes a result that depends only on the rank count,
 * checks what it can itself (read-back, sizes, error classes) and exits non-zero on failure. The
 * runner (run-diff.sh) then compares the files of the three legs byte for byte.
 *
 * Data written is a pure function of (file offset, writer id, generation), so that any byte of
 * a result names who should have written it, and read-back needs no stored copy.
 */
#ifndef TEST_MPI_COMMON_H
#define TEST_MPI_COMMON_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set by tst_init(). */
extern int tst_rank;
extern int tst_size;
extern const char *tst_prog;

/* A fatal MPI error: prints the call, the MPI error string and file:line, then aborts the job
 * with a non-zero exit. Used where the test cannot sensibly go on (a failed collective would
 * leave the other ranks waiting). */
#define CHECK_MPI(call)                                                                     \
    do {                                                                                    \
        int tst_rc_ = (call);                                                               \
        if (tst_rc_ != MPI_SUCCESS)                                                         \
            tst_mpi_fatal(tst_rc_, #call, __FILE__, __LINE__);                              \
    } while (0)

/* A non-fatal check: prints the message with file:line and counts a failure; the program goes
 * on (so that one run reports every difference) and exits non-zero at tst_finalize(). */
#define CHECK(cond, ...)                                                                    \
    do {                                                                                    \
        if (!(cond))                                                                        \
            tst_fail(__FILE__, __LINE__, __VA_ARGS__);                                      \
    } while (0)

/* A fatal check, for conditions after which nothing else is meaningful. */
#define REQUIRE(cond, ...)                                                                  \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            tst_fail(__FILE__, __LINE__, __VA_ARGS__);                                      \
            tst_abort();                                                                    \
        }                                                                                   \
    } while (0)

void tst_mpi_fatal(int rc, const char *what, const char *file, int line)
    __attribute__((noreturn));
void tst_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tst_abort(void) __attribute__((noreturn));
/* Failures counted so far on this rank. */
long tst_failures(void);

/* MPI_Init (unless the program initialised MPI itself), rank/size, argv[1] check. Returns the
 * target file name. */
const char *tst_init(int *argc, char ***argv);
/* Sums failures over MPI_COMM_WORLD, prints one summary line on rank 0, MPI_Finalize; returns
 * the process exit status (0 only if no rank failed). */
int tst_finalize(void);

/* The deterministic data pattern: one byte per (file offset, writer, generation). */
static inline unsigned char tst_pattern(int64_t off, int writer, int gen)
{
    /* splitmix64 finaliser over a mix of the three inputs: neighbouring offsets, writers and
     * generations give unrelated bytes, so shifted, misplaced or stale data is visible. */
    uint64_t x = (uint64_t)off * UINT64_C(0x9E3779B97F4A7C15);
    x ^= (uint64_t)(writer + 1) * UINT64_C(0xC2B2AE3D27D4EB4F);
    x ^= (uint64_t)(gen + 1) * UINT64_C(0x165667B19E3779F9);
    x ^= x >> 30;
    x *= UINT64_C(0xBF58476D1CE4E5B9);
    x ^= x >> 27;
    x *= UINT64_C(0x94D049BB133111EB);
    x ^= x >> 31;
    return (unsigned char)x;
}

/* buf[i] = tst_pattern(off + i, writer, gen) for i < len. */
void tst_fill(void *buf, size_t len, int64_t off, int writer, int gen);
/* Compares buf with the pattern; reports the first few differences (with `what`), counts one
 * failure if any, returns the number of differing bytes. */
size_t tst_verify(const void *buf, size_t len, int64_t off, int writer, int gen,
                  const char *what);
/* Compares buf with expected bytes; same reporting as tst_verify. off only labels messages. */
size_t tst_compare(const void *buf, const void *expect, size_t len, int64_t off,
                   const char *what);

/* Name helpers. tst_name(base, suffix) = base + suffix, malloc'd (abort on ENOMEM).
 * tst_plain_path() drops a ROMIO prefix (`ufs:`, `bblog:`) the way ROMIO does: only a prefix
 * of more than one character, so `C:` style names are kept. tst_is_bblog() tells whether the
 * name reaches the bblog driver (prefix, or ROMIO_FSTYPE_FORCE=bblog: on a plain name). */
char *tst_name(const char *base, const char *suffix);
const char *tst_plain_path(const char *name);
int tst_is_bblog(const char *name);

/* A new MPI_Info holding the hints of TEST_HINTS="key=value;key=value". The caller frees it. */
MPI_Info tst_info(void);
/* MPI_File_open with the TEST_HINTS hints, then the keys of `extra` (may be MPI_INFO_NULL),
 * which take precedence. tst_open aborts on failure; tst_open_rc returns the MPI error code. */
void tst_open(MPI_Comm comm, const char *name, int amode, MPI_Info extra, MPI_File *fh);
int tst_open_rc(MPI_Comm comm, const char *name, int amode, MPI_Info extra, MPI_File *fh);
/* The value of `key` in TEST_HINTS (static storage until the next call), or NULL. */
const char *tst_hint(const char *key);

/* Error class of an MPI error code, and its name ("MPI_ERR_INFO_VALUE"). */
int tst_err_class(int rc);
const char *tst_class_name(int cls);
/* MPI_Error_string of rc, into a static buffer. */
const char *tst_err_string(int rc);

/* Byte extents in stream order: what a datatype (file or memory side) touches, flattened by
 * hand in each test so that the oracle does not depend on the MPI under test. */
struct tst_ext {
    int64_t off;
    int64_t len;
};
struct tst_list {
    struct tst_ext *e;
    size_t n;
    size_t cap;
};
void tst_list_add(struct tst_list *l, int64_t off, int64_t len);
void tst_list_free(struct tst_list *l);
int64_t tst_list_bytes(const struct tst_list *l);
/* Walks the memory extents and the file extents in lockstep (same byte stream) and sets each
 * memory byte to the pattern of the file offset it will land at. */
void tst_stream_fill(unsigned char *mem, const struct tst_list *memx, const struct tst_list *filex,
                     int writer, int gen);
/* The reverse: checks that each memory byte holds the pattern of its file offset. */
size_t tst_stream_verify(const unsigned char *mem, const struct tst_list *memx,
                         const struct tst_list *filex, int writer, int gen, const char *what);

/* The expected content of a file: a byte image that grows as the test writes. */
struct tst_image {
    unsigned char *data;
    int64_t size;
    int64_t cap;
};
void tst_img_init(struct tst_image *img);
void tst_img_free(struct tst_image *img);
/* Byte range [off, off+len) now holds the pattern of (writer, gen); size grows as a file does. */
void tst_img_write(struct tst_image *img, int64_t off, int64_t len, int writer, int gen);
void tst_img_write_list(struct tst_image *img, const struct tst_list *filex, int writer, int gen);
/* Truncate or extend with zeros, as MPI_File_set_size does. */
void tst_img_set_size(struct tst_image *img, int64_t size);
/* Collective over comm: reopens `name` read-only (with TEST_HINTS), checks MPI_File_get_size
 * and every byte against img (each rank reads a slice), closes. */
void tst_check_file(MPI_Comm comm, const char *name, const struct tst_image *img);

/* Cheaper variant for tests with many files: rank 0 of comm reads the plain path with POSIX
 * calls (after close, the PFS file itself must hold everything); collective over comm. */
void tst_check_file_posix(MPI_Comm comm, const char *name, const struct tst_image *img);

/* Writer id of background data. */
#define TST_BG_WRITER 1000
/* Collective: fills [0, size) with pattern(off, TST_BG_WRITER, gen), each rank an independent
 * contiguous slice, then sync-barrier-sync, and records it in img (if not NULL). Tests that
 * leave holes in collective writes use it first: ROMIO's two-phase read-modify-write past EOF
 * fills holes with whatever its buffer held, so unwritten holes are not comparable. */
void tst_background(MPI_File fh, int64_t size, int gen, struct tst_image *img);
/* IOR's strided sequence: count collective writes of piece bytes per rank, piece i of rank r at
 * (i * nprocs + r) * piece, generation gen; every rank's pieces recorded in img. */
void tst_write_interleaved(MPI_File fh, int count, int piece, int gen, struct tst_image *img);

/* Reads [off, off+len) with MPI_File_read_at and checks count and bytes against expect. */
void tst_read_expect(MPI_File fh, int64_t off, const unsigned char *expect, int64_t len,
                     const char *what);
/* Number of bytes an MPI_Status says were transferred. */
int64_t tst_status_bytes(const MPI_Status *st);
/* Marks a status before a call whose status the MPI might leave untouched: afterwards
 * tst_status_bytes(st) == TST_STATUS_UNSET means the call did not set it. */
#define TST_STATUS_UNSET 7777777
void tst_status_unset(MPI_Status *st);

/* Whether MPI-IO is Open MPI's own ROMIO component: the MPI library is Open MPI
 * (MPI_Get_library_version) and MPI_File_open is in the same library as MPI_Init. Open MPI 4.1's
 * ROMIO is 3.2.1, older than MPICH 4's; the few places where the tests see a difference ask
 * this and assert Open MPI's behaviour there (each use says which ROMIO or Open MPI difference
 * it is). Not so over bblog's layer (scripts/build-layer.sh), whose ROMIO is MPICH's. */
int tst_mpi_is_ompi(void);
/* Open MPI 4.x, whose ROMIO is 3.2.1 (io/romio321), grafted without MPICH's set_view and
 * get_info edits; Open MPI 5's ROMIO 3.4.1 behaves as MPICH 4's there. */
int tst_romio_321(void);
/* MPICH 4.0 (the graft's 4.0.2), whose MPI_Request_get_status does not run the poll functions
 * of generalized requests: plain ROMIO's nonblocking collectives never complete under it. */
int tst_mpich_40(void);

/* Deterministic pseudo-random numbers for test shapes (fixed seed per test). */
uint64_t tst_rand(uint64_t *state);

#endif
