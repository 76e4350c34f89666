/*  coll_figures.c — the group-operation figures of bench/README.md (barrier,
 *  bcast8, bcast1m, reduce1int, reduce1mdbl) for bench/gimpi-bench, on gimpi's view-level
 *  group operations (gimpi_coll.h): by default the tasks register with groupd under the
 *  data plane's tids, join one group and use the group-level calls (membership from the
 *  groups cache, as a program would); with GIMPI_BENCH_VIEW over a view of every task of
 *  the job (instance i = task i, root = instance 0).  Each member times its own part of every iteration; after the loop
 *  member 0 gathers the times, takes the maximum over members per iteration and prints the
 *  median (and min, p90, max) in the README's line format.
 */
#include "coll_figures.h"
#include "bench_stats.h"
#include "gimpi.h"
#include "gimpi_coll.h"
#include "gimpi_ops.h"
#include "base/gimpi_tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    gimpi_msg_t *msg;
    gimpi_coll_t *coll;
    gimpi_view_t *view;
    int rank, n;
    gimpi_groups_t *g;          /* NULL: view level */
    char group[64];
} bench_t;

/*  The operations, at group level when there is a group.  A failed barrier says so. */
static int s_bar(bench_t *b)
{
    int rc = b->g ? gimpi_coll_group_barrier(b->coll, b->g, b->group, b->n)
                  : gimpi_coll_barrier(b->coll, b->view);
    if (rc)
        fprintf(stderr, "gimpi-bench: task %d: %s barrier failed: %d (%s)\n", b->rank,
                b->g ? "group" : "view", rc, gimpi_strerror(rc));
    return rc;
}

/*  bcast from member 0 on the point-to-point context. */
static int s_bc(bench_t *b, const void *buf, size_t len)
{
    return b->g ? gimpi_coll_group_bcast(b->coll, b->g, b->group, GIMPI_CID_P2P, 7, buf, len)
                : gimpi_coll_bcast(b->coll, b->view, GIMPI_CID_P2P, 7, buf, len);
}

/*  Sum to instance 0. */
static int s_red(bench_t *b, void *data, int count, int dt)
{
    return b->g ? gimpi_coll_group_reduce(b->coll, b->g, b->group, GIMPI_OP_SUM, NULL, data,
                                          count, dt, 3, 0)
                : gimpi_coll_reduce(b->coll, b->view, GIMPI_OP_SUM, NULL, data, count, dt, 3, 0);
}

/*  Gathers every member's I times to member 0, which prints the figure line. */
static int s_report(bench_t *b, const char *figure, double *t, int I, int W, const char *extra,
                    int bad)
{
    double *all = b->rank == 0 ? malloc((size_t)I * (size_t)b->n * sizeof *all) : NULL;
    if (b->rank == 0 && !all)
        return 1;
    if (gimpi_coll_gather(b->coll, b->view, all, t, I, GIMPI_DOUBLE, 1, 0))
        return 1;
    int anybad = bad;
    if (gimpi_coll_reduce(b->coll, b->view, GIMPI_OP_MAX, NULL, &anybad, 1, GIMPI_INT, 1, 0))
        return 1;
    if (b->rank == 0) {
        double *m = malloc((size_t)I * sizeof *m);
        if (!m)
            return 1;
        for (int i = 0; i < I; i++) {
            m[i] = 0;
            for (int r = 0; r < b->n; r++)
                if (all[(size_t)r * (size_t)I + (size_t)i] > m[i])
                    m[i] = all[(size_t)r * (size_t)I + (size_t)i];
        }
        qsort(m, (size_t)I, sizeof *m, bench_cmp);
        char per[8 * 16 + 16];
        bench_member_medians(all, b->n, I, per, sizeof per);
        char mb[40] = "";
        if (strcmp(figure, "bcast1m") == 0)
            snprintf(mb, sizeof mb, " MBps=%.1f", 1048576.0 / m[I / 2]);
        printf("gimpi %s n=%d median_us=%.2f min_us=%.2f p90_us=%.2f max_us=%.2f%s%s%s iters=%d "
               "warm=%d api=%s%s\n", figure, b->n, m[I / 2], m[0], m[I * 9 / 10], m[I - 1],
               extra ? extra : "", mb, per, I, W, b->g ? "group" : "view",
               anybad < 0 ? "" : anybad ? " check=BAD" : " check=ok");
        fflush(stdout);
        free(m);
    }
    free(all);
    return 0;
}

