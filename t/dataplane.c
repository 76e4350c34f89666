/*  t/dataplane.c — the IMPI data plane end to end (libgimpi/net/): real tasks
 *  (forked processes) over real loopback TCP, tables filled by hand (t/dp_harness.c).
 *  Message sizes around the packet length up to 64 MiB, all-to-all with every task
 *  sending before it receives, matching order with wildcards, synchronous sends, cancel
 *  (accepted and too late), flow control with tiny marks and a 16-byte packet length,
 *  messages to oneself, receives with allocation (gimpi_msg_take_cid), and bad arguments.  Faults have their own file (t/dataplane_fault.c).
 */
#include "dp_harness.h"
#include "gimpi_coll.h"
#include "net/gimpi_msg_fwd.h"
#include "gtap.h"
#include "testlib.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TMO 60000

#define CHECK(cond, ...) do { if (!(cond)) return dp_fail(rank, __VA_ARGS__); } while (0)
#define CALL(expr) do { int rc_ = (expr); \
        CHECK(rc_ == 0, "%s: %s", #expr, gimpi_strerror(rc_)); } while (0)

/*  Sends buf to tid and receives it back into a fresh buffer, checking contents. */
static int s_sizes_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    size_t pk = t->pktlen;
    size_t sizes[] = { 0, 1, pk - 1, pk, pk + 1, 3 * pk + 7, 1u << 20, 64u << 20 };
    int nsizes = sizeof sizes / sizeof *sizes;
    uint8_t *buf = malloc(64u << 20), *got = malloc((64u << 20) + 16);
    CHECK(buf && got, "malloc");
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    for (int i = 0; i < nsizes; i++) {
        for (int dir = 0; dir < 2; dir++) {
            int sender = dir == 0 ? 0 : 1;
            int sync = i % 2;
            if (rank == sender) {
                dp_fill(buf, sizes[i], (uint32_t)(i * 2 + dir));
                if (sync)
                    CALL(gimpi_msg_ssend(ctx, peer, 100 + i, buf, sizes[i]));
                else
                    CALL(gimpi_msg_send(ctx, peer, 100 + i, buf, sizes[i]));
            } else {
                gimpi_status_t st;
                memset(got, 0xee, sizes[i] + 16);
                CALL(gimpi_msg_recv(ctx, peer, 100 + i, got, sizes[i] + 16, &st));
                CHECK(st.len == sizes[i] && st.source == peer && st.tag == 100 + i,
                      "size %zu: status len %zu source %d tag %d", sizes[i], st.len,
                      st.source, st.tag);
                long bad = dp_check(got, sizes[i], (uint32_t)(i * 2 + dir));
                CHECK(bad < 0, "size %zu: byte %ld differs", sizes[i], bad);
                CHECK(got[sizes[i]] == 0xee, "size %zu: wrote past the message", sizes[i]);
            }
        }
    }
    /* truncation: a 100-byte message into a 10-byte buffer */
    if (rank == 0) {
        dp_fill(buf, 100, 7);
        CALL(gimpi_msg_send(ctx, peer, 5, buf, 100));
    } else {
        gimpi_status_t st;
        memset(got, 0xee, 16);
        int rc = gimpi_msg_recv(ctx, peer, 5, got, 10, &st);
        CHECK(rc == GIMPI_EOVERFLOW && st.len == 100, "truncation: rc %d len %zu", rc, st.len);
        CHECK(dp_check(got, 10, 7) < 0 && got[10] == 0xee, "truncated contents");
    }
    free(buf);
    free(got);
    return dp_close(&ctx) ? 1 : 0;
}

typedef struct {
    size_t len;
    int rounds;
} a2a_t;

/*  Every task sends to every other (standard blocking sends) before receiving anything. */
static int s_a2a_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    a2a_t *a = arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int n = t->nprocs;
    uint8_t *buf = malloc(a->len + 1), *got = malloc(a->len + 1);
    CHECK(buf && got, "malloc");
    for (int r = 0; r < a->rounds; r++) {
        for (int k = 1; k < n; k++) {
            int to = (rank + k) % n;
            dp_fill(buf, a->len, (uint32_t)(rank * 1000 + to * 10 + r));
            CALL(gimpi_msg_send(ctx, gimpi_msg_tid(ctx, to), r, buf, a->len));
        }
        memset(buf, 0, a->len);     /* the library must have its own copy by now */
    }
    for (int r = 0; r < a->rounds; r++)
        for (int k = 1; k < n; k++) {
            int from = (rank + n - k) % n;
            gimpi_status_t st;
            CALL(gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, from), r, got, a->len, &st));
            CHECK(st.len == a->len, "len %zu", st.len);
            long bad = dp_check(got, a->len, (uint32_t)(from * 1000 + rank * 10 + r));
            CHECK(bad < 0, "from %d round %d: byte %ld differs", from, r, bad);
        }
    free(buf);
    free(got);
    return dp_close(&ctx) ? 1 : 0;
}

/*  Matching order: unexpected messages and posted receives, wildcards, a long message
 *  followed by a short one with the same envelope. */
