/*  t/pvm_flood.c — early collective traffic is bounded by flow control, not by memory
 *  (t/pvm_flood.sh, under gimpirun -np 4).  Every task reduces one int to instance 0 in a
 *  loop with no other synchronisation, so the members run ahead of the root and their
 *  contributions pile up there unless credit holds them back.  argv: ROUNDS [KILL]: with
 *  KILL > 0 the last task kills itself (SIGKILL) after KILL rounds and the others must
 *  fail within the liveness bound.  The root prints "root rounds R grew K kB in S ms"
 *  (VmHWM growth over the loop) or "t<i> failed after R rounds at MS: C".
 *  argv[1] "p2p": point to point under the same bound, as PVM programs use it: task 1
 *  sends 5000 messages with tag 1 and one with tag 2 before task 0 receives anything;
 *  task 0 takes the tag-2 one first (pvm_recv naming it), then drains the rest with
 *  pvm_nrecv and pvm_probe loops, checking their order: "p2p ok" when all arrived.
 *  argv[1] "p2pflood": task 1 sends 30000 messages of 1 KiB to task 0, which looks at
 *  nothing for 3 s, then prints "p2pflood grew K kB" (its peak memory over those 3 s) and
 *  takes them all in order: the point-to-point bound (GIMPI_UNEXPECTED_P2P_MAX) keeps the
 *  rest in the sender.
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

/*  The process's peak resident memory, kB (VmHWM). */
static long s_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

/*  The "p2pflood" mode (see the file comment). */
static int s_p2pflood(int i, const int *tids)
{
    enum { N = 30000, LEN = 1024 };
    static char buf[LEN];
    if (i == 1) {
        for (int k = 0; k < N; k++) {
            memcpy(buf, &k, sizeof k);
            pvm_initsend(PvmDataRaw);
            pvm_pkbyte(buf, LEN, 1);
            TASK_CHECK("t", i, pvm_send(tids[0], 3) == 0, "send %d", k);
        }
    } else if (i == 0) {
        long hwm0 = s_hwm_kb();
        usleep(3000000);                /* receives nothing for a while, on purpose */
        printf("p2pflood grew %ld kB\n", s_hwm_kb() - hwm0);
        for (int k = 0; k < N; k++) {
            int v = -1;
            TASK_CHECK("t", i, pvm_recv(tids[1], 3) > 0 && pvm_upkbyte(buf, LEN, 1) == 0,
                       "message %d", k);
            memcpy(&v, buf, sizeof v);
            TASK_CHECK("t", i, v == k, "message %d arrived as %d", k, v);
        }
        printf("p2pflood ok\n");
        fflush(stdout);
    }
    return pvm_barrier("f", 4);
}

/*  The "p2p" mode (see the file comment). */
static int s_p2p(int i, const int *tids)
{
    enum { N = 5000 };
    if (i == 1) {
        for (int k = 0; k <= N; k++) {
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&k, 1, 1);
            TASK_CHECK("t", i, pvm_send(tids[0], k < N ? 1 : 2) == 0, "send %d", k);
        }
    } else if (i == 0) {
        int v = -1;
        TASK_CHECK("t", i, pvm_recv(tids[1], 2) > 0 && pvm_upkint(&v, 1, 1) == 0 && v == N,
                   "the last message first: %d", v);
        for (int k = 0; k < N; k++) {
            int b = k % 2 ? pvm_nrecv(tids[1], 1) : (pvm_probe(tids[1], 1) > 0
                                                      ? pvm_recv(tids[1], 1) : 0);
            if (b == 0) {
                k--;
                continue;
            }
            TASK_CHECK("t", i, b > 0 && pvm_upkint(&v, 1, 1) == 0 && v == k,
                       "message %d: %d (%d)", k, v, b);
        }
        printf("p2p ok\n");
        fflush(stdout);
    }
    return pvm_barrier("f", 4);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 100000, killat = argc > 2 ? atoi(argv[2]) : 0;
    int *tids, n = pvm_siblings(&tids), me = pvm_mytid(), i;
    for (i = 0; i < n && tids[i] != me; i++)
        ;
    TASK_CHECK("t", i, n == 4 && i < 4, "want 4 siblings, have %d", n);
    TASK_CHECK("t", i, pvm_joingroup("f") >= 0 && pvm_barrier("f", 4) == 0, "join");
    if (argc > 1 && (!strcmp(argv[1], "p2p") || !strcmp(argv[1], "p2pflood"))) {
        int rc = !strcmp(argv[1], "p2p") ? s_p2p(i, tids) : s_p2pflood(i, tids);
        pvm_exit();
        return rc < 0;
    }
    int root = pvm_getinst("f", tids[0]);
    int gs = pvm_gsize("f");
    TASK_CHECK("t", i, gs == 4, "gsize after the barrier %d", gs);
    long hwm0 = s_hwm_kb(), t0 = s_ms();
    int rc = 0, r;
    for (r = 0; r < rounds && rc == 0; r++) {
        if (i == 3 && killat > 0 && r == killat) {
            printf("t3 killed at %d %ld\n", r, s_ms());
            fflush(stdout);
            raise(SIGKILL);
        }
        int x = 1;
        rc = pvm_reduce(PvmSum, &x, 1, PVM_INT, 5, "f", root);
        if (rc == 0 && i == 0)
            TASK_CHECK("t", i, x == 4, "round %d: sum %d", r, x);
        if (i == 0 && r % 1000 == 0)
            usleep(2000);               /* the root is the slow one */
    }
    if (rc == 0)        /* nobody leaves before everybody is done (else later views change) */
        rc = pvm_barrier("f", 4);
    if (rc == 0) {
        if (i == 0)
            printf("root rounds %d grew %ld kB in %ld ms\n", r, s_hwm_kb() - hwm0, s_ms() - t0);
        else
            printf("t%d rounds %d grew %ld kB\n", i, r, s_hwm_kb() - hwm0);
    } else
        printf("t%d failed after %d rounds at %ld: %d\n", i, r, s_ms(), rc);
    fflush(stdout);
    pvm_exit();
    return 0;
}
