/*  pvm_ctx.h — the per-process state behind the PVM compatibility API, and the small
 *  interface through which a message transport plugs into it.
 *
 *  A pvm_ctx_t holds everything libpvm kept in globals: the message buffers and their
 *  ids, the active send and receive buffers, the queue of received messages not yet
 *  taken (in arrival order), the options (PvmAutoErr, PvmRoute) and the transport.  The
 *  PVM API has no handle argument, so the pvm_* calls find their context through ONE
 *  process-wide pointer (pvm_ctx_current), created on first use; see pvm_enrol.c.
 *
 *  The transport is a vtable (pvm_transport_ops_t) plus an opaque implementation
 *  pointer.  It moves whole messages (bytes + encoding + tag + context id) and hands
 *  back, one at a time and in arrival order, whatever has arrived for this task; the
 *  context does the matching on (source, tag, context), so per-sender order is kept even
 *  when pvm_probe has looked at a later message.  Enrolment = attaching a transport:
 *  pvm_ctx_enrol opens one with the context's opener when none is attached.  The context
 *  knows no transport by name: the process-wide context (pvm_enrol.c) gets the default
 *  opener (the data plane's transport, pvm_transport_impi.c); tests attach the in-process
 *  loopback (pvm_loopback.h).
 *
 *  Where things live: the context object in pvm_ctx.c; the process-wide context and the
 *  choice of the default transport in pvm_enrol.c (above pvm_ctx.c and the transports);
 *  error reporting (pvm_ctx_fail) in pvm_err.c.  No file of the PVM layer calls a file
 *  that calls it back.
 */
#ifndef GIMPI_PVM_CTX_H
#define GIMPI_PVM_CTX_H

#include "pvm/pvm_buf.h"
#include "gimpi_coll.h"
#include "gimpi_group.h"
#include "gimpi.h"

#include <stddef.h>
#include <stdio.h>

/*  Marks a function of the PVM message path (send, receive, the transport's send and
 *  next): the compiler groups such functions in .text.hot, so that the library growing
 *  around them does not move them apart (doc/performance.md). */
#define GIMPI_HOT __attribute__((hot))

/*  One received message as a transport delivers it.  `bytes` is malloc'd (or NULL when
 *  len is 0) and becomes the receiver's; the message's len bytes start at bytes + off
 *  (a transport may leave its header in front).  Or, when `body` is set (bytes NULL), the
 *  len bytes are still on the transport: the token for its `body` entry. */
typedef struct {
    int src;                    /* sender's tid */
    int tag;                    /* message tag (>= 0) */
    int ctxid;                  /* message context (PvmBaseContext = 0 for user traffic) */
    int encoding;               /* PVM_BUF_DEFAULT or PVM_BUF_RAW */
    void *bytes;
    size_t len;
    size_t off;
    void *body;
    int wid;                    /* the wait id the sender set (pvm_setminfo), else 0 */
} pvm_msg_t;

/*  What a transport implements.  Every function gets the `impl` given at attach time.
 *  Return values are GIMPI_E* codes (< 0) on failure. */
