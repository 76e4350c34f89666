/*  gd_serve.h — groupd's request handler: everything between a request read from the
 *  ROUTER and its reply, kept apart from the daemon's set-up and loop (groupd.c) so that
 *  the fuzzer can drive it (fuzz/fuzz_gd_serve.c).
 *
 *  A request's frames are decoded by gd_proto, checked against the connection it came on
 *  (its quota of requests before it registers) and answered through the registry; the
 *  replies and events leave on the ROUTER and XPUB sockets of the groupd_t.  Connections
 *  are known from the ROUTER's socket monitor (ACCEPTED, DISCONNECTED); a registered
 *  task is tied to its connection, and the end of that connection is the task's exit.
 *  Malformed requests and quota refusals are logged at most GD_RATELOG_PER_S lines a
 *  second, with or without --verbose.
 */
#ifndef GIMPI_GD_SERVE_H
#define GIMPI_GD_SERVE_H

#include "groupd/gd_registry.h"
#include "groupd/gd_vm.h"
#include "groupd/gd_mbox.h"
#include "groupd/gd_guard.h"
#include "groupd/gd_status.h"
#include "groupd/gd_journal.h"
#include "groupd/gd_dedup.h"
#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "base/gd_hash.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum {
    /* requests per second a connection may make while it has not registered (beyond:
       GIMPI_EOUTOFRES for the rest of that second).  gimpirun needs 2 (HELLO, RESERVE),
       gimpi-stat 2; a task's verifier of introductions, which never registers, makes
       one LOOKUP per new peer, at most GIMPI_MAX_DYN_CONNS (512) at once.  A rate, not a
       lifetime count, so that long-lived tools and verifiers keep working (groupd
       --max-unregistered) */
    GD_SERVE_UNREG_REQUESTS = 1000,
};

/*  Bytes of large replies (STAT records, SNAPSHOT blobs) handed to libzmq and not yet
 *  written to a peer's connection, over every peer: beyond it STAT and SNAPSHOT get
 *  GIMPI_EOUTOFRES until peers read.  With the ROUTER's queue of 256 small replies per
 *  peer (GD_SOCK_GROUPD_HWM), this bounds what peers that never read can cost groupd. */
#define GD_SERVE_INFLIGHT_BYTES ((size_t)8 << 20)

/*  Bytes of distinct topics subscribed on the XPUB at most (groupd --max-sub-bytes).
 *  libzmq 4.3 keeps subscriptions in a trie of one node per byte, some 35 bytes each
 *  (measured: 1,000 subscriptions of 4 KiB took 137 MB), and its XPUB does not say which
 *  connection a subscription came from; beyond this bound groupd shuts down the event
 *  connection whose peer has sent the most bytes (TCP_INFO), whose topics then go, at
 *  most one every GD_SERVE_SHED_MS (a task whose connection is shut down reconnects and
 *  refreshes its cache from a SNAPSHOT).  2 MiB: 500 groups of 4 KiB names, or 32,000
 *  of 64 bytes; some 70 MB of trie at worst. */
#define GD_SERVE_SUB_BYTES ((size_t)2 << 20)
enum { GD_SERVE_SHED_MS = 200 };

/*  One live connection of the ROUTER (by fd, from the monitor). */
/*  The longest routing id kept for a connection that a replayed task came back on. */
#define GD_CONN_RID_MAX 32

typedef struct {
    uint64_t id;                /* serial number, never reused (the registry's owner id) */
    int32_t tid;                /* the task registered on it, 0 while none */
    uint32_t unreg_requests;    /* requests made while not registered, in this second */
    int64_t unreg_since_ms;     /* when that second began */
    uint8_t rid[GD_CONN_RID_MAX];   /* the routing id of a replayed task that came back on
                                       it (s_reattach), else rid_len 0 */
    size_t rid_len;
} gd_conn_t;

/*  The longest topic of an event: 'G' + a group name. */
#define GD_TOPIC_MAX (1 + GD_MAX_NAME)

