/*  msg_match.c — matching and the queues of the engine: starting sends, posting receives
 *  against the unexpected messages (oldest first, MPI's order), the status of a finished
 *  request, probing, and the locked primitives the forwarding module delivers rebuilt
 *  messages with (msg_fwd_hooks.h).  Everything runs with the context's lock held.
 */
#include "net/msg_internal.h"

#include <assert.h>
#include <string.h>

/*  0 when tag is a legal send tag (or, with wild, GIMPI_ANY). */
int msg_check_tag(gimpi_msg_t *self, int tag, int wild)
{
    if (wild && tag == GIMPI_ANY)
        return 0;
    return tag >= 0 && tag <= self->tagub ? 0 : GIMPI_EBADPARAM;
}

/*  A whole message arrived without a connection (to self, or rebuilt by the forwarding
 *  hook): to the oldest matching posted receive, else to the unexpected queue. */
static void s_um_arrived(gimpi_msg_t *self, umsg_t *um)
{
    gimpi_msg_req_t *q;
    for (q = self->match.posted_recvs.head; q; q = QUEUE_NEXT(q))
        if (msg_matches(q, um->src, um->tag, um->cid))
            break;
    if (q) {
        QUEUE_DEL(q);
        msg_deliver(self, um, q);
        msg_um_free(um);
    } else {
        msg_um_push(self, um);
        msg_arrival_note(self);
        if (self->prog.cv_waiters)
            pthread_cond_broadcast(&self->cv);
    }
}

/*  The world rank a send goes to, once its arguments are checked; else the error. */
static int s_send_peer(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len)
{
    if (msg_check_tag(self, tag, 0) || (len && !buf))
        return GIMPI_EBADPARAM;
    int p = msg_peer(self, tid);
    if (p < 0)
        return p;
    if (p != self->rank && self->peers[p].gone)
        return self->peers[p].gone;
    return p;
}

/*  Starts a send (lock held): the one send entry of the engine (msg_internal.h).  The
 *  arguments are checked once; a standard send's only packet is written at once when it
 *  can be (msg_send_now, tried once), else the request is queued. */
int msg_isend(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
              size_t len, int flags, gimpi_msg_req_t **out)
{
    if (!out)
        return GIMPI_EBADPARAM;
    int p = s_send_peer(self, tid, tag, buf, len);
    if (p < 0)
        return p;
    int tried = flags == MSG_NO_REQ && p != self->rank;     /* standard, needs no request */
    if (tried) {
        *out = NULL;
        if (msg_send_now(self, p, self->match.next_id, cid, tag, buf, len) > 0) {
            self->match.next_id++;
            return 0;                   /* written */
        }                               /* not now (or broken: msg_flush reports it) */
    }
    gimpi_msg_req_t *r = msg_req_new(self);
    if (!r)
        return GIMPI_ENOMEM;
    ALL_PUSH(&self->match.all_reqs, r);
    r->kind = RQ_SEND;
    r->id = self->match.next_id++;
    r->cid = cid;
    r->peer = p;
    r->tag = tag;
    r->sbuf = buf;
    r->len = len;
    r->sync = (flags & GIMPI_MSG_SYNC) != 0;
    if (p == self->rank) {              /* to ourselves: straight to matching */
        umsg_t *um = calloc(1, sizeof *um);
        if (um)
            um->data = malloc(len ? len : 1);
        if (!um || !um->data) {
            free(um);
            msg_req_free(self, r);
            return GIMPI_ENOMEM;
        }
        if (len)
            memcpy(um->data, buf, len);
        um->src = p;
        um->tag = tag;
        um->cid = cid;
        um->msglen = um->have = len;
        um->srqid = r->id;
        um->complete = 1;
        *out = r;
        if (r->sync) {
            r->state = S_LOCAL;
            r->local = um;
            um->self_sreq = r;
        } else
            msg_complete(self, r, 0);
        s_um_arrived(self, um);
        return 0;
    }
    *out = r;
    if (!tried && !r->sync && msg_send_now(self, p, r->id, cid, tag, buf, len) > 0) {
        r->state = S_STD;               /* out already */
        r->off = len;
        msg_complete(self, r, 0);
        return 0;
    }
    r->is_long = len > self->pktlen;
    r->state = S_QUEUED;
    QUEUE_PUSH(&self->peers[p].pending_sends, r);
    msg_flush(self, self->peers[p].host);
    return 0;
}

