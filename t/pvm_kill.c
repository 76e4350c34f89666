/*  t/pvm_kill.c — pvm_kill: a shell-started master spawns a copy of this program that
 *  waits for a message that never comes; pvm_kill ends it (the master then sees it gone:
 *  a receive naming it fails instead of waiting), a second kill of the same tid and a tid
 *  nobody has are PvmBadParam, tid 0 and negative tids too.  The test's groupd is the
 *  build tree's (AM_TESTS_ENVIRONMENT).
 */
#include "gtap.h"
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  The child: tells the master it runs, then waits for ever (until killed). */
static int s_child(void)
{
    int parent = pvm_parent();
    pvm_initsend(PvmDataDefault);
    pvm_send(parent, 1);
    pvm_recv(parent, 99);       /* never sent: only SIGTERM ends this */
    return 3;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return s_child();
    plan(7);
    pvm_setopt(PvmAutoErr, 0);
    ok(pvm_mytid() > 0, "master enrolled");
    char *args[] = { (char *)"child", NULL };
    int tid = 0;
    int n = pvm_spawn(argv[0], args, PvmTaskDefault, NULL, 1, &tid);
    ok(n == 1 && tid > 0, "spawned a waiting child t%x", (unsigned)tid);
    int b = pvm_trecv(tid, 1, &(struct timeval){ 60, 0 });
    ok(b > 0, "the child runs (its first message arrived)");
    ok(pvm_kill(tid) == 0, "pvm_kill(child) = 0");
    /* the child's end shows as a failed receive naming it, not a hang */
    int r = pvm_recv(tid, 2);
    ok(r < 0, "a receive from the killed child fails (%d)", r);
    ok(pvm_kill(0x7ffffff0) == PvmBadParam, "a tid nobody has: PvmBadParam");
    ok(pvm_kill(0) == PvmBadParam && pvm_kill(-5) == PvmBadParam, "tid 0 and negative: PvmBadParam");
    pvm_exit();
    return exit_status();
}
