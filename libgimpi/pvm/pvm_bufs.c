/*  pvm_bufs.c — PVM's message buffer management: pvm_mkbuf, pvm_freebuf, pvm_getsbuf,
 *  pvm_getrbuf, pvm_setsbuf, pvm_setrbuf, pvm_initsend, pvm_bufinfo.
 *
 *  Buffers work before enrolment (nothing here needs a transport).  Failures set
 *  pvm_errno and print the PvmAutoErr diagnostic, as libpvm does for these calls.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

#include <stddef.h>

/*  The current context, or NULL after reporting PvmNoMem for fn. */
static pvm_ctx_t *s_ctx(const char *fn)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        pvm_ctx_fail(NULL, fn, PvmNoMem);
    return ctx;
}

/*  pvm_mkbuf in ctx, untraced (pvm_initsend's too). */
static int s_mkbuf(pvm_ctx_t *ctx, int encoding)
{
    pvm_buf_t *buf = pvm_ctx_new_buf(ctx, encoding);
    if (!buf)
        return pvm_ctx_fail(ctx, "pvm_mkbuf",
                            encoding < PvmDataDefault || encoding > PvmDataInPlace
                            ? PvmBadParam : PvmNoMem);
    int id = pvm_ctx_add_buf(ctx, buf, 0, 0, PvmBaseContext);
    return id < 0 ? pvm_ctx_fail(ctx, "pvm_mkbuf", id) : id;
}

/*  A new empty buffer in `encoding`; its id. */
int pvm_mkbuf(int encoding)
{
    pvm_ctx_t *ctx = s_ctx("pvm_mkbuf");
    if (!ctx)
        return PvmNoMem;
    PVM_TEV(ctx, TEV_MKBUF, pvm_mkbuf(encoding), encoding);
    return s_mkbuf(ctx, encoding);
}

/*  Frees a buffer (the active one too, which leaves none active); 0 is a no-op. */
int pvm_freebuf(int bufid)
{
    pvm_ctx_t *ctx = s_ctx("pvm_freebuf");
    if (!ctx)
        return PvmNoMem;
    PVM_TEV(ctx, TEV_FREEBUF, pvm_freebuf(bufid), bufid);
    int rc = pvm_ctx_free_buf(ctx, bufid);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_freebuf", rc) : 0;
}

/*  The active send buffer id, 0 if none. */
int pvm_getsbuf(void)
{
    pvm_ctx_t *ctx = s_ctx("pvm_getsbuf");
    if (!ctx)
        return PvmNoMem;
    PVM_TEV(ctx, TEV_GETSBUF, pvm_getsbuf());
    return pvm_ctx_sbuf(ctx);
}

/*  The active receive buffer id, 0 if none. */
int pvm_getrbuf(void)
{
    pvm_ctx_t *ctx = s_ctx("pvm_getrbuf");
    if (!ctx)
        return PvmNoMem;
    PVM_TEV(ctx, TEV_GETRBUF, pvm_getrbuf());
    return pvm_ctx_rbuf(ctx);
}

/*  Makes bufid (or 0: none) the active send buffer; returns the previous one. */
int pvm_setsbuf(int bufid)
{
    pvm_ctx_t *ctx = s_ctx("pvm_setsbuf");
    if (!ctx)
        return PvmNoMem;
    PVM_TEV(ctx, TEV_SETSBUF, pvm_setsbuf(bufid), bufid);
    int rc = pvm_ctx_set_sbuf(ctx, bufid);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_setsbuf", rc) : rc;
}

/*  Makes bufid (or 0: none) the active receive buffer; returns the previous one. */
int pvm_setrbuf(int bufid)
{
    pvm_ctx_t *ctx = s_ctx("pvm_setrbuf");
    if (!ctx)
        return PvmNoMem;
    PVM_TEV(ctx, TEV_SETRBUF, pvm_setrbuf(bufid), bufid);
    int rc = pvm_ctx_set_rbuf(ctx, bufid);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_setrbuf", rc) : rc;
}

/*  pvm_initsend traced (off the fast path, which then keeps nothing for it). */
static __attribute__((noinline, cold)) int s_initsend_traced(pvm_ctx_t *ctx, int encoding)
{
    PVM_TEV(ctx, TEV_INITSEND, pvm_initsend(encoding), encoding);
    return pvm_initsend(encoding);
}

/*  Frees the active send buffer and makes a new empty one in `encoding` active.  A bad
 *  encoding leaves the old buffer in place (libpvm reports both calls). */
int pvm_initsend(int encoding)
{
    pvm_ctx_t *ctx = s_ctx("pvm_initsend");
    if (!ctx)
        return PvmNoMem;
    if (PVM_TEV_ARMED(ctx))
        return s_initsend_traced(ctx, encoding);
    int id = s_mkbuf(ctx, encoding);
    if (id < 0)
        return pvm_ctx_fail(ctx, "pvm_initsend", id);
    pvm_ctx_free_buf(ctx, pvm_ctx_sbuf(ctx));
    pvm_ctx_set_sbuf(ctx, id);
    return id;
}

/*  Size in bytes, tag and source tid of a buffer (a buffer made here reports tag 0 and
 *  this task's tid).  Any output pointer may be NULL. */
int pvm_bufinfo(int bufid, int *bytes, int *msgtag, int *tid)
{
    pvm_ctx_t *ctx = s_ctx("pvm_bufinfo");
    if (!ctx)
        return PvmNoMem;
    PVM_TEV(ctx, TEV_BUFINFO, pvm_bufinfo(bufid, bytes, msgtag, tid), bufid);
    if (bufid <= 0)
        return pvm_ctx_fail(ctx, "pvm_bufinfo", PvmBadParam);
    int src, tag;
    int rc = pvm_ctx_buf_info(ctx, bufid, &src, &tag, NULL);
    if (rc < 0)
        return pvm_ctx_fail(ctx, "pvm_bufinfo", rc);
    size_t len = pvm_buf_len(pvm_ctx_buf(ctx, bufid));
    if (bytes)
        *bytes = len > (size_t)0x7fffffff ? 0x7fffffff : (int)len;
    if (msgtag)
        *msgtag = tag;
    if (tid)
        *tid = src ? src : pvm_ctx_tid(ctx);
    return 0;
}
