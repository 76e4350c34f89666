/*  gd_proto.c — the group-control codec, generated from the tables in gd_proto.h.
 *
 *  The command and event rows are expanded once into static arrays; decoding, validation,
 *  encoding and printing walk a row's layout string instead of repeating per-command
 *  knowledge.  The decoders are pure and bounded (the fuzzer's target); the last part of
 *  the file holds the thin ZeroMQ send/receive helpers and the per-user default endpoint.
 */
#include "groups/gd_proto.h"
#include "base/gimpi_bytes.h"
#include "base/gimpi_key.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#define GD_X_CMD_ROW(name, code, req, rep) { code, #name, req, rep },
static const gd_command_info_t s_commands[] = { GD_COMMANDS(GD_X_CMD_ROW) };
#undef GD_X_CMD_ROW

#define GD_X_EV_ROW(name, code) { code, #name },
static const struct { uint8_t code; const char *name; } s_events[] = { GD_EVENTS(GD_X_EV_ROW) };
#undef GD_X_EV_ROW

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/*  Text for a gd_err_t. */
const char *gd_strerror(int err)
{
    switch (err) {
    case GD_OK: return "ok";
    case GD_ERR_HEADER: return "not a gimpi group-control header";
    case GD_ERR_VERSION: return "unsupported protocol version";
    case GD_ERR_COMMAND: return "unknown command";
    case GD_ERR_FRAMES: return "wrong number of frames";
    case GD_ERR_SIZE: return "frame of the wrong size";
    case GD_ERR_TEXT: return "NUL byte inside a name";
    default: return "unknown error";
    }
}

/*  Row of a command, or NULL. */
const gd_command_info_t *gd_command_info(uint8_t code)
{
    for (size_t i = 0; i < COUNT_OF(s_commands); i++)
        if (s_commands[i].code == code)
            return &s_commands[i];
    return NULL;
}

/*  Name of an event, or NULL. */
const char *gd_event_name(uint8_t code)
{
    for (size_t i = 0; i < COUNT_OF(s_events); i++)
        if (s_events[i].code == code)
            return s_events[i].name;
    return NULL;
}

/*  Name of a command, reply or event. */
const char *gd_kind_name(uint8_t kind)
{
    const gd_command_info_t *info = gd_command_info(kind & (uint8_t)~GD_REPLY_FLAG);
    if (info && kind != GD_BAD_KIND)
        return info->name;
    const char *ev = gd_event_name(kind);
    return ev ? ev : "?";
}

/* ------------------------------------------------------------------ header */

/*  Writes 'G' 'D' version kind reqid. */
void gd_header_encode(uint8_t out[GD_HDR_SIZE], uint8_t kind, uint32_t reqid)
{
    out[0] = 'G';
    out[1] = 'D';
    out[2] = GD_VERSION;
    out[3] = kind;
    gimpi_be_put32(out + 4, reqid);
}

/*  Reads a header; kind/reqid are filled even when the version is wrong. */
int gd_header_decode(const gd_frame_t *frame, gd_msg_t *msg)
{
    memset(msg, 0, sizeof *msg);
    if (!frame || frame->len != GD_HDR_SIZE || frame->data[0] != 'G' || frame->data[1] != 'D')
        return GD_ERR_HEADER;
    msg->version = frame->data[2];
    msg->kind = frame->data[3];
    msg->reqid = gimpi_be_get32(frame->data + 4);
    if (msg->version != GD_VERSION)
        return GD_ERR_VERSION;
    return GD_OK;
}

/* ------------------------------------------------------------------ values */