/*  Posts a receive (lock held): matches the oldest fitting unexpected message first.  An
 *  allocating one (alloc, buf NULL) gets its memory at match, and is not failed by
 *  departures while unmatched (gimpi_msg_take_cid's wait judges those). */
int msg_irecv_ex(gimpi_msg_t *self, uint64_t cid, int tid, int tag, void *buf,
                 size_t size, int alloc, gimpi_msg_req_t **out)
{
    if (!out || msg_check_tag(self, tag, 1) || (size && !buf))
        return GIMPI_EBADPARAM;
    int p = tid == GIMPI_ANY ? -1 : msg_peer(self, tid);
    if (tid != GIMPI_ANY && p < 0)
        return p;
    gimpi_msg_req_t *r = msg_req_new(self);
    if (!r)
        return GIMPI_ENOMEM;
    ALL_PUSH(&self->match.all_reqs, r);
    r->kind = RQ_RECV;
    r->id = self->match.next_id++;
    r->cid = cid;
    r->peer = p;
    r->tag = tag;
    r->rbuf = buf;
    r->size = size;
    r->alloc = alloc;
    r->src = -1;
    *out = r;
    for (umsg_t *um = self->match.unexpected.head; um; um = um->next)
        if (msg_matches(r, um->src, um->tag, um->cid)) {
            msg_um_remove(self, um);
            if (um->complete) {
                msg_deliver(self, um, r);
                msg_um_free(um);
            } else
                um->claim = r;          /* its data is arriving: delivered when in */
            return 0;
        }
    if (p >= 0 && p != self->rank && self->peers[p].gone)
        msg_complete(self, r, self->peers[p].gone);
    else if (p < 0 && !alloc && msg_all_gone(self))
        msg_complete(self, r, GIMPI_ESYSERR);
    else
        QUEUE_PUSH(&self->match.posted_recvs, r);
    return 0;
}

/*  Posts a receive into the caller's buffer (lock held). */
int msg_irecv(gimpi_msg_t *self, uint64_t cid, int tid, int tag, void *buf, size_t size,
              gimpi_msg_req_t **out)
{
    return msg_irecv_ex(self, cid, tid, tag, buf, size, 0, out);
}

/*  Fills a status from a completed request. */
void msg_status(gimpi_msg_t *self, const gimpi_msg_req_t *r, gimpi_status_t *st)
{
    if (!st)
        return;
    if (r->kind == RQ_RECV) {
        st->source = r->src >= 0 ? self->peers[r->src].tid : -1;
        st->tag = r->rtag;
        st->len = (size_t)r->msglen;
    } else {
        st->source = msg_mytid(self);
        st->tag = r->tag;
        st->len = r->len;
    }
    st->error = r->error;
    st->cancelled = r->cancelled;
}

/*  Finishes a completed request: status, free, result. */
int msg_finish(gimpi_msg_t *self, gimpi_msg_req_t **req, gimpi_status_t *status)
{
    gimpi_msg_req_t *r = *req;
    msg_status(self, r, status);
    int rc = r->error;
    msg_req_free(self, r);
    *req = NULL;
    return rc;
}

/* ------------------------------------------------------------------ probing */

/*  Predicate of probe: a fully arrived matching message, or its sender gone. */
int msg_probe_pred(gimpi_msg_t *self, void *arg)
{
    probe_t *pr = arg;
    gimpi_msg_req_t key = { .cid = pr->cid, .peer = pr->peer, .tag = pr->tag };
    for (umsg_t *um = self->match.unexpected.head; um; um = um->next)
        if (um->complete && msg_matches(&key, um->src, um->tag, um->cid)) {
            pr->found = um;
            return 1;
        }
    pr->found = NULL;
    self->match.missed = 1;             /* held-back credit goes out (msg_credit_release) */
    return pr->peer >= 0 && pr->peer != self->rank && self->peers[pr->peer].gone;
}

