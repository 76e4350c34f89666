/*  coll_node.c — the node glue of the group operations: barrier and reduce over members
 *  that share this machine and user meet in a shared segment (coll_shm.h) instead of the
 *  data plane, set up by a message exchange at the first of them per membership; over
 *  several nodes one segment per node, its first member leading it on the data plane.
 *  Causal stamps, which messages carry on the data plane, are sent here as 0-byte
 *  messages when a member has seen a newer groupd version (doc/collectives.md).
 */
#include "coll/coll_internal.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <time.h>

/*  Liveness of member j of a segment (coll_shm_alive_fn): a receive naming it fails at once
 *  when the data plane has lost it (its sockets closed, or groupd said it is gone). */
static int s_shm_alive(void *arg, int j)
{
    shm_link_t *link = arg;
    gimpi_msg_t *msg = link->coll->msg;
    int32_t dummy;
    gimpi_msg_req_t *req = NULL;
    int tag = (int)(1u << 30 | (uint32_t)K_ALIVE << 27);    /* nobody sends this kind */
    if (gimpi_msg_irecv_cid(msg, GIMPI_CID_COLL, link->tids[j], tag, &dummy, 4, &req) < 0)
        return 0;
    int flag = 0;
    gimpi_msg_test(msg, &req, &flag, NULL);
    if (flag)
        return 0;
    gimpi_msg_cancel(msg, req);
    gimpi_msg_wait(msg, &req, NULL);
    /* a wait this long (the segment asks every 100 ms): a barrier is shown by gimpi-stat,
       and every 500 ms groupd says whether the members still live (a stopped one does
       not close its connection, but groupd drops it) */
    gimpi_coll_t *c = link->coll;
    if (c->dpb.groups && !c->dpb.noted)
        coll_on_blocked(c);
    int64_t now = gimpi_now_ms();
    coll_live_tick(c, now);                 /* (the live view, coll_live.h) */
    if (j == (link->tids[0] == gimpi_msg_mytid(msg))) {     /* a round's first member */
        link->asking = now - link->asked_ms >= 500;
        if (link->asking)
            link->asked_ms = now;
    }
    return !link->asking || gimpi_msg_check_peer(msg, link->tids[j]) != 0;
}

/*  Checks the node table m[0] sent: node 0 first, every node numbered by its first member. */
static int s_nodes_ok(const int32_t *node, int n)
{
    int top = -1;
    for (int i = 0; i < n; i++) {
        if (node[i] < 0 || node[i] > top + 1)
            return 0;
        if (node[i] > top)
            top = node[i];
    }
    return n > 0 && node[0] == 0;
}

/*  The link of member pos of m[0..n-1] on the nodes of node[] (seg: its node's segment). */
static shm_link_t *s_link_new(gimpi_coll_t *self, const int *m, const int32_t *node, int n,
                              int pos, coll_shm_t *seg)
{
    int nn = 0, nlead = 0, lpos = 0, lead_pos = -1;
    for (int i = 0; i < n; i++) {
        if (node[i] == node[pos]) {
            lpos += i < pos;
            nn++;
        }
        if (node[i] == nlead) {         /* a node's first member */
            if (i == pos)
                lead_pos = nlead;
            nlead++;
        }
    }
    shm_link_t *link = calloc(1, sizeof *link + (size_t)(nn + nlead) * sizeof(int));
    if (!link)
        return NULL;
    link->seg = seg;
    link->coll = self;
    link->n = nn;
    link->pos = lpos;
    link->nlead = nlead;
    link->lead_pos = lead_pos;
    link->lead = link->tids + nn;
    for (int i = 0, k = 0, l = 0; i < n; i++) {
        if (node[i] == node[pos])
            link->tids[k++] = m[i];
        if (node[i] == l)
            link->lead[l++] = m[i];
    }
    return link;
}

/*  Sets up the shared memory of members m[0..n-1] (pos: the caller), in four steps on the
 *  collective context with the operation's tag re-kinded: every member sends m[0] its node
 *  key (coll_shm_node_key), and m[0] answers with the node of every member; the first
 *  member of each node with others makes that node's segment and sends them the offer,
 *  they map it; every member tells m[0] whether it could, and m[0] tells everybody the
 *  verdict (all could: shared memory, else the data plane).  *out: the link (NULL: the
 *  data plane, also when no two members share a node).  0 or GIMPI_ESYSERR (a member
 *  died). */
