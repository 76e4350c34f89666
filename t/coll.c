/*  t/coll.c — group operations over views (libgimpi/coll/) with real tasks over
 *  loopback TCP (t/dp_harness.c), 2 to 16 of them: barrier, bcast (small, large through
 *  the forwarding tree, 0 bytes, 64 MiB, from a non-member), reduce over every datatype and
 *  predefined op against a serial computation, the documented bracketing of a
 *  non-commutative and non-associative user function, user-function errors reaching
 *  everyone, large reduces over 8 and 16 members by reduce-scatter + gather with the same
 *  bracketing, back-to-back same-tag operations at different paces, gather/scatter in
 *  instance order, holes, missing roots, non-members, bad arguments; and members killed in
 *  the middle of a barrier, a bcast and a reduce (the others get an error, nobody hangs).
 *  All of it twice: with barrier and reduce through shared memory (the default: every task
 *  shares this machine) and with GIMPI_SHM=0; plus shared memory against sockets bit for
 *  bit, a corrupt segment header, and members on several nodes (a segment per node).
 */
#include "dp_harness.h"
#include "gimpi_coll.h"
#include "gimpi_ops.h"
#include "gtap.h"
#include "testlib.h"

#include <signal.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TMO 60000

#define CHECK(cond, ...) do { if (!(cond)) return dp_fail(rank, __VA_ARGS__); } while (0)
#define CALL(expr) do { int rc_ = (expr); \
        CHECK(rc_ == 0, "%s: %s", #expr, gimpi_strerror(rc_)); } while (0)

/*  The view of every task of the job, instance i = world rank i. */
static gimpi_view_t *s_world_view(gimpi_msg_t *ctx, const char *name)
{
    int n = gimpi_msg_ntasks(ctx);
    int tids[64];
    for (int i = 0; i < n; i++)
        tids[i] = gimpi_msg_tid(ctx, i);
    return gimpi_view_new(name, 1, tids, n, gimpi_msg_mytid(ctx));
}

/*  Element j of member r's contribution for op, as a double (exact in every type). */
static double s_val(int r, int j, int op, int is_unsigned)
{
    if (op == GIMPI_OP_PRODUCT)
        return (r + j) % 3 == 0 ? 2 : ((r + j) % 5 == 1 && !is_unsigned ? -1 : 1);
    double v = (r * 7 + j * 3) % 11;
    return is_unsigned ? v : v - 5;
}

/*  Fills count elements of datatype with member r's contribution. */
static void s_fill(void *buf, int dt, int count, int r, int op)
{
    for (int j = 0; j < count; j++) {
        double v = s_val(r, j, op, dt >= GIMPI_USHORT);
        double w = s_val(r + 3, j + 1, op, 0);
        long big = op == GIMPI_OP_SUM ? 1000000007L : 1;
        switch (dt) {
        case GIMPI_BYTE: ((signed char *)buf)[j] = (signed char)v; break;
        case GIMPI_SHORT: ((short *)buf)[j] = (short)v; break;
        case GIMPI_INT: ((int *)buf)[j] = (int)v; break;
        case GIMPI_FLOAT: ((float *)buf)[j] = (float)v; break;
        case GIMPI_CPLX: ((float *)buf)[2 * j] = (float)v; ((float *)buf)[2 * j + 1] = (float)w; break;
        case GIMPI_DOUBLE: ((double *)buf)[j] = v; break;
        case GIMPI_DCPLX: ((double *)buf)[2 * j] = v; ((double *)buf)[2 * j + 1] = w; break;
        case GIMPI_LONG: ((long *)buf)[j] = (long)v * big; break;
        case GIMPI_USHORT: ((unsigned short *)buf)[j] = (unsigned short)v; break;
        case GIMPI_UINT: ((unsigned *)buf)[j] = (unsigned)v; break;
        case GIMPI_ULONG: ((unsigned long *)buf)[j] = (unsigned long)v * (unsigned long)big; break;
        }
    }
}

/*  Non-commutative, non-associative: x = 3x + y (doubles, exact here). */
static void s_lin(int *dt, void *x, void *y, int *num, int *info)
{
    (void)dt;
    (void)info;
    for (int i = 0; i < *num; i++)
        ((double *)x)[i] = 3 * ((double *)x)[i] + ((double *)y)[i];
}

/*  The documented bracketing: R(j,2w) = R(j,w) ∘ R(j+w,w) (R(j,w) alone past the end). */
static double s_bracket(const double *v, int n, int j, int w)
{
    if (w == 1)
        return v[j];
    double a = s_bracket(v, n, j, w / 2);
    return j + w / 2 < n ? 3 * a + s_bracket(v, n, j + w / 2, w / 2) : a;
}

/*  A user function that fails when it sees the marker 13 in y. */
static void s_picky(int *dt, void *x, void *y, int *num, int *info)
{
    (void)dt;
    for (int i = 0; i < *num; i++) {
        if (((int *)y)[i] == 13)
            *info = -1;
        ((int *)x)[i] += ((int *)y)[i];
    }
}

/*  bcast from every root, sizes small to tree-sized; 0 or the failure. */
static int s_all_bcast(gimpi_msg_t *ctx, gimpi_coll_t *coll, const gimpi_view_t *v, int rank,
                       int n)
{
    size_t sizes[] = { 0, 8, 20000, 1u << 20 };
    uint8_t *buf = malloc((1u << 20) + 16);
    CHECK(buf, "malloc");
    for (int root = 0; root < n; root++)
        for (int s = 0; s < 4; s++) {
            uint32_t seed = (uint32_t)(root * 10 + s);
            if (rank == root) {
                dp_fill(buf, sizes[s], seed);
                CALL(gimpi_coll_bcast(coll, v, GIMPI_CID_P2P, 77, buf, sizes[s]));
            } else {
                gimpi_status_t st;
                memset(buf, 0xee, sizes[s] + 16);
                CALL(gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, root), 77, buf, sizes[s] + 16, &st));
                CHECK(st.len == sizes[s] && st.source == gimpi_msg_tid(ctx, root) && st.tag == 77,
                      "bcast %zu from %d: len %zu source %d", sizes[s], root, st.len, st.source);
                CHECK(dp_check(buf, sizes[s], seed) < 0, "bcast %zu from %d: contents", sizes[s],
                      root);
            }
        }
    free(buf);
    return 0;
}

