/*  gimpi_msg_fwd.h — the data plane's forwarding hook for large broadcasts (internal).
 *
 *  A broadcaster cuts its message into chunks that each fit one IMPI packet and sends them
 *  on GIMPI_CID_FWD with a small header: broadcaster, operation id, target context and
 *  tag, total length, offset, and the receivers in tree order.  Positions in the list
 *  (broadcaster = 0) form a binomial tree by halving; every receiver's ENGINE — inside its
 *  progress loop, without its program calling anything — forwards each chunk to its
 *  children as soon as it arrives and reassembles the message, which it then delivers as
 *  one ordinary message (source = the broadcaster, the given tag and context).  The engine
 *  half (gimpi_msg.c) gives this module three locked primitives; the rest lives here.
 */
#ifndef GIMPI_MSG_FWD_H
#define GIMPI_MSG_FWD_H

#include "gimpi_msg.h"

#include <stddef.h>
#include <stdint.h>

/*  Contexts of forwarded chunks and of their acknowledgements (never seen by programs). */
#define GIMPI_CID_FWD ((uint64_t)16)
#define GIMPI_CID_FWDACK ((uint64_t)17)

typedef struct gimpi_fwd_t gimpi_fwd_t;

/*  Broadcaster side (public-API level, takes the lock itself): sends len bytes of buf to
 *  the n receivers tids[] through the tree; returns once buf may be reused. */
int gimpi_msg_fwd_bcast(gimpi_msg_t *msg, uint64_t cid, int tag, const void *buf, size_t len,
                        const int *tids, int n);

/*  Engine side, lock held: a complete chunk arrived from tid src; takes data (malloc'ed,
 *  len bytes) over.  *state is created on first use. */
void gimpi_msg_fwd_arrived(gimpi_msg_t *msg, gimpi_fwd_t **state, int src, uint8_t *data,
                           size_t len);
/*  Engine side, lock held: task tid has gone; broadcasts from it that are still being
 *  reassembled fail (their receives get GIMPI_ESYSERR). */
void gimpi_msg_fwd_gone(gimpi_msg_t *msg, gimpi_fwd_t *state, int tid);
/*  Frees the reassembly state (at destroy, lock held or no other thread left). */
void gimpi_msg_fwd_free(gimpi_msg_t *msg, gimpi_fwd_t **state);

/*  Locked primitives of the engine (gimpi_msg.c), for this module only. */
/*  A detached send of buf (malloc'ed; freed by the engine) on cid; 0 or < 0 (buf freed). */
int gimpi_msg__send_owned(gimpi_msg_t *msg, uint64_t cid, int tid, int tag, uint8_t *buf,
                          size_t len);
/*  Delivers a whole message (data malloc'ed, taken over) as if tid src sent it on cid. */
int gimpi_msg__inject(gimpi_msg_t *msg, uint64_t cid, int src, int tag, uint8_t *data,
                      size_t len);
/*  An incomplete message of total bytes from tid src, queued in arrival order (or claimed by
 *  a posted receive at once); its data comes later with __fill, or it fails with __fail.
 *  Returns an opaque handle, NULL on failure. */
void *gimpi_msg__placeholder(gimpi_msg_t *msg, uint64_t cid, int src, int tag, size_t total);
/*  Completes a placeholder with its data (malloc'ed, taken over): delivered if claimed. */
void gimpi_msg__fill(gimpi_msg_t *msg, void *ph, uint8_t *data);
/*  The buffer (and its size) of the receive that claimed a placeholder, NULL if none. */
uint8_t *gimpi_msg__claim_buf(gimpi_msg_t *msg, void *ph, size_t *size);
/*  Completes a claimed placeholder whose data is already in the receive's buffer. */
void gimpi_msg__fill_claimed(gimpi_msg_t *msg, void *ph);
/*  Drops a placeholder: a receive that claimed it fails with GIMPI_ESYSERR. */
void gimpi_msg__fail(gimpi_msg_t *msg, void *ph);
/*  The packet length (payload bytes of one packet). */
size_t gimpi_msg__pktlen(gimpi_msg_t *msg);
/*  Runs the context's send hook (gimpi_msg_set_send_hook), if any; without the lock. */
void gimpi_msg__before_send(gimpi_msg_t *msg);

#endif
