/*  gimpi_ops.h — the datatypes and the reduction operators of gimpi's reduces.
 *
 *  Datatypes are PVM's (the same numbers as PVM_INT & co. of <pvm3.h>); a complex number
 *  (GIMPI_CPLX: two floats, GIMPI_DCPLX: two doubles) is one element.  The predefined
 *  operators (gimpi_op_t) are max, min, sum and product, element by element.  Unlike PVM,
 *  sum and product are defined for GIMPI_BYTE and every operator for the unsigned types;
 *  complex min and max compare moduli as PVM does.  GIMPI_STR (strings) cannot be reduced.
 *  gimpi_op_apply(op, type, x, y, n) computes x[i] = x[i] op y[i], which is also what a
 *  user reduce function (gimpi_reduce_fn, PVM's `f(&type, x, y, &n, &info)`) must do.
 */
#ifndef GIMPI_OPS_H
#define GIMPI_OPS_H

#include "gimpi_export.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*  Datatypes: C type of one element in the comment. */
enum {
    GIMPI_STR = 0,              /* char (a string; not reducible) */
    GIMPI_BYTE = 1,             /* signed char */
    GIMPI_SHORT = 2,            /* short */
    GIMPI_INT = 3,              /* int */
    GIMPI_FLOAT = 4,            /* float */
    GIMPI_CPLX = 5,             /* float[2] (re, im) */
    GIMPI_DOUBLE = 6,           /* double */
    GIMPI_DCPLX = 7,            /* double[2] (re, im) */
    GIMPI_LONG = 8,             /* long */
    GIMPI_USHORT = 9,           /* unsigned short */
    GIMPI_UINT = 10,            /* unsigned int */
    GIMPI_ULONG = 11,           /* unsigned long */
    GIMPI_NDATATYPES            /* number of datatypes */
};

/*  Predefined reduction operators. */
typedef enum { GIMPI_OP_MAX, GIMPI_OP_MIN, GIMPI_OP_SUM, GIMPI_OP_PRODUCT } gimpi_op_t;

/*  PVM's reduce function signature: x[i] = x[i] op y[i] for *num elements, *info < 0 on
 *  error (it starts at 0). */
typedef void (*gimpi_reduce_fn)(int *datatype, void *x, void *y, int *num, int *info);

/*  Bytes of one element of a datatype (a complex number is one element), 0 if unknown. */
GIMPI_EXPORT size_t gimpi_datatype_size(int datatype);
/*  Name of a datatype ("PVM_INT"), or NULL if unknown. */
GIMPI_EXPORT const char *gimpi_datatype_name(int datatype);

/*  x[i] = x[i] op y[i] for n elements.  Returns 0, or GIMPI_EBADPARAM for GIMPI_STR, an
 *  unknown datatype or operator, or n < 0. */
GIMPI_EXPORT int gimpi_op_apply(gimpi_op_t op, int datatype, void *x, const void *y, int n);

#ifdef __cplusplus
}
#endif
#endif
