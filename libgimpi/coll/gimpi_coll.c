/*  gimpi_coll.c — group operations over a view on the data plane (see gimpi_coll.h and
 *  doc/collectives.md).  Every operation but bcast is tagged on GIMPI_CID_COLL with a tag
 *  built from its kind, a hash of the group name and a per-group operation sequence number
 *  kept here, so back-to-back operations never mix even when members run at different
 *  paces.  Messages carry a status word so that an error found anywhere (a dead member, a
 *  user function's *info < 0) reaches the callers that wait; checks that depend on the
 *  view only (membership, holes, root) give the same answer everywhere without a message.
 *  Large bcasts are handed to the engine's forwarding tree (gimpi_msg_fwd.h).  Barrier and
 *  reduce over members that all share this machine and user meet in a shared segment
 *  instead (coll_shm.h), set up by a message exchange at the first of them per membership.
 */
#include "gimpi_coll.h"
#include "gimpi.h"            /* the GIMPI_E* codes */
#include "net/gimpi_msg_fwd.h"
#include "gimpi_ops.h"
#include "coll/impi_coll.h"
#include "coll/coll_shm.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define STAR_MAX 64                 /* barrier: star up to this many members */
#define CHUNK (128 * 1024)          /* reduce pipeline unit (one eager packet at the default length) */
#define WIN 8                       /* chunks received ahead per child */
#define BCAST_TREE_MIN (16 * 1024)  /* bcasts from this size ... */
#define BCAST_TREE_RECV 16          /* ... to this many receivers go through the tree */
#define BCAST_SEND_MAX 1024         /* bcasts up to this size: a standard send to each
                                       (written at once when it can be, else buffered),
                                       no request to make, wait for and free */

#define STACK_INTS 64               /* an operation's lists on the stack up to this size */

enum { K_ALIVE = 0, K_BARRIER = 1, K_REDUCE, K_RSTAT, K_GATHER, K_SCATTER, K_RGATHER, K_SHM };

/*  The shared memory of a view's members (coll_shm.h): one segment when they all share
 *  this machine; when they are on several nodes, one segment per node with two members or
 *  more, and the first member of each node leads it on the data plane (hierarchical). */
typedef struct {
    coll_shm_t *seg;                /* this node's segment (NULL: alone on its node) */
    gimpi_coll_t *coll;
    uint64_t seen;                  /* groupd version this task had told the members of */
    int n;                          /* members of the segment (of this node) */
    int pos;                        /* this member's place among them */
    int nlead;                      /* nodes: 1 = every member in the one segment */
    int lead_pos;                   /* this member's place among the leaders, or -1 */
    int *lead;                      /* the leaders' tids, in node order (after tids) */
    int64_t asked_ms;               /* when groupd was last asked about the members ... */
    int asking;                     /* ... and whether this round of questions asks it */
    int tids[];                     /* the segment's members in instance order */
} shm_link_t;

/*  A group's view kept for its membership version, shared by the calls that use it: freed
 *  when the last of them and the group's entry let go of it. */
typedef struct {
    gimpi_view_t *v;
    int refs;
    int n, pos;                     /* its members and the caller's place (s_members) */
    int multi;                      /* they span several IMPI clients (s_clients) */
    int m[];                        /* the members' tids, in instance order */
} cview_t;

typedef struct seq_t {
    struct seq_t *next;
    cview_t *view;                  /* the group's view of the version last used, or NULL */
    uint64_t version;               /* the membership version seq counts from */
    uint64_t synced;                /* version at this task's last groupd barrier, + 1 */
    uint32_t seq;
    uint32_t hash;                  /* s_hash of the name */
    int shm_tried;                  /* shm below is settled for shm_version/shm_key */
    uint64_t shm_version;
    uint32_t shm_key;               /* hash of the members' tids */
    shm_link_t *shm;                /* NULL: the members meet over the data plane */
    gimpi_groups_t *groups;         /* the last answer about the group, of this cache ... */
    gimpi_group_snap_t snap;        /* ... (tids NULL), which view holds ... */
    int members;                    /* ... and its member count (s_group_view) */
    char name[];
} seq_t;

struct gimpi_coll_t {
    gimpi_msg_t *msg;
    int star_max;                   /* barrier: star up to this many members */
    size_t chunk;                   /* reduce pipeline unit */
    int win;                        /* reduce: chunks received ahead per child */
    int rsag;                       /* large reduces by reduce-scatter + gather */
    size_t tree_min;                /* bcast: from this size ... */
    int tree_recv;                  /* ... and this many receivers down the forwarding tree */
    int shm;                        /* barrier and reduce through shared memory in a node */
    pthread_mutex_t mu;             /* guards seqs */
    seq_t *seqs;                    /* per group: operations started so far */
    uint8_t *scratch;               /* reduce's receive buffers, kept (no page faults) */
    size_t scratch_size;
    int scratch_busy;
    struct {                        /* the barrier on the data plane under way, if any */
        gimpi_groups_t *groups;     /* NULL: none */
        const char *group;
        int count, noted;           /* noted: groupd was told (gimpi_groups_barrier_note) */
    } dpb;
};

/*  The data plane's blocked hook while a group barrier runs on the data plane: once it
 *  has waited a while it is told to groupd, so that gimpi-stat shows it. */
static void s_on_blocked(void *arg)
{
    gimpi_coll_t *self = arg;
    if (self->dpb.groups && !self->dpb.noted
        && gimpi_groups_barrier_note(self->dpb.groups, self->dpb.group, self->dpb.count) == 0)
        self->dpb.noted = 1;
}

/* ------------------------------------------------------------------ state and views */

