/*  gd_bench.c — the group-control benchmarks (`gd-bench`; `gimpi-bench joinlv N` and
 *  `gimpi-bench gettid N` run it).  Two standard figures, each printed as one line
 *  `gimpi FIGURE n=N METRIC=VALUE [key=value ...]`, the line format of every figure of
 *  gimpi-bench, so that one comparison driver runs them beside PVM's:
 *    joinlv N: N member processes, all in a sync group; each makes W = 100 untimed
 *      join+leave pairs on one group G, all meet in a barrier on the sync group, then each
 *      times P = 2000 pairs on G; pairs_per_s = N x P / the slowest task's time (extra
 *      us_per_pair).
 *    gettid N: an N-member group; member 0 makes 100 untimed calls, then calls
 *      gettid(G, i mod N) in blocks of 1000 until >= 20,000 calls and >= 0.25 s while the
 *      others wait in a barrier; calls_per_s (extra us_per_call).
 *  Extra modes: `gd-bench curve PAIRS` (one task: rate over the first 1,000 pairs and over
 *  the last 1,000, and the median 1,000-pair window of the first and of the last tenth)
 *  and `gd-bench rss PAIRS` (groupd's resident memory after 10,000 and after PAIRS pairs).
 *  It starts its own groupd on a private endpoint ($GIMPI_GROUPD_BIN, else groupd/groupd of
 *  the build tree, else PATH); GD_BENCH_ENDPOINT (e.g. "tcp://127.0.0.1:*") binds it there
 *  instead, to measure the tcp path (CURVE).  doc/groupd-protocol.md §10 has the measured figures.
 */
#include "gimpi.h"
#include "bench_stats.h"
#include "base/gimpi_tunables.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    char ep[300];
    char dir[64];
    pid_t pid;
} daemon_t;

