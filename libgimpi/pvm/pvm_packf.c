/*  pvm_packf.c — pvm_packf and pvm_unpackf: packing and unpacking driven by a
 *  printf-like format.
 *
 *  A format is an optional "%+" (pvm_initsend with the encoding taken from the
 *  arguments) followed by specs `%[count][.stride][modifiers]conv`: count and stride are
 *  digits or `*` (taken from the arguments as an int); modifiers h (short), l (long for
 *  d, double for f, double complex for x) and u (unsigned); conv c (bytes), d
 *  (integers), f (floats), x (complex), s (a string).  When a count or a stride is given
 *  the argument is a pointer to the elements; otherwise pvm_packf takes one value
 *  (promoted as a variadic argument: int, long, double).  pvm_unpackf always takes
 *  pointers.  Characters outside specs are ignored.  The first failing element stops
 *  the call and its error is returned (reported as from pvm_packf / pvm_unpackf).
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct {
    int count, stride;          /* -1: not given */
    int h, l, u;
    char conv;
} spec_t;

/*  Parses a number or '*' (from the arguments) at *p; -1 if none. */
static int s_number(const char **p, va_list *ap)
{
    if (**p == '*') {
        (*p)++;
        return va_arg(*ap, int);
    }
    if (!isdigit((unsigned char)**p))
        return -1;
    long v = 0;
    while (isdigit((unsigned char)**p)) {
        if (v < 100000000)
            v = v * 10 + (**p - '0');
        (*p)++;
    }
    return (int)v;
}

/*  Parses the spec after '%' at *p; 0, or PvmBadParam for a malformed one. */
static int s_parse(const char **p, va_list *ap, spec_t *sp)
{
    *sp = (spec_t){ -1, -1, 0, 0, 0, 0 };
    sp->count = s_number(p, ap);
    if (**p == '.') {
        (*p)++;
        sp->stride = s_number(p, ap);
        if (sp->stride < 0)
            return PvmBadParam;
    }
    for (;; (*p)++) {
        if (**p == 'h')
            sp->h = 1;
        else if (**p == 'l')
            sp->l = 1;
        else if (**p == 'u')
            sp->u = 1;
        else
            break;
    }
    sp->conv = **p;
    if (!sp->conv || !strchr("cdfxs", sp->conv))
        return PvmBadParam;
    (*p)++;
    return 0;
}

/*  The PVM datatype of a numeric spec, or -1. */
static int s_datatype(const spec_t *sp)
{
    switch (sp->conv) {
    case 'c': return PVM_BYTE;
    case 'd':
        if (sp->h)
            return sp->u ? PVM_USHORT : PVM_SHORT;
        if (sp->l)
            return sp->u ? PVM_ULONG : PVM_LONG;
        return sp->u ? PVM_UINT : PVM_INT;
    case 'f': return sp->l ? PVM_DOUBLE : PVM_FLOAT;
    case 'x': return sp->l ? PVM_DCPLX : PVM_CPLX;
    default: return -1;
    }
}

/*  Packs n elements of datatype from xp. */
static int s_pk(int datatype, void *xp, int n, int stride)
{
    switch (datatype) {
    case PVM_BYTE: return pvm_pkbyte(xp, n, stride);
    case PVM_SHORT: return pvm_pkshort(xp, n, stride);
    case PVM_USHORT: return pvm_pkushort(xp, n, stride);
    case PVM_INT: return pvm_pkint(xp, n, stride);
    case PVM_UINT: return pvm_pkuint(xp, n, stride);
    case PVM_LONG: return pvm_pklong(xp, n, stride);
    case PVM_ULONG: return pvm_pkulong(xp, n, stride);
    case PVM_FLOAT: return pvm_pkfloat(xp, n, stride);
    case PVM_DOUBLE: return pvm_pkdouble(xp, n, stride);
    case PVM_CPLX: return pvm_pkcplx(xp, n, stride);
    case PVM_DCPLX: return pvm_pkdcplx(xp, n, stride);
    default: return PvmBadParam;
    }
}

