/*  impi_coll.c — the masters' phases of IMPI's collectives over the data plane (see
 *  impi_coll.h).  Barrier: the masters meet linearly (master 0 gathers and releases) when
 *  there are at most MAXLINEAR of them — LAM's reading of the boundary, which the draft
 *  words as "fewer than" — and along a hypercube tree otherwise.  Bcast: the root sends to
 *  every other master, or down a binomial tree rooted at it.  Reduce: every master sends
 *  its partial result to the root, or up that tree, on the point-to-point context.
 */
#include "coll/impi_coll.h"
#include "gimpi.h"

#include <assert.h>
#include <stdlib.h>

/*  Smallest d with 2^d >= n. */
int impi_cubedim(int n)
{
    int d = 0;
    while ((1 << d) < n)
        d++;
    return d;
}

/*  Highest set bit of v below bit d. */
int impi_hibit(int v, int d)
{
    for (int i = d - 1; i >= 0; i--)
        if (v & (1 << i))
            return i;
    return -1;
}

/*  A standard send on context cid (returns once buf may be reused). */
int impi_send(gimpi_msg_t *msg, uint64_t cid, int tid, int tag, const void *buf, size_t len)
{
    assert(msg);
    return gimpi_msg_send_cid(msg, cid, tid, tag, len ? buf : "", len) < 0 ? GIMPI_ESYSERR : 0;
}

/*  The same message to n tids at once (all started, then all waited for). */
int impi_send_all(gimpi_msg_t *msg, uint64_t cid, const int *tids, int n, int tag,
                  const void *buf, size_t len)
{
    assert(msg);
    if (n == 1)
        return impi_send(msg, cid, tids[0], tag, buf, len);
    gimpi_msg_req_t **req = calloc((size_t)n + 1, sizeof *req);
    if (!req)
        return GIMPI_ENOMEM;
    int rc = 0;
    for (int i = 0; i < n; i++)
        if (gimpi_msg_isend_cid(msg, cid, tids[i], tag, len ? buf : "", len, 0, &req[i]) < 0) {
            req[i] = NULL;
            rc = GIMPI_ESYSERR;
        }
    for (int i = 0; i < n; i++)
        if (req[i] && gimpi_msg_wait(msg, &req[i], NULL) < 0)
            rc = GIMPI_ESYSERR;
    free(req);
    return rc;
}

/*  Receives exactly len bytes from tid on context cid; any other length (the failure
 *  mark included) or a failed receive gives GIMPI_ESYSERR. */
int impi_recv(gimpi_msg_t *msg, uint64_t cid, int tid, int tag, void *buf, size_t len)
{
    assert(msg);
    gimpi_msg_req_t *req;
    gimpi_status_t st;
    char c;
    int rc = gimpi_msg_irecv_cid(msg, cid, tid, tag, len ? buf : &c, len, &req);
    if (rc == 0)
        rc = gimpi_msg_wait(msg, &req, &st);
    return rc < 0 || st.len != len ? GIMPI_ESYSERR : 0;
}

/*  A 0-byte message on the collective context. */
static int s_send0(gimpi_msg_t *msg, int rank, int tag)
{
    gimpi_msg_req_t *req;
    int rc = gimpi_msg_isend_cid(msg, GIMPI_CID_COLL, gimpi_msg_tid(msg, rank), tag, "", 0, 0,
                                 &req);
    return rc < 0 ? rc : gimpi_msg_wait(msg, &req, NULL);
}

/*  Receives a 0-byte message on the collective context. */
static int s_recv0(gimpi_msg_t *msg, int rank, int tag)
{
    gimpi_msg_req_t *req;
    char c;
    int rc = gimpi_msg_irecv_cid(msg, GIMPI_CID_COLL, gimpi_msg_tid(msg, rank), tag, &c, 0, &req);
    return rc < 0 ? rc : gimpi_msg_wait(msg, &req, NULL);
}

/*  The masters' phase of the barrier: mynum of n masters, rank of master i in masters[i]. */
static int s_masters_barrier(gimpi_msg_t *msg, const int *masters, int n, int mynum,
                             int maxlinear)
{
    int rc = 0;
    if (n <= 1)
        return 0;
    if (n <= maxlinear) {
        if (mynum == 0) {
            for (int i = 1; i < n && rc == 0; i++)
                rc = s_recv0(msg, masters[i], IMPI_TAG_BARRIER);
            for (int i = 1; i < n && rc == 0; i++)
                rc = s_send0(msg, masters[i], IMPI_TAG_BARRIER);
        } else {
            rc = s_send0(msg, masters[0], IMPI_TAG_BARRIER);
            if (rc == 0)
                rc = s_recv0(msg, masters[0], IMPI_TAG_BARRIER);
        }
        return rc;
    }
    int d = impi_cubedim(n), h = impi_hibit(mynum, d);
    for (int i = d - 1; i > h && rc == 0; i--)
        if ((mynum | (1 << i)) < n)
            rc = s_recv0(msg, masters[mynum | (1 << i)], IMPI_TAG_BARRIER);
    if (rc == 0 && mynum > 0) {
        int parent = mynum & ~(1 << h);
        rc = s_send0(msg, masters[parent], IMPI_TAG_BARRIER);
        if (rc == 0)
            rc = s_recv0(msg, masters[parent], IMPI_TAG_BARRIER);
    }
    for (int i = h + 1; i < d && rc == 0; i++)
        if ((mynum | (1 << i)) < n)
            rc = s_send0(msg, masters[mynum | (1 << i)], IMPI_TAG_BARRIER);
    return rc;
}

