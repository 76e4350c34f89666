/*  msg_status_hook.h — the live view's hook into the data plane's one blocking wait
 *  (msg_wait, msg_progress.c), internal to the library: a call that has waited after_ms
 *  runs the hook once, in the blocked thread and without the context's lock, so that the
 *  layer above can tell groupd what it waits for (doc/tracing.md).  The wait wakes
 *  at that moment (its poll timeout is cut to it); a call that does not block that long
 *  costs nothing more than a test of the hook's presence.
 */
#ifndef GIMPI_MSG_STATUS_HOOK_H
#define GIMPI_MSG_STATUS_HOOK_H

#include "gimpi_msg.h"

#pragma GCC visibility push(hidden)

/*  Runs once a wait has lasted waited_ms (>= after_ms). */
typedef void (*gimpi_msg_status_fn)(void *arg, int waited_ms);

/*  Installs the hook (fn NULL or after_ms <= 0: none). */
void gimpi_msg_set_status_hook(gimpi_msg_t *self, gimpi_msg_status_fn fn, void *arg,
                               int after_ms);

#pragma GCC visibility pop
#endif
