/*  run_jobfile.c — the run files of running gimpirun jobs (run_jobfile.h): gimpirun writes
 *  one while its job runs, the console and gimpi-stat read them to find the job's groupd
 *  when no endpoint is given.  A file is a few "word value" lines:
 *
 *      gimpirun PID STARTTIME      (STARTTIME: /proc/PID/stat's, to tell a reused pid)
 *      endpoint tcp://10.0.0.1:40001
 *      hosts 3
 *      key /tmp/gimpi-0/key        (absent when the key came from a descriptor)
 *      command ./master 3
 *
 *  It is written under a temporary name and renamed into place, so a reader never sees
 *  half of one.  No secret is in it: the key file's path, never the key.
 */
#include "programs/run_jobfile.h"
#include "base/gimpi_key.h"
#include "base/gimpi_tunables.h"
#include "groups/gd_proto.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/*  The start time of process pid (clock ticks after boot, /proc/PID/stat's 22nd field),
 *  or 0 when it does not run. */
static unsigned long long s_starttime(int pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');        /* the command may hold blanks and parentheses */
    unsigned long long t = 0;
    /* p ends on the blank before field 22 (starttime); the one after ')' is field 3's */
    for (int field = 3; p && field <= 22; field++)
        p = strchr(p + 1, ' ');
    if (p && sscanf(p + 1, "%llu", &t) != 1)
        t = 0;
    return t;
}

/*  The folder of the run files into buf, made 0700 when missing.  0, or -1 (err). */
static int s_dir(char *buf, size_t size, char *err, size_t errsize)
{
    char rundir[GIMPI_KEY_PATHLEN];
    if (gimpi_rundir(rundir, sizeof rundir, err, errsize) < 0)
        return -1;
    int n = snprintf(buf, size, "%s/jobs", rundir);
    if (n <= 0 || (size_t)n >= size || (mkdir(buf, 0700) < 0 && errno != EEXIST)) {
        snprintf(err, errsize, "cannot make %s/jobs: %s", rundir, strerror(errno));
        return -1;
    }
    return 0;
}

/*  The run file of gimpirun pid, with suffix (the folder made when missing).  0, or -1. */
static int s_path(int pid, const char *suffix, char *buf, size_t size)
{
    char dir[GIMPI_KEY_PATHLEN + 8], err[GIMPI_KEY_ERRLEN];
    if (s_dir(dir, sizeof dir, err, sizeof err) < 0)
        return -1;
    int n = snprintf(buf, size, "%s/%d%s", dir, pid, suffix);
    return n <= 0 || (size_t)n >= size ? -1 : 0;
}

/*  This gimpirun's run file.  0, or -1. */
static int s_mine(char *buf, size_t size)
{
    return s_path((int)getpid(), "", buf, size);
}

/*  The socket of gimpirun pid's job (run_jobfile.h). */
int run_jobfile_sockpath(int pid, char *buf, size_t size)
{
    return s_path(pid, ".sock", buf, size);
}

