/*  pvm_transport_impi.c — the PVM layer's default transport: PVM messages over the task's
 *  real data plane (gimpi_init / gimpi_msg), replacing the "no daemon" stub.
 *
 *  Enrolment (the first pvm_* call that needs it) is gimpi_init: the task joins the job
 *  gimpirun started it in, or becomes a one-task job of its own when started from the
 *  shell, or a dynamic host when a spawner started it.  tid = the data plane's tid
 *  (groupd's: tid base + world rank + 1); every task of a gimpirun job is a sibling of
 *  the others; a spawned task's parent and siblings are its spawner and the tasks of the
 *  same spawn (gimpi_spawn.c does the spawning).  The group calls reach groupd through
 *  gimpi_groups(task), the group operations the data plane through a gimpi_coll_t
 *  (entries `groups`, `coll`, `bcast`; pvm_group.c).
 *
 *  Wire format (doc/data-plane.md, "PVM messages"): each PVM message is one data-plane
 *  message on GIMPI_CID_PVM with the PVM tag, starting with a 16-byte header (pvm_header.h:
 *      byte 0 'P', byte 1 version 1, byte 2 encoding (0 default/XDR, 1 raw), byte 3 flags,
 *      bytes 4-7 PVM context id (big endian, signed), bytes 8-15 body length (big endian))
 *  followed by the body when it is at most INLINE_MAX bytes (GIMPI_PVM_INLINE when set;
 *  one message of header and body is cheaper than a second packet), the header written
 *  into the room every PVM buffer keeps in front of its bytes (no copy; the caller's own
 *  memory of a PvmDataInPlace buffer is copied behind a header instead).  pvm_send and
 *  pvm_bcast follow this one rule (s_inline).  A longer body travels as a separate message on
 *  GIMPI_CID_PVM_BODY, same tag, straight from the PVM buffer (flag BODY_FOLLOWS); the
 *  receiver takes it from the same sender right after the header, so bodies pair with
 *  headers by the data plane's per-sender order.  Sends are standard sends: they return
 *  once the data is out or copied by the data plane, whatever the size.
 *
 *  pvm_bcast sends an inline message as one data-plane bcast.  A longer
 *  body travels as its own bcast on GIMPI_CID_PVM_BCAST (flags BODY_FOLLOWS | BCAST_BODY),
 *  tagged with a per-sender bcast sequence number that a 24-byte header (the 16 bytes,
 *  then the sequence as 8 big-endian bytes) names: so the header is small and taken at
 *  once, the receiver posts the body's receive before most of it arrives (no unexpected
 *  copy of a first packet, an early SYNCACK), and bodies pair with headers by the number,
 *  whatever routes (direct or the forwarding tree) successive bodies took.
 *
 *  next() takes the oldest arrived message on GIMPI_CID_PVM from any source with any tag
 *  (gimpi_msg_take_cid: one wait, and a short message's memory handed over as it lies),
 *  so PVM messages come out in arrival order.  A body that
 *  follows its header stays on the data plane (a token, entry `body`) until the buffer is
 *  unpacked or freed: unpacked whole, as it is, it is received straight into the caller's
 *  memory (pvm_buf_pending); bodies of one envelope are taken in header order.
 *
 *  Leaving (pvm_exit, or process exit without it): the data plane's finalize without the
 *  world barrier — flush what this task sent, PK_FINI to every other task (they answer at
 *  once), close.  PVM tasks leave at different times and some never call pvm_exit, so a
 *  job-wide barrier would hang or slow them; pvm_enrol.c's atexit hook makes an exit
 *  without pvm_exit deliver what was sent, as PVM's daemon would.
 */
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_header.h"
#include "gimpi.h"
#include "gimpi_msg.h"
#include "net/msg_status_hook.h"
#include "impi/impi_wire.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HDR_SIZE PVM_HDR_SIZE
#define BODY_FOLLOWS PVM_HDR_BODY_FOLLOWS
#define BCAST_BODY PVM_HDR_BCAST_BODY
#define BCAST_HDR_SIZE PVM_HDR_BCAST_SIZE
#define INLINE_MAX (64 * 1024)

/*  A body whose header has been delivered but which is still on the data plane. */
typedef struct body_t {
    uint64_t cid;
    int src, tag;
    size_t len;
    uint8_t *bytes;             /* taken early (an older body of the same envelope) */
    int error;                  /* ... or what taking it gave */
    struct body_t *next;        /* in delivery order */
} body_t;

