/*  proctree.c — the processes a launcher owns on its host (see proctree.h): becoming a
 *  child subreaper, marking the tasks it starts, and listing the marked processes below it
 *  from /proc (every process's parent from /proc/PID/stat, then each descendant's
 *  environment for the mark and its GIMPI_TID).  Used by gimpirun for the job's tasks on
 *  its own host and by gimpi-agent for those on its host.
 */
#include "config.h"
#include "programs/proctree.h"
#include "base/gimpi_tunables.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define TAGGER_NAME "gimpi-tagger"  /* gimpi_spawn names its output taggers so */

/*  Makes us a child subreaper. */
int proctree_become_reaper(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : -1;
}

/*  Marks a child of launcher as the job's. */
void proctree_mark(pid_t launcher)
{
    char v[24];
    snprintf(v, sizeof v, "%d", (int)launcher);
    setenv(PROCTREE_ENV, v, 1);
}

/*  One process as /proc shows it. */
typedef struct {
    pid_t pid, ppid;
    int state;                  /* 0 unknown, 1 below us, 2 not */
    char comm[17];
} entry_t;

/*  Orders entries by pid. */
static int s_by_pid(const void *a, const void *b)
{
    pid_t x = ((const entry_t *)a)->pid, y = ((const entry_t *)b)->pid;
    return x < y ? -1 : x > y;
}

/*  Reads pid's parent and command name from /proc/PID/stat; 0 or -1 (it is gone). */
static int s_stat(pid_t pid, entry_t *e)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *open_ = strchr(buf, '('), *close_ = strrchr(buf, ')');
    int ppid;
    char state;
    if (!open_ || !close_ || close_ < open_ || sscanf(close_ + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    if (state == 'Z' || state == 'X')
        return -1;              /* ended: nothing to wait for or signal */
    size_t len = (size_t)(close_ - open_ - 1);
    if (len > sizeof e->comm - 1)
        len = sizeof e->comm - 1;
    memcpy(e->comm, open_ + 1, len);
    e->comm[len] = 0;
    e->pid = pid;
    e->ppid = ppid;
    e->state = 0;
    return 0;
}

/*  Every process /proc lists, sorted by pid: the count, or -1. */
static int s_all(entry_t **out)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int n = 0, cap = 0;
    entry_t *es = NULL;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            entry_t *m = realloc(es, (size_t)cap * sizeof *es);
            if (!m)
                break;
            es = m;
        }
        if (s_stat((pid_t)pid, &es[n]) == 0)
            n++;
    }
    closedir(d);
    if (n)
        qsort(es, (size_t)n, sizeof *es, s_by_pid);
    *out = es;
    return n;
}

/*  The entry of pid, or NULL. */
static entry_t *s_find(entry_t *es, int n, pid_t pid)
{
    entry_t key = { .pid = pid };
    return n ? bsearch(&key, es, (size_t)n, sizeof *es, s_by_pid) : NULL;
}

/*  1 when e is below me (and not below a skipped pid), from its ancestors. */
static int s_below(entry_t *es, int n, entry_t *e, pid_t me, const pid_t *skip, int nskip)
{
    if (e->state)
        return e->state == 1;
    int below = 0;
    for (int k = 0; k < nskip; k++)
        if (skip[k] == e->pid)
            goto done;
    if (e->ppid == me) {
        below = 1;
        goto done;
    }
    entry_t *p = e->ppid > 1 ? s_find(es, n, e->ppid) : NULL;
    below = p && p != e && s_below(es, n, p, me, skip, nskip);
done:
    e->state = below ? 1 : 2;
    return below;
}

/*  Reads pid's environment and finds the mark and GIMPI_TID: 1 when marked for me. */
static int s_environ(pid_t pid, pid_t me, int *tid)
{
    char **envp = gimpi_env_of_pid((int)pid);
    if (!envp)
        return 0;
    char mine[24];
    snprintf(mine, sizeof mine, "%d", (int)me);
    int marked = 0;
    *tid = 0;
    for (char **e = envp; *e; e++) {
        const char *v;
        if ((v = gimpi_env_entry(*e, PROCTREE_ENV)) && !strcmp(v, mine))
            marked = 1;
        else if ((v = gimpi_env_entry(*e, "GIMPI_TID")))
            *tid = atoi(v);
    }
    free(envp);
    return marked;
}

/*  1 when comm names a groupd (a per-user one a task started is not the job's). */
static int s_is_groupd(const char *comm)
{
    size_t n = strlen(comm);
    return n >= 6 && !strcmp(comm + n - 6, "groupd");
}

/*  Lists the job's processes below us. */
int proctree_list(const pid_t *skip, int nskip, proctree_proc_t **out)
{
    *out = NULL;
    entry_t *es = NULL;
    int n = s_all(&es);
    if (n < 0)
        return -1;
    pid_t me = getpid();
    proctree_proc_t *list = NULL;
    int count = 0;
    for (int i = 0; i < n; i++) {
        int tid;
        if (!s_below(es, n, &es[i], me, skip, nskip) || s_is_groupd(es[i].comm)
            || !s_environ(es[i].pid, me, &tid))
            continue;
        proctree_proc_t *m = realloc(list, (size_t)(count + 1) * sizeof *list);
        if (!m)
            break;
        list = m;
        proctree_proc_t *p = &list[count++];
        memset(p, 0, sizeof *p);
        p->pid = es[i].pid;
        p->ppid = es[i].ppid;
        p->tid = tid;
        p->helper = !strcmp(es[i].comm, TAGGER_NAME);
        snprintf(p->comm, sizeof p->comm, "%s", es[i].comm);
    }
    /* a GIMPI_TID inherited from the parent (a program a task ran) names the parent */
    bool *inherited = count ? calloc((size_t)count, sizeof *inherited) : NULL;
    for (int i = 0; inherited && i < count; i++)
        for (int k = 0; k < count; k++)
            if (list[k].pid == list[i].ppid && list[k].tid == list[i].tid)
                inherited[i] = true;
    for (int i = 0; i < count; i++)
        if ((inherited && inherited[i]) || list[i].helper)
            list[i].tid = 0;
    free(inherited);
    free(es);
    *out = list;
    return count;
}

/*  Signals the listed processes. */
void proctree_signal(const proctree_proc_t *list, int n, int sig)
{
    for (int i = 0; i < n; i++)
        if (!list[i].helper || sig == SIGKILL)
            kill(list[i].pid, sig);
}

/*  A process's name for messages. */
void proctree_name(const proctree_proc_t *p, char *buf, size_t size)
{
    if (p->tid > 0)
        snprintf(buf, size, "t%x", (unsigned)p->tid);
    else
        snprintf(buf, size, "pid %d (%s)", (int)p->pid, p->comm);
}
