/*  coll_reduce.c — reduce, gather and scatter over a view (doc/collectives.md): reduce
 *  with instance-order bracketing, small ones by one message per tree edge, large ones
 *  pipelined in chunks or by reduce-scatter and gather, through IMPI's client structure
 *  between clients or through shared memory within a node; gather and scatter through
 *  the root.
 */
#include "coll/coll_internal.h"

#include <assert.h>

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
            st = coll_worse(st, coll_send(self, m[pos - w], tag, buf, 8 + bytes));
            break;
        }
        if (pos + w < n) {
            int rc = coll_recv(self, m[pos + w], tag, buf, 8 + bytes);
            int32_t in = 0;
            memcpy(&in, buf, 4);
            rc = coll_worse(rc, in);
            if (rc == 0 && st == 0)
                rc = s_combine(c, data, buf + 8, count);
            st = coll_worse(st, rc);
        }
    }
    if (rootpos != 0 && pos == 0) {
        memcpy(buf, &st, 4);
        memcpy(buf + 8, data, bytes);
        st = coll_worse(st, coll_send(self, m[rootpos], tag, buf, 8 + bytes));
    } else if (rootpos != 0 && pos == rootpos) {
        int rc = coll_recv(self, m[0], tag, buf, 8 + bytes);
        int32_t in = 0;
        memcpy(&in, buf, 4);
        st = coll_worse(rc, in);
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
    uint8_t *tmp = nk ? coll_scratch_get(self, (size_t)nk * win * chunkb) : NULL;
    gimpi_msg_req_t **rq = nk ? calloc((size_t)nk * win, sizeof *rq) : NULL;
    gimpi_msg_req_t **sq = parent > 0 ? calloc((size_t)nc, sizeof *sq) : NULL;
    if ((nk && (!tmp || !rq)) || (parent > 0 && !sq)) {
        coll_scratch_put(self, tmp);
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
            if (coll_irecv(self, kids[k], tag, tmp + ((size_t)k * win + i) * chunkb, len,
                           &rq[k * win + i]) < 0)
                rq[k * win + i] = NULL;
        }
    for (int i = 0; i < nc; i++) {
        int cnt = i == nc - 1 ? count - i * per : per;
        size_t len = (size_t)cnt * c->esize;
        for (int k = 0; k < nk; k++) {
            int slot = k * win + i % win;
            int rc = coll_wait(self, &rq[slot], len);
            if (rc && kst)
                kst[k] = rc;
            if (rc == 0 && st == 0)
                rc = s_combine(c, bytes + (size_t)i * chunkb, tmp + (size_t)slot * chunkb, cnt);
            st = coll_worse(st, rc);
            int nx = i + win;
            if (nx < nc) {
                size_t nlen = nx == nc - 1 ? (size_t)(count - nx * per) * c->esize : chunkb;
                if (coll_irecv(self, kids[k], tag, tmp + (size_t)slot * chunkb, nlen, &rq[slot]) < 0)
                    rq[slot] = NULL;
            }
        }
        if (parent > 0 && coll_isend(self, parent, tag, bytes + (size_t)i * chunkb, len, &sq[i]) < 0)
            sq[i] = NULL;
    }
    for (int k = 0; k < nk; k++) {      /* the children's statuses */
        int32_t in = 0;
        int rc = coll_recv(self, kids[k], tag, &in, 4);
        st = coll_worse(st, coll_worse(rc, in));
    }
    for (int i = 0; parent > 0 && i < nc; i++)
        st = coll_worse(st, sq[i] ? coll_wait(self, &sq[i], SIZE_MAX) : GIMPI_ESYSERR);
    if (parent > 0)
        st = coll_worse(st, coll_send(self, parent, tag, &st, 4));
    if (rootpos != 0 && pos == 0) {
        int rc = coll_send(self, m[rootpos], tag, data, (size_t)count * c->esize);
        st = coll_worse(st, rc);
        coll_send(self, m[rootpos], tag, &st, 4);
    } else if (rootpos != 0 && pos == rootpos) {
        int rc = coll_recv(self, m[0], tag, data, (size_t)count * c->esize);
        int32_t in = 0;
        int rc2 = coll_recv(self, m[0], tag, &in, 4);
        st = coll_worse(rc, coll_worse(rc2, in));
    }
    free(kst);
    coll_scratch_put(self, tmp);
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
        int rc = coll_recv(self, m[(v - hb + rootpos) % n], tag, &s, 4);
        s = coll_worse(rc, s);
    }
    for (int w = v > 0 ? hb << 1 : 1; v + w < n; w <<= 1)
        coll_send(self, m[(v + w + rootpos) % n], tag, &s, 4);
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
    uint8_t *x = data, *tmp = coll_scratch_get(self, ((size_t)count / 2 + 1) * es);
    if (!tmp)
        return GIMPI_ENOMEM;
    int lo = 0, hi = count, st = 0;
    for (int w = 1; w < n; w <<= 1) {
        int mid = lo + (hi - lo) / 2, upper = (pos & w) != 0;
        int klo = upper ? mid : lo, khi = upper ? hi : mid;     /* the part I keep */
        int slo = upper ? lo : mid, shi = upper ? mid : hi;     /* the part I give away */
        gimpi_msg_req_t *sq = NULL, *rq = NULL;
        int partner = m[pos ^ w];
        int r = coll_irecv(self, partner, tag, tmp, (size_t)(khi - klo) * es, &rq) < 0;
        if (coll_isend(self, partner, tag, x + (size_t)slo * es, (size_t)(shi - slo) * es, &sq) < 0)
            sq = NULL;
        r = r ? GIMPI_ESYSERR : coll_wait(self, &rq, (size_t)(khi - klo) * es);
        if (sq)
            r = coll_worse(r, coll_wait(self, &sq, SIZE_MAX));
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
        st = coll_worse(st, r);
        lo = klo;
        hi = khi;
    }
    coll_scratch_put(self, tmp);
    int gtag = coll_rekind(tag, K_RGATHER);
    if (pos != rootpos)
        return coll_worse(st, coll_send(self, m[rootpos], gtag, x + (size_t)lo * es,
                                        (size_t)(hi - lo) * es));
    gimpi_msg_req_t **req = calloc((size_t)n, sizeof *req);
    if (!req)
        return GIMPI_ENOMEM;
    for (int j = 0; j < n; j++) {
        int jlo, jhi;
        s_rs_range(j, n, count, &jlo, &jhi);
        if (j != pos && coll_irecv(self, m[j], gtag, x + (size_t)jlo * es, (size_t)(jhi - jlo) * es,
                                   &req[j]) < 0)
            req[j] = NULL;
    }
    for (int j = 0; j < n; j++)
        if (j != pos) {
            int jlo, jhi;
            s_rs_range(j, n, count, &jlo, &jhi);
            st = coll_worse(st, coll_wait(self, &req[j], (size_t)(jhi - jlo) * es));
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
    if (coll_clients(self, m, n, cl, &multi))
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
    if (coll_stamp_lists(n, tbuf, fbuf, &to, &flags))
        return GIMPI_ENOMEM;
    int nto = 0, all = c->fn != NULL;
    for (int j = 0; j < n; j++) {
        int up = 0;                     /* j is an ancestor of pos, or the root */
        for (int a = pos; a > 0 && !up; a -= a & -a)
            up = a - (a & -a) == j;
        if (j != pos && (all || up || j == rootpos))
            to[nto++] = j;
    }
    int flag = coll_stamp_out(self, groups, link, to, nto, tag);
    if (__builtin_expect(self->trace != NULL, 0))
        coll_trace_send(self, "shm-reduce", tag, -1, (size_t)count * c->esize, nto);
    int rc = coll_shm_reduce(link->seg, s_shm_combine, (void *)(uintptr_t)c, data, count, c->esize,
                             rootpos, all, flag, flags);
    int rc2 = rc == GIMPI_ESYSERR || rc == GIMPI_EBADMSG ? 0 : coll_stamp_in(self, link, flags, tag);
    coll_ints_free(to, tbuf);
    coll_ints_free(flags, fbuf);
    return coll_worse(rc, rc2);
}

