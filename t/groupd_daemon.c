/*  t/groupd_daemon.c — the groupd program over real sockets, spoken to frame by frame
 *  from a raw DEALER: it prints its endpoint, refuses a second instance on the same
 *  endpoint, answers bad requests (unknown command, short and extra frames, oversize and
 *  NUL-carrying names, wrong version, garbage) with error replies and keeps serving,
 *  publishes events with versions (and a MARK when a subscription arrives), removes a
 *  task whose connection closes, and exits 0 on SIGTERM.  --cpu puts all its threads on
 *  one CPU (by default the one it starts on), `none` leaves them free, a bad value is
 *  refused.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

/*  Sends a request built from a header and argument frames; returns the reply status
 *  (or 1000 on no reply / undecodable reply), the reply kind in *kind. */
static int s_call(void *sock, uint8_t cmd, uint8_t version, const gd_frame_t *args, int nargs,
                  uint8_t *kind, uint64_t *ver)
{
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, cmd, 4242);
    hdr[2] = version;
    gd_frame_t f[24] = { { hdr, sizeof hdr } };
    for (int k = 0; k < nargs; k++)
        f[1 + k] = args[k];
    gd_multipart_t mp;
    if (gdt_exchange(sock, f, 1 + nargs, &mp, 20000) < 0)
        return 1000;
    int status = 1000;
    if (mp.nparts >= 3 && mp.frames[1].len == 4) {
        status = (int32_t)gimpi_be_get32(mp.frames[1].data);
        if (kind)
            *kind = mp.frames[0].len == GD_HDR_SIZE ? mp.frames[0].data[3] : 0;
        if (ver && mp.frames[2].len == 8)
            *ver = gimpi_be_get64(mp.frames[2].data);
    }
    gd_multipart_close(&mp);
    return status;
}

/*  REGISTER with a given ospid. */
static int s_register(void *s)
{
    static const uint8_t proc[24] = { 0 }, addr[16] = { 0 };
    uint8_t port[4], pid[4];
    gimpi_be_put32(port, 0);
    gimpi_be_put32(pid, (uint32_t)getpid());
    gd_frame_t a[5] = { { proc, 24 }, { addr, 16 }, { port, 4 }, { pid, 4 },
                        { (const uint8_t *)"h", 1 } };
    return s_call(s, GD_REGISTER, GD_VERSION, a, 5, NULL, NULL);
}

/*  The Cpus_allowed_list of every thread of pid: the number of threads whose list
 *  equals the first one's (copied to list), or -1 if some thread differs. */
static int s_thread_cpus(pid_t pid, char *list, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    int n = 0;
    list[0] = 0;
    struct dirent *de;
    while ((de = readdir(dir))) {
        if (de->d_name[0] == '.')
            continue;
        char st[320], line[256], cpus[256] = "";
        snprintf(st, sizeof st, "/proc/%d/task/%s/status", (int)pid, de->d_name);
        FILE *f = fopen(st, "r");
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "Cpus_allowed_list: %255s", cpus) == 1)
                break;
        if (f)
            fclose(f);
        if (n++ == 0)
            snprintf(list, size, "%s", cpus);
        else if (strcmp(list, cpus))
            n = -1000;
    }
    closedir(dir);
    return n < 0 ? -1 : n;
}