/*  The daemon's state. */
typedef struct {
    void *zctx, *router, *xpub, *monitor;
    void *pub_monitor;          /* the XPUB's monitor (connections for the guard), or NULL */
    gd_guard_t *guard;          /* handshake floods, memory trim (gd_guard.h), or NULL */
    int max_handshakes;         /* --max-handshakes (0: GD_GUARD_MAX_PENDING) */
    gd_zap_t *zap;
    gd_registry_t *reg;
    gd_vm_t *vm;                /* host table, manager, request relay (gd_vm.h) */
    gd_mbox_t *mbox;            /* the message box (gd_mbox.h) */
    gd_status_t *status;        /* blocked tasks' statuses, the live view (gd_status.h) */
    gd_mbox_limits_t mbox_lim;  /* its bounds (0: defaults), set before gd_serve_init */
    gd_hash_t *fd_tid;          /* connection fd -> tid registered on it */
    gd_hash_t *tid_fd;          /* tid -> connection fd */
    gd_hash_t *marks;           /* topics owed a MARK: name -> malloc'ed name */
    gd_hash_t *fd_open;         /* live connections (ACCEPTED, not DISCONNECTED): fd -> gd_conn_t */
    gd_hash_t *subs;            /* topics the XPUB has subscribers for (gd_notify_watched) */
    uint32_t *subs_len;         /* how many of them are l bytes long, l <= GD_TOPIC_MAX */
    bool subs_all;              /* a subscription could not be noted: publish everything */
    size_t subs_bytes;          /* bytes of the distinct topics in subs (the XPUB's too) */
    size_t max_sub_bytes;       /* --max-sub-bytes (0: GD_SERVE_SUB_BYTES) */
    int64_t shed_ms;            /* when a subscriber was last shut down for it */
    uint64_t next_conn;         /* last connection serial given */
    char endpoint[512];
    char pub_endpoint[512];
    int pub_port;               /* --pub-port: the event port on tcp (0: any free port) */
    int lock_fd;
    int sig_fd;
    bool verbose;
    bool quiet;                 /* --quiet: no key fingerprint line (gimpirun's own) */
    bool foreground;
    bool launcher;              /* --launcher: a manager token, printed first (gd_vm.h) */
    bool witness;               /* --witness: takeovers and going on alone are granted by
                                   the launcher (gd_witness.h) */
    bool bound;                 /* our ipc socket files exist (we hold the lock) */
    uint64_t sock_id[2][2];     /* dev and inode of our ipc socket files (request, event)
                                   at bind: teardown removes only these very files */
    int heartbeat_ms;
    int idle_exit_ms;           /* 0: serve until killed */
    int64_t last_busy_ms;       /* last moment a task was registered or a request came */
    bool halted;                /* a HALT was answered: the loop ends after this round */
    int cpu;                    /* CPU for both threads: -1 none, -2 the one we start on */
    _Atomic size_t inflight;    /* bytes of large replies libzmq holds (GD_SERVE_INFLIGHT_BYTES) */
    int64_t maxmsgsize;         /* --max-msg-size (0: GD_SOCK_GROUPD_MAXMSGSIZE) */
    uint32_t max_unreg;         /* GD_SERVE_UNREG_REQUESTS or --max-unregistered */
    FILE *log;                  /* where refusals and malformed input are logged (stderr) */
    gd_ratelog_t bad_log;       /* malformed requests */
    gd_ratelog_t quota_log;     /* quota refusals */
    gd_ratelog_t hs_log;        /* failed handshakes (monitor) */
    /* the journal (gd_journal.h) and what goes into it (gd_record.h) */
    gd_journal_t *journal;      /* NULL: no journal (--no-journal, or tcp without --journal) */
    gd_dedup_t *dedup;          /* replies a restarted client may ask for again */
    bool replaying;             /* the journal is being replayed: no sends, no records */
    bool restarted;             /* state was replayed: requests may come a second time */
    gd_frame_t *replay_reply;   /* the recorded reply of the request being replayed */
    int replay_nreply;
    struct {                    /* the journaled request being handled */
        bool active, written;
        const gd_frame_t *frames;       /* routing id, then the request */
        int n;
        uint32_t reqid;
        uint8_t cmd;
        int32_t gone[8];                /* tasks its handling ended (JR_GONE after it) */
        int ngone;
    } jr;
    gd_hash_t *orphans;         /* routing id -> tid (0: not a task) of the clients replayed
                                   and not heard from since */
    int64_t orphan_deadline_ms; /* then the orphans are gone (0: none) */
    int reattach_ms;            /* --reattach: how long a replayed client has to come back */
    int64_t restarted_ms;       /* when the replay ended (0: not restarted) */
    const char *journal_file;   /* --journal (NULL: the default) */
    size_t journal_max;         /* --journal-max (0: GD_JOURNAL_DEFAULT_MAX) */
    bool no_journal;            /* --no-journal */
    bool restart_only;          /* --restart: a task's restart, only with state to replay */
    bool journal_failed;        /* a write failed: said once, journal closed */
    /* standby and terms (doc/reliability.md §3) */
    int32_t term;               /* ours: 1, one more at each takeover (JR_TERM) */
    int32_t hello_term;         /* the term in the HELLO being handled (0: none) */
    bool fenced;                /* a newer primary's term seen: the loop ends, exit 4 */
    struct gd_follow_t *follow; /* the standby following us (gd_follow.h), or NULL */
    struct gd_standby_t *standby;   /* a standby that took over: its FENCEs (gd_standby.h) */
    const char *standby_of;     /* --standby-of: the primary's endpoint */
} groupd_t;

