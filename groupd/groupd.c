/*  groupd.c — the gimpi group daemon: `groupd [--endpoint EP] [--foreground] [--verbose]
 *  [--heartbeat MS] [--idle-exit SECONDS] [--cpu N|none]`.
 *
 *  It binds a ROUTER socket for requests (default: the per-user ipc endpoint) and an XPUB
 *  socket for membership events, prints the request endpoint as its first stdout line, and
 *  serves until SIGTERM/SIGINT — with --idle-exit (as when the library or gimpirun start
 *  it) only until no task has been registered and no request has come for that long.  A
 *  second groupd on the same ipc endpoint is refused (an flock on "<path>.lock"; libzmq
 *  would silently replace the socket file).  Requests are
 *  decoded by the table-driven codec (gd_proto), answered by the registry (gd_registry);
 *  anything malformed gets an error reply and the daemon keeps serving.  Liveness: every
 *  registered task is tied to the connection its registration came on (ZMQ_SRCFD); the
 *  ROUTER's socket monitor reports the connection's end — at once when a process exits or
 *  is killed, after the ZMTP heartbeat timeout when a peer falls silent — and the task
 *  then leaves every group.  Nothing polls: the loop sleeps in zmq_poll.
 */
#include "config.h"
#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "groupd/gd_registry.h"
#include "base/gd_hash.h"
#include "base/gimpi_key.h"
#include "gimpi.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>
#include <zmq.h>

typedef struct {
    void *zctx, *router, *xpub, *monitor;
    gd_registry_t *reg;
    gd_hash_t *fd_tid;          /* connection fd -> tid registered on it */
    gd_hash_t *tid_fd;          /* tid -> connection fd */
    gd_hash_t *marks;           /* topics owed a MARK: name -> malloc'ed name */
    gd_hash_t *fd_open;         /* fds of live connections (ACCEPTED, not DISCONNECTED) */
    char endpoint[512];
    char pub_endpoint[512];
    int lock_fd;
    int sig_fd;
    bool verbose;
    bool foreground;
    bool bound;                 /* our ipc socket files exist (we hold the lock) */
    int heartbeat_ms;
    int idle_exit_ms;           /* 0: serve until killed */
    int64_t last_busy_ms;       /* last moment a task was registered or a request came */
    int cpu;                    /* CPU for both threads: -1 none, -2 the one we start on */
    const gd_waiter_t *cur;     /* request being answered (for the sink) */
} groupd_t;

/*  Monotonic milliseconds. */
static int64_t s_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ sink */

