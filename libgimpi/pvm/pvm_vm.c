/*  pvm_vm.c — PVM's calls about the virtual machine: pvm_config (its hosts), pvm_tasks (its
 *  tasks), pvm_addhosts and pvm_delhosts (through the manager, gimpirun), pvm_mstat,
 *  pvm_pstat, pvm_tidtohost, pvm_archcode and pvm_hostsync.
 *
 *  The hosts come from the table the manager publishes in groupd (gimpi_hosts); a task no
 *  virtual machine serves sees one host, its own, as a lone pvmd would show.  The tasks
 *  come from groupd's registry: every enrolled task with its parent, host, program and
 *  process.  pvm_config's and pvm_tasks' answers are memory of the library, valid until
 *  the next call of the same function, as in PVM.  See doc/multihost.md.
 *
 *  pvm_hostsync measures as PVM does: our clock before and after the host's is read, the
 *  difference taken from their midpoint (delta = ours - theirs, seconds signed and
 *  microseconds 0 .. 999999, so -1 us is -1 s + 999999 us).  This host's clock is read
 *  here (delta 0); another host's by the virtual machine's manager (one VM_HOSTSYNC
 *  request through groupd, which the host's agent answers: base/gimpi_vmwire.h).  The
 *  host is its dtid or, as the pvmd took it, the tid of a task on it.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "base/gimpi_tev.h"
#include "task/gimpi_vm.h"
#include "base/gimpi_vmwire.h"
#include "gimpi.h"
#include "gimpi_msg.h"
#include "gimpi_group.h"
#include "base/gimpi_tunables.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/*  PVM 3.4's data signature of a little-endian LP64 machine (what pvm_config shows for
 *  LINUX64): hosts of one architecture share it. */
#define PVM_DSIG_LP64_LE 0x408c41

/*  The enrolled context and its native task, or a PVM code. */
static int s_task(const char *fn, pvm_ctx_t **ctx_p, gimpi_t **task_p)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    *ctx_p = ctx;
    if (!ctx)
        return pvm_ctx_fail(NULL, fn, PvmNoMem);
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, fn, rc);
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    *task_p = ops && ops->task ? ops->task(impl) : NULL;
    return *task_p ? 0 : pvm_ctx_fail(ctx, fn, PvmSysErr);
}

/*  The host table (its count, *hosts to free), or a PVM code. */
static int s_hosts(gimpi_t *task, gimpi_host_t **hosts)
{
    return gimpi_hosts(task, hosts);
}

/*  The dtid of the host named name in hosts[n], or 0. */
static int s_dtid(const gimpi_host_t *hosts, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(hosts[i].name, name))
            return hosts[i].dtid;
    return 0;
}

int pvm_config(int *nhost, int *narch, struct pvmhostinfo **hostp)
{
    PVM_TEV_TOP(TEV_CONFIG, pvm_config(nhost, narch, hostp));
    pvm_ctx_t *ctx;
    gimpi_t *task;
    int rc = s_task("pvm_config", &ctx, &task);
    if (rc < 0)
        return rc;
    gimpi_host_t *h = NULL;
    int n = s_hosts(task, &h);
    if (n < 0)
        return pvm_ctx_fail(ctx, "pvm_config", n);
    /* one allocation: the records, then their strings */
    size_t size = (size_t)n * sizeof(struct pvmhostinfo);
    for (int i = 0; i < n; i++)
        size += strlen(h[i].name) + strlen(h[i].arch) + 2;
    struct pvmhostinfo *out = malloc(size ? size : 1);
    if (!out) {
        free(h);
        return pvm_ctx_fail(ctx, "pvm_config", PvmNoMem);
    }
    char *s = (char *)(out + n);
    int arches = 0;
    for (int i = 0; i < n; i++) {
        out[i].hi_tid = h[i].dtid;
        out[i].hi_speed = h[i].speed;
        out[i].hi_dsig = PVM_DSIG_LP64_LE;
        out[i].hi_name = s;
        s += sprintf(s, "%s", h[i].name) + 1;
        out[i].hi_arch = s;
        s += sprintf(s, "%s", h[i].arch) + 1;
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(h[k].arch, h[i].arch);
        arches += !seen;
    }
    free(h);
    pvm_ctx_keep(ctx, PVM_CTX_KEPT_CONFIG, out);
    if (nhost)
        *nhost = n;
    if (narch)
        *narch = arches;
    if (hostp)
        *hostp = out;
    return 0;
}

