/*  msg_dynhost.c — dynamic hosts: connections to tasks outside the static tables (spawned
 *  children, tasks of other jobs), set up while the engine runs, beside the static hosts'
 *  meeting of gimpi_host.c.
 *
 *  A caller dials the task's listener (gimpi_host_dial) and introduces itself with a
 *  challenge-response under the job's key (the records' codec is msg_intro.c, the
 *  format in msg_dynhost.h): HELLO, the callee's CHALLENGE, the caller's INTRO with its
 *  MAC, the callee's ANSWER with its own.  The callee, reading introductions from its
 *  listener inside the poll loop, spends nothing on a caller beyond a small pend_t until
 *  the MAC holds: unauthenticated callers are capped (those that sent nothing go first,
 *  then the oldest; fewer from one address) and timed out, and the lines about refused
 *  ones are rate-limited.  A caller whose callee hangs up before answering (flooded)
 *  calls again with a backoff, its messages waiting.  An authenticated caller's tid may be
 *  checked by the verifier (groupd's registry) before it becomes a peer; introduced
 *  connections are capped too.  Both ends then use the connection as an IMPI host
 *  connection with the smaller of the two flow-control parameters.  Unknown tids are
 *  resolved to a contact through the resolver callback; two tasks calling each other at
 *  once keep the higher tid's call.  Every set-up is bounded by connect_ms.  See
 *  doc/data-plane.md, "Dynamic hosts".
 */
#include "net/msg_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sodium.h>
#include <sys/socket.h>

/* ------------------------------------------------------------------ refusals */

/*  Writes the summary of the refused callers not reported in the last second (force:
 *  whatever second it is, as a context ends). */
static void s_log_flush(gimpi_msg_t *self, int force)
{
    int more = gimpi_ratelog_roll(&self->dyn.log, gimpi_now_us() / 1000, force);
    if (more)
        fprintf(stderr, "gimpi[t%x]: ... %d more incoming connections refused in the last "
                "second\n", (unsigned)msg_mytid(self), more);
}

/*  Writes the summary line of refused callers not reported yet. */
void msg_dyn_log_flush(gimpi_msg_t *self)
{
    s_log_flush(self, 1);
}

/*  Says on stderr why an incoming connection was refused, at most REFUSED_LOG_PER_S lines
 *  a second: the rest are counted into one summary line. */
static void s_refused(gimpi_msg_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void s_refused(gimpi_msg_t *self, const char *fmt, ...)
{
    s_log_flush(self, 0);
    if (!gimpi_ratelog_event(&self->dyn.log, gimpi_now_us() / 1000))
        return;
    char what[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gimpi[t%x]: refused an incoming connection: %s\n",
            (unsigned)msg_mytid(self), what);
}

/*  "from ADDR:PORT" of a connected socket, for the lines about refusals. */
static const char *s_from(int fd, char buf[64])
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char ip[INET6_ADDRSTRLEN] = "?";
    if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0 || ss.ss_family == AF_UNIX)
        snprintf(buf, 64, "from a local socket");
    else if (ss.ss_family == AF_INET) {
        struct sockaddr_in *sa = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof ip);
        snprintf(buf, 64, "from %s:%d", ip, ntohs(sa->sin_port));
    } else {
        struct sockaddr_in6 *sa = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &sa->sin6_addr, ip, sizeof ip);
        snprintf(buf, 64, "from [%s]:%d", ip, ntohs(sa->sin6_port));
    }
    return buf;
}

