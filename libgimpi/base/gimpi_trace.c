/*  gimpi_trace.c — the task's trace recorder (gimpi_trace.h): records of gimpi_tev.h's
 *  format gathered in one malloc'd ring of a fixed size, written with write(2) in append
 *  mode to DIR/<tid in hex>.gtev when the ring is full and at the end, then the ring
 *  starts over: memory stays bounded by the ring whatever the task does, and the task
 *  never waits for anyone but its own write.  The file header is written with the first
 *  flush (when the tid is known).  Messages are numbered per peer: the n-th message sent
 *  to a task gets seq n, and the receiver numbers arrivals from each source the same
 *  way (a sender's messages arrive in order), which lets a reader pair them.
 *
 *  Time: CLOCK_REALTIME costs more than the rest of a record, so on x86 the recorder
 *  reads the CPU's time-stamp counter and maps it onto CLOCK_REALTIME: the scale is
 *  measured once 2 ms have passed since the first record (until then each record reads
 *  the clock), and again, over the whole run, at every flush.
 */
#include "base/gimpi_trace.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TRACE_TSC 1
#else
#define TRACE_TSC 0
#endif

enum { STR_MAX = 1024, MIN_RING = 4096 };

/*  Counts per peer tid: open addressing, keys != 0, doubles at half full. */
typedef struct {
    int *key;
    int *val;
    size_t cap;
    size_t n;
} counts_t;

struct gimpi_trace_t {
    uint8_t *ring;
    size_t cap, used;
    long nrec;                  /* records in the ring */
    long lost;                  /* records lost to failed writes, in all */
    long unreported;            /* ... not yet told by a LOST record */
    long inring;                /* ... told by the LOST record in the ring (not yet out) */
    int fd;                     /* -1 until the first flush */
    int failed_open;            /* the file could not be made: every flush loses */
    gimpi_tev_file_t head;
    char dir[PATH_MAX];
    counts_t sent, arrived;
    int64_t base_ns;            /* CLOCK_REALTIME ... */
    uint64_t base_tsc;          /* ... and the time-stamp counter at the first record */
    double ns_per_tick;         /* the counter's scale, 0 until measured */
};

/*  Local CLOCK_REALTIME in nanoseconds. */
static int64_t s_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*  The time-stamp counter (0 where there is none). */
static uint64_t s_tsc(void)
{
#if TRACE_TSC
    return __rdtsc();
#else
    return 0;
#endif
}

/*  Measures the counter's scale against the clock (once 2 ms have passed since the
 *  first reading); returns the clock. */
static int64_t s_calibrate(gimpi_trace_t *self)
{
    int64_t ns = s_clock();
    uint64_t tsc = s_tsc();
    if (!self->base_tsc) {
        self->base_ns = ns;
        self->base_tsc = tsc;
    } else if (ns - self->base_ns >= 2000000 && tsc > self->base_tsc) {
        double k = (double)(ns - self->base_ns) / (double)(tsc - self->base_tsc);
        self->ns_per_tick = k > 0 && k < 100 ? k : 0;
    }
    return ns;
}

/*  Now, on the writing host's CLOCK_REALTIME (ns). */
static int64_t s_now(gimpi_trace_t *self)
{
    if (TRACE_TSC && self->ns_per_tick > 0)
        return self->base_ns
             + (int64_t)((double)(s_tsc() - self->base_tsc) * self->ns_per_tick);
    return s_calibrate(self);
}

/*  The slot of key k in c (its key 0 when absent); c has room. */
static size_t s_slot(const counts_t *c, int k)
{
    size_t h = ((uint32_t)k * 2654435761u) & (c->cap - 1);
    while (c->key[h] && c->key[h] != k)
        h = (h + 1) & (c->cap - 1);
    return h;
}

