/*  t/gd_sock.c — tests of the control plane's socket factory (libgimpi/groups/gd_sock.c):
 *  each role's settings, every socket kind made and connected over inproc and ipc
 *  (ROUTER-DEALER, XPUB-SUB with verbose subscriptions, a monitored ROUTER whose PAIR
 *  reports a connection accepted and ended), every setting read back with zmq_getsockopt,
 *  and failures (bad endpoints, an endpoint in use, an unsupported type or mechanism, a
 *  monitor without a place for its PAIR) giving NULL, errno and a message.
 */
#include "gtap.h"
#include "groups/gd_sock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

/*  An int option of a socket, or -999 when it cannot be read. */
static int s_get_int(void *sock, int option)
{
    int v = 0;
    size_t len = sizeof v;
    return zmq_getsockopt(sock, option, &v, &len) == 0 ? v : -999;
}

/*  Receives one frame within 5 s into buf (NUL-terminated); its size, or -1. */
static int s_recv(void *sock, char *buf, size_t size)
{
    zmq_pollitem_t item = { sock, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll(&item, 1, 5000) != 1)
        return -1;
    int n = zmq_recv(sock, buf, size - 1, 0);
    if (n >= 0)
        buf[(size_t)n < size - 1 ? (size_t)n : size - 1] = 0;
    return n;
}

/*  The event number of the next message of a monitor PAIR within 5 s, or -1. */
static int s_monitor_event(void *monitor)
{
    char buf[256];
    if (s_recv(monitor, buf, sizeof buf) < 2)
        return -1;
    int event = (uint8_t)buf[0] | (uint8_t)buf[1] << 8;
    while (s_get_int(monitor, ZMQ_RCVMORE) == 1)
        zmq_recv(monitor, buf, sizeof buf, 0);
    return event;
}

/*  Each role's settings are the values named in the header. */
static void test_roles(void)
{
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, "ipc://x");
    ok(o.type == ZMQ_ROUTER && o.bind && !strcmp(o.endpoint, "ipc://x"), "groupd ROUTER binds");
    ok(o.sndhwm == GD_SOCK_GROUPD_HWM && o.rcvhwm == GD_SOCK_GROUPD_HWM && o.sndhwm == 256,
       "with queues of 256 each way");
    ok(o.heartbeat_ivl_ms == 250 && o.heartbeat_timeout_ms == 750 && o.heartbeat_ttl_ms == 0,
       "heartbeats 250 ms, timeout 750 ms, no TTL");
    ok(o.linger_ms == 0 && o.maxmsgsize == 64 * 1024 && o.handshake_ms == 5000 && !o.immediate
       && !o.router_mandatory && o.security.mechanism == GD_SOCK_MECH_NONE && !o.monitor_events,
       "linger 0, 64 KiB frames at most, 5 s handshake, NULL mechanism until secured");
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_XPUB, "ipc://x.pub");
    ok(o.type == ZMQ_XPUB && o.bind && o.xpub_verbose && o.sndhwm == 10000 && o.rcvhwm == 256
       && o.maxmsgsize == 64 * 1024 && o.heartbeat_ivl_ms == 0,
       "groupd XPUB: bound, verbose, 10000 to send, 64 KiB frames at most");
    gd_sock_opts_init(&o, GD_SOCK_TASK_DEALER, "ipc://x");
    ok(o.type == ZMQ_DEALER && !o.bind && o.heartbeat_ivl_ms == 1000
       && o.heartbeat_timeout_ms == 5000 && o.sndhwm == 1000 && o.rcvhwm == 1000,
       "task DEALER: connects, heartbeats 1 s, timeout 5 s");
    gd_sock_opts_init(&o, GD_SOCK_TASK_SUB, "ipc://x.pub");
    ok(o.type == ZMQ_SUB && !o.bind && o.rcvhwm == 0, "task SUB: connects, no receive limit");
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "ipc://x");
    ok(o.type == ZMQ_DEALER && !o.bind && o.heartbeat_ivl_ms == 0, "tool DEALER: no heartbeats");
    gd_sock_opts_init(&o, GD_SOCK_MONITOR_PAIR, "inproc://m");
    ok(o.type == ZMQ_PAIR && !o.bind, "monitor PAIR connects");
    is(gd_sock_type_name(ZMQ_XPUB), "XPUB", "type names");
    is(gd_sock_type_name(ZMQ_REQ), "?", "unknown type name");
}

