/*  gimpi_host.h — an IMPI host meeting the other hosts of its job ("Shall we dance?",
 *  doc/impi-protocol.md §3.9).
 *
 *  Every host listens on its own TCP port, created before the startup so that the port can
 *  be announced in H_PORT.  After the startup each pair of hosts gets exactly one
 *  connection: the host with the higher global host rank connects (from the address it
 *  announced in H_IPV6) and sends its own rank as 4 big-endian bytes; the lower one
 *  accepts and reads them.  Hosts of one machine connect through local (Unix-domain)
 *  sockets instead of loopback TCP, with the same bytes on them (gimpi_host.c).  The whole
 *  meeting is bounded by a deadline, and a host that never shows up is an error.  Anyone
 *  may reach a listener, so a caller that is not a host of the job (wrong source address,
 *  another user on this machine, a bad or duplicate rank, a hang-up, silence) is refused,
 *  logged (rate-limited) and the meeting goes on, within the limits below.  A dynamic
 *  host's caller sends an introduction instead of a rank (msg_dynhost.h).
 */
#ifndef GIMPI_HOST_H
#define GIMPI_HOST_H

/*  Default bound, in seconds, on noticing that the link to a peer went silent (data-plane
 *  TCP keep-alive and user timeout; GIMPI_LINK_TIMEOUT changes it, 0 keeps the kernel's). */
#define GIMPI_LINK_TIMEOUT_S 10

#include "impi/impi_tables.h"

#include <stddef.h>
#include <stdint.h>

/*  How long an accepted caller has to send its 4-byte rank, in ms (default 5000;
 *  GIMPI_DANCE_RANK_MS changes it).  A real host sends it right after its connect
 *  completes, so a few seconds cover a loaded machine; a silent caller is closed then
 *  instead of holding its slot until the job's deadline. */
#define GIMPI_DANCE_RANK_MS 5000

/*  Callers owing their rank that are held beside the higher hosts still expected (default
 *  32).  When full the oldest is closed to make room, so a crowd of silent callers cannot
 *  keep a real host waiting in the backlog; 32 exceeds what one round accepts
 *  (GIMPI_DANCE_ACCEPT_BATCH per listener), so a real caller whose rank is on its way is
 *  read before it could be the oldest. */
#define GIMPI_DANCE_MAX_WAITING 32

/*  Callers accepted from one listener in one round of the meeting (default 16): enough to
 *  drain a burst of connect-and-close strangers quickly, few enough that the callers
 *  already accepted get read between bursts. */
#define GIMPI_DANCE_ACCEPT_BATCH 16

/*  Refused callers logged per second, one line each (default 5); the rest of that second
 *  are counted into one line "N more callers refused in the last second". */
#define GIMPI_DANCE_LOG_PER_SEC 5

/*  The ports a task's listener may take, for firewalls: GIMPI_PORTS=LO-HI (or one port),
 *  1..65535.  Unset: any port the kernel chooses. */
#define GIMPI_ENV_PORTS "GIMPI_PORTS"

/*  Creates a listening TCP socket bound to the IPv4 address in the last 4 bytes of addr,
 *  at the first free port of GIMPI_PORTS or else at one the kernel chooses, and stores
 *  the port in *port.  Returns the descriptor, or -1 with a message in err (a bad
 *  GIMPI_PORTS, or no free port in its range, among others). */
int gimpi_host_listen(const uint8_t addr[16], int *port, char *err, size_t errsize);

/*  The local listener that goes with TCP listener tcp_fd: a Unix-domain stream socket in
 *  the abstract namespace named after tcp_fd's address and port, so that a dialer on the
 *  same machine (same network namespace) can find it from the tables alone.  Create it
 *  together with the TCP listener, before the port is announced.  Returns it, or -1 when
 *  GIMPI_LOCAL_SOCKETS=0 or the name cannot be had (then the host is reached over TCP only). */
int gimpi_host_listen_local(int tcp_fd);

/*  Accepts one caller on a TCP or local listener (non-blocking, close-on-exec); a local
 *  caller running under another user id is closed and -1 returned with errno EAGAIN. */
int gimpi_host_accept(int listen_fd);

/*  The user id of the other end of TCP connection fd when that end is a socket of this
 *  machine and network namespace (asked of the kernel's socket diagnostics): 1 with *uid
 *  set; 0 when it is elsewhere, already closed, or the kernel does not say (always, with
 *  GIMPI_DANCE_SOCK_DIAG=0, which tests use to simulate a kernel that does not). */
int gimpi_host_peer_uid(int fd, unsigned *uid);

/*  1 when fd is a Unix-domain (local) socket. */
int gimpi_host_is_local(int fd);

/*  Meets every other host of the tables.  myhost is this host's global rank, listen_fd its
 *  listening socket and local_fd its local listener or -1 (both left open).  A caller is
 *  refused (closed, logged) and the meeting goes on when: it is a local socket of another
 *  user; a TCP caller comes from an address no higher host announced, or is a socket of
 *  another user on this machine, or comes from an address of this machine and the kernel
 *  does not tell its user (gimpi_host_peer_uid); it hangs up or stays silent (GIMPI_DANCE_RANK_MS) before
 *  its rank is whole; the rank is not a higher host's, or a TCP caller's source is not the
 *  address that rank announced; the rank is connected already (the first caller stays).
 *  GIMPI_DANCE_CHECK_CALLERS=0 drops the address and user checks on TCP callers (hosts
 *  behind NAT, or hosts of one machine running under different users).  On success
 *  fds[0..nhosts-1] hold one connected, non-blocking socket per other host (a local one
 *  when both ends have it, else TCP with TCP_NODELAY; fds[myhost] = -1) and 0 is returned;
 *  on failure every socket opened here is closed, fds[] is all -1, and -1 is returned with
 *  a message in err (at the deadline: the missing hosts and the last refusal, whose line
 *  in the log says what to do when a host of the job calls from another address). */
int gimpi_host_dance(const impi_tables_t *tables, int myhost, int listen_fd, int local_fd,
                     int *fds, int timeout_ms, char *err, size_t errsize);

/*  Makes a connected socket ready for the packet engine (no Nagle on TCP, non-blocking,
 *  4 MiB socket buffers). */
void gimpi_host_tune(int fd);

/*  Connects to the host at addr:port: through its local listener when it is on this
 *  machine and runs under our user id (connected at once), else a non-blocking TCP
 *  connect from address `from` (16-byte form) when not NULL.  Returns the socket
 *  (*inprogress = 1 while a TCP connect is under way) or -1 with a message in err. */
int gimpi_host_dial(const uint8_t addr[16], int port, const uint8_t *from, int *inprogress,
                    char *err, size_t errsize);

#endif
