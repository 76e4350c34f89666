/*  run_hosts.c — the launcher's hosts: this machine, and one gimpi-agent per other host,
 *  started through an existing remote-start engine and kept for the job's life.
 *
 *  The engine is ssh (GIMPI_RSH replaces the command, as PVM_RSH does for PVM) or, inside
 *  a Slurm allocation, an srun step on the chosen node.  The agent's stdin, stdout and
 *  stderr are pipes of ours: frames go both ways (base/gimpi_vmwire.h), the engine's own
 *  complaints (a refused key, an unknown host) arrive on stderr and are shown with the
 *  host's name.  The job's key is the first frame; it never appears on a command line.
 *  Writes to an agent are queued and sent as its pipe drains, so the loop never blocks on
 *  a slow host.  A host whose channel ends is dead: its tasks are reported lost.  What
 *  happens to hosts and to their tasks goes up through the launcher's events
 *  (run_events_t): this file calls nothing above it by name.
 */
#include "config.h"
#include "programs/run_hosts.h"
#include "programs/run_proc.h"
#include "base/gimpi_key.h"
#include "base/gimpi_tunables.h"
#include "task/gimpi_job.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

enum {
    RSH_MAX_ARGS = 64,          /* words of GIMPI_RSH */
    HOST_DTID_BASE = 0x40000000,/* host ids: this | (index + 1) << 18, apart from task tids */
};

/*  The default remote-start command: BatchMode (never a password prompt that would hang
 *  the job), a bounded connect, and keep-alives so that a host whose link breaks is seen
 *  dead in about 5 s. */
static const char *const s_default_rsh =
    "ssh -o BatchMode=yes -o ConnectTimeout=10 -o ServerAliveInterval=1 "
    "-o ServerAliveCountMax=5 -x";

/*  A new host record for info. */
static host_t *s_host_new(launcher_t *self, const gimpi_hostinfo_t *info)
{
    host_t *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->self = self;
    h->info = *info;
    h->local = gimpi_hostset_is_local(info->ip[0] ? info->ip : info->name);
    h->to_fd = h->from_fd = h->err_fd = h->probe_fd = -1;
    snprintf(h->arch, sizeof h->arch, "%s", h->local ? vmw_arch() : info->arch);
    h->ncpu = h->local ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 0;
    h->state = h->local ? HOST_UP : HOST_STARTING;
    return h;
}

/*  Appends a host; its index is its place in the table.  0 or -1. */
static int s_append(launcher_t *self, host_t *h)
{
    host_t **hs = realloc(self->hosts, (size_t)(self->nhosts + 1) * sizeof *hs);
    if (!hs)
        return -1;
    self->hosts = hs;
    h->index = self->nhosts;
    h->dtid = HOST_DTID_BASE | (self->nhosts + 1) << 18;
    self->hosts[self->nhosts++] = h;
    if (!h->local)
        self->multihost = true;
    return 0;
}

/*  The IPv4 address of name (dotted or resolved), or -1. */
static int s_resolve(const char *name, struct in_addr *out)
{
    if (inet_pton(AF_INET, name, out) == 1)
        return 0;
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
    if (getaddrinfo(name, NULL, &hints, &res) != 0 || !res)
        return -1;
    *out = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 0;
}

/*  True when the host's name or ip= is a loopback one ("localhost", 127.x.y.z, ::1): a
 *  host set of these alone keeps the job on the loopback. */
