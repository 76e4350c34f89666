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
 *  seconds to end on their own before they are terminated: a job never hangs (run_tasks.c
 *  owns the tasks' output and ends).  After the last task it sends FINI to the server.
 *  One poll() loop owns every descriptor.  This file reads the command line, starts the
 *  static tasks, performs the startup, and fills in the events (run_state.h) through
 *  which run_hosts.c and run_tasks.c report to run_tasks.c and run_vm.c.
 */
#include "config.h"
#include "programs/run_state.h"
#include "programs/run_hosts.h"
#include "programs/run_proc.h"
#include "programs/run_tasks.h"
#include "programs/run_vm.h"
#include "programs/run_pvmabi.h"
#include "programs/run_jobfile.h"
#include "programs/run_catchfwd.h"
#include "programs/run_trace.h"
#include "programs/proctree.h"
#include "base/gimpi_key.h"
#include "net/gimpi_host.h"
#include "task/gimpi_job.h"
#include "impi/impi_client.h"
#include "base/gimpi_tunables.h"

#include <arpa/inet.h>
#include <assert.h>
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
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
        "  -groupd-standby HOST|none  run a standby groupd on HOST that takes over when\n"
        "                  the job's groupd is lost (default: the host after groupd's)\n"
        "  -agent PATH     gimpi-agent's path on the other hosts (default: beside gimpirun)\n"
        "  -pvm-abi        run existing PVM binaries: PVM's ABI libraries (libpvm3.so.3\n"
        "                  ...) first on LD_LIBRARY_PATH of the tasks, on every host\n"
        "  -tag            prefix every output line with the task's world rank (and the\n"
        "                  lines of tasks they spawn with [t<hex tid>]: GIMPI_TAG=1)\n"
        "  -host ADDR      IPv4 address this host's tasks listen on and announce\n"
        "                  (default: 127.0.0.1 without a host set, else the address that\n"
        "                  reaches the others, or the default route's for hosts added later)\n"
        "  -datalen B      packet data length this client offers (default %d)\n"
        "  -ackmark A      flow-control ack mark offered (default %d)\n"
        "  -hiwater H      flow-control high-water mark offered (default %d)\n"
        "  -tagub T        largest tag offered (default 2147483647)\n"
        "  -grace S        seconds the others get after a task failed, and the tasks\n"
        "                  spawned after the job's own tasks ended (default 10)\n"
        "  -timeout S      bound on the startup (default 60)\n"
        "  -trace FILE     record every task on every host (into FILE.d) and merge their\n"
        "                  files into Chrome trace-event JSON FILE when the job ends\n",
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

/*  Takes the option at argv[*i] (and its values, moving *i to the last); -np sets *np and
 *  *has_np, a host flag *hosts_given.  Exits 2 on errors, 0 after --help. */
static void s_option(launcher_t *self, int argc, char **argv, int *i, int *np, bool *has_np,
                     bool *hosts_given)
{
    char err[512];
    const char *o = argv[*i];
    if (!strcmp(o, "-np") || !strcmp(o, "-n")) {
        *np = (int)s_num(o, *i + 1 < argc ? argv[++*i] : NULL, 1, MAX_TASKS);
        *has_np = true;
    } else if (!strcmp(o, "-tag")) {
        self->tag = true;
        setenv("GIMPI_TAG", "1", 1);   /* tasks tag what they spawn (pvm_spawn) */
    }
    else if (!strcmp(o, "-pvm-abi")) {
        if (run_pvmabi_env(err, sizeof err) < 0) {
            fprintf(stderr, "gimpirun: -pvm-abi: %s\n", err);
            exit(2);
        }
    } else if (!strcmp(o, "-client")) {
        if (*i + 2 >= argc) {
            fprintf(stderr, "gimpirun: -client needs RANK HOST:PORT\n");
            exit(2);
        }
        self->client_rank = (int)s_num(o, argv[++*i], 0, IMPI_MAX_CLIENTS - 1);
        self->server = argv[++*i];
    } else if (!strcmp(o, "-host"))
        self->host = s_str(o, i, argc, argv);
    else if (!strcmp(o, "-H") || !strcmp(o, "-hosts")) {
        if (gimpi_hostset_add_list(self->hostset, s_str(o, i, argc, argv), err,
                                   sizeof err) < 0) {
            fprintf(stderr, "gimpirun: -H: %s\n", err);
            exit(2);
        }
        *hosts_given = true;
    } else if (!strcmp(o, "-hostfile") || !strcmp(o, "-machinefile")) {
        if (gimpi_hostset_add_file(self->hostset, s_str(o, i, argc, argv), err,
                                   sizeof err) < 0) {
            fprintf(stderr, "gimpirun: %s\n", err);
            exit(2);
        }
        *hosts_given = true;
    } else if (!strcmp(o, "-if"))
        self->ifspec = s_str(o, i, argc, argv);
    else if (!strcmp(o, "-groupd"))
        self->groupd_host = s_str(o, i, argc, argv);
    else if (!strcmp(o, "-groupd-standby"))
        self->standby_host = s_str(o, i, argc, argv);
    else if (!strcmp(o, "-gport"))
        self->groupd_port = (int)s_num(o, *i + 1 < argc ? argv[++*i] : NULL, 1, 65534);
    else if (!strcmp(o, "-agent"))
        self->agent = s_str(o, i, argc, argv);
    else if (!strcmp(o, "-datalen"))
        self->datalen = (uint32_t)s_num(o, *i + 1 < argc ? argv[++*i] : NULL, 1, 1 << 30);
    else if (!strcmp(o, "-ackmark"))
        self->ackmark = (uint32_t)s_num(o, *i + 1 < argc ? argv[++*i] : NULL, 1, 1 << 20);
    else if (!strcmp(o, "-hiwater"))
        self->hiwater = (uint32_t)s_num(o, *i + 1 < argc ? argv[++*i] : NULL, 1, 1 << 20);
    else if (!strcmp(o, "-tagub"))
        self->tagub = (int32_t)s_num(o, *i + 1 < argc ? argv[++*i] : NULL, 32767, 0x7fffffff);
    else if (!strcmp(o, "-grace"))
        self->grace_s = (int)s_num(o, *i + 1 < argc ? argv[++*i] : NULL, 0, 86400);
    else if (!strcmp(o, "-timeout"))
        self->timeout_s = (int)s_num(o, *i + 1 < argc ? argv[++*i] : NULL, 1, 86400);
    else if (!strcmp(o, "-trace")) {
        const char *file = s_str(o, i, argc, argv);
        if (!self->trace && !(self->trace = run_trace_new(file, err, sizeof err))) {
            fprintf(stderr, "gimpirun: %s\n", err);
            exit(2);
        }
    } else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
        s_usage(stdout);
        exit(0);
    } else {
        fprintf(stderr, "gimpirun: unknown option %s\n", o);
        s_usage(stderr);
        exit(2);
    }
}

