/*  pvm_pack.c — the pvm_pk* and pvm_upk* families: typed packing into the active send
 *  buffer and unpacking from the active receive buffer, n elements every stride-th.
 *
 *  One generic pair does the work (pvm_buf does the encoding); the public functions are
 *  generated from a table of (suffix, C type, PVM datatype).
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

#include <stdbool.h>
#include <stddef.h>

static int s_pack(const char *fn, int datatype, const void *xp, int n, int stride);
static int s_unpack(const char *fn, int datatype, void *xp, int n, int stride);

/*  The trace event of packing (pack) or unpacking datatype. */
static int s_kind(int datatype, bool pack)
{
    switch (datatype) {
    case PVM_BYTE: return pack ? TEV_PKBYTE : TEV_UPKBYTE;
    case PVM_SHORT: return pack ? TEV_PKSHORT : TEV_UPKSHORT;
    case PVM_INT: return pack ? TEV_PKINT : TEV_UPKINT;
    case PVM_LONG: return pack ? TEV_PKLONG : TEV_UPKLONG;
    case PVM_FLOAT: return pack ? TEV_PKFLOAT : TEV_UPKFLOAT;
    case PVM_DOUBLE: return pack ? TEV_PKDOUBLE : TEV_UPKDOUBLE;
    case PVM_CPLX: return pack ? TEV_PKCPLX : TEV_UPKCPLX;
    case PVM_DCPLX: return pack ? TEV_PKDCPLX : TEV_UPKDCPLX;
    case PVM_USHORT: return pack ? TEV_PKUSHORT : TEV_UPKUSHORT;
    case PVM_UINT: return pack ? TEV_PKUINT : TEV_UPKUINT;
    default: return pack ? TEV_PKULONG : TEV_UPKULONG;
    }
}

/*  A pack (pack) or unpack traced: off the fast path, so that the hot one keeps nothing
 *  for it. */
static __attribute__((noinline, cold)) int s_traced(pvm_ctx_t *ctx, const char *fn, bool pack,
                                                    int datatype, void *xp, int n, int stride)
{
    PVM_TEV(ctx, s_kind(datatype, pack), pack ? s_pack(fn, datatype, xp, n, stride)
                                              : s_unpack(fn, datatype, xp, n, stride),
            n, stride);
    return pack ? s_pack(fn, datatype, xp, n, stride) : s_unpack(fn, datatype, xp, n, stride);
}

/*  Packs into the active send buffer; errors reported under fn. */
static int s_pack(const char *fn, int datatype, const void *xp, int n, int stride)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, fn, PvmNoMem);
    if (PVM_TEV_ARMED(ctx))
        return s_traced(ctx, fn, true, datatype, (void *)xp, n, stride);
    pvm_buf_t *buf = pvm_ctx_buf(ctx, pvm_ctx_sbuf(ctx));
    if (!buf)
        return pvm_ctx_fail(ctx, fn, PvmNoBuf);
    int rc = pvm_buf_pack(buf, datatype, xp, n, stride);
    return rc < 0 ? pvm_ctx_fail(ctx, fn, rc) : 0;
}

/*  Unpacks from the active receive buffer; errors reported under fn. */
static int s_unpack(const char *fn, int datatype, void *xp, int n, int stride)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, fn, PvmNoMem);
    if (PVM_TEV_ARMED(ctx))
        return s_traced(ctx, fn, false, datatype, xp, n, stride);
    pvm_buf_t *buf = pvm_ctx_buf(ctx, pvm_ctx_rbuf(ctx));
    if (!buf)
        return pvm_ctx_fail(ctx, fn, PvmNoBuf);
    int rc = pvm_buf_unpack(buf, datatype, xp, n, stride);
    return rc < 0 ? pvm_ctx_fail(ctx, fn, rc) : 0;
}

/*  X(suffix, C type, datatype) for every numeric family. */
#define PVM_PACK_FAMILIES(X)                        \
    X(byte,   char,           PVM_BYTE)             \
    X(short,  short,          PVM_SHORT)            \
    X(int,    int,            PVM_INT)              \
    X(long,   long,           PVM_LONG)             \
    X(float,  float,          PVM_FLOAT)            \
    X(double, double,         PVM_DOUBLE)           \
    X(cplx,   float,          PVM_CPLX)             \
    X(dcplx,  double,         PVM_DCPLX)            \
    X(ushort, unsigned short, PVM_USHORT)           \
    X(uint,   unsigned int,   PVM_UINT)             \
    X(ulong,  unsigned long,  PVM_ULONG)

/*  pvm_pk<suffix>(xp, n, stride) and pvm_upk<suffix>(xp, n, stride): a complex element
 *  is two floats (doubles), so xp of cplx/dcplx points at 2n (strided) reals. */
#define X_PACK(suffix, ctype, dt)                                           \
    int pvm_pk##suffix(ctype *xp, int n, int stride)                        \
    {                                                                       \
        return s_pack("pvm_pk" #suffix, dt, xp, n, stride);                 \
    }                                                                       \
    int pvm_upk##suffix(ctype *xp, int n, int stride)                       \
    {                                                                       \
        return s_unpack("pvm_upk" #suffix, dt, xp, n, stride);              \
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
