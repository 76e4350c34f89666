/*  coll_group.c — the group-level calls of gimpi_coll.h: a group's view kept per
 *  membership version from the groups cache and shared by the calls that use it, the
 *  groupd barrier rules (counts, synced versions), then the operations over the view.
 */
#include "coll/coll_internal.h"

#include <assert.h>

/*  Lets go of a kept view (lock held): frees it when nobody holds it any more. */
static cview_t *s_view_drop(cview_t *cv)
{
    return cv && --cv->refs == 0 ? cv : NULL;
}

/*  Puts back a view that s_group_view handed out. */
static void s_view_put(gimpi_coll_t *self, cview_t **cv)
{
    if (!*cv)
        return;
    pthread_mutex_lock(&self->mu);
    cview_t *gone = s_view_drop(*cv);
    pthread_mutex_unlock(&self->mu);
    if (gone) {
        gimpi_view_destroy(&gone->v);
        free(gone);
    }
    *cv = NULL;
}

/*  Records the groups cache's answer that the kept view of s holds (lock held). */
static void s_answer(seq_t *s, gimpi_groups_t *groups, const gimpi_group_snap_t *snap, int n)
{
    s->groups = groups;
    s->snap = *snap;
    s->snap.tids = NULL;
    s->members = n;
}

/*  Hands out the kept view of s with its recorded answer, and lets go of the lock.
 *  Returns the member count. */
static int s_view_take(seq_t *s, gimpi_group_snap_t *snap, cview_t **cv, uint64_t *synced,
                       pthread_mutex_t *mu)
{
    *snap = s->snap;
    *cv = s->view;
    (*cv)->refs++;
    if (synced)
        *synced = s->synced;
    int n = s->members;
    pthread_mutex_unlock(mu);
    return n;
}

/*  The view of a group now: the kept one while the groups cache still holds its version
 *  (no copy, no allocation: the common case), else a new snapshot, kept in its place.
 *  *snap gets the group's state (tids NULL).  Returns the member count or an error
 *  (GIMPI_ESYSERR also when groupd's tid of this task is not its data-plane tid: the
 *  group's tids would mean other tasks); a view handed out goes back with s_view_put.
 *  *synced (when not NULL) gets the version (+ 1; 0 = never) this task saw after its
 *  last groupd barrier on the group. */
static int s_group_view(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                        gimpi_group_snap_t *snap, cview_t **cv, uint64_t *synced)
{
    *cv = NULL;
    if (!group || !*group)
        return GIMPI_ENULLGROUP;
    if (!groups)
        return GIMPI_ESYSERR;
    pthread_mutex_lock(&self->mu);      /* the common case: nothing changed since */
    seq_t *s = coll_find(self, group);
    if (s && s->view && s->groups == groups && gimpi_group_unchanged(groups, s->snap.gen))
        return s_view_take(s, snap, cv, synced, &self->mu);
    pthread_mutex_unlock(&self->mu);
    int n = gimpi_group_state(groups, group, snap);
    if (n < 0)
        return n;
    int mytid = gimpi_msg_mytid(self->msg);
    if (gimpi_group_mytid(groups) != mytid)
        return GIMPI_ESYSERR;
    pthread_mutex_lock(&self->mu);
    s = coll_entry(self, group);
    if (s && s->view && s->view->v->version == snap->version) {
        s_answer(s, groups, snap, n);
        return s_view_take(s, snap, cv, synced, &self->mu);
    }
    pthread_mutex_unlock(&self->mu);
    gimpi_group_snap_t full;
    n = gimpi_group_snapshot(groups, group, &full);
    if (n < 0)
        return n;
    cview_t *nv = calloc(1, sizeof *nv + (size_t)(full.ninst + 1) * sizeof(int));
    if (nv)
        nv->v = gimpi_view_new(group, full.version, full.tids, full.ninst, mytid);
    free(full.tids);
    full.tids = NULL;
    if (!nv || !nv->v) {
        free(nv);
        return GIMPI_ENOMEM;
    }
    nv->n = coll_members(nv->v, nv->m, &nv->pos);  /* fixed for the version: kept */
    int *cl = malloc(((size_t)nv->n + 1) * sizeof *cl), multi = 0;
    int unknown = cl ? coll_clients(self, nv->m, nv->n, cl, &multi) : 1;
    nv->multi = !cl ? -1 : multi && !unknown;  /* -1: every call finds out itself */
    free(cl);
    *snap = full;
    nv->refs = 1;
    pthread_mutex_lock(&self->mu);
    s = coll_entry(self, group);
    cview_t *gone = NULL;
    if (s) {
        gone = s_view_drop(s->view);
        s->view = nv;
        nv->refs++;
        s_answer(s, groups, snap, n);
    }
    if (synced)
        *synced = s ? s->synced : 0;
    pthread_mutex_unlock(&self->mu);
    if (gone) {
        gimpi_view_destroy(&gone->v);
        free(gone);
    }
    *cv = nv;
    return n;
}

/*  The view of a group now (a copy the caller owns). */
int gimpi_coll_group_view(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                          gimpi_view_t **view)
{
    assert(self && view);
    gimpi_group_snap_t snap;
    cview_t *cv;
    *view = NULL;
    int n = s_group_view(self, groups, group, &snap, &cv, NULL);
    if (n < 0)
        return n;
    *view = gimpi_view_new(group, cv->v->version, cv->v->tids, cv->v->ninst,
                           gimpi_msg_mytid(self->msg));
    s_view_put(self, &cv);
    return *view ? n : GIMPI_ENOMEM;
}

