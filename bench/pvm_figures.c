/*  pvm_figures.c — `gimpi-pvm-bench FIGURE N` (also reached as `gimpi-bench --api pvm
 *  FIGURE N`): the figures of bench/README.md measured through the PVM API of
 *  libgimpi, printed with system name `gimpi-pvm`, so that the PVM layer can be held
 *  against the native calls (bench/coll_figures.c) and against real PVM.  Run with a
 *  figure and N, the program runs `gimpirun -np N` on itself with `--task`; every task then
 *  uses only <pvm3.h>, as a ported PVM program would: pvm_joingroup on a fresh group,
 *  pvm_barrier(G, N), and per figure pvm_barrier (barrier), pvm_initsend + pvm_pkbyte +
 *  pvm_bcast / pvm_recv + pvm_upkbyte (bcast8, bcast1m, PvmDataDefault), pvm_reduce(PvmSum)
 *  with a new tag per operation (reduce1int, reduce1mdbl), pvm_send / pvm_recv (rtt8 with
 *  PvmDataDefault, stream1m with PvmDataRaw), pvm_putinfo + pvm_recvinfo on the task's own
 *  class (mbox, bench/mbox_loop.h, the same loop real PVM runs in bench/pvm-mbox.sh).  Each
 *  member times its own part; pvm_gather
 *  brings the times to instance 0, which prints the per-iteration maximum's median.
 *  gimpirun is found beside the build (../programs/gimpirun), else through GIMPI_BENCH_GIMPIRUN,
 *  else on PATH.
 */
#include "pvm3.h"
#include "bench_stats.h"
#include "mbox_loop.h"
#include "base/gimpi_tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA 11
#define TAG_TIMES 12
#define TAG_BAD 13
#define TAG_ACK 14
#define TAG_RED 1000

typedef struct {
    char *group;    /* the run's, "gimpi-pvm-bench-<launcher pid>": runs side by side (on
                     * one groupd) never share a group */
    int n;          /* members */
    int inst;       /* my instance */
    int root;       /* tid of instance 0 */
    int other;      /* rtt8, stream1m: the other member's tid */
} pb_t;

/*  Reports a failed PVM call of this task; returns 1. */
static int s_fail(const char *what, int rc)
{
    fprintf(stderr, "gimpi-pvm-bench t%x: %s: %d\n", (unsigned)pvm_mytid(), what, rc);
    return 1;
}

/*  Brings every member's I times (and bad flag) to instance 0, which prints the line:
 *  per iteration the maximum over members, then median, min, p90, max.  bad < 0: no check. */
static int s_report(const pb_t *p, const char *figure, double *t, int I, int W,
                    const char *extra, int bad)
{
    double *all = p->inst == 0 ? malloc((size_t)I * (size_t)p->n * sizeof *all) : NULL;
    int *bads = p->inst == 0 ? malloc((size_t)p->n * sizeof *bads) : NULL;
    if (p->inst == 0 && (!all || !bads))
        return s_fail("malloc", PvmNoMem);
    int rc = pvm_gather(all, t, I, PVM_DOUBLE, TAG_TIMES, p->group, 0);
    if (rc >= 0)
        rc = pvm_gather(bads, &bad, 1, PVM_INT, TAG_BAD, p->group, 0);
    if (rc < 0)
        return s_fail("pvm_gather", rc);
    if (p->inst == 0) {
        int anybad = 0;
        for (int r = 0; r < p->n; r++)
            anybad = bads[r] > anybad ? bads[r] : anybad;
        char per[8 * 16 + 16];
        bench_member_medians(all, p->n, I, per, sizeof per);
        for (int i = 0; i < I; i++)
            for (int r = 1; r < p->n; r++)
                if (all[(size_t)r * (size_t)I + (size_t)i] > all[i])
                    all[i] = all[(size_t)r * (size_t)I + (size_t)i];
        qsort(all, (size_t)I, sizeof *all, bench_cmp);
        char mb[40] = "";
        if (strcmp(figure, "bcast1m") == 0)
            snprintf(mb, sizeof mb, " MBps=%.1f", 1048576.0 / all[I / 2]);
        printf("gimpi-pvm %s n=%d median_us=%.2f min_us=%.2f p90_us=%.2f max_us=%.2f%s%s%s "
               "iters=%d warm=%d%s\n", figure, p->n, all[I / 2], all[0], all[I * 9 / 10],
               all[I - 1], extra ? extra : "", mb, per, I, W,
               bad < 0 ? "" : anybad ? " check=BAD" : " check=ok");
        fflush(stdout);
    }
    free(all);
    free(bads);
    return 0;
}

