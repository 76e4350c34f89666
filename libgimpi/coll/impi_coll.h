/*  impi_coll.h — the collective algorithms IMPI prescribes between clients, over the data
 *  plane: one master per client (its lowest world rank), a local phase inside each client
 *  and a global phase among the masters — linear up to MAXLINEAR masters, a hypercube or
 *  binomial tree above — with IMPI's tags (gimpi_world(3) describes them).
 *
 *  The masters' phases of barrier, bcast and reduce are here, shared by the group
 *  collectives (gimpi_coll.c) and the world collectives; the world collectives themselves
 *  run over every proc of the startup tables (MPI_COMM_WORLD of the IMPI job, procs of
 *  other IMPI implementations included), as the data plane knows them: the barrier that
 *  ends every job, and bcast, reduce and allreduce (impi_world.c).
 *
 *  Failure between our own procs travels as a message of the wrong length (0 bytes where
 *  data was expected, 1 byte where 0 were): a proc that could not get its part sends that
 *  instead, so the procs below it in the tree learn the failure instead of waiting.
 */
#ifndef GIMPI_IMPI_COLL_H
#define GIMPI_IMPI_COLL_H

#include "gimpi_msg.h"

#include <stddef.h>
#include <stdint.h>

enum {
    IMPI_TAG_BARRIER = 110,
    IMPI_TAG_BCAST = 120,
    IMPI_TAG_GATHER = 130,
    IMPI_TAG_SCATTER = 150,
    IMPI_TAG_REDUCE = 190,
};

/*  Smallest d with 2^d >= n. */
int impi_cubedim(int n);
/*  Index of the highest set bit of v below bit d, -1 when there is none. */
int impi_hibit(int v, int d);

/*  A standard send of len bytes on context cid (returns once buf may be reused); the same
 *  to n tids at once; a receive of exactly len bytes (another length — the failure mark
 *  — or a failed receive: GIMPI_ESYSERR).  0 or GIMPI_ESYSERR (GIMPI_ENOMEM). */
int impi_send(gimpi_msg_t *msg, uint64_t cid, int tid, int tag, const void *buf, size_t len);
int impi_send_all(gimpi_msg_t *msg, uint64_t cid, const int *tids, int n, int tag,
                  const void *buf, size_t len);
int impi_recv(gimpi_msg_t *msg, uint64_t cid, int tid, int tag, void *buf, size_t len);

/*  The masters' phase of IMPI's barrier among n masters given by world rank, from master
 *  number mynum: linear up to maxlinear masters, hypercube tree above; 0-byte messages,
 *  IMPI_TAG_BARRIER, collective context.  0 or the data plane's error. */
int impi_masters_barrier(gimpi_msg_t *msg, const int *ranks, int n, int mynum, int maxlinear);

/*  The masters' phase of IMPI's bcast among n participants given by tid (the root stands
 *  for its client's master), from number mynum, rootnum the root's: the root sends len
 *  bytes of buf to every other participant (up to maxlinear) or down the binomial tree on
 *  (mynum - rootnum) mod n; IMPI_TAG_BCAST on the collective context.  st: this
 *  participant's outcome so far (a failed one passes the failure on).  Returns the
 *  outcome: st, or GIMPI_ESYSERR when the part could not be received. */
int impi_masters_bcast(gimpi_msg_t *msg, const int *tids, int n, int mynum, int rootnum,
                       int maxlinear, void *buf, size_t len, int st);

/*  The masters' phase of IMPI's reduce for a predefined op (a gimpi_op_t) among n
 *  participants given by tid (the root stands for its client's master): every one but the
 *  root sends its partial result of count elements of datatype in data to the root (up to
 *  maxlinear; the root folds them in in master order) or up the binomial tree on
 *  (mynum - rootnum) mod n.  IMPI_TAG_REDUCE on the point-to-point context, as LAM/MPI
 *  sends it; bare data.  st as for impi_masters_bcast; returns the outcome. */
int impi_masters_reduce(gimpi_msg_t *msg, const int *tids, int n, int mynum, int rootnum,
                        int maxlinear, int op, int datatype, void *data, int count, int st);

/*  The IMPI barrier over every proc of the job (MPI_COMM_WORLD) as the data plane knows
 *  them: a star through each client's master, the masters' phase, the release.  Returns 0
 *  or the data plane's error (a dead peer: GIMPI_ESYSERR). */
int impi_world_barrier(gimpi_msg_t *msg);

/*  IMPI's bcast of len bytes from world rank root to every proc (MPI_Bcast on
 *  MPI_COMM_WORLD; len 0: nothing happens).  0, GIMPI_EBADPARAM (root out of range, NULL
 *  buf), GIMPI_ESYSERR (a proc on the way died), GIMPI_ENOMEM. */
int impi_world_bcast(gimpi_msg_t *msg, void *buf, size_t len, int root);

/*  IMPI's reduce of count elements of datatype with predefined op from every proc into
 *  recv at world rank root (MPI_Reduce; send == recv allowed, recv needed at root only;
 *  count 0: nothing happens).  Non-roots return once their part is sent. */
int impi_world_reduce(gimpi_msg_t *msg, const void *send, void *recv, int count, int datatype,
                      int op, int root);

/*  IMPI's allreduce: the reduce to world rank 0, then the bcast of the result from it
 *  (recv needed everywhere). */
int impi_world_allreduce(gimpi_msg_t *msg, const void *send, void *recv, int count,
                         int datatype, int op);

#endif
