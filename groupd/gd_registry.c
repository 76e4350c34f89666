/*  gd_registry.c — tasks, groups, freeze and barrier arbitration for groupd (see
 *  gd_registry.h for the contract and doc/pvm-groups.md §3, §4, §7, §8 for the
 *  semantics).  Groups are found by name in a hash table; a group keeps a tid per instance
 *  slot, so joining takes the lowest free slot; a task keeps the list of groups it is in,
 *  so its exit is cheap.  Deleting the last member frees the group entirely, so join and
 *  leave churn does not grow memory.
 */
#include "groupd/gd_registry.h"
#include "groupd/gd_registry_impl.h"
#include "base/gd_hash.h"
#include "base/gimpi_key.h"
#include "gimpi.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { FIRST_TID = 0x40001 };

/*  New empty registry. */
gd_registry_t *gd_registry_new(const gd_sink_t *sink)
{
    gd_registry_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->sink = *sink;
    self->groups = gd_hash_new();
    self->tasks = gd_hash_new();
    self->keys = gd_hash_new();
    self->reservations = gd_hash_new();
    self->owners = gd_hash_new();
    self->next_tid = FIRST_TID;
    gd_registry_set_limits(self, &(gd_registry_limits_t){ 0 });
    if (!self->groups || !self->tasks || !self->keys || !self->reservations || !self->owners)
        gd_registry_destroy(&self);
    return self;
}

/*  Sets the bounds; 0 fields take the defaults. */
void gd_registry_set_limits(gd_registry_t *self, const gd_registry_limits_t *limits)
{
    assert(self);
    assert(limits);
    self->lim = *limits;
    if (self->lim.max_tasks <= 0)
        self->lim.max_tasks = GD_REG_MAX_TASKS;
    if (self->lim.max_groups <= 0)
        self->lim.max_groups = GD_REG_MAX_GROUPS;
    if (self->lim.max_groups_per_task <= 0)
        self->lim.max_groups_per_task = GD_REG_MAX_GROUPS_PER_TASK;
    if (self->lim.max_blocks <= 0)
        self->lim.max_blocks = GD_REG_MAX_BLOCKS;
    if (self->lim.reserve_quota <= 0)
        self->lim.reserve_quota = GD_REG_RESERVE_QUOTA;
}

/*  Frees a group and its episodes. */
static void s_group_free(group_t *g)
{
    free(g->name);
    free(g->slots);
    free(g->barrier.waiters);
    free(g->barrier.tids);
    free(g->freeze.waiters);
    free(g->freeze.tids);
    free(g->dpw);
    free(g);
}

/*  Forgets tid's data-plane barrier on g, if any. */
static void s_dp_forget(group_t *g, int32_t tid)
{
    for (int k = 0; k < g->ndpw; k++)
        if (g->dpw[k].tid == tid) {
            g->dpw[k] = g->dpw[--g->ndpw];
            return;
        }
}

/*  Hash visitors for destroy. */
static void s_free_group_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    s_group_free(v);
}

static void s_free_task_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    task_t *t = v;
    free(t->groups);
    free(t);
}

/*  Frees a malloc'ed hash value (hash visitor). */
static void s_free_value_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    free(v);
}

/*  Frees everything. */
void gd_registry_destroy(gd_registry_t **self_p)
{
    assert(self_p);
    gd_registry_t *self = *self_p;
    if (!self)
        return;
    if (self->groups)
        gd_hash_foreach(self->groups, s_free_group_cb, NULL);
    if (self->tasks)
        gd_hash_foreach(self->tasks, s_free_task_cb, NULL);
    gd_hash_destroy(&self->groups);
    gd_hash_destroy(&self->tasks);
    gd_hash_destroy(&self->keys);
    if (self->reservations)
        gd_hash_foreach(self->reservations, s_free_value_cb, NULL);
    gd_hash_destroy(&self->reservations);
    gd_hash_destroy(&self->owners);
    for (int k = 0; k < self->nblocks; k++) {
        free(self->blocks[k].used);
        free(self->blocks[k].key);
    }
    free(self->blocks);
    free(self);
    *self_p = NULL;
}

/*  Number of registered tasks. */
size_t gd_registry_ntasks(gd_registry_t *self)
{
    assert(self);
    return gd_hash_size(self->tasks);
}

/*  Number of groups. */
size_t gd_registry_ngroups(gd_registry_t *self)
{
    assert(self);
    return gd_hash_size(self->groups);
}

/* ------------------------------------------------------------------ tasks */

/*  Task of a tid, or NULL. */
static task_t *s_task(gd_registry_t *self, int32_t tid)
{
    return gd_hash_get(self->tasks, &tid, sizeof tid);
}

