/*  t/trace_merge.c — the merger of a job's trace files (programs/trace_merge.c) on
 *  synthetic files written here through base/gimpi_tev.h: a message between two hosts as
 *  one flow inside its send and receive slices, counters and instants, calls that do not
 *  pair up still nested, a receive that the clocks put before its send corrected (by a
 *  host's shift, or by the flow's clamp when the clocks disagree both ways), a file in
 *  the other byte order, and bad files (empty directory, garbage, every truncation,
 *  wrong version, kind or lengths, a tid twice, random byte flips) refused with the file
 *  named and never a crash.  Each output is checked by t/trace_json_check.py when python3
 *  is there: valid JSON, balanced and nested slices, no flow ending before it starts.
 */
#include "config.h"
#include "gtap.h"
#include "base/gimpi_tev.h"
#include "programs/trace_merge.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define US 1000LL                       /* a microsecond in ns */
#define T0 1790000000000000000LL        /* a time of 2026 in ns */

/*  The test's directory of trace files and its output. */
static char s_dir[64], s_json[128];

/*  A file being written: its bytes, grown as records are added. */
typedef struct {
    unsigned char *b;
    size_t n;
} buf_t;

/*  Appends len bytes to b. */
static void s_add(buf_t *b, const void *p, size_t len)
{
    b->b = realloc(b->b, b->n + len);
    memcpy(b->b + b->n, p, len);
    b->n += len;
}

/*  Starts a task's file: its header. */
static void s_header(buf_t *b, int tid, const char *host, const char *prog, long long off,
                     long long err)
{
    gimpi_tev_file_t h = { .magic = GIMPI_TEV_MAGIC, .version = GIMPI_TEV_VERSION,
                           .tid = tid, .pid = 1000 + (tid & 0xff), .offset_ns = off,
                           .offset_err_ns = err, .start_ns = T0 - off };
    snprintf(h.host, sizeof h.host, "%s", host);
    snprintf(h.program, sizeof h.program, "%s", prog);
    b->b = NULL;
    b->n = 0;
    s_add(b, &h, sizeof h);
}

/*  Appends a record at local time T0 + us microseconds - off (so that, with the header's
 *  offset, it is at us on the reference clock), ints, and a string (or NULL). */
static void s_rec(buf_t *b, long long off, int kind, int ev, long long us, const char *s,
                  int i0, int i1, int i2, int i3, int i4)
{
    gimpi_tev_rec_t r = { .kind = (uint16_t)kind, .ev = (uint16_t)ev,
                          .t_ns = T0 + us * US - off, .i = { i0, i1, i2, i3, i4, 0 } };
    size_t sl = s ? strlen(s) : 0, pad = (8 - (sizeof r + sl) % 8) % 8;
    r.slen = (uint16_t)sl;
    r.len = (uint32_t)(sizeof r + sl + pad);
    s_add(b, &r, sizeof r);
    static const char zeros[8];
    if (sl)
        s_add(b, s, sl);
    s_add(b, zeros, pad);
}

/*  Writes b as the task file name of the test's directory and frees it. */
static void s_save(buf_t *b, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", s_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->b, 1, b->n, f) != b->n || fclose(f) != 0)
        BAIL_OUT("cannot write %s", path);
    free(b->b);
    b->b = NULL;
}

