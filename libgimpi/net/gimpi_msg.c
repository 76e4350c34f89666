/*  gimpi_msg.c — the data plane's public calls (gimpi_msg.h) on a running context: sends
 *  and receives, blocking and not, probes, the allocating receive, requests, and the
 *  closing exchange of PK_FINI.  Each call takes the context's lock (msg_enter), works
 *  with the matching (msg_match.c) and waits through the progress machinery
 *  (msg_progress.c).  Standard sends return once the data is out or copied into the
 *  library, so a send never waits for its receiver to enter the library.  The context
 *  is made in msg_new.c; the engine's files are listed in msg_internal.h.
 */
#include "net/msg_internal.h"
#include "net/msg_status_hook.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/*  Sets the bound on blocking calls. */
void gimpi_msg_set_timeout(gimpi_msg_t *self, int timeout_ms)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    self->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
    pthread_mutex_unlock(&self->mu);
}

/*  tid of this task. */
int gimpi_msg_mytid(gimpi_msg_t *self)
{
    assert(self);
    return msg_mytid(self);
}

/*  Number of tasks of the job (the static tables'). */
int gimpi_msg_ntasks(gimpi_msg_t *self)
{
    assert(self);
    return self->nstatic;
}

/*  tid of a world rank (the one place that knows tid = base + rank + 1). */
int gimpi_msg_tid(gimpi_msg_t *self, int rank)
{
    assert(self);
    return rank >= 0 && rank < self->nstatic ? self->tidbase + rank + 1 : -1;
}

/*  World rank of a tid (static tasks only). */
int gimpi_msg_rank(gimpi_msg_t *self, int tid)
{
    assert(self);
    long r = (long)tid - self->tidbase - 1;
    return tid > 0 && r >= 0 && r < self->nstatic ? (int)r : GIMPI_EBADPARAM;
}

/*  Installs one of the context's hooks: fn (of its kind's type) and arg together under
 *  the lock, so that a thread that reads both sees a pair. */
static void s_set_hook(gimpi_msg_t *self, msg_hook_t *hook, void (*fn)(void), void *arg)
{
    pthread_mutex_lock(&self->mu);
    hook->fn = fn;
    hook->arg = arg;
    pthread_mutex_unlock(&self->mu);
}

/*  Installs the hook every send entry runs first (gimpi_msg.h). */
void gimpi_msg_set_send_hook(gimpi_msg_t *self, gimpi_msg_hook_fn fn, void *arg)
{
    assert(self);
    s_set_hook(self, &self->hooks.send, (void (*)(void))fn, arg);
}

/*  Installs the liveness hook (gimpi_msg.h). */
void gimpi_msg_set_alive_hook(gimpi_msg_t *self, gimpi_msg_alive_fn fn, void *arg)
{
    assert(self);
    s_set_hook(self, &self->hooks.alive, (void (*)(void))fn, arg);
}

/*  Asks the liveness hook about tid now (gimpi_msg.h). */
int gimpi_msg_check_peer(gimpi_msg_t *self, int tid)
{
    assert(self);
    msg_enter(self);
    int p = msg_find_tid(self, tid);
    gimpi_msg_alive_fn fn = (gimpi_msg_alive_fn)self->hooks.alive.fn;
    void *arg = self->hooks.alive.arg;
    if (p < 0 || p == self->rank || !fn) {
        msg_leave(self);
        return -1;
    }
    if (self->peers[p].gone) {
        msg_leave(self);
        return 0;
    }
    msg_leave(self);
    int r = fn(arg, tid);
    if (r == 0) {
        msg_enter(self);
        msg_drive(self, 0, 1);          /* what it sent before it went is not lost */
        msg_peer_lost(self, p);
        msg_leave(self);
    }
    return r;
}

/*  Installs the blocked hook (gimpi_msg.h). */
void gimpi_msg_set_blocked_hook(gimpi_msg_t *self, gimpi_msg_hook_fn fn, void *arg)
{
    assert(self);
    s_set_hook(self, &self->hooks.blocked, (void (*)(void))fn, arg);
}

