/*  t/dyn_hosts.c — dynamic hosts on the data plane: tasks outside each other's static
 *  tables meet through a gimpi introduction on the listening socket, found by a resolver
 *  (tid -> port) or announced (gimpi_msg_expect).  Real processes and sockets: one-task
 *  "jobs" of their own (as spawned children are) talking eagerly and by rendezvous both
 *  ways; both calling each other at once; an outsider talking to every task of a static
 *  job; garbage, short and misdirected introductions (dropped, the listener keeps
 *  serving); unknown, unreachable, killed and finished peers (errors, never hangs); an
 *  expected peer that dies before calling.  The processes of a scenario call each other
 *  once every one is set up (s_ready, a pipe); every process is bounded by a deadline.
 */
#include "dp_harness.h"
#include "net/gimpi_host.h"
#include "net/msg_dynhost.h"
#include "task/gimpi_job.h"
#include "gtap.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <time.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMO 30000
#define MAXT 8

#define CHECK(cond, ...) do { if (!(cond)) return dp_fail(me, __VA_ARGS__); } while (0)
#define CALL(expr) do { int rc_ = (expr); \
        CHECK(rc_ == 0, "%s: %s", #expr, gimpi_strerror(rc_)); } while (0)

/*  The "registry" of a scenario: tid -> port, filled before the processes fork. */
typedef struct {
    int n;
    int tid[MAXT];
    int port[MAXT];
    int lfd[MAXT];
    int llfd[MAXT];             /* local twins of lfd (-1: none) */
    uint32_t ip[MAXT];          /* address (host order); 0: 127.0.0.1 */
    int slow_ms;                /* the resolver sleeps this long first (a late registration) */
    int pipes[2][2];            /* expect scenario: alive pipes of tid[1] and tid[2];
                                   late-tid scenario: pipes[0] says "called" */
    int nready;                 /* processes that call s_ready (0: all of s_run's) */
    int ready[2], go[2];        /* s_ready's pipes: "set up" to s_run, "go" back */
} reg_t;

/*  Resolver over a reg_t: ENOTASK for tids it does not list. */
static int s_resolve(void *arg, int tid, uint8_t addr[16], int *port)
{
    const reg_t *reg = arg;
    if (reg->slow_ms)
        usleep((useconds_t)reg->slow_ms * 1000);
    for (int i = 0; i < reg->n; i++)
        if (reg->tid[i] == tid) {
            impi_addr16_from_ipv4(addr, reg->ip[i] ? reg->ip[i] : INADDR_LOOPBACK);
            *port = reg->port[i];
            return 0;
        }
    return GIMPI_ENOTASK;
}

/*  A one-task job of its own (as a shell-started or spawned task) on listening socket
 *  lfd, with tid `tid` and the registry as resolver. */
static gimpi_msg_t *s_solo(int lfd, int llfd, int port, int tid, reg_t *reg)
{
    char err[256];
    impi_tables_t *t = gimpi_job_solo_tables(port, err, sizeof err);
    if (!t) {
        fprintf(stderr, "tables: %s\n", err);
        return NULL;
    }
    gimpi_msg_t *m = gimpi_msg_new_local(t, 0, lfd, llfd, TMO, err, sizeof err);
    impi_tables_destroy(&t);
    if (!m) {
        fprintf(stderr, "gimpi_msg_new: %s\n", err);
        return NULL;
    }
    if (tid > 0)                        /* 0: the caller sets it later */
        gimpi_msg_set_tidbase(m, tid - 1);
    gimpi_msg_set_timeout(m, TMO);
    gimpi_msg_set_key(m, dp_key());
    if (reg)
        gimpi_msg_set_resolver(m, s_resolve, reg);
    return m;
}

/*  Says this process is set up and waits until every process of the scenario is: the
 *  registry names every listener from the start, and a task's engine listens before
 *  s_solo has given it its key, so a call that came earlier would be refused (no key).
 *  0, or -1 when s_run did not say go within TMO. */
static int s_ready(reg_t *reg)
{
    char c = 'r';
    if (write(reg->ready[1], &c, 1) != 1)
        return -1;
    struct pollfd p = { reg->go[0], POLLIN, 0 };
    return poll(&p, 1, TMO) == 1 && read(reg->go[0], &c, 1) == 1 ? 0 : -1;
}

/*  s_run's side of s_ready: waits (at most TMO) until n processes are set up, or the
 *  ones left have ended, then lets them all go. */
static void s_release(reg_t *reg, int n)
{
    int got = 0;
    int64_t deadline = tl_now_ms() + TMO;
    while (got < n) {
        int left = (int)(deadline - tl_now_ms());
        struct pollfd p = { reg->ready[0], POLLIN, 0 };
        char b[MAXT];
        if (left <= 0 || poll(&p, 1, left) != 1)
            break;
        ssize_t r = read(reg->ready[0], b, (size_t)(n - got));
        if (r <= 0)
            break;                      /* every process has ended */
        got += (int)r;
    }
    char go[MAXT];
    memset(go, 'g', sizeof go);
    if (write(reg->go[1], go, (size_t)n) != n)
        diag("could not say go");
}

/*  Fills a registry of n tasks with tids base, 2*base, ... and fresh listeners. */
static void s_reg_init(reg_t *reg, int n, int base)
{
    memset(reg, 0, sizeof *reg);
    reg->n = n;
    for (int k = 0; k < 2; k++)
        reg->pipes[k][0] = reg->pipes[k][1] = -1;
    reg->ready[0] = reg->ready[1] = reg->go[0] = reg->go[1] = -1;
    for (int i = 0; i < n; i++) {
        char err[128];
        reg->tid[i] = base * (i + 1);
        reg->lfd[i] = gimpi_job_listen("127.0.0.1", &reg->port[i], err, sizeof err);
        if (reg->lfd[i] < 0)
            BAIL_OUT("listen: %s", err);
        reg->llfd[i] = gimpi_host_listen_local(reg->lfd[i]);
    }
}

typedef int (*body_t)(reg_t *reg, int me);

/*  Runs body(reg, i) in n processes (i = 0..n-1, each owning listener i); returns 0 when
 *  every one exited 0 within TMO, and their codes in codes (when not NULL). */
static int s_run(reg_t *reg, int n, body_t body, int *codes)
{
    pid_t pid[MAXT];
    if (pipe(reg->ready) < 0 || pipe(reg->go) < 0)
        BAIL_OUT("pipe");
    for (int i = 0; i < n; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            close(reg->ready[0]);
            close(reg->go[1]);
            for (int k = 0; k < reg->n; k++)
                if (k != i) {
                    close(reg->lfd[k]);
                    if (reg->llfd[k] >= 0)
                        close(reg->llfd[k]);
                }
            alarm(TMO / 1000 + 5);
            _exit(body(reg, i));
        }
    }
    close(reg->ready[1]);
    close(reg->go[0]);
    s_release(reg, reg->nready ? reg->nready : n);
    close(reg->ready[0]);
    close(reg->go[1]);
    for (int k = 0; k < reg->n; k++) {
        close(reg->lfd[k]);
        if (reg->llfd[k] >= 0)
            close(reg->llfd[k]);
    }
    for (int k = 0; k < 2; k++)
        for (int e = 0; e < 2; e++)
            if (reg->pipes[k][e] >= 0)
                close(reg->pipes[k][e]);
    int bad = 0;
    int64_t deadline = tl_now_ms() + TMO + 10000;
    for (int i = 0; i < n; i++) {
        int st = 0;
        while (waitpid(pid[i], &st, WNOHANG) == 0) {
            if (tl_now_ms() > deadline) {
                kill(pid[i], SIGKILL);
                waitpid(pid[i], &st, 0);
                break;
            }
            usleep(2000);
        }
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (codes)
            codes[i] = code;
        if (code)
            bad = 1;
    }
    return bad;
}