typedef struct {
    gimpi_t *task;
    gimpi_msg_t *msg;
    gimpi_coll_t *coll;         /* the group operations over msg */
    int *tids;                  /* every task of the job (pvm_siblings) */
    int ntids;
    uint32_t bcast_seq;         /* tags of this task's long bcast bodies */
    body_t *bodies;             /* pending bodies, oldest first */
    size_t inline_max;          /* longest body sent inline (INLINE_MAX, GIMPI_PVM_INLINE) */
    pid_t pid;                  /* the process that enrolled (a forked child must not leave) */
    char why[512];              /* why the last wait failed, when this file knows better */
} impi_tp_t;

static const pvm_transport_ops_t s_ops;

/*  Seconds from the environment, else a default, as milliseconds. */
static int s_env_ms(const char *name, int dflt_s)
{
    const char *v = gimpi_env(name);
    long s = v && *v ? strtol(v, NULL, 10) : 0;
    return (int)((s > 0 && s < 86400 ? s : dflt_s) * 1000);
}

/*  vtable: own tid. */
static int s_mytid(void *impl)
{
    return gimpi_msg_mytid(((impi_tp_t *)impl)->msg);
}

/*  vtable: the spawner's tid; none for shell- and gimpirun-started tasks. */
static int s_parent(void *impl)
{
    return gimpi_parent(((impi_tp_t *)impl)->task);
}

/*  vtable: starts tasks (gimpi_spawn_on: here, or through the virtual machine). */
static int s_spawn(void *impl, const char *file, char *const argv[], int flags,
                   const char *where, int n, int *tids)
{
    return gimpi_spawn_on(((impi_tp_t *)impl)->task, file, argv, flags, where, n, tids);
}

/*  vtable: the native task. */
static gimpi_t *s_task(void *impl)
{
    return ((impi_tp_t *)impl)->task;
}

/*  The one message of header and inline body (len <= inline_max, the caller's test): the
 *  header goes into the room in front of the bytes when there is a frame (no copy), else
 *  header and body are copied into small (size bytes) when they fit, or a new block; free
 *  it with s_inline_free.  NULL on ENOMEM. */
static uint8_t *s_inline(int encoding, int ctxid, uint8_t *frame, const void *bytes, size_t len,
                         uint8_t *small, size_t size)
{
    uint8_t *b = frame ? frame + PVM_BUF_HEADROOM - HDR_SIZE
                       : HDR_SIZE + len <= size ? small : malloc(HDR_SIZE + len);
    if (!b)
        return NULL;
    if (!frame && len)
        memcpy(b + HDR_SIZE, bytes, len);
    pvm_header_put(b, encoding, 0, ctxid, len);
    return b;
}

/*  Gives back what s_inline took. */
static void s_inline_free(uint8_t *b, const uint8_t *frame, const uint8_t *small)
{
    if (!frame && b != small)
        free(b);
}

/*  A send's result as PVM's: a destination that has left the job (finished or died)
 *  silently drops the message, as PVM's daemons do. */
static int s_send_rc(int rc)
{
    if (rc == GIMPI_ENOTASK)
        return GIMPI_EBADPARAM;     /* no task ever had (or still has) that tid */
    return rc == GIMPI_ESYSERR ? 0 : rc;
}

/*  vtable: a standard send of header + body inline (s_inline), or of the header, then the
 *  body as a second message.  A destination that has left the job (finished or died)
 *  silently drops the message, as PVM's daemons do. */
GIMPI_HOT static int s_send(void *impl, int dst, int tag, int ctxid, int encoding, uint8_t *frame,
                  const void *bytes, size_t len)
{
    impi_tp_t *self = impl;
    if (dst <= 0)
        return GIMPI_EBADPARAM;
    int rc;
    if (len <= self->inline_max) {
        uint8_t small[HDR_SIZE + 1024];
        uint8_t *b = s_inline(encoding, ctxid, frame, bytes, len, small, sizeof small);
        if (!b)
            return GIMPI_ENOMEM;
        rc = gimpi_msg_send_cid(self->msg, GIMPI_CID_PVM, dst, tag, b, HDR_SIZE + len);
        s_inline_free(b, frame, small);
    } else {
        uint8_t h[HDR_SIZE];
        pvm_header_put(h, encoding, BODY_FOLLOWS, ctxid, len);
        rc = gimpi_msg_send_cid(self->msg, GIMPI_CID_PVM, dst, tag, h, HDR_SIZE);
        if (rc == 0)
            rc = gimpi_msg_send_cid(self->msg, GIMPI_CID_PVM_BODY, dst, tag, bytes, len);
    }
    return s_send_rc(rc);
}

