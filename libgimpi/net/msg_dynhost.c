/*  msg_dynhost.c — dynamic hosts: connections to tasks outside the static tables (spawned
 *  children, tasks of other jobs), set up while the engine runs, beside the static hosts'
 *  meeting of gimpi_host.c.
 *
 *  A caller dials the task's listener (gimpi_host_dial) and sends a gimpi introduction
 *  (the codec is here, the format in msg_dynhost.h); the callee, reading introductions
 *  from its listener inside the poll loop, answers OK or why not, and both ends then use
 *  the connection as an IMPI host connection with the smaller of the two flow-control
 *  parameters.  Unknown tids are resolved to a contact through the resolver callback;
 *  two tasks calling each other at once keep the higher tid's call.  Every set-up is
 *  bounded by connect_ms.  See doc/data-plane.md, "Dynamic hosts".
 */
#include "net/msg_internal.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* ------------------------------------------------------------- the introduction codec */

/*  Writes an introduction or answer. */
void gimpi_intro_encode(uint8_t out[GIMPI_INTRO_SIZE], const gimpi_intro_t *in)
{
    impi_put32(out, GIMPI_INTRO_MARKER);
    impi_put32(out + 4, in->word);
    impi_put32(out + 8, (uint32_t)in->tid);
    impi_put32(out + 12, (uint32_t)in->target);
    impi_put32(out + 16, in->pktlen);
    impi_put32(out + 20, in->ackmark);
    impi_put32(out + 24, in->hiwater);
    impi_proc_encode(out + 28, &in->proc);
}

/*  Reads an introduction or answer. */
int gimpi_intro_decode(const uint8_t in[GIMPI_INTRO_SIZE], gimpi_intro_t *out)
{
    if (impi_get32(in) != GIMPI_INTRO_MARKER)
        return -1;
    out->word = impi_get32(in + 4);
    out->tid = (int)impi_get32(in + 8);
    out->target = (int)impi_get32(in + 12);
    out->pktlen = impi_get32(in + 16);
    out->ackmark = impi_get32(in + 20);
    out->hiwater = impi_get32(in + 24);
    impi_proc_decode(in + 28, &out->proc);
    return 0;
}

/*  Words for the answer statuses. */
const char *gimpi_intro_strstatus(uint32_t status)
{
    static const char *const text[] = {
        "accepted", "unknown introduction version", "not the task asked for",
        "already connected", "both called at once (the other call wins)",
        "the task is leaving or knows the caller gone", "bad tid or parameters",
    };
    return status < sizeof text / sizeof *text ? text[status] : "unknown status";
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
                               .dyn = 1, .pktlen = self->pktlen, .ackmark = self->ackmark,
                               .hiwater = self->hiwater };
    return p;
}

/* ------------------------------------------------------------------ calling */

/*  Our introduction (or answer: word = status) to tid. */
static void s_intro(gimpi_msg_t *self, uint8_t out[GIMPI_INTRO_SIZE], uint32_t word, int tid)
{
    gimpi_intro_t in = { .word = word, .tid = msg_mytid(self), .target = tid,
                         .pktlen = self->pktlen, .ackmark = self->ackmark,
                         .hiwater = self->hiwater, .proc = self->me };
    gimpi_intro_encode(out, &in);
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
    if (peer->alive_fd >= 0) {          /* from now on the connection tells its death */
        close(peer->alive_fd);
        peer->alive_fd = -1;
    }
    pthread_cond_broadcast(&self->cv);
    return 0;
}