/*  Checks one frame against one layout letter and stores its value. */
static int s_value_decode(char type, const gd_frame_t *f, gd_value_t *v)
{
    memset(v, 0, sizeof *v);
    v->type = type;
    v->data = f->data;
    v->len = f->len;
    switch (type) {
    case 'i':
        if (f->len != 4)
            return GD_ERR_SIZE;
        v->i = (int32_t)gimpi_be_get32(f->data);
        return GD_OK;
    case 'q':
        if (f->len != 8)
            return GD_ERR_SIZE;
        v->q = gimpi_be_get64(f->data);
        return GD_OK;
    case 'p':
        return f->len == 24 ? GD_OK : GD_ERR_SIZE;
    case 'a':
        return f->len == 16 ? GD_OK : GD_ERR_SIZE;
    case 'k':
        return f->len == GD_TOKEN_SIZE ? GD_OK : GD_ERR_SIZE;
    case 'n':
    case 't':
        if (f->len > (type == 'n' ? (size_t)GD_MAX_NAME : (size_t)GD_MAX_TEXT))
            return GD_ERR_SIZE;
        if (f->len && memchr(f->data, 0, f->len))
            return GD_ERR_TEXT;
        return GD_OK;
    case 'b':
        return f->len <= (size_t)GD_MAX_BLOB ? GD_OK : GD_ERR_SIZE;
    default:
        return GD_ERR_COMMAND;
    }
}

/*  Matches frames to a layout; '*' takes all remaining frames as blobs. */
int gd_values_decode(const char *layout, const gd_frame_t *frames, int nframes, gd_msg_t *msg)
{
    int n = 0;
    msg->nvalues = 0;
    msg->nextra = 0;
    msg->extra_first = 0;
    for (const char *t = layout; *t; t++) {
        if (*t == '*') {
            msg->extra_first = n;
            msg->nextra = nframes - n;
            for (int k = n; k < nframes; k++)
                if (frames[k].len > (size_t)GD_MAX_BLOB)
                    return GD_ERR_SIZE;
            return GD_OK;
        }
        if (n >= nframes)
            return GD_ERR_FRAMES;
        if (msg->nvalues >= GD_MAX_FRAMES)
            return GD_ERR_FRAMES;
        int rc = s_value_decode(*t, &frames[n], &msg->values[msg->nvalues]);
        if (rc)
            return rc;
        msg->nvalues++;
        n++;
    }
    return n == nframes ? GD_OK : GD_ERR_FRAMES;
}

/*  A whole request: header, known command, frames matching its layout. */
int gd_request_decode(const gd_frame_t *frames, int nframes, gd_msg_t *msg)
{
    if (nframes < 1)
        return GD_ERR_HEADER;
    int rc = gd_header_decode(&frames[0], msg);
    if (rc)
        return rc;
    const gd_command_info_t *info = gd_command_info(msg->kind);
    if (!info)
        return GD_ERR_COMMAND;
    return gd_values_decode(info->request, frames + 1, nframes - 1, msg);
}

/*  A reply: [header][i status][q version] + extras when status >= 0. */
int gd_reply_decode(uint8_t cmd, const gd_frame_t *frames, int nframes, gd_msg_t *msg)
{
    if (nframes < 1)
        return GD_ERR_HEADER;
    int rc = gd_header_decode(&frames[0], msg);
    if (rc)
        return rc;
    if (msg->kind != (cmd | GD_REPLY_FLAG) && msg->kind != GD_BAD_KIND)
        return GD_ERR_COMMAND;
    const gd_command_info_t *info = gd_command_info(cmd);
    if (!info)
        return GD_ERR_COMMAND;
    if (nframes < 3)
        return GD_ERR_FRAMES;
    gd_msg_t head;
    rc = gd_values_decode("iq", frames + 1, 2, &head);
    if (rc)
        return rc;
    const char *extra = head.values[0].i >= 0 && msg->kind != GD_BAD_KIND ? info->reply : "";
    rc = gd_values_decode(extra, frames + 3, nframes - 3, msg);
    if (rc)
        return rc;
    /* status and version go first; shift the extras behind them */
    if (msg->nvalues + 2 > GD_MAX_FRAMES)
        return GD_ERR_FRAMES;
    memmove(&msg->values[2], &msg->values[0], (size_t)msg->nvalues * sizeof msg->values[0]);
    msg->values[0] = head.values[0];
    msg->values[1] = head.values[1];
    msg->nvalues += 2;
    msg->extra_first += 3;
    return GD_OK;
}

