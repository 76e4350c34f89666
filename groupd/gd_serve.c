/*  gd_serve.c — groupd's request handler (see gd_serve.h): decoding, quotas, the
 *  registry calls and the replies, the virtual machine's relay (gd_vm.h), the MARKs owed
 *  to new subscribers, and the connection bookkeeping fed by the ROUTER's socket monitor.
 */
#include "config.h"
#include "groupd/gd_serve.h"
#include "groupd/gd_notify.h"
#include "groupd/gd_record.h"
#include "groupd/gd_follow.h"
#include "base/gimpi_key.h"
#include "gimpi.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <time.h>
#include <zmq.h>

/*  Logs a line about a refused or malformed request, rate-limited (gd_ratelog_t). */
static void s_log_refusal(groupd_t *self, gd_ratelog_t *rl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void s_log_refusal(groupd_t *self, gd_ratelog_t *rl, const char *fmt, ...)
{
    if (!self->log || !gd_ratelog_ok(rl, gimpi_now_ms(), self->log, "groupd"))
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(self->log, "groupd: ");
    vfprintf(self->log, fmt, ap);
    fprintf(self->log, "\n");
    fflush(self->log);
    va_end(ap);
}

/*  Flushes due summaries (the handler's logs and the ZAP handler's); the next due time. */
int gd_serve_flush_logs(groupd_t *self)
{
    assert(self);
    int64_t now = gimpi_now_ms();
    gd_ratelog_t *logs[4] = { &self->bad_log, &self->quota_log, &self->hs_log,
                              self->zap ? gd_zap_log(self->zap) : NULL };
    int due = -1;
    for (int k = 0; k < 4; k++) {
        if (!logs[k] || !self->log)
            continue;
        gd_ratelog_flush(logs[k], now, self->log, "groupd");
        int d = gd_ratelog_due_ms(logs[k], now);
        if (d >= 0 && (due < 0 || d < due))
            due = d;
    }
    return due;
}

/*  Frees a hash value (visitor). */
static void s_free_value_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    free(v);
}

/* ------------------------------------------------------------------ sink */

/*  Sends a reply [id][hdr][status][version] + extra frames. */
static void s_send_reply(groupd_t *self, const uint8_t *key, size_t keylen, uint8_t kind,
                         uint32_t reqid, int32_t status, uint64_t version,
                         const gd_frame_t *extra, int nextra)
{
    uint8_t hdr[GD_HDR_SIZE], st[4], ver[8];
    gd_header_encode(hdr, kind, reqid);
    gimpi_be_put32(st, (uint32_t)status);
    gimpi_be_put64(ver, version);
    gd_frame_t frames[3 + 64];
    gd_frame_t route = { key, keylen };
    frames[0] = (gd_frame_t){ hdr, sizeof hdr };
    frames[1] = (gd_frame_t){ st, 4 };
    frames[2] = (gd_frame_t){ ver, 8 };
    int n = 3;
    for (int k = 0; k < nextra && n < (int)(sizeof frames / sizeof frames[0]); k++)
        frames[n++] = extra[k];
    if (self->dedup)
        gd_record_reply(self, key, keylen, frames, n);  /* journaled before it is sent */
    if (self->replaying || gd_follow_hold(self, &route, frames, n))
        return;                         /* (held until the standby has its records) */
    if (gd_send_frames(self->router, &route, 1, frames, n, ZMQ_DONTWAIT) < 0 && self->verbose)
        fprintf(stderr, "groupd: reply %s: %s\n", gd_kind_name(kind), zmq_strerror(errno));
    if (self->verbose)
        fprintf(stderr, "groupd: -> reply %s #%u status %d v%llu\n", gd_kind_name(kind),
                (unsigned)reqid, (int)status, (unsigned long long)version);
}

/*  Deferred reply (barrier, freeze) from the registry. */
static void s_sink_reply(void *arg, const gd_waiter_t *w, int32_t status, uint64_t version)
{
    groupd_t *self = arg;
    s_send_reply(self, w->key, w->keylen, w->cmd | GD_REPLY_FLAG, w->reqid, status, version,
                 NULL, 0);
}

/*  Deferred reply of the virtual machine's relay: a VMWAIT gets [i token][b request], a
 *  VMREQ [b answer] when its status is >= 0. */
static void s_sink_vm_reply(void *arg, const gd_waiter_t *w, int32_t status, int32_t token,
                            const uint8_t *data, size_t len)
{
    groupd_t *self = arg;
    static const uint8_t none[1];
    uint8_t tok[4];
    gimpi_be_put32(tok, (uint32_t)token);
    gd_frame_t extra[2] = { { tok, 4 }, { data ? data : none, data ? len : 0 } };
    bool wait = w->cmd == GD_VMWAIT;
    s_send_reply(self, w->key, w->keylen, w->cmd | GD_REPLY_FLAG, w->reqid, status, 0,
                 wait ? extra : extra + 1, status < 0 ? 0 : wait ? 2 : 1);
}

/*  Publishes an event [topic][hdr][prev][version][inst][tid][extra]. */
static void s_sink_event(void *arg, const char *group, uint8_t kind, uint64_t prev,
                         uint64_t version, int32_t inst, int32_t tid, int32_t extra)
{
    groupd_t *self = arg;
    size_t nlen = strnlen(group, GD_MAX_NAME);
    uint8_t topic[GD_TOPIC_MAX];
    topic[0] = 'G';
    memcpy(topic + 1, group, nlen);
    if (self->verbose)
        fprintf(stderr, "groupd: event %s '%s' v%llu->v%llu inst %d tid 0x%x (%d)\n",
                gd_kind_name(kind), group, (unsigned long long)prev,
                (unsigned long long)version, (int)inst, (unsigned)tid, (int)extra);
    /* nobody subscribed: a later subscriber starts from its MARK and a SNAPSHOT (doc/
       groupd-protocol.md §5, §6), so an event nobody can receive is not built */
    if (!gd_notify_watched(self, topic, nlen + 1))
        return;
    uint8_t hdr[GD_HDR_SIZE], buf[5 * 8];
    gd_header_encode(hdr, kind, 0);
    gd_value_t v[5] = { { .q = prev }, { .q = version }, { .i = inst }, { .i = tid },
                        { .i = extra } };
    gd_frame_t frames[7] = { { topic, nlen + 1 }, { hdr, sizeof hdr } };
    int n = gd_values_encode(GD_EVENT_LAYOUT, v, 5, buf, frames + 2);
    if (n == 5)
        gd_send_frames(self->xpub, NULL, 0, frames, 7, ZMQ_DONTWAIT);
}

/* ------------------------------------------------------------------ requests */

