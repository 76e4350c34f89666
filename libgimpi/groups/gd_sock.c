/*  gd_sock.c — the one factory of the control plane's ZeroMQ sockets (see gd_sock.h).
 *
 *  gd_sock_new creates the socket, applies every setting of a gd_sock_opts_t in one
 *  function (s_apply), checks each zmq_setsockopt, starts the optional socket monitor,
 *  then binds or connects.  Any failure closes what was opened and reports the step in the
 *  caller's buffer; nothing is kept between calls.
 */
#include "config.h"
#include "groups/gd_sock.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

/*  Fills a role's settings: today's values, named in gd_sock.h. */
void gd_sock_opts_init(gd_sock_opts_t *opts, gd_sock_role_t role, const char *endpoint)
{
    assert(opts);
    *opts = (gd_sock_opts_t){
        .endpoint = endpoint,
        .linger_ms = GD_SOCK_LINGER_MS,
        .sndhwm = GD_SOCK_HWM,
        .rcvhwm = GD_SOCK_HWM,
        .maxmsgsize = GD_SOCK_MAXMSGSIZE,
        .handshake_ms = GD_SOCK_HANDSHAKE_MS,
        .security = { .mechanism = GD_SOCK_MECH_NONE },
    };
    switch (role) {
    case GD_SOCK_GROUPD_ROUTER:
        opts->type = ZMQ_ROUTER;
        opts->bind = true;
        opts->sndhwm = opts->rcvhwm = GD_SOCK_GROUPD_HWM;
        opts->heartbeat_ivl_ms = GD_SOCK_GROUPD_HEARTBEAT_MS;
        opts->heartbeat_timeout_ms = GD_SOCK_GROUPD_HEARTBEAT_MS
                                     * GD_SOCK_GROUPD_HEARTBEAT_TIMEOUTS;
        break;
    case GD_SOCK_GROUPD_XPUB:
        opts->type = ZMQ_XPUB;
        opts->bind = true;
        opts->sndhwm = GD_SOCK_GROUPD_HWM;
        opts->xpub_verbose = true;
        break;
    case GD_SOCK_TASK_DEALER:
        opts->type = ZMQ_DEALER;
        opts->heartbeat_ivl_ms = GD_SOCK_TASK_HEARTBEAT_MS;
        opts->heartbeat_timeout_ms = GD_SOCK_TASK_HEARTBEAT_TIMEOUT_MS;
        break;
    case GD_SOCK_TASK_SUB:
        opts->type = ZMQ_SUB;
        opts->rcvhwm = GD_SOCK_SUB_RCVHWM;
        break;
    case GD_SOCK_TOOL_DEALER:
        opts->type = ZMQ_DEALER;
        break;
    case GD_SOCK_MONITOR_PAIR:
        opts->type = ZMQ_PAIR;
        break;
    }
}

/*  The name of a socket type. */
const char *gd_sock_type_name(int type)
{
    switch (type) {
    case ZMQ_ROUTER: return "ROUTER";
    case ZMQ_XPUB: return "XPUB";
    case ZMQ_DEALER: return "DEALER";
    case ZMQ_SUB: return "SUB";
    case ZMQ_PAIR: return "PAIR";
    default: return "?";
    }
}

/*  Writes a message into err (if any), keeping errno.  Returns -1. */
static int s_fail(char *err, size_t errsize, const char *fmt, ...)
{
    int saved = errno;
    if (err && errsize) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsize, fmt, ap);
        va_end(ap);
    }
    errno = saved;
    return -1;
}

/*  Sets one option of size len; on failure a message naming it.  0 or -1. */
static int s_set(void *sock, int type, int option, const char *name, const void *value,
                 size_t len, long long shown, char *err, size_t errsize)
{
    if (zmq_setsockopt(sock, option, value, len) == 0)
        return 0;
    return s_fail(err, errsize, "%s: cannot set %s to %lld: %s", gd_sock_type_name(type), name,
                  shown, zmq_strerror(errno));
}

/*  Sets one int option. */
static int s_set_int(void *sock, int type, int option, const char *name, int value, char *err,
                     size_t errsize)
{
    return s_set(sock, type, option, name, &value, sizeof value, value, err, errsize);
}

