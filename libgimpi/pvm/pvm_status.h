/*  pvm_status.h — the PVM layer's part of the live view (doc/tracing.md): what a
 *  receive that has gone to wait is waiting for, and its words for groupd
 *  ("pvm_recv(t40005, tag 7)").  The context (pvm_ctx.c) notes the wait only on its slow
 *  path, and the data plane's status hook (or the context itself, between the slices of
 *  a wait) publishes it once it has lasted GIMPI_STATUS_AFTER; the return clears it.
 */
#ifndef GIMPI_PVM_STATUS_H
#define GIMPI_PVM_STATUS_H

#include "gimpi_group.h"

#include <stdint.h>

/*  A receive that waits (the context's, filled on its slow path only). */
typedef struct {
    int active;                 /* a receive is waiting now */
    int published;              /* groupd was told (the return must clear it) */
    int src, tag, ctxid, timeout_ms;
    int64_t t0_ms;              /* when the wait began, when known (0: not read) */
} pvm_wait_t;

/*  Writes the call's words ("pvm_recv(t40005, tag 7)"; base context is the caller's). */
void pvm_status_describe(const pvm_wait_t *w, int base_ctx, char *out, size_t size);

/*  Tells groupd (g) that the wait w has lasted waited_ms with queued messages not taken;
 *  marks it published when sent.  0 or an error of sending (nothing when g is NULL). */
int pvm_status_publish(gimpi_groups_t *g, pvm_wait_t *w, int base_ctx, int waited_ms,
                       int queued);

/*  Tells groupd the task runs again, if it had been told otherwise. */
void pvm_status_clear(gimpi_groups_t *g, pvm_wait_t *w);

/*  GIMPI_STATUS_AFTER in ms (0: the live view is off). */
int pvm_status_after_ms(void);
#endif