/*  A static task of this job (tid) that t[n] lacks though it lives: groupd holds it
 *  reserved and not yet registered (it is in gimpi_init right now, about to register:
 *  every static task met the others there), or it registered after t was read.  One
 *  that has left (LOOKUP: no such task) is not missing. */
static bool s_missing(gimpi_t *task, const gimpi_vm_task_t *t, int n, int tid)
{
    for (int i = 0; i < n; i++)
        if (t[i].tid == tid)
            return false;
    gimpi_task_info_t info;
    int rc = gimpi_group_lookup(gimpi_groups(task), tid, &info);
    return rc == GIMPI_ENOTFOUND || rc == 0;
}

/*  groupd's registry (host "" for all), once every static task of the job that still
 *  lives has registered: a job's tasks all exist from its start, so pvm_tasks lists them
 *  all even when a sibling has not finished its own gimpi_init yet (NetPIPE's NPpvm
 *  looks for its peer with pvm_tasks right after pvm_mytid).  The wait is bounded by
 *  GIMPI_CONNECT_TIMEOUT and costs nothing when every task is there.  0 or a code. */
static int s_registry(gimpi_t *task, const char *host, gimpi_vm_task_t **out, int *nout)
{
    const char *v = gimpi_env("GIMPI_CONNECT_TIMEOUT");
    long left_ms = (v && atoi(v) > 0 ? atoi(v) : 60) * 1000L;
    struct timespec pause = { 0, 1000000 };
    gimpi_msg_t *msg = gimpi_msg(task);
    int nstatic = msg ? gimpi_msg_ntasks(msg) : 0;
    for (;;) {
        int rc = gimpi_groups_tasks(gimpi_groups(task), "", out, nout);
        if (rc < 0)
            return rc;
        bool wait = false;
        for (int r = 0; r < nstatic && !wait && left_ms > 0; r++)
            wait = s_missing(task, *out, *nout, gimpi_msg_tid(msg, r));
        if (!wait)
            break;
        free(*out);
        nanosleep(&pause, NULL);
        left_ms -= pause.tv_nsec / 1000000;
        if (pause.tv_nsec < 64000000)
            pause.tv_nsec *= 2;
    }
    int k = 0;                          /* the host's tasks only */
    for (int i = 0; i < *nout; i++)
        if (!*host || !strcmp((*out)[i].host, host))
            (*out)[k++] = (*out)[i];
    *nout = k;
    return 0;
}

int pvm_tasks(int where, int *ntask, struct pvmtaskinfo **taskp)
{
    PVM_TEV_TOP(TEV_TASKS, pvm_tasks(where, ntask, taskp), where);
    pvm_ctx_t *ctx;
    gimpi_t *task;
    int rc = s_task("pvm_tasks", &ctx, &task);
    if (rc < 0)
        return rc;
    gimpi_host_t *h = NULL;
    int nh = s_hosts(task, &h);
    if (nh < 0)
        return pvm_ctx_fail(ctx, "pvm_tasks", nh);
    /* where: 0 every task, a host's id its tasks, else one task's tid */
    const char *host = "";
    int one = 0;
    if (where != 0) {
        for (int i = 0; i < nh && !*host; i++)
            if (h[i].dtid == where)
                host = h[i].name;
        if (!*host)
            one = where;
    }
    gimpi_vm_task_t *t = NULL;
    int n = 0;
    rc = s_registry(task, host, &t, &n);
    if (rc < 0) {
        free(h);
        return pvm_ctx_fail(ctx, "pvm_tasks", rc);
    }
    size_t size = 1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!one || t[i].tid == one)
            size += sizeof(struct pvmtaskinfo) + strlen(t[i].name) + 1;
    struct pvmtaskinfo *out = malloc(size);
    if (!out) {
        free(h);
        free(t);
        return pvm_ctx_fail(ctx, "pvm_tasks", PvmNoMem);
    }
    int nout = 0;
    for (int i = 0; i < n; i++)
        nout += !one || t[i].tid == one;
    char *s = (char *)(out + nout);
    for (int i = 0; i < n; i++) {
        if (one && t[i].tid != one)
            continue;
        struct pvmtaskinfo *o = &out[k++];
        o->ti_tid = t[i].tid;
        o->ti_ptid = t[i].ptid;
        o->ti_host = s_dtid(h, nh, t[i].host);
        if (!o->ti_host && nh == 1)
            o->ti_host = h[0].dtid;     /* outside a virtual machine: this host */
        o->ti_flag = t[i].flags;
        o->ti_pid = t[i].pid;
        o->ti_a_out = s;
        s += sprintf(s, "%s", t[i].name) + 1;
    }
    free(h);
    free(t);
    if (one && nout == 0) {
        free(out);
        return pvm_ctx_fail(ctx, "pvm_tasks", PvmNoHost);     /* PVM: no such tid or host */
    }
    pvm_ctx_keep(ctx, PVM_CTX_KEPT_TASKS, out);
    if (ntask)
        *ntask = nout;
    if (taskp)
        *taskp = out;
    return 0;
}