static bool s_loopback_host(const host_t *h)
{
    const char *name = h->info.ip[0] ? h->info.ip : h->info.name;
    struct in_addr a;
    if (!strcasecmp(name, "localhost") || !strcmp(name, "::1"))
        return true;
    return inet_pton(AF_INET, name, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/*  The local address of the route to host h (resolved) into self->myaddr.  0 or -1. */
static int s_route_to(launcher_t *self, const host_t *h)
{
    const char *name = h->info.ip[0] ? h->info.ip : h->info.name;
    char dotted[INET_ADDRSTRLEN], mine[sizeof self->myaddr];
    struct in_addr a;
    if (s_resolve(name, &a) < 0 || !inet_ntop(AF_INET, &a, dotted, sizeof dotted)
        || gimpi_hostset_route_addr(dotted, mine, sizeof mine) < 0)
        return -1;
    memcpy(self->myaddr, mine, sizeof mine);
    return 0;
}

/*  This host's address on the job's network: -host, else -if, else the one that reaches
 *  the first other host started now, else (a host set that may grow: pvm_addhosts of a
 *  '&' host or of any other) the one that reaches the first '&' host, else the one other
 *  hosts most likely reach this machine at.  The loopback only for a job of this machine
 *  alone (no host set, or one of loopback names only) or a machine without a network.
 *  0, or -1 with a message on stderr. */
static int s_choose_addr(launcher_t *self)
{
    char err[256];
    if (self->host) {
        snprintf(self->myaddr, sizeof self->myaddr, "%s", self->host);
        return 0;
    }
    if (self->ifspec) {
        if (gimpi_hostset_if_addr(self->ifspec, self->myaddr, sizeof self->myaddr, err,
                                  sizeof err) < 0) {
            fprintf(stderr, "gimpirun: -if %s: %s\n", self->ifspec, err);
            return -1;
        }
        return 0;
    }
    snprintf(self->myaddr, sizeof self->myaddr, "127.0.0.1");
    bool grows = false;
    for (int i = 0; i < self->nhosts; i++) {
        host_t *h = self->hosts[i];
        grows |= gimpi_hostset_size(self->hostset) > 0 && !s_loopback_host(h);
        if (h->local || h->info.later)
            continue;
        if (s_route_to(self, h) < 0) {
            fprintf(stderr, "gimpirun: host %s: no route to it (is the name right?)\n",
                    h->info.name);
            return -1;
        }
        return 0;
    }
    for (int i = 0; grows && i < self->nhosts; i++)
        if (!self->hosts[i]->local && s_route_to(self, self->hosts[i]) == 0
            && strncmp(self->myaddr, "127.", 4) != 0)
            return 0;
    if (grows && gimpi_hostset_lan_addr(self->myaddr, sizeof self->myaddr) < 0)
        snprintf(self->myaddr, sizeof self->myaddr, "127.0.0.1");
    return 0;
}

/*  Builds the host table from the host set (or this machine alone) and chooses this
 *  host's address on the job's network.  0, or -1 with a message on stderr. */
int run_hosts_init(launcher_t *self)
{
    int n = gimpi_hostset_size(self->hostset);
    if (n == 0) {
        gimpi_hostinfo_t me = { .slots = 0, .speed = 1000 };
        gethostname(me.name, sizeof me.name - 1);
        host_t *h = s_host_new(self, &me);
        if (!h || s_append(self, h) < 0)
            return -1;
        h->local = true;
        h->state = HOST_UP;
    }
    for (int i = 0; i < n; i++) {
        host_t *h = s_host_new(self, gimpi_hostset_get(self->hostset, i));
        if (!h || s_append(self, h) < 0)
            return -1;
    }
    return s_choose_addr(self);
}

/*  Queues a frame for an agent (takes the frame). */
int run_hosts_send(host_t *h, uint8_t *frame)
{
    if (!frame)
        return -1;
    size_t len = vmw_frame_len(frame);
    if (h->state == HOST_DEAD || h->to_fd < 0) {
        free(frame);
        return -1;
    }
    if (h->outq_len + len > h->outq_cap) {
        size_t cap = h->outq_cap ? h->outq_cap : 4096;
        while (cap < h->outq_len + len)
            cap *= 2;
        uint8_t *q = realloc(h->outq, cap);
        if (!q) {
            free(frame);
            return -1;
        }
        h->outq = q;
        h->outq_cap = cap;
    }
    memcpy(h->outq + h->outq_len, frame, len);
    h->outq_len += len;
    gimpi_key_wipe(frame, len);
    free(frame);
    gimpi_loop_fd_set(h->self->loop, h->to_fd, GIMPI_LOOP_WRITE);
    return 0;
}

static void s_host_dead(launcher_t *self, host_t *h, const char *why);

/*  The agent's stdin can take more. */
static void s_on_writable(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)events;
    host_t *h = arg;
    if (h->outq_len) {
        ssize_t w = write(fd, h->outq, h->outq_len);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (w < 0) {
            s_host_dead(h->self, h, "its input pipe broke");
            return;
        }
        gimpi_key_wipe(h->outq, (size_t)w);
        memmove(h->outq, h->outq + w, h->outq_len - (size_t)w);
        h->outq_len -= (size_t)w;
    }
    if (!h->outq_len) {
        gimpi_loop_fd_set(loop, fd, 0);
        if (h->quit_sent) {     /* nothing more for it: EOF ends it even if QUIT is lost */
            gimpi_loop_fd_del(loop, fd);
            close(fd);
            h->to_fd = -1;
        }
    }
}

/*  The task of a frame's id, when it is on this host. */
static task_t *s_task(launcher_t *self, host_t *h, int id)
{
    if (id < 0 || id >= self->nall || self->tasks[id]->host != h->index)
        return NULL;
    return self->tasks[id];
}

/*  A host added later (its agent said HELLO) must show that it reaches this host's
 *  announced address, where groupd and the tasks listen: a listener of ours there, in the
 *  tasks' port range, and a PROBE to its agent to connect to it.  0 when sent, else -1
 *  (the host is then up without the check). */
static int s_probe(launcher_t *self, host_t *h)
{
    char err[256];
    int port = 0;
    h->probe_fd = gimpi_job_listen(self->myaddr, &port, err, sizeof err);
    if (h->probe_fd < 0)
        return -1;
    fcntl(h->probe_fd, F_SETFD, FD_CLOEXEC);     /* not for the tasks we start meanwhile */
    size_t len;
    if (run_hosts_send(h, vmw_encode(&len, AGENT_PROBE, self->myaddr, port)) < 0) {
        close(h->probe_fd);
        h->probe_fd = -1;
        return -1;
    }
    return 0;
}

/*  PROBED: a host added later is up when it reached the job's groupd; else it is not
 *  added (PvmCantStart), and gimpirun says which address it could not reach and why. */
static void s_probed(launcher_t *self, host_t *h, int err, const char *why)
{
    if (h->probe_fd < 0 || h->state != HOST_STARTING)
        return;
    close(h->probe_fd);
    h->probe_fd = -1;
    if (err == 0) {
        h->state = HOST_UP;
        self->ev->host_changed(self->ev->arg);
        return;
    }
    fprintf(stderr, "gimpirun: host %s cannot reach this job at %s: %s; its tasks could "
            "reach neither groupd nor the others, so it is not added (give gimpirun -if the "
            "network the hosts share)\n", h->info.name, self->myaddr, why);
    s_host_dead(self, h, NULL);
}

/*  One frame from an agent. */
static void s_frame(launcher_t *self, host_t *h, vmw_msg_t *m)
{
    task_t *t;
    switch (m->type) {
    case AGENT_HELLO:
        if (m->i[0] != AGENT_VERSION) {
            fprintf(stderr, "gimpirun: host %s: agent speaks version %d, we speak %d\n",
                    h->info.name, m->i[0], AGENT_VERSION);
            s_host_dead(self, h, NULL);
            return;
        }
        snprintf(h->arch, sizeof h->arch, "%s", h->info.arch[0] ? h->info.arch : m->s[2]);
        h->ncpu = m->i[3];
        if (self->probe_added && s_probe(self, h) == 0)
            break;                      /* added later: up once it reached us */
        h->state = HOST_UP;
        self->ev->host_changed(self->ev->arg);
        break;
    case AGENT_PROBED:
        s_probed(self, h, m->i[0], m->s[1]);
        break;
    case AGENT_STARTED:
        if ((t = s_task(self, h, m->i[0]))) {
            t->pid = m->i[1];
            t->port = m->i[2];
            snprintf(t->addr, sizeof t->addr, "%s", m->s[3]);
            t->started = true;
            self->ev->task_started(self->ev->arg, t);
        }
        break;
    case AGENT_FAILED:
        if ((t = s_task(self, h, m->i[0])) && !t->exited) {
            t->start_err = m->i[1] < 0 ? m->i[1] : GIMPI_ECANTSTART;
            fprintf(stderr, "gimpirun: %s\n", m->s[2]);
            t->started = true;
            self->ev->task_ended(self->ev->arg, t, 127 << 8);
            self->ev->progress(self->ev->arg);
        }
        break;
    case AGENT_OUT:
        if ((t = s_task(self, h, m->i[0])))
            self->ev->task_output(self->ev->arg, t, m->i[1] == 2 ? 2 : 1, (const char *)m->b[2],
                                  m->blen[2]);
        break;
    case AGENT_EXIT:
        if ((t = s_task(self, h, m->i[0])) && !t->exited)
            self->ev->task_ended(self->ev->arg, t, m->i[1]);
        break;
    case AGENT_CLOCKED:
        self->ev->host_clock(self->ev->arg, m->i[0], m->i[1], m->i[2]);
        break;
    case AGENT_TIMED:
    case AGENT_TRACE_FILE:
    case AGENT_TRACE_DONE:
        self->ev->trace_frame(self->ev->arg, h->index, m);
        break;
    default:
        fprintf(stderr, "gimpirun: host %s: unexpected %s frame from its agent\n",
                h->info.name, vmw_name(m->type));
        break;
    }
}

/*  The agent wrote frames (or its channel ended). */
static void s_on_frames(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)events;
    host_t *h = arg;
    launcher_t *self = h->self;
    int rc = vmw_reader_fill(h->in, fd);
    vmw_msg_t m;
    char err[256];
    int got;
    while (h->state != HOST_DEAD && (got = vmw_reader_next(h->in, &m, err, sizeof err)) != 0) {
        if (got < 0) {
            fprintf(stderr, "gimpirun: host %s: bad frame from its agent: %s\n", h->info.name,
                    err);
            s_host_dead(self, h, NULL);
            return;
        }
        s_frame(self, h, &m);
        vmw_msg_free(&m);
    }
    if (rc <= 0 && h->state != HOST_DEAD)
        s_host_dead(self, h, h->quit_sent ? NULL : "its agent's channel ended");
}

