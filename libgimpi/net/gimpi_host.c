/*  gimpi_host.c — the host connections of an IMPI job (doc/impi-protocol.md §3.9): the
 *  sockets (listeners, dialling, accepting) and the static hosts' meeting.
 *
 *  One poll() loop does everything at once, in steps taken as sockets get ready: the dial
 *  step (a non-blocking connect to every lower-ranked host, each socket bound to our
 *  announced address first, as LAM checks the source address, then the 4-byte rank sent
 *  on it), the accept step (callers from the higher-ranked hosts) and the read-rank step
 *  (the 4-byte rank read from each caller).  Doing it all concurrently means the order in
 *  which hosts arrive does not matter and nothing can deadlock; the deadline bounds it
 *  all.  Dynamic hosts use the same listeners and dialling later (msg_dynhost.c).
 *
 *  Local sockets: a host also listens on a Unix-domain stream socket in the abstract
 *  namespace, named after its TCP address and port ("gimpi-host/A.B.C.D:PORT"), and a
 *  dialer tries that name first.  It only exists in the same kernel and network namespace,
 *  so a peer on another machine (or in another namespace) is reached over TCP as before;
 *  both ends check that the other runs under their own user id (SO_PEERCRED), so a name
 *  squatted by another user is ignored.  The bytes on the connection are the same IMPI
 *  stream either way; loopback TCP costs twice the kernel time per message here
 *  (doc/data-plane.md, "Local sockets").  GIMPI_LOCAL_SOCKETS=0 turns it off.
 */
#include "net/gimpi_host.h"
#include "net/msg_dynhost.h"    /* GIMPI_INTRO_MARKER: a dynamic caller too early */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/*  Monotonic milliseconds. */
static int64_t s_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*  Writes a message into err (when given). */
static void s_err(char *err, size_t errsize, const char *fmt, ...)
{
    if (!err || !errsize)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errsize, fmt, ap);
    va_end(ap);
}

/*  Fills a sockaddr_in from a 16-byte IMPI address and a port. */
static void s_sockaddr(struct sockaddr_in *sa, const uint8_t addr[16], int port)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_addr.s_addr = htonl(impi_addr16_ipv4(addr));
    sa->sin_port = htons((uint16_t)port);
}

/*  Listening socket on addr, ephemeral port. */
int gimpi_host_listen(const uint8_t addr[16], int *port, char *err, size_t errsize)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        s_err(err, errsize, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa;
    s_sockaddr(&sa, addr, 0);
    socklen_t salen = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, SOMAXCONN) < 0
        || getsockname(fd, (struct sockaddr *)&sa, &salen) < 0) {
        char a[48];
        s_err(err, errsize, "listen on %s: %s", impi_addr16_format(addr, a, sizeof a),
              strerror(errno));
        close(fd);
        return -1;
    }
    if (port)
        *port = ntohs(sa.sin_port);
    return fd;
}

/*  Whether local sockets are wanted (GIMPI_LOCAL_SOCKETS unset or not "0"). */
static int s_local_wanted(void)
{
    const char *e = getenv("GIMPI_LOCAL_SOCKETS");
    return !e || strcmp(e, "0") != 0;
}

/*  The abstract socket address of the host at addr:port; returns its length. */
static socklen_t s_local_name(struct sockaddr_un *su, const uint8_t addr[16], int port)
{
    memset(su, 0, sizeof *su);
    su->sun_family = AF_UNIX;
    char a[48];
    int n = snprintf(su->sun_path + 1, sizeof su->sun_path - 1, "gimpi-host/%s:%d",
                     impi_addr16_format(addr, a, sizeof a), port);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/*  1 when a connected Unix-domain socket's peer runs under our own user id. */
static int s_same_user(int fd)
{
    struct ucred cr;
    socklen_t len = sizeof cr;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && cr.uid == geteuid();
}

/*  The local listener paired with TCP listener tcp_fd. */
int gimpi_host_listen_local(int tcp_fd)
{
    struct sockaddr_in sa;
    socklen_t salen = sizeof sa;
    if (tcp_fd < 0 || !s_local_wanted()
        || getsockname(tcp_fd, (struct sockaddr *)&sa, &salen) < 0 || sa.sin_family != AF_INET)
        return -1;
    uint8_t addr[16];
    impi_addr16_from_ipv4(addr, ntohl(sa.sin_addr.s_addr));
    struct sockaddr_un su;
    socklen_t sulen = s_local_name(&su, addr, ntohs(sa.sin_port));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&su, sulen) < 0 || listen(fd, SOMAXCONN) < 0) {
        close(fd);              /* taken (by someone else) or not possible: TCP only */
        return -1;
    }
    return fd;
}