/* ------------------------------------------------------------------ scenarios */

/*  Two one-task jobs: 1 calls 0 (resolver), eager and rendezvous both ways. */
static int s_pair_body(reg_t *reg, int me)
{
    gimpi_msg_t *m = s_solo(reg->lfd[me], reg->llfd[me], reg->port[me], reg->tid[me], reg);
    CHECK(m, "solo");
    CHECK(s_ready(reg) == 0, "ready");
    int other = reg->tid[1 - me];
    size_t big = 3u << 20;
    uint8_t *buf = malloc(big);
    CHECK(buf, "malloc");
    gimpi_status_t st;
    if (me == 1) {
        CALL(gimpi_msg_send(m, other, 1, "hello", 6));
        dp_fill(buf, big, 7);
        CALL(gimpi_msg_send(m, other, 2, buf, big));
        memset(buf, 0, big);
        CALL(gimpi_msg_recv(m, other, 3, buf, big, &st));
        CHECK(st.source == other && st.len == big, "reply %d %zu", st.source, st.len);
        CHECK(dp_check(buf, big, 8) < 0, "reply data");
    } else {
        char b[8];
        CALL(gimpi_msg_recv(m, GIMPI_ANY, 1, b, sizeof b, &st));
        CHECK(st.source == other && !strcmp(b, "hello"), "hello from %d", st.source);
        CHECK(gimpi_msg_npeers(m) == 1, "npeers %d", gimpi_msg_npeers(m));
        CALL(gimpi_msg_recv(m, other, 2, buf, big, &st));
        CHECK(dp_check(buf, big, 7) < 0, "long data");
        dp_fill(buf, big, 8);
        CALL(gimpi_msg_ssend(m, other, 3, buf, big));
    }
    int rc = gimpi_msg_finalize(m, TMO);
    gimpi_msg_destroy(&m);
    free(buf);
    CHECK(rc == 0, "finalize %d", rc);
    return 0;
}

