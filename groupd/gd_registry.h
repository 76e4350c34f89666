/*  gd_registry.h — groupd's state and rules: the task registry (tids), the groups
 *  (instances, sizes), freeze, and barrier arbitration, with PVM's semantics and the fixes
 *  listed in doc/pvm-groups.md §9.  The registry knows no sockets: replies that
 *  complete later (barrier, freeze) and published events leave through the sink given at
 *  creation, so the rules can be tested and fuzzed alone.  Every change of a group bumps
 *  its version (taken from one daemon-wide counter, so versions never repeat even when a
 *  group is deleted and created again).
 */
#ifndef GIMPI_GD_REGISTRY_H
#define GIMPI_GD_REGISTRY_H

#include "groups/gd_proto.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct gd_registry_t gd_registry_t;

/*  Who is waiting for a deferred reply: the routing id of its connection and its request. */
typedef struct {
    uint8_t key[256];
    size_t keylen;
    uint32_t reqid;
    uint8_t cmd;
} gd_waiter_t;

/*  Where deferred replies and events go. */
typedef struct {
    void (*reply)(void *arg, const gd_waiter_t *w, int32_t status, uint64_t version);
    void (*event)(void *arg, const char *group, uint8_t kind, uint64_t prev, uint64_t version,
                  int32_t inst, int32_t tid, int32_t extra);
    void *arg;
} gd_sink_t;

/*  What a task tells about itself when it registers. */
typedef struct {
    uint8_t proc[24];           /* IMPI_Proc: host id + pid */
    uint8_t addr[16];           /* host contact */
    int32_t port;
    int32_t ospid;
    char host[GD_MAX_TEXT + 1];
} gd_taskinfo_t;

/*  Deferred: the request was accepted and its reply goes through the sink later. */
#define GD_PENDING 1

/*  Memory bounds and quotas, named defaults (groupd's options change them).  Whatever is
 *  over a bound is refused with the PVM code given, and groupd keeps serving; together
 *  they bound the registry to some hundreds of MB however it is driven. */
enum {
    /* registered tasks (GIMPI_ENOMEM beyond): a task costs about 700 bytes, so 65536
       cost about 45 MB; far above any job on one groupd so far (groupd --max-tasks) */
    GD_REG_MAX_TASKS = 65536,
    /* groups at once (GIMPI_ENOMEM beyond): a name is at most 4096 bytes, so the names
       of 16384 groups cost at most 64 MB (groupd --max-groups) */
    GD_REG_MAX_GROUPS = 16384,
    /* groups one task is in at once (GIMPI_ENOMEM beyond): bounds the instance slots to
       tasks x 1024 (PVM programs use a handful) */
    GD_REG_MAX_GROUPS_PER_TASK = 1024,
    /* reserved blocks with tids not yet registered (GIMPI_EOUTOFRES beyond) */
    GD_REG_MAX_BLOCKS = 65536,
    /* tids one connection may hold reserved and not yet registered (GIMPI_EOUTOFRES
       beyond): a job of up to 65536 tasks, or a spawner whose children have not yet
       registered; 2,000 RESERVEs of a million tids from one client fail after the first
       65536 while other clients go on getting tids (groupd --max-reserve) */
    GD_REG_RESERVE_QUOTA = 65536,
    GD_TOKEN_HEXLEN = 2 * GD_TOKEN_SIZE,
};

/*  The bounds in force (gd_registry_set_limits; 0 in a field: its default). */
typedef struct {
    int max_tasks, max_groups, max_groups_per_task, max_blocks, reserve_quota;
} gd_registry_limits_t;

gd_registry_t *gd_registry_new(const gd_sink_t *sink);
void gd_registry_destroy(gd_registry_t **self_p);
/*  Sets the bounds (fields 0: defaults). */
void gd_registry_set_limits(gd_registry_t *self, const gd_registry_limits_t *limits);

/*  Registers the task behind routing id `key` (again: the same tid).  Returns the tid or
 *  a negative GIMPI_E* code. */
int32_t gd_registry_register(gd_registry_t *self, const uint8_t *key, size_t keylen,
                             const gd_taskinfo_t *info);
/*  RESERVE: n fresh tids (1..GIMPI_GROUPS_MAX_RESERVE, gimpi_group.h), base+1 .. base+n,
 *  from the same counter as REGISTER's, so never reused.  A non-empty key gets the same
 *  base (and token) every time it is asked with the same n while its block has tids to
 *  hand out (GIMPI_EMISMATCH with another n); "" (keylen 0) always gets a fresh block.
 *  The block's token (random, GD_TOKEN_SIZE bytes) goes to token: REGISTER_TID of one of
 *  its tids must present it.  owner (0: none, no quota) is the connection that asks: it
 *  may hold at most reserve_quota tids reserved and not yet registered.  Returns base or
 *  GIMPI_EBADPARAM / GIMPI_EOUTOFRES / GIMPI_ENOMEM. */
