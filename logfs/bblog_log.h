/*
 * The log: appender (write side, used by the driver) and scanner (read side, used by replay,
 * the bblog tool and tests). Plain C, no MPI. All functions return 0, a positive errno or a
 * negative BBLOG_E* code (bblog_err.h); none prints or exits.
 */
#ifndef BBLOG_LOG_H
#define BBLOG_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "bblog_err.h"
#include "bblog_format.h"

struct bblog_log;

/* Flags for bblog_log_params.flags. */
#define BBLOG_LOG_NO_DIRECT  0x1        /* never try O_DIRECT on the data log */
#define BBLOG_LOG_NO_AIO     0x2        /* write staging buffers with pwrite, not libaio */

struct bblog_log_params {
    const char *dir;            /* directory the two files go into; must exist */
    const char *name;           /* base name: files are dir/name.meta and dir/name.data */
    const char *pfs_path;       /* recorded in the header, < BBLOG_PATH_MAX bytes */
    const char *job_id;         /* recorded in the header, < BBLOG_JOB_ID_MAX bytes */
    uint32_t rank, nprocs;
    uint64_t set_id;            /* recorded in the header: the same for all logs of one open */
    size_t staging_size;        /* bytes per staging buffer; 0 = 4 MiB; rounded up to 4 KiB */
    unsigned staging_count;     /* staging buffers (in flight + filling); 0 = 4, minimum 2 */
    size_t straight_min;        /* appends of this many bytes or more go from the caller's
                                 * buffer to the file when it has no O_DIRECT; 0 = 4 KiB
                                 * (1 MiB in a node's pair) */
    unsigned flags;             /* BBLOG_LOG_* */
    /* A slot of a node's log pair (bblog_format.h): slots > 0 processes share the files
     * dir/name.meta and dir/name.data, this one in slot slot (< slots). 0: files of its own. */
    uint32_t slots, slot;
};

/*
 * Creates a new log pair (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), or with slots > 0 joins the
 * node's pair (created by whichever process comes first, each process in its own slot; EEXIST
 * when the slot is in use, EPERM when the files are not regular files of the caller), writes
 * its header, and decides
 * once, here, whether the data log takes O_DIRECT (by opening with it and checking that an
 * aligned write succeeds; never on a memory file system, tmpfs or ramfs, whose page cache is
 * the device) and whether libaio is available (io_setup); otherwise pwrite is used. Sets
 * F_SET_RW_HINT = RWH_WRITE_LIFE_SHORT on both files where the kernel accepts it.
 */
int bblog_log_create(const struct bblog_log_params *p, struct bblog_log **out);

/*
 * Logs one extent: copies len bytes of buf into the staging buffer and returns; a full staging
 * buffer is submitted asynchronously, and the call waits only when every staging buffer is in
 * flight. Without O_DIRECT an extent of straight_min bytes or more is written to the file from
 * buf at once instead (the page cache takes the only copy). *data_off (may be NULL) receives
 * where the payload sits in the data log, the value the interval index stores. len == 0 is a
 * no-op. After any I/O error the log is sticky-failed: this and every later call return the
 * error (BBLOG_ESTICKY after the first report).
 */
int bblog_log_append(struct bblog_log *log, uint64_t off, uint64_t len, const void *buf,
                     uint64_t *data_off);

/*
 * Appends a keep record (bblog_format.h): of the data records of this epoch, replay applies
 * only bytes inside the union of the keep records, which say what the log still owes to the
 * PFS. Durable at the next bblog_log_sync, like appends.
 */
int bblog_log_keep(struct bblog_log *log, uint64_t off, uint64_t len);

/* Appends a PFS record (bblog_format.h): [off, off+len) was written straight to the PFS file
 * at the current gen. The caller makes those bytes durable there before the log's next sync. */
int bblog_log_pfs(struct bblog_log *log, uint64_t off, uint64_t len);