/*  Reduce to instance root with instance-order bracketing. */
int gimpi_coll_reduce(gimpi_coll_t *self, const gimpi_view_t *view, int op, gimpi_reduce_fn fn,
                      void *data, int count, int datatype, int tag, int root)
{
    return coll_reduce(self, NULL, view, op, fn, data, count, datatype, tag, root, NULL);
}

/*  Reduce, with the groups object at group level (causal stamps through shared memory). */
int coll_reduce(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view, int op,
                gimpi_reduce_fn fn, void *data, int count, int datatype, int tag, int root,
                const cview_t *cv)
{
    assert(self);
    int rc = coll_check_view(view, 0);
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
    int *m = coll_view_members(view, cv, mbuf, &n, &pos);
    if (!m)
        return GIMPI_ENOMEM;
    int rootpos = 0;
    for (int i = 0; i < root; i++)
        rootpos += view->tids[i] > 0;
    int t = coll_next_tag(self, view, K_REDUCE);
    shm_link_t *link = NULL;
    if (t >= 0 && n > 1) {
        int multi = 0;
        int *cl = known ? cbuf : coll_ints(cbuf, (size_t)n, 0);
        if (known)
            multi = cv->multi;
        else if (cl && coll_clients(self, m, n, cl, &multi))
            multi = 0;              /* a spawned member: our algorithms, as below */
        if (cl && !multi)
            link = coll_node_link(self, groups, view, m, n, pos, t, &rc);
        if (!known)
            coll_ints_free(cl, cbuf);
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
            rc = s_status_down(self, m, n, pos, rootpos, coll_rekind(t, K_RSTAT), rc);
    }
    if (!known)
        coll_ints_free(m, mbuf);
    return rc;
}

