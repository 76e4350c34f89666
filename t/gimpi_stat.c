/*  t/gimpi_stat.c — the gimpi-stat program against a private groupd: "no groups exist",
 *  groups with members, a barrier in progress with its waiter, no stale waiter once the
 *  barrier completed, a frozen group, --json, an unknown group and an absent groupd
 *  (exit 1 with a message).
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <time.h>

static char s_ep[600];

/*  Runs gimpi-stat with args; output into out; returns the exit status (-1: killed). */
static int s_stat(const char *a1, const char *a2, char *out, size_t size)
{
    char bin[4096];
    snprintf(bin, sizeof bin, "%s", tl_prog("programs/gimpi-stat"));
    char *argv[6] = { bin, (char *)"--endpoint", s_ep, (char *)a1, (char *)a2, NULL };
    tl_child_t c;
    out[0] = 0;
    if (tl_spawn(argv, &c) < 0)
        return -1;
    size_t n = tl_read_all(c.out, out, size, 20000);
    char err[1024];
    size_t e = tl_read_all(c.err, err, sizeof err, 20000);
    if (n == 0 && e > 0)
        snprintf(out, size, "%s", err);
    int st = tl_wait(&c, 20000);
    tl_child_close(&c);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

typedef struct {
    gimpi_groups_t *g;
    int rc;
} bar_t;

static void *s_bar(void *arg)
{
    bar_t *b = arg;
    b->rc = gimpi_group_barrier(b->g, "s1", 2);
    return NULL;
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(600);         /* a hang is a failure, not a stuck suite */
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    snprintf(s_ep, sizeof s_ep, "%s", d.endpoint);
    static char out[65536];
    cmp_ok(s_stat(NULL, NULL, out, sizeof out), "==", 0, "exit 0");
    is(out, "no groups exist\n", "no groups exist");
    gimpi_groups_t *a = gimpi_groups_new(s_ep, NULL), *b = gimpi_groups_new(s_ep, NULL);
    gimpi_group_join(a, "s1");
    gimpi_group_join(b, "s1");
    gimpi_group_join(b, "s\"2");
    int ta = gimpi_group_mytid(a), tb = gimpi_group_mytid(b);
    bar_t bt = { a, 99 };
    pthread_t th;
    pthread_create(&th, NULL, s_bar, &bt);
    char want[128];
    snprintf(want, sizeof want, "barrier: count 2, arrived 1, waiting: t%x\n", (unsigned)ta);
    int seen = 0;
    for (int64_t end = tl_now_ms() + 20000; !seen && tl_now_ms() < end;)
        seen = s_stat("s1", NULL, out, sizeof out) == 0 && strstr(out, want);
    ok(seen, "the barrier in progress with its waiter");
    char m1[64];
    snprintf(m1, sizeof m1, "    1 t%x ", (unsigned)tb);
    ok(strstr(out, "group: s1, size: 2, dynamic\n") && strstr(out, m1), "group line and members:\n%s", out);
    cmp_ok(s_stat("--json", "s1", out, sizeof out), "==", 0, "--json exit 0");
    snprintf(want, sizeof want, "\"barrier\":{\"count\":2,\"arrived\":1,\"waiting\":[%d]}", ta);
    ok(strstr(out, "{\"groups\":[{\"name\":\"s1\",\"size\":2,\"frozen\":false") && strstr(out, want),
       "JSON: %s", out);
    cmp_ok(gimpi_group_barrier(b, "s1", 2), "==", 0, "second arrival releases");
    pthread_join(th, NULL);
    cmp_ok(bt.rc, "==", 0, "first released too");
    s_stat(NULL, NULL, out, sizeof out);
    ok(!strstr(out, "barrier:") && strstr(out, "group: s\"2, size: 1"), "no stale waiters:\n%s", out);
    s_stat("--json", NULL, out, sizeof out);
    ok(strstr(out, "\"name\":\"s\\\"2\"") && strstr(out, "\"barrier\":null"), "JSON escapes names: %s", out);
    cmp_ok(gimpi_group_freeze(b, "s\"2", 1), "==", 1, "freeze s\"2");
    s_stat("s\"2", NULL, out, sizeof out);
    ok(strstr(out, "frozen at 1") != NULL, "frozen shown");
    cmp_ok(s_stat("nosuch", NULL, out, sizeof out), "==", 1, "unknown group: exit 1");
    ok(strstr(out, "No such group") != NULL, "with a message: %s", out);
    cmp_ok(s_stat("a", "b", out, sizeof out), "==", 2, "two groups: usage, exit 2");
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
    gdt_stop(&d);
    cmp_ok(s_stat(NULL, NULL, out, sizeof out), "==", 1, "no groupd: exit 1");
    ok(strstr(out, "no groupd answers") != NULL, "with a message: %s", out);
    gdt_cleanup(&d);
    done_testing();
}