/*  pvm_addhosts and pvm_delhosts. */
static int s_change(const char *fn, char **hosts, int nhost, int *infos, bool add)
{
    pvm_ctx_t *ctx;
    gimpi_t *task;
    int rc = s_task(fn, &ctx, &task);
    if (rc < 0)
        return rc;
    if (!hosts || nhost < 1)
        return pvm_ctx_fail(ctx, fn, PvmBadParam);
    int *mine = infos ? infos : calloc((size_t)nhost, sizeof *mine);
    if (!mine)
        return pvm_ctx_fail(ctx, fn, PvmNoMem);
    rc = add ? gimpi_addhosts(task, hosts, nhost, mine)
             : gimpi_delhosts(task, hosts, nhost, mine);
    for (int i = 0; (PVM_CTX_TEV(ctx) & PVM_CTX_TEV_RECORD) && rc >= 0 && i < nhost; i++)
        if (mine[i] > 0 || (!add && mine[i] == 0))  /* the host's dtid, or deleted (0) */
            pvm_tev_event(ctx, add ? GIMPI_TEV_HOST_ADD : GIMPI_TEV_HOST_DEL, &mine[i], 1,
                          hosts[i]);
    if (mine != infos)
        free(mine);
    if (rc == PvmNoHost)                /* the whole request: no manager, no VM */
        pvm_ctx_set_cause(ctx, rc, "no virtual machine to %s hosts %s: start the master "
                          "under one with gimpirun -hostfile FILE ...", add ? "add" : "delete",
                          add ? "to" : "from");
    return rc < 0 ? pvm_ctx_fail(ctx, fn, rc) : rc;
}

int pvm_addhosts(char **hosts, int nhost, int *infos)
{
    PVM_TEV_TOP(TEV_ADDHOSTS, pvm_addhosts(hosts, nhost, infos));
    return s_change("pvm_addhosts", hosts, nhost, infos, true);
}

int pvm_delhosts(char **hosts, int nhost, int *infos)
{
    PVM_TEV_TOP(TEV_DELHOSTS, pvm_delhosts(hosts, nhost, infos));
    return s_change("pvm_delhosts", hosts, nhost, infos, false);
}

int pvm_mstat(char *host)
{
    PVM_TEV_TOP_S(TEV_MSTAT, host, NULL, pvm_mstat(host));
    pvm_ctx_t *ctx;
    gimpi_t *task;
    int rc = s_task("pvm_mstat", &ctx, &task);
    if (rc < 0)
        return rc;
    if (!host || !*host)
        return pvm_ctx_fail(ctx, "pvm_mstat", PvmBadParam);
    gimpi_host_t *h = NULL;
    int n = s_hosts(task, &h);
    if (n < 0)
        return pvm_ctx_fail(ctx, "pvm_mstat", n);
    int found = s_dtid(h, n, host);
    free(h);
    return found ? PvmOk : PvmNoHost;  /* not an error of the call: no message */
}

int pvm_pstat(int tid)
{
    PVM_TEV_TOP(TEV_PSTAT, pvm_pstat(tid), tid);
    pvm_ctx_t *ctx;
    gimpi_t *task;
    int rc = s_task("pvm_pstat", &ctx, &task);
    if (rc < 0)
        return rc;
    if (tid <= 0)
        return pvm_ctx_fail(ctx, "pvm_pstat", PvmBadParam);
    gimpi_task_info_t info;
    rc = gimpi_group_lookup(gimpi_groups(task), tid, &info);
    if (rc == GIMPI_ENOTASK || rc == GIMPI_ENOTFOUND)
        return PvmNoTask;
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_pstat", rc) : PvmOk;
}

int pvm_tidtohost(int tid)
{
    PVM_TEV_TOP(TEV_TIDTOHOST, pvm_tidtohost(tid), tid);
    pvm_ctx_t *ctx;
    gimpi_t *task;
    int rc = s_task("pvm_tidtohost", &ctx, &task);
    if (rc < 0)
        return rc;
    gimpi_task_info_t info;
    rc = gimpi_group_lookup(gimpi_groups(task), tid, &info);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_tidtohost", rc == GIMPI_ENOTASK ? PvmBadParam : rc);
    gimpi_host_t *h = NULL;
    int n = s_hosts(task, &h);
    int dtid = n > 0 ? s_dtid(h, n, info.host) : 0;
    if (!dtid && n == 1)
        dtid = h[0].dtid;
    free(h);
    return dtid ? dtid : pvm_ctx_fail(ctx, "pvm_tidtohost", PvmBadParam);
}

