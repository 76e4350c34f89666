/*  gimpirun.h — the launcher's shared state, private to programs/gimpirun*.c and run_*.c.
 *
 *  One gimpirun is one IMPI client and, when its job spans hosts or spawns through it, the
 *  manager of a virtual machine: it owns the host set (run_hosts.c: this host, and an
 *  agent per other host reached over ssh or srun), every task it started on any host
 *  (gimpirun.c: the static tasks of its IMPI client; run_vm.c: tasks spawned later at a
 *  task's request), their output, and their ends.  One poll() loop owns every descriptor.
 */
#ifndef GIMPI_GIMPIRUN_H
#define GIMPI_GIMPIRUN_H

#include "gimpi.h"
#include "base/gimpi_bind.h"
#include "base/gimpi_hostset.h"
#include "base/gimpi_key.h"
#include "impi/impi_client.h"
#include "impi/impi_tables.h"
#include "server/gimpi_loop.h"
#include "task/gimpi_vmwire.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct launcher_t launcher_t;
typedef struct task_t task_t;
typedef struct host_t host_t;

/*  One output stream of a local task, split into lines. */
typedef struct {
    task_t *task;
    int fd;                     /* read end, -1 when closed */
    int which;                  /* 1 stdout, 2 stderr */
    char *buf;
    size_t len;
} stream_t;

/*  One task, on any host. */
struct task_t {
    launcher_t *self;
    int id;                     /* index in self->tasks */
    int core;                   /* its place in its host's core plan (static tasks), or -1 */
    int host;                   /* index in self->hosts */
    char **argv;                /* static: points into the command line; spawned: owned */
    bool spawned;               /* started later at a task's request (not in the tables) */
    bool catchout;              /* its spawner catches output: PVM's catchout format */
    int tid;                    /* spawned: its tid; static: set once the base is known */
    pid_t pid;                  /* the process on its host */
    int port;                   /* static: the port it listens on */
    char addr[64];              /* static: the address it listens on */
    int listen_fd, local_fd;    /* local static tasks until started */
    int go_fd;                  /* local static tasks: write end of the go pipe */
    stream_t out, err;          /* local tasks */
    int nstreams;               /* output streams still open */
    bool started, exited;       /* remote: STARTED seen; any: ended */
    bool groupd;                /* the job's groupd, started on another host */
    int start_err;              /* FAILED's error code */
    int status;                 /* wait status */
    int world_rank;
};

/*  One host of the virtual machine. */
struct host_t {
    launcher_t *self;
    int index;
    gimpi_hostinfo_t info;      /* from the host set */
    bool local;                 /* this machine: tasks are our children */
    int dtid;                   /* its id in pvm_config and pvm_tasks */
    char arch[32];
    int ncpu;
    int nstatic;                /* the job's static tasks here (their core plan's size) */
    /* the agent (remote hosts) */
    pid_t pid;                  /* ssh or srun */
    int to_fd, from_fd, err_fd; /* its stdin, stdout and stderr */
    uint8_t *outq;              /* bytes not yet written to the agent */
    size_t outq_len, outq_cap;
    vmw_reader_t *in;
    char errline[512];          /* the engine's last stderr line (why it failed) */
    size_t errlen;
    enum { HOST_STARTING, HOST_UP, HOST_DEAD } state;
    bool quit_sent;
    bool deleted;               /* pvm_delhosts: no longer in the table */
};