/*  Adds the task behind a routing id as `tid`.  Returns the tid or an error. */
int32_t gd_registry_task_add(gd_registry_t *self, const uint8_t *key, size_t keylen,
                          const gd_taskinfo_t *info, int32_t tid)
{
    if (gd_hash_size(self->tasks) >= (size_t)self->lim.max_tasks)
        return GIMPI_ENOMEM;
    task_t *t = calloc(1, sizeof *t);
    if (!t)
        return GIMPI_ENOMEM;
    t->tid = tid;
    memcpy(t->key, key, keylen);
    t->keylen = keylen;
    t->info = *info;
    if (gd_hash_put(self->tasks, &t->tid, sizeof t->tid, t) < 0) {
        free(t);
        return GIMPI_ENOMEM;
    }
    if (gd_hash_put(self->keys, key, keylen, t) < 0) {
        gd_hash_del(self->tasks, &t->tid, sizeof t->tid);
        free(t);
        return GIMPI_ENOMEM;
    }
    return tid;
}

/*  Registers (or re-registers) the task behind a routing id. */
int32_t gd_registry_register(gd_registry_t *self, const uint8_t *key, size_t keylen,
                             const gd_taskinfo_t *info)
{
    assert(self);
    if (keylen == 0 || keylen > sizeof ((task_t *)0)->key)
        return GIMPI_EBADPARAM;
    task_t *t = gd_hash_get(self->keys, key, keylen);
    if (t)
        return t->tid;
    if (self->next_tid == INT32_MAX)
        return GIMPI_EOUTOFRES;
    int32_t tid = gd_registry_task_add(self, key, keylen, info, self->next_tid);
    if (tid > 0)
        self->next_tid++;
    return tid;
}

/*  The routing id a task registered from. */
int gd_registry_key_of(gd_registry_t *self, int32_t tid, const uint8_t **key, size_t *keylen)
{
    assert(self);
    task_t *t = s_task(self, tid);
    if (!t)
        return GIMPI_ENOTASK;
    *key = t->key;
    *keylen = t->keylen;
    return 0;
}

/*  Calls fn with every task's routing id and tid (hash visitor's relay). */
typedef struct {
    void (*fn)(void *arg, const uint8_t *key, size_t keylen, int32_t tid);
    void *arg;
} s_keywalk_t;

static void s_keywalk_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    s_keywalk_t *w = a;
    task_t *t = v;
    w->fn(w->arg, t->key, t->keylen, t->tid);
}

/*  Every registered task's routing id and tid. */
void gd_registry_foreach_task(gd_registry_t *self,
                              void (*fn)(void *arg, const uint8_t *key, size_t keylen,
                                         int32_t tid), void *arg)
{
    assert(self);
    s_keywalk_t w = { fn, arg };
    gd_hash_foreach(self->tasks, s_keywalk_cb, &w);
}

/*  Tid behind a routing id. */
int32_t gd_registry_tid_of(gd_registry_t *self, const uint8_t *key, size_t keylen)
{
    assert(self);
    task_t *t = gd_hash_get(self->keys, key, keylen);
    return t ? t->tid : 0;
}

static int s_block_of(gd_registry_t *self, int32_t tid);
static bool s_block_unused(gd_registry_t *self, int k, int32_t tid);
static void s_block_use(gd_registry_t *self, int k, int32_t tid);

/*  Registration data of a tid. */
int gd_registry_lookup(gd_registry_t *self, int32_t tid, gd_taskinfo_t *info)
{
    assert(self);
    task_t *t = s_task(self, tid);
    if (!t) {                           /* reserved, not registered yet: "try again" */
        int k = s_block_of(self, tid);
        return k >= 0 && s_block_unused(self, k, tid) ? GIMPI_ENOTFOUND : GIMPI_ENOTASK;
    }
    *info = t->info;
    return 0;
}

/* ------------------------------------------------------------------ groups */

/*  Validates a name and finds its group: NULL/"" -> PvmNullGroup, unknown -> PvmNoGroup. */
static int s_lookup(gd_registry_t *self, const char *name, group_t **g, uint64_t *version)
{
    *g = NULL;
    *version = self->seq;
    if (!name || !*name)
        return GIMPI_ENULLGROUP;
    *g = gd_hash_get(self->groups, name, strlen(name));
    if (!*g)
        return GIMPI_ENOGROUP;
    *version = (*g)->version;
    return 0;
}

/*  Instance of tid in g, or -1. */
static int s_inst_of(const group_t *g, int32_t tid)
{
    if (tid <= 0)
        return -1;
    for (int i = 0; i < g->cap; i++)
        if (g->slots[i] == tid)
            return i;
    return -1;
}

