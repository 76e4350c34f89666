/*  gimpi_groups_notify.c — a task's watches of other tasks' ends and of the host table
 *  (gimpi_groups_notify.h), on a SUB socket of their own next to the membership cache's:
 *  the cache's socket drains every event it reads, and its topics are groups, so the two
 *  never see each other's traffic.  Events read while a new watch waits for its MARK are
 *  kept, in order, for gimpi_groups_watch_next.  The socket opens with the first watch and
 *  closes with the groups object (groups_internal.h's watch_free).
 */
#include "config.h"
#include "groups/gimpi_groups_notify.h"
#include "groups/groups_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/*  The watches' state. */
typedef struct {
    void *sub;
    gd_hash_t *count;           /* topic -> how many watches want it (intptr_t) */
    bool hosts;                 /* "H" subscribed */
    gimpi_groups_event_t *q;    /* events read while waiting for a MARK, oldest first */
    int nq, qcap;
    char ep[512];               /* the event endpoint sub is connected to */
} watch_t;

/*  Frees the watches (groups_internal.h's watch_free). */
static void s_watch_free(void *arg)
{
    watch_t *w = arg;
    if (!w)
        return;
    gd_sock_destroy(&w->sub, NULL);
    gd_hash_destroy(&w->count);
    free(w->q);
    free(w);
}

static void s_resync(gimpi_groups_t *self, watch_t *w);

/*  (Re)opens the watches' SUB socket on groupd's event endpoint ("H" subscribed again
 *  when it was).  0 or -1. */
static int s_open_sub(gimpi_groups_t *self, watch_t *w)
{
    gd_sock_destroy(&w->sub, NULL);
    if (!(w->sub = groups_sub_new(self)))
        return -1;
    snprintf(w->ep, sizeof w->ep, "%s", self->pub_endpoint);
    if (w->hosts)
        gd_sock_subscribe(w->sub, (const uint8_t *)"H", 1);
    return 0;
}

/*  The watches of a registered task, made (with their socket, on groupd's event
 *  endpoint) on first use; NULL with *rc set when they cannot be. */
static watch_t *s_watch(gimpi_groups_t *self, int *rc)
{
    *rc = groups_ready(self);
    if (*rc)
        return NULL;
    *rc = GIMPI_ESYSERR;
    watch_t *old = self->watch;
    if (old && strcmp(old->ep, self->pub_endpoint))
        s_resync(self, old);            /* (another groupd took over: its events) */
    if (old)
        return old;
    watch_t *w = calloc(1, sizeof *w);
    if (!w || !(w->count = gd_hash_new())) {
        free(w);
        return NULL;
    }
    if (s_open_sub(self, w) < 0) {
        s_watch_free(w);
        return NULL;
    }
    self->watch = w;
    self->watch_free = s_watch_free;
    return w;
}

/*  Reads one event (flags 0 or ZMQ_DONTWAIT): 1 with *ev (MARKs too) and its topic in
 *  topic[5] / *tlen, 0 when none (or unreadable, dropped). */
static int s_read(watch_t *w, int flags, gd_msg_t *ev, uint8_t topic[5], size_t *tlen)
{
    gd_multipart_t mp;
    if (gd_multipart_recv(w->sub, &mp, flags) < 0)
        return 0;
    int ok = !mp.truncated && gd_event_decode(mp.frames, mp.nparts, ev) == GD_OK
             && mp.frames[0].len <= 5;
    if (ok) {
        *tlen = mp.frames[0].len;
        memcpy(topic, mp.frames[0].data, *tlen);
    }
    gd_multipart_close(&mp);
    return ok;
}

/*  Turns a decoded event into a watch event (false for MARKs). */
static bool s_event(const gd_msg_t *ev, gimpi_groups_event_t *out)
{
    if (ev->kind != GD_EV_TASK_EXIT && ev->kind != GD_EV_HOST_ADD && ev->kind != GD_EV_HOST_DEL)
        return false;
    *out = (gimpi_groups_event_t){ ev->kind, ev->values[3].i, ev->values[2].i, ev->values[4].i };
    return true;
}

