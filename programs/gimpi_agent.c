/*  gimpi_agent.c — gimpi-agent, the launcher's hands on another host of a virtual machine.
 *
 *  gimpirun starts one agent per other host through ssh or srun and keeps it for the
 *  job's life; the agent talks only over its standard input and output (base/gimpi_vmwire.h),
 *  so it opens no port.  It receives the job's key first (never on a command line) and
 *  hands it to its tasks in a memfd (GIMPI_KEY_FD).  It starts the launcher's tasks on
 *  this host (listening sockets, startup tables and go pipe, exactly as gimpirun does
 *  locally) and spawned tasks (pvm_spawn onto this host), forwards each task's output line
 *  by line, reports each task's end, signals tasks on request, and, for a host added
 *  later, says whether this host reaches the job's groupd (PROBE).  When its input ends
 *  (the launcher died, or the link to it broke and the engine gave up), it terminates
 *  every task it started and exits: nothing is left behind on the host.  It is a child
 *  subreaper (programs/proctree.h): what its tasks start stays below it, and its end, or
 *  the launcher's QUIT, ends those processes too.
 */
#include "config.h"
#include "programs/proctree.h"
#include "programs/run_pvmabi.h"
#include "programs/run_proc.h"
#include "base/gimpi_vmwire.h"
#include "base/gimpi_bind.h"
#include "base/gimpi_hostset.h"
#include "base/gimpi_key.h"
#include "base/gimpi_tev.h"
#include "net/gimpi_host.h"
#include "task/gimpi_job.h"
#include "server/gimpi_loop.h"
#include "gimpi.h"

#include <arpa/inet.h>
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
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
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 65536
#define KEY_WAIT_MS 30000       /* the launcher sends the key at once; 30 s is generous */
#define KILL_GRACE_MS 2000      /* SIGTERM, then SIGKILL this much later */

typedef struct agent_t agent_t;

/*  One output stream of a task. */
typedef struct {
    struct atask_t *task;
    int fd, which;
    char *buf;
    size_t len;
} astream_t;

/*  One task started here. */
typedef struct atask_t {
    agent_t *self;
    int id;                     /* the launcher's id */
    pid_t pid;
    int go_fd, tables_fd;       /* static tasks until GO, else -1 */
    astream_t out, err;
    bool exited;
    int status;
    struct atask_t *next;
} atask_t;

/*  The agent's whole state. */
struct agent_t {
    gimpi_loop_t *loop;
    vmw_reader_t *in;
    int key_fd;                 /* memfd holding the key, inherited by tasks */
    int sigfd;
    atask_t *tasks;
    int nlive;                  /* tasks not yet reaped or streams open */
    bool quitting;
    int kill_timer;
    char host[256];
    gimpi_bind_t *bind;         /* the job's core plan here while its static tasks start */
};

/*  Sends one frame to the launcher (stdout); a failure ends the agent's usefulness. */
static void s_send(agent_t *self, uint8_t *frame, size_t len)
{
    (void)self;
    if (!frame || vmw_write_all(1, frame, len) < 0) {
        free(frame);
        _exit(3);               /* the launcher is gone: the tasks die with our pipes */
    }
    free(frame);
}

/*  Reports a failed start. */
static void s_failed(agent_t *self, int id, int code, const char *fmt, const char *arg)
{
    char msg[1500];
    snprintf(msg, sizeof msg, fmt, arg, self->host);
    size_t len;
    uint8_t *f = vmw_encode(&len, AGENT_FAILED, id, code, msg);
    s_send(self, f, len);
}

/*  The task with the launcher's id, or NULL. */
static atask_t *s_find(agent_t *self, int id)
{
    for (atask_t *t = self->tasks; t; t = t->next)
        if (t->id == id)
            return t;
    return NULL;
}

/*  The IPv4 address of this host to listen on and announce, from spec: "route:A" (the
 *  local address that reaches A), "if:SPEC" (an interface name or a CIDR, as gimpirun's
 *  -if), or a dotted address. */
