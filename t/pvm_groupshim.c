/*  t/pvm_groupshim.c — a stand-in for the four PVM group calls PVM's ptest.c and bwtest.c
 *  make (pvm_joingroup, pvm_gettid, pvm_freezegroup, pvm_lvgroup), for running those
 *  examples under gimpirun before the group server exists.  The "group" is the job:
 *  instance = index of the task in pvm_siblings(), every member joined from the start,
 *  so gettid never has to wait.  Linked in front of libgimpi by t/pvm_examples.sh only
 *  while libgimpi itself lacks pvm_joingroup; it is our code, not PVM's.
 */
#include "pvm3.h"

#include <stddef.h>

/*  The caller's index among its siblings. */
int pvm_joingroup(char *group)
{
    int *tids = NULL, me = pvm_mytid();
    int n = pvm_siblings(&tids);
    (void)group;
    for (int i = 0; i < n; i++)
        if (tids[i] == me)
            return i;
    return PvmSysErr;
}

/*  Sibling number inst. */
int pvm_gettid(char *group, int inst)
{
    int *tids = NULL;
    int n = pvm_siblings(&tids);
    (void)group;
    return inst >= 0 && inst < n ? tids[inst] : PvmNoInst;
}

/*  Everybody is there from the start. */
int pvm_freezegroup(char *group, int size)
{
    (void)group;
    (void)size;
    return 0;
}

/*  Nothing to leave. */
int pvm_lvgroup(char *group)
{
    (void)group;
    return 0;
}