/*  True for an event topic: "G" + a group name, "T" + an Int4 tid, or "H". */
bool gd_event_topic_ok(const uint8_t *topic, size_t len)
{
    if (len < 1)
        return false;
    switch (topic[0]) {
    case 'G': return len <= (size_t)GD_MAX_NAME + 1;
    case 'T': return len == 5;
    case 'H': return len == 1;
    default: return false;
    }
}

/*  An event: [topic][header][q prev][q version][i inst][i tid][i arg]. */
int gd_event_decode(const gd_frame_t *frames, int nframes, gd_msg_t *msg)
{
    if (nframes < 2)
        return GD_ERR_FRAMES;
    if (!gd_event_topic_ok(frames[0].data, frames[0].len))
        return GD_ERR_HEADER;
    int rc = gd_header_decode(&frames[1], msg);
    if (rc)
        return rc;
    if (!gd_event_name(msg->kind))
        return GD_ERR_COMMAND;
    return gd_values_decode(GD_EVENT_LAYOUT, frames + 2, nframes - 2, msg);
}

/*  Encodes values per layout; i/q values are written into buf (8 bytes each). */
int gd_values_encode(const char *layout, const gd_value_t *values, int nvalues,
                     uint8_t *buf, gd_frame_t *out)
{
    int n = 0;
    for (const char *t = layout; *t; t++) {
        if (*t == '*') {
            for (; n < nvalues; n++) {
                out[n].data = values[n].data;
                out[n].len = values[n].len;
            }
            return n;
        }
        if (n >= nvalues)
            return GD_ERR_FRAMES;
        const gd_value_t *v = &values[n];
        switch (*t) {
        case 'i':
            gimpi_be_put32(buf, (uint32_t)v->i);
            out[n].data = buf;
            out[n].len = 4;
            buf += 8;
            break;
        case 'q':
            gimpi_be_put64(buf, v->q);
            out[n].data = buf;
            out[n].len = 8;
            buf += 8;
            break;
        default: {
            gd_frame_t f = { v->data, v->len };
            gd_value_t check;
            int rc = s_value_decode(*t, &f, &check);
            if (rc)
                return rc;
            out[n] = f;
        }
        }
        n++;
    }
    return n == nvalues ? n : GD_ERR_FRAMES;
}

/*  One-line description of a message. */
const char *gd_msg_format(const gd_msg_t *msg, char *buf, size_t size)
{
    size_t used = 0;
    int w = snprintf(buf, size, "%s%s #%u", msg->kind & GD_REPLY_FLAG ? "reply " : "",
                     gd_kind_name(msg->kind), (unsigned)msg->reqid);
    used = w > 0 ? (size_t)w : 0;
    for (int k = 0; k < msg->nvalues && used < size; k++) {
        const gd_value_t *v = &msg->values[k];
        switch (v->type) {
        case 'i': w = snprintf(buf + used, size - used, " %d", (int)v->i); break;
        case 'q': w = snprintf(buf + used, size - used, " v%llu", (unsigned long long)v->q); break;
        case 'n':
        case 't':
            w = snprintf(buf + used, size - used, " '%.*s'", (int)(v->len > 64 ? 64 : v->len),
                         (const char *)v->data);
            break;
        default: w = snprintf(buf + used, size - used, " [%zu bytes]", v->len); break;
        }
        used += w > 0 ? (size_t)w : 0;
    }
    if (msg->nextra && used < size)
        snprintf(buf + used, size - used, " +%d frames", msg->nextra);
    return buf;
}

/* ------------------------------------------------------------------ group records */

/*  Appends a big-endian Int4. */
static void s_put_i32(gimpi_bytes_t *w, int32_t v)
{
    gimpi_bytes_put32(w, (uint32_t)v);
}