/*  barrier: I barriers back to back, each timed. */
static int s_barrier(const pb_t *p)
{
    enum { W = 200, I = 2000 };
    static double t[I];
    int rc;
    for (int i = 0; i < W; i++)
        if ((rc = pvm_barrier(p->group, p->n)) < 0)
            return s_fail("pvm_barrier", rc);
    double start = bench_now_us();
    for (int i = 0; i < I; i++) {
        double t0 = bench_now_us();
        if ((rc = pvm_barrier(p->group, p->n)) < 0)
            return s_fail("pvm_barrier", rc);
        t[i] = bench_now_us() - t0;
    }
    double mean = (bench_now_us() - start) / I, worst = mean;
    if ((rc = pvm_reduce(PvmMax, &worst, 1, PVM_DOUBLE, TAG_RED - 1, p->group, 0)) < 0)
        return s_fail("pvm_reduce", rc);
    char extra[64];
    snprintf(extra, sizeof extra, " mean_us=%.2f", worst);
    return s_report(p, "barrier", t, I, W, extra, -1);
}

/*  bcast8 / bcast1m: an untimed barrier, then the root packs and broadcasts len bytes and
 *  every receiver receives and unpacks them. */
static int s_bcast(const pb_t *p, const char *figure, int len, int W, int I)
{
    unsigned char *buf = malloc((size_t)len);
    double *t = malloc((size_t)I * sizeof *t);
    if (!buf || !t)
        return s_fail("malloc", PvmNoMem);
    memset(buf, 0x5a, (size_t)len);
    int bad = 0, rc;
    for (int i = 0; i < W + I; i++) {
        unsigned char v = (unsigned char)(i + 1);
        buf[0] = buf[len - 1] = p->inst == 0 ? v : 0;
        if ((rc = pvm_barrier(p->group, p->n)) < 0)
            return s_fail("pvm_barrier", rc);
        double t0 = bench_now_us();
        if (p->inst == 0) {
            if ((rc = pvm_initsend(PvmDataDefault)) < 0
                || (rc = pvm_pkbyte((char *)buf, len, 1)) < 0
                || (rc = pvm_bcast(p->group, TAG_DATA)) < 0)
                return s_fail("pvm_initsend/pkbyte/bcast", rc);
        } else if ((rc = pvm_recv(p->root, TAG_DATA)) < 0
                   || (rc = pvm_upkbyte((char *)buf, len, 1)) < 0)
            return s_fail("pvm_recv/upkbyte", rc);
        double t1 = bench_now_us();
        if (i >= W)
            t[i - W] = t1 - t0;
        if (p->inst != 0 && (buf[0] != v || buf[len - 1] != v))
            bad = 1;
    }
    rc = s_report(p, figure, t, I, W, NULL, bad);
    free(buf);
    free(t);
    return rc;
}

/*  reduce1int / reduce1mdbl: input refilled, untimed barrier, pvm_reduce(PvmSum) to
 *  instance 0 with a new tag per operation. */
static int s_reduce(const pb_t *p, const char *figure, int count, int dbl, int W, int I)
{
    void *data = malloc((size_t)count * (dbl ? sizeof(double) : sizeof(int)));
    double *t = malloc((size_t)I * sizeof *t);
    if (!data || !t)
        return s_fail("malloc", PvmNoMem);
    int bad = 0, rc, want = p->n * (p->n + 1) / 2;
    for (int i = 0; i < W + I; i++) {
        for (int k = 0; k < count; k++)
            if (dbl)
                ((double *)data)[k] = p->inst + 1;
            else
                ((int *)data)[k] = p->inst + 1;
        if ((rc = pvm_barrier(p->group, p->n)) < 0)
            return s_fail("pvm_barrier", rc);
        double t0 = bench_now_us();
        rc = pvm_reduce(PvmSum, data, count, dbl ? PVM_DOUBLE : PVM_INT, TAG_RED + i, p->group, 0);
        double t1 = bench_now_us();
        if (rc < 0)
            return s_fail("pvm_reduce", rc);
        if (i >= W)
            t[i - W] = t1 - t0;
        if (p->inst == 0)
            for (int k = 0; k < count; k += count / 7 + 1)
                if (dbl ? ((double *)data)[k] != want : ((int *)data)[k] != want)
                    bad = 1;
    }
    rc = s_report(p, figure, t, I, W, NULL, bad);
    free(data);
    free(t);
    return rc;
}

