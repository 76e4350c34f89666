/*  t/pvm_minfo.c — a message as a whole, on the loopback transport: pvm_getminfo's fields
 *  for send and received buffers (PVM's encoding signatures), pvm_setminfo and what a
 *  send sets anew, pvm_getmwid/pvm_setmwid, pvm_pkmesg + pvm_upkmesg round trips (header
 *  and body, after a send), pvm_pkmesgbody (PvmMismatch across encodings), every error
 *  code of these calls, and pvm_recvf: the default matcher returned first and usable, a
 *  custom one picking the largest tag for pvm_recv, nrecv, probe and precv, errors from
 *  a matcher, and the default restored; and the transport header of a base-context
 *  message, byte for byte as before contexts existed.
 */
#include "gtap.h"
#include "gimpi.h"
#include "pvmtest.h"
#include "pvm/pvm_header.h"

#define ME PVMTEST_TID

/*  Sends one int to ourselves with tag. */
static void s_send_int(int v, int tag)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    pvm_send(ME, tag);
}

/*  A matcher that prefers the largest tag (the rating is the tag + 1, 1 never given). */
static int s_largest(int mid, int tid, int tag)
{
    int t, bytes, src;
    (void)tid;
    (void)tag;
    if (pvm_bufinfo(mid, &bytes, &t, &src) < 0)
        return PvmNoSuchBuf;
    return t + 2;
}

/*  A matcher that fails. */
static int s_broken(int mid, int tid, int tag)
{
    (void)mid; (void)tid; (void)tag;
    return PvmBadMsg;
}

/*  getminfo, setminfo, mwid. */
static void s_check_minfo(void)
{
    struct pvmminfo mi;
    int sb = pvm_initsend(PvmDataDefault);
    int v[3] = { 1, 2, 3 };
    pvm_pkint(v, 3, 1);
    cmp_ok(pvm_getminfo(sb, &mi), "==", 0, "pvm_getminfo of a send buffer");
    ok(mi.len == 12 && mi.ctx == 0 && mi.tag == 0 && mi.wid == 0 && mi.crc == 0
       && mi.src == ME && mi.dst == 0, "... len 12, ctx/tag/wid/crc/dst 0, src = me (as PVM)");
    cmp_ok(mi.enc, "==", 0x10000000, "... PvmDataDefault's signature 0x10000000");
    mi.wid = 77; mi.tag = 99; mi.ctx = 5; mi.src = 3; mi.dst = 4;
    cmp_ok(pvm_setminfo(sb, &mi), "==", 0, "pvm_setminfo");
    struct pvmminfo m2;
    pvm_getminfo(sb, &m2);
    ok(m2.wid == 77 && m2.tag == 99 && m2.ctx == 5 && m2.src == 3 && m2.dst == 4,
       "... sets wid, tag, ctx, src, dst");
    cmp_ok(pvm_getmwid(sb), "==", 77, "pvm_getmwid reads the wait id");
    cmp_ok(pvm_setmwid(sb, 12), "==", 0, "pvm_setmwid");
    cmp_ok(pvm_getmwid(sb), "==", 12, "... sets it");
    pvm_send(ME, 8);
    int rb = pvm_recv(-1, 8);
    cmp_ok(pvm_getminfo(rb, &mi), "==", 0, "pvm_getminfo of the received message");
    ok(mi.len == 12 && mi.ctx == 0 && mi.tag == 8 && mi.src == ME && mi.dst == ME
       && mi.enc == 0x10000000, "... the send set ctx, tag, src and dst anew, as PVM's");
    pvm_initsend(PvmDataRaw);
    pvm_getminfo(pvm_getsbuf(), &mi);
    cmp_ok(mi.enc, "==", 0x408c41, "PvmDataRaw's signature is PVM's LINUX64 one");
    pvm_initsend(PvmDataInPlace);
    pvm_getminfo(pvm_getsbuf(), &mi);
    cmp_ok(mi.enc, "==", 0x20000000, "PvmDataInPlace's is 0x20000000");
    cmp_ok(pvm_getminfo(0, &mi), "==", PvmBadParam, "pvm_getminfo(0) is PvmBadParam");
    cmp_ok(pvm_getminfo(-1, &mi), "==", PvmBadParam, "... so is -1");
    cmp_ok(pvm_getminfo(999, &mi), "==", PvmNoSuchBuf, "... an unknown id is PvmNoSuchBuf");
    cmp_ok(pvm_getminfo(rb, NULL), "==", PvmBadParam, "... NULL info is PvmBadParam");
    cmp_ok(pvm_setminfo(999, &mi), "==", PvmNoSuchBuf, "pvm_setminfo of an unknown id: PvmNoSuchBuf");
    cmp_ok(pvm_setminfo(0, &mi), "==", PvmBadParam, "... of 0: PvmBadParam");
    cmp_ok(pvm_getmwid(-1), "==", PvmBadParam, "pvm_getmwid(-1) is PvmBadParam");
    cmp_ok(pvm_getmwid(0), "==", PvmNoSuchBuf, "pvm_getmwid(0) is PvmNoSuchBuf (as PVM 3.3)");
    cmp_ok(pvm_setmwid(999, 1), "==", PvmNoSuchBuf, "pvm_setmwid of an unknown id: PvmNoSuchBuf");
}