typedef struct {
    const char *name;
    /*  This task's tid (> 0). */
    int (*mytid)(void *impl);
    /*  The spawner's tid, or GIMPI_ENOPARENT for a task started from the shell. */
    int (*parent)(void *impl);
    /*  Queues one message for dst; returns 0 once the bytes are buffered (the caller may
     *  reuse them at once), whatever their size.  bytes are the len bytes of the message;
     *  frame, when not NULL, is bytes - PVM_BUF_HEADROOM, room the transport may overwrite
     *  (its header: pvm_buf_frame).  frame is NULL when bytes are the caller's own memory
     *  (one PvmDataInPlace segment), which the transport must leave alone. */
    int (*send)(void *impl, int dst, int tag, int ctxid, int encoding, uint8_t *frame,
                const void *bytes, size_t len);
    /*  Optional (may be NULL: the wait id stays behind): send for a message whose wait id
     *  is not 0 (pvm_setminfo, pvm_setmwid), which travels with it; the bytes are the
     *  caller's (no frame).  Off the fast path. */
    int (*send_wid)(void *impl, int dst, int tag, int ctxid, int wid, int encoding,
                    const void *bytes, size_t len);
    /*  The next arrived message, waiting up to timeout_ms (0: poll, -1: no limit).
     *  Returns 1 with *msg filled, 0 when nothing arrived in time, or < 0 (e.g.
     *  GIMPI_ESYSERR when nothing can ever arrive). */
    int (*next)(void *impl, int timeout_ms, pvm_msg_t *msg);
    /*  Optional (may be NULL): next for a receive that waits for task src (> 0): the same,
     *  but with no limit it fails (GIMPI_ESYSERR) once src can never send again and
     *  nothing else arrived. */
    int (*next_from)(void *impl, int timeout_ms, int src, pvm_msg_t *msg);
    /*  Optional (may be NULL): tasks started by the same spawn, *tids valid until the
     *  transport is destroyed; NULL means "this task alone". */
    int (*siblings)(void *impl, const int **tids);
    /*  Optional (may be NULL): starts n copies of program file (argv without the program
     *  name, may be NULL; flags: GIMPI_SPAWN_*, where: a host or architecture for
     *  GIMPI_SPAWN_HOST/ARCH) as new tasks; tids[i] gets each tid or error; returns how
     *  many started or an error for all. */
    int (*spawn)(void *impl, const char *file, char *const argv[], int flags,
                 const char *where, int n, int *tids);
    /*  Optional (may be NULL): the native task behind the transport, for the virtual
     *  machine's calls (pvm_config, pvm_addhosts ...); NULL: this host alone. */
    gimpi_t *(*task)(void *impl);
    /*  Releases impl (called by pvm_ctx_detach / pvm_ctx_destroy). */
    void (*destroy)(void *impl);
    /*  Optional (may be NULL): the task's connection to groupd, registered under this
     *  task's tid, for the group calls (pvm_group.c); NULL: no groups (PvmSysErr). */
    gimpi_groups_t *(*groups)(void *impl);
    /*  Optional (may be NULL): the task's data-plane collectives (gimpi_coll.h) for
     *  pvm_barrier, pvm_reduce, pvm_gather, pvm_scatter; NULL: none (PvmSysErr). */
    gimpi_coll_t *(*coll)(void *impl);
    /*  Optional (may be NULL): pvm_bcast: one message, as `send` would send it (bytes and
     *  frame as there), to every current member of group but the caller (who need not be
     *  one). */
    int (*bcast)(void *impl, const char *group, int tag, int ctxid, int encoding,
                 uint8_t *frame, const uint8_t *bytes, size_t len);
    /*  Optional (may be NULL; then messages never carry a body token): takes the body of
     *  a delivered message (pvm_msg_t.body) into dst (len bytes), or discards it when dst
     *  is NULL, and forgets the token.  0 or < 0.  Tokens die with the transport. */
    int (*body)(void *impl, void *token, void *dst);
    /*  Optional (may be NULL): why the transport's last call failed, in words for a user
     *  ("t40003 on host h1 closed its connection", "groupd at ipc://... is gone"), written
     *  into out ("" when it cannot say); `where` (PVM_CAUSE_*) says which part of the
     *  task failed. */
    void (*cause)(void *impl, int where, char *out, size_t size);
    /*  Optional (may be NULL): has fn(arg, waited_ms) run once by every wait of the
     *  transport that lasts after_ms, in the waiting thread (the live view's status,
     *  pvm_status.h); after_ms 0: never. */
    void (*status_hook)(void *impl, void (*fn)(void *arg, int waited_ms), void *arg,
                        int after_ms);
} pvm_transport_ops_t;

/*  Where a failure came from, for a transport's `cause`. */
enum {
    PVM_CAUSE_DATA = 0,         /* the data plane (messages), then groupd */
    PVM_CAUSE_GROUPD = 1,       /* groupd alone (the group queries) */
    PVM_CAUSE_BOTH = 2,         /* groupd, then the data plane (collectives, spawn) */
};

typedef struct pvm_ctx_t pvm_ctx_t;

/*  A fresh context: no buffers, no transport, PvmAutoErr 1; NULL on ENOMEM. */
pvm_ctx_t *pvm_ctx_new(void);
/*  Destroys the transport (if any), every buffer and the context; nulls the pointer. */
void pvm_ctx_destroy(pvm_ctx_t **self_p);

/*  Attaches a transport (the context owns impl from now on); replaces and destroys any
 *  previous one.  Returns 0, or the transport's mytid error (then nothing is attached
 *  and impl has been destroyed). */
int pvm_ctx_attach(pvm_ctx_t *self, const pvm_transport_ops_t *ops, void *impl);
/*  Destroys the transport and forgets the tid; buffers and options stay. */
void pvm_ctx_detach(pvm_ctx_t *self);

