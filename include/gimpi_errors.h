/*  gimpi_errors.h — the error codes every gimpi call returns and their text.
 *
 *  Functions of libgimpi return 0 (or a positive value where documented) on success and a
 *  negative GIMPI_E* code on failure.  The numbers are PVM 3.4's error codes (pvm3.h's
 *  PvmBadParam, PvmSysErr, ...), so the native API and the PVM one speak the same values;
 *  gimpi_strerror gives PVM's wording for each.
 */
#ifndef GIMPI_ERRORS_H
#define GIMPI_ERRORS_H

#include "gimpi_export.h"

#ifdef __cplusplus
extern "C" {
#endif

/*  Error codes: the values of PVM 3.4's (pvm3.h), so both APIs speak the same numbers. */
enum {
    GIMPI_OK = 0,
    GIMPI_EBADPARAM = -2,       /* PvmBadParam */
    GIMPI_EMISMATCH = -3,       /* PvmMismatch */
    GIMPI_EOVERFLOW = -4,       /* PvmOverflow */
    GIMPI_ENODATA = -5,         /* PvmNoData */
    GIMPI_ENOHOST = -6,         /* PvmNoHost */
    GIMPI_ENOFILE = -7,         /* PvmNoFile */
    GIMPI_EDENIED = -8,         /* PvmDenied */
    GIMPI_ENOMEM = -10,         /* PvmNoMem */
    GIMPI_EBADMSG = -12,        /* PvmBadMsg */
    GIMPI_ESYSERR = -14,        /* PvmSysErr: daemon or peer unreachable */
    GIMPI_ENOBUF = -15,         /* PvmNoBuf */
    GIMPI_ENOSUCHBUF = -16,     /* PvmNoSuchBuf */
    GIMPI_ENULLGROUP = -17,     /* PvmNullGroup */
    GIMPI_EDUPGROUP = -18,      /* PvmDupGroup */
    GIMPI_ENOGROUP = -19,       /* PvmNoGroup */
    GIMPI_ENOTINGROUP = -20,    /* PvmNotInGroup */
    GIMPI_ENOINST = -21,        /* PvmNoInst */
    GIMPI_EHOSTFAIL = -22,      /* PvmHostFail */
    GIMPI_ENOPARENT = -23,      /* PvmNoParent */
    GIMPI_ENOTIMPL = -24,       /* PvmNotImpl */
    GIMPI_EDSYSERR = -25,       /* PvmDSysErr */
    GIMPI_EBADVERSION = -26,    /* PvmBadVersion */
    GIMPI_EOUTOFRES = -27,      /* PvmOutOfRes */
    GIMPI_EDUPHOST = -28,       /* PvmDupHost */
    GIMPI_ECANTSTART = -29,     /* PvmCantStart */
    GIMPI_EALREADY = -30,       /* PvmAlready */
    GIMPI_ENOTASK = -31,        /* PvmNoTask */
    GIMPI_ENOTFOUND = -32,      /* PvmNotFound */
    GIMPI_EEXISTS = -33,        /* PvmExists */
    GIMPI_EHOSTRNMSTR = -34,    /* PvmHostrNMstr */
    GIMPI_EPARENTNOTSET = -35,  /* PvmParentNotSet */
    GIMPI_EIPLOOPBACK = -36,    /* PvmIPLoopback */
};

/*  Text for an error code: PVM 3.4.6's pvm_perror wording ("No such group"; "Error 9" for
 *  the unused codes between 0 and -36, "Unknown Error" outside that range). */
GIMPI_EXPORT const char *gimpi_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
