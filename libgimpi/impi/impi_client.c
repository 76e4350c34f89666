/*  impi_client.c — the startup client of IMPI: one client's side of AUTH, IMPI, COLL,
 *  DONE and FINI against the startup server (impi-protocol.md §3).
 *
 *  The socket is non-blocking and every wait goes through poll() with a deadline, so a
 *  server that stops answering costs at most the deadline and a server that closes is
 *  noticed at once.  All encoding and decoding goes through impi_wire.c; command headers
 *  are decoded against a bound that depends on what is expected, and payloads are read
 *  into buffers grown as the bytes arrive, so a lying length never becomes an allocation.
 *  The labels are sent lock-step, in the order of the label table (ascending); replies
 *  for labels this client does not know are skipped; the replies it does know go into an
 *  impi_tables_t which validates them.
 */
#include "impi/impi_client.h"
#include "base/gimpi_key.h"
#include "base/gimpi_clock.h"
#include "base/gimpi_err.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef enum { ST_NEW, ST_JOINED, ST_DONE, ST_CLOSED, ST_FAILED } client_state_t;

struct impi_client_t {
    char *server;               /* "HOST:PORT" as given */
    int timeout_ms;             /* deadline of every awaited message */
    bool auth_set;              /* caller chose the mask (else: environment) */
    uint32_t auth_mask;
    uint64_t key;
    FILE *trace;
    int fd;
    int rank;
    int nclients;
    client_state_t state;
    impi_tables_t *tables;
    bool have_secret;           /* GIMPI_JOB was chosen: the job's secret came */
    uint8_t secret[IMPI_AUTH_JOB_SECRET_SIZE];
};

_Static_assert(IMPI_AUTH_JOB_SEALED_SIZE == IMPI_AUTH_JOB_SECRET_SIZE + GIMPI_KEY_SEAL_EXTRA,
               "the sealed job secret's size");

/* ------------------------------------------------------------------ helpers */

/*  Writes a formatted message into err (if any) and returns code (base/gimpi_err.h). */
static int s_fail(char *err, size_t errsize, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int s_fail(char *err, size_t errsize, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    code = gimpi_vfail(err, errsize, code, fmt, ap);
    va_end(ap);
    return code;
}

/*  Text for a result code. */
const char *impi_client_strerror(int code)
{
    switch (code) {
    case IMPI_CLIENT_OK: return "ok";
    case IMPI_CLIENT_ERR_USAGE: return "usage error";
    case IMPI_CLIENT_ERR_CONNECT: return "cannot connect to the server";
    case IMPI_CLIENT_ERR_AUTH: return "authentication failed";
    case IMPI_CLIENT_ERR_TIMEOUT: return "timeout";
    case IMPI_CLIENT_ERR_CLOSED: return "server closed the connection";
    case IMPI_CLIENT_ERR_PROTOCOL: return "protocol error";
    case IMPI_CLIENT_ERR_TABLES: return "inconsistent startup tables";
    case IMPI_CLIENT_ERR_IO: return "I/O error";
    default: return "unknown error";
    }
}

/*  Waits for `events` on the socket until the deadline.  Returns 1 ready, 0 timeout,
 *  -1 error (errno set). */
static int s_wait(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - gimpi_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = { .fd = fd, .events = events };
        int rc = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -1;
        if (rc > 0)
            return 1;
    }
}

/*  Sends all bytes before the deadline.  `what` names them for messages. */
static int s_send_all(impi_client_t *self, const uint8_t *p, size_t n, const char *what,
                      char *err, size_t errsize)
{
    int64_t deadline = gimpi_now_ms() + self->timeout_ms;
    while (n) {
        ssize_t w = send(self->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int rc = s_wait(self->fd, POLLOUT, deadline);
            if (rc == 0)
                return s_fail(err, errsize, IMPI_CLIENT_ERR_TIMEOUT, "server %s did not take %s "
                              "within %d ms", self->server, what, self->timeout_ms);
            if (rc < 0)
                return s_fail(err, errsize, IMPI_CLIENT_ERR_IO, "sending %s: %s", what,
                              strerror(errno));
            continue;
        }
        if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
            return s_fail(err, errsize, IMPI_CLIENT_ERR_CLOSED, "server %s closed the "
                          "connection while this client sent %s", self->server, what);
        return s_fail(err, errsize, IMPI_CLIENT_ERR_IO, "sending %s: %s", what,
                      w < 0 ? strerror(errno) : "nothing written");
    }
    return IMPI_CLIENT_OK;
}