/*  Copies a name frame into a NUL-terminated buffer (frames are checked by the decoder). */
static char *s_name(const gd_value_t *v)
{
    char *s = malloc(v->len + 1);
    if (s) {
        if (v->len)
            memcpy(s, v->data, v->len);
        s[v->len] = 0;
    }
    return s;
}

/*  Maps a decoder error onto the status of the error reply. */
static int32_t s_decode_status(int err)
{
    switch (err) {
    case GD_ERR_VERSION: return GIMPI_EBADVERSION;
    case GD_ERR_COMMAND: return GIMPI_ENOTIMPL;
    default: return GIMPI_EBADMSG;
    }
}

static bool s_on_monitor(groupd_t *self);
static gd_conn_t *s_conn(groupd_t *self, int fd);

/*  The id of the connection a request came on: the live one's serial, while replaying the
 *  routing id's pseudo connection (gd_record.h), else 0 (unknown). */
static uint64_t s_conn_id(groupd_t *self, int srcfd, const uint8_t *key, size_t keylen)
{
    if (self->replaying)
        return gd_record_pseudo_conn(key, keylen);
    gd_conn_t *c = s_conn(self, srcfd);
    return c ? c->id : 0;
}

/*  Handles every monitor event already queued.  ZMQ_EVENTS first: unlike a receive, it is
 *  never throttled, so no event that is queued can be missed. */
void gd_serve_drain_monitor(groupd_t *self)
{
    if (!self->monitor)
        return;
    for (int k = 0; k < 4096; k++) {
        int ev = 0;
        size_t el = sizeof ev;
        if (zmq_getsockopt(self->monitor, ZMQ_EVENTS, &ev, &el) < 0 || !(ev & ZMQ_POLLIN)
            || !s_on_monitor(self))
            return;
    }
}

/*  The task is gone (gd_registry_remove): those who watch it are told (gd_notify.h). */
static int s_task_gone(groupd_t *self, int32_t tid, bool exited)
{
    if (!(self->jr.active && self->jr.cmd == GD_UNREGISTER))
        gd_record_gone(self, tid);      /* (an UNREGISTER's record says it already) */
    const uint8_t *key;
    size_t keylen;
    if (self->dedup && gd_registry_key_of(self->reg, tid, &key, &keylen) == 0)
        gd_dedup_forget(self->dedup, key, keylen);
    int rc = gd_registry_remove(self->reg, tid, exited);
    if (rc == 0)
        gd_notify_task_gone(self, tid);
    gd_mbox_task_gone(self->mbox, tid);
    return rc;
}

/*  Ties a tid to its connection.  The end of an earlier connection on the same fd number
 *  is queued on the monitor before this connection's first message can be read (libzmq
 *  reports it before closing the fd), so handling the queued events first means a late
 *  DISCONNECTED can never be taken for this connection's end. */
static void s_track_fd(groupd_t *self, int32_t tid, int fd)
{
    if (fd < 0)
        return;
    gd_serve_drain_monitor(self);
    int32_t fdkey = fd;
    if (!gd_hash_get(self->fd_open, &fdkey, sizeof fdkey)) {
        /* this very connection has ended already: the task is gone */
        s_task_gone(self, tid, true);
        return;
    }
    int32_t *old = gd_hash_get(self->tid_fd, &tid, sizeof tid);
    if (old)
        return;
    int32_t key = fd;
    intptr_t prev_tid = (intptr_t)gd_hash_get(self->fd_tid, &key, sizeof key);
    if (prev_tid) {
        /* a task on a recycled fd whose end we have not seen yet: it is gone */
        int32_t t = (int32_t)prev_tid;
        gd_hash_del(self->tid_fd, &t, sizeof t);
        s_task_gone(self, t, true);
    }
    gd_hash_put(self->fd_tid, &key, sizeof key, (void *)(intptr_t)tid);
    gd_hash_put(self->tid_fd, &tid, sizeof tid, (void *)(intptr_t)(fd + 1));
}

/*  Forgets the fd of a task. */
static void s_untrack(groupd_t *self, int32_t tid)
{
    intptr_t fdp = (intptr_t)gd_hash_del(self->tid_fd, &tid, sizeof tid);
    if (fdp) {
        int32_t key = (int32_t)(fdp - 1);
        gd_hash_del(self->fd_tid, &key, sizeof key);
    }
}

/*  REGISTER and REGISTER_TID: a task's address record under the caller's routing id (and
 *  its reserved tid); a registered task's control connection is tracked for liveness. */
static void s_handle_register(groupd_t *self, const uint8_t *key, size_t keylen,
                              const gd_msg_t *msg, int srcfd)
{
    gd_taskinfo_t info = { 0 };
    memcpy(info.proc, msg->values[0].data, 24);
    memcpy(info.addr, msg->values[1].data, 16);
    info.port = msg->values[2].i;
    info.ospid = msg->values[3].i;
    memcpy(info.host, msg->values[4].data, msg->values[4].len);
    info.host[msg->values[4].len] = 0;
    int32_t status = msg->kind == GD_REGISTER
                   ? gd_registry_register(self->reg, key, keylen, &info)
                   : gd_registry_register_tid(self->reg, key, keylen, &info, msg->values[5].i,
                                              msg->values[6].data);
    if (status > 0)
        s_track_fd(self, status, srcfd);
    else if (status == GIMPI_EDENIED)
        s_log_refusal(self, &self->quota_log, "REGISTER_TID of t%x without its block's token "
                      "refused (fd %d)", (unsigned)msg->values[5].i, srcfd);
    s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0, NULL, 0);
}

/*  LOOKUP: a tid's address record (proc, address, port, pid, host name). */
static void s_handle_lookup(groupd_t *self, const uint8_t *key, size_t keylen, const gd_msg_t *msg)
{
    gd_taskinfo_t info;
    int32_t status = gd_registry_lookup(self->reg, msg->values[0].i, &info);
    uint8_t port[4], pid[4];
    gimpi_be_put32(port, (uint32_t)info.port);
    gimpi_be_put32(pid, (uint32_t)info.ospid);
    gd_frame_t f[5] = { { info.proc, 24 }, { info.addr, 16 }, { port, 4 }, { pid, 4 },
                        { (const uint8_t *)info.host, strlen(info.host) } };
    s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0, f,
                 status >= 0 ? 5 : 0);
}

/*  What libzmq needs to give a large reply frame's bytes back: the counter they are in. */
typedef struct {
    _Atomic size_t *inflight;
    size_t len;
} s_owned_t;

/*  libzmq is done with a large reply frame (written to the kernel, or dropped): runs in
 *  libzmq's I/O thread, hence the atomic counter. */
static void s_owned_free(void *data, void *hint)
{
    s_owned_t *o = hint;
    atomic_fetch_sub(o->inflight, o->len);
    free(o);
    free(data);
}