static int s_shm_setup(gimpi_coll_t *self, const int *m, int n, int pos, int tag,
                       shm_link_t **out)
{
    int t = coll_rekind(tag, K_SHM), rc = 0;
    int32_t ok = 1, verdict = 0;
    *out = NULL;
    int32_t *node = calloc((size_t)n, sizeof *node);
    uint8_t (*keys)[COLL_SHM_NODE_KEY] = pos == 0 ? calloc((size_t)n, sizeof *keys) : NULL;
    uint8_t key[COLL_SHM_NODE_KEY];
    coll_shm_node_key(key);
    if (!node || (pos == 0 && !keys)) {
        free(node);
        free(keys);
        return GIMPI_ENOMEM;
    }
    if (pos == 0) {
        memcpy(keys[0], key, sizeof key);
        for (int i = 1; i < n && rc == 0; i++)
            rc = coll_recv(self, m[i], t, keys[i], sizeof key);
        int nodes = 0;
        for (int i = 0; i < n; i++) {
            node[i] = -1;
            for (int j = 0; j < i && node[i] < 0; j++)
                if (memcmp(keys[j], keys[i], sizeof key) == 0)
                    node[i] = node[j];
            if (node[i] < 0)
                node[i] = nodes++;
        }
        for (int i = 1; i < n && rc == 0; i++)
            rc = coll_send(self, m[i], t, node, (size_t)n * sizeof *node);
    } else {
        rc = coll_send(self, m[0], t, key, sizeof key);
        if (rc == 0)
            rc = coll_recv(self, m[0], t, node, (size_t)n * sizeof *node);
        if (rc == 0 && !s_nodes_ok(node, n))
            rc = GIMPI_EBADMSG;
    }
    free(keys);
    coll_shm_t *seg = NULL;
    int lead = 0, nn = 0, lpos = 0;
    for (int i = n - 1; rc == 0 && i >= 0; i--)
        if (node[i] == node[pos]) {
            lead = i;
            nn++;
            lpos += i < pos;
        }
    if (rc == 0 && nn > 1) {            /* this node's segment */
        uint8_t buf[COLL_SHM_OFFER_SIZE] = { 0 };
        coll_shm_offer_t offer;
        if (pos == lead) {
            seg = coll_shm_create(nn, self->chunk, &offer);
            if (seg)
                coll_shm_offer_encode(&offer, buf);
            for (int i = lead + 1; i < n && rc == 0; i++)
                if (node[i] == node[pos])
                    rc = coll_send(self, m[i], t, buf, sizeof buf);
        } else {
            rc = coll_recv(self, m[lead], t, buf, sizeof buf);
            if (rc == 0 && coll_shm_offer_decode(buf, sizeof buf, &offer) == 0 && offer.n == nn)
                seg = coll_shm_attach(&offer, lpos, NULL);
        }
        ok = seg != NULL;
    }
    if (pos == 0) {
        verdict = ok;
        for (int i = 1; i < n && rc == 0; i++) {
            rc = coll_recv(self, m[i], t, &ok, 4);
            verdict &= ok == 1;
        }
        for (int i = 1; i < n && rc == 0; i++)
            rc = coll_send(self, m[i], t, &verdict, 4);
    } else {
        if (rc == 0)
            rc = coll_send(self, m[0], t, &ok, 4);
        if (rc == 0)
            rc = coll_recv(self, m[0], t, &verdict, 4);
    }
    coll_shm_close_fd(seg);
    int nodes = 0;                      /* shared memory helps when nodes < members */
    for (int i = 0; rc == 0 && i < n; i++)
        nodes = node[i] + 1 > nodes ? node[i] + 1 : nodes;
    if (rc == 0 && verdict == 1 && nodes < n)
        *out = s_link_new(self, m, node, n, pos, seg);
    if (!*out)
        coll_shm_destroy(&seg);
    free(node);
    return rc == GIMPI_EBADMSG ? GIMPI_ESYSERR : rc;
}

/*  The segment of a view's members m[0..n-1] (NULL: they meet over the data plane): made
 *  at the first barrier or reduce of a membership version and kept until the version or
 *  the members change.  *rc: 0 or the set-up's error. */