/*  Reads exactly n bytes before the deadline into buf. */
static int s_recv_exact(impi_client_t *self, uint8_t *buf, size_t n, int64_t deadline,
                        const char *what, char *err, size_t errsize)
{
    size_t have = 0;
    while (have < n) {
        ssize_t r = recv(self->fd, buf + have, n - have, MSG_DONTWAIT);
        if (r > 0) {
            have += (size_t)r;
            continue;
        }
        if (r == 0)
            return s_fail(err, errsize, IMPI_CLIENT_ERR_CLOSED, "server %s closed the connection"
                          " while this client waited for %s (%zu of %zu bytes received)",
                          self->server, what, have, n);
        if (errno == EINTR)
            continue;
        if (errno == ECONNRESET)
            return s_fail(err, errsize, IMPI_CLIENT_ERR_CLOSED, "server %s reset the connection"
                          " while this client waited for %s", self->server, what);
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return s_fail(err, errsize, IMPI_CLIENT_ERR_IO, "receiving %s: %s", what,
                          strerror(errno));
        int rc = s_wait(self->fd, POLLIN, deadline);
        if (rc == 0)
            return s_fail(err, errsize, IMPI_CLIENT_ERR_TIMEOUT, "no answer from server %s "
                          "within %d ms while waiting for %s (%zu of %zu bytes received)",
                          self->server, self->timeout_ms, what, have, n);
        if (rc < 0)
            return s_fail(err, errsize, IMPI_CLIENT_ERR_IO, "waiting for %s: %s", what,
                          strerror(errno));
    }
    return IMPI_CLIENT_OK;
}

/*  Reads one command: the header (decoded against max_payload), checked against the
 *  commands allowed here (bit set of want[]), then its payload into a buffer grown as the
 *  bytes arrive.  *payload is malloc'd (NULL for an empty payload). */
static int s_recv_cmd(impi_client_t *self, const int32_t *want, int nwant, uint64_t max_payload,
                      int64_t deadline, const char *what, impi_cmd_t *cmd, uint8_t **payload,
                      char *err, size_t errsize)
{
    *payload = NULL;
    uint8_t hdr[IMPI_CMD_HDR_SIZE];
    int rc = s_recv_exact(self, hdr, sizeof hdr, deadline, what, err, errsize);
    if (rc)
        return rc;
    int drc = impi_cmd_decode(hdr, max_payload, cmd);
    if (drc == IMPI_ERR_COMMAND)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_PROTOCOL, "while waiting for %s the server "
                      "sent an unknown command 0x%08" PRIx32, what, (uint32_t)cmd->cmd);
    if (drc != IMPI_OK)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_PROTOCOL, "while waiting for %s the server "
                      "sent %s with a length of %" PRIu32 " bytes (%s; at most %" PRIu64 ")",
                      what, impi_cmd_name(cmd->cmd), cmd->len, impi_strerror(drc), max_payload);
    bool expected = false;
    for (int i = 0; i < nwant; i++)
        expected |= cmd->cmd == want[i];
    if (!expected)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_PROTOCOL, "while waiting for %s the server "
                      "sent %s (len %" PRIu32 ")", what, impi_cmd_name(cmd->cmd), cmd->len);
    if (cmd->len == 0)
        goto done;
    size_t cap = cmd->len < 65536 ? cmd->len : 65536, have = 0;
    uint8_t *buf = malloc(cap);
    while (buf && have < cmd->len) {
        if (have == cap) {
            cap = cap * 2 < cmd->len ? cap * 2 : cmd->len;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        rc = s_recv_exact(self, buf + have, cap - have, deadline, what, err, errsize);
        if (rc) {
            free(buf);
            return rc;
        }
        have = cap;
    }
    if (!buf)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_IO, "out of memory for a %" PRIu32
                      "-byte %s", cmd->len, impi_cmd_name(cmd->cmd));
    *payload = buf;
done:
    if (self->trace) {
        if (cmd->cmd == IMPI_CMD_COLL && cmd->len >= 8)
            fprintf(self->trace, "<- COLL len=%" PRIu32 " %s mask=0x%" PRIx32 "\n", cmd->len,
                    impi_label_name((int32_t)gimpi_be_get32(*payload)), gimpi_be_get32(*payload + 4));
        else
            impi_cmd_print(self->trace, "<- ", cmd, *payload, cmd->len);
    }
    return IMPI_CLIENT_OK;
}

