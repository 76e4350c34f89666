/*  run_vm.c — gimpirun as the manager of a virtual machine: the job's groupd, the host
 *  table it publishes there, and the tasks' requests it serves (pvm_spawn onto any host,
 *  pvm_addhosts, pvm_delhosts, pvm_kill of a task on another host).
 *
 *  A job with a host set gets a groupd that every host can reach over tcp (CURVE with the
 *  job's key): the one GIMPI_GROUPD names when it is a tcp endpoint, else one started
 *  here (or, with -groupd HOST, by HOST's agent) at -gport or any port.  gimpirun then
 *  connects as the manager (groupd's HOSTS_SET), publishes the host table, and takes the
 *  requests groupd relays (VMREQ) in its loop.  A request that starts something is
 *  answered when every slot has its result (a tid, a host id, or an error), so the caller
 *  gets PVM's per-slot answers.  Every task that ends is reported to groupd (TASK_EXIT),
 *  so that its groups and LOOKUPs learn of it even when its host can no longer say so.
 *
 *  The job's groupd survives a crash: restarted from its journal at the same ports (a
 *  job without a standby), or, with a standby on another host (run_standby.c), taken
 *  over by the standby; gimpirun then manages the new primary and starts a new standby on
 *  another host if one is left.  The tasks are given every endpoint a groupd of the job
 *  may serve at (GIMPI_GROUPD, a list: the primary first).
 */
#include "config.h"
#include "programs/run_vm.h"
#include "programs/run_hosts.h"
#include "programs/run_proc.h"
#include "programs/run_tasks.h"
#include "programs/run_trace.h"
#include "programs/run_standby.h"
#include "programs/run_jobfile.h"
#include "base/gimpi_findprog.h"
#include "task/gimpi_job.h"
#include "base/gimpi_tunables.h"
#include "base/gimpi_key.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <sys/time.h>
#include <unistd.h>

enum {
    GROUPD_START_MS = 10000,    /* a groupd prints its endpoint within this */
    MANAGE_MS = 15000,          /* after a takeover, the new primary is managed within this */
    MAX_LIST = 8,               /* endpoints in the tasks' GIMPI_GROUPD */
    MAX_PENDING = 256,          /* requests being served at once */
};

/*  One request in progress. */
typedef struct pending_t {
    int token;                  /* groupd's id for the request */
    int kind;                   /* VM_SPAWN, VM_ADDHOSTS or VM_HOSTSYNC */
    int n;
    int32_t *results;
    int *ref;                   /* per slot: task id (spawn) or host index (addhosts,
                                   hostsync: ref[0], its clock's two slots), -1 */
    struct pending_t *next;
} pending_t;

/*  The manager's state. */
typedef struct run_vm_t {
    gimpi_groups_t *mgr;        /* our manager connection to groupd, or NULL */
    char groupd_ep[600];        /* the endpoint every task is given */
    char token[GIMPI_GROUPS_TOKEN_LEN + 1];     /* our groupd's manager token, or "" */
    pending_t *pending;
    int npending;
    task_t *groupd_task;        /* -groupd HOST: the groupd started by HOST's agent */
    int groupd_out;             /* our groupd's stdout (its endpoint line), -1 */
    bool serving;               /* inside s_on_requests (its loop takes what comes) */
    int timer;                  /* a second's poll: a lost groupd is seen on a call */
    char journal[PATH_MAX];     /* our local groupd's journal, or "" (not restartable) */
    int port, pub_port;         /* its request and event ports: a restart keeps them */
    int restarts;               /* times it was restarted from its journal */
    bool restarting;            /* starting it again, from the journal */
    int64_t died_ms;            /* when it ended (the restart's time is said) */
    int died_status;            /* how */
    /* the standby (run_standby.c) */
    bool standby_on;            /* the job has standbys (supported, not -groupd-standby none) */
    int primary_host;           /* the host of the primary groupd, -1 (GIMPI_GROUPD given) */
    int takeovers;              /* times a standby took over */
    int sb_fails;               /* standbys that ended before they followed, in a row */
    bool sb_quiet;              /* the first standby, by default: its "follows" unsaid */
    int manage_timer;           /* after a takeover: the next try to manage the new primary */
    int64_t manage_until;
    int manage_tries;
    char alt_token[GIMPI_GROUPS_TOKEN_LEN + 1];     /* the other token to try, or "" */
} run_vm_t;

static void s_on_requests(gimpi_loop_t *loop, int fd, int events, void *arg);
static int s_manage_again(launcher_t *self, int status);

/*  No longer the manager of the groupd we managed (gone, or replaced). */
static void s_unmanage(launcher_t *self)
{
    if (self->vm->mgr && self->loop)
        gimpi_loop_fd_del(self->loop, gimpi_groups_fd(self->vm->mgr));
    gimpi_groups_destroy(&self->vm->mgr);
}

/*  The manager socket's notification is edge-triggered: after any call on it, take what
 *  came (unless the request loop is running, which takes it anyway). */
static void s_drain(launcher_t *self)
{
    if (self->vm && self->vm->mgr && !self->vm->serving)
        s_on_requests(self->loop, 0, 0, self);
}

/* ------------------------------------------------------------------ groupd */

/*  The groupd arguments: --foreground on tcp at -gport (events next to it) or any port;
 *  with a journal (ours, here) its --journal, its ports fixed, and --restart from it. */
static void s_groupd_argv(launcher_t *self, char *bin, char **argv, char *ep, size_t epsize,
                          char *pub, size_t pubsize)
{
    run_vm_t *vm = self->vm;
    int n = 0;
    argv[n++] = bin;
    argv[n++] = "--foreground";
    argv[n++] = "--quiet";      /* the job's own: no key fingerprint line on the terminal */
    argv[n++] = "--launcher";   /* only we may manage it: its token comes first */
    argv[n++] = "--witness";    /* we arbitrate between it and a standby (run_witness.c) */
    if (vm->journal[0]) {
        argv[n++] = "--journal";
        argv[n++] = vm->journal;
    }
    if (vm->restarting)
        argv[n++] = "--restart";
    int port = vm->journal[0] ? vm->port : self->groupd_port;
    int pub_port = vm->journal[0] ? vm->pub_port : port > 0 ? port + 1 : 0;
    argv[n++] = "--endpoint";
    if (port > 0)
        snprintf(ep, epsize, "tcp://0.0.0.0:%d", port);
    else
        snprintf(ep, epsize, "tcp://0.0.0.0:*");
    argv[n++] = ep;
    if (pub_port > 0) {
        snprintf(pub, pubsize, "%d", pub_port);
        argv[n++] = "--pub-port";
        argv[n++] = pub;
    }
    argv[n] = NULL;
}

