/*  gimpi_groups.c — the task side of the group-control plane (see include/gimpi_group.h):
 *  the client object, connecting and registering, and requests and their replies.
 *
 *  One gimpi_groups_t owns a DEALER socket (requests to groupd's ROUTER) with a socket
 *  monitor on it, and, from the first group it watches, a SUB socket on groupd's event
 *  stream feeding a membership cache (gimpi_groups_events.c, gimpi_groups_cache.c).
 *
 *  Deferred leaves: the object knows which groups its task is in (its own successful
 *  joins), so a leave of such a group cannot fail while groupd lives.  It is sent and the
 *  call returns at once; its reply is taken with the next request's (replies come back
 *  in order on the one DEALER), or by gimpi_groups_flush, which every query and (through
 *  the data plane's send hook, gimpi_task.c) every message the task sends runs first, so
 *  that nobody can hear from the task before groupd has the leave.  A join + leave pair
 *  thus costs one round trip instead of two.  GIMPI_GROUPS_SYNC_LEAVE=1 turns it off.
 */
#include "config.h"
#include "groups/groups_internal.h"
#include "impi/impi_wire.h"
#include "base/gimpi_tunables.h"
#include "groups/gimpi_groups_status.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <zmq.h>
#include <sodium.h>

/* ------------------------------------------------------------------ life cycle */

/*  Entry k of the list (modulo its length): its start, its length in *len. */
static const char *s_entry(const gimpi_groups_t *self, int k, size_t *len)
{
    const char *p = self->eplist;
    for (int i = 0; i < k % self->nep; i++)
        p = strchr(p, ',') + 1;
    const char *end = strchr(p, ',');
    *len = end ? (size_t)(end - p) : strlen(p);
    return p;
}

/*  Makes entry k of the list the endpoint. */
static int s_endpoint_at(gimpi_groups_t *self, int k)
{
    if (self->nep <= 1)
        return 0;
    size_t len;
    const char *p = s_entry(self, k, &len);
    if (len >= sizeof self->endpoint - 8)
        return -1;
    snprintf(self->endpoint, sizeof self->endpoint, "%.*s", (int)len, p);
    self->cur_ep = k % self->nep;
    /* the list as handed on (children, the verifier's connection): this entry first */
    size_t at = (size_t)(p - self->eplist);
    snprintf(self->eprot, sizeof self->eprot, "%s%s%.*s", p, at ? "," : "", (int)(at ? at - 1 : 0),
             self->eplist);
    return 0;
}

/*  A list of endpoints "EP1,EP2,..." (a primary groupd, then its standbys): kept, and
 *  the first one is the endpoint.  0, or -1 (too long, an empty entry). */
static int s_endpoints(gimpi_groups_t *self, const char *list)
{
    if (strlen(list) >= sizeof self->eplist)
        return -1;
    snprintf(self->eplist, sizeof self->eplist, "%s", list);
    self->nep = 1;
    for (const char *p = list; *p; p++)
        self->nep += *p == ',';
    for (int k = 0; k < self->nep; k++) {
        const char *p = self->eplist;
        for (int i = 0; i < k; i++)
            p = strchr(p, ',') + 1;
        if (*p == ',' || !*p)
            return -1;
    }
    return s_endpoint_at(self, 0);
}

/*  New unconnected object. */
gimpi_groups_t *gimpi_groups_new(const char *endpoint, void *zmq_context)
{
    gimpi_groups_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    if (!endpoint || !*endpoint)
        endpoint = gimpi_env("GIMPI_GROUPD");
    if (endpoint && *endpoint) {
        if (strlen(endpoint) >= sizeof self->endpoint - 8
            || (strchr(endpoint, ',') && s_endpoints(self, endpoint) < 0)) {
            free(self);
            return NULL;
        }
        if (!self->nep)
            snprintf(self->endpoint, sizeof self->endpoint, "%s", endpoint);
    } else if (!gd_default_endpoint(self->endpoint, sizeof self->endpoint, NULL, 0)) {
        free(self);
        return NULL;
    }
    self->cache = gd_hash_new();
    self->mine = gd_hash_new();
    self->zctx = zmq_context;
    if (!self->zctx) {
        self->zctx = zmq_ctx_new();
        self->own_ctx = true;
    }
    if (!self->cache || !self->mine || !self->zctx) {
        gimpi_groups_destroy(&self);
        return NULL;
    }
    const char *spin = gimpi_env("GIMPI_GROUPS_SPIN_US");
    long spin_us = spin && *spin ? atol(spin) : SPIN_US;
    self->spin_ns = (spin_us < 0 ? 0 : spin_us > 10000 ? 10000 : spin_us) * 1000LL;
    const char *hold = gimpi_env("GIMPI_GROUPS_HOLD_MS");
    long hold_ms = hold && *hold ? atol(hold) : HOLD_MS;
    self->hold_ns = (hold_ms < 0 ? 0 : hold_ms > 1000 ? 1000 : hold_ms) * 1000000LL;
    const char *sync_leave = gimpi_env("GIMPI_GROUPS_SYNC_LEAVE");
    self->sync_leave = sync_leave && *sync_leave && strcmp(sync_leave, "0") != 0;
    self->status_ms = gimpi_groups_status_after();
    const char *outage = gimpi_env("GIMPI_GROUPD_OUTAGE_MS");
    long outage_ms = outage && *outage ? atol(outage) : OUTAGE_MS;
    self->outage_ms = outage_ms < 0 ? 0 : outage_ms > 3600000 ? 3600000 : outage_ms;
    /* (on ipc; on tcp only when the launcher restarts its groupd at the same port with
       a journal: a tcp groupd started by hand keeps none, and its port may change) */
    const char *rs = gimpi_env("GIMPI_GROUPD_RESTARTABLE");
    bool tcp_rs = ((rs && !strcmp(rs, "1")) || self->nep > 1)
                && !strncmp(self->endpoint, "tcp://", 6);
    self->reconnect = self->outage_ms && (!strncmp(self->endpoint, "ipc://", 6) || tcp_rs)
                    ? groups_reconnect : NULL;
    randombytes_buf(self->rid, sizeof self->rid);
    self->rid[0] = 'g';                 /* (libzmq reserves routing ids that start with 0) */
    impi_addr16_from_ipv4(self->hostid, 0x7F000001);
    memcpy(self->addr, self->hostid, 16);
    self->pid = getpid();
    /* generations of objects made one after another at one address stay far apart */
    self->gen = ((uint64_t)gimpi_now_ns() | 1) * 0x9E3779B97F4A7C15ULL;
    return self;
}

