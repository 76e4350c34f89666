/*  t/notify_early.c — the task of t/pvm_notify_early.sh: a master spawns two copies of
 *  this program, asks for PvmTaskExit of both, and one copy dies before any PVM call (it
 *  SIGKILLs itself, or execs a script that does, or exits at once); the master must get
 *  that one's notice within 1 s (PVM 3.4.6 delivers it), nothing for the live one, and no
 *  zombie of the dead one may stay below the master or the master's parent (gimpirun).
 *  "sibling": a master that asks for no notice spawns a child that dies at once and a
 *  sibling that watches it; the sibling gets the notice while the master waits for it.
 *  "busy": the master spawns a watcher and a child that dies when the master opens a FIFO
 *  (after its last PVM call), then spins in a computation for 3 s: the watcher's notice
 *  must come within 1 s all the same.  "gone": the same, but the master exits instead
 *  (the child dies when the master's end closes the FIFO); the watcher writes what it got
 *  into a file.
 *  Prints "early ok" and exits 0 when all holds, else says what failed on stderr.  Every
 *  wait is bounded (pvm_trecv, alarm).
 */
#include "pvm3.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TAG = 77, RESULT = 78, NEVER = 99 };

/*  Seconds since an arbitrary origin. */
static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*  How many zombies have parent a or b; with say, the first one is shown on stderr. */
static int s_zombies(int a, int b, int say)
{
    DIR *d = opendir("/proc");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], buf[512];
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        char *rp = strrchr(buf, ')'), state = 0;
        int ppid = 0;
        if (rp && sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && state == 'Z'
            && (ppid == a || ppid == b) && ++n == 1 && say)
            fprintf(stderr, "zombie: %s", buf);
    }
    if (d)
        closedir(d);
    return n;
}

/*  The master: how is "kill", "exit" or "script" (then script names it). */
static int s_master(const char *self, const char *how, char *script)
{
    alarm(60);
    pvm_setopt(PvmAutoErr, 0);
    if (pvm_mytid() <= 0)
        return fprintf(stderr, "not enrolled\n"), 1;
    int tids[2] = { 0, 0 };
    char *live[] = { (char *)"wait", NULL }, *dead[] = { (char *)how, NULL };
    if (pvm_spawn((char *)self, live, PvmTaskDefault, NULL, 1, &tids[0]) != 1
        || pvm_spawn(script ? script : (char *)self, script ? NULL : dead, PvmTaskDefault,
                     NULL, 1, &tids[1]) != 1)
        return fprintf(stderr, "spawn failed: t%x t%x\n", tids[0], tids[1]), 1;
    double t0 = s_now();
    if (pvm_notify(PvmTaskExit, TAG, 2, tids) < 0)
        return fprintf(stderr, "pvm_notify failed\n"), 1;
    int b = pvm_trecv(-1, TAG, &(struct timeval){ 3, 0 });
    double took = s_now() - t0;
    int who = 0, bytes = 0, tag = 0, src = 0;
    if (b > 0) {
        pvm_bufinfo(b, &bytes, &tag, &src);
        pvm_upkint(&who, 1, 1);
    }
    int rc = 0;
    if (b <= 0 || who != tids[1] || (unsigned)src != 0x80000000u)
        rc = fprintf(stderr, "no notice for the dead t%x in %.3f s (got %d: t%x)\n",
                     (unsigned)tids[1], took, b, (unsigned)who) > 0;
    else if (took > 1.0)
        rc = fprintf(stderr, "the notice took %.3f s\n", took) > 0;
    if (pvm_trecv(-1, TAG, &(struct timeval){ 0, 200000 }) > 0)
        rc = fprintf(stderr, "a notice for the live one too\n") > 0;
    /* a dead child's zombie may last until its reaper runs: give it a bounded while */
    int z = 0;
    for (int i = 0; i < 100 && (z = s_zombies(getpid(), getppid(), i == 99)) > 0; i++) {
        pvm_probe(-1, TAG);     /* a PVM call a notice could answer: the master goes on */
        nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
    }
    if (z > 0)
        rc = fprintf(stderr, "%d zombie(s) left\n", z) > 0;
    pvm_kill(tids[0]);
    b = pvm_trecv(-1, TAG, &(struct timeval){ 5, 0 });
    if (b <= 0)
        rc = fprintf(stderr, "no notice for the killed live one\n") > 0;
    if (rc == 0)
        printf("early ok (%.3f s)\n", took);
    pvm_exit();
    return rc;
}

/*  A watcher child: asks for PvmTaskExit of tid, waits up to 3 s for it, and sends its
 *  parent 1 and the seconds it took, or 0. */
static int s_watch(int tid)
{
    double t0 = s_now();
    int got = pvm_notify(PvmTaskExit, TAG, 1, &tid) == 0
              && pvm_trecv(-1, TAG, &(struct timeval){ 3, 0 }) > 0;
    double took = s_now() - t0;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&got, 1, 1);
    pvm_pkdouble(&took, 1, 1);
    pvm_send(pvm_parent(), RESULT);
    pvm_exit();
    return 0;
}

/*  The master's end: the watcher's result (got, seconds), then pvm_exit; 0 and "early ok"
 *  when the notice came within limit seconds, else 1 and what went wrong. */
static int s_verdict(int watcher, double limit, const char *what)
{
    int got = 0;
    double took = -1;
    if (pvm_trecv(watcher, RESULT, &(struct timeval){ 10, 0 }) > 0) {
        pvm_upkint(&got, 1, 1);
        pvm_upkdouble(&took, 1, 1);
    }
    pvm_exit();
    if (!got || took > limit)
        return fprintf(stderr, "%s: %s (%.3f s)\n", what, got ? "late" : "none", took), 1;
    printf("early ok (%.3f s)\n", took);
    return 0;
}

