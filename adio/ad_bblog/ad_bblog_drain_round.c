/*
 * A round of the collective drain (ad_bblog_drain.c): this process's pieces of one file range
 * gathered into the flush buffer and written.
 *
 * Data path. Pieces are added in file order (add_piece): their file side becomes an entry of
 * lens/disps (adjacent pieces merge, push_piece), their log side a pending read, coalesced
 * while the pieces are contiguous in the log and issued into the buffer when they are not
 * (flush_read). Under the node exchange (collect) a piece is only listed, as an (offset,
 * length, log offset, stamp) quadruple; with the log mapped (map) as an (offset, length, log
 * offset) triple, written from the mapping (map_own_log, write_mapped: pwritev, no copy).
 *
 * Writes. Collective: one ROMIO two-phase write per round on every process, empty when it has
 * nothing (coll_write). Alone: a write per piece (put_pieces) or the inner driver's strided
 * write (solo_write). An independent drain spills the buffer whenever it is full (spill).
 *
 * Verification (bblog_verify). Every piece handed to the inner file is noted with the CRC-32C
 * of its bytes, read back and compared at commit (verify_written).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_drain_priv.h"
#include "adioi.h"
#include "bblog_format.h"
#include "bblog_io.h"

int ADIOI_BBLOG_Round_flush_read(struct ADIOI_BBLOG_state *st, struct round *r)
{
    int rc = 0;

    if (r->read_len)
        rc = bblog_log_read(st->ls->log, r->read_src, r->read_len, r->buf + r->read_pos);
    r->read_len = 0;
    return rc;
}

/* Appends a file piece to the round's description. The round's buffer holds the pieces in
 * order, so a piece that continues the previous one in the file extends it: stamps cut the
 * snapshot at every collective call (and every tick of the write clock), and without this
 * an IOR segmented run of 4 KiB calls was written back 4 KiB at a time. */
int ADIOI_BBLOG_Round_push(struct round *r, uint64_t off, uint64_t len)
{
    if (r->k > 0 && (uint64_t) r->disps[r->k - 1] + (uint64_t) r->lens[r->k - 1] == off &&
        (uint64_t) r->lens[r->k - 1] + len <= INT_MAX) {
        r->lens[r->k - 1] += (int) len;
        return 0;
    }
    if (r->k == r->cap) {
        size_t c1 = r->cap, c2 = r->cap;    /* two arrays, one capacity */

        if (bblog_grow((void **) &r->lens, &c1, r->k + 1, sizeof(*r->lens)) != 0 ||
            bblog_grow((void **) &r->disps, &c2, r->k + 1, sizeof(*r->disps)) != 0)
            return ENOMEM;
        r->cap = c1;
    }
    r->lens[r->k] = (int) len;
    r->disps[r->k] = (MPI_Aint) off;
    r->k++;
    return 0;
}

/* bblog_verify: notes the pieces the buffer holds, which the caller is about to write. */
static int note_written(struct round *r)
{
    uint64_t pos = 0;

    if (!r->verify)
        return 0;
    if (bblog_grow((void **) &r->ver, &r->ver_cap, r->nver + r->k, sizeof(*r->ver)))
        return ENOMEM;
    for (size_t i = 0; i < r->k; i++) {
        struct written *w = &r->ver[r->nver++];
        w->off = (uint64_t) r->disps[i];
        w->len = (uint64_t) r->lens[i];
        w->crc = bblog_crc32c(0, r->buf + pos, (size_t) w->len);
        pos += w->len;
    }
    return 0;
}

/* Reads back every piece this process wrote and compares its CRC; 0, or 1 with *bad the first
 * piece that differs (or could not be read: *crc_got 0 and *err its error). */
int ADIOI_BBLOG_Round_verify(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                             uint64_t budget, struct written *bad, uint32_t *crc_got, int *err)
{
    double t0 = ADIOI_BBLOG_Now();
    int mismatch = 0;

    *err = MPI_SUCCESS;
    for (size_t i = 0; i < r->nver && !mismatch; i++) {
        const struct written *w = &r->ver[i];
        uint32_t crc = 0;
        uint64_t done = 0;
        while (done < w->len && *err == MPI_SUCCESS) {
            ADIO_Offset n = (ADIO_Offset) (w->len - done < budget ? w->len - done : budget), got;
            *err = ADIOI_BBLOG_Read_inner(fd, (ADIO_Offset) (w->off + done), n, r->buf, &got);
            if (*err == MPI_SUCCESS && got < n)
                memset(r->buf + got, 0, (size_t) (n - got));
            crc = bblog_crc32c(crc, r->buf, (size_t) n);
            done += (uint64_t) n;
        }
        st->stats.bytes_verified += done;
        if (*err != MPI_SUCCESS || crc != w->crc) {
            *bad = *w;
            *crc_got = crc;
            mismatch = 1;
        }
    }
    st->stats.t_verify += ADIOI_BBLOG_Now() - t0;
    return mismatch;
}

