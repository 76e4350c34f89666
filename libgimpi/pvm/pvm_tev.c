/*  pvm_tev.c — PVM's tracing and gimpi's recorder behind the calls' hooks (pvm_tev.h).
 *
 *  The state lives in the context (pvm_ctx_set_tev): the task's own tracer and the one
 *  its children get (PVM's pvmtrc and pvmctrc: tid, context, code, buffering, options,
 *  mask), which trace descriptors were sent, the trace message being gathered and the
 *  recorder.  A tracer gets, for each top-level call its mask selects, an entry and an
 *  exit event as PVM 3.4 packs them (PvmDataDefault ints and strings): a marker, the
 *  event number or'd with TEV_EVENT_ENTRY/EXIT, the time (seconds, microseconds) and the
 *  task's tid, then the call's strings and ints under PVM's data ids; the first time each of
 *  them goes out, as a descriptor (TEV_MARK_EVENT_DESC, the event's name, each field
 *  with its id and type), later as a bare record.  With PvmTraceBuffer > 0, events are
 *  gathered between TEV_MARK_EVENT_BUFFER markers until that many bytes wait.  Only
 *  PvmTraceFull sends anything (PVM's PvmTraceTime and PvmTraceCount summaries are not
 *  built; as in PVM, option 0 sends nothing).  The buffer addresses PVM records and its
 *  arrays (host lists, tid lists) are left out: the format describes what is there.
 */
#include "pvm3.h"
#include "pvm/pvm_tev.h"
#include "base/gimpi_trace.h"
#include "base/gimpi_tunables.h"
#include "coll/coll_trace.h"
#include "gimpi_ops.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

enum { MAXIN = 8, MAXOUT = 5, DESC_ENTRY = 1, DESC_EXIT = 2 };

/*  What PVM records for an event: its call's name ("pvm_" and PVM's name of the event)
 *  and the data ids of its fields: the strings
 *  of the entry (they come first), its ints, the ints of the exit. */
typedef struct {
    const char *name;
    int ns;
    int sdid[2];
    int nin;
    int in[MAXIN];
    int nout;
    int out[MAXOUT];
} tevinfo_t;

