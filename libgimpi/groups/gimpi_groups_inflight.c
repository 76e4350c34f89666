/*  gimpi_groups_inflight.c — a task's requests to groupd on their way (groups_internal.h):
 *  the table of requests sent and not answered yet, kept to be sent again to a groupd
 *  that replaced the lost one (restarted from its journal, or a standby), and the one
 *  send of a request's frames, which never blocks for ever: libzmq's DEALER blocks a send
 *  while it has no connection, and on ipc a lost connection is not made again by libzmq
 *  (groups_reconnect makes a new socket), so a plain send to a groupd that died just
 *  before would wait for good.
 */
#include "config.h"
#include "groups/groups_internal.h"
#include "base/gimpi_bytes.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/*  Frees a request kept in flight. */
static void s_inflight_free(inflight_t *f)
{
    free(f->heap);
    f->heap = NULL;
}

/*  Keeps a request's frames until its reply comes (to send again after a reconnection).
 *  When the table is full the oldest quiet put goes, else the oldest request. */
void groups_inflight_add(gimpi_groups_t *self, uint32_t reqid, uint8_t cmd,
                         const gd_frame_t *frames, int n)
{
    if (!self->reconnect)
        return;
    size_t len = 4;
    for (int k = 0; k < n; k++)
        len += 4 + frames[k].len;
    if (self->ninflight == INFLIGHT_MAX) {
        int drop = 0;
        for (int k = 0; k < self->ninflight; k++)
            if (self->inflight[k].cmd == GD_MBOX_PUTQ) {
                drop = k;
                break;
            }
        s_inflight_free(&self->inflight[drop]);
        memmove(&self->inflight[drop], &self->inflight[drop + 1],
                (size_t)(--self->ninflight - drop) * sizeof self->inflight[0]);
    }
    inflight_t *f = &self->inflight[self->ninflight];
    f->heap = len <= sizeof f->small ? NULL : malloc(len);
    uint8_t *buf = len <= sizeof f->small ? f->small : f->heap;
    if (!buf)
        return;
    gimpi_be_put32(buf, (uint32_t)n);
    size_t off = 4;
    for (int k = 0; k < n; k++) {
        gimpi_be_put32(buf + off, (uint32_t)frames[k].len);
        memcpy(buf + off + 4, frames[k].data, frames[k].len);
        off += 4 + frames[k].len;
    }
    f->reqid = reqid;
    f->cmd = cmd;
    f->len = len;
    self->ninflight++;
}

/*  A reply to reqid came: it and (quiet_too) the replyless requests sent before it (quiet
 *  puts, barrier notes: groupd takes a connection's requests in order) are done.  True
 *  when reqid was in flight and a caller waits for its answer.  A HELLO's answer ends no
 *  quiet request: a reconnection sends the HELLO first and the requests in flight after
 *  it, so the quiet ones older than the HELLO have not yet reached the groupd that
 *  answers it (the HELLO stays in the table itself, to go again if that connection
 *  ends too). */
bool groups_inflight_done(gimpi_groups_t *self, uint32_t reqid, bool quiet_too)
{
    int out = 0;
    bool awaited = false;       /* (a status report's answer is waited for by nobody) */
    for (int k = 0; k < self->ninflight; k++)
        if (self->inflight[k].reqid == reqid && self->inflight[k].cmd == GD_HELLO)
            quiet_too = false;
    for (int k = 0; k < self->ninflight; k++) {
        inflight_t *f = &self->inflight[k];
        bool quiet = f->cmd == GD_MBOX_PUTQ || f->cmd == GD_BARRIER_NOTE;
        if (f->reqid == reqid)
            awaited = f->cmd != GD_TASK_STATUS;
        if (f->reqid == reqid || (quiet_too && quiet && f->reqid < reqid))
            s_inflight_free(f);
        else
            self->inflight[out++] = *f;
    }
    self->ninflight = out;
    return awaited;
}

/*  Keeps an outer wait's reply.  A barrier waiting when its groupd was replaced reconnects
 *  from inside its wait; the new groupd may release the barrier (from the arrivals the
 *  other tasks sent again) and answer it on the new connection before it has read our
 *  HELLO, and the HELLO's wait would drop that answer as late: the barrier then waited
 *  for good.  The oldest kept goes when all EARLY_MAX slots are taken. */