shm_link_t *coll_node_link(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view,
                           const int *m, int n, int pos, int tag, int *rc)
{
    *rc = 0;
    if (!self->shm || n < 2)
        return NULL;
    uint32_t key = 2166136261u;
    for (int i = 0; i < n; i++)
        key = (key ^ (uint32_t)m[i]) * 16777619u;
    pthread_mutex_lock(&self->mu);
    seq_t *s = coll_entry(self, view->name);
    shm_link_t *old = NULL;
    if (s && s->shm_tried && s->shm_version == view->version && s->shm_key == key) {
        shm_link_t *link = s->shm;
        pthread_mutex_unlock(&self->mu);
        return link;
    }
    if (s) {
        old = s->shm;
        s->shm = NULL;
        s->shm_tried = 0;
    }
    pthread_mutex_unlock(&self->mu);
    coll_link_destroy(&old);
    if (!s) {
        *rc = GIMPI_ENOMEM;
        return NULL;
    }
    shm_link_t *link;
    if (self->dpb.groups)               /* the set-up waits on the data plane */
        gimpi_msg_set_blocked_hook(self->msg, coll_on_blocked, self);
    *rc = s_shm_setup(self, m, n, pos, tag, &link);
    if (self->dpb.groups)
        gimpi_msg_set_blocked_hook(self->msg, NULL, NULL);
    if (*rc)
        return NULL;
    if (link) {
        link->seen = groups ? gimpi_groups_seen(groups) : 0;    /* the set-up told them */
        coll_shm_set_alive(link->seg, s_shm_alive, link);
    }
    pthread_mutex_lock(&self->mu);
    s = coll_entry(self, view->name);
    if (s) {
        coll_link_destroy(&s->shm);
        s->shm = link;
        s->shm_tried = 1;
        s->shm_version = view->version;
        s->shm_key = key;
    }
    pthread_mutex_unlock(&self->mu);
    return link;
}

/*  Causal stamps through shared memory (doc/collectives.md, "Causal stamps"): before an
 *  operation at group level, groupd takes this task's deferred leaves (as before any
 *  message); when the task has seen a newer groupd version since its last operation in
 *  the segment, it sends a 0-byte message, which carries the stamp, to every member in
 *  to[0..nto-1] (those who would hear from it over the data plane) and raises its flag.
 *  Returns the flag. */
int coll_stamp_out(gimpi_coll_t *self, gimpi_groups_t *groups, shm_link_t *link,
                   const int *to, int nto, int tag)
{
    if (!groups)
        return 0;
    gimpi_groups_flush(groups);
    uint64_t seen = gimpi_groups_seen(groups);
    if (seen <= link->seen)
        return 0;
    link->seen = seen;
    for (int i = 0; i < nto; i++)
        coll_send(self, link->tids[to[i]], coll_rekind(tag, K_SHM), NULL, 0);
    return 1;
}

/*  The two lists of a stamped operation, n each (flags zeroed), in tbuf and fbuf when they
 *  fit: 0, or -1 with neither taken. */
int coll_stamp_lists(int n, int *tbuf, int *fbuf, int **to, int **flags)
{
    *to = coll_ints(tbuf, (size_t)n, 0);
    *flags = coll_ints(fbuf, (size_t)n, 1);
    if (*to && *flags)
        return 0;
    coll_ints_free(*to, tbuf);
    coll_ints_free(*flags, fbuf);
    return -1;
}

/*  After the operation: takes the stamp messages of the members whose flag is up. */
int coll_stamp_in(gimpi_coll_t *self, shm_link_t *link, const int *flags, int tag)
{
    int rc = 0, dummy;
    for (int j = 0; j < link->n && rc == 0; j++)
        if (flags[j])
            rc = coll_recv(self, link->tids[j], coll_rekind(tag, K_SHM), &dummy, 0);
    return rc;
}

/*  Barrier through the segment, stamps included. */
int coll_node_barrier(gimpi_coll_t *self, gimpi_groups_t *groups, shm_link_t *link, int pos,
                      int tag)
{
    int n = link->n, tbuf[STACK_INTS], fbuf[STACK_INTS], *to, *flags;
    if (coll_stamp_lists(n, tbuf, fbuf, &to, &flags))
        return GIMPI_ENOMEM;
    int nto = 0;
    for (int j = 0; j < n; j++)
        if (j != pos)
            to[nto++] = j;
    int flag = coll_stamp_out(self, groups, link, to, nto, tag);
    if (__builtin_expect(self->trace != NULL, 0))
        coll_trace_send(self, "shm-barrier", tag, -1, 0, nto);
    int rc = coll_shm_barrier(link->seg, flag, flags);
    if (rc == 0)
        rc = coll_stamp_in(self, link, flags, tag);
    coll_ints_free(to, tbuf);
    coll_ints_free(flags, fbuf);
    return rc;
}
