/*  impi_server_out.c — what the startup server writes: lines on its log and replies to
 *  its clients.  No line is ever written to a log that has no room for it (a stderr pipe
 *  nobody reads): it is counted as lost and the count is reported with the next line that
 *  gets through; lines about refused and dropped connections, which strangers can cause
 *  at will, are rate-limited (base/gimpi_ratelog.h).  Replies are reference-counted
 *  messages queued per connection, so one reply of several megabytes is built once and
 *  drained at each client's own pace.
 */
#include "server/impi_server_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    S_LOG_LINE_MAX = 1024,      /* one log line, truncated beyond (below PIPE_BUF) */
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
void srv_log(impi_server_t *self, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s_vlog(self, fmt, ap);
    va_end(ap);
}

/*  End of a rate-limit window with suppressed lines: one summary line. */
void srv_log_summary(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop;
    (void)id;
    impi_server_t *self = arg;
    self->log_timer = 0;
    int more = gimpi_ratelog_roll(&self->log_rate, gimpi_loop_now_ms(), true);
    if (more)
        srv_log(self, "%d more connections refused or dropped in the last second (at most %d "
                "lines a second are logged)", more, IMPI_SERVER_LOG_PER_SEC);
}

/*  Prints one line about a refused or dropped connection, at most IMPI_SERVER_LOG_PER_SEC
 *  a second; the others are counted and summed up by srv_log_summary() after the second.
 *  Strangers can cause these lines at will, so they must cost neither log space nor
 *  time. */
void srv_log_limited(impi_server_t *self, const char *fmt, ...)
{
    int64_t now = gimpi_loop_now_ms();
    if (!self->log_timer)               /* (a window with held lines ends by the timer) */
        gimpi_ratelog_roll(&self->log_rate, now, false);
    if (!gimpi_ratelog_event(&self->log_rate, now)) {
        if (!self->log_timer) {
            int id = gimpi_loop_timer_add(self->loop, gimpi_ratelog_due_ms(&self->log_rate, now),
                                          0, srv_log_summary, self);
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
const char *srv_who(srv_conn_t *conn, char *buf, size_t size)
{
    if (conn->rank >= 0)
        snprintf(buf, size, "client %d (%s)", conn->rank, conn->peer);
    else
        snprintf(buf, size, "connection %d (%s)", conn->id, conn->peer);
    return buf;
}

/* ------------------------------------------------------------------ output */

/*  A message of len bytes with one reference; NULL when out of memory. */
srv_msg_t *srv_msg_new(size_t len)
{
    srv_msg_t *msg = malloc(sizeof *msg + len);
    if (!msg)
        return NULL;
    msg->refs = 1;
    msg->len = len;
    return msg;
}

/*  Drops one reference. */
void srv_msg_unref(srv_msg_t *msg)
{
    if (msg && --msg->refs == 0)
        free(msg);
}

/*  Discards every queued message of a connection. */
void srv_out_clear(srv_conn_t *conn)
{
    while (conn->out_head) {
        srv_out_t *o = conn->out_head;
        conn->out_head = o->next;
        srv_msg_unref(o->msg);
        free(o);
    }
    conn->out_tail = NULL;
    conn->out_off = 0;
}

/*  Writes as much queued output as the socket takes.  Returns 1 when the queue is empty,
 *  0 when the socket is full, -1 when the peer is gone (the queue is then discarded and
 *  the read side will notice the loss). */
int srv_flush(srv_conn_t *conn)
{
    while (conn->out_head) {
        srv_msg_t *msg = conn->out_head->msg;
        ssize_t w = send(conn->fd, msg->data + conn->out_off, msg->len - conn->out_off,
                         MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            srv_out_clear(conn);
            return -1;
        }
        conn->out_off += (size_t)w;
        if (conn->rank >= 0 && conn->state == C_JOINED)  /* reading a large reply is not silence */
            conn->server->ranks[conn->rank].last_seen_ms = gimpi_loop_now_ms();
        if (conn->out_off == msg->len) {
            srv_out_t *o = conn->out_head;
            conn->out_head = o->next;
            if (!conn->out_head)
                conn->out_tail = NULL;
            srv_msg_unref(o->msg);
            free(o);
            conn->out_off = 0;
        }
    }
    return 1;
}

/*  Sets the loop interest of a connection from its state and queue. */
void srv_update_interest(srv_conn_t *conn)
{
    int ev = conn->state == C_CLOSING ? 0 : GIMPI_LOOP_READ;
    if (conn->out_head)
        ev |= GIMPI_LOOP_WRITE;
    gimpi_loop_fd_set(conn->server->loop, conn->fd, ev);
}

/*  Queues a message (taking a new reference) and writes what the socket takes now. */
void srv_send(srv_conn_t *conn, srv_msg_t *msg)
{
    srv_out_t *o = malloc(sizeof *o);
    if (!o) {
        srv_log(conn->server, "out of memory queueing a reply");
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
    srv_flush(conn);
    srv_update_interest(conn);
}

/*  Queues msg on every connected rank that has not sent FINI, then drops the caller's
 *  reference. */
void srv_send_all(impi_server_t *self, srv_msg_t *msg)
{
    for (int r = 0; r < self->nclients; r++) {
        srv_rank_t *rk = &self->ranks[r];
        if (rk->conn && !rk->fini && !rk->dropped)
            srv_send(rk->conn, msg);
    }
    srv_msg_unref(msg);
}
