/*
 * Data sieving in the drain of a one-process handle (DESIGN.md section 6).
 *
 * Why. PnetCDF's independent data mode drains the small pieces of every independent put
 * through an MPI_COMM_SELF handle, alone, interleaved with the other processes' pieces. One
 * write per piece is one PFS request each; plain ROMIO writes those puts with data sieving.
 *
 * Data path. Under an fcntl write lock over each window of at most swin bytes, the pieces no
 * more than ADIOI_BBLOG_SIEVE_GAP apart go out as one read and one write of their span, and a
 * piece alone is written alone, under the lock too (another process's window may span it).
 *
 * Invariants. The lock keeps out the other processes' one-process drains, which take it for
 * every write, and their writes through of up to that size (ad_bblog_write.c); their
 * collective drains cannot run meanwhile (they need this process), and a larger write through
 * cannot fit in a hole without overlapping these pieces. Bytes past the end of the file read
 * as zeros, as the file system shows them.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_drain_priv.h"
#include "adioi.h"
#include "bblog_io.h"

/*
 * Data sieving for the drain of a one-process handle of a file that the process also has open
 * on several processes: PnetCDF's independent data mode, whose MPI_COMM_SELF handle drains
 * alone, at its sync or close, the small pieces of every independent put (BTIO at 4 ranks:
 * 10240 pieces of 1280 bytes a process, interleaved with the other processes'). One write per
 * piece is one request to the PFS each; plain ROMIO writes those puts with data sieving
 * (read a window, lay the pieces over it, write it back), under a byte-range lock. So does
 * this: under an fcntl write lock over each window of at most swin bytes, the pieces no more
 * than ADIOI_BBLOG_SIEVE_GAP (64 KiB) apart go out as one read and one write of their span,
 * and a piece alone is written alone, under the lock too (another process's window may span
 * it). The lock keeps out the other processes' one-process drains, which take it for every
 * write, and their writes through of up to that size (ad_bblog_write.c); their collective
 * drains cannot run meanwhile (they need this process), and a larger write through cannot fit
 * in a hole without overlapping these pieces. Bytes past the end of the file read as zeros,
 * as the file system shows them.
 */

/* Whether this drain sieves: a one-process handle of a file that sieves (Inner_sieves); no
 * background drain (its thread writes without the lock); not verifying (it checks what each
 * piece's write put there). */
void ADIOI_BBLOG_Sieve_setup(struct ADIOI_BBLOG_state *st, struct round *r)
{
    uint64_t w = st->inner->hints->ind_wr_buffer_size > 0 ?
        (uint64_t) st->inner->hints->ind_wr_buffer_size : 0;

    /* At least the node exchange's chunk: the processes' drains of one region take the
     * windows' locks one after the other, and fewer, larger windows keep that pipeline short
     * (RATIONALE: bench/results/rationale.md, sieve-window). */
    if (w > r->budget)
        w = r->budget;          /* a window of the drain's buffer at most */
    r->swin = (size_t) (w > SOLO_CHUNK ? w : SOLO_CHUNK);
    r->sieve = st->nprocs == 1 && !st->ls->bg && !r->verify && ADIOI_BBLOG_Inner_sieves(st);
}

static int sieve_add(struct round *r, uint64_t off, uint64_t len, const char *p)
{
    if (bblog_grow((void **) &r->sv, &r->sv_cap, r->nsv + 1, sizeof(*r->sv)) != 0)
        return ENOMEM;
    r->sv[r->nsv].off = off;
    r->sv[r->nsv].len = len;
    r->sv[r->nsv].p = p;
    r->nsv++;
    return 0;
}

/* Writes v[0..n) under one lock over their range: the pieces no more than the sieve gap apart
 * as one read and one write of their span (if can_sieve), a piece alone as itself. *runs:
 * adjacent pieces. */
