/*  pvm_ctx.c — the PVM compatibility context (see pvm_ctx.h): buffer table, active
 *  buffers, receive queue with (source, tag, context) matching, options, and the attached
 *  transport with the opener that attaches one on demand.  It calls no transport by name
 *  and nothing above it (the process-wide pointer is pvm_enrol.c's, error reporting
 *  pvm_err.c's).
 *
 *  Buffer ids index a table of slots; the lowest free id is reused, as libpvm does.
 *  Received messages get a buffer id as soon as they leave the transport (so pvm_probe
 *  can return the id pvm_recv will return) and wait in `queue`, oldest first.
 */
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_status.h"
#include "coll/coll_live.h"
#include "gimpi.h"
#include "pvm3.h"
#include "base/gimpi_clock.h"
#include "base/gimpi_trace.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    pvm_buf_t *buf;             /* NULL: free slot */
    int src, tag, ctxid;
    int wid, dst;               /* pvm_setminfo's wait id and destination (0 until set);
                                   while !dstset, dst holds a received message's number
                                   from its source, for the trace (GIMPI_TRACE) */
    bool dstset;                /* dst was set; else a received message's is this task */
} slot_t;

/*  A message handler (pvm_addmhf); func NULL: a free entry. */
typedef struct {
    int src, tag, ctxid;        /* -1: any */
    pvm_ctx_mhf_fn *func;
} mhf_t;

struct pvm_ctx_t {
    slot_t *slots;              /* slots[id - 1] */
    int nslots;
    int sbuf, rbuf;             /* active ids, 0 = none */
    int tev;                    /* PVM_CTX_TEV's flags, at PVM_CTX_TEV_OFFSET (pvm_ctx.h) */
    int *queue;                 /* received, not yet taken: ids oldest first */
    int nqueue, qcap;
    pvm_wait_t wait;            /* the receive waiting now, for the live view (beside the
                                   queue: the same cache line as the receive's other stores) */
    int context;                /* the current message context (pvm_setcontext) */
    int nmhf;                   /* live message handlers (0: the fast path) */
    pvm_ctx_match_fn *match;    /* pvm_recvf's matcher; NULL: the default (fast path) */
    int opts[PVM_CTX_NOPTS];    /* PvmRoute .. PvmNoReset; [0] unused */
    const pvm_transport_ops_t *ops;
    void *impl;
    pvm_transport_open_fn *open;    /* how pvm_ctx_enrol attaches a transport (or NULL) */
    int tid;                    /* 0 until enrolled */
    void *spare;                /* memory of a freed buffer, for the next (pvm_ctx_new_buf) */
    size_t spare_size;
    void *kept[PVM_CTX_NKEPT];  /* pvm_config's, pvm_tasks' answers ... (pvm_ctx_keep) */
    char why[512];              /* a cause set for the next failure with code why_code */
    int why_code;               /* ... (0: none set) */
    char cause[512];            /* the cause of the last recorded failure ... */
    int cause_code;             /* ... which failed with this code (0: none) */
    FILE *catchout;             /* pvm_catchout's file, or NULL */
    pvm_ctx_notify_t notify;    /* pvm_notify's hooks (poll NULL: none) */
    mhf_t *mhf;                 /* message handlers by id (mhfcap entries) */
    int mhfcap;
    uint32_t ctxmap[PVM_CTX_PER_TASK / 32];     /* contexts this task made: bit n */
    int status_after;           /* GIMPI_STATUS_AFTER, ms (0: no live view) */
    struct gimpi_trace_t *rec;  /* the recorder (GIMPI_TRACE), or NULL */
    void *tevstate;             /* the trace state (pvm_tev.c), destroyed with tev_destroy */
    void (*tev_destroy)(void *);
};
_Static_assert(offsetof(struct pvm_ctx_t, tev) == PVM_CTX_TEV_OFFSET,
               "PVM_CTX_TEV_OFFSET must name pvm_ctx_t's tev field");

/*  The transport's groupd client, or NULL. */
static gimpi_groups_t *s_groups(pvm_ctx_t *self)
{
    return self->ops && self->ops->groups ? self->ops->groups(self->impl) : NULL;
}

/*  The transport's status hook: a wait has lasted waited_ms; groupd is told what it waits
 *  for (the live view, pvm_status.h): a receive's here, a group operation's by the
 *  collectives (coll_live.h). */
static void s_on_blocked(void *arg, int waited_ms)
{
    pvm_ctx_t *self = arg;
    if (self->wait.active && !self->wait.published)
        pvm_status_publish(s_groups(self), &self->wait, PvmBaseContext, waited_ms,
                           self->nqueue);
    else if (!self->wait.active && self->ops && self->ops->coll)
        gimpi_coll_live_publish(self->ops->coll(self->impl), waited_ms, self->nqueue);
}

/*  A fresh context. */
pvm_ctx_t *pvm_ctx_new(void)
{
    pvm_ctx_t *self = calloc(1, sizeof *self);
    if (self) {
        self->opts[PvmAutoErr] = 1;
        self->opts[PvmRoute] = PvmAllowDirect;
        self->opts[PvmFragSize] = 4096;
        self->opts[PvmShowTids] = 1;
        const char *c = gimpi_env("GIMPI_PVM_CONTEXT");    /* a child of pvm_spawn */
        self->context = c && *c ? (int)strtol(c, NULL, 0) : PvmBaseContext;
    }
    return self;
}

