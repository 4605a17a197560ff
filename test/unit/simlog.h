/*
 * A simulated job for the replay tests and for mklogs: NPROCS ranks, each with a real log made
 * by bblog_log_create, that write extents, sync, drain and crash the way the driver would, next
 * to a brute-force model of what the PFS file must hold after a correct replay. The model is
 * the oracle: a byte array for the drained PFS content plus the list of undrained writes,
 * applied in (gen, rank, append order).
 * Functions return 0 or an error code (bblog or errno); they never print.
 */
#ifndef BBLOG_TEST_SIMLOG_H
#define BBLOG_TEST_SIMLOG_H

#include <stddef.h>
#include <stdint.h>

struct bblog_log;
struct sim_write;

struct sim {
    char *dir, *pfs_path, *job_id, *tag;
    uint32_t nprocs;
    int node;                   /* one node log pair, rank r in slot r (bblog_mapping=node) */
    uint64_t set_id;            /* in every log's header */
    struct bblog_log **logs;    /* NULL once a rank's log is closed */
    char **meta_paths;          /* per rank, kept after close */
    uint32_t gen;
    uint64_t *appends;          /* per rank: appends so far, the model's seq */
    uint64_t rng;
    unsigned char *pfs;         /* model of the PFS file: drained content */
    size_t pfs_len;
    struct sim_write *pending;  /* undrained writes, in issue order */
    size_t npending, cap;
};

/* Creates NPROCS logs DIR/TAG.rRANK.{meta,data} for PFS_PATH and job JOB_ID. The model starts
 * from an empty (absent) PFS file; SEED drives the payload bytes. */
int sim_open(struct sim *s, const char *dir, const char *tag, const char *pfs_path,
             const char *job_id, uint32_t nprocs, uint64_t seed);
/* The same with the NPROCS logs in the slots of one node log pair DIR/TAG.n0.{meta,data}. */
int sim_open_node(struct sim *s, const char *dir, const char *tag, const char *pfs_path,
                  const char *job_id, uint32_t nprocs, uint64_t seed);

/* Rank RANK writes LEN pseudo-random bytes at OFF, through its log. */
int sim_write(struct sim *s, uint32_t rank, uint64_t off, uint64_t len);

/* All ranks enter sync generation GEN (a collective sync happened). */
void sim_set_gen(struct sim *s, uint32_t gen);

/* A completed collective drain: the undrained writes go to the PFS file (the real one and the
 * model) in replay order, then every open log is marked drained (its drained_gen the current
 * gen + 1, as the driver marks them). With STUCK_RANK < nprocs,
 * that rank "crashes" between the header update and the truncation of mark_drained: its log is
 * closed and only its header epoch is bumped, so its drained records stay in the file. */
int sim_drain(struct sim *s, uint32_t stuck_rank);

/* RANK's process dies (its log synced, closed and left as it is): later drains neither mark
 * its log drained nor let it write again, as when a process died between two processes'
 * marking of their logs after a drain (bblog_format.h, drained_gen). */
int sim_kill(struct sim *s, uint32_t rank);

/* Every open log syncs (MPI_File_sync): what was logged so far is acknowledged. */
int sim_sync(struct sim *s);

/* The crash: every open log's appended payloads and records are written, but not synced
 * (bblog_log_abandon), and the files are left: what was logged since the last sim_sync or
 * sim_drain is the unsynced tail. */
int sim_crash(struct sim *s);

/* After sim_crash: cuts RANK's meta file in the middle of its last record (a torn append);
 * the model forgets that write. */
int sim_tear(struct sim *s, uint32_t rank);

/* After sim_crash: flips one bit of RANK's undrained record number WHICH (0-based), in its
 * record slot (payload == 0) or in its payload (payload != 0). */
int sim_corrupt(struct sim *s, uint32_t rank, size_t which, int payload);

/* After sim_crash: removes RANK's log files (a rank whose log is gone). */
int sim_remove(struct sim *s, uint32_t rank);

/* What the PFS file must hold after replay: the drained content overlaid with the undrained
 * writes in (gen, rank, append) order. *buf is malloc'ed (NULL when *len is 0). */
int sim_expected(const struct sim *s, unsigned char **buf, size_t *len);

/* Writes the expected content to PATH. */
int sim_write_expected(const struct sim *s, const char *path);

/* Frees everything; closes (and keeps) logs still open. */
void sim_free(struct sim *s);

/* Reads a whole file into *buf (malloc'ed, NULL when empty). ENOENT when absent. */
int sim_read_file(const char *path, unsigned char **buf, size_t *len);

#endif
