/*  pvm_tev.h — the trace hooks of the PVM calls: PVM 3.4's tracing (a tracer task set by
 *  PvmTraceTid gets an entry and an exit event, as messages in PVM's self-describing
 *  format, for every top-level call its mask selects) and gimpi's recorder (GIMPI_TRACE:
 *  every top-level call, message and group event into the task's trace file).
 *
 *  A call starts with PVM_TEV(ctx, TEV_X, <the same call again>, <its int arguments as
 *  PVM records them>).  When the context is not armed (no tracer, no recorder: the
 *  common case) that is one load and one branch.  When it is, the hook records the
 *  entry, disarms the context, runs the call again (which now skips the hook, as do the
 *  calls it makes: only top-level calls are traced, as in PVM), records the exit and
 *  returns what the call returned.
 */
#ifndef GIMPI_PVM_TEV_H
#define GIMPI_PVM_TEV_H

#include "pvm/pvm_ctx.h"
#include "pvmtev.h"

/*  1 when a call starting now is traced or recorded (for hooks of their own, which
 *  then call a cold function that uses PVM_TEV: the fastest paths, whose hot code should
 *  not keep what the traced branch needs). */
#define PVM_TEV_ARMED(ctx) __builtin_expect(PVM_CTX_TEV(ctx) & PVM_CTX_TEV_CALLS, 0)

/*  The hook: see above.  Only in functions returning int, after ctx is known not NULL. */
#define PVM_TEV(ctx, kind, again, ...) PVM_TEV_S(ctx, kind, NULL, NULL, again, __VA_ARGS__)
/*  The same for a call whose entry event has strings (PVM's order: they come first). */
#define PVM_TEV_S(ctx, kind, s1, s2, again, ...)                                        \
    do {                                                                                \
        if (PVM_TEV_ARMED(ctx)) {                                                       \
            const int pvm_tev_a_[] = { 0, __VA_ARGS__ };                                \
            pvm_tev_enter((ctx), (kind), (s1), (s2), pvm_tev_a_ + 1,                    \
                          (int)(sizeof pvm_tev_a_ / sizeof *pvm_tev_a_) - 1);           \
            return pvm_tev_leave((ctx), (kind), (again));                               \
        }                                                                               \
    } while (0)

/*  The hooks of calls off the message path, which find the context themselves. */
#define PVM_TEV_TOP(kind, again, ...) PVM_TEV_TOP_S(kind, NULL, NULL, again, __VA_ARGS__)
#define PVM_TEV_TOP_S(kind, s1, s2, again, ...)                                         \
    do {                                                                                \
        pvm_ctx_t *pvm_tev_c_ = pvm_ctx_current();                                      \
        if (pvm_tev_c_)                                                                 \
            PVM_TEV_S(pvm_tev_c_, kind, s1, s2, again, __VA_ARGS__);                    \
    } while (0)

/*  Gives a new context the task's trace settings: PVMTMASK, GIMPI_PVMTRACER (what the
 *  parent's pvm_spawn handed down), GIMPI_TRACE and GIMPI_TRACE_BUFFER. */
void pvm_tev_init(pvm_ctx_t *ctx);
/*  Moves the trace state of from (which is going: pvm_exit) to the fresh context to. */
void pvm_tev_move(pvm_ctx_t *from, pvm_ctx_t *to);
/*  A call starts: records and sends its entry event (strings s1, s2 may be NULL);
 *  disarms the context. */
void pvm_tev_enter(pvm_ctx_t *ctx, int kind, const char *s1, const char *s2, const int *args,
                   int n);
/*  The call ended with rc: records and sends its exit event, re-arms; returns rc. */
int pvm_tev_leave(pvm_ctx_t *ctx, int kind, int rc);
/*  pvm_exit: the entry event of TEV_EXIT (PVM sends no exit event), the EXIT record,
 *  everything gathered sent or written. */
void pvm_tev_exit(pvm_ctx_t *ctx);
/*  The process ends: writes the recorder's ring to its file. */
void pvm_tev_flush(pvm_ctx_t *ctx);
/*  A point event for the recorder (GIMPI_TEV_JOIN ...): n ints and a string. */
void pvm_tev_event(pvm_ctx_t *ctx, int kind, const int *i, int n, const char *s);

/*  The trace options of pvm_setopt/pvm_getopt (PvmTraceTid ... PvmSelfTraceContext):
 *  1 when `what` is one, with *old (the previous value, or PvmBadParam/PvmNotImpl) set. */
int pvm_tev_setopt(pvm_ctx_t *ctx, int what, int val, int *old);
int pvm_tev_getopt(pvm_ctx_t *ctx, int what, int *val);
/*  The masks (who: PvmTaskSelf, PvmTaskChild); mask is a valid mask's text. */
void pvm_tev_get_mask(pvm_ctx_t *ctx, int who, char *mask);
void pvm_tev_set_mask(pvm_ctx_t *ctx, int who, const char *mask);
/*  The members of group (tid per instance, 0: free; valid until the next call) for a
 *  bcast's SEND records, kept while groupd's version of the group holds.  Their number
 *  or -1. */
int pvm_tev_members(pvm_ctx_t *ctx, gimpi_groups_t *groups, const char *group,
                    const int **tids);
/*  Before a spawn: puts the children's mask and tracer in the environment the children
 *  get (PVMTMASK, GIMPI_PVMTRACER).  0 or PvmNoMem. */
int pvm_tev_child_env(pvm_ctx_t *ctx);
/*  At enrolment (groups: the new transport's groupd client): a task that inherited no
 *  tracer takes the one pvm_reg_tracer registered, if any (one message-box lookup). */
void pvm_tev_registered(pvm_ctx_t *ctx, gimpi_groups_t *groups);

#endif
