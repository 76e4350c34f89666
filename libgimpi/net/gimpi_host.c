/*  gimpi_host.c — the host connections of an IMPI job (doc/impi-protocol.md §3.9): the
 *  sockets (listeners, dialling, accepting) and the static hosts' meeting.
 *
 *  One poll() loop does everything at once, in steps taken as sockets get ready: the dial
 *  step (a non-blocking connect to every lower-ranked host, each socket bound to our
 *  announced address first, as LAM checks the source address, then the 4-byte rank sent
 *  on it), the accept step (callers from the higher-ranked hosts) and the read-rank step
 *  (the 4-byte rank read from each caller).  Doing it all concurrently means the order in
 *  which hosts arrive does not matter and nothing can deadlock; the deadline bounds it
 *  all.  Anyone can reach a fresh listener, so a caller that is not a host of the job is
 *  refused (closed, logged at a bounded rate, with what to do when a host of the job may
 *  be the one refused) and the meeting goes on: checked at accept (source address, the
 *  user of a local peer, refused when the kernel cannot tell it) and at the rank (range,
 *  address, duplicate, hang-up, silence), with the waiting callers held in a table of
 *  fixed size.  A meeting that times out names the last refusal in its error.  Dynamic
 *  hosts use the same listeners and dialling later (msg_dynhost.c).
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
#include "base/gimpi_ratelog.h"
#include "base/gimpi_clock.h"
#include "base/gimpi_err.h"
#include "base/gimpi_hostset.h"
#include "base/gimpi_tunables.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/*  Fills a sockaddr_in from a 16-byte IMPI address and a port. */
static void s_sockaddr(struct sockaddr_in *sa, const uint8_t addr[16], int port)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_addr.s_addr = htonl(impi_addr16_ipv4(addr));
    sa->sin_port = htons((uint16_t)port);
}

/*  GIMPI_PORTS as a range: 0 (unset: lo = hi = 0), or -1 with a message. */
static int s_port_range(int *lo, int *hi, char *err, size_t errsize)
{
    *lo = *hi = 0;
    const char *e = gimpi_env(GIMPI_ENV_PORTS);
    if (!e || !*e)
        return 0;
    char *end;
    long a = strtol(e, &end, 10), b = a;
    if (end != e && *end == '-')
        b = strtol(end + 1, &end, 10);
    if (end == e || *end || a < 1 || b < a || b > 65535) {
        gimpi_fail(err, errsize, "%s='%s' is not a port range LO-HI within 1..65535", GIMPI_ENV_PORTS,
              e);
        return -1;
    }
    *lo = (int)a;
    *hi = (int)b;
    return 0;
}

/*  Creates the TCP listener (gimpi_host.h). */
int gimpi_host_listen(const uint8_t addr[16], int *port, char *err, size_t errsize)
{
    int lo, hi;
    if (s_port_range(&lo, &hi, err, errsize) < 0)
        return -1;
    char a[48];
    for (int p = lo;; p++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            gimpi_fail(err, errsize, "socket: %s", strerror(errno));
            return -1;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in sa;
        s_sockaddr(&sa, addr, p);
        socklen_t salen = sizeof sa;
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, SOMAXCONN) == 0
            && getsockname(fd, (struct sockaddr *)&sa, &salen) == 0) {
            if (port)
                *port = ntohs(sa.sin_port);
            return fd;
        }
        int e = errno;
        close(fd);
        if (e == EADDRINUSE && p > 0 && p < hi)
            continue;                   /* taken: the next port of the range */
        if (e == EADDRINUSE && p > 0)
            gimpi_fail(err, errsize, "listen on %s: no free port in %s=%d-%d",
                  impi_addr16_format(addr, a, sizeof a), GIMPI_ENV_PORTS, lo, hi);
        else
            gimpi_fail(err, errsize, "listen on %s: %s", impi_addr16_format(addr, a, sizeof a),
                  strerror(e));
        return -1;
    }
}

