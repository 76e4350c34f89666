/*  gd_follow.c — the primary's side of a standby groupd (see gd_follow.h): the standby's
 *  routing id and stream offsets, the journal's tap that sends it every record, and the
 *  queue of replies held until it has acked the records written before them.
 */
#include "config.h"
#include "groupd/gd_follow.h"
#include "groupd/gd_witness.h"
#include "base/gimpi_clock.h"
#include "gimpi.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/*  One reply held: the stream offset the standby must hold first, and its frames (the
 *  route first) packed (gd_journal_pack). */
typedef struct held_t {
    struct held_t *next;
    uint64_t need;
    uint8_t *packed;
    size_t len;
} held_t;

/*  The standby following. */
typedef struct gd_follow_t {
    uint8_t rid[256];               /* its routing id */
    size_t rid_len;
    uint32_t reqid;                 /* of its FOLLOW: every stream reply carries it */
    int fd;                         /* its connection */
    uint64_t sent, acked;           /* stream offsets */
    int64_t heard_ms, sent_ms;      /* last message from it, to it */
    int64_t ticked_ms;              /* last gd_follow_tick */
    int64_t quiet_until_ms;         /* we were stopped: every reply, reads too, waits
                                       until then (a FENCE already queued is read first) */
    held_t *head, *tail;
    size_t nheld;
    bool bye;                       /* it stops on purpose (GD_FOLLOW_BYE): nothing said */
    int64_t asked_ms;               /* --witness: when we last asked to go on alone (0:
                                       not asking); replies are held meanwhile */
    char why[64];                   /* what was asked about */
} gd_follow_t;

/*  The standby seems lost (why): dropped, and the primary goes on alone; with a witness
 *  (--witness, gd_witness.h) only once it grants that: asked now (and again every
 *  GD_WITNESS_ASK_MS from gd_follow_tick), the replies held meanwhile. */
static void s_lost(groupd_t *self, const char *why)
{
    gd_follow_t *f = self->follow;
    if (!self->witness) {
        gd_follow_stop(self, why);
        return;
    }
    if (f->asked_ms)
        return;
    f->asked_ms = gimpi_now_ms();
    if (why != f->why)
        snprintf(f->why, sizeof f->why, "%s", why);
    char q[96];
    snprintf(q, sizeof q, "the standby %s", why);
    gd_witness_ask(self, "alone", self->term, q);
}

/*  Sends one stream message [term][offset][flags][bytes] to the standby.  0 or -1. */
static int s_send(groupd_t *self, int32_t flags, const uint8_t *data, size_t len)
{
    gd_follow_t *f = self->follow;
    uint8_t hdr[GD_HDR_SIZE], st[4], ver[8], term[4], pos[8], fl[4];
    gd_header_encode(hdr, GD_FOLLOW | GD_REPLY_FLAG, f->reqid);
    gimpi_be_put32(st, 0);
    gimpi_be_put64(ver, 0);
    gimpi_be_put32(term, (uint32_t)self->term);
    f->sent += len;                     /* (an image too: offsets only grow, so acks and
                                           held replies stay comparable across images) */
    gimpi_be_put64(pos, f->sent);
    gimpi_be_put32(fl, (uint32_t)flags);
    gd_frame_t route = { f->rid, f->rid_len };
    gd_frame_t frames[7] = { { hdr, sizeof hdr }, { st, 4 }, { ver, 8 }, { term, 4 },
                             { pos, 8 }, { fl, 4 }, { data, len } };
    f->sent_ms = gimpi_now_ms();
    return gd_send_frames(self->router, &route, 1, frames, 7, ZMQ_DONTWAIT);
}

/*  The journal's tap: a record appended goes to the standby. */
static void s_tap(void *arg, const uint8_t *data, size_t len)
{
    groupd_t *self = arg;
    if (self->follow && s_send(self, 0, data, len) < 0)
        s_lost(self, "does not keep up (its queue is full)");
}

/*  Sends the journal file as an image.  0 or -1. */
static int s_image(groupd_t *self)
{
    size_t len = 0;
    uint8_t *data = gd_journal_read_all(self->journal, &len);
    if (!data)
        return -1;
    int rc = s_send(self, 1, data, len);
    free(data);
    return rc;
}

/*  Sends the replies the standby's offset now allows (all of them with force; with
 *  force and not send, drops them all: the tasks ask a newer primary again). */
static void s_release(groupd_t *self, bool force, bool send)
{
    gd_follow_t *f = self->follow;
    while (f->head && (force || f->head->need <= f->acked)) {
        held_t *h = f->head;
        gd_frame_t frames[GD_JOURNAL_MAX_PACKED];
        int n = gd_journal_unpack(h->packed, h->len, frames, GD_JOURNAL_MAX_PACKED);
        if (n >= 2 && send)
            gd_send_frames(self->router, frames, 1, frames + 1, n - 1, ZMQ_DONTWAIT);
        f->head = h->next;
        free(h->packed);
        free(h);
        f->nheld--;
    }
    if (!f->head)
        f->tail = NULL;
}

