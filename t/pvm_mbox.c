/*  t/pvm_mbox.c — PVM's message box (libgimpi/pvm/pvm_mbox.c) on a private groupd (run
 *  with --mbox-max-per-task=8): this process is a PVM task started from the shell, and
 *  "peers" are copies of it (re-executed, each a task of its own) that obey one-line
 *  commands on a pipe.  Checked: put / recv / delete with every flag, the receive buffer
 *  (new, active, the old one freed, any encoding), bad names, indices and buffers, the
 *  entry and per-task bounds (PvmOutOfRes), getmboxinfo's patterns and its owners,
 *  another task's PvmDenied, an owner's exit (its entries go, persistent ones stay with
 *  owner 0), a waiting read woken by another task's put, a waiting task killed, PVM 3.3's
 *  insert / lookup / delete, which errors PvmAutoErr prints, and groupd's death while a
 *  task waits (PvmSysErr, no hang).  Every wait is bounded.
 */
#include "gtap.h"
#include "gdtest.h"
#include "gimpi.h"
#include "pvm3.h"
#include "pvmtest.h"
#include "pvmpeer.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ieq(a, b, ...) cmp_ok((a), "==", (b), __VA_ARGS__)

/* ------------------------------------------------------------------ the peer side */

/*  A peer: reads "op name a b" lines, makes the call, prints "result value". */
static int s_peer_main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pvm_setopt(PvmAutoErr, 0);
    char line[256], op[32], name[128];
    while (fgets(line, sizeof line, stdin)) {
        int a = 0, b = 0, rc, v = -1;
        if (sscanf(line, "%31s %127s %d %d", op, name, &a, &b) < 1)
            continue;
        if (!strcmp(op, "tid"))
            rc = pvm_mytid();
        else if (!strcmp(op, "put")) {           /* put name value flags */
            int buf = pvm_initsend(PvmDataDefault);
            pvm_pkint(&a, 1, 1);
            rc = pvm_putinfo(name, buf, b);
        } else if (!strcmp(op, "get")) {        /* get name index flags */
            printf("go\n");
            rc = pvm_recvinfo(name, a, b);
            if (rc > 0)
                pvm_upkint(&v, 1, 1);
        } else if (!strcmp(op, "rget")) {       /* rget name tag: a message, then read */
            printf("go\n");
            rc = pvm_recv(-1, a);
            if (rc > 0)
                rc = pvm_recvinfo(name, 0, 0);
            if (rc > 0)
                pvm_upkint(&v, 1, 1);
        } else if (!strcmp(op, "del"))
            rc = pvm_delinfo(name, a, 0);
        else
            break;
        printf("%d %d\n", rc, v);
    }
    pvm_exit();
    return 0;
}

/* ------------------------------------------------------------------ driving peers */

/*  The peer's next result line (20 s bound): its result, *v its value; -9999 if none. */
static int s_result(peer_t *p, int *v)
{
    char line[64];
    int rc = -9999, val = -1;
    if (peer_line(p, line, sizeof line) > 0)
        sscanf(line, "%d %d", &rc, &val);
    if (v)
        *v = val;
    return rc;
}

/*  Waits for the "go" a get prints before it calls. */
static bool s_go(peer_t *p)
{
    char line[16];
    return peer_line(p, line, sizeof line) > 0 && !strncmp(line, "go", 2);
}

/* ------------------------------------------------------------------ helpers */

/*  Puts one int packed in encoding enc under name. */
static int s_put(const char *name, int value, int flags, int enc)
{
    int buf = pvm_mkbuf(enc);
    int old = pvm_setsbuf(buf);
    pvm_pkint(&value, 1, 1);
    int rc = pvm_putinfo((char *)name, buf, flags);
    pvm_setsbuf(old);
    pvm_freebuf(buf);
    return rc;
}

/*  recvinfo and the int it holds in *v (-1 when none). */
static int s_get(const char *name, int index, int flags, int *v)
{
    *v = -1;
    int rc = pvm_recvinfo((char *)name, index, flags);
    if (rc > 0)
        pvm_upkint(v, 1, 1);
    return rc;
}

