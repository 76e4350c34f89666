/*  gimpi_bytes.h — a growable byte writer: the one place where an encoder appends bytes,
 *  big-endian integers and length-prefixed strings to a buffer that grows as it goes.
 *
 *  A writer may be bounded (a frame's largest size); a put that would pass the bound, or
 *  that cannot grow the buffer, marks the writer failed and every later put does nothing,
 *  so an encoder writes everything and checks once, at gimpi_bytes_take.  Used by the
 *  group-control protocol's records (groups/gd_proto.c) and the virtual machine's frames
 *  (base/gimpi_vmwire.c).
 */
#ifndef GIMPI_BYTES_H
#define GIMPI_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gimpi_bytes_t gimpi_bytes_t;

/*  A new, empty writer that holds at most max bytes (0: no bound); NULL when out of
 *  memory. */
gimpi_bytes_t *gimpi_bytes_new(size_t max);

/*  Frees the writer and any bytes it still holds; sets *self_p to NULL. */
void gimpi_bytes_destroy(gimpi_bytes_t **self_p);

/*  Appends n bytes from p. */
void gimpi_bytes_put(gimpi_bytes_t *self, const void *p, size_t n);

/*  Appends a big-endian Uint2. */
void gimpi_bytes_put16(gimpi_bytes_t *self, uint16_t v);

/*  Appends a big-endian Uint4. */
void gimpi_bytes_put32(gimpi_bytes_t *self, uint32_t v);

/*  How many bytes are written so far. */
size_t gimpi_bytes_len(const gimpi_bytes_t *self);

/*  False once a put failed (the bound, or memory). */
bool gimpi_bytes_ok(const gimpi_bytes_t *self);

/*  Hands over the bytes written (the caller frees them; never NULL for an empty writer
 *  that did not fail) with their count in *len, and empties the writer.  NULL, with
 *  *len 0, when a put failed. */
uint8_t *gimpi_bytes_take(gimpi_bytes_t *self, size_t *len);

#endif