/*  Fills the handler's part of a fresh groupd_t: the registry (with limits, NULL for the
 *  defaults), the virtual machine's relay, the hashes, the rate-limited logs (to log, may be NULL); 0 or -1. */
int gd_serve_init(groupd_t *self, FILE *log, const gd_registry_limits_t *limits);
/*  Frees what gd_serve_init made (the sockets are the caller's). */
void gd_serve_fini(groupd_t *self);


/*  Handles one request: frames[0] is the routing id, the rest the request; srcfd its
 *  connection (-1 unknown); truncated: it had more frames than were kept. */
void gd_serve_request(groupd_t *self, const gd_frame_t *frames, int nframes, bool truncated,
                      int srcfd);
/*  Reads one request from the ROUTER and handles it; false when there was none. */
bool gd_serve_request_next(groupd_t *self);
/*  Reads one subscription from the XPUB (a MARK becomes due); false when none. */
bool gd_serve_subscription(groupd_t *self);
/*  Publishes the MARKs due. */
void gd_serve_publish_marks(groupd_t *self);
/*  Prints the summaries of rate-limited logs whose second is over; returns the
 *  milliseconds until the next is due, -1 when none is pending. */
int gd_serve_flush_logs(groupd_t *self);
/*  Handles every monitor event queued (connections accepted and ended). */
void gd_serve_drain_monitor(groupd_t *self);
/*  Handles every event queued on the XPUB's monitor (the guard's connections). */
void gd_serve_drain_pub_monitor(groupd_t *self);

/*  Default of --reattach: a client replayed from the journal that has not come back
 *  within this is taken for gone (its task exits; a manager's place is free again) unless
 *  its process still runs on this machine.  Twice the clients' outage budget
 *  (GIMPI_GROUPD_OUTAGE_MS). */
enum { GD_SERVE_REATTACH_MS = 10000 };
/*  After it, a replayed task whose process still runs (it has made no group call since the
 *  restart) is looked at again this often, and is gone once its process is. */
enum { GD_SERVE_ORPHAN_CHECK_MS = 1000 };

/*  A task is gone for a reason no journaled request records (JR_GONE replayed). */
void gd_serve_task_gone(groupd_t *self, int32_t tid);
/*  After a replay: every client of the registry and the table of replies is an orphan
 *  until it makes a request; returns how many there are. */
size_t gd_serve_orphans_begin(groupd_t *self);
/*  Milliseconds until the orphans are due (-1: none); at 0 they are taken for gone. */
int gd_serve_orphans_due_ms(groupd_t *self);
void gd_serve_expire_orphans(groupd_t *self);

#endif