/*  reduce over every datatype and predefined op, small and (INT, DOUBLE, DCPLX) large. */
static int s_all_reduce_types(gimpi_coll_t *coll, const gimpi_view_t *v, int rank, int n)
{
    /* every datatype x every predefined op */
    int counts[] = { 5, 40000 };
    size_t maxb = 40000 * 16;
    uint8_t *data = malloc(maxb), *want = malloc(maxb), *tmp = malloc(maxb);
    CHECK(data && want && tmp, "malloc");
    for (int dt = GIMPI_BYTE; dt <= GIMPI_ULONG; dt++)
        for (int op = GIMPI_OP_MAX; op <= GIMPI_OP_PRODUCT; op++)
            for (int ci = 0; ci < 2; ci++) {
                if (ci == 1 && dt != GIMPI_INT && dt != GIMPI_DOUBLE && dt != GIMPI_DCPLX)
                    continue;
                int count = counts[ci], root = (dt + op) % n;
                size_t bytes = (size_t)count * gimpi_datatype_size(dt);
                s_fill(data, dt, count, rank, op);
                CALL(gimpi_coll_reduce(coll, v, op, NULL, data, count, dt, 5, root));
                if (rank != root)
                    continue;
                s_fill(want, dt, count, 0, op);
                for (int r = 1; r < n; r++) {
                    s_fill(tmp, dt, count, r, op);
                    gimpi_op_apply(op, dt, want, tmp, count);
                }
                CHECK(memcmp(want, data, bytes) == 0, "reduce %s op %d count %d differs",
                      gimpi_datatype_name(dt), op, count);
            }
    free(data);
    free(want);
    free(tmp);
    return 0;
}

/*  reduce's bracketing (a non-commutative function, rounding-sensitive sums), a user
 *  function's error reaching every caller, back-to-back reduces at different paces. */
