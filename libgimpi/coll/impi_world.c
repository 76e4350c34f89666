/*  impi_world.c — IMPI's collectives over the whole job (MPI_COMM_WORLD of the IMPI job):
 *  barrier, bcast, reduce and allreduce over every proc of the startup tables, procs of
 *  other IMPI implementations (LAM/MPI...) included, in the form an MPI rank of such an
 *  implementation runs them.  The world is what the data plane knows: world rank r has
 *  tid gimpi_msg_tid(r) and IMPI client gimpi_msg_client; each client's master is its
 *  lowest world rank.  Every call is a local phase inside this task's client (among gimpi
 *  tasks, our own way) and IMPI's masters' phase (impi_coll.c) between the clients:
 *    barrier    star through the master (0-byte messages, tag 110, collective context);
 *    bcast      root to the other clients' masters, then each of those (and the root) to
 *               its client (tag 120, collective context);
 *    reduce     binomial tree inside each client to its local root (the root, or the
 *               master), tag 190 on the collective context; the masters' phase with tag
 *               190 on the point-to-point context, as LAM/MPI sends it;
 *    allreduce  reduce to world rank 0, then bcast from it (LAM/MPI's way).
 */
#include "coll/impi_coll.h"
#include "gimpi.h"
#include "net/gimpi_msg_fwd.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define FWD_MIN (16 * 1024)     /* local bcasts from this size ... */
#define FWD_RECV 16             /* ... to this many receivers go down the forwarding tree */

/*  A positive setting from the environment (the group collectives' tuning variables), else
 *  the default. */
static long s_env(const char *name, long dflt)
{
    const char *e = gimpi_env(name);
    return e && atol(e) > 0 ? atol(e) : dflt;
}

/*  The world as this task sees it. */
typedef struct {
    int n;                      /* procs */
    int me;                     /* this task's world rank */
    int maxlinear;
    int *client;                /* per world rank: its IMPI client */
    int *local;                 /* world ranks of this task's client, ascending */
    int nlocal;
    int *masters;               /* world rank of each client's master, ascending */
    int nmasters;
} world_t;

/*  Frees a world and nulls the pointer. */
static void s_world_destroy(world_t **self_p)
{
    world_t *self = *self_p;
    if (!self)
        return;
    free(self->client);
    free(self);
    *self_p = NULL;
}

/*  The world of msg, or NULL with *err: GIMPI_ENOMEM, or GIMPI_ENOTINGROUP when this task
 *  has no world rank (a spawned task). */
static world_t *s_world_new(gimpi_msg_t *msg, int *err)
{
    world_t *self = calloc(1, sizeof *self);
    *err = GIMPI_ENOMEM;
    if (!self)
        return NULL;
    self->n = gimpi_msg_ntasks(msg);
    self->me = gimpi_msg_rank(msg, gimpi_msg_mytid(msg));
    self->maxlinear = gimpi_msg_maxlinear(msg);
    self->client = malloc(3 * ((size_t)self->n + 1) * sizeof(int));
    if (!self->client || self->me < 0) {
        *err = self->client ? GIMPI_ENOTINGROUP : GIMPI_ENOMEM;
        s_world_destroy(&self);
        return NULL;
    }
    self->local = self->client + self->n + 1;
    self->masters = self->local + self->n + 1;
    for (int r = 0; r < self->n; r++)
        self->client[r] = gimpi_msg_client(msg, gimpi_msg_tid(msg, r));
    for (int r = 0; r < self->n; r++) {
        int first = 1;
        for (int k = 0; k < self->nmasters && first; k++)
            first = self->client[self->masters[k]] != self->client[r];
        if (first)
            self->masters[self->nmasters++] = r;
        if (self->client[r] == self->client[self->me])
            self->local[self->nlocal++] = r;
    }
    return self;
}

/*  Master number of world rank r's client. */
static int s_master_num(const world_t *w, int r)
{
    for (int k = 0; k < w->nmasters; k++)
        if (w->client[w->masters[k]] == w->client[r])
            return k;
    return -1;
}

/*  The participants of a rooted masters' phase as tids: each client's master, the root
 *  in place of its own; *mynum gets this task's number (-1 when it takes no part). */
static int *s_rooted_masters(gimpi_msg_t *msg, const world_t *w, int root, int *mynum)
{
    int *tids = malloc(((size_t)w->nmasters + 1) * sizeof *tids);
    if (!tids)
        return NULL;
    *mynum = -1;
    for (int k = 0; k < w->nmasters; k++) {
        int r = w->client[w->masters[k]] == w->client[root] ? root : w->masters[k];
        if (r == w->me)
            *mynum = k;
        tids[k] = gimpi_msg_tid(msg, r);
    }
    return tids;
}

