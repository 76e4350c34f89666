/*  t/groupd_client.c — the groups client of libgimpi (gimpi_group.h) against a real
 *  private groupd, with threads and processes that each own their sockets: instance
 *  recycling, delete-on-empty, the error codes, the cache (answers locally, own changes
 *  visible at once, coherent after a barrier), barrier mismatch / -1 / count > size,
 *  freeze rules, a frozen group losing a member while others wait, a task killed with
 *  SIGKILL while in 5 groups, a task that falls silent (SIGSTOP) removed by the heartbeat,
 *  groupd killed while tasks wait (PvmSysErr within 2 s),
 *  starting a groupd on first use, and the same answers whatever GIMPI_GROUPS_SPIN_US says.  Every wait is bounded; tasks synchronise on replies,
 *  pipes and groupd's own state, never on sleeps.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

static char s_ep[600];

/*  A short pause for bounded state polling (never used to order events). */
static void s_nap(void)
{
    struct timespec ts = { 0, 2 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/*  Waits (bounded, 20 s) until n arrivals are recorded. */
static bool s_wait_arrived(const char *group, int n, bool freeze)
{
    return gdt_wait_arrived(s_ep, group, n, freeze);
}

/* ------------------------------------------------------------------ thread tasks */

typedef struct {
    pthread_t th;
    const char *group;
    int op;                     /* 'b' barrier, 'f' freeze, 'j' join then barrier */
    int arg;
    int result;
    int64_t done_ms;
    gimpi_groups_t *g;          /* owned by the thread when created there */
    bool own;
} task_t;

static void *s_task_main(void *arg)
{
    task_t *t = arg;
    if (!t->g) {
        t->g = gimpi_groups_new(s_ep, NULL);
        t->own = true;
    }
    if (t->op == 'j') {
        gimpi_group_join(t->g, t->group);
        t->result = gimpi_group_barrier(t->g, t->group, t->arg);
    } else if (t->op == 'b')
        t->result = gimpi_group_barrier(t->g, t->group, t->arg);
    else
        t->result = gimpi_group_freeze(t->g, t->group, t->arg);
    t->done_ms = tl_now_ms();
    return NULL;
}

/*  Runs op on g (or a fresh object when g is NULL) in a new thread. */
static void s_run(task_t *t, gimpi_groups_t *g, const char *group, int op, int arg)
{
    memset(t, 0, sizeof *t);
    t->g = g;
    t->group = group;
    t->op = op;
    t->arg = arg;
    t->result = 9999;
    pthread_create(&t->th, NULL, s_task_main, t);
}

static void s_join_thread(task_t *t)
{
    pthread_join(t->th, NULL);
    if (t->own)
        gimpi_groups_destroy(&t->g);
}

/* ------------------------------------------------------------------ tests */

static void test_membership(void)
{
    gimpi_groups_t *w[5];
    for (int k = 0; k < 5; k++)
        w[k] = gimpi_groups_new(s_ep, NULL);
    int tid0 = gimpi_group_mytid(w[0]);
    cmp_ok(tid0, ">", 0, "registered: tid 0x%x", (unsigned)tid0);
    is(gimpi_groups_endpoint(w[0]), s_ep, "endpoint as given");
    for (int k = 0; k < 4; k++)
        cmp_ok(gimpi_group_join(w[k], "rec"), "==", k, "w%d joins 'rec' as %d", k, k);
    cmp_ok(gimpi_group_leave(w[1], "rec"), "==", 0, "w1 leaves");
    /* A leave is deferred: another task sees it once groupd has it (flush waits for that). */
    gimpi_groups_flush(w[1]);
    cmp_ok(gimpi_group_gsize(w[0], "rec"), "==", 3, "gsize 3");
    cmp_ok(gimpi_group_gettid(w[0], "rec", 1), "==", GIMPI_ENOINST, "gettid(1): NoInst");
    cmp_ok(gimpi_group_join(w[4], "rec"), "==", 1, "next joiner gets 1");
    cmp_ok(gimpi_group_join(w[1], "rec"), "==", 4, "w1 rejoins as 4");
    /* (asked by the tasks that changed it: another task's cache may lag behind events) */
    cmp_ok(gimpi_group_gettid(w[1], "rec", 4), "==", gimpi_group_mytid(w[1]), "gettid(4) is w1");
    cmp_ok(gimpi_group_getinst(w[4], "rec", gimpi_group_mytid(w[4])), "==", 1, "getinst(w4) = 1");
    /* what a task registered, for the data plane */
    gimpi_task_info_t info;
    uint8_t hid[16] = { 0xfe, 0x80, 1, 2 }, addr[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
                                                         192, 0, 2, 7 };
    gimpi_groups_t *y = gimpi_groups_new(s_ep, NULL);
    cmp_ok(gimpi_groups_set_identity(y, hid, 123456789012LL, addr, 4242), "==", 0, "identity set");
    int ytid = gimpi_group_mytid(y);
    cmp_ok(gimpi_groups_set_identity(y, hid, 1, addr, 1), "==", GIMPI_EALREADY,
           "identity fixed once registered");
    cmp_ok(gimpi_group_lookup(w[0], ytid, &info), "==", 0, "lookup of a tid");
    ok(!memcmp(info.hostid, hid, 16) && info.pid == 123456789012LL && !memcmp(info.addr, addr, 16)
       && info.port == 4242 && info.ospid == getpid() && *info.host, "IMPI proc, contact, OS pid, host");
    cmp_ok(gimpi_group_lookup(w[0], 12345, &info), "==", GIMPI_ENOTASK, "unknown tid: NoTask");
    gimpi_groups_destroy(&y);
    cmp_ok(gimpi_group_lookup(w[0], ytid, &info), "==", GIMPI_ENOTASK, "gone after destroy");
    /* the errors, client side and daemon side */
    cmp_ok(gimpi_group_join(w[0], "rec"), "==", GIMPI_EDUPGROUP, "join twice: DupGroup");
    cmp_ok(gimpi_group_join(w[0], NULL), "==", GIMPI_ENULLGROUP, "join NULL: NullGroup");
    cmp_ok(gimpi_group_join(w[0], ""), "==", GIMPI_ENULLGROUP, "join '': NullGroup");
    cmp_ok(gimpi_group_gsize(w[0], ""), "==", GIMPI_ENULLGROUP, "gsize '': NullGroup");
    cmp_ok(gimpi_group_leave(w[0], "nosuch"), "==", GIMPI_ENOGROUP, "leave unknown: NoGroup");
    cmp_ok(gimpi_group_gsize(w[0], "nosuch"), "==", GIMPI_ENOGROUP, "gsize unknown: NoGroup");
    cmp_ok(gimpi_group_gettid(w[0], "nosuch", 0), "==", GIMPI_ENOGROUP, "gettid unknown: NoGroup");
    cmp_ok(gimpi_group_getinst(w[0], "nosuch", tid0), "==", GIMPI_ENOGROUP, "getinst unknown: NoGroup");
    gimpi_groups_t *x = gimpi_groups_new(s_ep, NULL);
    cmp_ok(gimpi_group_leave(x, "rec"), "==", GIMPI_ENOTINGROUP, "leave by non-member: NotInGroup");
    cmp_ok(gimpi_group_getinst(x, "rec", 12345), "==", GIMPI_ENOTINGROUP, "getinst garbage tid: NotInGroup");
    cmp_ok(gimpi_group_getinst(x, "rec", -1), "==", GIMPI_ENOTINGROUP, "getinst -1: NotInGroup");
    cmp_ok(gimpi_group_gettid(x, "rec", -1), "==", GIMPI_ENOINST, "gettid -1: NoInst");
    cmp_ok(gimpi_group_gettid(x, "rec", 8), "==", GIMPI_ENOINST, "gettid at capacity: NoInst");
    cmp_ok(gimpi_group_barrier(x, "rec", 2), "==", GIMPI_ENOTINGROUP, "barrier by non-member");
    cmp_ok(gimpi_group_freeze(x, "rec", 2), "==", GIMPI_ENOTINGROUP, "freeze by non-member");
    cmp_ok(gimpi_group_barrier(w[0], "rec", 0), "==", GIMPI_EBADPARAM, "barrier 0: BadParam");
    cmp_ok(gimpi_group_barrier(w[0], "rec", -2), "==", GIMPI_EBADPARAM, "barrier -2: BadParam");
    cmp_ok(gimpi_group_barrier(w[0], "nosuch", 2), "==", GIMPI_ENOGROUP, "barrier unknown: NoGroup");
    cmp_ok(gimpi_group_freeze(w[0], "nosuch", 2), "==", GIMPI_ENOGROUP, "freeze unknown: NoGroup");
    char *big = malloc(GD_MAX_NAME + 2);
    memset(big, 'n', GD_MAX_NAME + 1);
    big[GD_MAX_NAME + 1] = 0;
    cmp_ok(gimpi_group_join(w[0], big), "==", GIMPI_EBADPARAM, "oversize name: BadParam");
    big[400] = 0;
    cmp_ok(gimpi_group_join(w[0], big), "==", 0, "400-character name is fine");
    free(big);
    /* names are exact: a prefix is another group */
    cmp_ok(gimpi_group_join(w[0], "re"), "==", 0, "'re' is not 'rec'");
    cmp_ok(gimpi_group_gsize(w[1], "re"), "==", 1, "gsize 're' 1");
    /* the cache: repeated queries become local */
    uint64_t l0, l1, r0, r1;
    ok(tl_group_warm(x, "rec"), "x's cache of 'rec' becomes current");
    gimpi_groups_counters(x, &l0, &r0);
    int good = 1;
    for (int k = 0; k < 50; k++)
        good &= gimpi_group_gsize(x, "rec") == 5;
    gimpi_groups_counters(x, &l1, &r1);
    ok(good, "50 gsize answers right");
    cmp_ok(l1 - l0, "==", 50, "all answered from the cache (%llu local, %llu remote)",
           (unsigned long long)(l1 - l0), (unsigned long long)(r1 - r0));
    /* own join visible at once, from the cache */
    gimpi_groups_counters(x, &l0, NULL);
    int inst = gimpi_group_join(x, "rec");
    cmp_ok(inst, "==", 5, "x joins as 5");
    cmp_ok(gimpi_group_gettid(x, "rec", inst), "==", gimpi_group_mytid(x), "own join visible at once");
    cmp_ok(gimpi_group_gsize(x, "rec"), "==", 6, "gsize includes self");
    gimpi_groups_counters(x, &l1, NULL);
    cmp_ok(l1 - l0, "==", 2, "both answered from the cache");
    cmp_ok(gimpi_group_leave(x, "rec"), "==", 0, "x leaves");
    cmp_ok(gimpi_group_getinst(x, "rec", gimpi_group_mytid(x)), "==", GIMPI_ENOTINGROUP,
           "own leave visible at once");
    /* delete on empty, then rejoin from 0 (the observer's cache follows) */
    for (int k = 0; k < 5; k++) {
        gimpi_group_leave(w[k], "rec");
        gimpi_groups_flush(w[k]);
    }
    gimpi_groups_t *fresh = gimpi_groups_new(s_ep, NULL);
    cmp_ok(gimpi_group_gsize(fresh, "rec"), "==", GIMPI_ENOGROUP, "last leave deleted the group");
    gimpi_groups_destroy(&fresh);
    cmp_ok(gimpi_group_join(w[2], "rec"), "==", 0, "rejoin starts at 0");
    cmp_ok(gimpi_group_gettid(w[2], "rec", 0), "==", gimpi_group_mytid(w[2]), "and is visible");
    gimpi_groups_destroy(&x);
    ok(x == NULL, "destroy NULLs");
    for (int k = 0; k < 5; k++)
        gimpi_groups_destroy(&w[k]);
}

static void test_barrier(void)
{
    gimpi_groups_t *w[3];
    for (int k = 0; k < 3; k++) {
        w[k] = gimpi_groups_new(s_ep, NULL);
        gimpi_group_join(w[k], "bar");
    }
    task_t a, b;
    s_run(&a, w[0], "bar", 'b', 3);
    ok(s_wait_arrived("bar", 1, false), "w0 waits in barrier(3)");
    cmp_ok(gimpi_group_barrier(w[1], "bar", 2), "==", GIMPI_EMISMATCH, "w1 barrier(2): Mismatch at once");
    s_run(&b, w[2], "bar", 'b', 3);
    ok(s_wait_arrived("bar", 2, false), "w2 waits too; the mismatch was not counted");
    cmp_ok(gimpi_group_barrier(w[1], "bar", 3), "==", 0, "w1 retries with 3: released");
    s_join_thread(&a);
    s_join_thread(&b);
    ok(a.result == 0 && b.result == 0, "all three released");
    /* -1: the size */
    s_run(&a, w[0], "bar", 'b', -1);
    s_run(&b, w[1], "bar", 'b', -1);
    ok(s_wait_arrived("bar", 2, false), "two wait with -1");
    cmp_ok(gimpi_group_barrier(w[2], "bar", 3), "==", 0, "3 completes the -1 barrier");
    s_join_thread(&a);
    s_join_thread(&b);
    ok(a.result == 0 && b.result == 0, "released");
    /* count > size waits for a join; the barrier makes the join visible to every member */
    uint64_t l0, l1;
    cmp_ok(gimpi_group_gsize(w[0], "bar"), "==", 3, "w0 sees 3");
    ok(tl_group_warm(w[0], "bar"), "w0's cache of 'bar' is current");
    s_run(&a, w[0], "bar", 'b', 4);
    s_run(&b, w[1], "bar", 'b', 4);
    task_t c;
    s_run(&c, w[2], "bar", 'b', 4);
    ok(s_wait_arrived("bar", 3, false), "three wait in barrier(4) on a group of 3");
    task_t d;
    s_run(&d, NULL, "bar", 'j', 4);
    s_join_thread(&a);
    gimpi_groups_counters(w[0], &l0, NULL);
    int sz = gimpi_group_gsize(w[0], "bar");
    gimpi_groups_counters(w[0], &l1, NULL);
    ok(sz == 4 && l1 == l0 + 1, "after the barrier w0's cache has the join (%d, answered locally)", sz);
    s_join_thread(&b);
    s_join_thread(&c);
    s_join_thread(&d);
    ok(a.result == 0 && b.result == 0 && c.result == 0 && d.result == 0,
       "a fourth joiner's arrival releases all");
    for (int k = 0; k < 3; k++)
        gimpi_groups_destroy(&w[k]);
}

static void test_freeze(void)
{
    gimpi_groups_t *w[4];
    for (int k = 0; k < 4; k++)
        w[k] = gimpi_groups_new(s_ep, NULL);
    for (int k = 0; k < 3; k++)
        gimpi_group_join(w[k], "frz");
    task_t a;
    s_run(&a, w[0], "frz", 'f', -1);
    ok(s_wait_arrived("frz", 1, true), "w0 waits in freeze(-1 = 3)");
    cmp_ok(gimpi_group_freeze(w[1], "frz", 2), "==", GIMPI_EMISMATCH, "freeze(2): Mismatch");
    task_t b;
    s_run(&b, w[1], "frz", 'f', 3);
    ok(s_wait_arrived("frz", 2, true), "w1 waits");
    cmp_ok(gimpi_group_freeze(w[2], "frz", 3), "==", 3, "w2 completes it: returns the size 3");
    s_join_thread(&a);
    s_join_thread(&b);
    ok(a.result == 3 && b.result == 3, "every caller gets 3");
    cmp_ok(gimpi_group_freeze(w[0], "frz", 3), "==", GIMPI_EDUPGROUP, "second freeze: DupGroup");
    cmp_ok(gimpi_group_join(w[3], "frz"), "==", GIMPI_ENOTINGROUP, "join frozen: NotInGroup");
    cmp_ok(gimpi_group_freeze(w[0], "frz", 0), "==", GIMPI_EBADPARAM, "freeze 0: BadParam");
    /* a frozen group losing a member while others wait: released with NoGroup */
    s_run(&a, w[0], "frz", 'b', 3);
    s_run(&b, w[1], "frz", 'b', 3);
    ok(s_wait_arrived("frz", 2, false), "two wait in barrier(3) on the frozen group");
    int64_t t0 = tl_now_ms();
    gimpi_group_leave(w[2], "frz");
    s_join_thread(&a);
    s_join_thread(&b);
    ok(a.result == GIMPI_ENOGROUP && b.result == GIMPI_ENOGROUP,
       "a member left: both waiters get NoGroup (%d, %d)", a.result, b.result);
    cmp_ok((a.done_ms > b.done_ms ? a.done_ms : b.done_ms) - t0, "<", 1000, "at once");
    cmp_ok(gimpi_group_barrier(w[0], "frz", 2), "==", GIMPI_ENOGROUP, "later barrier: NoGroup");
    cmp_ok(gimpi_group_gsize(w[0], "frz"), "==", 2, "gsize tells the truth (2)");
    for (int k = 0; k < 4; k++)
        gimpi_groups_destroy(&w[k]);
}

/*  A child process: joins the groups named on its pipe, reports, then waits to be killed. */
static pid_t s_child_in_groups(const char **groups, int n, int *rfd, const char *then_barrier)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        gimpi_groups_t *g = gimpi_groups_new(s_ep, NULL);
        char line[64];
        int len = snprintf(line, sizeof line, "%d\n", gimpi_group_mytid(g));
        for (int k = 0; k < n; k++)
            gimpi_group_join(g, groups[k]);
        if (write(p[1], line, (size_t)len) < 0)
            _exit(1);
        if (then_barrier)
            gimpi_group_barrier(g, then_barrier, 3);
        for (;;)
            pause();
    }
    close(p[1]);
    *rfd = p[0];
    return pid;
}