/*  Records the version (+ 1) this task saw after a groupd barrier on group. */
static void s_set_synced(gimpi_coll_t *self, const char *group, uint64_t v)
{
    pthread_mutex_lock(&self->mu);
    seq_t *s = coll_entry(self, group);
    if (s)
        s->synced = v;
    pthread_mutex_unlock(&self->mu);
}

/*  pvm_barrier: on the data plane when count is -1 or the group's size and the membership
 *  is what this task saw after its last groupd barrier on the group (the common case: the
 *  first barrier after any join or leave goes through groupd, which also brings every
 *  member's cache up to date, so all members take the same way); by groupd's arbitration
 *  otherwise. */
int gimpi_coll_group_barrier(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                             int count)
{
    assert(self);
    if (!group || !*group)
        return GIMPI_ENULLGROUP;
    if (count == 0 || count < -1)
        return GIMPI_EBADPARAM;
    gimpi_group_snap_t snap;
    cview_t *cv;
    uint64_t synced;
    int n = s_group_view(self, groups, group, &snap, &cv, &synced);
    if (n < 0)
        return n;
    const gimpi_view_t *v = cv->v;
    int rc;
    if (v->me < 0)
        rc = GIMPI_ENOTINGROUP;
    else if (snap.dead)
        rc = GIMPI_ENOGROUP;
    else if ((count == -1 || count == n) && synced == snap.version + 1) {
        self->dpb.groups = groups;
        self->dpb.group = group;
        self->dpb.count = n;
        self->dpb.noted = 0;
        coll_live_begin(self, "pvm_barrier", groups, group, count);
        rc = coll_barrier(self, groups, v, n, cv);
        coll_live_end(self);
        if (self->dpb.noted)
            gimpi_groups_barrier_note(groups, group, 0);
        self->dpb.groups = NULL;
        if (rc == GIMPI_ESYSERR && snap.frozen) {   /* a frozen group that lost a member */
            gimpi_group_snap_t now = { 0 };
            if (gimpi_group_state(groups, group, &now) < 0 || now.dead)
                rc = GIMPI_ENOGROUP;
        }
    } else {
        rc = gimpi_group_barrier(groups, group, count);
        gimpi_group_snap_t now = { 0 };
        if (rc == 0 && gimpi_group_state(groups, group, &now) >= 0)
            s_set_synced(self, group, now.version + 1);
    }
    s_view_put(self, &cv);
    return rc;
}

/*  pvm_bcast over the group's members now (the caller need not be one). */
int gimpi_coll_group_bcast(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                           uint64_t cid, int tag, const void *buf, size_t len)
{
    assert(self);
    if (!group || !*group)
        return GIMPI_ENULLGROUP;
    if (tag < 0)
        return GIMPI_EBADPARAM;
    gimpi_group_snap_t snap;
    cview_t *cv;
    int n = s_group_view(self, groups, group, &snap, &cv, NULL);
    if (n < 0)
        return n;
    int rc = gimpi_coll_bcast(self, cv->v, cid, tag, buf, len);
    s_view_put(self, &cv);
    return rc;
}

/*  Common front of the group-level reduce, gather and scatter: the view, membership. */
static int s_group_enter(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                         cview_t **cv)
{
    gimpi_group_snap_t snap;           /* (s_group_view checks the name, NULLs *cv) */
    int n = s_group_view(self, groups, group, &snap, cv, NULL);
    if (n < 0)
        return n;
    if ((*cv)->v->me < 0) {
        s_view_put(self, cv);
        return GIMPI_ENOTINGROUP;
    }
    return 0;
}

/*  pvm_reduce over the group's members now. */
int gimpi_coll_group_reduce(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                            int op, gimpi_reduce_fn fn, void *data, int count, int datatype,
                            int tag, int root)
{
    cview_t *cv;
    int rc = s_group_enter(self, groups, group, &cv);
    if (rc == 0) {
        coll_live_begin(self, "pvm_reduce", groups, group, root);
        rc = coll_reduce(self, groups, cv->v, op, fn, data, count, datatype, tag, root, cv);
        coll_live_end(self);
    }
    s_view_put(self, &cv);
    return rc;
}

/*  pvm_gather (scatter = 0) or pvm_scatter (1) over the group's members now. */
static int s_group_gs(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                      void *result, const void *data, int count, int datatype, int tag,
                      int root, int scatter)
{
    cview_t *cv;
    int rc = s_group_enter(self, groups, group, &cv);
    if (rc == 0) {
        coll_live_begin(self, scatter ? "pvm_scatter" : "pvm_gather", groups, group, root);
        rc = coll_gather_scatter(self, cv->v, result, data, count, datatype, tag, root, scatter);
        coll_live_end(self);
    }
    s_view_put(self, &cv);
    return rc;
}

/*  pvm_gather over the group's members now. */
int gimpi_coll_group_gather(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                            void *result, const void *data, int count, int datatype, int tag,
                            int root)
{
    return s_group_gs(self, groups, group, result, data, count, datatype, tag, root, 0);
}

/*  pvm_scatter over the group's members now. */
int gimpi_coll_group_scatter(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                             void *result, const void *data, int count, int datatype, int tag,
                             int root)
{
    return s_group_gs(self, groups, group, result, data, count, datatype, tag, root, 1);
}
