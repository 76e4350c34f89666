/*  gimpi_kids.c — the watch over a task's unregistered children (gimpi_kids.h).  A child
 *  spawned on this host that dies before its first PVM call never registers, so groupd
 *  never sees it end and nobody's PvmTaskExit notice for it would come.  The spawner keeps
 *  a pidfd per such child and a watcher thread, started at the first spawn, waits on them
 *  in poll(2) and sends SPAWN_EXIT for each one that ended, with the token of the child's
 *  block (only the spawner and the child hold it), over a groupd connection of its own
 *  (zmq sockets are not thread-safe: the task's is not touched).  The notice thus goes
 *  out at once whatever the spawner does meanwhile: computing, or blocked outside PVM.
 *  groupd publishes it once: a child that registered is left to its connection.  A child
 *  that has registered is dropped from the list when a LOOKUP says so (asked 1 s after
 *  the spawn, then less and less often), so that the list does not hold a descriptor per
 *  live task; and a child whose descriptor would lie in the last quarter of the
 *  descriptor table (RLIMIT_NOFILE: a spawn of many children at once) is not watched, so
 *  that the watch never takes the descriptors the data plane needs for its connections.
 *  When the watcher cannot start (no thread, no connection), gimpi_kids_reap does the
 *  same from the task's own calls, as before.
 *
 *  The spawner's end: children still watched then (alive, not registered yet) are handed
 *  to an heir, a small process forked off (twice: nobody's zombie) that holds only their
 *  pidfds and keeps the watch over its own groupd connection until each has registered or
 *  ended, then exits.  So a child that dies after its spawner exited is reported too.
 *
 *  Zombies: children are started through a middle process, so they are normally the
 *  system's (or a launcher's) to reap.  But a task that is its namespace's first process
 *  (a container's) or a child subreaper adopts them itself, and would keep each dead one
 *  as its zombie: such a task keeps watching every child, and every tagger or copier of
 *  a spawn (tid 0 here: never told to groupd), until it ends and reaps it through its
 *  pidfd (waitid P_PIDFD, which touches no other child of the program).  Such a task has
 *  no heir: its children end with it (pid 1) or stay its own.
 */
#include "task/gimpi_kids.h"
#include "base/gimpi_key.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIRST_LOOK_MS 1000      /* the first LOOKUP of a child: it has had time to register */
#define MAX_LOOK_MS 30000       /* the longest pause between LOOKUPs */
#define LOOKS_PER_REAP 4        /* LOOKUPs one reap may make (each is a round trip) */
#define HEIR_LOOK_MS 500        /* the heir's longest pause between LOOKUPs */
#ifndef P_PIDFD
#define P_PIDFD 3               /* waitid's id type for a pidfd (Linux 5.4) */
#endif

typedef struct {
    int tid;
    int fd;                     /* readable once it ended */
    int64_t look_at;            /* when to ask groupd whether it registered */
    int look_ms;                /* the pause after that */
    char token[GIMPI_GROUPS_TOKEN_LEN + 1];
} kid_t;

struct gimpi_kids_t {
    kid_t *k;
    int n, cap;
    struct pollfd *pfd;         /* scratch for reap, cap entries */
    int adopter;                /* our children's orphans are ours: reap each one */
    pthread_mutex_t mu;         /* spawns and reaps may come from two threads */
    char *endpoint;             /* groupd's, for the watcher's connection (or NULL) */
    gimpi_groups_t *own;        /* the watcher's (or the heir's) groupd connection */
    pthread_t thread;
    int watching;               /* the watcher thread runs: it alone reaps */
    int max_look_ms;            /* the longest pause between LOOKUPs */
    int wake;                   /* eventfd: a new child, or stop */
    int stop;                   /* (lock held) the watcher is to end */
};

/*  An empty list. */
gimpi_kids_t *gimpi_kids_new(void)
{
    gimpi_kids_t *self = calloc(1, sizeof(gimpi_kids_t));
    int sub = 0;
    if (self) {
        self->max_look_ms = MAX_LOOK_MS;
        self->wake = -1;
        self->adopter = getpid() == 1
                        || (prctl(PR_GET_CHILD_SUBREAPER, &sub, 0, 0, 0) == 0 && sub);
        pthread_mutex_init(&self->mu, NULL);
    }
    return self;
}

