/*  t/pvm_misc.c — the small calls of PVM's API, against the answers of the real PVM 3.4.6
 *  (measured under a private pvmd): pvm_archcode (LINUX64's data signature 0x408c41, the
 *  same as pvm_config's hi_dsig; an architecture no host has is PvmNotFound, NULL is
 *  PvmBadParam), pvm_hostsync on this host (delta 0, the clock now; host 0, -1 and an
 *  unknown host are PvmNoHost; a task's tid stands for its host), pvm_advise and
 *  pvm_serror (PvmRoute and PvmAutoErr), the trace masks (35 '@' and a NUL when empty;
 *  a bad selector or mask is PvmBadParam; a spawned child starts with its parent's child
 *  mask and PVM_EXPORT), pvm_version, pvm_start_pvmd with a groupd serving (PvmDupHost),
 *  and the calls gimpi does not build (PvmNotImpl).
 */
#include "gtap.h"
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/*  The child: sends its own and its children's trace masks to its parent. */
static int s_child(void)
{
    char self[64], child[64];
    memset(self, 0, sizeof self);
    memset(child, 0, sizeof child);
    pvm_gettmask(PvmTaskSelf, self);
    pvm_gettmask(PvmTaskChild, child);
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(self);
    pvm_pkstr(child);
    pvm_send(pvm_parent(), 1);
    pvm_exit();
    return 0;
}

/*  The trace mask checks: 7 tests. */
static void s_tmask(const char *prog)
{
    char m[64], empty[64];
    memset(empty, '@', 35);
    empty[35] = 0;
    memset(m, 'x', sizeof m);
    ok(pvm_gettmask(PvmTaskSelf, m) == 0 && !strcmp(m, empty), "own mask: 35 '@' (%s)", m);
    ok(pvm_gettmask(2, m) == PvmBadParam && pvm_settmask(-1, m) == PvmBadParam
       && pvm_gettmask(PvmTaskSelf, NULL) == PvmBadParam, "bad selector, NULL: PvmBadParam");
    ok(pvm_settmask(PvmTaskChild, (char *)"@@@@@@@@@@@H") == 0
       && pvm_settmask(PvmTaskSelf, (char *)"A") == 0, "set the children's and our own masks");
    char own[64], kids[64];
    pvm_gettmask(PvmTaskSelf, own);
    pvm_gettmask(PvmTaskChild, kids);
    ok(own[0] == 'A' && own[1] == '@' && strlen(own) == 35 && kids[11] == 'H'
       && strlen(kids) == 35, "they read back, '@'-padded, apart (%s, %s)", own, kids);
    ok(pvm_settmask(PvmTaskSelf, (char *)"a@@") == PvmBadParam
       && pvm_settmask(PvmTaskSelf, (char *)"@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@") == PvmBadParam,
       "a character outside '@'..'O', or 38 characters: PvmBadParam");
    int tid = 0;
    char *args[] = { (char *)"child", NULL };
    ok(pvm_spawn((char *)prog, args, PvmTaskDefault, NULL, 1, &tid) == 1, "spawned a child");
    char cself[64] = "", cchild[64] = "";
    if (pvm_trecv(tid, 1, &(struct timeval){ 60, 0 }) > 0) {
        pvm_upkstr(cself);
        pvm_upkstr(cchild);
    }
    ok(!strcmp(cself, kids) && !strcmp(cchild, kids),
       "the child's own and children's masks are our children's (%s, %s)", cself, cchild);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return s_child();
    plan(21);
    pvm_setopt(PvmAutoErr, 0);
    int me = pvm_mytid();
    ok(me > 0, "enrolled t%x", (unsigned)me);
    struct pvmhostinfo *h;
    int nh = 0, na = 0;
    int rc = pvm_config(&nh, &na, &h);
    ok(rc == 0 && nh >= 1, "pvm_config: %d host(s)", nh);
    ok(pvm_archcode((char *)"LINUX64") == 0x408c41 && h[0].hi_dsig == 0x408c41,
       "archcode(LINUX64) = 0x408c41 = hi_dsig, as PVM 3.4.6");
    ok(pvm_archcode((char *)"SUN4") == PvmNotFound && pvm_archcode((char *)"linux64") == PvmNotFound
       && pvm_archcode((char *)"") == PvmNotFound, "no host of SUN4, linux64, '': PvmNotFound");
    ok(pvm_archcode(NULL) == PvmBadParam, "archcode(NULL): PvmBadParam");
    struct timeval before, clk = { 0, 0 }, delta = { 1, 1 };
    gettimeofday(&before, NULL);
    ok(pvm_hostsync(h[0].hi_tid, &clk, &delta) == 0 && delta.tv_sec == 0 && delta.tv_usec == 0
       && clk.tv_sec >= before.tv_sec && clk.tv_sec <= before.tv_sec + 5,
       "hostsync(this host): clock now, delta 0");
    ok(pvm_hostsync(me, NULL, NULL) == 0, "hostsync(a task's tid): its host; NULL outputs");
    ok(pvm_hostsync(0, &clk, &delta) == PvmNoHost && pvm_hostsync(-1, &clk, &delta) == PvmNoHost
       && pvm_hostsync(0x7ffff000, &clk, &delta) == PvmNoHost, "hosts 0, -1, unknown: PvmNoHost");
    ok(pvm_advise(PvmRouteDirect) == 0 && pvm_getopt(PvmRoute) == PvmRouteDirect
       && pvm_advise(0) == PvmBadParam && pvm_advise(4) == PvmBadParam,
       "pvm_advise sets PvmRoute; 0 and 4 are PvmBadParam");
    ok(pvm_serror(1) == 0 && pvm_serror(0) == 1 && pvm_serror(7) == PvmBadParam,
       "pvm_serror: the previous PvmAutoErr; 7 is PvmBadParam");
    ok(!strcmp(pvm_version(), "3.4.6"), "pvm_version: 3.4.6");
    s_tmask(argv[0]);
    ok(pvm_start_pvmd(0, NULL, 1) == PvmDupHost, "start_pvmd with a groupd serving: PvmDupHost");
    struct pvmhostinfo *hp = (struct pvmhostinfo *)1;
    int *t = (int *)1, nt = 5;
    ok(pvm_reg_rm(&hp) == PvmNotImpl && hp == NULL && pvm_reg_hoster() == PvmNotImpl
       && pvm_reg_tasker() == PvmNotImpl, "reg_rm, reg_hoster, reg_tasker: PvmNotImpl");
    ok(pvm_getnoresets(&t, &nt) == PvmNotImpl && t == NULL && nt == 0,
       "getnoresets: PvmNotImpl, nothing returned");
    pvm_exit();
    return exit_status();
}
