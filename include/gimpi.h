/*  gimpi.h — the native API of libgimpi.
 *
 *  What a task links against when it does not use the PVM compatibility layer of
 *  <pvm3.h>: job start-up, point-to-point messaging by task id and the group operations.
 *  Functions return 0 or a positive value on success and a negative GIMPI_E* code on
 *  failure (the same numbers as PVM's error codes, so the two APIs agree).  It includes
 *  the headers of its parts: gimpi_errors.h (the codes), gimpi_ops.h (datatypes and
 *  reduction operators), gimpi_msg.h, gimpi_group.h and gimpi_coll.h; the collectives over
 *  the whole IMPI job are in gimpi_world.h.
 */
#ifndef GIMPI_H
#define GIMPI_H

#include "gimpi_export.h"
#include "gimpi_errors.h"
#include "gimpi_ops.h"
#include "gimpi_group.h"
#include "gimpi_msg.h"
#include "gimpi_coll.h"

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GIMPI_VERSION_MAJOR 0
#define GIMPI_VERSION_MINOR 1

/*  Version string of the library ("0.1.0"). */
GIMPI_EXPORT const char *gimpi_version(void);

/*  A task's membership in its job: the startup tables it was handed and its data plane. */
typedef struct gimpi_t gimpi_t;

/*  Joins the job this process was started in — by gimpirun, or alone from the shell (a
 *  one-task job) — and meets every other task (bounded by GIMPI_CONNECT_TIMEOUT seconds,
 *  default 60).  Returns NULL with a message in err. */
GIMPI_EXPORT gimpi_t *gimpi_init(char *err, size_t errsize);

/*  Leaves the job: IMPI's world barrier, PK_FINI to every other task, then frees
 *  everything and nulls the pointer.  Returns 0 or the error of the barrier or shutdown
 *  (a task that died: GIMPI_ESYSERR). */
GIMPI_EXPORT int gimpi_finalize(gimpi_t **self_p);

/*  Frees the task's state at once, without the barrier (for error paths). */
GIMPI_EXPORT void gimpi_abort(gimpi_t **self_p);

/*  The task's data plane (owned by the task object). */
GIMPI_EXPORT gimpi_msg_t *gimpi_msg(gimpi_t *self);

/*  The task's connection to groupd (owned by the task object), registered under the data
 *  plane's tid: gimpi_group_mytid(gimpi_groups(t)) == gimpi_msg_mytid(gimpi_msg(t)).  When
 *  groupd was unavailable at gimpi_init its calls return GIMPI_ESYSERR. */
GIMPI_EXPORT gimpi_groups_t *gimpi_groups(gimpi_t *self);

/*  The task's group-operation state (owned by the task object), for gimpi_coll_group_*. */
GIMPI_EXPORT gimpi_coll_t *gimpi_coll(gimpi_t *self);

/*  The group operations of the task on a group's members now (gimpi_coll(3)): PVM's
 *  pvm_barrier, pvm_bcast (an ordinary message on GIMPI_CID_P2P), pvm_reduce (op a
 *  gimpi_op_t when fn is NULL), pvm_gather and pvm_scatter. */
GIMPI_EXPORT int gimpi_barrier(gimpi_t *self, const char *group, int count);
GIMPI_EXPORT
int gimpi_bcast(gimpi_t *self, const char *group, int tag, const void *buf, size_t len);
GIMPI_EXPORT
int gimpi_reduce(gimpi_t *self, const char *group, int op, gimpi_reduce_fn fn, void *data,
                 int count, int datatype, int tag, int root);
GIMPI_EXPORT
int gimpi_gather(gimpi_t *self, const char *group, void *result, const void *data, int count,
                 int datatype, int tag, int root);
GIMPI_EXPORT
int gimpi_scatter(gimpi_t *self, const char *group, void *result, const void *data, int count,
                  int datatype, int tag, int root);

/*  World rank and number of tasks of the job. */
GIMPI_EXPORT int gimpi_rank(gimpi_t *self);
GIMPI_EXPORT int gimpi_size(gimpi_t *self);

/*  Spawned tasks (doc/spawn.md).  The spawner's tid, or GIMPI_ENOPARENT for a task that
 *  no gimpi_spawn started. */
GIMPI_EXPORT int gimpi_parent(gimpi_t *self);
/*  The tids started by the same gimpi_spawn call as this task (*tids valid while the
 *  task object lives); 0 (and NULL) for a task that was not spawned. */
GIMPI_EXPORT int gimpi_siblings(gimpi_t *self, const int **tids);
/*  The groupd endpoint the task's groups object uses. */
GIMPI_EXPORT const char *gimpi_groupd_endpoint(gimpi_t *self);

/*  gimpi_spawn flags. */
enum {
    GIMPI_SPAWN_TAG = 1,        /* prefix the children's output lines with "[t<hex tid>] " */
    GIMPI_SPAWN_HOST = 2,       /* gimpi_spawn_on: where names a host of the virtual machine */
    GIMPI_SPAWN_ARCH = 4,       /* gimpi_spawn_on: where names an architecture */
    GIMPI_SPAWN_NOTHOST = 8,    /* gimpi_spawn_on: any host but the one where names */
    GIMPI_SPAWN_QUIET = 16,     /* a bare name found nowhere: no line on stderr */
};