/*  Forgets entry i (its descriptor closed, its token wiped). */
static void s_drop(gimpi_kids_t *self, int i)
{
    close(self->k[i].fd);
    gimpi_key_wipe(self->k[i].token, sizeof self->k[i].token);
    self->k[i] = self->k[--self->n];
}

static void s_handoff(gimpi_kids_t *self);

/*  Wakes the watcher (its eventfd; a full counter wakes it as well). */
static void s_kick(int wake)
{
    uint64_t one = 1;
    ssize_t r = write(wake, &one, sizeof one);
    (void)r;
}

/*  Stops the watcher thread, hands the children still watched to an heir, closes and
 *  frees. */
void gimpi_kids_destroy(gimpi_kids_t **self_p)
{
    assert(self_p);
    gimpi_kids_t *self = *self_p;
    if (!self)
        return;
    if (self->watching) {
        pthread_mutex_lock(&self->mu);
        self->stop = 1;
        pthread_mutex_unlock(&self->mu);
        s_kick(self->wake);
        pthread_join(self->thread, NULL);
        __atomic_store_n(&self->watching, 0, __ATOMIC_RELEASE);
    }
    s_handoff(self);
    gimpi_groups_destroy(&self->own);
    if (self->wake >= 0)
        close(self->wake);
    while (self->n > 0)
        s_drop(self, self->n - 1);
    free(self->k);
    free(self->pfd);
    free(self->endpoint);
    pthread_mutex_destroy(&self->mu);
    free(self);
    *self_p = NULL;
}

/*  Makes room for one more entry (lock held).  0 or GIMPI_ENOMEM. */
static int s_grow(gimpi_kids_t *self)
{
    if (self->n < self->cap)
        return 0;
    int cap = self->cap ? 2 * self->cap : 8;
    kid_t *k = realloc(self->k, (size_t)cap * sizeof *k);
    struct pollfd *p = k ? realloc(self->pfd, (size_t)cap * sizeof *p) : NULL;
    if (k)
        self->k = k;
    if (!p)
        return GIMPI_ENOMEM;
    self->pfd = p;
    self->cap = cap;
    return 0;
}

/*  Does this process adopt orphans? */
int gimpi_kids_adopter(gimpi_kids_t *self)
{
    assert(self);
    return self->adopter;
}

/*  Watches a helper process (tid 0, no token: reaped, never told). */
int gimpi_kids_add_helper(gimpi_kids_t *self, int alive_fd)
{
    return gimpi_kids_add(self, 0, alive_fd, NULL);
}

/*  Watches a child (tid 0: a helper). */
int gimpi_kids_add(gimpi_kids_t *self, int tid, int alive_fd, const char *token)
{
    assert(self);
    if (alive_fd < 0 || (tid != 0 && (!token || strlen(token) != GIMPI_GROUPS_TOKEN_LEN))) {
        if (alive_fd >= 0)
            close(alive_fd);
        return GIMPI_EBADPARAM;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
        && (rlim_t)alive_fd >= rl.rlim_cur / 4 * 3) {
        close(alive_fd);                /* the table is filling up: leave it the rest */
        return GIMPI_EOUTOFRES;
    }
    pthread_mutex_lock(&self->mu);
    if (s_grow(self) < 0) {
        pthread_mutex_unlock(&self->mu);
        close(alive_fd);
        return GIMPI_ENOMEM;
    }
    kid_t *e = &self->k[self->n++];
    *e = (kid_t){ .tid = tid, .fd = alive_fd, .look_ms = FIRST_LOOK_MS };
    e->look_at = gimpi_now_ms() + FIRST_LOOK_MS;
    if (token)
        memcpy(e->token, token, sizeof e->token);
    pthread_mutex_unlock(&self->mu);
    if (__atomic_load_n(&self->watching, __ATOMIC_ACQUIRE))
        s_kick(self->wake);             /* a running watcher polls the new one too */
    return 0;
}

/*  Reports the ended children through gd, forgets the registered ones (lock held).
 *  How many deaths were reported. */
