/*  gimpi.h — the native API of libgimpi.
 *
 *  What a task links against when it does not use the PVM compatibility layer of
 *  <pvm3.h>: job start-up, point-to-point messaging by task id and the group operations.
 *  Functions return 0 or a positive value on success and a negative GIMPI_E* code on
 *  failure (the same numbers as PVM's error codes, so the two APIs agree).
 */
#ifndef GIMPI_H
#define GIMPI_H

#ifdef __cplusplus
extern "C" {
#endif

#define GIMPI_VERSION_MAJOR 0
#define GIMPI_VERSION_MINOR 1

/*  Error codes: the values of PVM 3.4's (pvm3.h), so both APIs speak the same numbers. */
enum {
    GIMPI_OK = 0,
    GIMPI_EBADPARAM = -2,       /* PvmBadParam */
    GIMPI_EMISMATCH = -3,       /* PvmMismatch */
    GIMPI_EOVERFLOW = -4,       /* PvmOverflow */
    GIMPI_ENODATA = -5,         /* PvmNoData */
    GIMPI_ENOHOST = -6,         /* PvmNoHost */
    GIMPI_ENOFILE = -7,         /* PvmNoFile */
    GIMPI_EDENIED = -8,         /* PvmDenied */
    GIMPI_ENOMEM = -10,         /* PvmNoMem */
    GIMPI_EBADMSG = -12,        /* PvmBadMsg */
    GIMPI_ESYSERR = -14,        /* PvmSysErr: daemon or peer unreachable */
    GIMPI_ENOBUF = -15,         /* PvmNoBuf */
    GIMPI_ENOSUCHBUF = -16,     /* PvmNoSuchBuf */
    GIMPI_ENULLGROUP = -17,     /* PvmNullGroup */
    GIMPI_EDUPGROUP = -18,      /* PvmDupGroup */
    GIMPI_ENOGROUP = -19,       /* PvmNoGroup */
    GIMPI_ENOTINGROUP = -20,    /* PvmNotInGroup */
    GIMPI_ENOINST = -21,        /* PvmNoInst */
    GIMPI_EHOSTFAIL = -22,      /* PvmHostFail */
    GIMPI_ENOPARENT = -23,      /* PvmNoParent */
    GIMPI_ENOTIMPL = -24,       /* PvmNotImpl */
    GIMPI_EDSYSERR = -25,       /* PvmDSysErr */
    GIMPI_EBADVERSION = -26,    /* PvmBadVersion */
    GIMPI_EOUTOFRES = -27,      /* PvmOutOfRes */
    GIMPI_EDUPHOST = -28,       /* PvmDupHost */
    GIMPI_ECANTSTART = -29,     /* PvmCantStart */
    GIMPI_EALREADY = -30,       /* PvmAlready */
    GIMPI_ENOTASK = -31,        /* PvmNoTask */
    GIMPI_ENOTFOUND = -32,      /* PvmNotFound */
    GIMPI_EEXISTS = -33,        /* PvmExists */
    GIMPI_EHOSTRNMSTR = -34,    /* PvmHostrNMstr */
    GIMPI_EPARENTNOTSET = -35,  /* PvmParentNotSet */
    GIMPI_EIPLOOPBACK = -36,    /* PvmIPLoopback */
};

/*  Version string of the library ("0.1.0"). */
const char *gimpi_version(void);

/*  Text for an error code: PVM 3.4.6's pvm_perror wording ("No such group"; "Error 9" for
 *  the unused codes between 0 and -36, "Unknown Error" outside that range). */
const char *gimpi_strerror(int code);

#ifdef __cplusplus
}
#endif

#include "gimpi_group.h"
#endif

#include "gimpi_msg.h"
#include "gimpi_coll.h"