/*  --cpu: pinned by default, to a given CPU, or not at all; bad values refused. */
static void s_test_cpu(void)
{
    char list[256], mine[256];
    gdt_daemon_t p;
    ok(gdt_start(&p, NULL) == 0, "groupd started (default placement)");
    int n = s_thread_cpus(p.child.pid, list, sizeof list);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    s_thread_cpus(getpid(), mine, sizeof mine);     /* groupd.c: no pin in these builds */
    ok(n >= 2 && strcmp(list, mine) == 0, "sanitizer build: by default not pinned (%s)", list);
#else
    ok(n >= 2 && list[0] && !strpbrk(list, ",-"),
       "by default all %d threads on one CPU (%s)", n, list);
#endif
    gdt_stop(&p);
    gdt_cleanup(&p);
    ok(gdt_start(&p, "--cpu=0") == 0, "groupd --cpu=0 started");
    n = s_thread_cpus(p.child.pid, list, sizeof list);
    ok(n >= 2 && strcmp(list, "0") == 0, "all %d threads on CPU 0 (%s)", n, list);
    gdt_stop(&p);
    gdt_cleanup(&p);
    ok(gdt_start(&p, "--cpu=none") == 0, "groupd --cpu=none started");
    n = s_thread_cpus(p.child.pid, list, sizeof list);
    s_thread_cpus(getpid(), mine, sizeof mine);
    ok(n >= 2 && strcmp(list, mine) == 0, "its threads keep our CPUs (%s = %s)", list, mine);
    gdt_stop(&p);
    gdt_cleanup(&p);
    char bin[4096];
    snprintf(bin, sizeof bin, "%s", tl_prog("groupd/groupd"));
    char *argv[] = { bin, (char *)"--foreground", (char *)"--cpu", (char *)"x", NULL };
    tl_child_t c;
    ok(tl_spawn(argv, &c) == 0, "groupd --cpu x spawned");
    int st = tl_wait(&c, 20000);
    char err[512] = "";
    tl_read_all(c.err, err, sizeof err, 5000);
    err[strcspn(err, "\n")] = 0;
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(err, "bad --cpu"),
       "--cpu x: exit 2 with a message (%s)", err);
    tl_child_close(&c);
}

/*  An ipc endpoint in directories that do not exist yet: groupd makes them (0700). */
static void s_test_fresh_dir(void)
{
    char dir[] = "/tmp/gdfresh-XXXXXX", ep[600], sub[300];
    ok(mkdtemp(dir) != NULL, "scratch directory");
    snprintf(sub, sizeof sub, "%s/a/b", dir);
    snprintf(ep, sizeof ep, "ipc://%s/gd", sub);
    gdt_daemon_t p;
    ok(gdt_start_ep(&p, ep, NULL) == 0, "groupd on %s (directories missing) started", ep);
    struct stat st;
    ok(stat(sub, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
       "it made %s, mode 0700", sub);
    gdt_stop(&p);
    gdt_cleanup(&p);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ok(system(cmd) == 0, "scratch directory removed");
}

/*  --max-unregistered: a connection that has not registered gets N requests a second,
 *  PvmOutOfRes for the rest of that second, and service again in the next. */
static void s_test_unreg_rate(void)
{
    gdt_daemon_t d;
    if (gdt_start(&d, "--max-unregistered=5") < 0)
        BAIL_OUT("groupd did not start");
    void *zctx = zmq_ctx_new();
    void *s = gdt_dealer_in(zctx, d.endpoint);
    int served = 0, refused = 0;
    for (int i = 0; i < 20; i++) {
        int rc = s_call(s, GD_PING, GD_VERSION, NULL, 0, NULL, NULL);
        served += rc == 0;
        refused += rc == GIMPI_EOUTOFRES;
    }
    ok(served >= 5 && refused >= 1 && served + refused == 20,
       "unregistered, 20 requests at once: %d served, %d PvmOutOfRes (5 a second)", served,
       refused);
    int64_t t0 = tl_now_ms();
    int rc = GIMPI_EOUTOFRES;
    while (rc == GIMPI_EOUTOFRES && tl_now_ms() - t0 < 5000)
        rc = s_call(s, GD_PING, GD_VERSION, NULL, 0, NULL, NULL);
    cmp_ok(rc, "==", 0, "served again in a later second");
    cmp_ok(s_register(s), ">", 0, "it may still register");
    int all = 0;
    for (int i = 0; i < 20; i++)
        all += s_call(s, GD_PING, GD_VERSION, NULL, 0, NULL, NULL) == 0;
    cmp_ok(all, "==", 20, "registered: no limit");
    gd_sock_destroy(&s, NULL);
    zmq_ctx_term(zctx);
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "that groupd exits 0");
    gdt_cleanup(&d);
}

/*  What the tests of one groupd share: the daemon, a ZeroMQ context, a registered task's
 *  DEALER (its tid), the group "grp" and a SUB on the event endpoint. */
typedef struct {
    gdt_daemon_t d;
    void *zctx;
    void *s;
    int tid;
    gd_frame_t g;
    void *sub;
} fix_t;

