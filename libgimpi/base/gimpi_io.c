/*  gimpi_io.c — writing a whole buffer to a descriptor (gimpi_io.h).
 */
#include "base/gimpi_io.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

/*  send(MSG_NOSIGNAL) while fd is a socket, write once it is known not to be. */
int gimpi_write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    bool sock = true;
    while (len) {
        ssize_t w = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
        if (w < 0 && sock && errno == ENOTSOCK) {
            sock = false;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}
