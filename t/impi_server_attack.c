/*  t/impi_server_attack.c — impi-server under attack by a stranger, while a real job
 *  (libgimpi's own startup client) must still finish correctly and promptly:
 *    - hundreds of idle connections (the handshake bound pushes the oldest out; the real
 *      clients join long before any handshake timeout, the server keeps few descriptors
 *      and little memory; a client that already proved the key is never pushed out);
 *    - an idle connection closed by the handshake timeout;
 *    - a stranger without the key on a KEY server (refused, cannot take a rank);
 *    - a joined client that goes silent (dropped after -timeout; the others fail with a
 *      clear message naming the missing client; the server exits 1 saying why);
 *    - 1000 refused connections while stderr is a small pipe nobody reads (rate-limited
 *      lines, the server never stalls), and an embedded server whose log pipe is full;
 *    - -bind: listening on one address only, and the warning about NONE.
 *  The stranger is a forked child that becomes `nobody` (like setpriv --reuid=nobody
 *  --regid=nogroup --clear-groups) when the test runs as root, else runs as ourselves.
 *  Every step waits for an event (a line, a closed socket, a report of the stranger),
 *  each bounded by a deadline.
 */
#include "gtap.h"
#include "server/impi_server.h"
#include "srvtest.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEY_TEXT "8214630092741650537"
#define KEY_VALUE 8214630092741650537ULL

enum {
    IDLE_CONNS = 300,           /* idle connections the stranger holds */
    FLOOD_CONNS = 1000,         /* refused connections of the log flood */
    PROMPT_MS = 8000,           /* "promptly": far below the 60 s handshake bound used */
    RSS_BOUND_KB = 4096,        /* growth of the server under the idle flood */
};

static char s_line[1024];

/* ------------------------------------------------------------------ the stranger */

typedef struct {
    pid_t pid;
    int ctl;                    /* our end of the report socket */
} stranger_t;

/*  Runs fn(port, ctl) in a forked child that has become nobody (when we are root);
 *  fn reports on ctl and returns the child's exit code.  0 or -1. */
static int stranger_start(stranger_t *st, int (*fn)(int port, int ctl), int port)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(sp[0]);
        if (geteuid() == 0) {
            struct passwd *pw = getpwnam("nobody");
            if (!pw || setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 ||
                setuid(pw->pw_uid) < 0)
                _exit(90);
        }
        alarm(60);
        _exit(fn(port, sp[1]));
    }
    close(sp[1]);
    st->pid = pid;
    st->ctl = sp[0];
    return 0;
}

/*  Ends the stranger (closing its control socket tells it to leave) and reaps it. */
static void stranger_stop(stranger_t *st)
{
    close(st->ctl);
    tl_child_t c = { .pid = st->pid, .out = -1, .err = -1 };
    tl_wait(&c, 10000);
}

/*  Blocks until the parent closes the control socket. */
static void s_wait_parent(int ctl)
{
    char c;
    while (read(ctl, &c, 1) > 0)
        ;
}

/*  Stranger: opens IDLE_CONNS connections and sends nothing; reports "R <closed>" once
 *  all but the handshake bound were closed by the server (or after 20 s). */
static int s_idle(int port, int ctl)
{
    static int fd[IDLE_CONNS];
    for (int i = 0; i < IDLE_CONNS; i++)
        if ((fd[i] = tl_connect("127.0.0.1", port)) < 0)
            return 1;
    int closed = 0;
    int64_t deadline = tl_now_ms() + 20000;
    while (closed < IDLE_CONNS - IMPI_SERVER_MAX_HANDSHAKING && tl_now_ms() < deadline) {
        closed = 0;
        for (int i = 0; i < IDLE_CONNS; i++)
            closed += tl_wait_closed(fd[i], 0);
        if (closed < IDLE_CONNS - IMPI_SERVER_MAX_HANDSHAKING) {
            struct pollfd p = { .fd = fd[0], .events = POLLIN };
            poll(&p, 1, 50);    /* bounded re-check; the server closes in bursts */
        }
    }
    dprintf(ctl, "R %d\n", closed);
    s_wait_parent(ctl);
    return 0;
}

/*  Stranger: offers KEY with a wrong key, then NONE only, on a KEY server; reports
 *  "K <closed after wrong key> <closed after NONE>". */