/*  Opens a transport: 0 with *ops and *impl set, or < 0 (GIMPI_ESYSERR) with the reason
 *  in why (why_size bytes, "" when it has none). */
typedef int pvm_transport_open_fn(const pvm_transport_ops_t **ops, void **impl, char *why,
                                  size_t why_size);
/*  How the context enrols when a call needs a transport and none is attached (NULL: it
 *  cannot, the call fails with GIMPI_ESYSERR).  A fresh context has none. */
void pvm_ctx_set_opener(pvm_ctx_t *self, pvm_transport_open_fn *open);
/*  Makes sure a transport is attached (the opener's if none); 0 or < 0 (the opener's
 *  reason then becomes the cause of the failure, pvm_ctx_set_cause). */
int pvm_ctx_enrol(pvm_ctx_t *self);
/*  This task's tid once enrolled, else 0 (never enrols). */
int pvm_ctx_tid(const pvm_ctx_t *self);
/*  Points at the context's tid (a one-element tid list for pvm_siblings). */
const int *pvm_ctx_tidp(const pvm_ctx_t *self);
/*  The transport (NULL ops when none). */
const pvm_transport_ops_t *pvm_ctx_ops(const pvm_ctx_t *self, void **impl);

/* ---- the process-wide context (pvm_enrol.c) ---- */

/*  The process-wide context the pvm_* calls use, created on first use with the default
 *  opener (NULL only when out of memory). */
pvm_ctx_t *pvm_ctx_current(void);
/*  Makes ctx the process-wide context (taking ownership) and gives it the default opener,
 *  destroying any previous one; NULL just destroys it.  For pvm_exit and tests. */
void pvm_ctx_install(pvm_ctx_t *ctx);

/* ---- the default transport (pvm_transport_impi.c) ---- */

/*  Joins the job (gimpi_init) and opens the PVM transport over the task's data plane.
 *  Returns 0 with ops and impl set, or GIMPI_ESYSERR / GIMPI_ENOMEM with why filled. */
int pvm_transport_open_default(const pvm_transport_ops_t **ops, void **impl, char *why,
                               size_t why_size);
/*  1 when ops/impl is a default transport opened by this process (not inherited through
 *  fork), which must leave the job properly at exit; else 0. */
int pvm_transport_impi_live(const pvm_transport_ops_t *ops, void *impl);

/* ---- buffers: ids are > 0; 0 means "none" ---- */

/*  Registers a buffer (the context owns it) and returns its id, or GIMPI_ENOMEM (then
 *  the buffer has been destroyed).  src/tag are what pvm_bufinfo reports. */
int pvm_ctx_add_buf(pvm_ctx_t *self, pvm_buf_t *buf, int src, int tag, int ctxid);
/*  The buffer with that id, or NULL (queued, not yet received messages included). */
pvm_buf_t *pvm_ctx_buf(pvm_ctx_t *self, int bufid);
/*  Frees a buffer (and drops it from the receive queue or the active slots).  0,
 *  GIMPI_EBADPARAM for a negative id, GIMPI_ENOSUCHBUF for an unknown one; 0 is a no-op.
 *  Its memory is kept for the next new buffer (pvm_ctx_new_buf) when it is the largest
 *  seen and at most PVM_CTX_SPARE_MAX bytes: a program that sends one large message after
 *  another packs into the same warm memory, with no page faults. */
int pvm_ctx_free_buf(pvm_ctx_t *self, int bufid);
/*  A new empty packing buffer in `encoding`, in the kept memory if any; NULL for an
 *  unknown encoding or ENOMEM. */
pvm_buf_t *pvm_ctx_new_buf(pvm_ctx_t *self, int encoding);
#define PVM_CTX_SPARE_MAX ((size_t)64 << 20)
/*  Source, tag and context of a buffer; 0 or GIMPI_ENOSUCHBUF. */
int pvm_ctx_buf_info(pvm_ctx_t *self, int bufid, int *src, int *tag, int *ctxid);
/*  Active send / receive buffer ids (0 = none). */
int pvm_ctx_sbuf(const pvm_ctx_t *self);
int pvm_ctx_rbuf(const pvm_ctx_t *self);
/*  Make a buffer (or 0) the active send / receive one; return the previous id or
 *  GIMPI_ENOSUCHBUF / GIMPI_EBADPARAM.  A buffer is never both: making the active send
 *  buffer the receive buffer leaves no send buffer, and the other way round. */
