/*  impi_server_job.c — the job's progress on the startup server.  Job state is per
 *  client rank: joined, last label sent, DONE, FINI, dropped.  Pending COLL labels are
 *  kept in ascending order with every contribution received so far; the lowest one is
 *  answered as soon as each rank has sent it, sent a higher label, sent DONE or FINI, or
 *  been dropped (a dropped rank counts as "done" so the survivors get their replies and
 *  DONE and can fail on their own validation).  The job ends with status 0 when every
 *  rank sent FINI, and 1 once every rank has either sent FINI or been dropped with at
 *  least one dropped.  After the start, a rank the job waits for that stays silent for
 *  the silence bound is dropped like a disconnected one.  Ending a connection lives here
 *  too, since a dropped rank moves the job on.
 */
#include "server/impi_server_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ connections' end */

/*  Closes and frees a connection (its rank, if any, is updated by the caller). */
void srv_conn_free(srv_conn_t *conn)
{
    impi_server_t *self = conn->server;
    gimpi_loop_fd_del(self->loop, conn->fd);
    close(conn->fd);
    if (conn->timer)
        gimpi_loop_timer_cancel(self->loop, conn->timer);
    if (conn->rank < 0 || conn->state < C_JOINED)
        self->npending--;
    if (conn->prev)
        conn->prev->next = conn->next;
    else
        self->conns = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    srv_out_clear(conn);
    free(conn->in);
    free(conn);
}

/*  Ends a connection for `reason` (NULL: quietly).  A rank that had joined before the
 *  job started becomes free again; after the start it is marked dropped and the job
 *  goes on without it. */
void srv_drop(srv_conn_t *conn, const char *reason)
{
    impi_server_t *self = conn->server;
    char who[96];
    srv_who(conn, who, sizeof who);
    int rank = conn->rank;
    if (rank >= 0 && conn->state >= C_JOINED) {
        srv_rank_t *rk = &self->ranks[rank];
        rk->conn = NULL;
        if (rk->fini) {
            /* finished cleanly; nothing to report */
        } else if (self->started) {
            rk->dropped = true;
            srv_log(self, "%s: %s; dropped before FINI, the job cannot complete", who,
                    reason ? reason : "closed");
        } else {
            /* limited: with NONE, a stranger can join and leave at will */
            memset(rk, 0, sizeof *rk);
            self->njoined--;
            srv_log_limited(self, "%s: %s; rank %d is free again (the job had not started)", who,
                            reason ? reason : "closed", rank);
        }
    } else if (reason) {
        srv_log_limited(self, "%s: %s; connection closed", who, reason);
    }
    bool joined = rank >= 0 && conn->state >= C_JOINED;
    srv_conn_free(conn);
    if (joined && self->started)
        srv_check_progress(self);
}

/* ------------------------------------------------------------------ job progress */

static void s_end(impi_server_t *self, int result);

/*  True when rank r can no longer contribute to `label`. */
static bool s_rank_past(const srv_rank_t *rk, const srv_label_t *l, int r)
{
    return (l->mask & (1u << r)) || rk->done || rk->fini || rk->dropped ||
           (rk->has_label && rk->last_label > l->label);
}

/*  Sends the reply of a complete label to everyone and frees it. */
static void s_answer_label(impi_server_t *self, srv_label_t *l)
{
    size_t total = 0;
    for (int r = 0; r < self->nclients; r++)
        total += l->len[r];
    srv_msg_t *msg = srv_msg_new(IMPI_COLL_REPLY_HDR_SIZE + total);
    if (!msg) {
        srv_log(self, "out of memory building the reply of %s", impi_label_name(l->label));
        return;
    }
    impi_coll_reply_header(msg->data, l->label, l->mask, (uint32_t)total);
    size_t off = IMPI_COLL_REPLY_HDR_SIZE;
    for (int r = 0; r < self->nclients; r++) {
        if (l->len[r])
            memcpy(msg->data + off, l->data[r], l->len[r]);
        off += l->len[r];
    }
    if (self->verbose)
        srv_log(self, "COLL reply %s (0x%04" PRIx32 ") mask 0x%" PRIx32 " len %zu",
                impi_label_name(l->label), (uint32_t)l->label, l->mask, 8 + total);
    srv_send_all(self, msg);
}

/*  Frees a label entry. */
void srv_label_free(srv_label_t *l)
{
    for (int r = 0; r < IMPI_MAX_CLIENTS; r++)
        free(l->data[r]);
    free(l);
}

/*  True when the job waits for rank r: it owes the lowest pending label, or (no label
 *  pending) its next label or DONE. */
static bool s_rank_owes(impi_server_t *self, int r)
{
    const srv_rank_t *rk = &self->ranks[r];
    if (rk->done || rk->fini || rk->dropped)
        return false;
    return !self->labels || !s_rank_past(rk, self->labels, r);
}

/*  Since when rank r counts as silent: its last command or the last reply bytes it took,
 *  or the start or last answered label, whichever is later (a client waiting for others,
 *  or still reading a large reply, is not silent). */
static int64_t s_silent_since(impi_server_t *self, int r)
{
    int64_t t = self->ranks[r].last_seen_ms;
    return t > self->progress_ms ? t : self->progress_ms;
}

static void s_silence_timeout(gimpi_loop_t *loop, int id, void *arg);