static void test_sigkill(void)
{
    static const char *groups[5] = { "k1", "k2", "k3", "k4", "k5" };
    gimpi_groups_t *me = gimpi_groups_new(s_ep, NULL);
    for (int k = 0; k < 5; k++)
        gimpi_group_join(me, groups[k]);
    int fd;
    pid_t pid = s_child_in_groups(groups, 5, &fd, NULL);
    char line[64];
    ok(pid > 0 && tl_read_line(fd, line, sizeof line, 20000) > 0, "child joined 5 groups");
    int ctid = atoi(line);
    int all = 1;
    for (int k = 0; k < 5; k++)
        all &= gimpi_group_getinst(me, groups[k], ctid) == 1 && gimpi_group_gsize(me, groups[k]) == 2;
    ok(all, "child is instance 1 of all 5");
    int64_t t0 = tl_now_ms();
    kill(pid, SIGKILL);
    int gone = 0;
    while (!gone && tl_now_ms() - t0 < 20000) {
        gone = 1;
        for (int k = 0; k < 5; k++)
            gone &= gimpi_group_gsize(me, groups[k]) == 1;
        if (!gone)
            s_nap();
    }
    int64_t took = tl_now_ms() - t0;
    ok(gone, "SIGKILLed task removed from all 5 groups");
    cmp_ok(took, "<", 1000, "within 1 s (%lld ms)", (long long)took);
    all = 1;
    for (int k = 0; k < 5; k++)
        all &= gimpi_group_gettid(me, groups[k], 1) == GIMPI_ENOINST;
    ok(all, "its instances are free");
    gimpi_groups_t *n = gimpi_groups_new(s_ep, NULL);
    cmp_ok(gimpi_group_join(n, "k3"), "==", 1, "and reused by the next joiner");
    waitpid(pid, NULL, 0);
    close(fd);
    gimpi_groups_destroy(&n);
    gimpi_groups_destroy(&me);
}

