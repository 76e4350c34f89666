/*  console_out.h — the console's `spawn ->` output in PVM's console format
 *  (console_out.c): jobs "[N]", lines "[N:t<tid>] text", "[N:t<tid>] EOF", "[N] finished".
 */
#ifndef GIMPI_CONSOLE_OUT_H
#define GIMPI_CONSOLE_OUT_H

#include <stdbool.h>
#include <stdio.h>

typedef struct console_out_t console_out_t;

/*  A rewriter of caught lines that writes to `to`.  NULL when out of memory. */
console_out_t *console_out_new(FILE *to);

/*  Closes the stream and frees it; nulls the pointer.  Nothing may write to the stream
 *  any more (catching is off). */
void console_out_destroy(console_out_t **self_p);

/*  The stream to give gimpi_catchout. */
FILE *console_out_file(console_out_t *self);

/*  Numbers a new job (before its spawn): the tasks that begin from now on are its.  Its
 *  number (1, 2, ...), or 0 when out of memory. */
int console_out_job_new(console_out_t *self);

/*  Job's spawn returned with tids[n] (a slot's error <= 0): the held lines are written
 *  and "[N] finished" comes once every started task has ended. */
void console_out_job_started(console_out_t *self, int job, const int *tids, int n);

/*  True once caught task tid's output has ended (it has exited). */
bool console_out_ended(console_out_t *self, int tid);

#endif