/*  Appends a Uint2-length-prefixed string. */
static void s_put_str(gimpi_bytes_t *w, const char *s)
{
    size_t len = strlen(s);
    if (len > 0xFFFF)
        len = 0xFFFF;
    gimpi_bytes_put16(w, (uint16_t)len);
    gimpi_bytes_put(w, s, len);
}

/*  Hands over what w wrote (and frees w): its length, with the bytes in *out, or 0 with
 *  *out NULL when any put failed or w is NULL. */
static size_t s_finish(gimpi_bytes_t *w, uint8_t **out)
{
    size_t len = 0;
    *out = w ? gimpi_bytes_take(w, &len) : NULL;
    gimpi_bytes_destroy(&w);
    return len;
}

/*  Encodes a STAT record. */
size_t gd_groupstat_encode(const gd_groupstat_t *st, uint8_t **out)
{
    gimpi_bytes_t *w = gimpi_bytes_new(0);
    if (!w)
        return s_finish(w, out);
    s_put_str(w, st->name);
    int32_t head[] = { st->size, st->frozen, st->dead, (int32_t)(st->version >> 32),
                       (int32_t)st->version, st->bar_count, st->bar_arrived, st->frz_count,
                       st->frz_arrived, st->nmembers, st->nbar_waiters, st->nfrz_waiters };
    for (size_t i = 0; i < COUNT_OF(head); i++)
        s_put_i32(w, head[i]);
    for (int i = 0; i < st->nmembers; i++) {
        s_put_i32(w, st->members[i].inst);
        s_put_i32(w, st->members[i].tid);
        s_put_i32(w, st->members[i].ospid);
        s_put_str(w, st->members[i].host);
    }
    for (int i = 0; i < st->nbar_waiters; i++)
        s_put_i32(w, st->bar_waiters[i]);
    for (int i = 0; i < st->nfrz_waiters; i++)
        s_put_i32(w, st->frz_waiters[i]);
    s_put_i32(w, st->ndp);
    for (int i = 0; i < st->ndp; i++) {
        s_put_i32(w, st->dp[i].tid);
        s_put_i32(w, st->dp[i].count);
        s_put_i32(w, st->dp[i].ms);
    }
    return s_finish(w, out);
}

typedef struct {
    const uint8_t *p;
    size_t left;
} s_reader_t;

/*  Reads a big-endian Int4; false when too few bytes are left. */
static bool s_get_i32(s_reader_t *r, int32_t *v)
{
    if (r->left < 4)
        return false;
    *v = (int32_t)gimpi_be_get32(r->p);
    r->p += 4;
    r->left -= 4;
    return true;
}

/*  Reads a Uint2-prefixed string into dst (size bytes, truncating) or a malloc'ed copy. */
static bool s_get_str(s_reader_t *r, char *dst, size_t size, char **copy)
{
    if (r->left < 2)
        return false;
    size_t len = (size_t)r->p[0] << 8 | r->p[1];
    if (r->left < 2 + len)
        return false;
    const uint8_t *s = r->p + 2;
    r->p += 2 + len;
    r->left -= 2 + len;
    if (copy) {
        *copy = malloc(len + 1);
        if (!*copy)
            return false;
        memcpy(*copy, s, len);
        (*copy)[len] = 0;
    } else {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, s, n);
        dst[n] = 0;
    }
    return true;
}