/*  Accepts one caller (non-blocking, close-on-exec).  On a local listener a caller of
 *  another user is refused (closed; errno EAGAIN, as if nobody had called). */
int gimpi_host_accept(int listen_fd)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0 && gimpi_host_is_local(fd) && !s_same_user(fd)) {
        close(fd);
        errno = EAGAIN;
        return -1;
    }
    return fd;
}

/*  1 when fd is a Unix-domain socket. */
int gimpi_host_is_local(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_UNIX;
}

/*  Makes a connected socket ready for the packet engine: no Nagle delay, non-blocking,
 *  4 MiB send and receive buffers (a long message is then written in a few calls instead
 *  of waiting for the kernel's autotuning to grow them). */
void gimpi_host_tune(int fd)
{
    int one = 1;
    if (!gimpi_host_is_local(fd))
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*  One socket the dance is busy with. */
typedef struct {
    int fd;
    int peer;                   /* connect side: the host we call; accept side: -1 */
    int connecting;             /* connect() in progress */
    uint8_t buf[4];
    size_t done;                /* rank bytes sent (connect side) or read (accept side) */
} dance_sock_t;

/*  The whole meeting: the tables, the sockets under way and what is connected so far. */
typedef struct {
    const impi_tables_t *t;
    int myhost, n, nhigher;
    int *fds;                   /* the result: one connected socket per other host */
    dance_sock_t *socks;        /* calls and callers under way (fd -1: finished) */
    int nsocks, cap;
    int accepted;               /* connections from higher hosts fully identified */
    char *err;
    size_t errsize;
} dance_t;

/*  Starts a non-blocking connect to host i from our own announced address. */
static int s_start_connect(const impi_tables_t *t, int myhost, int i, dance_sock_t *s,
                           char *err, size_t errsize)
{
    char why[200];
    int connecting = 0;
    int fd = gimpi_host_dial(t->hosts[i].addr, t->hosts[i].port, t->hosts[myhost].addr,
                             &connecting, why, sizeof why);
    if (fd < 0) {
        s_err(err, errsize, "host %d: %s", i, why);
        return -1;
    }
    s->fd = fd;
    s->peer = i;
    s->connecting = connecting;
    impi_put32(s->buf, (uint32_t)myhost);
    s->done = 0;
    return 0;
}

/*  Dial step: our call to lower host s->peer is ready: finish the connect, send our rank
 *  (the socket is the host's once all 4 bytes are out).  0, or -1 with a message. */
static int s_dial_step(dance_t *d, dance_sock_t *s)
{
    if (s->connecting) {
        int e = 0;
        socklen_t el = sizeof e;
        getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (e) {
            char a[48];
            s_err(d->err, d->errsize, "connect to host %d (%s:%d): %s", s->peer,
                  impi_addr16_format(d->t->hosts[s->peer].addr, a, sizeof a),
                  d->t->hosts[s->peer].port, strerror(e));
            return -1;
        }
        s->connecting = 0;
    }
    ssize_t w = send(s->fd, s->buf + s->done, 4 - s->done, MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN && errno != EINTR) {
        s_err(d->err, d->errsize, "sending rank to host %d: %s", s->peer, strerror(errno));
        return -1;
    }
    if (w > 0)
        s->done += (size_t)w;
    if (s->done == 4) {
        gimpi_host_tune(s->fd);
        d->fds[s->peer] = s->fd;
        s->fd = -1;
    }
    return 0;
}

/*  Read-rank step: a caller is readable: read its 4-byte rank and, once whole, make the
 *  socket that host's (a dynamic caller too early is just closed).  0, or -1 with a
 *  message. */
static int s_read_rank_step(dance_t *d, dance_sock_t *s)
{
    ssize_t got = recv(s->fd, s->buf + s->done, 4 - s->done, 0);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        s_err(d->err, d->errsize, "a calling host hung up before sending its rank");
        return -1;
    }
    if (got > 0)
        s->done += (size_t)got;
    if (s->done < 4)
        return 0;
    uint32_t who = impi_get32(s->buf);
    if (who == GIMPI_INTRO_MARKER) {
        /* a dynamic host too early (we are not registered yet): it sees the connection
         * close and takes us for gone */
        close(s->fd);
        s->fd = -1;
        return 0;
    }
    if (who <= (uint32_t)d->myhost || who >= (uint32_t)d->n) {
        s_err(d->err, d->errsize, "a calling host announced rank %u, expected %d..%d", who,
              d->myhost + 1, d->n - 1);
        return -1;
    }
    if (d->fds[who] >= 0) {
        s_err(d->err, d->errsize, "host %u called twice", who);
        return -1;
    }
    gimpi_host_tune(s->fd);
    d->fds[who] = s->fd;
    s->fd = -1;
    d->accepted++;
    return 0;
}

