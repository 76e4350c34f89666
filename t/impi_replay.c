/*  t/impi_replay.c — a captured startup does not open a later job (issue #25, points 1
 *  and 5): job A runs the real impi-server and libgimpi's real client through a relay
 *  that records every byte the client sends; job B is a fresh impi-server of the same
 *  user.  A stranger who replays job A's AUTH and proof, or presents the KEY that every
 *  job of the user used to accept (the derived one, as a real client with IMPI_AUTH_KEY
 *  set), or a real client with another key file (told to compare fingerprints), is
 *  refused at once, and job B's real client is then served and the job ends
 *  with exit 0.  Before the per-connection proof, the derived KEY opened every job.
 */
#include "gtap.h"
#include "srvtest.h"
#include "base/gimpi_key.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  A one-connection TCP relay on the loopback that records what the client sends. */
typedef struct {
    int listen_fd;
    int port;
    st_server_t *to;
    uint8_t sent[4096];         /* the client's bytes, in order */
    size_t nsent;
} relay_t;

/*  Copies what is readable on from to to; records it when rec is not NULL.  0, or -1
 *  when from is closed. */
static int s_pump(int from, int to, relay_t *rec)
{
    uint8_t buf[4096];
    ssize_t r = read(from, buf, sizeof buf);
    if (r <= 0)
        return -1;
    if (rec) {
        size_t room = sizeof rec->sent - rec->nsent;
        size_t n = (size_t)r < room ? (size_t)r : room;
        memcpy(rec->sent + rec->nsent, buf, n);
        rec->nsent += n;
    }
    return tl_send_all(to, buf, (size_t)r) < 0 ? -1 : 0;
}

/*  Thread body: accepts one client, connects it to the server, relays both ways until
 *  either side closes (bounded by ST_TIMEOUT_MS). */
static void *s_relay(void *arg)
{
    relay_t *r = arg;
    struct pollfd p = { .fd = r->listen_fd, .events = POLLIN };
    if (poll(&p, 1, ST_TIMEOUT_MS) != 1)
        return NULL;
    int c = accept(r->listen_fd, NULL, NULL);
    int s = st_connect(r->to);
    int64_t end = tl_now_ms() + ST_TIMEOUT_MS;
    while (c >= 0 && s >= 0 && tl_now_ms() < end) {
        struct pollfd fds[2] = { { .fd = c, .events = POLLIN }, { .fd = s, .events = POLLIN } };
        if (poll(fds, 2, 200) < 0)
            break;
        if (fds[0].revents && s_pump(c, s, r) < 0)
            break;
        if (fds[1].revents && s_pump(s, c, NULL) < 0)
            break;
    }
    if (c >= 0)
        close(c);
    if (s >= 0)
        close(s);
    return NULL;
}

/*  A listening socket on 127.0.0.1, any port. */
static int s_listen(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 4) < 0
        || getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        BAIL_OUT("relay socket");
    *port = ntohs(sa.sin_port);
    return fd;
}

