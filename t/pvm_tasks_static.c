/*  pvm_tasks_static.c — a task of t/pvm_tasks_static.sh: right after enrolling it lists the
 *  virtual machine's tasks and prints how many of its job's static tasks (pvm_siblings)
 *  pvm_tasks showed, and how long the call took; with the argument "leave" it leaves
 *  (pvm_exit) at once instead, so the others list a sibling that has gone.  The listing
 *  tasks leave together (a group barrier of argv[1] tasks, default all), so each of them
 *  lists all the others.
 */
#include <pvm3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*  Seconds since an arbitrary start. */
static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*  Enrols, lists, counts the siblings listed; prints "seen K of N in T s". */
int main(int argc, char **argv)
{
    if (pvm_mytid() < 0)
        return 1;
    if (argc > 1 && !strcmp(argv[1], "leave")) {
        pvm_exit();
        return 0;
    }
    int *sib = NULL, nsib = pvm_siblings(&sib);
    double t0 = s_now();
    int n = 0;
    struct pvmtaskinfo *ti = NULL;
    if (pvm_tasks(0, &n, &ti) < 0)
        return 1;
    double dt = s_now() - t0;
    int seen = 0;
    for (int i = 0; i < nsib; i++)
        for (int k = 0; k < n; k++)
            seen += ti[k].ti_tid == sib[i];
    printf("seen %d of %d in %.1f s\n", seen, nsib, dt);
    fflush(stdout);
    /* nobody leaves before every task has listed */
    if (pvm_joingroup("pvm_tasks_static") < 0 || pvm_barrier("pvm_tasks_static", argc > 1 ? atoi(argv[1]) : nsib) < 0)
        return 1;
    pvm_exit();
    return 0;
}
