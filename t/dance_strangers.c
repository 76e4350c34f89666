/*  t/dance_strangers.c — strangers at a task's fresh listener while the hosts of a job meet
 *  (libgimpi/net/gimpi_host.c, the dance): callers that connect and close, send part of a
 *  rank, a bogus rank, a duplicate rank, nothing at all, or come in a crowd or a flood;
 *  another user (setpriv as nobody) who finds the port in /proc/net/tcp and claims the
 *  real hosts' ranks over TCP and over the local twin; the connect-and-close race over and
 *  over; and (with "netns NS", run by t/dance_netns.sh) callers from another network
 *  namespace.  In every case a real job of three hosts meets, exchanges messages and
 *  finishes; the stranger sees its connections closed; host 0's log names the refusals,
 *  at most GIMPI_DANCE_LOG_PER_SEC lines a second plus summary lines.
 *
 *  Everything is ordered by events: host 0 (the one attacked) starts the stranger and
 *  meets at once; the stranger releases hosts 1 and 2 (a pipe each) when its own
 *  connections are in host 0's backlog (or later, as its case needs), and learns from a
 *  third pipe when each host has met.  The stranger is this program again ("stranger
 *  CASE ..."), started through setpriv and/or `ip netns exec` where the case says.
 */
#include "dp_harness.h"
#include "dance_lib.h"
#include "net/gimpi_host.h"
#include "gtap.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define TMO 20000               /* bound on every wait, ms */
#define NHOSTS 3
#define FD_GO1 3                /* the stranger's descriptors: releases host 1 */
#define FD_GO2 4                /* releases host 2 */
#define FD_MET 5                /* reads the ranks of the hosts that have met */
#define HOLD_MAX 64             /* connections a hammering stranger keeps open */

/*  One job: what the stranger does and how it is started, and what host 0 must log. */
typedef struct {
    const char *stranger;       /* the stranger's case */
    int nobody;                 /* the stranger runs as nobody (setpriv) */
    const char *netns;          /* the stranger runs in this network namespace */
    int tcp_only;               /* no local listeners: the hosts meet over TCP */
    uint32_t base_addr;         /* host 0's address (0: 127.0.0.1) */
    const char *rank_ms;        /* GIMPI_DANCE_RANK_MS for host 0, or NULL */
    int max_dance_ms;           /* host 0's meeting must take less (0: no bound) */
    const char *want[3];        /* substrings host 0's log must hold */
    int refused;                /* refusals the log must account for (-1: any) */
    int go[3][2];               /* pipes: go[1], go[2] release hosts 1, 2; go[0] = met */
    char log[64];               /* host 0's standard error */
} job_t;

/*  The stranger's command line: [ip netns exec NS] [setpriv ...] self stranger CASE
 *  ADDR0 PORT0 ADDR1 ADDR2; returns argv (static strings and the buffers given). */
static void s_stranger_argv(const job_t *j, const impi_tables_t *t, char *const *addr,
                            char *port, char *self, const char **argv)
{
    int n = 0;
    if (j->netns) {
        argv[n++] = "ip";
        argv[n++] = "netns";
        argv[n++] = "exec";
        argv[n++] = j->netns;
    }
    if (j->nobody) {
        argv[n++] = "setpriv";
        argv[n++] = "--reuid=nobody";
        argv[n++] = "--regid=nogroup";
        argv[n++] = "--clear-groups";
    }
    argv[n++] = self;
    argv[n++] = "stranger";
    argv[n++] = j->stranger;
    argv[n++] = addr[0];
    snprintf(port, 16, "%d", t->hosts[0].port);
    argv[n++] = port;
    argv[n++] = addr[1];
    argv[n++] = addr[2];
    argv[n] = NULL;
}

