/*  gimpi_groups_start.c — starting a groupd for a task's groupd client (groups_internal.h).
 *  A task whose ipc endpoint nobody serves runs the groupd program (found as
 *  base/gimpi_findprog.h says: $GIMPI_GROUPD_BIN, else beside the running program, the
 *  build tree's groupd/, the bindir, PATH; when none has it, it says where it looked) with that
 *  endpoint and an idle exit, and waits, bounded, for the endpoint line it prints once it
 *  serves; when another task started one meanwhile, it waits for that one to accept.
 */
#include "config.h"
#include "groups/groups_internal.h"
#include "base/gimpi_findprog.h"
#include "base/gimpi_tunables.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef GIMPI_BINDIR
#define GIMPI_BINDIR "/usr/local/bin"
#endif

/*  1 when something accepts connections on the ipc path of the endpoint. */
int groups_ipc_alive(const char *endpoint)
{
    const char *path = endpoint + 6;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof sa.sun_path)
        return 0;
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    close(fd);
    return rc == 0;
}

/*  Starts a groupd on our (ipc) endpoint and waits for its endpoint line (in a
 *  reconnection: only to replay the journal; -2 when there is none). */
int groups_start_groupd(gimpi_groups_t *self)
{
    char bin[4200], tried[2048];
    if (gimpi_findprog("groupd", "GIMPI_GROUPD_BIN", "groupd", GIMPI_BINDIR, bin, sizeof bin,
                       tried, sizeof tried) < 0) {
        self->noprog = true;
        fprintf(stderr, "gimpi: no groupd program to serve %s: looked for %s"
                " (set GIMPI_GROUPD_BIN to the program)\n", self->endpoint, tried);
        return -1;
    }
    const char *idle = gimpi_env("GIMPI_GROUPD_IDLE");
    char idle_arg[32];
    snprintf(idle_arg, sizeof idle_arg, "--idle-exit=%ld",
             idle && *idle ? strtol(idle, NULL, 10) : (long)IDLE_EXIT_S);
    /* a restart: only from a journal (the groupd before us may have ended on purpose:
       then exit 3, and our calls fail as they did); the tasks that lose the race to
       start it need not say so */
    char *argv[] = { bin, (char *)"--endpoint", self->endpoint, idle_arg, NULL, NULL, NULL };
    if (self->reconnecting) {
        argv[4] = (char *)"--quiet";
        argv[5] = (char *)"--restart";
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(p[1], 1);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        close_range(3, ~0U, 0);
        execv(bin, argv);
        _exit(127);
    }
    close(p[1]);
    char line[600];
    size_t got = 0;
    int64_t deadline = gimpi_now_ms() + HELLO_TIMEOUT_MS;
    while (got < sizeof line - 1) {
        int left = (int)(deadline - gimpi_now_ms());
        struct pollfd pf = { .fd = p[0], .events = POLLIN };
        if (left <= 0 || poll(&pf, 1, left) <= 0)
            break;
        ssize_t n = read(p[0], line + got, sizeof line - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
        if (memchr(line, '\n', got))
            break;
    }
    close(p[0]);
    line[got] = 0;
    /* the program forks its daemon and exits at once (or refuses and exits) */
    int status = 0;
    for (int64_t end = gimpi_now_ms() + 2000; waitpid(pid, &status, WNOHANG) == 0;) {
        if (gimpi_now_ms() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    if (strchr(line, '\n'))
        return 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return -1;                  /* no groupd program */
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
        return -2;                  /* a restart with nothing to replay */
    /* refused because another task started one meanwhile, which may hold the lock but not
       serve yet: wait (bounded) for it to accept connections */
    for (int64_t end = gimpi_now_ms() + HELLO_TIMEOUT_MS; gimpi_now_ms() < end;) {
        if (groups_ipc_alive(self->endpoint))
            return 0;
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    return -1;
}
