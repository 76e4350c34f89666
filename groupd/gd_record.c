/*  gd_record.c — what groupd's request handler journals (see gd_record.h): JR_REQ records
 *  of the requests that change its state with their replies, JR_REPLY of the replies sent
 *  later, JR_GONE of the tasks whose connection ended, and the table of replies that
 *  answers a request sent again after a restart.
 */
#include "config.h"
#include "groupd/gd_record.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/*  Journaled commands. */
bool gd_record_journaled(uint8_t cmd)
{
    switch (cmd) {
    case GD_REGISTER: case GD_REGISTER_TID: case GD_UNREGISTER: case GD_JOIN: case GD_LEAVE:
    case GD_BARRIER: case GD_FREEZE: case GD_RESERVE: case GD_HOSTS_SET: case GD_TASKINFO:
    case GD_VMREQ: case GD_VMWAIT: case GD_VMREP: case GD_TASK_EXIT: case GD_MBOX_PUT:
    case GD_MBOX_GET: case GD_MBOX_DEL: case GD_MBOX_PUTQ: case GD_SPAWN_EXIT:
        return true;
    default:
        return false;
    }
}

/*  A write failed: the journal is closed (said once); groupd goes on without one. */
static void s_failed(groupd_t *self)
{
    if (!self->journal_failed && self->log)
        fprintf(self->log, "groupd: cannot write journal %s: %s; going on without one\n",
                gd_journal_path(self->journal), strerror(errno));
    self->journal_failed = true;
    gd_journal_destroy(&self->journal, true);
}

/*  Appends a record (unless replaying or without a journal). */
static void s_append(groupd_t *self, uint8_t type, const gd_jfield_t *f, int n)
{
    if (self->replaying || !self->journal)
        return;
    if (gd_journal_append(self->journal, type, f, n) < 0)
        s_failed(self);
}

/*  The tasks the request's handling ended, after its record. */
static void s_flush_gone(groupd_t *self)
{
    for (int k = 0; k < self->jr.ngone; k++)
        s_append(self, GD_JR_GONE, &(gd_jfield_t){ .i = self->jr.gone[k] }, 1);
    self->jr.ngone = 0;
}

/*  Writes the JR_REQ of the request being handled, with its reply (NULL: none). */
static void s_write_req(groupd_t *self, const uint8_t *reply, size_t rlen)
{
    uint8_t *req = NULL;
    size_t len = gd_journal_pack(self->jr.frames + 1, self->jr.n - 1, &req);
    gd_jfield_t f[3] = { { .data = self->jr.frames[0].data, .len = self->jr.frames[0].len },
                         { .data = req, .len = len }, { .data = reply, .len = rlen } };
    if (len)
        s_append(self, GD_JR_REQ, f, 3);
    else if (!self->replaying && self->journal)
        s_failed(self);
    free(req);
    self->jr.written = true;
    s_flush_gone(self);
}

/*  A journaled request begins. */
void gd_record_begin(groupd_t *self, const gd_frame_t *frames, int nframes, const gd_msg_t *msg)
{
    assert(self);
    memset(&self->jr, 0, sizeof self->jr);
    self->jr.active = true;
    self->jr.frames = frames;
    self->jr.n = nframes;
    self->jr.reqid = msg->reqid;
    self->jr.cmd = msg->kind;
}

/*  A reply is about to go out. */
void gd_record_reply(groupd_t *self, const uint8_t *key, size_t keylen, const gd_frame_t *frames,
                     int n)
{
    assert(self);
    gd_msg_t head;
    if (!self->dedup || n < 1 || gd_header_decode(&frames[0], &head) != GD_OK
        || !gd_record_journaled(head.kind & ~GD_REPLY_FLAG))
        return;
    uint8_t *packed = NULL;
    size_t len = gd_journal_pack(frames, n, &packed);
    if (!len)
        return;
    bool own = self->jr.active && !self->jr.written && head.reqid == self->jr.reqid
            && keylen == self->jr.frames[0].len && !memcmp(key, self->jr.frames[0].data, keylen);
    if (own)
        s_write_req(self, packed, len);
    else
        s_append(self, GD_JR_REPLY, (gd_jfield_t[2]){ { .data = key, .len = keylen },
                                                      { .data = packed, .len = len } }, 2);
    gd_dedup_put(self->dedup, key, keylen, head.reqid, packed, len);
    free(packed);
}