/*  Sends one command: header then payload. */
static int s_send_cmd(impi_client_t *self, int32_t code, const uint8_t *payload, size_t len,
                      const char *what, char *err, size_t errsize)
{
    uint8_t hdr[IMPI_CMD_HDR_SIZE];
    impi_cmd_encode(hdr, code, (uint32_t)len);
    if (self->trace) {
        impi_cmd_t cmd = { code, (uint32_t)len };
        impi_cmd_print(self->trace, "-> ", &cmd, payload, len);
    }
    int rc = s_send_all(self, hdr, sizeof hdr, what, err, errsize);
    if (rc == 0 && len)
        rc = s_send_all(self, payload, len, what, err, errsize);
    return rc;
}

/*  Marks the client failed and closes the connection; returns rc. */
static int s_failed(impi_client_t *self, int rc)
{
    if (rc != IMPI_CLIENT_OK) {
        if (self->fd >= 0)
            close(self->fd);
        self->fd = -1;
        self->state = ST_FAILED;
    }
    return rc;
}

/* ------------------------------------------------------------------ life cycle */

/*  A client for HOST:PORT with a deadline. */
impi_client_t *impi_client_new(const char *server, int timeout_ms)
{
    if (!server)
        return NULL;
    impi_client_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->server = strdup(server);
    if (!self->server) {
        free(self);
        return NULL;
    }
    if (timeout_ms <= 0) {
        timeout_ms = IMPI_CLIENT_DEFAULT_TIMEOUT_MS;
        const char *env = gimpi_env("GIMPI_STARTUP_TIMEOUT");
        if (env && *env) {
            char *end;
            double s = strtod(env, &end);
            if (*end == '\0' && s > 0 && s < 86400.0 * 365)
                timeout_ms = (int)(s * 1000) > 0 ? (int)(s * 1000) : 1;
        }
    }
    self->timeout_ms = timeout_ms;
    self->fd = -1;
    self->rank = -1;
    self->nclients = -1;
    self->state = ST_NEW;
    return self;
}

/*  Closes without FINI and frees. */
void impi_client_destroy(impi_client_t **self_p)
{
    assert(self_p);
    impi_client_t *self = *self_p;
    if (!self)
        return;
    if (self->fd >= 0)
        close(self->fd);
    impi_tables_destroy(&self->tables);
    free(self->server);
    free(self);
    *self_p = NULL;
}

/*  Overrides the environment's AUTH mask and key. */
void impi_client_set_auth(impi_client_t *self, uint32_t mask, uint64_t key)
{
    assert(self);
    self->auth_set = true;
    self->auth_mask = mask;
    self->key = key;
}

/*  Commands sent and received go to trace. */
void impi_client_set_trace(impi_client_t *self, FILE *trace)
{
    assert(self);
    self->trace = trace;
}

/*  IMPI_AUTH_NONE / IMPI_AUTH_KEY from the environment. */
int impi_client_auth_from_env(uint32_t *mask, uint64_t *key, char *err, size_t errsize)
{
    *mask = 0;
    *key = 0;
    if (gimpi_env("IMPI_AUTH_NONE"))
        *mask |= 1u << IMPI_AUTH_NONE;
    const char *k = gimpi_env("IMPI_AUTH_KEY");
    if (k) {
        if (impi_auth_key_parse(k, key) < 0)
            return s_fail(err, errsize, IMPI_CLIENT_ERR_AUTH, "IMPI_AUTH_KEY=\"%s\" is not a "
                          "decimal 64-bit integer (signed or unsigned)", k);
        *mask |= 1u << IMPI_AUTH_KEY;
    }
    if (!*mask) {
        /* neither: GIMPI, a fresh proof of the user's gimpi key (checked here, so that a
           client without one never bothers the server) */
        gimpi_key_t gk;
        char why[GIMPI_KEY_ERRLEN];
        if (gimpi_key_default(&gk, NULL, 0, why, sizeof why) < 0)
            return s_fail(err, errsize, IMPI_CLIENT_ERR_AUTH, "no IMPI authentication key: "
                          "%s (or set IMPI_AUTH_KEY=<decimal key>, or IMPI_AUTH_NONE)", why);
        gimpi_key_wipe(&gk, sizeof gk);
        *mask = 1u << IMPI_AUTH_GIMPI | 1u << IMPI_AUTH_GIMPI_JOB;
    }
    return IMPI_CLIENT_OK;
}