static void test_dead_waiter(void)
{
    gimpi_groups_t *a = gimpi_groups_new(s_ep, NULL), *b = gimpi_groups_new(s_ep, NULL);
    gimpi_group_join(a, "dw");
    gimpi_group_join(b, "dw");
    int fd;
    const char *dw[1] = { "dw" };
    pid_t pid = s_child_in_groups(dw, 1, &fd, NULL);
    char line[64];
    tl_read_line(fd, line, sizeof line, 20000);
    close(fd);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* PVM: a member that dies before arriving does not lower the count; here the group
       has 2 live members and a count-3 barrier needs a third arrival */
    task_t t1, t2;
    s_run(&t1, a, "dw", 'b', 3);
    s_run(&t2, b, "dw", 'b', 3);
    ok(s_wait_arrived("dw", 2, false), "two of three arrived after the third member died");
    task_t t3;
    s_run(&t3, NULL, "dw", 'j', 3);
    s_join_thread(&t1);
    s_join_thread(&t2);
    s_join_thread(&t3);
    ok(t1.result == 0 && t2.result == 0 && t3.result == 0, "a new joiner's arrival completes it");
    /* a member that dies while waiting: its arrival still counts */
    const char *dw2[1] = { "dw2" };
    gimpi_group_join(a, "dw2");
    gimpi_group_join(b, "dw2");
    pid = s_child_in_groups(dw2, 1, &fd, "dw2");
    tl_read_line(fd, line, sizeof line, 20000);
    close(fd);
    ok(s_wait_arrived("dw2", 1, false), "a child waits in barrier(3)");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    s_run(&t1, a, "dw2", 'b', 3);
    cmp_ok(gimpi_group_barrier(b, "dw2", 3), "==", 0, "two live members + the dead waiter pass");
    s_join_thread(&t1);
    cmp_ok(t1.result, "==", 0, "both released");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
}

