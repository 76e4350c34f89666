/*  fpvm_task.c — the Fortran binding's task calls (fpvm.h): pvmfmytid, pvmfparent,
 *  pvmfexit, pvmfkill, pvmfspawn, pvmfsiblings, pvmfcatchout, pvmfpstat, pvmftidtohost
 *  (and pvmftidtoh, its manual page's name), pvmfnotify, pvmfsendsig, pvmfsleep.  Each
 *  calls the C call and stores its result where PVM's libfpvm3 did.
 */
#include "fortran/fpvm.h"
#include "fortran/fpvm_str.h"
#include "pvm3.h"

#include <stdio.h>
#include <stdlib.h>

/*  This task's tid (enrols). */
void pvmfmytid_(int *tid)
{
    *tid = pvm_mytid();
}

/*  The spawner's tid or PvmNoParent. */
void pvmfparent_(int *tid)
{
    *tid = pvm_parent();
}

/*  Leaves PVM. */
void pvmfexit_(int *info)
{
    *info = pvm_exit();
}

/*  Kills task tid. */
void pvmfkill_(int *tid, int *info)
{
    *info = pvm_kill(*tid);
}

/*  Starts ntask copies of aout (no arguments: a Fortran program cannot pass any); `where`
 *  starting with '*' means anywhere, as in PVM, else it names the host or architecture
 *  that flag asks for (without its trailing blanks). */
void pvmfspawn_(char *aout, int *flag, char *where, int *ntask, int *tids, int *numt,
                size_t aout_len, size_t where_len)
{
    char *file = fpvm_str_in(aout, aout_len);
    char *at = where_len > 0 && where[0] == '*' ? fpvm_str_in("", 0)
                                                 : fpvm_str_in(where, where_len);
    if (file && at)
        *numt = pvm_spawn(file, NULL, *flag, at, *ntask, tids);
    else
        *numt = fpvm_fail("pvmfspawn", PvmNoMem);
    free(file);
    free(at);
}

/*  The number of siblings in *nsiblings and, for 0 <= *index < that number, the index'th
 *  sibling's tid in *stid (PvmNoTask for another index). */
void pvmfsiblings_(int *nsiblings, int *index, int *stid)
{
    int *tids = NULL;
    int n = pvm_siblings(&tids);
    *nsiblings = n;
    *stid = *index >= 0 && *index < n && tids ? tids[*index] : PvmNoTask;
}

/*  Catches the children's output on stdout (onoff not 0) or stops. */
void pvmfcatchout_(int *onoff, int *info)
{
    *info = pvm_catchout(*onoff ? stdout : NULL);
}

/*  PvmOk when tid is alive, else PvmNoTask (or an error). */
void pvmfpstat_(int *tid, int *status)
{
    *status = pvm_pstat(*tid);
}

/*  The host id of task tid. */
void pvmftidtohost_(int *tid, int *dtid)
{
    *dtid = pvm_tidtohost(*tid);
}

/*  pvmftidtohost under its manual page's name. */
void pvmftidtoh_(int *tid, int *dtid)
{
    *dtid = pvm_tidtohost(*tid);
}

/*  Asks for a message with msgtag when an event `what` happens (cnt tids for task exits). */
void pvmfnotify_(int *what, int *msgtag, int *cnt, int *tids, int *info)
{
    *info = pvm_notify(*what, *msgtag, *cnt, tids);
}

/*  Sends signal signum to task tid. */
void pvmfsendsig_(int *tid, int *signum, int *info)
{
    *info = pvm_sendsig(*tid, *signum);
}

/*  Sleeps secs seconds. */
void pvmfsleep_(int *secs)
{
    pvmsleep(*secs);
}