static int s_reap_locked(gimpi_kids_t *self, gimpi_groups_t *gd)
{
    for (int i = 0; i < self->n; i++)
        self->pfd[i] = (struct pollfd){ .fd = self->k[i].fd, .events = POLLIN };
    int ended = poll(self->pfd, (nfds_t)self->n, 0);
    int reported = 0, looks = 0;
    int64_t now = gimpi_now_ms();
    for (int i = self->n - 1; i >= 0; i--) {    /* backwards: s_drop moves the last here */
        kid_t *e = &self->k[i];
        if (ended > 0 && self->pfd[i].revents) {
            siginfo_t si;               /* adopted: reaped; else ECHILD, nothing done */
            while (waitid(P_PIDFD, (id_t)e->fd, &si, WEXITED | WNOHANG) < 0 && errno == EINTR)
                ;
            /* EEXISTS: it registered and its connection tells; ENOTASK: already told */
            if (e->tid != 0 && gimpi_groups_spawn_exit(gd, e->tid, e->token) == 0)
                reported++;
            s_drop(self, i);
            continue;
        }
        if (self->adopter || e->tid == 0 || now < e->look_at || looks >= LOOKS_PER_REAP)
            continue;                   /* an adopter watches each child to its end */
        looks++;
        gimpi_task_info_t info;
        int rc = gimpi_groups_lookup_only(gd, e->tid, &info);
        if (rc == 0 || rc == GIMPI_ENOTASK) {
            s_drop(self, i);            /* registered (or gone): no longer ours to tell */
            continue;
        }
        e->look_ms = e->look_ms * 2 < self->max_look_ms ? e->look_ms * 2 : self->max_look_ms;
        e->look_at = now + e->look_ms;
    }
    return reported;
}

/*  Reports the ended children, forgets the registered ones; does nothing while the
 *  watcher thread runs (it does this itself) or while another thread reaps. */
int gimpi_kids_reap(gimpi_kids_t *self, gimpi_groups_t *gd)
{
    assert(self);
    if (!gd || __atomic_load_n(&self->watching, __ATOMIC_ACQUIRE)
        || pthread_mutex_trylock(&self->mu) != 0)
        return 0;
    int reported = s_reap_locked(self, gd);
    pthread_mutex_unlock(&self->mu);
    return reported;
}

/*  How long the watch may sleep before a LOOKUP is due (lock held): ms, or -1. */
static int s_next_look(gimpi_kids_t *self)
{
    int64_t now = gimpi_now_ms(), next = -1;
    for (int i = 0; i < self->n; i++) {
        const kid_t *e = &self->k[i];
        if (self->adopter || e->tid == 0)
            continue;
        int64_t left = e->look_at > now ? e->look_at - now : 0;
        if (next < 0 || left < next)
            next = left;
    }
    return (int)next;
}

/*  Waits for the watched children's ends (and LOOKUPs due) in poll(2) and reports each
 *  at once (lock held while it works, not while it waits). */
static void s_watch_loop(gimpi_kids_t *self, int wake, int until_empty)
{
    struct pollfd *p = NULL;
    int cap = 0;
    pthread_mutex_lock(&self->mu);
    while (!self->stop && !(until_empty && self->n == 0)) {
        if (self->n + 1 > cap) {
            struct pollfd *q = realloc(p, ((size_t)self->n + 1) * sizeof *q);
            if (q) {
                p = q;
                cap = self->n + 1;
            }
        }
        if (!p) {                       /* no memory for the list: look again later */
            pthread_mutex_unlock(&self->mu);
            poll(NULL, 0, 100);
            pthread_mutex_lock(&self->mu);
            continue;
        }
        int np = 0;
        if (wake >= 0)
            p[np++] = (struct pollfd){ .fd = wake, .events = POLLIN };
        for (int i = 0; i < self->n && np < cap; i++)
            p[np++] = (struct pollfd){ .fd = self->k[i].fd, .events = POLLIN };
        int timeout = np < self->n + (wake >= 0) ? 100 : s_next_look(self);
        pthread_mutex_unlock(&self->mu);
        poll(p, (nfds_t)np, timeout);
        uint64_t v;
        if (wake >= 0) {                /* (nothing to read when a child woke us) */
            ssize_t r = read(wake, &v, sizeof v);
            (void)r;
        }
        pthread_mutex_lock(&self->mu);
        if (!self->stop)
            s_reap_locked(self, self->own);
    }
    pthread_mutex_unlock(&self->mu);
    free(p);
}

