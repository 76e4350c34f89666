/*  gimpirun.c — the launcher: one gimpirun is one IMPI client.
 *
 *  gimpirun [options] [-np N] prog [args] [: -np M prog2 [args]]...
 *  gimpirun [options] -client RANK HOST:PORT -np N prog [args]...
 *
 *  It creates a listening socket for every task (each task is its own IMPI host), starts
 *  the tasks (they wait for the go byte, see libgimpi/task/gimpi_job.h), performs the IMPI
 *  startup for them — locally for a single-client job, through impi-server with
 *  -client — with their real ports and pids, reserves the job's tids in groupd (RESERVE
 *  keyed by the job's identity, so every client of the job gets the same block), hands the
 *  tasks the tables and the tid base, then forwards each
 *  task's stdout and stderr line by line (-tag prefixes the task's world rank), forwards
 *  SIGINT/SIGTERM/SIGHUP, and exits non-zero naming every task that failed.  When a task
 *  dies abnormally the others get -grace seconds to end on their own (they see errors on
 *  their connections to it) before they are terminated: a job never hangs.  After the
 *  last task it sends FINI to the server.  One poll() loop owns every descriptor.
 */
#include "config.h"
#include "gimpi.h"
#include "net/gimpi_host.h"
#include "task/gimpi_job.h"
#include "server/gimpi_loop.h"
#include "impi/impi_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

typedef struct launcher_t launcher_t;
typedef struct task_t task_t;

/*  One output stream of a task, split into lines. */
typedef struct {
    task_t *task;
    int fd;                     /* read end, -1 when closed */
    FILE *to;                   /* stdout or stderr of gimpirun */
    char *buf;
    size_t len;
} stream_t;

/*  One task. */
struct task_t {
    launcher_t *self;
    char **argv;                /* points into the command line */
    pid_t pid;
    int listen_fd, local_fd, port;
    int go_fd;                  /* write end of the go pipe */
    stream_t out, err;
    bool exited;
    int status;
    int world_rank;
};

/*  The launcher's whole state. */
struct launcher_t {
    /* options */
    bool tag;
    int client_rank;            /* -1: single-client job */
    const char *server;         /* HOST:PORT with -client */
    const char *host;           /* address tasks listen on and announce */
    uint32_t datalen, ackmark, hiwater;
    int32_t tagub;
    int grace_s, timeout_s;
    /* tasks */
    int ntasks;
    task_t *tasks;
    /* job */
    impi_client_t *client;
    impi_tables_t *tables;
    gimpi_loop_t *loop;
    int sigfd;
    int grace_timer;            /* armed after a failure, 0 = none */
    int kill_stage;             /* 0: grace, 1: SIGTERM sent, 2: SIGKILL sent */
    int nrunning;               /* tasks not yet reaped */
    int nstreams;               /* task output pipes still open */
    bool failed;
};