/*  Sends a whole record on a fresh socket (whose buffer takes it) or fails (-1). */
static int s_send_all(int fd, const uint8_t *rec, size_t len)
{
    ssize_t w = send(fd, rec, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    return w == (ssize_t)len ? 0 : -1;
}

/*  Introduced connections holding a descriptor (open or being dialled). */
static int s_dyn_open(gimpi_msg_t *self)
{
    int n = 0;
    for (int h = self->nstatic_hosts; h < self->nhosts; h++)
        n += self->conns[h].fd >= 0;
    return n;
}

/* ------------------------------------------------------------------ peers */

/*  Makes room for n + 1 elements of size el in *arr (capacity *cap, at most max).
 *  0, or -1 when out of memory or at max. */
static int s_grow(void *arr, int *cap, int n, size_t el, int max)
{
    if (n < *cap)
        return 0;
    int ncap = *cap * 2 + 8;
    if (ncap > max)
        ncap = max;
    void *na = ncap > n ? realloc(*(void **)arr, (size_t)ncap * el) : NULL;
    if (!na)
        return -1;
    *(void **)arr = na;
    *cap = ncap;
    return 0;
}

/*  Adds a dynamic peer with its own (closed) connection.  Returns its index, or -1 when
 *  out of memory.  peers[] and conns[] may move: callers hold no pointers into them. */
static int s_add_peer(gimpi_msg_t *self, int tid)
{
    if (s_grow(&self->peers, &self->cap_procs, self->nprocs, sizeof *self->peers, INT32_MAX)
        || s_grow(&self->conns, &self->cap_hosts, self->nhosts, sizeof *self->conns,
                  INT32_MAX))
        return -1;
    int *procs = malloc(sizeof *procs);
    if (!procs)
        return -1;
    int p = self->nprocs++, h = self->nhosts++;
    self->peers[p] = (peer_t){ .tid = tid, .host = h, .alive_fd = -1 };
    procs[0] = p;
    self->conns[h] = (conn_t){ .fd = -1, .state = C_CLOSED, .procs = procs, .nprocs = 1,
                               .dyn = 1, .kin = 1, .pktlen = self->pktlen, .ackmark = self->ackmark,
                               .hiwater = self->hiwater };
    return p;
}

/* ------------------------------------------------------------------ calling */

/*  Our record (introduction or answer: word = version or status) to tid. */
static void s_record(gimpi_msg_t *self, gimpi_intro_t *r, uint32_t word, int tid)
{
    *r = (gimpi_intro_t){ .word = word, .tid = msg_mytid(self), .target = tid,
                          .pktlen = self->pktlen, .ackmark = self->ackmark,
                          .hiwater = self->hiwater, .proc = self->me,
                          .port = self->dyn.contact_port };
    memcpy(r->addr, self->dyn.contact, 16);
}

/*  1 when an introduction's flow-control parameters are usable. */
static int s_intro_params_ok(const gimpi_intro_t *in)
{
    return in->pktlen >= 16 && in->pktlen <= (1u << 30) && in->ackmark >= 1
        && in->hiwater >= in->ackmark && in->hiwater <= (1u << 20);
}

/*  Makes connection h (fd set) the open connection to its peer, whose introduction or
 *  answer was in: the peer's proc and the agreed (smaller) parameters. */
static int s_bind(gimpi_msg_t *self, int h, const gimpi_intro_t *in)
{
    conn_t *c = &self->conns[h];
    peer_t *peer = &self->peers[c->procs[0]];
    if (!c->stage && !(c->stage = malloc(STAGE_SIZE)))
        return -1;
    peer->id = in->proc;
    c->pktlen = in->pktlen < self->pktlen ? in->pktlen : self->pktlen;
    c->ackmark = in->ackmark < self->ackmark ? in->ackmark : self->ackmark;
    c->hiwater = in->hiwater < self->hiwater ? in->hiwater : self->hiwater;
    if (c->hiwater < c->ackmark)
        c->hiwater = c->ackmark;
    gimpi_host_tune(c->fd);
    c->state = C_OPEN;
    msg_debug_conn(self, h);
    msg_conn_opened(self, h);           /* a failure is the connection's, recorded */
    if (peer->alive_fd >= 0) {          /* from now on the connection tells its death */
        close(peer->alive_fd);
        peer->alive_fd = -1;
    }
    pthread_cond_broadcast(&self->cv);
    return 0;
}

/*  How loudly a dynamic connection that never opened is given up (s_dyn_quiet). */
enum {
    DYN_LOUD = 0,       /* its cause on stderr (unless GIMPI_ENOTASK) */
    DYN_QUIET = 1,      /* the cause only recorded; sends already returned still said lost */
    DYN_ENDED = 2,      /* the peer has ended: its messages dropped in silence too, as PVM */
};

static void s_dyn_vfail(gimpi_msg_t *self, int h, int quiet, int err, const char *fmt,
                        va_list ap) __attribute__((format(printf, 5, 0)));

/*  Gives up a dynamic connection that never opened: its peer is gone with err. */
static void s_dyn_fail(gimpi_msg_t *self, int h, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void s_dyn_fail(gimpi_msg_t *self, int h, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s_dyn_vfail(self, h, DYN_LOUD, err, fmt, ap);
    va_end(ap);
}

/*  s_dyn_fail with a loudness (DYN_*). */
static void s_dyn_quiet(gimpi_msg_t *self, int h, int quiet, int err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void s_dyn_quiet(gimpi_msg_t *self, int h, int quiet, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s_dyn_vfail(self, h, quiet, err, fmt, ap);
    va_end(ap);
}

/*  quiet, unless GIMPI_DEBUG asks for every failure's line. */
static int s_unless_debug(const gimpi_msg_t *self, int quiet)
{
    return self->debug ? DYN_LOUD : quiet;
}

/*  The common part of s_dyn_fail and s_dyn_quiet. */
static void s_dyn_vfail(gimpi_msg_t *self, int h, int quiet, int err, const char *fmt,
                        va_list ap)
{
    char what[200];
    vsnprintf(what, sizeof what, fmt, ap);
    peer_t *peer = &self->peers[self->conns[h].procs[0]];
    int lost = 0;                       /* sends whose callers have gone on: said here */
    for (gimpi_msg_req_t *r = peer->pending_sends.head; r; r = QUEUE_NEXT(r))
        lost += r->detached;
    snprintf(self->errmsg, sizeof self->errmsg, "t%x: %s", (unsigned)peer->tid, what);
    char tail[64] = "";
    if (lost)
        snprintf(tail, sizeof tail, ": %d message(s) sent to it are lost", lost);
    if ((lost && quiet < DYN_ENDED) || (err != GIMPI_ENOTASK && quiet == DYN_LOUD))
        fprintf(stderr, "gimpi[t%x]: %s%s\n", (unsigned)(self->tidbase + self->rank + 1),
                self->errmsg, tail);
    if (peer->alive_fd >= 0) {
        close(peer->alive_fd);
        peer->alive_fd = -1;
    }
    msg_conn_close(self, h);
    msg_host_gone(self, h, err, 0);
}

/*  Calls (again) the contact of connection h, being dialled. */
static void s_dial_open(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    char err[160];
    int inprogress = 0;
    if (!self->dyn.have_key) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "cannot introduce ourselves: this task has no key");
        return;
    }
    int open = s_dyn_open(self);
    if (open >= self->dyn.max_conns) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "not called: %d introduced connections are open, "
                   "the most allowed (GIMPI_MAX_DYN_CONNS raises it)", open);
        return;
    }
    int fd = gimpi_host_dial(c->dial_addr, c->dial_port, NULL, &inprogress, err, sizeof err);
    if (fd < 0) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "%s", err);
        return;
    }
    c->fd = fd;
    c->dial = inprogress ? D_CONNECT : D_HELLO;
    gimpi_intro_hello(c->iout);
    c->ioff = 0;
    if (self->prog.thread_polling || self->prog.app_polling)
        msg_kick(self);                   /* pollers must watch the new socket */
}

/*  Starts calling peer p at addr:port (its connection is C_CLOSED or D_RESOLVE): every
 *  call again included, within connect_ms. */
static void s_dial_start(gimpi_msg_t *self, int p, const uint8_t addr[16], int port)
{
    conn_t *c = &self->conns[self->peers[p].host];
    c->state = C_DIAL;
    memcpy(c->dial_addr, addr, 16);
    c->dial_port = port;
    c->backoff_ms = DIAL_BACKOFF_MIN_MS;
    c->dial_deadline = gimpi_now_us() + (int64_t)self->dyn.connect_ms * 1000;
    s_dial_open(self, self->peers[p].host);
}

/*  The callee of dialled connection h hung up (or reset) before its answer: a task
 *  flooded with callers drops some, so we call again after a backoff (doubling, with
 *  jitter) while connect_ms lasts; the messages for it wait meanwhile.  Past that, the
 *  peer fails with the cause. */