/*  A role's socket made, its settings read back. */
static void test_readback(void *zctx)
{
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, "inproc://gds-rb-router");
    char err[GD_SOCK_ERRLEN] = "";
    void *r = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    ok(r != NULL, "groupd ROUTER made %s", err);
    if (r) {
        int64_t max = 0;
        size_t len = sizeof max;
        zmq_getsockopt(r, ZMQ_MAXMSGSIZE, &max, &len);
        ok(s_get_int(r, ZMQ_TYPE) == ZMQ_ROUTER && s_get_int(r, ZMQ_LINGER) == 0
           && s_get_int(r, ZMQ_SNDHWM) == 256 && s_get_int(r, ZMQ_RCVHWM) == 256
           && max == 64 * 1024 && s_get_int(r, ZMQ_HANDSHAKE_IVL) == 5000
           && s_get_int(r, ZMQ_IMMEDIATE) == 0 && s_get_int(r, ZMQ_MECHANISM) == ZMQ_NULL,
           "its settings read back (type, linger, queues, size, handshake, mechanism)");
        ok(s_get_int(r, ZMQ_HEARTBEAT_IVL) == 250 && s_get_int(r, ZMQ_HEARTBEAT_TIMEOUT) == 750
           && s_get_int(r, ZMQ_HEARTBEAT_TTL) == 0, "heartbeats read back");
        char last[128];
        ok(gd_sock_last_endpoint(r, last, sizeof last) && !strcmp(last, "inproc://gds-rb-router"),
           "last endpoint");
        ok(!gd_sock_last_endpoint(r, last, 4), "a buffer too small for it: NULL");
        gd_sock_destroy(&r, NULL);
        ok(r == NULL, "destroy nulls the pointer");
    }
    gd_sock_destroy(&r, NULL);
    pass("destroy of NULL is harmless");

    /* every field away from its default */
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "inproc://gds-nowhere");
    o.routing_id = "abc";
    o.routing_id_len = 3;
    o.linger_ms = 17;
    o.sndhwm = 7;
    o.rcvhwm = 9;
    o.maxmsgsize = 4096;
    o.handshake_ms = 1234;
    o.heartbeat_ivl_ms = 100;
    o.heartbeat_timeout_ms = 300;
    o.heartbeat_ttl_ms = 700;
    o.immediate = true;
    void *d = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    ok(d != NULL, "a DEALER with every setting changed %s", err);
    if (d) {
        int64_t max = 0;
        size_t len = sizeof max;
        zmq_getsockopt(d, ZMQ_MAXMSGSIZE, &max, &len);
        char id[16] = "";
        size_t idlen = sizeof id;
        zmq_getsockopt(d, ZMQ_ROUTING_ID, id, &idlen);
        ok(s_get_int(d, ZMQ_LINGER) == 17 && s_get_int(d, ZMQ_SNDHWM) == 7
           && s_get_int(d, ZMQ_RCVHWM) == 9 && max == 4096
           && s_get_int(d, ZMQ_HANDSHAKE_IVL) == 1234 && s_get_int(d, ZMQ_IMMEDIATE) == 1,
           "linger, queues, size, handshake, immediate read back");
        ok(s_get_int(d, ZMQ_HEARTBEAT_IVL) == 100 && s_get_int(d, ZMQ_HEARTBEAT_TIMEOUT) == 300
           && s_get_int(d, ZMQ_HEARTBEAT_TTL) == 700, "heartbeat interval, timeout, TTL");
        ok(idlen == 3 && !memcmp(id, "abc", 3), "routing id");
        gd_sock_destroy(&d, NULL);
    }

    /* a SUB without a receive limit */
    gd_sock_opts_init(&o, GD_SOCK_TASK_SUB, "inproc://gds-nowhere");
    void *s = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    ok(s && s_get_int(s, ZMQ_TYPE) == ZMQ_SUB && s_get_int(s, ZMQ_RCVHWM) == 0
       && s_get_int(s, ZMQ_SNDHWM) == 1000 && s_get_int(s, ZMQ_LINGER) == 0,
       "task SUB: receive limit 0, send 1000, linger 0");
    gd_sock_destroy(&s, NULL);
}

