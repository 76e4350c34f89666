/*  impi_coll.h — the collective algorithms IMPI prescribes between clients (impi-protocol.md
 *  §5), over the data plane: one master per client (its lowest world rank), a local phase
 *  inside each client and a global phase among the masters — linear up to MAXLINEAR masters,
 *  a hypercube tree above — on the collective context (cid 1) with IMPI's tags.
 *
 *  Today this holds the world barrier that ends every job (§5.8: the IMPI-mandated barrier
 *  before PK_FINI); the group collectives build on the same helpers.
 */
#ifndef GIMPI_IMPI_COLL_H
#define GIMPI_IMPI_COLL_H

#include "gimpi_msg.h"
#include "impi/impi_tables.h"

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

/*  The masters' phase of IMPI's barrier (§5.4) among n masters given by world rank, from
 *  master number mynum: linear up to maxlinear masters, hypercube tree above; 0-byte
 *  messages, IMPI_TAG_BARRIER, collective context.  0 or the data plane's error. */
int impi_masters_barrier(gimpi_msg_t *msg, const int *ranks, int n, int mynum, int maxlinear);

/*  The IMPI barrier over every proc of the job (MPI_COMM_WORLD), from world rank `rank`.
 *  Returns 0 or the data plane's error (a dead peer: GIMPI_ESYSERR). */
int impi_world_barrier(gimpi_msg_t *msg, const impi_tables_t *tables, int rank);

#endif
