/*  t/groupd_vm.c — groupd's part of the virtual machine against a real groupd, through
 *  the groups client (gimpi_group.h) and raw frames: the host table (HOSTS, HOSTS_SET, the
 *  manager slot taken, refused to a second connection and freed when the manager's
 *  connection ends), the task list (TASKS with its host filter, TASKINFO), the relay of
 *  requests to the manager (VMREQ without a manager, through mgr_next / mgr_reply, a
 *  VMWAIT answer that arrives while the manager waits for another reply, the queue
 *  limits, a manager that dies with requests pending, a requester that dies before its
 *  answer), the manager-only commands refused to others, and TASK_EXIT of a group member
 *  and of a reserved tid that never registered.  Processes and threads synchronise on
 *  replies and pipes; every wait is bounded.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"
#include "base/gimpi_vmwire.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

enum { WAIT_MS = 20000 };

/*  A short pause for bounded state polling (never used to order events). */
static void s_nap(void)
{
    struct timespec ts = { 0, 5 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/*  Sends a raw request [header][body...] with request id reqid, without waiting. */
static int s_send_raw(void *sock, uint8_t cmd, uint32_t reqid, const gd_frame_t *body, int nbody)
{
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, cmd, reqid);
    gd_frame_t f[8] = { { hdr, sizeof hdr } };
    for (int k = 0; k < nbody && k < 7; k++)
        f[1 + k] = body[k];
    return gd_send_frames(sock, NULL, 0, f, 1 + nbody, 0);
}

/*  Receives one reply within ms: its status (99 when none came) and request id. */
static int s_recv_raw(void *sock, int ms, uint32_t *reqid, gd_multipart_t *keep)
{
    zmq_pollitem_t it = { sock, 0, ZMQ_POLLIN, 0 };
    gd_multipart_t mp;
    if (zmq_poll(&it, 1, ms) <= 0 || gd_multipart_recv(sock, &mp, 0) < 0)
        return 99;
    int status = 99;
    if (mp.nparts >= 2 && mp.frames[0].len == GD_HDR_SIZE && mp.frames[1].len == 4) {
        status = (int32_t)gimpi_be_get32(mp.frames[1].data);
        if (reqid)
            *reqid = gimpi_be_get32(mp.frames[0].data + 4);
    }
    if (keep)
        *keep = mp;
    else
        gd_multipart_close(&mp);
    return status;
}

/*  One raw request and its reply's status (99 when none came). */
static int s_raw(void *sock, uint8_t cmd, const gd_frame_t *body, int nbody)
{
    static uint32_t reqid = 1000;
    uint32_t got = 0;
    if (s_send_raw(sock, cmd, ++reqid, body, nbody) < 0)
        return 99;
    for (int64_t end = tl_now_ms() + WAIT_MS; tl_now_ms() < end;) {
        int st = s_recv_raw(sock, WAIT_MS, &got, NULL);
        if (st == 99 || got == reqid)
            return st;
    }
    return 99;
}

/*  Raw REGISTER of a task with the given host text and OS pid; the tid or an error. */
static int s_register_raw(void *sock, const char *host, int pid)
{
    static const uint8_t proc[24] = { 9 }, addr[16] = { 0 };
    uint8_t port[4], ospid[4];
    gimpi_be_put32(port, 5000);
    gimpi_be_put32(ospid, (uint32_t)pid);
    gd_frame_t body[5] = { { proc, 24 }, { addr, 16 }, { port, 4 }, { ospid, 4 },
                           { (const uint8_t *)host, strlen(host) } };
    return s_raw(sock, GD_REGISTER, body, 5);
}

/*  Polls the manager until mgr_next gives a request (1) or an error; 0 on timeout. */
static int s_mgr_wait(gimpi_groups_t *m, int *token, void **payload, size_t *len)
{
    int fd = gimpi_groups_fd(m);
    for (int64_t end = tl_now_ms() + WAIT_MS; tl_now_ms() < end;) {
        int rc = gimpi_groups_mgr_next(m, token, payload, len);
        if (rc != 0)
            return rc;
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        poll(&pf, 1, 200);
    }
    return 0;
}

/*  A host table (a VM_HOSTS frame, malloc'ed, its length in *len) of the rows given. */
static uint8_t *s_table(size_t *len, const char *row, ...)
{
    char *rows[16];
    int n = 0;
    va_list ap;
    va_start(ap, row);
    for (const char *r = row; r && n < 15; r = va_arg(ap, const char *))
        rows[n++] = (char *)r;
    va_end(ap);
    rows[n] = NULL;
    return vmw_encode(len, VM_HOSTS, rows);
}

/*  HOSTS_SET of a one-host table whose host is `name`: its status. */
static int s_set_one(gimpi_groups_t *g, const char *name)
{
    char row[300];
    snprintf(row, sizeof row, "262144 %s LINUX64 1000 1 2", name);
    size_t len;
    uint8_t *t = s_table(&len, row, NULL);
    int rc = gimpi_groups_hosts_set(g, 1, t, len);
    free(t);
    return rc;
}

/*  Makes g the manager (a table of one host, `name`) once the previous manager's
 *  connection has ended at groupd (bounded); the last HOSTS_SET status. */
static int s_take_manager(gimpi_groups_t *g, const char *name)
{
    int rc = GIMPI_EEXISTS;
    for (int64_t end = tl_now_ms() + WAIT_MS; rc == GIMPI_EEXISTS && tl_now_ms() < end; s_nap())
        rc = s_set_one(g, name);
    return rc;
}

/*  A VMREQ made in another thread (the manager answers in the test's own). */
typedef struct {
    const char *ep;
    gimpi_groups_t *g;          /* NULL: the thread makes its own object */
    const char *req;
    int timeout_ms;
    int status;
    char rep[64];
    int64_t took_ms;
} s_req_t;

/*  Thread body: one gimpi_groups_vmreq. */
static void *s_req_thread(void *arg)
{
    s_req_t *r = arg;
    gimpi_groups_t *g = r->g ? r->g : gimpi_groups_new(r->ep, NULL);
    void *rep = NULL;
    size_t len = 0;
    int64_t t0 = tl_now_ms();
    r->status = gimpi_groups_vmreq(g, r->req, strlen(r->req), &rep, &len, r->timeout_ms);
    r->took_ms = tl_now_ms() - t0;
    snprintf(r->rep, sizeof r->rep, "%.*s", (int)len, rep ? (const char *)rep : "");
    free(rep);
    if (!r->g)
        gimpi_groups_destroy(&g);
    return NULL;
}

/*  Garbage host tables are refused with BadParam and make nobody the manager. */
static void test_bad_tables(gimpi_groups_t *m)
{
    static const struct { int n; const char *row[3]; const char *what; } bad[] = {
        { 1, { "262144 h LINUX64 1000 1 1" }, NULL },      /* (the frame cut short) */
        { 2, { "262144 h LINUX64 1000 1 1" }, "fewer rows than hosts" },
        { 1, { "0 h LINUX64 1000 1 1" }, "a dtid 0" },
        { 1, { "262144 h LINUX64 1000 1" }, "a row of 5 fields" },
        { 1, { "262144 h LINUX64 1000 1 1 x" }, "a row of 7 fields" },
        { 1, { "262144 h LINUX64 -5 1 1" }, "a negative speed" },
        { 2, { "262144 h LINUX64 1000 1 1", "262144 g LINUX64 1000 1 1" }, "a dtid twice" },
    };
    cmp_ok(gimpi_groups_hosts_set(m, 1, "garbage", 7), "==", GIMPI_EBADPARAM,
           "HOSTS_SET of bytes that are no VM_HOSTS frame: BadParam");
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        size_t len;
        uint8_t *t = s_table(&len, bad[k].row[0], bad[k].row[1], bad[k].row[2], NULL);
        int rc = gimpi_groups_hosts_set(m, bad[k].n, t, bad[k].what ? len : len - 1);
        cmp_ok(rc, "==", GIMPI_EBADPARAM, "HOSTS_SET with %s: BadParam",
               bad[k].what ? bad[k].what : "a frame cut short");
        free(t);
    }
    void *blob = NULL;
    size_t len = 0;
    cmp_ok(gimpi_groups_hosts(m, &blob, &len), "==", 0, "no table stored");
    free(blob);
}

