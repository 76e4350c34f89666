/*  run_witness.h — gimpirun as the witness of the job's groupds (run_witness.c): the
 *  arbitration between a primary and its standby that keeps a partitioned network from
 *  leaving two groupds serving one job.
 */
#ifndef GIMPI_RUN_WITNESS_H
#define GIMPI_RUN_WITNESS_H

#include "programs/run_state.h"
#include "programs/run_hosts.h"

#include <sys/types.h>

/*  A line a groupd of the job printed: 0 when it is not a witness question; else taken
 *  (the grant, if any, sent): 1, or 2 when the caller is to end the standby (the primary
 *  was granted to go on without it).  The sender: its task on another host (t), else its
 *  pid here. */
int run_witness_line(launcher_t *self, task_t *t, pid_t pid, const char *line);

#endif
