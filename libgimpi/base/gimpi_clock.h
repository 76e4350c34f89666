/*  gimpi_clock.h — the one reading of the monotonic clock that deadlines, timers and
 *  rate limits are counted on, in milli-, micro- or nanoseconds.  Inline, because the
 *  data plane reads it on its hot paths (a wait's deadline, a spin's budget).
 */
#ifndef GIMPI_CLOCK_H
#define GIMPI_CLOCK_H

#include <stdint.h>
#include <time.h>

/*  Nanoseconds on CLOCK_MONOTONIC. */
static inline int64_t gimpi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*  Microseconds on CLOCK_MONOTONIC. */
static inline int64_t gimpi_now_us(void)
{
    return gimpi_now_ns() / 1000;
}

/*  Milliseconds on CLOCK_MONOTONIC. */
static inline int64_t gimpi_now_ms(void)
{
    return gimpi_now_us() / 1000;
}
#endif