int pvm_ctx_set_sbuf(pvm_ctx_t *self, int bufid);
int pvm_ctx_set_rbuf(pvm_ctx_t *self, int bufid);

/* ---- messages (the layer group operations build on) ---- */

/*  Sends the bytes of buffer bufid to dst (tid > 0) with tag and context id; the buffer
 *  is unchanged.  0 or a GIMPI_E* code; enrols first. */
int pvm_ctx_send(pvm_ctx_t *self, int bufid, int dst, int tag, int ctxid);
/*  Sends the bytes of buffer bufid as one message to every current member of group but
 *  the caller (the transport's bcast, GIMPI_ESYSERR without one), as pvm_ctx_send would
 *  send them to each.  0 or a GIMPI_E* code; enrols first. */
int pvm_ctx_bcast(pvm_ctx_t *self, int bufid, const char *group, int tag, int ctxid);
/*  Takes the first queued or arriving message from src (-1: any) with tag (-1: any) in
 *  context ctxid, waiting up to timeout_ms (0: poll, -1: no limit).  Returns its buffer
 *  id (> 0, out of the queue, not made active), 0 on timeout, or < 0. */
int pvm_ctx_recv(pvm_ctx_t *self, int src, int tag, int ctxid, int timeout_ms);
/*  Like pvm_ctx_recv with timeout 0 but the message stays queued; its id (> 0) is the
 *  one pvm_ctx_recv will return for it. */
int pvm_ctx_probe(pvm_ctx_t *self, int src, int tag, int ctxid);

/* ---- message contexts, handlers and matching (pvm_context.c, pvm_mhf.c, pvm_minfo.c) ---- */

/*  Contexts one task can hold at once (pvm_newcontext; freed ones are reused). */
#define PVM_CTX_PER_TASK 2048
/*  pvm_recvf's matcher: > 0 a match (1: take it now, more: the best of the queue wins),
 *  0 none, < 0 an error for the receive. */
typedef int pvm_ctx_match_fn(int bufid, int src, int tag);
/*  pvm_addmhf's handler; its result is ignored. */
typedef int pvm_ctx_mhf_fn(int bufid);

/*  As the ctxid of pvm_ctx_send, pvm_ctx_bcast, pvm_ctx_recv and pvm_ctx_probe: the
 *  current context (what the pvm_* message calls pass: no call to fetch it first). */
#define PVM_CTX_CURRENT ((int)(-2147483647 - 1))
/*  The current context (PvmBaseContext at start). */
int pvm_ctx_context(const pvm_ctx_t *self);
/*  Makes ctxid the current context (any value; -1 receives from every context); returns
 *  the previous one. */
int pvm_ctx_set_context(pvm_ctx_t *self, int ctxid);
/*  A context id no other task of the virtual machine can make: (tid's serial << 11) | n
 *  with n (1 .. PVM_CTX_PER_TASK - 1) the lowest this task does not hold.  Enrols first.
 *  The id (> 0), GIMPI_EOUTOFRES (all held, or a tid past the range), or the enrolment's
 *  error. */
int pvm_ctx_new_context(pvm_ctx_t *self);
/*  Releases a context this task made: 0, or GIMPI_ENOTFOUND. */
int pvm_ctx_free_context(pvm_ctx_t *self, int ctxid);
/*  Installs matcher f (NULL: the default one, which matches source, tag and the current
 *  context); returns the previous one (NULL for the default). */
pvm_ctx_match_fn *pvm_ctx_set_match(pvm_ctx_t *self, pvm_ctx_match_fn *f);
/*  Adds a handler for the messages from src with tag in context ctxid (-1: any) that
 *  arrive from now on: its id (>= 0), GIMPI_EEXISTS when one already covers some of the
 *  same messages, GIMPI_EBADPARAM for a NULL f, or GIMPI_ENOMEM.  A handler runs inside
 *  the receive or probe that takes its message off the transport, with the message as
 *  the active receive buffer, no send buffer and the message's context as the current
 *  one; afterwards the receive buffer (the message, unless the handler made another one
 *  active) and any send buffer the handler left are freed and the caller's buffers and
 *  context are back. */
int pvm_ctx_add_mhf(pvm_ctx_t *self, int src, int tag, int ctxid, pvm_ctx_mhf_fn *f);
/*  Removes handler id: 0, GIMPI_EBADPARAM (id < 0) or GIMPI_ENOTFOUND.  Safe from inside a
 *  handler. */
