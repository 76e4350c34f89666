/*  gimpirun.c — the launcher: one gimpirun is one IMPI client, and the manager of the
 *  virtual machine its hosts make up.
 *
 *  gimpirun [options] [-H HOSTS | -hostfile F] [-np N] prog [args] [: -np M prog2 [args]]...
 *  gimpirun [options] -client RANK HOST:PORT -np N prog [args]...
 *
 *  Every task is its own IMPI host.  Tasks on this machine get a listening socket made
 *  here; tasks on other hosts (the host set: -H, -hostfile, or the Slurm allocation) get
 *  theirs from the host's agent (run_hosts.c).  Every task waits for the go byte (see
 *  libgimpi/task/gimpi_job.h) while gimpirun performs the IMPI startup with their real
 *  addresses, ports and pids — locally for a single-client job, through impi-server with
 *  -client — reserves the job's tids in groupd (RESERVE keyed by the job's identity, so
 *  every client of the job gets the same block), and hands every task the tables and the
 *  tid base.  A job on several hosts gets a groupd every host can reach (started here
 *  unless GIMPI_GROUPD names one), and gimpirun serves the tasks' requests to the virtual
 *  machine through it (run_vm.c: pvm_spawn onto any host, pvm_addhosts ...).  Each task's
 *  stdout and stderr are forwarded line by line (-tag prefixes the world rank, or the tid
 *  of a spawned task), SIGINT/SIGTERM/SIGHUP are forwarded, and gimpirun exits non-zero
 *  naming every task that failed.  When a task dies abnormally the others get -grace
 *  seconds to end on their own before they are terminated: a job never hangs.  After the
 *  last task it sends FINI to the server.  One poll() loop owns every descriptor.
 */
#include "config.h"
#include "programs/gimpirun.h"
#include "programs/proctree.h"
#include "base/gimpi_key.h"
#include "net/gimpi_host.h"
#include "task/gimpi_job.h"
#include "impi/impi_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 65536
#define MAX_TASKS 4096


/*  The synopsis. */
static void s_usage(FILE *to)
{
    fprintf(to,
        "usage: gimpirun [options] [-np N] prog [args] [: -np M prog2 [args]]...\n"
        "       gimpirun [options] -client RANK HOST:PORT -np N prog [args]...\n"
        "options:\n"
        "  -H HOST[:SLOTS],...  hosts of the job (tasks go round-robin in slot order)\n"
        "  -hostfile F     hosts from a PVM hostfile (ep= wd= lo= dx= ip= sp= slots= &)\n"
        "                  (inside a Slurm allocation, without -H or -hostfile: its nodes)\n"
        "  -if NAME|CIDR   network of the job: the address this host announces\n"
        "  -groupd HOST    run the job's groupd on HOST (default: this host)\n"
        "  -gport P        groupd's request port (its event port is P+1; default: any)\n"
        "  -agent PATH     gimpi-agent's path on the other hosts (default: beside gimpirun)\n"
        "  -tag            prefix every output line with the task's world rank (and the\n"
        "                  lines of tasks they spawn with [t<hex tid>]: GIMPI_TAG=1)\n"
        "  -host ADDR      IPv4 address this host's tasks listen on and announce\n"
        "                  (default 127.0.0.1 alone, else the address that reaches the others)\n"
        "  -datalen B      packet data length this client offers (default %d)\n"
        "  -ackmark A      flow-control ack mark offered (default %d)\n"
        "  -hiwater H      flow-control high-water mark offered (default %d)\n"
        "  -tagub T        largest tag offered (default 2147483647)\n"
        "  -grace S        seconds the others get after a task failed, and the tasks\n"
        "                  spawned after the job's own tasks ended (default 10)\n"
        "  -timeout S      bound on the startup (default 60)\n",
        GIMPI_DEFAULT_DATALEN, GIMPI_DEFAULT_ACKMARK, GIMPI_DEFAULT_HIWATER);
}

/*  A positive integer option value, or exit 2. */
static long s_num(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || n < lo || n > hi) {
        fprintf(stderr, "gimpirun: %s needs a number in %ld..%ld\n", opt, lo, hi);
        exit(2);
    }
    return n;
}

/*  An option's string value, or exit 2. */
static const char *s_str(const char *opt, int *i, int argc, char **argv)
{
    if (*i + 1 >= argc || !argv[*i + 1][0]) {
        fprintf(stderr, "gimpirun: %s needs a value\n", opt);
        exit(2);
    }
    return argv[++*i];
}

/*  In a child just forked from gimpirun: default signal mask and SIGPIPE, and deathsig
 *  when gimpirun dies (nothing it starts outlives it); exits at once when gimpirun died
 *  before that was set. */
