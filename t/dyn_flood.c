/*  t/dyn_flood.c — introduction floods against a task's listener (msg_dynhost.c) while
 *  real dialers introduce themselves and send it one message each: no message may be
 *  lost silently.  A victim task (a one-task job with a registry as resolver and
 *  verifier) waits for DIALERS messages; DIALERS dialer tasks, started together, each
 *  send it one (a standard send: eager, it returns before the connection is made) and
 *  finalize; a flooder on loopback meanwhile opens connections as fast as it can,
 *  either holding them silent (the eviction must drop those, not the dialers that have
 *  their challenge) or closing them at once (the 20,000-a-second flood of issue 25).
 *  Checked: every message arrives, no dialer's send or finalize fails, and the flood
 *  rate reached is printed.  First, the eviction itself, played by hand: real callers
 *  that have their challenge survive 300 silent connections from their own address, and
 *  300 that sent their HELLO from another address (the cap per address).  Last, a callee that always hangs up before its challenge:
 *  the dialer calls again (backoff) until its connect timeout, then says on stderr how
 *  many messages are lost (a standard send had returned 0), or its synchronous send
 *  fails: never a silent loss.
 */
#include "dp_harness.h"
#include "net/gimpi_host.h"
#include "task/gimpi_job.h"
#include "gtap.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMO 20000                   /* the victim's and dialers' bound (ms) */
#define VICTIM 0x1001
#define DIALER0 0x2001              /* dialer i is DIALER0 + i */
#define DIALERS 20
#define SILENT_HOLD 900             /* the silent flood keeps this many connections open */
#define QUICK_HOLD 16               /* the quick flood: each closed after 16 newer ones */
#define HANDSHAKE_CAP 32            /* the victim's GIMPI_HANDSHAKE_MAX (the default) */

/*  The registry (filled before any fork): tid -> contact port on 127.0.0.1. */
typedef struct {
    int vport, vlfd;
    int dport[DIALERS], dlfd[DIALERS];
} reg_t;

/*  Opens the victim's and dialers' listeners on 127.0.0.1. */
static void s_reg_open(reg_t *reg)
{
    char err[256];
    reg->vlfd = gimpi_job_listen("127.0.0.1", &reg->vport, err, sizeof err);
    for (int i = 0; i < DIALERS; i++)
        if ((reg->dlfd[i] = gimpi_job_listen("127.0.0.1", &reg->dport[i], err, sizeof err)) < 0)
            reg->vlfd = -1;
    if (reg->vlfd < 0)
        BAIL_OUT("listen: %s", err);
}

/*  Closes them. */
static void s_reg_close(reg_t *reg)
{
    close(reg->vlfd);
    for (int i = 0; i < DIALERS; i++)
        close(reg->dlfd[i]);
}

/*  The contact port of a registered tid, or 0. */
static int s_port_of(const reg_t *reg, int tid)
{
    if (tid == VICTIM)
        return reg->vport;
    return tid >= DIALER0 && tid < DIALER0 + DIALERS ? reg->dport[tid - DIALER0] : 0;
}

/*  Resolver over the registry. */
static int s_resolve(void *arg, int tid, uint8_t addr[16], int *port)
{
    *port = s_port_of(arg, tid);
    impi_addr16_from_ipv4(addr, INADDR_LOOPBACK);
    return *port ? 0 : GIMPI_ENOTASK;
}

/*  Verifier over the registry: the tid must be there, at that contact. */
static int s_verify(void *arg, int tid, const uint8_t addr[16], int port)
{
    int want = s_port_of(arg, tid);
    if (!want)
        return GIMPI_ENOTASK;
    return port == want && impi_addr16_ipv4(addr) == INADDR_LOOPBACK ? 0 : GIMPI_EMISMATCH;
}

