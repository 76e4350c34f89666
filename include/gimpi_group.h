/*  gimpi_group.h — the native group API of libgimpi: task ids and PVM-style dynamic
 *  process groups (join, leave, gettid, getinst, gsize, barrier, freeze) served by groupd.
 *
 *  A gimpi_groups_t is one task's connection to groupd and holds all of its state: the
 *  DEALER socket for requests, the SUB socket for membership events and the membership
 *  cache they feed.  Nothing happens at creation; the first call finds groupd (the
 *  endpoint given, else $GIMPI_GROUPD, else the per-user default), starts one if none
 *  runs on an ipc endpoint, and registers the task.  Calls return PVM's results and error
 *  codes (GIMPI_E*, the values of pvm3.h).  If groupd dies, every pending and later call
 *  returns GIMPI_ESYSERR within 2 seconds (at once when its connection ends; after 6 s of
 *  silence when a groupd that keeps its connection stops answering).  One object must be used by one thread at a time.
 *  After fork() the child must neither use nor destroy its parent's object (its sockets
 *  belong to the parent's ZeroMQ context); it creates its own and registers as a new task.
 *
 *  A leave of a group the task is in returns before groupd has answered (its reply comes
 *  with the next request's); gimpi_groups_flush waits for it, and every query, and every
 *  message a task sends on its data plane, does so first, so nobody hears from the task
 *  before groupd knows of the leave.  GIMPI_GROUPS_SYNC_LEAVE=1: every leave waits.
 *
 *  Consistency: a task's own join or leave shows in its own queries at once; after a
 *  barrier on a group completes, every member's queries see every change of that group's
 *  membership made before the barrier began.  gettid, getinst and gsize answer from the
 *  cache when it is current, otherwise by asking groupd.
 */
#ifndef GIMPI_GROUP_H
#define GIMPI_GROUP_H

#include "gimpi_export.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gimpi_groups_t gimpi_groups_t;

/*  New unconnected object.  endpoint: NULL for $GIMPI_GROUPD or the per-user default.
 *  zmq_context: a libzmq context to share (NULL: the object makes its own). */
GIMPI_EXPORT gimpi_groups_t *gimpi_groups_new(const char *endpoint, void *zmq_context);

/*  Unregisters (the task leaves every group), closes the sockets, frees, NULLs. */
GIMPI_EXPORT void gimpi_groups_destroy(gimpi_groups_t **self_p);

/*  The IMPI identity sent at registration (before the first call): host id and pid of the
 *  IMPI proc, and the host contact (address, port).  Defaults: 127.0.0.1, getpid(), 0. */
GIMPI_EXPORT
int gimpi_groups_set_identity(gimpi_groups_t *self, const uint8_t hostid[16], int64_t pid,
                              const uint8_t addr[16], int port);

/*  Largest block gimpi_groups_reserve hands out. */
#define GIMPI_GROUPS_MAX_RESERVE 1000000

/*  Reserves n fresh tids (1..GIMPI_GROUPS_MAX_RESERVE) in groupd: base+1 .. base+n.  Every
 *  caller with the same non-empty key gets the same base while groupd lives (a launcher's
 *  clients agree on their job's tids that way; GIMPI_EMISMATCH when asked with another n);
 *  key "" or NULL always gets a fresh block.  Connects (starting groupd if need be) but
 *  does not register.  Returns base (>= 0) or GIMPI_EBADPARAM, GIMPI_EOUTOFRES,
 *  GIMPI_ESYSERR. */
GIMPI_EXPORT int gimpi_groups_reserve(gimpi_groups_t *self, const char *key, int n);

/*  Length of a reserved block's token as text (hex digits). */
#define GIMPI_GROUPS_TOKEN_LEN 32

/*  gimpi_groups_reserve, and the block's token as text (GIMPI_GROUPS_TOKEN_LEN hex digits
 *  and a NUL; token may be NULL).  A task registering as one of the block's tids must
 *  present the token (gimpi_groups_set_tid_token): a spawner hands it to its children
 *  with their tids, through the environment or a pipe, never on a command line.  The
 *  object also keeps the token of the last block it reserved for its own registration. */
GIMPI_EXPORT int gimpi_groups_reserve_token(gimpi_groups_t *self, const char *key, int n,
                                            char token[GIMPI_GROUPS_TOKEN_LEN + 1]);

