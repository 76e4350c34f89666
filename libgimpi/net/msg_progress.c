/*  msg_progress.c — progress and waiting: the poll loop that drives the connections, the
 *  bounded waits of blocked calls, and the progress thread.
 *
 *  An application thread blocked in a call drives the sockets itself (a short spin with
 *  poll(0), then a blocking poll()).  A progress thread takes over only once the
 *  application has stayed out of the library for a couple of milliseconds, so it never
 *  sits on the small-message path; the application kicks it out of poll() (an eventfd)
 *  when it comes back and needs to block.  See doc/data-plane.md for the design.
 */
#include "net/msg_internal.h"
#include "net/msg_status_hook.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>

/*  A moment of busy waiting that tells the core a spin loop runs (a pause is 10 to 140
 *  cycles, by processor). */
static inline void s_relax(void)
{
    for (int k = 0; k < 2; k++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#else
        __asm__ __volatile__("" ::: "memory");
#endif
    }
}

/*  The CLOCK_REALTIME time ns nanoseconds (under a second) from now, for a timed wait. */
static struct timespec s_realtime_in(long ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += ns;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/*  Connection h's socket said revents: for a shared-memory link that means doorbells or
 *  the peer's hang-up, for the next read to take. */
static void s_poked(gimpi_msg_t *self, int h, short revents)
{
    conn_t *c = &self->conns[h];
    if (c->shm && (revents & (POLLIN | POLLERR | POLLHUP)))
        msg_shm_poke(c->shm);
}

/*  Whether connection h has its packet bytes in shared memory (a look costs no syscall). */
static int s_shm_on(gimpi_msg_t *self, int h)
{
    return self->conns[h].shm && msg_shm_on(self->conns[h].shm);
}

/*  A quick look at few connections (nconn, indices in map, pfd free from nconn on): tries
 *  them directly, one syscall each (none for a shared-memory link), rather than poll()
 *  and then read; the dynamic-host sockets only now and then (dyn: some set-up under
 *  way), and the sockets of shared-memory links too (their peers' hang-ups). */
static void s_quick_look(gimpi_msg_t *self, struct pollfd *pfd, const int *map, int nconn,
                         int dyn)
{
    int busy = 0, nextra = 0;
    int tick = (++self->prog.quick & (QUICK_TICK - 1)) == 0, nshm = 0;
    for (int i = 0; tick && i < nconn; i++)
        nshm += s_shm_on(self, map[i]);
    if (nshm && poll(pfd, (nfds_t)nconn, 0) > 0)    /* one call for all the sockets */
        for (int i = 0; i < nconn; i++)
            if (pfd[i].revents && s_shm_on(self, map[i]))
                s_poked(self, map[i], pfd[i].revents);
    for (int i = 0; i < nconn; i++) {
        int h = map[i];
        if (self->conns[h].want_out && msg_flush(self, h) < 0)
            continue;
        msg_read(self, h);
    }
    if (dyn || tick)
        nextra = msg_dyn_fds(self, pfd + nconn, &busy);
    if (nextra && (busy || tick)
        && poll(pfd + nconn, (nfds_t)nextra, 0) > 0)
        for (int i = nconn; i < nconn + nextra; i++)
            if (pfd[i].revents)
                msg_dyn_event(self, pfd[i].fd, pfd[i].revents);
    if (self->prog.app_polling)
        msg_kick(self);
    if (self->prog.cv_waiters)          /* a look is frequent: tell only who waits */
        pthread_cond_broadcast(&self->cv);
}

/*  Handles the bytes left in a staging buffer (msg_read stopped early after a completed
 *  receive): poll() would not report them.  1 when some are still there. */
static int s_read_staged(gimpi_msg_t *self)
{
    int staged = 0;
    for (int h = 0; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state == C_OPEN && c->st_off < c->st_len) {
            msg_read(self, h);
            staged |= c->state == C_OPEN && c->st_off < c->st_len;
        }
    }
    return staged;
}

/*  Handles what poll() reported on the np descriptors of pfd (map: a connection's index,
 *  -1 the eventfd, -2 a dynamic host's socket); the shared-memory links were served
 *  before. */
