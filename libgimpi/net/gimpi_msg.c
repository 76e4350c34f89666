/*  gimpi_msg.c — the data plane of one task: IMPI's packet protocol (impi-protocol.md §4)
 *  over the host connections, message matching, and the progress machinery.
 *
 *  Everything lives in the gimpi_msg_t context and is guarded by its one mutex.  Sockets
 *  are non-blocking; each connection has a send side (a packet being written plus the
 *  queues it is chosen from: urgent uncounted PROTOACK/FINI first, then per destination
 *  proc the counted control packets, first packets of new messages and continuation data
 *  of rendezvous messages, all subject to the pair's flow-control credit) and a receive
 *  side (a staging buffer, a header being read, and a payload being stored — straight into
 *  the user's buffer with readv when a receive is already matched).
 *
 *  Progress: an application thread blocked in a call drives the sockets itself (a short
 *  spin with poll(0), then a blocking poll()).  A progress thread takes over only once the
 *  application has stayed out of the library for a couple of milliseconds, so it never
 *  sits on the small-message path; the application kicks it out of poll() (an eventfd)
 *  when it comes back and needs to block.  Standard sends return once the data is out or
 *  copied into the library, so a send never waits for its receiver to enter the library.
 *  See doc/data-plane.md for the design and its decisions.
 */
#include "gimpi.h"
#include "net/gimpi_host.h"
#include "gimpi_msg.h"
#include "net/gimpi_msg_fwd.h"
#include "impi/impi_tables.h"
#include "impi/impi_wire.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define STAGE_SIZE (128 * 1024)     /* receive staging buffer per connection */
#define DIRECT_MIN 2048             /* payload bytes worth a readv straight to the user */
#define DIRECT_READ_MAX 2           /* a quick look reads up to this many sockets directly */
#define SPIN_US_DEFAULT 500         /* how long a blocked call polls (yielding) before sleeping */
#define BUFFER_AFTER_US 1000        /* a standard long send copies its data after this */
#define IDLE_TAKEOVER_MS 2          /* app out of the library this long: thread polls */
#define BATCH_MAX 16                /* continuation packets written with the current one */
#define TID_GRACE_US 2000000        /* a caller of a tid we may be about to get waits this long */

/* ------------------------------------------------------------------ types */

typedef struct req_list_t req_list_t;
typedef struct link_t {
    gimpi_msg_req_t *prev, *next;
    req_list_t *on;
} link_t;
struct req_list_t {
    gimpi_msg_req_t *head, *tail;
};

enum { RQ_SEND, RQ_RECV };
enum {                              /* send states */
    S_QUEUED,                       /* in its peer's first queue */
    S_WAITACK,                      /* first packet out, waits for SYNCACK (long or sync) */
    S_STD,                          /* standard short: first packet being written */
    S_REST,                         /* matched long: continuation data going out */
    S_WRITTEN,                      /* everything written, waits for a cancel reply */
    S_LOCAL,                        /* to self: sits in our own unexpected queue */
};

struct gimpi_msg_req_t {
    int kind;
    int done, error, cancelled, detached;
    int alloc;                      /* receive: memory made at match (s_alloc_rbuf), owned */
    uint64_t id;                    /* srqid (send) or drqid (receive) */
    uint64_t cid;
    int peer;                       /* world rank, -1 = any */
    int tag;                        /* -1 = any (receive) */
    link_t l1;                      /* first/rest/posted/longrecv */
    link_t l2;                      /* ctx->out: sends whose first packet is out */
    link_t l3;                      /* ctx->all: every request not yet freed */
    /* send */
    int state;
    const uint8_t *sbuf;
    uint8_t *owned;
    size_t len, off;
    int sync, is_long, acked, cancel_wait;
    uint64_t drqid;
    void *local;                    /* S_LOCAL: our umsg */
    /* receive */
    uint8_t *rbuf;
    size_t size;
    uint64_t msglen, recvd, in_srqid;
    int src, rtag, in_long, in_sync;
};

typedef struct umsg_t umsg_t;
struct umsg_t {                     /* a message that arrived before its receive */
    umsg_t *prev, *next;
    int src, tag;
    uint64_t cid, msglen, srqid;
    int sync, is_long, complete;
    uint8_t *data;
    size_t have;
    gimpi_msg_req_t *claim;         /* a receive matched it while its data was arriving */
    gimpi_msg_req_t *self_sreq;     /* message to self: the sync send waiting for a match */
};

typedef struct ctl_t {
    struct ctl_t *next;
    uint8_t hdr[IMPI_PACKET_SIZE];
    int fini;
} ctl_t;
typedef struct {
    ctl_t *head, *tail;
} ctlq_t;

typedef struct {
    impi_proc_t id;
    int host;
    uint32_t tx_count;              /* counted packets sent and not credited */
    uint32_t rx_count;              /* counted packets read and not acknowledged */
    int gone;                       /* 0 or the error every operation with it gets */
    int tid;
    int alive_fd;                   /* expected dynamic peer: readable once it died, or -1 */
    ctlq_t ctl;
    req_list_t first, rest;
    int client;                     /* its IMPI client (the collectives' masters) */
} peer_t;

/*  Connection states: open, closed, being dialled (dynamic), waiting for an expected peer
 *  to call (dynamic). */
enum { C_OPEN, C_CLOSED, C_DIAL, C_EXPECT };
/*  Phases of a dial: resolving the tid (a caller does it, unlocked), connecting, writing
 *  the introduction, reading the answer, waiting for the peer's own call (it won a race). */
enum { D_RESOLVE, D_CONNECT, D_INTRO, D_ANSWER, D_WAIT };
enum { T_CTL, T_FIRST, T_REST };
enum { R_DISCARD, R_MATCHED, R_CONT, R_UNEXP };

typedef struct {
    int fd;
    int state;
    int fini_sent, fini_recv, fini_queued;
    int *procs, nprocs, rr;
    uint32_t pktlen, ackmark, hiwater;  /* this connection's (dynamic: agreed minima) */
    int dyn;                        /* a dynamic host (not in the static tables) */
    int dial;                       /* C_DIAL: D_* */
    int resolve_later;              /* D_RESOLVE: nobody is resolving it yet */
    int64_t dial_deadline;          /* C_DIAL: give up then (monotonic us) */
    uint8_t ibuf[GIMPI_INTRO_SIZE]; /* C_DIAL: introduction out, then answer in */
    size_t ioff;
    ctlq_t urgent;
    /* send side */
    int tbusy, tkind, tlast, tfini, want_out;
    uint8_t thdr[IMPI_PACKET_SIZE];
    uint8_t bhdr[BATCH_MAX][IMPI_PACKET_SIZE];     /* headers of batched packets */
    size_t thdr_off;
    const uint8_t *tpay;
    size_t tpay_len, tpay_off;
    gimpi_msg_req_t *treq;
    /* receive side */
    uint8_t *stage;
    size_t st_off, st_len;
    uint8_t rhdr[IMPI_PACKET_SIZE];
    size_t rhdr_off;
    int rphase, rkind;
    int big;                        /* the last data packet was big: read headers alone */
    uint8_t *rdst;
    size_t rdst_len, rpay_total, rpay_off;
    gimpi_msg_req_t *rreq;
    umsg_t *rum;
} conn_t;

/*  An accepted connection whose introduction is being read. */
typedef struct {
    int fd;
    size_t got;
    int64_t deadline;               /* monotonic us */
    uint8_t buf[GIMPI_INTRO_SIZE];
} pend_t;

struct gimpi_msg_t {
    pthread_mutex_t mu;
    pthread_cond_t cv;              /* application threads waiting for the driver */
    pthread_cond_t pcv;             /* the progress thread's doze (with pmu) */
    pthread_mutex_t pmu;            /* guards stop for the doze; never held with mu taken */
    pthread_t thread;
    int thread_started, stop;
    int evfd;
    int rank, nprocs, nhosts, myhost, listen_fd;
    int local_fd;                   /* local (Unix-domain) listener, or -1 */
    int nstatic, nstatic_hosts;     /* procs and hosts of the static tables (first ones) */
    int cap_procs, cap_hosts;       /* allocated peers and conns */
    int tidbase;                    /* tid of static rank r = tidbase + r + 1 */
    int tid_final;                  /* gimpi_msg_set_tidbase was called */
    int64_t born_us;                /* creation (the grace for learning our tid) */
    gimpi_msg_resolve_fn resolve;   /* tid -> contact for dynamic peers, or NULL */
    void *resolve_arg;
    gimpi_msg_hook_fn before_send;  /* run by every send entry, before the lock, or NULL */
    void *before_send_arg;
    pend_t *pend;                   /* incoming introductions being read */
    int npend, cap_pend;
    int finishing;                  /* finalize under way: no new dynamic hosts */
    int connect_ms;                 /* bound on setting up a dynamic connection */
    uint32_t quick;                 /* quick looks so far (extras looked at every 32nd) */
    int in_engine;                  /* > 0: inside the engine, the lock may not be dropped */
    int nresolve;                   /* dynamic peers waiting for a resolver call */
    uint32_t pktlen, ackmark, hiwater;
    int32_t tagub;
    impi_proc_t me;
    peer_t *peers;
    conn_t *conns;
    uint64_t next_id, seq;
    req_list_t posted, longrecv, out, all;
    umsg_t *uhead, *utail;
    int ndetached;
    int app_blocked;                /* atomic: read by the dozing thread without mu */
    int driving, prog_polling;
    int app_polling;                /* application threads inside a blocking poll() */
    uint64_t app_epoch;             /* atomic: read by the dozing thread without mu */
    uint64_t moved;                 /* successful reads and writes on connections so far */
    uint64_t rdone;                 /* receives completed so far */
    int timeout_ms, spin_us;
    int debug;                      /* GIMPI_DEBUG=1: every packet on stderr */
    char errmsg[256];
    gimpi_fwd_t *fwd;               /* large broadcasts being forwarded (gimpi_msg_fwd.c) */
    int maxlinear;                  /* IMPI's MAXLINEAR (collectives between clients) */
};

/* ------------------------------------------------------------------ small helpers */

/*  Monotonic microseconds. */
static int64_t s_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*  Appends r to a list through one of its links. */
static void s_list_push(req_list_t *L, gimpi_msg_req_t *r, link_t *lk, size_t off)
{
    lk->on = L;
    lk->next = NULL;
    lk->prev = L->tail;
    if (L->tail)
        ((link_t *)((char *)L->tail + off))->next = r;
    else
        L->head = r;
    L->tail = r;
}

/*  Unlinks r from whatever list the link is on. */
static void s_list_remove(gimpi_msg_req_t *r, link_t *lk, size_t off)
{
    (void)r;
    req_list_t *L = lk->on;
    if (!L)
        return;
    if (lk->prev)
        ((link_t *)((char *)lk->prev + off))->next = lk->next;
    else
        L->head = lk->next;
    if (lk->next)
        ((link_t *)((char *)lk->next + off))->prev = lk->prev;
    else
        L->tail = lk->prev;
    lk->on = NULL;
    lk->prev = lk->next = NULL;
}

#define L1_PUSH(L, r) s_list_push((L), (r), &(r)->l1, offsetof(gimpi_msg_req_t, l1))
#define L1_DEL(r) s_list_remove((r), &(r)->l1, offsetof(gimpi_msg_req_t, l1))
#define L2_PUSH(L, r) s_list_push((L), (r), &(r)->l2, offsetof(gimpi_msg_req_t, l2))
#define L2_DEL(r) s_list_remove((r), &(r)->l2, offsetof(gimpi_msg_req_t, l2))
#define L3_PUSH(L, r) s_list_push((L), (r), &(r)->l3, offsetof(gimpi_msg_req_t, l3))
#define L3_DEL(r) s_list_remove((r), &(r)->l3, offsetof(gimpi_msg_req_t, l3))
#define L1_NEXT(r) ((r)->l1.next)
#define L2_NEXT(r) ((r)->l2.next)

/*  Appends a control packet to a queue. */
static void s_ctl_push(ctlq_t *q, ctl_t *c)
{
    c->next = NULL;
    if (q->tail)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
}

/*  Takes the first control packet of a queue. */
static ctl_t *s_ctl_pop(ctlq_t *q)
{
    ctl_t *c = q->head;
    if (c) {
        q->head = c->next;
        if (!q->head)
            q->tail = NULL;
    }
    return c;
}