/*  The request has been handled. */
void gd_record_end(groupd_t *self)
{
    assert(self);
    if (self->jr.active && !self->jr.written) {
        s_write_req(self, NULL, 0);
        /* pending: its reply comes later; a quiet put has none (no frames: dropped if sent
           again) */
        static const uint8_t none[4];
        bool quiet = self->jr.cmd == GD_MBOX_PUTQ;
        if (self->dedup)
            gd_dedup_put(self->dedup, self->jr.frames[0].data, self->jr.frames[0].len,
                         self->jr.reqid, quiet ? none : NULL, quiet ? sizeof none : 0);
    }
    s_flush_gone(self);
    self->jr.active = false;
}

/*  A task ended by its connection. */
void gd_record_gone(groupd_t *self, int32_t tid)
{
    assert(self);
    if (self->jr.active && !self->jr.written
        && self->jr.ngone < (int)(sizeof self->jr.gone / sizeof self->jr.gone[0])) {
        self->jr.gone[self->jr.ngone++] = tid;
        return;
    }
    s_append(self, GD_JR_GONE, &(gd_jfield_t){ .i = tid }, 1);
}

/*  A request sent again after a restart. */
bool gd_record_dup(groupd_t *self, const uint8_t *key, size_t keylen, const gd_msg_t *msg)
{
    assert(self);
    if (!self->restarted || !self->dedup || !gd_record_journaled(msg->kind))
        return false;
    const uint8_t *reply;
    size_t len;
    int rc = gd_dedup_get(self->dedup, key, keylen, msg->reqid, &reply, &len);
    if (rc == GD_DEDUP_NONE)
        return false;
    if (self->verbose)
        fprintf(stderr, "groupd: %s #%u again: %s\n", gd_kind_name(msg->kind),
                (unsigned)msg->reqid, rc == GD_DEDUP_PENDING ? "still waiting, dropped"
                                                            : "answered as before");
    gd_frame_t frames[GD_JOURNAL_MAX_PACKED];
    int n = rc == GD_DEDUP_REPLY ? gd_journal_unpack(reply, len, frames, GD_JOURNAL_MAX_PACKED)
                                 : 0;
    if (n > 0)
        gd_send_frames(self->router, &(gd_frame_t){ key, keylen }, 1, frames, n, ZMQ_DONTWAIT);
    return true;
}

/*  A pseudo connection id: FNV-1a of the routing id with the top bit set (live ids count
 *  up from 1 and never get there). */
uint64_t gd_record_pseudo_conn(const uint8_t *key, size_t keylen)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t k = 0; k < keylen; k++)
        h = (h ^ key[k]) * 0x100000001b3ULL;
    return h | (1ULL << 63);
}

/* ------------------------------------------------------------------ compaction */

/*  Where the dump goes, and whether a write failed. */
typedef struct {
    groupd_t *gd;
    gd_journal_t *out;
    int rc;
} s_dump_t;

/*  Appends a record of the dump. */
static void s_put(s_dump_t *d, uint8_t type, const gd_jfield_t *f, int n)
{
    if (d->rc == 0 && gd_journal_append(d->out, type, f, n) < 0)
        d->rc = -1;
}

static void s_counters_cb(void *arg, uint64_t seq, int32_t next_tid)
{
    s_put(arg, GD_JR_COUNTERS, (gd_jfield_t[2]){ { .q = seq }, { .i = next_tid } }, 2);
}

/*  A task: REGISTER's data as one blob (proc, address, port, OS pid, host). */
static void s_task_cb(void *arg, const uint8_t *key, size_t keylen, int32_t tid,
                      const gd_taskinfo_t *info, int32_t ptid, const char *name)
{
    uint8_t blob[48 + GD_MAX_TEXT];
    size_t hl = strnlen(info->host, GD_MAX_TEXT);
    memcpy(blob, info->proc, 24);
    memcpy(blob + 24, info->addr, 16);
    gimpi_be_put32(blob + 40, (uint32_t)info->port);
    gimpi_be_put32(blob + 44, (uint32_t)info->ospid);
    memcpy(blob + 48, info->host, hl);
    s_put(arg, GD_JR_TASK, (gd_jfield_t[5]){ { .data = key, .len = keylen }, { .i = tid },
                                             { .data = blob, .len = 48 + hl }, { .i = ptid },
                                             { .data = (const uint8_t *)name,
                                               .len = strnlen(name, GD_MAX_TEXT) } }, 5);
}