/*
 * Moves the trim point (bblog_format.h) up to upto: every payload byte below it is on the PFS
 * and durable there, or overwritten by a later record of this log; the caller vouches for
 * that. Makes the log durable with the new trim point in its sync slot, then punches holes
 * below it in the data log (whole 4 KiB blocks), giving their space back to the device. A file
 * system that cannot punch holes keeps the space (stats: punched stays behind trimmed). 0 when
 * upto is not above the current trim point; BBLOG_EINVAL past the data log's end.
 */
int bblog_log_trim(struct bblog_log *log, uint64_t upto);

/* Makes everything appended so far durable: payloads, then records, then the header's sync
 * slot that says so (bblog_format.h). */
int bblog_log_sync(struct bblog_log *log);

/* What a crash inside bblog_log_sync leaves, for tests: writes every appended payload and
 * record, but neither makes them durable nor records a sync, and closes the log, keeping its
 * files. The records written since the last sync form the log's unsynced tail. */
int bblog_log_abandon(struct bblog_log *log);

/*
 * Writes every appended payload to the data log file and waits for it, without fsync and
 * without records: afterwards any process that opens bblog_log_data_path() reads all of
 * [0, data end) from the file (the page cache is shared on the node). For a drain that reads
 * other processes' logs.
 */
int bblog_log_flush(struct bblog_log *log);

/*
 * Reads len bytes of logged payload starting at data log offset data_off into buf, whether
 * they are still in a staging buffer, in flight, or on disk. Safe to call between appends
 * (not concurrently with them). Works on a sticky-failed log too: the bytes appended before the
 * failure stay readable (from memory or disk), so they can be drained or written through.
 */
int bblog_log_read(struct bblog_log *log, uint64_t data_off, uint64_t len, void *buf);

/*
 * Marks everything logged so far drained: the header epoch is bumped and made durable, then
 * both files are truncated back to an empty log. Data offsets restart at 0, sequence numbers
 * continue. Call only after the drained data is safely on the parallel file system. On a
 * sticky-failed log this is also the way back: when it succeeds, the empty log accepts appends
 * again (a full burst buffer, once drained, has room).
 */
int bblog_log_mark_drained(struct bblog_log *log);
/* The same, after a drain that every process writing the file took part in, which drained all
 * records of gen < drained_gen (bblog_format.h): recorded in the header for replay. */
int bblog_log_mark_drained_gen(struct bblog_log *log, uint32_t drained_gen);

/* Sets the sync generation stamped on the records appended from now on. */
void bblog_log_set_gen(struct bblog_log *log, uint32_t gen);

/* Waits for all in-flight I/O, closes the files and frees the log; with remove != 0 the two
 * files are unlinked, with remove == 0 the log is synced first. Returns the first error seen,
 * including a sticky one. */
int bblog_log_close(struct bblog_log *log, int remove);

struct bblog_log_stats {
    uint64_t bytes_appended;    /* payload bytes since creation */
    uint64_t records;           /* records since creation */
    uint64_t data_size;         /* payload bytes in the current (undrained) epoch */
    uint64_t epoch;
    uint64_t aio_submits;       /* staging buffers written with libaio */
    uint64_t sync_writes;       /* staging buffers written with pwrite */
    uint64_t straight_writes;   /* appends written from the caller's buffer */
    uint64_t waits;             /* times an append waited for a free staging buffer */
    uint64_t failures;          /* failed log writes (a drain may have made them harmless) */
    int last_failure;           /* the errno or BBLOG_E* code of the last one */
    uint64_t trim;              /* trim point of this epoch (bblog_log_trim) */
    uint64_t punched;           /* data log bytes given back to the device, this epoch */
    double append_seconds;      /* time inside bblog_log_append */
    double sync_seconds;        /* time inside bblog_log_sync */
    int direct;                 /* data log opened with O_DIRECT */
    int aio;                    /* libaio in use */
};
void bblog_log_get_stats(const struct bblog_log *log, struct bblog_log_stats *st);

/* 1 when the log whose meta file is META_PATH is open in a live process (its writer holds a
 * lock on it from bblog_log_create until its names are removed; in a node's pair, any of its
 * slots), else 0. */
