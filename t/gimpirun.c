/*  t/gimpirun.c — tests of the launcher: single-client jobs of several programs, the
 *  hand-over of the tables, -tag, line forwarding, stdin, failing and killed tasks named
 *  in the exit status, the grace period, signal forwarding and bad command lines.  Every
 *  run is bounded; the signal test synchronises on the tasks' "ready" lines.
 */
#include "gtap.h"
#include "testlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BOUND_MS 30000

typedef struct {
    int status;                 /* wait status, -1 when it had to be killed */
    char out[65536];
    char err[16384];
} run_t;

/*  Runs gimpirun with the given arguments (NULL-terminated) and collects its output. */
static void s_run(run_t *r, const char *stdin_text, ...)
{
    char *argv[64];
    int n = 0;
    static char prog[4096];
    snprintf(prog, sizeof prog, "%s", tl_prog("programs/gimpirun"));
    argv[n++] = prog;
    va_list ap;
    va_start(ap, stdin_text);
    char *a;
    while ((a = va_arg(ap, char *)) != NULL && n < 63)
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    int in[2];
    if (pipe2(in, O_CLOEXEC) < 0)
        BAIL_OUT("pipe");
    int saved = dup(0);
    dup2(in[0], 0);
    close(in[0]);
    tl_child_t c;
    int rc = tl_spawn(argv, &c);
    dup2(saved, 0);
    close(saved);
    if (rc < 0)
        BAIL_OUT("cannot start gimpirun");
    if (stdin_text && write(in[1], stdin_text, strlen(stdin_text)) != (ssize_t)strlen(stdin_text))
        diag("stdin write failed");
    close(in[1]);
    tl_read_all(c.out, r->out, sizeof r->out, BOUND_MS);
    tl_read_all(c.err, r->err, sizeof r->err, BOUND_MS);
    r->status = tl_wait(&c, BOUND_MS);
    tl_child_close(&c);
}

/*  Number of occurrences of needle in hay. */
static int s_count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static int s_exited(const run_t *r, int code)
{
    int good = r->status >= 0 && WIFEXITED(r->status) && WEXITSTATUS(r->status) == code;
    if (!good)
        diag("status %#x err [%s] out [%.300s]", r->status, r->err, r->out);
    return good;
}

int main(void)
{
    plan(NO_PLAN);
    static run_t r;
    char task[4096];
    snprintf(task, sizeof task, "%s", tl_prog("t/job_task"));

    s_run(&r, NULL, "-np", "3", task, "info", NULL);
    ok(s_exited(&r, 0), "3-task job exits 0");
    ok(strstr(r.out, "rank 0 of 3") && strstr(r.out, "rank 1 of 3") && strstr(r.out, "rank 2 of 3"),
       "every task got its world rank and the job size");
    ok(s_count(r.out, "launched 1") == 3, "tasks know they were launched");
    ok(strstr(r.out, "pktlen 262144 ackmark 32 hiwater 64 clients 1") != NULL,
       "default packet length and marks agreed");

    s_run(&r, NULL, "-tag", "-np", "1", task, "info", ":", "-np", "2", task, "info", NULL);
    ok(s_exited(&r, 0), "two programs, one job");
    ok(strstr(r.out, "[0] rank 0 of 3") && strstr(r.out, "[2] rank 2 of 3"), "-tag prefixes ranks");

    s_run(&r, NULL, "-datalen", "16", "-ackmark", "1", "-hiwater", "1", "-np", "2", task, NULL);
    ok(s_exited(&r, 0) && s_count(r.out, "pktlen 16 ackmark 1 hiwater 1") == 2,
       "offered packet length and marks reach the tasks");

    s_run(&r, NULL, "-tag", "-np", "2", task, "lines", "500", NULL);
    ok(s_exited(&r, 0), "chatty job exits 0");
    ok(s_count(r.out, "\n") == 1002, "every line forwarded, unterminated last lines too");
    ok(strstr(r.out, "[1] line 499 of rank 1\n") && strstr(r.out, "[0] line 250 of rank 0\n"),
       "lines are whole and tagged");

    s_run(&r, "hello there\n", "-np", "2", task, "stdin", NULL);
    ok(s_exited(&r, 0) && s_count(r.out, "stdin: hello there") == 1, "stdin reaches task 0 only");
    if (!s_exited(&r, 0) || s_count(r.out, "stdin: hello there") != 1)
        diag("status %d out [%s] err [%s]", r.status, r.out, r.err);

    s_run(&r, NULL, "-np", "3", task, "info", ":", "-np", "1", task, "exit", "3", NULL);
    ok(s_exited(&r, 1), "a task exiting 3 makes gimpirun exit 1");
    ok(strstr(r.err, "task 3 (") && strstr(r.err, "exited with status 3"), "the failed task is named");

    int64_t t0 = tl_now_ms();
    s_run(&r, NULL, "-grace", "1", "-np", "2", task, "wait", ":", "-np", "1", task, "kill", NULL);
    ok(s_exited(&r, 1), "a killed task fails the job");
    ok(strstr(r.err, "task 2 (") && strstr(r.err, "killed by signal 9"), "the killed task is named");
    ok(strstr(r.err, "terminating the 2 remaining tasks") != NULL, "the others are terminated");
    cmp_ok(tl_now_ms() - t0, "<", 20000, "the job ended after the grace period, no hang");

    s_run(&r, NULL, "-np", "2", "/nonexistent/prog", NULL);
    ok(s_exited(&r, 1) && strstr(r.err, "cannot run /nonexistent/prog"), "missing program reported");

    s_run(&r, NULL, "-np", "2", "/bin/echo", "plain", NULL);
    ok(s_exited(&r, 0) && s_count(r.out, "plain\n") == 2, "non-gimpi programs run too");

    s_run(&r, NULL, "-bogus", task, NULL);
    ok(s_exited(&r, 2) && strstr(r.err, "unknown option -bogus"), "unknown option: exit 2");
    s_run(&r, NULL, "-np", "0", task, NULL);
    ok(s_exited(&r, 2), "-np 0: exit 2");
    s_run(&r, NULL, "-np", "2", NULL);
    ok(s_exited(&r, 2) && strstr(r.err, "no program"), "no program: exit 2");
    s_run(&r, NULL, "-ackmark", "5", "-hiwater", "2", task, NULL);
    ok(s_exited(&r, 2), "ackmark above hiwater: exit 2");

    /* SIGTERM to gimpirun reaches every task */
    char *argv[] = { (char *)tl_prog("programs/gimpirun"), "-np", "3", task, "wait", NULL };
    char prog[4096];
    snprintf(prog, sizeof prog, "%s", argv[0]);
    argv[0] = prog;
    tl_child_t c;
    ok(tl_spawn(argv, &c) == 0, "started a waiting job");
    int ready = 0;
    char line[256];
    while (ready < 3 && tl_read_line(c.out, line, sizeof line, BOUND_MS) >= 0)
        ready += strcmp(line, "ready") == 0;
    cmp_ok(ready, "==", 3, "all three tasks ready");
    kill(c.pid, SIGTERM);
    int st = tl_wait(&c, BOUND_MS);
    size_t n = tl_read_all(c.err, r.err, sizeof r.err, 5000);
    (void)n;
    ok(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1, "SIGTERM: gimpirun exits 1");
    cmp_ok(s_count(r.err, "killed by signal 15"), "==", 3, "every task got the SIGTERM");
    tl_child_close(&c);

    done_testing();
}