/*  Job A through the relay; returns the client's recorded bytes in *r. */
static void s_job_a(relay_t *r)
{
    st_server_t srv;
    unsetenv("IMPI_AUTH_KEY");
    unsetenv("IMPI_AUTH_NONE");
    if (st_start(&srv, "-server", "1", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    memset(r, 0, sizeof *r);
    r->to = &srv;
    r->listen_fd = s_listen(&r->port);
    pthread_t th;
    if (pthread_create(&th, NULL, s_relay, r) != 0)
        BAIL_OUT("thread");
    char via[64], err[512];
    snprintf(via, sizeof via, "127.0.0.1:%d", r->port);
    uint32_t mask;
    uint64_t key;
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == 0
       && mask == (1u << IMPI_AUTH_GIMPI | 1u << IMPI_AUTH_GIMPI_JOB),
       "a gimpi client offers GIMPI and GIMPI_JOB alone by default");
    cmp_ok(st_real_client(via, 0, mask, key, ST_TIMEOUT_MS, err, sizeof err), "==",
           IMPI_CLIENT_OK, "job A: the real client through the recording relay: %s", err);
    pthread_join(th, NULL);
    close(r->listen_fd);
    cmp_ok(st_finish(&srv), "==", 0, "job A's server exits 0");
    ok(r->nsent >= IMPI_CMD_INT4_SIZE + IMPI_AUTH_PROOF_SIZE + IMPI_CMD_INT4_SIZE,
       "job A's startup captured (%zu bytes from the client)", r->nsent);
}

/*  Job B: the captured AUTH and proof, then the derived KEY from a real client, are
 *  refused; B's own real client is served. */
static void s_job_b(const relay_t *r)
{
    st_server_t srv;
    char line[512], err[512];
    if (st_start(&srv, "-server", "1", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    int x = st_connect(&srv);
    /* AUTH, proof, IMPI(0) exactly as job A's client sent them */
    size_t n = IMPI_CMD_INT4_SIZE + IMPI_AUTH_PROOF_SIZE + IMPI_CMD_INT4_SIZE;
    uint8_t reply[IMPI_AUTH_REPLY_SIZE + IMPI_AUTH_NONCE_SIZE];
    tl_send_all(x, r->sent, IMPI_CMD_INT4_SIZE);
    ok(tl_recv_exact(x, reply, sizeof reply, ST_TIMEOUT_MS) == (long)sizeof reply,
       "replayed AUTH: the server sends a challenge of its own");
    tl_send_all(x, r->sent + IMPI_CMD_INT4_SIZE, n - IMPI_CMD_INT4_SIZE);
    ok(tl_wait_closed(x, ST_TIMEOUT_MS), "job A's proof replayed in job B: closed");
    close(x);
    ok(st_expect_err(&srv, "wrong proof", line, sizeof line) == 0, "stderr: %s", line);

    gimpi_key_t gk;
    if (gimpi_key_default(&gk, NULL, 0, err, sizeof err) < 0)
        BAIL_OUT("no gimpi key: %s", err);
    uint64_t derived = gimpi_key_impi(&gk);
    gimpi_key_wipe(&gk, sizeof gk);
    int rc = st_real_client(srv.endpoint, 0, 1u << IMPI_AUTH_KEY, derived, ST_TIMEOUT_MS, err,
                            sizeof err);
    ok(rc != IMPI_CLIENT_OK, "a real client with the derived KEY (what every job used to take) "
       "is refused: %s", err);
    ok(st_expect_err(&srv, "no common authentication method", line, sizeof line) == 0,
       "stderr: %s", line);
    /* a real client whose key file differs: its proof is refused, and it says what to check */
    char dir[] = "/tmp/gimpi-replay-XXXXXX", file[64];
    if (!mkdtemp(dir))
        BAIL_OUT("mkdtemp");
    snprintf(file, sizeof file, "%s/key", dir);
    if (gimpi_key_load_or_create(&gk, file, err, sizeof err) < 0)
        BAIL_OUT("%s", err);
    setenv("GIMPI_KEY_FILE", file, 1);
    rc = st_real_client(srv.endpoint, 0, 1u << IMPI_AUTH_GIMPI, 0, ST_TIMEOUT_MS, err,
                        sizeof err);
    unsetenv("GIMPI_KEY_FILE");
    unlink(file);
    rmdir(dir);
    ok(rc != IMPI_CLIENT_OK && strstr(err, "fingerprint"),
       "a client with another key file is refused and told what to compare: %s", err);
    ok(st_expect_err(&srv, "wrong proof", line, sizeof line) == 0, "stderr: %s", line);
    err[0] = 0;
    cmp_ok(st_real_client(srv.endpoint, 0, 1u << IMPI_AUTH_GIMPI, 0, ST_TIMEOUT_MS, err,
                          sizeof err), "==", IMPI_CLIENT_OK,
           "job B's real client is served after them: %s", err);
    cmp_ok(st_finish(&srv), "==", 0, "job B's server exits 0");
}

int main(void)
{
    plan(NO_PLAN);
    relay_t r;
    s_job_a(&r);
    s_job_b(&r);
    done_testing();
}
