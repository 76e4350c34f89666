/*  gimpi_catch.c — the collector of spawned tasks' output (gimpi_catchout, PVM's
 *  pvm_catchout): the socket pair whose writing end the children inherit, the thread that
 *  turns their records into PVM-formatted lines on the catching task's FILE, and the
 *  bounded wait for their end (pvm_exit).  The records and the copier processes that send
 *  them are described in gimpi_catch.h; the spawn side is in gimpi_spawn.c.
 */
#include "task/gimpi_catch.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES (1 << 20)    /* a longer line without a newline is cut */

/*  A caught task whose output has not ended, and its unfinished line. */
typedef struct {
    int32_t tid;
    char *buf;
    size_t len, cap;
} open_t;

struct gimpi_catch_t {
    int inherited;              /* the spawner's collector (GIMPI_CATCHOUT_FD), or -1 */
    int rfd, wfd;               /* this task's own pair, -1 until it first catches */
    bool chosen;                /* gimpi_catch_set was called: the inherited one is out */
    bool running;               /* the thread runs */
    pthread_t thread;
    pthread_mutex_t mu;         /* the fields below */
    pthread_cond_t cv;          /* an EOF was written */
    FILE *to;                   /* NULL: catching is off, records are dropped */
    int flags;                  /* GIMPI_CATCHOUT_* */
    open_t *open;
    int nopen, capopen;
    uint32_t syncs;             /* CATCH_SYNC markers numbered so far */
    uint32_t synced;            /* the highest one the thread has read */
};

/*  The descriptor GIMPI_CATCHOUT_FD names when it is a SEQPACKET socket, else -1; the
 *  variable is removed either way (this task's children get it from this task). */
static int s_inherited(void)
{
    const char *v = gimpi_env(GIMPI_ENV_CATCHOUT_FD);
    int fd = -1;
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        int type = 0;
        socklen_t tl = sizeof type;
        if (!*end && n > 2 && n < 65536
            && getsockopt((int)n, SOL_SOCKET, SO_TYPE, &type, &tl) == 0
            && type == SOCK_SEQPACKET) {
            fd = (int)n;
            fcntl(fd, F_SETFD, FD_CLOEXEC);
        }
        unsetenv(GIMPI_ENV_CATCHOUT_FD);
    }
    return fd;
}

/*  Creates the collector state. */
gimpi_catch_t *gimpi_catch_new(void)
{
    gimpi_catch_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->inherited = s_inherited();
    self->rfd = self->wfd = -1;
    pthread_mutex_init(&self->mu, NULL);
    pthread_cond_init(&self->cv, NULL);
    return self;
}

