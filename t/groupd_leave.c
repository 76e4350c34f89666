/*  t/groupd_leave.c — deferred leaves (gimpi_group.h): a leave of a group the task is in
 *  returns at once and its reply comes back with the next request's.  Each test is a small
 *  named behaviour against a real private groupd: the task's own queries see the leave at
 *  once, gimpi_groups_flush makes it visible to everybody, a join right after a leave keeps
 *  its order, leaves that cannot be known to succeed still wait for groupd's answer (every
 *  error code), more leaves than the deferral table holds, destroy with a leave
 *  outstanding, groupd dying with a leave outstanding (PvmSysErr within 2 s), and
 *  GIMPI_GROUPS_SYNC_LEAVE=1.  "Visible to everybody" is checked with a fresh task each
 *  time (its first query asks groupd, never a cache).
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*  groupd's own answer to gsize(group): a fresh task asks (no cache involved). */
static int s_remote_gsize(const char *ep, const char *group)
{
    gimpi_groups_t *g = gimpi_groups_new(ep, NULL);
    int rc = g ? gimpi_group_gsize(g, group) : GIMPI_ENOMEM;
    gimpi_groups_destroy(&g);
    return rc;
}

/*  A lone member's leave returns 0 and its own next query sees the group gone. */
static void test_leave_then_own_query(const char *ep)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL);
    cmp_ok(gimpi_group_join(a, "own"), "==", 0, "own: joined as 0");
    cmp_ok(gimpi_group_leave(a, "own"), "==", 0, "own: the leave returns 0");
    cmp_ok(gimpi_group_gsize(a, "own"), "==", GIMPI_ENOGROUP,
           "own: the task's next query sees the group deleted");
    gimpi_groups_destroy(&a);
}

/*  With the group in the task's cache, its own queries see every leave at once. */
static void test_leave_cached_group(const char *ep)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL), *b = gimpi_groups_new(ep, NULL);
    gimpi_group_join(b, "cached");
    int me = gimpi_group_mytid(a), bad = 0;
    for (int i = 0; i < 200; i++) {
        bad += gimpi_group_join(a, "cached") != 1;
        bad += gimpi_group_gsize(a, "cached") != 2;
        bad += gimpi_group_leave(a, "cached") != 0;
        bad += gimpi_group_gsize(a, "cached") != 1;
        bad += gimpi_group_getinst(a, "cached", me) != GIMPI_ENOTINGROUP;
        bad += gimpi_group_gettid(a, "cached", 1) != GIMPI_ENOINST;
    }
    uint64_t local = 0;
    gimpi_groups_counters(a, &local, NULL);
    cmp_ok(bad, "==", 0, "cached: 200 join/leave pairs, each seen at once by the task itself");
    cmp_ok(local, ">", 0, "cached: (queries were answered from the cache: %llu)",
           (unsigned long long)local);
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
}

/*  After gimpi_groups_flush returns, groupd has the leave: any other task sees it. */
static void test_flush_makes_it_visible(const char *ep)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL), *b = gimpi_groups_new(ep, NULL);
    gimpi_group_join(b, "flush");
    int bad = 0;
    for (int i = 0; i < 30; i++) {
        bad += gimpi_group_join(a, "flush") != 1;
        bad += gimpi_group_leave(a, "flush") != 0;
        bad += gimpi_groups_flush(a) != 0;
        bad += s_remote_gsize(ep, "flush") != 1;
    }
    cmp_ok(bad, "==", 0, "flush: 30 times, after the flush another task finds 1 member");
    cmp_ok(gimpi_groups_flush(a), "==", 0, "flush: with nothing outstanding, 0 at once");
    cmp_ok(gimpi_groups_flush(NULL), "==", 0, "flush: NULL is harmless");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
}

/*  A join right behind a leave is processed after it: the instance is recycled every time. */
static void test_join_after_leave_keeps_order(const char *ep)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL), *b = gimpi_groups_new(ep, NULL);
    gimpi_group_join(b, "order");
    int bad = 0;
    for (int i = 0; i < 500; i++)
        bad += gimpi_group_join(a, "order") != 1 || gimpi_group_leave(a, "order") != 0;
    cmp_ok(bad, "==", 0, "order: 500 pairs behind another member, every join got instance 1");
    gimpi_groups_flush(a);
    cmp_ok(s_remote_gsize(ep, "order"), "==", 1, "order: and the group has its 1 member left");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
}

/*  Leaves the task cannot know to succeed still ask groupd: every error code comes back. */
static void test_errors_still_answered(const char *ep)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL), *b = gimpi_groups_new(ep, NULL);
    gimpi_group_join(b, "others");
    cmp_ok(gimpi_group_leave(a, "others"), "==", GIMPI_ENOTINGROUP,
           "errors: leaving a group of others: PvmNotInGroup");
    cmp_ok(gimpi_group_leave(a, "nosuch"), "==", GIMPI_ENOGROUP,
           "errors: leaving a group that does not exist: PvmNoGroup");
    cmp_ok(gimpi_group_leave(a, NULL), "==", GIMPI_ENULLGROUP, "errors: NULL: PvmNullGroup");
    cmp_ok(gimpi_group_leave(a, ""), "==", GIMPI_ENULLGROUP, "errors: \"\": PvmNullGroup");
    gimpi_group_join(a, "others");
    cmp_ok(gimpi_group_leave(a, "others"), "==", 0, "errors: a member's leave: 0");
    cmp_ok(gimpi_group_leave(a, "others"), "==", GIMPI_ENOTINGROUP,
           "errors: the same leave again: PvmNotInGroup");
    cmp_ok(gimpi_group_join(a, "others"), "==", 1, "errors: a join after that: instance 1");
    cmp_ok(gimpi_group_join(a, "others"), "==", GIMPI_EDUPGROUP, "errors: again: PvmDupGroup");
    cmp_ok(gimpi_group_leave(a, "others"), "==", 0, "errors: and it can still leave");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
}