static void s_dispatch(gimpi_msg_t *self, const struct pollfd *pfd, const int *map, int np)
{
    for (int i = 0; i < np; i++) {
        if (!pfd[i].revents)
            continue;
        int h = map[i];
        if (h == -1) {
            uint64_t v;
            ssize_t n = read(self->prog.evfd, &v, sizeof v);
            (void)n;
            continue;
        }
        if (h == -2) {
            msg_dyn_event(self, pfd[i].fd, pfd[i].revents);
            continue;
        }
        if (self->conns[h].fd != pfd[i].fd || self->conns[h].state != C_OPEN
            || s_shm_on(self, h))
            continue;                   /* closed meanwhile, or read above */
        if (pfd[i].revents & (POLLOUT | POLLERR | POLLHUP))
            if (msg_flush(self, h) < 0)
                continue;
        if (pfd[i].revents & (POLLIN | POLLERR | POLLHUP))
            msg_read(self, h);
    }
}

/*  One round of progress: polls the connections (timeout_ms; 0 = just look, the lock is
 *  then kept), then writes and reads what they are ready for.  A blocking poll also
 *  watches the eventfd (kicks) and the dynamic-host sockets (a quick look only every
 *  QUICK_TICK-th time, or while a setup is under way).  app says whether an application thread
 *  is calling: a thread that made progress while an application thread sits in poll()
 *  kicks it, since that thread may have consumed the very bytes the other one was
 *  waiting for. */
void msg_drive(gimpi_msg_t *self, int timeout_ms, int app)
{
    if (self->match.nowed)
        msg_credit_release(self);       /* a receive, a probe or a take may want them now */
    if (s_read_staged(self))
        timeout_ms = 0;
    int dyn = self->dyn.npend || self->nhosts > self->nstatic_hosts;
    if (dyn) {
        int wake = msg_dyn_deadlines(self);     /* a dial waits to call again: in time */
        if (wake >= 0 && timeout_ms > 0 && timeout_ms > wake)
            timeout_ms = wake > 0 ? wake : 1;
    }
    int nmax = self->nhosts + 2 + self->dyn.npend + (self->nhosts - self->nstatic_hosts)
               + (self->nprocs - self->nstatic) + 1;
    struct pollfd pfd[nmax];
    int map[nmax];
    int np = 0, nsock = 0;
    for (int h = 0; h < self->nhosts; h++) {
        conn_t *c = &self->conns[h];
        if (c->state != C_OPEN)
            continue;
        /* a shared-memory link's socket only rings (room is told by a doorbell too) */
        pfd[np] = (struct pollfd){ .fd = c->fd, .events = (short)(POLLIN | (c->want_out
                                                                 && !c->shm ? POLLOUT : 0)) };
        map[np++] = h;
        nsock += !s_shm_on(self, h);
    }
    int nconn = np, busy = 0, nextra = 0;
    if (timeout_ms == 0 && nsock <= DIRECT_READ_MAX) {
        s_quick_look(self, pfd, map, nconn, dyn);
        return;
    }
    nextra = msg_dyn_fds(self, pfd + np, &busy);
    for (int i = 0; i < nextra; i++)
        map[np++] = -2;
    if (np == 0 && timeout_ms && app) {     /* nothing to watch: wait for a state change */
        struct timespec ts = s_realtime_in(10 * 1000000L);
        self->prog.cv_waiters++;
        pthread_cond_timedwait(&self->cv, &self->mu, &ts);
        self->prog.cv_waiters--;
        return;
    }
    int rc;
    uint64_t moved = self->prog.moved;
    for (int i = 0; timeout_ms && i < nconn; i++)   /* peers of shared-memory links: ring */
        if (self->conns[map[i]].shm && msg_shm_sleep(self->conns[map[i]].shm,
                                                     self->conns[map[i]].want_out))
            timeout_ms = -1;            /* something is there already: armed, not asleep */
    msg_shm_t *armed[nconn + 1];
    for (int i = 0; i < nconn; i++)
        armed[i] = self->conns[map[i]].shm;
    int slept = timeout_ms != 0;
    if (timeout_ms < 0)
        timeout_ms = 0;
    if (timeout_ms) {
        pfd[np] = (struct pollfd){ .fd = self->prog.evfd, .events = POLLIN };
        map[np++] = -1;
        if (app)
            self->prog.app_polling++;
        else
            self->prog.thread_polling = 1;
        pthread_mutex_unlock(&self->mu);
        rc = poll(pfd, (nfds_t)np, timeout_ms);
        pthread_mutex_lock(&self->mu);
        if (app)
            self->prog.app_polling--;
        else
            self->prog.thread_polling = 0;
    } else
        rc = np ? poll(pfd, (nfds_t)np, 0) : 0;
    for (int i = 0; i < nconn; i++) {
        conn_t *c = &self->conns[map[i]];
        if (slept && armed[i] && c->shm == armed[i])
            msg_shm_woke(c->shm);
        if (rc > 0 && pfd[i].revents && c->fd == pfd[i].fd)
            s_poked(self, map[i], pfd[i].revents);
        if (c->state == C_OPEN && s_shm_on(self, map[i])) {  /* rings need no poll */
            if (c->want_out && msg_flush(self, map[i]) < 0)
                continue;
            if (msg_shm_ready(c->shm))
                msg_read(self, map[i]);
        }
    }
    if (rc <= 0 && self->prog.moved == moved)
        return;
    if (rc <= 0)
        goto done;
    s_dispatch(self, pfd, map, np);
done:
    if (self->prog.app_polling)
        msg_kick(self);
    if (self->prog.cv_waiters)
        pthread_cond_broadcast(&self->cv);
}

