/*  gimpi_coll.c — group operations over a view on the data plane (see gimpi_coll.h and
 *  doc/collectives.md): the collective state of a task, views, and the per-group
 *  bookkeeping every operation starts from.  Every operation but bcast is tagged on
 *  GIMPI_CID_COLL with a tag built from its kind, a hash of the group name and a per-group
 *  operation sequence number kept here, so back-to-back operations never mix even when
 *  members run at different paces.  Messages carry a status word so that an error found
 *  anywhere (a dead member, a user function's *info < 0) reaches the callers that wait;
 *  checks that depend on the view only (membership, holes, root) give the same answer
 *  everywhere without a message.  The operations themselves are in the files that
 *  coll_internal.h lists.
 */
#include "coll/coll_internal.h"
#include "coll/coll_trace.h"
#include "base/gimpi_trace.h"
#include "base/gimpi_tunables.h"
#include "coll/coll_live.h"
#include "groups/gimpi_groups_status.h"

#include <stdio.h>

#include <assert.h>

/*  The data plane's blocked hook while a group barrier runs on the data plane: once it
 *  has waited a while it is told to groupd, so that gimpi-stat shows it. */
void coll_on_blocked(void *arg)
{
    gimpi_coll_t *self = arg;
    if (self->dpb.groups && !self->dpb.noted
        && gimpi_groups_barrier_note(self->dpb.groups, self->dpb.group, self->dpb.count) == 0)
        self->dpb.noted = 1;
}

/*  A group operation that has waited waited_ms: its words go to groupd (coll_live.h). */
int gimpi_coll_live_publish(gimpi_coll_t *self, int waited_ms, int queued)
{
    if (!self || !self->live.op || self->live.published || !self->live.groups)
        return 0;
    char call[256];
    int barrier = !strcmp(self->live.op, "pvm_barrier");
    snprintf(call, sizeof call, "%s(\"%.200s\", %s%d)", self->live.op, self->live.group,
             barrier ? "" : "root ", self->live.arg);
    if (gimpi_groups_status(self->live.groups, call, waited_ms, queued, 0) == 0)
        self->live.published = 1;
    return 1;
}

/*  A group operation blocked in shared memory a while (coll_internal.h). */
void coll_live_tick(gimpi_coll_t *self, int64_t now_ms)
{
    if (!self->live.op || self->live.published || self->live.after_ms <= 0)
        return;
    if (!self->live.t0_ms)
        self->live.t0_ms = now_ms - 100;    /* (the first round comes 100 ms in) */
    if (now_ms - self->live.t0_ms >= self->live.after_ms)
        gimpi_coll_live_publish(self, (int)(now_ms - self->live.t0_ms), -1);
}

/*  The group operation has returned (coll_internal.h). */
void coll_live_end(gimpi_coll_t *self)
{
    if (self->live.published)
        gimpi_groups_status(self->live.groups, NULL, 0, 0, 0);
    self->live.op = NULL;
    self->live.published = 0;
}

/*  Creates the collective state of a task. */
gimpi_coll_t *gimpi_coll_new(gimpi_msg_t *msg)
{
    assert(msg);
    gimpi_coll_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->msg = msg;
    const char *e = gimpi_env("GIMPI_COLL_STAR_MAX");     /* tests reach the other algorithm */
    self->star_max = e && atoi(e) > 0 ? atoi(e) : STAR_MAX;
    e = gimpi_env("GIMPI_COLL_CHUNK");
    self->chunk = e && atol(e) >= 64 ? (size_t)atol(e) : CHUNK;
    e = gimpi_env("GIMPI_COLL_WIN");
    self->win = e && atoi(e) > 0 ? atoi(e) : WIN;
    e = gimpi_env("GIMPI_COLL_RSAG");
    self->rsag = e ? atoi(e) != 0 : 1;
    e = gimpi_env("GIMPI_COLL_TREE_MIN");
    self->tree_min = e && atol(e) > 0 ? (size_t)atol(e) : BCAST_TREE_MIN;
    e = gimpi_env("GIMPI_COLL_TREE_RECV");
    self->tree_recv = e && atoi(e) > 0 ? atoi(e) : BCAST_TREE_RECV;
    e = gimpi_env("GIMPI_SHM");
    self->shm = !(e && strcmp(e, "0") == 0);
    e = gimpi_env("GIMPI_SHM_COLL");
    self->shm &= !(e && strcmp(e, "0") == 0);
    self->live.after_ms = gimpi_groups_status_after();
    pthread_mutex_init(&self->mu, NULL);
    return self;
}

