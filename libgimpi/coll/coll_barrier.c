/*  coll_barrier.c — barrier and bcast over a view (doc/collectives.md): the barrier as a
 *  star, by dissemination, by IMPI's client structure or through shared memory, with
 *  PvmMismatch for callers whose counts differ; bcast as a standard send to each member
 *  for small messages and down the engine's forwarding tree (gimpi_msg_fwd.h) for large
 *  ones.
 */
#include "coll/coll_internal.h"
#include "net/msg_fwd_hooks.h"     /* the send entries without the send hook */

#include <assert.h>

static int s_barrier_diss(gimpi_coll_t *self, const int *m, int n, int pos, int tag, int count,
                          int32_t st);

/*  Barrier through shared memory: in the one segment, or, on several nodes, each node's
 *  members meet in their segment, its leader meets the other leaders on the data plane
 *  (dissemination), and the node meets again to be released.  A leader whose meeting
 *  failed breaks its node's segment, so that its members fail too. */
static int s_shm_barrier_nodes(gimpi_coll_t *self, gimpi_groups_t *groups, shm_link_t *link,
                               int tag, int count)
{
    if (link->nlead == 1)
        return coll_node_barrier(self, groups, link, link->pos, tag);
    int rc = link->seg ? coll_node_barrier(self, groups, link, link->pos, tag) : 0;
    if (link->lead_pos >= 0) {          /* a failed node still meets: others learn of it */
        if (self->dpb.groups)
            gimpi_msg_set_blocked_hook(self->msg, coll_on_blocked, self);
        rc = s_barrier_diss(self, link->lead, link->nlead, link->lead_pos, tag, count, rc);
        if (self->dpb.groups)
            gimpi_msg_set_blocked_hook(self->msg, NULL, NULL);
        if (rc && link->seg)
            coll_shm_break(link->seg);
    }
    if (rc == 0 && link->seg)
        rc = coll_node_barrier(self, groups, link, link->pos, tag);
    return rc;
}

/*  The centre of a star (m[0]) collects the arrivals of m[1..n-1]: a count different from
 *  its own is answered with PvmMismatch at once and not counted (the centre waits for
 *  that member's retry).  Returns the outcome so far. */
static int s_star_collect(gimpi_coll_t *self, const int *m, int n, int tag, int count)
{
    gimpi_msg_req_t **req = calloc((size_t)n, sizeof *req);
    int32_t *in = calloc((size_t)n, sizeof *in);
    int rc = 0;
    if (!req || !in)
        rc = GIMPI_ENOMEM;
    for (int i = 1; req && in && i < n; i++)
        if (coll_irecv(self, m[i], tag, &in[i], 4, &req[i]) < 0)
            req[i] = NULL;
    for (int i = 1; req && in && i < n; i++) {
        int r = coll_wait(self, &req[i], 4);
        while (r == 0 && in[i] != count) {     /* not counted: tell it, wait for its retry */
            int32_t mis = GIMPI_EMISMATCH;
            r = coll_send(self, m[i], tag, &mis, 4);
            if (r == 0)
                r = coll_recv(self, m[i], tag, &in[i], 4);
        }
        rc = coll_worse(rc, r);
    }
    free(req);
    free(in);
    return rc;
}

/*  The centre of a star releases m[1..n-1] with the outcome st. */
static void s_star_release(gimpi_coll_t *self, const int *m, int n, int tag, int32_t st)
{
    gimpi_msg_req_t **req = calloc((size_t)n, sizeof *req);
    for (int i = 1; req && i < n; i++)
        if (coll_isend(self, m[i], tag, &st, 4, &req[i]) < 0)
            req[i] = NULL;              /* a dead member: nothing to release */
    for (int i = 1; req && i < n; i++)
        if (req[i])
            coll_wait(self, &req[i], SIZE_MAX);
    if (!req)                           /* no memory for requests: one by one */
        for (int i = 1; i < n; i++)
            coll_send(self, m[i], tag, &st, 4);
    free(req);
}

/*  A member of a star: reports its count to centre, waits for the outcome. */
static int s_star_member(gimpi_coll_t *self, int centre, int tag, int count)
{
    int32_t st = 0, c = count;
    int rc = coll_send(self, centre, tag, &c, 4);
    if (rc == 0)
        rc = coll_recv(self, centre, tag, &st, 4);
    return rc ? rc : st;
}

