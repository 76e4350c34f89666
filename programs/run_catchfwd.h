/*  run_catchfwd.h — gimpirun's forwarding of caught output to a task on this machine that
 *  catches it (run_catchfwd.c): the console's `spawn ->` onto another host.  A task that
 *  catches its children's output (gimpi_catchout) and wants the lines of those started
 *  by gimpirun too hands gimpirun the writing end of its collector over the job's socket
 *  (run_jobfile_offer_catch); gimpirun then sends a caught task's BEGIN, lines and EOF
 *  there as records (task/gimpi_catch.h), instead of printing them on its own stdout.
 */
#ifndef GIMPI_RUN_CATCHFWD_H
#define GIMPI_RUN_CATCHFWD_H

#include "server/gimpi_loop.h"

#include <stddef.h>
#include <stdint.h>

typedef struct run_catchfwd_t run_catchfwd_t;

/*  Listens on the job's socket (run_jobfile.h) in loop.  NULL when it cannot (then caught
 *  output stays on gimpirun's stdout). */
run_catchfwd_t *run_catchfwd_new(gimpi_loop_t *loop);

/*  Stops listening, removes the socket, closes every collector; nulls the pointer. */
void run_catchfwd_destroy(run_catchfwd_t **self_p);

/*  Sends one record of task tid (kind: CATCH_BEGIN, CATCH_DATA with len bytes of data,
 *  CATCH_EOF) to the collector that task ptid handed over.  0 when sent; -1 when there is
 *  none (or it is gone: it is forgotten), and the caller prints the line itself. */
int run_catchfwd_send(run_catchfwd_t *self, int ptid, int tid, int kind, const char *data,
                      size_t len);

#endif