/* ------------------------------------------------------------------ barrier */

/*  The world barrier: local gather to the master, masters' phase, local release (a 1-byte
 *  release, the failure mark, when the gather failed). */
int impi_world_barrier(gimpi_msg_t *msg)
{
    assert(msg);
    int rc;
    world_t *w = s_world_new(msg, &rc);
    if (!w)
        return rc;
    int master = w->local[0];
    rc = 0;
    if (w->me != master) {
        rc = impi_send(msg, GIMPI_CID_COLL, gimpi_msg_tid(msg, master), IMPI_TAG_BARRIER, "", 0);
        if (rc == 0)
            rc = impi_recv(msg, GIMPI_CID_COLL, gimpi_msg_tid(msg, master), IMPI_TAG_BARRIER,
                           NULL, 0);
        s_world_destroy(&w);
        return rc;
    }
    for (int i = 1; i < w->nlocal; i++) {
        int r = impi_recv(msg, GIMPI_CID_COLL, gimpi_msg_tid(msg, w->local[i]),
                          IMPI_TAG_BARRIER, NULL, 0);
        rc = rc ? rc : r;
    }
    int g = impi_masters_barrier(msg, w->masters, w->nmasters, s_master_num(w, w->me),
                                 w->maxlinear);
    rc = rc ? rc : g ? GIMPI_ESYSERR : 0;
    for (int i = 1; i < w->nlocal; i++)
        impi_send(msg, GIMPI_CID_COLL, gimpi_msg_tid(msg, w->local[i]), IMPI_TAG_BARRIER, "",
                  rc ? 1 : 0);
    s_world_destroy(&w);
    return rc;
}

/* ------------------------------------------------------------------ bcast */

/*  The local phase of a bcast: from local root lroot to the other procs of this client
 *  (the failure mark when st is a failure). */
static int s_local_bcast(gimpi_msg_t *msg, const world_t *w, int lroot, void *buf, size_t len,
                         int st)
{
    if (w->me != lroot) {
        int r = impi_recv(msg, GIMPI_CID_COLL, gimpi_msg_tid(msg, lroot), IMPI_TAG_BCAST, buf,
                          len);
        return st ? st : r;
    }
    int *tids = malloc(((size_t)w->nlocal + 1) * sizeof *tids), n = 0;
    if (!tids)
        return GIMPI_ENOMEM;
    for (int i = 0; i < w->nlocal; i++)
        if (w->local[i] != lroot)
            tids[n++] = gimpi_msg_tid(msg, w->local[i]);
    int r = 0;
    if (st == 0 && len >= (size_t)s_env("GIMPI_COLL_TREE_MIN", FWD_MIN) &&
        n >= s_env("GIMPI_COLL_TREE_RECV", FWD_RECV) && n > 1)
        r = gimpi_msg_fwd_bcast(msg, GIMPI_CID_COLL, IMPI_TAG_BCAST, buf, len, tids, n) < 0
                ? GIMPI_ESYSERR : 0;
    else if (n > 0)
        r = impi_send_all(msg, GIMPI_CID_COLL, tids, n, IMPI_TAG_BCAST, buf, st ? 0 : len);
    free(tids);
    return st ? st : r;
}

/*  A bcast from world rank root with outcome st so far at the root (a failure there sends
 *  the failure mark instead of the data). */
static int s_bcast(gimpi_msg_t *msg, void *buf, size_t len, int root, int st)
{
    int rc;
    world_t *w = s_world_new(msg, &rc);
    if (!w)
        return rc;
    int mynum;
    int *tids = s_rooted_masters(msg, w, root, &mynum);
    if (!tids)
        rc = GIMPI_ENOMEM;
    else {
        rc = impi_masters_bcast(msg, tids, w->nmasters, mynum, s_master_num(w, root),
                                w->maxlinear, buf, len, w->me == root ? st : 0);
        int lroot = w->client[root] == w->client[w->me] ? root : w->local[0];
        rc = s_local_bcast(msg, w, lroot, buf, len, rc);
    }
    free(tids);
    s_world_destroy(&w);
    return rc;
}

