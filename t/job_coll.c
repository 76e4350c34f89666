/*  t/job_coll.c — a task for t/gimpirun_coll.sh: the group-level operations
 *  (gimpi_coll_group_*) of a real job under gimpirun, with groupd's tids on the data plane.
 *  Every task enrols (gimpi_init) and joins the job's group; then: the PVM error cases
 *  (NULL and empty names, an unknown group, bad barrier counts, a non-member), barriers on
 *  the data plane (count -1 and the size) and through groupd's arbitration (count 1), a
 *  bcast (small and 1 MiB) from a member and from a non-member of a second group, reduce,
 *  gather and scatter with the root in the middle; the native wrappers on gimpi_t; and a
 *  member that leaves and says so, left out of the others' next reduce, bcast and barrier.
 *  Prints "rank R ok" and exits 0, or "rank R FAIL line L: ..." and exits 1.
 */
#include "gimpi.h"
#include "gimpi_ops.h"
#include "taskcheck.h"
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int s_rank = -1;

#define CHECK(cond, ...) TASK_CHECK("rank ", s_rank, cond, __VA_ARGS__)
#define CALL(expr) do { int rc_ = (expr); CHECK(rc_ >= 0, "%s: %s", #expr, gimpi_strerror(rc_)); } while (0)

/*  What every step of the task shares: the task and its layers, the job's size, this
 *  task's rank and instance in grp, the world rank of every instance, the group names. */
typedef struct {
    gimpi_t *t;
    gimpi_msg_t *m;
    gimpi_groups_t *g;
    gimpi_coll_t *c;
    int n, me, inst;
    int rk[64];
    char grp[64], sub[64], none[64];
} job_t;

/*  PVM's errors that need no group: NULL, empty and unknown names, bad counts. */
static void s_errors(job_t *j)
{
    gimpi_coll_t *c = j->c;
    gimpi_groups_t *g = j->g;
    int x = 1;
    CHECK(gimpi_coll_group_barrier(c, g, NULL, -1) == GIMPI_ENULLGROUP, "NULL name");
    CHECK(gimpi_coll_group_barrier(c, g, "", -1) == GIMPI_ENULLGROUP, "empty name");
    CHECK(gimpi_coll_group_barrier(c, g, j->none, -1) == GIMPI_ENOGROUP, "unknown group");
    CHECK(gimpi_coll_group_bcast(c, g, j->none, GIMPI_CID_P2P, 1, &x, 4) == GIMPI_ENOGROUP,
          "bcast to an unknown group");
    gimpi_view_t *v = NULL;
    CHECK(gimpi_coll_group_view(c, g, NULL, &v) == GIMPI_ENULLGROUP && !v, "view: NULL name");
    CHECK(gimpi_coll_group_view(c, g, "", &v) == GIMPI_ENULLGROUP && !v, "view: empty name");
    CHECK(gimpi_coll_group_view(c, g, j->none, &v) == GIMPI_ENOGROUP && !v,
          "view: unknown group");
    CHECK(gimpi_coll_group_barrier(c, g, j->grp, 0) == GIMPI_EBADPARAM, "count 0");
    CHECK(gimpi_coll_group_barrier(c, g, j->grp, -5) == GIMPI_EBADPARAM, "count -5");
}

/*  Join; everybody in (groupd's barrier), then the data plane's barriers: views, 30
 *  barriers without groupd once the cache is current, count 1 through groupd. */
static void s_join_barriers(job_t *j)
{
    gimpi_coll_t *c = j->c;
    gimpi_groups_t *g = j->g;
    int n = j->n;
    j->inst = gimpi_group_join(g, j->grp);
    CHECK(j->inst >= 0 && j->inst < n, "join: instance %d", j->inst);
    if (j->me > 0)
        CALL(gimpi_group_join(g, j->sub));
    CALL(gimpi_group_barrier(g, j->grp, n));
    CHECK(n == 1 || gimpi_group_gsize(g, j->sub) == n - 1, "sub size");
    for (int i = 0; i < n; i++)                 /* the world rank of every instance */
        j->rk[i] = gimpi_msg_rank(j->m, gimpi_group_gettid(g, j->grp, i));
    CALL(gimpi_coll_group_barrier(c, g, j->grp, -1));    /* the first: through groupd */
    gimpi_view_t *v = NULL;
    for (int k = 0; k < 2; k++) {               /* a view, then the same from the kept one */
        CHECK(gimpi_coll_group_view(c, g, j->grp, &v) == n && v && gimpi_view_size(v) == n,
              "view %d of %s: %d members", k, j->grp, v ? gimpi_view_size(v) : -1);
        gimpi_view_destroy(&v);
    }
    CHECK(gimpi_coll_group_view(c, g, NULL, &v) == GIMPI_ENULLGROUP && !v,
          "view: NULL name, with a group's view kept");
    CHECK(tl_group_warm(g, j->grp), "the cache of %s becomes current", j->grp);
    uint64_t local0, remote0, local1, remote1;
    gimpi_groups_counters(g, &local0, &remote0);
    for (int i = 0; i < 10; i++) {
        CALL(gimpi_coll_group_barrier(c, g, j->grp, -1));
        CALL(gimpi_coll_group_barrier(c, g, j->grp, n));
        CALL(gimpi_barrier(j->t, j->grp, -1));
    }
    gimpi_groups_counters(g, &local1, &remote1);
    /* through groupd each would cost a request; on the data plane, only a barrier that
       waits long asks groupd something (it notes itself for gimpi-stat, and asks every
       500 ms whether the members live), which a loaded machine makes happen */
    CHECK(remote1 - remote0 < 30 && local1 >= local0 + 30,
          "the next 30 barriers met on the data plane (groupd round trips %llu -> %llu)",
          (unsigned long long)remote0, (unsigned long long)remote1);
    for (int i = 0; i < 3; i++)                 /* count 1: groupd, each passes alone */
        CALL(gimpi_coll_group_barrier(c, g, j->grp, 1));
}

