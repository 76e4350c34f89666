/*  pvm_master_worker.c — a PVM-style master/worker program with dynamic groups, written
 *  for gimpi's examples (it uses only <pvm3.h>, so it builds against PVM 3.4 too).
 *
 *  Every task joins the group "mw" and waits in a barrier until all have joined.  The
 *  task holding instance 0 is the master: it broadcasts the work (add up k*k for k = 1..n,
 *  each task taking a share), every task computes its share, the shares are gathered at
 *  the master (one per instance) and also summed by pvm_reduce(PvmSum); the largest term
 *  of any share is found with pvm_reduce(PvmMax).  The master checks both results against
 *  the closed forms and prints one line, ending in OK or FAILED.  Run it with
 *
 *      gimpirun -np 4 examples/pvm_master_worker [n]          (n: default 100000)
 *
 *  Exit status 0 when the check passed (every task), 1 otherwise.  Built against PVM 3.4.6
 *  on a 64-bit machine it prints FAILED for the default n: PVM's reduce and gather carry
 *  a long as 32 bits (doc/porting.md, section 5); with n = 1000 it passes there too.
 */
#include <pvm3.h>

#include <stdio.h>
#include <stdlib.h>

#define GROUP "mw"

enum { TAG_WORK = 1, TAG_SHARES = 2, TAG_SUM = 3, TAG_MAX = 4 };

/*  Prints the PVM error of a failed call and leaves with status 1. */
static int fail(const char *what)
{
    pvm_perror((char *)what);
    pvm_exit();
    return 1;
}

/*  Sum of k*k for k in [lo, hi). */
static long sum_of_squares(long lo, long hi)
{
    long s = 0;
    for (long k = lo; k < hi; k++)
        s += k * k;
    return s;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    if (n < 1 || n > 1000000) {
        fprintf(stderr, "usage: %s [n]   (1 <= n <= 1000000)\n", argv[0]);
        return 2;
    }
    if (pvm_mytid() < 0)
        return fail("pvm_mytid");
    int *sibs;
    int ntask = pvm_siblings(&sibs);            /* the tasks gimpirun started together */
    int me = pvm_joingroup(GROUP);
    if (me < 0)
        return fail("pvm_joingroup");
    if (pvm_barrier(GROUP, ntask) < 0)          /* everybody has joined */
        return fail("pvm_barrier");
    int size = pvm_gsize(GROUP);
    int master = pvm_gettid(GROUP, 0);
    if (size < 1 || master < 0)
        return fail("group lookup");

    /* the master hands out the work; the others receive it as an ordinary message */
    long work[2] = { n, size };
    if (me == 0) {
        pvm_initsend(PvmDataDefault);
        pvm_pklong(work, 2, 1);
        if (size > 1 && pvm_bcast(GROUP, TAG_WORK) < 0)
            return fail("pvm_bcast");
    } else {
        if (pvm_recv(master, TAG_WORK) < 0 || pvm_upklong(work, 2, 1) < 0)
            return fail("receiving the work");
    }

    /* this task's share: k in [lo, hi) of 1..n */
    long lo = 1 + work[0] * me / work[1], hi = 1 + work[0] * (me + 1) / work[1];
    long share = sum_of_squares(lo, hi);
    long biggest = hi > lo ? (hi - 1) * (hi - 1) : 0;

    long *shares = me == 0 ? calloc((size_t)size, sizeof *shares) : NULL;
    if (me == 0 && !shares)
        return fail("calloc");
    if (pvm_gather(shares, &share, 1, PVM_LONG, TAG_SHARES, GROUP, 0) < 0)
        return fail("pvm_gather");
    long total = share;                         /* reduce leaves the result here at the root */
    if (pvm_reduce(PvmSum, &total, 1, PVM_LONG, TAG_SUM, GROUP, 0) < 0)
        return fail("pvm_reduce(PvmSum)");
    if (pvm_reduce(PvmMax, &biggest, 1, PVM_LONG, TAG_MAX, GROUP, 0) < 0)
        return fail("pvm_reduce(PvmMax)");

    int ok = 1;
    if (me == 0) {
        long gathered = 0;
        for (int i = 0; i < size; i++)
            gathered += shares[i];
        long expect = n * (n + 1) * (2 * n + 1) / 6;
        ok = total == expect && gathered == expect && biggest == n * n;
        printf("master-worker: %d task%s, sum of k*k for k = 1..%ld: reduce %ld, gather %ld,"
               " expected %ld; largest term %ld: %s\n", size, size == 1 ? "" : "s",
               n, total, gathered, expect, biggest, ok ? "OK" : "FAILED");
        fflush(stdout);
        free(shares);
    }
    /* nobody leaves before everybody is done with the group */
    if (pvm_barrier(GROUP, size) < 0 || pvm_lvgroup(GROUP) < 0)
        return fail("leaving");
    pvm_exit();
    return ok ? 0 : 1;
}
