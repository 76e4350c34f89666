/*  fuzz/fuzz_ring.c — libFuzzer target for the shared-memory byte ring (gimpi_ring.c), with
 *  the input playing a hostile peer.  One ring of 4096 data bytes over plain memory, a
 *  producer and a consumer handle on it; the input is a script of 3-byte steps (opcode,
 *  then a 16-bit argument, little-endian): write N bytes, read into a buffer of N bytes
 *  (split in two pieces), the peer overwrites the head, the tail or the sleep flags with
 *  a value taken from the argument (near the real index, or far off), the peer scribbles
 *  on the data, read in place (peek, then consume part of it), write in place (reserve,
 *  copy, commit).  Invariants: a read or write returns -1 with EPROTO or a count within its
 *  buffer and the ring's size; everything copied stays inside the buffers (AddressSanitizer
 *  watches); as long as the peer has not touched an index, the bytes read are exactly the
 *  bytes written, in order, and the ring holds what a model FIFO holds.
 */
#include "fuzz_check.h"
#include "net/gimpi_ring.h"

#include <errno.h>
#include <string.h>

#define RSZ 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static _Alignas(64) uint8_t mem[GIMPI_RING_HDR + RSZ];
    static uint8_t model[RSZ], out[2 * RSZ], src[2 * RSZ];
    memset(mem, 0, sizeof mem);
    gimpi_ring_hdr_t *h = (gimpi_ring_hdr_t *)mem;
    h->magic = GIMPI_RING_MAGIC;
    h->version = GIMPI_RING_VERSION;
    h->hdr = GIMPI_RING_HDR;
    h->size = RSZ;
    gimpi_ring_t *w = gimpi_ring_wrap(mem, RSZ, 0), *r = gimpi_ring_wrap(mem, RSZ, 1);
    CHECK(w && r);
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 31 + 7);
    uint64_t in = 0, got = 0;           /* model: bytes written and read so far */
    int tampered = 0, bell = 0;
    for (size_t at = 0; at + 3 <= size; at += 3) {
        unsigned op = data[at] % 9, arg = data[at + 1] | (unsigned)data[at + 2] << 8;
        size_t n = arg % (2 * RSZ + 1);
        switch (op) {
        case 0: {                       /* write n bytes, in two pieces */
            struct iovec iv[2] = { { src, n / 3 }, { src + n / 3, n - n / 3 } };
            errno = 0;
            ssize_t k = gimpi_ring_writev(w, iv, 2, &bell);
            CHECK(k == -1 ? errno == EPROTO : (size_t)k <= n && k <= RSZ);
            if (k >= 0 && !tampered) {
                uint64_t room = RSZ - (in - got);
                CHECK((uint64_t)k == (n < room ? n : room));
                for (ssize_t i = 0; i < k; i++)
                    model[(in + (uint64_t)i) % RSZ] = src[i];
                in += (uint64_t)k;
            }
            break;
        }
        case 1: {                       /* read into n bytes, in two pieces */
            struct iovec ov[2] = { { out, n / 2 }, { out + RSZ, n - n / 2 } };
            errno = 0;
            ssize_t k = gimpi_ring_readv(r, ov, 2, &bell);
            CHECK(k == -1 ? errno == EPROTO : (size_t)k <= n && k <= RSZ);
            if (k >= 0 && !tampered) {
                CHECK((uint64_t)k == (in - got < n ? in - got : n));
                for (ssize_t i = 0; i < k; i++) {
                    uint8_t b = i < (ssize_t)(n / 2) ? out[i] : out[RSZ + i - n / 2];
                    CHECK(b == model[(got + (uint64_t)i) % RSZ]);
                }
                got += (uint64_t)k;
            }
            if (!tampered)
                CHECK(gimpi_ring_avail(r) == in - got);
            break;
        }
        case 2:                         /* the peer moves the head near, or far */
            h->head = arg & 1 ? h->head + (arg >> 1) - 16384 : (uint64_t)arg << 40;
            tampered = 1;
            break;
        case 3:                         /* the peer moves the tail near, or far */
            h->tail = arg & 1 ? h->tail + (arg >> 1) - 16384 : (uint64_t)arg << 40;
            tampered = 1;
            break;
        case 4:                         /* the peer sets or clears the sleep flags */
            h->rsleep = arg & 1;
            h->wsleep = (arg >> 1) & 1;
            break;
        case 5:                         /* the peer scribbles on the data */
            mem[GIMPI_RING_HDR + arg % RSZ] ^= 0xa5;
            tampered = 1;
            break;
        case 7: {                       /* read in place: look, then free up to n bytes */
            const uint8_t *p = NULL;
            errno = 0;
            ssize_t k = gimpi_ring_peek(r, &p);
            CHECK(k == -1 ? errno == EPROTO : k <= RSZ);
            if (k <= 0)
                break;
            CHECK(p >= mem + GIMPI_RING_HDR && p + k <= mem + sizeof mem);
            size_t take = n < (size_t)k ? n : (size_t)k;
            if (!tampered) {
                CHECK((uint64_t)k <= in - got);
                for (size_t i = 0; i < take; i++)
                    CHECK(p[i] == model[(got + i) % RSZ]);
                got += take;
            }
            gimpi_ring_consume(r, take, &bell);
            break;
        }
        case 8: {                       /* write n bytes in place, when they fit in one piece */
            uint8_t *p = NULL;
            errno = 0;
            int k = gimpi_ring_reserve(w, n, &p);
            CHECK(k == -1 ? errno == EPROTO : k == 0 || k == 1);
            if (k != 1)
                break;
            CHECK(p >= mem + GIMPI_RING_HDR && p + n <= mem + sizeof mem);
            memcpy(p, src, n);
            gimpi_ring_commit(w, n, &bell);
            if (!tampered) {
                CHECK(n <= RSZ - (in - got));
                for (size_t i = 0; i < n; i++)
                    model[(in + i) % RSZ] = src[i];
                in += n;
            }
            break;
        }
        case 6:                         /* both sides arm and look */
            gimpi_ring_arm_reader(r, arg & 1);
            gimpi_ring_arm_writer(w, (arg >> 1) & 1);
            break;
        }
    }
    gimpi_ring_destroy(&w);
    gimpi_ring_destroy(&r);
    return 0;
}
