/*  pvm_spawn_farm.c — a PVM-style task farm started from the shell, written for gimpi's
 *  examples (it uses only <pvm3.h>).  The same program is the master and the workers.
 *
 *  Started with no parent (from the shell, or by gimpirun -np 1) it is the master: it
 *  spawns W copies of itself with pvm_spawn (by bare name, found beside the program),
 *  waits until each has joined the group "farm" and said so, broadcasts the limit N to
 *  the group (the master is not a member: PVM lets a non-member broadcast), and adds up
 *  the workers' counts of the primes below N, each worker taking the numbers k with
 *  k mod W = its instance.  It also shows that a spawn of a missing program fills its
 *  slot with PvmNoFile.  It prints one line ending in OK or FAILED.
 *
 *      examples/pvm_spawn_farm [W [N]]        (defaults 3 workers, N = 100000)
 *
 *  A spawned copy (pvm_parent() is a tid) is a worker; it prints nothing.  Exit status 0
 *  when the check passed.
 */
#include <pvm3.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP "farm"

enum { TAG_READY = 1, TAG_LIMIT = 2, TAG_COUNT = 3 };

/*  Prints the PVM error of a failed call and leaves with status 1. */
static int fail(const char *what)
{
    pvm_perror((char *)what);
    pvm_exit();
    return 1;
}

/*  1 if k is prime. */
static int is_prime(long k)
{
    if (k < 2)
        return 0;
    for (long d = 2; d * d <= k; d++)
        if (k % d == 0)
            return 0;
    return 1;
}

/*  A worker: joins, reports, counts its primes, reports again, leaves. */
static int worker(int parent)
{
    int *sibs;
    int nsibs = pvm_siblings(&sibs);
    int inst = pvm_joingroup(GROUP);
    if (inst < 0)
        return fail("worker: pvm_joingroup");
    int hello[2] = { inst, nsibs };
    pvm_initsend(PvmDataDefault);
    pvm_pkint(hello, 2, 1);
    if (pvm_send(parent, TAG_READY) < 0)
        return fail("worker: pvm_send");
    long limit[2];                              /* N and the number of workers */
    if (pvm_recv(parent, TAG_LIMIT) < 0 || pvm_upklong(limit, 2, 1) < 0)
        return fail("worker: receiving the limit");
    long count = 0;
    for (long k = inst; k < limit[0]; k += limit[1])
        count += is_prime(k);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&inst, 1, 1);
    pvm_pklong(&count, 1, 1);
    if (pvm_send(parent, TAG_COUNT) < 0)
        return fail("worker: pvm_send");
    pvm_lvgroup(GROUP);
    pvm_exit();
    return 0;
}

/*  The master: spawns, broadcasts, collects, checks. */
static int master(const char *self, int nw, long n)
{
    const char *name = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
    int me = pvm_mytid();
    int bad, old = pvm_setopt(PvmAutoErr, 0);   /* the failure below is on purpose */
    int nbad = pvm_spawn("gimpi-no-such-program", NULL, PvmTaskDefault, "", 1, &bad);
    pvm_setopt(PvmAutoErr, old);
    int *tids = calloc((size_t)nw, sizeof *tids);
    if (!tids)
        return fail("calloc");
    int started = pvm_spawn((char *)name, NULL, PvmTaskDefault, "", nw, tids);
    if (started != nw) {
        fprintf(stderr, "spawn-farm: pvm_spawn(\"%s\") started %d of %d\n", name, started, nw);
        for (int i = 0; i < nw; i++)
            if (tids[i] < 0)
                fprintf(stderr, "spawn-farm: slot %d: PVM error %d\n", i, tids[i]);
        return 1;
    }
    int ok = nbad == 0 && bad == PvmNoFile;
    for (int i = 0; i < nw; i++) {              /* every worker has joined */
        int hello[2];
        if (pvm_recv(-1, TAG_READY) < 0 || pvm_upkint(hello, 2, 1) < 0)
            return fail("master: receiving a hello");
        ok = ok && hello[0] >= 0 && hello[0] < nw && hello[1] == nw;
    }
    long limit[2] = { n, nw };
    pvm_initsend(PvmDataDefault);
    pvm_pklong(limit, 2, 1);
    if (pvm_bcast(GROUP, TAG_LIMIT) < 0)
        return fail("master: pvm_bcast");
    long total = 0, expect = 0;
    for (int i = 0; i < nw; i++) {
        int inst;
        long count;
        if (pvm_recv(-1, TAG_COUNT) < 0 || pvm_upkint(&inst, 1, 1) < 0
            || pvm_upklong(&count, 1, 1) < 0)
            return fail("master: receiving a count");
        total += count;
    }
    for (long k = 0; k < n; k++)
        expect += is_prime(k);
    ok = ok && total == expect;
    printf("spawn-farm: master t%x spawned %d workers of \"%s\" (tids t%x..t%x), "
           "a missing program gave %s; primes below %ld: %ld, expected %ld: %s\n",
           (unsigned)me, nw, name, (unsigned)tids[0], (unsigned)tids[nw - 1],
           bad == PvmNoFile ? "PvmNoFile" : "something else", n, total, expect,
           ok ? "OK" : "FAILED");
    fflush(stdout);
    free(tids);
    pvm_exit();
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int nw = argc > 1 ? atoi(argv[1]) : 3;
    long n = argc > 2 ? atol(argv[2]) : 100000;
    if (nw < 1 || nw > 64 || n < 1 || n > 100000000) {
        fprintf(stderr, "usage: %s [workers (1..64) [N (1..1e8)]]\n", argv[0]);
        return 2;
    }
    if (pvm_mytid() < 0)
        return fail("pvm_mytid");
    int parent = pvm_parent();
    return parent > 0 ? worker(parent) : master(argv[0], nw, n);
}
