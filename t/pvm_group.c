/*  t/pvm_group.c — PVM's group calls (libgimpi/pvm/pvm_group.c) on a private groupd: this
 *  process is a PVM task started from the shell, and "peers" are copies of it (re-executed,
 *  each a task of its own) that obey one-line commands on a pipe, so that several members
 *  can join, wait in barriers and freeze.  Checked: every call's result and every error
 *  code, that pvm_errno is set (not by pvm_freezegroup) and that nothing is printed with
 *  PvmAutoErr on (but for reduce, gather and scatter, as PVM), that the tids are the ones
 *  pvm_send uses (to itself: across one-task jobs t/gimpirun_pvm.sh checks), the fixes
 *  listed in doc/pvm-differences.md, "Groups" (gettid at capacity, getinst(-1), barrier
 *  count < 1 without poisoning), barrier arbitration (first count wins, mismatch not
 *  counted), freeze, and groupd's death while waiting in a barrier: PvmSysErr within 2 s.
 *  Every wait is bounded.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"
#include "pvm3.h"
#include "pvmtest.h"
#include "pvmpeer.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

static char s_ep[600];

/* ------------------------------------------------------------------ the peer side */

/*  A peer: reads "op group arg" lines, makes the call, prints its result. */
static int s_peer_main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    char line[256], op[32], group[128];
    while (fgets(line, sizeof line, stdin)) {
        int arg = 0, rc;
        if (sscanf(line, "%31s %127s %d", op, group, &arg) < 1)
            continue;
        if (!strcmp(op, "tid"))
            rc = pvm_mytid();
        else if (!strcmp(op, "join"))
            rc = pvm_joingroup(group);
        else if (!strcmp(op, "leave"))
            rc = pvm_lvgroup(group);
        else if (!strcmp(op, "barrier"))
            rc = pvm_barrier(group, arg);
        else if (!strcmp(op, "freeze"))
            rc = pvm_freezegroup(group, arg);
        else
            break;
        printf("%d\n", rc);
    }
    pvm_exit();
    return 0;
}

/* ------------------------------------------------------------------ driving peers */

/*  The result of the peer's current command (20 s bound; -9999 when none came). */
static int s_result(peer_t *p)
{
    char line[64];
    return peer_line(p, line, sizeof line) > 0 ? atoi(line) : -9999;
}

/*  A command and its result. */
static int s_do(peer_t *p, const char *op, const char *group, int arg)
{
    peer_send(p, "%s %s %d", op, group, arg);
    return s_result(p);
}

/*  Waits (bounded, 20 s) until n arrivals are recorded. */
static bool s_wait_arrived(const char *group, int n, bool freeze)
{
    return gdt_wait_arrived(s_ep, group, n, freeze);
}

/* ------------------------------------------------------------------ alone */

/*  Calls for the capture checks. */
static int s_call_dup(void *arg) { return pvm_joingroup((char *)arg); }
static int s_call_nogroup(void *arg) { (void)arg; return pvm_gsize("nosuch"); }

/*  Calls for the capture checks of the collectives. */
static int s_call_reduce(void *arg)
{
    int v = 1;
    return pvm_reduce(PvmSum, &v, 1, PVM_INT, 1, (char *)arg, 0);
}
static int s_call_gather(void *arg)
{
    int v = 1, r[4];
    return pvm_gather(r, &v, 1, PVM_INT, 1, (char *)arg, 0);
}
static int s_call_scatter(void *arg)
{
    int v[4] = { 1 }, r;
    return pvm_scatter(&r, v, 1, PVM_INT, 1, (char *)arg, 0);
}
static int s_call_bcast(void *arg) { return pvm_bcast((char *)arg, 1); }

/*  pvm_bcast, pvm_reduce, pvm_gather, pvm_scatter alone in g1: results, codes, what they
 *  print (only reduce, gather and scatter print, as in PVM). */
static void test_coll_errors(int me)
{
    char out[512], want[128];
    pvm_initsend(PvmDataDefault);
    cmp_ok(pvmtest_capture(s_call_bcast, "g1", out, sizeof out), "==", PvmNoInst,
           "bcast by the only member: PvmNoInst (as PVM), nothing sent");
    is(out, "", "silently");
    cmp_ok(pvmtest_capture(s_call_bcast, "nosuch", out, sizeof out), "==", PvmNoGroup,
           "bcast unknown: PvmNoGroup");
    cmp_ok(pvm_bcast(NULL, 1), "==", PvmNullGroup, "bcast NULL: PvmNullGroup");
    cmp_ok(pvm_bcast("g1", -1), "==", PvmBadParam, "bcast tag -1: PvmBadParam");
    int v = 5, r[2] = { 0 };
    cmp_ok(pvm_reduce(PvmSum, &v, 1, PVM_INT, 1, "g1", 0), "==", 0, "reduce alone: 0");
    cmp_ok(v, "==", 5, "the sum of one");
    cmp_ok(pvm_gather(r, &v, 1, PVM_INT, 1, "g1", 0), "==", 0, "gather alone");
    cmp_ok(r[0], "==", 5, "its own slot");
    int s[1] = { 9 };
    cmp_ok(pvm_scatter(&v, s, 1, PVM_INT, 1, "g1", 0), "==", 0, "scatter alone");
    cmp_ok(v, "==", 9, "its own slice");
    snprintf(want, sizeof want, "libpvm [t%x]: pvm_reduce(): No such group\n", (unsigned)me);
    cmp_ok(pvmtest_capture(s_call_reduce, "nosuch", out, sizeof out), "==", PvmNoGroup,
           "reduce unknown: PvmNoGroup");
    is(out, want, "printed as PVM does (PvmAutoErr 1)");
    snprintf(want, sizeof want, "libpvm [t%x]: pvm_gather(): Null group name\n", (unsigned)me);
    cmp_ok(pvmtest_capture(s_call_gather, "", out, sizeof out), "==", PvmNullGroup,
           "gather '': PvmNullGroup");
    is(out, want, "printed");
    cmp_ok(pvmtest_capture(s_call_scatter, "g1x", out, sizeof out), "==", PvmNoGroup,
           "scatter unknown: PvmNoGroup");
    pvm_setopt(PvmAutoErr, 0);
    cmp_ok(pvmtest_capture(s_call_reduce, "nosuch", out, sizeof out), "==", PvmNoGroup,
           "with PvmAutoErr 0");
    is(out, "", "nothing printed");
    pvm_setopt(PvmAutoErr, 1);
    cmp_ok(pvm_reduce(PvmSum, &v, 1, PVM_INT, 1, "g1", 3), "==", PvmNoInst, "root 3: PvmNoInst");
    cmp_ok(pvm_reduce(PvmSum, &v, 0, PVM_INT, 1, "g1", 0), "==", PvmBadParam, "count 0: PvmBadParam");
    cmp_ok(pvm_reduce(NULL, &v, 1, PVM_INT, 1, "g1", 0), "==", PvmBadParam, "func NULL: PvmBadParam");
    cmp_ok(pvm_reduce(PvmSum, &v, 1, PVM_INT, -1, "g1", 0), "==", PvmBadParam, "tag -1: PvmBadParam");
    cmp_ok(pvm_gather(NULL, &v, 1, PVM_INT, 1, "g1", 0), "==", PvmBadParam, "gather NULL result at the root: PvmBadParam");
    cmp_ok(pvm_errno, "==", PvmBadParam, "pvm_errno");
}

/*  Every call and error code that one member can see. */
static void test_alone(void)
{
    int me = pvm_mytid();
    cmp_ok(me, ">", 0x40000, "pvm_mytid 0x%x: a tid groupd reserved", (unsigned)me);
    cmp_ok(pvm_joingroup("g1"), "==", 0, "joingroup: instance 0");
    char out[512];
    pvm_errno = 0;
    cmp_ok(pvmtest_capture(s_call_dup, "g1", out, sizeof out), "==", PvmDupGroup,
           "join again: PvmDupGroup");
    cmp_ok(pvm_errno, "==", PvmDupGroup, "pvm_errno set");
    is(out, "", "nothing printed (PvmAutoErr 1: libgpvm's calls are silent)");
    cmp_ok(pvmtest_capture(s_call_nogroup, NULL, out, sizeof out), "==", PvmNoGroup,
           "gsize unknown: PvmNoGroup");
    is(out, "", "silently");
    cmp_ok(pvm_joingroup(NULL), "==", PvmNullGroup, "join NULL: PvmNullGroup");
    cmp_ok(pvm_joingroup(""), "==", PvmNullGroup, "join '': PvmNullGroup");
    cmp_ok(pvm_errno, "==", PvmNullGroup, "pvm_errno");

    cmp_ok(pvm_gettid("g1", 0), "==", me, "gettid(0) is my tid");
    cmp_ok(pvm_gettid("g1", 1), "==", PvmNoInst, "gettid(free slot): PvmNoInst");
    cmp_ok(pvm_gettid("g1", -1), "==", PvmNoInst, "gettid(-1): PvmNoInst");
    cmp_ok(pvm_gettid("g1", 8), "==", PvmNoInst, "gettid(capacity 8): PvmNoInst (PVM: garbage)");
    cmp_ok(pvm_gettid("g1", 10), "==", PvmNoInst, "gettid(10): PvmNoInst (PVM: garbage)");
    cmp_ok(pvm_gettid("nosuch", 0), "==", PvmNoGroup, "gettid unknown: PvmNoGroup");
    cmp_ok(pvm_gettid(NULL, 0), "==", PvmNullGroup, "gettid NULL: PvmNullGroup");

    cmp_ok(pvm_getinst("g1", me), "==", 0, "getinst(me) = 0");
    cmp_ok(pvm_getinst("g1", -1), "==", PvmNotInGroup, "getinst(-1): PvmNotInGroup (PVM: a free slot)");
    cmp_ok(pvm_getinst("g1", 12345), "==", PvmNotInGroup, "getinst(garbage): PvmNotInGroup");
    cmp_ok(pvm_getinst("nosuch", me), "==", PvmNoGroup, "getinst unknown: PvmNoGroup");
    cmp_ok(pvm_getinst("", me), "==", PvmNullGroup, "getinst '': PvmNullGroup");

    cmp_ok(pvm_gsize("g1"), "==", 1, "gsize 1");
    cmp_ok(pvm_gsize(NULL), "==", PvmNullGroup, "gsize NULL: PvmNullGroup");

    cmp_ok(pvm_barrier("g1", 1), "==", 0, "barrier(1) alone");
    cmp_ok(pvm_barrier("g1", -1), "==", 0, "barrier(-1) alone");
    pvm_errno = 0;
    cmp_ok(pvm_barrier("g1", 0), "==", PvmBadParam, "barrier(0): PvmBadParam (PVM: Mismatch)");
    cmp_ok(pvm_errno, "==", PvmBadParam, "pvm_errno");
    cmp_ok(pvm_barrier("g1", -5), "==", PvmBadParam, "barrier(-5): PvmBadParam");
    cmp_ok(pvm_barrier("g1", 1), "==", 0, "later barriers work: not poisoned (PVM: Mismatch for ever)");
    cmp_ok(pvm_barrier("nosuch", 1), "==", PvmNoGroup, "barrier unknown: PvmNoGroup");
    cmp_ok(pvm_barrier(NULL, 1), "==", PvmNullGroup, "barrier NULL: PvmNullGroup");

    pvm_errno = 0;
    cmp_ok(pvm_freezegroup(NULL, 1), "==", PvmNullGroup, "freeze NULL: PvmNullGroup");
    cmp_ok(pvm_freezegroup("nosuch", 1), "==", PvmNoGroup, "freeze unknown: PvmNoGroup");
    cmp_ok(pvm_freezegroup("g1", 0), "==", PvmBadParam, "freeze(0): PvmBadParam");
    cmp_ok(pvm_errno, "==", 0, "pvm_freezegroup leaves pvm_errno alone (as libgpvm)");

    pvm_initsend(PvmDataDefault);
    int v = 77;
    pvm_pkint(&v, 1, 1);
    int got = 0;
    ok(pvm_send(pvm_gettid("g1", 0), 5) == 0 && pvm_recv(me, 5) > 0
       && pvm_upkint(&got, 1, 1) == 0 && got == 77, "pvm_send to the tid gettid gives");

    test_coll_errors(me);
    cmp_ok(pvm_lvgroup("g1"), "==", 0, "lvgroup");
    cmp_ok(pvm_gsize("g1"), "==", PvmNoGroup, "the last leave deleted the group");
    cmp_ok(pvm_lvgroup("g1"), "==", PvmNoGroup, "leave again: PvmNoGroup");
    cmp_ok(pvm_lvgroup(""), "==", PvmNullGroup, "leave '': PvmNullGroup");
    cmp_ok(pvm_joingroup("g1"), "==", 0, "a new g1 starts at 0");
    cmp_ok(pvm_lvgroup("g1"), "==", 0, "and is left");
}

