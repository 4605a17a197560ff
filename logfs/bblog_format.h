/*
 * The on-disk format of a bblog log, version 3 (DESIGN.md section 4), and version 4: the same
 * log in a slot of a node's log pair (below). Version 2 logs (no trim point, below) are read as
 * well.
 *
 * A log is a pair of files that share a base name:
 *   BASE.meta  a 4096-byte header, then fixed-size 64-byte records, one per logged extent;
 *   BASE.data  the payloads, back to back, at the data offsets the records name.
 *
 * Every field is fixed-width little-endian whatever the host; readers decode with the
 * bblog_get_le* helpers below and never cast a buffer to a struct. The magic number is the
 * 64-bit value BBLOG_MAGIC stored little-endian: a reader that finds BBLOG_MAGIC_SWAPPED
 * instead knows the writer broke the byte-order rule (BBLOG_EENDIAN), and anything else means
 * the file is no log (BBLOG_EBADMAGIC). Readers check the magic, then the version, before
 * anything else.
 *
 * Header (offsets in bytes):
 *     0  u64  magic               BBLOG_MAGIC
 *     8  u32  version             BBLOG_FORMAT_VERSION
 *    12  u32  header_size         4096
 *    16  u32  record_size         64
 *    20  u32  drained_gen         0, or G + 1 when a drain that every process of the file took
 *                                 part in completed after all records with gen <= G of every
 *                                 log of this file and job were on the PFS (see below)
 *    24  u32  rank                rank of the writing process in MPI_COMM_WORLD
 *    28  u32  nprocs              size of MPI_COMM_WORLD
 *    32  u64  create_time_ns      CLOCK_REALTIME at creation
 *    40  u64  epoch               drain epoch: records of older epochs are drained
 *    48  u64  file_id             64-bit FNV-1a of pfs_path, to match logs cheaply
 *    56  char job_id[64]          NUL-padded job identifier (same on all ranks of a job)
 *   120  u64  set_id              the same in the logs of every process of one open of the
 *                                 file, different for another open or run (job ids repeat)
 *   128  u32  path_len            bytes of pfs_path, < BBLOG_PATH_MAX
 *   132  char pfs_path[2932]      NUL-padded path of the file on the parallel file system
 *  3064  u32  node                0 in a log of its own (version 3); in a node's log pair
 *                                 (version 4): slots | code << 12 | lg << 24 (below)
 *  3068  u32  header_crc          CRC32C over bytes [0, 3068)
 *  3072       sync slot 0         512 bytes each, outside header_crc (below)
 *  3584       sync slot 1
 *
 * Sync slots: what the last completed bblog_log_sync made durable. Each sync writes the slot
 * count % 2 (one 512-byte sector, so a torn write damages only that slot) after the records
 * it covers are durable, and makes it durable before it returns; the other slot keeps the
 * previous sync, so whatever a crash tears, one slot with a valid CRC names a completed sync.
 * Readers take the valid slot with the greatest count whose epoch is the header's epoch; none
 * means nothing of this epoch was synced. Slot layout:
 *     0  u64  count               syncs of this epoch, from 1
 *     8  u64  epoch               header epoch of the sync
 *    16  u64  seq                 seq of the last record written before the sync (0: none)
 *    24  u64  meta_end            BASE.meta bytes durable: header_size + records * 64
 *    32  u64  data_end            BASE.data bytes durable
 *    40  u64  trim                payload bytes below this data offset are drained (trim point,
 *                                 below); 0 in version 2
 *    48       zeros
 *   508  u32  slot_crc            CRC32C over bytes [0, 508) of the slot
 * Records in slots below meta_end, and their payloads, were acknowledged by a sync: damage to
 * them is corruption, never a torn tail (bblog_log.h, scan.c).
 *
 * Record (offsets in bytes, within its 64-byte slot):
 *     0  u64  seq                 1, 2, 3, ... within this log, never reused across epochs
 *     8  u64  off                 file offset of the extent
 *    16  u64  len                 length of the extent, > 0
 *    24  u64  data_off            where its payload starts in BASE.data
 *    32  u64  epoch               header epoch when the record was appended
 *    40  u32  gen                 ordering stamp: 2c + 1 for a write made inside the writer's
 *                                 collective call number c on the file (from 0), 2c for one
 *                                 made after c collective calls and outside any
 *    44  u32  flags               0, BBLOG_REC_KEEP: a keep record, or BBLOG_REC_PFS: a PFS
 *                                 record (below)
 *    48  u32  data_crc            CRC32C of the payload
 *    52  u32  reserved            0
 *    56  u32  reserved2           0
 *    60  u32  rec_crc             CRC32C over bytes [0, 60) of the slot (covers data_crc,
 *                                 so one valid rec_crc vouches for the whole extent)
 *
 * Record slot i starts at header_size + i * record_size. A slot that is all zeros, or lies
 * (partly) past the end of BASE.meta, ends the log. Ordering rule of the writer: a record
 * reaches BASE.meta only after its payload is durable in BASE.data, so a record of the header's
 * epoch with a valid rec_crc whose payload is missing or fails its CRC was damaged after the
 * fact. A record of an older epoch was drained and its payload may be gone: a node pair's slot
 * is emptied by punching its payloads before its records are zeroed.
 *
 * Trim point: a writer whose burst buffer is smaller than its output drains its oldest
 * payloads while the file stays open and gives their space back to the device (holes punched
 * in BASE.data). Every payload byte below the trim point of the newest sync slot is on the
 * PFS already (made durable there before the slot was written) or was overwritten by a later
 * write that was durable before the slot was (a record of this log or another, or bytes
 * written straight to the PFS file), so replay does not write it: a record wholly below the trim point is not replayed,
 * and one the trim point cuts is replayed from the trim point on, without its payload CRC (the
 * bytes below were punched). The trimmed bytes still take their place in the replay order: an
 * older record of another log must not be written over them (the PFS holds them, or a newer
 * record that replay writes). Holes are punched only below the trim point of
 * a durable slot, so the older slot, which a torn write of the newer one leaves, never names
 * punched bytes as live.
 *
 * Draining: after the data of epoch E is on the parallel file system, the writer rewrites the
 * header with epoch E+1 (and both sync slots empty) and makes it durable, then may truncate
 * both files to empty logs.
 * Replay applies only records whose epoch equals the header's epoch, so a drained record is
 * never re-applied over data another process wrote since.
 *
 * A process can die between the moments two processes mark their logs drained after the same
 * drain: its log then still holds records that the drain wrote, older than what other
 * processes wrote later. drained_gen says so job-wide: replay skips, in every log of the file
 * and job, the records whose gen is below the greatest drained_gen of those logs.
 *
 * Keep records (flags BBLOG_REC_KEEP) carry no payload: data_off is the data log's end when
 * they were appended, data_crc is 0, and [off, off+len) names file bytes this log still owes
 * to the PFS. With bblog_close=bb each process's background drain goes on after close and
 * removes its log when done, while others may still be draining theirs; a log may hold
 * records that another process's later write superseded (the drain left them out), and a
 * replay of that log after a crash would put the older bytes back over the newer ones, whose
 * log is gone. So close, before any process may remove its log, appends keep records for
 * exactly what its log still owes (or marks the log drained when it owes nothing). A log
 * whose epoch holds keep records replays only the bytes of its data records inside their
 * union; without keep records, all of them.
 *
 * PFS records (flags BBLOG_REC_PFS, version 3) carry no payload either: data_off is the data
 * log's end, data_crc is 0, and [off, off+len) names file bytes this process wrote straight to
 * the PFS file at gen, which were durable there before the record was. Replay writes nothing
 * for them, but orders them like data records, so that an older record of another log is not
 * written over those bytes. Records below the trim point take part the same way.
 *
 * Node log pairs (version 4, bblog_mapping=node): the processes of one node that write the
 * file share one pair BASE.meta / BASE.data, and each has a slot in it that holds exactly the
 * log described above, at fixed offsets: slot k's meta log (header, sync slots, records) starts
 * at meta byte (k + 1) << (lg - 4) and its data log at data byte k << lg, and each ends where
 * the next begins (2^(lg-4) and 2^lg bytes: a log that would grow past that is full, as a full
 * device is). Every offset and position inside a slot (data_off, meta_end, data_end, the trim
 * point) is relative to the slot's start. Meta bytes [0, 4096) hold the pair's own header
 * (code 0): what every slot's header says of the file, the job and the set, with rank 0,
 * create_time_ns 0 and no sync, written alike by every process that joins, so that a reader
 * learns slots and lg from it. A slot's header has code k + 1. slots (1..4095) is the number of
 * processes of the node; lg (32..40) is bblog_node_lg(slots), which keeps the data file under
 * 16 TiB (ext4's limit). Meta bytes [4096, 4104) count the processes in the pair now (u64,
 * changed under a record lock of those 8 bytes as they join and leave; each process holds a
 * record lock of its slot's first byte while its log is open). The files are sparse: a slot
 * takes device space only for what its process wrote. A slot that reads as zeros holds no log
 * (its process never wrote, or removed its log); marking a slot's log drained punches its
 * records and payloads out (a hole reads as zeros) instead of truncating the files; the last
 * process to leave (the count back at 0) removes the two names; a process that died never
 * leaves, so its log stays for replay.
 *
 * Replay order across the ranks of one file: by gen, then by rank, then by seq. gen never
 * decreases within a log, and every process counts the same collective calls, so a write made
 * after a collective call replays after one made in it or before it, on any rank. Within one
 * gen, bytes written by two ranks conflict only if no collective call separates the writes
 * (MPI-IO leaves that undefined), so any order is valid there.
 */
