/*  impi_server_cmd.c — a client connection's commands on the startup server.  Each TCP
 *  connection is a small state machine: AUTH (first command must be AUTH), KEY (8 raw key
 *  bytes, only when KEY was chosen), PROOF (32 raw bytes, the HMAC of the connection's
 *  fresh challenge under the user's key, only when GIMPI or GIMPI_JOB was chosen; after a
 *  good one GIMPI_JOB's client gets the job's secret, sealed under the user's key), JOIN (the IMPI command with a rank), JOINED (COLL,
 *  DONE, FINI) and CLOSING (FINI received, flushing).  Bytes are read without blocking
 *  into a per-connection buffer, one chunk per connection per round, and cut into frames
 *  with impi_wire's decoders, which check every length against IMPI_MAX_PAYLOAD before the
 *  buffer is allowed to grow for it.
 */
#include "server/impi_server_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

enum {
    S_READ_CHUNK = 64 * 1024,   /* bytes read per readiness event (fairness) */
};

/* ------------------------------------------------------------------ commands */

/*  Handles AUTH on a fresh connection.  Returns 0, or -1 when the connection is gone. */
static int s_on_auth(srv_conn_t *conn, const uint8_t *payload)
{
    impi_server_t *self = conn->server;
    char reason[160];
    uint32_t mask = (uint32_t)impi_cmd_int4_decode(payload);
    int which = impi_auth_choose(mask, self->auth_mask);
    if (which < 0) {
        snprintf(reason, sizeof reason,
                 "no common authentication method (client offers mask 0x%" PRIx32
                 ", server enables 0x%" PRIx32 ")", mask, self->auth_mask);
        srv_drop(conn, reason);
        return -1;
    }
    bool proof = which == IMPI_AUTH_GIMPI || which == IMPI_AUTH_GIMPI_JOB;
    conn->job_secret = which == IMPI_AUTH_GIMPI_JOB;
    conn->keyed = which != IMPI_AUTH_NONE;
    srv_msg_t *msg = srv_msg_new(IMPI_AUTH_REPLY_SIZE + (proof ? IMPI_AUTH_NONCE_SIZE : 0));
    if (!msg) {
        srv_drop(conn, "out of memory");
        return -1;
    }
    impi_auth_reply_encode(msg->data, which, proof ? IMPI_AUTH_PROOF_SIZE
                                             : which == IMPI_AUTH_KEY ? IMPI_AUTH_KEY_SIZE : 0);
    if (proof) {                /* a challenge of this connection's own: no answer works twice */
        gimpi_key_random_bytes(conn->nonce, sizeof conn->nonce);
        memcpy(msg->data + IMPI_AUTH_REPLY_SIZE, conn->nonce, sizeof conn->nonce);
    }
    srv_send(conn, msg);
    srv_msg_unref(msg);
    conn->state = proof ? C_PROOF : which == IMPI_AUTH_KEY ? C_KEY : C_JOIN;
    return 0;
}

/*  Checks the raw key bytes (KEY) or the proof (GIMPI).  Returns 0, or -1 when the
 *  connection is gone. */
static int s_on_key(srv_conn_t *conn, const uint8_t *bytes)
{
    bool good = conn->state == C_PROOF
                    ? gimpi_key_mac_ok(&conn->server->master, IMPI_AUTH_PROOF_CONTEXT,
                                       conn->nonce, sizeof conn->nonce, bytes)
                    : impi_auth_key_decode(bytes) == conn->server->key;
    if (!good) {
        srv_drop(conn, conn->state == C_PROOF ? "wrong proof of the key (not the same gimpi key)"
                                              : "wrong authentication key");
        return -1;
    }
    conn->state = C_JOIN;
    if (!conn->job_secret)
        return 0;
    srv_msg_t *msg = srv_msg_new(IMPI_AUTH_JOB_SEALED_SIZE);
    if (!msg) {
        srv_drop(conn, "out of memory");
        return -1;
    }
    gimpi_key_seal(&conn->server->master, IMPI_AUTH_JOB_CONTEXT, conn->server->job_secret,
                   sizeof conn->server->job_secret, msg->data);
    srv_send(conn, msg);
    srv_msg_unref(msg);
    return 0;
}

