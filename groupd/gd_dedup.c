/*  gd_dedup.c — the replies groupd may be asked for again (see gd_dedup.h): a hash of
 *  clients, each a ring of its last requests and their packed replies.
 */
#include "groupd/gd_dedup.h"
#include "base/gd_hash.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t reqid;
    bool used;
    uint8_t *reply;             /* malloc'ed, NULL while pending */
    size_t len;
} s_entry_t;

typedef struct {
    uint8_t key[256];
    size_t keylen;
    int next;                   /* the ring's oldest slot */
    s_entry_t e[GD_DEDUP_PER_CLIENT];
} s_client_t;

struct gd_dedup_t {
    gd_hash_t *clients;         /* routing id -> s_client_t */
};

/*  New empty table. */
gd_dedup_t *gd_dedup_new(void)
{
    gd_dedup_t *self = calloc(1, sizeof *self);
    if (self && !(self->clients = gd_hash_new())) {
        free(self);
        self = NULL;
    }
    return self;
}

/*  Frees a client (hash visitor or direct). */
static void s_client_free(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    s_client_t *c = v;
    for (int i = 0; i < GD_DEDUP_PER_CLIENT; i++)
        free(c->e[i].reply);
    free(c);
}

/*  Frees everything. */
void gd_dedup_destroy(gd_dedup_t **self_p)
{
    assert(self_p);
    gd_dedup_t *self = *self_p;
    if (!self)
        return;
    gd_hash_foreach(self->clients, s_client_free, NULL);
    gd_hash_destroy(&self->clients);
    free(self);
    *self_p = NULL;
}

/*  The entry of reqid in a client's ring, or NULL. */
static s_entry_t *s_find(s_client_t *c, uint32_t reqid)
{
    for (int i = 0; i < GD_DEDUP_PER_CLIENT; i++)
        if (c->e[i].used && c->e[i].reqid == reqid)
            return &c->e[i];
    return NULL;
}

/*  Notes a request and its reply. */
int gd_dedup_put(gd_dedup_t *self, const uint8_t *key, size_t keylen, uint32_t reqid,
                 const uint8_t *reply, size_t len)
{
    assert(self);
    if (keylen > sizeof ((s_client_t *)0)->key)
        return -1;
    s_client_t *c = gd_hash_get(self->clients, key, keylen);
    if (!c) {
        if (!(c = calloc(1, sizeof *c)))
            return -1;
        memcpy(c->key, key, keylen);
        c->keylen = keylen;
        if (gd_hash_put(self->clients, key, keylen, c) < 0) {
            free(c);
            return -1;
        }
    }
    uint8_t *copy = NULL;
    if (len && !(copy = malloc(len)))
        return -1;
    if (len)
        memcpy(copy, reply, len);
    s_entry_t *e = s_find(c, reqid);
    if (!e) {
        e = &c->e[c->next];
        c->next = (c->next + 1) % GD_DEDUP_PER_CLIENT;
    }
    free(e->reply);
    *e = (s_entry_t){ reqid, true, copy, len };
    return 0;
}

/*  Looks a request up. */
int gd_dedup_get(gd_dedup_t *self, const uint8_t *key, size_t keylen, uint32_t reqid,
                 const uint8_t **reply, size_t *len)
{
    assert(self);
    s_client_t *c = gd_hash_get(self->clients, key, keylen);
    s_entry_t *e = c ? s_find(c, reqid) : NULL;
    if (!e)
        return GD_DEDUP_NONE;
    if (!e->reply)
        return GD_DEDUP_PENDING;
    *reply = e->reply;
    *len = e->len;
    return GD_DEDUP_REPLY;
}

/*  Forgets a client. */
void gd_dedup_forget(gd_dedup_t *self, const uint8_t *key, size_t keylen)
{
    assert(self);
    s_client_t *c = gd_hash_del(self->clients, key, keylen);
    if (c)
        s_client_free(NULL, 0, c, NULL);
}

/*  Clients known. */
size_t gd_dedup_size(gd_dedup_t *self)
{
    assert(self);
    return gd_hash_size(self->clients);
}

typedef struct {
    gd_dedup_fn fn;
    void *arg;
} s_walk_t;

/*  One client's entries, oldest first (hash visitor). */
static void s_walk_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    s_walk_t *w = a;
    s_client_t *c = v;
    for (int i = 0; i < GD_DEDUP_PER_CLIENT; i++) {
        s_entry_t *e = &c->e[(c->next + i) % GD_DEDUP_PER_CLIENT];
        if (e->used)
            w->fn(w->arg, c->key, c->keylen, e->reqid, e->reply, e->reply ? e->len : 0);
    }
}

/*  Every entry. */
void gd_dedup_foreach(gd_dedup_t *self, gd_dedup_fn fn, void *arg)
{
    assert(self);
    s_walk_t w = { fn, arg };
    gd_hash_foreach(self->clients, s_walk_cb, &w);
}
