/*  gimpi_ops.h — the element-wise reduction operators (max, min, sum, product) over every
 *  PVM datatype, and the datatype table they are driven by.
 *
 *  One table lists PVM's datatypes (value, name, element size, kind); the operators are
 *  generated per C type from it.  gimpi_op_apply(op, type, x, y, n) computes x[i] =
 *  x[i] op y[i], which is PVM's user-function contract `f(&type, x, y, &n, &info)`, so
 *  PvmMax/PvmMin/PvmSum/PvmProduct of <pvm3.h> are thin wrappers.  Unlike PVM, sum and
 *  product are defined for PVM_BYTE and every op for the unsigned types; complex min and
 *  max compare moduli as PVM does.
 */
#ifndef GIMPI_OPS_H
#define GIMPI_OPS_H

#include <stdbool.h>
#include <stddef.h>

/*  PVM datatypes: X(name, value, C type, element size). */
#define GIMPI_DATATYPES(X)                              \
    X(STR,    0,  char,               1)                \
    X(BYTE,   1,  signed char,        1)                \
    X(SHORT,  2,  short,              sizeof(short))    \
    X(INT,    3,  int,                sizeof(int))      \
    X(FLOAT,  4,  float,              sizeof(float))    \
    X(CPLX,   5,  float,              2 * sizeof(float))    \
    X(DOUBLE, 6,  double,             sizeof(double))   \
    X(DCPLX,  7,  double,             2 * sizeof(double))   \
    X(LONG,   8,  long,               sizeof(long))     \
    X(USHORT, 9,  unsigned short,     sizeof(short))    \
    X(UINT,   10, unsigned int,       sizeof(int))      \
    X(ULONG,  11, unsigned long,      sizeof(long))

#define GIMPI_X_DT_ENUM(name, value, ctype, size) GIMPI_##name = value,
enum { GIMPI_DATATYPES(GIMPI_X_DT_ENUM) GIMPI_NDATATYPES };
#undef GIMPI_X_DT_ENUM

typedef enum { GIMPI_OP_MAX, GIMPI_OP_MIN, GIMPI_OP_SUM, GIMPI_OP_PRODUCT } gimpi_op_t;

/*  Bytes of one element of a datatype (a complex number is one element), 0 if unknown. */
size_t gimpi_datatype_size(int datatype);
/*  Name of a datatype ("PVM_INT"), or NULL if unknown. */
const char *gimpi_datatype_name(int datatype);

/*  x[i] = x[i] op y[i] for n elements.  Returns 0, or GIMPI_EBADPARAM for PVM_STR, an
 *  unknown datatype or n < 0. */
int gimpi_op_apply(gimpi_op_t op, int datatype, void *x, const void *y, int n);

#endif