static int s_addr(const char *spec, char *out, size_t size)
{
    if (!strncmp(spec, "if:", 3)) {     /* an interface name or a CIDR, as -if */
        char err[GIMPI_HOSTSET_ERRLEN];
        return gimpi_hostset_if_addr(spec + 3, out, size, err, sizeof err);
    }
    if (!strncmp(spec, "route:", 6))
        return gimpi_hostset_route_addr(spec + 6, out, size);
    struct in_addr in;
    if (inet_pton(AF_INET, spec, &in) != 1)
        return -1;
    snprintf(out, size, "%s", spec);
    return 0;
}

static void s_on_output(gimpi_loop_t *loop, int fd, int events, void *arg);

/*  Sends the lines a task wrote; EOF flushes the rest and closes the stream. */
static void s_drain(agent_t *self, astream_t *s)
{
    if (!s->buf && !(s->buf = malloc(LINE_MAX_BYTES)))
        return;
    ssize_t r = read(s->fd, s->buf + s->len, LINE_MAX_BYTES - s->len);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    size_t flen;
    if (r <= 0) {
        if (s->len) {
            uint8_t *f = vmw_encode(&flen, AGENT_OUT, s->task->id, s->which, s->buf, s->len);
            s_send(self, f, flen);
        }
        gimpi_loop_fd_del(self->loop, s->fd);
        close(s->fd);
        s->fd = -1;
        free(s->buf);
        s->buf = NULL;
        s->len = 0;
        self->nlive--;
        return;
    }
    s->len += (size_t)r;
    size_t start = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->buf[i] == '\n') {
            uint8_t *f = vmw_encode(&flen, AGENT_OUT, s->task->id, s->which, s->buf + start,
                                      i - start);
            s_send(self, f, flen);
            start = i + 1;
        }
    if (start == 0 && s->len == LINE_MAX_BYTES) {
        uint8_t *f = vmw_encode(&flen, AGENT_OUT, s->task->id, s->which, s->buf, s->len);
        s_send(self, f, flen);
        start = s->len;
    }
    memmove(s->buf, s->buf + start, s->len - start);
    s->len -= start;
}

/*  Sends what stream s holds now, without waiting: a task's last lines go out before its
 *  EXIT (gimpirun then writes its EOF after them, as a catching console expects). */
static void s_drain_ready(agent_t *self, astream_t *s)
{
    struct pollfd p = { .fd = s->fd, .events = POLLIN };
    while (s->fd >= 0 && poll(&p, 1, 0) > 0)
        s_drain(self, s);
}

/*  Leaves the loop once quitting and nothing is left: no task, no process of the job
 *  below us (until SIGKILL was sent; what outlives it is beyond reach). */
static void s_check_done(agent_t *self)
{
    if (!self->quitting || self->nlive > 0)
        return;
    proctree_proc_t *left = NULL;
    int n = self->kill_timer ? proctree_list(NULL, 0, &left) : 0;
    free(left);
    if (n <= 0)
        gimpi_loop_stop(self->loop);
}

static void s_on_output(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)fd, (void)events;
    astream_t *s = arg;
    s_drain(s->task->self, s);
    s_check_done(s->task->self);
}

/*  Child side of a start: descriptors, directory, environment, exec.  Reports an errno
 *  on errpipe when something fails (only async-signal-safe calls matter little here: the
 *  agent is single-threaded). */
static void s_child(agent_t *self, char **argv, char **env, const char *wd, int out, int err,
                    int errpipe, int keep[], int nkeep, bool spawned)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    proctree_mark(getppid());
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0)
        dup2(null, 0);
    dup2(out, 1);
    dup2(err, 2);
    for (int k = 0; k < nkeep; k++)
        if (keep[k] >= 0)
            fcntl(keep[k], F_SETFD, 0);
    fcntl(self->key_fd, F_SETFD, 0);
    for (char **e = env; e && *e; e++)
        putenv(*e);
    char perr[1200];
    if (run_pvmabi_env_if_asked(perr, sizeof perr) < 0)     /* gimpirun -pvm-abi */
        dprintf(2, "gimpi-agent: %s\n", perr);
    char v[32];
    snprintf(v, sizeof v, "%d", self->key_fd);
    setenv("GIMPI_KEY_FD", v, 1);
    unsetenv("GIMPI_KEY_FILE");
    int e = 0;
    char tried[2048] = "";
    if (wd && *wd && chdir(wd) < 0)
        e = errno, e = -e;      /* negative: the directory, not the program */
    char path[PATH_MAX + 256];
    if (!e && !spawned)
        e = gimpi_job_exec(argv);
    else if (!e && !(e = run_find_spawned(argv[0], path, sizeof path, tried, sizeof tried))) {
        execv(path, argv);      /* a spawned task's program is never looked for on PATH */
        e = errno;
    }
    vmw_write_all(errpipe, &e, sizeof e);
    vmw_write_all(errpipe, tried, strlen(tried));   /* the places looked, when any */
    _exit(127);
}