/*  Starts the stranger with the release and met pipes on FD_GO1, FD_GO2, FD_MET. */
static pid_t s_start_stranger(const job_t *j, const impi_tables_t *t)
{
    char a[3][48], port[16], self[512];
    char *addr[3] = { a[0], a[1], a[2] };
    for (int i = 0; i < 3; i++)
        impi_addr16_format(t->hosts[i].addr, a[i], sizeof a[i]);
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0)
        return -1;
    self[sl] = '\0';
    const char *argv[24];
    s_stranger_argv(j, t, addr, port, self, argv);
    pid_t pid = fork();
    if (pid == 0) {
        int hi[3] = { fcntl(j->go[1][1], F_DUPFD, 10), fcntl(j->go[2][1], F_DUPFD, 10),
                      fcntl(j->go[0][0], F_DUPFD, 10) };
        dup2(hi[0], FD_GO1);
        dup2(hi[1], FD_GO2);
        dup2(hi[2], FD_MET);
        execvp(argv[0], (char *const *)argv);
        fprintf(stderr, "# cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    return pid;
}

/*  Waits until fd is readable (or closed) within TMO and reads one byte; 0 or -1. */
static int s_await_byte(int fd, uint8_t *b)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    return poll(&p, 1, TMO) == 1 && read(fd, b, 1) == 1 ? 0 : -1;
}

/*  Meets the others (dp_open), tells the stranger, and exchanges a message with every
 *  other host.  0, or 1 with a message. */
static int s_meet_and_talk(const job_t *j, const impi_tables_t *t, int rank, int lfd,
                           int64_t *dance_ms)
{
    int64_t t0 = tl_now_ms();
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    if (dance_ms)
        *dance_ms = tl_now_ms() - t0;
    uint8_t me = (uint8_t)rank;
    if (write(j->go[0][1], &me, 1) != 1)
        return dp_fail(rank, "telling the stranger");
    for (int r = 0; r < t->nprocs; r++)
        if (r != rank && gimpi_msg_send(ctx, gimpi_msg_tid(ctx, r), 5, &rank, sizeof rank))
            return dp_fail(rank, "send to %d: %s", r, gimpi_msg_errmsg(ctx));
    for (int r = 0; r < t->nprocs; r++) {
        if (r == rank)
            continue;
        int v = -1;
        gimpi_status_t st;
        if (gimpi_msg_recv(ctx, gimpi_msg_tid(ctx, r), 5, &v, sizeof v, &st) || v != r)
            return dp_fail(rank, "message from %d: %d (%s)", r, v, gimpi_msg_errmsg(ctx));
    }
    return dp_close(&ctx) ? 1 : 0;
}

/*  A task of the job: host 0 starts the stranger, logs into j->log and meets at once;
 *  hosts 1 and 2 wait until the stranger releases them. */
static int s_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    const job_t *j = arg;
    if (rank != 0) {
        uint8_t b;
        if (s_await_byte(j->go[rank][0], &b) < 0)
            return dp_fail(rank, "the stranger never released us");
        return s_meet_and_talk(j, t, rank, lfd, NULL);
    }
    int logfd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (logfd < 0)
        return dp_fail(rank, "log %s: %s", j->log, strerror(errno));
    if (j->rank_ms)
        setenv("GIMPI_DANCE_RANK_MS", j->rank_ms, 1);
    tl_child_t st = { .pid = s_start_stranger(j, t), .out = -1, .err = -1 };
    if (st.pid < 0)
        return dp_fail(rank, "cannot start the stranger");
    fflush(stderr);
    dup2(logfd, 2);
    close(logfd);
    int64_t ms = 0;
    int rc = s_meet_and_talk(j, t, rank, lfd, &ms);
    if (rc == 0 && j->max_dance_ms && ms >= j->max_dance_ms)
        rc = dp_fail(rank, "the meeting took %lld ms, more than %d", (long long)ms,
                     j->max_dance_ms);
    int ws = tl_wait(&st, TMO);
    if (!(ws >= 0 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0))
        rc = dp_fail(rank, "the stranger (%s) saw something wrong (status %d)", j->stranger, ws);
    return rc;
}

