/*  run_tasks.c — the launcher's tasks, on any host: their records, their life cycle from
 *  start to end, their output, the job's end.
 *
 *  A task on this machine is our child: its stdout and stderr are pipes read in the loop
 *  and forwarded line by line (-tag prefixes the world rank, or the tid of a spawned
 *  task, also of one a task spawned itself, whose tagger marks its lines; a spawner that
 *  catches output gets PVM's catchout format).  A task on another
 *  host is its agent's child, and run_hosts.c passes on what the agent says of it through
 *  the launcher's events.  Every end is counted here: a static task that fails fails the
 *  job, and the others get -grace seconds to end on their own before they are
 *  terminated (SIGTERM, then SIGKILL); once the static tasks have ended, what they left
 *  running (spawned tasks, the job's processes below us, proctree.h) gets the same grace.
 *  The loop stops when every task has ended, every pipe is drained and every agent's
 *  engine has exited.  What the virtual machine must learn of an end goes out through the
 *  events (task_gone).
 */
#include "config.h"
#include "programs/run_tasks.h"
#include "programs/run_hosts.h"
#include "programs/run_proc.h"
#include "programs/run_trace.h"
#include "programs/proctree.h"
#include "programs/run_catchfwd.h"
#include "task/gimpi_catch.h"
#include "task/gimpi_job.h"
#include "base/gimpi_tagout.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define LINE_MAX_BYTES 65536

/*  The life cycle's own state. */
struct run_life_t {
    int grace_timer;            /* armed after a failure, 0 = none */
    int kill_stage;             /* 0: grace, 1: SIGTERM sent, 2: SIGKILL sent */
    int nown;                   /* static tasks not yet ended */
    bool scan_due;              /* something ended since the last look at our processes */
    int nleft;                  /* processes of the job below us, not in tasks[] (last look) */
    int64_t own_ended_ms;       /* when the last static task ended */
    bool gave_up;               /* SIGKILL did not end everything: stop waiting */
};

/*  The life cycle's state for a new launcher; NULL when out of memory. */
run_life_t *run_life_new(void)
{
    return calloc(1, sizeof(run_life_t));
}

/*  Frees it; sets *self_p to NULL. */
void run_life_destroy(run_life_t **self_p)
{
    assert(self_p);
    free(*self_p);
    *self_p = NULL;
}

/*  A new task record (static or spawned) on host; NULL when out of memory. */
task_t *run_task_new(launcher_t *self, int host, char **argv, bool spawned)
{
    if (self->nall == self->cap) {
        int cap = self->cap ? self->cap * 2 : 16;
        task_t **ts = realloc(self->tasks, (size_t)cap * sizeof *ts);
        if (!ts)
            return NULL;
        self->tasks = ts;
        self->cap = cap;
    }
    task_t *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->self = self;
    t->id = self->nall;
    t->host = host;
    t->argv = argv;
    t->spawned = spawned;
    t->listen_fd = t->local_fd = t->go_fd = -1;
    t->out.fd = t->err.fd = -1;
    self->tasks[self->nall++] = t;
    self->nrunning++;
    if (!spawned)
        self->life->nown++;
    return t;
}

/*  Writes one line (with the task's tag) to gimpirun's own stream.  A line a spawner's
 *  tagger wrote (base/gimpi_tagout.h: it starts with the mark) carries the tag of the
 *  spawned task already: it goes out without the mark and without the spawner's tag, so
 *  that every task's lines have one tag, its own, on every host.  A mark inside a line
 *  (the spawner had written part of a line when its tagger wrote) starts a new one. */