/*  Adds peer p to the set asked about (once; kin with a live connection or an open one to
 *  be). */
static void s_involve(gimpi_msg_t *self, int p, int *set, int *n)
{
    if (p < 0 || p == self->rank || p >= self->nprocs || self->peers[p].gone
        || !self->conns[self->peers[p].host].kin || *n >= LIVENESS_MAX)
        return;
    for (int i = 0; i < *n; i++)
        if (set[i] == p)
            return;
    set[(*n)++] = p;
}

/*  One round of questions about the peers blocked calls wait for: a receive naming one, a
 *  long receive from one, a send to one not complete, a wait watching one.  The hook runs unlocked; a peer it
 *  reports gone is lost (msg_peer_lost), after one last look at the sockets so that
 *  nothing it sent before it went is dropped. */
static void s_ask_alive(gimpi_msg_t *self)
{
    int set[LIVENESS_MAX], tids[LIVENESS_MAX], n = 0;
    for (gimpi_msg_req_t *r = self->match.posted_recvs.head; r; r = QUEUE_NEXT(r))
        s_involve(self, r->peer, set, &n);
    for (gimpi_msg_req_t *r = self->match.long_recvs.head; r; r = QUEUE_NEXT(r))
        s_involve(self, r->src, set, &n);
    for (gimpi_msg_req_t *r = self->match.sends_out.head; r; r = OUT_NEXT(r))
        s_involve(self, r->peer, set, &n);
    int start = self->hooks.alive_rr;   /* watched, queued sends: round robin */
    for (int k = 0; k < self->nprocs && n < LIVENESS_MAX; k++) {
        int p = (start + k) % self->nprocs;
        if (self->peers[p].watched || self->peers[p].pending_sends.head
            || self->peers[p].streaming_sends.head) {
            s_involve(self, p, set, &n);
            self->hooks.alive_rr = p + 1;
        }
    }
    if (n == 0)
        return;
    for (int i = 0; i < n; i++)
        tids[i] = set[i] < self->nstatic ? self->tidbase + set[i] + 1 : self->peers[set[i]].tid;
    gimpi_msg_alive_fn fn = (gimpi_msg_alive_fn)self->hooks.alive.fn;
    void *arg = self->hooks.alive.arg;
    int gone[LIVENESS_MAX], ngone = 0;
    pthread_mutex_unlock(&self->mu);   /* (peers are only appended: indices hold) */
    for (int i = 0; i < n; i++)
        gone[i] = fn(arg, tids[i]) == 0;
    pthread_mutex_lock(&self->mu);
    for (int i = 0; i < n; i++)
        ngone += gone[i];
    if (ngone == 0)
        return;
    msg_drive(self, 0, 1);              /* what they sent before going is not lost */
    for (int i = 0; i < n; i++)
        if (gone[i])
            msg_peer_lost(self, set[i]);
}

/*  The earlier of two moments, 0 meaning none. */
static inline int64_t s_first_at(int64_t a, int64_t b)
{
    return a && (!b || a < b) ? a : b;
}

/*  A wait past its spin sets when the live view's status hook runs (*status_at, 0: no
 *  hook) and the earlier of that and the blocked hook's moment (*hook_at).  Only then:
 *  the spin, where short waits end, never looks at the status hook.  Returns true. */
static bool s_arm_status(gimpi_msg_t *self, int64_t start, int64_t note_at, int64_t *status_at,
                         int64_t *hook_at)
{
    if (self->hooks.status.fn)
        *status_at = start + (int64_t)self->hooks.status_ms * 1000;
    *hook_at = s_first_at(note_at, *status_at);
    return true;
}