static void s_group_cb(void *arg, const char *name, uint64_t version, int32_t frozen, bool dead,
                       const int32_t *slots, int nslots)
{
    uint8_t *b = malloc(4 * (size_t)nslots + 1);
    if (!b) {
        ((s_dump_t *)arg)->rc = -1;
        return;
    }
    for (int k = 0; k < nslots; k++)
        gimpi_be_put32(b + 4 * k, (uint32_t)slots[k]);
    s_put(arg, GD_JR_GROUP, (gd_jfield_t[5]){ { .data = (const uint8_t *)name, .len = strlen(name) },
                                              { .q = version }, { .i = frozen }, { .i = dead },
                                              { .data = b, .len = 4 * (size_t)nslots } }, 5);
    free(b);
}

static void s_block_cb(void *arg, int32_t base, int32_t n, const uint8_t *used, size_t usedlen,
                       const uint8_t token[GD_TOKEN_SIZE], const char *key, size_t keylen)
{
    s_put(arg, GD_JR_BLOCK, (gd_jfield_t[5]){ { .i = base }, { .i = n },
                                              { .data = used, .len = usedlen },
                                              { .data = token, .len = GD_TOKEN_SIZE },
                                              { .data = (const uint8_t *)key, .len = keylen } }, 5);
}

static void s_mbox_cb(void *arg, const char *name, int32_t index, int32_t owner, int32_t flags,
                      int32_t encoding, const uint8_t *data, size_t len)
{
    s_put(arg, GD_JR_MBOX, (gd_jfield_t[6]){ { .data = (const uint8_t *)name, .len = strlen(name) },
                                             { .i = index }, { .i = owner }, { .i = flags },
                                             { .i = encoding }, { .data = data, .len = len } }, 6);
}

/*  A reply a client may ask for again (pending ones are not kept: their requests come
 *  again and are run then, as the episodes they wait in are not kept either).  Only one
 *  the replay takes back (a packed list of one frame or more: gd_replay.c's s_reply):
 *  an empty list written here made the compacted journal unreadable (fuzz_gd_journal). */
static void s_dedup_cb(void *arg, const uint8_t *key, size_t keylen, uint32_t reqid,
                       const uint8_t *reply, size_t len)
{
    gd_frame_t rep[GD_JOURNAL_MAX_PACKED];
    if (len && keylen && gd_journal_unpack(reply, len, rep, GD_JOURNAL_MAX_PACKED) >= 1)
        s_put(arg, GD_JR_DEDUP, (gd_jfield_t[3]){ { .data = key, .len = keylen },
                                                  { .i = (int32_t)reqid },
                                                  { .data = reply, .len = len } }, 3);
}

/*  The state now, as records that rebuild it (gd_journal_rewrite's dump). */
int gd_record_dump(void *arg, gd_journal_t *out)
{
    groupd_t *self = arg;
    s_dump_t d = { self, out, 0 };
    s_put(&d, GD_JR_HEAD, (gd_jfield_t[2]){ { .i = GD_JOURNAL_FORMAT },
                                            { .q = (uint64_t)gimpi_now_ms() } }, 2);
    if (self->term > 1)
        s_put(&d, GD_JR_TERM, &(gd_jfield_t){ .i = self->term }, 1);
    gd_registry_dumper_t rd = { s_counters_cb, s_task_cb, s_group_cb, s_block_cb, &d };
    gd_registry_dump(self->reg, &rd);
    gd_vm_state_t vs;
    gd_vm_state(self->vm, &vs);
    if (vs.len || vs.mgr_keylen || vs.need_token)
        s_put(&d, GD_JR_HOSTS, (gd_jfield_t[5]){ { .i = vs.nhosts },
                                                 { .data = vs.table, .len = vs.len },
                                                 { .i = (vs.mgr_keylen ? 1 : 0)
                                                        | (vs.need_token ? 2 : 0) },
                                                 { .data = vs.mgr_key, .len = vs.mgr_keylen },
                                                 { .data = vs.token, .len = GD_TOKEN_SIZE } }, 5);
    gd_mbox_dump(self->mbox, s_mbox_cb, &d);
    if (self->dedup)
        gd_dedup_foreach(self->dedup, s_dedup_cb, &d);
    return d.rc;
}