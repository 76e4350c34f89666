/*  run_tasks.h — the launcher's tasks (run_tasks.c): records, starting them on this
 *  machine, their output and ends, the grace period and the job's end.
 */
#ifndef GIMPI_RUN_TASKS_H
#define GIMPI_RUN_TASKS_H

#include "programs/run_state.h"

typedef struct run_life_t run_life_t;

run_life_t *run_life_new(void);
void run_life_destroy(run_life_t **self_p);
task_t *run_task_new(launcher_t *self, int host, char **argv, bool spawned);
void run_task_output(launcher_t *self, task_t *t, int which, const char *line, size_t len);
void run_task_catch_mark(task_t *t, const char *what);
void run_task_ended(launcher_t *self, task_t *t, int status);
int run_tasks_start_local(launcher_t *self, task_t *t, int tables_fd);
int run_tasks_start_spawned(launcher_t *self, task_t *t, char **env, const char *wd, int *code);
void run_tasks_signal_all(launcher_t *self, int sig);
void run_tasks_check_done(launcher_t *self);
void run_tasks_reap(launcher_t *self);
void run_tasks_watch_signals(launcher_t *self);
void run_tasks_free(launcher_t *self);

#endif
