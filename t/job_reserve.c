/*  t/job_reserve.c — a task of a gimpirun job that plays a holder of the key who has seen
 *  the job's tables (addresses and pids, which anyone on the hosts can see): it computes
 *  the job's identity key (gimpi_job_key) and sends RESERVE with it for as many tids as
 *  the job has.  "reserve found the job's block" when groupd answers with the job's own
 *  block (its token too: the tids could have been taken first), "reserve got another
 *  block" otherwise; "reserve failed E" on an error.  Exit 0 when a line was printed.
 */
#include "task/gimpi_job.h"
#include "gimpi.h"

#include <stdio.h>

int main(void)
{
    gimpi_job_t job;
    char err[512], key[GIMPI_JOB_KEY_SIZE], token[GIMPI_GROUPS_TOKEN_LEN + 1];
    if (gimpi_job_init(&job, 30000, err, sizeof err) < 0) {
        fprintf(stderr, "job_reserve: %s\n", err);
        return 99;
    }
    gimpi_job_key(job.tables, key);
    gimpi_groups_t *g = gimpi_groups_new(NULL, NULL);
    int base = g ? gimpi_groups_reserve_token(g, key, job.tables->nprocs, token) : GIMPI_ENOMEM;
    if (base < 0)
        printf("reserve failed %d\n", base);
    else
        printf("reserve %s (base %d, the job's %d)\n",
               base == job.tidbase ? "found the job's block" : "got another block", base,
               job.tidbase);
    gimpi_groups_destroy(&g);
    gimpi_job_fini(&job);
    return 0;
}