/*  Sends a reply [id][hdr][status][version] + extra frames. */
static void s_send_reply(groupd_t *self, const uint8_t *key, size_t keylen, uint8_t kind,
                         uint32_t reqid, int32_t status, uint64_t version,
                         const gd_frame_t *extra, int nextra)
{
    uint8_t hdr[GD_HDR_SIZE], st[4], ver[8];
    gd_header_encode(hdr, kind, reqid);
    gd_put32(st, (uint32_t)status);
    gd_put64(ver, version);
    gd_frame_t frames[3 + 64];
    gd_frame_t route = { key, keylen };
    frames[0] = (gd_frame_t){ hdr, sizeof hdr };
    frames[1] = (gd_frame_t){ st, 4 };
    frames[2] = (gd_frame_t){ ver, 8 };
    int n = 3;
    for (int k = 0; k < nextra && n < (int)(sizeof frames / sizeof frames[0]); k++)
        frames[n++] = extra[k];
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

/*  Publishes an event [topic][hdr][prev][version][inst][tid][extra]. */
static void s_sink_event(void *arg, const char *group, uint8_t kind, uint64_t prev,
                         uint64_t version, int32_t inst, int32_t tid, int32_t extra)
{
    groupd_t *self = arg;
    size_t nlen = strlen(group);
    uint8_t *topic = malloc(nlen + 1);
    if (!topic)
        return;
    topic[0] = 'G';
    memcpy(topic + 1, group, nlen);
    uint8_t hdr[GD_HDR_SIZE], buf[5 * 8];
    gd_header_encode(hdr, kind, 0);
    gd_value_t v[5] = { { .q = prev }, { .q = version }, { .i = inst }, { .i = tid },
                        { .i = extra } };
    gd_frame_t frames[7] = { { topic, nlen + 1 }, { hdr, sizeof hdr } };
    int n = gd_values_encode(GD_EVENT_LAYOUT, v, 5, buf, frames + 2);
    if (n == 5)
        gd_send_frames(self->xpub, NULL, 0, frames, 7, ZMQ_DONTWAIT);
    if (self->verbose)
        fprintf(stderr, "groupd: event %s '%s' v%llu->v%llu inst %d tid 0x%x (%d)\n",
                gd_kind_name(kind), group, (unsigned long long)prev,
                (unsigned long long)version, (int)inst, (unsigned)tid, (int)extra);
    free(topic);
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

/*  Handles every monitor event already queued.  ZMQ_EVENTS first: unlike a receive, it is
 *  never throttled, so no event that is queued can be missed. */
static void s_drain_monitor(groupd_t *self)
{
    for (int k = 0; k < 4096; k++) {
        int ev = 0;
        size_t el = sizeof ev;
        if (zmq_getsockopt(self->monitor, ZMQ_EVENTS, &ev, &el) < 0 || !(ev & ZMQ_POLLIN)
            || !s_on_monitor(self))
            return;
    }
}

/*  Ties a tid to its connection.  The end of an earlier connection on the same fd number
 *  is queued on the monitor before this connection's first message can be read (libzmq
 *  reports it before closing the fd), so handling the queued events first means a late
 *  DISCONNECTED can never be taken for this connection's end. */
static void s_track_fd(groupd_t *self, int32_t tid, int fd)
{
    if (fd < 0)
        return;
    s_drain_monitor(self);
    int32_t fdkey = fd;
    if (!gd_hash_get(self->fd_open, &fdkey, sizeof fdkey)) {
        /* this very connection has ended already: the task is gone */
        gd_registry_remove(self->reg, tid, true);
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
        gd_registry_remove(self->reg, t, true);
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
                   : gd_registry_register_tid(self->reg, key, keylen, &info, msg->values[5].i);
    if (status > 0)
        s_track_fd(self, status, srcfd);
    s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0, NULL, 0);
}

/*  LOOKUP: a tid's address record (proc, address, port, pid, host name). */
static void s_handle_lookup(groupd_t *self, const uint8_t *key, size_t keylen, const gd_msg_t *msg)
{
    gd_taskinfo_t info;
    int32_t status = gd_registry_lookup(self->reg, msg->values[0].i, &info);
    uint8_t port[4], pid[4];
    gd_put32(port, (uint32_t)info.port);
    gd_put32(pid, (uint32_t)info.ospid);
    gd_frame_t f[5] = { { info.proc, 24 }, { info.addr, 16 }, { port, 4 }, { pid, 4 },
                        { (const uint8_t *)info.host, strlen(info.host) } };
    s_send_reply(self, key, keylen, msg->kind | GD_REPLY_FLAG, msg->reqid, status, 0, f,
                 status >= 0 ? 5 : 0);
}

/*  STAT: one record per group (or the named group's), as many frames as there are. */
static void s_handle_stat(groupd_t *self, const uint8_t *key, size_t keylen, const gd_msg_t *msg,
                          const char *name)
{
    uint8_t kind = msg->kind | GD_REPLY_FLAG;
    uint8_t **recs = NULL;
    size_t *lens = NULL;
    int32_t status = gd_registry_stat(self->reg, name, &recs, &lens);
    int n = status > 0 ? status : 0;
    gd_frame_t *f = calloc((size_t)n + 1, sizeof *f);
    int sent = 0;
    for (int k = 0; f && k < n; k++)
        if (lens[k])
            f[sent++] = (gd_frame_t){ recs[k], lens[k] };
    /* STAT may carry many frames: send them without the 64-frame cap */
    uint8_t hdr[GD_HDR_SIZE], st[4], ver[8];
    gd_header_encode(hdr, kind, msg->reqid);
    gd_put32(st, (uint32_t)(f ? status : GIMPI_ENOMEM));
    gd_put64(ver, 0);
    gd_frame_t head[3] = { { hdr, sizeof hdr }, { st, 4 }, { ver, 8 } };
    gd_frame_t route = { key, keylen };
    int more = sent ? ZMQ_SNDMORE : 0;
    if (gd_send_frames(self->router, &route, 1, head, 3, ZMQ_DONTWAIT | more) == 0 && sent)
        gd_send_frames(self->router, NULL, 0, f, sent, ZMQ_DONTWAIT);
    for (int k = 0; k < n; k++)
        free(recs[k]);
    free(recs);
    free(lens);
    free(f);
}

/*  Handles one decoded request. */
static void s_handle(groupd_t *self, const uint8_t *key, size_t keylen, const gd_msg_t *msg,
                     int srcfd)
{
    uint8_t kind = msg->kind | GD_REPLY_FLAG;
    uint64_t version = 0;
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
    bool needs_task = msg->kind == GD_JOIN || msg->kind == GD_LEAVE || msg->kind == GD_BARRIER
                   || msg->kind == GD_FREEZE || msg->kind == GD_UNREGISTER;
    if (needs_task && !tid && !(name && !*name)) {
        s_send_reply(self, key, keylen, kind, msg->reqid, GIMPI_ENOTASK, 0, NULL, 0);
        free(name);
        return;
    }
    switch (msg->kind) {
    case GD_HELLO: {
        gd_frame_t ep = { (const uint8_t *)self->pub_endpoint, strlen(self->pub_endpoint) };
        s_send_reply(self, key, keylen, kind, msg->reqid, 0, 0, &ep, 1);
        break;
    }
    case GD_PING:
        s_send_reply(self, key, keylen, kind, msg->reqid, 0, 0, NULL, 0);
        break;
    case GD_REGISTER:
    case GD_REGISTER_TID:
        s_handle_register(self, key, keylen, msg, srcfd);
        break;
    case GD_RESERVE:
        status = gd_registry_reserve(self->reg, (const char *)msg->values[0].data,
                                     msg->values[0].len, msg->values[1].i);
        s_send_reply(self, key, keylen, kind, msg->reqid, status, 0, NULL, 0);
        break;
    case GD_LOOKUP:
        s_handle_lookup(self, key, keylen, msg);
        break;
    case GD_UNREGISTER:
        s_untrack(self, tid);
        status = gd_registry_remove(self->reg, tid, false);
        s_send_reply(self, key, keylen, kind, msg->reqid, status, 0, NULL, 0);
        break;
    case GD_JOIN:
        status = gd_registry_join(self->reg, tid, name, &version);
        s_send_reply(self, key, keylen, kind, msg->reqid, status, version, NULL, 0);
        break;
    case GD_LEAVE:
        status = gd_registry_leave(self->reg, tid, name, &version);
        s_send_reply(self, key, keylen, kind, msg->reqid, status, version, NULL, 0);
        break;
    case GD_GETTID:
        status = gd_registry_gettid(self->reg, name, arg, &version);
        s_send_reply(self, key, keylen, kind, msg->reqid, status, version, NULL, 0);
        break;
    case GD_GETINST:
        status = gd_registry_getinst(self->reg, name, arg, &version);
        s_send_reply(self, key, keylen, kind, msg->reqid, status, version, NULL, 0);
        break;
    case GD_GSIZE:
        status = gd_registry_gsize(self->reg, name, &version);
        s_send_reply(self, key, keylen, kind, msg->reqid, status, version, NULL, 0);
        break;
    case GD_BARRIER:
    case GD_FREEZE:
        status = msg->kind == GD_BARRIER
               ? gd_registry_barrier(self->reg, tid, name, arg, &w, &version)
               : gd_registry_freeze(self->reg, tid, name, arg, &w, &version);
        if (status != GD_PENDING)
            s_send_reply(self, key, keylen, kind, msg->reqid, status, version, NULL, 0);
        break;
    case GD_SNAPSHOT: {
        uint8_t *blob = NULL;
        size_t len = 0;
        status = gd_registry_snapshot(self->reg, name, &version, &blob, &len);
        gd_frame_t f = { blob, len };
        s_send_reply(self, key, keylen, kind, msg->reqid, status, version, &f, status >= 0);
        free(blob);
        break;
    }
    case GD_STAT:
        s_handle_stat(self, key, keylen, msg, name);
        break;
    default:
        s_send_reply(self, key, keylen, kind, msg->reqid, GIMPI_ENOTIMPL, 0, NULL, 0);
    }
    free(name);
}

/*  Reads one request from the ROUTER and answers it; false when there was none. */
static bool s_on_request(groupd_t *self)
{
    gd_multipart_t mp;
    if (gd_multipart_recv(self->router, &mp, ZMQ_DONTWAIT) < 0)
        return false;
    int srcfd = gd_multipart_srcfd(&mp);
    if (mp.nparts < 1) {
        gd_multipart_close(&mp);
        return true;
    }
    const gd_frame_t *id = &mp.frames[0];
    gd_msg_t msg;
    int rc = mp.truncated ? GD_ERR_FRAMES : gd_request_decode(mp.frames + 1, mp.nparts - 1, &msg);
    if (rc) {
        gd_msg_t head;
        int hrc = mp.nparts > 1 ? gd_header_decode(&mp.frames[1], &head) : GD_ERR_HEADER;
        uint8_t kind = hrc == GD_ERR_HEADER ? GD_BAD_KIND : (uint8_t)(head.kind | GD_REPLY_FLAG);
        if (self->verbose)
            fprintf(stderr, "groupd: bad request (%s)\n", gd_strerror(rc));
        s_send_reply(self, id->data, id->len, kind, hrc == GD_ERR_HEADER ? 0 : head.reqid,
                     s_decode_status(rc), 0, NULL, 0);
    } else {
        if (self->verbose) {
            char buf[256];
            fprintf(stderr, "groupd: <- %s (fd %d)\n", gd_msg_format(&msg, buf, sizeof buf),
                    srcfd);
        }
        s_handle(self, id->data, id->len, &msg, srcfd);
        if (self->idle_exit_ms)
            self->last_busy_ms = s_now_ms();    /* any request restarts the idle period */
    }
    gd_multipart_close(&mp);
    return true;
}

/*  A subscription reached the XPUB: a MARK is due on its topic, so that the subscriber
 *  knows it is live (published by s_publish_marks).  False when there was none. */
static bool s_on_subscription(groupd_t *self)
{
    gd_multipart_t mp;
    if (gd_multipart_recv(self->xpub, &mp, ZMQ_DONTWAIT) < 0)
        return false;
    if (mp.nparts >= 1 && mp.frames[0].len >= 2 && mp.frames[0].data[0] == 1
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
static void s_publish_marks(groupd_t *self)
{
    if (gd_hash_size(self->marks) == 0)
        return;
    gd_hash_foreach(self->marks, s_mark_cb, self);
    gd_hash_destroy(&self->marks);
    self->marks = gd_hash_new();
}

/*  A monitor event: a connection ended -> the task on it is gone.  False when none. */
static bool s_on_monitor(groupd_t *self)
{
    gd_multipart_t mp;
    if (gd_multipart_recv(self->monitor, &mp, ZMQ_DONTWAIT) < 0)
        return false;
    if (mp.nparts >= 1 && mp.frames[0].len >= 6) {
        uint16_t event = (uint16_t)(mp.frames[0].data[0] | mp.frames[0].data[1] << 8);
        uint32_t value;
        memcpy(&value, mp.frames[0].data + 2, 4);
        int32_t fdkey = (int32_t)value;
        if (event == ZMQ_EVENT_ACCEPTED)
            gd_hash_put(self->fd_open, &fdkey, sizeof fdkey, (void *)1);
        if (event == ZMQ_EVENT_DISCONNECTED) {
            gd_hash_del(self->fd_open, &fdkey, sizeof fdkey);
            int32_t key = (int32_t)value;
            intptr_t tid = (intptr_t)gd_hash_del(self->fd_tid, &key, sizeof key);
            if (tid) {
                int32_t t = (int32_t)tid;
                gd_hash_del(self->tid_fd, &t, sizeof t);
                if (self->verbose)
                    fprintf(stderr, "groupd: task 0x%x gone (connection fd %d closed)\n",
                            (unsigned)t, (int)key);
                gd_registry_remove(self->reg, t, true);
            }
        }
    }
    gd_multipart_close(&mp);
    return true;
}

/* ------------------------------------------------------------------ set-up */

/*  Creates the directories above an ipc socket path that do not exist yet (mode 0700,
 *  like the per-user default's), so GIMPI_GROUPD may name a fresh directory.  0 or -1. */
static int s_make_parents(const char *file)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                fprintf(stderr, "groupd: cannot create directory %s: %s\n", dir,
                        strerror(errno));
                return -1;
            }
            *p = c;
            if (!c)
                return 0;
        }
    }
}