/*  The entries of class name per getmboxinfo (-1: no such class), owner of the first. */
static int s_entries(const char *name, int *owner)
{
    int n = 0;
    struct pvmmboxinfo *ci = NULL;
    if (pvm_getmboxinfo((char *)name, &n, &ci) < 0)
        return -2;
    for (int k = 0; k < n; k++)
        if (!strcmp(ci[k].mi_name, name)) {
            if (owner)
                *owner = ci[k].mi_owners[0];
            return ci[k].mi_nentries;
        }
    return -1;
}

/* ------------------------------------------------------------------ alone */

static int s_call_notfound(void *arg) { (void)arg; return pvm_recvinfo("nosuch", 0, 0); }
static int s_call_badparam(void *arg) { (void)arg; return pvm_recvinfo("", 0, 0); }

static void test_alone(void)
{
    int v;
    ieq(s_put("a", 1, PvmMboxDefault, PvmDataDefault), 0, "put a: index 0");
    ieq(s_put("a", 2, PvmMboxDefault, PvmDataDefault), 0, "again: the owner replaces it");
    ieq(s_put("a", 3, PvmMboxMultiInstance, PvmDataDefault), 1, "MultiInstance: index 1");
    ieq(s_put("a", 4, PvmMboxMultiInstance, PvmDataDefault), 2, "and 2");
    ieq(s_put("d", 5, PvmMboxOverWritable | PvmMboxDirectIndex(7), PvmDataDefault), 7,
        "PvmMboxDirectIndex(7): index 7");
    ieq(s_put("r", 6, PvmMboxDefault, PvmDataRaw), 0, "a PvmDataRaw entry");
    int old = pvm_mkbuf(PvmDataDefault);
    pvm_setrbuf(old);
    int bid = s_get("a", 0, PvmMboxDefault, &v);
    ok(bid > 0 && v == 2, "recvinfo a 0: a buffer holding 2 (%d, %d)", bid, v);
    ieq(pvm_getrbuf(), bid, "it is the active receive buffer");
    int bytes, tag, src;
    ok(bid == old || pvm_bufinfo(old, &bytes, &tag, &src) == PvmNoSuchBuf,
       "the previous receive buffer is freed (as libpvm)");
    ok(s_get("r", 0, 0, &v) > 0 && v == 6, "the raw entry unpacks");
    ok(s_get("a", 1, PvmMboxFirstAvail, &v) > 0 && v == 3, "FirstAvail from 1: 3");
    ok(s_get("d", 0, PvmMboxFirstAvail, &v) > 0 && v == 5, "FirstAvail from 0 finds 7");
    ieq(s_get("a", 3, 0, &v), PvmNotFound, "a 3: PvmNotFound");
    ieq(pvm_errno, PvmNotFound, "pvm_errno");
    ieq(pvm_getrbuf(), 0, "a failed recvinfo leaves no receive buffer");
    ok(s_get("a", 2, PvmMboxReadAndDelete, &v) > 0 && v == 4, "ReadAndDelete a 2: 4");
    ieq(s_get("a", 2, 0, &v), PvmNotFound, "then gone");
    ieq(pvm_delinfo("a", 1, 0), 1, "delinfo a 1: its index");
    ieq(pvm_delinfo("a", 1, 0), PvmNotFound, "again: PvmNotFound");
    ieq(pvm_putinfo(NULL, pvm_getsbuf(), 0), PvmBadParam, "put NULL name: PvmBadParam");
    ieq(pvm_putinfo("", pvm_getsbuf(), 0), PvmBadParam, "put empty name");
    char long_name[GD_MAX_NAME + 2];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    ieq(s_put(long_name, 1, 0, PvmDataDefault), PvmBadParam, "put a name of 4097 bytes");
    ieq(s_get(long_name, 0, 0, &v), PvmBadParam, "recvinfo it");
    ieq(pvm_delinfo(long_name, 0, 0), PvmBadParam, "delinfo it");
    long_name[GD_MAX_NAME] = 0;
    ieq(s_put(long_name, 1, 0, PvmDataDefault), 0, "a name of 4096 bytes is fine");
    ieq(pvm_delinfo(long_name, 0, 0), 0, "and goes");
    ieq(pvm_putinfo("b", -1, 0), PvmBadParam, "put bufid -1: PvmBadParam (PVM hangs)");
    ieq(pvm_putinfo("b", 9999, 0), PvmNoSuchBuf, "put bufid 9999: PvmNoSuchBuf");
    ieq(s_get(NULL, 0, 0, &v), PvmBadParam, "recvinfo NULL");
    ieq(s_get("a", -1, 0, &v), PvmBadParam, "recvinfo index -1");
    ieq(pvm_delinfo("a", -1, 0), PvmBadParam, "delinfo index -1");
    ieq(pvm_delinfo(NULL, 0, 0), PvmBadParam, "delinfo NULL");
    int buf = pvm_initsend(PvmDataDefault);
    char *big = calloc(1, GD_MBOX_MAX_ENTRY + 1);
    pvm_pkbyte(big, GD_MBOX_MAX_ENTRY + 1, 1);
    free(big);
    ieq(pvm_putinfo("big", buf, 0), PvmOutOfRes, "an entry over 64 KiB: PvmOutOfRes");
    ieq(s_entries("big", NULL), -1, "not stored");
    /* PvmAutoErr: answers are silent, errors print (as libpvm) */
    char out[512];
    pvm_setopt(PvmAutoErr, 1);
    pvm_insert("locked", -1, 1);
    pvmtest_capture(s_call_notfound, NULL, out, sizeof out);
    ok(!*out, "PvmAutoErr: recvinfo's PvmNotFound prints nothing");
    pvm_setopt(PvmAutoErr, 1);
    pvmtest_capture(s_call_badparam, NULL, out, sizeof out);
    ok(strstr(out, "pvm_recvinfo(): Bad parameter"), "its PvmBadParam prints");
    pvm_setopt(PvmAutoErr, 0);
}