/*  pkmesg, pkmesgbody, upkmesg. */
static void s_check_pkmesg(void)
{
    s_send_int(42, 13);
    int rb = pvm_recv(-1, 13);
    pvm_initsend(PvmDataDefault);
    cmp_ok(pvm_pkmesg(rb), "==", 0, "pvm_pkmesg packs a received message");
    cmp_ok(pvm_pkmesgbody(rb), "==", 0, "pvm_pkmesgbody its body (same encoding)");
    struct pvmminfo mi;
    pvm_getminfo(pvm_getsbuf(), &mi);
    cmp_ok(mi.len, "==", 8 * 4 + 4 + 4 + 4, "... header (8 ints), fragment length, body, body again");
    pvm_send(ME, 14);
    pvm_recv(-1, 14);
    int um = pvm_upkmesg();
    cmp_ok(um, ">", 0, "pvm_upkmesg makes a new buffer");
    cmp_ok(pvm_getminfo(um, &mi), "==", 0, "... with a header");
    ok(mi.len == 4 && mi.tag == 13 && mi.src == ME && mi.dst == ME && mi.ctx == 0
       && mi.enc == 0x10000000, "... the packed message's (len 4, tag 13, src, dst, enc)");
    ok(pvm_getrbuf() != um, "... not made active");
    int rest = 0;
    ok(pvm_upkint(&rest, 1, 1) == 0 && rest == 42, "the body packed after it is still there");
    cmp_ok(pvm_upkmesg(), "==", PvmNoData, "another pvm_upkmesg finds nothing: PvmNoData");
    pvm_setrbuf(um);
    int x = 0;
    ok(pvm_upkint(&x, 1, 1) == 0 && x == 42, "the unpacked message unpacks as the original");
    /* raw into raw, raw into default */
    pvm_initsend(PvmDataRaw);
    int y = 7;
    pvm_pkint(&y, 1, 1);
    pvm_send(ME, 15);
    int raw = pvm_recv(-1, 15);
    pvm_initsend(PvmDataDefault);
    cmp_ok(pvm_pkmesgbody(raw), "==", PvmMismatch, "pvm_pkmesgbody of a raw message into Default: "
       "PvmMismatch");
    cmp_ok(pvm_pkmesg(raw), "==", 0, "pvm_pkmesg packs it anyway (its header says raw)");
    pvm_send(ME, 16);
    pvm_recv(-1, 16);
    um = pvm_upkmesg();
    pvm_getminfo(um, &mi);
    pvm_setrbuf(um);
    x = 0;
    ok(mi.enc == 0x408c41 && pvm_upkint(&x, 1, 1) == 0 && x == 7,
       "... and it comes back raw, readable");
    /* errors */
    int sb = pvm_initsend(PvmDataDefault);
    cmp_ok(pvm_pkmesg(0), "==", PvmBadParam, "pvm_pkmesg(0): PvmBadParam");
    cmp_ok(pvm_pkmesg(999), "==", PvmNoSuchBuf, "pvm_pkmesg(unknown): PvmNoSuchBuf");
    cmp_ok(pvm_pkmesg(sb), "==", PvmBadParam, "pvm_pkmesg of the send buffer itself: PvmBadParam");
    cmp_ok(pvm_pkmesgbody(sb), "==", PvmBadParam, "... pvm_pkmesgbody too");
    pvm_setsbuf(0);
    cmp_ok(pvm_pkmesg(um), "==", PvmNoBuf, "no send buffer: PvmNoBuf");
    pvm_freebuf(sb);
    pvm_setrbuf(0);
    cmp_ok(pvm_upkmesg(), "==", PvmNoBuf, "pvm_upkmesg with no receive buffer: PvmNoBuf");
    pvm_initsend(PvmDataInPlace);
    cmp_ok(pvm_pkmesg(um), "==", PvmNotImpl, "into an InPlace send buffer: PvmNotImpl (gimpi)");
    s_send_int(5, 17);
    pvm_recv(-1, 17);
    cmp_ok(pvm_upkmesg(), "==", PvmNoData, "pvm_upkmesg of a message that holds none: PvmNoData");
}

