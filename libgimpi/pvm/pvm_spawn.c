/*  pvm_spawn.c — PVM's pvm_spawn over gimpi_spawn_on: PVM's flags and `where`, its error
 *  codes and its result layout.
 *
 *  PvmTaskDefault places the tasks round-robin over the virtual machine's hosts in slot
 *  order (this host alone when no virtual machine serves the task); PvmTaskHost starts
 *  them on the host `where` names ("." or NULL/"" or "localhost" is this host);
 *  PvmTaskArch on the hosts of that architecture; PvmHostCompl with PvmTaskHost on any
 *  host but that one.  A host that is not in the virtual machine fills its slots with
 *  PvmNoHost.  PvmTaskDebug, PvmTaskTrace, PvmMppFront and PvmNoSpawnParent are accepted
 *  and ignored.  Successful tids come first in tids[], the failures' error codes after
 *  them, as PVM's man page says ("the last ntask - numt locations").  Children's output
 *  lines are prefixed with "[t<hex tid>] " when GIMPI_TAG is set to anything but "0"
 *  (gimpirun -tag sets it).  pvm_catchout collects the output of the children spawned
 *  after it (and of their children) in the caller (gimpi_catchout).  The children start in
 *  the caller's current message context (GIMPI_PVM_CONTEXT in their environment, as
 *  PVMCTX under PVM).  See doc/spawn.md and doc/multihost.md.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "gimpi.h"
#include "base/gimpi_tev.h"
#include "base/gimpi_tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  Starts ntask copies of file. */
int pvm_spawn(char *file, char **argv, int flag, char *where, int ntask, int *tids)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_spawn", PvmNoMem);
    PVM_TEV_S(ctx, TEV_SPAWN, file, where, pvm_spawn(file, argv, flag, where, ntask, tids),
              flag, ntask);
    if (!file || !*file || ntask < 1)
        return pvm_ctx_fail(ctx, "pvm_spawn", PvmBadParam);
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_spawn", rc);
    int *out = malloc((size_t)ntask * sizeof *out);
    if (!out)
        return pvm_ctx_fail(ctx, "pvm_spawn", PvmNoMem);
    void *impl;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    const char *tag = gimpi_env("GIMPI_TAG");
    int flags = tag && *tag && strcmp(tag, "0") ? GIMPI_SPAWN_TAG : 0;
    const int *autoerr = pvm_ctx_opt(ctx, PvmAutoErr);
    if (autoerr && *autoerr == 0)       /* no diagnostics: not even where it looked */
        flags |= GIMPI_SPAWN_QUIET;
    const char *place = NULL;
    if ((flag & PvmTaskHost) && (flag & PvmHostCompl))
        flags |= GIMPI_SPAWN_NOTHOST, place = where && *where ? where : ".";
    else if (flag & PvmTaskHost)
        flags |= GIMPI_SPAWN_HOST, place = where && *where ? where : ".";
    else if ((flag & PvmTaskArch) && where && *where)
        flags |= GIMPI_SPAWN_ARCH, place = where;
    char cx[16];                        /* the children's context: ours */
    snprintf(cx, sizeof cx, "%d", pvm_ctx_context(ctx));
    setenv("GIMPI_PVM_CONTEXT", cx, 1);
    if (pvm_tev_child_env(ctx) < 0) {  /* their trace mask and tracer: our children's */
        free(out);
        return pvm_ctx_fail(ctx, "pvm_spawn", PvmNoMem);
    }
    int started = ops->spawn ? ops->spawn(impl, file, argv, flags, place, ntask, out)
                             : PvmNotImpl;
    if (started < 0) {
        free(out);
        return pvm_ctx_fail(ctx, "pvm_spawn", started);
    }
    if (PVM_CTX_TEV(ctx) & PVM_CTX_TEV_RECORD)
        for (int i = 0; i < ntask; i++)
            if (out[i] > 0)
                pvm_tev_event(ctx, GIMPI_TEV_SPAWN, &out[i], 1, file);
    if (tids) {                         /* successes first, then the errors */
        int k = 0;
        for (int i = 0; i < ntask; i++)
            if (out[i] > 0)
                tids[k++] = out[i];
        for (int i = 0; i < ntask; i++)
            if (out[i] <= 0)
                tids[k++] = out[i];
    }
    free(out);
    return started;
}

/*  Children's output to f in PVM's format ("[t<hex tid>] line", BEGIN and EOF lines; the
 *  lines alone with PvmShowTids 0), or no longer caught (NULL).  Returns 0, as libpvm. */
int pvm_catchout(FILE *f)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_catchout", PvmNoMem);
    PVM_TEV(ctx, TEV_CATCHOUT, pvm_catchout(f));
    int rc = pvm_ctx_enrol(ctx);
    if (rc == 0)
        rc = pvm_ctx_catchout(ctx, f);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_catchout", rc) : 0;
}