/*  A groupd started with --launcher (as gimpirun starts the job's): only a HOSTS_SET with
 *  its manager token makes the manager. */
static void test_launcher_token(void)
{
    gdt_daemon_t d;
    if (gdt_start(&d, "--launcher") < 0)
        BAIL_OUT("groupd --launcher did not start");
    cmp_ok(strlen(d.token), "==", GIMPI_GROUPS_TOKEN_LEN, "--launcher prints its token first");
    gimpi_groups_t *x = gimpi_groups_new(d.endpoint, NULL), *l = gimpi_groups_new(d.endpoint, NULL);
    size_t len;
    uint8_t *t = s_table(&len, "262144 h LINUX64 1000 1 1", NULL);
    cmp_ok(gimpi_groups_hosts_set(x, 1, t, len), "==", GIMPI_EDENIED,
           "a key holder without the token cannot become the manager: Denied");
    char wrong[GIMPI_GROUPS_TOKEN_LEN + 1];
    snprintf(wrong, sizeof wrong, "%s", d.token);
    wrong[0] = wrong[0] == '0' ? '1' : '0';
    cmp_ok(gimpi_groups_hosts_set_token(x, 1, t, len, wrong), "==", GIMPI_EDENIED,
           "nor with another token: Denied");
    cmp_ok(gimpi_groups_hosts_set_token(x, 1, t, len, "xyz"), "==", GIMPI_EBADPARAM,
           "a token that is not hex of 16 bytes: BadParam (library)");
    cmp_ok(gimpi_groups_hosts_set_token(l, 1, t, len, d.token), "==", 0,
           "the launcher's token makes the manager");
    cmp_ok(gimpi_groups_task_exit(x, 0x40001, 0), "==", GIMPI_EDENIED,
           "and the other connection is not it");
    /* gimpirun comes back to a groupd it restarted from the journal, where the manager
       replayed is its old connection: the token takes the role over */
    cmp_ok(gimpi_groups_hosts_set(x, 1, t, len), "==", GIMPI_EEXISTS,
           "without the token a second connection cannot take the role: Exists");
    cmp_ok(gimpi_groups_hosts_set_token(x, 1, t, len, d.token), "==", 0,
           "with the launcher's token a new connection takes the manager's role");
    cmp_ok(gimpi_groups_task_exit(l, 0x40001, 0), "==", GIMPI_EDENIED,
           "and the old one is no longer the manager");
    free(t);
    gimpi_groups_destroy(&x);
    gimpi_groups_destroy(&l);
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "groupd --launcher exits 0");
    gdt_cleanup(&d);
}

