/*  gd_vm.c — the host table, the manager slot and the request relay of the virtual
 *  machine (see gd_vm.h).  Pending requests sit in one array in arrival order, at most
 *  GD_VM_MAX_PENDING of them, so every lookup is a short linear scan; the manager takes
 *  the oldest one not yet handed out.  Tokens count up from 1 and are never 0 or
 *  negative, so a VMREP cannot be taken for a status.
 */
#include "groupd/gd_vm.h"
#include "base/gimpi_vmwire.h"
#include "gimpi.h"

#include <assert.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  One VMREQ waiting for its answer. */
typedef struct {
    int32_t token;
    gd_waiter_t who;            /* the requester's routing id and request */
    uint64_t conn;              /* its connection's serial (0: unknown) */
    uint8_t *data;              /* the payload (malloc'ed, NULL when empty) */
    size_t len;
    bool handed;                /* given to the manager by a VMWAIT */
} vmreq_t;

struct gd_vm_t {
    gd_vm_sink_t sink;
    uint8_t *table;             /* the host table (malloc'ed), NULL when never set */
    size_t table_len;
    int32_t nhosts;
    bool have_manager;
    bool need_token;            /* only a HOSTS_SET with `token` makes the manager */
    uint8_t token[GD_TOKEN_SIZE];
    uint8_t mgr_key[256];       /* the manager's routing id ... */
    size_t mgr_keylen;
    uint64_t mgr_conn;          /* ... and connection serial */
    bool parked;                /* a VMWAIT of the manager waits for a request */
    gd_waiter_t wait;
    vmreq_t *reqs;              /* pending requests, oldest first */
    int nreqs;
    int32_t next_token;
};

/*  New relay without a table or a manager. */
gd_vm_t *gd_vm_new(const gd_vm_sink_t *sink)
{
    assert(sink);
    gd_vm_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->sink = *sink;
    self->reqs = calloc(GD_VM_MAX_PENDING, sizeof *self->reqs);
    if (!self->reqs)
        gd_vm_destroy(&self);
    return self;
}

/*  Frees everything (pending requests are not answered: groupd is going). */
void gd_vm_destroy(gd_vm_t **self_p)
{
    assert(self_p);
    gd_vm_t *self = *self_p;
    if (!self)
        return;
    for (int k = 0; k < self->nreqs; k++)
        free(self->reqs[k].data);
    free(self->reqs);
    free(self->table);
    free(self);
    *self_p = NULL;
}

/*  The manager's connection? */
bool gd_vm_is_manager(gd_vm_t *self, const uint8_t *key, size_t keylen, uint64_t conn)
{
    assert(self);
    return self->have_manager && keylen == self->mgr_keylen && conn == self->mgr_conn
        && memcmp(key, self->mgr_key, keylen) == 0;
}

/*  A manager connected? */
bool gd_vm_has_manager(gd_vm_t *self)
{
    assert(self);
    return self->have_manager;
}

/*  Only a HOSTS_SET that carries this token makes its connection the manager. */
void gd_vm_set_token(gd_vm_t *self, const uint8_t token[GD_TOKEN_SIZE])
{
    assert(self);
    assert(token);
    memcpy(self->token, token, GD_TOKEN_SIZE);
    self->need_token = true;
}

/*  True when row is a host table row "dtid name arch speed slots ncpu": a positive dtid,
 *  a name and an architecture without blanks, positive numbers, nothing after them. */
static bool s_row_ok(const char *row)
{
    int dtid, speed, slots, ncpu, end = -1;
    char name[256], arch[64];
    if (sscanf(row, "%d %255s %63s %d %d %d%n", &dtid, name, arch, &speed, &slots, &ncpu,
               &end) != 6 || end < 0 || row[end])
        return false;
    return dtid > 0 && speed > 0 && slots > 0 && ncpu >= 0;
}

/*  True when data (len bytes) is one whole VM_HOSTS frame of exactly nhosts valid rows
 *  with no dtid twice: the table every task's pvm_config reads (gimpi_vmwire.h). */