static void s_dial_retry(gimpi_msg_t *self, int h, const char *what, const char *why)
{
    conn_t *c = &self->conns[h];
    int64_t at = gimpi_now_us() + (int64_t)c->backoff_ms * 1000
                 + (int64_t)randombytes_uniform((uint32_t)c->backoff_ms + 1) * 500;
    if (at >= c->dial_deadline || self->dyn.finishing) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "%s, every call for %d ms (the task is flooded "
                   "with callers, or not a gimpi task): %s", what, self->dyn.connect_ms, why);
        return;
    }
    if (self->debug)
        fprintf(stderr, "gimpi[t%x]: t%x %s: %s; calling again in %d ms\n",
                (unsigned)msg_mytid(self), (unsigned)self->peers[c->procs[0]].tid, what, why,
                c->backoff_ms);
    close(c->fd);
    c->fd = -1;
    c->ioff = 0;
    c->dial = D_BACKOFF;
    c->retry_at = at;
    c->backoff_ms = c->backoff_ms * 2 > DIAL_BACKOFF_MAX_MS ? DIAL_BACKOFF_MAX_MS
                                                             : c->backoff_ms * 2;
}

/*  Writes the rest of the HELLO or INTRO of dialled connection h: 1 when all is out, 0
 *  when the socket is full, -1 when the connection failed. */
static int s_dial_write(gimpi_msg_t *self, int h, size_t len)
{
    conn_t *c = &self->conns[h];
    ssize_t w = send(c->fd, c->iout + c->ioff, len - c->ioff, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno != EAGAIN && errno != EINTR) {
        s_dial_retry(self, h, "hung up before our introduction", strerror(errno));
        return -1;
    }
    if (w > 0)
        c->ioff += (size_t)w;
    if (c->ioff < len)
        return 0;
    c->ioff = 0;
    return 1;
}

/*  Reads the rest of the CHALLENGE or ANSWER (exactly: packets may follow an answer at
 *  once) on dialled connection h: 1 when whole, 0 for more, -1 when it failed. */
static int s_dial_read(gimpi_msg_t *self, int h, size_t len)
{
    conn_t *c = &self->conns[h];
    ssize_t got = recv(c->fd, c->ibuf + c->ioff, len - c->ioff, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        s_dial_retry(self, h, c->dial == D_CHALLENGE
                              ? "closed the connection before its challenge"
                              : "closed the connection before answering",
                     got == 0 ? "end of stream" : strerror(errno));
        return -1;
    }
    if (got > 0)
        c->ioff += (size_t)got;
    if (c->ioff < len)
        return 0;
    c->ioff = 0;
    return 1;
}

/*  The CHALLENGE of connection h is in: our INTRO, sealed under its nonce, goes out. */
static int s_on_challenge(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    int64_t st = gimpi_intro_head(c->ibuf);
    if (st != GIMPI_INTRO_OK) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "refused the introduction: %s",
                   st < 0 ? "answered with garbage" : gimpi_intro_strstatus((uint32_t)st));
        return -1;
    }
    gimpi_intro_t me;
    s_record(self, &me, GIMPI_INTRO_VERSION, self->peers[c->procs[0]].tid);
    randombytes_buf(me.nonce, sizeof me.nonce);
    gimpi_intro_encode(c->iout, &me);
    gimpi_intro_seal(&self->dyn.key, c->ibuf + 8, c->iout);
    c->dial = D_INTRO;
    return 0;
}

/*  The ANSWER of connection h is in: checked (its MAC proves the callee holds the key),
 *  then the connection opens, or waits for the callee's own call, or fails. */
static void s_on_answer(gimpi_msg_t *self, int h)
{
    conn_t *c = &self->conns[h];
    int tid = self->peers[c->procs[0]].tid;
    gimpi_intro_t in;
    char fp[9];
    if (gimpi_intro_decode(c->ibuf, &in) < 0) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "answered with garbage");
        return;
    }
    if (in.word == GIMPI_INTRO_BADKEY || in.word == GIMPI_INTRO_BADVERSION) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "refused the introduction: %s%s%s%s",
                   gimpi_intro_strstatus(in.word),
                   in.word == GIMPI_INTRO_BADKEY ? " (this task's key is " : "",
                   in.word == GIMPI_INTRO_BADKEY
                       ? gimpi_key_fingerprint(&self->dyn.key, fp) : "",
                   in.word == GIMPI_INTRO_BADKEY
                       ? "; all tasks need the same key: GIMPI_KEY_FILE or ~/.gimpi/key)" : "");
        return;
    }
    if (!gimpi_intro_answer_sealed(&self->dyn.key, c->iout, c->ibuf)) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "answered without proving that it holds the key "
                   "(the keys differ, or another program has that port)");
        return;
    }
    if (in.tid != tid || in.target != msg_mytid(self)) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "answered with garbage");
        return;
    }
    if (in.word == GIMPI_INTRO_RACE) {  /* its own call to us wins: wait for it */
        close(c->fd);
        c->fd = -1;
        c->dial = D_WAIT;
        return;
    }
    if (in.word != GIMPI_INTRO_OK || !s_intro_params_ok(&in)) {
        /* a task that is leaving is PVM's everyday race (its messages would be dropped):
         * the cause is kept for the call that needs it, printed only under debug */
        s_dyn_quiet(self, h, s_unless_debug(self, in.word == GIMPI_INTRO_LEAVING),
                    GIMPI_ESYSERR, "refused the connection: %s",
                    in.word == GIMPI_INTRO_OK ? "bad parameters"
                                              : gimpi_intro_strstatus(in.word));
        return;
    }
    if (s_bind(self, h, &in) < 0) {
        s_dyn_fail(self, h, GIMPI_ENOMEM, "out of memory");
        return;
    }
    msg_flush(self, h);
}

/*  Connection h being dialled is ready (revents): connect, HELLO, CHALLENGE, INTRO,
 *  ANSWER, each step going on to the next as far as the socket allows. */