void run_task_output(launcher_t *self, task_t *t, int which, const char *line, size_t len)
{
    FILE *to = which == 2 ? stderr : stdout;
    const char *m = len > 1 ? memchr(line + 1, GIMPI_TAGOUT_MARK, len - 1) : NULL;
    if (m) {                    /* a tagger's line after a piece of the spawner's own */
        run_task_output(self, t, which, line, (size_t)(m - line));
        run_task_output(self, t, which, m, len - (size_t)(m - line));
        return;
    }
    if (t->catchout
        && run_catchfwd_send(self->catchfwd, t->ptid, t->tid, CATCH_DATA, line, len) == 0)
        return;                 /* to the catching task (the console) on this machine */
    if (len && line[0] == GIMPI_TAGOUT_MARK) {
        fwrite(line + 1, 1, len - 1, to);
        fputc('\n', to);
        fflush(to);
        return;
    }
    if (t->catchout) {          /* PVM's catchout format, both streams on stdout */
        printf("[t%x] %.*s\n", (unsigned)t->tid, (int)len, line);
        fflush(stdout);
        return;
    }
    if (self->tag) {
        if (t->spawned)
            fprintf(to, "[t%x] ", (unsigned)t->tid);
        else
            fprintf(to, "[%d] ", t->world_rank);
    }
    fwrite(line, 1, len, to);
    fputc('\n', to);
    fflush(to);
}

/*  A caught task's "[t<hex tid>] BEGIN" or "EOF" line (PVM's catchout format). */
void run_task_catch_mark(task_t *t, const char *what)
{
    if (!t->catchout
        || run_catchfwd_send(t->self->catchfwd, t->ptid, t->tid,
                             strcmp(what, "EOF") ? CATCH_BEGIN : CATCH_EOF, NULL, 0) == 0)
        return;
    printf("[t%x] %s\n", (unsigned)t->tid, what);
    fflush(stdout);
}

