/*  msg_recv.c — the per-connection packet state machine of the engine, receive side: a
 *  staging buffer, a header being read, and a payload being stored (straight into the
 *  user's buffer with readv when a receive is already matched, or read in place from a
 *  shared-memory ring); first packets matched on arrival or queued as unexpected,
 *  continuation data, the control packets (SYNCACK, PROTOACK, CANCEL and its answers,
 *  FINI), the counting of packets for credit, and the blocking receive straight from a
 *  ring.  Everything runs with the context's lock held.  See doc/data-plane.md.
 */
#include "net/msg_internal.h"
#include "net/gimpi_msg_fwd.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* ------------------------------------------------------------------ receive side */

/*  readv on connection c, or its shared-memory link. */
static ssize_t s_recv(conn_t *c, struct iovec *iov, int niov)
{
    if (c->shm && msg_shm_on(c->shm))
        return msg_shm_recv(c->shm, c->fd, iov, niov);
    if (niov == 1)
        return recv(c->fd, iov[0].iov_base, iov[0].iov_len, MSG_DONTWAIT);
    return readv(c->fd, iov, niov);
}

/*  The peer's transport record on connection h: reads it, and once the link is settled
 *  pushes out what waited for it.  1 settled, 0 not yet, -1 the connection failed. */
static int s_settle(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    char err[200];
    int rc = msg_shm_settle(c->shm, c->fd, err, sizeof err);
    if (rc == -2)
        msg_fault(self, h, "connection closed without PK_FINI (peer died?)");
    else if (rc < 0)
        msg_fault(self, h, "%s", err);
    if (rc != 1)
        return rc < 0 ? -1 : 0;
    self->prog.nshm += msg_shm_on(c->shm);
    if (self->debug)
        fprintf(stderr, "gimpi[rank %d] host %d: packets go through %s\n", self->rank, h,
                msg_shm_on(c->shm) ? "shared memory" : "the socket");
    if (c->want_out && msg_flush(self, h) < 0)
        return -1;
    return 1;
}

/*  The world rank of a packet's source on connection h, or -1. */
static int s_find_src(gimpi_msg_t *self, conn_t *c, const impi_proc_t *src)
{
    for (int k = 0; k < c->nprocs; k++)
        if (impi_proc_equal(&self->peers[c->procs[k]].id, src))
            return c->procs[k];
    return -1;
}

/*  Finds a send of ours by srqid among those whose first packet is out. */
static gimpi_msg_req_t *s_find_out(gimpi_msg_t *self, int p, uint64_t srqid)
{
    for (gimpi_msg_req_t *r = self->match.sends_out.head; r; r = OUT_NEXT(r))
        if (r->id == srqid && r->peer == p)
            return r;
    return NULL;
}

/*  A first (or only) data packet: match it or keep it as unexpected. */
static int s_on_first(gimpi_msg_t *self, conn_t *c, int p, const impi_packet_t *pk)
{
    int is_long = pk->len < pk->msglen;
    int sync = pk->type == IMPI_PK_DATASYNC;
    gimpi_msg_req_t *r = NULL;
    for (r = self->match.posted_recvs.head; r; r = QUEUE_NEXT(r))
        if (msg_matches(r, p, pk->tag, pk->cid))
            break;
    c->rpay_total = pk->len;
    c->rpay_off = 0;
    c->rphase = 1;
    if (r) {
        QUEUE_DEL(r);
        r->src = p;
        r->rtag = pk->tag;
        r->msglen = pk->msglen;
        r->in_srqid = pk->srqid;
        r->in_long = is_long;
        r->in_sync = sync;
        r->recvd = 0;
        msg_alloc_rbuf(r, pk->msglen);
        c->rkind = R_MATCHED;
        c->rreq = r;
        c->rdst = r->rbuf;
        c->rdst_len = pk->len < r->size ? pk->len : r->size;
        if (is_long) {      /* matched: the sender may start the rest while we read */
            msg_queue_ctl(self, p, IMPI_PK_SYNCACK, r->in_srqid, r->id, r->rtag, r->cid);
            if (c->state != C_OPEN)
                return -1;
        }
        return 0;
    }
    umsg_t *um = calloc(1, sizeof *um);
    if (um)
        um->data = malloc(pk->len ? pk->len : 1);
    if (!um || !um->data) {
        free(um);
        msg_fault(self, self->peers[p].host, "out of memory for an unexpected message");
        return -1;
    }
    um->src = p;
    um->tag = pk->tag;
    um->cid = pk->cid;
    um->msglen = pk->msglen;
    um->srqid = pk->srqid;
    um->sync = sync;
    um->is_long = is_long;
    um->have = pk->len;
    msg_um_push(self, um);
    c->rkind = R_UNEXP;
    c->rum = um;
    c->rdst = um->data;
    c->rdst_len = pk->len;
    return 0;
}

