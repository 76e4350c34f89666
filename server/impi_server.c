/*  impi_server.c — the IMPI startup server (see impi_server.h) on a gimpi_loop.
 *
 *  Each TCP connection is a small state machine: AUTH (first command must be AUTH),
 *  KEY (8 raw key bytes, only when KEY was chosen), JOIN (the IMPI command with a rank),
 *  JOINED (COLL, DONE, FINI) and CLOSING (FINI received, flushing).  Bytes are read
 *  without blocking into a per-connection buffer and cut into frames with impi_wire's
 *  decoders, which check every length against IMPI_MAX_PAYLOAD before the buffer is
 *  allowed to grow for it.  Replies are reference-counted messages queued per
 *  connection, so one reply of several megabytes is built once and drained at each
 *  client's own pace.
 *
 *  Job state is per client rank: joined, last label sent, DONE, FINI, dropped.  Pending
 *  COLL labels are kept in ascending order with every contribution received so far; the
 *  lowest one is answered as soon as each rank has sent it, sent a higher label, sent
 *  DONE or FINI, or been dropped (a dropped rank counts as "done" so the survivors get
 *  their replies and DONE and can fail on their own validation).  The job ends with
 *  status 0 when every rank sent FINI, and 1 once every rank has either sent FINI or
 *  been dropped with at least one dropped.
 *
 *  Nothing here blocks or grows at a stranger's will.  A connection that does not
 *  complete its handshake (AUTH, KEY, IMPI) in time is closed by a loop timer; at most
 *  max_pending connections are in their handshake at once, and a new one pushes out the
 *  oldest of those that got least far, so idle connections cannot keep real clients
 *  away.  Accepts are taken in small batches so that the connections already accepted
 *  are read between them.  After the start, a
 *  rank the job waits for that stays silent for the silence bound is dropped like a
 *  disconnected one.  Lines about refused and dropped connections are rate-limited, and
 *  no line is ever written to a log that has no room for it (a stderr pipe nobody
 *  reads): it is counted as lost instead.
 */
#include "server/impi_server.h"

#include "server/gimpi_loop.h"
#include "impi/impi_wire.h"
#include "base/gimpi_ratelog.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdarg.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    S_READ_CHUNK = 64 * 1024,   /* bytes read per readiness event (fairness) */
    S_ACCEPT_PAUSE_MS = 200,    /* after EMFILE and the like */
    S_ACCEPT_PER_ROUND = 16,    /* accepts per loop round, so that the connections already
                                   accepted are read (and move on) between bursts */
    S_LOG_LINE_MAX = 1024,      /* one log line, truncated beyond (below PIPE_BUF) */
};

/*  A reply shared by every connection it is queued on. */
typedef struct {
    int refs;
    size_t len;
    uint8_t data[];
} s_msg_t;

typedef struct s_out {
    s_msg_t *msg;
    struct s_out *next;
} s_out_t;

typedef enum { C_AUTH, C_KEY, C_JOIN, C_JOINED, C_CLOSING } s_cstate_t;

typedef struct s_conn {
    impi_server_t *server;
    int fd;
    int id;                     /* connection number, for messages */
    char peer[48];              /* "A.B.C.D:PORT" */
    s_cstate_t state;
    int rank;                   /* -1 until joined */
    int64_t born_ms;            /* accepted at (monotonic ms) */
    int timer;                  /* handshake timeout, 0 when none */
    uint8_t *in;                /* unparsed bytes are in[in_off .. in_len) */
    size_t in_off, in_len, in_cap;
    s_out_t *out_head, *out_tail;
    size_t out_off;             /* bytes of out_head already written */
    struct s_conn *prev, *next;
} s_conn_t;

typedef struct {
    s_conn_t *conn;             /* NULL when not connected */
    bool joined, done, fini, dropped;
    bool has_label;
    int32_t last_label;
    int64_t last_seen_ms;       /* last command from it, or reply bytes it took (silence) */
} s_rank_t;

typedef struct s_label {
    int32_t label;
    uint32_t mask;
    uint8_t *data[IMPI_MAX_CLIENTS];
    size_t len[IMPI_MAX_CLIENTS];
    struct s_label *next;       /* ascending */
} s_label_t;

struct impi_server_t {
    int nclients;
    uint32_t auth_mask;
    uint64_t key;
    FILE *log;
    int listen_fd;
    int port;
    char endpoint[48];
    gimpi_loop_t *loop;
    bool own_loop;              /* false once attached to the caller's loop */
    bool running;               /* impi_server_run() entered */
    impi_server_done_fn *done_fn;
    void *done_arg;
    int accept_timer;           /* accept pause after EMFILE, 0 when none */
    s_conn_t *conns;
    int npending;               /* connections not joined */
    int next_conn_id;
    s_rank_t ranks[IMPI_MAX_CLIENTS];
    int njoined;
    bool started;               /* IMPI reply sent */
    bool done_sent;
    s_label_t *labels;
    int join_timeout_ms;        /* handshake bound, 0 = none */
    int silence_ms;             /* silence bound after the start, 0 = none */
    int silence_timer;          /* armed at the earliest silence deadline, 0 when none */
    int64_t progress_ms;        /* start, or the last label answered */
    int max_pending;            /* connections in their handshake */
    /* rate limit of lines about connections (IMPI_SERVER_LOG_PER_SEC) */
    int log_fd;                 /* fd of a log that can block (pipe, socket, tty), or -1 */
    gimpi_ratelog_t log_rate;   /* the limited lines' one-second windows */
    int log_timer;              /* prints the summary at the end of the window */
    long log_lost;              /* lines dropped because the log was not being read */
    bool verbose;
    int result;                 /* -1 while running */
};