/*  Starts a groupd here, as our child.  0 with self->vm->groupd_ep set, or -1. */
static int s_start_local_groupd(launcher_t *self, char *err, size_t errsize)
{
    char bin[PATH_MAX], ep[64], pub[16], *argv[16], tried[2048];
    if (run_groupd_bin(bin, sizeof bin, tried, sizeof tried) < 0) {
        snprintf(err, errsize, "no groupd program for the job: looked for %s"
                 " (set GIMPI_GROUPD_BIN to the program)", tried);
        return -1;
    }
    s_groupd_argv(self, bin, argv, ep, sizeof ep, pub, sizeof pub);
    int out;
    pid_t pid = run_fork_piped(argv, false, &out, err, errsize);
    if (pid < 0)
        return -1;
    self->groupd_pid = pid;
    char line[600];
    int rc = run_read_line(out, line, sizeof line, GROUPD_START_MS);
    if (rc == 0 && run_token_line(line, self->vm->token, sizeof self->vm->token))
        rc = run_read_line(out, line, sizeof line, GROUPD_START_MS);
    int port = rc == 0 ? run_ep_port(line) : -1;
    if (port >= 0)
        run_standby_watch_primary(self, out);   /* (its witness questions) */
    else
        close(out);
    if (port < 0) {
        snprintf(err, errsize, "the job's groupd (%s %s) did not start%s", bin, ep,
                 self->groupd_port ? " (is the port taken?)" : "");
        return -1;
    }
    snprintf(self->vm->groupd_ep, sizeof self->vm->groupd_ep, "tcp://%s:%d", self->myaddr, port);
    if (self->vm->journal[0])
        self->vm->port = port;
    return 0;
}

/*  Makes the job's groupd restartable: here a journal in the private runtime directory,
 *  and both ports fixed now (-gport's, else two free ones below the ephemeral range: the
 *  tasks' subscriptions find them again after a restart, and a standby on another host
 *  takes them there); on another host (on) a journal (a standby may
 *  follow it) and, only with -gport, its ports.  Without a runtime directory, none
 *  (said). */
static void s_restartable(launcher_t *self, const host_t *on)
{
    run_vm_t *vm = self->vm;
    if (on && !on->local) {
        /* there: a bare name, in that host's private runtime directory (groupd(1)), which
           a standby follows; the ports (a restart there) only when -gport fixed them (we
           cannot pick free ones there) */
        snprintf(vm->journal, sizeof vm->journal, "groupd-tcp-%s-%d.journal", self->myaddr,
                 (int)getpid());
        if (self->groupd_port <= 0)
            return;
        vm->port = self->groupd_port;
        vm->pub_port = self->groupd_port + 1;
        return;
    }
    char dir[GIMPI_KEY_PATHLEN], err[256];
    if (gimpi_rundir(dir, sizeof dir, err, sizeof err) < 0) {
        fprintf(stderr, "gimpirun: the job's groupd keeps no journal, a crash of it fails "
                "the job's group calls: %s\n", err);
        return;
    }
    int p = self->groupd_port > 0 ? self->groupd_port : run_free_port();
    vm->pub_port = p > 0 ? p + 1 : 0;
    vm->port = p;
    if (vm->pub_port <= 0)
        return;
    snprintf(vm->journal, sizeof vm->journal, "%s/groupd-tcp-%d.journal", dir, (int)getpid());
    unlink(vm->journal);        /* (a pid's leftover: not this job's state) */
}

/*  True once the remote groupd printed its endpoint (or ended). */
static bool s_remote_groupd_known(launcher_t *self)
{
    return self->vm->groupd_ep[0] || !self->vm->groupd_task || self->vm->groupd_task->exited;
}

/*  Asks host h's agent to start the job's groupd (its lines come to run_vm_groupd_line).
 *  0, or -1 with a message in err. */
static int s_send_remote_groupd(launcher_t *self, host_t *h, char *err, size_t errsize)
{
    char bin[PATH_MAX], ep[64], pub[16], *argv[16];
    run_groupd_bin(bin, sizeof bin, NULL, 0);     /* not here: it may be there */
    s_groupd_argv(self, bin, argv, ep, sizeof ep, pub, sizeof pub);
    char **copy = calloc(16, sizeof *copy);
    for (int k = 0; copy && argv[k]; k++)
        copy[k] = strdup(argv[k]);
    task_t *t = copy ? run_task_new(self, h->index, copy, true) : NULL;
    if (!t) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    t->groupd = true;
    self->nrunning--;                   /* a daemon of the job, not one of its tasks */
    self->vm->groupd_task = t;
    char *env[] = { NULL };
    size_t len;
    run_hosts_send(h, vmw_encode(&len, AGENT_START, t->id, 0, "route:127.0.0.1", "/", copy, env,
                                     0, 0));
    return 0;
}

/*  Starts the job's groupd on host h through its agent.  0 with the endpoint, or -1. */
static int s_start_remote_groupd(launcher_t *self, host_t *h, char *err, size_t errsize)
{
    if (s_send_remote_groupd(self, h, err, errsize) < 0)
        return -1;
    if (run_hosts_wait(self, s_remote_groupd_known, GROUPD_START_MS) < 0
        || !self->vm->groupd_ep[0]) {
        snprintf(err, errsize, "the job's groupd did not start on host %s", h->info.name);
        return -1;
    }
    return 0;
}

/*  The groupd's first line (its endpoint) when it runs on another host; 1 when taken. */
int run_vm_groupd_line(launcher_t *self, task_t *t, const char *line, size_t len)
{
    int sb = self->vm ? run_standby_line(self, t, line, len) : 0;
    if (sb == 2)
        run_vm_standby_news(self);
    if (sb)
        return 1;
    char ep[600];
    snprintf(ep, sizeof ep, "%.*s", (int)len, line);
    if (self->vm && t == self->vm->groupd_task && self->vm->groupd_ep[0])  /* (a new one) */
        return run_token_line(ep, self->vm->token, sizeof self->vm->token);
    if (!self->vm || t != self->vm->groupd_task || self->vm->groupd_ep[0])
        return 0;
    if (run_token_line(ep, self->vm->token, sizeof self->vm->token))
        return 1;
    snprintf(ep, sizeof ep, "%.*s", (int)len, line);
    int port = run_ep_port(ep);
    const char *host = self->hosts[t->host]->info.ip[0] ? self->hosts[t->host]->info.ip
                                                        : self->hosts[t->host]->info.name;
    if (port > 0)
        snprintf(self->vm->groupd_ep, sizeof self->vm->groupd_ep, "tcp://%s:%d", host, port);
    if (port > 0 && self->vm->restarting) {     /* restarted there after a crash */
        self->vm->restarting = false;
        s_manage_again(self, self->vm->died_status);
    }
    return 1;
}