/*  A one-task job on listener lfd (port) with tid and the test key. */
static gimpi_msg_t *s_solo(int lfd, int port, int tid, reg_t *reg, int tmo)
{
    char err[256];
    impi_tables_t *t = gimpi_job_solo_tables(port, err, sizeof err);
    if (t)
        impi_addr16_from_ipv4(t->hosts[0].addr, INADDR_LOOPBACK);
    gimpi_msg_t *m = t ? gimpi_msg_new_local(t, 0, lfd, -1, tmo, err, sizeof err) : NULL;
    impi_tables_destroy(&t);
    if (!m) {
        fprintf(stderr, "solo: %s\n", err);
        return NULL;
    }
    gimpi_msg_set_tidbase(m, tid - 1);
    gimpi_msg_set_timeout(m, tmo);
    gimpi_msg_set_key(m, dp_key());
    gimpi_msg_set_resolver(m, s_resolve, reg);
    gimpi_msg_set_verifier(m, s_verify, reg);
    return m;
}

/*  The victim: "r" on out once set up, then the DIALERS messages (any order), then a line
 *  "got N" on out.  Exit 0 when all came. */
static int s_victim(reg_t *reg, int out)
{
    gimpi_msg_t *m = s_solo(reg->vlfd, reg->vport, VICTIM, reg, TMO);
    if (!m)
        return 1;
    gimpi_msg_set_listed(m);            /* its callers' ends are no end of its receives */
    if (write(out, "r", 1) != 1)
        return 1;
    int seen[DIALERS] = { 0 }, got = 0;
    while (got < DIALERS) {
        int v = -1;
        gimpi_status_t st;
        if (gimpi_msg_recv(m, GIMPI_ANY, 1, &v, sizeof v, &st)) {
            fprintf(stderr, "victim: recv after %d: %s\n", got, gimpi_msg_errmsg(m));
            break;
        }
        if (v >= 0 && v < DIALERS && st.source == DIALER0 + v && !seen[v]++)
            got++;
    }
    char line[32];
    int n = snprintf(line, sizeof line, "got %d\n", got);
    if (write(out, line, (size_t)n) != n)
        return 1;
    gimpi_msg_finalize(m, 2000);
    gimpi_msg_destroy(&m);
    return got == DIALERS ? 0 : 2;
}

/*  Dialer i: waits for go, sends its index to the victim (standard send), finalizes;
 *  writes "i send fin" on out. */
static int s_dialer(reg_t *reg, int i, int go, int out)
{
    gimpi_msg_t *m = s_solo(reg->dlfd[i], reg->dport[i], DIALER0 + i, reg, TMO);
    char c;
    if (!m || read(go, &c, 1) < 0)
        return 1;
    int rs = gimpi_msg_send(m, VICTIM, 1, &i, sizeof i);
    int rf = gimpi_msg_finalize(m, TMO);
    gimpi_msg_destroy(&m);
    char line[48];
    int n = snprintf(line, sizeof line, "%d %d %d\n", i, rs, rf);
    return write(out, line, (size_t)n) == n ? 0 : 1;
}

/*  The flooder: opens non-blocking connections to port on loopback as fast as it can,
 *  closing each after `hold` newer ones, until stop has a byte (or 60 s); "r" on out
 *  once `hold` are open (or after 2,000 in a quick flood), then the connections a second
 *  it reached on its line. */
static int s_flooder(int port, int hold, int stop, int out)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)hold + 64) {
        rl.rlim_cur = rl.rlim_max < (rlim_t)hold + 64 ? rl.rlim_max : (rlim_t)hold + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int *ring = calloc((size_t)hold, sizeof *ring);
    for (int k = 0; k < hold; k++)
        ring[k] = -1;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    long n = 0;
    int said = 0;
    int64_t t0 = tl_now_ms(), end = t0 + 60000;
    struct pollfd p = { .fd = stop, .events = POLLIN };
    while (tl_now_ms() < end) {
        if ((n & 63) == 0 && poll(&p, 1, 0) > 0)
            break;
        int k = (int)(n % hold);
        if (ring[k] >= 0)
            close(ring[k]);
        ring[k] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (ring[k] >= 0 && connect(ring[k], (struct sockaddr *)&sa, sizeof sa) < 0
            && errno != EINPROGRESS) {
            close(ring[k]);
            ring[k] = -1;
        }
        n += ring[k] >= 0;              /* connections made (or under way) only */
        if (!said && n >= (hold > 2000 ? hold : 2000)) {
            said = 1;
            if (write(out, "r", 1) != 1)
                return 1;
            t0 = tl_now_ms();
            n = 0;
        }
    }
    int64_t ms = tl_now_ms() - t0;
    char line[64];
    int len = snprintf(line, sizeof line, "%ld\n", ms > 0 ? n * 1000 / ms : 0);
    return write(out, line, (size_t)len) == len ? 0 : 1;
}