/*  Sends one record. */
int gimpi_catch_send(int fd, int32_t tid, int32_t kind, const void *data, size_t len)
{
    char rec[CATCH_HDR + CATCH_CHUNK];
    if (len > CATCH_CHUNK)
        len = CATCH_CHUNK;
    memcpy(rec, &tid, 4);
    memcpy(rec + 4, &kind, 4);
    if (len)
        memcpy(rec + CATCH_HDR, data, len);
    for (;;) {
        ssize_t w = send(fd, rec, CATCH_HDR + len, MSG_NOSIGNAL);
        if (w >= 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

/*  The open entry of tid, made when add (NULL when absent and not added, or ENOMEM). */
static open_t *s_find(gimpi_catch_t *self, int32_t tid, bool add)
{
    for (int i = 0; i < self->nopen; i++)
        if (self->open[i].tid == tid)
            return &self->open[i];
    if (!add)
        return NULL;
    if (self->nopen == self->capopen) {
        int cap = self->capopen ? self->capopen * 2 : 16;
        open_t *o = realloc(self->open, (size_t)cap * sizeof *o);
        if (!o)
            return NULL;
        self->open = o;
        self->capopen = cap;
    }
    open_t *o = &self->open[self->nopen++];
    *o = (open_t){ .tid = tid };
    return o;
}

/*  Writes one line of tid (len bytes, no newline) in PVM's format. */
static void s_line(gimpi_catch_t *self, int32_t tid, const char *text, size_t len)
{
    if (self->flags & GIMPI_CATCHOUT_NOTIDS)
        fprintf(self->to, "%.*s\n", (int)len, text);
    else
        fprintf(self->to, "[t%x] %.*s\n", (unsigned)tid, (int)len, text);
}

/*  Forgets every open task. */
static void s_clear(gimpi_catch_t *self)
{
    for (int i = 0; i < self->nopen; i++)
        free(self->open[i].buf);
    self->nopen = 0;
}

/*  Appends data to tid's line and writes every line it completes. */
static void s_data(gimpi_catch_t *self, open_t *o, const char *data, size_t len)
{
    if (o->len + len > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + len)
            cap *= 2;
        char *b = realloc(o->buf, cap);
        if (!b)
            return;
        o->buf = b;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, data, len);
    o->len += len;
    size_t start = 0;
    for (size_t i = 0; i < o->len; i++)
        if (o->buf[i] == '\n') {
            s_line(self, o->tid, o->buf + start, i - start);
            start = i + 1;
        }
    if (o->len - start >= LINE_MAX_BYTES) {
        s_line(self, o->tid, o->buf + start, o->len - start);
        start = o->len;
    }
    memmove(o->buf, o->buf + start, o->len - start);
    o->len -= start;
}

/*  Handles one record (under the lock). */
static void s_record(gimpi_catch_t *self, int32_t tid, int32_t kind, const char *data,
                     size_t len)
{
    if (kind == CATCH_SYNC && tid == 0 && len == 4) {
        uint32_t seq;                   /* markers may arrive out of their order */
        memcpy(&seq, data, 4);
        if ((int32_t)(seq - self->synced) > 0)
            self->synced = seq;
        pthread_cond_broadcast(&self->cv);
        return;
    }
    if (!self->to || tid <= 0)
        return;                         /* catching is off: dropped, as PVM drops them */
    bool tids = !(self->flags & GIMPI_CATCHOUT_NOTIDS);
    open_t *o = s_find(self, tid, kind != CATCH_EOF);
    if (!o)
        return;
    if (kind == CATCH_BEGIN && tids)
        fprintf(self->to, "[t%x] BEGIN\n", (unsigned)tid);
    else if (kind == CATCH_DATA)
        s_data(self, o, data, len);
    else if (kind == CATCH_EOF) {
        if (o->len)                     /* an unfinished last line is a line */
            s_line(self, tid, o->buf, o->len);
        if (tids)
            fprintf(self->to, "[t%x] EOF\n", (unsigned)tid);
        free(o->buf);
        *o = self->open[--self->nopen];
        pthread_cond_broadcast(&self->cv);
    }
    fflush(self->to);
}

/*  The thread: reads records until the socket is shut down (gimpi_catch_destroy). */
static void *s_thread(void *arg)
{
    gimpi_catch_t *self = arg;
    char rec[CATCH_HDR + CATCH_CHUNK + 1];
    for (;;) {
        ssize_t r = recv(self->rfd, rec, sizeof rec, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < CATCH_HDR)
            break;
        int32_t tid, kind;
        memcpy(&tid, rec, 4);
        memcpy(&kind, rec + 4, 4);
        pthread_mutex_lock(&self->mu);
        s_record(self, tid, kind, rec + CATCH_HDR, (size_t)r - CATCH_HDR);
        pthread_mutex_unlock(&self->mu);
    }
    return NULL;
}

/*  Turns catching on (to) or off (NULL). */
int gimpi_catch_set(gimpi_catch_t *self, FILE *to, int flags)
{
    assert(self);
    pthread_mutex_lock(&self->mu);
    int rc = 0;
    if (to && self->wfd < 0) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
            rc = GIMPI_EOUTOFRES;
        else {
            self->rfd = sv[0];
            self->wfd = sv[1];
            if (pthread_create(&self->thread, NULL, s_thread, self) != 0) {
                close(sv[0]);
                close(sv[1]);
                self->rfd = self->wfd = -1;
                rc = GIMPI_EOUTOFRES;
            } else
                self->running = true;
        }
    }
    if (rc == 0) {
        self->chosen = true;
        if (self->to && self->to != to)
            fflush(self->to);
        self->to = to;
        self->flags = flags;
        if (!to)
            s_clear(self);
        pthread_cond_broadcast(&self->cv);
    }
    pthread_mutex_unlock(&self->mu);
    return rc;
}

/*  The descriptor children get, or -1. */
int gimpi_catch_fd(gimpi_catch_t *self)
{
    if (!self)
        return -1;
    pthread_mutex_lock(&self->mu);
    int fd = !self->chosen ? self->inherited : self->to ? self->wfd : -1;
    pthread_mutex_unlock(&self->mu);
    return fd;
}

/*  The CLOCK_REALTIME time timeout_ms (>= 0) from now, for pthread_cond_timedwait. */
static struct timespec s_deadline(int timeout_ms)
{
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    return end;
}

/*  Sends a numbered CATCH_SYNC on this task's own socket and waits, bounded, until the
 *  thread has read it: the socket keeps its records in the order they were sent, so every
 *  record sent before (a spawn's BEGIN, by its middle process) has been handled then. */
int gimpi_catch_sync(gimpi_catch_t *self, int fd, int timeout_ms)
{
    if (!self || fd < 0)
        return 0;
    pthread_mutex_lock(&self->mu);
    bool own = self->running && self->to && fd == self->wfd;
    uint32_t seq = ++self->syncs;
    pthread_mutex_unlock(&self->mu);
    if (!own)
        return 0;                       /* an ancestor's collector, or catching is off */
    if (gimpi_catch_send(fd, 0, CATCH_SYNC, &seq, sizeof seq) < 0)
        return GIMPI_ESYSERR;
    struct timespec end = s_deadline(timeout_ms);
    pthread_mutex_lock(&self->mu);
    int rc = 0;
    while (rc == 0 && (int32_t)(seq - self->synced) > 0)
        rc = pthread_cond_timedwait(&self->cv, &self->mu, &end);
    bool seen = (int32_t)(seq - self->synced) <= 0;
    pthread_mutex_unlock(&self->mu);
    return seen ? 0 : GIMPI_ESYSERR;
}

/*  Open caught tasks. */
int gimpi_catch_open(gimpi_catch_t *self)
{
    if (!self)
        return 0;
    pthread_mutex_lock(&self->mu);
    int n = self->to ? self->nopen : 0;
    pthread_mutex_unlock(&self->mu);
    return n;
}

/*  Waits, bounded, for the open tasks' EOF. */
int gimpi_catch_wait(gimpi_catch_t *self, int timeout_ms)
{
    if (!self)
        return 0;
    struct timespec end = s_deadline(timeout_ms);
    pthread_mutex_lock(&self->mu);
    while (self->to && self->nopen > 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&self->cv, &self->mu);
        else if (pthread_cond_timedwait(&self->cv, &self->mu, &end) == ETIMEDOUT)
            break;
    }
    int n = self->to ? self->nopen : 0;
    pthread_mutex_unlock(&self->mu);
    return n;
}

/*  Stops the thread and frees. */
void gimpi_catch_destroy(gimpi_catch_t **self_p)
{
    assert(self_p);
    gimpi_catch_t *self = *self_p;
    if (!self)
        return;
    if (self->running) {
        shutdown(self->rfd, SHUT_RDWR);     /* its recv returns 0 */
        pthread_join(self->thread, NULL);
    }
    if (self->to)
        fflush(self->to);
    if (self->rfd >= 0)
        close(self->rfd);
    if (self->wfd >= 0)
        close(self->wfd);
    if (self->inherited >= 0)
        close(self->inherited);
    s_clear(self);
    free(self->open);
    pthread_cond_destroy(&self->cv);
    pthread_mutex_destroy(&self->mu);
    free(self);
    *self_p = NULL;
}
