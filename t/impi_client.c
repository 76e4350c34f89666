/*  t/impi_client.c — tests of the IMPI startup client (libgimpi/impi/impi_client.c) against
 *  servers played in this test: a minimal correct server (threads, raw sockets) for the
 *  happy path with 1–3 clients, KEY authentication and skipped unknown labels, and lying
 *  servers: an unknown AUTH method, nclients 0 or 33, a mask that disagrees with the
 *  payload, a truncated reply, a connection closed mid-COLL, a header claiming 2^31
 *  bytes, a server that never answers (bounded by a short deadline), and more.  The last
 *  part runs examples/impi-startup against the minimal server.  Every wait is bounded.
 */
#include "gtap.h"
#include "impi/impi_client.h"
#include "base/gimpi_key.h"
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define T_MS 20000              /* bound of every wait that only matters on failure */

/* ------------------------------------------------------------------ the played server */

typedef enum {
    S_GOOD,             /* a correct server for `nclients` lock-step clients */
    S_AUTH_UNKNOWN,     /* AUTH reply with method 7 */
    S_AUTH_NOT_OFFERED, /* chooses KEY although the client offered NONE only */
    S_AUTH_CLOSE,       /* closes instead of answering AUTH */
    S_NCLIENTS_0,       /* IMPI reply nclients 0 */
    S_NCLIENTS_33,      /* IMPI reply nclients 33 */
    S_RANK_BEYOND,      /* IMPI reply nclients 1 to client 1 */
    S_SILENT_AUTH,      /* never answers AUTH */
    S_SILENT_IMPI,      /* never answers IMPI (other clients never come) */
    S_SILENT_COLL,      /* never answers the 5th label */
    S_HUGE,             /* a COLL reply header claiming 2^31 bytes */
    S_MASK_LEN,         /* NHOSTS reply with mask 0x1 and 8 bytes of data */
    S_MASK_MISSING,     /* nclients 2, VERSION reply with mask 0x1 */
    S_TRUNCATED,        /* a reply header claiming 20 bytes, 6 sent, then close */
    S_CLOSE_MID,        /* closes after answering 3 labels */
    S_DONE_EARLY,       /* DONE instead of the first COLL reply */
    S_WRONG_LABEL,      /* the reply for H_PORT instead of C_NHOSTS */
    S_BAD_COMMAND,      /* an unknown command instead of the IMPI reply */
    S_LIE_NPROCS,       /* NPROCS reply says 5 where the client said 1 */
    S_UNKNOWN_LABELS,   /* correct, with replies for unknown labels interleaved */
    S_KEY,              /* correct, chooses KEY and records the key */
} scenario_t;

typedef struct {
    scenario_t scenario;
    int nclients;
    int lfd;
    int port;
    pthread_t thread;
    /* what the server saw */
    uint64_t key;
    int finis;                  /* FINI commands received */
    int dones;
    int joined;                 /* thread already joined */
    char error[256];            /* the server's own failure, "" if none */
} server_t;

/*  Records the server's failure (first one wins). */
static void s_srv_fail(server_t *s, const char *what)
{
    if (!s->error[0])
        snprintf(s->error, sizeof s->error, "%s", what);
}

/*  Reads one command into buf (payload up to cap); 0 or -1. */
static int s_srv_recv(int fd, int32_t *cmd, uint8_t *buf, size_t cap, uint32_t *len)
{
    uint8_t h[8];
    if (tl_recv_exact(fd, h, 8, T_MS) != 8)
        return -1;
    *cmd = (int32_t)gimpi_be_get32(h);
    *len = gimpi_be_get32(h + 4);
    if (*len > cap)
        return -1;
    if (*len && tl_recv_exact(fd, buf, *len, T_MS) != (long)*len)
        return -1;
    return 0;
}

/*  Sends a header and payload. */
static int s_srv_send(int fd, int32_t cmd, const void *payload, uint32_t len)
{
    uint8_t h[8];
    impi_cmd_encode(h, cmd, len);
    if (tl_send_all(fd, h, 8) < 0)
        return -1;
    return len ? tl_send_all(fd, payload, len) : 0;
}

/*  Sends a COLL reply: label, mask, data. */
static int s_srv_reply(int fd, int32_t label, uint32_t mask, const void *data, uint32_t len)
{
    uint8_t h[16];
    impi_coll_reply_header(h, label, mask, len);
    if (tl_send_all(fd, h, 16) < 0)
        return -1;
    return len ? tl_send_all(fd, data, len) : 0;
}