/*  Creates the collective state of a task. */
gimpi_coll_t *gimpi_coll_new(gimpi_msg_t *msg)
{
    assert(msg);
    gimpi_coll_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->msg = msg;
    const char *e = getenv("GIMPI_COLL_STAR_MAX");     /* tests reach the other algorithm */
    self->star_max = e && atoi(e) > 0 ? atoi(e) : STAR_MAX;
    e = getenv("GIMPI_COLL_CHUNK");
    self->chunk = e && atol(e) >= 64 ? (size_t)atol(e) : CHUNK;
    e = getenv("GIMPI_COLL_WIN");
    self->win = e && atoi(e) > 0 ? atoi(e) : WIN;
    e = getenv("GIMPI_COLL_RSAG");
    self->rsag = e ? atoi(e) != 0 : 1;
    e = getenv("GIMPI_COLL_TREE_MIN");
    self->tree_min = e && atol(e) > 0 ? (size_t)atol(e) : BCAST_TREE_MIN;
    e = getenv("GIMPI_COLL_TREE_RECV");
    self->tree_recv = e && atoi(e) > 0 ? atoi(e) : BCAST_TREE_RECV;
    e = getenv("GIMPI_SHM");
    self->shm = !(e && strcmp(e, "0") == 0);
    e = getenv("GIMPI_SHM_COLL");
    self->shm &= !(e && strcmp(e, "0") == 0);
    pthread_mutex_init(&self->mu, NULL);
    return self;
}

/*  Unmaps a view's segment and frees its link. */
static void s_link_destroy(shm_link_t **link_p)
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
        s_link_destroy(&s->shm);
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

/*  The bookkeeping entry of a group, or NULL (lock held). */
static seq_t *s_find(gimpi_coll_t *self, const char *name)
{
    seq_t *s = self->seqs;
    while (s && strcmp(s->name, name) != 0)
        s = s->next;
    return s;
}