void run_child_start(pid_t launcher, int deathsig)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, deathsig);
    if (getppid() != launcher)
        _exit(127);
}

/*  The path of program name in gimpirun's own directory (as installed, or in the build
 *  tree): 0, or -1 when that directory cannot be known. */
int run_beside_me(const char *name, char *out, size_t size)
{
    char me[PATH_MAX - 64];
    ssize_t n = readlink("/proc/self/exe", me, sizeof me - 1);
    char *slash = n > 0 ? (me[n] = 0, strrchr(me, '/')) : NULL;
    if (!slash)
        return -1;
    *slash = 0;
    snprintf(out, size, "%s/%s", me, name);
    return 0;
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
        self->nown++;
    return t;
}

/*  Parses the command line into options and tasks; exits 2 on errors. */
static void s_parse(launcher_t *self, int argc, char **argv)
{
    int i = 1;
    self->client_rank = -1;
    self->datalen = GIMPI_DEFAULT_DATALEN;
    self->ackmark = GIMPI_DEFAULT_ACKMARK;
    self->hiwater = GIMPI_DEFAULT_HIWATER;
    self->tagub = 0x7fffffff;
    self->grace_s = 10;
    self->timeout_s = 60;
    self->hostset = gimpi_hostset_new();
    if (!self->hostset) {
        fprintf(stderr, "gimpirun: out of memory\n");
        exit(1);
    }
    char err[512];
    bool hosts_given = false;
    int nprogs = 0, np_given = 0;
    for (;;) {
        int np = 1;
        bool has_np = false;
        /* options (global ones may appear before any program) */
        while (i < argc && argv[i][0] == '-') {
            const char *o = argv[i];
            if (!strcmp(o, "-np") || !strcmp(o, "-n")) {
                np = (int)s_num(o, i + 1 < argc ? argv[++i] : NULL, 1, MAX_TASKS);
                has_np = true;
            } else if (!strcmp(o, "-tag")) {
                self->tag = true;
                setenv("GIMPI_TAG", "1", 1);   /* tasks tag what they spawn (pvm_spawn) */
            }
            else if (!strcmp(o, "-client")) {
                if (i + 2 >= argc) {
                    fprintf(stderr, "gimpirun: -client needs RANK HOST:PORT\n");
                    exit(2);
                }
                self->client_rank = (int)s_num(o, argv[++i], 0, IMPI_MAX_CLIENTS - 1);
                self->server = argv[++i];
            } else if (!strcmp(o, "-host"))
                self->host = s_str(o, &i, argc, argv);
            else if (!strcmp(o, "-H") || !strcmp(o, "-hosts")) {
                if (gimpi_hostset_add_list(self->hostset, s_str(o, &i, argc, argv), err,
                                           sizeof err) < 0) {
                    fprintf(stderr, "gimpirun: -H: %s\n", err);
                    exit(2);
                }
                hosts_given = true;
            } else if (!strcmp(o, "-hostfile") || !strcmp(o, "-machinefile")) {
                if (gimpi_hostset_add_file(self->hostset, s_str(o, &i, argc, argv), err,
                                           sizeof err) < 0) {
                    fprintf(stderr, "gimpirun: %s\n", err);
                    exit(2);
                }
                hosts_given = true;
            } else if (!strcmp(o, "-if"))
                self->ifspec = s_str(o, &i, argc, argv);
            else if (!strcmp(o, "-groupd"))
                self->groupd_host = s_str(o, &i, argc, argv);
            else if (!strcmp(o, "-gport"))
                self->groupd_port = (int)s_num(o, i + 1 < argc ? argv[++i] : NULL, 1, 65534);
            else if (!strcmp(o, "-agent"))
                self->agent = s_str(o, &i, argc, argv);
            else if (!strcmp(o, "-datalen"))
                self->datalen = (uint32_t)s_num(o, i + 1 < argc ? argv[++i] : NULL, 1, 1 << 30);
            else if (!strcmp(o, "-ackmark"))
                self->ackmark = (uint32_t)s_num(o, i + 1 < argc ? argv[++i] : NULL, 1, 1 << 20);
            else if (!strcmp(o, "-hiwater"))
                self->hiwater = (uint32_t)s_num(o, i + 1 < argc ? argv[++i] : NULL, 1, 1 << 20);
            else if (!strcmp(o, "-tagub"))
                self->tagub = (int32_t)s_num(o, i + 1 < argc ? argv[++i] : NULL, 32767, 0x7fffffff);
            else if (!strcmp(o, "-grace"))
                self->grace_s = (int)s_num(o, i + 1 < argc ? argv[++i] : NULL, 0, 86400);
            else if (!strcmp(o, "-timeout"))
                self->timeout_s = (int)s_num(o, i + 1 < argc ? argv[++i] : NULL, 1, 86400);
            else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
                s_usage(stdout);
                exit(0);
            } else {
                fprintf(stderr, "gimpirun: unknown option %s\n", o);
                s_usage(stderr);
                exit(2);
            }
            i++;
        }
        if (i >= argc) {
            fprintf(stderr, "gimpirun: no program to run\n");
            s_usage(stderr);
            exit(2);
        }
        char **prog = &argv[i];
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
        bool more = i < argc;
        if (more)
            argv[i++] = NULL;   /* terminates this program's argv */
        if (self->ntasks + np > MAX_TASKS) {
            fprintf(stderr, "gimpirun: at most %d tasks\n", MAX_TASKS);
            exit(2);
        }
        nprogs++;
        np_given += has_np;
        for (int k = 0; k < np; k++)
            if (!run_task_new(self, 0, prog, false)) {
                fprintf(stderr, "gimpirun: out of memory\n");
                exit(1);
            }
        self->ntasks = self->nall;
        if (!more)
            break;
    }
    if (gimpi_bind_check_env(err, sizeof err) < 0) {
        fprintf(stderr, "gimpirun: %s\n", err);
        exit(2);
    }
    if (self->ackmark > self->hiwater) {
        fprintf(stderr, "gimpirun: -ackmark %u is above -hiwater %u\n", self->ackmark, self->hiwater);
        exit(2);
    }
    /* inside a Slurm allocation and without host flags, the allocation is the host set */
    const char *use = getenv("GIMPI_SLURM");
    if (!hosts_given && self->client_rank < 0 && !(use && !strcmp(use, "0"))) {
        int n = gimpi_hostset_add_slurm(self->hostset, NULL, NULL, err, sizeof err);
        if (n < 0) {
            fprintf(stderr, "gimpirun: Slurm allocation: %s\n", err);
            exit(2);
        }
        self->slurm = n > 0;
        hosts_given = n > 0;
    }
    if (hosts_given && self->client_rank >= 0) {
        fprintf(stderr, "gimpirun: -client takes no host set (each client is on one host)\n");
        exit(2);
    }
    /* one program without -np over a host set: one task per slot, as mpirun does */
    if (hosts_given && nprogs == 1 && np_given == 0) {
        int slots = gimpi_hostset_total_slots(self->hostset);
        for (int k = 1; k < slots && self->nall < MAX_TASKS; k++)
            run_task_new(self, 0, self->tasks[0]->argv, false);
        self->ntasks = self->nall;
    }
}

