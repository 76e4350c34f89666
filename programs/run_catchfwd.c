/*  run_catchfwd.c — gimpirun's forwarding of caught output (run_catchfwd.h).  The socket is
 *  a SOCK_SEQPACKET listener at the job's run file's name with ".sock" (in the private
 *  runtime directory: only the user reaches it, and the peer's uid is checked again).  A
 *  catching task connects and sends one packet: its tid (int32, host order) with the
 *  collector's writing end as SCM_RIGHTS; gimpirun answers one byte once it holds it.  Records are sent without blocking
 *  gimpirun's loop for long: a collector that takes nothing for a second loses the record.
 */
#include "programs/run_catchfwd.h"
#include "programs/run_jobfile.h"
#include "task/gimpi_catch.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

enum {
    MAX_COLLECTORS = 64,        /* catching tasks at once */
    SEND_WAIT_MS = 1000,        /* a full collector is waited for this long */
};

/*  One catching task: its tid and its collector's writing end. */
typedef struct {
    int tid;
    int fd;
} collector_t;

struct run_catchfwd_t {
    gimpi_loop_t *loop;
    int listen_fd;
    char path[sizeof ((struct sockaddr_un *)0)->sun_path];
    collector_t c[MAX_COLLECTORS];
    int n;
};

/*  Takes one connection's packet: a tid and a descriptor, from a process of this user. */
static void s_on_accept(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop; (void)events;
    run_catchfwd_t *self = arg;
    int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0)
        return;
    struct ucred cred;
    socklen_t credlen = sizeof cred;
    int32_t tid = 0;
    char ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { &tid, sizeof tid };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                         .msg_controllen = sizeof ctl };
    /* the peer sent everything before its connect returned: wait briefly, never long */
    struct pollfd p = { .fd = conn, .events = POLLIN };
    bool ok = getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) == 0
              && cred.uid == getuid() && poll(&p, 1, SEND_WAIT_MS) == 1
              && recvmsg(conn, &mh, MSG_CMSG_CLOEXEC) == (ssize_t)sizeof tid;
    struct cmsghdr *cm = ok ? CMSG_FIRSTHDR(&mh) : NULL;
    int cfd = -1;
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
        memcpy(&cfd, CMSG_DATA(cm), sizeof cfd);
    if (cfd < 0) {
        close(conn);
        return;
    }
    int slot = -1;
    for (int i = 0; i < self->n && slot < 0; i++)
        if (self->c[i].tid == tid)
            slot = i;
    if (slot >= 0)
        close(self->c[slot].fd);
    else if (self->n < MAX_COLLECTORS && tid > 0)
        slot = self->n++;
    if (slot < 0) {
        close(cfd);
        close(conn);
        return;
    }
    self->c[slot] = (collector_t){ tid, cfd };
    /* taken: the task may spawn now, the lines will come to it */
    if (send(conn, "k", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        (void)0;                    /* it gave up waiting: the lines still go there */
    close(conn);
}

/*  Listens on the job's socket (run_catchfwd.h). */
run_catchfwd_t *run_catchfwd_new(gimpi_loop_t *loop)
{
    run_catchfwd_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->loop = loop;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    self->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (self->listen_fd < 0 || run_jobfile_sockpath((int)getpid(), sa.sun_path,
                                                   sizeof sa.sun_path) < 0) {
        run_catchfwd_destroy(&self);
        return NULL;
    }
    unlink(sa.sun_path);            /* a killed gimpirun's of the same pid */
    if (bind(self->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0
        || listen(self->listen_fd, 8) < 0) {
        run_catchfwd_destroy(&self);
        return NULL;
    }
    memcpy(self->path, sa.sun_path, sizeof self->path);
    gimpi_loop_fd_add(loop, self->listen_fd, GIMPI_LOOP_READ, s_on_accept, self);
    return self;
}

/*  Stops listening (run_catchfwd.h). */
void run_catchfwd_destroy(run_catchfwd_t **self_p)
{
    run_catchfwd_t *self = *self_p;
    if (!self)
        return;
    if (self->listen_fd >= 0) {
        gimpi_loop_fd_del(self->loop, self->listen_fd);
        close(self->listen_fd);
    }
    if (self->path[0])
        unlink(self->path);
    for (int i = 0; i < self->n; i++)
        close(self->c[i].fd);
    free(self);
    *self_p = NULL;
}

/*  One record on fd, waiting at most SEND_WAIT_MS for room.  0 or -1. */
static int s_send(int fd, const char *rec, size_t len)
{
    for (int tries = 0; tries < 2; tries++) {
        ssize_t w = send(fd, rec, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0)
            return 0;
        if (errno != EAGAIN && errno != EINTR)
            return -1;
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        if (poll(&p, 1, SEND_WAIT_MS) <= 0 || (p.revents & (POLLERR | POLLHUP)))
            return -1;
    }
    return -1;
}

/*  A record of task tid to the collector of ptid (run_catchfwd.h). */
int run_catchfwd_send(run_catchfwd_t *self, int ptid, int tid, int kind, const char *data,
                      size_t len)
{
    int i = 0;
    while (self && i < self->n && self->c[i].tid != ptid)
        i++;
    if (!self || i == self->n)
        return -1;
    char rec[CATCH_HDR + CATCH_CHUNK];
    int32_t t = tid, k = kind;
    memcpy(rec, &t, 4);
    memcpy(rec + 4, &k, 4);
    int rc = 0;
    do {                            /* a line and its newline, in chunks */
        size_t n = len > CATCH_CHUNK - 1 ? CATCH_CHUNK - 1 : len;
        if (n)
            memcpy(rec + CATCH_HDR, data, n);
        data += n;
        len -= n;
        bool nl = kind == CATCH_DATA && len == 0;
        if (nl)
            rec[CATCH_HDR + n] = '\n';
        rc = s_send(self->c[i].fd, rec, CATCH_HDR + n + nl);
    } while (rc == 0 && len > 0);
    if (rc < 0) {                   /* the catching task is gone: gimpirun prints from now */
        close(self->c[i].fd);
        self->c[i] = self->c[--self->n];
    }
    return rc;
}