/*  s_find, adding the group's entry when it has none (NULL: no memory). */
static seq_t *s_entry(gimpi_coll_t *self, const char *name)
{
    seq_t *s = s_find(self, name);
    if (s)
        return s;
    size_t len = strlen(name);
    s = calloc(1, sizeof *s + len + 1);
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
static int s_tag(gimpi_coll_t *self, const gimpi_view_t *view, int k, int advance)
{
    pthread_mutex_lock(&self->mu);
    seq_t *s = s_entry(self, view->name);
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
static int s_next_tag(gimpi_coll_t *self, const gimpi_view_t *view, int k)
{
    return s_tag(self, view, k, 1);
}

/*  Re-kinds a tag made by s_next_tag (same operation, another message family). */
static int s_rekind(int tag, int k)
{
    return (int)(((uint32_t)tag & ~(7u << 27)) | ((uint32_t)(k & 7) << 27));
}

/*  The members in instance order (compacted) into m (size view->ninst); returns their
 *  number and sets *pos to the caller's index (-1 when not a member). */
static int s_members(const gimpi_view_t *view, int *m, int *pos)
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
static int s_check_view(const gimpi_view_t *view, int need_full)
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
 *  holds it; give it back with s_scratch_put. */
static uint8_t *s_scratch_get(gimpi_coll_t *self, size_t size)
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

/*  Gives a buffer of s_scratch_get back. */
static void s_scratch_put(gimpi_coll_t *self, uint8_t *p)
{
    pthread_mutex_lock(&self->mu);
    if (p && p == self->scratch)
        self->scratch_busy = 0;
    else
        free(p);
    pthread_mutex_unlock(&self->mu);
}

/* ------------------------------------------------------------------ messaging helpers */

/*  Starts a send on the collective context. */
static int s_isend(gimpi_coll_t *self, int tid, int tag, const void *buf, size_t len,
                   gimpi_msg_req_t **req)
{
    return gimpi_msg_isend_cid(self->msg, GIMPI_CID_COLL, tid, tag, buf, len, 0, req);
}

/*  Posts a receive on the collective context. */
static int s_irecv(gimpi_coll_t *self, int tid, int tag, void *buf, size_t size,
                   gimpi_msg_req_t **req)
{
    return gimpi_msg_irecv_cid(self->msg, GIMPI_CID_COLL, tid, tag, buf, size, req);
}

/*  Waits for a request (if any); a failure becomes GIMPI_ESYSERR, a short or long message
 *  (len != want, unless want is SIZE_MAX) GIMPI_EBADMSG. */
static int s_wait(gimpi_coll_t *self, gimpi_msg_req_t **req, size_t want)
{
    if (!*req)
        return GIMPI_ESYSERR;
    gimpi_status_t st;
    int rc = gimpi_msg_wait(self->msg, req, &st);
    if (rc == GIMPI_EOVERFLOW)
        return GIMPI_EBADMSG;
    if (rc < 0)
        return GIMPI_ESYSERR;
    if (want != SIZE_MAX && st.len != want)
        return GIMPI_EBADMSG;
    return 0;
}

/*  A blocking send of a small message (waits for its request). */
static int s_send(gimpi_coll_t *self, int tid, int tag, const void *buf, size_t len)
{
    gimpi_msg_req_t *req = NULL;
    int rc = s_isend(self, tid, tag, buf, len, &req);
    return rc < 0 ? GIMPI_ESYSERR : s_wait(self, &req, SIZE_MAX);
}

/*  A blocking receive of exactly len bytes. */
static int s_recv(gimpi_coll_t *self, int tid, int tag, void *buf, size_t len)
{
    gimpi_msg_req_t *req = NULL;
    int rc = s_irecv(self, tid, tag, buf, len, &req);
    return rc < 0 ? GIMPI_ESYSERR : s_wait(self, &req, len);
}

/*  Worst of two results (the first error wins). */
static int s_worse(int a, int b)
{
    return a ? a : b;
}

/* ------------------------------------------------------------------ shared memory */

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
        s_on_blocked(c);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (j == (link->tids[0] == gimpi_msg_mytid(msg))) {     /* a round's first member */
        link->asking = now - link->asked_ms >= 500;
        if (link->asking)
            link->asked_ms = now;
    }
    return !link->asking || gimpi_msg_check_peer(msg, link->tids[j]) != 0;
}

/*  x = x op y for coll_shm_reduce (coll_shm_combine_fn over a combine_t). */
static int s_shm_combine(void *arg, void *x, const void *y, int cnt);

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
    int t = s_rekind(tag, K_SHM), rc = 0;
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
            rc = s_recv(self, m[i], t, keys[i], sizeof key);
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
            rc = s_send(self, m[i], t, node, (size_t)n * sizeof *node);
    } else {
        rc = s_send(self, m[0], t, key, sizeof key);
        if (rc == 0)
            rc = s_recv(self, m[0], t, node, (size_t)n * sizeof *node);
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
                    rc = s_send(self, m[i], t, buf, sizeof buf);
        } else {
            rc = s_recv(self, m[lead], t, buf, sizeof buf);
            if (rc == 0 && coll_shm_offer_decode(buf, sizeof buf, &offer) == 0 && offer.n == nn)
                seg = coll_shm_attach(&offer, lpos, NULL);
        }
        ok = seg != NULL;
    }
    if (pos == 0) {
        verdict = ok;
        for (int i = 1; i < n && rc == 0; i++) {
            rc = s_recv(self, m[i], t, &ok, 4);
            verdict &= ok == 1;
        }
        for (int i = 1; i < n && rc == 0; i++)
            rc = s_send(self, m[i], t, &verdict, 4);
    } else {
        if (rc == 0)
            rc = s_send(self, m[0], t, &ok, 4);
        if (rc == 0)
            rc = s_recv(self, m[0], t, &verdict, 4);
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
static shm_link_t *s_shm(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view,
                         const int *m, int n, int pos, int tag, int *rc)
{
    *rc = 0;
    if (!self->shm || n < 2)
        return NULL;
    uint32_t key = 2166136261u;
    for (int i = 0; i < n; i++)
        key = (key ^ (uint32_t)m[i]) * 16777619u;
    pthread_mutex_lock(&self->mu);
    seq_t *s = s_entry(self, view->name);
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
    s_link_destroy(&old);
    if (!s) {
        *rc = GIMPI_ENOMEM;
        return NULL;
    }
    shm_link_t *link;
    if (self->dpb.groups)               /* the set-up waits on the data plane */
        gimpi_msg_set_blocked_hook(self->msg, s_on_blocked, self);
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
    s = s_entry(self, view->name);
    if (s) {
        s_link_destroy(&s->shm);
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
static int s_stamp_out(gimpi_coll_t *self, gimpi_groups_t *groups, shm_link_t *link,
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
        s_send(self, link->tids[to[i]], s_rekind(tag, K_SHM), NULL, 0);
    return 1;
}

/*  n ints for one operation: from buf (STACK_INTS of them, on the caller's stack) when they
 *  fit, else from the heap; zeroed with zero.  NULL without memory. */
static int *s_ints(int *buf, size_t n, int zero)
{
    if (n <= STACK_INTS) {
        if (zero)
            memset(buf, 0, n * sizeof *buf);
        return buf;
    }
    return zero ? calloc(n, sizeof *buf) : malloc(n * sizeof *buf);
}

/*  Gives back what s_ints took. */
static void s_ints_free(int *p, const int *buf)
{
    if (p != buf)
        free(p);
}

/*  The two lists of a stamped operation, n each (flags zeroed), in tbuf and fbuf when they
 *  fit: 0, or -1 with neither taken. */
static int s_stamp_lists(int n, int *tbuf, int *fbuf, int **to, int **flags)
{
    *to = s_ints(tbuf, (size_t)n, 0);
    *flags = s_ints(fbuf, (size_t)n, 1);
    if (*to && *flags)
        return 0;
    s_ints_free(*to, tbuf);
    s_ints_free(*flags, fbuf);
    return -1;
}

/*  After the operation: takes the stamp messages of the members whose flag is up. */
static int s_stamp_in(gimpi_coll_t *self, shm_link_t *link, const int *flags, int tag)
{
    int rc = 0, dummy;
    for (int j = 0; j < link->n && rc == 0; j++)
        if (flags[j])
            rc = s_recv(self, link->tids[j], s_rekind(tag, K_SHM), &dummy, 0);
    return rc;
}

/*  Barrier through the segment, stamps included. */
static int s_shm_barrier(gimpi_coll_t *self, gimpi_groups_t *groups, shm_link_t *link, int pos,
                         int tag)
{
    int n = link->n, tbuf[STACK_INTS], fbuf[STACK_INTS], *to, *flags;
    if (s_stamp_lists(n, tbuf, fbuf, &to, &flags))
        return GIMPI_ENOMEM;
    int nto = 0;
    for (int j = 0; j < n; j++)
        if (j != pos)
            to[nto++] = j;
    int flag = s_stamp_out(self, groups, link, to, nto, tag);
    int rc = coll_shm_barrier(link->seg, flag, flags);
    if (rc == 0)
        rc = s_stamp_in(self, link, flags, tag);
    s_ints_free(to, tbuf);
    s_ints_free(flags, fbuf);
    return rc;
}

/* ------------------------------------------------------------------ barrier */

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
        return s_shm_barrier(self, groups, link, link->pos, tag);
    int rc = link->seg ? s_shm_barrier(self, groups, link, link->pos, tag) : 0;
    if (link->lead_pos >= 0) {          /* a failed node still meets: others learn of it */
        if (self->dpb.groups)
            gimpi_msg_set_blocked_hook(self->msg, s_on_blocked, self);
        rc = s_barrier_diss(self, link->lead, link->nlead, link->lead_pos, tag, count, rc);
        if (self->dpb.groups)
            gimpi_msg_set_blocked_hook(self->msg, NULL, NULL);
        if (rc && link->seg)
            coll_shm_break(link->seg);
    }
    if (rc == 0 && link->seg)
        rc = s_shm_barrier(self, groups, link, link->pos, tag);
    return rc;
}

/*  The IMPI client of every member into cl (when not NULL); *multi = 1 when they span
 *  several.  Returns 1 when some member is in no client (a spawned task): the IMPI
 *  inter-client structure does not apply then. */
static int s_clients(gimpi_coll_t *self, const int *m, int n, int *cl, int *multi)
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
        if (s_irecv(self, m[i], tag, &in[i], 4, &req[i]) < 0)
            req[i] = NULL;
    for (int i = 1; req && in && i < n; i++) {
        int r = s_wait(self, &req[i], 4);
        while (r == 0 && in[i] != count) {     /* not counted: tell it, wait for its retry */
            int32_t mis = GIMPI_EMISMATCH;
            r = s_send(self, m[i], tag, &mis, 4);
            if (r == 0)
                r = s_recv(self, m[i], tag, &in[i], 4);
        }
        rc = s_worse(rc, r);
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
        if (s_isend(self, m[i], tag, &st, 4, &req[i]) < 0)
            req[i] = NULL;              /* a dead member: nothing to release */
    for (int i = 1; req && i < n; i++)
        if (req[i])
            s_wait(self, &req[i], SIZE_MAX);
    if (!req)                           /* no memory for requests: one by one */
        for (int i = 1; i < n; i++)
            s_send(self, m[i], tag, &st, 4);
    free(req);
}

/*  A member of a star: reports its count to centre, waits for the outcome. */
static int s_star_member(gimpi_coll_t *self, int centre, int tag, int count)
{
    int32_t st = 0, c = count;
    int rc = s_send(self, centre, tag, &c, 4);
    if (rc == 0)
        rc = s_recv(self, centre, tag, &st, 4);
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
        rc = s_worse(rc, g ? GIMPI_ESYSERR : 0);
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
        int rc = s_irecv(self, m[(pos - k + n) % n], tag, in, 8, &rreq);
        int src = s_isend(self, m[(pos + k) % n], tag, out, 8, &sreq);
        rc = s_worse(rc < 0 ? GIMPI_ESYSERR : 0, s_wait(self, &rreq, 8));
        if (src == 0)
            s_wait(self, &sreq, SIZE_MAX);
        if (rc == 0 && in[1] != count)
            rc = GIMPI_EMISMATCH;
        st = s_worse(st, s_worse(rc, in[0]));
    }
    return st;
}

/*  A barrier over a view with a count every member must agree on; advances the group's
 *  sequence unless this caller was refused with PvmMismatch. */
static int s_barrier(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view,
                     int count, const cview_t *cv)
{
    int mbuf[STACK_INTS], cbuf[STACK_INTS], pos, rc = 0, n, multi = 0;
    int known = cv && cv->multi >= 0;   /* a kept view knows its members and clients */
    int *m = known ? (int *)cv->m : s_ints(mbuf, (size_t)view->ninst + 1, 1);
    if (!m)
        return GIMPI_ENOMEM;
    if (known) {
        n = cv->n;
        pos = cv->pos;
    } else
        n = s_members(view, m, &pos);
    int tag = s_tag(self, view, K_BARRIER, 0);
    int *cl = s_ints(cbuf, (size_t)n + 1, 0);
    if (known && !cv->multi)
        multi = 0;                      /* cl unused: one client */
    else {
        int unknown = s_clients(self, m, n, cl, &multi);
        multi &= !unknown;
    }
    /* two members: one exchange (the dissemination's single round) beats a star's two
       hops, and both leave together, where a star's centre leaves a send later */
    int star = n > 2 && n <= self->star_max;
    shm_link_t *link = NULL;
    if (tag >= 0 && cl && !multi)
        link = s_shm(self, groups, view, m, n, pos, tag, &rc);
    if (rc)
        star = 0;
    else if (tag < 0 || !cl)
        rc = tag < 0 ? tag : GIMPI_ENOMEM;
    else if (link) {
        rc = s_shm_barrier_nodes(self, groups, link, tag, count);
        star = 0;
    } else {                            /* on the data plane: shown by gimpi-stat once slow */
        if (self->dpb.groups)
            gimpi_msg_set_blocked_hook(self->msg, s_on_blocked, self);
        if (multi)
            rc = s_barrier_clients(self, m, n, pos, tag, count, cl);
        else if (star)
            rc = s_barrier_star(self, m, n, pos, tag, count);
        else if (n > 1)
            rc = s_barrier_diss(self, m, n, pos, tag, count, 0);
        if (self->dpb.groups)
            gimpi_msg_set_blocked_hook(self->msg, NULL, NULL);
    }
    s_ints_free(cl, cbuf);
    if (tag >= 0 && (rc != GIMPI_EMISMATCH || !star || pos == 0))
        s_tag(self, view, K_BARRIER, 1);
    if (!known)
        s_ints_free(m, mbuf);
    return rc;
}

/*  Barrier over the view's members. */
int gimpi_coll_barrier(gimpi_coll_t *self, const gimpi_view_t *view)
{
    assert(self);
    int rc = s_check_view(view, 0);
    return rc ? rc : s_barrier(self, NULL, view, gimpi_view_size(view), NULL);
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
    int *m = s_ints(mbuf, (size_t)view->ninst + 1, 0);
    if (!m)
        return GIMPI_ENOMEM;
    int n = 0;
    for (int i = 0; i < view->ninst; i++)
        if (view->tids[i] > 0 && view->tids[i] != mytid)
            m[n++] = view->tids[i];
    int rc = 0;
    if (n == 0)
        rc = GIMPI_ENOINST;
    else if (len >= self->tree_min && n >= self->tree_recv && n > 1)
        rc = gimpi_msg_fwd_bcast(self->msg, cid, tag, buf, len, m, n);
    else if (len <= BCAST_SEND_MAX) {
        for (int i = 0; i < n; i++)
            if (gimpi_msg_send_cid(self->msg, cid, m[i], tag, buf, len) < 0)
                rc = GIMPI_ESYSERR;
    } else {
        gimpi_msg_req_t *rbuf[STACK_INTS];
        gimpi_msg_req_t **req = n <= STACK_INTS ? rbuf : calloc((size_t)n, sizeof *req);
        if (!req)
            rc = GIMPI_ENOMEM;
        for (int i = 0; req && i < n; i++)
            if (gimpi_msg_isend_cid(self->msg, cid, m[i], tag, buf, len, 0, &req[i]) < 0) {
                req[i] = NULL;
                rc = GIMPI_ESYSERR;
            }
        for (int i = 0; req && i < n; i++)
            if (req[i])
                rc = s_worse(rc, s_wait(self, &req[i], SIZE_MAX));
        if (req != rbuf)
            free(req);
    }
    s_ints_free(m, mbuf);
    return rc;
}

/* ------------------------------------------------------------------ reduce */

typedef struct {
    int op;
    gimpi_reduce_fn fn;
    int datatype;
    size_t esize;
} combine_t;

/*  x = x op y over n elements; 0 or GIMPI_EBADPARAM (the user function said so). */
static int s_combine(const combine_t *c, void *x, void *y, int n)
{
    if (!c->fn)
        return gimpi_op_apply((gimpi_op_t)c->op, c->datatype, x, y, n) ? GIMPI_EBADPARAM : 0;
    int dt = c->datatype, num = n, info = 0;
    c->fn(&dt, x, y, &num, &info);
    return info < 0 ? GIMPI_EBADPARAM : 0;
}

/*  x = x op y for coll_shm_reduce. */
static int s_shm_combine(void *arg, void *x, const void *y, int cnt)
{
    return s_combine(arg, x, (void *)(uintptr_t)y, cnt);
}

/*  Small reduce (one message per tree edge: an 8-byte status header, then the data). */
static int s_reduce_small(gimpi_coll_t *self, const combine_t *c, const int *m, int n, int pos,
                          int rootpos, void *data, int count, int tag)
{
    size_t bytes = (size_t)count * c->esize;
    uint8_t *buf = malloc(8 + bytes);
    if (!buf)
        return GIMPI_ENOMEM;
    memset(buf + 4, 0, 4);      /* the header's spare half goes out as zeros */
    int32_t st = 0;
    for (int w = 1; w < n; w <<= 1) {
        if (pos & w) {
            memcpy(buf, &st, 4);
            memcpy(buf + 8, data, bytes);
            st = s_worse(st, s_send(self, m[pos - w], tag, buf, 8 + bytes));
            break;
        }
        if (pos + w < n) {
            int rc = s_recv(self, m[pos + w], tag, buf, 8 + bytes);
            int32_t in = 0;
            memcpy(&in, buf, 4);
            rc = s_worse(rc, in);
            if (rc == 0 && st == 0)
                rc = s_combine(c, data, buf + 8, count);
            st = s_worse(st, rc);
        }
    }
    if (rootpos != 0 && pos == 0) {
        memcpy(buf, &st, 4);
        memcpy(buf + 8, data, bytes);
        st = s_worse(st, s_send(self, m[rootpos], tag, buf, 8 + bytes));
    } else if (rootpos != 0 && pos == rootpos) {
        int rc = s_recv(self, m[0], tag, buf, 8 + bytes);
        int32_t in = 0;
        memcpy(&in, buf, 4);
        st = s_worse(rc, in);
        if (st == 0)
            memcpy(data, buf + 8, bytes);
    }
    free(buf);
    return st;
}

/*  Large reduce: each tree edge carries the data in CHUNK-sized messages, then a 4-byte
 *  status; a node combines chunk i of every child (in instance order) and passes it up at
 *  once, so the levels work in a pipeline.  Every node always sends all its chunks and its
 *  status, whatever went wrong, so that no parent waits for ever. */
static int s_reduce_large(gimpi_coll_t *self, const combine_t *c, const int *m, int n, int pos,
                          int rootpos, void *data, int count, int tag)
{
    int per = (int)(self->chunk / c->esize);
    if (per < 1)
        per = 1;
    int nc = (count + per - 1) / per, win = self->win;
    int kids[32], nk = 0, parent = -1;
    for (int w = 1; w < n; w <<= 1) {
        if (pos & w) {
            parent = m[pos - w];
            break;
        }
        if (pos + w < n)
            kids[nk++] = m[pos + w];
    }
    uint8_t *bytes = data;
    size_t chunkb = (size_t)per * c->esize;
    uint8_t *tmp = nk ? s_scratch_get(self, (size_t)nk * win * chunkb) : NULL;
    gimpi_msg_req_t **rq = nk ? calloc((size_t)nk * win, sizeof *rq) : NULL;
    gimpi_msg_req_t **sq = parent > 0 ? calloc((size_t)nc, sizeof *sq) : NULL;
    if ((nk && (!tmp || !rq)) || (parent > 0 && !sq)) {
        s_scratch_put(self, tmp);
        free(rq);
        free(sq);
        return GIMPI_ENOMEM;
    }
    int32_t st = 0;
    int32_t *kst = calloc((size_t)nk + 1, sizeof *kst);   /* per child: failed so far */
    if (!kst)
        st = GIMPI_ENOMEM;
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < win && i < nc; i++) {
            size_t len = i == nc - 1 ? (size_t)(count - i * per) * c->esize : chunkb;
            if (s_irecv(self, kids[k], tag, tmp + ((size_t)k * win + i) * chunkb, len,
                        &rq[k * win + i]) < 0)
                rq[k * win + i] = NULL;
        }
    for (int i = 0; i < nc; i++) {
        int cnt = i == nc - 1 ? count - i * per : per;
        size_t len = (size_t)cnt * c->esize;
        for (int k = 0; k < nk; k++) {
            int slot = k * win + i % win;
            int rc = s_wait(self, &rq[slot], len);
            if (rc && kst)
                kst[k] = rc;
            if (rc == 0 && st == 0)
                rc = s_combine(c, bytes + (size_t)i * chunkb, tmp + (size_t)slot * chunkb, cnt);
            st = s_worse(st, rc);
            int nx = i + win;
            if (nx < nc) {
                size_t nlen = nx == nc - 1 ? (size_t)(count - nx * per) * c->esize : chunkb;
                if (s_irecv(self, kids[k], tag, tmp + (size_t)slot * chunkb, nlen, &rq[slot]) < 0)
                    rq[slot] = NULL;
            }
        }
        if (parent > 0 && s_isend(self, parent, tag, bytes + (size_t)i * chunkb, len, &sq[i]) < 0)
            sq[i] = NULL;
    }
    for (int k = 0; k < nk; k++) {      /* the children's statuses */
        int32_t in = 0;
        int rc = s_recv(self, kids[k], tag, &in, 4);
        st = s_worse(st, s_worse(rc, in));
    }
    for (int i = 0; parent > 0 && i < nc; i++)
        st = s_worse(st, sq[i] ? s_wait(self, &sq[i], SIZE_MAX) : GIMPI_ESYSERR);
    if (parent > 0)
        st = s_worse(st, s_send(self, parent, tag, &st, 4));
    if (rootpos != 0 && pos == 0) {
        int rc = s_send(self, m[rootpos], tag, data, (size_t)count * c->esize);
        st = s_worse(st, rc);
        s_send(self, m[rootpos], tag, &st, 4);
    } else if (rootpos != 0 && pos == rootpos) {
        int rc = s_recv(self, m[0], tag, data, (size_t)count * c->esize);
        int32_t in = 0;
        int rc2 = s_recv(self, m[0], tag, &in, 4);
        st = s_worse(rc, s_worse(rc2, in));
    }
    free(kst);
    s_scratch_put(self, tmp);
    free(rq);
    free(sq);
    return st;
}