/* ------------------------------------------------------------------ host table */

/*  Publishes the host table (the hosts that are up) in groupd. */
int run_vm_publish(launcher_t *self)
{
    if (!self->vm || !self->vm->mgr)
        return 0;
    char **rows = calloc((size_t)self->nhosts + 1, sizeof *rows);
    if (!rows)
        return -1;
    int k = 0;
    for (int i = 0; i < self->nhosts; i++) {
        host_t *h = self->hosts[i];
        if (h->state != HOST_UP || h->deleted)
            continue;
        char row[600];
        snprintf(row, sizeof row, "%d %s %s %d %d %d", h->dtid, h->info.name,
                 h->arch[0] ? h->arch : "?", h->info.speed > 0 ? h->info.speed : 1000,
                 h->info.slots > 0 ? h->info.slots : 1, h->ncpu);
        rows[k++] = strdup(row);
    }
    size_t len;
    uint8_t *f = vmw_encode(&len, VM_HOSTS, rows);
    for (int i = 0; i < k; i++)
        free(rows[i]);
    free(rows);
    int rc = f ? gimpi_groups_hosts_set_token(self->vm->mgr, k, f, len,
                                              self->vm->token[0] ? self->vm->token : NULL)
               : GIMPI_ENOMEM;
    free(f);
    s_drain(self);
    return rc;
}

/* ------------------------------------------------------------------ requests */

/*  Answers a request: status and, when there are results, a VM_RESULTS frame.  Once the
 *  job's groupd is lost (its connection destroyed) nobody can be answered: the request
 *  (an addhosts that ended after the loss, say) is dropped with it. */
static void s_reply(launcher_t *self, int token, int status, const int32_t *results, int n)
{
    uint8_t *f = NULL;
    size_t len = 0;
    if (!self->vm->mgr)
        return;
    if (results) {
        uint8_t *b = malloc((size_t)n * 4 + 1);
        for (int i = 0; b && i < n; i++) {
            uint32_t v = (uint32_t)results[i];
            b[4 * i] = (uint8_t)(v >> 24), b[4 * i + 1] = (uint8_t)(v >> 16);
            b[4 * i + 2] = (uint8_t)(v >> 8), b[4 * i + 3] = (uint8_t)v;
        }
        f = b ? vmw_encode(&len, VM_RESULTS, b, (size_t)n * 4) : NULL;
        free(b);
    }
    gimpi_groups_mgr_reply(self->vm->mgr, token, status, f, len);
    free(f);
    s_drain(self);
}

/*  A request waiting for slots. */
static pending_t *s_pending_new(launcher_t *self, int token, int kind, int n)
{
    pending_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->results = calloc((size_t)n + 1, sizeof *p->results);
    p->ref = calloc((size_t)n + 1, sizeof *p->ref);
    if (!p->results || !p->ref) {
        free(p->results);
        free(p->ref);
        free(p);
        return NULL;
    }
    p->token = token;
    p->kind = kind;
    p->n = n;
    for (int i = 0; i < n; i++)
        p->ref[i] = -1;
    p->next = self->vm->pending;
    self->vm->pending = p;
    self->vm->npending++;
    return p;
}

/*  Frees a request. */
static void s_pending_free(pending_t *p)
{
    free(p->results);
    free(p->ref);
    free(p);
}

/*  Answers every request whose slots are all decided. */
void run_vm_progress(launcher_t *self)
{
    if (!self->vm)
        return;
    for (pending_t **pp = &self->vm->pending; *pp;) {
        pending_t *p = *pp;
        if (p->kind == VM_HOSTSYNC) {   /* waits for its agent's CLOCKED while the host is up */
            host_t *h = self->hosts[p->ref[0]];
            if (h->state != HOST_DEAD && !h->deleted) {
                pp = &p->next;
                continue;
            }
            *pp = p->next;
            self->vm->npending--;
            s_reply(self, p->token, GIMPI_EHOSTFAIL, NULL, 0);
            s_pending_free(p);
            continue;
        }
        bool done = true;
        for (int i = 0; i < p->n && done; i++) {
            if (p->ref[i] < 0)
                continue;
            if (p->kind == VM_SPAWN) {
                task_t *t = self->tasks[p->ref[i]];
                if (!t->started && !t->exited)
                    done = false;
                else
                    p->results[i] = t->start_err ? t->start_err : t->tid;
            } else {
                host_t *h = self->hosts[p->ref[i]];
                if (h->state == HOST_STARTING)
                    done = false;
                else
                    p->results[i] = h->state == HOST_UP ? h->dtid : GIMPI_ECANTSTART;
            }
        }
        if (!done) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        self->vm->npending--;
        s_reply(self, p->token, 0, p->results, p->n);
        s_pending_free(p);
    }
}

/*  The number variable name=N of env, or 0. */
static int s_env_int(char **env, const char *name)
{
    size_t len = strlen(name);
    for (int i = 0; env && env[i]; i++)
        if (!strncmp(env[i], name, len) && env[i][len] == '=')
            return atoi(env[i] + len + 1);
    return 0;
}

/*  VM_SPAWN: n tasks with tids first..first+n-1 (reserved by the caller), each placed by
 *  where and flags, started here or by the host's agent. */
