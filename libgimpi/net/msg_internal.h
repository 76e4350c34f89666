/*  msg_internal.h — the packet engine's private state (libgimpi/net/msg_*.c and
 *  gimpi_msg.c only): the context gimpi_msg_t, its requests, peers and connections, the
 *  tiny helpers every engine file inlines, and the functions the engine files give each
 *  other.  Nothing outside the engine includes it; the forwarding module sees the engine
 *  only through msg_fwd_hooks.h.
 *
 *  The engine's files, and the order they depend on each other in (each uses only
 *  the ones before it; checked on the objects with nm, see doc/data-plane.md):
 *      gimpi_host.c     host sockets: listeners, dialling, the static hosts' meeting
 *      gimpi_ring.c     a one-way byte ring in shared memory, passing its memory file
 *      msg_shm.c        the shared-memory link under a local connection: transport
 *                       records, the byte stream through two rings, doorbells
 *      msg_conn.c       the per-connection packet state machine, send side: completion
 *                       of requests, failures, PROTOACK credit, sending (eager,
 *                       rendezvous, SYNCACK, CANCEL, FINI)
 *      msg_recv.c       the per-connection packet state machine, receive side: reading,
 *                       matching first packets, continuations, control packets
 *      msg_dynhost.c    dynamic hosts: the introduction codec, dialling, accepting and
 *                       resolving tasks outside the static tables
 *      msg_match.c      matching and the queues: posted receives, unexpected messages,
 *                       starting sends; the locked primitives of msg_fwd_hooks.h
 *      msg_progress.c   progress and waiting: the poll loop, bounded waits, the thread
 *      gimpi_msg.c      the public calls (gimpi_msg.h) on a running context
 *      gimpi_msg_fwd.c  forwarding of large broadcasts (above the public calls; the
 *                       engine reaches it only through the hooks in the context)
 *      msg_new.c        creating and destroying a context (meets the static hosts,
 *                       installs the forwarding hooks, starts the thread)
 *
 *  Everything in the context is guarded by its mutex mu, except where a field says so.
 */
#ifndef GIMPI_MSG_INTERNAL_H
#define GIMPI_MSG_INTERNAL_H

#include "gimpi.h"
#include "gimpi_msg.h"
#include "base/gimpi_key.h"
#include "base/gimpi_ratelog.h"
#include "impi/impi_tables.h"
#include "impi/impi_wire.h"
#include "net/gimpi_host.h"
#include "net/msg_dynhost.h"
#include "net/msg_fwd_hooks.h"
#include "net/msg_shm.h"
#include "base/gimpi_clock.h"

#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/*  The engine's cross-file functions stay inside the library (direct calls, no PLT). */
#pragma GCC visibility push(hidden)

#define STAGE_SIZE (128 * 1024)     /* receive staging buffer per connection */
#define DIRECT_MIN 2048             /* payload bytes worth a readv straight to the user */
#define DIRECT_READ_MAX 2           /* a quick look reads up to this many sockets directly */
#define QUICK_TICK 256              /* ... and polls the sockets of shared-memory links and
                                       the dynamic hosts' every this many looks (a power
                                       of 2; about every 20 us of a spin) */
#define FIRST_LOOKS 16              /* a task with its own core looks this often at its
                                       rings before a wait reads the clock */
#define RECV_LOOKS 256              /* a blocking receive from one peer with a core of its
                                       own looks this often at just that peer's ring
                                       (a load each) before it takes the full path */
#define SPIN_US_DEFAULT 500         /* how long a blocked call polls (yielding) before sleeping */
#define HOT_SPIN_US 20              /* first part of it without yielding, when every local
                                       peer of a shared-memory link can have a core */
#define HOT_SPIN_OVER_US 2          /* a shorter one when the tasks outnumber the cores
                                       (but there is more than one) */
#define HOT_BACKOFF 64              /* waits without that once one outlasted it (others
                                       want the cores) */
#define MSG_NO_REQ (1 << 30)        /* msg_isend: no request for a send written at once */
#define REQ_SPARES 16               /* freed requests kept for reuse */
#define BUFFER_AFTER_US 1000        /* a standard long send copies its data after this */
#define IDLE_TAKEOVER_MS 2          /* app out of the library this long: thread polls */
#define BATCH_MAX 16                /* continuation packets written with the current one */
#define TID_GRACE_US 2000000        /* a caller of a tid we may be about to get waits this long */
#define LIVENESS_MS_DEFAULT 500     /* a blocked call asks about its peers after this long,
                                       and again as often (GIMPI_LIVENESS_MS; 0 = never):
                                       groupd drops a silent task after about 1 s, so a
                                       stopped peer fails its waiters within about 2 s */
#define NOTE_MS_DEFAULT 100         /* a call blocked this long runs the blocked hook once */
#define LIVENESS_MAX 64             /* peers asked about per round (the rest next round) */
#define UNEXPECTED_MAX_DEFAULT (1u << 20)   /* what unexpected messages from one peer may
                                       cost us (bytes, plus UNEXPECTED_MSG_COST each)
                                       before its credit is held back while nothing here
                                       waits for it (GIMPI_UNEXPECTED_MAX; 0 = no bound):
                                       early collective traffic and floods wait in their
                                       senders, not in our memory, and matching, which
                                       scans the queue, stays fast */
#define UNEXPECTED_MSG_COST 4096    /* what a message counts for at least: 256 small ones
                                       fill the default */
#define UNEXPECTED_P2P_MAX_DEFAULT (64u << 20)  /* the same for point-to-point messages,
                                       counted apart (GIMPI_UNEXPECTED_P2P_MAX; 0 = no
                                       bound): generous, as PVM buffered them without
                                       bound and programs send many before receiving */
#define UNEXPECTED_P2P_COST 256     /* what a point-to-point message counts for at least */

/*  Limits on strangers at the listener (doc/data-plane.md, "Dynamic hosts").  A caller
 *  that has not proved it holds the key costs one pend_t (about 200 bytes) and one
 *  descriptor, nothing else, and only for a while: */
#define HANDSHAKE_MAX_DEFAULT 32    /* unauthenticated callers held at once; when full a
                                       caller that has sent nothing goes first, else the
                                       oldest (never one that proved the key).  32 is far above what a job's own
                                       tasks have under way at once (each handshake lasts
                                       two round trips), and small beside the descriptor
                                       limit; GIMPI_HANDSHAKE_MAX changes it */
#define HANDSHAKE_PER_SOURCE_DEFAULT 16 /* of those, from one address: a flood from one
                                       host leaves half the slots to the others' callers
                                       (tasks of one machine share an address, and 16
                                       handshakes under way at once is already a burst);
                                       GIMPI_HANDSHAKE_PER_SOURCE changes it */
#define DIAL_BACKOFF_MIN_MS 10      /* a dial whose callee hung up before answering (it was
                                       flooded) is tried again after this, */
#define DIAL_BACKOFF_MAX_MS 500     /* doubling up to this, until connect_ms is over */
#define HANDSHAKE_MS_DEFAULT 5000   /* an unauthenticated caller has this long to finish
                                       the introduction: two round trips on a healthy
                                       network, with room for a loaded machine;
                                       GIMPI_HANDSHAKE_TIMEOUT (seconds) changes it */
#define DYN_CONNS_DEFAULT 512       /* introduced (authenticated) connections at once, both
                                       ways: each holds a descriptor and a 128 KiB buffer,
                                       and 512 stays clear of the usual 1024-descriptor
                                       limit; GIMPI_MAX_DYN_CONNS raises it */
#define REFUSED_LOG_PER_S 5         /* stderr lines about refused callers per second; the
                                       rest are counted in one summary line */

/*  A hook the context runs (gimpi_msg.h's send, liveness and blocked hooks): fn is kept
 *  as the generic function type and called as its kind's (gimpi_msg_hook_fn or
 *  gimpi_msg_alive_fn). */
typedef struct {
    void (*fn)(void);
    void *arg;
} msg_hook_t;

/* ------------------------------------------------------------------ requests */

/*  A request sits on up to three lists at once, through three links: its queue (a peer's
 *  pending or streaming sends, the posted or long receives), the sends whose first packet
 *  is out, and the list of every request. */
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
    S_QUEUED,                       /* in its peer's pending sends */
    S_WAITACK,                      /* first packet out, waits for SYNCACK (long or sync) */
    S_STD,                          /* standard short: first packet being written */
    S_REST,                         /* matched long: continuation data going out */
    S_WRITTEN,                      /* everything written, waits for a cancel reply */
    S_LOCAL,                        /* to self: sits in our own unexpected queue */
};

struct gimpi_msg_req_t {
    int kind;
    int done, error, cancelled, detached;
    int alloc;                      /* receive: memory made at match (msg_alloc_rbuf), owned */
    uint64_t id;                    /* srqid (send) or drqid (receive) */
    uint64_t cid;
    int peer;                       /* world rank, -1 = any */
    int tag;                        /* -1 = any (receive) */
    link_t queue;                   /* pending/streaming sends, posted/long receives */
    link_t out;                     /* match.sends_out: sends whose first packet is out */
    link_t all;                     /* match.all_reqs: every request not yet freed */
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
    gimpi_msg_req_t *spare_next;    /* in match.spares once freed */
};

typedef struct umsg_t umsg_t;
struct umsg_t {                     /* a message that arrived before its receive */
    umsg_t *prev, *next;
    int src, tag;
    uint64_t cid, msglen, srqid;
    int sync, is_long, complete;
    size_t counted;                 /* bytes counted in its sender's peer_t.unexp ... */
    int counted_p2p;                /* ... or in unexp_p2p */
    uint8_t *data;
    size_t have;
    gimpi_msg_req_t *claim;         /* a receive matched it while its data was arriving */
    gimpi_msg_req_t *self_sreq;     /* message to self: the sync send waiting for a match */
};
typedef struct {
    umsg_t *head, *tail;
} umsg_queue_t;

/* -------------------------------------------------------------- peers and connections */

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
    ctlq_t ctl_pkts;                /* counted control packets to it (SYNCACK, CANCEL...) */
    req_list_t pending_sends;       /* sends whose first packet has not gone out */
    req_list_t streaming_sends;     /* matched long sends whose continuation data goes out */
    int client;                     /* its IMPI client (the collectives' masters) */
    int watched;                    /* blocked calls that fail when it goes (liveness) */
    size_t unexp;                   /* what its collective messages in our unexpected
                                       queue cost ... */
    size_t unexp_p2p;               /* ... and its other messages */
    uint32_t owed;                  /* PROTOACKs held back (credit, see UNEXPECTED_MAX) */
} peer_t;

/*  Connection states: open, closed, being dialled (dynamic), waiting for an expected peer
 *  to call (dynamic). */
enum { C_OPEN, C_CLOSED, C_DIAL, C_EXPECT };
/*  Phases of a dial: resolving the tid (a caller does it, unlocked), connecting, writing
 *  the HELLO, reading the CHALLENGE, writing the INTRO, reading the ANSWER, waiting for
 *  the peer's own call (it won a race), waiting to call again (the callee hung up before
 *  answering).  msg_dynhost.h has the records. */
enum { D_RESOLVE, D_CONNECT, D_HELLO, D_CHALLENGE, D_INTRO, D_ANSWER, D_WAIT, D_BACKOFF };
enum { T_CTL, T_FIRST, T_REST };
enum { R_DISCARD, R_MATCHED, R_CONT, R_UNEXP };

typedef struct {
    int fd;
    int state;
    int fini_sent, fini_recv, fini_queued;
    int *procs, nprocs, rr;
    uint32_t pktlen, ackmark, hiwater;  /* this connection's (dynamic: agreed minima) */
    int dyn;                        /* a dynamic host (not in the static tables) */
    int kin;                        /* a gimpi host (ours, or dynamic): stamps go both ways */
    int dial;                       /* C_DIAL: D_* */
    int resolve_later;              /* D_RESOLVE: nobody is resolving it yet */
    int64_t dial_deadline;          /* C_DIAL: give up then (monotonic us) */
    int64_t retry_at;               /* D_BACKOFF: call again then (monotonic us) */
    int backoff_ms;                 /* the wait before the next call again */
    int dial_port;                  /* C_DIAL: the contact being called, */
    uint8_t dial_addr[16];          /* kept for calling again */
    uint8_t iout[GIMPI_INTRO_SIZE]; /* C_DIAL: HELLO, then our INTRO (kept for the MAC) */
    uint8_t ibuf[GIMPI_INTRO_SIZE]; /* C_DIAL: CHALLENGE, then ANSWER in */
    size_t ioff;                    /* bytes of the record being written or read */
    ctlq_t urgent;                  /* uncounted packets (PROTOACK, FINI): sent first */
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
    msg_shm_t *shm;                 /* a local peer of our user: the shared-memory link
                                       (pending, on or off), else NULL */
} conn_t;

/*  Phases of an accepted connection before it is one: reading the HELLO, reading the
 *  INTRO (the CHALLENGE is out), authenticated (waiting for our tid, or decided), the
 *  verifier to be asked, the verifier being asked (unlocked). */
enum { P_HELLO, P_INTRO, P_AUTHED, P_VERIFY, P_VERIFYING };

/*  An accepted connection whose introduction is under way: all a stranger costs. */
typedef struct {
    int fd;
    int phase;                      /* P_* */
    int verified;                   /* the verifier said yes */
    size_t got;                     /* bytes of the HELLO or INTRO read */
    int64_t deadline;               /* monotonic us */
    uint64_t serial;                /* accept order: the oldest goes first; its name while
                                       the verifier runs unlocked */
    uint8_t src[16];                /* its address (IPv4-mapped; zeros: a local socket) */
    uint8_t nonce[GIMPI_INTRO_NONCE];   /* our challenge */
    uint8_t buf[GIMPI_INTRO_SIZE];
} pend_t;

/* ------------------------------------------------------------------ the context */

struct gimpi_msg_t {
    pthread_mutex_t mu;
    pthread_cond_t cv;              /* application threads waiting for the driver */
    /* the job: this proc, and the procs and hosts it knows (static ones first) */
    int rank, nprocs, nhosts, myhost;
    int nstatic, nstatic_hosts;     /* procs and hosts of the static tables (first ones) */
    int listed;                     /* strangers can find this task: never "all gone" */
    int cap_procs, cap_hosts;       /* allocated peers and conns */
    int tidbase;                    /* tid of static rank r = tidbase + r + 1 */
    impi_proc_t me;
    uint32_t pktlen, ackmark, hiwater;
    int32_t tagub;
    int maxlinear;                  /* IMPI's MAXLINEAR (collectives between clients) */
    peer_t *peers;
    conn_t *conns;
    uint64_t seq;                   /* sequence number of the last packet built */
    uint64_t stamp_out;             /* atomic: the stamp our packets to kin carry */
    uint64_t stamp_in;              /* atomic: the highest stamp that came from kin */
    int myclient;                   /* our IMPI client: its hosts are gimpi, "kin" */
    int timeout_ms;                 /* bound on blocking calls, 0 = none */
    int debug;                      /* GIMPI_DEBUG=1: every packet on stderr */
    size_t shm_ring;                /* ring bytes offered to local peers (0: GIMPI_SHM=0) */
    char errmsg[512];               /* the last failure (room for a refusal's advice) */
    struct {                        /* requests and messages (msg_match.c) */
        req_list_t posted_recvs;    /* receives not matched yet, oldest first */
        req_list_t long_recvs;      /* matched long receives waiting for their rest */
        req_list_t sends_out;       /* sends whose first packet is out, until complete */
        req_list_t all_reqs;        /* every request not yet freed */
        gimpi_msg_req_t *spares;    /* freed requests kept for reuse (REQ_SPARES at most) */
        int nspares;
        umsg_queue_t unexpected;    /* messages that came before their receive */
        uint64_t next_id;           /* the next request id (srqid, drqid) */
        int ndetached;              /* requests that go on without their caller */
        size_t unexp_max;           /* UNEXPECTED_MAX_DEFAULT or GIMPI_UNEXPECTED_MAX */
        size_t unexp_p2p_max;       /* UNEXPECTED_P2P_MAX_DEFAULT or GIMPI_UNEXPECTED_P2P_MAX */
        int nowed;                  /* peers with PROTOACKs held back */
        int missed;                 /* a probe found nothing since the last take: every
                                       peer may be the one it waits for */
    } match;
    struct {                        /* progress and waiting (msg_progress.c) */
        pthread_t thread;
        int started, stop;          /* stop: guarded by doze_mu too */
        pthread_mutex_t doze_mu;    /* the thread's doze; never taken while holding mu */
        pthread_cond_t doze_cv;
        int evfd;                   /* kicks a poller out of poll() */
        int arrive_fd;              /* rung when a message is queued (gimpi_msg_arrival_fd),
                                       -1 until asked for */
        int app_blocked;            /* atomic: read by the dozing thread without mu */
        uint64_t app_epoch;         /* atomic: read by the dozing thread without mu */
        int driving;                /* an application thread is inside a blocking drive */
        int thread_polling;         /* the thread is inside poll() */
        int app_polling;            /* application threads inside a blocking poll() */
        uint64_t moved;             /* successful reads and writes on connections so far */
        uint64_t rdone;             /* receives completed so far */
        uint32_t quick;             /* quick looks so far (extras looked at every QUICK_TICK-th) */
        int spin_us;                /* GIMPI_SPIN_US */
        int ncpu;                   /* cores the tasks of this machine share */
        bool own_core;              /* this task has a core of its own (gimpi_bind.h) */
        int cv_waiters;             /* threads in a wait on cv (under mu) */
        int nshm;                   /* connections whose bytes go through shared memory */
        int hot_off;                /* waits left before spinning without yielding again */
    } prog;
    struct {                        /* dynamic hosts (msg_dynhost.c) */
        int listen_fd;              /* TCP listener */
        int local_fd;               /* local (Unix-domain) listener, or -1 */
        gimpi_msg_resolve_fn resolve;   /* tid -> contact for dynamic peers, or NULL */
        void *resolve_arg;
        gimpi_msg_verify_fn verify;     /* is tid registered at that contact?  or NULL */
        void *verify_arg;
        gimpi_key_t key;            /* the job's key (gimpi_msg_set_key) */
        int have_key;
        uint8_t contact[16];        /* our contact as registered: the tables' address */
        int contact_port;           /* ... and port of our host */
        pend_t *pend;               /* incoming introductions being read */
        int npend, cap_pend;
        uint64_t serial;            /* accepts so far */
        int handshake_max;          /* HANDSHAKE_MAX_DEFAULT or GIMPI_HANDSHAKE_MAX */
        int per_source;             /* HANDSHAKE_PER_SOURCE_DEFAULT or
                                       GIMPI_HANDSHAKE_PER_SOURCE */
        int handshake_ms;           /* HANDSHAKE_MS_DEFAULT or GIMPI_HANDSHAKE_TIMEOUT */
        int max_conns;              /* DYN_CONNS_DEFAULT or GIMPI_MAX_DYN_CONNS */
        int nresolve;               /* dynamic peers waiting for a resolver call */
        int nverify;                /* accepted callers waiting for a verifier call */
        gimpi_ratelog_t log;        /* lines about refused callers (REFUSED_LOG_PER_S) */
        int in_engine;              /* > 0: inside the engine, the lock may not be dropped */
        int finishing;              /* finalize under way: no new dynamic hosts */
        int connect_ms;             /* bound on setting up a dynamic connection */
        int tid_final;              /* gimpi_msg_set_tidbase was called */
        int64_t born_us;            /* creation (the grace for learning our tid) */
    } dyn;
    struct {                        /* what runs beside the engine */
        msg_hook_t send;            /* gimpi_msg_hook_fn: once per send call, before the lock */
        msg_hook_t alive;           /* gimpi_msg_alive_fn: liveness of peers a blocked call
                                       waits for */
        int liveness_ms;            /* LIVENESS_MS_DEFAULT or GIMPI_LIVENESS_MS */
        msg_hook_t blocked;         /* gimpi_msg_hook_fn: run once by a call blocked note_ms */
        int note_ms;                /* NOTE_MS_DEFAULT or GIMPI_NOTE_MS */
        msg_hook_t status;          /* gimpi_msg_status_fn: run once by a call blocked
                                       status_ms (the live view, msg_status_hook.h) */
        int status_ms;
        int alive_rr;               /* where the next round of questions starts */
        const gimpi_msg_fwd_hooks_t *fwd_hooks;     /* forwarding (msg_fwd_hooks.h) */
        gimpi_fwd_t *fwd;           /* its state: broadcasts being reassembled */
    } hooks;
};

/*  A condition a blocked call waits for (msg_wait). */
typedef int (*pred_t)(gimpi_msg_t *self, void *arg);

/*  What a probe looks for, and what it found. */
typedef struct {
    uint64_t cid;
    int peer, tag;
    umsg_t *found;
    int watch;                      /* tprobe: world rank whose departure ends it, or -1 */
} probe_t;

/* ------------------------------------------------------------------ tiny helpers */

/*  Appends r to a list through one of its links. */
static inline void msg_list_push(req_list_t *L, gimpi_msg_req_t *r, link_t *lk, size_t off)
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
static inline void msg_list_remove(gimpi_msg_req_t *r, link_t *lk, size_t off)
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

#define QUEUE_PUSH(L, r) msg_list_push((L), (r), &(r)->queue, offsetof(gimpi_msg_req_t, queue))
#define QUEUE_DEL(r) msg_list_remove((r), &(r)->queue, offsetof(gimpi_msg_req_t, queue))
#define OUT_PUSH(L, r) msg_list_push((L), (r), &(r)->out, offsetof(gimpi_msg_req_t, out))
#define OUT_DEL(r) msg_list_remove((r), &(r)->out, offsetof(gimpi_msg_req_t, out))
#define ALL_PUSH(L, r) msg_list_push((L), (r), &(r)->all, offsetof(gimpi_msg_req_t, all))
#define ALL_DEL(r) msg_list_remove((r), &(r)->all, offsetof(gimpi_msg_req_t, all))
#define QUEUE_NEXT(r) ((r)->queue.next)
#define OUT_NEXT(r) ((r)->out.next)

/*  Appends a control packet to a queue. */
static inline void msg_ctl_push(ctlq_t *q, ctl_t *c)
{
    c->next = NULL;
    if (q->tail)
        q->tail->next = c;
    else
        q->head = c;
    q->tail = c;
}

/*  Takes the first control packet of a queue. */
static inline ctl_t *msg_ctl_pop(ctlq_t *q)
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
static inline void msg_ctl_clear(ctlq_t *q)
{
    ctl_t *c;
    while ((c = msg_ctl_pop(q)))
        free(c);
}

/*  A whole message was queued: rings the arrival descriptor when there is one. */
static inline void msg_arrival_note(gimpi_msg_t *self)
{
    if (self->prog.arrive_fd >= 0) {
        uint64_t one = 1;
        ssize_t w = write(self->prog.arrive_fd, &one, sizeof one);
        (void)w;                /* full (2^64 - 2 rings unread): it is readable anyway */
    }
}

/*  Appends a message to the unexpected queue. */
static inline void msg_um_push(gimpi_msg_t *self, umsg_t *um)
{
    /* what it costs us: its bytes, its record and its header (tiny messages count too).
       The collectives' traffic has a tight bound; point-to-point messages a generous one,
       counted apart: PVM's daemon buffered them without bound, and programs send many
       before their peer receives any (all sends first, then receives in a fixed order) */
    um->counted_p2p = um->cid != GIMPI_CID_COLL;
    um->counted = um->src == self->rank ? 0
                : um->have + (um->counted_p2p ? UNEXPECTED_P2P_COST : UNEXPECTED_MSG_COST);
    if (um->counted && um->counted_p2p)
        self->peers[um->src].unexp_p2p += um->counted;
    else if (um->counted)
        self->peers[um->src].unexp += um->counted;
    um->next = NULL;
    um->prev = self->match.unexpected.tail;
    if (self->match.unexpected.tail)
        self->match.unexpected.tail->next = um;
    else
        self->match.unexpected.head = um;
    self->match.unexpected.tail = um;
}

/*  Unlinks a message from the unexpected queue. */
static inline void msg_um_remove(gimpi_msg_t *self, umsg_t *um)
{
    if (um->counted) {
        if (um->counted_p2p)
            self->peers[um->src].unexp_p2p -= um->counted;
        else
            self->peers[um->src].unexp -= um->counted;
        um->counted = 0;
    }
    self->match.missed = 0;
    if (um->prev)
        um->prev->next = um->next;
    else
        self->match.unexpected.head = um->next;
    if (um->next)
        um->next->prev = um->prev;
    else
        self->match.unexpected.tail = um->prev;
    um->prev = um->next = NULL;
}

/*  Frees an unexpected message and its data. */
static inline void msg_um_free(umsg_t *um)
{
    if (um) {
        free(um->data);
        free(um);
    }
}

/*  Wakes a poller (the progress thread or an application thread) out of poll(). */
static inline void msg_kick(gimpi_msg_t *self)
{
    uint64_t one = 1;
    ssize_t rc = write(self->prog.evfd, &one, sizeof one);
    (void)rc;
}

/*  Whether receive r accepts a message with this envelope. */
static inline int msg_matches(const gimpi_msg_req_t *r, int src, int tag, uint64_t cid)
{
    return r->cid == cid && (r->peer < 0 || r->peer == src) && (r->tag < 0 || r->tag == tag);
}

/*  Our own tid. */
static inline int msg_mytid(gimpi_msg_t *self)
{
    return self->tidbase + self->rank + 1;
}

/*  The peer index of a tid, or -1 when the context does not know it. */
static inline int msg_find_tid(gimpi_msg_t *self, int tid)
{
    long r = (long)tid - self->tidbase - 1;
    if (r >= 0 && r < self->nstatic)
        return (int)r;
    for (int p = self->nstatic; p < self->nprocs; p++)
        if (self->peers[p].tid == tid)
            return p;
    return -1;
}

/*  Entry of every public call: lock, and note that the application is in the library. */
static inline void msg_enter(gimpi_msg_t *self)
{
    pthread_mutex_lock(&self->mu);
    __atomic_add_fetch(&self->prog.app_epoch, 1, __ATOMIC_RELAXED);
}