/* ------------------------------------------------------------------ with peers */

/*  Several members: instances, non-members, barrier arbitration, freeze. */
static void test_members(peer_t *a, peer_t *b, peer_t *c)
{
    int me = pvm_mytid();
    int ta = s_do(a, "tid", "-", 0), tb = s_do(b, "tid", "-", 0);
    ok(ta > 0 && tb > 0 && ta != tb && ta != me && tb != me, "peers have tids of their own");
    cmp_ok(s_do(a, "join", "m", 0), "==", 0, "a joins m: 0");
    cmp_ok(pvm_joingroup("m"), "==", 1, "I join: 1");
    cmp_ok(s_do(b, "join", "m", 0), "==", 2, "b joins: 2");
    cmp_ok(pvm_gsize("m"), "==", 3, "gsize 3");
    cmp_ok(pvm_gettid("m", 0), "==", ta, "gettid(0) is a");
    cmp_ok(pvm_getinst("m", tb), "==", 2, "getinst(b) = 2");
    cmp_ok(pvm_lvgroup("m"), "==", 0, "I leave");
    cmp_ok(pvm_gettid("m", 1), "==", PvmNoInst, "my slot is free");
    cmp_ok(pvm_gsize("m"), "==", 2, "gsize counts members (2)");
    cmp_ok(pvm_joingroup("m"), "==", 1, "I rejoin: the lowest free instance (1)");

    cmp_ok(s_do(a, "join", "other", 0), "==", 0, "a alone in 'other'");
    cmp_ok(pvm_lvgroup("other"), "==", PvmNotInGroup, "leave by a non-member: PvmNotInGroup");
    cmp_ok(pvm_barrier("other", 1), "==", PvmNotInGroup, "barrier by a non-member: PvmNotInGroup");
    cmp_ok(pvm_freezegroup("other", 1), "==", PvmNotInGroup, "freeze by a non-member: PvmNotInGroup");
    cmp_ok(pvm_getinst("other", me), "==", PvmNotInGroup, "getinst of a non-member: PvmNotInGroup");
    pvm_setopt(PvmAutoErr, 0);
    int v = 1, r[4];
    cmp_ok(pvm_reduce(PvmSum, &v, 1, PVM_INT, 1, "other", 0), "==", PvmNotInGroup,
           "reduce by a non-member: PvmNotInGroup");
    cmp_ok(pvm_gather(r, &v, 1, PVM_INT, 1, "other", 0), "==", PvmNotInGroup,
           "gather by a non-member: PvmNotInGroup");
    cmp_ok(pvm_scatter(&v, r, 1, PVM_INT, 1, "other", 0), "==", PvmNotInGroup,
           "scatter by a non-member: PvmNotInGroup");
    pvm_setopt(PvmAutoErr, 1);

    peer_send(a, "barrier m 3");
    ok(s_wait_arrived("m", 1, false), "a waits in barrier(m, 3)");
    cmp_ok(pvm_barrier("m", 2), "==", PvmMismatch, "my barrier(m, 2): PvmMismatch at once");
    peer_send(b, "barrier m 3");
    ok(s_wait_arrived("m", 2, false), "b waits too: my mismatch was not counted");
    cmp_ok(pvm_barrier("m", 3), "==", 0, "I retry with 3: released");
    ok(s_result(a) == 0 && s_result(b) == 0, "a and b released with 0");
    peer_send(a, "barrier m -1");       /* membership unchanged: a data-plane barrier */
    peer_send(b, "barrier m -1");
    cmp_ok(pvm_barrier("m", -1), "==", 0, "barrier(m, -1) with the others: released");
    ok(s_result(a) == 0 && s_result(b) == 0, "all released");

    peer_send(a, "freeze m 3");
    ok(s_wait_arrived("m", 1, true), "a waits in freeze(m, 3)");
    pvm_errno = 0;
    cmp_ok(pvm_freezegroup("m", 2), "==", PvmMismatch, "freeze(m, 2): PvmMismatch");
    cmp_ok(pvm_errno, "==", 0, "(pvm_errno untouched)");
    peer_send(b, "freeze m -1");
    ok(s_wait_arrived("m", 2, true), "b waits with -1");
    cmp_ok(pvm_freezegroup("m", 3), "==", 3, "I complete it: freezegroup returns the size (3)");
    ok(s_result(a) == 3 && s_result(b) == 3, "a and b get 3 too");
    cmp_ok(s_do(c, "join", "m", 0), "==", PvmNotInGroup, "joining a frozen group: PvmNotInGroup");
    cmp_ok(pvm_freezegroup("m", 3), "==", PvmDupGroup, "a second freeze: PvmDupGroup");
    cmp_ok(pvm_gsize("m"), "==", 3, "frozen: gsize 3");
    cmp_ok(pvm_gettid("m", 0), "==", ta, "frozen: gettid");
    cmp_ok(s_do(b, "barrier", "m", 0), "==", PvmBadParam, "b's barrier(m, 0): PvmBadParam");
    peer_send(a, "barrier m 3");
    peer_send(b, "barrier m 3");
    ok(s_wait_arrived("m", 2, false), "a barrier on the frozen group");
    cmp_ok(pvm_barrier("m", 3), "==", 0, "completes");
    ok(s_result(a) == 0 && s_result(b) == 0, "for all three");
}