static void s_dial_event(gimpi_msg_t *self, int h, short revents)
{
    conn_t *c = &self->conns[h];
    if (c->dial == D_CONNECT) {
        int e = 0;
        socklen_t el = sizeof e;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (e == ECONNRESET || e == ETIMEDOUT || e == ECONNABORTED || e == EAGAIN) {
            s_dial_retry(self, h, "did not take the connection", strerror(e));
            return;
        }
        if (e) {
            /* a task that has ended (a console that spawned us and quit) refuses: PVM
             * prints nothing; the call that needs the peer reports it, debug says it */
            s_dyn_quiet(self, h, s_unless_debug(self, DYN_ENDED), GIMPI_ESYSERR, "connect: %s",
                        strerror(e));
            return;
        }
        if (!(revents & POLLOUT))
            return;
        c->dial = D_HELLO;
    }
    if (c->dial == D_HELLO) {
        if (s_dial_write(self, h, GIMPI_INTRO_HELLO_SIZE) <= 0)
            return;
        c->dial = D_CHALLENGE;
    }
    if (c->dial == D_CHALLENGE) {
        if (s_dial_read(self, h, GIMPI_INTRO_CHALLENGE_SIZE) <= 0 || s_on_challenge(self, h) < 0)
            return;
    }
    if (c->dial == D_INTRO) {
        if (s_dial_write(self, h, GIMPI_INTRO_SIZE) <= 0)
            return;
        c->dial = D_ANSWER;
    }
    if (c->dial == D_ANSWER && s_dial_read(self, h, GIMPI_INTRO_SIZE) > 0)
        s_on_answer(self, h);
}

/* ------------------------------------------------------------------ being called */

static int s_involved(gimpi_msg_t *self, int p);

