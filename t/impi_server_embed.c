/*  t/impi_server_embed.c — the impi_server object used in-process, as gimpirun will use
 *  it: argument checks of impi_server_new, the endpoint and port accessors, the join
 *  timeout closing an idle connection (a loop timer), impi_server_run returning 0 after
 *  FINI and 1 after a client vanished, and destroy.  The server runs in a thread; the
 *  test plays the client with raw sockets.
 */
#include "gtap.h"
#include "server/impi_server.h"
#include "srvtest.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  Everything written to a log file so far. */
static const char *log_text(FILE *log)
{
    static char buf[8192];
    fflush(log);
    rewind(log);
    size_t n = fread(buf, 1, sizeof buf - 1, log);
    buf[n] = '\0';
    return buf;
}

/*  Bad arguments give NULL and a message. */
static void test_new_refusals(void)
{
    FILE *log = tmpfile();
    ok(impi_server_new(0, "127.0.0.1", 0, IMPI_SERVER_AUTH_NONE, 0, log) == NULL, "0 clients refused");
    ok(impi_server_new(33, "127.0.0.1", 0, IMPI_SERVER_AUTH_NONE, 0, log) == NULL, "33 clients refused");
    ok(impi_server_new(2, "127.0.0.1", 0, 0, 0, log) == NULL, "empty auth mask refused");
    ok(impi_server_new(2, "127.0.0.1", 0, 0x4, 0, log) == NULL, "unknown auth bit refused");
    ok(impi_server_new(2, "localhost", 0, IMPI_SERVER_AUTH_NONE, 0, log) == NULL, "host name refused");
    ok(impi_server_new(2, "127.0.0.1", 70000, IMPI_SERVER_AUTH_NONE, 0, log) == NULL, "port 70000 refused");
    impi_server_t *s = impi_server_new(2, "127.0.0.1", 0, IMPI_SERVER_AUTH_NONE, 0, log);
    ok(s != NULL, "server on a free port");
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%d", impi_server_port(s));
    is(impi_server_endpoint(s), want, "endpoint is the bound address and port");
    ok(impi_server_new(2, "127.0.0.1", impi_server_port(s), IMPI_SERVER_AUTH_NONE, 0, log) == NULL,
       "port in use refused");
    const char *text = log_text(log);
    ok(strstr(text, "1..32") && strstr(text, "cannot listen") && strstr(text, "IPv4"),
       "messages logged");
    impi_server_destroy(&s);
    ok(s == NULL, "destroy NULLs the pointer");

    s = impi_server_new(1, NULL, 0, IMPI_SERVER_AUTH_NONE, 0, log);
    char host[64];
    int port;
    struct in_addr a;
    ok(s && tl_parse_addr(impi_server_endpoint(s), host, sizeof host, &port) == 0 &&
       inet_pton(AF_INET, host, &a) == 1 && strcmp(host, "0.0.0.0") != 0 &&
       port == impi_server_port(s), "bound to all: endpoint %s is a real IPv4 address",
       s ? impi_server_endpoint(s) : "-");
    impi_server_destroy(&s);
    fclose(log);
}

/*  In-process job with the join timeout and KEY auth; then one where the client dies. */
static void test_run(void)
{
    FILE *log = tmpfile();
    impi_server_t *s = impi_server_new(1, "127.0.0.1", 0,
                                       IMPI_SERVER_AUTH_NONE | IMPI_SERVER_AUTH_KEY, 99, log);
    impi_server_set_join_timeout(s, 1500);  /* short, yet long enough for a loaded machine */
    st_server_t addr = { .port = impi_server_port(s) };
    snprintf(addr.host, sizeof addr.host, "127.0.0.1");
    st_runner_t r = { s, -2 };
    pthread_t th;
    pthread_create(&th, NULL, st_run_server, &r);

    int idle = st_connect(&addr);
    ok(tl_wait_closed(idle, ST_TIMEOUT_MS), "idle connection closed by the join timeout");
    close(idle);
    int c = st_connect(&addr);
    cmp_ok(st_auth(c, 0x3, 99), "==", IMPI_AUTH_KEY, "KEY chosen and accepted");
    st_join(c, 0);
    ok(st_recv_impi(c) == 1, "IMPI reply");
    st_coll(c, IMPI_C_NHOSTS, "\0\0\0\1", 4);
    impi_coll_reply_t rep;
    uint8_t *raw;
    ok(st_recv_coll(c, &rep, &raw) == 0 && rep.mask == 1 && rep.len == 4, "COLL reply");
    free(raw);
    st_send_cmd(c, IMPI_CMD_DONE, NULL, 0);
    ok(st_recv_done(c) == 0, "DONE");
    st_send_cmd(c, IMPI_CMD_FINI, NULL, 0);
    pthread_join(th, NULL);
    cmp_ok(r.rc, "==", 0, "impi_server_run returns 0 after FINI");
    cmp_ok(impi_server_run(s), "==", 0, "run again returns the same result at once");
    close(c);
    ok(strstr(log_text(log), "no AUTH and IMPI within 1500 ms") != NULL, "timeout logged");
    impi_server_destroy(&s);

    s = impi_server_new(1, "127.0.0.1", 0, IMPI_SERVER_AUTH_NONE, 0, log);
    addr.port = impi_server_port(s);
    r.server = s;
    pthread_create(&th, NULL, st_run_server, &r);
    c = st_client(&addr, 0);
    ok(st_recv_impi(c) == 1, "IMPI reply");
    close(c);
    pthread_join(th, NULL);
    cmp_ok(r.rc, "==", 1, "impi_server_run returns 1 when the only client vanished");
    impi_server_destroy(&s);
    fclose(log);
}

