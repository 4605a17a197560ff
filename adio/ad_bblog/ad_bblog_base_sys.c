/*
 * The system calls the driver's files share: the clocks, vectored I/O at an offset, opening a
 * file to append, and mapping a file that lives in memory.
 *
 * Invariants. Nothing here makes an MPI call or keeps state: each helper may run on the
 * application's thread, the background drain's or a read server's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ad_bblog.h"
#include "ad_bblog_base.h"
#include "bblog_io.h"

double ADIOI_BBLOG_Now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

double ADIOI_BBLOG_Realtime(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/*
 * A one-node drain whose inner driver writes with plain pwrite (ROMIO's generic contiguous
 * write: ufs) writes its chunks straight from the logs' pages (Node_write_mapped) instead of
 * reading them into the drain buffer first: one copy of every byte less, on a node whose
 * processors the PFS client needs too (RATIONALE: bench/results/rationale.md, map-logs). Only
 * where the logs
 * live in memory (tmpfs, ramfs): reading a mapping of a file on a device turns an I/O error
 * into SIGBUS, where pread returns EIO and the drain fails cleanly. The logs are complete
 * when mapped (every process flushed its log in Node_stage, before the drain's starting
 * MPI_Allgather), and nothing shrinks them before the drain's end.
 */
void *ADIOI_BBLOG_Map_in_memory(int fd, size_t *len)
{
    struct stat sb;
    void *m;

    if (!bblog_io_in_memory(fd) || fstat(fd, &sb) != 0 || sb.st_size <= 0)
        return NULL;
    /* Populated at once: faulting the pages in one by one inside the PFS client's write path
     * cost more than the copy the mapping saves (RATIONALE: bench/results/rationale.md,
     * map-populate). */
    m = mmap(NULL, (size_t) sb.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED)
        return NULL;
    *len = (size_t) sb.st_size;
    return m;
}

int ADIOI_BBLOG_Open_append(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

    if (fd < 0 && errno == EEXIST)
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    return fd;
}

/* EIO when a read meets the end of the file (a log shorter than its index says: truncated
 * outside) or a write makes no progress. */
int ADIOI_BBLOG_Io_vec(int fd, struct iovec *iov, int n, uint64_t off, int is_write)
{
    int i = 0;

    while (i < n) {
        ssize_t r = is_write ? pwritev(fd, iov + i, n - i, (off_t) off) :
            preadv(fd, iov + i, n - i, (off_t) off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return errno;
        if (r == 0)
            return EIO;
        off += (uint64_t) r;
        while (r > 0) {
            if ((size_t) r >= iov[i].iov_len) {
                r -= (ssize_t) iov[i].iov_len;
                i++;
            } else {
                iov[i].iov_base = (char *) iov[i].iov_base + r;
                iov[i].iov_len -= (size_t) r;
                r = 0;
            }
        }
    }
    return 0;
}
