/*  pvm_kill.c — PVM's pvm_kill: ends another task with SIGTERM, as the pvmd did for it,
 *  wherever it runs (gimpi_kill: a task of this host directly, through the OS process it
 *  registered with groupd; a task on another host of the virtual machine through the
 *  manager that started it).  An unknown or finished tid is PvmBadParam (PVM's answer to a
 *  tid it did not know); a task on another host with no virtual machine to reach it is
 *  PvmNoHost; no groupd is PvmSysErr.  As in PVM, killing the calling task itself is
 *  allowed (the signal arrives; use pvm_exit to leave cleanly).
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "gimpi.h"

#include <signal.h>

/*  The signal sent, found and checked as above: 0 or a PVM code. */
static int s_kill(int tid)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return PvmNoMem;
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return rc;
    if (tid <= 0)
        return PvmBadParam;
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_t *task = ops && ops->task ? ops->task(impl) : NULL;
    if (!task)
        return PvmSysErr;
    rc = gimpi_kill(task, tid, SIGTERM);
    return rc == GIMPI_ENOTASK ? PvmBadParam : rc;
}

/*  Sends SIGTERM to task tid: 0, PvmBadParam (no such task), PvmNoHost, PvmSysErr. */
int pvm_kill(int tid)
{
    int rc = s_kill(tid);
    return rc < 0 ? pvm_ctx_fail(pvm_ctx_current(), "pvm_kill", rc) : 0;
}