/* ------------------------------------------------------------------ connect */

/*  Splits "HOST:PORT" / "[V6]:PORT" and connects within the deadline. */
static int s_connect(impi_client_t *self, char *err, size_t errsize)
{
    char host[256];
    const char *colon = strrchr(self->server, ':');
    if (!colon || colon == self->server || !colon[1])
        return s_fail(err, errsize, IMPI_CLIENT_ERR_CONNECT, "server address \"%s\" is not "
                      "HOST:PORT", self->server);
    const char *h = self->server;
    size_t hlen = (size_t)(colon - h);
    if (h[0] == '[' && hlen >= 2 && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port < 1 || port > 65535 || hlen == 0 || hlen >= sizeof host)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_CONNECT, "server address \"%s\" is not "
                      "HOST:PORT with a port 1..65535", self->server);
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host, colon + 1, &hints, &res);
    if (gai != 0)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_CONNECT, "server address \"%s\": %s",
                      self->server, gai_strerror(gai));
    int64_t deadline = gimpi_now_ms() + self->timeout_ms;
    int last = 0;
    bool timed_out = false;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        ai->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (rc < 0 && errno == EINPROGRESS) {
            int w = s_wait(fd, POLLOUT, deadline);
            if (w == 1) {
                int soerr = 0;
                socklen_t sl = sizeof soerr;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
                rc = soerr ? -1 : 0;
                errno = soerr;
            } else {
                timed_out = w == 0;
                rc = -1;
                errno = w == 0 ? ETIMEDOUT : errno;
            }
        }
        if (rc == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            self->fd = fd;
            freeaddrinfo(res);
            return IMPI_CLIENT_OK;
        }
        last = errno;
        close(fd);
    }
    freeaddrinfo(res);
    return s_fail(err, errsize, timed_out ? IMPI_CLIENT_ERR_TIMEOUT : IMPI_CLIENT_ERR_CONNECT,
                  "cannot connect to server %s: %s", self->server, strerror(last));
}

/* ------------------------------------------------------------------ AUTH and IMPI */

/*  GIMPI: reads the server's challenge and answers with its HMAC under the user's key;
 *  GIMPI_JOB (job set): then reads the job's secret, sealed under that key. */
static int s_prove(impi_client_t *self, bool job, char *err, size_t errsize)
{
    uint8_t nonce[IMPI_AUTH_NONCE_SIZE], mac[IMPI_AUTH_PROOF_SIZE];
    int rc = s_recv_exact(self, nonce, sizeof nonce, gimpi_now_ms() + self->timeout_ms,
                          "the AUTH challenge", err, errsize);
    if (rc)
        return rc;
    gimpi_key_t gk;
    char why[GIMPI_KEY_ERRLEN];
    if (gimpi_key_default(&gk, NULL, 0, why, sizeof why) < 0)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_AUTH, "no key to answer the server's "
                      "challenge: %s", why);
    gimpi_key_mac(&gk, IMPI_AUTH_PROOF_CONTEXT, nonce, sizeof nonce, mac);
    if (self->trace)
        fprintf(self->trace, "-> AUTH proof (32 raw bytes)\n");
    rc = s_send_all(self, mac, sizeof mac, "the AUTH proof", err, errsize);
    gimpi_key_wipe(mac, sizeof mac);
    uint8_t sealed[IMPI_AUTH_JOB_SEALED_SIZE];
    if (!rc && job)
        rc = s_recv_exact(self, sealed, sizeof sealed, gimpi_now_ms() + self->timeout_ms,
                          "the job's secret", err, errsize);
    if (rc == IMPI_CLIENT_ERR_CLOSED)
        rc = s_fail(err, errsize, IMPI_CLIENT_ERR_CLOSED, "server %s closed the connection "
                    "after our proof of the key (not the same key file: compare gimpi-stat "
                    "--fingerprint here and on the server's host)", self->server);
    else if (!rc && job) {
        if (gimpi_key_open(&gk, IMPI_AUTH_JOB_CONTEXT, sealed, sizeof sealed, self->secret) < 0)
            rc = s_fail(err, errsize, IMPI_CLIENT_ERR_AUTH, "the job's secret from server %s "
                        "does not open under our key", self->server);
        else
            self->have_secret = true;
        if (self->trace)
            fprintf(self->trace, "<- the job's secret (%d sealed bytes)\n", (int)sizeof sealed);
    }
    gimpi_key_wipe(&gk, sizeof gk);
    return rc;
}

