/*  t/gd_mbox.c — groupd's message box alone (groupd/gd_mbox.c, no sockets): pvmd's rules
 *  for indices, ownership, MultiInstance and DirectIndex, reads with FirstAvail and
 *  ReadAndDelete, waiting reads answered in order by puts and dropped with their task or
 *  connection, PVM's glob for listing, an owner's exit (persistent entries stay with owner
 *  0), clearing, and every bound (bytes per entry, entries per task and in all, bytes in
 *  all, waiters) refused with GIMPI_EOUTOFRES while the box keeps serving.
 */
#include "gtap.h"
#include "groupd/gd_mbox.h"
#include "base/gimpi_be.h"
#include "gimpi_errors.h"

#include <stdlib.h>
#include <string.h>

/*  Integer equality (gtap.h's is() compares strings). */
#define ieq(a, b, ...) cmp_ok((a), "==", (b), __VA_ARGS__)

/*  The last answers the sink saw. */
typedef struct {
    int n;
    int32_t status[16];
    uint32_t reqid[16];
    char data[16][32];
} answers_t;

/*  The sink: records an answer. */
static void s_reply(void *arg, const gd_waiter_t *w, int32_t status, int32_t encoding,
                    const uint8_t *data, size_t len)
{
    (void)encoding;
    answers_t *a = arg;
    if (a->n == 16)
        return;
    a->status[a->n] = status;
    a->reqid[a->n] = w->reqid;
    snprintf(a->data[a->n], sizeof a->data[0], "%.*s", (int)(len < 31 ? len : 31),
             data ? (const char *)data : "");
    a->n++;
}

/*  A waiter record for request id r. */
static gd_waiter_t s_w(uint32_t r)
{
    gd_waiter_t w = { .keylen = 1, .reqid = r, .cmd = 0x1C };
    return w;
}

/*  Puts a short string. */
static int s_put(gd_mbox_t *m, int32_t tid, const char *name, int32_t req, int32_t flags,
                 const char *text)
{
    return gd_mbox_put(m, tid, name, req, flags, 0, (const uint8_t *)text, strlen(text));
}

/*  A read answered at once: its status (data in a->data[last]). */
static int s_get(gd_mbox_t *m, answers_t *a, int32_t tid, const char *name, int32_t index,
                 int32_t flags)
{
    (void)a;
    gd_waiter_t w = s_w(1);
    return gd_mbox_get(m, tid, 7, name, index, flags, &w);
}

static void test_rules(void)
{
    answers_t a = { 0 };
    gd_mbox_sink_t sink = { s_reply, &a };
    gd_mbox_t *m = gd_mbox_new(&sink);
    ieq(s_put(m, 1, "a", -1, 0, "one"), 0, "a put: index 0");
    ieq(s_put(m, 1, "a", -1, 0, "two"), 0, "the owner replaces it");
    ieq(s_put(m, 2, "a", -1, 0, "x"), GIMPI_EDENIED, "another task: PvmDenied");
    ieq(s_put(m, 2, "a", -1, GD_MBOX_MULTI, "m"), 1, "MultiInstance: the next free index");
    ieq(s_put(m, 1, "o", -1, GD_MBOX_OVERWRITABLE, "o"), 0, "an overwritable entry");
    ieq(s_put(m, 2, "o", -1, 0, "o2"), 0, "another task replaces it");
    ieq(s_put(m, 1, "o", -1, 0, "o3"), GIMPI_EDENIED, "and owns it now");
    ieq(s_put(m, 1, "d", -1, GD_MBOX_MULTI | (5 << GD_MBOX_DIRECT_SHIFT), "d"), 5,
       "PvmMboxDirectIndex(5): index 5");
    ieq(s_put(m, 1, "i", 3, GD_MBOX_MULTI, "i"), 3, "PVM 3.3's insert at 3");
    ieq(s_put(m, 1, "i", 3, GD_MBOX_MULTI, "i"), GIMPI_EDENIED, "at a taken index: denied");
    ieq(s_put(m, 1, "", -1, 0, "e"), GIMPI_EBADPARAM, "empty name");
    ieq(s_put(m, 0, "z", -1, 0, "e"), GIMPI_EBADPARAM, "no task");
    ieq(s_put(m, 1, "z", -2, 0, "e"), GIMPI_EBADPARAM, "req < -1");
    ieq(s_get(m, &a, 3, "a", 0, 0), 0, "read a 0");
    ok(!strcmp(a.data[a.n - 1], "two"), "its bytes");
    ieq(s_get(m, &a, 3, "a", 2, 0), GIMPI_ENOTFOUND, "read a 2: PvmNotFound");
    ieq(s_get(m, &a, 3, "a", 2, GD_MBOX_FIRSTAVAIL), GIMPI_ENOTFOUND, "FirstAvail past the end");
    ieq(s_get(m, &a, 3, "d", 1, GD_MBOX_FIRSTAVAIL), 5, "FirstAvail from 1 finds 5");
    ieq(s_get(m, &a, 3, "a", 0, GD_MBOX_READDELETE), GIMPI_EDENIED,
       "ReadAndDelete of another's entry: PvmDenied");
    ieq(s_get(m, &a, 2, "a", 1, GD_MBOX_READDELETE), 1, "the owner reads and deletes");
    ieq(s_get(m, &a, 2, "a", 1, 0), GIMPI_ENOTFOUND, "gone");
    ieq(s_get(m, &a, 2, "", 0, 0), GIMPI_EBADPARAM, "read: empty name");
    ieq(s_get(m, &a, 2, "a", -1, 0), GIMPI_EBADPARAM, "read: index < 0");
    ieq(a.status[a.n - 1], GIMPI_EBADPARAM, "every read is answered through the sink");
    ieq(gd_mbox_del(m, 2, "a", 0), GIMPI_EDENIED, "delete another's: PvmDenied");
    ieq(gd_mbox_del(m, 1, "a", 0), 0, "the owner deletes: its index");
    ieq(gd_mbox_del(m, 1, "a", 0), GIMPI_ENOTFOUND, "again: PvmNotFound");
    ieq(gd_mbox_del(m, 1, "i", -1), GIMPI_EBADPARAM, "delete: index < 0");
    gd_mbox_destroy(&m);
    ok(!m, "destroyed");
}