static int s_all_reduce_order(gimpi_coll_t *coll, const gimpi_view_t *v, int rank, int n)
{
    /* the bracketing of a non-commutative, non-associative function, root in the middle */
    double vals[64], x[3];
    for (int r = 0; r < n; r++)
        vals[r] = r + 1;
    for (int k = 0; k < 3; k++)
        x[k] = vals[rank] + k;
    CALL(gimpi_coll_reduce(coll, v, 0, s_lin, x, 3, GIMPI_DOUBLE, 6, n / 2));
    if (rank == n / 2) {
        int w = 1;
        while (w < n)
            w <<= 1;
        double e = s_bracket(vals, n, 0, w);
        CHECK(x[0] == e, "non-commutative reduce: %.0f, want %.0f", x[0], e);
    }

    /* predefined sums whose rounding shows the bracketing (large: chunks, or reduce-scatter +
     * gather at 8 and 16 members), root in the middle */
    {
        enum { C = 20000 };
        static const double v4[4] = { 1e16, 1.0, -1e16, 1.0 };
        double *d = malloc(C * sizeof *d), e[64];
        CHECK(d, "malloc");
        for (int k = 0; k < C; k++)
            d[k] = v4[rank % 4] * (k % 2 ? 1 : -1);
        CALL(gimpi_coll_reduce(coll, v, GIMPI_OP_SUM, NULL, d, C, GIMPI_DOUBLE, 8, n / 2));
        if (rank == n / 2) {
            for (int r = 0; r < n; r++)
                e[r] = v4[r % 4];
            int w = 1;
            while (w < n)
                w <<= 1;
            for (int half = 1; half < w; half <<= 1)    /* R(j, 2h) = R(j, h) + R(j+h, h) */
                for (int j = 0; j + half < n; j += 2 * half)
                    e[j] = e[j] + e[j + half];
            for (int k = 0; k < C; k++)
                CHECK(d[k] == e[0] * (k % 2 ? 1 : -1), "rounding-sensitive sum [%d]: %g, want %g",
                      k, d[k], e[0]);
        }
        free(d);
    }

    /* a user function's error reaches every caller; the next reduce works */
    int iv[4] = { rank == n - 1 ? 13 : 1, 1, 1, 1 };
    int rc = gimpi_coll_reduce(coll, v, 0, s_picky, iv, 4, GIMPI_INT, 7, 0);
    CHECK(rc == GIMPI_EBADPARAM, "user function error: %d", rc);
    int one = 1;
    CALL(gimpi_coll_reduce(coll, v, 0, s_picky, &one, 1, GIMPI_INT, 7, 0));
    CHECK(rank != 0 || one == n, "reduce after the error: %d", one);

    /* back to back, same tag, members at different paces (odd ranks dawdle) */
    for (int i = 0; i < 60; i++) {
        if (rank % 2)
            for (volatile int k = 0; k < 20000 * (rank + i % 3); k++)
                ;
        int c = rank + i;
        CALL(gimpi_coll_reduce(coll, v, GIMPI_OP_SUM, NULL, &c, 1, GIMPI_INT, 9, i % n));
        CHECK(rank != i % n || c == n * (n - 1) / 2 + n * i, "back-to-back %d: %d", i, c);
    }
    return 0;
}

/*  Everything that works, on the world view. */
static int s_all_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    CHECK(ctx, "open");
    gimpi_coll_t *coll = gimpi_coll_new(ctx);
    gimpi_view_t *v = s_world_view(ctx, "world");
    CHECK(coll && v, "new");
    int n = gimpi_msg_ntasks(ctx);
    CHECK(gimpi_view_size(v) == n && v->me == rank, "view");
    for (int i = 0; i < 20; i++)
        CALL(gimpi_coll_barrier(coll, v));

    if (s_all_bcast(ctx, coll, v, rank, n) || s_all_reduce_types(coll, v, rank, n)
        || s_all_reduce_order(coll, v, rank, n))
        return 1;                       /* dp_fail said what failed */

    /* gather / scatter in instance order, root in the middle; scatter leaves data alone */
    int root = n / 2;
    int mine[2] = { 100 * (rank + 1), 100 * (rank + 1) + 1 }, all[128];
    CALL(gimpi_coll_gather(coll, v, rank == root ? all : NULL, mine, 2, GIMPI_INT, 3, root));
    for (int i = 0; rank == root && i < n; i++)
        CHECK(all[2 * i] == 100 * (i + 1) && all[2 * i + 1] == 100 * (i + 1) + 1, "gather %d", i);
    int src[128], got[2] = { 0, 0 };
    for (int i = 0; i < 2 * n; i++)
        src[i] = 3000 + i;
    CALL(gimpi_coll_scatter(coll, v, got, rank == root ? src : NULL, 2, GIMPI_INT, 3, root));
    CHECK(got[0] == 3000 + 2 * rank && got[1] == 3001 + 2 * rank, "scatter got %d %d", got[0],
          got[1]);
    for (int i = 0; i < 2 * n; i++)
        CHECK(src[i] == 3000 + i, "scatter changed the caller's data");
    CALL(gimpi_coll_barrier(coll, v));

    gimpi_view_destroy(&v);
    gimpi_coll_destroy(&coll);
    return dp_close(&ctx) ? 1 : 0;
}

