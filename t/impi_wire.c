/*  t/impi_wire.c — tests of the table-driven IMPI codec (libgimpi/impi/impi_wire.c): the
 *  tables themselves, command framing, AUTH, IMPI_Proc, COLL payloads and replies (the
 *  IMPI draft's worked examples, doc/impi-protocol.md §3.12), the 128-byte packet header, and refusal of lying lengths.
 */
#include "gtap.h"
#include "impi/impi_wire.h"

#include <stdlib.h>
#include <string.h>

/*  The tables: every label known by value and name, ascending, sizes sane. */
static void test_tables(void)
{
    ok(IMPI_LABEL_COUNT == 14, "14 labels in the table");
    int ascending = 1;
    for (int i = 1; i < IMPI_LABEL_COUNT; i++)
        ascending &= impi_label_at(i)->value > impi_label_at(i - 1)->value;
    ok(ascending, "label table is in ascending order");
    is(impi_label_name(0x2100), "IMPI_H_PORT", "H_PORT by value");
    is(impi_label_name(IMPI_C_PKTLEN), "IMPI_C_DATALEN", "PKTLEN is DATALEN");
    cmp_ok(impi_label_info(IMPI_P_PID)->elem_size, "==", 8, "P_PID is 8 bytes");
    ok(impi_label_info(0x4242) == NULL, "unknown label not in the table");
    is(impi_cmd_name(0x434F4C4C), "COLL", "COLL command value");
    ok(impi_cmd_name(0x12345678) == NULL, "unknown command");
    ok(!impi_packet_info(IMPI_PK_PROTOACK)->counted, "PROTOACK not counted");
    ok(!impi_packet_info(IMPI_PK_FINI)->counted, "FINI not counted");
    ok(impi_packet_info(IMPI_PK_SYNCACK)->counted, "SYNCACK counted");
    ok(impi_packet_info(IMPI_PK_DATASYNC)->has_data, "DATASYNC carries data");
    ok(!impi_packet_info(IMPI_PK_CANCEL)->has_data, "CANCEL carries none");
}

/*  Command headers: bytes, length rules, the 2^31 refusal. */
static void test_cmd(void)
{
    uint8_t b[8];
    impi_cmd_t c;
    impi_cmd_encode(b, IMPI_CMD_AUTH, 4);
    static const uint8_t auth[8] = { 0x41, 0x55, 0x54, 0x48, 0, 0, 0, 4 };
    ok(memcmp(b, auth, 8) == 0, "AUTH header bytes");
    cmp_ok(impi_cmd_decode(b, IMPI_MAX_PAYLOAD, &c), "==", IMPI_OK, "AUTH decodes");
    impi_cmd_encode(b, IMPI_CMD_AUTH, 5);
    cmp_ok(impi_cmd_decode(b, IMPI_MAX_PAYLOAD, &c), "==", IMPI_ERR_LENGTH, "AUTH len 5 refused");
    impi_cmd_encode(b, IMPI_CMD_COLL, 0x80000000u);
    cmp_ok(impi_cmd_decode(b, IMPI_MAX_PAYLOAD, &c), "==", IMPI_ERR_LENGTH,
           "COLL claiming 2^31 bytes refused");
    impi_cmd_encode(b, IMPI_CMD_COLL, 3);
    cmp_ok(impi_cmd_decode(b, IMPI_MAX_PAYLOAD, &c), "==", IMPI_ERR_LENGTH, "COLL len 3 refused");
    impi_cmd_encode(b, 0x58585858, 0);
    cmp_ok(impi_cmd_decode(b, IMPI_MAX_PAYLOAD, &c), "==", IMPI_ERR_COMMAND, "unknown command");
    impi_cmd_encode(b, IMPI_CMD_DONE, 0);
    cmp_ok(impi_cmd_decode(b, IMPI_MAX_PAYLOAD, &c), "==", IMPI_OK, "DONE len 0");
}