/*  Checks host 0's log: every wanted line there, and the refusals accounted for by the
 *  lines plus the summaries, at most GIMPI_DANCE_LOG_PER_SEC lines per summary window.
 *  1 when all is well, else 0 with diagnostics. */
static int s_check_log(const job_t *j)
{
    char buf[1 << 16] = "";
    FILE *f = fopen(j->log, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    int good = 1;
    for (int k = 0; k < 3 && j->want[k]; k++)
        if (!strstr(buf, j->want[k])) {
            diag("host 0 did not log '%s'", j->want[k]);
            good = 0;
        }
    long lines = 0, more = 0, summaries = 0;
    for (char *p = buf; (p = strstr(p, "gimpi[host 0]: ")); p++) {
        int m;
        if (strncmp(p + 15, "refused a caller", 16) == 0)
            lines++;
        else if (sscanf(p + 15, "%d more callers refused in the last second", &m) == 1) {
            more += m;
            summaries++;
        }
    }
    if (lines > GIMPI_DANCE_LOG_PER_SEC * (summaries + 1)) {
        diag("%ld refusal lines with %ld summaries: not rate-limited", lines, summaries);
        good = 0;
    }
    if (j->refused >= 0 && lines + more != j->refused) {
        diag("refusals logged %ld + %ld more, expected %d", lines, more, j->refused);
        good = 0;
    }
    if (!good)
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
            diag("  %s", line);
    return good;
}

/*  Runs one job against a stranger; returns 1 when the job finished and the log is right. */
static int s_run(job_t *j)
{
    for (int k = 0; k < 3; k++)
        if (pipe2(j->go[k], O_CLOEXEC) < 0)
            BAIL_OUT("pipe: %s", strerror(errno));
    snprintf(j->log, sizeof j->log, "/tmp/dance_strangers.%d.log", (int)getpid());
    dp_opts_t o = { NHOSTS, 1024, 10, 20, 60000, 0, 0, j->tcp_only };
    int codes[NHOSTS];
    int rc = dp_run_at(&o, j->base_addr ? j->base_addr : 0x7f000001u, s_body, j, codes);
    for (int k = 0; k < 3; k++) {
        close(j->go[k][0]);
        close(j->go[k][1]);
    }
    if (rc) {
        for (int i = 0; i < NHOSTS; i++)
            diag("  host %d exit code %d", i, codes[i]);
        char cmd[300];
        snprintf(cmd, sizeof cmd, "sed 's/^/#   log: /' %s | grep -v 'refused a caller' | head -20",
                 j->log);
        if (system(cmd) != 0)
            diag("  (no log)");
    }
    int good = s_check_log(j) && rc == 0;
    unlink(j->log);
    return good;
}

/* ------------------------------------------------------------------ the stranger */

/*  A TCP connection to to:port, from address `from` when that is ours (else the kernel
 *  chooses), or -1. */
static int s_call(const char *from, const char *to, int port)
{
    return dance_call(from, to, port, 0);
}

/*  A connection to the local twin of to:port (the abstract name gimpi_host.c uses), or
 *  -1 when there is none. */
static int s_call_local(const char *to, int port)
{
    struct sockaddr_un su = { .sun_family = AF_UNIX };
    int n = snprintf(su.sun_path + 1, sizeof su.sun_path - 1, "gimpi-host/%s:%d", to, port);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&su,
                           (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n))
                   < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/*  Sends a rank (len of its 4 bytes) on fd. */
static int s_send_rank(int fd, uint32_t rank, size_t len)
{
    uint8_t b[4];
    gimpi_be_put32(b, rank);
    return tl_send_all(fd, b, len);
}

/*  Releases host r (1 or 2). */
static void s_release(int r)
{
    uint8_t b = 1;
    if (write(r == 1 ? FD_GO1 : FD_GO2, &b, 1) != 1)
        fprintf(stderr, "# stranger: cannot release host %d\n", r);
}

/*  Reads the met pipe without waiting longer than wait_ms; marks met[r] for each rank
 *  read.  Returns how many hosts have met so far. */
static int s_met(int *met, int wait_ms)
{
    struct pollfd p = { .fd = FD_MET, .events = POLLIN };
    uint8_t b;
    while (poll(&p, 1, wait_ms) == 1 && read(FD_MET, &b, 1) == 1) {
        if (b < NHOSTS)
            met[b] = 1;
        wait_ms = 0;
    }
    return met[0] + met[1] + met[2];
}

/*  1 when host 0 closed every connection in fds[0..n-1] (each given TMO). */
static int s_all_closed(const int *fds, int n)
{
    int good = 1;
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0 && tl_wait_closed(fds[i], TMO) != 1) {
            fprintf(stderr, "# stranger: connection %d of %d stayed open\n", i, n);
            good = 0;
        }
    return good;
}