/*  Frees everything the context owns. */
void pvm_ctx_destroy(pvm_ctx_t **self_p)
{
    assert(self_p);
    pvm_ctx_t *self = *self_p;
    if (!self)
        return;
    pvm_ctx_detach(self);
    if (self->tev_destroy)
        self->tev_destroy(self->tevstate);
    for (int i = 0; i < self->nslots; i++)
        pvm_buf_destroy(&self->slots[i].buf);
    free(self->slots);
    free(self->queue);
    free(self->mhf);
    free(self->spare);
    for (int k = 0; k < PVM_CTX_NKEPT; k++)
        free(self->kept[k]);
    free(self);
    *self_p = NULL;
}

/*  Attaches a transport and learns the tid. */
int pvm_ctx_attach(pvm_ctx_t *self, const pvm_transport_ops_t *ops, void *impl)
{
    assert(self);
    assert(ops && ops->mytid && ops->send && ops->next);
    pvm_ctx_detach(self);
    int tid = ops->mytid(impl);
    if (tid <= 0) {
        if (ops->destroy)
            ops->destroy(impl);
        return tid < 0 ? tid : GIMPI_ESYSERR;
    }
    self->ops = ops;
    self->impl = impl;
    self->tid = tid;
    self->status_after = pvm_status_after_ms();
    if (ops->status_hook)
        ops->status_hook(impl, s_on_blocked, self, self->status_after);
    return 0;
}

/*  Drops the transport. */
void pvm_ctx_detach(pvm_ctx_t *self)
{
    assert(self);
    for (int i = 0; i < self->nslots; i++)      /* bodies still on the transport are lost */
        if (self->slots[i].buf)
            pvm_buf_orphan(self->slots[i].buf);
    pvm_ctx_set_notify(self, NULL);             /* the watches live on the transport */
    if (self->ops && self->ops->destroy)
        self->ops->destroy(self->impl);
    self->ops = NULL;
    self->impl = NULL;
    self->tid = 0;
}

/*  Sets the opener. */
void pvm_ctx_set_opener(pvm_ctx_t *self, pvm_transport_open_fn *open)
{
    assert(self);
    self->open = open;
}

/*  Attaches the opener's transport when none is attached. */
int pvm_ctx_enrol(pvm_ctx_t *self)
{
    assert(self);
    if (self->ops)
        return 0;
    if (!self->open)
        return GIMPI_ESYSERR;
    const pvm_transport_ops_t *ops = NULL;
    void *impl = NULL;
    char why[sizeof self->why - 16] = "";
    int rc = self->open(&ops, &impl, why, sizeof why);
    if (rc < 0) {
        if (*why)
            pvm_ctx_set_cause(self, rc, "startup: %s", why);
        return rc;
    }
    return pvm_ctx_attach(self, ops, impl);
}

/*  Sets the cause of the next failure with code. */
void pvm_ctx_set_cause(pvm_ctx_t *self, int code, const char *fmt, ...)
{
    assert(self);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(self->why, sizeof self->why, fmt, ap);
    va_end(ap);
    self->why_code = code;
}

/*  Removes the parentheses of a cause, which is printed inside parentheses: "a (b) c"
 *  becomes "a: b c", so that "text (cause)" never nests them. */
static void s_flatten(char *cause)
{
    char *out = cause;
    for (const char *c = cause; *c; c++) {
        if (*c == ' ' && c[1] == '(') {
            *out++ = ':';
            *out++ = ' ';
            c++;
        } else if (*c != '(' && *c != ')')
            *out++ = *c;
    }
    *out = 0;
}

/*  Binds the cause of a failure: the set one, else the transport's (PvmSysErr only). */
void pvm_ctx_note(pvm_ctx_t *self, int code, int where)
{
    assert(self);
    self->cause[0] = 0;
    self->cause_code = code;
    if (self->why_code == code && code < 0)
        snprintf(self->cause, sizeof self->cause, "%s", self->why);
    else if (code == GIMPI_ESYSERR && self->ops && self->ops->cause)
        self->ops->cause(self->impl, where, self->cause, sizeof self->cause);
    self->why_code = 0;
    self->why[0] = 0;
    s_flatten(self->cause);
}

/*  The cause of the last failure when it had code. */
const char *pvm_ctx_cause(const pvm_ctx_t *self, int code)
{
    assert(self);
    return code < 0 && self->cause_code == code ? self->cause : "";
}

/*  The tid, 0 before enrolment. */
int pvm_ctx_tid(const pvm_ctx_t *self)
{
    assert(self);
    return self->tid;
}

/*  Address of the tid. */
const int *pvm_ctx_tidp(const pvm_ctx_t *self)
{
    assert(self);
    return &self->tid;
}

/*  The transport. */
const pvm_transport_ops_t *pvm_ctx_ops(const pvm_ctx_t *self, void **impl)
{
    assert(self);
    if (impl)
        *impl = self->impl;
    return self->ops;
}