/*  AUTH reply and method choice. */
static void test_auth(void)
{
    uint8_t b[8];
    int32_t which, len;
    impi_auth_reply_encode(b, IMPI_AUTH_KEY, 8);
    static const uint8_t want[8] = { 0, 0, 0, 1, 0, 0, 0, 8 };
    ok(memcmp(b, want, 8) == 0, "AUTH reply is 8 raw bytes");
    ok(impi_auth_reply_decode(b, &which, &len) == IMPI_OK && which == 1 && len == 8,
       "AUTH reply decodes");
    impi_auth_reply_encode(b, 7, 0);
    cmp_ok(impi_auth_reply_decode(b, &which, &len), "==", IMPI_ERR_VALUE, "unknown method");
    cmp_ok(impi_auth_choose(0x3, 0x3), "==", IMPI_AUTH_KEY, "KEY preferred over NONE");
    cmp_ok(impi_auth_choose(0x1, 0x3), "==", IMPI_AUTH_NONE, "NONE when client has only NONE");
    cmp_ok(impi_auth_choose(0x2, 0x1), "==", -1, "nothing common");
}

/*  IMPI_Proc: 24 bytes, compatible address form. */
static void test_proc(void)
{
    impi_proc_t p = { .pid = -2 }, q;
    impi_addr16_from_ipv4(p.hostid, 0xC0000202);
    uint8_t b[24];
    impi_proc_encode(b, &p);
    ok(b[12] == 192 && b[15] == 2 && b[16] == 0xff && b[23] == 0xfe, "proc bytes");
    impi_proc_decode(b, &q);
    ok(impi_proc_equal(&p, &q), "proc round trip");
    char buf[64];
    is(impi_addr16_format(p.hostid, buf, sizeof buf), "192.0.2.2", "address formats");
}

/*  Builds a reply payload (label, mask, data) in a heap buffer. */
static uint8_t *reply(int32_t label, uint32_t mask, const uint32_t *words, size_t n, size_t *len)
{
    *len = 8 + 4 * n;
    uint8_t *b = malloc(*len);
    gimpi_be_put32(b, (uint32_t)label);
    gimpi_be_put32(b + 4, mask);
    for (size_t i = 0; i < n; i++)
        gimpi_be_put32(b + 8 + 4 * i, words[i]);
    return b;
}