static void s_spawn(launcher_t *self, int token, vmw_msg_t *m)
{
    const char *file = m->s[0], *where = m->s[1];
    char **argv = m->v[2], **env = m->v[3];
    int flags = m->i[4], n = m->i[5], first = m->i[6];
    if (n < 1 || n > 4096 || first < 1 || !*file) {
        s_reply(self, token, GIMPI_EBADPARAM, NULL, 0);
        return;
    }
    pending_t *p = s_pending_new(self, token, VM_SPAWN, n);
    if (!p) {
        s_reply(self, token, GIMPI_ENOMEM, NULL, 0);
        return;
    }
    int nargs = 0;
    while (argv && argv[nargs])
        nargs++;
    for (int i = 0; i < n; i++) {
        int hi = run_hosts_pick(self, flags, where);
        if (hi < 0) {
            p->results[i] = hi;
            continue;
        }
        host_t *h = self->hosts[hi];
        char **targv = calloc((size_t)nargs + 2, sizeof *targv);
        task_t *t = targv ? run_task_new(self, hi, targv, true) : NULL;
        if (!t) {
            free(targv);
            p->results[i] = GIMPI_ENOMEM;
            continue;
        }
        targv[0] = strdup(file);
        for (int k = 0; k < nargs; k++)
            targv[k + 1] = strdup(argv[k]);
        t->tid = first + i;
        t->catchout = flags & VM_SPAWN_CATCH;
        t->ptid = s_env_int(env, GIMPI_ENV_PARENT);
        p->ref[i] = t->id;
        /* its environment: ours, then the caller's (hand-over and exported variables: they
           win), and its tid */
        int nenv = 0;
        while (env && env[nenv])
            nenv++;
        char **tenv = run_export_env(&h->info, nenv + 5);
        int k = 0;
        while (tenv && tenv[k])
            k++;
        for (int e = 0; tenv && e < nenv; e++)
            tenv[k++] = strdup(env[e]);
        char buf[64], wd[PATH_MAX];
        snprintf(buf, sizeof buf, "%s=%d", GIMPI_ENV_TID, t->tid);
        if (tenv)
            tenv[k++] = strdup(buf);
        run_trace_env(self, h, tenv);   /* -trace: this host's clock offset */
        int code = 0;
        if (!tenv)
            t->start_err = GIMPI_ENOMEM;
        else if (h->local) {
            const char *dir = run_wd(&h->info, wd, sizeof wd);
            if (run_tasks_start_spawned(self, t, tenv, dir, &code) < 0)
                t->start_err = code;    /* its start said why on our stderr */
            else
                run_task_catch_mark(t, "BEGIN");
        } else {
            char spec[80];
            run_addr_spec(self->myaddr, self->ifspec, spec, sizeof spec);
            size_t len;
            const char *dir = run_wd(&h->info, wd, sizeof wd);
            if (run_hosts_send(h, vmw_encode(&len, AGENT_START, t->id, 0, spec, dir, targv, tenv,
                                             0, 0)) < 0)
                t->start_err = GIMPI_EHOSTFAIL;
        }
        run_free_env(tenv);             /* the child put copies in its environment */
        if (t->start_err) {
            t->started = true;
            if (!t->exited) {
                t->exited = true;
                self->nrunning--;
                run_vm_task_ended(self, t);
            }
        }
    }
    run_vm_progress(self);
}

/*  VM_ADDHOSTS: each line is a hostfile line; its slot is the new host's id once its
 *  agent said HELLO, PvmDupHost, or PvmCantStart. */
static void s_addhosts(launcher_t *self, int token, vmw_msg_t *m)
{
    int n = 0;
    while (m->v[0] && m->v[0][n])
        n++;
    if (n < 1) {
        s_reply(self, token, GIMPI_EBADPARAM, NULL, 0);
        return;
    }
    pending_t *p = s_pending_new(self, token, VM_ADDHOSTS, n);
    if (!p) {
        s_reply(self, token, GIMPI_ENOMEM, NULL, 0);
        return;
    }
    for (int i = 0; i < n; i++) {
        char err[512];
        gimpi_hostset_t *hs = gimpi_hostset_new();
        int rc = hs ? gimpi_hostset_add_line(hs, m->v[0][i], err, sizeof err) : -1;
        if (!hs || rc < 0 || gimpi_hostset_size(hs) != 1) {
            fprintf(stderr, "gimpirun: pvm_addhosts \"%s\": %s\n", m->v[0][i],
                    hs ? err : "out of memory");
            p->results[i] = GIMPI_EBADPARAM;
        } else {
            /* a host listed with '&' in the hostfile keeps its options */
            const gimpi_hostinfo_t *info = gimpi_hostset_get(hs, 0);
            int known = gimpi_hostset_find(self->hostset, info->name);
            if (known >= 0 && gimpi_hostset_get(self->hostset, known)->later)
                info = gimpi_hostset_get(self->hostset, known);
            int hi = run_hosts_add(self, info, err, sizeof err);
            if (hi >= 0)
                p->ref[i] = hi;
            else {
                if (hi == GIMPI_ECANTSTART)
                    fprintf(stderr, "gimpirun: pvm_addhosts %s: %s\n", info->name, err);
                p->results[i] = hi;
            }
        }
        gimpi_hostset_destroy(&hs);
    }
    run_vm_progress(self);
}

/*  VM_DELHOSTS: each named host's agent ends its tasks and exits; 0 per host, PvmNoHost
 *  for an unknown one, PvmBadParam for this host (the manager's own, as PVM refuses to
 *  delete the master host). */
static void s_delhosts(launcher_t *self, int token, vmw_msg_t *m)
{
    int n = 0;
    while (m->v[0] && m->v[0][n])
        n++;
    int32_t *res = calloc((size_t)n + 1, sizeof *res);
    if (!res || n < 1) {
        s_reply(self, token, res ? GIMPI_EBADPARAM : GIMPI_ENOMEM, NULL, 0);
        free(res);
        return;
    }
    for (int i = 0; i < n; i++) {
        res[i] = GIMPI_ENOHOST;
        for (int k = 0; k < self->nhosts; k++) {
            host_t *h = self->hosts[k];
            if (h->deleted || h->state != HOST_UP || (strcasecmp(h->info.name, m->v[0][i])
                                                      && strcasecmp(h->info.ip, m->v[0][i])))
                continue;
            if (h->local) {
                res[i] = GIMPI_EBADPARAM;
                break;
            }
            h->deleted = true;
            run_hosts_quit(self, h);
            res[i] = 0;
            break;
        }
    }
    run_vm_publish(self);
    s_reply(self, token, 0, res, n);
    free(res);
}

/*  VM_KILL: a task this manager started, wherever it runs. */
static void s_kill(launcher_t *self, int token, vmw_msg_t *m)
{
    int tid = m->i[0], sig = m->i[1];
    if (sig < 1 || sig > 64) {
        s_reply(self, token, GIMPI_EBADPARAM, NULL, 0);
        return;
    }
    for (int i = 0; i < self->nall; i++) {
        task_t *t = self->tasks[i];
        if (t->tid == tid && !t->exited && !t->groupd) {
            run_hosts_kill(self, t, sig);
            s_reply(self, token, 0, NULL, 0);
            return;
        }
    }
    s_reply(self, token, GIMPI_ENOTASK, NULL, 0);
}

