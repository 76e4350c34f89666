/*  pvm_abi.c — the code of PVM's ABI libraries, libpvm3.so.3, libgpvm3.so.3 and
 *  libfpvm3.so.3, installed in $(libdir)/gimpi/pvm3 (never part of libgimpi.so).  Each is
 *  a small shared object with PVM's soname and a DT_NEEDED on libgimpi.so.0, so that an
 *  existing PVM binary run with that folder first on LD_LIBRARY_PATH (gimpirun -pvm-abi)
 *  gets every pvm_* and Pvm* call from libgimpi.  Built with PVM_ABI_LIBPVM3, this file
 *  also holds the few names of libpvm3's own that Debian's PVM binaries reference and that
 *  libgimpi, which exports only what its headers declare, does not have: pvmnametag,
 *  pvmmyctx and pvmctrc (srm.pvm), and PVM's error table pvm_errlist / pvm_nerr with
 *  PVM's types and sizes (a binary's copy relocation takes the size from here).  The
 *  other undocumented names binaries call (lpvmerr, pvmdisplaymhfinfo, pvm_strerror ...)
 *  are libgimpi's (pvm_libpvm.c), so that source builds link too.  The variables are
 *  PVM's own globals: the documented exception to "no global state" (pvm_err.c).
 *  t/pvm_abi.sh checks every name and size against Debian's libpvm3.
 */
#include "pvm3.h"

#ifdef PVM_ABI_LIBPVM3
#include <stdio.h>
#include <stdlib.h>

/*  PVM's texts by -code, static data so that a copy relocation copies them (the test
 *  checks them against gimpi_strerror and Debian's libpvm3). */
char *pvm_errlist[] = {
    "Error 0", "Error 1", "Bad parameter", "Parameter mismatch", "Value too large",
    "End of buffer", "No such host", "No such file", "Permission denied", "Error 9",
    "Malloc failed", "Error 11", "Can't decode message", "Error 13",
    "Can't contact local daemon", "No current buffer", "No such buffer", "Null group name",
    "Already in group", "No such group", "Not in group", "No such instance", "Host failed",
    "No parent task", "Not implemented", "Pvmd system error", "Version mismatch",
    "Out of resources", "Duplicate host", "Can't start pvmd", "Already in progress",
    "No such task", "Not Found", "Already Exists", "Hoster must run on master host",
    "Spawning parent set PvmNoParent",
    "Master Host IP Address is Loopback! (See pvm3/Readme)",
};

/*  The number of entries of pvm_errlist (PVM: 37). */
int pvm_nerr = (int)(sizeof pvm_errlist / sizeof pvm_errlist[0]);

/*  libpvm's context variable; gimpi's context lives in libgimpi (pvm_getcontext), this
 *  one only has PVM's type and stays 0 (the base context). */
int pvmmyctx = 0;

/*  libpvm's tracer record (struct Pvmtracer of pvmtev.h: eight ints and a 36-byte
 *  mask, 68 bytes); gimpi has no tracer, so it stays zero. */
struct pvm_abi_tracer {
    int trctid, trcctx, trctag, outtid, outctx, outtag, trcbuf, trcopt;
    char tmask[36];
};
struct pvm_abi_tracer pvmctrc;

char *pvmnametag(int tag, int *found);

/*  libpvm's name of a system message tag (for tracing): gimpi has no such tags. */
char *pvmnametag(int tag, int *found)
{
    (void)tag;
    if (found)
        *found = 0;
    return "";
}

#else
/*  libgpvm3.so.3 and libfpvm3.so.3: their calls are all in libgimpi. */
static const char s_what[] __attribute__((used)) = "PVM ABI library of gimpi";
#endif