/*  vtable: send for a message with a wait id (pvm_setminfo): the header, the wait id
 *  (flag PVM_HDR_WID) and the body copied behind them when inline, else the header and
 *  wait id, then the body as in s_send.  Only such messages change the wire. */
static int s_send_wid(void *impl, int dst, int tag, int ctxid, int wid, int encoding,
                      const void *bytes, size_t len)
{
    impi_tp_t *self = impl;
    if (dst <= 0)
        return GIMPI_EBADPARAM;
    size_t hl = HDR_SIZE + PVM_HDR_WID_SIZE;
    int inl = len <= self->inline_max, rc;
    uint8_t h[HDR_SIZE + PVM_HDR_WID_SIZE];
    uint8_t *b = inl ? malloc(hl + len) : h;
    if (!b)
        return GIMPI_ENOMEM;
    pvm_header_put(b, encoding, PVM_HDR_WID | (inl ? 0 : BODY_FOLLOWS), ctxid, len);
    pvm_header_put_wid(b, wid);
    if (inl && len)
        memcpy(b + hl, bytes, len);
    rc = gimpi_msg_send_cid(self->msg, GIMPI_CID_PVM, dst, tag, b, hl + (inl ? len : 0));
    if (inl)
        free(b);
    else if (rc == 0)
        rc = gimpi_msg_send_cid(self->msg, GIMPI_CID_PVM_BODY, dst, tag, bytes, len);
    return s_send_rc(rc);
}

/*  Receives exactly one message (from src, with tag, in cid) of len bytes into dst, or
 *  reads and drops it when dst is NULL.  0 or < 0; the message is taken off the data plane
 *  in every case, so that a later body cannot pair with the wrong header. */
static int s_take_into(impi_tp_t *self, uint64_t cid, int src, int tag, void *dst, size_t len)
{
    gimpi_msg_req_t *req = NULL;
    gimpi_status_t st;
    int rc = gimpi_msg_irecv_cid(self->msg, cid, src, tag, dst, dst ? len : 0, &req);
    if (rc == 0)
        rc = gimpi_msg_wait(self->msg, &req, &st);
    if (!dst)
        return rc == GIMPI_EOVERFLOW ? 0 : rc;
    if (rc == 0 && st.len != len)
        rc = GIMPI_EBADMSG;
    return rc;
}

/*  The same into a new buffer of len bytes (at least 1). */
static int s_take(impi_tp_t *self, uint64_t cid, int src, int tag, size_t len, uint8_t **out)
{
    uint8_t *b = malloc(len ? len : 1);
    if (!b) {                   /* take it anyway (cut to nothing): keep the pairing */
        s_take_into(self, cid, src, tag, NULL, len);
        return GIMPI_ENOMEM;
    }
    int rc = s_take_into(self, cid, src, tag, b, len);
    if (rc < 0) {
        free(b);
        return rc;
    }
    *out = b;
    return 0;
}

/*  Appends a pending body (the header has been taken, the body not yet): its token, or
 *  NULL on ENOMEM. */
static body_t *s_body_new(impi_tp_t *self, uint64_t cid, int src, int tag, size_t len)
{
    body_t *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    *b = (body_t){ .cid = cid, .src = src, .tag = tag, .len = len };
    body_t **p = &self->bodies;
    while (*p)
        p = &(*p)->next;
    *p = b;
    return b;
}

/*  vtable: takes a pending body into dst (NULL: drops it) and forgets it.  Older pending
 *  bodies with the same envelope come off the data plane first (into memory of their
 *  own), so that each body pairs with its own header. */
static int s_body(void *impl, void *token, void *dst)
{
    impi_tp_t *self = impl;
    body_t *b = token, **p = &self->bodies;
    for (; *p && *p != b; p = &(*p)->next) {
        body_t *o = *p;
        if (!o->bytes && !o->error && o->cid == b->cid && o->src == b->src && o->tag == b->tag)
            o->error = s_take(self, o->cid, o->src, o->tag, o->len, &o->bytes);
    }
    assert(*p == b);
    *p = b->next;
    int rc = b->error;
    if (b->bytes) {
        if (dst)
            memcpy(dst, b->bytes, b->len);
        free(b->bytes);
    } else if (!rc)
        rc = s_take_into(self, b->cid, b->src, b->tag, dst, b->len);
    free(b);
    return rc;
}