/*  Sends a malloc'ed frame without copying it, counted in self->inflight while libzmq
 *  holds it (it then frees data).  0 or -1. */
static int s_send_owned(groupd_t *self, uint8_t *data, size_t len, int flags)
{
    s_owned_t *o = malloc(sizeof *o);
    zmq_msg_t m;
    if (!o || zmq_msg_init_data(&m, data, len, s_owned_free, o) < 0) {
        free(o);
        free(data);
        return -1;
    }
    *o = (s_owned_t){ &self->inflight, len };
    atomic_fetch_add(&self->inflight, len);
    if (zmq_msg_send(&m, self->router, flags) < 0) {
        zmq_msg_close(&m);          /* gives the bytes back */
        return -1;
    }
    return 0;
}

/*  True when large replies that peers have not read yet stay under the bound; else
 *  the request is refused (logged). */
static bool s_inflight_ok(groupd_t *self, const gd_msg_t *msg)
{
    if (atomic_load(&self->inflight) <= GD_SERVE_INFLIGHT_BYTES)
        return true;
    s_log_refusal(self, &self->quota_log, "%s refused: %zu bytes of replies unread by their "
                  "peers", gd_kind_name(msg->kind), (size_t)atomic_load(&self->inflight));
    return false;
}

/*  Sends a reply whose extra frames are malloc'ed buffers handed to libzmq (freed there
 *  or here). */
static void s_send_owned_reply(groupd_t *self, const uint8_t *key, size_t keylen,
                               const gd_msg_t *msg, int32_t status, uint64_t version,
                               uint8_t **bufs, size_t *lens, int n)
{
    uint8_t hdr[GD_HDR_SIZE], st[4], ver[8];
    gd_header_encode(hdr, msg->kind | GD_REPLY_FLAG, msg->reqid);
    gimpi_be_put32(st, (uint32_t)status);
    gimpi_be_put64(ver, version);
    gd_frame_t head[3] = { { hdr, sizeof hdr }, { st, 4 }, { ver, 8 } };
    gd_frame_t route = { key, keylen };
    int k = 0;
    if (!self->replaying && gd_send_frames(self->router, &route, 1, head, 3, ZMQ_DONTWAIT | (n ? ZMQ_SNDMORE : 0))
        == 0)
        for (; k < n; k++)
            if (s_send_owned(self, bufs[k], lens[k],
                             ZMQ_DONTWAIT | (k + 1 < n ? ZMQ_SNDMORE : 0)) < 0) {
                k++;
                break;
            }
    for (; k < n; k++)
        free(bufs[k]);
}

/*  STAT: one record per group (or the named group's), as many frames as there are; the
 *  records go to libzmq without a copy, counted until written (GD_SERVE_INFLIGHT_BYTES). */
static void s_handle_stat(groupd_t *self, const uint8_t *key, size_t keylen, const gd_msg_t *msg,
                          const char *name)
{
    if (!s_inflight_ok(self, msg)) {
        s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, GIMPI_EOUTOFRES,
                     0, NULL, 0);
        return;
    }
    uint8_t **recs = NULL;
    size_t *lens = NULL;
    int32_t status = gd_registry_stat(self->reg, name, &recs, &lens);
    int n = 0;
    for (int k = 0; k < status; k++) {      /* (empty records are not sent) */
        if (lens[k]) {
            recs[n] = recs[k];
            lens[n++] = lens[k];
        } else
            free(recs[k]);
    }
    s_send_owned_reply(self, key, keylen, msg, status, 0, recs, lens, n);
    free(recs);
    free(lens);
}

/*  SNAPSHOT: the members as one blob, sent like STAT's records. */
static void s_handle_snapshot(groupd_t *self, const uint8_t *key, size_t keylen,
                              const gd_msg_t *msg, const char *name)
{
    if (!s_inflight_ok(self, msg)) {
        s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, GIMPI_EOUTOFRES,
                     0, NULL, 0);
        return;
    }
    uint8_t *blob = NULL;
    size_t len = 0;
    uint64_t version = 0;
    int32_t status = gd_registry_snapshot(self->reg, name, &version, &blob, &len);
    if (status >= 0 && !blob && !(blob = malloc(1)))
        status = GIMPI_ENOMEM;
    s_send_owned_reply(self, key, keylen, msg, status, version, &blob, &len, status >= 0);
    if (status < 0)
        free(blob);
}

/*  HOSTS: the host table as last set, sent like STAT's records. */
static void s_handle_hosts(groupd_t *self, const uint8_t *key, size_t keylen,
                           const gd_msg_t *msg)
{
    const uint8_t *table;
    size_t len;
    int32_t status = gd_vm_hosts(self->vm, &table, &len);
    uint8_t *copy = NULL;
    if (!s_inflight_ok(self, msg))
        status = GIMPI_EOUTOFRES;
    else if (!(copy = malloc(len ? len : 1)))
        status = GIMPI_ENOMEM;
    else if (len)
        memcpy(copy, table, len);
    s_send_owned_reply(self, key, keylen, msg, status, 0, &copy, &len, status >= 0);
    if (status < 0)
        free(copy);
}

/*  TASKS: the records of the tasks of one host (or all), sent like STAT's records. */
static void s_handle_tasks(groupd_t *self, const uint8_t *key, size_t keylen,
                           const gd_msg_t *msg)
{
    uint8_t *blob = NULL;
    size_t len = 0;
    int32_t status = GIMPI_EOUTOFRES;
    char *host = s_name(&msg->values[0]);
    if (!host)
        status = GIMPI_ENOMEM;
    else if (s_inflight_ok(self, msg))
        status = gd_registry_tasks(self->reg, host, &blob, &len);
    free(host);
    s_send_owned_reply(self, key, keylen, msg, status, 0, &blob, &len, status >= 0);
    if (status < 0)
        free(blob);
}

/*  TASK_STATUS: a task's own live status, kept (gd_status.h); a row about another task,
 *  or from a connection with no task, is refused and logged. */
static void s_handle_task_status(groupd_t *self, const uint8_t *key, size_t keylen,
                                 const gd_msg_t *msg, int32_t tid, int srcfd)
{
    const gd_value_t *v = msg->values;
    int32_t status = gd_status_set(self->status, tid, v[0].i, v[1].data, v[1].len, v[2].i,
                                   v[3].i, v[4].i, gimpi_now_ms());
    if (status == GIMPI_EDENIED)
        s_log_refusal(self, &self->quota_log, "TASK_STATUS about t%x from t%x refused (fd %d)",
                      (unsigned)v[0].i, (unsigned)tid, srcfd);
    s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0, NULL, 0);
}

