/*  gimpi_loop.c — the poll()-based event loop declared in gimpi_loop.h.
 *
 *  Descriptors live in an array indexed by the descriptor number (as in Redis' ae), so
 *  lookups are direct.  Every round rebuilds the pollfd array from the descriptors that
 *  have an interest, remembering each one's registration generation: a callback that
 *  deletes (or deletes and re-adds) another descriptor during the round thus never gets
 *  a stale event delivered to the wrong owner.  Timers are a small unsorted array scanned
 *  linearly; due timers of a round are fired in order of their due time, looked up by id
 *  just before each call so that cancellations made by earlier callbacks are honoured.
 */
#include "server/gimpi_loop.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    bool used;                  /* registered */
    int events;                 /* READ | WRITE interest */
    unsigned gen;               /* registration generation */
    gimpi_loop_fd_fn *fn;
    void *arg;
} s_fd_t;

typedef struct {
    int id;
    int64_t due;                /* monotonic ms */
    int64_t interval;           /* 0: one-shot */
    gimpi_loop_timer_fn *fn;
    void *arg;
} s_timer_t;

struct gimpi_loop_t {
    s_fd_t *fds;                /* indexed by descriptor */
    int nfds_cap;
    int nused;                  /* registered descriptors */
    unsigned next_gen;
    struct pollfd *pfds;        /* per-round poll set */
    unsigned *pgens;            /* generation of each pfds entry */
    int pcap;
    s_timer_t *timers;
    int ntimers, tcap;
    int next_id;
    bool stop;
};

/*  Milliseconds on the monotonic clock. */
int64_t gimpi_loop_now_ms(void)
{
    return gimpi_now_ms();
}

/*  A new, empty loop. */
gimpi_loop_t *gimpi_loop_new(void)
{
    gimpi_loop_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->next_gen = 1;
    self->next_id = 1;
    return self;
}

/*  Frees the loop (not the descriptors). */
void gimpi_loop_destroy(gimpi_loop_t **self_p)
{
    assert(self_p);
    gimpi_loop_t *self = *self_p;
    if (!self)
        return;
    free(self->fds);
    free(self->pfds);
    free(self->pgens);
    free(self->timers);
    free(self);
    *self_p = NULL;
}

/*  Entry of fd when it is registered, else NULL. */
static s_fd_t *s_entry(gimpi_loop_t *self, int fd)
{
    if (fd < 0 || fd >= self->nfds_cap || !self->fds[fd].used)
        return NULL;
    return &self->fds[fd];
}

/*  Watches fd (or replaces its registration). */
int gimpi_loop_fd_add(gimpi_loop_t *self, int fd, int events, gimpi_loop_fd_fn *fn, void *arg)
{
    assert(self);
    if (fd < 0 || !fn)
        return -1;
    if (fd >= self->nfds_cap) {
        int cap = self->nfds_cap ? self->nfds_cap : 64;
        while (cap <= fd)
            cap *= 2;
        s_fd_t *fds = realloc(self->fds, (size_t)cap * sizeof *fds);
        if (!fds)
            return -1;
        memset(fds + self->nfds_cap, 0, (size_t)(cap - self->nfds_cap) * sizeof *fds);
        self->fds = fds;
        self->nfds_cap = cap;
    }
    s_fd_t *e = &self->fds[fd];
    if (!e->used) {
        e->used = true;
        e->gen = self->next_gen++;
        self->nused++;
    }
    e->events = events & (GIMPI_LOOP_READ | GIMPI_LOOP_WRITE);
    e->fn = fn;
    e->arg = arg;
    return 0;
}

/*  Changes the interest of fd. */
int gimpi_loop_fd_set(gimpi_loop_t *self, int fd, int events)
{
    assert(self);
    s_fd_t *e = s_entry(self, fd);
    if (!e)
        return -1;
    e->events = events & (GIMPI_LOOP_READ | GIMPI_LOOP_WRITE);
    return 0;
}