/*  Registers a buffer under the lowest free id. */
int pvm_ctx_add_buf(pvm_ctx_t *self, pvm_buf_t *buf, int src, int tag, int ctxid)
{
    assert(self);
    assert(buf);
    int i;
    for (i = 0; i < self->nslots; i++)
        if (!self->slots[i].buf)
            break;
    if (i == self->nslots) {
        int n = self->nslots ? 2 * self->nslots : 16;
        slot_t *slots = n > 0 && (size_t)n < SIZE_MAX / sizeof *slots
                            ? realloc(self->slots, (size_t)n * sizeof *slots) : NULL;
        if (!slots) {
            pvm_buf_destroy(&buf);
            return GIMPI_ENOMEM;
        }
        memset(slots + self->nslots, 0, (size_t)(n - self->nslots) * sizeof *slots);
        self->slots = slots;
        self->nslots = n;
    }
    self->slots[i] = (slot_t){ buf, src, tag, ctxid, 0, 0, false };
    return i + 1;
}

/*  The slot of an id, or NULL. */
static slot_t *s_slot(pvm_ctx_t *self, int bufid)
{
    if (bufid <= 0 || bufid > self->nslots || !self->slots[bufid - 1].buf)
        return NULL;
    return &self->slots[bufid - 1];
}

/*  The buffer of an id. */
pvm_buf_t *pvm_ctx_buf(pvm_ctx_t *self, int bufid)
{
    assert(self);
    slot_t *slot = s_slot(self, bufid);
    return slot ? slot->buf : NULL;
}

/*  Removes entry i of the receive queue. */
static void s_unqueue_at(pvm_ctx_t *self, int i)
{
    memmove(self->queue + i, self->queue + i + 1,
            (size_t)(self->nqueue - i - 1) * sizeof *self->queue);
    self->nqueue--;
}

/*  Frees a buffer. */
int pvm_ctx_free_buf(pvm_ctx_t *self, int bufid)
{
    assert(self);
    if (bufid < 0)
        return GIMPI_EBADPARAM;
    if (bufid == 0)
        return 0;
    slot_t *slot = s_slot(self, bufid);
    if (!slot)
        return GIMPI_ENOSUCHBUF;
    void *mem;
    size_t size;
    pvm_buf_destroy_keep(&slot->buf, &mem, &size);
    if (mem && size > self->spare_size && size <= PVM_CTX_SPARE_MAX) {
        free(self->spare);
        self->spare = mem;
        self->spare_size = size;
    } else
        free(mem);
    if (self->sbuf == bufid)
        self->sbuf = 0;
    if (self->rbuf == bufid)
        self->rbuf = 0;
    for (int i = 0; i < self->nqueue; i++)
        if (self->queue[i] == bufid) {
            s_unqueue_at(self, i);
            break;
        }
    return 0;
}

/*  A new packing buffer, in the kept memory. */
pvm_buf_t *pvm_ctx_new_buf(pvm_ctx_t *self, int encoding)
{
    assert(self);
    pvm_buf_t *buf = pvm_buf_new_in(encoding, self->spare, self->spare_size);
    if (buf) {
        self->spare = NULL;
        self->spare_size = 0;
    }
    return buf;
}

/*  Source, tag, context of a buffer. */
int pvm_ctx_buf_info(pvm_ctx_t *self, int bufid, int *src, int *tag, int *ctxid)
{
    assert(self);
    slot_t *slot = s_slot(self, bufid);
    if (!slot)
        return GIMPI_ENOSUCHBUF;
    if (src)
        *src = slot->src;
    if (tag)
        *tag = slot->tag;
    if (ctxid)
        *ctxid = slot->ctxid;
    return 0;
}

/*  Active send buffer id. */
int pvm_ctx_sbuf(const pvm_ctx_t *self)
{
    assert(self);
    return self->sbuf;
}

/*  Active receive buffer id. */
int pvm_ctx_rbuf(const pvm_ctx_t *self)
{
    assert(self);
    return self->rbuf;
}

/*  Checks that bufid can become active: 0, or a known buffer. */
static int s_check_settable(pvm_ctx_t *self, int bufid)
{
    if (bufid < 0)
        return GIMPI_EBADPARAM;
    if (bufid > 0 && !s_slot(self, bufid))
        return GIMPI_ENOSUCHBUF;
    return 0;
}

/*  Switches the active send buffer. */
int pvm_ctx_set_sbuf(pvm_ctx_t *self, int bufid)
{
    assert(self);
    int rc = s_check_settable(self, bufid);
    if (rc < 0)
        return rc;
    int old = self->sbuf;
    self->sbuf = bufid;
    if (bufid && self->rbuf == bufid)
        self->rbuf = 0;
    return old;
}

/*  Switches the active receive buffer. */
int pvm_ctx_set_rbuf(pvm_ctx_t *self, int bufid)
{
    assert(self);
    int rc = s_check_settable(self, bufid);
    if (rc < 0)
        return rc;
    int old = self->rbuf;
    self->rbuf = bufid;
    if (bufid && self->sbuf == bufid)
        self->sbuf = 0;
    return old;
}

/*  A buffer's bytes as the transport takes them (the layer's one rule, for send and
 *  bcast): the buffer's own block with PVM_BUF_HEADROOM bytes of room in front for the
 *  transport's header (frame), or the caller's memory itself for one PvmDataInPlace
 *  segment (frame NULL); and the encoding on the wire. */
typedef struct {
    int enc;
    uint8_t *frame;
    const uint8_t *bytes;
    size_t len;
    int wid;                    /* the buffer's wait id (pvm_setminfo), usually 0 */
} wire_t;

