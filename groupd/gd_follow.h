/*  gd_follow.h — the primary's side of a standby groupd (doc/reliability.md §3): a standby
 *  asks to FOLLOW; the primary sends it its journal file as it is (an image), then the
 *  bytes of every record it appends (the journal's tap), each as one FOLLOW reply on the
 *  same request id carrying the stream offset after it (offsets only grow, an image
 *  counting its length like records); the standby acks the offset it
 *  holds (FOLLOW_ACK, also its heartbeat every 250 ms).  Semi-synchronous: while a
 *  standby follows, a reply leaves only once the standby has acked every record written
 *  before it (replies wait in order in a queue), so a reply a task has seen is on the
 *  standby too.  A standby silent for GD_FOLLOW_SILENT_MS, or whose connection ends, or
 *  that does not keep up (its queue full) is dropped, said once, and the primary goes on
 *  alone; with --witness only once the witness granted it (gd_witness.h: asked, and the
 *  replies held until then).  After a compaction the new file goes as a new image.
 */
#ifndef GIMPI_GD_FOLLOW_H
#define GIMPI_GD_FOLLOW_H

#include "groupd/gd_serve.h"

enum {
    GD_FOLLOW_BEAT_MS = 250,        /* heartbeats both ways */
    GD_FOLLOW_SILENT_MS = 1000,     /* a peer silent this long is gone */
};

/*  A FOLLOW_ACK of this position: the standby stops on purpose (the job ends): the primary
 *  answers it (a FOLLOW_ACK reply, 0), sends what it held and goes on alone, without a
 *  word. */
#define GD_FOLLOW_BYE UINT64_MAX

/*  FOLLOW, FOLLOW_ACK and FENCE, and a HELLO's term (a higher one than ours fences us:
 *  self->fenced), before quotas and the journal: true when handled (or fenced). */
bool gd_follow_request(groupd_t *self, const gd_frame_t *frames, const gd_msg_t *msg,
                       int srcfd);
/*  A FOLLOW request (from routing id key, on connection fd): that standby follows from
 *  now on (replacing any other), and gets the image.  Answers an error without a
 *  journal. */
void gd_follow_start(groupd_t *self, const uint8_t *key, size_t keylen, uint32_t reqid,
                     int fd);
/*  A FOLLOW_ACK: the standby holds the stream up to pos; the replies waiting for it go
 *  (GD_FOLLOW_BYE: it stops).  From a standby that is not (or no longer) following: an
 *  error reply (FOLLOW again). */
void gd_follow_ack(groupd_t *self, const uint8_t *key, size_t keylen, uint32_t reqid,
                   uint64_t pos);
/*  A reply about to leave ([route][frames]): true when it was queued until the standby
 *  acks (the caller then does not send it). */
bool gd_follow_hold(groupd_t *self, const gd_frame_t *route, const gd_frame_t *frames, int n);
/*  A request's handling is over: the replies it made wait for the standby to hold every
 *  record it wrote (a barrier's release goes to all its waiters or to none). */
void gd_follow_seal(groupd_t *self);
/*  Heartbeat and silence: returns the milliseconds until it is due again (-1: no standby). */
int gd_follow_tick(groupd_t *self);
/*  Connection fd ended: if it was the standby's, it is dropped. */
void gd_follow_conn_gone(groupd_t *self, int fd);
/*  The witness granted going on alone (SIGUSR1, --witness): the standby is dropped and
 *  the replies held for it leave.  Without a standby, nothing. */
void gd_follow_granted(groupd_t *self);
/*  The journal was compacted: the standby gets the new file as an image. */
void gd_follow_image(groupd_t *self);
/*  Drops the standby (why: for the log line), sending every reply held; with why NULL
 *  (groupd ends) or once fenced, silently and dropping them (their tasks ask the newer
 *  primary again: a reply the standby may not have must not leave). */
void gd_follow_stop(groupd_t *self, const char *why);

#endif