/*  Keeps an event for gimpi_groups_watch_next. */
static void s_keep(watch_t *w, const gimpi_groups_event_t *ev)
{
    if (w->nq == w->qcap) {
        int cap = w->qcap ? 2 * w->qcap : 8;
        gimpi_groups_event_t *q = realloc(w->q, (size_t)cap * sizeof *q);
        if (!q)
            return;
        w->q = q;
        w->qcap = cap;
    }
    w->q[w->nq++] = *ev;
}

/*  Subscribes to topic (len bytes) for one more watch; the first one waits, bounded, for
 *  anything on the topic (groupd's MARK), keeping the events read meanwhile.  0, or
 *  GIMPI_ESYSERR when groupd did not answer. */
static int s_subscribe(gimpi_groups_t *self, watch_t *w, const uint8_t *topic, size_t len)
{
    intptr_t n = (intptr_t)gd_hash_get(w->count, topic, len);
    if (gd_hash_put(w->count, topic, len, (void *)(n + 1)) < 0)
        return GIMPI_ENOMEM;
    if (n > 0)
        return 0;
    if (gd_sock_subscribe(w->sub, topic, len) < 0)
        return GIMPI_ESYSERR;
    int64_t deadline = gimpi_now_ms() + HELLO_TIMEOUT_MS;
    for (;;) {
        gd_msg_t ev;
        uint8_t t[5];
        size_t tl;
        while (s_read(w, ZMQ_DONTWAIT, &ev, t, &tl)) {
            gimpi_groups_event_t e;
            if (s_event(&ev, &e))
                s_keep(w, &e);
            if (tl == len && memcmp(t, topic, len) == 0)
                return 0;
        }
        long left = (long)(deadline - gimpi_now_ms());
        zmq_pollitem_t item = { w->sub, 0, ZMQ_POLLIN, 0 };
        if (left <= 0 || zmq_poll(&item, 1, left < 100 ? left : 100) < 0
            || groups_check_monitor(self))
            return GIMPI_ESYSERR;
        if (strcmp(w->ep, self->pub_endpoint)) {
            s_resync(self, w);          /* another groupd took over meanwhile: its events,
                                           every topic (this one too) subscribed there */
            return 0;
        }
    }
}

/*  Collects the watched tasks' topics (hash visitor). */
typedef struct {
    int32_t *tids;
    int n, cap;
} s_tids_t;

static void s_tid_cb(const void *k, size_t l, void *v, void *a)
{
    (void)v;
    s_tids_t *t = a;
    const uint8_t *topic = k;
    if (l != 5 || topic[0] != 'T' || t->n == t->cap)
        return;
    t->tids[t->n++] = (int32_t)gimpi_be_get32(topic + 1);
}

/*  Subscribes topic (len bytes) anew and waits (until deadline) for its MARK, keeping the
 *  events read meanwhile: a topic's events published from then on will come. */
static void s_remark(watch_t *w, const uint8_t *topic, size_t len, int64_t deadline)
{
    zmq_setsockopt(w->sub, ZMQ_UNSUBSCRIBE, topic, len);
    gd_sock_subscribe(w->sub, topic, len);
    for (bool marked = false; !marked;) {
        gd_msg_t m;
        uint8_t got[5];
        size_t tl;
        gimpi_groups_event_t e;
        while (!marked && s_read(w, ZMQ_DONTWAIT, &m, got, &tl)) {
            if (s_event(&m, &e))
                s_keep(w, &e);
            marked = tl == len && !memcmp(got, topic, tl);
        }
        long left = (long)(deadline - gimpi_now_ms());
        zmq_pollitem_t item = { w->sub, 0, ZMQ_POLLIN, 0 };
        if (!marked && (left <= 0 || zmq_poll(&item, 1, left) < 0))
            break;
    }
}