/*  Decodes a STAT record; counts are checked against the bytes present before allocating. */
int gd_groupstat_decode(const uint8_t *data, size_t len, gd_groupstat_t *st)
{
    memset(st, 0, sizeof *st);
    s_reader_t r = { data, len };
    int32_t vh, vl;
    if (!s_get_str(&r, NULL, 0, &st->name))
        goto bad;
    if (!s_get_i32(&r, &st->size) || !s_get_i32(&r, &st->frozen) || !s_get_i32(&r, &st->dead)
        || !s_get_i32(&r, &vh) || !s_get_i32(&r, &vl) || !s_get_i32(&r, &st->bar_count)
        || !s_get_i32(&r, &st->bar_arrived) || !s_get_i32(&r, &st->frz_count)
        || !s_get_i32(&r, &st->frz_arrived) || !s_get_i32(&r, &st->nmembers)
        || !s_get_i32(&r, &st->nbar_waiters) || !s_get_i32(&r, &st->nfrz_waiters))
        goto bad;
    st->version = (uint64_t)(uint32_t)vh << 32 | (uint32_t)vl;
    if (st->nmembers < 0 || st->nbar_waiters < 0 || st->nfrz_waiters < 0
        || (size_t)st->nmembers > r.left / 14
        || (size_t)st->nbar_waiters + (size_t)st->nfrz_waiters > r.left / 4)
        goto bad;
    st->members = calloc((size_t)st->nmembers + 1, sizeof *st->members);
    st->bar_waiters = calloc((size_t)st->nbar_waiters + 1, sizeof(int32_t));
    st->frz_waiters = calloc((size_t)st->nfrz_waiters + 1, sizeof(int32_t));
    if (!st->members || !st->bar_waiters || !st->frz_waiters)
        goto bad;
    for (int i = 0; i < st->nmembers; i++) {
        gd_member_t *m = &st->members[i];
        if (!s_get_i32(&r, &m->inst) || !s_get_i32(&r, &m->tid) || !s_get_i32(&r, &m->ospid)
            || !s_get_str(&r, m->host, sizeof m->host, NULL))
            goto bad;
    }
    for (int i = 0; i < st->nbar_waiters; i++)
        if (!s_get_i32(&r, &st->bar_waiters[i]))
            goto bad;
    for (int i = 0; i < st->nfrz_waiters; i++)
        if (!s_get_i32(&r, &st->frz_waiters[i]))
            goto bad;
    if (!s_get_i32(&r, &st->ndp) || st->ndp < 0 || (size_t)st->ndp > r.left / 12)
        goto bad;
    st->dp = calloc((size_t)st->ndp + 1, sizeof *st->dp);
    if (!st->dp)
        goto bad;
    for (int i = 0; i < st->ndp; i++)
        if (!s_get_i32(&r, &st->dp[i].tid) || !s_get_i32(&r, &st->dp[i].count)
            || !s_get_i32(&r, &st->dp[i].ms))
            goto bad;
    if (r.left)
        goto bad;
    return GD_OK;
bad:
    gd_groupstat_clear(st);
    return GD_ERR_SIZE;
}

/*  Frees what decode allocated. */
void gd_groupstat_clear(gd_groupstat_t *st)
{
    free(st->name);
    free(st->members);
    free(st->bar_waiters);
    free(st->frz_waiters);
    free(st->dp);
    memset(st, 0, sizeof *st);
}

/* ------------------------------------------------------------------ task records */

/*  Appends an Int4-length-prefixed text of at most GD_MAX_TEXT bytes. */
static void s_put_text(gimpi_bytes_t *w, const char *s)
{
    size_t len = strnlen(s, GD_MAX_TEXT);
    s_put_i32(w, (int32_t)len);
    gimpi_bytes_put(w, s, len);
}

/*  Encodes TASKS records. */
size_t gd_tasks_encode(const gd_vmtask_t *tasks, int n, uint8_t **out)
{
    gimpi_bytes_t *w = gimpi_bytes_new(0);
    for (int k = 0; w && k < n; k++) {
        s_put_i32(w, tasks[k].tid);
        s_put_i32(w, tasks[k].ptid);
        s_put_i32(w, tasks[k].ospid);
        s_put_i32(w, tasks[k].flags);
        s_put_text(w, tasks[k].host);
        s_put_text(w, tasks[k].name);
    }
    return s_finish(w, out);
}