/*  Runs a hook of a blocked call without the context's lock: the blocked hook, or (status)
 *  the live view's, told how long the call has waited (msg_status_hook.h). */
static void s_run_wait_hook(gimpi_msg_t *self, bool status, int waited_ms)
{
    msg_hook_t h = status ? self->hooks.status : self->hooks.blocked;
    pthread_mutex_unlock(&self->mu);
    if (h.fn && status)
        ((gimpi_msg_status_fn)h.fn)(h.arg, waited_ms);
    else if (h.fn)
        ((gimpi_msg_hook_fn)h.fn)(h.arg);
    pthread_mutex_lock(&self->mu);
}

/*  Blocks the calling application thread until pred holds, driving the sockets itself:
 *  a short spin, then poll().  poll_cap_ms bounds one poll (for predicates that depend on
 *  time).  Returns 0, or GIMPI_ESYSERR when the context timeout (or deadline_us when not
 *  0) ran out. */
int msg_wait(gimpi_msg_t *self, pred_t pred, void *arg, int poll_cap_ms)
{
    if (pred(self, arg))
        return 0;
    __atomic_add_fetch(&self->prog.app_blocked, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&self->prog.app_epoch, 1, __ATOMIC_RELAXED);
    if (self->prog.thread_polling)
        msg_kick(self);
    /* with a core of our own, an answer through shared memory is usually here within a
     * few looks: take them before reading the clock (which costs as much as a look) */
    for (int i = 0; self->prog.own_core && self->prog.nshm && !self->prog.driving
                    && i < FIRST_LOOKS; i++) {
        msg_drive(self, 0, 1);
        if (pred(self, arg)) {
            __atomic_sub_fetch(&self->prog.app_blocked, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&self->prog.app_epoch, 1, __ATOMIC_RELAXED);
            return 0;
        }
    }
    int64_t start = gimpi_now_us();
    int64_t spin_until = start + self->prog.spin_us;
    /* local peers that all have a core answer within the hot spin: no yielding then (a
     * yield is a system call, a round trip through shared memory is not).  A wait that
     * outlasts it says the cores are wanted elsewhere: yield for the next HOT_BACKOFF.
     * With more tasks than cores, the one awaited is still usually running on another
     * core, and its message comes within a microsecond or two: a short spin first, since
     * yielding at once hands the core to a queued task for a whole switch (3-4 us here);
     * with one CPU for all, at once. */
    int64_t hot_until = 0;
    if (self->prog.own_core)            /* nobody of ours shares the core: never yield */
        hot_until = spin_until;
    else if (self->prog.hot_off > 0)
        self->prog.hot_off--;
    else if (self->prog.nshm && self->prog.nshm + 1 <= self->prog.ncpu)
        hot_until = start + HOT_SPIN_US;
    else if (self->prog.nshm && self->prog.ncpu > 1)
        hot_until = start + HOT_SPIN_OVER_US;   /* more tasks than cores, see below */
    int64_t deadline = self->timeout_ms > 0 ? start + (int64_t)self->timeout_ms * 1000 : 0;
    int rc = 0;
    uint64_t moved = self->prog.moved;
    int64_t live_us = (int64_t)self->hooks.liveness_ms * 1000;
    int64_t next_ask = start + live_us;
    int64_t note_at = self->hooks.blocked.fn && self->hooks.note_ms > 0
                    ? start + (int64_t)self->hooks.note_ms * 1000 : 0;
    int64_t status_at = 0, hook_at = note_at;   /* the loop looks at the earlier one */
    bool armed = false;                         /* (the status hook's, once past the spin) */
    unsigned looks = 0;
    int64_t now = start;
    while (!pred(self, arg)) {
        if (self->dyn.nresolve || self->dyn.nverify)
            msg_resolve_later(self);
        if ((looks++ & 7) == 0 || now >= hot_until)    /* the hot spin reads the clock less */
            now = gimpi_now_us();
        if (self->prog.moved != moved) {     /* bytes are flowing: keep spinning */
            moved = self->prog.moved;
            spin_until = now + self->prog.spin_us;
        }
        if (deadline && now >= deadline) {
            snprintf(self->errmsg, sizeof self->errmsg, "timed out after %d ms",
                     self->timeout_ms);
            rc = GIMPI_ESYSERR;
            break;
        }
        if (hook_at && now >= hook_at) {
            bool status = hook_at == status_at;             /* (the live view's) */
            *(status ? &status_at : &note_at) = 0;
            hook_at = s_first_at(note_at, status_at);
            s_run_wait_hook(self, status, (int)((now - start) / 1000));
            continue;
        }
        if (self->hooks.alive.fn && live_us > 0 && now >= next_ask) {
            next_ask = now + live_us;
            s_ask_alive(self);
            continue;
        }
        if (self->prog.driving) {        /* another application thread polls: let it */
            if (!armed && now >= spin_until)
                armed = s_arm_status(self, start, note_at, &status_at, &hook_at);
            struct timespec ts = s_realtime_in(5 * 1000000L);
            self->prog.cv_waiters++;
            pthread_cond_timedwait(&self->cv, &self->mu, &ts);
            self->prog.cv_waiters--;
            continue;
        }
        int t = 0;
        if (now >= spin_until) {
            if (!armed)                 /* past the spin: the live view's moment */
                armed = s_arm_status(self, start, note_at, &status_at, &hook_at);
            int64_t left = deadline ? (deadline - now + 999) / 1000 : 1000;
            if (self->hooks.alive.fn && live_us > 0 && (next_ask - now + 999) / 1000 < left)
                left = (next_ask - now + 999) / 1000;
            if (hook_at && (hook_at - now + 999) / 1000 < left)
                left = (hook_at - now + 999) / 1000;
            t = left > 1000 ? 1000 : (int)left;
            if (poll_cap_ms > 0 && t > poll_cap_ms)
                t = poll_cap_ms;
            if (t < 1)
                t = 1;
        }
        if (t == 0) {                   /* spinning: let a peer on our core run */
            pthread_mutex_unlock(&self->mu);
            if (now < hot_until)
                s_relax();
            else {
                if (hot_until) {
                    hot_until = 0;
                    if (self->prog.nshm + 1 <= self->prog.ncpu)
                        self->prog.hot_off = HOT_BACKOFF;
                }
                sched_yield();
            }
            pthread_mutex_lock(&self->mu);
        }
        self->prog.driving = t != 0;
        msg_drive(self, t, 1);
        self->prog.driving = 0;
    }
    __atomic_sub_fetch(&self->prog.app_blocked, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&self->prog.app_epoch, 1, __ATOMIC_RELAXED);
    return rc;
}