/*  Drops incoming connection k (closing it); says why (rate-limited) when fmt is not NULL. */
static void s_pend_drop(gimpi_msg_t *self, int k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void s_pend_drop(gimpi_msg_t *self, int k, const char *fmt, ...)
{
    pend_t *pd = &self->dyn.pend[k];
    if (fmt) {
        char what[200], from[64];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        s_refused(self, "%s: %s", pd->fd >= 0 ? s_from(pd->fd, from) : "a caller", what);
    }
    if (pd->phase == P_VERIFY)
        self->dyn.nverify--;
    if (pd->fd >= 0)
        close(pd->fd);
    *pd = self->dyn.pend[--self->dyn.npend];
}

/*  GIMPI_INTRO_DUP, not reported on stderr (the normal end of a lost race). */
#define GIMPI_INTRO_DUP_QUIET (GIMPI_INTRO_DUP | 0x100)

/*  Sends our ANSWER with status st to the INTRO of incoming connection k (sealed, unless
 *  it refuses the key).  0 or -1. */
static int s_answer(gimpi_msg_t *self, int fd, const pend_t *pd, uint32_t st, int tid)
{
    gimpi_intro_t r;
    uint8_t ans[GIMPI_INTRO_SIZE];
    s_record(self, &r, st, tid);
    memcpy(r.nonce, pd->nonce, sizeof r.nonce);
    gimpi_intro_encode(ans, &r);
    if (st != GIMPI_INTRO_BADKEY && self->dyn.have_key)
        gimpi_intro_seal_answer(&self->dyn.key, pd->buf, ans);
    return s_send_all(fd, ans, sizeof ans);
}

/*  Answers introduction k with a refusal and drops it. */
static void s_pend_refuse(gimpi_msg_t *self, int k, const gimpi_intro_t *in, uint32_t why)
{
    s_answer(self, self->dyn.pend[k].fd, &self->dyn.pend[k], why & 0xff, in->tid);
    /* quiet: the normal ends of a race (our own call is the connection), and callers of
     * a task that is leaving (they report the refusal themselves) */
    if (why == GIMPI_INTRO_RACE || why == GIMPI_INTRO_DUP_QUIET || why == GIMPI_INTRO_LEAVING)
        s_pend_drop(self, k, NULL);
    else
        s_pend_drop(self, k, "t%x refused: %s", (unsigned)in->tid, gimpi_intro_strstatus(why));
}

/*  An authenticated (and, with a verifier, verified) introduction k becomes the
 *  connection to its peer, or is refused. */
static void s_pend_admit(gimpi_msg_t *self, int k, const gimpi_intro_t *in)
{
    int p = msg_find_tid(self, in->tid);
    if (p >= 0 && p < self->nstatic) {
        s_pend_refuse(self, k, in, GIMPI_INTRO_DUP);
        return;
    }
    int replaces = 0;                   /* it takes the place of our own call's socket */
    if (p >= 0) {
        conn_t *c = &self->conns[self->peers[p].host];
        if (self->peers[p].gone) {
            s_pend_refuse(self, k, in, GIMPI_INTRO_LEAVING);
            return;
        }
        if (c->state == C_OPEN) {       /* its call lost a race our call already won */
            s_pend_refuse(self, k, in, GIMPI_INTRO_DUP_QUIET);
            return;
        }
        if (c->state == C_DIAL && c->fd >= 0) {     /* both called: the higher tid wins */
            if (in->tid < msg_mytid(self)) {
                s_pend_refuse(self, k, in, GIMPI_INTRO_RACE);
                return;
            }
            replaces = 1;
        }
    }
    if (!replaces && s_dyn_open(self) >= self->dyn.max_conns) {
        s_pend_refuse(self, k, in, GIMPI_INTRO_TOOMANY);
        return;
    }
    if (replaces) {
        conn_t *c = &self->conns[self->peers[p].host];
        close(c->fd);
        c->fd = -1;
    } else if (p < 0 && (p = s_add_peer(self, in->tid)) < 0) {
        s_pend_drop(self, k, "out of memory");
        return;
    }
    int h = self->peers[p].host;
    conn_t *c = &self->conns[h];
    pend_t pd = self->dyn.pend[k];
    c->fd = pd.fd;
    self->dyn.pend[k].fd = -1;
    s_pend_drop(self, k, NULL);
    /* a fresh socket's buffer takes the answer whole */
    if (s_answer(self, c->fd, &pd, GIMPI_INTRO_OK, in->tid) < 0) {
        /* it hung up: a caller that exited meanwhile, said only when we wait for it */
        s_dyn_quiet(self, h, s_unless_debug(self, !s_involved(self, p)), GIMPI_ESYSERR,
                    "could not answer its introduction");
        return;
    }
    if (s_bind(self, h, in) < 0) {
        s_dyn_fail(self, h, GIMPI_ENOMEM, "out of memory");
        return;
    }
    msg_flush(self, h);
}

/*  Authenticated introduction k: accept or refuse it (or wait for our tid, or for the
 *  verifier). */
static void s_pend_decide(gimpi_msg_t *self, int k)
{
    pend_t *pd = &self->dyn.pend[k];
    gimpi_intro_t in;
    gimpi_intro_decode(pd->buf, &in);
    if (in.target != msg_mytid(self)) {
        /* a task learns its tid (gimpi_msg_set_tidbase) just after it starts listening,
           and its contact may be known before: such a caller waits for the tid, or for
           the grace to end, rather than being refused in that moment */
        if (!self->dyn.tid_final && gimpi_now_us() < self->dyn.born_us + TID_GRACE_US)
            return;
        s_pend_refuse(self, k, &in, GIMPI_INTRO_WRONGTID);
        return;
    }
    if (in.tid <= 0 || in.tid == msg_mytid(self) || !s_intro_params_ok(&in)) {
        s_pend_refuse(self, k, &in, GIMPI_INTRO_BADPARAM);
        return;
    }
    if (self->dyn.finishing) {
        s_pend_refuse(self, k, &in, GIMPI_INTRO_LEAVING);
        return;
    }
    if (self->dyn.verify && !pd->verified) {    /* asked later, without the lock */
        pd->phase = P_VERIFY;
        self->dyn.nverify++;
        if (self->prog.thread_polling || self->prog.app_polling)
            msg_kick(self);
        return;
    }
    s_pend_admit(self, k, &in);
}

/*  The HELLO of incoming connection k is in: our CHALLENGE goes out. */
static void s_pend_hello(gimpi_msg_t *self, int k)
{
    pend_t *pd = &self->dyn.pend[k];
    uint8_t ch[GIMPI_INTRO_CHALLENGE_SIZE];
    int64_t version = gimpi_intro_head(pd->buf);
    if (version != GIMPI_INTRO_VERSION) {
        memset(pd->nonce, 0, sizeof pd->nonce);
        gimpi_intro_challenge(ch, GIMPI_INTRO_BADVERSION, pd->nonce);
        s_send_all(pd->fd, ch, sizeof ch);
        s_pend_drop(self, k, "introduction version %lld (this task speaks %d)",
                    (long long)version, GIMPI_INTRO_VERSION);
        return;
    }
    randombytes_buf(pd->nonce, sizeof pd->nonce);
    gimpi_intro_challenge(ch, GIMPI_INTRO_OK, pd->nonce);
    if (s_send_all(pd->fd, ch, sizeof ch) < 0) {     /* it hung up (a lost race): quietly */
        s_pend_drop(self, k, NULL);
        return;
    }
    pd->phase = P_INTRO;
    pd->got = 0;
}

/*  The INTRO of incoming connection k is in: its MAC must hold. */
static void s_pend_intro(gimpi_msg_t *self, int k)
{
    pend_t *pd = &self->dyn.pend[k];
    gimpi_intro_t in;
    if (gimpi_intro_decode(pd->buf, &in) < 0 || in.word != GIMPI_INTRO_VERSION) {
        s_pend_drop(self, k, "a garbled introduction");
        return;
    }
    if (!self->dyn.have_key || !gimpi_intro_sealed(&self->dyn.key, pd->nonce, pd->buf)) {
        s_answer(self, pd->fd, pd, GIMPI_INTRO_BADKEY, in.tid);
        s_pend_drop(self, k, "it claims t%x, but %s", (unsigned)in.tid,
                    self->dyn.have_key ? "its key differs (wrong MAC)" : "this task has no key");
        return;
    }
    pd->phase = P_AUTHED;               /* from now on bound as a set-up, not a stranger */
    pd->deadline = gimpi_now_us() + (int64_t)self->dyn.connect_ms * 1000;
    s_pend_decide(self, k);
}

/*  Incoming connection k is readable: read (exactly) the rest of its HELLO or INTRO. */
static void s_pend_event(gimpi_msg_t *self, int k)
{
    pend_t *pd = &self->dyn.pend[k];
    if (pd->phase >= P_AUTHED) {        /* in, waiting for us: it must stay silent */
        char c;
        ssize_t r = recv(pd->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (r > 0)                      /* (else it would keep the poll awake until then) */
            s_pend_drop(self, k, "bytes after the introduction, before any answer");
        else if (r == 0 || (errno != EAGAIN && errno != EINTR))
            s_pend_drop(self, k, NULL);
        return;
    }
    size_t want = pd->phase == P_HELLO ? GIMPI_INTRO_HELLO_SIZE : GIMPI_INTRO_SIZE;
    ssize_t got = recv(pd->fd, pd->buf + pd->got, want - pd->got, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        if (pd->got)                    /* silent callers (a lost race, a probe): quietly */
            s_pend_drop(self, k, "closed after %zu of %zu bytes of its %s", pd->got, want,
                        pd->phase == P_HELLO ? "hello" : "introduction");
        else
            s_pend_drop(self, k, NULL);
        return;
    }
    if (got < 0)
        return;
    size_t before = pd->got;
    pd->got += (size_t)got;
    if (before < 4 && pd->got >= 4 && gimpi_be_get32(pd->buf) != GIMPI_INTRO_MARKER) {
        s_pend_drop(self, k, "not a gimpi introduction (first word 0x%08x)",
                    (unsigned)gimpi_be_get32(pd->buf));
        return;
    }
    if (pd->got < want)
        return;
    if (pd->phase == P_HELLO)
        s_pend_hello(self, k);
    else
        s_pend_intro(self, k);
}

/*  The address of caller fd, IPv4-mapped (zeros: a local socket). */
static void s_source(int fd, uint8_t src[16])
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    memset(src, 0, 16);
    if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
        return;
    if (ss.ss_family == AF_INET)
        impi_addr16_from_ipv4(src, ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr));
    else if (ss.ss_family == AF_INET6)
        memcpy(src, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
}

/*  The unauthenticated caller to drop for room (among those from src, unless NULL): one
 *  that has sent nothing yet first (a silent connection costs a real caller nothing),
 *  else the oldest.  Callers that proved the key are never chosen. */
static int s_evictee(gimpi_msg_t *self, const uint8_t *src)
{
    int best = -1, best_silent = 0;
    for (int k = 0; k < self->dyn.npend; k++) {
        const pend_t *pd = &self->dyn.pend[k];
        if (pd->phase >= P_AUTHED || (src && memcmp(pd->src, src, 16)))
            continue;
        int silent = pd->phase == P_HELLO && pd->got == 0;
        if (best < 0 || silent > best_silent
            || (silent == best_silent && pd->serial < self->dyn.pend[best].serial)) {
            best = k;
            best_silent = silent;
        }
    }
    return best;
}

/*  Makes room for one more unauthenticated caller from src: at most per_source of them
 *  from one network address, handshake_max in all (s_evictee chooses who goes).  Local
 *  sockets (src zeros) admit only our user's processes (SO_PEERCRED at accept): a
 *  spawner's burst of children, not strangers, so only the total bounds them. */
static void s_make_room(gimpi_msg_t *self, const uint8_t src[16])
{
    static const uint8_t local[16];
    int unauth = 0, mine = 0, net = memcmp(src, local, 16) != 0;
    for (int k = 0; k < self->dyn.npend; k++)
        if (self->dyn.pend[k].phase < P_AUTHED) {
            unauth++;
            mine += !memcmp(self->dyn.pend[k].src, src, 16);
        }
    if (net && mine >= self->dyn.per_source)
        s_pend_drop(self, s_evictee(self, src), "%d callers from its address not introduced "
                    "yet, the most held (GIMPI_HANDSHAKE_PER_SOURCE)", mine);
    else if (unauth >= self->dyn.handshake_max)
        s_pend_drop(self, s_evictee(self, NULL), "%d callers not introduced yet, the most "
                    "held (GIMPI_HANDSHAKE_MAX)", unauth);
}

/*  A listening socket (TCP or local) is readable: takes the waiting callers, reading at
 *  once what each has sent (a real caller's HELLO is usually there: it gets its
 *  challenge and is no longer silent; a caller that already hung up goes). */
static void s_accept(gimpi_msg_t *self, int lfd)
{
    for (int i = 0; i < 16; i++) {
        int fd = gimpi_host_accept(lfd);
        if (fd < 0)
            return;
        uint8_t src[16];
        s_source(fd, src);
        s_make_room(self, src);
        if (s_grow(&self->dyn.pend, &self->dyn.cap_pend, self->dyn.npend,
                   sizeof *self->dyn.pend, 1024)) {
            s_refused(self, "too many introductions under way");
            close(fd);
            continue;
        }
        pend_t *pd = &self->dyn.pend[self->dyn.npend++];
        *pd = (pend_t){ .fd = fd, .phase = P_HELLO, .serial = ++self->dyn.serial,
                        .deadline = gimpi_now_us() + (int64_t)self->dyn.handshake_ms * 1000 };
        memcpy(pd->src, src, 16);
        s_pend_event(self, self->dyn.npend - 1);
    }
}

/* ------------------------------------------------------- deadlines, deaths, resolving */

/*  Gives up dials and introductions past their deadline (unauthenticated callers: the
 *  handshake timeout; authenticated ones: connect_ms), and calls again the callees whose
 *  backoff is over.  Returns the ms until the next call again, -1 when none waits. */
int msg_dyn_deadlines(gimpi_msg_t *self)
{
    int64_t now = gimpi_now_us(), wake = -1;
    s_log_flush(self, 0);
    for (int k = self->dyn.npend - 1; k >= 0; k--)    /* callers waiting for our tid: the */
        if (self->dyn.pend[k].phase == P_AUTHED             /* grace is over (set_tidbase */
            && now >= self->dyn.born_us + TID_GRACE_US)     /* decides them at once) */
            s_pend_decide(self, k);
    for (int k = self->dyn.npend - 1; k >= 0; k--)
        if (now >= self->dyn.pend[k].deadline) {
            if (self->dyn.pend[k].phase < P_AUTHED)
                s_pend_drop(self, k, "introduction not complete within %d ms",
                            self->dyn.handshake_ms);
            else
                s_pend_drop(self, k, "introduced, but not decided within %d ms",
                            self->dyn.connect_ms);
        }
    for (int h = self->nstatic_hosts; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_DIAL && c->dial != D_RESOLVE && now >= c->dial_deadline)
            s_dyn_fail(self, h, GIMPI_ESYSERR, "no connection within %d ms",
                       self->dyn.connect_ms);
        else if (c->state == C_DIAL && c->dial == D_BACKOFF) {
            if (now >= c->retry_at)
                s_dial_open(self, h);
            else if (wake < 0 || c->retry_at - now < wake)
                wake = c->retry_at - now;
        } else if (c->state == C_EXPECT && self->peers[c->procs[0]].alive_fd < 0
                 && now >= c->dial_deadline) {
            /* expected without a way to see it die (started on another host): after
               connect_ms, groupd says whether it lives (then we call it) or not */
            c->state = C_DIAL;
            c->dial = D_RESOLVE;
            c->resolve_later = 1;
            self->dyn.nresolve++;
        }
    }
    return wake < 0 ? -1 : (int)((wake + 999) / 1000);
}

