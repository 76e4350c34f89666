/*  gimpi_ring.c — the one-way byte ring in shared memory (gimpi_ring.h): making, sealing,
 *  checking and mapping its memory file, the checked producer and consumer copies, the
 *  sleep flags, and passing a descriptor over a Unix-domain socket.
 */
#include "net/gimpi_ring.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

struct gimpi_ring_t {
    gimpi_ring_hdr_t *hdr;          /* the shared header */
    uint8_t *data;                  /* the shared data area */
    size_t size, mask;              /* our own copy: never read back from shared memory */
    int fd;                         /* the memory file, or -1 (wrapped memory) */
    size_t maplen;                  /* 0: not ours to unmap */
    int consumer;
    uint64_t head, tail;            /* our view: our own index, the other's last seen */
};

/*  The handle over a mapped segment. */
static gimpi_ring_t *s_handle(void *mem, size_t size, int fd, size_t maplen, int consumer)
{
    gimpi_ring_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->hdr = mem;
    self->data = (uint8_t *)mem + GIMPI_RING_HDR;
    self->size = size;
    self->mask = size - 1;
    self->fd = fd;
    self->maplen = maplen;
    self->consumer = consumer;
    self->head = __atomic_load_n(&self->hdr->head, __ATOMIC_ACQUIRE);
    self->tail = __atomic_load_n(&self->hdr->tail, __ATOMIC_ACQUIRE);
    return self;
}

/*  A new ring made by its producer (gimpi_ring.h). */
gimpi_ring_t *gimpi_ring_new(size_t size, char *err, size_t errsize)
{
    size_t sz = GIMPI_RING_MIN;
    while (sz < size && sz < GIMPI_RING_MAX)
        sz <<= 1;
    int fd = memfd_create("gimpi-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        snprintf(err, errsize, "memfd_create: %s", strerror(errno));
        return NULL;
    }
    size_t len = GIMPI_RING_HDR + sz;
    void *mem = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) < 0 || fcntl(fd, F_ADD_SEALS, SEALS) < 0
        || (mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        snprintf(err, errsize, "shared-memory ring of %zu bytes: %s", sz, strerror(errno));
        close(fd);
        return NULL;
    }
    gimpi_ring_hdr_t *h = mem;
    h->magic = GIMPI_RING_MAGIC;
    h->version = GIMPI_RING_VERSION;
    h->hdr = GIMPI_RING_HDR;
    h->size = sz;
    gimpi_ring_t *self = s_handle(mem, sz, fd, len, 0);
    if (!self) {
        snprintf(err, errsize, "out of memory");
        munmap(mem, len);
        close(fd);
    }
    return self;
}