/*  Unmaps a view's segment and frees its link. */
void coll_link_destroy(shm_link_t **link_p)
{
    if (*link_p) {
        coll_shm_destroy(&(*link_p)->seg);
        free(*link_p);
        *link_p = NULL;
    }
}

/*  Frees the collective state. */
void gimpi_coll_destroy(gimpi_coll_t **self_p)
{
    assert(self_p);
    gimpi_coll_t *self = *self_p;
    if (!self)
        return;
    free(self->scratch);
    while (self->seqs) {
        seq_t *s = self->seqs;
        self->seqs = s->next;
        coll_link_destroy(&s->shm);
        if (s->view) {
            gimpi_view_destroy(&s->view->v);
            free(s->view);
        }
        free(s);
    }
    pthread_mutex_destroy(&self->mu);
    free(self);
    *self_p = NULL;
}

/*  Builds a view (copies name and tids). */
gimpi_view_t *gimpi_view_new(const char *name, uint64_t version, const int *tids, int ninst,
                             int mytid)
{
    if (!name || ninst < 0 || (ninst && !tids))
        return NULL;
    gimpi_view_t *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->name = strdup(name);
    v->tids = malloc((ninst ? ninst : 1) * sizeof *v->tids);
    if (!v->name || !v->tids) {
        gimpi_view_destroy(&v);
        return NULL;
    }
    v->version = version;
    v->ninst = ninst;
    v->me = -1;
    for (int i = 0; i < ninst; i++) {
        v->tids[i] = tids[i] > 0 ? tids[i] : 0;
        if (mytid > 0 && tids[i] == mytid)
            v->me = i;
    }
    return v;
}

/*  Frees a view. */
void gimpi_view_destroy(gimpi_view_t **self_p)
{
    assert(self_p);
    gimpi_view_t *v = *self_p;
    if (!v)
        return;
    free(v->name);
    free(v->tids);
    free(v);
    *self_p = NULL;
}

/*  Members of a view. */
int gimpi_view_size(const gimpi_view_t *view)
{
    int n = 0;
    for (int i = 0; view && i < view->ninst; i++)
        n += view->tids[i] > 0;
    return n;
}

/*  FNV-1a of a group name. */
static uint32_t s_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

/*  Adds a group's entry (it has none; lock held): NULL without memory. */
seq_t *coll_entry_add(gimpi_coll_t *self, const char *name)
{
    size_t len = strlen(name);
    seq_t *s = calloc(1, sizeof *s + len + 1);
    if (!s)
        return NULL;
    memcpy(s->name, name, len + 1);
    s->hash = s_hash(name);
    s->next = self->seqs;
    self->seqs = s;
    return s;
}

/*  The tag of the current operation of kind k on the view's group; with advance, the
 *  group's sequence number moves on (the group-level barrier leaves it for a caller that
 *  got PvmMismatch, whose retry belongs to the same episode).  The count starts again at
 *  every membership version, so that members who joined later agree on it too. */
int coll_tag(gimpi_coll_t *self, const gimpi_view_t *view, int k, int advance)
{
    pthread_mutex_lock(&self->mu);
    seq_t *s = coll_entry(self, view->name);
    if (!s) {
        pthread_mutex_unlock(&self->mu);
        return GIMPI_ENOMEM;
    }
    if (s->version != view->version) {
        s->version = view->version;
        s->seq = 0;
    }
    uint32_t seq = advance ? s->seq++ : s->seq;
    uint32_t h = s->hash ^ (uint32_t)view->version * 2654435761u;
    pthread_mutex_unlock(&self->mu);
    return (int)((1u << 30) | ((uint32_t)(k & 7) << 27) | ((h & 0x7ff) << 16) | (seq & 0xffff));
}

