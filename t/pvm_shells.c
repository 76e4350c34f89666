/*  t/pvm_shells.c — two PVM tasks started from two shells (no launcher, no spawn) find
 *  each other through a group and exchange messages, as PVM users do from two xterms.
 *  `pvm_shells a`: joins group "shells", prints "ready", then waits in pvm_recv(-1, 1)
 *  (alone, with no connection yet: it must wait, not fail), answers the sender, and
 *  waits for the sender's last word from its tid.  `pvm_shells b`: finds instance 0 of
 *  the group, sends to it, receives the answer, sends the last word.  Each prints
 *  "a ok" / "b ok"; t/pvm_shells.sh runs them.
 */
#include "pvm3.h"

#include <stdio.h>
#include <string.h>

/*  Prints a failure and returns 1. */
static int s_fail(const char *who, const char *what, int rc)
{
    printf("%s: %s failed (%d)\n", who, what, rc);
    return 1;
}

/*  The waiting side. */
static int s_a(void)
{
    int me = pvm_mytid();
    if (me <= 0)
        return s_fail("a", "pvm_mytid", me);
    int inst = pvm_joingroup("shells");
    if (inst != 0)
        return s_fail("a", "pvm_joingroup", inst);
    printf("ready t%x\n", (unsigned)me);
    fflush(stdout);
    int b = pvm_recv(-1, 1);
    if (b < 0)
        return s_fail("a", "pvm_recv(-1, 1)", b);
    int len, tag, src, v = 0;
    pvm_bufinfo(b, &len, &tag, &src);
    pvm_upkint(&v, 1, 1);
    if (v != 41)
        return s_fail("a", "first message's content", v);
    pvm_initsend(PvmDataDefault);
    v = 42;
    pvm_pkint(&v, 1, 1);
    int rc = pvm_send(src, 2);
    if (rc < 0)
        return s_fail("a", "pvm_send", rc);
    b = pvm_recv(src, 3);
    if (b < 0)
        return s_fail("a", "pvm_recv(b, 3)", b);
    pvm_upkint(&v, 1, 1);
    if (v != 43)
        return s_fail("a", "last word", v);
    pvm_lvgroup("shells");
    printf("a ok\n");
    pvm_exit();
    return 0;
}

/*  The calling side. */
static int s_b(void)
{
    int a = pvm_gettid("shells", 0);
    if (a <= 0)
        return s_fail("b", "pvm_gettid", a);
    int v = 41;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    int rc = pvm_send(a, 1);
    if (rc < 0)
        return s_fail("b", "pvm_send", rc);
    int b = pvm_recv(a, 2);
    if (b < 0)
        return s_fail("b", "pvm_recv", b);
    pvm_upkint(&v, 1, 1);
    if (v != 42)
        return s_fail("b", "answer", v);
    pvm_initsend(PvmDataDefault);
    v = 43;
    pvm_pkint(&v, 1, 1);
    if ((rc = pvm_send(a, 3)) < 0)
        return s_fail("b", "last send", rc);
    printf("b ok\n");
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "a"))
        return s_a();
    if (argc == 2 && !strcmp(argv[1], "b"))
        return s_b();
    fprintf(stderr, "usage: pvm_shells a|b\n");
    return 2;
}
