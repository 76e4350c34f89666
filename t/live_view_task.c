/*  t/live_view_task.c — a PVM program that hangs on purpose, for t/live_view.sh: started
 *  from the shell on the test's groupd, it prints "ready t<tid>" and then obeys lines on
 *  stdin, answering each with one line, so that the script knows where it is without
 *  sleeping:
 *    recv TID TAG     pvm_recv(TID (hex, -1: any), TAG): "recv BUFID" once it returns
 *    trecv TID TAG S  pvm_trecv(TID, TAG, S seconds): "trecv BUFID" once it returns
 *    send TID TAG     one int to TID with TAG: "sent RC"
 *    join GROUP       pvm_joingroup: "joined INST"
 *    barrier G N      pvm_barrier(G, N): "barrier RC" once it returns
 *    reduce G ROOT    pvm_reduce(PvmSum, one int, G, ROOT): "reduce RC" once it returns
 *    recvinfo NAME    pvm_recvinfo(NAME, 0, PvmMboxWaitForInfo): "recvinfo BUFID"
 *    putinfo NAME     pvm_putinfo(NAME, one int, PvmMboxDefault): "putinfo INDEX"
 *    notify TID TAG   pvm_notify(PvmTaskExit, TAG, 1, TID): "notify RC"
 *    sendn TID TAG N  N ints to TID with TAG, 3 ms apart (each receive of them blocks):
 *                     "sentn RC" (the first failure, else 0)
 *    recvn TID TAG N  N receives from TID with TAG: "recvn RC" (the first failure, else 0)
 *    exit             pvm_exit, then the process ends ("bye" first)
 *  End of input is exit.  With the argument "deadlock" (a task of a gimpirun job) it reads
 *  nothing: it prints "ready t<tid>", then receives from the next of its siblings with tag
 *  7 + its place among them, which never sends, for good (t/live_view_vm.sh).
 */
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/*  Obeys one command line; 1 when the program must end. */
static int s_command(char *line)
{
    char cmd[32] = "", a[256] = "", b[32] = "", c[32] = "";
    if (sscanf(line, "%31s %255s %31s %31s", cmd, a, b, c) < 1)
        return 0;
    int tid = !strcmp(a, "-1") ? -1 : (int)strtol(a, NULL, 16);
    if (!strcmp(cmd, "recv"))
        printf("recv %d\n", pvm_recv(tid, atoi(b)));
    else if (!strcmp(cmd, "trecv")) {
        struct timeval tmout = { atoi(c), 0 };
        printf("trecv %d\n", pvm_trecv(tid, atoi(b), &tmout));
    } else if (!strcmp(cmd, "send")) {
        int v = 42;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        printf("sent %d\n", pvm_send(tid, atoi(b)));
    } else if (!strcmp(cmd, "join"))
        printf("joined %d\n", pvm_joingroup(a));
    else if (!strcmp(cmd, "barrier"))
        printf("barrier %d\n", pvm_barrier(a, atoi(b)));
    else if (!strcmp(cmd, "reduce")) {
        int v = 1;
        printf("reduce %d\n", pvm_reduce(PvmSum, &v, 1, PVM_INT, 20, a, atoi(b)));
    } else if (!strcmp(cmd, "recvinfo"))
        printf("recvinfo %d\n", pvm_recvinfo(a, 0, PvmMboxWaitForInfo));
    else if (!strcmp(cmd, "putinfo")) {
        int v = 7, buf = pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        printf("putinfo %d\n", pvm_putinfo(a, buf, PvmMboxDefault));
    } else if (!strcmp(cmd, "sendn") || !strcmp(cmd, "recvn")) {
        int rc = 0, v = 1;
        for (int k = 0; k < atoi(c) && rc >= 0; k++) {
            if (cmd[0] == 'r') {
                rc = pvm_recv(tid, atoi(b));
                continue;
            }
            struct timespec ts = { 0, 3000000 };
            nanosleep(&ts, NULL);
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&v, 1, 1);
            rc = pvm_send(tid, atoi(b));
        }
        printf("%sn %d\n", cmd[0] == 'r' ? "recv" : "sent", rc < 0 ? rc : 0);
    } else if (!strcmp(cmd, "notify"))
        printf("notify %d\n", pvm_notify(PvmTaskExit, atoi(b), 1, &tid));
    else if (!strcmp(cmd, "exit"))
        return 1;
    else
        printf("unknown %s\n", cmd);
    fflush(stdout);
    return 0;
}

/*  Receives from the next sibling, which receives from its own next: a deadlock. */
static int s_deadlock(int me)
{
    int *tids;
    int n = pvm_siblings(&tids), i = 0;
    while (i < n && tids[i] != me)
        i++;
    if (n < 2 || i == n)
        return 1;
    printf("ready t%x\n", (unsigned)me);
    fflush(stdout);
    printf("recv %d\n", pvm_recv(tids[(i + 1) % n], 7 + i));
    return 0;
}

/*  Enrols, then obeys stdin until exit or its end (or deadlocks). */
int main(int argc, char **argv)
{
    int me = pvm_mytid();
    if (me < 0)
        return 1;
    if (argc > 1 && !strcmp(argv[1], "deadlock"))
        return s_deadlock(me);
    printf("ready t%x\n", (unsigned)me);
    fflush(stdout);
    char line[512];
    while (fgets(line, sizeof line, stdin))
        if (s_command(line))
            break;
    printf("bye\n");
    fflush(stdout);
    pvm_exit();
    return 0;
}
