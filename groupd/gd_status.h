/*  gd_status.h — groupd's live view of blocked tasks: the latest status each task has
 *  published with TASK_STATUS (the call it has been blocked in since when, the messages
 *  queued for it, the peer it waits for), and the tids that have exited lately, so that
 *  STATUSES can say of a peer whether it runs, has exited or is unknown.  Only a task that
 *  has waited GIMPI_STATUS_AFTER publishes, so the table holds the tasks that are stuck
 *  now and nothing else; an entry goes when its task publishes "" (running again) or
 *  ends.  No sockets: gd_serve.c decodes and answers, gd_notify.c reports the ends.
 */
#ifndef GIMPI_GD_STATUS_H
#define GIMPI_GD_STATUS_H

#include "groupd/gd_registry.h"
#include "groups/gd_proto.h"

#include <stdint.h>

enum {
    GD_STATUS_MAX = GD_REG_MAX_TASKS,   /* statuses kept at once (GIMPI_EOUTOFRES beyond) */
    GD_STATUS_EXITED = 4096,            /* ended tids remembered, the latest */
};

typedef struct gd_status_t gd_status_t;

gd_status_t *gd_status_new(void);
void gd_status_destroy(gd_status_t **self_p);

/*  TASK_STATUS from registered task `sender` about task `tid` at groupd's now_ms: call
 *  (len bytes, "" clears), blocked ms so far, queued messages (-1: not known), peer (0:
 *  none).  0, or GIMPI_ENOTASK (sender not registered), GIMPI_EDENIED (tid is not the
 *  sender's), GIMPI_EBADPARAM (negative ms, queued < -1, a negative peer),
 *  GIMPI_EOUTOFRES (table full),
 *  GIMPI_ENOMEM. */
int gd_status_set(gd_status_t *self, int32_t sender, int32_t tid, const uint8_t *call,
                  size_t len, int32_t ms, int32_t queued, int32_t peer, int64_t now_ms);

/*  Task tid has ended: its status goes, its tid is remembered as exited. */
void gd_status_task_gone(gd_status_t *self, int32_t tid);

/*  How many statuses are kept. */
int gd_status_count(gd_status_t *self);

/*  STATUSES: the records of every status kept (a task the registry no longer has is
 *  dropped first), with each peer's state; *blob malloc'ed.  The record count, or
 *  GIMPI_ENOMEM. */
int gd_status_list(gd_status_t *self, gd_registry_t *reg, int64_t now_ms, uint8_t **blob,
                   size_t *len);
#endif