/*  For ipc endpoints: takes "<path>.lock"; refuses when another groupd holds it. */
static int s_lock(groupd_t *self)
{
    if (strncmp(self->endpoint, "ipc://", 6) != 0)
        return 0;
    if (s_make_parents(self->endpoint + 6) < 0)
        return -1;
    char path[600];
    snprintf(path, sizeof path, "%s.lock", self->endpoint + 6);
    self->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (self->lock_fd < 0) {
        fprintf(stderr, "groupd: cannot open lock file %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (flock(self->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        char pid[32] = "";
        ssize_t n = pread(self->lock_fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        if (*pid)
            fprintf(stderr, "groupd: another groupd (pid %s) is already serving %s; "
                    "not starting\n", pid, self->endpoint);
        else
            fprintf(stderr, "groupd: another groupd is already serving %s; not starting\n",
                    self->endpoint);
        return -1;
    }
    return 0;
}

/*  Writes our pid into the lock file (after daemonising). */
static void s_lock_pid(groupd_t *self)
{
    if (self->lock_fd < 0)
        return;
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(self->lock_fd, 0) == 0 && pwrite(self->lock_fd, pid, (size_t)n, 0) < 0)
        return;
}

/*  Derives the PUB endpoint from the request endpoint. */
static void s_pub_endpoint(groupd_t *self, char *bind_ep, size_t size)
{
    if (strncmp(self->endpoint, "ipc://", 6) == 0)
        snprintf(bind_ep, size, "%s.pub", self->endpoint);
    else if (strncmp(self->endpoint, "tcp://", 6) == 0) {
        snprintf(bind_ep, size, "%s", self->endpoint);
        char *colon = strrchr(bind_ep, ':');
        if (colon && colon > bind_ep + 5)
            snprintf(colon, size - (size_t)(colon - bind_ep), ":*");
    } else
        snprintf(bind_ep, size, "%s-pub", self->endpoint);
}

/*  Puts the main thread and libzmq's I/O thread on one CPU (before the first socket
 *  starts the I/O thread).  Every request crosses from one to the other twice; on the
 *  same CPU that hand-off is a plain context switch, across CPUs it is a wake-up of
 *  another (often idle, halted) CPU, several times dearer on a VM.  Measured with
 *  bench/gd-bench joinlv: +18 % at n = 2, +7 % at n = 4 (doc/groupd-protocol.md §10). */
static void s_pin(groupd_t *self)
{
    int cpu = self->cpu == -2 ? sched_getcpu() : self->cpu;
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0) {
        if (self->verbose)
            fprintf(stderr, "groupd: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
        return;
    }
    zmq_ctx_set(self->zctx, ZMQ_THREAD_AFFINITY_CPU_ADD, cpu);
    if (self->verbose)
        fprintf(stderr, "groupd: threads on CPU %d\n", cpu);
}

/*  Opens and binds everything; returns 0 or -1 with a message on stderr. */
static int s_setup(groupd_t *self)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (s_lock(self) < 0)
        return -1;
    self->zctx = zmq_ctx_new();
    if (!self->zctx)
        return -1;
    zmq_ctx_set(self->zctx, ZMQ_MAX_SOCKETS, 65536);
    s_pin(self);
    /* the ROUTER's monitor reports connections accepted and ended (liveness, doc §7) */
    char mon[64], err[GD_SOCK_ERRLEN];
    snprintf(mon, sizeof mon, "inproc://groupd-monitor-%d", (int)getpid());
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, self->endpoint);
    o.heartbeat_ivl_ms = self->heartbeat_ms;
    o.heartbeat_timeout_ms = self->heartbeat_ms * GD_SOCK_GROUPD_HEARTBEAT_TIMEOUTS;
    o.monitor_events = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED;
    o.monitor_endpoint = mon;
    self->router = gd_sock_new(self->zctx, &o, &self->monitor, err, sizeof err);
    if (!self->router) {
        fprintf(stderr, "groupd: %s\n", err);
        return -1;
    }
    char last[sizeof self->endpoint];
    if (gd_sock_last_endpoint(self->router, last, sizeof last))
        snprintf(self->endpoint, sizeof self->endpoint, "%s", last);
    char pub[600];
    s_pub_endpoint(self, pub, sizeof pub);
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_XPUB, pub);
    self->xpub = gd_sock_new(self->zctx, &o, NULL, err, sizeof err);
    if (!self->xpub) {
        fprintf(stderr, "groupd: %s\n", err);
        return -1;
    }
    gd_sock_last_endpoint(self->xpub, self->pub_endpoint, sizeof self->pub_endpoint);
    self->bound = true;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    self->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    signal(SIGPIPE, SIG_IGN);
    return self->sig_fd < 0 ? -1 : 0;
}