/*  ROUTER <-> DEALER and XPUB <-> SUB over inproc. */
static void test_inproc(void *zctx)
{
    char err[GD_SOCK_ERRLEN] = "", buf[64];
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, "inproc://gds-router");
    void *r = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    gd_sock_opts_init(&o, GD_SOCK_TASK_DEALER, "inproc://gds-router");
    void *d = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    ok(r && d, "ROUTER bound, DEALER connected over inproc %s", err);
    if (r && d) {
        zmq_send(d, "hello", 5, 0);
        char id[64];
        int idlen = s_recv(r, id, sizeof id);
        ok(idlen > 0 && s_get_int(r, ZMQ_RCVMORE) == 1 && s_recv(r, buf, sizeof buf) == 5
           && !strcmp(buf, "hello"), "the ROUTER hears the DEALER");
        if (idlen > 0) {
            zmq_send(r, id, (size_t)idlen, ZMQ_SNDMORE);
            zmq_send(r, "back", 4, 0);
        }
        ok(s_recv(d, buf, sizeof buf) == 4 && !strcmp(buf, "back"), "and answers it");
    }
    gd_sock_destroy(&d, NULL);
    gd_sock_destroy(&r, NULL);

    gd_sock_opts_init(&o, GD_SOCK_GROUPD_XPUB, "inproc://gds-xpub");
    void *x = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    gd_sock_opts_init(&o, GD_SOCK_TASK_SUB, "inproc://gds-xpub");
    void *s1 = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    void *s2 = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    ok(x && s1 && s2, "XPUB bound, two SUBs connected over inproc %s", err);
    if (x && s1 && s2) {
        ok(gd_sock_subscribe(s1, "Gg", 2) == 0 && gd_sock_subscribe(s2, "Gg", 2) == 0,
           "both subscribe to the same topic");
        ok(s_recv(x, buf, sizeof buf) == 3 && !memcmp(buf, "\1Gg", 3),
           "the XPUB sees the first subscription");
        ok(s_recv(x, buf, sizeof buf) == 3 && !memcmp(buf, "\1Gg", 3),
           "and, being verbose, the second too");
        zmq_send(x, "Gg", 2, 0);
        ok(s_recv(s1, buf, sizeof buf) == 2 && s_recv(s2, buf, sizeof buf) == 2,
           "both SUBs get the event");
    }
    gd_sock_destroy(&s1, NULL);
    gd_sock_destroy(&s2, NULL);
    gd_sock_destroy(&x, NULL);
}

/*  A monitored ROUTER over ipc: the PAIR reports a connection accepted and ended. */
static void test_monitor(void *zctx, const char *dir)
{
    char ep[300], err[GD_SOCK_ERRLEN] = "";
    snprintf(ep, sizeof ep, "ipc://%s/gd", dir);
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, ep);
    o.monitor_events = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED;
    o.monitor_endpoint = "inproc://gds-monitor";
    void *mon = NULL;
    void *r = gd_sock_new(zctx, &o, &mon, err, sizeof err);
    ok(r && mon && s_get_int(mon, ZMQ_TYPE) == ZMQ_PAIR && s_get_int(mon, ZMQ_LINGER) == 0,
       "ROUTER bound over ipc with its monitor PAIR %s", err);
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, ep);
    void *d = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    ok(d != NULL, "a tool DEALER connects over ipc %s", err);
    if (r && mon && d) {
        cmp_ok(s_monitor_event(mon), "==", ZMQ_EVENT_ACCEPTED, "the monitor reports ACCEPTED");
        gd_sock_destroy(&d, NULL);
        cmp_ok(s_monitor_event(mon), "==", ZMQ_EVENT_DISCONNECTED,
               "and DISCONNECTED when the DEALER closes");
    }
    gd_sock_destroy(&d, NULL);
    gd_sock_destroy(&r, &mon);
    ok(r == NULL && mon == NULL, "destroy closes both and nulls both");
    /* libzmq frees a closed monitor's inproc name only when it reaps the socket, so a new
       monitor takes a new name (as the groups client does on each connection attempt) */
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, ep);
    o.monitor_events = ZMQ_EVENT_ACCEPTED;
    o.monitor_endpoint = "inproc://gds-monitor-2";
    r = gd_sock_new(zctx, &o, &mon, err, sizeof err);
    ok(r && mon, "a new monitored ROUTER on the same ipc endpoint %s", err);
    gd_sock_destroy(&r, &mon);
    char path[320];
    snprintf(path, sizeof path, "%s/gd", dir);
    unlink(path);
}