/*  Fills a status from a found message, or returns the sender's error. */
int msg_probe_result(gimpi_msg_t *self, probe_t *pr, gimpi_status_t *status)
{
    if (!pr->found)
        return pr->peer >= 0 && self->peers[pr->peer].gone ? self->peers[pr->peer].gone : 0;
    if (status) {
        status->source = self->peers[pr->found->src].tid;
        status->tag = pr->found->tag;
        status->len = (size_t)pr->found->msglen;
        status->error = 0;
        status->cancelled = 0;
    }
    return 0;
}

/* ------------------------------- the forwarding module's primitives (msg_fwd_hooks.h) */

/*  A detached send whose buffer the engine owns (lock held). */
int gimpi_msg__send_owned(gimpi_msg_t *self, uint64_t cid, int tid, int tag, uint8_t *buf,
                          size_t len)
{
    gimpi_msg_req_t *r = NULL;
    self->dyn.in_engine++;                  /* an unknown tid is resolved later, not here */
    int rc = msg_isend(self, cid, tid, tag, buf, len, 0, &r);
    self->dyn.in_engine--;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    if (r->done) {
        free(buf);
        msg_req_free(self, r);
        return 0;
    }
    r->owned = buf;
    r->detached = 1;
    self->match.ndetached++;
    return 0;
}

/*  An incomplete message (lock held): queued, or claimed by a posted receive at once. */
void *gimpi_msg__placeholder(gimpi_msg_t *self, uint64_t cid, int src, int tag, size_t total)
{
    int p = msg_find_tid(self, src);
    umsg_t *um = p < 0 ? NULL : calloc(1, sizeof *um);
    if (!um)
        return NULL;
    um->src = p;
    um->tag = tag;
    um->cid = cid;
    um->msglen = total;
    um->srqid = self->match.next_id++;
    gimpi_msg_req_t *q;
    for (q = self->match.posted_recvs.head; q; q = QUEUE_NEXT(q))
        if (msg_matches(q, p, tag, cid))
            break;
    if (q) {
        QUEUE_DEL(q);
        um->claim = q;
    } else
        msg_um_push(self, um);
    return um;
}

/*  Completes a placeholder (lock held). */
void gimpi_msg__fill(gimpi_msg_t *self, void *ph, uint8_t *data)
{
    umsg_t *um = ph;
    um->data = data;
    um->have = (size_t)um->msglen;
    um->complete = 1;
    if (um->claim) {
        msg_deliver(self, um, um->claim);
        msg_um_free(um);
    } else if (self->prog.cv_waiters)
        pthread_cond_broadcast(&self->cv);
}

/*  The buffer of the receive that claimed a placeholder (NULL when none yet). */
uint8_t *gimpi_msg__claim_buf(gimpi_msg_t *self, void *ph, size_t *size)
{
    (void)self;
    umsg_t *um = ph;
    if (!um->claim)
        return NULL;
    msg_alloc_rbuf(um->claim, um->msglen);
    *size = um->claim->size;
    return um->claim->rbuf;
}

/*  Completes a claimed placeholder whose data was written into the receive's buffer. */
void gimpi_msg__fill_claimed(gimpi_msg_t *self, void *ph)
{
    umsg_t *um = ph;
    gimpi_msg_req_t *r = um->claim;
    r->src = um->src;
    r->rtag = um->tag;
    r->msglen = r->recvd = um->msglen;
    msg_complete(self, r, 0);
    msg_um_free(um);
}

/*  Drops a placeholder (lock held). */
void gimpi_msg__fail(gimpi_msg_t *self, void *ph)
{
    umsg_t *um = ph;
    if (um->claim)
        msg_complete(self, um->claim, GIMPI_ESYSERR);
    else
        msg_um_remove(self, um);
    msg_um_free(um);
}

/*  The packet length. */
size_t gimpi_msg__pktlen(gimpi_msg_t *self)
{
    assert(self);
    return self->pktlen;
}