/*  Closes the DEALER socket and its monitor, and any probe. */
static void s_close_dealer(gimpi_groups_t *self)
{
    gd_sock_destroy(&self->dealer, &self->monitor);
    gd_sock_destroy(&self->probe, &self->probe_mon);
}

/*  Unregisters, closes, frees. */
void gimpi_groups_destroy(gimpi_groups_t **self_p)
{
    assert(self_p);
    gimpi_groups_t *self = *self_p;
    if (!self)
        return;
    if (self->state == 1 && self->tid > 0)
        groups_request(self, GD_UNREGISTER, NULL, 0, 2000, NULL, NULL);
    groups_events_free(self);
    gd_hash_destroy(&self->mine);
    for (int i = 0; i < self->ndeferred; i++)
        free(self->deferred[i].group);
    groups_inflight_free(self);
    gd_multipart_close(&self->vm_mp);
    if (self->watch_free)
        self->watch_free(self->watch);
    if (self->mbox_free)
        self->mbox_free(self->mbox);
    gd_sock_destroy(&self->sub, NULL);
    s_close_dealer(self);
    if (self->own_ctx && self->zctx)
        zmq_ctx_term(self->zctx);
    gimpi_key_wipe(&self->key, sizeof self->key);
    gimpi_key_wipe(self->want_tok, sizeof self->want_tok);
    free(self);
    *self_p = NULL;
}

/*  Sets the identity sent at registration. */
int gimpi_groups_set_identity(gimpi_groups_t *self, const uint8_t hostid[16], int64_t pid,
                              const uint8_t addr[16], int port)
{
    assert(self);
    if (self->state < 0 || self->tid > 0)
        return GIMPI_EALREADY;
    if (port < 0 || port > 65535)
        return GIMPI_EBADPARAM;
    if (hostid)
        memcpy(self->hostid, hostid, 16);
    if (addr)
        memcpy(self->addr, addr, 16);
    self->pid = pid;
    self->port = port;
    return 0;
}

/*  The endpoint in use, or the list given (a primary and its standbys) starting with the
 *  one in use. */
const char *gimpi_groups_endpoint(gimpi_groups_t *self)
{
    assert(self);
    return self->nep > 1 ? self->eprot : self->endpoint;
}

/*  Queries answered locally, requests sent. */
void gimpi_groups_counters(gimpi_groups_t *self, uint64_t *local, uint64_t *remote)
{
    assert(self);
    if (local)
        *local = self->n_local;
    if (remote)
        *remote = self->n_remote;
}

/* ------------------------------------------------------------------ connecting */

/*  Opens the DEALER socket (ZMTP heartbeats towards groupd, gd_sock.h) with its monitor,
 *  and connects.  The routing id is the object's own; on ipc the socket does not
 *  reconnect by itself: a groupd restarted from its journal is reached by a new socket
 *  (groups_reconnect), never by an old one that would hold the routing id there first.
 *  0 or -1. */
static int s_open_dealer(gimpi_groups_t *self)
{
    char mon[64], err[GD_SOCK_ERRLEN];
    snprintf(mon, sizeof mon, "inproc://gimpi-groups-%p-%u", (void *)self, ++self->nopen);
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_TASK_DEALER, self->endpoint);
    o.routing_id = self->rid;
    o.routing_id_len = sizeof self->rid;
    if (strncmp(self->endpoint, "ipc://", 6) == 0)
        o.reconnect_ivl_ms = -1;
    o.monitor_events = ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED | GD_SOCK_HANDSHAKE_EVENTS;
    o.monitor_endpoint = mon;
    self->handshaken = self->connected = false;
    if (gd_sock_secure(&o, self->have_key ? &self->key : NULL, err, sizeof err) < 0) {
        fprintf(stderr, "gimpi: groupd at %s: %s\n", self->endpoint, err);
        return -1;
    }
    self->dealer = gd_sock_new(self->zctx, &o, &self->monitor, NULL, 0);
    gimpi_key_wipe(&o.security, sizeof o.security);
    return self->dealer ? 0 : -1;
}

/*  Loads the key for a tcp endpoint (once).  0, or -1 with a message on stderr. */
static int s_load_key(gimpi_groups_t *self)
{
    if (self->have_key || !gd_sock_needs_key(self->endpoint))
        return 0;
    char err[GIMPI_KEY_ERRLEN];
    if (gd_sock_client_key(&self->key, self->keydesc, sizeof self->keydesc, err,
                           sizeof err) < 0) {
        fprintf(stderr, "gimpi: groupd at %s needs the key: %s\n", self->endpoint, err);
        return -1;
    }
    self->have_key = true;
    return 0;
}

static int s_hello(gimpi_groups_t *self, int64_t timeout_ms, gd_multipart_t *mp_out,
                   gd_msg_t *reply_out);
static int s_hello_wait(gimpi_groups_t *self, int timeout_ms, gd_multipart_t *mp_out,
                        gd_msg_t *reply_out);
static int s_took_hello(gimpi_groups_t *self, const gd_msg_t *reply);

/*  Connects and says HELLO (starting a groupd when none serves our ipc endpoint).  0, or
 *  GIMPI_ESYSERR (and the object is dead). */
int groups_connect(gimpi_groups_t *self)
{
    if (self->state == 1)
        return 0;
    if (self->state < 0)
        return GIMPI_ESYSERR;
    /* a groupd that exits when idle may go just as we connect: then once more (a new one) */
    bool ipc = strncmp(self->endpoint, "ipc://", 6) == 0;
    gd_multipart_t mp;
    gd_msg_t reply;
    if (s_load_key(self) < 0) {
        self->state = -1;
        return GIMPI_ESYSERR;
    }
    /* on ipc a connection whose handshake has not succeeded within HELLO_RETRY_MS is
       given up for a new one (s_hello), until HELLO_TIMEOUT_MS */
    int64_t deadline = gimpi_now_ms() + HELLO_TIMEOUT_MS;
    bool retry = ipc || self->nep > 1;     /* (on a list: the next entry) */
    for (int attempt = 0;; attempt++) {
        self->state = -1;           /* until proven otherwise */
        if (ipc && !groups_ipc_alive(self->endpoint) && groups_start_groupd(self) < 0)
            return GIMPI_ESYSERR;
        if (s_open_dealer(self) < 0)
            return GIMPI_ESYSERR;
        self->state = 1;
        int64_t left = deadline - gimpi_now_ms();
        if ((retry ? s_hello(self, left > 1 ? left : 1, &mp, &reply)
                   : s_hello_wait(self, HELLO_TIMEOUT_MS, &mp, &reply)) >= 0) {
            if (s_took_hello(self, &reply) == 0)
                break;
            gd_multipart_close(&mp);    /* (a groupd of an older term) */
        }
        self->state = -1;
        if (!retry || (attempt >= 1 && gimpi_now_ms() >= deadline) || self->refused)
            return GIMPI_ESYSERR;
        s_close_dealer(self);
        if (self->nep > 1)
            s_endpoint_at(self, self->cur_ep + 1);
    }
    gd_multipart_close(&mp);
    return 0;
}

