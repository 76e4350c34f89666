/*  gimpi_job.h — what a task learns about its job: the startup tables and its own place
 *  in them, handed over by gimpirun or made up on the spot for a task started from the
 *  shell.
 *
 *  gimpirun starts every task with three inherited descriptors named in the environment:
 *  GIMPI_LISTEN_FD (the task's listening TCP socket, whose port was announced in H_PORT),
 *  GIMPI_TABLES_FD (a memfd holding the saved tables) and GIMPI_GO_FD (a pipe on which
 *  the launcher writes one byte once the tables are complete: 'T' go, anything else or
 *  EOF means the startup failed; after the 'T', the decimal tid base groupd reserved for
 *  the job and a newline, when the launcher could reserve one), plus GIMPI_CLIENT and GIMPI_LOCAL (client rank and the
 *  task's index among its client's tasks), and GIMPI_LOCAL_LISTEN_FD when the launcher
 *  made the listener's local twin (gimpi_host_listen_local).  A task without those variables enrols as a
 *  one-task job of its own, as a PVM task started from the shell does.
 */
#ifndef GIMPI_JOB_H
#define GIMPI_JOB_H

#include "impi/impi_tables.h"

#include <stdint.h>

typedef struct {
    impi_tables_t *tables;      /* owned */
    int client;                 /* this task's client rank */
    int local;                  /* index among the client's tasks */
    int host_rank;              /* global host rank (each task is one host) */
    int world_rank;             /* rank in the whole job */
    int listen_fd;              /* listening socket, owned */
    int local_fd;               /* its local (Unix-domain) twin, owned, or -1 */
    bool launched;              /* started by gimpirun (false: shell-started) */
    int tidbase;                /* groupd's block for the job (tid = base + rank + 1), -1: none */
    char tidtoken[40];          /* the block's token (hex text), "" when none */
} gimpi_job_t;

/*  Environment variable names, shared by gimpirun and the library. */
#define GIMPI_ENV_LISTEN_FD "GIMPI_LISTEN_FD"
#define GIMPI_ENV_LOCAL_LISTEN_FD "GIMPI_LOCAL_LISTEN_FD"
#define GIMPI_ENV_TABLES_FD "GIMPI_TABLES_FD"
#define GIMPI_ENV_GO_FD     "GIMPI_GO_FD"
#define GIMPI_ENV_CLIENT    "GIMPI_CLIENT"
#define GIMPI_ENV_LOCAL     "GIMPI_LOCAL"
/*  What a spawner hands its children (doc/spawn.md). */
#define GIMPI_ENV_TID            "GIMPI_TID"
#define GIMPI_ENV_TID_TOKEN      "GIMPI_TID_TOKEN"  /* the token of GIMPI_TID's block */
#define GIMPI_ENV_PARENT         "GIMPI_PARENT"
#define GIMPI_ENV_PARENT_CONTACT "GIMPI_PARENT_CONTACT"
#define GIMPI_ENV_SIBLINGS       "GIMPI_SIBLINGS"
/*  Set by a host agent for the tasks it starts (doc/multihost.md): the address a task
 *  without a launcher's listening socket listens on and announces, and the host's name in
 *  the virtual machine (what pvm_tasks and pvm_config show). */
#define GIMPI_ENV_HOST_ADDR      "GIMPI_HOST_ADDR"
#define GIMPI_ENV_HOST           "GIMPI_HOST"

/*  Default flow-control and packet parameters a gimpi client offers.  DATALEN 256 KiB: a
 *  long message's first packet then takes the receiver long enough to read that the
 *  sender has the SYNCACK and streams the rest before the receiver runs dry
 *  (doc/data-plane.md). */
enum {
    GIMPI_DEFAULT_DATALEN = 262144,
    GIMPI_DEFAULT_ACKMARK = 32,
    GIMPI_DEFAULT_HIWATER = 64,
};

/*  Fills job from the launcher's environment, or, when there is none, makes a one-task job
 *  listening on 127.0.0.1.  Waits for the launcher's go byte (bounded by timeout_ms).
 *  Returns 0, or -1 with a message in err. */
int gimpi_job_init(gimpi_job_t *job, int timeout_ms, char *err, size_t errsize);

/*  The job's identity as a RESERVE key: "job-" and the hex FNV-1a digest (128 bits) of
 *  every proc's host id and pid in the tables, so that every client of a multi-client job
 *  computes the same key.  out must hold GIMPI_JOB_KEY_SIZE bytes. */
#define GIMPI_JOB_KEY_SIZE 40
void gimpi_job_key(const impi_tables_t *tables, char out[GIMPI_JOB_KEY_SIZE]);

/*  Replaces the process with argv[0] (argv NULL-terminated): a name with a slash as given,
 *  else the first executable found on $GIMPI_PATH (colon-separated), then on $PATH, as a
 *  spawn looks.  Returns only on failure, with the errno of the last attempt. */
int gimpi_job_exec(char *const argv[]);

/*  Frees the tables and closes the listening socket. */
void gimpi_job_fini(gimpi_job_t *job);

/*  Opens a listening TCP socket on addr (dotted IPv4), any free port.  Returns the fd and
 *  the port in *port, or -1 with a message in err. */
int gimpi_job_listen(const char *addr, int *port, char *err, size_t errsize);

/*  The tables of a one-task job (one client, host and proc: this process) listening on
 *  127.0.0.1:port, as a shell-started or spawned task has.  NULL with a message in err. */
impi_tables_t *gimpi_job_solo_tables(int port, char *err, size_t errsize);

/*  The startup of a job with one client, done locally: every label's reply is this
 *  client's own contribution with mask 0x1 (what a server would send back).  Returns the
 *  finished tables, or NULL with a message in err. */
impi_tables_t *gimpi_job_local_startup(const impi_desc_t *desc, char *err, size_t errsize);

#endif