/*  After a reconnection (to a groupd restarted from its journal, or to the standby that
 *  took over): an exit published before our socket was back would be lost, so every
 *  watched task's topic is subscribed anew, its MARK awaited (bounded), and the task
 *  looked up: one that has ended gets its exit event now.  The host table's watch is
 *  subscribed anew too, and a GIMPI_GROUPS_EV_HOSTS_AGAIN event says to read the table
 *  again (a host deleted meanwhile is missing from it). */
static void s_resync(gimpi_groups_t *self, watch_t *w)
{
    self->watch_stale = false;
    if (strcmp(w->ep, self->pub_endpoint) && s_open_sub(self, w) < 0)
        return;                         /* (another groupd took over: its events) */
    int64_t deadline = gimpi_now_ms() + SYNC_TIMEOUT_MS;
    if (w->hosts) {
        s_remark(w, (const uint8_t *)"H", 1, deadline);
        s_keep(w, &(gimpi_groups_event_t){ GIMPI_GROUPS_EV_HOSTS_AGAIN, 0, 0, 0 });
    }
    s_tids_t t = { NULL, 0, (int)gd_hash_size(w->count) };
    if (t.cap == 0 || !(t.tids = calloc((size_t)t.cap, sizeof *t.tids)))
        return;
    gd_hash_foreach(w->count, s_tid_cb, &t);
    for (int k = 0; k < t.n; k++) {
        uint8_t topic[5] = { 'T' };
        gimpi_be_put32(topic + 1, (uint32_t)t.tids[k]);
        s_remark(w, topic, sizeof topic, deadline);
        gd_value_t v = { .i = t.tids[k] };
        if (groups_request(self, GD_LOOKUP, &v, 1, REQUEST_TIMEOUT_MS, NULL, NULL)
            == GIMPI_ENOTASK)
            s_keep(w, &(gimpi_groups_event_t){ GD_EV_TASK_EXIT, t.tids[k], 0, 0 });
    }
    free(t.tids);
}

/*  Drops one watch of topic; the last one unsubscribes. */
static void s_unsubscribe(watch_t *w, const uint8_t *topic, size_t len)
{
    intptr_t n = (intptr_t)gd_hash_get(w->count, topic, len);
    if (n <= 0)
        return;
    if (n > 1) {
        gd_hash_put(w->count, topic, len, (void *)(n - 1));
        return;
    }
    gd_hash_del(w->count, topic, len);
    zmq_setsockopt(w->sub, ZMQ_UNSUBSCRIBE, topic, len);
}

/*  Watches task tid's end. */
int gimpi_groups_watch_task(gimpi_groups_t *self, int32_t tid)
{
    assert(self);
    if (tid <= 0)
        return GIMPI_EBADPARAM;
    int rc;
    watch_t *w = s_watch(self, &rc);
    if (!w)
        return rc;
    uint8_t topic[5] = { 'T' };
    gimpi_be_put32(topic + 1, (uint32_t)tid);
    rc = s_subscribe(self, w, topic, sizeof topic);
    if (rc < 0) {
        s_unsubscribe(w, topic, sizeof topic);
        return rc;
    }
    gd_value_t v = { .i = tid };
    rc = groups_request(self, GD_LOOKUP, &v, 1, REQUEST_TIMEOUT_MS, NULL, NULL);
    if (rc >= 0 || rc == GIMPI_ENOTFOUND)
        return 1;                       /* there, or spawned and not registered yet */
    s_unsubscribe(w, topic, sizeof topic);
    return rc == GIMPI_ENOTASK ? 0 : rc;
}

/*  Stops one watch of task tid. */
void gimpi_groups_unwatch_task(gimpi_groups_t *self, int32_t tid)
{
    assert(self);
    uint8_t topic[5] = { 'T' };
    gimpi_be_put32(topic + 1, (uint32_t)tid);
    if (self->watch)
        s_unsubscribe(self->watch, topic, sizeof topic);
}