/*  Writes one line (with the task's tag) to gimpirun's own stream. */
void run_task_output(launcher_t *self, task_t *t, int which, const char *line, size_t len)
{
    FILE *to = which == 2 ? stderr : stdout;
    if (t->groupd) {            /* the job's groupd on another host: its endpoint, or news */
        if (!run_vm_groupd_line(self, t, line, len))
            fprintf(stderr, "gimpirun: groupd on %s: %.*s\n", self->hosts[t->host]->info.name,
                    (int)len, line);
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
    if (!t->catchout)
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
        self->scan_due = true;      /* its last holder may have been a process of the job */
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
        return self->nleft = 0;
    pid_t skip[self->nhosts + 1];
    int nskip = 0;
    for (int i = 0; i < self->nhosts; i++)
        if (self->hosts[i]->pid > 0)
            skip[nskip++] = self->hosts[i]->pid;        /* ssh or srun, and theirs */
    if (self->groupd_pid > 0)
        skip[nskip++] = self->groupd_pid;
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
    self->scan_due = false;
    if (list)
        *list = ps, *nlist = kept;
    else
        free(ps);
    return self->nleft = count;
}

/*  Sends sig to every task still running, on every host, and to the job's processes
 *  below us. */
static void s_signal_all(launcher_t *self, int sig)
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

/*  Stops the loop once every task has ended, every output pipe is drained and every
 *  agent's engine has exited.  Once the static tasks have ended, what they left running
 *  (spawned tasks on any host, the job's processes here) gets the grace period. */
void run_check_done(launcher_t *self)
{
    if (!self->loop || self->nown > 0)
        return;
    if (!self->gave_up) {
        if (self->scan_due)
            s_leftovers(self, NULL, NULL);
        if (self->nleft > 0 || self->nrunning > 0)
            s_arm_grace(self);          /* unless a failure armed it already */
        if (self->nleft > 0)
            return;
    }
    if (self->nrunning > 0 || self->nstreams > 0)
        return;
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
    self->scan_due = true;
    if (!t->spawned && --self->nown == 0)
        self->own_ended_ms = gimpi_loop_now_ms();
    if (t->started && !t->start_err && t->out.fd < 0 && t->err.fd < 0)
        run_task_catch_mark(t, "EOF");  /* else when its last stream closes */
    if (t->groupd) {
        run_vm_task_ended(self, t);
        return;
    }
    self->nrunning--;
    run_vm_task_ended(self, t);
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
        run_fail(self);                 /* (pvm_delhosts ending a host's tasks is no failure) */
    run_check_done(self);
}

/*  The job failed: the others get the grace period. */
void run_fail(launcher_t *self)
{
    self->failed = true;
    s_arm_grace(self);
}

/*  Reaps finished children: local tasks, agents' engines, our groupd. */
static void s_reap(launcher_t *self)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        bool mine = false;
        self->scan_due = true;          /* (also a process of the job that we adopted) */
        for (int i = 0; i < self->nall && !mine; i++) {
            task_t *t = self->tasks[i];
            if (t->pid == pid && self->hosts[t->host]->local && !t->exited) {
                mine = true;
                run_task_ended(self, t, status);
            }
        }
        if (!mine && pid == self->groupd_pid) {
            self->groupd_pid = 0;
            if (self->nrunning > 0)
                fprintf(stderr, "gimpirun: the job's groupd ended while the job runs\n");
        } else if (!mine)
            run_hosts_reaped(self, pid, status);
    }
    run_check_done(self);
}