static void test_exit_and_list(void)
{
    answers_t a = { 0 };
    gd_mbox_sink_t sink = { s_reply, &a };
    gd_mbox_t *m = gd_mbox_new(&sink);
    s_put(m, 1, "keep", -1, GD_MBOX_PERSISTENT, "k");
    s_put(m, 1, "go", -1, 0, "g");
    s_put(m, 2, "go", -1, GD_MBOX_MULTI, "g2");
    s_put(m, 1, "raw", -1, 0, "r");
    gd_mbox_task_gone(m, 1);
    ieq(s_get(m, &a, 3, "keep", 0, 0), 0, "a persistent entry outlives its owner");
    ieq(s_put(m, 1, "keep", -1, 0, "k2"), GIMPI_EDENIED, "owner 0: nobody replaces it");
    ieq(gd_mbox_del(m, 0, "keep", 0), GIMPI_EDENIED, "nor deletes it (tid 0 neither)");
    ieq(s_get(m, &a, 3, "go", 0, 0), GIMPI_ENOTFOUND, "a default entry goes with its owner");
    ieq(s_get(m, &a, 3, "go", 1, 0), 1, "another task's entry of the class stays");
    uint8_t *blob;
    size_t len;
    ieq(gd_mbox_list(m, "*", &blob, &len), 2, "two classes");
    ok(len == 4 + 4 + 4 + 12 + 4 + 2 + 4 + 12, "records of %zu bytes", len);
    ok(len >= 24 && gimpi_be_get32(blob + 16) == 0, "keep's owner is 0");
    free(blob);
    ok(gd_mbox_match("raw", "a*"), "'a*' matches 'raw' (PVM matches anywhere)");
    ok(gd_mbox_match("raw", "r*w") && gd_mbox_match("x", "") && gd_mbox_match("x", "**"),
       "'r*w', '', '**'");
    ok(!gd_mbox_match("raw", "x*") && !gd_mbox_match("ab", "b*a"), "not 'x*', not 'b*a'");
    ok(gd_mbox_match("a*b", "\\*b") == false && gd_mbox_match("a*b", "a\\*"),
       "'\\*' is a star inside the pattern, as pvmmatchstring");
    gd_mbox_clear(m);
    ok(gd_mbox_nentries(m) == 0 && gd_mbox_nbytes(m) == 0, "cleared: persistent ones too");
    ieq(gd_mbox_list(m, "", &blob, &len), 0, "no class");
    free(blob);
    gd_mbox_destroy(&m);
}

