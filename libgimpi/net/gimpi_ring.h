/*  gimpi_ring.h — a one-way byte ring in shared memory between two processes of one user
 *  on one machine, and the passing of its segment over a Unix-domain socket.
 *
 *  The segment is an anonymous memory file (memfd_create), sealed against growing and
 *  shrinking, so nothing is ever left in /dev/shm and the peer cannot make our mappings
 *  fault by truncating it.  Its first page is the header (the producer's head and the
 *  consumer's tail, on their own cache lines, and two "asleep" flags), the rest is the
 *  data, a power of two.  One process writes (the producer), one reads (the consumer);
 *  the indices count bytes since the start and are never reset.  Every index read from
 *  the shared page is checked before it is used (the distance between head and tail at
 *  most the size, neither moving backwards): a corrupt index is reported (EPROTO), never
 *  followed, and all copies are masked into the data area.  The ring knows nothing of
 *  packets: the data plane runs its byte stream through it (msg_shm.h), and any other
 *  layer may hand a segment to a local peer with gimpi_ring_send_fd.
 *
 *  Sleeping: a consumer about to sleep sets its flag and looks again (gimpi_ring_arm_*);
 *  a producer that published bytes and finds the flag set clears it and tells its caller
 *  to ring the peer's doorbell (a byte on the socket).  The same, the other way, for a
 *  producer waiting for room.  Full fences on both sides make the wake-up impossible to
 *  miss.
 */
#ifndef GIMPI_RING_H
#define GIMPI_RING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define GIMPI_RING_MIN 4096                 /* smallest data area */
#define GIMPI_RING_MAX (1u << 30)           /* largest data area */
#define GIMPI_RING_HDR 4096                 /* the header page before the data */

typedef struct gimpi_ring_t gimpi_ring_t;

/*  The shared header page (what the fuzzer and the tests poke at). */
typedef struct {
    uint64_t magic;                         /* GIMPI_RING_MAGIC */
    uint32_t version;                       /* GIMPI_RING_VERSION */
    uint32_t hdr;                           /* GIMPI_RING_HDR */
    uint64_t size;                          /* data bytes: a power of two */
    uint8_t pad0[40];
    uint64_t head;                          /* bytes written so far (producer) */
    uint8_t pad1[56];
    uint64_t tail;                          /* bytes read so far (consumer) */
    uint8_t pad2[56];
    uint32_t rsleep;                        /* the consumer may sleep: ring its doorbell */
    uint8_t pad3[60];
    uint32_t wsleep;                        /* the producer waits for room: ring its bell */
} gimpi_ring_hdr_t;

#define GIMPI_RING_MAGIC 0x474e495249504d47ull   /* "GMPIRING" little-endian */
#define GIMPI_RING_VERSION 1

/*  A new ring of size data bytes (rounded up to a power of two within the limits), made
 *  and mapped by its producer.  NULL with a message in err. */
gimpi_ring_t *gimpi_ring_new(size_t size, char *err, size_t errsize);

/*  Maps the ring in memory file fd (taken over, and closed once mapped or on failure) as
 *  its consumer: the seals, the size and the header are checked first.  NULL with a
 *  message in err. */
gimpi_ring_t *gimpi_ring_attach(int fd, char *err, size_t errsize);

/*  A ring over memory the caller owns (hdr: GIMPI_RING_HDR + size bytes, size a power of
 *  two), for tests and the fuzzer; consumer 1 reads, 0 writes.  Nothing is freed but the
 *  handle.  NULL when the header is not a ring's. */
gimpi_ring_t *gimpi_ring_wrap(void *mem, size_t size, int consumer);

/*  Unmaps the ring and closes its memory file; *self_p becomes NULL. */
void gimpi_ring_destroy(gimpi_ring_t **self_p);

/*  The ring's memory file (to pass to the peer), or -1. */
int gimpi_ring_fd(const gimpi_ring_t *self);