/*  fork() with stdio flushed first. */
static pid_t s_fork(void)
{
    fflush(NULL);
    return fork();
}

/*  One round: a flood (hold) against the victim while the dialers send.  Prints and
 *  checks the outcome. */
static void s_round(const char *name, int hold)
{
    reg_t reg;
    s_reg_open(&reg);
    int vp[2], fp[2], sp[2], gp[2], dp[2];
    if (pipe(vp) || pipe(fp) || pipe(sp) || pipe(gp) || pipe(dp))
        BAIL_OUT("setup: %s", strerror(errno));
    pid_t victim = s_fork();
    if (victim == 0)
        _exit(s_victim(&reg, vp[1]));
    close(vp[1]);
    char c, line[128];
    ok(read(vp[0], &c, 1) == 1, "%s: the victim is listening", name);
    pid_t flooder = s_fork();
    if (flooder == 0)
        _exit(s_flooder(reg.vport, hold, sp[0], fp[1]));
    close(fp[1]);
    close(sp[0]);
    ok(read(fp[0], &c, 1) == 1, "%s: the flood runs", name);
    pid_t dialers[DIALERS];
    for (int i = 0; i < DIALERS; i++)
        if ((dialers[i] = s_fork()) == 0)
            _exit(s_dialer(&reg, i, gp[0], dp[1]));
    close(dp[1]);
    close(gp[0]);
    char go[DIALERS];
    memset(go, 'g', sizeof go);
    ok(write(gp[1], go, sizeof go) == DIALERS, "%s: the dialers go", name);
    int silent = 0, failed = 0, reports = 0;
    int got = tl_read_line(vp[0], line, sizeof line, TMO + 5000) > 0
              && !strncmp(line, "got ", 4) ? atoi(line + 4) : -1;
    ok(write(sp[1], "s", 1) == 1, "%s: the flood stops", name);
    int rate = tl_read_line(fp[0], line, sizeof line, 10000) > 0 ? atoi(line) : -1;
    while (reports < DIALERS && tl_read_line(dp[0], line, sizeof line, TMO + 5000) > 0) {
        int i, rs, rf;
        if (sscanf(line, "%d %d %d", &i, &rs, &rf) != 3)
            continue;
        reports++;
        failed += rs != 0 || rf != 0;
    }
    silent = DIALERS - got - failed;
    diag("%s: %d connections a second, %d of %d messages arrived", name, rate, got, DIALERS);
    ok(reports == DIALERS, "%s: every dialer finished (%d)", name, reports);
    ok(got >= 0 && silent <= 0, "%s: no message lost silently (%d lost, %d sends failed)",
       name, DIALERS - got, failed);
    ok(got == DIALERS, "%s: every message arrived (%d of %d)", name, got, DIALERS);
    int st;
    for (int i = 0; i < DIALERS; i++)
        waitpid(dialers[i], &st, 0);
    waitpid(flooder, &st, 0);
    waitpid(victim, &st, 0);
    ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the victim finished cleanly", name);
    close(vp[0]);
    close(fp[0]);
    close(dp[0]);
    close(gp[1]);
    close(sp[1]);
    s_reg_close(&reg);
}

/*  A callee that hangs up on every caller at once, counting them on out ("n\n" at the
 *  end, once stop has a byte). */
static int s_hangup(int lfd, int stop, int out)
{
    int n = 0;
    for (;;) {
        struct pollfd p[2] = { { .fd = lfd, .events = POLLIN }, { .fd = stop, .events = POLLIN } };
        if (poll(p, 2, 30000) <= 0 || p[1].revents)
            break;
        int fd = accept(lfd, NULL, NULL);
        if (fd >= 0) {
            n++;
            close(fd);
        }
    }
    char line[32];
    int len = snprintf(line, sizeof line, "%d\n", n);
    return write(out, line, (size_t)len) == len ? 0 : 1;
}

/*  The dialer of s_test_hangup: its stderr to err, a 1.5 s connect timeout; a standard
 *  send (sync 0: it returns at once) or a synchronous one (it waits for the peer). */