static int s_wrong_key(int port, int ctl)
{
    int a = tl_connect("127.0.0.1", port);
    int which = st_auth(a, 1u << IMPI_AUTH_KEY | 1u << IMPI_AUTH_NONE, 42);
    int c1 = which == IMPI_AUTH_KEY && st_join(a, 0) == 0 && tl_wait_closed(a, ST_TIMEOUT_MS);
    int b = tl_connect("127.0.0.1", port);
    int c2 = st_auth(b, 1u << IMPI_AUTH_NONE, 0) < 0 && tl_wait_closed(b, ST_TIMEOUT_MS);
    dprintf(ctl, "K %d %d\n", c1, c2);
    s_wait_parent(ctl);
    return 0;
}

/*  Stranger: FLOOD_CONNS connections, each sending a bit of garbage and closing at once;
 *  reports "F <connected>". */
static int s_flood(int port, int ctl)
{
    int n = 0;
    for (int i = 0; i < FLOOD_CONNS; i++) {
        int fd = tl_connect("127.0.0.1", port);
        if (fd < 0)
            continue;
        n++;
        (void)!write(fd, "GET / HTTP/1.0\r\n\r\n", 18);
        close(fd);
    }
    dprintf(ctl, "F %d\n", n);
    s_wait_parent(ctl);
    return 0;
}

/* ------------------------------------------------------------------ real clients */

typedef struct {
    const char *server;
    int rank;
    uint32_t mask;
    int rc;
    int64_t ms;                 /* how long the whole startup took */
    char err[512];
} real_t;

/*  Thread body: one real client through the whole startup and FINI. */
static void *s_real(void *arg)
{
    real_t *r = arg;
    int64_t t0 = tl_now_ms();
    r->rc = st_real_client(r->server, r->rank, r->mask, KEY_VALUE, ST_TIMEOUT_MS, r->err,
                           sizeof r->err);
    r->ms = tl_now_ms() - t0;
    return NULL;
}

/*  Runs n real clients (ranks 0..n-1) in threads until they end; 1 when all succeeded
 *  within PROMPT_MS each. */
static int s_real_job(const char *server, int n, uint32_t mask, const char *what)
{
    real_t r[8];
    pthread_t th[8];
    for (int i = 0; i < n; i++) {
        r[i] = (real_t){ .server = server, .rank = i, .mask = mask };
        pthread_create(&th[i], NULL, s_real, &r[i]);
    }
    int good = 1;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        if (r[i].rc != IMPI_CLIENT_OK || r[i].ms > PROMPT_MS) {
            diag("%s: client %d: rc %d after %lld ms: %s", what, i, r[i].rc,
                 (long long)r[i].ms, r[i].err);
            good = 0;
        }
    }
    return good;
}

/* ------------------------------------------------------------------ measurements */

/*  A field of /proc/PID/status in kB, or -1. */
static long s_status_kb(pid_t pid, const char *field)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strstr(buf, field);
    return p ? strtol(p + strlen(field) + 1, NULL, 10) : -1;
}

/*  Open descriptors of a process, or -1. */
static int s_count_fds(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    int n = 0;
    for (int fd = 0; fd < 4096; fd++) {
        char p[96];
        snprintf(p, sizeof p, "%s/%d", path, fd);
        n += access(p, F_OK) == 0;
    }
    return n;
}

/*  Reads the stranger's one-line report. */
static int s_report(stranger_t *st, char *buf, size_t size)
{
    return tl_read_line(st->ctl, buf, size, 30000);
}

/* ------------------------------------------------------------------ the attacks */

/*  Starts the idle stranger (s_idle) and waits for its report; the number of its
 *  connections the server closed, or -1. */
static int s_idle_flood(stranger_t *st, int port)
{
    if (stranger_start(st, s_idle, port) < 0)
        BAIL_OUT("cannot fork the stranger");
    char rep[64];
    int closed = -1;
    if (s_report(st, rep, sizeof rep) < 0 || sscanf(rep, "R %d", &closed) != 1)
        closed = -1;
    return closed;
}

