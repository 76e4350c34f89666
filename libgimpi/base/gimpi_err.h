/*  gimpi_err.h — the one way an internal call reports why it failed: a message written
 *  into the caller's buffer (char *err, size_t errsize, either of which may be 0/NULL when
 *  the caller does not want one) and a return value.  The host set, the key files, the
 *  startup tables and client and the ZeroMQ socket factory all fail through it, so that
 *  a message is formatted, truncated and errno kept the same way everywhere.
 */
#ifndef GIMPI_ERR_H
#define GIMPI_ERR_H

#include <stdarg.h>
#include <stddef.h>

/*  Writes the formatted message into err (when err and errsize are given), keeping
 *  errno as it was; returns -1, so that a caller can `return gimpi_fail(...)`. */
int gimpi_fail(char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*  The same with a va_list, returning code instead of -1 (for callers that fail with a
 *  code of their own). */
int gimpi_vfail(char *err, size_t errsize, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
#endif