/*  Checks the options together once the command line is read and completes the host set
 *  (a Slurm allocation, one task per slot); exits 2 on errors. */
static void s_parse_end(launcher_t *self, bool hosts_given, int nprogs, int np_given)
{
    char err[512];
    if (gimpi_bind_check_env(err, sizeof err) < 0) {
        fprintf(stderr, "gimpirun: %s\n", err);
        exit(2);
    }
    if (self->ackmark > self->hiwater) {
        fprintf(stderr, "gimpirun: -ackmark %u is above -hiwater %u\n", self->ackmark, self->hiwater);
        exit(2);
    }
    /* inside a Slurm allocation and without host flags, the allocation is the host set */
    const char *use = gimpi_env("GIMPI_SLURM");
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
    bool hosts_given = false;
    int nprogs = 0, np_given = 0;
    for (;;) {
        int np = 1;
        bool has_np = false;
        /* options (global ones may appear before any program) */
        while (i < argc && argv[i][0] == '-') {
            s_option(self, argc, argv, &i, &np, &has_np, &hosts_given);
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
    s_parse_end(self, hosts_given, nprogs, np_given);
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
 *  group calls fail).  A job of one client needs no shared key: its key is random, so
 *  that nobody who sees the tasks' addresses and pids can reserve the block first and
 *  get its token (doc/security.md §3.1).  The clients of a job of several keep the
 *  identity computable from the tables, but MACed under the secret impi-server handed
 *  each of them (authentication GIMPI_JOB), which no other job knows; only clients that
 *  authenticate with KEY or NONE (or a server that does not know GIMPI_JOB) use the bare
 *  identity. */
static int s_reserve_tids(launcher_t *self, char token[GIMPI_GROUPS_TOKEN_LEN + 1])
{
    char key[GIMPI_JOB_KEY_SIZE];
    uint8_t r[16];
    gimpi_key_t secret;
    gimpi_job_key(self->tables, key);
    if (self->client_rank < 0 && getrandom(r, sizeof r, 0) == (ssize_t)sizeof r)
        for (size_t k = 0; k < sizeof r; k++)
            snprintf(key + 4 + 2 * k, 3, "%02x", r[k]);
    else if (self->client_rank >= 0 && self->client
             && impi_client_job_secret(self->client, secret.bytes) == 0) {
        uint8_t mac[GIMPI_KEY_MACLEN];
        gimpi_key_mac(&secret, "gimpi-tr", key, strlen(key), mac);
        for (size_t k = 0; k < 16; k++)
            snprintf(key + 4 + 2 * k, 3, "%02x", mac[k]);
        gimpi_key_wipe(&secret, sizeof secret);
        gimpi_key_wipe(mac, sizeof mac);
    }
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
        int rc = run_tasks_start_local(self, t, tables_fd);
        close(t->listen_fd);
        if (t->local_fd >= 0)
            close(t->local_fd);
        t->listen_fd = t->local_fd = -1;
        t->started = rc == 0;
        return rc;
    }
    char **env = run_export_env(&h->info, 4);
    run_trace_env(self, h, env);
    char wd[PATH_MAX], spec[80], cl[40], lo[40];
    run_addr_spec(self->myaddr, self->ifspec, spec, sizeof spec);
    int k = 0;
    while (env && env[k])
        k++;
    snprintf(cl, sizeof cl, "%s=%d", GIMPI_ENV_CLIENT, self->client_rank < 0 ? 0 : self->client_rank);
    snprintf(lo, sizeof lo, "%s=%d", GIMPI_ENV_LOCAL, t->id);
    if (env) {
        env[k++] = strdup(cl);
        env[k++] = strdup(lo);
    }
    char *prog = run_abs_prog(t->argv[0]);
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
                            run_wd(&h->info, wd, sizeof wd), argv, env, t->core,
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

/*  The server's connection while the job runs: the server sends nothing until our FINI,
 *  so readable means it closed (it stops a job whose rank another holder of the key
 *  claimed, or it was stopped): the job stops at once, its tasks get SIGTERM.  Bytes
 *  (not expected) are left to the FINI exchange. */
static void s_on_server(gimpi_loop_t *loop, int fd, int events, void *arg)
{
    (void)events;
    launcher_t *self = arg;
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    gimpi_loop_fd_del(loop, fd);
    if (n > 0)
        return;
    fprintf(stderr, "gimpirun: impi-server closed the job's connection while the job runs "
            "(see its log: another holder of the key may have claimed a rank of this job); "
            "stopping the job\n");
    self->server_gone = true;
    self->failed = true;
    run_tasks_signal_all(self, SIGTERM);
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
    run_tasks_watch_signals(self);

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
        run_trace_sync(self);       /* -trace: the hosts' clocks against ours */
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
        run_tasks_signal_all(self, SIGKILL);
    s_go(self, started, tables_fd);
    close(tables_fd);
    /* the console and gimpi-stat find the job's groupd by its run file */
    if (!self->failed && run_jobfile_write(NULL, self->nhosts, from, self->tasks[0]->argv) == 0)
        self->catchfwd = run_catchfwd_new(self->loop);

    if (started && self->client)
        gimpi_loop_fd_add(self->loop, impi_client_fd(self->client), GIMPI_LOOP_READ,
                          s_on_server, self);
    /* the loop: output, ends, signals, the virtual machine's requests, the grace deadline */
    run_tasks_reap(self);       /* a task may have died before the loop ran */
    if (self->nrunning > 0 || self->nstreams > 0 || run_hosts_busy(self))
        gimpi_loop_run(self->loop);
    run_vm_fini(self);
    run_trace_finish(self);     /* -trace: the tasks' files merged */
    run_catchfwd_destroy(&self->catchfwd);
    run_jobfile_remove();
    gimpi_loop_destroy(&self->loop);
    if (self->client && !self->server_gone) {
        if (impi_client_fini(self->client, err, sizeof err) < 0) {
            fprintf(stderr, "gimpirun: FINI to the server failed: %s\n", err);
            self->failed = true;
        }
    }
    return self->failed ? 1 : self->ended_leftovers ? 3 : 0;
}

/* ------------------------------------------------------------------ events */

/*  A host came up or is gone: the virtual machine's table, and its waiting requests. */
static void s_ev_host_changed(void *arg)
{
    launcher_t *self = arg;
    assert(self);
    run_trace_hosts(self);      /* -trace: a host that came up gets its clock measured */
    run_vm_publish(self);
    run_vm_progress(self);
}

/*  An agent started a task: a caught task's BEGIN, and the requests waiting for it. */
static void s_ev_task_started(void *arg, task_t *t)
{
    assert(arg);
    run_task_catch_mark(t, "BEGIN");
    run_vm_progress(arg);
}

/*  A line of a task on another host; the job's groupd's tell its endpoint, or news. */
static void s_ev_task_output(void *arg, task_t *t, int which, const char *line, size_t len)
{
    launcher_t *self = arg;
    assert(self);
    if (!t->groupd)
        run_task_output(self, t, which, line, len);
    else if (!run_vm_groupd_line(self, t, line, len))
        fprintf(stderr, "gimpirun: groupd on %s: %.*s\n", self->hosts[t->host]->info.name,
                (int)len, line);
}

/*  A task on another host ended, failed to start, or was lost with its host. */
static void s_ev_task_ended(void *arg, task_t *t, int status)
{
    assert(arg);
    run_task_ended(arg, t, status);
}

/*  A slot of a waiting request may be decided. */
static void s_ev_progress(void *arg)
{
    assert(arg);
    run_vm_progress(arg);
}

/*  A task's end was counted: groupd forgets it. */
static void s_ev_task_gone(void *arg, task_t *t)
{
    assert(arg);
    run_vm_task_ended(arg, t);
}

/*  Something the loop waits for ended: maybe the job did. */
static void s_ev_check_done(void *arg)
{
    assert(arg);
    run_tasks_check_done(arg);
}

/*  An agent read its clock for a request of the virtual machine. */
static void s_ev_host_clock(void *arg, int id, int sec, int usec)
{
    assert(arg);
    run_vm_host_clock(arg, id, sec, usec);
}

/*  Our local groupd ended: restarted from its journal while the job runs. */
static void s_ev_groupd_died(void *arg, int status)
{
    assert(arg);
    run_vm_groupd_died(arg, status);
}

/*  The standby groupd follows, or took over (run_standby.c). */
static void s_ev_standby_news(void *arg)
{
    assert(arg);
    run_vm_standby_news(arg);
}

/*  Our local standby groupd ended. */
static void s_ev_standby_died(void *arg, pid_t pid, int status)
{
    assert(arg);
    run_vm_standby_died(arg, pid, status);
}

/*  An agent's -trace frame: its clock, its tasks' files. */
static void s_ev_trace_frame(void *arg, int host, const vmw_msg_t *m)
{
    assert(arg);
    run_trace_frame(arg, host, m);
}

int main(int argc, char **argv)
{
    launcher_t self = { .sigfd = -1, .tidbase = -1 };
    const run_events_t events = {
        .host_changed = s_ev_host_changed, .task_started = s_ev_task_started,
        .task_output = s_ev_task_output, .task_ended = s_ev_task_ended,
        .progress = s_ev_progress, .task_gone = s_ev_task_gone,
        .check_done = s_ev_check_done, .host_clock = s_ev_host_clock,
        .trace_frame = s_ev_trace_frame, .groupd_died = s_ev_groupd_died,
        .standby_news = s_ev_standby_news, .standby_died = s_ev_standby_died, .arg = &self,
    };
    self.ev = &events;
    self.life = run_life_new();
    if (!self.life) {
        fprintf(stderr, "gimpirun: out of memory\n");
        return 1;
    }
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
    run_tasks_free(&self);
    run_life_destroy(&self.life);
    run_trace_destroy(&self.trace);
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