/*  A second groupd on the same endpoint refuses, saying why. */
static void s_test_second(fix_t *fx)
{
    tl_child_t second;
    char bin[4096];
    snprintf(bin, sizeof bin, "%s", tl_prog("groupd/groupd"));
    char *argv[] = { bin, (char *)"--foreground", (char *)"--endpoint", fx->d.endpoint, NULL };
    ok(tl_spawn(argv, &second) == 0, "second groupd spawned");
    int st = tl_wait(&second, 20000);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) != 0, "second groupd exits non-zero");
    char err[1024];
    tl_read_all(second.err, err, sizeof err, 5000);
    ok(strstr(err, "already serving") != NULL, "with a clear message: %s", err);
    tl_child_close(&second);
}

/*  PING, a join before REGISTER, REGISTER twice: fx->s becomes a registered task. */
static void s_test_register(fix_t *fx)
{
    fx->s = gdt_dealer_in(fx->zctx, fx->d.endpoint);
    uint8_t kind = 0;
    cmp_ok(s_call(fx->s, GD_PING, GD_VERSION, NULL, 0, &kind, NULL), "==", 0, "PING answered");
    cmp_ok(kind, "==", GD_PING | GD_REPLY_FLAG, "reply kind");
    cmp_ok(s_call(fx->s, GD_JOIN, GD_VERSION, &fx->g, 1, NULL, NULL), "==", GIMPI_ENOTASK,
           "join before REGISTER: NoTask");
    fx->tid = s_register(fx->s);
    cmp_ok(fx->tid, ">", 0, "registered, tid 0x%x", (unsigned)fx->tid);
    cmp_ok(s_register(fx->s), "==", fx->tid, "registering again gives the same tid");
}

/*  Requests that do not decode as one (unknown command, wrong version, missing, extra,
 *  oversize, NUL-carrying, short and empty frames) get error replies. */
static void s_test_bad_requests(fix_t *fx)
{
    void *s = fx->s;
    uint8_t kind = 0;
    cmp_ok(s_call(s, 0x7E, GD_VERSION, NULL, 0, &kind, NULL), "==", GIMPI_ENOTIMPL,
           "unknown command: NotImpl");
    cmp_ok(kind, "==", 0x7E | GD_REPLY_FLAG, "echoing its code");
    cmp_ok(s_call(s, GD_PING, GD_VERSION + 1, NULL, 0, NULL, NULL), "==", GIMPI_EBADVERSION,
           "wrong version: BadVersion");
    cmp_ok(s_call(s, GD_JOIN, GD_VERSION, NULL, 0, NULL, NULL), "==", GIMPI_EBADMSG,
           "short (missing frame): BadMsg");
    gd_frame_t two[2] = { fx->g, fx->g };
    cmp_ok(s_call(s, GD_JOIN, GD_VERSION, two, 2, NULL, NULL), "==", GIMPI_EBADMSG,
           "extra frame: BadMsg");
    char *big = malloc(GD_MAX_NAME + 100);
    memset(big, 'x', GD_MAX_NAME + 100);
    gd_frame_t bigf = { (const uint8_t *)big, GD_MAX_NAME + 100 };
    cmp_ok(s_call(s, GD_JOIN, GD_VERSION, &bigf, 1, NULL, NULL), "==", GIMPI_EBADMSG,
           "oversize name: BadMsg");
    free(big);
    gd_frame_t nul = { (const uint8_t *)"a\0b", 3 };
    cmp_ok(s_call(s, GD_JOIN, GD_VERSION, &nul, 1, NULL, NULL), "==", GIMPI_EBADMSG,
           "NUL in a name: BadMsg");
    gd_frame_t shortint[2] = { fx->g, { (const uint8_t *)"ab", 2 } };
    cmp_ok(s_call(s, GD_GETTID, GD_VERSION, shortint, 2, NULL, NULL), "==", GIMPI_EBADMSG,
           "2-byte Int4: BadMsg");
    gd_frame_t empty = { (const uint8_t *)"", 0 };
    cmp_ok(s_call(s, GD_JOIN, GD_VERSION, &empty, 1, NULL, NULL), "==", GIMPI_ENULLGROUP,
           "empty name: NullGroup");
}

