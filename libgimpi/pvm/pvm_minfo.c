/*  pvm_minfo.c — a message as a whole: pvm_getminfo, pvm_setminfo (PVM 3.4's message
 *  header), pvm_pkmesg, pvm_pkmesgbody, pvm_upkmesg (a message packed into another),
 *  pvm_getmwid, pvm_setmwid (PVM 3.3's wait id) and pvm_recvf (the receive matcher).
 *
 *  The header is what libpvm keeps per message (struct pvmminfo): length, context, tag,
 *  wait id, encoding (PVM's signatures: 0x10000000 PvmDataDefault, 0x20000000 InPlace,
 *  0x408c41 raw on LP64 little-endian hosts), crc (always 0: PVM sets it only under its
 *  debugging option) and source and destination tids.  pvm_setminfo sets context, tag,
 *  wait id, source and destination, as libpvm does; a send then sets context, tag,
 *  destination and source anew, as there, and the wait id travels with pvm_send and
 *  pvm_mcast (the transport's send_wid).  pvm_pkmesg packs a header as eight ints and
 *  then the body as one fragment (its length, then its bytes), in the send buffer's
 *  encoding, as libpvm's pmsg_pack; pvm_upkmesg reads that back into a new buffer.
 *  pvm_recvf's matcher applies to pvm_recv, nrecv, trecv, probe and precv (libpvm's
 *  precv receives through pvm_recv); the default matcher (source, tag, current
 *  context; -1 wildcards) is a function of this file that pvm_recvf returns and accepts.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

enum {
    ENC_DEFAULT = 0x10000000,   /* PVM's encoding signatures (struct pvmminfo.enc) */
    ENC_INPLACE = 0x20000000,
    ENC_RAW = 0x408c41,         /* raw on LP64 little-endian hosts (pvm_vm.c's hi_dsig) */
};

/*  The current context, or NULL after reporting PvmNoMem for fn. */
static pvm_ctx_t *s_ctx(const char *fn)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        pvm_ctx_fail(NULL, fn, PvmNoMem);
    return ctx;
}

/*  PVM's signature for a buffer's encoding. */
static int s_enc(const pvm_buf_t *buf)
{
    int e = pvm_buf_encoding(buf);
    return e == PVM_BUF_DEFAULT ? ENC_DEFAULT : e == PVM_BUF_INPLACE ? ENC_INPLACE : ENC_RAW;
}

/*  Fills info for buffer bufid: 0 or a GIMPI_E* code. */
static int s_minfo(pvm_ctx_t *ctx, int bufid, struct pvmminfo *info)
{
    pvm_buf_t *buf = pvm_ctx_buf(ctx, bufid);
    if (!buf)
        return PvmNoSuchBuf;
    size_t len = pvm_buf_len(buf);
    int src, tag, cx, wid, dst;
    pvm_ctx_buf_info(ctx, bufid, &src, &tag, &cx);
    pvm_ctx_buf_minfo(ctx, bufid, &wid, &dst);
    *info = (struct pvmminfo){ .len = len > INT_MAX ? INT_MAX : (int)len, .ctx = cx,
                               .tag = tag, .wid = wid, .enc = s_enc(buf), .crc = 0,
                               .src = src ? src : pvm_ctx_tid(ctx), .dst = dst };
    return 0;
}

/*  A buffer's header: 0, PvmBadParam (bufid <= 0, NULL info) or PvmNoSuchBuf. */
int pvm_getminfo(int bufid, struct pvmminfo *info)
{
    PVM_TEV_TOP(TEV_GETMINFO, pvm_getminfo(bufid, info), bufid);
    pvm_ctx_t *ctx = s_ctx("pvm_getminfo");
    if (!ctx)
        return PvmNoMem;
    int rc = bufid <= 0 || !info ? PvmBadParam : s_minfo(ctx, bufid, info);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_getminfo", rc) : 0;
}

/*  Sets a buffer's context, tag, wait id, source and destination from info. */
int pvm_setminfo(int bufid, struct pvmminfo *info)
{
    PVM_TEV_TOP(TEV_SETMINFO, pvm_setminfo(bufid, info), bufid);
    pvm_ctx_t *ctx = s_ctx("pvm_setminfo");
    if (!ctx)
        return PvmNoMem;
    int rc = bufid <= 0 || !info ? PvmBadParam
           : pvm_ctx_set_minfo(ctx, bufid, info->src, info->tag, info->ctx, info->wid,
                               info->dst);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_setminfo", rc) : 0;
}