/*  Gives up a dynamic connection that never opened: its peer is gone with err. */
static void s_dyn_fail(gimpi_msg_t *self, int h, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void s_dyn_fail(gimpi_msg_t *self, int h, int err, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    peer_t *peer = &self->peers[self->conns[h].procs[0]];
    snprintf(self->errmsg, sizeof self->errmsg, "t%x: %s", (unsigned)peer->tid, what);
    if (err != GIMPI_ENOTASK)
        fprintf(stderr, "gimpi[t%x]: %s\n", (unsigned)(self->tidbase + self->rank + 1),
                self->errmsg);
    if (peer->alive_fd >= 0) {
        close(peer->alive_fd);
        peer->alive_fd = -1;
    }
    msg_conn_close(self, h);
    msg_host_gone(self, h, err, 0);
}

/*  Starts calling peer p at addr:port (its connection is C_CLOSED or D_RESOLVE). */
static void s_dial_start(gimpi_msg_t *self, int p, const uint8_t addr[16], int port)
{
    int h = self->peers[p].host;
    conn_t *c = &self->conns[h];
    char err[160];
    int inprogress = 0;
    c->state = C_DIAL;
    int fd = gimpi_host_dial(addr, port, NULL, &inprogress, err, sizeof err);
    if (fd < 0) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "%s", err);
        return;
    }
    c->fd = fd;
    c->dial = inprogress ? D_CONNECT : D_INTRO;
    c->dial_deadline = msg_now_us() + (int64_t)self->dyn.connect_ms * 1000;
    s_intro(self, c->ibuf, GIMPI_INTRO_VERSION, self->peers[p].tid);
    c->ioff = 0;
    if (self->prog.thread_polling || self->prog.app_polling)
        msg_kick(self);                   /* pollers must watch the new socket */
}