/*  The data signature of architecture arch, as PVM finds it: that of a host of the virtual
 *  machine with that architecture name (exactly), else PvmNotFound; NULL is PvmBadParam. */
int pvm_archcode(char *arch)
{
    PVM_TEV_TOP_S(TEV_ARCHCODE, arch, NULL, pvm_archcode(arch));
    if (!arch)
        return pvm_ctx_fail(pvm_ctx_current(), "pvm_archcode", PvmBadParam);
    pvm_ctx_t *ctx;
    gimpi_t *task;
    int rc = s_task("pvm_archcode", &ctx, &task);
    if (rc < 0)
        return rc;
    gimpi_host_t *h = NULL;
    int n = s_hosts(task, &h);
    if (n < 0)
        return pvm_ctx_fail(ctx, "pvm_archcode", n);
    int found = 0;
    for (int i = 0; i < n && !found; i++)
        found = !strcmp(h[i].arch, arch);
    free(h);
    return found ? PVM_DSIG_LP64_LE : pvm_ctx_fail(ctx, "pvm_archcode", PvmNotFound);
}

/*  Microseconds since the epoch of a timeval. */
static int64_t s_us(const struct timeval *tv)
{
    return (int64_t)tv->tv_sec * 1000000 + tv->tv_usec;
}

/*  A timeval of us microseconds, microseconds normalised to 0 .. 999999. */
static struct timeval s_tv(int64_t us)
{
    int64_t s = us / 1000000, r = us % 1000000;
    if (r < 0)
        s--, r += 1000000;
    return (struct timeval){ .tv_sec = (time_t)s, .tv_usec = (suseconds_t)r };
}

/*  pvm_hostsync: the index in h[n] of host `host` (a dtid, or the tid of a task there), or -1. */
static int s_find(gimpi_t *task, const gimpi_host_t *h, int n, int host)
{
    for (int i = 0; i < n; i++)
        if (h[i].dtid == host)
            return i;
    gimpi_task_info_t info;
    if (host <= 0 || gimpi_group_lookup(gimpi_groups(task), host, &info) < 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(h[i].name, info.host) || (n == 1 && !info.host[0]))
            return i;
    return n == 1 ? 0 : -1;     /* outside a virtual machine: this host */
}

/*  The host's clock and delta: 0 or a PVM code. */
static int s_sync(gimpi_t *task, int host, struct timeval *clk, struct timeval *delta)
{
    gimpi_host_t *h = NULL;
    int n = gimpi_hosts(task, &h);
    if (n < 0)
        return n;
    int i = s_find(task, h, n, host);
    int dtid = i >= 0 ? h[i].dtid : 0;
    int here = i >= 0 && (n == 1 || !strcmp(h[i].name, gimpi_hostname(task)));
    free(h);
    if (i < 0)
        return PvmNoHost;
    struct timeval a, b;
    gettimeofday(&a, NULL);
    if (here) {
        *clk = a;
        *delta = s_tv(0);
        return 0;
    }
    size_t len;
    int32_t res[2];
    int rc = gimpi_vm_request(task, vmw_encode(&len, VM_HOSTSYNC, dtid), res, 2);
    gettimeofday(&b, NULL);
    if (rc < 0)
        return rc == GIMPI_EBADMSG ? PvmSysErr : rc;
    int64_t remote = (int64_t)res[0] * 1000000 + res[1];
    *clk = s_tv(remote);
    *delta = s_tv((s_us(&a) + s_us(&b)) / 2 - remote);
    return 0;
}

/*  Samples host's clock: 0, PvmNoHost (not in the virtual machine), PvmHostFail,
 *  PvmSysErr (no groupd, no manager's answer). */
int pvm_hostsync(int host, struct timeval *clk, struct timeval *delta)
{
    PVM_TEV_TOP(TEV_HOSTSYNC, pvm_hostsync(host, clk, delta), host);
    pvm_ctx_t *ctx;
    gimpi_t *task;
    int rc = s_task("pvm_hostsync", &ctx, &task);
    if (rc < 0)
        return rc;
    struct timeval c, d;
    rc = s_sync(task, host, &c, &d);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_hostsync", rc);
    if (clk)
        *clk = c;
    if (delta)
        *delta = d;
    return 0;
}
