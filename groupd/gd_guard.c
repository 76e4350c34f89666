/*  gd_guard.c — the handshake guard and the memory trim (see gd_guard.h).  The
 *  connections in their handshake are a doubly linked list, oldest first, found by fd in
 *  a hash; a connection leaves the list when it ends, when it is found past its
 *  handshake, or when it is shut down.
 */
#include "config.h"
#include "groupd/gd_guard.h"
#include "base/gd_hash.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>

/*  A connection in its handshake. */
typedef struct conn_t {
    int fd;
    struct sockaddr_storage peer;       /* its peer at accept */
    socklen_t peerlen;
    int64_t since_ms;                   /* accepted when */
    struct conn_t *prev, *next;
} conn_t;

struct gd_guard_t {
    int max_pending;
    int npending;
    conn_t *oldest, *newest;
    gd_hash_t *by_fd;                   /* fd -> conn_t */
    gd_hash_t *subscribers;             /* the event socket's connections: fd -> conn_t */
    uint64_t evicted;
    int ends;                           /* connections ended since the last trim */
    int64_t last_trim_ms;
};

/*  A guard without connections. */
gd_guard_t *gd_guard_new(int max_pending)
{
    gd_guard_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->max_pending = max_pending;
    self->by_fd = gd_hash_new();
    self->subscribers = gd_hash_new();
    if (!self->by_fd || !self->subscribers)
        gd_guard_destroy(&self);
    return self;
}

/*  Frees a hash value (visitor). */
static void s_free_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l, (void)a;
    free(v);
}

/*  Frees the guard (the connections are libzmq's). */
void gd_guard_destroy(gd_guard_t **self_p)
{
    assert(self_p);
    gd_guard_t *self = *self_p;
    if (!self)
        return;
    for (conn_t *c = self->oldest, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    gd_hash_destroy(&self->by_fd);
    if (self->subscribers)
        gd_hash_foreach(self->subscribers, s_free_cb, NULL);
    gd_hash_destroy(&self->subscribers);
    free(self);
    *self_p = NULL;
}

/*  Takes c out of the list and the hash and frees it. */
static void s_forget(gd_guard_t *self, conn_t *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        self->oldest = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        self->newest = c->prev;
    int32_t key = c->fd;
    gd_hash_del(self->by_fd, &key, sizeof key);
    self->npending--;
    free(c);
}

/*  True when fd still carries the connection c was accepted as (same peer). */
static bool s_same(const conn_t *c)
{
    struct sockaddr_storage peer;
    socklen_t len = sizeof peer;
    return getpeername(c->fd, (struct sockaddr *)&peer, &len) == 0 && len == c->peerlen
        && memcmp(&peer, &c->peer, len) == 0;
}

/*  The bytes the peer on fd has sent, or -1 when the kernel does not count them
 *  (TCP_INFO older than Linux 4.1, or not a TCP socket). */
static int64_t s_received(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0
        || len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof ti.tcpi_bytes_received)
        return -1;
    return (int64_t)ti.tcpi_bytes_received;
}

/*  True when the peer on fd has sent more than its greeting (or when the kernel cannot
 *  tell: then nothing is shut down). */
static bool s_past_handshake(int fd)
{
    int64_t got = s_received(fd);
    return got < 0 || got > GD_GUARD_PROVEN_BYTES;
}

/*  Shuts down the oldest connections still in their handshake while there are more than
 *  the cap (none younger than GD_GUARD_MIN_AGE_MS); the ones found past it, or no longer
 *  there, just leave the list. */
static int s_evict(gd_guard_t *self)
{
    int shut = 0;
    int64_t now = gimpi_now_ms();
    while (self->max_pending > 0 && self->npending > self->max_pending && self->oldest
           && now - self->oldest->since_ms >= GD_GUARD_MIN_AGE_MS) {
        conn_t *c = self->oldest;
        if (s_same(c) && !s_past_handshake(c->fd) && shutdown(c->fd, SHUT_RDWR) == 0) {
            shut++;
            self->evicted++;
        }
        s_forget(self, c);
    }
    return shut;
}

