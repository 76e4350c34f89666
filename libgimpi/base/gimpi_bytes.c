/*  gimpi_bytes.c — the growable byte writer of gimpi_bytes.h: appends to a buffer that
 *  doubles as it fills, bounded when asked, failing once and for good.
 */
#include "base/gimpi_bytes.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/*  The writer. */
struct gimpi_bytes_t {
    uint8_t *data;
    size_t len, cap;
    size_t max;                 /* 0: no bound */
    bool failed;
};

/*  A new, empty writer bounded by max (0: none). */
gimpi_bytes_t *gimpi_bytes_new(size_t max)
{
    gimpi_bytes_t *self = calloc(1, sizeof *self);
    if (self)
        self->max = max;
    return self;
}

/*  Frees the writer and its bytes. */
void gimpi_bytes_destroy(gimpi_bytes_t **self_p)
{
    assert(self_p);
    if (*self_p) {
        free((*self_p)->data);
        free(*self_p);
        *self_p = NULL;
    }
}

/*  Appends n bytes, growing the buffer (doubling from 256). */
void gimpi_bytes_put(gimpi_bytes_t *self, const void *p, size_t n)
{
    assert(self);
    if (self->failed)
        return;
    if (self->max && self->len + n > self->max) {
        self->failed = true;
        return;
    }
    if (self->len + n > self->cap) {
        size_t cap = self->cap ? self->cap * 2 : 256;
        while (cap < self->len + n)
            cap *= 2;
        uint8_t *d = realloc(self->data, cap);
        if (!d) {
            self->failed = true;
            return;
        }
        self->data = d;
        self->cap = cap;
    }
    if (n)
        memcpy(self->data + self->len, p, n);
    self->len += n;
}

/*  Appends a big-endian Uint2. */
void gimpi_bytes_put16(gimpi_bytes_t *self, uint16_t v)
{
    uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };
    gimpi_bytes_put(self, b, 2);
}

/*  Appends a big-endian Uint4. */
void gimpi_bytes_put32(gimpi_bytes_t *self, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
    gimpi_bytes_put(self, b, 4);
}

/*  The count written so far. */
size_t gimpi_bytes_len(const gimpi_bytes_t *self)
{
    assert(self);
    return self->len;
}

/*  False once a put failed. */
bool gimpi_bytes_ok(const gimpi_bytes_t *self)
{
    assert(self);
    return !self->failed;
}

/*  Hands the bytes over and empties the writer; NULL after a failure. */
uint8_t *gimpi_bytes_take(gimpi_bytes_t *self, size_t *len)
{
    assert(self);
    uint8_t *out = self->failed ? NULL : self->data ? self->data : malloc(1);
    if (self->failed)
        free(self->data);
    *len = out ? self->len : 0;
    self->data = NULL;
    self->len = self->cap = 0;
    return out;
}