/*  HELLO with our term, waiting up to timeout_ms for the reply (see s_await). */
static int s_hello_wait(gimpi_groups_t *self, int timeout_ms, gd_multipart_t *mp_out,
                        gd_msg_t *reply_out)
{
    uint8_t term[4];
    gimpi_be_put32(term, (uint32_t)self->term);
    gd_value_t v = { .data = term, .len = sizeof term };
    return groups_request(self, GD_HELLO, &v, 1, timeout_ms, mp_out, reply_out);
}

/*  A HELLO reply: a groupd of an older term than one seen is not ours to use (a primary
 *  that a standby has replaced): -1.  Else its term and event endpoint are taken. */
static int s_took_hello(gimpi_groups_t *self, const gd_msg_t *reply)
{
    int32_t term = reply->nvalues >= 4 ? reply->values[3].i : 0;
    if (term < self->term)
        return -1;
    self->term = term;
    const gd_value_t *ep = &reply->values[2];
    snprintf(self->pub_endpoint, sizeof self->pub_endpoint, "%.*s", (int)ep->len,
             (const char *)ep->data);
    /* a wildcard TCP address: the events come from the host we reached groupd on */
    char *any = strstr(self->pub_endpoint, "0.0.0.0");
    if (strncmp(self->endpoint, "tcp://", 6) == 0 && any) {
        char host[256], port[64];
        const char *h = self->endpoint + 6;
        const char *colon = strrchr(h, ':');
        const char *pcolon = strrchr(self->pub_endpoint, ':');
        if (colon && pcolon && (size_t)(colon - h) < sizeof host) {
            snprintf(host, sizeof host, "%.*s", (int)(colon - h), h);
            snprintf(port, sizeof port, "%s", pcolon + 1);
            snprintf(self->pub_endpoint, sizeof self->pub_endpoint, "tcp://%s:%s", host, port);
        }
    }
    return 0;
}

/*  Connects and registers (as the tid set by gimpi_groups_set_tid, if any).  0, or an error
 *  (and the object is dead). */
int groups_ready(gimpi_groups_t *self)
{
    if (self->state == 1 && self->tid > 0)
        return 0;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    /* the host's name in the virtual machine (GIMPI_HOST, set by the launcher or its
       agent: several emulated hosts may share one system name), else the system's */
    char hostname[GD_MAX_TEXT + 1] = "";
    const char *vmhost = gimpi_env("GIMPI_HOST");
    if (vmhost && *vmhost)
        snprintf(hostname, sizeof hostname, "%s", vmhost);
    else
        gethostname(hostname, sizeof hostname - 1);
    uint8_t proc[IMPI_PROC_SIZE];
    impi_proc_t ip;
    memcpy(ip.hostid, self->hostid, 16);
    ip.pid = self->pid;
    impi_proc_encode(proc, &ip);
    /* the token of the tid's block: given, or of a block this object reserved itself */
    uint8_t token[GD_TOKEN_SIZE] = { 0 };
    if (self->have_want_tok)
        memcpy(token, self->want_tok, sizeof token);
    else if (self->tok_n && self->want_tid > self->tok_base
             && self->want_tid - self->tok_base <= self->tok_n)
        memcpy(token, self->tok, sizeof token);
    gd_value_t v[7] = {
        { .data = proc, .len = sizeof proc },
        { .data = self->addr, .len = 16 },
        { .i = self->port },
        { .i = (int32_t)getpid() },
        { .data = (const uint8_t *)hostname, .len = strlen(hostname) },
        { .i = self->want_tid },
        { .data = token, .len = sizeof token },
    };
    rc = self->want_tid
       ? groups_request(self, GD_REGISTER_TID, v, 7, REQUEST_TIMEOUT_MS, NULL, NULL)
       : groups_request(self, GD_REGISTER, v, 5, REQUEST_TIMEOUT_MS, NULL, NULL);
    if (rc <= 0) {
        self->state = -1;
        return rc < 0 ? rc : GIMPI_ESYSERR;
    }
    self->tid = rc;
    return 0;
}

/* ------------------------------------------------------------------ requests */

/*  Waits until the DEALER has a message (1), the deadline passed or groupd is gone (-1),
 *  or nothing yet (0, e.g. a signal).  Cheaper than zmq_poll on both sockets, which costs
 *  about ten system calls per reply: ZMQ_EVENTS once (it also takes any activation that a
 *  send consumed), then one poll(2) on the two notification fds.  The monitor fd is
 *  reliable on its own: nothing but groups_check_monitor touches that socket, and it reads it
 *  empty, so every later monitor message signals the fd anew.
 *  With spin, the thread first waits awake for up to spin_ns (s_spin_choice says when):
 *  a reply then costs no wake-up of this thread, which on an idle (halted) CPU is the
 *  dearest step of the round trip (joinlv n = 1: +45 %). */
