/*  t/grace_task.c — a PVM master/worker program for t/gimpirun_grace.sh: a job whose
 *  static task spawns workers that outlive it (gimpirun's -grace for the tasks a job's own
 *  tasks leave behind).  argv[1] says what to do:
 *    master N WMODE END     spawns N "worker WMODE" (default placement), prints
 *                           "master pid P" and one "worker tid T pid P" line per worker
 *                           (and per grandchild), then "ready" once every one reported
 *                           in; END "hang" waits for ever (the test kills it), END "exit"
 *                           sends each worker "go" with the master's pid and exits 0
 *    worker barrier         joins "grace" and reports in, then waits in a barrier of
 *                           more members than will ever come
 *    worker recv            reports in, then waits in pvm_recv for a message never sent
 *    worker grand           spawns a "worker recv" (a grandchild of the master), passes
 *                           its report on, reports in itself, then waits as recv
 *    worker grandhere       the same, the grandchild on the worker's own host (".")
 *    worker finish          reports in, waits for "go", waits until the master has ended
 *                           (a pidfd), prints 200 lines and "worker done", exits 0
 *  A worker's report is its tid and pid, sent to its parent (tag 1).
 */
#include "pvm3.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHECK(cond, what)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "grace_task: %s failed\n", what);               \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

/*  Sends one report (tid, pid) to tid `to`. */
static void s_report(int to, int tid, int pid)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&tid, 1, 1);
    pvm_pkint(&pid, 1, 1);
    CHECK(pvm_send(to, 1) == 0, "report");
}

/*  Receives one report from anyone: its tid and pid. */
static void s_take_report(int *tid, int *pid)
{
    CHECK(pvm_recv(-1, 1) > 0, "receive a report");
    pvm_upkint(tid, 1, 1);
    pvm_upkint(pid, 1, 1);
}

/*  The master. */
static int s_master(int n, const char *wmode, const char *end)
{
    int me = pvm_mytid();
    CHECK(me > 0, "mytid");
    printf("master pid %d\n", (int)getpid());
    fflush(stdout);
    int *tids = calloc((size_t)n, sizeof *tids);
    char *args[] = { "worker", (char *)wmode, NULL };
    CHECK(pvm_spawn("grace_task", args, PvmTaskDefault, NULL, n, tids) == n, "spawn");
    int reports = !strncmp(wmode, "grand", 5) ? 2 * n : n;
    for (int i = 0; i < reports; i++) {
        int tid, pid;
        s_take_report(&tid, &pid);
        printf("worker tid t%x pid %d\n", (unsigned)tid, pid);
    }
    printf("ready\n");
    fflush(stdout);
    if (!strcmp(end, "exit")) {
        int pid = (int)getpid();
        for (int i = 0; i < n; i++) {
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&pid, 1, 1);
            CHECK(pvm_send(tids[i], 2) == 0, "go");
        }
        free(tids);
        pvm_exit();
        return 0;
    }
    pvm_recv(-1, 99);                   /* never sent */
    return 1;
}

/*  A worker. */
static int s_worker(const char *mode)
{
    int me = pvm_mytid(), parent = pvm_parent();
    CHECK(me > 0 && parent > 0, "mytid and parent");
    if (!strncmp(mode, "grand", 5)) {
        char *args[] = { "worker", "recv", NULL };
        int child, tid, pid, here = !strcmp(mode, "grandhere");
        CHECK(pvm_spawn("grace_task", args, here ? PvmTaskHost : PvmTaskDefault,
                        here ? "." : NULL, 1, &child) == 1, "spawn");
        s_take_report(&tid, &pid);
        s_report(parent, tid, pid);
        mode = "recv";
    }
    if (!strcmp(mode, "barrier"))
        CHECK(pvm_joingroup("grace") >= 0, "joingroup");
    s_report(parent, me, (int)getpid());
    if (!strcmp(mode, "barrier")) {
        pvm_barrier("grace", 1000);     /* never complete */
        return 1;
    }
    if (!strcmp(mode, "finish")) {
        int mpid;
        CHECK(pvm_recv(parent, 2) > 0, "go");
        pvm_upkint(&mpid, 1, 1);
        int fd = (int)syscall(SYS_pidfd_open, mpid, 0);
        struct pollfd p = { .fd = fd, .events = POLLIN };
        CHECK(fd < 0 || poll(&p, 1, 30000) == 1, "the master's end");
        setvbuf(stdout, NULL, _IOLBF, 0);   /* whole lines: the workers share the pipe */
        for (int k = 0; k < 200; k++)
            printf("worker t%x line %d\n", (unsigned)me, k);
        printf("worker done\n");
        pvm_exit();
        return 0;
    }
    pvm_recv(-1, 99);                   /* never sent */
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 4 && !strcmp(argv[1], "master"))
        return s_master(atoi(argv[2]), argv[3], argv[4]);
    if (argc > 2 && !strcmp(argv[1], "worker"))
        return s_worker(argv[2]);
    fprintf(stderr, "usage: grace_task master N WMODE hang|exit | worker MODE\n");
    return 2;
}