static int s_order_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    size_t big = 5 * t->pktlen + 3;
    uint8_t *buf = calloc(1, big), *got = calloc(1, big);
    CHECK(buf && got, "malloc");
    int t0 = gimpi_msg_tid(ctx, 0), t1 = gimpi_msg_tid(ctx, 1), t2 = gimpi_msg_tid(ctx, 2);
    gimpi_status_t st;
    if (rank == 1) {
        /* A(5) B(7) C(5) D(5, long) E(5) then the end marker */
        int tags[] = { 5, 7, 5, 5, 5 };
        for (int i = 0; i < 5; i++) {
            size_t len = i == 3 ? big : 4;
            dp_fill(buf, len, (uint32_t)i);
            buf[0] = (uint8_t)('A' + i);
            CALL(gimpi_msg_send(ctx, t0, tags[i], buf, len));
        }
        CALL(gimpi_msg_send(ctx, t0, 99, "end", 4));
    } else if (rank == 0) {
        CALL(gimpi_msg_recv(ctx, t1, 99, got, 4, &st));   /* everything else is buffered */
        int flag = 0;
        CALL(gimpi_msg_iprobe(ctx, GIMPI_ANY, 7, &flag, &st));
        CHECK(flag && st.source == t1 && st.len == 4, "iprobe of B");
        const char *want = "ABCDE";
        int srcs[] = { GIMPI_ANY, t1, GIMPI_ANY, t1, GIMPI_ANY };
        int tags[] = { 5, GIMPI_ANY, GIMPI_ANY, 5, 5 };
        for (int i = 0; i < 5; i++) {
            CALL(gimpi_msg_recv(ctx, srcs[i], tags[i], got, big, &st));
            CHECK(got[0] == want[i], "receive %d got '%c', want '%c'", i, got[0], want[i]);
        }
        CHECK(st.len == 4, "E last");
        /* posted receives: three wildcards posted before rank 2 sends anything */
        gimpi_msg_req_t *rq[3];
        char rb[3][8];
        for (int i = 0; i < 3; i++)
            CALL(gimpi_msg_irecv(ctx, GIMPI_ANY, GIMPI_ANY, rb[i], sizeof rb[i], &rq[i]));
        CALL(gimpi_msg_send(ctx, t2, 1, "go", 3));
        for (int i = 0; i < 3; i++) {
            CALL(gimpi_msg_wait(ctx, &rq[i], &st));
            CHECK(rb[i][0] == '0' + i && st.source == t2 && st.tag == 10 + i,
                  "posted receive %d got %c tag %d", i, rb[i][0], st.tag);
            CHECK(rq[i] == NULL, "wait nulls the request");
        }
        /* a long and a short message with the same envelope into posted receives */
        gimpi_msg_req_t *ql, *qs;
        CALL(gimpi_msg_irecv(ctx, t2, 8, got, big, &ql));
        CALL(gimpi_msg_irecv(ctx, t2, 8, rb[0], 8, &qs));
        CALL(gimpi_msg_send(ctx, t2, 2, "go", 3));
        CALL(gimpi_msg_wait(ctx, &qs, &st));
        CHECK(st.len == 4 && rb[0][0] == 's', "short one second");
        CALL(gimpi_msg_wait(ctx, &ql, &st));
        CHECK(st.len == big && dp_check(got, big, 77) < 0, "long one first, intact");
        /* other context ids never match */
        int f = 1;
        CALL(gimpi_msg_recv(ctx, t2, 3, got, 8, &st));
        CALL(gimpi_msg_iprobe(ctx, GIMPI_ANY, 3, &f, &st));
        CHECK(f == 0, "cid 1 message invisible to a cid 0 probe");
        CALL(gimpi_msg_iprobe_cid(ctx, GIMPI_CID_COLL, GIMPI_ANY, 3, &f, &st));
        CHECK(f == 1, "visible on cid 1");
        CALL(gimpi_msg_probe_cid(ctx, GIMPI_CID_COLL, t2, 3, &st));
        CHECK(st.len == 5 && st.source == t2, "blocking probe on cid 1");
        gimpi_msg_req_t *qc;
        CALL(gimpi_msg_irecv_cid(ctx, GIMPI_CID_COLL, t2, 3, got, 8, &qc));
        CALL(gimpi_msg_wait(ctx, &qc, &st));
        CHECK(memcmp(got, "coll", 5) == 0, "cid 1 contents");
    } else {
        CALL(gimpi_msg_recv(ctx, t0, 1, got, 8, &st));
        for (int i = 0; i < 3; i++) {
            char m[2] = { (char)('0' + i), 0 };
            CALL(gimpi_msg_send(ctx, t0, 10 + i, m, 2));
        }
        CALL(gimpi_msg_recv(ctx, t0, 2, got, 8, &st));
        gimpi_msg_req_t *q;
        dp_fill(buf, big, 77);
        CALL(gimpi_msg_isend(ctx, t0, 8, buf, big, 0, &q));
        CALL(gimpi_msg_send(ctx, t0, 8, "shrt", 4));
        CALL(gimpi_msg_wait(ctx, &q, NULL));
        /* cid 1 first, then a cid 0 marker: the marker must be what a cid 0 receive gets */
        CALL(gimpi_msg_isend_cid(ctx, GIMPI_CID_COLL, t0, 3, "coll", 5, 0, &q));
        CALL(gimpi_msg_wait(ctx, &q, NULL));
        CALL(gimpi_msg_send(ctx, t0, 3, "p2p", 4));
    }
    free(buf);
    free(got);
    return dp_close(&ctx) ? 1 : 0;
}