static int s_wait_reply(gimpi_groups_t *self, int64_t deadline, bool spin)
{
    int ev = 0;
    size_t el = sizeof ev;
    if (zmq_getsockopt(self->dealer, ZMQ_EVENTS, &ev, &el) < 0)
        return -1;
    if (ev & ZMQ_POLLIN)
        return 1;
    struct pollfd pf[2] = { { .events = POLLIN }, { .events = POLLIN } };
    size_t fl = sizeof pf[0].fd;
    if (zmq_getsockopt(self->dealer, ZMQ_FD, &pf[0].fd, &fl) < 0
        || zmq_getsockopt(self->monitor, ZMQ_FD, &pf[1].fd, &fl) < 0)
        return -1;
    if (spin) {
        /* replies have been coming back within the spin: wait for this one awake
           (sched_yield lets whatever else wants this CPU run first) */
        int64_t end = gimpi_now_ns() + self->spin_ns;
        do {
            sched_yield();
            if (poll(pf, 1, 0) > 0)
                return 0;
        } while (gimpi_now_ns() < end);
    }
    long left = deadline < 0 ? -1 : (long)(deadline - gimpi_now_ms());
    if (deadline >= 0 && left < 0)
        return -1;
    if (poll(pf, 2, left > INT32_MAX ? INT32_MAX : (int)left) < 0 && errno != EINTR)
        return -1;
    if (pf[1].revents && groups_check_monitor(self))
        return -1;
    return 0;               /* the caller looks at the DEALER again (ZMQ_EVENTS above) */
}

/*  Whether a wait spins first: when replies have lately come within spin_ns (a lightly
 *  loaded groupd) and spinning has lately cost less than blocking.  When other processes
 *  keep the CPUs busy, each yield of the spin hands them the CPU for a slice, and a
 *  thread that has spun has used its share: the scheduler lets it wait once it is
 *  runnable again, which shows after the reply, not in it (s_note_cost).  Blocking then
 *  wins (joinlv n = 1 here: 20.5k against 13.3k pairs/s).  With explore, a request tries
 *  the way not chosen, so that both averages stay current; s_await explores in runs and
 *  counts a way's waits only after a few of it in a row, because what a wait costs
 *  depends on how the thread waited before. */
static bool s_spin_choice(gimpi_groups_t *self, bool explore)
{
    bool spin = self->lat_ns <= self->spin_ns
             && (self->cost_ns[0] == 0 || self->cost_ns[1] <= self->cost_ns[0]);
    return self->spin_ns > 0 && spin != explore;
}

/*  A reply came `took` ns after its request was sent: the latency of spinning waits
 *  feeds lat_ns; the wait's cost is noted at the next send (s_note_cost). */
static void s_note_latency(gimpi_groups_t *self, bool spin, int64_t took)
{
    if (spin || self->spin_ns == 0)
        self->lat_ns += (took - self->lat_ns) / 8;
    self->pend_ns = took > 0 ? took : 1;
    self->pend_at = gimpi_now_ns();
    self->pend_spin = spin;
}

/*  At a send: the last wait's cost is its latency plus the time from its reply to the end
 *  of this send (at most COST_GAP_US), which is where a thread that spun is made to wait
 *  for the CPU; added to the average of the way the wait took. */
static void s_note_cost(gimpi_groups_t *self)
{
    if (!self->pend_ns)
        return;
    int64_t gap = gimpi_now_ns() - self->pend_at;
    int64_t took = self->pend_ns + (gap < COST_GAP_US * 1000LL ? gap : COST_GAP_US * 1000LL);
    int64_t *avg = &self->cost_ns[self->pend_spin];
    *avg = *avg == 0 ? took : *avg + (took - *avg) / 8;
    self->pend_ns = 0;
}

/*  Receives one message from the DEALER; a reply is no longer in flight. */
int groups_recv(gimpi_groups_t *self, gd_multipart_t *mp, int flags)
{
    if (gd_multipart_recv(self->dealer, mp, flags) < 0)
        return -1;
    gd_msg_t head;
    self->recv_awaited = 0;
    if (self->ninflight && mp->nparts >= 1
        && gd_header_decode(&mp->frames[0], &head) == GD_OK
        && groups_inflight_done(self, head.reqid, !self->probing))
        self->recv_awaited = head.reqid;
    return 0;
}

static int s_lookup(gimpi_groups_t *self, int tid, gimpi_task_info_t *info, int timeout_ms);

/*  After a reconnection: whether the groupd reached knows this task still (a restart from
 *  the journal does; a fresh groupd that another process started on the endpoint meanwhile
 *  does not, and would answer every call as if the task's groups had never been). */
static bool s_still_known(gimpi_groups_t *self, int64_t deadline)
{
    if (self->tid <= 0 || strncmp(self->endpoint, "ipc://", 6) != 0)
        return true;                    /* (not registered: nothing to lose; on tcp nobody
                                           starts a groupd by itself, and terms tell) */
    /* (kept out of the requests in flight: its reply must not count as the end of the
       quiet ones sent to the groupd before, which are sent again after it) */
    gimpi_task_info_t info;
    self->probing = true;
    int64_t left = deadline - gimpi_now_ms();  /* (within the outage's budget) */
    int rc = s_lookup(self, self->tid, &info, left > 100 ? (int)left : 100);
    self->probing = false;
    return rc >= 0 && (info.ospid == 0 || info.ospid == (int)getpid());
}

/*  groupd went away: reach one again (see groups_internal.h). */
int groups_reconnect(gimpi_groups_t *self)
{
    int64_t t0 = gimpi_now_ms(), deadline = t0 + self->outage_ms;
    bool ipc = strncmp(self->endpoint, "ipc://", 6) == 0;
    self->reconnecting = true;
    char pub[sizeof self->pub_endpoint];  /* where the events came from until now */
    memcpy(pub, self->pub_endpoint, sizeof pub);
    /* on a list the entry after the lost one first: the primary's standby, which takes
       over (a killed primary's port refuses at once, but a cut-off host answers nothing,
       and a HELLO there would wait its whole bound); a live primary comes round again */
    if (self->nep > 1)
        s_endpoint_at(self, self->cur_ep + 1);
    while (gimpi_now_ms() < deadline) {
        s_close_dealer(self);
        self->state = -1;
        int started = ipc && !groups_ipc_alive(self->endpoint) ? groups_start_groupd(self) : 0;
        if (started < 0 && (self->noprog || started == -2))
            break;                      /* nothing to restart it with, or from */
        if (s_open_dealer(self) < 0)
            break;
        self->state = 1;
        int64_t left = deadline - gimpi_now_ms();
        if (left <= 0)
            break;
        gd_multipart_t mp;
        gd_msg_t reply;
        int rc = s_hello(self, left < 1000 ? left : 1000, &mp, &reply);
        if (rc == 0) {
            rc = s_took_hello(self, &reply);
            gd_multipart_close(&mp);
        }
        /* a groupd that does not know this task is not ours restarted (nor our standby):
           a fresh one another process started on the endpoint */
        if (rc == 0 && !s_still_known(self, deadline)) {
            if (self->nep <= 1)
                break;                  /* gone, as without one */
            rc = -1;
        }
        if (rc == 0 && strcmp(pub, self->pub_endpoint))
            groups_events_reopen(self);
        if (rc == 0) {
            groups_inflight_resend(self);
            groups_events_resync(self);
            self->watch_stale = self->watch != NULL;
            self->reconnecting = false;
            self->nreconnects++;
            self->outage_last_ms = gimpi_now_ms() - t0;
            return 0;
        }
        if (self->nep > 1)
            s_endpoint_at(self, self->cur_ep + 1);
        struct timespec ts = { 0, 5000000 };
        nanosleep(&ts, NULL);
    }
    self->state = -1;
    self->reconnecting = false;
    return -1;
}