/*  Installs the live view's status hook (msg_status_hook.h). */
void gimpi_msg_set_status_hook(gimpi_msg_t *self, gimpi_msg_status_fn fn, void *arg,
                               int after_ms)
{
    assert(self);
    if (after_ms <= 0)
        fn = NULL;
    pthread_mutex_lock(&self->mu);
    self->hooks.status_ms = fn ? after_ms : 0;
    pthread_mutex_unlock(&self->mu);
    s_set_hook(self, &self->hooks.status, (void (*)(void))fn, arg);
}

/*  Sets the stamp of our packets to kin (gimpi_msg.h). */
void gimpi_msg_set_stamp(gimpi_msg_t *self, uint64_t stamp)
{
    assert(self);
    __atomic_store_n(&self->stamp_out, stamp, __ATOMIC_RELAXED);
}

/*  The highest stamp that came from kin (gimpi_msg.h). */
uint64_t gimpi_msg_stamp_in(gimpi_msg_t *self)
{
    assert(self);
    return __atomic_load_n(&self->stamp_in, __ATOMIC_RELAXED);
}

/*  Runs the send hook, if any (without the lock; internal callers too). */
void gimpi_msg__before_send(gimpi_msg_t *self)
{
    if (self->hooks.send.fn)
        ((gimpi_msg_hook_fn)self->hooks.send.fn)(self->hooks.send.arg);
}

/*  Other known tasks not gone. */
int gimpi_msg_npeers(gimpi_msg_t *self)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    int n = 0;
    for (int p = 0; p < self->nprocs; p++)
        n += p != self->rank && !self->peers[p].gone;
    pthread_mutex_unlock(&self->mu);
    return n;
}

/*  Last error text. */
const char *gimpi_msg_errmsg(gimpi_msg_t *self)
{
    assert(self);
    return self->errmsg;
}

/*  The IMPI client of a tid's task, -1 when unknown (or a dynamic task: in no client). */
int gimpi_msg_client(gimpi_msg_t *self, int tid)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    int p = msg_find_tid(self, tid);
    int c = p < 0 || p >= self->nstatic ? -1 : self->peers[p].client;
    pthread_mutex_unlock(&self->mu);
    return c;
}

/*  IMPI's MAXLINEAR agreed at startup. */
int gimpi_msg_maxlinear(gimpi_msg_t *self)
{
    assert(self);
    return self->maxlinear;
}


/* -------------------------------------------------------------- sending and receiving */

/*  Predicate: the request is complete. */
static int s_req_done(gimpi_msg_t *self, void *arg)
{
    (void)self;
    return ((gimpi_msg_req_t *)arg)->done;
}

/*  Lets an incomplete send go on without its caller: copies the data (so that the
 *  caller's buffer may be reused) and frees the request when it completes. */
static void s_detach(gimpi_msg_t *self, gimpi_msg_req_t *r)
{
    if (r->len && !r->owned && r->state != S_LOCAL) {
        uint8_t *copy = malloc(r->len);
        if (!copy) {                    /* cannot buffer: finish it in place */
            msg_wait(self, s_req_done, r, 0);
            if (r->done) {
                msg_req_free(self, r);
                return;
            }
            copy = malloc(r->len);
            if (!copy)
                abort();
        }
        memcpy(copy, r->sbuf, r->len);
        conn_t *c = &self->conns[self->peers[r->peer].host];
        if (c->treq == r && c->tpay)
            c->tpay = copy + (c->tpay - r->sbuf);
        r->owned = copy;
        r->sbuf = copy;
    }
    r->detached = 1;
    self->match.ndetached++;
}

typedef struct {
    gimpi_msg_req_t *r;
    int64_t buffer_at;
} send_wait_t;

/*  Predicate of a standard long send: done, or unmatched for too long (then buffered). */
static int s_send_ready(gimpi_msg_t *self, void *arg)
{
    (void)self;
    send_wait_t *w = arg;
    if (w->r->done)
        return 1;
    return (w->r->state == S_QUEUED || w->r->state == S_WAITACK) && gimpi_now_us() >= w->buffer_at;
}

/*  Standard send. */
int gimpi_msg_send(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len)
{
    return gimpi_msg_send_cid(self, GIMPI_CID_P2P, tid, tag, buf, len);
}

