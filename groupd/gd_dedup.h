/*  gd_dedup.h — the replies groupd may be asked for again: per client (routing id), the
 *  last GD_DEDUP_PER_CLIENT requests that changed groupd's state, each with the reply it
 *  was sent (packed frames, gd_journal_pack) or none yet (a barrier still waiting).
 *
 *  A client whose groupd was restarted sends its requests in flight again with the same
 *  request ids; groupd answers one found here from here instead of running it twice (a
 *  JOIN or a LEAVE must not run twice), and ignores one still pending (its reply comes
 *  when the episode ends).  Filled as the journal is replayed and as groupd serves; the
 *  journal's compaction writes it out again (gd_journal.h).
 */
#ifndef GIMPI_GD_DEDUP_H
#define GIMPI_GD_DEDUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    GD_DEDUP_PER_CLIENT = 64,   /* a client has at most 16 deferred leaves, one request
                                   waited for, a VMWAIT and its quiet puts in flight */
    GD_DEDUP_NONE = 0,          /* gd_dedup_get: not there */
    GD_DEDUP_REPLY = 1,         /* there, with its reply */
    GD_DEDUP_PENDING = 2,       /* there, its reply not sent yet */
};

typedef struct gd_dedup_t gd_dedup_t;

gd_dedup_t *gd_dedup_new(void);
void gd_dedup_destroy(gd_dedup_t **self_p);

/*  Notes request reqid of client key: its reply (len 0: pending), copied.  A reply for a
 *  pending entry fills it in.  0 or -1 (no memory). */
int gd_dedup_put(gd_dedup_t *self, const uint8_t *key, size_t keylen, uint32_t reqid,
                 const uint8_t *reply, size_t len);
/*  Looks a request up: GD_DEDUP_NONE, GD_DEDUP_REPLY (*reply, *len: the packed reply,
 *  valid until the next put) or GD_DEDUP_PENDING. */
int gd_dedup_get(gd_dedup_t *self, const uint8_t *key, size_t keylen, uint32_t reqid,
                 const uint8_t **reply, size_t *len);
/*  Forgets a client (its task is gone). */
void gd_dedup_forget(gd_dedup_t *self, const uint8_t *key, size_t keylen);
/*  Clients known. */
size_t gd_dedup_size(gd_dedup_t *self);

/*  Calls fn for every entry, oldest first per client (len 0: pending). */
typedef void (*gd_dedup_fn)(void *arg, const uint8_t *key, size_t keylen, uint32_t reqid,
                            const uint8_t *reply, size_t len);
void gd_dedup_foreach(gd_dedup_t *self, gd_dedup_fn fn, void *arg);

#endif
