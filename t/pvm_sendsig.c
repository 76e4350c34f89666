/*  t/pvm_sendsig.c — pvm_sendsig: a spawned child that catches SIGUSR1 and SIGUSR2 tells
 *  its master which arrived, in order; signal 0 only checks it is there; SIGKILL ends it
 *  (a receive naming it then fails).  tid 0 and negative tids are PvmBadParam as in PVM;
 *  a tid nobody has, a finished task and a signal outside 0..64 are PvmBadParam too (PVM's
 *  pvmd dropped those and answered 0).  The test's groupd is the build tree's.
 */
#include "gtap.h"
#include "pvm3.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  Signals the child caught, written by its handler, read by its loop. */
static volatile sig_atomic_t s_got;

/*  The child's handler: notes the signal. */
static void s_on_signal(int sig)
{
    s_got = sig;
}

/*  The child: says it is ready, then reports each caught signal until told to stop. */
static int s_child(void)
{
    struct sigaction sa = { .sa_handler = s_on_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigset_t block, old;        /* they arrive only inside sigsuspend: none is missed */
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGUSR2);
    sigprocmask(SIG_BLOCK, &block, &old);
    int parent = pvm_parent();
    pvm_initsend(PvmDataDefault);
    pvm_send(parent, 1);
    for (int k = 0; k < 2; k++) {
        while (!s_got)
            sigsuspend(&old);
        int sig = s_got;
        s_got = 0;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&sig, 1, 1);
        pvm_send(parent, 2);
    }
    pvm_recv(parent, 99);       /* never sent: SIGKILL ends this */
    return 3;
}

/*  The signal the child reported next, or -1. */
static int s_report(int tid)
{
    int sig = -1;
    if (pvm_trecv(tid, 2, &(struct timeval){ 60, 0 }) > 0)
        pvm_upkint(&sig, 1, 1);
    return sig;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return s_child();
    plan(10);
    pvm_setopt(PvmAutoErr, 0);
    ok(pvm_mytid() > 0, "master enrolled");
    char *args[] = { (char *)"child", NULL };
    int tid = 0;
    int n = pvm_spawn(argv[0], args, PvmTaskDefault, NULL, 1, &tid);
    ok(n == 1 && tid > 0,
       "spawned a child t%x", (unsigned)tid);
    ok(pvm_trecv(tid, 1, &(struct timeval){ 60, 0 }) > 0, "the child runs");
    ok(pvm_sendsig(tid, 0) == 0, "signal 0: the child is there");
    ok(pvm_sendsig(tid, SIGUSR1) == 0 && s_report(tid) == SIGUSR1, "SIGUSR1 arrives");
    ok(pvm_sendsig(tid, SIGUSR2) == 0 && s_report(tid) == SIGUSR2, "SIGUSR2 arrives");
    ok(pvm_sendsig(tid, -1) == PvmBadParam && pvm_sendsig(tid, 65) == PvmBadParam,
       "signals -1 and 65: PvmBadParam");
    ok(pvm_sendsig(tid, SIGKILL) == 0 && pvm_recv(tid, 3) < 0,
       "SIGKILL ends it: a receive naming it fails");
    ok(pvm_sendsig(0, SIGTERM) == PvmBadParam && pvm_sendsig(-5, SIGTERM) == PvmBadParam,
       "tid 0 and negative: PvmBadParam, as PVM");
    ok(pvm_sendsig(0x7ffffff0, SIGTERM) == PvmBadParam && pvm_sendsig(0x7ffffff0, 0) == PvmBadParam,
       "a tid nobody has: PvmBadParam");
    pvm_exit();
    return exit_status();
}
