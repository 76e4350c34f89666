/*  run_trace.h — gimpirun -trace (run_trace.c): the job's trace directory, each host's
 *  clock offset measured over round trips to its agent, handed to that host's tasks, and
 *  the merge of the tasks' files into the JSON file when the job ends.
 */
#ifndef GIMPI_RUN_TRACE_H
#define GIMPI_RUN_TRACE_H

#include "programs/run_state.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct run_trace_t run_trace_t;

/*  -trace json: makes json.d (emptied of old task files) the directory every task records
 *  into, GIMPI_TRACE in our environment (the local tasks inherit it, the agents' tasks
 *  get it with our GIMPI_ settings), GIMPI_TRACE_OFFSET "0,0" for this host's tasks.
 *  NULL with the reason in err. */
run_trace_t *run_trace_new(const char *json, char *err, size_t errsize);
void run_trace_destroy(run_trace_t **self_p);

/*  Starts measuring the clock of every host that is up and not measured yet (its agent
 *  answers TIME samples); at startup and whenever a host comes up. */
void run_trace_hosts(launcher_t *self);

/*  Measures every host up now and waits (at most a few seconds) until each has its
 *  offset; a host that does not answer in time gets no offset (its tasks record with
 *  none, and the merge orders their messages).  0, or -1 when some host has none. */
int run_trace_sync(launcher_t *self);

/*  An agent's -trace frame: TIMED (a sample of its clock), TRACE_FILE (a piece of one of
 *  its tasks' files, written into the directory here), TRACE_DONE (all sent). */
void run_trace_frame(launcher_t *self, int host, const vmw_msg_t *m);

/*  The job's tasks have all ended: asks every other host that is up for its tasks' files
 *  (TRACE_GET; none are sent when the directory is shared), before the agents are told
 *  to quit.  Returns how many hosts have not answered yet (0: go on), bounded by a
 *  timer that calls the check_done event when it gives up. */
int run_trace_collect(launcher_t *self);

/*  Sets GIMPI_TRACE_OFFSET in env (NULL-terminated, with room for one more entry) for a
 *  task on host h: "offset,error" in ns, replacing any there; none when h has no
 *  measured offset yet. */
void run_trace_env(launcher_t *self, const host_t *h, char **env);

/*  The job ended: merges the directory into the JSON file and, when that worked, removes
 *  the task files and the directory.  0, or -1 (said on stderr, the files left). */
int run_trace_finish(launcher_t *self);

#endif
