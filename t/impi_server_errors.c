/*  t/impi_server_errors.c — every bad input to the real impi-server and its outcome:
 *  wrong key (closed, others continue, the slot stays free), first command not AUTH, no
 *  common auth method, duplicate and out-of-range ranks, COLL before the IMPI reply,
 *  descending label (dropped), unknown command code, a frame claiming 2^31 bytes (before
 *  and after the start), a client disconnecting before FINI (reported, survivors get
 *  their replies with the dropped client missing from the mask, non-zero exit once no
 *  client is left), unknown labels passing through, and bad command lines (exit 2).
 *  Every step synchronises on an event: a reply, a closed socket or a stderr line.
 */
#include "gtap.h"
#include "srvtest.h"
#include "base/gimpi_key.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_line[512];

/*  Starts a server or bails out. */
static void start(st_server_t *srv, const char *n, const char *auth)
{
    if (st_start(srv, "-server", n, "-auth", auth, (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
}

/*  Receives a COLL reply and checks label and mask. */
static int got_reply(int fd, int32_t label, uint32_t mask, size_t datalen)
{
    impi_coll_reply_t r;
    uint8_t *raw;
    if (st_recv_coll(fd, &r, &raw) < 0)
        return 0;
    int good = r.label == label && r.mask == mask && r.len == datalen;
    if (!good)
        diag("reply label 0x%x mask 0x%x len %zu", (unsigned)r.label, r.mask, r.len);
    free(raw);
    return good;
}

/*  Wrong key: closed with a message; a joined client and a correct newcomer go on. */
static void test_wrong_key(void)
{
    setenv("IMPI_AUTH_KEY", "1234567890123", 1);
    st_server_t srv;
    start(&srv, "2", "key");
    int good0 = st_connect(&srv);
    cmp_ok(st_auth(good0, 1u << IMPI_AUTH_KEY | 1u << IMPI_AUTH_NONE, 1234567890123ULL), "==",
           IMPI_AUTH_KEY, "KEY chosen (client offers none+key, server key)");
    st_join(good0, 0);

    int bad = st_connect(&srv);
    uint8_t m[4], reply[8];
    gimpi_be_put32(m, 1u << IMPI_AUTH_KEY);
    st_send_cmd(bad, IMPI_CMD_AUTH, m, 4);
    static const uint8_t key_reply[8] = { 0, 0, 0, 1, 0, 0, 0, 8 };
    ok(tl_recv_exact(bad, reply, 8, ST_TIMEOUT_MS) == 8 && memcmp(reply, key_reply, 8) == 0,
       "AUTH reply for KEY is raw {1, 8}");
    uint8_t k[8];
    gimpi_be_put64(k, 42);
    tl_send_all(bad, k, 8);
    ok(tl_wait_closed(bad, ST_TIMEOUT_MS), "wrong key: connection closed");
    close(bad);
    ok(st_expect_err(&srv, "wrong authentication key", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);

    int good1 = st_connect(&srv);
    cmp_ok(st_auth(good1, 1u << IMPI_AUTH_KEY, 1234567890123ULL), "==", IMPI_AUTH_KEY,
           "a correct client authenticates after the bad one");
    st_join(good1, 1);
    ok(st_recv_impi(good0) == 2 && st_recv_impi(good1) == 2,
       "the slot stayed free: both get the IMPI reply");
    int fd[2] = { good0, good1 };
    ok(st_done_fini(fd, 2) == 0, "DONE exchanged");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");
    unsetenv("IMPI_AUTH_KEY");
}

/*  First command not AUTH; no common method (both directions). */
static void test_auth_refusals(void)
{
    setenv("IMPI_AUTH_KEY", "7", 1);
    st_server_t srv;
    start(&srv, "1", "key");
    int a = st_connect(&srv);
    st_join(a, 0);
    ok(tl_wait_closed(a, ST_TIMEOUT_MS), "IMPI as first command: closed");
    close(a);
    ok(st_expect_err(&srv, "not AUTH", s_line, sizeof s_line) == 0, "stderr: %s", s_line);

    int b = st_connect(&srv);
    uint8_t m[4];
    gimpi_be_put32(m, 1u << IMPI_AUTH_NONE);
    st_send_cmd(b, IMPI_CMD_AUTH, m, 4);
    ok(tl_wait_closed(b, ST_TIMEOUT_MS), "client offers only NONE to a KEY server: closed");
    close(b);
    ok(st_expect_err(&srv, "no common authentication method", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);

    /* refused from the header alone: no waiting for a payload that may never come */
    int h = st_connect(&srv);
    uint8_t hdr[8];
    impi_cmd_encode(hdr, IMPI_CMD_DONE, 10000000);
    tl_send_all(h, hdr, 8);
    ok(tl_wait_closed(h, ST_TIMEOUT_MS), "DONE claiming 10 MB as first command: closed at once");
    close(h);
    ok(st_expect_err(&srv, "first command is DONE", s_line, sizeof s_line) == 0, "stderr: %s", s_line);

    int c = st_connect(&srv);
    gimpi_be_put32(m, 0);
    st_send_cmd(c, IMPI_CMD_AUTH, m, 4);
    ok(tl_wait_closed(c, ST_TIMEOUT_MS), "client offers nothing: closed");
    close(c);

    int d = st_connect(&srv);
    cmp_ok(st_auth(d, 1u << IMPI_AUTH_KEY, 7), "==", IMPI_AUTH_KEY, "a good client still served");
    st_join(d, 0);
    ok(st_recv_impi(d) == 1, "IMPI reply 1");
    ok(st_done_fini(&d, 1) == 0, "DONE");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");
    unsetenv("IMPI_AUTH_KEY");

    start(&srv, "1", "none");
    int e = st_connect(&srv);
    gimpi_be_put32(m, 1u << IMPI_AUTH_KEY);
    st_send_cmd(e, IMPI_CMD_AUTH, m, 4);
    ok(tl_wait_closed(e, ST_TIMEOUT_MS), "client offers only KEY to a NONE server: closed");
    close(e);
    ok(st_expect_err(&srv, "no common authentication method", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);
    e = st_client(&srv, 0);
    ok(st_recv_impi(e) == 1, "next client joins");
    ok(st_done_fini(&e, 1) == 0, "DONE");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");
}

/*  Duplicate and out-of-range ranks; COLL before the IMPI reply frees the rank. */
static void test_ranks(void)
{
    st_server_t srv;
    start(&srv, "3", "none");
    int a = st_client(&srv, 0);
    int dup = st_client(&srv, 0);
    ok(tl_wait_closed(dup, ST_TIMEOUT_MS), "duplicate rank 0: closed");
    close(dup);
    ok(st_expect_err(&srv, "rank 0 refused: duplicate", s_line, sizeof s_line) == 0,
       "stderr names it: %s", s_line);
    int hi = st_client(&srv, 3);
    ok(tl_wait_closed(hi, ST_TIMEOUT_MS), "rank 3 of 3: closed");
    close(hi);
    ok(st_expect_err(&srv, "rank 3 refused: out of range", s_line, sizeof s_line) == 0,
       "stderr names it: %s", s_line);
    int neg = st_client(&srv, -1);
    ok(tl_wait_closed(neg, ST_TIMEOUT_MS), "rank -1: closed");
    close(neg);
    ok(st_expect_err(&srv, "rank -1 refused", s_line, sizeof s_line) == 0, "stderr: %s", s_line);

    /* a joined client talking before the IMPI reply loses its rank */
    int early = st_client(&srv, 1);
    uint8_t v[8] = { 0 };
    st_coll(early, IMPI_C_VERSION, v, 8);
    ok(tl_wait_closed(early, ST_TIMEOUT_MS), "COLL before the IMPI reply: closed");
    close(early);
    ok(st_expect_err(&srv, "rank 1 is free again", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);

    int b = st_client(&srv, 1), c = st_client(&srv, 2);
    ok(st_recv_impi(a) == 3 && st_recv_impi(b) == 3 && st_recv_impi(c) == 3,
       "ranks 0, 1 (re-taken) and 2 get the IMPI reply");
    int fd[3] = { a, b, c };
    ok(st_done_fini(fd, 3) == 0, "DONE");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");
}

/*  A descending label drops that client; the other completes on its own. */
static void test_descending(void)
{
    st_server_t srv;
    start(&srv, "2", "none");
    int a = st_client(&srv, 0), b = st_client(&srv, 1);
    st_recv_impi(a);
    st_recv_impi(b);
    uint8_t x[4] = { 0, 0, 0, 1 };
    st_coll(a, IMPI_C_NHOSTS, x, 4);
    st_coll(b, IMPI_C_NHOSTS, x, 4);
    ok(got_reply(a, IMPI_C_NHOSTS, 0x3, 8) && got_reply(b, IMPI_C_NHOSTS, 0x3, 8), "NHOSTS answered");
    st_coll(a, IMPI_C_VERSION, x, 4);       /* 0x1000 after 0x1100 */
    ok(tl_wait_closed(a, ST_TIMEOUT_MS), "descending label: client 0 dropped");
    close(a);
    ok(st_expect_err(&srv, "labels must ascend", s_line, sizeof s_line) == 0, "stderr: %s", s_line);
    st_coll(b, IMPI_C_NHOSTS, x, 4);        /* same label again: also refused */
    ok(tl_wait_closed(b, ST_TIMEOUT_MS), "repeated label: client 1 dropped");
    close(b);
    ok(st_expect_err(&srv, "labels must ascend", s_line, sizeof s_line) == 0, "stderr: %s", s_line);
    cmp_ok(st_finish(&srv), "==", 1, "no client left after drops: exit 1");
}

/*  Unknown command code after the start: dropped, the other goes on and gets replies
 *  with mask 0x1 (a dropped client counts as done). */
static void test_unknown_command(void)
{
    st_server_t srv;
    start(&srv, "2", "none");
    int a = st_client(&srv, 0), b = st_client(&srv, 1);
    st_recv_impi(a);
    st_recv_impi(b);
    st_send_cmd(b, 0x58585858, NULL, 0);
    ok(tl_wait_closed(b, ST_TIMEOUT_MS), "unknown command: closed");
    close(b);
    ok(st_expect_err(&srv, "unknown command code 0x58585858", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);
    ok(strstr(s_line, "dropped before FINI") != NULL, "reported as dropped");
    uint8_t x[4] = { 0, 0, 0, 1 };
    st_coll(a, IMPI_C_NHOSTS, x, 4);
    ok(got_reply(a, IMPI_C_NHOSTS, 0x1, 4), "survivor's label completes with mask 0x1");
    ok(st_done_fini(&a, 1) == 0, "survivor gets DONE");
    cmp_ok(st_finish(&srv), "==", 1, "exit 1: the job lost a client");

    /* and before AUTH */
    start(&srv, "1", "none");
    int c = st_connect(&srv);
    st_send_cmd(c, 0x12345678, NULL, 0);
    ok(tl_wait_closed(c, ST_TIMEOUT_MS), "unknown first command: closed");
    close(c);
    ok(st_expect_err(&srv, "unknown command code 0x12345678", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);
    c = st_client(&srv, 0);
    ok(st_recv_impi(c) == 1 && st_done_fini(&c, 1) == 0, "server still serves");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");
}

/*  COLL with label 0 (reserved) and COLL shorter than its label: dropped. */
static void test_bad_coll(void)
{
    st_server_t srv;
    start(&srv, "2", "none");
    int a = st_client(&srv, 0), b = st_client(&srv, 1);
    st_recv_impi(a);
    st_recv_impi(b);
    st_coll(a, IMPI_NO_LABEL, "x", 1);
    ok(tl_wait_closed(a, ST_TIMEOUT_MS), "label 0: closed");
    close(a);
    ok(st_expect_err(&srv, "bad COLL: bad label", s_line, sizeof s_line) == 0, "stderr: %s", s_line);
    st_send_cmd(b, IMPI_CMD_COLL, "ab", 2);
    ok(tl_wait_closed(b, ST_TIMEOUT_MS), "COLL len 2: closed");
    close(b);
    ok(st_expect_err(&srv, "COLL with length 2 refused", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);
    cmp_ok(st_finish(&srv), "==", 1, "exit 1");
}

/*  A frame claiming 2^31 bytes, before and after the start. */
static void test_huge_frame(void)
{
    st_server_t srv;
    start(&srv, "2", "none");
    int a = st_client(&srv, 0);
    int h = st_connect(&srv);
    st_auth(h, 1u << IMPI_AUTH_NONE, 0);
    uint8_t hdr[8];
    impi_cmd_encode(hdr, IMPI_CMD_COLL, 0x80000000u);
    tl_send_all(h, hdr, 8);
    ok(tl_wait_closed(h, ST_TIMEOUT_MS), "COLL len 2^31 before joining: closed");
    close(h);
    ok(st_expect_err(&srv, "length 2147483648 refused", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);
    int b = st_client(&srv, 1);
    ok(st_recv_impi(a) == 2 && st_recv_impi(b) == 2, "others still served");
    tl_send_all(b, hdr, 8);
    ok(tl_wait_closed(b, ST_TIMEOUT_MS), "COLL len 2^31 after the start: closed");
    close(b);
    ok(st_expect_err(&srv, "length 2147483648 refused", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);
    uint8_t x[4] = { 0, 0, 0, 1 };
    st_coll(a, IMPI_C_NHOSTS, x, 4);
    ok(got_reply(a, IMPI_C_NHOSTS, 0x1, 4), "survivor still answered");
    ok(st_done_fini(&a, 1) == 0, "survivor gets DONE");
    cmp_ok(st_finish(&srv), "==", 1, "exit 1");
}

/*  Disconnect before FINI: survivors waiting for a label are answered; exit non-zero
 *  only when nobody is left. */
static void test_disconnect(void)
{
    st_server_t srv;
    start(&srv, "3", "none");
    int fd[3];
    for (int c = 0; c < 3; c++)
        fd[c] = st_client(&srv, c);
    for (int c = 0; c < 3; c++)
        st_recv_impi(fd[c]);
    uint8_t x[4] = { 0, 0, 0, 2 };
    st_coll(fd[0], IMPI_C_NHOSTS, x, 4);
    st_coll(fd[1], IMPI_C_NHOSTS, x, 4);
    close(fd[2]);                            /* client 2 dies while 0 and 1 wait */
    ok(st_expect_err(&srv, "client 2", s_line, sizeof s_line) == 0 &&
       strstr(s_line, "disconnected") != NULL, "reported: %s", s_line);
    ok(got_reply(fd[0], IMPI_C_NHOSTS, 0x3, 8) && got_reply(fd[1], IMPI_C_NHOSTS, 0x3, 8),
       "waiting clients answered with mask 0x3 (no hang)");
    for (int c = 0; c < 2; c++)
        st_send_cmd(fd[c], IMPI_CMD_DONE, NULL, 0);
    ok(st_recv_done(fd[0]) == 0 && st_recv_done(fd[1]) == 0, "DONE to the survivors");
    st_send_cmd(fd[0], IMPI_CMD_FINI, NULL, 0);
    ok(tl_wait_closed(fd[0], ST_TIMEOUT_MS), "client 0 FINI: closed");
    /* the server must still be there for client 1: it answers nothing, so check it
       has not exited by making client 1 finish and only then reaping it */
    st_send_cmd(fd[1], IMPI_CMD_FINI, NULL, 0);
    ok(tl_wait_closed(fd[1], ST_TIMEOUT_MS), "client 1 FINI: closed");
    close(fd[0]);
    close(fd[1]);
    ok(st_expect_err(&srv, "no client left", s_line, sizeof s_line) == 0, "stderr: %s", s_line);
    cmp_ok(st_finish(&srv), "==", 1, "exit status non-zero once no client is left");
}

/*  Only the labels of the IMPI table are taken: an unknown label drops its client (it
 *  would hold the server's memory under a label nobody completes), and the survivor is
 *  still answered.  Empty contributions of known labels count in the mask. */
static void test_unknown_label(void)
{
    st_server_t srv;
    start(&srv, "2", "none");
    int a = st_client(&srv, 0), b = st_client(&srv, 1);
    st_recv_impi(a);
    st_recv_impi(b);
    st_coll(a, IMPI_C_VERSION, NULL, 0);
    st_coll(b, IMPI_C_VERSION, "z", 1);
    ok(got_reply(a, IMPI_C_VERSION, 0x3, 1) && got_reply(b, IMPI_C_VERSION, 0x3, 1),
       "empty contribution counts in the mask");
    st_coll(a, 0x1234, "abc", 3);
    ok(tl_wait_closed(a, ST_TIMEOUT_MS), "label 0x1234 (not in the table): client dropped");
    close(a);
    ok(st_expect_err(&srv, "not an IMPI label", s_line, sizeof s_line) == 0, "stderr: %s", s_line);
    st_coll(b, IMPI_C_NHOSTS, "\0\0\0\1", 4);
    ok(got_reply(b, IMPI_C_NHOSTS, 0x2, 4), "the survivor's next label is answered");
    st_send_cmd(b, IMPI_CMD_FINI, NULL, 0);
    ok(tl_wait_closed(b, ST_TIMEOUT_MS), "survivor FINI");
    close(b);
    cmp_ok(st_finish(&srv), "==", 1, "exit 1 (a client was dropped)");
}

/*  A joined client cannot make the server hold more than IMPI_SERVER_MAX_HELD of its
 *  data while another client lags: two 16 MiB labels fit, the third drops it. */
static void test_held_cap(void)
{
    st_server_t srv;
    start(&srv, "2", "none");
    int a = st_client(&srv, 0), b = st_client(&srv, 1);
    st_recv_impi(a);
    st_recv_impi(b);
    uint32_t big = IMPI_MAX_PAYLOAD - 4;
    uint8_t *junk = calloc(1, big);
    if (!junk)
        BAIL_OUT("memory");
    int sent = st_coll(a, IMPI_C_VERSION, junk, big) == 0 && st_coll(a, IMPI_C_NHOSTS, junk, big) == 0;
    ok(sent && !tl_wait_closed(a, 300), "two labels of 16 MiB held for a lagging client");
    st_coll(a, IMPI_C_NPROCS, junk, big);
    free(junk);
    ok(tl_wait_closed(a, ST_TIMEOUT_MS), "a third: client dropped");
    close(a);
    ok(st_expect_err(&srv, "would make the server hold", s_line, sizeof s_line) == 0,
       "stderr: %s", s_line);
    close(b);
    cmp_ok(st_finish(&srv), "==", 1, "exit 1");
}

/*  COLL after DONE and a second DONE drop the client; FINI before DONE is a clean exit
 *  that counts as done. */
static void test_after_done(void)
{
    st_server_t srv;
    start(&srv, "3", "none");
    int a = st_client(&srv, 0), b = st_client(&srv, 1), c = st_client(&srv, 2);
    st_recv_impi(a);
    st_recv_impi(b);
    st_recv_impi(c);
    st_send_cmd(a, IMPI_CMD_DONE, NULL, 0);
    uint8_t x[4] = { 0, 0, 0, 1 };
    st_coll(a, IMPI_C_NHOSTS, x, 4);
    ok(tl_wait_closed(a, ST_TIMEOUT_MS), "COLL after DONE: closed");
    close(a);
    ok(st_expect_err(&srv, "after DONE", s_line, sizeof s_line) == 0, "stderr: %s", s_line);
    st_send_cmd(b, IMPI_CMD_DONE, NULL, 0);
    st_send_cmd(b, IMPI_CMD_DONE, NULL, 0);
    ok(tl_wait_closed(b, ST_TIMEOUT_MS), "second DONE: closed");
    close(b);
    ok(st_expect_err(&srv, "DONE twice", s_line, sizeof s_line) == 0, "stderr: %s", s_line);
    st_send_cmd(c, IMPI_CMD_FINI, NULL, 0);
    ok(tl_wait_closed(c, ST_TIMEOUT_MS), "FINI before DONE: closed cleanly");
    close(c);
    cmp_ok(st_finish(&srv), "==", 1, "exit 1: two clients were dropped");

    /* FINI before DONE from one client does not block the others' DONE */
    start(&srv, "2", "none");
    a = st_client(&srv, 0);
    b = st_client(&srv, 1);
    st_recv_impi(a);
    st_recv_impi(b);
    st_send_cmd(a, IMPI_CMD_FINI, NULL, 0);
    ok(tl_wait_closed(a, ST_TIMEOUT_MS), "client 0 FINI without DONE");
    close(a);
    st_send_cmd(b, IMPI_CMD_DONE, NULL, 0);
    ok(st_recv_done(b) == 0, "client 1 still gets DONE");
    st_send_cmd(b, IMPI_CMD_FINI, NULL, 0);
    tl_wait_closed(b, ST_TIMEOUT_MS);
    close(b);
    cmp_ok(st_finish(&srv), "==", 0, "exit 0: both sent FINI");
}

/*  Runs impi-server with argv, expects exit status 2 and a stderr containing needle. */
static void bad_cmdline(const char *needle, char *const *args, const char *what)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)tl_prog("programs/impi-server");
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    tl_child_t child;
    if (tl_spawn(argv, &child) < 0)
        BAIL_OUT("spawn");
    static char err[4096];
    tl_read_all(child.err, err, sizeof err, ST_TIMEOUT_MS);
    int status = tl_wait(&child, ST_TIMEOUT_MS);
    tl_child_close(&child);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 2 && strstr(err, needle) != NULL,
       "%s: exit 2 with '%s'", what, needle);
}

/*  Bad command lines. */
static void test_cmdline(void)
{
    unsetenv("IMPI_AUTH_KEY");
    bad_cmdline("usage", (char *[]){ NULL }, "no arguments");
    bad_cmdline("1..32", (char *[]){ "-server", "0", NULL }, "-server 0");
    bad_cmdline("1..32", (char *[]){ "-server", "33", NULL }, "-server 33");
    bad_cmdline("1..32", (char *[]){ "-server", "x", NULL }, "-server x");
    bad_cmdline("port", (char *[]){ "-server", "2", "-port", "70000", NULL }, "-port 70000");
    bad_cmdline("unknown option", (char *[]){ "-server", "2", "-bogus", "1", NULL }, "unknown option");
    bad_cmdline("usage", (char *[]){ "-server", NULL }, "missing value");
    bad_cmdline("none, key", (char *[]){ "-server", "2", "-auth", "rsa", NULL }, "-auth rsa");
    setenv("IMPI_AUTH_KEY", "12x", 1);
    bad_cmdline("not a decimal", (char *[]){ "-server", "2", "-auth", "none,key", NULL },
                "IMPI_AUTH_KEY not a number");
    unsetenv("IMPI_AUTH_KEY");
    bad_cmdline("IPv4", (char *[]){ "-server", "2", "-host", "nowhere", NULL }, "-host nowhere");
}

/*  Without -auth the environment decides: IMPI_AUTH_KEY set -> KEY only. */
static void test_env_auth(void)
{
    setenv("IMPI_AUTH_KEY", "-5", 1);
    unsetenv("IMPI_AUTH_NONE");
    st_server_t srv;
    if (st_start(&srv, "-server", "1", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    int a = st_connect(&srv);
    cmp_ok(st_auth(a, 0x3, (uint64_t)-5), "==", IMPI_AUTH_KEY, "env key: KEY chosen, key -5 accepted");
    st_join(a, 0);
    ok(st_recv_impi(a) == 1 && st_done_fini(&a, 1) == 0, "job runs");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");
    unsetenv("IMPI_AUTH_KEY");

    if (st_start(&srv, "-server", "1", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    a = st_connect(&srv);
    int b = st_connect(&srv);
    cmp_ok(st_auth(b, 0x1, 0), "<", 0, "no env: NONE is not offered (secure by default)");
    close(b);
    gimpi_key_t gk;
    char err[GIMPI_KEY_ERRLEN];
    uint64_t derived = gimpi_key_default(&gk, NULL, 0, err, sizeof err) == 0 ? gimpi_key_impi(&gk) : 1;
    cmp_ok(st_auth(a, 0x3, derived), "<", 0,
           "no env: the derived KEY (the same for every job) is not accepted unasked");
    close(a);
    a = st_connect(&srv);
    cmp_ok(st_auth(a, 0x3 | 1u << IMPI_AUTH_GIMPI, derived), "==", IMPI_AUTH_GIMPI,
           "no env: GIMPI chosen and the proof of the gimpi key accepted");
    st_join(a, 0);
    ok(st_recv_impi(a) == 1 && st_done_fini(&a, 1) == 0, "job runs");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");

    /* -auth key without IMPI_AUTH_KEY: the derived key too; -print-key shows it */
    if (st_start(&srv, "-server", "1", "-auth", "key", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    a = st_connect(&srv);
    cmp_ok(st_auth(a, 0x2, derived), "==", IMPI_AUTH_KEY, "-auth key alone: the derived key");
    st_join(a, 0);
    ok(st_recv_impi(a) == 1 && st_done_fini(&a, 1) == 0, "job runs");
    cmp_ok(st_finish(&srv), "==", 0, "exit 0");
    char cmd[600], out[64] = "";
    snprintf(cmd, sizeof cmd, "%s -print-key", tl_prog("programs/impi-server"));
    FILE *f = popen(cmd, "r");
    if (f) {
        if (!fgets(out, sizeof out, f))
            out[0] = 0;
        pclose(f);
    }
    cmp_ok((uint64_t)atoll(out), "==", derived,
           "-print-key prints it as LAM's atoll() reads it: %s", out);
}

int main(void)
{
    plan(NO_PLAN);
    test_wrong_key();
    test_auth_refusals();
    test_ranks();
    test_descending();
    test_unknown_command();
    test_huge_frame();
    test_bad_coll();
    test_disconnect();
    test_unknown_label();
    test_held_cap();
    test_after_done();
    test_cmdline();
    test_env_auth();
    done_testing();
}