int bblog_log_live(const char *meta_path);

/* In a node's log pair (bblog_format.h): 1, and the slot's data log starts at byte
 * bblog_log_data_base of the data file (every data offset of the log counts from there);
 * a log of its own: 0 and 0. */
int bblog_log_in_pair(const struct bblog_log *log);
uint64_t bblog_log_data_base(const struct bblog_log *log);

/* Paths of the two files (valid while the log is open). */
const char *bblog_log_meta_path(const struct bblog_log *log);
const char *bblog_log_data_path(const struct bblog_log *log);

/*
 * Makes (or checks) the private per-user directory DIR/bblog-UID with mode 0700 and writes its
 * path to out. Refuses (EPERM) a path that is a symlink, is not a directory, is not owned by
 * the caller, or is accessible by others, so that a shared /tmp can neither redirect nor
 * expose the logs. ENOENT/ENOTDIR/EACCES/EROFS from DIR itself are returned as they are.
 */
int bblog_log_userdir(const char *dir, char *out, size_t outlen);

/* ---- read side ------------------------------------------------------------------------- */

/* A sync slot (bblog_format.h): what a completed sync made durable. */
struct bblog_log_synced {
    uint64_t count;             /* 0: no sync of this epoch */
    uint64_t epoch, seq, meta_end, data_end;
    uint64_t trim;              /* trim point (bblog_format.h); 0 in version 2 */
};

struct bblog_log_header {
    uint32_t version, rank, nprocs;
    /* A node log pair's slot (bblog_format.h): slots 0 in a log of its own; else slot is the
     * slot's index, or BBLOG_NODE_HEADER for the pair's own header, and lg its data stride. */
    uint32_t slots, slot, lg;
    uint32_t drained_gen;       /* 0, or 1 + the gen up to which a job-wide drain completed */
    uint64_t create_time_ns, epoch, file_id, set_id;
    char job_id[BBLOG_JOB_ID_MAX + 1];
    char pfs_path[BBLOG_PATH_MAX + 1];
    /* Decode: the newest valid slot of the header's epoch (count 0 if none); bad_slots counts
     * slots that are neither all zeros nor valid. Encode: written to slot synced.count % 2,
     * the other slot left empty. */
    struct bblog_log_synced synced;
    unsigned bad_slots;
};

struct bblog_log_record {
    uint64_t seq, off, len, data_off, epoch;
    uint32_t gen, flags;
    uint64_t cut;               /* scanner: bytes the trim point took off the front (flags) */
    uint64_t slot;              /* byte position of the record in the meta file */
};

/* Encode/decode: the only places that know the byte layout. decode returns BBLOG_EBADMAGIC,
 * BBLOG_EENDIAN, BBLOG_EVERSION or BBLOG_EBADHDR on a bad header. */
void bblog_header_encode(const struct bblog_log_header *h, unsigned char buf[BBLOG_HEADER_SIZE]);
int bblog_header_decode(const unsigned char buf[BBLOG_HEADER_SIZE], struct bblog_log_header *h);
/* One sync slot, BBLOG_SYNC_SLOT_SIZE bytes: encode writes it with its CRC; decode returns 0,
 * 1 for an all-zero (never written) slot, or BBLOG_ECORRUPT. */
void bblog_sync_slot_encode(const struct bblog_log_synced *y, unsigned char *buf);
int bblog_sync_slot_decode(const unsigned char *buf, struct bblog_log_synced *y);
void bblog_record_encode(const struct bblog_log_record *r, uint32_t data_crc,
                         unsigned char buf[BBLOG_RECORD_SIZE]);
/* Returns 0, or BBLOG_ECORRUPT if rec_crc does not match; *data_crc gets the payload CRC. */
int bblog_record_decode(const unsigned char buf[BBLOG_RECORD_SIZE], struct bblog_log_record *r,
                        uint32_t *data_crc);

struct bblog_scan;