/*  Accepts one connection within the bound. */
static int s_srv_accept(server_t *s)
{
    struct pollfd p = { .fd = s->lfd, .events = POLLIN };
    if (poll(&p, 1, T_MS) != 1)
        return -1;
    int fd = accept(s->lfd, NULL, NULL);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/*  AUTH: reads the mask, answers with `which` (KEY: reads the key). */
static int s_srv_auth(server_t *s, int fd, int32_t which)
{
    int32_t cmd;
    uint32_t len;
    uint8_t buf[64];
    if (s_srv_recv(fd, &cmd, buf, sizeof buf, &len) < 0 || cmd != IMPI_CMD_AUTH || len != 4)
        return -1;
    uint8_t r[8];
    impi_auth_reply_encode(r, which, which == IMPI_AUTH_KEY ? 8 : 0);
    if (tl_send_all(fd, r, 8) < 0)
        return -1;
    if (which == IMPI_AUTH_KEY) {
        if (tl_recv_exact(fd, buf, 8, T_MS) != 8)
            return -1;
        s->key = gimpi_be_get64(buf);
    }
    return 0;
}

/*  Reads IMPI + rank; returns the rank or -1. */
static int s_srv_rank(int fd)
{
    int32_t cmd;
    uint32_t len;
    uint8_t buf[64];
    if (s_srv_recv(fd, &cmd, buf, sizeof buf, &len) < 0 || cmd != IMPI_CMD_IMPI || len != 4)
        return -1;
    return (int)gimpi_be_get32(buf);
}

/*  Sends the IMPI reply. */
static int s_srv_nclients(int fd, int32_t n)
{
    uint8_t p[4];
    gimpi_be_put32(p, (uint32_t)n);
    return s_srv_send(fd, IMPI_CMD_IMPI, p, 4);
}

/*  The correct server for nclients lock-step clients: reads one command from each client
 *  per round (they are blocked on the reply, so round-robin reading cannot deadlock),
 *  concatenates COLL payloads by rank, answers DONE when all sent DONE, then waits for
 *  FINI from everyone. */
static void s_srv_good(server_t *s)
{
    int fds[IMPI_MAX_CLIENTS], byrank[IMPI_MAX_CLIENTS];
    int n = s->nclients;
    for (int i = 0; i < n; i++)
        fds[i] = byrank[i] = -1;
    static uint8_t bufs[3][1 << 16];
    uint8_t *cat = malloc(3 << 16);
    for (int i = 0; i < n; i++) {
        fds[i] = s_srv_accept(s);
        int32_t which = s->scenario == S_KEY ? IMPI_AUTH_KEY : IMPI_AUTH_NONE;
        int rank = fds[i] < 0 || s_srv_auth(s, fds[i], which) < 0 ? -1 : s_srv_rank(fds[i]);
        if (rank < 0 || rank >= n || byrank[rank] >= 0) {
            s_srv_fail(s, "join failed");
            goto out;
        }
        byrank[rank] = fds[i];
    }
    for (int r = 0; r < n; r++)
        s_srv_nclients(byrank[r], n);
    for (int round = 0;; round++) {
        int32_t cmd[3], label = 0;
        uint32_t len[3];
        int ndone = 0;
        for (int r = 0; r < n; r++) {
            if (s_srv_recv(byrank[r], &cmd[r], bufs[r], sizeof bufs[r], &len[r]) < 0) {
                s_srv_fail(s, "a client vanished mid-COLL");
                goto out;
            }
            ndone += cmd[r] == IMPI_CMD_DONE;
            if (cmd[r] == IMPI_CMD_COLL)
                label = (int32_t)gimpi_be_get32(bufs[r]);
        }
        if (s->scenario == S_UNKNOWN_LABELS)
            for (int r = 0; r < n; r++)
                s_srv_reply(byrank[r], 0x7000 + round, 0x1, "abcd", 4);
        if (ndone == n) {
            s->dones = n;
            for (int r = 0; r < n; r++)
                s_srv_send(byrank[r], IMPI_CMD_DONE, NULL, 0);
            break;
        }
        size_t off = 0;
        for (int r = 0; r < n; r++) {
            if (cmd[r] != IMPI_CMD_COLL || (int32_t)gimpi_be_get32(bufs[r]) != label) {
                s_srv_fail(s, "clients not in lock-step");
                goto out;
            }
            memcpy(cat + off, bufs[r] + 4, len[r] - 4);
            off += len[r] - 4;
        }
        for (int r = 0; r < n; r++)
            s_srv_reply(byrank[r], label, (1u << n) - 1, cat, (uint32_t)off);
    }
    for (int r = 0; r < n; r++) {
        int32_t cmd;
        uint32_t len;
        uint8_t buf[16];
        if (s_srv_recv(byrank[r], &cmd, buf, sizeof buf, &len) == 0 && cmd == IMPI_CMD_FINI)
            s->finis++;
    }
out:
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(cat);
}

/*  Echoes COLL payloads back as a one-client server would, for `count` labels (-1: all),
 *  replacing the reply of label `lie` by the bytes in lie_data (label+mask+data). */
static int s_srv_echo(int fd, int count, int32_t lie, const uint8_t *lie_data, size_t lie_len)
{
    static uint8_t buf[1 << 16];
    for (int i = 0; count < 0 || i < count; i++) {
        int32_t cmd;
        uint32_t len;
        if (s_srv_recv(fd, &cmd, buf, sizeof buf, &len) < 0)
            return -1;
        if (cmd == IMPI_CMD_DONE)
            return s_srv_send(fd, IMPI_CMD_DONE, NULL, 0);
        int32_t label = (int32_t)gimpi_be_get32(buf);
        if (label == lie) {
            uint8_t h[8];
            impi_cmd_encode(h, IMPI_CMD_COLL, (uint32_t)lie_len);
            tl_send_all(fd, h, 8);
            tl_send_all(fd, lie_data, lie_len);
        } else {
            s_srv_reply(fd, label, 0x1, buf + 4, len - 4);
        }
    }
    return 0;
}

/*  One client, one scripted lie. */
static void s_srv_liar(server_t *s)
{
    int fd = s_srv_accept(s);
    if (fd < 0) {
        s_srv_fail(s, "no client came");
        return;
    }
    uint8_t buf[64];
    int32_t cmd;
    uint32_t len;
    switch (s->scenario) {
    case S_AUTH_UNKNOWN:
        s_srv_auth(s, fd, 7);
        break;
    case S_AUTH_NOT_OFFERED:
        s_srv_auth(s, fd, IMPI_AUTH_KEY);
        break;
    case S_AUTH_CLOSE:
        s_srv_recv(fd, &cmd, buf, sizeof buf, &len);
        close(fd);
        return;
    case S_SILENT_AUTH:
        s_srv_recv(fd, &cmd, buf, sizeof buf, &len);
        break;
    default:
        if (s_srv_auth(s, fd, IMPI_AUTH_NONE) < 0 || s_srv_rank(fd) < 0) {
            s_srv_fail(s, "AUTH/IMPI failed");
            break;
        }
        switch (s->scenario) {
        case S_NCLIENTS_0: s_srv_nclients(fd, 0); break;
        case S_NCLIENTS_33: s_srv_nclients(fd, 33); break;
        case S_RANK_BEYOND: s_srv_nclients(fd, 1); break;
        case S_SILENT_IMPI: break;
        case S_BAD_COMMAND: s_srv_send(fd, 0x58585858, "abcd", 4); break;
        case S_MASK_MISSING:
            s_srv_nclients(fd, 2);
            s_srv_echo(fd, -1, -1, NULL, 0);
            break;
        default:
            s_srv_nclients(fd, 1);
            break;
        }
        switch (s->scenario) {
        case S_SILENT_COLL:
            s_srv_echo(fd, 4, -1, NULL, 0);
            break;
        case S_HUGE: {
            s_srv_recv(fd, &cmd, buf, sizeof buf, &len);
            uint8_t h[8];
            impi_cmd_encode(h, IMPI_CMD_COLL, 0x80000000u);
            tl_send_all(fd, h, 8);
            break;
        }
        case S_MASK_LEN: {
            uint8_t lie[16];
            gimpi_be_put32(lie, IMPI_C_NHOSTS);
            gimpi_be_put32(lie + 4, 0x1);
            gimpi_be_put32(lie + 8, 1);
            gimpi_be_put32(lie + 12, 1);
            s_srv_echo(fd, -1, IMPI_C_NHOSTS, lie, sizeof lie);
            break;
        }
        case S_TRUNCATED: {
            s_srv_recv(fd, &cmd, buf, sizeof buf, &len);
            uint8_t h[14];
            impi_cmd_encode(h, IMPI_CMD_COLL, 20);
            gimpi_be_put32(h + 8, IMPI_C_VERSION);
            h[12] = h[13] = 0;
            tl_send_all(fd, h, sizeof h);
            close(fd);
            return;
        }
        case S_CLOSE_MID:
            s_srv_echo(fd, 3, -1, NULL, 0);
            s_srv_recv(fd, &cmd, buf, sizeof buf, &len);
            close(fd);
            return;
        case S_DONE_EARLY:
            s_srv_recv(fd, &cmd, buf, sizeof buf, &len);
            s_srv_send(fd, IMPI_CMD_DONE, NULL, 0);
            break;
        case S_WRONG_LABEL: {
            uint8_t lie[12];
            gimpi_be_put32(lie, IMPI_H_PORT);
            gimpi_be_put32(lie + 4, 0x1);
            gimpi_be_put32(lie + 8, 5000);
            s_srv_echo(fd, -1, IMPI_C_NHOSTS, lie, sizeof lie);
            break;
        }
        case S_LIE_NPROCS: {
            uint8_t lie[12];
            gimpi_be_put32(lie, IMPI_C_NPROCS);
            gimpi_be_put32(lie + 4, 0x1);
            gimpi_be_put32(lie + 8, 5);
            s_srv_echo(fd, -1, IMPI_C_NPROCS, lie, sizeof lie);
            break;
        }
        default:
            break;
        }
    }
    /* stay until the client has gone, so the client sees the lie, not a close */
    tl_wait_closed(fd, T_MS);
    close(fd);
}

/*  Thread body. */
static void *s_srv_main(void *arg)
{
    server_t *s = arg;
    if (s->scenario == S_GOOD || s->scenario == S_UNKNOWN_LABELS || s->scenario == S_KEY)
        s_srv_good(s);
    else
        s_srv_liar(s);
    return NULL;
}

/*  Listens on 127.0.0.1 (before the thread starts: no race) and starts the server. */
static server_t *s_srv_start(scenario_t scenario, int nclients)
{
    server_t *s = calloc(1, sizeof *s);
    s->scenario = scenario;
    s->nclients = nclients;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7F000001) };
    socklen_t sl = sizeof sa;
    if (bind(s->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s->lfd, 32) < 0
        || getsockname(s->lfd, (struct sockaddr *)&sa, &sl) < 0)
        BAIL_OUT("cannot listen: %s", strerror(errno));
    s->port = ntohs(sa.sin_port);
    pthread_create(&s->thread, NULL, s_srv_main, s);
    return s;
}