/*  A caller that comes before the callee knows its own tid: task 0 listens with the
 *  default tid until task 1 has called (its send is under way, the pipe says so), a moment
 *  more, then learns its tid; the call is answered then, not refused. */
static int s_late_tid_body(reg_t *reg, int me)
{
    gimpi_msg_t *m = s_solo(reg->lfd[me], reg->llfd[me], reg->port[me],
                            me == 0 ? 0 : reg->tid[me], reg);
    CHECK(m, "solo");
    CHECK(s_ready(reg) == 0, "ready");  /* task 0 has its key, not yet its tid */
    int other = reg->tid[1 - me], v = 0;
    gimpi_status_t st;
    if (me == 1) {
        close(reg->pipes[0][0]);
        gimpi_msg_req_t *r = NULL;
        CALL(gimpi_msg_isend(m, other, 4, &me, sizeof me, 0, &r));
        CHECK(write(reg->pipes[0][1], "c", 1) == 1, "pipe");
        CALL(gimpi_msg_wait(m, &r, NULL));
        CALL(gimpi_msg_recv(m, other, 5, &v, sizeof v, &st));
        CHECK(v == 42, "reply %d", v);
    } else {
        close(reg->pipes[0][1]);
        char c;
        struct pollfd p = { reg->pipes[0][0], POLLIN, 0 };
        CHECK(poll(&p, 1, TMO) == 1 && read(reg->pipes[0][0], &c, 1) == 1, "called");
        struct timespec ts = { 0, 200 * 1000 * 1000 };  /* the call gets in meanwhile */
        nanosleep(&ts, NULL);
        CALL(gimpi_msg_set_tidbase(m, reg->tid[0] - 1));
        CALL(gimpi_msg_recv(m, other, 4, &v, sizeof v, &st));
        CHECK(v == 1, "got %d", v);
        v = 42;
        CALL(gimpi_msg_send(m, other, 5, &v, sizeof v));
    }
    int rc = gimpi_msg_finalize(m, TMO);
    gimpi_msg_destroy(&m);
    CHECK(rc == 0, "finalize %d", rc);
    return 0;
}

/*  n one-task jobs all sending to all before receiving: every pair calls both ways at
 *  once; one connection wins and every message arrives in order. */
static int s_all_body(reg_t *reg, int me)
{
    gimpi_msg_t *m = s_solo(reg->lfd[me], reg->llfd[me], reg->port[me], reg->tid[me], reg);
    CHECK(m, "solo");
    CHECK(s_ready(reg) == 0, "ready");
    for (int round = 0; round < 5; round++)
        for (int i = 0; i < reg->n; i++)
            if (i != me) {
                int v[2] = { me, round };
                CALL(gimpi_msg_send(m, reg->tid[i], 9, v, sizeof v));
            }
    for (int i = 0; i < reg->n; i++)
        for (int round = 0; round < 5 && i != me; round++) {
            int v[2];
            gimpi_status_t st;
            CALL(gimpi_msg_recv(m, reg->tid[i], 9, v, sizeof v, &st));
            CHECK(v[0] == i && v[1] == round, "from %d round %d: got %d %d", i, round, v[0],
                  v[1]);
        }
    int rc = gimpi_msg_finalize(m, TMO);
    gimpi_msg_destroy(&m);
    CHECK(rc == 0, "finalize %d", rc);
    return 0;
}

