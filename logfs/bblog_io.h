/*
 * Helpers shared by the logfs sources (appender, scanner, checksums) and the driver's own file
 * I/O (adio/ad_bblog: the node exchange, the background drain). Not part of the API of
 * bblog_log.h: the recovery tool does not use it.
 */
#ifndef BBLOG_IO_H
#define BBLOG_IO_H

#include <stddef.h>
#include <stdint.h>

/*
 * The one place that retries EINTR and completes short transfers: pwrite (is_write != 0) or
 * pread of exactly len bytes at off. Returns 0 or an errno; *done (may be NULL) gets the bytes
 * transferred. A read that meets the end of the file returns 0 with *done < len; a write that
 * makes no progress returns EIO rather than spin.
 */
int bblog_io_full(int fd, void *buf, size_t len, uint64_t off, int is_write, size_t *done);

/*
 * A read window over one file, for reading many small pieces in file order with few large
 * reads (a round trip each on a FUSE or network file system): bytes [off, off + len) of the
 * file are in buf. Zero it before first use; bblog_window_free releases it.
 * bblog_window_read reads [off, off + n) into out: straight when n >= cap, otherwise through the
 * window (cap bytes, allocated at the first use, refilled from off when the bytes are not in
 * it). Returns 0 or an errno; *done < n when the file ends first.
 */
struct bblog_window {
    unsigned char *buf;
    uint64_t off;
    size_t len;
};
int bblog_window_read(struct bblog_window *w, size_t cap, int fd, void *out, size_t n,
                      uint64_t off, size_t *done);
void bblog_window_free(struct bblog_window *w);

/* fdatasync (data_only != 0) or fsync, retried on EINTR. Returns 0 or an errno. */
int bblog_io_sync(int fd, int data_only);

/* 1 when file fd lives on a memory file system (tmpfs, ramfs), whose page cache is the
 * device: no O_DIRECT for the log there, and the drain may map it. Else 0. */
int bblog_io_in_memory(int fd);

/* CRC32C by the portable slice-by-8 tables only, whatever the CPU offers: the reference the
 * unit tests compare the accelerated bblog_crc32c with. Same conventions as bblog_crc32c. */
uint32_t bblog_crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif
