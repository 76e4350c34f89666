/*  groups_internal.h — the private state of a task's groupd client (libgimpi/groups/
 *  gimpi_groups*.c only): the object gimpi_groups_t with its membership cache entries, the
 *  client's limits, and the functions its files give each other.  Nothing outside these
 *  files includes it, and nothing in it is exported from the library.
 *
 *  The client's files (each calls only the ones before it; t/layers.sh checks):
 *      gimpi_groups_start.c  starting a groupd on an ipc endpoint that nobody serves
 *      gimpi_groups_events.c the events that keep the cache current, the socket monitor
 *      gimpi_groups.c        the object, connecting and registering, requests and replies
 *                            (and the deferred leaves), tids and lookups
 *      gimpi_groups_cache.c  the cache made current, the group calls (gimpi_group.h) and
 *                            the snapshots of the collectives
 *      gimpi_groups_vm.c     the virtual machine's calls: host table, task registry, the
 *                            manager's requests and replies, the console's HALT
 *      gimpi_groups_notify.c watching tasks' ends and host table changes (pvm_notify)
 *      gimpi_groups_mbox.c   the message box (pvm_putinfo and its family)
 */
#ifndef GIMPI_GROUPS_INTERNAL_H
#define GIMPI_GROUPS_INTERNAL_H

#include "gimpi.h"
#include "gimpi_group.h"
#include "base/gd_hash.h"
#include "base/gimpi_key.h"
#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "base/gimpi_clock.h"

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/*  The client's cross-file functions stay inside the library (direct calls, no PLT). */
#pragma GCC visibility push(hidden)

enum {
    HELLO_TIMEOUT_MS = 5000,    /* first contact, including starting a groupd */
    REQUEST_TIMEOUT_MS = 30000, /* an answer that groupd owes at once (not barrier/freeze) */
    SYNC_TIMEOUT_MS = 2000,     /* waiting for the cache to catch up with a version */
    HOLD_MS = 10,               /* default of GIMPI_GROUPS_HOLD_MS (see held_t) */
    IDLE_EXIT_S = 30,           /* a groupd we start exits after this long without tasks */
    SPIN_US = 100,              /* default of GIMPI_GROUPS_SPIN_US (see s_wait_reply) */
    MAX_DEFERRED = 16,          /* deferred leaves in flight at most (then one waits) */
    EXPLORE_PERIOD = 256,       /* requests' waits: of every EXPLORE_PERIOD, the first */
    EXPLORE_RUN = 16,           /* EXPLORE_RUN go the way not chosen (s_spin_choice), and */
    EXPLORE_SETTLE = 8,         /* a wait counts for its way after this many of it in a row */
    COST_GAP_US = 1000,         /* a wait's cost counts the time to the next send up to this */
    INFLIGHT_MAX = 64,          /* requests kept until answered, to send again to a groupd
                                   restarted from its journal (16 deferred leaves, one
                                   waited for, a VMWAIT, quiet puts) */
    OUTAGE_MS = 5000,           /* default of GIMPI_GROUPD_OUTAGE_MS */
    HELLO_RETRY_MS = 200,       /* a reconnection whose handshake has not succeeded by
                                   then tries a new connection */
    ROUTING_ID_LEN = 16,        /* the DEALER's routing id (random, the same on every
                                   connection: groupd knows the task by it) */
    PROBE_AFTER_MS = 1000,      /* with a list of groupds, a request unanswered this long
                                   probes whether the next entry serves (s_probe) ... */
    PROBE_TICK_MS = 50,         /* ... looking at the probe this often */
    EARLY_MAX = 4,              /* replies kept for an outer wait (groups_early_keep) */
    SEND_SLICE_MS = 50,         /* a send libzmq cannot take waits this long at a time */
    GROUPS_CUTS_REFUSED = 3,    /* first handshakes cut without detail in a row that mean
                                   a wrong key (one alone may be a groupd killed in it) */
};

/*  A request sent and not answered yet: its frames, packed (Uint4 count, then Uint4
 *  length + bytes per frame), to send again after a reconnection. */
typedef struct {
    uint32_t reqid;
    uint8_t cmd;
    uint8_t *heap;              /* the frames when longer than small (malloc'ed), or NULL */
    size_t len;
    uint8_t small[120];         /* the frames (a JOIN of a 64-byte name takes 96) */
} inflight_t;

/*  Cached queries look at the event and monitor sockets at most this often: an empty
 *  libzmq receive costs two system calls (poll, getpid), twenty times the query itself.
 *  Events are asynchronous anyway; the promises (own changes, barriers) wait explicitly. */
#define CHECK_INTERVAL_NS 200000LL

typedef enum { C_SUBSCRIBING, C_MARKED, C_CURRENT } cstate_t;

/*  One group in the cache. */
typedef struct {
    cstate_t state;
    uint64_t version;           /* the group's version (the daemon counter at its last change) */
    uint64_t sync;              /* the entry is known complete through this daemon counter */
    bool exists;
    bool dead;
    int32_t frozen;
    int32_t size;
    int32_t *slots;             /* tid per instance, 0 = free */
    int cap;
} centry_t;

/*  An event read but not applied yet.  Others' changes are applied once they are HOLD_MS
 *  old, or at once when this task must see them: its own changes, barrier releases, and
 *  stamps of messages it received (the causal promise).  A change nobody has told the
 *  task about need not show at once (doc/groupd-protocol.md §6); holding it keeps a burst
 *  of queries right after a message consistent with that message, as a member that
 *  checks the group right after hearing from everyone expects. */
typedef struct held_t {
    struct held_t *next;
    int64_t at_ns;              /* when it was read */
    gd_msg_t ev;                /* values only: its pointers are not kept */
    size_t len;
    char group[];               /* the topic's group name */
} held_t;

struct gimpi_groups_t {
    void *zctx;
    bool own_ctx;
    void *dealer, *monitor, *sub;
    char endpoint[512];
    char pub_endpoint[512];
    char eplist[1024];          /* GIMPI_GROUPD as a list "EP1,EP2,..." (primary first, then
                                   its standbys), "" for one endpoint */
    char eprot[1024];           /* the list from the entry in use on (gimpi_groups_endpoint) */
    int nep, cur_ep;            /* entries in it, the one in endpoint */
    void *probe, *probe_mon;    /* a connection to the next entry and its monitor, while
                                   a request waits long (s_probe), or NULL */
    int32_t term;               /* the highest groupd term seen (HELLO replies) */
    int state;                  /* 0 not connected, 1 ready, -1 groupd gone */
    int32_t tid;
    int32_t want_tid;           /* gimpi_groups_set_tid: register as this (0: any) */
    uint32_t reqid;
    uint8_t hostid[16], addr[16];
    int64_t pid;
    int port;
    gd_hash_t *cache;           /* name -> centry_t */
    int64_t last_check_ns;      /* when the sockets were last looked at (queries) */
    int64_t last_monitor_ns;    /* when the monitor was last looked at (requests) */
    uint64_t n_local, n_remote;
    int64_t spin_ns;            /* a request's wait spins this long first (0: never) */
    int64_t lat_ns;             /* moving average of the replies' latency (spinning) */
    int64_t cost_ns[2];         /* moving average of a wait's cost, [1] spinning, [0]
                                   blocking at once (0: none yet; s_note_cost) */
    int64_t pend_ns, pend_at;   /* the last wait's latency and end, until the next send */
    bool pend_spin;             /* the way of that wait; pend_ns 0: none */
    uint32_t nwaits;            /* requests waited for (EXPLORE_RUN of every EXPLORE_PERIOD
                                   go the other way) */
    uint32_t streak;            /* waits in a row that went the way of the last one */
    bool last_spin;             /* the way of the last wait */
    gd_hash_t *mine;            /* the groups this task is in (value: self, unused) */
    bool sync_leave;            /* GIMPI_GROUPS_SYNC_LEAVE: every leave waits for its reply */
    int ndeferred;              /* deferred leaves whose replies are still to come */
    bool have_key;              /* key loaded (tcp endpoints only) */
    gimpi_key_t key;
    char keydesc[GIMPI_KEY_PATHLEN + 64];   /* "fingerprint X from FILE", for messages */
    bool handshaken;            /* the DEALER's handshake with groupd succeeded */
    bool connected;             /* its connection was accepted (groupd lives: a handshake
                                   slower than HELLO_RETRY_MS is waited for, not retried) */
    bool key_proven;            /* some handshake with our key succeeded: a later cut one
                                   is a groupd restarting or gone, not a key refused */
    bool refused;               /* groupd refused us (said once) */
    int cuts;                   /* first handshakes cut without detail (a refusal at
                                   GROUPS_CUTS_REFUSED) */
    bool noprog;                /* no groupd program was found to start (said once) */
    int32_t tok_base, tok_n;    /* the last block this object reserved ... */
    uint8_t tok[GD_TOKEN_SIZE]; /* ... and its token */
    bool have_want_tok;         /* gimpi_groups_set_tid_token gave the token to present */
    uint8_t want_tok[GD_TOKEN_SIZE];
    struct {
        uint32_t reqid;
        char *group;            /* a leave's group; NULL: a message-box put (its reply,
                                   known in advance, is only taken) */
    } deferred[MAX_DEFERRED];
    int mbox_quiet;             /* MBOX_PUTQs sent since the last deferred request: a
                                   flush first sends a PING behind them (their receipt) */
    uint32_t vmwait_reqid;      /* the manager's VMWAIT outstanding (0: none) ... */
    bool vm_have;               /* ... its reply, taken while waiting for another one */
    gd_multipart_t vm_mp;
    uint64_t seen;              /* causal stamp: the highest groupd version known here */
    uint64_t ev_through;        /* the highest version of an event read from the SUB socket */
    uint64_t gen;               /* raised by every change of the cache, seen or ev_through
                                   (gimpi_group_unchanged); starts apart per object */
    gimpi_groups_stamp_fn stamp_fn;     /* stamps that came with messages (or NULL) */
    void *stamp_arg;
    uint64_t n_stale;           /* cached answers refused because a stamp was newer */
    held_t *held, *held_tail;   /* events read, in version order, not applied yet */
    int64_t hold_ns;            /* GIMPI_GROUPS_HOLD_MS */
    void *watch;                /* pvm_notify's watches (gimpi_groups_notify.c), or NULL */
    bool watch_stale;           /* reconnected since: their ends are looked up again */
    void (*watch_free)(void *watch);    /* frees them (before the context goes) */
    void *mbox;                 /* copies of the task's own locked message-box entries
                                   (gimpi_groups_mbox.c), or NULL */
    void (*mbox_free)(void *mbox);      /* frees them */
    int status_ms;              /* GIMPI_STATUS_AFTER (0: no live status) */
    const gd_value_t *waiting;  /* a BARRIER, FREEZE or waiting MBOX_GET request's values
                                   while it waits (its words for the live status), else
                                   NULL */
    uint8_t rid[ROUTING_ID_LEN];        /* the DEALER's routing id */
    inflight_t inflight[INFLIGHT_MAX];  /* requests not answered yet, oldest first */
    int ninflight;
    uint32_t recv_awaited;              /* the last reply read answered this request in
                                           flight that a caller waits for (0: none) */
    gd_multipart_t early[EARLY_MAX];    /* such replies read by another wait, and */
    uint32_t early_reqid[EARLY_MAX];    /* their requests (groups_early_keep) */
    int nearly;
    int64_t outage_ms;                  /* GIMPI_GROUPD_OUTAGE_MS (0: no reconnection) */
    bool reconnecting;                  /* in groups_reconnect (not again from within) */
    bool probing;                       /* a reconnection's LOOKUP of itself: not kept in flight */
    int (*reconnect)(gimpi_groups_t *self);     /* groups_reconnect (a pointer: the
                                                   monitor's reader comes before it) */
    uint32_t nreconnects;               /* times groupd was reached again */
    uint32_t nopen;                     /* DEALERs opened (names their monitors apart) */
    int64_t outage_last_ms;             /* how long the last one took */
};

/*  Raises the highest groupd version this task knows of (and the cache's generation). */
static inline void groups_saw(gimpi_groups_t *self, uint64_t version)
{
    if (version > self->seen) {
        self->seen = version;
        self->gen++;
    }
}

/* gimpi_groups_events.c */

/*  1 when the monitor reports the connection to groupd closed (the object is then dead). */
int groups_check_monitor(gimpi_groups_t *self);

/*  Puts tid at inst of an entry, growing its slot table.  0 or -1. */
int groups_slot_set(centry_t *e, int32_t inst, int32_t tid);

/*  Reads every event queued; applies the ones due (up to what the task has seen, and the
 *  ones held long enough). */
void groups_drain(gimpi_groups_t *self);

/*  Waits (bounded) until a current entry of group has reached `version` (else marks it
 *  for a snapshot). */
void groups_sync(gimpi_groups_t *self, const char *group, uint64_t version);

/*  Starts watching a group: the SUB socket when first needed, a SUBSCRIBING entry, the
 *  subscription.  0, or -1 (no entry: a later query tries again). */
int groups_watch(gimpi_groups_t *self, const char *group, size_t len);

/*  After a reconnection: the events held back are dropped and every cache entry waits for
 *  its topic's MARK from the new groupd, then a snapshot. */
void groups_events_resync(gimpi_groups_t *self);
/*  A SUB socket on groupd's event endpoint (pub_endpoint), secured with the task's key,
 *  nothing subscribed; NULL when it cannot be made. */
void *groups_sub_new(gimpi_groups_t *self);
/*  groupd's event endpoint changed (another groupd took over): the SUB socket goes to
 *  the new one and every cached group is subscribed again. */
void groups_events_reopen(gimpi_groups_t *self);

/*  Frees the cache's entries and table and the events held back. */
void groups_events_free(gimpi_groups_t *self);

/* gimpi_groups.c */

/*  Connects and says HELLO (starting a groupd when none serves our ipc endpoint).  0, or
 *  GIMPI_ESYSERR (and the object is dead). */
int groups_connect(gimpi_groups_t *self);

/*  Connects and registers (as the tid set by gimpi_groups_set_tid, if any).  0, or an error
 *  (and the object is dead). */
int groups_ready(gimpi_groups_t *self);

/*  Receives one message from the DEALER (flags as gd_multipart_recv); a reply is no longer
 *  in flight.  0 or -1. */
int groups_recv(gimpi_groups_t *self, gd_multipart_t *mp, int flags);
/*  The requests in flight (gimpi_groups_inflight.c): kept until answered (the oldest quiet
 *  put goes when the table is full), done with the replyless ones before them when a
 *  reply comes, sent again after a reconnection, freed. */
void groups_inflight_add(gimpi_groups_t *self, uint32_t reqid, uint8_t cmd,
                         const gd_frame_t *frames, int n);
bool groups_inflight_done(gimpi_groups_t *self, uint32_t reqid, bool quiet_too);
/*  A reply to a request that a caller further out waits for (a barrier), come while an
 *  inner wait (a reconnection's HELLO) reads the socket: kept for it (true), else false.
 *  groups_early_take hands reqid's back (true) to its s_await. */
bool groups_early_keep(gimpi_groups_t *self, gd_multipart_t *mp);
bool groups_early_take(gimpi_groups_t *self, uint32_t reqid, gd_multipart_t *mp);
void groups_inflight_resend(gimpi_groups_t *self);
void groups_inflight_free(gimpi_groups_t *self);
/*  Sends a request's frames on the DEALER, never blocking for ever (a lost connection is
 *  reconnected meanwhile, which sends the in_flight ones again).  0, or -1: gone. */
int groups_send_frames(gimpi_groups_t *self, const gd_frame_t *frames, int n, bool in_flight);

/*  groupd went away (the DEALER's connection closed): waits, bounded by the outage budget,
 *  for one to serve our endpoint again (on ipc starting one, which replays the journal,
 *  when nobody else does), connects anew with the same routing id, says HELLO, sends the
 *  requests in flight again with their ids, and sends the cache back to its snapshots.
 *  0, or -1 (the object is then dead). */
int groups_reconnect(gimpi_groups_t *self);

/*  Sends a request without waiting.  Returns its request id (> 0) or an error. */
int64_t groups_send_request(gimpi_groups_t *self, uint8_t cmd, const gd_value_t *values,
                            int nvalues);

/*  Sends a request and waits for its reply (timeout_ms < 0: as long as groupd lives).
 *  Returns the reply's status or an error; with mp_out the reply is kept for the caller,
 *  who closes it. */
int groups_request(gimpi_groups_t *self, uint8_t cmd, const gd_value_t *values, int nvalues,
                   int timeout_ms, gd_multipart_t *mp_out, gd_msg_t *reply_out);

/*  Waits until groupd has answered every deferred leave (bounded).  0, or GIMPI_ESYSERR
 *  (and the object is dead). */
int groups_flush_leaves(gimpi_groups_t *self);
/*  The same until at most keep are unanswered (the oldest are answered first: groupd
 *  answers in order). */
int groups_flush_until(gimpi_groups_t *self, int keep);
/*  Defers a PING behind the message-box puts sent without a reply, if any, so that its
 *  answer says groupd has them (when a deferred slot is free).  0 or an error. */
int groups_receipt(gimpi_groups_t *self);

/*  If mp answers a deferred leave, applies it and returns 1; else 0. */
int groups_take_deferred(gimpi_groups_t *self, const gd_multipart_t *mp);

/*  If mp answers the outstanding VMWAIT, keeps it for gimpi_groups_mgr_next (taking it
 *  over: mp is left empty) and returns 1; else 0. */
int groups_take_vmwait(gimpi_groups_t *self, gd_multipart_t *mp);

/* gimpi_groups_start.c */

/*  1 when something accepts connections on the ipc path of the endpoint. */
int groups_ipc_alive(const char *endpoint);

/*  Starts a groupd on the object's (ipc) endpoint and waits for its endpoint line.  0 or
 *  -1; in a reconnection it only replays the journal: -2 when there is none. */
int groups_start_groupd(gimpi_groups_t *self);

#pragma GCC visibility pop

#endif