static void test_info_and_33(int me)
{
    int n = -1, owner = -1, v;
    struct pvmmboxinfo *ci = NULL;
    ieq(pvm_getmboxinfo("*", &n, &ci), 0, "getmboxinfo *: 0");
    ok(n >= 3 && ci && ci[0].mi_name, "lists %d classes", n);
    ieq(s_entries("d", &owner), 1, "d has 1 entry");
    ieq(owner, me, "owned by me");
    ieq(pvm_getmboxinfo("zz*", &n, &ci), 0, "no match");
    ieq(n, 0, "0 classes");
    ieq(pvm_getmboxinfo(NULL, &n, NULL), 0, "NULL pattern, NULL classes: fine");
    ok(n >= 3, "NULL matches all (%d)", n);
    ieq(pvm_getmboxinfo("c*d", &n, &ci), 0, "c*d");
    ok(n == 1 && !strcmp(ci[0].mi_name, "locked"), "matches locked (anywhere, as PVM)");
    ieq(pvm_insert("i", -1, 42), 0, "insert i -1: 0");
    ieq(pvm_insert("i", -1, 43), 1, "insert i -1: 1");
    ieq(pvm_insert("i", 0, 44), PvmDupEntry, "insert i 0: PvmDupEntry");
    ieq(pvm_insert("i", 9, 45), 9, "insert i 9: 9");
    ieq(pvm_insert("i", -2, 45), PvmBadParam, "insert i -2: PvmBadParam");
    int rb = pvm_getrbuf();
    v = 0;
    ieq(pvm_lookup("i", -1, &v), 0, "lookup i -1: index 0");
    ieq(v, 42, "data 42");
    ieq(pvm_getrbuf(), rb, "the receive buffer stays");
    ok(pvm_lookup("i", 9, &v) == 9 && v == 45, "lookup i 9: 45");
    ieq(pvm_lookup("i", 5, &v), PvmNoEntry, "lookup i 5: PvmNoEntry");
    ieq(pvm_delete("i", 0), 0, "delete i 0");
    ieq(pvm_delete("i", 0), PvmNoEntry, "again: PvmNoEntry");
    ieq(pvm_delete("i", -1), PvmBadParam, "delete i -1: PvmBadParam");
    ieq(s_entries("i", &owner), 2, "i keeps 2 entries");
    ok(s_get("i", 1, 0, &v) > 0 && v == 43, "pvm_recvinfo reads an insert's int");
}