/*  Adds 1 to key k's count and returns it (0 when out of memory). */
static int s_bump(counts_t *c, int k)
{
    if (k == 0)
        k = INT_MIN;            /* 0 marks a free slot */
    if (2 * (c->n + 1) > c->cap) {
        counts_t g = { calloc(c->cap ? 2 * c->cap : 64, sizeof(int)),
                       calloc(c->cap ? 2 * c->cap : 64, sizeof(int)),
                       c->cap ? 2 * c->cap : 64, c->n };
        if (!g.key || !g.val) {
            free(g.key);
            free(g.val);
            return 0;
        }
        for (size_t i = 0; i < c->cap; i++)
            if (c->key[i]) {
                size_t h = s_slot(&g, c->key[i]);
                g.key[h] = c->key[i];
                g.val[h] = c->val[i];
            }
        free(c->key);
        free(c->val);
        *c = g;
    }
    size_t h = s_slot(c, k);
    if (!c->key[h]) {
        c->key[h] = k;
        c->n++;
    }
    return ++c->val[h];
}

/*  Reads GIMPI_TRACE_OFFSET ("offset_ns,err_ns") into the header (absent: 0, 0). */
static void s_offset(gimpi_tev_file_t *h)
{
    const char *v = gimpi_env("GIMPI_TRACE_OFFSET");
    if (!v || !*v)
        return;
    char *end;
    h->offset_ns = strtoll(v, &end, 10);
    if (*end == ',')
        h->offset_err_ns = strtoll(end + 1, NULL, 10);
}

/*  A new recorder. */
gimpi_trace_t *gimpi_trace_new(const char *dir, size_t ring_bytes)
{
    assert(dir);
    gimpi_trace_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->cap = ring_bytes ? ring_bytes : GIMPI_TRACE_BUFFER_DEFAULT;
    if (self->cap < MIN_RING)
        self->cap = MIN_RING;
    self->ring = malloc(self->cap);
    if (!self->ring) {
        free(self);
        return NULL;
    }
    self->fd = -1;
    snprintf(self->dir, sizeof self->dir, "%s", dir);
    gimpi_tev_file_t *h = &self->head;
    h->magic = GIMPI_TEV_MAGIC;
    h->version = GIMPI_TEV_VERSION;
    h->pid = (int32_t)getpid();
    h->start_ns = s_clock();
    const char *host = gimpi_env("GIMPI_HOST");
    if (host && *host)
        snprintf(h->host, sizeof h->host, "%s", host);
    else if (gethostname(h->host, sizeof h->host - 1) != 0)
        snprintf(h->host, sizeof h->host, "localhost");
    s_offset(h);
    return self;
}

/*  Flushes and frees. */
void gimpi_trace_destroy(gimpi_trace_t **self_p)
{
    assert(self_p);
    gimpi_trace_t *self = *self_p;
    if (!self)
        return;
    gimpi_trace_flush(self);
    if (self->fd >= 0)
        close(self->fd);
    free(self->ring);
    free(self->sent.key);
    free(self->sent.val);
    free(self->arrived.key);
    free(self->arrived.val);
    free(self);
    *self_p = NULL;
}

/*  Sets the tid and program. */
void gimpi_trace_set_task(gimpi_trace_t *self, int tid, const char *program)
{
    assert(self);
    self->head.tid = tid;
    if (program) {
        const char *slash = strrchr(program, '/');
        snprintf(self->head.program, sizeof self->head.program, "%s",
                 slash ? slash + 1 : program);
    }
}

/*  The tid set. */
int gimpi_trace_tid(const gimpi_trace_t *self)
{
    assert(self);
    return self->head.tid;
}

/*  Records lost. */
long gimpi_trace_lost(const gimpi_trace_t *self)
{
    assert(self);
    return self->lost;
}

/*  Opens the file and writes its header: 0, or -1 (the recorder stops trying). */
static int s_open(gimpi_trace_t *self)
{
    char path[PATH_MAX + 32];
    if (self->head.tid)
        snprintf(path, sizeof path, "%s/%x%s", self->dir, (unsigned)self->head.tid,
                 GIMPI_TEV_SUFFIX);
    else
        snprintf(path, sizeof path, "%s/pid%d%s", self->dir, (int)self->head.pid,
                 GIMPI_TEV_SUFFIX);
    self->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (self->fd < 0
        || write(self->fd, &self->head, sizeof self->head) != (ssize_t)sizeof self->head) {
        if (self->fd >= 0)
            close(self->fd);
        self->fd = -1;
        self->failed_open = 1;
        return -1;
    }
    return 0;
}

