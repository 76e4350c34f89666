/*  gimpi_groups_cache.c — the membership cache made current and the group calls of
 *  include/gimpi_group.h answered from it: join, leave (deferred, gimpi_groups.c), gettid,
 *  getinst and gsize from the cache when its entry is current, else by one round trip;
 *  barrier and freeze; the snapshots the collectives build their views from, and the
 *  generation that tells them a kept view still stands.  A cached answer is given only
 *  when the entry is complete through every version the task has seen (the causal
 *  promise, doc/groupd-protocol.md §6); else the entry is fetched anew.
 */
#include "config.h"
#include "groups/groups_internal.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/* ------------------------------------------------------------------ the cache */

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
    e->frozen = (int32_t)gimpi_be_get32(b->data);
    e->dead = gimpi_be_get32(b->data + 4) != 0;
    e->sync = gimpi_be_get64(b->data + 8);
    for (size_t off = GD_SNAP_HEAD; off < b->len; off += 8)
        if (groups_slot_set(e, (int32_t)gimpi_be_get32(b->data + off),
                            (int32_t)gimpi_be_get32(b->data + off + 4)) < 0) {
            gd_multipart_close(&mp);
            return;
        }
    e->exists = true;
    e->size = rc;
    e->version = reply.values[1].q;
    e->state = C_CURRENT;
    gd_multipart_close(&mp);
}

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
    int64_t deadline = gimpi_now_ms() + SYNC_TIMEOUT_MS;
    groups_drain(self);
    while (e->state == C_SUBSCRIBING) {
        long left = (long)(deadline - gimpi_now_ms());
        zmq_pollitem_t items[] = {
            { self->sub, 0, ZMQ_POLLIN, 0 },
            { self->monitor, 0, ZMQ_POLLIN, 0 },
        };
        if (left <= 0 || zmq_poll(items, 2, left) <= 0 || groups_check_monitor(self))
            return;                     /* queries ask groupd until the MARK comes */
        groups_drain(self);
    }
    if (e->state == C_MARKED)
        s_refresh(self, group, e);
}

/*  1 when a message brought a stamp newer than what the entry is known complete through:
 *  its sender may have seen a change the entry lacks (the causal promise, §6). */
static int s_behind(gimpi_groups_t *self, const centry_t *e)
{
    if (self->stamp_fn)
        groups_saw(self, self->stamp_fn(self->stamp_arg));
    uint64_t have = e->sync > self->ev_through ? e->sync : self->ev_through;
    return have < self->seen;
}

/*  The current cache entry of a group at the time now (the caller's clock reading), or
 *  NULL (then the caller asks groupd).  The first query of a group starts watching it
 *  (groups_watch). */
static centry_t *s_cached_at(gimpi_groups_t *self, const char *group, int64_t now)
{
    if (now - self->last_check_ns >= CHECK_INTERVAL_NS) {
        groups_drain(self);
        self->last_check_ns = now;
    }
    size_t len = strlen(group);
    centry_t *e = gd_hash_get(self->cache, group, len);
    if (!e) {
        groups_watch(self, group, len);
        return NULL;
    }
    if (e->state == C_MARKED)
        s_refresh(self, group, e);
    if (e->state == C_CURRENT && s_behind(self, e)) {
        groups_drain(self);             /* the events may be here already */
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
    int64_t now = *now_ns = gimpi_now_ns();
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

/*  s_enter_at, then waits until groupd has every deferred leave (a query's opening). */
static int s_enter_flushed(gimpi_groups_t *self, const char *group, int64_t *now_ns)
{
    int rc = s_enter_at(self, group, now_ns);
    if (!rc && self->ndeferred)
        rc = groups_flush_leaves(self);
    return rc;
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
        groups_sync(self, group, version);
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
    if (defer && self->ndeferred == MAX_DEFERRED && (rc = groups_flush_leaves(self)) != 0)
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

/*  The common opening of the queries answered from the cache: checks the name, connects,
 *  waits for the deferred leaves and finds the group's current entry.  Returns the entry
 *  of an existing group, to answer from; else NULL with *answer the call's answer (an
 *  error, GIMPI_ENOGROUP, or groupd's own answer to cmd with arg when the entry is not
 *  current). */
static centry_t *s_query(gimpi_groups_t *self, uint8_t cmd, const char *group, int32_t arg,
                         int *answer)
{
    int64_t now;
    int rc = s_enter_flushed(self, group, &now);
    if (rc) {
        *answer = rc;
        return NULL;
    }
    centry_t *e = s_cached_at(self, group, now);
    if (!e) {
        *answer = s_group_call(self, cmd, group, arg, REQUEST_TIMEOUT_MS, false);
        return NULL;
    }
    self->n_local++;
    *answer = GIMPI_ENOGROUP;
    return e->exists ? e : NULL;
}

/*  pvm_gettid: from the cache when current. */
int gimpi_group_gettid(gimpi_groups_t *self, const char *group, int inst)
{
    int rc;
    centry_t *e = s_query(self, GD_GETTID, group, inst, &rc);
    if (!e)
        return rc;
    if (inst < 0 || inst >= e->cap || !e->slots[inst])
        return GIMPI_ENOINST;
    return e->slots[inst];
}

/*  pvm_getinst: from the cache when current. */
int gimpi_group_getinst(gimpi_groups_t *self, const char *group, int tid)
{
    int rc;
    centry_t *e = s_query(self, GD_GETINST, group, tid, &rc);
    if (!e)
        return rc;
    if (tid > 0)
        for (int i = 0; i < e->cap; i++)
            if (e->slots[i] == tid)
                return i;
    return GIMPI_ENOTINGROUP;
}

/*  pvm_gsize: from the cache when current. */
int gimpi_group_gsize(gimpi_groups_t *self, const char *group)
{
    int rc;
    centry_t *e = s_query(self, GD_GSIZE, group, 0, &rc);
    return e ? e->size : rc;
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
        groups_watch(self, group, len);     /* a member: ready by the release (s_settle) */
    return s_group_call(self, GD_BARRIER, group, count, -1, true);
}

/*  pvm_freezegroup: returns the frozen size. */
int gimpi_group_freeze(gimpi_groups_t *self, const char *group, int size)
{
    int rc = s_enter(self, group);
    return rc ? rc : s_group_call(self, GD_FREEZE, group, size, -1, true);
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
    int rc = s_enter_flushed(self, group, &now);
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
    int64_t now = gimpi_now_ns();
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
        groups_saw(self, self->stamp_fn(self->stamp_arg));
    return self->seen;
}

/*  Cached answers refused as older than a stamp (gimpi_group.h). */
uint64_t gimpi_groups_stale(gimpi_groups_t *self)
{
    assert(self);
    return self->n_stale;
}