/*  Says which tasks the job's end is about to end: the remaining ones after a failure, or
 *  those the static tasks left running when the grace period ran out after they ended. */
static void s_say_ending(launcher_t *self)
{
    int n = self->nrunning + self->nleft;
    if (self->nown > 0) {
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
    n = self->nrunning + self->nleft;
    if (shown < n)
        snprintf(names + len, sizeof names - len, " ...");
    int64_t after = (gimpi_loop_now_ms() - self->own_ended_ms + 500) / 1000;
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
    self->grace_timer = 0;
    s_leftovers(self, NULL, NULL);
    if (self->nrunning == 0 && self->nleft == 0) {
        run_check_done(self);
        return;
    }
    if (self->kill_stage >= 2) {        /* SIGKILL 5 s ago: what still runs is unreachable */
        self->gave_up = true;
        run_hosts_give_up(self);
        run_check_done(self);
        return;
    }
    if (self->kill_stage == 0)
        s_say_ending(self);
    s_signal_all(self, self->kill_stage == 0 ? SIGTERM : SIGKILL);
    self->kill_stage++;
    self->grace_timer = gimpi_loop_timer_add(loop, self->kill_stage < 2 ? 2000 : 5000, 0,
                                             s_on_grace, self);
}

/*  After a failure: the others get the grace period, once. */
static void s_arm_grace(launcher_t *self)
{
    if (self->loop && !self->grace_timer && self->kill_stage == 0
        && (self->nrunning > 0 || self->nleft > 0 || self->scan_due))
        self->grace_timer = gimpi_loop_timer_add(self->loop, (int64_t)self->grace_s * 1000, 0,
                                                 s_on_grace, self);
}

/*  A local task wrote something (or closed its end). */
static void s_on_output(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)fd, (void)events;
    stream_t *s = arg;
    s_drain(s->task->self, s->task, s);
    run_check_done(s->task->self);
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
        s_signal_all(self, (int)si.ssi_signo);
        run_fail(self);
    }
    s_reap(self);               /* SIGCHLDs coalesce: reaping is idempotent */
}

/*  Starts local static task t: it inherits its listening socket, the tables memfd and the
 *  go pipe. */
static int s_spawn(launcher_t *self, task_t *t, int tables_fd)
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
    t->out = (stream_t){ .task = t, .fd = out[0], .which = 1 };
    t->err = (stream_t){ .task = t, .fd = err[0], .which = 2 };
    gimpi_loop_fd_add(self->loop, t->out.fd, GIMPI_LOOP_READ, s_on_output, &t->out);
    gimpi_loop_fd_add(self->loop, t->err.fd, GIMPI_LOOP_READ, s_on_output, &t->err);
    self->nstreams += 2;
    return 0;
}

/*  Starts a spawned task t on this host as our child: its output comes through us, its
 *  environment is ours plus env, its directory wd.  0, or -1 with the slot's error in
 *  *code (GIMPI_ENOFILE when the program cannot be run). */
int run_local_start(launcher_t *self, task_t *t, char **env, const char *wd, int *code)
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
        dup2(out[1], 1);
        dup2(err[1], 2);
        for (char **e = env; e && *e; e++)
            putenv(*e);
        int e = 0;
        if (wd && *wd && chdir(wd) < 0)
            e = ENOTDIR;
        if (!e)
            e = gimpi_job_exec(t->argv);
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
    t->out = (stream_t){ .task = t, .fd = out[0], .which = 1 };
    t->err = (stream_t){ .task = t, .fd = err[0], .which = 2 };
    gimpi_loop_fd_add(self->loop, t->out.fd, GIMPI_LOOP_READ, s_on_output, &t->out);
    gimpi_loop_fd_add(self->loop, t->err.fd, GIMPI_LOOP_READ, s_on_output, &t->err);
    self->nstreams += 2;
    return 0;
}

