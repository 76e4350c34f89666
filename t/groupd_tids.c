/*  t/groupd_tids.c — tid blocks in groupd through the groups client (gimpi_group.h) and raw
 *  frames: RESERVE (fresh blocks, the same base for the same key, bounds checked by the
 *  library and by groupd), REGISTER_TID (a reserved tid taken, refused when held, reused,
 *  or never reserved), and --idle-exit: a groupd that exits once no task is registered and
 *  no RESERVE came for the idle period, not while a task lives, and one started on first
 *  use by the library that does so too.  Every wait is bounded.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

/*  A short pause for bounded state polling (never used to order events). */
static void s_nap(void)
{
    struct timespec ts = { 0, 5 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/*  Waits up to ms for a private groupd to exit on its own (never kills it).  Returns the
 *  wait status, or -1 while it still runs. */
static int s_exited_within(gdt_daemon_t *d, int ms)
{
    int st;
    for (int64_t end = tl_now_ms() + ms;; s_nap()) {
        if (waitpid(d->child.pid, &st, WNOHANG) == d->child.pid) {
            tl_child_close(&d->child);
            d->running = false;
            return st;
        }
        if (tl_now_ms() >= end)
            return -1;
    }
}

/*  One raw request [header][frames] on a fresh DEALER; returns the reply status or 99. */
static int s_raw(const char *ep, uint8_t cmd, const gd_frame_t *body, int nbody)
{
    void *zctx;
    void *s = gdt_dealer(ep, &zctx);
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, cmd, 7);
    gd_frame_t f[8] = { { hdr, sizeof hdr } };
    for (int k = 0; k < nbody && k < 7; k++)
        f[1 + k] = body[k];
    gd_multipart_t mp;
    int status = 99;
    if (gdt_exchange(s, f, 1 + nbody, &mp, 20000) == 0) {
        if (mp.nparts >= 2 && mp.frames[1].len == 4)
            status = (int32_t)gimpi_be_get32(mp.frames[1].data);
        gd_multipart_close(&mp);
    }
    gdt_dealer_close(s, zctx);
    return status;
}

/*  RESERVE and REGISTER_TID against a private groupd. */
static void test_blocks(const char *ep)
{
    gimpi_groups_t *r = gimpi_groups_new(ep, NULL);
    char tok[GIMPI_GROUPS_TOKEN_LEN + 1], tok2[GIMPI_GROUPS_TOKEN_LEN + 1];
    char ftok[GIMPI_GROUPS_TOKEN_LEN + 1];
    int base = gimpi_groups_reserve_token(r, "jobA", 3, tok);
    cmp_ok(base, ">=", 0x40000, "RESERVE('jobA', 3) -> base 0x%x", (unsigned)base);
    cmp_ok(strlen(tok), "==", GIMPI_GROUPS_TOKEN_LEN, "and a token of %d hex digits",
           GIMPI_GROUPS_TOKEN_LEN);
    cmp_ok(gimpi_groups_reserve_token(r, "jobA", 3, tok2), "==", base, "asked again: same base");
    is(tok2, tok, "and the same token");
    gimpi_groups_t *r2 = gimpi_groups_new(ep, NULL);
    cmp_ok(gimpi_groups_reserve(r2, "jobA", 3), "==", base, "another client, same key: same base");
    cmp_ok(gimpi_groups_reserve(r2, "jobA", 2), "==", GIMPI_EMISMATCH, "same key, other n: Mismatch");
    int f1 = gimpi_groups_reserve_token(r2, "", 1, ftok), f2 = gimpi_groups_reserve(r2, NULL, 2);
    cmp_ok(f1, "==", base + 3, "key '' gets a fresh block");
    cmp_ok(f2, "==", f1 + 1, "NULL too");
    cmp_ok(gimpi_groups_reserve(r2, "x", 0), "==", GIMPI_EBADPARAM, "n 0: BadParam");
    cmp_ok(gimpi_groups_reserve(r2, "x", GIMPI_GROUPS_MAX_RESERVE + 1), "==", GIMPI_EBADPARAM,
           "n too big: BadParam");
    char longkey[300];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    cmp_ok(gimpi_groups_reserve(r2, longkey, 1), "==", GIMPI_EBADPARAM, "key > 255 bytes: BadParam");
    uint8_t n[4];
    gimpi_be_put32(n, 0);
    gd_frame_t body[2] = { { (const uint8_t *)"y", 1 }, { n, 4 } };
    cmp_ok(s_raw(ep, GD_RESERVE, body, 2), "==", GIMPI_EBADPARAM, "groupd: n 0 is BadParam");
    gimpi_be_put32(n, (uint32_t)-7);
    cmp_ok(s_raw(ep, GD_RESERVE, body, 2), "==", GIMPI_EBADPARAM, "groupd: n -7 is BadParam");
    cmp_ok(s_raw(ep, GD_RESERVE, body, 1), "==", GIMPI_EBADMSG, "groupd: a frame missing is BadMsg");
    gimpi_be_put32(n, 5);
    int raw = s_raw(ep, GD_RESERVE, body, 2);
    cmp_ok(raw, "==", f2 + 2, "groupd: a raw RESERVE gets the next block");
    cmp_ok(gimpi_group_gsize(r, "nosuch"), "==", GIMPI_ENOGROUP, "a reserving client serves calls");

    gimpi_groups_t *a = gimpi_groups_new(ep, NULL);
    cmp_ok(gimpi_groups_set_tid(a, 0), "==", GIMPI_EBADPARAM, "set_tid(0): BadParam");
    cmp_ok(gimpi_groups_set_tid(a, -4), "==", GIMPI_EBADPARAM, "set_tid(-4): BadParam");
    cmp_ok(gimpi_groups_set_tid_token(a, base + 2, "xyz"), "==", GIMPI_EBADPARAM,
           "set_tid_token with a token that is not one: BadParam");
    gimpi_groups_t *h = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid(h, base + 2);
    cmp_ok(gimpi_group_mytid(h), "==", GIMPI_EDENIED, "base+2 without the token: Denied");
    gimpi_groups_destroy(&h);
    h = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid_token(h, base + 2, ftok);
    cmp_ok(gimpi_group_mytid(h), "==", GIMPI_EDENIED, "with another block's token: Denied");
    gimpi_groups_destroy(&h);
    cmp_ok(gimpi_groups_set_tid_token(a, base + 2, tok), "==", 0, "set_tid_token(base+2)");
    cmp_ok(gimpi_group_mytid(a), "==", base + 2, "registered as base+2");
    cmp_ok(gimpi_groups_set_tid(a, base + 1), "==", GIMPI_EALREADY, "set_tid after registering: Already");
    cmp_ok(gimpi_group_join(a, "tids"), "==", 0, "joins");
    cmp_ok(gimpi_group_gettid(r, "tids", 0), "==", base + 2, "others see base+2 in the group");
    gimpi_task_info_t info;
    cmp_ok(gimpi_group_lookup(r, base + 2, &info), "==", 0, "lookup of base+2");
    cmp_ok(info.ospid, "==", getpid(), "has its OS pid");

    gimpi_groups_t *b = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid(b, base + 2);
    cmp_ok(gimpi_group_mytid(b), "==", GIMPI_EDUPHOST, "the same tid again: DupHost");
    cmp_ok(gimpi_group_join(b, "tids"), "==", GIMPI_ESYSERR, "and the object is dead");
    gimpi_groups_destroy(&b);
    b = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid(b, raw + 100000);
    cmp_ok(gimpi_group_mytid(b), "==", GIMPI_EBADPARAM, "a tid never reserved: BadParam");
    gimpi_groups_destroy(&b);
    gimpi_groups_destroy(&a);
    b = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid_token(b, base + 2, tok);
    cmp_ok(gimpi_group_mytid(b), "==", GIMPI_EBADPARAM, "a tid whose task left: BadParam (never reused)");
    gimpi_groups_destroy(&b);
    b = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid_token(b, f1 + 1, ftok);
    cmp_ok(gimpi_group_mytid(b), "==", f1 + 1, "the fresh block's tid");
    gimpi_groups_t *c = gimpi_groups_new(ep, NULL);
    int plain = gimpi_group_mytid(c);
    cmp_ok(plain, ">", raw + 5, "a plain REGISTER gets a tid past every block (0x%x)", (unsigned)plain);
    gimpi_groups_destroy(&b);
    gimpi_groups_destroy(&c);
    gimpi_groups_destroy(&r);
    gimpi_groups_destroy(&r2);
}

/*  groupd --idle-exit: exits when idle, not while a task lives or a RESERVE is recent. */
static void test_idle_exit(void)
{
    gdt_daemon_t d;
    int64_t t0 = tl_now_ms();
    if (gdt_start(&d, "--idle-exit=1") < 0) {
        fail("groupd --idle-exit=1 did not start");
        return;
    }
    int st = s_exited_within(&d, 20000);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
       "never used: exits 0 on its own (after %lld ms)", (long long)(tl_now_ms() - t0));
    cmp_ok(tl_now_ms() - t0, ">=", 1000, "not before the idle period");
    gdt_cleanup(&d);

    if (gdt_start(&d, "--idle-exit=1") < 0) {
        fail("groupd --idle-exit=1 did not start");
        return;
    }
    gimpi_groups_t *g = gimpi_groups_new(d.endpoint, NULL);
    cmp_ok(gimpi_group_mytid(g), ">", 0, "a task registers");
    ok(s_exited_within(&d, 2500) == -1, "groupd stays while the task lives (2.5 s)");
    cmp_ok(gimpi_group_join(g, "idle"), "==", 0, "and serves it");
    gimpi_groups_destroy(&g);
    int64_t t1 = tl_now_ms();
    st = s_exited_within(&d, 20000);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the task gone: groupd exits 0");
    cmp_ok(tl_now_ms() - t1, ">=", 900, "an idle period after the task left (%lld ms)",
           (long long)(tl_now_ms() - t1));
    gdt_cleanup(&d);

    if (gdt_start(&d, "--idle-exit=2") < 0) {
        fail("groupd --idle-exit=2 did not start");
        return;
    }
    g = gimpi_groups_new(d.endpoint, NULL);
    int64_t t2 = tl_now_ms();
    cmp_ok(gimpi_groups_reserve(g, "k", 2), ">", 0, "a RESERVE");
    gimpi_groups_destroy(&g);
    st = s_exited_within(&d, 20000);
    ok(st != -1 && WIFEXITED(st), "exits after the reservation's idle period");
    cmp_ok(tl_now_ms() - t2, ">=", 1900, "which counts from the RESERVE (%lld ms)",
           (long long)(tl_now_ms() - t2));
    gdt_cleanup(&d);

    if (gdt_start(&d, NULL) < 0) {
        fail("groupd did not start");
        return;
    }
    ok(s_exited_within(&d, 1500) == -1, "without --idle-exit groupd stays");
    st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "until stopped");
    gdt_cleanup(&d);
}

