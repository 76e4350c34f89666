/*  t/pvm_msg.c — the PVM message calls on the loopback transport: send keeps its
 *  buffer, mcast (skips itself, rejects any bad tid), recv wildcards and the order of
 *  matching, nrecv, trecv's timeout, probe (same id as the later recv), the previous
 *  receive buffer being freed, bufinfo of received messages, psend <-> recv + upk and
 *  pack + send <-> precv, buffers packed in a freed buffer's memory, and every error path.
 */
#include "gtap.h"
#include "gimpi.h"
#include "pvmtest.h"

#include <string.h>
#include <time.h>

#define ME PVMTEST_TID

/*  Sends one int `v` with `tag` to ourselves in a fresh Default buffer. */
static void s_send_int(int v, int tag)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    pvm_send(ME, tag);
}

/*  The int in the active receive buffer (-999 if none). */
static int s_upk_int(void)
{
    int v = -999;
    pvm_upkint(&v, 1, 1);
    return v;
}

/*  Milliseconds on the monotonic clock. */
static long long s_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*  A call for the capture test. */
static int s_call_send_bad(void *arg) { (void)arg; return pvm_send(0, 1); }

/*  pvm_send keeps its buffer and can resend it; receives take the oldest fitting message. */
static void s_check_send_order(void)
{
    /* send keeps the buffer and can resend it */
    int sb = pvm_initsend(PvmDataDefault);
    int v = 7;
    pvm_pkint(&v, 1, 1);
    cmp_ok(pvm_send(ME, 1), "==", 0, "send");
    cmp_ok(pvm_getsbuf(), "==", sb, "the send buffer stays active");
    cmp_ok(pvm_send(ME, 2), "==", 0, "and can be resent");
    cmp_ok(pvm_recv(ME, 2), ">", 0, "recv by tid and tag");
    cmp_ok(s_upk_int(), "==", 7, "resent content");
    cmp_ok(pvm_recv(-1, -1), ">", 0, "recv with two wildcards");
    cmp_ok(s_upk_int(), "==", 7, "first content");

    /* order of matching: oldest match first, non-matching ones stay */
    s_send_int(1, 10);
    s_send_int(2, 11);
    s_send_int(3, 10);
    s_send_int(4, 12);
    cmp_ok(pvm_recv(-1, 11), ">", 0, "recv tag 11 skips an older tag 10");
    cmp_ok(s_upk_int(), "==", 2, "... gets the tag 11 message");
    cmp_ok(pvm_recv(ME, -1), ">", 0, "recv(me, -1)");
    cmp_ok(s_upk_int(), "==", 1, "... gets the oldest left (1)");
    cmp_ok(pvm_recv(-1, 10), ">", 0, "recv(-1, 10)");
    cmp_ok(s_upk_int(), "==", 3, "... the second tag 10 (3)");
    cmp_ok(pvm_nrecv(0x40002, -1), "==", 0, "nothing from another tid");
    cmp_ok(pvm_recv(-1, -1), ">", 0, "the last one");
    cmp_ok(s_upk_int(), "==", 4, "... is 4");
}

