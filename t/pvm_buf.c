/*  t/pvm_buf.c — tests of PVM message buffers: every datatype through every encoding with
 *  strides, 64-bit longs sign-correct in the default encoding, the portable byte layout,
 *  strings, InPlace's send-time copy, memory kept from one buffer for the next, unpacking
 *  past the end, bad arguments.
 */
#include "gtap.h"
#include "gimpi.h"
#include "gimpi_ops.h"
#include "pvm/pvm_buf.h"

#include <string.h>

/*  Packs and unpacks every datatype in one encoding, strided; 1 if all came back. */
static int s_roundtrip(int enc)
{
    pvm_buf_t *b = pvm_buf_new(enc);
    signed char by[4] = { -1, 2, -3, 4 };
    short sh[4] = { -30000, 1, 2, 3 };
    int in[4] = { -2000000000, 1, 2, 3 };
    float fl[4] = { 1.5f, -2.5f, 3, 4 };
    float cx[4] = { 1, 2, 3, 4 };
    double db[4] = { 1e300, -2, 3, 4 };
    double dc[4] = { 1, -1, 2, -2 };
    long lo[4] = { -6, 5000000000L, -5000000000L, 7 };
    unsigned short us[4] = { 65535, 1, 2, 3 };
    unsigned int ui[4] = { 4000000000u, 1, 2, 3 };
    unsigned long ul[4] = { 18000000000000000000UL, 1, 2, 3 };
    int rc = 0;
    rc |= pvm_buf_pack(b, GIMPI_BYTE, by, 2, 2);
    rc |= pvm_buf_pack(b, GIMPI_SHORT, sh, 4, 1);
    rc |= pvm_buf_pack(b, GIMPI_INT, in, 4, 1);
    rc |= pvm_buf_pack(b, GIMPI_FLOAT, fl, 2, 2);
    rc |= pvm_buf_pack(b, GIMPI_CPLX, cx, 2, 1);
    rc |= pvm_buf_pack(b, GIMPI_DOUBLE, db, 4, 1);
    rc |= pvm_buf_pack(b, GIMPI_DCPLX, dc, 2, 1);
    rc |= pvm_buf_pack(b, GIMPI_LONG, lo, 4, 1);
    rc |= pvm_buf_pack(b, GIMPI_USHORT, us, 1, 1);
    rc |= pvm_buf_pack(b, GIMPI_UINT, ui, 1, 1);
    rc |= pvm_buf_pack(b, GIMPI_ULONG, ul, 1, 1);
    rc |= pvm_buf_pack_str(b, "hello, group");
    size_t len;
    const uint8_t *bytes = pvm_buf_bytes(b, &len);
    pvm_buf_t *r = pvm_buf_from_bytes(enc, bytes, len);
    signed char by2[4] = { 0 };
    short sh2[4]; int in2[4]; float fl2[4] = { 0 }; float cx2[4]; double db2[4]; double dc2[4];
    long lo2[4]; unsigned short us2[1]; unsigned int ui2[1]; unsigned long ul2[1];
    char str[64];
    rc |= pvm_buf_unpack(r, GIMPI_BYTE, by2, 2, 2);
    rc |= pvm_buf_unpack(r, GIMPI_SHORT, sh2, 4, 1);
    rc |= pvm_buf_unpack(r, GIMPI_INT, in2, 4, 1);
    rc |= pvm_buf_unpack(r, GIMPI_FLOAT, fl2, 2, 2);
    rc |= pvm_buf_unpack(r, GIMPI_CPLX, cx2, 2, 1);
    rc |= pvm_buf_unpack(r, GIMPI_DOUBLE, db2, 4, 1);
    rc |= pvm_buf_unpack(r, GIMPI_DCPLX, dc2, 2, 1);
    rc |= pvm_buf_unpack(r, GIMPI_LONG, lo2, 4, 1);
    rc |= pvm_buf_unpack(r, GIMPI_USHORT, us2, 1, 1);
    rc |= pvm_buf_unpack(r, GIMPI_UINT, ui2, 1, 1);
    rc |= pvm_buf_unpack(r, GIMPI_ULONG, ul2, 1, 1);
    rc |= pvm_buf_unpack_str(r, str, sizeof str);
    int good = rc == 0 && by2[0] == -1 && by2[2] == -3 && by2[1] == 0 &&
               !memcmp(sh, sh2, sizeof sh) && !memcmp(in, in2, sizeof in) &&
               fl2[0] == 1.5f && fl2[2] == 3 && fl2[1] == 0 && !memcmp(cx, cx2, sizeof cx) &&
               !memcmp(db, db2, sizeof db) && !memcmp(dc, dc2, sizeof dc) &&
               !memcmp(lo, lo2, sizeof lo) && us2[0] == 65535 && ui2[0] == 4000000000u &&
               ul2[0] == 18000000000000000000UL && !strcmp(str, "hello, group") &&
               pvm_buf_unpack(r, GIMPI_INT, in2, 1, 1) == GIMPI_ENODATA;
    pvm_buf_destroy(&b);
    pvm_buf_destroy(&r);
    return good;
}

