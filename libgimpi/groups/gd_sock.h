/*  gd_sock.h — the one factory of the control plane's ZeroMQ sockets.
 *
 *  Every ZeroMQ socket of groupd, of a task's groups client, of gimpi-stat and of the
 *  tests is made by gd_sock_new from a settings struct (gd_sock_opts_t): the socket kind,
 *  the endpoint and whether to bind or connect, the routing id, linger, the per-peer queue
 *  limits, the largest message accepted, the ZMTP handshake and heartbeat timers, the
 *  kind-specific switches, the security mechanism and an optional socket monitor.  All of
 *  them are applied here and nowhere else, each return is checked, and a failure gives
 *  NULL with a message that says which step failed.  gd_sock_opts_init fills the settings
 *  of a role (groupd's ROUTER, a task's DEALER, ...) with the values named below, which
 *  are the control plane's limits; a caller changes only what it must.
 *
 *  Security lives here too.  On tcp:// every socket speaks CURVE: groupd's sockets are
 *  CURVE servers with the key pair gimpi_key_keypair(key, GD_SOCK_KEYPAIR_SERVER), and
 *  its ZAP handler (gd_zap_t, served in groupd's own loop) admits only clients whose
 *  public key is that of gimpi_key_keypair(key, GD_SOCK_KEYPAIR_CLIENT): holders of the
 *  key.  On ipc:// the socket file lies in the private 0700 runtime directory, and the
 *  same ZAP handler admits only peers of groupd's own uid (libzmq hands the handler the
 *  peer's SO_PEERCRED as "localhost:UID:GID:PID").  Refused peers are logged at most
 *  GD_RATELOG_PER_S lines a second (gd_ratelog_t), then one summary line.  A client
 *  watches its socket monitor for a refused handshake (gd_sock_refusal) and fails at once
 *  with one clear line instead of waiting for a timeout.  doc/groupd-protocol.md
 *  ("Sockets and their limits", "Authentication") lists the sockets and the limits.
 */
#ifndef GIMPI_GD_SOCK_H
#define GIMPI_GD_SOCK_H

#include "base/gimpi_key.h"
#include "base/gimpi_ratelog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*  Named defaults.  Where one is libzmq's own default, the factory still sets it, so that
 *  every limit is visible here. */