/*  Garbage on the listener of task 0; then task 1 still gets through. */
static int s_garbage_body(reg_t *reg, int me)
{
    if (me == 0) {
        gimpi_msg_t *m = s_solo(reg->lfd[0], reg->llfd[0], reg->port[0], reg->tid[0], reg);
        CHECK(m, "solo");
        CHECK(s_ready(reg) == 0, "ready");
        char b[8];
        gimpi_status_t st;
        CALL(gimpi_msg_recv(m, GIMPI_ANY, 1, b, sizeof b, &st));
        CHECK(st.source == reg->tid[1], "source %d", st.source);
        CALL(gimpi_msg_send(m, reg->tid[1], 2, "ok", 3));
        CHECK(gimpi_msg_finalize(m, TMO) == 0, "finalize");
        gimpi_msg_destroy(&m);
        return 0;
    }
    /* a rank-style 4-byte caller, a short hello, an introduction (with the key) for
     * another tid and a wrong version: each is dropped, the third answered "not the task
     * asked for" (under the callee's MAC), the last challenged with "unknown version";
     * once task 0 has its key and tid */
    CHECK(s_ready(reg) == 0, "ready");
    int fd = tl_connect("127.0.0.1", reg->port[0]);
    CHECK(fd >= 0 && tl_send_all(fd, "\0\0\0\1GARBAGE!", 12) == 0, "connect 1");
    CHECK(tl_wait_closed(fd, TMO) == 1, "rank-style caller dropped");
    close(fd);
    fd = tl_connect("127.0.0.1", reg->port[0]);
    uint8_t hello[GIMPI_INTRO_HELLO_SIZE], nonce[GIMPI_INTRO_NONCE];
    gimpi_intro_hello(hello);
    CHECK(fd >= 0 && tl_send_all(fd, hello, 5) == 0, "connect 2");
    shutdown(fd, SHUT_WR);
    CHECK(tl_wait_closed(fd, TMO) == 1, "short hello dropped");
    close(fd);
    fd = tl_connect("127.0.0.1", reg->port[0]);
    CHECK(fd >= 0 && dp_intro_hello(fd, GIMPI_INTRO_VERSION, nonce, TMO) == GIMPI_INTRO_OK,
          "challenge 3");
    uint8_t intro[GIMPI_INTRO_SIZE], ans[GIMPI_INTRO_SIZE];
    gimpi_intro_t in = { .word = GIMPI_INTRO_VERSION, .tid = 777, .target = reg->tid[0] + 1,
                         .pktlen = 65536, .ackmark = 32, .hiwater = 64 };
    CHECK(dp_intro_send(fd, &in, dp_key(), nonce, intro) == 0, "intro 3");
    gimpi_intro_t got;
    int st3 = dp_intro_answer(fd, &got, ans, TMO);
    CHECK(st3 == GIMPI_INTRO_WRONGTID, "answer status %d", st3);
    gimpi_key_t key;
    memcpy(key.bytes, dp_key(), sizeof key.bytes);
    CHECK(gimpi_intro_answer_sealed(&key, intro, ans), "the answer proves the callee's key");
    CHECK(tl_wait_closed(fd, TMO) == 1, "misdirected caller dropped");
    close(fd);
    fd = tl_connect("127.0.0.1", reg->port[0]);
    CHECK(fd >= 0 && dp_intro_hello(fd, 99, nonce, TMO) == GIMPI_INTRO_BADVERSION,
          "version 99 challenged with a refusal");
    CHECK(tl_wait_closed(fd, TMO) == 1, "wrong-version caller dropped");
    close(fd);
    gimpi_msg_t *m = s_solo(reg->lfd[1], reg->llfd[1], reg->port[1], reg->tid[1], reg);
    CHECK(m, "solo");
    CALL(gimpi_msg_send(m, reg->tid[0], 1, "hi", 3));
    char b[8];
    gimpi_status_t st;
    CALL(gimpi_msg_recv(m, reg->tid[0], 2, b, sizeof b, &st));
    CHECK(gimpi_msg_finalize(m, TMO) == 0, "finalize");
    gimpi_msg_destroy(&m);
    return 0;
}

