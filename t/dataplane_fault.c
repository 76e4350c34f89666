/*  t/dataplane_fault.c — faults on the data plane: a peer killed in the middle of a
 *  rendezvous, a peer that sends garbage on its host connection, a peer that hangs up after
 *  half a packet header, a peer that leaves without PK_FINI while a wildcard receive waits.
 *  The survivors must get an error (GIMPI_ESYSERR) promptly and keep working with the
 *  others; nothing hangs (every job is bounded by the harness).  Also hand-played
 *  LAM-like peers: control packets that say pk_len 128 and carry nothing, and a host that
 *  owns two procs multiplexed on one connection.
 */
#include "dp_harness.h"
#include "net/gimpi_host.h"
#include "gtap.h"
#include "testlib.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TMO 30000

#define CHECK(cond, ...) do { if (!(cond)) return dp_fail(rank, __VA_ARGS__); } while (0)
#define CALL(expr) do { int rc_ = (expr); \
        CHECK(rc_ == 0, "%s: %s", #expr, gimpi_strerror(rc_)); } while (0)

/*  Rank 1 starts a 64 MiB rendezvous to rank 0 and is killed once rank 0 matched it;
 *  rank 2 watches and then still talks to rank 0. */
static int s_killed_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int t0 = gimpi_msg_tid(ctx, 0), t1 = gimpi_msg_tid(ctx, 1), t2 = gimpi_msg_tid(ctx, 2);
    size_t big = 64u << 20;
    uint8_t *buf = malloc(big);
    CHECK(buf, "malloc");
    gimpi_status_t st;
    char b[8];
    if (rank == 1) {
        gimpi_msg_req_t *q;
        dp_fill(buf, big, 1);
        CALL(gimpi_msg_isend(ctx, t0, 1, buf, big, 0, &q));
        CALL(gimpi_msg_recv(ctx, t0, 2, b, sizeof b, &st));    /* "go": it is matched */
        raise(SIGKILL);
        return 1;
    }
    if (rank == 0) {
        gimpi_msg_req_t *q;
        CALL(gimpi_msg_probe(ctx, t1, 1, &st));
        CHECK(st.len == big, "probe length %zu", st.len);
        CALL(gimpi_msg_irecv(ctx, t1, 1, buf, big, &q));
        CALL(gimpi_msg_send(ctx, t1, 2, "go", 3));
        int rc = gimpi_msg_wait(ctx, &q, &st);
        CHECK(rc == GIMPI_ESYSERR, "receive from the killed peer: %d", rc);
        CHECK(strstr(gimpi_msg_errmsg(ctx), "host 1"), "error names host 1: %s",
              gimpi_msg_errmsg(ctx));
        rc = gimpi_msg_send(ctx, t1, 3, "x", 1);
        CHECK(rc == GIMPI_ESYSERR, "later send to it: %d", rc);
        rc = gimpi_msg_recv(ctx, t1, 3, b, sizeof b, &st);
        CHECK(rc == GIMPI_ESYSERR, "later receive from it: %d", rc);
        CALL(gimpi_msg_send(ctx, t2, 4, "alive", 6));
        CALL(gimpi_msg_recv(ctx, t2, 5, b, sizeof b, &st));
        CHECK(strcmp(b, "well") == 0, "the bystander answered");
    } else {
        CALL(gimpi_msg_recv(ctx, t0, 4, b, sizeof b, &st));
        CALL(gimpi_msg_send(ctx, t0, 5, "well", 5));
    }
    free(buf);
    return dp_close(&ctx) ? 1 : 0;
}

typedef struct {
    const uint8_t *bytes;
    size_t len;
    int hangup;                 /* close right after writing */
} fake_t;

/*  Rank 1 is a fake host: meets the others properly, then writes the given bytes on its
 *  connection to rank 0 and hangs up.  Rank 0 waits in a receive (from rank 1, then a
 *  wildcard); rank 2 (when there) must be unaffected. */
