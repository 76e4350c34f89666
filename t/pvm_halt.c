/*  t/pvm_halt.c — the programs of t/pvm_halt.sh.  `master N [ign]`: spawns N children that
 *  wait for ever, prints "children N" once they run, then pvm_halt; with `ign` it ignores
 *  SIGTERM first and prints what pvm_halt returned (PVM's pvmd SIGTERMs the caller too).
 *  `lone`: enrols from the shell, prints "lone", waits for ever.
 *  `start`: pvm_start_pvmd's answer, then (when it started one) the tid it enrolled with.
 */
#include "pvm3.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pvm_setopt(PvmAutoErr, 0);
    if (argc > 1 && !strcmp(argv[1], "child")) {
        int parent = pvm_parent();
        pvm_initsend(PvmDataDefault);
        pvm_send(parent, 1);
        pvm_recv(parent, 99);   /* never sent: halt ends this */
        return 3;
    }
    if (argc > 1 && !strcmp(argv[1], "lone")) {    /* started from the shell */
        printf("lone %x\n", (unsigned)pvm_mytid());
        pvm_recv(-1, 99);       /* never sent: halt ends this */
        return 3;
    }
    if (argc > 1 && !strcmp(argv[1], "start")) {
        char *opts[] = { (char *)"-d0", NULL };
        int rc = pvm_start_pvmd(argc > 2 ? 1 : 0, argc > 2 ? opts : NULL, 1);
        printf("start %d\n", rc);
        if (rc == 0)
            printf("tid %x\n", (unsigned)pvm_mytid());
        char *hostfile[] = { (char *)"hosts", NULL };
        printf("hostfile %d\n", pvm_start_pvmd(1, hostfile, 0));
        printf("again %d\n", pvm_start_pvmd(0, NULL, 0));
        pvm_exit();
        return 0;
    }
    if (argc < 3 || strcmp(argv[1], "master"))
        return 2;
    int n = atoi(argv[2]);
    char *args[] = { (char *)"child", NULL };
    int tids[16];
    if (n < 1 || n > 16 || pvm_spawn(argv[0], args, PvmTaskDefault, NULL, n, tids) != n)
        return 4;
    for (int i = 0; i < n; i++)
        if (pvm_trecv(tids[i], 1, &(struct timeval){ 60, 0 }) <= 0)
            return 5;
    printf("children %d\n", n);
    if (argc > 3)
        signal(SIGTERM, SIG_IGN);
    int rc = pvm_halt();
    printf("halt %d\n", rc);
    return 0;
}
