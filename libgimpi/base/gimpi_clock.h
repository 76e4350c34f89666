/*  gimpi_clock.h — the one reading of the monotonic clock that deadlines, timers and
 *  rate limits are counted on, in milliseconds or microseconds.
 */
#ifndef GIMPI_CLOCK_H
#define GIMPI_CLOCK_H

#include <stdint.h>

/*  Milliseconds on CLOCK_MONOTONIC. */
int64_t gimpi_now_ms(void);

/*  Microseconds on CLOCK_MONOTONIC. */
int64_t gimpi_now_us(void);
#endif