/*  VM_HOSTSYNC: the clock of a host, read there (pvm_hostsync).  The manager's own
 *  machine answers at once; an agent is asked (CLOCK, the request's token as its id) and
 *  the request waits for its answer (run_vm_host_clock); a host that is down, or goes
 *  down meanwhile (run_vm_progress), is GIMPI_EHOSTFAIL. */
static void s_hostsync(launcher_t *self, int token, vmw_msg_t *m)
{
    for (int i = 0; i < self->nhosts; i++) {
        host_t *h = self->hosts[i];
        if (h->dtid != m->i[0] || h->deleted)
            continue;
        size_t len;
        if (!h->local) {
            pending_t *p = NULL;
            if (h->state != HOST_UP
                || run_hosts_send(h, vmw_encode(&len, AGENT_CLOCK, token)) < 0)
                s_reply(self, token, GIMPI_EHOSTFAIL, NULL, 0);
            else if (!(p = s_pending_new(self, token, VM_HOSTSYNC, 2)))
                s_reply(self, token, GIMPI_ENOMEM, NULL, 0);
            else
                p->ref[0] = i;
            return;
        }
        struct timeval tv;
        gettimeofday(&tv, NULL);
        int32_t clk[2] = { (int32_t)tv.tv_sec, (int32_t)tv.tv_usec };
        s_reply(self, token, 0, clk, 2);
        return;
    }
    s_reply(self, token, GIMPI_ENOHOST, NULL, 0);
}

/*  An agent's CLOCK answer: the reply to the VM_HOSTSYNC request waiting with that token
 *  (none when its host was given up meanwhile). */
void run_vm_host_clock(launcher_t *self, int token, int sec, int usec)
{
    if (!self->vm)
        return;
    for (pending_t **pp = &self->vm->pending; *pp; pp = &(*pp)->next) {
        pending_t *p = *pp;
        if (p->kind != VM_HOSTSYNC || p->token != token)
            continue;
        *pp = p->next;
        self->vm->npending--;
        int32_t clk[2] = { sec, usec };
        s_reply(self, token, 0, clk, 2);
        s_pending_free(p);
        return;
    }
}

/*  groupd relayed requests: serve every one that is there. */
static void s_on_requests(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)loop, (void)fd, (void)events;
    launcher_t *self = arg;
    if (!self->vm->mgr || self->vm->serving)
        return;
    self->vm->serving = true;
    for (;;) {
        int token;
        void *payload = NULL;
        size_t len = 0;
        int rc = gimpi_groups_mgr_next(self->vm->mgr, &token, &payload, &len);
        if (rc <= 0) {
            if (rc < 0 && (self->vm->journal[0] || self->vm->standby_on))
                s_unmanage(self);       /* restarted when we reap it, or taken over */
            else if (rc < 0 && self->nrunning > 0) {
                fprintf(stderr, "gimpirun: lost the job's groupd (%s): the virtual machine's "
                        "requests can no longer be served\n", gimpi_strerror(rc));
                s_unmanage(self);
            }
            free(payload);
            self->vm->serving = false;
            return;
        }
        vmw_msg_t m;
        char err[256];
        if (self->vm->npending >= MAX_PENDING)
            s_reply(self, token, GIMPI_EOUTOFRES, NULL, 0);
        else if (vmw_decode(payload, len, &m, err, sizeof err) < 0) {
            fprintf(stderr, "gimpirun: a malformed request to the virtual machine: %s\n", err);
            s_reply(self, token, GIMPI_EBADMSG, NULL, 0);
        } else {
            switch (m.type) {
            case VM_SPAWN: s_spawn(self, token, &m); break;
            case VM_ADDHOSTS: s_addhosts(self, token, &m); break;
            case VM_DELHOSTS: s_delhosts(self, token, &m); break;
            case VM_KILL: s_kill(self, token, &m); break;
            case VM_HOSTSYNC: s_hostsync(self, token, &m); break;
            default: s_reply(self, token, GIMPI_EBADMSG, NULL, 0); break;
            }
            vmw_msg_free(&m);
        }
        free(payload);
    }
}

/* ------------------------------------------------------------------ life */

/*  Once a second: a groupd that went away is noticed on a call, not by the socket. */
static void s_on_tick(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop, (void)id;
    s_drain(arg);
}

/* ------------------------------------------------------------------ the standby */

/*  Manages the groupd at vm->groupd_ep (restarted, or taken over): the host table, and
 *  every task that ended told again (TASK_EXIT does nothing twice), since one that ended
 *  while no groupd was managed was told to none; given up at a failure (a groupd lost
 *  again: its loss is seen as any other).  0 or an error. */
static int s_manage_new(launcher_t *self)
{
    gimpi_groups_t *mgr = self->vm->mgr = gimpi_groups_new(self->vm->groupd_ep, NULL);
    int rc = mgr ? run_vm_publish(self) : GIMPI_ENOMEM, told = 0;
    for (int i = 0; rc >= 0 && (told >= 0 || told == GIMPI_ENOTASK) && i < self->nall; i++)
        if (self->tasks[i]->exited && self->tasks[i]->tid > 0 && !self->tasks[i]->groupd)
            told = gimpi_groups_task_exit(mgr, self->tasks[i]->tid, self->tasks[i]->status);
    return rc;
}

/*  The port a standby serves at once it takes over (the primary's, on its own host) and
 *  its event port; 0 when unknown. */
static int s_sb_port(launcher_t *self, int *pub)
{
    run_vm_t *vm = self->vm;
    int port = vm->port > 0 ? vm->port : run_ep_port(vm->groupd_ep);
    *pub = vm->pub_port > 0 ? vm->pub_port : port > 0 ? port + 1 : 0;
    return port > 0 ? port : 0;
}

/*  GIMPI_GROUPD for the tasks started from now on: the primary, then its standby, then the
 *  other hosts at the same port (where a later standby may serve), up to MAX_LIST. */
