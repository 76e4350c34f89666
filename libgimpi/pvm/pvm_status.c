/*  pvm_status.c — a waiting receive in words and told to groupd, for the live view (see
 *  pvm_status.h and doc/tracing.md).  Runs only for a call that has already waited
 *  GIMPI_STATUS_AFTER, so nothing here is on a fast path.
 */
#include "config.h"
#include "pvm/pvm_status.h"
#include "groups/gimpi_groups_status.h"

#include <stdio.h>

/*  The call's words. */
void pvm_status_describe(const pvm_wait_t *w, int base_ctx, char *out, size_t size)
{
    char src[16], ctx[32] = "", limit[32] = "";
    if (w->src > 0)
        snprintf(src, sizeof src, "t%x", (unsigned)w->src);
    else
        snprintf(src, sizeof src, "%d", w->src);
    if (w->ctxid != base_ctx)
        snprintf(ctx, sizeof ctx, ", context %d", w->ctxid);
    if (w->timeout_ms > 0)
        snprintf(limit, sizeof limit, ", %d.%03d s", w->timeout_ms / 1000, w->timeout_ms % 1000);
    snprintf(out, size, "%s(%s, tag %d%s%s)", w->timeout_ms > 0 ? "pvm_trecv" : "pvm_recv",
             src, w->tag, ctx, limit);
}

/*  Publishes the wait. */
int pvm_status_publish(gimpi_groups_t *g, pvm_wait_t *w, int base_ctx, int waited_ms,
                       int queued)
{
    if (!g || !w->active || w->published)
        return 0;
    char call[128];
    pvm_status_describe(w, base_ctx, call, sizeof call);
    int rc = gimpi_groups_status(g, call, waited_ms, queued, w->src > 0 ? w->src : 0);
    if (rc == 0)
        w->published = 1;
    return rc;
}

/*  Clears a published wait. */
void pvm_status_clear(gimpi_groups_t *g, pvm_wait_t *w)
{
    if (w->published && g)
        gimpi_groups_status(g, NULL, 0, 0, 0);
    w->published = 0;
}

/*  GIMPI_STATUS_AFTER (the groupd client reads it). */
int pvm_status_after_ms(void)
{
    return gimpi_groups_status_after();
}
