/*  gd_replay.c — reading groupd's journal back (see gd_replay.h).
 */
#include "config.h"
#include "groupd/gd_replay.h"
#include "groupd/gd_record.h"

#include <stdlib.h>
#include <string.h>

/*  A request again, through the handler (with its recorded reply at hand: a RESERVE's
 *  token). */
static int s_request(groupd_t *self, const gd_jrec_t *rec)
{
    gd_frame_t req[1 + GD_JOURNAL_MAX_PACKED], rep[GD_JOURNAL_MAX_PACKED];
    int n = gd_journal_unpack(rec->f[1].data, rec->f[1].len, req + 1, GD_JOURNAL_MAX_PACKED);
    int nr = rec->f[2].len ? gd_journal_unpack(rec->f[2].data, rec->f[2].len, rep,
                                               GD_JOURNAL_MAX_PACKED) : 0;
    if (n < 1 || nr < 0 || rec->f[0].len == 0)
        return -1;
    req[0] = (gd_frame_t){ rec->f[0].data, rec->f[0].len };
    self->replay_reply = rep;
    self->replay_nreply = nr;
    gd_serve_request(self, req, n + 1, false, -1);
    self->replay_reply = NULL;
    self->replay_nreply = 0;
    return 0;
}

/*  A reply, into the table of replies. */
static int s_reply(groupd_t *self, const uint8_t *key, size_t keylen, const uint8_t *reply,
                   size_t len, bool check)
{
    gd_frame_t rep[GD_JOURNAL_MAX_PACKED];
    gd_msg_t head;
    int n = gd_journal_unpack(reply, len, rep, GD_JOURNAL_MAX_PACKED);
    if (n < 1 || gd_header_decode(&rep[0], &head) != GD_OK || keylen == 0 || !self->dedup)
        return check ? -1 : 0;
    return gd_dedup_put(self->dedup, key, keylen, head.reqid, reply, len) < 0 ? -1 : 0;
}

/*  A bounded copy of a text field, NUL-terminated. */
static void s_text(char *out, size_t size, const gd_jfield_t *f)
{
    size_t l = f->len < size - 1 ? f->len : size - 1;
    memcpy(out, f->data, l);
    out[l] = 0;
}

/*  A compacted task. */
static int s_task(groupd_t *self, const gd_jrec_t *rec)
{
    const gd_jfield_t *f = rec->f;
    if (f[2].len < 48 || f[2].len > 48 + GD_MAX_TEXT)
        return -1;
    gd_taskinfo_t info = { 0 };
    memcpy(info.proc, f[2].data, 24);
    memcpy(info.addr, f[2].data + 24, 16);
    info.port = (int32_t)gimpi_be_get32(f[2].data + 40);
    info.ospid = (int32_t)gimpi_be_get32(f[2].data + 44);
    memcpy(info.host, f[2].data + 48, f[2].len - 48);
    char name[GD_MAX_TEXT + 1];
    s_text(name, sizeof name, &f[4]);
    return gd_registry_restore_task(self->reg, f[0].data, f[0].len, f[1].i, &info, f[3].i, name)
           ? -1 : 0;
}

/*  A compacted group. */
static int s_group(groupd_t *self, const gd_jrec_t *rec)
{
    const gd_jfield_t *f = rec->f;
    if (f[4].len % 4 || f[0].len == 0 || f[0].len > GD_MAX_NAME || memchr(f[0].data, 0, f[0].len))
        return -1;
    int n = (int)(f[4].len / 4);
    int32_t *slots = malloc(4 * (size_t)n + 4);
    char *name = malloc(f[0].len + 1);
    int rc = -1;
    if (slots && name) {
        for (int k = 0; k < n; k++)
            slots[k] = (int32_t)gimpi_be_get32(f[4].data + 4 * k);
        s_text(name, f[0].len + 1, &f[0]);
        rc = gd_registry_restore_group(self->reg, name, f[1].q, f[2].i, f[3].i != 0, slots, n)
             ? -1 : 0;
    }
    free(slots);
    free(name);
    return rc;
}

/*  The relay's host table and manager. */
static int s_hosts(groupd_t *self, const gd_jrec_t *rec)
{
    const gd_jfield_t *f = rec->f;
    if (f[4].len != GD_TOKEN_SIZE || ((f[2].i & 1) != 0) != (f[3].len != 0))
        return -1;
    gd_vm_state_t st = { .table = f[1].data, .len = f[1].len, .nhosts = f[0].i,
                         .mgr_key = f[3].data, .mgr_keylen = f[3].len,
                         .need_token = (f[2].i & 2) != 0, .token = f[4].data };
    return gd_vm_restore(self->vm, &st, gd_record_pseudo_conn(f[3].data, f[3].len)) ? -1 : 0;
}

/*  A message-box entry. */
static int s_mbox(groupd_t *self, const gd_jrec_t *rec)
{
    const gd_jfield_t *f = rec->f;
    if (f[0].len == 0 || f[0].len > GD_MAX_NAME || memchr(f[0].data, 0, f[0].len))
        return -1;
    char *name = malloc(f[0].len + 1);
    if (!name)
        return -1;
    s_text(name, f[0].len + 1, &f[0]);
    int rc = gd_mbox_restore(self->mbox, name, f[1].i, f[2].i, f[3].i, f[4].i, f[5].data,
                             f[5].len);
    free(name);
    return rc ? -1 : 0;
}

/*  One record. */
int gd_replay_apply(void *arg, const gd_jrec_t *rec)
{
    groupd_t *self = arg;
    const gd_jfield_t *f = rec->f;
    switch (rec->type) {
    case GD_JR_HEAD:
        return f[0].i == GD_JOURNAL_FORMAT ? 0 : -1;
    case GD_JR_GONE:
        gd_serve_task_gone(self, f[0].i);
        return 0;
    case GD_JR_TERM:
        self->term = f[0].i > self->term ? f[0].i : self->term;
        return 0;
    case GD_JR_REPLY:
        return s_reply(self, f[0].data, f[0].len, f[1].data, f[1].len, true);
    case GD_JR_DEDUP:
        return s_reply(self, f[0].data, f[0].len, f[2].data, f[2].len, true);
    case GD_JR_COUNTERS:
        gd_registry_restore_counters(self->reg, f[0].q, f[1].i);
        return 0;
    case GD_JR_TASK:
        return s_task(self, rec);
    case GD_JR_GROUP:
        return s_group(self, rec);
    case GD_JR_BLOCK:
        return f[3].len != GD_TOKEN_SIZE
               || gd_registry_restore_block(self->reg, f[0].i, f[1].i, f[2].data, f[2].len,
                                            f[3].data, (const char *)f[4].data, f[4].len)
               ? -1 : 0;
    case GD_JR_HOSTS:
        return s_hosts(self, rec);
    case GD_JR_MBOX:
        return s_mbox(self, rec);
    default:                            /* GD_JR_REQ */
        return s_request(self, rec);
    }
}