/*  Frees every packet of a queue. */
static void s_ctl_clear(ctlq_t *q)
{
    ctl_t *c;
    while ((c = s_ctl_pop(q)))
        free(c);
}

/*  Appends a message to the unexpected queue. */
static void s_um_push(gimpi_msg_t *self, umsg_t *um)
{
    um->next = NULL;
    um->prev = self->utail;
    if (self->utail)
        self->utail->next = um;
    else
        self->uhead = um;
    self->utail = um;
}

/*  Unlinks a message from the unexpected queue. */
static void s_um_remove(gimpi_msg_t *self, umsg_t *um)
{
    if (um->prev)
        um->prev->next = um->next;
    else
        self->uhead = um->next;
    if (um->next)
        um->next->prev = um->prev;
    else
        self->utail = um->prev;
    um->prev = um->next = NULL;
}

/*  Frees an unexpected message and its data. */
static void s_um_free(umsg_t *um)
{
    if (um) {
        free(um->data);
        free(um);
    }
}

/*  Wakes the progress thread out of poll(). */
static void s_kick(gimpi_msg_t *self)
{
    uint64_t one = 1;
    ssize_t rc = write(self->evfd, &one, sizeof one);
    (void)rc;
}

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
    impi_packet_encode(out, &pk);
}

/*  Forward declarations: writing a connection, and breaking one. */
static int s_flush(gimpi_msg_t *self, int h);
static void s_fault(gimpi_msg_t *self, int h, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*  Queues a counted control packet (SYNCACK, CANCEL, CANCELYES/NO) to peer p. */
static void s_queue_ctl(gimpi_msg_t *self, int p, uint32_t type, uint64_t srqid,
                        uint64_t drqid, int tag, uint64_t cid)
{
    peer_t *peer = &self->peers[p];
    if (peer->gone)
        return;
    ctl_t *c = calloc(1, sizeof *c);
    if (!c) {
        s_fault(self, peer->host, "out of memory");
        return;
    }
    s_header(self, c->hdr, type, p, srqid, drqid, 0, 0, tag, cid);
    s_ctl_push(&peer->ctl, c);
    s_flush(self, peer->host);
}

/* ------------------------------------------------------------------ completion */

/*  Frees a request for good (it must be out of every queue). */
static void s_req_free(gimpi_msg_req_t *r)
{
    L3_DEL(r);
    free(r->owned);
    free(r);
}

/*  Marks a request complete (unlinking it); detached ones are freed at once. */
static void s_complete(gimpi_msg_t *self, gimpi_msg_req_t *r, int err)
{
    L1_DEL(r);
    L2_DEL(r);
    if (r->done)
        return;
    r->done = 1;
    if (r->kind == RQ_RECV)
        self->rdone++;
    if (!r->error)
        r->error = err;
    if (r->detached) {
        self->ndetached--;
        s_req_free(r);
    }
    pthread_cond_broadcast(&self->cv);
}

/*  A send is finished once its protocol is (data written, SYNCACK if needed) and no
 *  cancel reply is outstanding. */
static void s_send_check(gimpi_msg_t *self, gimpi_msg_req_t *r)
{
    if (r->cancel_wait)
        return;
    if (r->state == S_WRITTEN || (r->state == S_WAITACK && !r->is_long && r->acked))
        s_complete(self, r, 0);
}

/*  An allocating receive (gimpi_msg_take_cid) gets memory for the whole message once
 *  it is matched; without it the data is dropped and the receive fails with GIMPI_ENOMEM. */
static void s_alloc_rbuf(gimpi_msg_req_t *r, uint64_t msglen)
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
static void s_release_sender(gimpi_msg_t *self, umsg_t *um)
{
    if (um->self_sreq) {
        um->self_sreq->local = NULL;
        s_complete(self, um->self_sreq, 0);
    } else if (um->sync)
        s_queue_ctl(self, um->src, IMPI_PK_SYNCACK, um->srqid, 0, um->tag, um->cid);
}

/*  Gives a matched unexpected message to receive r (the message is out of the queue). */
static void s_deliver(gimpi_msg_t *self, umsg_t *um, gimpi_msg_req_t *r)
{
    s_alloc_rbuf(r, um->msglen);
    r->src = um->src;
    r->rtag = um->tag;
    r->msglen = um->msglen;
    size_t n = um->have < r->size ? um->have : r->size;
    if (n)
        memcpy(r->rbuf, um->data, n);
    r->recvd = um->have;
    if (um->is_long && self->peers[um->src].gone) {
        s_complete(self, r, self->peers[um->src].gone);   /* the rest can never come */
    } else if (um->is_long) {
        L1_PUSH(&self->longrecv, r);
        s_queue_ctl(self, um->src, IMPI_PK_SYNCACK, um->srqid, r->id, um->tag, um->cid);
    } else {
        s_release_sender(self, um);
        s_complete(self, r, r->msglen > r->size ? GIMPI_EOVERFLOW : 0);
    }
}

/*  Whether receive r accepts a message with this envelope. */
static int s_matches(const gimpi_msg_req_t *r, int src, int tag, uint64_t cid)
{
    return r->cid == cid && (r->peer < 0 || r->peer == src) && (r->tag < 0 || r->tag == tag);
}

/* ------------------------------------------------------------------ failures */

/*  1 when every other task's host has died or finished (a wildcard receive can then only
 *  be satisfied by what is already queued). */
static int s_all_gone(gimpi_msg_t *self)
{
    for (int p = 0; p < self->nprocs; p++)
        if (p != self->rank && !self->peers[p].gone)
            return 0;
    return self->nprocs > 1;
}

/*  Every operation involving host h fails with err (a death: also pending wildcard
 *  receives, which might have been waiting for it). */
static void s_host_gone(gimpi_msg_t *self, int h, int err, int death)
{
    conn_t *c = &self->conns[h];
    for (int k = 0; k < c->nprocs; k++) {
        int p = c->procs[k];
        peer_t *peer = &self->peers[p];
        if (!peer->gone)
            peer->gone = err;
        s_ctl_clear(&peer->ctl);
        while (peer->first.head)
            s_complete(self, peer->first.head, err);
        while (peer->rest.head)
            s_complete(self, peer->rest.head, err);
    }
    for (gimpi_msg_req_t *r = self->out.head, *nx; r; r = nx) {
        nx = L2_NEXT(r);
        if (self->peers[r->peer].host != h)
            continue;
        /* delivered, only a cancel reply missing: the cancel simply failed */
        int delivered = r->state == S_WRITTEN || (r->state == S_WAITACK && !r->is_long && r->acked);
        s_complete(self, r, delivered ? 0 : err);
    }
    for (gimpi_msg_req_t *r = self->longrecv.head, *nx; r; r = nx) {
        nx = L1_NEXT(r);
        if (self->peers[r->src].host == h)
            s_complete(self, r, err);
    }
    for (gimpi_msg_req_t *r = self->posted.head, *nx; r; r = nx) {
        nx = L1_NEXT(r);
        if ((r->peer >= 0 && self->peers[r->peer].host == h)
            || (r->peer < 0 && !r->alloc && (death || s_all_gone(self))))
            s_complete(self, r, err);       /* gimpi_msg_take_cid judges departures itself */
    }
    /* a buffered first packet of a long message can never be completed */
    for (umsg_t *um = self->uhead, *nx; um; um = nx) {
        nx = um->next;
        if (um->src != self->rank && self->peers[um->src].host == h && um->is_long) {
            s_um_remove(self, um);
            s_um_free(um);
        }
    }
    for (int k = 0; self->fwd && k < c->nprocs; k++)     /* broadcasts from it: failed */
        gimpi_msg_fwd_gone(self, self->fwd, self->peers[c->procs[k]].tid);
    pthread_cond_broadcast(&self->cv);
}

/*  Closes connection h and forgets its half-done packets. */
static void s_conn_close(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->state = C_CLOSED;
    if (c->resolve_later) {
        c->resolve_later = 0;
        self->nresolve--;
    }
    /* a standard short send half written is in no list: it fails here */
    if (c->tbusy && c->treq && c->treq->state == S_STD && !c->treq->done)
        s_complete(self, c->treq, GIMPI_ESYSERR);
    c->tbusy = 0;
    c->treq = NULL;
    s_ctl_clear(&c->urgent);
    if (c->rphase && c->rkind == R_UNEXP && c->rum) {
        if (c->rum->claim)
            s_complete(self, c->rum->claim, GIMPI_ESYSERR);
        s_um_remove(self, c->rum);
        s_um_free(c->rum);
    } else if (c->rphase && c->rkind == R_MATCHED && c->rreq) {
        s_complete(self, c->rreq, GIMPI_ESYSERR);
    }
    c->rphase = 0;
    c->rum = NULL;
    c->rreq = NULL;
}

/*  A broken connection: records and prints why, closes it, fails what involved it. */
static void s_fault(gimpi_msg_t *self, int h, const char *fmt, ...)
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
    if (dyn)
        fprintf(stderr, "gimpi[t%x]: %s\n", (unsigned)(self->tidbase + self->rank + 1),
                self->errmsg);
    else
        fprintf(stderr, "gimpi[rank %d]: %s\n", self->rank, self->errmsg);
    s_conn_close(self, h);
    /* a dynamic peer's death does not fail wildcard receives (others may still send) */
    s_host_gone(self, h, GIMPI_ESYSERR, !dyn);
}

/*  Closes a connection once PK_FINI went both ways (§4.9). */
static void s_check_fini(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    if (c->fini_sent && c->fini_recv && c->state == C_OPEN) {
        s_conn_close(self, h);
        s_host_gone(self, h, GIMPI_ESYSERR, 0);
    }
}

/* ------------------------------------------------------------------ send side */

/*  Chooses the next packet for connection h: uncounted urgent packets first, then round
 *  robin over its procs with credit: control, first packets, continuation data. */
static int s_next_packet(gimpi_msg_t *self, conn_t *c)
{
    ctl_t *u = s_ctl_pop(&c->urgent);
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
        ctl_t *q = s_ctl_pop(&peer->ctl);
        gimpi_msg_req_t *r;
        if (q) {
            memcpy(c->thdr, q->hdr, IMPI_PACKET_SIZE);
            free(q);
            c->tkind = T_CTL;
        } else if ((r = peer->first.head)) {
            L1_DEL(r);
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
                L2_PUSH(&self->out, r);
            } else
                r->state = S_STD;
        } else if ((r = peer->rest.head)) {
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
                L1_DEL(r);
        } else
            continue;
        peer->tx_count++;
        c->rr = (c->rr + k + 1) % c->nprocs;
        return 1;
    }
    return 0;
}

