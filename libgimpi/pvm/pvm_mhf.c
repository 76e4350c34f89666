/*  pvm_mhf.c — PVM 3.4's message handlers: pvm_addmhf, pvm_delmhf.
 *
 *  A handler is a function called with a message's buffer id when a message from its
 *  source, with its tag, in its context (each -1 for any) arrives: inside the receive or
 *  probe (pvm_recv, nrecv, trecv, probe, precv) that brings it in from the transport, as
 *  libpvm's mesg_input does.  The message is the active receive buffer, there is no send
 *  buffer and the message's context is current while it runs; then the message and any
 *  send buffer it made are freed and the caller's buffers and context come back.  A
 *  message a handler took is never seen by a receive.  The handlers and their dispatch
 *  live in the context (pvm_ctx.c); this file is PVM's face on them.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

/*  Adds a handler: its id (>= 0), PvmExists when one already covers some of the same
 *  messages (wildcards count both ways, as in PVM), PvmBadParam for a NULL func. */
int pvm_addmhf(int src, int tag, int ctx, int (*func)(int mid))
{
    PVM_TEV_TOP(TEV_ADDMHF, pvm_addmhf(src, tag, ctx, func), src, tag, ctx);
    pvm_ctx_t *c = pvm_ctx_current();
    if (!c)
        return pvm_ctx_fail(NULL, "pvm_addmhf", PvmNoMem);
    int rc = pvm_ctx_add_mhf(c, src, tag, ctx, func);
    return rc < 0 ? pvm_ctx_fail(c, "pvm_addmhf", rc) : rc;
}

/*  Removes handler mhid: 0, PvmBadParam (mhid < 0), PvmNotFound (no such live one). */
int pvm_delmhf(int mhid)
{
    PVM_TEV_TOP(TEV_DELMHF, pvm_delmhf(mhid), mhid);
    pvm_ctx_t *c = pvm_ctx_current();
    if (!c)
        return pvm_ctx_fail(NULL, "pvm_delmhf", PvmNoMem);
    int rc = pvm_ctx_del_mhf(c, mhid);
    return rc < 0 ? pvm_ctx_fail(c, "pvm_delmhf", rc) : rc;
}
