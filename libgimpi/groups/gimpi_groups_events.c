/*  gimpi_groups_events.c — what groupd tells a task's client without being asked: the
 *  events on the SUB socket that keep the membership cache current, and the DEALER's socket
 *  monitor, whose word that the connection closed means groupd is gone (every later call is
 *  then GIMPI_ESYSERR).  A cache entry becomes current in three steps: subscribe (a
 *  member's first barrier or the first query of a group, groups_watch); wait for any event
 *  on the group's topic (groupd publishes a MARK when the subscription reaches it, which
 *  proves the subscription is live); fetch a SNAPSHOT (gimpi_groups_cache.c).  From then on
 *  events are applied in version order (each carries the group's previous version; a gap
 *  sends the entry back to the snapshot step); others' changes are held briefly first
 *  (held_t in groups_internal.h).  Own joins, leaves and barrier releases carry the group's
 *  version: the caller waits until its cache has caught up with it (groups_sync), which is
 *  what makes the consistency promise hold.  The SUB socket is read only between requests,
 *  so no event can slip between a snapshot and the events after it.
 */
#include "config.h"
#include "groups/groups_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

/* ------------------------------------------------------------------ the monitor */

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
                self->handshaken = self->key_proven = true;
            if (event == ZMQ_EVENT_CONNECTED)
                self->connected = true;
            /* on ipc a handshake cut without detail is a groupd that died in it (killed,
               or restarted from its journal): gone, not a refusal; on tcp too once our key
               has been taken (a groupd restarted at the same port), or with a list of
               groupds (a primary dying as we reach it: the next one is tried) */
            bool gone_not_refused = !self->have_key || self->nep > 1
                                 || (self->key_proven && self->reconnect);
            bool cut = event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL && gone_not_refused;
            /* a first handshake cut without detail is what a wrong key looks like, and
               also a groupd killed (or restarted) in it: only GROUPS_CUTS_REFUSED cuts in
               a row, libzmq reconnecting between them, are a refusal */
            bool first_cut = !gone_not_refused && !self->handshaken
                          && (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                              || event == ZMQ_EVENT_DISCONNECTED);
            if (first_cut && event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
                self->cuts++;
            if (first_cut && self->cuts < GROUPS_CUTS_REFUSED) {
                gd_multipart_close(&mp);
                continue;
            }
            if (why && event != ZMQ_EVENT_DISCONNECTED && !cut)
                s_refused(self, why);
            if (event == ZMQ_EVENT_DISCONNECTED || cut) {
                if (why && !gone_not_refused)
                    s_refused(self, why);
                else if (self->state == 1 && !self->reconnecting && self->reconnect) {
                    gd_multipart_close(&mp);
                    return self->reconnect(self) < 0;    /* a new monitor: read no more */
                }
                self->state = -1;
            }
        }
        gd_multipart_close(&mp);
    }
}

/* ------------------------------------------------------------------ the events */

/*  An event of `version` applied: the task-wide mark and what it has seen rise. */
static void s_saw_event(gimpi_groups_t *self, uint64_t version)
{
    if (version > self->ev_through) {
        self->ev_through = version;
        self->gen++;
    }
    groups_saw(self, version);
}

/*  Puts tid at inst, growing the slot table. */
int groups_slot_set(centry_t *e, int32_t inst, int32_t tid)
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
        if (groups_slot_set(e, inst, tid) < 0) {
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
    int64_t now = self->held ? gimpi_now_ns() : 0;
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
            h->at_ns = gimpi_now_ns();
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
void groups_drain(gimpi_groups_t *self)
{
    s_drain_to(self, self->seen);
}

/*  Waits (bounded) until a current entry has reached `version`. */
void groups_sync(gimpi_groups_t *self, const char *group, uint64_t version)
{
    centry_t *e = gd_hash_get(self->cache, group, strlen(group));
    if (!e || !self->sub)
        return;
    s_drain_to(self, version);
    int64_t deadline = gimpi_now_ms() + SYNC_TIMEOUT_MS;
    while (e->state == C_CURRENT && e->version < version) {
        long left = (long)(deadline - gimpi_now_ms());
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

/*  Starts watching a group: opens the SUB socket on groupd's event endpoint when this is
 *  the first group watched, adds the group's cache entry (SUBSCRIBING) and subscribes to
 *  its topic.  0, or -1 (no entry: a later query tries again).  A subscription that
 *  cannot be made leaves the entry SUBSCRIBING: queries of the group then ask groupd. */
int groups_watch(gimpi_groups_t *self, const char *group, size_t len)
{
    if (!self->sub && !(self->sub = groups_sub_new(self)))
        return -1;
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

/*  Sends an entry back to waiting for its MARK (hash visitor). */
static void s_resync_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    centry_t *e = v;
    e->state = C_SUBSCRIBING;
}

/*  After a reconnection: every entry waits for the new groupd's MARK, then a snapshot. */
void groups_events_resync(gimpi_groups_t *self)
{
    while (self->held) {
        held_t *h = self->held;
        self->held = h->next;
        free(h);
    }
    self->held_tail = NULL;
    if (self->cache)
        gd_hash_foreach(self->cache, s_resync_cb, NULL);
    self->gen++;
}

/*  Subscribes a cached group's topic again (hash visitor). */
static void s_resubscribe_cb(const void *k, size_t l, void *v, void *a)
{
    (void)v;
    gimpi_groups_t *self = a;
    uint8_t *topic = malloc(l + 1);
    if (!topic)
        return;
    topic[0] = 'G';
    memcpy(topic + 1, k, l);
    gd_sock_subscribe(self->sub, topic, l + 1);
    free(topic);
}

/*  A SUB socket on groupd's event endpoint, secured with the task's key (nothing
 *  subscribed), or NULL. */
void *groups_sub_new(gimpi_groups_t *self)
{
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_TASK_SUB, self->pub_endpoint);
    void *sub = NULL;
    if (gd_sock_secure(&o, self->have_key ? &self->key : NULL, NULL, 0) == 0)
        sub = gd_sock_new(self->zctx, &o, NULL, NULL, 0);
    gimpi_key_wipe(&o.security, sizeof o.security);
    return sub;
}

/*  Another groupd's event endpoint. */
void groups_events_reopen(gimpi_groups_t *self)
{
    if (!self->sub)
        return;
    gd_sock_destroy(&self->sub, NULL);
    self->sub = groups_sub_new(self);
    if (self->sub && self->cache)
        gd_hash_foreach(self->cache, s_resubscribe_cb, self);
}

/*  Frees one cache entry (hash visitor). */
static void s_free_entry_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    centry_t *e = v;
    free(e->slots);
    free(e);
}

/*  Frees the cache's entries and table and the events held back. */
void groups_events_free(gimpi_groups_t *self)
{
    if (self->cache) {
        gd_hash_foreach(self->cache, s_free_entry_cb, NULL);
        gd_hash_destroy(&self->cache);
    }
    while (self->held) {
        held_t *h = self->held;
        self->held = h->next;
        free(h);
    }
}
