/*  pvm_libpvm.c — libpvm 3.4.6's own names that PVM programs call although PVM's manual
 *  does not document them: lpvmerr (its error report, used by the examples task0, task1,
 *  task_end, rme, mhf_server and mhf_tickle), pvmdisplaymhfinfo (the message-handler
 *  table, printed by mhf_server), and the three calls PVM's pvm3.h declares beside the
 *  manual's: pvm_strerror, pvm_tickle and pvm_reg_tracer (XPVM's registration as the
 *  virtual machine's tracer, kept in the message box as libpvm keeps it).  They live in libgimpi so that
 *  a program built from source with gimpicc links, and an unchanged binary finds them
 *  through the ABI libraries (pvm_abi.c), which need libgimpi.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
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

/*  The tid in the registered tracer's entry <PVMTRACERCLASS, 0> (0: none), read as libpvm
 *  reads it: into a receive buffer of its own, the active one kept. */
static int s_registered(void)
{
    int rbf = pvm_setrbuf(0), tid = 0;
    if (pvm_recvinfo(PVMTRACERCLASS, 0, PvmMboxDefault) > 0) {
        if (pvm_upkint(&tid, 1, 1) < 0)
            tid = 0;
        pvm_freebuf(pvm_getrbuf());
    }
    pvm_setrbuf(rbf);
    return tid;
}

/*  Registers the caller as the virtual machine's tracer, as PVM 3.4.6 does: every task
 *  that starts afterwards (spawned, or from the shell) and inherited no tracer traces to
 *  it with these settings (pvm_tev_registered reads them at enrolment).  The registration
 *  is the message-box entry <PVMTRACERCLASS, 0> that libpvm also writes, owned by the
 *  tracer, so it goes when the tracer exits.  A second call of the tracer unregisters
 *  (its arguments are not read, as in PVM); a second tracer gets PvmAlready. */
int pvm_reg_tracer(int tctx, int ttag, int octx, int otag, char *tmask, int tbuf, int topt)
{
    PVM_TEV_TOP_S(TEV_REG_TRACER, tmask, NULL,
                  pvm_reg_tracer(tctx, ttag, octx, otag, tmask, tbuf, topt), tctx, ttag, octx,
                  otag, tbuf, topt);
    int me = pvm_mytid();
    if (me < 0)
        return me;
    int owner = s_registered(), rc = PvmAlready;
    if (owner == me)
        rc = pvm_delinfo(PVMTRACERCLASS, 0, PvmMboxDefault) < 0 ? pvm_errno : 0;
    else if (!owner && !tmask)
        rc = PvmBadParam;
    else if (!owner) {
        int sbf = pvm_setsbuf(pvm_mkbuf(PvmDataDefault));
        int v[] = { me, tctx, ttag, octx, otag }, o[] = { tbuf, topt };
        pvm_pkint(v, 5, 1);
        pvm_pkstr(tmask);
        pvm_pkint(o, 2, 1);
        rc = pvm_putinfo(PVMTRACERCLASS, pvm_getsbuf(), PvmMboxDefault);
        pvm_freebuf(pvm_setsbuf(sbf));
        rc = rc == PvmExists || rc == PvmDenied ? PvmAlready : rc < 0 ? rc : 0;
    }
    return rc < 0 ? lpvmerr("pvm_reg_tracer", rc) : 0;
}