/*  Whether local sockets are wanted (GIMPI_LOCAL_SOCKETS unset or not "0"). */
static int s_local_wanted(void)
{
    const char *e = gimpi_env("GIMPI_LOCAL_SOCKETS");
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

/*  Accepts one caller (non-blocking, close-on-exec).  A caller on a local listener that
 *  runs under another user is closed: -1 with errno EAGAIN (as if nobody had called) and
 *  its uid in *other (else *other = -1). */
static int s_accept_checked(int listen_fd, long *other)
{
    *other = -1;
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0 && gimpi_host_is_local(fd) && !s_same_user(fd)) {
        struct ucred cr = { .uid = (uid_t)-1 };
        socklen_t len = sizeof cr;
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len);
        *other = (long)cr.uid;
        close(fd);
        errno = EAGAIN;
        return -1;
    }
    return fd;
}

/*  Accepts one caller; a local caller of another user is refused (EAGAIN). */
int gimpi_host_accept(int listen_fd)
{
    long other;
    return s_accept_checked(listen_fd, &other);
}

/*  The user of the other end of TCP connection fd, asked of the kernel's socket
 *  diagnostics (NETLINK_SOCK_DIAG, as `ss -e` does) by the connection's addresses and
 *  ports.  The lookup names the other end's socket: its own address and port as source,
 *  ours as destination. */
int gimpi_host_peer_uid(int fd, unsigned *uid)
{
    const char *diag = gimpi_env("GIMPI_DANCE_SOCK_DIAG");
    if (diag && strcmp(diag, "0") == 0)
        return 0;               /* tests: the lookup failing, as where the kernel lacks it */
    struct sockaddr_in me, peer;
    socklen_t ml = sizeof me, pl = sizeof peer;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 || me.sin_family != AF_INET
        || getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 || peer.sin_family != AF_INET)
        return 0;
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0)
        return 0;
    struct {
        struct nlmsghdr nh;
        struct inet_diag_req_v2 r;
    } req;
    memset(&req, 0, sizeof req);
    req.nh.nlmsg_len = sizeof req;
    req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nh.nlmsg_flags = NLM_F_REQUEST;
    req.r.sdiag_family = AF_INET;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_states = ~0u;
    req.r.id.idiag_sport = peer.sin_port;
    req.r.id.idiag_src[0] = peer.sin_addr.s_addr;
    req.r.id.idiag_dport = me.sin_port;
    req.r.id.idiag_dst[0] = me.sin_addr.s_addr;
    req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
    union {
        struct nlmsghdr nh;
        uint8_t bytes[1024];
    } rep;
    int found = 0;
    /* the kernel answers within the send, so the reply is there at once */
    if (sendto(nl, &req, sizeof req, 0, (struct sockaddr *)&kernel, sizeof kernel)
        == (ssize_t)sizeof req) {
        ssize_t got = recv(nl, &rep, sizeof rep, MSG_DONTWAIT);
        if (got >= (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg))
            && NLMSG_OK(&rep.nh, (size_t)got) && rep.nh.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
            const struct inet_diag_msg *m = NLMSG_DATA(&rep.nh);
            /* a listener or a closed connection's remains carry no owner */
            if (m->idiag_state != TCP_LISTEN && m->idiag_state != TCP_TIME_WAIT
                && m->idiag_state != TCP_CLOSE) {
                *uid = m->idiag_uid;
                found = 1;
            }
        }
    }
    close(nl);
    return found;
}

/*  1 when fd is a Unix-domain socket. */
int gimpi_host_is_local(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_UNIX;
}

/*  The bound on noticing a peer whose link went silent (GIMPI_LINK_TIMEOUT seconds,
 *  default GIMPI_LINK_TIMEOUT_S): TCP keep-alive probes on an idle connection, and
 *  TCP_USER_TIMEOUT on unacknowledged data.  Without them a host whose cable is pulled
 *  leaves its peers waiting for the kernel's retransmission limit (about 15 minutes), or
 *  forever on an idle connection. */
