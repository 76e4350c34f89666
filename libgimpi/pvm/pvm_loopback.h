/*  pvm_loopback.h — an in-process transport for the PVM layer: a message sent to this
 *  task's own tid lands in its own receive queue.
 *
 *  It lets pack -> send -> recv -> unpack run with no daemon and no network (tests, and
 *  single-task use).  Messages for any other tid are counted and dropped, as PVM drops a
 *  message for a tid that does not exist; the last destinations are kept for tests.  A
 *  receive that waits with nothing queued sleeps out its timeout; one with no limit fails
 *  at once with GIMPI_ESYSERR, since nothing else could ever send.
 */
#ifndef GIMPI_PVM_LOOPBACK_H
#define GIMPI_PVM_LOOPBACK_H

#include "pvm/pvm_ctx.h"

typedef struct pvm_loopback_t pvm_loopback_t;

/*  The vtable to pass to pvm_ctx_attach with a pvm_loopback_t as impl. */
extern const pvm_transport_ops_t pvm_loopback_ops;

/*  A loopback for task `tid` (> 0) whose parent is `parent` (GIMPI_ENOPARENT for none);
 *  NULL on ENOMEM. */
pvm_loopback_t *pvm_loopback_new(int tid, int parent);
/*  Frees it and every queued message. */
void pvm_loopback_destroy(pvm_loopback_t **self_p);

/*  Messages dropped because they were for another tid, and the destination of the i-th
 *  such message (the first 64 are kept; 0 if out of range). */
int pvm_loopback_dropped(const pvm_loopback_t *self);
int pvm_loopback_dropped_dst(const pvm_loopback_t *self, int i);
/*  Messages waiting in the loopback (not yet taken by the context). */
int pvm_loopback_pending(const pvm_loopback_t *self);
/*  Makes the next sends fail with `code` (0 restores normal sending). */
void pvm_loopback_fail_sends(pvm_loopback_t *self, int code);

#endif