/*  Starts groupd --foreground on a private endpoint; waits for its endpoint line. */
static int s_start(daemon_t *d, const char *argv0)
{
    snprintf(d->dir, sizeof d->dir, "/tmp/gdbench-XXXXXX");
    if (!mkdtemp(d->dir))
        return -1;
    snprintf(d->ep, sizeof d->ep, "ipc://%s/gd", d->dir);
    const char *want = gimpi_env("GD_BENCH_ENDPOINT");
    if (want && *want)
        snprintf(d->ep, sizeof d->ep, "%s", want);
    char bin[4096] = "groupd";
    const char *env = gimpi_env("GIMPI_GROUPD_BIN");
    (void)argv0;
    if (env)
        snprintf(bin, sizeof bin, "%s", env);
    else {
        /* the build tree: bench/gd-bench or bench/.libs/gd-bench beside groupd/groupd */
        char exe[2048];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        const char *up[] = { "/../groupd/groupd", "/../../groupd/groupd" };
        for (int k = 0; k < 2; k++) {
            snprintf(bin, sizeof bin, "%s%s", exe, up[k]);
            if (access(bin, X_OK) == 0)
                break;
            snprintf(bin, sizeof bin, "groupd");
        }
    }
    int p[2];
    if (pipe(p) < 0)
        return -1;
    d->pid = fork();
    if (d->pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        execlp(bin, bin, "--foreground", "--endpoint", d->ep, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    char line[400];
    ssize_t n = read(p[0], line, sizeof line - 1);
    close(p[0]);
    if (n > 0 && want && *want) {           /* the port it chose */
        line[n] = 0;
        line[strcspn(line, "\n")] = 0;
        snprintf(d->ep, sizeof d->ep, "%.*s", (int)sizeof d->ep - 1, line);
    }
    return n > 0 ? 0 : -1;
}

/*  Stops groupd and removes its files. */
static void s_stop(daemon_t *d)
{
    kill(d->pid, SIGTERM);
    waitpid(d->pid, NULL, 0);
    char path[128];
    const char *f[] = { "gd", "gd.pub", "gd.lock" };
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", d->dir, f[k]);
        unlink(path);
    }
    rmdir(d->dir);
}

/*  Median of n values (sorts a copy). */
static double s_median(const double *v, long n)
{
    double *c = malloc((size_t)n * sizeof *c);
    if (!c)
        return 0;
    memcpy(c, v, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, bench_cmp);
    double m = c[n / 2];
    free(c);
    return m;
}

/*  Resident memory of a process, kB. */
static long s_rss(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/*  Waits for every child; 0 when all exited 0. */
static int s_reap(pid_t *pids, int n)
{
    int bad = 0;
    for (int k = 0; k < n; k++) {
        int st;
        if (waitpid(pids[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            bad++;
    }
    return bad;
}

/*  joinlv member k: W untimed pairs, barrier on the sync group, P timed pairs; writes its
 *  elapsed seconds to fd. */
static int s_joinlv_member(const char *ep, int n, int fd)
{
    gimpi_groups_t *g = gimpi_groups_new(ep, NULL);
    int errors = 0;
    if (gimpi_group_join(g, "joinlv-sync") < 0)
        return 1;
    for (int k = 0; k < 100; k++)
        errors += gimpi_group_join(g, "joinlv") < 0 || gimpi_group_leave(g, "joinlv") < 0;
    if (gimpi_group_barrier(g, "joinlv-sync", n) < 0)
        return 1;
    double t0 = bench_now_s();
    for (int k = 0; k < 2000; k++)
        errors += gimpi_group_join(g, "joinlv") < 0 || gimpi_group_leave(g, "joinlv") < 0;
    double dt = bench_now_s() - t0;
    char line[64];
    int len = snprintf(line, sizeof line, "%.9f %d\n", dt, errors);
    if (write(fd, line, (size_t)len) != len)
        return 1;
    gimpi_group_barrier(g, "joinlv-sync", n);
    gimpi_groups_destroy(&g);
    return 0;
}

/*  gettid member k: all join G and meet; member 0 times the calls, the others wait. */
static int s_gettid_member(const char *ep, int n, int k, int fd)
{
    gimpi_groups_t *g = gimpi_groups_new(ep, NULL);
    if (gimpi_group_join(g, "gettid") < 0 || gimpi_group_barrier(g, "gettid", n) < 0)
        return 1;
    if (k == 0) {
        long bad = 0, calls = 0;
        for (int i = 0; i < 100; i++)
            bad += gimpi_group_gettid(g, "gettid", i % n) <= 0;
        double t0 = bench_now_s(), dt = 0;
        while (calls < 20000 || dt < 0.25) {
            for (int i = 0; i < 1000; i++, calls++)
                bad += gimpi_group_gettid(g, "gettid", (int)(calls % n)) <= 0;
            dt = bench_now_s() - t0;
        }
        char line[96];
        int len = snprintf(line, sizeof line, "%.9f %ld %ld\n", dt, calls, bad);
        if (write(fd, line, (size_t)len) != len)
            return 1;
    }
    gimpi_group_barrier(g, "gettid", n);
    gimpi_groups_destroy(&g);
    return 0;
}

/*  Forks n members running fn; returns their output lines (concatenated) in buf. */
static int s_members(const char *ep, int n, int figure, char *buf, size_t size)
{
    int p[2];
    if (pipe(p) < 0)
        return -1;
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    fflush(stdout);
    for (int k = 0; k < n; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            close(p[0]);
            _exit(figure == 'j' ? s_joinlv_member(ep, n, p[1]) : s_gettid_member(ep, n, k, p[1]));
        }
    }
    close(p[1]);
    size_t got = 0;
    ssize_t r;
    while (got < size - 1 && (r = read(p[0], buf + got, size - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = 0;
    close(p[0]);
    int bad = s_reap(pids, n);
    free(pids);
    return bad ? -1 : 0;
}

/*  Runs the benchmark named by argv[1]. */
int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gd-bench joinlv N | gettid N | curve PAIRS | rss PAIRS\n");
        return 2;
    }
    daemon_t d;
    if (s_start(&d, argv[0]) < 0) {
        fprintf(stderr, "gd-bench: cannot start groupd\n");
        return 1;
    }
    int rc = 0;
    long arg = atol(argv[2]);
    static char out[65536];
    if (!strcmp(argv[1], "joinlv") && arg > 0) {
        int n = (int)arg;
        if (s_members(d.ep, n, 'j', out, sizeof out) < 0) {
            fprintf(stderr, "gd-bench: a member failed\n");
            rc = 1;
        } else {
            double max = 0;
            int errors = 0;
            for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
                double dt;
                int e;
                if (sscanf(line, "%lf %d", &dt, &e) == 2) {
                    max = dt > max ? dt : max;
                    errors += e;
                }
            }
            printf("gimpi joinlv n=%d pairs_per_s=%.0f us_per_pair=%.2f pairs=2000 warm=100 "
                   "check=%s\n", n, n * 2000.0 / max, max / 2000 * 1e6, errors ? "BAD" : "ok");
        }
    } else if (!strcmp(argv[1], "gettid") && arg > 0) {
        int n = (int)arg;
        double dt;
        long calls, bad;
        if (s_members(d.ep, n, 'g', out, sizeof out) < 0
            || sscanf(out, "%lf %ld %ld", &dt, &calls, &bad) != 3) {
            fprintf(stderr, "gd-bench: a member failed\n");
            rc = 1;
        } else
            printf("gimpi gettid n=%d calls_per_s=%.0f us_per_call=%.4f calls=%ld warm=100 "
                   "check=%s\n", n, calls / dt, dt / calls * 1e6, calls, bad ? "BAD" : "ok");
    } else if (!strcmp(argv[1], "curve") && arg >= 2000) {
        /* the figure: first and last 1,000 pairs; beside it, the medians of the 1,000-pair
           windows in the first and the last tenth, which a passing disturbance (another
           process on the CPU, a migration) cannot move the way it moves one window */
        long nwin = arg / 1000;
        double *win = calloc((size_t)nwin, sizeof *win);
        gimpi_groups_t *g = gimpi_groups_new(d.ep, NULL);
        gimpi_group_mytid(g);
        double t = bench_now_s(), first = 0, w0 = t;
        int errors = 0;
        for (long k = 0; k < arg; k++) {
            if (k == 1000)
                first = bench_now_s() - t;
            if (k == arg - 1000)
                t = bench_now_s();
            if (k % 1000 == 0 && k / 1000 <= nwin) {
                double now = bench_now_s();
                if (k)
                    win[k / 1000 - 1] = 1000 / (now - w0);
                w0 = now;
            }
            errors += gimpi_group_join(g, "curve") < 0 || gimpi_group_leave(g, "curve") < 0;
        }
        double last = bench_now_s() - t;
        if (arg % 1000 == 0)
            win[nwin - 1] = 1000 / (bench_now_s() - w0);
        long tenth = nwin / 10 ? nwin / 10 : 1;
        double head = s_median(win, tenth), tail = s_median(win + nwin - tenth, tenth);
        printf("gimpi joinlv-curve n=1 first1000_pairs_per_s=%.0f last1000_pairs_per_s=%.0f "
               "pairs=%ld ratio=%.2f head_median_pairs_per_s=%.0f tail_median_pairs_per_s=%.0f "
               "median_ratio=%.2f windows=%ld check=%s\n", 1000 / first, 1000 / last, arg,
               first / last, head, tail, tail / head, tenth, errors ? "BAD" : "ok");
        free(win);
        gimpi_groups_destroy(&g);
    } else if (!strcmp(argv[1], "rss") && arg > 10000) {
        gimpi_groups_t *g = gimpi_groups_new(d.ep, NULL);
        long rss10k = 0;
        double t0 = bench_now_s();
        for (long k = 0; k < arg; k++) {
            gimpi_group_join(g, "rss");
            gimpi_group_leave(g, "rss");
            if (k + 1 == 10000)
                rss10k = s_rss(d.pid);
        }
        double dt = bench_now_s() - t0;
        long rss = s_rss(d.pid);
        printf("gimpi groupd-rss n=1 growth_pct=%.1f rss10k_kB=%ld rss_kB=%ld pairs=%ld "
               "pairs_per_s=%.0f\n", 100.0 * (double)(rss - rss10k) / (double)rss10k, rss10k,
               rss, arg, (double)arg / dt);
        gimpi_groups_destroy(&g);
    } else {
        fprintf(stderr, "gd-bench: unknown benchmark or bad argument: %s %s\n", argv[1], argv[2]);
        rc = 2;
    }
    s_stop(&d);
    return rc;
}