/*  More leaves in a row than the deferral table holds (16): all succeed, all take effect. */
static void test_many_leaves(const char *ep)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL);
    char name[32];
    int bad = 0;
    for (int k = 0; k < 40; k++) {
        snprintf(name, sizeof name, "many-%d", k);
        bad += gimpi_group_join(a, name) != 0;
    }
    for (int k = 0; k < 40; k++) {
        snprintf(name, sizeof name, "many-%d", k);
        bad += gimpi_group_leave(a, name) != 0;
    }
    cmp_ok(bad, "==", 0, "many: 40 joins, then 40 leaves in a row, all 0");
    cmp_ok(gimpi_groups_flush(a), "==", 0, "many: flushed");
    int gone = 0;
    for (int k = 0; k < 40; k += 13) {
        snprintf(name, sizeof name, "many-%d", k);
        gone += s_remote_gsize(ep, name) == GIMPI_ENOGROUP;
    }
    cmp_ok(gone, "==", 4, "many: groupd deleted them (4 of 4 looked at)");
    gimpi_groups_destroy(&a);
}

/*  A task destroyed with a leave outstanding: the leave still happens (before its exit). */
static void test_destroy_with_leave_outstanding(const char *ep)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL), *b = gimpi_groups_new(ep, NULL);
    gimpi_group_join(b, "destroy");
    gimpi_group_join(a, "destroy");
    gimpi_group_join(a, "destroy-alone");
    cmp_ok(gimpi_group_leave(a, "destroy"), "==", 0, "destroy: a leaves");
    gimpi_groups_destroy(&a);
    ok(a == NULL, "destroy: destroyed at once, pointer nulled");
    cmp_ok(s_remote_gsize(ep, "destroy"), "==", 1, "destroy: the group kept its other member");
    cmp_ok(s_remote_gsize(ep, "destroy-alone"), "==", GIMPI_ENOGROUP,
           "destroy: the group it was still in went with it");
    gimpi_groups_destroy(&b);
}

/*  GIMPI_GROUPS_SYNC_LEAVE=1: every leave waits; no flush needed for others to see it. */
static void test_sync_leave_setting(const char *ep)
{
    setenv("GIMPI_GROUPS_SYNC_LEAVE", "1", 1);
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL), *b = gimpi_groups_new(ep, NULL);
    unsetenv("GIMPI_GROUPS_SYNC_LEAVE");
    gimpi_group_join(b, "sync");
    int bad = 0;
    for (int i = 0; i < 20; i++) {
        bad += gimpi_group_join(a, "sync") != 1 || gimpi_group_leave(a, "sync") != 0;
        bad += s_remote_gsize(ep, "sync") != 1;
    }
    cmp_ok(bad, "==", 0, "sync: 20 leaves, each seen by another task with no flush");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
}

/*  groupd killed with a leave outstanding: the flush (and every later call) is PvmSysErr,
 *  within 2 s. */
static void test_groupd_dies_with_leave_outstanding(void)
{
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0) {
        fail("death: a second private groupd");
        return;
    }
    gimpi_groups_t *a = gimpi_groups_new(d.endpoint, NULL);
    cmp_ok(gimpi_group_join(a, "death"), "==", 0, "death: joined");
    cmp_ok(gimpi_group_join(a, "death2"), "==", 0, "death: joined another");
    gdt_kill(&d);
    int64_t t0 = tl_now_ms();
    int rc = gimpi_group_leave(a, "death");
    ok(rc == 0 || rc == GIMPI_ESYSERR, "death: the leave returns 0 or PvmSysErr (%d)", rc);
    cmp_ok(gimpi_groups_flush(a), "==", rc ? 0 : GIMPI_ESYSERR,
           "death: the flush of an outstanding leave says PvmSysErr");
    cmp_ok(gimpi_group_leave(a, "death2"), "==", GIMPI_ESYSERR, "death: a later leave too");
    cmp_ok(gimpi_group_gsize(a, "death2"), "==", GIMPI_ESYSERR, "death: a later query too");
    cmp_ok(tl_now_ms() - t0, "<", 2000, "death: within 2 s (%lld ms)",
           (long long)(tl_now_ms() - t0));
    gimpi_groups_destroy(&a);
    gdt_cleanup(&d);
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(300);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    unsetenv("GIMPI_GROUPS_SYNC_LEAVE");
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    test_leave_then_own_query(d.endpoint);
    test_leave_cached_group(d.endpoint);
    test_flush_makes_it_visible(d.endpoint);
    test_join_after_leave_keeps_order(d.endpoint);
    test_errors_still_answered(d.endpoint);
    test_many_leaves(d.endpoint);
    test_destroy_with_leave_outstanding(d.endpoint);
    test_sync_leave_setting(d.endpoint);
    test_groupd_dies_with_leave_outstanding();
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "groupd still healthy, exits 0");
    gdt_cleanup(&d);
    done_testing();
}