/*  STATUSES: the records of the blocked tasks, sent like TASKS'. */
static void s_handle_statuses(groupd_t *self, const uint8_t *key, size_t keylen,
                              const gd_msg_t *msg)
{
    uint8_t *blob = NULL;
    size_t len = 0;
    int32_t status = GIMPI_EOUTOFRES;
    if (s_inflight_ok(self, msg))
        status = gd_status_list(self->status, self->reg, gimpi_now_ms(), &blob, &len);
    s_send_owned_reply(self, key, keylen, msg, status, 0, &blob, &len, status >= 0);
    if (status < 0)
        free(blob);
}

/*  HOSTS_SET, VMREQ, VMWAIT, VMREP, TASK_EXIT: the virtual machine's relay (gd_vm.h).
 *  w names the caller's request (for the replies that come later). */
static void s_handle_vm(groupd_t *self, const gd_waiter_t *w, const gd_msg_t *msg, int srcfd)
{
    int32_t status;
    gd_conn_t *c = s_conn(self, srcfd);
    uint64_t conn = s_conn_id(self, srcfd, w->key, w->keylen);
    const gd_value_t *v = msg->values;
    if (srcfd >= 0 && self->monitor && !c)
        status = GIMPI_ESYSERR;         /* its connection has ended: nobody to serve */
    else switch (msg->kind) {
    case GD_HOSTS_SET: {
        const uint8_t *table;
        size_t len;
        gd_vm_hosts(self->vm, &table, &len);
        uint8_t *old = len ? malloc(len) : NULL;
        if (old)
            memcpy(old, table, len);
        status = gd_vm_hosts_set(self->vm, w->key, w->keylen, conn, v[0].i, v[1].data, v[1].len,
                                 v[2].data, v[2].len);
        if (status == GIMPI_EBADPARAM || status == GIMPI_EDENIED)
            s_log_refusal(self, &self->quota_log, "HOSTS_SET refused (fd %d): %s", srcfd,
                          status == GIMPI_EDENIED ? "not the launcher's token"
                                                  : "not a valid host table");
        if (status == 0)
            gd_notify_hosts(self, old, old ? len : 0, v[1].data, v[1].len);
        free(old);
        if (status == 0 && self->verbose)
            fprintf(stderr, "groupd: host table of %d hosts (%zu bytes) set by fd %d\n",
                    (int)v[0].i, v[1].len, srcfd);
        break;
    }
    case GD_VMREQ:
        status = gd_vm_request(self->vm, w, conn, v[0].data, v[0].len);
        if (status == GIMPI_EOUTOFRES)
            s_log_refusal(self, &self->quota_log, "VMREQ refused: %zu requests pending, at "
                          "most %d per connection (fd %d)", gd_vm_npending(self->vm),
                          GD_VM_MAX_PER_CONN, srcfd);
        break;
    case GD_VMWAIT:
        status = gd_vm_wait(self->vm, w, conn);
        break;
    case GD_VMREP:
        status = gd_vm_answer(self->vm, w->key, w->keylen, conn, v[0].i, v[1].i, v[2].data,
                              v[2].len);
        break;
    default:                            /* GD_TASK_EXIT */
        if (!gd_vm_is_manager(self->vm, w->key, w->keylen, conn)) {
            status = GIMPI_EDENIED;
            break;
        }
        s_untrack(self, v[0].i);
        status = gd_registry_task_exit(self->reg, v[0].i);
        if (status == 0)
            gd_notify_task_gone(self, v[0].i);
        gd_mbox_task_gone(self->mbox, v[0].i);
        if (self->verbose)
            fprintf(stderr, "groupd: task 0x%x ended with status %d (manager): %d\n",
                    (unsigned)v[0].i, (int)v[1].i, (int)status);
        break;
    }
    if (status != GD_PENDING)
        s_send_reply(self, w->key, w->keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0,
                     NULL, 0);
}

/*  SPAWN_EXIT: a spawner saw its child die before it registered; the tid's block's token
 *  is its authority.  Published once: a tid registered, or already used up, is left to
 *  what ends it otherwise (its connection, TASK_EXIT). */
static void s_handle_spawn_exit(groupd_t *self, const uint8_t *key, size_t keylen,
                                const gd_msg_t *msg, int srcfd)
{
    int32_t tid = msg->values[0].i;
    int32_t status = gd_registry_spawn_exit(self->reg, tid, msg->values[1].data);
    if (status == 0) {
        gd_notify_task_gone(self, tid);
        gd_mbox_task_gone(self->mbox, tid);
    } else if (status == GIMPI_EDENIED)
        s_log_refusal(self, &self->quota_log, "SPAWN_EXIT of t%x without its block's token "
                      "refused (fd %d)", (unsigned)tid, srcfd);
    if (self->verbose)
        fprintf(stderr, "groupd: task 0x%x died before registering (spawner): %d\n",
                (unsigned)tid, (int)status);
    s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0, NULL, 0);
}

/*  RESERVE: a block of tids for the connection, with its token. */
static void s_handle_reserve(groupd_t *self, const uint8_t *key, size_t keylen,
                             const gd_msg_t *msg, int srcfd)
{
    uint8_t token[GD_TOKEN_SIZE];
    if (self->replaying && self->replay_nreply == 4 && self->replay_reply[3].len == GD_TOKEN_SIZE)
        gd_registry_force_token(self->reg, self->replay_reply[3].data);  /* the same block */
    int32_t status = gd_registry_reserve(self->reg, (const char *)msg->values[0].data,
                                         msg->values[0].len, msg->values[1].i,
                                         s_conn_id(self, srcfd, key, keylen), token);
    if (status == GIMPI_EOUTOFRES)
        s_log_refusal(self, &self->quota_log, "RESERVE of %d tids refused: over the "
                      "quota of the connection (fd %d) or out of tids",
                      (int)msg->values[1].i, srcfd);
    gd_frame_t tf = { token, sizeof token };
    s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0, &tf,
                 status >= 0);
    gimpi_key_wipe(token, sizeof token);
}

/*  The group commands (join, leave, the queries, barriers, freeze) of task tid: the
 *  registry's answer and the group's version, sent at once, unless a barrier or freeze
 *  waits (GD_PENDING, which only they return: a join's instance 1 has the same value;
 *  the registry answers w later). */