/*  Says in self->why which task a wait that ended with nothing waited for: `watch` (a tid
 *  or GIMPI_ANY), with what groupd knows of it: none (gone, or never a task: groupd cannot
 *  tell which), or still registered on a host (its connection closed before groupd heard
 *  of an exit).  A wait for this task itself can never end: nobody else sends as it. */
static void s_why_gone(impi_tp_t *self, int watch)
{
    const char *net = gimpi_msg_errmsg(self->msg);
    if (watch == GIMPI_ANY) {           /* the data plane's generic text adds nothing */
        int more = *net && strncmp(net, "every other task", 16) != 0;
        snprintf(self->why, sizeof self->why, "every other task of the job is gone%s%s",
                 more ? ": " : "", more ? net : "");
        return;
    }
    if (watch == gimpi_msg_mytid(self->msg)) {
        snprintf(self->why, sizeof self->why, "t%x waits for a message from itself and none "
                 "is queued: it can never get one", (unsigned)watch);
        return;
    }
    gimpi_groups_t *gd = gimpi_groups(self->task);
    gimpi_task_info_t info;
    int rc = gd ? gimpi_group_lookup(gd, watch, &info) : GIMPI_ESYSERR;
    if (rc == 0)
        snprintf(self->why, sizeof self->why, "t%x on host %s closed its connection",
                 (unsigned)watch, info.host);
    else if (rc == GIMPI_ENOTASK)
        snprintf(self->why, sizeof self->why, "t%x is not a task of this virtual machine: "
                 "it has exited, or never was one", (unsigned)watch);
    else
        snprintf(self->why, sizeof self->why, "t%x is gone", (unsigned)watch);
}

/*  vtable: why the last call failed: what this file noted (once), else what the data
 *  plane and groupd say, in the order `where` gives. */
static void s_cause(void *impl, int where, char *out, size_t size)
{
    impi_tp_t *self = impl;
    char gd[384] = "";
    gimpi_groups_t *g = gimpi_groups(self->task);
    if (g)
        gimpi_groups_errmsg(g, gd, sizeof gd);
    const char *data = self->why[0] ? self->why : gimpi_msg_errmsg(self->msg);
    const char *first = where == PVM_CAUSE_DATA ? data : gd;
    const char *second = where == PVM_CAUSE_DATA ? gd : where == PVM_CAUSE_BOTH ? data : "";
    snprintf(out, size, "%s", *first ? first : second);
    self->why[0] = 0;
}

/*  vtable: the oldest arrived PVM message, waiting up to timeout_ms; with no limit it
 *  fails once `watch` (a tid, or GIMPI_ANY) or every other task has left. */
