/*  pvm_header.h — the small header the PVM transport (pvm_transport_impi.c) puts in front
 *  of every PVM message inside the data plane's payload, and its decoder, kept apart so
 *  that a fuzz target (fuzz/fuzz_pvm_header.c) can drive the decoder with any bytes.
 *
 *  16 bytes: byte 0 'P', byte 1 version 1, byte 2 encoding (0 default/XDR, 1 raw), byte 3
 *  flags (PVM_HDR_BODY_FOLLOWS, PVM_HDR_BCAST_BODY), bytes 4-7 the PVM message context
 *  (big endian, signed: 0 for PvmBaseContext, so a program that never calls
 *  pvm_newcontext sends the same bytes as before contexts existed), bytes 8-15 the body's
 *  length (big endian).  An inline message is the header and its body; a header whose
 *  body follows (BODY_FOLLOWS) is the 16 bytes alone, or, for a pvm_bcast body
 *  (BCAST_BODY too), 24 with the sender's bcast number after them.  The functions are
 *  static inline: the message path keeps them inlined.
 */
#ifndef GIMPI_PVM_HEADER_H
#define GIMPI_PVM_HEADER_H

#include "pvm/pvm_buf.h"
#include "gimpi_errors.h"

#include <stddef.h>
#include <stdint.h>

#define PVM_HDR_SIZE 16
#define PVM_HDR_MAGIC 'P'
#define PVM_HDR_VERSION 1
#define PVM_HDR_BODY_FOLLOWS 1
#define PVM_HDR_BCAST_BODY 2    /* with BODY_FOLLOWS: the body is a bcast body, seq follows */
#define PVM_HDR_BCAST_SIZE (PVM_HDR_SIZE + 8)

/*  Writes the 16-byte header. */
static inline void pvm_header_put(uint8_t *h, int encoding, int flags, int ctxid,
                                  uint64_t bodylen)
{
    h[0] = PVM_HDR_MAGIC;
    h[1] = PVM_HDR_VERSION;
    h[2] = (uint8_t)(encoding == PVM_BUF_DEFAULT ? 0 : 1);
    h[3] = (uint8_t)flags;
    uint32_t c = (uint32_t)ctxid;
    for (int i = 0; i < 4; i++)
        h[4 + i] = (uint8_t)(c >> (24 - 8 * i));
    for (int i = 0; i < 8; i++)
        h[8 + i] = (uint8_t)(bodylen >> (56 - 8 * i));
}

/*  Reads the header of a message of len bytes: 0 with the fields set, or GIMPI_EBADMSG
 *  when it is not one of ours (then the fields may be partly set). */
static inline int pvm_header_get(const uint8_t *h, size_t len, int *encoding, int *flags,
                                 int *ctxid, uint64_t *bodylen)
{
    if (len < PVM_HDR_SIZE || h[0] != PVM_HDR_MAGIC || h[1] != PVM_HDR_VERSION || h[2] > 1
        || (h[3] & ~(PVM_HDR_BODY_FOLLOWS | PVM_HDR_BCAST_BODY)) || h[3] == PVM_HDR_BCAST_BODY)
        return GIMPI_EBADMSG;
    *encoding = h[2] == 0 ? PVM_BUF_DEFAULT : PVM_BUF_RAW;
    *flags = h[3];
    uint32_t c = 0;
    for (int i = 0; i < 4; i++)
        c = c << 8 | h[4 + i];
    *ctxid = (int)c;
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n = n << 8 | h[8 + i];
    *bodylen = n;
    if (*flags & PVM_HDR_BCAST_BODY ? len != PVM_HDR_BCAST_SIZE
        : *flags & PVM_HDR_BODY_FOLLOWS ? len != PVM_HDR_SIZE : n != len - PVM_HDR_SIZE)
        return GIMPI_EBADMSG;
    return 0;
}

#endif
