/*  gimpi_msg_fwd.h — the data plane's forwarding hook for large broadcasts (internal).
 *
 *  A broadcaster cuts its message into chunks that each fit one IMPI packet and sends them
 *  on GIMPI_CID_FWD with a small header: broadcaster, operation id, target context and
 *  tag, total length, offset, and the receivers in tree order.  Positions in the list
 *  (broadcaster = 0) form a binomial tree by halving; every receiver's ENGINE — inside its
 *  progress loop, without its program calling anything — forwards each chunk to its
 *  children as soon as it arrives and reassembles the message, which it then delivers as
 *  one ordinary message (source = the broadcaster, the given tag and context).  The engine
 *  hands this module what arrives on GIMPI_CID_FWD through the hooks of msg_fwd_hooks.h
 *  and gives it the locked primitives declared there; the rest lives in gimpi_msg_fwd.c.
 */
#ifndef GIMPI_MSG_FWD_H
#define GIMPI_MSG_FWD_H

#include "gimpi_msg.h"

#include <stddef.h>
#include <stdint.h>

/*  Contexts of forwarded chunks and of their acknowledgements (never seen by programs). */
#define GIMPI_CID_FWD ((uint64_t)16)
#define GIMPI_CID_FWDACK ((uint64_t)17)

/*  Broadcaster side (public-API level, takes the lock itself): sends len bytes of buf to
 *  the n receivers tids[] through the tree; returns once buf may be reused. */
int gimpi_msg_fwd_bcast(gimpi_msg_t *msg, uint64_t cid, int tag, const void *buf, size_t len,
                        const int *tids, int n);

#endif