/*  pvm_nrecv (0 when nothing, frees the previous receive buffer) and trecv's timeout. */
static void s_check_nrecv_trecv(void)
{
    /* nrecv returns 0 when nothing, and frees the previous receive buffer */
    int r = pvm_getrbuf();
    cmp_ok(r, ">", 0, "there is an active receive buffer");
    cmp_ok(pvm_nrecv(-1, -1), "==", 0, "nrecv with nothing queued: 0");
    cmp_ok(pvm_getrbuf(), "==", 0, "... and the previous receive buffer is gone (as PVM)");
    cmp_ok(pvm_bufinfo(r, NULL, NULL, NULL), "==", PvmNoSuchBuf, "... freed");
    s_send_int(5, 20);
    int r1 = pvm_nrecv(-1, 20);
    cmp_ok(r1, ">", 0, "nrecv takes a queued message");
    cmp_ok(pvm_getrbuf(), "==", r1, "... which becomes the receive buffer");
    s_send_int(6, 21);
    int bytes, tag = -1, tid;
    int r2 = pvm_recv(-1, 21);
    ok(pvm_bufinfo(r1, NULL, &tag, NULL) == PvmNoSuchBuf || (r1 == r2 && tag == 21),
       "a new recv frees the previous receive buffer (its id may be reused)");
    cmp_ok(pvm_bufinfo(r2, &bytes, &tag, &tid), "==", 0, "bufinfo of a received message");
    ok(bytes == 4 && tag == 21 && tid == ME, "... 4 bytes, tag 21, from us");

    /* trecv */
    struct timeval tv = { 0, 300000 };
    long long t0 = s_ms();
    cmp_ok(pvm_trecv(-1, 99, &tv), "==", 0, "trecv with nothing: 0 after the timeout");
    long long took = s_ms() - t0;
    ok(took >= 290 && took < 20000, "... it waited the timeout (%lld ms)", took);
    struct timeval zero = { 0, 0 };
    cmp_ok(pvm_trecv(-1, 99, &zero), "==", 0, "trecv with a zero timeout polls");
    s_send_int(8, 22);
    int r3 = pvm_trecv(-1, 22, &tv);
    cmp_ok(r3, ">", 0, "trecv takes a queued message");
    cmp_ok(s_upk_int(), "==", 8, "... content");
    struct timeval neg = { -1, 0 };
    cmp_ok(pvm_trecv(-1, 22, &neg), "==", PvmBadParam, "negative timeout: PvmBadParam");
    cmp_ok(pvm_trecv(-1, 22, NULL), "==", PvmSysErr,
           "trecv(NULL) with nothing possible on the loopback fails instead of hanging");
    cmp_ok(pvm_recv(-1, 99), "==", PvmSysErr, "so does recv");
}

/*  pvm_probe gives the id the later recv returns, and keeps arrival order. */
static void s_check_probe(void)
{
    int bytes, tag, tid;
    /* probe */
    cmp_ok(pvm_probe(-1, 30), "==", 0, "probe with nothing: 0");
    s_send_int(9, 30);
    s_send_int(10, 31);
    int p = pvm_probe(-1, 31);
    cmp_ok(p, ">", 0, "probe finds the message");
    cmp_ok(pvm_getrbuf(), "==", 0, "probe does not change the receive buffer");
    cmp_ok(pvm_bufinfo(p, &bytes, &tag, &tid), "==", 0, "bufinfo of a probed message");
    ok(tag == 31 && tid == ME && bytes == 4, "... tag 31 from us");
    cmp_ok(pvm_probe(-1, 31), "==", p, "probing again gives the same id");
    cmp_ok(pvm_recv(-1, -1), "!=", p, "a wildcard recv still takes the OLDER message first");
    cmp_ok(s_upk_int(), "==", 9, "... the tag 30 one");
    cmp_ok(pvm_recv(-1, 31), "==", p, "recv returns the probed id");
    cmp_ok(s_upk_int(), "==", 10, "... with its content");
}