/*  Reads what a local task wrote and forwards every complete line; EOF flushes the rest. */
static void s_drain(launcher_t *self, task_t *t, stream_t *s)
{
    if (!s->buf)
        s->buf = malloc(LINE_MAX_BYTES);
    ssize_t r = s->buf ? read(s->fd, s->buf + s->len, LINE_MAX_BYTES - s->len) : 0;
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        if (s->len)
            run_task_output(self, t, s->which, s->buf, s->len);
        s->len = 0;
        gimpi_loop_fd_del(self->loop, s->fd);
        close(s->fd);
        s->fd = -1;
        self->nstreams--;
        self->life->scan_due = true;      /* its last holder may have been a process of the job */
        free(s->buf);
        s->buf = NULL;
        if (t->exited && !t->start_err && t->out.fd < 0 && t->err.fd < 0)
            run_task_catch_mark(t, "EOF");
        return;
    }
    s->len += (size_t)r;
    size_t start = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->buf[i] == '\n') {
            run_task_output(self, t, s->which, s->buf + start, i - start);
            start = i + 1;
        }
    if (start == 0 && s->len == LINE_MAX_BYTES) {      /* an overlong line: cut it */
        run_task_output(self, t, s->which, s->buf, s->len);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/*  The job's processes below us that tasks[] does not track (pvm_spawn's children on
 *  this host, and what any task started), helpers included: how many are not helpers,
 *  with the list in *list and its length in *nlist when asked (the caller frees).  Cached
 *  in nleft. */
static int s_leftovers(launcher_t *self, proctree_proc_t **list, int *nlist)
{
    if (list)
        *list = NULL, *nlist = 0;
    if (!self->reaper)
        return self->life->nleft = 0;
    pid_t skip[self->nhosts + 2];
    int nskip = 0;
    for (int i = 0; i < self->nhosts; i++)
        if (self->hosts[i]->pid > 0)
            skip[nskip++] = self->hosts[i]->pid;        /* ssh or srun, and theirs */
    if (self->groupd_pid > 0)
        skip[nskip++] = self->groupd_pid;
    if (self->standby_pid > 0)
        skip[nskip++] = self->standby_pid;
    proctree_proc_t *ps;
    int n = proctree_list(skip, nskip, &ps), kept = 0, count = 0;
    for (int i = 0; i < n; i++) {
        bool tracked = false;
        for (int k = 0; k < self->nall && !tracked; k++) {
            task_t *t = self->tasks[k];
            tracked = !t->exited && t->pid == ps[i].pid && self->hosts[t->host]->local;
        }
        if (tracked)
            continue;
        ps[kept++] = ps[i];
        count += !ps[i].helper;
    }
    self->life->scan_due = false;
    if (list)
        *list = ps, *nlist = kept;
    else
        free(ps);
    return self->life->nleft = count;
}

/*  Sends sig to every task still running, on every host, and to the job's processes
 *  below us. */
void run_tasks_signal_all(launcher_t *self, int sig)
{
    for (int i = 0; i < self->nall; i++)
        run_hosts_kill(self, self->tasks[i], sig);
    proctree_proc_t *left;
    int n;
    s_leftovers(self, &left, &n);
    proctree_signal(left, n, sig);
    free(left);
}

static void s_arm_grace(launcher_t *self);

/*  The job failed: the others get the grace period. */
static void s_fail(launcher_t *self)
{
    self->failed = true;
    s_arm_grace(self);
}

/*  Stops the loop once every task has ended, every output pipe is drained and every
 *  agent's engine has exited.  Once the static tasks have ended, what they left running
 *  (spawned tasks on any host, the job's processes here) gets the grace period. */
void run_tasks_check_done(launcher_t *self)
{
    if (!self->loop || self->life->nown > 0)
        return;
    if (!self->life->gave_up) {
        if (self->life->scan_due)
            s_leftovers(self, NULL, NULL);
        if (self->life->nleft > 0 || self->nrunning > 0)
            s_arm_grace(self);          /* unless a failure armed it already */
        if (self->life->nleft > 0)
            return;
    }
    if (self->nrunning > 0 || self->nstreams > 0)
        return;
    if (run_trace_collect(self) > 0)
        return;                         /* -trace: the agents send their tasks' files first */
    for (int i = 0; i < self->nhosts; i++)
        run_hosts_quit(self, self->hosts[i]);
    if (!run_hosts_busy(self))
        gimpi_loop_stop(self->loop);
}

/*  A task ended (reaped here, or reported by its host's agent, or lost with its host). */
void run_task_ended(launcher_t *self, task_t *t, int status)
{
    if (t->exited)
        return;
    t->exited = true;
    t->status = status;
    self->life->scan_due = true;
    if (!t->spawned && --self->life->nown == 0)
        self->life->own_ended_ms = gimpi_loop_now_ms();
    if (t->started && !t->start_err && t->out.fd < 0 && t->err.fd < 0)
        run_task_catch_mark(t, "EOF");  /* else when its last stream closes */
    if (t->groupd) {
        self->ev->task_gone(self->ev->arg, t);
        return;
    }
    self->nrunning--;
    self->ev->task_gone(self->ev->arg, t);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && !t->start_err) {
        char who[64];
        if (t->spawned)
            snprintf(who, sizeof who, "spawned task t%x", (unsigned)t->tid);
        else
            snprintf(who, sizeof who, "task %d", t->world_rank);
        const char *host = self->multihost ? self->hosts[t->host]->info.name : NULL;
        if (WIFEXITED(status))
            fprintf(stderr, "gimpirun: %s (%s, pid %d%s%s) exited with status %d\n", who,
                    t->argv[0], (int)t->pid, host ? " on " : "", host ? host : "",
                    WEXITSTATUS(status));
        else
            fprintf(stderr, "gimpirun: %s (%s, pid %d%s%s) killed by signal %d (%s)\n", who,
                    t->argv[0], (int)t->pid, host ? " on " : "", host ? host : "",
                    WTERMSIG(status), strsignal(WTERMSIG(status)));
    }
    if (!ok && !t->spawned && !self->hosts[t->host]->deleted)
        s_fail(self);   /* (pvm_delhosts ending a host's tasks is no failure) */
    run_tasks_check_done(self);
}