/*  The standard send of gimpi_msg_send_cid and gimpi_msg__send_cid (hook: run the send
 *  hook first): written at once when it can be, without a request; else a long one waits
 *  a while for its receiver, and what is not done then is copied and left to finish.
 *  Inlined into both, so that the call a program makes costs no call more. */
static inline __attribute__((always_inline)) int s_send_cid(gimpi_msg_t *self, int hook,
                                                           uint64_t cid, int tid, int tag,
                                                           const void *buf, size_t len)
{
    gimpi_msg_req_t *r;
    if (hook)
        gimpi_msg__before_send(self);
    msg_enter(self);
    int rc = msg_isend(self, cid, tid, tag, buf, len, MSG_NO_REQ, &r);
    if (rc || !r) {                     /* an error, or written at once */
        msg_leave(self);
        return rc;
    }
    if (!r->done && r->is_long) {
        send_wait_t w = { r, gimpi_now_us() + BUFFER_AFTER_US };
        rc = msg_wait(self, s_send_ready, &w, 1);
    }
    if (r->done)
        rc = msg_finish(self, &r, NULL);
    else
        s_detach(self, r);
    msg_leave(self);
    return rc;
}

/*  Standard send with a context id: returns once buf may be reused. */
int gimpi_msg_send_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                       size_t len)
{
    assert(self);
    return s_send_cid(self, 1, cid, tid, tag, buf, len);
}

/*  gimpi_msg_send_cid without the send hook (msg_fwd_hooks.h). */
int gimpi_msg__send_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                        size_t len)
{
    return s_send_cid(self, 0, cid, tid, tag, buf, len);
}

/*  Synchronous send. */
int gimpi_msg_ssend(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len)
{
    assert(self);
    gimpi_msg_req_t *r;
    gimpi_msg__before_send(self);
    msg_enter(self);
    int rc = msg_isend(self, GIMPI_CID_P2P, tid, tag, buf, len, GIMPI_MSG_SYNC, &r);
    if (!rc) {
        rc = msg_wait(self, s_req_done, r, 0);
        if (r->done)
            rc = msg_finish(self, &r, NULL);
        else {                          /* timed out: let it finish without us */
            r->sync = 0;
            s_detach(self, r);
        }
    }
    msg_leave(self);
    return rc;
}

/*  Blocking receive. */
int gimpi_msg_recv(gimpi_msg_t *self, int tid, int tag, void *buf, size_t size,
                   gimpi_status_t *status)
{
    assert(self);
    gimpi_msg_req_t *r;
    msg_enter(self);
    int p = tid == GIMPI_ANY ? -1 : msg_find_tid(self, tid);
    if (p >= 0 && p != self->rank && !self->peers[p].gone && !self->match.posted_recvs.head
        && !self->match.unexpected.head && (size == 0 || buf)
        && !msg_check_tag(self, tag, 1)) {      /* straight from the ring when it can */
        int k = msg_recv_now(self, p, GIMPI_CID_P2P, tag, buf, size, status,
                             self->prog.own_core ? RECV_LOOKS : 1);
        if (k) {
            msg_leave(self);
            return k < 0 ? k : 0;
        }
    }
    int rc = msg_irecv(self, GIMPI_CID_P2P, tid, tag, buf, size, &r);
    if (!rc) {
        rc = msg_wait(self, s_req_done, r, 0);
        if (r->done)
            rc = msg_finish(self, &r, status);
        else if (r->queue.on == &self->match.posted_recvs) {  /* timed out unmatched: out */
            QUEUE_DEL(r);
            msg_req_free(self, r);
        } else {                        /* matched: its data lands in buf, let it finish */
            int saved = self->timeout_ms;
            self->timeout_ms = 0;
            msg_wait(self, s_req_done, r, 0);
            self->timeout_ms = saved;
            msg_finish(self, &r, status);
            rc = GIMPI_ESYSERR;
        }
    }
    msg_leave(self);
    return rc;
}

/* ------------------------------------------------------------------ probing and taking */

/*  The opening of a probe: checks the tag, enters the engine and fills pr for cid, tid
 *  (GIMPI_ANY or a known task) and tag.  0 with the engine entered, or an error code with
 *  it left. */
