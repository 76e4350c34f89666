/*  t/pvm_causal.c — the causal promise of group state (doc/groupd-protocol.md §6), as a
 *  PVM program of 4 tasks under gimpirun (t/pvm_causal.sh).  Instance tasks 1..3 are
 *  workers of task 0, the checker, which keeps its cache of group "c" current by asking
 *  it before every change.  Each round one task changes "c" and then makes the checker
 *  hear about it; the checker's very next queries must see the change:
 *    direct   task 1 leaves "c", then sends to the checker
 *    forward  task 1 leaves "c", then sends to task 2, which sends to the checker
 *    reduce   task 1 leaves "c", then all four reduce over group "W" to the checker
 *    join     task 1 joins "c" again, then sends its instance to the checker
 *    exit     task 2 spawns a child that joins "c" and tells task 2, which tells the
 *             checker (a join heard through a forwarder); the child then pvm_exits, task
 *             2 waits until its own cache has seen that, then sends to the checker
 *  argv: ROUNDS EXITS (how many leave/join rounds, how many exit rounds).  The checker
 *  prints "causal N checks, S stale ok" when every answer was current, or "FAIL ..." and
 *  exits 1 at the first stale one.  "child" is the spawned task's mode.
 */
#include "pvm3.h"
#include "taskcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { T_GO = 1, T_LEFT, T_FWD, T_RED, T_REJOIN, T_JOINED, T_EXITGO, T_EXITED, T_CHILD,
       T_DONE };
enum { M_DIRECT, M_FORWARD, M_REDUCE };

#define CHECK(cond, ...) TASK_CHECK("causal ", s_rank, cond, __VA_ARGS__)

static int s_rank;

/*  Sends one int with a tag. */
static void s_send_int(int tid, int tag, int v)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    CHECK(pvm_send(tid, tag) == 0, "send to t%x", tid);
}

/*  Receives one int with a tag from tid (-1: anybody); *from gets the sender. */
static int s_recv_int(int tid, int tag, int *from)
{
    int b = pvm_recv(tid, tag), v = 0, len, t, src;
    CHECK(b > 0, "recv tag %d: %d", tag, b);
    pvm_bufinfo(b, &len, &t, &src);
    pvm_upkint(&v, 1, 1);
    if (from)
        *from = src;
    return v;
}

/*  The reduce over "W" every task makes in M_REDUCE rounds. */
static void s_reduce(int root)
{
    int x = 1;
    CHECK(pvm_reduce(PvmSum, &x, 1, PVM_INT, T_RED, "W", root) == 0, "reduce");
    if (s_rank == 0)
        CHECK(x == 4, "reduce sum %d", x);
}

/*  The spawned task: joins "c", says its instance to its parent, and when told to,
 *  leaves the VM. */
static int s_child(void)
{
    int inst = pvm_joingroup("c");
    s_send_int(pvm_parent(), T_CHILD, inst);
    s_recv_int(pvm_parent(), T_DONE, NULL);
    pvm_exit();
    return 0;
}

/*  A worker: does what the checker says until T_DONE. */
static void s_worker(int checker, const int *tids, const char *self_path)
{
    for (;;) {
        int from, v = s_recv_int(-1, -1, &from), len, tag, src;
        pvm_bufinfo(pvm_getrbuf(), &len, &tag, &src);
        switch (tag) {
        case T_GO:                      /* task 1: leave, then tell */
            CHECK(pvm_lvgroup("c") == 0, "lvgroup");
            if (v == M_DIRECT)
                s_send_int(checker, T_LEFT, 0);
            else if (v == M_FORWARD)
                s_send_int(tids[2], T_LEFT, 0);
            else
                s_reduce(pvm_getinst("W", checker));
            break;
        case T_LEFT:                    /* task 2 forwards task 1's news */
            s_send_int(checker, T_FWD, 0);
            break;
        case T_RED:                     /* tasks 2, 3: take part in the reduce */
            s_reduce(v);
            break;
        case T_REJOIN: {
            int inst = pvm_joingroup("c");
            CHECK(inst >= 0, "rejoin %d", inst);
            s_send_int(checker, T_JOINED, inst);
            break;
        }
        case T_EXITGO: {                /* task 2: a child joins and exits; then tell */
            char *args[] = { "child", NULL };
            int ctid;
            CHECK(pvm_spawn((char *)self_path, args, PvmTaskDefault, "", 1, &ctid) == 1,
                  "spawn");
            int cinst = s_recv_int(ctid, T_CHILD, NULL);
            s_send_int(checker, T_CHILD, cinst);
            s_recv_int(checker, T_GO, NULL);
            s_send_int(ctid, T_DONE, 0);
            int before = v, n = 0;
            for (int k = 0; k < 100000 && (n = pvm_gsize("c")) != before; k++)
                usleep(200);            /* own cache catches up with the exit */
            CHECK(n == before, "gsize after the child's exit %d, want %d", n, before);
            s_send_int(checker, T_EXITED, cinst);
            break;
        }
        case T_DONE:
            return;
        default:
            CHECK(0, "unexpected tag %d", tag);
        }
    }
}

