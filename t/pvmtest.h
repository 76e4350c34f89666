/*  t/pvmtest.h — helpers shared by the PVM API tests: a fresh process-wide context on
 *  the in-process loopback transport, and capturing what a call prints on stderr.
 */
#ifndef GIMPI_T_PVMTEST_H
#define GIMPI_T_PVMTEST_H

#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_loopback.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PVMTEST_TID 0x40001

/*  Installs a fresh context enrolled on a loopback for tid (PvmAutoErr 0 unless
 *  autoerr); returns the loopback (owned by the context). */
static inline pvm_loopback_t *pvmtest_setup(int tid, int autoerr)
{
    pvm_ctx_t *ctx = pvm_ctx_new();
    pvm_loopback_t *lb = pvm_loopback_new(tid, PvmNoParent);
    if (!ctx || !lb || pvm_ctx_attach(ctx, &pvm_loopback_ops, lb) < 0) {
        fprintf(stderr, "pvmtest_setup failed\n");
        _exit(99);
    }
    pvm_ctx_install(ctx);
    *pvm_ctx_opt(ctx, PvmAutoErr) = autoerr;
    return lb;
}

/*  Runs fn(arg) with stderr going into out (NUL-terminated, at most size - 1 bytes);
 *  returns fn's result.  Output must fit in a pipe (it is a few lines here). */
static inline int pvmtest_capture(int (*fn)(void *), void *arg, char *out, size_t size)
{
    int p[2];
    out[0] = '\0';
    if (pipe(p) < 0)
        return -9999;
    fflush(stderr);
    int saved = dup(2);
    dup2(p[1], 2);
    int rc = fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(p[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < size && (n = read(p[0], out + got, size - 1 - got)) > 0)
        got += (size_t)n;
    out[got] = '\0';
    close(p[0]);
    return rc;
}

#endif