/*  Leaves the terminal before any ZeroMQ thread exists (they would not survive a fork):
 *  the child starts a new session and carries on; the parent waits for the child's word
 *  on a pipe and exits 0 once it serves, 1 when it failed (e.g. a groupd already runs).
 *  Returns the write end of the pipe in the child. */
static int s_daemonise(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0) {
        close(p[1]);
        char c = 0;
        ssize_t n;
        do
            n = read(p[0], &c, 1);
        while (n < 0 && errno == EINTR);
        _exit(n == 1 && c == '1' ? 0 : 1);
    }
    close(p[0]);
    setsid();
    return p[1];
}

/*  Tells the waiting parent that we serve, and lets go of the terminal. */
static void s_detach(groupd_t *self, int ready_fd)
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        if (!self->verbose)
            dup2(null, 2);
        if (null > 2)
            close(null);
    }
    if (write(ready_fd, "1", 1) < 0 && self->verbose)
        fprintf(stderr, "groupd: parent gone\n");
    close(ready_fd);
}

/*  Frees a pending MARK's name (hash visitor). */
static void s_free_name_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    free(v);
}

/*  Closes everything. */
static void s_teardown(groupd_t *self)
{
    gd_registry_destroy(&self->reg);
    gd_hash_destroy(&self->fd_tid);
    gd_hash_destroy(&self->tid_fd);
    gd_hash_destroy(&self->fd_open);
    if (self->marks) {
        gd_hash_foreach(self->marks, s_free_name_cb, NULL);
        gd_hash_destroy(&self->marks);
    }
    gd_sock_destroy(&self->router, &self->monitor);
    gd_sock_destroy(&self->xpub, NULL);
    if (self->zctx)
        zmq_ctx_term(self->zctx);
    if (self->bound && strncmp(self->endpoint, "ipc://", 6) == 0) {
        /* ours: we hold the lock (libzmq leaves ipc socket files behind) */
        unlink(self->endpoint + 6);
        if (strncmp(self->pub_endpoint, "ipc://", 6) == 0)
            unlink(self->pub_endpoint + 6);
    }
    if (self->sig_fd >= 0)
        close(self->sig_fd);
    if (self->lock_fd >= 0)
        close(self->lock_fd);
}

