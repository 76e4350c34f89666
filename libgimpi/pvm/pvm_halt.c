/*  pvm_halt.c — starting and ending a whole virtual machine: PVM's pvm_start_pvmd and
 *  pvm_halt.
 *
 *  gimpi's "pvmd" is groupd (with, for several hosts, gimpirun as the virtual machine's
 *  manager).  pvm_start_pvmd starts a groupd on the task's endpoint ($GIMPI_GROUPD or the
 *  user's default) when nothing serves it, as the console does, without groupd's idle
 *  exit (it runs until halted, as a pvmd does), and enrols the caller on it; when one
 *  serves already, or the caller is enrolled, it is PvmDupHost, as in PVM.  A virtual
 *  machine of several hosts is made by gimpirun -hostfile, so a hostfile argument is
 *  PvmNotImpl; pvmd options (-d, -n ...) are accepted and mean nothing.
 *
 *  pvm_halt does what the console's halt does: SIGTERM to every task groupd lists but the
 *  caller (gimpi_kill: here by process, elsewhere through the manager), SIGKILL to those
 *  still listed after HALT_GRACE_MS, then groupd's HALT; a manager whose tasks all ended
 *  ends too.  Then, as PVM's pvmd did, the caller gets SIGTERM as well: it returns (0)
 *  only when it ignores or catches it.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "groups/gd_proto.h"
#include "base/gimpi_clock.h"
#include "base/gimpi_tunables.h"
#include "gimpi.h"

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum {
    HALT_GRACE_MS = 3000,       /* SIGTERM, then SIGKILL after this */
    HALT_WAIT_MS = 10000,       /* the tasks must be gone from groupd within this */
    HALT_POLL_MS = 20,          /* how often groupd is asked meanwhile */
};

/*  1 when something accepts connections on the path of ipc endpoint ep (0 for others). */
static int s_ipc_alive(const char *ep)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strncmp(ep, "ipc://", 6) || strlen(ep + 6) >= sizeof sa.sun_path)
        return 0;
    strcpy(sa.sun_path, ep + 6);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return rc;
}

/*  Enrols with groupd's idle exit off, so a groupd it starts stays.  0 or < 0. */
static int s_enrol_lasting(pvm_ctx_t *ctx)
{
    const char *old = gimpi_env("GIMPI_GROUPD_IDLE");
    char *keep = old ? strdup(old) : NULL;
    setenv("GIMPI_GROUPD_IDLE", "0", 1);
    int rc = pvm_ctx_enrol(ctx);
    if (keep)
        setenv("GIMPI_GROUPD_IDLE", keep, 1);
    else
        unsetenv("GIMPI_GROUPD_IDLE");
    free(keep);
    return rc;
}

/*  Starts groupd unless one serves: 0, PvmDupHost, PvmNotImpl (a hostfile), PvmBadParam,
 *  PvmSysErr. */
int pvm_start_pvmd(int argc, char **argv, int block)
{
    (void)block;                /* every host of a hostfile would be PvmNotImpl anyway */
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_start_pvmd", PvmNoMem);
    if (argc < 0 || (argc > 0 && !argv))
        return pvm_ctx_fail(ctx, "pvm_start_pvmd", PvmBadParam);
    for (int i = 0; i < argc; i++) {
        if (!argv[i])
            return pvm_ctx_fail(ctx, "pvm_start_pvmd", PvmBadParam);
        if (argv[i][0] != '-') {
            pvm_ctx_set_cause(ctx, PvmNotImpl, "a virtual machine of several hosts is "
                              "started by gimpirun -hostfile %s", argv[i]);
            return pvm_ctx_fail(ctx, "pvm_start_pvmd", PvmNotImpl);
        }
    }
    if (pvm_ctx_tid(ctx) > 0)
        return pvm_ctx_fail(ctx, "pvm_start_pvmd", PvmDupHost);
    const char *ep = gimpi_env("GIMPI_GROUPD");
    char buf[512];
    if (!ep || !*ep)
        ep = gd_default_endpoint(buf, sizeof buf, NULL, 0);
    if (!ep)
        return pvm_ctx_fail(ctx, "pvm_start_pvmd", PvmSysErr);
    bool ipc = !strncmp(ep, "ipc://", 6);
    if (ipc && s_ipc_alive(ep))
        return pvm_ctx_fail(ctx, "pvm_start_pvmd", PvmDupHost);
    int rc = s_enrol_lasting(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_start_pvmd", PvmSysErr);
    /* a tcp endpoint is a groupd someone else started: we only joined it */
    return ipc ? 0 : pvm_ctx_fail(ctx, "pvm_start_pvmd", PvmDupHost);
}

/*  Sleeps ms milliseconds. */
static void s_pause_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/*  Sends sig to every task groupd lists but me (sig 0: sends nothing).  How many are
 *  listed, or < 0. */
static int s_others(gimpi_t *task, int me, int sig)
{
    gimpi_vm_task_t *t = NULL;
    int n = 0;
    int rc = gimpi_groups_tasks(gimpi_groups(task), "", &t, &n);
    if (rc < 0)
        return rc;
    int others = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].tid == me)
            continue;
        others++;
        if (sig)
            gimpi_kill(task, t[i].tid, sig);
    }
    free(t);
    return others;
}

/*  Ends every task and groupd, then signals the caller: 0 (when the caller survives
 *  SIGTERM) or PvmSysErr (no groupd). */
int pvm_halt(void)
{
    PVM_TEV_TOP(TEV_HALT, pvm_halt());
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_halt", PvmNoMem);
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_halt", PvmSysErr);
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_t *task = ops && ops->task ? ops->task(impl) : NULL;
    if (!task)
        return pvm_ctx_fail(ctx, "pvm_halt", PvmSysErr);
    int me = pvm_ctx_tid(ctx);
    rc = s_others(task, me, SIGTERM);
    int64_t start = gimpi_now_ms();
    bool killed = false;
    while (rc > 0 && gimpi_now_ms() - start < HALT_WAIT_MS) {
        if (!killed && gimpi_now_ms() - start >= HALT_GRACE_MS) {
            s_others(task, me, SIGKILL);
            killed = true;
        }
        s_pause_ms(HALT_POLL_MS);
        rc = s_others(task, me, 0);
    }
    rc = gimpi_groups_halt(gimpi_groups(task));
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_halt", PvmSysErr);
    raise(SIGTERM);             /* as PVM's pvmd ends every task, the caller's too */
    return 0;
}