/*  Maps a ring passed by its producer (gimpi_ring.h). */
gimpi_ring_t *gimpi_ring_attach(int fd, char *err, size_t errsize)
{
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    const char *why = NULL;
    if (seals < 0 || (seals & SEALS) != SEALS)
        why = "not sealed";
    else if (fstat(fd, &st) < 0 || st.st_size < GIMPI_RING_HDR + GIMPI_RING_MIN
             || (uint64_t)st.st_size > (uint64_t)GIMPI_RING_HDR + GIMPI_RING_MAX)
        why = "bad size";
    size_t len = why ? 0 : (size_t)st.st_size;
    size_t sz = len - GIMPI_RING_HDR;
    if (!why && (sz & (sz - 1)))
        why = "bad size";
    void *mem = MAP_FAILED;
    if (!why && (mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
        why = strerror(errno);
    gimpi_ring_hdr_t *h = mem;
    if (!why && (h->magic != GIMPI_RING_MAGIC || h->version != GIMPI_RING_VERSION
                 || h->hdr != GIMPI_RING_HDR || h->size != sz))
        why = "bad header";
    gimpi_ring_t *self = why ? NULL : s_handle(mem, sz, fd, len, 1);
    if (!why && !self)
        why = "out of memory";
    if (!self) {
        snprintf(err, errsize, "peer's shared-memory ring: %s", why);
        if (mem != MAP_FAILED)
            munmap(mem, len);
        close(fd);
        return NULL;
    }
    if (self->head - self->tail > sz) {     /* checked again at every read */
        snprintf(err, errsize, "peer's shared-memory ring: corrupt indices");
        gimpi_ring_destroy(&self);
    } else
        gimpi_ring_close_fd(self);
    return self;
}

/*  A ring over the caller's memory (gimpi_ring.h). */
gimpi_ring_t *gimpi_ring_wrap(void *mem, size_t size, int consumer)
{
    gimpi_ring_hdr_t *h = mem;
    if (!mem || size < GIMPI_RING_MIN || size > GIMPI_RING_MAX || (size & (size - 1))
        || h->magic != GIMPI_RING_MAGIC || h->size != size)
        return NULL;
    return s_handle(mem, size, -1, 0, consumer);
}

/*  Unmaps and closes (gimpi_ring.h). */
void gimpi_ring_destroy(gimpi_ring_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gimpi_ring_t *self = *self_p;
    if (self->maplen)
        munmap(self->hdr, self->maplen);
    if (self->fd >= 0)
        close(self->fd);
    free(self);
    *self_p = NULL;
}

/*  The memory file. */
int gimpi_ring_fd(const gimpi_ring_t *self)
{
    assert(self);
    return self->fd;
}

/*  Closes the memory file (gimpi_ring.h). */
void gimpi_ring_close_fd(gimpi_ring_t *self)
{
    assert(self);
    if (self->fd >= 0)
        close(self->fd);
    self->fd = -1;
}

/*  The data size. */
size_t gimpi_ring_size(const gimpi_ring_t *self)
{
    assert(self);
    return self->size;
}

/*  The shared header. */
gimpi_ring_hdr_t *gimpi_ring_header(gimpi_ring_t *self)
{
    assert(self);
    return self->hdr;
}

/*  Copies n bytes between the ring at index pos and buf (to_ring: into the ring), in at
 *  most two pieces around the end of the data area. */
static void s_copy(gimpi_ring_t *self, uint64_t pos, uint8_t *buf, size_t n, int to_ring)
{
    size_t at = (size_t)(pos & self->mask);
    size_t first = self->size - at < n ? self->size - at : n;
    if (to_ring) {
        memcpy(self->data + at, buf, first);
        memcpy(self->data, buf + first, n - first);
    } else {
        memcpy(buf, self->data + at, first);
        memcpy(buf + first, self->data, n - first);
    }
}

/*  Copies up to room bytes between the ring from index pos and iov; the bytes copied.
 *  Our index is published after every PUBLISH bytes, so that the other side starts on
 *  the first bytes of a long copy while we copy the rest (the two copies overlap). */
#define PUBLISH (32 * 1024)
static size_t s_copy_iov(gimpi_ring_t *self, uint64_t pos, const struct iovec *iov, int niov,
                         size_t room, int to_ring)
{
    size_t done = 0;
    uint64_t *mine = to_ring ? &self->hdr->head : &self->hdr->tail;
    for (int i = 0; i < niov && done < room; i++) {
        size_t n = iov[i].iov_len < room - done ? iov[i].iov_len : room - done;
        for (size_t off = 0; off < n;) {
            size_t k = n - off < PUBLISH ? n - off : PUBLISH;
            s_copy(self, pos + done, (uint8_t *)iov[i].iov_base + off, k, to_ring);
            off += k;
            done += k;
            if (done < room && (off < n || i + 1 < niov))
                __atomic_store_n(mine, pos + done, __ATOMIC_RELEASE);
        }
    }
    return done;
}

/*  Producer: room for writing (gimpi_ring.h). */
ssize_t gimpi_ring_room(gimpi_ring_t *self, size_t want)
{
    assert(self && !self->consumer);
    uint64_t t = self->tail;        /* the consumer's index is read only when the room
                                       we know of is too small (a cache miss less) */
    if (self->size - (size_t)(self->head - t) < want) {
        t = __atomic_load_n(&self->hdr->tail, __ATOMIC_ACQUIRE);
        if (self->head - t > self->size || t - self->tail > self->size) {
            errno = EPROTO;         /* tail ahead of head, too far behind, or backwards */
            return -1;
        }
        self->tail = t;
    }
    return (ssize_t)(self->size - (size_t)(self->head - t));
}

/*  Moves our own index (*mine, published in *shared) on by n, then says (*bell = 1) when
 *  the other side sleeps (*other_sleeps, cleared).  The fence between the two is one half
 *  of the sleep handshake: the sleeper sets its flag, then looks at our index. */
static void s_advance(uint64_t *mine, uint64_t *shared, uint32_t *other_sleeps, size_t n,
                      int *bell)
{
    *mine += n;
    __atomic_store_n(shared, *mine, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(other_sleeps, __ATOMIC_RELAXED)
        && __atomic_exchange_n(other_sleeps, 0, __ATOMIC_ACQ_REL))
        *bell = 1;
}

/*  Producer: publishes n more bytes written (*bell: the consumer sleeps). */
static void s_published(gimpi_ring_t *self, size_t n, int *bell)
{
    s_advance(&self->head, &self->hdr->head, &self->hdr->rsleep, n, bell);
}

/*  Producer: copies and publishes (gimpi_ring.h). */
ssize_t gimpi_ring_writev(gimpi_ring_t *self, const struct iovec *iov, int niov, int *bell)
{
    assert(self && !self->consumer);
    size_t want = 0;
    for (int i = 0; i < niov; i++)
        want += iov[i].iov_len;
    ssize_t room = gimpi_ring_room(self, want);
    if (room < 0)
        return -1;
    size_t n = s_copy_iov(self, self->head, iov, niov, (size_t)room, 1);
    if (n)
        s_published(self, n, bell);
    return (ssize_t)n;
}

/*  Producer: room to write in place (gimpi_ring.h). */
int gimpi_ring_reserve(gimpi_ring_t *self, size_t len, uint8_t **at)
{
    assert(self && !self->consumer && at);
    ssize_t room = gimpi_ring_room(self, len);
    if (room < 0)
        return -1;
    size_t pos = (size_t)(self->head & self->mask);
    if ((size_t)room < len || self->size - pos < len)
        return 0;                       /* too little, or not in one piece */
    *at = self->data + pos;
    return 1;
}

/*  Producer: publishes what was written in place (gimpi_ring.h). */
void gimpi_ring_commit(gimpi_ring_t *self, size_t len, int *bell)
{
    assert(self && !self->consumer && len <= self->size);
    s_published(self, len, bell);
}

/*  The producer's head, checked: 0 and *h set, or -1 (EPROTO). */
static int s_head(gimpi_ring_t *self, uint64_t *h)
{
    *h = __atomic_load_n(&self->hdr->head, __ATOMIC_ACQUIRE);
    if (*h - self->tail > self->size || *h - self->head > self->size) {
        errno = EPROTO;             /* head behind tail, too far ahead, or backwards */
        return -1;
    }
    self->head = *h;
    return 0;
}

/*  Consumer: frees n bytes read (*bell: the producer waits for room). */
static void s_consumed(gimpi_ring_t *self, size_t n, int *bell)
{
    s_advance(&self->tail, &self->hdr->tail, &self->hdr->wsleep, n, bell);
}

/*  Consumer: copies out and frees (gimpi_ring.h). */
ssize_t gimpi_ring_readv(gimpi_ring_t *self, const struct iovec *iov, int niov, int *bell)
{
    assert(self && self->consumer);
    uint64_t h;
    if (s_head(self, &h) < 0)
        return -1;
    size_t n = s_copy_iov(self, self->tail, iov, niov, (size_t)(h - self->tail), 0);
    if (n)
        s_consumed(self, n, bell);
    return (ssize_t)n;
}

/*  Consumer: the bytes readable in place (gimpi_ring.h). */
ssize_t gimpi_ring_peek(gimpi_ring_t *self, const uint8_t **at)
{
    assert(self && self->consumer && at);
    uint64_t h;
    if (s_head(self, &h) < 0)
        return -1;
    size_t pos = (size_t)(self->tail & self->mask), n = (size_t)(h - self->tail);
    *at = self->data + pos;
    return (ssize_t)(n < self->size - pos ? n : self->size - pos);
}

/*  Consumer: frees what was read in place (gimpi_ring.h). */
void gimpi_ring_consume(gimpi_ring_t *self, size_t n, int *bell)
{
    assert(self && self->consumer && n <= (size_t)(self->head - self->tail));
    s_consumed(self, n, bell);
}

/*  Consumer: bytes waiting. */
size_t gimpi_ring_avail(gimpi_ring_t *self)
{
    assert(self && self->consumer);
    uint64_t h;
    return s_head(self, &h) < 0 ? SIZE_MAX : (size_t)(h - self->tail);
}

/*  Consumer: sleep flag (gimpi_ring.h). */
int gimpi_ring_arm_reader(gimpi_ring_t *self, int on)
{
    assert(self && self->consumer);
    __atomic_store_n(&self->hdr->rsleep, on ? 1u : 0u, __ATOMIC_SEQ_CST);
    if (!on)
        return 0;
    uint64_t h = __atomic_load_n(&self->hdr->head, __ATOMIC_SEQ_CST);
    return h != self->tail;         /* a corrupt head wakes us: the read reports it */
}

/*  Producer: sleep flag (gimpi_ring.h). */
int gimpi_ring_arm_writer(gimpi_ring_t *self, int on)
{
    assert(self && !self->consumer);
    __atomic_store_n(&self->hdr->wsleep, on ? 1u : 0u, __ATOMIC_SEQ_CST);
    if (!on)
        return 0;
    uint64_t t = __atomic_load_n(&self->hdr->tail, __ATOMIC_SEQ_CST);
    return self->head - t != self->size;
}

/*  Sends a record with a descriptor (gimpi_ring.h). */
int gimpi_ring_send_fd(int sock, const void *rec, size_t len, int fd)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = { (void *)rec, len };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (fd >= 0) {
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    ssize_t n;
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n >= 0 && (size_t)n != len) {
        errno = EAGAIN;
        return -1;
    }
    return n < 0 ? -1 : 0;
}

/*  Receives a record and maybe a descriptor (gimpi_ring.h). */
ssize_t gimpi_ring_recv_fd(int sock, void *rec, size_t len, int *fd)
{
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(2 * sizeof(int))];
    } ctl;
    struct iovec iov = { rec, len };
    struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                         .msg_controllen = sizeof ctl.buf };
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int d;
            memcpy(&d, CMSG_DATA(cm) + i * sizeof(int), sizeof d);
            if (*fd < 0)
                *fd = d;
            else
                close(d);
        }
    }
    return n;
}
