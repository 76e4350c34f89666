/*  proctree.h — the processes a launcher owns on its host, private to gimpirun and
 *  gimpi-agent.
 *
 *  A launcher (gimpirun on its own host, gimpi-agent on another) makes itself a child
 *  subreaper, so every process its tasks start stays below it even when its parent ends:
 *  pvm_spawn's children (which a short-lived middle process leaves behind), and whatever
 *  those start.  Each task it starts carries the launcher's mark in its environment
 *  (PROCTREE_ENV=<launcher pid>), inherited by all it starts; a process below the launcher
 *  with that mark belongs to the job.  Processes below it without the mark (ssh's own
 *  helpers, a per-user groupd that a task started) are not the job's.
 */
#ifndef GIMPI_PROCTREE_H
#define GIMPI_PROCTREE_H

#include <stdbool.h>
#include <sys/types.h>

#define PROCTREE_ENV "GIMPI_JOB_PID"

/*  One process of the job below the launcher. */
typedef struct {
    pid_t pid;
    pid_t ppid;
    int tid;                    /* its GIMPI_TID when its parent has another, else 0 */
    bool helper;                /* a spawner's output tagger: ends with its task's output */
    char comm[17];              /* its command name */
} proctree_proc_t;

/*  Makes the calling process a child subreaper: orphans below it become its children.
 *  0, or -1 (errno) when the kernel refuses. */
int proctree_become_reaper(void);

/*  In a child just forked from the launcher: marks it (and all it will start) as the
 *  job's, for launcher pid `launcher`. */
void proctree_mark(pid_t launcher);

/*  The job's processes below the calling launcher, not counting the subtrees rooted at
 *  skip[0..nskip-1]: *out (malloc'ed, the caller frees; NULL when none) holds the count
 *  returned, or -1 when /proc cannot be read. */
int proctree_list(const pid_t *skip, int nskip, proctree_proc_t **out);

/*  Sends sig to every process of list (helpers only SIGKILL: they end by themselves once
 *  their task's output ends, and a SIGTERM would cut that output short). */
void proctree_signal(const proctree_proc_t *list, int n, int sig);

/*  Writes "t<hex tid>" or "pid N (comm)" for p into buf. */
void proctree_name(const proctree_proc_t *p, char *buf, size_t size);

#endif
