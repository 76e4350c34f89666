/*  gd_registry_impl.h — the registry's insides (groupd/gd_registry.c and the dump and
 *  restore of its state for the journal's compaction, gd_registry_state.c; nothing else
 *  includes it): tasks, groups with their episodes, reserved blocks, the registry.
 */
#ifndef GIMPI_GD_REGISTRY_IMPL_H
#define GIMPI_GD_REGISTRY_IMPL_H

#include "groupd/gd_registry.h"
#include "base/gd_hash.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct group_t group_t;

typedef struct {
    int32_t tid;
    uint8_t key[256];
    size_t keylen;
    gd_taskinfo_t info;
    int32_t ptid;               /* TASKINFO: its parent (0: none) ... */
    char name[GD_MAX_TEXT + 1]; /* ... and its program's name */
    group_t **groups;           /* groups this task is in */
    int ngroups, cap;
} task_t;

typedef struct {
    int32_t count;              /* 0: no episode in progress */
    gd_waiter_t *waiters;
    int32_t *tids;
    int n, cap;
} episode_t;

struct group_t {
    char *name;
    uint64_t version;
    int32_t *slots;             /* tid per instance, 0 = free */
    int cap;
    int size;
    int32_t frozen;             /* 0 or the frozen size */
    bool dead;                  /* frozen and lost a member */
    episode_t barrier, freeze;
    struct {                    /* members waiting in a barrier on the data plane */
        int32_t tid, count;
        int64_t since_ms;
    } *dpw;
    int ndpw, capdpw;
};

struct gd_registry_t {
    gd_sink_t sink;
    gd_hash_t *groups;          /* name -> group_t */
    gd_hash_t *tasks;           /* tid -> task_t */
    gd_hash_t *keys;            /* routing id -> task_t */
    int32_t next_tid;
    uint64_t seq;               /* last version handed out */
    struct block_t *blocks;     /* reserved blocks with unused tids, by base */
    int nblocks, capblocks;
    gd_hash_t *reservations;    /* RESERVE key -> reservation_t (while its block lives) */
    gd_hash_t *owners;          /* owner id -> tids reserved and not yet registered */
    gd_registry_limits_t lim;
    bool forced;                /* the next RESERVE's token is forced_token (a replay) */
    uint8_t forced_token[GD_TOKEN_SIZE];
};

/*  A block of tids reserved by RESERVE: base+1 .. base+n; `used` marks the tids that have
 *  registered (a bit per tid).  Freed once every tid has registered. */
typedef struct block_t {
    int32_t base, n, nused;
    uint8_t *used;
    uint64_t owner;             /* the connection that reserved it (0: none) */
    uint8_t token[GD_TOKEN_SIZE];
    char *key;                  /* its RESERVE key (malloc'ed), NULL for "" */
    size_t keylen;
} block_t;

/*  What a non-empty RESERVE key was given. */
typedef struct {
    int32_t base, n;
    uint8_t token[GD_TOKEN_SIZE];
} reservation_t;

/*  Adds the task behind a routing id as `tid` (no checks of the tid); the tid or an
 *  error.  Shared with the restore of a compacted journal. */
int32_t gd_registry_task_add(gd_registry_t *self, const uint8_t *key, size_t keylen,
                             const gd_taskinfo_t *info, int32_t tid);
/*  Adds g to a task's list of groups.  0 or -1 (no memory). */
int gd_registry_task_add_group(task_t *t, group_t *g);

/*  Room for one more reserved block.  0 or -1 (no memory). */
int gd_registry_blocks_room(gd_registry_t *self);

#endif