/*  Holes, missing roots, non-members, the sole broadcaster, bad arguments, 0-byte and
 *  64 MiB bcasts, a bcast from a non-member.  Needs 4 tasks. */
static int s_rules_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    CHECK(ctx, "open");
    gimpi_coll_t *coll = gimpi_coll_new(ctx);
    gimpi_view_t *w = s_world_view(ctx, "w");
    int t0 = gimpi_msg_tid(ctx, 0), t1 = gimpi_msg_tid(ctx, 1), t2 = gimpi_msg_tid(ctx, 2),
        t3 = gimpi_msg_tid(ctx, 3);
    int holes[] = { t0, 0, t1, t2, t3 };        /* instance 1 is a hole */
    gimpi_view_t *h = gimpi_view_new("h", 1, holes, 5, gimpi_msg_mytid(ctx));
    int others[] = { t1, t2, t3 };              /* rank 0 is not a member */
    gimpi_view_t *o = gimpi_view_new("o", 1, others, 3, gimpi_msg_mytid(ctx));
    int solo[] = { t0 };
    gimpi_view_t *s = gimpi_view_new("s", 1, solo, 1, gimpi_msg_mytid(ctx));
    CHECK(coll && w && h && o && s, "new");
    int d[4] = { 1, 2, 3, 4 }, r[64];
    /* holes: gather and scatter refuse everywhere, at once */
    CHECK(gimpi_coll_gather(coll, h, r, d, 1, GIMPI_INT, 1, 0) == GIMPI_ENOINST, "gather hole");
    CHECK(gimpi_coll_scatter(coll, h, r, d, 1, GIMPI_INT, 1, 0) == GIMPI_ENOINST, "scatter hole");
    /* holes are fine for barrier and reduce (instance order of the members) */
    CALL(gimpi_coll_barrier(coll, h));
    int x = rank + 1;
    CALL(gimpi_coll_reduce(coll, h, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, 4));
    CHECK(rank != 3 || x == 10, "reduce over a view with a hole: %d", x);
    /* missing roots */
    CHECK(gimpi_coll_reduce(coll, h, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, 1) == GIMPI_ENOINST,
          "reduce to a hole");
    CHECK(gimpi_coll_reduce(coll, w, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, 9) == GIMPI_ENOINST,
          "reduce to instance 9");
    CHECK(gimpi_coll_gather(coll, w, r, d, 1, GIMPI_INT, 1, -1) == GIMPI_ENOINST, "gather root -1");
    /* bad arguments */
    CHECK(gimpi_coll_reduce(coll, w, GIMPI_OP_SUM, NULL, &x, 0, GIMPI_INT, 1, 0) == GIMPI_EBADPARAM,
          "count 0");
    CHECK(gimpi_coll_reduce(coll, w, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_STR, 1, 0) == GIMPI_EBADPARAM,
          "PVM_STR");
    CHECK(gimpi_coll_reduce(coll, w, 99, NULL, &x, 1, GIMPI_INT, 1, 0) == GIMPI_EBADPARAM, "op 99");
    CHECK(gimpi_coll_gather(coll, w, r, d, 1, GIMPI_INT, -1, 0) == GIMPI_EBADPARAM, "tag -1");
    CHECK(gimpi_coll_bcast(coll, w, GIMPI_CID_P2P, -1, d, 4) == GIMPI_EBADPARAM, "bcast tag -1");
    CHECK(gimpi_coll_barrier(coll, NULL) == GIMPI_EBADPARAM, "NULL view");
    if (rank == 0) {
        /* not a member */
        CHECK(gimpi_coll_barrier(coll, o) == GIMPI_ENOTINGROUP, "barrier non-member");
        CHECK(gimpi_coll_reduce(coll, o, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, 0) ==
              GIMPI_ENOTINGROUP, "reduce non-member");
        CHECK(gimpi_coll_gather(coll, o, r, d, 1, GIMPI_INT, 1, 0) == GIMPI_ENOTINGROUP,
              "gather non-member");
        CHECK(gimpi_coll_scatter(coll, o, r, d, 1, GIMPI_INT, 1, 0) == GIMPI_ENOTINGROUP,
              "scatter non-member");
        /* the only member broadcasting */
        CHECK(gimpi_coll_bcast(coll, s, GIMPI_CID_P2P, 1, d, 4) == GIMPI_ENOINST, "sole bcast");
        /* a non-member broadcasts, small and large */
        CALL(gimpi_coll_bcast(coll, o, GIMPI_CID_P2P, 11, d, sizeof d));
    } else {
        gimpi_status_t st;
        int b[4];
        CALL(gimpi_msg_recv(ctx, t0, 11, b, sizeof b, &st));
        CHECK(st.source == t0 && b[3] == 4, "bcast from a non-member");
    }
    /* 0 bytes and 64 MiB, in another context, from rank 2 */
    size_t big = 64u << 20;
    uint8_t *buf = malloc(big);
    CHECK(buf, "malloc");
    if (rank == 2) {
        dp_fill(buf, big, 64);
        CALL(gimpi_coll_bcast(coll, w, GIMPI_CID_INTERNAL, 12, buf, 0));
        CALL(gimpi_coll_bcast(coll, w, GIMPI_CID_INTERNAL, 12, buf, big));
    } else {
        gimpi_status_t st;
        gimpi_msg_req_t *q;
        CALL(gimpi_msg_irecv_cid(ctx, GIMPI_CID_INTERNAL, t2, 12, buf, big, &q));
        CALL(gimpi_msg_wait(ctx, &q, &st));
        CHECK(st.len == 0 && st.source == t2, "0-byte bcast: len %zu", st.len);
        memset(buf, 0, big);
        CALL(gimpi_msg_irecv_cid(ctx, GIMPI_CID_INTERNAL, t2, 12, buf, big, &q));
        CALL(gimpi_msg_wait(ctx, &q, &st));
        CHECK(st.len == big && dp_check(buf, big, 64) < 0, "64 MiB bcast");
        int flag = 1;
        CALL(gimpi_msg_iprobe(ctx, GIMPI_ANY, GIMPI_ANY, &flag, &st));
        CHECK(!flag, "a bcast landed in the plain context");
    }
    free(buf);
    CALL(gimpi_coll_barrier(coll, w));
    gimpi_view_destroy(&w);
    gimpi_view_destroy(&h);
    gimpi_view_destroy(&o);
    gimpi_view_destroy(&s);
    gimpi_coll_destroy(&coll);
    return dp_close(&ctx) ? 1 : 0;
}