/*  A request unanswered for PROBE_AFTER_MS, with a list of groupds: its primary may be
 *  cut off (its host lost: no connection ends, and the heartbeat takes 1 + 5 s).  A
 *  standby binds nothing before it takes over, so a connection to the next entry (a
 *  secured DEALER that sends nothing, retried by libzmq every 100 ms) whose handshake
 *  succeeds means the standby serves: 1, the probe closed (the caller reconnects).  A
 *  slow primary costs nothing but the probe's refused connections.  0 meanwhile. */
static int s_probe(gimpi_groups_t *self, int64_t sent_ns)
{
    if (self->nep <= 1 || !self->reconnect || self->reconnecting || self->state != 1
        || gimpi_now_ns() - sent_ns < PROBE_AFTER_MS * 1000000LL)
        return 0;
    if (!self->probe) {
        size_t len;
        const char *p = s_entry(self, self->cur_ep + 1, &len);
        char ep[sizeof self->endpoint], mon[64];
        snprintf(ep, sizeof ep, "%.*s", (int)(len < sizeof ep ? len : sizeof ep - 1), p);
        snprintf(mon, sizeof mon, "inproc://gimpi-probe-%p-%u", (void *)self, ++self->nopen);
        gd_sock_opts_t o;
        gd_sock_opts_init(&o, GD_SOCK_TOOL_DEALER, ep);
        o.monitor_events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
        o.monitor_endpoint = mon;
        if (gd_sock_secure(&o, self->have_key ? &self->key : NULL, NULL, 0) == 0)
            self->probe = gd_sock_new(self->zctx, &o, &self->probe_mon, NULL, 0);
        gimpi_key_wipe(&o.security, sizeof o.security);
        return 0;
    }
    gd_multipart_t mp;
    bool serves = false;
    while (!serves && gd_multipart_recv(self->probe_mon, &mp, ZMQ_DONTWAIT) == 0) {
        serves = mp.nparts >= 1 && mp.frames[0].len >= 2
              && (mp.frames[0].data[0] | mp.frames[0].data[1] << 8) == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
        gd_multipart_close(&mp);
    }
    if (serves)
        gd_sock_destroy(&self->probe, &self->probe_mon);
    return serves;
}

/*  Sends a request without waiting.  Returns its request id (> 0) or an error. */
int64_t groups_send_request(gimpi_groups_t *self, uint8_t cmd, const gd_value_t *values,
                            int nvalues)
{
    if (self->state != 1)
        return GIMPI_ESYSERR;
    /* (the wait for the reply watches the monitor too; a look first only when it is due) */
    int64_t now = gimpi_now_ns();
    if (now - self->last_monitor_ns >= CHECK_INTERVAL_NS) {
        if (groups_check_monitor(self))
            return GIMPI_ESYSERR;
        self->last_monitor_ns = now;
    }
    const gd_command_info_t *info = gd_command_info(cmd);
    uint8_t hdr[GD_HDR_SIZE], buf[8 * GD_MAX_FRAMES];
    gd_frame_t frames[1 + GD_MAX_FRAMES];
    uint32_t reqid = ++self->reqid;
    if (reqid == 0)
        reqid = ++self->reqid;
    gd_header_encode(hdr, cmd, reqid);
    frames[0] = (gd_frame_t){ hdr, sizeof hdr };
    int n = gd_values_encode(info->request, values, nvalues, buf, frames + 1);
    if (n < 0)
        return GIMPI_EBADPARAM;
    if (!self->probing)
        groups_inflight_add(self, reqid, cmd, frames, 1 + n);
    if (groups_send_frames(self, frames, 1 + n, !self->probing) < 0)
        return GIMPI_ESYSERR;
    s_note_cost(self);
    self->n_remote++;
    return reqid;
}

/*  If mp answers a deferred leave, applies it (its group's cache catches up with the
 *  leave's version) and returns 1; else 0.  The catching up reads the SUB socket, which
 *  must not happen while a SNAPSHOT is outstanding (see the file comment); it cannot:
 *  every path to a SNAPSHOT (the lookups, gimpi_group_snapshot) flushes the deferred
 *  leaves first, so none is outstanding then. */
int groups_take_deferred(gimpi_groups_t *self, const gd_multipart_t *mp)
{
    gd_msg_t head, reply;
    if (self->ndeferred == 0 || mp->truncated || mp->nparts < 1
        || gd_header_decode(&mp->frames[0], &head) != GD_OK)
        return 0;
    for (int i = 0; i < self->ndeferred; i++) {
        if (self->deferred[i].reqid != head.reqid)
            continue;
        char *group = self->deferred[i].group;
        self->deferred[i] = self->deferred[--self->ndeferred];
        if (!group)
            return 1;                   /* a message-box put: its answer was known */
        if (gd_reply_decode(GD_LEAVE, mp->frames, mp->nparts, &reply) == GD_OK
            && reply.values[1].q && self->state == 1) {
            groups_saw(self, reply.values[1].q);
            groups_sync(self, group, reply.values[1].q);
        }
        free(group);
        return 1;
    }
    return 0;
}

/*  If mp answers the outstanding VMWAIT, keeps it for gimpi_groups_mgr_next (taking it
 *  over: mp is left empty) and returns 1; else 0. */
