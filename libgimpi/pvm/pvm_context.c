/*  pvm_context.c — PVM 3.4's message contexts: pvm_newcontext, pvm_setcontext,
 *  pvm_getcontext, pvm_freecontext.
 *
 *  A message carries the sender's current context; a receive (pvm_recv and the rest of
 *  pvm_msg.c) matches only messages of the receiver's current one, so a library can talk
 *  on its own context without ever taking its caller's messages.  Every task starts in
 *  PvmBaseContext (0); pvm_spawn's children start in their parent's current context.
 *  PVM's daemon hands out context ids (its host's part of the tid space plus a counter);
 *  gimpi has no daemon on the message path, so a task makes its own from its tid, which
 *  groupd never gives twice: (tid's serial << 11) | n, n the lowest of 1 .. 2047 the task
 *  does not hold (pvm_ctx_new_context).  No two tasks can make the same id, and making
 *  one costs no message.  The state lives in the process-wide pvm_ctx_t.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

/*  A new context id, unique in the virtual machine (> 0), or PvmOutOfRes / PvmSysErr. */
int pvm_newcontext(void)
{
    PVM_TEV_TOP(TEV_NEWCONTEXT, pvm_newcontext());
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_newcontext", PvmNoMem);
    int rc = pvm_ctx_new_context(ctx);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_newcontext", rc) : rc;
}

/*  Makes newctx current (PVM checks nothing: any value); returns the previous one. */
int pvm_setcontext(int newctx)
{
    PVM_TEV_TOP(TEV_SETCONTEXT, pvm_setcontext(newctx), newctx);
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_setcontext", PvmNoMem);
    return pvm_ctx_set_context(ctx, newctx);
}

/*  The current context. */
int pvm_getcontext(void)
{
    PVM_TEV_TOP(TEV_GETCONTEXT, pvm_getcontext());
    pvm_ctx_t *ctx = pvm_ctx_current();
    return ctx ? pvm_ctx_context(ctx) : PvmBaseContext;
}

/*  Releases a context this task made: 0, or PvmNotFound for one it does not hold (freed
 *  already, another task's, never made).  As under PVM 3.4.6, whose daemon reads 0 as
 *  "make one", pvm_freecontext(0) makes a new context and returns it. */
int pvm_freecontext(int ctxid)
{
    PVM_TEV_TOP(TEV_FREECONTEXT, pvm_freecontext(ctxid), ctxid);
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_freecontext", PvmNoMem);
    int rc = pvm_ctx_enrol(ctx);
    if (rc == 0)
        rc = ctxid == 0 ? pvm_ctx_new_context(ctx) : pvm_ctx_free_context(ctx, ctxid);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_freecontext", rc) : rc;
}
