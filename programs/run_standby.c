/*  run_standby.c — the job's standby groupd (doc/reliability.md): a second groupd, on
 *  another host than the primary's, that follows the primary's stream of changes and takes
 *  over at its own endpoint when the primary falls silent.  This file knows where it may
 *  run (-groupd-standby HOST, else the host after the primary's in the set), starts it
 *  (through that host's agent, with the job's key, or here as our child when that host is
 *  this one), reads what it says (its manager token, its endpoint once it follows, its
 *  takeover) and sees it end.  What that means for the job (who manages, who is started
 *  next) is run_vm.c's: news of a standby here reaches it through the launcher's events
 *  (standby_news) or the return of run_standby_line.
 */
#include "config.h"
#include "programs/run_standby.h"
#include "programs/run_proc.h"
#include "programs/run_tasks.h"
#include "programs/run_witness.h"
#include "base/gimpi_findprog.h"
#include "base/gimpi_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

/*  The standby in progress (one at a time). */
typedef struct run_standby_t {
    int host;                   /* index in self->hosts, -1: none */
    task_t *task;               /* on another host: its record (its agent's task) */
    pid_t pid;                  /* here: our child, 0 */
    int out_fd;                 /* here: its stdout, -1 */
    char line[600];             /* here: the line being read */
    size_t len;
    bool ready;                 /* it printed its endpoint: it follows the primary */
    bool took_over;             /* it said it took over */
    bool ended;
    int status;                 /* how it ended */
    char token[GIMPI_GROUPS_TOKEN_LEN + 1];     /* its manager token, or "" */
    char ep[600];               /* where it serves once it took over */
    char journal[PATH_MAX];     /* its journal: a bare name, in its host's runtime dir */
} run_standby_t;

/*  groupd's program as the library finds it (base/gimpi_findprog.h): GIMPI_GROUPD_BIN,
 *  else beside gimpirun, the build tree's groupd/, the bindir, PATH.  0, or -1 with the
 *  places looked in tried and, in buf, the path another host may have it at:
 *  GIMPI_GROUPD_BIN when set, else the bindir's. */
int run_groupd_bin(char *buf, size_t size, char *tried, size_t triedsize)
{
    if (gimpi_findprog("groupd", "GIMPI_GROUPD_BIN", "groupd", GIMPI_BINDIR, buf, size, tried,
                       triedsize) == 0)
        return 0;
    const char *env = gimpi_env("GIMPI_GROUPD_BIN");
    if (env && *env)
        snprintf(buf, size, "%s", env);
    else
        snprintf(buf, size, "%s/groupd", GIMPI_BINDIR);
    return -1;
}

/*  True when this machine's groupd can be a standby (its usage names --standby-of); a
 *  groupd not found here is taken to be able to (the hosts' may be another build). */
bool run_standby_supported(void)
{
    char bin[PATH_MAX], cmd[PATH_MAX + 64];
    if (run_groupd_bin(bin, sizeof bin, NULL, 0) < 0)
        return true;
    snprintf(cmd, sizeof cmd, "'%s' --help 2>&1", bin);
    FILE *p = popen(cmd, "r");
    if (!p)
        return false;
    char line[512];
    bool yes = false;
    while (fgets(line, sizeof line, p))
        yes |= strstr(line, "--standby-of") != NULL;
    pclose(p);
    return yes;
}

/*  The address others reach host h at: this host's announced one, else its ip=, else its
 *  name. */
const char *run_host_addr(launcher_t *self, const host_t *h)
{
    return h->local ? self->myaddr : h->info.ip[0] ? h->info.ip : h->info.name;
}

/*  True when host h may run a standby: up, in the table, not `avoid` nor the same
 *  machine (two names of this one: the standby would take the primary's port). */
static bool s_fit(launcher_t *self, int h, int avoid)
{
    const host_t *x = self->hosts[h];
    const host_t *a = avoid >= 0 ? self->hosts[avoid] : NULL;
    return h != avoid && x->state == HOST_UP && !x->deleted && !x->info.later
        && !(a && ((a->local && x->local)
                   || !strcmp(run_host_addr(self, a), run_host_addr(self, x))));
}

/*  -groupd-standby HOST names a host of the job other than the primary's (on, or this
 *  one).  0, or -1 with the reason in err. */
