/*  t/pvm_context_task.c — a PVM program (only <pvm3.h> calls) for t/pvm_context.sh: message
 *  contexts and handlers between real tasks.  argv[1] says what to do:
 *    pair     under gimpirun -np 2: both start in context 0; new contexts are > 0 and
 *             differ within a task and across the two; a message sent in a context is
 *             received only in that context and a base one only in the base (both ways,
 *             nrecv, probe, recv); pvm_freecontext of a freed, another task's or an
 *             unknown context is PvmNotFound and a freed id comes back; a wait id set
 *             with pvm_setmwid arrives with the message (inline and long); a message
 *             handler in task 2 replies from inside its receive to task 1's ping
 *    spawn    from the shell: spawns `child` from a new context, then from the base one;
 *             each child reports the context it started in, sending in it, then in base
 *    vmspawn  the same onto host "other" of a virtual machine (t/pvm_context.sh emulates it)
 *    child    (spawned) the above report
 *    show     prints the context the task starts in ("t1 context N ok")
 *  Prints "t<n> <mode> ok" on success; "t<n> FAIL line L: ..." and exit 1 on a failure.
 */
#include "pvm3.h"
#include "taskcheck.h"

#include <stdio.h>
#include <string.h>

static int s_lbl = 1;           /* 1 or 2: position among the siblings */

#define CHECK(cond, ...) TASK_CHECK("t", s_lbl, cond, __VA_ARGS__)

/*  Sends n ints to tid with tag in the current context. */
static void s_send(int tid, int tag, const int *v, int n)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint((int *)v, n, 1);
    CHECK(pvm_send(tid, tag) == 0, "send tag %d", tag);
}

/*  Receives (blocking) from tid with tag; the first int. */
static int s_recv_int(int tid, int tag)
{
    int v = -1;
    CHECK(pvm_recv(tid, tag) > 0 && pvm_upkint(&v, 1, 1) == 0, "recv tag %d", tag);
    return v;
}

/*  Task 2's handler for tag 50: replies value + 1 on tag 51 to the sender, from inside. */
static int s_pong(int mid)
{
    int v = -1, bytes, tag, src;
    pvm_bufinfo(mid, &bytes, &tag, &src);
    pvm_upkint(&v, 1, 1);
    v++;
    s_send(src, 51, &v, 1);
    return 0;
}

/*  Contexts and a handler between two tasks. */
static int s_pair(void)
{
    int *tids, me = pvm_mytid();
    CHECK(pvm_siblings(&tids) == 2, "two siblings");
    s_lbl = tids[0] == me ? 1 : 2;
    int peer = tids[0] == me ? tids[1] : tids[0];
    pvm_setopt(PvmAutoErr, 0);
    CHECK(pvm_getcontext() == PvmBaseContext, "starts in the base context");
    int c[2] = { pvm_newcontext(), pvm_newcontext() };
    CHECK(c[0] > 0 && c[1] > 0 && c[0] != c[1], "new contexts %d %d", c[0], c[1]);
    s_send(peer, 1, c, 2);
    int pc[2] = { -1, -1 };
    CHECK(pvm_recv(peer, 1) > 0 && pvm_upkint(pc, 2, 1) == 0, "peer's contexts");
    CHECK(pc[0] != c[0] && pc[0] != c[1] && pc[1] != c[0] && pc[1] != c[1],
          "contexts unique across tasks: mine %d %d, peer's %d %d", c[0], c[1], pc[0], pc[1]);
    /* isolation: base 7, context 5, base 5, base 6 (the marker) */
    int v = 7;
    s_send(peer, 7, &v, 1);
    CHECK(pvm_setcontext(c[0]) == PvmBaseContext && pvm_getcontext() == c[0], "setcontext");
    v = 100;
    s_send(peer, 5, &v, 1);
    pvm_setcontext(PvmBaseContext);
    v = 200;
    s_send(peer, 5, &v, 1);
    s_send(peer, 6, &v, 1);
    s_recv_int(peer, 6);                /* everything the peer sent before is here */
    CHECK(s_recv_int(peer, 5) == 200, "the base receive gets the base message");
    CHECK(pvm_nrecv(peer, 5) == 0, "... and never the one sent in a context (nrecv)");
    CHECK(pvm_probe(-1, 5) == 0, "... (probe)");
    pvm_setcontext(pc[0]);
    CHECK(pvm_nrecv(-1, 7) == 0 && pvm_probe(peer, -1) > 0, "in the peer's context, the "
          "base message is not seen, the context's is");
    CHECK(s_recv_int(-1, 5) == 100, "in the peer's context, recv gets its message");
    CHECK(pvm_nrecv(-1, -1) == 0, "... and nothing else");
    pvm_setcontext(PvmBaseContext);
    CHECK(s_recv_int(peer, 7) == 7, "the base message was there all along");
    /* the wait id travels with a message (pvm_setmwid), short and long */
    static int big[20000];
    big[19999] = 5;
    for (int k = 0; k < 2; k++) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(k ? big : &v, k ? 20000 : 1, 1);
        CHECK(pvm_setmwid(pvm_getsbuf(), 77 + k) == 0, "setmwid");
        CHECK(pvm_send(peer, 8) == 0, "send with a wait id");
    }
    s_send(peer, 9, &v, 1);
    struct pvmminfo mi;
    for (int k = 0; k < 2; k++) {
        int b = pvm_recv(peer, 8);
        CHECK(b > 0 && pvm_getminfo(b, &mi) == 0 && mi.wid == 77 + k && mi.src == peer
              && mi.dst == me && mi.tag == 8, "wait id %d arrived (%d bytes): %d", 77 + k,
              mi.len, mi.wid);
    }
    int last = -1;
    CHECK(pvm_upkint(big, 20000, 1) == 0 && big[19999] == 5, "the long one's body");
    CHECK(pvm_recv(peer, 9) > 0 && pvm_getminfo(pvm_getrbuf(), &mi) == 0 && mi.wid == 0
          && pvm_upkint(&last, 1, 1) == 0, "a message without one has wait id 0");
    /* freeing */
    CHECK(pvm_freecontext(c[1]) == 0, "freecontext");
    CHECK(pvm_freecontext(c[1]) == PvmNotFound, "freecontext twice: PvmNotFound");
    CHECK(pvm_freecontext(pc[0]) == PvmNotFound, "freecontext of the peer's: PvmNotFound");
    CHECK(pvm_freecontext(12345) == PvmNotFound, "freecontext of an unknown: PvmNotFound");
    CHECK(pvm_freecontext(-1) == PvmNotFound, "freecontext(-1): PvmNotFound");
    CHECK(pvm_newcontext() == c[1], "a freed id comes back");
    /* a handler that replies from inside task 2's receive */
    if (s_lbl == 2) {
        int h = pvm_addmhf(peer, 50, PvmBaseContext, s_pong);
        CHECK(h >= 0, "addmhf %d", h);
        s_send(peer, 49, &v, 1);        /* ready */
        CHECK(s_recv_int(peer, 52) == 1, "done");    /* the handler runs in here */
        CHECK(pvm_nrecv(-1, 50) == 0, "the handled message never reaches a receive");
        CHECK(pvm_delmhf(h) == 0, "delmhf");
    } else {
        s_recv_int(peer, 49);
        v = 41;
        s_send(peer, 50, &v, 1);
        CHECK(s_recv_int(peer, 51) == 42, "the handler's reply");
        v = 1;
        s_send(peer, 52, &v, 1);
    }
    printf("t%d pair ok\n", s_lbl);
    pvm_exit();
    return 0;
}

