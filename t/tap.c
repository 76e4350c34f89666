/*  tap.c — a small TAP emitter with libtap's calls, used when no system libtap exists.
 *
 *  Prints a TAP stream on stdout (plan, ok/not ok lines with numbers, diagnostics on
 *  stderr as "# ..." lines) and computes the exit status: 0 when every planned test ran
 *  and passed.  Single-threaded by design: tests assert from their main thread.
 */
#include "gtap.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#ifndef HAVE_LIBTAP
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int s_planned = -1;      /* tests planned, -1 for no plan */
static int s_run;               /* tests run */
static int s_failed;            /* tests failed */
static int s_plan_printed;

/*  At exit: print the plan for done_testing and the summary diagnostics. */
static void s_finish(void)
{
    if (!s_plan_printed && s_run > 0) {
        printf("1..%d\n", s_run);
        s_plan_printed = 1;
    }
    if (s_planned >= 0 && s_run != s_planned)
        fprintf(stderr, "# Looks like you planned %d tests but ran %d.\n", s_planned, s_run);
    if (s_failed)
        fprintf(stderr, "# Looks like you failed %d test%s of %d.\n", s_failed,
                s_failed == 1 ? "" : "s", s_run);
    fflush(stdout);
}

/*  plan(N), plan(NO_PLAN) or plan(SKIP_ALL, "reason"). */
void tap_plan(int tests, const char *fmt, ...)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    atexit(s_finish);
    if (tests == SKIP_ALL) {
        printf("1..0 # SKIP ");
        va_list ap;
        va_start(ap, fmt);
        if (fmt)
            vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        s_plan_printed = 1;
        exit(0);
    }
    if (tests >= 0) {
        s_planned = tests;
        printf("1..%d\n", tests);
        s_plan_printed = 1;
    }
}

/*  One test point. */
static int s_vok(int pass, const char *file, int line, const char *fmt, va_list ap)
{
    s_run++;
    printf("%sok %d - ", pass ? "" : "not ", s_run);
    vprintf(fmt, ap);
    printf("\n");
    if (!pass) {
        s_failed++;
        fprintf(stderr, "#   Failed test at %s line %d.\n", file, line);
    }
    fflush(stdout);
    return pass;
}

int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s_vok(pass, file, line, fmt, ap);
    va_end(ap);
    return pass;
}

/*  String equality, NULL-safe. */
int tap_is(const char *got, const char *expected, const char *file, int line,
           const char *fmt, ...)
{
    int pass = (got == NULL && expected == NULL) ||
               (got && expected && strcmp(got, expected) == 0);
    va_list ap;
    va_start(ap, fmt);
    s_vok(pass, file, line, fmt, ap);
    va_end(ap);
    if (!pass)
        fprintf(stderr, "#          got: '%s'\n#     expected: '%s'\n",
                got ? got : "(null)", expected ? expected : "(null)");
    return pass;
}

/*  Integer comparison with an operator given as a string. */
int tap_cmp_ok(long long a, const char *op, long long b, const char *file, int line,
               const char *fmt, ...)
{
    int pass;
    if (!strcmp(op, "==")) pass = a == b;
    else if (!strcmp(op, "!=")) pass = a != b;
    else if (!strcmp(op, "<")) pass = a < b;
    else if (!strcmp(op, "<=")) pass = a <= b;
    else if (!strcmp(op, ">")) pass = a > b;
    else if (!strcmp(op, ">=")) pass = a >= b;
    else pass = 0;
    va_list ap;
    va_start(ap, fmt);
    s_vok(pass, file, line, fmt, ap);
    va_end(ap);
    if (!pass)
        fprintf(stderr, "#     %lld\n#         %s\n#     %lld\n", a, op, b);
    return pass;
}

/*  "# ..." on stderr. */
int tap_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "# ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 0;
}

/*  "# ..." on stdout. */
int tap_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    return 0;
}

/*  n skipped test points. */
void tap_skip(int n, const char *fmt, ...)
{
    char reason[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    for (int i = 0; i < n; i++)
        printf("ok %d # SKIP %s\n", ++s_run, reason);
}

/*  Stops the whole test. */
void tap_bail_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("Bail out!  ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    exit(255);
}

/*  0 when all planned tests ran and passed. */
int tap_exit_status(void)
{
    if (s_planned >= 0 && s_run != s_planned)
        return 255;
    return s_failed > 255 ? 255 : s_failed;
}
#endif

/*  The watchdog's SIGALRM handler: only async-signal-safe calls (backtrace is loaded
 *  before, in gtap_watchdog, so that it does not load libgcc here). */
static void s_watchdog_fired(int sig)
{
    static const char head[] = "# watchdog: the test did not end in time; its stack:\n";
    ssize_t w = write(1, head, sizeof head - 1);
    (void)w;
    void *frames[48];
    int n = backtrace(frames, 48);
    backtrace_symbols_fd(frames, n, 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

/*  See gtap.h. */
void gtap_watchdog(unsigned seconds)
{
    void *warm[1];
    backtrace(warm, 1);
    signal(SIGALRM, s_watchdog_fired);
    alarm(seconds);
}
