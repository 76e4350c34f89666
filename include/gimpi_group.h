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

#include <stddef.h>
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

/*  The endpoint in use ("ipc:///run/user/0/gimpi/groupd"), or the list given
 *  ("tcp://h1:p1,tcp://h2:p2": a primary groupd and its standbys) from the one in use on. */
GIMPI_EXPORT const char *gimpi_groups_endpoint(gimpi_groups_t *self);

/*  Why the object's calls fail (GIMPI_ESYSERR), in words, written into buf (size > 0):
 *  "groupd at <endpoint> is gone", "... unreachable" (never answered), "... refused this
 *  task" (the key or the user); "" while the connection works.  Returns buf. */
GIMPI_EXPORT const char *gimpi_groups_errmsg(gimpi_groups_t *self, char *buf, size_t size);

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

/*  Tells groupd, without waiting for its answer, that this task waits in a barrier of
 *  `count` on group on the data plane (0: no longer); gimpi-stat shows such barriers. */
GIMPI_EXPORT int gimpi_groups_barrier_note(gimpi_groups_t *self, const char *group, int count);

/*  Causal consistency (doc/groupd-protocol.md §6): the data plane stamps a task's messages
 *  with the highest groupd version the task has seen (gimpi_groups_seen), and gives the
 *  highest stamp that reached the task to the cache through this source.  A cached answer
 *  older than that stamp is not given: the entry is fetched anew from groupd first. */
typedef uint64_t (*gimpi_groups_stamp_fn)(void *arg);
GIMPI_EXPORT void gimpi_groups_set_stamp_source(gimpi_groups_t *self, gimpi_groups_stamp_fn fn,
                                                void *arg);
/*  The highest groupd version this task has seen: from its own requests' replies, the
 *  events its cache read, and stamps of messages that reached it. */
GIMPI_EXPORT uint64_t gimpi_groups_seen(gimpi_groups_t *self);
/*  Cached answers this object did not give because a message's stamp was newer. */
GIMPI_EXPORT uint64_t gimpi_groups_stale(gimpi_groups_t *self);

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
    uint64_t gen;               /* the groups cache's generation behind the answer, 0 when
                                   it did not come from the cache (gimpi_group_unchanged) */
} gimpi_group_snap_t;

/*  Fills snap from the membership cache when it is current, else with one SNAPSHOT round
 *  trip.  Returns the number of members, GIMPI_ENOGROUP, GIMPI_ENULLGROUP, GIMPI_ESYSERR. */
GIMPI_EXPORT
int gimpi_group_snapshot(gimpi_groups_t *self, const char *group, gimpi_group_snap_t *snap);

/*  The same without the tids (snap->tids stays NULL): what a caller that kept the view of
 *  snap->version needs to know that it still holds.  Costs no allocation when the cache is
 *  current. */
GIMPI_EXPORT
int gimpi_group_state(gimpi_groups_t *self, const char *group, gimpi_group_snap_t *snap);

/*  1 when gimpi_group_state would give again, from the cache and with nothing to look at
 *  first, the answer that carried generation gen: nothing in the cache has changed since,
 *  no arriving message carried a newer stamp, no leave waits for its reply and the sockets
 *  are not due to be looked at.  0: ask gimpi_group_state.  A clock reading and a few
 *  comparisons; what lets a collective keep using its view without naming the group. */
GIMPI_EXPORT
int gimpi_group_unchanged(gimpi_groups_t *self, uint64_t gen);

/*  The virtual machine (doc/groupd-protocol.md §3.2).  groupd keeps the VM's host table
 *  and relays requests from tasks to the VM's manager (gimpirun), the connection that
 *  first set the table.  None of these calls registers the object as a task, except
 *  gimpi_groups_taskinfo. */

/*  The host table as the manager last set it: *blob (malloc'ed, the caller frees; NULL on
 *  error) holds *len bytes.  Returns the number of hosts the manager gave (0 and an empty
 *  table when none was set), or GIMPI_ESYSERR, GIMPI_EOUTOFRES. */