/*  Fills w for buffer bufid after the checks (bad: the caller's parameters are wrong) and
 *  the enrolment.  0 or a GIMPI_E* code. */
static int s_wire(pvm_ctx_t *self, int bufid, int bad, wire_t *w)
{
    slot_t *slot = s_slot(self, bufid);
    if (!slot)
        return GIMPI_ENOSUCHBUF;
    pvm_buf_t *buf = slot->buf;
    w->wid = slot->wid;
    if (bad)
        return GIMPI_EBADPARAM;
    int rc = pvm_ctx_enrol(self);
    if (rc < 0)
        return rc;
    w->len = 0;
    w->frame = NULL;
    if (pvm_buf_encoding(buf) == PVM_BUF_INPLACE)   /* one segment: the caller's memory */
        w->bytes = pvm_buf_send_bytes(buf, &w->len);
    else if ((w->frame = pvm_buf_frame(buf, &w->len)) != NULL)     /* room in front */
        w->bytes = w->frame + PVM_BUF_HEADROOM;
    else
        w->bytes = NULL;
    if (!w->bytes)              /* unpacked straight into the caller's memory, or ENOMEM */
        return GIMPI_ENODATA;
    w->enc = pvm_buf_encoding(buf) == PVM_BUF_DEFAULT ? PVM_BUF_DEFAULT : PVM_BUF_RAW;
    return 0;
}

/*  Sends a buffer's bytes. */
GIMPI_HOT int pvm_ctx_send(pvm_ctx_t *self, int bufid, int dst, int tag, int ctxid)
{
    assert(self);
    if (ctxid == PVM_CTX_CURRENT)
        ctxid = self->context;
    wire_t w;
    int rc = s_wire(self, bufid, dst <= 0 || tag < 0, &w);
    if (rc < 0)
        return rc;
    if (__builtin_expect(self->tev & PVM_CTX_TEV_RECORD, 0))
        gimpi_trace_send(self->rec, dst, tag, ctxid, (int)w.len);
    if (w.wid && self->ops->send_wid)   /* pvm_setminfo's wait id travels along */
        return self->ops->send_wid(self->impl, dst, tag, ctxid, w.wid, w.enc, w.bytes, w.len);
    return self->ops->send(self->impl, dst, tag, ctxid, w.enc, w.frame, w.bytes, w.len);
}

/*  Sends a buffer's bytes to a group's members (pvm_ctx.h). */
int pvm_ctx_bcast(pvm_ctx_t *self, int bufid, const char *group, int tag, int ctxid)
{
    assert(self);
    if (ctxid == PVM_CTX_CURRENT)
        ctxid = self->context;
    wire_t w;
    int rc = s_wire(self, bufid, tag < 0, &w);     /* enrolled: the transport is there */
    if (rc < 0)
        return rc;
    if (!self->ops->bcast)
        return GIMPI_ESYSERR;
    return self->ops->bcast(self->impl, group, tag, ctxid, w.enc, w.frame, w.bytes, w.len);
}

/*  Does queued message bufid match? (ctxid -1: any context, as PVM's default matcher) */
static int s_matches(pvm_ctx_t *self, int bufid, int src, int tag, int ctxid)
{
    slot_t *slot = s_slot(self, bufid);
    return slot && (src == -1 || slot->src == src) && (tag == -1 || slot->tag == tag)
        && (slot->ctxid == ctxid || ctxid == -1);
}

/*  Index of the queued message pvm_recvf's matcher picks (the first it rates 1, else the
 *  first it rates highest), -1 for none, or -1 with *err set when it fails. */
static __attribute__((noinline, cold)) int s_find_custom(pvm_ctx_t *self, int src, int tag,
                                                          int *err)
{
    int best = -1, bestcc = 0;
    for (int i = 0; i < self->nqueue; i++) {
        int cc = self->match(self->queue[i], src, tag);
        if (cc < 0) {
            *err = cc;
            return -1;
        }
        if (cc == 1)
            return i;
        if (cc > bestcc) {
            bestcc = cc;
            best = i;
        }
    }
    return best;
}

/*  Index of the oldest queued match, or -1 (with *err < 0 when a matcher failed). */
static inline int s_find(pvm_ctx_t *self, int src, int tag, int ctxid, int *err)
{
    if (!self->nqueue)                  /* the common case: nothing waits */
        return -1;
    if (self->match)                    /* pvm_recvf's: off the fast path */
        return s_find_custom(self, src, tag, err);
    for (int i = 0; i < self->nqueue; i++)
        if (s_matches(self, self->queue[i], src, tag, ctxid))
            return i;
    return -1;
}

/*  The handler for a message, or -1. */
static int s_mhf_for(const pvm_ctx_t *self, const slot_t *m)
{
    for (int i = 0; i < self->mhfcap; i++) {
        const mhf_t *h = &self->mhf[i];
        if (h->func && (h->src == -1 || h->src == m->src) && (h->tag == -1 || h->tag == m->tag)
            && (h->ctxid == -1 || h->ctxid == m->ctxid))
            return i;
    }
    return -1;
}

/*  Runs handler k on message id as libpvm does (pvm_ctx.h, pvm_ctx_add_mhf): afterwards
 *  the receive and send buffers the handler left are freed, as libpvm's
 *  pvm_freebuf(pvm_setrbuf(saved)) does (a message the handler made inactive itself is
 *  the handler's to free, as there). */