/* Each piece of the buffer with its own write to the (ready) inner file. */
static void put_pieces(struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    ADIO_Status status;
    uint64_t pos = 0;
    size_t i;

    for (i = 0; i < r->k && *err == MPI_SUCCESS; i++) {
        ADIO_WriteContig(st->inner, r->buf + pos, r->lens[i], MPI_BYTE, ADIO_EXPLICIT_OFFSET,
                         (ADIO_Offset) r->disps[i], &status, err);
        pos += (uint64_t) r->lens[i];
    }
    st->stats.indep_writes += r->k;
}

/* Independent drain: each piece of the buffer with its own write to the inner file. */
static void write_pieces(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r, int *err)
{
    if (note_written(r) != 0) {
        *err = ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_NO_MEM, "bblog: out of memory "
                               "verifying the drain of %s", st->pfs_path);
        return;
    }
    *err = r->k ? ADIOI_BBLOG_Inner_ready(fd) : MPI_SUCCESS;
    put_pieces(st, r, err);
}

void ADIOI_BBLOG_Round_account(struct ADIOI_BBLOG_state *st, const struct round *r)
{
    st->stats.extents_drained += r->k;
    st->stats.bytes_drained += r->bytes;
}

static int add_piece_fit(struct ADIOI_BBLOG_state *st, struct round *r, uint64_t off,
                         uint64_t len, uint64_t src)
{
    int rc;

    if (len == 0)
        return 0;
    if (r->collect) {
        if (bblog_grow((void **) &r->quad, &r->quad_cap, r->nquad + 1,
                             4 * sizeof(*r->quad)) != 0)
            return ENOMEM;
        r->quad[4 * r->nquad] = off;
        r->quad[4 * r->nquad + 1] = len;
        r->quad[4 * r->nquad + 2] = src;
        r->quad[4 * r->nquad + 3] = r->stamp;
        r->nquad++;
        if (src != UINT64_MAX)
            r->bytes += len, r->added += len;
        return 0;
    }
    if (r->map) {
        if (bblog_grow((void **) &r->mp, &r->mp_cap, r->nmp + 1, 3 * sizeof(*r->mp)))
            return ENOMEM;
        r->mp[3 * r->nmp] = off;
        r->mp[3 * r->nmp + 1] = len;
        r->mp[3 * r->nmp + 2] = src;
        r->nmp++;
        r->bytes += len;
        r->added += len;
        return 0;
    }
    rc = ADIOI_BBLOG_Round_push(r, off, len);
    if (rc != 0)
        return rc;
    if (r->read_len && r->read_src + r->read_len == src) {
        r->read_len += len;
    } else {
        rc = ADIOI_BBLOG_Round_flush_read(st, r);
        r->read_src = src;
        r->read_len = len;
        r->read_pos = r->bytes;
    }
    r->bytes += len;
    r->added += len;
    return rc;
}

/* Independent drain: writes what the buffer holds and empties it. */
int ADIOI_BBLOG_Round_spill(struct ADIOI_BBLOG_state *st, struct round *r)
{
    int rc, werr = MPI_SUCCESS;

    if (r->map) {
        if (r->nmp > 0 && r->werr == MPI_SUCCESS) {
            if (!ADIOI_BBLOG_Sieve_write(st, r, &werr))
                ADIOI_BBLOG_Drain_write_mapped(r->fd, st, r, &werr);
            ADIOI_BBLOG_Round_account(st, r);
            if (werr != MPI_SUCCESS)
                r->werr = werr;
        }
        r->nmp = 0;
        r->k = 0;
        r->bytes = 0;
        return 0;
    }
    rc = ADIOI_BBLOG_Round_flush_read(st, r);

    /* After a failed write nothing more is written; the drain fails on every process. */
    if (rc == 0 && r->k > 0 && r->werr == MPI_SUCCESS) {
        if (!ADIOI_BBLOG_Sieve_write(st, r, &werr))
            write_pieces(r->fd, st, r, &werr);
        ADIOI_BBLOG_Round_account(st, r);
        if (werr != MPI_SUCCESS && r->werr == MPI_SUCCESS)
            r->werr = werr;
    }
    r->k = 0;
    r->bytes = 0;
    return rc;
}