/* ------------------------------------------------------------------ messages */

/*  Writes one whole line on the log without ever blocking: a log that can block (a pipe,
 *  socket or terminal nobody reads) takes the line only when poll() says it has room,
 *  which for a pipe means room for PIPE_BUF bytes and so for the whole line; otherwise
 *  the line is counted as lost and the count reported with the next line that gets
 *  through.  Regular files and in-memory logs go through stdio. */
static void s_emit(impi_server_t *self, const char *line, size_t len)
{
    if (self->log_fd < 0) {
        fwrite(line, 1, len, self->log);
        fflush(self->log);
        return;
    }
    struct pollfd p = { .fd = self->log_fd, .events = POLLOUT };
    if (poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT) || (p.revents & (POLLERR | POLLNVAL))) {
        self->log_lost++;
        return;
    }
    if (self->log_lost) {
        char note[128];
        int n = snprintf(note, sizeof note, "impi-server: %ld log lines lost (standard error "
                         "was not being read)\n", self->log_lost);
        self->log_lost = 0;
        if (write(self->log_fd, note, (size_t)n) < 0)
            return;
    }
    if (write(self->log_fd, line, len) != (ssize_t)len)
        self->log_lost++;
}

/*  Formats "impi-server: <message>\n" and emits it. */
static void s_vlog(impi_server_t *self, const char *fmt, va_list ap)
{
    char line[S_LOG_LINE_MAX];
    int n = snprintf(line, sizeof line, "impi-server: ");
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    s_emit(self, line, len);
}