typedef struct {
    int what;                   /* 0 barrier, 1 bcast, 2 reduce (sum), 3 reduce (user fn) */
    int victim;                 /* world rank killed */
    size_t len;                 /* bcast / reduce size in bytes */
} kill_t;

/*  Adds ints (a user function, so every caller waits for the outcome). */
static void s_add(int *dt, void *x, void *y, int *num, int *info)
{
    (void)dt;
    (void)info;
    for (int i = 0; i < *num; i++)
        ((int *)x)[i] += ((int *)y)[i];
}

/*  One operation with a member killed just before it: the others must return (an error
 *  where they depended on the victim), never hang. */
static int s_kill_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    kill_t *k = arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, 20000);
    CHECK(ctx, "open");
    gimpi_coll_t *coll = gimpi_coll_new(ctx);
    gimpi_view_t *v = s_world_view(ctx, "k");
    CHECK(coll && v, "new");
    int n = gimpi_msg_ntasks(ctx);
    CALL(gimpi_coll_barrier(coll, v));
    if (rank == k->victim)
        raise(SIGKILL);
    int rc = 0;
    int count = (int)(k->len / sizeof(int));
    int *data = calloc((size_t)count + 1, sizeof(int));
    CHECK(data, "malloc");
    switch (k->what) {
    case 0:
        rc = gimpi_coll_barrier(coll, v);
        CHECK(rc == GIMPI_ESYSERR, "barrier with a dead member: %d", rc);
        break;
    case 1:
        if (rank == 0)
            rc = gimpi_coll_bcast(coll, v, GIMPI_CID_P2P, 3, data, k->len);
        else {
            gimpi_status_t st;
            rc = gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, 0), 3, data, k->len, &st);
            CHECK(rc == 0, "a survivor's bcast receive: %d", rc);
        }
        break;
    case 2:
    case 3:
        for (int i = 0; i < count; i++)
            data[i] = 1;
        rc = gimpi_coll_reduce(coll, v, GIMPI_OP_SUM, k->what == 3 ? s_add : NULL, data, count,
                               GIMPI_INT, 3, n - 1);
        if (k->what == 3 || rank == n - 1)
            CHECK(rc == GIMPI_ESYSERR, "reduce with a dead member: %d", rc);
        break;
    }
    free(data);
    gimpi_view_destroy(&v);
    gimpi_coll_destroy(&coll);
    gimpi_msg_destroy(&ctx);
    return 0;
}