/*  The engine (ssh, srun) or the agent wrote to stderr: shown, and the last line kept. */
static void s_on_stderr(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)events;
    host_t *h = arg;
    char buf[4096];
    ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        gimpi_loop_fd_del(loop, fd);
        close(fd);
        h->err_fd = -1;
        h->self->ev->check_done(h->self->ev->arg);
        return;
    }
    for (ssize_t i = 0; i < r; i++) {
        char c = buf[i];
        if (c == '\r')
            continue;
        if (c != '\n' && h->errlen < sizeof h->errline - 1) {
            h->errline[h->errlen++] = c;
            continue;
        }
        if (c == '\n') {
            h->errline[h->errlen] = 0;
            if (h->errlen)
                fprintf(stderr, "gimpirun: host %s: %s\n", h->info.name, h->errline);
            h->errlen = 0;
        }
    }
}

/*  A host is gone: its tasks are lost (ended as if killed), its descriptors closed. */
static void s_host_dead(launcher_t *self, host_t *h, const char *why)
{
    if (h->state == HOST_DEAD)
        return;
    bool was_up = h->state == HOST_UP;
    h->state = HOST_DEAD;
    if (h->probe_fd >= 0)
        close(h->probe_fd);
    h->probe_fd = -1;
    if (why)
        fprintf(stderr, "gimpirun: host %s %s: %s\n", h->info.name,
                was_up ? "is gone" : "did not start", why);
    int fds[3] = { h->to_fd, h->from_fd, h->err_fd };
    for (int k = 0; k < 3; k++)
        if (fds[k] >= 0) {
            if (k == 2) {       /* keep reading the engine's last words until EOF */
                continue;
            }
            gimpi_loop_fd_del(self->loop, fds[k]);
            close(fds[k]);
        }
    h->to_fd = h->from_fd = -1;
    if (h->pid > 0)
        kill(h->pid, SIGTERM);
    for (int i = 0; i < self->nall; i++) {
        task_t *t = self->tasks[i];
        if (t->host == h->index && !t->exited) {
            if (!t->started)
                t->start_err = GIMPI_EHOSTFAIL;
            t->started = true;
            self->ev->task_ended(self->ev->arg, t, SIGKILL);
        }
    }
    self->ev->host_changed(self->ev->arg);
}