/*  Queues PK_FINI (urgent, after any half-written packet) on connection h and pushes it
 *  out.  Sent by finalize, and in answer to a peer's FINI: everything for that peer has
 *  failed already (msg_host_gone), so nothing more would go to it anyway, and a peer that
 *  leaves early (PVM's pvm_exit) is not held until this task leaves too.  0 or -1 (no
 *  memory). */
int msg_queue_fini(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    ctl_t *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    impi_packet_t pk;
    memset(&pk, 0, sizeof pk);
    pk.type = IMPI_PK_FINI;
    pk.src.pid = -1;
    pk.dest.pid = -1;
    impi_packet_encode(f->hdr, &pk);
    f->fini = 1;
    c->fini_queued = 1;
    msg_ctl_push(&c->urgent, f);
    msg_flush(self, h);
    return 0;
}

/*  A continuation DATA packet of a long message from world rank p on connection h: its
 *  payload goes to the matched receive waiting for it. */
static int s_on_cont(gimpi_msg_t *self, int h, int p, const impi_packet_t *pk)
{
    conn_t *c = &self->conns[h];
    gimpi_msg_req_t *r;
    for (r = self->match.long_recvs.head; r; r = QUEUE_NEXT(r))
        if (r->id == pk->drqid)
            break;
    if (!r || r->src != p || r->msglen != pk->msglen || r->recvd + pk->len > pk->msglen) {
        msg_fault(self, h, "DATA continuation for no receive (drqid %llu)",
                (unsigned long long)pk->drqid);
        return -1;
    }
    c->rkind = R_CONT;
    c->rreq = r;
    c->rdst = r->recvd < r->size ? r->rbuf + r->recvd : NULL;
    c->rdst_len = r->recvd < r->size
                      ? (pk->len < r->size - r->recvd ? pk->len : r->size - r->recvd)
                      : 0;
    c->rpay_total = pk->len;
    c->rpay_off = 0;
    c->rphase = 1;
    return 0;
}

/*  A control packet from world rank p on connection h: PROTOACK credit, SYNCACK (the rest
 *  of a long send may go), CANCEL and its replies. */
static int s_on_control(gimpi_msg_t *self, int h, int p, const impi_packet_t *pk)
{
    conn_t *c = &self->conns[h];
    peer_t *peer = &self->peers[p];
    gimpi_msg_req_t *r;
    switch (pk->type) {
    case IMPI_PK_PROTOACK:
        peer->tx_count = peer->tx_count > c->ackmark ? peer->tx_count - c->ackmark : 0;
        return msg_flush(self, h);
    case IMPI_PK_SYNCACK:
        r = s_find_out(self, p, pk->srqid);
        if (r && r->state == S_WAITACK) {
            r->acked = 1;
            if (r->is_long) {
                r->drqid = pk->drqid;
                r->state = S_REST;
                QUEUE_PUSH(&peer->streaming_sends, r);
                return msg_flush(self, h);
            }
            msg_send_check(self, r);
        }
        return 0;
    case IMPI_PK_CANCEL: {
        umsg_t *um;
        /* the newest matching message first (doc/impi-protocol.md §4.8) */
        for (um = self->match.unexpected.tail; um; um = um->prev)
            if (um->src == p && um->srqid == pk->srqid && um->complete)
                break;
        if (um) {
            msg_um_remove(self, um);
            msg_um_free(um);
        }
        msg_queue_ctl(self, p, um ? IMPI_PK_CANCELYES : IMPI_PK_CANCELNO, pk->srqid, 0, pk->tag,
                      pk->cid);
        return c->state == C_OPEN ? 0 : -1;
    }
    case IMPI_PK_CANCELYES:
    case IMPI_PK_CANCELNO:
        r = s_find_out(self, p, pk->srqid);
        if (r && r->cancel_wait) {
            r->cancel_wait = 0;
            if (pk->type == IMPI_PK_CANCELYES) {
                r->cancelled = 1;
                msg_complete(self, r, 0);
            } else
                msg_send_check(self, r);
        }
        return 0;
    }
    return 0;
}

