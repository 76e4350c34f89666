/*  fuzz/fuzz_pvm_header.c — libFuzzer target for the PVM transport's message header
 *  (pvm_header_get, pvm_header_put, pvm_header_put_wid in libgimpi/pvm/pvm_header.h), the
 *  first bytes of every PVM message a task takes off the data plane from any peer.
 *  Input: the message's bytes.  Invariants: the decoder never reads past len; an
 *  accepted header has encoding default or raw, only known flags (a bcast body only with
 *  a following body), a size of 16 + 4 with a wait id + 8 with a bcast number, a wait id
 *  of 0 without one, and a length that agrees with the message (inline: the bytes after
 *  the header; a following body: the header alone); encoding it again with the decoded
 *  fields (context and wait id: any 32-bit value) gives back the input's header bytes,
 *  and decoding that again gives the same fields; a refusal of a header whose magic,
 *  version, encoding and flags are fine is a length mismatch.
 */
#include "fuzz_check.h"
#include "pvm/pvm_header.h"

#include <string.h>

enum { KNOWN = PVM_HDR_BODY_FOLLOWS | PVM_HDR_BCAST_BODY | PVM_HDR_WID };

/*  The header size the flags call for. */
static size_t s_size(int flags)
{
    return PVM_HDR_SIZE + (flags & PVM_HDR_WID ? PVM_HDR_WID_SIZE : 0)
           + (flags & PVM_HDR_BCAST_BODY ? 8 : 0);
}

/*  Checks an accepted header of a message of size bytes (hl: what the decoder said). */
static void s_accepted(const uint8_t *msg, size_t size, int hl, int enc, int flags, int ctxid,
                       uint64_t bodylen, int wid)
{
    CHECK(enc == PVM_BUF_DEFAULT || enc == PVM_BUF_RAW);
    CHECK((flags & ~KNOWN) == 0);
    CHECK((flags & (PVM_HDR_BCAST_BODY | PVM_HDR_BODY_FOLLOWS)) != PVM_HDR_BCAST_BODY);
    CHECK((size_t)hl == s_size(flags) && size >= (size_t)hl);
    CHECK(flags & PVM_HDR_WID || wid == 0);
    if (flags & PVM_HDR_BODY_FOLLOWS)
        CHECK(size == (size_t)hl);
    else
        CHECK(bodylen == size - (size_t)hl);
    uint8_t again[PVM_HDR_SIZE + PVM_HDR_WID_SIZE + 8];
    memset(again, 0, sizeof again);
    pvm_header_put(again, enc, flags, ctxid, bodylen);
    if (flags & PVM_HDR_WID)
        pvm_header_put_wid(again, wid);
    size_t fixed = PVM_HDR_SIZE + (flags & PVM_HDR_WID ? PVM_HDR_WID_SIZE : 0);
    CHECK(memcmp(again, msg, fixed) == 0);
    /* decode the rebuilt header alone: the same fields (an inline body only if empty) */
    if ((flags & PVM_HDR_BODY_FOLLOWS) || bodylen == 0) {
        int e2, f2, c2, w2;
        uint64_t n2;
        CHECK(pvm_header_get(again, (size_t)hl, &e2, &f2, &c2, &n2, &w2) == hl);
        CHECK(e2 == enc && f2 == flags && c2 == ctxid && n2 == bodylen && w2 == wid);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: ASan catches any read past the message */
    uint8_t *msg = malloc(size ? size : 1);
    if (!msg)
        return 0;
    if (size)
        memcpy(msg, data, size);
    int enc = -1, flags = -1, ctxid = 0, wid = 0;
    uint64_t bodylen = 0;
    int hl = pvm_header_get(msg, size, &enc, &flags, &ctxid, &bodylen, &wid);
    CHECK(hl >= PVM_HDR_SIZE || hl == GIMPI_EBADMSG);
    if (hl > 0) {
        s_accepted(msg, size, hl, enc, flags, ctxid, bodylen, wid);
    } else if (size >= PVM_HDR_SIZE && msg[0] == PVM_HDR_MAGIC && msg[1] == PVM_HDR_VERSION
               && msg[2] <= 1 && !(msg[3] & ~KNOWN)
               && (msg[3] & (PVM_HDR_BCAST_BODY | PVM_HDR_BODY_FOLLOWS)) != PVM_HDR_BCAST_BODY) {
        /* refused although magic, version, encoding and flags are fine: the length */
        size_t want = s_size(msg[3]);
        uint64_t n = 0;
        for (int i = 0; i < 8; i++)
            n = n << 8 | msg[8 + i];
        CHECK(size < want || (msg[3] & PVM_HDR_BODY_FOLLOWS ? size != want : n != size - want));
    }
    free(msg);
    return 0;
}