int run_standby_check(launcher_t *self, const host_t *on, char *err, size_t errsize)
{
    const char *want = self->standby_host;
    if (!want || !strcmp(want, "none"))
        return 0;
    for (int i = 0; i < self->nhosts; i++) {
        const host_t *h = self->hosts[i];
        if (strcasecmp(h->info.name, want) && strcmp(h->info.ip, want))
            continue;
        if (on ? h == on : h->local) {
            snprintf(err, errsize, "-groupd-standby %s: the host of the job's groupd itself",
                     want);
            return -1;
        }
        return 0;
    }
    snprintf(err, errsize, "-groupd-standby %s: not a host of the job", want);
    return -1;
}

/*  The host for a standby of a primary on host `primary`: -groupd-standby's (when it fits;
 *  only for the first), else the first that fits after the primary's, in the set's order.
 *  Its index, or -1 (none left, or -groupd-standby none). */
int run_standby_pick(launcher_t *self, int primary, bool first)
{
    const char *want = self->standby_host;
    if (want && !strcmp(want, "none"))
        return -1;
    for (int i = 0; want && first && i < self->nhosts; i++)
        if (!strcasecmp(self->hosts[i]->info.name, want)
            || !strcmp(self->hosts[i]->info.ip, want))
            return s_fit(self, i, primary) ? i : -1;
    for (int k = 1; k <= self->nhosts; k++) {
        int i = ((primary < 0 ? 0 : primary) + k) % self->nhosts;
        if (s_fit(self, i, primary))
            return i;
    }
    return -1;
}

/*  One line the standby printed (groupd(1) without --quiet, stdout and stderr): its
 *  manager token (printed when it takes over), "...: following" (it holds the primary's
 *  image: ready), "...: taking over", "took over ..." or its endpoint (it serves: took
 *  over); others are shown. */
static void s_line(run_standby_t *sb, const char *line)
{
    if (run_token_line(line, sb->token, sizeof sb->token))
        return;
    if (strstr(line, ": following"))
        sb->ready = true;
    else if (!strncmp(line, "tcp://", 6) || strstr(line, "taking over")
             || strstr(line, "took over"))
        sb->took_over = true;   /* (it serves, or is about to) */
    else if (!strstr(line, "key fingerprint"))
        fprintf(stderr, "gimpirun: standby groupd: %s\n", line);
}

/*  Reads what fd has: the count, 0 when nothing came, -1 when it closed (then no longer
 *  watched, and closed). */
static ssize_t s_read(gimpi_loop_t *loop, int fd, char *buf, size_t size)
{
    ssize_t r = read(fd, buf, size);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (r <= 0) {
        gimpi_loop_fd_del(loop, fd);
        close(fd);
        return -1;
    }
    return r;
}

/*  A line of a groupd of the job (task t there, or pid here): a witness question is
 *  taken (run_witness.c) and true; a primary let go on alone ends its standby. */
static bool s_question(launcher_t *self, task_t *t, pid_t pid, const char *line)
{
    int rc = run_witness_line(self, t, pid, line);
    if (rc == 2)
        run_standby_signal(self, SIGTERM);
    return rc != 0;
}

/*  A promoted local standby (now the primary) wrote: its manager token (in late_token,
 *  for run_vm.c), its other lines shown (its pipe stays open, so that a line it writes
 *  later does not kill it with SIGPIPE). */
static void s_on_primary_out(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)events;
    launcher_t *self = arg;
    char buf[1024];
    ssize_t r = s_read(loop, fd, buf, sizeof buf - 1);
    buf[r > 0 ? r : 0] = 0;
    for (char *save, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (!run_token_line(l, self->late_token, sizeof self->late_token)
            && strncmp(l, "tcp://", 6) && !s_question(self, NULL, self->groupd_pid, l))
            fprintf(stderr, "gimpirun: groupd: %s\n", l);
}

/*  The local standby wrote (or its stdout closed): news when that made it ready or it
 *  said it took over. */
static void s_on_out(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)events;
    launcher_t *self = arg;
    run_standby_t *sb = self->standby;
    if (!sb || sb->out_fd != fd) {
        s_on_primary_out(loop, fd, events, arg);
        return;
    }
    char buf[512];
    ssize_t r = s_read(loop, fd, buf, sizeof buf);
    if (r < 0)
        sb->out_fd = -1;
    if (r <= 0)
        return;
    bool ready = sb->ready, over = sb->took_over;
    for (ssize_t i = 0; i < r && self->nrunning > 0; i++) {    /* (the job's end: none) */
        if (buf[i] != '\n' && sb->len < sizeof sb->line - 1) {
            sb->line[sb->len++] = buf[i];
            continue;
        }
        if (buf[i] == '\n') {
            sb->line[sb->len] = 0;
            if (!s_question(self, NULL, sb->pid, sb->line))
                s_line(sb, sb->line);
            sb->len = 0;
        }
    }
    if (sb->ready && !ready)
        self->wit_fresh = true;         /* (a new standby: a new arbitration) */
    if (sb->ready != ready || sb->took_over != over)
        self->ev->standby_news(self->ev->arg);
}

