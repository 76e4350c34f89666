/*  live_view.h — the live view of a running job (doc/tracing.md), shared by
 *  `gimpi-stat --tasks/--watch` and the console's `top`: one look at groupd (TASKS, STAT
 *  and STATUSES over a tool connection that never registers) gives, for every task, its
 *  host, program, groups, and what it is blocked in now, for how long, with the messages
 *  queued for it and the state of the peer it waits for: "t40003 has been in
 *  pvm_recv(t40005, tag 7) for 12.0 s; t40005 has exited".
 */
#ifndef GIMPI_LIVE_VIEW_H
#define GIMPI_LIVE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct live_view_t live_view_t;

/*  Asks groupd at ep (timeout_ms for each answer).  NULL with the reason in err. */
live_view_t *live_view_new(const char *ep, int timeout_ms, char *err, size_t errsize);
void live_view_destroy(live_view_t **self_p);

/*  Prints the view: a table (one line per task, the blocked ones with their call) and,
 *  below it, one sentence per blocked task; or one JSON object. */
void live_view_print(live_view_t *self, FILE *out, bool json);

/*  How many tasks are blocked (published a status, or wait in a barrier or freeze). */
int live_view_nblocked(live_view_t *self);
#endif