/*  Runs one job; want: every task exits 0 except the victim (killed). */
static void s_job(const char *name, int n, dp_body_t body, void *arg, int victim)
{
    dp_opts_t o = { n, 65536, 32, 64, 120000, 0, 0, 0 };
    int codes[64];
    int64_t t0 = tl_now_ms();
    dp_run(&o, body, arg, codes);
    int good = 1;
    for (int i = 0; i < n; i++)
        good &= codes[i] == (i == victim ? 128 + SIGKILL : 0);
    ok(good, "%s (n=%d)", name, n);
    if (!good)
        for (int i = 0; i < n; i++)
            diag("  task %d exit code %d", i, codes[i]);
    note("  took %lld ms", (long long)(tl_now_ms() - t0));
}

/*  A pseudo-random double of varying magnitude and sign (rounding differs by bracketing). */
static double s_rnd(uint32_t *x)
{
    *x = *x * 1103515245u + 12345u;
    double m = (double)(*x >> 8) / 16777216.0;
    *x = *x * 1103515245u + 12345u;
    int e = (int)(*x >> 16) % 40 - 20;
    return (*x & 1 ? -m : m) * (e < 0 ? 1.0 / (double)(1ull << -e) : (double)(1ull << e));
}

/*  Whether this task maps a collective segment now (/proc/self/maps). */
static int s_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        found |= strstr(line, "gimpi-coll") != NULL;
    if (f)
        fclose(f);
    return found;
}

/*  Shared memory and sockets give the same bits: every reduce computed by both (one
 *  collective state with GIMPI_SHM_COLL=0, one without) on the world view and on a view
 *  with a hole, doubles of every magnitude, sums, products, max and a non-associative user
 *  function, counts of 1 to 3 chunks, roots first and last. */
static int s_same_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    CHECK(ctx, "open");
    gimpi_coll_t *shm = gimpi_coll_new(ctx);
    setenv("GIMPI_SHM_COLL", "0", 1);
    gimpi_coll_t *sock = gimpi_coll_new(ctx);
    unsetenv("GIMPI_SHM_COLL");
    int n = gimpi_msg_ntasks(ctx), tids[66] = { 0 };
    for (int i = 0; i < n; i++)
        tids[i < 1 ? i : i + 1] = gimpi_msg_tid(ctx, i);       /* instance 1 is a hole */
    gimpi_view_t *views[2] = { s_world_view(ctx, "same"),
                               gimpi_view_new("same-h", 1, tids, n + 1, gimpi_msg_mytid(ctx)) };
    CHECK(shm && sock && views[0] && views[1], "new");
    int counts[] = { 1, 1000, 40000, 300000 };
    int ops[] = { GIMPI_OP_SUM, GIMPI_OP_PRODUCT, GIMPI_OP_MAX, -1 };
    double *a = malloc(300000 * sizeof *a), *b = malloc(300000 * sizeof *b);
    CHECK(a && b, "malloc");
    for (int vi = 0; vi < 2; vi++)
        for (int ci = 0; ci < 4; ci++)
            for (int oi = 0; oi < 4; oi++)
                for (int r = 0; r < 2; r++) {
                    gimpi_view_t *v = views[vi];
                    int root = r ? v->ninst - 1 : 0, cnt = counts[ci];
                    uint32_t x = (uint32_t)(rank * 7919 + ci * 31 + oi);
                    for (int j = 0; j < cnt; j++)
                        a[j] = b[j] = ops[oi] == GIMPI_OP_PRODUCT ? 1 + s_rnd(&x) / 1e6
                                                                   : s_rnd(&x);
                    int op = ops[oi] < 0 ? 0 : ops[oi];
                    gimpi_reduce_fn fn = ops[oi] < 0 ? s_lin : NULL;
                    CALL(gimpi_coll_reduce(shm, v, op, fn, a, cnt, GIMPI_DOUBLE, 1, root));
                    CALL(gimpi_coll_reduce(sock, v, op, fn, b, cnt, GIMPI_DOUBLE, 1, root));
                    CHECK(v->me != root || memcmp(a, b, (size_t)cnt * sizeof *a) == 0,
                          "view %d count %d op %d root %d: shared memory and sockets differ",
                          vi, cnt, ops[oi], root);
                }
    CALL(gimpi_coll_barrier(shm, views[0]));
    CALL(gimpi_coll_barrier(sock, views[1]));
    CHECK(s_mapped() == (getenv("GIMPI_SHM") == NULL), "the segment is mapped: %d", s_mapped());
    free(a);
    free(b);
    gimpi_view_destroy(&views[0]);
    gimpi_view_destroy(&views[1]);
    gimpi_coll_destroy(&shm);
    gimpi_coll_destroy(&sock);
    CHECK(!s_mapped(), "the segment outlives its collective state");
    return dp_close(&ctx) ? 1 : 0;
}