/*  The packet being written on c is all out. */
static void s_packet_done(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    gimpi_msg_req_t *r = c->treq;
    c->tbusy = 0;
    c->treq = NULL;
    if (c->tkind == T_FIRST && r->state == S_STD)
        s_complete(self, r, 0);
    else if (c->tkind == T_REST && c->tlast) {
        r->state = S_WRITTEN;
        s_send_check(self, r);
    } else if (c->tkind == T_CTL && c->tfini) {
        c->fini_sent = 1;
        s_check_fini(self, h);
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
static void s_debug_conn(gimpi_msg_t *self, int h)
{
    if (self->debug)
        fprintf(stderr, "gimpi[rank %d] host %d: connected over %s\n", self->rank, h,
                gimpi_host_is_local(self->conns[h].fd) ? "a local socket" : "TCP");
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
    if (peer->ctl.head || peer->first.head || peer->rest.head != r)
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
static int s_flush(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
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
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
        ssize_t n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                c->want_out = 1;
                if (self->prog_polling || self->app_polling)
                    s_kick(self);           /* pollers must add POLLOUT */
                return 0;
            }
            s_fault(self, h, "send: %s", strerror(errno));
            return -1;
        }
        /* account the bytes written to the current packet, then to the batched ones,
         * each committed now through s_next_packet (it picks exactly them) */
        size_t m = (size_t)n;
        self->moved++;
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

/* ------------------------------------------------------------------ receive side */

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
    for (gimpi_msg_req_t *r = self->out.head; r; r = L2_NEXT(r))
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
    for (r = self->posted.head; r; r = L1_NEXT(r))
        if (s_matches(r, p, pk->tag, pk->cid))
            break;
    c->rpay_total = pk->len;
    c->rpay_off = 0;
    c->rphase = 1;
    if (r) {
        L1_DEL(r);
        r->src = p;
        r->rtag = pk->tag;
        r->msglen = pk->msglen;
        r->in_srqid = pk->srqid;
        r->in_long = is_long;
        r->in_sync = sync;
        r->recvd = 0;
        s_alloc_rbuf(r, pk->msglen);
        c->rkind = R_MATCHED;
        c->rreq = r;
        c->rdst = r->rbuf;
        c->rdst_len = pk->len < r->size ? pk->len : r->size;
        if (is_long) {      /* matched: the sender may start the rest while we read */
            s_queue_ctl(self, p, IMPI_PK_SYNCACK, r->in_srqid, r->id, r->rtag, r->cid);
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
        s_fault(self, self->peers[p].host, "out of memory for an unexpected message");
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
    s_um_push(self, um);
    c->rkind = R_UNEXP;
    c->rum = um;
    c->rdst = um->data;
    c->rdst_len = pk->len;
    return 0;
}

/*  Queues PK_FINI (urgent, after any half-written packet) on connection h and pushes it
 *  out.  Sent by finalize, and in answer to a peer's FINI: everything for that peer has
 *  failed already (s_host_gone), so nothing more would go to it anyway, and a peer that
 *  leaves early (PVM's pvm_exit) is not held until this task leaves too.  0 or -1 (no
 *  memory). */
static int s_queue_fini(gimpi_msg_t *self, int h)
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
    s_ctl_push(&c->urgent, f);
    s_flush(self, h);
    return 0;
}

/*  A whole 128-byte header has been read on connection h. */
static int s_on_header(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    impi_packet_t pk;
    c->rhdr_off = 0;
    int rc = impi_packet_decode(c->rhdr, c->pktlen, &pk);
    if (rc != IMPI_OK) {
        s_fault(self, h, "malformed packet header (%s)", impi_strerror(rc));
        return -1;
    }
    if (self->debug) {
        char line[400];
        fprintf(stderr, "gimpi[rank %d] <- host %d: %s\n", self->rank, h,
                impi_packet_format(&pk, line, sizeof line));
    }
    if (pk.type == IMPI_PK_FINI) {
        c->fini_recv = 1;
        s_host_gone(self, h, GIMPI_ESYSERR, 0);
        if (!c->fini_queued)
            s_queue_fini(self, h);      /* answer at once: the peer need not wait for us */
        s_check_fini(self, h);
        return c->state == C_OPEN ? 0 : -1;
    }
    int p = s_find_src(self, c, &pk.src);
    if (p < 0 || !impi_proc_equal(&pk.dest, &self->me)) {
        s_fault(self, h, "%s from an unknown proc or for another proc",
                impi_packet_name(pk.type));
        return -1;
    }
    peer_t *peer = &self->peers[p];
    if (impi_packet_info(pk.type)->counted && ++peer->rx_count >= c->ackmark) {
        peer->rx_count -= c->ackmark;
        if (!c->fini_queued) {
            ctl_t *a = calloc(1, sizeof *a);
            if (!a) {
                s_fault(self, h, "out of memory");
                return -1;
            }
            s_header(self, a->hdr, IMPI_PK_PROTOACK, p, 0, 0, 0, 0, 0, 0);
            s_ctl_push(&c->urgent, a);
            s_flush(self, h);
            if (c->state != C_OPEN)
                return -1;
        }
    }
    gimpi_msg_req_t *r;
    switch (pk.type) {
    case IMPI_PK_DATA:
    case IMPI_PK_DATASYNC:
        c->big = pk.len >= DIRECT_MIN;
        if (pk.type == IMPI_PK_DATA && pk.len < pk.msglen) {    /* continuation */
            for (r = self->longrecv.head; r; r = L1_NEXT(r))
                if (r->id == pk.drqid)
                    break;
            if (!r || r->src != p || r->msglen != pk.msglen || r->recvd + pk.len > pk.msglen) {
                s_fault(self, h, "DATA continuation for no receive (drqid %llu)",
                        (unsigned long long)pk.drqid);
                return -1;
            }
            c->rkind = R_CONT;
            c->rreq = r;
            c->rdst = r->recvd < r->size ? r->rbuf + r->recvd : NULL;
            c->rdst_len = r->recvd < r->size
                              ? (pk.len < r->size - r->recvd ? pk.len : r->size - r->recvd)
                              : 0;
            c->rpay_total = pk.len;
            c->rpay_off = 0;
            c->rphase = 1;
            return 0;
        }
        return s_on_first(self, c, p, &pk);
    case IMPI_PK_PROTOACK:
        peer->tx_count = peer->tx_count > c->ackmark ? peer->tx_count - c->ackmark : 0;
        return s_flush(self, h);
    case IMPI_PK_SYNCACK:
        r = s_find_out(self, p, pk.srqid);
        if (r && r->state == S_WAITACK) {
            r->acked = 1;
            if (r->is_long) {
                r->drqid = pk.drqid;
                r->state = S_REST;
                L1_PUSH(&peer->rest, r);
                return s_flush(self, h);
            }
            s_send_check(self, r);
        }
        return 0;
    case IMPI_PK_CANCEL: {
        umsg_t *um;
        for (um = self->utail; um; um = um->prev)     /* newest first (§4.8) */
            if (um->src == p && um->srqid == pk.srqid && um->complete)
                break;
        if (um) {
            s_um_remove(self, um);
            s_um_free(um);
        }
        s_queue_ctl(self, p, um ? IMPI_PK_CANCELYES : IMPI_PK_CANCELNO, pk.srqid, 0, pk.tag,
                    pk.cid);
        return c->state == C_OPEN ? 0 : -1;
    }
    case IMPI_PK_CANCELYES:
    case IMPI_PK_CANCELNO:
        r = s_find_out(self, p, pk.srqid);
        if (r && r->cancel_wait) {
            r->cancel_wait = 0;
            if (pk.type == IMPI_PK_CANCELYES) {
                r->cancelled = 1;
                s_complete(self, r, 0);
            } else
                s_send_check(self, r);
        }
        return 0;
    }
    return 0;
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
            L1_PUSH(&self->longrecv, r);
        } else {
            if (r->in_sync)
                s_queue_ctl(self, r->src, IMPI_PK_SYNCACK, r->in_srqid, 0, r->rtag, r->cid);
            s_complete(self, r, r->msglen > r->size ? GIMPI_EOVERFLOW : 0);
        }
        break;
    case R_CONT:
        r->recvd += c->rpay_total;
        if (r->recvd == r->msglen)
            s_complete(self, r, r->msglen > r->size ? GIMPI_EOVERFLOW : 0);
        break;
    case R_UNEXP:
        um->complete = 1;
        if (um->cid == GIMPI_CID_FWD && !um->claim && !um->is_long) {   /* forward hook */
            s_um_remove(self, um);
            uint8_t *d = um->data;
            um->data = NULL;
            gimpi_msg_fwd_arrived(self, &self->fwd, self->peers[um->src].tid, d, um->have);
            s_um_free(um);
        } else if (um->claim) {
            s_deliver(self, um, um->claim);
            s_um_free(um);
        }
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

/*  Reads and handles whatever connection h has for us, until the socket is empty.
 *  Returns -1 when the connection broke or closed. */
static int s_read(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    int drained = 0;            /* the last read came back short: the socket is empty */
    uint64_t rdone = self->rdone;
    while (c->state == C_OPEN) {
        /* a receive completed and an application thread waits: let it return (and post
         * its next receive) before the next packet is looked at, so that a message
         * following at once is matched on arrival rather than copied as unexpected.
         * What is already staged is taken first by the next s_drive. */
        if (c->rphase == 0 && c->rhdr_off == 0 && self->rdone != rdone
            && __atomic_load_n(&self->app_blocked, __ATOMIC_RELAXED))
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
            n = readv(c->fd, iov, 2);
        } else {
            /* after big packets a header is read alone, so that its payload can then go
             * straight to its destination; small packets are read in bulk */
            want = c->rphase == 0 && c->big ? IMPI_PACKET_SIZE - c->rhdr_off : STAGE_SIZE;
            n = recv(c->fd, c->stage, want, MSG_DONTWAIT);
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            s_fault(self, h, "receive: %s", strerror(errno));
            return -1;
        }
        if (n == 0) {
            if (c->fini_recv && c->rphase == 0 && c->rhdr_off == 0) {
                s_conn_close(self, h);          /* a finished peer hung up: fine */
                return -1;
            }
            s_fault(self, h, "connection closed %s",
                    c->rphase || c->rhdr_off ? "in the middle of a packet"
                                             : "without PK_FINI (peer died?)");
            return -1;
        }
        size_t m = (size_t)n;
        self->moved++;
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

/* ------------------------------------------------------------------ dynamic hosts */

/*  Our own tid. */
static int s_mytid(gimpi_msg_t *self)
{
    return self->tidbase + self->rank + 1;
}

/*  The peer index of a tid, or -1 when the context does not know it. */
static int s_find_tid(gimpi_msg_t *self, int tid)
{
    long r = (long)tid - self->tidbase - 1;
    if (r >= 0 && r < self->nstatic)
        return (int)r;
    for (int p = self->nstatic; p < self->nprocs; p++)
        if (self->peers[p].tid == tid)
            return p;
    return -1;
}

/*  Makes room for n + 1 elements of size el in *arr (capacity *cap, at most max).
 *  0, or -1 when out of memory or at max. */
static int s_grow(void *arr, int *cap, int n, size_t el, int max)
{
    if (n < *cap)
        return 0;
    int ncap = *cap * 2 + 8;
    if (ncap > max)
        ncap = max;
    void *na = ncap > n ? realloc(*(void **)arr, (size_t)ncap * el) : NULL;
    if (!na)
        return -1;
    *(void **)arr = na;
    *cap = ncap;
    return 0;
}

/*  Adds a dynamic peer with its own (closed) connection.  Returns its index, or -1 when
 *  out of memory.  peers[] and conns[] may move: callers hold no pointers into them. */
static int s_add_peer(gimpi_msg_t *self, int tid)
{
    if (s_grow(&self->peers, &self->cap_procs, self->nprocs, sizeof *self->peers, INT32_MAX)
        || s_grow(&self->conns, &self->cap_hosts, self->nhosts, sizeof *self->conns,
                  INT32_MAX))
        return -1;
    int *procs = malloc(sizeof *procs);
    if (!procs)
        return -1;
    int p = self->nprocs++, h = self->nhosts++;
    self->peers[p] = (peer_t){ .tid = tid, .host = h, .alive_fd = -1 };
    procs[0] = p;
    self->conns[h] = (conn_t){ .fd = -1, .state = C_CLOSED, .procs = procs, .nprocs = 1,
                               .dyn = 1, .pktlen = self->pktlen, .ackmark = self->ackmark,
                               .hiwater = self->hiwater };
    return p;
}

/*  Our introduction (or answer: word = status) to tid. */
static void s_intro(gimpi_msg_t *self, uint8_t out[GIMPI_INTRO_SIZE], uint32_t word, int tid)
{
    gimpi_intro_t in = { .word = word, .tid = s_mytid(self), .target = tid,
                         .pktlen = self->pktlen, .ackmark = self->ackmark,
                         .hiwater = self->hiwater, .proc = self->me };
    gimpi_intro_encode(out, &in);
}

/*  1 when an introduction's flow-control parameters are usable. */
static int s_intro_params_ok(const gimpi_intro_t *in)
{
    return in->pktlen >= 16 && in->pktlen <= (1u << 30) && in->ackmark >= 1
        && in->hiwater >= in->ackmark && in->hiwater <= (1u << 20);
}

/*  Makes connection h (fd set) the open connection to its peer, whose introduction or
 *  answer was in: the peer's proc and the agreed (smaller) parameters. */
static int s_bind(gimpi_msg_t *self, int h, const gimpi_intro_t *in)
{
    conn_t *c = &self->conns[h];
    peer_t *peer = &self->peers[c->procs[0]];
    if (!c->stage && !(c->stage = malloc(STAGE_SIZE)))
        return -1;
    peer->id = in->proc;
    c->pktlen = in->pktlen < self->pktlen ? in->pktlen : self->pktlen;
    c->ackmark = in->ackmark < self->ackmark ? in->ackmark : self->ackmark;
    c->hiwater = in->hiwater < self->hiwater ? in->hiwater : self->hiwater;
    if (c->hiwater < c->ackmark)
        c->hiwater = c->ackmark;
    gimpi_host_tune(c->fd);
    c->state = C_OPEN;
    s_debug_conn(self, h);
    if (peer->alive_fd >= 0) {          /* from now on the connection tells its death */
        close(peer->alive_fd);
        peer->alive_fd = -1;
    }
    pthread_cond_broadcast(&self->cv);
    return 0;
}

/*  Gives up a dynamic connection that never opened: its peer is gone with err. */
static void s_dyn_fail(gimpi_msg_t *self, int h, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void s_dyn_fail(gimpi_msg_t *self, int h, int err, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    peer_t *peer = &self->peers[self->conns[h].procs[0]];
    snprintf(self->errmsg, sizeof self->errmsg, "t%x: %s", (unsigned)peer->tid, what);
    if (err != GIMPI_ENOTASK)
        fprintf(stderr, "gimpi[t%x]: %s\n", (unsigned)(self->tidbase + self->rank + 1),
                self->errmsg);
    if (peer->alive_fd >= 0) {
        close(peer->alive_fd);
        peer->alive_fd = -1;
    }
    s_conn_close(self, h);
    s_host_gone(self, h, err, 0);
}

/*  Starts calling peer p at addr:port (its connection is C_CLOSED or D_RESOLVE). */
static void s_dial_start(gimpi_msg_t *self, int p, const uint8_t addr[16], int port)
{
    int h = self->peers[p].host;
    conn_t *c = &self->conns[h];
    char err[160];
    int inprogress = 0;
    c->state = C_DIAL;
    int fd = gimpi_host_dial(addr, port, NULL, &inprogress, err, sizeof err);
    if (fd < 0) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "%s", err);
        return;
    }
    c->fd = fd;
    c->dial = inprogress ? D_CONNECT : D_INTRO;
    c->dial_deadline = s_now_us() + (int64_t)self->connect_ms * 1000;
    s_intro(self, c->ibuf, GIMPI_INTRO_VERSION, self->peers[p].tid);
    c->ioff = 0;
    if (self->prog_polling || self->app_polling)
        s_kick(self);                   /* pollers must watch the new socket */
}

/*  Connection h being dialled is ready (revents): connect, introduction, answer. */
static void s_dial_event(gimpi_msg_t *self, int h, short revents)
{
    conn_t *c = &self->conns[h];
    int tid = self->peers[c->procs[0]].tid;
    if (c->dial == D_CONNECT) {
        int e = 0;
        socklen_t el = sizeof e;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (e) {
            s_dyn_fail(self, h, GIMPI_ESYSERR, "connect: %s", strerror(e));
            return;
        }
        if (!(revents & POLLOUT))
            return;
        c->dial = D_INTRO;
    }
    if (c->dial == D_INTRO) {
        ssize_t w = send(c->fd, c->ibuf + c->ioff, GIMPI_INTRO_SIZE - c->ioff,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            s_dyn_fail(self, h, GIMPI_ESYSERR, "sending the introduction: %s", strerror(errno));
            return;
        }
        if (w > 0)
            c->ioff += (size_t)w;
        if (c->ioff == GIMPI_INTRO_SIZE) {
            c->dial = D_ANSWER;
            c->ioff = 0;
        }
        return;
    }
    if (c->dial != D_ANSWER)
        return;
    /* exactly the answer: packets may follow it at once */
    ssize_t got = recv(c->fd, c->ibuf + c->ioff, GIMPI_INTRO_SIZE - c->ioff, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "closed the connection before answering (%s)",
                   got == 0 ? "end of stream" : strerror(errno));
        return;
    }
    if (got > 0)
        c->ioff += (size_t)got;
    if (c->ioff < GIMPI_INTRO_SIZE)
        return;
    gimpi_intro_t in;
    if (gimpi_intro_decode(c->ibuf, &in) < 0 || in.tid != tid
        || in.target != s_mytid(self)) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "answered with garbage");
        return;
    }
    if (in.word == GIMPI_INTRO_RACE) {  /* its own call to us wins: wait for it */
        close(c->fd);
        c->fd = -1;
        c->dial = D_WAIT;
        return;
    }
    if (in.word != GIMPI_INTRO_OK || !s_intro_params_ok(&in)) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "refused the connection: %s",
                   in.word == GIMPI_INTRO_OK ? "bad parameters"
                                             : gimpi_intro_strstatus(in.word));
        return;
    }
    if (s_bind(self, h, &in) < 0) {
        s_dyn_fail(self, h, GIMPI_ENOMEM, "out of memory");
        return;
    }
    s_flush(self, h);
}

