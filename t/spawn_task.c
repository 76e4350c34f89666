/*  t/spawn_task.c — a PVM program for t/pvm_spawn.sh: pvm_spawn, pvm_parent and
 *  pvm_siblings with real processes.  Modes (argv[1]):
 *    master N [FILE]  shell-started: spawns N children of FILE (default: this program by
 *                     bare name) in mode "child"; sends each its index; the children pass
 *                     a token round their siblings and report (tid, parent, siblings,
 *                     argv[0]); child 0 echoes 1 MiB back; pvm_tasks gives each
 *                     child the master as ti_ptid; prints "master ok".
 *    child            what the master spawns (also prints "child I hello").
 *    failures NOEXEC  spawn errors: a missing program, NOEXEC (not executable), another
 *                     host, a child that dies at once, a child killed in the middle of
 *                     sending; each gives PVM's error or fails a receive, never a hang.
 *    die / killme     the children of "failures".
 *    job              a task of a gimpirun job: rank 0 spawns "jobchild", which talks to
 *                     every task of the job (tids in its arguments).
 *    orphan           spawns "waitparent" and is killed while the child waits for it.
 *    nested [WHERE]   spawns one child (on host WHERE), which spawns one on its own host
 *                     (mode "grandchild") which talks to its parent and to the master
 *                     (its grandparent, found through groupd); pvm_tasks gives the
 *                     grandchild its parent as ti_ptid.
 *    pathonly NAME nofile|runs [WHERE]  spawns the bare NAME (on host WHERE): PvmNoFile,
 *                     or it starts.
 *    tagwait FIFO N [WHERE]  spawns N "tagchild" (default placement, or on host WHERE),
 *                     which print a line on stdout and stderr and wait; prints "ready",
 *                     blocks until FIFO is written, then lets them end; prints
 *                     "tagwait ok".
 *  Prints "FAIL ..." and exits 1 on the first check that does not hold.
 */
#include "pvm3.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL %s: ", mode); \
            printf(__VA_ARGS__); printf("\n"); fflush(stdout); exit(1); } } while (0)

static const char *mode = "?";

/*  pvm_tasks gives each child (past its enrolment: it has reported) the spawner as its
 *  ti_ptid and its program name, and the shell-started spawner ti_ptid 0.  Children may
 *  have left after their report, but child 0 waits for the big message. */
static void s_check_ptids(int me, const int *tids, int n)
{
    struct pvmtaskinfo *ti = NULL;
    int nt = 0;
    CHECK(pvm_tasks(0, &nt, &ti) == 0, "pvm_tasks");
    for (int k = 0; k < nt; k++) {
        if (ti[k].ti_tid == me)
            CHECK(ti[k].ti_ptid == 0, "the master's ti_ptid is %x", ti[k].ti_ptid);
        for (int i = 0; i < n; i++) {
            if (ti[k].ti_tid != tids[i])
                continue;
            CHECK(ti[k].ti_ptid == me, "child %d: ti_ptid %x, not %x", i, ti[k].ti_ptid, me);
            CHECK(!strcmp(ti[k].ti_a_out, "spawn_task"), "child %d: ti_a_out %s", i,
                  ti[k].ti_a_out);
        }
    }
    CHECK(pvm_tasks(tids[0], &nt, &ti) == 0 && nt == 1 && ti[0].ti_ptid == me,
          "pvm_tasks of child 0: %d tasks, ti_ptid %x", nt, nt ? ti[0].ti_ptid : 0);
}

