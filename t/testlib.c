/*  testlib.c — process, pipe and socket helpers for the multi-process TAP tests.
 *
 *  Every wait here is bounded by a deadline and driven by poll(); nothing sleeps to
 *  synchronise.  Programs are found in the build tree through $top_builddir (set by the
 *  test driver), falling back to the current directory.
 */
#include "testlib.h"
#include "gimpi_group.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*  Monotonic milliseconds. */
int64_t tl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*  Waits until fd is readable or the deadline passes; 1 readable, 0 timeout. */
static int s_wait_readable(int fd, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - tl_now_ms();
        if (left < 0)
            left = 0;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int rc = poll(&p, 1, (int)left);
        if (rc > 0)
            return 1;
        if (rc == 0)
            return 0;
        if (errno != EINTR)
            return 0;
    }
}

/*  Path of a program in the build tree. */
const char *tl_prog(const char *relpath)
{
    static char path[4096];
    const char *top = getenv("top_builddir");
    snprintf(path, sizeof path, "%s/%s", top && *top ? top : ".", relpath);
    return path;
}

/*  fork + exec with stdout/stderr on pipes. */
int tl_spawn(char *const argv[], tl_child_t *child)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(err, O_CLOEXEC) < 0) {
        close(out[0]);
        close(out[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        execv(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    child->pid = pid;
    child->out = out[0];
    child->err = err[0];
    return 0;
}

/*  One line within a deadline, read byte by byte so nothing after it is consumed. */
int tl_read_line(int fd, char *buf, size_t size, int timeout_ms)
{
    int64_t deadline = tl_now_ms() + timeout_ms;
    size_t n = 0;
    while (n + 1 < size) {
        if (!s_wait_readable(fd, deadline))
            return -1;
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (c == '\n')
            break;
        buf[n++] = c;
    }
    buf[n] = '\0';
    return (int)n;
}

/*  Everything until EOF or the deadline. */
size_t tl_read_all(int fd, char *buf, size_t size, int timeout_ms)
{
    int64_t deadline = tl_now_ms() + timeout_ms;
    size_t n = 0;
    while (n + 1 < size && s_wait_readable(fd, deadline)) {
        ssize_t r = read(fd, buf + n, size - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = '\0';
    return n;
}

/*  Bounded wait on the child's pidfd (or, where pidfd_open is missing — valgrind 3.19 —
 *  on waitpid every millisecond); SIGKILL when the bound passes. */
int tl_wait(tl_child_t *child, int timeout_ms)
{
    int64_t deadline = tl_now_ms() + timeout_ms;
    int status;
    int pfd = pidfd_open(child->pid, 0);
    for (;;) {
        pid_t r = waitpid(child->pid, &status, WNOHANG);
        if (r == child->pid) {
            if (pfd >= 0)
                close(pfd);
            return status;
        }
        if (r < 0 || tl_now_ms() >= deadline)
            break;
        if (pfd >= 0) {
            if (!s_wait_readable(pfd, deadline))
                break;
        } else {
            struct timespec ms = { 0, 1000000 };
            nanosleep(&ms, NULL);       /* reaping granularity, not synchronisation */
        }
    }
    if (pfd >= 0)
        close(pfd);
    kill(child->pid, SIGKILL);
    waitpid(child->pid, &status, 0);
    return -1;
}

/*  Closes a child's pipes. */
void tl_child_close(tl_child_t *child)
{
    if (child->out >= 0)
        close(child->out);
    if (child->err >= 0)
        close(child->err);
    child->out = child->err = -1;
}

/*  "A.B.C.D:PORT". */
int tl_parse_addr(const char *text, char *host, size_t hostsize, int *port)
{
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= hostsize)
        return -1;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p <= 0 || p > 65535)
        return -1;
    *port = (int)p;
    return 0;
}

/*  Blocking TCP connect. */
int tl_connect(const char *host, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/*  All bytes or -1. */
int tl_send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/*  Exactly len bytes within the deadline. */
long tl_recv_exact(int fd, void *buf, size_t len, int timeout_ms)
{
    int64_t deadline = tl_now_ms() + timeout_ms;
    char *p = buf;
    size_t got = 0;
    while (got < len) {
        if (!s_wait_readable(fd, deadline))
            return -1;
        ssize_t r = recv(fd, p + got, len - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return 0;
        if (r < 0)
            return -1;
        got += (size_t)r;
    }
    return (long)len;
}

/*  1 when the peer closes within the deadline. */
int tl_wait_closed(int fd, int timeout_ms)
{
    int64_t deadline = tl_now_ms() + timeout_ms;
    char buf[4096];
    while (s_wait_readable(fd, deadline)) {
        ssize_t r = recv(fd, buf, sizeof buf, 0);
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
            return 1;
    }
    return 0;
}

int tl_group_warm(struct gimpi_groups_t *g, const char *group)
{
    for (int64_t end = tl_now_ms() + 20000; tl_now_ms() < end;) {
        uint64_t l0, l1;
        gimpi_groups_counters(g, &l0, NULL);
        gimpi_group_gsize(g, group);
        gimpi_groups_counters(g, &l1, NULL);
        if (l1 > l0)
            return 1;
        struct timespec ts = { 0, 2 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}
