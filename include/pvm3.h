/*  pvm3.h — gimpi's PVM 3.4 compatibility interface.
 *
 *  A PVM 3.4 program includes this header instead of PVM's and links libgimpi.  It
 *  declares the porting surface (doc/pvm-differences.md lists where we differ): the
 *  constants with the numeric values PVM programs were compiled with, and the task,
 *  message, buffer and group calls.  The prototypes stay compatible with old K&R callers:
 *  a user file that says `extern void PvmSum();` still compiles, because an unprototyped
 *  declaration is compatible with a prototype whose parameters are all pointers.
 */
#ifndef GIMPI_PVM3_H
#define GIMPI_PVM3_H

#include "gimpi_export.h"

#include <stdio.h>
#include <sys/time.h>

#ifdef __cplusplus
extern "C" {
#endif

/*  Release this interface follows. */
#define PVM_VER                 "3.4.6"
#define PVM_MAJOR_VERSION       3
#define PVM_MINOR_VERSION       4
#define PVM_PATCH_VERSION       6

/*  Message encodings (pvm_initsend, pvm_mkbuf). */
#define PvmDataDefault          0   /* portable: big-endian, 64-bit long */
#define PvmDataRaw              1   /* the sender's memory layout */
#define PvmDataInPlace          2   /* raw, copied from user memory at send time */
#define PvmDataFoo              PvmDataDefault
#define PvmDataTrace            4   /* PVM's tracing encoding; refused here */

/*  pvm_spawn flags. */
#define PvmTaskDefault          0
#define PvmTaskHost             1
#define PvmTaskArch             2
#define PvmTaskDebug            4
#define PvmTaskTrace            8
#define PvmMppFront             16
#define PvmHostCompl            32
#define PvmNoSpawnParent        64

/*  pvm_notify events. */
#define PvmTaskExit             1
#define PvmHostDelete           2
#define PvmHostAdd              3
#define PvmRouteAdd             4
#define PvmRouteDelete          5
#define PvmNotifyCancel         256

/*  pvm_setopt / pvm_getopt options and their values. */
#define PvmRoute                1
#define PvmDontRoute            1
#define PvmAllowDirect          2
#define PvmRouteDirect          3
#define PvmDebugMask            2
#define PvmAutoErr              3
#define PvmOutputTid            4
#define PvmOutputCode           5
#define PvmTraceTid             6
#define PvmTraceCode            7
#define PvmTraceBuffer          8
#define PvmTraceOptions         9
#define PvmTraceFull            1
#define PvmTraceTime            2
#define PvmTraceCount           3
#define PvmFragSize             10
#define PvmResvTids             11
#define PvmSelfOutputTid        12
#define PvmSelfOutputCode       13
#define PvmSelfTraceTid         14
#define PvmSelfTraceCode        15
#define PvmSelfTraceBuffer      16
#define PvmSelfTraceOptions     17
#define PvmShowTids             18
#define PvmPollType             19
#define PvmPollConstant         1
#define PvmPollSleep            2
#define PvmPollTime             20
#define PvmOutputContext        21
#define PvmTraceContext         22
#define PvmSelfOutputContext    23
#define PvmSelfTraceContext     24
#define PvmNoReset              25

/*  pvm_gettmask / pvm_settmask selectors. */
#define PvmTaskSelf             0
#define PvmTaskChild            1

/*  The message context every task starts in. */
#define PvmBaseContext          0

/*  Message box flags (pvm_putinfo, pvm_recvinfo, pvm_delinfo). */
#define PvmMboxDefault          0
#define PvmMboxPersistent       1
#define PvmMboxMultiInstance    2
#define PvmMboxOverWritable     4
#define PvmMboxFirstAvail       8
#define PvmMboxReadAndDelete    16
#define PvmMboxWaitForInfo      32
#define PvmMboxMaxFlag          512
#define PvmMboxDirectIndexShift 10
#define PvmMboxMaxDirectIndex   ((unsigned)1 << (31 - PvmMboxDirectIndexShift))
#define PvmMboxDirectIndexOf(_flags) \
    (((_flags) & ((PvmMboxMaxDirectIndex - 1) << PvmMboxDirectIndexShift)) \
     >> PvmMboxDirectIndexShift)
#define PvmMboxDirectIndex(_index) \
    (((unsigned)(_index) >= PvmMboxMaxDirectIndex) \
     ? (fprintf(stderr, "Mbox Direct Index Too Large: %d >= %d\n", (int)(_index), \
                (int)PvmMboxMaxDirectIndex), 0) \
     : ((_index) << PvmMboxDirectIndexShift))

/*  PVM's reserved mailbox class names (of PVM's pvm3.h; gimpi gives them no meaning), and
 *  its temporary-file-name helpers, with PVM's values (t/pvm_abi.sh compares them). */
#define PVMNORESETCLASS         "###_PVM_NO_RESET_###"
#define PVMHOSTERCLASS          "###_PVM_HOSTER_###"
#define PVMTASKERCLASS          "###_PVM_TASKER_###"
#define PVMTRACERCLASS          "###_PVM_TRACER_###"
#define PVMRMCLASS              "###_PVM_RM_###"
#define PVMTMPNAMFUN(x)         tmpnam(x)
#define PVMTMPNAMLEN            128     /* PVM: L_tmpnam when <stdio.h> came first; >= it */

/*  Error codes: every call returns one of these (< 0) on failure and sets pvm_errno. */
#define PvmOk                   0
#define PvmBadParam             -2
#define PvmMismatch             -3
#define PvmOverflow             -4
#define PvmNoData               -5
#define PvmNoHost               -6
#define PvmNoFile               -7
#define PvmDenied               -8
#define PvmNoMem                -10
#define PvmBadMsg               -12
#define PvmSysErr               -14
#define PvmNoBuf                -15
#define PvmNoSuchBuf            -16
#define PvmNullGroup            -17
#define PvmDupGroup             -18
#define PvmNoGroup              -19
#define PvmNotInGroup           -20
#define PvmNoInst               -21
#define PvmHostFail             -22
#define PvmNoParent             -23
#define PvmNotImpl              -24
#define PvmDSysErr              -25
#define PvmBadVersion           -26
#define PvmOutOfRes             -27
#define PvmDupHost              -28
#define PvmCantStart            -29
#define PvmAlready              -30
#define PvmNoTask               -31
#define PvmNotFound             -32
#define PvmExists               -33
#define PvmHostrNMstr           -34
#define PvmParentNotSet         -35
#define PvmIPLoopback           -36
#define PvmNoEntry              PvmNotFound
#define PvmDupEntry             PvmDenied

/*  Datatypes (pvm_psend, pvm_precv, pvm_reduce, pvm_gather, pvm_scatter). */
#define PVM_STR                 0
#define PVM_BYTE                1
#define PVM_SHORT               2
#define PVM_INT                 3
#define PVM_FLOAT               4
#define PVM_CPLX                5
#define PVM_DOUBLE              6
#define PVM_DCPLX               7
#define PVM_LONG                8
#define PVM_USHORT              9
#define PVM_UINT                10
#define PVM_ULONG               11

/*  The last error code a call returned (not reset by successful calls), and the debug
 *  mask (the same value as the PvmDebugMask option).  Real variables, as in libpvm. */
GIMPI_EXPORT extern int pvm_errno;
GIMPI_EXPORT extern int pvmdebmask;

/* ---- tasks and options ---- */
GIMPI_EXPORT int pvm_mytid(void);
GIMPI_EXPORT int pvm_parent(void);
GIMPI_EXPORT int pvm_siblings(int **tids);
GIMPI_EXPORT int pvm_exit(void);
GIMPI_EXPORT int pvm_spawn(char *file, char **argv, int flag, char *where, int ntask, int *tids);
GIMPI_EXPORT int pvm_kill(int tid);
/*  Children spawned from now on write their output to f in PVM's format (NULL: off). */
GIMPI_EXPORT int pvm_catchout(FILE *f);

/* ---- the virtual machine (doc/multihost.md) ---- */
struct pvmhostinfo {
    int hi_tid;                 /* the host's id */
    char *hi_name;
    char *hi_arch;
    int hi_speed;
    int hi_dsig;                /* data signature: the same for every host of an arch */
};
struct pvmtaskinfo {
    int ti_tid;
    int ti_ptid;                /* the spawner's tid, 0 for none */
    int ti_host;                /* its host's id (hi_tid) */
    int ti_flag;
    char *ti_a_out;             /* the program's name */
    int ti_pid;
};
GIMPI_EXPORT int pvm_config(int *nhost, int *narch, struct pvmhostinfo **hostp);
GIMPI_EXPORT int pvm_tasks(int where, int *ntask, struct pvmtaskinfo **taskp);
GIMPI_EXPORT int pvm_addhosts(char **hosts, int nhost, int *infos);
GIMPI_EXPORT int pvm_delhosts(char **hosts, int nhost, int *infos);
GIMPI_EXPORT int pvm_mstat(char *host);
GIMPI_EXPORT int pvm_pstat(int tid);
GIMPI_EXPORT int pvm_tidtohost(int tid);
GIMPI_EXPORT int pvm_notify(int what, int msgtag, int cnt, int *tids);
GIMPI_EXPORT int pvm_perror(char *msg);
/*  gimpi's addition: why the call that set pvm_errno failed, in words ("t40003 has
 *  exited", "groupd at ipc://... is gone"), or "" when unknown.  pvm_perror and the
 *  PvmAutoErr lines print it in parentheses after PVM's text.  Valid until the next call. */
GIMPI_EXPORT const char *pvm_errcause(void);
GIMPI_EXPORT int pvm_setopt(int what, int val);
GIMPI_EXPORT int pvm_getopt(int what);
GIMPI_EXPORT int pvmsleep(int secs);
GIMPI_EXPORT int pvmgetclock(struct timeval *tv);

/* ---- message buffers ---- */
GIMPI_EXPORT int pvm_mkbuf(int encoding);
GIMPI_EXPORT int pvm_freebuf(int bufid);
GIMPI_EXPORT int pvm_getsbuf(void);
GIMPI_EXPORT int pvm_getrbuf(void);
GIMPI_EXPORT int pvm_setsbuf(int bufid);
GIMPI_EXPORT int pvm_setrbuf(int bufid);
GIMPI_EXPORT int pvm_initsend(int encoding);
GIMPI_EXPORT int pvm_bufinfo(int bufid, int *bytes, int *msgtag, int *tid);

/* ---- packing (n elements, every stride-th) ---- */
GIMPI_EXPORT int pvm_pkbyte(char *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkcplx(float *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkdcplx(double *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkdouble(double *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkfloat(float *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkint(int *xp, int n, int stride);
GIMPI_EXPORT int pvm_pklong(long *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkshort(short *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkuint(unsigned int *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkulong(unsigned long *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkushort(unsigned short *xp, int n, int stride);
GIMPI_EXPORT int pvm_pkstr(char *s);

/* ---- unpacking ---- */
GIMPI_EXPORT int pvm_upkbyte(char *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkcplx(float *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkdcplx(double *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkdouble(double *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkfloat(float *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkint(int *xp, int n, int stride);
GIMPI_EXPORT int pvm_upklong(long *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkshort(short *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkuint(unsigned int *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkulong(unsigned long *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkushort(unsigned short *xp, int n, int stride);
GIMPI_EXPORT int pvm_upkstr(char *s);

/* ---- printf-like packing: "%+" (initsend, takes the encoding), then specs
 *      %[count|*][.stride|.*][h|l|u...](c|d|f|x|s); with a count or stride the argument
 *      is a pointer, otherwise a value (unpacking always takes pointers) ---- */
GIMPI_EXPORT int pvm_packf(const char *fmt, ...);
GIMPI_EXPORT int pvm_unpackf(const char *fmt, ...);

/* ---- point-to-point messages (tid and tag -1 are wildcards when receiving) ---- */
GIMPI_EXPORT int pvm_send(int tid, int msgtag);
GIMPI_EXPORT int pvm_mcast(int *tids, int ntask, int msgtag);
GIMPI_EXPORT int pvm_recv(int tid, int msgtag);
GIMPI_EXPORT int pvm_nrecv(int tid, int msgtag);
GIMPI_EXPORT int pvm_trecv(int tid, int msgtag, struct timeval *tmout);
GIMPI_EXPORT int pvm_probe(int tid, int msgtag);
GIMPI_EXPORT int pvm_psend(int tid, int msgtag, void *buf, int len, int datatype);
GIMPI_EXPORT
int pvm_precv(int tid, int msgtag, void *buf, int len, int datatype,
              int *rtid, int *rtag, int *rlen);

/* ---- dynamic groups ---- */
GIMPI_EXPORT int pvm_joingroup(char *group);
GIMPI_EXPORT int pvm_lvgroup(char *group);
GIMPI_EXPORT int pvm_gettid(char *group, int inum);
GIMPI_EXPORT int pvm_getinst(char *group, int tid);
GIMPI_EXPORT int pvm_gsize(char *group);
GIMPI_EXPORT int pvm_barrier(char *group, int count);
GIMPI_EXPORT int pvm_bcast(char *group, int msgtag);
GIMPI_EXPORT int pvm_freezegroup(char *group, int size);
GIMPI_EXPORT
int pvm_reduce(void (*func)(int *datatype, void *x, void *y, int *num, int *info),
               void *data, int count, int datatype, int msgtag, char *group, int rootginst);
GIMPI_EXPORT
int pvm_gather(void *result, void *data, int count, int datatype, int msgtag,
               char *group, int rootginst);
GIMPI_EXPORT
int pvm_scatter(void *result, void *data, int count, int datatype, int msgtag,
                char *group, int rootginst);

/*  Predefined reduce functions: x[i] = x[i] op y[i] for *num elements of *datatype;
 *  *info < 0 on a bad datatype.  All parameters are pointers, so K&R redeclarations
 *  (`extern void PvmSum();`) remain compatible. */
GIMPI_EXPORT void PvmMax(int *datatype, void *x, void *y, int *num, int *info);
GIMPI_EXPORT void PvmMin(int *datatype, void *x, void *y, int *num, int *info);
GIMPI_EXPORT void PvmSum(int *datatype, void *x, void *y, int *num, int *info);
GIMPI_EXPORT void PvmProduct(int *datatype, void *x, void *y, int *num, int *info);

/* ---- message information (pvm_getminfo, pvm_setminfo): PVM's layout ---- */
struct pvmminfo {
    int len;                    /* message length in bytes */
    int ctx;                    /* context */
    int tag;
    int wid;                    /* wait id */
    int enc;                    /* encoding */
    int crc;                    /* checksum (0: none) */
    int src;                    /* source tid */
    int dst;                    /* destination tid */
};
GIMPI_EXPORT int pvm_getminfo(int bufid, struct pvmminfo *info);
GIMPI_EXPORT int pvm_setminfo(int bufid, struct pvmminfo *info);
GIMPI_EXPORT int pvm_pkmesg(int bufid);
GIMPI_EXPORT int pvm_pkmesgbody(int bufid);
GIMPI_EXPORT int pvm_upkmesg(void);
/*  Replaces the receive matching function; returns the previous one (PVM's default when
 *  none was set).  A function gets (bufid, tid, tag) and returns < 0 (error), 0 (no
 *  match), 1 (a match) or > 1 (a better match: the first best is taken). */
GIMPI_EXPORT int (*pvm_recvf(int (*newmatch)(int, int, int)))(int, int, int);

/* ---- the message box (held by groupd for the whole virtual machine) ---- */
struct pvmmboxinfo {
    char *mi_name;              /* class name */
    int mi_nentries;            /* entries of the class */
    int *mi_indices;
    int *mi_owners;             /* owner tids */
    int *mi_flags;
};
GIMPI_EXPORT int pvm_putinfo(char *name, int bufid, int flags);
GIMPI_EXPORT int pvm_recvinfo(char *name, int index, int flags);
GIMPI_EXPORT int pvm_delinfo(char *name, int index, int flags);
GIMPI_EXPORT int pvm_getmboxinfo(char *pattern, int *nclasses, struct pvmmboxinfo **classes);
/*  PVM 3.3's names, built on the message box. */
GIMPI_EXPORT int pvm_insert(char *name, int req, int data);
GIMPI_EXPORT int pvm_lookup(char *name, int req, int *datap);
GIMPI_EXPORT int pvm_delete(char *name, int req);

/* ---- message contexts ---- */
GIMPI_EXPORT int pvm_newcontext(void);
GIMPI_EXPORT int pvm_setcontext(int newctx);
GIMPI_EXPORT int pvm_getcontext(void);
GIMPI_EXPORT int pvm_freecontext(int ctx);

/* ---- message handlers ---- */
GIMPI_EXPORT int pvm_addmhf(int src, int tag, int ctx, int (*func)(int mid));
GIMPI_EXPORT int pvm_delmhf(int mhid);

/* ---- the environment, signals, clocks, descriptors, the virtual machine ---- */
GIMPI_EXPORT int pvm_export(char *name);
GIMPI_EXPORT int pvm_unexport(char *name);
GIMPI_EXPORT int pvm_sendsig(int tid, int signum);
GIMPI_EXPORT int pvm_hostsync(int host, struct timeval *clk, struct timeval *delta);
GIMPI_EXPORT int pvm_archcode(char *arch);
GIMPI_EXPORT int pvm_getfds(int **fds);
GIMPI_EXPORT int pvm_halt(void);
GIMPI_EXPORT int pvm_start_pvmd(int argc, char **argv, int block);
GIMPI_EXPORT char *pvm_version(void);
GIMPI_EXPORT int pvm_getnoresets(int **tids, int *ntids);

/* ---- libpvm's own names that PVM programs call: its error report (pvm_errno = code,
 *      then as PvmAutoErr says), its handler table on stdout, the text of pvm_errno, and
 *      two pvmd calls gimpi answers PvmNotImpl ---- */
#ifdef __cplusplus
GIMPI_EXPORT int lpvmerr(char *f, int code);
#else
/*  Unprototyped, as libpvm's own K&R definition: PVM's examples call it printf-like. */
GIMPI_EXPORT int lpvmerr();
#endif
GIMPI_EXPORT void pvmdisplaymhfinfo(char *who, char *msg, int tid);
GIMPI_EXPORT char *pvm_strerror(void);
GIMPI_EXPORT int pvm_tickle(int narg, int *argp, int *nresp, int *resp);
GIMPI_EXPORT int pvm_reg_tracer(int tctx, int ttag, int octx, int otag, char *tmask, int tbuf,
                                int topt);

/* ---- resource manager, hoster and tasker registration ---- */
GIMPI_EXPORT int pvm_reg_rm(struct pvmhostinfo **hostp);
GIMPI_EXPORT int pvm_reg_hoster(void);
GIMPI_EXPORT int pvm_reg_tasker(void);

/* ---- tracing masks (pvmtev.h's Pvmtmask is a char array) ---- */
GIMPI_EXPORT int pvm_gettmask(int who, char *tmask);
GIMPI_EXPORT int pvm_settmask(int who, char *tmask);

/* ---- PVM 3.3 calls kept by 3.4's library ---- */
GIMPI_EXPORT int pvm_advise(int how);
GIMPI_EXPORT int pvm_serror(int how);
GIMPI_EXPORT int pvm_getmwid(int bufid);
GIMPI_EXPORT int pvm_setmwid(int bufid, int waitid);

#ifdef __cplusplus
}
#endif
#endif
