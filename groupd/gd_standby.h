/*  gd_standby.h — a standby groupd (groupd --standby-of EP, doc/reliability.md §3): before
 *  it binds anything it follows the primary at EP: asks to FOLLOW, writes the image and
 *  then every record it is sent to its own journal file, and acks each (FOLLOW_ACK, also
 *  its heartbeat every 250 ms).  When the primary falls silent for GD_FOLLOW_SILENT_MS or
 *  its connection ends, the standby takes over: groupd replays that journal as after a
 *  restart, serves at its own endpoint with the next term (JR_TERM), and sends FENCE with
 *  its term to the old primary's endpoint once a second for GD_STANDBY_FENCE_S seconds
 *  (a stopped primary that wakes up then exits "fenced").  A standby that has never had
 *  an image does not take over: it waits for the primary.
 */
#ifndef GIMPI_GD_STANDBY_H
#define GIMPI_GD_STANDBY_H

#include "groupd/gd_serve.h"
#include "base/gimpi_key.h"

enum { GD_STANDBY_FENCE_S = 60 };

/*  Follows the primary at `primary` into the journal file `path` until it is to take over
 *  (0: self->standby holds what the fencing needs, self->term the primary's term), until
 *  a signal on self->sig_fd (1: the primary told, GD_FOLLOW_BYE, the file removed), or a
 *  failure (-1, said on stderr; the file removed).  key: the job's key (tcp), or NULL.  *ready_fd (>= 0:
 *  a daemonised groupd's parent waits) gets "1" once the first image is written, and
 *  -1 then. */
int gd_standby_follow(groupd_t *self, const char *primary, const gimpi_key_t *key,
                      const char *path, int *ready_fd);
/*  After the replay: the term goes one up (written to the journal).  */
void gd_standby_took_over(groupd_t *self);
/*  Sends the FENCE when due; the milliseconds until the next (-1: done). */
int gd_standby_tick(groupd_t *self);
/*  Frees the fencing's socket and context. */
void gd_standby_destroy(groupd_t *self);

#endif