/*  A data packet pk from kin on c carries a stamp: the highest seen is kept. */
static void s_stamp_in(gimpi_msg_t *self, const conn_t *c, const impi_packet_t *pk)
{
    if (c->kin && (pk->type == IMPI_PK_DATA || pk->type == IMPI_PK_DATASYNC)
        && pk->reserved > __atomic_load_n(&self->stamp_in, __ATOMIC_RELAXED))
        __atomic_store_n(&self->stamp_in, pk->reserved, __ATOMIC_RELAXED);  /* only we write */
}

/*  Counts a packet of the given type from peer p on connection h for flow control: every
 *  ackmark-th counted one earns p a PROTOACK (or one held back).  0, or -1 (broken). */
static int s_count_in(gimpi_msg_t *self, int h, int p, uint32_t type)
{
    conn_t *c = &self->conns[h];
    peer_t *peer = &self->peers[p];
    if (impi_packet_info(type)->counted && ++peer->rx_count >= c->ackmark) {
        peer->rx_count -= c->ackmark;
        if (!c->fini_queued && msg_credit(self, h, p) < 0)
            return -1;
    }
    return 0;
}

/*  Handles the decoded header pk of the packet starting on connection h: its payload, if
 *  any, is then awaited (rphase 1). */
static int s_on_packet(gimpi_msg_t *self, int h, const impi_packet_t *pk)
{
    conn_t *c = &self->conns[h];
    if (self->debug) {
        char line[400];
        fprintf(stderr, "gimpi[rank %d] <- host %d: %s\n", self->rank, h,
                impi_packet_format(pk, line, sizeof line));
    }
    s_stamp_in(self, c, pk);
    if (pk->type == IMPI_PK_FINI) {
        c->fini_recv = 1;
        msg_host_gone(self, h, GIMPI_ESYSERR, 0);
        if (!c->fini_queued)
            msg_queue_fini(self, h);      /* answer at once: the peer need not wait for us */
        msg_check_fini(self, h);
        return c->state == C_OPEN ? 0 : -1;
    }
    int p = s_find_src(self, c, &pk->src);
    if (p < 0 || !impi_proc_equal(&pk->dest, &self->me)) {
        msg_fault(self, h, "%s from an unknown proc or for another proc",
                impi_packet_name(pk->type));
        return -1;
    }
    if (s_count_in(self, h, p, pk->type) < 0)
        return -1;
    switch (pk->type) {
    case IMPI_PK_DATA:
    case IMPI_PK_DATASYNC:
        c->big = pk->len >= DIRECT_MIN;
        if (pk->type == IMPI_PK_DATA && pk->len < pk->msglen)     /* continuation */
            return s_on_cont(self, h, p, pk);
        return s_on_first(self, c, p, pk);
    }
    return s_on_control(self, h, p, pk);
}

/*  A whole 128-byte header has been read on connection h. */
static int s_on_header(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    impi_packet_t pk;
    c->rhdr_off = 0;
    int rc = impi_packet_decode(c->rhdr, c->pktlen, &pk);
    if (rc != IMPI_OK) {
        msg_fault(self, h, "malformed packet header (%s)", impi_strerror(rc));
        return -1;
    }
    return s_on_packet(self, h, &pk);
}

/*  The payload of the current packet of connection h is all in. */
static void s_on_payload(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    c->rphase = 0;
    gimpi_msg_req_t *r = c->rreq;
    umsg_t *um = c->rum;
    c->rreq = NULL;
    c->rum = NULL;
    switch (c->rkind) {
    case R_MATCHED:
        r->recvd = c->rpay_total;
        if (r->in_long) {
            QUEUE_PUSH(&self->match.long_recvs, r);
        } else {
            if (r->in_sync)
                msg_queue_ctl(self, r->src, IMPI_PK_SYNCACK, r->in_srqid, 0, r->rtag, r->cid);
            msg_complete(self, r, r->msglen > r->size ? GIMPI_EOVERFLOW : 0);
        }
        break;
    case R_CONT:
        r->recvd += c->rpay_total;
        if (r->recvd == r->msglen)
            msg_complete(self, r, r->msglen > r->size ? GIMPI_EOVERFLOW : 0);
        break;
    case R_UNEXP:
        um->complete = 1;
        if (um->cid == GIMPI_CID_FWD && !um->claim && !um->is_long) {   /* forward hook */
            msg_um_remove(self, um);
            uint8_t *d = um->data;
            um->data = NULL;
            self->hooks.fwd_hooks->arrived(self, &self->hooks.fwd, self->peers[um->src].tid, d,
                                           um->have);
            msg_um_free(um);
        } else if (um->claim) {
            msg_deliver(self, um, um->claim);
            msg_um_free(um);
        } else
            msg_arrival_note(self);
        break;
    }
}