/*  Watches the host table's changes. */
int gimpi_groups_watch_hosts(gimpi_groups_t *self)
{
    assert(self);
    int rc;
    watch_t *w = s_watch(self, &rc);
    if (!w)
        return rc;
    if (w->hosts)
        return 0;
    const uint8_t topic[1] = { 'H' };
    rc = s_subscribe(self, w, topic, 1);
    if (rc < 0)
        s_unsubscribe(w, topic, 1);
    else
        w->hosts = true;
    return rc;
}

/*  True when the monitor of the connection to groupd has something to read. */
static bool s_monitor_pending(gimpi_groups_t *self)
{
    int ev = 0;
    size_t len = sizeof ev;
    return self->monitor && zmq_getsockopt(self->monitor, ZMQ_EVENTS, &ev, &len) == 0
        && (ev & ZMQ_POLLIN);
}

/*  The next event of the watches. */
int gimpi_groups_watch_next(gimpi_groups_t *self, int timeout_ms, gimpi_groups_event_t *ev)
{
    assert(self && ev);
    watch_t *w = self->watch;
    if (!w)
        return 0;
    if (s_monitor_pending(self)) {      /* (a poll loop on gimpi_groups_monitor_fd woke) */
        groups_check_monitor(self);
        self->watch_stale = self->watch_stale || strcmp(w->ep, self->pub_endpoint);
    }
    if (self->watch_stale)
        s_resync(self, w);
    if (w->nq > 0) {
        *ev = w->q[0];
        memmove(w->q, w->q + 1, (size_t)--w->nq * sizeof *w->q);
        return 1;
    }
    int64_t deadline = gimpi_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    for (;;) {
        gd_msg_t m;
        uint8_t t[5];
        size_t tl;
        while (s_read(w, ZMQ_DONTWAIT, &m, t, &tl))
            if (s_event(&m, ev))
                return 1;
        long left = (long)(deadline - gimpi_now_ms());
        if (left <= 0)
            return 0;
        /* the DEALER's monitor too: an idle waiter notices a lost groupd (its connection
           ended, or silent past the heartbeat), reconnects, and reads its watches anew */
        zmq_pollitem_t items[2] = { { w->sub, 0, ZMQ_POLLIN, 0 },
                                    { self->monitor, 0, ZMQ_POLLIN, 0 } };
        if (zmq_poll(items, self->monitor ? 2 : 1, left) < 0)
            return 0;
        if (self->monitor && (items[1].revents & ZMQ_POLLIN)) {
            groups_check_monitor(self);
            if (self->watch_stale || strcmp(w->ep, self->pub_endpoint))
                s_resync(self, w);
            if (w->nq > 0)
                return gimpi_groups_watch_next(self, 0, ev);
        }
    }
}

/*  The watches' socket's descriptor. */
int gimpi_groups_watch_fd(gimpi_groups_t *self)
{
    assert(self);
    int rc;
    watch_t *w = s_watch(self, &rc);
    if (!w)
        return rc;
    int fd = -1;
    size_t len = sizeof fd;
    return zmq_getsockopt(w->sub, ZMQ_FD, &fd, &len) == 0 ? fd : GIMPI_ESYSERR;
}

/*  The monitor's descriptor. */
int gimpi_groups_monitor_fd(gimpi_groups_t *self)
{
    assert(self);
    int fd = -1;
    size_t len = sizeof fd;
    return self->monitor && zmq_getsockopt(self->monitor, ZMQ_FD, &fd, &len) == 0 ? fd : -1;
}

/*  Whether an event may be read now. */
int gimpi_groups_watch_pending(gimpi_groups_t *self)
{
    assert(self);
    watch_t *w = self->watch;
    if (!w)
        return 0;
    if (w->nq > 0 || self->watch_stale || s_monitor_pending(self))
        return 1;
    int ev = 0;
    size_t len = sizeof ev;
    return zmq_getsockopt(w->sub, ZMQ_EVENTS, &ev, &len) == 0 && (ev & ZMQ_POLLIN);
}