/*  Bumps the group's version and publishes the change. */
static void s_publish(gd_registry_t *self, group_t *g, uint8_t kind, bool created,
                      int32_t inst, int32_t tid, int32_t extra)
{
    uint64_t prev = created ? 0 : g->version;
    g->version = ++self->seq;
    if (self->sink.event)
        self->sink.event(self->sink.arg, g->name, kind, prev, g->version, inst, tid, extra);
}

/*  Appends an arrival to an episode. */
static int s_episode_add(episode_t *e, int32_t tid, const gd_waiter_t *w)
{
    if (e->n == e->cap) {
        int cap = e->cap ? e->cap * 2 : 4;
        gd_waiter_t *nw = realloc(e->waiters, (size_t)cap * sizeof *nw);
        if (!nw)
            return GIMPI_ENOMEM;
        e->waiters = nw;
        int32_t *nt = realloc(e->tids, (size_t)cap * sizeof *nt);
        if (!nt)
            return GIMPI_ENOMEM;
        e->tids = nt;
        e->cap = cap;
    }
    e->waiters[e->n] = *w;
    e->tids[e->n] = tid;
    e->n++;
    return 0;
}

/*  Answers every waiter of an episode and closes it. */
static void s_episode_release(gd_registry_t *self, episode_t *e, int32_t status,
                              uint64_t version)
{
    for (int k = 0; k < e->n; k++)
        if (self->sink.reply)
            self->sink.reply(self->sink.arg, &e->waiters[k], status, version);
    e->n = 0;
    e->count = 0;
    if (e->cap > 64) {          /* give back what a huge episode took */
        free(e->waiters);
        free(e->tids);
        e->waiters = NULL;
        e->tids = NULL;
        e->cap = 0;
    }
}

/*  Removes g from the task's list. */
static void s_task_drop_group(task_t *t, group_t *g)
{
    for (int k = 0; k < t->ngroups; k++)
        if (t->groups[k] == g) {
            t->groups[k] = t->groups[--t->ngroups];
            return;
        }
}

/*  Removes member `inst` (task t) from g: publishes, kills a frozen group, deletes an
 *  empty one.  Returns true when g was freed. */
static bool s_remove_member(gd_registry_t *self, group_t *g, int inst, int32_t tid, bool exited)
{
    g->slots[inst] = 0;
    g->size--;
    s_dp_forget(g, tid);
    s_publish(self, g, exited ? GD_EV_EXIT : GD_EV_LEAVE, false, inst, tid, g->size);
    if (g->frozen && !g->dead) {
        g->dead = true;
        s_publish(self, g, GD_EV_DEAD, false, -1, 0, g->size);
        /* fixed: PVM leaves these waiters hanging */
        s_episode_release(self, &g->barrier, GIMPI_ENOGROUP, g->version);
    }
    if (g->size == 0) {
        /* only dead tasks can still be waiting here; nobody to answer */
        gd_hash_del(self->groups, g->name, strlen(g->name));
        s_group_free(g);
        return true;
    }
    return false;
}

/*  Task gone: leaves every group. */
int gd_registry_remove(gd_registry_t *self, int32_t tid, bool exited)
{
    assert(self);
    task_t *t = s_task(self, tid);
    if (!t)
        return GIMPI_ENOTASK;
    while (t->ngroups > 0) {
        group_t *g = t->groups[--t->ngroups];
        int inst = s_inst_of(g, tid);
        if (inst >= 0)
            s_remove_member(self, g, inst, tid, exited);
    }
    gd_hash_del(self->tasks, &tid, sizeof tid);
    gd_hash_del(self->keys, t->key, t->keylen);
    free(t->groups);
    free(t);
    return 0;
}

/*  Adds g to a task's list of groups.  0 or -1 (no memory). */
int gd_registry_task_add_group(task_t *t, group_t *g)
{
    if (t->ngroups == t->cap) {
        int cap = t->cap ? t->cap * 2 : 4;
        group_t **ng = realloc(t->groups, (size_t)cap * sizeof *ng);
        if (!ng)
            return -1;
        t->groups = ng;
        t->cap = cap;
    }
    t->groups[t->ngroups++] = g;
    return 0;
}