/*  The job's groupd here (pid self->groupd_pid) goes on writing to fd: its lines are read
 *  (the witness's questions; a pipe left unread would block it, a closed one kill it). */
void run_standby_watch_primary(launcher_t *self, int fd)
{
    fcntl(fd, F_SETFL, O_NONBLOCK);
    gimpi_loop_fd_add(self->loop, fd, GIMPI_LOOP_READ, s_on_primary_out, self);
}

/*  Sends sig to the standby, if there is one that runs. */
void run_standby_signal(launcher_t *self, int sig)
{
    run_standby_t *sb = self->standby;
    if (sb && sb->pid > 0)
        kill(sb->pid, sig);
    else if (sb && sb->task)
        run_hosts_kill(self, sb->task, sig);
}

/*  The standby's arguments: follows primary_ep, serves at port (events pub_port) once it
 *  takes over, with its own journal and the launcher's token. */
static void s_argv(run_standby_t *sb, char *bin, const char *primary_ep, int port, int pub_port,
                   char **argv, char *ep, size_t epsize, char *pub, size_t pubsize)
{
    int n = 0;
    argv[n++] = bin;
    argv[n++] = "--foreground";     /* (not --quiet: its "following" line is its news) */
    argv[n++] = "--launcher";
    argv[n++] = "--witness";        /* takes over only when we grant it (run_witness.c) */
    argv[n++] = "--standby-of";
    argv[n++] = (char *)primary_ep;
    argv[n++] = "--journal";
    argv[n++] = sb->journal;
    argv[n++] = "--endpoint";
    snprintf(ep, epsize, "tcp://0.0.0.0:%d", port);
    argv[n++] = ep;
    argv[n++] = "--pub-port";
    snprintf(pub, pubsize, "%d", pub_port);
    argv[n++] = pub;
    argv[n] = NULL;
}

/*  Starts it here, our child, its stdout read in the loop.  0 or -1. */
static int s_start_here(launcher_t *self, run_standby_t *sb, char **argv, char *err,
                        size_t errsize)
{
    int out;
    pid_t pid = run_fork_piped(argv, true, &out, err, errsize);
    if (pid < 0)
        return -1;
    sb->pid = self->standby_pid = pid;
    sb->out_fd = out;
    fcntl(out, F_SETFL, O_NONBLOCK);
    gimpi_loop_fd_add(self->loop, out, GIMPI_LOOP_READ, s_on_out, self);
    return 0;
}

/*  Starts it on host h through its agent: a daemon of the job (not one of its tasks),
 *  its lines to run_standby_line.  0 or -1. */