enum {
    GD_SOCK_LINGER_MS = 0,          /* every socket: closing drops unsent messages at once */
    GD_SOCK_HWM = 1000,             /* libzmq's queue limit per peer (messages), each way */
    /* groupd's ROUTER, both ways, per peer.  A task has at most a few requests in flight
       (one call, up to 16 deferred leaves, its barrier), so 256 never throttles a real
       task; a peer that sends requests and never reads the replies costs at most 256
       replies queued (then the ROUTER drops them) plus the kernel's socket buffers, and
       one that floods requests is held back by TCP after 256 unread ones. */
    GD_SOCK_GROUPD_HWM = 256,
    /* groupd's XPUB (send, per subscriber): membership events (about 80 bytes + the
       group name) queued for a task that does not read them; beyond it they are dropped
       and the task's cache refreshes itself from a SNAPSHOT when it sees the gap. */
    GD_SOCK_GROUPD_PUB_HWM = 10000,
    GD_SOCK_SUB_RCVHWM = 0,         /* a task's event socket: no limit (it trusts groupd) */
    GD_SOCK_MAXMSGSIZE = -1,        /* largest incoming frame of a client: no limit */
    /* largest incoming frame at groupd (libzmq checks each frame, before buffering it):
       a request's largest frame is a group name (GD_MAX_NAME, 4096 bytes); a bigger frame
       ends the connection at once, so a 512 MiB frame costs groupd nothing.  groupd
       --max-msg-size changes it. */
    GD_SOCK_GROUPD_MAXMSGSIZE = 64 * 1024,
    GD_SOCK_HANDSHAKE_MS = 30000,   /* a client's ZMTP handshake must finish in this */
    /* groupd: a connection that has not finished its ZMTP (and CURVE) handshake within
       this is closed, so half-open strangers hold a descriptor only this long */
    GD_SOCK_GROUPD_HANDSHAKE_MS = 5000,
    /* CURVE key pairs derived from the key (gimpi_key_keypair ids) */
    GD_SOCK_KEYPAIR_SERVER = 1,     /* groupd's sockets */
    GD_SOCK_KEYPAIR_CLIENT = 2,     /* every holder of the key connecting to groupd */
    GD_SOCK_KEYLEN = 32,            /* a CURVE key, binary */
    /* refused peers and malformed requests: at most this many log lines a second, then
       one line "... N more ... in the last second" */
    GD_RATELOG_PER_S = 5,
    /* groupd's ROUTER sends ZMTP heartbeats every GD_SOCK_GROUPD_HEARTBEAT_MS (groupd
       --heartbeat) and drops a peer silent for GD_SOCK_GROUPD_HEARTBEAT_TIMEOUTS intervals:
       a stopped task is gone within about 1 s.  No heartbeat TTL: tasks time groupd out by
       their own timeout; a TTL of 3 intervals made busy tasks on an overloaded machine (32
       on 2 cores) drop a live groupd. */
    /* groupd's listening sockets queue this many connections not yet accepted (the
       kernel caps it at net.core.somaxconn, 4096 on Debian 12).  libzmq's default of 100
       is too few when a job's tasks all start at once: a task's ipc connection to a full
       queue fails outright (1,000 tasks of t/groupd_scale on a loaded machine: 400 never
       connected within the 5 s of HELLO_TIMEOUT_MS) */
    GD_SOCK_GROUPD_BACKLOG = 4096,
    GD_SOCK_GROUPD_HEARTBEAT_MS = 250,
    GD_SOCK_GROUPD_HEARTBEAT_TIMEOUTS = 3,
    /* a task's DEALER pings groupd every second and takes it for gone after 5 s without
       traffic (a groupd that exits or is killed ends the connection, which is seen at
       once).  With 32 busy tasks on 2 cores, 1 s and even 1.5 s without a PONG happened
       (1 run in 6 of `gimpi-bench barrier 32`, a third of `reduce1int 32`), and the task
       then wrongly took a live groupd for dead; none in runs with 8 s. */
    GD_SOCK_TASK_HEARTBEAT_MS = 1000,
    GD_SOCK_TASK_HEARTBEAT_TIMEOUT_MS = 5000,
    /* a task's SUB tries again this often to reach a groupd that went away (libzmq's
       default is 100 ms): a groupd restarted from its journal has its subscribers back,
       and their caches current again, within some 10 ms of serving */
    GD_SOCK_TASK_RECONNECT_MS = 10,
    GD_SOCK_ERRLEN = 768,           /* room for any message of gd_sock_new */
};

/*  The sockets of the control plane, by role; gd_sock_opts_init fills a role's settings. */
typedef enum {
    GD_SOCK_GROUPD_ROUTER,          /* groupd: requests in, replies out; bound */
    GD_SOCK_GROUPD_XPUB,            /* groupd: membership events out (verbose); bound */
    GD_SOCK_TASK_DEALER,            /* a task's groups client: requests; connects; heartbeats */
    GD_SOCK_TASK_SUB,               /* a task's groups client: events; connects */
    GD_SOCK_TOOL_DEALER,            /* gimpi-stat and tests: one-off requests; connects */
    GD_SOCK_MONITOR_PAIR,           /* reads a socket monitor over inproc; connects */
} gd_sock_role_t;

/*  Security mechanisms.  NONE is ZMTP's NULL mechanism (ipc, and inproc monitors); CURVE
 *  authenticates and encrypts (tcp). */
typedef enum {
    GD_SOCK_MECH_NONE = 0,
    GD_SOCK_MECH_CURVE = 1,
} gd_sock_mech_t;

/*  The ZAP domain of groupd's sockets. */
#define GD_SOCK_ZAP_DOMAIN "gimpi-groupd"

/*  The security section of the settings: the mechanism, whether the socket is the CURVE
 *  server (groupd) or a client (tasks, tools), the socket's key pair, the server's public
 *  key for clients, and the ZAP domain (bound sockets: groupd's ZAP handler is asked
 *  about every peer; NULL: no ZAP).  gd_sock_secure fills it from the key. */
typedef struct {
    gd_sock_mech_t mechanism;
    bool server;
    uint8_t public_key[GD_SOCK_KEYLEN], secret_key[GD_SOCK_KEYLEN];
    uint8_t server_key[GD_SOCK_KEYLEN];
    const char *zap_domain;
} gd_sock_security_t;

