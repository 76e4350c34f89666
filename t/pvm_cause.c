/*  t/pvm_cause.c — a PvmSysErr says its cause: pvm_perror's line, the PvmAutoErr line and
 *  pvm_errcause() name why the call failed, after PVM's number and PVM's text, which stay
 *  as they are.  Provoked here, on a private groupd, from this process as a PVM task and
 *  copies of it that it spawns (argv[1] "child"):
 *    - enrolment that fails (a broken launcher environment): "startup: ...";
 *    - a receive from a spawned task that has exited: "t<tid> is not a task of this
 *      virtual machine" (groupd no longer knows it) or "... closed its connection";
 *    - a receive from a spawned task killed with SIGKILL while we wait for it;
 *    - a receive when every other task is gone;
 *    - groupd never reachable (a closed TCP port): "groupd at <ep> unreachable";
 *    - groupd killed: "groupd at <ep> is gone", for group queries and barriers;
 *    - a receive from a tid that never existed: it is not a task of this virtual machine;
 *    - a lone task's receive from itself, nothing queued: it can never get one;
 *    - no cause nests parentheses ("(... (...))");
 *    - pvm_addhosts outside a virtual machine: how to get one (gimpirun -hostfile);
 *  and an error that is not PvmSysErr keeps PVM's line exactly, with no cause.
 *  Every wait is bounded.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"
#include "pvm3.h"
#include "pvmtest.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char s_exe[PATH_MAX];

/* ------------------------------------------------------------------ the child side */

/*  A spawned child: "exit" sends its pid and leaves; "hang" sends its pid and waits for
 *  a message that never comes (until it is killed). */
static int s_child_main(const char *mode)
{
    int parent = pvm_parent();
    int pid = (int)getpid();
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&pid, 1, 1);
    pvm_send(parent, 1);
    if (!strcmp(mode, "hang"))
        pvm_recv(parent, 99);
    pvm_exit();
    return 0;
}

/* ------------------------------------------------------------------ helpers */

/*  Calls for pvmtest_capture. */
static int s_call_perror(void *arg) { return pvm_perror(arg); }
static int s_call_recv(void *arg) { return pvm_recv(*(int *)arg, 2); }

/*  pvm_perror(msg)'s line. */
static void s_perror_line(const char *msg, char *out, size_t size)
{
    pvmtest_capture(s_call_perror, (void *)msg, out, size);
}

/*  1 when text contains PVM's line "<prefix>: <msg>: Can't contact local daemon (" and then
 *  want, and pvm_errcause() contains want. */
static int s_says(const char *text, const char *msg, const char *want)
{
    char head[256];
    snprintf(head, sizeof head, ": %s: Can't contact local daemon (", msg);
    const char *h = strstr(text, head);
    return !strncmp(text, "libpvm [", 8) && h && strstr(h, want) && strstr(pvm_errcause(), want);
}

/*  1 when text has a parenthesis opened inside another one. */
static int s_nested(const char *text)
{
    int depth = 0;
    for (const char *c = text; *c; c++) {
        if (*c == '(' && ++depth > 1)
            return 1;
        if (*c == ')' && depth > 0)
            depth--;
    }
    return 0;
}

/*  Spawns one child in mode; its tid, with its pid received (0 on failure). */
static int s_spawn(const char *mode, int *pid)
{
    char *argv[] = { "child", (char *)mode, NULL };
    int tid = 0;
    if (pvm_spawn(s_exe, argv, PvmTaskDefault, NULL, 1, &tid) != 1 || tid <= 0)
        return 0;
    struct timeval tmo = { 20, 0 };
    if (pvm_trecv(tid, 1, &tmo) <= 0 || pvm_upkint(pid, 1, 1) < 0)
        return 0;
    return tid;
}

/*  Runs fn in a forked child with its stderr into out (bounded); the child's pid. */
static pid_t s_forked(void (*fn)(void), char *out, size_t size, int timeout_ms)
{
    int p[2];
    if (pipe(p) < 0)
        BAIL_OUT("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 2);
        fn();
        _exit(0);
    }
    close(p[1]);
    size_t n = tl_read_all(p[0], out, size - 1, timeout_ms);
    out[n] = 0;
    close(p[0]);
    waitpid(pid, NULL, 0);
    return pid;
}

/* ------------------------------------------------------------------ the cases */

/*  The startup child: the launcher's listening fd is not there. */
static void s_startup_child(void)
{
    setenv("GIMPI_LISTEN_FD", "999", 1);
    pvm_setopt(PvmAutoErr, 1);
    int rc = pvm_mytid();
    pvm_perror("enrol");
    fprintf(stderr, "rc %d cause [%s]\n", rc, pvm_errcause());
}

