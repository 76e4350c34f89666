/*  gimpi.h — the native API of libgimpi.
 *
 *  What a task links against when it does not use the PVM compatibility layer of
 *  <pvm3.h>: job start-up, point-to-point messaging by task id and the group operations.
 *  Functions return 0 or a positive value on success and a negative GIMPI_E* code on
 *  failure (the same numbers as PVM's error codes, so the two APIs agree).
 */
#ifndef GIMPI_H
#define GIMPI_H

#ifdef __cplusplus
extern "C" {
#endif

#define GIMPI_VERSION_MAJOR 0
#define GIMPI_VERSION_MINOR 1

/*  Version string of the library ("0.1.0"). */
const char *gimpi_version(void);

#ifdef __cplusplus
}
#endif
#endif