/*  Drops incoming introduction k (closing it) and says why on stderr. */
static void s_pend_drop(gimpi_msg_t *self, int k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void s_pend_drop(gimpi_msg_t *self, int k, const char *fmt, ...)
{
    char what[200] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        fprintf(stderr, "gimpi[t%x]: dropped an incoming connection: %s\n",
                (unsigned)s_mytid(self), what);
    }
    if (self->pend[k].fd >= 0)
        close(self->pend[k].fd);
    self->pend[k] = self->pend[--self->npend];
}

/*  GIMPI_INTRO_DUP, not reported on stderr (the normal end of a lost race). */
#define GIMPI_INTRO_DUP_QUIET (GIMPI_INTRO_DUP | 0x100)

/*  Answers introduction k with a refusal and drops it. */
static void s_pend_refuse(gimpi_msg_t *self, int k, const gimpi_intro_t *in, uint32_t why)
{
    uint8_t ans[GIMPI_INTRO_SIZE];
    s_intro(self, ans, why & 0xff, in->tid);
    ssize_t w = send(self->pend[k].fd, ans, sizeof ans, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    /* quiet: the normal ends of a race (our own call is the connection), and callers of
     * a task that is leaving (they report the refusal themselves) */
    if (why == GIMPI_INTRO_RACE || why == GIMPI_INTRO_DUP_QUIET || why == GIMPI_INTRO_LEAVING)
        s_pend_drop(self, k, NULL);
    else
        s_pend_drop(self, k, "t%x refused: %s", (unsigned)in->tid, gimpi_intro_strstatus(why));
}

/*  A whole introduction is in on pending connection k: accept or refuse it. */
static void s_pend_decide(gimpi_msg_t *self, int k)
{
    gimpi_intro_t in;
    if (gimpi_intro_decode(self->pend[k].buf, &in) < 0) {
        s_pend_drop(self, k, "not a gimpi introduction");
        return;
    }
    if (in.word != GIMPI_INTRO_VERSION) {
        s_pend_refuse(self, k, &in, GIMPI_INTRO_BADVERSION);
        return;
    }
    if (in.target != s_mytid(self)) {
        /* a task learns its tid (gimpi_msg_set_tidbase) just after it starts listening,
           and its contact may be known before: such a caller waits for the tid, or for
           the grace to end, rather than being refused in that moment */
        if (!self->tid_final && s_now_us() < self->born_us + TID_GRACE_US)
            return;
        s_pend_refuse(self, k, &in, GIMPI_INTRO_WRONGTID);
        return;
    }
    if (in.tid <= 0 || in.tid == s_mytid(self) || !s_intro_params_ok(&in)) {
        s_pend_refuse(self, k, &in, GIMPI_INTRO_BADPARAM);
        return;
    }
    if (self->finishing) {
        s_pend_refuse(self, k, &in, GIMPI_INTRO_LEAVING);
        return;
    }
    int p = s_find_tid(self, in.tid);
    if (p >= 0 && p < self->nstatic) {
        s_pend_refuse(self, k, &in, GIMPI_INTRO_DUP);
        return;
    }
    if (p >= 0) {
        conn_t *c = &self->conns[self->peers[p].host];
        if (self->peers[p].gone) {
            s_pend_refuse(self, k, &in, GIMPI_INTRO_LEAVING);
            return;
        }
        if (c->state == C_OPEN) {       /* its call lost a race our call already won */
            s_pend_refuse(self, k, &in, GIMPI_INTRO_DUP_QUIET);
            return;
        }
        if (c->state == C_DIAL && c->fd >= 0) {     /* both called: the higher tid wins */
            if (in.tid < s_mytid(self)) {
                s_pend_refuse(self, k, &in, GIMPI_INTRO_RACE);
                return;
            }
            close(c->fd);
            c->fd = -1;
        }
    } else if ((p = s_add_peer(self, in.tid)) < 0) {
        s_pend_drop(self, k, "out of memory");
        return;
    }
    int h = self->peers[p].host;
    conn_t *c = &self->conns[h];
    c->fd = self->pend[k].fd;
    self->pend[k].fd = -1;
    s_pend_drop(self, k, NULL);
    uint8_t ans[GIMPI_INTRO_SIZE];
    s_intro(self, ans, GIMPI_INTRO_OK, in.tid);
    /* a fresh socket's buffer takes the answer whole */
    ssize_t w = send(c->fd, ans, sizeof ans, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w != (ssize_t)sizeof ans) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "could not answer its introduction");
        return;
    }
    if (s_bind(self, h, &in) < 0) {
        s_dyn_fail(self, h, GIMPI_ENOMEM, "out of memory");
        return;
    }
    s_flush(self, h);
}

/*  Pending connection k is readable: read (exactly) the rest of its introduction. */
static void s_pend_event(gimpi_msg_t *self, int k)
{
    pend_t *pd = &self->pend[k];
    if (pd->got == GIMPI_INTRO_SIZE) {  /* in, waiting for our tid: it must stay silent */
        char c;
        ssize_t r = recv(pd->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (r > 0)                      /* (else it would keep the poll awake until then) */
            s_pend_drop(self, k, "bytes after the introduction, before any answer");
        else if (r == 0 || (errno != EAGAIN && errno != EINTR))
            s_pend_drop(self, k, NULL);
        return;
    }
    ssize_t got = recv(pd->fd, pd->buf + pd->got, GIMPI_INTRO_SIZE - pd->got, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        if (pd->got)                    /* silent callers (a lost race, a probe): quietly */
            s_pend_drop(self, k, "closed after %zu of %d introduction bytes", pd->got,
                        GIMPI_INTRO_SIZE);
        else
            s_pend_drop(self, k, NULL);
        return;
    }
    if (got < 0)
        return;
    size_t before = pd->got;
    pd->got += (size_t)got;
    if (before < 4 && pd->got >= 4 && impi_get32(pd->buf) != GIMPI_INTRO_MARKER) {
        s_pend_drop(self, k, "not a gimpi introduction (first word 0x%08x)",
                    (unsigned)impi_get32(pd->buf));
        return;
    }
    if (pd->got == GIMPI_INTRO_SIZE)
        s_pend_decide(self, k);
}

/*  A listening socket (TCP or local) is readable: takes the waiting callers. */
static void s_accept(gimpi_msg_t *self, int lfd)
{
    for (int i = 0; i < 16; i++) {
        int fd = gimpi_host_accept(lfd);
        if (fd < 0)
            return;
        if (s_grow(&self->pend, &self->cap_pend, self->npend, sizeof *self->pend, 1024)) {
            fprintf(stderr, "gimpi[t%x]: dropped an incoming connection: too many "
                    "introductions under way\n", (unsigned)s_mytid(self));
            close(fd);
            continue;
        }
        self->pend[self->npend++] = (pend_t){
            .fd = fd, .deadline = s_now_us() + (int64_t)self->connect_ms * 1000 };
    }
}

/*  Gives up dials and introductions past their deadline. */
static void s_dyn_deadlines(gimpi_msg_t *self)
{
    int64_t now = s_now_us();
    for (int k = self->npend - 1; k >= 0; k--)    /* callers waiting for our tid: the */
        if (self->pend[k].got == GIMPI_INTRO_SIZE       /* grace is over (set_tidbase */
            && now >= self->born_us + TID_GRACE_US)     /* decides them at once) */
            s_pend_decide(self, k);
    for (int k = self->npend - 1; k >= 0; k--)
        if (now >= self->pend[k].deadline)
            s_pend_drop(self, k, "introduction not complete within %d ms", self->connect_ms);
    for (int h = self->nstatic_hosts; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_DIAL && c->dial != D_RESOLVE && now >= c->dial_deadline)
            s_dyn_fail(self, h, GIMPI_ESYSERR, "no connection within %d ms", self->connect_ms);
    }
}

