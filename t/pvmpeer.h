/*  t/pvmpeer.h — a peer process for the PVM API tests that need a second task: the test
 *  program re-executed as "NAME peer", driven by command lines on its stdin and answering
 *  a line per command on its stdout.  Each test writes its own peer side (which calls it
 *  understands); this header holds the driving side they share.
 */
#ifndef GIMPI_T_PVMPEER_H
#define GIMPI_T_PVMPEER_H

#include "gtap.h"
#include "testlib.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

typedef struct {
    pid_t pid;
    int in;                     /* its commands */
    int out;                    /* its results */
} peer_t;

/*  Starts a peer: this program, re-executed with argv "name peer".  0 or -1. */
static inline int peer_start(peer_t *p, const char *name)
{
    int cmd[2], res[2];
    if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0)
        return -1;
    fflush(stdout);
    p->pid = fork();
    if (p->pid < 0)
        return -1;
    if (p->pid == 0) {
        dup2(cmd[0], 0);
        dup2(res[1], 1);
        execl("/proc/self/exe", name, "peer", (char *)NULL);
        _exit(127);
    }
    close(cmd[0]);
    close(res[1]);
    p->in = cmd[1];
    p->out = res[0];
    return 0;
}

/*  Sends the peer a command line (printf-style, at most 254 characters). */
static inline void peer_send(peer_t *p, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(p->in, line, (size_t)n) != n)
        diag("peer %d: write failed", (int)p->pid);
}

/*  The peer's next line into line (20 s bound): its length, or <= 0 when none came. */
static inline int peer_line(peer_t *p, char *line, size_t size)
{
    return tl_read_line(p->out, line, size, 20000);
}

/*  Ends a peer: closes its commands and waits for it (bounded, 20 s). */
static inline void peer_stop(peer_t *p)
{
    close(p->in);
    tl_child_t c = { .pid = p->pid, .out = p->out, .err = -1 };
    tl_wait(&c, 20000);
    close(p->out);
}

#endif