/*  Everything gd_sock_new applies to a socket. */
typedef struct {
    int type;                       /* ZMQ_ROUTER, ZMQ_XPUB, ZMQ_DEALER, ZMQ_SUB or ZMQ_PAIR */
    const char *endpoint;           /* where to bind or connect (required) */
    bool bind;                      /* bind (groupd) rather than connect (everyone else) */
    const void *routing_id;         /* ZMQ_ROUTING_ID; NULL: libzmq picks one (all today) */
    size_t routing_id_len;
    int linger_ms;                  /* ZMQ_LINGER */
    int sndhwm, rcvhwm;             /* ZMQ_SNDHWM, ZMQ_RCVHWM: messages per peer, 0 = none */
    int64_t maxmsgsize;             /* ZMQ_MAXMSGSIZE: bytes, -1 = no limit */
    int handshake_ms;               /* ZMQ_HANDSHAKE_IVL, 0 = no limit */
    int heartbeat_ivl_ms;           /* ZMQ_HEARTBEAT_IVL; 0: no heartbeats (timeout, ttl unset) */
    int heartbeat_timeout_ms;       /* ZMQ_HEARTBEAT_TIMEOUT */
    int heartbeat_ttl_ms;           /* ZMQ_HEARTBEAT_TTL; 0: left unset */
    bool immediate;                 /* ZMQ_IMMEDIATE: queue only to completed connections */
    bool router_mandatory;          /* ZMQ_ROUTER_MANDATORY (ROUTER only) */
    bool xpub_verbose;              /* ZMQ_XPUB_VERBOSE (XPUB only): every subscription up */
    int reconnect_ivl_ms;           /* ZMQ_RECONNECT_IVL; 0: libzmq's (100 ms); -1: never */
    int backlog;                    /* ZMQ_BACKLOG (bound sockets); 0: libzmq's (100) */
    int monitor_events;             /* ZMQ_EVENT_* mask to monitor; 0: no monitor */
    const char *monitor_endpoint;   /* the monitor's inproc endpoint: a name new to the
                                       context (libzmq frees a closed monitor's name only
                                       when it reaps the socket, some time later) */
    gd_sock_security_t security;
} gd_sock_opts_t;

/*  Fills *opts with the settings of a role and the given endpoint. */
void gd_sock_opts_init(gd_sock_opts_t *opts, gd_sock_role_t role, const char *endpoint);

/*  True when an endpoint needs the key (tcp://). */
bool gd_sock_needs_key(const char *endpoint);

/*  Fills opts->security for opts->endpoint: on tcp:// CURVE, as the server when opts->bind,
 *  with the key pairs derived from key (which must then be given); a bound ipc:// socket
 *  gets the ZAP domain (the handler checks the peer's uid); anything else stays NONE.
 *  0, or -1 with a message (no key for a tcp endpoint; a libzmq built without CURVE). */
int gd_sock_secure(gd_sock_opts_t *opts, const gimpi_key_t *key, char *err, size_t errsize);

/*  Loads the key a client uses towards a tcp:// groupd (gimpi_key_default) and writes
 *  "fingerprint X from WHERE" into desc (descsize bytes, may be NULL) for messages.
 *  0, or -1 with a message. */
int gd_sock_client_key(gimpi_key_t *key, char *desc, size_t descsize, char *err,
                       size_t errsize);

/*  Monitor events a client watches for a refused handshake. */
#define GD_SOCK_HANDSHAKE_EVENTS                                                        \
    (ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH                     \
     | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)

/*  Why a monitor event means that groupd refused us, or NULL when it does not: the ZAP
 *  handler said no (curve: "not the same key"; ipc: "not its user"), or the handshake
 *  failed (a peer of another key cannot even decrypt our greeting).  For a connection
 *  that never completed a handshake, a DISCONNECTED counts as a refusal too (`handshaken`
 *  false). */
const char *gd_sock_refusal(int event, int value, bool handshaken, bool curve);

/*  A one-off client of groupd (gimpi-stat, tests): a GD_SOCK_TOOL_DEALER connected to ep,
 *  secured for it (the user's key loaded when ep is tcp; its "fingerprint X from FILE"
 *  into desc, which may be NULL), with a monitor for refusals in *monitor_p (NULL: none).
 *  NULL with a message in err. */
void *gd_sock_tool_new(void *zctx, const char *ep, void **monitor_p, char *desc,
                       size_t descsize, char *err, size_t errsize);

