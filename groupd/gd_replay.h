/*  gd_replay.h — reading groupd's journal back at start (gd_journal.h): each record is
 *  handed to the request handler as if its request came again (no reply is sent, none
 *  recorded), or put back into the registry, the relay, the message box and the table of
 *  replies (a compacted journal's state records).  groupd.c replays the file through it;
 *  the fuzzer replays arbitrary bytes.
 */
#ifndef GIMPI_GD_REPLAY_H
#define GIMPI_GD_REPLAY_H

#include "groupd/gd_serve.h"

/*  Applies one record to the groupd_t arg (gd_journal_apply_fn).  0, or -1 for a record
 *  that cannot be one of ours (the replay then stops with an error). */
int gd_replay_apply(void *arg, const gd_jrec_t *rec);

#endif