/*  Empties the test's directory. */
static void s_clear(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -f %s/*.gtev %s", s_dir, s_json);
    if (system(cmd) != 0)
        BAIL_OUT("cannot clear %s", s_dir);
}

/*  A sending task on host h0 and a receiving one on h1: the sender's pvm_send (with the
 *  SEND inside) at 100..120 us, the receiver in pvm_recv from 50 us, the message taken at
 *  recv_us; offs are the hosts' offsets as their headers say. */
static void s_pair(long long recv_us, long long err1)
{
    buf_t b;
    s_header(&b, 0x40001, "h0", "master", 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 6, 10, "pvm_joingroup", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_JOIN, 0, 12, "work", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_END, 6, 14, NULL, 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 33, 100, "pvm_send", 0x80001, 7, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_SEND, 0, 110, NULL, 0x80001, 7, 0, 400, 1);
    s_rec(&b, 0, GIMPI_TEV_CALL_END, 33, 120, NULL, 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_EXIT, 0, 200, NULL, 0, 0, 0, 0, 0);
    s_save(&b, "40001.gtev");
    s_header(&b, 0x80001, "h1", "worker", 5000, err1);
    s_rec(&b, 5000, GIMPI_TEV_CALL_BEGIN, 36, 50, "pvm_recv", -1, 7, 0, 0, 0);
    s_rec(&b, 5000, GIMPI_TEV_QUEUE, 0, recv_us - 1, NULL, 1, 0, 0, 0, 0);
    s_rec(&b, 5000, GIMPI_TEV_RECV, 0, recv_us, NULL, 0x40001, 7, 0, 400, 1);
    s_rec(&b, 5000, GIMPI_TEV_QUEUE, 0, recv_us, NULL, 0, 0, 0, 0, 0);
    s_rec(&b, 5000, GIMPI_TEV_CALL_END, 36, recv_us + 2, NULL, 5, 0, 0, 0, 0);
    s_rec(&b, 5000, GIMPI_TEV_EXIT, 0, recv_us + 40, NULL, 0, 0, 0, 0, 0);
    s_save(&b, "80001.gtev");
}

/*  The merged JSON file's text (static, replaced by the next call). */
static const char *s_text(void)
{
    static char text[1 << 16];
    FILE *f = fopen(s_json, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = 0;
    return text;
}

/*  Occurrences of needle in the merged file. */
static int s_count(const char *needle)
{
    int n = 0;
    for (const char *p = s_text(); (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/*  t/trace_json_check.py on the merged file with the expectations opts: 0 passes, 77 no
 *  python3 (the check is skipped), else it failed. */
static int s_check(const char *opts)
{
    static int have = -1;
    if (have < 0)
        have = system("python3 -c 'import json, decimal' >/dev/null 2>&1") == 0;
    if (!have)
        return 77;
    const char *src = getenv("top_srcdir");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "python3 %s/t/trace_json_check.py %s %s", src ? src : ".",
             s_json, opts);
    return system(cmd) == 0 ? 0 : 1;
}

/*  Merges the test's directory; 0 or -1 with the error in err. */
static int s_merge(char *err, size_t errlen)
{
    return trace_merge(s_dir, s_json, err, errlen);
}

/*  One message between two hosts with agreeing clocks: a flow, slices, counters. */
static void t_basic(void)
{
    char err[512];
    s_clear();
    s_pair(130, 0);
    ok(s_merge(err, sizeof err) == 0, "two tasks on two hosts merge (%s)", err);
    int rc = s_check("--flows 1 --threads 2 --processes 2 --counters 2 --instants 3 "
                     "--min-slices 6");
    ok(rc == 0 || rc == 77, "the JSON is valid, nested, its flow forwards%s",
       rc == 77 ? " (no python3: not checked)" : "");
    is(strstr(s_text(), "\"traceEvents\":[") ? "yes" : "no", "yes", "a traceEvents list");
    ok(strstr(s_text(), "{\"ph\":\"s\",\"name\":\"msg\",\"cat\":\"msg\",\"pid\":1,\"tid\":1,"
                        "\"ts\":110.000,\"id\":1"), "the flow starts in the sender at 110 us");
    ok(strstr(s_text(), "{\"ph\":\"f\",\"name\":\"msg\",\"cat\":\"msg\",\"pid\":2,\"tid\":2,"
                        "\"ts\":130.000,\"bp\":\"e\",\"id\":1"),
       "and ends bound to the receive in the receiver at 130 us");
    ok(strstr(s_text(), "\"args\":{\"tag\":7,\"bytes\":400,\"ctx\":0,\"seq\":1,"
                        "\"src\":\"t40001\",\"dst\":\"t80001\"}"), "the flow's args");
    ok(strstr(s_text(), "\"name\":\"pvm_recv\",\"cat\":\"wait\""), "pvm_recv waits");
    ok(strstr(s_text(), "\"name\":\"pvm_send\",\"cat\":\"overhead\""), "pvm_send is overhead");
    ok(strstr(s_text(), "\"name\":\"compute\",\"cat\":\"compute\",\"pid\":1,\"tid\":1,"
                        "\"ts\":14.000,\"dur\":86.000"), "computing between two calls");
    ok(strstr(s_text(), "\"args\":{\"ev\":36,\"a\":[-1,7,0,0,0,0],\"ret\":5}"),
       "a call's ints and return value");
    ok(strstr(s_text(), "\"args\":{\"name\":\"t80001 worker\"}"), "a thread per task, named");
    ok(strstr(s_text(), "\"process_name\",\"pid\":2,\"tid\":0,\"args\":{\"name\":\"h1\"}"),
       "a process per host, named");
    ok(strstr(s_text(), "\"name\":\"queue\",\"pid\":2,\"tid\":2,\"ts\":129.000,\"id\":"
                        "\"t80001\",\"args\":{\"messages\":1}"), "the queue's counter");
    ok(strstr(s_text(), "\"name\":\"join\",\"cat\":\"group\"") &&
       strstr(s_text(), "\"args\":{\"group\":\"work\",\"instance\":0}"), "a join instant");
    ok(strstr(s_text(), "\"messages\":1,") && strstr(s_text(), "\"displayTimeUnit\":\"ns\"")
       && strstr(s_text(), "{\"tid\":\"t40001\",\"host\":\"h0\",\"program\":\"master\","
                           "\"pid\":1001"), "otherData names the tasks and counts messages");
    ok(strstr(s_text(), "\"corrected\":false"), "agreeing clocks are not corrected");
}

/*  A receive the offsets put 15 us before its send: the receiver's host is shifted. */
static void t_clock_shift(void)
{
    char err[512];
    s_clear();
    s_pair(95, 20 * US);
    ok(s_merge(err, sizeof err) == 0, "a receive before its send merges (%s)", err);
    int rc = s_check("--flows 1 --threads 2");
    ok(rc == 0 || rc == 77, "no flow ends before it starts%s", rc == 77 ? " (not checked)" : "");
    ok(strstr(s_text(), "\"shift_ns\":15000,\"shift_within_error\":true"),
       "the receiver's host is shifted by 15 us, within its clock's error");
    ok(strstr(s_text(), "\"corrected\":true,\"beyond_error\":false"), "otherData says so");
    ok(strstr(s_text(), "\"ph\":\"f\",\"name\":\"msg\",\"cat\":\"msg\",\"pid\":2,\"tid\":2,"
                        "\"ts\":110.000"), "the receive is drawn when the send was");
}

/*  A pvm_send (kind SEND) or pvm_recv (RECV) at us with its message to or from peer
 *  inside, 8 bytes of tag tag, the first between the two. */
static void s_msg_call(buf_t *b, long long us, int kind, int peer, int tag)
{
    int ev = kind == GIMPI_TEV_SEND ? 33 : 36;
    s_rec(b, 0, GIMPI_TEV_CALL_BEGIN, ev, us, ev == 33 ? "pvm_send" : "pvm_recv", 0, 0, 0, 0, 0);
    s_rec(b, 0, kind, 0, us + 1, NULL, peer, tag, 0, 8, 1);
    s_rec(b, 0, GIMPI_TEV_CALL_END, ev, us + 2, NULL, 0, 0, 0, 0, 0);
}

/*  Two hosts whose clocks disagree both ways: no shift fits, the flows are clamped. */
static void t_clock_cycle(void)
{
    char err[512];
    buf_t b;
    s_clear();
    s_header(&b, 0x40001, "h0", "a", 0, 0);
    s_msg_call(&b, 100, GIMPI_TEV_SEND, 0x80001, 1);
    s_msg_call(&b, 103, GIMPI_TEV_RECV, 0x80001, 2);
    s_save(&b, "40001.gtev");
    s_header(&b, 0x80001, "h1", "b", 0, 0);
    s_msg_call(&b, 90, GIMPI_TEV_RECV, 0x40001, 1);
    s_msg_call(&b, 200, GIMPI_TEV_SEND, 0x40001, 2);
    s_save(&b, "80001.gtev");
    ok(s_merge(err, sizeof err) == 0, "clocks that disagree both ways merge (%s)", err);
    int rc = s_check("--flows 2 --threads 2");
    ok(rc == 0 || rc == 77, "still no flow ends before it starts%s",
       rc == 77 ? " (not checked)" : "");
    ok(strstr(s_text(), "\"inconsistent\":true"), "otherData says the clocks disagree");
    ok(!strstr(s_text(), "\"flows_clamped\":0"), "and that flows were clamped");
}

/*  Calls that do not pair up (a lost BEGIN, a lost END, an outer END while an inner call
 *  is open, a task that dies in a call) and nested calls still make nested slices. */
static void t_unpaired(void)
{
    char err[512];
    buf_t b;
    s_clear();
    s_header(&b, 0x40001, "h0", "odd", 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_END, 36, 5, NULL, 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 20, 10, "pvm_bcast", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 24, 11, "pvm_mcast", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_END, 24, 12, NULL, 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 24, 13, "pvm_mcast", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_END, 20, 15, NULL, 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_LOST, 0, 16, NULL, 12, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 36, 8, "pvm_recv", 0, 0, 0, 0, 0);
    s_save(&b, "40001.gtev");
    ok(s_merge(err, sizeof err) == 0, "unpaired calls merge (%s)", err);
    int rc = s_check("--threads 1 --min-slices 4");
    ok(rc == 0 || rc == 77, "their slices nest%s", rc == 77 ? " (not checked)" : "");
    is(s_count("\"unfinished\":true") == 2 ? "2" : "other", "2",
       "the inner call the outer END closed and the last call are unfinished");
    ok(strstr(s_text(), "\"lost_records\":12,\"unpaired_calls\":1"),
       "the ring's losses and the stray END are counted");
    ok(strstr(s_text(), "\"name\":\"pvm_recv\",\"cat\":\"wait\",\"pid\":1,\"tid\":1,"
                        "\"ts\":16.000,\"dur\":0.000"),
       "a time that went backwards is held at the previous one");
}

/*  A call and the call it made starting at the same time: the outer one is written
 *  first, so that a viewer sorting stably by time opens it first; a flow at that time
 *  comes after both. */
static void t_same_start(void)
{
    char err[512];
    buf_t b;
    s_clear();
    s_header(&b, 0x40001, "h0", "same", 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 20, 10, "pvm_bcast", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 24, 10, "pvm_mcast", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_SEND, 0, 10, NULL, 0x40001, 1, 0, 4, 1);
    s_rec(&b, 0, GIMPI_TEV_CALL_END, 24, 11, NULL, 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_END, 20, 12, NULL, 0, 0, 0, 0, 0);
    s_msg_call(&b, 13, GIMPI_TEV_RECV, 0x40001, 1);
    s_save(&b, "40001.gtev");
    ok(s_merge(err, sizeof err) == 0, "calls that start together merge (%s)", err);
    const char *text = s_text();
    const char *outer = strstr(text, "\"name\":\"pvm_bcast\"");
    const char *inner = strstr(text, "\"name\":\"pvm_mcast\"");
    const char *flow = strstr(text, "\"ph\":\"s\"");
    ok(outer && inner && flow && outer < inner && inner < flow,
       "the outer call, then the inner one, then the flow that starts in it");
    int rc = s_check("--flows 1 --threads 1");
    ok(rc == 0 || rc == 77, "valid, nested%s", rc == 77 ? " (not checked)" : "");
}

/*  Every kind of point event as an instant with its args: valid JSON, each one there. */
static void t_instants(void)
{
    char err[512];
    buf_t b;
    s_clear();
    s_header(&b, 0x40001, "h0", "points", 0, 0);
    s_rec(&b, 0, GIMPI_TEV_JOIN, 0, 1, "g", 3, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_BARRIER_IN, 0, 2, "g", 4, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_BARRIER_OUT, 0, 3, "g", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_COLL_SEND, 0, 4, "bcast", 0x80001, 64, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_LEAVE, 0, 5, "g", 0, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_SPAWN, 0, 6, "worker", 0x40002, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_HOST_ADD, 0, 7, "node\"9", 0x40000000, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_HOST_DEL, 0, 8, "node\"9", 0x40000000, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_LOST, 0, 9, NULL, 17, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_EXIT, 0, 10, NULL, 3, 0, 0, 0, 0);
    s_save(&b, "40001.gtev");
    ok(s_merge(err, sizeof err) == 0, "every kind of point event merges (%s)", err);
    int rc = s_check("--instants 10 --threads 1");
    ok(rc == 0 || rc == 77, "as 10 instants, valid JSON%s", rc == 77 ? " (not checked)" : "");
    const char *want[] = {
        "\"name\":\"join\",\"cat\":\"group\"", "\"args\":{\"group\":\"g\",\"instance\":3}}",
        "\"args\":{\"group\":\"g\",\"count\":4}}", "\"args\":{\"group\":\"g\",\"result\":0}}",
        "\"args\":{\"op\":\"bcast\",\"dst\":\"t80001\",\"bytes\":64}}",
        "\"name\":\"leave\",\"cat\":\"group\"", "\"args\":{\"group\":\"g\"}}",
        "\"args\":{\"program\":\"worker\",\"child\":\"t40002\"}}",
        "\"s\":\"p\",\"args\":{\"host\":\"node\\\"9\",\"dtid\":\"t40000000\"}}",
        "\"name\":\"host_del\",\"cat\":\"host\"", "\"args\":{\"records\":17}}",
        "\"name\":\"exit\",\"cat\":\"task\"", "\"args\":{\"status\":3}}",
        "\"lost_records\":17", NULL,
    };
    int missing = 0;
    for (int k = 0; want[k]; k++)
        if (!strstr(s_text(), want[k]) && missing++ < 3)
            diag("missing: %s", want[k]);
    cmp_ok(missing, "==", 0, "each with its name, category, scope and args");
}

/*  A file written in the other byte order reads the same. */
static void t_swapped(void)
{
    char err[512];
    buf_t b;
    s_clear();
    s_header(&b, 0x40001, "h0", "be", 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_BEGIN, 36, 10, "pvm_recv", 3, 0, 0, 0, 0);
    s_rec(&b, 0, GIMPI_TEV_CALL_END, 36, 12, NULL, 7, 0, 0, 0, 0);
    gimpi_tev_file_t *h = (gimpi_tev_file_t *)b.b;
    h->magic = __builtin_bswap32(h->magic);
    h->version = __builtin_bswap32(h->version);
    h->tid = (int32_t)__builtin_bswap32((uint32_t)h->tid);
    h->pid = (int32_t)__builtin_bswap32((uint32_t)h->pid);
    h->start_ns = (int64_t)__builtin_bswap64((uint64_t)h->start_ns);
    for (size_t at = sizeof *h; at < b.n;) {
        gimpi_tev_rec_t *r = (gimpi_tev_rec_t *)(b.b + at);
        at += r->len;
        r->len = __builtin_bswap32(r->len);
        r->kind = __builtin_bswap16(r->kind);
        r->ev = __builtin_bswap16(r->ev);
        r->t_ns = (int64_t)__builtin_bswap64((uint64_t)r->t_ns);
        for (int k = 0; k < GIMPI_TEV_INTS; k++)
            r->i[k] = (int32_t)__builtin_bswap32((uint32_t)r->i[k]);
        r->slen = __builtin_bswap16(r->slen);
    }
    s_save(&b, "40001.gtev");
    ok(s_merge(err, sizeof err) == 0, "a file of the other byte order merges (%s)", err);
    ok(strstr(s_text(), "\"args\":{\"ev\":36,\"a\":[3,0,0,0,0,0],\"ret\":7}")
       && strstr(s_text(), "\"tid\":\"t40001\""), "with its values read right");
}

/*  Merging the directory fails and the error names file (when given) and says why. */
static void s_refused(const char *file, const char *why, const char *what)
{
    char err[512];
    int rc = s_merge(err, sizeof err);
    ok(rc < 0 && (!file || strstr(err, file)) && strstr(err, why), "%s: refused (%s)", what,
       err);
    ok(access(s_json, F_OK) != 0, "%s: no output left behind", what);
}

/*  A valid task file's bytes in *b (one call, a message, a join). */
static void s_valid(buf_t *b)
{
    s_header(b, 0x40001, "h0", "m", 0, 0);
    s_rec(b, 0, GIMPI_TEV_CALL_BEGIN, 6, 10, "pvm_joingroup", 0, 0, 0, 0, 0);
    s_rec(b, 0, GIMPI_TEV_JOIN, 0, 11, "g", 0, 0, 0, 0, 0);
    s_rec(b, 0, GIMPI_TEV_CALL_END, 6, 12, NULL, 0, 0, 0, 0, 0);
    s_rec(b, 0, GIMPI_TEV_SEND, 0, 13, NULL, 0x40001, 1, 0, 4, 1);
    s_rec(b, 0, GIMPI_TEV_RECV, 0, 14, NULL, 0x40001, 1, 0, 4, 1);
}

/*  Writes the first n bytes of b as the directory's one file. */
static void s_write_cut(const buf_t *b, size_t n)
{
    s_clear();
    buf_t c = { malloc(n + 1), n };
    memcpy(c.b, b->b, n);
    s_save(&c, "40001.gtev");
}

/*  Bad directories and files: each refused with a reason, the file named. */
static void t_bad_files(void)
{
    buf_t b, c;
    s_clear();
    s_refused(NULL, "no .gtev file", "an empty directory");
    char missing[256];
    snprintf(missing, sizeof missing, "%s/none", s_dir);
    char err[512];
    ok(trace_merge(missing, s_json, err, sizeof err) < 0 && strstr(err, missing),
       "a missing directory is named (%s)", err);
    s_clear();
    c.b = NULL, c.n = 0;
    for (int k = 0; k < 600; k++) {
        unsigned char x = (unsigned char)(k * 37 + 11);
        s_add(&c, &x, 1);
    }
    s_save(&c, "40001.gtev");
    s_refused("40001.gtev", "not a gimpi trace file", "garbage");
    s_valid(&b);
    ((gimpi_tev_file_t *)b.b)->version = 2;
    s_save(&b, "40001.gtev");
    s_refused("40001.gtev", "version 2", "a later version");
    s_valid(&b);
    memset(((gimpi_tev_file_t *)b.b)->host, 'x', 64);
    s_save(&b, "40001.gtev");
    s_refused("40001.gtev", "not terminated", "an unterminated host name");
    s_clear();
    s_valid(&b);
    ((gimpi_tev_rec_t *)(b.b + 256))->kind = 99;
    s_save(&b, "40001.gtev");
    s_refused("40001.gtev", "unknown kind 99", "an unknown record kind");
    s_valid(&b);
    ((gimpi_tev_rec_t *)(b.b + 256))->len = 52;
    s_save(&b, "40001.gtev");
    s_refused("40001.gtev", "length 52", "a length not a multiple of 8");
    s_valid(&b);
    ((gimpi_tev_rec_t *)(b.b + 256))->slen = 60;
    s_save(&b, "40001.gtev");
    s_refused("40001.gtev", "string 60", "a string longer than its record");
    s_valid(&b);
    ((gimpi_tev_rec_t *)(b.b + 256))->t_ns = -5;
    s_save(&b, "40001.gtev");
    s_refused("40001.gtev", "out of range", "a negative time");
    s_valid(&b);
    s_save(&b, "40001.gtev");
    s_valid(&b);
    s_save(&b, "x40001.gtev");
    s_refused("x40001.gtev", "also in", "one tid in two files");
}

/*  Every truncation of a valid file: refused naming it, but at a record's boundary,
 *  where what is left is a valid shorter trace. */
static void t_truncated(void)
{
    buf_t b;
    s_valid(&b);
    size_t bounds[16], nb = 0;
    for (size_t at = 256; at <= b.n && nb < 16; at += ((gimpi_tev_rec_t *)(b.b + at))->len) {
        bounds[nb++] = at;
        if (at == b.n)
            break;
    }
    int wrong = 0;
    char err[512];
    for (size_t n = 0; n < b.n; n++) {
        s_write_cut(&b, n);
        bool boundary = false;
        for (size_t k = 0; k < nb; k++)
            boundary |= bounds[k] == n;
        int rc = s_merge(err, sizeof err);
        if (boundary ? rc != 0 : rc == 0 || !strstr(err, "40001.gtev") || !strstr(err, "truncated")) {
            if (wrong++ < 3)
                diag("cut at %zu: rc %d: %s", n, rc, err);
        }
    }
    cmp_ok(wrong, "==", 0, "all %zu truncations: refused as truncated, but at the %zu "
           "record boundaries", b.n, nb);
    wrong = 0;
    int badjson = 0;
    for (size_t n = 0; n < b.n; n++) {
        s_write_cut(&b, n);
        bool boundary = false;
        for (size_t k = 0; k < nb; k++)
            boundary |= bounds[k] == n;
        int rc = trace_merge_flags(s_dir, s_json, TRACE_MERGE_PARTIAL, err, sizeof err);
        int want = n < 256 ? -1 : boundary ? 0 : 1;
        if (rc != want || (rc < 0 && !strstr(err, "whole header yet"))) {
            if (wrong++ < 3)
                diag("partial, cut at %zu: rc %d, not %d: %s", n, rc, want, err);
        } else if (rc == 1 && n % 40 == 0) {
            int c = s_check("");
            badjson += c != 0 && c != 77;
        }
    }
    free(b.b);
    cmp_ok(wrong, "==", 0, "partial: each cut merged up to its last whole record (one file "
           "cut short), a header not all there refused");
    cmp_ok(badjson, "==", 0, "partial: the merged ones checked are valid");
    ok(strstr(s_text(), "\"files_cut_short\":1,\"files_skipped\":0"),
       "otherData counts the file cut short");
}

/*  Random byte flips in a valid file: the merge refuses or merges, never crashes, names
 *  the file when it refuses; a few outputs are checked whole. */
static void t_flips(void)
{
    buf_t b;
    s_valid(&b);
    unsigned seed = 12345;
    int refused = 0, merged = 0, unnamed = 0, badjson = 0;
    char err[512];
    for (int k = 0; k < 3000; k++) {
        buf_t c = { NULL, 0 };
        s_add(&c, b.b, b.n);
        int nflip = 1 + k % 4;
        for (int f = 0; f < nflip; f++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % c.n;
            seed = seed * 1103515245u + 12345u;
            c.b[at] ^= (unsigned char)(1u << ((seed >> 16) % 8));
        }
        s_clear();
        s_save(&c, "40001.gtev");
        if (s_merge(err, sizeof err) < 0) {
            refused++;
            unnamed += !strstr(err, "40001.gtev");
        } else if (merged++ % 300 == 0) {
            int rc = s_check("");
            badjson += rc != 0 && rc != 77;
        }
    }
    free(b.b);
    note("byte flips: %d refused, %d merged", refused, merged);
    ok(refused > 0 && merged > 0, "3000 flipped files: some refused, some merged, no crash");
    cmp_ok(unnamed, "==", 0, "every refusal names the file");
    cmp_ok(badjson, "==", 0, "the merged ones checked are valid");
}

/*  The checker itself finds what it checks: writes text as the merged file and runs it. */
static void s_checker_sees(const char *text, const char *what)
{
    FILE *f = fopen(s_json, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        BAIL_OUT("cannot write %s", s_json);
    int rc = s_check("2>/dev/null");
    skip(rc == 77, 1, "no python3") {
        ok(rc == 1, "the checker refuses %s", what);
    } end_skip;
}

/*  The checker refuses overlapping slices, a flow backwards, an unclosed B, an unnamed
 *  thread, text that is not JSON; it takes 1.1 + 2.2 as exactly 3.3. */
static void t_checker(void)
{
    const char *names = "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,"
        "\"tid\":0,\"args\":{\"name\":\"h\"}},{\"ph\":\"M\",\"name\":\"thread_name\","
        "\"pid\":1,\"tid\":1,\"args\":{\"name\":\"t\"}}";
    char text[1024];
    snprintf(text, sizeof text, "%s,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1.1,"
             "\"dur\":2.2},{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":3.3,"
             "\"dur\":1}]}", names);
    FILE *f = fopen(s_json, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        BAIL_OUT("cannot write %s", s_json);
    int rc = s_check("--min-slices 2");
    ok(rc == 0 || rc == 77, "the checker takes slices that touch on exact decimals");
    snprintf(text, sizeof text, "%s,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,"
             "\"dur\":3},{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,"
             "\"dur\":3}]}", names);
    s_checker_sees(text, "overlapping slices");
    snprintf(text, sizeof text, "%s,{\"ph\":\"s\",\"name\":\"msg\",\"cat\":\"msg\",\"id\":1,"
             "\"pid\":1,\"tid\":1,\"ts\":5},{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"msg\","
             "\"cat\":\"msg\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":4}]}", names);
    s_checker_sees(text, "a flow that ends before it starts");
    snprintf(text, sizeof text, "%s,{\"ph\":\"B\",\"name\":\"x\",\"pid\":1,\"tid\":1,"
             "\"ts\":1}]}", names);
    s_checker_sees(text, "a B without its E");
    snprintf(text, sizeof text, "%s,{\"ph\":\"i\",\"s\":\"t\",\"name\":\"x\",\"pid\":1,"
             "\"tid\":2,\"ts\":1}]}", names);
    s_checker_sees(text, "an unnamed thread");
    s_checker_sees("{\"traceEvents\":[{]}", "text that is not JSON");
    unlink(s_json);
}

/*  gimpi-trace merge: its arguments, its default output, its exit statuses. */
static void t_main(void)
{
    s_clear();
    s_pair(130, 0);
    char out[160], def[160];
    snprintf(out, sizeof out, "%s/o.json", s_dir);
    snprintf(def, sizeof def, "%s.json", s_dir);
    char *a1[] = { "gimpi-trace", "merge", s_dir, "-o", out, NULL };
    cmp_ok(trace_merge_main(5, a1), "==", 0, "gimpi-trace merge DIR -o FILE");
    ok(access(out, F_OK) == 0, "writes FILE");
    char dirslash[80];
    snprintf(dirslash, sizeof dirslash, "%s/", s_dir);
    char *a2[] = { "merge", dirslash, NULL };
    cmp_ok(trace_merge_main(2, a2), "==", 0, "merge DIR/ (argv from the word merge)");
    ok(access(def, F_OK) == 0, "writes DIR.json by default");
    char *a6[] = { "merge", s_dir, "--partial", "-o", out, NULL };
    cmp_ok(trace_merge_main(5, a6), "==", 0, "merge DIR --partial");
    char *a3[] = { "merge", NULL };
    cmp_ok(trace_merge_main(1, a3), "==", 2, "no DIR: usage, status 2");
    char *a4[] = { "merge", s_dir, "-x", NULL };
    cmp_ok(trace_merge_main(3, a4), "==", 2, "an unknown option: status 2");
    char *a5[] = { "merge", "/nonexistent/dir", "-o", out, NULL };
    cmp_ok(trace_merge_main(4, a5), "==", 1, "a failed merge: status 1");
    unlink(out);
    unlink(def);
}

int main(void)
{
    plan(NO_PLAN);
    snprintf(s_dir, sizeof s_dir, "/tmp/trace_merge.XXXXXX");
    if (!mkdtemp(s_dir))
        BAIL_OUT("mkdtemp failed");
    snprintf(s_json, sizeof s_json, "%s/out.json", s_dir);
    t_basic();
    t_clock_shift();
    t_clock_cycle();
    t_unpaired();
    t_same_start();
    t_instants();
    t_swapped();
    t_bad_files();
    t_truncated();
    t_flips();
    t_main();
    t_checker();
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", s_dir);
    if (system(cmd) != 0)
        diag("cannot remove %s", s_dir);
    done_testing();
}