/*  Accept step: takes a caller from each ready listener (pfd[0..1]: TCP, local), whose
 *  rank is then read.  0, or -1 with a message. */
static int s_accept_step(dance_t *d, const struct pollfd *pfd)
{
    for (int l = 0; l < 2 && d->nsocks < d->cap; l++) {
        if (!(pfd[l].revents & POLLIN))
            continue;
        int fd = gimpi_host_accept(pfd[l].fd);
        if (fd >= 0) {
            d->socks[d->nsocks++] = (dance_sock_t){ .fd = fd, .peer = -1 };
        } else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
            s_err(d->err, d->errsize, "accept: %s", strerror(errno));
            return -1;
        }
    }
    return 0;
}

/*  The error of a meeting that ran out of time: which hosts are missing. */
static void s_dance_timeout(dance_t *d, int timeout_ms)
{
    char missing[256] = "";
    size_t off = 0;
    for (int i = 0; i < d->n && off < sizeof missing - 16; i++)
        if (i != d->myhost && d->fds[i] < 0)
            off += (size_t)snprintf(missing + off, sizeof missing - off, " %d", i);
    s_err(d->err, d->errsize, "host connections: timed out after %d ms; missing hosts:%s",
          timeout_ms, missing);
}

/*  One round of the meeting: polls the listeners (while callers are missing) and the
 *  sockets under way until left_ms, then takes the dial, read-rank and accept steps
 *  they are ready for.  0, or -1 with a message. */