/*  Current interest of fd, -1 when not watched. */
int gimpi_loop_fd_events(gimpi_loop_t *self, int fd)
{
    assert(self);
    s_fd_t *e = s_entry(self, fd);
    return e ? e->events : -1;
}

/*  Stops watching fd. */
int gimpi_loop_fd_del(gimpi_loop_t *self, int fd)
{
    assert(self);
    s_fd_t *e = s_entry(self, fd);
    if (!e)
        return -1;
    memset(e, 0, sizeof *e);
    self->nused--;
    return 0;
}

/*  Arms a timer; returns its id. */
int gimpi_loop_timer_add(gimpi_loop_t *self, int64_t ms, int repeat,
                         gimpi_loop_timer_fn *fn, void *arg)
{
    assert(self);
    if (!fn || ms < 0 || (repeat && ms < 1))
        return -1;
    if (self->ntimers == self->tcap) {
        int cap = self->tcap ? self->tcap * 2 : 8;
        s_timer_t *t = realloc(self->timers, (size_t)cap * sizeof *t);
        if (!t)
            return -1;
        self->timers = t;
        self->tcap = cap;
    }
    if (self->next_id <= 0)     /* wrapped after 2^31 timers */
        self->next_id = 1;
    s_timer_t *t = &self->timers[self->ntimers++];
    t->id = self->next_id++;
    t->due = gimpi_loop_now_ms() + ms;
    t->interval = repeat ? ms : 0;
    t->fn = fn;
    t->arg = arg;
    return t->id;
}

/*  Index of timer id, or -1. */
static int s_timer_index(gimpi_loop_t *self, int id)
{
    for (int i = 0; i < self->ntimers; i++)
        if (self->timers[i].id == id)
            return i;
    return -1;
}

/*  Removes the timer at index i (order is not kept). */
static void s_timer_remove(gimpi_loop_t *self, int i)
{
    self->timers[i] = self->timers[--self->ntimers];
}

/*  Cancels a timer. */
int gimpi_loop_timer_cancel(gimpi_loop_t *self, int id)
{
    assert(self);
    int i = s_timer_index(self, id);
    if (i < 0)
        return -1;
    s_timer_remove(self, i);
    return 0;
}

/*  Milliseconds until the earliest timer (0 when one is due), or -1 without timers. */
static int64_t s_next_timer_ms(gimpi_loop_t *self, int64_t now)
{
    int64_t best = -1;
    for (int i = 0; i < self->ntimers; i++) {
        int64_t left = self->timers[i].due - now;
        if (left < 0)
            left = 0;
        if (best < 0 || left < best)
            best = left;
    }
    return best;
}

