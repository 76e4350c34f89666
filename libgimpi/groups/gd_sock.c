/*  gd_sock.c — the one factory of the control plane's ZeroMQ sockets (see gd_sock.h).
 *
 *  gd_sock_new creates the socket, applies every setting of a gd_sock_opts_t in one
 *  function (s_apply), checks each zmq_setsockopt, starts the optional socket monitor,
 *  then binds or connects.  Any failure closes what was opened and reports the step in the
 *  caller's buffer; nothing is kept between calls.  The security part: gd_sock_secure
 *  fills the CURVE (tcp) or ZAP-only (ipc) settings from the key, gd_sock_refusal turns a
 *  client's monitor event into the reason groupd refused it, gd_zap_t is groupd's ZAP
 *  handler, and gd_ratelog_t bounds the log lines about refused or misbehaving peers.
 */
#include "config.h"
#include "groups/gd_sock.h"
#include "groups/gd_proto.h"
#include "base/gimpi_err.h"
#include "base/gimpi_clock.h"

#include <sodium.h>
#include <time.h>

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
        opts->maxmsgsize = GD_SOCK_GROUPD_MAXMSGSIZE;
        opts->handshake_ms = GD_SOCK_GROUPD_HANDSHAKE_MS;
        opts->heartbeat_ivl_ms = GD_SOCK_GROUPD_HEARTBEAT_MS;
        opts->heartbeat_timeout_ms = GD_SOCK_GROUPD_HEARTBEAT_MS
                                     * GD_SOCK_GROUPD_HEARTBEAT_TIMEOUTS;
        opts->backlog = GD_SOCK_GROUPD_BACKLOG;
        break;
    case GD_SOCK_GROUPD_XPUB:
        opts->type = ZMQ_XPUB;
        opts->bind = true;
        opts->sndhwm = GD_SOCK_GROUPD_PUB_HWM;
        opts->rcvhwm = GD_SOCK_GROUPD_HWM;
        opts->maxmsgsize = GD_SOCK_GROUPD_MAXMSGSIZE;
        opts->handshake_ms = GD_SOCK_GROUPD_HANDSHAKE_MS;
        opts->xpub_verbose = true;
        opts->backlog = GD_SOCK_GROUPD_BACKLOG;
        break;
    case GD_SOCK_TASK_DEALER:
        opts->type = ZMQ_DEALER;
        opts->heartbeat_ivl_ms = GD_SOCK_TASK_HEARTBEAT_MS;
        opts->heartbeat_timeout_ms = GD_SOCK_TASK_HEARTBEAT_TIMEOUT_MS;
        break;
    case GD_SOCK_TASK_SUB:
        opts->type = ZMQ_SUB;
        opts->rcvhwm = GD_SOCK_SUB_RCVHWM;
        opts->reconnect_ivl_ms = GD_SOCK_TASK_RECONNECT_MS;
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

/*  Sets one option of size len; on failure a message naming it.  0 or -1. */
static int s_set(void *sock, int type, int option, const char *name, const void *value,
                 size_t len, long long shown, char *err, size_t errsize)
{
    if (zmq_setsockopt(sock, option, value, len) == 0)
        return 0;
    return gimpi_fail(err, errsize, "%s: cannot set %s to %lld: %s", gd_sock_type_name(type), name,
                      shown, zmq_strerror(errno));
}

/*  Sets one int option. */
static int s_set_int(void *sock, int type, int option, const char *name, int value, char *err,
                     size_t errsize)
{
    return s_set(sock, type, option, name, &value, sizeof value, value, err, errsize);
}