/*  Reads the child's exec report from ep (and closes it): 0 when the program runs, else
 *  -1 with the failure reported and the child reaped. */
static int s_exec_check(agent_t *self, int id, pid_t pid, int ep, const char *wd,
                        const char *prog)
{
    assert(self);
    int e = 0;
    ssize_t r;
    do
        r = read(ep, &e, sizeof e);
    while (r < 0 && errno == EINTR);
    char tried[1024];           /* the places looked, after a spawned task's errno */
    size_t nt = 0;
    while (r == (ssize_t)sizeof e && nt < sizeof tried - 1) {
        ssize_t k = read(ep, tried + nt, sizeof tried - 1 - nt);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        nt += (size_t)k;
    }
    tried[nt] = 0;
    close(ep);
    if (r != (ssize_t)sizeof e)
        return 0;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (e < 0)
        s_failed(self, id, GIMPI_ENOFILE, "cannot enter working directory %s on host %s", wd);
    else if (e == ENOENT && *tried) {
        char msg[1400];
        snprintf(msg, sizeof msg, "no program %s on host %s: looked for %s; PATH is not "
                 "searched, as in PVM", prog, self->host, tried);
        s_failed(self, id, GIMPI_ENOFILE, "%s", msg);
    } else if (e == ENOENT || e == EACCES || e == ENOEXEC || e == ENOTDIR)
        s_failed(self, id, GIMPI_ENOFILE, "no program %s on host %s", prog);
    else
        s_failed(self, id, GIMPI_EOUTOFRES, "cannot start %s on host %s", prog);
    return -1;
}

/*  Records a started task and watches its output pipes (taken on success).  0, or -1 with
 *  the task killed and the failure reported. */
static int s_task_add(agent_t *self, int id, pid_t pid, int go_fd, int tables_fd, int out,
                      int err)
{
    assert(self);
    atask_t *t = calloc(1, sizeof *t);
    if (!t) {
        kill(pid, SIGKILL);
        s_failed(self, id, GIMPI_ENOMEM, "out of memory%s (host %s)", "");
        return -1;
    }
    *t = (atask_t){ .self = self, .id = id, .pid = pid, .go_fd = go_fd, .tables_fd = tables_fd,
                    .next = self->tasks };
    t->out = (astream_t){ .task = t, .fd = out, .which = 1 };
    t->err = (astream_t){ .task = t, .fd = err, .which = 2 };
    self->tasks = t;
    self->nlive += 3;
    gimpi_loop_fd_add(self->loop, out, GIMPI_LOOP_READ, s_on_output, &t->out);
    gimpi_loop_fd_add(self->loop, err, GIMPI_LOOP_READ, s_on_output, &t->err);
    return 0;
}

/*  Handles START: a static task listens, gets a tables memfd and a go pipe, and waits for
 *  GO; a spawned task runs at once.  Replies STARTED or FAILED. */
