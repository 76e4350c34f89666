/*  mbox_loop.h — the loop of the `mbox` figure, in <pvm3.h> calls only, so that one text
 *  is timed through gimpi (bench/pvm_figures.c) and through real PVM 3.4.6 (bench/
 *  pvm-mbox.sh builds a driver around it with -lpvm3): pairs of pvm_putinfo (the task
 *  replaces its own entry, 8 bytes packed with PvmDataDefault) and pvm_recvinfo (the entry
 *  read back, unpacked and checked).  W untimed pairs, then I timed ones.
 */
#ifndef GIMPI_BENCH_MBOX_LOOP_H
#define GIMPI_BENCH_MBOX_LOOP_H

#include "pvm3.h"

#include <time.h>

/*  Microseconds on the monotonic clock. */
static inline double mbox_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/*  W + I put/recv pairs on class name; *us the I timed pairs' elapsed time, *bad 1 when a
 *  value read back was not the one put.  0, or the first failing call's code. */
static inline int mbox_pairs(char *name, int W, int I, double *us, int *bad)
{
    double t0 = 0;
    *bad = 0;
    for (int i = 0; i < W + I; i++) {
        if (i == W)
            t0 = mbox_now_us();
        long long v = i, r = -1;
        int rc, buf = pvm_initsend(PvmDataDefault);
        if (buf < 0 || (rc = pvm_pkbyte((char *)&v, 8, 1)) < 0)
            return buf < 0 ? buf : rc;
        if ((rc = pvm_putinfo(name, buf, PvmMboxDefault)) < 0)
            return rc;
        if ((rc = pvm_recvinfo(name, 0, PvmMboxDefault)) < 0)
            return rc;
        if ((rc = pvm_upkbyte((char *)&r, 8, 1)) < 0)
            return rc;
        *bad |= r != v;
    }
    *us = mbox_now_us() - t0;
    pvm_delinfo(name, 0, PvmMboxDefault);
    return 0;
}

#endif