/*  MPI_Bcast over the world. */
int impi_world_bcast(gimpi_msg_t *msg, void *buf, size_t len, int root)
{
    assert(msg);
    if (root < 0 || root >= gimpi_msg_ntasks(msg) || (len && !buf))
        return GIMPI_EBADPARAM;
    return len ? s_bcast(msg, buf, len, root, 0) : 0;
}

/* ------------------------------------------------------------------ reduce */

/*  The local phase of a reduce: binomial tree over this client's procs towards local root
 *  lroot on (pos - lrootpos) mod nlocal; data holds this task's part and, at lroot, the
 *  client's partial result.  Returns the outcome. */
static int s_local_reduce(gimpi_msg_t *msg, const world_t *w, int lroot, int op, int datatype,
                          void *data, int count, size_t bytes)
{
    int n = w->nlocal, pos = 0, lpos = 0, st = 0;
    for (int i = 0; i < n; i++) {
        pos = w->local[i] == w->me ? i : pos;
        lpos = w->local[i] == lroot ? i : lpos;
    }
    int v = (pos - lpos + n) % n;
    void *tmp = NULL;
    for (int k = 1; k < n; k <<= 1) {
        if (v & k) {
            int to = gimpi_msg_tid(msg, w->local[(v - k + lpos) % n]);
            int r = impi_send(msg, GIMPI_CID_COLL, to, IMPI_TAG_REDUCE, data, st ? 0 : bytes);
            free(tmp);
            return st ? st : r;
        }
        if (v + k >= n)
            continue;
        if (!tmp && !(tmp = malloc(bytes))) {
            st = GIMPI_ENOMEM;
            continue;               /* the children's parts stay unreceived: they fail */
        }
        int from = gimpi_msg_tid(msg, w->local[(v + k + lpos) % n]);
        int r = impi_recv(msg, GIMPI_CID_COLL, from, IMPI_TAG_REDUCE, tmp, bytes);
        if (r == 0 && st == 0)
            r = gimpi_op_apply((gimpi_op_t)op, datatype, data, tmp, count) ? GIMPI_EBADPARAM : 0;
        st = st ? st : r;
    }
    free(tmp);
    return st;
}

/*  MPI_Reduce over the world for a predefined op. */
int impi_world_reduce(gimpi_msg_t *msg, const void *send, void *recv, int count, int datatype,
                      int op, int root)
{
    assert(msg);
    size_t esize = gimpi_datatype_size(datatype);
    if (root < 0 || root >= gimpi_msg_ntasks(msg) || count < 0 || esize == 0 ||
        datatype == GIMPI_STR || op < GIMPI_OP_MAX || op > GIMPI_OP_PRODUCT)
        return GIMPI_EBADPARAM;
    if (count == 0)
        return 0;
    int rc;
    world_t *w = s_world_new(msg, &rc);
    if (!w)
        return rc;
    if (!send || (w->me == root && !recv)) {
        s_world_destroy(&w);
        return GIMPI_EBADPARAM;
    }
    size_t bytes = (size_t)count * esize;
    void *data = w->me == root ? recv : malloc(bytes);
    if (!data) {
        s_world_destroy(&w);
        return GIMPI_ENOMEM;
    }
    if (data != send)
        memmove(data, send, bytes);
    int lroot = w->client[root] == w->client[w->me] ? root : w->local[0];
    rc = s_local_reduce(msg, w, lroot, op, datatype, data, count, bytes);
    if (w->me == lroot) {
        int mynum;
        int *tids = s_rooted_masters(msg, w, root, &mynum);
        if (!tids)
            rc = GIMPI_ENOMEM;
        else
            rc = impi_masters_reduce(msg, tids, w->nmasters, mynum, s_master_num(w, root),
                                     w->maxlinear, op, datatype, data, count, rc);
        free(tids);
    }
    if (data != recv)
        free(data);
    s_world_destroy(&w);
    return rc;
}

/*  MPI_Allreduce over the world: reduce to rank 0, bcast from rank 0. */
int impi_world_allreduce(gimpi_msg_t *msg, const void *send, void *recv, int count,
                         int datatype, int op)
{
    assert(msg);
    if (!recv)
        return GIMPI_EBADPARAM;
    int rc = impi_world_reduce(msg, send, recv, count, datatype, op, 0);
    if (rc == GIMPI_EBADPARAM || count == 0)
        return rc;
    size_t bytes = (size_t)count * gimpi_datatype_size(datatype);
    int me = gimpi_msg_rank(msg, gimpi_msg_mytid(msg));
    int r = s_bcast(msg, recv, bytes, 0, me == 0 ? rc : 0);
    return rc ? rc : r;
}