static void s_start(agent_t *self, vmw_msg_t *m)
{
    int id = m->i[0], flags = m->i[1], place = m->i[6], count = m->i[7];
    const char *spec = m->s[2], *wd = m->s[3];
    char **argv = m->v[4], **env = m->v[5];
    if (!(flags & AGENT_START_STATIC) || count < 1 || count > AGENT_MAX_VECTOR || place < 0
        || place >= count)
        place = -1;                     /* unbound: spawned, GIMPI_BIND=none, or nonsense */
    else if (place == 0 || !self->bind) {
        gimpi_bind_destroy(&self->bind);        /* the first of a job's tasks here: plan */
        self->bind = gimpi_bind_new(count);
    }
    if (!argv || !argv[0] || !*argv[0]) {
        s_failed(self, id, GIMPI_EBADPARAM, "empty command line%s (host %s)", "");
        return;
    }
    if (s_find(self, id)) {
        s_failed(self, id, GIMPI_EBADPARAM, "task id used twice%s (host %s)", "");
        return;
    }
    char addr[INET_ADDRSTRLEN] = "";
    int listen_fd = -1, local_fd = -1, tables_fd = -1, port = 0, go[2] = { -1, -1 };
    char lerr[256];
    if (s_addr(spec, addr, sizeof addr) < 0) {
        s_failed(self, id, GIMPI_ENOHOST, "no address for '%s' on host %s", spec);
        return;
    }
    if (flags & AGENT_START_STATIC) {
        listen_fd = gimpi_job_listen(addr, &port, lerr, sizeof lerr);
        if (listen_fd < 0) {
            s_failed(self, id, GIMPI_ESYSERR, "%s (host %s)", lerr);
            return;
        }
        local_fd = gimpi_host_listen_local(listen_fd);
        tables_fd = memfd_create("gimpi-tables", MFD_CLOEXEC);
        if (tables_fd < 0 || pipe2(go, O_CLOEXEC) < 0) {
            s_failed(self, id, GIMPI_EOUTOFRES, "memfd or pipe: %s (host %s)", strerror(errno));
            goto fail;
        }
    }
    int out[2] = { -1, -1 }, err[2] = { -1, -1 }, ep[2] = { -1, -1 };
    if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
        s_failed(self, id, GIMPI_EOUTOFRES, "pipe: %s (host %s)", strerror(errno));
        goto fail_pipes;
    }
    /* the hand-over variables, as gimpirun sets them locally */
    char vars[8][48];
    char *extra[10];
    int nx = 0;
    snprintf(vars[nx], sizeof vars[nx], "GIMPI_HOST_ADDR=%s", addr);
    extra[nx] = vars[nx], nx++;
    if (flags & AGENT_START_STATIC) {
        snprintf(vars[nx], 48, "%s=%d", GIMPI_ENV_LISTEN_FD, listen_fd), extra[nx] = vars[nx], nx++;
        snprintf(vars[nx], 48, "%s=%d", GIMPI_ENV_TABLES_FD, tables_fd), extra[nx] = vars[nx], nx++;
        snprintf(vars[nx], 48, "%s=%d", GIMPI_ENV_GO_FD, go[0]), extra[nx] = vars[nx], nx++;
        if (local_fd >= 0)
            snprintf(vars[nx], 48, "%s=%d", GIMPI_ENV_LOCAL_LISTEN_FD, local_fd),
            extra[nx] = vars[nx], nx++;
    }
    extra[nx] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int keep[] = { listen_fd, local_fd, tables_fd, go[0] };
        for (char **e = extra; *e; e++)
            putenv(*e);
        if (place >= 0)
            gimpi_bind_child(self->bind, place);
        s_child(self, argv, env, wd, out[1], err[1], ep[1], keep, 4,
                !(flags & AGENT_START_STATIC));
    }
    close(out[1]), close(err[1]), close(ep[1]);
    if (place >= 0 && place == count - 1)
        gimpi_bind_destroy(&self->bind);        /* the last: the tasks hold their cores */
    out[1] = err[1] = ep[1] = -1;
    if (pid < 0) {
        s_failed(self, id, GIMPI_EOUTOFRES, "fork: %s (host %s)", strerror(errno));
        goto fail_pipes;
    }
    int rc = s_exec_check(self, id, pid, ep[0], wd, argv[0]);
    ep[0] = -1;
    if (rc < 0 || s_task_add(self, id, pid, go[1], tables_fd, out[0], err[0]) < 0)
        goto fail_pipes;
    if (go[0] >= 0)
        close(go[0]);
    if (listen_fd >= 0)
        close(listen_fd);
    if (local_fd >= 0)
        close(local_fd);
    size_t flen;
    uint8_t *f = vmw_encode(&flen, AGENT_STARTED, id, (int)pid, port, addr);
    s_send(self, f, flen);
    return;