/*  The host table and the manager slot. */
static void test_hosts(const char *ep)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL), *m = gimpi_groups_new(ep, NULL);
    gimpi_groups_t *b = gimpi_groups_new(ep, NULL);
    void *blob = (void *)1;
    size_t len = 99;
    cmp_ok(gimpi_groups_hosts(a, &blob, &len), "==", 0, "HOSTS before any table: 0 hosts");
    ok(blob && len == 0, "and an empty table");
    free(blob);
    void *rep;
    size_t replen;
    cmp_ok(gimpi_groups_vmreq(a, "x", 1, &rep, &replen, 5000), "==", GIMPI_ENOHOST,
           "VMREQ without a manager: NoHost at once");
    int tok;
    cmp_ok(s_mgr_wait(b, &tok, &rep, &replen), "==", GIMPI_EDENIED,
           "VMWAIT from a non-manager: Denied");
    cmp_ok(gimpi_groups_mgr_reply(b, 1, 0, "x", 1), "==", GIMPI_EDENIED,
           "VMREP from a non-manager: Denied");
    cmp_ok(gimpi_groups_task_exit(b, 0x40001, 0), "==", GIMPI_EDENIED,
           "TASK_EXIT from a non-manager: Denied");
    cmp_ok(gimpi_groups_hosts_set(m, 4, "abc", 3), "==", GIMPI_EBADPARAM,
           "more hosts than bytes: BadParam (library)");
    size_t tlen, t2len;
    uint8_t *table = s_table(&tlen, "262144 node1 LINUX64 1000 1 4", "524288 node2 LINUX64 1000 1 4",
                             "786432 node3 LINUXARM 500 2 8", NULL);
    test_bad_tables(m);
    cmp_ok(gimpi_groups_hosts_set(m, 3, table, tlen), "==", 0,
           "HOSTS_SET: the first setter becomes the manager");
    cmp_ok(gimpi_groups_hosts(a, &blob, &len), "==", 3, "HOSTS from another client: 3 hosts");
    ok(len == tlen && blob && memcmp(blob, table, len) == 0, "the same bytes");
    free(blob);
    uint8_t *t2 = s_table(&t2len, "262144 n1 LINUX64 1000 1 1", "524288 n2 LINUX64 1000 1 1", NULL);
    cmp_ok(gimpi_groups_hosts_set(m, 2, t2, t2len), "==", 0, "the manager sets it again");
    cmp_ok(gimpi_groups_hosts(a, &blob, &len), "==", 2, "HOSTS sees the new table");
    free(blob);
    cmp_ok(gimpi_groups_hosts_set(b, 3, table, tlen), "==", GIMPI_EEXISTS,
           "HOSTS_SET from a second connection: Exists");
    free(t2);
    free(table);
    void *big = calloc(1, GD_VM_MAX_TABLE + 1);
    cmp_ok(gimpi_groups_hosts_set(m, 1, big, GD_VM_MAX_TABLE + 1), "==", GIMPI_EBADPARAM,
           "a table over 1 MiB: BadParam");
    free(big);
    uint8_t n[4];
    gimpi_be_put32(n, 5);
    void *zctx, *raw = gdt_dealer(ep, &zctx);
    gd_frame_t body[3] = { { n, 4 }, { (const uint8_t *)"ab", 2 }, { n, 0 } };
    cmp_ok(s_raw(raw, GD_HOSTS_SET, body, 3), "==", GIMPI_EBADPARAM,
           "groupd: 5 hosts in 2 bytes is BadParam");
    cmp_ok(s_raw(raw, GD_HOSTS_SET, body, 2), "==", GIMPI_EBADMSG,
           "groupd: HOSTS_SET without its token frame is BadMsg");
    cmp_ok(s_raw(raw, GD_HOSTS_SET, body + 1, 1), "==", GIMPI_EBADMSG,
           "groupd: HOSTS_SET without its count is BadMsg");
    gd_frame_t tok3[3] = { { n, 3 }, { n, 4 }, { n, 0 } };
    cmp_ok(s_raw(raw, GD_VMREP, tok3, 3), "==", GIMPI_EBADMSG,
           "groupd: VMREP with a 3-byte token is BadMsg");
    cmp_ok(s_raw(raw, GD_TASK_EXIT, tok3 + 1, 1), "==", GIMPI_EBADMSG,
           "groupd: TASK_EXIT without its status is BadMsg");
    cmp_ok(s_raw(raw, GD_VMWAIT, NULL, 0), "==", GIMPI_EDENIED, "groupd: a raw VMWAIT: Denied");
    gdt_dealer_close(raw, zctx);
    gimpi_groups_destroy(&m);
    int rc = s_take_manager(b, "z");
    cmp_ok(rc, "==", 0, "the manager gone: another connection takes the slot");
    cmp_ok(gimpi_groups_hosts(a, &blob, &len), "==", 1, "with its table");
    free(blob);
    gimpi_groups_destroy(&b);
    for (int64_t end = tl_now_ms() + WAIT_MS; tl_now_ms() < end; s_nap()) {
        rc = gimpi_groups_hosts(a, &blob, &len);
        free(blob);
        if (gimpi_groups_vmreq(a, "", 0, &rep, &replen, 5000) == GIMPI_ENOHOST)
            break;
        free(rep);
    }
    cmp_ok(rc, "==", 1, "the table outlives its manager");
    gimpi_groups_destroy(&a);
}