/*  Unpacks n elements of datatype into xp. */
static int s_upk(int datatype, void *xp, int n, int stride)
{
    switch (datatype) {
    case PVM_BYTE: return pvm_upkbyte(xp, n, stride);
    case PVM_SHORT: return pvm_upkshort(xp, n, stride);
    case PVM_USHORT: return pvm_upkushort(xp, n, stride);
    case PVM_INT: return pvm_upkint(xp, n, stride);
    case PVM_UINT: return pvm_upkuint(xp, n, stride);
    case PVM_LONG: return pvm_upklong(xp, n, stride);
    case PVM_ULONG: return pvm_upkulong(xp, n, stride);
    case PVM_FLOAT: return pvm_upkfloat(xp, n, stride);
    case PVM_DOUBLE: return pvm_upkdouble(xp, n, stride);
    case PVM_CPLX: return pvm_upkcplx(xp, n, stride);
    case PVM_DCPLX: return pvm_upkdcplx(xp, n, stride);
    default: return PvmBadParam;
    }
}

/*  Packs one value argument of datatype. */
static int s_pk_value(int datatype, va_list *ap)
{
    union {
        char c; short s; unsigned short us; int i; unsigned u; long l; unsigned long ul;
        float f; double d;
    } v;
    switch (datatype) {
    case PVM_BYTE: v.c = (char)va_arg(*ap, int); break;
    case PVM_SHORT: v.s = (short)va_arg(*ap, int); break;
    case PVM_USHORT: v.us = (unsigned short)va_arg(*ap, int); break;
    case PVM_INT: v.i = va_arg(*ap, int); break;
    case PVM_UINT: v.u = va_arg(*ap, unsigned); break;
    case PVM_LONG: v.l = va_arg(*ap, long); break;
    case PVM_ULONG: v.ul = va_arg(*ap, unsigned long); break;
    case PVM_FLOAT: v.f = (float)va_arg(*ap, double); break;
    case PVM_DOUBLE: v.d = va_arg(*ap, double); break;
    default: return s_pk(datatype, va_arg(*ap, void *), 1, 1);  /* complex: a pointer */
    }
    return s_pk(datatype, &v, 1, 1);
}

/*  Records a failure of the whole call under fn (the element call reported its own). */
static int s_fail(const char *fn, int rc)
{
    return pvm_ctx_fail(pvm_ctx_current(), fn, rc);
}

/*  Walks a format, packing into the active send buffer (pack) or unpacking from the
 *  active receive buffer: the one loop of pvm_packf and pvm_unpackf.  Only packing takes
 *  `%+` (a new send buffer) and values by value; unpacking takes every argument as a
 *  pointer.  Returns 0 or the first element call's negative code. */
static int s_walk(const char *fmt, va_list *ap, bool pack)
{
    int rc = 0;
    const char *p = fmt;
    while (rc >= 0 && *p) {
        if (*p++ != '%')
            continue;
        if (pack && *p == '+') {
            p++;
            rc = pvm_initsend(va_arg(*ap, int));
            continue;
        }
        spec_t sp;
        rc = s_parse(&p, ap, &sp);
        if (rc < 0)
            break;
        if (sp.conv == 's') {
            char *str = va_arg(*ap, char *);
            rc = pack ? pvm_pkstr(str) : pvm_upkstr(str);
            continue;
        }
        int dt = s_datatype(&sp);
        if (pack && sp.count < 0 && sp.stride < 0) {
            rc = s_pk_value(dt, ap);
            continue;
        }
        void *v = va_arg(*ap, void *);
        int n = sp.count < 0 ? 1 : sp.count, stride = sp.stride < 0 ? 1 : sp.stride;
        rc = pack ? s_pk(dt, v, n, stride) : s_upk(dt, v, n, stride);
    }
    return rc;
}

/*  pvm_packf (pack) or pvm_unpackf of format with its arguments in *ap, traced as one
 *  call (the parameter is not named fmt: it is no error text, t/errors_extract.sh). */
static int s_formatted(const char *format, va_list *ap, bool pack)
{
    const char *fn = pack ? "pvm_packf" : "pvm_unpackf";
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (ctx)
        PVM_TEV_S(ctx, pack ? TEV_PACKF : TEV_UNPACKF, format, NULL,
                  s_formatted(format, ap, pack));
    if (!format)
        return s_fail(fn, PvmBadParam);
    int rc = s_walk(format, ap, pack);
    return rc < 0 ? s_fail(fn, rc) : 0;
}

/*  Packs by format into the active send buffer. */
int pvm_packf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = s_formatted(fmt, &ap, true);
    va_end(ap);
    return rc;
}

/*  Unpacks by format from the active receive buffer (every argument a pointer). */
int pvm_unpackf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = s_formatted(fmt, &ap, false);
    va_end(ap);
    return rc;
}