int groups_take_vmwait(gimpi_groups_t *self, gd_multipart_t *mp)
{
    gd_msg_t head;
    if (!self->vmwait_reqid || self->vm_have || mp->truncated || mp->nparts < 1
        || gd_header_decode(&mp->frames[0], &head) != GD_OK || head.reqid != self->vmwait_reqid
        || (head.kind != (GD_VMWAIT | GD_REPLY_FLAG) && head.kind != GD_BAD_KIND))
        return 0;
    self->vm_mp = *mp;
    self->vm_have = true;
    memset(mp, 0, sizeof *mp);
    return 1;
}

/* ------------------------------------------------------------------ the live status */

enum { STATUS_AFTER_MS = 250 };     /* default of GIMPI_STATUS_AFTER */

/*  GIMPI_STATUS_AFTER, ms (gimpi_groups_status.h). */
int gimpi_groups_status_after(void)
{
    const char *e = gimpi_env("GIMPI_STATUS_AFTER");
    long ms = e && *e ? strtol(e, NULL, 10) : STATUS_AFTER_MS;
    return ms < 0 ? 0 : ms > 3600000 ? 3600000 : (int)ms;
}

/*  Reads, without waiting, what came on the DEALER while no request waits for it: the
 *  answers of deferred requests and of the manager's VMWAIT are taken, late answers (the
 *  statuses' own, BARRIER_NOTE's) dropped.  A task that blocks often and asks groupd
 *  nothing else would otherwise fill the socket's queues with them (1,400 blocked
 *  receives do), and groupd, finding them full, would drop a reply that matters. */
static void s_drop_late(gimpi_groups_t *self)
{
    gd_multipart_t mp;
    for (int k = 0; k < 64 && gd_multipart_recv(self->dealer, &mp, ZMQ_DONTWAIT) == 0; k++) {
        if (!groups_take_deferred(self, &mp))
            groups_take_vmwait(self, &mp);
        gd_multipart_close(&mp);
    }
}

/*  Sends the task's live status without waiting (gimpi_groups_status.h); its answer is
 *  dropped when it comes (s_await, s_drop_late). */
int gimpi_groups_status(gimpi_groups_t *self, const char *call, int ms, int queued, int peer)
{
    assert(self);
    if (self->state != 1 || self->tid <= 0)
        return GIMPI_ESYSERR;
    if (!self->waiting)
        s_drop_late(self);          /* (inside s_await the awaited answer may be there) */
    size_t len = call ? strlen(call) : 0;
    gd_value_t v[5] = { { .i = self->tid },
                        { .data = (const uint8_t *)(call ? call : ""),
                          .len = len > GD_MAX_TEXT ? GD_MAX_TEXT : len },
                        { .i = ms < 0 ? 0 : ms },
                        { .i = queued < -1 ? -1 : queued },
                        { .i = peer < 0 ? 0 : peer } };
    int64_t reqid = groups_send_request(self, GD_TASK_STATUS, v, 5);
    return reqid < 0 ? (int)reqid : 0;
}

/*  A BARRIER, FREEZE or waiting MBOX_GET that has waited waited_ms: its words go to
 *  groupd.  1 when sent. */
static int s_status_waiting(gimpi_groups_t *self, uint8_t cmd, int64_t waited_ms)
{
    const gd_value_t *v = self->waiting;
    char call[GD_MAX_TEXT + 1], flags[24] = "";
    if (cmd == GD_MBOX_GET)
        snprintf(flags, sizeof flags, ", %d", (int)v[2].i);
    snprintf(call, sizeof call, "%s(\"%.*s\", %d%s)",
             cmd == GD_BARRIER ? "pvm_barrier" : cmd == GD_FREEZE ? "pvm_freezegroup"
                                                                  : "pvm_recvinfo",
             (int)(v[0].len > 200 ? 200 : v[0].len), (const char *)v[0].data, (int)v[1].i,
             flags);
    return gimpi_groups_status(self, call, (int)waited_ms, -1, 0) == 0;
}

/*  Waits for the reply to request `reqid` (timeout_ms < 0: as long as groupd lives),
 *  taking the replies of deferred leaves on the way.  Returns the reply's status or
 *  GIMPI_ESYSERR.  With mp_out the reply is kept for the caller (who closes it); its
 *  status is values[0], version values[1], extras after. */
static int s_await(gimpi_groups_t *self, uint8_t cmd, uint32_t reqid, int64_t sent_ns,
                   int timeout_ms, gd_multipart_t *mp_out, gd_msg_t *reply_out)
{
    int64_t deadline = timeout_ms < 0 ? -1 : gimpi_now_ms() + timeout_ms;
    bool spin = s_spin_choice(self, ++self->nwaits % EXPLORE_PERIOD < EXPLORE_RUN);
    self->streak = spin == self->last_spin ? self->streak + 1 : 1;
    self->last_spin = spin;
    /* a barrier or freeze that waits GIMPI_STATUS_AFTER says so (the live view) */
    int64_t status_at = self->waiting ? sent_ns / 1000000 + self->status_ms : 0;
    bool published = false;
    for (;;) {
        gd_multipart_t mp;
        if (groups_early_take(self, reqid, &mp))
            goto got;                   /* (came while a reconnection's HELLO waited) */
        bool cut = status_at && (deadline < 0 || status_at < deadline);
        int64_t wake = cut ? status_at : deadline;
        /* (with a list, a long wait looks at the probe every PROBE_TICK_MS) */
        int64_t tick = self->nep > 1 && self->reconnect && !self->reconnecting
                     ? gimpi_now_ms() + PROBE_TICK_MS : -1;
        bool ticking = tick >= 0 && (wake < 0 || tick < wake);
        int rc = s_wait_reply(self, ticking ? tick : wake, spin);
        if (rc <= 0 && ticking && self->state == 1 && gimpi_now_ms() >= tick) {
            if (s_probe(self, sent_ns) && self->reconnect(self) < 0)
                return GIMPI_ESYSERR;   /* (else our requests went again to the standby) */
            continue;
        }
        if (rc < 0 && cut && self->state == 1) {
            published = s_status_waiting(self, cmd, gimpi_now_ms() - sent_ns / 1000000);
            status_at = 0;
            continue;
        }
        if (rc < 0)
            return GIMPI_ESYSERR;
        if (rc == 0)
            continue;
        if (groups_recv(self, &mp, ZMQ_DONTWAIT) < 0)
            continue;
        if (groups_take_deferred(self, &mp) || groups_take_vmwait(self, &mp)) {
            gd_multipart_close(&mp);
            continue;
        }
        if (self->recv_awaited && self->recv_awaited != reqid && groups_early_keep(self, &mp))
            continue;                   /* an outer wait's answer (see groups_early_keep) */
    got:;
        gd_msg_t reply;
        if (mp.truncated || gd_reply_decode(cmd, mp.frames, mp.nparts, &reply) != GD_OK
            || reply.reqid != reqid) {
            gd_multipart_close(&mp);    /* a late answer to an abandoned request */
            continue;
        }
        gd_sock_destroy(&self->probe, &self->probe_mon);
        int status = reply.values[0].i;
        if (published)
            gimpi_groups_status(self, NULL, 0, 0, 0);
        groups_saw(self, reply.values[1].q);
        if (cmd != GD_BARRIER && cmd != GD_FREEZE && cmd != GD_VMREQ
            && self->streak > EXPLORE_SETTLE)
            s_note_latency(self, spin, gimpi_now_ns() - sent_ns);
        if (reply_out)
            *reply_out = reply;
        if (mp_out)
            *mp_out = mp;
        else
            gd_multipart_close(&mp);
        return status;
    }
}