/*  (Re)arms the silence timer at the earliest deadline of a rank the job waits for. */
void srv_arm_silence(impi_server_t *self)
{
    if (self->silence_timer) {
        gimpi_loop_timer_cancel(self->loop, self->silence_timer);
        self->silence_timer = 0;
    }
    if (!self->started || self->result >= 0 || self->silence_ms <= 0)
        return;
    int64_t due = -1;
    for (int r = 0; r < self->nclients; r++) {
        if (!s_rank_owes(self, r))
            continue;
        int64_t d = s_silent_since(self, r) + self->silence_ms;
        if (due < 0 || d < due)
            due = d;
    }
    if (due < 0)
        return;
    int64_t left = due - gimpi_loop_now_ms();
    int tid = gimpi_loop_timer_add(self->loop, left > 0 ? left : 0, 0, s_silence_timeout, self);
    self->silence_timer = tid > 0 ? tid : 0;
}

/*  Silence timer: drops every rank the job has waited on for the whole silence bound.
 *  The survivors then get the replies without it (a dropped rank counts as done) and
 *  fail on the missing contribution instead of waiting forever. */
static void s_silence_timeout(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop;
    (void)id;
    impi_server_t *self = arg;
    self->silence_timer = 0;
    int64_t now = gimpi_loop_now_ms();
    int late[IMPI_MAX_CLIENTS], nlate = 0;
    int64_t silent[IMPI_MAX_CLIENTS];
    char what[96];
    if (self->labels)
        snprintf(what, sizeof what, "its COLL %s (0x%04" PRIx32 ")",
                 impi_label_name(self->labels->label), (uint32_t)self->labels->label);
    else
        snprintf(what, sizeof what, "its next COLL or DONE");
    /* decide first: each drop may answer labels and so move the others' clocks */
    for (int r = 0; r < self->nclients; r++) {
        int64_t t = now - s_silent_since(self, r);
        if (s_rank_owes(self, r) && t >= self->silence_ms) {
            silent[nlate] = t;
            late[nlate++] = r;
        }
    }
    for (int k = 0; k < nlate; k++) {
        srv_conn_t *conn = self->ranks[late[k]].conn;
        if (!conn || self->ranks[late[k]].dropped)
            continue;
        char reason[200];
        snprintf(reason, sizeof reason, "silent for %" PRId64 " ms while the job waits for %s "
                 "(silence timeout %d ms)", silent[k], what, self->silence_ms);
        srv_drop(conn, reason);
    }
    srv_arm_silence(self);
}

/*  Answers every complete label (lowest first), then DONE when all are done, then ends
 *  the job when every rank sent FINI or was dropped. */
void srv_check_progress(impi_server_t *self)
{
    if (!self->started || self->result >= 0)
        return;
    /* labels: if the lowest pending label is incomplete, so is every higher one */
    while (self->labels) {
        srv_label_t *l = self->labels;
        bool complete = true;
        for (int r = 0; r < self->nclients && complete; r++)
            complete = s_rank_past(&self->ranks[r], l, r);
        if (!complete)
            break;
        self->labels = l->next;
        s_answer_label(self, l);
        for (int r = 0; r < self->nclients; r++)
            self->ranks[r].held -= l->len[r];
        srv_label_free(l);
        self->progress_ms = gimpi_loop_now_ms();
    }
    bool all_done = true, all_over = true, any_dropped = false;
    for (int r = 0; r < self->nclients; r++) {
        srv_rank_t *rk = &self->ranks[r];
        all_done &= rk->done || rk->fini || rk->dropped;
        all_over &= rk->fini || rk->dropped;
        any_dropped |= rk->dropped;
    }
    if (all_done && !self->done_sent && !self->labels) {
        self->done_sent = true;
        srv_msg_t *msg = srv_msg_new(IMPI_CMD_HDR_SIZE);
        if (msg) {
            impi_cmd_encode(msg->data, IMPI_CMD_DONE, 0);
            if (self->verbose)
                srv_log(self, "DONE to all");
            srv_send_all(self, msg);
        }
    }
    if (all_over) {
        if (any_dropped)
            srv_log(self, "no client left; the job failed (a client was dropped before FINI)");
        s_end(self, any_dropped ? 1 : 0);
        return;
    }
    srv_arm_silence(self);
}

/*  Ends the job with a result (the loop stops, or its owner is told). */
static void s_end(impi_server_t *self, int result)
{
    self->result = result;
    srv_arm_silence(self);    /* cancels it */
    if (self->log_timer) {  /* the loop ends: the pending summary now */
        gimpi_loop_timer_cancel(self->loop, self->log_timer);
        srv_log_summary(self->loop, self->log_timer, self);
    }
    if (self->own_loop)
        gimpi_loop_stop(self->loop);
    else if (self->done_fn)
        self->done_fn(self, self->result, self->done_arg);
}

/*  Ends the job at once, failed (impi_server_internal.h). */
void srv_stop_job(impi_server_t *self, const char *why)
{
    srv_log(self, "%s; the job stops", why);
    while (self->conns) {
        srv_conn_t *c = self->conns;
        if (c->rank >= 0 && c->state >= C_JOINED)
            self->ranks[c->rank].conn = NULL;
        srv_conn_free(c);
    }
    s_end(self, 1);
}

/*  Records a COLL contribution of rank r. */
int srv_add_contribution(impi_server_t *self, int r, const impi_coll_t *coll)
{
    srv_label_t **pp = &self->labels;
    while (*pp && (*pp)->label < coll->label)
        pp = &(*pp)->next;
    srv_label_t *l = *pp;
    if (!l || l->label != coll->label) {
        l = calloc(1, sizeof *l);
        if (!l)
            return -1;
        l->label = coll->label;
        l->next = *pp;
        *pp = l;
    }
    if (coll->len) {
        l->data[r] = malloc(coll->len);
        if (!l->data[r])
            return -1;
        memcpy(l->data[r], coll->data, coll->len);
    }
    l->len[r] = coll->len;
    l->mask |= 1u << r;
    self->ranks[r].held += coll->len;
    return 0;
}