/*  The checks of pvm_pkmesg and pvm_pkmesgbody; the send buffer, or NULL with *rc set.
 *  A PvmDataInPlace send buffer would keep pointers into a message that may go before
 *  the send: PvmNotImpl. */
static pvm_buf_t *s_pk_target(pvm_ctx_t *ctx, int bufid, int *rc)
{
    int sbuf = pvm_ctx_sbuf(ctx);
    *rc = bufid <= 0 ? PvmBadParam : !pvm_ctx_buf(ctx, bufid) ? PvmNoSuchBuf
        : !sbuf ? PvmNoBuf : sbuf == bufid ? PvmBadParam
        : pvm_buf_encoding(pvm_ctx_buf(ctx, sbuf)) == PVM_BUF_INPLACE ? PvmNotImpl : 0;
    return *rc ? NULL : pvm_ctx_buf(ctx, sbuf);
}

/*  Appends a body's len bytes to the send buffer. */
static int s_pk_body(pvm_buf_t *sb, const uint8_t *bytes, size_t len)
{
    return len ? pvm_buf_pack(sb, PVM_BYTE, bytes, (int)len, 1) : 0;
}

/*  Packs message bufid, header and body, into the active send buffer (not into itself). */
int pvm_pkmesg(int bufid)
{
    pvm_ctx_t *ctx = s_ctx("pvm_pkmesg");
    if (!ctx)
        return PvmNoMem;
    int rc;
    pvm_buf_t *sb = s_pk_target(ctx, bufid, &rc);
    struct pvmminfo mi;
    size_t len = 0;
    const uint8_t *bytes = sb ? pvm_buf_bytes(pvm_ctx_buf(ctx, bufid), &len) : NULL;
    if (sb && (!bytes || len > INT_MAX))
        rc = bytes ? PvmOverflow : PvmNoData;
    if (rc == 0 && (rc = s_minfo(ctx, bufid, &mi)) == 0) {
        int h[8] = { mi.len, mi.ctx, mi.tag, mi.wid, mi.enc, mi.crc, mi.src, mi.dst };
        int frag = (int)len;
        rc = pvm_buf_pack(sb, PVM_INT, h, 8, 1);
        if (rc == 0 && len)
            rc = pvm_buf_pack(sb, PVM_INT, &frag, 1, 1);
        if (rc == 0)
            rc = s_pk_body(sb, bytes, len);
    }
    return rc < 0 ? pvm_ctx_error(ctx, rc, PVM_CAUSE_DATA) : 0;
}

/*  Packs the body of message bufid (no header) into the active send buffer, which must be
 *  in the same encoding (PvmMismatch otherwise). */
int pvm_pkmesgbody(int bufid)
{
    pvm_ctx_t *ctx = s_ctx("pvm_pkmesgbody");
    if (!ctx)
        return PvmNoMem;
    int rc;
    pvm_buf_t *sb = s_pk_target(ctx, bufid, &rc);
    pvm_buf_t *b = sb ? pvm_ctx_buf(ctx, bufid) : NULL;
    if (b && s_enc(b) != s_enc(sb))
        rc = PvmMismatch;
    size_t len = 0;
    const uint8_t *bytes = rc == 0 ? pvm_buf_bytes(b, &len) : NULL;
    if (rc == 0)
        rc = !bytes ? PvmNoData : len > INT_MAX ? PvmOverflow : s_pk_body(sb, bytes, len);
    return rc < 0 ? pvm_ctx_error(ctx, rc, PVM_CAUSE_DATA) : 0;
}

/*  Unpacks a message packed by pvm_pkmesg from the active receive buffer into a new
 *  buffer (not made active): its id, PvmNoBuf, PvmNoData, PvmBadMsg or PvmNoMem. */
