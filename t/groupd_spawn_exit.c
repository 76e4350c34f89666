/*  t/groupd_spawn_exit.c — SPAWN_EXIT (gimpi_groups_spawn_exit): a spawner tells groupd that
 *  a child died before registering, with its block's token.  A watcher of the tid gets one
 *  TaskExit event; the tid can no longer register; a second SPAWN_EXIT, the manager's
 *  TASK_EXIT after it, or a registered task's connection closing publish nothing more; a
 *  registered tid is refused (GIMPI_EEXISTS: its connection tells), and so are another
 *  block's token (GIMPI_EDENIED), a token that is not one and a tid outside every block.
 *  Every wait is bounded.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"
#include "groups/gimpi_groups_notify.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/*  How many TaskExit events of tid come to w within ms. */
static int s_events(gimpi_groups_t *w, int tid, int ms)
{
    gimpi_groups_event_t ev;
    int n = 0;
    while (gimpi_groups_watch_next(w, ms, &ev) > 0)
        n += ev.kind == GD_EV_TASK_EXIT && ev.id == tid;
    return n;
}

/*  The cases against a private groupd. */
static void test_spawn_exit(const char *ep)
{
    gimpi_groups_t *sp = gimpi_groups_new(ep, NULL), *w = gimpi_groups_new(ep, NULL);
    ok(gimpi_group_mytid(sp) > 0 && gimpi_group_mytid(w) > 0, "spawner and watcher registered");
    char tok[GIMPI_GROUPS_TOKEN_LEN + 1], other[GIMPI_GROUPS_TOKEN_LEN + 1];
    int base = gimpi_groups_reserve_token(sp, "", 3, tok);
    int obase = gimpi_groups_reserve_token(sp, "", 1, other);
    ok(base > 0 && obase > 0, "two blocks reserved");
    int dead = base + 1, live = base + 2;
    cmp_ok(gimpi_groups_watch_task(w, dead), "==", 1, "the unregistered tid is watched");
    cmp_ok(gimpi_groups_spawn_exit(sp, dead, other), "==", GIMPI_EDENIED,
           "another block's token: Denied");
    cmp_ok(gimpi_groups_spawn_exit(sp, dead, "xyz"), "==", GIMPI_EBADPARAM,
           "a token that is not one: BadParam");
    cmp_ok(gimpi_groups_spawn_exit(sp, 0x7ffff0, tok), "==", GIMPI_ENOTASK,
           "a tid of no block: NoTask");
    cmp_ok(s_events(w, dead, 200), "==", 0, "no event from the refusals");
    cmp_ok(gimpi_groups_spawn_exit(sp, dead, tok), "==", 0, "SPAWN_EXIT with the token: 0");
    cmp_ok(s_events(w, dead, 2000), "==", 1, "the watcher gets one TaskExit event");
    cmp_ok(gimpi_groups_spawn_exit(sp, dead, tok), "==", GIMPI_ENOTASK, "again: NoTask");
    cmp_ok(gimpi_groups_task_exit(sp, dead, 0), "==", GIMPI_EDENIED,
           "TASK_EXIT stays the manager's");
    cmp_ok(s_events(w, dead, 200), "==", 0, "and no second event");
    cmp_ok(gimpi_groups_watch_task(w, dead), "==", 0, "a new watch says it has ended");
    gimpi_groups_t *late = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid_token(late, dead, tok);
    ok(gimpi_group_mytid(late) < 0, "the dead tid can no longer register (%d)",
       gimpi_group_mytid(late));
    gimpi_groups_destroy(&late);

    gimpi_groups_t *child = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid_token(child, live, tok);
    cmp_ok(gimpi_group_mytid(child), "==", live, "a child registers as its reserved tid");
    cmp_ok(gimpi_groups_watch_task(w, live), "==", 1, "it is watched");
    cmp_ok(gimpi_groups_spawn_exit(sp, live, tok), "==", GIMPI_EEXISTS,
           "SPAWN_EXIT of a registered tid: Exists");
    gimpi_groups_destroy(&child);
    cmp_ok(s_events(w, live, 2000), "==", 1, "its connection's end gives one event");
    cmp_ok(gimpi_groups_spawn_exit(sp, live, tok), "==", GIMPI_ENOTASK, "told after: NoTask");
    cmp_ok(s_events(w, live, 200), "==", 0, "and no second event");
    gimpi_groups_destroy(&w);
    gimpi_groups_destroy(&sp);
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(120);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    test_spawn_exit(d.endpoint);
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "groupd healthy, exits 0");
    gdt_cleanup(&d);
    done_testing();
}
