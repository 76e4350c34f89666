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
int pvm_putinfo(char *name, int bufid, int flags)
{
    (void)name; (void)bufid; (void)flags;
    return s_todo("pvm_putinfo");
}

/*  Not built yet: PvmNotImpl. */
int pvm_recvinfo(char *name, int index, int flags)
{
    (void)name; (void)index; (void)flags;
    return s_todo("pvm_recvinfo");
}

/*  Not built yet: PvmNotImpl. */
int pvm_delinfo(char *name, int index, int flags)
{
    (void)name; (void)index; (void)flags;
    return s_todo("pvm_delinfo");
}

/*  Not built yet: PvmNotImpl. */
int pvm_getmboxinfo(char *pattern, int *nclasses, struct pvmmboxinfo **classes)
{
    (void)pattern; (void)nclasses; (void)classes;
    return s_todo("pvm_getmboxinfo");
}

/*  Not built yet: PvmNotImpl. */
int pvm_insert(char *name, int req, int data)
{
    (void)name; (void)req; (void)data;
    return s_todo("pvm_insert");
}

/*  Not built yet: PvmNotImpl. */
int pvm_lookup(char *name, int req, int *datap)
{
    (void)name; (void)req; (void)datap;
    return s_todo("pvm_lookup");
}

/*  Not built yet: PvmNotImpl. */
int pvm_delete(char *name, int req)
{
    (void)name; (void)req;
    return s_todo("pvm_delete");
}

/*  Not built yet: PvmNotImpl. */
int pvm_export(char *name)
{
    (void)name;
    return s_todo("pvm_export");
}

/*  Not built yet: PvmNotImpl. */
int pvm_unexport(char *name)
{
    (void)name;
    return s_todo("pvm_unexport");
}

/*  Not built yet: PvmNotImpl. */
int pvm_sendsig(int tid, int signum)
{
    (void)tid; (void)signum;
    return s_todo("pvm_sendsig");
}

/*  Not built yet: PvmNotImpl. */
int pvm_hostsync(int host, struct timeval *clk, struct timeval *delta)
{
    (void)host; (void)clk; (void)delta;
    return s_todo("pvm_hostsync");
}

/*  Not built yet: PvmNotImpl. */
int pvm_archcode(char *arch)
{
    (void)arch;
    return s_todo("pvm_archcode");
}

/*  Not built yet: PvmNotImpl. */
int pvm_getfds(int **fds)
{
    (void)fds;
    return s_todo("pvm_getfds");
}

/*  Not built yet: PvmNotImpl. */
int pvm_halt(void)
{
    return s_todo("pvm_halt");
}

/*  Not built yet: PvmNotImpl. */
int pvm_start_pvmd(int argc, char **argv, int block)
{
    (void)argc; (void)argv; (void)block;
    return s_todo("pvm_start_pvmd");
}

/*  Not built yet: PvmNotImpl. */
int pvm_getnoresets(int **tids, int *ntids)
{
    (void)tids; (void)ntids;
    return s_todo("pvm_getnoresets");
}

/*  Not built yet: PvmNotImpl. */
int pvm_reg_rm(struct pvmhostinfo **hostp)
{
    (void)hostp;
    return s_todo("pvm_reg_rm");
}

/*  Not built yet: PvmNotImpl. */
int pvm_reg_hoster(void)
{
    return s_todo("pvm_reg_hoster");
}

/*  Not built yet: PvmNotImpl. */
int pvm_reg_tasker(void)
{
    return s_todo("pvm_reg_tasker");
}

/*  Not built yet: PvmNotImpl. */
int pvm_gettmask(int who, char *tmask)
{
    (void)who; (void)tmask;
    return s_todo("pvm_gettmask");
}

/*  Not built yet: PvmNotImpl. */
int pvm_settmask(int who, char *tmask)
{
    (void)who; (void)tmask;
    return s_todo("pvm_settmask");
}

/*  Not built yet: PvmNotImpl. */
int pvm_advise(int how)
{
    (void)how;
    return s_todo("pvm_advise");
}

/*  Not built yet: PvmNotImpl. */
int pvm_serror(int how)
{
    (void)how;
    return s_todo("pvm_serror");
}

/*  The PVM release this interface follows. */
char *pvm_version(void)
{
    return (char *)PVM_VER;     /* PVM's type; callers only read it */
}
