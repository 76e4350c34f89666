/*  t/gimpi_loop.c — tests of the event loop (server/gimpi_loop.c): read and write
 *  readiness on pipes and socket pairs, changing and deleting interest (also from inside
 *  callbacks, including a descriptor that is ready in the same round), hang-up reporting,
 *  one-shot and repeating timers, cancellation, ordering, run/stop and run_once.
 *  Everything is driven by events; timer tests only check lower bounds and counts.
 */
#include "gtap.h"
#include "server/gimpi_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    int calls;
    int last_events;
    int fd_other;               /* a descriptor to delete from the callback */
    char buf[64];
    size_t got;
    int stop_after;
} probe_t;

/*  Reads what is there; stops the loop after stop_after calls. */
static void on_read(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    probe_t *p = arg;
    p->calls++;
    p->last_events = events;
    if (events & GIMPI_LOOP_READ) {
        ssize_t r = read(fd, p->buf + p->got, sizeof p->buf - 1 - p->got);
        if (r > 0)
            p->got += (size_t)r;
        else
            gimpi_loop_fd_del(loop, fd);
    }
    if (p->stop_after && p->calls >= p->stop_after)
        gimpi_loop_stop(loop);
}

/*  Counts write readiness, then drops the write interest. */
static void on_write(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    probe_t *p = arg;
    p->calls++;
    p->last_events = events;
    gimpi_loop_fd_set(loop, fd, 0);
}

/*  Deletes another descriptor and itself. */
static void on_read_delete_other(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)events;
    probe_t *p = arg;
    p->calls++;
    gimpi_loop_fd_del(loop, p->fd_other);
    gimpi_loop_fd_del(loop, fd);
}

/*  Read/write readiness and interest changes on a pipe. */
static void test_fds(void)
{
    gimpi_loop_t *loop = gimpi_loop_new();
    ok(loop != NULL, "loop created");
    int pfd[2];
    if (pipe(pfd) < 0)
        BAIL_OUT("pipe");
    probe_t r = { 0 }, w = { 0 };
    ok(gimpi_loop_fd_add(loop, pfd[0], GIMPI_LOOP_READ, on_read, &r) == 0, "add read fd");
    ok(gimpi_loop_fd_add(loop, pfd[1], GIMPI_LOOP_WRITE, on_write, &w) == 0, "add write fd");
    cmp_ok(gimpi_loop_fd_events(loop, pfd[0]), "==", GIMPI_LOOP_READ, "interest read");
    cmp_ok(gimpi_loop_fd_add(loop, -1, GIMPI_LOOP_READ, on_read, &r), "==", -1, "fd -1 refused");
    cmp_ok(gimpi_loop_fd_set(loop, 999, GIMPI_LOOP_READ), "==", -1, "set on unknown fd fails");
    cmp_ok(gimpi_loop_fd_del(loop, 999), "==", -1, "del of unknown fd fails");

    int n = gimpi_loop_run_once(loop, 5000);
    cmp_ok(n, "==", 1, "one callback: the pipe is writable, nothing to read");
    ok(w.calls == 1 && (w.last_events & GIMPI_LOOP_WRITE), "write readiness reported");
    cmp_ok(gimpi_loop_fd_events(loop, pfd[1]), "==", 0, "callback dropped write interest");
    cmp_ok(gimpi_loop_run_once(loop, 0), "==", 0, "nothing ready with timeout 0");

    if (write(pfd[1], "hello", 5) != 5)
        BAIL_OUT("write");
    n = gimpi_loop_run_once(loop, 5000);
    ok(n == 1 && r.calls == 1 && r.got == 5 && memcmp(r.buf, "hello", 5) == 0,
       "read readiness delivers the bytes");

    /* interest 0: registered but idle */
    gimpi_loop_fd_set(loop, pfd[0], 0);
    if (write(pfd[1], "x", 1) != 1)
        BAIL_OUT("write");
    cmp_ok(gimpi_loop_run_once(loop, 0), "==", 0, "no callback without interest");
    gimpi_loop_fd_set(loop, pfd[0], GIMPI_LOOP_READ);
    cmp_ok(gimpi_loop_run_once(loop, 5000), "==", 1, "callback again once interest is back");

    /* hang-up: the read callback sees EOF and deletes itself */
    close(pfd[1]);
    gimpi_loop_fd_del(loop, pfd[1]);
    r.calls = 0;
    r.stop_after = 0;
    cmp_ok(gimpi_loop_run(loop), "==", 0, "run returns when nothing is left to watch");
    ok(r.calls == 1, "EOF delivered once");
    cmp_ok(gimpi_loop_fd_events(loop, pfd[0]), "==", -1, "fd deleted by its callback");
    close(pfd[0]);
    gimpi_loop_destroy(&loop);
    ok(loop == NULL, "destroy NULLs the pointer");
    gimpi_loop_destroy(&loop);
    pass("destroy of NULL is harmless");
}