static void s_link_timeout(int fd)
{
    const char *v = gimpi_env("GIMPI_LINK_TIMEOUT");
    long s = v && *v ? strtol(v, NULL, 10) : GIMPI_LINK_TIMEOUT_S;
    if (s <= 0)
        return;                 /* 0: the kernel's defaults */
    if (s < 2)
        s = 2;
    if (s > 3600)
        s = 3600;
    int one = 1, idle = (int)(s / 2), intvl = 1, cnt = (int)(s - s / 2);
    unsigned int ms = (unsigned int)(s * 1000);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

/*  Makes a connected socket ready for the packet engine: no Nagle delay, non-blocking,
 *  4 MiB send and receive buffers (a long message is then written in a few calls instead
 *  of waiting for the kernel's autotuning to grow them), and a bound on a silent link. */
void gimpi_host_tune(int fd)
{
    int one = 1;
    if (!gimpi_host_is_local(fd)) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        s_link_timeout(fd);
    }
    int big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

/*  One socket the dance is busy with. */
typedef struct {
    int fd;                     /* -1: finished */
    int peer;                   /* connect side: the host we call; accept side: -1 */
    int connecting;             /* connect() in progress */
    uint8_t buf[4];
    size_t done;                /* rank bytes sent (connect side) or read (accept side) */
    int64_t since_ms;           /* accept side: when accepted (the rank is due by then +
                                 * rank_ms) */
    int local;                  /* accept side: came through the local listener */
    uint32_t src;               /* accept side, TCP: source IPv4 address */
    uint16_t sport;             /* accept side: source port */
} dance_sock_t;

/*  The whole meeting: the tables, the sockets under way and what is connected so far. */
typedef struct {
    const impi_tables_t *t;
    int myhost, n, nhigher;
    int *fds;                   /* the result: one connected socket per other host */
    dance_sock_t *socks;        /* calls and callers under way, callers in the order they
                                 * were accepted (fd -1: finished, packed away) */
    int nsocks, cap;
    int accepted;               /* connections from higher hosts fully identified */
    int rank_ms;                /* how long a caller has for its rank */
    int check_callers;          /* source address and user checks on TCP callers */
    gimpi_ratelog_t log;        /* refusals: GIMPI_DANCE_LOG_PER_SEC lines a second */
    char last[512];             /* the last refusal, "who: why", for the timeout's error */
    char *err;
    size_t errsize;
} dance_t;

/*  "A.B.C.D:PORT" of a TCP caller, "a local socket" for a Unix-domain one. */
static const char *s_caller_name(const dance_sock_t *s, char *buf, size_t size)
{
    if (s->local)
        return "a local socket";
    struct in_addr a = { htonl(s->src) };
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a, ip, sizeof ip);
    snprintf(buf, size, "%s:%u", ip, (unsigned)s->sport);
    return buf;
}

/*  Ends the log's second when it is over (or at once with force), writing the summary
 *  line of the refusals counted but not written in it. */
static void s_log_tick(dance_t *d, int64_t now, bool force)
{
    int more = gimpi_ratelog_roll(&d->log, now, force);
    if (more)
        fprintf(stderr, "gimpi[host %d]: %d more callers refused in the last second\n",
                d->myhost, more);
}

