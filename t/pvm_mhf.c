/*  t/pvm_mhf.c — PVM's message handlers (pvm_addmhf, pvm_delmhf) on the loopback
 *  transport: a handler runs inside pvm_recv, nrecv, trecv, probe and precv for each
 *  matching message that arrives, with the message as the active receive buffer, no send
 *  buffer and the message's context current, and the caller's buffers back afterwards;
 *  the message is never seen by a receive; wildcards on source, tag and context;
 *  overlapping handlers are PvmExists; messages queued before the handler was added stay
 *  for pvm_recv; pvm_delmhf's errors; a handler that deletes itself or another one; a
 *  handler that sends a reply (it arrives, for the caller's receive); a handler that
 *  receives another message itself.
 */
#include "gtap.h"
#include "gimpi.h"
#include "pvmtest.h"

#include <sys/time.h>

#define ME PVMTEST_TID

static int s_runs;              /* handler calls since the last reset */
static int s_seen_val;          /* what the last call unpacked */
static int s_seen_rbuf, s_seen_mid, s_seen_sbuf, s_seen_ctx, s_seen_tag;
static int s_delete;            /* a handler id the next call deletes (-1: none) */
static int s_delete_rc;

/*  Records what a handler sees; deletes s_delete if asked. */
static int s_handler(int mid)
{
    s_runs++;
    s_seen_mid = mid;
    s_seen_rbuf = pvm_getrbuf();
    s_seen_sbuf = pvm_getsbuf();
    s_seen_ctx = pvm_getcontext();
    int bytes;
    pvm_bufinfo(mid, &bytes, &s_seen_tag, NULL);
    s_seen_val = -1;
    pvm_upkint(&s_seen_val, 1, 1);
    if (s_delete >= 0) {
        s_delete_rc = pvm_delmhf(s_delete);
        s_delete = -1;
    }
    return 0;
}

/*  Replies to a message with tag 90 with the value + 1 on tag 91, from inside. */
static int s_replier(int mid)
{
    int v = -1;
    pvm_upkint(&v, 1, 1);
    s_runs++;
    v++;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    pvm_send(ME, 91);
    (void)mid;
    return 0;
}

/*  Receives the tag-61 message from inside (a nested receive). */
static int s_nested(int mid)
{
    (void)mid;
    s_runs++;
    int b = pvm_recv(-1, 61);
    s_seen_val = -1;
    if (b > 0)
        pvm_upkint(&s_seen_val, 1, 1);
    return 0;
}

/*  Sends one int to ourselves with tag in the current context. */
static void s_send_int(int v, int tag)
{
    int old = pvm_setsbuf(0);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    pvm_send(ME, tag);
    pvm_freebuf(pvm_setsbuf(old));
}

/*  Resets the record. */
static void s_reset(void)
{
    s_runs = 0;
    s_seen_val = s_seen_rbuf = s_seen_mid = s_seen_sbuf = s_seen_ctx = s_seen_tag = -7;
    s_delete = -1;
}

/*  A handler runs in recv and probe and takes its message. */
static void s_check_runs(void)
{
    s_reset();
    int h = pvm_addmhf(-1, 10, -1, s_handler);
    cmp_ok(h, ">=", 0, "pvm_addmhf(-1, 10, -1) gives an id");
    int mine = pvm_initsend(PvmDataDefault);
    int v = 77;
    pvm_pkint(&v, 1, 1);
    s_send_int(5, 10);
    s_send_int(6, 11);
    int b = pvm_recv(-1, 11);
    cmp_ok(b, ">", 0, "pvm_recv(-1, 11) returns the other message");
    cmp_ok(s_runs, "==", 1, "the handler ran once, inside pvm_recv");
    cmp_ok(s_seen_val, "==", 5, "... on the tag-10 message");
    ok(s_seen_rbuf == s_seen_mid && s_seen_mid > 0, "... which was its active receive buffer");
    cmp_ok(s_seen_sbuf, "==", 0, "... with no send buffer");
    cmp_ok(s_seen_ctx, "==", 0, "... in the message's context");
    cmp_ok(pvm_getsbuf(), "==", mine, "the caller's send buffer is back after it");
    cmp_ok(pvm_getrbuf(), "==", b, "the receive buffer is the message pvm_recv returned");
    cmp_ok(pvm_nrecv(-1, 10), "==", 0, "pvm_recv never sees a handled message");
    s_send_int(8, 10);
    cmp_ok(pvm_probe(-1, 10), "==", 0, "pvm_probe finds nothing for the tag a handler takes");
    cmp_ok(s_runs, "==", 2, "... and ran the handler on the way");
    s_send_int(9, 10);
    struct timeval tv = { 0, 1000 };
    cmp_ok(pvm_trecv(-1, 12, &tv), "==", 0, "pvm_trecv times out ...");
    cmp_ok(s_runs, "==", 3, "... after running the handler");
    s_send_int(10, 10);
    s_send_int(11, 12);
    int got = -1, src = 0, tag = 0, len = 0;
    cmp_ok(pvm_precv(-1, 12, &got, 1, PVM_INT, &src, &tag, &len), "==", 0, "pvm_precv works ...");
    ok(s_runs == 4 && s_seen_val == 10 && got == 11, "... and ran the handler first");
    cmp_ok(pvm_delmhf(h), "==", 0, "pvm_delmhf removes it");
    s_send_int(12, 10);
    b = pvm_recv(-1, 10);
    ok(b > 0 && s_runs == 4, "after pvm_delmhf, pvm_recv gets tag 10 again");
    pvm_freebuf(pvm_getsbuf());
}