/*  1 when an operation of ours involves peer p: a send to it, a receive naming it, a
 *  call watching it. */
static int s_involved(gimpi_msg_t *self, int p)
{
    peer_t *peer = &self->peers[p];
    if (peer->pending_sends.head || peer->streaming_sends.head || peer->watched)
        return 1;
    for (gimpi_msg_req_t *r = self->match.posted_recvs.head; r; r = QUEUE_NEXT(r))
        if (r->peer == p)
            return 1;
    return 0;
}

/*  An expected peer's alive_fd fired: it died without calling.  Said on stderr only when
 *  something of ours waited for it: a spawned child that ends at once, without a word to
 *  its parent, is an ordinary PVM program (PVM says nothing either). */
static void s_alive_event(gimpi_msg_t *self, int p)
{
    int h = self->peers[p].host;
    if (self->conns[h].state != C_EXPECT)
        return;
    s_dyn_quiet(self, h, !s_involved(self, p), GIMPI_ESYSERR, "exited before connecting");
}

/*  Resolves and calls dynamic peer p, whose connection is in D_RESOLVE (lock held; the
 *  lock is released while the resolver runs). */
static void s_resolve_peer(gimpi_msg_t *self, int p)
{
    int h = self->peers[p].host;
    int tid = self->peers[p].tid;
    if (self->conns[h].resolve_later) {
        self->conns[h].resolve_later = 0;
        self->dyn.nresolve--;
    }
    uint8_t addr[16];
    int port = 0;
    gimpi_msg_resolve_fn fn = self->dyn.resolve;
    void *arg = self->dyn.resolve_arg;
    pthread_mutex_unlock(&self->mu);
    int rc = fn(arg, tid, addr, &port);
    pthread_mutex_lock(&self->mu);
    conn_t *c = &self->conns[h];
    if (c->state != C_DIAL || c->dial != D_RESOLVE)
        return;                         /* it called us meanwhile (or is gone) */
    if (rc < 0)
        s_dyn_fail(self, h, rc, "cannot be found (%s)", gimpi_strerror(rc));
    else
        s_dial_start(self, p, addr, port);
}