/*  Applies the security section: CURVE keys and role, the ZAP domain.  0 or -1. */
static int s_apply_security(void *sock, int t, const gd_sock_security_t *sec, char *err,
                            size_t errsize)
{
    if (sec->mechanism == GD_SOCK_MECH_CURVE) {
        if (!zmq_has("curve")) {
            errno = ENOTSUP;
            return gimpi_fail(err, errsize, "%s: this libzmq has no CURVE security (needed on tcp)",
                              gd_sock_type_name(t));
        }
        if (s_set_int(sock, t, ZMQ_CURVE_SERVER, "ZMQ_CURVE_SERVER", sec->server, err,
                      errsize) < 0
            || s_set(sock, t, ZMQ_CURVE_SECRETKEY, "ZMQ_CURVE_SECRETKEY", sec->secret_key,
                     GD_SOCK_KEYLEN, GD_SOCK_KEYLEN, err, errsize) < 0
            || s_set(sock, t, ZMQ_CURVE_PUBLICKEY, "ZMQ_CURVE_PUBLICKEY", sec->public_key,
                     GD_SOCK_KEYLEN, GD_SOCK_KEYLEN, err, errsize) < 0)
            return -1;
        if (!sec->server
            && s_set(sock, t, ZMQ_CURVE_SERVERKEY, "ZMQ_CURVE_SERVERKEY", sec->server_key,
                     GD_SOCK_KEYLEN, GD_SOCK_KEYLEN, err, errsize) < 0)
            return -1;
    } else if (sec->mechanism != GD_SOCK_MECH_NONE) {
        errno = EINVAL;
        return gimpi_fail(err, errsize, "%s: unknown security mechanism %d", gd_sock_type_name(t),
                          (int)sec->mechanism);
    }
    if (sec->zap_domain
        && s_set(sock, t, ZMQ_ZAP_DOMAIN, "ZMQ_ZAP_DOMAIN", sec->zap_domain,
                 strlen(sec->zap_domain), (long long)strlen(sec->zap_domain), err, errsize) < 0)
        return -1;
    return 0;
}