int32_t gd_registry_reserve(gd_registry_t *self, const char *key, size_t keylen, int32_t n,
                            uint64_t owner, uint8_t token[GD_TOKEN_SIZE]);
/*  REGISTER_TID: registers the task behind a routing id as `tid`, which must lie in a
 *  reserved block and never have registered, with the block's token: GIMPI_EDUPHOST when
 *  another task holds it now, GIMPI_EBADPARAM when it is not a reserved unused tid,
 *  GIMPI_EDENIED when the token is not the block's, GIMPI_EEXISTS when this connection
 *  registered as another tid.  Returns tid. */
int32_t gd_registry_register_tid(gd_registry_t *self, const uint8_t *key, size_t keylen,
                                 const gd_taskinfo_t *info, int32_t tid,
                                 const uint8_t token[GD_TOKEN_SIZE]);
/*  The next block RESERVE makes gets this token instead of a random one (replaying a
 *  journal: the same blocks with the same tokens). */
void gd_registry_force_token(gd_registry_t *self, const uint8_t token[GD_TOKEN_SIZE]);
/*  A connection that reserved is gone: its quota is forgotten (its blocks stay). */
void gd_registry_owner_gone(gd_registry_t *self, uint64_t owner);
/*  Reserved blocks whose tids have not all registered yet. */
size_t gd_registry_nblocks(gd_registry_t *self);

/*  The routing id task tid registered from (*key valid while it is registered); 0 or
 *  GIMPI_ENOTASK. */
int gd_registry_key_of(gd_registry_t *self, int32_t tid, const uint8_t **key, size_t *keylen);
/*  Calls fn with the routing id and tid of every registered task. */
void gd_registry_foreach_task(gd_registry_t *self,
                              void (*fn)(void *arg, const uint8_t *key, size_t keylen,
                                         int32_t tid), void *arg);
/*  Tid of the task behind a routing id, or 0. */
int32_t gd_registry_tid_of(gd_registry_t *self, const uint8_t *key, size_t keylen);
/*  The task is gone (unregistered, exited, silent): it leaves every group (EV_EXIT when
 *  `exited`, else EV_LEAVE) and is forgotten; arrivals it made at barriers still count. */
int gd_registry_remove(gd_registry_t *self, int32_t tid, bool exited);
size_t gd_registry_ntasks(gd_registry_t *self);
size_t gd_registry_ngroups(gd_registry_t *self);

/*  What a registered task told about itself; 0, or GIMPI_ENOTASK for an unknown tid. */
int gd_registry_lookup(gd_registry_t *self, int32_t tid, gd_taskinfo_t *info);

/*  The group calls.  Each returns its PVM result (instance, 0, tid, size) or a negative
 *  GIMPI_E* code, and stores the group's version after the call (or the daemon-wide
 *  counter when the group does not exist) in *version.  barrier and freeze may return
 *  GD_PENDING: their reply goes to `w` through the sink when the episode completes. */
int gd_registry_join(gd_registry_t *self, int32_t tid, const char *group, uint64_t *version);
int gd_registry_leave(gd_registry_t *self, int32_t tid, const char *group, uint64_t *version);
int gd_registry_gettid(gd_registry_t *self, const char *group, int32_t inst, uint64_t *version);
int gd_registry_getinst(gd_registry_t *self, const char *group, int32_t tid, uint64_t *version);
int gd_registry_gsize(gd_registry_t *self, const char *group, uint64_t *version);
int gd_registry_barrier(gd_registry_t *self, int32_t tid, const char *group, int32_t count,
                        const gd_waiter_t *w, uint64_t *version);
int gd_registry_freeze(gd_registry_t *self, int32_t tid, const char *group, int32_t size,
                       const gd_waiter_t *w, uint64_t *version);

/*  Snapshot for a cache: returns size (or an error); *blob (malloc'ed, *len bytes) holds
 *  Int4 frozen, Int4 dead, then (Int4 inst, Int4 tid) per member. */
int gd_registry_snapshot(gd_registry_t *self, const char *group, uint64_t *version,
                         uint8_t **blob, size_t *len);