/*  The outcome, from the root down a binomial tree (user functions only). */
static int s_status_down(gimpi_coll_t *self, const int *m, int n, int pos, int rootpos, int tag,
                         int st)
{
    int v = (pos - rootpos + n) % n, hb = 0;
    int32_t s = st;
    if (v > 0) {
        for (hb = 1; hb * 2 <= v; hb <<= 1)
            ;
        int rc = s_recv(self, m[(v - hb + rootpos) % n], tag, &s, 4);
        s = s_worse(rc, s);
    }
    for (int w = v > 0 ? hb << 1 : 1; v + w < n; w <<= 1)
        s_send(self, m[(v + w + rootpos) % n], tag, &s, 4);
    return s;
}

/*  Our reduce over m[0..n-1] to m[rootpos]: one message per edge or the chunk pipeline. */
static int s_reduce_local(gimpi_coll_t *self, const combine_t *c, const int *m, int n, int pos,
                          int rootpos, void *data, int count, int tag)
{
    if (n < 2)
        return 0;
    if ((size_t)count * c->esize <= self->chunk)
        return s_reduce_small(self, c, m, n, pos, rootpos, data, count, tag);
    return s_reduce_large(self, c, m, n, pos, rootpos, data, count, tag);
}

/*  IMPI's reduce between clients for a commutative op (the IMPI standard's reduce, as
 *  doc/collectives.md "Groups spanning several IMPI clients" tells it): our reduce
 *  inside each client to its local root (the root in the root's client, else the client's
 *  master: its first member), then the masters' phase — linear up to MAXLINEAR masters
 *  (every other master sends its partial result to the root, which folds them in master
 *  order), binomial tree on v = (mynum - rootnum) mod n above — with IMPI_TAG_REDUCE on
 *  the point-to-point context, as LAM sends it (impi_masters_reduce).  The masters'
 *  messages carry bare data (no status), as IMPI's do; a master whose part failed sends
 *  a 0-byte message instead, which fails the receiver's fold. */
