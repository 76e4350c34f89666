/*  gimpi_ops.c — the datatype table and the reduction operators of <gimpi_ops.h>, the
 *  operators generated per C type.
 *
 *  Integer sums and products wrap around in the type's width (computed in the unsigned
 *  type of the same width, so there is no undefined behaviour), floating types follow
 *  IEEE arithmetic, complex min/max keep the operand with the smaller/larger modulus
 *  (x wins ties), complex product is the complex multiplication.
 */
#include "gimpi_ops.h"
#include "gimpi_errors.h"

#include <string.h>

/*  PVM's datatypes, one row each: X(name, value, element size).  The values are those of
 *  the public enum (checked below), the rows are in value order. */
#define GIMPI_DATATYPES(X)                              \
    X(STR,    0,  1)                                    \
    X(BYTE,   1,  1)                                    \
    X(SHORT,  2,  sizeof(short))                        \
    X(INT,    3,  sizeof(int))                          \
    X(FLOAT,  4,  sizeof(float))                        \
    X(CPLX,   5,  2 * sizeof(float))                    \
    X(DOUBLE, 6,  sizeof(double))                       \
    X(DCPLX,  7,  2 * sizeof(double))                   \
    X(LONG,   8,  sizeof(long))                         \
    X(USHORT, 9,  sizeof(short))                        \
    X(UINT,   10, sizeof(int))                          \
    X(ULONG,  11, sizeof(long))

#define GIMPI_X_DT_CHECK(name, value, size) \
    _Static_assert(GIMPI_##name == value, "gimpi_ops.h: GIMPI_" #name);
GIMPI_DATATYPES(GIMPI_X_DT_CHECK)
#undef GIMPI_X_DT_CHECK

#define GIMPI_X_DT_ROW(name, value, size) { "PVM_" #name, size },
static const struct { const char *name; size_t size; } s_types[] = {
    GIMPI_DATATYPES(GIMPI_X_DT_ROW)
};
#undef GIMPI_X_DT_ROW
_Static_assert(sizeof s_types / sizeof s_types[0] == GIMPI_NDATATYPES, "one row per datatype");

/*  Element size of a datatype. */
size_t gimpi_datatype_size(int datatype)
{
    if (datatype < 0 || datatype >= GIMPI_NDATATYPES)
        return 0;
    return s_types[datatype].size;
}

/*  Name of a datatype. */
const char *gimpi_datatype_name(int datatype)
{
    if (datatype < 0 || datatype >= GIMPI_NDATATYPES)
        return NULL;
    return s_types[datatype].name;
}

/*  An integer operator over type T, wrapping through the unsigned type U (arithmetic in
 *  unsigned long long W, so that small types are not promoted to a signed int). */
typedef unsigned long long W;
/*  max and min, the same for integers and reals (x, y, n in scope). */
#define MINMAX_CASES                                                            \
    case GIMPI_OP_MAX:                                                          \
        for (int i = 0; i < n; i++) if (y[i] > x[i]) x[i] = y[i];               \
        break;                                                                  \
    case GIMPI_OP_MIN:                                                          \
        for (int i = 0; i < n; i++) if (y[i] < x[i]) x[i] = y[i];               \
        break;

#define INT_OP(fname, T, U)                                                     \
    static void fname(gimpi_op_t op, T *x, const T *y, int n)                   \
    {                                                                           \
        switch (op) { /* outside the loops, so that they vectorize */          \
        MINMAX_CASES                                                            \
        case GIMPI_OP_SUM:                                                      \
            for (int i = 0; i < n; i++) x[i] = (T)(U)((U)x[i] + (U)y[i]);       \
            break;                                                              \
        case GIMPI_OP_PRODUCT:                                                  \
            for (int i = 0; i < n; i++) x[i] = (T)(U)((W)x[i] * (W)y[i]);       \
            break;                                                              \
        }                                                                       \
    }

#define REAL_OP(fname, T)                                                       \
    static void fname(gimpi_op_t op, T *x, const T *y, int n)                   \
    {                                                                           \
        switch (op) { /* outside the loops, so that they vectorize */          \
        MINMAX_CASES                                                            \
        case GIMPI_OP_SUM:                                                      \
            for (int i = 0; i < n; i++) x[i] += y[i];                           \
            break;                                                              \
        case GIMPI_OP_PRODUCT:                                                  \
            for (int i = 0; i < n; i++) x[i] *= y[i];                           \
            break;                                                              \
        }                                                                       \
    }

#define CPLX_OP(fname, T)                                                       \
    static void fname(gimpi_op_t op, T *x, const T *y, int n)                   \
    {                                                                           \
        for (int i = 0; i < n; i++) {                                           \
            T *a = x + 2 * i;                                                   \
            const T *b = y + 2 * i;                                             \
            T ma = a[0] * a[0] + a[1] * a[1], mb = b[0] * b[0] + b[1] * b[1];   \
            switch (op) {                                                       \
            case GIMPI_OP_MAX: if (mb > ma) { a[0] = b[0]; a[1] = b[1]; } break; \
            case GIMPI_OP_MIN: if (mb < ma) { a[0] = b[0]; a[1] = b[1]; } break; \
            case GIMPI_OP_SUM: a[0] += b[0]; a[1] += b[1]; break;               \
            case GIMPI_OP_PRODUCT: {                                            \
                T re = a[0] * b[0] - a[1] * b[1];                               \
                T im = a[0] * b[1] + a[1] * b[0];                               \
                a[0] = re; a[1] = im; break;                                    \
            }                                                                   \
            }                                                                   \
        }                                                                       \
    }

INT_OP(s_byte, signed char, unsigned char)
INT_OP(s_short, short, unsigned short)
INT_OP(s_int, int, unsigned int)
INT_OP(s_long, long, unsigned long)
INT_OP(s_ushort, unsigned short, unsigned short)
INT_OP(s_uint, unsigned int, unsigned int)
INT_OP(s_ulong, unsigned long, unsigned long)
REAL_OP(s_float, float)
REAL_OP(s_double, double)
CPLX_OP(s_cplx, float)
CPLX_OP(s_dcplx, double)

/*  Dispatches on the datatype. */
int gimpi_op_apply(gimpi_op_t op, int datatype, void *x, const void *y, int n)
{
    if (n < 0 || (int)op < GIMPI_OP_MAX || op > GIMPI_OP_PRODUCT)
        return GIMPI_EBADPARAM;
    switch (datatype) {
    case GIMPI_BYTE: s_byte(op, x, y, n); return 0;
    case GIMPI_SHORT: s_short(op, x, y, n); return 0;
    case GIMPI_INT: s_int(op, x, y, n); return 0;
    case GIMPI_FLOAT: s_float(op, x, y, n); return 0;
    case GIMPI_CPLX: s_cplx(op, x, y, n); return 0;
    case GIMPI_DOUBLE: s_double(op, x, y, n); return 0;
    case GIMPI_DCPLX: s_dcplx(op, x, y, n); return 0;
    case GIMPI_LONG: s_long(op, x, y, n); return 0;
    case GIMPI_USHORT: s_ushort(op, x, y, n); return 0;
    case GIMPI_UINT: s_uint(op, x, y, n); return 0;
    case GIMPI_ULONG: s_ulong(op, x, y, n); return 0;
    default: return GIMPI_EBADPARAM;
    }
}