/*  TASKS and TASKINFO. */
static void test_tasks(const char *ep)
{
    gimpi_groups_t *t1 = gimpi_groups_new(ep, NULL), *q = gimpi_groups_new(ep, NULL);
    int tid1 = gimpi_group_mytid(t1);
    cmp_ok(tid1, ">", 0, "a task registers (0x%x)", (unsigned)tid1);
    void *zctx, *raw = gdt_dealer(ep, &zctx);
    gd_frame_t info[2] = { { (const uint8_t *)"\0\0\0\0", 4 }, { (const uint8_t *)"p", 1 } };
    cmp_ok(s_raw(raw, GD_TASKINFO, info, 2), "==", GIMPI_ENOTASK,
           "TASKINFO from an unregistered connection: NoTask");
    int tidx = s_register_raw(raw, "nodeX", 4242);
    cmp_ok(tidx, ">", tid1, "a raw task registers on host nodeX (0x%x)", (unsigned)tidx);
    cmp_ok(gimpi_groups_taskinfo(t1, tidx, "worker"), "==", 0, "TASKINFO: parent and name");
    cmp_ok(gimpi_groups_taskinfo(t1, -1, "worker"), "==", GIMPI_EBADPARAM,
           "a negative parent: BadParam");
    gimpi_vm_task_t *ti = NULL;
    int n = -1;
    int rc = gimpi_groups_tasks(q, NULL, &ti, &n);
    cmp_ok(rc, "==", 2, "TASKS of every host: the 2 tasks");
    ok(ti && n == 2 && ti[0].tid == tid1 && ti[1].tid == tidx, "by tid");
    if (ti && n == 2) {
        ok(ti[0].ptid == tidx && !strcmp(ti[0].name, "worker") && ti[0].pid == getpid(),
           "the first with its parent, name and pid");
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        is(ti[0].host, host, "and its host name");
        ok(ti[1].ptid == 0 && !strcmp(ti[1].name, "") && ti[1].pid == 4242 && ti[1].flags == 0
           && !strcmp(ti[1].host, "nodeX"), "the raw one: no parent, no name, pid 4242, nodeX");
    } else {
        fail("records");
        fail("records");
        fail("records");
    }
    free(ti);
    cmp_ok(gimpi_groups_tasks(q, "nodeX", &ti, &n), "==", 1, "TASKS of nodeX: 1 task");
    ok(ti && n == 1 && ti[0].tid == tidx, "the raw one");
    free(ti);
    cmp_ok(gimpi_groups_tasks(q, "nohost", &ti, &n), "==", 0, "TASKS of an unknown host: 0");
    ok(ti && n == 0, "an empty list");
    free(ti);
    char longhost[300];
    memset(longhost, 'h', sizeof longhost - 1);
    longhost[sizeof longhost - 1] = 0;
    cmp_ok(gimpi_groups_tasks(q, longhost, &ti, &n), "==", GIMPI_EBADPARAM,
           "a host over 255 bytes: BadParam");
    gdt_dealer_close(raw, zctx);
    rc = 0;
    for (int64_t end = tl_now_ms() + WAIT_MS; tl_now_ms() < end; s_nap()) {
        rc = gimpi_groups_tasks(q, "nodeX", &ti, &n);
        free(ti);
        if (rc == 0)
            break;
    }
    cmp_ok(rc, "==", 0, "the raw task's connection closed: TASKS no longer lists it");
    gimpi_groups_destroy(&t1);
    gimpi_groups_destroy(&q);
}

