/*  gd_hash.h — a small hash table from byte-string keys to pointers, used by groupd's
 *  registry (groups by name, tasks by tid and by routing id) and by the task-side
 *  membership cache.  Keys are copied; values are the caller's.  Chained buckets, the
 *  table doubles when it holds more entries than buckets and never shrinks below its
 *  initial size, so churn does not grow memory.
 */
#ifndef GIMPI_GD_HASH_H
#define GIMPI_GD_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct gd_hash_t gd_hash_t;

gd_hash_t *gd_hash_new(void);
/*  Frees the table (not the values). */
void gd_hash_destroy(gd_hash_t **self_p);
/*  Inserts or replaces; 0 or -1 (out of memory). */
int gd_hash_put(gd_hash_t *self, const void *key, size_t len, void *value);
/*  Value or NULL. */
void *gd_hash_get(gd_hash_t *self, const void *key, size_t len);
/*  Removes; returns the old value or NULL. */
void *gd_hash_del(gd_hash_t *self, const void *key, size_t len);
size_t gd_hash_size(gd_hash_t *self);
/*  Calls fn for every entry (the table must not change meanwhile). */
void gd_hash_foreach(gd_hash_t *self, void (*fn)(const void *key, size_t len, void *value,
                                                 void *arg), void *arg);

/*  Keys for integers. */
static inline const void *gd_hash_ikey(const int32_t *v) { return v; }

#endif