/*  Stores n bytes of payload that sit in the staging buffer. */
static void s_take_payload(conn_t *c, const uint8_t *src, size_t n)
{
    if (c->rdst && c->rpay_off < c->rdst_len) {
        size_t k = c->rdst_len - c->rpay_off < n ? c->rdst_len - c->rpay_off : n;
        memcpy(c->rdst + c->rpay_off, src, k);
    }
    c->rpay_off += n;
}

/*  Takes the next packet of connection h (a shared-memory link, between packets, nothing
 *  staged) where it lies in the peer's ring, when it is all there in one piece: the
 *  header is decoded and the payload copied to its destination from the ring, with no
 *  staging copy.  1 taken, 2 the ring is empty (and the peer there), 0 not so (the packet
 *  wraps or is not all in, its header is bad, the peer hung up: the staged path reads and
 *  reports), -1 the connection broke. */
static int s_read_in_place(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    const uint8_t *at;
    ssize_t n = msg_shm_peek(c->shm, c->fd, &at);
    if (n == 0 && !msg_shm_ready(c->shm))
        return 2;                       /* (a look at an empty ring costs no more) */
    if (n < IMPI_PACKET_SIZE)
        return 0;                       /* (an error too: msg_shm_recv reports it) */
    impi_packet_t pk;
    if (impi_packet_decode(at, c->pktlen, &pk) != IMPI_OK
        || (size_t)n - IMPI_PACKET_SIZE < pk.len)
        return 0;
    if (s_on_packet(self, h, &pk) < 0 || c->state != C_OPEN)
        return -1;                      /* (closed: the ring is gone with it) */
    if (c->rphase == 1) {               /* from the ring straight to where it belongs */
        s_take_payload(c, at + IMPI_PACKET_SIZE, pk.len);
        c->rpay_off = c->rpay_total;
    }
    msg_shm_consume(c->shm, c->fd, IMPI_PACKET_SIZE + pk.len);
    self->prog.moved++;
    if (c->rphase == 1)
        s_on_payload(self, h);
    return 1;
}

/*  A blocking receive from peer p (cid, tag: GIMPI_ANY or one) taken straight from p's
 *  ring (msg_internal.h).  Nothing may be able to claim the packet before it: the caller
 *  checked that no receive is posted and no message is unexpected. */
int msg_recv_now(gimpi_msg_t *self, int p, uint64_t cid, int tag, void *buf, size_t size,
                 gimpi_status_t *st, int looks)
{
    int h = self->peers[p].host;
    conn_t *c = &self->conns[h];
    if (self->debug || c->state != C_OPEN || !c->shm || !msg_shm_on(c->shm) || c->rphase
        || c->rhdr_off || c->st_off != c->st_len)
        return 0;
    const uint8_t *at = NULL;
    ssize_t n = 0;
    for (int i = 0; i < looks && n == 0; i++) {
        if (i)
            __builtin_ia32_pause();
        n = msg_shm_peek(c->shm, c->fd, &at);
    }
    impi_packet_t pk;
    if (n < IMPI_PACKET_SIZE || impi_packet_decode(at, c->pktlen, &pk) != IMPI_OK
        || pk.type != IMPI_PK_DATA || pk.len != pk.msglen || (size_t)n - IMPI_PACKET_SIZE < pk.len
        || pk.cid != cid || (tag >= 0 && pk.tag != tag) || s_find_src(self, c, &pk.src) != p
        || !impi_proc_equal(&pk.dest, &self->me))
        return 0;                       /* not here yet, or not so simple: the full path */
    s_stamp_in(self, c, &pk);
    if (s_count_in(self, h, p, pk.type) < 0)
        return 0;                       /* (broken: the full path reports it) */
    if (pk.len && size)                 /* (buf may be NULL when size is 0) */
        memcpy(buf, at + IMPI_PACKET_SIZE, pk.len < size ? pk.len : size);
    msg_shm_consume(c->shm, c->fd, IMPI_PACKET_SIZE + pk.len);
    c->big = pk.len >= DIRECT_MIN;
    self->prog.moved++;
    self->prog.rdone++;
    if (st) {
        st->source = self->peers[p].tid;
        st->tag = pk.tag;
        st->len = (size_t)pk.msglen;
        st->error = pk.len > size ? GIMPI_EOVERFLOW : 0;
        st->cancelled = 0;
    }
    return pk.len > size ? GIMPI_EOVERFLOW : 1;
}

