/*  pvm_todo.c — the calls of PVM 3.4.6 that <pvm3.h> declares and gimpi does not build
 *  yet: each fails with PvmNotImpl (through pvm_ctx_fail, so PvmAutoErr reports it), so a
 *  program that calls one links and learns at run time.  Every call that is built moves
 *  out of this file into the file of its family; the file goes when it is empty.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"

#include <stddef.h>
#include <sys/time.h>

/*  PvmNotImpl from call fn. */
static int s_todo(const char *fn)
{
    return pvm_ctx_fail(pvm_ctx_current(), fn, PvmNotImpl);
}

/*  Not built yet: PvmNotImpl. */
int pvm_getminfo(int bufid, struct pvmminfo *info)
{
    (void)bufid; (void)info;
    return s_todo("pvm_getminfo");
}

/*  Not built yet: PvmNotImpl. */
int pvm_setminfo(int bufid, struct pvmminfo *info)
{
    (void)bufid; (void)info;
    return s_todo("pvm_setminfo");
}

/*  Not built yet: PvmNotImpl. */
int pvm_pkmesg(int bufid)
{
    (void)bufid;
    return s_todo("pvm_pkmesg");
}

/*  Not built yet: PvmNotImpl. */
int pvm_pkmesgbody(int bufid)
{
    (void)bufid;
    return s_todo("pvm_pkmesgbody");
}

/*  Not built yet: PvmNotImpl. */
int pvm_upkmesg(void)
{
    return s_todo("pvm_upkmesg");
}

/*  Not built yet: PvmNotImpl. */
int pvm_newcontext(void)
{
    return s_todo("pvm_newcontext");
}

/*  Not built yet: PvmNotImpl. */
int pvm_setcontext(int newctx)
{
    (void)newctx;
    return s_todo("pvm_setcontext");
}

/*  Not built yet: PvmNotImpl. */
int pvm_getcontext(void)
{
    return s_todo("pvm_getcontext");
}

/*  Not built yet: PvmNotImpl. */
int pvm_freecontext(int ctx)
{
    (void)ctx;
    return s_todo("pvm_freecontext");
}

/*  Not built yet: PvmNotImpl. */
int pvm_addmhf(int src, int tag, int ctx, int (*func)(int mid))
{
    (void)src; (void)tag; (void)ctx; (void)func;
    return s_todo("pvm_addmhf");
}

/*  Not built yet: PvmNotImpl. */
int pvm_delmhf(int mhid)
{
    (void)mhid;
    return s_todo("pvm_delmhf");
}

/*  Not built yet: PvmNotImpl. */
int pvm_getmwid(int bufid)
{
    (void)bufid;
    return s_todo("pvm_getmwid");
}

/*  Not built yet: PvmNotImpl. */
int pvm_setmwid(int bufid, int waitid)
{
    (void)bufid; (void)waitid;
    return s_todo("pvm_setmwid");
}

/*  Not built yet: the matching function stays PVM's default; returns NULL. */
int (*pvm_recvf(int (*newmatch)(int, int, int)))(int, int, int)
{
    (void)newmatch;
    s_todo("pvm_recvf");
    return NULL;
}