/*  Exit of every public call. */
static inline void msg_leave(gimpi_msg_t *self)
{
    pthread_mutex_unlock(&self->mu);
}

/* ------------------------------------------------------------------ msg_conn.c */
/*  All with the lock held. */

/*  A zeroed request: a spare when there is one (a request per message otherwise costs
 *  an allocation and a free); NULL without memory. */
gimpi_msg_req_t *msg_req_new(gimpi_msg_t *self);
/*  Frees a request for good (it must be out of every queue): kept as a spare while there
 *  are fewer than REQ_SPARES. */
void msg_req_free(gimpi_msg_t *self, gimpi_msg_req_t *r);
/*  Frees the spares (at destroy). */
void msg_req_spares_free(gimpi_msg_t *self);
/*  Marks a request complete (unlinking it); detached ones are freed at once. */
void msg_complete(gimpi_msg_t *self, gimpi_msg_req_t *r, int err);
/*  Completes a send whose protocol is done and which waits for no cancel reply. */
void msg_send_check(gimpi_msg_t *self, gimpi_msg_req_t *r);
/*  Gives an allocating receive memory for a message of msglen bytes (once). */
void msg_alloc_rbuf(gimpi_msg_req_t *r, uint64_t msglen);
/*  A short unexpected message has been taken: its sender learns it. */
void msg_release_sender(gimpi_msg_t *self, umsg_t *um);
/*  Gives a matched unexpected message (out of the queue) to receive r. */
void msg_deliver(gimpi_msg_t *self, umsg_t *um, gimpi_msg_req_t *r);
/*  1 when every other task's host has died or finished. */
int msg_all_gone(gimpi_msg_t *self);
/*  Every operation involving host h fails with err (death: wildcard receives too). */
void msg_host_gone(gimpi_msg_t *self, int h, int err, int death);
/*  Counted packets from peer p reached the acknowledgement mark: a PROTOACK goes out, or
 *  is held back while p floods us (UNEXPECTED_MAX).  0, or -1 when the connection broke. */
int msg_credit(gimpi_msg_t *self, int h, int p);
/*  Sends the PROTOACKs held back from peers that may have credit again. */
void msg_credit_release(gimpi_msg_t *self);
/*  Peer p is gone by the word of the liveness hook: its host's connection is closed and
 *  every operation with it fails, with a line on stderr saying so. */