/*  1 when /proc/net/tcp shows a listener on addr:port, as another user watching for new
 *  listeners sees it. */
static int s_sees_listener(const char *addr, int port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    char line[256];
    struct in_addr want;
    int seen = 0;
    if (!f || inet_pton(AF_INET, addr, &want) != 1) {
        if (f)
            fclose(f);
        return 0;
    }
    while (!seen && fgets(line, sizeof line, f)) {
        unsigned a, p, st;
        if (sscanf(line, " %*d: %X:%X %*X:%*X %X", &a, &p, &st) == 3)
            seen = a == want.s_addr && (int)p == port && st == 0x0A;
    }
    fclose(f);
    return seen;
}

/*  Keeps a connection open among at most HOLD_MAX (the oldest is closed). */
static void s_hold(int *held, int *nheld, int fd)
{
    if (fd < 0)
        return;
    if (*nheld == HOLD_MAX) {
        close(held[0]);
        memmove(held, held + 1, sizeof *held * (HOLD_MAX - 1));
        (*nheld)--;
    }
    held[(*nheld)++] = fd;
}

/*  Calls host 0 over and over until every host has met: connect-and-close, half a rank,
 *  an out-of-range rank; with claim, also the real hosts' ranks from their addresses,
 *  kept open.  Returns 0. */
static int s_hammer(char **a, int port, int claim)
{
    int met[NHOSTS] = { 0 }, held[HOLD_MAX], nheld = 0;
    long calls = 0;
    s_release(1);
    s_release(2);
    while (s_met(met, 0) < NHOSTS) {
        int k = (int)(calls++ % (claim ? 5 : 3));
        int fd = s_call(a[k == 1 ? 0 : k == 4 ? 2 : 1], a[0], port);
        if (fd < 0)
            continue;
        if (k >= 2)                         /* 7: out of range; 1, 2: the real hosts' */
            s_send_rank(fd, k == 2 ? 7 : (uint32_t)(k - 2), 4);
        if (k >= 3)
            s_hold(held, &nheld, fd);
        else
            close(fd);
    }
    fprintf(stderr, "# stranger: %ld calls while the hosts met\n", calls);
    while (nheld)
        close(held[--nheld]);
    return 0;
}

/*  The stranger: argv = CASE ADDR0 PORT0 ADDR1 ADDR2.  Exit 0 when it saw what a
 *  stranger should see (every connection it kept closed by host 0). */