/*  Reaps finished children: local tasks, agents' engines, our groupd. */
void run_tasks_reap(launcher_t *self)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        bool mine = false;
        self->life->scan_due = true;          /* (also a process of the job that we adopted) */
        for (int i = 0; i < self->nall && !mine; i++) {
            task_t *t = self->tasks[i];
            if (t->pid == pid && self->hosts[t->host]->local && !t->exited) {
                mine = true;
                run_task_ended(self, t, status);
            }
        }
        if (!mine && pid == self->groupd_pid) {
            self->groupd_pid = 0;
            self->ev->groupd_died(self->ev->arg, status);   /* (restarted, or said) */
        } else if (!mine && pid == self->standby_pid) {
            self->standby_pid = 0;
            self->ev->standby_died(self->ev->arg, pid, status);
        } else if (!mine)
            run_hosts_reaped(self, pid, status);
    }
    run_tasks_check_done(self);
}

/*  Says which tasks the job's end is about to end: the remaining ones after a failure, or
 *  those the static tasks left running when the grace period ran out after they ended. */
static void s_say_ending(launcher_t *self)
{
    int n = self->nrunning + self->life->nleft;
    if (self->life->nown > 0) {
        fprintf(stderr, "gimpirun: terminating the %d remaining task%s\n", n, n == 1 ? "" : "s");
        return;
    }
    char names[1024] = "", one[64];
    size_t len = 0;
    int shown = 0;
    proctree_proc_t *left;
    int nl;
    s_leftovers(self, &left, &nl);
    for (int i = 0; i < self->nall + nl && len < sizeof names - 80; i++) {
        if (i < self->nall) {
            task_t *t = self->tasks[i];
            if (t->exited || t->groupd)
                continue;
            snprintf(one, sizeof one, "t%x", (unsigned)t->tid);
        } else if (!left[i - self->nall].helper)
            proctree_name(&left[i - self->nall], one, sizeof one);
        else
            continue;
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", shown ? " " : "", one);
        shown++;
    }
    free(left);
    n = self->nrunning + self->life->nleft;
    if (shown < n)
        snprintf(names + len, sizeof names - len, " ...");
    int64_t after = (gimpi_loop_now_ms() - self->life->own_ended_ms + 500) / 1000;
    fprintf(stderr, "gimpirun: %d spawned task%s still running %d s after the job's own tasks "
            "ended: ending %s (%s)\n", n, n == 1 ? "" : "s", (int)after,
            n == 1 ? "it" : "them", names);
    self->ended_leftovers = true;
}

/*  Grace period over: SIGTERM the rest, then SIGKILL two seconds later. */
static void s_on_grace(gimpi_loop_t *loop, int id, void *arg)
{
    (void)id;
    launcher_t *self = arg;
    self->life->grace_timer = 0;
    s_leftovers(self, NULL, NULL);
    if (self->nrunning == 0 && self->life->nleft == 0) {
        run_tasks_check_done(self);
        return;
    }
    if (self->life->kill_stage >= 2) {        /* SIGKILL 5 s ago: what still runs is unreachable */
        self->life->gave_up = true;
        run_hosts_give_up(self);
        run_tasks_check_done(self);
        return;
    }
    if (self->life->kill_stage == 0)
        s_say_ending(self);
    run_life_t *l = self->life;
    run_tasks_signal_all(self, l->kill_stage == 0 ? SIGTERM : SIGKILL);
    l->kill_stage++;
    l->grace_timer = gimpi_loop_timer_add(loop, l->kill_stage < 2 ? 2000 : 5000, 0, s_on_grace,
                                          self);
}