/*  Star barrier through m[0]. */
static int s_barrier_star(gimpi_coll_t *self, const int *m, int n, int pos, int tag, int count)
{
    if (pos != 0)
        return s_star_member(self, m[0], tag, count);
    int rc = s_star_collect(self, m, n, tag, count);
    s_star_release(self, m, n, tag, rc);
    return rc;
}

/*  A barrier over members of several IMPI clients (doc/collectives.md, "Groups spanning
 *  several IMPI clients"): a star inside each client through its master (its first member
 *  in instance order), IMPI's masters' phase between the masters (linear up to MAXLINEAR
 *  masters, tree above; 0-byte messages, IMPI_TAG_BARRIER on the collective context), then
 *  the local release. */
static int s_barrier_clients(gimpi_coll_t *self, const int *m, int n, int pos, int tag,
                             int count, const int *cl)
{
    int *local = malloc((size_t)n * sizeof *local), *ranks = malloc((size_t)n * sizeof *ranks);
    if (!local || !ranks) {
        free(local);
        free(ranks);
        return GIMPI_ENOMEM;
    }
    int nl = 0, nm = 0, mynum = -1;
    for (int i = 0; i < n; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = cl[j] != cl[i];
        if (first) {
            if (cl[i] == cl[pos])
                mynum = i == pos ? nm : -1;
            ranks[nm++] = gimpi_msg_rank(self->msg, m[i]);
        }
        if (cl[i] == cl[pos])
            local[nl++] = m[i];         /* local[0] is the client's master */
    }
    int rc;
    if (local[0] != m[pos])
        rc = s_star_member(self, local[0], tag, count);
    else {
        rc = s_star_collect(self, local, nl, tag, count);
        int g = impi_masters_barrier(self->msg, ranks, nm, mynum, gimpi_msg_maxlinear(self->msg));
        rc = coll_worse(rc, g ? GIMPI_ESYSERR : 0);
        s_star_release(self, local, nl, tag, rc);
    }
    free(local);
    free(ranks);
    return rc;
}

/*  Dissemination barrier: in round k send to pos+2^k, receive from pos-2^k; an error (or a
 *  count that differs: PvmMismatch for everyone) travels with the messages, so every member
 *  learns it and none stops early; st is the caller's own outcome so far, sent along. */
static int s_barrier_diss(gimpi_coll_t *self, const int *m, int n, int pos, int tag, int count,
                          int32_t st)
{
    for (int k = 1; k < n; k <<= 1) {
        int32_t out[2] = { st, count }, in[2] = { 0, count };
        gimpi_msg_req_t *sreq = NULL, *rreq = NULL;
        int rc = coll_irecv(self, m[(pos - k + n) % n], tag, in, 8, &rreq);
        int src = coll_isend(self, m[(pos + k) % n], tag, out, 8, &sreq);
        rc = coll_worse(rc < 0 ? GIMPI_ESYSERR : 0, coll_wait(self, &rreq, 8));
        if (src == 0)
            coll_wait(self, &sreq, SIZE_MAX);
        if (rc == 0 && in[1] != count)
            rc = GIMPI_EMISMATCH;
        st = coll_worse(st, coll_worse(rc, in[0]));
    }
    return st;
}

/*  A barrier over a view with a count every member must agree on; advances the group's
 *  sequence unless this caller was refused with PvmMismatch. */
