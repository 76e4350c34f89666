/*  t/dance_lib.c — the TCP call of the meeting's tests from a chosen source address
 *  (t/dance_lib.h).
 */
#include "dance_lib.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/*  A TCP connection to to:port from address from (t/dance_lib.h). */
int dance_call(const char *from, const char *to, int port, int strict)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET };
    if (fd < 0)
        return -1;
    int bound = from && inet_pton(AF_INET, from, &sa.sin_addr) == 1
                && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    sa.sin_port = htons((uint16_t)port);
    if ((strict && !bound) || inet_pton(AF_INET, to, &sa.sin_addr) != 1
        || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}
