/*  pvm_fds.c — PVM's pvm_getfds: the descriptors a program adds to its own select() or
 *  poll() loop to learn that a PVM message may have arrived, then pvm_nrecv or pvm_probe
 *  without waiting.  PVM gave its sockets (the pvmd's first); gimpi's messages come over
 *  many connections that its progress thread serves while the program is elsewhere, so
 *  it gives one descriptor, fds[0], that the data plane rings whenever a message is
 *  queued (gimpi_msg_arrival_fd) and that every receive or probe empties before it
 *  looks, in one epoll set with the socket on which pvm_notify's events come from groupd
 *  (pvm_notify_wake_fd): a receive that may match a notification reads that socket,
 *  which quiets it.  As with PVM's socket, a wake-up may find nothing (a message taken
 *  meanwhile).
 *  The array is the library's, valid until the next call.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "gimpi.h"

#include <stdlib.h>

/*  The descriptors: their count (1) with *fds set, or PvmSysErr / PvmBadParam. */
int pvm_getfds(int **fds)
{
    PVM_TEV_TOP(TEV_GETFDS, pvm_getfds(fds));
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_getfds", PvmNoMem);
    if (!fds)
        return pvm_ctx_fail(ctx, "pvm_getfds", PvmBadParam);
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_getfds", rc);
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_t *task = ops && ops->task ? ops->task(impl) : NULL;
    int fd = task ? gimpi_msg_arrival_fd(gimpi_msg(task)) : PvmSysErr;
    if (fd < 0)
        return pvm_ctx_fail(ctx, "pvm_getfds", PvmSysErr);
    fd = pvm_notify_wake_fd(ctx, fd);
    if (fd < 0)
        return pvm_ctx_fail(ctx, "pvm_getfds", fd);
    int *list = malloc(sizeof *list);
    if (!list)
        return pvm_ctx_fail(ctx, "pvm_getfds", PvmNoMem);
    list[0] = fd;
    pvm_ctx_keep(ctx, PVM_CTX_KEPT_FDS, list);
    *fds = list;
    return 1;
}