/*  A failure: NULL, errno set, err containing want. */
static void s_expect_fail(void *zctx, const gd_sock_opts_t *o, void **monitor_p,
                          const char *want, const char *what)
{
    char err[GD_SOCK_ERRLEN] = "";
    errno = 0;
    void *s = gd_sock_new(zctx, o, monitor_p, err, sizeof err);
    int e = errno;
    ok(s == NULL && e != 0 && strstr(err, want) != NULL, "%s: NULL and \"%s\"", what, err);
    if (s)
        gd_sock_destroy(&s, NULL);
}

/*  Bad endpoints and bad settings. */
static void test_failures(void *zctx)
{
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "bogus://x");
    s_expect_fail(zctx, &o, NULL, "cannot connect DEALER to bogus://x: ", "unknown transport");
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, "ipc:///nonexistent-gds/dir/gd");
    s_expect_fail(zctx, &o, NULL, "cannot bind ROUTER on ipc:///nonexistent-gds/dir/gd: ",
                  "ipc bind in a missing directory");
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_XPUB, "tcp://127.0.0.1:port");
    s_expect_fail(zctx, &o, NULL, "cannot bind XPUB on tcp://127.0.0.1:port: ",
                  "tcp bind to a port that is not a number");
    gd_sock_opts_init(&o, GD_SOCK_TASK_SUB, "tcp://127.0.0.1");
    s_expect_fail(zctx, &o, NULL, "cannot connect SUB to tcp://127.0.0.1", "tcp without port");

    char err[GD_SOCK_ERRLEN] = "";
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, "inproc://gds-taken");
    void *taken = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    ok(taken != NULL, "a ROUTER on inproc://gds-taken");
    s_expect_fail(zctx, &o, NULL, "Address already in use", "a second bind there");
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "inproc://gds-x");
    o.monitor_events = ZMQ_EVENT_CONNECTED;
    o.monitor_endpoint = "inproc://gds-taken";
    void *mon = NULL;
    s_expect_fail(zctx, &o, &mon, "cannot monitor on inproc://gds-taken", "a monitor there");
    ok(mon == NULL, "leaves no monitor");
    gd_sock_destroy(&taken, NULL);

    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "inproc://gds-x");
    o.type = ZMQ_REQ;
    s_expect_fail(zctx, &o, NULL, "unsupported socket type", "a REQ socket");
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, NULL);
    s_expect_fail(zctx, &o, NULL, "no endpoint", "no endpoint");
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "inproc://gds-x");
    o.monitor_events = ZMQ_EVENT_CONNECTED;
    s_expect_fail(zctx, &o, &mon, "a monitor needs", "a monitor without its endpoint");
    o.monitor_endpoint = "inproc://gds-mon-x";
    s_expect_fail(zctx, &o, NULL, "a monitor needs", "a monitor without a place for its PAIR");
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "inproc://gds-x");
    o.security.mechanism = (gd_sock_mech_t)7;
    s_expect_fail(zctx, &o, NULL, "DEALER: unknown security mechanism 7", "mechanism 7");
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "inproc://gds-x");
    o.sndhwm = -5;
    s_expect_fail(zctx, &o, NULL, "DEALER: cannot set ZMQ_SNDHWM to -5: Invalid argument",
                  "a negative queue limit");
    gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, "bogus://x");
    errno = 0;
    void *s = gd_sock_new(zctx, &o, NULL, NULL, 0);
    ok(s == NULL && errno != 0, "no message buffer: still NULL and errno");
    char tiny[8];
    s = gd_sock_new(zctx, &o, NULL, tiny, sizeof tiny);
    ok(s == NULL && strlen(tiny) == sizeof tiny - 1, "a small buffer gets a cut message");
}

/*  Runs the factory's tests. */
int main(void)
{
    void *zctx = zmq_ctx_new();
    if (!zctx)
        BAIL_OUT("no ZeroMQ context");
    plan(NO_PLAN);
    char dir[] = "/tmp/gdsock-XXXXXX";
    if (!mkdtemp(dir))
        BAIL_OUT("no temporary directory");
    test_roles();
    test_readback(zctx);
    test_inproc(zctx);
    test_monitor(zctx, dir);
    test_failures(zctx);
    rmdir(dir);
    zmq_ctx_term(zctx);
    done_testing();
}
