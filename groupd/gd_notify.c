/*  gd_notify.c — groupd's events for pvm_notify (see gd_notify.h): task ends, host table
 *  changes and the MARKs of their topics.  Task ends reach everyone who subscribed to the
 *  task's topic, whatever ended it (UNREGISTER, the end of its connection, a heartbeat
 *  timeout, the manager's TASK_EXIT).  Host changes are found by comparing the dtids (the
 *  first field of every row) of the old and the new VM_HOSTS tables, so that every way the
 *  manager changes the table (pvm_addhosts, pvm_delhosts, a host that breaks) is seen
 *  without the manager saying why.  It also keeps the set of topics that have subscribers
 *  at the XPUB, so that no event is built for a topic nobody can receive (every event,
 *  gd_serve.c's too, asks gd_notify_watched first).
 */
#include "config.h"
#include "groupd/gd_notify.h"
#include "base/gimpi_vmwire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/*  Publishes one event [topic][header][q 0][q 0][i inst][i tid][i extra]. */
static void s_publish(groupd_t *self, const uint8_t *topic, size_t tlen, uint8_t kind,
                      int32_t inst, int32_t tid, int32_t extra)
{
    if (!gd_notify_watched(self, topic, tlen))
        return;
    uint8_t hdr[GD_HDR_SIZE], buf[5 * 8];
    gd_header_encode(hdr, kind, 0);
    gd_value_t v[5] = { { .q = 0 }, { .q = 0 }, { .i = inst }, { .i = tid }, { .i = extra } };
    gd_frame_t frames[7] = { { topic, tlen }, { hdr, sizeof hdr } };
    if (gd_values_encode(GD_EVENT_LAYOUT, v, 5, buf, frames + 2) == 5)
        gd_send_frames(self->xpub, NULL, 0, frames, 7, ZMQ_DONTWAIT);
    if (self->verbose)
        fprintf(stderr, "groupd: event %s '%c' inst %d tid 0x%x (%d)\n", gd_kind_name(kind),
                topic[0], (int)inst, (unsigned)tid, (int)extra);
}

/*  The topic of task tid: "T" + Int4. */
static void s_task_topic(uint8_t topic[5], int32_t tid)
{
    topic[0] = 'T';
    gimpi_be_put32(topic + 1, (uint32_t)tid);
}

/*  Publishes that task tid has ended. */
void gd_notify_task_gone(groupd_t *self, int32_t tid)
{
    uint8_t topic[5];
    s_task_topic(topic, tid);
    s_publish(self, topic, sizeof topic, GD_EV_TASK_EXIT, 0, tid, 0);
    gd_status_task_gone(self->status, tid);     /* (its live status goes with it) */
}

/*  The dtids of a VM_HOSTS table: their number (*dtids malloc'ed), 0 when it has none or
 *  cannot be read. */
static int s_dtids(const uint8_t *table, size_t len, int32_t **dtids)
{
    *dtids = NULL;
    vmw_msg_t m;
    if (!table || !len || vmw_decode(table, len, &m, NULL, 0) < 0)
        return 0;
    int n = 0;
    if (m.type == VM_HOSTS && m.nfields == 1 && m.v[0]) {
        while (m.v[0][n])
            n++;
        *dtids = calloc((size_t)n + 1, sizeof **dtids);
        int k = 0;
        for (int i = 0; *dtids && i < n; i++)
            if (sscanf(m.v[0][i], "%d", &(*dtids)[k]) == 1)
                k++;
        n = *dtids ? k : 0;
    }
    vmw_msg_free(&m);
    return n;
}

/*  True when dtid is among a[n]. */
static bool s_has(const int32_t *a, int n, int32_t dtid)
{
    for (int i = 0; i < n; i++)
        if (a[i] == dtid)
            return true;
    return false;
}

/*  Publishes kind for every host of a[na] missing from b[nb]: instance = its place among
 *  them, argument = how many there are. */
static void s_publish_missing(groupd_t *self, uint8_t kind, const int32_t *a, int na,
                              const int32_t *b, int nb)
{
    int count = 0;
    for (int i = 0; i < na; i++)
        count += !s_has(b, nb, a[i]);
    const uint8_t topic[1] = { 'H' };
    for (int i = 0, k = 0; i < na; i++)
        if (!s_has(b, nb, a[i]))
            s_publish(self, topic, 1, kind, k++, a[i], count);
}

/*  Publishes the hosts that the new table removes and adds. */
void gd_notify_hosts(groupd_t *self, const uint8_t *old, size_t old_len, const uint8_t *neu,
                     size_t new_len)
{
    int32_t *a, *b;
    int na = s_dtids(old, old_len, &a), nb = s_dtids(neu, new_len, &b);
    s_publish_missing(self, GD_EV_HOST_DEL, a, na, b, nb);
    s_publish_missing(self, GD_EV_HOST_ADD, b, nb, a, na);
    free(a);
    free(b);
}

/*  The MARK of a notify topic, at once (these subscriptions are few: one per watched task). */
bool gd_notify_subscribed(groupd_t *self, const uint8_t *topic, size_t len)
{
    if (!(len == 5 && topic[0] == 'T') && !(len == 1 && topic[0] == 'H'))
        return false;
    s_publish(self, topic, len, GD_EV_MARK, -1, len == 5 ? (int32_t)gimpi_be_get32(topic + 1) : 0, 0);
    return true;
}

/* ------------------------------------------------------------------ subscribed topics */

/*  Notes a subscription or an unsubscription of the XPUB. */
void gd_notify_note_sub(groupd_t *self, const uint8_t *msg, size_t len)
{
    if (len < 1 || (msg[0] != 0 && msg[0] != 1) || !self->subs)
        return;
    const uint8_t *topic = msg + 1;
    size_t tlen = len - 1;
    bool had = gd_hash_get(self->subs, topic, tlen) != NULL;
    if (msg[0] == 1 && !had) {
        if (gd_hash_put(self->subs, topic, tlen, self) < 0)
            self->subs_all = true;      /* cannot tell who listens: skip nothing */
        else {
            self->subs_bytes += tlen;
            if (tlen <= GD_TOPIC_MAX)
                self->subs_len[tlen]++;
        }
    } else if (msg[0] == 0 && had) {
        gd_hash_del(self->subs, topic, tlen);
        self->subs_bytes -= tlen;
        if (tlen <= GD_TOPIC_MAX)
            self->subs_len[tlen]--;
    }
}

/*  True when a noted subscription is a prefix of topic. */
bool gd_notify_watched(groupd_t *self, const uint8_t *topic, size_t len)
{
    if (self->subs_all || !self->subs)
        return true;
    if (gd_hash_size(self->subs) == 0)
        return false;
    size_t max = len < GD_TOPIC_MAX ? len : GD_TOPIC_MAX;
    for (size_t l = 0; l <= max; l++)
        if (self->subs_len[l] && gd_hash_get(self->subs, topic, l))
            return true;
    return false;
}

/*  The empty set of subscribed topics. */
int gd_notify_init(groupd_t *self)
{
    self->subs = gd_hash_new();
    self->subs_len = calloc(GD_TOPIC_MAX + 1, sizeof *self->subs_len);
    self->subs_all = false;
    return self->subs && self->subs_len ? 0 : -1;
}

/*  Frees the set (its values are not owned). */
void gd_notify_fini(groupd_t *self)
{
    gd_hash_destroy(&self->subs);
    free(self->subs_len);
    self->subs_len = NULL;
}
