/*  t/bytes.c — the growable byte writer (libgimpi/base/gimpi_bytes.c): bytes and
 *  big-endian integers in order across many growths, an empty writer handing over a
 *  non-NULL buffer, a bounded writer failing at its bound and for good, and NULL after a
 *  failure.
 */
#include "gtap.h"
#include "base/gimpi_bytes.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    plan(9);
    gimpi_bytes_t *w = gimpi_bytes_new(0);
    ok(w != NULL, "a writer");
    gimpi_bytes_put16(w, 0x0102);
    gimpi_bytes_put32(w, 0x03040506);
    gimpi_bytes_put(w, "ab", 2);
    for (int i = 0; i < 1000; i++)
        gimpi_bytes_put32(w, (uint32_t)i);
    ok(gimpi_bytes_len(w) == 8 + 4000 && gimpi_bytes_ok(w), "8 + 4000 bytes written");
    size_t len;
    uint8_t *b = gimpi_bytes_take(w, &len);
    ok(b && len == 4008 && !memcmp(b, "\x01\x02\x03\x04\x05\x06" "ab", 8),
       "big-endian, in order");
    ok(b && b[4008 - 1] == (999 & 0xff) && b[4008 - 2] == (999 >> 8), "the last Uint4 intact");
    free(b);
    ok(gimpi_bytes_len(w) == 0, "take empties the writer");
    b = gimpi_bytes_take(w, &len);
    ok(b != NULL && len == 0, "an empty writer hands over a buffer of 0 bytes");
    free(b);
    gimpi_bytes_destroy(&w);
    ok(w == NULL, "destroy sets the pointer to NULL");

    w = gimpi_bytes_new(6);
    gimpi_bytes_put32(w, 1);
    gimpi_bytes_put32(w, 2);                    /* 8 > 6: fails */
    gimpi_bytes_put(w, "x", 1);                 /* would fit, but the writer failed */
    ok(!gimpi_bytes_ok(w) && gimpi_bytes_len(w) == 4, "a bounded writer fails at its bound");
    b = gimpi_bytes_take(w, &len);
    ok(b == NULL && len == 0, "and hands over nothing");
    gimpi_bytes_destroy(&w);
    return exit_status();
}