static int s_fake_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    fake_t *f = arg;
    if (rank == 1) {
        int fds[8];
        char err[200];
        if (gimpi_host_dance(t, 1, lfd, -1, fds, TMO, err, sizeof err) < 0)
            return dp_fail(rank, "dance: %s", err);
        CHECK(tl_send_all(fds[0], f->bytes, f->len) == 0, "write");
        if (f->hangup)
            shutdown(fds[0], SHUT_RDWR);
        /* stay until rank 0 has given up on us: its side closes the connection */
        CHECK(tl_wait_closed(fds[0], TMO) == 1, "rank 0 never closed the connection");
        for (int i = 0; i < t->nhosts; i++)
            if (i != 1)
                close(fds[i]);
        close(lfd);
        return 0;
    }
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    gimpi_status_t st;
    char b[16];
    int t0 = gimpi_msg_tid(ctx, 0);
    if (rank == 0) {
        int rc = gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, 1), 1, b, sizeof b, &st);
        CHECK(rc == GIMPI_ESYSERR, "receive from the bad peer: %d", rc);
        CHECK(gimpi_msg_send(ctx, gimpi_msg_tid(ctx, 1), 1, b, 1) == GIMPI_ESYSERR,
              "send to the bad peer");
        fprintf(stderr, "# rank 0 says: %s\n", gimpi_msg_errmsg(ctx));
        if (t->nprocs > 2) {
            CALL(gimpi_msg_send(ctx, gimpi_msg_tid(ctx, 2), 2, "hi", 3));
            CALL(gimpi_msg_recv(ctx, GIMPI_ANY, 3, b, sizeof b, &st));
            CHECK(st.source == gimpi_msg_tid(ctx, 2), "answer from rank 2");
        }
    } else {
        CALL(gimpi_msg_recv(ctx, t0, 2, b, sizeof b, &st));
        CALL(gimpi_msg_send(ctx, t0, 3, "ho", 3));
    }
    return dp_close(&ctx) ? 1 : 0;
}

/*  Rank 1 meets the others then exits without PK_FINI while rank 0 waits in a wildcard
 *  receive. */
static int s_vanish_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    gimpi_status_t st;
    char b[8];
    if (rank == 1) {
        CALL(gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, 0), 1, b, sizeof b, &st));
        _exit(0);               /* no finalize: the connection just closes */
    }
    gimpi_msg_req_t *q;
    CALL(gimpi_msg_irecv(ctx, GIMPI_ANY, 9, b, sizeof b, &q));
    CALL(gimpi_msg_send(ctx, gimpi_msg_tid(ctx, 1), 1, "bye", 4));
    int rc = gimpi_msg_wait(ctx, &q, &st);
    CHECK(rc == GIMPI_ESYSERR, "wildcard receive when a peer vanished: %d", rc);
    gimpi_msg_destroy(&ctx);
    return 0;
}

/*  Rank 1 plays a LAM-like host by hand: control packets with pk_len 128 and nothing after
 *  them (PROTOACK, then PK_FINI at the end), a short DATA message in between.  Rank 0 must
 *  receive the message, finish with PK_FINI both ways and close. */
static int s_lamlike_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    if (rank == 1) {
        int fds[8];
        char err[200];
        if (gimpi_host_dance(t, 1, lfd, -1, fds, TMO, err, sizeof err) < 0)
            return dp_fail(rank, "dance: %s", err);
        uint8_t out[3 * IMPI_PACKET_SIZE + 5];
        impi_packet_t pk;
        memset(&pk, 0, sizeof pk);
        pk.src = t->procs[1].id;
        pk.dest = t->procs[0].id;
        pk.type = IMPI_PK_PROTOACK;
        pk.len = pk.msglen = 128;
        impi_packet_encode(out, &pk);
        pk.type = IMPI_PK_DATA;
        pk.len = pk.msglen = 5;
        pk.tag = 4;
        pk.srqid = 0;                       /* LAM: 0 in plain short sends */
        impi_packet_encode(out + IMPI_PACKET_SIZE, &pk);
        memcpy(out + 2 * IMPI_PACKET_SIZE, "hello", 5);
        memset(&pk, 0, sizeof pk);
        pk.type = IMPI_PK_FINI;
        pk.len = pk.msglen = 128;
        pk.src.pid = pk.dest.pid = -1;
        impi_packet_encode(out + 2 * IMPI_PACKET_SIZE + 5, &pk);
        CHECK(tl_send_all(fds[0], out, sizeof out) == 0, "write");
        /* rank 0 answers with its own PK_FINI (128 bytes, type 7), then closes */
        uint8_t in[IMPI_PACKET_SIZE];
        CHECK(tl_recv_exact(fds[0], in, sizeof in, TMO) == IMPI_PACKET_SIZE, "no PK_FINI");
        CHECK(impi_packet_decode(in, 65536, &pk) == IMPI_OK && pk.type == IMPI_PK_FINI,
              "got %s instead of PK_FINI", impi_packet_name(pk.type));
        CHECK(tl_wait_closed(fds[0], TMO) == 1, "rank 0 did not close after PK_FINI");
        close(fds[0]);
        close(lfd);
        return 0;
    }
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    gimpi_status_t st;
    char b[16] = "";
    CALL(gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, 1), 4, b, sizeof b, &st));
    CHECK(st.len == 5 && memcmp(b, "hello", 5) == 0, "message between LAM-style packets");
    return dp_close(&ctx) ? 1 : 0;
}

