/*  fpvm_group.c — the Fortran binding's group calls (fpvm.h): pvmfjoingroup, pvmflvgroup,
 *  pvmfgettid, pvmfgetinst, pvmfgsize, pvmfbarrier, pvmfbcast, pvmffreezegroup, and the
 *  collectives pvmfreduce, pvmfgather, pvmfscatter, with the reduce functions a Fortran
 *  program passes as EXTERNAL (PvmSum, PvmMax, PvmMin, PvmProduct: pvmsum_ ...).
 *
 *  The group name loses its trailing blanks; a name of blanks only becomes "", which the
 *  C calls refuse with PvmNullGroup, as PVM's.  pvmfreduce hands pvm_reduce the C
 *  function behind pvmsum_ and the others (PvmSum ...), so the reduction is the
 *  library's own; any other function (a Fortran SUBROUTINE f(datatype, x, y, num, info))
 *  is called as PVM calls it, every argument by reference.
 */
#include "fortran/fpvm.h"
#include "fortran/fpvm_str.h"
#include "pvm3.h"

#include <stdbool.h>
#include <stdlib.h>

/*  The group calls with a name and one int, in fpvm.h's order. */
typedef enum { G_JOIN, G_LEAVE, G_GETTID, G_GETINST, G_GSIZE, G_BARRIER, G_BCAST, G_FREEZE } gcall_t;

/*  Makes group call `what` on the Fortran name (len bytes at group) with arg. */
static int s_call(gcall_t what, const char *fn, const char *group, size_t len, int arg)
{
    char *g = fpvm_str_in(group, len);
    if (!g)
        return fpvm_fail(fn, PvmNoMem);
    int rc = PvmBadParam;
    switch (what) {
    case G_JOIN: rc = pvm_joingroup(g); break;
    case G_LEAVE: rc = pvm_lvgroup(g); break;
    case G_GETTID: rc = pvm_gettid(g, arg); break;
    case G_GETINST: rc = pvm_getinst(g, arg); break;
    case G_GSIZE: rc = pvm_gsize(g); break;
    case G_BARRIER: rc = pvm_barrier(g, arg); break;
    case G_BCAST: rc = pvm_bcast(g, arg); break;
    case G_FREEZE: rc = pvm_freezegroup(g, arg); break;
    }
    free(g);
    return rc;
}

/*  Joins group; inum the instance number or an error. */
void pvmfjoingroup_(char *group, int *inum, size_t group_len)
{
    *inum = s_call(G_JOIN, "pvmfjoingroup", group, group_len, 0);
}

/*  Leaves group. */
void pvmflvgroup_(char *group, int *info, size_t group_len)
{
    *info = s_call(G_LEAVE, "pvmflvgroup", group, group_len, 0);
}

/*  The tid of instance inum of group. */
void pvmfgettid_(char *group, int *inum, int *tid, size_t group_len)
{
    *tid = s_call(G_GETTID, "pvmfgettid", group, group_len, *inum);
}

/*  The instance number of tid in group. */
void pvmfgetinst_(char *group, int *tid, int *inum, size_t group_len)
{
    *inum = s_call(G_GETINST, "pvmfgetinst", group, group_len, *tid);
}

/*  The number of members of group. */
void pvmfgsize_(char *group, int *size, size_t group_len)
{
    *size = s_call(G_GSIZE, "pvmfgsize", group, group_len, 0);
}

/*  Waits until count members of group have arrived. */
void pvmfbarrier_(char *group, int *count, int *info, size_t group_len)
{
    *info = s_call(G_BARRIER, "pvmfbarrier", group, group_len, *count);
}

/*  Sends the active send buffer to every other member of group. */
void pvmfbcast_(char *group, int *msgtag, int *info, size_t group_len)
{
    *info = s_call(G_BCAST, "pvmfbcast", group, group_len, *msgtag);
}

/*  Freezes group at size members. */
void pvmffreezegroup_(char *group, int *size, int *info, size_t group_len)
{
    *info = s_call(G_FREEZE, "pvmffreezegroup", group, group_len, *size);
}

/*  The C reduce function behind a Fortran one (pvmsum_ is PvmSum ...), else func. */
static fpvm_reduce_fn *s_c_func(fpvm_reduce_fn *func)
{
    return func == pvmsum_ ? PvmSum : func == pvmmax_ ? PvmMax : func == pvmmin_ ? PvmMin
         : func == pvmproduct_ ? PvmProduct : func;
}

/*  Reduces count items of datatype in data over group into the root instance's data. */
void pvmfreduce_(fpvm_reduce_fn *func, void *data, int *count, int *datatype, int *msgtag,
                 char *group, int *rootinst, int *info, size_t group_len)
{
    char *g = fpvm_str_in(group, group_len);
    *info = g ? pvm_reduce(s_c_func(func), data, *count, *datatype, *msgtag, g, *rootinst)
              : fpvm_fail("pvmfreduce", PvmNoMem);
    free(g);
}

/*  pvmfgather (scatter false) or pvmfscatter. */
static int s_gs(bool scatter, void *result, void *data, int count, int datatype, int msgtag,
                const char *group, size_t group_len, int rootinst)
{
    char *g = fpvm_str_in(group, group_len);
    if (!g)
        return fpvm_fail(scatter ? "pvmfscatter" : "pvmfgather", PvmNoMem);
    int rc = scatter ? pvm_scatter(result, data, count, datatype, msgtag, g, rootinst)
                     : pvm_gather(result, data, count, datatype, msgtag, g, rootinst);
    free(g);
    return rc;
}

/*  Gathers count items of every member's data into the root instance's result. */
void pvmfgather_(void *result, void *data, int *count, int *datatype, int *msgtag,
                 char *group, int *rootinst, int *info, size_t group_len)
{
    *info = s_gs(false, result, data, *count, *datatype, *msgtag, group, group_len, *rootinst);
}

/*  Scatters count items to each member's result from the root instance's data. */
void pvmfscatter_(void *result, void *data, int *count, int *datatype, int *msgtag,
                  char *group, int *rootinst, int *info, size_t group_len)
{
    *info = s_gs(true, result, data, *count, *datatype, *msgtag, group, group_len, *rootinst);
}

/*  PvmSum as a Fortran EXTERNAL (also callable directly, as PVM's). */
void pvmsum_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmSum(datatype, x, y, num, info);
}

/*  PvmMax as a Fortran EXTERNAL. */
void pvmmax_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmMax(datatype, x, y, num, info);
}

/*  PvmMin as a Fortran EXTERNAL. */
void pvmmin_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmMin(datatype, x, y, num, info);
}

/*  PvmProduct as a Fortran EXTERNAL. */
void pvmproduct_(int *datatype, void *x, void *y, int *num, int *info)
{
    PvmProduct(datatype, x, y, num, info);
}