/*  Reads and handles whatever connection h has for us, until the socket is empty.
 *  Returns -1 when the connection broke or closed. */
int msg_read(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    int drained = 0;            /* the last read came back short: the socket is empty */
    uint64_t rdone = self->prog.rdone;
    if (c->shm && msg_shm_pending(c->shm) && s_settle(self, h) <= 0)
        return c->state == C_OPEN ? 0 : -1;
    while (c->state == C_OPEN) {
        /* a receive completed and an application thread waits: let it return (and post
         * its next receive) before the next packet is looked at, so that a message
         * following at once is matched on arrival rather than copied as unexpected.
         * What is already staged is taken first by the next msg_drive. */
        if (c->rphase == 0 && c->rhdr_off == 0 && self->prog.rdone != rdone
            && __atomic_load_n(&self->prog.app_blocked, __ATOMIC_RELAXED))
            return 0;
        size_t avail = c->st_len - c->st_off;
        if (c->rphase == 0 && avail) {
            size_t need = IMPI_PACKET_SIZE - c->rhdr_off;
            size_t k = avail < need ? avail : need;
            memcpy(c->rhdr + c->rhdr_off, c->stage + c->st_off, k);
            c->st_off += k;
            c->rhdr_off += k;
            if (c->rhdr_off == IMPI_PACKET_SIZE && s_on_header(self, h) < 0)
                return -1;
            continue;
        }
        if (c->rphase == 1) {
            size_t left = c->rpay_total - c->rpay_off;
            if (left == 0) {
                s_on_payload(self, h);
                continue;
            }
            if (avail) {
                size_t k = avail < left ? avail : left;
                s_take_payload(c, c->stage + c->st_off, k);
                c->st_off += k;
                continue;
            }
        }
        if (c->rphase == 0 && c->rhdr_off == 0 && c->shm && msg_shm_on(c->shm)) {
            int k = s_read_in_place(self, h);
            if (k < 0)
                return -1;
            if (k == 2)
                return 0;
            if (k > 0)
                continue;
        }
        /* staging buffer empty: read, straight into the user's buffer when worth it.
         * After a short read the socket is empty: poll() will tell when there is more,
         * which saves a read that would only say EAGAIN. */
        if (drained)
            return 0;
        ssize_t n;
        size_t direct = 0, want;
        if (c->rphase == 1 && c->rdst && c->rpay_off < c->rdst_len
            && (c->rpay_total >= DIRECT_MIN || c->rdst_len - c->rpay_off >= DIRECT_MIN)) {
            /* the rest of the payload where it belongs, plus just the next header (more
             * would land in the staging buffer and cost a copy if it is payload).  Also
             * a big packet's tail however small: TCP segments do not end where packets
             * do, and a bulk read there would pull the next payload into the staging
             * buffer (measured: 84 % of stream1m's bytes were copied so) */
            direct = c->rdst_len - c->rpay_off;
            struct iovec iov[2] = { { c->rdst + c->rpay_off, direct },
                                    { c->stage, IMPI_PACKET_SIZE } };
            want = direct + IMPI_PACKET_SIZE;
            n = s_recv(c, iov, 2);
        } else {
            /* after big packets a header is read alone, so that its payload can then go
             * straight to its destination; small packets are read in bulk */
            want = c->rphase == 0 && c->big ? IMPI_PACKET_SIZE - c->rhdr_off : STAGE_SIZE;
            n = s_recv(c, &(struct iovec){ c->stage, want }, 1);
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            msg_fault(self, h, "receive: %s", errno == EPROTO ? "shared-memory ring corrupt"
                                                             : strerror(errno));
            return -1;
        }
        if (n == 0) {
            if (c->fini_recv && c->rphase == 0 && c->rhdr_off == 0) {
                msg_conn_close(self, h);          /* a finished peer hung up: fine */
                return -1;
            }
            msg_fault(self, h, "connection closed %s",
                    c->rphase || c->rhdr_off ? "in the middle of a packet"
                                             : "without PK_FINI (peer died?)");
            return -1;
        }
        size_t m = (size_t)n;
        self->prog.moved++;
        drained = m < want;
        if (direct) {
            size_t k = m < direct ? m : direct;
            c->rpay_off += k;
            m -= k;
        }
        c->st_off = 0;
        c->st_len = m;
    }
    return -1;
}