/*  Reads one packet (header and, for data packets, payload into data[64]); 0 or -1. */
static int s_read_packet(int fd, impi_packet_t *pk, uint8_t *data)
{
    uint8_t h[IMPI_PACKET_SIZE];
    if (tl_recv_exact(fd, h, sizeof h, TMO) != IMPI_PACKET_SIZE
        || impi_packet_decode(h, 64, pk) != IMPI_OK)
        return -1;
    uint32_t n = impi_packet_data_len(pk);
    return n == 0 || tl_recv_exact(fd, data, n, TMO) == (long)n ? 0 : -1;
}

/*  Host 1 owns two procs (world ranks 1 and 2), as a LAM host does, and is played by hand;
 *  ackmark 1 / hiwater 1.  Both of its procs send rank 0 a message; rank 0 must credit each
 *  pair separately (one PROTOACK per packet, addressed to the right proc), deliver each
 *  message with the right source, and answer each proc on the one shared connection. */
static int s_multiproc_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    if (rank == 1) {
        int fds[8];
        char err[200];
        if (gimpi_host_dance(t, 1, lfd, -1, fds, TMO, err, sizeof err) < 0)
            return dp_fail(rank, "dance: %s", err);
        int fd = fds[0];
        uint8_t out[2 * (IMPI_PACKET_SIZE + 3)];
        impi_packet_t pk;
        for (int k = 0; k < 2; k++) {
            memset(&pk, 0, sizeof pk);
            pk.type = IMPI_PK_DATA;
            pk.src = t->procs[1 + k].id;
            pk.dest = t->procs[0].id;
            pk.len = pk.msglen = 3;
            pk.srqid = 1;                   /* the same id from both procs: per-proc space */
            pk.lsrank = 1 + k;
            pk.tag = 7;
            impi_packet_encode(out + k * (IMPI_PACKET_SIZE + 3), &pk);
            memcpy(out + k * (IMPI_PACKET_SIZE + 3) + IMPI_PACKET_SIZE, k ? "p2" : "p1", 3);
        }
        CHECK(tl_send_all(fd, out, sizeof out) == 0, "write");
        int acks[2] = { 0, 0 }, got[2] = { 0, 0 };
        while (acks[0] + acks[1] + got[0] + got[1] < 4) {
            uint8_t data[64];
            CHECK(s_read_packet(fd, &pk, data) == 0, "bad or missing packet from rank 0");
            int k = impi_proc_equal(&pk.dest, &t->procs[1].id) ? 0
                  : impi_proc_equal(&pk.dest, &t->procs[2].id) ? 1 : -1;
            CHECK(k >= 0 && impi_proc_equal(&pk.src, &t->procs[0].id), "wrong procs");
            if (pk.type == IMPI_PK_PROTOACK) {
                acks[k]++;
            } else {
                CHECK(pk.type == IMPI_PK_DATA && pk.len == 3,
                      "unexpected %s", impi_packet_name(pk.type));
                CHECK(data[0] == 'r' && data[1] == '1' + k, "proc %d got '%.2s'", k + 1,
                      (char *)data);
                got[k]++;
                /* credit it back, or rank 0 could send nothing more to this proc */
                impi_packet_t a;
                memset(&a, 0, sizeof a);
                a.type = IMPI_PK_PROTOACK;
                a.src = t->procs[1 + k].id;
                a.dest = t->procs[0].id;
                uint8_t ab[IMPI_PACKET_SIZE];
                impi_packet_encode(ab, &a);
                CHECK(tl_send_all(fd, ab, sizeof ab) == 0, "write");
            }
        }
        CHECK(acks[0] == 1 && acks[1] == 1, "one PROTOACK per pair (%d, %d)", acks[0], acks[1]);
        memset(&pk, 0, sizeof pk);
        pk.type = IMPI_PK_FINI;
        pk.src.pid = pk.dest.pid = -1;
        impi_packet_encode(out, &pk);
        CHECK(tl_send_all(fd, out, IMPI_PACKET_SIZE) == 0, "write");
        uint8_t data[64];
        CHECK(s_read_packet(fd, &pk, data) == 0 && pk.type == IMPI_PK_FINI, "no PK_FINI");
        CHECK(tl_wait_closed(fd, TMO) == 1, "rank 0 did not close");
        close(fd);
        close(lfd);
        return 0;
    }
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    gimpi_status_t st;
    char b[8];
    CALL(gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, 2), 7, b, sizeof b, &st));
    CHECK(strcmp(b, "p2") == 0 && st.source == gimpi_msg_tid(ctx, 2), "from world rank 2");
    CALL(gimpi_msg_recv(ctx, GIMPI_ANY, 7, b, sizeof b, &st));
    CHECK(strcmp(b, "p1") == 0 && st.source == gimpi_msg_tid(ctx, 1), "from world rank 1");
    CALL(gimpi_msg_send(ctx, gimpi_msg_tid(ctx, 1), 8, "r1", 3));
    CALL(gimpi_msg_send(ctx, gimpi_msg_tid(ctx, 2), 8, "r2", 3));
    return dp_close(&ctx) ? 1 : 0;
}