/*  This client's description: one host with one proc per task, each at its own address. */
static impi_desc_t *s_desc(launcher_t *self)
{
    impi_desc_t *d = calloc(1, sizeof *d);
    d->hosts = calloc((size_t)self->ntasks, sizeof *d->hosts);
    d->procs = calloc((size_t)self->ntasks, sizeof *d->procs);
    d->rank = self->client_rank < 0 ? 0 : self->client_rank;
    d->nversions = 1;
    d->datalen = self->datalen;
    d->tagub = self->tagub;
    d->xsize = -1;
    d->maxlinear = -1;
    d->nhosts = d->nprocs = self->ntasks;
    for (int i = 0; i < self->ntasks; i++) {
        task_t *t = self->tasks[i];
        struct in_addr in;
        inet_pton(AF_INET, t->addr, &in);
        impi_addr16_from_ipv4(d->hosts[i].addr, ntohl(in.s_addr));
        d->hosts[i].port = t->port;
        d->hosts[i].nprocs = 1;
        d->hosts[i].ackmark = self->ackmark;
        d->hosts[i].hiwater = self->hiwater;
        memcpy(d->procs[i].hostid, d->hosts[i].addr, 16);
        d->procs[i].pid = t->pid;
    }
    return d;
}

/*  Frees a description. */
static void s_desc_free(impi_desc_t *d)
{
    free(d->hosts);
    free(d->procs);
    free(d);
}

/*  The startup: local for one client, through the server with -client.  0 or -1. */
static int s_startup(launcher_t *self)
{
    char err[512];
    impi_desc_t *desc = s_desc(self);
    if (self->client_rank < 0) {
        self->tables = gimpi_job_local_startup(desc, err, sizeof err);
    } else {
        self->client = impi_client_new(self->server, self->timeout_s * 1000);
        if (!self->client)
            snprintf(err, sizeof err, "out of memory");
        else if (impi_client_start(self->client, desc, err, sizeof err) == IMPI_CLIENT_OK)
            self->tables = impi_client_take_tables(self->client);
    }
    s_desc_free(desc);
    if (!self->tables) {
        fprintf(stderr, "gimpirun: IMPI startup failed: %s\n", err);
        return -1;
    }
    return 0;
}

/*  Reserves the job's tids in groupd (the same block and token for every client of the
 *  job: the key is the job's identity) and returns the base (the token in token), or -1
 *  with a warning when groupd cannot be reached (the tasks then use tids 1..N and their
 *  group calls fail). */
static int s_reserve_tids(launcher_t *self, char token[GIMPI_GROUPS_TOKEN_LEN + 1])
{
    char key[GIMPI_JOB_KEY_SIZE];
    gimpi_job_key(self->tables, key);
    gimpi_groups_t *g = gimpi_groups_new(NULL, NULL);
    int base = g ? gimpi_groups_reserve_token(g, key, self->tables->nprocs, token)
                 : GIMPI_ENOMEM;
    if (base < 0)
        fprintf(stderr, "gimpirun: warning: no tids from groupd at %s (%s): tasks use tids "
                "1..%d and group calls fail\n", g ? gimpi_groups_endpoint(g) : "?",
                gimpi_strerror(base), self->tables->nprocs);
    gimpi_groups_destroy(&g);
    return base < 0 ? -1 : base;
}

/*  True once every remote static task has said STARTED or FAILED. */
static bool s_all_started(launcher_t *self)
{
    for (int i = 0; i < self->ntasks; i++)
        if (!self->tasks[i]->started)
            return false;
    return true;
}

/*  True once every agent has said HELLO (or is dead). */
static bool s_all_hello(launcher_t *self)
{
    for (int i = 0; i < self->nhosts; i++)
        if (self->hosts[i]->state == HOST_STARTING && !self->hosts[i]->info.later)
            return false;
    return true;
}

/*  The variables every remote task gets: GIMPI_* settings of ours (not the hand-over
 *  ones, nor keys) and those PVM_EXPORT names, as PVM exports them. */