int ADIOI_BBLOG_Round_add(struct ADIOI_BBLOG_state *st, struct round *r, uint64_t off, uint64_t len,
                          uint64_t src)
{
    int rc;

    /* Independent drain: a piece that does not fit in what is left of the buffer goes out in
     * buffer-sized parts, each written when the buffer is full. */
    while (r->fd != ADIO_FILE_NULL && r->bytes + len > r->budget) {
        uint64_t part = r->budget - r->bytes;
        if (part > 0 && (rc = add_piece_fit(st, r, off, part, src)) != 0)
            return rc;
        if ((rc = ADIOI_BBLOG_Round_spill(st, r)) != 0)
            return rc;
        off += part, src += part, len -= part;
    }
    return add_piece_fit(st, r, off, len, src);
}

int ADIOI_BBLOG_Round_keep_piece(void *arg, uint64_t off, uint64_t len)
{
    struct keep_arg *k = arg;

    return ADIOI_BBLOG_Round_add(k->st, k->r, off, len, k->src + (off - k->off));
}

/* This process's pieces of the round [start, end) (segments, and bytes written through) as
 * (off, len, stamp) triples in *mine. */
int ADIOI_BBLOG_Round_pieces(struct ADIOI_BBLOG_state *st, const struct bblog_seg *segs,
                             const uint64_t *stamps, size_t cursor, size_t n, uint64_t start,
                             uint64_t end, uint64_t **mine, size_t *cap, int *count)
{
    size_t i, k = 0, need = 0;

    for (i = cursor; i < n && segs[i].off < end; i++)
        need++;
    need += st->ls->nthrough;
    if (need > *cap) {
        uint64_t *m = realloc(*mine, need * 3 * sizeof(*m));
        if (!m)
            return ENOMEM;
        *mine = m;
        *cap = need;
    }
    for (i = cursor; i < n && segs[i].off < end; i++) {
        uint64_t lo = segs[i].off > start ? segs[i].off : start;
        uint64_t hi = segs[i].off + segs[i].len < end ? segs[i].off + segs[i].len : end;
        if (hi > lo) {
            (*mine)[3 * k] = lo, (*mine)[3 * k + 1] = hi - lo, (*mine)[3 * k + 2] = stamps[i];
            k++;
        }
    }
    for (i = 0; i < st->ls->nthrough; i++) {
        const struct ADIOI_BBLOG_piece *t = &st->ls->through[i];
        uint64_t lo = t->off > start ? t->off : start;
        uint64_t hi = t->off + t->len < end ? t->off + t->len : end;
        if (hi > lo) {
            (*mine)[3 * k] = lo, (*mine)[3 * k + 1] = hi - lo, (*mine)[3 * k + 2] = t->stamp;
            k++;
        }
    }
    *count = (int) k;
    return 0;
}

/* Collective two-phase write of the round's pieces on the inner file: every process calls it
 * once per round, with an empty access when it has nothing. */
void ADIOI_BBLOG_Round_coll_write(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                                  int *err)
{
    ADIO_Status status;
    MPI_Datatype ftype = MPI_BYTE;
    int nomem;

    /* Out of memory to note them: nothing is written, the drain fails on every process. */
    nomem = note_written(r) != 0;
    if (nomem)
        r->k = 0, r->bytes = 0;
    if (r->k > 0) {
        MPI_Type_create_hindexed((int) r->k, r->lens, r->disps, MPI_BYTE, &ftype);
        MPI_Type_commit(&ftype);
    }
    ADIOI_BBLOG_Inner_set_bytes_view(fd, ftype, err);
    if (ftype != MPI_BYTE)
        MPI_Type_free(&ftype);
    if (*err == MPI_SUCCESS)
        ADIO_WriteStridedColl(st->inner, r->buf, (int) r->bytes, MPI_BYTE, ADIO_EXPLICIT_OFFSET,
                              0, &status, err);
    if (nomem && *err == MPI_SUCCESS)
        *err = ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_NO_MEM, "bblog: out of memory "
                               "verifying the drain of %s", st->pfs_path);
    st->stats.coll_writes++;
}

/* One chunk of this process's node share, written alone: on one node the shares do not
 * interleave, and ROMIO's collective write would find that and write each independently. */
