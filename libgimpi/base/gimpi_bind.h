/*  gimpi_bind.h — a core of its own for each task of a job on this machine.
 *
 *  Tasks that share a node wait for each other by spinning on shared memory; that is only
 *  fast when the one awaited is running on another core, and the scheduler is free to put
 *  two tasks on one core and leave the other idle.  So a launcher that starts n tasks here
 *  gives each its own core, as Open MPI and Slurm do, when n is no more than the CPUs it
 *  may use itself and GIMPI_BIND is not "none".  Cores are claimed with a lock file per
 *  CPU in the private runtime directory ("cpu.N"), held by the task for its life (the
 *  kernel lets go of it when the task ends, however it ends), so a second job of the user
 *  on the machine takes the cores the first left free, or, when too few are free, runs
 *  unbound.  A bound task learns from GIMPI_BOUND ("cpu,lockfd,cpus": its core, the lock's
 *  descriptor, and how many CPUs the launcher had) that its peers have cores of their own
 *  (gimpi_bind_cpus), and hands its children the launcher's CPUs back
 *  (gimpi_bind_home): a spawned task is not pinned to its parent's core.
 */
#ifndef GIMPI_BIND_H
#define GIMPI_BIND_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#define GIMPI_ENV_BIND  "GIMPI_BIND"        /* "core" (the default) or "none" */
#define GIMPI_ENV_BOUND "GIMPI_BOUND"       /* set in a bound task: "cpu,lockfd,cpus" */

typedef struct gimpi_bind_t gimpi_bind_t;

/*  0 when GIMPI_BIND is unset, empty, "core" or "none"; else -1 with a message in err
 *  (a launcher refuses to start on it; gimpi_bind_new treats it as "none"). */
int gimpi_bind_check_env(char *err, size_t errsize);

/*  True when GIMPI_BIND asks for a core per task (unset, empty or "core"): what a launcher
 *  tells the agents that start its tasks on other hosts. */
bool gimpi_bind_wanted(void);

/*  Plans cores for n tasks to be started on this machine: claims n free CPUs of the
 *  caller's own set, or none (GIMPI_BIND=none, more tasks than CPUs, too few free, no
 *  runtime directory).  Never fails for want of cores: NULL only without memory. */
gimpi_bind_t *gimpi_bind_new(int n);

/*  Lets go of the claims the launcher still holds (the tasks keep theirs) and frees. */
void gimpi_bind_destroy(gimpi_bind_t **self_p);

/*  The CPU of task i, or -1 when the tasks run unbound. */
int gimpi_bind_cpu(const gimpi_bind_t *self, int i);

/*  In the forked child of task i, before exec: pins it to its core, keeps that core's
 *  lock open across exec and sets GIMPI_BOUND.  Does nothing when unbound.  0 or -1. */
int gimpi_bind_child(const gimpi_bind_t *self, int i);

/*  The CPUs the tasks of this machine share: the launcher's count in a bound task, else
 *  this process's own CPU set. */
int gimpi_bind_cpus(void);

/*  True in a task that has a core of its own (GIMPI_BOUND set and this process pinned to
 *  that one CPU). */
bool gimpi_bind_own_core(void);

/*  In a bound task: 0 and the launcher's CPUs in set, for its children (a spawned task is
 *  not pinned to its parent's core); -1 in an unbound task. */
int gimpi_bind_home(cpu_set_t *set);

/*  Once in a bound task, at its start: the core's lock becomes close-on-exec, so that the
 *  claim is the task's alone and ends with it, not with its children. */
void gimpi_bind_settle(void);

/*  Self-test: plans, claims and releases in a scratch directory; 0 when it passes. */
int gimpi_bind_selftest(void);

#endif