/*  Joins the server thread (it is bounded by its own deadlines) and frees it. */
static void s_srv_stop(server_t **s_p)
{
    server_t *s = *s_p;
    if (!s->joined)
        pthread_join(s->thread, NULL);
    close(s->lfd);
    free(s);
    *s_p = NULL;
}

/* ------------------------------------------------------------------ clients */

/*  A one-host, nprocs-proc client description (storage inside). */
typedef struct {
    impi_desc_t desc;
    impi_desc_host_t hosts[2];
    impi_proc_t procs[4];
} client_desc_t;

static void s_desc(client_desc_t *d, int rank, int nhosts, int procs_per_host)
{
    memset(d, 0, sizeof *d);
    d->desc = (impi_desc_t){ .rank = rank, .nversions = 1, .datalen = 65536 - 1000 * rank,
                             .tagub = 0x7fffffff, .xsize = -1, .maxlinear = -1,
                             .nhosts = nhosts, .hosts = d->hosts,
                             .nprocs = nhosts * procs_per_host, .procs = d->procs };
    if (rank > 0) {
        d->desc.nversions = 2;
        d->desc.versions[1][1] = 1;
    }
    for (int h = 0; h < nhosts; h++) {
        impi_addr16_from_ipv4(d->hosts[h].addr, 0x7F000001u + (uint32_t)h);
        d->hosts[h].port = 9000 + 10 * rank + h;
        d->hosts[h].nprocs = procs_per_host;
        d->hosts[h].ackmark = 10;
        d->hosts[h].hiwater = 20 - (uint32_t)rank;
        for (int k = 0; k < procs_per_host; k++) {
            impi_proc_t *p = &d->procs[h * procs_per_host + k];
            memcpy(p->hostid, d->hosts[h].addr, 16);
            p->pid = 100 * rank + k;
        }
    }
}