extern char **environ;
char **run_export_env(launcher_t *self, const host_t *h, int extra)
{
    int n = 0;
    while (environ[n])
        n++;
    char **env = calloc((size_t)n + (size_t)extra + 8, sizeof *env);
    if (!env)
        return NULL;
    int k = 0;
    const char *exp = getenv("PVM_EXPORT");
    for (int i = 0; i < n; i++) {
        const char *e = environ[i];
        const char *eq = strchr(e, '=');
        if (!eq)
            continue;
        size_t len = (size_t)(eq - e);
        bool take = !strncmp(e, "GIMPI_", 6) && strncmp(e, "GIMPI_KEY", 9)
                    && strncmp(e, "GIMPI_RSH=", 10) && strncmp(e, "GIMPI_HOST", 10)
                    && strncmp(e, PROCTREE_ENV "=", sizeof PROCTREE_ENV);
        for (const char *p = exp; p && *p && !take;) {
            const char *c = strchr(p, ':');
            size_t l = c ? (size_t)(c - p) : strlen(p);
            take = l == len && !strncmp(p, e, len);
            p = c ? c + 1 : NULL;
        }
        if (take)
            env[k++] = strdup(e);
    }
    char buf[1200];
    snprintf(buf, sizeof buf, "GIMPI_HOST=%s", h->info.name);
    env[k++] = strdup(buf);
    if (h->info.ep[0]) {
        snprintf(buf, sizeof buf, "GIMPI_PATH=%s", h->info.ep);
        env[k++] = strdup(buf);
    }
    (void)self;
    return env;
}

/*  Frees an environment made by run_export_env. */
void run_free_env(char **env)
{
    for (char **e = env; e && *e; e++)
        free(*e);
    free(env);
}

/*  The working directory of tasks on host h: wd=, else ours (as mpirun does; a directory
 *  that does not exist there fails the start, naming it). */
const char *run_wd(const host_t *h, char *buf, size_t size)
{
    if (h->info.wd[0])
        return h->info.wd;
    if (!getcwd(buf, size))
        buf[0] = 0;
    return buf;
}

/*  An absolute program path for other hosts when it was given relative with a slash. */
static char *s_abs_prog(const char *prog)
{
    if (!strchr(prog, '/') || prog[0] == '/')
        return strdup(prog);
    char cwd[PATH_MAX], *out = malloc(PATH_MAX * 2);
    if (out && getcwd(cwd, sizeof cwd))
        snprintf(out, PATH_MAX * 2, "%s/%s", cwd, prog);
    else if (out)
        snprintf(out, PATH_MAX * 2, "%s", prog);
    return out;
}

/*  Starts static task t on its host: here with a socket made here, else through the
 *  host's agent (it answers STARTED with its port, or FAILED).  0 or -1. */
static int s_start_task(launcher_t *self, task_t *t, int tables_fd)
{
    host_t *h = self->hosts[t->host];
    char err[512];
    if (h->local) {
        snprintf(t->addr, sizeof t->addr, "%s", self->myaddr);
        t->listen_fd = gimpi_job_listen(t->addr, &t->port, err, sizeof err);
        if (t->listen_fd < 0) {
            fprintf(stderr, "gimpirun: %s\n", err);
            return -1;
        }
        t->local_fd = gimpi_host_listen_local(t->listen_fd);   /* -1: TCP only */
        int rc = s_spawn(self, t, tables_fd);
        close(t->listen_fd);
        if (t->local_fd >= 0)
            close(t->local_fd);
        t->listen_fd = t->local_fd = -1;
        t->started = rc == 0;
        return rc;
    }
    char **env = run_export_env(self, h, 4);
    char wd[PATH_MAX], spec[80], cl[40], lo[40];
    snprintf(spec, sizeof spec, "route:%s", self->myaddr);
    struct in_addr plain;
    if (self->ifspec && inet_pton(AF_INET, self->ifspec, &plain) != 1)
        snprintf(spec, sizeof spec, "if:%s", self->ifspec);     /* a name or a CIDR */
    int k = 0;
    while (env && env[k])
        k++;
    snprintf(cl, sizeof cl, "%s=%d", GIMPI_ENV_CLIENT, self->client_rank < 0 ? 0 : self->client_rank);
    snprintf(lo, sizeof lo, "%s=%d", GIMPI_ENV_LOCAL, t->id);
    if (env) {
        env[k++] = strdup(cl);
        env[k++] = strdup(lo);
    }
    char *prog = s_abs_prog(t->argv[0]);
    int argc = 0;
    while (t->argv[argc])
        argc++;
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    if (!env || !prog || !argv) {
        run_free_env(env);
        free(prog);
        free(argv);
        fprintf(stderr, "gimpirun: out of memory\n");
        return -1;
    }
    argv[0] = prog;
    for (int i = 1; i < argc; i++)
        argv[i] = t->argv[i];
    size_t len;
    uint8_t *f = vmw_encode(&len, AGENT_START, t->id, AGENT_START_STATIC, spec,
                            run_wd(h, wd, sizeof wd), argv, env, t->core,
                            gimpi_bind_wanted() ? h->nstatic : 0);
    (void)len;
    run_free_env(env);
    free(prog);
    free(argv);
    if (run_hosts_send(h, f) < 0) {
        fprintf(stderr, "gimpirun: host %s cannot take task %d\n", h->info.name, t->id);
        return -1;
    }
    return 0;
}