/*  A callback deletes another descriptor that is ready in the same round. */
static void test_delete_in_round(void)
{
    gimpi_loop_t *loop = gimpi_loop_new();
    int a[2], b[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, a) < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, b) < 0)
        BAIL_OUT("socketpair");
    probe_t pa = { 0 }, pb = { 0 };
    pa.fd_other = b[0];
    pb.fd_other = a[0];
    gimpi_loop_fd_add(loop, a[0], GIMPI_LOOP_READ, on_read_delete_other, &pa);
    gimpi_loop_fd_add(loop, b[0], GIMPI_LOOP_READ, on_read_delete_other, &pb);
    if (write(a[1], "1", 1) != 1 || write(b[1], "2", 1) != 1)
        BAIL_OUT("write");
    int n = gimpi_loop_run_once(loop, 5000);
    cmp_ok(n, "==", 1, "only the first callback runs");
    cmp_ok(pa.calls + pb.calls, "==", 1, "the deleted descriptor got no stale event");
    cmp_ok(gimpi_loop_run(loop), "==", 0, "loop is empty afterwards");

    /* hang-up with write interest: reported as an error with the interest bits */
    probe_t pw = { 0 };
    gimpi_loop_fd_add(loop, a[0], GIMPI_LOOP_WRITE | GIMPI_LOOP_READ, on_write, &pw);
    close(a[1]);
    gimpi_loop_run_once(loop, 5000);
    ok(pw.calls == 1 && (pw.last_events & GIMPI_LOOP_READ), "peer close reported to the callback");
    gimpi_loop_fd_del(loop, a[0]);
    close(a[0]);
    close(b[0]);
    close(b[1]);
    gimpi_loop_destroy(&loop);
}

typedef struct {
    int fired;
    int order[8];
    int norder;
    int tag;
    int64_t first_at, last_at;
    int cancel_id;              /* a timer to cancel when fired */
    int stop_at;                /* stop the loop at this count */
    void *shared;
} tprobe_t;

/*  Records the firing; cancels or stops when asked. */
static void on_timer(gimpi_loop_t *loop, int id, void *arg)
{
    (void)id;
    tprobe_t *t = arg;
    t->fired++;
    if (!t->first_at)
        t->first_at = gimpi_loop_now_ms();
    t->last_at = gimpi_loop_now_ms();
    if (t->shared) {
        tprobe_t *s = t->shared;
        if (s->norder < 8)
            s->order[s->norder++] = t->tag;
    }
    if (t->cancel_id)
        gimpi_loop_timer_cancel(loop, t->cancel_id);
    if (t->stop_at && t->fired >= t->stop_at)
        gimpi_loop_stop(loop);
}

