/*
 * The collective drain's private parts, shared by its stages (ad_bblog_drain.c), its
 * agreements (_drain_agree.c), its rounds (_drain_round.c), data sieving (_drain_sieve.c)
 * and its node paths (_drain_node.c). What the rest of the driver calls is in ad_bblog_drain.h.
 */
#ifndef AD_BBLOG_DRAIN_PRIV_H_INCLUDED
#define AD_BBLOG_DRAIN_PRIV_H_INCLUDED

#include <stdint.h>

#include "ad_bblog.h"
#include "bblog_plan.h"
#include "bblog_reorder.h"

/* The name the drain's errors carry (ROMIO's myname). */
#define DRAIN_MYNAME "ADIOI_BBLOG_DRAIN"

/* A piece this process wrote in a drain, and the CRC-32C of its bytes. */
struct written {
    uint64_t off, len;
    uint32_t crc;
};

struct round {
    char *buf;
    int *lens;
    MPI_Aint *disps;
    size_t cap;                 /* entries in lens/disps */
    size_t k;                   /* pieces in this round */
    uint64_t bytes;
    uint64_t added;             /* bytes added over the whole drain (spills empty `bytes`) */
    uint64_t read_src, read_len, read_pos;      /* pending coalesced log read */
    int collect;                /* node exchange: list the pieces in quad, read nothing */
    uint64_t stamp;             /* with collect: the stamp of the pieces being added */
    uint64_t *quad;             /* (off, len, log offset, stamp) quadruples */
    size_t nquad, quad_cap;
    /* Independent drain: the round is the whole file, and the buffer (budget bytes) is
     * written out by the process alone whenever it is full (spill). */
    ADIO_File fd;
    uint64_t budget;
    int werr;
    /* ... and with its own log mapped (map_own_log), the pieces are (off, len, log offset)
     * triples in mp, written from the mapping: nothing is read into buf. */
    const char *map;
    size_t map_len;
    uint64_t *mp;
    size_t nmp, mp_cap;
    /* bblog_verify: what this process handed to the inner file, to read back at the end. */
    int verify;
    struct written *ver;
    size_t nver, ver_cap;
    /* Independent drain of a one-process handle with data sieving (sieve_setup): windows of
     * up to swin bytes read into sbuf, the pieces laid over them, written back whole. */
    int sieve;
    size_t swin;
    char *sbuf;
    struct sieved *sv;
    size_t nsv, sv_cap;
};

struct sieved {
    uint64_t off, len;
    const char *p;
};

/* On one node a round's bytes are written in chunks of at most this many bytes, as plain ROMIO's
 * own contiguous writes (RATIONALE: bench/results/rationale.md, solo-chunk). */
#define SOLO_CHUNK ((uint64_t) 4 << 20)

struct keep_arg {
    struct ADIOI_BBLOG_state *st;
    struct round *r;
    uint64_t off, src;          /* the segment being cut */
};

enum { CHECK_START, CHECK_END };

/* What the processes agree on at the start of a drain, from one MPI_Allgather. */
struct agreed {
    uint64_t bytes, count;      /* logged bytes and index extents, summed */
    int failed;                 /* some process could not take its snapshot */
    uint64_t slo, shi;          /* least and greatest ordering stamp */
    uint64_t end;               /* greatest end of logged data */
    uint64_t lo, hi;            /* the file range all pieces span (bytes written through too) */
    uint64_t most;              /* the most bytes one process has in its snapshot */
    int disjoint;               /* no two processes' pieces can overlap */
    int lost;                   /* a process's check word is missing: nothing above holds */
    unsigned char *node;        /* each process's Node_stage flags (NULL: not staged) */
    int node_none;              /* some process has no node state */
    int node_unstaged;          /* some process could not flush its log for the others */
};

/* ad_bblog_drain_round.c */
int ADIOI_BBLOG_Round_flush_read(struct ADIOI_BBLOG_state *st, struct round *r);
int ADIOI_BBLOG_Round_push(struct round *r, uint64_t off, uint64_t len);
int ADIOI_BBLOG_Round_verify(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                             uint64_t budget, struct written *bad, uint32_t *crc_got, int *err);
/* An Order_keep callback (ADIOI_BBLOG_keep_fn): adds [off, off + len) of the segment in arg, a
 * struct keep_arg, to its round. */
int ADIOI_BBLOG_Round_keep_piece(void *arg, uint64_t off, uint64_t len);
void ADIOI_BBLOG_Round_account(struct ADIOI_BBLOG_state *st, const struct round *r);
int ADIOI_BBLOG_Round_spill(struct ADIOI_BBLOG_state *st, struct round *r);
int ADIOI_BBLOG_Round_add(struct ADIOI_BBLOG_state *st, struct round *r, uint64_t off, uint64_t len,
                          uint64_t src);
int ADIOI_BBLOG_Round_pieces(struct ADIOI_BBLOG_state *st, const struct bblog_seg *segs,
                             const uint64_t *stamps, size_t cursor, size_t n, uint64_t start,
                             uint64_t end, uint64_t **mine, size_t *cap, int *count);
void ADIOI_BBLOG_Round_coll_write(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                                  int *err);
void ADIOI_BBLOG_Round_solo_write(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                                  int *err);

void ADIOI_BBLOG_Drain_write_mapped(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                                    int *err);
void ADIOI_BBLOG_Drain_map_own_log(struct ADIOI_BBLOG_state *st, struct round *r);

/* ad_bblog_drain_sieve.c */
void ADIOI_BBLOG_Sieve_setup(struct ADIOI_BBLOG_state *st, struct round *r);
int ADIOI_BBLOG_Sieve_write(struct ADIOI_BBLOG_state *st, struct round *r, int *err);

/* ad_bblog_drain_node.c */
void ADIOI_BBLOG_Drain_node_round(ADIO_File fd, struct ADIOI_BBLOG_state *st, struct round *r,
                                  int solo, uint64_t chunk, int skip, int *rc, int *werr);

/* ad_bblog_drain_agree.c */
int ADIOI_BBLOG_Drain_grow(ADIO_File fd, struct ADIOI_BBLOG_state *st, uint64_t end);
uint64_t ADIOI_BBLOG_Drain_check(const struct ADIOI_BBLOG_state *st, int phase, int rank);
void ADIOI_BBLOG_Drain_agree_start(ADIO_File fd, struct ADIOI_BBLOG_state *st, int rc,
                                   const struct bblog_seg *segs, size_t n, uint64_t slo,
                                   uint64_t shi, int staged, unsigned node, int alone,
                                   struct agreed *ag);

#endif /* AD_BBLOG_DRAIN_PRIV_H_INCLUDED */
