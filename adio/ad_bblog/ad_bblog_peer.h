/*
 * Reads of other processes' logged bytes (ad_bblog_peer*.c): what they offer the rest of the
 * driver. The lists' format and the read servers' wire are in ad_bblog_peer_priv.h.
 */
#ifndef AD_BBLOG_PEER_H_INCLUDED
#define AD_BBLOG_PEER_H_INCLUDED

#include "ad_bblog.h"

/* ad_bblog_peer_list.c: what other processes logged, seen by this process's reads
 * (bblog_consistency=posix). Attach makes (or links) the process's list for this handle,
 * Open prepares the views of the other processes' lists; both at open. Note records an
 * extent logged (or written through to the PFS) for the next Publish, which every write call
 * makes at its end. Emptied: the log is about to be emptied after a drain. Peer_read serves a
 * contiguous read when another process published bytes of it (*done), Peer_any says whether
 * any has published anything, Peer_end the furthest byte they published. */
struct ADIOI_BBLOG_vis;
struct ADIOI_BBLOG_peers;
int ADIOI_BBLOG_Peer_attach(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Peer_detach(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Peer_free(struct ADIOI_BBLOG_logstate *ls);
int ADIOI_BBLOG_Peer_note(struct ADIOI_BBLOG_logstate *ls, uint64_t off, uint64_t len,
                          uint64_t data_off, uint64_t stamp, int through);
/* through(fd, off, len, data_off) writes logged bytes to the PFS file when the log cannot
 * write out what it staged (MPI error code). */
typedef int (*ADIOI_BBLOG_through_fn) (ADIO_File fd, uint64_t off, uint64_t len,
                                       uint64_t data_off);
int ADIOI_BBLOG_Peer_publish(ADIO_File fd, ADIOI_BBLOG_through_fn through);
void ADIOI_BBLOG_Peer_emptied(struct ADIOI_BBLOG_logstate *ls);
int ADIOI_BBLOG_Peer_trim(struct ADIOI_BBLOG_logstate *ls, uint64_t upto);
int ADIOI_BBLOG_Peer_open(struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Peer_close(struct ADIOI_BBLOG_state *st);
int ADIOI_BBLOG_Peer_read(ADIO_File fd, ADIO_Offset off, ADIO_Offset len, char *buf,
                          ADIO_Offset * got, int *done);
int ADIOI_BBLOG_Peer_any(ADIO_File fd);
ADIO_Offset ADIOI_BBLOG_Peer_end(ADIO_File fd);
/* Named: the open agreed on the log names and whether all processes share one node. A view
 * (Peer_view) reads the lists of one open's processes, from any thread; Peer_here says which
 * ranks share the node (NULL: all). Peer_serve answers another node's read of [lo, hi) for a
 * reader that made limit collective calls (ad_bblog_peer_remote.c). */
void ADIOI_BBLOG_Peer_named(struct ADIOI_BBLOG_state *st);
struct ADIOI_BBLOG_peers *ADIOI_BBLOG_Peer_view(const char *logdir, const char *log_name, int n,
                                                int self);
void ADIOI_BBLOG_Peer_view_free(struct ADIOI_BBLOG_peers *ps);
int ADIOI_BBLOG_Peer_here(struct ADIOI_BBLOG_peers *ps, const unsigned char *here);

/* A source of bytes of a range, found by another node's read server: logged bytes of rank
 * who (sent along), or bytes written straight to the PFS file (who -1); order breaks ties of
 * equal stamps as in ad_bblog_vis.c. */
struct ADIOI_BBLOG_rcand {
    uint64_t off, len, gen;
    int32_t who, order;
};

/* A server's answer: candidates, the logged bytes of those with who >= 0 one after the other,
 * the sum of its node's list epochs (changes when a list is emptied or found), the furthest
 * byte published and the number of entries taken. */
struct ADIOI_BBLOG_served {
    struct ADIOI_BBLOG_rcand *c;
    size_t n, cap;
    char *data;
    size_t ndata, data_cap;
    uint64_t esum, end, nent, clock;
};
int ADIOI_BBLOG_Peer_serve(struct ADIOI_BBLOG_peers *ps, uint32_t limit, uint64_t lo, uint64_t hi,
                           struct ADIOI_BBLOG_served *out);

/* Reads of what processes of other nodes logged (bblog_consistency=posix, a handle that can
 * write, processes on several nodes). ad_bblog_peer_server.c: Open (collective, after the log
 * names are agreed) starts a read server on the first process of each node and tells every
 * process where the others are; Close stops it (after the close's collectives).
 * ad_bblog_peer_remote.c: Ask sends [lo, lo + len) to every other node's server whose processes
 * announced writes in it (len 0: past lo) and takes the answers (Remote_answer(st, i),
 * i < Remote_nodes(st); empty for a node not asked); *changed when a node's lists were
 * emptied since its last answer. Announce tells every other node's server, before this
 * process publishes writes in [lo, hi), that it may have (0, or an errno). Err names the node
 * that could not be asked. */
struct ADIOI_BBLOG_remote;
int ADIOI_BBLOG_Remote_open(ADIO_File fd, struct ADIOI_BBLOG_state *st);
void ADIOI_BBLOG_Remote_close(struct ADIOI_BBLOG_state *st);
int ADIOI_BBLOG_Remote_ask(struct ADIOI_BBLOG_state *st, uint64_t lo, uint64_t len, uint32_t limit,
                           int *changed);
int ADIOI_BBLOG_Remote_announce(struct ADIOI_BBLOG_state *st, uint64_t lo, uint64_t hi);
int ADIOI_BBLOG_Remote_nodes(const struct ADIOI_BBLOG_state *st);
const struct ADIOI_BBLOG_served *ADIOI_BBLOG_Remote_answer(const struct ADIOI_BBLOG_state *st,
                                                           int i);
int ADIOI_BBLOG_Remote_err(const struct ADIOI_BBLOG_state *st, const char *myname, int line, int rc,
                           int writing);
/* The read server's counters so far (zero where this process runs none) into s. */
void ADIOI_BBLOG_Remote_stats(const struct ADIOI_BBLOG_state *st, struct ADIOI_BBLOG_stats *s);

#endif /* AD_BBLOG_PEER_H_INCLUDED */
