/*  gimpi_groups_status.h — a task's live status, told to groupd (the task side of
 *  TASK_STATUS, doc/tracing.md): a call that has been blocked GIMPI_STATUS_AFTER
 *  says what it waits for, and says "running" again when it returns.  The PVM layer
 *  publishes its receives' waits; the client itself (gimpi_groups.c) those of barriers
 *  and freezes that groupd arbitrates.  Internal to the library; gimpi-stat and the
 *  console read the statuses back with STATUSES.
 */
#ifndef GIMPI_GROUPS_STATUS_H
#define GIMPI_GROUPS_STATUS_H

#include "gimpi_group.h"

/*  Tells groupd, without waiting for its answer (dropped when it comes), that this task
 *  has been blocked `ms` ms in `call` ("pvm_recv(t40005, tag 7)", at most 255 bytes: cut
 *  beyond), with `queued` messages arrived and not taken (-1: not known), waiting for
 *  task `peer` (0: no one in particular); call NULL or "" says it runs again.  0, or an
 *  error of sending (GIMPI_ESYSERR when the task has no live connection to groupd). */
int gimpi_groups_status(gimpi_groups_t *self, const char *call, int ms, int queued, int peer);

/*  GIMPI_STATUS_AFTER, ms: how long a call waits before it publishes (0: never). */
int gimpi_groups_status_after(void);
#endif
