/*  gimpi_bench.c — `gimpi-bench FIGURE N`: the standard point-to-point figures of
 *  bench/README.md measured on gimpi's data plane, in its line format.
 *
 *  The program starts its own job of N tasks on this machine (forked processes, each its
 *  own IMPI host on 127.0.0.(rank+1), tables filled as a single-client startup would:
 *  packet length GIMPI_BENCH_PKTLEN, flow-control marks GIMPI_BENCH_ACKMARK /
 *  GIMPI_BENCH_HIWATER, by default what gimpirun offers: 262144, 32/64), then runs
 *  the figure with gimpi_msg_send / gimpi_msg_recv.  Figures: rtt8 (8-byte ping-pong,
 *  2000 warm-up + 20000 timed round trips, median) and stream1m (20 + 400 messages of
 *  1 MiB, then an 8-byte ack; MB/s).  Both need N = 2.  Member 0 prints the line.
 *  `gimpi-bench --api pvm FIGURE N` runs bench/gimpi-pvm-bench (the same figures through
 *  the PVM API, system name gimpi-pvm); `--api native` is the default.
 */
#include "bench_stats.h"
#include "coll_figures.h"
#include "dp_harness.h"
#include "gimpi.h"
#include "task/gimpi_job.h"
#include "base/gimpi_tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#define MSGB (1 << 20)


/*  rtt8: member 0 times round trips of 8 bytes. */
static int s_rtt8(gimpi_msg_t *ctx, int rank)
{
    enum { I = 20000 };
    int W = bench_warm(2000);
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    double *t = malloc(I * sizeof *t);
    if (!t)
        return 1;
    long long buf = 0, back = 0;
    int bad = 0;
    gimpi_status_t st;
    for (int i = 0; i < W + I; i++) {
        if (rank == 0) {
            buf = i;
            double t0 = bench_now_ns();
            if (gimpi_msg_send(ctx, peer, 1, &buf, 8) || gimpi_msg_recv(ctx, peer, 1, &back, 8, &st))
                return 1;
            double t1 = bench_now_ns();
            if (i >= W)
                t[i - W] = (t1 - t0) / 1e3;
            bad |= back != i;
        } else {
            if (gimpi_msg_recv(ctx, peer, 1, &buf, 8, &st) || gimpi_msg_send(ctx, peer, 1, &buf, 8))
                return 1;
        }
    }
    if (rank == 0) {
        qsort(t, I, sizeof *t, bench_cmp);
        printf("gimpi rtt8 n=2 median_us=%.2f min_us=%.2f p90_us=%.2f max_us=%.2f bytes=8 "
               "iters=%d warm=%d check=%s\n", t[I / 2], t[0], t[I * 9 / 10], t[I - 1], I, W,
               bad ? "BAD" : "ok");
        fflush(stdout);
    }
    free(t);
    return 0;
}

/*  stream1m: member 0 streams 1 MiB messages, member 1 acknowledges each round. */
static int s_stream1m(gimpi_msg_t *ctx, int rank)
{
    enum { W = 20, M = 400 };
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    unsigned char *buf = malloc(MSGB);
    if (!buf)
        return 1;
    memset(buf, 0x5a, MSGB);
    unsigned seq = 0;
    long long ack = 0;
    double el = 0;
    gimpi_status_t st;
    for (int round = 0; round < 2; round++) {
        int cnt = round ? M : W;
        if (rank == 1) {
            for (int k = 0; k < cnt; k++) {
                if (gimpi_msg_recv(ctx, peer, 2, buf, MSGB, &st))
                    return 1;
                unsigned char e = (unsigned char)++seq;
                if (st.len != MSGB || buf[0] != e || buf[MSGB - 1] != e)
                    ack++;
            }
            if (gimpi_msg_send(ctx, peer, 3, &ack, 8))
                return 1;
        } else {
            double t0 = bench_now_ns();
            for (int k = 0; k < cnt; k++) {
                buf[0] = buf[MSGB - 1] = (unsigned char)++seq;
                if (gimpi_msg_send(ctx, peer, 2, buf, MSGB))
                    return 1;
            }
            if (gimpi_msg_recv(ctx, peer, 3, &ack, 8, &st))
                return 1;
            el = (bench_now_ns() - t0) / 1e3;
        }
    }
    if (rank == 0) {
        printf("gimpi stream1m n=2 MBps=%.1f us_per_msg=%.2f bytes=%d msgs=%d warm=%d check=%s\n",
               (double)M * MSGB / el, el / M, MSGB, M, W, ack ? "BAD" : "ok");
        fflush(stdout);
    }
    free(buf);
    return 0;
}

typedef struct {
    const char *figure;
    int tidbase;                /* groupd's block for the job, -1 when groupd is not used */
} job_t;

