/*  t/live_view_gd.c — groupd's side of the live view (TASK_STATUS, STATUSES) against a
 *  private groupd, frame by frame: a registered task's status is kept and listed (call,
 *  time blocked, queued messages, its peer and whether that peer runs); a row about
 *  another task is refused (PvmDenied), one from a connection with no task too (PvmNoTask),
 *  and so are an oversized or NUL-holding call text, a wrong frame count (PvmBadMsg) and
 *  negative numbers (PvmBadParam), each leaving the table as it was; a peer that ends is
 *  then listed as exited, a tid nobody had as unknown; "" clears the status, and a task's
 *  end drops it.  Every wait is bounded.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <zmq.h>

/*  One request of cmd with values per its layout on sock (raw: frame 2 replaced by these
 *  bytes, which the encoder would refuse); the reply status, or 99 when none came.  With
 *  recs, a STATUSES reply's records are decoded into *recs (*n). */
static int s_ask_raw(void *sock, uint8_t cmd, const char *layout, const gd_value_t *v, int nv,
                     const gd_frame_t *raw, gd_status_rec_t **recs, int *n)
{
    uint8_t hdr[GD_HDR_SIZE], buf[8 * GD_MAX_FRAMES];
    gd_frame_t f[1 + GD_MAX_FRAMES];
    gd_header_encode(hdr, cmd, 9);
    f[0] = (gd_frame_t){ hdr, sizeof hdr };
    int nf = gd_values_encode(layout, v, nv, buf, f + 1);
    if (nf < 0)
        return 98;
    if (raw && nf >= 2)
        f[2] = *raw;
    gd_multipart_t mp;
    if (gdt_exchange(sock, f, 1 + nf, &mp, 20000) < 0)
        return 99;
    int status = mp.nparts >= 2 && mp.frames[1].len == 4
               ? (int32_t)gimpi_be_get32(mp.frames[1].data) : 99;
    if (recs) {
        *recs = NULL;
        *n = -1;
        if (status >= 0 && mp.nparts == 4)
            gd_statuses_decode(mp.frames[3].data, mp.frames[3].len, recs, n);
    }
    gd_multipart_close(&mp);
    return status;
}

/*  s_ask_raw without a raw frame. */
static int s_ask(void *sock, uint8_t cmd, const char *layout, const gd_value_t *v, int nv,
                 gd_status_rec_t **recs, int *n)
{
    return s_ask_raw(sock, cmd, layout, v, nv, NULL, recs, n);
}

/*  REGISTER on sock: the tid. */
static int s_register(void *sock, int pid)
{
    uint8_t proc[24] = { 0 }, addr[16] = { 0 };
    proc[23] = (uint8_t)pid;
    addr[15] = 1;
    gd_value_t v[5] = { { .data = proc, .len = 24 }, { .data = addr, .len = 16 },
                        { .i = 5000 }, { .i = pid }, { .data = (const uint8_t *)"h", .len = 1 } };
    return s_ask(sock, GD_REGISTER, "paiit", v, 5, NULL, NULL);
}

/*  TASK_STATUS on sock: tid, call, ms, queued, peer; the status. */
static int s_status(void *sock, int tid, const char *call, size_t len, int ms, int queued,
                    int peer)
{
    gd_value_t v[5] = { { .i = tid }, { .data = (const uint8_t *)"", .len = 0 },
                        { .i = ms }, { .i = queued }, { .i = peer } };
    gd_frame_t text = { (const uint8_t *)call, len };
    return s_ask_raw(sock, GD_TASK_STATUS, "itiii", v, 5, &text, NULL, NULL);
}

/*  STATUSES on sock: the record count (-1 on error), the first record into *first. */
static int s_list(void *sock, gd_status_rec_t *first)
{
    gd_status_rec_t *recs;
    int n;
    int st = s_ask(sock, GD_STATUSES, "", NULL, 0, &recs, &n);
    if (st < 0 || st != n) {
        free(recs);
        return -1;
    }
    if (n > 0 && first)
        *first = recs[0];
    free(recs);
    return n;
}