/*  Enrolment fails in a child process. */
static void test_startup(void)
{
    char out[4096];
    pid_t pid = s_forked(s_startup_child, out, sizeof out, 20000);
    char want[128];
    snprintf(want, sizeof want, "libpvm [pid%d]: enrol: Can't contact local daemon (startup: ",
             (int)pid);
    ok(strstr(out, want) != NULL, "enrolment fails: pvm_perror says PVM's text, then the cause");
    ok(strstr(out, "pvm_mytid(): Can't contact local daemon (startup: "),
       "... so does the PvmAutoErr line");
    ok(strstr(out, "rc -14 cause [startup: ") != NULL, "... and pvm_errcause, with PvmSysErr");
    ok(!s_nested(out), "... no parenthesis nests in another");
    diag("%s", out);
    if (!strstr(out, want))
        diag("%s", out);
}

/*  A receive from a spawned task that has exited, then from one killed while we wait. */
static void test_dead_peer(void)
{
    char line[1024], want[64];
    int pid = 0, tid = s_spawn("exit", &pid);
    ok(tid > 0, "a child spawned (t%x) said hello", (unsigned)tid);
    waitpid(pid, NULL, 0);
    pvm_setopt(PvmAutoErr, 0);
    cmp_ok(pvm_recv(tid, 2), "==", PvmSysErr, "recv from the exited child: PvmSysErr");
    s_perror_line("recv", line, sizeof line);
    snprintf(want, sizeof want, "(t%x ", (unsigned)tid);
    ok(s_says(line, "recv", want + 1) && strstr(line, want)
       && (strstr(line, "is not a task of this virtual machine")
           || strstr(line, "closed its connection)")),
       "pvm_perror: PVM's text, then (t%x is not a task ...) or (... closed its connection)",
       (unsigned)tid);
    diag("%s", line);
    pvm_errno = PvmSysErr;
    pvm_gsize("nosuch");
    cmp_ok(pvm_errno, "==", PvmNoGroup, "a later failure of another kind ...");
    is(pvm_errcause(), "", "... has no cause");
    s_perror_line("gsize", line, sizeof line);
    snprintf(want, sizeof want, "libpvm [t%x]: gsize: No such group\n", (unsigned)pvm_mytid());
    is(line, want, "... and pvm_perror prints PVM's line exactly");

    /* killed while we wait for it: the AutoErr line names it */
    tid = s_spawn("hang", &pid);
    ok(tid > 0, "a second child (t%x) said hello", (unsigned)tid);
    pvm_setopt(PvmAutoErr, 1);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    int rc = pvmtest_capture(s_call_recv, &tid, line, sizeof line);
    cmp_ok(rc, "==", PvmSysErr, "recv from a child killed meanwhile: PvmSysErr");
    snprintf(want, sizeof want, "t%x", (unsigned)tid);
    const char *l = strstr(line, "libpvm [");
    ok(l && strstr(l, "]: pvm_recv(): Can't contact local daemon (") && strstr(l, want),
       "the PvmAutoErr line: PVM's text, then the cause naming %s", want);
    diag("%s", l ? l : line);
    pvm_setopt(PvmAutoErr, 0);
}

/*  The unreachable child: groupd at a closed TCP port. */
static void s_unreachable_child(void)
{
    setenv("GIMPI_GROUPD", "tcp://127.0.0.1:1", 1);
    pvm_setopt(PvmAutoErr, 0);
    int rc = pvm_joingroup("g");
    pvm_perror("join");
    fprintf(stderr, "rc %d\n", rc);
}

/*  groupd unreachable from the start (a child process pointed at a closed TCP port). */
static void test_groupd_unreachable(void)
{
    char out[4096];
    s_forked(s_unreachable_child, out, sizeof out, 30000);
    ok(strstr(out, ": join: Can't contact local daemon (groupd at tcp://127.0.0.1:1 unreachable)")
       && strstr(out, "rc -14"), "groupd unreachable: PvmSysErr, and pvm_perror says so");
    if (!strstr(out, "unreachable)"))
        diag("%s", out);
}

/*  A receive from a tid that never existed, then from every other task when all are gone:
 *  causes that say so, never nested in parentheses. */
