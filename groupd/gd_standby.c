/*  gd_standby.c — a standby groupd (see gd_standby.h): the loop that follows the primary
 *  into a journal file of its own before anything is bound, the decision to take over,
 *  and the FENCEs sent afterwards to the old primary's endpoint.
 */
#include "config.h"
#include "groupd/gd_standby.h"
#include "groupd/gd_follow.h"
#include "groupd/gd_witness.h"
#include "base/gimpi_clock.h"
#include "gimpi.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>
#include <sodium.h>
#include <zmq.h>

/*  What the follower keeps; after the takeover, what the fencing needs. */
typedef struct gd_standby_t {
    void *zctx, *dealer, *monitor;
    char primary[GD_MAX_ENDPOINT + 1];
    uint32_t reqid;                 /* of our FOLLOW (stream replies carry it), then FENCEs */
    uint64_t have;                  /* stream offset held */
    bool image;                     /* an image was written */
    int32_t term;                   /* the primary's */
    int64_t heard_ms, acked_ms, until_ms, next_ms;
    int64_t closed_ms;              /* when the connection to the primary ended (0: it
                                       did not, or the primary was heard since) */
    int64_t asked_ms;               /* --witness: when the takeover was last asked for */
    gd_journal_t *journal;
} gd_standby_t;

/*  Sends [hdr kind reqid][value] (an Int4 when q is false, else a Uint8).  0 or -1. */
static int s_send(gd_standby_t *s, uint8_t kind, uint64_t v, bool q)
{
    uint8_t hdr[GD_HDR_SIZE], val[8];
    gd_header_encode(hdr, kind, s->reqid);
    if (q)
        gimpi_be_put64(val, v);
    else
        gimpi_be_put32(val, (uint32_t)v);
    gd_frame_t frames[2] = { { hdr, sizeof hdr }, { val, q ? 8u : 4u } };
    return gd_send_frames(s->dealer, NULL, 0, frames, 2, ZMQ_DONTWAIT);
}

/*  Asks to FOLLOW (again: a new request id, the stream starts anew with an image). */
static void s_follow(gd_standby_t *s)
{
    s->reqid++;
    s_send(s, GD_FOLLOW, 0, false);
}

/*  Opens the DEALER towards the primary (the job's key on tcp) with its monitor.  0 or -1. */
static int s_open(gd_standby_t *s, const gimpi_key_t *key)
{
    char err[GD_SOCK_ERRLEN], mon[64];
    uint8_t rid[16];
    randombytes_buf(rid, sizeof rid);
    rid[0] = 's';                       /* (libzmq reserves routing ids that start with 0) */
    snprintf(mon, sizeof mon, "inproc://groupd-standby-%d", (int)getpid());
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_TASK_DEALER, s->primary);
    o.routing_id = rid;
    o.routing_id_len = sizeof rid;
    o.maxmsgsize = -1;                  /* (an image is the whole journal) */
    o.monitor_events = ZMQ_EVENT_DISCONNECTED | GD_SOCK_HANDSHAKE_EVENTS;
    o.monitor_endpoint = mon;
    if (gd_sock_secure(&o, key, err, sizeof err) < 0
        || !(s->dealer = gd_sock_new(s->zctx, &o, &s->monitor, err, sizeof err))) {
        fprintf(stderr, "groupd: standby of %s: %s\n", s->primary, err);
        gimpi_key_wipe(&o.security, sizeof o.security);
        return -1;
    }
    gimpi_key_wipe(&o.security, sizeof o.security);
    return 0;
}

/*  One stream reply: written to the journal.  0, 1 when the stream must start anew (a
 *  gap: a message lost), or -1 (a write failed, said). */
static int s_take(gd_standby_t *s, const gd_msg_t *m)
{
    int32_t term = m->values[2].i;
    uint64_t pos = m->values[3].q;
    bool image = m->values[4].i & 1;
    const gd_value_t *b = &m->values[5];
    s->term = term > s->term ? term : s->term;
    if (!image && (!s->image || pos != s->have + b->len))
        return s->image ? 1 : 0;        /* (before the first image: wait for it) */
    if ((b->len || image) && gd_journal_write_raw(s->journal, b->data, b->len, image) < 0) {
        fprintf(stderr, "groupd: standby: cannot write journal %s: %s\n",
                gd_journal_path(s->journal), strerror(errno));
        return -1;
    }
    s->have = pos;
    s->image = s->image || image;
    return 0;
}