/*  The synopsis. */
static void s_usage(FILE *to)
{
    fprintf(to,
        "usage: gimpirun [options] [-np N] prog [args] [: -np M prog2 [args]]...\n"
        "       gimpirun [options] -client RANK HOST:PORT -np N prog [args]...\n"
        "options:\n"
        "  -tag            prefix every output line with the task's world rank (and the\n"
        "                  lines of tasks they spawn with [t<hex tid>]: GIMPI_TAG=1)\n"
        "  -host ADDR      IPv4 address the tasks listen on and announce\n"
        "                  (default 127.0.0.1, with -client the address that reaches the server)\n"
        "  -datalen B      packet data length this client offers (default %d)\n"
        "  -ackmark A      flow-control ack mark offered (default %d)\n"
        "  -hiwater H      flow-control high-water mark offered (default %d)\n"
        "  -tagub T        largest tag offered (default 2147483647)\n"
        "  -grace S        seconds the others get after a task failed (default 10)\n"
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
    int cap = 0;
    for (;;) {
        int np = 1;
        /* options (global ones may appear before any program) */
        while (i < argc && argv[i][0] == '-') {
            const char *o = argv[i];
            if (!strcmp(o, "-np") || !strcmp(o, "-n"))
                np = (int)s_num(o, i + 1 < argc ? argv[++i] : NULL, 1, 4096);
            else if (!strcmp(o, "-tag")) {
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
            } else if (!strcmp(o, "-host") && i + 1 < argc)
                self->host = argv[++i];
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
        if (self->ntasks + np > 4096) {
            fprintf(stderr, "gimpirun: at most 4096 tasks\n");
            exit(2);
        }
        if (self->ntasks + np > cap) {
            cap = self->ntasks + np;
            self->tasks = realloc(self->tasks, (size_t)cap * sizeof *self->tasks);
            if (!self->tasks) {
                fprintf(stderr, "gimpirun: out of memory\n");
                exit(1);
            }
            memset(self->tasks + self->ntasks, 0, (size_t)np * sizeof *self->tasks);
        }
        for (int k = 0; k < np; k++)
            self->tasks[self->ntasks++].argv = prog;
        if (!more)
            break;
    }
    if (self->ackmark > self->hiwater) {
        fprintf(stderr, "gimpirun: -ackmark %u is above -hiwater %u\n", self->ackmark, self->hiwater);
        exit(2);
    }
}

/*  The local address that reaches HOST:PORT (a UDP connect sends nothing). */
static const char *s_route_addr(const char *server, char *buf, size_t size)
{
    char host[64];
    const char *colon = strrchr(server, ':');
    if (!colon || (size_t)(colon - server) >= sizeof host)
        return NULL;
    memcpy(host, server, (size_t)(colon - server));
    host[colon - server] = '\0';
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9) };
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return NULL;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    socklen_t len = sizeof sa;
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    close(fd);
    return inet_ntop(AF_INET, &sa.sin_addr, buf, (socklen_t)size);
}

/*  Starts task i: it inherits its listening socket, the tables memfd and the go pipe. */
static int s_spawn(launcher_t *self, int i, int tables_fd)
{
    task_t *t = &self->tasks[i];
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
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);     /* the job does not outlive its launcher */
        if (getppid() != launcher)            /* it died before the line above */
            _exit(127);
        dup2(out[1], 1);
        dup2(err[1], 2);
        if (i != 0) {           /* only the first task reads gimpirun's stdin */
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
        snprintf(v, sizeof v, "%d", i);
        setenv(GIMPI_ENV_LOCAL, v, 1);
        execvp(t->argv[0], t->argv);
        fprintf(stderr, "gimpirun: cannot run %s: %s\n", t->argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    close(go[0]);
    t->pid = pid;
    t->go_fd = go[1];
    t->out = (stream_t){ .fd = out[0], .to = stdout };
    t->err = (stream_t){ .fd = err[0], .to = stderr };
    self->nrunning++;
    return 0;
}

/*  This client's description: one host with one proc per task. */
static impi_desc_t *s_desc(launcher_t *self, const char *addr)
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
    struct in_addr in;
    inet_pton(AF_INET, addr, &in);
    for (int i = 0; i < self->ntasks; i++) {
        impi_addr16_from_ipv4(d->hosts[i].addr, ntohl(in.s_addr));
        d->hosts[i].port = self->tasks[i].port;
        d->hosts[i].nprocs = 1;
        d->hosts[i].ackmark = self->ackmark;
        d->hosts[i].hiwater = self->hiwater;
        memcpy(d->procs[i].hostid, d->hosts[i].addr, 16);
        d->procs[i].pid = self->tasks[i].pid;
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

/*  Writes one line (with the task's tag) to gimpirun's own stream. */
static void s_emit(launcher_t *self, task_t *t, stream_t *s, const char *line, size_t len)
{
    if (self->tag)
        fprintf(s->to, "[%d] ", t->world_rank);
    fwrite(line, 1, len, s->to);
    fputc('\n', s->to);
    fflush(s->to);
}

/*  Reads what a task wrote and forwards every complete line; EOF flushes the rest. */
static void s_drain(launcher_t *self, task_t *t, stream_t *s)
{
    if (!s->buf)
        s->buf = malloc(LINE_MAX_BYTES);
    ssize_t r = read(s->fd, s->buf + s->len, LINE_MAX_BYTES - s->len);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        if (s->len)
            s_emit(self, t, s, s->buf, s->len);
        s->len = 0;
        gimpi_loop_fd_del(self->loop, s->fd);
        close(s->fd);
        s->fd = -1;
        self->nstreams--;
        free(s->buf);
        s->buf = NULL;
        return;
    }
    s->len += (size_t)r;
    size_t start = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->buf[i] == '\n') {
            s_emit(self, t, s, s->buf + start, i - start);
            start = i + 1;
        }
    if (start == 0 && s->len == LINE_MAX_BYTES) {      /* an overlong line: cut it */
        s_emit(self, t, s, s->buf, s->len);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/*  Sends sig to every task still running. */
static void s_signal_all(launcher_t *self, int sig)
{
    for (int i = 0; i < self->ntasks; i++)
        if (self->tasks[i].pid > 0 && !self->tasks[i].exited)
            kill(self->tasks[i].pid, sig);
}

static void s_arm_grace(launcher_t *self);
static void s_check_done(launcher_t *self);

/*  Reaps finished tasks and reports the ones that failed. */
static void s_reap(launcher_t *self)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int i = 0; i < self->ntasks; i++) {
            task_t *t = &self->tasks[i];
            if (t->pid != pid || t->exited)
                continue;
            t->exited = true;
            t->status = status;
            self->nrunning--;
            bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            if (ok)
                continue;
            self->failed = true;
            if (WIFEXITED(status))
                fprintf(stderr, "gimpirun: task %d (%s, pid %d) exited with status %d\n",
                        t->world_rank, t->argv[0], (int)pid, WEXITSTATUS(status));
            else
                fprintf(stderr, "gimpirun: task %d (%s, pid %d) killed by signal %d (%s)\n",
                        t->world_rank, t->argv[0], (int)pid, WTERMSIG(status),
                        strsignal(WTERMSIG(status)));
            s_arm_grace(self);
        }
    }
    s_check_done(self);
}