/*  Builds this round's poll set; returns its size or -1 when out of memory. */
static int s_build_pollset(gimpi_loop_t *self)
{
    if (self->pcap < self->nused) {
        int cap = self->nused * 2;
        struct pollfd *p = realloc(self->pfds, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        self->pfds = p;
        unsigned *g = realloc(self->pgens, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        self->pgens = g;
        self->pcap = cap;
    }
    int n = 0;
    for (int fd = 0; fd < self->nfds_cap && n < self->nused; fd++) {
        s_fd_t *e = &self->fds[fd];
        if (!e->used || !e->events)
            continue;
        self->pfds[n].fd = fd;
        self->pfds[n].events = (short)(((e->events & GIMPI_LOOP_READ) ? POLLIN : 0) |
                                       ((e->events & GIMPI_LOOP_WRITE) ? POLLOUT : 0));
        self->pfds[n].revents = 0;
        self->pgens[n] = e->gen;
        n++;
    }
    return n;
}

/*  Fires the timers due at `now`, earliest first; returns how many fired. */
static int s_fire_timers(gimpi_loop_t *self, int64_t now)
{
    /* snapshot the due ids first: callbacks may add or cancel timers */
    int ndue = 0;
    for (int i = 0; i < self->ntimers; i++)
        if (self->timers[i].due <= now)
            ndue++;
    if (ndue == 0)
        return 0;
    /* the earliest 64 per round; any others are still due and fire next round (the
       poll timeout is then 0) */
    enum { MAX_PER_ROUND = 64 };
    int cap = ndue > MAX_PER_ROUND ? MAX_PER_ROUND : ndue;
    struct { int id; int64_t due; } due[cap];
    int n = 0;
    for (int i = 0; i < self->ntimers; i++) {
        const s_timer_t *t = &self->timers[i];
        if (t->due > now || (n == cap && t->due >= due[n - 1].due))
            continue;
        int j = n < cap ? n++ : n - 1;  /* insertion sort; a full array drops its last */
        while (j > 0 && due[j - 1].due > t->due) {
            due[j] = due[j - 1];
            j--;
        }
        due[j].id = t->id;
        due[j].due = t->due;
    }
    int fired = 0;
    for (int k = 0; k < n; k++) {
        int i = s_timer_index(self, due[k].id);
        if (i < 0)
            continue;           /* cancelled by an earlier callback */
        s_timer_t t = self->timers[i];
        if (t.interval > 0) {
            self->timers[i].due += t.interval;
            if (self->timers[i].due <= now)  /* fell behind: do not burst */
                self->timers[i].due = now + t.interval;
        } else {
            s_timer_remove(self, i);
        }
        t.fn(self, t.id, t.arg);
        fired++;
    }
    return fired;
}

/*  One round: wait, then dispatch ready descriptors and due timers. */
int gimpi_loop_run_once(gimpi_loop_t *self, int timeout_ms)
{
    assert(self);
    int n = s_build_pollset(self);
    if (n < 0)
        return -1;
    int64_t now = gimpi_loop_now_ms();
    int64_t wait = s_next_timer_ms(self, now);
    if (timeout_ms >= 0 && (wait < 0 || timeout_ms < wait))
        wait = timeout_ms;
    if (wait > 0x7fffffff)
        wait = 0x7fffffff;
    int rc = poll(self->pfds, (nfds_t)n, (int)wait);
    if (rc < 0) {
        if (errno == EINTR)
            return 0;
        return -1;
    }
    int calls = 0;
    for (int k = 0; k < n && rc > 0; k++) {
        struct pollfd *p = &self->pfds[k];
        if (!p->revents)
            continue;
        s_fd_t *e = s_entry(self, p->fd);
        if (!e || e->gen != self->pgens[k])
            continue;           /* deleted (or replaced by a new owner) this round */
        int ready = 0;
        if (p->revents & POLLIN)
            ready |= GIMPI_LOOP_READ;
        if (p->revents & POLLOUT)
            ready |= GIMPI_LOOP_WRITE;
        if (p->revents & (POLLERR | POLLHUP | POLLNVAL))
            ready |= GIMPI_LOOP_ERROR | e->events;
        ready &= e->events | GIMPI_LOOP_ERROR;
        if (!ready)
            continue;           /* interest dropped by an earlier callback */
        e->fn(self, p->fd, ready, e->arg);
        calls++;
    }
    calls += s_fire_timers(self, gimpi_loop_now_ms());
    return calls;
}

/*  True when some descriptor has an interest or some timer is armed. */
static bool s_has_work(gimpi_loop_t *self)
{
    if (self->ntimers > 0)
        return true;
    for (int fd = 0; fd < self->nfds_cap; fd++)
        if (self->fds[fd].used && self->fds[fd].events)
            return true;
    return false;
}

/*  Rounds until stopped or idle for good. */
int gimpi_loop_run(gimpi_loop_t *self)
{
    assert(self);
    self->stop = false;
    while (!self->stop && s_has_work(self))
        if (gimpi_loop_run_once(self, -1) < 0)
            return -1;
    self->stop = false;
    return 0;
}

/*  Asks gimpi_loop_run() to return. */
void gimpi_loop_stop(gimpi_loop_t *self)
{
    assert(self);
    self->stop = true;
}