GIMPI_EXPORT int gimpi_groups_hosts(gimpi_groups_t *self, void **blob, size_t *len);

/*  Sets the host table (nhosts hosts, opaque bytes, 0 <= nhosts <= len <= 1 MiB, else
 *  GIMPI_EBADPARAM; tables over groupd's --max-msg-size, 64 KiB by default, do not reach
 *  it).  The first object to set it becomes the VM's manager for as long as its
 *  connection lives; another one gets GIMPI_EEXISTS meanwhile.  0 or an error. */
GIMPI_EXPORT int gimpi_groups_hosts_set(gimpi_groups_t *self, int nhosts, const void *blob,
                                        size_t len);
/*  gimpi_groups_hosts_set with the launcher's token (GIMPI_GROUPS_TOKEN_LEN hex digits,
 *  printed by a groupd started with --launcher; NULL: none).  Such a groupd makes only a
 *  setter with its token the manager, and refuses others with GIMPI_EDENIED.  A table
 *  that is not one VM_HOSTS frame of nhosts valid rows is GIMPI_EBADPARAM (groupd(1)). */
GIMPI_EXPORT int gimpi_groups_hosts_set_token(gimpi_groups_t *self, int nhosts,
                                              const void *blob, size_t len, const char *token);

/*  One task of the virtual machine, as gimpi_groups_tasks lists it. */
typedef struct {
    int tid;
    int ptid;                   /* its parent (gimpi_groups_taskinfo), 0: none */
    int pid;                    /* its OS process */
    int flags;                  /* 0 */
    char host[256];             /* the host name it registered with */
    char name[256];             /* its program (gimpi_groups_taskinfo), "" when not told */
} gimpi_vm_task_t;

/*  Every task registered with groupd whose host name is `host` (NULL or "": every task),
 *  by tid: *out (malloc'ed, the caller frees; NULL on error) holds *n records.  Returns
 *  *n, or GIMPI_EBADPARAM (host over 255 bytes), GIMPI_ESYSERR, GIMPI_EOUTOFRES. */
GIMPI_EXPORT int gimpi_groups_tasks(gimpi_groups_t *self, const char *host,
                                    gimpi_vm_task_t **out, int *n);

/*  Tells groupd this task's parent (ptid >= 0, 0: none) and program name (cut to 255
 *  bytes), which gimpi_groups_tasks then lists.  Registers first.  0 or an error. */
GIMPI_EXPORT int gimpi_groups_taskinfo(gimpi_groups_t *self, int ptid, const char *name);

/*  Sends a request (at most 64 KiB) to the VM's manager and waits for its answer, at most
 *  timeout_ms (< 0: as long as groupd lives).  Returns the manager's status, with its
 *  answer in *rep (malloc'ed, *replen bytes; only when the status is >= 0); or
 *  GIMPI_ENOHOST when no manager is connected, GIMPI_EOUTOFRES when 16 requests of this
 *  object (or 1024 in all) are pending, GIMPI_ESYSERR when the manager went away, groupd
 *  is gone or the time is up (the object stays usable; a late answer is dropped). */
GIMPI_EXPORT int gimpi_groups_vmreq(gimpi_groups_t *self, const void *req, size_t len,
                                    void **rep, size_t *replen, int timeout_ms);

/*  The manager tells groupd that task tid ended (status: its exit status): it leaves its
 *  groups as if its connection had closed; a tid reserved and not yet registered can no
 *  longer register.  0, GIMPI_ENOTASK (no such task), GIMPI_EDENIED (not the manager). */
GIMPI_EXPORT int gimpi_groups_task_exit(gimpi_groups_t *self, int tid, int status);

/*  A spawner tells groupd that its child tid died before registering, with the token of
 *  the tid's block (text, gimpi_groups_reserve_token) as its authority: the tid is used
 *  up as by gimpi_groups_task_exit and its exit published once.  0; GIMPI_EEXISTS (it
 *  registered: its own end is published when its connection closes), GIMPI_ENOTASK
 *  (already gone), GIMPI_EDENIED (not the block's token), GIMPI_EBADPARAM. */
