/*  msg_conn.c — the per-connection packet state machine of the engine, send side: IMPI's
 *  packet protocol (doc/impi-protocol.md §4) on one host connection, with the completion
 *  of requests, what a broken connection fails, and flow-control credit.
 *
 *  Each connection has a send side (a packet being written plus the queues it is chosen
 *  from: urgent uncounted PROTOACK/FINI first, then per destination proc the counted
 *  control packets, first packets of new messages and continuation data of rendezvous
 *  messages, all subject to the pair's flow-control credit) and a receive side
 *  (msg_recv.c).  Eager and rendezvous sends, SYNCACK and CANCEL packets, PROTOACK
 *  credit and FINI go out here, and requests complete here.  Sockets are non-blocking;
 *  everything runs with the context's lock held.  See doc/data-plane.md.
 */
#include "net/msg_internal.h"
#include "net/gimpi_msg_fwd.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/*  Builds a packet header from this proc to peer p. */
static void s_header(gimpi_msg_t *self, uint8_t out[IMPI_PACKET_SIZE], uint32_t type, int p,
                     uint64_t srqid, uint64_t drqid, uint64_t msglen, uint32_t len, int tag,
                     uint64_t cid)
{
    impi_packet_t pk;
    memset(&pk, 0, sizeof pk);
    pk.type = type;
    pk.len = len;
    pk.src = self->me;
    pk.dest = self->peers[p].id;
    pk.srqid = srqid;
    pk.drqid = drqid;
    pk.msglen = msglen;
    /* a dynamic peer shares no communicator with us: the sender's tid names it there */
    pk.lsrank = self->conns[self->peers[p].host].dyn ? self->tidbase + self->rank + 1
                                                      : self->rank;
    pk.tag = tag;
    pk.cid = cid;
    pk.seqnum = ++self->seq;
    if (self->conns[self->peers[p].host].kin && (type == IMPI_PK_DATA || type == IMPI_PK_DATASYNC))
        pk.reserved = __atomic_load_n(&self->stamp_out, __ATOMIC_RELAXED);
    impi_packet_encode(out, &pk);
}


/*  Queues a counted control packet (SYNCACK, CANCEL, CANCELYES/NO) to peer p. */
void msg_queue_ctl(gimpi_msg_t *self, int p, uint32_t type, uint64_t srqid,
                   uint64_t drqid, int tag, uint64_t cid)
{
    peer_t *peer = &self->peers[p];
    if (peer->gone)
        return;
    ctl_t *c = calloc(1, sizeof *c);
    if (!c) {
        msg_fault(self, peer->host, "out of memory");
        return;
    }
    s_header(self, c->hdr, type, p, srqid, drqid, 0, 0, tag, cid);
    msg_ctl_push(&peer->ctl_pkts, c);
    msg_flush(self, peer->host);
}

/* ------------------------------------------------------------------ completion */

/*  Frees a request for good (it must be out of every queue). */
void msg_req_free(gimpi_msg_t *self, gimpi_msg_req_t *r)
{
    ALL_DEL(r);
    free(r->owned);
    r->owned = NULL;
    if (self->match.nspares < REQ_SPARES) {
        r->spare_next = self->match.spares;
        self->match.spares = r;
        self->match.nspares++;
        return;
    }
    free(r);
}

/*  A zeroed request, a spare when there is one (msg_internal.h). */
gimpi_msg_req_t *msg_req_new(gimpi_msg_t *self)
{
    gimpi_msg_req_t *r = self->match.spares;
    if (!r)
        return calloc(1, sizeof *r);
    self->match.spares = r->spare_next;
    self->match.nspares--;
    memset(r, 0, sizeof *r);
    return r;
}

/*  Frees the spares. */
void msg_req_spares_free(gimpi_msg_t *self)
{
    while (self->match.spares) {
        gimpi_msg_req_t *r = self->match.spares;
        self->match.spares = r->spare_next;
        free(r);
    }
    self->match.nspares = 0;
}

