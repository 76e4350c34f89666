/*  gd_registry_state.c — the registry's state written out and read back, for the
 *  journal's compaction (gd_journal.h): the counters, every registered task, every group
 *  with its members by instance, frozen and dead, and every reserved block with the tids
 *  of it used so far and its token.  Episodes in progress (barriers, freezes, data-plane
 *  barrier notes) are not: their members send their requests again after a restart.
 *  Owners' quotas are not either (a restarted groupd knows no connection).
 */
#include "groupd/gd_registry.h"
#include "groupd/gd_registry_impl.h"
#include "gimpi.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    gd_registry_t *self;
    const gd_registry_dumper_t *d;
} s_walk_t;

/*  One task (hash visitor). */
static void s_task_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    s_walk_t *w = a;
    task_t *t = v;
    w->d->task(w->d->arg, t->key, t->keylen, t->tid, &t->info, t->ptid, t->name);
}

/*  One group (hash visitor). */
static void s_group_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    s_walk_t *w = a;
    group_t *g = v;
    int n = g->cap;
    while (n > 0 && !g->slots[n - 1])
        n--;
    w->d->group(w->d->arg, g->name, g->version, g->frozen, g->dead, g->slots, n);
}

/*  Writes the state out through d. */
void gd_registry_dump(gd_registry_t *self, const gd_registry_dumper_t *d)
{
    assert(self);
    assert(d);
    d->counters(d->arg, self->seq, self->next_tid);
    s_walk_t w = { self, d };
    gd_hash_foreach(self->tasks, s_task_cb, &w);
    gd_hash_foreach(self->groups, s_group_cb, &w);
    for (int k = 0; k < self->nblocks; k++) {
        block_t *b = &self->blocks[k];
        d->block(d->arg, b->base, b->n, b->used, (size_t)b->n / 8 + 1, b->token, b->key,
                 b->keylen);
    }
}

/*  The counters. */
void gd_registry_restore_counters(gd_registry_t *self, uint64_t seq, int32_t next_tid)
{
    assert(self);
    if (seq > self->seq)
        self->seq = seq;
    if (next_tid > self->next_tid)
        self->next_tid = next_tid;
}

/*  A registered task. */
int gd_registry_restore_task(gd_registry_t *self, const uint8_t *key, size_t keylen,
                             int32_t tid, const gd_taskinfo_t *info, int32_t ptid,
                             const char *name)
{
    assert(self);
    if (tid <= 0 || keylen == 0 || keylen > sizeof ((task_t *)0)->key
        || gd_hash_get(self->tasks, &tid, sizeof tid) || gd_hash_get(self->keys, key, keylen))
        return GIMPI_EBADPARAM;
    int32_t rc = gd_registry_task_add(self, key, keylen, info, tid);
    if (rc < 0)
        return rc;
    task_t *t = gd_hash_get(self->tasks, &tid, sizeof tid);
    t->info.host[sizeof t->info.host - 1] = 0;
    t->ptid = ptid;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    if (tid >= self->next_tid)
        self->next_tid = tid + 1;
    return 0;
}

/*  A group with its members (restored tasks: the others' instances stay free). */
int gd_registry_restore_group(gd_registry_t *self, const char *name, uint64_t version,
                              int32_t frozen, bool dead, const int32_t *slots, int nslots)
{
    assert(self);
    size_t len = strlen(name);
    if (!len || nslots < 0 || gd_hash_get(self->groups, name, len))
        return GIMPI_EBADPARAM;
    group_t *g = calloc(1, sizeof *g);
    int cap = nslots > 4 ? nslots : 4;
    if (!g || !(g->name = strdup(name)) || !(g->slots = calloc((size_t)cap, sizeof *g->slots))) {
        if (g)
            free(g->name);
        free(g);
        return GIMPI_ENOMEM;
    }
    g->cap = cap;
    g->version = version;
    g->frozen = frozen;
    g->dead = dead;
    for (int k = 0; k < nslots; k++) {
        task_t *t = slots[k] ? gd_hash_get(self->tasks, &slots[k], sizeof slots[k]) : NULL;
        if (t && gd_registry_task_add_group(t, g) == 0) {
            g->slots[k] = slots[k];
            g->size++;
        }
    }
    if (g->size == 0 || gd_hash_put(self->groups, g->name, len, g) < 0) {
        int rc = g->size ? GIMPI_ENOMEM : GIMPI_EBADPARAM;  /* (no member: nothing to keep) */
        for (int k = 0; k < nslots; k++) {
            task_t *t = g->slots[k] ? gd_hash_get(self->tasks, &slots[k], sizeof slots[k]) : NULL;
            if (t)
                t->ngroups--;
        }
        free(g->slots);
        free(g->name);
        free(g);
        return rc;
    }
    if (version > self->seq)
        self->seq = version;
    return 0;
}

/*  A reserved block. */
int gd_registry_restore_block(gd_registry_t *self, int32_t base, int32_t n, const uint8_t *used,
                              size_t usedlen, const uint8_t token[GD_TOKEN_SIZE],
                              const char *key, size_t keylen)
{
    assert(self);
    if (n < 1 || n > GIMPI_GROUPS_MAX_RESERVE || base < 0 || base > INT32_MAX - n
        || usedlen != (size_t)n / 8 + 1
        || (self->nblocks && self->blocks[self->nblocks - 1].base >= base))
        return GIMPI_EBADPARAM;
    if (gd_registry_blocks_room(self) < 0)
        return GIMPI_ENOMEM;
    block_t b = { .base = base, .n = n, .used = malloc(usedlen) };
    reservation_t *r = keylen ? malloc(sizeof *r) : NULL;
    if (!b.used || (keylen && (!r || !(b.key = malloc(keylen))))) {
        free(b.used);
        free(r);
        return GIMPI_ENOMEM;
    }
    memcpy(b.used, used, usedlen);
    for (int32_t k = 0; k < n; k++)
        b.nused += (used[k / 8] >> (k % 8)) & 1;
    memcpy(b.token, token, GD_TOKEN_SIZE);
    if (keylen) {
        memcpy(b.key, key, keylen);
        b.keylen = keylen;
        *r = (reservation_t){ base, n, { 0 } };
        memcpy(r->token, token, GD_TOKEN_SIZE);
        if (gd_hash_put(self->reservations, key, keylen, r) < 0) {
            free(r);
            free(b.used);
            free(b.key);
            return GIMPI_ENOMEM;
        }
    }
    self->blocks[self->nblocks++] = b;
    if (base + n + 1 > self->next_tid)
        self->next_tid = base + n + 1;
    return 0;
}