/*  The relay: requests answered by a manager polling in this thread. */
static void test_relay(const char *ep)
{
    gimpi_groups_t *m = gimpi_groups_new(ep, NULL);
    cmp_ok(s_set_one(m, "h"), "==", 0, "a manager");
    cmp_ok(gimpi_groups_fd(m), ">=", 0, "its fd");
    int tok = 0;
    void *p = NULL;
    size_t len = 0;
    cmp_ok(gimpi_groups_mgr_next(m, &tok, &p, &len), "==", 0, "mgr_next: nothing yet");

    s_req_t r = { .ep = ep, .req = "spawn a.out", .timeout_ms = WAIT_MS };
    pthread_t th;
    pthread_create(&th, NULL, s_req_thread, &r);
    cmp_ok(s_mgr_wait(m, &tok, &p, &len), "==", 1, "the manager gets the request");
    ok(len == 11 && p && !memcmp(p, "spawn a.out", 11), "with its payload");
    cmp_ok(tok, ">", 0, "and a token (%d)", tok);
    free(p);
    cmp_ok(gimpi_groups_mgr_reply(m, tok, 7, "done", 4), "==", 0, "mgr_reply");
    pthread_join(th, NULL);
    cmp_ok(r.status, "==", 7, "the requester gets the manager's status");
    is(r.rep, "done", "and its answer");
    cmp_ok(gimpi_groups_mgr_reply(m, tok, 7, "done", 4), "==", GIMPI_ENOTASK,
           "a second VMREP of the same token: NoTask");

    r = (s_req_t){ .ep = ep, .req = "bad", .timeout_ms = WAIT_MS };
    pthread_create(&th, NULL, s_req_thread, &r);
    cmp_ok(s_mgr_wait(m, &tok, &p, &len), "==", 1, "a second request");
    free(p);
    cmp_ok(gimpi_groups_mgr_reply(m, tok, GIMPI_ENOFILE, "ignored", 7), "==", 0,
           "answered with an error");
    pthread_join(th, NULL);
    cmp_ok(r.status, "==", GIMPI_ENOFILE, "the requester gets the error");
    is(r.rep, "", "without a payload");

    /* the VMWAIT's answer arrives while the manager waits for another reply */
    cmp_ok(gimpi_groups_mgr_next(m, &tok, &p, &len), "==", 0, "a VMWAIT outstanding");
    void *zctx, *raw = gdt_dealer(ep, &zctx);
    int rawtid = s_register_raw(raw, "nodeR", 1);
    cmp_ok(rawtid, ">", 0, "a raw requester registers (its end shows in LOOKUP)");
    gd_frame_t pl = { (const uint8_t *)"early", 5 };
    s_send_raw(raw, GD_VMREQ, 1, &pl, 1);
    cmp_ok(s_raw(raw, GD_PING, NULL, 0), "==", 0, "a raw VMREQ, groupd has it (PING after)");
    void *blob;
    cmp_ok(gimpi_groups_hosts(m, &blob, &len), "==", 1, "the manager asks HOSTS meanwhile");
    free(blob);
    cmp_ok(gimpi_groups_mgr_next(m, &tok, &p, &len), "==", 1,
           "mgr_next still has the request that came during HOSTS");
    ok(len == 5 && p && !memcmp(p, "early", 5), "its payload");
    free(p);
    cmp_ok(gimpi_groups_mgr_reply(m, tok, 3, "late", 4), "==", 0, "answered");
    uint32_t reqid = 0;
    gd_multipart_t mp;
    int st = s_recv_raw(raw, WAIT_MS, &reqid, &mp);
    ok(st == 3 && reqid == 1 && mp.nparts == 4 && mp.frames[3].len == 4
       && !memcmp(mp.frames[3].data, "late", 4), "the raw requester has status 3 and 'late'");
    gd_multipart_close(&mp);

    /* queue limits: 16 per connection */
    cmp_ok(gimpi_groups_mgr_next(m, &tok, &p, &len), "==", 0, "a VMWAIT outstanding again");
    for (uint32_t k = 1; k <= GD_VM_MAX_PER_CONN + 1; k++)
        s_send_raw(raw, GD_VMREQ, 100 + k, &pl, 1);
    st = s_recv_raw(raw, WAIT_MS, &reqid, NULL);
    ok(st == GIMPI_EOUTOFRES && reqid == 100 + GD_VM_MAX_PER_CONN + 1,
       "the 17th VMREQ of one connection: OutOfRes at once");
    int handed = s_mgr_wait(m, &tok, &p, &len);
    free(p);
    cmp_ok(handed, "==", 1, "the manager has the first");
    /* a requester gone before its answer: its end is handled in one step, so once LOOKUP
       says NoTask its requests are gone too */
    gdt_dealer_close(raw, zctx);
    gimpi_task_info_t info;
    int rc = 0;
    for (int64_t end = tl_now_ms() + WAIT_MS; tl_now_ms() < end; s_nap())
        if ((rc = gimpi_groups_lookup_only(m, rawtid, &info)) == GIMPI_ENOTASK)
            break;
    cmp_ok(rc, "==", GIMPI_ENOTASK, "the raw requester's connection closed");
    cmp_ok(gimpi_groups_mgr_reply(m, tok, 0, "x", 1), "==", GIMPI_ENOTASK,
           "the VMREP for a requester that is gone: NoTask");
    cmp_ok(gimpi_groups_mgr_next(m, &tok, &p, &len), "==", 0,
           "its 15 queued requests are dropped (a VMWAIT parked)");
    raw = gdt_dealer(ep, &zctx);
    gd_frame_t fresh = { (const uint8_t *)"fresh", 5 };
    s_send_raw(raw, GD_VMREQ, 5, &fresh, 1);
    cmp_ok(s_mgr_wait(m, &tok, &p, &len), "==", 1, "the next request reaches the manager");
    ok(len == 5 && p && !memcmp(p, "fresh", 5), "a new requester's, not a dropped one");
    free(p);
    gimpi_groups_mgr_reply(m, tok, 0, NULL, 0);
    st = s_recv_raw(raw, WAIT_MS, &reqid, &mp);
    ok(st == 0 && reqid == 5 && mp.nparts == 4 && mp.frames[3].len == 0,
       "an empty answer with status 0");
    gd_multipart_close(&mp);
    gdt_dealer_close(raw, zctx);

    /* 1024 in all: 64 connections of 16 */
    void *zc = zmq_ctx_new();
    void *socks[65];
    for (int c = 0; c < 65; c++) {
        socks[c] = gdt_dealer_in(zc, ep);
        for (uint32_t k = 1; c < 64 && k <= GD_VM_MAX_PER_CONN; k++)
            s_send_raw(socks[c], GD_VMREQ, k, &pl, 1);
    }
    for (int c = 0; c < 64; c++)
        s_raw(socks[c], GD_PING, NULL, 0);                  /* groupd has them all */
    int full = s_raw(socks[64], GD_VMREQ, &pl, 1);
    cmp_ok(full, "==", GIMPI_EOUTOFRES, "1024 requests pending in all: the next is OutOfRes");
    for (int c = 0; c < 65; c++)
        gd_sock_destroy(&socks[c], NULL);
    zmq_ctx_term(zc);
    gimpi_groups_destroy(&m);
}