/*  Marks a request complete (unlinking it); detached ones are freed at once. */
void msg_complete(gimpi_msg_t *self, gimpi_msg_req_t *r, int err)
{
    QUEUE_DEL(r);
    OUT_DEL(r);
    if (r->done)
        return;
    r->done = 1;
    if (r->kind == RQ_RECV)
        self->prog.rdone++;
    if (!r->error)
        r->error = err;
    if (r->detached) {
        self->match.ndetached--;
        msg_req_free(self, r);
    }
    if (self->prog.cv_waiters)
        pthread_cond_broadcast(&self->cv);
}

/*  A send is finished once its protocol is (data written, SYNCACK if needed) and no
 *  cancel reply is outstanding. */
void msg_send_check(gimpi_msg_t *self, gimpi_msg_req_t *r)
{
    if (r->cancel_wait)
        return;
    if (r->state == S_WRITTEN || (r->state == S_WAITACK && !r->is_long && r->acked))
        msg_complete(self, r, 0);
}

/*  An allocating receive (gimpi_msg_take_cid) gets memory for the whole message once
 *  it is matched; without it the data is dropped and the receive fails with GIMPI_ENOMEM. */
void msg_alloc_rbuf(gimpi_msg_req_t *r, uint64_t msglen)
{
    if (!r->alloc || r->rbuf)
        return;
    r->rbuf = r->owned = msglen < SIZE_MAX ? malloc(msglen ? (size_t)msglen : 1) : NULL;
    if (r->rbuf)
        r->size = (size_t)msglen;
    else
        r->error = GIMPI_ENOMEM;
}

/*  A short unexpected message has been taken: its sender learns it (a synchronous send to
 *  ourselves completes, a remote one gets its SYNCACK). */
void msg_release_sender(gimpi_msg_t *self, umsg_t *um)
{
    if (um->self_sreq) {
        um->self_sreq->local = NULL;
        msg_complete(self, um->self_sreq, 0);
    } else if (um->sync)
        msg_queue_ctl(self, um->src, IMPI_PK_SYNCACK, um->srqid, 0, um->tag, um->cid);
}

/*  Gives a matched unexpected message to receive r (the message is out of the queue). */
void msg_deliver(gimpi_msg_t *self, umsg_t *um, gimpi_msg_req_t *r)
{
    msg_alloc_rbuf(r, um->msglen);
    r->src = um->src;
    r->rtag = um->tag;
    r->msglen = um->msglen;
    size_t n = um->have < r->size ? um->have : r->size;
    if (n)
        memcpy(r->rbuf, um->data, n);
    r->recvd = um->have;
    if (um->is_long && self->peers[um->src].gone) {
        msg_complete(self, r, self->peers[um->src].gone);   /* the rest can never come */
    } else if (um->is_long) {
        QUEUE_PUSH(&self->match.long_recvs, r);
        msg_queue_ctl(self, um->src, IMPI_PK_SYNCACK, um->srqid, r->id, um->tag, um->cid);
    } else {
        msg_release_sender(self, um);
        msg_complete(self, r, r->msglen > r->size ? GIMPI_EOVERFLOW : 0);
    }
}

/* ------------------------------------------------------------------ failures */

/*  1 when every other task's host has died or finished (a wildcard receive can then only
 *  be satisfied by what is already queued), and no stranger can find this task. */
int msg_all_gone(gimpi_msg_t *self)
{
    if (self->dyn.npend > 0 || self->listed)   /* a caller on its way, or one may come */
        return 0;
    for (int p = 0; p < self->nprocs; p++)
        if (p != self->rank && !self->peers[p].gone)
            return 0;
    return self->nprocs > 1;
}

/*  Every operation involving host h fails with err (a death: also pending wildcard
 *  receives, which might have been waiting for it). */