/*  The checker's look at "c" after hearing of a change: size and instance inst. */
static int s_look(int want_size, int inst, int want_tid, const char *what, int round)
{
    int n = pvm_gsize("c");
    int t = pvm_gettid("c", inst);
    CHECK(n == want_size, "%s round %d: gsize %d, want %d (stale)", what, round, n,
          want_size);
    CHECK(t == want_tid, "%s round %d: gettid(c, %d) %d, want %d (stale)", what, round, inst,
          t, want_tid);
    if (want_tid > 0)
        CHECK(pvm_getinst("c", want_tid) == inst, "%s round %d: getinst", what, round);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return s_child();
    int rounds = argc > 1 ? atoi(argv[1]) : 200, exits = argc > 2 ? atoi(argv[2]) : 20;
    char self_path[4096];
    ssize_t pl = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    self_path[pl > 0 ? pl : 0] = 0;
    int *tids, ntids = pvm_siblings(&tids);
    int me = pvm_mytid();
    for (s_rank = 0; s_rank < ntids && tids[s_rank] != me; s_rank++)
        ;
    CHECK(ntids == 4 && s_rank < 4, "want 4 siblings, have %d", ntids);
    int checker = tids[0];
    CHECK(pvm_joingroup("W") >= 0 && pvm_joingroup("c") >= 0, "join");
    CHECK(pvm_barrier("W", 4) == 0 && pvm_barrier("c", 4) == 0, "barrier");
    if (s_rank != 0) {
        s_worker(checker, tids, self_path);
        pvm_lvgroup("c");
        pvm_lvgroup("W");
        pvm_exit();
        return 0;
    }
    int checks = 0, t1 = tids[1];
    for (int r = 0; r < rounds; r++) {
        int mode = r % 3;
        int inst1 = pvm_getinst("c", t1);
        CHECK(pvm_gsize("c") == 4 && inst1 >= 0, "round %d starts with 4", r);
        s_send_int(t1, T_GO, mode);
        if (mode == M_DIRECT)
            s_recv_int(t1, T_LEFT, NULL);
        else if (mode == M_FORWARD)
            s_recv_int(tids[2], T_FWD, NULL);
        else {
            int root = pvm_getinst("W", checker);
            s_send_int(tids[2], T_RED, root);
            s_send_int(tids[3], T_RED, root);
            s_reduce(root);
        }
        static const char *names[] = { "leave-direct", "leave-forward", "leave-reduce" };
        checks += s_look(3, inst1, PvmNoInst, names[mode], r);
        CHECK(pvm_getinst("c", t1) == PvmNotInGroup, "%s round %d: getinst of the leaver",
              names[mode], r);
        s_send_int(t1, T_REJOIN, 0);
        int inst = s_recv_int(t1, T_JOINED, NULL);
        checks += s_look(4, inst, t1, "join", r);
    }
    for (int r = 0; r < exits; r++) {
        CHECK(pvm_gsize("c") == 4, "exit round %d starts with 4", r);
        s_send_int(tids[2], T_EXITGO, 4);
        int cinst = s_recv_int(tids[2], T_CHILD, NULL);
        int ctid = pvm_gettid("c", cinst);
        CHECK(ctid > 0 && pvm_gsize("c") == 5, "exit round %d: the child's join (stale)", r);
        s_send_int(tids[2], T_GO, 0);
        CHECK(s_recv_int(tids[2], T_EXITED, NULL) == cinst, "exit round %d", r);
        checks += s_look(4, cinst, PvmNoInst, "exit", r);
    }
    for (int k = 1; k < 4; k++)
        s_send_int(tids[k], T_DONE, 0);
    printf("causal %d checks ok\n", checks);
    fflush(stdout);
    pvm_lvgroup("c");
    pvm_lvgroup("W");
    pvm_exit();
    return 0;
}