/*  A client run in a thread for the multi-client happy path. */
typedef struct {
    char server[64];
    client_desc_t d;
    int rc;
    char err[512];
    impi_tables_t *tables;
    int fini_rc;
} client_run_t;

static void *s_client_main(void *arg)
{
    client_run_t *c = arg;
    impi_client_t *client = impi_client_new(c->server, T_MS);
    impi_client_set_auth(client, 0x1, 0);
    c->rc = impi_client_start(client, &c->d.desc, c->err, sizeof c->err);
    if (c->rc == 0) {
        c->tables = impi_client_take_tables(client);
        c->fini_rc = impi_client_fini(client, c->err, sizeof c->err);
    }
    impi_client_destroy(&client);
    return NULL;
}

/*  Runs one client against a liar; checks the code, the message and the time taken. */
static void s_liar(scenario_t scenario, int timeout_ms, int rank, int want_rc,
                   const char *want_msg, const char *what)
{
    server_t *s = s_srv_start(scenario, 1);
    char server[64];
    snprintf(server, sizeof server, "127.0.0.1:%d", s->port);
    impi_client_t *client = impi_client_new(server, timeout_ms);
    impi_client_set_auth(client, 0x1, 0);
    client_desc_t d;
    s_desc(&d, rank, 1, 1);
    char err[512] = "";
    int64_t t0 = tl_now_ms();
    int rc = impi_client_start(client, &d.desc, err, sizeof err);
    int64_t took = tl_now_ms() - t0;
    int good = rc == want_rc && strstr(err, want_msg) != NULL;
    ok(good, "%s -> %s", what, impi_client_strerror(want_rc));
    if (!good)
        diag("  got %d (%s) \"%s\", wanted %d and \"%s\"", rc, impi_client_strerror(rc), err,
             want_rc, want_msg);
    else
        note("  %s", err);
    ok(took < timeout_ms + 5000, "  ... within its deadline (%lld ms)", (long long)took);
    ok(impi_client_fd(client) == -1 && impi_client_tables(client) == NULL,
       "  ... connection closed, no tables");
    ok(impi_client_fini(client, err, sizeof err) == IMPI_CLIENT_ERR_USAGE,
       "  ... FINI after a failure is a usage error");
    impi_client_destroy(&client);
    s_srv_stop(&s);
}