static void s_task_endpoints(launcher_t *self)
{
    run_vm_t *vm = self->vm;
    char list[1024];            /* (the client takes up to some 500 bytes) */
    int pub, port = s_sb_port(self, &pub), n = 1;
    snprintf(list, sizeof list, "%s", vm->groupd_ep);
    const char *sep;
    int sh = run_standby_info(self, &sep, NULL, NULL, NULL);
    if (sh >= 0 && strlen(list) + strlen(sep) + 2 < 500) {
        strcat(list, ",");
        strcat(list, sep);
        n++;
    }
    for (int k = 1; port > 0 && k < self->nhosts && n < MAX_LIST; k++) {
        int i = (vm->primary_host + k) % self->nhosts;
        host_t *h = self->hosts[i];
        char ep[128];
        if (i == sh || h->deleted || h->state == HOST_DEAD)
            continue;
        snprintf(ep, sizeof ep, "tcp://%s:%d", run_host_addr(self, h), port);
        if (strlen(list) + strlen(ep) + 2 < 500 && !strstr(list, ep)) {
            strcat(list, ",");
            strcat(list, ep);
            n++;
        }
    }
    setenv("GIMPI_GROUPD", list, 1);
}

/*  True once the standby follows, or will not. */
static bool s_sb_settled(launcher_t *self)
{
    return run_standby_state(self) != RUN_SB_STARTING;
}

/*  Starts a standby of the primary on the next host that fits (first: the one
 *  -groupd-standby names), and, when wait, waits for it to follow (GROUPD_START_MS).  A
 *  standby that cannot start is said; the job goes on without one.  0 or -1. */
static int s_sb_start(launcher_t *self, bool first, bool wait)
{
    run_vm_t *vm = self->vm;
    int pub, port = s_sb_port(self, &pub);
    int hi = run_standby_pick(self, vm->primary_host, first);
    char err[512];
    if (hi < 0 || port <= 0) {
        if (!first || self->standby_host)
            fprintf(stderr, "gimpirun: no host left for a standby groupd: the job's groupd "
                    "at %s has none\n", vm->groupd_ep);
        return -1;
    }
    if (run_standby_start(self, hi, vm->groupd_ep, port, pub, err, sizeof err) < 0) {
        fprintf(stderr, "gimpirun: the standby groupd on %s did not start: %s\n",
                self->hosts[hi]->info.name, err);
        return -1;
    }
    if (wait && (run_hosts_wait(self, s_sb_settled, GROUPD_START_MS) < 0
                 || run_standby_state(self) != RUN_SB_READY)) {
        fprintf(stderr, "gimpirun: the standby groupd on %s did not follow the job's groupd "
                "within %d s: the job runs without one\n", self->hosts[hi]->info.name,
                GROUPD_START_MS / 1000);
        run_standby_forget(self);
        return -1;
    }
    return 0;
}

/*  Once managed again after a takeover: a new standby, from the next host on. */
static void s_sb_next(launcher_t *self)
{
    if (self->nrunning > 0 && s_sb_start(self, false, false) < 0)
        s_task_endpoints(self);
}

/*  After a takeover: one try to manage the new primary (it may not serve yet: tried again
 *  every 100 ms until MANAGE_MS), with its token, else the one before. */
static void s_on_manage(gimpi_loop_t *loop, int id, void *arg)
{
    (void)id;
    launcher_t *self = arg;
    run_vm_t *vm = self->vm;
    vm->manage_timer = 0;
    if (vm->mgr || self->nrunning <= 0)
        return;
    if (self->late_token[0]) {          /* (the new primary here printed its own) */
        memcpy(vm->token, self->late_token, sizeof vm->token);
        self->late_token[0] = 0;
    }
    if (vm->alt_token[0] && vm->manage_tries++ % 2) {   /* alternately, the other token */
        char t[sizeof vm->token];
        memcpy(t, vm->token, sizeof t);
        memcpy(vm->token, vm->alt_token, sizeof t);
        memcpy(vm->alt_token, t, sizeof t);
    }
    int rc = s_manage_new(self);
    if (rc < 0) {
        gimpi_groups_destroy(&vm->mgr);
        if (gimpi_loop_now_ms() < vm->manage_until) {
            vm->manage_timer = gimpi_loop_timer_add(loop, 100, 0, s_on_manage, self);
            return;
        }
        fprintf(stderr, "gimpirun: cannot manage the job's groupd at %s after the takeover "
                "(%s): the virtual machine's requests can no longer be served\n",
                vm->groupd_ep, gimpi_strerror(rc));
        return;
    }
    gimpi_loop_fd_add(self->loop, gimpi_groups_fd(vm->mgr), GIMPI_LOOP_READ, s_on_requests, self);
    fprintf(stderr, "gimpirun: managing the job's groupd at %s, %lld ms after the primary "
            "was lost\n", vm->groupd_ep, (long long)(gimpi_loop_now_ms() - vm->died_ms));
    s_on_requests(self->loop, 0, 0, self);
    s_sb_next(self);
}

/*  The primary is lost (why) and the standby follows or took over: it is the primary
 *  from now on (not restarted where it was); gimpirun manages it as soon as it serves,
 *  then starts a new standby.  The old one, if it still runs (a cut host), is killed.
 *  True when the standby takes over. */
static bool s_failover(launcher_t *self, const char *why)
{
    run_vm_t *vm = self->vm;
    run_sb_state_t st = run_standby_state(self);
    if (!vm->standby_on || self->nrunning <= 0 || (st != RUN_SB_READY && st != RUN_SB_TOOK_OVER))
        return false;
    if (st == RUN_SB_READY) {   /* the witness's grant, unasked (it is lost): it takes over */
        run_standby_signal(self, SIGUSR1);              /* and says so (news, again here) */
        s_unmanage(self);
        return true;
    }
    const char *ep, *token, *journal;
    int hi = run_standby_info(self, &ep, &token, &journal, NULL);
    char old[sizeof vm->groupd_ep];
    snprintf(old, sizeof old, "%s", vm->groupd_ep);
    if (vm->groupd_task && !vm->groupd_task->exited)
        run_hosts_kill(self, vm->groupd_task, SIGKILL);
    if (self->groupd_pid > 0)
        kill(self->groupd_pid, SIGKILL);        /* (reaped as none of ours) */
    run_hosts_forget_journal(self, vm->groupd_task, vm->journal);   /* (the standby has it all) */
    snprintf(vm->groupd_ep, sizeof vm->groupd_ep, "%s", ep);
    snprintf(vm->journal, sizeof vm->journal, "%s", journal);
    snprintf(vm->alt_token, sizeof vm->alt_token, "%s", token[0] ? vm->token : "");
    if (token[0])
        snprintf(vm->token, sizeof vm->token, "%s", token);
    vm->primary_host = hi;
    run_standby_promote(self, &vm->groupd_task, &self->groupd_pid);
    vm->restarting = false;
    vm->takeovers++;
    vm->died_ms = gimpi_loop_now_ms();
    s_unmanage(self);
    fprintf(stderr, "gimpirun: the job's groupd at %s %s; its standby on %s takes over at "
            "%s\n", old, why, self->hosts[hi]->info.name, vm->groupd_ep);
    s_task_endpoints(self);
    run_jobfile_endpoint(vm->groupd_ep);        /* (the console and gimpi-stat find it) */
    vm->manage_until = vm->died_ms + MANAGE_MS;
    vm->manage_tries = 0;
    if (vm->manage_timer)
        gimpi_loop_timer_cancel(self->loop, vm->manage_timer);
    vm->manage_timer = gimpi_loop_timer_add(self->loop, 0, 0, s_on_manage, self);
    return true;
}