/*  A manager that dies with requests pending fails them; the slot is free again. */
static void test_manager_death(const char *ep)
{
    int pfd[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pfd) < 0) {
        fail("socketpair");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        alarm(60);
        gimpi_groups_t *m = gimpi_groups_new(ep, NULL);
        if (s_take_manager(m, "x") != 0 || write(pfd[1], "R", 1) != 1)
            _exit(1);
        int tok;
        void *p;
        size_t len;
        if (s_mgr_wait(m, &tok, &p, &len) == 1 && write(pfd[1], "G", 1) == 1)
            _exit(0);           /* dies without answering (its sockets close) */
        _exit(2);
    }
    close(pfd[1]);
    char c = 0;
    ok(tl_recv_exact(pfd[0], &c, 1, WAIT_MS) == 1 && c == 'R', "a manager in a child process");
    gimpi_groups_t *g = gimpi_groups_new(ep, NULL);
    void *rep;
    size_t len;
    int64_t t0 = tl_now_ms();
    int rc = gimpi_groups_vmreq(g, "orphan", 6, &rep, &len, 2 * WAIT_MS);
    int64_t took = tl_now_ms() - t0;
    cmp_ok(rc, "==", GIMPI_ESYSERR, "its death fails the pending request: SysErr");
    cmp_ok(took, "<", WAIT_MS, "at once, not at the timeout (%lld ms)", (long long)took);
    int st = tl_wait(&(tl_child_t){ .pid = pid, .out = -1, .err = -1 }, WAIT_MS);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the manager had the request");
    close(pfd[0]);
    cmp_ok(gimpi_groups_vmreq(g, "again", 5, &rep, &len, 5000), "==", GIMPI_ENOHOST,
           "no manager now: NoHost");
    /* a requester's own timeout leaves its object usable */
    gimpi_groups_t *m = gimpi_groups_new(ep, NULL);
    cmp_ok(s_set_one(m, "y"), "==", 0, "a new manager");
    t0 = tl_now_ms();
    rc = gimpi_groups_vmreq(g, "slow", 4, &rep, &len, 300);
    cmp_ok(rc, "==", GIMPI_ESYSERR, "a request the manager does not answer in time: SysErr");
    cmp_ok(tl_now_ms() - t0, ">=", 290, "after the timeout");
    int tok;
    void *p;
    cmp_ok(s_mgr_wait(m, &tok, &p, &len), "==", 1, "the manager has it");
    free(p);
    cmp_ok(gimpi_groups_mgr_reply(m, tok, 1, "late", 4), "==", 0, "and answers late");
    s_req_t r = { .g = g, .req = "next", .timeout_ms = WAIT_MS };
    pthread_t th;
    pthread_create(&th, NULL, s_req_thread, &r);
    cmp_ok(s_mgr_wait(m, &tok, &p, &len), "==", 1, "the next request");
    free(p);
    gimpi_groups_mgr_reply(m, tok, 2, "fresh", 5);
    pthread_join(th, NULL);
    ok(r.status == 2 && !strcmp(r.rep, "fresh"), "the next request gets its own answer, not "
       "the late one (%d '%s')", r.status, r.rep);
    gimpi_groups_destroy(&g);
    gimpi_groups_destroy(&m);
}

