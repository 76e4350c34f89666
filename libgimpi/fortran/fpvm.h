/*  fpvm.h — PVM 3.4.6's Fortran binding (libfpvm3's calls) as libgimpi.so exports it: the
 *  external names gfortran gives the calls of a Fortran 77 program (lowercase with one
 *  trailing underscore: `call pvmfmytid(tid)` calls pvmfmytid_), every argument by
 *  reference, in PVM's order, and a CHARACTER argument's length passed by value (size_t)
 *  after all the others, in the order of the CHARACTER arguments.  Every call of PVM's
 *  libfpvm3 is here, plus the ones PVM's manual pages document that its libfpvm3 lacks
 *  (pvmfadvise, pvmfserror, pvmfgetminfo, pvmfsetminfo, pvmfpkmesg, pvmfpkmesgbody,
 *  pvmfupkmesg, and pvmftidtoh, the page's name of pvmftidtohost), and the four reduce
 *  functions a Fortran program names as EXTERNAL (PvmSum is pvmsum_).  Not an installed
 *  header: a Fortran program includes fpvm3.h for the constants and calls these by name.
 *  t/exports.sh reads this file for the names libgimpi.so may export beside include/'s.
 *
 *  Strings: an input string loses its trailing blanks (PVM's rule; a name of blanks only
 *  becomes ""), except pvmfperror's message, which PVM prints as given.  An output string
 *  (pvmfconfig's host and architecture, pvmftasks' program, pvmfgetmboxinfo's name) is
 *  blank-padded to its length, or cut to it.  The calls live in fpvm_task.c, fpvm_vm.c,
 *  fpvm_msg.c, fpvm_group.c and fpvm_opt.c; the string helpers in fpvm_str.c.
 */
#ifndef GIMPI_FPVM_H
#define GIMPI_FPVM_H

#include "gimpi_export.h"

#include <stddef.h>

/*  A Fortran reduce function as pvm_reduce calls it (PvmSum's signature). */
typedef void fpvm_reduce_fn(int *datatype, void *x, void *y, int *num, int *info);
/*  A message handler for pvmfaddmhf (called with the message id by value, as PVM). */
typedef int fpvm_mhf_fn(int mid);

/* ---- tasks (fpvm_task.c) ---- */
GIMPI_EXPORT void pvmfmytid_(int *tid);
GIMPI_EXPORT void pvmfparent_(int *tid);
GIMPI_EXPORT void pvmfexit_(int *info);
GIMPI_EXPORT void pvmfkill_(int *tid, int *info);
GIMPI_EXPORT void pvmfspawn_(char *aout, int *flag, char *where, int *ntask, int *tids,
                             int *numt, size_t aout_len, size_t where_len);
GIMPI_EXPORT void pvmfsiblings_(int *nsiblings, int *index, int *stid);
GIMPI_EXPORT void pvmfcatchout_(int *onoff, int *info);
GIMPI_EXPORT void pvmfpstat_(int *tid, int *status);
GIMPI_EXPORT void pvmftidtohost_(int *tid, int *dtid);
GIMPI_EXPORT void pvmftidtoh_(int *tid, int *dtid);
GIMPI_EXPORT void pvmfnotify_(int *what, int *msgtag, int *cnt, int *tids, int *info);
GIMPI_EXPORT void pvmfsendsig_(int *tid, int *signum, int *info);
GIMPI_EXPORT void pvmfsleep_(int *secs);

/* ---- the virtual machine (fpvm_vm.c) ---- */
GIMPI_EXPORT void pvmfconfig_(int *nhost, int *narch, int *dtid, char *name, char *arch,
                              int *speed, int *info, size_t name_len, size_t arch_len);
GIMPI_EXPORT void pvmftasks_(int *where, int *ntask, int *tid, int *ptid, int *dtid,
                             int *flag, char *aout, int *info, size_t aout_len);
GIMPI_EXPORT void pvmfaddhost_(char *host, int *info, size_t host_len);
GIMPI_EXPORT void pvmfdelhost_(char *host, int *info, size_t host_len);
GIMPI_EXPORT void pvmfmstat_(char *host, int *mstat, size_t host_len);
GIMPI_EXPORT void pvmfarchcode_(char *arch, int *code, size_t arch_len);
GIMPI_EXPORT void pvmfhalt_(int *info);
GIMPI_EXPORT void pvmfstartpvmd_(char *args, int *block, int *info, size_t args_len);
GIMPI_EXPORT void pvmfhostsync_(int *host, int *sec, int *usec, int *dsec, int *dusec,
                                int *info);
GIMPI_EXPORT void pvmfgetmboxinfo_(char *pattern, char *name, int *nclasses, int *nentries,
                                   int *index, int *owner, int *flags, int *info,
                                   size_t pattern_len, size_t name_len);