/*  A master that never asks for notices: it spawns a child that dies at once, then a
 *  sibling that watches it, and waits in a receive naming the sibling; the sibling must
 *  get the dead one's notice within 1.5 s (the master tells groupd from that wait). */
static int s_sibling(const char *self)
{
    alarm(60);
    pvm_setopt(PvmAutoErr, 0);
    int dead = 0, watcher = 0;
    char *die[] = { (char *)"kill", NULL }, tidarg[16];
    if (pvm_mytid() <= 0 || pvm_spawn((char *)self, die, PvmTaskDefault, NULL, 1, &dead) != 1)
        return fprintf(stderr, "spawn failed\n"), 1;
    snprintf(tidarg, sizeof tidarg, "%x", (unsigned)dead);
    char *watch[] = { (char *)"watch", tidarg, NULL };
    if (pvm_spawn((char *)self, watch, PvmTaskDefault, NULL, 1, &watcher) != 1)
        return fprintf(stderr, "spawn of the watcher failed\n"), 1;
    return s_verdict(watcher, 1.5, "the sibling's notice");
}

/*  A child that dies (SIGKILL, before any PVM call) when its FIFO's writer closes it. */
static int s_fifokill(const char *fifo)
{
    alarm(60);
    int fd = open(fifo, O_RDONLY);
    char c;
    while (fd >= 0 && read(fd, &c, 1) > 0)
        ;
    raise(SIGKILL);
    return 1;
}

/*  A watcher told its target by its parent: asks for PvmTaskExit of it, waits up to 3 s,
 *  and reports 1 and the seconds it took, or 0: to its parent, or into file out. */
static int s_watchmsg(const char *out)
{
    alarm(60);
    int tid = 0;
    if (pvm_recv(pvm_parent(), TAG) > 0)
        pvm_upkint(&tid, 1, 1);
    double t0 = s_now();
    int got = tid > 0 && pvm_notify(PvmTaskExit, TAG, 1, &tid) == 0
              && pvm_trecv(-1, TAG, &(struct timeval){ 3, 0 }) > 0;
    double took = s_now() - t0;
    if (out) {
        FILE *f = fopen(out, "w");
        if (f) {
            fprintf(f, "%d %.3f\n", got, took);
            fclose(f);
        }
    } else {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&got, 1, 1);
        pvm_pkdouble(&took, 1, 1);
        pvm_send(pvm_parent(), RESULT);
    }
    pvm_exit();
    return 0;
}

/*  "busy" (out NULL) or "gone" (out: the watcher's file): see the file's comment. */
static int s_busy(const char *self, const char *fifo, char *out)
{
    alarm(60);
    pvm_setopt(PvmAutoErr, 0);
    int dead = 0, watcher = 0;
    char *die[] = { (char *)"fifokill", (char *)fifo, NULL };
    char *watch[] = { (char *)"watchmsg", out, NULL };
    if (mkfifo(fifo, 0600) < 0)
        return fprintf(stderr, "mkfifo %s failed\n", fifo), 1;
    if (pvm_mytid() <= 0 || pvm_spawn((char *)self, watch, PvmTaskDefault, NULL, 1, &watcher) != 1
        || pvm_spawn((char *)self, die, PvmTaskDefault, NULL, 1, &dead) != 1)
        return fprintf(stderr, "spawn failed\n"), 1;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&dead, 1, 1);
    pvm_send(watcher, TAG);
    int fd = open(fifo, O_WRONLY);      /* the child holds it open: it dies when we close */
    if (fd < 0)
        return fprintf(stderr, "open %s failed\n", fifo), 1;
    if (out)
        return 0;                       /* "gone": our end closes it (no pvm_exit) */
    close(fd);
    volatile double x = 0;              /* 3 s of computation, no PVM call */
    for (double t0 = s_now(); s_now() - t0 < 3.0;)
        for (int i = 0; i < 100000; i++)
            x += i * 0.5;
    return s_verdict(watcher, 1.0, "the watcher's notice while the spawner computes");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "kill"))
        raise(SIGKILL);                 /* before any PVM call */
    if (argc > 1 && !strcmp(argv[1], "exit"))
        return 3;
    if (argc > 1 && !strcmp(argv[1], "wait")) {
        pvm_recv(pvm_parent(), NEVER);
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "master"))
        return s_master(argv[0], argv[2], argc > 3 && !strcmp(argv[2], "script") ? argv[3]
                                                                                : NULL);
    if (argc > 1 && !strcmp(argv[1], "sibling"))
        return s_sibling(argv[0]);
    if (argc > 2 && !strcmp(argv[1], "fifokill"))
        return s_fifokill(argv[2]);
    if (argc > 1 && !strcmp(argv[1], "watchmsg"))
        return s_watchmsg(argc > 2 ? argv[2] : NULL);
    if (argc > 2 && !strcmp(argv[1], "busy"))
        return s_busy(argv[0], argv[2], NULL);
    if (argc > 3 && !strcmp(argv[1], "gone"))
        return s_busy(argv[0], argv[2], argv[3]);
    if (argc > 2 && !strcmp(argv[1], "watch"))
        return s_watch((int)strtol(argv[2], NULL, 16));
    fprintf(stderr, "usage: notify_early master kill|exit|script [script] | sibling | busy FIFO"
                    " | gone FIFO OUT\n");
    return 2;
}