int pvm_ctx_del_mhf(pvm_ctx_t *self, int id);
/*  Handler id's source, tag and context: 0, or GIMPI_ENOTFOUND (no live handler id). */
int pvm_ctx_mhf_info(const pvm_ctx_t *self, int id, int *src, int *tag, int *ctxid);
/*  One more than the highest handler id there can be (ids 0 .. this - 1 to look at). */
int pvm_ctx_mhf_cap(const pvm_ctx_t *self);
/*  A buffer's wait id and destination (a received message's: this task, unless set);
 *  0 or GIMPI_ENOSUCHBUF. */
int pvm_ctx_buf_minfo(pvm_ctx_t *self, int bufid, int *wid, int *dst);
/*  Sets what pvm_setminfo sets: source, tag, context, wait id and destination. */
int pvm_ctx_set_minfo(pvm_ctx_t *self, int bufid, int src, int tag, int ctxid, int wid,
                      int dst);

/* ---- notifications (pvm_notify.c) ---- */

/*  The source tid of the messages "the daemon" sends, pvm_notify's: PVM's TIDPVMD,
 *  0x80000000 (negative as an int).  pvm_recv and pvm_probe accept it as a source. */
#define PVM_CTX_DAEMON_TID ((int)(-2147483647 - 1))
/*  A wait that a notification may end looks for them at least this often (ms). */
#define PVM_CTX_NOTIFY_SLICE_MS 20

/*  What pvm_notify plugs into the context, so that waits see its messages. */
typedef struct {
    /*  Turns what has come into queued messages (pvm_ctx_inject), waiting up to wait_ms
     *  (0: poll) for something to come; 0 or < 0. */
    int (*poll)(void *arg, pvm_ctx_t *ctx, int wait_ms);
    /*  1 when a message from src (-1: any) with tag (-1: any) in context ctxid may still
     *  be injected: a wait for it must poll. */
    int (*may_match)(void *arg, int src, int tag, int ctxid);
    /*  Frees arg (the context is detaching, or the hooks are replaced). */
    void (*destroy)(void *arg);
    void *arg;
} pvm_ctx_notify_t;

/*  Sets the hooks (NULL: none), destroying the previous ones. */
void pvm_ctx_set_notify(pvm_ctx_t *self, const pvm_ctx_notify_t *notify);
/*  The hooks' arg, NULL when none are set. */
void *pvm_ctx_notify_arg(const pvm_ctx_t *self);
/*  pvm_getfds' one descriptor (pvm_notify.c): readable when a message (arrival_fd, the
 *  data plane's) or a notification may have come.  The descriptor, or a PVM code. */
int pvm_notify_wake_fd(pvm_ctx_t *ctx, int arrival_fd);
/*  Queues a message from src with tag in context ctxid holding the n ints of vals packed
 *  in PvmDataDefault, as if it had arrived.  Its buffer id, 0 when a message handler
 *  took it, or < 0. */
int pvm_ctx_inject(pvm_ctx_t *self, int src, int tag, int ctxid, const int *vals, int n);

/* ---- options ---- */

/*  Options 1 (PvmRoute) .. 25 (PvmNoReset) of pvm_setopt.  The context keeps their
 *  values; only PvmAutoErr changes behaviour here (PvmDebugMask lives in pvmdebmask). */
#define PVM_CTX_NOPTS 26
/*  Where option `what` is kept, or NULL for an unknown option. */
int *pvm_ctx_opt(pvm_ctx_t *self, int what);

/* ---- children's output (pvm_catchout) ---- */

/*  Catches the output of the children spawned from now on on f (NULL: stops), with or
 *  without tids as PvmShowTids says now; remembers f.  Needs the transport's native task
 *  (GIMPI_ENOTIMPL without one).  0 or < 0. */
int pvm_ctx_catchout(pvm_ctx_t *self, FILE *f);
/*  pvm_catchout's file, or NULL when output is not caught. */
FILE *pvm_ctx_catchout_file(const pvm_ctx_t *self);
/*  Waits up to timeout_ms for every caught child's output to end; how many are open. */
int pvm_ctx_catchout_wait(pvm_ctx_t *self, int timeout_ms);

/* ---- errors (pvm_err.c) ---- */

/*  Records a failure of PVM call `fn` ("pvm_send"): sets pvm_errno and its cause
 *  (pvm_ctx_note; for PvmSysErr, groupd's first, then the data plane's) and, as PvmAutoErr says, prints `libpvm [t<tid>]: fn(): <text>` to
 *  stderr, followed by ` (<cause>)` when there is one (1), then exits (2) or aborts (3).
 *  Returns code so callers can `return pvm_ctx_fail(...)`.  self may be NULL. */