/* ------------------------------------------------------------------ with peers */

static void test_others(peer_t *a, peer_t *b, int me)
{
    int v;
    peer_send(a, "tid");
    int atid = s_result(a, NULL);
    cmp_ok(atid, ">", 0, "peer a is a task");
    peer_send(a, "put a 9 0");
    ieq(s_result(a, NULL), PvmDenied, "another task's put over my entry: PvmDenied");
    peer_send(a, "del a 0");
    ieq(s_result(a, NULL), PvmDenied, "its delete: PvmDenied");
    peer_send(a, "get a 0 16");
    s_go(a);
    ieq(s_result(a, NULL), PvmDenied, "its ReadAndDelete: PvmDenied");
    peer_send(a, "get a 0 0");
    s_go(a);
    ok(s_result(a, &v) > 0 && v == 2, "its plain read: my entry");
    peer_send(a, "put d 10 %d", PvmMboxDirectIndex(7));
    ieq(s_result(a, NULL), 7, "it replaces my overwritable entry d 7 (PvmMboxDirectIndex)");
    ieq(s_put("d", 11, PvmMboxDirectIndex(7), PvmDataDefault), PvmDenied,
        "a's now, not overwritable: my put is denied");
    ok(s_get("d", 7, 0, &v) > 0 && v == 10, "my read of d 7 gives a's entry (an "
       "overwritable entry is never answered from the owner's copy)");
    ieq(s_put("seq", 1, 0, PvmDataDefault), 0, "seq: 1");
    ieq(s_put("seq", 2, 0, PvmDataDefault), 0, "seq: 2 (replacing my own: not waited for)");
    ok(s_get("seq", 0, 0, &v) > 0 && v == 2, "I read 2");
    ieq(pvm_getmboxinfo("seq", NULL, NULL), 0, "any later request of mine ...");
    peer_send(a, "get seq 0 0");
    s_go(a);
    ok(s_result(a, &v) > 0 && v == 2, "... comes after it: a reads 2");
    peer_send(a, "rget seq 77");
    s_go(a);
    ieq(s_put("seq", 3, 0, PvmDataDefault), 0, "seq: 3 (not waited for)");
    pvm_initsend(PvmDataDefault);
    ieq(pvm_send(atid, 77), 0, "then I send a a message");
    ok(s_result(a, &v) > 0 && v == 3, "a, having the message, reads 3 (the send waited for "
       "the put's receipt)");
    peer_send(a, "put cls 12 0");
    ieq(s_result(a, NULL), 0, "a puts cls");
    peer_send(a, "put per 13 1");
    ieq(s_result(a, NULL), 0, "and the persistent per");
    /* waiting: b waits for w, a's put wakes it */
    peer_send(b, "get w 0 32");
    ok(s_go(b), "b waits for w (PvmMboxWaitForInfo)");
    peer_send(a, "put w 14 0");
    ieq(s_result(a, NULL), 0, "a puts w");
    ok(s_result(b, &v) > 0 && v == 14, "b wakes with a's entry");
    peer_stop(a);
    int owner = -1, k;
    for (k = 0; k < 400 && s_entries("cls", NULL) != -1; k++)
        usleep(50000);
    ieq(s_entries("cls", NULL), -1, "a has exited: its entry has gone");
    ieq(s_entries("w", NULL), -1, "and w");
    ieq(s_entries("per", &owner), 1, "its persistent entry stays");
    ieq(owner, 0, "with owner 0");
    ok(s_get("per", 0, 0, &v) > 0 && v == 13, "readable");
    ieq(s_put("per", 1, 0, PvmDataDefault), PvmDenied, "but nobody may replace it");
    ieq(pvm_delinfo("per", 0, 0), PvmDenied, "or delete it");
    ieq(s_entries("d", &owner), -1, "d 7 (a's since it replaced it) has gone too");
    (void)me;
}