static int s_stranger(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    const char *what = argv[0];
    char *a[3] = { argv[1], argv[3], argv[4] };
    int port = atoi(argv[2]);
    int fds[128], n = 0;
    int met[NHOSTS] = { 0 };
    if (!strcmp(what, "close")) {           /* from a caller's address, and from another */
        close(s_call(a[1], a[0], port));
        close(s_call(a[0], a[0], port));
    } else if (!strcmp(what, "partial")) {
        fds[n] = s_call(a[1], a[0], port);
        s_send_rank(fds[n], 1, 2);
        shutdown(fds[n++], SHUT_WR);
    } else if (!strcmp(what, "bogus")) {    /* too high, our own, host 1's from host 2 */
        uint32_t rank[3] = { 7, 0, 1 };
        for (int k = 0; k < 3; k++) {
            fds[n] = s_call(a[k == 2 ? 2 : 1], a[0], port);
            s_send_rank(fds[n++], rank[k], 4);
        }
    } else if (!strcmp(what, "dup")) {      /* host 2's rank after host 2 met */
        s_release(2);
        for (int64_t end = tl_now_ms() + TMO; !met[2] && tl_now_ms() < end;)
            s_met(met, TMO);
        if (!met[2])
            return 1;
        fds[n] = s_call(a[2], a[0], port);
        s_send_rank(fds[n++], 2, 4);
        s_release(1);
        return s_all_closed(fds, n) ? 0 : 1;
    } else if (!strcmp(what, "silent")) {
        fds[n++] = s_call(a[1], a[0], port);
    } else if (!strcmp(what, "slow")) {     /* silent until host 0 gives up on it */
        fds[n] = s_call(a[1], a[0], port);
        if (!s_all_closed(fds, ++n))
            return 1;
    } else if (!strcmp(what, "crowd")) {
        for (n = 0; n < 100; n++)
            fds[n] = s_call(a[1], a[0], port);
    } else if (!strcmp(what, "flood")) {
        for (int k = 0; k < 200; k++)
            close(s_call(a[1], a[0], port));
    } else if (!strcmp(what, "nobody") || !strcmp(what, "claim")) {
        /* claims the real ranks; "nobody" on this machine first finds the port */
        if (what[0] == 'n' && !s_sees_listener(a[0], port)) {
            fprintf(stderr, "# stranger: no listener %s:%d in /proc/net/tcp\n", a[0], port);
            return 1;
        }
        for (int k = 1; k <= 2; k++) {
            fds[n] = s_call(a[k], a[0], port);
            s_send_rank(fds[n++], (uint32_t)k, 4);
        }
        int loc = s_call_local(a[0], port);
        if (loc >= 0) {
            s_send_rank(loc, 1, 4);
            fds[n++] = loc;
        }
        close(s_call(a[1], a[0], port));
    } else if (!strcmp(what, "hammer") || !strcmp(what, "hammer-claim")) {
        return s_hammer(a, port, what[6] == '-');
    } else {
        return 2;
    }
    for (int k = 0; k < n; k++)
        if (fds[k] < 0) {
            fprintf(stderr, "# stranger: call %d failed: %s\n", k, strerror(errno));
            return 1;
        }
    s_release(1);
    s_release(2);
    return s_all_closed(fds, n) ? 0 : 1;
}

/* ------------------------------------------------------------------ the cases */

/*  Runs a job n times; ok when all n pass. */
static void s_case(const char *name, job_t j, int times)
{
    int bad = 0;
    for (int k = 0; k < times; k++)
        if (!s_run(&j))
            bad++;
    ok(bad == 0, "%s%s: the real job meets and talks (%d of %d failed)", name,
       j.tcp_only ? " (TCP)" : "", bad, times);
}