/*  Connection h being dialled is ready (revents): connect, introduction, answer. */
static void s_dial_event(gimpi_msg_t *self, int h, short revents)
{
    conn_t *c = &self->conns[h];
    int tid = self->peers[c->procs[0]].tid;
    if (c->dial == D_CONNECT) {
        int e = 0;
        socklen_t el = sizeof e;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (e) {
            s_dyn_fail(self, h, GIMPI_ESYSERR, "connect: %s", strerror(e));
            return;
        }
        if (!(revents & POLLOUT))
            return;
        c->dial = D_INTRO;
    }
    if (c->dial == D_INTRO) {
        ssize_t w = send(c->fd, c->ibuf + c->ioff, GIMPI_INTRO_SIZE - c->ioff,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            s_dyn_fail(self, h, GIMPI_ESYSERR, "sending the introduction: %s", strerror(errno));
            return;
        }
        if (w > 0)
            c->ioff += (size_t)w;
        if (c->ioff == GIMPI_INTRO_SIZE) {
            c->dial = D_ANSWER;
            c->ioff = 0;
        }
        return;
    }
    if (c->dial != D_ANSWER)
        return;
    /* exactly the answer: packets may follow it at once */
    ssize_t got = recv(c->fd, c->ibuf + c->ioff, GIMPI_INTRO_SIZE - c->ioff, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "closed the connection before answering (%s)",
                   got == 0 ? "end of stream" : strerror(errno));
        return;
    }
    if (got > 0)
        c->ioff += (size_t)got;
    if (c->ioff < GIMPI_INTRO_SIZE)
        return;
    gimpi_intro_t in;
    if (gimpi_intro_decode(c->ibuf, &in) < 0 || in.tid != tid
        || in.target != msg_mytid(self)) {
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
        s_dyn_fail(self, h, GIMPI_ESYSERR, "refused the connection: %s",
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

/* ------------------------------------------------------------------ being called */

/*  Drops incoming introduction k (closing it) and says why on stderr. */
static void s_pend_drop(gimpi_msg_t *self, int k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void s_pend_drop(gimpi_msg_t *self, int k, const char *fmt, ...)
{
    char what[200] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        fprintf(stderr, "gimpi[t%x]: dropped an incoming connection: %s\n",
                (unsigned)msg_mytid(self), what);
    }
    if (self->dyn.pend[k].fd >= 0)
        close(self->dyn.pend[k].fd);
    self->dyn.pend[k] = self->dyn.pend[--self->dyn.npend];
}

/*  GIMPI_INTRO_DUP, not reported on stderr (the normal end of a lost race). */
#define GIMPI_INTRO_DUP_QUIET (GIMPI_INTRO_DUP | 0x100)

/*  Answers introduction k with a refusal and drops it. */
static void s_pend_refuse(gimpi_msg_t *self, int k, const gimpi_intro_t *in, uint32_t why)
{
    uint8_t ans[GIMPI_INTRO_SIZE];
    s_intro(self, ans, why & 0xff, in->tid);
    ssize_t w = send(self->dyn.pend[k].fd, ans, sizeof ans, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    /* quiet: the normal ends of a race (our own call is the connection), and callers of
     * a task that is leaving (they report the refusal themselves) */
    if (why == GIMPI_INTRO_RACE || why == GIMPI_INTRO_DUP_QUIET || why == GIMPI_INTRO_LEAVING)
        s_pend_drop(self, k, NULL);
    else
        s_pend_drop(self, k, "t%x refused: %s", (unsigned)in->tid, gimpi_intro_strstatus(why));
}

/*  A whole introduction is in on pending connection k: accept or refuse it. */
static void s_pend_decide(gimpi_msg_t *self, int k)
{
    gimpi_intro_t in;
    if (gimpi_intro_decode(self->dyn.pend[k].buf, &in) < 0) {
        s_pend_drop(self, k, "not a gimpi introduction");
        return;
    }
    if (in.word != GIMPI_INTRO_VERSION) {
        s_pend_refuse(self, k, &in, GIMPI_INTRO_BADVERSION);
        return;
    }
    if (in.target != msg_mytid(self)) {
        /* a task learns its tid (gimpi_msg_set_tidbase) just after it starts listening,
           and its contact may be known before: such a caller waits for the tid, or for
           the grace to end, rather than being refused in that moment */
        if (!self->dyn.tid_final && msg_now_us() < self->dyn.born_us + TID_GRACE_US)
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
    int p = msg_find_tid(self, in.tid);
    if (p >= 0 && p < self->nstatic) {
        s_pend_refuse(self, k, &in, GIMPI_INTRO_DUP);
        return;
    }
    if (p >= 0) {
        conn_t *c = &self->conns[self->peers[p].host];
        if (self->peers[p].gone) {
            s_pend_refuse(self, k, &in, GIMPI_INTRO_LEAVING);
            return;
        }
        if (c->state == C_OPEN) {       /* its call lost a race our call already won */
            s_pend_refuse(self, k, &in, GIMPI_INTRO_DUP_QUIET);
            return;
        }
        if (c->state == C_DIAL && c->fd >= 0) {     /* both called: the higher tid wins */
            if (in.tid < msg_mytid(self)) {
                s_pend_refuse(self, k, &in, GIMPI_INTRO_RACE);
                return;
            }
            close(c->fd);
            c->fd = -1;
        }
    } else if ((p = s_add_peer(self, in.tid)) < 0) {
        s_pend_drop(self, k, "out of memory");
        return;
    }
    int h = self->peers[p].host;
    conn_t *c = &self->conns[h];
    c->fd = self->dyn.pend[k].fd;
    self->dyn.pend[k].fd = -1;
    s_pend_drop(self, k, NULL);
    uint8_t ans[GIMPI_INTRO_SIZE];
    s_intro(self, ans, GIMPI_INTRO_OK, in.tid);
    /* a fresh socket's buffer takes the answer whole */
    ssize_t w = send(c->fd, ans, sizeof ans, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w != (ssize_t)sizeof ans) {
        s_dyn_fail(self, h, GIMPI_ESYSERR, "could not answer its introduction");
        return;
    }
    if (s_bind(self, h, &in) < 0) {
        s_dyn_fail(self, h, GIMPI_ENOMEM, "out of memory");
        return;
    }
    msg_flush(self, h);
}

/*  Pending connection k is readable: read (exactly) the rest of its introduction. */
static void s_pend_event(gimpi_msg_t *self, int k)
{
    pend_t *pd = &self->dyn.pend[k];
    if (pd->got == GIMPI_INTRO_SIZE) {  /* in, waiting for our tid: it must stay silent */
        char c;
        ssize_t r = recv(pd->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (r > 0)                      /* (else it would keep the poll awake until then) */
            s_pend_drop(self, k, "bytes after the introduction, before any answer");
        else if (r == 0 || (errno != EAGAIN && errno != EINTR))
            s_pend_drop(self, k, NULL);
        return;
    }
    ssize_t got = recv(pd->fd, pd->buf + pd->got, GIMPI_INTRO_SIZE - pd->got, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        if (pd->got)                    /* silent callers (a lost race, a probe): quietly */
            s_pend_drop(self, k, "closed after %zu of %d introduction bytes", pd->got,
                        GIMPI_INTRO_SIZE);
        else
            s_pend_drop(self, k, NULL);
        return;
    }
    if (got < 0)
        return;
    size_t before = pd->got;
    pd->got += (size_t)got;
    if (before < 4 && pd->got >= 4 && impi_get32(pd->buf) != GIMPI_INTRO_MARKER) {
        s_pend_drop(self, k, "not a gimpi introduction (first word 0x%08x)",
                    (unsigned)impi_get32(pd->buf));
        return;
    }
    if (pd->got == GIMPI_INTRO_SIZE)
        s_pend_decide(self, k);
}

/*  A listening socket (TCP or local) is readable: takes the waiting callers. */
static void s_accept(gimpi_msg_t *self, int lfd)
{
    for (int i = 0; i < 16; i++) {
        int fd = gimpi_host_accept(lfd);
        if (fd < 0)
            return;
        if (s_grow(&self->dyn.pend, &self->dyn.cap_pend, self->dyn.npend,
                   sizeof *self->dyn.pend, 1024)) {
            fprintf(stderr, "gimpi[t%x]: dropped an incoming connection: too many "
                    "introductions under way\n", (unsigned)msg_mytid(self));
            close(fd);
            continue;
        }
        self->dyn.pend[self->dyn.npend++] = (pend_t){
            .fd = fd, .deadline = msg_now_us() + (int64_t)self->dyn.connect_ms * 1000 };
    }
}

/* ------------------------------------------------------- deadlines, deaths, resolving */

/*  Gives up dials and introductions past their deadline. */
void msg_dyn_deadlines(gimpi_msg_t *self)
{
    int64_t now = msg_now_us();
    for (int k = self->dyn.npend - 1; k >= 0; k--)    /* callers waiting for our tid: the */
        if (self->dyn.pend[k].got == GIMPI_INTRO_SIZE       /* grace is over (set_tidbase */
            && now >= self->dyn.born_us + TID_GRACE_US)     /* decides them at once) */
            s_pend_decide(self, k);
    for (int k = self->dyn.npend - 1; k >= 0; k--)
        if (now >= self->dyn.pend[k].deadline)
            s_pend_drop(self, k, "introduction not complete within %d ms",
                        self->dyn.connect_ms);
    for (int h = self->nstatic_hosts; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_DIAL && c->dial != D_RESOLVE && now >= c->dial_deadline)
            s_dyn_fail(self, h, GIMPI_ESYSERR, "no connection within %d ms",
                       self->dyn.connect_ms);
    }
}

/*  An expected peer's alive_fd fired: it died without calling. */
static void s_alive_event(gimpi_msg_t *self, int p)
{
    int h = self->peers[p].host;
    if (self->conns[h].state == C_EXPECT)
        s_dyn_fail(self, h, GIMPI_ESYSERR, "exited before connecting");
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

/*  Resolves the peers the engine named while it could not (lock held, may drop it:
 *  callers hold no pointers into the context). */
void msg_resolve_later(gimpi_msg_t *self)
{
    for (int p = self->nstatic; self->dyn.nresolve > 0 && p < self->nprocs; p++) {
        conn_t *c = &self->conns[self->peers[p].host];
        if (c->state == C_DIAL && c->dial == D_RESOLVE && c->resolve_later)
            s_resolve_peer(self, p);
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
                                        .events = c->dial == D_ANSWER ? POLLIN : POLLOUT };
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
        if (self->dyn.pend[k].got == GIMPI_INTRO_SIZE)
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
