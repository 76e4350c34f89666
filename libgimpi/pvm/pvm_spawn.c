/*  pvm_spawn.c — PVM's pvm_spawn over gimpi_spawn: PVM's flags and `where`, its error
 *  codes and its result layout.
 *
 *  There is one host in a gimpi virtual machine (this one), so `where` may name it ("."
 *  or NULL/"" or this host's name or "localhost") with PvmTaskHost; another host name, or
 *  PvmHostCompl with this host, fills every slot with PvmNoHost.  PvmTaskArch starts
 *  locally whatever architecture is named.  PvmTaskDebug, PvmTaskTrace, PvmMppFront and
 *  PvmNoSpawnParent are accepted and ignored.  Successful tids come first in tids[], the
 *  failures' error codes after them, as PVM's man page says ("the last ntask - numt
 *  locations").  Children's output lines are prefixed with "[t<hex tid>] " when
 *  GIMPI_TAG is set to anything but "0" (gimpirun -tag sets it).  See doc/spawn.md.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "gimpi.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  1 when `where` names this host. */
static int s_this_host(const char *where)
{
    if (!where || !*where || !strcmp(where, ".") || !strcmp(where, "localhost"))
        return 1;
    char me[256];
    if (gethostname(me, sizeof me) != 0)
        return 0;
    me[sizeof me - 1] = 0;
    size_t n = strlen(where);
    /* "host" matches "host.domain" and the other way round */
    return !strncmp(me, where, n) ? me[n] == 0 || me[n] == '.'
                                  : !strncmp(me, where, strlen(me)) && where[strlen(me)] == '.';
}

/*  Starts ntask copies of file. */
int pvm_spawn(char *file, char **argv, int flag, char *where, int ntask, int *tids)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_spawn", PvmNoMem);
    if (!file || !*file || ntask < 1)
        return pvm_ctx_fail(ctx, "pvm_spawn", PvmBadParam);
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_spawn", rc);
    int *out = malloc((size_t)ntask * sizeof *out);
    if (!out)
        return pvm_ctx_fail(ctx, "pvm_spawn", PvmNoMem);
    int local = !(flag & PvmTaskHost) || s_this_host(where);
    if (flag & PvmHostCompl)
        local = (flag & PvmTaskHost) && !s_this_host(where);
    int started = 0;
    if (!local) {
        for (int i = 0; i < ntask; i++)
            out[i] = PvmNoHost;
    } else {
        void *impl;
        const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
        const char *tag = getenv("GIMPI_TAG");
        int flags = tag && *tag && strcmp(tag, "0") ? GIMPI_SPAWN_TAG : 0;
        started = ops->spawn ? ops->spawn(impl, file, argv, flags, ntask, out)
                             : PvmNotImpl;
        if (started < 0) {
            free(out);
            return pvm_ctx_fail(ctx, "pvm_spawn", started);
        }
    }
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