/*  pvm_mcast (skips the caller, rejects a bad tid) and the error paths of send and recv. */
static void s_check_mcast_errors(pvm_loopback_t *lb)
{
    /* mcast */
    s_send_int(11, 0);
    pvm_recv(-1, 0);
    int dropped = pvm_loopback_dropped(lb);
    int tids[3] = { ME, 0x40002, 0x40003 };
    pvm_initsend(PvmDataDefault);
    int v = 12;
    pvm_pkint(&v, 1, 1);
    cmp_ok(pvm_mcast(tids, 3, 40), "==", 0, "mcast to 3 tids");
    cmp_ok(pvm_loopback_dropped(lb) - dropped, "==", 2, "... two went to the others");
    ok(pvm_loopback_dropped_dst(lb, dropped) == 0x40002
       && pvm_loopback_dropped_dst(lb, dropped + 1) == 0x40003, "... in list order");
    cmp_ok(pvm_nrecv(-1, 40), "==", 0, "... and none to the caller (as PVM)");
    int badtids[3] = { 0x40002, -4, 0x40003 };
    dropped = pvm_loopback_dropped(lb);
    cmp_ok(pvm_mcast(badtids, 3, 40), "==", PvmBadParam, "mcast with a bad tid: PvmBadParam");
    cmp_ok(pvm_loopback_dropped(lb), "==", dropped, "... and nothing was sent");
    cmp_ok(pvm_mcast(tids, 0, 40), "==", 0, "mcast to nobody: 0");
    cmp_ok(pvm_mcast(tids, -1, 40), "==", PvmBadParam, "mcast n < 0: PvmBadParam");
    cmp_ok(pvm_mcast(tids, 1, -2), "==", PvmBadParam, "mcast tag < 0: PvmBadParam");
    cmp_ok(pvm_mcast(NULL, 2, 1), "==", PvmBadParam, "mcast NULL list: PvmBadParam");

    /* send errors */
    cmp_ok(pvm_send(0, 1), "==", PvmBadParam, "send to tid 0: PvmBadParam");
    cmp_ok(pvm_send(-5, 1), "==", PvmBadParam, "send to tid -5: PvmBadParam");
    cmp_ok(pvm_send(ME, -1), "==", PvmBadParam, "send tag -1: PvmBadParam");
    cmp_ok(pvm_send(0x7777777, 1), "==", 0, "send to a tid nobody has: 0 (as PVM)");
    pvm_loopback_fail_sends(lb, PvmSysErr);
    cmp_ok(pvm_send(ME, 1), "==", PvmSysErr, "a transport failure comes back");
    cmp_ok(pvm_mcast(tids + 1, 2, 1), "==", PvmSysErr, "... through mcast too");
    pvm_loopback_fail_sends(lb, 0);
    pvm_setsbuf(0);
    cmp_ok(pvm_send(ME, 1), "==", PvmNoBuf, "send with no send buffer: PvmNoBuf");
    cmp_ok(pvm_mcast(tids, 2, 1), "==", PvmNoBuf, "mcast with no send buffer: PvmNoBuf");
    cmp_ok(pvm_recv(-2, 1), "==", PvmBadParam, "recv tid -2: PvmBadParam (PVM hangs)");
    cmp_ok(pvm_recv(-1, -2), "==", PvmBadParam, "recv tag -2: PvmBadParam (PVM hangs)");
    cmp_ok(pvm_nrecv(0, 1), "==", PvmBadParam, "nrecv tid 0: PvmBadParam");
    cmp_ok(pvm_probe(-1, -3), "==", PvmBadParam, "probe tag -3: PvmBadParam");
    pvm_initsend(PvmDataDefault);
    pvm_setopt(PvmAutoErr, 1);
    char err[256];
    pvmtest_capture(s_call_send_bad, NULL, err, sizeof err);
    is(err, "libpvm [t40001]: pvm_send(): Bad parameter\n", "send error diagnostic");
    pvm_setopt(PvmAutoErr, 0);
}

/*  pvm_psend -> recv + upk, and pack + send -> precv in both encodings. */
static void s_check_psend_precv(pvm_loopback_t *lb)
{
    /* psend -> recv + upk (ptest) */
    double d[3] = { 1.5, -2, 1e300 }, e[3] = { 0, 0, 0 };
    int keep = pvm_initsend(PvmDataDefault);
    cmp_ok(pvm_psend(ME, 50, d, 3, PVM_DOUBLE), "==", 0, "psend");
    cmp_ok(pvm_getsbuf(), "==", keep, "psend leaves the active send buffer alone");
    cmp_ok(pvm_recv(-1, 50), ">", 0, "recv a psend message");
    cmp_ok(pvm_upkdouble(e, 3, 1), "==", 0, "upkdouble it");
    ok(!memcmp(d, e, sizeof d), "psend -> recv + upkdouble round trip");

    /* pack + send -> precv, in both encodings */
    long l[2] = { -6, 5000000000L }, lr[2] = { 0, 0 };
    int rt = 0, rg = 0, rl = 0;
    pvm_initsend(PvmDataDefault);
    pvm_pklong(l, 2, 1);
    pvm_send(ME, 51);
    int rbuf_before = pvm_getrbuf();
    cmp_ok(pvm_precv(-1, 51, lr, 2, PVM_LONG, &rt, &rg, &rl), "==", 0,
           "precv a PvmDataDefault message");
    ok(lr[0] == -6 && lr[1] == 5000000000L, "... decoded (PVM copied XDR bytes raw)");
    ok(rt == ME && rg == 51 && rl == 16, "... rtid, rtag, rlen in bytes (%d)", rl);
    cmp_ok(pvm_getrbuf(), "==", rbuf_before, "precv leaves the receive buffer alone");
    memset(e, 0, sizeof e);
    pvm_initsend(PvmDataRaw);
    pvm_pkdouble(d, 3, 1);
    pvm_send(ME, 52);
    cmp_ok(pvm_precv(ME, 52, e, 2, PVM_DOUBLE, &rt, &rg, &rl), "==", 0,
           "precv into a smaller buffer");
    ok(e[0] == 1.5 && e[1] == -2 && e[2] == 0 && rl == 24,
       "... takes len elements, rlen says the message had 24 bytes");
    cmp_ok(pvm_psend(ME, 53, d, 3, PVM_DOUBLE), "==", 0, "psend for precv");
    cmp_ok(pvm_precv(-1, -1, e, 3, PVM_DOUBLE, NULL, NULL, NULL), "==", 0,
           "psend -> precv with NULL outputs");
    ok(!memcmp(d, e, sizeof d), "... content");
    cmp_ok(pvm_psend(ME, 54, "abc", 3, PVM_STR), "==", PvmNotImpl,
           "psend PVM_STR: PvmNotImpl (as PVM)");
    cmp_ok(pvm_psend(ME, 54, d, 3, 99), "==", PvmBadParam, "psend type 99: PvmBadParam");
    cmp_ok(pvm_psend(ME, 54, d, -1, PVM_DOUBLE), "==", PvmBadParam, "psend len -1");
    cmp_ok(pvm_psend(0, 54, d, 1, PVM_DOUBLE), "==", PvmBadParam, "psend tid 0");
    cmp_ok(pvm_precv(-1, 54, e, 3, 99, NULL, NULL, NULL), "==", PvmBadParam,
           "precv type 99: PvmBadParam");
    cmp_ok(pvm_precv(-1, 54, e, 3, PVM_DOUBLE, NULL, NULL, NULL), "==", PvmSysErr,
           "precv with nothing possible on the loopback fails instead of hanging");
    cmp_ok(pvm_loopback_pending(lb), "==", 0, "nothing left in the loopback");
}