/*  Hundreds of idle connections: the real clients still join at once. */
static void test_idle_flood(void)
{
    st_server_t srv;
    if (st_start(&srv, "-server", "2", "-auth", "key", "-handshake", "60", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    long rss0 = s_status_kb(srv.child.pid, "VmRSS:");
    stranger_t st;
    int closed = s_idle_flood(&st, srv.port);
    ok(closed >= IDLE_CONNS - IMPI_SERVER_MAX_HANDSHAKING,
       "stranger's %d idle connections: %d closed by the server (at most %d kept)", IDLE_CONNS,
       closed, IMPI_SERVER_MAX_HANDSHAKING);
    int fds = s_count_fds(srv.child.pid);
    cmp_ok(fds, "<=", IMPI_SERVER_MAX_HANDSHAKING + 8, "server holds %d descriptors", fds);
    long rss1 = s_status_kb(srv.child.pid, "VmRSS:");
    ok(rss0 > 0 && rss1 > 0 && rss1 - rss0 <= RSS_BOUND_KB,
       "server RSS %ld kB -> %ld kB (bound +%d kB)", rss0, rss1, RSS_BOUND_KB);
    ok(st_expect_err(&srv, "gives way", s_line, sizeof s_line) == 0,
       "eviction logged: %s", s_line);
    ok(s_real_job(srv.endpoint, 2, 1u << IMPI_AUTH_KEY, "idle flood"),
       "with the idle connections still open, both real clients finish within %d ms",
       PROMPT_MS);
    cmp_ok(st_finish(&srv), "==", 0, "server exits 0");
    stranger_stop(&st);
}

/*  A client that proved the key is not pushed out by an idle flood arriving before its
 *  IMPI join. */
static void test_authenticated_kept(void)
{
    st_server_t srv;
    if (st_start(&srv, "-server", "1", "-auth", "key", "-handshake", "60", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    int c = st_connect(&srv);
    ok(st_auth(c, 1u << IMPI_AUTH_KEY, KEY_VALUE) == IMPI_AUTH_KEY, "client authenticated");
    stranger_t st;
    int closed = s_idle_flood(&st, srv.port);
    cmp_ok(closed, ">=", IDLE_CONNS - IMPI_SERVER_MAX_HANDSHAKING,
           "stranger's idle connections pushed out (%d)", closed);
    ok(st_join(c, 0) == 0 && st_recv_impi(c) == 1, "then it joins: IMPI reply");
    ok(st_done_fini(&c, 1) == 0, "DONE");
    cmp_ok(st_finish(&srv), "==", 0, "server exits 0");
    stranger_stop(&st);
}

/*  An idle connection is closed by the handshake timeout. */
static void test_handshake_timeout(void)
{
    st_server_t srv;
    if (st_start(&srv, "-server", "1", "-auth", "key", "-handshake", "1", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    int idle = st_connect(&srv);
    int half = st_connect(&srv);
    uint8_t m[IMPI_CMD_INT4_SIZE], reply[IMPI_AUTH_REPLY_SIZE];
    impi_cmd_int4_encode(m, IMPI_CMD_AUTH, 1 << IMPI_AUTH_KEY);
    tl_send_all(half, m, sizeof m);     /* AUTH, but never the key */
    int64_t t0 = tl_now_ms();
    ok(tl_recv_exact(half, reply, sizeof reply, ST_TIMEOUT_MS) == (long)sizeof reply,
       "AUTH answered");
    int closed = tl_wait_closed(idle, ST_TIMEOUT_MS) && tl_wait_closed(half, ST_TIMEOUT_MS);
    int64_t took = tl_now_ms() - t0;
    ok(closed && took < PROMPT_MS, "silent and half-authenticated connections closed after "
       "%lld ms (-handshake 1)", (long long)took);
    ok(st_expect_err(&srv, "handshake timeout", s_line, sizeof s_line) == 0, "logged: %s", s_line);
    close(idle);
    close(half);
    ok(s_real_job(srv.endpoint, 1, 1u << IMPI_AUTH_KEY, "after timeout"), "real client served");
    cmp_ok(st_finish(&srv), "==", 0, "server exits 0");
}

/*  A stranger without the key cannot take a rank on a KEY server. */
static void test_stranger_key(void)
{
    st_server_t srv;
    if (st_start(&srv, "-server", "2", "-auth", "key", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    stranger_t st;
    if (stranger_start(&st, s_wrong_key, srv.port) < 0)
        BAIL_OUT("cannot fork the stranger");
    char rep[64] = "";
    int c1 = 0, c2 = 0;
    if (s_report(&st, rep, sizeof rep) < 0 || sscanf(rep, "K %d %d", &c1, &c2) != 2)
        c1 = c2 = 0;
    ok(c1 && c2,
       "stranger with a wrong key, and offering NONE only: both closed (%s)", rep);
    ok(st_expect_err(&srv, "wrong authentication key", s_line, sizeof s_line) == 0,
       "logged: %s", s_line);
    ok(s_real_job(srv.endpoint, 2, 1u << IMPI_AUTH_KEY, "after stranger"),
       "real clients take ranks 0 and 1 and finish");
    cmp_ok(st_finish(&srv), "==", 0, "server exits 0");
    stranger_stop(&st);
}

/*  A joined client that goes silent: dropped; the others fail with a clear message. */
static void test_silent_client(void)
{
    st_server_t srv;
    if (st_start(&srv, "-server", "3", "-auth", "key", "-timeout", "1", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    int silent = st_connect(&srv);
    ok(st_auth(silent, 1u << IMPI_AUTH_KEY, KEY_VALUE) == IMPI_AUTH_KEY && st_join(silent, 2) == 0,
       "client 2 joins, then says nothing more");
    real_t r[2];
    pthread_t th[2];
    int64_t t0 = tl_now_ms();
    for (int i = 0; i < 2; i++) {
        r[i] = (real_t){ .server = srv.endpoint, .rank = i, .mask = 1u << IMPI_AUTH_KEY };
        pthread_create(&th[i], NULL, s_real, &r[i]);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        ok(r[i].rc != IMPI_CLIENT_OK && strstr(r[i].err, "client 2 missing"),
           "client %d fails after %lld ms: %s", i, (long long)r[i].ms, r[i].err);
    }
    cmp_ok(tl_now_ms() - t0, "<", PROMPT_MS, "within the bound (-timeout 1)");
    ok(tl_wait_closed(silent, ST_TIMEOUT_MS), "the silent client's connection is closed");
    close(silent);
    ok(st_expect_err(&srv, "client 2", s_line, sizeof s_line) == 0 && strstr(s_line, "silent for"),
       "logged: %s", s_line);
    ok(st_expect_err(&srv, "the job failed", s_line, sizeof s_line) == 0, "logged: %s", s_line);
    cmp_ok(st_finish(&srv), "==", 1, "server exits 1");
}

/*  1000 refused connections while stderr is a small pipe nobody reads. */
static void test_log_flood(void)
{
    st_server_t srv;
    if (st_start(&srv, "-server", "2", "-auth", "key", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    int pipesize = fcntl(srv.child.err, F_SETPIPE_SZ, 8192);    /* 2 pages */
    note("server stderr pipe: %d bytes, never read during the flood", pipesize);
    /* client 0 joins first; the stranger's garbage is dropped before the start */
    int c0 = st_connect(&srv);
    ok(st_auth(c0, 1u << IMPI_AUTH_KEY, KEY_VALUE) == IMPI_AUTH_KEY && st_join(c0, 0) == 0,
       "client 0 joined");
    stranger_t st;
    if (stranger_start(&st, s_flood, srv.port) < 0)
        BAIL_OUT("cannot fork the stranger");
    char rep[64];
    int n = 0;
    if (s_report(&st, rep, sizeof rep) < 0 || sscanf(rep, "F %d", &n) != 1)
        n = 0;
    cmp_ok(n, "==", FLOOD_CONNS, "stranger made %d of %d connections", n, FLOOD_CONNS);
    int c1 = st_connect(&srv);
    ok(st_auth(c1, 1u << IMPI_AUTH_KEY, KEY_VALUE) == IMPI_AUTH_KEY && st_join(c1, 1) == 0 &&
       st_recv_impi(c0) == 2 && st_recv_impi(c1) == 2, "client 1 joins, both get the IMPI reply");
    stranger_stop(&st);
    /* and a second flood after the start: refused at accept */
    if (stranger_start(&st, s_flood, srv.port) < 0)
        BAIL_OUT("cannot fork the stranger");
    if (s_report(&st, rep, sizeof rep) < 0 || sscanf(rep, "F %d", &n) != 1)
        n = 0;
    cmp_ok(n, "==", FLOOD_CONNS, "stranger made %d more connections after the start", n);
    int fds[2] = { c0, c1 };
    ok(st_done_fini(fds, 2) == 0, "server still serves the job: DONE to both");
    stranger_stop(&st);
    /* everything it wrote fits the small pipe: few lines, with a summary */
    static char text[65536];
    size_t len = tl_read_all(srv.child.err, text, sizeof text, ST_TIMEOUT_MS);
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    cmp_ok(lines, "<", 100, "%d stderr lines for %d refused connections", lines, 2 * FLOOD_CONNS);
    const char *sum = strstr(text, "more connections refused or dropped in the last second");
    ok(sum != NULL, "summary line present");
    if (!sum)
        diag("stderr: %s", text);
    cmp_ok(st_finish(&srv), "==", 0, "server exits 0");
}

/*  Embedded server whose log is a full pipe: it keeps serving; lines are counted lost and
 *  reported once the pipe has room again. */
static void test_full_log(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        BAIL_OUT("pipe");
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    static char fill[65536];
    memset(fill, 'x', sizeof fill);
    size_t filled = 0;
    ssize_t w;
    while ((w = write(p[1], fill, sizeof fill)) > 0)
        filled += (size_t)w;
    fcntl(p[1], F_SETFL, 0);    /* the server gets a blocking descriptor, as stderr is */
    FILE *log = fdopen(p[1], "w");
    impi_server_t *s = impi_server_new(1, "127.0.0.1", 0, IMPI_SERVER_AUTH_NONE, 0, log);
    st_runner_t r = { .server = s, .rc = -1 };
    pthread_t th;
    pthread_create(&th, NULL, st_run_server, &r);
    char ep[64];
    snprintf(ep, sizeof ep, "%s", impi_server_endpoint(s));
    char host[64];
    int port;
    tl_parse_addr(ep, host, sizeof host, &port);
    int closed = 0;
    for (int i = 0; i < 20; i++) {      /* each is logged (or would be) */
        int fd = tl_connect(host, port);
        tl_send_all(fd, "garbage!garbage!", 16);
        closed += tl_wait_closed(fd, ST_TIMEOUT_MS);
        close(fd);
    }
    cmp_ok(closed, "==", 20, "log pipe full (%zu bytes): 20 bad connections still closed", filled);
    /* make room, then one more bad connection: the note about lost lines comes out */
    static char buf[65536];
    size_t drained = 0;
    while (drained < filled) {
        long n = read(p[0], buf, sizeof buf);
        if (n <= 0)
            break;
        drained += (size_t)n;
    }
    int fd = tl_connect(host, port);
    tl_send_all(fd, "garbage!garbage!", 16);
    tl_wait_closed(fd, ST_TIMEOUT_MS);
    close(fd);
    int found = 0;
    while (!found && tl_read_line(p[0], s_line, sizeof s_line, 5000) >= 0)
        found = strstr(s_line, "log lines lost") != NULL;
    ok(found, "reported once there is room: %s", found ? s_line : "(nothing)");
    char err[512] = "";
    err[0] = '\0';
    ok(st_real_client(ep, 0, 1u << IMPI_AUTH_NONE, 0, ST_TIMEOUT_MS, err, sizeof err) ==
       IMPI_CLIENT_OK, "the real client finishes %s", err);
    pthread_join(th, NULL);
    cmp_ok(r.rc, "==", 0, "impi_server_run returns 0");
    impi_server_destroy(&s);
    fclose(log);
    close(p[0]);
}

/*  -bind: listens only on the given address; -host is what it prints. */
static void test_bind(void)
{
    st_server_t srv;
    if (st_start(&srv, "-server", "1", "-auth", "key", "-bind", "127.0.0.2", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%d", srv.port);
    is(srv.endpoint, want, "-host 127.0.0.1 -bind 127.0.0.2 prints the -host address");
    int fd = tl_connect("127.0.0.1", srv.port);
    ok(fd < 0, "nothing listens on 127.0.0.1:%d", srv.port);
    if (fd >= 0)
        close(fd);
    char ep[64];
    snprintf(ep, sizeof ep, "127.0.0.2:%d", srv.port);
    char err[512] = "";
    ok(st_real_client(ep, 0, 1u << IMPI_AUTH_KEY, KEY_VALUE, ST_TIMEOUT_MS, err, sizeof err) ==
       IMPI_CLIENT_OK, "the real client joins at 127.0.0.2 and finishes %s", err);
    cmp_ok(st_finish(&srv), "==", 0, "server exits 0");

    if (st_start(&srv, "-server", "1", "-auth", "none", "-bind", "0.0.0.0", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    ok(st_expect_err(&srv, "warning: authentication NONE", s_line, sizeof s_line) == 0,
       "NONE on every interface warns: %s", s_line);
    ok(st_real_client(srv.endpoint, 0, 1u << IMPI_AUTH_NONE, 0, ST_TIMEOUT_MS, err, sizeof err) ==
       IMPI_CLIENT_OK, "the real client finishes %s", err);
    cmp_ok(st_finish(&srv), "==", 0, "server exits 0");
}

int main(void)
{
    plan(NO_PLAN);
    signal(SIGPIPE, SIG_IGN);
    setenv("IMPI_AUTH_KEY", KEY_TEXT, 1);
    if (geteuid() != 0)
        note("not root: the stranger runs as our own user");
    test_idle_flood();
    test_authenticated_kept();
    test_handshake_timeout();
    test_stranger_key();
    test_silent_client();
    test_log_flood();
    test_full_log();
    test_bind();
    done_testing();
}