static int s_probe_enter(gimpi_msg_t *self, uint64_t cid, int tid, int tag, probe_t *pr)
{
    if (msg_check_tag(self, tag, 1))
        return GIMPI_EBADPARAM;
    msg_enter(self);
    int p = tid == GIMPI_ANY ? -1 : msg_peer(self, tid);
    if (tid != GIMPI_ANY && p < 0) {
        msg_leave(self);
        return p;
    }
    *pr = (probe_t){ cid, p, tag, NULL, -1 };
    return 0;
}

/*  Non-blocking probe with a context id. */
int gimpi_msg_iprobe_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, int *flag,
                         gimpi_status_t *status)
{
    assert(self);
    if (!flag)
        return GIMPI_EBADPARAM;
    probe_t pr;
    int rc = s_probe_enter(self, cid, tid, tag, &pr);
    if (rc)
        return rc;
    *flag = 0;
    if (!msg_probe_pred(self, &pr))
        msg_drive(self, 0, 1);
    if (msg_probe_pred(self, &pr)) {
        rc = msg_probe_result(self, &pr, status);
        *flag = pr.found != NULL;
    }
    msg_leave(self);
    return rc;
}

/*  Non-blocking probe. */
int gimpi_msg_iprobe(gimpi_msg_t *self, int tid, int tag, int *flag, gimpi_status_t *status)
{
    return gimpi_msg_iprobe_cid(self, GIMPI_CID_P2P, tid, tag, flag, status);
}

/*  Blocking probe. */
int gimpi_msg_probe(gimpi_msg_t *self, int tid, int tag, gimpi_status_t *status)
{
    return gimpi_msg_probe_cid(self, GIMPI_CID_P2P, tid, tag, status);
}

/*  Blocking probe with a context id. */
int gimpi_msg_probe_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag,
                        gimpi_status_t *status)
{
    assert(self);
    probe_t pr;
    int rc = s_probe_enter(self, cid, tid, tag, &pr);
    if (rc)
        return rc;
    rc = msg_wait(self, msg_probe_pred, &pr, 0);
    if (!rc)
        rc = msg_probe_result(self, &pr, status);
    msg_leave(self);
    return rc;
}

/*  Predicate of an unbounded wildcard-source probe: a match, or no other task left that
 *  could ever send one. */
static int s_tprobe_pred(gimpi_msg_t *self, void *arg)
{
    probe_t *pr = arg;
    return msg_probe_pred(self, pr) || (pr->peer < 0 && msg_all_gone(self))
        || (pr->watch >= 0 && self->peers[pr->watch].gone);
}

/*  The world ranks of a wait's source and watched task (-1: any, none): 0, or the error of
 *  a source or watched tid that cannot be resolved (lock held). */
static int s_source_watch(gimpi_msg_t *self, int tid, int watch_tid, int *p, int *w)
{
    *p = tid == GIMPI_ANY ? -1 : msg_peer(self, tid);
    *w = watch_tid == GIMPI_ANY ? -1 : msg_peer(self, watch_tid);
    if (*w == GIMPI_EBADPARAM)
        *w = -1;                        /* a tid nobody can resolve: nothing to watch */
    if ((tid != GIMPI_ANY && *p < 0) || (watch_tid != GIMPI_ANY && *w < 0))
        return *p < 0 && tid != GIMPI_ANY ? *p : *w;
    if (*w == self->rank)
        *w = -1;                        /* we never leave under our own feet */
    return 0;
}

/*  The failure of an unbounded wait that ended with nothing: GIMPI_ESYSERR, and why. */
static int s_left_error(gimpi_msg_t *self, int w)
{
    snprintf(self->errmsg, sizeof self->errmsg, "%s",
             w >= 0 && self->peers[w].gone ? "the awaited task has left"
                                           : "every other task has left");
    return GIMPI_ESYSERR;
}

/*  Counts a blocked call watching world rank w (-1: none), so that the liveness questions
 *  include it. */
static void s_watch(gimpi_msg_t *self, int w, int d)
{
    if (w >= 0)
        self->peers[w].watched += d;
}

/*  Empties the arrival descriptor before a look at the queue (lock held): what comes
 *  after the look rings it again. */