/*  Runs one job; want[] are the expected exit codes. */
static void s_job(const char *name, int n, dp_body_t body, void *arg, const int *want)
{
    dp_opts_t o = { n, 65536, 10, 20, 60000, 0, 0, 1 };
    int codes[8];
    int64_t t0 = tl_now_ms();
    dp_run(&o, body, arg, codes);
    int good = 1;
    for (int i = 0; i < n; i++)
        good &= codes[i] == want[i];
    ok(good, "%s", name);
    if (!good)
        for (int i = 0; i < n; i++)
            diag("  task %d exit code %d, want %d", i, codes[i], want[i]);
    note("  %s took %lld ms", name, (long long)(tl_now_ms() - t0));
}

int main(void)
{
    plan(NO_PLAN);
    int killed[] = { 0, 128 + SIGKILL, 0 };
    s_job("peer killed mid-rendezvous: error for it, others go on", 3, s_killed_body, NULL,
          killed);
    uint8_t garbage[IMPI_PACKET_SIZE];
    memset(garbage, 0xff, sizeof garbage);
    fake_t g = { garbage, sizeof garbage, 0 };
    int fine[] = { 0, 0, 0 };
    s_job("peer sends garbage on the host connection", 3, s_fake_body, &g, fine);
    impi_packet_t pk;
    memset(&pk, 0, sizeof pk);
    pk.type = IMPI_PK_DATA;
    pk.len = pk.msglen = 4;
    uint8_t half[IMPI_PACKET_SIZE];
    impi_packet_encode(half, &pk);
    fake_t h = { half, 60, 1 };
    s_job("peer closes after half a header", 2, s_fake_body, &h, fine);
    uint8_t lying[IMPI_PACKET_SIZE];
    pk.len = 1u << 30;              /* more data than the packet length allows */
    pk.msglen = 1u << 30;
    impi_packet_encode(lying, &pk);
    fake_t l = { lying, sizeof lying, 0 };
    s_job("peer announces a payload larger than the packet length", 2, s_fake_body, &l, fine);
    s_job("peer vanishes without PK_FINI during a wildcard receive", 2, s_vanish_body, NULL,
          fine);
    s_job("LAM-style peer: control packets with pk_len 128, PK_FINI both ways", 2,
          s_lamlike_body, NULL, fine);
    dp_opts_t mo = { 2, 64, 1, 1, 60000, 0, 2, 1 };
    int codes[2];
    int rc = dp_run(&mo, s_multiproc_body, NULL, codes);
    ok(rc == 0, "a host with two procs: per-pair credit and sources on one connection");
    if (rc)
        diag("  exit codes %d %d", codes[0], codes[1]);
    done_testing();
}
