/*  fuzz/fuzz_pvm_header.c — libFuzzer target for the PVM transport's message header
 *  (pvm_header_get, pvm_header_put in libgimpi/pvm/pvm_header.h), the first bytes of every
 *  PVM message a task takes off the data plane from any peer.  Input: the message's bytes.
 *  Invariants: the decoder never reads past len; an accepted header has encoding
 *  default or raw, only known flags, and a length that agrees with the message (inline:
 *  the bytes after the header; a following body: a 16-byte message; a bcast body: 24);
 *  encoding it again with the decoded fields (context included, any 32-bit value) gives
 *  back the input's 16 bytes (the version byte and magic fixed), and decoding that again
 *  gives the same fields.
 */
#include "fuzz_check.h"
#include "pvm/pvm_header.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a copy of exactly size bytes: ASan catches any read past the message */
    uint8_t *msg = malloc(size ? size : 1);
    if (!msg)
        return 0;
    if (size)
        memcpy(msg, data, size);
    int enc = -1, flags = -1, ctxid = 0;
    uint64_t bodylen = 0;
    int rc = pvm_header_get(msg, size, &enc, &flags, &ctxid, &bodylen);
    CHECK(rc == 0 || rc == GIMPI_EBADMSG);
    if (rc == 0) {
        CHECK(size >= PVM_HDR_SIZE);
        CHECK(enc == PVM_BUF_DEFAULT || enc == PVM_BUF_RAW);
        CHECK((flags & ~(PVM_HDR_BODY_FOLLOWS | PVM_HDR_BCAST_BODY)) == 0);
        CHECK(flags != PVM_HDR_BCAST_BODY);
        if (flags & PVM_HDR_BCAST_BODY)
            CHECK(size == PVM_HDR_BCAST_SIZE);
        else if (flags & PVM_HDR_BODY_FOLLOWS)
            CHECK(size == PVM_HDR_SIZE);
        else
            CHECK(bodylen == size - PVM_HDR_SIZE);
        uint8_t again[PVM_HDR_SIZE];
        pvm_header_put(again, enc, flags, ctxid, bodylen);
        CHECK(memcmp(again, msg, PVM_HDR_SIZE) == 0);
        uint8_t whole[PVM_HDR_BCAST_SIZE];
        memcpy(whole, again, PVM_HDR_SIZE);
        memset(whole + PVM_HDR_SIZE, 0, sizeof whole - PVM_HDR_SIZE);
        int e2, f2, c2;
        uint64_t n2;
        size_t len2 = flags & PVM_HDR_BCAST_BODY ? PVM_HDR_BCAST_SIZE : PVM_HDR_SIZE;
        if (!(flags & PVM_HDR_BODY_FOLLOWS))
            len2 = bodylen == 0 ? PVM_HDR_SIZE : 0;     /* an inline body: only if empty */
        if (len2) {
            CHECK(pvm_header_get(whole, len2, &e2, &f2, &c2, &n2) == 0);
            CHECK(e2 == enc && f2 == flags && c2 == ctxid && n2 == bodylen);
        }
    } else if (size >= PVM_HDR_SIZE && msg[0] == PVM_HDR_MAGIC && msg[1] == PVM_HDR_VERSION
               && msg[2] <= 1 && (msg[3] == 0 || msg[3] == PVM_HDR_BODY_FOLLOWS)) {
        /* refused although magic, version, encoding and flags are fine: the length */
        uint64_t n = 0;
        for (int i = 0; i < 8; i++)
            n = n << 8 | msg[8 + i];
        CHECK(msg[3] ? size != PVM_HDR_SIZE : n != size - PVM_HDR_SIZE);
    }
    free(msg);
    return 0;
}