/*  The job's secret (impi_client.h). */
int impi_client_job_secret(const impi_client_t *self, uint8_t out[IMPI_AUTH_JOB_SECRET_SIZE])
{
    assert(self && out);
    if (!self->have_secret)
        return -1;
    memcpy(out, self->secret, IMPI_AUTH_JOB_SECRET_SIZE);
    return 0;
}

/*  AUTH: mask, the raw reply, the raw key if KEY was chosen, the proof if GIMPI was. */
static int s_auth(impi_client_t *self, uint32_t mask, uint64_t key, char *err, size_t errsize)
{
    uint8_t p[4];
    gimpi_be_put32(p, mask);
    int rc = s_send_cmd(self, IMPI_CMD_AUTH, p, 4, "AUTH", err, errsize);
    if (rc)
        return rc;
    uint8_t reply[IMPI_AUTH_REPLY_SIZE];
    rc = s_recv_exact(self, reply, sizeof reply, gimpi_now_ms() + self->timeout_ms,
                      "the AUTH reply", err, errsize);
    if (rc == IMPI_CLIENT_ERR_CLOSED)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_CLOSED, "server %s closed the connection "
                      "instead of answering AUTH (no authentication method in common with mask "
                      "0x%" PRIx32 "?)", self->server, mask);
    if (rc)
        return rc;
    int32_t which, len;
    if (impi_auth_reply_decode(reply, &which, &len) != IMPI_OK)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_AUTH, "server chose authentication method "
                      "%" PRId32 ", which is none of NONE (0), KEY (1), GIMPI (16) and GIMPI_JOB (17)",
                      which);
    if (self->trace)
        fprintf(self->trace, "<- AUTH reply method=%" PRId32 " len=%" PRId32 "\n", which, len);
    if (!(mask & (1u << which)))
        return s_fail(err, errsize, IMPI_CLIENT_ERR_AUTH, "server chose authentication method "
                      "%s, which this client did not offer (mask 0x%" PRIx32 ")",
                      which == IMPI_AUTH_KEY ? "KEY" : which == IMPI_AUTH_NONE ? "NONE"
                      : which == IMPI_AUTH_GIMPI ? "GIMPI" : "GIMPI_JOB",
                      mask);
    if (which == IMPI_AUTH_GIMPI || which == IMPI_AUTH_GIMPI_JOB)
        return s_prove(self, which == IMPI_AUTH_GIMPI_JOB, err, errsize);
    if (which == IMPI_AUTH_KEY) {
        uint8_t k[IMPI_AUTH_KEY_SIZE];
        gimpi_be_put64(k, key);
        if (self->trace)
            fprintf(self->trace, "-> AUTH key (8 raw bytes)\n");
        rc = s_send_all(self, k, sizeof k, "the AUTH key", err, errsize);
    }
    return rc;
}

