/*  t/job_tids.c — a task for t/gimpirun_tids.sh: checks that the data plane and groupd speak
 *  the same tids.  It enrols (gimpi_init), then:
 *    - its data-plane tid (gimpi_msg_mytid) is the tid its groupd connection registered
 *      (gimpi_group_mytid), and groupd's LOOKUP of it names this process;
 *    - every task joins the job's group "alltids-<tid of rank 0>" and waits in its barrier; then for every instance
 *      it takes the member's tid from groupd (gettid) and sends it that very number over
 *      the data plane; each task receives one message from every other and checks that
 *      the data plane names the sender with the tid the sender learned from groupd.
 *  argv[1] "hold" makes rank 0 read one line of standard input before leaving (so that a
 *  test can keep a job alive while it runs another); "nogroupd" expects groupd to be
 *  unavailable: tid = rank + 1 and group calls fail with GIMPI_ESYSERR.
 *  Prints "rank R tid T ok" (T in decimal) and exits 0, or "rank R FAIL ..." and exits 1.
 */
#include "gimpi.h"
#include "taskcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int s_rank = -1;

#define CHECK(cond, ...) TASK_CHECK("rank ", s_rank, cond, __VA_ARGS__)

/*  The job's group: every member sends its tid to every other member found via groupd. */
static void s_exchange(gimpi_msg_t *m, gimpi_groups_t *g, int me, int n)
{
    char group[64];
    snprintf(group, sizeof group, "alltids-%d", gimpi_msg_tid(m, 0));
    CHECK(gimpi_group_join(g, group) >= 0, "join");
    CHECK(gimpi_group_barrier(g, group, n) == 0, "barrier");
    CHECK(gimpi_group_gsize(g, group) == n, "gsize");
    for (int inst = 0; inst < n; inst++) {
        int t = gimpi_group_gettid(g, group, inst);
        CHECK(t > 0 && gimpi_msg_rank(m, t) >= 0, "gettid(%d) = %d is a data-plane tid", inst, t);
        if (t == me)
            continue;
        CHECK(gimpi_msg_send(m, t, 9, &me, sizeof me) == 0, "send to t%d", t);
    }
    for (int k = 0; k < n - 1; k++) {
        int said = 0;
        gimpi_status_t st;
        CHECK(gimpi_msg_recv(m, GIMPI_ANY, 9, &said, sizeof said, &st) == 0, "recv");
        CHECK(st.source == said, "the data plane names t%d as t%d", said, st.source);
        CHECK(gimpi_group_getinst(g, group, said) >= 0, "t%d is in the group", said);
    }
    CHECK(gimpi_group_barrier(g, group, n) == 0, "barrier after");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "";
    char err[512];
    gimpi_t *t = gimpi_init(err, sizeof err);
    CHECK(t, "gimpi_init: %s", err);
    s_rank = gimpi_rank(t);
    gimpi_msg_t *m = gimpi_msg(t);
    gimpi_groups_t *g = gimpi_groups(t);
    int me = gimpi_msg_mytid(m), n = gimpi_size(t);
    CHECK(gimpi_msg_tid(m, s_rank) == me && gimpi_msg_rank(m, me) == s_rank, "tid <-> rank");
    if (!strcmp(mode, "nogroupd")) {
        CHECK(me == s_rank + 1, "without groupd tid = rank + 1 (%d)", me);
        CHECK(gimpi_group_mytid(g) == GIMPI_ESYSERR, "group calls: PvmSysErr");
        CHECK(gimpi_group_join(g, "x") == GIMPI_ESYSERR, "join: PvmSysErr");
    } else {
        CHECK(me > 0x40000, "tid %d is groupd's", me);
        CHECK(gimpi_group_mytid(g) == me, "groupd registered tid %d, data plane %d",
              gimpi_group_mytid(g), me);
        gimpi_task_info_t info;
        CHECK(gimpi_group_lookup(g, me, &info) == 0, "lookup");
        CHECK(info.ospid == getpid() && info.pid == getpid() && info.port > 0,
              "lookup names this process (%d %lld %d)", info.ospid, (long long)info.pid,
              info.port);
        s_exchange(m, g, me, n);
    }
    if (!strcmp(mode, "hold") && s_rank == 0) {
        printf("rank 0 tid %d holding\n", me);
        char line[64];
        CHECK(fgets(line, sizeof line, stdin), "release line");
    }
    CHECK(gimpi_finalize(&t) == 0, "finalize");
    printf("rank %d tid %d ok\n", s_rank, me);
    return 0;
}