/*  Writes n bytes whole (restarting after signals): 0 or -1. */
static int s_write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/*  Appends a record made at time t to the ring, which has room for it. */
static void s_put(gimpi_trace_t *self, int64_t t, int kind, int ev, const int *i, int n,
                  const char *s)
{
    size_t slen = s ? strnlen(s, STR_MAX) : 0;
    size_t len = sizeof(gimpi_tev_rec_t) + ((slen + 7) & ~(size_t)7);
    gimpi_tev_rec_t *r = (gimpi_tev_rec_t *)(void *)(self->ring + self->used);
    *r = (gimpi_tev_rec_t){ .len = (uint32_t)len, .kind = (uint16_t)kind,
                            .ev = (uint16_t)ev, .t_ns = t, .slen = (uint16_t)slen };
    for (int k = 0; k < n && k < GIMPI_TEV_INTS; k++)
        r->i[k] = i[k];
    if (slen) {
        uint8_t *str = (uint8_t *)(r + 1);
        memcpy(str, s, slen);
        memset(str + slen, 0, len - sizeof *r - slen);
    }
    self->used += len;
    self->nrec++;
}

/*  Writes the ring out and empties it. */
int gimpi_trace_flush(gimpi_trace_t *self)
{
    assert(self);
    if (!self->used)
        return 0;
    int rc = -1;
    if (self->fd >= 0 || (!self->failed_open && s_open(self) == 0))
        rc = s_write_all(self->fd, self->ring, self->used);
    if (TRACE_TSC && self->base_tsc)
        s_calibrate(self);      /* the scale, over the whole run so far */
    if (rc < 0) {               /* a LOST record that did not go out is told again */
        long real = self->nrec - (self->inring ? 1 : 0);
        self->lost += real;
        self->unreported += self->inring + real;
    }
    self->inring = 0;
    self->used = 0;
    self->nrec = 0;
    return rc;
}

/*  Makes room for a record (flushing the ring when full) and puts a pending LOST record
 *  first. */
static void s_room(gimpi_trace_t *self, int64_t t)
{
    size_t need = 2 * sizeof(gimpi_tev_rec_t) + STR_MAX + 8;
    if (self->used + need > self->cap)
        gimpi_trace_flush(self);
    if (self->unreported) {
        int lost[1] = { self->unreported > INT_MAX ? INT_MAX : (int)self->unreported };
        s_put(self, t, GIMPI_TEV_LOST, 0, lost, 1, NULL);
        self->inring = self->unreported;
        self->unreported = 0;
    }
}

/*  Appends one record. */
void gimpi_trace_rec(gimpi_trace_t *self, int kind, int ev, const int *i, int n,
                     const char *s)
{
    assert(self);
    int64_t t = s_now(self);
    s_room(self, t);
    s_put(self, t, kind, ev, i, n, s);
}

/*  A SEND record with the next seq for dst. */
void gimpi_trace_send(gimpi_trace_t *self, int dst, int tag, int ctxid, int bytes)
{
    assert(self);
    int v[5] = { dst, tag, ctxid, bytes, s_bump(&self->sent, dst) };
    gimpi_trace_rec(self, GIMPI_TEV_SEND, 0, v, 5, NULL);
}

/*  SEND records for one message to many, all at one time. */
void gimpi_trace_sends(gimpi_trace_t *self, const int *dsts, int n, int skip, int tag,
                       int ctxid, int bytes)
{
    assert(self);
    int64_t t = s_now(self);
    for (int k = 0; k < n; k++)
        if (dsts[k] > 0 && dsts[k] != skip) {
            int v[5] = { dsts[k], tag, ctxid, bytes, s_bump(&self->sent, dsts[k]) };
            s_room(self, t);
            s_put(self, t, GIMPI_TEV_SEND, 0, v, 5, NULL);
        }
}

/*  The seq of an arrival from src. */
int gimpi_trace_arrive(gimpi_trace_t *self, int src)
{
    assert(self);
    return s_bump(&self->arrived, src);
}
