/*  t/job_task.c — a task for the launcher tests: takes its job over from gimpirun (or
 *  enrols alone), prints what it learned, then does what argv[1] says:
 *    info          print "rank R of N pktlen P ackmark A hiwater H clients C" and exit 0
 *    exit CODE     print the info line, exit with CODE
 *    kill          print the info line, SIGKILL itself
 *    wait          print the info line and "ready", then wait for a signal
 *    lines K       print K numbered lines without flushing in between, the last one
 *                  without a newline
 *    stdin         echo the first line of standard input
 *    cpus          print "cpus N on C bound B": how many CPUs it may run on, the first of
 *                  them, and GIMPI_BOUND (or -)
 *    cpuswait      the same, then "ready", then wait for a signal
 */
#include "task/gimpi_job.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    gimpi_job_t job;
    char err[512];
    if (gimpi_job_init(&job, 30000, err, sizeof err) < 0) {
        fprintf(stderr, "job_task: %s\n", err);
        return 99;
    }
    const char *what = argc > 1 ? argv[1] : "info";
    printf("rank %d of %d pktlen %u ackmark %u hiwater %u clients %d launched %d\n",
           job.world_rank, job.tables->nprocs, job.tables->pktlen, job.tables->ackmark,
           job.tables->hiwater, job.tables->nclients, job.launched);
    fflush(stdout);
    int rc = 0;
    if (!strcmp(what, "exit") && argc > 2)
        rc = atoi(argv[2]);
    else if (!strcmp(what, "kill"))
        raise(SIGKILL);
    else if (!strncmp(what, "cpus", 4)) {
        cpu_set_t set;
        int first = -1, n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
        for (int c = 0; n > 0 && c < CPU_SETSIZE && first < 0; c++)
            if (CPU_ISSET(c, &set))
                first = c;
        const char *b = getenv("GIMPI_BOUND");
        printf("cpus %d on %d bound %s\n", n, first, b ? b : "-");
        if (!strcmp(what, "cpuswait")) {
            printf("ready\n");
            fflush(stdout);
            pause();
        }
    }
    else if (!strcmp(what, "wait")) {
        printf("ready\n");
        fflush(stdout);
        pause();
    } else if (!strcmp(what, "lines") && argc > 2) {
        int k = atoi(argv[2]);
        for (int i = 0; i < k; i++)
            printf(i + 1 < k ? "line %d of rank %d\n" : "line %d of rank %d", i, job.world_rank);
    } else if (!strcmp(what, "stdin")) {
        char line[256];
        if (fgets(line, sizeof line, stdin))
            printf("stdin: %s", line);
    }
    gimpi_job_fini(&job);
    return rc;
}
