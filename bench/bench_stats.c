/*  bench_stats.c — what the benchmark programs share (bench_stats.h): each member's own
 *  median, which shows where the slowest member's time goes, the clock and the order of
 *  doubles.
 */
#include "bench_stats.h"
#include "base/gimpi_tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*  " member_us=..." (bench_stats.h). */
void bench_member_medians(const double *all, int n, int I, char *out, size_t size)
{
    if (size)
        out[0] = '\0';
    if (n > 8 || I < 1)
        return;
    double *own = malloc((size_t)I * sizeof *own);
    if (!own)
        return;
    for (int r = 0; r < n; r++) {
        memcpy(own, all + (size_t)r * (size_t)I, (size_t)I * sizeof *own);
        qsort(own, (size_t)I, sizeof *own, bench_cmp);
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%.2f", r ? "," : " member_us=", own[I / 2]);
    }
    free(own);
}

/*  w plus GIMPI_BENCH_WARM (bench_stats.h). */
int bench_warm(int w)
{
    const char *e = gimpi_env("GIMPI_BENCH_WARM");
    int more = e ? atoi(e) : 0;
    return more > 0 && more < (1 << 28) ? w + more : w;
}

/*  Monotonic nanoseconds. */
double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/*  Monotonic microseconds. */
double bench_now_us(void)
{
    return bench_now_ns() / 1e3;
}

/*  Monotonic seconds. */
double bench_now_s(void)
{
    return bench_now_ns() / 1e9;
}

/*  qsort comparator for doubles. */
int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