/*  A message in another PVM context is invisible to the PVM calls. */
static void s_check_contexts(void)
{
    /* contexts: a message in another context is invisible to the PVM calls */
    pvm_ctx_t *ctx = pvm_ctx_current();
    int hb = pvm_initsend(PvmDataDefault), v = 12;
    pvm_pkint(&v, 1, 1);
    cmp_ok(pvm_ctx_send(ctx, hb, ME, 60, 7), "==", 0, "send in context 7");
    cmp_ok(pvm_nrecv(-1, -1), "==", 0, "pvm_nrecv(-1, -1) does not see it");
    int hid = pvm_ctx_recv(ctx, -1, -1, 7, 0);
    cmp_ok(hid, ">", 0, "pvm_ctx_recv in context 7 does");
    int hctx = -1;
    pvm_ctx_buf_info(ctx, hid, NULL, NULL, &hctx);
    cmp_ok(hctx, "==", 7, "... and the buffer knows its context");
    pvm_ctx_free_buf(ctx, hid);
}

/*  Buffers packed in a freed buffer's memory keep their own contents and lengths. */
static void s_check_kept_memory(void)
{
    /* the memory of a freed buffer is packed into by the next: contents and lengths stay
       each message's own */
    static char big[1 << 20], got[1 << 20];
    const char fill[3] = { 'A', 'B', 'C' };
    const int lens[3] = { 1 << 20, 8, 1 << 20 };
    for (int i = 0; i < 3; i++) {
        memset(big, fill[i], sizeof big);
        pvm_initsend(i == 1 ? PvmDataRaw : PvmDataDefault);
        pvm_pkbyte(big, lens[i], 1);
        memset(big, 'x', sizeof big);       /* the pack copied */
        pvm_send(ME, 70 + i);
    }
    int okall = 1;
    for (int i = 0; i < 3; i++) {
        int bytes = -1;
        int id = pvm_recv(ME, 70 + i);
        pvm_bufinfo(id, &bytes, NULL, NULL);
        memset(got, 0, sizeof got);
        pvm_upkbyte(got, lens[i], 1);
        okall &= bytes == lens[i] && got[0] == fill[i] && got[lens[i] - 1] == fill[i];
    }
    ok(okall, "1 MiB, 8 B, 1 MiB packed one after another in kept memory: each intact");
}

int main(void)
{
    plan(NO_PLAN);
    pvm_loopback_t *lb = pvmtest_setup(ME, 0);
    s_check_send_order();
    s_check_nrecv_trecv();
    s_check_probe();
    s_check_mcast_errors(lb);
    s_check_psend_precv(lb);
    s_check_contexts();
    s_check_kept_memory();
    pvm_ctx_install(NULL);
    done_testing();
}