/*  Connect, AUTH, IMPI: learn nclients. */
int impi_client_join(impi_client_t *self, int rank, char *err, size_t errsize)
{
    assert(self);
    if (self->state != ST_NEW)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_USAGE, "impi_client_join: already joined "
                      "or failed");
    if (rank < 0 || rank >= IMPI_MAX_CLIENTS)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_USAGE, "client rank %d out of range 0..%d",
                      rank, IMPI_MAX_CLIENTS - 1);
    /* the AUTH choice is settled before connecting: a client without a method never
     * bothers the server */
    uint32_t mask = self->auth_mask;
    uint64_t key = self->key;
    if (!self->auth_set) {
        int rc = impi_client_auth_from_env(&mask, &key, err, errsize);
        if (rc)
            return s_failed(self, rc);
    }
    if (!(mask & ((1u << IMPI_AUTH_NONE) | (1u << IMPI_AUTH_KEY) | (1u << IMPI_AUTH_GIMPI)
                  | (1u << IMPI_AUTH_GIMPI_JOB))))
        return s_failed(self, s_fail(err, errsize, IMPI_CLIENT_ERR_AUTH, "authentication mask "
                                     "0x%" PRIx32 " enables none of NONE (0x1), KEY (0x2), "
                                     "GIMPI (0x10000) and GIMPI_JOB (0x20000)", mask));
    int rc = s_connect(self, err, errsize);
    if (rc)
        return s_failed(self, rc);
    rc = s_auth(self, mask, key, err, errsize);
    if (rc)
        return s_failed(self, rc);
    uint8_t p[4];
    gimpi_be_put32(p, (uint32_t)rank);
    impi_cmd_t cmd;
    uint8_t *payload = NULL;
    static const int32_t want[] = { IMPI_CMD_IMPI };
    rc = s_send_cmd(self, IMPI_CMD_IMPI, p, 4, "IMPI", err, errsize);
    if (!rc)
        rc = s_recv_cmd(self, want, 1, 4, gimpi_now_ms() + self->timeout_ms,
                        "the IMPI reply (all clients joined)", &cmd, &payload, err, errsize);
    if (rc == IMPI_CLIENT_ERR_CLOSED)   /* while sending IMPI or waiting for its reply */
        rc = s_fail(err, errsize, IMPI_CLIENT_ERR_CLOSED, "server %s closed the connection "
                    "instead of answering IMPI (wrong key%s, rank %d taken or out of range, or "
                    "another client failed)", self->server,
                    mask & (1u << IMPI_AUTH_GIMPI) ? " file (compare gimpi-stat --fingerprint "
                    "here and on the server's host)" : "", rank);
    if (rc)
        return s_failed(self, rc);
    int32_t n = (int32_t)gimpi_be_get32(payload);
    free(payload);
    if (n < 1 || n > IMPI_MAX_CLIENTS)
        return s_failed(self, s_fail(err, errsize, IMPI_CLIENT_ERR_PROTOCOL, "server announced "
                                     "%" PRId32 " clients; 1..%d allowed", n, IMPI_MAX_CLIENTS));
    if (rank >= n)
        return s_failed(self, s_fail(err, errsize, IMPI_CLIENT_ERR_PROTOCOL, "server announced "
                                     "%" PRId32 " clients but this client has rank %d", n, rank));
    self->rank = rank;
    self->nclients = n;
    self->state = ST_JOINED;
    return IMPI_CLIENT_OK;
}

/* ------------------------------------------------------------------ COLL and DONE */

/*  Reads replies until the one for `label` (0: until DONE), skipping unknown labels. */
static int s_await(impi_client_t *self, int32_t label, char *err, size_t errsize)
{
    char what[96];
    if (label)
        snprintf(what, sizeof what, "the COLL reply for %s", impi_label_name(label));
    else
        snprintf(what, sizeof what, "the server's DONE");
    int64_t deadline = gimpi_now_ms() + self->timeout_ms;
    uint64_t max = (uint64_t)IMPI_MAX_PAYLOAD * (uint64_t)self->nclients + 8;
    static const int32_t want[] = { IMPI_CMD_COLL, IMPI_CMD_DONE };
    for (;;) {
        impi_cmd_t cmd;
        uint8_t *payload;
        int rc = s_recv_cmd(self, want, label ? 1 : 2, max, deadline, what, &cmd, &payload,
                            err, errsize);
        if (rc)
            return rc;
        if (cmd.cmd == IMPI_CMD_DONE) {
            free(payload);
            return IMPI_CLIENT_OK;
        }
        impi_coll_reply_t r;
        int drc = impi_coll_reply_decode(payload, cmd.len, &r);
        if (drc != IMPI_OK) {
            free(payload);
            return s_fail(err, errsize, IMPI_CLIENT_ERR_PROTOCOL, "while waiting for %s the "
                          "server sent a malformed COLL reply of %" PRIu32 " bytes (%s)", what,
                          cmd.len, impi_strerror(drc));
        }
        if (label && r.label == label) {
            char msg[400];
            rc = impi_tables_add_reply(self->tables, payload, cmd.len, msg, sizeof msg);
            free(payload);
            if (rc < 0)
                return s_fail(err, errsize, IMPI_CLIENT_ERR_TABLES, "%s", msg);
            return IMPI_CLIENT_OK;
        }
        free(payload);
        if (impi_label_info(r.label))
            return s_fail(err, errsize, IMPI_CLIENT_ERR_PROTOCOL, "while waiting for %s the "
                          "server sent a reply for %s", what, impi_label_name(r.label));
        if (self->trace)
            fprintf(self->trace, "   (skipping the reply for unknown label 0x%04" PRIx32 ")\n",
                    (uint32_t)r.label);
    }
}

