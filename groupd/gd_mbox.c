/*  gd_mbox.c — groupd's message box (see gd_mbox.h): classes by name (a hash, and a list
 *  in the order they were made, which pvm_getmboxinfo reports), each an array of entries
 *  sorted by index; the waiting reads in one list in arrival order (a put answers them in
 *  that order, as pvmd's wait list does, so a ReadAndDelete waiter takes the entry from
 *  those behind it).  A class goes with its last entry.
 */
#include "config.h"
#include "groupd/gd_mbox.h"
#include "base/gd_hash.h"
#include "base/gimpi_be.h"
#include "gimpi_errors.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/*  One entry of a class. */
typedef struct {
    int32_t index;
    int32_t owner;              /* 0: its owner has gone (persistent) */
    int32_t flags;              /* as put, PvmMboxDirectIndex bits included (as PVM) */
    int32_t encoding;
    uint8_t *data;
    size_t len;
} entry_t;

/*  One class: its name and entries sorted by index. */
typedef struct class_t {
    struct class_t *prev, *next;        /* creation order */
    char *name;
    size_t namelen;
    entry_t *ents;
    int n, cap;
} class_t;

/*  A waiting read (PvmMboxWaitForInfo). */
typedef struct waiter_t {
    struct waiter_t *next;
    int32_t tid, index, flags;
    uint64_t conn;
    gd_waiter_t w;
    char name[];
} waiter_t;

struct gd_mbox_t {
    gd_mbox_sink_t sink;
    gd_mbox_limits_t lim;
    gd_hash_t *classes;         /* name -> class_t */
    class_t *first, *last;
    gd_hash_t *owned;           /* tid -> entries it owns (intptr_t) */
    size_t nentries, nbytes, nwaiters;
    waiter_t *waiters;          /* arrival order */
};

/*  A new, empty box. */
gd_mbox_t *gd_mbox_new(const gd_mbox_sink_t *sink)
{
    assert(sink);
    gd_mbox_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->sink = *sink;
    self->classes = gd_hash_new();
    self->owned = gd_hash_new();
    if (!self->classes || !self->owned) {
        gd_mbox_destroy(&self);
        return NULL;
    }
    gd_mbox_set_limits(self, NULL);
    return self;
}

/*  Frees a class and its entries (not unlinked here). */
static void s_class_free(class_t *c)
{
    for (int k = 0; k < c->n; k++)
        free(c->ents[k].data);
    free(c->ents);
    free(c->name);
    free(c);
}

/*  Frees the box, its entries and waiters (without replies). */
void gd_mbox_destroy(gd_mbox_t **self_p)
{
    assert(self_p);
    gd_mbox_t *self = *self_p;
    if (!self)
        return;
    for (class_t *c = self->first, *next; c; c = next) {
        next = c->next;
        s_class_free(c);
    }
    for (waiter_t *w = self->waiters, *next; w; w = next) {
        next = w->next;
        free(w);
    }
    gd_hash_destroy(&self->classes);
    gd_hash_destroy(&self->owned);
    free(self);
    *self_p = NULL;
}

/*  Sets the bounds (0: default). */
void gd_mbox_set_limits(gd_mbox_t *self, const gd_mbox_limits_t *limits)
{
    assert(self);
    gd_mbox_limits_t l = limits ? *limits : (gd_mbox_limits_t){ 0 };
    self->lim.max_entry = l.max_entry ? l.max_entry : GD_MBOX_MAX_ENTRY;
    self->lim.max_bytes = l.max_bytes ? l.max_bytes : GD_MBOX_MAX_BYTES;
    self->lim.max_per_task = l.max_per_task ? l.max_per_task : GD_MBOX_MAX_PER_TASK;
    self->lim.max_entries = l.max_entries ? l.max_entries : GD_MBOX_MAX_ENTRIES;
    self->lim.max_waiters = l.max_waiters ? l.max_waiters : GD_MBOX_MAX_WAITERS;
}

/* ------------------------------------------------------------------ bookkeeping */

/*  Entries task tid owns. */
static int s_owned(gd_mbox_t *self, int32_t tid)
{
    return tid ? (int)(intptr_t)gd_hash_get(self->owned, &tid, sizeof tid) : 0;
}

