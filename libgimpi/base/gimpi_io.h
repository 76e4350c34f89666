/*  gimpi_io.h — writing a whole buffer to a descriptor: the one loop over short writes and
 *  EINTR that saving the startup tables, the virtual machine's frames, a spawned child's
 *  error report and the tools all need.  On a socket it never raises SIGPIPE (a peer that
 *  went away is an error code like any other); on a pipe or a file it is a plain write.
 *  Async-signal-safe: it calls only send and write.
 */
#ifndef GIMPI_IO_H
#define GIMPI_IO_H

#include <stddef.h>

/*  Writes all len bytes of buf to fd, retrying on short writes and EINTR.  0, or -1 with
 *  errno (a write of 0 bytes counts as EIO). */
int gimpi_write_all(int fd, const void *buf, size_t len);
#endif
