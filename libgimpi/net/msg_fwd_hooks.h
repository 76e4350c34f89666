/*  msg_fwd_hooks.h — the one interface between the packet engine and the forwarding of
 *  large broadcasts (gimpi_msg_fwd.c), kept narrow so that calls go one way only.
 *
 *  The forwarding module sits above the engine: it calls the engine's public calls
 *  (gimpi_msg.h) and the locked primitives below, and the engine never calls it by name.
 *  The engine reaches it only through the hooks table gimpi_msg_fwd_hooks, which the
 *  context's constructor (msg_new.c) stores in the context: a complete message on
 *  GIMPI_CID_FWD is handed to hooks->arrived, a task's departure to hooks->gone.  So the
 *  object files form no cycle (the order is in msg_internal.h).  The send entries without
 *  the send hook serve the forwarding broadcaster and the collectives' bcast, which run
 *  the hook once per call and then send a copy to each receiver.
 */
#ifndef GIMPI_MSG_FWD_HOOKS_H
#define GIMPI_MSG_FWD_HOOKS_H

#include "gimpi_msg.h"

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

typedef struct gimpi_fwd_t gimpi_fwd_t;

/*  What the engine calls, lock held, from inside its progress loop. */
typedef struct {
    /*  A complete message on GIMPI_CID_FWD arrived from tid src; data (malloc'ed, len
     *  bytes) is taken over.  *state is created on first use. */
    void (*arrived)(gimpi_msg_t *msg, gimpi_fwd_t **state, int src, uint8_t *data,
                    size_t len);
    /*  Task tid has gone: broadcasts from it still being reassembled fail. */
    void (*gone)(gimpi_msg_t *msg, gimpi_fwd_t *state, int tid);
} gimpi_msg_fwd_hooks_t;

/*  The forwarding module's hooks (gimpi_msg_fwd.c). */
extern const gimpi_msg_fwd_hooks_t gimpi_msg_fwd_hooks;

/*  Frees the reassembly state (gimpi_msg_fwd.c; at destroy, no other thread left). */
void gimpi_msg_fwd_free(gimpi_msg_t *msg, gimpi_fwd_t **state);

/*  The engine's locked primitives for the forwarding module (msg_match.c; lock held). */
/*  A detached send of buf (malloc'ed; freed by the engine) on cid; 0 or < 0 (buf freed). */
int gimpi_msg__send_owned(gimpi_msg_t *msg, uint64_t cid, int tid, int tag, uint8_t *buf,
                          size_t len);
/*  An incomplete message of total bytes from tid src, queued in arrival order (or claimed
 *  by a posted receive at once); its data comes later with __fill, or it fails with
 *  __fail.  Returns an opaque handle, NULL on failure. */
void *gimpi_msg__placeholder(gimpi_msg_t *msg, uint64_t cid, int src, int tag, size_t total);
/*  Completes a placeholder with its data (malloc'ed, taken over): delivered if claimed. */
void gimpi_msg__fill(gimpi_msg_t *msg, void *ph, uint8_t *data);
/*  The buffer (and its size) of the receive that claimed a placeholder, NULL if none. */
uint8_t *gimpi_msg__claim_buf(gimpi_msg_t *msg, void *ph, size_t *size);
/*  Completes a claimed placeholder whose data is already in the receive's buffer. */
void gimpi_msg__fill_claimed(gimpi_msg_t *msg, void *ph);
/*  Drops a placeholder: a receive that claimed it fails with GIMPI_ESYSERR. */
void gimpi_msg__fail(gimpi_msg_t *msg, void *ph);

/*  Unlocked, for the broadcaster (gimpi_msg.c). */
/*  The packet length (payload bytes of one packet). */
size_t gimpi_msg__pktlen(gimpi_msg_t *msg);
/*  Runs the context's send hook (gimpi_msg_set_send_hook), if any; without the lock. */
void gimpi_msg__before_send(gimpi_msg_t *msg);
/*  gimpi_msg_send_cid and gimpi_msg_isend_cid without the send hook, for a call that ran
 *  it once already (the hook runs once per call of the program, not per copy). */
int gimpi_msg__send_cid(gimpi_msg_t *msg, uint64_t cid, int tid, int tag, const void *buf,
                        size_t len);
int gimpi_msg__isend_cid(gimpi_msg_t *msg, uint64_t cid, int tid, int tag, const void *buf,
                         size_t len, int flags, gimpi_msg_req_t **req);

#pragma GCC visibility pop

#endif
