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

int main(void)
{
    char err[256];
    gimpi_t *t = gimpi_init(err, sizeof err);
    CHECK(t, "gimpi_init: %s", err);
    s_rank = gimpi_rank(t);
    int n = gimpi_size(t), me = s_rank;
    gimpi_msg_t *m = gimpi_msg(t);
    gimpi_groups_t *g = gimpi_groups(t);
    gimpi_coll_t *c = gimpi_coll(t);
    CHECK(c && g, "gimpi_coll / gimpi_groups");
    char grp[64], sub[64], none[64];
    snprintf(grp, sizeof grp, "coll-%d", gimpi_msg_tid(m, 0));
    snprintf(sub, sizeof sub, "collsub-%d", gimpi_msg_tid(m, 0));
    snprintf(none, sizeof none, "collnone-%d", gimpi_msg_tid(m, 0));
    int x = 1, r[64];

    /* errors that need no group */
    CHECK(gimpi_coll_group_barrier(c, g, NULL, -1) == GIMPI_ENULLGROUP, "NULL name");
    CHECK(gimpi_coll_group_barrier(c, g, "", -1) == GIMPI_ENULLGROUP, "empty name");
    CHECK(gimpi_coll_group_barrier(c, g, none, -1) == GIMPI_ENOGROUP, "unknown group");
    CHECK(gimpi_coll_group_bcast(c, g, none, GIMPI_CID_P2P, 1, &x, 4) == GIMPI_ENOGROUP,
          "bcast to an unknown group");
    gimpi_view_t *v = NULL;
    CHECK(gimpi_coll_group_view(c, g, NULL, &v) == GIMPI_ENULLGROUP && !v, "view: NULL name");
    CHECK(gimpi_coll_group_view(c, g, "", &v) == GIMPI_ENULLGROUP && !v, "view: empty name");
    CHECK(gimpi_coll_group_view(c, g, none, &v) == GIMPI_ENOGROUP && !v, "view: unknown group");
    CHECK(gimpi_coll_group_barrier(c, g, grp, 0) == GIMPI_EBADPARAM, "count 0");
    CHECK(gimpi_coll_group_barrier(c, g, grp, -5) == GIMPI_EBADPARAM, "count -5");

    /* join; everybody in (groupd's barrier), then the data plane's */
    int inst = gimpi_group_join(g, grp), rk[64];
    CHECK(inst >= 0 && inst < n, "join: instance %d", inst);
    if (me > 0)
        CALL(gimpi_group_join(g, sub));
    CALL(gimpi_group_barrier(g, grp, n));
    CHECK(n == 1 || gimpi_group_gsize(g, sub) == n - 1, "sub size");
    for (int i = 0; i < n; i++)                 /* the world rank of every instance */
        rk[i] = gimpi_msg_rank(m, gimpi_group_gettid(g, grp, i));
    CALL(gimpi_coll_group_barrier(c, g, grp, -1));    /* the first: through groupd */
    for (int k = 0; k < 2; k++) {               /* a view, then the same from the kept one */
        CHECK(gimpi_coll_group_view(c, g, grp, &v) == n && v && gimpi_view_size(v) == n,
              "view %d of %s: %d members", k, grp, v ? gimpi_view_size(v) : -1);
        gimpi_view_destroy(&v);
    }
    CHECK(gimpi_coll_group_view(c, g, NULL, &v) == GIMPI_ENULLGROUP && !v,
          "view: NULL name, with a group's view kept");
    CHECK(tl_group_warm(g, grp), "the cache of %s becomes current", grp);
    uint64_t local0, remote0, local1, remote1;
    gimpi_groups_counters(g, &local0, &remote0);
    for (int i = 0; i < 10; i++) {
        CALL(gimpi_coll_group_barrier(c, g, grp, -1));
        CALL(gimpi_coll_group_barrier(c, g, grp, n));
        CALL(gimpi_barrier(t, grp, -1));
    }
    gimpi_groups_counters(g, &local1, &remote1);
    /* through groupd each would cost a request; on the data plane, only a barrier that
       waits long asks groupd something (it notes itself for gimpi-stat, and asks every
       500 ms whether the members live), which a loaded machine makes happen */
    CHECK(remote1 - remote0 < 30 && local1 >= local0 + 30,
          "the next 30 barriers met on the data plane (groupd round trips %llu -> %llu)",
          (unsigned long long)remote0, (unsigned long long)remote1);
    for (int i = 0; i < 3; i++)                 /* count 1: groupd, each passes alone */
        CALL(gimpi_coll_group_barrier(c, g, grp, 1));

    /* bcast from instance 0 (small and 1 MiB), and from rank 0, not a member of sub */
    size_t big = 1u << 20;
    unsigned char *buf = malloc(big);
    CHECK(buf, "malloc");
    for (int k = 0; k < 2 && n > 1; k++) {
        size_t len = k ? big : 8;
        if (me == 0) {
            memset(buf, 0x30 + k, len);
            CALL(k ? gimpi_bcast(t, grp, 5, buf, len)
                   : gimpi_coll_group_bcast(c, g, grp, GIMPI_CID_P2P, 5, buf, len));
        } else {
            gimpi_status_t st;
            memset(buf, 0, len);
            CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, 0), 5, buf, len, &st));
            CHECK(st.len == len && buf[0] == 0x30 + k && buf[len - 1] == 0x30 + k, "bcast %zu", len);
        }
    }
    if (me == 0 && n > 1) {
        CALL(gimpi_coll_group_bcast(c, g, sub, GIMPI_CID_P2P, 6, &x, 4));
        CHECK(gimpi_coll_group_reduce(c, g, sub, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 1, 0) ==
                  GIMPI_ENOTINGROUP, "reduce by a non-member");
        CHECK(gimpi_coll_group_barrier(c, g, sub, -1) == GIMPI_ENOTINGROUP,
              "barrier by a non-member");
    } else if (n > 1) {
        gimpi_status_t st;
        int y = 0;
        CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, 0), 6, &y, 4, &st));
        CHECK(y == 1, "bcast from a non-member");
        CALL(gimpi_coll_group_barrier(c, g, sub, -1));
    }
    if (n == 1)
        CHECK(gimpi_coll_group_bcast(c, g, grp, GIMPI_CID_P2P, 1, &x, 4) == GIMPI_ENOINST,
              "the only member broadcasting");

    /* reduce, gather, scatter, root in the middle */
    int root = n / 2;                           /* an instance */
    x = me + 1;
    CALL(gimpi_coll_group_reduce(c, g, grp, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 2, root));
    CHECK(inst != root || x == n * (n + 1) / 2, "reduce: %d", x);
    x = me + 1;
    CALL(gimpi_reduce(t, grp, GIMPI_OP_MAX, NULL, &x, 1, GIMPI_INT, 2, 0));
    CHECK(inst != 0 || x == n, "gimpi_reduce max: %d", x);
    x = 100 + me;
    CALL(gimpi_coll_group_gather(c, g, grp, r, &x, 1, GIMPI_INT, 3, root));
    for (int i = 0; inst == root && i < n; i++)
        CHECK(r[i] == 100 + rk[i], "gather %d: %d", i, r[i]);
    CALL(gimpi_gather(t, grp, r, &x, 1, GIMPI_INT, 3, 0));
    for (int i = 0; inst == 0 && i < n; i++)
        CHECK(r[i] == 100 + rk[i], "gimpi_gather %d: %d", i, r[i]);
    for (int i = 0; i < n; i++)
        r[i] = 200 + i;
    CALL(gimpi_coll_group_scatter(c, g, grp, &x, r, 1, GIMPI_INT, 4, root));
    CHECK(x == 200 + inst, "scatter: %d", x);
    CALL(gimpi_scatter(t, grp, &x, r, 1, GIMPI_INT, 4, 0));
    CHECK(x == 200 + inst, "gimpi_scatter: %d", x);

    /* the member of the highest instance leaves and tells the others: the collectives they
       start after its message leave it out (the message's stamp outdates the view they
       kept through the calls before); then it comes back.  Within one IMPI client only:
       stamps do not go to other clients (doc/data-plane.md, "Stamps"), JOB_COLL_CLIENTS */
    int leave = n > 1 && !getenv("JOB_COLL_CLIENTS");
    for (int i = 0; i < 3 && leave; i++) {
        x = 1;
        CALL(gimpi_coll_group_reduce(c, g, grp, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 5, 0));
        CHECK(inst != 0 || x == n, "reduce before the leave: %d", x);
    }
    /* the leave waits until every member has ended those reduces: one that started its
       last one after groupd had told it of the leave would leave the leaver out */
    if (leave)
        CALL(gimpi_coll_group_barrier(c, g, grp, -1));
    gimpi_status_t st8;
    int y8 = 0;
    if (leave && inst == n - 1) {
        CALL(gimpi_group_leave(g, grp));
        for (int i = 0; i < n - 1; i++)
            CALL(gimpi_msg_send(m, gimpi_msg_tid(m, rk[i]), 8, &x, 4));
        CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, rk[0]), 9, &y8, 4, &st8));
        CHECK(gimpi_group_join(g, grp) == n - 1, "the leaver comes back as instance %d", n - 1);
    } else if (leave) {
        CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, rk[n - 1]), 8, &y8, 4, &st8));
        x = 1;
        CALL(gimpi_coll_group_reduce(c, g, grp, GIMPI_OP_SUM, NULL, &x, 1, GIMPI_INT, 6, 0));
        CHECK(inst != 0 || x == n - 1, "reduce after a member left: %d of %d", x, n - 1);
        if (inst == 0 && n > 2)
            CALL(gimpi_coll_group_bcast(c, g, grp, GIMPI_CID_P2P, 7, &x, 4));
        else if (n > 2)
            CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, rk[0]), 7, &y8, 4, &st8));
        CHECK(inst == 0 || n < 3 || y8 == n - 1, "bcast after a member left: %d", y8);
        CALL(gimpi_coll_group_barrier(c, g, grp, -1));
        if (inst == 0)
            CALL(gimpi_msg_send(m, gimpi_msg_tid(m, rk[n - 1]), 9, &x, 4));
    }
    CALL(gimpi_group_barrier(g, grp, n));
    CALL(gimpi_coll_group_barrier(c, g, grp, -1));
    free(buf);
    printf("rank %d ok\n", me);
    fflush(stdout);
    CHECK(gimpi_finalize(&t) == 0, "finalize");
    return 0;
}