/*  groupd killed while tasks wait: PvmSysErr within 2 s, and for every later call. */
static void test_groupd_death(void)
{
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0) {
        fail("second private groupd");
        return;
    }
    char saved[600];
    snprintf(saved, sizeof saved, "%s", s_ep);
    snprintf(s_ep, sizeof s_ep, "%s", d.endpoint);
    gimpi_groups_t *a = gimpi_groups_new(s_ep, NULL), *b = gimpi_groups_new(s_ep, NULL);
    gimpi_group_join(a, "death");
    gimpi_group_join(b, "death");
    gimpi_group_gsize(b, "death");
    task_t t;
    s_run(&t, a, "death", 'b', 3);
    ok(s_wait_arrived("death", 1, false), "a task waits in a barrier");
    int64_t t0 = tl_now_ms();
    gdt_kill(&d);
    s_join_thread(&t);
    cmp_ok(t.result, "==", GIMPI_ESYSERR, "the waiter gets PvmSysErr");
    cmp_ok(t.done_ms - t0, "<", 2000, "within 2 s (%lld ms)", (long long)(t.done_ms - t0));
    t0 = tl_now_ms();
    cmp_ok(gimpi_group_gsize(b, "death"), "==", GIMPI_ESYSERR, "a cached query: PvmSysErr");
    cmp_ok(gimpi_group_join(b, "x"), "==", GIMPI_ESYSERR, "a later join: PvmSysErr");
    cmp_ok(gimpi_group_barrier(a, "death", 2), "==", GIMPI_ESYSERR, "a later barrier: PvmSysErr");
    cmp_ok(tl_now_ms() - t0, "<", 2000, "at once");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
    gdt_cleanup(&d);
    snprintf(s_ep, sizeof s_ep, "%s", saved);
}

