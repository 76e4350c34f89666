/*  t/pvm_getfds.c — pvm_getfds in a program's own poll() loop: the descriptor it gives is
 *  readable once a message has come (one queued before the call included), is quiet
 *  (poll times out) when nothing came and the queue was looked at, and wakes the loop for
 *  a message from a spawned task with few wake-ups (no busy wait: counted, and the CPU
 *  time the wait took is small), and for pvm_notify's message of the child's end, which
 *  comes from groupd.  NULL is PvmBadParam.  `pvm_getfds restart` (t/pvm_getfds_restart.sh,
 *  with a groupd of its own): the descriptor also wakes the loop when groupd is killed,
 *  and the receive that follows reconnects (the groupd restarted from its journal), so
 *  the child's end, published by the new groupd, still wakes the loop and arrives.
 */
#include "gtap.h"
#include "pvm3.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

/*  The child: ready (tag 1), then for each word (tag 2) an answer (tag 3). */
static int s_child(void)
{
    int parent = pvm_parent();
    pvm_initsend(PvmDataDefault);
    pvm_send(parent, 1);
    for (int k = 0; k < 2; k++) {
        pvm_recv(parent, 2);
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&k, 1, 1);
        pvm_send(parent, 3);
    }
    pvm_recv(parent, 4);                /* (the parent watches our end) */
    pvm_exit();
    return 0;
}

/*  CPU seconds of this process so far. */
static double s_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec
           + ru.ru_stime.tv_usec / 1e6;
}

/*  Polls fd until pvm_nrecv(tid, tag) finds the message (at most 60 s); how many times
 *  poll woke, or -1. */
static int s_wait(int fd, int tid, int tag)
{
    for (int wakes = 0; wakes < 1000;) {
        if (pvm_nrecv(tid, tag) > 0)
            return wakes;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 60000) <= 0)
            return -1;
        wakes++;
    }
    return -1;
}

/*  The pid of the groupd serving GIMPI_GROUPD (ipc: its lock file holds it), or 0. */
static int s_groupd_pid(void)
{
    const char *ep = getenv("GIMPI_GROUPD");
    char path[600];
    if (!ep || strncmp(ep, "ipc://", 6))
        return 0;
    snprintf(path, sizeof path, "%s.lock", ep + 6);
    FILE *f = fopen(path, "r");
    int pid = 0;
    if (f && fscanf(f, "%d", &pid) != 1)
        pid = 0;
    if (f)
        fclose(f);
    return pid;
}

/*  groupd killed while the program sits in its poll loop. */
static int s_restart(char *self_path)
{
    plan(5);
    pvm_setopt(PvmAutoErr, 0);
    char *args[] = { (char *)"child", NULL };
    int tid = 0, *fds = NULL;
    ok(pvm_mytid() > 0 && pvm_spawn(self_path, args, PvmTaskDefault, NULL, 1, &tid) == 1
       && pvm_getfds(&fds) == 1 && s_wait(fds[0], tid, 1) >= 0, "enrolled, a child spawned");
    for (int k = 0; k < 2; k++) {       /* (its two answers, as in the main case) */
        pvm_initsend(PvmDataDefault);
        pvm_send(tid, 2);
        s_wait(fds[0], tid, 3);
    }
    struct pollfd p = { .fd = fds[0], .events = POLLIN };
    ok(pvm_notify(PvmTaskExit, 9, 1, &tid) == 0 && pvm_nrecv(-1, -1) == 0
       && poll(&p, 1, 200) == 0, "pvm_notify(PvmTaskExit) on it; the descriptor is quiet");
    int pid = s_groupd_pid();
    ok(pid > 0 && kill(pid, SIGKILL) == 0 && poll(&p, 1, 20000) == 1,
       "groupd (pid %d) killed: the descriptor woke the loop", pid);
    /* the program's loop: a receive after each wake (the first wake may come from the
       events socket, before the monitor has the connection's end to say) */
    int got = 0, pid2 = pid, wakes = 1;
    for (; wakes < 50; wakes++) {
        got = pvm_nrecv(-1, 9);
        pid2 = s_groupd_pid();
        if (got != 0 || (pid2 != pid && pid2 > 0) || poll(&p, 1, 20000) != 1)
            break;
    }
    ok(got == 0 && pid2 != pid && pid2 > 0, "a receive after a wake restarted groupd (pid %d, "
       "%d wake-ups) and found nothing yet (%d)", pid2, wakes, got);
    pvm_initsend(PvmDataDefault);
    pvm_send(tid, 4);
    int ended = s_wait(fds[0], -1, 9), who = 0;
    if (ended >= 0)
        pvm_upkint(&who, 1, 1);
    ok(ended >= 0 && who == tid, "the child's end, published by the new groupd, woke the loop "
       "(%d wake-ups) and arrived: t%x", ended, who);
    pvm_exit();
    return exit_status();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return s_child();
    if (argc > 1 && !strcmp(argv[1], "restart"))
        return s_restart(argv[0]);
    plan(11);
    pvm_setopt(PvmAutoErr, 0);
    ok(pvm_mytid() > 0, "enrolled");
    char *args[] = { (char *)"child", NULL };
    int tid = 0;
    ok(pvm_spawn(argv[0], args, PvmTaskDefault, NULL, 1, &tid) == 1, "spawned a child");
    /* its first message comes whenever it comes: before or after getfds */
    int *fds = NULL;
    int n = pvm_getfds(&fds);
    ok(n == 1 && fds && fds[0] >= 0, "pvm_getfds: 1 descriptor (%d)", fds ? fds[0] : -1);
    int w = s_wait(fds[0], tid, 1);
    ok(w >= 0, "the child's first message woke the loop (%d wake-ups)", w);
    struct pollfd p = { .fd = fds[0], .events = POLLIN };
    ok(pvm_nrecv(-1, -1) == 0 && poll(&p, 1, 200) == 0,
       "nothing queued, queue looked at: the descriptor is quiet (200 ms)");
    double cpu0 = s_cpu();
    int wakes = 0;
    for (int k = 0; k < 2; k++) {
        pvm_initsend(PvmDataDefault);
        pvm_send(tid, 2);
        int r = s_wait(fds[0], tid, 3);
        wakes += r < 0 ? 1000 : r;
    }
    ok(wakes <= 10, "two answers, each woke the loop (%d wake-ups in all)", wakes);
    double cpu = s_cpu() - cpu0;
    ok(cpu < 0.5, "no busy wait: %.3f s of CPU", cpu);
    /* pvm_notify's messages come from groupd, not the data plane: they wake it too */
    ok(pvm_notify(PvmTaskExit, 9, 1, &tid) == 0 && pvm_nrecv(-1, -1) == 0
       && poll(&p, 1, 200) == 0, "after pvm_notify, nothing came: the descriptor is quiet");
    pvm_initsend(PvmDataDefault);
    pvm_send(tid, 4);
    int ended = s_wait(fds[0], -1, 9), who = 0;
    if (ended >= 0)
        pvm_upkint(&who, 1, 1);
    ok(ended >= 0 && ended <= 10 && who == tid,
       "the child's end (pvm_notify) woke the loop (%d wake-ups), t%x", ended, who);
    ok(pvm_nrecv(-1, -1) == 0 && poll(&p, 1, 200) == 0, "... and then it is quiet again");
    ok(pvm_getfds(NULL) == PvmBadParam, "getfds(NULL): PvmBadParam");
    pvm_exit();
    return exit_status();
}
