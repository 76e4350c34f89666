/*  bench_stats.h — what the benchmark programs share (gimpi-bench, gimpi-pvm-bench,
 *  gd-bench, ring-bench): each member's own median, printed as the extra `member_us=` of a
 *  figure line; the warm-up count; the monotonic clock; the order of doubles for qsort.
 */
#ifndef GIMPI_BENCH_STATS_H
#define GIMPI_BENCH_STATS_H

#include <stddef.h>

/*  Writes " member_us=m0,m1,..." into out: the median of each member's I times, all
 *  holding n rows of I values (member r's at all + r*I).  Nothing (an empty string) for
 *  more than 8 members or when memory runs out. */
void bench_member_medians(const double *all, int n, int I, char *out, size_t size);

/*  w warm-up iterations plus GIMPI_BENCH_WARM more (untimed: for running a profiler over a
 *  figure's loop without the start-up in the samples; the figure is unchanged). */
int bench_warm(int w);

/*  Monotonic nanoseconds, microseconds, seconds. */
double bench_now_ns(void);
double bench_now_us(void);
double bench_now_s(void);

/*  qsort comparator for doubles. */
int bench_cmp(const void *a, const void *b);

#endif