static int s_reduce_clients(gimpi_coll_t *self, const combine_t *c, const int *m, int n,
                            int pos, int rootpos, void *data, int count, int tag, const int *cl)
{
    int *local = malloc((size_t)n * sizeof *local), *mas = malloc((size_t)n * sizeof *mas);
    if (!local || !mas) {
        free(local);
        free(mas);
        return GIMPI_ENOMEM;
    }
    int nl = 0, mypos = 0, lroot = 0, nm = 0, mynum = -1, rootnum = 0;
    for (int i = 0; i < n; i++) {
        if (cl[i] == cl[pos]) {
            if (i == pos)
                mypos = nl;
            if (i == rootpos)
                lroot = nl;
            local[nl++] = m[i];
        }
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = cl[j] != cl[i];
        if (first) {                    /* a new client: its local root joins the masters */
            int lr = i;
            if (cl[rootpos] == cl[i]) {
                lr = rootpos;
                rootnum = nm;
            }
            if (lr == pos)
                mynum = nm;
            mas[nm++] = m[lr];
        }
    }
    int rc = s_reduce_local(self, c, local, nl, mypos, lroot, data, count, tag);
    rc = impi_masters_reduce(self->msg, mas, nm, mynum, rootnum, gimpi_msg_maxlinear(self->msg),
                             c->op, c->datatype, data, count, rc);
    free(local);
    free(mas);
    return rc;
}