/*  Prints one line about the job on the server's log (never rate-limited). */
static void s_log(impi_server_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void s_log(impi_server_t *self, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s_vlog(self, fmt, ap);
    va_end(ap);
}

/*  End of a rate-limit window with suppressed lines: one summary line. */
static void s_log_summary(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop;
    (void)id;
    impi_server_t *self = arg;
    self->log_timer = 0;
    int more = gimpi_ratelog_roll(&self->log_rate, gimpi_loop_now_ms(), true);
    if (more)
        s_log(self, "%d more connections refused or dropped in the last second (at most %d "
              "lines a second are logged)", more, IMPI_SERVER_LOG_PER_SEC);
}

/*  Prints one line about a refused or dropped connection, at most IMPI_SERVER_LOG_PER_SEC
 *  a second; the others are counted and summed up by s_log_summary() after the second.
 *  Strangers can cause these lines at will, so they must cost neither log space nor
 *  time. */
static void s_log_limited(impi_server_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void s_log_limited(impi_server_t *self, const char *fmt, ...)
{
    int64_t now = gimpi_loop_now_ms();
    if (!self->log_timer)               /* (a window with held lines ends by the timer) */
        gimpi_ratelog_roll(&self->log_rate, now, false);
    if (!gimpi_ratelog_event(&self->log_rate, now)) {
        if (!self->log_timer) {
            int id = gimpi_loop_timer_add(self->loop, gimpi_ratelog_due_ms(&self->log_rate, now),
                                          0, s_log_summary, self);
            self->log_timer = id > 0 ? id : 0;
        }
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    s_vlog(self, fmt, ap);
    va_end(ap);
}

/*  "client 2 (127.0.0.1:40000)" or "connection 5 (127.0.0.1:40000)" into buf. */
static const char *s_who(s_conn_t *conn, char *buf, size_t size)
{
    if (conn->rank >= 0)
        snprintf(buf, size, "client %d (%s)", conn->rank, conn->peer);
    else
        snprintf(buf, size, "connection %d (%s)", conn->id, conn->peer);
    return buf;
}

/* ------------------------------------------------------------------ output */

/*  A message of len bytes with one reference; NULL when out of memory. */
static s_msg_t *s_msg_new(size_t len)
{
    s_msg_t *msg = malloc(sizeof *msg + len);
    if (!msg)
        return NULL;
    msg->refs = 1;
    msg->len = len;
    return msg;
}

/*  Drops one reference. */
static void s_msg_unref(s_msg_t *msg)
{
    if (msg && --msg->refs == 0)
        free(msg);
}

/*  Discards every queued message of a connection. */
static void s_out_clear(s_conn_t *conn)
{
    while (conn->out_head) {
        s_out_t *o = conn->out_head;
        conn->out_head = o->next;
        s_msg_unref(o->msg);
        free(o);
    }
    conn->out_tail = NULL;
    conn->out_off = 0;
}

/*  Writes as much queued output as the socket takes.  Returns 1 when the queue is empty,
 *  0 when the socket is full, -1 when the peer is gone (the queue is then discarded and
 *  the read side will notice the loss). */
static int s_flush(s_conn_t *conn)
{
    while (conn->out_head) {
        s_msg_t *msg = conn->out_head->msg;
        ssize_t w = send(conn->fd, msg->data + conn->out_off, msg->len - conn->out_off,
                         MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            s_out_clear(conn);
            return -1;
        }
        conn->out_off += (size_t)w;
        if (conn->rank >= 0 && conn->state == C_JOINED)  /* reading a large reply is not silence */
            conn->server->ranks[conn->rank].last_seen_ms = gimpi_loop_now_ms();
        if (conn->out_off == msg->len) {
            s_out_t *o = conn->out_head;
            conn->out_head = o->next;
            if (!conn->out_head)
                conn->out_tail = NULL;
            s_msg_unref(o->msg);
            free(o);
            conn->out_off = 0;
        }
    }
    return 1;
}

/*  Sets the loop interest of a connection from its state and queue. */
static void s_update_interest(s_conn_t *conn)
{
    int ev = conn->state == C_CLOSING ? 0 : GIMPI_LOOP_READ;
    if (conn->out_head)
        ev |= GIMPI_LOOP_WRITE;
    gimpi_loop_fd_set(conn->server->loop, conn->fd, ev);
}

/*  Queues a message (taking a new reference) and writes what the socket takes now. */
static void s_send(s_conn_t *conn, s_msg_t *msg)
{
    s_out_t *o = malloc(sizeof *o);
    if (!o) {
        s_log(conn->server, "out of memory queueing a reply");
        return;
    }
    msg->refs++;
    o->msg = msg;
    o->next = NULL;
    if (conn->out_tail)
        conn->out_tail->next = o;
    else
        conn->out_head = o;
    conn->out_tail = o;
    s_flush(conn);
    s_update_interest(conn);
}

/*  Queues msg on every connected rank that has not sent FINI, then drops the caller's
 *  reference. */
static void s_send_all(impi_server_t *self, s_msg_t *msg)
{
    for (int r = 0; r < self->nclients; r++) {
        s_rank_t *rk = &self->ranks[r];
        if (rk->conn && !rk->fini && !rk->dropped)
            s_send(rk->conn, msg);
    }
    s_msg_unref(msg);
}

/* ------------------------------------------------------------------ connections */

static void s_conn_event(gimpi_loop_t *loop, int fd, int events, void *arg);
static void s_check_progress(impi_server_t *self);

/*  Closes and frees a connection (its rank, if any, is updated by the caller). */
static void s_conn_free(s_conn_t *conn)
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
    s_out_clear(conn);
    free(conn->in);
    free(conn);
}

/*  Ends a connection for `reason` (NULL: quietly).  A rank that had joined before the
 *  job started becomes free again; after the start it is marked dropped and the job
 *  goes on without it. */
static void s_drop(s_conn_t *conn, const char *reason)
{
    impi_server_t *self = conn->server;
    char who[96];
    s_who(conn, who, sizeof who);
    int rank = conn->rank;
    if (rank >= 0 && conn->state >= C_JOINED) {
        s_rank_t *rk = &self->ranks[rank];
        rk->conn = NULL;
        if (rk->fini) {
            /* finished cleanly; nothing to report */
        } else if (self->started) {
            rk->dropped = true;
            s_log(self, "%s: %s; dropped before FINI, the job cannot complete", who,
                  reason ? reason : "closed");
        } else {
            /* limited: with NONE, a stranger can join and leave at will */
            memset(rk, 0, sizeof *rk);
            self->njoined--;
            s_log_limited(self, "%s: %s; rank %d is free again (the job had not started)", who,
                          reason ? reason : "closed", rank);
        }
    } else if (reason) {
        s_log_limited(self, "%s: %s; connection closed", who, reason);
    }
    bool joined = rank >= 0 && conn->state >= C_JOINED;
    s_conn_free(conn);
    if (joined && self->started)
        s_check_progress(self);
}

/*  Handshake timeout: closes a connection that did not complete AUTH and IMPI in time. */
static void s_join_timeout(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop;
    (void)id;
    s_conn_t *conn = arg;
    conn->timer = 0;
    char reason[96];
    snprintf(reason, sizeof reason, "no AUTH and IMPI within %d ms (handshake timeout)",
             conn->server->join_timeout_ms);
    s_drop(conn, reason);
}

/*  How far a connection in its handshake got: 0 nothing received yet, 1 AUTH begun or
 *  done (waiting for the key), 2 authenticated (waiting for IMPI). */
static int s_handshake_tier(const s_conn_t *c)
{
    if (c->state == C_JOIN)
        return 2;
    return c->state == C_KEY || c->in_len > 0 ? 1 : 0;
}

/*  Closes a connection still in its handshake to make room for a new one: the oldest of
 *  those that got least far.  Idle connections thus go first, and with KEY a client that
 *  proved the key is never pushed out by strangers, who cannot get that far.  The list
 *  is kept newest first, so the last one of a tier is its oldest. */
static void s_evict_oldest(impi_server_t *self)
{
    s_conn_t *oldest = NULL;
    int tier = 3;
    for (s_conn_t *c = self->conns; c; c = c->next) {
        if (c->state >= C_JOINED)
            continue;
        int t = s_handshake_tier(c);
        if (t <= tier) {
            tier = t;
            oldest = c;
        }
    }
    if (!oldest)
        return;
    char reason[128];
    snprintf(reason, sizeof reason, "still in its handshake after %" PRId64 " ms when %d "
             "others were; the oldest of the least advanced gives way",
             gimpi_loop_now_ms() - oldest->born_ms, self->max_pending);
    s_drop(oldest, reason);
}

/*  Timer: listens again after a pause forced by descriptor exhaustion. */
static void s_resume_accept(gimpi_loop_t *loop, int id, void *arg)
{
    (void)id;
    impi_server_t *self = arg;
    self->accept_timer = 0;
    gimpi_loop_fd_set(loop, self->listen_fd, GIMPI_LOOP_READ);
}

/*  Accepts every pending connection. */
static void s_accept(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)events;
    impi_server_t *self = arg;
    for (int round = 0; round < S_ACCEPT_PER_ROUND; round++) {
        struct sockaddr_in sa;
        socklen_t salen = sizeof sa;
        int cfd = accept4(fd, (struct sockaddr *)&sa, &salen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* the pending connection stays readable: pause instead of spinning */
                s_log_limited(self, "accept: %s; pausing new connections for %d ms",
                              strerror(errno), S_ACCEPT_PAUSE_MS);
                gimpi_loop_fd_set(loop, fd, 0);
                if (!self->accept_timer)
                    self->accept_timer = gimpi_loop_timer_add(loop, S_ACCEPT_PAUSE_MS, 0,
                                                              s_resume_accept, self);
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                       errno != ECONNABORTED) {
                s_log_limited(self, "accept: %s", strerror(errno));
            }
            return;
        }
        char peer[48], ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
        snprintf(peer, sizeof peer, "%s:%u", ip, ntohs(sa.sin_port));
        if (self->started) {
            s_log_limited(self, "connection from %s refused: all clients have already joined",
                          peer);
            close(cfd);
            continue;
        }
        if (self->npending >= self->max_pending)
            s_evict_oldest(self);
        s_conn_t *conn = calloc(1, sizeof *conn);
        if (!conn || gimpi_loop_fd_add(self->loop, cfd, GIMPI_LOOP_READ, s_conn_event, conn) < 0) {
            s_log_limited(self, "out of memory accepting %s", peer);
            free(conn);
            close(cfd);
            continue;
        }
        int one = 1;
        setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn->server = self;
        conn->fd = cfd;
        conn->id = ++self->next_conn_id;
        conn->rank = -1;
        conn->state = C_AUTH;
        conn->born_ms = gimpi_loop_now_ms();
        snprintf(conn->peer, sizeof conn->peer, "%s", peer);
        conn->next = self->conns;
        if (self->conns)
            self->conns->prev = conn;
        self->conns = conn;
        self->npending++;
        if (self->join_timeout_ms > 0)
            conn->timer = gimpi_loop_timer_add(self->loop, self->join_timeout_ms, 0,
                                               s_join_timeout, conn);
        if (self->verbose)
            s_log(self, "connection %d from %s", conn->id, peer);
    }
}