/*  A garbage header and a 200-frame request get BadMsg, and groupd keeps serving. */
static void s_test_garbage(fix_t *fx)
{
    gd_frame_t junk = { (const uint8_t *)"garbage!!", 9 };
    gd_multipart_t mp;
    int rc = gdt_exchange(fx->s, &junk, 1, &mp, 20000);
    ok(rc == 0 && mp.nparts == 3 && mp.frames[0].data[3] == GD_BAD_KIND
       && (int32_t)gimpi_be_get32(mp.frames[1].data) == GIMPI_EBADMSG, "garbage header: BadMsg");
    if (rc == 0)
        gd_multipart_close(&mp);
    /* 200 frames: read, dropped beyond the bound, answered */
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_PING, 1);
    gd_frame_t many[200];
    many[0] = (gd_frame_t){ hdr, sizeof hdr };
    for (int k = 1; k < 200; k++)
        many[k] = (gd_frame_t){ (const uint8_t *)"z", 1 };
    rc = gdt_exchange(fx->s, many, 200, &mp, 20000);
    ok(rc == 0 && mp.nparts == 3 && (int32_t)gimpi_be_get32(mp.frames[1].data) == GIMPI_EBADMSG,
       "200-frame request: BadMsg");
    if (rc == 0)
        gd_multipart_close(&mp);
    cmp_ok(s_call(fx->s, GD_PING, GD_VERSION, NULL, 0, NULL, NULL), "==", 0, "still serving");
}

/*  The next event on sub (at most 20 s): 1 with it in ev (kind 0 when it does not
 *  decode) and its topic's first bytes in topic (NUL-terminated), or 0 when none came. */
static int s_next_on(void *sub, gd_msg_t *ev, char *topic, size_t size)
{
    zmq_pollitem_t item = { sub, 0, ZMQ_POLLIN, 0 };
    gd_multipart_t mp;
    if (zmq_poll(&item, 1, 20000) != 1 || gd_multipart_recv(sub, &mp, 0) < 0)
        return 0;
    if (gd_event_decode(mp.frames, mp.nparts, ev) != GD_OK)
        memset(ev, 0, sizeof *ev);
    size_t n = mp.nparts && mp.frames[0].len < size ? mp.frames[0].len : 0;
    memcpy(topic, mp.frames[0].data, n);
    topic[n] = 0;
    gd_multipart_close(&mp);
    return 1;
}

/*  The next event on fx->sub (see s_next_on). */
static int s_next_event(fix_t *fx, gd_msg_t *ev)
{
    char topic[64];
    return s_next_on(fx->sub, ev, topic, sizeof topic);
}

/*  A SUB of the event endpoint subscribed to topic. */
static void *s_sub(fix_t *fx, const char *topic)
{
    char pub[700];
    snprintf(pub, sizeof pub, "%s.pub", fx->d.endpoint);
    gd_sock_opts_t so;
    gd_sock_opts_init(&so, GD_SOCK_TASK_SUB, pub);
    void *sub = gd_sock_new(fx->zctx, &so, NULL, NULL, 0);
    if (sub && gd_sock_subscribe(sub, topic, strlen(topic)) < 0)
        gd_sock_destroy(&sub, NULL);
    return sub;
}

/*  groupd builds no event for a group nobody subscribed to; a subscriber that comes later
 *  starts from its MARK, which carries the group's version, and the next change follows
 *  on from it.  A subscription that is a prefix of a group's topic still gets its events,
 *  and after the last subscriber has gone and a new one comes, the same holds again. */