/*  Join: create on first join, lowest free instance, refused when frozen. */
int gd_registry_join(gd_registry_t *self, int32_t tid, const char *name, uint64_t *version)
{
    assert(self);
    task_t *t = s_task(self, tid);
    group_t *g;
    int rc = s_lookup(self, name, &g, version);
    if (rc == GIMPI_ENULLGROUP)
        return rc;
    if (!t)
        return GIMPI_ENOTASK;
    if (t->ngroups >= self->lim.max_groups_per_task)
        return g && s_inst_of(g, tid) >= 0 ? GIMPI_EDUPGROUP : GIMPI_ENOMEM;
    bool created = false;
    if (!g) {
        if (gd_hash_size(self->groups) >= (size_t)self->lim.max_groups)
            return GIMPI_ENOMEM;
        g = calloc(1, sizeof *g);
        if (!g || !(g->name = strdup(name))) {
            free(g);
            return GIMPI_ENOMEM;
        }
        if (gd_hash_put(self->groups, name, strlen(name), g) < 0) {
            s_group_free(g);
            return GIMPI_ENOMEM;
        }
        created = true;
    } else {
        if (s_inst_of(g, tid) >= 0)
            return GIMPI_EDUPGROUP;
        if (g->frozen)
            return GIMPI_ENOTINGROUP;
    }
    int inst = 0;
    while (inst < g->cap && g->slots[inst])
        inst++;
    if (inst == g->cap) {
        int cap = g->cap ? g->cap * 2 : 4;
        int32_t *ns = realloc(g->slots, (size_t)cap * sizeof *ns);
        if (!ns)
            goto nomem;
        memset(ns + g->cap, 0, (size_t)(cap - g->cap) * sizeof *ns);
        g->slots = ns;
        g->cap = cap;
    }
    if (gd_registry_task_add_group(t, g) < 0)
        goto nomem;
    g->slots[inst] = tid;
    g->size++;
    s_publish(self, g, GD_EV_JOIN, created, inst, tid, g->size);
    *version = g->version;
    /* a larger-than-size barrier or freeze waits for joins: counts are re-checked on
       arrival only (PVM), so nothing more to do here */
    return inst;
nomem:
    if (created) {
        gd_hash_del(self->groups, name, strlen(name));
        s_group_free(g);
    }
    return GIMPI_ENOMEM;
}

/*  Leave: frees the instance; the last leave deletes the group. */
int gd_registry_leave(gd_registry_t *self, int32_t tid, const char *name, uint64_t *version)
{
    assert(self);
    group_t *g;
    int rc = s_lookup(self, name, &g, version);
    if (rc)
        return rc;
    task_t *t = s_task(self, tid);
    int inst = s_inst_of(g, tid);
    if (!t || inst < 0)
        return GIMPI_ENOTINGROUP;
    s_task_drop_group(t, g);
    bool freed = s_remove_member(self, g, inst, tid, false);
    *version = freed ? self->seq : g->version;
    return 0;
}

/*  Tid of an instance. */
int gd_registry_gettid(gd_registry_t *self, const char *name, int32_t inst, uint64_t *version)
{
    assert(self);
    group_t *g;
    int rc = s_lookup(self, name, &g, version);
    if (rc)
        return rc;
    if (inst < 0 || inst >= g->cap || !g->slots[inst])
        return GIMPI_ENOINST;
    return g->slots[inst];
}

/*  Instance of a tid. */
int gd_registry_getinst(gd_registry_t *self, const char *name, int32_t tid, uint64_t *version)
{
    assert(self);
    group_t *g;
    int rc = s_lookup(self, name, &g, version);
    if (rc)
        return rc;
    int inst = s_inst_of(g, tid);
    return inst >= 0 ? inst : GIMPI_ENOTINGROUP;
}

/*  Member count. */
int gd_registry_gsize(gd_registry_t *self, const char *name, uint64_t *version)
{
    assert(self);
    group_t *g;
    int rc = s_lookup(self, name, &g, version);
    return rc ? rc : g->size;
}

/*  Checks what barrier and freeze share; resolves -1; returns 0 or an error. */
static int s_arrival_check(gd_registry_t *self, int32_t tid, const char *name, int32_t *count,
                           group_t **g, uint64_t *version)
{
    int rc = s_lookup(self, name, g, version);
    if (rc)
        return rc;
    if (*count == 0 || *count < -1)
        return GIMPI_EBADPARAM;         /* fixed: PVM answers Mismatch and poisons */
    if (s_inst_of(*g, tid) < 0)
        return GIMPI_ENOTINGROUP;
    if (*count == -1)
        *count = (*g)->size;
    return 0;
}

/*  Adds an arrival; completes the episode when it has `count` arrivals. */
static int s_arrive(episode_t *e, int32_t tid, int32_t count,
                    const gd_waiter_t *w)
{
    if (e->count && e->count != count)
        return GIMPI_EMISMATCH;         /* not counted; the others keep waiting */
    for (int k = 0; k < e->n; k++)
        if (e->tids[k] == tid)
            return GIMPI_EALREADY;      /* already waiting in this episode */
    int rc = s_episode_add(e, tid, w);
    if (rc)
        return rc;
    e->count = count;
    return GD_PENDING;
}

