/*  t/groupd_scale.c — 1,000 registered tasks (threads, each with its own gimpi_groups_t
 *  and sockets) joining 100 groups of 10 against a private groupd: every tid distinct,
 *  every group gets instances 0..9 exactly once, and after a barrier on its group every
 *  task's gsize says 10 (the consistency promise at scale).  Then all leave, and groupd
 *  holds no group.  Bounded: every call returns or fails within the library's limits.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <zmq.h>

enum { NTASKS = 1000, NGROUPS = 100 };

typedef struct {
    int index;
    void *zctx;
    const char *ep;
    int tid, inst, bar, size_after, leave;
} task_t;

static void *s_task(void *arg)
{
    task_t *t = arg;
    char name[32];
    snprintf(name, sizeof name, "scale-%d", t->index % NGROUPS);
    gimpi_groups_t *g = gimpi_groups_new(t->ep, t->zctx);
    t->tid = gimpi_group_mytid(g);
    t->inst = gimpi_group_join(g, name);
    t->bar = gimpi_group_barrier(g, name, NTASKS / NGROUPS);
    t->size_after = gimpi_group_gsize(g, name);
    if (t->bar == 0)        /* nobody leaves before everyone has looked */
        t->bar = gimpi_group_barrier(g, name, NTASKS / NGROUPS);
    t->leave = gimpi_group_leave(g, name);
    if (t->tid <= 0 || t->inst < 0 || t->bar || t->leave)
        fprintf(stderr, "# task %d: tid %d inst %d barrier %d gsize %d leave %d\n", t->index,
                t->tid, t->inst, t->bar, t->size_after, t->leave);
    gimpi_groups_destroy(&g);
    return NULL;
}

static int s_cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(240);         /* a hang is a failure, not a stuck suite */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 8 * NTASKS) {
        plan(SKIP_ALL, "needs %d file descriptors, have %llu", 8 * NTASKS,
             (unsigned long long)rl.rlim_cur);
        return 0;
    }
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    void *zctx = zmq_ctx_new();
    zmq_ctx_set(zctx, ZMQ_MAX_SOCKETS, 8 * NTASKS);
    zmq_ctx_set(zctx, ZMQ_IO_THREADS, 2);
    task_t *tasks = calloc(NTASKS, sizeof *tasks);
    pthread_t *th = calloc(NTASKS, sizeof *th);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    int64_t t0 = tl_now_ms();
    int started = 0;
    for (int k = 0; k < NTASKS; k++) {
        tasks[k] = (task_t){ .index = k, .zctx = zctx, .ep = d.endpoint };
        if (pthread_create(&th[k], &attr, s_task, &tasks[k]) != 0)
            break;
        started++;
    }
    cmp_ok(started, "==", NTASKS, "%d task threads started", NTASKS);
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    int64_t took = tl_now_ms() - t0;
    note("1000 tasks registered, joined, barriered and left in %lld ms", (long long)took);
    int *tids = malloc(NTASKS * sizeof *tids);
    int bad_tid = 0, bad_bar = 0, bad_size = 0, bad_leave = 0;
    for (int k = 0; k < started; k++) {
        tids[k] = tasks[k].tid;
        bad_tid += tasks[k].tid <= 0;
        bad_bar += tasks[k].bar != 0;
        bad_size += tasks[k].size_after != NTASKS / NGROUPS;
        bad_leave += tasks[k].leave != 0;
    }
    qsort(tids, (size_t)started, sizeof *tids, s_cmp_int);
    int dup = 0;
    for (int k = 1; k < started; k++)
        dup += tids[k] == tids[k - 1];
    cmp_ok(bad_tid, "==", 0, "every task registered");
    cmp_ok(dup, "==", 0, "tids distinct");
    int bad_inst = 0;
    for (int g = 0; g < NGROUPS; g++) {
        int seen[NTASKS / NGROUPS] = { 0 };
        for (int k = g; k < started; k += NGROUPS)
            if (tasks[k].inst >= 0 && tasks[k].inst < NTASKS / NGROUPS)
                seen[tasks[k].inst]++;
            else
                bad_inst++;
        for (int i = 0; i < NTASKS / NGROUPS; i++)
            bad_inst += seen[i] != 1;
    }
    cmp_ok(bad_inst, "==", 0, "each of the 100 groups got instances 0..9 exactly once");
    cmp_ok(bad_bar, "==", 0, "every barrier of 10 completed (twice)");
    cmp_ok(bad_size, "==", 0, "after the barrier every task's gsize is 10");
    cmp_ok(bad_leave, "==", 0, "every leave succeeded");
    gimpi_groups_t *probe = gimpi_groups_new(d.endpoint, zctx);
    cmp_ok(gimpi_group_gsize(probe, "scale-0"), "==", GIMPI_ENOGROUP, "groups deleted when empty");
    gimpi_groups_destroy(&probe);
    zmq_ctx_term(zctx);
    free(tids);
    free(tasks);
    free(th);
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "groupd exits 0");
    gdt_cleanup(&d);
    done_testing();
}