static void s_test_late_subscriber(fix_t *fx)
{
    gd_frame_t q = { (const uint8_t *)"quiet", 5 };
    void *s2 = gdt_dealer_in(fx->zctx, fx->d.endpoint);
    s_register(s2);
    uint64_t v1 = 0, v2 = 0, v3 = 0, v4 = 0;
    cmp_ok(s_call(fx->s, GD_JOIN, GD_VERSION, &q, 1, NULL, &v1), "==", 0, "join 'quiet'");
    cmp_ok(s_call(s2, GD_JOIN, GD_VERSION, &q, 1, NULL, &v2), "==", 1, "task 2 joins 'quiet'");
    void *sub = s_sub(fx, "Gquiet");
    gd_msg_t ev;
    char topic[64];
    ok(sub && s_next_on(sub, &ev, topic, sizeof topic) && ev.kind == GD_EV_MARK
       && ev.values[1].q == v2 && !strcmp(topic, "Gquiet"),
       "a late subscriber's MARK carries the version of the last change (v%llu)",
       (unsigned long long)v2);
    /* the prefix subscriber only after that MARK is out, or it would get it too */
    void *pre = s_sub(fx, "Gqu");
    ok(pre && s_next_on(pre, &ev, topic, sizeof topic) && ev.kind == GD_EV_MARK
       && !strcmp(topic, "Gqu"), "a prefix subscription gets its MARK");
    cmp_ok(s_call(s2, GD_LEAVE, GD_VERSION, &q, 1, NULL, &v3), "==", 0, "task 2 leaves");
    ok(s_next_on(sub, &ev, topic, sizeof topic) && ev.kind == GD_EV_LEAVE
       && ev.values[0].q == v2 && ev.values[1].q == v3, "its EV_LEAVE follows on from the MARK");
    ok(s_next_on(pre, &ev, topic, sizeof topic) && ev.kind == GD_EV_LEAVE
       && ev.values[1].q == v3 && !strcmp(topic, "Gquiet"),
       "the prefix subscription gets it too");
    gd_sock_destroy(&sub, NULL);
    gd_sock_destroy(&pre, NULL);
    /* nobody listens now: the next change goes to no one; a new subscriber starts again */
    cmp_ok(s_call(s2, GD_JOIN, GD_VERSION, &q, 1, NULL, &v4), "==", 1, "task 2 joins again");
    sub = s_sub(fx, "Gquiet");
    ok(sub && s_next_on(sub, &ev, topic, sizeof topic) && ev.kind == GD_EV_MARK
       && ev.values[1].q == v4, "after the last subscriber went, a new one's MARK: v%llu",
       (unsigned long long)v4);
    cmp_ok(s_call(s2, GD_LEAVE, GD_VERSION, &q, 1, NULL, &v3), "==", 0, "task 2 leaves again");
    ok(s_next_on(sub, &ev, topic, sizeof topic) && ev.kind == GD_EV_LEAVE
       && ev.values[0].q == v4 && ev.values[1].q == v3, "and the next change follows on");
    cmp_ok(s_call(fx->s, GD_LEAVE, GD_VERSION, &q, 1, NULL, NULL), "==", 0, "leave 'quiet'");
    gd_sock_destroy(&sub, NULL);
    gd_sock_destroy(&s2, NULL);
}

/*  Events: a SUB gets a MARK once its subscription is live, then the EV_JOIN of a join,
 *  with the reply's version. */
static void s_test_events(fix_t *fx)
{
    char pub[700];
    snprintf(pub, sizeof pub, "%s.pub", fx->d.endpoint);
    gd_sock_opts_t so;
    gd_sock_opts_init(&so, GD_SOCK_TASK_SUB, pub);
    fx->sub = gd_sock_new(fx->zctx, &so, NULL, NULL, 0);
    ok(fx->sub && gd_sock_subscribe(fx->sub, "Ggrp", 4) == 0,
       "a task's SUB on the event endpoint");
    gd_msg_t ev;
    ok(s_next_event(fx, &ev) && ev.kind == GD_EV_MARK,
       "a MARK arrives once the subscription is live");
    uint64_t v = 0;
    cmp_ok(s_call(fx->s, GD_JOIN, GD_VERSION, &fx->g, 1, NULL, &v), "==", 0, "join 'grp' -> 0");
    ok(s_next_event(fx, &ev) && ev.kind == GD_EV_JOIN && ev.values[0].q == 0
       && ev.values[1].q == v && ev.values[3].i == fx->tid,
       "EV_JOIN published: created (prev 0), version as in the reply, our tid");
}