/*  Barrier arbitration (doc/pvm-groups.md §4, with the fixes). */
int gd_registry_barrier(gd_registry_t *self, int32_t tid, const char *name, int32_t count,
                        const gd_waiter_t *w, uint64_t *version)
{
    assert(self);
    group_t *g;
    int rc = s_arrival_check(self, tid, name, &count, &g, version);
    if (rc)
        return rc;
    if (g->dead)
        return GIMPI_ENOGROUP;
    rc = s_arrive(&g->barrier, tid, count, w);
    if (rc != GD_PENDING)
        return rc;
    if (g->barrier.n >= g->barrier.count) {
        /* the caller's own reply goes through the sink like the others' */
        s_episode_release(self, &g->barrier, 0, g->version);
    }
    return GD_PENDING;
}

/*  Freeze (doc/pvm-groups.md §7): synchronising; the first call fixes the target. */
int gd_registry_freeze(gd_registry_t *self, int32_t tid, const char *name, int32_t size,
                       const gd_waiter_t *w, uint64_t *version)
{
    assert(self);
    group_t *g;
    int rc = s_arrival_check(self, tid, name, &size, &g, version);
    if (rc)
        return rc;
    if (g->frozen)
        return GIMPI_EDUPGROUP;
    rc = s_arrive(&g->freeze, tid, size, w);
    if (rc != GD_PENDING)
        return rc;
    if (g->freeze.n >= g->freeze.count) {
        g->frozen = g->freeze.count;
        s_publish(self, g, GD_EV_FREEZE, false, -1, 0, g->frozen);
        s_episode_release(self, &g->freeze, g->frozen, g->version);
    }
    return GD_PENDING;
}

/*  Snapshot blob for caches. */
int gd_registry_snapshot(gd_registry_t *self, const char *name, uint64_t *version,
                         uint8_t **blob, size_t *len)
{
    assert(self);
    *blob = NULL;
    *len = 0;
    group_t *g;
    int rc = s_lookup(self, name, &g, version);
    if (rc)
        return rc;
    size_t n = GD_SNAP_HEAD + (size_t)g->size * 8;
    uint8_t *b = malloc(n);
    if (!b)
        return GIMPI_ENOMEM;
    gimpi_be_put32(b, (uint32_t)g->frozen);
    gimpi_be_put32(b + 4, g->dead);
    gimpi_be_put64(b + 8, self->seq);         /* the snapshot is complete through this */
    size_t off = GD_SNAP_HEAD;
    for (int i = 0; i < g->cap; i++)
        if (g->slots[i]) {
            gimpi_be_put32(b + off, (uint32_t)i);
            gimpi_be_put32(b + off + 4, (uint32_t)g->slots[i]);
            off += 8;
        }
    *blob = b;
    *len = off;
    return g->size;
}

/*  Builds the STAT record of one group. */
static size_t s_stat_one(gd_registry_t *self, group_t *g, uint8_t **out)
{
    gd_groupstat_t st = { 0 };
    st.name = g->name;
    st.size = g->size;
    st.frozen = g->frozen;
    st.dead = g->dead;
    st.version = g->version;
    st.bar_count = g->barrier.count;
    st.bar_arrived = g->barrier.n;
    st.frz_count = g->freeze.count;
    st.frz_arrived = g->freeze.n;
    st.nmembers = g->size;
    st.nbar_waiters = g->barrier.n;
    st.nfrz_waiters = g->freeze.n;
    st.members = calloc((size_t)g->size + 1, sizeof *st.members);
    if (!st.members)
        return 0;
    int m = 0;
    for (int i = 0; i < g->cap; i++)
        if (g->slots[i]) {
            gd_member_t *mb = &st.members[m++];
            mb->inst = i;
            mb->tid = g->slots[i];
            task_t *t = s_task(self, mb->tid);
            if (t) {
                mb->ospid = t->info.ospid;
                snprintf(mb->host, sizeof mb->host, "%s", t->info.host);
            }
        }
    st.bar_waiters = g->barrier.tids;
    st.frz_waiters = g->freeze.tids;
    st.ndp = g->ndpw;
    st.dp = calloc((size_t)g->ndpw + 1, sizeof *st.dp);
    if (!st.dp) {
        free(st.members);
        return 0;
    }
    int64_t now = gimpi_now_ms();
    for (int k = 0; k < g->ndpw; k++)
        st.dp[k] = (gd_dpwait_t){ g->dpw[k].tid, g->dpw[k].count,
                                  (int32_t)(now - g->dpw[k].since_ms) };
    size_t len = gd_groupstat_encode(&st, out);
    free(st.members);
    free(st.dp);
    return len;
}

typedef struct {
    group_t **list;
    size_t n;
} s_collect_t;