/*  The cases against a private groupd. */
static void test_status(const char *ep)
{
    void *zctx = zmq_ctx_new();
    void *a = gdt_dealer_in(zctx, ep), *b = gdt_dealer_in(zctx, ep), *u = gdt_dealer_in(zctx, ep);
    int ta = s_register(a, 11), tb = s_register(b, 12);
    ok(ta > 0 && tb > 0 && ta != tb, "two tasks registered (t%x, t%x)", (unsigned)ta,
       (unsigned)tb);
    gd_status_rec_t r;
    cmp_ok(s_list(u, NULL), "==", 0, "no status at first");
    const char *call = "pvm_recv(t40002, tag 7)";
    cmp_ok(s_status(a, ta, call, strlen(call), 300, 2, tb), "==", 0, "a task's own status: 0");
    memset(&r, 0, sizeof r);
    cmp_ok(s_list(u, &r), "==", 1, "STATUSES (from a tool) lists one");
    ok(r.tid == ta && !strcmp(r.call, call) && r.ms >= 300 && r.ms < 20000 && r.queued == 2
       && r.peer == tb && r.peer_state == GD_PEER_RUNNING,
       "its tid, call, time so far (%d ms), queued messages and running peer", (int)r.ms);

    cmp_ok(s_status(a, tb, "x", 1, 0, 0, 0), "==", GIMPI_EDENIED,
           "a status about another task: Denied");
    cmp_ok(s_status(u, ta, "x", 1, 0, 0, 0), "==", GIMPI_ENOTASK,
           "a status from a connection with no task: NoTask");
    char big[GD_MAX_TEXT + 2];
    memset(big, 'x', sizeof big);
    cmp_ok(s_status(a, ta, big, GD_MAX_TEXT + 1, 0, 0, 0), "==", GIMPI_EBADMSG,
           "a call text of %d bytes: BadMsg", GD_MAX_TEXT + 1);
    cmp_ok(s_status(a, ta, "a\0b", 3, 0, 0, 0), "==", GIMPI_EBADMSG,
           "a call text holding a NUL: BadMsg");
    cmp_ok(s_status(a, ta, "x", 1, -1, 0, 0), "==", GIMPI_EBADPARAM, "negative ms: BadParam");
    cmp_ok(s_status(a, ta, "x", 1, 0, -2, 0), "==", GIMPI_EBADPARAM,
           "queued below -1: BadParam");
    cmp_ok(s_status(a, ta, "x", 1, 0, 0, -5), "==", GIMPI_EBADPARAM,
           "a negative peer: BadParam");
    gd_value_t three[3] = { { .i = ta }, { .data = (const uint8_t *)"x", .len = 1 }, { .i = 0 } };
    cmp_ok(s_ask(a, GD_TASK_STATUS, "iti", three, 3, NULL, NULL), "==", GIMPI_EBADMSG,
           "too few frames: BadMsg");
    memset(&r, 0, sizeof r);
    ok(s_list(u, &r) == 1 && !strcmp(r.call, call) && r.queued == 2,
       "the refusals left the status as it was");

    cmp_ok(s_ask(b, GD_UNREGISTER, "", NULL, 0, NULL, NULL), "==", 0, "the peer leaves");
    memset(&r, 0, sizeof r);
    ok(s_list(u, &r) == 1 && r.peer == tb && r.peer_state == GD_PEER_EXITED,
       "the status now says its peer has exited");
    cmp_ok(s_status(a, ta, "pvm_recv(t7ffff0, tag 1)", 24, 0, -1, 0x7ffff0), "==", 0,
           "a status naming a tid nobody had, queued not known");
    memset(&r, 0, sizeof r);
    ok(s_list(u, &r) == 1 && r.peer_state == GD_PEER_UNKNOWN && r.queued == -1,
       "its peer is unknown, its queue not known");
    cmp_ok(s_status(a, ta, "", 0, 0, 0, 0), "==", 0, "\"\": running again");
    cmp_ok(s_list(u, NULL), "==", 0, "the status is gone");
    cmp_ok(s_status(a, ta, call, strlen(call), 0, 0, 0), "==", 0, "blocked again");
    cmp_ok(s_ask(a, GD_UNREGISTER, "", NULL, 0, NULL, NULL), "==", 0, "the task ends");
    cmp_ok(s_list(u, NULL), "==", 0, "its status went with it");
    gd_sock_destroy(&a, NULL);
    gd_sock_destroy(&b, NULL);
    gd_sock_destroy(&u, NULL);
    zmq_ctx_term(zctx);
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(120);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    test_status(d.endpoint);
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "groupd healthy, exits 0");
    gdt_cleanup(&d);
    done_testing();
}
