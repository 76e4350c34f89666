/*  gimpi_host.h — an IMPI host meeting the other hosts of its job ("Shall we dance?",
 *  impi-protocol.md §3.9).
 *
 *  Every host listens on its own TCP port, created before the startup so that the port can
 *  be announced in H_PORT.  After the startup each pair of hosts gets exactly one TCP
 *  connection: the host with the higher global host rank connects (from the address it
 *  announced in H_IPV6) and sends its own rank as 4 big-endian bytes; the lower one
 *  accepts and reads them.  The whole meeting is bounded by a deadline: a host that never
 *  shows up, an unknown or duplicate caller, or a caller that hangs up early is an error.
 */
#ifndef GIMPI_HOST_H
#define GIMPI_HOST_H

#include "impi_tables.h"

#include <stddef.h>
#include <stdint.h>

/*  Creates a listening TCP socket bound to the IPv4 address in the last 4 bytes of addr
 *  (port 0: the kernel chooses) and stores the port in *port.  Returns the descriptor, or
 *  -1 with a message in err. */
int gimpi_host_listen(const uint8_t addr[16], int *port, char *err, size_t errsize);

/*  Meets every other host of the tables.  myhost is this host's global rank, listen_fd its
 *  listening socket (left open).  On success fds[0..nhosts-1] hold one connected,
 *  non-blocking, TCP_NODELAY socket per other host (fds[myhost] = -1) and 0 is returned;
 *  on failure every socket opened here is closed, fds[] is all -1, and -1 is returned with
 *  a message in err. */
int gimpi_host_dance(const impi_tables_t *tables, int myhost, int listen_fd, int *fds,
                     int timeout_ms, char *err, size_t errsize);

#endif