static void s_handle_group(groupd_t *self, gd_waiter_t *w, const gd_msg_t *msg, int32_t tid,
                           const char *name, int32_t arg)
{
    uint64_t version = 0;
    int32_t status;
    switch (msg->kind) {
    case GD_JOIN:
        status = gd_registry_join(self->reg, tid, name, &version);
        break;
    case GD_LEAVE:
        status = gd_registry_leave(self->reg, tid, name, &version);
        break;
    case GD_GETTID:
        status = gd_registry_gettid(self->reg, name, arg, &version);
        break;
    case GD_GETINST:
        status = gd_registry_getinst(self->reg, name, arg, &version);
        break;
    case GD_GSIZE:
        status = gd_registry_gsize(self->reg, name, &version);
        break;
    case GD_BARRIER_NOTE:
        status = gd_registry_barrier_note(self->reg, tid, name, arg);
        break;
    case GD_BARRIER:
    default:                            /* GD_FREEZE */
        status = msg->kind == GD_BARRIER
               ? gd_registry_barrier(self->reg, tid, name, arg, w, &version)
               : gd_registry_freeze(self->reg, tid, name, arg, w, &version);
        if (status == GD_PENDING)
            return;
    }
    s_send_reply(self, w->key, w->keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status,
                 version, NULL, 0);
}

/*  Deferred answer of a message-box read: [i encoding][b entry] when status >= 0. */
static void s_sink_mbox_reply(void *arg, const gd_waiter_t *w, int32_t status,
                              int32_t encoding, const uint8_t *data, size_t len)
{
    groupd_t *self = arg;
    static const uint8_t none[1];
    uint8_t enc[4];
    gimpi_be_put32(enc, (uint32_t)encoding);
    gd_frame_t extra[2] = { { enc, 4 }, { data ? data : none, data ? len : 0 } };
    s_send_reply(self, w->key, w->keylen, w->cmd | GD_REPLY_FLAG, w->reqid, status, 0, extra,
                 status < 0 ? 0 : 2);
}

/*  MBOX_PUT, MBOX_GET, MBOX_DEL, MBOX_LIST, MBOX_PUTQ (a put answered by nobody): the
 *  message box (gd_mbox.h) for task tid (0: a connection that has not registered, which
 *  may only list; an unregistered MBOX_PUTQ gets PvmNoTask all the same).  name: the class name or
 *  pattern.  A read answers through s_sink_mbox_reply, at once or when an entry comes. */
static void s_handle_mbox(groupd_t *self, const gd_waiter_t *w, const gd_msg_t *msg,
                          int32_t tid, const char *name, int srcfd)
{
    const gd_value_t *v = msg->values;
    int32_t status;
    uint8_t *blob = NULL;
    size_t len = 0;
    if (!tid && msg->kind != GD_MBOX_LIST)
        status = GIMPI_ENOTASK;
    else switch (msg->kind) {
    case GD_MBOX_PUT:
    case GD_MBOX_PUTQ:
        status = gd_mbox_put(self->mbox, tid, name, v[1].i, v[2].i, v[3].i, v[4].data,
                             v[4].len);
        if (status == GIMPI_EOUTOFRES)
            s_log_refusal(self, &self->quota_log, "MBOX_PUT of %zu bytes by t%x "
                          "refused: over a bound of the message box (fd %d)", v[4].len,
                          (unsigned)tid, srcfd);
        if (msg->kind == GD_MBOX_PUTQ)
            return;                     /* (its sender knows the answer: none is sent) */
        break;
    case GD_MBOX_GET:
        gd_mbox_get(self->mbox, tid, s_conn_id(self, srcfd, w->key, w->keylen), name, v[1].i,
                    v[2].i, w);
        return;                         /* answered through the sink, now or later */
    case GD_MBOX_DEL:
        status = gd_mbox_del(self->mbox, tid, name, v[1].i);
        break;
    default:                            /* GD_MBOX_LIST */
        status = s_inflight_ok(self, msg) ? gd_mbox_list(self->mbox, name, &blob, &len)
                                          : GIMPI_EOUTOFRES;
        s_send_owned_reply(self, w->key, w->keylen, msg, status, 0, &blob, &len,
                           status >= 0);
        if (status < 0)
            free(blob);
        return;
    }
    s_send_reply(self, w->key, w->keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0,
                 NULL, 0);
}

/*  HELLO: our event endpoint and our term. */
static void s_handle_hello(groupd_t *self, const uint8_t *key, size_t keylen, uint32_t reqid)
{
    uint8_t term[4];
    gimpi_be_put32(term, (uint32_t)self->term);
    gd_frame_t ep[2] = { { (const uint8_t *)self->pub_endpoint, strlen(self->pub_endpoint) },
                         { term, sizeof term } };
    s_send_reply(self, key, keylen, GD_HELLO | GD_REPLY_FLAG, reqid, 0, 0, ep, 2);
}

