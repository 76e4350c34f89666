/*  msg_shm.c — the shared-memory link under one connection (msg_shm.h): the transport
 *  records at the start, the byte stream through the two rings, the doorbells on the
 *  socket, and the sleep flags around a blocking poll.
 *
 *  The record is 16 bytes: "GIMPISHM", then 4 bytes of flags (bit 0: a ring is offered,
 *  its memory file attached) and 4 bytes of its size (little-endian; for the debug line).
 */
#include "net/msg_shm.h"
#include "net/gimpi_ring.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { L_PENDING, L_ON, L_OFF };

struct msg_shm_t {
    int state;                      /* L_* */
    gimpi_ring_t *out;              /* ours: we write */
    gimpi_ring_t *in;               /* the peer's: we read */
    uint8_t rec[MSG_SHM_RECORD];    /* the peer's record, as far as read */
    size_t got;
    int peer_fd;                    /* the memory file that came with it, or -1 */
    int poked;                      /* the socket has doorbells (or the EOF) to read */
    int eof;                        /* the peer hung up */
    int sleepers;                   /* pollers between msg_shm_sleep and msg_shm_woke */
};

static const char s_magic[8] = { 'G', 'I', 'M', 'P', 'I', 'S', 'H', 'M' };

/*  The ring size the environment asks for (msg_shm.h). */
size_t msg_shm_config(void)
{
    const char *on = gimpi_env("GIMPI_SHM");
    if (on && strcmp(on, "0") == 0)
        return 0;
    const char *sz = gimpi_env("GIMPI_SHM_RING");
    long v = sz && *sz ? strtol(sz, NULL, 10) : 0;
    return v > 0 ? (size_t)v : MSG_SHM_RING_DEFAULT;
}

/*  Starts the link (msg_shm.h). */
msg_shm_t *msg_shm_new(int sock, size_t ring, char *err, size_t errsize)
{
    msg_shm_t *self = calloc(1, sizeof *self);
    if (!self) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    self->peer_fd = -1;
    char why[160];
    if (ring && !(self->out = gimpi_ring_new(ring, why, sizeof why)))
        fprintf(stderr, "gimpi: no shared memory for a local peer, its bytes go over the "
                "socket: %s\n", why);
    uint8_t rec[MSG_SHM_RECORD] = { 0 };
    memcpy(rec, s_magic, sizeof s_magic);
    uint32_t flags = self->out ? 1 : 0;
    uint32_t size = self->out ? (uint32_t)gimpi_ring_size(self->out) : 0;
    for (int i = 0; i < 4; i++) {
        rec[8 + i] = (uint8_t)(flags >> (8 * i));
        rec[12 + i] = (uint8_t)(size >> (8 * i));
    }
    if (gimpi_ring_send_fd(sock, rec, sizeof rec, self->out ? gimpi_ring_fd(self->out) : -1)
        < 0) {
        snprintf(err, errsize, "sending the transport record: %s", strerror(errno));
        msg_shm_destroy(&self);
    } else if (self->out)
        gimpi_ring_close_fd(self->out);     /* passed: the mappings keep the memory */
    return self;
}

/*  Frees the link (msg_shm.h). */
void msg_shm_destroy(msg_shm_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    msg_shm_t *self = *self_p;
    gimpi_ring_destroy(&self->out);
    gimpi_ring_destroy(&self->in);
    if (self->peer_fd >= 0)
        close(self->peer_fd);
    free(self);
    *self_p = NULL;
}

/*  1 while the peer's record is awaited. */
int msg_shm_pending(const msg_shm_t *self)
{
    return self->state == L_PENDING;
}

/*  1 when the rings carry the bytes. */
int msg_shm_on(const msg_shm_t *self)
{
    return self->state == L_ON;
}

/*  Reads the peer's record (msg_shm.h). */
int msg_shm_settle(msg_shm_t *self, int sock, char *err, size_t errsize)
{
    assert(self);
    while (self->got < MSG_SHM_RECORD) {
        ssize_t n = gimpi_ring_recv_fd(sock, self->rec + self->got, MSG_SHM_RECORD - self->got,
                                       &self->peer_fd);
        if (n == 0)
            return -2;
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == ECONNRESET)
                return -2;
            snprintf(err, errsize, "reading the transport record: %s", strerror(errno));
            return -1;
        }
        self->got += (size_t)n;
    }
    uint32_t flags = 0;
    for (int i = 0; i < 4; i++)
        flags |= (uint32_t)self->rec[8 + i] << (8 * i);
    if (memcmp(self->rec, s_magic, sizeof s_magic) != 0 || (flags & ~1u)
        || (flags && self->peer_fd < 0)) {
        snprintf(err, errsize, "bad transport record from a local peer");
        return -1;
    }
    if (!flags || !self->out) {     /* one of us refused: the socket carries the bytes */
        self->state = L_OFF;
        gimpi_ring_destroy(&self->out);
        if (self->peer_fd >= 0)
            close(self->peer_fd);
        self->peer_fd = -1;
        return 1;
    }
    int fd = self->peer_fd;
    self->peer_fd = -1;
    if (!(self->in = gimpi_ring_attach(fd, err, errsize)))
        return -1;
    self->state = L_ON;
    return 1;
}