/*  Stops the loop once every task is reaped and every output pipe drained. */
static void s_check_done(launcher_t *self)
{
    if (self->loop && self->nrunning == 0 && self->nstreams == 0)
        gimpi_loop_stop(self->loop);
}

/*  Grace period over: SIGTERM the rest, then SIGKILL two seconds later. */
static void s_on_grace(gimpi_loop_t *loop, int id, void *arg)
{
    (void)id;
    launcher_t *self = arg;
    self->grace_timer = 0;
    if (self->nrunning == 0)
        return;
    if (self->kill_stage == 0)
        fprintf(stderr, "gimpirun: terminating the %d remaining task%s\n",
                self->nrunning, self->nrunning == 1 ? "" : "s");
    s_signal_all(self, self->kill_stage == 0 ? SIGTERM : SIGKILL);
    if (++self->kill_stage < 2)
        self->grace_timer = gimpi_loop_timer_add(loop, 2000, 0, s_on_grace, self);
}

/*  After a failure: the others get the grace period, once. */
static void s_arm_grace(launcher_t *self)
{
    if (self->loop && !self->grace_timer && self->kill_stage == 0 && self->nrunning > 0)
        self->grace_timer = gimpi_loop_timer_add(self->loop, (int64_t)self->grace_s * 1000, 0,
                                                 s_on_grace, self);
}

/*  A task wrote something (or closed its end). */
static void s_on_output(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)fd, (void)events;
    stream_t *s = arg;
    s_drain(s->task->self, s->task, s);
    s_check_done(s->task->self);
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
        self->failed = true;
        s_arm_grace(self);
    }
    s_reap(self);               /* SIGCHLDs coalesce: reaping is idempotent */
}