/*  The masters' phase on its own. */
int impi_masters_barrier(gimpi_msg_t *msg, const int *ranks, int n, int mynum, int maxlinear)
{
    assert(msg && ranks);
    if (mynum < 0 || mynum >= n)
        return GIMPI_EBADPARAM;
    return s_masters_barrier(msg, ranks, n, mynum, maxlinear);
}

/*  Participant number k of the tree numbering v (v = (k - rootnum) mod n). */
static int s_unrel(int v, int rootnum, int n)
{
    return (v + rootnum) % n;
}

/*  The bcast's masters' phase: receive from the parent (unless root), then send to the
 *  children — data, or the failure mark (a 0-byte message) when this one has none. */
int impi_masters_bcast(gimpi_msg_t *msg, const int *tids, int n, int mynum, int rootnum,
                       int maxlinear, void *buf, size_t len, int st)
{
    assert(msg && tids);
    if (n <= 1 || mynum < 0 || mynum >= n)
        return st;
    int v = (mynum - rootnum + n) % n, d = impi_cubedim(n), h = impi_hibit(v, d);
    int linear = n <= maxlinear;
    if (v != 0) {
        int from = linear ? rootnum : s_unrel(v & ~(1 << h), rootnum, n);
        int r = impi_recv(msg, GIMPI_CID_COLL, tids[from], IMPI_TAG_BCAST, buf, len);
        st = st ? st : r;
        if (linear)
            return st;
    }
    int *kids = malloc((size_t)n * sizeof *kids), nk = 0;
    if (!kids)
        return GIMPI_ENOMEM;
    for (int i = linear ? 1 : h + 1; linear ? i < n : i < d; i++) {
        int c = linear ? i : v | (1 << i);
        if (c < n)
            kids[nk++] = tids[s_unrel(c, rootnum, n)];
    }
    int r = impi_send_all(msg, GIMPI_CID_COLL, kids, nk, IMPI_TAG_BCAST, buf, st ? 0 : len);
    free(kids);
    return st ? st : r;
}

/*  Receives one partial result from tid on the point-to-point context and folds it into
 *  data (unless st is already a failure).  Returns the outcome. */
static int s_fold(gimpi_msg_t *msg, int tid, int op, int datatype, void *data, void *tmp,
                  int count, size_t bytes, int st)
{
    int r = impi_recv(msg, GIMPI_CID_P2P, tid, IMPI_TAG_REDUCE, tmp, bytes);
    if (r == 0 && st == 0)
        r = gimpi_op_apply((gimpi_op_t)op, datatype, data, tmp, count) ? GIMPI_EBADPARAM : 0;
    return st ? st : r;
}

/*  The reduce's masters' phase (impi-protocol: reduce, commutative op). */
int impi_masters_reduce(gimpi_msg_t *msg, const int *tids, int n, int mynum, int rootnum,
                        int maxlinear, int op, int datatype, void *data, int count, int st)
{
    assert(msg && tids);
    if (n <= 1 || mynum < 0 || mynum >= n)
        return st;
    size_t bytes = (size_t)count * gimpi_datatype_size(datatype);
    int v = (mynum - rootnum + n) % n;
    int to = -1;                        /* where this partial goes, -1 at the root */
    void *tmp = NULL;
    if (n <= maxlinear) {
        if (v != 0)
            to = rootnum;
        else if (!(tmp = malloc(bytes ? bytes : 1)))
            st = GIMPI_ENOMEM;
        for (int k = 0; v == 0 && k < n; k++)
            if (k != rootnum)
                st = s_fold(msg, tids[k], op, datatype, data, tmp, count, bytes, st);
    } else {
        for (int i = 0; (1 << i) < n; i++) {
            if (v & (1 << i)) {
                to = s_unrel(v & ~(1 << i), rootnum, n);
                break;
            }
            if ((v | (1 << i)) < n) {
                if (!tmp && !(tmp = malloc(bytes ? bytes : 1)))
                    st = GIMPI_ENOMEM;
                if (tmp)
                    st = s_fold(msg, tids[s_unrel(v | (1 << i), rootnum, n)], op, datatype,
                                data, tmp, count, bytes, st);
            }
        }
    }
    free(tmp);
    if (to >= 0) {
        int r = impi_send(msg, GIMPI_CID_P2P, tids[to], IMPI_TAG_REDUCE, data, st ? 0 : bytes);
        st = st ? st : r;
    }
    return st;
}