/*  rtt8: instance 0 times W + I round trips of 8 packed bytes (PvmDataDefault). */
static int s_rtt8(const pb_t *p)
{
    enum { W = 2000, I = 20000 };
    static double t[I];
    long long v = 0, r = 0;
    int bad = 0, rc;
    for (int i = 0; i < W + I; i++) {
        if (p->inst == 0) {
            v = i;
            double t0 = bench_now_us();
            if ((rc = pvm_initsend(PvmDataDefault)) < 0 || (rc = pvm_pkbyte((char *)&v, 8, 1)) < 0
                || (rc = pvm_send(p->other, TAG_DATA)) < 0 || (rc = pvm_recv(p->other, TAG_DATA)) < 0
                || (rc = pvm_upkbyte((char *)&r, 8, 1)) < 0)
                return s_fail("rtt8 initiator", rc);
            double t1 = bench_now_us();
            if (i >= W)
                t[i - W] = t1 - t0;
            bad |= r != i;
        } else if ((rc = pvm_recv(p->other, TAG_DATA)) < 0 || (rc = pvm_upkbyte((char *)&r, 8, 1)) < 0
                   || (rc = pvm_initsend(PvmDataDefault)) < 0 || (rc = pvm_pkbyte((char *)&r, 8, 1)) < 0
                   || (rc = pvm_send(p->other, TAG_DATA)) < 0)
            return s_fail("rtt8 responder", rc);
    }
    if (p->inst == 0) {
        qsort(t, I, sizeof *t, bench_cmp);
        printf("gimpi-pvm rtt8 n=2 median_us=%.2f min_us=%.2f p90_us=%.2f max_us=%.2f bytes=8 "
               "iters=%d warm=%d check=%s\n", t[I / 2], t[0], t[I * 9 / 10], t[I - 1], I, W,
               bad ? "BAD" : "ok");
        fflush(stdout);
    }
    return 0;
}

/*  stream1m: instance 0 sends 20 + 400 messages of 1 MiB (PvmDataRaw) back to back, the
 *  other checks each and acknowledges each round with 8 bytes. */
static int s_stream1m(const pb_t *p)
{
    enum { W = 20, M = 400, B = 1 << 20 };
    unsigned char *buf = malloc(B);
    if (!buf)
        return s_fail("malloc", PvmNoMem);
    memset(buf, 0x5a, B);
    unsigned seq = 0;
    long long ack = 0;
    double el = 0;
    int rc;
    for (int round = 0; round < 2; round++) {
        int cnt = round ? M : W;
        if (p->inst == 0) {
            double t0 = bench_now_us();
            for (int k = 0; k < cnt; k++) {
                buf[0] = buf[B - 1] = (unsigned char)++seq;
                if ((rc = pvm_initsend(PvmDataRaw)) < 0 || (rc = pvm_pkbyte((char *)buf, B, 1)) < 0
                    || (rc = pvm_send(p->other, TAG_DATA)) < 0)
                    return s_fail("stream1m send", rc);
            }
            if ((rc = pvm_recv(p->other, TAG_ACK)) < 0 || (rc = pvm_upkbyte((char *)&ack, 8, 1)) < 0)
                return s_fail("stream1m ack", rc);
            el = bench_now_us() - t0;
        } else {
            for (int k = 0; k < cnt; k++) {
                if ((rc = pvm_recv(p->other, TAG_DATA)) < 0 || (rc = pvm_upkbyte((char *)buf, B, 1)) < 0)
                    return s_fail("stream1m recv", rc);
                unsigned char e = (unsigned char)++seq;
                if (buf[0] != e || buf[B - 1] != e)
                    ack++;
            }
            if ((rc = pvm_initsend(PvmDataRaw)) < 0 || (rc = pvm_pkbyte((char *)&ack, 8, 1)) < 0
                || (rc = pvm_send(p->other, TAG_ACK)) < 0)
                return s_fail("stream1m ack", rc);
        }
    }
    if (p->inst == 0) {
        printf("gimpi-pvm stream1m n=2 MBps=%.1f us_per_msg=%.2f bytes=%d msgs=%d warm=%d check=%s\n",
               (double)M * B / el, el / M, B, M, W, ack ? "BAD" : "ok");
        fflush(stdout);
    }
    free(buf);
    return 0;
}

/*  mbox: every member times W + I put/recv pairs on a class of its own; pairs_per_s is
 *  N x I / the slowest member's time (as joinlv). */
static int s_mbox(const pb_t *p)
{
    enum { W = 1000, I = 20000 };
    char name[96];
    snprintf(name, sizeof name, "%s-%d", p->group, p->inst);
    double us = 0;
    int bad = 0, rc = mbox_pairs(name, W, I, &us, &bad);
    if (rc < 0)
        return s_fail("mbox pair", rc);
    double worst = us;
    if ((rc = pvm_reduce(PvmMax, &worst, 1, PVM_DOUBLE, TAG_RED - 2, p->group, 0)) < 0
        || (rc = pvm_reduce(PvmMax, &bad, 1, PVM_INT, TAG_RED - 3, p->group, 0)) < 0)
        return s_fail("pvm_reduce", rc);
    if (p->inst == 0) {
        printf("gimpi-pvm mbox n=%d pairs_per_s=%.0f us_per_pair=%.2f iters=%d warm=%d "
               "check=%s\n", p->n, (double)p->n * I / (worst / 1e6), worst / I, I, W,
               bad ? "BAD" : "ok");
        fflush(stdout);
    }
    return 0;
}