/*  Logs one refused caller (rate-limited, see dance_log_t). */
static void s_log_refusal(dance_t *d, const char *who, const char *fmt, ...)
{
    int64_t now = gimpi_now_ms();
    s_log_tick(d, now, false);
    char why[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(d->last, sizeof d->last, "%s: %s", who, why);
    if (!gimpi_ratelog_event(&d->log, now))
        return;
    fprintf(stderr, "gimpi[host %d]: refused a caller from %s: %s\n", d->myhost, who, why);
}

/*  Closes caller s, frees its slot and logs why. */
static void s_refuse(dance_t *d, dance_sock_t *s, const char *fmt, ...)
{
    char who[48], why[448];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    s_log_refusal(d, s_caller_name(s, who, sizeof who), "%s", why);
    close(s->fd);
    s->fd = -1;
}

/*  1 when a TCP caller's source address is that of a host that is to call us (a higher
 *  host; one that announced no address, 0.0.0.0, matches any). */
static int s_from_caller_host(const dance_t *d, uint32_t src)
{
    for (int i = d->myhost + 1; i < d->n; i++) {
        uint32_t a = impi_addr16_ipv4(d->t->hosts[i].addr);
        if (a == 0 || a == src)
            return 1;
    }
    return 0;
}

/*  The dotted text of IPv4 address a (host order) into buf. */
static const char *s_ip(uint32_t a, char *buf, size_t size)
{
    struct in_addr in = { htonl(a) };
    if (!inet_ntop(AF_INET, &in, buf, (socklen_t)size))
        snprintf(buf, size, "?");
    return buf;
}

/*  What to do about a caller refused for its address, which it called from (src): a host
 *  with several addresses where the kernel's choice of source differs from the address it
 *  announced (LAM announces its host name's address and lets the kernel choose) must
 *  announce the one it calls from, or we announce one on its network, or the check goes. */
static const char *s_addr_hint(uint32_t src, char *buf, size_t size)
{
    char ip[INET_ADDRSTRLEN];
    s_ip(src, ip, sizeof ip);
    snprintf(buf, size, "if it is a host of the job, have it announce %s (LAM: "
             "IMPI_HOST_NAME=%s), or announce ours on its network (gimpirun -if), or set "
             "GIMPI_DANCE_CHECK_CALLERS=0 here", ip, ip);
    return buf;
}

/*  Refuses TCP caller c, whose source address no host that calls us announced, saying
 *  which addresses they announced and what to do. */
static void s_refuse_address(dance_t *d, dance_sock_t *c)
{
    char list[96] = "", hint[256], ip[INET_ADDRSTRLEN], who[32];
    size_t off = 0;
    if (d->n - d->myhost > 2)
        snprintf(who, sizeof who, "hosts %d..%d", d->myhost + 1, d->n - 1);
    else
        snprintf(who, sizeof who, "host %d", d->myhost + 1);
    for (int i = d->myhost + 1; i < d->n && off < sizeof list; i++) {
        if (i - d->myhost > 3) {
            snprintf(list + off, sizeof list - off, ", ...");
            break;
        }
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", off ? ", " : "",
                                s_ip(impi_addr16_ipv4(d->t->hosts[i].addr), ip, sizeof ip));
    }
    s_refuse(d, c, "not the address of a host that calls us; %s announced %s; %s", who, list,
             s_addr_hint(c->src, hint, sizeof hint));
}

/*  The user check of TCP caller c: refuses it (1) when it is a socket of this machine that
 *  runs under another user, or when it comes from an address of this machine and the
 *  kernel's socket diagnostics cannot say whose it is (a failed lookup must not let
 *  another user in); 0 when it may stay.  A caller from another address (another machine,
 *  or another network namespace of this one) is left to the address and rank checks. */
static int s_refuse_user(dance_t *d, dance_sock_t *c)
{
    unsigned uid;
    if (gimpi_host_peer_uid(c->fd, &uid)) {
        if (uid == (unsigned)geteuid())
            return 0;
        s_refuse(d, c, "runs under another user (uid %u); the hosts of a job on one machine "
                 "must run as one user, or set GIMPI_DANCE_CHECK_CALLERS=0 here", uid);
        return 1;
    }
    char ip[INET_ADDRSTRLEN];
    if (!gimpi_hostset_is_local(s_ip(c->src, ip, sizeof ip)))
        return 0;
    s_refuse(d, c, "comes from this machine, but the kernel's socket diagnostics do not say "
             "which user it runs as; set GIMPI_DANCE_CHECK_CALLERS=0 here to admit it");
    return 1;
}

