/*  pvm_enrol.c — the process-wide PVM context and how it enrols: pvm_ctx_current,
 *  pvm_ctx_install, the default opener (the transport over the task's data plane,
 *  pvm_transport_impi.c, and the tracer registered with pvm_reg_tracer) and the leave at
 *  process exit.
 *
 *  This file sits above both the context (pvm_ctx.c) and the transports: it chooses the
 *  transport and hands the context its opener, so that neither the context nor the
 *  transport calls the other by name.  The pvm_* calls reach their context through it.
 */
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

#include <pthread.h>
#include <stdlib.h>

/*  THE one piece of process-wide mutable state of the PVM layer.  PVM's API passes no
 *  handle (pvm_send(tid, tag) must find "the" task's buffers and connection), so the
 *  pvm_* calls reach their context through this pointer, created on first use by
 *  pvm_ctx_current().  Everything else lives in the object it points to.  (pvm_errno
 *  and pvmdebmask, in pvm_err.c, are the two other exceptions, forced by PVM programs
 *  that declare them `extern int`.) */
static pvm_ctx_t *s_current;

/*  At process exit: leave properly when the process-wide context is still enrolled on a
 *  default transport this process opened (delivers buffered sends, as PVM's daemon would
 *  after an exit without pvm_exit). */
static void s_at_exit(void)
{
    if (!s_current)
        return;
    pvm_tev_flush(s_current);           /* the trace, before the transport goes */
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(s_current, &impl);
    if (pvm_transport_impi_live(ops, impl))
        pvm_ctx_detach(s_current);
}

static pthread_once_t s_at_exit_once = PTHREAD_ONCE_INIT;

/*  Registers s_at_exit (once per process). */
static void s_register_at_exit(void)
{
    atexit(s_at_exit);
}

/*  The default opener: the data plane's transport, the leave at exit, and the tracer
 *  pvm_reg_tracer registered when the task inherited none (pvm_tev_registered). */
static int s_open_default(const pvm_transport_ops_t **ops, void **impl, char *why,
                          size_t why_size)
{
    int rc = pvm_transport_open_default(ops, impl, why, why_size);
    if (rc == 0) {
        pthread_once(&s_at_exit_once, s_register_at_exit);
        if (s_current && (*ops)->groups)
            pvm_tev_registered(s_current, (*ops)->groups(*impl));
    }
    return rc;
}

/*  The process-wide context, created on first use. */
pvm_ctx_t *pvm_ctx_current(void)
{
    if (!s_current) {
        s_current = pvm_ctx_new();
        if (s_current) {
            pvm_ctx_set_opener(s_current, s_open_default);
            pvm_tev_init(s_current);
            if (PVM_CTX_TEV(s_current))                 /* flush the trace at exit */
                pthread_once(&s_at_exit_once, s_register_at_exit);
        }
    }
    return s_current;
}

/*  Replaces the process-wide context. */
void pvm_ctx_install(pvm_ctx_t *ctx)
{
    if (s_current != ctx)
        pvm_ctx_destroy(&s_current);
    s_current = ctx;
    if (ctx) {
        pvm_ctx_set_opener(ctx, s_open_default);
        pvm_tev_init(ctx);
    }
}