/*  STAT records (gd_groupstat_encode) for one group or, with "", every group, sorted by
 *  name.  Returns the number of records (malloc'ed array of malloc'ed buffers) or an error. */
int gd_registry_stat(gd_registry_t *self, const char *group, uint8_t ***recs, size_t **lens);

/*  TASK_EXIT: the task ended, as the VM's manager says.  A registered task is removed as
 *  when its connection ends (EV_EXIT in its groups; LOOKUP then says PvmNoTask); a tid
 *  reserved and not registered yet is used up, so that LOOKUP says PvmNoTask at once
 *  instead of PvmNotFound and REGISTER_TID of it fails.  0, or GIMPI_ENOTASK. */
int gd_registry_task_exit(gd_registry_t *self, int32_t tid);
/*  SPAWN_EXIT: a tid reserved and never registered died before registering, as its
 *  spawner, who holds its block's token, says: it is used up as by TASK_EXIT.  0 (the
 *  caller publishes its exit), GIMPI_EEXISTS (registered: its connection tells its end),
 *  GIMPI_ENOTASK (not a reserved, unused tid: already gone), GIMPI_EDENIED (not the
 *  block's token). */
int gd_registry_spawn_exit(gd_registry_t *self, int32_t tid, const uint8_t *token);
/*  BARRIER_NOTE: tid, a member of group, waits in a barrier of `count` on the data plane
 *  (count > 0) or no longer does (0); shown by STAT.  0, GIMPI_ENOGROUP, GIMPI_ENOTINGROUP,
 *  GIMPI_EBADPARAM (count < 0) or GIMPI_ENOMEM.  Leaving the group forgets it. */
int gd_registry_barrier_note(gd_registry_t *self, int32_t tid, const char *group, int32_t count);
/*  TASKINFO: parent tid (>= 0, 0: none; else GIMPI_EBADPARAM) and program name (cut to
 *  GD_MAX_TEXT bytes) of a registered task.  0 or GIMPI_ENOTASK. */
int gd_registry_taskinfo(gd_registry_t *self, int32_t tid, int32_t ptid, const char *name,
                         size_t namelen);
/*  TASKS: the records (gd_tasks_encode, by tid) of every registered task whose host text
 *  is `host` ("" or NULL: every task) into *blob (malloc'ed, *len bytes).  Returns the
 *  number of records, GIMPI_ENOMEM, or GIMPI_EOUTOFRES when over GD_MAX_BLOB. */
int gd_registry_tasks(gd_registry_t *self, const char *host, uint8_t **blob, size_t *len);

/*  The state for the journal's compaction (gd_registry_state.c): the counters, every
 *  registered task, every group (members by instance, 0: a free one), every reserved
 *  block (the bitmap of its tids used so far, n / 8 + 1 bytes).  Episodes in progress are
 *  not written: their members send their requests again after a restart. */
typedef struct {
    void (*counters)(void *arg, uint64_t seq, int32_t next_tid);
    void (*task)(void *arg, const uint8_t *key, size_t keylen, int32_t tid,
                 const gd_taskinfo_t *info, int32_t ptid, const char *name);
    void (*group)(void *arg, const char *name, uint64_t version, int32_t frozen, bool dead,
                  const int32_t *slots, int nslots);
    void (*block)(void *arg, int32_t base, int32_t n, const uint8_t *used, size_t usedlen,
                  const uint8_t token[GD_TOKEN_SIZE], const char *key, size_t keylen);
    void *arg;
} gd_registry_dumper_t;

void gd_registry_dump(gd_registry_t *self, const gd_registry_dumper_t *d);
/*  Reading it back, into a fresh registry, in that order (tasks before their groups).
 *  Each returns 0 or GIMPI_EBADPARAM (inconsistent with what is there) / GIMPI_ENOMEM. */
void gd_registry_restore_counters(gd_registry_t *self, uint64_t seq, int32_t next_tid);
int gd_registry_restore_task(gd_registry_t *self, const uint8_t *key, size_t keylen,
                             int32_t tid, const gd_taskinfo_t *info, int32_t ptid,
                             const char *name);
int gd_registry_restore_group(gd_registry_t *self, const char *name, uint64_t version,
                              int32_t frozen, bool dead, const int32_t *slots, int nslots);
int gd_registry_restore_block(gd_registry_t *self, int32_t base, int32_t n, const uint8_t *used,
                              size_t usedlen, const uint8_t token[GD_TOKEN_SIZE],
                              const char *key, size_t keylen);

/*  Version of a group (the counter when it does not exist), for MARK events. */
uint64_t gd_registry_version(gd_registry_t *self, const char *group);

#endif