/*  One task: join, meet, run the figure, meet, leave. */
static int s_task(const char *figure, int n, char *group)
{
    pvm_setopt(PvmAutoErr, 0);
    pb_t p = { .group = group, .n = n };
    int rc;
    if ((rc = pvm_mytid()) < 0)
        return s_fail("pvm_mytid", rc);
    if ((p.inst = pvm_joingroup(p.group)) < 0)
        return s_fail("pvm_joingroup", p.inst);
    if ((rc = pvm_barrier(p.group, n)) < 0)
        return s_fail("pvm_barrier", rc);
    if ((p.root = pvm_gettid(p.group, 0)) < 0)
        return s_fail("pvm_gettid", p.root);
    if (n == 2 && (p.other = pvm_gettid(p.group, 1 - p.inst)) < 0)
        return s_fail("pvm_gettid", p.other);
    if (!strcmp(figure, "barrier"))
        rc = s_barrier(&p);
    else if (!strcmp(figure, "bcast8"))
        rc = s_bcast(&p, figure, 8, 200, 2000);
    else if (!strcmp(figure, "bcast1m"))
        rc = s_bcast(&p, figure, 1 << 20, 10, 100);
    else if (!strcmp(figure, "reduce1int"))
        rc = s_reduce(&p, figure, 1, 0, 200, 2000);
    else if (!strcmp(figure, "reduce1mdbl"))
        rc = s_reduce(&p, figure, 1 << 20, 1, 2, 20);
    else if (!strcmp(figure, "rtt8"))
        rc = s_rtt8(&p);
    else if (!strcmp(figure, "mbox"))
        rc = s_mbox(&p);
    else
        rc = s_stream1m(&p);
    int brc = pvm_barrier(p.group, n);
    if (rc == 0 && brc < 0)
        rc = s_fail("pvm_barrier", brc);
    pvm_lvgroup(p.group);
    pvm_exit();
    return rc;
}

/*  Runs gimpirun -np N on this program with --task FIGURE N.  Returns only on failure. */
static int s_launch(const char *figure, const char *n)
{
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0)
        return s_fail("readlink /proc/self/exe", -1);
    self[len] = '\0';
    char dir[4096];
    memcpy(dir, self, (size_t)len + 1);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    char group[64];
    snprintf(group, sizeof group, "gimpi-pvm-bench-%ld", (long)getpid());
    char *argv[] = { "gimpirun", "-np", (char *)n, self, "--task", (char *)figure, (char *)n,
                     group, NULL };
    const char *env = gimpi_env("GIMPI_BENCH_GIMPIRUN");
    if (env && *env) {
        execv(env, argv);
        return s_fail(env, -1);
    }
    static const char *const where[] = { "%s/../programs/gimpirun", "%s/../../programs/gimpirun" };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char path[8300];
        snprintf(path, sizeof path, where[i], dir);
        if (access(path, X_OK) == 0)
            execv(path, argv);
    }
    execvp("gimpirun", argv);
    return s_fail("gimpirun not found", -1);
}

/*  1 when figure is one this program measures. */
static int s_known(const char *figure)
{
    static const char *const names[] = { "barrier", "bcast8", "bcast1m", "reduce1int",
                                         "reduce1mdbl", "rtt8", "stream1m", "mbox" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(figure, names[i]) == 0)
            return 1;
    return 0;
}

/*  gimpi-pvm-bench FIGURE N  |  gimpi-pvm-bench --task FIGURE N GROUP (one task, under
 *  gimpirun). */
int main(int argc, char **argv)
{
    int task = argc == 5 && strcmp(argv[1], "--task") == 0;
    if (task)
        argc--;
    const char *figure = argv[argc - 2 >= 1 ? argc - 2 : 0];
    int n = argc >= 3 ? atoi(argv[argc - 1]) : 0;
    if ((argc != 3 && !task) || !s_known(figure)) {
        fprintf(stderr, "usage: gimpi-pvm-bench barrier|bcast8|bcast1m|reduce1int|reduce1mdbl N"
                        " | rtt8|stream1m 2 | mbox N\n");
        return 2;
    }
    if (n < (strcmp(figure, "mbox") ? 2 : 1) || n > 256
        || ((!strcmp(figure, "rtt8") || !strcmp(figure, "stream1m")) && n != 2)) {
        fprintf(stderr, "gimpi-pvm-bench: N must be 2..256 (1..256 for mbox, 2 for rtt8 and "
                        "stream1m)\n");
        return 2;
    }
    return task ? s_task(figure, n, argv[4]) : s_launch(figure, argv[2]);
}
