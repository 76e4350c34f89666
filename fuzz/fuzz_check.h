/*  fuzz_check.h — what every libFuzzer target of fuzz/ shares: a CHECK macro that reports a
 *  broken invariant and aborts (libFuzzer then saves the input as a crash artifact), and the
 *  libFuzzer entry point's prototype.  Unlike assert(), CHECK is never compiled out.
 */
#ifndef GIMPI_FUZZ_CHECK_H
#define GIMPI_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                 \
    do {                                                                            \
        if (!(cond)) {                                                              \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                \
        }                                                                           \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