/* ------------------------------------------------------------------ job progress */

/*  True when rank r can no longer contribute to `label`. */
static bool s_rank_past(const s_rank_t *rk, const s_label_t *l, int r)
{
    return (l->mask & (1u << r)) || rk->done || rk->fini || rk->dropped ||
           (rk->has_label && rk->last_label > l->label);
}

/*  Sends the reply of a complete label to everyone and frees it. */
static void s_answer_label(impi_server_t *self, s_label_t *l)
{
    size_t total = 0;
    for (int r = 0; r < self->nclients; r++)
        total += l->len[r];
    s_msg_t *msg = s_msg_new(IMPI_COLL_REPLY_HDR_SIZE + total);
    if (!msg) {
        s_log(self, "out of memory building the reply of %s", impi_label_name(l->label));
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
        s_log(self, "COLL reply %s (0x%04" PRIx32 ") mask 0x%" PRIx32 " len %zu",
              impi_label_name(l->label), (uint32_t)l->label, l->mask, 8 + total);
    s_send_all(self, msg);
}

/*  Frees a label entry. */
static void s_label_free(s_label_t *l)
{
    for (int r = 0; r < IMPI_MAX_CLIENTS; r++)
        free(l->data[r]);
    free(l);
}

/*  True when the job waits for rank r: it owes the lowest pending label, or (no label
 *  pending) its next label or DONE. */
static bool s_rank_owes(impi_server_t *self, int r)
{
    const s_rank_t *rk = &self->ranks[r];
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
static void s_arm_silence(impi_server_t *self)
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
        s_conn_t *conn = self->ranks[late[k]].conn;
        if (!conn || self->ranks[late[k]].dropped)
            continue;
        char reason[200];
        snprintf(reason, sizeof reason, "silent for %" PRId64 " ms while the job waits for %s "
                 "(silence timeout %d ms)", silent[k], what, self->silence_ms);
        s_drop(conn, reason);
    }
    s_arm_silence(self);
}

/*  Answers every complete label (lowest first), then DONE when all are done, then ends
 *  the job when every rank sent FINI or was dropped. */
