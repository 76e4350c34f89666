/*  t/pvm_liveness.c — collectives and receives that end when a member stops answering
 *  (t/pvm_liveness.sh, under gimpirun -np 4).  argv[1]:
 *    barrier  all join "g" and pass one barrier; the last task then stops itself (SIGSTOP);
 *             the others enter a second barrier and must get an error within the
 *             liveness bound (groupd drops the silent task, the data plane asks)
 *    reduce   the same with a reduce to instance 0 instead of the barrier
 *    recv     the others wait in pvm_recv(stopped tid): an error, not a hang
 *    late     no stop: the last task enters the second barrier (which runs on the data
 *             plane) only once the file argv[2] exists, so that gimpi-stat can see the
 *             others waiting; after it every task prints "t<i> late ok" and waits for the
 *             file argv[3] before it leaves
 *  Each survivor prints "t<i> <mode> failed after <ms> ms: <code>"; the stopped task prints
 *  "t3 stopping <pid>" first and, once continued, exits quietly.  A survivor whose call
 *  succeeds or waits past 20 s prints FAIL.
 */
#include "pvm3.h"
#include "taskcheck.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*  Monotonic milliseconds. */
static long s_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "barrier";
    int *tids, n = pvm_siblings(&tids), me = pvm_mytid(), i;
    for (i = 0; i < n && tids[i] != me; i++)
        ;
    TASK_CHECK("t", i, n == 4 && i < 4, "want 4 siblings, have %d", n);
    TASK_CHECK("t", i, pvm_joingroup("g") >= 0, "join");
    TASK_CHECK("t", i, pvm_barrier("g", 4) == 0, "first barrier");
    int root = pvm_getinst("g", tids[0]);
    if (!strcmp(mode, "late") && argc > 3) {
        if (i == 3) {
            printf("t3 late\n");
            fflush(stdout);
            for (int k = 0; k < 6000 && access(argv[2], F_OK) != 0; k++)
                usleep(10000);
        }
        TASK_CHECK("t", i, pvm_barrier("g", 4) == 0, "second barrier");
        printf("t%d late ok\n", i);
        fflush(stdout);
        for (int k = 0; k < 6000 && access(argv[3], F_OK) != 0; k++)
            usleep(10000);
        pvm_lvgroup("g");
        pvm_exit();
        return 0;
    }
    if (i == 3) {
        printf("t3 stopping %d\n", (int)getpid());
        fflush(stdout);
        raise(SIGSTOP);
        pvm_exit();                 /* continued: the others have given up on us */
        return 0;
    }
    long t0 = s_ms();
    int rc;
    if (!strcmp(mode, "reduce")) {
        int x = 1;
        rc = 0;
        for (int k = 0; k < 1000000 && rc == 0; k++)    /* (the non-roots finish at once) */
            rc = pvm_reduce(PvmSum, &x, 1, PVM_INT, 7, "g", root);
    } else if (!strcmp(mode, "recv"))
        rc = pvm_recv(tids[3], -1);
    else
        rc = pvm_barrier("g", 4);
    long ms = s_ms() - t0;
    TASK_CHECK("t", i, rc < 0, "%s returned %d after %ld ms", mode, rc, ms);
    TASK_CHECK("t", i, ms < 20000, "%s failed only after %ld ms", mode, ms);
    printf("t%d %s failed after %ld ms: %d\n", i, mode, ms, rc);
    fflush(stdout);
    pvm_exit();
    return 0;
}
