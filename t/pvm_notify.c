/*  t/pvm_notify.c — pvm_notify against PVM 3.4's behaviour: a shell-started master spawns
 *  copies of this program and asks for PvmTaskExit of them; each message comes from
 *  t80000000 (PVM's pvmd) with the master's tag and one int, the task's tid, whether the
 *  task is killed with SIGKILL (by itself while the master sits in pvm_recv(-1, -1) with no
 *  other traffic, or by the master) or calls pvm_exit, within a bound.  A tid that has
 *  ended or never existed gets its message at once, a cancel delivers it at once and no
 *  later one comes, asking twice gives two messages; bad arguments are PvmBadParam before
 *  anything is armed.  Outside a virtual machine: PvmHostDelete of this host waits, of a
 *  host that is not there is answered at once, PvmHostAdd is accepted and cancelled.  The
 *  multi-host cases are in t/vm_ssh.sh.  Every wait is bounded (pvm_trecv, alarm).
 */
#include "gtap.h"
#include "pvm3.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { READY = 1, GO = 2, NEVER = 99, BOUND_S = 5 };

/*  The child: tells the master its pid, then on GO does what argv says: "kill" raises
 *  SIGKILL, "exit" calls pvm_exit and lingers, anything else waits until killed. */
static int s_child(const char *how)
{
    int parent = pvm_parent();
    int pid = (int)getpid();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&pid, 1, 1);
    pvm_send(parent, READY);
    if (!strcmp(how, "wait")) {
        pvm_recv(parent, NEVER);
        return 3;
    }
    pvm_recv(parent, GO);
    if (!strcmp(how, "kill"))
        raise(SIGKILL);
    pvm_exit();
    sleep(2);                   /* still running after pvm_exit: the notify came from it */
    return 0;
}

/*  Spawns one child doing `how`; its tid (its pid in *pid), or 0. */
static int s_spawn(const char *self, const char *how, int *pid)
{
    char *args[] = { (char *)how, NULL };
    int tid = 0;
    if (pvm_spawn((char *)self, args, PvmTaskDefault, NULL, 1, &tid) != 1 || tid <= 0)
        return 0;
    if (pvm_trecv(tid, READY, &(struct timeval){ 60, 0 }) <= 0)
        return 0;
    pvm_upkint(pid, 1, 1);
    return tid;
}

/*  Seconds since an arbitrary origin. */
static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*  True when bufid is a notify message: from t80000000, tag, 4 bytes holding `id`. */
static int s_is_notify(int bufid, int tag, int id)
{
    int bytes = -1, t = -1, src = 0, v = 0;
    if (bufid <= 0 || pvm_bufinfo(bufid, &bytes, &t, &src) < 0)
        return 0;
    int rc = pvm_upkint(&v, 1, 1);
    if (rc < 0 || bytes != 4 || t != tag || (unsigned)src != 0x80000000u || v != id)
        diag("bufid %d: bytes %d tag %d src t%x value t%x (want tag %d t%x)", bufid, bytes,
             t, (unsigned)src, (unsigned)v, tag, (unsigned)id);
    return rc == 0 && bytes == 4 && t == tag && (unsigned)src == 0x80000000u && v == id;
}