static void s_arrival_drain(gimpi_msg_t *self)
{
    uint64_t v;
    if (self->prog.arrive_fd >= 0 && read(self->prog.arrive_fd, &v, sizeof v) < 0)
        v = 0;                  /* EAGAIN: nothing rang */
}

/*  Marks the task as findable by strangers (gimpi_msg.h): msg_all_gone says no more. */
void gimpi_msg_set_listed(gimpi_msg_t *self)
{
    assert(self);
    msg_enter(self);
    self->listed = 1;
    msg_leave(self);
}

/*  The arrival descriptor, made on first call; rung at once when whole messages wait. */
int gimpi_msg_arrival_fd(gimpi_msg_t *self)
{
    assert(self);
    msg_enter(self);
    if (self->prog.arrive_fd < 0) {
        self->prog.arrive_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        for (umsg_t *um = self->match.unexpected.head; um; um = um->next)
            if (um->complete) {
                msg_arrival_note(self);
                break;
            }
    }
    int fd = self->prog.arrive_fd;
    msg_leave(self);
    return fd >= 0 ? fd : GIMPI_EOUTOFRES;
}

/*  Probe with a context id waiting at most timeout_ms (0: just look, < 0: no limit). */
int gimpi_msg_tprobe_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, int timeout_ms,
                         int watch_tid, int *flag, gimpi_status_t *status)
{
    assert(self);
    if (!flag || msg_check_tag(self, tag, 1))
        return GIMPI_EBADPARAM;
    msg_enter(self);
    int p, w;
    int rc = s_source_watch(self, tid, watch_tid, &p, &w);
    if (rc) {
        msg_leave(self);
        return rc;
    }
    s_arrival_drain(self);
    probe_t pr = { cid, p, tag, NULL, w };
    *flag = 0;
    if (!msg_probe_pred(self, &pr))
        msg_drive(self, 0, 1);
    if (!msg_probe_pred(self, &pr) && timeout_ms != 0) {
        s_watch(self, w, 1);
        rc = msg_wait_upto(self, timeout_ms < 0 ? s_tprobe_pred : msg_probe_pred, &pr, timeout_ms);
        s_watch(self, w, -1);
        if (!rc && timeout_ms < 0 && (pr.peer < 0 || w >= 0) && !msg_probe_pred(self, &pr))
            rc = s_left_error(self, w); /* unbounded: the watched task or every other left */
    }
    if (!rc && msg_probe_pred(self, &pr)) {
        rc = msg_probe_result(self, &pr, status);
        *flag = pr.found != NULL;
    }
    msg_leave(self);
    return rc;
}

typedef struct {
    gimpi_msg_req_t *r;
    int peer, watch;                /* world ranks, or -1 */
} take_t;

/*  Predicate of take: the receive is done, or, while it is still unmatched, the watched
 *  task or (any source) every other task has left. */
static int s_take_pred(gimpi_msg_t *self, void *arg)
{
    take_t *tk = arg;
    if (tk->r->done)
        return 1;
    if (tk->r->queue.on != &self->match.posted_recvs)
        return 0;                       /* matched: its data is arriving */
    return (tk->peer < 0 && msg_all_gone(self)) || (tk->watch >= 0 && self->peers[tk->watch].gone);
}

/*  Receive with allocation: the oldest message on cid from tid with tag, whole, in new
 *  memory (*data, malloc'd, the caller frees it), waiting at most timeout_ms as
 *  gimpi_msg_tprobe_cid does.  A short message that has arrived is handed over as it lies
 *  in the queue (no copy); otherwise a receive is posted that gets its memory when its
 *  message is matched, so that what comes later is read straight into it. */