#ifndef GIMPI_TASK_API
#define GIMPI_TASK_API
#ifdef __cplusplus
extern "C" {
#endif

/*  A task's membership in its job: the startup tables it was handed and its data plane. */
typedef struct gimpi_t gimpi_t;

/*  Joins the job this process was started in — by gimpirun, or alone from the shell (a
 *  one-task job) — and meets every other task (bounded by GIMPI_CONNECT_TIMEOUT seconds,
 *  default 60).  Returns NULL with a message in err. */
gimpi_t *gimpi_init(char *err, size_t errsize);

/*  Leaves the job: IMPI's world barrier, PK_FINI to every other task, then frees
 *  everything and nulls the pointer.  Returns 0 or the error of the barrier or shutdown
 *  (a task that died: GIMPI_ESYSERR). */
int gimpi_finalize(gimpi_t **self_p);

/*  Frees the task's state at once, without the barrier (for error paths). */
void gimpi_abort(gimpi_t **self_p);

/*  The task's data plane (owned by the task object). */
gimpi_msg_t *gimpi_msg(gimpi_t *self);

/*  The task's connection to groupd (owned by the task object), registered under the data
 *  plane's tid: gimpi_group_mytid(gimpi_groups(t)) == gimpi_msg_mytid(gimpi_msg(t)).  When
 *  groupd was unavailable at gimpi_init its calls return GIMPI_ESYSERR. */
gimpi_groups_t *gimpi_groups(gimpi_t *self);

/*  The task's group-operation state (owned by the task object), for gimpi_coll_group_*. */
gimpi_coll_t *gimpi_coll(gimpi_t *self);

/*  The group operations of the task on a group's members now (gimpi_coll(3)): PVM's
 *  pvm_barrier, pvm_bcast (an ordinary message on GIMPI_CID_P2P), pvm_reduce (op a
 *  gimpi_op_t when fn is NULL), pvm_gather and pvm_scatter. */
int gimpi_barrier(gimpi_t *self, const char *group, int count);
int gimpi_bcast(gimpi_t *self, const char *group, int tag, const void *buf, size_t len);
int gimpi_reduce(gimpi_t *self, const char *group, int op, gimpi_reduce_fn fn, void *data,
                 int count, int datatype, int tag, int root);
int gimpi_gather(gimpi_t *self, const char *group, void *result, const void *data, int count,
                 int datatype, int tag, int root);
int gimpi_scatter(gimpi_t *self, const char *group, void *result, const void *data, int count,
                  int datatype, int tag, int root);

/*  World rank and number of tasks of the job. */
int gimpi_rank(gimpi_t *self);
int gimpi_size(gimpi_t *self);

/*  Spawned tasks (doc/spawn.md).  The spawner's tid, or GIMPI_ENOPARENT for a task that
 *  no gimpi_spawn started. */
int gimpi_parent(gimpi_t *self);
/*  The tids started by the same gimpi_spawn call as this task (*tids valid while the
 *  task object lives); 0 (and NULL) for a task that was not spawned. */
int gimpi_siblings(gimpi_t *self, const int **tids);
/*  The groupd endpoint the task's groups object uses. */
const char *gimpi_groupd_endpoint(gimpi_t *self);

/*  gimpi_spawn flags. */
enum {
    GIMPI_SPAWN_TAG = 1,        /* prefix the children's output lines with "[t<hex tid>] " */
};

/*  Starts n copies of program `file` with arguments argv (NULL-terminated, without the
 *  program name; NULL for none) as new tasks: their tids are reserved from groupd at
 *  once, they become dynamic hosts that call this task, and they write to this task's
 *  stdout and stderr (tagged with GIMPI_SPAWN_TAG).  A bare file name is searched on
 *  $GIMPI_PATH (colon-separated), then beside this program, then on $PATH; the child's
 *  argv[0] is the full path.  tids[i] gets the i-th task's tid or an error (GIMPI_ENOFILE:
 *  no such executable file; GIMPI_EOUTOFRES: no process).  Returns how many started, or
 *  an error for all (GIMPI_EBADPARAM, GIMPI_ESYSERR: groupd unreachable). */
int gimpi_spawn(gimpi_t *self, const char *file, char *const argv[], int flags, int n,
                int *tids);

#ifdef __cplusplus
}
#endif
#endif
