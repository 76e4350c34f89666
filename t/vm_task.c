/*  t/vm_task.c — a PVM program for the virtual machine tests (t/vm_ssh.sh, t/vm_slurm.sh):
 *  it runs under gimpirun on emulated hosts and prints one line per fact it checks, which
 *  the script compares.  argv[1] says what to do:
 *    config                 "hosts N narch A" and one "host NAME ARCH SPEED" line per host
 *    tasks                  "tasks N" (every task of the virtual machine) and "mine OK"
 *                           when this task is listed with its host's id and its pid
 *    spawn N [WHERE]        spawns N workers (default placement, or on host WHERE) that
 *                           send their host name back: "spawned K", one "worker HOST ptid
 *                           parent|wrong" line per answer (is the worker's ti_ptid in
 *                           pvm_tasks this task?), sorted by the script; "slot E" per
 *                           failed slot
 *    spawnarch N ARCH       spawns N workers on hosts of architecture ARCH, as spawn
 *    spawntime N            spawn N by default placement and wait for every answer:
 *                           "spawn_us=T" (bench/vm-compare.sh)
 *    worker                 (started by spawn) sends its host, tid and ti_ptid to its parent
 *    addhosts H...          "added K" and "info H CODE" per host
 *    delhosts H...          "deleted K" and "info H CODE" per host
 *    mstat H                "mstat H CODE"
 *    group N                joins group "vm", barriers with N members, bcasts and
 *                           reduces, prints "group ok INST" (every task of a job)
 *    hold N H               joins "hold" and barriers with N members ("held RC"); the task
 *                           on host H then waits to be killed, the others enter the next
 *                           barrier, which it never joins: "barrier ok|error" when it ends
 *    grow H                 pvm_addhosts H, a worker spawned there, pvm_delhosts H:
 *                           "added K", "hosts N", "worker HOST", "deleted K", "hosts N",
 *                           "mstat CODE"
 *    addspawn H [any [P]]   pvm_addhosts H, a worker spawned there (program P, default
 *                           vm_task), pvm_recv (blocking) of its answer (from its tid, or
 *                           from any with "any"): "added K info C", "spawned K" ("slot E" when not),
 *                           "worker HOST" or "recv E"
 *    notify H               pvm_notify: PvmHostAdd, then pvm_addhosts H: "hostadd N
 *                           same|other" (the message's count, and whether its dtid is the
 *                           one pvm_addhosts gave); a sleeper spawned on H and PvmTaskExit
 *                           of it, PvmHostDelete of H, pvm_delhosts H: "taskexit OK" and
 *                           "hostdelete OK" when their messages come (from t80000000, with
 *                           the tid / dtid), each within 10 s
 *    kill TID               pvm_kill of TID: "kill RC"
 *    remotekill H           spawns a "sleeper" on host H, pvm_kills it once it answered:
 *                           "kill RC", then "gone" when pvm_pstat says PvmNoTask (10 s)
 *    sleeper                (started by remotekill) tells its parent, then waits
 *    pwd                    "pwd DIR" (the working directory)
 *    wait                   prints "ready" and waits to be killed
 */
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*  This task's host name in the virtual machine. */
static const char *s_host(void)
{
    const char *h = getenv("GIMPI_HOST");
    static char buf[256];
    if (h && *h)
        return h;
    gethostname(buf, sizeof buf - 1);
    return buf;
}

/*  A notify message with tag (10 s at most): its first int when it came from t80000000
 *  with n ints (the rest into rest[]), else -1. */
static int s_notified(int tag, int n, int *rest)
{
    int bufid = pvm_trecv(-1, tag, &(struct timeval){ 10, 0 });
    int bytes = 0, t, src = 0, v[8] = { -1 };
    if (bufid <= 0 || n > 8 || pvm_bufinfo(bufid, &bytes, &t, &src) < 0
        || (unsigned)src != 0x80000000u || bytes != 4 * n || pvm_upkint(v, n, 1) < 0)
        return -1;
    for (int i = 1; rest && i < n; i++)
        rest[i - 1] = v[i];
    return v[0];
}