static int s_hangup_dialer(reg_t *reg, int err, int sync)
{
    dup2(err, 2);
    gimpi_msg_t *m = s_solo(reg->dlfd[0], reg->dport[0], DIALER0, reg, 1500);
    int i = 7;
    int rs = !m ? -1 : sync ? gimpi_msg_ssend(m, VICTIM, 1, &i, sizeof i)
                            : gimpi_msg_send(m, VICTIM, 1, &i, sizeof i);
    int rf = m ? gimpi_msg_finalize(m, 5000) : -1;
    if (m)
        gimpi_msg_destroy(&m);
    fprintf(stderr, "done %d %d\n", rs, rf);
    return 0;
}

/*  A dialer whose callee always hangs up: calls again until its connect timeout (1.5 s),
 *  then reports the lost message on stderr (a standard send, which had returned 0), or
 *  its synchronous send fails. */
static void s_test_hangup(int sync)
{
    const char *name = sync ? "synchronous send" : "standard send";
    reg_t reg;
    s_reg_open(&reg);
    int hp[2], sp[2], ep[2];
    if (pipe(hp) || pipe(sp))
        BAIL_OUT("setup: %s", strerror(errno));
    pid_t callee = s_fork();
    if (callee == 0)
        _exit(s_hangup(reg.vlfd, sp[0], hp[1]));
    close(hp[1]);
    close(sp[0]);
    if (pipe(ep))                       /* the dialer alone writes it: EOF when it ends */
        BAIL_OUT("pipe: %s", strerror(errno));
    pid_t dialer = s_fork();
    if (dialer == 0)
        _exit(s_hangup_dialer(&reg, ep[1], sync));
    close(ep[1]);
    char log[4096];
    size_t len = tl_read_all(ep[0], log, sizeof log - 1, 15000);
    log[len] = 0;
    ok(write(sp[1], "s", 1) == 1, "%s: the hanging-up callee stops", name);
    char line[32];
    int calls = tl_read_line(hp[0], line, sizeof line, 5000) > 0 ? atoi(line) : -1;
    int st;
    waitpid(dialer, &st, 0);
    waitpid(callee, &st, 0);
    diag("hang-up, %s: %d calls; the dialer said: %s", name, calls, log);
    ok(calls >= 3, "%s: a dialer whose callee hangs up calls again (%d calls in 1.5 s)", name,
       calls);
    if (sync)
        ok(strstr(log, "every call for 1500 ms") && strstr(log, "done -")
           && !strstr(log, "are lost"), "%s: when it gives up, the send fails", name);
    else
        ok(strstr(log, "1 message(s) sent to it are lost") && strstr(log, "done 0 "),
           "%s: it returned 0; when it gives up, it says the message is lost", name);
    close(hp[0]);
    close(ep[0]);
    close(sp[1]);
    s_reg_close(&reg);
}

/*  A victim that only listens, until stop has a byte: "r" on out once set up. */
static int s_idle_victim(reg_t *reg, int out, int stop)
{
    gimpi_msg_t *m = s_solo(reg->vlfd, reg->vport, VICTIM, reg, TMO);
    char c;
    if (!m || write(out, "r", 1) != 1 || read(stop, &c, 1) != 1)
        return 1;
    gimpi_msg_destroy(&m);
    return 0;
}

/*  A blocking connection to the victim from address `from` (host order). */
static int s_connect_from(uint32_t from, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(from) };
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (fd >= 0 && (bind(fd, (struct sockaddr *)&me, sizeof me) < 0
                    || connect(fd, (struct sockaddr *)&to, sizeof to) < 0)) {
        close(fd);
        return -1;
    }
    return fd;
}

/*  Of the n connections in fds, how many the victim has closed (after its challenge, if
 *  any), waiting up to TMO for at least `want`. */
static int s_closed(int *fds, int n, int want)
{
    int closed = 0;
    int64_t end = tl_now_ms() + TMO;
    do {
        for (int i = 0; i < n; i++) {
            if (fds[i] < 0)
                continue;
            uint8_t b[64];
            ssize_t r;
            do                          /* the challenge, if any, then the end */
                r = recv(fds[i], b, sizeof b, MSG_DONTWAIT);
            while (r > 0);
            if (r == 0 || errno != EAGAIN) {
                close(fds[i]);
                fds[i] = -1;
                closed++;
            }
        }
        if (closed < want)
            usleep(10000);              /* a sweep of the flood's sockets */
    } while (closed < want && tl_now_ms() < end);
    return closed;
}

