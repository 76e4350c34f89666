/*  pvm_group.c — PVM's group calls: pvm_joingroup, pvm_lvgroup, pvm_gettid, pvm_getinst,
 *  pvm_gsize, pvm_freezegroup over groupd, through the task's registered groupd connection
 *  (the transport's `groups` entry; gimpi_init registered it under the task's data-plane
 *  tid, so the tids these calls give and take are the ones pvm_send uses), and pvm_barrier,
 *  pvm_bcast, pvm_reduce, pvm_gather, pvm_scatter over the data-plane collectives
 *  (gimpi_coll.h, the transport's `coll` and `bcast` entries; doc/collectives.md).
 *  Results and error codes are PVM 3.4.6's, with the deliberate fixes groupd makes
 *  (barrier/freeze count 0 or < -1 PvmBadParam without poisoning, gettid at the table's
 *  capacity PvmNoInst, getinst(g, -1) PvmNotInGroup, PvmSysErr within 2 s when groupd
 *  dies): see doc/pvm-differences.md, "Groups".  As libgpvm, only pvm_reduce, pvm_gather and pvm_scatter print
 *  a PvmAutoErr diagnostic; all but pvm_freezegroup set pvm_errno on failure.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "base/gimpi_trace.h"
#include "gimpi.h"
#include "gimpi_ops.h"

#include <stdbool.h>
#include <stddef.h>

/*  What a group call needs of the enrolled task. */
typedef struct {
    pvm_ctx_t *ctx;
    const pvm_transport_ops_t *ops;
    void *impl;
    gimpi_groups_t *groups;
    gimpi_coll_t *coll;
} genv_t;

/*  Enrols and finds the task's groupd connection and collectives: 0, or PvmNoMem /
 *  PvmSysErr (no transport, or one without groups). */
static int s_env(genv_t *e)
{
    *e = (genv_t){ .ctx = pvm_ctx_current() };
    if (!e->ctx)
        return PvmNoMem;
    int rc = pvm_ctx_enrol(e->ctx);
    if (rc < 0)
        return rc;
    e->ops = pvm_ctx_ops(e->ctx, &e->impl);
    e->groups = e->ops && e->ops->groups ? e->ops->groups(e->impl) : NULL;
    e->coll = e->ops && e->ops->coll ? e->ops->coll(e->impl) : NULL;
    return e->groups ? 0 : PvmSysErr;
}

/*  The enrolled task's groupd connection, or NULL with *rc set. */
static gimpi_groups_t *s_groups(int *rc)
{
    genv_t e;
    *rc = s_env(&e);
    return *rc ? NULL : e.groups;
}

/*  Records a failure in pvm_errno with its cause, found in `where` (silently, as libgpvm),
 *  and returns the result. */
static int s_result_in(int rc, int where)
{
    if (rc < 0)
        pvm_ctx_error(pvm_ctx_current(), rc, where);
    return rc;
}

/*  The same for a call that only groupd answers. */
static int s_result(int rc)
{
    return s_result_in(rc, PVM_CAUSE_GROUPD);
}

/*  Kinds of call with a group name and an int argument. */
typedef enum { G_JOIN, G_LEAVE, G_GETTID, G_GETINST, G_GSIZE, G_BARRIER, G_FREEZE } gcall_t;

/*  The trace event of each kind (PVM traces no freeze). */
static const int s_tev[] = { [G_JOIN] = TEV_JOINGROUP, [G_LEAVE] = TEV_LVGROUP,
                             [G_GETTID] = TEV_GETTID, [G_GETINST] = TEV_GETINST,
                             [G_GSIZE] = TEV_GSIZE, [G_BARRIER] = TEV_BARRIER,
                             [G_FREEZE] = -1 };

/*  Makes the call on groupd's connection g. */
static int s_do(gcall_t what, gimpi_groups_t *g, const char *group, int arg)
{
    switch (what) {
    case G_JOIN: return gimpi_group_join(g, group);
    case G_LEAVE: return gimpi_group_leave(g, group);
    case G_GETTID: return gimpi_group_gettid(g, group, arg);
    case G_GETINST: return gimpi_group_getinst(g, group, arg);
    case G_GSIZE: return gimpi_group_gsize(g, group);
    case G_BARRIER: {
        genv_t e;
        s_env(&e);
        return e.coll ? gimpi_coll_group_barrier(e.coll, g, group, arg)
                      : gimpi_group_barrier(g, group, arg);
    }
    case G_FREEZE: return gimpi_group_freeze(g, group, arg);
    }
    return PvmBadParam;
}