static void s_mhf_run(pvm_ctx_t *self, int k, int id)
{
    pvm_ctx_mhf_fn *f = self->mhf[k].func;     /* the handler may delete itself */
    int sbuf = self->sbuf, rbuf = self->rbuf, context = self->context;
    self->sbuf = 0;
    self->rbuf = id;
    self->context = s_slot(self, id)->ctxid;
    f(id);
    self->context = context;
    int hs = self->sbuf, hr = self->rbuf;
    self->sbuf = s_slot(self, sbuf) ? sbuf : 0;    /* the handler may have freed them */
    self->rbuf = s_slot(self, rbuf) ? rbuf : 0;
    if (hs && hs != self->sbuf && hs != self->rbuf)
        pvm_ctx_free_buf(self, hs);
    if (hr && hr != self->rbuf && hr != self->sbuf)
        pvm_ctx_free_buf(self, hr);     /* the message, unless the handler switched away */
}

/*  Records a received message's wait id and gives the message to its handler, if one
 *  matches: 1 (then it is gone), else 0.  Off the fast path (kept out of s_enqueue, whose
 *  callers run it for every message). */
static __attribute__((noinline, cold)) int s_mhf_take(pvm_ctx_t *self, int id, int wid)
{
    self->slots[id - 1].wid = wid;      /* the sender's wait id, if any (one test for both) */
    if (!self->nmhf)
        return 0;
    int k = s_mhf_for(self, &self->slots[id - 1]);
    if (k < 0)
        return 0;
    s_mhf_run(self, k, id);
    return 1;
}

/*  Numbers a message that arrived, for its RECV record, and records the queue's length
 *  (the message is about to join it). */
static __attribute__((noinline, cold)) void s_trace_arrive(pvm_ctx_t *self, int id)
{
    slot_t *slot = &self->slots[id - 1];
    slot->dst = gimpi_trace_arrive(self->rec, slot->src);      /* (!dstset) */
    int n = self->nqueue + 1;
    gimpi_trace_rec(self->rec, GIMPI_TEV_QUEUE, 0, &n, 1, NULL);
}

/*  Records the task taking message id (out of the queue now). */
static __attribute__((noinline, cold)) void s_trace_take(pvm_ctx_t *self, int id)
{
    const slot_t *slot = &self->slots[id - 1];
    int v[5] = { slot->src, slot->tag, slot->ctxid, (int)pvm_buf_len(slot->buf),
                 slot->dstset ? 0 : slot->dst };
    gimpi_trace_rec(self->rec, GIMPI_TEV_RECV, 0, v, 5, NULL);
    gimpi_trace_rec(self->rec, GIMPI_TEV_QUEUE, 0, &self->nqueue, 1, NULL);
}

/*  Turns a transport message into a queued buffer (0 when a handler took it); its id or
 *  < 0. */
GIMPI_HOT static int s_enqueue(pvm_ctx_t *self, pvm_msg_t *msg)
{
    if (self->nqueue == self->qcap) {
        int cap = self->qcap ? 2 * self->qcap : 16;
        int *q = realloc(self->queue, (size_t)cap * sizeof *q);
        if (!q) {
            free(msg->bytes);
            return GIMPI_ENOMEM;
        }
        self->queue = q;
        self->qcap = cap;
    }
    pvm_buf_t *buf = msg->body && self->ops->body
                         ? pvm_buf_pending(msg->encoding, msg->len, self->ops->body, self->impl,
                                           msg->body)
                     : msg->len ? pvm_buf_adopt_at(msg->encoding, msg->bytes, msg->off, msg->len)
                                : pvm_buf_new(msg->encoding == PVM_BUF_DEFAULT
                                              ? PVM_BUF_DEFAULT : PVM_BUF_RAW);
    if (!buf) {
        if (msg->body && self->ops->body)
            self->ops->body(self->impl, msg->body, NULL);
        free(msg->bytes);
        return msg->encoding < 0 || msg->encoding > 2 ? GIMPI_EBADMSG : GIMPI_ENOMEM;
    }
    if (!msg->len)
        free(msg->bytes);
    int id = pvm_ctx_add_buf(self, buf, msg->src, msg->tag, msg->ctxid);
    if (id <= 0)
        return id;
    if (__builtin_expect(self->tev & PVM_CTX_TEV_RECORD, 0))
        s_trace_arrive(self, id);
    if ((self->nmhf | msg->wid) && s_mhf_take(self, id, msg->wid))
        return 0;                       /* a handler took it: never queued */
    self->queue[self->nqueue++] = id;
    return id;
}

/*  Sets pvm_notify's hooks. */
void pvm_ctx_set_notify(pvm_ctx_t *self, const pvm_ctx_notify_t *notify)
{
    assert(self);
    pvm_ctx_notify_t old = self->notify;
    self->notify = notify ? *notify : (pvm_ctx_notify_t){ 0 };
    if (old.destroy && old.arg != self->notify.arg)
        old.destroy(old.arg);
}

/*  The hooks' arg. */
void *pvm_ctx_notify_arg(const pvm_ctx_t *self)
{
    assert(self);
    return self->notify.poll ? self->notify.arg : NULL;
}

