/*  fpvm_opt.c — the rest of the Fortran binding (fpvm.h): errors (pvmfperror,
 *  pvmfserror), options (pvmfsetopt, pvmfgetopt, pvmfadvise), message contexts
 *  (pvmfnewcontext, pvmfsetcontext, pvmffreecontext, pvmfgetcontext), message handlers
 *  (pvmfaddmhf, pvmfdelmhf) and the message box's entries (pvmfputinfo, pvmfrecvinfo,
 *  pvmfdelinfo; pvmfgetmboxinfo is in fpvm_vm.c).
 */
#include "fortran/fpvm.h"
#include "fortran/fpvm_str.h"
#include "pvm3.h"

#include <stdlib.h>

/*  Prints msg (as given, trailing blanks included, as PVM's) and the last error. */
void pvmfperror_(char *msg, int *info, size_t msg_len)
{
    char *m = fpvm_str_raw(msg, msg_len);
    *info = m ? pvm_perror(m) : fpvm_fail("pvmfperror", PvmNoMem);
    free(m);
}

/*  Turns the automatic error check on (1) or off (0); oldset the previous setting. */
void pvmfserror_(int *set, int *oldset)
{
    *oldset = pvm_serror(*set);
}

/*  Sets option what to val; oldval the previous value. */
void pvmfsetopt_(int *what, int *val, int *oldval)
{
    *oldval = pvm_setopt(*what, *val);
}

/*  The value of option what. */
void pvmfgetopt_(int *what, int *val)
{
    *val = pvm_getopt(*what);
}

/*  PVM 3.3's routing advice. */
void pvmfadvise_(int *route, int *info)
{
    *info = pvm_advise(*route);
}

/*  A new message context. */
void pvmfnewcontext_(int *ctx)
{
    *ctx = pvm_newcontext();
}

/*  Makes newctx the current context; oldctx the previous one. */
void pvmfsetcontext_(int *newctx, int *oldctx)
{
    *oldctx = pvm_setcontext(*newctx);
}

/*  Frees a context. */
void pvmffreecontext_(int *ctx, int *info)
{
    *info = pvm_freecontext(*ctx);
}

/*  The current context. */
void pvmfgetcontext_(int *ctx)
{
    *ctx = pvm_getcontext();
}

/*  Installs func as the handler of the messages matching src, tag and ctx; info its id.
 *  As PVM's: the fourth argument is not used, and func is called with the message id by
 *  value (in Fortran: INTEGER FUNCTION f(mid) with INTEGER, VALUE :: mid). */
void pvmfaddmhf_(int *src, int *tag, int *ctx, int *unused, fpvm_mhf_fn *func, int *info)
{
    (void)unused;
    *info = pvm_addmhf(*src, *tag, *ctx, func);
}

/*  Removes handler mhid. */
void pvmfdelmhf_(int *mhid, int *info)
{
    *info = pvm_delmhf(*mhid);
}

/*  Calls the message-box call `what` (0 put, 1 recv, 2 del) on the Fortran name. */
static int s_mbox(int what, char *name, size_t len, int a, int b)
{
    static const char *const fn[] = { "pvmfputinfo", "pvmfrecvinfo", "pvmfdelinfo" };
    char *n = fpvm_str_in(name, len);
    if (!n)
        return fpvm_fail(fn[what], PvmNoMem);
    int rc = what == 0 ? pvm_putinfo(n, a, b) : what == 1 ? pvm_recvinfo(n, a, b)
                                                           : pvm_delinfo(n, a, b);
    free(n);
    return rc;
}

/*  Stores buffer bufid under name with flags; index the entry's index or an error. */
void pvmfputinfo_(char *name, int *bufid, int *flags, int *index, size_t name_len)
{
    *index = s_mbox(0, name, name_len, *bufid, *flags);
}

/*  The entry index of name as a new buffer (bufid), as flags say. */
void pvmfrecvinfo_(char *name, int *index, int *flags, int *bufid, size_t name_len)
{
    *bufid = s_mbox(1, name, name_len, *index, *flags);
}

/*  Deletes the entry index of name. */
void pvmfdelinfo_(char *name, int *index, int *flags, int *info, size_t name_len)
{
    *info = s_mbox(2, name, name_len, *index, *flags);
}
