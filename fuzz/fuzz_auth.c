/*  fuzz/fuzz_auth.c — libFuzzer target for the raw 8-byte AUTH reply
 *  (impi_auth_reply_decode) and the method choice (impi_auth_choose).  Input: 8 reply bytes,
 *  then optionally 8 bytes of client and server method masks.  Invariants: the reply
 *  round-trips through the encoder; an accepted reply names a known method; the chosen
 *  method is enabled on both sides (GIMPI_JOB counts as enabled on a server that enables
 *  GIMPI) and is the strongest such.
 */
#include "fuzz_check.h"
#include "impi/impi_wire.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < IMPI_AUTH_REPLY_SIZE)
        return 0;
    int32_t which, len;
    int rc = impi_auth_reply_decode(data, &which, &len);
    uint8_t again[IMPI_AUTH_REPLY_SIZE];
    impi_auth_reply_encode(again, which, len);
    CHECK(memcmp(again, data, IMPI_AUTH_REPLY_SIZE) == 0);
    if (rc == IMPI_OK)
        CHECK(which == IMPI_AUTH_NONE || which == IMPI_AUTH_KEY || which == IMPI_AUTH_GIMPI
              || which == IMPI_AUTH_GIMPI_JOB);
    else
        CHECK(rc == IMPI_ERR_VALUE && which != IMPI_AUTH_NONE && which != IMPI_AUTH_KEY
              && which != IMPI_AUTH_GIMPI && which != IMPI_AUTH_GIMPI_JOB);

    if (size >= IMPI_AUTH_REPLY_SIZE + 8) {
        uint32_t cmask = gimpi_be_get32(data + 8), smask = gimpi_be_get32(data + 12);
        int m = impi_auth_choose(cmask, smask);
        if (smask & (1u << IMPI_AUTH_GIMPI))
            smask |= 1u << IMPI_AUTH_GIMPI_JOB;
        uint32_t common = cmask & smask & ((1u << IMPI_AUTH_NONE) | (1u << IMPI_AUTH_KEY)
                                           | (1u << IMPI_AUTH_GIMPI)
                                           | (1u << IMPI_AUTH_GIMPI_JOB));
        if (common == 0) {
            CHECK(m == -1);
        } else {
            CHECK(m == IMPI_AUTH_NONE || m == IMPI_AUTH_KEY || m == IMPI_AUTH_GIMPI
                  || m == IMPI_AUTH_GIMPI_JOB);
            CHECK(common & (1u << m));
            CHECK(m == IMPI_AUTH_GIMPI_JOB || !(common & (1u << IMPI_AUTH_GIMPI_JOB)));
            CHECK(m >= IMPI_AUTH_GIMPI || !(common & (1u << IMPI_AUTH_GIMPI)));
            CHECK(m != IMPI_AUTH_NONE || !(common & (1u << IMPI_AUTH_KEY)));
        }
    }
    return 0;
}