/*  The tables handed to remote tasks: the saved form, read back from a memfd. */
static uint8_t *s_tables_bytes(int tables_fd, size_t *len)
{
    off_t size = lseek(tables_fd, 0, SEEK_END);
    uint8_t *b = size > 0 ? malloc((size_t)size) : NULL;
    if (!b || pread(tables_fd, b, (size_t)size, 0) != size) {
        free(b);
        return NULL;
    }
    *len = (size_t)size;
    return b;
}

/*  Places the static tasks on the hosts (round-robin in slot order) and marks the job
 *  multi-host when any lands elsewhere. */
static int s_place(launcher_t *self)
{
    if (gimpi_hostset_size(self->hostset) == 0)
        return 0;
    int *where = calloc((size_t)self->ntasks, sizeof *where);
    if (!where || gimpi_hostset_place(self->hostset, self->ntasks, 0, where) < 0) {
        free(where);
        fprintf(stderr, "gimpirun: no host to place the tasks on\n");
        return -1;
    }
    for (int i = 0; i < self->ntasks; i++)
        self->tasks[i]->host = where[i];
    free(where);
    return 0;
}

/*  Hands every static task the tables and the go line ('T', the tid base and the block's
 *  token: never argv or environment), or fails their startup. */
static void s_go(launcher_t *self, bool started, int tables_fd)
{
    char go[32 + GIMPI_GROUPS_TOKEN_LEN] = "T";
    uint8_t *tb = NULL;
    size_t tblen = 0;
    if (started) {
        for (int i = 0; i < self->ntasks; i++)
            self->tasks[i]->world_rank =
                self->tables->clients[self->tables->myclient].first_proc + i;
        char token[GIMPI_GROUPS_TOKEN_LEN + 1];
        int base = s_reserve_tids(self, token);
        self->tidbase = base;
        /* from now on (groupd runs: one we started is not ours), what the tasks start
           stays below us when its parent ends */
        self->reaper = proctree_become_reaper() == 0;
        if (base >= 0) {
            snprintf(go, sizeof go, "T%d %s\n", base, token);
            for (int i = 0; i < self->ntasks; i++)
                self->tasks[i]->tid = base + self->tasks[i]->world_rank + 1;
        }
        gimpi_key_wipe(token, sizeof token);
        if (self->multihost && !(tb = s_tables_bytes(tables_fd, &tblen)))
            started = false;
    }
    for (int i = 0; i < self->ntasks; i++) {
        task_t *t = self->tasks[i];
        host_t *h = self->hosts[t->host];
        if (h->local) {
            /* 'T' (and the tid base) lets the task go; closing without it: failed */
            if (started && t->go_fd >= 0
                && write(t->go_fd, go, strlen(go)) != (ssize_t)strlen(go))
                (void)0;        /* the task is gone already: reaped later */
            if (t->go_fd >= 0)
                close(t->go_fd);
            t->go_fd = -1;
        } else if (!t->exited) {
            size_t len;
            if (started)
                run_hosts_send(h, vmw_encode(&len, AGENT_GO, t->id, tb, tblen, go));
            else
                run_hosts_kill(self, t, SIGKILL);
        }
    }
    gimpi_key_wipe(go, sizeof go);
    free(tb);
    if (!started)
        self->failed = true;
}

