/*  bench_stats.h — statistics the benchmark programs share (gimpi-bench, gimpi-pvm-bench):
 *  each member's own median, printed as the extra `member_us=` of a figure line.
 */
#ifndef GIMPI_BENCH_STATS_H
#define GIMPI_BENCH_STATS_H

#include <stddef.h>

/*  Writes " member_us=m0,m1,..." into out: the median of each member's I times, all
 *  holding n rows of I values (member r's at all + r*I).  Nothing (an empty string) for
 *  more than 8 members or when memory runs out. */
void bench_member_medians(const double *all, int n, int I, char *out, size_t size);

#endif