/*  Kills groupd once `group` has one barrier arrival (thread: no PVM calls here). */
typedef struct {
    gdt_daemon_t *d;
    const char *group;
    int64_t killed_ms;
} killer_t;

static void *s_killer(void *arg)
{
    killer_t *k = arg;
    if (s_wait_arrived(k->group, 1, false)) {
        k->killed_ms = tl_now_ms();
        gdt_kill(k->d);
    }
    return NULL;
}

/*  groupd dies while I wait in a barrier: PvmSysErr within 2 s, and for every later call. */
static void test_groupd_death(gdt_daemon_t *d, peer_t *a)
{
    cmp_ok(pvm_joingroup("d"), ">=", 0, "I join d");
    cmp_ok(s_do(a, "join", "d", 0), ">=", 0, "a joins d");
    killer_t k = { .d = d, .group = "d" };
    pthread_t th;
    pthread_create(&th, NULL, s_killer, &k);
    pvm_errno = 0;
    int rc = pvm_barrier("d", 2);
    int64_t back = tl_now_ms();
    pthread_join(th, NULL);
    cmp_ok(rc, "==", PvmSysErr, "groupd killed while I wait in barrier(d, 2): PvmSysErr");
    ok(k.killed_ms > 0 && back - k.killed_ms < 2000, "within 2 s (%lld ms)",
       (long long)(back - k.killed_ms));
    cmp_ok(pvm_errno, "==", PvmSysErr, "pvm_errno");
    int64_t t0 = tl_now_ms();
    cmp_ok(pvm_gsize("d"), "==", PvmSysErr, "a later call: PvmSysErr");
    cmp_ok(pvm_joingroup("e"), "==", PvmSysErr, "and another");
    cmp_ok(tl_now_ms() - t0, "<", 2000, "at once");
    cmp_ok(s_do(a, "barrier", "d", 2), "==", PvmSysErr, "a's next call: PvmSysErr");
    int me = pvm_mytid();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    int got = 0;
    ok(pvm_send(me, 8) == 0 && pvm_recv(me, 8) > 0 && pvm_upkint(&got, 1, 1) == 0 && got == me,
       "messages still work without groupd");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "peer"))
        return s_peer_main();
    plan(NO_PLAN);
    gtap_watchdog(300);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    snprintf(s_ep, sizeof s_ep, "%s", d.endpoint);
    setenv("GIMPI_GROUPD", d.endpoint, 1);
    peer_t a, b, c;
    if (peer_start(&a, "pvm_group") < 0 || peer_start(&b, "pvm_group") < 0 || peer_start(&c, "pvm_group") < 0)
        BAIL_OUT("cannot start peers");
    test_alone();
    test_members(&a, &b, &c);
    test_groupd_death(&d, &a);
    peer_stop(&a);
    peer_stop(&b);
    peer_stop(&c);
    cmp_ok(pvm_exit(), "==", 0, "pvm_exit");
    gdt_stop(&d);
    gdt_cleanup(&d);
    done_testing();
}