/*  Writes this gimpirun's run file (run_jobfile.h). */
int run_jobfile_write(const char *ep, int nhosts, const char *keyfrom, char *const *argv)
{
    char path[GIMPI_KEY_PATHLEN + 32], tmp[GIMPI_KEY_PATHLEN + 40], buf[600];
    if (!ep && (ep = gimpi_env("GIMPI_GROUPD")) && !*ep)
        ep = NULL;
    if (!ep && !(ep = gd_default_endpoint(buf, sizeof buf, NULL, 0)))
        return -1;
    if (ep != buf && strchr(ep, ',')) {         /* a list: its first, the primary */
        snprintf(buf, sizeof buf, "%.*s", (int)strcspn(ep, ","), ep);
        ep = buf;
    }
    if (s_mine(path, sizeof path) < 0)
        return -1;
    snprintf(tmp, sizeof tmp, "%s.new", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    fprintf(f, "gimpirun %d %llu\nendpoint %s\nhosts %d\n", (int)getpid(),
            s_starttime((int)getpid()), ep, nhosts);
    /* a key file's absolute path (a descriptor, "GIMPI_KEY_FD=N", cannot be named) */
    char *key = keyfrom && strncmp(keyfrom, GIMPI_ENV_KEY_FD "=", sizeof GIMPI_ENV_KEY_FD)
                ? realpath(keyfrom, NULL) : NULL;
    if (key)
        fprintf(f, "key %s\n", key);
    free(key);
    fputs("command", f);
    for (int i = 0; argv && argv[i]; i++) {
        fputc(' ', f);
        for (const char *c = argv[i]; *c; c++)
            fputc(*c == '\n' ? ' ' : *c, f);     /* one line, whatever the arguments */
    }
    fputc('\n', f);
    if (fclose(f) != 0 || rename(tmp, path) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/*  Rewrites the endpoint line of this gimpirun's run file (run_jobfile.h).  0 or -1. */
int run_jobfile_endpoint(const char *ep)
{
    char path[GIMPI_KEY_PATHLEN + 32], tmp[GIMPI_KEY_PATHLEN + 40], line[1024];
    if (s_mine(path, sizeof path) < 0)
        return -1;
    FILE *in = fopen(path, "re");
    if (!in)
        return -1;
    snprintf(tmp, sizeof tmp, "%s.new", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    while (f && fgets(line, sizeof line, in))
        if (strncmp(line, "endpoint ", 9))
            fputs(line, f);
        else
            fprintf(f, "endpoint %s\n", ep);
    fclose(in);
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (fclose(f) != 0 || rename(tmp, path) < 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/*  Removes this gimpirun's run file (run_jobfile.h). */
void run_jobfile_remove(void)
{
    char path[GIMPI_KEY_PATHLEN + 32];
    if (s_mine(path, sizeof path) == 0)
        unlink(path);
}

/*  Reads run file path into job.  1 when its gimpirun runs, 0 when it is stale. */
static int s_read(const char *path, run_job_t *job)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    memset(job, 0, sizeof *job);
    char line[1024];
    unsigned long long start = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *v = strchr(line, ' ');
        if (!v)
            continue;
        *v++ = 0;
        if (!strcmp(line, "gimpirun") && sscanf(v, "%d %llu", &job->pid, &start) < 1)
            job->pid = 0;
        else if (!strcmp(line, "endpoint"))
            snprintf(job->ep, sizeof job->ep, "%s", v);
        else if (!strcmp(line, "hosts"))
            job->nhosts = atoi(v);
        else if (!strcmp(line, "key"))
            snprintf(job->key, sizeof job->key, "%s", v);
        else if (!strcmp(line, "command"))
            snprintf(job->cmd, sizeof job->cmd, "%s", v);
    }
    fclose(f);
    if (job->pid <= 0 || !job->ep[0] || (kill(job->pid, 0) < 0 && errno != EPERM))
        return 0;
    return start == 0 || s_starttime(job->pid) == start;
}

/*  Orders jobs by pid. */
static int s_by_pid(const void *a, const void *b)
{
    return ((const run_job_t *)a)->pid - ((const run_job_t *)b)->pid;
}

/*  The running jobs (run_jobfile.h). */
int run_jobfile_list(run_job_t *jobs, int max, char *err, size_t errsize)
{
    char dir[GIMPI_KEY_PATHLEN + 8];
    if (s_dir(dir, sizeof dir, err, errsize) < 0)
        return -1;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errsize, "cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        char path[sizeof dir + sizeof e->d_name + 2];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (pid > 0 && *end == '.' && kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            unlink(path);               /* the socket or half a file of a killed gimpirun */
        if (pid <= 0 || *end)           /* ".", "..", a file being written, a socket */
            continue;
        if (s_read(path, &jobs[n]) && jobs[n].pid == pid)
            n++;
        else {                          /* its gimpirun was killed: the files are stale */
            unlink(path);
            if (run_jobfile_sockpath((int)pid, path, sizeof path) == 0)
                unlink(path);
        }
    }
    closedir(d);
    qsort(jobs, (size_t)n, sizeof *jobs, s_by_pid);
    return n;
}

/*  Uses job: its endpoint into ep, its key file unless the caller chose a key.  1. */
static int s_use(const run_job_t *job, char *ep, size_t epsize)
{
    snprintf(ep, epsize, "%s", job->ep);
    const char *fd = gimpi_env(GIMPI_ENV_KEY_FD), *file = gimpi_env(GIMPI_ENV_KEY_FILE);
    if (job->key[0] && !(fd && *fd) && !(file && *file))
        setenv(GIMPI_ENV_KEY_FILE, job->key, 1);
    return 1;
}

/*  Lists jobs[n] on stderr, one "OPT PID" line each. */
static void s_list(const char *opt, const run_job_t *jobs, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(stderr, "  %s %-7d %s  %d host%s  %s\n", opt, jobs[i].pid, jobs[i].ep,
                jobs[i].nhosts, jobs[i].nhosts == 1 ? "" : "s", jobs[i].cmd);
}

/*  The running job's groupd for a tool given no endpoint (run_jobfile.h). */
int run_jobfile_pick(const char *prog, const char *opt, const char *job, char *ep,
                     size_t epsize)
{
    run_job_t *jobs = calloc(RUN_JOB_MAX, sizeof *jobs);
    char err[GIMPI_KEY_ERRLEN];
    int n = jobs ? run_jobfile_list(jobs, RUN_JOB_MAX, err, sizeof err) : -1;
    int rc = 0;
    if (n <= 0 && job) {
        fprintf(stderr, "%s: %s %s: %s\n", prog, opt, job, !jobs ? strerror(ENOMEM)
                : n < 0 ? err : "no gimpirun job runs");
        rc = -1;
    }
    if (n <= 0)
        goto out;
    if (job) {
        rc = -1;
        for (int i = 0; i < n && rc < 0; i++)
            if (jobs[i].pid == atoi(job))
                rc = s_use(&jobs[i], ep, epsize);
        if (rc < 0) {
            fprintf(stderr, "%s: %s %s: no gimpirun job of that pid runs; these do:\n", prog,
                    opt, job);
            s_list(opt, jobs, n);
        }
        goto out;
    }
    bool one = true;
    for (int i = 1; i < n; i++)
        one &= !strcmp(jobs[i].ep, jobs[0].ep);
    if (one) {
        rc = s_use(&jobs[0], ep, epsize);
        goto out;
    }
    fprintf(stderr, "%s: %d gimpirun jobs run, with different groupds: choose one with "
            "%s PID (or %s ENDPOINT)\n", prog, n, opt, opt[1] == '-' ? "--endpoint" : "-e");
    s_list(opt, jobs, n);
    rc = -1;
out:
    free(jobs);
    return rc;
}

/*  Hands a collector to the job's gimpirun (run_jobfile.h). */
int run_jobfile_offer_catch(const char *ep, int tid, int fd)
{
    run_job_t *jobs = calloc(RUN_JOB_MAX, sizeof *jobs);
    char err[GIMPI_KEY_ERRLEN];
    int n = jobs ? run_jobfile_list(jobs, RUN_JOB_MAX, err, sizeof err) : -1, rc = -1;
    for (int i = 0; i < n; i++) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (strcmp(jobs[i].ep, ep) != 0
            || run_jobfile_sockpath(jobs[i].pid, sa.sun_path, sizeof sa.sun_path) < 0)
            continue;
        int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        int32_t t = tid;
        char ctl[CMSG_SPACE(sizeof(int))] = { 0 };
        struct iovec iov = { &t, sizeof t };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                             .msg_controllen = sizeof ctl };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        /* gimpirun's byte says it holds the collector: what we spawn next is caught */
        struct timeval tv = { 2, 0 };
        char ack;
        if (s >= 0 && setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0
            && connect(s, (struct sockaddr *)&sa, sizeof sa) == 0
            && sendmsg(s, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof t && recv(s, &ack, 1, 0) == 1)
            rc = 0;
        if (s >= 0)
            close(s);
    }
    free(jobs);
    return rc;
}