/*  Failures: an unknown tid, a listed tid nobody listens for, a peer killed in the middle
 *  of a long message, a peer that finished. */
static int s_fail_body(reg_t *reg, int me)
{
    gimpi_msg_t *m = s_solo(reg->lfd[me], reg->llfd[me], reg->port[me], reg->tid[me], reg);
    CHECK(m, "solo");
    CHECK(s_ready(reg) == 0, "ready");
    size_t big = 16u << 20;
    uint8_t *buf = calloc(1, big);
    CHECK(buf, "malloc");
    gimpi_status_t st;
    if (me == 1) {                      /* killed in the middle of a long send */
        gimpi_msg_req_t *q;
        CALL(gimpi_msg_isend(m, reg->tid[0], 1, buf, big, 0, &q));
        char b[4];
        CALL(gimpi_msg_recv(m, reg->tid[0], 2, b, sizeof b, &st));
        raise(SIGKILL);
    }
    if (me == 2) {                      /* talks, then finishes */
        CALL(gimpi_msg_send(m, reg->tid[0], 3, "bye", 4));
        CHECK(gimpi_msg_finalize(m, TMO) == 0, "finalize");
        gimpi_msg_destroy(&m);
        return 0;
    }
    int rc = gimpi_msg_send(m, 4242, 1, "x", 1);
    CHECK(rc == GIMPI_ENOTASK, "send to an unknown tid: %d", rc);
    rc = gimpi_msg_recv(m, 4242, 1, buf, 1, &st);
    CHECK(rc == GIMPI_ENOTASK, "receive from an unknown tid: %d", rc);
    rc = gimpi_msg_send(m, reg->tid[3], 1, "x", 1);     /* listed, nobody listens */
    CHECK(rc == 0 || rc == GIMPI_ESYSERR, "send to a dead contact: %d", rc);
    rc = gimpi_msg_recv(m, reg->tid[3], 1, buf, 1, &st);
    CHECK(rc == GIMPI_ESYSERR, "receive from a dead contact: %d", rc);
    CHECK(strstr(gimpi_msg_errmsg(m), "connect"), "error says connect: %s",
          gimpi_msg_errmsg(m));
    char b[4];
    CALL(gimpi_msg_recv(m, reg->tid[2], 3, b, sizeof b, &st));
    /* the long message's first packet is in; its sender dies before the rest can come */
    CALL(gimpi_msg_probe(m, reg->tid[1], 1, &st));
    CALL(gimpi_msg_send(m, reg->tid[1], 2, "go", 3));
    rc = gimpi_msg_recv(m, reg->tid[1], 9, b, sizeof b, &st);
    CHECK(rc == GIMPI_ESYSERR, "receive from the killed peer: %d", rc);
    gimpi_msg_req_t *q;
    CALL(gimpi_msg_irecv(m, reg->tid[1], 1, buf, big, &q));
    rc = gimpi_msg_wait(m, &q, &st);
    CHECK(rc == GIMPI_ESYSERR, "the rest of its long message: %d", rc);
    rc = gimpi_msg_send(m, reg->tid[1], 5, "x", 1);
    CHECK(rc == GIMPI_ESYSERR, "send to the killed peer: %d", rc);
    rc = gimpi_msg_recv(m, reg->tid[2], 4, b, sizeof b, &st);
    CHECK(rc == GIMPI_ESYSERR, "receive from the finished peer: %d", rc);
    rc = gimpi_msg_recv(m, GIMPI_ANY, 4, b, sizeof b, &st);
    CHECK(rc == GIMPI_ESYSERR, "wildcard receive once every peer is gone: %d", rc);
    gimpi_msg_destroy(&m);
    free(buf);
    return 0;
}

/*  Expected peers: 0 expects tid[1] (alive_fd: a pipe 1 holds) and tid[2] (a pipe whose
 *  writer dies at once); a send queued for 1 reaches it once it calls. */