/*  Receive with allocation (gimpi_msg_take_cid): short, long and empty messages taken in
 *  arrival order from the queue, one posted before its message comes, one to oneself
 *  (synchronous), the time bounds, a watched task that leaves, and bad arguments. */
static int s_take_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    size_t big = 5 * t->pktlen + 3;
    uint8_t *buf = calloc(1, big);
    CHECK(buf, "malloc");
    int t0 = gimpi_msg_tid(ctx, 0), t1 = gimpi_msg_tid(ctx, 1), t2 = gimpi_msg_tid(ctx, 2);
    gimpi_status_t st;
    int flag = -1;
    void *d = NULL;
    if (rank == 1) {
        CALL(gimpi_msg_send(ctx, t0, 5, "Ashr", 4));
        dp_fill(buf, big, 21);
        CALL(gimpi_msg_send(ctx, t0, 5, buf, big));
        CALL(gimpi_msg_send(ctx, t0, 6, NULL, 0));
        CALL(gimpi_msg_send(ctx, t0, 99, "end", 4));
    } else if (rank == 0) {
        char e[4];
        CALL(gimpi_msg_recv(ctx, t1, 99, e, 4, &st));      /* the rest is queued by now */
        size_t lens[] = { 4, big, 0 };
        int tags[] = { 5, 5, 6 };
        for (int i = 0; i < 3; i++) {
            CALL(gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, GIMPI_ANY, GIMPI_ANY, -1, GIMPI_ANY,
                                    &flag, &st, &d));
            CHECK(flag == 1 && d && st.source == t1 && st.tag == tags[i] && st.len == lens[i],
                  "take %d: flag %d tag %d len %zu", i, flag, st.tag, st.len);
            CHECK(i != 0 || memcmp(d, "Ashr", 4) == 0, "short message intact");
            CHECK(i != 1 || dp_check(d, big, 21) < 0, "long message intact");
            free(d);
        }
        CALL(gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, GIMPI_ANY, GIMPI_ANY, 0, GIMPI_ANY, &flag,
                                &st, &d));
        CHECK(flag == 0 && d == NULL, "nothing there, no wait: flag 0");
        int64_t w0 = tl_now_ms();
        CALL(gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, GIMPI_ANY, GIMPI_ANY, 50, GIMPI_ANY, &flag,
                                &st, &d));
        CHECK(flag == 0 && d == NULL && tl_now_ms() - w0 >= 40, "50 ms bound: flag 0");
        /* posted before its message: rank 2 sends a long one once told to */
        CALL(gimpi_msg_send(ctx, t2, 1, "go", 3));
        CALL(gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, t2, 7, -1, GIMPI_ANY, &flag, &st, &d));
        CHECK(flag == 1 && st.len == big && dp_check(d, big, 22) < 0, "posted take, long");
        free(d);
        /* to oneself, synchronous: the send completes when taken */
        gimpi_msg_req_t *q;
        int me = gimpi_msg_mytid(ctx);
        CALL(gimpi_msg_isend(ctx, me, 4, "self", 5, GIMPI_MSG_SYNC, &q));
        CALL(gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, me, 4, -1, GIMPI_ANY, &flag, &st, &d));
        CHECK(flag == 1 && st.len == 5 && memcmp(d, "self", 5) == 0, "take from oneself");
        free(d);
        CALL(gimpi_msg_wait(ctx, &q, NULL));
        /* rank 2 leaves: an unbounded take watching it fails instead of waiting */
        CALL(gimpi_msg_send(ctx, t2, 2, "bye", 4));
        int rc = gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, GIMPI_ANY, 8, -1, t2, &flag, &st, &d);
        CHECK(rc < 0 && flag == 0 && d == NULL, "watched task left: rc %d flag %d", rc, flag);
        CHECK(gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, GIMPI_ANY, 5, 0, GIMPI_ANY, NULL, &st, &d)
                  == GIMPI_EBADPARAM, "NULL flag refused");
        CHECK(gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, GIMPI_ANY, 5, 0, GIMPI_ANY, &flag, &st,
                                 NULL) == GIMPI_EBADPARAM, "NULL data refused");
        CHECK(gimpi_msg_take_cid(ctx, GIMPI_CID_P2P, GIMPI_ANY, -7, 0, GIMPI_ANY, &flag, &st,
                                 &d) == GIMPI_EBADPARAM, "bad tag refused");
        CALL(gimpi_msg_send(ctx, t1, 3, "ok", 3));          /* rank 1 may leave now */
    } else {
        char g[4];
        CALL(gimpi_msg_recv(ctx, t0, 1, g, sizeof g, &st));
        dp_fill(buf, big, 22);
        CALL(gimpi_msg_send(ctx, t0, 7, buf, big));
        CALL(gimpi_msg_recv(ctx, t0, 2, g, sizeof g, &st));
    }
    if (rank == 1) {
        char g[4];
        CALL(gimpi_msg_recv(ctx, t0, 3, g, sizeof g, &st));
    }
    free(buf);
    return dp_close(&ctx) ? 1 : 0;
}

