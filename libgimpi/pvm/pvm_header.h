/*  pvm_header.h — the small header the PVM transport (pvm_transport_impi.c) puts in front
 *  of every PVM message inside the data plane's payload, and its decoder, kept apart so
 *  that a fuzz target (fuzz/fuzz_pvm_header.c) can drive the decoder with any bytes.
 *
 *  16 bytes: byte 0 'P', byte 1 version 1, byte 2 encoding (0 default/XDR, 1 raw), byte 3
 *  flags (PVM_HDR_BODY_FOLLOWS, PVM_HDR_BCAST_BODY, PVM_HDR_WID), bytes 4-7 the PVM
 *  message context (big endian, signed: 0 for PvmBaseContext, so a program that never
 *  calls pvm_newcontext sends the same bytes as before contexts existed), bytes 8-15 the
 *  body's length (big endian).  With PVM_HDR_WID (a message whose wait id pvm_setminfo or
 *  pvm_setmwid made non-zero; never set otherwise) the wait id follows as 4 big-endian
 *  bytes.  Then, for a pvm_bcast body (BCAST_BODY, with BODY_FOLLOWS), the sender's bcast
 *  number as 8 bytes.  An inline message is the header and its body; a header whose body
 *  follows (BODY_FOLLOWS) is the header alone.  The functions are static inline: the
 *  message path keeps them inlined.
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
#define PVM_HDR_WID 4           /* the wait id follows the 16 bytes */
#define PVM_HDR_WID_SIZE 4

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

/*  Writes the wait id after a header whose flags have PVM_HDR_WID. */
static inline void pvm_header_put_wid(uint8_t *h, int wid)
{
    uint32_t w = (uint32_t)wid;
    for (int i = 0; i < 4; i++)
        h[PVM_HDR_SIZE + i] = (uint8_t)(w >> (24 - 8 * i));
}

/*  Reads the header of a message of len bytes: its size (16, plus 4 with PVM_HDR_WID,
 *  plus 8 with PVM_HDR_BCAST_BODY; an inline body starts there) with the fields set (*wid
 *  0 without PVM_HDR_WID), or GIMPI_EBADMSG when it is not one of ours (then the fields
 *  may be partly set). */
static inline int pvm_header_get(const uint8_t *h, size_t len, int *encoding, int *flags,
                                 int *ctxid, uint64_t *bodylen, int *wid)
{
    if (len < PVM_HDR_SIZE || h[0] != PVM_HDR_MAGIC || h[1] != PVM_HDR_VERSION || h[2] > 1)
        return GIMPI_EBADMSG;
    *encoding = h[2] == 0 ? PVM_BUF_DEFAULT : PVM_BUF_RAW;
    int f = *flags = h[3];
    uint32_t c = 0;
    for (int i = 0; i < 4; i++)
        c = c << 8 | h[4 + i];
    *ctxid = (int)c;
    uint64_t n = 0;
    for (int i = 0; i < 8; i++)
        n = n << 8 | h[8 + i];
    *bodylen = n;
    *wid = 0;
    if (f == 0)                         /* the common case: an inline body, no wait id */
        return n == len - PVM_HDR_SIZE ? PVM_HDR_SIZE : GIMPI_EBADMSG;
    if ((f & ~(PVM_HDR_BODY_FOLLOWS | PVM_HDR_BCAST_BODY | PVM_HDR_WID))
        || (f & (PVM_HDR_BCAST_BODY | PVM_HDR_BODY_FOLLOWS)) == PVM_HDR_BCAST_BODY)
        return GIMPI_EBADMSG;
    size_t hl = PVM_HDR_SIZE + (f & PVM_HDR_WID ? PVM_HDR_WID_SIZE : 0)
              + (f & PVM_HDR_BCAST_BODY ? 8 : 0);
    if (len < hl || (f & PVM_HDR_BODY_FOLLOWS ? len != hl : n != len - hl))
        return GIMPI_EBADMSG;
    uint32_t w = 0;
    if (f & PVM_HDR_WID)
        for (int i = 0; i < 4; i++)
            w = w << 8 | h[PVM_HDR_SIZE + i];
    *wid = (int)w;
    return (int)hl;
}

#endif
