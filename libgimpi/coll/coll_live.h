/*  coll_live.h — the group operations' part of the live view (doc/tracing.md),
 *  internal to the library: a group operation (pvm_reduce, pvm_gather, pvm_scatter, a
 *  barrier on the data plane) notes what it is at its start, three stores and nothing
 *  sent; when the data plane's status hook finds the task blocked in one for
 *  GIMPI_STATUS_AFTER, the PVM layer asks the collectives to tell groupd, and the
 *  operation's end clears what was told.
 */
#ifndef GIMPI_COLL_LIVE_H
#define GIMPI_COLL_LIVE_H

#include "gimpi_coll.h"

#pragma GCC visibility push(hidden)

/*  If a group operation is under way, tells groupd ("pvm_reduce(\"g\", root 0)", with
 *  queued messages) once, and returns 1; 0 when none is. */
int gimpi_coll_live_publish(gimpi_coll_t *self, int waited_ms, int queued);

#pragma GCC visibility pop
#endif