/*  Reads an Int4-length-prefixed text (<= GD_MAX_TEXT bytes, no NUL) into dst. */
static int s_get_text(s_reader_t *r, char dst[GD_MAX_TEXT + 1])
{
    int32_t len;
    if (!s_get_i32(r, &len) || len < 0 || len > GD_MAX_TEXT || (size_t)len > r->left)
        return GD_ERR_SIZE;
    if (len && memchr(r->p, 0, (size_t)len))
        return GD_ERR_TEXT;
    memcpy(dst, r->p, (size_t)len);
    dst[len] = 0;
    r->p += len;
    r->left -= (size_t)len;
    return GD_OK;
}

/*  Decodes records of elem bytes each, read one by one by `one`, until the bytes end
 *  (no count in the blob); at most len / minrec records, bounded before anything is
 *  allocated.  0 with *out malloc'ed (at least one element) and *n, or the first error. */
static int s_records_decode(const uint8_t *data, size_t len, size_t minrec, size_t elem,
                            int (*one)(s_reader_t *r, void *rec), void **out, int *n)
{
    *out = NULL;
    *n = 0;
    size_t most = len / minrec;
    if (most > INT32_MAX)
        return GD_ERR_SIZE;
    uint8_t *t = calloc(most + 1, elem);
    if (!t)
        return GD_ERR_SIZE;
    s_reader_t r = { data, len };
    int count = 0, rc = GD_OK;
    while (r.left && rc == GD_OK)
        rc = one(&r, t + elem * (size_t)count++);
    if (rc != GD_OK) {
        free(t);
        return rc;
    }
    *out = t;
    *n = count;
    return GD_OK;
}

/*  Reads one TASKS record. */
static int s_task_decode(s_reader_t *r, void *rec)
{
    gd_vmtask_t *v = rec;
    if (!s_get_i32(r, &v->tid) || !s_get_i32(r, &v->ptid) || !s_get_i32(r, &v->ospid)
        || !s_get_i32(r, &v->flags))
        return GD_ERR_SIZE;
    int rc = s_get_text(r, v->host);
    return rc == GD_OK ? s_get_text(r, v->name) : rc;
}

/*  Decodes TASKS records. */
int gd_tasks_decode(const uint8_t *data, size_t len, gd_vmtask_t **out, int *n)
{
    void *recs;
    int rc = s_records_decode(data, len, GD_TASKREC_MIN, sizeof **out, s_task_decode, &recs, n);
    *out = recs;
    return rc;
}

/*  Encodes STATUSES records. */
size_t gd_statuses_encode(const gd_status_rec_t *recs, int n, uint8_t **out)
{
    gimpi_bytes_t *w = gimpi_bytes_new(0);
    for (int k = 0; w && k < n; k++) {
        s_put_i32(w, recs[k].tid);
        s_put_i32(w, recs[k].ms);
        s_put_i32(w, recs[k].queued);
        s_put_i32(w, recs[k].peer);
        s_put_i32(w, recs[k].peer_state);
        s_put_text(w, recs[k].call);
    }
    return s_finish(w, out);
}

/*  Reads one STATUSES record. */
static int s_status_decode(s_reader_t *r, void *rec)
{
    gd_status_rec_t *v = rec;
    if (!s_get_i32(r, &v->tid) || !s_get_i32(r, &v->ms) || !s_get_i32(r, &v->queued)
        || !s_get_i32(r, &v->peer) || !s_get_i32(r, &v->peer_state))
        return GD_ERR_SIZE;
    return s_get_text(r, v->call);
}

/*  Decodes STATUSES records. */
int gd_statuses_decode(const uint8_t *data, size_t len, gd_status_rec_t **out, int *n)
{
    void *recs;
    int rc = s_records_decode(data, len, GD_STATUSREC_MIN, sizeof **out, s_status_decode, &recs, n);
    *out = recs;
    return rc;
}

/* ------------------------------------------------------------------ ZeroMQ helpers */