/*  A connection accepted on fd: listed (when it is a TCP connection), then the cap. */
int gd_guard_accepted(gd_guard_t *self, int fd)
{
    assert(self);
    int32_t key = fd;
    conn_t *old = gd_hash_get(self->by_fd, &key, sizeof key);
    if (old)
        s_forget(self, old);            /* (an end we have not seen: the fd was reused) */
    conn_t *c = calloc(1, sizeof *c);
    if (!c)
        return 0;
    c->fd = fd;
    c->since_ms = gimpi_now_ms();
    c->peerlen = sizeof c->peer;
    if (getpeername(fd, (struct sockaddr *)&c->peer, &c->peerlen) < 0
        || (c->peer.ss_family != AF_INET && c->peer.ss_family != AF_INET6)
        || gd_hash_put(self->by_fd, &key, sizeof key, c) < 0) {
        free(c);                        /* not TCP (ipc), or gone already */
        return 0;
    }
    c->prev = self->newest;
    if (self->newest)
        self->newest->next = c;
    else
        self->oldest = c;
    self->newest = c;
    self->npending++;
    return s_evict(self);
}

/*  The connection on fd ended. */
void gd_guard_gone(gd_guard_t *self, int fd)
{
    assert(self);
    int32_t key = fd;
    conn_t *c = gd_hash_get(self->by_fd, &key, sizeof key);
    if (c)
        s_forget(self, c);
    self->ends++;
}

/*  Notes or forgets a connection of the event socket. */
void gd_guard_subscriber(gd_guard_t *self, int fd, bool is)
{
    assert(self);
    int32_t key = fd;
    free(gd_hash_del(self->subscribers, &key, sizeof key));
    if (!is)
        return;
    conn_t *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->fd = fd;
    c->peerlen = sizeof c->peer;
    if (getpeername(fd, (struct sockaddr *)&c->peer, &c->peerlen) < 0
        || gd_hash_put(self->subscribers, &key, sizeof key, c) < 0)
        free(c);
}

/*  The heaviest subscriber so far (visitor state). */
typedef struct {
    conn_t *conn;
    uint64_t sent;
} s_heaviest_t;

/*  Keeps the connection whose peer has sent the most (visitor). */
static void s_heaviest_cb(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    conn_t *c = v;
    s_heaviest_t *h = a;
    int64_t sent = s_received(c->fd);
    if (sent > 0 && (uint64_t)sent > h->sent && s_same(c)) {
        h->conn = c;
        h->sent = (uint64_t)sent;
    }
}

/*  Shuts down the heaviest subscriber. */
int gd_guard_shed_subscriber(gd_guard_t *self, uint64_t *sent)
{
    assert(self);
    s_heaviest_t h = { NULL, 0 };
    gd_hash_foreach(self->subscribers, s_heaviest_cb, &h);
    if (!h.conn || shutdown(h.conn->fd, SHUT_RDWR) < 0)
        return -1;
    *sent = h.sent;
    int fd = h.conn->fd;
    gd_guard_subscriber(self, fd, false);
    return fd;
}

/*  Other releases, counted for the trim. */
void gd_guard_released(gd_guard_t *self, int n)
{
    assert(self);
    self->ends += n;
}

/*  When the next trim is due. */
int gd_guard_trim_due_ms(gd_guard_t *self, int64_t now_ms)
{
    assert(self);
    if (self->ends < GD_GUARD_TRIM_ENDS)
        return -1;
    int64_t left = self->last_trim_ms + GD_GUARD_TRIM_EVERY_MS - now_ms;
    return left > 0 ? (int)left : 0;
}

/*  malloc_trim when due: every arena's free pages go back to the system. */
bool gd_guard_trim(gd_guard_t *self, int64_t now_ms)
{
    assert(self);
    if (gd_guard_trim_due_ms(self, now_ms) != 0)
        return false;
    malloc_trim(0);
    self->ends = 0;
    self->last_trim_ms = now_ms;
    return true;
}

/*  Connections in their handshake. */
int gd_guard_pending(gd_guard_t *self)
{
    assert(self);
    return self->npending;
}

/*  Connections shut down so far. */
uint64_t gd_guard_evicted(gd_guard_t *self)
{
    assert(self);
    return self->evicted;
}
