/*  gd_status.c — groupd's table of blocked tasks' statuses and of the tids that ended
 *  lately (see gd_status.h): a hash from tid to the latest TASK_STATUS, a ring of ended
 *  tids, and the STATUSES records built from both and the registry.
 */
#include "config.h"
#include "groupd/gd_status.h"
#include "base/gd_hash.h"
#include "gimpi.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/*  One task's latest status. */
typedef struct {
    int64_t since_ms;           /* groupd's clock when the call began (ms before receipt) */
    int32_t queued, peer;
    char call[GD_MAX_TEXT + 1];
} entry_t;

struct gd_status_t {
    gd_hash_t *by_tid;          /* tid -> entry_t */
    int32_t exited[GD_STATUS_EXITED];   /* ring of ended tids */
    int nexited, next;
};

/*  A fresh table. */
gd_status_t *gd_status_new(void)
{
    gd_status_t *self = calloc(1, sizeof *self);
    if (self && !(self->by_tid = gd_hash_new()))
        free(self), self = NULL;
    return self;
}

/*  Frees an entry (visitor). */
static void s_free_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    free(v);
}

/*  Frees the table and its entries. */
void gd_status_destroy(gd_status_t **self_p)
{
    assert(self_p);
    gd_status_t *self = *self_p;
    if (!self)
        return;
    gd_hash_foreach(self->by_tid, s_free_cb, NULL);
    gd_hash_destroy(&self->by_tid);
    free(self);
    *self_p = NULL;
}

/*  Sets or clears a task's status. */
int gd_status_set(gd_status_t *self, int32_t sender, int32_t tid, const uint8_t *call,
                  size_t len, int32_t ms, int32_t queued, int32_t peer, int64_t now_ms)
{
    assert(self);
    if (sender <= 0)
        return GIMPI_ENOTASK;
    if (tid != sender)
        return GIMPI_EDENIED;
    if (ms < 0 || queued < -1 || peer < 0 || len > GD_MAX_TEXT)
        return GIMPI_EBADPARAM;
    if (len == 0) {
        free(gd_hash_del(self->by_tid, &tid, sizeof tid));
        return 0;
    }
    entry_t *e = gd_hash_get(self->by_tid, &tid, sizeof tid);
    if (!e) {
        if (gd_hash_size(self->by_tid) >= GD_STATUS_MAX)
            return GIMPI_EOUTOFRES;
        if (!(e = calloc(1, sizeof *e)) || gd_hash_put(self->by_tid, &tid, sizeof tid, e) < 0) {
            free(e);
            return GIMPI_ENOMEM;
        }
    }
    e->since_ms = now_ms - ms;
    e->queued = queued;
    e->peer = peer;
    memcpy(e->call, call, len);
    e->call[len] = 0;
    return 0;
}

/*  Forgets an ended task's status and remembers its tid. */
void gd_status_task_gone(gd_status_t *self, int32_t tid)
{
    if (!self || tid <= 0)
        return;
    free(gd_hash_del(self->by_tid, &tid, sizeof tid));
    self->exited[self->next] = tid;
    self->next = (self->next + 1) % GD_STATUS_EXITED;
    if (self->nexited < GD_STATUS_EXITED)
        self->nexited++;
}

/*  How many statuses are kept. */
int gd_status_count(gd_status_t *self)
{
    assert(self);
    return (int)gd_hash_size(self->by_tid);
}

/*  A peer's state: registered, ended lately, or neither. */
static int32_t s_peer_state(gd_status_t *self, gd_registry_t *reg, int32_t peer)
{
    if (peer <= 0)
        return GD_PEER_NONE;
    gd_taskinfo_t info;
    if (gd_registry_lookup(reg, peer, &info) == 0)
        return GD_PEER_RUNNING;
    for (int k = 0; k < self->nexited; k++)
        if (self->exited[k] == peer)
            return GD_PEER_EXITED;
    return GD_PEER_UNKNOWN;
}

/*  What the visitor collects. */
typedef struct {
    gd_status_t *self;
    gd_registry_t *reg;
    int64_t now_ms;
    gd_status_rec_t *recs;
    int n;
    int32_t *stale;             /* tids no longer registered (dropped afterwards) */
    int nstale;
} collect_t;

/*  Adds one status to the records (visitor). */
static void s_collect_cb(const void *k, size_t l, void *v, void *a)
{
    (void)l;
    collect_t *c = a;
    entry_t *e = v;
    int32_t tid;
    memcpy(&tid, k, sizeof tid);
    gd_taskinfo_t info;
    if (gd_registry_lookup(c->reg, tid, &info) != 0) {
        c->stale[c->nstale++] = tid;
        return;
    }
    gd_status_rec_t *r = &c->recs[c->n++];
    int64_t ms = c->now_ms - e->since_ms;
    r->tid = tid;
    r->ms = ms < 0 ? 0 : ms > INT32_MAX ? INT32_MAX : (int32_t)ms;
    r->queued = e->queued;
    r->peer = e->peer;
    r->peer_state = s_peer_state(c->self, c->reg, e->peer);
    memcpy(r->call, e->call, sizeof r->call);
}

/*  STATUSES: the records of every status kept. */
int gd_status_list(gd_status_t *self, gd_registry_t *reg, int64_t now_ms, uint8_t **blob,
                   size_t *len)
{
    assert(self);
    size_t n = gd_hash_size(self->by_tid);
    collect_t c = { self, reg, now_ms, calloc(n + 1, sizeof *c.recs), 0,
                    calloc(n + 1, sizeof *c.stale), 0 };
    *blob = NULL;
    *len = 0;
    if (!c.recs || !c.stale) {
        free(c.recs);
        free(c.stale);
        return GIMPI_ENOMEM;
    }
    gd_hash_foreach(self->by_tid, s_collect_cb, &c);
    for (int k = 0; k < c.nstale; k++)
        free(gd_hash_del(self->by_tid, &c.stale[k], sizeof c.stale[k]));
    *len = gd_statuses_encode(c.recs, c.n, blob);
    free(c.recs);
    free(c.stale);
    if (!*blob)
        return GIMPI_ENOMEM;
    return c.n;
}