/*  The master: spawns, collects reports, checks them. */
static int s_master(int n, const char *file)
{
    int me = pvm_mytid();
    CHECK(me > 0, "mytid %d", me);
    CHECK(pvm_parent() == PvmNoParent, "shell-started task has parent %x", pvm_parent());
    int *tids = calloc((size_t)n, sizeof *tids);
    char *args[] = { "child", NULL };
    int got = pvm_spawn((char *)file, args, PvmTaskDefault, "", n, tids);
    CHECK(got == n, "spawned %d of %d (first slot %d)", got, n, tids[0]);
    for (int i = 0; i < n; i++) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&i, 1, 1);
        CHECK(pvm_send(tids[i], 1) == 0, "send to child %d", i);
    }
    for (int i = 0; i < n; i++) {
        int bufid = pvm_recv(-1, 2);
        CHECK(bufid > 0, "report %d: %d", i, bufid);
        int from, idx, tid, parent, nsib, abs, ring;
        pvm_bufinfo(bufid, NULL, NULL, &from);
        pvm_upkint(&idx, 1, 1);
        pvm_upkint(&tid, 1, 1);
        pvm_upkint(&parent, 1, 1);
        pvm_upkint(&nsib, 1, 1);
        CHECK(idx >= 0 && idx < n && tid == tids[idx] && from == tid, "report of %d", idx);
        CHECK(parent == me, "child %d: parent %x, not %x", idx, parent, me);
        CHECK(nsib == n, "child %d: %d siblings", idx, nsib);
        for (int k = 0; k < nsib; k++) {
            int s;
            pvm_upkint(&s, 1, 1);
            CHECK(s == tids[k], "child %d: sibling %d is %x, not %x", idx, k, s, tids[k]);
        }
        pvm_upkint(&abs, 1, 1);
        pvm_upkint(&ring, 1, 1);
        CHECK(abs == 1, "child %d: argv[0] not a full path", idx);
        CHECK(ring == tids[(idx + n - 1) % n], "child %d: token from %x", idx, ring);
    }
    s_check_ptids(me, tids, n);
    int len = 1 << 20;
    char *big = malloc((size_t)len), *back = malloc((size_t)len);
    for (int i = 0; i < len; i++)
        big[i] = (char)(i * 7);
    pvm_initsend(PvmDataRaw);
    pvm_pkbyte(big, len, 1);
    CHECK(pvm_send(tids[0], 4) == 0, "send big");
    CHECK(pvm_recv(tids[0], 5) > 0, "big echo");
    pvm_upkbyte(back, len, 1);
    CHECK(!memcmp(big, back, (size_t)len), "big echo differs");
    printf("master ok\n");
    fflush(stdout);
    free(big);
    free(back);
    free(tids);
    pvm_exit();
    return 0;
}

/*  A child: reports and passes the token round its siblings. */
static int s_child(const char *argv0)
{
    int me = pvm_mytid();
    CHECK(me > 0, "mytid %d", me);
    int parent = pvm_parent();
    int *sib;
    int nsib = pvm_siblings(&sib);
    CHECK(pvm_recv(parent, 1) > 0, "index from parent %x", parent);
    int idx;
    pvm_upkint(&idx, 1, 1);
    printf("child %d hello\n", idx);
    fflush(stdout);
    fprintf(stderr, "child %d says on stderr\n", idx);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    CHECK(pvm_send(sib[(idx + 1) % nsib], 3) == 0, "token out");
    int ring = 0;
    CHECK(pvm_recv(sib[(idx + nsib - 1) % nsib], 3) > 0, "token in");
    pvm_upkint(&ring, 1, 1);
    int abs = argv0[0] == '/';
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&idx, 1, 1);
    pvm_pkint(&me, 1, 1);
    pvm_pkint(&parent, 1, 1);
    pvm_pkint(&nsib, 1, 1);
    pvm_pkint(sib, nsib, 1);
    pvm_pkint(&abs, 1, 1);
    pvm_pkint(&ring, 1, 1);
    CHECK(pvm_send(parent, 2) == 0, "report");
    if (idx == 0) {
        int bufid = pvm_recv(parent, 4);
        CHECK(bufid > 0, "big");
        int len;
        pvm_bufinfo(bufid, &len, NULL, NULL);
        char *b = malloc((size_t)len);
        pvm_upkbyte(b, len, 1);
        pvm_initsend(PvmDataInPlace);
        pvm_pkbyte(b, len, 1);
        CHECK(pvm_send(parent, 5) == 0, "big back");
        free(b);
    }
    pvm_exit();
    return 0;
}