/*  One-shot, repeating, cancelled timers; firing order. */
static void test_timers(void)
{
    gimpi_loop_t *loop = gimpi_loop_new();
    tprobe_t one = { 0 };
    int64_t t0 = gimpi_loop_now_ms();
    int id = gimpi_loop_timer_add(loop, 30, 0, on_timer, &one);
    cmp_ok(id, ">", 0, "timer id positive");
    cmp_ok(gimpi_loop_timer_add(loop, -1, 0, on_timer, &one), "==", -1, "negative delay refused");
    cmp_ok(gimpi_loop_timer_add(loop, 0, 1, on_timer, &one), "==", -1, "repeat of 0 ms refused");
    cmp_ok(gimpi_loop_run(loop), "==", 0, "run ends once the one-shot timer fired");
    cmp_ok(one.fired, "==", 1, "one-shot fired once");
    cmp_ok(one.first_at - t0, ">=", 30, "not before its time");
    cmp_ok(gimpi_loop_timer_cancel(loop, id), "==", -1, "fired one-shot is gone");

    /* repeating timer stopped after 5 firings */
    tprobe_t rep = { .stop_at = 5 };
    t0 = gimpi_loop_now_ms();
    int rid = gimpi_loop_timer_add(loop, 10, 1, on_timer, &rep);
    gimpi_loop_run(loop);
    cmp_ok(rep.fired, "==", 5, "repeating timer fired 5 times before stop");
    cmp_ok(rep.last_at - t0, ">=", 50, "5 periods of 10 ms elapsed");
    ok(gimpi_loop_timer_cancel(loop, rid) == 0, "repeating timer still armed, cancelled");

    /* cancel before it fires */
    tprobe_t never = { 0 }, canceller = { 0 };
    int nid = gimpi_loop_timer_add(loop, 40, 0, on_timer, &never);
    canceller.cancel_id = nid;
    gimpi_loop_timer_add(loop, 5, 0, on_timer, &canceller);
    gimpi_loop_run(loop);
    ok(canceller.fired == 1 && never.fired == 0, "a callback cancelled a pending timer");

    /* order: due times decide, not creation order */
    tprobe_t shared = { 0 };
    tprobe_t a = { .tag = 1, .shared = &shared }, b = { .tag = 2, .shared = &shared },
             c = { .tag = 3, .shared = &shared };
    gimpi_loop_timer_add(loop, 30, 0, on_timer, &a);
    gimpi_loop_timer_add(loop, 10, 0, on_timer, &b);
    gimpi_loop_timer_add(loop, 20, 0, on_timer, &c);
    gimpi_loop_run(loop);
    ok(shared.norder == 3 && shared.order[0] == 2 && shared.order[1] == 3 && shared.order[2] == 1,
       "timers fire in due order");

    /* a zero-delay timer fires in the next round without waiting */
    tprobe_t z = { 0 };
    gimpi_loop_timer_add(loop, 0, 0, on_timer, &z);
    cmp_ok(gimpi_loop_run_once(loop, 0), "==", 1, "0 ms timer fires in run_once(0)");
    gimpi_loop_destroy(&loop);
}

/*  A timer bounds a wait on a descriptor that never becomes ready. */
static void test_timer_with_fds(void)
{
    gimpi_loop_t *loop = gimpi_loop_new();
    int pfd[2];
    if (pipe(pfd) < 0)
        BAIL_OUT("pipe");
    probe_t r = { 0 };
    tprobe_t t = { .stop_at = 1 };
    gimpi_loop_fd_add(loop, pfd[0], GIMPI_LOOP_READ, on_read, &r);
    gimpi_loop_timer_add(loop, 20, 0, on_timer, &t);
    gimpi_loop_run(loop);
    ok(t.fired == 1 && r.calls == 0, "timer stopped the loop while the fd stayed idle");
    /* the fd still works afterwards */
    if (write(pfd[1], "ab", 2) != 2)
        BAIL_OUT("write");
    r.stop_after = 1;
    gimpi_loop_run(loop);
    ok(r.calls == 1 && r.got == 2, "fd callback after the timer");
    gimpi_loop_fd_del(loop, pfd[0]);
    close(pfd[0]);
    close(pfd[1]);
    gimpi_loop_destroy(&loop);
}

typedef struct {
    int64_t last_due;
    int count;
    int out_of_order;
} many_t;

typedef struct {
    many_t *m;
    int64_t due;
} many_arg_t;

/*  Checks that due times never go backwards. */
static void on_many(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop;
    (void)id;
    many_arg_t *a = arg;
    if (a->due + 1 < a->m->last_due)   /* 1 ms slack: `due` is measured next to the add */
        a->m->out_of_order++;
    a->m->last_due = a->due;
    a->m->count++;
}

/*  A slow callback (60 ms of work simulated by poll): everything else falls due. */
static void on_slow(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop;
    (void)id;
    (void)arg;
    poll(NULL, 0, 60);
}

/*  More than 64 timers due in one round: all fire, earliest first. */
static void test_many_timers(void)
{
    gimpi_loop_t *loop = gimpi_loop_new();
    enum { NT = 200 };
    static many_arg_t args[NT];
    many_t m = { 0 };
    gimpi_loop_timer_add(loop, 0, 0, on_slow, NULL);
    for (int i = 0; i < NT; i++) {
        int64_t delay = 1 + (i * 37) % 50;  /* scrambled, many equal */
        args[i].m = &m;
        args[i].due = gimpi_loop_now_ms() + delay;
        gimpi_loop_timer_add(loop, delay, 0, on_many, &args[i]);
    }
    gimpi_loop_run(loop);
    cmp_ok(m.count, "==", NT, "%d timers all fired", NT);
    cmp_ok(m.out_of_order, "==", 0, "earliest first, also beyond 64 due in one round");
    gimpi_loop_destroy(&loop);
}

int main(void)
{
    plan(NO_PLAN);
    test_fds();
    test_delete_in_round();
    test_timers();
    test_timer_with_fds();
    test_many_timers();
    done_testing();
}