/*  An expected peer's alive_fd fired: it died without calling. */
static void s_alive_event(gimpi_msg_t *self, int p)
{
    int h = self->peers[p].host;
    if (self->conns[h].state == C_EXPECT)
        s_dyn_fail(self, h, GIMPI_ESYSERR, "exited before connecting");
}

/*  Resolves and calls dynamic peer p, whose connection is in D_RESOLVE (lock held; the
 *  lock is released while the resolver runs). */
static void s_resolve_peer(gimpi_msg_t *self, int p)
{
    int h = self->peers[p].host;
    int tid = self->peers[p].tid;
    if (self->conns[h].resolve_later) {
        self->conns[h].resolve_later = 0;
        self->nresolve--;
    }
    uint8_t addr[16];
    int port = 0;
    gimpi_msg_resolve_fn fn = self->resolve;
    void *arg = self->resolve_arg;
    pthread_mutex_unlock(&self->mu);
    int rc = fn(arg, tid, addr, &port);
    pthread_mutex_lock(&self->mu);
    conn_t *c = &self->conns[h];
    if (c->state != C_DIAL || c->dial != D_RESOLVE)
        return;                         /* it called us meanwhile (or is gone) */
    if (rc < 0)
        s_dyn_fail(self, h, rc, "cannot be found (%s)", gimpi_strerror(rc));
    else
        s_dial_start(self, p, addr, port);
}

/*  Resolves the peers the engine named while it could not (lock held, may drop it:
 *  callers hold no pointers into the context). */
static void s_resolve_later(gimpi_msg_t *self)
{
    for (int p = self->nstatic; self->nresolve > 0 && p < self->nprocs; p++) {
        conn_t *c = &self->conns[self->peers[p].host];
        if (c->state == C_DIAL && c->dial == D_RESOLVE && c->resolve_later)
            s_resolve_peer(self, p);
    }
}

/*  The peer index of tid (lock held), creating and connecting a dynamic peer through
 *  the resolver when it is unknown (the lock is released while the resolver runs; inside
 *  the engine the resolution is left to the next waiting thread).  Returns the index or a
 *  GIMPI_E* code. */
static int s_peer(gimpi_msg_t *self, int tid)
{
    int p = s_find_tid(self, tid);
    if (p >= 0)
        return p;
    if (tid <= 0 || !self->resolve)
        return GIMPI_EBADPARAM;
    if (self->finishing)
        return GIMPI_ESYSERR;
    p = s_add_peer(self, tid);
    if (p < 0)
        return GIMPI_ENOMEM;
    int h = self->peers[p].host;
    self->conns[h].state = C_DIAL;
    self->conns[h].dial = D_RESOLVE;
    if (self->in_engine) {
        self->conns[h].resolve_later = 1;
        self->nresolve++;
        if (self->prog_polling || self->app_polling)
            s_kick(self);
    } else
        s_resolve_peer(self, p);
    return p;
}

/* ------------------------------------------------------------------ driving */

/*  Adds the dynamic-host sockets to a poll set: the listener, introductions being read,
 *  dials, expected peers' alive_fds.  Returns how many; *busy = 1 when some setup is
 *  under way (not just the listener). */
static int s_extra_fds(gimpi_msg_t *self, struct pollfd *pfd, int *busy)
{
    int n = 0;
    *busy = 0;
    if (self->listen_fd >= 0)
        pfd[n++] = (struct pollfd){ .fd = self->listen_fd, .events = POLLIN };
    if (self->local_fd >= 0)
        pfd[n++] = (struct pollfd){ .fd = self->local_fd, .events = POLLIN };
    for (int k = 0; k < self->npend; k++)
        pfd[n++] = (struct pollfd){ .fd = self->pend[k].fd, .events = POLLIN };
    for (int h = self->nstatic_hosts; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_DIAL && c->fd >= 0)
            pfd[n++] = (struct pollfd){ .fd = c->fd,
                                        .events = c->dial == D_ANSWER ? POLLIN : POLLOUT };
    }
    for (int p = self->nstatic; p < self->nprocs; p++)
        if (self->peers[p].alive_fd >= 0)
            pfd[n++] = (struct pollfd){ .fd = self->peers[p].alive_fd, .events = POLLIN };
    *busy = n > (self->listen_fd >= 0) + (self->local_fd >= 0);
    return n;
}

/*  Handles a ready dynamic-host socket (whichever it still is). */
static void s_extra_event(gimpi_msg_t *self, int fd, short revents)
{
    if (fd == self->listen_fd || fd == self->local_fd) {
        s_accept(self, fd);
        return;
    }
    for (int k = 0; k < self->npend; k++)
        if (self->pend[k].fd == fd) {
            s_pend_event(self, k);
            return;
        }
    for (int h = self->nstatic_hosts; h < self->nhosts; h++)
        if (self->conns[h].state == C_DIAL && self->conns[h].fd == fd) {
            s_dial_event(self, h, revents);
            return;
        }
    for (int p = self->nstatic; p < self->nprocs; p++)
        if (self->peers[p].alive_fd == fd) {
            s_alive_event(self, p);
            return;
        }
}

/*  One round of progress: polls the connections (timeout_ms; 0 = just look, the lock is
 *  then kept), then writes and reads what they are ready for.  A blocking poll also
 *  watches the eventfd (kicks) and the dynamic-host sockets (a quick look only every
 *  32nd time, or while a setup is under way).  app says whether an application thread
 *  is calling: a thread that made progress while an application thread sits in poll()
 *  kicks it, since that thread may have consumed the very bytes the other one was
 *  waiting for. */
static void s_drive(gimpi_msg_t *self, int timeout_ms, int app)
{
    /* bytes left in a staging buffer (s_read stopped early) are handled first; poll()
     * would not report them */
    int staged = 0;
    for (int h = 0; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_OPEN && c->st_off < c->st_len) {
            s_read(self, h);
            staged |= c->state == C_OPEN && c->st_off < c->st_len;
        }
    }
    if (staged)
        timeout_ms = 0;
    int dyn = self->npend || self->nhosts > self->nstatic_hosts;
    if (dyn)
        s_dyn_deadlines(self);
    int nmax = self->nhosts + 2 + self->npend + (self->nhosts - self->nstatic_hosts)
               + (self->nprocs - self->nstatic) + 1;
    struct pollfd pfd[nmax];
    int map[nmax];
    int np = 0;
    for (int h = 0; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state != C_OPEN)
            continue;
        pfd[np] = (struct pollfd){ .fd = c->fd,
                                   .events = (short)(POLLIN | (c->want_out ? POLLOUT : 0)) };
        map[np++] = h;
    }
    int nconn = np, busy = 0, nextra = 0;
    if (timeout_ms == 0 && nconn <= DIRECT_READ_MAX) {
        /* a quick look at few connections: try them directly, one syscall each, rather
         * than poll() and then read; the dynamic-host sockets only now and then */
        for (int i = 0; i < nconn; i++) {
            int h = map[i];
            if (self->conns[h].want_out && s_flush(self, h) < 0)
                continue;
            s_read(self, h);
        }
        int tick = (++self->quick & 31) == 0;
        if (dyn || tick)
            nextra = s_extra_fds(self, pfd + nconn, &busy);
        if (nextra && (busy || tick)
            && poll(pfd + nconn, (nfds_t)nextra, 0) > 0)
            for (int i = nconn; i < nconn + nextra; i++)
                if (pfd[i].revents)
                    s_extra_event(self, pfd[i].fd, pfd[i].revents);
        if (self->app_polling)
            s_kick(self);
        pthread_cond_broadcast(&self->cv);
        return;
    }
    nextra = s_extra_fds(self, pfd + np, &busy);
    for (int i = 0; i < nextra; i++)
        map[np++] = -2;
    if (np == 0 && timeout_ms && app) {     /* nothing to watch: wait for a state change */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&self->cv, &self->mu, &ts);
        return;
    }
    int rc;
    if (timeout_ms) {
        pfd[np] = (struct pollfd){ .fd = self->evfd, .events = POLLIN };
        map[np++] = -1;
        if (app)
            self->app_polling++;
        else
            self->prog_polling = 1;
        pthread_mutex_unlock(&self->mu);
        rc = poll(pfd, (nfds_t)np, timeout_ms);
        pthread_mutex_lock(&self->mu);
        if (app)
            self->app_polling--;
        else
            self->prog_polling = 0;
    } else
        rc = np ? poll(pfd, (nfds_t)np, 0) : 0;
    if (rc <= 0)
        return;
    for (int i = 0; i < np; i++) {
        if (!pfd[i].revents)
            continue;
        int h = map[i];
        if (h == -1) {
            uint64_t v;
            ssize_t n = read(self->evfd, &v, sizeof v);
            (void)n;
            continue;
        }
        if (h == -2) {
            s_extra_event(self, pfd[i].fd, pfd[i].revents);
            continue;
        }
        if (self->conns[h].fd != pfd[i].fd || self->conns[h].state != C_OPEN)
            continue;                   /* closed meanwhile */
        if (pfd[i].revents & (POLLOUT | POLLERR | POLLHUP))
            if (s_flush(self, h) < 0)
                continue;
        if (pfd[i].revents & (POLLIN | POLLERR | POLLHUP))
            s_read(self, h);
    }
    if (self->app_polling)
        s_kick(self);
    pthread_cond_broadcast(&self->cv);
}

typedef int (*pred_t)(gimpi_msg_t *self, void *arg);

/*  Blocks the calling application thread until pred holds, driving the sockets itself:
 *  a short spin, then poll().  poll_cap_ms bounds one poll (for predicates that depend on
 *  time).  Returns 0, or GIMPI_ESYSERR when the context timeout (or deadline_us when not
 *  0) ran out. */
static int s_wait(gimpi_msg_t *self, pred_t pred, void *arg, int poll_cap_ms)
{
    if (pred(self, arg))
        return 0;
    __atomic_add_fetch(&self->app_blocked, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&self->app_epoch, 1, __ATOMIC_RELAXED);
    if (self->prog_polling)
        s_kick(self);
    int64_t start = s_now_us();
    int64_t spin_until = start + self->spin_us;
    int64_t deadline = self->timeout_ms > 0 ? start + (int64_t)self->timeout_ms * 1000 : 0;
    int rc = 0;
    uint64_t moved = self->moved;
    while (!pred(self, arg)) {
        if (self->nresolve)
            s_resolve_later(self);
        int64_t now = s_now_us();
        if (self->moved != moved) {     /* bytes are flowing: keep spinning */
            moved = self->moved;
            spin_until = now + self->spin_us;
        }
        if (deadline && now >= deadline) {
            snprintf(self->errmsg, sizeof self->errmsg, "timed out after %d ms",
                     self->timeout_ms);
            rc = GIMPI_ESYSERR;
            break;
        }
        if (self->driving) {        /* another application thread polls: let it */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 5 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&self->cv, &self->mu, &ts);
            continue;
        }
        int t = 0;
        if (now >= spin_until) {
            int64_t left = deadline ? (deadline - now + 999) / 1000 : 1000;
            t = left > 1000 ? 1000 : (int)left;
            if (poll_cap_ms > 0 && t > poll_cap_ms)
                t = poll_cap_ms;
            if (t < 1)
                t = 1;
        }
        if (t == 0) {                   /* spinning: let a peer on our core run */
            pthread_mutex_unlock(&self->mu);
            sched_yield();
            pthread_mutex_lock(&self->mu);
        }
        self->driving = t != 0;
        s_drive(self, t, 1);
        self->driving = 0;
    }
    __atomic_sub_fetch(&self->app_blocked, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&self->app_epoch, 1, __ATOMIC_RELAXED);
    return rc;
}

/*  The progress thread: polls the connections only while the application has stayed out
 *  of the library for IDLE_TAKEOVER_MS, so that peers are answered (credit, SYNCACKs,
 *  buffered data pushed out) while the application computes.  It dozes on its own mutex
 *  and reads the application's entry counters atomically, so that its periodic look does
 *  not contend for the context's lock while the application is busy in the library. */