/* ---- buffers and messages (fpvm_msg.c) ---- */
GIMPI_EXPORT void pvmfinitsend_(int *encoding, int *bufid);
GIMPI_EXPORT void pvmfmkbuf_(int *encoding, int *bufid);
GIMPI_EXPORT void pvmffreebuf_(int *bufid, int *info);
GIMPI_EXPORT void pvmfgetsbuf_(int *bufid);
GIMPI_EXPORT void pvmfgetrbuf_(int *bufid);
GIMPI_EXPORT void pvmfsetsbuf_(int *bufid, int *oldbuf);
GIMPI_EXPORT void pvmfsetrbuf_(int *bufid, int *oldbuf);
GIMPI_EXPORT void pvmfbufinfo_(int *bufid, int *bytes, int *msgtag, int *tid, int *info);
GIMPI_EXPORT void pvmfpack_(int *what, void *xp, int *nitem, int *stride, int *info);
GIMPI_EXPORT void pvmfunpack_(int *what, void *xp, int *nitem, int *stride, int *info);
GIMPI_EXPORT void pvmfsend_(int *tid, int *msgtag, int *info);
GIMPI_EXPORT void pvmfmcast_(int *ntask, int *tids, int *msgtag, int *info);
GIMPI_EXPORT void pvmfrecv_(int *tid, int *msgtag, int *bufid);
GIMPI_EXPORT void pvmfnrecv_(int *tid, int *msgtag, int *bufid);
GIMPI_EXPORT void pvmfprobe_(int *tid, int *msgtag, int *bufid);
GIMPI_EXPORT void pvmftrecv_(int *tid, int *msgtag, int *sec, int *usec, int *bufid);
GIMPI_EXPORT void pvmfpsend_(int *tid, int *msgtag, void *buf, int *len, int *datatype,
                             int *info);
GIMPI_EXPORT void pvmfprecv_(int *tid, int *msgtag, void *buf, int *len, int *datatype,
                             int *atid, int *atag, int *alen, int *info);
GIMPI_EXPORT void pvmfgetminfo_(int *bufid, int *len, int *ctx, int *tag, int *wid,
                                int *enc, int *crc, int *src, int *dst, int *info);
GIMPI_EXPORT void pvmfsetminfo_(int *bufid, int *ctx, int *tag, int *wid, int *src,
                                int *dst, int *info);
GIMPI_EXPORT void pvmfpkmesg_(int *bufid, int *info);
GIMPI_EXPORT void pvmfpkmesgbody_(int *bufid, int *info);
GIMPI_EXPORT void pvmfupkmesg_(int *bufid, int *newbufid);

/* ---- groups and their collectives (fpvm_group.c) ---- */
GIMPI_EXPORT void pvmfjoingroup_(char *group, int *inum, size_t group_len);
GIMPI_EXPORT void pvmflvgroup_(char *group, int *info, size_t group_len);
GIMPI_EXPORT void pvmfgettid_(char *group, int *inum, int *tid, size_t group_len);
GIMPI_EXPORT void pvmfgetinst_(char *group, int *tid, int *inum, size_t group_len);
GIMPI_EXPORT void pvmfgsize_(char *group, int *size, size_t group_len);
GIMPI_EXPORT void pvmfbarrier_(char *group, int *count, int *info, size_t group_len);
GIMPI_EXPORT void pvmfbcast_(char *group, int *msgtag, int *info, size_t group_len);
GIMPI_EXPORT void pvmffreezegroup_(char *group, int *size, int *info, size_t group_len);
GIMPI_EXPORT void pvmfreduce_(fpvm_reduce_fn *func, void *data, int *count, int *datatype,
                              int *msgtag, char *group, int *rootinst, int *info,
                              size_t group_len);
GIMPI_EXPORT void pvmfgather_(void *result, void *data, int *count, int *datatype,
                              int *msgtag, char *group, int *rootinst, int *info,
                              size_t group_len);
GIMPI_EXPORT void pvmfscatter_(void *result, void *data, int *count, int *datatype,
                               int *msgtag, char *group, int *rootinst, int *info,
                               size_t group_len);
GIMPI_EXPORT void pvmsum_(int *datatype, void *x, void *y, int *num, int *info);
GIMPI_EXPORT void pvmmax_(int *datatype, void *x, void *y, int *num, int *info);
GIMPI_EXPORT void pvmmin_(int *datatype, void *x, void *y, int *num, int *info);
GIMPI_EXPORT void pvmproduct_(int *datatype, void *x, void *y, int *num, int *info);

/* ---- errors, options, contexts, handlers, the message box (fpvm_opt.c) ---- */
GIMPI_EXPORT void pvmfperror_(char *msg, int *info, size_t msg_len);
GIMPI_EXPORT void pvmfserror_(int *set, int *oldset);
GIMPI_EXPORT void pvmfsetopt_(int *what, int *val, int *oldval);
GIMPI_EXPORT void pvmfgetopt_(int *what, int *val);
GIMPI_EXPORT void pvmfadvise_(int *route, int *info);
GIMPI_EXPORT void pvmfnewcontext_(int *ctx);
GIMPI_EXPORT void pvmfsetcontext_(int *newctx, int *oldctx);
GIMPI_EXPORT void pvmffreecontext_(int *ctx, int *info);
GIMPI_EXPORT void pvmfgetcontext_(int *ctx);
GIMPI_EXPORT void pvmfaddmhf_(int *src, int *tag, int *ctx, int *unused, fpvm_mhf_fn *func,
                              int *info);
GIMPI_EXPORT void pvmfdelmhf_(int *mhid, int *info);
GIMPI_EXPORT void pvmfputinfo_(char *name, int *bufid, int *flags, int *index,
                               size_t name_len);
GIMPI_EXPORT void pvmfrecvinfo_(char *name, int *index, int *flags, int *bufid,
                                size_t name_len);
GIMPI_EXPORT void pvmfdelinfo_(char *name, int *index, int *flags, int *info,
                               size_t name_len);

#endif
