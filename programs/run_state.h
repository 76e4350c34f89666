/*  run_state.h — the launcher's shared state (types only), private to gimpirun's files.
 *
 *  One gimpirun is one IMPI client and, when its job spans hosts or spawns through it, the
 *  manager of a virtual machine: it owns the host set (run_hosts.c: this host, and an
 *  agent per other host reached over ssh or srun), every task it started on any host
 *  (run_tasks.c: their records, output and ends; gimpirun.c starts the static tasks of its
 *  IMPI client, run_vm.c the tasks spawned later at a task's request).  One poll() loop
 *  owns every descriptor.  The lower files report what happens through one table of
 *  callbacks (run_events_t) that gimpirun.c fills in, so that no file calls up by name:
 *  run_proc.c, then run_hosts.c, run_tasks.c, run_vm.c and gimpirun.c, bottom to top.
 *  Each file's functions are declared in its own header.
 */
#ifndef GIMPI_RUN_STATE_H
#define GIMPI_RUN_STATE_H

#include "gimpi.h"
#include "base/gimpi_bind.h"
#include "base/gimpi_hostset.h"
#include "base/gimpi_key.h"
#include "base/gimpi_vmwire.h"
#include "impi/impi_client.h"
#include "impi/impi_tables.h"
#include "server/gimpi_loop.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*  What the witness granted at its term (run_witness.c). */
enum { RUN_WIT_NONE, RUN_WIT_ALONE, RUN_WIT_TAKEOVER };

typedef struct launcher_t launcher_t;
typedef struct task_t task_t;
typedef struct host_t host_t;

/*  What the hosts and the tasks' life cycle report upwards: one table, filled in by
 *  gimpirun.c and given to the launcher's state at its creation; arg is the first
 *  argument of every call. */
typedef struct {
    void (*host_changed)(void *arg);                /* a host came up or is gone */
    void (*task_started)(void *arg, task_t *t);     /* an agent started a task */
    void (*task_output)(void *arg, task_t *t, int which, const char *line, size_t len);
    void (*task_ended)(void *arg, task_t *t, int status);  /* an agent's task ended */
    void (*progress)(void *arg);                    /* a waiting request may be decided */
    void (*task_gone)(void *arg, task_t *t);        /* a task's end was counted */
    void (*check_done)(void *arg);                  /* something the loop waits for ended */
    void (*host_clock)(void *arg, int id, int sec, int usec);  /* an agent read its clock */
    void (*trace_frame)(void *arg, int host, const vmw_msg_t *m); /* TIMED, TRACE_* */
    void (*groupd_died)(void *arg, int status);     /* our local groupd ended */
    void (*standby_news)(void *arg);                /* the standby follows or took over */
    void (*standby_died)(void *arg, pid_t pid, int status);  /* our local standby ended */
    void *arg;
} run_events_t;

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
    int ptid;                   /* spawned: its spawner's tid (caught output goes there) */
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
    int probe_fd;               /* added later: a listener on myaddr it must reach (PROBE)
                                   before it is up, -1 */
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
    const char *standby_host;   /* -groupd-standby HOST or "none"; NULL: the next host */
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
    bool server_gone;           /* impi-server closed the connection while the job ran */
    impi_tables_t *tables;
    gimpi_loop_t *loop;
    int sigfd;
    int nrunning;               /* tasks not yet ended */
    int nstreams;               /* local task output pipes still open */
    bool failed;
    int tidbase;
    struct run_life_t *life;    /* run_tasks.c's own: grace, the ends, what is left behind */
    /* the job's other tasks (proctree.h): what the static tasks left behind */
    bool reaper;                /* we are a child subreaper: orphans below us are ours */
    bool ended_leftovers;       /* they had to be ended: exit status 3 */
    /* the virtual machine */
    char myaddr[64];            /* this host's address on the job's network */
    bool probe_added;           /* a host added from now on must reach myaddr (PROBE) */
    pid_t groupd_pid;           /* a groupd we started, or 0 */
    pid_t standby_pid;          /* a standby groupd we started here, or 0 */
    struct run_standby_t *standby;      /* run_standby.c's own: the standby groupd */
    /* the witness (run_witness.c): what it granted, for which term */
    int wit_term;
    int wit_grant;              /* RUN_WIT_NONE, RUN_WIT_ALONE or RUN_WIT_TAKEOVER */
    bool wit_said;              /* a refusal at this term was said */
    bool wit_fresh;             /* a new standby follows: the next question starts anew */
    char late_token[GIMPI_GROUPS_TOKEN_LEN + 1];    /* a promoted local standby's token */
    gimpi_key_t key;            /* the job's key, sent to every agent first */
    struct run_vm_t *vm;        /* run_vm.c's own: groupd's endpoint, the manager, requests */
    struct run_catchfwd_t *catchfwd;  /* caught output handed to catching tasks here */
    struct run_trace_t *trace;  /* -trace: the trace's directory, the hosts' clocks */
    const run_events_t *ev;     /* where run_hosts.c and run_tasks.c report */
};

#endif