static void *s_progress(void *arg)
{
    gimpi_msg_t *self = arg;
    pthread_mutex_lock(&self->pmu);
    uint64_t seen = __atomic_load_n(&self->app_epoch, __ATOMIC_RELAXED) + 1;
    while (!self->stop) {
        uint64_t epoch = __atomic_load_n(&self->app_epoch, __ATOMIC_RELAXED);
        if (__atomic_load_n(&self->app_blocked, __ATOMIC_RELAXED) || epoch != seen) {
            seen = epoch;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += IDLE_TAKEOVER_MS * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&self->pcv, &self->pmu, &ts);
            continue;
        }
        pthread_mutex_unlock(&self->pmu);
        pthread_mutex_lock(&self->mu);
        if (!self->stop && self->nresolve)
            s_resolve_later(self);
        if (!self->stop)
            s_drive(self, 1000, 0);
        pthread_mutex_unlock(&self->mu);
        pthread_mutex_lock(&self->pmu);
    }
    pthread_mutex_unlock(&self->pmu);
    return NULL;
}

/* ------------------------------------------------------------------ construction */

/*  The local twin of a TCP listener (gimpi_host.c). */
int gimpi_msg_listen_local(int listen_fd)
{
    return gimpi_host_listen_local(listen_fd);
}

/*  Creates the context over a TCP listener only. */
gimpi_msg_t *gimpi_msg_new(const struct impi_tables_t *t, int rank, int listen_fd,
                           int timeout_ms, char *err, size_t errsize)
{
    return gimpi_msg_new_local(t, rank, listen_fd, -1, timeout_ms, err, errsize);
}

/*  Creates the context: tables copied, hosts met, progress thread started. */
gimpi_msg_t *gimpi_msg_new_local(const struct impi_tables_t *t, int rank, int listen_fd,
                                 int local_fd, int timeout_ms, char *err, size_t errsize)
{
    int myhost = -1;
    gimpi_msg_t *self = NULL;
    if (!t || rank < 0 || rank >= t->nprocs || t->nhosts < 1 || !t->procs || !t->hosts)
        snprintf(err, errsize, "bad tables or rank %d", rank);
    else if ((myhost = t->procs[rank].host) < 0 || myhost >= t->nhosts
             || t->hosts[myhost].nprocs != 1)
        snprintf(err, errsize, "rank %d must be the only proc of its host", rank);
    else if (!(self = calloc(1, sizeof *self)))
        snprintf(err, errsize, "out of memory");
    if (!self) {
        if (listen_fd >= 0)
            close(listen_fd);
        if (local_fd >= 0)
            close(local_fd);
        return NULL;
    }
    pthread_mutex_init(&self->mu, NULL);
    pthread_mutex_init(&self->pmu, NULL);
    pthread_cond_init(&self->cv, NULL);
    pthread_cond_init(&self->pcv, NULL);
    self->evfd = -1;
    self->listen_fd = listen_fd;
    self->local_fd = local_fd;
    self->born_us = s_now_us();
    self->rank = rank;
    self->nprocs = self->nstatic = self->cap_procs = t->nprocs;
    self->nhosts = self->nstatic_hosts = self->cap_hosts = t->nhosts;
    self->connect_ms = timeout_ms > 0 ? timeout_ms : 60000;
    self->myhost = myhost;
    self->pktlen = t->pktlen ? t->pktlen : 65536;
    self->ackmark = t->ackmark ? t->ackmark : 10;
    self->hiwater = t->hiwater ? t->hiwater : 20;
    if (self->hiwater < self->ackmark)
        self->hiwater = self->ackmark;
    self->tagub = t->tagub > 0 ? t->tagub : IMPI_MIN_TAGUB;
    self->me = t->procs[rank].id;
    self->next_id = 1;
    const char *dbg = getenv("GIMPI_DEBUG");
    self->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
    const char *spin = getenv("GIMPI_SPIN_US");
    self->spin_us = spin ? atoi(spin) : SPIN_US_DEFAULT;
    self->peers = calloc((size_t)t->nprocs, sizeof *self->peers);
    self->conns = calloc((size_t)t->nhosts, sizeof *self->conns);
    int *fds = calloc((size_t)t->nhosts, sizeof *fds);
    if (!self->peers || !self->conns || !fds)
        goto nomem;
    for (int p = 0; p < t->nprocs; p++) {
        int h = t->procs[p].host;
        if (h < 0 || h >= t->nhosts) {
            snprintf(err, errsize, "proc %d on host %d out of range", p, h);
            goto fail;
        }
        self->peers[p].id = t->procs[p].id;
        self->peers[p].host = h;
        self->peers[p].client = t->procs[p].client;
        self->peers[p].tid = p + 1;
        self->peers[p].alive_fd = -1;
        self->conns[h].nprocs++;
    }
    self->maxlinear = t->maxlinear > 0 ? t->maxlinear : 4;
    for (int h = 0; h < t->nhosts; h++) {
        conn_t *c = &self->conns[h];
        c->fd = -1;
        c->state = C_CLOSED;
        c->pktlen = self->pktlen;
        c->ackmark = self->ackmark;
        c->hiwater = self->hiwater;
        c->procs = calloc((size_t)c->nprocs + 1, sizeof *c->procs);
        if (!c->procs)
            goto nomem;
        c->nprocs = 0;
    }
    for (int p = 0; p < t->nprocs; p++) {
        conn_t *c = &self->conns[t->procs[p].host];
        c->procs[c->nprocs++] = p;
    }
    self->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (self->evfd < 0) {
        snprintf(err, errsize, "eventfd: %s", strerror(errno));
        goto fail;
    }
    if (gimpi_host_dance(t, myhost, listen_fd, local_fd, fds, timeout_ms, err, errsize) < 0)
        goto fail;
    for (int h = 0; h < t->nhosts; h++) {
        if (h == myhost)
            continue;
        conn_t *c = &self->conns[h];
        c->fd = fds[h];
        c->state = C_OPEN;
        s_debug_conn(self, h);
        c->stage = malloc(STAGE_SIZE);
        if (!c->stage)
            goto nomem;
    }
    free(fds);
    fds = NULL;
    /* from now on the listener takes dynamic hosts, from the progress machinery */
    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    if (local_fd >= 0)
        fcntl(local_fd, F_SETFL, fcntl(local_fd, F_GETFL) | O_NONBLOCK);
    self->peers[rank].gone = 0;
    const char *prog = getenv("GIMPI_PROGRESS");     /* "0": no thread (tests, benchmarks) */
    if (!(prog && strcmp(prog, "0") == 0)) {
        if (pthread_create(&self->thread, NULL, s_progress, self) != 0) {
            snprintf(err, errsize, "cannot start the progress thread");
            goto fail;
        }
        self->thread_started = 1;
    }
    return self;
nomem:
    snprintf(err, errsize, "out of memory");
fail:
    free(fds);
    gimpi_msg_destroy(&self);
    return NULL;
}

/*  Frees everything of a context. */
void gimpi_msg_destroy(gimpi_msg_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gimpi_msg_t *self = *self_p;
    if (self->thread_started) {
        pthread_mutex_lock(&self->mu);
        pthread_mutex_lock(&self->pmu);
        self->stop = 1;
        pthread_cond_signal(&self->pcv);
        pthread_mutex_unlock(&self->pmu);
        s_kick(self);
        pthread_mutex_unlock(&self->mu);
        pthread_join(self->thread, NULL);
    }
    /* requests still in lists are the caller's (not detached) or detached ones: free the
     * detached; the caller's stay valid memory-wise until it frees them */
    if (self->conns)
        for (int h = 0; h < self->nhosts; h++) {
            conn_t *c = &self->conns[h];
            if (c->procs)
                s_conn_close(self, h);
            if (c->procs)
                s_host_gone(self, h, GIMPI_ESYSERR, 1);
            free(c->stage);
            free(c->procs);
        }
    for (int k = 0; k < self->npend; k++)
        close(self->pend[k].fd);
    free(self->pend);
    if (self->peers)
        for (int p = self->nstatic; p < self->nprocs; p++)
            if (self->peers[p].alive_fd >= 0)
                close(self->peers[p].alive_fd);
    gimpi_msg_fwd_free(self, &self->fwd);
    while (self->uhead) {
        umsg_t *um = self->uhead;
        s_um_remove(self, um);
        if (um->self_sreq)
            s_complete(self, um->self_sreq, GIMPI_ESYSERR);
        s_um_free(um);
    }
    while (self->posted.head)
        s_complete(self, self->posted.head, GIMPI_ESYSERR);
    while (self->all.head) {        /* requests never waited for: their handles die here */
        gimpi_msg_req_t *r = self->all.head;
        L1_DEL(r);
        L2_DEL(r);
        s_req_free(r);
    }
    free(self->peers);
    free(self->conns);
    if (self->evfd >= 0)
        close(self->evfd);
    if (self->listen_fd >= 0)
        close(self->listen_fd);
    if (self->local_fd >= 0)
        close(self->local_fd);
    pthread_cond_destroy(&self->cv);
    pthread_cond_destroy(&self->pcv);
    pthread_mutex_destroy(&self->pmu);
    pthread_mutex_destroy(&self->mu);
    free(self);
    *self_p = NULL;
}

/* ------------------------------------------------------------------ small accessors */

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
    return s_mytid(self);
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

/*  Sets the tid base (static tids = base + rank + 1). */
int gimpi_msg_set_tidbase(gimpi_msg_t *self, int base)
{
    assert(self);
    if (base < 0 || base > INT32_MAX - self->nstatic)
        return GIMPI_EBADPARAM;
    pthread_mutex_lock(&self->mu);
    self->tidbase = base;
    self->tid_final = 1;
    for (int p = 0; p < self->nstatic; p++)
        self->peers[p].tid = self->tidbase + p + 1;
    for (int k = self->npend - 1; k >= 0; k--)    /* callers that waited for it */
        if (self->pend[k].got == GIMPI_INTRO_SIZE)
            s_pend_decide(self, k);
    pthread_mutex_unlock(&self->mu);
    return 0;
}

/*  Installs the resolver of unknown tids. */
void gimpi_msg_set_resolver(gimpi_msg_t *self, gimpi_msg_resolve_fn fn, void *arg)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    self->resolve = fn;
    self->resolve_arg = arg;
    pthread_mutex_unlock(&self->mu);
}

/*  Installs the hook every send entry runs first (gimpi_msg.h). */
void gimpi_msg_set_send_hook(gimpi_msg_t *self, gimpi_msg_hook_fn fn, void *arg)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    self->before_send = fn;
    self->before_send_arg = arg;
    pthread_mutex_unlock(&self->mu);
}

/*  Runs the send hook, if any (without the lock; internal callers too). */
void gimpi_msg__before_send(gimpi_msg_t *self)
{
    if (self->before_send)
        self->before_send(self->before_send_arg);
}

/*  Calls tid at a known contact. */
int gimpi_msg_connect(gimpi_msg_t *self, int tid, const uint8_t addr[16], int port)
{
    assert(self);
    if (tid <= 0 || !addr || port <= 0 || port > 65535)
        return GIMPI_EBADPARAM;
    pthread_mutex_lock(&self->mu);
    int rc = 0;
    if (tid == s_mytid(self))
        rc = GIMPI_EBADPARAM;
    else if (s_find_tid(self, tid) < 0) {
        int p = self->finishing ? GIMPI_ESYSERR : s_add_peer(self, tid);
        if (p < 0)
            rc = self->finishing ? GIMPI_ESYSERR : GIMPI_ENOMEM;
        else
            s_dial_start(self, p, addr, port);
    }
    pthread_mutex_unlock(&self->mu);
    return rc;
}

/*  Announces a task that will call. */
int gimpi_msg_expect(gimpi_msg_t *self, int tid, int alive_fd)
{
    assert(self);
    if (tid <= 0) {
        if (alive_fd >= 0)
            close(alive_fd);
        return GIMPI_EBADPARAM;
    }
    pthread_mutex_lock(&self->mu);
    int rc = 0, p = s_find_tid(self, tid);
    if (p < 0 && !self->finishing && tid != s_mytid(self)) {
        p = s_add_peer(self, tid);
        if (p < 0)
            rc = GIMPI_ENOMEM;
        else {
            self->conns[self->peers[p].host].state = C_EXPECT;
            self->peers[p].alive_fd = alive_fd;
            alive_fd = -1;
            if (self->prog_polling || self->app_polling)
                s_kick(self);
        }
    }
    if (alive_fd >= 0)
        close(alive_fd);
    pthread_mutex_unlock(&self->mu);
    return rc;
}