/*  News of the standby: it follows (said), it took over (the failover), or it ended (a
 *  new one on the next host; after as many failures in a row as hosts, none). */
void run_vm_standby_news(launcher_t *self)
{
    run_vm_t *vm = self->vm;
    if (!vm)
        return;
    const char *ep;
    int status = 0, hi = run_standby_info(self, &ep, NULL, NULL, &status);
    switch (run_standby_state(self)) {
    case RUN_SB_READY:
        vm->sb_fails = 0;
        s_task_endpoints(self);
        if (!vm->sb_quiet)
            fprintf(stderr, "gimpirun: a standby groupd on %s follows the job's groupd at %s "
                    "(it takes over at %s)\n", self->hosts[hi]->info.name, vm->groupd_ep, ep);
        vm->sb_quiet = false;
        break;
    case RUN_SB_TOOK_OVER:
        s_failover(self, "fell silent");
        break;
    case RUN_SB_ENDED:
        if (self->nrunning <= 0)
            break;
        fprintf(stderr, "gimpirun: the standby groupd on %s ended (%s %d)\n",
                self->hosts[hi]->info.name, WIFSIGNALED(status) ? "signal" : "status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        run_standby_forget(self);
        if (++vm->sb_fails <= self->nhosts && vm->mgr)
            s_sb_next(self);
        else
            s_task_endpoints(self);
        break;
    default:
        break;
    }
}

/*  Our local standby was reaped. */
void run_vm_standby_died(launcher_t *self, pid_t pid, int status)
{
    if (run_standby_reaped(self, pid, status))
        run_vm_standby_news(self);
}

/*  The first standby, when the job has a host set with another host that fits and the
 *  groupd can be one; the tasks' endpoints in any case. */
static void s_sb_first(launcher_t *self, host_t *on)
{
    run_vm_t *vm = self->vm;
    vm->primary_host = -1;
    for (int i = 0; i < self->nhosts; i++)
        if (on ? self->hosts[i] == on : self->hosts[i]->local)
            vm->primary_host = i;
    vm->standby_on = vm->primary_host >= 0 && self->nhosts > 1 && vm->journal[0]
                   && !(self->standby_host && !strcmp(self->standby_host, "none"));
    if (vm->standby_on && !run_standby_supported()) {
        if (self->standby_host)         /* (said only when one was asked for) */
            fprintf(stderr, "gimpirun: this groupd cannot be a standby (no --standby-of): "
                    "the job's groupd has none\n");
        vm->standby_on = false;
    }
    vm->sb_quiet = !self->standby_host;     /* (a job that goes well says nothing) */
    vm->standby_on = vm->standby_on && s_sb_start(self, true, true) == 0;
    if (vm->standby_on)
        setenv("GIMPI_GROUPD_RESTARTABLE", "1", 1);
}

/*  Gets the job a groupd every host reaches and becomes its manager.  0, or -1. */
int run_vm_start(launcher_t *self, char *err, size_t errsize)
{
    self->vm = calloc(1, sizeof *self->vm);
    if (!self->vm) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    self->vm->groupd_out = -1;
    const char *given = gimpi_env("GIMPI_GROUPD");
    host_t *on = NULL;
    if (given && !strncmp(given, "tcp://", 6))
        snprintf(self->vm->groupd_ep, sizeof self->vm->groupd_ep, "%s", given);
    else {
        for (int i = 0; self->groupd_host && i < self->nhosts; i++)
            if (!strcmp(self->hosts[i]->info.name, self->groupd_host)
                || !strcmp(self->hosts[i]->info.ip, self->groupd_host))
                on = self->hosts[i];
        if (self->groupd_host && !on) {
            snprintf(err, errsize, "-groupd %s: not a host of the job", self->groupd_host);
            return -1;
        }
        if (run_standby_check(self, on, err, errsize) < 0)
            return -1;
        s_restartable(self, on);
        int rc = on && !on->local ? s_start_remote_groupd(self, on, err, errsize)
                                  : s_start_local_groupd(self, err, errsize);
        if (rc < 0)
            return -1;
    }
    setenv("GIMPI_GROUPD", self->vm->groupd_ep, 1);     /* our tasks, and every request here */
    /* a host added later must reach us (run_hosts.c), where groupd or tasks of the job
       run: not a login node outside the allocation whose groupd runs on a node */
    for (int i = 0; i < self->nhosts; i++)
        self->probe_added |= self->hosts[i]->local;
    self->probe_added |= self->groupd_pid > 0;
    /* what this host's tasks spawn listens where the other hosts reach it, under this
       host's name in the virtual machine */
    setenv(GIMPI_ENV_HOST_ADDR, self->myaddr, 1);
    for (int i = 0; i < self->nhosts; i++)
        if (self->hosts[i]->local) {
            setenv(GIMPI_ENV_HOST, self->hosts[i]->info.name, 1);
            break;
        }
    self->vm->mgr = gimpi_groups_new(self->vm->groupd_ep, NULL);
    int rc = self->vm->mgr ? run_vm_publish(self) : GIMPI_ENOMEM;
    if (rc < 0) {
        snprintf(err, errsize, "cannot manage the virtual machine through groupd at %s: %s%s",
                 self->vm->groupd_ep, gimpi_strerror(rc),
                 rc == GIMPI_EEXISTS ? " (another gimpirun manages it)" : "");
        gimpi_groups_destroy(&self->vm->mgr);
        return -1;
    }
    gimpi_loop_fd_add(self->loop, gimpi_groups_fd(self->vm->mgr), GIMPI_LOOP_READ, s_on_requests,
                      self);
    /* our tasks reconnect to a groupd we restart or its standby (not the manager: it is
       made anew) */
    if (self->vm->journal[0])
        setenv("GIMPI_GROUPD_RESTARTABLE", "1", 1);
    if (!given || strncmp(given, "tcp://", 6))
        s_sb_first(self, on);
    self->vm->timer = gimpi_loop_timer_add(self->loop, 1000, 1, s_on_tick, self);
    s_on_requests(self->loop, 0, 0, self);  /* arms the first wait */
    return 0;
}

/*  True when a groupd's end (its wait status) was a crash: any but exit 0 or SIGTERM,
 *  SIGINT, SIGHUP, which are ends on purpose (HALT, the job's end) that remove its
 *  journal. */
static bool s_crashed(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) != 0
         : !WIFSIGNALED(status) || (WTERMSIG(status) != SIGTERM && WTERMSIG(status) != SIGINT
                                    && WTERMSIG(status) != SIGHUP);
}