/* Opens META_PATH (and the data log beside it) read-only and validates the header. On a node's
 * log pair (bblog_format.h) the header is the pair's own (slots > 0, slot BBLOG_NODE_HEADER)
 * and there are no records: bblog_scan_open_slot opens each slot's log. */
int bblog_scan_open(const char *meta_path, struct bblog_scan **out);
/* Slot SLOT of the node pair META_PATH, as one log: BBLOG_EBADMAGIC when the slot is empty (no
 * log), BBLOG_EINVAL when META_PATH is no pair or has no such slot; record positions (slot,
 * bad_pos) count from the slot's start. */
int bblog_scan_open_slot(const char *meta_path, uint32_t slot, struct bblog_scan **out);
const struct bblog_log_header *bblog_scan_header(const struct bblog_scan *s);

/*
 * Returns the next record and its verified payload: 1 with *rec filled and *payload pointing at
 * rec->len bytes (valid until the next call). A record of the header's epoch wholly below the
 * trim point comes back with BBLOG_REC_TRIMMED in flags and no payload (NULL); one the trim
 * point cuts comes back as its part from the trim point on (off, len and data_off moved by
 * rec->cut), with BBLOG_REC_CUT in flags and its payload unverified. A record of an earlier
 * epoch than the header's (drained) comes back with BBLOG_REC_DRAINED and no payload (NULL):
 * its payload is neither read nor checked.
 * 0 at the clean end of the log, or a negative code: BBLOG_ETORN when the log ends in a
 * partially written record or payload (nothing valid after it), BBLOG_ECORRUPT when a bad
 * record or payload is followed by valid records. After a negative return,
 * bblog_scan_bad_pos() tells the meta-file byte position of the bad slot and bblog_scan_next
 * keeps returning the same code. Records of every epoch are returned; callers
 * compare rec->epoch with the header's epoch.
 */
int bblog_scan_next(struct bblog_scan *s, struct bblog_log_record *rec, const void **payload);
/* Records returned so far with BBLOG_REC_TRIMMED. */
uint64_t bblog_scan_trimmed(const struct bblog_scan *s);
uint64_t bblog_scan_bad_pos(const struct bblog_scan *s);

/* Kinds of damage (scan.c says which are torn tails and which corruption). */
enum {
    BBLOG_DMG_SLOT = 1,         /* record slot fails its CRC */
    BBLOG_DMG_ZEROS,            /* record slot all zeros */
    BBLOG_DMG_CUT,              /* meta log ends inside the slot */
    BBLOG_DMG_IMPOSSIBLE,       /* valid CRC, impossible len, seq or epoch */
    BBLOG_DMG_PAYLOAD,          /* payload fails its CRC */
    BBLOG_DMG_PAYLOAD_CUT,      /* payload past the end of the data log */
    BBLOG_DMG_NO_DATA,          /* the data log is missing */
    BBLOG_DMG_TRUNCATED,        /* the meta log ends before the last sync's meta_end */
};

struct bblog_scan_damage {
    uint64_t pos;               /* meta byte of the bad slot, or where the meta log ends */
    int kind;                   /* BBLOG_DMG_* */
    int synced;                 /* below the last sync's meta_end: acknowledged data lost */
    int record_known;           /* rec is valid (its rec_crc vouches for it): the file range
                                 * [rec.off, rec.off + rec.len) is what was lost */
    struct bblog_log_record rec;
    uint64_t lost_records;      /* BBLOG_DMG_TRUNCATED: record slots missing up to meta_end */
};

/* After bblog_scan_next returned BBLOG_ECORRUPT or BBLOG_ETORN: what was found (0), else
 * BBLOG_EINVAL. */
int bblog_scan_damage(const struct bblog_scan *s, struct bblog_scan_damage *d);
/* After BBLOG_ECORRUPT: skips the damaged slot (or, for a cut meta log, ends the scan) so that
 * bblog_scan_next goes on with the next one, without checking that its seq follows. */
int bblog_scan_resume(struct bblog_scan *s);
const char *bblog_scan_damage_what(int kind);
void bblog_scan_close(struct bblog_scan *s);

#endif
