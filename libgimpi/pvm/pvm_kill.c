/*  pvm_kill.c — PVM's pvm_kill: ends another task with SIGTERM, as the pvmd did for it.
 *  The task is found through groupd (LOOKUP: the OS process and host every task registered
 *  at enrolment); gimpi starts tasks on this machine only, so a task registered from
 *  another host is PvmNoHost.  An unknown or finished tid is PvmBadParam (PVM's answer to a
 *  tid it did not know); no groupd is PvmSysErr.  As in PVM, killing the calling task
 *  itself is allowed (the signal arrives; use pvm_exit to leave cleanly).
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "gimpi.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

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
    gimpi_groups_t *g = ops && ops->groups ? ops->groups(impl) : NULL;
    if (!g)
        return PvmSysErr;
    gimpi_task_info_t info;
    rc = gimpi_group_lookup(g, tid, &info);
    if (rc == GIMPI_ENOTASK || rc == GIMPI_ENOTFOUND)
        return PvmBadParam;
    if (rc < 0)
        return rc;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) == 0 && info.host[0] && strcmp(info.host, host)
        && strcmp(info.host, "localhost"))
        return PvmNoHost;
    if (info.ospid <= 0)
        return PvmBadParam;
    if (kill((pid_t)info.ospid, SIGTERM) < 0)
        return errno == ESRCH ? PvmBadParam : PvmSysErr;
    return 0;
}

/*  Sends SIGTERM to task tid: 0, PvmBadParam (no such task), PvmNoHost, PvmSysErr. */
int pvm_kill(int tid)
{
    int rc = s_kill(tid);
    return rc < 0 ? pvm_ctx_fail(pvm_ctx_current(), "pvm_kill", rc) : 0;
}