/*  Collects groups for STAT (hash visitor). */
static void s_collect_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    s_collect_t *c = a;
    c->list[c->n++] = v;
}

/*  qsort order of groups: by name. */
static int s_by_name(const void *a, const void *b)
{
    return strcmp((*(group_t *const *)a)->name, (*(group_t *const *)b)->name);
}

/*  STAT records for one group or all. */
int gd_registry_stat(gd_registry_t *self, const char *name, uint8_t ***recs, size_t **lens)
{
    assert(self);
    *recs = NULL;
    *lens = NULL;
    s_collect_t c = { 0 };
    if (name && *name) {
        group_t *g;
        uint64_t v;
        int rc = s_lookup(self, name, &g, &v);
        if (rc)
            return rc;
        c.list = malloc(sizeof *c.list);
        if (!c.list)
            return GIMPI_ENOMEM;
        c.list[c.n++] = g;
    } else {
        c.list = malloc((gd_hash_size(self->groups) + 1) * sizeof *c.list);
        if (!c.list)
            return GIMPI_ENOMEM;
        gd_hash_foreach(self->groups, s_collect_cb, &c);
        qsort(c.list, c.n, sizeof *c.list, s_by_name);
    }
    *recs = calloc(c.n + 1, sizeof **recs);
    *lens = calloc(c.n + 1, sizeof **lens);
    if (!*recs || !*lens) {
        free(*recs);
        free(*lens);
        free(c.list);
        return GIMPI_ENOMEM;
    }
    for (size_t k = 0; k < c.n; k++)
        (*lens)[k] = s_stat_one(self, c.list[k], &(*recs)[k]);
    free(c.list);
    return (int)c.n;
}

/*  Version of a group, or the counter. */
uint64_t gd_registry_version(gd_registry_t *self, const char *name)
{
    assert(self);
    group_t *g;
    uint64_t v;
    s_lookup(self, name, &g, &v);
    return v;
}

/* ------------------------------------------------------------------ reservations */

/*  Index of the live block holding tid, or -1 (binary search: blocks are by base). */
static int s_block_of(gd_registry_t *self, int32_t tid)
{
    int lo = 0, hi = self->nblocks - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const block_t *b = &self->blocks[mid];
        if (tid <= b->base)
            hi = mid - 1;
        else if (tid > b->base + b->n)
            lo = mid + 1;
        else
            return mid;
    }
    return -1;
}

/*  Tids an owner holds reserved and not yet registered. */
static int32_t s_owed(gd_registry_t *self, uint64_t owner)
{
    return owner ? (int32_t)(intptr_t)gd_hash_get(self->owners, &owner, sizeof owner) : 0;
}

/*  Adds delta to an owner's reserved tids (forgotten at 0).  0 or GIMPI_ENOMEM. */
static int s_owe(gd_registry_t *self, uint64_t owner, int32_t delta)
{
    if (!owner || !delta)
        return 0;
    int32_t left = s_owed(self, owner) + delta;
    if (left <= 0) {
        gd_hash_del(self->owners, &owner, sizeof owner);
        return 0;
    }
    return gd_hash_put(self->owners, &owner, sizeof owner, (void *)(intptr_t)left) < 0
         ? GIMPI_ENOMEM : 0;
}

/*  The connection gone: its quota with it. */
void gd_registry_owner_gone(gd_registry_t *self, uint64_t owner)
{
    assert(self);
    gd_hash_del(self->owners, &owner, sizeof owner);   /* ids are never reused */
}

/*  The token the next new block gets (a journal's replay). */
void gd_registry_force_token(gd_registry_t *self, const uint8_t token[GD_TOKEN_SIZE])
{
    assert(self);
    memcpy(self->forced_token, token, GD_TOKEN_SIZE);
    self->forced = true;
}

/*  Room for one more block.  0 or -1 (no memory). */
int gd_registry_blocks_room(gd_registry_t *self)
{
    if (self->nblocks < self->capblocks)
        return 0;
    int cap = self->capblocks ? self->capblocks * 2 : 8;
    block_t *nb = realloc(self->blocks, (size_t)cap * sizeof *nb);
    if (!nb)
        return -1;
    self->blocks = nb;
    self->capblocks = cap;
    return 0;
}

