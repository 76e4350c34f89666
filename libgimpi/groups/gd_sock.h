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
 *  are the values the control plane has always used; a caller changes only what it must.
 *  Authentication (CURVE with a ZAP handler) and tighter limits go into this file when
 *  they come.  doc/groupd-protocol.md ("Sockets and their limits") lists the sockets.
 */
#ifndef GIMPI_GD_SOCK_H
#define GIMPI_GD_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*  Named defaults.  Each is the value in use before the factory existed; where it is
 *  libzmq's own default, the factory still sets it, so that every limit is visible here. */
enum {
    GD_SOCK_LINGER_MS = 0,          /* every socket: closing drops unsent messages at once */
    GD_SOCK_HWM = 1000,             /* libzmq's queue limit per peer (messages), each way */
    GD_SOCK_GROUPD_HWM = 100000,    /* groupd's ROUTER (both ways) and XPUB (send) */
    GD_SOCK_SUB_RCVHWM = 0,         /* a task's event socket: no limit */
    GD_SOCK_MAXMSGSIZE = -1,        /* largest incoming message in bytes; -1: no limit */
    GD_SOCK_HANDSHAKE_MS = 30000,   /* a connection must finish its ZMTP handshake in this */
    /* groupd's ROUTER sends ZMTP heartbeats every GD_SOCK_GROUPD_HEARTBEAT_MS (groupd
       --heartbeat) and drops a peer silent for GD_SOCK_GROUPD_HEARTBEAT_TIMEOUTS intervals:
       a stopped task is gone within about 1 s.  No heartbeat TTL: tasks time groupd out by
       their own timeout; a TTL of 3 intervals made busy tasks on an overloaded machine (32
       on 2 cores) drop a live groupd. */
    GD_SOCK_GROUPD_HEARTBEAT_MS = 250,
    GD_SOCK_GROUPD_HEARTBEAT_TIMEOUTS = 3,
    /* a task's DEALER pings groupd every second and takes it for gone after 5 s without
       traffic (a groupd that exits or is killed ends the connection, which is seen at
       once).  With 32 busy tasks on 2 cores, 1 s and even 1.5 s without a PONG happened
       (1 run in 6 of `gimpi-bench barrier 32`, a third of `reduce1int 32`), and the task
       then wrongly took a live groupd for dead; none in runs with 8 s. */
    GD_SOCK_TASK_HEARTBEAT_MS = 1000,
    GD_SOCK_TASK_HEARTBEAT_TIMEOUT_MS = 5000,
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

/*  Security mechanisms.  NONE is ZMTP's NULL mechanism: no authentication, no encryption,
 *  which is what every socket uses today. */
typedef enum {
    GD_SOCK_MECH_NONE = 0,
} gd_sock_mech_t;

/*  The security section of the settings.  This is where CURVE goes: the mechanism, whether
 *  the socket is the CURVE server (groupd) or a client (tasks, tools), the socket's key
 *  pair, the server's public key for clients, and the ZAP domain under which groupd's ZAP
 *  handler admits peers.  Only NONE exists; any other value is refused. */
typedef struct {
    gd_sock_mech_t mechanism;
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
    int monitor_events;             /* ZMQ_EVENT_* mask to monitor; 0: no monitor */
    const char *monitor_endpoint;   /* the monitor's inproc endpoint: a name new to the
                                       context (libzmq frees a closed monitor's name only
                                       when it reaps the socket, some time later) */
    gd_sock_security_t security;
} gd_sock_opts_t;

/*  Fills *opts with the settings of a role and the given endpoint. */
void gd_sock_opts_init(gd_sock_opts_t *opts, gd_sock_role_t role, const char *endpoint);

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
#endif
