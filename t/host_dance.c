/*  t/host_dance.c — the host connections of an IMPI job (libgimpi/net/gimpi_host.c, protocol
 *  §3.9): every pair meets exactly once, the caller comes from its announced address, and
 *  absent hosts are named at the deadline.  Strangers among the callers (bad, duplicate or
 *  missing ranks, hang-ups, other users) are t/dance_strangers.c's.
 */
#include "dp_harness.h"
#include "net/gimpi_host.h"
#include "gtap.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHECK(cond, ...) do { if (!(cond)) return dp_fail(rank, __VA_ARGS__); } while (0)

/*  Real dance: one connection per pair, right peer at each end, right source address. */
static int s_good_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    int fds[16];
    char err[200];
    CHECK(gimpi_host_dance(t, rank, lfd, -1, fds, 20000, err, sizeof err) == 0, "dance: %s", err);
    CHECK(fds[rank] == -1, "no connection to ourselves");
    for (int i = 0; i < t->nhosts; i++) {
        if (i == rank)
            continue;
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        CHECK(getpeername(fds[i], (struct sockaddr *)&sa, &sl) == 0, "getpeername");
        CHECK(ntohl(sa.sin_addr.s_addr) == impi_addr16_ipv4(t->hosts[i].addr),
              "host %d's connection comes from its announced address", i);
        uint8_t me = (uint8_t)rank;
        CHECK(tl_send_all(fds[i], &me, 1) == 0, "send");
    }
    for (int i = 0; i < t->nhosts; i++) {
        if (i == rank)
            continue;
        uint8_t who = 0xff;
        CHECK(tl_recv_exact(fds[i], &who, 1, 20000) == 1 && who == i,
              "connection %d leads to host %d", i, who);
        close(fds[i]);
    }
    close(lfd);
    return 0;
}

/*  Rank 0 dances alone: the other hosts never come; it must fail at the deadline naming
 *  them, with every socket closed. */
static int s_absent_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    int timeout_ms = *(const int *)arg;
    if (rank == 0) {
        int fds[16];
        char err[200] = "";
        int64_t t0 = tl_now_ms();
        int rc = gimpi_host_dance(t, 0, lfd, -1, fds, timeout_ms, err, sizeof err);
        CHECK(rc == -1, "dance succeeded");
        CHECK(strstr(err, "missing hosts: 1 2"), "error '%s' does not name hosts 1 and 2", err);
        CHECK(tl_now_ms() - t0 < timeout_ms + 5000, "took too long");
        for (int i = 0; i < t->nhosts; i++)
            CHECK(fds[i] == -1, "sockets left open on failure");
    }
    close(lfd);
    return 0;
}

/*  Runs one job; every task must exit 0. */
static void s_job(const char *name, int n, dp_body_t body, void *arg)
{
    dp_opts_t o = { n, 1024, 10, 20, 30000, 0, 0, 1 };
    int codes[16];
    int rc = dp_run(&o, body, arg, codes);
    ok(rc == 0, "%s", name);
    if (rc)
        for (int i = 0; i < n; i++)
            diag("  task %d exit code %d", i, codes[i]);
}

int main(void)
{
    plan(NO_PLAN);
    s_job("2 hosts meet", 2, s_good_body, NULL);
    s_job("5 hosts meet, one connection per pair, from announced addresses", 5, s_good_body,
          NULL);
    int absent_ms = 1000;
    s_job("absent hosts: error naming them at the deadline", 3, s_absent_body, &absent_ms);
    uint8_t a[16];
    char err[200];
    impi_addr16_from_ipv4(a, 0xC0000201);      /* 192.0.2.1: not ours */
    int port;
    ok(gimpi_host_listen(a, &port, err, sizeof err) == -1 && strstr(err, "192.0.2.1"),
       "listening on an address we do not have fails clearly (%s)", err);
    done_testing();
}
