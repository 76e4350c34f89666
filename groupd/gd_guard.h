/*  gd_guard.h — groupd's guard against handshake floods on tcp, and the giving back of
 *  memory after a flood.
 *
 *  libzmq 4.3 has no cap on the connections a bound socket accepts: each one that has
 *  not finished its ZMTP/CURVE handshake costs groupd some 26 KiB (the engine's buffers,
 *  measured with VmRSS: 15,000 half-open connections took about 400 MB) for up to the
 *  handshake timeout (GD_SOCK_GROUPD_HANDSHAKE_MS).  The guard keeps, from the sockets'
 *  monitors, the connections accepted and not yet ended, oldest first, and takes one
 *  for a real client once its peer has sent more than the 64-byte ZMTP greeting
 *  (TCP_INFO's bytes received): the next thing it sends is its CURVE HELLO, whose box
 *  only a holder of the key can make (it is sealed to groupd's public key, which is
 *  derived from the key and never sent), and libzmq drops a peer whose HELLO does not
 *  open at once.  A stranger can therefore hold a connection only at the greeting, and
 *  a real client passes it within one round trip.  When more than max_pending connections
 *  are still in their handshake, the oldest of them are shut down (shutdown(2): libzmq
 *  then closes them as for any peer that hung up), none younger than GD_GUARD_MIN_AGE_MS.
 *  The peer address noted at accept is compared first, so a
 *  descriptor number that libzmq has already closed and reused is never touched.
 *
 *  Memory: glibc keeps what a flood's connections freed in its arenas (386 MB stayed
 *  after 15,000 connections closed).  After GD_GUARD_TRIM_ENDS connections have ended,
 *  gd_guard_trim gives the free pages back (malloc_trim), at most once a second.
 */
#ifndef GIMPI_GD_GUARD_H
#define GIMPI_GD_GUARD_H

#include <stdbool.h>
#include <stdint.h>

enum {
    /* connections in their handshake at once (groupd --max-handshakes): about 26 KiB
       each, so some 53 MB at most.  A real task needs two (its DEALER and its SUB) for
       the few milliseconds of its handshake */
    GD_GUARD_MAX_PENDING = 2048,
    /* a peer that has sent more than this has sent more than its ZMTP greeting (64
       bytes): a HELLO, which only a holder of the key makes valid */
    GD_GUARD_PROVEN_BYTES = 64,
    /* a connection younger than this is never shut down: a real client's HELLO follows
       its greeting within a round trip and a scheduling delay.  Under a flood of R new
       connections a second the cap can be passed by R times this (2,000 at 20,000/s) */
    GD_GUARD_MIN_AGE_MS = 100,
    /* connections ended (or topics unsubscribed) since the last malloc_trim that make
       another one due */
    GD_GUARD_TRIM_ENDS = 256,
    GD_GUARD_TRIM_EVERY_MS = 1000,      /* and at most one a second */
};

typedef struct gd_guard_t gd_guard_t;

/*  A guard that keeps at most max_pending connections in their handshake (0: no cap,
 *  the connections are only counted for the trim). */
gd_guard_t *gd_guard_new(int max_pending);
void gd_guard_destroy(gd_guard_t **self_p);
/*  A socket accepted a connection on fd (monitor ACCEPTED); may shut down the oldest
 *  ones still in their handshake.  The number shut down. */
int gd_guard_accepted(gd_guard_t *self, int fd);
/*  The connection on fd ended (monitor DISCONNECTED). */
void gd_guard_gone(gd_guard_t *self, int fd);
/*  n other things that held memory ended (topics unsubscribed): counted for the trim. */
void gd_guard_released(gd_guard_t *self, int n);
/*  Notes fd as a connection of the event socket (is true: the XPUB's monitor said
 *  ACCEPTED) or forgets it (false). */
void gd_guard_subscriber(gd_guard_t *self, int fd, bool is);
/*  Shuts down the event connection whose peer has sent the most bytes (its count in
 *  *sent); its fd, or -1 when there is none. */
int gd_guard_shed_subscriber(gd_guard_t *self, uint64_t *sent);
/*  Milliseconds until a trim is due (0: now), -1 when none is. */
int gd_guard_trim_due_ms(gd_guard_t *self, int64_t now_ms);
/*  Gives free memory back to the system when a trim is due; true when it did. */
bool gd_guard_trim(gd_guard_t *self, int64_t now_ms);
/*  Connections now in their handshake, and how many were shut down so far. */
int gd_guard_pending(gd_guard_t *self);
uint64_t gd_guard_evicted(gd_guard_t *self);
#endif