/*  Synchronous sends complete only once matched (short and long). */
static int s_sync_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    size_t lens[] = { 8, 4 * t->pktlen };
    uint8_t *buf = malloc(lens[1]), *got = malloc(lens[1]);
    CHECK(buf && got, "malloc");
    gimpi_status_t st;
    for (int i = 0; i < 2; i++) {
        if (rank == 0) {
            gimpi_msg_req_t *q;
            int flag = 1;
            dp_fill(buf, lens[i], (uint32_t)i);
            CALL(gimpi_msg_isend(ctx, peer, 1, buf, lens[i], GIMPI_MSG_SYNC, &q));
            CALL(gimpi_msg_send(ctx, peer, 2, "ping", 5));
            CALL(gimpi_msg_recv(ctx, peer, 3, got, 8, &st));  /* pong: it saw ping */
            CALL(gimpi_msg_test(ctx, &q, &flag, NULL));
            CHECK(flag == 0 && q, "len %zu: sync send complete before any receive", lens[i]);
            CALL(gimpi_msg_send(ctx, peer, 4, "now", 4));
            CALL(gimpi_msg_wait(ctx, &q, &st));
            CHECK(!st.cancelled, "not cancelled");
        } else {
            CALL(gimpi_msg_recv(ctx, peer, 2, got, 8, &st));
            CALL(gimpi_msg_send(ctx, peer, 3, "pong", 5));
            CALL(gimpi_msg_recv(ctx, peer, 4, got, 8, &st));
            CALL(gimpi_msg_recv(ctx, peer, 1, got, lens[i], &st));
            CHECK(dp_check(got, lens[i], (uint32_t)i) < 0, "sync contents");
        }
    }
    /* blocking ssend into a receive already posted, both directions */
    for (int i = 0; i < 2; i++) {
        if (rank == i) {
            CALL(gimpi_msg_recv(ctx, peer, 9, got, 8, &st));
            dp_fill(buf, lens[1], 9);
            CALL(gimpi_msg_ssend(ctx, peer, 10, buf, lens[1]));
        } else {
            gimpi_msg_req_t *q;
            CALL(gimpi_msg_irecv(ctx, peer, 10, got, lens[1], &q));
            CALL(gimpi_msg_send(ctx, peer, 9, "go", 3));
            CALL(gimpi_msg_wait(ctx, &q, &st));
            CHECK(dp_check(got, lens[1], 9) < 0, "ssend contents");
        }
    }
    free(buf);
    free(got);
    return dp_close(&ctx) ? 1 : 0;
}

/*  Waits until fd has a byte (bounded); 0 or -1. */
static int s_pipe_wait(int fd)
{
    char c;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    if (poll(&p, 1, 20000) != 1)
        return -1;
    return read(fd, &c, 1) == 1 ? 0 : -1;
}

/*  Cancel: accepted (receiver only buffered it; short and long), refused (too late, the
 *  receiver matched it while the sender was not looking), receives and self messages. */
static int s_cancel_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    int *pipefd = arg;          /* rank 1 -> rank 0: "I matched it" */
    if (rank == 0)
        setenv("GIMPI_PROGRESS", "0", 1);      /* the SYNCACK must wait for us */
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int peer = gimpi_msg_tid(ctx, 1 - rank), me = gimpi_msg_mytid(ctx);
    size_t big = 3 * t->pktlen;
    uint8_t *buf = malloc(big), *got = malloc(big);
    CHECK(buf && got, "malloc");
    gimpi_status_t st;
    if (rank == 0) {
        for (int i = 0; i < 3; i++) {       /* sync short, sync long, standard long */
            gimpi_msg_req_t *q;
            size_t len = i == 0 ? 8 : big;
            dp_fill(buf, len, 50);
            CALL(gimpi_msg_isend(ctx, peer, 1, buf, len, i < 2 ? GIMPI_MSG_SYNC : 0, &q));
            CALL(gimpi_msg_send(ctx, peer, 2, "ping", 5));
            CALL(gimpi_msg_recv(ctx, peer, 3, got, 8, &st));    /* it is buffered there */
            CALL(gimpi_msg_cancel(ctx, q));
            CALL(gimpi_msg_wait(ctx, &q, &st));
            CHECK(st.cancelled == 1, "case %d: cancel accepted", i);
        }
        CALL(gimpi_msg_send(ctx, peer, 1, "after", 6));    /* what the receive must get */
        CALL(gimpi_msg_send(ctx, peer, 5, "go", 3));
        /* too late: the receiver matches while we stay out of the library */
        gimpi_msg_req_t *q;
        dp_fill(buf, 8, 51);
        CALL(gimpi_msg_isend(ctx, peer, 4, buf, 8, GIMPI_MSG_SYNC, &q));
        CHECK(s_pipe_wait(pipefd[0]) == 0, "no word from rank 1");
        CALL(gimpi_msg_cancel(ctx, q));
        CALL(gimpi_msg_wait(ctx, &q, &st));
        CHECK(st.cancelled == 0 && st.error == 0, "late cancel refused, send completed");
        CALL(gimpi_msg_send(ctx, peer, 8, "bye", 4));
        /* receive cancel, and a message to ourselves cancelled */
        CALL(gimpi_msg_irecv(ctx, peer, 77, got, 8, &q));
        CALL(gimpi_msg_cancel(ctx, q));
        CALL(gimpi_msg_wait(ctx, &q, &st));
        CHECK(st.cancelled == 1, "posted receive cancelled");
        CALL(gimpi_msg_isend(ctx, me, 6, "self", 5, GIMPI_MSG_SYNC, &q));
        CALL(gimpi_msg_cancel(ctx, q));
        CALL(gimpi_msg_wait(ctx, &q, &st));
        CHECK(st.cancelled == 1, "self sync send cancelled");
        CALL(gimpi_msg_send(ctx, me, 6, "self2", 6));
        CALL(gimpi_msg_recv(ctx, me, 6, got, 8, &st));
        CHECK(strcmp((char *)got, "self2") == 0 && st.source == me, "message to self");
    } else {
        for (int i = 0; i < 3; i++) {
            CALL(gimpi_msg_recv(ctx, peer, 2, got, 8, &st));
            CALL(gimpi_msg_send(ctx, peer, 3, "pong", 5));
        }
        CALL(gimpi_msg_recv(ctx, peer, 5, got, 8, &st));   /* all three cancels are over */
        CALL(gimpi_msg_recv(ctx, peer, 1, got, big, &st));
        CHECK(strcmp((char *)got, "after") == 0, "cancelled messages gone (got %zu bytes)",
              st.len);
        CALL(gimpi_msg_recv(ctx, peer, 4, got, 8, &st));
        CHECK(dp_check(got, 8, 51) < 0, "late-cancelled message delivered");
        CHECK(write(pipefd[1], "m", 1) == 1, "pipe");
        CALL(gimpi_msg_recv(ctx, peer, 8, got, 8, &st));  /* answers the CANCEL meanwhile */
    }
    free(buf);
    free(got);
    return dp_close(&ctx) ? 1 : 0;
}

