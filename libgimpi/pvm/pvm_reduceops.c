/*  pvm_reduceops.c — PVM's predefined reduce functions PvmMax, PvmMin, PvmSum and
 *  PvmProduct, callable directly (trsg.c does) and by pvm_reduce.  Thin wrappers over
 *  gimpi_op_apply: x[i] = x[i] op y[i] for *num elements; *info = 0, or PvmBadParam for
 *  a datatype the operators do not cover (PVM_STR, unknown).
 */
#include "pvm3.h"
#include "gimpi_ops.h"

#include <stddef.h>

/*  Applies op and reports through *info. */
static void s_apply(gimpi_op_t op, int *datatype, void *x, void *y, int *num, int *info)
{
    int rc = datatype && num ? gimpi_op_apply(op, *datatype, x, y, *num) : PvmBadParam;
    if (info)
        *info = rc < 0 ? PvmBadParam : PvmOk;
}

/*  x[i] = max(x[i], y[i]). */
void PvmMax(int *datatype, void *x, void *y, int *num, int *info)
{
    s_apply(GIMPI_OP_MAX, datatype, x, y, num, info);
}

/*  x[i] = min(x[i], y[i]). */
void PvmMin(int *datatype, void *x, void *y, int *num, int *info)
{
    s_apply(GIMPI_OP_MIN, datatype, x, y, num, info);
}

/*  x[i] = x[i] + y[i]. */
void PvmSum(int *datatype, void *x, void *y, int *num, int *info)
{
    s_apply(GIMPI_OP_SUM, datatype, x, y, num, info);
}

/*  x[i] = x[i] * y[i]. */
void PvmProduct(int *datatype, void *x, void *y, int *num, int *info)
{
    s_apply(GIMPI_OP_PRODUCT, datatype, x, y, num, info);
}