/*  bcast from instance 0 (small and 1 MiB), and from rank 0, not a member of sub. */
static void s_bcasts(job_t *j)
{
    gimpi_coll_t *c = j->c;
    gimpi_groups_t *g = j->g;
    gimpi_msg_t *m = j->m;
    int n = j->n, me = j->me, x = 1;
    size_t big = 1u << 20;
    unsigned char *buf = malloc(big);
    CHECK(buf, "malloc");
    for (int k = 0; k < 2 && n > 1; k++) {
        size_t len = k ? big : 8;
        if (me == 0) {
            memset(buf, 0x30 + k, len);
            CALL(k ? gimpi_bcast(j->t, j->grp, 5, buf, len)
                   : gimpi_coll_group_bcast(c, g, j->grp, GIMPI_CID_P2P, 5, buf, len));
        } else {
            gimpi_status_t st;
            memset(buf, 0, len);
            CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, 0), 5, buf, len, &st));
            CHECK(st.len == len && buf[0] == 0x30 + k && buf[len - 1] == 0x30 + k, "bcast %zu", len);
        }
    }
    free(buf);
    if (me == 0 && n > 1) {
        CALL(gimpi_coll_group_bcast(c, g, j->sub, GIMPI_CID_P2P, 6, &x, 4));
        CHECK(gimpi_coll_group_reduce(c, g, j->sub, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, 0) ==
                  GIMPI_ENOTINGROUP, "reduce by a non-member");
        CHECK(gimpi_coll_group_barrier(c, g, j->sub, -1) == GIMPI_ENOTINGROUP,
              "barrier by a non-member");
    } else if (n > 1) {
        gimpi_status_t st;
        int y = 0;
        CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, 0), 6, &y, 4, &st));
        CHECK(y == 1, "bcast from a non-member");
        CALL(gimpi_coll_group_barrier(c, g, j->sub, -1));
    }
    if (n == 1)
        CHECK(gimpi_coll_group_bcast(c, g, j->grp, GIMPI_CID_P2P, 1, &x, 4) == GIMPI_ENOINST,
              "the only member broadcasting");
}

/*  reduce, gather, scatter with the root in the middle, and the native wrappers. */
static void s_reduce_gather_scatter(job_t *j)
{
    gimpi_coll_t *c = j->c;
    gimpi_groups_t *g = j->g;
    int n = j->n, inst = j->inst, r[64];
    int root = n / 2;                           /* an instance */
    int x = j->me + 1;
    CALL(gimpi_coll_group_reduce(c, g, j->grp, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 2, root));
    CHECK(inst != root || x == n * (n + 1) / 2, "reduce: %d", x);
    x = j->me + 1;
    CALL(gimpi_reduce(j->t, j->grp, GIMPI_OP_MAX, NULL, &x, 1, GIMPI_INT, 2, 0));
    CHECK(inst != 0 || x == n, "gimpi_reduce max: %d", x);
    x = 100 + j->me;
    CALL(gimpi_coll_group_gather(c, g, j->grp, r, &x, 1, GIMPI_INT, 3, root));
    for (int i = 0; inst == root && i < n; i++)
        CHECK(r[i] == 100 + j->rk[i], "gather %d: %d", i, r[i]);
    CALL(gimpi_gather(j->t, j->grp, r, &x, 1, GIMPI_INT, 3, 0));
    for (int i = 0; inst == 0 && i < n; i++)
        CHECK(r[i] == 100 + j->rk[i], "gimpi_gather %d: %d", i, r[i]);
    for (int i = 0; i < n; i++)
        r[i] = 200 + i;
    CALL(gimpi_coll_group_scatter(c, g, j->grp, &x, r, 1, GIMPI_INT, 4, root));
    CHECK(x == 200 + inst, "scatter: %d", x);
    CALL(gimpi_scatter(j->t, j->grp, &x, r, 1, GIMPI_INT, 4, 0));
    CHECK(x == 200 + inst, "gimpi_scatter: %d", x);
}

