/*  pvm_group.c — PVM's non-collective group calls (pvm_joingroup, pvm_lvgroup, pvm_gettid,
 *  pvm_getinst, pvm_gsize, pvm_freezegroup, pvm_barrier) over groupd, through the task's
 *  registered groupd connection (the transport's `groups` entry; gimpi_init registered it
 *  under the task's data-plane tid, so the tids these calls give and take are the ones
 *  pvm_send uses).  Results and error codes are PVM 3.4.6's (../shared/doc/pvm-groups.md
 *  §3, §4, §7), with the deliberate fixes of its §9 that groupd makes (barrier/freeze count
 *  0 or < -1 PvmBadParam without poisoning, gettid at the table's capacity PvmNoInst,
 *  getinst(g, -1) PvmNotInGroup, PvmSysErr within 2 s when groupd dies): see
 *  doc/pvm-differences.md.  As libgpvm, these calls print no PvmAutoErr diagnostic; all
 *  but pvm_freezegroup set pvm_errno on failure.  pvm_barrier is groupd's arbitration for
 *  now (the data-plane collectives will take it over).
 */
#include "pvm3.h"
#include "pvm_ctx.h"
#include "gimpi.h"

#include <stddef.h>

/*  The enrolled task's groupd connection, or NULL with *rc set (PvmNoMem, PvmSysErr). */
static gimpi_groups_t *s_groups(int *rc)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx) {
        *rc = PvmNoMem;
        return NULL;
    }
    *rc = pvm_ctx_enrol(ctx);
    if (*rc < 0)
        return NULL;
    void *impl;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_groups_t *g = ops && ops->groups ? ops->groups(impl) : NULL;
    *rc = g ? 0 : PvmSysErr;
    return g;
}

/*  Records a failure in pvm_errno (silently, as libgpvm) and returns the result. */
static int s_result(int rc)
{
    if (rc < 0)
        pvm_errno = rc;
    return rc;
}

/*  Kinds of call with a group name and an int argument. */
typedef enum { G_JOIN, G_LEAVE, G_GETTID, G_GETINST, G_GSIZE, G_BARRIER, G_FREEZE } gcall_t;

/*  Checks the name, enrols and makes the call. */
static int s_call(gcall_t what, const char *group, int arg)
{
    if (!group || !*group)
        return PvmNullGroup;
    int rc;
    gimpi_groups_t *g = s_groups(&rc);
    if (!g)
        return rc;
    switch (what) {
    case G_JOIN: return gimpi_group_join(g, group);
    case G_LEAVE: return gimpi_group_leave(g, group);
    case G_GETTID: return gimpi_group_gettid(g, group, arg);
    case G_GETINST: return gimpi_group_getinst(g, group, arg);
    case G_GSIZE: return gimpi_group_gsize(g, group);
    case G_BARRIER: return gimpi_group_barrier(g, group, arg);
    case G_FREEZE: return gimpi_group_freeze(g, group, arg);
    }
    return PvmBadParam;
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

/*  Waits until count members (-1: the group's size) have arrived. */
int pvm_barrier(char *group, int count)
{
    return s_result(s_call(G_BARRIER, group, count));
}

/*  Freezes the group once size members (-1: its size) have called; returns the size.
 *  Like libgpvm it leaves pvm_errno alone. */
int pvm_freezegroup(char *group, int size)
{
    return s_call(G_FREEZE, group, size);
}