/*  TASK_EXIT: of a group member, of a reserved tid that never registered. */
static void test_task_exit(const char *ep)
{
    gimpi_groups_t *m = gimpi_groups_new(ep, NULL);
    cmp_ok(s_take_manager(m, "m"), "==", 0, "a manager");
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL), *b = gimpi_groups_new(ep, NULL);
    cmp_ok(gimpi_group_join(a, "vm"), "==", 0, "a joins");
    cmp_ok(gimpi_group_join(b, "vm"), "==", 1, "b joins");
    int tb = gimpi_group_mytid(b);
    cmp_ok(gimpi_groups_task_exit(m, tb, 0), "==", 0, "TASK_EXIT of b");
    void *zctx, *raw = gdt_dealer(ep, &zctx);
    gd_frame_t g = { (const uint8_t *)"vm", 2 };
    cmp_ok(s_raw(raw, GD_GSIZE, &g, 1), "==", 1, "the group has shrunk at once");
    gimpi_task_info_t info;
    cmp_ok(gimpi_group_lookup(a, tb, &info), "==", GIMPI_ENOTASK, "LOOKUP of b: NoTask");
    cmp_ok(gimpi_group_join(b, "vm2"), "==", GIMPI_ENOTASK, "b's own later JOIN: NoTask");
    cmp_ok(gimpi_groups_task_exit(m, tb, 0), "==", GIMPI_ENOTASK, "a second TASK_EXIT: NoTask");
    char tok[GIMPI_GROUPS_TOKEN_LEN + 1];
    int base = gimpi_groups_reserve_token(a, "", 2, tok);
    cmp_ok(gimpi_group_lookup(a, base + 1, &info), "==", GIMPI_ENOTFOUND,
           "a reserved tid before it registers: NotFound (ask again)");
    cmp_ok(gimpi_groups_task_exit(m, base + 1, 9), "==", 0, "TASK_EXIT of it");
    cmp_ok(gimpi_group_lookup(a, base + 1, &info), "==", GIMPI_ENOTASK, "then LOOKUP: NoTask");
    gimpi_groups_t *late = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid_token(late, base + 1, tok);
    cmp_ok(gimpi_group_mytid(late), "==", GIMPI_EBADPARAM, "and it can no longer register");
    gimpi_groups_destroy(&late);
    late = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid_token(late, base + 2, tok);
    cmp_ok(gimpi_group_mytid(late), "==", base + 2, "its sibling still can");
    gimpi_groups_destroy(&late);
    cmp_ok(gimpi_groups_task_exit(m, 0x7fff0000, 0), "==", GIMPI_ENOTASK,
           "TASK_EXIT of an unknown tid: NoTask");
    gdt_dealer_close(raw, zctx);
    gimpi_groups_destroy(&a);
    gimpi_groups_destroy(&b);
    gimpi_groups_destroy(&m);
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(300);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    test_hosts(d.endpoint);
    test_tasks(d.endpoint);
    test_relay(d.endpoint);
    test_manager_death(d.endpoint);
    test_task_exit(d.endpoint);
    test_launcher_token();
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "groupd healthy, exits 0");
    gdt_cleanup(&d);
    done_testing();
}
