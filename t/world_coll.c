/*  t/world_coll.c — IMPI's world collectives (libgimpi/coll/impi_world.c) with real tasks
 *  over loopback TCP (t/dp_harness.c) whose startup tables are split into several IMPI
 *  clients, as an impi-server job of several gimpirun (or LAM/MPI) clients would be: one
 *  client, two (linear masters' phase), five and six (more masters than MAXLINEAR: IMPI's
 *  trees), uneven client sizes.  Barrier; bcast from every root, small and through the
 *  forwarding tree; reduce from every root over several datatypes and ops against a serial
 *  computation, in place at the root; allreduce; count 0; bad arguments; and a proc killed
 *  before a barrier, a reduce or an allreduce (the procs that depend on it get an error,
 *  nobody hangs).
 */
#include "dp_harness.h"
#include "coll/impi_coll.h"
#include "gimpi_ops.h"
#include "gtap.h"
#include "testlib.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond, ...) do { if (!(cond)) return dp_fail(rank, __VA_ARGS__); } while (0)
#define CALL(expr) do { int rc_ = (expr); \
        CHECK(rc_ == 0, "%s: %s", #expr, gimpi_strerror(rc_)); } while (0)

typedef struct {
    const char *clients;        /* client of each world rank, one digit each ("00111") */
    int maxlinear;
    int victim;                 /* world rank killed, -1 none */
    int what;                   /* with a victim: 0 barrier, 1 reduce to 0, 2 allreduce */
} job_t;

/*  The harness's tables with the procs split into the job's clients (each proc is its own
 *  host already); the copy's arrays are the caller's to free. */
static impi_tables_t s_split(const impi_tables_t *t, const job_t *j)
{
    impi_tables_t c = *t;
    int n = t->nprocs;
    c.nclients = j->clients[n - 1] - '0' + 1;
    c.maxlinear = j->maxlinear;
    c.clients = calloc((size_t)c.nclients, sizeof *c.clients);
    c.hosts = malloc((size_t)n * sizeof *c.hosts);
    c.procs = malloc((size_t)n * sizeof *c.procs);
    if (!c.clients || !c.hosts || !c.procs)
        abort();
    memcpy(c.hosts, t->hosts, (size_t)n * sizeof *c.hosts);
    memcpy(c.procs, t->procs, (size_t)n * sizeof *c.procs);
    for (int r = n - 1; r >= 0; r--) {
        int k = j->clients[r] - '0';
        c.procs[r].client = c.hosts[r].client = k;
        c.clients[k] = t->clients[0];
        c.clients[k].first_proc = c.clients[k].first_host = r;
    }
    for (int r = 0; r < n; r++) {
        c.clients[j->clients[r] - '0'].nprocs = 0;
        c.clients[j->clients[r] - '0'].nhosts = 0;
    }
    for (int r = 0; r < n; r++) {
        c.clients[j->clients[r] - '0'].nprocs++;
        c.clients[j->clients[r] - '0'].nhosts++;
    }
    return c;
}

/*  Frees the arrays of s_split. */
static void s_unsplit(impi_tables_t *c)
{
    free(c->clients);
    free(c->hosts);
    free(c->procs);
}

/*  The task's context over the harness's tables split into the job's clients. */
static gimpi_msg_t *s_open(const impi_tables_t *t0, const job_t *j, int rank, int lfd,
                           int timeout_ms)
{
    impi_tables_t t = s_split(t0, j);
    gimpi_msg_t *ctx = dp_open(&t, rank, lfd, timeout_ms);
    s_unsplit(&t);
    return ctx;
}

/*  Element i of rank r's contribution. */
static int s_ival(int r, int i)
{
    return (r * 31 + i * 7) % 23 - 11;
}

/*  Everything that works, then the bad arguments. */
static int s_body(const impi_tables_t *t0, int rank, int lfd, void *arg)
{
    job_t *j = arg;
    gimpi_msg_t *ctx = s_open(t0, j, rank, lfd, 60000);
    CHECK(ctx, "open");
    int n = gimpi_msg_ntasks(ctx);
    for (int r = 0; r < n; r++)
        CHECK(gimpi_msg_client(ctx, gimpi_msg_tid(ctx, r)) == j->clients[r] - '0',
              "rank %d is not in client %c", r, j->clients[r]);
    for (int i = 0; i < 3; i++)
        CALL(impi_world_barrier(ctx));
    /* bcast from every root, small, then large (through the forwarding tree) */
    size_t lens[] = { 1, 1000, 300000 };
    uint8_t *buf = malloc(300000);
    CHECK(buf, "malloc");
    for (int root = 0; root < n; root++)
        for (int l = 0; l < 3; l++) {
            memset(buf, 0, lens[l]);
            if (rank == root)
                dp_fill(buf, lens[l], (uint32_t)(root * 10 + l));
            CALL(impi_world_bcast(ctx, buf, lens[l], root));
            CHECK(dp_check(buf, lens[l], (uint32_t)(root * 10 + l)) < 0,
                  "bcast %zu B from %d: wrong data", lens[l], root);
        }
    free(buf);
    /* reduce from every root: int sum, double max, long product, in place at the root */
    enum { COUNT = 20000 };
    int *in = malloc(COUNT * sizeof *in), *out = malloc(COUNT * sizeof *out);
    CHECK(in && out, "malloc");
    for (int i = 0; i < COUNT; i++)
        in[i] = s_ival(rank, i);
    for (int root = 0; root < n; root++) {
        int counts[] = { 1, COUNT };
        for (int c = 0; c < 2; c++) {
            memset(out, 0, COUNT * sizeof *out);
            CALL(impi_world_reduce(ctx, in, rank == root ? out : NULL, counts[c], GIMPI_INT,
                                   GIMPI_OP_SUM, root));
            for (int i = 0; rank == root && i < counts[c]; i++) {
                int want = 0;
                for (int r = 0; r < n; r++)
                    want += s_ival(r, i);
                CHECK(out[i] == want, "reduce sum to %d [%d]: %d, want %d", root, i, out[i],
                      want);
            }
        }
        double d[3] = { rank * 1.5, -rank, rank == root ? 100 : 0 }, dw[3];
        CALL(impi_world_reduce(ctx, d, d, 3, GIMPI_DOUBLE, GIMPI_OP_MAX, root));
        dw[0] = (n - 1) * 1.5, dw[1] = 0, dw[2] = 100;
        CHECK(rank != root || memcmp(d, dw, sizeof d) == 0, "reduce max in place to %d", root);
        long p = rank % 3 == 0 ? 2 : -1, pw = 1;
        for (int r = 0; r < n; r++)
            pw *= r % 3 == 0 ? 2 : -1;
        CALL(impi_world_reduce(ctx, &p, &p, 1, GIMPI_LONG, GIMPI_OP_PRODUCT, root));
        CHECK(rank != root || p == pw, "reduce product to %d: %ld, want %ld", root, p, pw);
    }
    /* allreduce: min over ints, sum in place */
    CALL(impi_world_allreduce(ctx, in, out, COUNT, GIMPI_INT, GIMPI_OP_MIN));
    for (int i = 0; i < COUNT; i++) {
        int want = s_ival(0, i);
        for (int r = 1; r < n; r++)
            want = s_ival(r, i) < want ? s_ival(r, i) : want;
        CHECK(out[i] == want, "allreduce min [%d]: %d, want %d", i, out[i], want);
    }
    unsigned u = (unsigned)rank + 1;
    CALL(impi_world_allreduce(ctx, &u, &u, 1, GIMPI_UINT, GIMPI_OP_SUM));
    CHECK(u == (unsigned)(n * (n + 1) / 2), "allreduce sum in place: %u", u);
    /* count 0 and bad arguments: the same answer everywhere, nothing sent */
    CALL(impi_world_bcast(ctx, NULL, 0, 0));
    CALL(impi_world_reduce(ctx, in, out, 0, GIMPI_INT, GIMPI_OP_SUM, 0));
    int bad[] = {
        impi_world_bcast(ctx, NULL, 4, 0),
        impi_world_bcast(ctx, in, 4, -1),
        impi_world_bcast(ctx, in, 4, n),
        impi_world_reduce(ctx, in, out, -1, GIMPI_INT, GIMPI_OP_SUM, 0),
        impi_world_reduce(ctx, in, out, 1, 99, GIMPI_OP_SUM, 0),
        impi_world_reduce(ctx, in, out, 1, -1, GIMPI_OP_SUM, 0),
        impi_world_reduce(ctx, in, out, 1, GIMPI_STR, GIMPI_OP_SUM, 0),
        impi_world_reduce(ctx, in, out, 1, GIMPI_INT, 7, 0),
        impi_world_reduce(ctx, in, out, 1, GIMPI_INT, -1, 0),
        impi_world_reduce(ctx, in, out, 1, GIMPI_INT, GIMPI_OP_SUM, n),
        impi_world_reduce(ctx, NULL, out, 1, GIMPI_INT, GIMPI_OP_SUM, 0),
        impi_world_allreduce(ctx, in, NULL, 1, GIMPI_INT, GIMPI_OP_SUM),
        impi_world_allreduce(ctx, in, out, 1, GIMPI_DCPLX + 5, GIMPI_OP_SUM),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(bad[i] == GIMPI_EBADPARAM, "bad argument case %zu: %d", i, bad[i]);
    free(in);
    free(out);
    CALL(impi_world_barrier(ctx));
    return dp_close(&ctx) ? 1 : 0;
}

/*  One operation with a proc killed just before it: every survivor returns; the ones that
 *  depend on the victim with GIMPI_ESYSERR. */
static int s_kill_body(const impi_tables_t *t0, int rank, int lfd, void *arg)
{
    job_t *j = arg;
    gimpi_msg_t *ctx = s_open(t0, j, rank, lfd, 20000);
    CHECK(ctx, "open");
    CALL(impi_world_barrier(ctx));
    if (rank == j->victim)
        raise(SIGKILL);
    int v = 7, rc = 0;
    char vc = j->clients[j->victim], me = j->clients[rank];
    switch (j->what) {
    case 0:         /* the victim's client learns it */
        rc = impi_world_barrier(ctx);
        CHECK(me != vc || rc == GIMPI_ESYSERR, "barrier, dead proc in my client: %d", rc);
        break;
    case 1:         /* the root learns it */
        rc = impi_world_reduce(ctx, &v, &v, 1, GIMPI_INT, GIMPI_OP_SUM, 0);
        CHECK(rank != 0 || rc == GIMPI_ESYSERR, "reduce with a dead proc, at the root: %d", rc);
        break;
    case 2:         /* everybody learns it */
        rc = impi_world_allreduce(ctx, &v, &v, 1, GIMPI_INT, GIMPI_OP_SUM);
        CHECK(rc == GIMPI_ESYSERR, "allreduce with a dead proc: %d", rc);
        break;
    }
    gimpi_msg_destroy(&ctx);
    return 0;
}

/*  Runs one job; every task must exit 0, the victim by SIGKILL. */
static void s_job(const char *name, dp_body_t body, job_t *j)
{
    int n = (int)strlen(j->clients);
    dp_opts_t o = { n, 65536, 32, 64, 120000, 0, 0, 0 };
    int codes[64];
    int64_t t0 = tl_now_ms();
    dp_run(&o, body, j, codes);
    int good = 1;
    for (int i = 0; i < n; i++)
        good &= codes[i] == (i == j->victim ? 128 + SIGKILL : 0);
    ok(good, "%s (clients %s, maxlinear %d)", name, j->clients, j->maxlinear);
    if (!good)
        for (int i = 0; i < n; i++)
            diag("  task %d exit code %d", i, codes[i]);
    note("  took %lld ms", (long long)(tl_now_ms() - t0));
}

int main(void)
{
    plan(NO_PLAN);
    setenv("GIMPI_LOCAL_SOCKETS", "1", 0);
    const char *what = "barrier, bcast, reduce, allreduce from every root, bad arguments";
    job_t jobs[] = {
        { "0", 4, -1, 0 },
        { "0000", 4, -1, 0 },
        { "00111", 4, -1, 0 },          /* two clients: linear */
        { "0112334", 4, -1, 0 },        /* five clients: trees */
        { "012345", 4, -1, 0 },         /* six clients of one proc */
        { "0011223", 2, -1, 0 },        /* four clients over MAXLINEAR 2 */
        { "01", 4, -1, 0 },
    };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++)
        s_job(what, s_body, &jobs[i]);
    setenv("GIMPI_COLL_TREE_RECV", "2", 1);     /* local bcasts down the forwarding tree */
    job_t fwd[] = { { "00000", 4, -1, 0 }, { "0111", 4, -1, 0 } };
    s_job("the same with large local bcasts forwarded", s_body, &fwd[0]);
    s_job("the same with large local bcasts forwarded", s_body, &fwd[1]);
    unsetenv("GIMPI_COLL_TREE_RECV");
    job_t kills[] = {
        { "00111", 4, 3, 0 }, { "00111", 4, 3, 1 }, { "00111", 4, 3, 2 },
        { "00111", 4, 2, 2 }, { "0112334", 4, 4, 1 }, { "0112334", 4, 1, 2 },
        { "012345", 4, 5, 2 },
    };
    const char *kname[] = { "barrier", "reduce", "allreduce" };
    for (size_t i = 0; i < sizeof kills / sizeof kills[0]; i++) {
        char name[100];
        snprintf(name, sizeof name, "%s with rank %d killed", kname[kills[i].what],
                 kills[i].victim);
        s_job(name, s_kill_body, &kills[i]);
    }
    return tap_exit_status();
}