fail_pipes:
    for (int k = 0; k < 2; k++) {
        if (out[k] >= 0) close(out[k]);
        if (err[k] >= 0) close(err[k]);
        if (ep[k] >= 0) close(ep[k]);
    }
fail:
    if (listen_fd >= 0) close(listen_fd);
    if (local_fd >= 0) close(local_fd);
    if (tables_fd >= 0) close(tables_fd);
    if (go[0] >= 0) close(go[0]);
    if (go[1] >= 0) close(go[1]);
}

/*  Handles GO: the tables into the task's memfd, then the go line down its pipe. */
static void s_go(agent_t *self, vmw_msg_t *m)
{
    atask_t *t = s_find(self, m->i[0]);
    if (!t || t->go_fd < 0)
        return;
    if (pwrite(t->tables_fd, m->b[1], m->blen[1], 0) == (ssize_t)m->blen[1]) {
        size_t n = strlen(m->s[2]);
        if (write(t->go_fd, m->s[2], n) != (ssize_t)n)
            (void)0;            /* the task is gone: its EXIT tells */
    }
    gimpi_key_wipe(m->s[2], strlen(m->s[2]));
    close(t->go_fd);
    close(t->tables_fd);
    t->go_fd = t->tables_fd = -1;
}

/*  Signals every task still running and every process of the job below us. */
static void s_signal_all(agent_t *self, int sig)
{
    for (atask_t *t = self->tasks; t; t = t->next)
        if (!t->exited)
            kill(t->pid, sig);
    proctree_proc_t *left;
    int n = proctree_list(NULL, 0, &left);
    proctree_signal(left, n, sig);
    free(left);
}

/*  After a QUIT or the end of input: SIGKILL whatever SIGTERM did not end. */
static void s_on_kill_timer(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop, (void)id;
    agent_t *self = arg;
    self->kill_timer = 0;
    s_signal_all(self, SIGKILL);
    s_check_done(self);
}

/*  Ends the agent: every task gets SIGTERM, then SIGKILL after the grace. */
static void s_quit(agent_t *self)
{
    if (self->quitting)
        return;
    self->quitting = true;
    for (atask_t *t = self->tasks; t; t = t->next)
        if (t->go_fd >= 0) {        /* never started: closing the pipe fails its startup */
            close(t->go_fd);
            close(t->tables_fd);
            t->go_fd = t->tables_fd = -1;
        }
    s_signal_all(self, SIGTERM);
    self->kill_timer = gimpi_loop_timer_add(self->loop, KILL_GRACE_MS, 0, s_on_kill_timer, self);
    s_check_done(self);
}

/*  CLOCK: this host's time of day, at once (pvm_hostsync). */
static void s_clock(agent_t *self, int id)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    size_t flen;
    uint8_t *f = vmw_encode(&flen, AGENT_CLOCKED, id, (int)tv.tv_sec, (int)tv.tv_usec);
    s_send(self, f, flen);
}

/*  TIME: this host's CLOCK_REALTIME in ns, at once (gimpirun -trace measures the offset
 *  of this host's clock from its own over round trips, as pvm_hostsync does). */
static void s_time(agent_t *self, int id)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    size_t flen;
    uint8_t *f = vmw_encode(&flen, AGENT_TIMED, id, (int)(uint32_t)(ns >> 32),
                            (int)(uint32_t)ns);
    s_send(self, f, flen);
}

/*  TRACE_DIR: makes the job's trace directory here, and the folders above it, so that
 *  the tasks can write their files (gimpirun -trace; a shared one is there already). */