/*  Waits up to timeout_ms for a message on a tool socket: 1 when one is there, 0 on
 *  timeout, -1 when groupd refused us (the reason in err). */
int gd_sock_tool_wait(void *sock, void *monitor, int timeout_ms, bool curve, char *err,
                      size_t errsize);

/*  Makes a socket in zctx, applies every setting of opts, starts its monitor (when
 *  opts->monitor_events is set: the PAIR that reads it, a GD_SOCK_MONITOR_PAIR, goes to
 *  *monitor_p, which must then be given), and binds or connects last, so that the monitor
 *  sees the first connection.  Returns the socket, or NULL with nothing left open, errno
 *  set, and a message in err (errsize bytes, at most GD_SOCK_ERRLEN needed; err may be
 *  NULL) such as "cannot bind ROUTER to ipc:///x/gd: No such file or directory". */
void *gd_sock_new(void *zctx, const gd_sock_opts_t *opts, void **monitor_p, char *err,
                  size_t errsize);

/*  Closes a socket made by gd_sock_new and sets *sock_p to NULL; with monitor_p, first
 *  stops the socket's monitor and closes its PAIR too.  Either may point to NULL. */
void gd_sock_destroy(void **sock_p, void **monitor_p);

/*  Subscribes a SUB socket to a topic (a prefix of the first frame).  0, or -1 with errno. */
int gd_sock_subscribe(void *sub, const void *topic, size_t len);

/*  The endpoint a socket was last bound or connected to (with the port the system chose
 *  for a "tcp://host:*" bind) into buf; returns buf, or NULL when it does not fit. */
const char *gd_sock_last_endpoint(void *sock, char *buf, size_t size);

/*  The name of a ZeroMQ socket type ("ROUTER", ...), "?" for others. */
const char *gd_sock_type_name(int type);

/* ------------------------------------------------------------------ rate-limited logs */

/*  At most GD_RATELOG_PER_S lines a second for one kind of event; the rest are counted
 *  (base/gimpi_ratelog.h) and summed up in one line when the second is over (at the next
 *  event or at gd_ratelog_flush). */
typedef struct {
    const char *what;           /* "refused peers", for the summary line */
    gimpi_ratelog_t count;      /* per_sec 0 is taken for GD_RATELOG_PER_S */
} gd_ratelog_t;

/*  Counts an event at now_ms; true when its line may be printed.  The summary of the
 *  previous second, if any, is printed to out first (prefix: e.g. "groupd"). */
bool gd_ratelog_ok(gd_ratelog_t *rl, int64_t now_ms, FILE *out, const char *prefix);
/*  Prints a pending summary (when the second is over). */
void gd_ratelog_flush(gd_ratelog_t *rl, int64_t now_ms, FILE *out, const char *prefix);
/*  Milliseconds until a held-back summary is due (then call gd_ratelog_flush), -1 when
 *  none is pending: a loop sleeps at most this long, so the summary comes on time. */
int gd_ratelog_due_ms(const gd_ratelog_t *rl, int64_t now_ms);

/* ------------------------------------------------------------------ the ZAP handler */

/*  groupd's ZAP handler: a REP socket bound to inproc://zeromq.zap.01 of groupd's
 *  context, read in groupd's loop (gd_zap_fd, gd_zap_serve): no thread of its own. */
typedef struct gd_zap_t gd_zap_t;

/*  Binds the handler in zctx.  key: the clients' public key is derived from it (NULL: no
 *  CURVE client is admitted).  uid: the only peer uid admitted on ipc.  log: where the
 *  refusals go (rate-limited).  NULL with a message on failure. */
gd_zap_t *gd_zap_new(void *zctx, const gimpi_key_t *key, unsigned uid, FILE *log, char *err,
                     size_t errsize);
void gd_zap_destroy(gd_zap_t **self_p);
/*  The socket (for ZMQ_EVENTS) and its notification fd (for poll). */
void *gd_zap_socket(gd_zap_t *self);
/*  Answers every ZAP request queued.  Returns how many were answered. */
int gd_zap_serve(gd_zap_t *self);
/*  Counters: peers admitted and refused so far. */
void gd_zap_counts(gd_zap_t *self, uint64_t *admitted, uint64_t *refused);
/*  The refusals' log: its pending summary is printed by gd_ratelog_flush. */
gd_ratelog_t *gd_zap_log(gd_zap_t *self);
#endif
