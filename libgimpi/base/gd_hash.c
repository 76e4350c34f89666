/*  gd_hash.c — chained hash table from byte-string keys to pointers (see gd_hash.h). */
#include "base/gd_hash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry_t {
    struct entry_t *next;
    uint64_t hash;
    size_t len;
    void *value;
    uint8_t key[];
} entry_t;

struct gd_hash_t {
    entry_t **buckets;
    size_t nbuckets;            /* power of two */
    size_t count;
};

enum { MIN_BUCKETS = 64 };

/*  FNV-1a, 64-bit. */
static uint64_t s_hash(const void *key, size_t len)
{
    const uint8_t *p = key;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/*  New empty table. */
gd_hash_t *gd_hash_new(void)
{
    gd_hash_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->nbuckets = MIN_BUCKETS;
    self->buckets = calloc(self->nbuckets, sizeof *self->buckets);
    if (!self->buckets) {
        free(self);
        return NULL;
    }
    return self;
}

/*  Frees entries and table. */
void gd_hash_destroy(gd_hash_t **self_p)
{
    assert(self_p);
    gd_hash_t *self = *self_p;
    if (!self)
        return;
    for (size_t b = 0; b < self->nbuckets; b++) {
        entry_t *e = self->buckets[b];
        while (e) {
            entry_t *next = e->next;
            free(e);
            e = next;
        }
    }
    free(self->buckets);
    free(self);
    *self_p = NULL;
}

/*  Rehashes into n buckets; keeps the old table when memory is short. */
static void s_resize(gd_hash_t *self, size_t n)
{
    entry_t **nb = calloc(n, sizeof *nb);
    if (!nb)
        return;
    for (size_t b = 0; b < self->nbuckets; b++) {
        entry_t *e = self->buckets[b];
        while (e) {
            entry_t *next = e->next;
            size_t i = e->hash & (n - 1);
            e->next = nb[i];
            nb[i] = e;
            e = next;
        }
    }
    free(self->buckets);
    self->buckets = nb;
    self->nbuckets = n;
}

/*  Finds the link pointing at the entry for key. */
static entry_t **s_find(gd_hash_t *self, const void *key, size_t len, uint64_t h)
{
    entry_t **link = &self->buckets[h & (self->nbuckets - 1)];
    while (*link) {
        entry_t *e = *link;
        if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
            return link;
        link = &e->next;
    }
    return link;
}

/*  Inserts or replaces. */
int gd_hash_put(gd_hash_t *self, const void *key, size_t len, void *value)
{
    assert(self);
    uint64_t h = s_hash(key, len);
    entry_t **link = s_find(self, key, len, h);
    if (*link) {
        (*link)->value = value;
        return 0;
    }
    entry_t *e = malloc(sizeof *e + len);
    if (!e)
        return -1;
    e->next = NULL;
    e->hash = h;
    e->len = len;
    e->value = value;
    if (len)
        memcpy(e->key, key, len);
    *link = e;
    self->count++;
    if (self->count > self->nbuckets)
        s_resize(self, self->nbuckets * 2);
    return 0;
}

/*  Looks a key up. */
void *gd_hash_get(gd_hash_t *self, const void *key, size_t len)
{
    assert(self);
    entry_t **link = s_find(self, key, len, s_hash(key, len));
    return *link ? (*link)->value : NULL;
}

/*  Removes a key; shrinks a table that became mostly empty. */
void *gd_hash_del(gd_hash_t *self, const void *key, size_t len)
{
    assert(self);
    entry_t **link = s_find(self, key, len, s_hash(key, len));
    entry_t *e = *link;
    if (!e)
        return NULL;
    void *value = e->value;
    *link = e->next;
    free(e);
    self->count--;
    if (self->nbuckets > MIN_BUCKETS && self->count < self->nbuckets / 8)
        s_resize(self, self->nbuckets / 2);
    return value;
}

/*  Number of entries. */
size_t gd_hash_size(gd_hash_t *self)
{
    assert(self);
    return self->count;
}

/*  Visits every entry. */
void gd_hash_foreach(gd_hash_t *self, void (*fn)(const void *key, size_t len, void *value,
                                                 void *arg), void *arg)
{
    assert(self);
    for (size_t b = 0; b < self->nbuckets; b++)
        for (entry_t *e = self->buckets[b]; e; e = e->next)
            fn(e->key, e->len, e->value, arg);
}