/*  Reads what the primary sent.  0, or -1 (a failure, said). */
static int s_read(gd_standby_t *s, bool *wrote)
{
    gd_multipart_t mp;
    while (gd_multipart_recv(s->dealer, &mp, ZMQ_DONTWAIT) == 0) {
        gd_msg_t head, m;
        int rc = 0;
        s->heard_ms = gimpi_now_ms();
        if (mp.nparts >= 1 && gd_header_decode(&mp.frames[0], &head) == GD_OK
            && head.reqid == s->reqid) {
            if (head.kind == (GD_FOLLOW | GD_REPLY_FLAG) && !mp.truncated
                && gd_reply_decode(GD_FOLLOW, mp.frames, mp.nparts, &m) == GD_OK) {
                if (m.values[0].i == GIMPI_ENOTIMPL) {
                    fprintf(stderr, "groupd: standby: the primary at %s keeps no journal "
                            "(start it with --journal)\n", s->primary);
                    rc = -1;
                } else if (m.values[0].i < 0 || (rc = s_take(s, &m)) == 1) {
                    rc = 0;
                    s_follow(s);
                } else
                    *wrote = true;
            } else if (head.kind == (GD_FOLLOW_ACK | GD_REPLY_FLAG))
                s_follow(s);            /* it dropped us: follow again */
        }
        gd_multipart_close(&mp);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/*  True when the monitor says the connection to the primary ended. */
static bool s_closed(gd_standby_t *s)
{
    gd_multipart_t mp;
    bool closed = false;
    while (gd_multipart_recv(s->monitor, &mp, ZMQ_DONTWAIT) == 0) {
        if (mp.nparts >= 1 && mp.frames[0].len >= 6) {
            uint16_t ev = (uint16_t)(mp.frames[0].data[0] | mp.frames[0].data[1] << 8);
            closed = closed || ev == ZMQ_EVENT_DISCONNECTED;
            if (ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH || ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
                fprintf(stderr, "groupd: standby: the primary at %s refused our handshake "
                        "(not the same key?)\n", s->primary);
        }
        gd_multipart_close(&mp);
    }
    return closed;
}

/*  The primary is gone (closed: its connection ended, else it fell silent) with an image
 *  held: true to take over now; with a witness (--witness) the takeover is asked for
 *  (again every GD_WITNESS_ASK_MS) and waits for its grant (s_loop).  The question ends
 *  when the primary is heard again. */
static bool s_gone(groupd_t *self, gd_standby_t *s, bool closed)
{
    char why[GD_MAX_ENDPOINT + 64];
    snprintf(why, sizeof why, "the primary at %s %s", s->primary,
             closed ? "closed its connection" : "fell silent");
    if (!self->witness) {
        fprintf(stderr, "groupd: %s: taking over\n", why);
        return true;
    }
    int64_t now = gimpi_now_ms();
    if (!s->asked_ms)
        fprintf(stderr, "groupd: standby: %s: asking the witness to take over\n", why);
    if (now - s->asked_ms >= GD_WITNESS_ASK_MS) {
        gd_witness_ask(self, "takeover", s->term, why);
        s->asked_ms = now;
    }
    return false;
}

/*  A signal while following: 1 to stop (SIGTERM and the like), 0 to take over (the
 *  witness's grant), -1 when nothing is to be done. */
static int s_signal(groupd_t *self, gd_standby_t *s)
{
    int sig = gd_witness_signal(self);
    if (sig != SIGUSR1)
        return sig ? 1 : -1;
    if (!self->witness || !s->image)
        return -1;
    fprintf(stderr, "groupd: the witness granted the takeover from %s: taking over\n",
            s->primary);
    return 0;
}

/*  The loop until the primary is gone (with an image held): 0; or a signal came: 1; or
 *  -1. */
static int s_loop(groupd_t *self, gd_standby_t *s, int *ready_fd)
{
    s->heard_ms = s->acked_ms = gimpi_now_ms();
    int64_t looped = s->heard_ms;
    s_follow(s);
    for (;;) {
        bool wrote = false, had = s->image;
        if (gimpi_now_ms() - looped > GD_FOLLOW_SILENT_MS / 2)
            s->heard_ms = gimpi_now_ms();   /* we were stopped, not the primary */
        looped = gimpi_now_ms();
        if (s_read(s, &wrote) < 0)
            return -1;
        if (s->image && !had) {
            if (!self->quiet || self->verbose)
                fprintf(stderr, "groupd: standby of %s (term %d): following, %llu bytes\n",
                        s->primary, (int)s->term, (unsigned long long)s->have);
            if (*ready_fd >= 0 && write(*ready_fd, "1", 1) >= 0)
                close(*ready_fd);
            *ready_fd = -1;
        }
        int64_t now = gimpi_now_ms();
        if (wrote || now - s->acked_ms >= GD_FOLLOW_BEAT_MS) {
            if (s->image)
                s_send(s, GD_FOLLOW_ACK, s->have, true);
            s->acked_ms = now;
        }
        if (s_closed(s))
            s->closed_ms = now;
        if (s->closed_ms && s->heard_ms > s->closed_ms)
            s->closed_ms = 0;               /* (connected again, and heard) */
        bool gone = s->closed_ms || now - s->heard_ms > GD_FOLLOW_SILENT_MS;
        if (s->image && gone && s_gone(self, s, s->closed_ms != 0))
            return 0;
        if (!gone && s->asked_ms) {
            fprintf(stderr, "groupd: standby: the primary at %s is back: following\n",
                    s->primary);
            s->asked_ms = 0;
        }
        zmq_pollitem_t items[3] = { { s->dealer, 0, ZMQ_POLLIN, 0 },
                                    { s->monitor, 0, ZMQ_POLLIN, 0 },
                                    { NULL, self->sig_fd, ZMQ_POLLIN, 0 } };
        long wait = s->acked_ms + GD_FOLLOW_BEAT_MS - gimpi_now_ms();
        if (zmq_poll(items, 3, wait < 1 ? 1 : wait) < 0 && errno != EINTR)
            return -1;
        int sig = items[2].revents & ZMQ_POLLIN ? s_signal(self, s) : -1;
        if (sig >= 0)
            return sig;
    }
}

/*  Stopped on purpose (a signal: gimpirun ends the job, or moves on): the primary is told
 *  (a FOLLOW_ACK of GD_FOLLOW_BYE, so that it goes on alone without a word), and its
 *  answer awaited a moment (what the primary holds for our ack leaves then). */
static void s_bye(gd_standby_t *s)
{
    if (s_send(s, GD_FOLLOW_ACK, GD_FOLLOW_BYE, true) < 0)
        return;
    int64_t end = gimpi_now_ms() + GD_FOLLOW_BEAT_MS;
    for (long left; (left = (long)(end - gimpi_now_ms())) > 0;) {
        zmq_pollitem_t item = { s->dealer, 0, ZMQ_POLLIN, 0 };
        if (zmq_poll(&item, 1, left) <= 0)
            return;
        gd_multipart_t mp;
        gd_msg_t head;
        while (gd_multipart_recv(s->dealer, &mp, ZMQ_DONTWAIT) == 0) {
            bool done = mp.nparts >= 1 && gd_header_decode(&mp.frames[0], &head) == GD_OK
                     && head.kind == (GD_FOLLOW_ACK | GD_REPLY_FLAG);
            gd_multipart_close(&mp);
            if (done)
                return;
        }
    }
}

/*  Follows the primary. */
int gd_standby_follow(groupd_t *self, const char *primary, const gimpi_key_t *key,
                      const char *path, int *ready_fd)
{
    assert(self);
    char err[700];
    gd_standby_t *s = calloc(1, sizeof *s);
    if (!s || strlen(primary) > GD_MAX_ENDPOINT) {
        free(s);
        fprintf(stderr, "groupd: standby of %.80s: %s\n", primary,
                s ? "out of memory" : "endpoint too long");
        return -1;
    }
    self->standby = s;
    snprintf(s->primary, sizeof s->primary, "%s", primary);
    if (!(s->journal = gd_journal_open(path, 0, err, sizeof err))) {
        fprintf(stderr, "groupd: standby: %s\n", err);
        return -1;
    }
    if (!(s->zctx = zmq_ctx_new()) || s_open(s, key) < 0) {
        gd_journal_destroy(&s->journal, true);
        return -1;
    }
    int rc = s_loop(self, s, ready_fd);
    if (rc == 1)
        s_bye(s);
    /* (stopped, or failed: the copy is of no use to anyone; kept to take over) */
    gd_journal_destroy(&s->journal, rc != 0);
    self->term = s->term;
    return rc;
}

/*  After the replay. */
void gd_standby_took_over(groupd_t *self)
{
    assert(self && self->standby);
    gd_standby_t *s = self->standby;
    self->term = (self->term > s->term ? self->term : s->term) + 1;
    if (self->journal && gd_journal_append(self->journal, GD_JR_TERM,
                                           &(gd_jfield_t){ .i = self->term }, 1) < 0)
        fprintf(stderr, "groupd: cannot write journal %s: %s\n",
                gd_journal_path(self->journal), strerror(errno));
    s->until_ms = gimpi_now_ms() + GD_STANDBY_FENCE_S * 1000;
    s->next_ms = 0;
    fprintf(stderr, "groupd: took over from %s: serving %s at term %d\n", s->primary,
            self->endpoint, (int)self->term);
}

/*  FENCE when due. */
int gd_standby_tick(groupd_t *self)
{
    assert(self);
    gd_standby_t *s = self->standby;
    if (!s || !s->dealer)
        return -1;
    int64_t now = gimpi_now_ms();
    if (now >= s->until_ms) {
        gd_standby_destroy(self);
        return -1;
    }
    if (now >= s->next_ms) {
        s->reqid++;
        s_send(s, GD_FENCE, (uint64_t)(uint32_t)self->term, false);
        s->next_ms = now + 1000;
    }
    return (int)(s->next_ms - now);
}

/*  Frees it. */
void gd_standby_destroy(groupd_t *self)
{
    assert(self);
    gd_standby_t *s = self->standby;
    if (!s)
        return;
    gd_journal_destroy(&s->journal, false);
    gd_sock_destroy(&s->dealer, &s->monitor);
    if (s->zctx)
        zmq_ctx_term(s->zctx);
    free(s);
    self->standby = NULL;
}