static void s_check_progress(impi_server_t *self)
{
    if (!self->started || self->result >= 0)
        return;
    /* labels: if the lowest pending label is incomplete, so is every higher one */
    while (self->labels) {
        s_label_t *l = self->labels;
        bool complete = true;
        for (int r = 0; r < self->nclients && complete; r++)
            complete = s_rank_past(&self->ranks[r], l, r);
        if (!complete)
            break;
        self->labels = l->next;
        s_answer_label(self, l);
        s_label_free(l);
        self->progress_ms = gimpi_loop_now_ms();
    }
    bool all_done = true, all_over = true, any_dropped = false;
    for (int r = 0; r < self->nclients; r++) {
        s_rank_t *rk = &self->ranks[r];
        all_done &= rk->done || rk->fini || rk->dropped;
        all_over &= rk->fini || rk->dropped;
        any_dropped |= rk->dropped;
    }
    if (all_done && !self->done_sent && !self->labels) {
        self->done_sent = true;
        s_msg_t *msg = s_msg_new(IMPI_CMD_HDR_SIZE);
        if (msg) {
            impi_cmd_encode(msg->data, IMPI_CMD_DONE, 0);
            if (self->verbose)
                s_log(self, "DONE to all");
            s_send_all(self, msg);
        }
    }
    if (all_over) {
        self->result = any_dropped ? 1 : 0;
        s_arm_silence(self);    /* cancels it */
        if (self->log_timer) {  /* the loop ends: the pending summary now */
            gimpi_loop_timer_cancel(self->loop, self->log_timer);
            s_log_summary(self->loop, self->log_timer, self);
        }
        if (any_dropped)
            s_log(self, "no client left; the job failed (a client was dropped before FINI)");
        if (self->own_loop)
            gimpi_loop_stop(self->loop);
        else if (self->done_fn)
            self->done_fn(self, self->result, self->done_arg);
        return;
    }
    s_arm_silence(self);
}

/*  Records a COLL contribution of rank r. */
static int s_add_contribution(impi_server_t *self, int r, const impi_coll_t *coll)
{
    s_label_t **pp = &self->labels;
    while (*pp && (*pp)->label < coll->label)
        pp = &(*pp)->next;
    s_label_t *l = *pp;
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
    return 0;
}

/* ------------------------------------------------------------------ commands */

/*  Handles AUTH on a fresh connection.  Returns 0, or -1 when the connection is gone. */
static int s_on_auth(s_conn_t *conn, const uint8_t *payload)
{
    impi_server_t *self = conn->server;
    char reason[160];
    uint32_t mask = (uint32_t)impi_cmd_int4_decode(payload);
    int which = impi_auth_choose(mask, self->auth_mask);
    if (which < 0) {
        snprintf(reason, sizeof reason,
                 "no common authentication method (client offers mask 0x%" PRIx32
                 ", server enables 0x%" PRIx32 ")", mask, self->auth_mask);
        s_drop(conn, reason);
        return -1;
    }
    s_msg_t *msg = s_msg_new(IMPI_AUTH_REPLY_SIZE);
    if (!msg) {
        s_drop(conn, "out of memory");
        return -1;
    }
    impi_auth_reply_encode(msg->data, which, which == IMPI_AUTH_KEY ? IMPI_AUTH_KEY_SIZE : 0);
    s_send(conn, msg);
    s_msg_unref(msg);
    conn->state = which == IMPI_AUTH_KEY ? C_KEY : C_JOIN;
    return 0;
}

/*  Checks the 8 raw key bytes.  Returns 0, or -1 when the connection is gone. */
static int s_on_key(s_conn_t *conn, const uint8_t *bytes)
{
    if (impi_auth_key_decode(bytes) != conn->server->key) {
        s_drop(conn, "wrong authentication key");
        return -1;
    }
    conn->state = C_JOIN;
    return 0;
}

/*  Handles IMPI (the join).  Returns 0, or -1 when the connection is gone. */
static int s_on_join(s_conn_t *conn, const uint8_t *payload)
{
    impi_server_t *self = conn->server;
    char reason[160];
    int32_t rank = impi_cmd_int4_decode(payload);
    if (rank < 0 || rank >= self->nclients) {
        snprintf(reason, sizeof reason, "rank %" PRId32 " refused: out of range 0..%d", rank,
                 self->nclients - 1);
        s_drop(conn, reason);
        return -1;
    }
    if (self->ranks[rank].joined) {
        snprintf(reason, sizeof reason, "rank %" PRId32 " refused: duplicate (already joined from %s)",
                 rank, self->ranks[rank].conn ? self->ranks[rank].conn->peer : "?");
        s_drop(conn, reason);
        return -1;
    }
    s_rank_t *rk = &self->ranks[rank];
    memset(rk, 0, sizeof *rk);
    rk->conn = conn;
    rk->joined = true;
    conn->rank = rank;
    conn->state = C_JOINED;
    self->npending--;
    if (conn->timer) {
        gimpi_loop_timer_cancel(self->loop, conn->timer);
        conn->timer = 0;
    }
    self->njoined++;
    if (self->verbose)
        s_log(self, "client %d joined from %s (%d of %d)", rank, conn->peer, self->njoined,
              self->nclients);
    if (self->njoined == self->nclients) {
        self->started = true;
        s_msg_t *msg = s_msg_new(IMPI_CMD_INT4_SIZE);
        if (!msg) {
            s_drop(conn, "out of memory");
            return -1;
        }
        impi_cmd_int4_encode(msg->data, IMPI_CMD_IMPI, self->nclients);
        s_send_all(self, msg);
        self->progress_ms = gimpi_loop_now_ms();
        s_arm_silence(self);
    }
    return 0;
}

