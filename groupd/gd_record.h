/*  gd_record.h — what groupd's request handler writes to its journal (gd_journal.h) and
 *  keeps in its table of replies (gd_dedup.h): the requests that change its state with
 *  their replies, the replies sent later, and the ends of tasks.  gd_serve.c calls these
 *  around each request and from its one function that sends replies; groupd.c replays the
 *  journal through gd_serve_request at start.
 */
#ifndef GIMPI_GD_RECORD_H
#define GIMPI_GD_RECORD_H

#include "groupd/gd_serve.h"

/*  True for the commands whose requests are journaled: those that change groupd's state
 *  (or wait for a change: BARRIER, FREEZE, MBOX_GET, VMWAIT, VMREQ). */
bool gd_record_journaled(uint8_t cmd);

/*  A journaled request is about to be handled (frames: its routing id, then the request). */
void gd_record_begin(groupd_t *self, const gd_frame_t *frames, int nframes, const gd_msg_t *msg);
/*  A reply (frames: header, status, version, extras) is about to go to key: the request's
 *  own reply completes its JR_REQ record, any other one is a JR_REPLY; either is noted in
 *  the table of replies.  While replaying nothing is written. */
void gd_record_reply(groupd_t *self, const uint8_t *key, size_t keylen, const gd_frame_t *frames,
                     int n);
/*  The request has been handled: its JR_REQ is written if no reply was (MBOX_PUTQ, a
 *  waiting barrier), then the task ends it caused. */
void gd_record_end(groupd_t *self);
/*  A task ended by its connection's end (JR_GONE; held until the request's record when a
 *  request is being handled). */
void gd_record_gone(groupd_t *self, int32_t tid);

/*  After a restart: when the request (key, reqid) was journaled, answers it from the
 *  table of replies (or drops it while its reply is still to come) and returns true. */
bool gd_record_dup(groupd_t *self, const uint8_t *key, size_t keylen, const gd_msg_t *msg);

/*  The connection id a replayed request stands on: one per routing id, never a live one's. */
uint64_t gd_record_pseudo_conn(const uint8_t *key, size_t keylen);

/*  Compaction: writes the state now to out as records that rebuild it (JR_COUNTERS,
 *  JR_TASK, JR_GROUP, JR_BLOCK, JR_HOSTS, JR_MBOX, JR_DEDUP after a JR_HEAD); arg is the
 *  groupd_t (gd_journal_dump_fn).  0 or -1. */
int gd_record_dump(void *arg, gd_journal_t *out);

#endif
