/*  fuzz/fuzz_packet.c — libFuzzer target for the 128-byte IMPI packet header
 *  (impi_packet_decode, impi_packet_data_len, impi_packet_format).  Input: 128 header bytes,
 *  then optionally a Uint4 max_data (the negotiated packet length; 8000 when absent) and a
 *  byte choosing the format buffer's size.  Invariants: the decoder reads every field even
 *  when it refuses the header, so decode -> encode gives back the input bytes and decoding
 *  again gives the same verdict; an accepted data packet has pk_len <= max_data and
 *  <= pk_msglen and announces pk_len data bytes, every other type none; the description
 *  stays inside its buffer and names the packet type.
 */
#include "fuzz_check.h"
#include "impi/impi_wire.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < IMPI_PACKET_SIZE)
        return 0;
    uint32_t max_data = size >= IMPI_PACKET_SIZE + 4 ? gimpi_be_get32(data + IMPI_PACKET_SIZE) : 8000;
    size_t fmt_size = size >= IMPI_PACKET_SIZE + 5 ? 1 + data[IMPI_PACKET_SIZE + 4] * 2 : 512;

    impi_packet_t pk;
    int rc = impi_packet_decode(data, max_data, &pk);
    uint8_t again[IMPI_PACKET_SIZE];
    impi_packet_encode(again, &pk);
    CHECK(memcmp(again, data, IMPI_PACKET_SIZE) == 0);

    impi_packet_t pk2;
    CHECK(impi_packet_decode(again, max_data, &pk2) == rc);
    uint8_t third[IMPI_PACKET_SIZE];
    impi_packet_encode(third, &pk2);
    CHECK(memcmp(third, again, IMPI_PACKET_SIZE) == 0);

    const impi_packet_info_t *info = impi_packet_info(pk.type);
    if (rc == IMPI_OK) {
        CHECK(info != NULL && info->value == pk.type);
        if (info->has_data) {
            CHECK(pk.len <= max_data && pk.len <= pk.msglen);
            CHECK(impi_packet_data_len(&pk) == pk.len);
        } else {
            CHECK(impi_packet_data_len(&pk) == 0);
        }
    } else if (rc == IMPI_ERR_PACKET) {
        CHECK(info == NULL && impi_packet_data_len(&pk) == 0);
    } else {
        CHECK(rc == IMPI_ERR_LENGTH && info != NULL && info->has_data);
        CHECK(pk.len > max_data || pk.len > pk.msglen);
    }

    char buf[520];
    const char *s = impi_packet_format(&pk, buf, fmt_size);
    CHECK(s == buf && strlen(s) < fmt_size);
    const char *name = impi_packet_name(pk.type);
    if (fmt_size > strlen(name))
        CHECK(strncmp(s, name, strlen(name)) == 0);
    return 0;
}