/*  Handles COLL, DONE and FINI of a joined client.  Returns 0 to go on parsing, 1 to
 *  stop (FINI, connection closing), -1 when the connection is gone. */
static int s_on_joined(s_conn_t *conn, const impi_cmd_t *cmd, const uint8_t *payload)
{
    impi_server_t *self = conn->server;
    s_rank_t *rk = &self->ranks[conn->rank];
    char reason[200];
    rk->last_seen_ms = gimpi_loop_now_ms();
    switch (cmd->cmd) {
    case IMPI_CMD_COLL: {
        impi_coll_t coll;
        int rc = impi_coll_decode(payload, cmd->len, &coll);
        if (rc != IMPI_OK) {
            snprintf(reason, sizeof reason, "bad COLL: %s", impi_strerror(rc));
            s_drop(conn, reason);
            return -1;
        }
        if (rk->done) {
            snprintf(reason, sizeof reason, "COLL %s (0x%04" PRIx32 ") after DONE",
                     impi_label_name(coll.label), (uint32_t)coll.label);
            s_drop(conn, reason);
            return -1;
        }
        if (rk->has_label && coll.label <= rk->last_label) {
            snprintf(reason, sizeof reason,
                     "label 0x%04" PRIx32 " (%s) is not above its previous label 0x%04" PRIx32
                     " (labels must ascend)", (uint32_t)coll.label, impi_label_name(coll.label),
                     (uint32_t)rk->last_label);
            s_drop(conn, reason);
            return -1;
        }
        if (s_add_contribution(self, conn->rank, &coll) < 0) {
            s_drop(conn, "out of memory storing a COLL contribution");
            return -1;
        }
        rk->has_label = true;
        rk->last_label = coll.label;
        s_check_progress(self);
        return 0;
    }
    case IMPI_CMD_DONE:
        if (rk->done) {
            s_drop(conn, "sent DONE twice");
            return -1;
        }
        rk->done = true;
        s_check_progress(self);
        return 0;
    case IMPI_CMD_FINI:
        rk->fini = true;
        conn->state = C_CLOSING;
        if (self->verbose)
            s_log(self, "client %d: FINI", conn->rank);
        s_check_progress(self);
        if (!conn->out_head || s_flush(conn) != 0) {
            rk->conn = NULL;
            s_conn_free(conn);
            return -1;
        }
        s_update_interest(conn);
        return 1;
    default:                    /* excluded by s_command_allowed() */
        s_drop(conn, "internal error: unexpected command");
        return -1;
    }
}

/*  Whether a command may come in the connection's state, checked from the header alone
 *  (before waiting for any payload).  Writes the reason into buf and returns false when
 *  it may not. */
static bool s_command_allowed(s_conn_t *conn, int32_t cmd, char *buf, size_t size)
{
    const char *name = impi_cmd_name(cmd);
    switch (conn->state) {
    case C_AUTH:
        if (cmd == IMPI_CMD_AUTH)
            return true;
        snprintf(buf, size, "first command is %s, not AUTH", name);
        return false;
    case C_JOIN:
        if (cmd == IMPI_CMD_IMPI)
            return true;
        snprintf(buf, size, "sent %s where IMPI was expected", name);
        return false;
    default:
        if (cmd == IMPI_CMD_AUTH || cmd == IMPI_CMD_IMPI) {
            snprintf(buf, size, "unexpected %s after joining", name);
            return false;
        }
        if (!conn->server->started) {
            snprintf(buf, size, "sent %s before the IMPI reply (protocol violation)", name);
            return false;
        }
        return true;
    }
}

/*  Cuts and handles every complete frame in the input buffer.  Returns 0, or -1 when the
 *  connection is gone. */
static int s_parse(s_conn_t *conn)
{
    impi_server_t *self = conn->server;
    while (conn->state != C_CLOSING) {
        const uint8_t *in = conn->in + conn->in_off;
        size_t avail = conn->in_len - conn->in_off;
        if (conn->state == C_KEY) {
            if (avail < IMPI_AUTH_KEY_SIZE)
                break;
            if (s_on_key(conn, in) < 0)
                return -1;
            conn->in_off += IMPI_AUTH_KEY_SIZE;
            continue;
        }
        if (avail < IMPI_CMD_HDR_SIZE)
            break;
        impi_cmd_t cmd;
        int rc = impi_cmd_decode(in, IMPI_MAX_PAYLOAD, &cmd);
        if (rc != IMPI_OK) {
            char reason[160];
            if (rc == IMPI_ERR_COMMAND)
                snprintf(reason, sizeof reason, "unknown command code 0x%08" PRIx32,
                         (uint32_t)cmd.cmd);
            else
                snprintf(reason, sizeof reason, "%s with length %" PRIu32 " refused (%s; at most %"
                         PRIu32 " bytes accepted)", impi_cmd_name(cmd.cmd), cmd.len,
                         impi_strerror(rc), (uint32_t)IMPI_MAX_PAYLOAD);
            s_drop(conn, reason);
            return -1;
        }
        char reason[160];
        if (!s_command_allowed(conn, cmd.cmd, reason, sizeof reason)) {
            s_drop(conn, reason);
            return -1;
        }
        if (avail - IMPI_CMD_HDR_SIZE < cmd.len)
            break;              /* partial frame: wait for more */
        const uint8_t *payload = in + IMPI_CMD_HDR_SIZE;
        if (self->verbose) {
            char who[96], prefix[128];
            snprintf(prefix, sizeof prefix, "impi-server: %s: ", s_who(conn, who, sizeof who));
            impi_cmd_print(self->log, prefix, &cmd, payload, cmd.len);
        }
        switch (conn->state) {
        case C_AUTH: rc = s_on_auth(conn, payload); break;
        case C_JOIN: rc = s_on_join(conn, payload); break;
        default: rc = s_on_joined(conn, &cmd, payload); break;
        }
        if (rc < 0)
            return -1;
        conn->in_off += IMPI_CMD_HDR_SIZE + cmd.len;
        if (rc > 0)
            break;
    }
    /* keep only the unparsed tail, at the front of the buffer */
    if (conn->in_off) {
        memmove(conn->in, conn->in + conn->in_off, conn->in_len - conn->in_off);
        conn->in_len -= conn->in_off;
        conn->in_off = 0;
    }
    return 0;
}