/*  A groupd the library starts on first use runs with an idle exit. */
static void test_autostart_idle(void)
{
    char dir[] = "/tmp/gdidle-XXXXXX", ep[300];
    if (gdt_autostart_setup(dir, ep, sizeof ep) < 0) {
        fail("mkdtemp");
        return;
    }
    setenv("GIMPI_GROUPD_IDLE", "1", 1);
    gimpi_groups_t *g = gimpi_groups_new(ep, NULL);
    cmp_ok(gimpi_group_mytid(g), "==", 0x40001, "first use starts a groupd");
    pid_t pid = gdt_lock_pid(dir, 5000);
    ok(pid > 0, "it runs (pid %d)", (int)pid);
    gimpi_groups_destroy(&g);
    int64_t t0 = tl_now_ms();
    while (pid > 0 && kill(pid, 0) == 0 && tl_now_ms() - t0 < 20000)
        s_nap();
    ok(pid > 0 && kill(pid, 0) < 0, "it exits by itself once idle (%lld ms after the task)",
       (long long)(tl_now_ms() - t0));
    if (pid > 0 && kill(pid, 0) == 0)
        kill(pid, SIGKILL);
    char path[400];
    int left = 0;
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, k ? "gd.pub" : "gd");
        left += access(path, F_OK) == 0;
    }
    cmp_ok(left, "==", 0, "and removes its socket files");
    gdt_autostart_cleanup(dir);
    unsetenv("GIMPI_GROUPD_IDLE");
}

int main(void)
{
    plan(NO_PLAN);
    gtap_watchdog(300);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    test_blocks(d.endpoint);
    int st = gdt_stop(&d);
    ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "groupd healthy, exits 0");
    gdt_cleanup(&d);
    test_idle_exit();
    test_autostart_idle();
    done_testing();
}