/*  zmq_poll timeout under --idle-exit: -1 (no limit) while tasks are registered or the
 *  option is off, else the milliseconds left of the idle period (0: it is over). */
static long s_idle_timeout(groupd_t *self)
{
    if (self->idle_exit_ms <= 0)
        return -1;
    if (gd_registry_ntasks(self->reg) > 0) {
        self->last_busy_ms = s_now_ms();
        return -1;
    }
    int64_t left = self->last_busy_ms + self->idle_exit_ms - s_now_ms();
    return left > 0 ? (long)left : 0;
}

/*  1 when a ZeroMQ socket has a message to read (ZMQ_EVENTS; this also takes the
 *  activations queued for it), 0 when not, -1 on error. */
static int s_readable(void *socket)
{
    int ev = 0;
    size_t el = sizeof ev;
    if (zmq_getsockopt(socket, ZMQ_EVENTS, &ev, &el) < 0)
        return -1;
    return (ev & ZMQ_POLLIN) != 0;
}

/*  The loop: serves until a signal (0) or a failure (-1).  Cheaper than zmq_poll over
 *  the three sockets, which costs some twenty system calls per request: each round looks
 *  at the ROUTER and the XPUB with ZMQ_EVENTS (a send on them may have taken their
 *  activation, so their fds alone are not enough) and handles what is there until both
 *  are empty; then it sleeps in one poll(2) on the notification fds.  The monitor socket
 *  is only ever read until empty, so its fd alone says when to look at it.  The monitor
 *  comes first: a connection's end is known before a recycled fd's requests. */