/*  Asks the verifier whether authenticated incoming introduction k names a registered
 *  tid at its contact (the lock is released meanwhile; k is found again by its serial,
 *  unless it was dropped meanwhile), then admits or refuses it. */
static void s_verify_pend(gimpi_msg_t *self, int k)
{
    pend_t *pd = &self->dyn.pend[k];
    gimpi_intro_t in;
    gimpi_intro_decode(pd->buf, &in);
    uint64_t serial = pd->serial;
    pd->phase = P_VERIFYING;
    self->dyn.nverify--;
    gimpi_msg_verify_fn fn = self->dyn.verify;
    void *arg = self->dyn.verify_arg;
    pthread_mutex_unlock(&self->mu);
    int rc = fn ? fn(arg, in.tid, in.addr, in.port) : 0;
    pthread_mutex_lock(&self->mu);
    for (k = 0; k < self->dyn.npend && self->dyn.pend[k].serial != serial; k++)
        ;
    if (k == self->dyn.npend)
        return;
    if (rc == GIMPI_ENOTASK && !self->debug) {
        /* a task of the job (it holds the key) that groupd no longer knows: it called and
         * then exited before we got to it.  Nothing to say; were it alive, the answer
         * tells it, and it reports the refusal itself. */
        s_answer(self, self->dyn.pend[k].fd, &self->dyn.pend[k], GIMPI_INTRO_NOTREG, in.tid);
        s_pend_drop(self, k, NULL);
        return;
    }
    if (rc) {
        s_answer(self, self->dyn.pend[k].fd, &self->dyn.pend[k], GIMPI_INTRO_NOTREG, in.tid);
        s_pend_drop(self, k, "it holds the key but claims t%x, which groupd %s",
                    (unsigned)in.tid, rc == GIMPI_EMISMATCH ? "knows at another contact"
                    : rc == GIMPI_ENOTASK ? "does not know" : gimpi_strerror(rc));
        return;
    }
    self->dyn.pend[k].verified = 1;
    self->dyn.pend[k].phase = P_AUTHED;
    s_pend_decide(self, k);
}

/*  Resolves the peers the engine named while it could not, and verifies authenticated
 *  callers (lock held, may drop it: callers hold no pointers into the context). */
void msg_resolve_later(gimpi_msg_t *self)
{
    for (int p = self->nstatic; self->dyn.nresolve > 0 && p < self->nprocs; p++) {
        conn_t *c = &self->conns[self->peers[p].host];
        if (c->state == C_DIAL && c->dial == D_RESOLVE && c->resolve_later)
            s_resolve_peer(self, p);
    }
    for (int k = 0; self->dyn.nverify > 0 && k < self->dyn.npend; k++)
        if (self->dyn.pend[k].phase == P_VERIFY) {
            s_verify_pend(self, k);
            k = -1;                     /* the list may have changed: from the start */
        }
}

/*  The peer index of tid (lock held), creating and connecting a dynamic peer through
 *  the resolver when it is unknown (the lock is released while the resolver runs; inside
 *  the engine the resolution is left to the next waiting thread).  Returns the index or a
 *  GIMPI_E* code. */
int msg_peer(gimpi_msg_t *self, int tid)
{
    int p = msg_find_tid(self, tid);
    if (p >= 0)
        return p;
    if (tid <= 0 || !self->dyn.resolve)
        return GIMPI_EBADPARAM;
    if (self->dyn.finishing)
        return GIMPI_ESYSERR;
    p = s_add_peer(self, tid);
    if (p < 0)
        return GIMPI_ENOMEM;
    int h = self->peers[p].host;
    self->conns[h].state = C_DIAL;
    self->conns[h].dial = D_RESOLVE;
    if (self->dyn.in_engine) {
        self->conns[h].resolve_later = 1;
        self->dyn.nresolve++;
        if (self->prog.thread_polling || self->prog.app_polling)
            msg_kick(self);
    } else
        s_resolve_peer(self, p);
    return p;
}

/*  Finalize: no new dynamic hosts from now on; those not connected yet never will be. */
void msg_dyn_abandon(gimpi_msg_t *self)
{
    self->dyn.finishing = 1;
    for (int h = self->nstatic_hosts; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_DIAL || c->state == C_EXPECT) {
            if (self->peers[c->procs[0]].alive_fd >= 0) {
                close(self->peers[c->procs[0]].alive_fd);
                self->peers[c->procs[0]].alive_fd = -1;
            }
            msg_conn_close(self, h);
            msg_host_gone(self, h, GIMPI_ESYSERR, 0);
        }
    }
}

/* ----------------------------------------------------- their sockets in the poll loop */

/*  Adds the dynamic-host sockets to a poll set: the listener, introductions being read,
 *  dials, expected peers' alive_fds.  Returns how many; *busy = 1 when some setup is
 *  under way (not just the listener). */
