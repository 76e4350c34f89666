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

gd_registry_t *gd_registry_new(const gd_sink_t *sink);
void gd_registry_destroy(gd_registry_t **self_p);

/*  Registers the task behind routing id `key` (again: the same tid).  Returns the tid or
 *  a negative GIMPI_E* code. */
int32_t gd_registry_register(gd_registry_t *self, const uint8_t *key, size_t keylen,
                             const gd_taskinfo_t *info);
/*  RESERVE: n fresh tids (1..GIMPI_GROUPS_MAX_RESERVE, gimpi_group.h), base+1 .. base+n, from the same counter as
 *  REGISTER's, so never reused.  A non-empty key gets the same base every time it is asked
 *  with the same n while the registry lives (GIMPI_EMISMATCH with another n); "" (keylen 0)
 *  always gets a fresh block.  Returns base or GIMPI_EBADPARAM / GIMPI_EOUTOFRES. */
int32_t gd_registry_reserve(gd_registry_t *self, const char *key, size_t keylen, int32_t n);
/*  REGISTER_TID: registers the task behind a routing id as `tid`, which must lie in a
 *  reserved block and never have registered: GIMPI_EDUPHOST when another task holds it
 *  now, GIMPI_EBADPARAM when it is not a reserved unused tid, GIMPI_EEXISTS when this
 *  connection registered as another tid.  Returns tid. */
int32_t gd_registry_register_tid(gd_registry_t *self, const uint8_t *key, size_t keylen,
                                 const gd_taskinfo_t *info, int32_t tid);
/*  Reserved blocks whose tids have not all registered yet. */
size_t gd_registry_nblocks(gd_registry_t *self);

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

/*  Version of a group (the counter when it does not exist), for MARK events. */
uint64_t gd_registry_version(gd_registry_t *self, const char *group);

#endif