/* ------------------------------------------------------------------ tests */

/*  Three clients through the correct server: the tables agree. */
static void test_happy_three(void)
{
    server_t *s = s_srv_start(S_GOOD, 3);
    client_run_t c[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        memset(&c[i], 0, sizeof c[i]);
        snprintf(c[i].server, sizeof c[i].server, "127.0.0.1:%d", s->port);
        s_desc(&c[i].d, i, i == 0 ? 2 : 1, i + 1);
        pthread_create(&th[i], NULL, s_client_main, &c[i]);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    s_srv_stop(&s);
    int good = 1;
    for (int i = 0; i < 3; i++) {
        good &= c[i].rc == 0 && c[i].fini_rc == 0;
        if (c[i].rc || c[i].fini_rc)
            diag("client %d: %s", i, c[i].err);
    }
    ok(good, "3 clients complete the startup and FINI");
    impi_tables_t *t = c[1].tables;
    if (good) {
        ok(t->nclients == 3 && t->nhosts == 4 && t->nprocs == 2 * 1 + 2 + 3,
           "3 clients, 4 hosts, 7 procs");
        cmp_ok(t->pktlen, "==", 65536 - 2000, "pktlen = minimum DATALEN");
        cmp_ok(t->hiwater, "==", 18, "hiwater = minimum");
        ok(t->pair_version[1 * 3 + 2][1] == 1 && t->pair_version[0 * 3 + 2][1] == 0,
           "pair versions: 0.1 between clients 1 and 2, 0.0 with client 0");
        ok(t->hosts[2].client == 1 && t->hosts[2].port == 9010 && t->hosts[3].first_proc == 4
           && t->procs[6].host == 3 && t->procs[6].id.pid == 202, "host and world ranks");
        ok(memcmp(c[0].tables->procs, c[2].tables->procs, 7 * sizeof *t->procs) == 0
           && memcmp(c[0].tables->hosts, c[1].tables->hosts, 4 * sizeof *t->hosts) == 0,
           "every client agreed the same tables");
        ok(c[0].tables->myclient == 0 && c[2].tables->myclient == 2, "each knows its rank");
    }
    for (int i = 0; i < 3; i++)
        impi_tables_destroy(&c[i].tables);
}

/*  One client: unknown labels skipped, KEY sent, FINI seen, accessors. */
static void test_happy_one(void)
{
    server_t *s = s_srv_start(S_UNKNOWN_LABELS, 1);
    char server[64], err[512] = "";
    snprintf(server, sizeof server, "127.0.0.1:%d", s->port);
    impi_client_t *client = impi_client_new(server, T_MS);
    impi_client_set_auth(client, 0x1, 0);
    client_desc_t d;
    s_desc(&d, 0, 2, 2);
    cmp_ok(impi_client_nclients(client), "==", -1, "nclients unknown before join");
    int rc = impi_client_start(client, &d.desc, err, sizeof err);
    ok(rc == 0, "replies for unknown labels skipped, also before DONE (%s)", err);
    cmp_ok(impi_client_nclients(client), "==", 1, "nclients after join");
    ok(impi_client_fd(client) >= 0, "connection kept open between DONE and FINI");
    const impi_tables_t *t = impi_client_tables(client);
    ok(t && t->nprocs == 4 && t->nhosts == 2 && t->procs[3].id.pid == 1 && t->procs[3].host == 1,
       "one client's tables");
    ok(impi_client_start(client, &d.desc, err, sizeof err) == IMPI_CLIENT_ERR_USAGE,
       "a second start is a usage error: %s", err);
    ok(impi_client_fini(client, err, sizeof err) == 0, "FINI");
    ok(impi_client_fd(client) == -1, "closed after FINI");
    impi_client_destroy(&client);
    ok(client == NULL, "destroy nulls the pointer");
    s_srv_stop(&s);

    s = s_srv_start(S_KEY, 1);
    snprintf(server, sizeof server, "127.0.0.1:%d", s->port);
    client = impi_client_new(server, T_MS);
    impi_client_set_auth(client, 0x3, 18446744073709551557ull);
    err[0] = '\0';
    rc = impi_client_start(client, &d.desc, err, sizeof err);
    ok(rc == 0, "KEY authentication (%s)", err);
    impi_client_fini(client, err, sizeof err);
    impi_client_destroy(&client);
    pthread_join(s->thread, NULL);
    s->joined = 1;
    ok(s->key == 18446744073709551557ull, "the server received the 64-bit key, big-endian");
    ok(s->finis == 1 && s->error[0] == '\0', "the server saw FINI (%s)", s->error);
    s_srv_stop(&s);
}

/*  The environment's AUTH convention, and addresses that cannot work. */
static void test_auth_env(void)
{
    uint32_t mask;
    uint64_t key;
    char err[256];
    unsetenv("IMPI_AUTH_NONE");
    unsetenv("IMPI_AUTH_KEY");
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == 0
       && mask == (1u << IMPI_AUTH_GIMPI | 1u << IMPI_AUTH_GIMPI_JOB) && key == 0,
       "neither variable set: GIMPI and GIMPI_JOB, the proof of the gimpi key (the derived "
       "KEY never unasked)");
    const char *xdg = getenv("XDG_RUNTIME_DIR"), *home = getenv("HOME");
    char *saved_xdg = xdg ? strdup(xdg) : NULL, *saved_home = home ? strdup(home) : NULL;
    setenv("XDG_RUNTIME_DIR", "/nonexistent/dir", 1);
    setenv("HOME", "/nonexistent", 1);
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == IMPI_CLIENT_ERR_AUTH
       && strstr(err, "IMPI_AUTH_KEY"), "no gimpi key either: an error naming the way out: %s",
       err);
    if (saved_xdg)
        setenv("XDG_RUNTIME_DIR", saved_xdg, 1);
    else
        unsetenv("XDG_RUNTIME_DIR");
    if (saved_home)
        setenv("HOME", saved_home, 1);
    free(saved_xdg);
    free(saved_home);
    setenv("IMPI_AUTH_NONE", "", 1);
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == 0 && mask == 0x1,
       "IMPI_AUTH_NONE -> 0x1");
    setenv("IMPI_AUTH_KEY", "12345678901234567890", 1);
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == 0 && mask == 0x3
       && key == 12345678901234567890ull, "IMPI_AUTH_KEY -> 0x2 and the key");
    setenv("IMPI_AUTH_KEY", "12ab", 1);
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == IMPI_CLIENT_ERR_AUTH,
       "IMPI_AUTH_KEY=12ab refused: %s", err);
    setenv("IMPI_AUTH_KEY", "99999999999999999999", 1);
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == IMPI_CLIENT_ERR_AUTH,
       "a key beyond 64 bits refused");
    setenv("IMPI_AUTH_KEY", "-1", 1);   /* what LAM's atoll() reads: the signed form */
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == 0 && key == UINT64_MAX,
       "IMPI_AUTH_KEY=-1 (signed, as LAM reads it) -> all 64 bits set");
    setenv("IMPI_AUTH_KEY", "-9223372036854775808", 1);
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == 0 && key == 1ull << 63,
       "IMPI_AUTH_KEY=-2^63 -> bit 63 alone");
    setenv("IMPI_AUTH_KEY", "-9223372036854775809", 1);
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == IMPI_CLIENT_ERR_AUTH,
       "a key below -2^63 refused");
    setenv("IMPI_AUTH_KEY", "+5", 1);
    ok(impi_client_auth_from_env(&mask, &key, err, sizeof err) == IMPI_CLIENT_ERR_AUTH,
       "a plus sign refused");
    unsetenv("IMPI_AUTH_KEY");
    unsetenv("IMPI_AUTH_NONE");

    /* a bad mask: refused before connecting (nobody listens on port 1) */
    char server[64];
    client_desc_t d;
    s_desc(&d, 0, 1, 1);
    impi_client_t *client = impi_client_new("127.0.0.1:1", T_MS);
    impi_client_set_auth(client, 0x4, 0);
    ok(impi_client_start(client, &d.desc, err, sizeof err) == IMPI_CLIENT_ERR_AUTH
       && strstr(err, "none of"), "a mask without NONE, KEY or GIMPI -> error: %s", err);
    impi_client_destroy(&client);
    server_t *s;

    /* bad addresses */
    static const char *bad[] = { "nocolon", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:99999",
                                 ":5000" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        client = impi_client_new(bad[i], 2000);
        impi_client_set_auth(client, 0x1, 0);
        ok(impi_client_start(client, &d.desc, err, sizeof err) == IMPI_CLIENT_ERR_CONNECT,
           "server \"%s\" -> connect error: %s", bad[i], err);
        impi_client_destroy(&client);
    }
    /* a port nobody listens on */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7F000001) };
    socklen_t sl = sizeof sa;
    bind(fd, (struct sockaddr *)&sa, sizeof sa);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    snprintf(server, sizeof server, "127.0.0.1:%d", ntohs(sa.sin_port));
    close(fd);
    client = impi_client_new(server, T_MS);
    impi_client_set_auth(client, 0x1, 0);
    ok(impi_client_start(client, &d.desc, err, sizeof err) == IMPI_CLIENT_ERR_CONNECT
       && strstr(err, "refused"), "connection refused -> connect error: %s", err);
    impi_client_destroy(&client);
    /* a description that does not add up is refused before connecting */
    d.desc.nprocs = 2;
    client = impi_client_new(server, T_MS);
    ok(impi_client_start(client, &d.desc, err, sizeof err) == IMPI_CLIENT_ERR_USAGE
       && strstr(err, "add up"), "bad description -> usage error: %s", err);
    impi_client_destroy(&client);

    setenv("GIMPI_STARTUP_TIMEOUT", "0.3", 1);
    s = s_srv_start(S_SILENT_AUTH, 1);
    snprintf(server, sizeof server, "127.0.0.1:%d", s->port);
    client = impi_client_new(server, 0);
    impi_client_set_auth(client, 0x1, 0);
    s_desc(&d, 0, 1, 1);
    int64_t t0 = tl_now_ms();
    int rc = impi_client_start(client, &d.desc, err, sizeof err);
    int64_t took = tl_now_ms() - t0;
    ok(rc == IMPI_CLIENT_ERR_TIMEOUT && strstr(err, "300 ms") && took < 5000,
       "GIMPI_STARTUP_TIMEOUT=0.3 is the deadline (%lld ms): %s", (long long)took, err);
    impi_client_destroy(&client);
    s_srv_stop(&s);
    unsetenv("GIMPI_STARTUP_TIMEOUT");
}