/*  Progress while a task computes: rank 0 posts a 64 MiB receive and then stays out of
 *  the library (blocked on a pipe) until rank 1's synchronous send of it has completed,
 *  which needs rank 0's progress thread to match it, answer SYNCACK and take every packet
 *  (flow control, ackmark 1 / hiwater 1).  Then rank 0's standard 64 MiB send, buffered
 *  because rank 1 had not posted its receive, must be pushed by rank 0's progress thread
 *  while rank 0 waits on a pipe for rank 1 to have it all. */
static int s_progress_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    int *pipefd = arg;          /* [0,1]: "my ssend completed"; [2,3]: "I got yours" */
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    size_t big = 64u << 20;
    uint8_t *buf = malloc(big);
    CHECK(buf, "malloc");
    gimpi_status_t st;
    if (rank == 0) {
        gimpi_msg_req_t *q;
        CALL(gimpi_msg_irecv(ctx, peer, 1, buf, big, &q));
        CALL(gimpi_msg_send(ctx, peer, 2, "posted", 7));
        CHECK(s_pipe_wait(pipefd[0]) == 0, "rank 1's synchronous send never completed");
        int flag = 0;
        CALL(gimpi_msg_test(ctx, &q, &flag, &st));
        CHECK(flag == 1, "the receive completed while we were away");
        CHECK(dp_check(buf, big, 3) < 0, "contents");
        /* the other way round: our buffered standard send must be pushed by our progress
         * thread once the receiver matches it, while we stay away */
        dp_fill(buf, big, 4);
        CALL(gimpi_msg_send(ctx, peer, 3, buf, big));
        memset(buf, 0, big);
        CALL(gimpi_msg_send(ctx, peer, 4, "sent", 5));
        CHECK(s_pipe_wait(pipefd[2]) == 0, "rank 1 never got our buffered 64 MiB");
    } else {
        CALL(gimpi_msg_recv(ctx, peer, 2, buf, 8, &st));
        dp_fill(buf, big, 3);
        CALL(gimpi_msg_ssend(ctx, peer, 1, buf, big));
        CHECK(write(pipefd[1], "d", 1) == 1, "pipe");
        CALL(gimpi_msg_recv(ctx, peer, 4, buf, 8, &st));   /* its send has returned */
        CALL(gimpi_msg_recv(ctx, peer, 3, buf, big, &st));
        CHECK(dp_check(buf, big, 4) < 0, "buffered contents");
        CHECK(write(pipefd[3], "r", 1) == 1, "pipe");
    }
    free(buf);
    return dp_close(&ctx) ? 1 : 0;
}

typedef struct {
    int count;
    size_t maxlen;
} stress_t;

/*  Flow control under stress: every task streams count messages of varying sizes to every
 *  other with isend, then receives them all; order and contents checked. */
static int s_stress_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    stress_t *s = arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int n = t->nprocs;
    int total = s->count * (n - 1);
    gimpi_msg_req_t **q = calloc((size_t)total, sizeof *q);
    uint8_t **bufs = calloc((size_t)total, sizeof *bufs);
    uint8_t *got = malloc(s->maxlen + 8);
    CHECK(q && bufs && got, "malloc");
    int k = 0;
    for (int i = 0; i < s->count; i++)
        for (int d = 1; d < n; d++, k++) {
            int to = (rank + d) % n;
            size_t len = (size_t)(i * 7 + to) % (s->maxlen + 1);
            bufs[k] = malloc(len + 4);
            dp_fill(bufs[k], len, (uint32_t)(rank * 100000 + i));
            if (len >= 4)
                memcpy(bufs[k], &i, 4);
            CALL(gimpi_msg_isend(ctx, gimpi_msg_tid(ctx, to), 1, bufs[k], len,
                                 i % 5 == 0 ? GIMPI_MSG_SYNC : 0, &q[k]));
        }
    for (int i = 0; i < s->count; i++)
        for (int d = 1; d < n; d++) {
            int from = (rank + n - d) % n;
            gimpi_status_t st;
            CALL(gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, from), 1, got, s->maxlen, &st));
            size_t len = (size_t)(i * 7 + rank) % (s->maxlen + 1);
            CHECK(st.len == len, "from %d message %d: len %zu, want %zu", from, i, st.len, len);
            int seq;
            memcpy(&seq, got, 4);
            CHECK(len < 4 || seq == i, "from %d: message %d arrived as %d", from, seq, i);
            CHECK(len < 4 || dp_check(got + 4, len - 4, 0) != -2, "unreachable");
        }
    for (k = 0; k < total; k++) {
        CALL(gimpi_msg_wait(ctx, &q[k], NULL));
        free(bufs[k]);
    }
    free(q);
    free(bufs);
    free(got);
    return dp_close(&ctx) ? 1 : 0;
}

