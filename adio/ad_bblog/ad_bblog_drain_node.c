/*
 * A round of the drain under the node exchange (DESIGN.md section 6; the node's shares,
 * chunks and mappings: ad_bblog_drain_share.c).
 *
 * Owns. node_round: across nodes each process writes its share of its node's bytes with
 * ROMIO's collective write; on one node the processes take the node's chunks in turn and write
 * each alone (write_node_chunk; mapped_write straight from the mapped logs when it can).
 *
 * Failures. After a failure a process still takes its turns, writing nothing, so that the
 * others' chunks stay theirs; the drain's final agreement makes it fail everywhere.
 */
#include <errno.h>
#include <stdlib.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "ad_bblog_drain.h"
#include "ad_bblog_drain_priv.h"
#include "adioi.h"

/* One chunk written alone with pwritev straight from the mapped logs, when they are (only under
 * ROMIO's generic pwrite: ad_bblog_drain_share.c, map_log), a call per run of adjacent pieces.
 * Returns 0 when it cannot: read the pieces instead. */
static int mapped_write(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                        const struct bblog_npiece *p, size_t k, int *werr)
{
    size_t i, runs = 0;
    int w;

    *werr = ADIOI_BBLOG_Inner_ready(fd);
    if (*werr != MPI_SUCCESS)
        return 1;
    w = ADIOI_BBLOG_Node_write_mapped(st, p, k, st->inner->fd_sys, &st->stats.bytes_from_peers,
                                      &runs);
    if (w < 0)
        return 0;
    if (w != 0)
        *werr = ADIOI_BBLOG_Err_rc("ADIOI_BBLOG_DRAIN", __LINE__, w, "cannot write",
                                   st->pfs_path);
    ADIOI_BBLOG_DIRTY(st->inner);
    st->inner->fp_sys_posn = -1;        /* as after any write of ROMIO's own */
    r->k = runs;
    for (i = 0; i < k; i++)
        r->bytes += p[i].len;
    st->stats.indep_writes += runs;
    ADIOI_BBLOG_Round_account(st, r);
    return 1;
}

/* Reads pieces p[0..k) of the node's logs into r->buf and writes them: alone (solo; straight
 * from the mapped logs when it can) or with ROMIO's collective write, which every process
 * calls, empty after a failure. */
static void write_node_chunk(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                             const struct bblog_npiece *p, size_t k, int solo, int *rc,
                             int *werr)
{
    size_t i;

    r->k = 0;
    r->bytes = 0;
    /* Verified drains write from the buffer, whose bytes they note. */
    if (solo && !r->verify && *rc == 0 && k > 0 && mapped_write(fd, st, r, p, k, werr))
        return;
    if (*rc == 0 && k > 0)
        *rc = ADIOI_BBLOG_Node_read(st, p, k, r->buf, &st->stats.bytes_from_peers);
    for (i = 0; *rc == 0 && i < k; i++) {
        *rc = ADIOI_BBLOG_Round_push(r, p[i].off, p[i].len);
        r->bytes += p[i].len;
    }
    if (*rc != 0)
        r->k = 0, r->bytes = 0;
    if (solo)
        ADIOI_BBLOG_Round_solo_write(fd, st, r, werr);
    else
        ADIOI_BBLOG_Round_coll_write(fd, st, r, werr);
    ADIOI_BBLOG_Round_account(st, r);
}

/* The round's parts are written: what reading them cost counted (max_exchange_bytes). */
static void parts_done(struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_parts *parts)
{
    st->stats.exchange_bytes += parts->read;
    ADIOI_BBLOG_MAX(st->stats.max_exchange_bytes, parts->read);
    ADIOI_BBLOG_Node_parts_free(parts);
}

/*
 * A round under the node exchange. With several nodes each process gets its share of its
 * node's bytes, at most one drain buffer (no process has more than a buffer in the round), and
 * writes it with ROMIO's collective write. On one node (solo) every process gets the node's
 * bytes of the round, in file order, cut into chunks of `chunk` bytes, and the processes take
 * the chunks in turn (Node_claim) and write each alone, with no collective call: a process
 * that is slower (descheduled, or behind a slow server) writes fewer of them. A process out of
 * chunks then sleeps until the others are done (Node_await_chunks) rather than spin in MPI. After a
 * failure a process still takes its turns, writing nothing, so that the others' chunks stay theirs;
 * the drain's final agreement makes it fail everywhere.
 */
void ADIOI_BBLOG_Drain_node_round(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                                  int solo, uint64_t chunk, int skip, int *rc, int *werr)
{
    struct ADIOI_BBLOG_parts parts;
    const struct bblog_npiece *p = NULL;
    size_t ns = 0, i;
    uint64_t own = 0, mine = r->bytes, total = 0, nch, c, next = 0;
    int xrc;

    xrc = ADIOI_BBLOG_Node_share(fd, r->quad, *rc == 0 ? (int) r->nquad : 0, solo ? chunk : 0,
                                 &parts, &own);
    *rc = *rc ? *rc : xrc;
    if (*rc == 0 && solo)
        st->stats.bytes_superseded += mine - own;  /* no Order exchange on one node: counted here */
    if (!solo) {
        if (*rc == 0)
            *rc = ADIOI_BBLOG_Node_part(st, &parts, parts.mine, &p, &ns);
        for (i = 0; *rc == 0 && i < ns; i++)
            total += p[i].len;
        if (*rc == 0 && total > chunk)
            *rc = EOVERFLOW;    /* cannot happen: a share is at most one buffer here */
        write_node_chunk(fd, st, r, p, *rc == 0 && !skip ? ns : 0, 0, rc, werr);
        parts_done(st, &parts);
        return;
    }
    nch = *rc == 0 ? parts.n : 0;
    while ((c = ADIOI_BBLOG_Node_claim(st, nch, &next)) < nch) {
        if (*rc != 0 || *werr != MPI_SUCCESS || skip)
            continue;
        *rc = ADIOI_BBLOG_Node_part(st, &parts, (size_t) c, &p, &ns);
        if (*rc == 0)
            write_node_chunk(fd, st, r, p, ns, 1, rc, werr);
    }
    ADIOI_BBLOG_Node_await_chunks(st);
    parts_done(st, &parts);
}
