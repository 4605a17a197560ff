/*
 * LD_PRELOAD library for test/mpi/run-srvattack.sh: records every read request a job's reader
 * sends to a read server (a send() of one struct req, recognised by its magic) into the file
 * SRVCAP_FILE, as someone who can watch the network would, for srvattack's replay mode.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQ_BYTES 56
#define REQ_MAGIC UINT64_C(0x32514552474f4c42)

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    static ssize_t (*real_send)(int, const void *, size_t, int);
    const char *path = getenv("SRVCAP_FILE");
    uint64_t magic;

    if (!real_send)
        real_send = (ssize_t (*)(int, const void *, size_t, int)) dlsym(RTLD_NEXT, "send");
    if (path && len == REQ_BYTES && (memcpy(&magic, buf, sizeof(magic)), magic == REQ_MAGIC)) {
        int out = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (out >= 0) {
            /* A short record is dropped by the replay's whole-record reads. */
            ssize_t w = write(out, buf, len);
            (void) w;
            close(out);
        }
    }
    return real_send(fd, buf, len, flags);
}
