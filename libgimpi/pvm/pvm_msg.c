/*  pvm_msg.c — PVM's point-to-point message calls over the context's transport:
 *  pvm_send, pvm_mcast, pvm_recv, pvm_nrecv, pvm_trecv, pvm_probe, pvm_psend, pvm_precv.
 *
 *  Every call works in the task's current context (pvm_setcontext, pvm_context.c): sends
 *  carry it, receives match on (source, tag) in it with -1 as the wildcard, oldest
 *  message first, or as pvm_recvf's matcher says; message handlers (pvm_addmhf) take
 *  their messages as a receive or probe brings them in (pvm_ctx.c).  pvm_recv/pvm_nrecv/pvm_trecv free the active receive buffer when they
 *  are called (as libpvm does) and make the message they return the new one.
 *  pvm_psend/pvm_precv never touch the active buffers; psend sends raw bytes, so the
 *  other side may unpack them with pvm_recv + pvm_upk*, and precv decodes a message
 *  packed with PvmDataDefault properly (libpvm copied its XDR bytes raw).
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "gimpi_ops.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>

/*  Records a failure of a message call: its cause is the data plane's first. */
static int s_fail(pvm_ctx_t *ctx, const char *fn, int code)
{
    return pvm_ctx_fail_in(ctx, fn, code, PVM_CAUSE_DATA);
}

/*  The bytes of the active send buffer (for the trace). */
static int s_nbytes(pvm_ctx_t *ctx)
{
    pvm_buf_t *b = pvm_ctx_buf(ctx, pvm_ctx_sbuf(ctx));
    return b ? (int)pvm_buf_len(b) : 0;
}

/*  pvm_send traced (off the fast path, which then keeps nothing for it). */
static __attribute__((noinline, cold)) int s_send_traced(pvm_ctx_t *ctx, int tid, int msgtag)
{
    PVM_TEV(ctx, TEV_SEND, pvm_send(tid, msgtag), s_nbytes(ctx), tid, msgtag,
            pvm_ctx_context(ctx));
    return pvm_send(tid, msgtag);
}

/*  Sends the active send buffer to tid; the buffer stays active and can be resent. */
GIMPI_HOT int pvm_send(int tid, int msgtag)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_send", PvmNoMem);
    if (PVM_TEV_ARMED(ctx))
        return s_send_traced(ctx, tid, msgtag);
    int sbuf = pvm_ctx_sbuf(ctx);
    if (!sbuf)
        return s_fail(ctx, "pvm_send", PvmNoBuf);
    if (tid <= 0 || msgtag < 0)
        return s_fail(ctx, "pvm_send", PvmBadParam);
    int rc = pvm_ctx_send(ctx, sbuf, tid, msgtag, PVM_CTX_CURRENT);
    return rc < 0 ? s_fail(ctx, "pvm_send", rc) : 0;
}

/*  Sends the active send buffer to every listed tid except the caller's own.  Any
 *  invalid tid rejects the whole call before anything is sent. */
int pvm_mcast(int *tids, int ntask, int msgtag)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_mcast", PvmNoMem);
    PVM_TEV(ctx, TEV_MCAST, pvm_mcast(tids, ntask, msgtag), s_nbytes(ctx), msgtag,
            pvm_ctx_context(ctx));
    if (ntask < 0 || msgtag < 0 || (ntask > 0 && !tids))
        return s_fail(ctx, "pvm_mcast", PvmBadParam);
    for (int i = 0; i < ntask; i++)
        if (tids[i] <= 0)
            return s_fail(ctx, "pvm_mcast", PvmBadParam);
    if (ntask == 0)
        return 0;
    int sbuf = pvm_ctx_sbuf(ctx);
    if (!sbuf)
        return s_fail(ctx, "pvm_mcast", PvmNoBuf);
    int rc = pvm_ctx_enrol(ctx);
    if (rc < 0)
        return s_fail(ctx, "pvm_mcast", rc);
    int me = pvm_ctx_tid(ctx);
    for (int i = 0; i < ntask; i++) {
        if (tids[i] == me)
            continue;
        rc = pvm_ctx_send(ctx, sbuf, tids[i], msgtag, PVM_CTX_CURRENT);
        if (rc < 0)
            return s_fail(ctx, "pvm_mcast", rc);
    }
    return 0;
}

static int s_recv(const char *fn, int tid, int msgtag, int timeout_ms);

/*  A receive traced (off the fast path): its event from its name. */
static __attribute__((noinline, cold)) int s_recv_traced(pvm_ctx_t *ctx, const char *fn,
                                                         int tid, int msgtag, int timeout_ms)
{
    int kind = !strcmp(fn, "pvm_nrecv") ? TEV_NRECV : !strcmp(fn, "pvm_trecv") ? TEV_TRECV
                                                                              : TEV_RECV;
    PVM_TEV(ctx, kind, s_recv(fn, tid, msgtag, timeout_ms), tid, msgtag,
            pvm_ctx_context(ctx), timeout_ms / 1000, timeout_ms % 1000 * 1000);
    return s_recv(fn, tid, msgtag, timeout_ms);
}

/*  The common receive: frees the active receive buffer, waits up to timeout_ms, makes
 *  the message taken the active receive buffer.  Its id, 0 on timeout, or an error. */
GIMPI_HOT static int s_recv(const char *fn, int tid, int msgtag, int timeout_ms)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, fn, PvmNoMem);
    if (PVM_TEV_ARMED(ctx))
        return s_recv_traced(ctx, fn, tid, msgtag, timeout_ms);
    if ((tid < -1 && tid != PVM_CTX_DAEMON_TID) || tid == 0 || msgtag < -1)
        return s_fail(ctx, fn, PvmBadParam);
    pvm_ctx_free_buf(ctx, pvm_ctx_rbuf(ctx));
    int id = pvm_ctx_recv(ctx, tid, msgtag, PVM_CTX_CURRENT, timeout_ms);
    if (id < 0)
        return s_fail(ctx, fn, id);
    if (id > 0)
        pvm_ctx_set_rbuf(ctx, id);
    return id;
}