/*  The element range [*lo, *hi) of count that position j holds after the reduce-scatter
 *  of s_reduce_rsag over n (a power of two) positions. */
static void s_rs_range(int j, int n, int count, int *lo, int *hi)
{
    *lo = 0;
    *hi = count;
    for (int w = 1; w < n; w <<= 1) {
        int mid = *lo + (*hi - *lo) / 2;
        if (j & w)
            *lo = mid;
        else
            *hi = mid;
    }
}

/*  Large reduce with a predefined op over a power-of-two number of members: reduce-scatter
 *  by recursive halving (at step w, positions j and j^w swap halves of their current
 *  range, the lower position's partial always on the left: R(b, w) ∘ R(b + w, w), so the
 *  bracketing is exactly the binomial tree's R(0, n)), then every position sends its
 *  finished range to the root.  Each member moves and combines about a 1/n share per step
 *  instead of the root combining everything: the work is spread over all members. */
static int s_reduce_rsag(gimpi_coll_t *self, const combine_t *c, const int *m, int n, int pos,
                         int rootpos, void *data, int count, int tag)
{
    size_t es = c->esize;
    uint8_t *x = data, *tmp = s_scratch_get(self, ((size_t)count / 2 + 1) * es);
    if (!tmp)
        return GIMPI_ENOMEM;
    int lo = 0, hi = count, st = 0;
    for (int w = 1; w < n; w <<= 1) {
        int mid = lo + (hi - lo) / 2, upper = (pos & w) != 0;
        int klo = upper ? mid : lo, khi = upper ? hi : mid;     /* the part I keep */
        int slo = upper ? lo : mid, shi = upper ? mid : hi;     /* the part I give away */
        gimpi_msg_req_t *sq = NULL, *rq = NULL;
        int partner = m[pos ^ w];
        int r = s_irecv(self, partner, tag, tmp, (size_t)(khi - klo) * es, &rq) < 0;
        if (s_isend(self, partner, tag, x + (size_t)slo * es, (size_t)(shi - slo) * es, &sq) < 0)
            sq = NULL;
        r = r ? GIMPI_ESYSERR : s_wait(self, &rq, (size_t)(khi - klo) * es);
        if (sq)
            r = s_worse(r, s_wait(self, &sq, SIZE_MAX));
        if (r == 0 && st == 0) {
            if (upper && (c->op == GIMPI_OP_SUM || c->op == GIMPI_OP_PRODUCT)) {
                /* IEEE and integer sums and products commute bit for bit: in place */
                r = s_combine(c, x + (size_t)klo * es, tmp, khi - klo);
            } else if (upper) {         /* partner's (lower) ∘ mine, then back into x */
                r = s_combine(c, tmp, x + (size_t)klo * es, khi - klo);
                memcpy(x + (size_t)klo * es, tmp, (size_t)(khi - klo) * es);
            } else
                r = s_combine(c, x + (size_t)klo * es, tmp, khi - klo);
        }
        st = s_worse(st, r);
        lo = klo;
        hi = khi;
    }
    s_scratch_put(self, tmp);
    int gtag = s_rekind(tag, K_RGATHER);
    if (pos != rootpos)
        return s_worse(st, s_send(self, m[rootpos], gtag, x + (size_t)lo * es,
                                  (size_t)(hi - lo) * es));
    gimpi_msg_req_t **req = calloc((size_t)n, sizeof *req);
    if (!req)
        return GIMPI_ENOMEM;
    for (int j = 0; j < n; j++) {
        int jlo, jhi;
        s_rs_range(j, n, count, &jlo, &jhi);
        if (j != pos && s_irecv(self, m[j], gtag, x + (size_t)jlo * es, (size_t)(jhi - jlo) * es,
                                &req[j]) < 0)
            req[j] = NULL;
    }
    for (int j = 0; j < n; j++)
        if (j != pos) {
            int jlo, jhi;
            s_rs_range(j, n, count, &jlo, &jhi);
            st = s_worse(st, s_wait(self, &req[j], (size_t)(jhi - jlo) * es));
        }
    free(req);
    return st;
}