/*  Handles one decoded request. */
static void s_handle(groupd_t *self, const uint8_t *key, size_t keylen, const gd_msg_t *msg,
                     int srcfd)
{
    uint8_t kind = msg->kind | GD_REPLY_FLAG;
    int32_t status = 0;
    int32_t tid = gd_registry_tid_of(self->reg, key, keylen);
    char *name = NULL;
    if (msg->nvalues > 0 && msg->values[0].type == 'n') {
        name = s_name(&msg->values[0]);
        if (!name) {
            s_send_reply(self, key, keylen, kind, msg->reqid, GIMPI_ENOMEM, 0, NULL, 0);
            return;
        }
    }
    gd_waiter_t w;
    if (keylen > sizeof w.key) {
        s_send_reply(self, key, keylen, kind, msg->reqid, GIMPI_EBADPARAM, 0, NULL, 0);
        free(name);
        return;
    }
    memcpy(w.key, key, keylen);
    w.keylen = keylen;
    w.reqid = msg->reqid;
    w.cmd = msg->kind;
    int32_t arg = msg->nvalues > 1 && msg->values[1].type == 'i' ? msg->values[1].i : 0;
    int32_t arg0 = msg->nvalues > 0 && msg->values[0].type == 'i' ? msg->values[0].i : 0;
    bool needs_task = msg->kind == GD_JOIN || msg->kind == GD_LEAVE || msg->kind == GD_BARRIER
                   || msg->kind == GD_FREEZE || msg->kind == GD_UNREGISTER;
    if (needs_task && !tid && !(name && !*name)) {
        s_send_reply(self, key, keylen, kind, msg->reqid, GIMPI_ENOTASK, 0, NULL, 0);
        free(name);
        return;
    }
    switch (msg->kind) {
    case GD_HELLO:
        s_handle_hello(self, key, keylen, msg->reqid);
        break;
    case GD_PING:
        s_send_reply(self, key, keylen, kind, msg->reqid, 0, 0, NULL, 0);
        break;
    case GD_REGISTER:
    case GD_REGISTER_TID:
        s_handle_register(self, key, keylen, msg, srcfd);
        break;
    case GD_SPAWN_EXIT:
        s_handle_spawn_exit(self, key, keylen, msg, srcfd);
        break;
    case GD_RESERVE:
        s_handle_reserve(self, key, keylen, msg, srcfd);
        break;
    case GD_LOOKUP:
        s_handle_lookup(self, key, keylen, msg);
        break;
    case GD_UNREGISTER:
        s_untrack(self, tid);
        status = s_task_gone(self, tid, false);
        s_send_reply(self, key, keylen, kind, msg->reqid, status, 0, NULL, 0);
        break;
    case GD_JOIN:
    case GD_LEAVE:
    case GD_GETTID:
    case GD_GETINST:
    case GD_GSIZE:
    case GD_BARRIER_NOTE:
    case GD_BARRIER:
    case GD_FREEZE:
        s_handle_group(self, &w, msg, tid, name, arg);
        break;
    case GD_SNAPSHOT:
        s_handle_snapshot(self, key, keylen, msg, name);
        break;
    case GD_STAT:
        s_handle_stat(self, key, keylen, msg, name);
        break;
    case GD_HOSTS:
        s_handle_hosts(self, key, keylen, msg);
        break;
    case GD_TASKS:
        s_handle_tasks(self, key, keylen, msg);
        break;
    case GD_TASKINFO:
        status = tid ? gd_registry_taskinfo(self->reg, tid, arg0, (const char *)msg->values[1].data,
                                            msg->values[1].len)
                     : GIMPI_ENOTASK;
        s_send_reply(self, key, keylen, kind, msg->reqid, status, 0, NULL, 0);
        break;
    case GD_TASK_STATUS:
        s_handle_task_status(self, key, keylen, msg, tid, srcfd);
        break;
    case GD_STATUSES:
        s_handle_statuses(self, key, keylen, msg);
        break;
    case GD_HOSTS_SET:
    case GD_VMREQ:
    case GD_VMWAIT:
    case GD_VMREP:
    case GD_TASK_EXIT:
        s_handle_vm(self, &w, msg, srcfd);
        break;
    case GD_MBOX_PUT:
    case GD_MBOX_GET:
    case GD_MBOX_DEL:
    case GD_MBOX_LIST:
    case GD_MBOX_PUTQ:
        s_handle_mbox(self, &w, msg, tid, name, srcfd);
        break;
    case GD_HALT:
        /* the console has ended the tasks it could; whoever is left sees groupd gone */
        s_send_reply(self, key, keylen, kind, msg->reqid, 0, 0, NULL, 0);
        gd_mbox_clear(self->mbox);      /* (persistent entries end with the VM) */
        self->halted = true;
        if (self->verbose)
            fprintf(stderr, "groupd: HALT from fd %d (task 0x%x), %zu tasks registered\n",
                    srcfd, (unsigned)tid, gd_registry_ntasks(self->reg));
        break;
    default:
        s_send_reply(self, key, keylen, kind, msg->reqid, GIMPI_ENOTIMPL, 0, NULL, 0);
    }
    free(name);
}

/*  The live connection on fd (draining the monitor first when it is not known yet), or
 *  NULL (inproc, or a connection that has ended). */
static gd_conn_t *s_conn(groupd_t *self, int fd)
{
    if (fd < 0)
        return NULL;
    int32_t key = fd;
    gd_conn_t *c = gd_hash_get(self->fd_open, &key, sizeof key);
    if (!c && self->monitor) {
        gd_serve_drain_monitor(self);
        c = gd_hash_get(self->fd_open, &key, sizeof key);
    }
    return c;
}

/*  A quota check before a request is handled: a connection that has not registered may
 *  make max_unreg requests a second.  True when the request may go on. */
static bool s_quota_ok(groupd_t *self, const uint8_t *key, size_t keylen, int srcfd)
{
    if (gd_registry_tid_of(self->reg, key, keylen))
        return true;
    gd_conn_t *c = s_conn(self, srcfd);
    if (!c || gd_vm_is_manager(self->vm, key, keylen, c->id))
        return true;                    /* (the manager never registers) */
    int64_t now = gimpi_now_ms();
    if (now - c->unreg_since_ms >= 1000) {
        c->unreg_since_ms = now;
        c->unreg_requests = 0;
    }
    if (++c->unreg_requests <= self->max_unreg)
        return true;
    if (c->unreg_requests == self->max_unreg + 1)
        s_log_refusal(self, &self->quota_log, "a connection (fd %d) made %u requests in a "
                      "second without registering: refusing the rest of that second", srcfd,
                      (unsigned)self->max_unreg);
    return false;
}

/*  A client replayed from the journal is back (its first request since the restart): its
 *  task's liveness is tied to this connection, and a manager's place to it. */
static void s_reattach(groupd_t *self, const uint8_t *key, size_t keylen, int srcfd)
{
    if (!self->orphans || !gd_hash_del(self->orphans, key, keylen))
        return;
    int32_t tid = gd_registry_tid_of(self->reg, key, keylen);
    if (tid)
        s_track_fd(self, tid, srcfd);
    gd_conn_t *c = s_conn(self, srcfd);
    if (c && tid && keylen <= sizeof c->rid) {
        memcpy(c->rid, key, keylen);            /* (gd_serve_orphan_again) */
        c->rid_len = keylen;
    }
    bool mgr = c && gd_vm_rebind(self->vm, key, keylen, c->id);
    if (self->verbose)
        fprintf(stderr, "groupd: %s t%x back after the restart (fd %d)\n",
                mgr ? "the manager" : "task", (unsigned)tid, srcfd);
}

/*  Handles one request (frames[0]: the routing id). */
void gd_serve_request(groupd_t *self, const gd_frame_t *frames, int nframes, bool truncated,
                      int srcfd)
{
    assert(self);
    if (nframes < 1)
        return;
    const gd_frame_t *id = &frames[0];
    gd_msg_t msg;
    int rc = truncated ? GD_ERR_FRAMES : gd_request_decode(frames + 1, nframes - 1, &msg);
    if (rc) {
        gd_msg_t head;
        int hrc = nframes > 1 ? gd_header_decode(&frames[1], &head) : GD_ERR_HEADER;
        uint8_t kind = hrc == GD_ERR_HEADER ? GD_BAD_KIND : (uint8_t)(head.kind | GD_REPLY_FLAG);
        s_log_refusal(self, &self->bad_log, "malformed request (%s, %d frames) on fd %d",
                      gd_strerror(rc), nframes - 1, srcfd);
        s_send_reply(self, id->data, id->len, kind, hrc == GD_ERR_HEADER ? 0 : head.reqid,
                     s_decode_status(rc), 0, NULL, 0);
        return;
    }
    if (self->verbose) {
        char buf[256];
        fprintf(stderr, "groupd: <- %s (fd %d)\n", gd_msg_format(&msg, buf, sizeof buf), srcfd);
    }
    if (gd_follow_request(self, frames, &msg, srcfd))
        return;
    if (self->restarted) {
        if (gd_record_dup(self, id->data, id->len, &msg))
            return;                     /* sent again after a restart: answered before */
        s_reattach(self, id->data, id->len, srcfd);
    }
    if (!s_quota_ok(self, id->data, id->len, srcfd)) {
        s_send_reply(self, id->data, id->len, msg.kind | GD_REPLY_FLAG, msg.reqid,
                     GIMPI_EOUTOFRES, 0, NULL, 0);
        return;
    }
    bool journaled = self->dedup && gd_record_journaled(msg.kind);
    if (journaled)
        gd_record_begin(self, frames, nframes, &msg);
    s_handle(self, id->data, id->len, &msg, srcfd);
    if (journaled)
        gd_record_end(self);
    gd_follow_seal(self);
    if (self->idle_exit_ms)
        self->last_busy_ms = gimpi_now_ms();    /* any request restarts the idle period */
}