/*  Starts a non-blocking connect to host i from our own announced address. */
static int s_start_connect(const impi_tables_t *t, int myhost, int i, dance_sock_t *s,
                           char *err, size_t errsize)
{
    char why[200];
    int connecting = 0;
    int fd = gimpi_host_dial(t->hosts[i].addr, t->hosts[i].port, t->hosts[myhost].addr,
                             &connecting, why, sizeof why);
    if (fd < 0) {
        gimpi_fail(err, errsize, "host %d: %s", i, why);
        return -1;
    }
    *s = (dance_sock_t){ .fd = fd, .peer = i, .connecting = connecting };
    gimpi_be_put32(s->buf, (uint32_t)myhost);
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
            gimpi_fail(d->err, d->errsize, "connect to host %d (%s:%d): %s", s->peer,
                  impi_addr16_format(d->t->hosts[s->peer].addr, a, sizeof a),
                  d->t->hosts[s->peer].port, strerror(e));
            return -1;
        }
        s->connecting = 0;
    }
    ssize_t w = send(s->fd, s->buf + s->done, 4 - s->done, MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN && errno != EINTR) {
        gimpi_fail(d->err, d->errsize, "sending rank to host %d: %s", s->peer, strerror(errno));
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

/*  Read-rank step: reads what a caller has sent of its 4-byte rank and, once whole, makes
 *  the socket that host's.  Anything else is refused and the meeting goes on: a caller
 *  that hangs up first, a rank that is not a higher host's, a TCP caller whose source is
 *  not the address its rank announced (LAM checks the same), and a rank already connected.
 *  For the last one the first caller is kept: the real host calls as soon as the startup
 *  is over, and once its rank is out it takes the connection for made, so replacing it
 *  would let any later caller cut it off; a caller of another user on this machine never
 *  gets this far (s_accept_step), so only a caller from the host's own address, under our
 *  user or on that other machine, could take a rank first.  A dynamic host calling too
 *  early (we are not registered yet) sends the introduction marker: it is closed, and
 *  takes us for gone, without a log line. */
static void s_read_rank_step(dance_t *d, dance_sock_t *s)
{
    while (s->done < 4) {       /* until it would block: a hang-up after part of it shows */
        ssize_t got = recv(s->fd, s->buf + s->done, 4 - s->done, 0);
        if (got > 0) {
            s->done += (size_t)got;
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return;
        s_refuse(d, s, "hung up after %zu of the 4 bytes of its rank", s->done);
        return;
    }
    uint32_t who = gimpi_be_get32(s->buf);
    if (who == GIMPI_INTRO_MARKER) {
        close(s->fd);
        s->fd = -1;
        return;
    }
    if (who <= (uint32_t)d->myhost || who >= (uint32_t)d->n) {
        s_refuse(d, s, "announced rank %u, expected %d..%d", who, d->myhost + 1, d->n - 1);
        return;
    }
    uint32_t a = impi_addr16_ipv4(d->t->hosts[who].addr);
    if (d->check_callers && !s->local && a && a != s->src) {
        char want[48], hint[256];
        s_refuse(d, s, "announced rank %u, whose address is %s; %s", who,
                 impi_addr16_format(d->t->hosts[who].addr, want, sizeof want),
                 s_addr_hint(s->src, hint, sizeof hint));
        return;
    }
    if (d->fds[who] >= 0) {
        s_refuse(d, s, "announced rank %u, which is connected already", who);
        return;
    }
    gimpi_host_tune(s->fd);
    d->fds[who] = s->fd;
    s->fd = -1;
    d->accepted++;
}

/*  Packs the slots in use to the front, keeping their order (callers stay in the order
 *  they were accepted). */
static void s_compact(dance_t *d)
{
    int w = 0;
    for (int k = 0; k < d->nsocks; k++)
        if (d->socks[k].fd >= 0)
            d->socks[w++] = d->socks[k];
    d->nsocks = w;
}

/*  A slot for a new caller, after every caller accepted before it.  When the table is
 *  full (our calls, the higher hosts and GIMPI_DANCE_MAX_WAITING more) the oldest caller
 *  still owing its rank is dropped to make room, so a crowd of silent callers cannot keep
 *  a real host waiting in the kernel's backlog. */
static dance_sock_t *s_caller_slot(dance_t *d)
{
    if (d->nsocks == d->cap)
        s_compact(d);
    if (d->nsocks == d->cap) {
        for (int k = 0; k < d->nsocks; k++)
            if (d->socks[k].peer < 0) {
                s_refuse(d, &d->socks[k], "sent no rank yet; dropped to make room");
                break;
            }
        s_compact(d);
    }
    return &d->socks[d->nsocks++];
}

/*  Takes one caller from listener lfd: refuses it at once when it is a local socket of
 *  another user, a TCP caller from an address no higher host announced, or a TCP caller
 *  on this machine that runs under another user or whose user the kernel does not tell
 *  (s_refuse_user); else gives it a
 *  slot, where its rank is read (s_read_pass).  1 when a caller was taken, 0 when none
 *  was waiting, -1 with a message when accept failed. */
static int s_accept_one(dance_t *d, int lfd)
{
    long other = -1;
    int fd = s_accept_checked(lfd, &other);
    if (fd < 0) {
        if (other >= 0) {
            s_log_refusal(d, "a local socket", "runs under another user (uid %ld)", other);
            return 1;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
            return 0;
        gimpi_fail(d->err, d->errsize, "accept: %s", strerror(errno));
        return -1;
    }
    dance_sock_t c = { .fd = fd, .peer = -1, .since_ms = gimpi_now_ms(),
                       .local = gimpi_host_is_local(fd) };
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    if (!c.local) {
        if (getpeername(fd, (struct sockaddr *)&sa, &sl) < 0 || sa.sin_family != AF_INET) {
            s_refuse(d, &c, "gone before it could be identified");
            return 1;
        }
        c.src = ntohl(sa.sin_addr.s_addr);
        c.sport = ntohs(sa.sin_port);
        if (d->check_callers && !s_from_caller_host(d, c.src)) {
            s_refuse_address(d, &c);
            return 1;
        }
        if (d->check_callers && s_refuse_user(d, &c))
            return 1;
    }
    *s_caller_slot(d) = c;
    return 1;
}

/*  Accept step: takes up to GIMPI_DANCE_ACCEPT_BATCH callers from each listener that has
 *  some now, the local one first.  Callers are read in the order they were accepted, and
 *  a local caller is known to be our user (SO_PEERCRED), so when a local and a TCP caller
 *  claim the same rank in one round the local one is read first.  The listeners are
 *  asked afresh here, not from the round's poll, so a local caller that came in before a
 *  TCP one is never left for the next round.  0, or -1 with a message. */
static int s_accept_step(dance_t *d, int listen_fd, int local_fd)
{
    struct pollfd lp[2] = { { .fd = local_fd, .events = POLLIN },
                            { .fd = listen_fd, .events = POLLIN } };
    if (poll(lp, 2, 0) <= 0)
        return 0;
    for (int l = 0; l < 2; l++) {
        if (!(lp[l].revents & POLLIN))
            continue;
        for (int k = 0; k < GIMPI_DANCE_ACCEPT_BATCH && d->accepted < d->nhigher; k++) {
            struct pollfd more = { .fd = lp[l].fd, .events = POLLIN };
            if (k > 0 && poll(&more, 1, 0) != 1)
                break;          /* the listener may be blocking: accept only when ready */
            int r = s_accept_one(d, lp[l].fd);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
        }
    }
    return 0;
}

/*  Refuses the callers whose rank is overdue; returns the time left until the next one is
 *  due (INT64_MAX when none waits). */
static int64_t s_expire_callers(dance_t *d, int64_t now)
{
    int64_t next = INT64_MAX;
    for (int k = 0; k < d->nsocks; k++) {
        dance_sock_t *s = &d->socks[k];
        if (s->fd < 0 || s->peer >= 0)
            continue;
        int64_t due = s->since_ms + d->rank_ms;
        if (due <= now)
            s_refuse(d, s, "sent no rank within %d ms", d->rank_ms);
        else if (due - now < next)
            next = due - now;
    }
    return next;
}

/*  The error of a meeting that ran out of time: which hosts are missing. */
static void s_dance_timeout(dance_t *d, int timeout_ms)
{
    char missing[256] = "";
    size_t off = 0;
    for (int i = 0; i < d->n && off < sizeof missing - 16; i++)
        if (i != d->myhost && d->fds[i] < 0)
            off += (size_t)snprintf(missing + off, sizeof missing - off, " %d", i);
    if (d->log.total == 0)
        gimpi_fail(d->err, d->errsize, "host connections: timed out after %d ms; missing hosts:%s",
                   timeout_ms, missing);
    else
        gimpi_fail(d->err, d->errsize, "host connections: timed out after %d ms; missing "
                   "hosts:%s; %ld callers refused, the last from %s", timeout_ms, missing,
                   (long)d->log.total, d->last);
}

/*  Read pass: reads the rank of every caller that still owes it, in the order they were
 *  accepted.  So when two callers announce the same rank, the one that connected first
 *  has its rank read first whenever both ranks have arrived, even when the second was
 *  accepted in the same round (s_read_rank_step keeps the first). */
static void s_read_pass(dance_t *d)
{
    for (int k = 0; k < d->nsocks; k++)
        if (d->socks[k].fd >= 0 && d->socks[k].peer < 0)
            s_read_rank_step(d, &d->socks[k]);
}

/*  One round of the meeting: refuses overdue callers, polls the listeners (while callers
 *  are missing) and the sockets under way until left_ms (or the next caller's rank or the
 *  log's summary is due), then takes the dial steps, the accept step and the read pass.
 *  0, or -1 with a message. */
static int s_dance_round(dance_t *d, int listen_fd, int local_fd, struct pollfd *pfd,
                         int64_t left_ms)
{
    int64_t now = gimpi_now_ms();
    int64_t wait = s_expire_callers(d, now);
    if (wait > left_ms)
        wait = left_ms;
    int due = gimpi_ratelog_due_ms(&d->log, now);
    if (due >= 0 && due < wait)
        wait = due;
    if (wait < 0)
        wait = 0;
    s_compact(d);
    int np = 0;
    int want_accept = d->accepted < d->nhigher;
    if (want_accept) {
        pfd[np++] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
        pfd[np++] = (struct pollfd){ .fd = local_fd, .events = POLLIN };  /* -1: none */
    }
    int first = np;
    for (int k = 0; k < d->nsocks; k++) {
        dance_sock_t *s = &d->socks[k];
        pfd[np++] = (struct pollfd){ .fd = s->fd, .events = s->peer >= 0 ? POLLOUT : POLLIN };
    }
    int r = poll(pfd, (nfds_t)np, (int)wait);
    s_log_tick(d, gimpi_now_ms(), false);
    if (r < 0) {
        if (errno == EINTR)
            return 0;
        gimpi_fail(d->err, d->errsize, "poll: %s", strerror(errno));
        return -1;
    }
    for (int k = 0; k < d->nsocks; k++) {
        dance_sock_t *s = &d->socks[k];
        if (s->fd >= 0 && s->peer >= 0 && pfd[first + k].revents && s_dial_step(d, s) < 0)
            return -1;
    }
    if (want_accept && s_accept_step(d, listen_fd, local_fd) < 0)
        return -1;
    s_read_pass(d);
    return 0;
}

/*  How long a caller has for its rank: GIMPI_DANCE_RANK_MS, else the default. */
static int s_rank_ms(void)
{
    const char *e = gimpi_env("GIMPI_DANCE_RANK_MS");
    int v = e ? atoi(e) : 0;
    return v > 0 ? v : GIMPI_DANCE_RANK_MS;
}

/*  Meets every other host: calls to the lower hosts, callers from the higher ones, all
 *  under way at once, until every host is connected or the deadline passes.  Strangers
 *  among the callers are refused and logged, and the meeting goes on. */
int gimpi_host_dance(const impi_tables_t *t, int myhost, int listen_fd, int local_fd,
                     int *fds, int timeout_ms, char *err, size_t errsize)
{
    int n = t->nhosts;
    for (int i = 0; i < n; i++)
        fds[i] = -1;
    if (myhost < 0 || myhost >= n) {
        gimpi_fail(err, errsize, "host rank %d out of range 0..%d", myhost, n - 1);
        return -1;
    }
    const char *chk = gimpi_env("GIMPI_DANCE_CHECK_CALLERS");
    dance_t d = { .t = t, .myhost = myhost, .n = n, .nhigher = n - 1 - myhost, .fds = fds,
                  .rank_ms = s_rank_ms(), .check_callers = !(chk && strcmp(chk, "0") == 0),
                  .log = { .per_sec = GIMPI_DANCE_LOG_PER_SEC }, .err = err, .errsize = errsize };
    /* our calls, the higher hosts' callers, and room for strangers beside them */
    d.cap = myhost + d.nhigher + GIMPI_DANCE_MAX_WAITING;
    d.socks = calloc((size_t)d.cap, sizeof *d.socks);
    struct pollfd *pfd = calloc((size_t)d.cap + 2, sizeof *pfd);
    if (!d.socks || !pfd) {
        free(d.socks);
        free(pfd);
        gimpi_fail(err, errsize, "out of memory");
        return -1;
    }
    int rc = -1;
    for (int i = 0; i < myhost; i++)
        if (s_start_connect(t, myhost, i, &d.socks[d.nsocks++], err, errsize) < 0) {
            d.nsocks--;
            goto out;
        }
    int64_t deadline = gimpi_now_ms() + timeout_ms;
    for (;;) {
        int calling = 0;
        for (int k = 0; k < d.nsocks; k++)
            if (d.socks[k].fd >= 0 && d.socks[k].peer >= 0)
                calling++;
        if (calling == 0 && d.accepted == d.nhigher) {
            rc = 0;
            break;
        }
        int64_t left = deadline - gimpi_now_ms();
        if (left <= 0) {
            s_dance_timeout(&d, timeout_ms);
            goto out;
        }
        if (s_dance_round(&d, listen_fd, local_fd, pfd, left) < 0)
            goto out;
    }
out:
    for (int k = 0; k < d.nsocks; k++) {   /* our calls on failure; strangers still silent */
        dance_sock_t *s = &d.socks[k];
        if (s->fd >= 0 && s->peer < 0)
            s_refuse(&d, s, "sent no rank before every host had met");
        else if (s->fd >= 0)
            close(s->fd);
    }
    s_log_tick(&d, gimpi_now_ms(), true);
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
        gimpi_fail(err, errsize, "socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_in sa;
    if (from) {
        s_sockaddr(&sa, from, 0);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            gimpi_fail(err, errsize, "bind to announced address %s: %s",
                  impi_addr16_format(from, a, sizeof a), strerror(errno));
            close(fd);
            return -1;
        }
    }
    s_sockaddr(&sa, addr, port);
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    if (rc < 0 && errno != EINPROGRESS) {
        gimpi_fail(err, errsize, "connect to %s:%d: %s", impi_addr16_format(addr, a, sizeof a),
              port, strerror(errno));
        close(fd);
        return -1;
    }
    *inprogress = rc < 0;
    return fd;
}