/*  Real callers (registered key holders, played by hand from 127.0.0.1) that have their
 *  challenge, then a flood of `n` connections from address `from` that send nothing
 *  (hello 0) or their HELLO and stop: once the victim has dropped all the flood beyond
 *  its caps, the real callers finish their introductions and must be accepted. */
static void s_test_evict(const char *name, uint32_t from, int hello, int n)
{
    reg_t reg;
    s_reg_open(&reg);
    int vp[2], sp[2];
    if (pipe(vp) || pipe(sp))
        BAIL_OUT("setup: %s", strerror(errno));
    pid_t victim = s_fork();
    if (victim == 0)
        _exit(s_idle_victim(&reg, vp[1], sp[0]));
    char c;
    ok(read(vp[0], &c, 1) == 1, "%s: the victim is listening", name);
    enum { REAL = 4 };
    int real[REAL], flood[n];
    uint8_t nonce[REAL][GIMPI_INTRO_NONCE];
    int challenged = 0;
    for (int i = 0; i < REAL; i++) {
        real[i] = tl_connect("127.0.0.1", reg.vport);
        challenged += real[i] >= 0
                      && dp_intro_hello(real[i], GIMPI_INTRO_VERSION, nonce[i], TMO) == 0;
    }
    ok(challenged == REAL, "%s: %d real callers have their challenge", name, challenged);
    uint8_t h[GIMPI_INTRO_HELLO_SIZE];
    gimpi_intro_hello(h);
    for (int i = 0; i < n; i++)
        if ((flood[i] = s_connect_from(from, reg.vport)) >= 0 && hello)
            tl_send_all(flood[i], h, sizeof h);
    int closed = s_closed(flood, n, n - HANDSHAKE_CAP);
    ok(closed >= n - HANDSHAKE_CAP, "%s: the victim dropped %d of %d flood connections",
       name, closed, n);
    int admitted = 0;
    for (int i = 0; i < REAL; i++) {
        gimpi_intro_t in = { .word = GIMPI_INTRO_VERSION, .tid = DIALER0 + i,
                             .target = VICTIM, .pktlen = 65536, .ackmark = 10, .hiwater = 20,
                             .port = reg.dport[i] };
        impi_addr16_from_ipv4(in.addr, INADDR_LOOPBACK);
        uint8_t intro[GIMPI_INTRO_SIZE];
        gimpi_intro_t ans;
        admitted += real[i] >= 0 && dp_intro_send(real[i], &in, dp_key(), nonce[i], intro) == 0
                    && dp_intro_answer(real[i], &ans, NULL, TMO) == GIMPI_INTRO_OK;
    }
    ok(admitted == REAL, "%s: every real caller was introduced (%d of %d)", name, admitted,
       REAL);
    ok(write(sp[1], "s", 1) == 1, "%s: the victim stops", name);
    int st;
    waitpid(victim, &st, 0);
    for (int i = 0; i < REAL; i++)
        if (real[i] >= 0)
            close(real[i]);
    for (int i = 0; i < n; i++)
        if (flood[i] >= 0)
            close(flood[i]);
    close(vp[0]);
    close(vp[1]);
    close(sp[0]);
    close(sp[1]);
    s_reg_close(&reg);
}

/*  The rounds; or, with argv "flood PORT HOLD", only a flooder of PORT until stdin has a
 *  byte or ends (its "r" and rate on stdout). */
int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc == 4 && !strcmp(argv[1], "flood"))    /* t/pvm_introflood.sh's flooder */
        return s_flooder(atoi(argv[2]), atoi(argv[3]), 0, 1);
    plan(NO_PLAN);
    s_test_evict("silent callers go first", INADDR_LOOPBACK, 0, 300);
    s_test_evict("a cap per address", INADDR_LOOPBACK + 1, 1, 300);
    s_round("silent flood", SILENT_HOLD);
    s_round("quick flood", QUICK_HOLD);
    s_test_hangup(0);
    s_test_hangup(1);
    done_testing();
}