static int s_expect_body(reg_t *reg, int me)
{
    for (int k = 0; k < 2; k++)         /* 0 keeps the read ends, k+1 its write end */
        for (int e = 0; e < 2; e++)
            if (!(me == 0 && e == 0) && !(me == k + 1 && e == 1))
                close(reg->pipes[k][e]);
    if (me == 2)
        return 0;                       /* dies before calling */
    gimpi_msg_t *m = s_solo(reg->lfd[me], reg->llfd[me], reg->port[me], reg->tid[me], NULL);
    CHECK(m, "solo");
    CHECK(s_ready(reg) == 0, "ready");
    gimpi_status_t st;
    char b[16] = { 0 };
    if (me == 0) {
        CALL(gimpi_msg_expect(m, reg->tid[1], reg->pipes[0][0]));
        CALL(gimpi_msg_expect(m, reg->tid[2], reg->pipes[1][0]));
        CHECK(gimpi_msg_npeers(m) == 2, "npeers %d", gimpi_msg_npeers(m));
        CALL(gimpi_msg_send(m, reg->tid[1], 1, "queued", 7));
        int rc = gimpi_msg_recv(m, reg->tid[2], 1, b, sizeof b, &st);
        CHECK(rc == GIMPI_ESYSERR, "receive from the expected peer that died: %d", rc);
        CHECK(strstr(gimpi_msg_errmsg(m), "before connecting"), "why: %s",
              gimpi_msg_errmsg(m));
        CALL(gimpi_msg_recv(m, reg->tid[1], 2, b, sizeof b, &st));
        CHECK(!strcmp(b, "queued"), "echo %s", b);
        int v = reg->tid[1];
        CALL(gimpi_msg_send(m, reg->tid[1], 3, &v, sizeof v));
    } else {
        uint8_t addr[16];
        impi_addr16_from_ipv4(addr, INADDR_LOOPBACK);
        CALL(gimpi_msg_connect(m, reg->tid[0], addr, reg->port[0]));
        CALL(gimpi_msg_recv(m, reg->tid[0], 1, b, sizeof b, &st));
        CALL(gimpi_msg_send(m, reg->tid[0], 2, b, sizeof b));
        int v;
        CALL(gimpi_msg_recv(m, GIMPI_ANY, 3, &v, sizeof v, &st));
        CHECK(v == reg->tid[1] && st.source == reg->tid[0], "last %d from %d", v, st.source);
    }
    int rc = gimpi_msg_finalize(m, TMO);
    gimpi_msg_destroy(&m);
    CHECK(rc == 0, "finalize %d", rc);
    return 0;
}

/*  A static job of 2 (tids 1, 2): rank 0 starts an outsider (tid 900, a one-task job of
 *  its own) that talks to both, once rank 1 has said it is set up; each answers it, then
 *  the job talks inside as usual. */
static int s_static_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    int me = rank;
    pid_t out = -1;
    gimpi_msg_t *m = dp_open(t, rank, lfd, TMO);
    CHECK(m, "open");
    int v;
    gimpi_status_t st;
    if (rank == 1)                      /* it has its key: the outsider may call it now */
        CALL(gimpi_msg_send(m, gimpi_msg_tid(m, 0), 6, &rank, sizeof rank));
    if (rank == 0) {
        CALL(gimpi_msg_recv(m, gimpi_msg_tid(m, 1), 6, &v, sizeof v, &st));
        /* the outsider is a fresh process (exec): a fork of this threaded task could
         * inherit a lock held by its progress thread */
        char a[4][32];
        for (int i = 0; i < 2; i++) {
            snprintf(a[2 * i], sizeof a[0], "%d", t->hosts[i].port);
            snprintf(a[2 * i + 1], sizeof a[0], "%u", (unsigned)impi_addr16_ipv4(t->hosts[i].addr));
        }
        char *argv[] = { "dyn_hosts", "outsider", a[0], a[1], a[2], a[3], NULL };
        out = fork();
        if (out == 0) {
            execv("/proc/self/exe", argv);
            _exit(127);
        }
        CHECK(out > 0, "fork");
    }
    CALL(gimpi_msg_recv(m, GIMPI_ANY, 7, &v, sizeof v, &st));
    CHECK(st.source == 900 && v == rank + 1, "from %d: %d", st.source, v);
    v *= 10;
    CALL(gimpi_msg_send(m, 900, 8, &v, sizeof v));
    int peer = gimpi_msg_tid(m, 1 - rank);
    CALL(gimpi_msg_send(m, peer, 9, &rank, sizeof rank));
    CALL(gimpi_msg_recv(m, peer, 9, &v, sizeof v, &st));
    CHECK(v == 1 - rank, "inside %d", v);
    CHECK(dp_close(&m) == 0, "close");
    if (out > 0) {
        int wst;
        CHECK(waitpid(out, &wst, 0) == out && WIFEXITED(wst) && !WEXITSTATUS(wst),
              "outsider failed");
    }
    return 0;
}