/*  Handles IMPI (the join).  Returns 0, or -1 when the connection is gone. */
static int s_on_join(srv_conn_t *conn, const uint8_t *payload)
{
    impi_server_t *self = conn->server;
    char reason[256];
    int32_t rank = impi_cmd_int4_decode(payload);
    if (rank < 0 || rank >= self->nclients) {
        snprintf(reason, sizeof reason, "rank %" PRId32 " refused: out of range 0..%d", rank,
                 self->nclients - 1);
        srv_drop(conn, reason);
        return -1;
    }
    if (self->ranks[rank].joined && conn->keyed) {  /* two holders of the key claim one */
        char first[80] = "";        /* rank: one is not of this job, and nobody can tell */
        if (self->ranks[rank].conn) /* which, so the job stops at once */
            snprintf(first, sizeof first, ", which joined from %s", self->ranks[rank].conn->peer);
        snprintf(reason, sizeof reason, "rank %" PRId32 " claimed again, from %s (after the "
                 "rank's first client%s): another party holds this job's key", rank,
                 conn->peer, first);
        srv_stop_job(self, reason);
        return -1;
    }
    if (self->ranks[rank].joined) {     /* (NONE: anyone may claim, nothing is proven) */
        snprintf(reason, sizeof reason, "rank %" PRId32 " refused: duplicate (already joined from %s)",
                 rank, self->ranks[rank].conn ? self->ranks[rank].conn->peer : "?");
        srv_drop(conn, reason);
        return -1;
    }
    srv_rank_t *rk = &self->ranks[rank];
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
        srv_log(self, "client %d joined from %s (%d of %d)", rank, conn->peer, self->njoined,
                self->nclients);
    if (self->njoined == self->nclients) {
        self->started = true;
        srv_msg_t *msg = srv_msg_new(IMPI_CMD_INT4_SIZE);
        if (!msg) {
            srv_drop(conn, "out of memory");
            return -1;
        }
        impi_cmd_int4_encode(msg->data, IMPI_CMD_IMPI, self->nclients);
        srv_send_all(self, msg);
        self->progress_ms = gimpi_loop_now_ms();
        srv_arm_silence(self);
    }
    return 0;
}

/*  Handles COLL, DONE and FINI of a joined client.  Returns 0 to go on parsing, 1 to
 *  stop (FINI, connection closing), -1 when the connection is gone. */
static int s_on_joined(srv_conn_t *conn, const impi_cmd_t *cmd, const uint8_t *payload)
{
    impi_server_t *self = conn->server;
    srv_rank_t *rk = &self->ranks[conn->rank];
    char reason[200];
    rk->last_seen_ms = gimpi_loop_now_ms();
    switch (cmd->cmd) {
    case IMPI_CMD_COLL: {
        impi_coll_t coll;
        int rc = impi_coll_decode(payload, cmd->len, &coll);
        if (rc != IMPI_OK) {
            snprintf(reason, sizeof reason, "bad COLL: %s", impi_strerror(rc));
            srv_drop(conn, reason);
            return -1;
        }
        if (rk->done) {
            snprintf(reason, sizeof reason, "COLL %s (0x%04" PRIx32 ") after DONE",
                     impi_label_name(coll.label), (uint32_t)coll.label);
            srv_drop(conn, reason);
            return -1;
        }
        if (!impi_label_info(coll.label)) {
            /* only the table's labels: a joined client cannot make the server hold data
               under labels nobody will ever complete */
            snprintf(reason, sizeof reason, "label 0x%04" PRIx32 " is not an IMPI label "
                     "(only the %d labels of the IMPI table are accepted)",
                     (uint32_t)coll.label, IMPI_LABEL_COUNT);
            srv_drop(conn, reason);
            return -1;
        }
        if (rk->held + coll.len > IMPI_SERVER_MAX_HELD) {
            snprintf(reason, sizeof reason, "COLL %s of %zu bytes would make the server hold "
                     "%zu bytes of this client's (at most %zu)", impi_label_name(coll.label),
                     coll.len, rk->held + coll.len, IMPI_SERVER_MAX_HELD);
            srv_drop(conn, reason);
            return -1;
        }
        if (rk->has_label && coll.label <= rk->last_label) {
            snprintf(reason, sizeof reason,
                     "label 0x%04" PRIx32 " (%s) is not above its previous label 0x%04" PRIx32
                     " (labels must ascend)", (uint32_t)coll.label, impi_label_name(coll.label),
                     (uint32_t)rk->last_label);
            srv_drop(conn, reason);
            return -1;
        }
        if (srv_add_contribution(self, conn->rank, &coll) < 0) {
            srv_drop(conn, "out of memory storing a COLL contribution");
            return -1;
        }
        rk->has_label = true;
        rk->last_label = coll.label;
        srv_check_progress(self);
        return 0;
    }
    case IMPI_CMD_DONE:
        if (rk->done) {
            srv_drop(conn, "sent DONE twice");
            return -1;
        }
        rk->done = true;
        srv_check_progress(self);
        return 0;
    case IMPI_CMD_FINI:
        rk->fini = true;
        conn->state = C_CLOSING;
        if (self->verbose)
            srv_log(self, "client %d: FINI", conn->rank);
        srv_check_progress(self);
        if (!conn->out_head || srv_flush(conn) != 0) {
            rk->conn = NULL;
            srv_conn_free(conn);
            return -1;
        }
        srv_update_interest(conn);
        return 1;
    default:                    /* excluded by s_command_allowed() */
        srv_drop(conn, "internal error: unexpected command");
        return -1;
    }
}

