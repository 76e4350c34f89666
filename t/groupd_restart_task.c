/*  t/groupd_restart_task.c — a PVM program (only <pvm3.h> calls) for t/groupd_restart.sh:
 *  N tasks loop ROUNDS times over join, barrier, bcast, reduce, gsize, gettid/getinst,
 *  message-box puts and gets, and leave, with a pvm_spawn every 100 rounds (the child's
 *  tid comes in a message, its exit through pvm_notify), while the test
 *  kills groupd under them.  `groupd_restart_task N ROUNDS MARKS` (MARKS: rounds at which
 *  instance 0 of the first round's group creates the file $RESTART_MARK.<round>, so that
 *  the test knows the loop is under way; comma-separated, may be empty).  Every call is
 *  timed: each task prints "t<inst> ok rounds=R stall_ms=S" (S its longest call) at the
 *  end, or "t<inst> FAIL ..." and exits 1 at the first wrong answer or failed call.
 *  `groupd_restart_task child` is the spawned child: it tells its parent its tid.
 *  `groupd_restart_task idle GROUP` joins GROUP, creates $RESTART_MARK.joined, waits
 *  (making no group call) until $RESTART_MARK.go exists, then checks that it is still
 *  instance 0 of a group of 1 (joining again is PvmDupGroup): a task that needs no groupd
 *  while it is restarted, or taken over, keeps its groups ("t0 idle ok").
 *  `groupd_restart_task watch HOST` (t/vm_failover_cut.sh) asks pvm_notify(PvmHostDelete)
 *  for HOST, creates $RESTART_MARK.watching, and waits (60 s) for the notification: "watch
 *  HOST deleted after MS ms" or "watch FAIL ...".  With $RESTART_SPAWN_NOT set, the loop's
 *  spawns go to any host but that one (PvmHostCompl).
 */
#include "pvm3.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum { TAG_BCAST = 11, TAG_REDUCE = 12, TAG_CHILD = 13, TAG_EXIT = 14, TAG_HOSTDEL = 15,
       SPAWN_EVERY = 100 };

static int s_inst = -1;         /* our instance in "all" (the label) */
static double s_stall;          /* longest call so far, ms */
static const char *s_call;      /* its name */

/*  Monotonic milliseconds. */
static double s_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*  Fails the task with a line. */
static void s_fail(const char *what, int rc, int round)
{
    printf("t%d FAIL %s: %d at round %d\n", s_inst, what, rc, round);
    fflush(stdout);
    exit(1);
}

/*  Times a call: T(name, expr) evaluates expr and keeps the longest. */
#define T(name, expr) __extension__({                                            \
        double t0_ = s_ms();                                                     \
        int rc_ = (expr);                                                        \
        double dt_ = s_ms() - t0_;                                               \
        if (dt_ > s_stall) { s_stall = dt_; s_call = name; }                     \
        rc_; })

/*  The spawned child: tells its parent its tid and ends. */
static int s_child(void)
{
    int me = pvm_mytid();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    pvm_send(pvm_parent(), TAG_CHILD);
    pvm_exit();
    return 0;
}

/*  Creates $RESTART_MARK.<round> when round is one of the marks. */
static void s_mark(const char *marks, int round)
{
    const char *base = getenv("RESTART_MARK");
    char want[32];
    snprintf(want, sizeof want, ",%d,", round);
    char list[256];
    snprintf(list, sizeof list, ",%s,", marks);
    if (!base || !strstr(list, want))
        return;
    char path[512];
    snprintf(path, sizeof path, "%s.%d", base, round);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0)
        close(fd);
}

/*  Spawns one child, which must answer with its tid; its exit must be notified
 *  (pvm_notify PvmTaskExit, through groupd's events). */