/*  The cases on one machine: hosts on 127.0.0.1-3, strangers of our own user and nobody. */
static void s_local_cases(void)
{
    for (int tcp = 1; tcp >= 0; tcp--) {
        s_case("connect-and-close", (job_t){ .stranger = "close", .tcp_only = tcp,
               .want = { "hung up after 0 of the 4 bytes",
                         "not the address of a host that calls us" }, .refused = 2 }, 1);
        s_case("half a rank, then hang-up", (job_t){ .stranger = "partial", .tcp_only = tcp,
               .want = { "hung up after 2 of the 4 bytes" }, .refused = 1 }, 1);
        s_case("bogus ranks", (job_t){ .stranger = "bogus", .tcp_only = tcp,
               .want = { "announced rank 7, expected 1..2", "announced rank 0, expected",
                         "announced rank 1, whose address is 127.0.0.2" }, .refused = 3 }, 1);
        s_case("a duplicate rank after the real host", (job_t){ .stranger = "dup",
               .tcp_only = tcp, .want = { "announced rank 2, which is connected already" },
               .refused = 1 }, 1);
    }
    s_case("a silent caller does not hold up the meeting", (job_t){ .stranger = "silent",
           .tcp_only = 1, .max_dance_ms = GIMPI_DANCE_RANK_MS,
           .want = { "sent no rank before every host had met" }, .refused = 1 }, 1);
    s_case("a silent caller is closed after GIMPI_DANCE_RANK_MS", (job_t){ .stranger = "slow",
           .tcp_only = 1, .rank_ms = "300", .want = { "sent no rank within 300 ms" },
           .refused = 1 }, 1);
    s_case("100 silent callers before the real hosts", (job_t){ .stranger = "crowd",
           .tcp_only = 1, .want = { "dropped to make room" }, .refused = 100 }, 1);
    s_case("200 connect-and-close: log rate-limited", (job_t){ .stranger = "flood",
           .tcp_only = 1, .want = { "more callers refused in the last second" },
           .refused = 200 }, 1);
    s_case("the connect-and-close race, 50 jobs", (job_t){ .stranger = "hammer",
           .tcp_only = 1, .refused = -1 }, 50);
    if (geteuid() != 0) {
        skip(1, 3, "setpriv needs root");
        end_skip;
        return;
    }
    for (int tcp = 1; tcp >= 0; tcp--)
        s_case("nobody watching /proc/net/tcp claims the ranks first", (job_t){
               .stranger = "nobody", .nobody = 1, .tcp_only = tcp,
               .want = { "runs under another user (uid 65534)" }, .refused = tcp ? 3 : 4 }, 1);
    s_case("nobody claiming ranks in the race, 20 jobs", (job_t){ .stranger = "hammer-claim",
           .nobody = 1, .tcp_only = 1, .refused = -1 }, 20);
}

/*  The cases from another network namespace ns; the hosts on 192.0.2.1-3 (t/dance_netns.sh
 *  makes both). */
static void s_netns_cases(char *ns)
{
    const uint32_t base = 0xC0000201;     /* 192.0.2.1 */
    const char *far = "not the address of a host that calls us";
    s_case("from another namespace: connect-and-close", (job_t){ .stranger = "close",
           .netns = ns, .tcp_only = 1, .base_addr = base, .want = { far }, .refused = 2 }, 1);
    s_case("from another namespace: bogus ranks", (job_t){ .stranger = "bogus", .netns = ns,
           .tcp_only = 1, .base_addr = base, .want = { far }, .refused = 3 }, 1);
    s_case("from another namespace: silent", (job_t){ .stranger = "silent", .netns = ns,
           .tcp_only = 1, .base_addr = base, .want = { far }, .refused = 1 }, 1);
    s_case("from another namespace as nobody, claiming ranks", (job_t){ .stranger = "claim",
           .nobody = 1, .netns = ns, .tcp_only = 1, .base_addr = base, .want = { far },
           .refused = 3 }, 1);
    s_case("from another namespace: the race, 20 jobs", (job_t){ .stranger = "hammer-claim",
           .netns = ns, .tcp_only = 1, .base_addr = base, .refused = -1 }, 20);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "stranger"))
        return s_stranger(argc - 2, argv + 2);
    plan(NO_PLAN);
    if (argc > 2 && !strcmp(argv[1], "netns"))
        s_netns_cases(argv[2]);
    else
        s_local_cases();
    done_testing();
}