#define D(x) TEV_DID_##x
static const tevinfo_t s_info[TEV_MAX + 1] = {
    { "pvm_addhosts", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_barrier", 1, { D(GN) }, 1, { D(GBC) }, 1, { D(CC) } },
    { "pvm_bcast", 1, { D(GN) }, 1, { D(MC) }, 1, { D(CC) } },
    { "pvm_bufinfo", 0, { 0 }, 1, { D(MB) }, 4, { D(CC), D(INB), D(IMC), D(IST) } },
    { "pvm_config", 0, { 0 }, 0, { 0 }, 3, { D(NH), D(NA), D(CC) } },
    { "pvm_delete", 1, { D(CN) }, 1, { D(CI) }, 1, { D(CC) } },
    { "pvm_delhosts", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_exit", 0, { 0 }, 0, { 0 }, 0, { 0 } },
    { "pvm_freebuf", 0, { 0 }, 1, { D(MB) }, 1, { D(CC) } },
    { "pvm_getfds", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_getinst", 1, { D(GN) }, 1, { D(GT) }, 1, { D(GI) } },
    { "pvm_getopt", 0, { 0 }, 1, { D(OPT) }, 1, { D(OPV) } },
    { "pvm_getrbuf", 0, { 0 }, 0, { 0 }, 1, { D(MRB) } },
    { "pvm_getsbuf", 0, { 0 }, 0, { 0 }, 1, { D(MSB) } },
    { "pvm_gettid", 1, { D(GN) }, 1, { D(GI) }, 1, { D(GT) } },
    { "pvm_gsize", 1, { D(GN) }, 0, { 0 }, 1, { D(GS) } },
    { "pvm_halt", 0, { 0 }, 0, { 0 }, 0, { 0 } },
    { "pvm_initsend", 0, { 0 }, 1, { D(ME) }, 1, { D(MSB) } },
    { "pvm_insert", 1, { D(CN) }, 2, { D(CI), D(CD) }, 1, { D(CC) } },
    { "pvm_joingroup", 1, { D(GN) }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_kill", 0, { 0 }, 1, { D(TT) }, 1, { D(CC) } },
    { "pvm_lookup", 1, { D(CN) }, 1, { D(CI) }, 1, { D(CC) } },
    { "pvm_lvgroup", 1, { D(GN) }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_mcast", 0, { 0 }, 3, { D(MNB), D(MC), D(MCX) }, 1, { D(CC) } },
    { "pvm_mkbuf", 0, { 0 }, 1, { D(ME) }, 1, { D(MB) } },
    { "pvm_mstat", 1, { D(HN) }, 0, { 0 }, 1, { D(HS) } },
    { "pvm_mytid", 0, { 0 }, 0, { 0 }, 1, { D(MT) } },
    { "pvm_notify", 0, { 0 }, 2, { D(NE), D(NMC) }, 1, { D(CC) } },
    { "pvm_nrecv", 0, { 0 }, 3, { D(RST), D(RMC), D(RCX) }, 5,
      { D(MB), D(MNB), D(MC), D(MCX), D(SRC) } },
    { "pvm_parent", 0, { 0 }, 0, { 0 }, 1, { D(PT) } },
    { "pvm_perror", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_pkbyte", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkcplx", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkdcplx", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkdouble", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkfloat", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkint", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkuint", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pklong", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkulong", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkshort", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkushort", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_pkstr", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_probe", 0, { 0 }, 3, { D(RST), D(RMC), D(RCX) }, 1, { D(CC) } },
    { "pvm_pstat", 0, { 0 }, 1, { D(TT) }, 1, { D(TST) } },
    { "pvm_recv", 0, { 0 }, 3, { D(RST), D(RMC), D(RCX) }, 5,
      { D(MB), D(MNB), D(MC), D(MCX), D(SRC) } },
    { "pvm_recvf", 0, { 0 }, 0, { 0 }, 0, { 0 } },
    { "pvm_send", 0, { 0 }, 4, { D(MNB), D(DST), D(MC), D(MCX) }, 1, { D(CC) } },
    { "pvm_sendsig", 0, { 0 }, 2, { D(TT), D(SN) }, 1, { D(CC) } },
    { "pvm_setopt", 0, { 0 }, 2, { D(OPT), D(OPV) }, 1, { D(OPV) } },
    { "pvm_setrbuf", 0, { 0 }, 1, { D(MB) }, 1, { D(MRB) } },
    { "pvm_setsbuf", 0, { 0 }, 1, { D(MB) }, 1, { D(MSB) } },
    { "pvm_spawn", 2, { D(SE), D(SW) }, 2, { D(SF), D(SC) }, 1, { D(CC) } },
    { "pvm_start_pvmd", 0, { 0 }, 1, { D(BF) }, 1, { D(CC) } },
    { "pvm_tasks", 0, { 0 }, 1, { D(TW) }, 2, { D(CC), D(TNT) } },
    { "pvm_tickle", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_tidtohost", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_trecv", 0, { 0 }, 5, { D(RST), D(RMC), D(RCX), D(MTS), D(MTU) }, 5,
      { D(MB), D(MNB), D(MC), D(MCX), D(SRC) } },
    { "pvm_upkbyte", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkcplx", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkdcplx", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkdouble", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkfloat", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkint", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkuint", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upklong", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkulong", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkshort", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkushort", 0, { 0 }, 2, { D(PC), D(PSD) }, 1, { D(CC) } },
    { "pvm_upkstr", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_version", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_reg_hoster", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_reg_rm", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_reg_tasker", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_reg_tracer", 1, { D(TRM) }, 6, { D(TRC), D(TRT), D(TRX), D(TRO), D(TRB), D(TRL) }, 1,
      { D(CC) } },
    { "pvm_newtask", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_endtask", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_spntask", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_archcode", 1, { D(AN) }, 0, { 0 }, 1, { D(AC) } },
    { "pvm_catchout", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_getmwid", 0, { 0 }, 1, { D(MB) }, 1, { D(WID) } },
    { "pvm_gettmask", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_hostsync", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_packf", 1, { D(PF) }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_precv", 0, { 0 }, 5, { D(RST), D(RMC), D(RCX), D(PC), D(PDT) }, 5,
      { D(CC), D(MNB), D(MC), D(MCX), D(SRC) } },
    { "pvm_psend", 0, { 0 }, 5, { D(DST), D(MC), D(MCX), D(PC), D(PDT) }, 1, { D(CC) } },
    { "pvm_reduce", 1, { D(GN) }, 1, { D(MC) }, 1, { D(CC) } },
    { "pvm_setmwid", 0, { 0 }, 2, { D(MB), D(WID) }, 1, { D(CC) } },
    { "pvm_settmask", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_unpackf", 1, { D(PF) }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_gather", 1, { D(GN) }, 1, { D(MC) }, 1, { D(CC) } },
    { "pvm_scatter", 1, { D(GN) }, 1, { D(MC) }, 1, { D(CC) } },
    { "pvm_putinfo", 1, { D(CN) }, 3, { D(CI), D(CF), D(CD) }, 1, { D(CC) } },
    { "pvm_getinfo", 1, { D(CN) }, 2, { D(CI), D(CF) }, 2, { D(CC), D(CR) } },
    { "pvm_delinfo", 1, { D(CN) }, 2, { D(CI), D(CF) }, 1, { D(CC) } },
    { "pvm_getmboxinfo", 1, { D(CN) }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_newcontext", 0, { 0 }, 0, { 0 }, 1, { D(CXN) } },
    { "pvm_freecontext", 0, { 0 }, 1, { D(CXF) }, 1, { D(CC) } },
    { "pvm_setcontext", 0, { 0 }, 1, { D(CXS) }, 1, { D(CC) } },
    { "pvm_getcontext", 0, { 0 }, 0, { 0 }, 1, { D(CXC) } },
    { "pvm_siblings", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_getminfo", 0, { 0 }, 1, { D(MB) }, 1, { D(CC) } },
    { "pvm_setminfo", 0, { 0 }, 1, { D(MB) }, 1, { D(CC) } },
    { "pvm_addmhf", 0, { 0 }, 3, { D(RST), D(RMC), D(RCX) }, 1, { D(MHI) } },
    { "pvm_delmhf", 0, { 0 }, 1, { D(MHI) }, 1, { D(CC) } },
    { "pvm_mhf_invoke", 0, { 0 },
      8, { D(RST), D(RMC), D(RCX), D(MB), D(MNB), D(MC), D(MCX), D(SRC) }, 0, { 0 } },
    { "pvm_timing", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_profiling", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
    { "pvm_user_defined", 0, { 0 }, 0, { 0 }, 1, { D(CC) } },
};
#undef D

/*  A task's trace state (one per context). */
typedef struct {
    struct Pvmtracer self;      /* this task's tracer and mask */
    struct Pvmtracer child;     /* what pvm_spawn hands its children */
    uint8_t desc[TEV_MAX + 1];  /* DESC_ENTRY | DESC_EXIT: descriptor already sent */
    pvm_buf_t *msg;             /* the trace message being gathered, or NULL */
    gimpi_trace_t *rec;         /* GIMPI_TRACE's recorder, or NULL */
    int coll_told;              /* the transport's collectives record into rec too */
    int anymask;                /* self.tmask selects at least one event */
    int lookup;                 /* no tracer inherited: look for a registered one */
    struct {                    /* the first call, held while it enrols (lookup) */
        int kind;               /* -1: none */
        const char *s[2];       /* the caller's strings (alive until the call returns) */
        int args[MAXIN];
        int n;
    } held;
    struct {                    /* a bcast's group, for its SEND records (pvm_tev_members) */
        char name[256];         /* the group (a longer name is not kept) */
        uint64_t version;
        uint64_t gen;           /* the groups cache's generation of that answer (0: none) */
        int *tids;              /* tid per instance, 0: free */
        int n;
    } members;
} tev_t;

/*  1 when mask m selects at least one event. */
static int s_any(const char *m)
{
    for (int i = 0; i < TEV_MASK_LENGTH - 1 && m[i]; i++)
        if (m[i] & 0xf)
            return 1;
    return 0;
}

/*  Arms the context when a call may be traced or recorded. */
static void s_arm(pvm_ctx_t *ctx, const tev_t *t)
{
    int tid = pvm_ctx_tid(ctx);
    pvm_ctx_set_rec(ctx, t->rec);
    int calls = t->rec || (t->self.trctid > 0 && t->self.trctid != tid && t->anymask)
        || (t->lookup && !tid);
    PVM_CTX_TEV(ctx) = (PVM_CTX_TEV(ctx) & ~PVM_CTX_TEV_CALLS) | (calls ? PVM_CTX_TEV_CALLS : 0);
}

/*  Frees the state (the context's destroy). */
static void s_destroy(void *arg)
{
    tev_t *t = arg;
    if (!t)
        return;
    pvm_buf_destroy(&t->msg);
    gimpi_trace_destroy(&t->rec);
    free(t->members.tids);
    free(t);
}

/*  A mask from text v (PVM's: exactly TEV_MASK_LENGTH - 1 characters, else empty). */
static void s_mask_from(char *m, const char *v)
{
    if (v && strlen(v) + 1 == TEV_MASK_LENGTH)
        memcpy(m, v, TEV_MASK_LENGTH);
    else
        TEV_MASK_INIT(m);
}

/*  The recorder, when GIMPI_TRACE names a folder: its ring GIMPI_TRACE_BUFFER bytes, else
 *  the PvmTraceBuffer the parent set for its children (trcbuf, when > 0), else 1 MiB. */
static gimpi_trace_t *s_recorder(int trcbuf)
{
    const char *dir = gimpi_env("GIMPI_TRACE");
    if (!dir || !*dir)
        return NULL;
    const char *b = gimpi_env("GIMPI_TRACE_BUFFER");
    long long size = b && *b ? strtoll(b, NULL, 10) : trcbuf;
    gimpi_trace_t *rec = gimpi_trace_new(dir, size > 0 ? (size_t)size : 0);
    char exe[4096];
    ssize_t n = rec ? readlink("/proc/self/exe", exe, sizeof exe - 1) : -1;
    if (n > 0) {
        exe[n] = 0;
        gimpi_trace_set_task(rec, 0, exe);     /* its basename */
    }
    return rec;
}

/*  Reads the task's settings. */
void pvm_tev_init(pvm_ctx_t *ctx)
{
    if (!ctx || pvm_ctx_tev(ctx))
        return;
    tev_t *t = calloc(1, sizeof *t);
    if (!t)
        return;
    s_mask_from(t->self.tmask, gimpi_env("PVMTMASK"));
    const char *v = gimpi_env("GIMPI_PVMTRACER");
    if (v && *v)
        sscanf(v, "%d,%d,%d,%d,%d", &t->self.trctid, &t->self.trcctx, &t->self.trctag,
               &t->self.trcbuf, &t->self.trcopt);
    t->child = t->self;
    t->anymask = s_any(t->self.tmask);
    t->lookup = t->self.trctid == 0;
    t->held.kind = -1;
    t->rec = s_recorder(t->self.trcbuf);
    pvm_ctx_set_tev(ctx, t, s_destroy);
    s_arm(ctx, t);
}

/*  Moves the state to a fresh context. */
void pvm_tev_move(pvm_ctx_t *from, pvm_ctx_t *to)
{
    tev_t *t = pvm_ctx_tev(from);
    if (!t)
        return;
    tev_t *old = pvm_ctx_tev(to);
    s_destroy(old);
    pvm_ctx_set_tev(from, NULL, NULL);
    pvm_ctx_set_rec(from, NULL);
    PVM_CTX_TEV(from) = 0;
    t->coll_told = 0;                   /* a new enrolment, new collectives */
    pvm_ctx_set_tev(to, t, s_destroy);
    s_arm(to, t);
}

/*  Sends the gathered trace message to the tracer. */
static void s_send(pvm_ctx_t *ctx, tev_t *t)
{
    if (!t->msg)
        return;
    if (t->self.trcbuf > 0) {
        int end = TEV_MARK_EVENT_BUFFER_END;
        pvm_buf_pack(t->msg, PVM_INT, &end, 1, 1);
    }
    int id = pvm_ctx_add_buf(ctx, t->msg, 0, 0, 0);
    t->msg = NULL;
    if (id > 0) {
        pvm_ctx_send(ctx, id, t->self.trctid, t->self.trctag, t->self.trcctx);
        pvm_ctx_free_buf(ctx, id);
    }
}

/*  Packs one int field (with its id and type in a descriptor). */
static void s_field(pvm_buf_t *b, int desc, int did, int v)
{
    if (desc) {
        int h[2] = { did, TEV_DATA_INT | TEV_DATA_SCALAR };
        pvm_buf_pack(b, PVM_INT, h, 2, 1);
    }
    pvm_buf_pack(b, PVM_INT, &v, 1, 1);
}

/*  Packs one string field (PVM's way: its length with the NUL, then its bytes). */
static void s_sfield(pvm_buf_t *b, int desc, int did, const char *v)
{
    if (desc) {
        int h[2] = { did, TEV_DATA_STRING | TEV_DATA_SCALAR };
        pvm_buf_pack(b, PVM_INT, h, 2, 1);
    }
    pvm_buf_pack_str(b, v ? v : "");
}

/*  Packs and (as PvmTraceBuffer says) sends one event to the tracer: ee is
 *  TEV_EVENT_ENTRY or TEV_EVENT_EXIT; an entry's strings (strs, NULL: none) go first,
 *  then the n values under the data ids dids. */
static void s_event(pvm_ctx_t *ctx, tev_t *t, int kind, int ee, const char *const *strs,
                    const int *dids, const int *vals, int n)
{
    if (t->self.trcopt != PvmTraceFull)
        return;
    int bit = ee == TEV_EVENT_ENTRY ? DESC_ENTRY : DESC_EXIT;
    int desc = !(t->desc[kind] & bit);
    t->desc[kind] |= (uint8_t)bit;
    if (!t->msg) {
        t->msg = pvm_buf_new(PVM_BUF_DEFAULT);
        if (!t->msg)
            return;
        if (t->self.trcbuf > 0) {
            int mark = TEV_MARK_EVENT_BUFFER;
            pvm_buf_pack(t->msg, PVM_INT, &mark, 1, 1);
        }
    }
    int head[2] = { desc ? TEV_MARK_EVENT_DESC : TEV_MARK_EVENT_RECORD, kind | ee };
    pvm_buf_pack(t->msg, PVM_INT, head, 2, 1);
    if (desc)
        pvm_buf_pack_str(t->msg, s_info[kind].name + 4);    /* PVM's name: no "pvm_" */
    struct timeval now;
    gettimeofday(&now, NULL);
    s_field(t->msg, desc, TEV_DID_TS, (int)now.tv_sec);
    s_field(t->msg, desc, TEV_DID_TU, (int)now.tv_usec);
    s_field(t->msg, desc, TEV_DID_TID, pvm_ctx_tid(ctx));
    for (int i = 0; strs && i < s_info[kind].ns; i++)
        s_sfield(t->msg, desc, s_info[kind].sdid[i], strs[i]);
    for (int i = 0; i < n; i++)
        s_field(t->msg, desc, dids[i], vals[i]);
    int end = desc ? TEV_MARK_EVENT_DESC_END : TEV_MARK_EVENT_RECORD_END;
    pvm_buf_pack(t->msg, PVM_INT, &end, 1, 1);
    if (t->self.trcbuf <= 0 || pvm_buf_len(t->msg) >= (size_t)t->self.trcbuf)
        s_send(ctx, t);
}

/*  1 for the calls PVM never traces (they have event numbers, but only the recorder
 *  gets them here). */
static int s_untraced(int kind)
{
    return kind == TEV_TIDTOHOST || kind == TEV_HOSTSYNC || kind == TEV_GETTMASK
        || kind == TEV_SETTMASK || kind == TEV_CATCHOUT;
}

/*  1 when the tracer wants event kind now (enrolling first, as PVM's calls do). */
static int s_wants(pvm_ctx_t *ctx, const tev_t *t, int kind)
{
    if (t->self.trctid <= 0 || !TEV_MASK_CHECK(t->self.tmask, kind) || s_untraced(kind))
        return 0;
    if (!pvm_ctx_tid(ctx) && pvm_ctx_enrol(ctx) < 0)
        return 0;
    return t->self.trctid != pvm_ctx_tid(ctx);
}

/*  A call starts. */
void pvm_tev_enter(pvm_ctx_t *ctx, int kind, const char *s1, const char *s2, const int *args,
                   int n)
{
    tev_t *t = pvm_ctx_tev(ctx);
    PVM_CTX_TEV(ctx) &= ~PVM_CTX_TEV_CALLS;
    if (!t || kind < 0 || kind > TEV_MAX)
        return;
    if (t->rec) {
        gimpi_trace_rec(t->rec, GIMPI_TEV_CALL_BEGIN, kind, args, n, s_info[kind].name);
    }
    int m = n < s_info[kind].nin ? n : s_info[kind].nin;
    t->held.kind = -1;
    if (t->lookup && !pvm_ctx_tid(ctx)) {       /* the tracer is known once it enrols */
        t->held.kind = kind;
        t->held.s[0] = s1, t->held.s[1] = s2;
        memcpy(t->held.args, args, (size_t)m * sizeof *args);
        t->held.n = m;
    } else if (s_wants(ctx, t, kind)) {
        const char *strs[2] = { s1, s2 };
        s_event(ctx, t, kind, TEV_EVENT_ENTRY, strs, s_info[kind].in, args, m);
    }
}

/*  The exit data of a receive: the buffer's id, bytes, tag, context and source. */
static int s_recv_data(pvm_ctx_t *ctx, int rc, int *vals)
{
    int src = 0, tag = 0, cx = 0;
    pvm_buf_t *b = rc > 0 ? pvm_ctx_buf(ctx, rc) : NULL;
    if (b)
        pvm_ctx_buf_info(ctx, rc, &src, &tag, &cx);
    vals[0] = rc;
    vals[1] = b ? (int)pvm_buf_len(b) : 0;
    vals[2] = tag;
    vals[3] = cx;
    vals[4] = src;
    return 5;
}

/*  Once enrolled, hands the recorder to the transport's collectives. */
static void s_tell_coll(pvm_ctx_t *ctx, tev_t *t)
{
    void *impl;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_coll_t *coll = ops && ops->coll ? ops->coll(impl) : NULL;
    if (coll)
        gimpi_coll_set_trace(coll, t->rec);
    t->coll_told = ops != NULL;
}

/*  A call ended. */
int pvm_tev_leave(pvm_ctx_t *ctx, int kind, int rc)
{
    tev_t *t = pvm_ctx_tev(ctx);
    if (!t || kind < 0 || kind > TEV_MAX)
        return rc;
    if (t->rec && !t->coll_told)
        s_tell_coll(ctx, t);
    if (t->rec) {
        if (!gimpi_trace_tid(t->rec) && pvm_ctx_tid(ctx))
            gimpi_trace_set_task(t->rec, pvm_ctx_tid(ctx), NULL);
        gimpi_trace_rec(t->rec, GIMPI_TEV_CALL_END, kind, &rc, 1, s_info[kind].name);
    }
    if (t->held.kind == kind && s_wants(ctx, t, kind))      /* it enrolled: a tracer */
        s_event(ctx, t, kind, TEV_EVENT_ENTRY, t->held.s, s_info[kind].in, t->held.args,
                t->held.n);
    t->held.kind = -1;
    if (s_wants(ctx, t, kind)) {
        int vals[MAXOUT] = { rc }, n = s_info[kind].nout ? 1 : 0;
        if (kind == TEV_RECV || kind == TEV_NRECV || kind == TEV_TRECV)
            n = s_recv_data(ctx, rc, vals);
        s_event(ctx, t, kind, TEV_EVENT_EXIT, NULL, s_info[kind].out, vals, n);
    }
    s_arm(ctx, t);
    return rc;
}

/*  pvm_exit's events: the tracer gets its entry alone (as from PVM), the recorder a
 *  whole call (balanced for a reader) and the EXIT record. */
void pvm_tev_exit(pvm_ctx_t *ctx)
{
    tev_t *t = pvm_ctx_tev(ctx);
    if (!t || !(PVM_CTX_TEV(ctx) & PVM_CTX_TEV_CALLS))
        return;
    if (t->rec) {
        int status = 0;
        gimpi_trace_rec(t->rec, GIMPI_TEV_CALL_BEGIN, TEV_EXIT, NULL, 0, "pvm_exit");
        gimpi_trace_rec(t->rec, GIMPI_TEV_CALL_END, TEV_EXIT, &status, 1, "pvm_exit");
        gimpi_trace_rec(t->rec, GIMPI_TEV_EXIT, 0, &status, 1, NULL);
        gimpi_trace_flush(t->rec);
    }
    if (s_wants(ctx, t, TEV_EXIT))
        s_event(ctx, t, TEV_EXIT, TEV_EVENT_ENTRY, NULL, NULL, NULL, 0);
    s_send(ctx, t);
    memset(t->desc, 0, sizeof t->desc);     /* a new enrolment describes again */
}

/*  The process ends: the EXIT record (status 0: atexit cannot know it; once per
 *  enrolment, pvm_exit wrote it already otherwise) and the ring to the file. */
void pvm_tev_flush(pvm_ctx_t *ctx)
{
    tev_t *t = ctx ? pvm_ctx_tev(ctx) : NULL;
    if (t && pvm_ctx_tid(ctx))
        s_send(ctx, t);
    if (t && t->rec) {
        if (!gimpi_trace_tid(t->rec) && pvm_ctx_tid(ctx))
            gimpi_trace_set_task(t->rec, pvm_ctx_tid(ctx), NULL);
        if (pvm_ctx_tid(ctx)) {
            int status = 0;
            gimpi_trace_rec(t->rec, GIMPI_TEV_EXIT, 0, &status, 1, NULL);
        }
        gimpi_trace_flush(t->rec);
    }
}

/*  A point event for the recorder. */
void pvm_tev_event(pvm_ctx_t *ctx, int kind, const int *i, int n, const char *s)
{
    tev_t *t = pvm_ctx_tev(ctx);
    if (t && t->rec)
        gimpi_trace_rec(t->rec, kind, 0, i, n, s);
}

/*  The state, made on first use when pvm_tev_init could not (NULL: ENOMEM). */
static tev_t *s_state(pvm_ctx_t *ctx)
{
    pvm_tev_init(ctx);
    return pvm_ctx_tev(ctx);
}

/*  This task's tid, enrolling first (PVM compares a tracer's tid with it). */
static int s_me(pvm_ctx_t *ctx)
{
    if (!pvm_ctx_tid(ctx))
        pvm_ctx_enrol(ctx);
    return pvm_ctx_tid(ctx);
}

/*  Sets one of the children's tracer fields as PVM's pvm_setopt does: the tid may only
 *  be 0, this task or this task's own tracer (with its code); the context and code only
 *  change while the children's tracer is none or this task. */
static int s_set_child(pvm_ctx_t *ctx, tev_t *t, int what, int val)
{
    struct Pvmtracer *c = &t->child;
    int old;
    switch (what) {
    case PvmTraceTid:
        if (val && val != s_me(ctx) && (val != t->self.trctid || c->trctag != t->self.trctag))
            return PvmBadParam;
        old = c->trctid;
        c->trctid = val;
        return old;
    case PvmTraceContext:
    case PvmTraceCode: {
        int *f = what == PvmTraceContext ? &c->trcctx : &c->trctag;
        int own = what == PvmTraceContext ? t->self.trcctx : t->self.trctag;
        if (c->trctid > 0 && c->trctid != s_me(ctx) && val != own)
            return PvmBadParam;
        old = *f;
        *f = val;
        return old;
    }
    case PvmTraceBuffer:
        old = c->trcbuf;
        c->trcbuf = val;
        return old;
    default:                    /* PvmTraceOptions */
        if (val < PvmTraceFull || val > PvmTraceCount)
            return PvmBadParam;
        old = c->trcopt;
        c->trcopt = val;
        return old;
    }
}

/*  Sets one of the task's own tracer fields as PVM's pvm_setopt does. */
static int s_set_self(pvm_ctx_t *ctx, tev_t *t, int what, int val)
{
    struct Pvmtracer *s = &t->self;
    int old;
    switch (what) {
    case PvmSelfTraceTid:
    case PvmSelfTraceCode:
        if (what == PvmSelfTraceCode && s->trctid <= 0)
            return PvmBadParam;
        s_send(ctx, t);
        old = what == PvmSelfTraceTid ? s->trctid : s->trctag;
        *(what == PvmSelfTraceTid ? &s->trctid : &s->trctag) = val;
        t->child.trctid = s->trctid;
        t->child.trcctx = s->trcctx;
        t->child.trctag = s->trctag;
        return old;
    case PvmSelfTraceContext:
        return PvmNotImpl;
    case PvmSelfTraceBuffer:
        s_send(ctx, t);
        old = s->trcbuf;
        s->trcbuf = val;
        return old;
    default:                    /* PvmSelfTraceOptions */
        if (val < PvmTraceFull || val > PvmTraceCount)
            return PvmBadParam;
        s_send(ctx, t);
        old = s->trcopt;
        s->trcopt = val;
        return old;
    }
}

/*  pvm_setopt's trace options. */
int pvm_tev_setopt(pvm_ctx_t *ctx, int what, int val, int *old)
{
    int child = what == PvmTraceTid || what == PvmTraceCode || what == PvmTraceBuffer
        || what == PvmTraceOptions || what == PvmTraceContext;
    int self = what == PvmSelfTraceTid || what == PvmSelfTraceCode
        || what == PvmSelfTraceBuffer || what == PvmSelfTraceOptions
        || what == PvmSelfTraceContext;
    if (!child && !self)
        return 0;
    tev_t *t = s_state(ctx);
    if (!t) {
        *old = PvmNoMem;
        return 1;
    }
    *old = child ? s_set_child(ctx, t, what, val) : s_set_self(ctx, t, what, val);
    s_arm(ctx, t);
    return 1;
}

/*  pvm_getopt's trace options. */
int pvm_tev_getopt(pvm_ctx_t *ctx, int what, int *val)
{
    tev_t *t = s_state(ctx);
    if (!t)
        return 0;
    const struct Pvmtracer *c = &t->child, *s = &t->self;
    switch (what) {
    case PvmTraceTid:         *val = c->trctid; return 1;
    case PvmTraceContext:     *val = c->trcctx; return 1;
    case PvmTraceCode:        *val = c->trctag; return 1;
    case PvmTraceBuffer:      *val = c->trcbuf; return 1;
    case PvmTraceOptions:     *val = c->trcopt; return 1;
    case PvmSelfTraceTid:     *val = s->trctid; return 1;
    case PvmSelfTraceContext: *val = s->trcctx; return 1;
    case PvmSelfTraceCode:    *val = s->trctag; return 1;
    case PvmSelfTraceBuffer:  *val = s->trcbuf; return 1;
    case PvmSelfTraceOptions: *val = s->trcopt; return 1;
    default:                  return 0;
    }
}

/*  Copies a mask out. */
void pvm_tev_get_mask(pvm_ctx_t *ctx, int who, char *mask)
{
    tev_t *t = s_state(ctx);
    if (!t) {
        TEV_MASK_INIT(mask);
        return;
    }
    memcpy(mask, who == PvmTaskSelf ? t->self.tmask : t->child.tmask, TEV_MASK_LENGTH);
}

/*  Sets a mask. */
void pvm_tev_set_mask(pvm_ctx_t *ctx, int who, const char *mask)
{
    tev_t *t = s_state(ctx);
    if (!t)
        return;
    memcpy(who == PvmTaskSelf ? t->self.tmask : t->child.tmask, mask, TEV_MASK_LENGTH);
    t->anymask = s_any(t->self.tmask);
    s_arm(ctx, t);
}

/*  The children's settings into the environment. */
int pvm_tev_child_env(pvm_ctx_t *ctx)
{
    tev_t *t = s_state(ctx);
    if (!t)
        return PvmNoMem;
    char v[96];
    const struct Pvmtracer *c = &t->child;
    snprintf(v, sizeof v, "%d,%d,%d,%d,%d", c->trctid, c->trcctx, c->trctag, c->trcbuf,
             c->trcopt);
    if (setenv("PVMTMASK", c->tmask, 1) < 0 || setenv("GIMPI_PVMTRACER", v, 1) < 0)
        return PvmNoMem;
    return 0;
}

/*  A group's members, from the one group kept while groupd's version of it holds. */
int pvm_tev_members(pvm_ctx_t *ctx, gimpi_groups_t *groups, const char *group,
                    const int **tids)
{
    tev_t *t = pvm_ctx_tev(ctx);
    if (t && t->members.tids && t->members.gen && !strcmp(t->members.name, group)
        && gimpi_group_unchanged(groups, t->members.gen)) {
        *tids = t->members.tids;                /* nothing changed at all: no look */
        return t->members.n;
    }
    gimpi_group_snap_t snap = { 0 };
    if (!t || strlen(group) >= sizeof t->members.name
        || gimpi_group_state(groups, group, &snap) < 0)
        return -1;
    t->members.gen = snap.gen;
    if (!t->members.tids || snap.version != t->members.version
        || strcmp(t->members.name, group)) {
        snap = (gimpi_group_snap_t){ 0 };
        if (gimpi_group_snapshot(groups, group, &snap) < 0)
            return -1;
        free(t->members.tids);
        t->members.tids = snap.tids;
        t->members.n = snap.ninst;
        t->members.version = snap.version;
        t->members.gen = snap.gen;
        snprintf(t->members.name, sizeof t->members.name, "%s", group);
    }
    *tids = t->members.tids;
    return t->members.n;
}

/*  At enrolment, a task that inherited no tracer takes the one registered with
 *  pvm_reg_tracer: its entry <PVMTRACERCLASS, 0> in the message box (tid, context, code,
 *  output context and code, mask, buffering, options, as PVM 3.4 packs it), for itself
 *  and its children, when the tracer's code is not 0 (as PVM's pvmd does).  One lookup;
 *  the call that enrolled, held by pvm_tev_enter, then gets its entry event too. */
void pvm_tev_registered(pvm_ctx_t *ctx, gimpi_groups_t *groups)
{
    tev_t *t = ctx && groups ? s_state(ctx) : NULL;
    int enc;
    void *data = NULL;
    size_t len;
    if (t)
        t->lookup = 0;
    if (!t || t->self.trctid != 0
        || gimpi_mbox_get(groups, PVMTRACERCLASS, 0, 0, &enc, &data, &len) < 0)
        return;
    pvm_buf_t *b = pvm_buf_adopt(enc, data, len);
    if (!b) {
        free(data);
        return;
    }
    int v[5], opt[2];
    char mask[2 * TEV_MASK_LENGTH];
    int rc = pvm_buf_unpack(b, PVM_INT, v, 5, 1);          /* tid ctx tag octx otag */
    rc = rc < 0 ? rc : pvm_buf_unpack_str(b, mask, sizeof mask);
    rc = rc < 0 ? rc : pvm_buf_unpack(b, PVM_INT, opt, 2, 1);   /* buffer, options */
    pvm_buf_destroy(&b);
    if (rc < 0 || v[0] <= 0 || v[2] == 0)
        return;
    struct Pvmtracer *s = &t->self;
    s->trctid = v[0], s->trcctx = v[1], s->trctag = v[2];
    s_mask_from(s->tmask, mask);
    s->trcbuf = opt[0], s->trcopt = opt[1];
    t->child = *s;
    t->anymask = s_any(s->tmask);       /* armed when the enrolling call returns */
}