/*  barrier: back to back. */
static int s_barrier(bench_t *b)
{
    enum { W = 200, I = 2000 };
    double t[I];
    int warm = bench_warm(W);
    for (int i = 0; i < warm; i++)
        if (s_bar(b))
            return 1;
    double start = bench_now_us();
    for (int i = 0; i < I; i++) {
        double t0 = bench_now_us();
        if (s_bar(b))
            return 1;
        t[i] = bench_now_us() - t0;
    }
    double el = bench_now_us() - start, mean;
    if (gimpi_coll_reduce(b->coll, b->view, GIMPI_OP_MAX, NULL, &el, 1, GIMPI_DOUBLE, 2, 0))
        return 1;
    mean = el / I;
    char extra[64];
    snprintf(extra, sizeof extra, " mean_us=%.2f", mean);
    return s_report(b, "barrier", t, I, W, b->rank == 0 ? extra : NULL, -1);
}

/*  bcast8 / bcast1m: root 0 sends len bytes, receivers time until it is in their buffer. */
static int s_bcast(bench_t *b, const char *figure, size_t len, int W, int I)
{
    W = bench_warm(W);
    unsigned char *buf = malloc(len);
    double *t = malloc((size_t)I * sizeof *t);
    if (!buf || !t)
        return 1;
    memset(buf, 0x5a, len);
    int bad = 0;
    gimpi_status_t st;
    for (int i = 0; i < W + I; i++) {
        unsigned char v = (unsigned char)(i + 1);
        if (b->rank == 0)
            buf[0] = buf[len - 1] = v;
        else
            buf[0] = buf[len - 1] = 0;
        if (s_bar(b))
            return 1;
        double t0 = bench_now_us();
        if (b->rank == 0) {
            if (s_bc(b, buf, len))
                return 1;
        } else if (gimpi_msg_recv(b->msg, gimpi_msg_tid(b->msg, 0), 7, buf, len, &st))
            return 1;
        double t1 = bench_now_us();
        if (i >= W)
            t[i - W] = t1 - t0;
        if (b->rank != 0 && (buf[0] != v || buf[len - 1] != v || st.len != len))
            bad = 1;
    }
    int rc = s_report(b, figure, t, I, W, NULL, bad);
    free(buf);
    free(t);
    return rc;
}

/*  reduce1int / reduce1mdbl: sum to root 0, input refilled every iteration. */
static int s_reduce(bench_t *b, const char *figure, int count, int dt, int W, int I)
{
    W = bench_warm(W);
    size_t es = gimpi_datatype_size(dt);
    void *data = malloc((size_t)count * es);
    double *t = malloc((size_t)I * sizeof *t);
    if (!data || !t)
        return 1;
    int bad = 0, want = b->n * (b->n + 1) / 2;
    for (int i = 0; i < W + I; i++) {
        for (int k = 0; k < count; k++)
            if (dt == GIMPI_INT)
                ((int *)data)[k] = b->rank + 1;
            else
                ((double *)data)[k] = b->rank + 1;
        if (s_bar(b))
            return 1;
        double t0 = bench_now_us();
        int r = s_red(b, data, count, dt);
        if (r) {
            fprintf(stderr, "gimpi-bench: reduce %d: %s\n", i, gimpi_strerror(r));
            return 1;
        }
        double t1 = bench_now_us();
        if (i >= W)
            t[i - W] = t1 - t0;
        if (b->rank == 0)
            for (int k = 0; k < count; k += count / 7 + 1)
                if (dt == GIMPI_INT ? ((int *)data)[k] != want : ((double *)data)[k] != want)
                    bad = 1;
    }
    int rc = s_report(b, figure, t, I, W, NULL, bad);
    free(data);
    free(t);
    return rc;
}