int pvm_upkmesg(void)
{
    pvm_ctx_t *ctx = s_ctx("pvm_upkmesg");
    if (!ctx)
        return PvmNoMem;
    pvm_buf_t *rb = pvm_ctx_buf(ctx, pvm_ctx_rbuf(ctx));
    int h[8], frag = 0, rc = rb ? pvm_buf_unpack(rb, PVM_INT, h, 8, 1) : PvmNoBuf;
    if (rc == 0 && h[0] < 0)
        rc = PvmBadMsg;
    if (rc == 0 && h[0] > 0 && (rc = pvm_buf_unpack(rb, PVM_INT, &frag, 1, 1)) == 0
        && frag != h[0])
        rc = PvmBadMsg;                 /* gimpi packs one fragment: the whole body */
    uint8_t *bytes = rc == 0 && frag ? malloc((size_t)frag) : NULL;
    if (rc == 0 && frag && !bytes)
        rc = PvmNoMem;
    if (rc == 0 && frag)
        rc = pvm_buf_unpack(rb, PVM_BYTE, bytes, frag, 1);
    int enc = h[4] == ENC_DEFAULT ? PVM_BUF_DEFAULT : PVM_BUF_RAW;
    pvm_buf_t *b = rc == 0 ? (frag ? pvm_buf_adopt(enc, bytes, (size_t)frag) : pvm_buf_new(enc))
                           : NULL;
    if (rc == 0 && !b)
        rc = PvmNoMem;
    if (rc < 0 || !frag)
        free(bytes);
    int id = rc < 0 ? rc : pvm_ctx_add_buf(ctx, b, h[6], h[2], h[1]);
    if (id > 0)
        pvm_ctx_set_minfo(ctx, id, h[6], h[2], h[1], h[3], h[7]);
    return id < 0 ? pvm_ctx_error(ctx, id, PVM_CAUSE_DATA) : id;
}

/*  A buffer's wait id (PVM 3.3): >= 0, PvmBadParam (bufid < 0) or PvmNoSuchBuf. */
int pvm_getmwid(int bufid)
{
    PVM_TEV_TOP(TEV_GETMWID, pvm_getmwid(bufid), bufid);
    pvm_ctx_t *ctx = s_ctx("pvm_getmwid");
    if (!ctx)
        return PvmNoMem;
    int wid = 0, dst;
    int rc = bufid < 0 ? PvmBadParam : pvm_ctx_buf_minfo(ctx, bufid, &wid, &dst);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_getmwid", rc) : wid;
}

/*  Sets a buffer's wait id (PVM 3.3): 0, PvmBadParam or PvmNoSuchBuf. */
int pvm_setmwid(int bufid, int waitid)
{
    PVM_TEV_TOP(TEV_SETMWID, pvm_setmwid(bufid, waitid), bufid, waitid);
    pvm_ctx_t *ctx = s_ctx("pvm_setmwid");
    if (!ctx)
        return PvmNoMem;
    int src, tag, cx, wid, dst;
    int rc = bufid < 0 ? PvmBadParam : pvm_ctx_buf_info(ctx, bufid, &src, &tag, &cx);
    if (rc == 0 && (rc = pvm_ctx_buf_minfo(ctx, bufid, &wid, &dst)) == 0)
        rc = pvm_ctx_set_minfo(ctx, bufid, src, tag, cx, waitid, dst);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_setmwid", rc) : 0;
}

/*  PVM's default matcher: 1 when message mid is from tid (-1: any) with tag (-1: any) in
 *  the current context (-1: any), else 0; PvmNoSuchBuf for an unknown mid. */
static int s_default_match(int mid, int tid, int tag)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    int src, t, cx;
    if (!ctx || pvm_ctx_buf_info(ctx, mid, &src, &t, &cx) < 0)
        return PvmNoSuchBuf;
    int my = pvm_ctx_context(ctx);
    return (tid == -1 || tid == src) && (tag == -1 || tag == t) && (my == -1 || my == cx);
}

/*  Installs newmatch as the receive matcher (NULL: the default); returns the previous
 *  one (the default matcher the first time). */
int (*pvm_recvf(int (*newmatch)(int, int, int)))(int, int, int)
{
    pvm_ctx_t *ctx = s_ctx("pvm_recvf");
    if (!ctx)
        return s_default_match;
    int traced = PVM_TEV_ARMED(ctx);               /* (it returns no int: no PVM_TEV) */
    if (traced)
        pvm_tev_enter(ctx, TEV_RECVF, NULL, NULL, NULL, 0);
    pvm_ctx_match_fn *old = pvm_ctx_set_match(ctx, newmatch == s_default_match ? NULL
                                                                               : newmatch);
    if (traced)
        pvm_tev_leave(ctx, TEV_RECVF, 0);
    return old ? old : s_default_match;
}
