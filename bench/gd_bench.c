/*  gd_bench.c — group-control benchmarks for issue 4 (`gd-bench`), until they move into
 *  bench/gimpi-bench: `gd-bench joinlv N PAIRS` (N tasks, threads with their own sockets,
 *  churning join+leave pairs on one group: pairs/s, and for N = 1 the rate of the last
 *  1,000 pairs against the first 1,000), `gd-bench gettid ITER` (gettid on a dynamic group
 *  of 4: calls/s, answered from the cache), `gd-bench rss PAIRS` (groupd's resident memory
 *  after 10,000 and after PAIRS join/leave pairs).  It starts its own groupd on a private
 *  endpoint (groupd found beside it in ../groupd/ or via $GIMPI_GROUPD_BIN).
 */
#include "gimpi.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*  Monotonic seconds. */
static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

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
    char bin[4096] = "groupd";
    const char *env = getenv("GIMPI_GROUPD_BIN");
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

typedef struct {
    const char *ep;
    long pairs;
    double first_1000, last_1000;   /* seconds */
    int errors;
    pthread_barrier_t *start;
} churn_t;

/*  One churning task: join+leave pairs on one group. */
static void *s_churn(void *arg)
{
    churn_t *c = arg;
    gimpi_groups_t *g = gimpi_groups_new(c->ep, NULL);
    gimpi_group_mytid(g);
    pthread_barrier_wait(c->start);
    double t = s_now();
    for (long k = 0; k < c->pairs; k++) {
        if (k == 1000)
            c->first_1000 = s_now() - t;
        if (k == c->pairs - 1000)
            t = s_now();
        if (gimpi_group_join(g, "churn") < 0 || gimpi_group_leave(g, "churn") < 0)
            c->errors++;
    }
    c->last_1000 = s_now() - t;
    gimpi_groups_destroy(&g);
    return NULL;
}

/*  Runs the benchmark named by argv[1]. */
int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gd-bench joinlv N PAIRS | gettid ITER | rss PAIRS\n");
        return 2;
    }
    daemon_t d;
    if (s_start(&d, argv[0]) < 0) {
        fprintf(stderr, "gd-bench: cannot start groupd\n");
        return 1;
    }
    int rc = 0;
    if (!strcmp(argv[1], "joinlv") && argc >= 4) {
        int n = atoi(argv[2]);
        long pairs = atol(argv[3]);
        churn_t *c = calloc((size_t)n, sizeof *c);
        pthread_t *th = calloc((size_t)n, sizeof *th);
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)n + 1);
        for (int k = 0; k < n; k++) {
            c[k] = (churn_t){ .ep = d.ep, .pairs = pairs, .start = &start };
            pthread_create(&th[k], NULL, s_churn, &c[k]);
        }
        pthread_barrier_wait(&start);
        double t0 = s_now();
        int errors = 0;
        for (int k = 0; k < n; k++) {
            pthread_join(th[k], NULL);
            errors += c[k].errors;
        }
        double dt = s_now() - t0;
        printf("joinlv n=%d pairs/task=%ld: %.0f pairs/s (%d errors)", n, pairs,
               (double)n * (double)pairs / dt, errors);
        if (n == 1 && pairs >= 2000)
            printf("; first 1000: %.0f/s, last 1000: %.0f/s", 1000 / c[0].first_1000,
                   1000 / c[0].last_1000);
        printf("\n");
        free(c);
        free(th);
    } else if (!strcmp(argv[1], "gettid")) {
        long iter = atol(argv[2]);
        gimpi_groups_t *g[4];
        for (int k = 0; k < 4; k++) {
            g[k] = gimpi_groups_new(d.ep, NULL);
            gimpi_group_join(g[k], "dyn");
        }
        int want = gimpi_group_mytid(g[3]);
        for (int k = 0; k < 1000; k++)         /* warm: subscribe, MARK, snapshot */
            gimpi_group_gettid(g[0], "dyn", 3);
        double t0 = s_now();
        long bad = 0;
        for (long k = 0; k < iter; k++)
            bad += gimpi_group_gettid(g[0], "dyn", 3) != want;
        double dt = s_now() - t0;
        uint64_t local, remote;
        gimpi_groups_counters(g[0], &local, &remote);
        printf("gettid (dynamic group of 4): %.0f calls/s, %.1f ns/call, %ld wrong, "
               "%llu local / %llu round trips\n", (double)iter / dt, dt / (double)iter * 1e9,
               bad, (unsigned long long)local, (unsigned long long)remote);
        for (int k = 0; k < 4; k++)
            gimpi_groups_destroy(&g[k]);
    } else if (!strcmp(argv[1], "rss")) {
        long pairs = atol(argv[2]);
        gimpi_groups_t *g = gimpi_groups_new(d.ep, NULL);
        long rss10k = 0;
        double t0 = s_now();
        for (long k = 0; k < pairs; k++) {
            gimpi_group_join(g, "rss");
            gimpi_group_leave(g, "rss");
            if (k + 1 == 10000)
                rss10k = s_rss(d.pid);
        }
        double dt = s_now() - t0;
        long rss = s_rss(d.pid);
        printf("groupd RSS after 10,000 pairs: %ld kB, after %ld: %ld kB (%+.1f%%); %.0f pairs/s\n",
               rss10k, pairs, rss, 100.0 * (double)(rss - rss10k) / (double)rss10k,
               (double)pairs / dt);
        gimpi_groups_destroy(&g);
    } else {
        fprintf(stderr, "gd-bench: unknown benchmark %s\n", argv[1]);
        rc = 2;
    }
    s_stop(&d);
    return rc;
}
