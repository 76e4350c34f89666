/*  impi_coll.c — IMPI's inter-client collective algorithms over the data plane (see
 *  impi_coll.h).  The world barrier: every non-master sends a 0-byte message to its
 *  client's master and waits for the release; the masters meet linearly (master 0 gathers
 *  and releases) when there are at most MAXLINEAR of them — LAM's reading of the boundary,
 *  which the draft words as "fewer than" — and along a hypercube tree otherwise.
 */
#include "coll/impi_coll.h"
#include "gimpi.h"

#include <assert.h>

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

/*  The masters' phase on its own (for group barriers spanning clients). */
int impi_masters_barrier(gimpi_msg_t *msg, const int *ranks, int n, int mynum, int maxlinear)
{
    assert(msg && ranks);
    if (mynum < 0 || mynum >= n)
        return GIMPI_EBADPARAM;
    return s_masters_barrier(msg, ranks, n, mynum, maxlinear);
}

/*  The world barrier: local gather to the master, masters' phase, local release. */
int impi_world_barrier(gimpi_msg_t *msg, const impi_tables_t *tables, int rank)
{
    assert(msg && tables);
    if (rank < 0 || rank >= tables->nprocs)
        return GIMPI_EBADPARAM;
    int client = tables->procs[rank].client;
    const impi_client_info_t *me = &tables->clients[client];
    int master = me->first_proc;
    int rc = 0;
    if (rank != master) {
        rc = s_send0(msg, master, IMPI_TAG_BARRIER);
        return rc ? rc : s_recv0(msg, master, IMPI_TAG_BARRIER);
    }
    for (int r = master + 1; r < master + me->nprocs && rc == 0; r++)
        rc = s_recv0(msg, r, IMPI_TAG_BARRIER);
    int masters[IMPI_MAX_CLIENTS];
    for (int c = 0; c < tables->nclients; c++)
        masters[c] = tables->clients[c].first_proc;
    if (rc == 0)
        rc = s_masters_barrier(msg, masters, tables->nclients, client, tables->maxlinear);
    for (int r = master + 1; r < master + me->nprocs && rc == 0; r++)
        rc = s_send0(msg, r, IMPI_TAG_BARRIER);
    return rc;
}