/*  Applies every setting of opts to a fresh socket.  0 or -1 with a message. */
static int s_apply(void *sock, const gd_sock_opts_t *o, char *err, size_t errsize)
{
    int t = o->type;
    if (s_apply_security(sock, t, &o->security, err, errsize) < 0)
        return -1;
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
        || s_set_int(sock, t, ZMQ_IMMEDIATE, "ZMQ_IMMEDIATE", o->immediate, err, errsize) < 0
        || (o->reconnect_ivl_ms != 0
            && s_set_int(sock, t, ZMQ_RECONNECT_IVL, "ZMQ_RECONNECT_IVL", o->reconnect_ivl_ms,
                         err, errsize) < 0)
        || (o->backlog > 0
            && s_set_int(sock, t, ZMQ_BACKLOG, "ZMQ_BACKLOG", o->backlog, err, errsize) < 0))
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
        gimpi_fail(err, errsize, "%s socket: %s", name,
                   !strcmp(name, "?") ? "unsupported socket type"
                   : !opts->endpoint  ? "no endpoint"
                                      : "a monitor needs an endpoint and a place for its PAIR");
        return NULL;
    }
    void *sock = zmq_socket(zctx, opts->type);
    if (!sock) {
        gimpi_fail(err, errsize, "cannot create %s socket: %s", name, zmq_strerror(errno));
        return NULL;
    }
    void *monitor = NULL;
    bool monitoring = false;
    if (s_apply(sock, opts, err, errsize) < 0)
        goto fail;
    if (opts->monitor_events) {
        if (zmq_socket_monitor(sock, opts->monitor_endpoint, opts->monitor_events) < 0) {
            gimpi_fail(err, errsize, "%s: cannot monitor on %s: %s", name, opts->monitor_endpoint,
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
        gimpi_fail(err, errsize, "cannot %s %s %s %s: %s", opts->bind ? "bind" : "connect", name,
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

/* ------------------------------------------------------------------ security */

/*  tcp:// endpoints need the key. */
bool gd_sock_needs_key(const char *endpoint)
{
    return endpoint && strncmp(endpoint, "tcp://", 6) == 0;
}

/*  The security settings for opts->endpoint from the key. */
int gd_sock_secure(gd_sock_opts_t *opts, const gimpi_key_t *key, char *err, size_t errsize)
{
    assert(opts);
    gd_sock_security_t *sec = &opts->security;
    gimpi_key_wipe(sec, sizeof *sec);
    sec->mechanism = GD_SOCK_MECH_NONE;
    if (!gd_sock_needs_key(opts->endpoint)) {
        if (opts->bind && opts->endpoint && strncmp(opts->endpoint, "ipc://", 6) == 0)
            sec->zap_domain = GD_SOCK_ZAP_DOMAIN;   /* the handler checks the peer's uid */
        return 0;
    }
    if (!key) {
        errno = EINVAL;
        return gimpi_fail(err, errsize, "%s needs the key (a tcp endpoint), and there is none",
                          opts->endpoint);
    }
    if (!zmq_has("curve")) {
        errno = ENOTSUP;
        return gimpi_fail(err, errsize, "this libzmq has no CURVE security, which %s needs",
                          opts->endpoint);
    }
    sec->mechanism = GD_SOCK_MECH_CURVE;
    sec->server = opts->bind;
    if (opts->bind) {
        gimpi_key_keypair(key, GD_SOCK_KEYPAIR_SERVER, sec->public_key, sec->secret_key);
        sec->zap_domain = GD_SOCK_ZAP_DOMAIN;
    } else {
        uint8_t unused[GD_SOCK_KEYLEN];
        gimpi_key_keypair(key, GD_SOCK_KEYPAIR_SERVER, sec->server_key, unused);
        gimpi_key_wipe(unused, sizeof unused);
        gimpi_key_keypair(key, GD_SOCK_KEYPAIR_CLIENT, sec->public_key, sec->secret_key);
    }
    return 0;
}

/*  The client's key and its description. */
int gd_sock_client_key(gimpi_key_t *key, char *desc, size_t descsize, char *err,
                       size_t errsize)
{
    assert(key);
    char from[GIMPI_KEY_PATHLEN + 64];
    if (gimpi_key_default(key, from, sizeof from, err, errsize) < 0)
        return -1;
    char fp[9];
    if (desc && descsize)
        snprintf(desc, descsize, "fingerprint %s from %s", gimpi_key_fingerprint(key, fp), from);
    return 0;
}

/*  Why an event of a client's monitor means refusal, or NULL. */
const char *gd_sock_refusal(int event, int value, bool handshaken, bool curve)
{
    switch (event) {
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
        if (value != 400)
            return "authentication failed";
        return curve ? "not the same key" : "we are not its user";
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
            return "it expects another security mechanism (CURVE on tcp, none on ipc)";
        if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)
            return "not the same key (the handshake did not decrypt)";
        return curve ? "not the same key (the handshake failed)" : "the handshake failed";
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        return curve ? "not the same key (the handshake failed)" : "the handshake failed";
    case ZMQ_EVENT_DISCONNECTED:
        if (handshaken)
            return NULL;
        return curve ? "it closed the connection during the handshake (not the same key?)"
                     : "it closed the connection during the handshake";
    default:
        return NULL;
    }
}

/* ------------------------------------------------------------------ rate-limited logs */

/*  The counter, with the default rate when none was set. */
static gimpi_ratelog_t *s_count(gd_ratelog_t *rl)
{
    if (!rl->count.per_sec)
        rl->count.per_sec = GD_RATELOG_PER_S;
    return &rl->count;
}

/*  Prints the summary of the second that ended, if lines were held back. */
void gd_ratelog_flush(gd_ratelog_t *rl, int64_t now_ms, FILE *out, const char *prefix)
{
    assert(rl);
    int held = gimpi_ratelog_roll(s_count(rl), now_ms, false);
    if (held && out) {
        fprintf(out, "%s: ... %d more %s in the last second\n", prefix, held,
                rl->what ? rl->what : "events");
        fflush(out);
    }
}

/*  Time until a pending summary is due. */
int gd_ratelog_due_ms(const gd_ratelog_t *rl, int64_t now_ms)
{
    assert(rl);
    return gimpi_ratelog_due_ms(&rl->count, now_ms);
}

/*  Counts one event; true when its line may go out. */
bool gd_ratelog_ok(gd_ratelog_t *rl, int64_t now_ms, FILE *out, const char *prefix)
{
    assert(rl);
    gd_ratelog_flush(rl, now_ms, out, prefix);
    return gimpi_ratelog_event(s_count(rl), now_ms);
}

/* ------------------------------------------------------------------ the ZAP handler */

struct gd_zap_t {
    void *rep;                  /* REP bound to inproc://zeromq.zap.01 */
    bool have_key;
    uint8_t client_pub[GD_SOCK_KEYLEN];   /* the one CURVE client key admitted */
    unsigned uid;               /* the one ipc peer uid admitted */
    FILE *log;
    gd_ratelog_t refused_log;
    uint64_t admitted, refused;
};

/*  Binds the handler. */
gd_zap_t *gd_zap_new(void *zctx, const gimpi_key_t *key, unsigned uid, FILE *log, char *err,
                     size_t errsize)
{
    assert(zctx);
    gd_zap_t *self = calloc(1, sizeof *self);
    if (!self) {
        gimpi_fail(err, errsize, "ZAP handler: out of memory");
        return NULL;
    }
    self->uid = uid;
    self->log = log;
    self->refused_log.what = "peers refused";
    if (key) {
        uint8_t sec[GD_SOCK_KEYLEN];
        gimpi_key_keypair(key, GD_SOCK_KEYPAIR_CLIENT, self->client_pub, sec);
        gimpi_key_wipe(sec, sizeof sec);
        self->have_key = true;
    }
    self->rep = zmq_socket(zctx, ZMQ_REP);
    int zero = 0;
    if (!self->rep || zmq_setsockopt(self->rep, ZMQ_LINGER, &zero, sizeof zero) < 0
        || zmq_bind(self->rep, "inproc://zeromq.zap.01") < 0) {
        gimpi_fail(err, errsize, "cannot bind the ZAP handler: %s", zmq_strerror(errno));
        gd_zap_destroy(&self);
    }
    return self;
}

/*  Closes the handler. */
void gd_zap_destroy(gd_zap_t **self_p)
{
    assert(self_p);
    gd_zap_t *self = *self_p;
    if (!self)
        return;
    if (self->rep)
        zmq_close(self->rep);
    gimpi_key_wipe(self, sizeof *self);
    free(self);
    *self_p = NULL;
}

/*  The REP socket. */
void *gd_zap_socket(gd_zap_t *self)
{
    assert(self);
    return self->rep;
}

/*  Counters. */
void gd_zap_counts(gd_zap_t *self, uint64_t *admitted, uint64_t *refused)
{
    assert(self);
    if (admitted)
        *admitted = self->admitted;
    if (refused)
        *refused = self->refused;
}

/*  The refusals' log. */
gd_ratelog_t *gd_zap_log(gd_zap_t *self)
{
    assert(self);
    return &self->refused_log;
}

/*  The uid in an ipc peer's ZAP address "localhost:UID:GID:PID" (libzmq's SO_PEERCRED),
 *  or -1 when it is not of that form. */
static long s_ipc_uid(const gd_frame_t *addr)
{
    char buf[96];
    if (addr->len >= sizeof buf)
        return -1;
    memcpy(buf, addr->data, addr->len);
    buf[addr->len] = 0;
    char *colon = strchr(buf, ':');
    if (!colon || colon[1] < '0' || colon[1] > '9')
        return -1;
    char *end;
    long uid = strtol(colon + 1, &end, 10);
    return *end == ':' ? uid : -1;
}

/*  Decides one ZAP request ([version][id][domain][address][identity][mechanism]
 *  [credentials...]); NULL to admit, else the reason. */
static const char *s_zap_decide(gd_zap_t *self, const gd_multipart_t *mp)
{
    const gd_frame_t *f = mp->frames;
    if (mp->nparts < 6 || f[0].len != 3 || memcmp(f[0].data, "1.0", 3))
        return "malformed ZAP request";
    if (f[5].len == 5 && !memcmp(f[5].data, "CURVE", 5)) {
        if (mp->nparts < 7 || f[6].len != GD_SOCK_KEYLEN || !self->have_key)
            return "not the same key";
        return sodium_memcmp(f[6].data, self->client_pub, GD_SOCK_KEYLEN) == 0
             ? NULL : "not the same key";
    }
    if (f[5].len == 4 && !memcmp(f[5].data, "NULL", 4)) {
        long uid = s_ipc_uid(&f[3]);
        if (uid < 0)
            return "no key (CURVE is required here)";
        return (unsigned long)uid == self->uid ? NULL : "another user";
    }
    return "unsupported security mechanism";
}

/*  Answers every queued ZAP request. */
int gd_zap_serve(gd_zap_t *self)
{
    assert(self);
    int n = 0;
    for (;;) {
        int ev = 0;
        size_t el = sizeof ev;
        if (zmq_getsockopt(self->rep, ZMQ_EVENTS, &ev, &el) < 0 || !(ev & ZMQ_POLLIN))
            return n;
        gd_multipart_t mp;
        if (gd_multipart_recv(self->rep, &mp, ZMQ_DONTWAIT) < 0)
            return n;
        const char *why = s_zap_decide(self, &mp);
        gd_frame_t reqid = mp.nparts > 1 ? mp.frames[1] : (gd_frame_t){ NULL, 0 };
        const char *code = why ? "400" : "200";
        gd_frame_t reply[6] = {
            { (const uint8_t *)"1.0", 3 }, reqid, { (const uint8_t *)code, 3 },
            { (const uint8_t *)(why ? why : "OK"), strlen(why ? why : "OK") },
            { (const uint8_t *)"", 0 }, { (const uint8_t *)"", 0 },
        };
        gd_send_frames(self->rep, NULL, 0, reply, 6, 0);
        if (why) {
            self->refused++;
            if (self->log && gd_ratelog_ok(&self->refused_log, gimpi_now_ms(), self->log, "groupd")) {
                const gd_frame_t *a = mp.nparts > 3 ? &mp.frames[3] : &reqid;
                const gd_frame_t *m = mp.nparts > 5 ? &mp.frames[5] : &reqid;
                fprintf(self->log, "groupd: refused a %.*s peer from %.*s: %s\n",
                        (int)(m->len < 16 ? m->len : 16), (const char *)m->data,
                        (int)(a->len < 64 ? a->len : 64), (const char *)a->data, why);
                fflush(self->log);
            }
        } else
            self->admitted++;
        gd_multipart_close(&mp);
        n++;
    }
}

/* ------------------------------------------------------------------ one-off clients */

/*  A secured tool DEALER with a monitor. */
void *gd_sock_tool_new(void *zctx, const char *ep, void **monitor_p, char *desc,
                       size_t descsize, char *err, size_t errsize)
{
    assert(zctx);
    gimpi_key_t key;
    bool have = false;
    if (desc && descsize)
        desc[0] = 0;
    if (gd_sock_needs_key(ep)) {
        if (gd_sock_client_key(&key, desc, descsize, err, errsize) < 0)
            return NULL;
        have = true;
    }
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, ep);
    char mon[64];
    snprintf(mon, sizeof mon, "inproc://gd-tool-%p-%p", zctx, (void *)monitor_p);
    if (monitor_p) {
        o.monitor_events = ZMQ_EVENT_DISCONNECTED | GD_SOCK_HANDSHAKE_EVENTS;
        o.monitor_endpoint = mon;
    }
    void *sock = NULL;
    if (gd_sock_secure(&o, have ? &key : NULL, err, errsize) == 0)
        sock = gd_sock_new(zctx, &o, monitor_p, err, errsize);
    gimpi_key_wipe(&o.security, sizeof o.security);
    gimpi_key_wipe(&key, sizeof key);
    return sock;
}

/*  Waits for a message or a refusal. */
int gd_sock_tool_wait(void *sock, void *monitor, int timeout_ms, bool curve, char *err,
                      size_t errsize)
{
    assert(sock);
    int64_t deadline = gimpi_now_ms() + timeout_ms;
    bool handshaken = false;
    for (;;) {
        zmq_pollitem_t items[2] = { { sock, 0, ZMQ_POLLIN, 0 }, { monitor, 0, ZMQ_POLLIN, 0 } };
        long left = (long)(deadline - gimpi_now_ms());
        if (left < 0)
            return 0;
        int n = zmq_poll(items, monitor ? 2 : 1, left);
        if (n < 0 && errno != EINTR)
            return 0;
        if (n > 0 && (items[0].revents & ZMQ_POLLIN))
            return 1;
        if (n <= 0 || !monitor || !(items[1].revents & ZMQ_POLLIN))
            continue;
        gd_multipart_t mp;
        if (gd_multipart_recv(monitor, &mp, ZMQ_DONTWAIT) < 0)
            continue;
        const char *why = NULL;
        if (mp.nparts >= 1 && mp.frames[0].len >= 6) {
            uint16_t event = (uint16_t)(mp.frames[0].data[0] | mp.frames[0].data[1] << 8);
            uint32_t value;
            memcpy(&value, mp.frames[0].data + 2, 4);
            why = gd_sock_refusal(event, (int)value, handshaken, curve);
            handshaken |= event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
        }
        gd_multipart_close(&mp);
        if (why) {
            gimpi_fail(err, errsize, "%s", why);
            return -1;
        }
    }
}