static void s_trace_dir(agent_t *self, const char *dir)
{
    char path[PATH_MAX];
    if (dir[0] != '/' || snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return;
    for (char *p = path + 1;; p++) {
        if (*p && *p != '/')
            continue;
        char c = *p;
        *p = 0;
        if (mkdir(path, 0777) < 0 && errno != EEXIST) {
            fprintf(stderr, "gimpi-agent on %s: cannot make the trace directory %s: %s\n",
                    self->host, path, strerror(errno));
            return;
        }
        if (!c)
            return;
        *p = c;
    }
}

/*  TRACE_GET: the trace files of the job's tasks in dir (gimpirun -trace, at the job's
 *  end: the tasks here have ended), sent as TRACE_FILE frames of at most
 *  AGENT_TRACE_CHUNK bytes, then TRACE_DONE with their count and 0 or the last errno.
 *  When dir holds the file token (gimpirun made it there), the directory is the
 *  launcher's own, shared: nothing is sent.  Only regular files, never through a link. */
static void s_trace_get(agent_t *self, const char *dir, const char *token)
{
    char path[PATH_MAX];
    struct stat st;
    bool shared = token[0] && !strchr(token, '/')
                  && snprintf(path, sizeof path, "%s/%s", dir, token) < (int)sizeof path
                  && lstat(path, &st) == 0;
    DIR *d = shared ? NULL : opendir(dir);
    int nfiles = 0, err = shared || d ? 0 : errno;
    uint8_t *buf = d ? malloc(AGENT_TRACE_CHUNK) : NULL;
    size_t sl = strlen(GIMPI_TEV_SUFFIX), flen;
    struct dirent *e;
    while (buf && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l <= sl || strcmp(e->d_name + l - sl, GIMPI_TEV_SUFFIX)
            || snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            err = fd < 0 ? errno : err;
            if (fd >= 0)
                close(fd);
            continue;
        }
        ssize_t r;
        int64_t off = 0;
        while (off <= INT32_MAX - AGENT_TRACE_CHUNK && (r = read(fd, buf, AGENT_TRACE_CHUNK)) > 0) {
            uint8_t *f = vmw_encode(&flen, AGENT_TRACE_FILE, e->d_name, (int)off, buf,
                                    (size_t)r);
            s_send(self, f, flen);
            off += r;
        }
        close(fd);
        nfiles += off > 0;
        unlink(path);               /* a copy of what is now the launcher's */
    }
    free(buf);
    if (d) {
        closedir(d);
        rmdir(dir);                 /* when the tasks left nothing else there */
    }
    uint8_t *f = vmw_encode(&flen, AGENT_TRACE_DONE, nfiles, shared, err);
    s_send(self, f, flen);
}

/*  PROBE: can this host open a TCP connection to addr (a name or an IPv4 address) at
 *  port, the job's groupd?  Answers PROBED: 0, or the errno and its text.  The connect
 *  is bounded by AGENT_PROBE_MS; it comes before any task of a host added later, so the
 *  agent has nothing else to serve meanwhile.  Nothing is sent: the connection closes. */
static void s_probe(agent_t *self, const char *addr, int port)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
    char serv[16];
    int err = 0, fd = -1;
    snprintf(serv, sizeof serv, "%d", port);
    if (port <= 0 || port > 65535 || getaddrinfo(addr, serv, &hints, &res) != 0 || !res)
        err = EADDRNOTAVAIL;
    else if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
        err = errno;
    else if (connect(fd, res->ai_addr, res->ai_addrlen) < 0 && (err = errno) == EINPROGRESS) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        socklen_t len = sizeof err;
        int n;
        while ((n = poll(&p, 1, AGENT_PROBE_MS)) < 0 && errno == EINTR)
            ;
        if (n <= 0)
            err = ETIMEDOUT;
        else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            err = errno;
    }
    if (res)
        freeaddrinfo(res);
    if (fd >= 0)
        close(fd);
    char why[128];
    snprintf(why, sizeof why, "%s", err == ETIMEDOUT ? "no answer within 3 s" : strerror(err));
    size_t flen;
    uint8_t *f = vmw_encode(&flen, AGENT_PROBED, err, err ? why : "");
    s_send(self, f, flen);
}

/*  FORGET: the journal of a groupd of the job that a standby replaced (the new primary
 *  has all it held) is removed from this host's private runtime directory.  Only a bare
 *  name of a job's groupd journal ("groupd-tcp-....journal") is taken. */
static void s_forget(agent_t *self, const char *name)
{
    size_t n = strlen(name);
    char dir[GIMPI_KEY_PATHLEN], err[256], path[GIMPI_KEY_PATHLEN + 256];
    if (strchr(name, '/') || strncmp(name, "groupd-tcp-", 11) || n < 19 || n > 200
        || strcmp(name + n - 8, ".journal") || gimpi_rundir(dir, sizeof dir, err, sizeof err) < 0)
        return;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (unlink(path) < 0 && errno != ENOENT)
        fprintf(stderr, "gimpi-agent on %s: cannot remove %s: %s\n", self->host, path,
                strerror(errno));
}