void msg_host_gone(gimpi_msg_t *self, int h, int err, int death)
{
    conn_t *c = &self->conns[h];
    for (int k = 0; k < c->nprocs; k++) {
        int p = c->procs[k];
        peer_t *peer = &self->peers[p];
        if (!peer->gone)
            peer->gone = err;
        msg_ctl_clear(&peer->ctl_pkts);
        while (peer->pending_sends.head)
            msg_complete(self, peer->pending_sends.head, err);
        while (peer->streaming_sends.head)
            msg_complete(self, peer->streaming_sends.head, err);
    }
    for (gimpi_msg_req_t *r = self->match.sends_out.head, *nx; r; r = nx) {
        nx = OUT_NEXT(r);
        if (self->peers[r->peer].host != h)
            continue;
        /* delivered, only a cancel reply missing: the cancel simply failed */
        int delivered = r->state == S_WRITTEN || (r->state == S_WAITACK && !r->is_long && r->acked);
        msg_complete(self, r, delivered ? 0 : err);
    }
    for (gimpi_msg_req_t *r = self->match.long_recvs.head, *nx; r; r = nx) {
        nx = QUEUE_NEXT(r);
        if (self->peers[r->src].host == h)
            msg_complete(self, r, err);
    }
    for (gimpi_msg_req_t *r = self->match.posted_recvs.head, *nx; r; r = nx) {
        nx = QUEUE_NEXT(r);
        if ((r->peer >= 0 && self->peers[r->peer].host == h)
            || (r->peer < 0 && !r->alloc && (death || msg_all_gone(self))))
            msg_complete(self, r, err);       /* gimpi_msg_take_cid judges departures itself */
    }
    /* a buffered first packet of a long message can never be completed */
    for (umsg_t *um = self->match.unexpected.head, *nx; um; um = nx) {
        nx = um->next;
        if (um->src != self->rank && self->peers[um->src].host == h && um->is_long) {
            msg_um_remove(self, um);
            msg_um_free(um);
        }
    }
    for (int k = 0; self->hooks.fwd && k < c->nprocs; k++)     /* broadcasts from it: failed */
        self->hooks.fwd_hooks->gone(self, self->hooks.fwd, self->peers[c->procs[k]].tid);
    pthread_cond_broadcast(&self->cv);
}

/*  Closes connection h and forgets its half-done packets. */
void msg_conn_close(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->state = C_CLOSED;
    if (c->shm && msg_shm_on(c->shm))
        self->prog.nshm--;
    msg_shm_destroy(&c->shm);
    if (c->resolve_later) {
        c->resolve_later = 0;
        self->dyn.nresolve--;
    }
    /* a standard short send half written is in no list: it fails here */
    if (c->tbusy && c->treq && c->treq->state == S_STD && !c->treq->done)
        msg_complete(self, c->treq, GIMPI_ESYSERR);
    c->tbusy = 0;
    c->treq = NULL;
    msg_ctl_clear(&c->urgent);
    if (c->rphase && c->rkind == R_UNEXP && c->rum) {
        if (c->rum->claim)
            msg_complete(self, c->rum->claim, GIMPI_ESYSERR);
        msg_um_remove(self, c->rum);
        msg_um_free(c->rum);
    } else if (c->rphase && c->rkind == R_MATCHED && c->rreq) {
        msg_complete(self, c->rreq, GIMPI_ESYSERR);
    }
    c->rphase = 0;
    c->rum = NULL;
    c->rreq = NULL;
    if (c->dyn) {               /* a dynamic host never reopens: its buffer goes now */
        free(c->stage);
        c->stage = NULL;
        c->st_off = c->st_len = c->rhdr_off = 0;
    }
}