int gimpi_msg_take_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, int timeout_ms,
                       int watch_tid, int *flag, gimpi_status_t *status, void **data)
{
    assert(self);
    if (!flag || !data || msg_check_tag(self, tag, 1))
        return GIMPI_EBADPARAM;
    *flag = 0;
    *data = NULL;
    msg_enter(self);
    int p, w;
    int rc = s_source_watch(self, tid, watch_tid, &p, &w);
    if (rc) {
        msg_leave(self);
        return rc;
    }
    s_arrival_drain(self);
    gimpi_msg_req_t key = { .cid = cid, .peer = p, .tag = tag };
    umsg_t *um = self->match.unexpected.head;
    while (um && !msg_matches(&key, um->src, um->tag, um->cid))
        um = um->next;
    if (um && um->complete && !um->is_long) {   /* whole and here: hand its memory over */
        msg_um_remove(self, um);
        msg_release_sender(self, um);
        if (status)
            *status = (gimpi_status_t){ .source = self->peers[um->src].tid, .tag = um->tag,
                                        .len = (size_t)um->msglen };
        *data = um->data;
        um->data = NULL;
        msg_um_free(um);
        *flag = 1;
        msg_leave(self);
        return 0;
    }
    gimpi_msg_req_t *r = NULL;
    rc = msg_irecv_ex(self, cid, tid, tag, NULL, 0, 1, &r);
    if (rc) {
        msg_leave(self);
        return rc;
    }
    take_t tk = { r, p, w };
    if (!s_take_pred(self, &tk))
        msg_drive(self, 0, 1);
    if (!s_take_pred(self, &tk) && timeout_ms != 0) {
        s_watch(self, w, 1);
        rc = msg_wait_upto(self, s_take_pred, &tk, timeout_ms);
        s_watch(self, w, -1);
    }
    if (!r->done && r->queue.on != &self->match.posted_recvs) { /* matched: its data comes */
        int r2 = msg_wait(self, s_req_done, r, 0);
        rc = rc ? rc : r2;
    }
    if (r->done) {
        gimpi_status_t st;
        msg_status(self, r, &st);
        rc = r->error;
        if (!rc) {
            *data = r->owned;
            r->owned = NULL;
            *flag = 1;
            if (status)
                *status = st;
        }
        msg_req_free(self, r);
    } else if (r->queue.on == &self->match.posted_recvs) {  /* nothing came: withdraw it */
        QUEUE_DEL(r);
        msg_req_free(self, r);
        if (!rc && timeout_ms < 0)
            rc = s_left_error(self, w); /* unbounded: the watched task or every other left */
    } else {                            /* the context timeout ran out mid-message */
        r->detached = 1;                /* the engine finishes it and frees its memory */
        self->match.ndetached++;
        rc = rc ? rc : GIMPI_ESYSERR;
    }
    msg_leave(self);
    return rc;
}

/* ------------------------------------------------------------------ requests */

/*  The non-blocking send of gimpi_msg_isend_cid and gimpi_msg__isend_cid (hook: run the
 *  send hook first), inlined into both. */
static inline __attribute__((always_inline)) int s_isend_cid(gimpi_msg_t *self, int hook,
                                                            uint64_t cid, int tid, int tag,
                                                            const void *buf, size_t len,
                                                            int flags, gimpi_msg_req_t **req)
{
    if (hook)
        gimpi_msg__before_send(self);
    msg_enter(self);
    int rc = msg_isend(self, cid, tid, tag, buf, len, flags & ~MSG_NO_REQ, req);
    msg_leave(self);
    return rc;
}

/*  Non-blocking send with a context id. */
int gimpi_msg_isend_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                        size_t len, int flags, gimpi_msg_req_t **req)
{
    assert(self);
    return s_isend_cid(self, 1, cid, tid, tag, buf, len, flags, req);
}

/*  gimpi_msg_isend_cid without the send hook (msg_fwd_hooks.h). */
int gimpi_msg__isend_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                         size_t len, int flags, gimpi_msg_req_t **req)
{
    return s_isend_cid(self, 0, cid, tid, tag, buf, len, flags, req);
}

/*  Non-blocking send. */
int gimpi_msg_isend(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len,
                    int flags, gimpi_msg_req_t **req)
{
    return gimpi_msg_isend_cid(self, GIMPI_CID_P2P, tid, tag, buf, len, flags, req);
}

/*  Non-blocking receive with a context id. */
int gimpi_msg_irecv_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, void *buf,
                        size_t size, gimpi_msg_req_t **req)
{
    assert(self);
    msg_enter(self);
    int rc = msg_irecv(self, cid, tid, tag, buf, size, req);
    msg_leave(self);
    return rc;
}