static void test_waiters(void)
{
    answers_t a = { 0 };
    gd_mbox_sink_t sink = { s_reply, &a };
    gd_mbox_t *m = gd_mbox_new(&sink);
    gd_waiter_t w1 = s_w(11), w2 = s_w(12), w3 = s_w(13), w4 = s_w(14);
    ieq(gd_mbox_get(m, 5, 50, "w", 0, GD_MBOX_WAIT | GD_MBOX_READDELETE, &w1), GD_PENDING,
       "a waiting read defers");
    ieq(gd_mbox_get(m, 6, 60, "w", 0, GD_MBOX_WAIT, &w2), GD_PENDING, "a second one");
    ieq(gd_mbox_get(m, 7, 70, "w", 0, GD_MBOX_WAIT, &w3), GD_PENDING, "a third one");
    ieq(gd_mbox_get(m, 8, 80, "w", 0, GD_MBOX_WAIT, &w4), GD_PENDING, "a fourth one");
    ieq((int)gd_mbox_nwaiters(m), 4, "four wait");
    a.n = 0;
    gd_mbox_task_gone(m, 7);
    gd_mbox_conn_gone(m, 80);
    ieq((int)gd_mbox_nwaiters(m), 2, "a task's end and a connection's end drop theirs");
    ieq(a.n, 0, "without an answer");
    ieq(s_put(m, 1, "w", -1, GD_MBOX_OVERWRITABLE, "v"), 0, "a put");
    ok(a.n == 1 && a.reqid[0] == 11 && a.status[0] == 0 && !strcmp(a.data[0], "v"),
       "answers the first waiter, which takes the entry (ReadAndDelete)");
    ieq((int)gd_mbox_nwaiters(m), 1, "the second still waits");
    s_put(m, 1, "w", -1, 0, "v2");
    ok(a.n == 2 && a.reqid[1] == 12, "the next put answers it");
    ieq(gd_mbox_get(m, 5, 50, "w", 0, GD_MBOX_WAIT, &w1), 0, "a waiting read that finds: at once");
    gd_mbox_get(m, 5, 50, "q", 0, GD_MBOX_WAIT, &w1);
    a.n = 0;
    gd_mbox_clear(m);
    ok(a.n == 1 && a.status[0] == GIMPI_ESYSERR, "clearing answers waiters PvmSysErr");
    gd_mbox_destroy(&m);
}

static void test_limits(void)
{
    answers_t a = { 0 };
    gd_mbox_sink_t sink = { s_reply, &a };
    gd_mbox_t *m = gd_mbox_new(&sink);
    gd_mbox_limits_t lim = { .max_entry = 100, .max_bytes = 250, .max_per_task = 3,
                             .max_entries = 5, .max_waiters = 2 };
    gd_mbox_set_limits(m, &lim);
    char big[101];
    memset(big, 'x', sizeof big);
    ieq(gd_mbox_put(m, 1, "b", -1, 0, 0, (const uint8_t *)big, 101), GIMPI_EOUTOFRES,
       "an entry over the bytes per entry");
    ieq(gd_mbox_put(m, 1, "b", -1, 0, 0, (const uint8_t *)big, 100), 0, "at the bound: taken");
    ieq(gd_mbox_put(m, 1, "b", -1, 0, 0, (const uint8_t *)big, 100), 0, "replaced (no more room)");
    ieq(gd_mbox_put(m, 1, "c", -1, 0, 0, (const uint8_t *)big, 100), 0, "200 bytes in all");
    ieq(gd_mbox_put(m, 2, "d", -1, 0, 0, (const uint8_t *)big, 60), GIMPI_EOUTOFRES,
       "over the bytes in all");
    ieq(s_put(m, 1, "e", -1, 0, "e"), 2 - 2, "a third entry of task 1");
    ieq(s_put(m, 1, "f", -1, 0, "f"), GIMPI_EOUTOFRES, "a fourth: over the entries per task");
    ieq(s_put(m, 1, "e", -1, 0, "e2"), 0, "replacing its own still works");
    ieq(s_put(m, 2, "g", -1, 0, "g"), 0, "another task: entry 4");
    ieq(s_put(m, 3, "h", -1, 0, "h"), 0, "entry 5");
    ieq(s_put(m, 4, "i", -1, 0, "i"), GIMPI_EOUTOFRES, "a sixth: over the entries in all");
    gd_mbox_del(m, 1, "c", 0);
    ieq(s_put(m, 4, "i", -1, 0, "i"), 0, "room again after a delete");
    gd_waiter_t w = s_w(1);
    ieq(gd_mbox_get(m, 5, 1, "n", 0, GD_MBOX_WAIT, &w), GD_PENDING, "waiter 1");
    ieq(gd_mbox_get(m, 6, 2, "n", 0, GD_MBOX_WAIT, &w), GD_PENDING, "waiter 2");
    ieq(gd_mbox_get(m, 7, 3, "n", 0, GD_MBOX_WAIT, &w), GIMPI_EOUTOFRES, "a third: refused");
    lim.max_waiters = 100;
    gd_mbox_set_limits(m, &lim);
    int rc = 0;
    for (int k = 0; k < GD_MBOX_MAX_WAITERS_PER_CONN + 1; k++)
        rc = gd_mbox_get(m, 9, 9, "n", 0, GD_MBOX_WAIT, &w);
    ieq(rc, GIMPI_EOUTOFRES, "more than %d waiting on one connection: refused",
       GD_MBOX_MAX_WAITERS_PER_CONN);
    gd_mbox_destroy(&m);
}

int main(void)
{
    plan(NO_PLAN);
    test_rules();
    test_exit_and_list();
    test_waiters();
    test_limits();
    done_testing();
}