/*  Starts n copies of program `file` with arguments argv (NULL-terminated, without the
 *  program name; NULL for none) as new tasks: their tids are reserved from groupd at
 *  once, they become dynamic hosts that call this task, and they write to this task's
 *  stdout and stderr (tagged with GIMPI_SPAWN_TAG).  A bare file name is searched on
 *  $GIMPI_PATH (colon-separated), then beside this program, then in
 *  $HOME/pvm3/bin/LINUX64, never on $PATH (as PVM); found nowhere, a line on stderr
 *  names the places looked (not with GIMPI_SPAWN_QUIET); the child's argv[0] is the full
 *  path.  tids[i] gets the i-th task's tid or an error (GIMPI_ENOFILE: no such executable
 *  file; GIMPI_EOUTOFRES: no process).  Returns how many started, or
 *  an error for all (GIMPI_EBADPARAM, GIMPI_ESYSERR: groupd unreachable). */
GIMPI_EXPORT
int gimpi_spawn(gimpi_t *self, const char *file, char *const argv[], int flags, int n,
                int *tids);

/*  Without waiting, tells groupd about each task this one spawned on its own host that has
 *  died before it registered (before its first PVM call): its exit is published then, as
 *  for any task that ends, and PvmTaskExit notices of it go out.  pvm_notify's waits call
 *  it; so does every spawn.  Returns how many such deaths were told. */
GIMPI_EXPORT int gimpi_spawn_reap(gimpi_t *self);

/*  Children's output caught by this task (doc/spawn.md, "Catching output"; PVM's
 *  pvm_catchout).  With `to` set, tasks spawned from now on (on this host) write their
 *  stdout and stderr into one pipe that a copier process sends here, and a thread of this
 *  task writes it to `to` in PVM's format: "[t<hex tid>] BEGIN" when the task starts,
 *  "[t<hex tid>] <line>" for every line (an unfinished last line gets its newline),
 *  "[t<hex tid>] EOF" when its output ends; with GIMPI_CATCHOUT_NOTIDS the lines alone.
 *  Their children, and theirs, are caught by this task too.  Tasks started on other hosts
 *  of a virtual machine have their lines written by gimpirun, in the same format.
 *  `to` NULL turns catching off: lines of tasks still running are dropped and later
 *  spawns write to this task's stdout and stderr.  0 or GIMPI_EOUTOFRES. */
enum { GIMPI_CATCHOUT_NOTIDS = 1 };
GIMPI_EXPORT int gimpi_catchout(gimpi_t *self, FILE *to, int flags);

/*  Waits up to timeout_ms (-1: no limit, 0: just counts) until the output of every task
 *  caught by this task has ended; returns how many are still open. */
GIMPI_EXPORT int gimpi_catchout_wait(gimpi_t *self, int timeout_ms);

/*  The virtual machine (gimpi_vm(3), doc/multihost.md): the hosts of the job that
 *  gimpirun -H, -hostfile or a Slurm allocation made, served by gimpirun through groupd.
 *  A task outside any virtual machine sees one host, its own. */
typedef struct {
    int dtid;                   /* the host's id (PVM's pvmd tid) */
    char name[256];             /* as in the host set */
    char arch[32];              /* PVM's architecture name, e.g. LINUX64 */
    int speed;                  /* the hostfile's sp= (default 1000) */
    int slots;                  /* tasks placed there per round */
    int ncpu;                   /* processors online there */
} gimpi_host_t;

/*  The hosts: their count with *hosts a malloc'd array (free it), or an error. */
GIMPI_EXPORT int gimpi_hosts(gimpi_t *self, gimpi_host_t **hosts);

/*  This task's host name in the virtual machine. */
GIMPI_EXPORT const char *gimpi_hostname(gimpi_t *self);

/*  gimpi_spawn with a place: flags GIMPI_SPAWN_HOST (where names a host),
 *  GIMPI_SPAWN_ARCH (where names an architecture), GIMPI_SPAWN_NOTHOST (any host but
 *  where: PVM's PvmHostCompl) or none of them (round-robin over the
 *  virtual machine's hosts in slot order; this host alone outside one).  tids[i] as
 *  gimpi_spawn's, or GIMPI_ENOHOST (no such host), GIMPI_EHOSTFAIL (the host failed while
 *  starting it). */
GIMPI_EXPORT
int gimpi_spawn_on(gimpi_t *self, const char *file, char *const argv[], int flags,
                   const char *where, int n, int *tids);

/*  Adds hosts (hostfile lines: "name opts") to the virtual machine: infos[i] is the new
 *  host's dtid or an error (GIMPI_EDUPHOST, GIMPI_ECANTSTART, GIMPI_EBADPARAM).  Returns
 *  how many were added, or GIMPI_ENOHOST when no virtual machine serves this task. */
GIMPI_EXPORT int gimpi_addhosts(gimpi_t *self, char *const hosts[], int n, int *infos);

/*  Removes hosts: their tasks end.  infos[i] is 0 or an error (GIMPI_ENOHOST,
 *  GIMPI_EBADPARAM for the manager's own host).  Returns how many were removed. */
GIMPI_EXPORT int gimpi_delhosts(gimpi_t *self, char *const hosts[], int n, int *infos);

/*  Sends signal sig to task tid wherever it runs (here directly; on another host through
 *  the manager).  0, GIMPI_ENOTASK, GIMPI_ENOHOST or GIMPI_ESYSERR. */
GIMPI_EXPORT int gimpi_kill(gimpi_t *self, int tid, int sig);

#ifdef __cplusplus
}
#endif
#endif