/*  Reads one chunk (fairness: one chunk per connection per round) and parses it. */
static void s_conn_read(s_conn_t *conn)
{
    if (conn->in_cap - conn->in_len < S_READ_CHUNK) {
        /* grow geometrically, driven by bytes that actually arrived (never by a length
           a peer merely claims), so a large frame costs amortised linear copying */
        size_t cap = conn->in_len + S_READ_CHUNK;
        if (cap < 2 * conn->in_cap)
            cap = 2 * conn->in_cap;
        uint8_t *in = realloc(conn->in, cap);
        if (!in) {
            s_drop(conn, "out of memory reading");
            return;
        }
        conn->in = in;
        conn->in_cap = cap;
    }
    ssize_t r = recv(conn->fd, conn->in + conn->in_len, conn->in_cap - conn->in_len, 0);
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        char reason[128];
        snprintf(reason, sizeof reason, "connection error: %s", strerror(errno));
        s_drop(conn, reason);
        return;
    }
    if (r == 0) {
        bool quiet = conn->state == C_AUTH && conn->in_len == 0;
        s_drop(conn, quiet && !conn->server->verbose ? NULL : "disconnected");
        return;
    }
    conn->in_len += (size_t)r;
    if (s_parse(conn) == 0 && conn->in_len == 0 && conn->in_cap > S_READ_CHUNK) {
        free(conn->in);         /* a large frame is handled: give its buffer back */
        conn->in = NULL;
        conn->in_cap = 0;
    }
}

/*  Loop callback of a client connection. */
static void s_conn_event(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    (void)fd;
    s_conn_t *conn = arg;
    if (events & GIMPI_LOOP_WRITE) {
        int rc = s_flush(conn);
        if (conn->state == C_CLOSING && rc != 0) {
            s_conn_free(conn);  /* FINI'd and flushed (or peer gone) */
            return;
        }
        s_update_interest(conn);
    }
    if ((events & (GIMPI_LOOP_READ | GIMPI_LOOP_ERROR)) && conn->state != C_CLOSING)
        s_conn_read(conn);
}

/* ------------------------------------------------------------------ the object */

/*  First non-loopback IPv4 address of the machine, or 127.0.0.1. */
static void s_default_address(char *buf, size_t size)
{
    snprintf(buf, size, "127.0.0.1");
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0)
        return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) ||
            !(i->ifa_flags & IFF_UP))
            continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf, (socklen_t)size);
        break;
    }
    freeifaddrs(ifs);
}

/*  The descriptor of a log that may block when nobody reads it (pipe, socket,
 *  terminal), for s_emit(); -1 for regular files and logs without a descriptor. */
static int s_log_fd(FILE *log)
{
    int fd = fileno(log);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return -1;
    return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode) ? fd : -1;
}