/*  Closes the ring's memory file (the mapping keeps the memory): once it has been passed,
 *  a ring costs no descriptor. */
void gimpi_ring_close_fd(gimpi_ring_t *self);

/*  The data size. */
size_t gimpi_ring_size(const gimpi_ring_t *self);

/*  The shared header. */
gimpi_ring_hdr_t *gimpi_ring_header(gimpi_ring_t *self);

/*  Consumer: the bytes that can be read in place at *at, up to the end of the data area
 *  (what lies beyond it follows at its start); -1 with errno EPROTO when the producer's
 *  index is corrupt.  The producer may not touch them until gimpi_ring_consume; a
 *  producer that does anyway (a bug or a foe: it is the same user) can only change what
 *  is read, so read each byte once. */
ssize_t gimpi_ring_peek(gimpi_ring_t *self, const uint8_t **at);

/*  Consumer: frees n bytes read in place (at most what gimpi_ring_peek reported);
 *  *bell as for gimpi_ring_readv. */
void gimpi_ring_consume(gimpi_ring_t *self, size_t n, int *bell);

/*  Producer: len bytes of room in one piece at *at, to be written in place and then
 *  published with gimpi_ring_commit: 1, 0 when there is less room or it wraps around the
 *  end, or -1 with errno EPROTO (the consumer's index is corrupt). */
int gimpi_ring_reserve(gimpi_ring_t *self, size_t len, uint8_t **at);

/*  Producer: publishes len bytes written in place at what gimpi_ring_reserve gave;
 *  *bell as for gimpi_ring_writev. */
void gimpi_ring_commit(gimpi_ring_t *self, size_t len, int *bell);

/*  Producer: the bytes that may be written now, the consumer's index read again only when
 *  fewer than want are known to be free; -1 with errno EPROTO when it is corrupt. */
ssize_t gimpi_ring_room(gimpi_ring_t *self, size_t want);

/*  Producer: copies as much of iov as fits and publishes it; the bytes taken (0: full),
 *  or -1 with errno EPROTO when the consumer's index is corrupt.  *bell is set to 1 when
 *  the consumer was asleep (ring its doorbell), else left alone. */
ssize_t gimpi_ring_writev(gimpi_ring_t *self, const struct iovec *iov, int niov, int *bell);

/*  Consumer: copies as many bytes as are there into iov and frees their room; the bytes
 *  (0: empty), or -1 with errno EPROTO when the producer's index is corrupt.  *bell is set
 *  to 1 when the producer waited for room (ring its doorbell), else left alone. */
ssize_t gimpi_ring_readv(gimpi_ring_t *self, const struct iovec *iov, int niov, int *bell);

/*  Consumer: bytes waiting; SIZE_MAX when the index is corrupt (a read reports it). */
size_t gimpi_ring_avail(gimpi_ring_t *self);

/*  Consumer about to sleep (on): sets the flag, then 1 when bytes are there after all
 *  (do not sleep).  Off: clears the flag. */
int gimpi_ring_arm_reader(gimpi_ring_t *self, int on);

/*  Producer about to sleep for room (on): sets the flag, then 1 when there is room after
 *  all.  Off: clears the flag. */
int gimpi_ring_arm_writer(gimpi_ring_t *self, int on);

/*  Sends len bytes of rec over Unix socket sock, with descriptor fd attached when fd >= 0
 *  (SCM_RIGHTS).  0, or -1 with errno (a partial send is an error: EAGAIN). */
int gimpi_ring_send_fd(int sock, const void *rec, size_t len, int fd);

/*  Receives up to len bytes into rec from Unix socket sock without blocking, and a
 *  descriptor that came with them into *fd (close-on-exec; left alone when none came; a
 *  second one is closed).  The bytes (0: the peer hung up), or -1 with errno. */
ssize_t gimpi_ring_recv_fd(int sock, void *rec, size_t len, int *fd);

#endif