/*  Runs the job; returns gimpirun's exit status. */
static int s_run(launcher_t *self)
{
    char err[512], from[GIMPI_KEY_PATHLEN + 64];
    if (gimpi_key_default(&self->key, from, sizeof from, err, sizeof err) < 0) {
        fprintf(stderr, "gimpirun: %s\n", err);
        return 1;
    }
    self->loop = gimpi_loop_new();
    if (!self->loop || run_hosts_init(self) < 0 || s_place(self) < 0)
        return 1;
    if (self->client_rank >= 0 && !self->host && self->nhosts == 1) {
        /* a client of a multi-client job announces the address that reaches the server */
        const char *colon = strrchr(self->server, ':');
        char host[64];
        if (colon && (size_t)(colon - self->server) < sizeof host) {
            memcpy(host, self->server, (size_t)(colon - self->server));
            host[colon - self->server] = 0;
            gimpi_hostset_route_addr(host, self->myaddr, sizeof self->myaddr);
        }
    }
    gimpi_loop_fd_add(self->loop, self->sigfd, GIMPI_LOOP_READ, s_on_signal, self);

    /* the other hosts' agents, and a groupd they can all reach */
    if (gimpi_hostset_size(self->hostset) > 0 || self->groupd_host) {
        if (run_hosts_start_agents(self, 0, err, sizeof err) < 0) {
            fprintf(stderr, "gimpirun: %s\n", err);
            return 1;
        }
        if (run_hosts_wait(self, s_all_hello, self->timeout_s * 1000) < 0) {
            fprintf(stderr, "gimpirun: hosts did not answer within %d s\n", self->timeout_s);
            return 1;
        }
        for (int i = 0; i < self->ntasks; i++)
            if (self->hosts[self->tasks[i]->host]->state != HOST_UP) {
                fprintf(stderr, "gimpirun: host %s did not start: no task can run there\n",
                        self->hosts[self->tasks[i]->host]->info.name);
                return 1;
            }
        if (run_vm_start(self, err, sizeof err) < 0) {
            fprintf(stderr, "gimpirun: %s\n", err);
            return 1;
        }
    }

    int tables_fd = memfd_create("gimpi-tables", MFD_CLOEXEC);
    if (tables_fd < 0) {
        fprintf(stderr, "gimpirun: memfd_create: %s\n", strerror(errno));
        return 1;
    }
    bool started = true;
    /* a core of its own for each task: its place in its host's plan (we plan this
       machine's, the agents theirs) */
    int nlocal = 0;
    for (int i = 0; i < self->nhosts; i++)
        self->hosts[i]->nstatic = 0;
    for (int i = 0; i < self->ntasks; i++) {
        host_t *h = self->hosts[self->tasks[i]->host];
        self->tasks[i]->core = h->nstatic++;
        nlocal += h->local;
    }
    self->bind = gimpi_bind_new(nlocal);
    for (int i = 0; i < self->ntasks && started; i++)
        if (s_start_task(self, self->tasks[i], tables_fd) < 0)
            started = false;
    gimpi_bind_destroy(&self->bind);
    if (started && run_hosts_wait(self, s_all_started, self->timeout_s * 1000) < 0) {
        fprintf(stderr, "gimpirun: tasks did not start within %d s\n", self->timeout_s);
        started = false;
    }
    for (int i = 0; i < self->ntasks && started; i++)
        if (self->tasks[i]->start_err || self->tasks[i]->exited)
            started = false;
    if (started)
        started = s_startup(self) == 0;
    if (started && impi_tables_save(self->tables, tables_fd) < 0) {
        fprintf(stderr, "gimpirun: cannot hand the tables over: %s\n", strerror(errno));
        started = false;
    }
    if (!started)
        s_signal_all(self, SIGKILL);
    s_go(self, started, tables_fd);
    close(tables_fd);

    /* the loop: output, ends, signals, the virtual machine's requests, the grace deadline */
    s_reap(self);               /* a task may have died before the loop ran */
    if (self->nrunning > 0 || self->nstreams > 0 || run_hosts_busy(self))
        gimpi_loop_run(self->loop);
    run_vm_fini(self);
    gimpi_loop_destroy(&self->loop);
    if (self->client) {
        if (impi_client_fini(self->client, err, sizeof err) < 0) {
            fprintf(stderr, "gimpirun: FINI to the server failed: %s\n", err);
            self->failed = true;
        }
    }
    return self->failed ? 1 : self->ended_leftovers ? 3 : 0;
}

int main(int argc, char **argv)
{
    launcher_t self = { .sigfd = -1, .tidbase = -1 };
    s_parse(&self, argc, argv);
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    self.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (self.sigfd < 0) {
        fprintf(stderr, "gimpirun: signalfd: %s\n", strerror(errno));
        return 1;
    }
    int rc = s_run(&self);
    if (rc != 0 && self.nall)
        for (int i = 0; i < self.nall; i++)     /* an early failure: nobody is left */
            if (!self.tasks[i]->exited && self.tasks[i]->pid > 0
                && self.hosts && self.hosts[self.tasks[i]->host]->local)
                kill(self.tasks[i]->pid, SIGKILL);
    gimpi_loop_destroy(&self.loop);
    run_hosts_fini(&self);
    for (int i = 0; i < self.nall; i++) {
        task_t *t = self.tasks[i];
        free(t->out.buf);
        free(t->err.buf);
        if (t->spawned) {
            for (char **a = t->argv; a && *a; a++)
                free(*a);
            free(t->argv);
        }
        free(t);
    }
    free(self.tasks);
    gimpi_hostset_destroy(&self.hostset);
    impi_tables_destroy(&self.tables);
    impi_client_destroy(&self.client);
    gimpi_key_wipe(&self.key, sizeof self.key);
    /* a subreaper's adopted processes that ended last are zombies the loop no longer
       counts (proctree skips them): reap them, or they would outlive us, unreaped where
       the system's first process does not reap */
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    return rc;
}
