/*  gimpi_world.c — the world collectives of <gimpi_world.h> for a task: IMPI's barrier,
 *  bcast, reduce and allreduce over every proc of the job, run on the task's data plane
 *  (libgimpi/coll/impi_world.c holds the algorithms).
 */
#include "gimpi_world.h"
#include "coll/impi_coll.h"

/*  MPI_Barrier on the world. */
int gimpi_world_barrier(gimpi_t *t)
{
    return t ? impi_world_barrier(gimpi_msg(t)) : GIMPI_EBADPARAM;
}

/*  MPI_Bcast on the world. */
int gimpi_world_bcast(gimpi_t *t, void *buf, size_t len, int root)
{
    return t ? impi_world_bcast(gimpi_msg(t), buf, len, root) : GIMPI_EBADPARAM;
}

/*  MPI_Reduce on the world. */
int gimpi_world_reduce(gimpi_t *t, const void *send, void *recv, int count, int datatype,
                       int op, int root)
{
    return t ? impi_world_reduce(gimpi_msg(t), send, recv, count, datatype, op, root)
             : GIMPI_EBADPARAM;
}

/*  MPI_Allreduce on the world. */
int gimpi_world_allreduce(gimpi_t *t, const void *send, void *recv, int count, int datatype,
                          int op)
{
    return t ? impi_world_allreduce(gimpi_msg(t), send, recv, count, datatype, op)
             : GIMPI_EBADPARAM;
}