/*  Sends route frames then frames as one multipart message. */
int gd_send_frames(void *socket, const gd_frame_t *route, int nroute,
                   const gd_frame_t *frames, int nframes, int flags)
{
    int total = nroute + nframes;
    for (int k = 0; k < total; k++) {
        const gd_frame_t *f = k < nroute ? &route[k] : &frames[k - nroute];
        int more = k + 1 < total ? ZMQ_SNDMORE : 0;
        if (zmq_send(socket, f->data, f->len, flags | more) < 0)
            return -1;
    }
    return 0;
}

/*  Receives every part of one message; parts beyond the bound are read and dropped. */
int gd_multipart_recv_max(void *socket, gd_multipart_t *mp, int flags, int limit)
{
    memset(mp, 0, sizeof *mp);
    for (;;) {
        zmq_msg_t tmp;
        zmq_msg_t *m = &tmp;
        if (mp->nparts < limit) {
            if (mp->nparts == mp->cap) {
                int cap = mp->cap ? mp->cap * 2 : 8;
                if (cap > limit)
                    cap = limit;
                zmq_msg_t *np = realloc(mp->parts, (size_t)cap * sizeof *np);
                if (np)
                    mp->parts = np;
                gd_frame_t *nf = realloc(mp->frames, (size_t)cap * sizeof *nf);
                if (nf)
                    mp->frames = nf;
                if (np && nf)
                    mp->cap = cap;
            }
            if (mp->nparts < mp->cap)
                m = &((zmq_msg_t *)mp->parts)[mp->nparts];
        }
        zmq_msg_init(m);
        if (zmq_msg_recv(m, socket, mp->nparts || mp->truncated ? 0 : flags) < 0) {
            int e = errno;
            zmq_msg_close(m);
            gd_multipart_close(mp);
            errno = e;
            return -1;
        }
        int more = zmq_msg_more(m);
        if (m == &tmp) {
            mp->truncated = true;
            zmq_msg_close(m);
        } else {
            mp->nparts++;
        }
        if (!more)
            break;
    }
    /* frame pointers only now: the parts array may have moved while growing */
    for (int k = 0; k < mp->nparts; k++) {
        zmq_msg_t *m = &((zmq_msg_t *)mp->parts)[k];
        mp->frames[k].data = zmq_msg_data(m);
        mp->frames[k].len = zmq_msg_size(m);
    }
    return 0;
}

/*  Receives one message of at most GD_MAX_FRAMES + 64 parts. */
int gd_multipart_recv(void *socket, gd_multipart_t *mp, int flags)
{
    return gd_multipart_recv_max(socket, mp, flags, GD_MAX_FRAMES + 64);
}

/*  Releases the parts. */
void gd_multipart_close(gd_multipart_t *mp)
{
    zmq_msg_t *parts = mp->parts;
    for (int k = 0; k < mp->nparts; k++)
        zmq_msg_close(&parts[k]);
    free(mp->parts);
    free(mp->frames);
    memset(mp, 0, sizeof *mp);
}

/*  Source fd of the message: the first part that knows it (a ROUTER's identity frame
 *  loses it when the message was prefetched by zmq_poll; the body frames keep it). */
int gd_multipart_srcfd(gd_multipart_t *mp)
{
    for (int k = 0; k < mp->nparts; k++) {
        int fd = zmq_msg_get(&((zmq_msg_t *)mp->parts)[k], ZMQ_SRCFD);
        if (fd >= 0)
            return fd;
    }
    return -1;
}

/*  Per-user default endpoint in the private runtime directory (gd_proto.h). */
const char *gd_default_endpoint(char *buf, size_t size, char *err, size_t errsize)
{
    char dir[GIMPI_KEY_PATHLEN];
    if (gimpi_rundir(dir, sizeof dir, err, errsize) < 0)
        return NULL;
    int n = snprintf(buf, size, "ipc://%s/groupd", dir);
    if (n <= 0 || (size_t)n >= size) {
        if (err && errsize)
            snprintf(err, errsize, "the endpoint ipc://%s/groupd is too long", dir);
        return NULL;
    }
    return buf;
}