/*  msg_wait, bounded by timeout_ms too when > 0; that bound running out is no error (0). */
int msg_wait_upto(gimpi_msg_t *self, pred_t pred, void *arg, int timeout_ms)
{
    int saved = self->timeout_ms;
    int limited = timeout_ms > 0 && (saved <= 0 || timeout_ms < saved);
    if (limited)
        self->timeout_ms = timeout_ms;
    int rc = msg_wait(self, pred, arg, 0);
    self->timeout_ms = saved;
    if (rc && limited && !pred(self, arg)) {
        rc = 0;                         /* our own bound ran out: nothing arrived */
        self->errmsg[0] = 0;
    }
    return rc;
}

/*  The progress thread: polls the connections only while the application has stayed out
 *  of the library for IDLE_TAKEOVER_MS, so that peers are answered (credit, SYNCACKs,
 *  buffered data pushed out) while the application computes.  It dozes on its own mutex
 *  and reads the application's entry counters atomically, so that its periodic look does
 *  not contend for the context's lock while the application is busy in the library. */
void *msg_progress_main(void *arg)
{
    gimpi_msg_t *self = arg;
    pthread_mutex_lock(&self->prog.doze_mu);
    uint64_t seen = __atomic_load_n(&self->prog.app_epoch, __ATOMIC_RELAXED) + 1;
    while (!self->prog.stop) {
        uint64_t epoch = __atomic_load_n(&self->prog.app_epoch, __ATOMIC_RELAXED);
        if (__atomic_load_n(&self->prog.app_blocked, __ATOMIC_RELAXED) || epoch != seen) {
            seen = epoch;
            struct timespec ts = s_realtime_in(IDLE_TAKEOVER_MS * 1000000L);
            pthread_cond_timedwait(&self->prog.doze_cv, &self->prog.doze_mu, &ts);
            continue;
        }
        pthread_mutex_unlock(&self->prog.doze_mu);
        pthread_mutex_lock(&self->mu);
        if (!self->prog.stop && (self->dyn.nresolve || self->dyn.nverify))
            msg_resolve_later(self);
        if (!self->prog.stop)
            msg_drive(self, 1000, 0);
        pthread_mutex_unlock(&self->mu);
        pthread_mutex_lock(&self->prog.doze_mu);
    }
    pthread_mutex_unlock(&self->prog.doze_mu);
    return NULL;
}
