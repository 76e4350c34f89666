/*  gimpi_clock.c — the monotonic clock in milliseconds and microseconds (gimpi_clock.h).
 */
#include "base/gimpi_clock.h"

#include <time.h>

/*  Milliseconds on CLOCK_MONOTONIC. */
int64_t gimpi_now_ms(void)
{
    return gimpi_now_us() / 1000;
}

/*  Microseconds on CLOCK_MONOTONIC. */
int64_t gimpi_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