/*  Servers that lie, close or keep silent. */
static void test_liars(void)
{
    s_liar(S_AUTH_UNKNOWN, T_MS, 0, IMPI_CLIENT_ERR_AUTH, "method 7", "AUTH reply method 7");
    s_liar(S_AUTH_NOT_OFFERED, T_MS, 0, IMPI_CLIENT_ERR_AUTH, "did not offer",
           "AUTH reply choosing KEY when only NONE was offered");
    s_liar(S_AUTH_CLOSE, T_MS, 0, IMPI_CLIENT_ERR_CLOSED, "instead of answering AUTH",
           "server closing at AUTH");
    s_liar(S_NCLIENTS_0, T_MS, 0, IMPI_CLIENT_ERR_PROTOCOL, "announced 0 clients",
           "IMPI reply nclients 0");
    s_liar(S_NCLIENTS_33, T_MS, 0, IMPI_CLIENT_ERR_PROTOCOL, "announced 33 clients",
           "IMPI reply nclients 33");
    s_liar(S_RANK_BEYOND, T_MS, 1, IMPI_CLIENT_ERR_PROTOCOL, "this client has rank 1",
           "IMPI reply nclients 1 to client 1");
    s_liar(S_BAD_COMMAND, T_MS, 0, IMPI_CLIENT_ERR_PROTOCOL, "unknown command 0x58585858",
           "unknown command instead of the IMPI reply");
    s_liar(S_HUGE, T_MS, 0, IMPI_CLIENT_ERR_PROTOCOL, "2147483648 bytes",
           "COLL reply header claiming 2^31 bytes");
    s_liar(S_MASK_LEN, T_MS, 0, IMPI_CLIENT_ERR_TABLES, "IMPI_C_NHOSTS reply: 8 data bytes do "
           "not match mask 0x1", "mask and payload length disagree");
    s_liar(S_MASK_MISSING, T_MS, 0, IMPI_CLIENT_ERR_TABLES, "client 1 missing from mask 0x1",
           "mask missing a client of a mandatory label");
    s_liar(S_TRUNCATED, T_MS, 0, IMPI_CLIENT_ERR_CLOSED, "6 of 20 bytes",
           "truncated reply then close");
    s_liar(S_CLOSE_MID, T_MS, 0, IMPI_CLIENT_ERR_CLOSED, "COLL reply for IMPI_C_DATALEN",
           "connection closed mid-COLL");
    s_liar(S_DONE_EARLY, T_MS, 0, IMPI_CLIENT_ERR_PROTOCOL, "sent DONE",
           "DONE instead of a COLL reply");
    s_liar(S_WRONG_LABEL, T_MS, 0, IMPI_CLIENT_ERR_PROTOCOL, "sent a reply for IMPI_H_PORT",
           "a reply for a label not yet sent");
    s_liar(S_LIE_NPROCS, T_MS, 0, IMPI_CLIENT_ERR_TABLES, "IMPI_P_IPV6 reply",
           "NPROCS echoed as 5 for a 1-proc client");
    s_liar(S_SILENT_AUTH, 300, 0, IMPI_CLIENT_ERR_TIMEOUT, "within 300 ms",
           "server never answering AUTH");
    s_liar(S_SILENT_IMPI, 300, 0, IMPI_CLIENT_ERR_TIMEOUT, "the IMPI reply",
           "server never answering IMPI");
    s_liar(S_SILENT_COLL, 300, 0, IMPI_CLIENT_ERR_TIMEOUT, "COLL reply for IMPI_C_TAGUB",
           "server never answering a COLL");
}

