/*  live_view.c — the live view (see live_view.h): three requests to groupd on a tool
 *  connection (TASKS: who runs where; STAT: the groups, their barriers and freezes in
 *  progress; STATUSES: what the blocked tasks published), joined here into one line per
 *  task and one sentence per blocked task.  A task blocked in a receive, or in a barrier
 *  or freeze that groupd arbitrates, says so itself (TASK_STATUS, after
 *  GIMPI_STATUS_AFTER); one blocked in a barrier on the data plane is known from the
 *  group's record (its noted waiters, with the time they have waited).  For a barrier or
 *  freeze the members that have not arrived are named.
 */
#include "config.h"
#include "programs/live_view.h"
#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "base/gimpi_json.h"
#include "gimpi.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/*  What one blocked task is in. */
typedef struct {
    int32_t tid;
    int ms;                     /* blocked so far (-1: not known) */
    int queued;                 /* messages queued for it (-1: not known) */
    int32_t peer;               /* the task it waits for (0: none) */
    int peer_state;             /* GD_PEER_* */
    char call[GD_MAX_TEXT + 1 + 32];
    char why[512];              /* "t40005 has exited", "not arrived: t40004" */
} blocked_t;

struct live_view_t {
    char ep[600];
    gd_vmtask_t *tasks;
    int ntasks;
    gd_groupstat_t *groups;
    int ngroups;
    gd_status_rec_t *st;
    int nst;
    blocked_t *blocked;
    int nblocked;
};

/*  The tool connection to groupd. */
typedef struct {
    void *s, *monitor;
    bool curve;                 /* secured (tcp): refusals are the key's */
    int timeout_ms;
    uint32_t reqid;
} conn_t;

/*  Sends one request on the tool socket and decodes its reply into mp/msg.  0, or -1
 *  with err set (-2: groupd does not know the command). */
static int s_ask(conn_t *c, uint8_t cmd, const gd_frame_t *args, int nargs,
                 gd_multipart_t *mp, gd_msg_t *msg, char *err, size_t errsize)
{
    void *s = c->s;
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, cmd, ++c->reqid);
    gd_frame_t req[4] = { { hdr, sizeof hdr } };
    for (int k = 0; k < nargs && k < 3; k++)
        req[1 + k] = args[k];
    char why[256] = "";
    int ready = gd_send_frames(s, NULL, 0, req, 1 + nargs, 0) < 0
              ? 0 : gd_sock_tool_wait(s, c->monitor, c->timeout_ms, c->curve, why,
                                                  sizeof why);
    if (ready < 0) {
        snprintf(err, errsize, "groupd refused us: %s", why);
        return -1;
    }
    if (ready == 0 || gd_multipart_recv_max(s, mp, 0, 1 << 24) < 0) {
        snprintf(err, errsize, "no groupd answers");
        return -1;
    }
    if (mp->truncated || gd_reply_decode(cmd, mp->frames, mp->nparts, msg) != GD_OK) {
        snprintf(err, errsize, "bad %s reply from groupd", gd_kind_name(cmd));
        gd_multipart_close(mp);
        return -1;
    }
    if (msg->values[0].i < 0) {
        snprintf(err, errsize, "%s: %s", gd_kind_name(cmd), gimpi_strerror(msg->values[0].i));
        gd_multipart_close(mp);
        return msg->values[0].i == GIMPI_ENOTIMPL ? -2 : -1;
    }
    return 0;
}

/*  Decodes STAT's group records into self->groups. */
static int s_take_groups(live_view_t *self, gd_multipart_t *mp, const gd_msg_t *msg)
{
    self->groups = calloc((size_t)msg->nextra + 1, sizeof *self->groups);
    if (!self->groups)
        return -1;
    for (int k = 0; k < msg->nextra; k++) {
        const gd_frame_t *f = &mp->frames[msg->extra_first + k];
        if (gd_groupstat_decode(f->data, f->len, &self->groups[self->ngroups]) == GD_OK)
            self->ngroups++;
    }
    return 0;
}