/*  One task of the job. */
static int s_task(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    const job_t *job = arg;
    const char *figure = job->figure;
    char err[256];
    gimpi_msg_t *ctx = gimpi_msg_new_local(t, rank, lfd, dp_local_fd(), 20000, err, sizeof err);
    if (!ctx) {
        fprintf(stderr, "gimpi-bench: task %d: %s\n", rank, err);
        return 1;
    }
    gimpi_msg_set_timeout(ctx, 120000);
    if (job->tidbase >= 0)
        gimpi_msg_set_tidbase(ctx, job->tidbase);
    int rc = coll_figure_known(figure)        ? coll_figure(ctx, rank, figure, job->tidbase)
             : strcmp(figure, "rtt8") == 0 ? s_rtt8(ctx, rank)
                                           : s_stream1m(ctx, rank);
    if (rc)
        fprintf(stderr, "gimpi-bench: task %d: %s\n", rank, gimpi_msg_errmsg(ctx));
    if (gimpi_msg_finalize(ctx, 20000))
        rc = 1;
    gimpi_msg_destroy(&ctx);
    return rc;
}

/*  Runs program `name`, built beside this one, in this process's place with argv (the
 *  group-control figures joinlv and gettid are gd-bench's, `--api pvm` is gimpi-pvm-bench's).
 *  Returns only when it cannot be found. */
static void s_exec_beside(const char *name, char **argv)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return;
    *slash = '\0';
    static const char *const where[] = { "%s/%s", "%s/../%s", "%s/.libs/%s" };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, where[i], self, name);
        if (access(path, X_OK) == 0) {
            argv[0] = path;
            execv(path, argv);
        }
    }
}

/*  Points GIMPI_GROUPD_BIN at the build tree's groupd (beside this program) when it is not
 *  set, so that a groupd can be started from a build tree. */
static void s_groupd_bin(void)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (gimpi_env("GIMPI_GROUPD_BIN") || n <= 0)
        return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return;
    *slash = '\0';
    static const char *const where[] = { "%s/../groupd/groupd", "%s/../../groupd/groupd" };
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, where[i], self);
        if (access(path, X_OK) == 0) {
            setenv("GIMPI_GROUPD_BIN", path, 1);
            return;
        }
    }
}

/*  gimpi-bench FIGURE N: checks the arguments, runs the job. */
int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--api") && !strcmp(argv[2], "pvm")) {
        argv[2] = argv[0];
        s_exec_beside("gimpi-pvm-bench", argv + 2);
        fprintf(stderr, "gimpi-bench: gimpi-pvm-bench (which measures --api pvm) not found beside me\n");
        return 1;
    }
    if (argc == 5 && !strcmp(argv[1], "--api") && !strcmp(argv[2], "native")) {
        argv[2] = argv[0];
        argv += 2;
        argc -= 2;
    }
    if (argc == 3 && (!strcmp(argv[1], "joinlv") || !strcmp(argv[1], "gettid"))) {
        s_exec_beside("gd-bench", argv);
        fprintf(stderr, "gimpi-bench: gd-bench (which measures %s) not found beside me\n", argv[1]);
        return 1;
    }
    int coll = argc == 3 && coll_figure_known(argv[1]);
    if (argc != 3 || (!coll && strcmp(argv[1], "rtt8") && strcmp(argv[1], "stream1m"))) {
        fprintf(stderr, "usage: gimpi-bench [--api native|pvm] rtt8|stream1m 2 | joinlv N | "
                        "gettid N | barrier|bcast8|bcast1m|reduce1int|reduce1mdbl N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    if (coll && (n < 1 || n > 256)) {
        fprintf(stderr, "gimpi-bench: N must be 1..256\n");
        return 2;
    }
    if (!coll && n != 2) {
        fprintf(stderr, "gimpi-bench: %s is measured with N = 2 only\n", argv[1]);
        return 2;
    }
    const char *pk = gimpi_env("GIMPI_BENCH_PKTLEN");
    const char *am = gimpi_env("GIMPI_BENCH_ACKMARK"), *hw = gimpi_env("GIMPI_BENCH_HIWATER");
    dp_opts_t o = { coll ? n : 2, pk ? (uint32_t)atoi(pk) : GIMPI_DEFAULT_DATALEN,
                    am ? (uint32_t)atoi(am) : GIMPI_DEFAULT_ACKMARK,
                    hw ? (uint32_t)atoi(hw) : GIMPI_DEFAULT_HIWATER, 300000, 1, 0, 0 };
    /* the group figures use a real group in groupd (the tasks register under the tids of
     * a block reserved here) unless GIMPI_BENCH_VIEW is set or groupd cannot be had */
    job_t job = { argv[1], -1 };
    gimpi_groups_t *g = NULL;
    if (coll && !gimpi_env("GIMPI_BENCH_VIEW")) {
        s_groupd_bin();
        g = gimpi_groups_new(NULL, NULL);
        char tok[GIMPI_GROUPS_TOKEN_LEN + 1];
        job.tidbase = g ? gimpi_groups_reserve_token(g, NULL, n, tok) : -1;
        if (job.tidbase >= 0)       /* the tasks (forked below) prove their tids with it */
            setenv("GIMPI_BENCH_TID_TOKEN", tok, 1);
        if (job.tidbase < 0)
            fprintf(stderr, "gimpi-bench: no groupd (%s): measuring over a view\n",
                    gimpi_strerror(job.tidbase));
    }
    int codes[256], rc = 0;
    if (dp_run(&o, s_task, &job, codes) != 0) {
        for (int i = 0; i < o.n; i++)
            if (codes[i])
                fprintf(stderr, "gimpi-bench: task %d exited with %d\n", i, codes[i]);
        rc = 1;
    }
    gimpi_groups_destroy(&g);
    return rc;
}
