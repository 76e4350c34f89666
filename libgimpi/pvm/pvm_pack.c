/*  pvm_pack.c — the pvm_pk* and pvm_upk* families: typed packing into the active send
 *  buffer and unpacking from the active receive buffer, n elements every stride-th.
 *
 *  One generic pair does the work (pvm_buf does the encoding); the public functions are
 *  generated from a table of (suffix, C type, PVM datatype).
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

#include <stddef.h>

/*  Packs into the active send buffer; errors reported under fn. */
static int s_pack(const char *fn, int kind, int datatype, const void *xp, int n, int stride)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, fn, PvmNoMem);
    PVM_TEV(ctx, kind, s_pack(fn, kind, datatype, xp, n, stride), n, stride);
    pvm_buf_t *buf = pvm_ctx_buf(ctx, pvm_ctx_sbuf(ctx));
    if (!buf)
        return pvm_ctx_fail(ctx, fn, PvmNoBuf);
    int rc = pvm_buf_pack(buf, datatype, xp, n, stride);
    return rc < 0 ? pvm_ctx_fail(ctx, fn, rc) : 0;
}

/*  Unpacks from the active receive buffer; errors reported under fn. */
static int s_unpack(const char *fn, int kind, int datatype, void *xp, int n, int stride)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, fn, PvmNoMem);
    PVM_TEV(ctx, kind, s_unpack(fn, kind, datatype, xp, n, stride), n, stride);
    pvm_buf_t *buf = pvm_ctx_buf(ctx, pvm_ctx_rbuf(ctx));
    if (!buf)
        return pvm_ctx_fail(ctx, fn, PvmNoBuf);
    int rc = pvm_buf_unpack(buf, datatype, xp, n, stride);
    return rc < 0 ? pvm_ctx_fail(ctx, fn, rc) : 0;
}

/*  X(suffix, C type, datatype, trace event of the pack, of the unpack) for every numeric
 *  family. */
#define PVM_PACK_FAMILIES(X)                                                    \
    X(byte,   char,           PVM_BYTE,   TEV_PKBYTE,   TEV_UPKBYTE)            \
    X(short,  short,          PVM_SHORT,  TEV_PKSHORT,  TEV_UPKSHORT)           \
    X(int,    int,            PVM_INT,    TEV_PKINT,    TEV_UPKINT)             \
    X(long,   long,           PVM_LONG,   TEV_PKLONG,   TEV_UPKLONG)            \
    X(float,  float,          PVM_FLOAT,  TEV_PKFLOAT,  TEV_UPKFLOAT)           \
    X(double, double,         PVM_DOUBLE, TEV_PKDOUBLE, TEV_UPKDOUBLE)          \
    X(cplx,   float,          PVM_CPLX,   TEV_PKCPLX,   TEV_UPKCPLX)            \
    X(dcplx,  double,         PVM_DCPLX,  TEV_PKDCPLX,  TEV_UPKDCPLX)           \
    X(ushort, unsigned short, PVM_USHORT, TEV_PKUSHORT, TEV_UPKUSHORT)          \
    X(uint,   unsigned int,   PVM_UINT,   TEV_PKUINT,   TEV_UPKUINT)            \
    X(ulong,  unsigned long,  PVM_ULONG,  TEV_PKULONG,  TEV_UPKULONG)

/*  pvm_pk<suffix>(xp, n, stride) and pvm_upk<suffix>(xp, n, stride): a complex element
 *  is two floats (doubles), so xp of cplx/dcplx points at 2n (strided) reals. */
#define X_PACK(suffix, ctype, dt, pk, upk)                                  \
    int pvm_pk##suffix(ctype *xp, int n, int stride)                        \
    {                                                                       \
        return s_pack("pvm_pk" #suffix, pk, dt, xp, n, stride);             \
    }                                                                       \
    int pvm_upk##suffix(ctype *xp, int n, int stride)                       \
    {                                                                       \
        return s_unpack("pvm_upk" #suffix, upk, dt, xp, n, stride);         \
    }
PVM_PACK_FAMILIES(X_PACK)
#undef X_PACK

/*  Packs a NUL-terminated string. */
int pvm_pkstr(char *s)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_pkstr", PvmNoMem);
    PVM_TEV(ctx, TEV_PKSTR, pvm_pkstr(s));
    pvm_buf_t *buf = pvm_ctx_buf(ctx, pvm_ctx_sbuf(ctx));
    if (!buf)
        return pvm_ctx_fail(ctx, "pvm_pkstr", PvmNoBuf);
    int rc = pvm_buf_pack_str(buf, s);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_pkstr", rc) : 0;
}

/*  Unpacks the next string into s (which must be large enough, as in PVM). */
int pvm_upkstr(char *s)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_upkstr", PvmNoMem);
    PVM_TEV(ctx, TEV_UPKSTR, pvm_upkstr(s));
    pvm_buf_t *buf = pvm_ctx_buf(ctx, pvm_ctx_rbuf(ctx));
    if (!buf)
        return pvm_ctx_fail(ctx, "pvm_upkstr", PvmNoBuf);
    int rc = pvm_buf_unpack_str(buf, s, 0);
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_upkstr", rc) : 0;
}