/*  The seeds' worked examples, as replies split by the codec. */
static void test_coll_seeds(void)
{
    size_t len;
    impi_coll_reply_t r;
    impi_slice_t s[3];
    uint8_t hdr[16];

    static const uint32_t nh[] = { 3, 2, 2 };
    uint8_t *b = reply(IMPI_C_NHOSTS, 0x7, nh, 3, &len);
    impi_coll_reply_header(hdr, IMPI_C_NHOSTS, 0x7, 12);
    cmp_ok(gimpi_be_get32(hdr + 4), "==", 20, "NHOSTS reply len 20");
    ok(impi_coll_reply_decode(b, len, &r) == IMPI_OK && r.mask == 7, "NHOSTS reply decodes");
    ok(impi_coll_reply_split(&r, 3, NULL, s) == IMPI_OK &&
       gimpi_be_get32(s[0].data) == 3 && gimpi_be_get32(s[2].data) == 2, "NHOSTS split 3,2,2");
    free(b);

    static const uint32_t pk[] = { 8000, 4000 };
    b = reply(IMPI_C_PKTLEN, 0x5, pk, 2, &len);
    impi_coll_reply_header(hdr, IMPI_C_PKTLEN, 0x5, 8);
    cmp_ok(gimpi_be_get32(hdr + 4), "==", 16, "PKTLEN without client 1: len 16");
    ok(impi_coll_reply_decode(b, len, &r) == IMPI_OK &&
       impi_coll_reply_split(&r, 3, NULL, s) == IMPI_OK && s[1].data == NULL &&
       gimpi_be_get32(s[2].data) == 4000, "PKTLEN mask 0x5 split");
    free(b);

    static const uint32_t ports[] = { 5001, 5002, 5003, 6001, 6002, 7001, 7002 };
    b = reply(IMPI_H_PORT, 0x7, ports, 7, &len);
    impi_coll_reply_header(hdr, IMPI_H_PORT, 0x7, 28);
    cmp_ok(gimpi_be_get32(hdr + 4), "==", 36, "H_PORT reply len 36");
    long counts[3] = { 3, 2, 2 };
    ok(impi_coll_reply_decode(b, len, &r) == IMPI_OK &&
       impi_coll_reply_split(&r, 3, counts, s) == IMPI_OK && s[1].count == 2 &&
       gimpi_be_get32(s[1].data + 4) == 6002, "H_PORT split by host counts");
    long bad[3] = { 3, 3, 2 };
    cmp_ok(impi_coll_reply_split(&r, 3, bad, s), "==", IMPI_ERR_MASK, "counts that overrun refused");
    free(b);

    static const uint32_t ver[] = { 0, 0, 0, 0, 0, 1, 0, 0, 0, 1 };
    b = reply(IMPI_C_VERSION, 0x7, ver, 10, &len);
    ok(impi_coll_reply_decode(b, len, &r) == IMPI_OK && len - 8 + 8 == 48,
       "VERSION reply len 48");
    ok(impi_coll_reply_split(&r, 3, NULL, s) == IMPI_OK && s[0].count == 1 &&
       s[1].count == 2 && s[2].count == 2, "VERSION split at {0,0}: 1, 2, 2 versions");
    free(b);

    b = reply(IMPI_C_NHOSTS, 0x8, nh, 1, &len);
    impi_coll_reply_decode(b, len, &r);
    cmp_ok(impi_coll_reply_split(&r, 3, NULL, s), "==", IMPI_ERR_MASK, "mask bit beyond nclients");
    free(b);
    b = reply(IMPI_C_NHOSTS, 0x7, nh, 2, &len);
    impi_coll_reply_decode(b, len, &r);
    cmp_ok(impi_coll_reply_split(&r, 3, NULL, s), "==", IMPI_ERR_MASK, "mask says 3, payload 2");
    free(b);
}

/*  Validation of a client's contribution. */
static void test_coll_validate(void)
{
    uint8_t b[16];
    gimpi_be_put32(b, 0);
    cmp_ok(impi_coll_validate(IMPI_C_NHOSTS, b, 4, -1), "==", IMPI_ERR_VALUE, "NHOSTS 0 refused");
    gimpi_be_put32(b, 100);
    cmp_ok(impi_coll_validate(IMPI_C_TAGUB, b, 4, -1), "==", IMPI_ERR_VALUE, "TAGUB < 32767");
    gimpi_be_put32(b, (uint32_t)-1);
    cmp_ok(impi_coll_validate(IMPI_C_COLL_XSIZE, b, 4, -1), "==", IMPI_OK, "XSIZE -1 ok");
    cmp_ok(impi_coll_validate(IMPI_C_NHOSTS, b, 3, -1), "==", IMPI_ERR_LENGTH, "odd length");
    cmp_ok(impi_coll_validate(IMPI_C_NHOSTS, b, 8, -1), "==", IMPI_ERR_LENGTH, "two per-client");
    gimpi_be_put64(b, 1);
    cmp_ok(impi_coll_validate(IMPI_C_VERSION, b, 8, -1), "==", IMPI_ERR_VERSION, "no 0.0");
    gimpi_be_put64(b, 0);
    gimpi_be_put64(b + 8, 0);
    cmp_ok(impi_coll_validate(IMPI_C_VERSION, b, 16, -1), "==", IMPI_ERR_VERSION, "not ascending");
    cmp_ok(impi_coll_validate(0x7777, b, 3, -1), "==", IMPI_OK, "unknown label passes");
    cmp_ok(impi_coll_validate(IMPI_H_PORT, b, 8, 1), "==", IMPI_ERR_LENGTH, "host count mismatch");
}