/*  HELLO on a new ipc connection, within timeout_ms: when it has been neither accepted
 *  nor handshaken within HELLO_RETRY_MS the connection is given up (the caller makes
 *  another), since an answer may never come on it; once it has, the answer is waited for
 *  (another connection with our routing id would not be served while this one holds it;
 *  and a busy groupd, its handshakes slowed by its own loop's ZAP answers, would only get
 *  more of them to do).  0 or -1; with mp_out the reply is kept for the caller (who
 *  closes it). */
static int s_hello(gimpi_groups_t *self, int64_t timeout_ms, gd_multipart_t *mp_out,
                   gd_msg_t *reply_out)
{
    int64_t sent_ns = gimpi_now_ns(), end = gimpi_now_ms() + timeout_ms;
    uint8_t term[4];
    gimpi_be_put32(term, (uint32_t)self->term);
    gd_value_t v = { .data = term, .len = sizeof term };
    int64_t reqid = groups_send_request(self, GD_HELLO, &v, 1);
    if (reqid < 0)
        return -1;
    gd_multipart_t mp;
    gd_msg_t reply;
    int first = timeout_ms < HELLO_RETRY_MS ? (int)timeout_ms : HELLO_RETRY_MS;
    int rc = s_await(self, GD_HELLO, (uint32_t)reqid, sent_ns, first, &mp, &reply);
    if (rc < 0 && self->state == 1 && !groups_check_monitor(self)
        && (self->handshaken || self->connected) && gimpi_now_ms() < end)
        rc = s_await(self, GD_HELLO, (uint32_t)reqid, sent_ns, (int)(end - gimpi_now_ms()),
                     &mp, &reply);
    if (rc >= 0 && mp_out) {
        *mp_out = mp;
        *reply_out = reply;
    } else if (rc >= 0)
        gd_multipart_close(&mp);
    return rc >= 0 ? 0 : -1;
}

/*  Sends a request and waits for its reply (see s_await). */
int groups_request(gimpi_groups_t *self, uint8_t cmd, const gd_value_t *values, int nvalues,
                   int timeout_ms, gd_multipart_t *mp_out, gd_msg_t *reply_out)
{
    if (mp_out)
        memset(mp_out, 0, sizeof *mp_out);
    if (reply_out)
        memset(reply_out, 0, sizeof *reply_out);
    int64_t sent_ns = gimpi_now_ns();     /* before: the send may hand the CPU over */
    int64_t reqid = groups_send_request(self, cmd, values, nvalues);
    if (reqid < 0)
        return (int)reqid;
    bool waits = cmd == GD_BARRIER || cmd == GD_FREEZE
              || (cmd == GD_MBOX_GET && timeout_ms < 0);     /* (PvmMboxWaitForInfo) */
    self->waiting = waits && self->status_ms > 0 ? values : NULL;
    int rc = s_await(self, cmd, (uint32_t)reqid, sent_ns, timeout_ms, mp_out, reply_out);
    self->waiting = NULL;
    return rc;
}

/*  Waits until groupd has answered every deferred leave (bounded).  0, or GIMPI_ESYSERR
 *  when groupd is gone or does not answer (the object is then dead). */
int groups_flush_leaves(gimpi_groups_t *self)
{
    int rc = groups_flush_until(self, 0);
    while (rc == 0 && self->mbox_quiet)         /* (the receipt found no free slot) */
        if ((rc = groups_receipt(self)) == 0)
            rc = groups_flush_until(self, 0);
    return rc;
}

/*  Defers a PING behind the puts sent without a reply (gimpi_groups_mbox.c): groupd
 *  answers it only once it has them (it takes one connection's requests in order).
 *  Needs a free deferred slot (else does nothing).  0 or an error. */
int groups_receipt(gimpi_groups_t *self)
{
    if (!self->mbox_quiet || self->ndeferred == MAX_DEFERRED)
        return 0;
    int64_t reqid = groups_send_request(self, GD_PING, NULL, 0);
    if (reqid < 0)
        return (int)reqid;
    self->deferred[self->ndeferred].reqid = (uint32_t)reqid;
    self->deferred[self->ndeferred++].group = NULL;
    self->mbox_quiet = 0;
    return 0;
}

/*  Waits until at most keep deferred requests are unanswered (bounded); as
 *  groups_flush_leaves, but puts sent without a reply are not waited for. */
int groups_flush_until(gimpi_groups_t *self, int keep)
{
    int rc0 = keep == 0 ? groups_receipt(self) : 0;
    if (rc0)
        return rc0;
    int64_t deadline = gimpi_now_ms() + REQUEST_TIMEOUT_MS;
    while (self->ndeferred > keep) {
        int rc = self->state == 1 ? s_wait_reply(self, deadline, s_spin_choice(self, false))
                                  : -1;
        if (rc < 0) {
            self->state = -1;
            while (self->ndeferred > 0)
                free(self->deferred[--self->ndeferred].group);
            return GIMPI_ESYSERR;
        }
        gd_multipart_t mp;
        if (rc == 0 || groups_recv(self, &mp, ZMQ_DONTWAIT) < 0)
            continue;
        if (!groups_take_deferred(self, &mp))    /* anything else: a late answer, dropped */
            groups_take_vmwait(self, &mp);
        gd_multipart_close(&mp);
    }
    return 0;
}