/*  A pending body's take entry that just forgets it. */
static int s_take_none(void *impl, void *token, void *dst)
{
    (void)impl;
    (void)token;
    (void)dst;
    return 0;
}

int main(void)
{
    plan(NO_PLAN);
    ok(s_roundtrip(PVM_BUF_DEFAULT), "every datatype through PvmDataDefault, strided");
    ok(s_roundtrip(PVM_BUF_RAW), "every datatype through PvmDataRaw, strided");
    ok(s_roundtrip(PVM_BUF_INPLACE), "every datatype through PvmDataInPlace, strided");

    pvm_buf_t *b = pvm_buf_new(PVM_BUF_DEFAULT);
    int v = 0x01020304;
    long l = -6;
    pvm_buf_pack(b, GIMPI_INT, &v, 1, 1);
    pvm_buf_pack(b, GIMPI_LONG, &l, 1, 1);
    size_t len;
    const uint8_t *p = pvm_buf_bytes(b, &len);
    static const uint8_t want[12] = { 1, 2, 3, 4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfa };
    ok(len == 12 && !memcmp(p, want, 12), "default encoding: big-endian int, 8-byte long");
    pvm_buf_destroy(&b);
    ok(b == NULL, "destroy nulls the pointer");

    /* memory kept from one buffer for the next: packed into in place, no realloc */
    b = pvm_buf_new(PVM_BUF_DEFAULT);
    static uint8_t big[1 << 20];
    memset(big, 'A', sizeof big);
    pvm_buf_pack(b, GIMPI_BYTE, big, (int)sizeof big, 1);
    void *mem;
    size_t msize;
    pvm_buf_destroy_keep(&b, &mem, &msize);
    ok(b == NULL && mem && msize >= sizeof big + PVM_BUF_HEADROOM,
       "destroy_keep hands the memory over (%zu bytes)", msize);
    b = pvm_buf_new_in(PVM_BUF_RAW, mem, msize);
    memset(big, 'C', sizeof big);
    pvm_buf_pack(b, GIMPI_BYTE, big, 8, 1);
    pvm_buf_pack(b, GIMPI_BYTE, big, (int)sizeof big - 8, 1);
    p = pvm_buf_bytes(b, &len);
    ok(p == (uint8_t *)mem + PVM_BUF_HEADROOM && len == sizeof big && p[0] == 'C'
           && p[len - 1] == 'C', "a buffer made in it packs 1 MiB there, with no new memory");
    ok(pvm_buf_new_in(9, mem, msize) == NULL, "... unknown encoding: NULL, memory untouched");
    pvm_buf_destroy(&b);
    b = pvm_buf_pending(PVM_BUF_RAW, 4, s_take_none, NULL, &v);
    pvm_buf_destroy_keep(&b, &mem, &msize);
    ok(b == NULL && mem == NULL && msize == 0, "a buffer with a body still pending keeps none");
    b = pvm_buf_new_in(PVM_BUF_DEFAULT, NULL, 0);
    ok(b && pvm_buf_len(b) == 0, "no memory given: an ordinary empty buffer");
    pvm_buf_destroy(&b);

    b = pvm_buf_new(PVM_BUF_INPLACE);
    int arr[3] = { 1, 2, 3 };
    pvm_buf_pack(b, GIMPI_INT, arr, 3, 1);
    arr[1] = 42;                        /* changed after the pack, before the send */
    p = pvm_buf_bytes(b, &len);
    pvm_buf_t *r = pvm_buf_from_bytes(PVM_BUF_INPLACE, p, len);
    int got[3];
    ok(pvm_buf_unpack(r, GIMPI_INT, got, 3, 1) == 0 && got[1] == 42,
       "InPlace sends the data as it is at send time");
    ok(pvm_buf_encoding(r) == PVM_BUF_RAW, "InPlace arrives as raw");
    pvm_buf_destroy(&b);
    pvm_buf_destroy(&r);

    b = pvm_buf_new(PVM_BUF_RAW);
    cmp_ok(pvm_buf_pack(b, GIMPI_STR, "x", 1, 1), "==", GIMPI_EBADPARAM, "PVM_STR is packed with pkstr");
    cmp_ok(pvm_buf_pack(b, GIMPI_INT, arr, 1, 0), "==", GIMPI_EBADPARAM, "stride 0 refused");
    cmp_ok(pvm_buf_pack(b, GIMPI_INT, NULL, 1, 1), "==", GIMPI_EBADPARAM, "NULL data refused");
    cmp_ok(pvm_buf_pack(b, 99, arr, 1, 1), "==", GIMPI_EBADPARAM, "unknown type refused");
    cmp_ok(pvm_buf_pack_str(b, NULL), "==", GIMPI_EBADPARAM, "NULL string refused");
    pvm_buf_pack(b, GIMPI_INT, arr, 1, 1);
    char s[8];
    cmp_ok(pvm_buf_unpack_str(b, s, sizeof s), "==", GIMPI_ENODATA, "int is not a string");
    pvm_buf_rewind(b);
    double dd;
    cmp_ok(pvm_buf_unpack(b, GIMPI_DOUBLE, &dd, 1, 1), "==", GIMPI_ENODATA, "past the end: ENODATA");
    ok(pvm_buf_unpack(b, GIMPI_INT, got, 1, 1) == 0 && got[0] == 1, "a failed unpack consumes nothing");
    pvm_buf_destroy(&b);
    ok(pvm_buf_new(7) == NULL, "unknown encoding refused");

    b = pvm_buf_new(PVM_BUF_DEFAULT);
    pvm_buf_pack_str(b, "a long string");
    p = pvm_buf_bytes(b, &len);
    r = pvm_buf_from_bytes(PVM_BUF_DEFAULT, p, len);
    ok(pvm_buf_unpack_str(r, s, 4) == 0 && !strcmp(s, "a l"), "a bounded string unpack truncates safely");
    pvm_buf_destroy(&r);
    uint8_t bad[6] = { 0, 0, 0, 2, 'a', 'b' };
    r = pvm_buf_from_bytes(PVM_BUF_DEFAULT, bad, sizeof bad);
    cmp_ok(pvm_buf_unpack_str(r, s, sizeof s), "==", GIMPI_EBADMSG, "unterminated string refused");
    pvm_buf_destroy(&r);
    pvm_buf_destroy(&b);

    /* an empty received message (no bytes at all): unpacking 0 elements is fine, 1 is not */
    r = pvm_buf_new(PVM_BUF_RAW);
    double dz = 7;
    cmp_ok(pvm_buf_unpack(r, GIMPI_DOUBLE, &dz, 0, 1), "==", 0, "unpack 0 of an empty message");
    cmp_ok(pvm_buf_unpack(r, GIMPI_DOUBLE, &dz, 1, 1), "==", GIMPI_ENODATA, "... 1 is PvmNoData");
    ok(dz == 7, "... and nothing was written");
    pvm_buf_destroy(&r);

    /* one InPlace segment is sent from the caller's memory, no gathering copy */
    int ipv[4] = { 1, 2, 3, 4 };
    b = pvm_buf_new(PVM_BUF_INPLACE);
    pvm_buf_pack(b, GIMPI_INT, ipv, 4, 1);
    ok(pvm_buf_send_bytes(b, &len) == (const uint8_t *)ipv && len == sizeof ipv,
       "a one-segment InPlace buffer sends the caller's memory");
    pvm_buf_pack(b, GIMPI_INT, ipv, 2, 1);
    p = pvm_buf_send_bytes(b, &len);
    ok(p != (const uint8_t *)ipv && len == 6 * sizeof(int) && !memcmp(p + 16, ipv, 8),
       "two segments are gathered");
    pvm_buf_destroy(&b);
    done_testing();
}