/*  A task that stops answering (SIGSTOP: its libzmq I/O thread stops too) is removed
 *  after the heartbeat timeout (groupd --heartbeat=100: 300 ms). */
static void test_silence(void)
{
    gdt_daemon_t d;
    if (gdt_start(&d, "--heartbeat=100") < 0) {
        fail("private groupd with --heartbeat=100");
        return;
    }
    char saved[600];
    snprintf(saved, sizeof saved, "%s", s_ep);
    snprintf(s_ep, sizeof s_ep, "%s", d.endpoint);
    gimpi_groups_t *me = gimpi_groups_new(s_ep, NULL);
    gimpi_group_join(me, "quiet");
    const char *q[1] = { "quiet" };
    int fd;
    pid_t pid = s_child_in_groups(q, 1, &fd, NULL);
    char line[64];
    ok(pid > 0 && tl_read_line(fd, line, sizeof line, 20000) > 0, "child joined 'quiet'");
    cmp_ok(gimpi_group_gsize(me, "quiet"), "==", 2, "two members");
    int64_t t0 = tl_now_ms();
    kill(pid, SIGSTOP);
    int gone = 0;
    while (!gone && tl_now_ms() - t0 < 20000) {
        gone = gimpi_group_gsize(me, "quiet") == 1;
        if (!gone)
            s_nap();
    }
    int64_t took = tl_now_ms() - t0;
    ok(gone, "the stopped task was removed");
    cmp_ok(took, "<", 1000, "within 1 s (%lld ms; heartbeat timeout 300 ms)", (long long)took);
    cmp_ok(gimpi_group_gettid(me, "quiet", 0), ">", 0, "the live member keeps its instance");
    kill(pid, SIGKILL);
    kill(pid, SIGCONT);
    waitpid(pid, NULL, 0);
    close(fd);
    gimpi_groups_destroy(&me);
    gdt_stop(&d);
    gdt_cleanup(&d);
    snprintf(s_ep, sizeof s_ep, "%s", saved);
}

