/*  pvm_err.c — PVM's error state, options and small helpers: pvm_errno, pvmdebmask, the
 *  layer's error reporting (pvm_ctx_fail, as PvmAutoErr says, with the failure's cause),
 *  pvm_perror and pvm_errcause, pvm_setopt/pvm_getopt, pvmsleep, pvmgetclock.
 *
 *  PVM's numbers and texts stay as they are; what gimpi adds is the cause, in
 *  parentheses after PVM's text ("Can't contact local daemon (t40003 on host h1 closed
 *  its connection)"), so that a program or a script that matches PVM's text still finds
 *  it.  A cause never holds parentheses of its own (pvm_ctx_note flattens them).
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "gimpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>

/*  The last error code a PVM call failed with.  A real global variable because PVM
 *  programs declare `extern int pvm_errno;` (part of the documented exception to "no
 *  global state", next to the context pointer in pvm_enrol.c). */
int pvm_errno = 0;

/*  libpvm's debug mask, also reached through the PvmDebugMask option; PVM programs
 *  (ptest) write it directly, so it too has to be a real variable.  Nothing reads it yet. */
int pvmdebmask = 0;

/*  The diagnostic prefix. */
void pvm_ctx_prefix(const pvm_ctx_t *self, char *out, size_t size)
{
    if (self && pvm_ctx_tid(self) > 0)
        snprintf(out, size, "libpvm [t%x]", (unsigned)pvm_ctx_tid(self));
    else
        snprintf(out, size, "libpvm [pid%d]", (int)getpid());
}

/*  PVM's text of code, then " (cause)" when the context has a cause for it. */
static void s_text(const pvm_ctx_t *self, int code, char *out, size_t size)
{
    const char *cause = self ? pvm_ctx_cause(self, code) : "";
    snprintf(out, size, *cause ? "%s (%s)" : "%s", gimpi_strerror(code), cause);
}

/*  Records an error silently: pvm_errno and its cause. */
int pvm_ctx_error(pvm_ctx_t *self, int code, int where)
{
    if (code >= 0)
        return code;
    pvm_errno = code;
    if (self)
        pvm_ctx_note(self, code, where);
    return code;
}

/*  Records an error as PvmAutoErr says, its cause found in `where`. */
int pvm_ctx_fail_in(pvm_ctx_t *self, const char *fn, int code, int where)
{
    pvm_ctx_error(self, code, where);
    int mode = self ? *pvm_ctx_opt(self, PvmAutoErr) : 1;
    if (mode > 0) {
        char prefix[64], text[640];
        pvm_ctx_prefix(self, prefix, sizeof prefix);
        s_text(self, code, text, sizeof text);
        fprintf(stderr, "%s: %s(): %s\n", prefix, fn, text);
        fflush(stderr);
        if (mode == 2)
            exit(1);
        if (mode >= 3)
            abort();
    }
    return code;
}

/*  Records an error as PvmAutoErr says (its cause: groupd first, then the data plane). */
int pvm_ctx_fail(pvm_ctx_t *self, const char *fn, int code)
{
    return pvm_ctx_fail_in(self, fn, code, PVM_CAUSE_BOTH);
}

/*  Prints `libpvm [t<tid>]: msg: <text of pvm_errno>` on stderr, then ` (<cause>)` when
 *  the last failure that set pvm_errno had one. */
int pvm_perror(char *msg)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    char prefix[64], text[640];
    pvm_ctx_prefix(ctx, prefix, sizeof prefix);
    s_text(ctx, pvm_errno, text, sizeof text);
    fprintf(stderr, "%s: %s: %s\n", prefix, msg ? msg : "(null)", text);
    fflush(stderr);
    return 0;
}

/*  The cause of the failure pvm_errno holds, "" when none is known. */
const char *pvm_errcause(void)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    return ctx ? pvm_ctx_cause(ctx, pvm_errno) : "";
}

/*  Sets an option and returns its previous value (PvmBadParam for an unknown option). */
int pvm_setopt(int what, int val)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_setopt", PvmNoMem);
    PVM_TEV(ctx, TEV_SETOPT, pvm_setopt(what, val), what, val);
    int told;
    if (pvm_tev_setopt(ctx, what, val, &told))
        return told < 0 ? pvm_ctx_fail(ctx, "pvm_setopt", told) : told;
    if (what == PvmDebugMask) {
        int old = pvmdebmask;
        pvmdebmask = val;
        return old;
    }
    int *opt = pvm_ctx_opt(ctx, what);
    if (!opt)
        return pvm_ctx_fail(ctx, "pvm_setopt", PvmBadParam);
    if ((what == PvmRoute && (val < PvmDontRoute || val > PvmRouteDirect))
        || (what == PvmAutoErr && (val < 0 || val > 3)))
        return pvm_ctx_fail(ctx, "pvm_setopt", PvmBadParam);
    int old = *opt;
    *opt = val;
    if (what == PvmShowTids && pvm_ctx_catchout_file(ctx))
        pvm_ctx_catchout(ctx, pvm_ctx_catchout_file(ctx));  /* the new format from now on */
    return old;
}

/*  The value of an option (PvmBadParam for an unknown option). */
int pvm_getopt(int what)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_getopt", PvmNoMem);
    PVM_TEV(ctx, TEV_GETOPT, pvm_getopt(what), what);
    int tval;
    if (pvm_tev_getopt(ctx, what, &tval))
        return tval;
    if (what == PvmDebugMask)
        return pvmdebmask;
    int *opt = pvm_ctx_opt(ctx, what);
    if (!opt)
        return pvm_ctx_fail(ctx, "pvm_getopt", PvmBadParam);
    return *opt;
}

/*  Sleeps for secs seconds (restarting after signals); returns 0. */
int pvmsleep(int secs)
{
    if (secs <= 0)
        return 0;
    struct timespec ts = { secs, 0 };
    while (nanosleep(&ts, &ts) != 0)
        ;
    return 0;
}

/*  The time of day, as gettimeofday; returns 0, or PvmBadParam for NULL. */
int pvmgetclock(struct timeval *tv)
{
    if (!tv)
        return PvmBadParam;
    return gettimeofday(tv, NULL) == 0 ? 0 : PvmSysErr;
}