/*  Queues a message of ints as if it had arrived. */
int pvm_ctx_inject(pvm_ctx_t *self, int src, int tag, int ctxid, const int *vals, int n)
{
    assert(self);
    pvm_buf_t *b = pvm_buf_new(PVM_BUF_DEFAULT);
    size_t len = 0;
    const uint8_t *bytes = b && pvm_buf_pack(b, PVM_INT, vals, n, 1) == 0
                         ? pvm_buf_bytes(b, &len) : NULL;
    void *copy = bytes && len ? malloc(len) : NULL;
    if (copy)
        memcpy(copy, bytes, len);
    pvm_buf_destroy(&b);
    if (!copy)
        return GIMPI_ENOMEM;
    pvm_msg_t msg = { src, tag, ctxid, PVM_BUF_DEFAULT, copy, len, 0, NULL, 0 };
    return s_enqueue(self, &msg);
}

/*  Queues whatever else has arrived (for pvm_recvf's matcher, which picks the best of
 *  everything there, as libpvm's after reading all its socket has). */
static void s_drain(pvm_ctx_t *self)
{
    pvm_msg_t msg = { 0 };
    while (self->ops->next(self->impl, 0, &msg) == 1 && s_enqueue(self, &msg) >= 0)
        msg = (pvm_msg_t){ 0 };
}

/*  Looks through the queue again after a handler ran or with pvm_recvf's matcher (after
 *  queueing all that has arrived): as s_find. */
static __attribute__((noinline, cold)) int s_rescan(pvm_ctx_t *self, int src, int tag,
                                                    int ctxid, int *err)
{
    if (self->match)
        s_drain(self);
    return s_find(self, src, tag, ctxid, err);
}

/*  A slice of a wait (of `wait` ms) ended with nothing: when the slices add up to
 *  GIMPI_STATUS_AFTER the wait is published (a wait cut in slices shorter than that, for
 *  pvm_notify, never runs the transport's hook).  Only on this slow path is the clock read. */
static void s_status_slices(pvm_ctx_t *self, int wait)
{
    int64_t now = gimpi_now_ms();
    if (!self->wait.t0_ms)
        self->wait.t0_ms = now - wait;
    if (now - self->wait.t0_ms >= self->status_after)
        pvm_status_publish(s_groups(self), &self->wait, PvmBaseContext,
                           (int)(now - self->wait.t0_ms), self->nqueue);
}

/*  1 when a wait for (src, tag, ctxid) must look for notifications as it waits. */
static int s_notify_due(pvm_ctx_t *self, int src, int tag, int ctxid)
{
    return self->notify.poll && self->notify.may_match
        && self->notify.may_match(self->notify.arg, src, tag, ctxid);
}

/*  Waits for a match: its queue index, or -1 with *err 0 on timeout, < 0 on failure.
 *  While a notification may match, the transport is asked in slices of at most
 *  PVM_CTX_NOTIFY_SLICE_MS and the notifications are polled between them; a slice that
 *  the transport ends early with nothing (every peer gone: it would fail the wait) is
 *  spent waiting for notifications instead, since one may still come. */
GIMPI_HOT static int s_wait_loop(pvm_ctx_t *self, int src, int tag, int ctxid,
                                 int timeout_ms, int *err)
{
    int i;
    int rc = pvm_ctx_enrol(self);
    if (rc < 0) {
        *err = rc;
        return -1;
    }
    long long deadline = timeout_ms > 0 ? gimpi_now_ms() + timeout_ms : 0;
    for (;;) {
        int wait = timeout_ms;
        if (timeout_ms > 0) {
            long long left = deadline - gimpi_now_ms();
            wait = left > 0 ? (int)left : 0;
        }
        int full = wait;
        long long t0 = 0;
        if (s_notify_due(self, src, tag, ctxid)) {
            rc = self->notify.poll(self->notify.arg, self, 0);
            if (rc >= 0 && ((i = s_find(self, src, tag, ctxid, err)) >= 0 || *err))
                return i;
            if (wait < 0 || wait > PVM_CTX_NOTIFY_SLICE_MS)
                wait = PVM_CTX_NOTIFY_SLICE_MS;
            t0 = gimpi_now_ms();
        }
        pvm_msg_t msg = { 0 };
        rc = src > 0 && self->ops->next_from
                 ? self->ops->next_from(self->impl, wait, src, &msg)
                 : self->ops->next(self->impl, wait, &msg);
        if (rc < 0) {
            *err = rc;
            return -1;
        }
        if (rc == 0) {
            if (wait > 0 && self->status_after > 0 && !self->wait.published)
                s_status_slices(self, wait);
            if (t0 && wait > 0) {
                int rest = wait - (int)(gimpi_now_ms() - t0);
                rc = self->notify.poll(self->notify.arg, self, rest > 0 ? rest : 0);
                if (rc >= 0 && ((i = s_find(self, src, tag, ctxid, err)) >= 0 || *err))
                    return i;
            }
            if (full == 0)
                return -1;
            continue;           /* woke early: wait for the rest */
        }
        int id = s_enqueue(self, &msg);
        if (id < 0) {
            *err = id;
            return -1;
        }
        if (!self->match && s_matches(self, id, src, tag, ctxid))
            return self->nqueue - 1;    /* (id 0 never matches) */
        if ((id == 0 || self->match)    /* a handler ran, or a custom matcher: look again */
            && ((i = s_rescan(self, src, tag, ctxid, err)) >= 0 || *err))
            return i;
    }
}