/*  The recorder's group events of a call (before: rc unused). */
static __attribute__((noinline, cold)) void s_record(pvm_ctx_t *ctx, gcall_t what,
                                                     const char *group, int arg, int rc,
                                                     bool before)
{
    int kind = what == G_JOIN ? GIMPI_TEV_JOIN : what == G_LEAVE ? GIMPI_TEV_LEAVE
             : before ? GIMPI_TEV_BARRIER_IN : GIMPI_TEV_BARRIER_OUT;
    if ((what == G_BARRIER || !before) && (what != G_JOIN || rc >= 0)
        && (what != G_LEAVE || rc >= 0))
        pvm_tev_event(ctx, kind, before ? &arg : &rc, 1, group);
}

static int s_call(gcall_t what, const char *group, int arg);

/*  A group call traced (off the fast path, which then keeps nothing for it). */
static __attribute__((noinline, cold)) int s_call_traced(pvm_ctx_t *ctx, gcall_t what,
                                                         const char *group, int arg)
{
    PVM_TEV_S(ctx, s_tev[what], group, NULL, s_call(what, group, arg), arg);
    return s_call(what, group, arg);
}

/*  Checks the name, enrols and makes the call. */
static int s_call(gcall_t what, const char *group, int arg)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (ctx && what != G_FREEZE && PVM_TEV_ARMED(ctx))
        return s_call_traced(ctx, what, group, arg);
    if (!group || !*group)
        return PvmNullGroup;
    int rc;
    gimpi_groups_t *g = s_groups(&rc);
    if (!g)
        return rc;
    bool rec = ctx && (PVM_CTX_TEV(ctx) & PVM_CTX_TEV_RECORD)
        && (what == G_JOIN || what == G_LEAVE || what == G_BARRIER);
    if (__builtin_expect(rec, 0))
        s_record(ctx, what, group, arg, 0, true);
    rc = s_do(what, g, group, arg);
    if (__builtin_expect(rec, 0))
        s_record(ctx, what, group, arg, rc, false);
    return rc;
}

/*  Joins; returns the instance number (the lowest free one). */
int pvm_joingroup(char *group)
{
    return s_result(s_call(G_JOIN, group, 0));
}

/*  Leaves; the last member's leave deletes the group. */
int pvm_lvgroup(char *group)
{
    return s_result(s_call(G_LEAVE, group, 0));
}

/*  Tid of instance inum (any task may ask). */
int pvm_gettid(char *group, int inum)
{
    return s_result(s_call(G_GETTID, group, inum));
}

/*  Instance of tid (any task may ask). */
int pvm_getinst(char *group, int tid)
{
    return s_result(s_call(G_GETINST, group, tid));
}

/*  Number of current members. */
int pvm_gsize(char *group)
{
    return s_result(s_call(G_GSIZE, group, 0));
}

/*  Waits until count members (-1: the group's size) have arrived (on the data plane for
 *  -1 or the size when the membership has not changed, else arbitrated by groupd). */
int pvm_barrier(char *group, int count)
{
    return s_result_in(s_call(G_BARRIER, group, count), PVM_CAUSE_BOTH);
}

/*  Freezes the group once size members (-1: its size) have called; returns the size.
 *  Like libgpvm it leaves pvm_errno alone. */
int pvm_freezegroup(char *group, int size)
{
    return s_call(G_FREEZE, group, size);
}

/*  Records a SEND to each member but the caller of a bcast (so that every receiver's
 *  count of our messages pairs with ours). */
static __attribute__((noinline, cold)) void s_record_bcast(genv_t *e, const char *group,
                                                           int tag, int sbuf)
{
    const int *tids;
    int n = pvm_tev_members(e->ctx, e->groups, group, &tids);
    pvm_buf_t *b = pvm_ctx_buf(e->ctx, sbuf);
    if (n > 0)
        gimpi_trace_sends(pvm_ctx_rec(e->ctx), tids, n, pvm_ctx_tid(e->ctx), tag,
                          PvmBaseContext, b ? (int)pvm_buf_len(b) : 0);
}

/*  pvm_bcast traced (off the fast path, which then keeps nothing for it). */
static __attribute__((noinline, cold)) int s_bcast_traced(pvm_ctx_t *ctx, char *group,
                                                          int msgtag)
{
    PVM_TEV_S(ctx, TEV_BCAST, group, NULL, pvm_bcast(group, msgtag), msgtag);
    return pvm_bcast(group, msgtag);
}

/*  Sends the active send buffer to every member but the caller (silent on errors, as
 *  libgpvm's). */
