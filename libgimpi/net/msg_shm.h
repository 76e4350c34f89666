/*  msg_shm.h — the shared-memory transport under one connection of the packet engine
 *  (doc/data-plane.md, "Shared memory").
 *
 *  Two gimpi tasks of one user on one machine meet over a local (Unix-domain) socket.
 *  Right after the connection opens, each side sends one transport record on it: an offer
 *  with the memory file of the ring it will write (gimpi_ring.h) attached, or a refusal
 *  (GIMPI_SHM=0, or no ring could be made).  When both offered, the packet bytes of the
 *  connection run through the two rings from then on, and the socket only carries
 *  one-byte doorbells (to wake a peer that sleeps in poll()) and the peer's death (EOF);
 *  otherwise they keep running on the socket.  The engine's packet state machine does not
 *  change: it calls msg_shm_send / msg_shm_recv where it would call sendmsg / readv.
 *
 *  The link does not lock: the engine calls it with its own lock held.
 */
#ifndef GIMPI_MSG_SHM_H
#define GIMPI_MSG_SHM_H

#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include <sys/uio.h>

#define MSG_SHM_RING_DEFAULT (1024 * 1024) /* bytes per ring (GIMPI_SHM_RING): a whole
                                              1 MiB message fits */
#define MSG_SHM_RECORD 16                   /* the transport record */

typedef struct msg_shm_t msg_shm_t;

/*  The ring size the environment asks for: GIMPI_SHM=0 gives 0 (off), GIMPI_SHM_RING
 *  bytes (rounded by the ring) else MSG_SHM_RING_DEFAULT. */
size_t msg_shm_config(void);

/*  Starts the link on a freshly opened local connection sock: makes our ring (ring bytes;
 *  0: refuse) and sends our record.  NULL with a message in err when the record cannot be
 *  sent (out of memory, socket error); a ring that cannot be made is only a refusal. */
msg_shm_t *msg_shm_new(int sock, size_t ring, char *err, size_t errsize);

/*  Frees the link (unmaps both rings); *self_p becomes NULL. */
void msg_shm_destroy(msg_shm_t **self_p);

/*  1 while the peer's record has not been read yet (nothing may be sent or read). */
int msg_shm_pending(const msg_shm_t *self);

/*  1 when the packet bytes run through the rings. */
int msg_shm_on(const msg_shm_t *self);

/*  Reads the peer's record without blocking: 1 settled (rings on or off), 0 not yet, -1
 *  with a message in err (bad record, bad ring), -2 the peer hung up. */
int msg_shm_settle(msg_shm_t *self, int sock, char *err, size_t errsize);

/*  Like sendmsg: bytes of iov written into our ring (ringing the peer's doorbell when it
 *  sleeps), or -1 with errno EAGAIN (full) or EPROTO (corrupt ring). */
ssize_t msg_shm_send(msg_shm_t *self, int sock, const struct iovec *iov, int niov);

/*  len bytes of room in one piece in our ring, at *at: 1, 0 none (or not in one piece),
 *  -1 with errno EPROTO (corrupt ring).  What is written there goes out with
 *  msg_shm_commit (which rings the peer's doorbell when it sleeps). */
int msg_shm_reserve(msg_shm_t *self, size_t len, uint8_t **at);
void msg_shm_commit(msg_shm_t *self, int sock, size_t len);

/*  Like readv: bytes read from the peer's ring into iov, 0 when the ring is empty and the
 *  peer has hung up, or -1 with errno EAGAIN (empty), EPROTO (corrupt ring) or the
 *  socket's error. */
ssize_t msg_shm_recv(msg_shm_t *self, int sock, const struct iovec *iov, int niov);

/*  The peer's bytes readable in place at *at (contiguous; doorbells drained first): their
 *  number, or -1 with errno EPROTO (corrupt ring) or the socket's error.  0 says nothing
 *  here now: msg_shm_recv tells an empty ring from a hang-up. */
ssize_t msg_shm_peek(msg_shm_t *self, int sock, const uint8_t **at);

/*  Frees n bytes read in place (rings the peer's doorbell when it waits for room). */
void msg_shm_consume(msg_shm_t *self, int sock, size_t n);

/*  The socket was reported readable or hung up: the next msg_shm_recv drains the doorbell
 *  bytes (and sees the EOF). */
void msg_shm_poke(msg_shm_t *self);

/*  Before a blocking poll: asks the peer to ring when bytes come (and, with want_out, when
 *  room is made).  1 when there is something to do already (do not sleep). */
int msg_shm_sleep(msg_shm_t *self, int want_out);

/*  After the poll: the matching call to msg_shm_sleep. */
void msg_shm_woke(msg_shm_t *self);

/*  1 when msg_shm_recv would find bytes (a cheap look while spinning). */
int msg_shm_ready(msg_shm_t *self);

#endif
