/*  t/host_local.c — local sockets between the hosts of one machine (libgimpi/net/gimpi_host.c):
 *  a listener's local twin is found from the address and port alone, a dial reaches it
 *  (a Unix-domain socket) and carries bytes both ways; without a twin, with
 *  GIMPI_LOCAL_SOCKETS=0, or when the name is held by a process of another user, the dial
 *  goes over TCP; a caller of another user is refused by the acceptor; a name can be held
 *  only once; and a whole data-plane context meets its peer over a local socket and moves
 *  messages of every size class over it.  The other-user cases need root (to become
 *  `nobody`) and are skipped without it.
 */
#include "dp_harness.h"
#include "net/gimpi_host.h"
#include "gtap.h"
#include "testlib.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMO 20000

/*  A TCP listener on 127.0.0.1 (port in *port). */
static int s_tcp_listener(uint8_t addr[16], int *port)
{
    char err[200];
    impi_addr16_from_ipv4(addr, 0x7f000001u);
    int fd = gimpi_host_listen(addr, port, err, sizeof err);
    if (fd < 0)
        BAIL_OUT("listen: %s", err);
    return fd;
}

/*  Dials addr:port and waits (bounded) until the connect is complete; the socket or -1. */
static int s_dial(const uint8_t addr[16], int port)
{
    char err[200];
    int inprogress = 0;
    int fd = gimpi_host_dial(addr, port, NULL, &inprogress, err, sizeof err);
    if (fd >= 0 && inprogress) {
        struct pollfd p = { fd, POLLOUT, 0 };
        int e = 0;
        socklen_t el = sizeof e;
        if (poll(&p, 1, TMO) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

/*  Accepts on lfd within the time limit; the socket or -1. */
static int s_accept(int lfd)
{
    int64_t end = tl_now_ms() + TMO;
    while (tl_now_ms() < end) {
        struct pollfd p = { lfd, POLLIN, 0 };
        if (poll(&p, 1, 1000) == 1) {
            int fd = gimpi_host_accept(lfd);
            if (fd >= 0 || errno != EAGAIN)
                return fd;
        }
    }
    return -1;
}

/*  Bytes both ways over a connected pair. */
static int s_talk(int a, int b)
{
    char x[6] = "hello", y[6] = { 0 };
    return tl_send_all(a, x, 6) == 0 && tl_recv_exact(b, y, 6, TMO) == 6
           && strcmp(y, "hello") == 0 && tl_send_all(b, "back", 5) == 0
           && tl_recv_exact(a, y, 5, TMO) == 5 && strcmp(y, "back") == 0;
}

/*  Dials addr:port, accepts on lfd, and checks the pair: the dial is local exactly when
 *  want_local says so, and bytes cross both ways.  1 when all holds. */
static int s_pair(const uint8_t addr[16], int port, int lfd, int want_local)
{
    int a = s_dial(addr, port), b = a >= 0 ? s_accept(lfd) : -1;
    int good = a >= 0 && b >= 0 && gimpi_host_is_local(a) == want_local
               && gimpi_host_is_local(b) == want_local && s_talk(a, b);
    if (a >= 0)
        close(a);
    if (b >= 0)
        close(b);
    return good;
}

/*  The abstract name of 127.0.0.1:port, as gimpi_host.c forms it (doc/data-plane.md). */
static socklen_t s_name(struct sockaddr_un *su, int port)
{
    memset(su, 0, sizeof *su);
    su->sun_family = AF_UNIX;
    int n = snprintf(su->sun_path + 1, sizeof su->sun_path - 1, "gimpi-host/127.0.0.1:%d", port);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/*  Runs fn in a child that has become `nobody`, which reports back on a socket pair
 *  (*ready_rd: our end).  The child's pid, or -1. */
static int s_as_nobody(int (*fn)(int port, int ready), int port, int *ready_rd)
{
    int pp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pp) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(pp[0]);
        if (setgid(65534) < 0 || setuid(65534) < 0)
            _exit(90);
        alarm(30);
        _exit(fn(port, pp[1]));
    }
    close(pp[1]);
    *ready_rd = pp[0];
    return pid;
}

/*  nobody holds the local name of port until it is killed. */
static int s_squat(int port, int ready)
{
    struct sockaddr_un su;
    socklen_t len = s_name(&su, port);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&su, len) < 0 || listen(fd, 8) < 0)
        return 1;
    if (write(ready, "R", 1) != 1)
        return 2;
    pause();                    /* killed by the parent */
    return 0;
}

/*  nobody calls the local name of port; exits 0 when the acceptor hung up on it. */
static int s_call(int port, int ready)
{
    struct sockaddr_un su;
    socklen_t len = s_name(&su, port);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&su, len) < 0)
        return 1;
    if (write(ready, "C", 1) != 1)
        return 2;
    char c;
    struct pollfd p = { fd, POLLIN, 0 };
    return poll(&p, 1, 20000) == 1 && read(fd, &c, 1) == 0 ? 0 : 3;
}

/*  Connected local sockets among this process's descriptors. */
static int s_count_local(void)
{
    int n = 0;
    for (int fd = 3; fd < 1024; fd++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        n += gimpi_host_is_local(fd) && getpeername(fd, (struct sockaddr *)&ss, &len) == 0;
    }
    return n;
}