static void s_spawn(const char *self, int round)
{
    char *args[] = { (char *)"child", NULL };
    int tid = 0;
    char *not = getenv("RESTART_SPAWN_NOT");
    int flags = not && *not ? PvmTaskHost | PvmHostCompl : PvmTaskDefault;
    int rc = T("pvm_spawn", pvm_spawn((char *)self, args, flags, not ? not : "", 1, &tid));
    if (rc != 1 || tid <= 0)
        s_fail("pvm_spawn", rc == 1 ? tid : rc, round);
    if ((rc = T("pvm_notify", pvm_notify(PvmTaskExit, TAG_EXIT, 1, &tid))) < 0)
        s_fail("pvm_notify", rc, round);
    int got = 0;
    if (T("pvm_recv child", pvm_recv(tid, TAG_CHILD)) < 0 || pvm_upkint(&got, 1, 1) < 0
        || got != tid)
        s_fail("child's tid", got, round);
    if (T("pvm_recv exit", pvm_recv(-1, TAG_EXIT)) < 0 || pvm_upkint(&got, 1, 1) < 0
        || got != tid)
        s_fail("the child's exit notified", got, round);
}

/*  The message box: each member puts its round under its own name, then (after the
 *  barrier the caller makes) reads its neighbour's. */
static void s_box_put(int inst, int round)
{
    char name[32];
    snprintf(name, sizeof name, "rs.%d", inst);
    if (round > 0)
        T("pvm_delinfo", pvm_delinfo(name, 0, PvmMboxDefault));
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&round, 1, 1);
    int rc = T("pvm_putinfo", pvm_putinfo(name, pvm_getsbuf(), PvmMboxDefault));
    if (rc != 0)
        s_fail("pvm_putinfo", rc, round);
}

static void s_box_get(int inst, int n, int round)
{
    char name[32];
    snprintf(name, sizeof name, "rs.%d", (inst + 1) % n);
    int buf = T("pvm_recvinfo", pvm_recvinfo(name, 0, PvmMboxDefault));
    int got = -1;
    if (buf < 0)
        s_fail("pvm_recvinfo", buf, round);
    int old = pvm_setrbuf(buf);
    pvm_upkint(&got, 1, 1);
    pvm_setrbuf(old);
    pvm_freebuf(buf);
    if (got != round)
        s_fail("the neighbour's box entry", got, round);
}

/*  One round over group "g". */
static void s_round(const char *self, int n, int round)
{
    int inst = T("pvm_joingroup", pvm_joingroup("g"));
    if (inst < 0 || inst >= n)
        s_fail("pvm_joingroup", inst, round);
    s_box_put(s_inst, round);
    int rc = T("pvm_barrier", pvm_barrier("g", n));
    if (rc != 0)
        s_fail("pvm_barrier", rc, round);
    if ((rc = T("pvm_gsize", pvm_gsize("g"))) != n)
        s_fail("pvm_gsize", rc, round);
    int root = T("pvm_gettid", pvm_gettid("g", 0));
    if (root <= 0 || T("pvm_getinst", pvm_getinst("g", root)) != 0)
        s_fail("pvm_gettid/getinst", root, round);
    int v = round;
    if (inst == 0) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        if ((rc = T("pvm_bcast", pvm_bcast("g", TAG_BCAST))) < 0)
            s_fail("pvm_bcast", rc, round);
    } else {
        if ((rc = T("pvm_recv bcast", pvm_recv(root, TAG_BCAST))) < 0
            || pvm_upkint(&v, 1, 1) < 0 || v != round)
            s_fail("the bcast", v, round);
    }
    int x = inst + 1 + round;
    if ((rc = T("pvm_reduce", pvm_reduce(PvmSum, &x, 1, PVM_INT, TAG_REDUCE, "g", 0))) < 0)
        s_fail("pvm_reduce", rc, round);
    if (inst == 0 && x != n * (n + 1) / 2 + n * round)
        s_fail("the reduced sum", x, round);
    s_box_get(s_inst, n, round);
    if (inst == 0 && round % SPAWN_EVERY == SPAWN_EVERY / 2)
        s_spawn(self, round);
    if ((rc = T("pvm_barrier", pvm_barrier("g", n))) != 0)
        s_fail("pvm_barrier before the leave", rc, round);
    if ((rc = T("pvm_lvgroup", pvm_lvgroup("g"))) != 0)
        s_fail("pvm_lvgroup", rc, round);
}