/*  A groupd that stops answering (SIGSTOP) is noticed by the task's heartbeats: a waiting
 *  barrier returns PvmSysErr after the heartbeat interval + timeout (1 + 5 s), not before
 *  a second of silence (a groupd slowed by an overloaded machine is not dead).  (Without
 *  the outage budget, GIMPI_GROUPD_OUTAGE_MS, in which a task waits for a groupd to come
 *  back: a stopped one may, t/groupd_restart.sh.) */
static void test_groupd_stopped(void)
{
    setenv("GIMPI_GROUPD_OUTAGE_MS", "0", 1);
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0) {
        fail("private groupd");
        return;
    }
    char saved[600];
    snprintf(saved, sizeof saved, "%s", s_ep);
    snprintf(s_ep, sizeof s_ep, "%s", d.endpoint);
    gimpi_groups_t *a = gimpi_groups_new(s_ep, NULL);
    gimpi_group_join(a, "stop");
    task_t t;
    s_run(&t, a, "stop", 'b', 2);
    ok(s_wait_arrived("stop", 1, false), "a task waits in a barrier");
    int64_t t0 = tl_now_ms();
    kill(d.child.pid, SIGSTOP);
    s_join_thread(&t);
    cmp_ok(t.result, "==", GIMPI_ESYSERR, "groupd stopped: the waiter gets PvmSysErr");
    cmp_ok(t.done_ms - t0, ">=", 1000, "not before a second of silence (%lld ms): a busy "
           "groupd is not a dead one", (long long)(t.done_ms - t0));
    cmp_ok(t.done_ms - t0, "<", 7000, "within the heartbeat timeout (%lld ms)",
           (long long)(t.done_ms - t0));
    cmp_ok(gimpi_group_gsize(a, "stop"), "==", GIMPI_ESYSERR, "and every later call");
    gimpi_groups_destroy(&a);
    kill(d.child.pid, SIGCONT);
    unsetenv("GIMPI_GROUPD_OUTAGE_MS");
    gdt_kill(&d);
    gdt_cleanup(&d);
    snprintf(s_ep, sizeof s_ep, "%s", saved);
}

/*  groupd on TCP: the event endpoint is found through HELLO; the whole path works. */
static void test_tcp(void)
{
    gdt_daemon_t d;
    if (gdt_start_ep(&d, "tcp://127.0.0.1:*", NULL) < 0) {
        fail("groupd on tcp://127.0.0.1:*");
        return;
    }
    ok(strncmp(d.endpoint, "tcp://127.0.0.1:", 16) == 0 && strcmp(d.endpoint + 16, "*"),
       "groupd printed its TCP endpoint %s", d.endpoint);
    char saved[600];
    snprintf(saved, sizeof saved, "%s", s_ep);
    snprintf(s_ep, sizeof s_ep, "%s", d.endpoint);
    gimpi_groups_t *a = gimpi_groups_new(s_ep, NULL), *b = gimpi_groups_new(s_ep, NULL);
    cmp_ok(gimpi_group_join(a, "tcp"), "==", 0, "join over TCP");
    cmp_ok(gimpi_group_join(b, "tcp"), "==", 1, "second member");
    ok(tl_group_warm(a, "tcp"), "the cache becomes current through the TCP event stream");
    task_t t;
    s_run(&t, a, "tcp", 'b', 2);
    cmp_ok(gimpi_group_barrier(b, "tcp", 2), "==", 0, "barrier over TCP");
    s_join_thread(&t);
    cmp_ok(t.result, "==", 0, "both released");
    cmp_ok(gimpi_group_gettid(a, "tcp", 1), "==", gimpi_group_mytid(b), "gettid from the cache");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "TCP groupd exits 0");
    gdt_cleanup(&d);
    snprintf(s_ep, sizeof s_ep, "%s", saved);
}

