/*  pvm_libpvm.c — libpvm 3.4.6's own names that PVM programs call although PVM's manual
 *  does not document them: lpvmerr (its error report, used by the examples task0, task1,
 *  task_end, rme, mhf_server and mhf_tickle), pvmdisplaymhfinfo (the message-handler
 *  table, printed by mhf_server), and the three calls PVM's pvm3.h declares beside the
 *  manual's: pvm_strerror, pvm_tickle and pvm_reg_tracer.  They live in libgimpi so that
 *  a program built from source with gimpicc links, and an unchanged binary finds them
 *  through the ABI libraries (pvm_abi.c), which need libgimpi.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "gimpi.h"

#include <stdio.h>

/*  libpvm's error report: pvm_errno = n, then what PvmAutoErr says (print "f(): text",
 *  exit or abort), as every failing call of the PVM layer does.  Returns n. */
int lpvmerr(char *f, int n)
{
    return pvm_ctx_fail(pvm_ctx_current(), f ? f : "", n);
}

/*  Prints the message-handler table in libpvm's layout: a header with the counts and the
 *  (here always empty) free list, the caller's message, a line per live handler, and two
 *  newlines. */
void pvmdisplaymhfinfo(char *who, char *msg, int tid)
{
    const char *me = "pvmdisplaymhfinfo", *w = who ? who : "";
    pvm_ctx_t *ctx = pvm_ctx_current();
    int cap = ctx ? pvm_ctx_mhf_cap(ctx) : 0, n = 0, src, tag, cx;
    for (int i = 0; i < cap; i++)
        n += pvm_ctx_mhf_info(ctx, i, &src, &tag, &cx) == 0;
    printf("\n%s t%x: Display Message Handler Information: ", w, (unsigned)tid);
    printf("ndhandles = %d\tnhandles = %d\tfl_dhandles = %d", n, n, -1);
    printf("\n%s: free list.  head <- -< tail", me);
    printf("\n%s t%x: %s\n", w, (unsigned)tid, msg ? msg : "");
    for (int i = 0, k = 0; i < cap; i++) {
        if (pvm_ctx_mhf_info(ctx, i, &src, &tag, &cx) < 0)
            continue;
        printf("%s t%x: dhandles[%2d].mhid = %2d  .handle = %2d     ", w, (unsigned)tid, k, i,
               k);
        printf("handles[%2d].mhid = %2d  .header.src = t%-8x  ", k, i, (unsigned)src);
        printf(".header.ctx = %8d  .header.tag= %8d\n", cx, tag);
        k++;
    }
    printf("\n\n");
    fflush(stdout);
}

/*  The text of pvm_errno (PVM's, without gimpi's cause). */
char *pvm_strerror(void)
{
    return (char *)gimpi_strerror(pvm_errno);   /* PVM's type; callers only read it */
}

/*  Asks the pvmd for its debugging actions: there is no pvmd, so PvmNotImpl. */
int pvm_tickle(int narg, int *argp, int *nresp, int *resp)
{
    (void)narg, (void)argp, (void)nresp, (void)resp;
    return lpvmerr("pvm_tickle", PvmNotImpl);
}

/*  Registers a tracer with the pvmds: gimpi has no tracer registry yet, so PvmNotImpl. */
int pvm_reg_tracer(int tctx, int ttag, int octx, int otag, char *tmask, int tbuf, int topt)
{
    (void)tctx, (void)ttag, (void)octx, (void)otag, (void)tmask, (void)tbuf, (void)topt;
    return lpvmerr("pvm_reg_tracer", PvmNotImpl);
}