/*  recvf. */
static void s_check_recvf(void)
{
    int (*def)(int, int, int) = pvm_recvf(s_largest);
    ok(def != NULL, "pvm_recvf returns PVM's default matcher first");
    s_send_int(1, 3);
    s_send_int(2, 20);
    s_send_int(3, 12);
    /* the loopback hands them over at once: the largest tag of the queue wins */
    int b = pvm_probe(-1, -1);
    int bytes, tag = -1, src;
    pvm_bufinfo(b, &bytes, &tag, &src);
    cmp_ok(tag, "==", 20, "pvm_probe with a custom matcher: the largest tag");
    b = pvm_recv(-1, -1);
    pvm_bufinfo(b, &bytes, &tag, &src);
    cmp_ok(tag, "==", 20, "pvm_recv: the largest tag");
    b = pvm_nrecv(-1, -1);
    pvm_bufinfo(b, &bytes, &tag, &src);
    cmp_ok(tag, "==", 12, "pvm_nrecv: the largest left");
    int got = 0;
    cmp_ok(pvm_precv(-1, -1, &got, 1, PVM_INT, NULL, &tag, NULL), "==", 0, "pvm_precv");
    cmp_ok(tag, "==", 3, "... takes the last");
    ok(pvm_recvf(s_broken) == s_largest, "pvm_recvf returns the previous matcher");
    s_send_int(4, 5);
    cmp_ok(pvm_nrecv(-1, -1), "==", PvmBadMsg, "a matcher's error is the receive's");
    ok(pvm_recvf(def) == s_broken, "restore the default");
    cmp_ok(def(999, -1, -1), "==", PvmNoSuchBuf, "the default matcher on an unknown id: PvmNoSuchBuf");
    b = pvm_probe(-1, 5);
    cmp_ok(def(b, -1, 5), "==", 1, "... on a match: 1");
    cmp_ok(def(b, -1, 6), "==", 0, "... on another tag: 0");
    int c = pvm_setcontext(4444);
    cmp_ok(def(b, -1, 5), "==", 0, "... in another context: 0");
    pvm_setcontext(-1);
    cmp_ok(def(b, -1, 5), "==", 1, "... with context -1: 1 (PVM's wildcard)");
    pvm_setcontext(c);
    s_send_int(6, 2);
    b = pvm_recv(-1, -1);
    pvm_bufinfo(b, &bytes, &tag, &src);
    cmp_ok(tag, "==", 5, "restored: oldest first again");
    ok(pvm_recvf(NULL) == def, "pvm_recvf(NULL) returns the default and keeps it");
    ok(pvm_recvf(NULL) == def, "... again");
    pvm_freebuf(pvm_recv(-1, -1));
}

/*  The wire: PvmBaseContext traffic keeps the header it always had. */
static void s_check_wire(void)
{
    uint8_t h[PVM_HDR_SIZE];
    pvm_header_put(h, PVM_BUF_DEFAULT, 0, PvmBaseContext, 4);
    static const uint8_t before[PVM_HDR_SIZE] = { 'P', 1, 0, 0, 0, 0, 0, 0,
                                                  0, 0, 0, 0, 0, 0, 0, 4 };
    ok(memcmp(h, before, sizeof h) == 0, "a base-context header is the pre-context bytes");
    pvm_header_put(h, PVM_BUF_RAW, PVM_HDR_BODY_FOLLOWS, 0x12345678, 70000);
    int enc, flags, cx, wid;
    uint64_t len;
    ok(h[4] == 0x12 && h[7] == 0x78
       && pvm_header_get(h, PVM_HDR_SIZE, &enc, &flags, &cx, &len, &wid) == PVM_HDR_SIZE
       && cx == 0x12345678 && len == 70000 && enc == PVM_BUF_RAW && wid == 0,
       "another context travels in bytes 4-7, big-endian, and decodes back");
    pvm_header_put(h, PVM_BUF_DEFAULT, PVM_HDR_BODY_FOLLOWS, -1, 1);
    ok(pvm_header_get(h, PVM_HDR_SIZE, &enc, &flags, &cx, &len, &wid) == PVM_HDR_SIZE
       && cx == -1, "... context -1 too");
    uint8_t w[PVM_HDR_SIZE + PVM_HDR_WID_SIZE + 2];
    pvm_header_put(w, PVM_BUF_DEFAULT, PVM_HDR_WID, 0, 2);
    pvm_header_put_wid(w, 77);
    ok(pvm_header_get(w, sizeof w, &enc, &flags, &cx, &len, &wid)
       == PVM_HDR_SIZE + PVM_HDR_WID_SIZE && wid == 77 && len == 2,
       "a wait id follows the 16 bytes only when flag 4 says so");
    ok(pvm_header_get(w, sizeof w - 1, &enc, &flags, &cx, &len, &wid) == PvmBadMsg,
       "... and a message one byte short is PvmBadMsg");
}

int main(void)
{
    plan(NO_PLAN);
    pvmtest_setup(ME, 0);
    s_check_minfo();
    s_check_pkmesg();
    s_check_recvf();
    s_check_wire();
    pvm_ctx_install(NULL);
    done_testing();
}