static int s_start_there(launcher_t *self, run_standby_t *sb, host_t *h, char **argv,
                         char *err, size_t errsize)
{
    char **copy = calloc(16, sizeof *copy);
    for (int k = 0; copy && argv[k]; k++)
        copy[k] = strdup(argv[k]);
    task_t *t = copy ? run_task_new(self, h->index, copy, true) : NULL;
    if (!t) {
        free(copy);
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    t->groupd = true;
    self->nrunning--;                   /* a daemon of the job, not one of its tasks */
    sb->task = t;
    char *env[] = { NULL };
    size_t len;
    if (run_hosts_send(h, vmw_encode(&len, AGENT_START, t->id, 0, "route:127.0.0.1", "/", copy,
                                     env, 0, 0)) < 0) {
        snprintf(err, errsize, "host %s is gone", h->info.name);
        return -1;
    }
    return 0;
}

/*  Starts a standby on host hi that follows the primary at primary_ep and takes over at
 *  port (events pub_port) there.  0, or -1 with a message in err. */
int run_standby_start(launcher_t *self, int hi, const char *primary_ep, int port, int pub_port,
                      char *err, size_t errsize)
{
    run_standby_forget(self);
    run_standby_t *sb = calloc(1, sizeof *sb);
    if (!sb) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    host_t *h = self->hosts[hi];
    sb->host = hi;
    sb->out_fd = -1;
    snprintf(sb->ep, sizeof sb->ep, "tcp://%s:%d", run_host_addr(self, h), port);
    snprintf(sb->journal, sizeof sb->journal, "groupd-tcp-%s-%d-standby-%s.journal",
             self->myaddr, (int)getpid(), run_host_addr(self, h));
    self->standby = sb;
    char bin[PATH_MAX], ep[64], pub[16], *argv[16];
    run_groupd_bin(bin, sizeof bin, NULL, 0);   /* (not here: it may be there) */
    s_argv(sb, bin, primary_ep, port, pub_port, argv, ep, sizeof ep, pub, sizeof pub);
    int rc = h->local ? s_start_here(self, sb, argv, err, errsize)
                      : s_start_there(self, sb, h, argv, err, errsize);
    if (rc < 0)
        sb->ended = true;
    return rc;
}

/*  A line of a task on another host: 0 when not the standby's, else 1 (taken; news for
 *  run_vm_standby_news when it made the standby ready or said it took over: then 2). */
int run_standby_line(launcher_t *self, task_t *t, const char *line, size_t len)
{
    char buf[600];
    snprintf(buf, sizeof buf, "%.*s", (int)len, line);
    if (t && t->groupd && s_question(self, t, 0, buf))
        return 1;
    run_standby_t *sb = self->standby;
    if (!sb || t != sb->task)
        return 0;
    if (self->nrunning <= 0)
        return 1;               /* the job's end (it may take over as the primary ends) */
    bool ready = sb->ready, over = sb->took_over;
    s_line(sb, buf);
    if (sb->ready && !ready)
        self->wit_fresh = true;         /* (a new standby: a new arbitration) */
    return sb->ready != ready || sb->took_over != over ? 2 : 1;
}

/*  A task ended: true when it was the standby (now ended, with status). */
bool run_standby_task_ended(launcher_t *self, task_t *t)
{
    run_standby_t *sb = self->standby;
    if (!sb || !t || t != sb->task)
        return false;
    sb->ended = true;
    sb->status = t->status;
    return true;
}

/*  Our local standby (pid) was reaped: true when it was (now ended, with status). */
bool run_standby_reaped(launcher_t *self, pid_t pid, int status)
{
    run_standby_t *sb = self->standby;
    if (!sb || pid != sb->pid || pid <= 0)
        return false;
    sb->pid = self->standby_pid = 0;
    sb->ended = true;
    sb->status = status;
    return true;
}

/*  What run_vm.c asks of the standby: its state (RUN_SB_NONE when there is none). */
run_sb_state_t run_standby_state(launcher_t *self)
{
    run_standby_t *sb = self->standby;
    if (!sb)
        return RUN_SB_NONE;
    if (sb->ended)
        return RUN_SB_ENDED;
    if (sb->took_over)
        return RUN_SB_TOOK_OVER;
    return sb->ready ? RUN_SB_READY : RUN_SB_STARTING;
}

/*  Its host's index, endpoint, token and journal (any may be NULL); -1 when none. */
int run_standby_info(launcher_t *self, const char **ep, const char **token,
                     const char **journal, int *status)
{
    run_standby_t *sb = self->standby;
    if (!sb)
        return -1;
    if (ep)
        *ep = sb->ep;
    if (token)
        *token = sb->token;
    if (journal)
        *journal = sb->journal;
    if (status)
        *status = sb->status;
    return sb->host;
}

/*  The standby becomes the primary: its task (on another host) or pid (here) is handed to
 *  the caller and this file forgets it (its stdout here is still read, and what it says
 *  shown). */
void run_standby_promote(launcher_t *self, task_t **task, pid_t *pid)
{
    run_standby_t *sb = self->standby;
    *task = sb ? sb->task : NULL;
    *pid = sb ? sb->pid : 0;
    if (sb && sb->pid > 0)
        self->standby_pid = 0;
    if (sb && sb->out_fd >= 0)
        gimpi_loop_fd_del(self->loop, sb->out_fd),
        gimpi_loop_fd_add(self->loop, sb->out_fd, GIMPI_LOOP_READ, s_on_primary_out, self);
    if (sb)
        sb->pid = 0, sb->task = NULL, sb->out_fd = -1;
    run_standby_forget(self);
}

/*  Forgets the standby (ended or promoted); a local one still running is ended. */
void run_standby_forget(launcher_t *self)
{
    run_standby_t *sb = self->standby;
    if (!sb)
        return;
    if (sb->pid > 0) {
        kill(sb->pid, SIGTERM);
        int status;
        while (waitpid(sb->pid, &status, 0) < 0 && errno == EINTR)
            ;
        self->standby_pid = 0;
    }
    if (sb->task && !sb->task->exited)
        run_hosts_kill(self, sb->task, SIGTERM);
    if (sb->out_fd >= 0) {
        gimpi_loop_fd_del(self->loop, sb->out_fd);
        close(sb->out_fd);
    }
    free(sb);
    self->standby = NULL;
}