/*  1 when figure is one of ours. */
int coll_figure_known(const char *figure)
{
    static const char *const names[] = { "barrier", "bcast8", "bcast1m", "reduce1int",
                                         "reduce1mdbl" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(figure, names[i]) == 0)
            return 1;
    return 0;
}

/*  Says on stderr which step of the set-up failed, with its result; returns -1. */
static int s_why(const bench_t *b, const char *step, int rc)
{
    fprintf(stderr, "gimpi-bench: task %d: %s failed: %d (%s)\n", b->rank, step, rc,
            gimpi_strerror(rc));
    return -1;
}

/*  Joins the job's group in groupd under the data plane's tid (instance = rank, joined in
 *  rank order) and waits for everybody in groupd's barrier.  0 or -1. */
static int s_join(bench_t *b, int tidbase)
{
    b->g = gimpi_groups_new(NULL, NULL);
    snprintf(b->group, sizeof b->group, "gimpi-bench-%d", tidbase);
    int rc;
    const char *tok = gimpi_env("GIMPI_BENCH_TID_TOKEN");     /* the block's, from gimpi-bench */
    if (!b->g || (rc = tok ? gimpi_groups_set_tid_token(b->g, gimpi_msg_mytid(b->msg), tok)
                           : gimpi_groups_set_tid(b->g, gimpi_msg_mytid(b->msg))) < 0)
        return s_why(b, "no groups object, or set_tid", b->g ? rc : GIMPI_ENOMEM);
    for (int r = 0; r < b->n; r++) {           /* instance i = rank i, as the figures say */
        if (r == b->rank && (rc = gimpi_group_join(b->g, b->group)) != r)
            return s_why(b, "join", rc);
        if ((rc = gimpi_coll_barrier(b->coll, b->view)) != 0)
            return s_why(b, "data-plane barrier between joins", rc);
    }
    rc = gimpi_group_barrier(b->g, b->group, b->n);
    return rc < 0 ? s_why(b, "groupd barrier after the joins", rc) : 0;
}

/*  Runs one figure in one task; 0 or 1. */
int coll_figure(gimpi_msg_t *msg, int rank, const char *figure, int tidbase)
{
    bench_t b = { msg, gimpi_coll_new(msg), NULL, rank, gimpi_msg_ntasks(msg), NULL, "" };
    int tids[1024];
    for (int i = 0; i < b.n && i < 1024; i++)
        tids[i] = gimpi_msg_tid(msg, i);
    b.view = gimpi_view_new("bench", 1, tids, b.n, gimpi_msg_mytid(msg));
    int rc = 1;
    int first = b.coll && b.view ? gimpi_coll_barrier(b.coll, b.view) : GIMPI_ENOMEM;
    if (first)
        fprintf(stderr, "gimpi-bench: task %d: the first view barrier failed: %d (%s)\n",
                rank, first, gimpi_strerror(first));
    if (first == 0 &&
        (tidbase < 0 || s_join(&b, tidbase) == 0) && s_bar(&b) == 0) {
        if (!strcmp(figure, "barrier"))
            rc = s_barrier(&b);
        else if (!strcmp(figure, "bcast8"))
            rc = s_bcast(&b, figure, 8, 200, 2000);
        else if (!strcmp(figure, "bcast1m"))
            rc = s_bcast(&b, figure, 1u << 20, 10, 100);
        else if (!strcmp(figure, "reduce1int"))
            rc = s_reduce(&b, figure, 1, GIMPI_INT, 200, 2000);
        else if (!strcmp(figure, "reduce1mdbl"))
            rc = s_reduce(&b, figure, 1 << 20, GIMPI_DOUBLE, 2, 20);
        if (rc == 0)
            rc = s_bar(&b) ? 1 : 0;
    }
    if (b.g && rc == 0)
        gimpi_group_leave(b.g, b.group);
    gimpi_groups_destroy(&b.g);
    gimpi_view_destroy(&b.view);
    gimpi_coll_destroy(&b.coll);
    return rc;
}
