/*  gimpi_world.h — collectives over the whole IMPI job: MPI_COMM_WORLD of an IMPI job,
 *  the procs of every client of the startup tables (gimpirun's tasks and the MPI ranks of
 *  other IMPI implementations, such as LAM/MPI, alike).
 *
 *  These are the collectives an MPI rank of another implementation takes part in: a gimpi
 *  task calls gimpi_world_bcast where the MPI rank calls MPI_Bcast on MPI_COMM_WORLD, and
 *  both run IMPI's algorithms on IMPI's collective context with IMPI's tags.  Ranks are
 *  world ranks (gimpi_rank(), MPI_Comm_rank on MPI_COMM_WORLD); every proc of the job must
 *  make the same calls in the same order with the same root, count (or length), datatype
 *  and op, as MPI requires.  Semantics are MPI's: bcast fills buf everywhere from root's;
 *  reduce combines every proc's send into recv at root; allreduce leaves the result in
 *  recv everywhere.  Datatypes and ops are those of <gimpi_ops.h> (GIMPI_INT, GIMPI_OP_SUM
 *  ...); the other side must pass the matching MPI datatype (MPI_INT, MPI_SUM ...).
 *  See gimpi_world(3).
 *
 *  Every call returns 0 or a negative GIMPI_E* code: GIMPI_EBADPARAM (NULL task or buffer,
 *  root outside 0..size-1, unknown datatype, GIMPI_STR, unknown op, count < 0: nothing
 *  is sent), GIMPI_ENOTINGROUP (a spawned task, which has no world rank), GIMPI_ESYSERR (a
 *  proc on the way died or left, or the data plane's timeout ran out), GIMPI_ENOMEM.
 */
#ifndef GIMPI_WORLD_H
#define GIMPI_WORLD_H

#include "gimpi.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*  MPI_Barrier(MPI_COMM_WORLD): returns once every proc of the job has entered it. */
GIMPI_EXPORT int gimpi_world_barrier(gimpi_t *t);

/*  MPI_Bcast(buf, len, MPI_BYTE, root, MPI_COMM_WORLD): len bytes of world rank root's buf
 *  into buf at every proc (len 0: returns at once). */
GIMPI_EXPORT int gimpi_world_bcast(gimpi_t *t, void *buf, size_t len, int root);

/*  MPI_Reduce(send, recv, count, datatype, op, root, MPI_COMM_WORLD) for a predefined op:
 *  recv[i] at root = send[i] of every proc combined by op.  recv is needed at root only
 *  (NULL elsewhere is fine); send may equal recv.  Non-roots return once their part is
 *  on its way.  count 0: returns at once. */
GIMPI_EXPORT int gimpi_world_reduce(gimpi_t *t, const void *send, void *recv, int count,
                                    int datatype, int op, int root);

/*  MPI_Allreduce(send, recv, count, datatype, op, MPI_COMM_WORLD): the reduce to world
 *  rank 0, then its bcast; recv needed everywhere, send may equal recv. */
GIMPI_EXPORT int gimpi_world_allreduce(gimpi_t *t, const void *send, void *recv, int count,
                                       int datatype, int op);

#ifdef __cplusplus
}
#endif
#endif