/*  Members on several nodes (GIMPI_HOST names them: ranks 0-2 on "a", 3-4 on "b", the rest
 *  alone on nodes of their own): a segment per node with two members or more, none for a
 *  member alone; 300 barriers of which none lets anyone out early (each member counts its
 *  rounds in a shared page before the barrier and checks everybody's after), reduces over
 *  the nodes, and with arg set, rank 4 killed in the middle: every survivor fails, none
 *  hangs, leaders and members alike. */
static int s_nodes_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    volatile int *rounds = arg;
    static const char *const names[] = { "a", "a", "a", "b", "b", "c", "d", "e" };
    setenv("GIMPI_HOST", names[rank], 1);
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    CHECK(ctx, "open");
    gimpi_coll_t *coll = gimpi_coll_new(ctx);
    gimpi_view_t *v = s_world_view(ctx, "nodes");
    CHECK(coll && v, "new");
    int n = gimpi_msg_ntasks(ctx);
    CALL(gimpi_coll_barrier(coll, v));
    CHECK(s_mapped() == (rank < 5), "rank %d maps a segment: %d", rank, s_mapped());
    int killing = rounds[63] != 0;
    for (int r = 1; r <= 300; r++) {
        if (killing && rank == 4 && r == 150)
            raise(SIGKILL);
        __atomic_store_n(&rounds[rank], r, __ATOMIC_SEQ_CST);
        int rc = gimpi_coll_barrier(coll, v);
        if (killing && r >= 150) {
            CHECK(rc == GIMPI_ESYSERR, "round %d with rank 4 dead: %d", r, rc);
            break;
        }
        CHECK(rc == 0, "barrier %d: %s", r, gimpi_strerror(rc));
        for (int j = 0; j < n; j++)
            CHECK(__atomic_load_n(&rounds[j], __ATOMIC_SEQ_CST) >= r,
                  "round %d: member %d left the barrier before member %d came (%d)", r, rank,
                  j, rounds[j]);
        if (r % 50 == 0) {
            int x = rank + 1;
            CALL(gimpi_coll_reduce(coll, v, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, r % n));
            CHECK(rank != r % n || x == n * (n + 1) / 2, "reduce to %d: %d", r % n, x);
        }
    }
    gimpi_view_destroy(&v);
    gimpi_coll_destroy(&coll);
    return dp_close(&ctx) ? 1 : 0;
}

/*  A member scribbles over the segment's header (found in /proc/self/maps): every member's
 *  next barrier and reduce fail, nobody hangs, and the group works again once its
 *  membership changes (a new version: a new segment). */
static int s_corrupt_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, 20000);
    CHECK(ctx, "open");
    gimpi_coll_t *coll = gimpi_coll_new(ctx);
    gimpi_view_t *v = s_world_view(ctx, "c");
    CHECK(coll && v, "new");
    CALL(gimpi_coll_barrier(coll, v));
    CALL(gimpi_coll_barrier(coll, v));
    if (rank == 1) {
        FILE *f = fopen("/proc/self/maps", "r");
        char line[512];
        unsigned long lo = 0;
        while (f && fgets(line, sizeof line, f))
            if (strstr(line, "gimpi-coll"))
                lo = strtoul(line, NULL, 16);
        if (f)
            fclose(f);
        CHECK(lo, "no segment mapped");
        ((volatile uint8_t *)lo)[9] ^= 0x5a;      /* the member count */
    }
    int rc = gimpi_coll_barrier(coll, v);
    CHECK(rc == GIMPI_EBADMSG || rc == GIMPI_ESYSERR, "barrier over a corrupt header: %d", rc);
    int x = 1;
    rc = gimpi_coll_reduce(coll, v, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, 0);
    CHECK(rc == GIMPI_EBADMSG || rc == GIMPI_ESYSERR, "reduce over a corrupt header: %d", rc);
    v->version = 2;
    x = 1;
    CALL(gimpi_coll_reduce(coll, v, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, 0));
    CHECK(rank != 0 || x == gimpi_msg_ntasks(ctx), "reduce on the next version: %d", x);
    gimpi_view_destroy(&v);
    gimpi_coll_destroy(&coll);
    gimpi_msg_destroy(&ctx);
    return 0;
}