/*  The pid a groupd wrote into its lock file, or 0. */
static pid_t s_lock_pid(const char *dir)
{
    return gdt_lock_pid(dir, 0);
}

/*  Waits (bounded) until a process that is not our child has gone. */
static bool s_gone(pid_t pid)
{
    for (int64_t end = tl_now_ms() + 20000; kill(pid, 0) == 0 && tl_now_ms() < end;)
        s_nap();
    return kill(pid, 0) < 0;
}

/*  No groupd runs on the endpoint: the first call starts one — once, even when three
 *  tasks race for it — and again after the first was killed (stale socket file). */
static void test_autostart(void)
{
    char dir[] = "/tmp/gdauto-XXXXXX", ep[300];
    if (gdt_autostart_setup(dir, ep, sizeof ep) < 0) {
        fail("mkdtemp");
        return;
    }
    setenv("GIMPI_GROUPD", ep, 1);
    int p[2];
    if (pipe(p) < 0) {
        fail("pipe");
        return;
    }
    pid_t kids[3];
    int64_t t0 = tl_now_ms();
    fflush(stdout);
    for (int k = 0; k < 3; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            close(p[0]);
            gimpi_groups_t *g = gimpi_groups_new(NULL, NULL);
            char line[32];
            int len = snprintf(line, sizeof line, "%d\n", gimpi_group_mytid(g));
            int rc = write(p[1], line, (size_t)len) == len ? 0 : 1;
            gimpi_groups_destroy(&g);
            _exit(rc);
        }
    }
    close(p[1]);
    int tids[3] = { 0 }, got = 0;
    char line[32];
    while (got < 3 && tl_read_line(p[0], line, sizeof line, 20000) > 0)
        tids[got++] = atoi(line);
    close(p[0]);
    for (int k = 0; k < 3; k++)
        waitpid(kids[k], NULL, 0);
    ok(got == 3 && tids[0] > 0 && tids[1] > 0 && tids[2] > 0,
       "three racing tasks all registered (%lld ms)", (long long)(tl_now_ms() - t0));
    ok(tids[0] != tids[1] && tids[1] != tids[2] && tids[0] != tids[2],
       "with distinct tids: one groupd served them all");
    gimpi_groups_t *g = gimpi_groups_new(NULL, NULL);
    is(gimpi_groups_endpoint(g), ep, "GIMPI_GROUPD chooses the endpoint");
    cmp_ok(gimpi_group_mytid(g), "==", 0x40001 + 3, "a fourth task is that groupd's 4th tid");
    gimpi_groups_t *h = gimpi_groups_new(NULL, NULL);
    cmp_ok(gimpi_group_join(h, "auto"), "==", 0, "a fifth task joins");
    cmp_ok(gimpi_group_gsize(g, "auto"), "==", 1, "and the fourth sees it");
    gimpi_groups_destroy(&g);
    gimpi_groups_destroy(&h);
    pid_t pid = s_lock_pid(dir);
    ok(pid > 0 && kill(pid, SIGKILL) == 0, "the started groupd (pid %d) killed", (int)pid);
    ok(pid > 0 && s_gone(pid), "and gone (its socket file stays)");
    g = gimpi_groups_new(NULL, NULL);
    cmp_ok(gimpi_group_mytid(g), ">", 0x40001 + 4, "the next task starts groupd again, "
           "from its journal: tids go on, never given twice");
    cmp_ok(gimpi_group_join(g, "auto"), "==", 0, "which serves");
    gimpi_groups_destroy(&g);
    pid = s_lock_pid(dir);
    ok(pid > 0 && kill(pid, SIGTERM) == 0, "the second groupd (pid %d) stops on SIGTERM", (int)pid);
    ok(pid > 0 && s_gone(pid), "and is gone");
    setenv("GIMPI_GROUPD_BIN", "/nonexistent/groupd", 1);
    g = gimpi_groups_new(NULL, NULL);
    int64_t t1 = tl_now_ms();
    cmp_ok(gimpi_group_join(g, "auto"), "==", GIMPI_ESYSERR, "no groupd program: PvmSysErr");
    cmp_ok(tl_now_ms() - t1, "<", 2000, "at once");
    cmp_ok(gimpi_group_gsize(g, "auto"), "==", GIMPI_ESYSERR, "and for every later call");
    gimpi_groups_destroy(&g);
    unsetenv("GIMPI_GROUPD");
    gdt_autostart_cleanup(dir);
}

/*  GIMPI_GROUPS_SPIN_US: never, the most, a nonsense value (clamped) — the calls give the
 *  same answers whichever way they wait. */