/*  A job body: both tasks send each other messages of 0 bytes to 1 MiB; the task holds a
 *  connected local socket exactly when *arg says it should. */
static int s_job_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    int want = *(const int *)arg;
    gimpi_msg_t *m = dp_open(t, rank, lfd, TMO);
    if (!m)
        return 1;
    if (s_count_local() != want) {
        dp_close(&m);
        return dp_fail(rank, "%d connected local sockets, expected %d", s_count_local(), want);
    }
    static const size_t sizes[] = { 0, 1, 100, 65536, 65537, 1u << 20 };
    uint8_t *buf = malloc(1u << 20), *in = malloc(1u << 20);
    int peer = gimpi_msg_tid(m, 1 - rank), rc = 0;
    for (size_t k = 0; buf && in && k < sizeof sizes / sizeof *sizes && !rc; k++) {
        gimpi_status_t st;
        dp_fill(buf, sizes[k], (uint32_t)(rank * 100 + k));
        gimpi_msg_req_t *r = NULL;
        if (gimpi_msg_isend(m, peer, (int)k, buf, sizes[k], 0, &r) < 0
            || gimpi_msg_recv(m, peer, (int)k, in, 1u << 20, &st) < 0
            || gimpi_msg_wait(m, &r, NULL) < 0 || st.len != sizes[k]
            || dp_check(in, sizes[k], (uint32_t)((1 - rank) * 100 + k)) != -1)
            rc = dp_fail(rank, "size %zu", sizes[k]);
    }
    free(buf);
    free(in);
    if (dp_close(&m) != 0 && !rc)
        rc = dp_fail(rank, "close");
    return rc;
}

int main(void)
{
    plan(NO_PLAN);
    uint8_t addr[16];
    int port;

    /* a listener and its twin: the dial is local and carries bytes */
    unsetenv("GIMPI_LOCAL_SOCKETS");
    int tcp = s_tcp_listener(addr, &port);
    int loc = gimpi_msg_listen_local(tcp);         /* the public name of the same */
    ok(loc >= 0, "a TCP listener gets a local twin (gimpi_msg_listen_local)");
    cmp_ok(gimpi_host_listen_local(tcp), "==", -1, "a second twin of the same port: none");
    ok(loc >= 0 && s_pair(addr, port, loc, 1),
       "the dial is a local socket, the twin accepts it, bytes cross both ways");

    /* GIMPI_LOCAL_SOCKETS=0: neither a twin nor a local dial */
    setenv("GIMPI_LOCAL_SOCKETS", "0", 1);
    cmp_ok(gimpi_host_listen_local(tcp), "==", -1, "GIMPI_LOCAL_SOCKETS=0: no twin");
    ok(s_pair(addr, port, tcp, 0),
       "GIMPI_LOCAL_SOCKETS=0: the dial goes over TCP although the twin exists");
    unsetenv("GIMPI_LOCAL_SOCKETS");
    close(loc);
    close(tcp);

    /* no twin (a host of another implementation): TCP */
    tcp = s_tcp_listener(addr, &port);
    ok(s_pair(addr, port, tcp, 0), "a listener without a twin is reached over TCP");
    close(tcp);

    /* another user: its squatted name is ignored, its call refused */
    skip(geteuid() != 0, 3, "needs root to act as another user") {
        tcp = s_tcp_listener(addr, &port);
        int rd = -1;
        char c = 0;
        pid_t sq = s_as_nobody(s_squat, port, &rd);
        ok(sq > 0 && tl_recv_exact(rd, &c, 1, TMO) == 1 && c == 'R',
           "nobody holds the local name of our port");
        ok(s_pair(addr, port, tcp, 0),
           "a name held by another user is not used: the dial goes over TCP");
        kill(sq, SIGKILL);
        waitpid(sq, NULL, 0);
        close(rd);
        loc = gimpi_host_listen_local(tcp);
        pid_t cl = s_as_nobody(s_call, port, &rd);
        int got = tl_recv_exact(rd, &c, 1, TMO) == 1 && c == 'C';
        struct pollfd p = { loc, POLLIN, 0 };
        int refused = got && poll(&p, 1, TMO) == 1 && gimpi_host_accept(loc) == -1
                      && errno == EAGAIN;
        int st = -1;
        waitpid(cl, &st, 0);
        ok(refused && WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "a call from another user is hung up on, not accepted (child status %d)", st);
        close(rd);
        close(loc);
        close(tcp);
    } end_skip;

    /* a whole context: two tasks meet over a local socket, every size class crosses */
    dp_opts_t o = { 2, 65536, 4, 8, 60000, 0, 0, 0 };
    int codes[2];
    int one = 1, none = 0;
    ok(dp_run(&o, s_job_body, &one, codes) == 0,
       "two tasks meet over a local socket: 0 B to 1 MiB both ways, eager and rendezvous");
    setenv("GIMPI_LOCAL_SOCKETS", "0", 1);
    ok(dp_run(&o, s_job_body, &none, codes) == 0, "the same over TCP (GIMPI_LOCAL_SOCKETS=0)");
    unsetenv("GIMPI_LOCAL_SOCKETS");
    done_testing();
}