/*  The reduce tree over the members: IMPI's structure between clients when the view spans
 *  several and the op is predefined (view given), else ours over all members. */
static int s_reduce_tree(gimpi_coll_t *self, const combine_t *c, const int *m, int n, int pos,
                         int rootpos, void *data, int count, int tag, const gimpi_view_t *view)
{
    int *cl = view ? malloc((size_t)n * sizeof *cl) : NULL, multi = 0;
    if (s_clients(self, m, n, cl, &multi))
        multi = 0;
    int rc;
    if (multi)
        rc = s_reduce_clients(self, c, m, n, pos, rootpos, data, count, tag, cl);
    else if (view && n >= 4 && (n & (n - 1)) == 0 && count >= n &&
             (size_t)count * c->esize > self->chunk && self->rsag)
        rc = s_reduce_rsag(self, c, m, n, pos, rootpos, data, count, tag);
    else
        rc = s_reduce_local(self, c, m, n, pos, rootpos, data, count, tag);
    free(cl);
    return rc;
}

/*  Reduce through the segment, stamps included: a member's stamp goes where its data would
 *  go over the data plane (its ancestors in the tree and the root; everybody with a user
 *  function, whose outcome every member waits for). */
static int s_shm_reduce(gimpi_coll_t *self, gimpi_groups_t *groups, shm_link_t *link,
                        const combine_t *c, int pos, int rootpos, void *data, int count,
                        int tag)
{
    int n = link->n, tbuf[STACK_INTS], fbuf[STACK_INTS], *to, *flags;
    if (s_stamp_lists(n, tbuf, fbuf, &to, &flags))
        return GIMPI_ENOMEM;
    int nto = 0, all = c->fn != NULL;
    for (int j = 0; j < n; j++) {
        int up = 0;                     /* j is an ancestor of pos, or the root */
        for (int a = pos; a > 0 && !up; a -= a & -a)
            up = a - (a & -a) == j;
        if (j != pos && (all || up || j == rootpos))
            to[nto++] = j;
    }
    int flag = s_stamp_out(self, groups, link, to, nto, tag);
    int rc = coll_shm_reduce(link->seg, s_shm_combine, (void *)(uintptr_t)c, data, count, c->esize,
                             rootpos, all, flag, flags);
    int rc2 = rc == GIMPI_ESYSERR || rc == GIMPI_EBADMSG ? 0 : s_stamp_in(self, link, flags, tag);
    s_ints_free(to, tbuf);
    s_ints_free(flags, fbuf);
    return s_worse(rc, rc2);
}

static int s_reduce(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view, int op,
                    gimpi_reduce_fn fn, void *data, int count, int datatype, int tag, int root,
                    const cview_t *cv);

/*  Reduce to instance root with instance-order bracketing. */
int gimpi_coll_reduce(gimpi_coll_t *self, const gimpi_view_t *view, int op, gimpi_reduce_fn fn,
                      void *data, int count, int datatype, int tag, int root)
{
    return s_reduce(self, NULL, view, op, fn, data, count, datatype, tag, root, NULL);
}