static int s_dance_round(dance_t *d, int listen_fd, int local_fd, struct pollfd *pfd,
                         int64_t left_ms)
{
    int np = 0;
    int want_accept = d->accepted < d->nhigher && d->nsocks < d->cap;
    if (want_accept) {
        pfd[np++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
        pfd[np++] = (struct pollfd){ .fd = local_fd, .events = POLLIN };  /* -1: none */
    }
    int first = np;
    for (int k = 0; k < d->nsocks; k++) {
        dance_sock_t *s = &d->socks[k];
        short ev = s->fd < 0 ? 0 : (s->peer >= 0 ? POLLOUT : POLLIN);
        pfd[np++] = (struct pollfd){ .fd = s->fd, .events = ev };
    }
    int r = poll(pfd, (nfds_t)np, (int)left_ms);
    if (r < 0) {
        if (errno == EINTR)
            return 0;
        s_err(d->err, d->errsize, "poll: %s", strerror(errno));
        return -1;
    }
    for (int k = 0; k < d->nsocks; k++) {
        dance_sock_t *s = &d->socks[k];
        if (s->fd < 0 || !pfd[first + k].revents)
            continue;
        if ((s->peer >= 0 ? s_dial_step(d, s) : s_read_rank_step(d, s)) < 0)
            return -1;
    }
    if (want_accept && s_accept_step(d, pfd) < 0)
        return -1;
    /* compact finished slots so that the table never outgrows cap */
    int w = 0;
    for (int k = 0; k < d->nsocks; k++)
        if (d->socks[k].fd >= 0)
            d->socks[w++] = d->socks[k];
    d->nsocks = w;
    return 0;
}

/*  Meets every other host: calls to the lower hosts, callers from the higher ones, all
 *  under way at once, until every host is connected or the deadline passes. */
int gimpi_host_dance(const impi_tables_t *t, int myhost, int listen_fd, int local_fd,
                     int *fds, int timeout_ms, char *err, size_t errsize)
{
    int n = t->nhosts;
    for (int i = 0; i < n; i++)
        fds[i] = -1;
    if (myhost < 0 || myhost >= n) {
        s_err(err, errsize, "host rank %d out of range 0..%d", myhost, n - 1);
        return -1;
    }
    dance_t d = { .t = t, .myhost = myhost, .n = n, .nhigher = n - 1 - myhost, .fds = fds,
                  .err = err, .errsize = errsize };
    /* connects: one per lower host; accepts: at most nhigher in flight at a time + slack */
    d.cap = myhost + d.nhigher + 1;
    d.socks = calloc((size_t)d.cap, sizeof *d.socks);
    struct pollfd *pfd = calloc((size_t)d.cap + 2, sizeof *pfd);
    if (!d.socks || !pfd) {
        free(d.socks);
        free(pfd);
        s_err(err, errsize, "out of memory");
        return -1;
    }
    int rc = -1;
    for (int i = 0; i < myhost; i++)
        if (s_start_connect(t, myhost, i, &d.socks[d.nsocks++], err, errsize) < 0) {
            d.nsocks--;
            goto out;
        }
    int64_t deadline = s_now_ms() + timeout_ms;
    for (;;) {
        int pending = 0;
        for (int k = 0; k < d.nsocks; k++)
            if (d.socks[k].fd >= 0)
                pending++;
        if (pending == 0 && d.accepted == d.nhigher) {
            rc = 0;
            break;
        }
        int64_t left = deadline - s_now_ms();
        if (left <= 0) {
            s_dance_timeout(&d, timeout_ms);
            goto out;
        }
        if (s_dance_round(&d, listen_fd, local_fd, pfd, left) < 0)
            goto out;
    }
out:
    for (int k = 0; k < d.nsocks; k++)
        if (d.socks[k].fd >= 0)
            close(d.socks[k].fd);
    if (rc < 0)
        for (int i = 0; i < n; i++)
            if (fds[i] >= 0) {
                close(fds[i]);
                fds[i] = -1;
            }
    free(d.socks);
    free(pfd);
    return rc;
}

/*  Non-blocking connect, from address `from` when given. */
int gimpi_host_dial(const uint8_t addr[16], int port, const uint8_t *from, int *inprogress,
                    char *err, size_t errsize)
{
    char a[48];
    int fd;
    if (s_local_wanted() && (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                                         0)) >= 0) {
        struct sockaddr_un su;
        socklen_t sulen = s_local_name(&su, addr, port);
        if (connect(fd, (struct sockaddr *)&su, sulen) == 0 && s_same_user(fd)) {
            *inprogress = 0;
            return fd;
        }
        close(fd);              /* not on this machine (or busy, or not ours): TCP */
    }
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        s_err(err, errsize, "socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_in sa;
    if (from) {
        s_sockaddr(&sa, from, 0);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            s_err(err, errsize, "bind to announced address %s: %s",
                  impi_addr16_format(from, a, sizeof a), strerror(errno));
            close(fd);
            return -1;
        }
    }
    s_sockaddr(&sa, addr, port);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    if (rc < 0 && errno != EINPROGRESS) {
        s_err(err, errsize, "connect to %s:%d: %s", impi_addr16_format(addr, a, sizeof a),
              port, strerror(errno));
        close(fd);
        return -1;
    }
    *inprogress = rc < 0;
    return fd;
}