static bool s_table_ok(int32_t nhosts, const uint8_t *data, size_t len)
{
    vmw_msg_t m;
    if (!len || vmw_frame_len(data) != len || vmw_decode(data, len, &m, NULL, 0) < 0)
        return false;
    bool ok = m.type == VM_HOSTS && m.nfields == 1 && m.v[0];
    int n = 0;
    for (; ok && m.v[0][n]; n++) {
        ok = s_row_ok(m.v[0][n]);
        for (int k = 0; ok && k < n; k++)
            ok = atoi(m.v[0][k]) != atoi(m.v[0][n]);
    }
    vmw_msg_free(&m);
    return ok && n == nhosts;
}

/*  Stores the host table; the first setter (with the token, when one is set) is the
 *  manager. */
int gd_vm_hosts_set(gd_vm_t *self, const uint8_t *key, size_t keylen, uint64_t conn,
                    int32_t nhosts, const uint8_t *data, size_t len, const uint8_t *token,
                    size_t token_len)
{
    assert(self);
    if (nhosts < 0 || (size_t)nhosts > len || len > GD_VM_MAX_TABLE
        || keylen == 0 || keylen > sizeof self->mgr_key
        || (token_len != 0 && token_len != GD_TOKEN_SIZE) || !s_table_ok(nhosts, data, len))
        return GIMPI_EBADPARAM;
    /* the launcher's token (ours, printed at our start) takes the role even from a
       manager replayed from the journal: gimpirun comes back after restarting us */
    bool tok = self->need_token && token_len == GD_TOKEN_SIZE
               && !sodium_memcmp(token, self->token, GD_TOKEN_SIZE);
    if (self->have_manager && !gd_vm_is_manager(self, key, keylen, conn) && !tok)
        return GIMPI_EEXISTS;
    if (!self->have_manager && self->need_token && !tok)
        return GIMPI_EDENIED;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return GIMPI_ENOMEM;
    if (len)
        memcpy(copy, data, len);
    free(self->table);
    self->table = copy;
    self->table_len = len;
    self->nhosts = nhosts;
    if (!self->have_manager || (tok && !gd_vm_is_manager(self, key, keylen, conn))) {
        self->have_manager = true;
        self->parked = false;           /* (the old manager's wait went with it) */
        for (int k = 0; k < self->nreqs; k++)
            self->reqs[k].handed = false;          /* the new manager is given them again */
        memcpy(self->mgr_key, key, keylen);
        self->mgr_keylen = keylen;
        self->mgr_conn = conn;
    }
    return 0;
}

/*  The table as last set. */
int32_t gd_vm_hosts(gd_vm_t *self, const uint8_t **data, size_t *len)
{
    assert(self);
    *data = self->table;
    *len = self->table_len;
    return self->nhosts;
}

/*  Removes request k (its payload freed). */
static void s_drop(gd_vm_t *self, int k)
{
    free(self->reqs[k].data);
    memmove(&self->reqs[k], &self->reqs[k + 1], (size_t)(self->nreqs - k - 1) * sizeof *self->reqs);
    self->nreqs--;
}

/*  Hands the oldest request not handed out yet to the parked VMWAIT, if both exist. */
static void s_dispatch(gd_vm_t *self)
{
    if (!self->parked)
        return;
    for (int k = 0; k < self->nreqs; k++) {
        vmreq_t *r = &self->reqs[k];
        if (r->handed)
            continue;
        r->handed = true;
        self->parked = false;
        if (self->sink.reply)
            self->sink.reply(self->sink.arg, &self->wait, 0, r->token, r->data, r->len);
        return;
    }
}

/*  Queues a VMREQ for the manager. */
int gd_vm_request(gd_vm_t *self, const gd_waiter_t *w, uint64_t conn, const uint8_t *data,
                  size_t len)
{
    assert(self);
    assert(w);
    if (!self->have_manager)
        return GIMPI_ENOHOST;
    if (len > GD_VM_MAX_PAYLOAD)
        return GIMPI_EBADPARAM;
    if (self->nreqs >= GD_VM_MAX_PENDING)
        return GIMPI_EOUTOFRES;
    int mine = 0;
    for (int k = 0; k < self->nreqs; k++)
        mine += self->reqs[k].who.keylen == w->keylen
              && memcmp(self->reqs[k].who.key, w->key, w->keylen) == 0;
    if (mine >= GD_VM_MAX_PER_CONN)
        return GIMPI_EOUTOFRES;
    vmreq_t r = { .who = *w, .conn = conn, .len = len };
    if (len && !(r.data = malloc(len)))
        return GIMPI_ENOMEM;
    if (len)
        memcpy(r.data, data, len);
    if (self->next_token <= 0 || self->next_token == INT32_MAX)
        self->next_token = 0;
    r.token = ++self->next_token;
    self->reqs[self->nreqs++] = r;
    s_dispatch(self);
    return GD_PENDING;
}