/*  The launcher's whole state. */
struct launcher_t {
    /* options */
    bool tag;
    int client_rank;            /* -1: single-client job */
    const char *server;         /* HOST:PORT with -client */
    const char *host;           /* address tasks listen on and announce */
    const char *ifspec;         /* -if NAME|CIDR */
    const char *groupd_host;    /* -groupd HOST */
    int groupd_port;            /* -gport P: groupd's fixed request port (events P+1) */
    const char *agent;          /* path of gimpi-agent on other hosts */
    uint32_t datalen, ackmark, hiwater;
    int32_t tagub;
    int grace_s, timeout_s;
    /* hosts */
    gimpi_hostset_t *hostset;
    int nhosts;
    host_t **hosts;
    bool multihost;             /* a host other than this one is in the set */
    bool slurm;                 /* the host set is a Slurm allocation: start with srun */
    int rr_next;                /* round-robin position for spawns */
    /* tasks */
    int ntasks;                 /* static tasks: the first ntasks of tasks[] */
    gimpi_bind_t *bind;         /* cores of the local static tasks while they start */
    int nall, cap;
    task_t **tasks;
    /* job */
    impi_client_t *client;
    impi_tables_t *tables;
    gimpi_loop_t *loop;
    int sigfd;
    int grace_timer;            /* armed after a failure, 0 = none */
    int kill_stage;             /* 0: grace, 1: SIGTERM sent, 2: SIGKILL sent */
    int nrunning;               /* tasks not yet ended */
    int nstreams;               /* local task output pipes still open */
    bool failed;
    int tidbase;
    /* the job's other tasks (proctree.h): what the static tasks left behind */
    int nown;                   /* static tasks not yet ended */
    bool reaper;                /* we are a child subreaper: orphans below us are ours */
    bool scan_due;              /* something ended since the last look at our processes */
    int nleft;                  /* processes of the job below us, not in tasks[] (last look) */
    int64_t own_ended_ms;       /* when the last static task ended */
    bool ended_leftovers;       /* they had to be ended: exit status 3 */
    bool gave_up;               /* SIGKILL did not end everything: stop waiting */
    /* the virtual machine */
    char myaddr[64];            /* this host's address on the job's network */
    pid_t groupd_pid;           /* a groupd we started, or 0 */
    char groupd_ep[600];        /* the endpoint every task is given */
    gimpi_groups_t *mgr;        /* our manager connection to groupd, or NULL */
    gimpi_key_t key;            /* the job's key, sent to every agent first */
    struct run_vm_t *vm;        /* run_vm.c's state: requests in progress */
};

/* gimpirun.c */
void run_child_start(pid_t launcher, int deathsig);
int run_beside_me(const char *name, char *out, size_t size);
task_t *run_task_new(launcher_t *self, int host, char **argv, bool spawned);
void run_task_output(launcher_t *self, task_t *t, int which, const char *line, size_t len);
void run_task_catch_mark(task_t *t, const char *what);
void run_task_ended(launcher_t *self, task_t *t, int status);
void run_fail(launcher_t *self);
void run_check_done(launcher_t *self);

/* run_hosts.c */
int run_hosts_init(launcher_t *self);
int run_hosts_start_agents(launcher_t *self, int first, char *err, size_t errsize);
int run_hosts_wait(launcher_t *self, bool (*done)(launcher_t *), int timeout_ms);
int run_hosts_send(host_t *h, uint8_t *frame);
int run_hosts_add(launcher_t *self, const gimpi_hostinfo_t *info, char *err, size_t errsize);
void run_hosts_quit(launcher_t *self, host_t *h);
void run_hosts_kill(launcher_t *self, task_t *t, int sig);
int run_hosts_pick(launcher_t *self, int flags, const char *where);
void run_hosts_fini(launcher_t *self);
int run_hosts_reaped(launcher_t *self, pid_t pid, int status);
bool run_hosts_busy(launcher_t *self);
void run_hosts_give_up(launcher_t *self);

/* gimpirun.c: what run_vm.c shares */
char **run_export_env(launcher_t *self, const host_t *h, int extra);
void run_free_env(char **env);
const char *run_wd(const host_t *h, char *buf, size_t size);
int run_local_start(launcher_t *self, task_t *t, char **env, const char *wd, int *code);

/* run_vm.c */
int run_vm_start(launcher_t *self, char *err, size_t errsize);
int run_vm_publish(launcher_t *self);
void run_vm_progress(launcher_t *self);
int run_vm_groupd_line(launcher_t *self, task_t *t, const char *line, size_t len);
void run_vm_task_ended(launcher_t *self, task_t *t);
void run_vm_fini(launcher_t *self);

#endif