/*  STAT lists the group and its member. */
static void s_test_stat(fix_t *fx)
{
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_STAT, 5);
    gd_frame_t f[2] = { { hdr, sizeof hdr }, { (const uint8_t *)"", 0 } };
    gd_multipart_t mp;
    int rc = gdt_exchange(fx->s, f, 2, &mp, 20000);
    gd_groupstat_t gs;
    ok(rc == 0 && mp.nparts == 4 && gd_groupstat_decode(mp.frames[3].data, mp.frames[3].len,
                                                        &gs) == GD_OK
       && !strcmp(gs.name, "grp") && gs.size == 1 && gs.members[0].tid == fx->tid,
       "STAT lists the group");
    if (rc == 0) {
        gd_groupstat_clear(&gs);
        gd_multipart_close(&mp);
    }
}

/*  A second task's connection closes: it leaves, and EV_EXIT says so. */
static void s_test_exit_event(fix_t *fx)
{
    void *s2 = gdt_dealer_in(fx->zctx, fx->d.endpoint);
    int tid2 = s_register(s2);
    cmp_ok(s_call(s2, GD_JOIN, GD_VERSION, &fx->g, 1, NULL, NULL), "==", 1, "task 2 joins as 1");
    gd_sock_destroy(&s2, NULL);
    int64_t t0 = tl_now_ms();
    int got = 0;
    gd_msg_t ev;
    while (!got && tl_now_ms() - t0 < 20000 && s_next_event(fx, &ev))
        got = ev.kind == GD_EV_EXIT && ev.values[3].i == tid2;
    ok(got, "EV_EXIT published when task 2's connection closed");
    cmp_ok(tl_now_ms() - t0, "<", 1000, "within 1 s (%lld ms)", (long long)(tl_now_ms() - t0));
}

/*  fd recycling: short-lived connections come and go while tasks register on the freed
 *  fd numbers; a late end-of-connection must never remove the new task. */
static void s_test_fd_recycling(fix_t *fx)
{
    enum { NKEEP = 200 };
    void *keep[NKEEP];
    int joined = 0;
    gd_frame_t cg = { (const uint8_t *)"fdchurn", 7 };
    for (int k = 0; k < NKEEP; k++) {
        void *brief = gdt_dealer_in(fx->zctx, fx->d.endpoint);
        s_call(brief, GD_PING, GD_VERSION, NULL, 0, NULL, NULL);
        gd_sock_destroy(&brief, NULL);
        keep[k] = gdt_dealer_in(fx->zctx, fx->d.endpoint);
        if (s_register(keep[k]) > 0
            && s_call(keep[k], GD_JOIN, GD_VERSION, &cg, 1, NULL, NULL) >= 0)
            joined++;
    }
    cmp_ok(joined, "==", NKEEP, "%d tasks registered on recycled fds and joined", NKEEP);
    cmp_ok(s_call(fx->s, GD_GSIZE, GD_VERSION, &cg, 1, NULL, NULL), "==", NKEEP,
           "none of them was taken for a closed connection");
    for (int k = 0; k < NKEEP; k++)
        gd_sock_destroy(&keep[k], NULL);
    int64_t t1 = tl_now_ms();
    int left = NKEEP;
    while (left > 0 && tl_now_ms() - t1 < 20000)
        left = s_call(fx->s, GD_GSIZE, GD_VERSION, &cg, 1, NULL, NULL);
    cmp_ok(left, "==", GIMPI_ENOGROUP, "all removed when their connections closed");
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(600);         /* a hang is a failure, not a stuck suite */
    fix_t fx = { .g = { (const uint8_t *)"grp", 3 } };
    if (gdt_start(&fx.d, getenv("GDT_EXTRA")) < 0)
        BAIL_OUT("groupd did not start");
    pass("groupd printed its endpoint %s", fx.d.endpoint);
    s_test_second(&fx);
    fx.zctx = zmq_ctx_new();
    s_test_register(&fx);
    s_test_bad_requests(&fx);
    s_test_garbage(&fx);
    s_test_events(&fx);
    s_test_late_subscriber(&fx);
    s_test_stat(&fx);
    s_test_exit_event(&fx);
    s_test_fd_recycling(&fx);
    gd_sock_destroy(&fx.sub, NULL);
    gd_sock_destroy(&fx.s, NULL);
    zmq_ctx_term(fx.zctx);
    int st = gdt_stop(&fx.d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM: exit 0");
    gdt_cleanup(&fx.d);
    s_test_unreg_rate();
    s_test_cpu();
    s_test_fresh_dir();
    done_testing();
}