/*  The launcher wrote something. */
static void s_on_input(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)events;
    agent_t *self = arg;
    int rc = vmw_reader_fill(self->in, fd);
    vmw_msg_t m;
    char err[256];
    int got;
    while ((got = vmw_reader_next(self->in, &m, err, sizeof err)) == 1) {
        if (m.type == AGENT_START && !self->quitting)
            s_start(self, &m);
        else if (m.type == AGENT_GO)
            s_go(self, &m);
        else if (m.type == AGENT_KILL) {
            atask_t *t = s_find(self, m.i[0]);
            if (t && !t->exited && m.i[1] > 0 && m.i[1] < 65)
                kill(t->pid, m.i[1]);
        } else if (m.type == AGENT_QUIT)
            s_quit(self);
        else if (m.type == AGENT_CLOCK)
            s_clock(self, m.i[0]);
        else if (m.type == AGENT_TIME)
            s_time(self, m.i[0]);
        else if (m.type == AGENT_TRACE_GET)
            s_trace_get(self, m.s[0], m.s[1]);
        else if (m.type == AGENT_TRACE_DIR)
            s_trace_dir(self, m.s[0]);
        else if (m.type == AGENT_PROBE)
            s_probe(self, m.s[0], m.i[1]);
        else if (m.type == AGENT_FORGET)
            s_forget(self, m.s[0]);
        vmw_msg_free(&m);
    }
    if (got < 0)
        fprintf(stderr, "gimpi-agent on %s: bad input from the launcher: %s\n", self->host, err);
    if (rc <= 0 || got < 0) {
        gimpi_loop_fd_del(loop, fd);
        s_quit(self);
    }
}

/*  SIGCHLD: reap and report; SIGTERM/SIGINT/SIGHUP: quit. */
static void s_on_signal(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)events;
    agent_t *self = arg;
    struct signalfd_siginfo si;
    while (read(fd, &si, sizeof si) == (ssize_t)sizeof si)
        if (si.ssi_signo != SIGCHLD)
            s_quit(self);
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        for (atask_t *t = self->tasks; t; t = t->next)
            if (t->pid == pid && !t->exited) {
                t->exited = true;
                self->nlive--;
                s_drain_ready(self, &t->out);
                s_drain_ready(self, &t->err);
                size_t flen;
                uint8_t *f = vmw_encode(&flen, AGENT_EXIT, t->id, status);
                s_send(self, f, flen);
            }
    s_check_done(self);
}

/*  The launcher sent the key's fingerprint only (its engine may not encrypt): this host's
 *  own key for the user (gimpi_key.h's order: GIMPI_KEY_FILE, ~/.gimpi/key, ...) must be
 *  the job's.  It goes into the tasks' sealed memfd as a shipped key would.  0 or -1. */
static int s_own_key(agent_t *self, const char *want)
{
    gimpi_key_t key;
    char from[GIMPI_KEY_PATHLEN + 64], err[GIMPI_KEY_ERRLEN], fp[9];
    if (gimpi_key_default(&key, from, sizeof from, err, sizeof err) < 0) {
        fprintf(stderr, "gimpi-agent on %s: the launcher sends no key over this engine, and "
                "there is none here: %s; give every host the same ~/.gimpi/key\n", self->host,
                err);
        return -1;
    }
    int rc = -1;
    if (strcmp(gimpi_key_fingerprint(&key, fp), want ? want : ""))
        fprintf(stderr, "gimpi-agent on %s: the key here, %s (fingerprint %s), is not the "
                "job's (fingerprint %.8s); the launcher sends no key over this engine: give "
                "every host the same ~/.gimpi/key\n", self->host, from, fp, want ? want : "");
    else if ((self->key_fd = gimpi_key_memfd(&key, 1)) < 0)
        fprintf(stderr, "gimpi-agent on %s: cannot keep the key in a sealed memfd: %s\n",
                self->host, strerror(errno));
    else
        rc = 0;
    gimpi_key_wipe(&key, sizeof key);
    return rc;
}

