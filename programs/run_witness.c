/*  run_witness.c — gimpirun as the witness of the job's groupds (groupd --witness,
 *  doc/reliability.md §3).  A primary whose standby fell silent asks to go on alone; a
 *  standby whose primary fell silent asks to take over.  Each asks with one line on its
 *  stdout, "groupd-witness: ask alone|takeover term N (why)", which reaches us through its
 *  host's agent or its pipe here, and the witness grants at most one of the two per term:
 *  the first that asks (SIGUSR1 to it).  In a partition only a groupd that still reaches
 *  gimpirun can ask, so only that side goes on; the other waits (a primary holding its
 *  replies, a standby following) until it is killed, fenced, or the network heals.  A
 *  primary granted to go on alone has its standby ended by the caller (SIGTERM): run_vm.c
 *  starts the next one when that end is seen, and a fresh standby starts a fresh
 *  arbitration.
 */
#include "config.h"
#include "programs/run_witness.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

/*  Sends the grant to the sender. */
static void s_grant(launcher_t *self, task_t *t, pid_t pid)
{
    if (t)
        run_hosts_kill(self, t, SIGUSR1);
    else if (pid > 0)
        kill(pid, SIGUSR1);
}

/*  Takes a question. */
int run_witness_line(launcher_t *self, task_t *t, pid_t pid, const char *line)
{
    char what[16];
    int term;
    if (sscanf(line, "groupd-witness: ask %15s term %d", what, &term) != 2)
        return 0;
    int want = !strcmp(what, "takeover") ? RUN_WIT_TAKEOVER
             : !strcmp(what, "alone") ? RUN_WIT_ALONE : RUN_WIT_NONE;
    if (want == RUN_WIT_NONE || term < self->wit_term)
        return 1;                       /* (unknown, or of a term that is over) */
    if (term > self->wit_term || self->wit_fresh) {
        self->wit_term = term;
        self->wit_grant = RUN_WIT_NONE;
        self->wit_said = false;
        self->wit_fresh = false;
    }
    if (self->wit_grant != RUN_WIT_NONE && self->wit_grant != want) {
        if (!self->wit_said)
            fprintf(stderr, "gimpirun: a groupd asks to %s at term %d: refused, the %s\n",
                    want == RUN_WIT_ALONE ? "go on without its standby" : "take over", term,
                    want == RUN_WIT_ALONE ? "standby was granted the takeover"
                                          : "primary was granted to go on alone");
        self->wit_said = true;
        return 1;
    }
    bool first = self->wit_grant == RUN_WIT_NONE;
    self->wit_grant = want;
    s_grant(self, t, pid);
    if (first)
        fprintf(stderr, "gimpirun: the job's groupd %s at term %d %s\n",
                want == RUN_WIT_ALONE ? "goes on without its standby"
                                      : "is taken over by its standby", term,
                strchr(line, '(') ? strchr(line, '(') : "");
    return want == RUN_WIT_ALONE ? 2 : 1;       /* (the standby's end starts the next) */
}