/*  Reserves n fresh tids (idempotent per non-empty key while the block lives). */
int32_t gd_registry_reserve(gd_registry_t *self, const char *key, size_t keylen, int32_t n,
                            uint64_t owner, uint8_t token[GD_TOKEN_SIZE])
{
    assert(self);
    assert(token);
    if (n < 1 || n > GIMPI_GROUPS_MAX_RESERVE)
        return GIMPI_EBADPARAM;
    if (keylen) {
        reservation_t *r = gd_hash_get(self->reservations, key, keylen);
        if (r) {
            if (r->n != n)
                return GIMPI_EMISMATCH;
            memcpy(token, r->token, GD_TOKEN_SIZE);
            return r->base;
        }
    }
    if (owner && s_owed(self, owner) > self->lim.reserve_quota - n)
        return GIMPI_EOUTOFRES;
    if (self->next_tid > INT32_MAX - n || self->nblocks >= self->lim.max_blocks)
        return GIMPI_EOUTOFRES;
    if (gd_registry_blocks_room(self) < 0)
        return GIMPI_ENOMEM;
    block_t b = { .base = self->next_tid - 1, .n = n, .used = calloc((size_t)n / 8 + 1, 1),
                  .owner = owner };
    if (self->forced)
        memcpy(b.token, self->forced_token, sizeof b.token);
    else
        randombytes_buf(b.token, sizeof b.token);
    self->forced = false;
    if (!b.used || (keylen && !(b.key = malloc(keylen)))) {
        free(b.used);
        return GIMPI_ENOMEM;
    }
    if (keylen) {
        memcpy(b.key, key, keylen);
        b.keylen = keylen;
        reservation_t *r = malloc(sizeof *r);
        if (!r || gd_hash_put(self->reservations, key, keylen, r) < 0) {
            free(r);
            free(b.used);
            free(b.key);
            return GIMPI_ENOMEM;
        }
        *r = (reservation_t){ b.base, n, { 0 } };
        memcpy(r->token, b.token, sizeof r->token);
    }
    if (s_owe(self, owner, n) < 0) {
        if (keylen)
            free(gd_hash_del(self->reservations, key, keylen));
        free(b.used);
        free(b.key);
        return GIMPI_ENOMEM;
    }
    memcpy(token, b.token, GD_TOKEN_SIZE);
    self->blocks[self->nblocks++] = b;      /* bases only grow: the array stays sorted */
    self->next_tid += n;
    return b.base;
}

/*  Marks tid of block k used (registered, or ended before it could); frees the block
 *  once every tid of it is used. */
static void s_block_use(gd_registry_t *self, int k, int32_t tid)
{
    block_t *b = &self->blocks[k];
    int32_t bit = tid - b->base - 1;
    b->used[bit / 8] |= (uint8_t)(1u << (bit % 8));
    s_owe(self, b->owner, -1);
    if (++b->nused == b->n) {               /* every tid handed out: forget the block */
        if (b->key)
            free(gd_hash_del(self->reservations, b->key, b->keylen));
        free(b->key);
        free(b->used);
        memmove(b, b + 1, (size_t)(self->nblocks - k - 1) * sizeof *b);
        self->nblocks--;
    }
}

/*  True when tid lies in block k and has not been used yet. */
static bool s_block_unused(gd_registry_t *self, int k, int32_t tid)
{
    int32_t bit = tid - self->blocks[k].base - 1;
    return !(self->blocks[k].used[bit / 8] & (1u << (bit % 8)));
}

/*  Registers the task behind a routing id as a reserved tid. */
int32_t gd_registry_register_tid(gd_registry_t *self, const uint8_t *key, size_t keylen,
                                 const gd_taskinfo_t *info, int32_t tid,
                                 const uint8_t token[GD_TOKEN_SIZE])
{
    assert(self);
    if (keylen == 0 || keylen > sizeof ((task_t *)0)->key)
        return GIMPI_EBADPARAM;
    task_t *t = gd_hash_get(self->keys, key, keylen);
    if (t)
        return t->tid == tid ? tid : GIMPI_EEXISTS;
    if (s_task(self, tid))
        return GIMPI_EDUPHOST;
    int k = s_block_of(self, tid);
    if (k < 0)
        return GIMPI_EBADPARAM;
    block_t *b = &self->blocks[k];
    if (!s_block_unused(self, k, tid))
        return GIMPI_EBADPARAM;             /* registered before and gone since */
    if (!token || sodium_memcmp(token, b->token, GD_TOKEN_SIZE) != 0)
        return GIMPI_EDENIED;               /* not of the spawner's job */
    int32_t rc = gd_registry_task_add(self, key, keylen, info, tid);
    if (rc < 0)
        return rc;
    s_block_use(self, k, tid);
    return tid;
}

/*  Reserved blocks that still have unregistered tids. */
size_t gd_registry_nblocks(gd_registry_t *self)
{
    assert(self);
    return (size_t)self->nblocks;
}

/* ------------------------------------------------------------------ the virtual machine */

/*  A task ended as its manager says: gone like a closed connection, or, reserved and
 *  never registered, never to register. */