/*  A broken connection: records and prints why, closes it, fails what involved it. */
void msg_fault(gimpi_msg_t *self, int h, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (self->conns[h].state == C_CLOSED)
        return;
    int dyn = self->conns[h].dyn;
    if (dyn)
        snprintf(self->errmsg, sizeof self->errmsg, "t%x: %s",
                 (unsigned)self->peers[self->conns[h].procs[0]].tid, what);
    else
        snprintf(self->errmsg, sizeof self->errmsg, "host %d: %s", h, what);
    /* a dynamic peer (a spawned or shell-started task) may end at any time, as under
     * PVM: the call that needed it reports the cause (pvm_errcause), so only debug says */
    if (dyn && self->debug)
        fprintf(stderr, "gimpi[t%x]: %s\n", (unsigned)(self->tidbase + self->rank + 1),
                self->errmsg);
    else if (!dyn)
        fprintf(stderr, "gimpi[rank %d]: %s\n", self->rank, self->errmsg);
    msg_conn_close(self, h);
    /* a dynamic peer's death does not fail wildcard receives (others may still send) */
    msg_host_gone(self, h, GIMPI_ESYSERR, !dyn);
}

/*  1 when something here may be waiting for peer p's next message: a receive that could
 *  take it, a probe that found nothing, a send to p under way (both sides flooding each
 *  other must not both hold back), a call watching p. */
static int s_wanted(gimpi_msg_t *self, int p)
{
    peer_t *peer = &self->peers[p];
    if (self->match.missed || peer->watched || peer->pending_sends.head
        || peer->streaming_sends.head)
        return 1;
    for (gimpi_msg_req_t *r = self->match.posted_recvs.head; r; r = QUEUE_NEXT(r))
        if (r->peer < 0 || r->peer == p)
            return 1;
    for (gimpi_msg_req_t *r = self->match.sends_out.head; r; r = OUT_NEXT(r))
        if (r->peer == p)
            return 1;
    return 0;
}

/*  1 when peer p's credit is held back now. */
static int s_throttled(gimpi_msg_t *self, int p)
{
    const peer_t *peer = &self->peers[p];
    return ((self->match.unexp_max && peer->unexp > self->match.unexp_max)
            || (self->match.unexp_p2p_max && peer->unexp_p2p > self->match.unexp_p2p_max))
           && !s_wanted(self, p);
}

/*  Queues one PROTOACK to peer p on connection h.  0, or -1 when the connection broke. */
static int s_protoack(gimpi_msg_t *self, int h, int p)
{
    conn_t *c = &self->conns[h];
    ctl_t *a = calloc(1, sizeof *a);
    if (!a) {
        msg_fault(self, h, "out of memory");
        return -1;
    }
    s_header(self, a->hdr, IMPI_PK_PROTOACK, p, 0, 0, 0, 0, 0, 0);
    msg_ctl_push(&c->urgent, a);
    msg_flush(self, h);
    return c->state == C_OPEN ? 0 : -1;
}

/*  Counted packets reached the mark (msg_internal.h). */
int msg_credit(gimpi_msg_t *self, int h, int p)
{
    peer_t *peer = &self->peers[p];
    if (peer->owed || s_throttled(self, p)) {
        if (peer->owed++ == 0) {
            self->match.nowed++;
            if (self->debug)
                fprintf(stderr, "gimpi[rank %d]: credit of rank %d held back (unexpected: "
                        "%zu collective, %zu other)\n", self->rank, p, peer->unexp,
                        peer->unexp_p2p);
        }
        return 0;
    }
    return s_protoack(self, h, p);
}

/*  Sends the PROTOACKs held back from peers that may have credit again (msg_internal.h). */
void msg_credit_release(gimpi_msg_t *self)
{
    for (int p = 0; p < self->nprocs && self->match.nowed > 0; p++) {
        peer_t *peer = &self->peers[p];
        if (!peer->owed)
            continue;
        int h = peer->host;
        if (peer->gone || self->conns[h].state != C_OPEN || self->conns[h].fini_queued) {
            peer->owed = 0;             /* nobody to tell any more */
            self->match.nowed--;
            continue;
        }
        if (s_throttled(self, p))
            continue;
        while (peer->owed > 0 && self->conns[h].state == C_OPEN) {
            peer->owed--;
            if (s_protoack(self, h, p) < 0)
                break;
        }
        if (peer->owed == 0 || self->conns[h].state != C_OPEN) {
            peer->owed = 0;
            self->match.nowed--;
        }
    }
}

