/*  gimpi_groups.c — the task side of the group-control plane (see include/gimpi_group.h).
 *
 *  One gimpi_groups_t owns a DEALER socket (requests to groupd's ROUTER), a socket monitor
 *  on it (the connection's end means groupd is gone: every later call is GIMPI_ESYSERR),
 *  and, from the first query of a group, a SUB socket on groupd's event stream feeding a
 *  membership cache.  A cache entry becomes current in three steps: subscribe; wait for
 *  any event on the group's topic (groupd publishes a MARK when the subscription reaches
 *  it, which proves the subscription is live); fetch a SNAPSHOT.  From then on events are
 *  applied in version order (each carries the group's previous version; a gap sends the
 *  entry back to the snapshot step).  Own joins, leaves and barrier releases carry the
 *  group's version: the caller waits until its cache has caught up with it, which is what
 *  makes the consistency promise hold.  The SUB socket is read only between requests, so
 *  no event can slip between a snapshot and the events after it.
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

/*  New unconnected object. */
gimpi_groups_t *gimpi_groups_new(const char *endpoint, void *zmq_context)
{
    gimpi_groups_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    if (!endpoint || !*endpoint)
        endpoint = getenv("GIMPI_GROUPD");
    if (endpoint && *endpoint) {
        if (strlen(endpoint) >= sizeof self->endpoint - 8) {
            free(self);
            return NULL;
        }
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
    const char *spin = getenv("GIMPI_GROUPS_SPIN_US");
    long spin_us = spin && *spin ? atol(spin) : SPIN_US;
    self->spin_ns = (spin_us < 0 ? 0 : spin_us > 10000 ? 10000 : spin_us) * 1000LL;
    const char *hold = getenv("GIMPI_GROUPS_HOLD_MS");
    long hold_ms = hold && *hold ? atol(hold) : HOLD_MS;
    self->hold_ns = (hold_ms < 0 ? 0 : hold_ms > 1000 ? 1000 : hold_ms) * 1000000LL;
    const char *sync_leave = getenv("GIMPI_GROUPS_SYNC_LEAVE");
    self->sync_leave = sync_leave && *sync_leave && strcmp(sync_leave, "0") != 0;
    impi_addr16_from_ipv4(self->hostid, 0x7F000001);
    memcpy(self->addr, self->hostid, 16);
    self->pid = getpid();
    /* generations of objects made one after another at one address stay far apart */
    self->gen = ((uint64_t)groups_now_ns() | 1) * 0x9E3779B97F4A7C15ULL;
    return self;
}

/*  Frees one cache entry (hash visitor). */
static void s_free_entry_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    centry_t *e = v;
    free(e->slots);
    free(e);
}

static void s_close_dealer(gimpi_groups_t *self);