#ifndef BBLOG_FORMAT_H
#define BBLOG_FORMAT_H

#include <stdint.h>
#include <string.h>

#define BBLOG_MAGIC             UINT64_C(0x314D474F4C424242)    /* "BBBLOGM1" read LE */
#define BBLOG_MAGIC_SWAPPED     UINT64_C(0x4242424C4F474D31)
#define BBLOG_FORMAT_VERSION    3u      /* a log of its own */
#define BBLOG_FORMAT_VERSION_NODE 4u    /* a slot of a node's log pair, or the pair's header */
#define BBLOG_FORMAT_VERSION_MIN 2u     /* oldest version readers accept */
#define BBLOG_HEADER_SIZE       4096u
#define BBLOG_RECORD_SIZE       64u
#define BBLOG_JOB_ID_MAX        64u
#define BBLOG_PATH_MAX          2932u
#define BBLOG_SYNC_SLOT_SIZE    512u

#define BBLOG_REC_KEEP          1u      /* record flags: a keep record, no payload */
#define BBLOG_REC_PFS           2u      /* a PFS record (version 3), no payload */
#define BBLOG_REC_NO_PAYLOAD    (BBLOG_REC_KEEP | BBLOG_REC_PFS)
/* Never on disk, set by the scanner (bblog_log.h): a record the trim point cut, one wholly
 * below it, and one of an epoch before the header's (drained; its payload not read). */
