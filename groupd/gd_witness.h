/*  gd_witness.h — groupd's side of the witness (groupd --witness, doc/reliability.md §3):
 *  the launcher that started a primary and its standby (gimpirun) arbitrates between
 *  them, so that a network partition cannot leave two groupds serving one job.  A
 *  standby whose primary falls silent (or whose connection ends) does not take over, and
 *  a primary whose standby falls silent does not go on without it, until the witness
 *  grants it.  Each asks with one line on stdout,
 *      groupd-witness: ask takeover term N (WHY)
 *      groupd-witness: ask alone term N (WHY)
 *  and the witness grants at most one of the two per term, with SIGUSR1 to the one it
 *  chose (read from the signalfd, like the stop signals).  One not granted waits: a
 *  primary keeps holding its replies (the standby has not acked them), a standby keeps
 *  following, and asks again every GD_WITNESS_ASK_MS while the silence lasts.
 */
#ifndef GIMPI_GD_WITNESS_H
#define GIMPI_GD_WITNESS_H

#include "groupd/gd_serve.h"

enum { GD_WITNESS_ASK_MS = 1000 };      /* a question not granted is asked again */

/*  Reads one signal from self->sig_fd: its number, or 0 when none was there. */
int gd_witness_signal(groupd_t *self);
/*  Asks the witness (what: "takeover" or "alone") for term, saying why. */
void gd_witness_ask(groupd_t *self, const char *what, int32_t term, const char *why);

#endif
