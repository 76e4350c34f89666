/*  t/bind.c — a core of its own for each task (libgimpi/base/gimpi_bind.c): the plan's
 *  claims against a second job, GIMPI_BIND=none, more tasks than CPUs, a bound child's
 *  pinning and environment, and its own child put back onto the launcher's CPUs.
 */
#include "gtap.h"
#include "base/gimpi_bind.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*  In a fork: exit 0 when task i of plan b is pinned to its core, sees the launcher's CPU
 *  count and has its own core, and its own child is unpinned again. */
static int s_child(gimpi_bind_t *b, int i, int all)
{
    pid_t pid = fork();
    if (pid == 0) {
        cpu_set_t set;
        if (gimpi_bind_child(b, i) < 0 || sched_getaffinity(0, sizeof set, &set) < 0)
            _exit(1);
        if (CPU_COUNT(&set) != 1 || !CPU_ISSET(gimpi_bind_cpu(b, i), &set))
            _exit(2);
        if (!gimpi_bind_own_core() || gimpi_bind_cpus() != all || !getenv(GIMPI_ENV_BOUND))
            _exit(3);
        cpu_set_t home;
        if (gimpi_bind_home(&home) < 0 || CPU_COUNT(&home) != all)
            _exit(6);
        gimpi_bind_settle();
        pid_t g = fork();
        if (g == 0) {                   /* a spawned task's start */
            sched_setaffinity(0, sizeof home, &home);
            unsetenv(GIMPI_ENV_BOUND);
            _exit(sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == all
                  && !gimpi_bind_own_core() ? 0 : 4);
        }
        int st;
        _exit(waitpid(g, &st, 0) == g && WIFEXITED(st) ? WEXITSTATUS(st) : 5);
    }
    int st;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : 9;
}

int main(void)
{
    plan(NO_PLAN);
    ok(gimpi_bind_selftest() == 0, "self-test: lists, claims against a second plan, release");
    static const char *const says[] = { NULL, "", "core", "none", "cores" };
    static const bool wants[] = { true, true, true, false, false };
    for (int i = 0; i < 5; i++) {
        if (says[i])
            setenv(GIMPI_ENV_BIND, says[i], 1);
        else
            unsetenv(GIMPI_ENV_BIND);
        ok(gimpi_bind_wanted() == wants[i], "GIMPI_BIND %s%s%s: cores %s", says[i] ? "\"" : "",
           says[i] ? says[i] : "unset", says[i] ? "\"" : "", wants[i] ? "wanted" : "not wanted");
    }
    unsetenv(GIMPI_ENV_BIND);
    char dir[] = "/tmp/gimpi-bind-t-XXXXXX";
    if (!mkdtemp(dir))
        BAIL_OUT("mkdtemp");
    setenv("XDG_RUNTIME_DIR", dir, 1);
    unsetenv(GIMPI_ENV_BOUND);
    cpu_set_t mine;
    sched_getaffinity(0, sizeof mine, &mine);
    int all = CPU_COUNT(&mine);
    cmp_ok(gimpi_bind_cpus(), "==", all, "unbound: the process's own CPUs");
    ok(!gimpi_bind_own_core(), "unbound: no core of its own");
    gimpi_bind_t *b = gimpi_bind_new(all);
    ok(b && gimpi_bind_cpu(b, 0) >= 0, "as many tasks as CPUs: bound");
    int distinct = 1;
    for (int i = 1; i < all; i++)
        distinct &= gimpi_bind_cpu(b, i) != gimpi_bind_cpu(b, i - 1);
    ok(distinct, "each task its own CPU");
    cmp_ok(s_child(b, all - 1, all), "==", 0,
           "a bound child: pinned, GIMPI_BOUND set, the launcher's CPUs for its child");
    gimpi_bind_t *second = gimpi_bind_new(1);
    ok(second && gimpi_bind_cpu(second, 0) == -1, "a second job while every core is taken: unbound");
    cmp_ok(gimpi_bind_child(second, 0), "==", 0, "an unbound child: nothing to do");
    gimpi_bind_destroy(&second);
    gimpi_bind_destroy(&b);
    ok(b == NULL, "destroy nulls the pointer");
    b = gimpi_bind_new(1);
    ok(b && gimpi_bind_cpu(b, 0) >= 0, "the claims end with their holders");
    gimpi_bind_destroy(&b);
    setenv(GIMPI_ENV_BIND, "none", 1);
    b = gimpi_bind_new(1);
    ok(b && gimpi_bind_cpu(b, 0) == -1, "GIMPI_BIND=none: unbound");
    gimpi_bind_destroy(&b);
    unsetenv(GIMPI_ENV_BIND);
    b = gimpi_bind_new(all + 1);
    ok(b && gimpi_bind_cpu(b, 0) == -1, "more tasks than CPUs: unbound");
    gimpi_bind_destroy(&b);
    setenv(GIMPI_ENV_BOUND, "0,99,x", 1);
    cmp_ok(gimpi_bind_cpus(), "==", all, "a malformed GIMPI_BOUND is ignored");
    cpu_set_t home;
    ok(gimpi_bind_home(&home) < 0, "and gives no launcher's CPUs");
    unsetenv(GIMPI_ENV_BOUND);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    done_testing();
}