/*  Reduce, with the groups object at group level (causal stamps through shared memory). */
static int s_reduce(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view, int op,
                    gimpi_reduce_fn fn, void *data, int count, int datatype, int tag, int root,
                    const cview_t *cv)
{
    assert(self);
    int rc = s_check_view(view, 0);
    if (rc)
        return rc;
    if (root < 0 || root >= view->ninst || view->tids[root] <= 0)
        return GIMPI_ENOINST;
    combine_t c = { op, fn, datatype, gimpi_datatype_size(datatype) };
    if (count <= 0 || !data || tag < 0 || c.esize == 0 || datatype == GIMPI_STR ||
        (!fn && (op < GIMPI_OP_MAX || op > GIMPI_OP_PRODUCT)))
        return GIMPI_EBADPARAM;
    int mbuf[STACK_INTS], cbuf[STACK_INTS], pos, n;
    int known = cv && cv->multi >= 0;   /* a kept view knows its members and clients */
    int *m = known ? (int *)cv->m : s_ints(mbuf, (size_t)view->ninst, 0);
    if (!m)
        return GIMPI_ENOMEM;
    if (known) {
        n = cv->n;
        pos = cv->pos;
    } else
        n = s_members(view, m, &pos);
    int rootpos = 0;
    for (int i = 0; i < root; i++)
        rootpos += view->tids[i] > 0;
    int t = s_next_tag(self, view, K_REDUCE);
    shm_link_t *link = NULL;
    if (t >= 0 && n > 1) {
        int multi = 0;
        int *cl = known ? cbuf : s_ints(cbuf, (size_t)n, 0);
        if (known)
            multi = cv->multi;
        else if (cl && s_clients(self, m, n, cl, &multi))
            multi = 0;              /* a spawned member: our algorithms, as below */
        if (cl && !multi)
            link = s_shm(self, groups, view, m, n, pos, t, &rc);
        if (!known)
            s_ints_free(cl, cbuf);
    }
    if (t < 0)
        rc = t;
    else if (rc)
        ;
    else if (link && link->nlead == 1)
        rc = s_shm_reduce(self, groups, link, &c, pos, rootpos, data, count, t);
    else if (n > 1) {                   /* across nodes too: the tree in instance order (a
                                           node's members need not be neighbours in it) */
        rc = s_reduce_tree(self, &c, m, n, pos, rootpos, data, count, t, fn ? NULL : view);
        if (fn)
            rc = s_status_down(self, m, n, pos, rootpos, s_rekind(t, K_RSTAT), rc);
    }
    if (!known)
        s_ints_free(m, mbuf);
    return rc;
}

/* ------------------------------------------------------------------ gather / scatter */

/*  Common argument checks of gather and scatter; *esize gets the element size. */
static int s_check_gs(const gimpi_view_t *view, int count, int datatype, int tag, int root,
                      size_t *esize)
{
    int rc = s_check_view(view, 1);
    if (rc)
        return rc;
    if (root < 0 || root >= view->ninst)
        return GIMPI_ENOINST;
    *esize = gimpi_datatype_size(datatype);
    if (count <= 0 || tag < 0 || *esize == 0 || datatype == GIMPI_STR)
        return GIMPI_EBADPARAM;
    return 0;
}

/*  Gather (scatter = 0) or scatter (1) in instance order through instance root: the root
 *  posts one request per other instance on its slice of the big buffer and copies its own
 *  slice; the others make one send or receive. */
static int s_gather_scatter(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
                            const void *data, int count, int datatype, int tag, int root,
                            int scatter)
{
    assert(self);
    size_t esize;
    int rc = s_check_gs(view, count, datatype, tag, root, &esize);
    if (rc)
        return rc;
    size_t bytes = (size_t)count * esize;
    if ((scatter ? !result : !data) || (view->me == root && (scatter ? !data : !result)))
        return GIMPI_EBADPARAM;
    int t = s_next_tag(self, view, scatter ? K_SCATTER : K_GATHER);
    if (t < 0)
        return t;
    if (view->me != root)
        return scatter ? s_recv(self, view->tids[root], t, result, bytes)
                       : s_send(self, view->tids[root], t, data, bytes);
    int n = view->ninst;
    gimpi_msg_req_t **req = calloc((size_t)n, sizeof *req);
    if (!req)
        return GIMPI_ENOMEM;
    uint8_t *big = scatter ? (uint8_t *)(uintptr_t)data : result;
    for (int i = 0; i < n; i++) {
        if (i == root)
            continue;
        int r = scatter ? s_isend(self, view->tids[i], t, big + (size_t)i * bytes, bytes, &req[i])
                        : s_irecv(self, view->tids[i], t, big + (size_t)i * bytes, bytes, &req[i]);
        if (r < 0)
            rc = GIMPI_ESYSERR;
    }
    if (scatter)
        memmove(result, big + (size_t)root * bytes, bytes);
    else
        memmove(big + (size_t)root * bytes, data, bytes);
    for (int i = 0; i < n; i++)
        if (i != root)
            rc = s_worse(rc, s_wait(self, &req[i], scatter ? SIZE_MAX : bytes));
    free(req);
    return rc;
}

/*  Gather to instance root in instance order. */
int gimpi_coll_gather(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
                      const void *data, int count, int datatype, int tag, int root)
{
    return s_gather_scatter(self, view, result, data, count, datatype, tag, root, 0);
}

/*  Scatter from instance root in instance order (the root's data is left alone). */
int gimpi_coll_scatter(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
                       const void *data, int count, int datatype, int tag, int root)
{
    return s_gather_scatter(self, view, result, data, count, datatype, tag, root, 1);
}

/* ------------------------------------------------------------------ group level */

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
    seq_t *s = s_find(self, group);
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
    s = s_entry(self, group);
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
    nv->n = s_members(nv->v, nv->m, &nv->pos);  /* fixed for the version: kept */
    int *cl = malloc(((size_t)nv->n + 1) * sizeof *cl), multi = 0;
    int unknown = cl ? s_clients(self, nv->m, nv->n, cl, &multi) : 1;
    nv->multi = !cl ? -1 : multi && !unknown;  /* -1: every call finds out itself */
    free(cl);
    *snap = full;
    nv->refs = 1;
    pthread_mutex_lock(&self->mu);
    s = s_entry(self, group);
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
    seq_t *s = s_entry(self, group);
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
        rc = s_barrier(self, groups, v, n, cv);
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
    if (rc == 0)
        rc = s_reduce(self, groups, cv->v, op, fn, data, count, datatype, tag, root, cv);
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
    if (rc == 0)
        rc = s_gather_scatter(self, cv->v, result, data, count, datatype, tag, root, scatter);
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