int pvm_ctx_fail(pvm_ctx_t *self, const char *fn, int code);
/*  The same for a failure whose cause the transport finds in `where` (PVM_CAUSE_*). */
int pvm_ctx_fail_in(pvm_ctx_t *self, const char *fn, int code, int where);
/*  Records a failure without printing (the group calls, as libgpvm): pvm_errno and its
 *  cause.  Returns code; nothing for code >= 0. */
int pvm_ctx_error(pvm_ctx_t *self, int code, int where);

/*  Causes (pvm_ctx.c).  Every recorded failure (pvm_ctx_fail, pvm_ctx_error) gets one:
 *  the text set for its code by pvm_ctx_set_cause since the last failure, else, for
 *  PvmSysErr, what the transport's `cause` says about `where`, else none.  pvm_perror
 *  and the PvmAutoErr diagnostics append it to PVM's text. */
void pvm_ctx_set_cause(pvm_ctx_t *self, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*  Binds the cause of a failure with code (see above) and forgets the set one. */
void pvm_ctx_note(pvm_ctx_t *self, int code, int where);
/*  The cause of the last recorded failure when it failed with code, else "". */
const char *pvm_ctx_cause(const pvm_ctx_t *self, int code);
/*  Writes the `libpvm [t<hex tid>]` (or `libpvm [pid<pid>]` before enrolment) prefix. */
void pvm_ctx_prefix(const pvm_ctx_t *self, char *out, size_t size);

/* ---- tracing (pvm_tev.h) ---- */

struct gimpi_trace_t;
/*  What the trace hooks of the pvm_* calls test: an int of flags in every context, at
 *  PVM_CTX_TEV_OFFSET, which the hooks read without a call (a task that does not trace
 *  pays one load and one predictable branch per call).  The offset is a hole the layout
 *  had anyway, so that the fields the message path uses stay where they were (at the
 *  front, 16 bytes of trace state cost rtt8 3 %: doc/performance.md); pvm_ctx.c checks
 *  it at compile time. */
enum {
    PVM_CTX_TEV_CALLS = 1,          /* a call starting now is traced or recorded */
    PVM_CTX_TEV_RECORD = 2,         /* a recorder is set (pvm_ctx_set_rec) */
};
#define PVM_CTX_TEV_OFFSET (sizeof(void *) + 3 * sizeof(int))
#define PVM_CTX_TEV(ctx) (*(int *)(void *)((char *)(void *)(ctx) + PVM_CTX_TEV_OFFSET))
/*  Sets the recorder the message path records into (NULL: none) and the RECORD flag. */
void pvm_ctx_set_rec(pvm_ctx_t *self, struct gimpi_trace_t *rec);
/*  The recorder, NULL when none is set. */
struct gimpi_trace_t *pvm_ctx_rec(const pvm_ctx_t *self);
/*  Keeps the trace state tev (pvm_tev.c); destroy (may be NULL) frees it with the
 *  context.  Replacing it does not destroy the previous one: the caller has it. */
void pvm_ctx_set_tev(pvm_ctx_t *self, void *tev, void (*destroy)(void *));
/*  The trace state, NULL when none was set. */
void *pvm_ctx_tev(const pvm_ctx_t *self);

/*  Memory PVM's calls hand their callers and own until the next such call (pvm_config's
 *  host table, pvm_tasks' task table, pvm_getfds' descriptors, pvm_getmboxinfo's
 *  classes), and the state of the Fortran calls that hand out one row per call
 *  (pvmfconfig, pvmftasks, pvmfgetmboxinfo: libgimpi/fortran): one slot each, one malloc'd
 *  block freed with the context. */
enum { PVM_CTX_KEPT_CONFIG, PVM_CTX_KEPT_TASKS, PVM_CTX_KEPT_FDS, PVM_CTX_KEPT_MBOX,
       PVM_CTX_KEPT_FCONFIG, PVM_CTX_KEPT_FTASKS, PVM_CTX_KEPT_FMBOX, PVM_CTX_NKEPT };
void pvm_ctx_keep(pvm_ctx_t *self, int which, void *mem);
/*  What slot which keeps (NULL: nothing). */
void *pvm_ctx_kept(const pvm_ctx_t *self, int which);

#endif