void ADIOI_BBLOG_Round_solo_write(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                                  int *err)
{
    ADIO_Status status;
    MPI_Datatype ftype;

    *err = r->k ? ADIOI_BBLOG_Inner_ready(fd) : MPI_SUCCESS;
    if (*err == MPI_SUCCESS && note_written(r) != 0)
        *err = ADIOI_BBLOG_Err(DRAIN_MYNAME, __LINE__, MPI_ERR_NO_MEM, "bblog: out of memory "
                               "verifying the drain of %s", st->pfs_path);
    if (*err != MPI_SUCCESS || r->k == 0)
        return;
    if (ADIOI_BBLOG_RUNS_ALONE(r->k, (uint64_t) (r->disps[r->k - 1] + r->lens[r->k - 1] -
                                                r->disps[0]))) {
        /* One piece, or holes few enough to leave as they are: a write per piece (adjacent
         * pieces are one already, push_piece), no read of the PFS file. */
        put_pieces(st, r, err);
        return;
    }
    /* Holes between many pieces: the inner driver's strided write (data sieving) */
    MPI_Type_create_hindexed((int) r->k, r->lens, r->disps, MPI_BYTE, &ftype);
    MPI_Type_commit(&ftype);
    ADIOI_BBLOG_Inner_set_bytes_view(fd, ftype, err);
    MPI_Type_free(&ftype);
    if (*err == MPI_SUCCESS)
        ADIO_WriteStrided(st->inner, r->buf, (int) r->bytes, MPI_BYTE, ADIO_EXPLICIT_OFFSET, 0,
                          &status, err);
    st->stats.indep_writes++;
}

/*
 * Independent drain with the log in memory: the pieces go to the inner file with pwritev
 * straight from the log's mapping, one call for each run of pieces that follow each other in
 * the file. That is one copy of every byte less than reading the log into the buffer and
 * writing it from there (RATIONALE: bench/results/rationale.md, map-own-log).
 */
void ADIOI_BBLOG_Drain_write_mapped(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                                    int *err)
{
    struct iovec iov[IOV_MAX];
    size_t i = 0, runs = 0;

    *err = ADIOI_BBLOG_Inner_ready(fd);
    while (i < r->nmp && *err == MPI_SUCCESS) {
        uint64_t at = r->mp[3 * i], end = at;
        int m = 0, rc = 0;
        for (; i < r->nmp && m < IOV_MAX && r->mp[3 * i] == end; i++, m++) {
            uint64_t len = r->mp[3 * i + 1], src = r->mp[3 * i + 2];
            if (src > r->map_len || len > r->map_len - src) {
                rc = EIO;       /* the index points past the log: never written whole */
                break;
            }
            iov[m].iov_base = (void *) (r->map + src);
            iov[m].iov_len = (size_t) len;
            end += len;
        }
        if (rc == 0)
            rc = ADIOI_BBLOG_Io_vec(st->inner->fd_sys, iov, m, at, 1);
        if (rc != 0)
            *err = ADIOI_BBLOG_Err_rc(DRAIN_MYNAME, __LINE__, rc, "cannot write",
                                      st->pfs_path);
        runs++;
    }
    ADIOI_BBLOG_DIRTY(st->inner);
    st->inner->fp_sys_posn = -1;        /* as after any write of ROMIO's own */
    st->stats.indep_writes += runs;
    r->k = runs;
}

/* Independent drain: maps this process's own log when it lives in memory and the inner
 * driver writes with ROMIO's generic pwrite (as the node exchange does: ad_bblog_drain_share.c),
 * not when verifying (which takes its CRCs from the buffer). */
void ADIOI_BBLOG_Drain_map_own_log(struct ADIOI_BBLOG_state *st, struct round *r)
{
    int fd;

    /* Not a slot of a node's log pair: a mapping of the pair's sparse terabytes would be
     * populated with the other slots' holes. */
    if (r->verify || !st->ls->log || st->hints.debug_no_map || bblog_log_in_pair(st->ls->log) ||
        st->inner->fns->ADIOI_xxx_WriteContig != ADIOI_GEN_WriteContig)
        return;
    fd = open(bblog_log_data_path(st->ls->log), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    /* The staged bytes go to the file first, where the mapping sees them. */
    if (bblog_io_in_memory(fd) && bblog_log_flush(st->ls->log) == 0)
        r->map = ADIOI_BBLOG_Map_in_memory(fd, &r->map_len);
    close(fd);
}