/*  After a failure: the others get the grace period, once. */
static void s_arm_grace(launcher_t *self)
{
    run_life_t *l = self->life;
    if (self->loop && !l->grace_timer && l->kill_stage == 0
        && (self->nrunning > 0 || l->nleft > 0 || l->scan_due))
        l->grace_timer = gimpi_loop_timer_add(self->loop, (int64_t)self->grace_s * 1000, 0,
                                              s_on_grace, self);
}

/*  A local task wrote something (or closed its end). */
static void s_on_output(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)fd, (void)events;
    stream_t *s = arg;
    s_drain(s->task->self, s->task, s);
    run_tasks_check_done(s->task->self);
}

/*  Reads a local task's stdout and stderr (the read ends out and err) in the loop. */
static void s_watch_output(launcher_t *self, task_t *t, int out, int err)
{
    t->out = (stream_t){ .task = t, .fd = out, .which = 1 };
    t->err = (stream_t){ .task = t, .fd = err, .which = 2 };
    gimpi_loop_fd_add(self->loop, t->out.fd, GIMPI_LOOP_READ, s_on_output, &t->out);
    gimpi_loop_fd_add(self->loop, t->err.fd, GIMPI_LOOP_READ, s_on_output, &t->err);
    self->nstreams += 2;
}

/*  SIGCHLD reaps; SIGINT, SIGTERM and SIGHUP are forwarded and fail the job. */
static void s_on_signal(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)events;
    launcher_t *self = arg;
    struct signalfd_siginfo si;
    while (read(fd, &si, sizeof si) == (ssize_t)sizeof si) {
        if (si.ssi_signo == SIGCHLD)
            continue;
        run_tasks_signal_all(self, (int)si.ssi_signo);
        s_fail(self);
    }
    run_tasks_reap(self);               /* SIGCHLDs coalesce: reaping is idempotent */
}

/*  Starts local static task t: it inherits its listening socket, the tables memfd and the
 *  go pipe. */