/*  A short reply [route][hdr][status][version] to key. */
static void s_reply(groupd_t *self, const uint8_t *key, size_t keylen, uint8_t kind,
                    uint32_t reqid, int32_t status)
{
    uint8_t hdr[GD_HDR_SIZE], st[4], ver[8];
    gd_header_encode(hdr, kind | GD_REPLY_FLAG, reqid);
    gimpi_be_put32(st, (uint32_t)status);
    gimpi_be_put64(ver, 0);
    gd_frame_t route = { key, keylen };
    gd_frame_t frames[3] = { { hdr, sizeof hdr }, { st, 4 }, { ver, 8 } };
    gd_send_frames(self->router, &route, 1, frames, 3, ZMQ_DONTWAIT);
}

/*  A term seen that is higher than ours (a task's HELLO, a FENCE): a newer primary
 *  serves, so we stop (the loop ends, groupd exits 4) and answer nothing more. */
static void s_fence(groupd_t *self, int32_t term, const char *from)
{
    if (term <= self->term || self->fenced)
        return;
    fprintf(stderr, "groupd: fenced by term %d (ours %d, from %s): exiting\n", (int)term,
            (int)self->term, from);
    self->fenced = true;
}

/*  The requests of standbys and terms (FOLLOW, FOLLOW_ACK, FENCE; a HELLO's term), before
 *  quotas and journal: true when handled here. */
bool gd_follow_request(groupd_t *self, const gd_frame_t *frames, const gd_msg_t *msg,
                              int srcfd)
{
    const gd_frame_t *id = &frames[0];      /* (then the header, then the values) */
    self->hello_term = 0;
    if (msg->kind == GD_HELLO && msg->nextra >= 1 && frames[2 + msg->extra_first].len == 4)
        self->hello_term = (int32_t)gimpi_be_get32(frames[2 + msg->extra_first].data);
    s_fence(self, self->hello_term, "a task's HELLO");
    if (self->fenced)
        return true;
    switch (msg->kind) {
    case GD_FOLLOW:
        gd_follow_start(self, id->data, id->len, msg->reqid, srcfd);
        return true;
    case GD_FOLLOW_ACK:
        gd_follow_ack(self, id->data, id->len, msg->reqid, msg->values[0].q);
        return true;
    case GD_FENCE:
        s_fence(self, msg->values[0].i, "a FENCE");
        return true;
    default:
        return false;
    }
}

/*  A FOLLOW request. */
void gd_follow_start(groupd_t *self, const uint8_t *key, size_t keylen, uint32_t reqid,
                     int fd)
{
    assert(self);
    if (!self->journal || keylen > sizeof self->follow->rid) {
        s_reply(self, key, keylen, GD_FOLLOW, reqid, GIMPI_ENOTIMPL);
        return;
    }
    if (self->follow)
        gd_follow_stop(self, "is replaced by a new one");
    gd_follow_t *f = calloc(1, sizeof *f);
    if (!f) {
        s_reply(self, key, keylen, GD_FOLLOW, reqid, GIMPI_ENOMEM);
        return;
    }
    memcpy(f->rid, key, keylen);
    f->rid_len = keylen;
    f->reqid = reqid;
    f->fd = fd;
    f->heard_ms = f->ticked_ms = gimpi_now_ms();
    self->follow = f;
    gd_journal_set_tap(self->journal, s_tap, self);
    if (s_image(self) < 0) {
        gd_follow_stop(self, "cannot be sent the journal");
        return;
    }
    if (!self->quiet || self->verbose)
        fprintf(stderr, "groupd: a standby follows (fd %d), sent %llu bytes\n", fd,
                (unsigned long long)f->sent);
}

/*  A FOLLOW_ACK. */
void gd_follow_ack(groupd_t *self, const uint8_t *key, size_t keylen, uint32_t reqid,
                   uint64_t pos)
{
    assert(self);
    gd_follow_t *f = self->follow;
    if (!f || keylen != f->rid_len || memcmp(key, f->rid, keylen)) {
        s_reply(self, key, keylen, GD_FOLLOW_ACK, reqid, GIMPI_ESYSERR);
        return;
    }
    if (pos == GD_FOLLOW_BYE) {
        f->bye = true;
        gd_follow_stop(self, "stopped");
        s_reply(self, key, keylen, GD_FOLLOW_ACK, reqid, 0);
        return;
    }
    f->heard_ms = gimpi_now_ms();
    if (f->asked_ms && f->fd >= 0 && strcmp(f->why, "fell silent") == 0) {
        f->asked_ms = 0;                /* (it was only slow: nothing more to ask) */
        fprintf(stderr, "groupd: the standby is heard again: it follows on\n");
    }
    if (pos > f->acked && pos <= f->sent)
        f->acked = pos;
    s_release(self, false, true);
}