#define BBLOG_REC_CUT           0x100u
#define BBLOG_REC_TRIMMED       0x200u
#define BBLOG_REC_DRAINED       0x400u

/* Header field offsets. */
#define BBLOG_H_MAGIC           0
#define BBLOG_H_VERSION         8
#define BBLOG_H_HEADER_SIZE     12
#define BBLOG_H_RECORD_SIZE     16
#define BBLOG_H_DRAINED_GEN     20
#define BBLOG_H_RANK            24
#define BBLOG_H_NPROCS          28
#define BBLOG_H_CTIME           32
#define BBLOG_H_EPOCH           40
#define BBLOG_H_FILE_ID         48
#define BBLOG_H_JOB_ID          56
#define BBLOG_H_SET_ID          120
#define BBLOG_H_PATH_LEN        128
#define BBLOG_H_PATH            132
#define BBLOG_H_NODE            3064
#define BBLOG_H_CRC             3068
#define BBLOG_H_SYNC0           3072
#define BBLOG_H_SYNC1           3584

/* Sync slot field offsets. */
#define BBLOG_S_COUNT           0
#define BBLOG_S_EPOCH           8
#define BBLOG_S_SEQ             16
#define BBLOG_S_META_END        24
#define BBLOG_S_DATA_END        32
#define BBLOG_S_TRIM            40
#define BBLOG_S_CRC             508

/* Record field offsets. */
#define BBLOG_R_SEQ             0
#define BBLOG_R_OFF             8
#define BBLOG_R_LEN             16
#define BBLOG_R_DATA_OFF        24
#define BBLOG_R_EPOCH           32
#define BBLOG_R_GEN             40
#define BBLOG_R_FLAGS           44
#define BBLOG_R_DATA_CRC        48
#define BBLOG_R_CRC             60

/* Node log pairs (above): at most 4095 slots, data strides 2^32..2^40. */
#define BBLOG_NODE_SLOTS_MAX    4095u
#define BBLOG_NODE_LG_MIN       32u
#define BBLOG_NODE_LG_MAX       40u
#define BBLOG_NODE_HEADER       UINT32_MAX     /* bblog_log_header.slot of the pair's header */
#define BBLOG_NODE_USERS        4096u          /* meta byte of the count of processes in it */

/* The data stride 2^lg of a pair of slots slots: the largest up to 2^40 that keeps the data
 * file under 16 TiB - 4 GiB. */
static inline unsigned bblog_node_lg(uint32_t slots)
{
    unsigned lg = BBLOG_NODE_LG_MAX;

    while (lg > BBLOG_NODE_LG_MIN
           && ((uint64_t) slots << lg) > (UINT64_C(1) << 44) - (UINT64_C(1) << 32))
        lg--;
    return lg;
}

static inline uint64_t bblog_node_meta_base(unsigned lg, uint32_t slot)
{
    return (uint64_t) (slot + 1) << (lg - 4);
}

static inline uint64_t bblog_node_data_base(unsigned lg, uint32_t slot)
{
    return (uint64_t) slot << lg;
}

static inline void bblog_put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char) v;
    p[1] = (unsigned char) (v >> 8);
    p[2] = (unsigned char) (v >> 16);
    p[3] = (unsigned char) (v >> 24);
}

static inline void bblog_put_le64(unsigned char *p, uint64_t v)
{
    bblog_put_le32(p, (uint32_t) v);
    bblog_put_le32(p + 4, (uint32_t) (v >> 32));
}

static inline uint32_t bblog_get_le32(const unsigned char *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static inline uint64_t bblog_get_le64(const unsigned char *p)
{
    return (uint64_t) bblog_get_le32(p) | (uint64_t) bblog_get_le32(p + 4) << 32;
}

/* CRC32C (Castagnoli), as used by iSCSI and ext4; crc starts at 0 for a fresh checksum and may
 * be chained over several buffers. */
uint32_t bblog_crc32c(uint32_t crc, const void *buf, size_t len);

/* 64-bit FNV-1a of a NUL-terminated string: the header's file_id. */
uint64_t bblog_fnv1a64(const char *s);

#endif