GIMPI_HOT static int s_next_from(void *impl, int timeout_ms, int watch, pvm_msg_t *msg)
{
    impi_tp_t *self = impl;
    self->why[0] = 0;
    if (watch <= 0)
        watch = GIMPI_ANY;
    /* alone and unknown to groupd: nobody can ever find this task.  A task registered
       with groupd waits, as under PVM: another task (started from another shell, say)
       may learn its tid from a group and call it. */
    gimpi_groups_t *gd = gimpi_groups(self->task);
    if (timeout_ms < 0 && gimpi_msg_npeers(self->msg) == 0
        && (!gd || gimpi_group_mytid(gd) <= 0)) {
        int flag = 0;
        int rc = gimpi_msg_tprobe_cid(self->msg, GIMPI_CID_PVM, GIMPI_ANY, GIMPI_ANY, 0,
                                      GIMPI_ANY, &flag, NULL);
        if (rc < 0 || !flag) {
            snprintf(self->why, sizeof self->why, "no other task can reach t%x: it is alone "
                     "in its job and unknown to groupd", (unsigned)gimpi_msg_mytid(self->msg));
            return rc < 0 ? rc : GIMPI_ESYSERR;     /* alone: nothing can ever come */
        }
    }
    gimpi_status_t st;
    int flag = 0;
    void *v = NULL;
    int rc = gimpi_msg_take_cid(self->msg, GIMPI_CID_PVM, GIMPI_ANY, GIMPI_ANY, timeout_ms,
                                watch, &flag, &st, &v);
    if (rc == GIMPI_ESYSERR)
        s_why_gone(self, watch);
    if (rc < 0)
        return rc;
    if (!flag)
        return 0;
    uint8_t *b = v;
    int encoding, flags, ctxid, wid;
    uint64_t bodylen;
    int hl = pvm_header_get(b, st.len, &encoding, &flags, &ctxid, &bodylen, &wid);
    if (hl < 0) {
        fprintf(stderr, "gimpi: PVM message from t%x with a bad header dropped\n",
                (unsigned)st.source);
        free(b);
        return hl;
    }
    if (flags & BODY_FOLLOWS) {
        uint64_t cid = GIMPI_CID_PVM_BODY;
        int btag = st.tag;
        if (flags & BCAST_BODY) {           /* the body's tag: the sender's bcast number */
            cid = GIMPI_CID_PVM_BCAST;
            btag = (int)(gimpi_be_get64(b + hl - 8) & 0x7fffffff);
        }
        free(b);
        if (bodylen > SIZE_MAX)
            return GIMPI_EBADMSG;
        /* the body stays on the data plane until it is unpacked (maybe straight into the
         * caller's memory) or its buffer is freed */
        body_t *token = s_body_new(self, cid, st.source, btag, (size_t)bodylen);
        if (!token) {
            s_take_into(self, cid, st.source, btag, NULL, (size_t)bodylen);
            return GIMPI_ENOMEM;
        }
        *msg = (pvm_msg_t){ st.source, st.tag, ctxid, encoding, NULL, (size_t)bodylen, 0, token,
                            wid };
        return 1;
    }
    size_t len = st.len - (size_t)hl;       /* the body stays behind the header: no copy */
    if (len == 0) {
        free(b);
        *msg = (pvm_msg_t){ st.source, st.tag, ctxid, encoding, NULL, 0, 0, NULL, wid };
    } else
        *msg = (pvm_msg_t){ st.source, st.tag, ctxid, encoding, b, len, (size_t)hl, NULL, wid };
    return 1;
}

/*  vtable: the oldest arrived PVM message, waiting up to timeout_ms. */
GIMPI_HOT static int s_next(void *impl, int timeout_ms, pvm_msg_t *msg)
{
    return s_next_from(impl, timeout_ms, GIMPI_ANY, msg);
}

/*  vtable: the tasks of the same spawn (a spawned task), else every task of the job. */
static int s_siblings(void *impl, const int **tids)
{
    impi_tp_t *self = impl;
    int n = gimpi_siblings(self->task, tids);
    if (n > 0)
        return n;
    *tids = self->tids;
    return self->ntids;
}

/*  Frees the pending bodies' tokens (their buffers were orphaned by the context). */
static void s_bodies_free(impi_tp_t *self)
{
    while (self->bodies) {
        body_t *b = self->bodies;
        self->bodies = b->next;
        free(b->bytes);
        free(b);
    }
}

/*  vtable: leaves the job (flush + PK_FINI, no world barrier) and frees. */
static void s_destroy(void *impl)
{
    impi_tp_t *self = impl;
    if (!self)
        return;
    if (self->pid != getpid()) {
        /* a forked child: the connections and the progress thread are the parent's */
        s_bodies_free(self);
        free(self->tids);
        free(self);
        return;
    }
    int rc = gimpi_msg_finalize(self->msg, s_env_ms("GIMPI_FINALIZE_TIMEOUT", 60));
    if (rc < 0)
        fprintf(stderr, "gimpi: t%x leaving: %s\n", (unsigned)gimpi_msg_mytid(self->msg),
                gimpi_msg_errmsg(self->msg));
    gimpi_coll_destroy(&self->coll);
    gimpi_abort(&self->task);
    s_bodies_free(self);
    free(self->tids);
    free(self);
}

/*  vtable: the task's groupd connection (gimpi_init registered it under our tid). */
static gimpi_groups_t *s_groups(void *impl)
{
    return gimpi_groups(((impi_tp_t *)impl)->task);
}

/*  vtable: the data-plane collectives. */
static gimpi_coll_t *s_coll(void *impl)
{
    return ((impi_tp_t *)impl)->coll;
}

_Static_assert(HDR_SIZE <= PVM_BUF_HEADROOM, "the PVM header fits a buffer's headroom");

/*  vtable: pvm_bcast to the group's members now.  An inline message (s_inline, the rule
 *  of s_send) goes as one data-plane bcast on the PVM context, taken by receivers like any
 *  PVM message.  Longer: the 24-byte header, then the body straight from `bytes` on
 *  GIMPI_CID_PVM_BCAST under the next bcast number, both to the same view of the group. */
