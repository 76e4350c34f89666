/*  t/impi_server_seeds.c — the worked examples of the IMPI draft ("seeds" 000 and 003,
 *  doc/impi-protocol.md §3.12), byte for byte, through the real impi-server with three
 *  real client connections: the raw AUTH reply, the IMPI reply, the C_VERSION reply (len
 *  48), NHOSTS 3,2,2 (len 20, mask 0x7), PKTLEN 8000/4000/4000 (len 20), H_PORT
 *  5001..7002 (len 36), then in a second job PKTLEN without client 1 (len 16, mask 0x5,
 *  sent to all three), and the full AUTH, IMPI, COLL..., DONE, FINI sequence ending with
 *  exit status 0.
 */
#include "gtap.h"
#include "srvtest.h"

#include <string.h>
#include <unistd.h>

#define N 3

/*  Big-endian Int4 as four byte literals. */
#define B4(v) (uint8_t)((uint32_t)(v) >> 24), (uint8_t)((uint32_t)(v) >> 16), \
              (uint8_t)((uint32_t)(v) >> 8), (uint8_t)(v)

/*  Each client sends one Int4 for `label`. */
static int send_int4s(int fd[N], int32_t label, const int32_t v[N])
{
    int rc = 0;
    for (int c = 0; c < N; c++) {
        uint8_t b[4];
        gimpi_be_put32(b, (uint32_t)v[c]);
        rc |= st_coll(fd[c], label, b, 4);
    }
    return rc;
}

/*  Every client receives exactly `want`. */
static int all_receive(int fd[N], const uint8_t *want, size_t len)
{
    int good = 0;
    for (int c = 0; c < N; c++)
        good += st_recv_bytes(fd[c], want, len);
    return good;
}