/*  The startup: local for one client, through the server with -client.  0 or -1. */
static int s_startup(launcher_t *self, const char *addr)
{
    char err[512];
    impi_desc_t *desc = s_desc(self, addr);
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
 *  job: the key is the job's identity) and returns the base (the token in token), or -1 with a warning when groupd cannot
 *  be reached (the tasks then use tids 1..N and their group calls fail). */
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

/*  Runs the job; returns gimpirun's exit status. */
static int s_run(launcher_t *self)
{
    char addrbuf[64];
    const char *addr = self->host;
    if (!addr && self->client_rank >= 0)
        addr = s_route_addr(self->server, addrbuf, sizeof addrbuf);
    if (!addr)
        addr = "127.0.0.1";

    char err[512];
    for (int i = 0; i < self->ntasks; i++) {
        task_t *t = &self->tasks[i];
        t->listen_fd = gimpi_job_listen(addr, &t->port, err, sizeof err);
        if (t->listen_fd < 0) {
            fprintf(stderr, "gimpirun: %s\n", err);
            return 1;
        }
        t->local_fd = gimpi_host_listen_local(t->listen_fd);   /* -1: TCP only */
    }
    int tables_fd = memfd_create("gimpi-tables", MFD_CLOEXEC);
    if (tables_fd < 0) {
        fprintf(stderr, "gimpirun: memfd_create: %s\n", strerror(errno));
        return 1;
    }
    for (int i = 0; i < self->ntasks; i++)
        if (s_spawn(self, i, tables_fd) < 0) {
            s_signal_all(self, SIGKILL);
            return 1;
        }
    for (int i = 0; i < self->ntasks; i++) {
        close(self->tasks[i].listen_fd);
        if (self->tasks[i].local_fd >= 0)
            close(self->tasks[i].local_fd);
    }

    bool started = s_startup(self, addr) == 0;
    if (started && impi_tables_save(self->tables, tables_fd) < 0) {
        fprintf(stderr, "gimpirun: cannot hand the tables over: %s\n", strerror(errno));
        started = false;
    }
    close(tables_fd);
    char go[32 + GIMPI_GROUPS_TOKEN_LEN] = "T";
    if (started) {
        for (int i = 0; i < self->ntasks; i++)
            self->tasks[i].world_rank = self->tables->clients[self->tables->myclient].first_proc + i;
        /* the base and the block's token go down each task's go pipe (never argv/env) */
        char token[GIMPI_GROUPS_TOKEN_LEN + 1];
        int base = s_reserve_tids(self, token);
        if (base >= 0)
            snprintf(go, sizeof go, "T%d %s\n", base, token);
    }
    for (int i = 0; i < self->ntasks; i++) {
        /* 'T' (and the tid base) lets the task go; closing without it: the startup failed */
        if (started && write(self->tasks[i].go_fd, go, strlen(go)) != (ssize_t)strlen(go))
            (void)0;            /* the task is gone already: reaped below */
        close(self->tasks[i].go_fd);
    }
    if (!started)
        self->failed = true;

    /* the loop: task output, signals, and the grace deadline after a failure */
    self->loop = gimpi_loop_new();
    if (!self->loop) {
        fprintf(stderr, "gimpirun: out of memory\n");
        s_signal_all(self, SIGKILL);
        return 1;
    }
    gimpi_loop_fd_add(self->loop, self->sigfd, GIMPI_LOOP_READ, s_on_signal, self);
    for (int i = 0; i < self->ntasks; i++) {
        task_t *t = &self->tasks[i];
        t->self = self;
        t->out.task = t->err.task = t;
        gimpi_loop_fd_add(self->loop, t->out.fd, GIMPI_LOOP_READ, s_on_output, &t->out);
        gimpi_loop_fd_add(self->loop, t->err.fd, GIMPI_LOOP_READ, s_on_output, &t->err);
        self->nstreams += 2;
    }
    s_reap(self);               /* a task may have died before the loop existed */
    if (self->nrunning > 0 || self->nstreams > 0)
        gimpi_loop_run(self->loop);
    gimpi_loop_destroy(&self->loop);
    if (self->client) {
        if (impi_client_fini(self->client, err, sizeof err) < 0) {
            fprintf(stderr, "gimpirun: FINI to the server failed: %s\n", err);
            self->failed = true;
        }
    }
    return self->failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    launcher_t self = { .sigfd = -1 };
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
    for (int i = 0; i < self.ntasks; i++) {
        free(self.tasks[i].out.buf);
        free(self.tasks[i].err.buf);
    }
    free(self.tasks);
    impi_tables_destroy(&self.tables);
    impi_client_destroy(&self.client);
    return rc;
}