/*  Non-blocking receive. */
int gimpi_msg_irecv(gimpi_msg_t *self, int tid, int tag, void *buf, size_t size,
                    gimpi_msg_req_t **req)
{
    return gimpi_msg_irecv_cid(self, GIMPI_CID_P2P, tid, tag, buf, size, req);
}

/*  Waits for a request. */
int gimpi_msg_wait(gimpi_msg_t *self, gimpi_msg_req_t **req, gimpi_status_t *status)
{
    assert(self);
    if (!req || !*req)
        return GIMPI_EBADPARAM;
    msg_enter(self);
    int rc = msg_wait(self, s_req_done, *req, 0);
    if ((*req)->done)
        rc = msg_finish(self, req, status);
    msg_leave(self);
    return rc;
}

/*  Tests a request. */
int gimpi_msg_test(gimpi_msg_t *self, gimpi_msg_req_t **req, int *flag,
                   gimpi_status_t *status)
{
    assert(self);
    if (!req || !*req || !flag)
        return GIMPI_EBADPARAM;
    msg_enter(self);
    if (!(*req)->done)
        msg_drive(self, 0, 1);
    int rc = 0;
    *flag = (*req)->done;
    if (*flag)
        rc = msg_finish(self, req, status);
    msg_leave(self);
    return rc;
}

/*  Cancels a request if it still can be (a sent first packet needs IMPI's CANCEL). */
int gimpi_msg_cancel(gimpi_msg_t *self, gimpi_msg_req_t *r)
{
    assert(self);
    if (!r)
        return GIMPI_EBADPARAM;
    msg_enter(self);
    if (!r->done) {
        if (r->kind == RQ_RECV) {
            if (r->queue.on == &self->match.posted_recvs) {
                r->cancelled = 1;
                msg_complete(self, r, 0);
            }
        } else if (r->state == S_QUEUED) {
            r->cancelled = 1;
            msg_complete(self, r, 0);
        } else if (r->state == S_LOCAL) {
            umsg_t *um = r->local;
            msg_um_remove(self, um);
            msg_um_free(um);
            r->local = NULL;
            r->cancelled = 1;
            msg_complete(self, r, 0);
        } else if (r->state == S_WAITACK && !r->acked && !r->cancel_wait) {
            r->cancel_wait = 1;
            msg_queue_ctl(self, r->peer, IMPI_PK_CANCEL, r->id, 0, r->tag, r->cid);
        }
    }
    msg_leave(self);
    return 0;
}

/* ------------------------------------------------------------------ finishing */

/*  Predicate of finalize, first half: nothing left to send. */
static int s_idle(gimpi_msg_t *self, void *arg)
{
    (void)arg;
    if (self->match.ndetached || self->match.sends_out.head)
        return 0;
    for (int p = 0; p < self->nprocs; p++)
        if (self->peers[p].ctl_pkts.head || self->peers[p].pending_sends.head
            || self->peers[p].streaming_sends.head)
            return 0;
    for (int h = 0; h < self->nhosts; h++)
        if (self->conns[h].state == C_OPEN
            && (self->conns[h].tbusy || self->conns[h].urgent.head))
            return 0;
    return 1;
}

/*  Predicate of finalize, second half: every connection closed. */
static int s_all_closed(gimpi_msg_t *self, void *arg)
{
    (void)arg;
    for (int h = 0; h < self->nhosts; h++)
        if (self->conns[h].state == C_OPEN)
            return 0;
    return 1;
}

/*  Flushes, exchanges PK_FINI with every host, closes. */
int gimpi_msg_finalize(gimpi_msg_t *self, int timeout_ms)
{
    assert(self);
    msg_enter(self);
    int saved = self->timeout_ms;
    self->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
    int rc = msg_wait(self, s_idle, NULL, 0);
    msg_dyn_abandon(self);
    for (int h = 0; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state != C_OPEN || c->fini_queued)
            continue;
        if (msg_queue_fini(self, h) < 0) {
            rc = GIMPI_ENOMEM;
            break;
        }
    }
    int rc2 = msg_wait(self, s_all_closed, NULL, 0);
    self->timeout_ms = saved;
    msg_leave(self);
    return rc ? rc : rc2;
}