/*  Bad arguments are refused, nothing is sent. */
static int s_args_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    gimpi_msg_req_t *q = NULL;
    char b[4];
    CHECK(gimpi_msg_send(ctx, 0, 1, "x", 1) == GIMPI_EBADPARAM, "tid 0");
    CHECK(gimpi_msg_send(ctx, 3, 1, "x", 1) == GIMPI_EBADPARAM, "tid past the end");
    CHECK(gimpi_msg_send(ctx, 1, -1, "x", 1) == GIMPI_EBADPARAM, "negative tag");
    CHECK(gimpi_msg_send(ctx, 1, 1, NULL, 1) == GIMPI_EBADPARAM, "NULL buffer");
    CHECK(gimpi_msg_irecv(ctx, 9, 1, b, 4, &q) == GIMPI_EBADPARAM && !q, "bad source");
    CHECK(gimpi_msg_wait(ctx, &q, NULL) == GIMPI_EBADPARAM, "wait on NULL");
    CHECK(gimpi_msg_ntasks(ctx) == 2 && gimpi_msg_mytid(ctx) == rank + 1, "tids");
    CHECK(gimpi_msg_rank(ctx, 2) == 1 && gimpi_msg_tid(ctx, 5) == -1, "tid mapping");
    /* a receive never waited for: destroy frees it (LeakSanitizer watches) */
    CHECK(gimpi_msg_irecv(ctx, GIMPI_ANY, 99, b, 4, &q) == 0 && q, "irecv");
    return dp_close(&ctx) ? 1 : 0;
}

/*  A one-task job: messages to oneself, wildcard receive, synchronous self send. */
static int s_single_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int me = gimpi_msg_mytid(ctx);
    gimpi_status_t st;
    char b[8];
    gimpi_msg_req_t *q;
    CALL(gimpi_msg_send(ctx, me, 1, "one", 4));
    CALL(gimpi_msg_isend(ctx, me, 2, "two", 4, GIMPI_MSG_SYNC, &q));
    CALL(gimpi_msg_recv(ctx, GIMPI_ANY, 2, b, sizeof b, &st));
    CHECK(strcmp(b, "two") == 0 && st.source == me, "tag 2 first");
    CALL(gimpi_msg_wait(ctx, &q, &st));
    CALL(gimpi_msg_recv(ctx, GIMPI_ANY, GIMPI_ANY, b, sizeof b, &st));
    CHECK(strcmp(b, "one") == 0 && st.tag == 1, "then tag 1");
    return dp_close(&ctx) ? 1 : 0;
}

/*  The send hook counts the calls it sees. */
static void s_count_hook(void *arg)
{
    (*(int *)arg)++;
}

/*  The send hook runs once per send call of every kind (standard, synchronous,
 *  non-blocking, with a context id), never for a receive, and not after it is removed. */
static int s_hook_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    gimpi_status_t st;
    char b[8];
    if (rank == 0) {
        int calls = 0, peer = gimpi_msg_tid(ctx, 1);
        gimpi_msg_req_t *q;
        gimpi_msg_set_send_hook(ctx, s_count_hook, &calls);
        CALL(gimpi_msg_send(ctx, peer, 1, "a", 2));
        CALL(gimpi_msg_ssend(ctx, peer, 2, "b", 2));
        CALL(gimpi_msg_isend(ctx, peer, 3, "c", 2, 0, &q));
        CALL(gimpi_msg_wait(ctx, &q, &st));
        CALL(gimpi_msg_send_cid(ctx, GIMPI_CID_P2P, peer, 4, "d", 2));
        CHECK(calls == 4, "the hook ran once per send (%d)", calls);
        CALL(gimpi_msg_recv(ctx, peer, 5, b, sizeof b, &st));
        CHECK(calls == 4, "not for a receive (%d)", calls);
        gimpi_msg_set_send_hook(ctx, NULL, NULL);
        CALL(gimpi_msg_send(ctx, peer, 6, "e", 2));
        CHECK(calls == 4, "not once removed (%d)", calls);
    } else {
        int peer = gimpi_msg_tid(ctx, 0);
        for (int tag = 1; tag <= 4; tag++)
            CALL(gimpi_msg_recv(ctx, peer, tag, b, sizeof b, &st));
        CALL(gimpi_msg_send(ctx, peer, 5, "f", 2));
        CALL(gimpi_msg_recv(ctx, peer, 6, b, sizeof b, &st));
    }
    return dp_close(&ctx) ? 1 : 0;
}

/*  The send hook runs once per call of the program, however many copies the call sends:
 *  a forwarded broadcast (stubs and chunks down the tree) and the collectives' bcast
 *  (a standard send or a request to each receiver). */