static int s_bcast(void *impl, const char *group, int tag, int ctxid, int encoding,
                   uint8_t *frame, const uint8_t *bytes, size_t len)
{
    impi_tp_t *self = impl;
    if (len <= self->inline_max) {
        uint8_t small[HDR_SIZE + 1024];
        uint8_t *b = s_inline(encoding, ctxid, frame, bytes, len, small, sizeof small);
        if (!b)
            return GIMPI_ENOMEM;
        int rc = gimpi_coll_group_bcast(self->coll, gimpi_groups(self->task), group,
                                        GIMPI_CID_PVM, tag, b, HDR_SIZE + len);
        s_inline_free(b, frame, small);
        return rc;
    }
    if (!group || !*group)
        return GIMPI_ENULLGROUP;
    gimpi_view_t *v = NULL;
    int rc = gimpi_coll_group_view(self->coll, gimpi_groups(self->task), group, &v);
    if (rc < 0)
        return rc;
    uint32_t seq = self->bcast_seq++ & 0x7fffffff;
    uint8_t h[BCAST_HDR_SIZE];
    pvm_header_put(h, encoding, BODY_FOLLOWS | BCAST_BODY, ctxid, len);
    gimpi_be_put64(h + HDR_SIZE, seq);
    rc = gimpi_coll_bcast(self->coll, v, GIMPI_CID_PVM, tag, h, sizeof h);
    if (rc == 0)
        rc = gimpi_coll_bcast(self->coll, v, GIMPI_CID_PVM_BCAST, (int)seq, bytes, len);
    gimpi_view_destroy(&v);
    return rc;
}

/*  vtable: the live view's hook into the data plane's waits (msg_status_hook.h). */
static void s_status_hook(void *impl, void (*fn)(void *arg, int waited_ms), void *arg,
                          int after_ms)
{
    gimpi_msg_set_status_hook(((impi_tp_t *)impl)->msg, fn, arg, after_ms);
}

static const pvm_transport_ops_t s_ops = {
    .name = "impi",
    .mytid = s_mytid,
    .parent = s_parent,
    .send = s_send,
    .send_wid = s_send_wid,
    .next = s_next,
    .next_from = s_next_from,
    .siblings = s_siblings,
    .spawn = s_spawn,
    .task = s_task,
    .destroy = s_destroy,
    .groups = s_groups,
    .coll = s_coll,
    .bcast = s_bcast,
    .body = s_body,
    .cause = s_cause,
    .status_hook = s_status_hook,
};

/*  Enrols: joins the job (gimpirun's, or a one-task job) and opens the transport. */
int pvm_transport_open_default(const pvm_transport_ops_t **ops, void **impl, char *why,
                               size_t why_size)
{
    *ops = NULL;
    *impl = NULL;
    if (why_size)
        *why = 0;
    impi_tp_t *self = calloc(1, sizeof *self);
    if (!self)
        return GIMPI_ENOMEM;
    char err[512] = "";
    self->task = gimpi_init(err, sizeof err);
    if (!self->task) {
        fprintf(stderr, "gimpi: cannot enrol: %s\n", err);
        if (why_size)
            snprintf(why, why_size, "%s", err);
        free(self);
        return GIMPI_ESYSERR;
    }
    self->msg = gimpi_msg(self->task);
    self->coll = gimpi_coll_new(self->msg);
    self->pid = getpid();
    const char *im = gimpi_env("GIMPI_PVM_INLINE");
    self->inline_max = im && *im ? (size_t)strtoul(im, NULL, 10) : INLINE_MAX;
    self->ntids = gimpi_size(self->task);
    self->tids = calloc((size_t)self->ntids, sizeof *self->tids);
    if (!self->tids || !self->coll) {
        free(self->tids);
        gimpi_coll_destroy(&self->coll);
        gimpi_abort(&self->task);
        free(self);
        return GIMPI_ENOMEM;
    }
    for (int r = 0; r < self->ntids; r++)
        self->tids[r] = gimpi_msg_tid(self->msg, r);
    *ops = &s_ops;
    *impl = self;
    return 0;
}

/*  Is ops/impl a transport of this file opened by this process? */
int pvm_transport_impi_live(const pvm_transport_ops_t *ops, void *impl)
{
    return ops == &s_ops && impl && ((impi_tp_t *)impl)->pid == getpid();
}
