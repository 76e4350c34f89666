/*  gimpi_host.h — an IMPI host meeting the other hosts of its job ("Shall we dance?",
 *  doc/impi-protocol.md §3.9).
 *
 *  Every host listens on its own TCP port, created before the startup so that the port can
 *  be announced in H_PORT.  After the startup each pair of hosts gets exactly one
 *  connection: the host with the higher global host rank connects (from the address it
 *  announced in H_IPV6) and sends its own rank as 4 big-endian bytes; the lower one
 *  accepts and reads them.  Hosts of one machine connect through local (Unix-domain)
 *  sockets instead of loopback TCP, with the same bytes on them (gimpi_host.c).  The whole
 *  meeting is bounded by a deadline: a host that never shows up, an unknown or duplicate
 *  caller, or a caller that hangs up early is an error.  A dynamic host's caller sends an
 *  introduction instead of a rank (msg_dynhost.h).
 */
#ifndef GIMPI_HOST_H
#define GIMPI_HOST_H

#include "impi/impi_tables.h"

#include <stddef.h>
#include <stdint.h>

/*  Creates a listening TCP socket bound to the IPv4 address in the last 4 bytes of addr
 *  (port 0: the kernel chooses) and stores the port in *port.  Returns the descriptor, or
 *  -1 with a message in err. */
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

/*  1 when fd is a Unix-domain (local) socket. */
int gimpi_host_is_local(int fd);

/*  Meets every other host of the tables.  myhost is this host's global rank, listen_fd its
 *  listening socket and local_fd its local listener or -1 (both left open).  On success
 *  fds[0..nhosts-1] hold one connected, non-blocking socket per other host (a local one
 *  when both ends have it, else TCP with TCP_NODELAY; fds[myhost] = -1) and 0 is returned;
 *  on failure every socket opened here is closed, fds[] is all -1, and -1 is returned with
 *  a message in err. */
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