/*  A task killed while waiting: groupd forgets it; others go on. */
static void test_killed_waiter(peer_t *b)
{
    peer_t c;
    if (peer_start(&c, "pvm_mbox") < 0)
        BAIL_OUT("cannot start a peer");
    peer_send(&c, "get kw 0 48");
    ok(s_go(&c), "c waits for kw with ReadAndDelete");
    kill(c.pid, SIGKILL);
    waitpid(c.pid, NULL, 0);
    close(c.in);
    close(c.out);
    peer_send(b, "get kw 0 32");
    ok(s_go(b), "b waits for kw");
    int v;
    ieq(s_put("kw", 21, PvmMboxOverWritable, PvmDataDefault), 0, "I put kw");
    ok(s_result(b, &v) > 0 && v == 21, "b gets it: the killed waiter took nothing");
    ok(s_get("kw", 0, 0, &v) > 0 && v == 21, "the entry is still there");
}

/*  The per-task bound (groupd --mbox-max-per-task=8). */
static void test_quota(void)
{
    int mine = 0, rc = 0, n = 0;
    struct pvmmboxinfo *ci = NULL;
    int me = pvm_mytid();
    pvm_getmboxinfo("", &n, &ci);
    for (int k = 0; k < n; k++)
        for (int j = 0; j < ci[k].mi_nentries; j++)
            mine += ci[k].mi_owners[j] == me;
    for (int k = mine; k < 8; k++)
        rc |= s_put("q", k, PvmMboxMultiInstance, PvmDataDefault) < 0;
    ieq(rc, 0, "entries up to the bound of 8 (%d mine before)", mine);
    ieq(s_put("q", 99, PvmMboxMultiInstance, PvmDataDefault), PvmOutOfRes,
        "the 9th: PvmOutOfRes");
    ieq(pvm_errno, PvmOutOfRes, "pvm_errno");
    ieq(pvm_delinfo("q", 0, 0), 0, "a delete makes room");
    cmp_ok(s_put("q", 99, PvmMboxMultiInstance, PvmDataDefault), ">=", 0, "room again");
}

/*  groupd dies while b waits: PvmSysErr, no hang. */
static void test_groupd_death(gdt_daemon_t *d, peer_t *b)
{
    peer_send(b, "get never 0 32");
    ok(s_go(b), "b waits for an entry nobody puts");
    int64_t t0 = tl_now_ms();
    gdt_kill(d);
    ieq(s_result(b, NULL), PvmSysErr, "groupd killed: b's wait ends with PvmSysErr");
    cmp_ok(tl_now_ms() - t0, "<", 10000, "soon (%lld ms)", (long long)(tl_now_ms() - t0));
    int v;
    /* (a read of one of this task's own locked entries is answered from its copy until
     * the task has noticed: ask for one it does not own, which needs groupd) */
    ieq(s_get("never", 0, 0, &v), PvmSysErr, "my next read that needs groupd: PvmSysErr");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "peer"))
        return s_peer_main();
    plan(NO_PLAN);
    gtap_watchdog(300);         /* a hang is a failure, not a stuck suite */
    signal(SIGPIPE, SIG_IGN);
    gdt_daemon_t d;
    if (gdt_start(&d, "--mbox-max-per-task=8") < 0)
        BAIL_OUT("groupd did not start");
    setenv("GIMPI_GROUPD", d.endpoint, 1);
    pvm_setopt(PvmAutoErr, 0);
    int me = pvm_mytid();
    cmp_ok(me, ">", 0, "I am a task");
    peer_t a, b;
    if (peer_start(&a, "pvm_mbox") < 0 || peer_start(&b, "pvm_mbox") < 0)
        BAIL_OUT("cannot start peers");
    test_alone();
    test_info_and_33(me);
    test_others(&a, &b, me);
    test_killed_waiter(&b);
    test_quota();
    test_groupd_death(&d, &b);
    peer_stop(&b);
    pvm_exit();
    gdt_stop(&d);
    gdt_cleanup(&d);
    done_testing();
}