/*  The tag of the next operation of kind k on the view's group (and counts it). */
int coll_next_tag(gimpi_coll_t *self, const gimpi_view_t *view, int k)
{
    return coll_tag(self, view, k, 1);
}

/*  The members in instance order (compacted) into m (size view->ninst); returns their
 *  number and sets *pos to the caller's index (-1 when not a member). */
int coll_members(const gimpi_view_t *view, int *m, int *pos)
{
    int n = 0;
    *pos = -1;
    for (int i = 0; i < view->ninst; i++)
        if (view->tids[i] > 0) {
            if (i == view->me)
                *pos = n;
            m[n++] = view->tids[i];
        }
    return n;
}

/*  Checks common to the collectives every member calls: a usable view with the caller in
 *  it, and (need_full) no holes.  0 or the error. */
int coll_check_view(const gimpi_view_t *view, int need_full)
{
    if (!view || !view->name || (view->ninst && !view->tids) || view->ninst < 0)
        return GIMPI_EBADPARAM;
    if (view->me < 0 || view->me >= view->ninst || view->tids[view->me] <= 0)
        return GIMPI_ENOTINGROUP;
    if (need_full)
        for (int i = 0; i < view->ninst; i++)
            if (view->tids[i] <= 0)
                return GIMPI_ENOINST;
    return 0;
}

/*  Borrows the kept scratch buffer (grown to size), or a fresh one when another thread
 *  holds it; give it back with coll_scratch_put. */
uint8_t *coll_scratch_get(gimpi_coll_t *self, size_t size)
{
    pthread_mutex_lock(&self->mu);
    uint8_t *p = NULL;
    if (!self->scratch_busy) {
        if (self->scratch_size < size) {
            free(self->scratch);
            self->scratch = malloc(size);
            self->scratch_size = self->scratch ? size : 0;
        }
        p = self->scratch;
        self->scratch_busy = p != NULL;
    }
    pthread_mutex_unlock(&self->mu);
    return p ? p : malloc(size);
}

/*  Gives a buffer of coll_scratch_get back. */
void coll_scratch_put(gimpi_coll_t *self, uint8_t *p)
{
    pthread_mutex_lock(&self->mu);
    if (p && p == self->scratch)
        self->scratch_busy = 0;
    else
        free(p);
    pthread_mutex_unlock(&self->mu);
}

/*  The IMPI client of every member into cl (when not NULL); *multi = 1 when they span
 *  several.  Returns 1 when some member is in no client (a spawned task): the IMPI
 *  inter-client structure does not apply then. */
int coll_clients(gimpi_coll_t *self, const int *m, int n, int *cl, int *multi)
{
    int unknown = 0;
    *multi = 0;
    for (int i = 0; cl && i < n; i++) {
        cl[i] = gimpi_msg_client(self->msg, m[i]);
        unknown |= cl[i] < 0;
        *multi |= cl[i] != cl[0];
    }
    return unknown;
}

/*  Sets the recorder. */
void gimpi_coll_set_trace(gimpi_coll_t *self, struct gimpi_trace_t *rec)
{
    assert(self);
    self->trace = rec;
}

/*  One COLL_SEND record. */
__attribute__((noinline, cold))
void coll_trace_send(gimpi_coll_t *self, const char *op, int tag, int dst, size_t bytes, int n)
{
    static const char *const kinds[8] = { "alive", "barrier", "reduce", "reduce-status",
                                          "gather", "scatter", "reduce-gather", "shm" };
    int v[3] = { dst, bytes > 0x7fffffff ? 0x7fffffff : (int)bytes, n };
    gimpi_trace_rec(self->trace, GIMPI_TEV_COLL_SEND, 0, v, 3,
                    op ? op : kinds[((uint32_t)tag >> 27) & 7]);
}