static int sieve_window(struct ADIOI_BBLOG_state *st, struct round *r, int fd, int can_sieve,
                        const struct sieved *v, size_t n, size_t *runs)
{
    size_t i, j, k, got;
    int rc = 0;

    for (i = 0; i < n && rc == 0; i = j) {
        uint64_t a = v[i].off, b = a + v[i].len, data = v[i].len;
        for (j = i + 1; j < n && can_sieve && v[j].off - b <= ADIOI_BBLOG_SIEVE_GAP; j++) {
            *runs += v[j].off != b;
            b = v[j].off + v[j].len;
            data += v[j].len;
        }
        ++*runs;
        st->stats.indep_writes++;
        if (j - i == 1) {
            rc = bblog_io_full(fd, (void *) v[i].p, (size_t) v[i].len, a, 1, NULL);
            continue;
        }
        if (data < b - a)       /* holes: what the file holds there goes back unchanged */
            rc = bblog_io_full(fd, r->sbuf, (size_t) (b - a), a, 0, &got);
        else
            got = b - a;
        if (rc == 0 && got < b - a)
            memset(r->sbuf + got, 0, (size_t) (b - a - got));
        for (k = i; rc == 0 && k < j; k++)
            memcpy(r->sbuf + (v[k].off - a), v[k].p, (size_t) v[k].len);
        if (rc == 0)
            rc = bblog_io_full(fd, r->sbuf, (size_t) (b - a), a, 1, NULL);
        st->stats.bytes_sieved += (b - a) - data;
    }
    return rc;
}

/* Writes the batch (the mapped triples, or the buffer's pieces) a window of at most swin
 * bytes at a time, each under its own lock, sieved where its holes are small: the processes'
 * drains of one region then follow each other window by window instead of one waiting for
 * another's whole batch (RATIONALE: bench/results/rationale.md, sieve-locks). Pieces far apart
 * are written under the lock too: another process's window may
 * span them, and a write between its read and its write back would be lost. Returns 0 when
 * the file system takes no lock: the caller writes the pieces one by one; otherwise 1, *err
 * the result and r->k the runs of adjacent pieces. */
int ADIOI_BBLOG_Sieve_write(struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    const struct sieved *v;
    uint64_t pos = 0;
    size_t i, w, n, runs = 0;
    int fd, rc = 0, can_sieve;

    r->nsv = 0;
    for (i = 0; r->sieve && rc == 0 && r->map && i < r->nmp; i++) {
        if (r->mp[3 * i + 2] > r->map_len || r->mp[3 * i + 1] > r->map_len - r->mp[3 * i + 2])
            return 0;       /* past the mapped log: the usual path reports it */
        rc = sieve_add(r, r->mp[3 * i], r->mp[3 * i + 1], r->map + r->mp[3 * i + 2]);
    }
    for (i = 0; r->sieve && rc == 0 && !r->map && i < r->k; i++) {
        rc = sieve_add(r, (uint64_t) r->disps[i], (uint64_t) r->lens[i], r->buf + pos);
        pos += (uint64_t) r->lens[i];
    }
    n = r->nsv;
    v = r->sv;
    if (rc != 0 || n == 0)
        return 0;
    *err = ADIOI_BBLOG_Inner_ready(r->fd);
    if (*err != MPI_SUCCESS)
        return 1;
    fd = st->inner->fd_sys;
    /* Without a window buffer, or a file open for writing only, the pieces are written one by
     * one, still under the locks, which the other processes' windows need. */
    if (!r->sbuf)
        r->sbuf = ADIOI_Malloc(r->swin);
    can_sieve = r->sbuf && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR;
    for (i = 0; i < n && rc == 0; i = w) {
        uint64_t lo = v[i].off, hi;
        for (w = i + 1; w < n && v[w].off + v[w].len - lo <= r->swin; w++)
            ;
        hi = v[w - 1].off + v[w - 1].len;
        if (ADIOI_BBLOG_Inner_lock(fd, F_WRLCK, lo, hi - lo) != 0) {
            if (i == 0) {
                r->sieve = 0;   /* no byte-range locks here: for the rest of the drain too */
                return 0;
            }
            rc = ENOLCK;
            break;
        }
        rc = sieve_window(st, r, fd, can_sieve, v + i, w - i, &runs);
        ADIOI_BBLOG_Inner_lock(fd, F_UNLCK, lo, hi - lo);
    }
    ADIOI_BBLOG_DIRTY(st->inner);
    st->inner->fp_sys_posn = -1;        /* as after any write of ROMIO's own */
    if (rc != 0)
        *err = ADIOI_BBLOG_Err_rc(DRAIN_MYNAME, __LINE__, rc, "cannot write", st->pfs_path);
    r->k = runs;
    return 1;
}
