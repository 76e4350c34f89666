/*  pvm_err.c — PVM's error state, options and small helpers: pvm_errno, pvmdebmask, the
 *  layer's error reporting (pvm_ctx_fail, as PvmAutoErr says), pvm_perror,
 *  pvm_setopt/pvm_getopt, pvmsleep, pvmgetclock.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
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

/*  Records an error as PvmAutoErr says. */
int pvm_ctx_fail(pvm_ctx_t *self, const char *fn, int code)
{
    pvm_errno = code;
    int mode = self ? *pvm_ctx_opt(self, PvmAutoErr) : 1;
    if (mode > 0) {
        char prefix[64];
        pvm_ctx_prefix(self, prefix, sizeof prefix);
        fprintf(stderr, "%s: %s(): %s\n", prefix, fn, gimpi_strerror(code));
        fflush(stderr);
        if (mode == 2)
            exit(1);
        if (mode >= 3)
            abort();
    }
    return code;
}

/*  Prints `libpvm [t<tid>]: msg: <text of pvm_errno>` on stderr. */
int pvm_perror(char *msg)
{
    char prefix[64];
    pvm_ctx_prefix(pvm_ctx_current(), prefix, sizeof prefix);
    fprintf(stderr, "%s: %s: %s\n", prefix, msg ? msg : "(null)", gimpi_strerror(pvm_errno));
    fflush(stderr);
    return 0;
}

/*  Sets an option and returns its previous value (PvmBadParam for an unknown option). */
int pvm_setopt(int what, int val)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_setopt", PvmNoMem);
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