typedef struct {
    gimpi_loop_t *loop;
    int result;
    int done_calls;
    int ticks;
} host_t;

/*  The attached server's end of job: record and stop the caller's loop. */
static void on_done(impi_server_t *server, int result, void *arg)
{
    host_t *h = arg;
    h->result = result;
    h->done_calls++;
    ok(impi_server_result(server) == result, "result visible in the callback");
    gimpi_loop_stop(h->loop);
}

/*  The caller's own timer, running next to the server. */
static void on_tick(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop;
    (void)id;
    ((host_t *)arg)->ticks++;
}

/*  Thread body: runs the caller's loop. */
static void *run_host(void *arg)
{
    host_t *h = arg;
    gimpi_loop_run(h->loop);
    return NULL;
}

/*  The server attached to a loop the caller owns (how gimpirun embeds it). */
static void test_attach(void)
{
    FILE *log = tmpfile();
    host_t h = { .loop = gimpi_loop_new(), .result = -2 };
    impi_server_t *s = impi_server_new(2, "127.0.0.1", 0, IMPI_SERVER_AUTH_NONE, 0, log);
    ok(impi_server_attach(s, h.loop, on_done, &h) == 0, "attached to the caller's loop");
    ok(impi_server_attach(s, h.loop, on_done, &h) == -1, "second attach refused");
    cmp_ok(impi_server_run(s), "==", -1, "impi_server_run refused once attached");
    cmp_ok(impi_server_result(s), "==", -1, "result -1 while running");
    int tick = gimpi_loop_timer_add(h.loop, 0, 0, on_tick, &h);  /* fires in the first round */
    st_server_t addr = { .port = impi_server_port(s) };
    snprintf(addr.host, sizeof addr.host, "127.0.0.1");
    pthread_t th;
    pthread_create(&th, NULL, run_host, &h);
    int a = st_client(&addr, 0), b = st_client(&addr, 1);
    ok(st_recv_impi(a) == 2 && st_recv_impi(b) == 2, "IMPI replies from the attached server");
    st_send_cmd(a, IMPI_CMD_DONE, NULL, 0);
    st_send_cmd(b, IMPI_CMD_DONE, NULL, 0);
    ok(st_recv_done(a) == 0 && st_recv_done(b) == 0, "DONE");
    st_send_cmd(a, IMPI_CMD_FINI, NULL, 0);
    st_send_cmd(b, IMPI_CMD_FINI, NULL, 0);
    pthread_join(th, NULL);
    ok(h.done_calls == 1 && h.result == 0, "done callback once with result 0");
    cmp_ok(h.ticks, ">", 0, "the caller's timer ran next to the server");
    gimpi_loop_timer_cancel(h.loop, tick);
    impi_server_destroy(&s);
    cmp_ok(gimpi_loop_run_once(h.loop, 0), "==", 0, "destroy left nothing on the caller's loop");
    close(a);
    close(b);
    gimpi_loop_destroy(&h.loop);
    fclose(log);
}

int main(void)
{
    plan(NO_PLAN);
    test_new_refusals();
    test_run();
    test_attach();
    done_testing();
}