/*  Peer p is gone by the liveness hook's word (msg_internal.h). */
void msg_peer_lost(gimpi_msg_t *self, int p)
{
    int h = self->peers[p].host;
    if (self->peers[p].gone || self->conns[h].nprocs != 1)
        return;
    if (self->conns[h].state == C_OPEN)
        msg_fault(self, h, "gone from groupd (stopped, dead or cut off): its operations fail");
    else
        msg_host_gone(self, h, GIMPI_ESYSERR, 0);
}

/*  Closes a connection once PK_FINI went both ways (doc/impi-protocol.md §4.9). */
void msg_check_fini(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    if (c->fini_sent && c->fini_recv && c->state == C_OPEN) {
        msg_conn_close(self, h);
        msg_host_gone(self, h, GIMPI_ESYSERR, 0);
    }
}

/* ------------------------------------------------------------------ send side */

/*  Chooses the next packet for connection h: uncounted urgent packets first, then round
 *  robin over its procs with credit: control, first packets, continuation data. */
static int s_next_packet(gimpi_msg_t *self, conn_t *c)
{
    ctl_t *u = msg_ctl_pop(&c->urgent);
    if (u) {
        memcpy(c->thdr, u->hdr, IMPI_PACKET_SIZE);
        c->tkind = T_CTL;
        c->tfini = u->fini;
        c->tpay = NULL;
        c->tpay_len = 0;
        free(u);
        return 1;
    }
    if (c->fini_queued)
        return 0;
    for (int k = 0; k < c->nprocs; k++) {
        int p = c->procs[(c->rr + k) % c->nprocs];
        peer_t *peer = &self->peers[p];
        if (peer->tx_count >= c->hiwater)
            continue;
        c->tfini = 0;
        c->tpay = NULL;
        c->tpay_len = 0;
        ctl_t *q = msg_ctl_pop(&peer->ctl_pkts);
        gimpi_msg_req_t *r;
        if (q) {
            memcpy(c->thdr, q->hdr, IMPI_PACKET_SIZE);
            free(q);
            c->tkind = T_CTL;
        } else if ((r = peer->pending_sends.head)) {
            QUEUE_DEL(r);
            r->is_long = r->len > c->pktlen;
            size_t n = r->len < c->pktlen ? r->len : c->pktlen;
            int sync = r->is_long || r->sync;
            s_header(self, c->thdr, sync ? IMPI_PK_DATASYNC : IMPI_PK_DATA, p, r->id, 0,
                     r->len, (uint32_t)n, r->tag, r->cid);
            c->tpay = r->sbuf;
            c->tpay_len = n;
            c->tkind = T_FIRST;
            c->treq = r;
            r->off = n;
            if (sync) {
                r->state = S_WAITACK;
                OUT_PUSH(&self->match.sends_out, r);
            } else
                r->state = S_STD;
        } else if ((r = peer->streaming_sends.head)) {
            size_t n = r->len - r->off < c->pktlen ? r->len - r->off : c->pktlen;
            s_header(self, c->thdr, IMPI_PK_DATA, p, r->id, r->drqid, r->len, (uint32_t)n,
                     r->tag, r->cid);
            c->tpay = r->sbuf + r->off;
            c->tpay_len = n;
            c->tkind = T_REST;
            c->treq = r;
            r->off += n;
            c->tlast = r->off == r->len;
            if (c->tlast)
                QUEUE_DEL(r);
        } else
            continue;
        peer->tx_count++;
        c->rr = (c->rr + k + 1) % c->nprocs;
        return 1;
    }
    return 0;
}

/*  Writes a standard send's only DATA packet (srqid, len <= the packet size) to peer p at
 *  once, without a request, when p's connection is a shared-memory link with nothing
 *  queued or half written, p has credit and the ring has room for the whole packet in
 *  one piece (it is encoded there, not copied): the
 *  bytes are exactly those the queued path would write, one look at the queues sooner.
 *  1 written, 0 not now (queue it: msg_isend), -1 the ring is corrupt (the connection is
 *  broken, p gone). */
