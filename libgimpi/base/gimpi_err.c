/*  gimpi_err.c — writing a failure's message into the caller's buffer (gimpi_err.h).
 */
#include "base/gimpi_err.h"

#include <errno.h>
#include <stdio.h>

/*  Formats into err when given, keeps errno; returns code (gimpi_err.h). */
int gimpi_vfail(char *err, size_t errsize, int code, const char *fmt, va_list ap)
{
    int saved = errno;
    if (err && errsize)
        vsnprintf(err, errsize, fmt, ap);
    errno = saved;
    return code;
}

/*  Formats into err when given, keeps errno; returns -1 (gimpi_err.h). */
int gimpi_fail(char *err, size_t errsize, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = gimpi_vfail(err, errsize, -1, fmt, ap);
    va_end(ap);
    return rc;
}