/*  Every job of the test, in the current GIMPI_SHM setting. */
static void s_all_jobs(void)
{
    setenv("GIMPI_COLL_TREE_RECV", "2", 1);     /* large bcasts down the forwarding tree */
    int ns[] = { 2, 3, 5, 8, 16 };
    for (int i = 0; i < 5; i++)
        s_job("barrier, bcast, reduce (all types and ops), order, errors, gather, scatter",
              ns[i], s_all_body, NULL, -1);
    setenv("GIMPI_COLL_STAR_MAX", "2", 1);      /* the dissemination barrier */
    setenv("GIMPI_COLL_TREE_RECV", "1000", 1);  /* every bcast direct */
    s_job("the same with the dissemination barrier", 7, s_all_body, NULL, -1);
    kill_t kd = { 0, 4, 0 };
    s_job("dissemination barrier: a member killed", 6, s_kill_body, &kd, 4);
    unsetenv("GIMPI_COLL_STAR_MAX");
    s_job("the same with direct bcasts", 5, s_all_body, NULL, -1);
    setenv("GIMPI_COLL_TREE_RECV", "2", 1);
    s_job("holes, roots, non-members, sole bcast, bad arguments, 0 B and 64 MiB bcast", 4,
          s_rules_body, NULL, -1);
    kill_t kb0 = { 0, 0, 0 }, kb2 = { 0, 2, 0 }, kc = { 1, 3, 1u << 20 }, kcs = { 1, 3, 64 },
           kr = { 2, 1, 4 }, kru = { 3, 2, 4 }, krl = { 3, 1, 1u << 20 };
    s_job("barrier: the centre killed", 4, s_kill_body, &kb0, 0);
    s_job("barrier of two (one exchange): the partner killed", 2, s_kill_body, &kb0, 0);
    s_job("barrier: a member killed", 5, s_kill_body, &kb2, 2);
    s_job("bcast 1 MiB: a forwarding member killed, the others get it", 6, s_kill_body, &kc, 3);
    s_job("bcast small: a receiver killed", 4, s_kill_body, &kcs, 3);
    s_job("reduce sum: a member killed, the root gets an error", 4, s_kill_body, &kr, 1);
    s_job("reduce user fn: a member killed, everyone gets an error", 5, s_kill_body, &kru, 2);
    s_job("reduce 1 MiB user fn: a member killed, everyone gets an error", 4, s_kill_body, &krl,
          1);
    kill_t krs = { 2, 2, 1u << 20 };
    s_job("reduce 1 MiB sum (reduce-scatter + gather): a member killed, the root gets an error",
          4, s_kill_body, &krs, 2);
}

int main(void)
{
    plan(NO_PLAN);
    note("barrier and reduce through shared memory (the default)");
    s_all_jobs();
    int same[] = { 2, 3, 4, 8 };
    for (int i = 0; i < 4; i++)
        s_job("shared memory and sockets: the same bits", same[i], s_same_body, NULL, -1);
    s_job("a corrupt segment header: errors, no hang, a new version works", 4, s_corrupt_body,
          NULL, -1);
    int *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        BAIL_OUT("mmap");
    memset(page, 0, 4096);
    s_job("members on four nodes: a segment per node, leaders on the data plane", 6,
          s_nodes_body, page, -1);
    memset(page, 0, 4096);
    page[63] = 1;
    s_job("members on four nodes, one killed: every survivor fails", 6, s_nodes_body, page, 4);
    munmap(page, 4096);
    note("GIMPI_SHM=0: everything over the data plane");
    setenv("GIMPI_SHM", "0", 1);
    s_all_jobs();
    s_job("GIMPI_SHM=0: no segment, same results", 3, s_same_body, NULL, -1);
    return tap_exit_status();
}