/*  The three requests.  0 or -1 with err set. */
static int s_fetch(live_view_t *self, conn_t *c, char *err, size_t errsize)
{
    gd_multipart_t mp;
    gd_msg_t msg;
    gd_frame_t all = { (const uint8_t *)"", 0 };
    if (s_ask(c, GD_TASKS, &all, 1, &mp, &msg, err, errsize) < 0)
        return -1;
    int rc = gd_tasks_decode(msg.values[2].data, msg.values[2].len, &self->tasks,
                             &self->ntasks);
    gd_multipart_close(&mp);
    if (rc != GD_OK || s_ask(c, GD_STAT, &all, 1, &mp, &msg, err, errsize) < 0) {
        if (rc != GD_OK)
            snprintf(err, errsize, "bad task records from groupd");
        return -1;
    }
    rc = s_take_groups(self, &mp, &msg);
    gd_multipart_close(&mp);
    if (rc < 0)
        return -1;
    rc = s_ask(c, GD_STATUSES, NULL, 0, &mp, &msg, err, errsize);
    if (rc == -2) {                 /* a groupd of an older gimpi: the groups' waits only */
        self->st = calloc(1, sizeof *self->st);
        return self->st ? 0 : -1;
    }
    if (rc < 0)
        return -1;
    rc = gd_statuses_decode(msg.values[2].data, msg.values[2].len, &self->st, &self->nst);
    gd_multipart_close(&mp);
    if (rc != GD_OK) {
        snprintf(err, errsize, "bad status records from groupd");
        return -1;
    }
    return 0;
}

/*  The blocked entry of tid, or NULL. */
static blocked_t *s_blocked(live_view_t *self, int32_t tid)
{
    for (int k = 0; k < self->nblocked; k++)
        if (self->blocked[k].tid == tid)
            return &self->blocked[k];
    return NULL;
}

