/*  run_jobfile.h — the run files of running gimpirun jobs (run_jobfile.c): how the
 *  console (gimpi) and gimpi-stat find a running job's groupd with no endpoint given, as
 *  PVM's console finds its virtual machine.  While a job runs, its gimpirun keeps the file
 *  jobs/PID in the user's private runtime directory (the one that holds the key: 0700,
 *  the file 0600) with the job's groupd endpoint, its hosts, where its key came from and
 *  its command; it removes the file at the job's end.  A reader lists the files of live
 *  gimpiruns (the pid runs and started when the file says) and removes the others, left
 *  by a gimpirun that was killed.
 */
#ifndef GIMPI_RUN_JOBFILE_H
#define GIMPI_RUN_JOBFILE_H

#include <stddef.h>

enum { RUN_JOB_MAX = 64 };          /* jobs a reader lists at most */

/*  One running job, as its run file says. */
typedef struct {
    int pid;                    /* its gimpirun */
    int nhosts;                 /* hosts of its virtual machine when it started */
    char ep[600];               /* its groupd's endpoint */
    char key[256];              /* the key file its gimpirun used, or "" (a descriptor) */
    char cmd[256];              /* its command line, shortened */
} run_job_t;

/*  Writes this gimpirun's run file: groupd endpoint ep (NULL: $GIMPI_GROUPD, else the
 *  per-user default), nhosts hosts, the key's origin
 *  keyfrom (gimpi_key_default's "from"), the command argv.  0, or -1 (nothing is said: a
 *  job runs without it). */
int run_jobfile_write(const char *ep, int nhosts, const char *keyfrom, char *const *argv);
/*  After a takeover: the job's groupd is now at ep (the run file written before says so
 *  from now on).  0, or -1 (no run file). */
int run_jobfile_endpoint(const char *ep);

/*  Removes this gimpirun's run file (at the job's end). */
void run_jobfile_remove(void);

/*  The running jobs into jobs[max] (oldest pid first); stale files are removed.  Their
 *  count, or -1 with a message in err when the runtime directory is not usable. */
int run_jobfile_list(run_job_t *jobs, int max, char *err, size_t errsize);

/*  For a tool (prog names it in messages; opt is its option that names a job, "-j") given
 *  no endpoint: the groupd of the running job, the one whose gimpirun has pid text `job`
 *  when that is not NULL.  1 with the endpoint in ep (and GIMPI_KEY_FILE set to the
 *  job's key file when no key was chosen), 0 when no job runs (the per-user default
 *  applies), -1 with a message on stderr (no such job, or several jobs with different
 *  groupds: they are listed, each with opt and its pid). */
int run_jobfile_pick(const char *prog, const char *opt, const char *job, char *ep,
                     size_t epsize);

/*  The socket of gimpirun pid's job (its run file's name with ".sock") into buf.  0 or
 *  -1. */
int run_jobfile_sockpath(int pid, char *buf, size_t size);

/*  Hands the gimpirun of the running job whose groupd is ep the collector fd of the
 *  catching task tid (run_catchfwd.h): the caught output of the tasks it spawns through
 *  that gimpirun comes to fd.  0, or -1 when no such job runs on this machine or it
 *  does not listen. */
int run_jobfile_offer_catch(const char *ep, int tid, int fd);

#endif