int pvm_bcast(char *group, int msgtag)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (ctx && PVM_TEV_ARMED(ctx))
        return s_bcast_traced(ctx, group, msgtag);
    if (!group || !*group)
        return s_result(PvmNullGroup);
    if (msgtag < 0)
        return s_result(PvmBadParam);
    genv_t e;
    int rc = s_env(&e);
    if (rc < 0)
        return s_result(rc);
    int sbuf = pvm_ctx_sbuf(e.ctx);
    if (!sbuf)
        return s_result(PvmNoBuf);
    if (__builtin_expect(PVM_CTX_TEV(e.ctx) & PVM_CTX_TEV_RECORD, 0))
        s_record_bcast(&e, group, msgtag, sbuf);
    return s_result_in(pvm_ctx_bcast(e.ctx, sbuf, group, msgtag, PvmBaseContext),
                       PVM_CAUSE_BOTH);
}

/*  Enters a collective that prints its errors (reduce, gather, scatter): 0 with *e set, or
 *  the error, reported as PvmAutoErr says. */
static int s_coll_enter(genv_t *e, const char *fn, const char *group)
{
    *e = (genv_t){ .ctx = pvm_ctx_current() };
    int rc = !group || !*group ? PvmNullGroup : s_env(e);
    if (rc == 0 && !e->coll)
        rc = PvmSysErr;
    return rc < 0 ? pvm_ctx_fail_in(e->ctx, fn, rc, PVM_CAUSE_BOTH) : 0;
}

/*  A predefined reduce function's op (gimpi_ops.h), or -1 for a user function. */
static int s_op_of(void (*func)(int *, void *, void *, int *, int *))
{
    return func == PvmMax ? GIMPI_OP_MAX : func == PvmMin ? GIMPI_OP_MIN
         : func == PvmSum ? GIMPI_OP_SUM : func == PvmProduct ? GIMPI_OP_PRODUCT : -1;
}

/*  Reduces count elements of every member into data at instance rootginst. */
int pvm_reduce(void (*func)(int *datatype, void *x, void *y, int *num, int *info),
               void *data, int count, int datatype, int msgtag, char *group, int rootginst)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (ctx)
        PVM_TEV_S(ctx, TEV_REDUCE, group, NULL,
                  pvm_reduce(func, data, count, datatype, msgtag, group, rootginst), msgtag);
    genv_t e;
    int rc = s_coll_enter(&e, "pvm_reduce", group);
    if (rc < 0)
        return rc;
    if (!func || msgtag < 0)
        return pvm_ctx_fail(e.ctx, "pvm_reduce", PvmBadParam);
    int op = s_op_of(func);
    rc = gimpi_coll_group_reduce(e.coll, e.groups, group, op < 0 ? 0 : op, op < 0 ? func : NULL,
                                 data, count, datatype, msgtag, rootginst);
    return rc < 0 ? pvm_ctx_fail_in(e.ctx, "pvm_reduce", rc, PVM_CAUSE_BOTH) : rc;
}

/*  pvm_gather (scatter false) or pvm_scatter (true). */
static int s_gather_scatter(bool scatter, void *result, void *data, int count, int datatype,
                            int msgtag, char *group, int rootginst)
{
    const char *fn = scatter ? "pvm_scatter" : "pvm_gather";
    genv_t e;
    int rc = s_coll_enter(&e, fn, group);
    if (rc < 0)
        return rc;
    if (msgtag < 0)
        return pvm_ctx_fail(e.ctx, fn, PvmBadParam);
    rc = scatter ? gimpi_coll_group_scatter(e.coll, e.groups, group, result, data, count,
                                            datatype, msgtag, rootginst)
                 : gimpi_coll_group_gather(e.coll, e.groups, group, result, data, count,
                                           datatype, msgtag, rootginst);
    return rc < 0 ? pvm_ctx_fail_in(e.ctx, fn, rc, PVM_CAUSE_BOTH) : rc;
}

/*  Gathers count elements of every member into result at instance rootginst. */
int pvm_gather(void *result, void *data, int count, int datatype, int msgtag, char *group,
               int rootginst)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (ctx)
        PVM_TEV_S(ctx, TEV_GATHER, group, NULL,
                  pvm_gather(result, data, count, datatype, msgtag, group, rootginst), msgtag);
    return s_gather_scatter(false, result, data, count, datatype, msgtag, group, rootginst);
}

/*  Scatters count elements of the root's data to every member's result. */
int pvm_scatter(void *result, void *data, int count, int datatype, int msgtag, char *group,
                int rootginst)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (ctx)
        PVM_TEV_S(ctx, TEV_SCATTER, group, NULL,
                  pvm_scatter(result, data, count, datatype, msgtag, group, rootginst), msgtag);
    return s_gather_scatter(true, result, data, count, datatype, msgtag, group, rootginst);
}
