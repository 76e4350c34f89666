/*  impi_server.c — the IMPI startup server (see impi_server.h) on a gimpi_loop: the
 *  object, its listening socket and the bounds on connections in their handshake.  The
 *  rest is in impi_server_cmd.c (a connection's commands), impi_server_job.c (the job's
 *  progress) and impi_server_out.c (the log and the replies); impi_server_internal.h has
 *  the state they share.
 *
 *  Nothing here blocks or grows at a stranger's will.  A connection that does not
 *  complete its handshake (AUTH, KEY, IMPI) in time is closed by a loop timer; at most
 *  max_pending connections are in their handshake at once, and a new one pushes out the
 *  oldest of those that got least far, so idle connections cannot keep real clients
 *  away.  Accepts are taken in small batches so that the connections already accepted
 *  are read between them.
 */
#include "server/impi_server_internal.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    S_ACCEPT_PAUSE_MS = 200,    /* after EMFILE and the like */
    S_ACCEPT_PER_ROUND = 16,    /* accepts per loop round, so that the connections already
                                   accepted are read (and move on) between bursts */
};

/* ------------------------------------------------------------------ connections */

/*  Handshake timeout: closes a connection that did not complete AUTH and IMPI in time. */
static void s_join_timeout(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop;
    (void)id;
    srv_conn_t *conn = arg;
    conn->timer = 0;
    char reason[96];
    snprintf(reason, sizeof reason, "no AUTH and IMPI within %d ms (handshake timeout)",
             conn->server->join_timeout_ms);
    srv_drop(conn, reason);
}

/*  How far a connection in its handshake got: 0 nothing received yet, 1 AUTH begun or
 *  done (waiting for the key or the proof), 2 authenticated (waiting for IMPI). */
static int s_handshake_tier(const srv_conn_t *c)
{
    if (c->state == C_JOIN)
        return 2;
    return c->state == C_KEY || c->state == C_PROOF || c->in_len > 0 ? 1 : 0;
}

/*  Closes a connection still in its handshake to make room for a new one: the oldest of
 *  those that got least far.  Idle connections thus go first, and with KEY a client that
 *  proved the key is never pushed out by strangers, who cannot get that far.  The list
 *  is kept newest first, so the last one of a tier is its oldest. */
static void s_evict_oldest(impi_server_t *self)
{
    srv_conn_t *oldest = NULL;
    int tier = 3;
    for (srv_conn_t *c = self->conns; c; c = c->next) {
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
    srv_drop(oldest, reason);
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
                srv_log_limited(self, "accept: %s; pausing new connections for %d ms",
                                strerror(errno), S_ACCEPT_PAUSE_MS);
                gimpi_loop_fd_set(loop, fd, 0);
                if (!self->accept_timer)
                    self->accept_timer = gimpi_loop_timer_add(loop, S_ACCEPT_PAUSE_MS, 0,
                                                              s_resume_accept, self);
            } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                       errno != ECONNABORTED) {
                srv_log_limited(self, "accept: %s", strerror(errno));
            }
            return;
        }
        char peer[48], ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
        snprintf(peer, sizeof peer, "%s:%u", ip, ntohs(sa.sin_port));
        if (self->result >= 0) {        /* (after the job: an owner's loop may run on) */
            close(cfd);
            continue;
        }
        /* after the start too: a caller that proves the key and claims a rank that has
           joined stops the job (impi_server_cmd.c), so that a job whose rank another
           holder of the key took fails at once instead of hanging in the dance */
        if (self->npending >= self->max_pending)
            s_evict_oldest(self);
        srv_conn_t *conn = calloc(1, sizeof *conn);
        if (!conn
            || gimpi_loop_fd_add(self->loop, cfd, GIMPI_LOOP_READ, srv_conn_event, conn) < 0) {
            srv_log_limited(self, "out of memory accepting %s", peer);
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
            srv_log(self, "connection %d from %s", conn->id, peer);
    }
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
    if (auth_mask == 0
        || (auth_mask & ~(IMPI_SERVER_AUTH_NONE | IMPI_SERVER_AUTH_KEY | IMPI_SERVER_AUTH_GIMPI))) {
        fprintf(log, "impi-server: authentication mask 0x%" PRIx32 " invalid (need none, key "
                "and/or gimpi)\n", auth_mask);
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
    char why[GIMPI_KEY_ERRLEN];
    if ((auth_mask & IMPI_SERVER_AUTH_GIMPI)
        && gimpi_key_default(&self->master, NULL, 0, why, sizeof why) < 0) {
        fprintf(log, "impi-server: no key for authentication GIMPI: %s (or export "
                "IMPI_AUTH_KEY=<decimal 64-bit key> for the server and every client)\n", why);
        free(self);
        return NULL;
    }
    gimpi_key_random_bytes(self->job_secret, sizeof self->job_secret);
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
        srv_conn_free(self->conns);
    while (self->labels) {
        srv_label_t *l = self->labels;
        self->labels = l->next;
        srv_label_free(l);
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
    gimpi_key_wipe(&self->master, sizeof self->master);
    gimpi_key_wipe(self->job_secret, sizeof self->job_secret);
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
        srv_log(self, "impi_server_run: the server runs on its caller's loop");
        return -1;
    }
    self->running = true;
    if (gimpi_loop_run(self->loop) < 0) {
        srv_log(self, "event loop: %s", strerror(errno));
        return -1;
    }
    if (self->result < 0) {
        srv_log(self, "event loop stopped before the job ended");
        return -1;
    }
    /* FINI'd clients expect nothing more; give queued bytes one last chance */
    for (srv_conn_t *c = self->conns; c; c = c->next)
        srv_flush(c);
    return self->result;
}