static void test_unknown_and_all_gone(void)
{
    char line[1024];
    pvm_setopt(PvmAutoErr, 0);
    int rc = pvm_recv(0x12345, 1);
    cmp_ok(rc, "<", 0, "recv from t12345, which never existed, fails (%d)", rc);
    s_perror_line("recv", line, sizeof line);
    ok(strstr(line, "(t12345 is not a task of this virtual machine") && !s_nested(line),
       "... its cause: t12345 is not a task of this virtual machine");
    diag("%s", line);
    int any = -1;
    pvm_setopt(PvmAutoErr, 1);
    rc = pvmtest_capture(s_call_recv, &any, line, sizeof line);
    pvm_setopt(PvmAutoErr, 0);
    cmp_ok(rc, "==", PvmSysErr, "recv from any task when every other is gone: PvmSysErr");
    ok(strstr(line, "pvm_recv(): Can't contact local daemon (every other task") && !s_nested(line),
       "... the PvmAutoErr line says so, with no nested parentheses");
    diag("%s", line);
}

/*  A receive from itself, nothing queued, when every other task is gone: returns at once
 *  and says that it can never get one. */
static void test_recv_self(void)
{
    char line[1024], want[96];
    int me = pvm_mytid();
    pvm_setopt(PvmAutoErr, 0);
    cmp_ok(pvm_recv(me, 99), "==", PvmSysErr, "recv from itself, nothing queued: PvmSysErr");
    s_perror_line("recv", line, sizeof line);
    snprintf(want, sizeof want, "(t%x waits for a message from itself", (unsigned)me);
    ok(strstr(line, want) && !strstr(line, "closed its connection") && !s_nested(line),
       "... its cause: t%x waits for a message from itself, none can come", (unsigned)me);
    diag("%s", line);
}

/*  The addhosts child: a shell-started task (no virtual machine) adds a host. */
static void s_addhosts_child(void)
{
    pvm_setopt(PvmAutoErr, 1);
    char *hosts[] = { "nosuchhost" };
    int info = 0;
    int rc = pvm_addhosts(hosts, 1, &info);
    fprintf(stderr, "rc %d info %d cause [%s]\n", rc, info, pvm_errcause());
    pvm_exit();
}

/*  pvm_addhosts outside a virtual machine keeps PVM's code and says how to get one. */
static void test_addhosts_no_vm(void)
{
    char out[4096];
    s_forked(s_addhosts_child, out, sizeof out, 20000);
    ok(strstr(out, "pvm_addhosts(): No such host (no virtual machine to add hosts to")
       && strstr(out, "gimpirun -hostfile") && strstr(out, "rc -6 info -6 cause [no virtual"),
       "pvm_addhosts without a virtual machine: PvmNoHost, and the cause names the fix");
    diag("%s", out);
}

/*  groupd killed: group queries and barriers say that groupd is gone. */
static void test_groupd_gone(gdt_daemon_t *d)
{
    char line[1024], want[700];
    cmp_ok(pvm_joingroup("g"), ">=", 0, "joined g");
    gdt_kill(d);
    snprintf(want, sizeof want, "groupd at %s is gone", d->endpoint);
    int rc = PvmOk;
    for (int i = 0; i < 200 && rc != PvmSysErr; i++) {   /* until the client has noticed */
        rc = pvm_gsize("g");
        if (rc != PvmSysErr)
            usleep(10000);
    }
    cmp_ok(rc, "==", PvmSysErr, "gsize after groupd died: PvmSysErr");
    s_perror_line("gsize", line, sizeof line);
    ok(s_says(line, "gsize", want), "pvm_perror: PVM's text, then (%s)", want);
    if (!s_says(line, "gsize", want))
        diag("got: %s", line);
    cmp_ok(pvm_barrier("g", 1), "==", PvmSysErr, "a barrier: PvmSysErr");
    ok(strstr(pvm_errcause(), want) != NULL, "... its cause: %s", pvm_errcause());
    pvm_initsend(PvmDataDefault);
    int me = pvm_mytid(), got = 0;
    pvm_pkint(&me, 1, 1);
    ok(pvm_send(me, 5) == 0 && pvm_recv(me, 5) > 0 && pvm_upkint(&got, 1, 1) == 0
       && got == me, "messages still work without groupd");
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "child"))
        return s_child_main(argv[2]);
    plan(NO_PLAN);
    gtap_watchdog(300);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    ssize_t n = readlink("/proc/self/exe", s_exe, sizeof s_exe - 1);
    if (n <= 0)
        BAIL_OUT("readlink /proc/self/exe");
    s_exe[n] = 0;
    test_startup();
    gdt_daemon_t d;
    if (gdt_start(&d, NULL) < 0)
        BAIL_OUT("groupd did not start");
    setenv("GIMPI_GROUPD", d.endpoint, 1);
    test_groupd_unreachable();
    test_addhosts_no_vm();
    test_dead_peer();
    test_unknown_and_all_gone();
    test_recv_self();
    test_groupd_gone(&d);
    pvm_exit();
    gdt_cleanup(&d);
    done_testing();
}