/*  Parks the manager's VMWAIT (or answers it at once). */
int gd_vm_wait(gd_vm_t *self, const gd_waiter_t *w, uint64_t conn)
{
    assert(self);
    assert(w);
    if (!gd_vm_is_manager(self, w->key, w->keylen, conn))
        return GIMPI_EDENIED;
    if (self->parked)
        return GIMPI_EALREADY;
    self->wait = *w;
    self->parked = true;
    s_dispatch(self);
    return GD_PENDING;
}

/*  Passes the manager's answer to the requester. */
int gd_vm_answer(gd_vm_t *self, const uint8_t *key, size_t keylen, uint64_t conn,
                 int32_t token, int32_t status, const uint8_t *data, size_t len)
{
    assert(self);
    if (!gd_vm_is_manager(self, key, keylen, conn))
        return GIMPI_EDENIED;
    if (len > GD_VM_MAX_PAYLOAD)
        return GIMPI_EBADPARAM;
    for (int k = 0; k < self->nreqs; k++) {
        vmreq_t *r = &self->reqs[k];
        if (r->token != token || !r->handed)
            continue;
        if (self->sink.reply)
            self->sink.reply(self->sink.arg, &r->who, status, 0, data, len);
        s_drop(self, k);
        return 0;
    }
    return GIMPI_ENOTASK;
}

/*  The manager on a new connection. */
bool gd_vm_rebind(gd_vm_t *self, const uint8_t *key, size_t keylen, uint64_t conn)
{
    assert(self);
    if (!self->have_manager || keylen != self->mgr_keylen || memcmp(key, self->mgr_key, keylen))
        return false;
    self->mgr_conn = conn;
    return true;
}

/*  A connection ended. */
void gd_vm_conn_gone(gd_vm_t *self, uint64_t conn)
{
    assert(self);
    if (!conn)
        return;
    if (self->have_manager && self->mgr_conn == conn) {
        self->have_manager = false;
        self->parked = false;
        while (self->nreqs > 0) {
            if (self->sink.reply)
                self->sink.reply(self->sink.arg, &self->reqs[0].who, GIMPI_ESYSERR, 0, NULL, 0);
            s_drop(self, 0);
        }
    }
    for (int k = self->nreqs - 1; k >= 0; k--)
        if (self->reqs[k].conn == conn)
            s_drop(self, k);
}

/*  Requests pending. */
size_t gd_vm_npending(gd_vm_t *self)
{
    assert(self);
    return (size_t)self->nreqs;
}

/*  The relay's state for the journal's compaction. */
void gd_vm_state(gd_vm_t *self, gd_vm_state_t *st)
{
    assert(self);
    *st = (gd_vm_state_t){ .table = self->table, .len = self->table_len,
                           .nhosts = self->nhosts, .need_token = self->need_token,
                           .token = self->token };
    if (self->have_manager) {
        st->mgr_key = self->mgr_key;
        st->mgr_keylen = self->mgr_keylen;
    }
}

/*  Reads it back into a fresh relay (the manager on connection conn). */
int gd_vm_restore(gd_vm_t *self, const gd_vm_state_t *st, uint64_t conn)
{
    assert(self);
    if (st->len > GD_VM_MAX_TABLE || st->mgr_keylen > sizeof self->mgr_key || st->nhosts < 0
        || (st->len && !s_table_ok(st->nhosts, st->table, st->len)))
        return GIMPI_EBADPARAM;
    uint8_t *copy = st->len ? malloc(st->len) : NULL;
    if (st->len && !copy)
        return GIMPI_ENOMEM;
    if (st->len)
        memcpy(copy, st->table, st->len);
    free(self->table);
    self->table = copy;
    self->table_len = st->len;
    self->nhosts = st->nhosts;
    self->need_token = st->need_token;
    memcpy(self->token, st->token, GD_TOKEN_SIZE);
    self->have_manager = st->mgr_keylen > 0;
    memcpy(self->mgr_key, st->mgr_key, st->mgr_keylen);
    self->mgr_keylen = st->mgr_keylen;
    self->mgr_conn = conn;
    return 0;
}
