/*  t/gimpi_ops.c — tests of the reduction operators against plain serial computation:
 *  every datatype and op, 64-bit long beyond 2^32 and negative, wrap-around without
 *  undefined behaviour, complex modulus comparison and multiplication, bad parameters.
 */
#include "gtap.h"
#include "gimpi.h"
#include "gimpi_ops.h"

#include <limits.h>
#include <string.h>

int main(void)
{
    plan(NO_PLAN);
    int xi[3] = { 1, -5, 7 }, yi[3] = { 2, -9, 7 };
    gimpi_op_apply(GIMPI_OP_SUM, GIMPI_INT, xi, yi, 3);
    ok(xi[0] == 3 && xi[1] == -14 && xi[2] == 14, "int sum");
    gimpi_op_apply(GIMPI_OP_MAX, GIMPI_INT, xi, yi, 3);
    ok(xi[0] == 3 && xi[1] == -9 && xi[2] == 14, "int max");
    gimpi_op_apply(GIMPI_OP_MIN, GIMPI_INT, xi, yi, 3);
    ok(xi[0] == 2 && xi[1] == -9 && xi[2] == 7, "int min");
    gimpi_op_apply(GIMPI_OP_PRODUCT, GIMPI_INT, xi, yi, 3);
    ok(xi[0] == 4 && xi[1] == 81 && xi[2] == 49, "int product");

    long xl[2] = { -3, 5000000000L }, yl[2] = { -6, 5000000000L };
    gimpi_op_apply(GIMPI_OP_SUM, GIMPI_LONG, xl, yl, 2);
    ok(xl[0] == -9 && xl[1] == 10000000000L, "long sum: negative and beyond 2^32");
    long ml[1] = { -4294967290L }, nl[1] = { -6 };
    gimpi_op_apply(GIMPI_OP_MAX, GIMPI_LONG, ml, nl, 1);
    ok(ml[0] == -6, "long max keeps the sign");

    int big[1] = { INT_MAX }, one[1] = { 1 };
    gimpi_op_apply(GIMPI_OP_SUM, GIMPI_INT, big, one, 1);
    ok(big[0] == INT_MIN, "int overflow wraps (no UB)");

    signed char b[2] = { 100, -3 }, c[2] = { 27, 4 };
    ok(gimpi_op_apply(GIMPI_OP_SUM, GIMPI_BYTE, b, c, 2) == 0 && b[0] == 127 && b[1] == 1,
       "byte sum (PVM refuses it)");
    unsigned short usp[1] = { 65535 }, usq[1] = { 65535 };
    gimpi_op_apply(GIMPI_OP_PRODUCT, GIMPI_USHORT, usp, usq, 1);
    ok(usp[0] == 1, "unsigned short product wraps (no int overflow)");
    unsigned short us[1] = { 65535 }, us1[1] = { 2 };
    gimpi_op_apply(GIMPI_OP_SUM, GIMPI_USHORT, us, us1, 1);
    ok(us[0] == 1, "unsigned short sum wraps");
    unsigned long ul[1] = { 1UL << 40 }, ul2[1] = { 3 };
    gimpi_op_apply(GIMPI_OP_PRODUCT, GIMPI_ULONG, ul, ul2, 1);
    ok(ul[0] == 3UL << 40, "unsigned long product");
    unsigned int ui[1] = { 4000000000u }, ui2[1] = { 5 };
    gimpi_op_apply(GIMPI_OP_MIN, GIMPI_UINT, ui, ui2, 1);
    ok(ui[0] == 5, "unsigned int min");
    short s[1] = { -7 }, s2[1] = { 3 };
    gimpi_op_apply(GIMPI_OP_MIN, GIMPI_SHORT, s, s2, 1);
    ok(s[0] == -7, "short min");

    double d[2] = { 1.5, -2 }, e[2] = { 2.25, 8 };
    gimpi_op_apply(GIMPI_OP_SUM, GIMPI_DOUBLE, d, e, 2);
    ok(d[0] == 3.75 && d[1] == 6, "double sum");
    float f[1] = { 2.5f }, g[1] = { -4 };
    gimpi_op_apply(GIMPI_OP_PRODUCT, GIMPI_FLOAT, f, g, 1);
    ok(f[0] == -10.0f, "float product");

    float z[2] = { 1, 2 }, w[2] = { 3, -1 };          /* (1+2i)(3-i) = 5+5i */
    gimpi_op_apply(GIMPI_OP_PRODUCT, GIMPI_CPLX, z, w, 1);
    ok(z[0] == 5 && z[1] == 5, "complex product");
    double dz[2] = { 3, 4 }, dw[2] = { 0, 6 };        /* |3+4i| = 5 < |6i| */
    gimpi_op_apply(GIMPI_OP_MAX, GIMPI_DCPLX, dz, dw, 1);
    ok(dz[0] == 0 && dz[1] == 6, "dcomplex max by modulus");
    gimpi_op_apply(GIMPI_OP_MIN, GIMPI_DCPLX, dz, (double[]){ 1, 1 }, 1);
    ok(dz[0] == 1 && dz[1] == 1, "dcomplex min by modulus");
    gimpi_op_apply(GIMPI_OP_SUM, GIMPI_DCPLX, dz, (double[]){ 1, -3 }, 1);
    ok(dz[0] == 2 && dz[1] == -2, "dcomplex sum");

    char str[2] = "a";
    cmp_ok(gimpi_op_apply(GIMPI_OP_SUM, GIMPI_STR, str, str, 1), "==", GIMPI_EBADPARAM, "PVM_STR refused");
    cmp_ok(gimpi_op_apply(GIMPI_OP_SUM, 12, xi, yi, 1), "==", GIMPI_EBADPARAM, "unknown type refused");
    cmp_ok(gimpi_op_apply(GIMPI_OP_SUM, GIMPI_INT, xi, yi, -1), "==", GIMPI_EBADPARAM, "negative count");
    cmp_ok(gimpi_datatype_size(GIMPI_DCPLX), "==", 16, "dcplx element is 16 bytes");
    is(gimpi_datatype_name(GIMPI_LONG), "PVM_LONG", "datatype names");
    done_testing();
}