/*  The others' side of s_leave: after the leaver's message, a reduce, a bcast and a
 *  barrier without it; then instance 0 tells it to come back. */
static void s_without_leaver(job_t *j)
{
    gimpi_msg_t *m = j->m;
    int n = j->n, inst = j->inst, x = 1, y = 0;
    gimpi_status_t st;
    CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, j->rk[n - 1]), 8, &y, 4, &st));
    CALL(gimpi_coll_group_reduce(j->c, j->g, j->grp, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 6, 0));
    CHECK(inst != 0 || x == n - 1, "reduce after a member left: %d of %d", x, n - 1);
    if (inst == 0 && n > 2)
        CALL(gimpi_coll_group_bcast(j->c, j->g, j->grp, GIMPI_CID_P2P, 7, &x, 4));
    else if (n > 2)
        CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, j->rk[0]), 7, &y, 4, &st));
    CHECK(inst == 0 || n < 3 || y == n - 1, "bcast after a member left: %d", y);
    CALL(gimpi_coll_group_barrier(j->c, j->g, j->grp, -1));
    if (inst == 0)
        CALL(gimpi_msg_send(m, gimpi_msg_tid(m, j->rk[n - 1]), 9, &x, 4));
}

/*  The member of the highest instance leaves and tells the others: the collectives they
 *  start after its message leave it out (the message's stamp outdates the view they kept
 *  through the calls before); then it comes back.  Within one IMPI client only: stamps
 *  do not go to other clients (doc/data-plane.md, "Stamps"), JOB_COLL_CLIENTS. */
static void s_leave(job_t *j)
{
    gimpi_msg_t *m = j->m;
    int n = j->n, x = 1, y = 0;
    if (n < 2 || getenv("JOB_COLL_CLIENTS"))
        return;
    for (int i = 0; i < 3; i++) {
        x = 1;
        CALL(gimpi_coll_group_reduce(j->c, j->g, j->grp, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT,
                                     5, 0));
        CHECK(j->inst != 0 || x == n, "reduce before the leave: %d", x);
    }
    /* the leave waits until every member has ended those reduces: one that started its
       last one after groupd had told it of the leave would leave the leaver out */
    CALL(gimpi_coll_group_barrier(j->c, j->g, j->grp, -1));
    if (j->inst != n - 1) {
        s_without_leaver(j);
        return;
    }
    gimpi_status_t st;
    CALL(gimpi_group_leave(j->g, j->grp));
    for (int i = 0; i < n - 1; i++)
        CALL(gimpi_msg_send(m, gimpi_msg_tid(m, j->rk[i]), 8, &x, 4));
    CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, j->rk[0]), 9, &y, 4, &st));
    CHECK(gimpi_group_join(j->g, j->grp) == n - 1, "the leaver comes back as instance %d",
          n - 1);
}

int main(void)
{
    char err[256];
    job_t j = { .t = gimpi_init(err, sizeof err) };
    CHECK(j.t, "gimpi_init: %s", err);
    s_rank = gimpi_rank(j.t);
    j.n = gimpi_size(j.t);
    j.me = s_rank;
    j.m = gimpi_msg(j.t);
    j.g = gimpi_groups(j.t);
    j.c = gimpi_coll(j.t);
    CHECK(j.c && j.g, "gimpi_coll / gimpi_groups");
    snprintf(j.grp, sizeof j.grp, "coll-%d", gimpi_msg_tid(j.m, 0));
    snprintf(j.sub, sizeof j.sub, "collsub-%d", gimpi_msg_tid(j.m, 0));
    snprintf(j.none, sizeof j.none, "collnone-%d", gimpi_msg_tid(j.m, 0));
    s_errors(&j);
    s_join_barriers(&j);
    s_bcasts(&j);
    s_reduce_gather_scatter(&j);
    s_leave(&j);
    CALL(gimpi_group_barrier(j.g, j.grp, j.n));
    CALL(gimpi_coll_group_barrier(j.c, j.g, j.grp, -1));
    printf("rank %d ok\n", j.me);
    fflush(stdout);
    CHECK(gimpi_finalize(&j.t) == 0, "finalize");
    return 0;
}