int msg_dyn_fds(gimpi_msg_t *self, struct pollfd *pfd, int *busy)
{
    int n = 0;
    *busy = 0;
    if (self->dyn.listen_fd >= 0)
        pfd[n++] = (struct pollfd){ .fd = self->dyn.listen_fd, .events = POLLIN };
    if (self->dyn.local_fd >= 0)
        pfd[n++] = (struct pollfd){ .fd = self->dyn.local_fd, .events = POLLIN };
    for (int k = 0; k < self->dyn.npend; k++)
        pfd[n++] = (struct pollfd){ .fd = self->dyn.pend[k].fd, .events = POLLIN };
    for (int h = self->nstatic_hosts; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_DIAL && c->fd >= 0)
            pfd[n++] = (struct pollfd){ .fd = c->fd,
                                        .events = c->dial == D_ANSWER || c->dial == D_CHALLENGE
                                                  ? POLLIN : POLLOUT };
    }
    for (int p = self->nstatic; p < self->nprocs; p++)
        if (self->peers[p].alive_fd >= 0)
            pfd[n++] = (struct pollfd){ .fd = self->peers[p].alive_fd, .events = POLLIN };
    *busy = n > (self->dyn.listen_fd >= 0) + (self->dyn.local_fd >= 0);
    return n;
}

/*  Handles a ready dynamic-host socket (whichever it still is). */
void msg_dyn_event(gimpi_msg_t *self, int fd, short revents)
{
    if (fd == self->dyn.listen_fd || fd == self->dyn.local_fd) {
        s_accept(self, fd);
        return;
    }
    for (int k = 0; k < self->dyn.npend; k++)
        if (self->dyn.pend[k].fd == fd) {
            s_pend_event(self, k);
            return;
        }
    for (int h = self->nstatic_hosts; h < self->nhosts; h++)
        if (self->conns[h].state == C_DIAL && self->conns[h].fd == fd) {
            s_dial_event(self, h, revents);
            return;
        }
    for (int p = self->nstatic; p < self->nprocs; p++)
        if (self->peers[p].alive_fd == fd) {
            s_alive_event(self, p);
            return;
        }
}

/* ------------------------------------------------------------------ public calls */

/*  Sets the tid base (static tids = base + rank + 1). */
int gimpi_msg_set_tidbase(gimpi_msg_t *self, int base)
{
    assert(self);
    if (base < 0 || base > INT32_MAX - self->nstatic)
        return GIMPI_EBADPARAM;
    pthread_mutex_lock(&self->mu);
    self->tidbase = base;
    self->dyn.tid_final = 1;
    for (int p = 0; p < self->nstatic; p++)
        self->peers[p].tid = self->tidbase + p + 1;
    for (int k = self->dyn.npend - 1; k >= 0; k--)    /* callers that waited for it */
        if (self->dyn.pend[k].phase == P_AUTHED)
            s_pend_decide(self, k);
    pthread_mutex_unlock(&self->mu);
    return 0;
}

/*  Installs the resolver of unknown tids. */
void gimpi_msg_set_resolver(gimpi_msg_t *self, gimpi_msg_resolve_fn fn, void *arg)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    self->dyn.resolve = fn;
    self->dyn.resolve_arg = arg;
    pthread_mutex_unlock(&self->mu);
}

/*  Sets the job's key, which introductions prove. */
void gimpi_msg_set_key(gimpi_msg_t *self, const uint8_t key[GIMPI_MSG_KEY_SIZE])
{
    assert(self);
    assert(key);
    pthread_mutex_lock(&self->mu);
    memcpy(self->dyn.key.bytes, key, GIMPI_KEY_SIZE);
    self->dyn.have_key = 1;
    pthread_mutex_unlock(&self->mu);
}

/*  Installs the verifier of incoming introductions' tids. */
void gimpi_msg_set_verifier(gimpi_msg_t *self, gimpi_msg_verify_fn fn, void *arg)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    self->dyn.verify = fn;
    self->dyn.verify_arg = arg;
    pthread_mutex_unlock(&self->mu);
}

/*  Calls tid at a known contact. */
int gimpi_msg_connect(gimpi_msg_t *self, int tid, const uint8_t addr[16], int port)
{
    assert(self);
    if (tid <= 0 || !addr || port <= 0 || port > 65535)
        return GIMPI_EBADPARAM;
    pthread_mutex_lock(&self->mu);
    int rc = 0;
    if (tid == msg_mytid(self))
        rc = GIMPI_EBADPARAM;
    else if (msg_find_tid(self, tid) < 0) {
        int p = self->dyn.finishing ? GIMPI_ESYSERR : s_add_peer(self, tid);
        if (p < 0)
            rc = self->dyn.finishing ? GIMPI_ESYSERR : GIMPI_ENOMEM;
        else
            s_dial_start(self, p, addr, port);
    }
    pthread_mutex_unlock(&self->mu);
    return rc;
}

/*  Announces a task that will call. */
int gimpi_msg_expect(gimpi_msg_t *self, int tid, int alive_fd)
{
    assert(self);
    if (tid <= 0) {
        if (alive_fd >= 0)
            close(alive_fd);
        return GIMPI_EBADPARAM;
    }
    pthread_mutex_lock(&self->mu);
    int rc = 0, p = msg_find_tid(self, tid);
    if (p < 0 && !self->dyn.finishing && tid != msg_mytid(self)) {
        p = s_add_peer(self, tid);
        if (p < 0)
            rc = GIMPI_ENOMEM;
        else {
            self->conns[self->peers[p].host].state = C_EXPECT;
            self->conns[self->peers[p].host].dial_deadline =
                gimpi_now_us() + (int64_t)self->dyn.connect_ms * 1000;
            self->peers[p].alive_fd = alive_fd;
            alive_fd = -1;
            if (self->prog.thread_polling || self->prog.app_polling)
                msg_kick(self);
        }
    }
    if (alive_fd >= 0)
        close(alive_fd);
    pthread_mutex_unlock(&self->mu);
    return rc;
}

/*  Address and port of the listening socket. */
int gimpi_msg_contact(gimpi_msg_t *self, uint8_t addr[16], int *port)
{
    assert(self);
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    if (self->dyn.listen_fd < 0 || !addr || !port
        || getsockname(self->dyn.listen_fd, (struct sockaddr *)&sa, &len) < 0
        || sa.sin_family != AF_INET)
        return GIMPI_ESYSERR;
    impi_addr16_from_ipv4(addr, ntohl(sa.sin_addr.s_addr));
    *port = ntohs(sa.sin_port);
    return 0;
}