/*  Blocks until a message from tid (-1: any) with msgtag (-1: any) arrives. */
GIMPI_HOT int pvm_recv(int tid, int msgtag)
{
    return s_recv("pvm_recv", tid, msgtag, -1);
}

/*  Takes a matching message if one is there; 0 if none. */
int pvm_nrecv(int tid, int msgtag)
{
    return s_recv("pvm_nrecv", tid, msgtag, 0);
}

/*  Waits at most *tmout (NULL: no limit) for a matching message; 0 on timeout. */
int pvm_trecv(int tid, int msgtag, struct timeval *tmout)
{
    int ms = -1;
    if (tmout) {
        if (tmout->tv_sec < 0 || tmout->tv_usec < 0)
            return pvm_ctx_fail(pvm_ctx_current(), "pvm_trecv", PvmBadParam);
        long long t = (long long)tmout->tv_sec * 1000 + (tmout->tv_usec + 999) / 1000;
        ms = t > INT_MAX ? INT_MAX : (int)t;
    }
    return s_recv("pvm_trecv", tid, msgtag, ms);
}

/*  The id of a matching message that has arrived (it stays queued; pvm_recv will
 *  return the same id), or 0. */
int pvm_probe(int tid, int msgtag)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_probe", PvmNoMem);
    PVM_TEV(ctx, TEV_PROBE, pvm_probe(tid, msgtag), tid, msgtag, pvm_ctx_context(ctx));
    int id = pvm_ctx_probe(ctx, tid, msgtag, PVM_CTX_CURRENT);
    return id < 0 ? s_fail(ctx, "pvm_probe", id) : id;
}

/*  Checks a psend/precv datatype: PvmBadParam, PvmNotImpl for PVM_STR, or 0. */
static int s_check_type(int datatype)
{
    if (datatype == PVM_STR)
        return PvmNotImpl;
    return gimpi_datatype_size(datatype) ? 0 : PvmBadParam;
}

/*  Sends len elements of datatype from buf in one call, raw, leaving the active send
 *  buffer alone. */
int pvm_psend(int tid, int msgtag, void *buf, int len, int datatype)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_psend", PvmNoMem);
    PVM_TEV(ctx, TEV_PSEND, pvm_psend(tid, msgtag, buf, len, datatype), tid, msgtag,
            pvm_ctx_context(ctx), len, datatype);
    int rc = s_check_type(datatype);
    if (rc == 0 && (len < 0 || (len > 0 && !buf) || tid <= 0 || msgtag < 0))
        rc = PvmBadParam;
    if (rc < 0)
        return s_fail(ctx, "pvm_psend", rc);
    /* in place: raw bytes are the memory itself, sent without a packing copy */
    pvm_buf_t *b = pvm_buf_new(PVM_BUF_INPLACE);
    if (!b)
        return s_fail(ctx, "pvm_psend", PvmNoMem);
    rc = pvm_buf_pack(b, datatype, buf, len, 1);
    int id = rc < 0 ? rc : pvm_ctx_add_buf(ctx, b, 0, 0, PvmBaseContext);
    if (rc < 0)
        pvm_buf_destroy(&b);
    if (id < 0)
        return s_fail(ctx, "pvm_psend", id);
    rc = pvm_ctx_send(ctx, id, tid, msgtag, PVM_CTX_CURRENT);
    pvm_ctx_free_buf(ctx, id);
    return rc < 0 ? s_fail(ctx, "pvm_psend", rc) : 0;
}

/*  Receives one message (any sending style) straight into buf, at most len elements of
 *  datatype, leaving the active receive buffer alone.  *rtid, *rtag and *rlen (bytes in
 *  the message, as libpvm reports) may be NULL.  A longer message is cut to len. */
int pvm_precv(int tid, int msgtag, void *buf, int len, int datatype,
              int *rtid, int *rtag, int *rlen)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_precv", PvmNoMem);
    PVM_TEV(ctx, TEV_PRECV, pvm_precv(tid, msgtag, buf, len, datatype, rtid, rtag, rlen),
            tid, msgtag, pvm_ctx_context(ctx), len, datatype);
    int rc = s_check_type(datatype);
    if (rc == 0 && (len < 0 || (len > 0 && !buf) || tid < -1 || tid == 0 || msgtag < -1))
        rc = PvmBadParam;
    if (rc < 0)
        return s_fail(ctx, "pvm_precv", rc);
    int id = pvm_ctx_recv(ctx, tid, msgtag, PVM_CTX_CURRENT, -1);
    if (id < 0)
        return s_fail(ctx, "pvm_precv", id);
    pvm_buf_t *b = pvm_ctx_buf(ctx, id);
    int src, tag;
    pvm_ctx_buf_info(ctx, id, &src, &tag, NULL);
    size_t bytes = pvm_buf_left(b);
    size_t esize = pvm_buf_elem_size(b, datatype);
    size_t have = bytes / esize;
    int n = (size_t)len < have ? len : (int)have;
    rc = pvm_buf_unpack(b, datatype, buf, n, 1);
    pvm_ctx_free_buf(ctx, id);
    if (rc < 0)
        return s_fail(ctx, "pvm_precv", rc);
    if (rtid)
        *rtid = src;
    if (rtag)
        *rtag = tag;
    if (rlen)
        *rlen = bytes > (size_t)INT_MAX ? INT_MAX : (int)bytes;
    return 0;
}