/*  The outsider of s_static_body (tid 900, a one-task job of its own): talks to tids 1
 *  and 2 at the contacts given as "port ip port ip".  Exit code 0 on success. */
static int s_outsider(char **args)
{
    int me = 900;
    reg_t reg;
    memset(&reg, 0, sizeof reg);
    reg.n = 2;
    for (int i = 0; i < 2; i++) {
        reg.tid[i] = i + 1;
        reg.port[i] = atoi(args[2 * i]);
        reg.ip[i] = (uint32_t)strtoul(args[2 * i + 1], NULL, 10);
    }
    char err[128];
    int port, ofd = gimpi_job_listen("127.0.0.1", &port, err, sizeof err);
    CHECK(ofd >= 0, "listen: %s", err);
    gimpi_msg_t *m = s_solo(ofd, gimpi_host_listen_local(ofd), port, 900, &reg);
    CHECK(m, "solo");
    for (int i = 1; i <= 2; i++)
        CALL(gimpi_msg_send(m, i, 7, &i, sizeof i));
    for (int i = 1; i <= 2; i++) {
        int v;
        gimpi_status_t st;
        CALL(gimpi_msg_recv(m, i, 8, &v, sizeof v, &st));
        CHECK(v == i * 10, "answer of %d: %d", i, v);
    }
    int rc = gimpi_msg_finalize(m, TMO);
    gimpi_msg_destroy(&m);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "outsider"))
        return s_outsider(argv + 2);
    plan(NO_PLAN);
    signal(SIGPIPE, SIG_IGN);
    reg_t reg;
    int codes[MAXT];

    /* first: dp_run's tasks exit() through the TAP emitter's exit hook */
    dp_opts_t o = { .n = 2, .pktlen = 65536, .ackmark = 32, .hiwater = 64,
                    .timeout_ms = TMO + 10000, .keep_stdout = 1 };
    ok(dp_run(&o, s_static_body, NULL, codes) == 0,
       "an outsider talks to every task of a static job, which then talks inside");
    s_reg_init(&reg, 2, 101);
    ok(s_run(&reg, 2, s_pair_body, NULL) == 0,
       "two one-task jobs meet by tid: eager and rendezvous both ways, sync send");

    s_reg_init(&reg, 2, 201);
    if (pipe(reg.pipes[0]) < 0)
        BAIL_OUT("pipe");
    ok(s_run(&reg, 2, s_late_tid_body, NULL) == 0,
       "a call that comes before the callee knows its tid is answered once it does");

    s_reg_init(&reg, 4, 11);
    ok(s_run(&reg, 4, s_all_body, NULL) == 0,
       "four one-task jobs all call each other at once: one connection per pair, order kept");

    s_reg_init(&reg, 2, 300);
    reg.slow_ms = 50;
    ok(s_run(&reg, 2, s_all_body, NULL) == 0, "the same with a slow resolver");

    s_reg_init(&reg, 2, 500);
    ok(s_run(&reg, 2, s_garbage_body, codes) == 0,
       "rank-style, short, misdirected and wrong-version callers dropped; listener serves on");

    s_reg_init(&reg, 4, 600);
    close(reg.lfd[3]);                  /* tid[3] is listed but nobody listens */
    reg.lfd[3] = -1;
    if (reg.llfd[3] >= 0)
        close(reg.llfd[3]);
    reg.llfd[3] = -1;
    reg.n = 4;
    s_run(&reg, 3, s_fail_body, codes);
    ok(codes[0] == 0 && codes[1] == 128 + SIGKILL && codes[2] == 0,
       "unknown, unreachable, killed and finished peers: errors, no hang (%d %d %d)",
       codes[0], codes[1], codes[2]);
    s_reg_init(&reg, 3, 700);
    reg.nready = 2;                     /* tid[2] dies before setting up */
    for (int k = 0; k < 2; k++)
        if (pipe(reg.pipes[k]) < 0)
            BAIL_OUT("pipe");
    ok(s_run(&reg, 3, s_expect_body, NULL) == 0,
       "expected peers: a queued send waits for the call; one dying first is an error");

    done_testing();
}
