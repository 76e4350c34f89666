/*  t/pvm_introflood.c — spawned children's messages under an introduction flood, as a
 *  PVM program (t/pvm_introflood.sh floods this parent's port meanwhile).  The parent
 *  prints "pid P" and waits for a line on stdin (the flood is running), spawns N copies
 *  of itself, and receives one message from each (pvm_trecv, 20 s each); it prints
 *  "got K of N" and exits 0 when all came.  A child sends its index to its parent and
 *  exits, printing "send: RC" on stderr when pvm_send failed.
 */
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  The child: one message to the parent. */
static int s_child(void)
{
    int me = pvm_mytid(), parent = pvm_parent();
    if (me < 0 || parent < 0)
        return 1;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&me, 1, 1);
    int rc = pvm_send(parent, 1);
    if (rc)
        fprintf(stderr, "send: %d\n", rc);
    pvm_exit();
    return rc ? 1 : 0;
}

/*  The parent: argv[1] = N. */
int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child"))
        return s_child();
    int n = argc > 1 ? atoi(argv[1]) : 20;
    if (n < 1 || n > 64 || pvm_mytid() < 0)
        return 2;
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return 2;
    int tids[64];
    char *args[] = { "child", NULL };
    int started = pvm_spawn(argv[0], args, PvmTaskDefault, "", n, tids);
    int got = 0;
    struct timeval tmo = { 20, 0 };
    while (got < started && pvm_trecv(-1, 1, &tmo) > 0)
        got++;
    printf("got %d of %d (%d started)\n", got, n, started);
    pvm_exit();
    return got == n ? 0 : 1;
}