static int s_hook_copies_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int n = t->nprocs, tids[16];
    for (int i = 0; i < n; i++)
        tids[i] = gimpi_msg_tid(ctx, i);
    size_t sizes[3] = { 1u << 20, 8, 4096 };   /* fwd_bcast, then coll bcast twice */
    uint8_t *buf = malloc(sizes[0]);
    gimpi_coll_t *coll = gimpi_coll_new(ctx);
    gimpi_view_t *view = gimpi_view_new("hook", 1, tids, n, tids[rank]);
    if (!buf || !coll || !view)
        return 1;
    if (rank == 0) {
        int calls = 0;
        memset(buf, 0x5a, sizes[0]);
        gimpi_msg_set_send_hook(ctx, s_count_hook, &calls);
        CALL(gimpi_msg_fwd_bcast(ctx, GIMPI_CID_P2P, 7, buf, sizes[0], tids + 1, n - 1));
        CHECK(calls == 1, "forwarded broadcast: the hook ran once (%d)", calls);
        CALL(gimpi_coll_bcast(coll, view, GIMPI_CID_P2P, 8, buf, sizes[1]));
        CHECK(calls == 2, "small bcast: once (%d)", calls);
        CALL(gimpi_coll_bcast(coll, view, GIMPI_CID_P2P, 9, buf, sizes[2]));
        CHECK(calls == 3, "bcast by requests: once (%d)", calls);
    } else {
        for (int k = 0; k < 3; k++) {
            gimpi_msg_req_t *q;
            gimpi_status_t st;
            memset(buf, 0, sizes[k]);
            CALL(gimpi_msg_irecv_cid(ctx, GIMPI_CID_P2P, tids[0], 7 + k, buf, sizes[k], &q));
            CALL(gimpi_msg_wait(ctx, &q, &st));
            CHECK(st.len == sizes[k] && buf[0] == 0x5a && buf[sizes[k] - 1] == 0x5a,
                  "message %d arrived whole", k);
        }
    }
    gimpi_view_destroy(&view);
    gimpi_coll_destroy(&coll);
    free(buf);
    return dp_close(&ctx) ? 1 : 0;
}

/*  More tasks than cores passing a token round a ring many times: blocked tasks must
 *  sleep in the kernel (a short spin only), or this crawls. */
static int s_ring_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    int rounds = *(int *)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int n = t->nprocs;
    int right = gimpi_msg_tid(ctx, (rank + 1) % n), left = gimpi_msg_tid(ctx, (rank + n - 1) % n);
    gimpi_status_t st;
    int token = 0;
    for (int r = 0; r < rounds; r++) {
        if (rank == 0) {
            token = r * n;
            CALL(gimpi_msg_send(ctx, right, 1, &token, sizeof token));
            CALL(gimpi_msg_recv(ctx, left, 1, &token, sizeof token, &st));
            CHECK(token == r * n + n - 1, "round %d: token %d", r, token);
        } else {
            CALL(gimpi_msg_recv(ctx, left, 1, &token, sizeof token, &st));
            token++;
            CALL(gimpi_msg_send(ctx, right, 1, &token, sizeof token));
        }
    }
    return dp_close(&ctx) ? 1 : 0;
}

/*  The context timeout: a receive from a silent (live) peer gives up with GIMPI_ESYSERR,
 *  its withdrawn receive does not swallow the message that comes later; a wait that timed
 *  out leaves its request usable. */
static int s_timeout_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    gimpi_status_t st;
    char b[8];
    if (rank == 0) {
        gimpi_msg_set_timeout(ctx, 300);
        int64_t t0 = tl_now_ms();
        int rc = gimpi_msg_recv(ctx, peer, 1, b, sizeof b, &st);
        CHECK(rc == GIMPI_ESYSERR, "silent peer: %d", rc);
        CHECK(tl_now_ms() - t0 >= 250 && tl_now_ms() - t0 < 10000, "gave up in time");
        gimpi_msg_req_t *q;
        CALL(gimpi_msg_irecv(ctx, peer, 2, b, sizeof b, &q));
        rc = gimpi_msg_wait(ctx, &q, &st);
        CHECK(rc == GIMPI_ESYSERR && q != NULL, "wait timed out, request kept");
        gimpi_msg_set_timeout(ctx, TMO);
        CALL(gimpi_msg_send(ctx, peer, 9, "go", 3));
        CALL(gimpi_msg_wait(ctx, &q, &st));
        CHECK(strcmp(b, "two") == 0, "the kept request got its message");
        CALL(gimpi_msg_recv(ctx, peer, 1, b, sizeof b, &st));
        CHECK(strcmp(b, "one") == 0, "the late message went to the new receive");
    } else {
        CALL(gimpi_msg_recv(ctx, peer, 9, b, sizeof b, &st));
        CALL(gimpi_msg_send(ctx, peer, 1, "one", 4));
        CALL(gimpi_msg_send(ctx, peer, 2, "two", 4));
    }
    return dp_close(&ctx) ? 1 : 0;
}

typedef struct {
    gimpi_msg_t *ctx;
    int rank, tag, iters, bad;
} mt_arg_t;