/*  Applies every setting of opts to a fresh socket.  0 or -1 with a message. */
static int s_apply(void *sock, const gd_sock_opts_t *o, char *err, size_t errsize)
{
    int t = o->type;
    if (o->security.mechanism != GD_SOCK_MECH_NONE) {
        errno = EINVAL;
        return s_fail(err, errsize, "%s: unknown security mechanism %d", gd_sock_type_name(t),
                      (int)o->security.mechanism);
    }
    if (o->routing_id && o->routing_id_len
        && s_set(sock, t, ZMQ_ROUTING_ID, "ZMQ_ROUTING_ID", o->routing_id, o->routing_id_len,
                 (long long)o->routing_id_len, err, errsize) < 0)
        return -1;
    if (s_set_int(sock, t, ZMQ_LINGER, "ZMQ_LINGER", o->linger_ms, err, errsize) < 0
        || s_set_int(sock, t, ZMQ_SNDHWM, "ZMQ_SNDHWM", o->sndhwm, err, errsize) < 0
        || s_set_int(sock, t, ZMQ_RCVHWM, "ZMQ_RCVHWM", o->rcvhwm, err, errsize) < 0
        || s_set(sock, t, ZMQ_MAXMSGSIZE, "ZMQ_MAXMSGSIZE", &o->maxmsgsize,
                 sizeof o->maxmsgsize, (long long)o->maxmsgsize, err, errsize) < 0
        || s_set_int(sock, t, ZMQ_HANDSHAKE_IVL, "ZMQ_HANDSHAKE_IVL", o->handshake_ms, err,
                     errsize) < 0
        || s_set_int(sock, t, ZMQ_IMMEDIATE, "ZMQ_IMMEDIATE", o->immediate, err, errsize) < 0)
        return -1;
    if (o->heartbeat_ivl_ms > 0
        && (s_set_int(sock, t, ZMQ_HEARTBEAT_IVL, "ZMQ_HEARTBEAT_IVL", o->heartbeat_ivl_ms,
                      err, errsize) < 0
            || (o->heartbeat_timeout_ms > 0
                && s_set_int(sock, t, ZMQ_HEARTBEAT_TIMEOUT, "ZMQ_HEARTBEAT_TIMEOUT",
                             o->heartbeat_timeout_ms, err, errsize) < 0)
            || (o->heartbeat_ttl_ms > 0
                && s_set_int(sock, t, ZMQ_HEARTBEAT_TTL, "ZMQ_HEARTBEAT_TTL",
                             o->heartbeat_ttl_ms, err, errsize) < 0)))
        return -1;
    if (t == ZMQ_ROUTER
        && s_set_int(sock, t, ZMQ_ROUTER_MANDATORY, "ZMQ_ROUTER_MANDATORY", o->router_mandatory,
                     err, errsize) < 0)
        return -1;
    if (t == ZMQ_XPUB
        && s_set_int(sock, t, ZMQ_XPUB_VERBOSE, "ZMQ_XPUB_VERBOSE", o->xpub_verbose, err,
                     errsize) < 0)
        return -1;
    return 0;
}

/*  Makes, configures, monitors and attaches a socket. */
void *gd_sock_new(void *zctx, const gd_sock_opts_t *opts, void **monitor_p, char *err,
                  size_t errsize)
{
    assert(zctx);
    assert(opts);
    const char *name = gd_sock_type_name(opts->type);
    if (!strcmp(name, "?") || !opts->endpoint || (opts->monitor_events && !monitor_p)
        || (opts->monitor_events && !opts->monitor_endpoint)) {
        errno = EINVAL;
        s_fail(err, errsize, "%s socket: %s", name,
               !strcmp(name, "?") ? "unsupported socket type"
               : !opts->endpoint  ? "no endpoint"
                                  : "a monitor needs an endpoint and a place for its PAIR");
        return NULL;
    }
    void *sock = zmq_socket(zctx, opts->type);
    if (!sock) {
        s_fail(err, errsize, "cannot create %s socket: %s", name, zmq_strerror(errno));
        return NULL;
    }
    void *monitor = NULL;
    bool monitoring = false;
    if (s_apply(sock, opts, err, errsize) < 0)
        goto fail;
    if (opts->monitor_events) {
        if (zmq_socket_monitor(sock, opts->monitor_endpoint, opts->monitor_events) < 0) {
            s_fail(err, errsize, "%s: cannot monitor on %s: %s", name, opts->monitor_endpoint,
                   zmq_strerror(errno));
            goto fail;
        }
        monitoring = true;
        gd_sock_opts_t mo;
        gd_sock_opts_init(&mo, GD_SOCK_MONITOR_PAIR, opts->monitor_endpoint);
        monitor = gd_sock_new(zctx, &mo, NULL, err, errsize);
        if (!monitor)
            goto fail;
    }
    if ((opts->bind ? zmq_bind(sock, opts->endpoint) : zmq_connect(sock, opts->endpoint)) < 0) {
        s_fail(err, errsize, "cannot %s %s %s %s: %s", opts->bind ? "bind" : "connect", name,
               opts->bind ? "on" : "to", opts->endpoint, zmq_strerror(errno));
        goto fail;
    }
    if (monitor_p)
        *monitor_p = monitor;
    return sock;
fail:;
    int saved = errno;
    if (monitoring)
        zmq_socket_monitor(sock, NULL, 0);
    gd_sock_destroy(&sock, &monitor);
    errno = saved;
    return NULL;
}

/*  Stops the monitor, closes the socket and the monitor's PAIR. */
void gd_sock_destroy(void **sock_p, void **monitor_p)
{
    assert(sock_p);
    if (*sock_p) {
        if (monitor_p && *monitor_p)
            zmq_socket_monitor(*sock_p, NULL, 0);
        zmq_close(*sock_p);
        *sock_p = NULL;
    }
    if (monitor_p && *monitor_p) {
        zmq_close(*monitor_p);
        *monitor_p = NULL;
    }
}

/*  Subscribes to a topic. */
int gd_sock_subscribe(void *sub, const void *topic, size_t len)
{
    assert(sub);
    return zmq_setsockopt(sub, ZMQ_SUBSCRIBE, topic, len);
}

/*  ZMQ_LAST_ENDPOINT into buf. */
const char *gd_sock_last_endpoint(void *sock, char *buf, size_t size)
{
    assert(sock);
    size_t len = size;
    if (zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, buf, &len) < 0)
        return NULL;
    return buf;
}