/*  Adds d to the entries tid owns. */
static void s_own(gd_mbox_t *self, int32_t tid, int d)
{
    if (!tid)
        return;
    intptr_t n = s_owned(self, tid) + d;
    if (n > 0)
        gd_hash_put(self->owned, &tid, sizeof tid, (void *)n);
    else
        gd_hash_del(self->owned, &tid, sizeof tid);
}

/*  The class of name, or NULL. */
static class_t *s_find(gd_mbox_t *self, const char *name)
{
    return gd_hash_get(self->classes, name, strlen(name));
}

/*  A new, empty class at the end of the list, or NULL. */
static class_t *s_class_new(gd_mbox_t *self, const char *name)
{
    class_t *c = calloc(1, sizeof *c);
    if (!c || !(c->name = strdup(name))) {
        free(c);
        return NULL;
    }
    c->namelen = strlen(name);
    if (gd_hash_put(self->classes, c->name, c->namelen, c) < 0) {
        s_class_free(c);
        return NULL;
    }
    c->prev = self->last;
    if (self->last)
        self->last->next = c;
    else
        self->first = c;
    self->last = c;
    return c;
}

/*  Unlinks and frees a class. */
static void s_class_drop(gd_mbox_t *self, class_t *c)
{
    gd_hash_del(self->classes, c->name, c->namelen);
    if (c->prev)
        c->prev->next = c->next;
    else
        self->first = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        self->last = c->prev;
    s_class_free(c);
}

/*  Removes entry k of c (and c when it was the last); true when c went. */
static bool s_remove(gd_mbox_t *self, class_t *c, int k)
{
    entry_t *e = &c->ents[k];
    s_own(self, e->owner, -1);
    self->nentries--;
    self->nbytes -= e->len;
    free(e->data);
    memmove(e, e + 1, (size_t)(c->n - k - 1) * sizeof *e);
    if (--c->n > 0)
        return false;
    s_class_drop(self, c);
    return true;
}