/*  Packet header: exact offsets, round trip, control packets' pk_len ignored. */
static void test_packet(void)
{
    impi_packet_t p = { .type = IMPI_PK_DATASYNC, .len = 100, .srqid = 7, .drqid = 9,
                        .msglen = 1000, .lsrank = 3, .tag = -5, .cid = 1, .seqnum = 42,
                        .count = 1000, .dtype = 2, .reserved = 0 };
    p.src.pid = 11;
    p.dest.pid = 12;
    impi_addr16_from_ipv4(p.src.hostid, 0x7f000001);
    uint8_t b[128];
    impi_packet_encode(b, &p);
    ok(gimpi_be_get32(b) == 1 && gimpi_be_get32(b + 4) == 100 && b[20] == 0x7f, "type, len, src host");
    ok(gimpi_be_get64(b + 24) == 11 && gimpi_be_get64(b + 48) == 12, "src/dest pid at 24/48");
    ok(gimpi_be_get64(b + 56) == 7 && gimpi_be_get64(b + 64) == 9 && gimpi_be_get64(b + 72) == 1000,
       "srqid/drqid/msglen at 56/64/72");
    ok((int32_t)gimpi_be_get32(b + 84) == -5 && gimpi_be_get64(b + 88) == 1 && gimpi_be_get64(b + 96) == 42,
       "tag/cid/seqnum at 84/88/96");
    impi_packet_t q;
    ok(impi_packet_decode(b, 4096, &q) == IMPI_OK && memcmp(&p, &q, sizeof p) == 0,
       "packet round trip");
    cmp_ok(impi_packet_decode(b, 99, &q), "==", IMPI_ERR_LENGTH, "pk_len above packet length");
    p.len = 2000;
    impi_packet_encode(b, &p);
    cmp_ok(impi_packet_decode(b, 4096, &q), "==", IMPI_ERR_LENGTH, "pk_len above msglen");
    p.type = IMPI_PK_SYNCACK;
    p.len = 128;
    p.msglen = 128;
    impi_packet_encode(b, &p);
    ok(impi_packet_decode(b, 16, &q) == IMPI_OK && impi_packet_data_len(&q) == 0,
       "SYNCACK with pk_len 128 carries no data");
    p.type = 8;
    impi_packet_encode(b, &p);
    cmp_ok(impi_packet_decode(b, 4096, &q), "==", IMPI_ERR_PACKET, "unknown type refused");
    char buf[512];
    p.type = IMPI_PK_DATA;
    ok(strstr(impi_packet_format(&p, buf, sizeof buf), "IMPI_PK_DATA") != NULL, "formats");
}

/*  Raw key bytes and the one-Int4 commands (AUTH mask, IMPI rank/size). */
static void test_int4_cmds(void)
{
    uint8_t k[8];
    impi_auth_key_encode(k, 0x0102030405060708ULL);
    static const uint8_t kw[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    ok(memcmp(k, kw, 8) == 0, "key is 8 raw big-endian bytes");
    ok(impi_auth_key_decode(k) == 0x0102030405060708ULL, "key round trip");
    uint8_t b[IMPI_CMD_INT4_SIZE];
    impi_cmd_int4_encode(b, IMPI_CMD_IMPI, 3);
    static const uint8_t iw[12] = { 0x49, 0x4D, 0x50, 0x49, 0, 0, 0, 4, 0, 0, 0, 3 };
    ok(memcmp(b, iw, 12) == 0, "IMPI {4, 3} bytes");
    impi_cmd_int4_encode(b, IMPI_CMD_IMPI, -1);
    impi_cmd_t c;
    ok(impi_cmd_decode(b, IMPI_MAX_PAYLOAD, &c) == IMPI_OK && impi_cmd_int4_decode(b + 8) == -1,
       "negative rank round trip");
}

int main(void)
{
    plan(NO_PLAN);
    test_tables();
    test_cmd();
    test_auth();
    test_proc();
    test_coll_seeds();
    test_coll_validate();
    test_packet();
    test_int4_cmds();
    done_testing();
}