void msg_peer_lost(gimpi_msg_t *self, int p);
/*  Closes connection h and forgets its half-done packets. */
void msg_conn_close(gimpi_msg_t *self, int h);
/*  Breaks connection h: records and prints why, closes it, fails its operations. */
void msg_fault(gimpi_msg_t *self, int h, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*  Closes connection h once PK_FINI went both ways (doc/impi-protocol.md §4.9). */
void msg_check_fini(gimpi_msg_t *self, int h);
/*  Queues a counted control packet to peer p and pushes it out. */
void msg_queue_ctl(gimpi_msg_t *self, int p, uint32_t type, uint64_t srqid, uint64_t drqid,
                   int tag, uint64_t cid);
/*  A standard send's only packet to peer p written at once, without a request, when
 *  nothing is queued before it on a shared-memory link: 1 written, 0 not now, -1 broken. */
int msg_send_now(gimpi_msg_t *self, int p, uint64_t srqid, uint64_t cid, int tag,
                 const void *buf, size_t len);
/*  Writes what connection h may send now; -1 when the connection broke. */
int msg_flush(gimpi_msg_t *self, int h);
/*  GIMPI_DEBUG: how connection h was made. */
void msg_debug_conn(gimpi_msg_t *self, int h);
/*  Connection h has just opened: on a local socket (a peer of our user), starts the
 *  shared-memory link.  0, or -1 when the connection failed (recorded, closed). */
int msg_conn_opened(gimpi_msg_t *self, int h);

/* ------------------------------------------------------------------ msg_recv.c */

/*  Reads and handles what connection h has; -1 when it broke or closed. */
int msg_read(gimpi_msg_t *self, int h);
/*  Queues PK_FINI on connection h and pushes it out; 0 or -1 (no memory). */
int msg_queue_fini(gimpi_msg_t *self, int h);
/*  A blocking receive from peer p straight from its ring, when the next packet there
 *  (looked for up to looks times) is a whole eager DATA packet it matches and no receive
 *  is posted nor message unexpected (the caller's part): 1 taken, GIMPI_EOVERFLOW taken
 *  but cut to size, 0 not so (take the full path; nothing was consumed). */
int msg_recv_now(gimpi_msg_t *self, int p, uint64_t cid, int tag, void *buf, size_t size,
                 gimpi_status_t *st, int looks);

/* ------------------------------------------------------------------ msg_dynhost.c */

/*  The peer index of tid, creating and calling a dynamic peer through the resolver when
 *  it is unknown (may drop the lock); the index or a GIMPI_E* code. */
int msg_peer(gimpi_msg_t *self, int tid);
/*  Adds the dynamic-host sockets to a poll set; how many (*busy: a setup under way). */
int msg_dyn_fds(gimpi_msg_t *self, struct pollfd *pfd, int *busy);
/*  Handles a ready dynamic-host socket. */
void msg_dyn_event(gimpi_msg_t *self, int fd, short revents);
/*  Gives up dials and introductions past their deadline, calls again where a backoff is
 *  over; returns the ms until the next such call again, or -1 when none waits. */
int msg_dyn_deadlines(gimpi_msg_t *self);
/*  Resolves the peers the engine named while it could not, and asks the verifier about
 *  authenticated callers (may drop the lock). */
void msg_resolve_later(gimpi_msg_t *self);
/*  Writes the summary line of refused callers not reported yet. */
void msg_dyn_log_flush(gimpi_msg_t *self);
/*  Finalize: no new dynamic hosts; those not connected yet never will be. */
void msg_dyn_abandon(gimpi_msg_t *self);

/* ------------------------------------------------------------------ msg_match.c */

/*  0 when tag is a legal send tag (or, with wild, GIMPI_ANY). */
int msg_check_tag(gimpi_msg_t *self, int tag, int wild);
/*  Starts a send: the engine's one send entry.  Checks the arguments once; a standard
 *  send's only packet is written at once when it can be (msg_send_now, tried once), else
 *  the request is queued.  With MSG_NO_REQ in flags a send written at once makes no
 *  request (*out = NULL); otherwise *out is the request, done or not. */
int msg_isend(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf, size_t len,
              int flags, gimpi_msg_req_t **out);
/*  Posts a receive (alloc: memory made at match). */
int msg_irecv_ex(gimpi_msg_t *self, uint64_t cid, int tid, int tag, void *buf, size_t size,
                 int alloc, gimpi_msg_req_t **out);
/*  Posts a receive into the caller's buffer. */
int msg_irecv(gimpi_msg_t *self, uint64_t cid, int tid, int tag, void *buf, size_t size,
              gimpi_msg_req_t **out);
/*  Fills a status from a completed request. */
void msg_status(gimpi_msg_t *self, const gimpi_msg_req_t *r, gimpi_status_t *st);
/*  Finishes a completed request: status, free, result. */
int msg_finish(gimpi_msg_t *self, gimpi_msg_req_t **req, gimpi_status_t *status);
/*  Predicate of probe: a fully arrived matching message, or its sender gone. */
int msg_probe_pred(gimpi_msg_t *self, void *arg);
/*  Fills a status from a found message, or returns the sender's error. */
int msg_probe_result(gimpi_msg_t *self, probe_t *pr, gimpi_status_t *status);

/* ------------------------------------------------------------------ msg_new.c */

/*  A context whose static hosts have met already: fds[h] is the open connection to host h
 *  (ignored for its own host), taken over by the context.  No listener: dynamic hosts
 *  cannot reach it.  For the fuzzers and tests that feed a stream without a real dance. */
gimpi_msg_t *msg_new_met(const struct impi_tables_t *t, int rank, const int *fds, int timeout_ms,
                         char *err, size_t errsize);

/* ------------------------------------------------------------------ msg_progress.c */

/*  One round of progress (timeout_ms 0: just look); app: an application thread calls. */
void msg_drive(gimpi_msg_t *self, int timeout_ms, int app);
/*  Blocks an application thread until pred holds; 0 or GIMPI_ESYSERR (timeout). */
int msg_wait(gimpi_msg_t *self, pred_t pred, void *arg, int poll_cap_ms);
/*  msg_wait bounded by timeout_ms too when > 0; that bound running out is no error. */
int msg_wait_upto(gimpi_msg_t *self, pred_t pred, void *arg, int timeout_ms);
/*  The progress thread. */
void *msg_progress_main(void *arg);

#pragma GCC visibility pop

#endif