int gd_registry_task_exit(gd_registry_t *self, int32_t tid)
{
    assert(self);
    if (s_task(self, tid))
        return gd_registry_remove(self, tid, true);
    int k = s_block_of(self, tid);
    if (k < 0 || !s_block_unused(self, k, tid))
        return GIMPI_ENOTASK;
    s_block_use(self, k, tid);
    return 0;
}

/*  A reserved tid that never registered died, as the holder of its block's token says. */
int gd_registry_spawn_exit(gd_registry_t *self, int32_t tid, const uint8_t *token)
{
    assert(self);
    if (s_task(self, tid))
        return GIMPI_EEXISTS;
    int k = s_block_of(self, tid);
    if (k < 0 || !s_block_unused(self, k, tid))
        return GIMPI_ENOTASK;
    if (!token || sodium_memcmp(token, self->blocks[k].token, GD_TOKEN_SIZE) != 0)
        return GIMPI_EDENIED;
    s_block_use(self, k, tid);
    return 0;
}

/*  BARRIER_NOTE: a member says it waits in a barrier on the data plane (count > 0), or no
 *  longer does (0).  Only for gimpi-stat: nothing waits on it here. */
int gd_registry_barrier_note(gd_registry_t *self, int32_t tid, const char *name, int32_t count)
{
    assert(self);
    group_t *g;
    uint64_t v;
    int rc = s_lookup(self, name, &g, &v);
    if (rc)
        return rc;
    if (count < 0)
        return GIMPI_EBADPARAM;
    int inst;
    for (inst = 0; inst < g->cap && g->slots[inst] != tid; inst++)
        ;
    if (inst == g->cap)
        return GIMPI_ENOTINGROUP;
    s_dp_forget(g, tid);
    if (count == 0)
        return 0;
    if (g->ndpw == g->capdpw) {
        int cap = g->capdpw ? 2 * g->capdpw : 4;
        void *n = realloc(g->dpw, (size_t)cap * sizeof *g->dpw);
        if (!n)
            return GIMPI_ENOMEM;
        g->dpw = n;
        g->capdpw = cap;
    }
    g->dpw[g->ndpw].tid = tid;
    g->dpw[g->ndpw].count = count;
    g->dpw[g->ndpw++].since_ms = gimpi_now_ms();
    return 0;
}

/*  TASKINFO: the parent and program name of a registered task. */
int gd_registry_taskinfo(gd_registry_t *self, int32_t tid, int32_t ptid, const char *name,
                         size_t namelen)
{
    assert(self);
    task_t *t = s_task(self, tid);
    if (!t)
        return GIMPI_ENOTASK;
    if (ptid < 0)
        return GIMPI_EBADPARAM;
    if (namelen > GD_MAX_TEXT)
        namelen = GD_MAX_TEXT;
    t->ptid = ptid;
    memcpy(t->name, name, namelen);
    t->name[namelen] = 0;
    return 0;
}

typedef struct {
    const char *host;           /* NULL: every task */
    gd_vmtask_t *list;
    int n;
} s_tasks_t;

/*  Collects the tasks of one host (hash visitor). */
static void s_tasks_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    s_tasks_t *c = a;
    const task_t *t = v;
    if (c->host && strcmp(c->host, t->info.host) != 0)
        return;
    gd_vmtask_t *r = &c->list[c->n++];
    r->tid = t->tid;
    r->ptid = t->ptid;
    r->ospid = t->info.ospid;
    r->flags = 0;
    snprintf(r->host, sizeof r->host, "%s", t->info.host);
    snprintf(r->name, sizeof r->name, "%s", t->name);
}

/*  qsort order of task records: by tid. */
static int s_by_tid(const void *a, const void *b)
{
    int32_t x = ((const gd_vmtask_t *)a)->tid, y = ((const gd_vmtask_t *)b)->tid;
    return (x > y) - (x < y);
}

/*  TASKS: the records of every registered task of a host ("" or NULL: all), by tid. */
int gd_registry_tasks(gd_registry_t *self, const char *host, uint8_t **blob, size_t *len)
{
    assert(self);
    *blob = NULL;
    *len = 0;
    s_tasks_t c = { host && *host ? host : NULL, NULL, 0 };
    c.list = malloc((gd_hash_size(self->tasks) + 1) * sizeof *c.list);
    if (!c.list)
        return GIMPI_ENOMEM;
    gd_hash_foreach(self->tasks, s_tasks_cb, &c);
    qsort(c.list, (size_t)c.n, sizeof *c.list, s_by_tid);
    *len = gd_tasks_encode(c.list, c.n, blob);
    free(c.list);
    if (!*blob)
        return GIMPI_ENOMEM;
    if (*len > (size_t)GD_MAX_BLOB) {
        free(*blob);
        *blob = NULL;
        *len = 0;
        return GIMPI_EOUTOFRES;
    }
    return c.n;
}
