/*  pvm_misc.c — the small calls of PVM's API that hold no state of their own: the PVM 3.3
 *  spellings of two options (pvm_advise: PvmRoute, pvm_serror: PvmAutoErr), the trace
 *  masks (pvm_gettmask, pvm_settmask), the release (pvm_version), and the calls that
 *  hand a task a part of the pvmd's job (pvm_reg_rm, pvm_reg_hoster, pvm_reg_tasker) or
 *  list the tasks PvmNoReset spares (pvm_getnoresets), which gimpi has no place for:
 *  PvmNotImpl (doc/pvm-differences.md says why).
 *
 *  The trace masks live in the context's trace state (pvm_tev.c): the task's own, which
 *  selects the calls it traces, and its children's, which pvm_spawn hands down in
 *  PVMTMASK as PVM does (a spawned task starts with it as both).  A mask is PVM's
 *  printable string of TEV_MASK_LENGTH - 1 characters '@' to 'O' (4 bits each) and a NUL.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"

#include <stdlib.h>
#include <string.h>

enum { TMASK_CHARS = 35 };      /* pvmtev.h's TEV_MASK_LENGTH (36) less its NUL */

/*  PvmRoute, as PVM 3.3 set it: 0, or PvmBadParam for a value not PvmDontRoute ..
 *  PvmRouteDirect. */
int pvm_advise(int how)
{
    if (how < PvmDontRoute || how > PvmRouteDirect)
        return pvm_ctx_fail(pvm_ctx_current(), "pvm_advise", PvmBadParam);
    int old = pvm_setopt(PvmRoute, how);
    return old < 0 ? old : 0;
}

/*  PvmAutoErr, as PVM 3.3 set it: the previous setting, or PvmBadParam (0 to 3 are
 *  pvm_setopt's values; 3.3 knew 0 and 1, and promised 2). */
int pvm_serror(int how)
{
    if (how < 0 || how > 3)
        return pvm_ctx_fail(pvm_ctx_current(), "pvm_serror", PvmBadParam);
    return pvm_setopt(PvmAutoErr, how);
}

/*  The PVM release this interface follows. */
char *pvm_version(void)
{
    return (char *)PVM_VER;     /* PVM's type; callers only read it */
}

/*  1 when s is a trace mask's text: at most TMASK_CHARS characters '@' .. 'O'. */
static int s_mask_ok(const char *s)
{
    size_t n = strnlen(s, TMASK_CHARS + 1);
    if (n > TMASK_CHARS)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '@' || s[i] > 'O')
            return 0;
    return 1;
}

/*  Writes mask text v (a mask: s_mask_ok) to out as TMASK_CHARS characters and a NUL,
 *  '@'-padded as TEV_MASK_INIT makes it. */
static void s_mask_fill(const char *v, char *out)
{
    size_t n = strnlen(v, TMASK_CHARS);
    memcpy(out, v, n);
    memset(out + n, '@', TMASK_CHARS - n);
    out[TMASK_CHARS] = 0;
}

/*  Copies a trace mask (PvmTaskSelf: this task's, PvmTaskChild: its children's) into
 *  tmask (TEV_MASK_LENGTH bytes).  0 or PvmBadParam. */
int pvm_gettmask(int who, char *tmask)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_gettmask", PvmNoMem);
    PVM_TEV(ctx, TEV_GETTMASK, pvm_gettmask(who, tmask), who);
    if ((who != PvmTaskSelf && who != PvmTaskChild) || !tmask)
        return pvm_ctx_fail(ctx, "pvm_gettmask", PvmBadParam);
    pvm_tev_get_mask(ctx, who, tmask);
    return 0;
}

/*  Sets a trace mask from tmask (the children's applies to tasks spawned from now on).
 *  0 or PvmBadParam (bad who, NULL, not a mask). */
int pvm_settmask(int who, char *tmask)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_settmask", PvmNoMem);
    PVM_TEV(ctx, TEV_SETTMASK, pvm_settmask(who, tmask), who);
    if ((who != PvmTaskSelf && who != PvmTaskChild) || !tmask || !s_mask_ok(tmask))
        return pvm_ctx_fail(ctx, "pvm_settmask", PvmBadParam);
    char mask[TMASK_CHARS + 1];
    s_mask_fill(tmask, mask);
    pvm_tev_set_mask(ctx, who, mask);
    return 0;
}

/*  No task takes over the manager's scheduling in gimpi: PvmNotImpl. */
int pvm_reg_rm(struct pvmhostinfo **hostp)
{
    if (hostp)
        *hostp = NULL;
    return pvm_ctx_fail(pvm_ctx_current(), "pvm_reg_rm", PvmNotImpl);
}

/*  No task starts the agents of new hosts in gimpi: PvmNotImpl. */
int pvm_reg_hoster(void)
{
    return pvm_ctx_fail(pvm_ctx_current(), "pvm_reg_hoster", PvmNotImpl);
}

/*  No task starts the tasks of a host in gimpi: PvmNotImpl. */
int pvm_reg_tasker(void)
{
    return pvm_ctx_fail(pvm_ctx_current(), "pvm_reg_tasker", PvmNotImpl);
}

/*  PvmNoReset is kept but nothing resets a virtual machine in gimpi: PvmNotImpl. */
int pvm_getnoresets(int **tids, int *ntids)
{
    if (tids)
        *tids = NULL;
    if (ntids)
        *ntids = 0;
    return pvm_ctx_fail(pvm_ctx_current(), "pvm_getnoresets", PvmNotImpl);
}
