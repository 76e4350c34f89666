/*  taskcheck.h — the CHECK of the test tasks that run under gimpirun (t/pvm_job.c,
 *  t/job_tids.c): on a failed condition print "<who><id> FAIL line L: <message>" on stdout,
 *  where the test script finds it, and exit 1.
 */
#ifndef GIMPI_TASKCHECK_H
#define GIMPI_TASKCHECK_H

#include <stdio.h>
#include <stdlib.h>

#define TASK_CHECK(who, id, cond, ...)                                      \
    do {                                                                    \
        if (!(cond)) {                                                      \
            printf("%s%d FAIL line %d: ", who, id, __LINE__);               \
            printf(__VA_ARGS__);                                            \
            printf("\n");                                                   \
            fflush(stdout);                                                 \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

#endif