/*  Creates the server and its listening socket. */
impi_server_t *impi_server_new(int nclients, const char *bind_addr, int port,
                               uint32_t auth_mask, uint64_t key, FILE *log)
{
    if (!log)
        log = stderr;
    if (nclients < 1 || nclients > IMPI_MAX_CLIENTS) {
        fprintf(log, "impi-server: number of clients %d out of range 1..%d\n", nclients,
                IMPI_MAX_CLIENTS);
        return NULL;
    }
    if (port < 0 || port > 65535) {
        fprintf(log, "impi-server: port %d out of range 0..65535\n", port);
        return NULL;
    }
    if (auth_mask == 0 || (auth_mask & ~(IMPI_SERVER_AUTH_NONE | IMPI_SERVER_AUTH_KEY))) {
        fprintf(log, "impi-server: authentication mask 0x%" PRIx32 " invalid (need none and/or key)\n",
                auth_mask);
        return NULL;
    }
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    bool any = !bind_addr || strcmp(bind_addr, "0.0.0.0") == 0;
    if (any)
        sa.sin_addr.s_addr = htonl(INADDR_ANY);
    else if (inet_pton(AF_INET, bind_addr, &sa.sin_addr) != 1) {
        fprintf(log, "impi-server: '%s' is not a dotted IPv4 address\n", bind_addr);
        return NULL;
    }
    impi_server_t *self = calloc(1, sizeof *self);
    if (!self) {
        fprintf(log, "impi-server: out of memory\n");
        return NULL;
    }
    self->nclients = nclients;
    self->auth_mask = auth_mask;
    self->key = key;
    self->log = log;
    self->result = -1;
    self->join_timeout_ms = IMPI_SERVER_HANDSHAKE_MS;
    self->silence_ms = IMPI_SERVER_SILENCE_MS;
    self->max_pending = IMPI_SERVER_MAX_HANDSHAKING;
    self->log_fd = s_log_fd(log);
    self->log_rate.per_sec = IMPI_SERVER_LOG_PER_SEC;
    self->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (self->listen_fd < 0 ||
        setsockopt(self->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(self->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        listen(self->listen_fd, 128) < 0) {
        fprintf(log, "impi-server: cannot listen on %s:%d: %s\n", any ? "0.0.0.0" : bind_addr,
                port, strerror(errno));
        impi_server_destroy(&self);
        return NULL;
    }
    socklen_t salen = sizeof sa;
    getsockname(self->listen_fd, (struct sockaddr *)&sa, &salen);
    self->port = ntohs(sa.sin_port);
    char host[INET_ADDRSTRLEN];
    if (any)
        s_default_address(host, sizeof host);
    else
        inet_ntop(AF_INET, &sa.sin_addr, host, sizeof host);
    snprintf(self->endpoint, sizeof self->endpoint, "%s:%d", host, self->port);
    self->loop = gimpi_loop_new();
    self->own_loop = true;
    if (!self->loop ||
        gimpi_loop_fd_add(self->loop, self->listen_fd, GIMPI_LOOP_READ, s_accept, self) < 0) {
        fprintf(log, "impi-server: out of memory\n");
        impi_server_destroy(&self);
        return NULL;
    }
    return self;
}

/*  Frees everything. */
void impi_server_destroy(impi_server_t **self_p)
{
    assert(self_p);
    impi_server_t *self = *self_p;
    if (!self)
        return;
    while (self->conns)
        s_conn_free(self->conns);
    while (self->labels) {
        s_label_t *l = self->labels;
        self->labels = l->next;
        s_label_free(l);
    }
    if (self->loop) {
        gimpi_loop_fd_del(self->loop, self->listen_fd);
        if (self->accept_timer)
            gimpi_loop_timer_cancel(self->loop, self->accept_timer);
        if (self->silence_timer)
            gimpi_loop_timer_cancel(self->loop, self->silence_timer);
        if (self->log_timer)
            gimpi_loop_timer_cancel(self->loop, self->log_timer);
        if (self->own_loop)
            gimpi_loop_destroy(&self->loop);
    }
    if (self->listen_fd >= 0)
        close(self->listen_fd);
    free(self);
    *self_p = NULL;
}

/*  Where clients connect. */
const char *impi_server_endpoint(impi_server_t *self)
{
    assert(self);
    return self->endpoint;
}

/*  The listening port. */
int impi_server_port(impi_server_t *self)
{
    assert(self);
    return self->port;
}

/*  Moves the listening socket (the only thing registered so far) onto the caller's loop. */
int impi_server_attach(impi_server_t *self, gimpi_loop_t *loop, impi_server_done_fn *done,
                       void *arg)
{
    assert(self);
    assert(loop);
    if (!self->own_loop || self->running || self->conns || self->result >= 0)
        return -1;
    if (gimpi_loop_fd_add(loop, self->listen_fd, GIMPI_LOOP_READ, s_accept, self) < 0)
        return -1;
    gimpi_loop_destroy(&self->loop);
    self->loop = loop;
    self->own_loop = false;
    self->done_fn = done;
    self->done_arg = arg;
    return 0;
}

/*  The job's result so far. */
int impi_server_result(impi_server_t *self)
{
    assert(self);
    return self->result;
}

/*  Join timeout for new connections. */
void impi_server_set_join_timeout(impi_server_t *self, int ms)
{
    assert(self);
    self->join_timeout_ms = ms > 0 ? ms : 0;
}

/*  Silence bound after the start. */
void impi_server_set_silence_timeout(impi_server_t *self, int ms)
{
    assert(self);
    self->silence_ms = ms > 0 ? ms : 0;
}

/*  Bound on connections in their handshake. */
void impi_server_set_max_handshaking(impi_server_t *self, int n)
{
    assert(self);
    self->max_pending = n > 0 ? n : 1;
}

/*  Tracing on the log. */
void impi_server_set_verbose(impi_server_t *self, int verbose)
{
    assert(self);
    self->verbose = verbose != 0;
}

/*  Serves until every rank sent FINI or was dropped. */
int impi_server_run(impi_server_t *self)
{
    assert(self);
    if (self->result >= 0)
        return self->result;
    if (!self->own_loop) {
        s_log(self, "impi_server_run: the server runs on its caller's loop");
        return -1;
    }
    self->running = true;
    if (gimpi_loop_run(self->loop) < 0) {
        s_log(self, "event loop: %s", strerror(errno));
        return -1;
    }
    if (self->result < 0) {
        s_log(self, "event loop stopped before the job ended");
        return -1;
    }
    /* FINI'd clients expect nothing more; give queued bytes one last chance */
    for (s_conn_t *c = self->conns; c; c = c->next)
        s_flush(c);
    return self->result;
}
