/*  gtap.h — the TAP calls every test uses: the system libtap when configure found one,
 *  otherwise the small emitter in t/tap.c with the same names and meanings
 *  (plan, ok, is, isnt, cmp_ok, diag, note, skip, done_testing).
 */
#ifndef GIMPI_GTAP_H
#define GIMPI_GTAP_H

#include "config.h"

#ifdef HAVE_LIBTAP
#include <tap.h>
#else

#define NO_PLAN  -1
#define SKIP_ALL -2

void tap_plan(int tests, const char *fmt, ...);
int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tap_is(const char *got, const char *expected, const char *file, int line,
           const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int tap_cmp_ok(long long a, const char *op, long long b, const char *file, int line,
               const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tap_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tap_skip(int n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_bail_out(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
int tap_exit_status(void);

#define plan(...)            tap_plan(__VA_ARGS__, NULL)
#define ok(test, ...)        tap_ok(!!(test), __FILE__, __LINE__, __VA_ARGS__)
#define pass(...)            tap_ok(1, __FILE__, __LINE__, __VA_ARGS__)
#define fail(...)            tap_ok(0, __FILE__, __LINE__, __VA_ARGS__)
#define is(got, exp, ...)    tap_is(got, exp, __FILE__, __LINE__, __VA_ARGS__)
#define cmp_ok(a, op, b, ...) \
    tap_cmp_ok((long long)(a), op, (long long)(b), __FILE__, __LINE__, __VA_ARGS__)
#define diag(...)            tap_diag(__VA_ARGS__)
#define note(...)            tap_note(__VA_ARGS__)
#define skip(test, n, ...)   do { if (test) { tap_skip(n, __VA_ARGS__); break; }
#define end_skip             } while (0)
#define BAIL_OUT(...)        tap_bail_out(__VA_ARGS__)
#define exit_status()        tap_exit_status()
#define done_testing()       return tap_exit_status()

#endif
/*  Bounds the whole test: after `seconds` the process ends by SIGALRM (as alarm(2) would),
 *  first printing "# watchdog: ..." and the stack of the thread the signal reached
 *  (the test's main thread: libzmq's and the library's threads block signals), so that a
 *  hang in a log says where it hung. */
void gtap_watchdog(unsigned seconds);

#endif