/* ------------------------------------------------------------------ gather / scatter */

/*  Common argument checks of gather and scatter; *esize gets the element size. */
static int s_check_gs(const gimpi_view_t *view, int count, int datatype, int tag, int root,
                      size_t *esize)
{
    int rc = coll_check_view(view, 1);
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
int coll_gather_scatter(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
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
    int t = coll_next_tag(self, view, scatter ? K_SCATTER : K_GATHER);
    if (t < 0)
        return t;
    if (view->me != root)
        return scatter ? coll_recv(self, view->tids[root], t, result, bytes)
                       : coll_send(self, view->tids[root], t, data, bytes);
    int n = view->ninst;
    gimpi_msg_req_t **req = calloc((size_t)n, sizeof *req);
    if (!req)
        return GIMPI_ENOMEM;
    uint8_t *big = scatter ? (uint8_t *)(uintptr_t)data : result;
    for (int i = 0; i < n; i++) {
        if (i == root)
            continue;
        int r = scatter ? coll_isend(self, view->tids[i], t, big + (size_t)i * bytes, bytes, &req[i])
                        : coll_irecv(self, view->tids[i], t, big + (size_t)i * bytes, bytes, &req[i]);
        if (r < 0)
            rc = GIMPI_ESYSERR;
    }
    if (scatter)
        memmove(result, big + (size_t)root * bytes, bytes);
    else
        memmove(big + (size_t)root * bytes, data, bytes);
    for (int i = 0; i < n; i++)
        if (i != root)
            rc = coll_worse(rc, coll_wait(self, &req[i], scatter ? SIZE_MAX : bytes));
    free(req);
    return rc;
}

/*  Gather to instance root in instance order. */
int gimpi_coll_gather(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
                      const void *data, int count, int datatype, int tag, int root)
{
    return coll_gather_scatter(self, view, result, data, count, datatype, tag, root, 0);
}

/*  Scatter from instance root in instance order (the root's data is left alone). */
int gimpi_coll_scatter(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
                       const void *data, int count, int datatype, int tag, int root)
{
    return coll_gather_scatter(self, view, result, data, count, datatype, tag, root, 1);
}