/*  Waits for a match (s_wait_loop) once nothing in the queue matches: notes the wait for
 *  the live view first and clears what was published of it after (pvm_status.h).  The
 *  fast path, a match already queued, notes nothing. */
GIMPI_HOT static int s_wait_match(pvm_ctx_t *self, int src, int tag, int ctxid, int timeout_ms,
                                  int *err)
{
    *err = 0;
    int i = s_find(self, src, tag, ctxid, err);
    if (i >= 0 || *err)
        return i;
    self->wait = (pvm_wait_t){ 1, 0, src, tag, ctxid, timeout_ms, 0 };
    i = s_wait_loop(self, src, tag, ctxid, timeout_ms, err);
    self->wait.active = 0;
    if (self->wait.published)
        pvm_status_clear(s_groups(self), &self->wait);
    return i;
}

/*  Takes a matching message out of the queue. */
GIMPI_HOT int pvm_ctx_recv(pvm_ctx_t *self, int src, int tag, int ctxid, int timeout_ms)
{
    assert(self);
    if ((src < -1 && src != PVM_CTX_DAEMON_TID) || src == 0 || tag < -1)
        return GIMPI_EBADPARAM;
    if (ctxid == PVM_CTX_CURRENT)
        ctxid = self->context;
    int err;
    int i = s_wait_match(self, src, tag, ctxid, timeout_ms, &err);
    if (i < 0)
        return err;
    int id = self->queue[i];
    s_unqueue_at(self, i);
    if (__builtin_expect(self->tev & PVM_CTX_TEV_RECORD, 0))
        s_trace_take(self, id);
    return id;
}

/*  Looks for a matching message without taking it. */
int pvm_ctx_probe(pvm_ctx_t *self, int src, int tag, int ctxid)
{
    assert(self);
    if ((src < -1 && src != PVM_CTX_DAEMON_TID) || src == 0 || tag < -1)
        return GIMPI_EBADPARAM;
    if (ctxid == PVM_CTX_CURRENT)
        ctxid = self->context;
    int err;
    int i = s_wait_match(self, src, tag, ctxid, 0, &err);
    return i < 0 ? err : self->queue[i];
}

/*  Where option `what` is kept, or NULL for an unknown option. */
int *pvm_ctx_opt(pvm_ctx_t *self, int what)
{
    assert(self);
    if (what <= 0 || what >= PVM_CTX_NOPTS)
        return NULL;
    return &self->opts[what];
}

/*  Keeps mem as the context's answer in slot which (freeing the previous one). */
void pvm_ctx_keep(pvm_ctx_t *self, int which, void *mem)
{
    assert(self && which >= 0 && which < PVM_CTX_NKEPT);
    free(self->kept[which]);
    self->kept[which] = mem;
}

/*  What slot which keeps. */
void *pvm_ctx_kept(const pvm_ctx_t *self, int which)
{
    assert(self && which >= 0 && which < PVM_CTX_NKEPT);
    return self->kept[which];
}

/*  The native task behind the transport, or NULL. */
static gimpi_t *s_task(pvm_ctx_t *self)
{
    return self->ops && self->ops->task ? self->ops->task(self->impl) : NULL;
}

/*  Starts or stops catching children's output, in PvmShowTids' format. */
int pvm_ctx_catchout(pvm_ctx_t *self, FILE *f)
{
    assert(self);
    gimpi_t *task = s_task(self);
    if (!task)
        return f ? GIMPI_ENOTIMPL : 0;
    int rc = gimpi_catchout(task, f, self->opts[PvmShowTids] ? 0 : GIMPI_CATCHOUT_NOTIDS);
    if (rc == 0) {
        self->catchout = f;
        self->opts[PvmOutputTid] = f ? self->tid : 0;
    }
    return rc;
}

/*  pvm_catchout's file. */
FILE *pvm_ctx_catchout_file(const pvm_ctx_t *self)
{
    assert(self);
    return self->catchout;
}

/*  Waits, bounded, for the caught children's output to end. */
int pvm_ctx_catchout_wait(pvm_ctx_t *self, int timeout_ms)
{
    assert(self);
    gimpi_t *task = s_task(self);
    return task && self->catchout ? gimpi_catchout_wait(task, timeout_ms) : 0;
}

/*  Keeps the trace state. */
void pvm_ctx_set_tev(pvm_ctx_t *self, void *tev, void (*destroy)(void *))
{
    assert(self);
    self->tevstate = tev;
    self->tev_destroy = destroy;
}

/*  Sets the recorder. */
void pvm_ctx_set_rec(pvm_ctx_t *self, struct gimpi_trace_t *rec)
{
    assert(self);
    self->rec = rec;
    self->tev = rec ? self->tev | PVM_CTX_TEV_RECORD : self->tev & ~PVM_CTX_TEV_RECORD;
}

/*  The recorder. */
struct gimpi_trace_t *pvm_ctx_rec(const pvm_ctx_t *self)
{
    assert(self);
    return self->rec;
}

/*  The trace state. */
void *pvm_ctx_tev(const pvm_ctx_t *self)
{
    assert(self);
    return self->tevstate;
}

/*  The current context. */
int pvm_ctx_context(const pvm_ctx_t *self)
{
    assert(self);
    return self->context;
}