int run_tasks_start_local(launcher_t *self, task_t *t, int tables_fd)
{
    int out[2], err[2], go[2];
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
        fprintf(stderr, "gimpirun: pipe: %s\n", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t launcher = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gimpirun: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        run_child_start(launcher, SIGKILL);   /* the job does not outlive its launcher */
        proctree_mark(launcher);
        dup2(out[1], 1);
        dup2(err[1], 2);
        if (t->id != 0) {       /* only the first task reads gimpirun's stdin */
            int null = open("/dev/null", O_RDONLY);
            if (null >= 0)
                dup2(null, 0);
        }
        /* the hand-over descriptors survive exec */
        fcntl(t->listen_fd, F_SETFD, 0);
        fcntl(tables_fd, F_SETFD, 0);
        fcntl(go[0], F_SETFD, 0);
        char v[32];
        snprintf(v, sizeof v, "%d", t->listen_fd);
        setenv(GIMPI_ENV_LISTEN_FD, v, 1);
        if (t->local_fd >= 0) {
            fcntl(t->local_fd, F_SETFD, 0);
            snprintf(v, sizeof v, "%d", t->local_fd);
            setenv(GIMPI_ENV_LOCAL_LISTEN_FD, v, 1);
        }
        snprintf(v, sizeof v, "%d", tables_fd);
        setenv(GIMPI_ENV_TABLES_FD, v, 1);
        snprintf(v, sizeof v, "%d", go[0]);
        setenv(GIMPI_ENV_GO_FD, v, 1);
        snprintf(v, sizeof v, "%d", self->client_rank < 0 ? 0 : self->client_rank);
        setenv(GIMPI_ENV_CLIENT, v, 1);
        snprintf(v, sizeof v, "%d", t->id);
        setenv(GIMPI_ENV_LOCAL, v, 1);
        if (gimpi_hostset_size(self->hostset) > 0)     /* its name in the virtual machine */
            setenv(GIMPI_ENV_HOST, self->hosts[t->host]->info.name, 1);
        if (self->hosts[t->host]->info.ep[0])   /* this host's ep=, as on the others */
            setenv("GIMPI_PATH", self->hosts[t->host]->info.ep, 1);
        gimpi_bind_child(self->bind, t->core);
        gimpi_job_exec(t->argv);
        fprintf(stderr, "gimpirun: cannot run %s: %s\n", t->argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    close(go[0]);
    t->pid = pid;
    t->go_fd = go[1];
    s_watch_output(self, t, out[0], err[0]);
    return 0;
}

/*  Starts a spawned task t on this host as our child: its output comes through us, its
 *  environment is ours plus env, its directory wd.  0, or -1 with the slot's error in
 *  *code (GIMPI_ENOFILE when the program cannot be run). */
int run_tasks_start_spawned(launcher_t *self, task_t *t, char **env, const char *wd, int *code)
{
    int out[2], err[2], ep[2];
    *code = GIMPI_EOUTOFRES;
    if (pipe2(out, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(err, O_CLOEXEC) < 0) {
        close(out[0]), close(out[1]);
        return -1;
    }
    if (pipe2(ep, O_CLOEXEC) < 0) {
        close(out[0]), close(out[1]), close(err[0]), close(err[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t launcher = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        run_child_start(launcher, SIGKILL);
        proctree_mark(launcher);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        for (char **e = env; e && *e; e++)
            putenv(*e);
        int e = 0;
        char path[PATH_MAX + 256], tried[2048];
        const char *host = self->hosts[t->host]->info.name;
        if (wd && *wd && chdir(wd) < 0) {   /* said on our stderr, still gimpirun's */
            fprintf(stderr, "gimpirun: cannot enter working directory %s on host %s: %s\n",
                    wd, host, strerror(errno));
            e = ENOTDIR;
        } else if ((e = run_find_spawned(t->argv[0], path, sizeof path, tried, sizeof tried)))
            fprintf(stderr, "gimpirun: no program %s on host %s: looked for %s; PATH is not "
                    "searched, as in PVM\n", t->argv[0], host, tried);
        else {
            int olderr = fcntl(2, F_DUPFD_CLOEXEC, 3);
            dup2(out[1], 1);
            dup2(err[1], 2);
            execv(path, t->argv);
            e = errno;
            if (olderr >= 0)
                dup2(olderr, 2);
            fprintf(stderr, "gimpirun: cannot run %s on host %s: %s\n", t->argv[0], host,
                    strerror(e));
        }
        if (write(ep[1], &e, sizeof e) < 0)
            _exit(126);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    close(ep[1]);
    int e = 0;
    ssize_t r = -1;
    if (pid > 0)
        do
            r = read(ep[0], &e, sizeof e);
        while (r < 0 && errno == EINTR);
    close(ep[0]);
    if (pid < 0 || r == (ssize_t)sizeof e) {
        if (pid > 0)
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        close(out[0]);
        close(err[0]);
        *code = pid > 0 && e != EAGAIN && e != ENOMEM ? GIMPI_ENOFILE : GIMPI_EOUTOFRES;
        return -1;
    }
    t->pid = pid;
    t->started = true;
    s_watch_output(self, t, out[0], err[0]);
    return 0;
}

/*  Watches the signal descriptor in the loop: SIGCHLD reaps, the others are forwarded. */
void run_tasks_watch_signals(launcher_t *self)
{
    assert(self);
    gimpi_loop_fd_add(self->loop, self->sigfd, GIMPI_LOOP_READ, s_on_signal, self);
}

/*  Frees every task record (the loop is gone by now). */
void run_tasks_free(launcher_t *self)
{
    assert(self);
    for (int i = 0; i < self->nall; i++) {
        task_t *t = self->tasks[i];
        free(t->out.buf);
        free(t->err.buf);
        if (t->spawned) {
            for (char **a = t->argv; a && *a; a++)
                free(*a);
            free(t->argv);
        }
        free(t);
    }
    free(self->tasks);
    self->tasks = NULL;
    self->nall = self->cap = 0;
}