/*  The first entry of c whose index is >= index (c->n when none). */
static int s_lower(const class_t *c, int32_t index)
{
    int lo = 0, hi = c->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (c->ents[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/*  True when tid may replace or delete e. */
static bool s_may_change(const entry_t *e, int32_t tid)
{
    return (e->flags & GD_MBOX_OVERWRITABLE) || (tid && e->owner == tid);
}

/* ------------------------------------------------------------------ put */

/*  The place where a put goes (pvmd's mb_insert): *k the slot, *replace when it replaces
 *  the entry there; returns the index, or GIMPI_EDENIED. */
static int32_t s_place(const class_t *c, int32_t tid, int32_t req, int32_t flags, int *k,
                       bool *replace)
{
    int32_t dind = (int32_t)(((uint32_t)flags >> GD_MBOX_DIRECT_SHIFT)
                             & ((1u << (31 - GD_MBOX_DIRECT_SHIFT)) - 1));
    int32_t cind = req == -1 ? dind : req;
    *replace = false;
    *k = c ? s_lower(c, cind) : 0;
    if (!c || *k == c->n || c->ents[*k].index != cind)
        return cind;
    if (flags & GD_MBOX_MULTI) {
        if (req != -1)                  /* PVM 3.3's insert at a taken index */
            return GIMPI_EDENIED;
        while (*k < c->n && c->ents[*k].index == cind && cind < INT32_MAX) {
            cind++;
            (*k)++;
        }
        return cind;
    }
    if (!s_may_change(&c->ents[*k], tid))
        return GIMPI_EDENIED;
    *replace = true;
    return cind;
}

/*  GIMPI_EOUTOFRES when adding len bytes as a new (or replacing) entry of tid would pass a
 *  bound, else 0. */
static int s_room(gd_mbox_t *self, int32_t tid, size_t len, const entry_t *old)
{
    size_t freed = old ? old->len : 0;
    int more = old ? 0 : 1;
    int mine = old && old->owner == tid ? 1 : 0;  /* a replaced own entry stays counted */
    if (len > self->lim.max_entry || self->nbytes - freed + len > self->lim.max_bytes
        || self->nentries + (size_t)more > (size_t)self->lim.max_entries
        || s_owned(self, tid) + 1 - mine > self->lim.max_per_task)
        return GIMPI_EOUTOFRES;
    return 0;
}

static void s_wake(gd_mbox_t *self, const char *name);

/*  Room for one more entry in c (a new class without it is dropped).  0 or -1. */
static int s_grow(gd_mbox_t *self, class_t *c)
{
    if (c->n < c->cap)
        return 0;
    int cap = c->cap ? 2 * c->cap : 2;
    entry_t *ents = realloc(c->ents, (size_t)cap * sizeof *ents);
    if (!ents) {
        if (c->n == 0)
            s_class_drop(self, c);
        return -1;
    }
    c->ents = ents;
    c->cap = cap;
    return 0;
}

/*  Stores a put (see gd_mbox.h). */
int gd_mbox_put(gd_mbox_t *self, int32_t tid, const char *name, int32_t req, int32_t flags,
                int32_t encoding, const uint8_t *data, size_t len)
{
    assert(self);
    if (!name || !*name || tid <= 0 || req < -1 || (len && !data))
        return GIMPI_EBADPARAM;
    class_t *c = s_find(self, name);
    int k;
    bool replace;
    int32_t index = s_place(c, tid, req, flags, &k, &replace);
    if (index < 0)
        return index;
    int rc = s_room(self, tid, len, replace ? &c->ents[k] : NULL);
    if (rc)
        return rc;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy || (!c && !(c = s_class_new(self, name)))) {
        free(copy);
        return GIMPI_ENOMEM;
    }
    if (!replace && s_grow(self, c) < 0) {
        free(copy);
        return GIMPI_ENOMEM;
    }
    if (len)
        memcpy(copy, data, len);
    entry_t *e = &c->ents[k];
    if (replace) {
        s_own(self, e->owner, -1);
        self->nbytes -= e->len;
        free(e->data);
    } else {
        memmove(e + 1, e, (size_t)(c->n - k) * sizeof *e);
        c->n++;
        self->nentries++;
    }
    *e = (entry_t){ .index = index, .owner = tid, .flags = flags, .encoding = encoding,
                    .data = copy, .len = len };
    s_own(self, tid, 1);
    self->nbytes += len;
    s_wake(self, name);
    return index;
}

/* ------------------------------------------------------------------ get */

/*  pvmd's mb_lookup: the entry a read of (index, flags) by tid finds, answered through
 *  the sink to w (and deleted for ReadAndDelete).  Returns the status answered, or
 *  GIMPI_ENOTFOUND without answering when answer_missing is false. */
static int s_lookup(gd_mbox_t *self, int32_t tid, const char *name, int32_t index,
                    int32_t flags, const gd_waiter_t *w, bool answer_missing)
{
    class_t *c = s_find(self, name);
    int k = c ? s_lower(c, index) : 0;
    if (!c || k == c->n || (!(flags & GD_MBOX_FIRSTAVAIL) && c->ents[k].index != index)) {
        if (answer_missing)
            self->sink.reply(self->sink.arg, w, GIMPI_ENOTFOUND, 0, NULL, 0);
        return GIMPI_ENOTFOUND;
    }
    entry_t *e = &c->ents[k];
    if ((flags & GD_MBOX_READDELETE) && !s_may_change(e, tid)) {
        self->sink.reply(self->sink.arg, w, GIMPI_EDENIED, 0, NULL, 0);
        return GIMPI_EDENIED;
    }
    int32_t found = e->index;
    self->sink.reply(self->sink.arg, w, found, e->encoding, e->data, e->len);
    if (flags & GD_MBOX_READDELETE)
        s_remove(self, c, k);
    return found;
}

/*  Waiting reads of connection conn. */
static int s_conn_waiters(const gd_mbox_t *self, uint64_t conn)
{
    int n = 0;
    for (const waiter_t *w = self->waiters; w; w = w->next)
        n += conn && w->conn == conn;
    return n;
}

/*  Reads an entry (see gd_mbox.h). */
int gd_mbox_get(gd_mbox_t *self, int32_t tid, uint64_t conn, const char *name, int32_t index,
                int32_t flags, const gd_waiter_t *w)
{
    assert(self && w);
    if (!name || !*name || index < 0) {
        self->sink.reply(self->sink.arg, w, GIMPI_EBADPARAM, 0, NULL, 0);
        return GIMPI_EBADPARAM;
    }
    bool wait = (flags & GD_MBOX_WAIT) != 0;
    int rc = s_lookup(self, tid, name, index, flags, w, !wait);
    if (rc != GIMPI_ENOTFOUND || !wait)
        return rc;
    size_t nlen = strlen(name);
    waiter_t *x = NULL;
    if (self->nwaiters >= (size_t)self->lim.max_waiters
        || s_conn_waiters(self, conn) >= GD_MBOX_MAX_WAITERS_PER_CONN
        || !(x = malloc(sizeof *x + nlen + 1))) {
        rc = x ? GIMPI_ENOMEM : GIMPI_EOUTOFRES;
        self->sink.reply(self->sink.arg, w, rc, 0, NULL, 0);
        return rc;
    }
    *x = (waiter_t){ .tid = tid, .index = index, .flags = flags, .conn = conn, .w = *w };
    memcpy(x->name, name, nlen + 1);
    waiter_t **tail = &self->waiters;
    while (*tail)
        tail = &(*tail)->next;
    *tail = x;
    self->nwaiters++;
    return GD_PENDING;
}

/*  Answers, in arrival order, the waiting reads of class name that now find an entry. */
static void s_wake(gd_mbox_t *self, const char *name)
{
    for (waiter_t **p = &self->waiters; *p;) {
        waiter_t *x = *p;
        if (strcmp(x->name, name)
            || s_lookup(self, x->tid, x->name, x->index, x->flags, &x->w, false)
               == GIMPI_ENOTFOUND) {
            p = &x->next;
            continue;
        }
        *p = x->next;
        self->nwaiters--;
        free(x);
    }
}

/*  Drops the waiting reads for which drop(x, arg) says so, answering them with status
 *  when it is not 0. */
static void s_drop_waiters(gd_mbox_t *self, bool (*drop)(const waiter_t *, const void *),
                           const void *arg, int32_t status)
{
    for (waiter_t **p = &self->waiters; *p;) {
        waiter_t *x = *p;
        if (!drop(x, arg)) {
            p = &x->next;
            continue;
        }
        *p = x->next;
        self->nwaiters--;
        if (status)
            self->sink.reply(self->sink.arg, &x->w, status, 0, NULL, 0);
        free(x);
    }
}

/*  Waiter visitors: of task *arg, of connection *arg, all. */
static bool s_of_tid(const waiter_t *x, const void *arg)
{
    return x->tid == *(const int32_t *)arg;
}
static bool s_of_conn(const waiter_t *x, const void *arg)
{
    return x->conn == *(const uint64_t *)arg;
}
static bool s_all(const waiter_t *x, const void *arg)
{
    (void)x, (void)arg;
    return true;
}

/* ------------------------------------------------------------------ delete, list */

/*  Deletes an entry (see gd_mbox.h). */
int gd_mbox_del(gd_mbox_t *self, int32_t tid, const char *name, int32_t index)
{
    assert(self);
    if (!name || !*name || index < 0)
        return GIMPI_EBADPARAM;
    class_t *c = s_find(self, name);
    int k = c ? s_lower(c, index) : 0;
    if (!c || k == c->n || c->ents[k].index != index)
        return GIMPI_ENOTFOUND;
    if (!s_may_change(&c->ents[k], tid))
        return GIMPI_EDENIED;
    s_remove(self, c, k);
    return index;
}

/*  pvmd's pvmmatchstring: leading '*'s are skipped; the pattern then matches where its
 *  text occurs anywhere in the name, a '*' in it matching any run ("\*" a '*'); the
 *  end of the pattern ends the match, whatever follows in the name. */
bool gd_mbox_match(const char *name, const char *pattern)
{
    while (*pattern == '*')
        pattern++;
    if (!*pattern)
        return true;
    for (const char *x = name; *x; x++) {
        if (*x != *pattern)
            continue;
        const char *s = x, *y = pattern;
        while (*s && *y && *s == *y) {
            s++, y++;
            if (*y == '*') {
                if (gd_mbox_match(s, y + 1))
                    return true;
                break;
            }
            if (*y == '\\' && y[1] == '*')
                y++;
        }
        if (!*y)
            return true;
    }
    return false;
}

/*  Lists the classes matching pattern (see gd_mbox.h): per class Int4 name length, the
 *  name, Int4 entries, then per entry Int4 index, owner, flags. */
int gd_mbox_list(gd_mbox_t *self, const char *pattern, uint8_t **out, size_t *len)
{
    assert(self && out && len);
    if (!pattern)
        pattern = "";
    size_t size = 1;
    int n = 0;
    for (const class_t *c = self->first; c; c = c->next)
        if (gd_mbox_match(c->name, pattern)) {
            size += 8 + c->namelen + 12 * (size_t)c->n;
            n++;
        }
    uint8_t *p = *out = malloc(size);
    *len = 0;
    if (!p)
        return GIMPI_ENOMEM;
    for (const class_t *c = self->first; c; c = c->next) {
        if (!gd_mbox_match(c->name, pattern))
            continue;
        gimpi_be_put32(p, (uint32_t)c->namelen);
        memcpy(p + 4, c->name, c->namelen);
        p += 4 + c->namelen;
        gimpi_be_put32(p, (uint32_t)c->n);
        p += 4;
        for (int k = 0; k < c->n; k++, p += 12) {
            gimpi_be_put32(p, (uint32_t)c->ents[k].index);
            gimpi_be_put32(p + 4, (uint32_t)c->ents[k].owner);
            gimpi_be_put32(p + 8, (uint32_t)c->ents[k].flags);
        }
    }
    *len = (size_t)(p - *out);
    return n;
}

/* ------------------------------------------------------------------ ends */

/*  Task tid has ended (pvmd's mb_tidy). */
void gd_mbox_task_gone(gd_mbox_t *self, int32_t tid)
{
    assert(self);
    if (!tid)
        return;
    s_drop_waiters(self, s_of_tid, &tid, 0);
    if (!s_owned(self, tid))
        return;
    for (class_t *c = self->first, *next; c; c = next) {
        next = c->next;
        for (int k = 0; k < c->n;) {
            entry_t *e = &c->ents[k];
            if (e->owner != tid)
                k++;
            else if (e->flags & GD_MBOX_PERSISTENT) {
                s_own(self, tid, -1);
                e->owner = 0;
                k++;
            } else if (s_remove(self, c, k))
                break;
        }
    }
}

/*  A connection has ended. */
void gd_mbox_conn_gone(gd_mbox_t *self, uint64_t conn)
{
    assert(self);
    if (conn)
        s_drop_waiters(self, s_of_conn, &conn, 0);
}

/*  Empties the box. */
void gd_mbox_clear(gd_mbox_t *self)
{
    assert(self);
    s_drop_waiters(self, s_all, NULL, GIMPI_ESYSERR);
    while (self->first)
        s_remove(self, self->first, self->first->n - 1);
}

/*  Counters. */
size_t gd_mbox_nentries(const gd_mbox_t *self)
{
    return self->nentries;
}
size_t gd_mbox_nbytes(const gd_mbox_t *self)
{
    return self->nbytes;
}
size_t gd_mbox_nwaiters(const gd_mbox_t *self)
{
    return self->nwaiters;
}

/* ------------------------------------------------------------------ the journal */

/*  Every entry, class by class in their order, each by index. */
void gd_mbox_dump(gd_mbox_t *self, gd_mbox_dump_fn fn, void *arg)
{
    assert(self);
    for (class_t *c = self->first; c; c = c->next)
        for (int k = 0; k < c->n; k++) {
            entry_t *e = &c->ents[k];
            fn(arg, c->name, e->index, e->owner, e->flags, e->encoding, e->data, e->len);
        }
}

/*  An entry read back (after those of lower index of its class). */
int gd_mbox_restore(gd_mbox_t *self, const char *name, int32_t index, int32_t owner,
                    int32_t flags, int32_t encoding, const uint8_t *data, size_t len)
{
    assert(self);
    class_t *c = name && *name ? s_find(self, name) : NULL;
    if (!name || !*name || index < 0 || owner < 0 || (c && c->n && c->ents[c->n - 1].index >= index))
        return GIMPI_EBADPARAM;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy || (!c && !(c = s_class_new(self, name)))) {
        free(copy);
        return GIMPI_ENOMEM;
    }
    if (s_grow(self, c) < 0) {
        free(copy);
        return GIMPI_ENOMEM;
    }
    if (len)
        memcpy(copy, data, len);
    c->ents[c->n++] = (entry_t){ .index = index, .owner = owner, .flags = flags,
                                 .encoding = encoding, .data = copy, .len = len };
    s_own(self, owner, 1);
    self->nentries++;
    self->nbytes += len;
    return 0;
}