int msg_send_now(gimpi_msg_t *self, int p, uint64_t srqid, uint64_t cid, int tag,
                 const void *buf, size_t len)
{
    peer_t *peer = &self->peers[p];
    conn_t *c = &self->conns[peer->host];
    if (self->debug || len > c->pktlen || c->state != C_OPEN || !c->shm || !msg_shm_on(c->shm)
        || c->tbusy || c->want_out || c->urgent.head || c->fini_queued
        || peer->tx_count >= c->hiwater || peer->ctl_pkts.head || peer->pending_sends.head
        || peer->streaming_sends.head)
        return 0;
    uint8_t *at;                        /* encoded and copied in place: one copy */
    int rc = msg_shm_reserve(c->shm, IMPI_PACKET_SIZE + len, &at);
    if (rc <= 0) {
        if (rc < 0)
            msg_fault(self, peer->host, "send: shared-memory ring corrupt");
        return rc;
    }
    s_header(self, at, IMPI_PK_DATA, p, srqid, 0, len, (uint32_t)len, tag, cid);
    if (len)                            /* (buf may be NULL then) */
        memcpy(at + IMPI_PACKET_SIZE, buf, len);
    msg_shm_commit(c->shm, c->fd, IMPI_PACKET_SIZE + len);
    peer->tx_count++;
    self->prog.moved++;
    return 1;
}

/*  The packet being written on c is all out. */
static void s_packet_done(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    gimpi_msg_req_t *r = c->treq;
    c->tbusy = 0;
    c->treq = NULL;
    if (c->tkind == T_FIRST && r->state == S_STD)
        msg_complete(self, r, 0);
    else if (c->tkind == T_REST && c->tlast) {
        r->state = S_WRITTEN;
        msg_send_check(self, r);
    } else if (c->tkind == T_CTL && c->tfini) {
        c->fini_sent = 1;
        msg_check_fini(self, h);
    }
}

/*  Prints the packet just chosen for connection h (GIMPI_DEBUG=1). */
static void s_debug_out(gimpi_msg_t *self, int h)
{
    impi_packet_t pk;
    char line[400];
    impi_packet_decode(self->conns[h].thdr, UINT32_MAX, &pk);
    fprintf(stderr, "gimpi[rank %d] -> host %d: %s\n", self->rank, h,
            impi_packet_format(&pk, line, sizeof line));
}

/*  GIMPI_DEBUG: how connection h was made. */
void msg_debug_conn(gimpi_msg_t *self, int h)
{
    if (self->debug)
        fprintf(stderr, "gimpi[rank %d] host %d: connected over %s\n", self->rank, h,
                gimpi_host_is_local(self->conns[h].fd) ? "a local socket" : "TCP");
}

/*  Connection h has just opened (msg_internal.h): a local socket joins only tasks of our
 *  user (both ends check), so it gets the shared-memory link, which first sends our
 *  transport record (an offer, or a refusal with GIMPI_SHM=0). */
int msg_conn_opened(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    if (c->state != C_OPEN || c->shm || !gimpi_host_is_local(c->fd))
        return 0;
    char err[200];
    if (!(c->shm = msg_shm_new(c->fd, self->shm_ring, err, sizeof err))) {
        msg_fault(self, h, "%s", err);
        return -1;
    }
    return 0;
}


/*  sendmsg on connection c, or its shared-memory link. */
static ssize_t s_send(conn_t *c, struct iovec *iov, int niov)
{
    if (c->shm && msg_shm_on(c->shm))
        return msg_shm_send(c->shm, c->fd, iov, niov);
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
    return sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}


/*  Appends to iov the continuation packets that s_next_packet would choose right after
 *  the one being written on c: more DATA of the same long send, while the host has one
 *  proc, nothing else is queued (urgent, control, first packets, FINI) and the pair has
 *  credit.  Their headers are encoded into c->bhdr with the sequence numbers they will
 *  get; nothing is committed (the caller takes the packets that did get written through
 *  s_next_packet, which then yields exactly these).  So one sendmsg writes up to
 *  BATCH_MAX packets more, and the bytes on the wire are the same as one by one. */