/*  Switches the current context. */
int pvm_ctx_set_context(pvm_ctx_t *self, int ctxid)
{
    assert(self);
    int old = self->context;
    self->context = ctxid;
    return old;
}

/*  The serial of a tid that no other task of the virtual machine shares: groupd hands out
 *  tids from 0x40001 up and never twice; a task without groupd (tid = rank + 1) is alone
 *  in its job.  0 when it does not fit the 20 bits a context id has for it. */
static int s_serial(int tid)
{
    int s = tid > 0x40000 ? tid - 0x40000 : tid;
    return s > 0 && s < (1 << 20) ? s : 0;
}

/*  Makes a context. */
int pvm_ctx_new_context(pvm_ctx_t *self)
{
    assert(self);
    int rc = pvm_ctx_enrol(self);
    if (rc < 0)
        return rc;
    int serial = s_serial(self->tid);
    for (int n = 1; serial && n < PVM_CTX_PER_TASK; n++)
        if (!(self->ctxmap[n / 32] & (1u << (n % 32)))) {
            self->ctxmap[n / 32] |= 1u << (n % 32);
            return serial << 11 | n;
        }
    return GIMPI_EOUTOFRES;
}

/*  Releases a context of this task. */
int pvm_ctx_free_context(pvm_ctx_t *self, int ctxid)
{
    assert(self);
    int serial = s_serial(self->tid), n = ctxid & (PVM_CTX_PER_TASK - 1);
    if (!serial || ctxid <= 0 || ctxid >> 11 != serial
        || !(self->ctxmap[n / 32] & (1u << (n % 32))))
        return GIMPI_ENOTFOUND;
    self->ctxmap[n / 32] &= ~(1u << (n % 32));
    return 0;
}

/*  Installs pvm_recvf's matcher. */
pvm_ctx_match_fn *pvm_ctx_set_match(pvm_ctx_t *self, pvm_ctx_match_fn *f)
{
    assert(self);
    pvm_ctx_match_fn *old = self->match;
    self->match = f;
    return old;
}

/*  Adds a message handler. */
int pvm_ctx_add_mhf(pvm_ctx_t *self, int src, int tag, int ctxid, pvm_ctx_mhf_fn *f)
{
    assert(self);
    if (!f)
        return GIMPI_EBADPARAM;
    int k = -1;
    for (int i = 0; i < self->mhfcap; i++) {
        const mhf_t *h = &self->mhf[i];
        if (!h->func) {
            if (k < 0)
                k = i;
        } else if ((h->src == -1 || src == -1 || h->src == src)
                   && (h->tag == -1 || tag == -1 || h->tag == tag)
                   && (h->ctxid == -1 || ctxid == -1 || h->ctxid == ctxid))
            return GIMPI_EEXISTS;       /* some messages would have two handlers */
    }
    if (k < 0) {
        int cap = self->mhfcap ? 2 * self->mhfcap : 8;
        mhf_t *m = cap < 1 << 20 ? realloc(self->mhf, (size_t)cap * sizeof *m) : NULL;
        if (!m)
            return GIMPI_ENOMEM;
        memset(m + self->mhfcap, 0, (size_t)(cap - self->mhfcap) * sizeof *m);
        k = self->mhfcap;
        self->mhf = m;
        self->mhfcap = cap;
    }
    self->mhf[k] = (mhf_t){ src, tag, ctxid, f };
    self->nmhf++;
    return k;
}

/*  Removes a message handler. */
int pvm_ctx_del_mhf(pvm_ctx_t *self, int id)
{
    assert(self);
    if (id < 0)
        return GIMPI_EBADPARAM;
    if (id >= self->mhfcap || !self->mhf[id].func)
        return GIMPI_ENOTFOUND;
    self->mhf[id].func = NULL;
    self->nmhf--;
    return 0;
}

/*  Handler id's match fields, for a listing. */
int pvm_ctx_mhf_info(const pvm_ctx_t *self, int id, int *src, int *tag, int *ctxid)
{
    assert(self);
    if (id < 0 || id >= self->mhfcap || !self->mhf[id].func)
        return GIMPI_ENOTFOUND;
    *src = self->mhf[id].src;
    *tag = self->mhf[id].tag;
    *ctxid = self->mhf[id].ctxid;
    return 0;
}

/*  The ids handlers can have: 0 .. this - 1. */
int pvm_ctx_mhf_cap(const pvm_ctx_t *self)
{
    assert(self);
    return self->mhfcap;
}

/*  A buffer's wait id and destination. */
int pvm_ctx_buf_minfo(pvm_ctx_t *self, int bufid, int *wid, int *dst)
{
    assert(self);
    slot_t *slot = s_slot(self, bufid);
    if (!slot)
        return GIMPI_ENOSUCHBUF;
    *wid = slot->wid;
    *dst = slot->dstset ? slot->dst : slot->src ? self->tid : 0;   /* received: to us */
    return 0;
}

/*  Sets a buffer's message information. */
int pvm_ctx_set_minfo(pvm_ctx_t *self, int bufid, int src, int tag, int ctxid, int wid,
                      int dst)
{
    assert(self);
    slot_t *slot = s_slot(self, bufid);
    if (!slot)
        return GIMPI_ENOSUCHBUF;
    *slot = (slot_t){ slot->buf, src, tag, ctxid, wid, dst, true };
    return 0;
}
