/*  pvm_kill.c — PVM's pvm_kill and pvm_sendsig: a signal to another task, as the pvmd sent
 *  it, wherever the task runs (gimpi_kill: a task of this host directly, through the OS
 *  process it registered with groupd; a task on another host of the virtual machine
 *  through the manager that started it).  pvm_kill sends SIGTERM.  A tid that is no
 *  task's (<= 0) is PvmBadParam, as in PVM; so is an unknown or finished tid and a signal
 *  outside 0 .. 64, where PVM's pvmd drops the request and answers 0 (gimpi says so:
 *  doc/pvm-differences.md).  A task on another host with no virtual machine to reach it
 *  is PvmNoHost; no groupd is PvmSysErr.  As in PVM, signalling the calling task itself
 *  is allowed (the signal arrives; use pvm_exit to leave cleanly); signal 0 only checks
 *  that the task is there.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "gimpi.h"

#include <signal.h>

/*  The signal sent, found and checked as above: 0 or a PVM code. */
static int s_signal(int tid, int sig)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return PvmNoMem;
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return rc;
    if (tid <= 0 || sig < 0 || sig > 64)
        return PvmBadParam;
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_t *task = ops && ops->task ? ops->task(impl) : NULL;
    if (!task)
        return PvmSysErr;
    if (sig == 0 && tid == pvm_ctx_tid(ctx))
        return 0;
    if (sig == 0) {             /* a probe: gimpi_kill wants a real signal */
        gimpi_task_info_t info;
        rc = gimpi_group_lookup(gimpi_groups(task), tid, &info);
        return rc == GIMPI_ENOTFOUND || rc == GIMPI_ENOTASK ? PvmBadParam : rc < 0 ? rc : 0;
    }
    rc = gimpi_kill(task, tid, sig);
    return rc == GIMPI_ENOTASK ? PvmBadParam : rc;
}

/*  Sends SIGTERM to task tid: 0, PvmBadParam (no such task), PvmNoHost, PvmSysErr. */
int pvm_kill(int tid)
{
    PVM_TEV_TOP(TEV_KILL, pvm_kill(tid), tid);
    int rc = s_signal(tid, SIGTERM);
    return rc < 0 ? pvm_ctx_fail(pvm_ctx_current(), "pvm_kill", rc) : 0;
}

/*  Sends signal signum to task tid: 0, PvmBadParam (no such task, bad signal), PvmNoHost,
 *  PvmSysErr. */
int pvm_sendsig(int tid, int signum)
{
    PVM_TEV_TOP(TEV_SENDSIG, pvm_sendsig(tid, signum), tid, signum);
    int rc = s_signal(tid, signum);
    return rc < 0 ? pvm_ctx_fail(pvm_ctx_current(), "pvm_sendsig", rc) : 0;
}
