/*  t/pvm_export.c — pvm_export and pvm_unexport edit PVM_EXPORT as PVM 3.4.6's do (a name
 *  listed once however often exported, the empty name and an absent one change nothing,
 *  unexporting takes the first listing and one colon), NULL and names with '=' or ':' are
 *  PvmBadParam; a child spawned on this host gets the exported variables with their
 *  values at the spawn, and PVM_EXPORT itself.  Run as `t/pvm_export vm` under a virtual
 *  machine of two hosts (t/pvm_export_vm.sh) it spawns onto the other host too and prints
 *  what the children there got, and the other host's clock (pvm_hostsync).
 */
#include "gtap.h"
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/*  The child: sends its parent what it got of FOO, BAR and PVM_EXPORT. */
static int s_child(void)
{
    char b[512];
    const char *foo = getenv("FOO"), *bar = getenv("BAR"), *e = getenv("PVM_EXPORT");
    snprintf(b, sizeof b, "FOO=%s BAR=%s PVM_EXPORT=%s", foo ? foo : "(unset)",
             bar ? bar : "(unset)", e ? e : "(unset)");
    pvm_initsend(PvmDataDefault);
    pvm_pkstr(b);
    pvm_send(pvm_parent(), 1);
    pvm_exit();
    return 0;
}

/*  What a child spawned where (NULL: anywhere) got, into out; 0 or -1. */
static int s_spawn_report(const char *prog, const char *where, char *out)
{
    int tid = 0;
    char *args[] = { (char *)"child", NULL };
    *out = 0;
    if (pvm_spawn((char *)prog, args, where ? PvmTaskHost : PvmTaskDefault, (char *)where, 1,
                  &tid) != 1)
        return -1;
    if (pvm_trecv(tid, 1, &(struct timeval){ 60, 0 }) <= 0)
        return -1;
    pvm_upkstr(out);
    return 0;
}

/*  PVM_EXPORT now, "(unset)" when it is not set. */
static const char *s_list(void)
{
    const char *e = getenv("PVM_EXPORT");
    return e ? e : "(unset)";
}

/*  Under a virtual machine: a child on every host, and each host's clock. */
static int s_vm(const char *prog)
{
    pvm_setopt(PvmAutoErr, 0);
    struct pvmhostinfo *h;
    int nh = 0;
    pvm_config(&nh, NULL, &h);
    setenv("FOO", "foo value", 1);
    setenv("BAR", "bar value", 1);
    pvm_export((char *)"FOO");
    for (int i = 0; i < nh; i++) {
        char got[512];
        int rc = s_spawn_report(prog, h[i].hi_name, got);
        struct timeval clk, delta;
        int hs = pvm_hostsync(h[i].hi_tid, &clk, &delta);
        printf("host %d %s: %s\n", i, rc == 0 ? "child" : "nochild", got);
        printf("host %d hostsync %d delta %ld.%06ld\n", i, hs, (long)delta.tv_sec,
               (long)delta.tv_usec);
    }
    pvm_exit();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return s_child();
    if (argc > 1 && !strcmp(argv[1], "vm"))
        return s_vm(argv[0]);
    plan(12);
    pvm_setopt(PvmAutoErr, 0);
    unsetenv("PVM_EXPORT");
    unsetenv("BAR");
    int rc = pvm_export((char *)"FOO");
    ok(rc == 0 && !strcmp(s_list(), "FOO"), "export FOO: %s", s_list());
    rc = pvm_export((char *)"FOO") | pvm_export((char *)"");
    ok(rc == 0 && !strcmp(s_list(), "FOO"), "again, and the empty name: unchanged (%s)", s_list());
    pvm_export((char *)"NOPE");
    pvm_export((char *)"TERMX");
    ok(!strcmp(s_list(), "FOO:NOPE:TERMX"), "appended with colons: %s", s_list());
    rc = pvm_unexport((char *)"NOPE");
    ok(rc == 0 && !strcmp(s_list(), "FOO:TERMX"),
       "unexport from the middle: %s", s_list());
    rc = pvm_unexport((char *)"ZZ") | pvm_unexport((char *)"") | pvm_unexport((char *)"FO");
    ok(rc == 0 && !strcmp(s_list(), "FOO:TERMX"),
       "names not listed (a prefix neither): unchanged (%s)", s_list());
    rc = pvm_unexport((char *)"TERMX");
    ok(rc == 0 && !strcmp(s_list(), "FOO"),
       "unexport the last: its colon goes (%s)", s_list());
    setenv("PVM_EXPORT", "A::B:A", 1);
    rc = pvm_unexport((char *)"A");
    ok(rc == 0 && !strcmp(s_list(), ":B:A"),
       "only the first listing goes, with one colon (%s)", s_list());
    setenv("PVM_EXPORT", "", 1);
    rc = pvm_export((char *)"FOO");
    ok(rc == 0 && !strcmp(s_list(), "FOO"),
       "an empty list gets no leading colon (%s)", s_list());
    ok(pvm_export(NULL) == PvmBadParam && pvm_unexport(NULL) == PvmBadParam
       && pvm_export((char *)"A=B") == PvmBadParam && pvm_export((char *)"A:B") == PvmBadParam
       && !strcmp(s_list(), "FOO"), "NULL, 'A=B', 'A:B': PvmBadParam, list unchanged");
    ok(pvm_mytid() > 0, "enrolled");
    setenv("FOO", "set after start", 1);
    char got[512];
    rc = s_spawn_report(argv[0], NULL, got);
    ok(rc == 0
       && !strcmp(got, "FOO=set after start BAR=(unset) PVM_EXPORT=FOO"),
       "a child here gets FOO's value at the spawn and PVM_EXPORT (%s)", got);
    setenv("FOO", "changed", 1);
    rc = s_spawn_report(argv[0], NULL, got);
    ok(rc == 0 && !strncmp(got, "FOO=changed ", 12),
       "the next child gets the new value (%s)", got);
    pvm_exit();
    return exit_status();
}