static int s_serve(groupd_t *self)
{
    struct pollfd pf[4] = { { .events = POLLIN }, { .events = POLLIN },
                            { .events = POLLIN }, { .fd = self->sig_fd, .events = POLLIN } };
    size_t fl = sizeof pf[0].fd;
    if (zmq_getsockopt(self->router, ZMQ_FD, &pf[0].fd, &fl) < 0
        || zmq_getsockopt(self->xpub, ZMQ_FD, &pf[1].fd, &fl) < 0
        || zmq_getsockopt(self->monitor, ZMQ_FD, &pf[2].fd, &fl) < 0)
        return -1;
    bool monitor_due = true;
    self->last_busy_ms = s_now_ms();
    for (;;) {
        if (monitor_due)
            s_drain_monitor(self);
        int rc = s_readable(self->router);
        for (int k = 0; rc > 0 && k < 256; k++, rc = s_readable(self->router))
            s_on_request(self);
        int rx = s_readable(self->xpub);
        for (int k = 0; rx > 0 && k < 256; k++, rx = s_readable(self->xpub))
            s_on_subscription(self);
        if (rc < 0 || rx < 0)
            return -1;
        bool marked = gd_hash_size(self->marks) > 0;
        s_publish_marks(self);
        if (!self->marks)
            return -1;
        monitor_due = false;
        /* both found empty after the last send on them: sleep (unless a batch bound was
           hit, or MARKs went out on the XPUB since it was looked at) */
        if (rc > 0 || rx > 0 || marked)
            continue;
        long timeout = s_idle_timeout(self);
        if (timeout == 0) {
            if (self->verbose)
                fprintf(stderr, "groupd: idle for %d s, exiting\n", self->idle_exit_ms / 1000);
            return 0;
        }
        int np = poll(pf, 4, timeout > INT_MAX ? INT_MAX : (int)timeout);
        if (np < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (np == 0)
            continue;           /* idle period over: s_idle_timeout says so next round */
        if (gd_registry_ntasks(self->reg) > 0)
            self->last_busy_ms = s_now_ms();     /* busy until now (a task may leave later) */
        if (pf[3].revents) {
            if (self->verbose)
                fprintf(stderr, "groupd: signal, exiting\n");
            return 0;
        }
        monitor_due = pf[2].revents != 0;
    }
}

/*  Prints the synopsis. */
static void s_usage(FILE *out)
{
    fprintf(out, "usage: groupd [--endpoint EP] [--foreground] [--verbose] [--heartbeat MS]\n"
                 "              [--idle-exit SECONDS] [--cpu N|none]\n");
}

/*  Default of --cpu: -2 (the CPU groupd starts on), except in sanitizer builds, where
 *  LeakSanitizer's exit-time tracer inherits the pin and was seen to stall for minutes
 *  beside the pinned threads: there -1 (no pin). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GROUPD_DEFAULT_CPU (-1)
#else
#define GROUPD_DEFAULT_CPU (-2)
#endif

/*  Parses the command line, sets up, serves until a signal. */
int main(int argc, char **argv)
{
    groupd_t self = { .lock_fd = -1, .sig_fd = -1, .heartbeat_ms = GD_SOCK_GROUPD_HEARTBEAT_MS,
                      .cpu = GROUPD_DEFAULT_CPU };
    static const struct option opts[] = {
        { "endpoint", required_argument, NULL, 'e' },
        { "foreground", no_argument, NULL, 'f' },
        { "verbose", no_argument, NULL, 'v' },
        { "heartbeat", required_argument, NULL, 'H' },
        { "idle-exit", required_argument, NULL, 'I' },
        { "cpu", required_argument, NULL, 'c' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *ep = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "e:fvH:I:c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'e': ep = optarg; break;
        case 'f': self.foreground = true; break;
        case 'v': self.verbose = true; break;
        case 'H': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 0 || v > 3600000) {
                fprintf(stderr, "groupd: bad --heartbeat '%s'\n", optarg);
                return 2;
            }
            self.heartbeat_ms = (int)v;
            break;
        }
        case 'I': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || end == optarg || v < 0 || v > 86400 * 365) {
                fprintf(stderr, "groupd: bad --idle-exit '%s'\n", optarg);
                return 2;
            }
            self.idle_exit_ms = (int)v * 1000;
            break;
        }
        case 'c': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!strcmp(optarg, "none"))
                v = -1;
            else if (*end || v < 0 || v >= CPU_SETSIZE) {
                fprintf(stderr, "groupd: bad --cpu '%s'\n", optarg);
                return 2;
            }
            self.cpu = (int)v;
            break;
        }
        case 'h': s_usage(stdout); return 0;
        default: s_usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        s_usage(stderr);
        return 2;
    }
    if (!ep && (ep = getenv("GIMPI_GROUPD")) && !*ep)
        ep = NULL;
    char why[GIMPI_KEY_ERRLEN];
    if (!ep && !(ep = gd_default_endpoint(self.endpoint, sizeof self.endpoint, why, sizeof why))) {
        fprintf(stderr, "groupd: %s\n", why);
        return 1;
    }
    if (strlen(ep) >= sizeof self.endpoint - 8) {
        fprintf(stderr, "groupd: endpoint too long\n");
        return 2;
    }
    if (ep != self.endpoint)
        snprintf(self.endpoint, sizeof self.endpoint, "%s", ep);
    int ready_fd = -1;
    if (!self.foreground && (ready_fd = s_daemonise()) < 0) {
        fprintf(stderr, "groupd: fork: %s\n", strerror(errno));
        return 1;
    }
    gd_sink_t sink = { s_sink_reply, s_sink_event, &self };
    self.reg = gd_registry_new(&sink);
    self.fd_tid = gd_hash_new();
    self.tid_fd = gd_hash_new();
    self.marks = gd_hash_new();
    self.fd_open = gd_hash_new();
    if (!self.reg || !self.fd_tid || !self.tid_fd || !self.marks || !self.fd_open
        || s_setup(&self) < 0) {
        s_teardown(&self);
        return 1;
    }
    printf("%s\n", self.endpoint);
    fflush(stdout);
    if (ready_fd >= 0)
        s_detach(&self, ready_fd);
    s_lock_pid(&self);
    if (self.verbose)
        fprintf(stderr, "groupd: serving %s, events on %s\n", self.endpoint,
                self.pub_endpoint);
    if (s_serve(&self) < 0)
        fprintf(stderr, "groupd: poll: %s\n", zmq_strerror(errno));
    s_teardown(&self);
    return 0;
}