bool groups_early_keep(gimpi_groups_t *self, gd_multipart_t *mp)
{
    assert(self);
    if (!self->recv_awaited)
        return false;
    if (self->nearly == EARLY_MAX) {
        gd_multipart_close(&self->early[0]);
        memmove(self->early, self->early + 1, (EARLY_MAX - 1) * sizeof self->early[0]);
        memmove(self->early_reqid, self->early_reqid + 1,
                (EARLY_MAX - 1) * sizeof self->early_reqid[0]);
        self->nearly--;
    }
    self->early[self->nearly] = *mp;
    self->early_reqid[self->nearly++] = self->recv_awaited;
    memset(mp, 0, sizeof *mp);
    return true;
}

/*  Hands back the kept reply to reqid. */
bool groups_early_take(gimpi_groups_t *self, uint32_t reqid, gd_multipart_t *mp)
{
    assert(self);
    for (int k = 0; k < self->nearly; k++) {
        if (self->early_reqid[k] != reqid)
            continue;
        *mp = self->early[k];
        self->nearly--;
        memmove(self->early + k, self->early + k + 1,
                (size_t)(self->nearly - k) * sizeof self->early[0]);
        memmove(self->early_reqid + k, self->early_reqid + k + 1,
                (size_t)(self->nearly - k) * sizeof self->early_reqid[0]);
        return true;
    }
    return false;
}

/*  Sends the requests in flight again, oldest first, with their ids (groupd answers a
 *  journaled one it has seen from its table of replies). */
void groups_inflight_resend(gimpi_groups_t *self)
{
    for (int k = 0; k < self->ninflight; k++) {
        gd_frame_t frames[1 + GD_MAX_FRAMES];
        const inflight_t *f = &self->inflight[k];
        const uint8_t *p = f->heap ? f->heap : f->small;
        uint32_t n = gimpi_be_get32(p);
        size_t off = 4;
        for (uint32_t i = 0; i < n && i < 1 + GD_MAX_FRAMES; i++) {
            uint32_t l = gimpi_be_get32(p + off);
            frames[i] = (gd_frame_t){ p + off + 4, l };
            off += 4 + l;
        }
        if (gd_send_frames(self->dealer, NULL, 0, frames, (int)n, ZMQ_DONTWAIT) < 0)
            break;              /* (the new connection is gone too: the monitor says so) */
    }
}

/*  Frees every request kept, and the replies kept for outer waits. */
void groups_inflight_free(gimpi_groups_t *self)
{
    for (int i = 0; i < self->ninflight; i++)
        s_inflight_free(&self->inflight[i]);
    self->ninflight = 0;
    for (int i = 0; i < self->nearly; i++)
        gd_multipart_close(&self->early[i]);
    self->nearly = 0;
}

/*  Sends a request's frames on the DEALER.  When libzmq cannot take them at once (no
 *  connection to groupd, or GD_SOCK_HWM requests queued), waits for room in slices of
 *  SEND_SLICE_MS, reading the monitor between them: a connection that ended is then
 *  reconnected there, which sends the requests in flight again (this one among them when
 *  in_flight).  0: sent; -1: groupd is gone, or REQUEST_TIMEOUT_MS passed. */
int groups_send_frames(gimpi_groups_t *self, const gd_frame_t *frames, int n, bool in_flight)
{
    assert(self);
    int64_t end = gimpi_now_ms() + REQUEST_TIMEOUT_MS;
    uint32_t reconnects = self->nreconnects;
    for (;;) {
        if (gd_send_frames(self->dealer, NULL, 0, frames, n, ZMQ_DONTWAIT) == 0)
            return 0;                   /* (the first frame taken, the rest always are) */
        if (errno != EAGAIN || groups_check_monitor(self) || self->state != 1)
            return -1;
        if (in_flight && self->nreconnects != reconnects)
            return 0;                   /* sent again by the reconnection */
        if (gimpi_now_ms() >= end)
            return -1;
        zmq_pollitem_t item = { self->dealer, 0, ZMQ_POLLOUT, 0 };
        zmq_poll(&item, 1, SEND_SLICE_MS);
    }
}
