/*  t/reduce_gdkill.c — the task of t/pvm_reduce_gdkill.sh (issue 25 point 6): N copies
 *  join group "g" and loop pvm_barrier + pvm_reduce(PvmSum, root 0) while the test kills
 *  groupd.  Every round each task prints its calls' return codes and what it holds; the
 *  root checks that a reduce returning 0 holds the full sum of its round (each instance
 *  gives inst + 1 + 1000 * round: a sum that mixes rounds is caught too) and prints
 *  "PARTIAL" (exit 3) when it does not.  The mode
 *  letters choose the loop's shape: r = the reduce before the barrier, q = pvm_gsize and
 *  pvm_getinst in the loop, x = stop at the first failed call (else the task loops on),
 *  k = skip the round's reduce when its barrier failed, o = the other members stop at
 *  their first failed call and exit while the root loops on.  The program never waits
 *  unbounded: the test bounds it with timeout, and "start" and "joined" lines let the
 *  test kill groupd at those moments.
 */
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  One round's barrier: returns its code. */
static int s_barrier(int n)
{
    return pvm_barrier("g", n);
}

/*  One round's reduce: returns its code, *sum what this task holds after it. */
static int s_reduce(int inst, int round, int *sum)
{
    *sum = inst + 1 + 1000 * round;
    return pvm_reduce(PvmSum, sum, 1, PVM_INT, 5, "g", 0);
}

/*  Usage: reduce_gdkill N ROUNDS [MODE]. */
int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int n = atoi(argv[1]), rounds = atoi(argv[2]);
    const char *mode = argc > 3 ? argv[3] : "";
    int early = strchr(mode, 'r') != NULL, query = strchr(mode, 'q') != NULL;
    int stop = strchr(mode, 'x') != NULL, others = strchr(mode, 'o') != NULL;
    int skip = strchr(mode, 'k') != NULL;
    int partial = 0;
    pvm_setopt(PvmAutoErr, 0);
    printf("start %d\n", pvm_mytid() > 0);
    fflush(stdout);
    int inst = pvm_joingroup("g");
    printf("joined %d\n", inst);
    fflush(stdout);
    if (inst < 0)
        return 1;
    if (pvm_barrier("g", n) < 0)
        printf("T%d first barrier failed\n", inst);
    for (int r = 0; r < rounds; r++) {
        int sum = -1, d = 0, b = 0, gs = 0, gi = 0, expect = n * (n + 1) / 2 + n * 1000 * r;
        if (early)
            d = s_reduce(inst, r, &sum);
        b = s_barrier(n);
        if (!early && !(skip && b < 0))
            d = s_reduce(inst, r, &sum);
        if (query) {
            gs = pvm_gsize("g");
            gi = pvm_getinst("g", pvm_mytid());
        }
        printf("T%d R%d B%d D%d S%d Q%d,%d\n", inst, r, b, d, sum, gs, gi);
        if (inst == 0 && d == 0 && sum != expect && !(skip && b < 0 && !early)) {
            printf("PARTIAL T%d R%d sum %d expected %d\n", inst, r, sum, expect);
            partial = 1;
        }
        fflush(stdout);
        if ((stop || (others && inst > 0)) && (b < 0 || d < 0))
            break;
    }
    pvm_exit();
    return partial ? 3 : 0;
}
