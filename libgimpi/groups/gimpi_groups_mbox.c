/*  gimpi_groups_mbox.c — a task's side of groupd's message box (gimpi_group.h, "The
 *  message box"): one request per call (MBOX_PUT, MBOX_GET, MBOX_DEL, MBOX_LIST; doc/
 *  groupd-protocol.md §3.3).  A read with PvmMboxWaitForInfo waits for its deferred
 *  answer as a barrier does, as long as groupd lives (its death, or the connection's
 *  end, ends the wait with GIMPI_ESYSERR).  The list's records are decoded here, trusting
 *  no length.
 *
 *  The task keeps a copy of each entry it owns that is not OverWritable: nobody else may
 *  replace or delete such an entry, and groupd drops it only when the task ends (or the
 *  box is cleared at a halt), so the copy is the entry.  A read of one (without
 *  ReadAndDelete) is answered from the copy, and a put that replaces one with no more
 *  bytes (so that no bound can refuse it: its index is known) is sent without waiting
 *  and without a reply (MBOX_PUTQ); a PING behind every few of them, deferred like a
 *  leave (gimpi_groups.c), is their receipt, so that they too reach groupd before any
 *  message of the task leaves, and before any later request.
 */
#include "groups/groups_internal.h"
#include "base/gimpi_be.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

enum {
    MBOX_MULTI_FLAG = 2,        /* PvmMboxMultiInstance */
    MBOX_OVERWRITE_FLAG = 4,    /* PvmMboxOverWritable */
    MBOX_READDEL_FLAG = 16,     /* PvmMboxReadAndDelete */
    MBOX_WAIT_FLAG = 32,        /* PvmMboxWaitForInfo */
    MBOX_DIRECT_SHIFT = 10,     /* PvmMboxDirectIndex */
};
/*  Puts sent without a reply between two receipts (see s_put_deferred). */
#define MBOX_QUIET_BATCH 16
/*  Bytes of copies a task keeps at most (beyond, new entries are not copied). */
#define MBOX_COPY_MAX ((size_t)16 << 20)

/*  A copy of one of the task's own locked entries. */
typedef struct {
    int32_t encoding;
    size_t len;
    uint8_t data[];
} mcopy_t;

/*  The copies: key index (4 bytes) + class name. */
typedef struct {
    gd_hash_t *h;
    size_t bytes;
} mcache_t;

/*  Frees a copy (hash visitor). */
static void s_copy_free_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    ((mcache_t *)a)->bytes -= ((mcopy_t *)v)->len;
    free(v);
}

/*  Frees the copies (the object's mbox_free). */
static void s_cache_free(void *arg)
{
    mcache_t *c = arg;
    if (!c)
        return;
    gd_hash_foreach(c->h, s_copy_free_cb, c);
    gd_hash_destroy(&c->h);
    free(c);
}

/*  The key of <name, index> in key (4 + GD_MAX_NAME bytes); its length. */
static size_t s_key(uint8_t *key, const char *name, int32_t index)
{
    size_t len = strlen(name);
    memcpy(key, &index, 4);
    memcpy(key + 4, name, len);
    return 4 + len;
}

/*  The copy of <name, index>, or NULL. */
static mcopy_t *s_copy(gimpi_groups_t *self, const char *name, int32_t index)
{
    mcache_t *c = self->mbox;
    if (!c)
        return NULL;
    uint8_t key[4 + GD_MAX_NAME];
    return gd_hash_get(c->h, key, s_key(key, name, index));
}

/*  Forgets the copy of <name, index>. */
static void s_forget(gimpi_groups_t *self, const char *name, int32_t index)
{
    mcache_t *c = self->mbox;
    if (!c)
        return;
    uint8_t key[4 + GD_MAX_NAME];
    mcopy_t *old = gd_hash_del(c->h, key, s_key(key, name, index));
    if (old) {
        c->bytes -= old->len;
        free(old);
    }
}

/*  The task now owns <name, index> as put with flags: keeps a copy when it is locked (and
 *  fits), else forgets any. */
static void s_keep(gimpi_groups_t *self, const char *name, int32_t index, int flags,
                   int encoding, const void *data, size_t len)
{
    s_forget(self, name, index);
    mcache_t *c = self->mbox;
    if ((flags & MBOX_OVERWRITE_FLAG) || (c && c->bytes + len > MBOX_COPY_MAX))
        return;
    if (!c) {
        if (!(c = calloc(1, sizeof *c)) || !(c->h = gd_hash_new())) {
            free(c);
            return;
        }
        self->mbox = c;
        self->mbox_free = s_cache_free;
    }
    mcopy_t *m = malloc(sizeof *m + len);
    uint8_t key[4 + GD_MAX_NAME];
    if (!m)
        return;
    m->encoding = encoding;
    m->len = len;
    if (len)
        memcpy(m->data, data, len);
    if (gd_hash_put(c->h, key, s_key(key, name, index), m) < 0)
        free(m);
    else
        c->bytes += len;
}