/*  The watcher thread. */
static void *s_watcher(void *arg)
{
    gimpi_kids_t *self = arg;
    s_watch_loop(self, self->wake, 0);
    return NULL;
}

/*  Starts the watcher thread with its own groupd connection (made here, in the task's
 *  thread: connecting may start groupd); on any failure the task's calls reap. */
static void s_start_watch(gimpi_kids_t *self)
{
    self->own = gimpi_groups_new(self->endpoint, NULL);
    if (!self->own || gimpi_groups_fd(self->own) < 0) {
        gimpi_groups_destroy(&self->own);
        return;
    }
    self->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (self->wake < 0) {
        gimpi_groups_destroy(&self->own);
        return;
    }
    sigset_t all, old;                  /* the application's signals stay its threads' */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&self->thread, NULL, s_watcher, self);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(self->wake);
        self->wake = -1;
        gimpi_groups_destroy(&self->own);
        return;
    }
    __atomic_store_n(&self->watching, 1, __ATOMIC_RELEASE);
}

/*  Watches the children from now on in a thread of their own (gimpi_kids.h). */
void gimpi_kids_watch(gimpi_kids_t *self, const char *endpoint)
{
    assert(self);
    if (self->watching) {
        s_kick(self->wake);             /* a new child: the watcher polls it too */
        return;
    }
    if (self->endpoint || !endpoint || !(self->endpoint = strdup(endpoint)))
        return;                         /* (tried once: else the task's calls reap) */
    s_start_watch(self);
}

/*  Closes every descriptor from 3 up but the watched children's (the heir's start). */
static void s_heir_fds(gimpi_kids_t *self)
{
    int lo = 3;
    for (;;) {
        int next = INT_MAX;             /* the lowest kept descriptor from lo up */
        for (int i = 0; i < self->n; i++)
            if (self->k[i].fd >= lo && self->k[i].fd < next)
                next = self->k[i].fd;
        if (next > lo && syscall(SYS_close_range, (unsigned)lo, (unsigned)(next - 1), 0) < 0)
            for (int fd = lo; fd < next && fd < 65536; fd++)
                close(fd);
        if (next == INT_MAX)
            return;
        lo = next + 1;
    }
}

/*  The heir (a grandchild of the spawner that ends): keeps the watch over the children
 *  until each has registered or ended, on its own groupd connection, then exits. */
static void s_heir(gimpi_kids_t *self)
{
    setsid();
    prctl(PR_SET_NAME, "gimpi-heir", 0, 0, 0);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2(null, fd);
    for (int i = self->n - 1; i >= 0; i--)
        if (self->k[i].tid == 0)
            s_drop(self, i);            /* (helpers: an adopter's only, which has no heir) */
    s_heir_fds(self);
    int64_t now = gimpi_now_ms();
    self->max_look_ms = HEIR_LOOK_MS;   /* it ends as soon as its last child registered */
    for (int i = 0; i < self->n; i++)
        if (self->k[i].look_at > now + HEIR_LOOK_MS)
            self->k[i].look_at = now + HEIR_LOOK_MS;
    self->own = gimpi_groups_new(self->endpoint, NULL);     /* the parent's is not ours */
    self->stop = 0;
    if (self->own)
        s_watch_loop(self, -1, 1);
    _exit(0);
}

/*  At the spawner's end: the children still watched (alive, not registered yet) go to an
 *  heir, forked twice so that it is nobody's zombie. */
static void s_handoff(gimpi_kids_t *self)
{
    int real = 0;
    for (int i = 0; i < self->n; i++)
        real += self->k[i].tid != 0;
    if (self->adopter || !self->endpoint || real == 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        self->own = NULL;               /* (the parent's connection: left alone) */
        if (fork() == 0)
            s_heir(self);
        _exit(0);
    }
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}