/*  Waits (bounded, 60 s) for a file to exist; 0 or -1. */
static int s_wait_file(const char *path)
{
    for (int k = 0; k < 6000; k++) {
        if (access(path, F_OK) == 0)
            return 0;
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
    return -1;
}

/*  The idle member (see the file comment). */
static int s_idle(const char *group)
{
    const char *base = getenv("RESTART_MARK");
    char path[512];
    s_inst = 0;
    int inst = pvm_joingroup((char *)group);
    if (inst != 0 || !base)
        s_fail("joining the idle group", inst, 0);
    snprintf(path, sizeof path, "%s.joined", base);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0)
        close(fd);
    snprintf(path, sizeof path, "%s.go", base);
    if (s_wait_file(path) < 0)
        s_fail("waiting for the go", -1, 0);
    int again = pvm_joingroup((char *)group);   /* (groupd's word, not the cache's) */
    if (again != PvmDupGroup)
        s_fail("still a member after the restart: joining again", again, 0);
    int size = pvm_gsize((char *)group);
    if (size != 1 || pvm_getinst((char *)group, pvm_mytid()) != 0)
        s_fail("still a member after the restart: size", size, 0);
    printf("t0 idle ok\n");
    fflush(stdout);
    pvm_exit();
    return 0;
}

/*  The watcher (see the file comment): PvmHostDelete of HOST. */
static int s_watch(const char *host)
{
    int nhost = 0, narch = 0, dtid = 0;
    struct pvmhostinfo *hi = NULL;
    if (pvm_config(&nhost, &narch, &hi) < 0)
        s_fail("pvm_config", nhost, 0);
    for (int i = 0; i < nhost; i++)
        if (!strcmp(hi[i].hi_name, host))
            dtid = hi[i].hi_tid;
    int rc = dtid ? pvm_notify(PvmHostDelete, TAG_HOSTDEL, 1, &dtid) : -1;
    if (rc < 0)
        s_fail("pvm_notify(PvmHostDelete) of the host", dtid ? rc : 0, 0);
    const char *base = getenv("RESTART_MARK");
    char path[512];
    snprintf(path, sizeof path, "%s.watching", base ? base : "/dev/null/x");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0)
        close(fd);
    double t0 = s_ms();
    struct timeval tmout = { 60, 0 };
    int got = 0, buf = pvm_trecv(-1, TAG_HOSTDEL, &tmout);
    if (buf <= 0)
        s_fail(buf ? "pvm_trecv of the PvmHostDelete notification" : "no PvmHostDelete in 60 s",
               buf, 0);
    if (pvm_upkint(&got, 1, 1) < 0 || got != dtid)
        s_fail("the PvmHostDelete notification's host", got, 0);
    printf("watch %s deleted after %.0f ms\n", host, s_ms() - t0);
    fflush(stdout);
    pvm_exit();
    return 0;
}

/*  Joins "all", loops, reports. */
int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "child"))
        return s_child();
    if (argc == 3 && !strcmp(argv[1], "idle"))
        return s_idle(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "watch"))
        return s_watch(argv[2]);
    if (argc < 3) {
        fprintf(stderr, "usage: groupd_restart_task N ROUNDS [MARKS] | child\n");
        return 2;
    }
    int n = atoi(argv[1]), rounds = atoi(argv[2]);
    const char *marks = argc > 3 ? argv[3] : "";
    pvm_setopt(PvmAutoErr, 0);
    if (pvm_mytid() < 0)
        s_fail("pvm_mytid", pvm_mytid(), 0);
    s_inst = pvm_joingroup("all");
    if (s_inst < 0 || pvm_barrier("all", n) != 0)
        s_fail("joining all", s_inst, 0);
    for (int r = 0; r < rounds; r++) {
        if (s_inst == 0)
            s_mark(marks, r);
        s_round(argv[0], n, r);
    }
    /* (the size before the barrier: after it the others leave "all" at once, and a slow
       task may already see their leaves) */
    int size = pvm_gsize("all");
    if (size != n)
        s_fail("the size of all before the last barrier", size, rounds);
    int rc = pvm_barrier("all", n);
    if (rc != 0)
        s_fail("the last barrier", rc, rounds);
    printf("t%d ok rounds=%d stall_ms=%.1f (%s)\n", s_inst, rounds, s_stall,
           s_call ? s_call : "-");
    fflush(stdout);
    pvm_lvgroup("all");
    pvm_exit();
    return 0;
}