/*  Three clients: AUTH, IMPI, then joins in the order 2, 0, 1. */
static int start_three(st_server_t *srv, int fd[N])
{
    static const int order[N] = { 2, 0, 1 };
    static const uint8_t auth_reply[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t impi_reply[12] = { 0x49, 0x4D, 0x50, 0x49, B4(4), B4(3) };
    static const uint8_t auth_cmd[12] = { 0x41, 0x55, 0x54, 0x48, B4(4), B4(1) };
    int good = 0;
    for (int k = 0; k < N; k++) {
        int c = order[k];
        fd[c] = st_connect(srv);
        if (fd[c] < 0 || tl_send_all(fd[c], auth_cmd, sizeof auth_cmd) < 0)
            return -1;
        good += st_recv_bytes(fd[c], auth_reply, sizeof auth_reply);
        if (st_join(fd[c], c) < 0)
            return -1;
    }
    ok(good == N, "AUTH NONE answered with 8 raw zero bytes, no header");
    ok(all_receive(fd, impi_reply, sizeof impi_reply) == N,
       "IMPI reply {IMPI, 4, 3} to all three once the last joined");
    return 0;
}

/*  DONE from all, DONE to all, FINI from all, exit 0. */
static void finish_three(st_server_t *srv, int fd[N], const char *trace)
{
    static const uint8_t done[8] = { 0x44, 0x4F, 0x4E, 0x45, B4(0) };
    for (int c = 0; c < N; c++)
        st_send_cmd(fd[c], IMPI_CMD_DONE, NULL, 0);
    ok(all_receive(fd, done, sizeof done) == N, "DONE len 0 to all after all sent DONE");
    for (int c = 0; c < N; c++) {
        st_send_cmd(fd[c], IMPI_CMD_FINI, NULL, 0);
        ok(tl_wait_closed(fd[c], ST_TIMEOUT_MS), "server closes client %d after FINI", c);
        close(fd[c]);
    }
    if (trace) {
        static char err[65536];
        tl_read_all(srv->child.err, err, sizeof err, ST_TIMEOUT_MS);
        ok(strstr(err, trace) != NULL, "-v traces '%s'", trace);
    }
    cmp_ok(st_finish(srv), "==", 0, "server exits 0 after FINI from all three");
}

/*  Seed 003 (VERSION), seed 000 (NHOSTS, PKTLEN, H_PORT). */
static void test_examples(void)
{
    st_server_t srv;
    int fd[N];
    if (st_start(&srv, "-server", "3", "-auth", "none", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    ok(strncmp(srv.endpoint, "127.0.0.1:", 10) == 0, "endpoint line %s", srv.endpoint);
    if (start_three(&srv, fd) < 0)
        BAIL_OUT("clients could not join");

    /* seed 003: client 0 offers {0.0}, clients 1 and 2 offer {0.0, 0.1} */
    static const uint8_t v00[8] = { B4(0), B4(0) };
    static const uint8_t v0001[16] = { B4(0), B4(0), B4(0), B4(1) };
    st_coll(fd[0], IMPI_C_VERSION, v00, 8);
    st_coll(fd[1], IMPI_C_VERSION, v0001, 16);
    st_coll(fd[2], IMPI_C_VERSION, v0001, 16);
    static const uint8_t version_reply[] = {
        0x43, 0x4F, 0x4C, 0x4C, B4(48), B4(0x1000), B4(0x7),
        B4(0), B4(0),                   /* client 0 */
        B4(0), B4(0), B4(0), B4(1),     /* client 1 */
        B4(0), B4(0), B4(0), B4(1),     /* client 2 */
    };
    ok(all_receive(fd, version_reply, sizeof version_reply) == N,
       "C_VERSION reply len 48: {0.0} {0.0,0.1} {0.0,0.1} to all three");

    static const int32_t nhosts[N] = { 3, 2, 2 };
    send_int4s(fd, IMPI_C_NHOSTS, nhosts);
    static const uint8_t nhosts_reply[] = {
        0x43, 0x4F, 0x4C, 0x4C, B4(20), B4(0x1100), B4(0x7), B4(3), B4(2), B4(2),
    };
    ok(all_receive(fd, nhosts_reply, sizeof nhosts_reply) == N,
       "NHOSTS 3,2,2: reply len 20, mask 0x7, values 3,2,2");

    static const int32_t pktlen[N] = { 8000, 4000, 4000 };
    send_int4s(fd, IMPI_C_PKTLEN, pktlen);
    static const uint8_t pktlen_reply[] = {
        0x43, 0x4F, 0x4C, 0x4C, B4(20), B4(0x1300), B4(0x7), B4(8000), B4(4000), B4(4000),
    };
    ok(all_receive(fd, pktlen_reply, sizeof pktlen_reply) == N,
       "PKTLEN 8000/4000/4000: reply len 20");

    static const uint8_t p1[] = { B4(6001), B4(6002) };
    static const uint8_t p2[] = { B4(7001), B4(7002) };
    static const uint8_t client0_cmd[] = { 0x43, 0x4F, 0x4C, 0x4C, B4(16), B4(0x2100),
                                           B4(5001), B4(5002), B4(5003) };
    tl_send_all(fd[0], client0_cmd, sizeof client0_cmd);  /* the seed's client-side bytes */
    st_coll(fd[1], IMPI_H_PORT, p1, sizeof p1);
    st_coll(fd[2], IMPI_H_PORT, p2, sizeof p2);
    static const uint8_t port_reply[] = {
        0x43, 0x4F, 0x4C, 0x4C, B4(36), B4(0x2100), B4(0x7),
        B4(5001), B4(5002), B4(5003), B4(6001), B4(6002), B4(7001), B4(7002),
    };
    ok(all_receive(fd, port_reply, sizeof port_reply) == N,
       "H_PORT: reply len 36, 5001..5003 6001 6002 7001 7002 in client order");
    finish_three(&srv, fd, NULL);
}

/*  Seed 000's note: client 1 sends no PKTLEN (it sends its next label instead). */
static void test_missing_label(void)
{
    st_server_t srv;
    int fd[N];
    if (st_start(&srv, "-server", "3", "-auth", "none", "-v", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    if (start_three(&srv, fd) < 0)
        BAIL_OUT("clients could not join");
    uint8_t b[4];
    gimpi_be_put32(b, 8000);
    st_coll(fd[0], IMPI_C_PKTLEN, b, 4);
    gimpi_be_put32(b, 4000);
    st_coll(fd[2], IMPI_C_PKTLEN, b, 4);
    gimpi_be_put32(b, 32767);
    st_coll(fd[1], IMPI_C_TAGUB, b, 4);     /* skips PKTLEN */
    static const uint8_t reply[] = {
        0x43, 0x4F, 0x4C, 0x4C, B4(16), B4(0x1300), B4(0x5), B4(8000), B4(4000),
    };
    ok(all_receive(fd, reply, sizeof reply) == N,
       "PKTLEN without client 1: len 16, mask 0x5, 8000,4000 sent to ALL three");
    gimpi_be_put32(b, 65535);
    st_coll(fd[0], IMPI_C_TAGUB, b, 4);
    st_coll(fd[2], IMPI_C_TAGUB, b, 4);
    static const uint8_t tagub[] = {
        0x43, 0x4F, 0x4C, 0x4C, B4(20), B4(0x1400), B4(0x7), B4(65535), B4(32767), B4(65535),
    };
    ok(all_receive(fd, tagub, sizeof tagub) == N, "next label TAGUB complete with mask 0x7");
    finish_three(&srv, fd, "COLL reply IMPI_C_DATALEN (0x1300) mask 0x5 len 16");
}

int main(void)
{
    plan(NO_PLAN);
    test_examples();
    test_missing_label();
    done_testing();
}