/*  Says that the restart of the job's groupd (after `status`) failed, and why. */
static void s_restart_failed(launcher_t *self, int status, const char *why)
{
    fprintf(stderr, "gimpirun: the job's groupd ended (%s %d) and could not be restarted from "
            "its journal %s: %s\n", WIFSIGNALED(status) ? "signal" : "status",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), self->vm->journal,
            why);
    gimpi_groups_destroy(&self->vm->mgr);
}

/*  The restarted groupd serves at vm->groupd_ep: we manage it anew (its new token), and
 *  say so.  0, or -1 (said). */
static int s_manage_again(launcher_t *self, int status)
{
    run_vm_t *vm = self->vm;
    int rc = s_manage_new(self);
    if (rc < 0) {
        s_restart_failed(self, status, gimpi_strerror(rc));
        return -1;
    }
    vm->restarts++;
    gimpi_loop_fd_add(self->loop, gimpi_groups_fd(vm->mgr), GIMPI_LOOP_READ, s_on_requests, self);
    fprintf(stderr, "gimpirun: the job's groupd ended (%s %d); restarted from its journal at "
            "%s in %lld ms\n", WIFSIGNALED(status) ? "signal" : "status",
            WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), vm->groupd_ep,
            (long long)(gimpi_loop_now_ms() - vm->died_ms));
    s_on_requests(self->loop, 0, 0, self);
    return 0;
}

/*  Our groupd ended while the job runs: after a crash, with a journal, it is started again
 *  at once, at its ports, from the journal (--restart), and we manage it anew; the tasks
 *  reconnect by themselves (GIMPI_GROUPD_RESTARTABLE).  Here (our child) at once; on
 *  another host through its agent, managed when its endpoint line comes.  Without a
 *  journal, or when the restart fails, the job's group calls fail as before (said).
 *  True when a restart is under way or done. */
static bool s_restart(launcher_t *self, int status, host_t *on)
{
    run_vm_t *vm = self->vm;
    char why[64];
    snprintf(why, sizeof why, "ended (%s %d)", WIFSIGNALED(status) ? "signal" : "status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    if (vm && self->nrunning > 0 && s_failover(self, why))
        return true;
    if (!vm || self->nrunning <= 0 || !vm->journal[0] || vm->port <= 0 || !s_crashed(status))
        return false;
    vm->died_ms = gimpi_loop_now_ms();
    vm->died_status = status;
    s_unmanage(self);
    char err[512];
    vm->restarting = true;
    if (on) {
        vm->groupd_ep[0] = 0;           /* its line sets it again (run_vm_groupd_line) */
        if (s_send_remote_groupd(self, on, err, sizeof err) < 0) {
            vm->restarting = false;
            s_restart_failed(self, status, err);
        }
        return true;
    }
    int rc = s_start_local_groupd(self, err, sizeof err);
    vm->restarting = false;
    if (rc < 0)
        s_restart_failed(self, status, err);
    else
        s_manage_again(self, status);
    return true;
}

/*  Our local groupd ended while the job runs: restarted after a crash (s_restart). */
void run_vm_groupd_died(launcher_t *self, int status)
{
    if (self->vm && self->nrunning > 0 && !s_restart(self, status, NULL))
        fprintf(stderr, "gimpirun: the job's groupd ended while the job runs\n");
}

/*  A task ended: groupd forgets it at once (its groups, its LOOKUP). */
void run_vm_task_ended(launcher_t *self, task_t *t)
{
    if (self->vm && run_standby_task_ended(self, t)) {
        run_vm_standby_news(self);
        return;
    }
    if (self->vm && t == self->vm->groupd_task) {
        self->vm->groupd_task = NULL;
        if (self->vm->restarting) {     /* the restart there ended before it served */
            self->vm->restarting = false;
            s_restart_failed(self, self->vm->died_status, "it ended before it served");
            return;
        }
        if (self->nrunning > 0 && self->vm->groupd_ep[0]
            && !s_restart(self, t->status, self->hosts[t->host]))
            fprintf(stderr, "gimpirun: the job's groupd on %s ended\n",
                    self->hosts[t->host]->info.name);
        return;
    }
    if (self->vm && self->vm->mgr && t->tid > 0) {
        gimpi_groups_task_exit(self->vm->mgr, t->tid, t->status);
        s_drain(self);
    }
}

/*  The end of the job: requests still waiting fail, groupd (ours) ends. */
void run_vm_fini(launcher_t *self)
{
    if (!self->vm)
        return;
    while (self->vm->pending) {
        pending_t *p = self->vm->pending;
        self->vm->pending = p->next;
        if (self->vm->mgr)
            s_reply(self, p->token, GIMPI_ESYSERR, NULL, 0);
        s_pending_free(p);
    }
    if (self->vm->timer && self->loop)
        gimpi_loop_timer_cancel(self->loop, self->vm->timer);
    if (self->vm->manage_timer && self->loop)
        gimpi_loop_timer_cancel(self->loop, self->vm->manage_timer);
    run_standby_forget(self);
    s_unmanage(self);
    if (self->groupd_pid > 0) {
        kill(self->groupd_pid, SIGTERM);
        int status;
        while (waitpid(self->groupd_pid, &status, 0) < 0 && errno == EINTR)
            ;
        self->groupd_pid = 0;
    }
    if (self->vm->journal[0] == '/')
        unlink(self->vm->journal);      /* (groupd removes it on SIGTERM; a failed one not) */
    free(self->vm);
    self->vm = NULL;
}