/*  Checks a class name and registers (and, as the group queries, looks at the monitor at
 *  most every CHECK_INTERVAL_NS, so that answers from copies stop when groupd is gone):
 *  0 or an error. */
static int s_enter(gimpi_groups_t *self, const char *name)
{
    assert(self);
    if (!name || !*name || strlen(name) > GD_MAX_NAME)
        return GIMPI_EBADPARAM;
    int rc = groups_ready(self);
    if (rc)
        return rc;
    int64_t now = gimpi_now_ns();
    if (now - self->last_monitor_ns >= CHECK_INTERVAL_NS) {
        if (groups_check_monitor(self))
            return GIMPI_ESYSERR;
        self->last_monitor_ns = now;
    }
    return 0;
}

/*  A put that replaces the task's own locked entry at index with no more bytes: its
 *  answer is known, so it goes as MBOX_PUTQ, which groupd does not answer; every
 *  MBOX_QUIET_BATCH of them a PING follows as a deferred request (groups_receipt), whose
 *  answer says groupd has them, so that at most MAX_DEFERRED such batches are in flight
 *  (then the oldest receipt is waited for) and a flush waits for them all.  The index, or
 *  an error. */
static int s_put_deferred(gimpi_groups_t *self, const gd_value_t *v, int32_t index)
{
    int rc;
    if (self->mbox_quiet >= MBOX_QUIET_BATCH) {
        if (self->ndeferred == MAX_DEFERRED
            && (rc = groups_flush_until(self, MAX_DEFERRED - 1)) != 0)
            return rc;
        if ((rc = groups_receipt(self)) != 0)
            return rc;
    }
    int64_t reqid = groups_send_request(self, GD_MBOX_PUTQ, v, 5);
    if (reqid < 0)
        return (int)reqid;
    self->mbox_quiet++;
    return index;
}

/*  MBOX_PUT: stores the entry; its index. */
int gimpi_mbox_put(gimpi_groups_t *self, const char *name, int req, int flags, int encoding,
                   const void *data, size_t len)
{
    if (req < -1 || (len && !data))
        return GIMPI_EBADPARAM;
    if (len > GD_MBOX_MAX_ENTRY)
        return GIMPI_EOUTOFRES;
    int rc = s_enter(self, name);
    if (rc)
        return rc;
    gd_value_t v[5] = { { .data = (const uint8_t *)name, .len = strlen(name) }, { .i = req },
                        { .i = flags }, { .i = encoding },
                        { .data = len ? data : (const void *)"", .len = len } };
    int32_t direct = (int32_t)(((uint32_t)flags >> MBOX_DIRECT_SHIFT)
                               & ((1u << (31 - MBOX_DIRECT_SHIFT)) - 1));
    mcopy_t *mine = req == -1 && !(flags & MBOX_MULTI_FLAG) && !self->sync_leave
                  ? s_copy(self, name, direct) : NULL;
    if (mine && len <= mine->len)
        rc = s_put_deferred(self, v, direct);
    else
        rc = groups_request(self, GD_MBOX_PUT, v, 5, REQUEST_TIMEOUT_MS, NULL, NULL);
    if (rc >= 0)
        s_keep(self, name, rc, flags, encoding, data, len);
    return rc;
}

/*  A malloc'ed copy of len bytes (at least 1 byte allocated), or NULL. */
static void *s_dup(const void *data, size_t len)
{
    void *p = malloc(len ? len : 1);
    if (p && len)
        memcpy(p, data, len);
    return p;
}

/*  MBOX_GET: the entry (a malloc'ed copy) and its index. */
int gimpi_mbox_get(gimpi_groups_t *self, const char *name, int index, int flags,
                   int *encoding, void **data, size_t *len)
{
    assert(encoding && data && len);
    *data = NULL;
    *len = 0;
    if (index < 0)
        return GIMPI_EBADPARAM;
    int rc = s_enter(self, name);
    if (rc)
        return rc;
    mcopy_t *mine = flags & MBOX_READDEL_FLAG ? NULL : s_copy(self, name, index);
    if (mine) {                         /* (FirstAvail from index finds index itself) */
        if (!(*data = s_dup(mine->data, mine->len)))
            return GIMPI_ENOMEM;
        *encoding = mine->encoding;
        *len = mine->len;
        return index;
    }
    gd_value_t v[3] = { { .data = (const uint8_t *)name, .len = strlen(name) }, { .i = index },
                        { .i = flags } };
    gd_multipart_t mp;
    gd_msg_t reply;
    rc = groups_request(self, GD_MBOX_GET, v, 3,
                        flags & MBOX_WAIT_FLAG ? -1 : REQUEST_TIMEOUT_MS, &mp, &reply);
    if (rc >= 0) {
        const gd_value_t *e = &reply.values[3];
        *encoding = reply.values[2].i;
        if (!(*data = s_dup(e->data, e->len)))
            rc = GIMPI_ENOMEM;
        *len = rc >= 0 ? e->len : 0;
        if (flags & MBOX_READDEL_FLAG)
            s_forget(self, name, rc);
    }
    gd_multipart_close(&mp);
    return rc;
}

