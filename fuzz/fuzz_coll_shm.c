/*  fuzz/fuzz_coll_shm.c — libFuzzer target for what a member reads of another's making in
 *  the collectives' shared memory (libgimpi/coll/coll_shm.c): the offer that comes over the
 *  data plane (coll_shm_offer_decode) and the segment header (coll_shm_check_header).
 *  Input: 64 bytes of offer, then the header bytes.  Invariants: an accepted offer encodes
 *  back to the same bytes and names a plausible segment; a header is accepted only when
 *  every checked field is what the offer (or, when it did not decode, a fixed segment of 4
 *  members) promised.
 */
#include "fuzz_check.h"
#include "coll/coll_shm.h"

#include <string.h>

/*  Little-endian loads. */
static uint32_t s_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t s_get64(const uint8_t *p)
{
    return (uint64_t)s_get32(p) | (uint64_t)s_get32(p + 4) << 32;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    coll_shm_offer_t o;
    memset(&o, 0, sizeof o);
    int rc = coll_shm_offer_decode(data, size < COLL_SHM_OFFER_SIZE ? size : COLL_SHM_OFFER_SIZE,
                                   &o);
    if (size >= COLL_SHM_OFFER_SIZE && rc == 0) {
        uint8_t back[COLL_SHM_OFFER_SIZE];
        coll_shm_offer_encode(&o, back);
        CHECK(memcmp(back, data, COLL_SHM_OFFER_SIZE) == 0);
        CHECK(o.pid > 0 && o.fd >= 0 && o.n >= 2 && o.chunk >= 64 && o.size > o.chunk);
    }
    if (rc != 0) {                      /* a fixed segment: 4 members, 4 KiB slots */
        o.n = 4;
        o.chunk = 4096;
        o.size = 4096 + 4 * 2 * 4096;
        for (int i = 0; i < 16; i++)
            o.nonce[i] = (uint8_t)i;
    }
    if (size <= COLL_SHM_OFFER_SIZE)
        return 0;
    const uint8_t *h = data + COLL_SHM_OFFER_SIZE;
    size_t hlen = size - COLL_SHM_OFFER_SIZE;
    if (coll_shm_check_header(h, hlen, o.n, o.size, o.chunk, o.nonce) == 0) {
        CHECK(hlen >= 64);
        CHECK(s_get32(h) == 0x48534347u && s_get32(h + 8) == (uint32_t)o.n);
        CHECK(s_get64(h + 16) == o.size && s_get64(h + 24) == o.chunk);
        CHECK(memcmp(h + 32, o.nonce, 16) == 0);
    }
    return 0;
}