/*  Unregisters, closes, frees. */
void gimpi_groups_destroy(gimpi_groups_t **self_p)
{
    assert(self_p);
    gimpi_groups_t *self = *self_p;
    if (!self)
        return;
    if (self->state == 1 && self->tid > 0)
        groups_request(self, GD_UNREGISTER, NULL, 0, 2000, NULL, NULL);
    if (self->cache) {
        gd_hash_foreach(self->cache, s_free_entry_cb, NULL);
        gd_hash_destroy(&self->cache);
    }
    gd_hash_destroy(&self->mine);
    while (self->held) {
        held_t *h = self->held;
        self->held = h->next;
        free(h);
    }
    for (int i = 0; i < self->ndeferred; i++)
        free(self->deferred[i].group);
    gd_multipart_close(&self->vm_mp);
    if (self->watch_free)
        self->watch_free(self->watch);
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

/*  The endpoint in use. */
const char *gimpi_groups_endpoint(gimpi_groups_t *self)
{
    assert(self);
    return self->endpoint;
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
 *  and connects.  0 or -1. */
static int s_open_dealer(gimpi_groups_t *self, int attempt)
{
    char mon[64], err[GD_SOCK_ERRLEN];
    snprintf(mon, sizeof mon, "inproc://gimpi-groups-%p-%d", (void *)self, attempt);
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_TASK_DEALER, self->endpoint);
    o.monitor_events = ZMQ_EVENT_DISCONNECTED | GD_SOCK_HANDSHAKE_EVENTS;
    o.monitor_endpoint = mon;
    self->handshaken = false;
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

/*  Closes the DEALER socket and its monitor. */
static void s_close_dealer(gimpi_groups_t *self)
{
    gd_sock_destroy(&self->dealer, &self->monitor);
}

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
    for (int attempt = 0;; attempt++) {
        self->state = -1;           /* until proven otherwise */
        if (ipc && !groups_ipc_alive(self->endpoint) && groups_start_groupd(self) < 0)
            return GIMPI_ESYSERR;
        if (s_open_dealer(self, attempt) < 0)
            return GIMPI_ESYSERR;
        self->state = 1;
        if (groups_request(self, GD_HELLO, NULL, 0, HELLO_TIMEOUT_MS, &mp, &reply) >= 0)
            break;
        self->state = -1;
        if (!ipc || attempt == 1 || self->refused)
            return GIMPI_ESYSERR;
        s_close_dealer(self);
    }
    const gd_value_t *ep = &reply.values[2];
    snprintf(self->pub_endpoint, sizeof self->pub_endpoint, "%.*s", (int)ep->len,
             (const char *)ep->data);
    gd_multipart_close(&mp);
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
    const char *vmhost = getenv("GIMPI_HOST");
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

/*  groupd refused our handshake: the object is dead, and one line says why. */
static void s_refused(gimpi_groups_t *self, const char *why)
{
    self->state = -1;
    if (self->refused)
        return;
    self->refused = true;
    if (self->have_key)
        fprintf(stderr, "gimpi: groupd at %s refused us: %s (ours: %s)\n", self->endpoint, why,
                self->keydesc);
    else
        fprintf(stderr, "gimpi: groupd at %s refused us: %s (we are uid %u)\n", self->endpoint,
                why, (unsigned)geteuid());
}

/*  1 when the monitor reports the connection to groupd closed (the object is then dead).
 *  ZMQ_EVENTS first: a plain non-blocking receive may be throttled and miss a queued event. */
int groups_check_monitor(gimpi_groups_t *self)
{
    for (;;) {
        int ev = 0;
        size_t el = sizeof ev;
        if (zmq_getsockopt(self->monitor, ZMQ_EVENTS, &ev, &el) < 0 || !(ev & ZMQ_POLLIN))
            return self->state < 0;
        gd_multipart_t mp;
        if (gd_multipart_recv(self->monitor, &mp, ZMQ_DONTWAIT) < 0)
            return self->state < 0;
        if (mp.nparts >= 1 && mp.frames[0].len >= 6) {
            uint16_t event = (uint16_t)(mp.frames[0].data[0] | mp.frames[0].data[1] << 8);
            uint32_t value;
            memcpy(&value, mp.frames[0].data + 2, 4);
            const char *why = gd_sock_refusal(event, (int)value, self->handshaken,
                                              self->have_key);
            if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
                self->handshaken = true;
            if (why && event != ZMQ_EVENT_DISCONNECTED)
                s_refused(self, why);
            if (event == ZMQ_EVENT_DISCONNECTED) {
                if (why && self->have_key)
                    s_refused(self, why);
                self->state = -1;
            }
        }
        gd_multipart_close(&mp);
    }
}

/*  Waits until the DEALER has a message (1), the deadline passed or groupd is gone (-1),
 *  or nothing yet (0, e.g. a signal).  Cheaper than zmq_poll on both sockets, which costs
 *  about ten system calls per reply: ZMQ_EVENTS once (it also takes any activation that a
 *  send consumed), then one poll(2) on the two notification fds.  The monitor fd is
 *  reliable on its own: nothing but groups_check_monitor touches that socket, and it reads it
 *  empty, so every later monitor message signals the fd anew.
 *  When replies have lately come within spin_ns (a lightly loaded groupd), the thread
 *  first waits awake for up to spin_ns: a reply then costs no wake-up of this thread,
 *  which on an idle (halted) CPU is the dearest step of the round trip (joinlv n = 1:
 *  +45 %).  Under load the latency average exceeds spin_ns and nobody spins. */
static int s_wait_reply(gimpi_groups_t *self, int64_t deadline)
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
    if (self->spin_ns > 0 && self->lat_ns <= self->spin_ns) {
        /* replies have been coming back within the spin: wait for this one awake
           (sched_yield lets whatever else wants this CPU run first) */
        int64_t end = groups_now_ns() + self->spin_ns;
        do {
            sched_yield();
            if (poll(pf, 1, 0) > 0)
                return 0;
        } while (groups_now_ns() < end);
    }
    long left = deadline < 0 ? -1 : (long)(deadline - groups_now_ms());
    if (deadline >= 0 && left < 0)
        return -1;
    if (poll(pf, 2, left > INT32_MAX ? INT32_MAX : (int)left) < 0 && errno != EINTR)
        return -1;
    if (pf[1].revents && groups_check_monitor(self))
        return -1;
    return 0;               /* the caller looks at the DEALER again (ZMQ_EVENTS above) */
}

/*  Sends a request without waiting.  Returns its request id (> 0) or an error. */
int64_t groups_send_request(gimpi_groups_t *self, uint8_t cmd, const gd_value_t *values,
                            int nvalues)
{
    if (self->state != 1)
        return GIMPI_ESYSERR;
    /* (the wait for the reply watches the monitor too; a look first only when it is due) */
    int64_t now = groups_now_ns();
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
    if (gd_send_frames(self->dealer, NULL, 0, frames, 1 + n, 0) < 0)
        return GIMPI_ESYSERR;
    self->n_remote++;
    return reqid;
}

static void s_sync(gimpi_groups_t *self, const char *group, uint64_t version);

/*  Raises the highest groupd version this task knows of. */
static inline void s_saw(gimpi_groups_t *self, uint64_t version)
{
    if (version > self->seen) {
        self->seen = version;
        self->gen++;
    }
}

/*  An event of `version` applied: the task-wide mark and what it has seen rise. */
static void s_saw_event(gimpi_groups_t *self, uint64_t version)
{
    if (version > self->ev_through) {
        self->ev_through = version;
        self->gen++;
    }
    s_saw(self, version);
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
        if (gd_reply_decode(GD_LEAVE, mp->frames, mp->nparts, &reply) == GD_OK
            && reply.values[1].q && self->state == 1) {
            s_saw(self, reply.values[1].q);
            s_sync(self, group, reply.values[1].q);
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

/*  Waits for the reply to request `reqid` (timeout_ms < 0: as long as groupd lives),
 *  taking the replies of deferred leaves on the way.  Returns the reply's status or
 *  GIMPI_ESYSERR.  With mp_out the reply is kept for the caller (who closes it); its
 *  status is values[0], version values[1], extras after. */
static int s_await(gimpi_groups_t *self, uint8_t cmd, uint32_t reqid, int timeout_ms,
                   gd_multipart_t *mp_out, gd_msg_t *reply_out)
{
    int64_t sent_ns = groups_now_ns();
    int64_t deadline = timeout_ms < 0 ? -1 : groups_now_ms() + timeout_ms;
    for (;;) {
        int rc = s_wait_reply(self, deadline);
        if (rc < 0)
            return GIMPI_ESYSERR;
        if (rc == 0)
            continue;
        gd_multipart_t mp;
        if (gd_multipart_recv(self->dealer, &mp, ZMQ_DONTWAIT) < 0)
            continue;
        if (groups_take_deferred(self, &mp) || groups_take_vmwait(self, &mp)) {
            gd_multipart_close(&mp);
            continue;
        }
        gd_msg_t reply;
        if (mp.truncated || gd_reply_decode(cmd, mp.frames, mp.nparts, &reply) != GD_OK
            || reply.reqid != reqid) {
            gd_multipart_close(&mp);    /* a late answer to an abandoned request */
            continue;
        }
        int status = reply.values[0].i;
        s_saw(self, reply.values[1].q);
        if (cmd != GD_BARRIER && cmd != GD_FREEZE && cmd != GD_VMREQ)
            self->lat_ns += (groups_now_ns() - sent_ns - self->lat_ns) / 8;
        if (reply_out)
            *reply_out = reply;
        if (mp_out)
            *mp_out = mp;
        else
            gd_multipart_close(&mp);
        return status;
    }
}

/*  Sends a request and waits for its reply (see s_await). */
int groups_request(gimpi_groups_t *self, uint8_t cmd, const gd_value_t *values, int nvalues,
                   int timeout_ms, gd_multipart_t *mp_out, gd_msg_t *reply_out)
{
    if (mp_out)
        memset(mp_out, 0, sizeof *mp_out);
    if (reply_out)
        memset(reply_out, 0, sizeof *reply_out);
    int64_t reqid = groups_send_request(self, cmd, values, nvalues);
    if (reqid < 0)
        return (int)reqid;
    return s_await(self, cmd, (uint32_t)reqid, timeout_ms, mp_out, reply_out);
}

/*  Waits until groupd has answered every deferred leave (bounded).  0, or GIMPI_ESYSERR
 *  when groupd is gone or does not answer (the object is then dead). */
static int s_flush(gimpi_groups_t *self)
{
    int64_t deadline = groups_now_ms() + REQUEST_TIMEOUT_MS;
    while (self->ndeferred > 0) {
        int rc = self->state == 1 ? s_wait_reply(self, deadline) : -1;
        if (rc < 0) {
            self->state = -1;
            while (self->ndeferred > 0)
                free(self->deferred[--self->ndeferred].group);
            return GIMPI_ESYSERR;
        }
        gd_multipart_t mp;
        if (rc == 0 || gd_multipart_recv(self->dealer, &mp, ZMQ_DONTWAIT) < 0)
            continue;
        if (!groups_take_deferred(self, &mp))    /* anything else: a late answer, dropped */
            groups_take_vmwait(self, &mp);
        gd_multipart_close(&mp);
    }
    return 0;
}

/* ------------------------------------------------------------------ the cache */

/*  Puts tid at inst, growing the slot table. */
static int s_slot_set(centry_t *e, int32_t inst, int32_t tid)
{
    if (inst < 0 || inst > (1 << 24))
        return -1;
    if (inst >= e->cap) {
        int cap = e->cap ? e->cap : 8;
        while (cap <= inst)
            cap *= 2;
        int32_t *ns = realloc(e->slots, (size_t)cap * sizeof *ns);
        if (!ns)
            return -1;
        memset(ns + e->cap, 0, (size_t)(cap - e->cap) * sizeof *ns);
        e->slots = ns;
        e->cap = cap;
    }
    e->slots[inst] = tid;
    return 0;
}

/*  Applies one event to its entry (version rules in the file comment). */
static void s_apply(centry_t *e, const gd_msg_t *ev)
{
    uint64_t prev = ev->values[0].q, version = ev->values[1].q;
    int32_t inst = ev->values[2].i, tid = ev->values[3].i, extra = ev->values[4].i;
    if (e->state == C_SUBSCRIBING) {
        e->state = C_MARKED;    /* anything on the topic proves the subscription */
        return;
    }
    if (e->state != C_CURRENT || ev->kind == GD_EV_MARK || version <= e->version)
        return;
    if (prev == 0 && ev->kind == GD_EV_JOIN) {
        if (e->slots)
            memset(e->slots, 0, (size_t)e->cap * sizeof *e->slots);
        e->exists = true;
        e->dead = false;
        e->frozen = 0;
    } else if (prev != e->version || !e->exists) {
        e->state = C_MARKED;    /* missed something: snapshot again */
        return;
    }
    switch (ev->kind) {
    case GD_EV_JOIN:
        if (s_slot_set(e, inst, tid) < 0) {
            e->state = C_MARKED;
            return;
        }
        break;
    case GD_EV_LEAVE:
    case GD_EV_EXIT:
        if (inst >= 0 && inst < e->cap)
            e->slots[inst] = 0;
        if (extra == 0)
            e->exists = false;
        break;
    case GD_EV_FREEZE:
        e->frozen = extra;
        extra = e->size;        /* the frozen size, not the member count */
        break;
    case GD_EV_DEAD:
        e->dead = true;
        break;
    default:
        break;
    }
    e->size = extra;
    e->version = version;
}

/*  Applies one event of a group to its entry, if the group is watched. */
static void s_apply_to(gimpi_groups_t *self, const char *group, size_t len, const gd_msg_t *ev)
{
    centry_t *e = gd_hash_get(self->cache, group, len);
    if (e) {
        s_apply(e, ev);
        self->gen++;
    }
}

/*  Applies the held events that are due: every one up to version `need`, and the ones
 *  held long enough.  They go in order, so the task-wide mark stays true: an event of
 *  version v applied means every earlier one of every live topic is applied too. */
static void s_apply_due(gimpi_groups_t *self, uint64_t need)
{
    int64_t now = self->held ? groups_now_ns() : 0;
    while (self->held
           && (self->held->ev.values[1].q <= need || now - self->held->at_ns >= self->hold_ns)) {
        held_t *h = self->held;
        self->held = h->next;
        if (!self->held)
            self->held_tail = NULL;
        s_apply_to(self, h->group, h->len, &h->ev);
        s_saw_event(self, h->ev.values[1].q);
        free(h);
    }
}

/*  Reads one event from the SUB socket (flags 0 or ZMQ_DONTWAIT) into the held ones (a
 *  MARK, which only proves a subscription, is applied at once); 1 read, 0 none. */
static int s_read_event(gimpi_groups_t *self, int flags)
{
    gd_multipart_t mp;
    if (gd_multipart_recv(self->sub, &mp, flags) < 0)
        return 0;
    gd_msg_t ev;
    if (!mp.truncated && gd_event_decode(mp.frames, mp.nparts, &ev) == GD_OK) {
        const char *group = (const char *)mp.frames[0].data + 1;
        size_t len = mp.frames[0].len - 1;
        held_t *h = ev.kind == GD_EV_MARK || self->hold_ns == 0 ? NULL
                  : malloc(sizeof *h + len + 1);
        if (!h) {
            s_apply_due(self, UINT64_MAX);  /* keep the order: the held ones go first */
            s_apply_to(self, group, len, &ev);
            if (ev.kind != GD_EV_MARK)
                s_saw_event(self, ev.values[1].q);
        } else {
            h->next = NULL;
            h->at_ns = groups_now_ns();
            h->ev = ev;
            for (int i = 0; i < ev.nvalues; i++)
                h->ev.values[i].data = NULL;
            h->len = len;
            memcpy(h->group, group, len);
            h->group[len] = 0;
            if (self->held_tail)
                self->held_tail->next = h;
            else
                self->held = h;
            self->held_tail = h;
        }
    }
    gd_multipart_close(&mp);
    return 1;
}

/*  Reads every event already queued and applies the due ones, up to version `need`. */
static void s_drain_to(gimpi_groups_t *self, uint64_t need)
{
    if (self->sub)
        while (s_read_event(self, ZMQ_DONTWAIT))
            ;
    s_apply_due(self, need);
}

/*  Reads every event queued; applies the ones due (what the task has seen, the old). */
static void s_drain(gimpi_groups_t *self)
{
    s_drain_to(self, self->seen);
}

/*  Waits (bounded) until a current entry has reached `version`. */
static void s_sync(gimpi_groups_t *self, const char *group, uint64_t version)
{
    centry_t *e = gd_hash_get(self->cache, group, strlen(group));
    if (!e || !self->sub)
        return;
    s_drain_to(self, version);
    int64_t deadline = groups_now_ms() + SYNC_TIMEOUT_MS;
    while (e->state == C_CURRENT && e->version < version) {
        long left = (long)(deadline - groups_now_ms());
        zmq_pollitem_t items[] = {
            { self->sub, 0, ZMQ_POLLIN, 0 },
            { self->monitor, 0, ZMQ_POLLIN, 0 },
        };
        if (left <= 0 || zmq_poll(items, 2, left) <= 0 || groups_check_monitor(self)) {
            e->state = C_MARKED;        /* not caught up: ask groupd next time */
            self->gen++;
            return;
        }
        s_drain_to(self, version);
    }
}

static void s_refresh(gimpi_groups_t *self, const char *group, centry_t *e);

/*  After a barrier's release: a member's entry of the group, watched since the barrier
 *  began (gimpi_group_barrier) or since an earlier query, is made current now (waiting,
 *  bounded, for the subscription's MARK, then one snapshot), so that the queries after
 *  the barrier are answered at once, not by round trips that let the members' later
 *  changes overtake them. */
static void s_settle(gimpi_groups_t *self, const char *group)
{
    centry_t *e = gd_hash_get(self->cache, group, strlen(group));
    if (!e || !self->sub || e->state == C_CURRENT)
        return;
    int64_t deadline = groups_now_ms() + SYNC_TIMEOUT_MS;
    s_drain(self);
    while (e->state == C_SUBSCRIBING) {
        long left = (long)(deadline - groups_now_ms());
        zmq_pollitem_t items[] = {
            { self->sub, 0, ZMQ_POLLIN, 0 },
            { self->monitor, 0, ZMQ_POLLIN, 0 },
        };
        if (left <= 0 || zmq_poll(items, 2, left) <= 0 || groups_check_monitor(self))
            return;                     /* queries ask groupd until the MARK comes */
        s_drain(self);
    }
    if (e->state == C_MARKED)
        s_refresh(self, group, e);
}

/*  Fetches a snapshot into a MARKED entry. */
static void s_refresh(gimpi_groups_t *self, const char *group, centry_t *e)
{
    self->gen++;                        /* (whatever comes of it) */
    gd_multipart_t mp;
    gd_msg_t reply;
    gd_value_t v = { .data = (const uint8_t *)group, .len = strlen(group) };
    int rc = groups_request(self, GD_SNAPSHOT, &v, 1, REQUEST_TIMEOUT_MS, &mp, &reply);
    if (rc == GIMPI_ENOGROUP) {
        gd_multipart_close(&mp);
        e->exists = false;
        e->size = 0;
        e->version = e->sync = reply.values[1].q;     /* (the daemon counter) */
        e->state = C_CURRENT;
        return;
    }
    if (rc < 0) {
        gd_multipart_close(&mp);
        return;
    }
    const gd_value_t *b = &reply.values[2];
    if (b->len < GD_SNAP_HEAD || (b->len - GD_SNAP_HEAD) % 8 != 0) {
        gd_multipart_close(&mp);
        return;
    }
    if (e->slots)
        memset(e->slots, 0, (size_t)e->cap * sizeof *e->slots);
    e->frozen = (int32_t)gd_get32(b->data);
    e->dead = gd_get32(b->data + 4) != 0;
    e->sync = gd_get64(b->data + 8);
    for (size_t off = GD_SNAP_HEAD; off < b->len; off += 8)
        if (s_slot_set(e, (int32_t)gd_get32(b->data + off),
                       (int32_t)gd_get32(b->data + off + 4)) < 0) {
            gd_multipart_close(&mp);
            return;
        }
    e->exists = true;
    e->size = rc;
    e->version = reply.values[1].q;
    e->state = C_CURRENT;
    gd_multipart_close(&mp);
}

/*  Starts watching a group: opens the SUB socket on groupd's event endpoint when this is
 *  the first group watched, adds the group's cache entry (SUBSCRIBING) and subscribes to
 *  its topic.  0, or -1 (no entry: a later query tries again).  A subscription that
 *  cannot be made leaves the entry SUBSCRIBING: queries of the group then ask groupd. */
static int s_watch(gimpi_groups_t *self, const char *group, size_t len)
{
    if (!self->sub) {
        gd_sock_opts_t o;
        gd_sock_opts_init(&o, GD_SOCK_TASK_SUB, self->pub_endpoint);
        if (gd_sock_secure(&o, self->have_key ? &self->key : NULL, NULL, 0) < 0)
            return -1;
        self->sub = gd_sock_new(self->zctx, &o, NULL, NULL, 0);
        gimpi_key_wipe(&o.security, sizeof o.security);
        if (!self->sub)
            return -1;
    }
    centry_t *e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    if (gd_hash_put(self->cache, group, len, e) < 0) {
        free(e);
        return -1;
    }
    self->gen++;
    uint8_t *topic = malloc(len + 1);
    if (topic) {
        topic[0] = 'G';
        memcpy(topic + 1, group, len);
        gd_sock_subscribe(self->sub, topic, len + 1);
        free(topic);
    }
    return 0;
}

/*  1 when a message brought a stamp newer than what the entry is known complete through:
 *  its sender may have seen a change the entry lacks (the causal promise, §6). */
static int s_behind(gimpi_groups_t *self, const centry_t *e)
{
    if (self->stamp_fn)
        s_saw(self, self->stamp_fn(self->stamp_arg));
    uint64_t have = e->sync > self->ev_through ? e->sync : self->ev_through;
    return have < self->seen;
}

/*  The current cache entry of a group at the time now (the caller's clock reading), or
 *  NULL (then the caller asks groupd).  The first query of a group starts watching it
 *  (s_watch). */
static centry_t *s_cached_at(gimpi_groups_t *self, const char *group, int64_t now)
{
    if (now - self->last_check_ns >= CHECK_INTERVAL_NS) {
        s_drain(self);
        self->last_check_ns = now;
    }
    size_t len = strlen(group);
    centry_t *e = gd_hash_get(self->cache, group, len);
    if (!e) {
        s_watch(self, group, len);
        return NULL;
    }
    if (e->state == C_MARKED)
        s_refresh(self, group, e);
    if (e->state == C_CURRENT && s_behind(self, e)) {
        s_drain(self);                  /* the events may be here already */
        if (s_behind(self, e)) {
            self->n_stale++;
            uint64_t need = self->seen;
            e->state = C_MARKED;
            s_refresh(self, group, e);
            if (e->state == C_CURRENT && e->sync < need) {
                e->sync = need;         /* a stamp from beyond this groupd: believe it once */
                self->gen++;
            }
        }
    }
    return e->state == C_CURRENT ? e : NULL;
}

/*  s_cached_at now. */
static centry_t *s_cached(gimpi_groups_t *self, const char *group)
{
    return s_cached_at(self, group, groups_now_ns());
}

/* ------------------------------------------------------------------ the calls */

/*  Common entry: checks the name, connects; *now_ns gets the time it read.  0 or an
 *  error. */
static int s_enter_at(gimpi_groups_t *self, const char *group, int64_t *now_ns)
{
    assert(self);
    if (!group || !*group)
        return GIMPI_ENULLGROUP;
    if (strlen(group) > GD_MAX_NAME)
        return GIMPI_EBADPARAM;
    int rc = groups_ready(self);
    if (rc)
        return rc;
    int64_t now = *now_ns = groups_now_ns();
    if (now - self->last_monitor_ns >= CHECK_INTERVAL_NS) {
        if (groups_check_monitor(self))
            return GIMPI_ESYSERR;
        self->last_monitor_ns = now;
    }
    return 0;
}

/*  s_enter_at, the time not wanted. */
static int s_enter(gimpi_groups_t *self, const char *group)
{
    int64_t now;
    return s_enter_at(self, group, &now);
}

/*  A request carrying the group name and an optional Int4; syncs the cache afterwards. */
static int s_group_call(gimpi_groups_t *self, uint8_t cmd, const char *group, int32_t arg,
                        int timeout_ms, bool sync)
{
    gd_value_t v[2] = { { .data = (const uint8_t *)group, .len = strlen(group) },
                        { .i = arg } };
    int nv = *gd_command_info(cmd)->request == 'n' && gd_command_info(cmd)->request[1] ? 2 : 1;
    gd_multipart_t mp;
    gd_msg_t reply;
    int rc = groups_request(self, cmd, v, nv, timeout_ms, &mp, &reply);
    uint64_t version = reply.values[1].q;
    gd_multipart_close(&mp);
    if (sync && version && self->state == 1) {
        if (cmd == GD_BARRIER && rc == 0)
            s_settle(self, group);
        s_sync(self, group, version);
    }
    return rc;
}

/*  This task's tid. */
int gimpi_group_mytid(gimpi_groups_t *self)
{
    assert(self);
    int rc = groups_ready(self);
    return rc ? rc : self->tid;
}

/*  pvm_joingroup. */
int gimpi_group_join(gimpi_groups_t *self, const char *group)
{
    int rc = s_enter(self, group);
    if (rc)
        return rc;
    rc = s_group_call(self, GD_JOIN, group, 0, REQUEST_TIMEOUT_MS, true);
    if ((rc >= 0 || rc == GIMPI_EDUPGROUP)
        && !gd_hash_get(self->mine, group, strlen(group))
        && gd_hash_put(self->mine, group, strlen(group), self) < 0)
        self->sync_leave = true;        /* out of memory: no longer sure; ask groupd */
    return rc;
}

/*  pvm_lvgroup: deferred (see the file comment) when this task is known to be a member. */
int gimpi_group_leave(gimpi_groups_t *self, const char *group)
{
    int rc = s_enter(self, group);
    if (rc)
        return rc;
    size_t len = strlen(group);
    bool defer = !self->sync_leave && gd_hash_get(self->mine, group, len) != NULL;
    char *copy = NULL;
    if (defer && self->ndeferred == MAX_DEFERRED && (rc = s_flush(self)) != 0)
        return rc;
    if (!defer || !(copy = strdup(group))) {
        rc = s_group_call(self, GD_LEAVE, group, 0, REQUEST_TIMEOUT_MS, true);
        if (rc == 0 || rc == GIMPI_ENOTINGROUP || rc == GIMPI_ENOGROUP)
            gd_hash_del(self->mine, group, len);
        return rc;
    }
    gd_value_t v = { .data = (const uint8_t *)group, .len = len };
    int64_t reqid = groups_send_request(self, GD_LEAVE, &v, 1);
    if (reqid < 0) {
        free(copy);
        return (int)reqid;
    }
    self->deferred[self->ndeferred].reqid = (uint32_t)reqid;
    self->deferred[self->ndeferred++].group = copy;
    gd_hash_del(self->mine, group, len);
    return 0;
}

/*  Waits until groupd has every leave this task made (gimpi_group.h). */
int gimpi_groups_flush(gimpi_groups_t *self)
{
    if (!self || self->ndeferred == 0)
        return 0;
    return s_flush(self);
}

/*  pvm_gettid: from the cache when current. */
int gimpi_group_gettid(gimpi_groups_t *self, const char *group, int inst)
{
    int rc = s_enter(self, group);
    if (!rc && self->ndeferred)
        rc = s_flush(self);
    if (rc)
        return rc;
    centry_t *e = s_cached(self, group);
    if (!e)
        return s_group_call(self, GD_GETTID, group, inst, REQUEST_TIMEOUT_MS, false);
    self->n_local++;
    if (!e->exists)
        return GIMPI_ENOGROUP;
    if (inst < 0 || inst >= e->cap || !e->slots[inst])
        return GIMPI_ENOINST;
    return e->slots[inst];
}

/*  pvm_getinst: from the cache when current. */
int gimpi_group_getinst(gimpi_groups_t *self, const char *group, int tid)
{
    int rc = s_enter(self, group);
    if (!rc && self->ndeferred)
        rc = s_flush(self);
    if (rc)
        return rc;
    centry_t *e = s_cached(self, group);
    if (!e)
        return s_group_call(self, GD_GETINST, group, tid, REQUEST_TIMEOUT_MS, false);
    self->n_local++;
    if (!e->exists)
        return GIMPI_ENOGROUP;
    if (tid > 0)
        for (int i = 0; i < e->cap; i++)
            if (e->slots[i] == tid)
                return i;
    return GIMPI_ENOTINGROUP;
}

/*  pvm_gsize: from the cache when current. */
int gimpi_group_gsize(gimpi_groups_t *self, const char *group)
{
    int rc = s_enter(self, group);
    if (!rc && self->ndeferred)
        rc = s_flush(self);
    if (rc)
        return rc;
    centry_t *e = s_cached(self, group);
    if (!e)
        return s_group_call(self, GD_GSIZE, group, 0, REQUEST_TIMEOUT_MS, false);
    self->n_local++;
    return e->exists ? e->size : GIMPI_ENOGROUP;
}

/*  pvm_barrier: arbitrated by groupd; waits as long as groupd lives.  A member's first
 *  barrier on a group starts watching it (not its join: a task that joins and leaves
 *  without asking would read every other member's changes for nothing). */
int gimpi_group_barrier(gimpi_groups_t *self, const char *group, int count)
{
    int rc = s_enter(self, group);
    if (rc)
        return rc;
    size_t len = strlen(group);
    if (!gd_hash_get(self->cache, group, len) && gd_hash_get(self->mine, group, len))
        s_watch(self, group, len);      /* a member: ready by the release (s_settle) */
    return s_group_call(self, GD_BARRIER, group, count, -1, true);
}

/*  pvm_freezegroup: returns the frozen size. */
int gimpi_group_freeze(gimpi_groups_t *self, const char *group, int size)
{
    int rc = s_enter(self, group);
    return rc ? rc : s_group_call(self, GD_FREEZE, group, size, -1, true);
}

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
static int s_lookup(gimpi_groups_t *self, int tid, gimpi_task_info_t *info)
{
    gd_value_t v = { .i = tid };
    gd_multipart_t mp;
    gd_msg_t reply;
    int rc = groups_request(self, GD_LOOKUP, &v, 1, REQUEST_TIMEOUT_MS, &mp, &reply);
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
    return rc ? rc : s_lookup(self, tid, info);
}

/*  Registration data of a tid, asked on an object that never registers. */
int gimpi_groups_lookup_only(gimpi_groups_t *self, int tid, gimpi_task_info_t *info)
{
    assert(self);
    assert(info);
    int rc = groups_connect(self);
    return rc ? rc : s_lookup(self, tid, info);
}

/* ------------------------------------------------------------------ snapshots */

/*  The membership of a group for the collectives (with the tids when tids is 1): from the
 *  cache when it is current, else one SNAPSHOT round trip (not cached).  Returns the
 *  member count, or an error. */
static int s_snapshot(gimpi_groups_t *self, const char *group, gimpi_group_snap_t *snap,
                      int tids)
{
    assert(snap);
    memset(snap, 0, sizeof *snap);
    int64_t now;
    int rc = s_enter_at(self, group, &now);
    if (!rc && self->ndeferred)
        rc = s_flush(self);
    if (rc)
        return rc;
    centry_t tmp = { 0 };
    centry_t *e = s_cached_at(self, group, now);
    if (e)
        self->n_local++;
    else {
        e = &tmp;
        e->state = C_MARKED;
        s_refresh(self, group, e);
        if (e->state != C_CURRENT) {
            free(tmp.slots);
            return GIMPI_ESYSERR;
        }
    }
    if (!e->exists) {
        free(tmp.slots);
        return GIMPI_ENOGROUP;
    }
    int ninst = 0, n = 0;
    for (int i = 0; i < e->cap; i++)
        if (e->slots[i] > 0) {
            ninst = i + 1;
            n++;
        }
    if (tids) {
        snap->tids = malloc((size_t)(ninst ? ninst : 1) * sizeof *snap->tids);
        if (!snap->tids) {
            free(tmp.slots);
            return GIMPI_ENOMEM;
        }
        for (int i = 0; i < ninst; i++)
            snap->tids[i] = e->slots[i] > 0 ? e->slots[i] : 0;
    }
    snap->ninst = ninst;
    snap->version = e->version;
    snap->frozen = e->frozen;
    snap->dead = e->dead;
    snap->gen = e == &tmp ? 0 : self->gen;
    free(tmp.slots);
    return n;
}

/*  The membership of a group with its tids (gimpi_group.h). */
int gimpi_group_snapshot(gimpi_groups_t *self, const char *group, gimpi_group_snap_t *snap)
{
    return s_snapshot(self, group, snap, 1);
}

/*  The group's state without its tids (gimpi_group.h). */
int gimpi_group_state(gimpi_groups_t *self, const char *group, gimpi_group_snap_t *snap)
{
    return s_snapshot(self, group, snap, 0);
}

/*  Whether the answer of generation gen stands (gimpi_group.h).  What the slow path would
 *  do first is each a reason to take it: sockets due (events or the monitor), a deferred
 *  leave, a newer stamp; the rest of its answer rests on the generation. */
int gimpi_group_unchanged(gimpi_groups_t *self, uint64_t gen)
{
    assert(self);
    if (!gen || gen != self->gen || self->state != 1 || self->ndeferred)
        return 0;
    int64_t now = groups_now_ns();
    if (now - self->last_check_ns >= CHECK_INTERVAL_NS
        || now - self->last_monitor_ns >= CHECK_INTERVAL_NS)
        return 0;
    if (self->stamp_fn && self->stamp_fn(self->stamp_arg) > self->seen)
        return 0;
    self->n_local++;
    return 1;
}

/*  Where the stamps of arriving messages come from (gimpi_group.h). */
void gimpi_groups_set_stamp_source(gimpi_groups_t *self, gimpi_groups_stamp_fn fn, void *arg)
{
    assert(self);
    self->stamp_fn = fn;
    self->stamp_arg = arg;
}

/*  The highest groupd version this task has seen (gimpi_group.h). */
uint64_t gimpi_groups_seen(gimpi_groups_t *self)
{
    if (!self)
        return 0;
    if (self->stamp_fn)
        s_saw(self, self->stamp_fn(self->stamp_arg));
    return self->seen;
}

/*  Cached answers refused as older than a stamp (gimpi_group.h). */
uint64_t gimpi_groups_stale(gimpi_groups_t *self)
{
    assert(self);
    return self->n_stale;
}

/*  Why the object's calls fail, in words, into buf: groupd refused this task, is gone, or
 *  was never reached; "" while the connection works. */
const char *gimpi_groups_errmsg(gimpi_groups_t *self, char *buf, size_t size)
{
    assert(self);
    assert(buf && size > 0);
    buf[0] = 0;
    if (self->state >= 0)
        return buf;
    if (self->refused)
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
