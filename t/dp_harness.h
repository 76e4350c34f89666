/*  dp_harness.h — runs a job of N real tasks for data-plane tests: creates N listening
 *  sockets (task i on 127.0.0.(i+1), or base + i with dp_run_at, so that every host has
 *  its own address), fills an impi_tables_t by hand as the startup would (one client, one host
 *  and one proc per task; each with its local listener too, unless GIMPI_LOCAL_SOCKETS=0),
 *  forks the tasks, runs a body in each and collects their exit codes within a deadline
 *  (tasks still running then are killed).  Bodies report failures on stderr.
 */
#ifndef GIMPI_DP_HARNESS_H
#define GIMPI_DP_HARNESS_H

#include "gimpi.h"
#include "impi/impi_tables.h"
#include "net/msg_dynhost.h"

#include <stdint.h>

typedef struct {
    int n;                      /* tasks */
    uint32_t pktlen, ackmark, hiwater;
    int timeout_ms;             /* whole job */
    int keep_stdout;            /* tasks keep the parent's stdout (else /dev/null) */
    int host1_procs;            /* procs on host 1 (0 or 1: one); world ranks follow hosts */
    int tcp_only;               /* no local listeners (bodies that meet the hosts by hand) */
} dp_opts_t;

/*  What a task runs: returns its exit code.  listen_fd is its own listening socket; rank
 *  is the task's host rank (= world rank unless host1_procs > 1: then host 1 owns world
 *  ranks 1..host1_procs and is meant to be played by hand). */
typedef int (*dp_body_t)(const impi_tables_t *t, int rank, int listen_fd, void *arg);

/*  Runs the job; codes[i] gets task i's exit code, 128 + signal when it was killed by a
 *  signal, or -1 when the deadline killed it.  Returns 0 when every task exited 0. */
int dp_run(const dp_opts_t *opts, dp_body_t body, void *arg, int *codes);

/*  dp_run with the hosts on base, base + 1, ... (IPv4, host order) instead of 127.0.0.1. */
int dp_run_at(const dp_opts_t *opts, uint32_t base, dp_body_t body, void *arg, int *codes);

/*  The task's local listener (gimpi_host_listen_local), made by dp_run before the fork and
 *  handed over in GIMPI_LOCAL_LISTEN_FD as gimpirun does; -1 when there is none.  Taken
 *  once (dp_open takes it). */
int dp_local_fd(void);

/*  The key every test context gets (GIMPI_MSG_KEY_SIZE bytes, the same in every process). */
const uint8_t *dp_key(void);

/*  A hand-made caller of a dynamic-host listener (msg_dynhost.h has the records).
 *  HELLO with version on fd, then the CHALLENGE: its status and nonce, or -1. */
int dp_intro_hello(int fd, uint32_t version, uint8_t nonce[GIMPI_INTRO_NONCE], int timeout_ms);
/*  Sends `in` as an INTRO (raw bytes into out), sealed with key under nonce unless key is
 *  NULL (then its MAC is in->mac).  0 or -1. */
int dp_intro_send(int fd, const gimpi_intro_t *in, const uint8_t *key,
                  const uint8_t nonce[GIMPI_INTRO_NONCE], uint8_t out[GIMPI_INTRO_SIZE]);
/*  Reads the ANSWER: its status (*ans and raw, when not NULL, filled), or -1. */
int dp_intro_answer(int fd, gimpi_intro_t *ans, uint8_t *raw, int timeout_ms);

/*  Opens a context for a body over the task's TCP and local listeners (dance bounded,
 *  context timeout set); NULL + stderr on failure. */
gimpi_msg_t *dp_open(const impi_tables_t *t, int rank, int listen_fd, int timeout_ms);

/*  Finalizes and destroys a context; returns the finalize result. */
int dp_close(gimpi_msg_t **ctx);

/*  Fills buf with a pattern that depends on (seed, offset) / checks it; check returns the
 *  first bad offset or -1. */
void dp_fill(uint8_t *buf, size_t len, uint32_t seed);
long dp_check(const uint8_t *buf, size_t len, uint32_t seed);

/*  A failure inside a task: prints "rank R: message" on stderr and returns 1. */
int dp_fail(int rank, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