/*  examples/impi-startup against the correct server, and its error paths. */
static void test_program(void)
{
    setenv("IMPI_AUTH_NONE", "1", 1);
    server_t *s = s_srv_start(S_GOOD, 2);
    char server[64];
    snprintf(server, sizeof server, "127.0.0.1:%d", s->port);
    char prog[4096];
    snprintf(prog, sizeof prog, "%s", tl_prog("examples/impi-startup"));
    char saved[64];
    snprintf(saved, sizeof saved, "/tmp/gimpi-t-impi-client-%d.tables", (int)getpid());
    char *argv0[] = { prog, "-client", "0", server, "-hosts", "2", "-procs", "2",
                      "-datalen", "8000", "-versions", "0.0,0.1", "-save", saved, NULL };
    char *argv1[] = { prog, "-client", "1", server, "-port", "6000", "-addr", "10.1.2.3",
                      "-hiwater", "15", "-xsize", "1024", NULL };
    tl_child_t c0, c1;
    ok(tl_spawn(argv0, &c0) == 0 && tl_spawn(argv1, &c1) == 0, "two impi-startup started");
    static char out0[65536], out1[65536], err0[4096], err1[4096];
    tl_read_all(c0.out, out0, sizeof out0, T_MS);
    tl_read_all(c1.out, out1, sizeof out1, T_MS);
    tl_read_all(c0.err, err0, sizeof err0, T_MS);
    tl_read_all(c1.err, err1, sizeof err1, T_MS);
    int st0 = tl_wait(&c0, T_MS), st1 = tl_wait(&c1, T_MS);
    tl_child_close(&c0);
    tl_child_close(&c1);
    s_srv_stop(&s);
    ok(st0 == 0 && st1 == 0, "both exit 0");
    if (st0 || st1)
        diag("stderr: %s / %s", err0, err1);
    ok(strstr(out0, "IMPI job: 2 clients, 3 hosts, 5 procs (this is client 0)")
       && strstr(out1, "(this is client 1)"), "both print the job summary");
    ok(strstr(out1, "pktlen 8000") && strstr(out1, "hiwater 15") && strstr(out1, "xsize 1024")
       && strstr(out1, "maxlinear 4"), "agreed values printed");
    ok(strstr(out0, "10.1.2.3") && strstr(out0, "6000"), "client 1's -addr and -port seen");
    {
        char line[64];
        snprintf(line, sizeof line, "%d", (int)c0.pid);
        ok(strstr(out1, line) != NULL, "client 0's first proc has its pid");
    }

    /* -load prints what -save kept, identically; a truncated file is refused */
    {
        char *argv[] = { prog, "-load", saved, "-client", "0", NULL };
        tl_child_t c;
        static char out[65536];
        tl_spawn(argv, &c);
        tl_read_all(c.out, out, sizeof out, T_MS);
        int st = tl_wait(&c, T_MS);
        tl_child_close(&c);
        ok(st == 0 && strcmp(out, out0) == 0, "-load prints the saved tables identically");
        FILE *f = fopen(saved, "r+");
        ok(f && ftruncate(fileno(f), 100) == 0, "saved file cut to 100 bytes");
        if (f)
            fclose(f);
        char eb[4096] = "";
        tl_spawn(argv, &c);
        tl_read_all(c.err, eb, sizeof eb, T_MS);
        st = tl_wait(&c, T_MS);
        tl_child_close(&c);
        ok(WIFEXITED(st) && WEXITSTATUS(st) == 1 && strstr(eb, "truncated"),
           "-load of a truncated file: exit 1, \"truncated\"");
        unlink(saved);
    }

    /* usage errors: exit 2 with a message */
    char *bad0[] = { prog, NULL };
    char *bad1[] = { prog, "-client", "0", server, "-tagub", "100", NULL };
    char *bad2[] = { prog, "-client", "0", server, "-versions", "0.1", NULL };
    char *bad3[] = { prog, "-client", "0", server, "-bogus", NULL };
    char *bad4[] = { prog, "-client", "0", server, "-addr", "not.an.addr", NULL };
    char **bads[] = { bad0, bad1, bad2, bad3, bad4 };
    static const char *want[] = { "-client RANK HOST:PORT is required", "-tagub",
                                  "IMPI_C_VERSION", "unknown option", "-addr" };
    for (int i = 0; i < 5; i++) {
        tl_child_t c;
        char eb[4096] = "";
        tl_spawn(bads[i], &c);
        tl_read_all(c.err, eb, sizeof eb, T_MS);
        int st = tl_wait(&c, T_MS);
        tl_child_close(&c);
        ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(eb, want[i]),
           "usage error %d: exit 2 with \"%s\"", i, want[i]);
    }
    /* a server that is not there: exit 1 with a message */
    {
        char *argv[] = { prog, "-client", "0", "127.0.0.1:1", "-timeout", "5", NULL };
        tl_child_t c;
        char eb[4096] = "";
        tl_spawn(argv, &c);
        tl_read_all(c.err, eb, sizeof eb, T_MS);
        int st = tl_wait(&c, T_MS);
        tl_child_close(&c);
        ok(WIFEXITED(st) && WEXITSTATUS(st) == 1 && strstr(eb, "cannot connect"),
           "no server: exit 1, \"cannot connect\"");
    }
    unsetenv("IMPI_AUTH_NONE");
}

int main(void)
{
    plan(NO_PLAN);
    test_happy_three();
    test_happy_one();
    test_auth_env();
    test_liars();
    test_program();
    done_testing();
}