/*  Spawns one child from context cx (on host where, NULL: anywhere) and checks the
 *  context it reports. */
static void s_spawn_in(const char *self, int cx, const char *where)
{
    char *args[] = { "child", NULL };
    int tid = 0;
    pvm_setcontext(cx);
    CHECK(pvm_spawn((char *)self, args, where ? PvmTaskHost : PvmTaskDefault,
                    (char *)(where ? where : ""), 1, &tid) == 1, "spawn");
    pvm_setcontext(PvmBaseContext);
    CHECK(s_recv_int(tid, 2) == 0, "the child's base message");
    if (cx != PvmBaseContext)
        CHECK(pvm_nrecv(tid, 1) == 0, "its message in context %d is not seen in the base", cx);
    pvm_setcontext(cx);
    int got = s_recv_int(tid, 1);
    CHECK(got == cx, "the child started in context %d, not %d", got, cx);
    pvm_setcontext(PvmBaseContext);
}

/*  A child: reports its context in it, then in the base one. */
static int s_child(void)
{
    int cx = pvm_getcontext(), zero = 0;
    s_send(pvm_parent(), 1, &cx, 1);
    pvm_setcontext(PvmBaseContext);
    s_send(pvm_parent(), 2, &zero, 1);
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "?";
    if (!strcmp(mode, "pair"))
        return s_pair();
    if (!strcmp(mode, "child"))
        return s_child();
    if (!strcmp(mode, "show")) {
        printf("t1 context %d ok\n", pvm_getcontext());
        return 0;
    }
    if (!strcmp(mode, "vmspawn")) {      /* under a virtual machine with a host "other" */
        int cx = pvm_newcontext();
        CHECK(cx > 0, "newcontext %d", cx);
        s_spawn_in("pvm_context_task", cx, "other");
        s_spawn_in("pvm_context_task", PvmBaseContext, "other");
        printf("t1 vmspawn ok\n");
        pvm_exit();
        return 0;
    }
    if (!strcmp(mode, "spawn")) {
        int cx = pvm_newcontext();
        CHECK(cx > 0, "newcontext %d", cx);
        s_spawn_in(argv[0], cx, NULL);
        s_spawn_in(argv[0], PvmBaseContext, NULL);
        printf("t1 spawn ok\n");
        pvm_exit();
        return 0;
    }
    fprintf(stderr, "usage: pvm_context_task pair|spawn\n");
    return 2;
}