/*  notify H: PvmHostAdd, PvmTaskExit and PvmHostDelete around adding and deleting H. */
static int s_notify(char *host)
{
    int info = 0, dtid = 0, tid = 0;
    pvm_notify(PvmHostAdd, 40, -1, NULL);
    printf("added %d\n", pvm_addhosts(&host, 1, &info));
    int n = s_notified(40, 2, &dtid);
    printf("hostadd %d %s\n", n, dtid == info ? "same" : "other");
    char *args[] = { "sleeper", NULL };
    if (pvm_spawn("vm_task", args, PvmTaskHost, host, 1, &tid) != 1
        || pvm_trecv(tid, 78, &(struct timeval){ 30, 0 }) <= 0)
        return 1;
    pvm_notify(PvmTaskExit, 41, 1, &tid);
    pvm_notify(PvmHostDelete, 42, 1, &info);
    int dinfo;
    printf("deleted %d\n", pvm_delhosts(&host, 1, &dinfo));
    if (s_notified(41, 1, NULL) == tid)
        printf("taskexit OK\n");
    if (s_notified(42, 1, NULL) == info)
        printf("hostdelete OK\n");
    return 0;
}

/*  spawn and spawnarch: the workers' answers. */
static int s_spawn(int n, int flag, char *where)
{
    int *tids = calloc((size_t)n, sizeof *tids);
    char *args[] = { "worker", NULL };
    int k = pvm_spawn("vm_task", args, flag, where, n, tids);
    printf("spawned %d\n", k);
    for (int i = k; i < n; i++)
        printf("slot %d\n", tids[i]);
    for (int i = 0; i < k; i++) {
        int bufid = pvm_trecv(-1, 77, &(struct timeval){ 60, 0 });
        if (bufid <= 0) {
            printf("no answer %d\n", bufid);
            return 1;
        }
        char host[256];
        int tid, ptid;
        pvm_upkstr(host);
        pvm_upkint(&tid, 1, 1);
        pvm_upkint(&ptid, 1, 1);
        int found = 0;
        for (int j = 0; j < k; j++)
            found |= tids[j] == tid;
        printf("worker %s%s ptid %s\n", host, found ? "" : " (unknown tid)",
               ptid == pvm_mytid() ? "parent" : "wrong");
    }
    free(tids);
    return 0;
}

/*  config: the hosts of the virtual machine. */
static int s_config(int argc, char **argv, int me)
{
    (void)argc, (void)argv, (void)me;
    int n, na;
    struct pvmhostinfo *h;
    int rc = pvm_config(&n, &na, &h);
    printf("hosts %d narch %d\n", n, na);
    for (int i = 0; rc == 0 && i < n; i++)
        printf("host %s %s %d\n", h[i].hi_name, h[i].hi_arch, h[i].hi_speed);
    return rc;
}

/*  tasks: every task of the virtual machine, this one among them, and its host's. */
static int s_tasks(int argc, char **argv, int me)
{
    (void)argc, (void)argv;
    int n;
    struct pvmtaskinfo *t;
    int rc = pvm_tasks(0, &n, &t);
    printf("tasks %d\n", n);
    int dtid = pvm_tidtohost(me);
    for (int i = 0; rc == 0 && i < n; i++)
        if (t[i].ti_tid == me && t[i].ti_pid == (int)getpid() && t[i].ti_host == dtid
            && !strcmp(t[i].ti_a_out, "vm_task"))
            printf("mine OK\n");
    int nh;
    rc = pvm_tasks(dtid, &nh, &t);
    printf("on my host %s\n", nh >= 1 && nh <= n ? "OK" : "wrong");
    return rc;
}

/*  spawn N [WHERE]. */
static int s_cmd_spawn(int argc, char **argv, int me)
{
    (void)me;
    return s_spawn(atoi(argv[2]), argc > 3 ? PvmTaskHost : PvmTaskDefault,
                   argc > 3 ? argv[3] : NULL);
}

