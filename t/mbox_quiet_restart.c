/*  t/mbox_quiet_restart.c — the task of t/groupd_quiet_put.sh: a message-box put that goes
 *  without a reply (MBOX_PUTQ) to a groupd that never read it is sent again to the groupd
 *  restarted from its journal.  It enrols (a groupd started on first use, journaled),
 *  puts "q" = 1 at its own direct index 0, says "put1" and waits for a line on stdin (the
 *  script stops groupd meanwhile); puts "q" = 2 the same way (same size: the quiet put),
 *  says "put2" and waits for a line (the script kills the stopped groupd); then joins a
 *  group (a call groupd must answer: it reconnects, restarting groupd) and says "done".
 *  `mbox_quiet_restart read`, another task, reads "q" from groupd and prints "got N" (2
 *  when the quiet put was sent again after the restart).
 */
#include <pvm3.h>
#include <stdio.h>

/*  Puts value at q's direct index 0; the index or an error. */
static int s_put(int value)
{
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&value, 1, 1);
    return pvm_putinfo("q", pvm_getsbuf(), PvmMboxDefault | PvmMboxDirectIndex(0));
}

/*  Says what, then waits for a line on stdin. */
static void s_step(const char *what)
{
    char line[16];
    printf("%s\n", what);
    fflush(stdout);
    if (!fgets(line, sizeof line, stdin))
        line[0] = 0;
}

/*  Prints "got N": q's value as groupd has it. */
static int s_read(void)
{
    int got = -1, buf = pvm_recvinfo("q", 0, PvmMboxDefault);
    if (buf >= 0) {
        pvm_setrbuf(buf);
        pvm_upkint(&got, 1, 1);
    }
    printf("got %d (buf %d)\n", got, buf);
    pvm_exit();
    return got == 2 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (pvm_mytid() < 0)
        return 1;
    if (argc > 1 && argv[1][0] == 'r')
        return s_read();
    int rc = s_put(1);
    if (rc < 0) {
        printf("put1 failed %d\n", rc);
        return 1;
    }
    s_step("put1");
    rc = s_put(2);
    if (rc < 0) {
        printf("put2 failed %d\n", rc);
        return 1;
    }
    s_step("put2");
    int inst = pvm_joingroup("qp");
    printf("done (inst %d)\n", inst);
    s_step("read");
    pvm_exit();
    return inst >= 0 ? 0 : 1;
}