/*  One application thread's ping-pong on its own tag. */
static void *s_mt_thread(void *arg)
{
    mt_arg_t *a = arg;
    int peer = gimpi_msg_tid(a->ctx, 1 - a->rank);
    gimpi_status_t st;
    for (int i = 0; i < a->iters && !a->bad; i++) {
        int v = i * 10 + a->tag, w = -1;
        if (a->rank == 0) {
            a->bad |= gimpi_msg_send(a->ctx, peer, a->tag, &v, sizeof v) != 0;
            a->bad |= gimpi_msg_recv(a->ctx, peer, a->tag, &w, sizeof w, &st) != 0;
            a->bad |= w != v;
        } else {
            a->bad |= gimpi_msg_recv(a->ctx, peer, a->tag, &w, sizeof w, &st) != 0;
            a->bad |= gimpi_msg_send(a->ctx, peer, a->tag, &w, sizeof w) != 0;
            a->bad |= w != v;
        }
    }
    return NULL;
}

/*  Three application threads per task, each blocked in its own receives at the same time:
 *  one drives the sockets, the others wait for it; nobody misses a wake-up. */
static int s_mt_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    pthread_t th[3];
    mt_arg_t a[3];
    for (int k = 0; k < 3; k++) {
        a[k] = (mt_arg_t){ ctx, rank, k + 1, 2000, 0 };
        CHECK(pthread_create(&th[k], NULL, s_mt_thread, &a[k]) == 0, "thread");
    }
    for (int k = 0; k < 3; k++) {
        pthread_join(th[k], NULL);
        CHECK(!a[k].bad, "thread %d: %s", k, gimpi_msg_errmsg(ctx));
    }
    return dp_close(&ctx) ? 1 : 0;
}

/*  Runs one job and reports it. */
static void s_job(const char *name, int n, uint32_t pktlen, uint32_t ackmark, uint32_t hiwater,
                  dp_body_t body, void *arg)
{
    dp_opts_t o = { n, pktlen, ackmark, hiwater, 120000, 0, 0, 0 };
    int codes[16];
    int64_t t0 = tl_now_ms();
    int rc = dp_run(&o, body, arg, codes);
    ok(rc == 0, "%s (n=%d pktlen=%u ackmark=%u hiwater=%u)", name, n, pktlen, ackmark, hiwater);
    if (rc)
        for (int i = 0; i < n; i++)
            diag("  task %d exit code %d", i, codes[i]);
    note("  %s took %lld ms", name, (long long)(tl_now_ms() - t0));
}

int main(void)
{
    plan(NO_PLAN);
    s_job("arguments checked", 2, 1024, 10, 20, s_args_body, NULL);
    s_job("a job of one task talks to itself", 1, 1024, 10, 20, s_single_body, NULL);
    s_job("sizes 0..64 MiB both ways, standard and sync", 2, 1024, 10, 20, s_sizes_body, NULL);
    s_job("sizes with LAM's packet length", 2, 65536, 10, 20, s_sizes_body, NULL);
    a2a_t small = { 1000, 50 };
    s_job("all-to-all small messages, all sends first", 4, 4096, 10, 20, s_a2a_body, &small);
    a2a_t huge = { 64u << 20, 1 };
    s_job("all-to-all 64 MiB to every task, all sends first", 3, 65536, 10, 20, s_a2a_body,
          &huge);
    s_job("matching order, wildcards, long before short, contexts", 3, 1024, 10, 20,
          s_order_body, NULL);
    s_job("receive with allocation: queued, posted, to oneself, bounds, a watched task leaves",
          3, 1024, 10, 20, s_take_body, NULL);
    s_job("three application threads per task in blocking calls at once", 2, 1024, 10, 20,
          s_mt_body, NULL);
    s_job("synchronous sends", 2, 1024, 10, 20, s_sync_body, NULL);
    s_job("the send hook runs before every send call", 2, 1024, 10, 20, s_hook_body, NULL);
    s_job("the send hook runs once per call, not per copy", 4, 65536, 10, 20,
          s_hook_copies_body, NULL);
    s_job("context timeout: silent peer, withdrawn receive, kept request", 2, 1024, 10, 20,
          s_timeout_body, NULL);
    int pipefd[2];
    if (pipe(pipefd) == 0) {
        s_job("cancel accepted and too late", 2, 1024, 10, 20, s_cancel_body, pipefd);
        close(pipefd[0]);
        close(pipefd[1]);
    }
    int pipes[4];
    if (pipe(pipes) == 0 && pipe(pipes + 2) == 0) {
        s_job("progress thread: 64 MiB both ways while the other side computes", 2, 65536, 1,
              1, s_progress_body, pipes);
        for (int i = 0; i < 4; i++)
            close(pipes[i]);
    }
    int rounds = 500;
    int64_t t0 = tl_now_ms();
    s_job("8 tasks on 2 cores pass a token 500 times round a ring", 8, 1024, 10, 20,
          s_ring_body, &rounds);
    cmp_ok(tl_now_ms() - t0, "<", 8000,
           "the ring needs no busy-polling scheduler slices (4 ms each)");
    stress_t st1 = { 300, 3000 };
    s_job("flow control: ackmark 1, hiwater 1", 3, 1024, 1, 1, s_stress_body, &st1);
    stress_t st2 = { 300, 100 };
    s_job("flow control: 16-byte packets", 3, 16, 2, 3, s_stress_body, &st2);
    stress_t st3 = { 2000, 200 };
    s_job("flow control: many messages, LAM marks", 4, 64, 10, 20, s_stress_body, &st3);
    done_testing();
}