/*  spawntime N: how long spawning N and hearing from each took. */
static int s_spawntime(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = s_spawn(atoi(argv[2]), PvmTaskDefault, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("spawn_us=%ld\n", (long)((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000));
    return rc;
}

/*  spawnarch N ARCH. */
static int s_spawnarch(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    return s_spawn(atoi(argv[2]), PvmTaskArch, argv[3]);
}

/*  worker: its host and tid to its parent, and the parent pvm_tasks gives it (-1: not
 *  listed). */
static int s_worker(int argc, char **argv, int me)
{
    (void)argc, (void)argv;
    struct pvmtaskinfo *t;
    int n = 0, ptid = pvm_tasks(me, &n, &t) == 0 && n == 1 ? t[0].ti_ptid : -1;
    pvm_initsend(PvmDataDefault);
    pvm_pkstr((char *)s_host());
    pvm_pkint(&me, 1, 1);
    pvm_pkint(&ptid, 1, 1);
    return pvm_send(pvm_parent(), 77);
}

/*  addhosts H... and delhosts H...: the count and each host's code. */
static int s_hosts(int argc, char **argv, int me)
{
    (void)me;
    const char *what = argv[1];
    int n = argc - 2;
    int *infos = calloc((size_t)n + 1, sizeof *infos);
    int k = what[0] == 'a' ? pvm_addhosts(argv + 2, n, infos)
                           : pvm_delhosts(argv + 2, n, infos);
    printf("%s %d\n", what[0] == 'a' ? "added" : "deleted", k);
    for (int i = 0; i < n; i++)
        printf("info %s %s\n", argv[2 + i], infos[i] > 0 ? "dtid" : infos[i] == 0 ? "0"
                                            : "err");
    for (int i = 0; i < n; i++)
        if (infos[i] < 0)
            printf("code %s %d\n", argv[2 + i], infos[i]);
    free(infos);
    return 0;
}

/*  mstat H. */
static int s_mstat(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    printf("mstat %s %d\n", argv[2], pvm_mstat(argv[2]));
    return 0;
}

/*  group N: barrier, bcast, reduce and barrier in group "vm". */
static int s_group(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    int n = atoi(argv[2]);
    int inst = pvm_joingroup("vm");
    int rc = pvm_barrier("vm", n);
    int v = inst + 1, data = 0;
    if (rc == 0 && inst == 0) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&n, 1, 1);
        rc = pvm_bcast("vm", 5);
    } else if (rc == 0) {
        rc = pvm_recv(-1, 5) > 0 ? pvm_upkint(&data, 1, 1) : -1;
        rc = rc == 0 && data == n ? 0 : -1;
    }
    if (rc == 0)
        rc = pvm_reduce(PvmSum, &v, 1, PVM_INT, 6, "vm", 0);
    if (rc == 0 && inst == 0 && v != n * (n + 1) / 2)
        rc = -1;
    if (rc == 0)
        rc = pvm_barrier("vm", n);
    printf("group %s %d\n", rc == 0 ? "ok" : "failed", inst);
    pvm_lvgroup("vm");
    return rc;
}

/*  hold N [H]: a barrier, then the task on H waits to be killed, the others enter the
 *  next barrier. */
static int s_hold(int argc, char **argv, int me)
{
    (void)me;
    int n = atoi(argv[2]);
    pvm_joingroup("hold");
    int rc = pvm_barrier("hold", n);
    printf("held %d\n", rc);
    if (argc > 3 && !strcmp(s_host(), argv[3]))
        pause();
    rc = pvm_barrier("hold", n);
    printf("barrier %s\n", rc < 0 ? "error" : "ok");
    return 0;
}

/*  grow H: add H, a worker there, delete H. */
static int s_grow(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    int info, n;
    struct pvmhostinfo *h;
    printf("added %d\n", pvm_addhosts(argv + 2, 1, &info));
    pvm_config(&n, NULL, &h);
    printf("hosts %d\n", n);
    int rc = s_spawn(1, PvmTaskHost, argv[2]);
    printf("deleted %d\n", pvm_delhosts(argv + 2, 1, &info));
    pvm_config(&n, NULL, &h);
    printf("hosts %d\n", n);
    printf("mstat %d\n", pvm_mstat(argv[2]));
    return rc;
}