/*  Quotes a word for the remote shell ssh hands its command to. */
static void s_quote(char *out, size_t size, const char *word)
{
    size_t n = 0;
    if (n < size - 1)
        out[n++] = '\'';
    for (const char *p = word; *p && n + 5 < size; p++) {
        if (*p == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else
            out[n++] = *p;
    }
    if (n < size - 1)
        out[n++] = '\'';
    out[n] = 0;
}

/*  The agent's path on the other hosts: dx= of the host, else -agent, else
 *  the gimpi-agent beside this gimpirun (the same installation path on every host, as
 *  Open MPI assumes with --prefix). */
static void s_agent_path(launcher_t *self, host_t *h, char *out, size_t size)
{
    if (h->info.dx[0]) {
        snprintf(out, size, "%s", h->info.dx);
        return;
    }
    if (self->agent) {
        snprintf(out, size, "%s", self->agent);
        return;
    }
    if (run_beside_me("gimpi-agent", out, size) < 0)
        snprintf(out, size, "gimpi-agent");
}

/*  1 when the first word of the command rsh names ssh (a path to it, too). */
static int s_rsh_is_ssh(const char *rsh)
{
    const char *w = rsh + strspn(rsh, " \t");
    size_t n = strcspn(w, " \t");
    const char *base = w;
    for (size_t i = 0; i < n; i++)
        if (w[i] == '/')
            base = w + i + 1;
    return (size_t)(w + n - base) == 3 && !strncmp(base, "ssh", 3);
}

/*  1 when the engine is known to encrypt what it carries (ssh: GIMPI_RSH unset, or an
 *  ssh); 0 for srun (whether Slurm's I/O crosses the network encrypted depends on the
 *  site) and any other GIMPI_RSH (rsh sends it in clear).  Such an engine carries only the
 *  key's fingerprint: the agent reads the user's own key there (doc/security.md). */
static int s_engine_encrypts(const launcher_t *self)
{
    if (self->slurm)
        return 0;
    const char *rsh = gimpi_env("GIMPI_RSH");
    return !rsh || !*rsh || s_rsh_is_ssh(rsh);
}

/*  Fills argv with the engine's command for host h. */
static int s_engine_argv(launcher_t *self, host_t *h, char **argv, char *words, size_t wsize,
                         char *cmd, size_t csize)
{
    char agent[PATH_MAX], qa[PATH_MAX * 2], qn[600];
    s_agent_path(self, h, agent, sizeof agent);
    int n = 0;
    if (self->slurm) {
        /* --unbuffered: slurmstepd otherwise holds a task's output until a newline, and
           frames have none; with it the agent's stdout is a raw pty (bytes pass as they
           are), its stdin and stderr stay pipes */
        static char *const srun[] = { "srun", "--nodes=1", "--ntasks=1", "--overlap",
                                      "--kill-on-bad-exit=1", "--quiet", "--unbuffered",
                                      NULL };
        for (int k = 0; srun[k]; k++)
            argv[n++] = srun[k];
        snprintf(words, wsize, "--nodelist=%s", h->info.name);
        argv[n++] = words;
        snprintf(cmd, csize, "%s", agent);
        argv[n++] = cmd;
        argv[n++] = "--name";
        argv[n++] = h->info.name;
        argv[n] = NULL;
        return 0;
    }
    const char *rsh = gimpi_env("GIMPI_RSH");
    snprintf(words, wsize, "%s", rsh && *rsh ? rsh : s_default_rsh);
    for (char *w = strtok(words, " \t"); w; w = strtok(NULL, " \t"))
        if (n < RSH_MAX_ARGS - 6)
            argv[n++] = w;
    if (n == 0)
        return -1;
    /* an ssh given in GIMPI_RSH keeps our safety options (ssh takes the first value of
       an option: these come first): never a prompt, and a dead link seen in ~5 s */
    if (rsh && *rsh && s_rsh_is_ssh(rsh) && n + 6 < RSH_MAX_ARGS - 6) {
        static char *const safe[] = { "-o", "BatchMode=yes", "-o", "ServerAliveInterval=1",
                                      "-o", "ServerAliveCountMax=5" };
        memmove(argv + 7, argv + 1, (size_t)(n - 1) * sizeof *argv);
        for (int k = 0; k < 6; k++)
            argv[1 + k] = safe[k];
        n += 6;
    }
    if (h->info.login[0]) {
        argv[n++] = "-l";
        argv[n++] = h->info.login;
    }
    argv[n++] = h->info.ip[0] ? h->info.ip : h->info.name;
    s_quote(qa, sizeof qa, agent);
    s_quote(qn, sizeof qn, h->info.name);
    snprintf(cmd, csize, "exec %s --name %s", qa, qn);
    argv[n++] = cmd;
    argv[n] = NULL;
    return 0;
}

/*  Starts the agent of host h: the engine with three pipes, and the key as first frame
 *  (its fingerprint only, over an engine not known to encrypt). */
static int s_start_agent(launcher_t *self, host_t *h, char *err, size_t errsize)
{
    char *argv[RSH_MAX_ARGS + 8], words[4096], cmd[PATH_MAX * 3];
    if (s_engine_argv(self, h, argv, words, sizeof words, cmd, sizeof cmd) < 0) {
        snprintf(err, errsize, "GIMPI_RSH is empty");
        return -1;
    }
    int in[2], out[2], er[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0) {
        snprintf(err, errsize, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errsize, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        run_child_start(me, SIGTERM);       /* the engine ends with us; the agent then
                                               sees its input end and ends its tasks */
        setpgid(0, 0);                      /* a terminal's ^C is ours to forward */
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(er[1], 2);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(er[1]);
    h->pid = pid;
    h->to_fd = in[1];
    h->from_fd = out[0];
    h->err_fd = er[0];
    h->in = vmw_reader_new();
    fcntl(h->to_fd, F_SETFL, O_NONBLOCK);
    fcntl(h->from_fd, F_SETFL, O_NONBLOCK);
    fcntl(h->err_fd, F_SETFL, O_NONBLOCK);
    gimpi_loop_fd_add(self->loop, h->to_fd, 0, s_on_writable, h);
    gimpi_loop_fd_add(self->loop, h->from_fd, GIMPI_LOOP_READ, s_on_frames, h);
    gimpi_loop_fd_add(self->loop, h->err_fd, GIMPI_LOOP_READ, s_on_stderr, h);
    size_t len;
    if (!s_engine_encrypts(self)) {
        char fp[9];
        gimpi_key_fingerprint(&self->key, fp);
        return run_hosts_send(h, vmw_encode(&len, AGENT_KEYFP, fp));
    }
    return run_hosts_send(h, vmw_encode(&len, AGENT_KEY, &self->key, sizeof self->key));
}

/*  Starts the agents of the hosts from index first on (not the later ones).  0, or -1. */
int run_hosts_start_agents(launcher_t *self, int first, char *err, size_t errsize)
{
    for (int i = first; i < self->nhosts; i++) {
        host_t *h = self->hosts[i];
        if (h->local || h->info.later || h->pid > 0 || h->state == HOST_DEAD)
            continue;
        if (s_start_agent(self, h, err, errsize) < 0) {
            h->state = HOST_DEAD;
            return -1;
        }
    }
    return 0;
}

/*  Runs the loop until done(self) holds or timeout_ms passes.  0, or -1 on timeout. */
int run_hosts_wait(launcher_t *self, bool (*done)(launcher_t *), int timeout_ms)
{
    int64_t end = gimpi_loop_now_ms() + timeout_ms;
    while (!done(self)) {
        int64_t left = end - gimpi_loop_now_ms();
        if (left <= 0)
            return -1;
        gimpi_loop_run_once(self->loop, (int)(left > 1000 ? 1000 : left));
    }
    return 0;
}

/*  True (with the reason in err) when the job announced a loopback address, which host h,
 *  another machine, could not reach: its tasks would neither find groupd nor their
 *  parents. */
static bool s_loopback_job(launcher_t *self, const host_t *h, char *err, size_t errsize)
{
    if (h->local || strncmp(self->myaddr, "127.", 4) != 0)
        return false;
    snprintf(err, errsize, "this job announced only the loopback address %s, which host %s "
             "cannot reach (start it with this machine's name in the host set, or -if)",
             self->myaddr, h->info.name);
    return true;
}

/*  Adds a host at run time (pvm_addhosts) and starts its agent.  Its index, or a gimpi
 *  error code (PvmDupHost when it is there already). */
int run_hosts_add(launcher_t *self, const gimpi_hostinfo_t *info, char *err, size_t errsize)
{
    for (int i = 0; i < self->nhosts; i++) {
        host_t *k = self->hosts[i];
        if (k->state == HOST_DEAD || strcasecmp(k->info.name, info->name))
            continue;
        if (!k->info.later || k->pid > 0)
            return GIMPI_EDUPHOST;
        if (s_loopback_job(self, k, err, errsize))
            return GIMPI_ECANTSTART;
        k->info.later = false;          /* a '&' host of the hostfile: started now */
        if (s_start_agent(self, k, err, errsize) < 0) {
            k->state = HOST_DEAD;
            return GIMPI_ECANTSTART;
        }
        return k->index;
    }
    host_t *h = s_host_new(self, info);
    if (!h)
        return GIMPI_ENOMEM;
    h->info.later = false;
    if (h->local) {
        free(h);
        return GIMPI_EDUPHOST;  /* this machine is in the virtual machine already */
    }
    if (s_loopback_job(self, h, err, errsize)) {
        free(h);
        return GIMPI_ECANTSTART;
    }
    if (s_append(self, h) < 0) {
        free(h);
        return GIMPI_ENOMEM;
    }
    if (s_start_agent(self, h, err, errsize) < 0) {
        h->state = HOST_DEAD;
        return GIMPI_ECANTSTART;
    }
    return h->index;
}

/*  Asks host h's agent to end its tasks and exit (pvm_delhosts, end of the job). */
void run_hosts_quit(launcher_t *self, host_t *h)
{
    (void)self;
    if (h->local || h->state == HOST_DEAD || h->quit_sent)
        return;
    size_t len;
    run_hosts_send(h, vmw_encode(&len, AGENT_QUIT));
    h->quit_sent = true;
}

/*  Removes the journal of a groupd of the job that a standby replaced (name: a path here,
 *  or a bare name in the private runtime directory of the host that ran task t, through
 *  its agent; here when t is NULL or local). */
void run_hosts_forget_journal(launcher_t *self, task_t *t, const char *name)
{
    char dir[GIMPI_KEY_PATHLEN], err[256], path[GIMPI_KEY_PATHLEN + 256];
    size_t len;
    if (!name[0])
        return;
    if (t && !self->hosts[t->host]->local)
        run_hosts_send(self->hosts[t->host], vmw_encode(&len, AGENT_FORGET, name));
    else if (name[0] == '/')
        unlink(name);
    else if (gimpi_rundir(dir, sizeof dir, err, sizeof err) == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, name);
        unlink(path);
    }
}

/*  Signals a task wherever it runs. */
void run_hosts_kill(launcher_t *self, task_t *t, int sig)
{
    if (t->exited)
        return;
    host_t *h = self->hosts[t->host];
    if (h->local) {
        if (t->pid > 0)
            kill(t->pid, sig);
        return;
    }
    size_t len;
    run_hosts_send(h, vmw_encode(&len, AGENT_KILL, t->id, sig));
}

/*  True when host h may take a spawned task placed by flags and where. */
static bool s_eligible(const host_t *h, int flags, const char *where)
{
    if (h->state != HOST_UP || h->deleted)
        return false;
    if (flags & VM_SPAWN_ARCH)
        return !strcmp(h->arch, where);
    if (flags & VM_SPAWN_NOT)
        return strcasecmp(h->info.name, where) && strcasecmp(h->info.ip, where)
               && !(h->local && (!strcmp(where, "localhost") || !strcmp(where, ".")));
    return true;
}

/*  The host for the next spawned task: by name (VM_SPAWN_HOST), by architecture
 *  (VM_SPAWN_ARCH) or round-robin over the hosts that are up, in slot order.  Index, or
 *  GIMPI_ENOHOST. */
int run_hosts_pick(launcher_t *self, int flags, const char *where)
{
    if (flags & VM_SPAWN_HOST) {
        for (int i = 0; i < self->nhosts; i++) {
            host_t *h = self->hosts[i];
            if (h->state == HOST_UP && !h->deleted && (!strcasecmp(h->info.name, where)
                                        || (h->info.ip[0] && !strcasecmp(h->info.ip, where))))
                return i;
        }
        return GIMPI_ENOHOST;
    }
    /* slot order: a host with k slots takes k consecutive turns */
    int total = 0;
    for (int i = 0; i < self->nhosts; i++)
        if (s_eligible(self->hosts[i], flags, where))
            total += self->hosts[i]->info.slots > 0 ? self->hosts[i]->info.slots : 1;
    if (total == 0)
        return GIMPI_ENOHOST;
    int turn = self->rr_next++ % total;
    for (int i = 0; i < self->nhosts; i++) {
        host_t *h = self->hosts[i];
        if (!s_eligible(h, flags, where))
            continue;
        int s = h->info.slots > 0 ? h->info.slots : 1;
        if (turn < s)
            return i;
        turn -= s;
    }
    return GIMPI_ENOHOST;
}

/*  A child of ours ended: 1 when it was an agent's engine. */
int run_hosts_reaped(launcher_t *self, pid_t pid, int status)
{
    (void)status;
    for (int i = 0; i < self->nhosts; i++) {
        host_t *h = self->hosts[i];
        if (h->pid == pid) {
            h->pid = 0;
            if (h->state != HOST_DEAD)
                s_host_dead(self, h, h->quit_sent ? NULL : "its remote-start command ended");
            self->ev->check_done(self->ev->arg);
            return 1;
        }
    }
    return 0;
}

/*  The job's end could not kill everything: the hosts whose tasks still run after the
 *  last SIGKILL (their agents do not answer) are given up, and their tasks counted lost. */
void run_hosts_give_up(launcher_t *self)
{
    for (int i = 0; i < self->nall; i++) {
        task_t *t = self->tasks[i];
        host_t *h = self->hosts[t->host];
        if (!t->exited && !h->local && h->state != HOST_DEAD)
            s_host_dead(self, h, "its agent did not end the tasks within 5 s of SIGKILL");
    }
    for (int i = 0; i < self->nhosts; i++)
        if (self->hosts[i]->pid > 0 && !self->hosts[i]->local)
            kill(self->hosts[i]->pid, SIGKILL);
}

/*  True while an agent's engine still runs (the loop waits for them at the end). */
bool run_hosts_busy(launcher_t *self)
{
    for (int i = 0; i < self->nhosts; i++)
        if (self->hosts[i]->pid > 0 || self->hosts[i]->err_fd >= 0)
            return true;
    return false;
}

/*  Frees the hosts (the loop is gone by now). */
void run_hosts_fini(launcher_t *self)
{
    for (int i = 0; i < self->nhosts; i++) {
        host_t *h = self->hosts[i];
        if (h->to_fd >= 0) close(h->to_fd);
        if (h->from_fd >= 0) close(h->from_fd);
        if (h->err_fd >= 0) close(h->err_fd);
        if (h->outq)
            gimpi_key_wipe(h->outq, h->outq_cap);
        free(h->outq);
        vmw_reader_destroy(&h->in);
        free(h);
    }
    free(self->hosts);
    self->hosts = NULL;
    self->nhosts = 0;
}