/*  A notify message with tag waited for at most BOUND_S seconds. */
static int s_wait(int tag)
{
    return pvm_trecv(-1, tag, &(struct timeval){ BOUND_S, 0 });
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return s_child(argv[1]);
    plan(26);
    gtap_watchdog(120);                 /* a hang is a failure, not a stuck make check */
    pvm_setopt(PvmAutoErr, 0);
    int me = pvm_mytid();
    ok(me > 0, "master enrolled t%x", (unsigned)me);

    /* --- bad arguments: nothing armed, nothing sent */
    int zero[2] = { 0, 0 }, pid;
    ok(pvm_notify(99, 10, 1, &me) == PvmBadParam && pvm_notify(0, 10, 1, &me) == PvmBadParam
       && pvm_notify(PvmNotifyCancel, 10, 1, &me) == PvmBadParam,
       "an unknown event: PvmBadParam");
    ok(pvm_notify(PvmTaskExit, -5, 1, &me) == PvmBadParam, "a negative tag: PvmBadParam");
    ok(pvm_notify(PvmTaskExit, 10, 0, &me) == PvmBadParam
       && pvm_notify(PvmTaskExit, 10, -1, &me) == PvmBadParam
       && pvm_notify(PvmHostDelete, 10, 0, &me) == PvmBadParam
       && pvm_notify(PvmTaskExit, 10, 1, NULL) == PvmBadParam, "cnt < 1 or no tids: PvmBadParam");
    zero[0] = 0x7ffffff0;
    ok(pvm_notify(PvmTaskExit, 10, 2, zero) == PvmBadParam && pvm_nrecv(-1, 10) == 0,
       "tid 0 in the list: PvmBadParam and no message for the valid one");
    ok(pvm_notify(PvmRouteAdd, 10, 1, &me) == PvmNotImpl, "PvmRouteAdd: PvmNotImpl");

    /* --- a task that kills itself while the master waits in pvm_recv(-1, -1) */
    int a = s_spawn(argv[0], "kill", &pid);
    ok(a > 0, "child A t%x runs", (unsigned)a);
    ok(pvm_notify(PvmTaskExit, 50, 1, &a) == 0, "notify PvmTaskExit of A");
    pvm_initsend(PvmDataDefault);
    pvm_send(a, GO);
    double t0 = s_now();
    int b = pvm_recv(-1, -1);
    double took = s_now() - t0;
    ok(s_is_notify(b, 50, a), "pvm_recv(-1, -1) gets A's exit: t80000000, tag 50, one int");
    ok(took < BOUND_S, "within %d s of the SIGKILL (%.3f s)", BOUND_S, took);

    /* --- a task killed by the master, two tags, one tid asked twice */
    int c = s_spawn(argv[0], "wait", &pid);
    ok(c > 0, "child C t%x runs", (unsigned)c);
    ok(pvm_notify(PvmTaskExit, 51, 1, &c) == 0 && pvm_notify(PvmTaskExit, 51, 1, &c) == 0
       && pvm_notify(PvmTaskExit, 52, 1, &c) == 0, "notify C twice with tag 51, once with 52");
    kill((pid_t)pid, SIGKILL);
    ok(s_is_notify(s_wait(52), 52, c), "kill -9 of C: tag 52");
    ok(s_is_notify(pvm_nrecv(-1, 51), 51, c) && s_is_notify(pvm_nrecv(-1, 51), 51, c)
       && pvm_nrecv(-1, 51) == 0, "two messages with tag 51, no third");

    /* --- a task that calls pvm_exit (and keeps running) */
    int e = s_spawn(argv[0], "exit", &pid);
    ok(e > 0 && pvm_notify(PvmTaskExit, 53, 1, &e) == 0, "child E t%x, notified", (unsigned)e);
    pvm_initsend(PvmDataDefault);
    pvm_send(e, GO);
    ok(s_is_notify(s_wait(53), 53, e), "E's pvm_exit: tag 53 with E's tid");

    /* --- tids that have ended or never were: at once */
    int never = 0x7ffffff0;
    ok(pvm_notify(PvmTaskExit, 54, 1, &a) == 0 && s_is_notify(pvm_nrecv(-1, 54), 54, a),
       "an ended tid: its message is there when pvm_notify returns");
    ok(pvm_notify(PvmTaskExit, 55, 1, &never) == 0 && s_is_notify(pvm_nrecv(-1, 55), 55, never),
       "a tid that never was: the same");

    /* --- cancel: the message at once, none later; a cancel that matches nothing: 0 */
    int d = s_spawn(argv[0], "wait", &pid);
    ok(d > 0 && pvm_notify(PvmTaskExit, 56, 1, &d) == 0 && pvm_notify(PvmTaskExit, 57, 1, &d) == 0,
       "child D t%x notified with tags 56 and 57", (unsigned)d);
    ok(pvm_notify(PvmTaskExit | PvmNotifyCancel, 58, 1, &d) == 0 && pvm_nrecv(-1, -1) == 0,
       "a cancel with another tag: 0, no message");
    ok(pvm_notify(PvmTaskExit | PvmNotifyCancel, 56, 1, &d) == 0
       && s_is_notify(pvm_nrecv(-1, 56), 56, d), "cancel of tag 56: its message at once");
    kill((pid_t)pid, SIGKILL);
    b = pvm_trecv((int)0x80000000u, 57, &(struct timeval){ BOUND_S, 0 });
    ok(s_is_notify(b, 57, d) && pvm_nrecv(-1, 56) == 0,
       "D killed: tag 57 (received naming t80000000), no second tag 56");

    /* --- hosts outside a virtual machine: this host alone */
    int host = pvm_tidtohost(me), nohost = 0x40fc0000;
    ok(host > 0 && pvm_notify(PvmHostDelete, 60, 1, &host) == 0 && pvm_nrecv(-1, 60) == 0,
       "PvmHostDelete of this host t%x: armed, no message", (unsigned)host);
    ok(pvm_notify(PvmHostDelete, 61, 1, &nohost) == 0 && s_is_notify(pvm_nrecv(-1, 61), 61, nohost),
       "PvmHostDelete of a host not there: at once");
    ok(pvm_notify(PvmHostDelete | PvmNotifyCancel, 60, 1, &host) == 0
       && s_is_notify(pvm_nrecv(-1, 60), 60, host), "cancel of this host's: its message at once");
    ok(pvm_notify(PvmHostAdd, 62, -1, NULL) == 0 && pvm_notify(PvmHostAdd | PvmNotifyCancel, 62, 0, NULL) == 0
       && pvm_nrecv(-1, -1) == 0, "PvmHostAdd armed and cancelled: no message");
    pvm_exit();
    return exit_status();
}