/*  MBOX_DEL: the index deleted. */
int gimpi_mbox_del(gimpi_groups_t *self, const char *name, int index)
{
    if (index < 0)
        return GIMPI_EBADPARAM;
    int rc = s_enter(self, name);
    if (rc)
        return rc;
    s_forget(self, name, index);
    gd_value_t v[3] = { { .data = (const uint8_t *)name, .len = strlen(name) }, { .i = index },
                        { .i = 0 } };
    return groups_request(self, GD_MBOX_DEL, v, 3, REQUEST_TIMEOUT_MS, NULL, NULL);
}

/*  Reads a big-endian Int4 at *p if 4 bytes remain before end; false otherwise. */
static bool s_int(const uint8_t **p, const uint8_t *end, int32_t *out)
{
    if (end - *p < 4)
        return false;
    *out = (int32_t)gimpi_be_get32(*p);
    *p += 4;
    return true;
}

/*  Decodes n class records of blob into one block: the array, then every class's three
 *  int arrays, then the names.  NULL when the blob does not hold them (or ENOMEM). */
static gimpi_mbox_class_t *s_decode(const uint8_t *blob, size_t len, int n)
{
    const uint8_t *p = blob, *end = blob + len;
    size_t ints = 0, chars = 0;
    for (int k = 0; k < n; k++) {       /* first pass: check and size */
        int32_t nl, ne;
        if (!s_int(&p, end, &nl) || nl < 0 || nl > end - p || memchr(p, 0, (size_t)nl))
            return NULL;
        p += nl;
        chars += (size_t)nl + 1;
        if (!s_int(&p, end, &ne) || ne < 0 || ne > (end - p) / 12)
            return NULL;
        p += 12 * (size_t)ne;
        ints += 3 * (size_t)ne;
    }
    if (p != end)
        return NULL;
    size_t head = ((size_t)n + 1) * sizeof(gimpi_mbox_class_t);
    gimpi_mbox_class_t *cl = malloc(head + ints * sizeof(int) + chars + 1);
    if (!cl)
        return NULL;
    int *ip = (int *)((char *)cl + head);
    char *cp = (char *)(ip + ints);
    p = blob;
    for (int k = 0; k < n; k++) {
        int32_t nl = 0, ne = 0;
        s_int(&p, end, &nl);
        cl[k].name = cp;
        memcpy(cp, p, (size_t)nl);
        cp[nl] = 0;
        cp += nl + 1;
        p += nl;
        s_int(&p, end, &ne);
        cl[k].nentries = ne;
        cl[k].indices = ip;
        cl[k].owners = ip + ne;
        cl[k].flags = ip + 2 * ne;
        for (int j = 0; j < ne; j++) {
            s_int(&p, end, &cl[k].indices[j]);
            s_int(&p, end, &cl[k].owners[j]);
            s_int(&p, end, &cl[k].flags[j]);
        }
        ip += 3 * ne;
    }
    return cl;
}

/*  MBOX_LIST: the matching classes. */
int gimpi_mbox_list(gimpi_groups_t *self, const char *pattern, gimpi_mbox_class_t **classes,
                    int *n)
{
    assert(self && classes && n);
    *classes = NULL;
    *n = 0;
    if (!pattern)
        pattern = "";
    if (strlen(pattern) > GD_MAX_NAME)
        return GIMPI_EBADPARAM;
    int rc = groups_connect(self);      /* (listing needs no registration: tools list) */
    if (rc)
        return rc;
    gd_value_t v = { .data = (const uint8_t *)pattern, .len = strlen(pattern) };
    gd_multipart_t mp;
    gd_msg_t reply;
    rc = groups_request(self, GD_MBOX_LIST, &v, 1, REQUEST_TIMEOUT_MS, &mp, &reply);
    if (rc >= 0 && !(*classes = s_decode(reply.values[2].data, reply.values[2].len, rc)))
        rc = GIMPI_EBADMSG;
    if (rc >= 0)
        *n = rc;
    gd_multipart_close(&mp);
    return rc;
}