/*  Reads one request from the ROUTER and answers it; false when there was none. */
bool gd_serve_request_next(groupd_t *self)
{
    gd_multipart_t mp;
    if (gd_multipart_recv(self->router, &mp, ZMQ_DONTWAIT) < 0)
        return false;
    gd_serve_request(self, mp.frames, mp.nparts, mp.truncated, gd_multipart_srcfd(&mp));
    gd_multipart_close(&mp);
    return true;
}

/*  Over --max-sub-bytes of distinct topics: shuts down the event connection whose peer
 *  has sent the most (gd_guard.h), at most one every GD_SERVE_SHED_MS so that the topics
 *  of the last one are gone first; logged (rate-limited). */
static void s_shed_subscriber(groupd_t *self)
{
    size_t max = self->max_sub_bytes ? self->max_sub_bytes : GD_SERVE_SUB_BYTES;
    int64_t now = gimpi_now_ms();
    if (self->subs_bytes <= max || !self->guard || now - self->shed_ms < GD_SERVE_SHED_MS)
        return;
    self->shed_ms = now;
    uint64_t sent = 0;
    if (gd_guard_shed_subscriber(self->guard, &sent) >= 0)
        s_log_refusal(self, &self->quota_log, "%zu bytes of topics subscribed, over %zu: "
                      "the event connection that sent the most (%llu bytes) shut down "
                      "(--max-sub-bytes)", self->subs_bytes, max, (unsigned long long)sent);
}

/*  A subscription reached the XPUB: a MARK is due on its topic, so that the subscriber
 *  knows it is live (published by s_publish_marks).  False when there was none. */
bool gd_serve_subscription(groupd_t *self)
{
    gd_multipart_t mp;
    if (gd_multipart_recv(self->xpub, &mp, ZMQ_DONTWAIT) < 0)
        return false;
    if (mp.nparts >= 1)
        gd_notify_note_sub(self, mp.frames[0].data, mp.frames[0].len);
    if (mp.nparts >= 1 && mp.frames[0].len >= 1 && mp.frames[0].data[0] == 0 && self->guard)
        gd_guard_released(self->guard, 1);  /* a topic's memory freed: a trim may be due */
    s_shed_subscriber(self);
    if (mp.nparts >= 1 && mp.frames[0].len >= 2 && mp.frames[0].data[0] == 1
        && gd_notify_subscribed(self, mp.frames[0].data + 1, mp.frames[0].len - 1))
        ;                               /* a notify topic: its MARK is out */
    else if (mp.nparts >= 1 && mp.frames[0].len >= 2 && mp.frames[0].data[0] == 1
        && mp.frames[0].data[1] == 'G' && mp.frames[0].len - 2 <= GD_MAX_NAME) {
        size_t len = mp.frames[0].len - 2;
        char *name = malloc(len + 1);
        if (name) {
            memcpy(name, mp.frames[0].data + 2, len);
            name[len] = 0;
            /* one MARK per topic per batch: a burst of subscriptions to a big group
               costs one message per subscriber, not one per pair of them */
            if (memchr(mp.frames[0].data + 2, 0, len) || gd_hash_get(self->marks, name, len)
                || gd_hash_put(self->marks, name, len, name) < 0)
                free(name);
        }
    }
    gd_multipart_close(&mp);
    return true;
}

/*  Publishes one MARK per topic subscribed to since the last call (hash visitor). */
static void s_mark_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    groupd_t *self = a;
    char *name = v;
    uint64_t version = gd_registry_version(self->reg, name);
    s_sink_event(self, name, GD_EV_MARK, version, version, -1, 0, 0);
    free(name);
}

/*  Publishes the MARKs due and forgets them. */
void gd_serve_publish_marks(groupd_t *self)
{
    if (gd_hash_size(self->marks) == 0)
        return;
    gd_hash_foreach(self->marks, s_mark_cb, self);
    gd_hash_destroy(&self->marks);
    self->marks = gd_hash_new();
}

/*  A connection accepted or ended on fd (either socket's monitor; pub: the XPUB's): the
 *  guard's count; connections it shut down are logged (rate-limited). */
static void s_guard_event(groupd_t *self, uint16_t event, int fd, bool pub)
{
    if (!self->guard)
        return;
    gd_guard_subscriber(self->guard, fd, pub && event == ZMQ_EVENT_ACCEPTED);
    if (event == ZMQ_EVENT_DISCONNECTED) {
        gd_guard_gone(self->guard, fd);
        return;
    }
    if (gd_guard_accepted(self->guard, fd) > 0)
        s_log_refusal(self, &self->hs_log, "more than %d connections in their handshake: "
                      "the oldest shut down (%llu so far; --max-handshakes)",
                      self->max_handshakes, (unsigned long long)gd_guard_evicted(self->guard));
}

/*  Handles the XPUB monitor's queued events: its connections, for the guard. */
void gd_serve_drain_pub_monitor(groupd_t *self)
{
    assert(self);
    for (int k = 0; self->pub_monitor && k < 4096; k++) {
        int ev = 0;
        size_t el = sizeof ev;
        gd_multipart_t mp;
        if (zmq_getsockopt(self->pub_monitor, ZMQ_EVENTS, &ev, &el) < 0 || !(ev & ZMQ_POLLIN)
            || gd_multipart_recv(self->pub_monitor, &mp, ZMQ_DONTWAIT) < 0)
            return;
        if (mp.nparts >= 1 && mp.frames[0].len >= 6) {
            uint32_t value;
            memcpy(&value, mp.frames[0].data + 2, 4);
            s_guard_event(self, (uint16_t)(mp.frames[0].data[0] | mp.frames[0].data[1] << 8),
                          (int)value, true);
        }
        gd_multipart_close(&mp);
    }
}

/*  The connection a replayed task came back on ended within --reattach of the restart:
 *  on tcp that may be the task's old socket, which reconnected by itself to the new
 *  groupd before the task saw the outage and was then closed for a new one
 *  (groups_reconnect): the task is an orphan again, not gone, until its next request
 *  or the reattach period.  True when it was made an orphan. */