/*  Waits until groupd has every leave this task made (gimpi_group.h). */
int gimpi_groups_flush(gimpi_groups_t *self)
{
    if (!self || (self->ndeferred == 0 && self->mbox_quiet == 0))
        return 0;
    return groups_flush_leaves(self);
}

/* ------------------------------------------------------------------ tids and lookups */

/*  RESERVE: a block of n fresh tids (same base for the same non-empty key), whose token
 *  the object keeps (its own registration in the block presents it). */
int gimpi_groups_reserve(gimpi_groups_t *self, const char *key, int n)
{
    return gimpi_groups_reserve_token(self, key, n, NULL);
}

/*  RESERVE, and the block's token as text. */
int gimpi_groups_reserve_token(gimpi_groups_t *self, const char *key, int n,
                               char token[GIMPI_GROUPS_TOKEN_LEN + 1])
{
    assert(self);
    if (!key)
        key = "";
    if (strlen(key) > GD_MAX_TEXT || n < 1 || n > GIMPI_GROUPS_MAX_RESERVE)
        return GIMPI_EBADPARAM;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    gd_value_t v[2] = { { .data = (const uint8_t *)key, .len = strlen(key) }, { .i = n } };
    gd_multipart_t mp;
    gd_msg_t reply;
    int base = groups_request(self, GD_RESERVE, v, 2, REQUEST_TIMEOUT_MS, &mp, &reply);
    if (base >= 0) {
        self->tok_base = base;
        self->tok_n = n;
        memcpy(self->tok, reply.values[2].data, GD_TOKEN_SIZE);
        if (token)
            sodium_bin2hex(token, GIMPI_GROUPS_TOKEN_LEN + 1, self->tok, GD_TOKEN_SIZE);
    }
    gd_multipart_close(&mp);
    return base;
}

/*  No groupd for this object: every later call is GIMPI_ESYSERR. */
void gimpi_groups_disable(gimpi_groups_t *self)
{
    assert(self);
    if (!(self->state == 1 && self->tid > 0))
        self->state = -1;
}

/*  The tid to register as (before the object registers). */
int gimpi_groups_set_tid(gimpi_groups_t *self, int tid)
{
    assert(self);
    if (self->state < 0 || self->tid > 0)
        return GIMPI_EALREADY;
    if (tid <= 0)
        return GIMPI_EBADPARAM;
    self->want_tid = tid;
    return 0;
}

/*  The tid to register as, with its block's token (text). */
int gimpi_groups_set_tid_token(gimpi_groups_t *self, int tid, const char *token)
{
    assert(self);
    size_t len = 0;
    if (!token || strlen(token) != GIMPI_GROUPS_TOKEN_LEN
        || sodium_hex2bin(self->want_tok, sizeof self->want_tok, token, GIMPI_GROUPS_TOKEN_LEN,
                          NULL, &len, NULL) != 0
        || len != GD_TOKEN_SIZE)
        return GIMPI_EBADPARAM;
    int rc = gimpi_groups_set_tid(self, tid);
    self->have_want_tok = rc == 0;
    return rc;
}

/*  LOOKUP on a connected object: the registration data of a tid. */
static int s_lookup(gimpi_groups_t *self, int tid, gimpi_task_info_t *info, int timeout_ms)
{
    gd_value_t v = { .i = tid };
    gd_multipart_t mp;
    gd_msg_t reply;
    int rc = groups_request(self, GD_LOOKUP, &v, 1, timeout_ms, &mp, &reply);
    if (rc >= 0) {
        impi_proc_t proc;
        impi_proc_decode(reply.values[2].data, &proc);
        memset(info, 0, sizeof *info);
        memcpy(info->hostid, proc.hostid, 16);
        info->pid = proc.pid;
        memcpy(info->addr, reply.values[3].data, 16);
        info->port = reply.values[4].i;
        info->ospid = reply.values[5].i;
        snprintf(info->host, sizeof info->host, "%.*s", (int)reply.values[6].len,
                 (const char *)reply.values[6].data);
    }
    gd_multipart_close(&mp);
    return rc;
}

/*  Registration data of a tid. */
int gimpi_group_lookup(gimpi_groups_t *self, int tid, gimpi_task_info_t *info)
{
    assert(self);
    assert(info);
    int rc = groups_ready(self);
    return rc ? rc : s_lookup(self, tid, info, REQUEST_TIMEOUT_MS);
}

/*  Registration data of a tid, asked on an object that never registers. */
int gimpi_groups_lookup_only(gimpi_groups_t *self, int tid, gimpi_task_info_t *info)
{
    assert(self);
    assert(info);
    int rc = groups_connect(self);
    return rc ? rc : s_lookup(self, tid, info, REQUEST_TIMEOUT_MS);
}

/*  Why the object's calls fail, in words, into buf: no groupd program to start, groupd
 *  refused this task, is gone, or was never reached; "" while the connection works. */
const char *gimpi_groups_errmsg(gimpi_groups_t *self, char *buf, size_t size)
{
    assert(self);
    assert(buf && size > 0);
    buf[0] = 0;
    if (self->state >= 0)
        return buf;
    if (self->noprog)
        snprintf(buf, size, "no groupd program was found to serve %s; set GIMPI_GROUPD_BIN "
                 "to one", self->endpoint);
    else if (self->refused)
        snprintf(buf, size, "groupd at %s refused this task", self->endpoint);
    else if (self->pub_endpoint[0])
        snprintf(buf, size, "groupd at %s is gone", self->endpoint);
    else
        snprintf(buf, size, "groupd at %s unreachable", self->endpoint);
    return buf;
}

/*  Tells groupd, without waiting, that this task waits in a barrier of `count` on group
 *  on the data plane (count 0: no longer); gimpi-stat shows it.  The reply is dropped when
 *  it comes.  0, or an error of sending. */
int gimpi_groups_barrier_note(gimpi_groups_t *self, const char *group, int count)
{
    assert(self);
    if (self->state != 1 || !group || !*group || strlen(group) > GD_MAX_NAME)
        return GIMPI_ESYSERR;
    gd_value_t v[2] = { { .data = (const uint8_t *)group, .len = strlen(group) },
                        { .i = count } };
    int64_t reqid = groups_send_request(self, GD_BARRIER_NOTE, v, 2);
    return reqid < 0 ? (int)reqid : 0;
}