/*  Wildcards, overlaps, queued messages. */
static void s_check_match(void)
{
    s_reset();
    int ctx5 = 5000;
    int h = pvm_addmhf(ME, -1, ctx5, s_handler);
    cmp_ok(h, ">=", 0, "a handler for any tag from one task in one context");
    cmp_ok(pvm_addmhf(-1, 3, -1, s_handler), "==", PvmExists, "an overlapping one is PvmExists");
    cmp_ok(pvm_addmhf(ME, 3, ctx5, s_handler), "==", PvmExists, "so is one it covers");
    cmp_ok(pvm_addmhf(-1, 3, 1, NULL), "==", PvmBadParam, "a NULL function is PvmBadParam");
    int h2 = pvm_addmhf(-1, 3, 1, s_handler);
    cmp_ok(h2, ">=", 0, "one in another context is not an overlap");
    ok(h2 != h, "... and gets its own id");
    int old = pvm_setcontext(ctx5);
    s_send_int(2, 21);
    pvm_setcontext(old);
    s_send_int(1, 20);                          /* base context: not the handler's */
    int b = pvm_recv(-1, 20);
    ok(b > 0 && s_runs == 1 && s_seen_val == 2 && s_seen_tag == 21,
       "context 5000's message went to the handler, the base one to pvm_recv");
    cmp_ok(s_seen_ctx, "==", ctx5, "the handler ran in the message's context");
    cmp_ok(pvm_getcontext(), "==", 0, "the caller's context is back");
    cmp_ok(pvm_delmhf(h2), "==", 0, "delete the second");
    /* a message queued before the handler exists is pvm_recv's */
    s_send_int(3, 30);
    pvm_probe(-1, 30);                          /* queued now */
    int h3 = pvm_addmhf(-1, 30, -1, s_handler);
    b = pvm_recv(-1, 30);
    ok(b > 0 && s_runs == 1, "a message queued before pvm_addmhf is pvm_recv's");
    pvm_delmhf(h3);
    pvm_delmhf(h);
}

/*  pvm_delmhf's errors and deleting from inside a handler. */
static void s_check_delete(void)
{
    s_reset();
    cmp_ok(pvm_delmhf(-1), "==", PvmBadParam, "pvm_delmhf(-1) is PvmBadParam");
    cmp_ok(pvm_delmhf(12345), "==", PvmNotFound, "an id never given is PvmNotFound");
    int h = pvm_addmhf(-1, 40, -1, s_handler);
    cmp_ok(pvm_delmhf(h), "==", 0, "delete");
    cmp_ok(pvm_delmhf(h), "==", PvmNotFound, "delete again is PvmNotFound");
    h = pvm_addmhf(-1, 40, -1, s_handler);
    int other = pvm_addmhf(-1, 41, -1, s_handler);
    s_delete = h;                               /* the tag-40 handler deletes itself */
    s_send_int(1, 40);
    s_send_int(2, 40);
    int b = pvm_recv(-1, 40);
    ok(s_runs == 1 && s_delete_rc == 0, "a handler deletes itself from inside");
    ok(b > 0 && pvm_upkint(&b, 1, 1) == 0 && b == 2, "the next message goes to pvm_recv");
    s_delete = other;                           /* ... and one deletes another */
    s_reset();
    s_delete = other;
    int h40 = pvm_addmhf(-1, 40, -1, s_handler);
    s_send_int(3, 40);
    s_send_int(4, 41);
    b = pvm_recv(-1, 41);
    ok(s_runs == 1 && s_delete_rc == 0 && b > 0, "a handler deletes another from inside");
    cmp_ok(pvm_delmhf(other), "==", PvmNotFound, "... which is gone");
    pvm_delmhf(h40);
}

/*  A handler that sends a reply. */
static void s_check_reply(void)
{
    s_reset();
    int h = pvm_addmhf(-1, 90, -1, s_replier);
    s_send_int(41, 90);
    int b = pvm_recv(-1, 91);
    int v = -1;
    ok(b > 0 && pvm_upkint(&v, 1, 1) == 0 && v == 42 && s_runs == 1,
       "a handler's pvm_send from inside reaches the caller's pvm_recv");
    pvm_delmhf(h);
    s_reset();
    h = pvm_addmhf(-1, 60, -1, s_nested);
    s_send_int(1, 60);
    s_send_int(2, 61);
    s_send_int(3, 62);
    b = pvm_recv(-1, 62);
    v = -1;
    ok(b > 0 && pvm_upkint(&v, 1, 1) == 0 && v == 3 && s_runs == 1 && s_seen_val == 2,
       "a handler's own pvm_recv takes its message; the caller's receive goes on after");
    cmp_ok(pvm_nrecv(-1, 61), "==", 0, "... and nothing is left behind");
    pvm_delmhf(h);
}

int main(void)
{
    plan(NO_PLAN);
    pvmtest_setup(ME, 0);
    s_check_runs();
    s_check_match();
    s_check_delete();
    s_check_reply();
    pvm_ctx_install(NULL);
    done_testing();
}