int coll_barrier(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view,
                 int count, const cview_t *cv)
{
    int mbuf[STACK_INTS], cbuf[STACK_INTS], pos, rc = 0, n, multi = 0;
    int known = cv && cv->multi >= 0;   /* a kept view knows its members and clients */
    int *m = coll_view_members(view, cv, mbuf, &n, &pos);
    if (!m)
        return GIMPI_ENOMEM;
    int tag = coll_tag(self, view, K_BARRIER, 0);
    int *cl = coll_ints(cbuf, (size_t)n + 1, 0);
    if (known && !cv->multi)
        multi = 0;                      /* cl unused: one client */
    else {
        int unknown = coll_clients(self, m, n, cl, &multi);
        multi &= !unknown;
    }
    /* two members: one exchange (the dissemination's single round) beats a star's two
       hops, and both leave together, where a star's centre leaves a send later */
    int star = n > 2 && n <= self->star_max;
    shm_link_t *link = NULL;
    if (tag >= 0 && cl && !multi)
        link = coll_node_link(self, groups, view, m, n, pos, tag, &rc);
    if (rc)
        star = 0;
    else if (tag < 0 || !cl)
        rc = tag < 0 ? tag : GIMPI_ENOMEM;
    else if (link) {
        rc = s_shm_barrier_nodes(self, groups, link, tag, count);
        star = 0;
    } else {                            /* on the data plane: shown by gimpi-stat once slow */
        if (self->dpb.groups)
            gimpi_msg_set_blocked_hook(self->msg, coll_on_blocked, self);
        if (multi)
            rc = s_barrier_clients(self, m, n, pos, tag, count, cl);
        else if (star)
            rc = s_barrier_star(self, m, n, pos, tag, count);
        else if (n > 1)
            rc = s_barrier_diss(self, m, n, pos, tag, count, 0);
        if (self->dpb.groups)
            gimpi_msg_set_blocked_hook(self->msg, NULL, NULL);
    }
    coll_ints_free(cl, cbuf);
    if (tag >= 0 && (rc != GIMPI_EMISMATCH || !star || pos == 0))
        coll_tag(self, view, K_BARRIER, 1);
    if (!known)
        coll_ints_free(m, mbuf);
    return rc;
}

/*  Barrier over the view's members. */
int gimpi_coll_barrier(gimpi_coll_t *self, const gimpi_view_t *view)
{
    assert(self);
    int rc = coll_check_view(view, 0);
    return rc ? rc : coll_barrier(self, NULL, view, gimpi_view_size(view), NULL);
}

/* ------------------------------------------------------------------ bcast */

/*  Broadcast: small messages straight to every receiver, large ones down the forwarding
 *  tree of the engine. */
int gimpi_coll_bcast(gimpi_coll_t *self, const gimpi_view_t *view, uint64_t cid, int tag,
                     const void *buf, size_t len)
{
    assert(self);
    if (!view || view->ninst < 0 || (view->ninst && !view->tids) || tag < 0 || (len && !buf))
        return GIMPI_EBADPARAM;
    int mytid = gimpi_msg_mytid(self->msg), mbuf[STACK_INTS];
    int *m = coll_ints(mbuf, (size_t)view->ninst + 1, 0);
    if (!m)
        return GIMPI_ENOMEM;
    int n = 0;
    for (int i = 0; i < view->ninst; i++)
        if (view->tids[i] > 0 && view->tids[i] != mytid)
            m[n++] = view->tids[i];
    int rc = 0;
    if (n == 0)
        rc = GIMPI_ENOINST;
    else if (len >= self->tree_min && n >= self->tree_recv && n > 1) {
        if (__builtin_expect(self->trace != NULL, 0))
            coll_trace_send(self, "bcast-tree", tag, -1, len, n);
        rc = gimpi_msg_fwd_bcast(self->msg, cid, tag, buf, len, m, n);
    }
    else if (len <= BCAST_SEND_MAX) {
        gimpi_msg__before_send(self->msg);      /* the send hook once for the bcast */
        for (int i = 0; i < n; i++)
            if (gimpi_msg__send_cid(self->msg, cid, m[i], tag, buf, len) < 0)
                rc = GIMPI_ESYSERR;
    } else {
        gimpi_msg_req_t *rbuf[STACK_INTS];
        gimpi_msg_req_t **req = n <= STACK_INTS ? rbuf : calloc((size_t)n, sizeof *req);
        if (!req)
            rc = GIMPI_ENOMEM;
        else
            gimpi_msg__before_send(self->msg);
        for (int i = 0; req && i < n; i++)
            if (gimpi_msg__isend_cid(self->msg, cid, m[i], tag, buf, len, 0, &req[i]) < 0) {
                req[i] = NULL;
                rc = GIMPI_ESYSERR;
            }
        for (int i = 0; req && i < n; i++)
            if (req[i])
                rc = coll_worse(rc, coll_wait(self, &req[i], SIZE_MAX));
        if (req != rbuf)
            free(req);
    }
    coll_ints_free(m, mbuf);
    return rc;
}