/*  Registers this task as `tid` (from a reserved block) instead of a fresh tid.  Before
 *  the first call that registers (GIMPI_EALREADY after); tid <= 0: GIMPI_EBADPARAM.  The
 *  registration presents the token of the last block this object reserved when tid lies
 *  in it.  The registration itself then fails with GIMPI_EBADPARAM when the tid is not a
 *  reserved, never-registered tid, GIMPI_EDUPHOST when another task holds it,
 *  GIMPI_EDENIED without its block's token. */
GIMPI_EXPORT int gimpi_groups_set_tid(gimpi_groups_t *self, int tid);

/*  gimpi_groups_set_tid with the token of the tid's block (text from
 *  gimpi_groups_reserve_token): GIMPI_EBADPARAM for a token that is not one. */
GIMPI_EXPORT int gimpi_groups_set_tid_token(gimpi_groups_t *self, int tid, const char *token);

/*  Makes an object that has not registered unusable: every later call returns
 *  GIMPI_ESYSERR (a task whose data-plane tids groupd did not hand out must not register
 *  under another tid).  No effect on a registered object. */
GIMPI_EXPORT void gimpi_groups_disable(gimpi_groups_t *self);

/*  The endpoint in use ("ipc:///run/user/0/gimpi/groupd"). */
GIMPI_EXPORT const char *gimpi_groups_endpoint(gimpi_groups_t *self);

/*  This task's tid (connects and registers on first use). */
GIMPI_EXPORT int gimpi_group_mytid(gimpi_groups_t *self);

/*  The group calls, with pvm_joingroup & co.'s results and errors. */
GIMPI_EXPORT int gimpi_group_join(gimpi_groups_t *self, const char *group);
GIMPI_EXPORT int gimpi_group_leave(gimpi_groups_t *self, const char *group);
GIMPI_EXPORT int gimpi_group_gettid(gimpi_groups_t *self, const char *group, int inst);
GIMPI_EXPORT int gimpi_group_getinst(gimpi_groups_t *self, const char *group, int tid);
GIMPI_EXPORT int gimpi_group_gsize(gimpi_groups_t *self, const char *group);
GIMPI_EXPORT int gimpi_group_barrier(gimpi_groups_t *self, const char *group, int count);
GIMPI_EXPORT int gimpi_group_freeze(gimpi_groups_t *self, const char *group, int size);

/*  Waits (bounded) until groupd has processed every leave this object sent: 0, or
 *  GIMPI_ESYSERR when groupd is gone (then every later call fails too).  Returns at once
 *  when nothing is outstanding. */
GIMPI_EXPORT int gimpi_groups_flush(gimpi_groups_t *self);

/*  What a task registered: its IMPI proc (host id + pid), its host contact and its OS
 *  process. */
typedef struct {
    uint8_t hostid[16];
    int64_t pid;                /* IMPI proc pid */
    uint8_t addr[16];
    int port;
    int ospid;
    char host[256];
} gimpi_task_info_t;

/*  Looks a tid up in groupd (one round trip): 0, GIMPI_ENOTASK when no such task is
 *  registered (or it is gone), GIMPI_ESYSERR. */
GIMPI_EXPORT int gimpi_group_lookup(gimpi_groups_t *self, int tid, gimpi_task_info_t *info);

/*  gimpi_group_lookup on an object that is only used to look tasks up: it connects but
 *  never registers (a second object, for a thread other than the task's own). */
GIMPI_EXPORT int gimpi_groups_lookup_only(gimpi_groups_t *self, int tid,
                                          gimpi_task_info_t *info);

/*  Counters for tests and benchmarks: queries answered from the cache, round trips. */
GIMPI_EXPORT void gimpi_groups_counters(gimpi_groups_t *self, uint64_t *local, uint64_t *remote);

/*  A group's membership at one moment (for the collectives, gimpi_coll.h). */
typedef struct {
    uint64_t version;           /* groupd's membership version */
    int ninst;                  /* instance slots 0..ninst-1 (the highest used + 1) */
    int *tids;                  /* tid per instance, 0 = free; malloc'ed, the caller frees */
    int frozen;                 /* the frozen size, 0 when not frozen */
    int dead;                   /* a frozen group that lost a member */
} gimpi_group_snap_t;

/*  Fills snap from the membership cache when it is current, else with one SNAPSHOT round
 *  trip.  Returns the number of members, GIMPI_ENOGROUP, GIMPI_ENULLGROUP, GIMPI_ESYSERR. */
GIMPI_EXPORT
int gimpi_group_snapshot(gimpi_groups_t *self, const char *group, gimpi_group_snap_t *snap);

#ifdef __cplusplus
}
#endif
#endif