/*  Reads the KEY frame (bounded) into a memfd the tasks inherit.  0 or -1. */
static int s_read_key(agent_t *self)
{
    int64_t deadline = gimpi_loop_now_ms() + KEY_WAIT_MS;
    vmw_msg_t m;
    char err[256];
    for (;;) {
        int got = vmw_reader_next(self->in, &m, err, sizeof err);
        if (got == 1)
            break;
        if (got < 0) {
            fprintf(stderr, "gimpi-agent on %s: %s\n", self->host, err);
            return -1;
        }
        int64_t left = deadline - gimpi_loop_now_ms();
        struct pollfd p = { .fd = 0, .events = POLLIN };
        if (left <= 0 || poll(&p, 1, (int)left) <= 0 || vmw_reader_fill(self->in, 0) <= 0) {
            fprintf(stderr, "gimpi-agent on %s: no key from the launcher\n", self->host);
            return -1;
        }
    }
    int rc = -1;
    if (m.type == AGENT_KEYFP)
        rc = s_own_key(self, m.s[0]);
    else if (m.type != AGENT_KEY || m.blen[0] != sizeof(gimpi_key_t))
        fprintf(stderr, "gimpi-agent on %s: the launcher's first frame is not the key\n",
                self->host);
    else {
        gimpi_key_t key;
        memcpy(&key, m.b[0], sizeof key);
        self->key_fd = gimpi_key_memfd(&key, 1);
        rc = self->key_fd < 0 ? -1 : 0;
        gimpi_key_wipe(&key, sizeof key);
        gimpi_key_wipe(m.b[0], m.blen[0]);
        if (rc < 0)
            fprintf(stderr, "gimpi-agent on %s: cannot keep the key in a sealed memfd: %s\n",
                    self->host, strerror(errno));
    }
    vmw_msg_free(&m);
    return rc;
}

/*  Frees the task list. */
static void s_free_tasks(agent_t *self)
{
    while (self->tasks) {
        atask_t *t = self->tasks;
        self->tasks = t->next;
        free(t->out.buf);
        free(t->err.buf);
        free(t);
    }
}

int main(int argc, char **argv)
{
    agent_t self = { .key_fd = -1, .sigfd = -1 };
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--name") && i + 1 < argc)
            name = argv[++i];
        else if (!strcmp(argv[i], "--selftest"))
            return vmw_selftest() == 0 ? 0 : 1;
        else {
            fprintf(stderr, "usage: gimpi-agent [--name HOST]  (started by gimpirun; "
                            "speaks its protocol on stdin and stdout)\n");
            return 2;
        }
    }
    struct utsname u;
    uname(&u);
    snprintf(self.host, sizeof self.host, "%s", name ? name : u.nodename);
    if (isatty(0)) {
        fprintf(stderr, "gimpi-agent: started by gimpirun over ssh or srun, not by hand\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    self.sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    self.in = vmw_reader_new();
    self.loop = gimpi_loop_new();
    if (self.sigfd < 0 || !self.in || !self.loop) {
        fprintf(stderr, "gimpi-agent on %s: out of resources\n", self.host);
        return 1;
    }
    if (s_read_key(&self) < 0)
        return 1;
    proctree_become_reaper();           /* (an old kernel: spawned tasks are init's) */
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t flen;
    uint8_t *f = vmw_encode(&flen, AGENT_HELLO, AGENT_VERSION, self.host, vmw_arch(),
                              (int)(ncpu > 0 ? ncpu : 1));
    s_send(&self, f, flen);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    gimpi_loop_fd_add(self.loop, 0, GIMPI_LOOP_READ, s_on_input, &self);
    gimpi_loop_fd_add(self.loop, self.sigfd, GIMPI_LOOP_READ, s_on_signal, &self);
    s_on_input(self.loop, 0, GIMPI_LOOP_READ, &self);   /* frames read with the key */
    gimpi_loop_run(self.loop);
    gimpi_loop_destroy(&self.loop);
    gimpi_bind_destroy(&self.bind);
    vmw_reader_destroy(&self.in);
    s_free_tasks(&self);
    close(self.key_fd);
    return 0;
}