static bool s_orphan_again(groupd_t *self, const gd_conn_t *c, int32_t tid)
{
    int window = self->reattach_ms > 0 ? self->reattach_ms : GD_SERVE_REATTACH_MS;
    if (!c || !c->rid_len || !self->restarted_ms || !self->orphans
        || gimpi_now_ms() - self->restarted_ms > window
        || gd_registry_tid_of(self->reg, c->rid, c->rid_len) != tid
        || gd_hash_put(self->orphans, c->rid, c->rid_len, (void *)(intptr_t)tid) < 0)
        return false;
    int64_t due = gimpi_now_ms() + window;
    if (self->orphan_deadline_ms < due)
        self->orphan_deadline_ms = due;
    if (self->verbose)
        fprintf(stderr, "groupd: task t%x's connection after the restart ended: an orphan "
                "again until it comes back\n", (unsigned)tid);
    return true;
}

/*  A monitor event: a connection ended -> the task on it is gone.  False when none. */
static bool s_on_monitor(groupd_t *self)
{
    gd_multipart_t mp;
    if (gd_multipart_recv(self->monitor, &mp, ZMQ_DONTWAIT) < 0)
        return false;
    if (mp.nparts >= 1 && mp.frames[0].len >= 6) {
        uint32_t value;
        memcpy(&value, mp.frames[0].data + 2, 4);
        uint16_t event = (uint16_t)(mp.frames[0].data[0] | mp.frames[0].data[1] << 8);
        int32_t fdkey = (int32_t)value;
        if (event == ZMQ_EVENT_ACCEPTED || event == ZMQ_EVENT_DISCONNECTED)
            s_guard_event(self, event, fdkey, false);
        if (event == ZMQ_EVENT_ACCEPTED) {
            gd_conn_t *c = calloc(1, sizeof *c);
            if (c) {
                c->id = ++self->next_conn;
                free(gd_hash_del(self->fd_open, &fdkey, sizeof fdkey));
                if (gd_hash_put(self->fd_open, &fdkey, sizeof fdkey, c) < 0)
                    free(c);
            }
        }
        /* (on ipc a peer that connects and closes at once, as the library's probe whether
           groupd lives does, ends its handshake without detail: not worth a line) */
        bool curve = gd_sock_needs_key(self->endpoint);
        if ((event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
             || (curve && event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)))
            s_log_refusal(self, &self->hs_log, "a peer failed the handshake on %.*s: %s",
                          mp.nparts > 1 ? (int)(mp.frames[1].len < 128 ? mp.frames[1].len : 128) : 1,
                          mp.nparts > 1 ? (const char *)mp.frames[1].data : "?",
                          gd_sock_refusal(event, (int)value, false, curve));
        if (event == ZMQ_EVENT_DISCONNECTED) {
            gd_follow_conn_gone(self, fdkey);
            gd_conn_t *c = gd_hash_del(self->fd_open, &fdkey, sizeof fdkey);
            if (c) {
                gd_registry_owner_gone(self->reg, c->id);
                gd_mbox_conn_gone(self->mbox, c->id);
                bool mgr = gd_vm_has_manager(self->vm);
                gd_vm_conn_gone(self->vm, c->id);
                if (self->verbose && mgr && !gd_vm_has_manager(self->vm))
                    fprintf(stderr, "groupd: the VM's manager is gone (fd %d closed)\n",
                            (int)fdkey);
            }
            int32_t key = (int32_t)value;
            intptr_t tid = (intptr_t)gd_hash_del(self->fd_tid, &key, sizeof key);
            if (tid) {
                int32_t t = (int32_t)tid;
                gd_hash_del(self->tid_fd, &t, sizeof t);
                if (s_orphan_again(self, c, t))
                    tid = 0;
            }
            free(c);
            if (tid) {
                int32_t t = (int32_t)tid;
                if (self->verbose)
                    fprintf(stderr, "groupd: task 0x%x gone (connection fd %d closed)\n",
                            (unsigned)t, (int)key);
                s_task_gone(self, t, true);
            }
        }
    }
    gd_multipart_close(&mp);
    return true;
}

/*  A task is gone for a reason no journaled request records (a replayed JR_GONE). */
void gd_serve_task_gone(groupd_t *self, int32_t tid)
{
    assert(self);
    s_untrack(self, tid);
    s_task_gone(self, tid, true);
}

/*  The handler's state. */
int gd_serve_init(groupd_t *self, FILE *log, const gd_registry_limits_t *limits)
{
    assert(self);
    gd_sink_t sink = { s_sink_reply, s_sink_event, self };
    self->term = self->term ? self->term : 1;
    self->reg = gd_registry_new(&sink);
    gd_vm_sink_t vsink = { s_sink_vm_reply, self };
    self->vm = gd_vm_new(&vsink);
    gd_mbox_sink_t msink = { s_sink_mbox_reply, self };
    self->mbox = gd_mbox_new(&msink);
    self->status = gd_status_new();
    if (!self->reg || !self->vm || !self->mbox || !self->status)
        return -1;
    gd_mbox_set_limits(self->mbox, &self->mbox_lim);
    if (limits)
        gd_registry_set_limits(self->reg, limits);
    self->log = log;
    self->max_unreg = self->max_unreg ? self->max_unreg : GD_SERVE_UNREG_REQUESTS;
    self->bad_log.what = "malformed requests";
    self->quota_log.what = "requests refused by quotas";
    self->hs_log.what = "failed handshakes";
    self->fd_tid = gd_hash_new();
    self->tid_fd = gd_hash_new();
    self->marks = gd_hash_new();
    self->fd_open = gd_hash_new();
    int subs = gd_notify_init(self);
    return self->fd_tid && self->tid_fd && self->marks && self->fd_open && subs == 0 ? 0 : -1;
}

/*  Frees the hashes. */
void gd_serve_fini(groupd_t *self)
{
    assert(self);
    gd_follow_stop(self, NULL);
    gd_registry_destroy(&self->reg);
    gd_vm_destroy(&self->vm);
    gd_mbox_destroy(&self->mbox);
    gd_status_destroy(&self->status);
    gd_hash_destroy(&self->fd_tid);
    gd_hash_destroy(&self->tid_fd);
    if (self->fd_open)
        gd_hash_foreach(self->fd_open, s_free_value_cb, NULL);
    gd_hash_destroy(&self->fd_open);
    if (self->marks)
        gd_hash_foreach(self->marks, s_free_value_cb, NULL);
    gd_hash_destroy(&self->marks);
    gd_hash_destroy(&self->orphans);
    gd_dedup_destroy(&self->dedup);
    gd_notify_fini(self);
}

