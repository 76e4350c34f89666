/*  gimpi_kids.c — the watch over a task's unregistered children (gimpi_kids.h).  A child
 *  spawned on this host that dies before its first PVM call never registers, so groupd
 *  never sees it end and nobody's PvmTaskExit notice for it would come.  The spawner keeps
 *  a pidfd per such child; gimpi_kids_reap, run while the task waits for notices and at
 *  each spawn, polls them without blocking and sends SPAWN_EXIT for each one that ended,
 *  with the token of the child's block (only the spawner and the child hold it).  groupd
 *  publishes it once: a child that registered is left to its connection.  A child that has
 *  registered is dropped from the list when a LOOKUP says so (asked 1 s after the spawn,
 *  then less and less often), so that the list does not hold a descriptor per live task;
 *  and a child whose descriptor would lie in the last quarter of the descriptor table
 *  (RLIMIT_NOFILE: a spawn of many children at once) is not watched, so that the watch
 *  never takes the descriptors the data plane needs for its connections.
 *
 *  Zombies: children are started through a middle process, so they are normally the
 *  system's (or a launcher's) to reap.  But a task that is its namespace's first process
 *  (a container's) or a child subreaper adopts them itself, and would keep each dead one
 *  as its zombie: such a task keeps watching every child, and every tagger or copier of
 *  a spawn (tid 0 here: never told to groupd), until it ends and reaps it through its
 *  pidfd (waitid P_PIDFD, which touches no other child of the program).
 */
#include "task/gimpi_kids.h"
#include "base/gimpi_key.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
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
};

/*  An empty list. */
gimpi_kids_t *gimpi_kids_new(void)
{
    gimpi_kids_t *self = calloc(1, sizeof(gimpi_kids_t));
    int sub = 0;
    if (self) {
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

/*  Closes and frees. */
void gimpi_kids_destroy(gimpi_kids_t **self_p)
{
    assert(self_p);
    gimpi_kids_t *self = *self_p;
    if (!self)
        return;
    while (self->n > 0)
        s_drop(self, self->n - 1);
    free(self->k);
    free(self->pfd);
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
    return 0;
}

/*  Reports the ended children, forgets the registered ones; another thread reaping
 *  meanwhile makes this call do nothing. */
int gimpi_kids_reap(gimpi_kids_t *self, gimpi_groups_t *gd)
{
    assert(self);
    if (!gd || pthread_mutex_trylock(&self->mu) != 0)
        return 0;
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
        int rc = gimpi_group_lookup(gd, e->tid, &info);
        if (rc == 0 || rc == GIMPI_ENOTASK) {
            s_drop(self, i);            /* registered (or gone): no longer ours to tell */
            continue;
        }
        e->look_ms = e->look_ms * 2 < MAX_LOOK_MS ? e->look_ms * 2 : MAX_LOOK_MS;
        e->look_at = now + e->look_ms;
    }
    pthread_mutex_unlock(&self->mu);
    return reported;
}