/*  Appends formatted text to buf (of size). */
static void s_cat(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void s_cat(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

/*  A published status: the call, and the state of the peer it waits for. */
static void s_add_status(live_view_t *self, const gd_status_rec_t *r)
{
    blocked_t *b = &self->blocked[self->nblocked++];
    *b = (blocked_t){ .tid = r->tid, .ms = r->ms, .queued = r->queued, .peer = r->peer,
                      .peer_state = r->peer_state };
    snprintf(b->call, sizeof b->call, "%s", r->call);
    switch (r->peer_state) {
    case GD_PEER_EXITED:
        snprintf(b->why, sizeof b->why, "t%x has exited", (unsigned)r->peer);
        break;
    case GD_PEER_UNKNOWN:
        snprintf(b->why, sizeof b->why, "t%x is not a task groupd knows (it may have "
                 "exited long ago, or never started)", (unsigned)r->peer);
        break;
    case GD_PEER_RUNNING:
        snprintf(b->why, sizeof b->why, "t%x is running", (unsigned)r->peer);
        break;
    default:
        break;
    }
}

/*  True when tid is among n tids. */
static bool s_in(const int32_t *tids, int n, int32_t tid)
{
    for (int k = 0; k < n; k++)
        if (tids[k] == tid)
            return true;
    return false;
}

/*  Waiters of one group's barrier or freeze (tids[n], with ms each or NULL): each gets
 *  the call, and the members that have not arrived are named. */
static void s_add_waiters(live_view_t *self, const gd_groupstat_t *g, const char *fn,
                          int count, const int32_t *tids, const int32_t *ms, int n)
{
    char missing[400] = "";
    int nmissing = 0;
    for (int k = 0; k < g->nmembers; k++)
        if (!s_in(tids, n, g->members[k].tid) && nmissing++ < 16)
            s_cat(missing, sizeof missing, " t%x", (unsigned)g->members[k].tid);
    for (int k = 0; k < n; k++) {
        blocked_t *b = s_blocked(self, tids[k]);    /* its own status, when it sent one */
        if (b && *b->why)
            continue;
        if (!b) {
            b = &self->blocked[self->nblocked++];
            *b = (blocked_t){ .tid = tids[k], .ms = ms ? ms[k] : -1, .queued = -1 };
            snprintf(b->call, sizeof b->call, "%s(\"%.*s\", %d)", fn, 200, g->name, count);
        }
        snprintf(b->why, sizeof b->why, "%d of %d arrived", n, count);
        if (nmissing)
            s_cat(b->why, sizeof b->why, "; not arrived:%s%s", missing,
                  nmissing > 16 ? " ..." : "");
        if (count > g->size)
            s_cat(b->why, sizeof b->why, "; the group has only %d members", (int)g->size);
    }
}

/*  A blocked task whose peer runs but is blocked too: says in what, and when following
 *  the peers comes back to the task, that they wait for each other (a deadlock). */
static void s_chain(live_view_t *self, blocked_t *b)
{
    blocked_t *p = s_blocked(self, b->peer);
    if (b->peer_state != GD_PEER_RUNNING || !p)
        return;
    snprintf(b->why, sizeof b->why, "t%x is blocked too, in %s", (unsigned)p->tid, p->call);
    char path[200];
    snprintf(path, sizeof path, "t%x", (unsigned)b->tid);
    for (int k = 0; k < 16 && p; k++) {
        s_cat(path, sizeof path, " -> t%x", (unsigned)p->tid);
        if (p->peer == b->tid) {
            s_cat(b->why, sizeof b->why, ": a deadlock, %s -> t%x", path, (unsigned)b->tid);
            return;
        }
        p = p->peer_state == GD_PEER_RUNNING ? s_blocked(self, p->peer) : NULL;
    }
}

/*  Joins statuses and groups into the blocked list. */
static int s_join(live_view_t *self)
{
    int most = self->nst;
    for (int k = 0; k < self->ngroups; k++)
        most += self->groups[k].nbar_waiters + self->groups[k].nfrz_waiters
              + self->groups[k].ndp;
    self->blocked = calloc((size_t)most + 1, sizeof *self->blocked);
    if (!self->blocked)
        return -1;
    for (int k = 0; k < self->nst; k++)
        s_add_status(self, &self->st[k]);
    for (int k = 0; k < self->ngroups; k++) {
        const gd_groupstat_t *g = &self->groups[k];
        if (g->bar_count)
            s_add_waiters(self, g, "pvm_barrier", g->bar_count, g->bar_waiters, NULL,
                          g->nbar_waiters);
        if (g->frz_count)
            s_add_waiters(self, g, "pvm_freezegroup", g->frz_count, g->frz_waiters, NULL,
                          g->nfrz_waiters);
        if (g->ndp) {
            int32_t *tids = calloc((size_t)g->ndp, sizeof *tids);
            int32_t *ms = calloc((size_t)g->ndp, sizeof *ms);
            for (int j = 0; tids && ms && j < g->ndp; j++)
                tids[j] = g->dp[j].tid, ms[j] = g->dp[j].ms;
            if (tids && ms)
                s_add_waiters(self, g, "pvm_barrier", g->dp[0].count, tids, ms, g->ndp);
            free(tids);
            free(ms);
        }
    }
    for (int k = 0; k < self->nst; k++)   /* (the statuses come first in the list) */
        s_chain(self, &self->blocked[k]);
    return 0;
}

/*  Asks groupd and joins the answers. */
live_view_t *live_view_new(const char *ep, int timeout_ms, char *err, size_t errsize)
{
    assert(ep);
    if (errsize)
        *err = 0;
    live_view_t *self = calloc(1, sizeof *self);
    void *zctx = zmq_ctx_new();
    if (!self || !zctx) {
        snprintf(err, errsize, "%s", strerror(errno ? errno : ENOMEM));
        free(self);
        if (zctx)
            zmq_ctx_term(zctx);
        return NULL;
    }
    snprintf(self->ep, sizeof self->ep, "%s", ep);
    char serr[GD_SOCK_ERRLEN], desc[600] = "";
    conn_t c = { .timeout_ms = timeout_ms };
    c.s = gd_sock_tool_new(zctx, ep, &c.monitor, desc, sizeof desc, serr, sizeof serr);
    c.curve = *desc != 0;
    int rc = -1;
    if (!c.s)
        snprintf(err, errsize, "%s", serr);
    else if (s_fetch(self, &c, err, errsize) == 0)
        rc = s_join(self);
    gd_sock_destroy(&c.s, &c.monitor);
    zmq_ctx_term(zctx);
    if (rc < 0) {
        if (!*err)
            snprintf(err, errsize, "out of memory");
        live_view_destroy(&self);
    }
    return self;
}

/*  Frees the view. */
void live_view_destroy(live_view_t **self_p)
{
    assert(self_p);
    live_view_t *self = *self_p;
    if (!self)
        return;
    for (int k = 0; k < self->ngroups; k++)
        gd_groupstat_clear(&self->groups[k]);
    free(self->groups);
    free(self->tasks);
    free(self->st);
    free(self->blocked);
    free(self);
    *self_p = NULL;
}

/*  Blocked tasks. */
int live_view_nblocked(live_view_t *self)
{
    assert(self);
    return self->nblocked;
}

/*  The groups tid is in, "name:inst,..." ("-" when none). */
static void s_groups_of(const live_view_t *self, int32_t tid, char *out, size_t size)
{
    *out = 0;
    for (int k = 0; k < self->ngroups; k++)
        for (int j = 0; j < self->groups[k].nmembers; j++)
            if (self->groups[k].members[j].tid == tid)
                s_cat(out, size, "%s%.*s:%d", *out ? "," : "", 60, self->groups[k].name,
                      (int)self->groups[k].members[j].inst);
    if (!*out)
        snprintf(out, size, "-");
}

/*  " for 91 ms", " for 12.3 s" (or "" when not known). */
static void s_for(const blocked_t *b, char *out, size_t size)
{
    if (b->ms >= 1000)
        snprintf(out, size, " for %d.%d s", b->ms / 1000, b->ms % 1000 / 100);
    else if (b->ms >= 0)
        snprintf(out, size, " for %d ms", b->ms);
    else
        *out = 0;
}

/*  The view as text. */
static void s_print_text(live_view_t *self, FILE *out)
{
    fprintf(out, "%d task%s, %d blocked (groupd at %s)\n", self->ntasks,
            self->ntasks == 1 ? "" : "s", self->nblocked, self->ep);
    fprintf(out, "%-9s %-16s %7s %-16s %-16s %s\n", "TID", "HOST", "PID", "PROGRAM", "GROUPS",
            "NOW");
    for (int k = 0; k < self->ntasks; k++) {
        const gd_vmtask_t *t = &self->tasks[k];
        char tid[16], groups[256], since[32] = "";
        snprintf(tid, sizeof tid, "t%x", (unsigned)t->tid);
        s_groups_of(self, t->tid, groups, sizeof groups);
        const blocked_t *b = s_blocked(self, t->tid);
        if (b)
            s_for(b, since, sizeof since);
        fprintf(out, "%-9s %-16.16s %7d %-16.16s %-16.16s %s%s\n", tid, *t->host ? t->host : "?",
                (int)t->ospid, *t->name ? t->name : "-", groups, b ? b->call : "running", since);
    }
    for (int k = 0; k < self->nblocked; k++) {
        const blocked_t *b = &self->blocked[k];
        char since[32];
        s_for(b, since, sizeof since);
        fprintf(out, "t%x has been in %s%s", (unsigned)b->tid, b->call, since);
        if (b->queued >= 0)
            fprintf(out, " (%d message%s queued)", b->queued, b->queued == 1 ? "" : "s");
        fprintf(out, "%s%s\n", *b->why ? "; " : "", b->why);
    }
}

/*  The view as one JSON object. */
static void s_print_json(live_view_t *self, FILE *out)
{
    static const char *const states[] = { "none", "running", "exited", "unknown" };
    fputs("{\"tasks\":[", out);
    for (int k = 0; k < self->ntasks; k++) {
        const gd_vmtask_t *t = &self->tasks[k];
        fprintf(out, "%s{\"tid\":%d,\"parent\":%d,\"pid\":%d,\"host\":", k ? "," : "",
                (int)t->tid, (int)t->ptid, (int)t->ospid);
        gimpi_json_str(out, t->host);
        fputs(",\"name\":", out);
        gimpi_json_str(out, t->name);
        fputs(",\"groups\":[", out);
        int n = 0;
        for (int g = 0; g < self->ngroups; g++)
            for (int j = 0; j < self->groups[g].nmembers; j++)
                if (self->groups[g].members[j].tid == t->tid) {
                    fprintf(out, "%s{\"name\":", n++ ? "," : "");
                    gimpi_json_str(out, self->groups[g].name);
                    fprintf(out, ",\"inst\":%d}", (int)self->groups[g].members[j].inst);
                }
        fputs("],\"blocked\":", out);
        const blocked_t *b = s_blocked(self, t->tid);
        if (b) {
            fputs("{\"call\":", out);
            gimpi_json_str(out, b->call);
            fprintf(out, ",\"ms\":%d,\"queued\":%d,\"peer\":%d,\"peer_state\":\"%s\",\"why\":",
                    b->ms, b->queued, (int)b->peer,
                    states[b->peer_state >= 0 && b->peer_state <= 3 ? b->peer_state : 0]);
            gimpi_json_str(out, b->why);
            fputc('}', out);
        } else
            fputs("null", out);
        fputc('}', out);
    }
    fputs("]}\n", out);
}

/*  Prints the view. */
void live_view_print(live_view_t *self, FILE *out, bool json)
{
    assert(self);
    if (json)
        s_print_json(self, out);
    else
        s_print_text(self, out);
}
