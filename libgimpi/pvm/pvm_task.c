/*  pvm_task.c — the task calls of the PVM API that need no spawner or group server:
 *  pvm_mytid (enrols), pvm_parent, pvm_siblings, pvm_exit.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "base/gimpi_tunables.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/*  Enrols on first call and returns this task's tid. */
int pvm_mytid(void)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_mytid", PvmNoMem);
    PVM_TEV(ctx, TEV_MYTID, pvm_mytid());
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_mytid", rc);
    return pvm_ctx_tid(ctx);
}

/*  The spawner's tid, or PvmNoParent (silently, as libpvm) for a shell-started task. */
int pvm_parent(void)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_parent", PvmNoMem);
    PVM_TEV(ctx, TEV_PARENT, pvm_parent());
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_parent", rc);
    void *impl;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    int parent = ops->parent ? ops->parent(impl) : PvmNoParent;
    if (parent < 0)
        pvm_errno = parent;
    return parent;
}

/*  The tasks started by the same spawn as this one (just this task when the transport
 *  knows of none); returns their number and points *tids at them. */
int pvm_siblings(int **tids)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_siblings", PvmNoMem);
    PVM_TEV(ctx, TEV_SIBLINGS, pvm_siblings(tids));
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_siblings", rc);
    void *impl;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    const int *list = NULL;
    int n = ops->siblings ? ops->siblings(impl, &list) : 0;
    if (n < 0)
        return pvm_ctx_fail(ctx, "pvm_siblings", n);
    if (n == 0 || !list) {
        list = pvm_ctx_tidp(ctx);   /* lives as long as the enrolment */
        n = 1;
    }
    if (tids)
        *tids = (int *)list;
    return n;
}

/*  As libpvm's pvm_exit: with output caught, waits until every caught child's output
 *  has ended, but at most GIMPI_CATCHOUT_WAIT seconds (default 30). */
static void s_catchout_wait(pvm_ctx_t *ctx)
{
    if (pvm_ctx_catchout_wait(ctx, 0) == 0)
        return;
    char prefix[64];
    pvm_ctx_prefix(ctx, prefix, sizeof prefix);
    if (*pvm_ctx_opt(ctx, PvmShowTids)) {
        fprintf(stderr, "%s: child task(s) still running.  waiting...\n", prefix);
        fflush(stderr);
    }
    const char *v = gimpi_env("GIMPI_CATCHOUT_WAIT");
    long s = v && *v ? strtol(v, NULL, 10) : 0;
    s = s > 0 && s < 86400 ? s : 30;
    int left = pvm_ctx_catchout_wait(ctx, (int)s * 1000);
    if (left)
        fprintf(stderr, "%s: the output of %d child task(s) had not ended after %ld s "
                "(GIMPI_CATCHOUT_WAIT); leaving\n", prefix, left, s);
}

/*  Leaves PVM: drops the transport and every buffer; a later call enrols again. */
int pvm_exit(void)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return 0;
    s_catchout_wait(ctx);
    pvm_tev_exit(ctx);
    pvm_ctx_t *fresh = pvm_ctx_new();
    if (fresh) {
        for (int what = 1; what < PVM_CTX_NOPTS; what++)
            *pvm_ctx_opt(fresh, what) = *pvm_ctx_opt(ctx, what);
        pvm_tev_move(ctx, fresh);
        pvm_ctx_install(fresh);
    }
    else
        pvm_ctx_detach(ctx);
    return 0;
}