/*  A reply about to leave. */
bool gd_follow_hold(groupd_t *self, const gd_frame_t *route, const gd_frame_t *frames, int n)
{
    assert(self);
    gd_follow_t *f = self->follow;
    bool quiet = f && gimpi_now_ms() < f->quiet_until_ms;
    if (!f || (f->acked >= f->sent && !f->head && !quiet) || n + 1 > GD_JOURNAL_MAX_PACKED)
        return false;
    gd_frame_t all[GD_JOURNAL_MAX_PACKED];
    all[0] = *route;
    memcpy(all + 1, frames, (size_t)n * sizeof *frames);
    held_t *h = calloc(1, sizeof *h);
    if (!h || !(h->len = gd_journal_pack(all, n + 1, &h->packed))) {
        free(h);
        return false;
    }
    h->need = UINT64_MAX;               /* until the request's handling ends (gd_follow_seal) */
    if (f->tail)
        f->tail->next = h;
    else
        f->head = h;
    f->tail = h;
    f->nheld++;
    return true;
}

/*  The request's handling is over. */
void gd_follow_seal(groupd_t *self)
{
    assert(self);
    gd_follow_t *f = self->follow;
    if (!f || !f->tail || f->tail->need != UINT64_MAX || gimpi_now_ms() < f->quiet_until_ms)
        return;
    for (held_t *h = f->head; h; h = h->next)
        if (h->need == UINT64_MAX)
            h->need = f->sent;
}

/*  Heartbeat and silence. */
int gd_follow_tick(groupd_t *self)
{
    assert(self);
    gd_follow_t *f = self->follow;
    if (!f)
        return -1;
    int64_t now = gimpi_now_ms();
    if (now - f->ticked_ms > GD_FOLLOW_SILENT_MS / 2) {
        /* we were stopped, not it: it has a second again (to ack, or to FENCE us if it
           took over meanwhile), and nothing we answer leaves before (a task that has not
           seen the new term yet would take our word for the state) */
        f->heard_ms = now;
        f->quiet_until_ms = now + GD_FOLLOW_SILENT_MS;
        fprintf(stderr, "groupd: stopped for %lld ms with a standby: replies wait 1 s\n",
                (long long)(now - f->ticked_ms));
    }
    f->ticked_ms = now;
    gd_follow_seal(self);
    s_release(self, false, true);
    if (f->asked_ms) {                  /* (the witness is asked: again when due) */
        if (now - f->asked_ms >= GD_WITNESS_ASK_MS) {
            f->asked_ms = 0;
            s_lost(self, f->why);
        }
        return (int)(f->asked_ms + GD_WITNESS_ASK_MS - now);
    }
    if (now - f->heard_ms > GD_FOLLOW_SILENT_MS) {
        s_lost(self, "fell silent");
        return self->follow ? 0 : -1;
    }
    if (now - f->sent_ms >= GD_FOLLOW_BEAT_MS && s_send(self, 0, NULL, 0) < 0) {
        s_lost(self, "does not keep up (its queue is full)");
        return self->follow ? 0 : -1;
    }
    int64_t beat = f->sent_ms + GD_FOLLOW_BEAT_MS - now;
    if (f->quiet_until_ms > now && f->quiet_until_ms - now < beat)
        beat = f->quiet_until_ms - now;
    int64_t silent = f->heard_ms + GD_FOLLOW_SILENT_MS + 1 - now;
    int64_t due = beat < silent ? beat : silent;
    return due < 0 ? 0 : (int)due;
}

/*  A connection ended. */
void gd_follow_conn_gone(groupd_t *self, int fd)
{
    assert(self);
    if (self->follow && self->follow->fd == fd) {
        self->follow->fd = -1;
        s_lost(self, "closed its connection");
    }
}

/*  The witness's grant (SIGUSR1). */
void gd_follow_granted(groupd_t *self)
{
    assert(self);
    gd_follow_t *f = self->follow;
    if (!self->witness || !f || !f->asked_ms)
        return;                         /* (nothing asked: nothing to do) */
    char why[128];
    snprintf(why, sizeof why, "%s; the witness agreed", f->why);
    gd_follow_stop(self, why);
}

/*  After a compaction. */
void gd_follow_image(groupd_t *self)
{
    assert(self);
    if (self->follow && (!self->journal || s_image(self) < 0))
        gd_follow_stop(self, "cannot be sent the compacted journal");
}

/*  Drops the standby. */
void gd_follow_stop(groupd_t *self, const char *why)
{
    assert(self);
    gd_follow_t *f = self->follow;
    if (!f)
        return;
    s_release(self, true, why != NULL && !self->fenced);
    if (self->journal)
        gd_journal_set_tap(self->journal, NULL, NULL);
    /* (gimpirun runs its groupd --quiet and says a lost standby itself) */
    if (why && !f->bye && (!self->quiet || self->verbose))
        fprintf(stderr, "groupd: the standby %s: going on alone\n", why);
    free(f);
    self->follow = NULL;
}