/*  Whether a command may come in the connection's state, checked from the header alone
 *  (before waiting for any payload).  Writes the reason into buf and returns false when
 *  it may not. */
static bool s_command_allowed(srv_conn_t *conn, int32_t cmd, char *buf, size_t size)
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
static int s_parse(srv_conn_t *conn)
{
    impi_server_t *self = conn->server;
    while (conn->state != C_CLOSING) {
        const uint8_t *in = conn->in + conn->in_off;
        size_t avail = conn->in_len - conn->in_off;
        if (conn->state == C_KEY || conn->state == C_PROOF) {
            size_t need = conn->state == C_KEY ? IMPI_AUTH_KEY_SIZE : IMPI_AUTH_PROOF_SIZE;
            if (avail < need)
                break;
            if (s_on_key(conn, in) < 0)
                return -1;
            conn->in_off += need;
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
            srv_drop(conn, reason);
            return -1;
        }
        char reason[160];
        if (!s_command_allowed(conn, cmd.cmd, reason, sizeof reason)) {
            srv_drop(conn, reason);
            return -1;
        }
        if (avail - IMPI_CMD_HDR_SIZE < cmd.len)
            break;              /* partial frame: wait for more */
        const uint8_t *payload = in + IMPI_CMD_HDR_SIZE;
        if (self->verbose) {
            char who[96], prefix[128];
            snprintf(prefix, sizeof prefix, "impi-server: %s: ", srv_who(conn, who, sizeof who));
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
static void s_conn_read(srv_conn_t *conn)
{
    if (conn->in_cap - conn->in_len < S_READ_CHUNK) {
        /* grow geometrically, driven by bytes that actually arrived (never by a length
           a peer merely claims), so a large frame costs amortised linear copying */
        size_t cap = conn->in_len + S_READ_CHUNK;
        if (cap < 2 * conn->in_cap)
            cap = 2 * conn->in_cap;
        uint8_t *in = realloc(conn->in, cap);
        if (!in) {
            srv_drop(conn, "out of memory reading");
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
        srv_drop(conn, reason);
        return;
    }
    if (r == 0) {
        bool quiet = conn->state == C_AUTH && conn->in_len == 0;
        srv_drop(conn, quiet && !conn->server->verbose ? NULL : "disconnected");
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
void srv_conn_event(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop;
    (void)fd;
    srv_conn_t *conn = arg;
    if (events & GIMPI_LOOP_WRITE) {
        int rc = srv_flush(conn);
        if (conn->state == C_CLOSING && rc != 0) {
            srv_conn_free(conn);  /* FINI'd and flushed (or peer gone) */
            return;
        }
        srv_update_interest(conn);
    }
    if ((events & (GIMPI_LOOP_READ | GIMPI_LOOP_ERROR)) && conn->state != C_CLOSING)
        s_conn_read(conn);
}
