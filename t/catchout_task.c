/*  catchout_task.c — the PVM program of t/pvm_catchout.sh: a master that calls
 *  pvm_catchout(stdout) and spawns children (this program again) that write to stdout
 *  and stderr, with and without a last newline, in pieces, spawn a grandchild, kill
 *  themselves or wait to be killed.  The master prints the tids it got, so that the
 *  script can compare every child's lines with the ones PVM 3.4.6 writes (measured
 *  with the same scenarios, doc/pvm-differences.md).
 *
 *  catchout_task master SCENARIO    two | partial | kill | pvmkill | grand | off |
 *                                   notids | wait | bound
 *  catchout_task child MODE         (started by the master)
 */
#include "pvm3.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*  Sleeps ms milliseconds. */
static void s_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/*  A child: writes what its mode says, then leaves. */
static int s_child(const char *mode, const char *self)
{
    int me = pvm_mytid();
    if (!strcmp(mode, "plain") || !strcmp(mode, "gplain")) {
        printf("hello from t%x\n", (unsigned)me);
        printf("second line\n");
        fflush(stdout);
        fprintf(stderr, "to stderr\n");
        printf("no newline at end");
        fflush(stdout);
        if (!strcmp(mode, "gplain")) {  /* a grandchild: its parent waits for this */
            pvm_initsend(PvmDataDefault);
            pvm_send(pvm_parent(), 2);
        }
    } else if (!strcmp(mode, "partial")) {
        printf("part1 ");
        fflush(stdout);
        s_sleep_ms(200);
        printf("part2\n");
        fflush(stdout);
        printf("\n");
        fflush(stdout);
    } else if (!strcmp(mode, "kill")) {
        printf("before kill\n");
        fflush(stdout);
        printf("unterminated");
        fflush(stdout);
        kill(getpid(), SIGKILL);
    } else if (!strcmp(mode, "hang")) {
        printf("waiting to be killed\n");
        fflush(stdout);
        pvm_initsend(PvmDataDefault);
        pvm_send(pvm_parent(), 1);
        pvm_recv(pvm_parent(), 99);     /* never sent: fails once the parent has left */
    } else if (!strcmp(mode, "grand")) {
        printf("parent of grandchild\n");
        fflush(stdout);
        char *args[] = { "child", "gplain", NULL };
        int t = 0;
        pvm_spawn((char *)self, args, PvmTaskDefault, "", 1, &t);
        printf("spawned grandchild t%x\n", (unsigned)t);
        fflush(stdout);
        pvm_recv(t, 2);                 /* it has called us: no connection left to refuse */
    } else if (!strcmp(mode, "slow")) {
        s_sleep_ms(1000);
        printf("slow line after 1s\n");
        fflush(stdout);
    }
    pvm_exit();
    return 0;
}

/*  The master of one scenario. */
static int s_master(const char *scen, const char *self)
{
    int me = pvm_mytid(), tids[2];
    printf("master t%x\n", (unsigned)me);
    fflush(stdout);
    pvm_catchout(stdout);
    const char *mode = "plain";
    int n = 1;
    if (!strcmp(scen, "two"))
        n = 2;
    else if (!strcmp(scen, "partial") || !strcmp(scen, "kill") || !strcmp(scen, "grand")
             || !strcmp(scen, "slow"))
        mode = scen;
    else if (!strcmp(scen, "pvmkill") || !strcmp(scen, "bound"))
        mode = "hang";
    else if (!strcmp(scen, "off") || !strcmp(scen, "wait"))
        mode = "slow";
    else if (!strcmp(scen, "notids"))
        pvm_setopt(PvmShowTids, 0);
    char *args[] = { "child", (char *)mode, NULL };
    int got = pvm_spawn((char *)self, args, PvmTaskDefault, "", n, tids);
    char line[256];                     /* one call: the catching thread writes to stdout
                                           too, between calls (doc/pvm-differences.md) */
    int len = snprintf(line, sizeof line, "spawned %d:", got);
    for (int i = 0; i < got && len < (int)sizeof line - 12; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, " t%x", (unsigned)tids[i]);
    printf("%s\n", line);
    fflush(stdout);
    if (!strcmp(scen, "off")) {
        pvm_catchout(NULL);
        printf("catchout off\n");
        fflush(stdout);
        s_sleep_ms(1500);               /* the child's line comes meanwhile: dropped */
    }
    if (!strcmp(mode, "hang") && got == 1) {
        pvm_recv(tids[0], 1);
        if (!strcmp(scen, "pvmkill"))
            pvm_kill(tids[0]);
    }
    printf("master exiting\n");
    fflush(stdout);
    pvm_exit();
    printf("after pvm_exit\n");
    return 0;
}

/*  master SCENARIO or child MODE. */
int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "master"))
        return s_master(argv[2], argv[0]);
    if (argc == 3 && !strcmp(argv[1], "child"))
        return s_child(argv[2], argv[0]);
    fprintf(stderr, "usage: %s master SCENARIO | child MODE\n", argv[0]);
    return 2;
}