static void s_batch(gimpi_msg_t *self, conn_t *c, struct iovec *iov, int *niov)
{
    gimpi_msg_req_t *r = c->treq;
    if (c->tkind != T_REST || c->tlast || c->nprocs != 1 || c->urgent.head || c->fini_queued)
        return;
    int p = c->procs[0];
    peer_t *peer = &self->peers[p];
    if (peer->ctl_pkts.head || peer->pending_sends.head || peer->streaming_sends.head != r)
        return;
    uint64_t seq = self->seq;
    size_t off = r->off;
    for (uint32_t k = 0; k < BATCH_MAX && off < r->len && peer->tx_count + k < c->hiwater;
         k++) {
        size_t n = r->len - off < c->pktlen ? r->len - off : c->pktlen;
        s_header(self, c->bhdr[k], IMPI_PK_DATA, p, r->id, r->drqid, r->len, (uint32_t)n,
                 r->tag, r->cid);
        iov[(*niov)++] = (struct iovec){ c->bhdr[k], IMPI_PACKET_SIZE };
        iov[(*niov)++] = (struct iovec){ (void *)(r->sbuf + off), n };
        off += n;
    }
    self->seq = seq;
}

/*  Writes what connection h may send now, until the socket is full or nothing is left.
 *  Several continuation packets of one long send go out in one sendmsg (s_batch).
 *  Returns -1 when the connection broke. */
int msg_flush(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    if (c->shm && msg_shm_pending(c->shm)) {
        c->want_out = 1;                /* sent once the peer's record is in */
        return 0;
    }
    while (c->state == C_OPEN) {
        if (!c->tbusy) {
            if (!s_next_packet(self, c)) {
                c->want_out = 0;
                return 0;
            }
            c->tbusy = 1;
            c->thdr_off = 0;
            c->tpay_off = 0;
            if (self->debug)
                s_debug_out(self, h);
        }
        struct iovec iov[2 + 2 * BATCH_MAX];
        int niov = 0;
        if (c->thdr_off < IMPI_PACKET_SIZE)
            iov[niov++] = (struct iovec){ c->thdr + c->thdr_off,
                                          IMPI_PACKET_SIZE - c->thdr_off };
        if (c->tpay_off < c->tpay_len)
            iov[niov++] = (struct iovec){ (void *)(c->tpay + c->tpay_off),
                                          c->tpay_len - c->tpay_off };
        s_batch(self, c, iov, &niov);
        ssize_t n = s_send(c, iov, niov);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                c->want_out = 1;
                if (self->prog.thread_polling || self->prog.app_polling)
                    msg_kick(self);           /* pollers must add POLLOUT */
                return 0;
            }
            msg_fault(self, h, "send: %s", errno == EPROTO ? "shared-memory ring corrupt"
                                                          : strerror(errno));
            return -1;
        }
        /* account the bytes written to the current packet, then to the batched ones,
         * each committed now through s_next_packet (it picks exactly them) */
        size_t m = (size_t)n;
        self->prog.moved++;
        for (;;) {
            if (!c->tbusy) {
                int ok = s_next_packet(self, c);
                assert(ok && c->tkind == T_REST);
                (void)ok;
                c->tbusy = 1;
                c->thdr_off = 0;
                c->tpay_off = 0;
                if (self->debug)
                    s_debug_out(self, h);
            }
            size_t hh = IMPI_PACKET_SIZE - c->thdr_off;
            size_t k = m < hh ? m : hh;
            c->thdr_off += k;
            m -= k;
            k = m < c->tpay_len - c->tpay_off ? m : c->tpay_len - c->tpay_off;
            c->tpay_off += k;
            m -= k;
            if (c->thdr_off == IMPI_PACKET_SIZE && c->tpay_off == c->tpay_len)
                s_packet_done(self, h);
            if (m == 0)
                break;
        }
    }
    return 0;
}