static void test_spin_setting(void)
{
    const char *values[] = { "0", "10000", "-7", "100" };
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
        setenv("GIMPI_GROUPS_SPIN_US", values[k], 1);
        gimpi_groups_t *g = gimpi_groups_new(s_ep, NULL);
        int bad = 0;
        for (int i = 0; i < 50; i++)
            bad += gimpi_group_join(g, "spin") != 0 || gimpi_group_gsize(g, "spin") != 1
                   || gimpi_group_leave(g, "spin") != 0;
        cmp_ok(bad, "==", 0, "GIMPI_GROUPS_SPIN_US=%s: 50 join/gsize/leave answered right",
               values[k]);
        cmp_ok(gimpi_group_leave(g, "spin"), "==", GIMPI_ENOGROUP,
               "GIMPI_GROUPS_SPIN_US=%s: an error still comes back", values[k]);
        gimpi_groups_destroy(&g);
    }
    unsetenv("GIMPI_GROUPS_SPIN_US");
}


/*  A stamp source for test_unchanged: the value it points at. */
static uint64_t s_stamp_at(void *arg)
{
    return *(const uint64_t *)arg;
}

/*  gimpi_group_unchanged: an answer from the cache stands while nothing changes, and no
 *  longer once another task's join reached the cache, a leave waits for its reply, or the
 *  generation is not one of this object's cache answers. */
static void test_unchanged(void)
{
    gimpi_groups_t *a = gimpi_groups_new(s_ep, NULL), *b = gimpi_groups_new(s_ep, NULL);
    cmp_ok(gimpi_group_join(a, "un"), "==", 0, "a joins 'un'");
    ok(tl_group_warm(a, "un"), "a's cache of 'un' becomes current");
    gimpi_group_snap_t s = { 0 };
    int held = 0;               /* (a pause of 200 us between the two calls asks again) */
    for (int k = 0; k < 1000 && !held; k++)
        held = gimpi_group_state(a, "un", &s) == 1 && s.gen
               && gimpi_group_unchanged(a, s.gen) && gimpi_group_unchanged(a, s.gen);
    ok(held, "an answer from the cache stands while nothing changes");
    ok(s.tids == NULL, "the state carries no tids");
    ok(!gimpi_group_unchanged(a, 0), "generation 0 (an answer not from the cache) never stands");
    ok(!gimpi_group_unchanged(a, s.gen + 1), "nor a generation the cache never had");
    ok(!gimpi_group_unchanged(b, s.gen), "nor one of another object's cache");
    uint64_t stamp = 0;         /* a message that says the group changed: at once */
    gimpi_groups_set_stamp_source(a, s_stamp_at, &stamp);
    int stood = 0, ended = 0;
    for (int k = 0; k < 100; k++)
        if (gimpi_group_state(a, "un", &s) == 1 && gimpi_group_unchanged(a, s.gen)) {
            stood++;
            stamp = gimpi_groups_seen(a) + 1;
            ended += !gimpi_group_unchanged(a, s.gen);
            stamp = 0;
        }
    ok(stood > 0 && ended == stood, "a newer stamp ends the answer at once (%d of %d)", ended,
       stood);
    gimpi_groups_set_stamp_source(a, NULL, NULL);
    uint64_t g = s.gen;
    cmp_ok(gimpi_group_join(b, "un"), "==", 1, "b joins as 1");
    int n = 0;
    for (int64_t end = tl_now_ms() + 20000; n != 2 && tl_now_ms() < end; s_nap())
        n = gimpi_group_state(a, "un", &s);
    cmp_ok(n, "==", 2, "a's cache sees b's join");
    ok(!gimpi_group_unchanged(a, g), "the answer before the join no longer stands");
    ok(s.gen != g && s.version > 0, "the new answer has a new generation");
    ok(tl_group_warm(b, "un"), "b's cache of 'un' becomes current");
    gimpi_group_snap_t sb = { 0 };
    held = 0;
    for (int k = 0; k < 1000 && !held; k++)
        held = gimpi_group_state(b, "un", &sb) == 2 && gimpi_group_unchanged(b, sb.gen);
    ok(held, "b's answer stands too");
    cmp_ok(gimpi_group_leave(b, "un"), "==", 0, "b leaves (its reply may come later)");
    ok(!gimpi_group_unchanged(b, sb.gen), "b's answer before its leave no longer stands");
    cmp_ok(gimpi_group_state(b, "un", &sb), "==", 1, "b's own leave shows at once");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(600);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    snprintf(s_ep, sizeof s_ep, "%s", d.endpoint);
    test_membership();
    test_spin_setting();
    test_unchanged();
    test_barrier();
    test_freeze();
    test_sigkill();
    test_dead_waiter();
    test_groupd_death();
    test_silence();
    test_groupd_stopped();
    test_tcp();
    test_autostart();
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "groupd still healthy, exits 0");
    gdt_cleanup(&d);
    done_testing();
}