/*  Rings the peer's doorbell: one byte on the socket.  A full socket already holds
 *  doorbells; a dead peer is noticed by our own reads. */
static void s_bell(int sock)
{
    ssize_t n = send(sock, "", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)n;
}

/*  Writes into our ring (msg_shm.h). */
ssize_t msg_shm_send(msg_shm_t *self, int sock, const struct iovec *iov, int niov)
{
    assert(self && self->state == L_ON);
    int bell = 0;
    ssize_t n = gimpi_ring_writev(self->out, iov, niov, &bell);
    if (bell)
        s_bell(sock);
    if (n == 0) {
        errno = EAGAIN;
        return -1;
    }
    return n;
}

/*  Room in our ring to write in place (msg_shm.h). */
int msg_shm_reserve(msg_shm_t *self, size_t len, uint8_t **at)
{
    assert(self && self->state == L_ON);
    return gimpi_ring_reserve(self->out, len, at);
}

/*  Publishes what was written in place (msg_shm.h). */
void msg_shm_commit(msg_shm_t *self, int sock, size_t len)
{
    assert(self && self->state == L_ON);
    int bell = 0;
    gimpi_ring_commit(self->out, len, &bell);
    if (bell)
        s_bell(sock);
}

/*  Reads the doorbell bytes (and the EOF) the socket has. */
static int s_drain(msg_shm_t *self, int sock)
{
    self->poked = 0;
    for (;;) {
        uint8_t buf[256];
        ssize_t n = recv(sock, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0 && (size_t)n == sizeof buf)
            continue;
        if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)))
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || errno == ECONNRESET) {
            self->eof = 1;
            return 0;
        }
        return -1;
    }
}

/*  Reads from the peer's ring (msg_shm.h). */
ssize_t msg_shm_recv(msg_shm_t *self, int sock, const struct iovec *iov, int niov)
{
    assert(self && self->state == L_ON);
    if (self->poked && s_drain(self, sock) < 0)
        return -1;
    int bell = 0;
    ssize_t n = gimpi_ring_readv(self->in, iov, niov, &bell);
    if (bell)
        s_bell(sock);
    if (n != 0)
        return n;
    if (self->eof)
        return 0;
    errno = EAGAIN;
    return -1;
}

/*  Bytes readable in place (msg_shm.h). */
ssize_t msg_shm_peek(msg_shm_t *self, int sock, const uint8_t **at)
{
    assert(self && self->state == L_ON);
    if (self->poked && s_drain(self, sock) < 0)
        return -1;
    return gimpi_ring_peek(self->in, at);
}

/*  Frees bytes read in place (msg_shm.h). */
void msg_shm_consume(msg_shm_t *self, int sock, size_t n)
{
    assert(self && self->state == L_ON);
    int bell = 0;
    gimpi_ring_consume(self->in, n, &bell);
    if (bell)
        s_bell(sock);
}

/*  The socket needs reading (msg_shm.h). */
void msg_shm_poke(msg_shm_t *self)
{
    self->poked = 1;
}

/*  Before a blocking poll (msg_shm.h). */
int msg_shm_sleep(msg_shm_t *self, int want_out)
{
    assert(self);
    if (self->state != L_ON)
        return 0;
    self->sleepers++;
    int ready = gimpi_ring_arm_reader(self->in, 1) || self->poked || self->eof;
    if (want_out)
        ready |= gimpi_ring_arm_writer(self->out, 1);
    return ready;
}

/*  After the poll (msg_shm.h). */
void msg_shm_woke(msg_shm_t *self)
{
    assert(self);
    if (self->state != L_ON || --self->sleepers > 0)
        return;
    self->sleepers = 0;
    gimpi_ring_arm_reader(self->in, 0);
    gimpi_ring_arm_writer(self->out, 0);
}

/*  Bytes to read? (msg_shm.h) */
int msg_shm_ready(msg_shm_t *self)
{
    return self->state == L_ON && (gimpi_ring_avail(self->in) || self->poked || self->eof);
}