/*  Spawn failures: each is reported, none hangs. */
static int s_failures(const char *noexec)
{
    int me = pvm_mytid(), t[2] = { 0, 0 };
    CHECK(me > 0, "mytid");
    pvm_setopt(PvmAutoErr, 0);
    int rc = pvm_spawn("gimpi-no-such-program", NULL, 0, NULL, 2, t);
    CHECK(rc == 0 && t[0] == PvmNoFile && t[1] == PvmNoFile, "missing: %d %d %d", rc, t[0], t[1]);
    rc = pvm_spawn((char *)noexec, NULL, 0, NULL, 1, t);
    CHECK(rc == 0 && t[0] == PvmNoFile, "not executable: %d %d", rc, t[0]);
    rc = pvm_spawn("spawn_task", NULL, PvmTaskHost, "no-such-host.example", 1, t);
    CHECK(rc == 0 && t[0] == PvmNoHost, "other host: %d %d", rc, t[0]);
    rc = pvm_spawn("spawn_task", NULL, 0, NULL, 0, t);
    CHECK(rc == PvmBadParam, "ntask 0: %d", rc);
    char host[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = 0;
    char *die0[] = { "die", NULL };
    rc = pvm_spawn("spawn_task", die0, PvmTaskHost, host, 1, t);
    CHECK(rc == 1 && t[0] > 0, "on this host by name (%s): %d %d", host, rc, t[0]);
    rc = pvm_spawn("spawn_task", die0, PvmTaskHost | PvmHostCompl, ".", 1, t);
    CHECK(rc == 0 && t[0] == PvmNoHost, "any host but this one: %d %d", rc, t[0]);
    char *die[] = { "die", NULL };
    rc = pvm_spawn("spawn_task", die, PvmTaskHost | PvmTaskDebug | PvmTaskTrace, ".", 1, t);
    CHECK(rc == 1 && t[0] > 0, "die: %d %d", rc, t[0]);
    rc = pvm_recv(t[0], -1);
    CHECK(rc < 0, "receive from a child that died at once: %d", rc);
    char *killme[] = { "killme", NULL };
    rc = pvm_spawn("spawn_task", killme, 0, NULL, 1, t);
    CHECK(rc == 1, "killme: %d", rc);
    int bufid = pvm_recv(t[0], 7);       /* the long one: it may or may not make it */
    if (bufid < 0)
        printf("long message lost with its sender (%d)\n", bufid);
    rc = pvm_recv(t[0], 8);
    CHECK(rc < 0, "receive from a child killed while sending: %d", rc);
    printf("failures ok\n");
    pvm_exit();
    return 0;
}

/*  pathonly NAME nofile|runs: spawns the bare NAME once; it must fail with PvmNoFile
 *  (PATH is never searched) or start (found on the spawn path). */
static int s_pathonly(const char *name, const char *expect, char *where)
{
    int me = pvm_mytid(), t = 0;
    CHECK(me > 0, "mytid");             /* PvmAutoErr 1: the spawn says where it looked */
    int rc = pvm_spawn((char *)name, NULL, where ? PvmTaskHost : 0, where, 1, &t);
    printf("spawn %s: %d %d\n", name, rc, t);
    if (!strcmp(expect, "nofile"))
        CHECK(rc == 0 && t == PvmNoFile, "%s: PvmNoFile expected: %d %d", name, rc, t);
    else
        CHECK(rc == 1 && t > 0, "%s: started expected: %d %d", name, rc, t);
    printf("pathonly ok\n");
    pvm_exit();
    return 0;
}

/*  tagwait FIFO N: children alive while the test looks at the processes. */
static int s_tagwait(const char *fifo, int n, char *where)
{
    int me = pvm_mytid(), tids[16];
    CHECK(me > 0 && n > 0 && n <= 16, "mytid %d, n %d", me, n);
    char *args[] = { "tagchild", NULL };
    CHECK(pvm_spawn("spawn_task", args, where ? PvmTaskHost : PvmTaskDefault, where, n, tids)
          == n, "spawn %d", n);
    for (int i = 0; i < n; i++)         /* each has written its lines */
        CHECK(pvm_recv(-1, 41) > 0, "ready %d", i);
    printf("ready\n");
    fflush(stdout);
    int fd = open(fifo, O_RDONLY);      /* until the test has looked */
    char c;
    CHECK(fd >= 0 && read(fd, &c, 1) >= 0, "fifo %s", fifo);
    close(fd);
    pvm_initsend(PvmDataDefault);
    CHECK(pvm_mcast(tids, n, 42) == 0, "go");
    for (int i = 0; i < n; i++)
        CHECK(pvm_recv(-1, 43) > 0, "done %d", i);
    printf("tagwait ok\n");
    fflush(stdout);
    pvm_exit();
    return 0;
}

/*  tagchild: a line on each stream, then waits for its parent's word. */
static int s_tagchild(void)
{
    int me = pvm_mytid(), parent = pvm_parent();
    CHECK(me > 0 && parent > 0, "tagchild %d of %d", me, parent);
    printf("tagchild says hello\n");
    fflush(stdout);
    fprintf(stderr, "tagchild says on stderr\n");
    pvm_initsend(PvmDataDefault);
    CHECK(pvm_send(parent, 41) == 0, "ready");
    CHECK(pvm_recv(parent, 42) > 0, "go");
    pvm_initsend(PvmDataDefault);
    CHECK(pvm_send(parent, 43) == 0, "done");
    pvm_exit();
    return 0;
}

/*  nested: a child that spawns a grandchild; the grandchild reaches the master too. */
static int s_nested(int top, char *where)
{
    int me = pvm_mytid();
    CHECK(me > 0, "mytid");
    int t = 0;
    char mtid[16];
    snprintf(mtid, sizeof mtid, "%d", pvm_parent());
    char *args[] = { "grandchild", mtid, NULL };
    if (top) {
        char *mid[] = { "nested", NULL };
        CHECK(pvm_spawn("spawn_task", mid, where ? PvmTaskHost : 0, where, 1, &t) == 1,
              "spawn middle");
        CHECK(pvm_recv(-1, 11) > 0, "hello from the grandchild");
        int who;
        pvm_upkint(&who, 1, 1);
        int src;
        pvm_bufinfo(pvm_getrbuf(), NULL, NULL, &src);
        CHECK(src == who && who != t, "grandchild %x (middle %x)", who, t);
        struct pvmtaskinfo *ti = NULL;
        int nt = 0;
        CHECK(pvm_tasks(who, &nt, &ti) == 0 && nt == 1 && ti[0].ti_ptid == t,
              "the grandchild's ti_ptid is %x, not the middle %x", nt ? ti[0].ti_ptid : 0, t);
        pvm_initsend(PvmDataDefault);
        CHECK(pvm_send(who, 12) == 0, "answer");
        CHECK(pvm_recv(t, 13) > 0, "middle done");
        printf("nested ok\n");
    } else {
        printf("middle says hello\n");
        fflush(stdout);
        CHECK(pvm_spawn("spawn_task", args, PvmTaskHost, ".", 1, &t) == 1, "spawn grandchild");
        CHECK(pvm_recv(t, 14) > 0, "grandchild done");
        pvm_initsend(PvmDataDefault);
        CHECK(pvm_send(pvm_parent(), 13) == 0, "tell master");
    }
    pvm_exit();
    return 0;
}

/*  job: a task of a gimpirun job; rank 0 spawns a child that talks to every task. */
static int s_job(void)
{
    int me = pvm_mytid(), *job;
    CHECK(me > 0, "mytid");
    CHECK(pvm_parent() == PvmNoParent, "a gimpirun task has parent %x", pvm_parent());
    int n = pvm_siblings(&job);
    CHECK(n >= 2, "siblings %d", n);
    int t = 0;
    if (me == job[0]) {
        char *args[2 + 64] = { "jobchild" };
        char num[64][16];
        for (int i = 0; i < n && i < 64; i++) {
            snprintf(num[i], sizeof num[i], "%d", job[i]);
            args[1 + i] = num[i];
        }
        CHECK(pvm_spawn("spawn_task", args, 0, NULL, 1, &t) == 1, "spawn");
    }
    CHECK(pvm_recv(-1, 21) > 0, "hello from the child");
    int from;
    pvm_upkint(&from, 1, 1);
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    CHECK(pvm_send(from, 22) == 0, "answer the child");
    if (me == job[0]) {
        CHECK(pvm_recv(t, 23) > 0, "child done");
        printf("job ok\n");
    }
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "?";
    if (!strcmp(mode, "master") && argc > 2)
        return s_master(atoi(argv[2]), argc > 3 ? argv[3] : "spawn_task");
    if (!strcmp(mode, "child"))
        return s_child(argv[0]);
    if (!strcmp(mode, "failures") && argc > 2)
        return s_failures(argv[2]);
    if (!strcmp(mode, "pathonly") && argc > 3)
        return s_pathonly(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
    if (!strcmp(mode, "tagwait") && argc > 3)
        return s_tagwait(argv[2], atoi(argv[3]), argc > 4 ? argv[4] : NULL);
    if (!strcmp(mode, "tagchild"))
        return s_tagchild();
    if (!strcmp(mode, "die"))
        _exit(3);
    if (!strcmp(mode, "killme")) {
        CHECK(pvm_mytid() > 0, "mytid");
        int len = 32 << 20;
        char *b = calloc(1, (size_t)len);
        pvm_initsend(PvmDataRaw);
        pvm_pkbyte(b, len, 1);
        pvm_send(pvm_parent(), 7);
        raise(SIGKILL);
    }
    if (!strcmp(mode, "job"))
        return s_job();
    if (!strcmp(mode, "jobchild")) {
        int me = pvm_mytid();
        CHECK(me > 0 && argc > 3, "jobchild");
        for (int i = 2; i < argc; i++) {
            pvm_initsend(PvmDataDefault);
            pvm_pkint(&me, 1, 1);
            CHECK(pvm_send(atoi(argv[i]), 21) == 0, "hello to %s", argv[i]);
        }
        for (int i = 2; i < argc; i++) {
            CHECK(pvm_recv(atoi(argv[i]), 22) > 0, "answer of %s", argv[i]);
            int v;
            pvm_upkint(&v, 1, 1);
            CHECK(v == atoi(argv[i]), "answer %d", v);
        }
        pvm_initsend(PvmDataDefault);
        CHECK(pvm_send(pvm_parent(), 23) == 0, "done");
        pvm_exit();
        return 0;
    }
    if (!strcmp(mode, "orphan")) {     /* dies while its child waits for it */
        int t = 0;
        char *args[] = { "waitparent", NULL };
        CHECK(pvm_mytid() > 0, "mytid");
        CHECK(pvm_spawn("spawn_task", args, 0, NULL, 1, &t) == 1, "spawn");
        CHECK(pvm_recv(t, 31) > 0, "ready");
        raise(SIGKILL);
    }
    if (!strcmp(mode, "waitparent")) {
        CHECK(pvm_mytid() > 0, "mytid");
        pvm_initsend(PvmDataDefault);
        CHECK(pvm_send(pvm_parent(), 31) == 0, "ready");
        pvm_setopt(PvmAutoErr, 0);
        int rc = pvm_recv(pvm_parent(), 32);
        CHECK(rc < 0, "receive from a killed parent: %d", rc);
        printf("orphan ok\n");
        return 0;
    }
    if (!strcmp(mode, "nested"))
        return s_nested(pvm_parent() == PvmNoParent, argc > 2 ? argv[2] : NULL);
    if (!strcmp(mode, "grandchild") && argc > 2) {
        int me = pvm_mytid(), master = atoi(argv[2]);
        CHECK(me > 0 && master > 0, "grandchild of %d", master);
        printf("grandchild says hello\n");
        fflush(stdout);
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&me, 1, 1);
        CHECK(pvm_send(master, 11) == 0, "hello to the master");
        CHECK(pvm_recv(master, 12) > 0, "answer from the master");
        pvm_initsend(PvmDataDefault);
        CHECK(pvm_send(pvm_parent(), 14) == 0, "done");
        pvm_exit();
        return 0;
    }
    printf("usage: spawn_task master N | child | failures NOEXEC | nested | pathonly NAME "
           "nofile|runs\n");
    return 2;
}