/*  Address and port of the listening socket. */
int gimpi_msg_contact(gimpi_msg_t *self, uint8_t addr[16], int *port)
{
    assert(self);
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    if (self->listen_fd < 0 || !addr || !port
        || getsockname(self->listen_fd, (struct sockaddr *)&sa, &len) < 0
        || sa.sin_family != AF_INET)
        return GIMPI_ESYSERR;
    impi_addr16_from_ipv4(addr, ntohl(sa.sin_addr.s_addr));
    *port = ntohs(sa.sin_port);
    return 0;
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

/* ------------------------------------------------------------------ operations */

/*  0 when tag is a legal send tag (or, with wild, GIMPI_ANY). */
static int s_check_tag(gimpi_msg_t *self, int tag, int wild)
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
    for (q = self->posted.head; q; q = L1_NEXT(q))
        if (s_matches(q, um->src, um->tag, um->cid))
            break;
    if (q) {
        L1_DEL(q);
        s_deliver(self, um, q);
        s_um_free(um);
    } else {
        s_um_push(self, um);
        pthread_cond_broadcast(&self->cv);
    }
}

/*  Starts a send (lock held). */
static int s_isend(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                   size_t len, int flags, gimpi_msg_req_t **out)
{
    if (!out || s_check_tag(self, tag, 0) || (len && !buf))
        return GIMPI_EBADPARAM;
    int p = s_peer(self, tid);
    if (p < 0)
        return p;
    if (p != self->rank && self->peers[p].gone)
        return self->peers[p].gone;
    gimpi_msg_req_t *r = calloc(1, sizeof *r);
    if (!r)
        return GIMPI_ENOMEM;
    L3_PUSH(&self->all, r);
    r->kind = RQ_SEND;
    r->id = self->next_id++;
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
            s_req_free(r);
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
            s_complete(self, r, 0);
        s_um_arrived(self, um);
        return 0;
    }
    r->is_long = len > self->pktlen;
    r->state = S_QUEUED;
    L1_PUSH(&self->peers[p].first, r);
    *out = r;
    s_flush(self, self->peers[p].host);
    return 0;
}

/*  Posts a receive (lock held): matches the oldest fitting unexpected message first.  An
 *  allocating one (alloc, buf NULL) gets its memory at match, and is not failed by
 *  departures while unmatched (gimpi_msg_take_cid's wait judges those). */
static int s_irecv_ex(gimpi_msg_t *self, uint64_t cid, int tid, int tag, void *buf,
                      size_t size, int alloc, gimpi_msg_req_t **out)
{
    if (!out || s_check_tag(self, tag, 1) || (size && !buf))
        return GIMPI_EBADPARAM;
    int p = tid == GIMPI_ANY ? -1 : s_peer(self, tid);
    if (tid != GIMPI_ANY && p < 0)
        return p;
    gimpi_msg_req_t *r = calloc(1, sizeof *r);
    if (!r)
        return GIMPI_ENOMEM;
    L3_PUSH(&self->all, r);
    r->kind = RQ_RECV;
    r->id = self->next_id++;
    r->cid = cid;
    r->peer = p;
    r->tag = tag;
    r->rbuf = buf;
    r->size = size;
    r->alloc = alloc;
    r->src = -1;
    *out = r;
    for (umsg_t *um = self->uhead; um; um = um->next)
        if (s_matches(r, um->src, um->tag, um->cid)) {
            s_um_remove(self, um);
            if (um->complete) {
                s_deliver(self, um, r);
                s_um_free(um);
            } else
                um->claim = r;          /* its data is arriving: delivered when in */
            return 0;
        }
    if (p >= 0 && p != self->rank && self->peers[p].gone)
        s_complete(self, r, self->peers[p].gone);
    else if (p < 0 && !alloc && s_all_gone(self))
        s_complete(self, r, GIMPI_ESYSERR);
    else
        L1_PUSH(&self->posted, r);
    return 0;
}

/*  Posts a receive into the caller's buffer (lock held). */
static int s_irecv(gimpi_msg_t *self, uint64_t cid, int tid, int tag, void *buf, size_t size,
                   gimpi_msg_req_t **out)
{
    return s_irecv_ex(self, cid, tid, tag, buf, size, 0, out);
}

/*  Fills a status from a completed request. */
static void s_status(gimpi_msg_t *self, const gimpi_msg_req_t *r, gimpi_status_t *st)
{
    if (!st)
        return;
    if (r->kind == RQ_RECV) {
        st->source = r->src >= 0 ? self->peers[r->src].tid : -1;
        st->tag = r->rtag;
        st->len = (size_t)r->msglen;
    } else {
        st->source = s_mytid(self);
        st->tag = r->tag;
        st->len = r->len;
    }
    st->error = r->error;
    st->cancelled = r->cancelled;
}

/*  Predicate: the request is complete. */
static int s_req_done(gimpi_msg_t *self, void *arg)
{
    (void)self;
    return ((gimpi_msg_req_t *)arg)->done;
}

/*  Finishes a completed request: status, free, result. */
static int s_finish(gimpi_msg_t *self, gimpi_msg_req_t **req, gimpi_status_t *status)
{
    gimpi_msg_req_t *r = *req;
    s_status(self, r, status);
    int rc = r->error;
    s_req_free(r);
    *req = NULL;
    return rc;
}

/*  Lets an incomplete send go on without its caller: copies the data (so that the
 *  caller's buffer may be reused) and frees the request when it completes. */
static void s_detach(gimpi_msg_t *self, gimpi_msg_req_t *r)
{
    if (r->len && !r->owned && r->state != S_LOCAL) {
        uint8_t *copy = malloc(r->len);
        if (!copy) {                    /* cannot buffer: finish it in place */
            s_wait(self, s_req_done, r, 0);
            if (r->done) {
                s_req_free(r);
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
    self->ndetached++;
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
    return (w->r->state == S_QUEUED || w->r->state == S_WAITACK) && s_now_us() >= w->buffer_at;
}

/*  Entry of every call: lock, and note that the application is in the library. */
static void s_enter(gimpi_msg_t *self)
{
    pthread_mutex_lock(&self->mu);
    __atomic_add_fetch(&self->app_epoch, 1, __ATOMIC_RELAXED);
}

/*  Exit of every call. */
static void s_leave(gimpi_msg_t *self)
{
    pthread_mutex_unlock(&self->mu);
}

/*  Standard send. */
int gimpi_msg_send(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len)
{
    return gimpi_msg_send_cid(self, GIMPI_CID_P2P, tid, tag, buf, len);
}

/*  Standard send with a context id: returns once buf may be reused. */
int gimpi_msg_send_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                       size_t len)
{
    assert(self);
    gimpi_msg_req_t *r;
    gimpi_msg__before_send(self);
    s_enter(self);
    int rc = s_isend(self, cid, tid, tag, buf, len, 0, &r);
    if (rc) {
        s_leave(self);
        return rc;
    }
    if (!r->done && r->is_long) {
        send_wait_t w = { r, s_now_us() + BUFFER_AFTER_US };
        rc = s_wait(self, s_send_ready, &w, 1);
    }
    if (r->done)
        rc = s_finish(self, &r, NULL);
    else
        s_detach(self, r);
    s_leave(self);
    return rc;
}

/*  Synchronous send. */
int gimpi_msg_ssend(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len)
{
    assert(self);
    gimpi_msg_req_t *r;
    gimpi_msg__before_send(self);
    s_enter(self);
    int rc = s_isend(self, GIMPI_CID_P2P, tid, tag, buf, len, GIMPI_MSG_SYNC, &r);
    if (!rc) {
        rc = s_wait(self, s_req_done, r, 0);
        if (r->done)
            rc = s_finish(self, &r, NULL);
        else {                          /* timed out: let it finish without us */
            r->sync = 0;
            s_detach(self, r);
        }
    }
    s_leave(self);
    return rc;
}

/*  Blocking receive. */
int gimpi_msg_recv(gimpi_msg_t *self, int tid, int tag, void *buf, size_t size,
                   gimpi_status_t *status)
{
    assert(self);
    gimpi_msg_req_t *r;
    s_enter(self);
    int rc = s_irecv(self, GIMPI_CID_P2P, tid, tag, buf, size, &r);
    if (!rc) {
        rc = s_wait(self, s_req_done, r, 0);
        if (r->done)
            rc = s_finish(self, &r, status);
        else if (r->l1.on == &self->posted) {   /* timed out unmatched: withdraw it */
            L1_DEL(r);
            s_req_free(r);
        } else {                        /* matched: its data lands in buf, let it finish */
            int saved = self->timeout_ms;
            self->timeout_ms = 0;
            s_wait(self, s_req_done, r, 0);
            self->timeout_ms = saved;
            s_finish(self, &r, status);
            rc = GIMPI_ESYSERR;
        }
    }
    s_leave(self);
    return rc;
}

typedef struct {
    uint64_t cid;
    int peer, tag;
    umsg_t *found;
    int watch;                      /* tprobe: world rank whose departure ends it, or -1 */
} probe_t;

/*  Predicate of probe: a fully arrived matching message, or its sender gone. */
static int s_probe_pred(gimpi_msg_t *self, void *arg)
{
    probe_t *pr = arg;
    gimpi_msg_req_t key = { .cid = pr->cid, .peer = pr->peer, .tag = pr->tag };
    for (umsg_t *um = self->uhead; um; um = um->next)
        if (um->complete && s_matches(&key, um->src, um->tag, um->cid)) {
            pr->found = um;
            return 1;
        }
    pr->found = NULL;
    return pr->peer >= 0 && pr->peer != self->rank && self->peers[pr->peer].gone;
}

/*  Fills a status from a found message, or returns the sender's error. */
static int s_probe_result(gimpi_msg_t *self, probe_t *pr, gimpi_status_t *status)
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

/*  Non-blocking probe with a context id. */
int gimpi_msg_iprobe_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, int *flag,
                         gimpi_status_t *status)
{
    assert(self);
    if (!flag || s_check_tag(self, tag, 1))
        return GIMPI_EBADPARAM;
    s_enter(self);
    int p = tid == GIMPI_ANY ? -1 : s_peer(self, tid);
    if (tid != GIMPI_ANY && p < 0) {
        s_leave(self);
        return p;
    }
    probe_t pr = { cid, p, tag, NULL, -1 };
    *flag = 0;
    if (!s_probe_pred(self, &pr))
        s_drive(self, 0, 1);
    int rc = 0;
    if (s_probe_pred(self, &pr)) {
        rc = s_probe_result(self, &pr, status);
        *flag = pr.found != NULL;
    }
    s_leave(self);
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
    if (s_check_tag(self, tag, 1))
        return GIMPI_EBADPARAM;
    s_enter(self);
    int p = tid == GIMPI_ANY ? -1 : s_peer(self, tid);
    if (tid != GIMPI_ANY && p < 0) {
        s_leave(self);
        return p;
    }
    probe_t pr = { cid, p, tag, NULL, -1 };
    int rc = s_wait(self, s_probe_pred, &pr, 0);
    if (!rc)
        rc = s_probe_result(self, &pr, status);
    s_leave(self);
    return rc;
}

/*  Predicate of an unbounded wildcard-source probe: a match, or no other task left that
 *  could ever send one. */
static int s_tprobe_pred(gimpi_msg_t *self, void *arg)
{
    probe_t *pr = arg;
    return s_probe_pred(self, pr) || (pr->peer < 0 && s_all_gone(self))
        || (pr->watch >= 0 && self->peers[pr->watch].gone);
}

/*  The world ranks of a wait's source and watched task (-1: any, none): 0, or the error of
 *  a source or watched tid that cannot be resolved (lock held). */
static int s_source_watch(gimpi_msg_t *self, int tid, int watch_tid, int *p, int *w)
{
    *p = tid == GIMPI_ANY ? -1 : s_peer(self, tid);
    *w = watch_tid == GIMPI_ANY ? -1 : s_peer(self, watch_tid);
    if (*w == GIMPI_EBADPARAM)
        *w = -1;                        /* a tid nobody can resolve: nothing to watch */
    if ((tid != GIMPI_ANY && *p < 0) || (watch_tid != GIMPI_ANY && *w < 0))
        return *p < 0 && tid != GIMPI_ANY ? *p : *w;
    if (*w == self->rank)
        *w = -1;                        /* we never leave under our own feet */
    return 0;
}

/*  s_wait, bounded by timeout_ms too when > 0; that bound running out is no error (0). */
static int s_wait_upto(gimpi_msg_t *self, pred_t pred, void *arg, int timeout_ms)
{
    int saved = self->timeout_ms;
    int limited = timeout_ms > 0 && (saved <= 0 || timeout_ms < saved);
    if (limited)
        self->timeout_ms = timeout_ms;
    int rc = s_wait(self, pred, arg, 0);
    self->timeout_ms = saved;
    if (rc && limited && !pred(self, arg)) {
        rc = 0;                         /* our own bound ran out: nothing arrived */
        self->errmsg[0] = 0;
    }
    return rc;
}

/*  The failure of an unbounded wait that ended with nothing: GIMPI_ESYSERR, and why. */
static int s_left_error(gimpi_msg_t *self, int w)
{
    snprintf(self->errmsg, sizeof self->errmsg, "%s",
             w >= 0 && self->peers[w].gone ? "the awaited task has left"
                                           : "every other task has left");
    return GIMPI_ESYSERR;
}

/*  Probe with a context id waiting at most timeout_ms (0: just look, < 0: no limit). */
int gimpi_msg_tprobe_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, int timeout_ms,
                         int watch_tid, int *flag, gimpi_status_t *status)
{
    assert(self);
    if (!flag || s_check_tag(self, tag, 1))
        return GIMPI_EBADPARAM;
    s_enter(self);
    int p, w;
    int rc = s_source_watch(self, tid, watch_tid, &p, &w);
    if (rc) {
        s_leave(self);
        return rc;
    }
    probe_t pr = { cid, p, tag, NULL, w };
    *flag = 0;
    if (!s_probe_pred(self, &pr))
        s_drive(self, 0, 1);
    if (!s_probe_pred(self, &pr) && timeout_ms != 0) {
        rc = s_wait_upto(self, timeout_ms < 0 ? s_tprobe_pred : s_probe_pred, &pr, timeout_ms);
        if (!rc && timeout_ms < 0 && (pr.peer < 0 || w >= 0) && !s_probe_pred(self, &pr))
            rc = s_left_error(self, w); /* unbounded: the watched task or every other left */
    }
    if (!rc && s_probe_pred(self, &pr)) {
        rc = s_probe_result(self, &pr, status);
        *flag = pr.found != NULL;
    }
    s_leave(self);
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
    if (tk->r->l1.on != &self->posted)
        return 0;                       /* matched: its data is arriving */
    return (tk->peer < 0 && s_all_gone(self)) || (tk->watch >= 0 && self->peers[tk->watch].gone);
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
    if (!flag || !data || s_check_tag(self, tag, 1))
        return GIMPI_EBADPARAM;
    *flag = 0;
    *data = NULL;
    s_enter(self);
    int p, w;
    int rc = s_source_watch(self, tid, watch_tid, &p, &w);
    if (rc) {
        s_leave(self);
        return rc;
    }
    gimpi_msg_req_t key = { .cid = cid, .peer = p, .tag = tag };
    umsg_t *um = self->uhead;
    while (um && !s_matches(&key, um->src, um->tag, um->cid))
        um = um->next;
    if (um && um->complete && !um->is_long) {   /* whole and here: hand its memory over */
        s_um_remove(self, um);
        s_release_sender(self, um);
        if (status)
            *status = (gimpi_status_t){ .source = self->peers[um->src].tid, .tag = um->tag,
                                        .len = (size_t)um->msglen };
        *data = um->data;
        um->data = NULL;
        s_um_free(um);
        *flag = 1;
        s_leave(self);
        return 0;
    }
    gimpi_msg_req_t *r = NULL;
    rc = s_irecv_ex(self, cid, tid, tag, NULL, 0, 1, &r);
    if (rc) {
        s_leave(self);
        return rc;
    }
    take_t tk = { r, p, w };
    if (!s_take_pred(self, &tk))
        s_drive(self, 0, 1);
    if (!s_take_pred(self, &tk) && timeout_ms != 0)
        rc = s_wait_upto(self, s_take_pred, &tk, timeout_ms);
    if (!r->done && r->l1.on != &self->posted) {    /* matched: let its data come in */
        int r2 = s_wait(self, s_req_done, r, 0);
        rc = rc ? rc : r2;
    }
    if (r->done) {
        gimpi_status_t st;
        s_status(self, r, &st);
        rc = r->error;
        if (!rc) {
            *data = r->owned;
            r->owned = NULL;
            *flag = 1;
            if (status)
                *status = st;
        }
        s_req_free(r);
    } else if (r->l1.on == &self->posted) {         /* nothing came: withdraw it */
        L1_DEL(r);
        s_req_free(r);
        if (!rc && timeout_ms < 0)
            rc = s_left_error(self, w); /* unbounded: the watched task or every other left */
    } else {                            /* the context timeout ran out mid-message */
        r->detached = 1;                /* the engine finishes it and frees its memory */
        self->ndetached++;
        rc = rc ? rc : GIMPI_ESYSERR;
    }
    s_leave(self);
    return rc;
}