/*  The 14 labels lock-step, DONE, the server's DONE, the finished tables. */
int impi_client_exchange(impi_client_t *self, const impi_desc_t *desc, char *err,
                         size_t errsize)
{
    assert(self);
    assert(desc);
    if (self->state != ST_JOINED)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_USAGE, "impi_client_exchange: the client "
                      "has not joined, or already exchanged, or failed");
    if (desc->rank != self->rank)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_USAGE, "description is for client %d but "
                      "this client joined as %d", desc->rank, self->rank);
    char msg[300];
    if (impi_desc_check(desc, msg, sizeof msg) < 0)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_USAGE, "client description: %s", msg);
    self->tables = impi_tables_new(self->nclients, self->rank);
    if (!self->tables)
        return s_failed(self, s_fail(err, errsize, IMPI_CLIENT_ERR_IO, "out of memory"));
    for (int i = 0; i < IMPI_LABEL_COUNT; i++) {
        const impi_label_info_t *info = impi_label_at(i);
        size_t len;
        uint8_t *payload = impi_desc_payload(desc, info->value, &len);
        if (!payload)
            return s_failed(self, s_fail(err, errsize, IMPI_CLIENT_ERR_IO, "cannot build %s",
                                         info->name));
        int rc = s_send_cmd(self, IMPI_CMD_COLL, payload, len, info->name, err, errsize);
        free(payload);
        if (rc == 0)
            rc = s_await(self, info->value, err, errsize);
        if (rc)
            return s_failed(self, rc);
    }
    int rc = s_send_cmd(self, IMPI_CMD_DONE, NULL, 0, "DONE", err, errsize);
    if (rc == 0)
        rc = s_await(self, 0, err, errsize);
    if (rc)
        return s_failed(self, rc);
    char tmsg[400];
    if (impi_tables_finish(self->tables, tmsg, sizeof tmsg) < 0)
        return s_failed(self, s_fail(err, errsize, IMPI_CLIENT_ERR_TABLES, "%s", tmsg));
    self->state = ST_DONE;
    return IMPI_CLIENT_OK;
}

/*  Join then exchange. */
int impi_client_start(impi_client_t *self, const impi_desc_t *desc, char *err, size_t errsize)
{
    assert(self);
    assert(desc);
    char msg[300];
    if (impi_desc_check(desc, msg, sizeof msg) < 0)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_USAGE, "client description: %s", msg);
    int rc = impi_client_join(self, desc->rank, err, errsize);
    if (rc == 0)
        rc = impi_client_exchange(self, desc, err, errsize);
    return rc;
}

/* ------------------------------------------------------------------ accessors, FINI */

/*  nclients after join. */
int impi_client_nclients(const impi_client_t *self)
{
    assert(self);
    return self->nclients;
}

/*  The finished tables, or NULL. */
const impi_tables_t *impi_client_tables(const impi_client_t *self)
{
    assert(self);
    return self->state == ST_DONE || self->state == ST_CLOSED ? self->tables : NULL;
}

/*  Hands the finished tables to the caller. */
impi_tables_t *impi_client_take_tables(impi_client_t *self)
{
    assert(self);
    if (self->state != ST_DONE && self->state != ST_CLOSED)
        return NULL;
    impi_tables_t *t = self->tables;
    self->tables = NULL;
    return t;
}

/*  The server socket, or -1. */
int impi_client_fd(const impi_client_t *self)
{
    assert(self);
    return self->fd;
}

/*  FINI, then close. */
int impi_client_fini(impi_client_t *self, char *err, size_t errsize)
{
    assert(self);
    if (self->fd < 0)
        return s_fail(err, errsize, IMPI_CLIENT_ERR_USAGE, "impi_client_fini: not connected");
    int rc = s_send_cmd(self, IMPI_CMD_FINI, NULL, 0, "FINI", err, errsize);
    close(self->fd);
    self->fd = -1;
    self->state = rc ? ST_FAILED : ST_CLOSED;
    return rc;
}