GIMPI_EXPORT int gimpi_groups_spawn_exit(gimpi_groups_t *self, int tid, const char *token);

/*  The manager's side, for a poll(2) loop.  gimpi_groups_fd: the request socket's
 *  notification fd (ZMQ_FD; connects first), to poll for POLLIN.  It is edge-triggered:
 *  when it fires, and after any other call on the same object, call
 *  gimpi_groups_mgr_next until it returns 0.  gimpi_groups_mgr_next never waits: it keeps
 *  one VMWAIT outstanding and returns 1 with the next request (its token, and its payload
 *  in *payload, malloc'ed, *len bytes), 0 when none has come yet, or an error
 *  (GIMPI_EDENIED: not the manager; GIMPI_ESYSERR: groupd is gone, which it notices on
 *  every call, so poll with a timeout).  gimpi_groups_mgr_reply answers the request of
 *  `token` with status and payload (at most 64 KiB; the payload reaches the requester
 *  only with a status >= 0): 0, or GIMPI_ENOTASK when the requester is gone. */
GIMPI_EXPORT int gimpi_groups_fd(gimpi_groups_t *self);
GIMPI_EXPORT int gimpi_groups_mgr_next(gimpi_groups_t *self, int *token, void **payload,
                                       size_t *len);
GIMPI_EXPORT int gimpi_groups_mgr_reply(gimpi_groups_t *self, int token, int status,
                                        const void *payload, size_t len);

/*  Asks groupd to exit (the console's halt; whoever can reach groupd may): it answers,
 *  then stops serving, and every task still registered sees it gone (GIMPI_ESYSERR).  The
 *  caller ends the tasks first.  0 (also when groupd's connection is seen ending before
 *  its answer), or GIMPI_ESYSERR when groupd is unreachable. */
GIMPI_EXPORT int gimpi_groups_halt(gimpi_groups_t *self);

/*  The message box (PVM 3.4's pvm_putinfo family; gimpi_mbox(3)): entries are packed
 *  bytes in an encoding (kept as given) under a class name (1..4096 bytes) and an index,
 *  kept by groupd for every task of the virtual machine and owned by the task that put
 *  them.  flags are pvm3.h's PvmMbox* bits.  Each registers first but gimpi_mbox_list.
 *  gimpi_mbox_put: req -1 (pvm_putinfo) or an index (PVM 3.3's pvm_insert); returns the
 *  index stored at, or GIMPI_EDENIED, GIMPI_EOUTOFRES (over GD's bounds: 64 KiB an entry
 *  by default), GIMPI_EBADPARAM.  gimpi_mbox_get: the index read, the entry's encoding
 *  and a malloc'ed copy of its bytes (*data, freed by the caller); with PvmMboxWaitForInfo
 *  it waits while nothing matches, as long as groupd lives; GIMPI_ENOTFOUND,
 *  GIMPI_EDENIED.  gimpi_mbox_del: the index deleted, GIMPI_ENOTFOUND, GIMPI_EDENIED.
 *  gimpi_mbox_list: the classes whose names match pattern (PVM's glob), as one malloc'ed
 *  block (*classes, freed with free()), and their number. */
typedef struct {
    char *name;
    int nentries;
    int *indices;
    int *owners;                /* 0: a persistent entry whose owner has ended */
    int *flags;
} gimpi_mbox_class_t;
GIMPI_EXPORT int gimpi_mbox_put(gimpi_groups_t *self, const char *name, int req, int flags,
                                int encoding, const void *data, size_t len);
GIMPI_EXPORT int gimpi_mbox_get(gimpi_groups_t *self, const char *name, int index, int flags,
                                int *encoding, void **data, size_t *len);
GIMPI_EXPORT int gimpi_mbox_del(gimpi_groups_t *self, const char *name, int index);
GIMPI_EXPORT int gimpi_mbox_list(gimpi_groups_t *self, const char *pattern,
                                 gimpi_mbox_class_t **classes, int *n);

#ifdef __cplusplus
}
#endif
#endif