/*  Non-blocking send with a context id. */
int gimpi_msg_isend_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                        size_t len, int flags, gimpi_msg_req_t **req)
{
    assert(self);
    gimpi_msg__before_send(self);
    s_enter(self);
    int rc = s_isend(self, cid, tid, tag, buf, len, flags, req);
    s_leave(self);
    return rc;
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
    s_enter(self);
    int rc = s_irecv(self, cid, tid, tag, buf, size, req);
    s_leave(self);
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
    s_enter(self);
    int rc = s_wait(self, s_req_done, *req, 0);
    if ((*req)->done)
        rc = s_finish(self, req, status);
    s_leave(self);
    return rc;
}

/*  Tests a request. */
int gimpi_msg_test(gimpi_msg_t *self, gimpi_msg_req_t **req, int *flag,
                   gimpi_status_t *status)
{
    assert(self);
    if (!req || !*req || !flag)
        return GIMPI_EBADPARAM;
    s_enter(self);
    if (!(*req)->done)
        s_drive(self, 0, 1);
    int rc = 0;
    *flag = (*req)->done;
    if (*flag)
        rc = s_finish(self, req, status);
    s_leave(self);
    return rc;
}

/*  Cancels a request if it still can be (a sent first packet needs IMPI's CANCEL). */
int gimpi_msg_cancel(gimpi_msg_t *self, gimpi_msg_req_t *r)
{
    assert(self);
    if (!r)
        return GIMPI_EBADPARAM;
    s_enter(self);
    if (!r->done) {
        if (r->kind == RQ_RECV) {
            if (r->l1.on == &self->posted) {
                r->cancelled = 1;
                s_complete(self, r, 0);
            }
        } else if (r->state == S_QUEUED) {
            r->cancelled = 1;
            s_complete(self, r, 0);
        } else if (r->state == S_LOCAL) {
            umsg_t *um = r->local;
            s_um_remove(self, um);
            s_um_free(um);
            r->local = NULL;
            r->cancelled = 1;
            s_complete(self, r, 0);
        } else if (r->state == S_WAITACK && !r->acked && !r->cancel_wait) {
            r->cancel_wait = 1;
            s_queue_ctl(self, r->peer, IMPI_PK_CANCEL, r->id, 0, r->tag, r->cid);
        }
    }
    s_leave(self);
    return 0;
}

/*  Predicate of finalize, first half: nothing left to send. */
static int s_idle(gimpi_msg_t *self, void *arg)
{
    (void)arg;
    if (self->ndetached || self->out.head)
        return 0;
    for (int p = 0; p < self->nprocs; p++)
        if (self->peers[p].ctl.head || self->peers[p].first.head || self->peers[p].rest.head)
            return 0;
    for (int h = 0; h < self->nhosts; h++)
        if (self->conns[h].state == C_OPEN && (self->conns[h].tbusy || self->conns[h].urgent.head))
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
    s_enter(self);
    int saved = self->timeout_ms;
    self->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
    int rc = s_wait(self, s_idle, NULL, 0);
    /* no new dynamic hosts from now on; those not connected yet never will be */
    self->finishing = 1;
    for (int h = self->nstatic_hosts; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_DIAL || c->state == C_EXPECT) {
            if (self->peers[c->procs[0]].alive_fd >= 0) {
                close(self->peers[c->procs[0]].alive_fd);
                self->peers[c->procs[0]].alive_fd = -1;
            }
            s_conn_close(self, h);
            s_host_gone(self, h, GIMPI_ESYSERR, 0);
        }
    }
    for (int h = 0; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state != C_OPEN || c->fini_queued)
            continue;
        if (s_queue_fini(self, h) < 0) {
            rc = GIMPI_ENOMEM;
            break;
        }
    }
    int rc2 = s_wait(self, s_all_closed, NULL, 0);
    self->timeout_ms = saved;
    s_leave(self);
    return rc ? rc : rc2;
}

/* ------------------------------------------------------------------ forwarding hook */
/*  The locked primitives gimpi_msg_fwd.c builds large broadcasts on (gimpi_msg_fwd.h). */

/*  A detached send whose buffer the engine owns (lock held). */
int gimpi_msg__send_owned(gimpi_msg_t *self, uint64_t cid, int tid, int tag, uint8_t *buf,
                          size_t len)
{
    gimpi_msg_req_t *r = NULL;
    self->in_engine++;                  /* an unknown tid is resolved later, not here */
    int rc = s_isend(self, cid, tid, tag, buf, len, 0, &r);
    self->in_engine--;
    if (rc < 0) {
        free(buf);
        return rc;
    }
    if (r->done) {
        free(buf);
        s_req_free(r);
        return 0;
    }
    r->owned = buf;
    r->detached = 1;
    self->ndetached++;
    return 0;
}

/*  Delivers a whole message from tid src (lock held): to a posted receive or the
 *  unexpected queue. */
int gimpi_msg__inject(gimpi_msg_t *self, uint64_t cid, int src, int tag, uint8_t *data,
                      size_t len)
{
    int p = s_find_tid(self, src);
    umsg_t *um = calloc(1, sizeof *um);
    if (p < 0 || !um) {
        free(um);
        free(data);
        return p < 0 ? GIMPI_EBADPARAM : GIMPI_ENOMEM;
    }
    um->src = p;
    um->tag = tag;
    um->cid = cid;
    um->msglen = um->have = len;
    um->srqid = self->next_id++;
    um->complete = 1;
    um->data = data;
    s_um_arrived(self, um);
    return 0;
}

/*  An incomplete message (lock held): queued, or claimed by a posted receive at once. */
void *gimpi_msg__placeholder(gimpi_msg_t *self, uint64_t cid, int src, int tag, size_t total)
{
    int p = s_find_tid(self, src);
    umsg_t *um = p < 0 ? NULL : calloc(1, sizeof *um);
    if (!um)
        return NULL;
    um->src = p;
    um->tag = tag;
    um->cid = cid;
    um->msglen = total;
    um->srqid = self->next_id++;
    gimpi_msg_req_t *q;
    for (q = self->posted.head; q; q = L1_NEXT(q))
        if (s_matches(q, p, tag, cid))
            break;
    if (q) {
        L1_DEL(q);
        um->claim = q;
    } else
        s_um_push(self, um);
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
        s_deliver(self, um, um->claim);
        s_um_free(um);
    } else
        pthread_cond_broadcast(&self->cv);
}

/*  The buffer of the receive that claimed a placeholder (NULL when none yet). */
uint8_t *gimpi_msg__claim_buf(gimpi_msg_t *self, void *ph, size_t *size)
{
    (void)self;
    umsg_t *um = ph;
    if (!um->claim)
        return NULL;
    s_alloc_rbuf(um->claim, um->msglen);
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
    s_complete(self, r, 0);
    s_um_free(um);
}

/*  Drops a placeholder (lock held). */
void gimpi_msg__fail(gimpi_msg_t *self, void *ph)
{
    umsg_t *um = ph;
    if (um->claim)
        s_complete(self, um->claim, GIMPI_ESYSERR);
    else
        s_um_remove(self, um);
    s_um_free(um);
}

/*  The packet length. */
size_t gimpi_msg__pktlen(gimpi_msg_t *self)
{
    assert(self);
    return self->pktlen;
}

/*  The IMPI client of a tid's task, -1 when unknown (or a dynamic task: in no client). */
int gimpi_msg_client(gimpi_msg_t *self, int tid)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    int p = s_find_tid(self, tid);
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