/*  addspawn H: add H, a worker there, its answer with a blocking pvm_recv. */
static int s_addspawn(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    int info = 0, tid = 0;
    char *args[] = { "worker", NULL }, host[256] = "";
    int added = pvm_addhosts(argv + 2, 1, &info);
    printf("added %d info %d\n", added, info);
    int k = pvm_spawn(argc > 4 ? argv[4] : "vm_task", args, PvmTaskHost, argv[2], 1, &tid);
    printf(k == 1 ? "spawned %d\n" : "slot %d\n", k == 1 ? k : tid);
    int bufid = k == 1 ? pvm_recv(argc > 3 && !strcmp(argv[3], "any") ? -1 : tid, 77) : -1;
    if (bufid > 0 && pvm_upkstr(host) == 0)
        printf("worker %s\n", host);
    else if (k == 1)
        printf("recv %d\n", bufid);
    return 0;
}

/*  remotekill H: a sleeper on H, killed once it answered, gone within 10 s. */
static int s_remotekill(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    int tid = 0;
    char *args[] = { "sleeper", NULL };
    if (pvm_spawn("vm_task", args, PvmTaskHost, argv[2], 1, &tid) == 1
        && pvm_trecv(tid, 78, &(struct timeval){ 30, 0 }) > 0) {
        printf("kill %d\n", pvm_kill(tid));
        for (int i = 0; i < 100; i++) {
            if (pvm_pstat(tid) == PvmNoTask) {
                printf("gone\n");
                break;
            }
            usleep(100000);
        }
    } else
        printf("spawn failed %d\n", tid);
    return 0;
}

/*  sleeper: tells its parent, then waits to be killed. */
static int s_sleeper(int argc, char **argv, int me)
{
    (void)argc, (void)argv, (void)me;
    pvm_initsend(PvmDataDefault);
    pvm_send(pvm_parent(), 78);
    pause();
    return 0;
}

/*  pwd: the working directory. */
static int s_pwd(int argc, char **argv, int me)
{
    (void)argc, (void)argv, (void)me;
    char d[4096];
    printf("pwd %s\n", getcwd(d, sizeof d) ? d : "?");
    return 0;
}

/*  notify H. */
static int s_cmd_notify(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    return s_notify(argv[2]);
}

/*  kill TID. */
static int s_kill(int argc, char **argv, int me)
{
    (void)argc, (void)me;
    printf("kill %d\n", pvm_kill((int)strtol(argv[2], NULL, 0)));
    return 0;
}

/*  wait: says it is ready, then waits to be killed. */
static int s_wait(int argc, char **argv, int me)
{
    (void)argc, (void)argv;
    printf("ready t%x\n", me);
    pause();
    return 0;
}

/*  The commands: a name, the argc it needs at least, the function. */
static const struct {
    const char *name;
    int argc;
    int (*fn)(int argc, char **argv, int me);
} s_commands[] = {
    { "config", 1, s_config },      { "tasks", 2, s_tasks },
    { "spawn", 3, s_cmd_spawn },    { "spawntime", 3, s_spawntime },
    { "spawnarch", 4, s_spawnarch }, { "worker", 2, s_worker },
    { "addhosts", 2, s_hosts },     { "delhosts", 2, s_hosts },
    { "mstat", 3, s_mstat },        { "group", 3, s_group },
    { "hold", 3, s_hold },          { "grow", 3, s_grow },
    { "remotekill", 3, s_remotekill }, { "sleeper", 2, s_sleeper },
    { "pwd", 2, s_pwd },            { "notify", 3, s_cmd_notify },
    { "kill", 3, s_kill },          { "wait", 2, s_wait },
    { "addspawn", 3, s_addspawn },
};

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *what = argc > 1 ? argv[1] : "config";
    int me = pvm_mytid();
    if (me < 0)
        return 2;
    int rc = 2, known = 0;
    for (size_t i = 0; !known && i < sizeof s_commands / sizeof s_commands[0]; i++)
        if (!strcmp(what, s_commands[i].name) && argc >= s_commands[i].argc) {
            known = 1;
            rc = s_commands[i].fn(argc, argv, me);
        }
    if (!known)
        fprintf(stderr, "vm_task: unknown command %s\n", what);
    pvm_exit();
    return rc < 0 ? 1 : rc;
}
