/*  gimpi_be.h — big-endian (network order) integers in byte buffers: the one set of
 *  put/get helpers that IMPI's wire codec, groupd's protocol and the virtual machine's
 *  frames write and read their 32- and 64-bit fields with.  Inline: the packet codec
 *  runs on the data plane's hot path.
 */
#ifndef GIMPI_BE_H
#define GIMPI_BE_H

#include <stdint.h>

/*  Writes v at p, most significant byte first. */
static inline void gimpi_be_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
}

/*  Reads the 32-bit value at p, most significant byte first. */
static inline uint32_t gimpi_be_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*  Writes v at p, most significant byte first. */
static inline void gimpi_be_put64(uint8_t *p, uint64_t v)
{
    gimpi_be_put32(p, (uint32_t)(v >> 32));
    gimpi_be_put32(p + 4, (uint32_t)v);
}

/*  Reads the 64-bit value at p, most significant byte first. */
static inline uint64_t gimpi_be_get64(const uint8_t *p)
{
    return (uint64_t)gimpi_be_get32(p) << 32 | gimpi_be_get32(p + 4);
}
#endif
