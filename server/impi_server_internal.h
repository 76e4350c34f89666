/*  impi_server_internal.h — the startup server's private state, shared by its four
 *  files, and the functions they call in each other.  The files depend on each other in
 *  one direction only (t/layers.sh checks that no two call each other):
 *
 *    impi_server.c      the object, accepting and the handshake's bounds
 *      impi_server_cmd.c  cutting frames and handling AUTH, KEY, IMPI, COLL, DONE, FINI
 *        impi_server_job.c  ending connections, labels, DONE, the job's end, silence
 *          impi_server_out.c  the log (never blocking, rate-limited) and the reply queues
 *
 *  Nothing here is part of impi_server.h's promise to its users.
 */
#ifndef IMPI_SERVER_INTERNAL_H
#define IMPI_SERVER_INTERNAL_H

#include "server/impi_server.h"
#include "server/gimpi_loop.h"
#include "impi/impi_wire.h"
#include "base/gimpi_key.h"
#include "base/gimpi_ratelog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*  A reply shared by every connection it is queued on. */
typedef struct {
    int refs;
    size_t len;
    uint8_t data[];
} srv_msg_t;

/*  One queued reply of a connection. */
typedef struct srv_out {
    srv_msg_t *msg;
    struct srv_out *next;
} srv_out_t;

/*  Where a connection is in its life (impi_server.c says how it moves). */
typedef enum { C_AUTH, C_KEY, C_PROOF, C_JOIN, C_JOINED, C_CLOSING } srv_cstate_t;

/*  One TCP connection: its state, its input buffer and its output queue. */
typedef struct srv_conn {
    impi_server_t *server;
    int fd;
    int id;                     /* connection number, for messages */
    char peer[48];              /* "A.B.C.D:PORT" */
    srv_cstate_t state;
    uint8_t nonce[IMPI_AUTH_NONCE_SIZE];  /* GIMPI: the challenge sent (state C_PROOF) */
    bool job_secret;            /* GIMPI_JOB: the job's secret follows a good proof */
    bool keyed;                 /* it authenticated with a key (KEY, GIMPI, GIMPI_JOB) */
    int rank;                   /* -1 until joined */
    int64_t born_ms;            /* accepted at (monotonic ms) */
    int timer;                  /* handshake timeout, 0 when none */
    uint8_t *in;                /* unparsed bytes are in[in_off .. in_len) */
    size_t in_off, in_len, in_cap;
    srv_out_t *out_head, *out_tail;
    size_t out_off;             /* bytes of out_head already written */
    struct srv_conn *prev, *next;
} srv_conn_t;

/*  What the job knows of one client rank. */
typedef struct {
    srv_conn_t *conn;           /* NULL when not connected */
    bool joined, done, fini, dropped;
    bool has_label;
    int32_t last_label;
    size_t held;                /* bytes of its contributions the server holds */
    int64_t last_seen_ms;       /* last command from it, or reply bytes it took (silence) */
} srv_rank_t;

/*  A pending COLL label with the contributions received so far. */
typedef struct srv_label {
    int32_t label;
    uint32_t mask;
    uint8_t *data[IMPI_MAX_CLIENTS];
    size_t len[IMPI_MAX_CLIENTS];
    struct srv_label *next;     /* ascending */
} srv_label_t;

/*  The server: its listening socket and loop, connections, ranks, labels, bounds, log. */
struct impi_server_t {
    int nclients;
    uint32_t auth_mask;
    uint64_t key;
    gimpi_key_t master;         /* the user's key, when GIMPI is enabled */
    uint8_t job_secret[IMPI_AUTH_JOB_SECRET_SIZE];  /* random: what GIMPI_JOB hands over */
    FILE *log;
    int listen_fd;
    int port;
    char endpoint[48];
    gimpi_loop_t *loop;
    bool own_loop;              /* false once attached to the caller's loop */
    bool running;               /* impi_server_run() entered */
    impi_server_done_fn *done_fn;
    void *done_arg;
    int accept_timer;           /* accept pause after EMFILE, 0 when none */
    srv_conn_t *conns;
    int npending;               /* connections not joined */
    int next_conn_id;
    srv_rank_t ranks[IMPI_MAX_CLIENTS];
    int njoined;
    bool started;               /* IMPI reply sent */
    bool done_sent;
    srv_label_t *labels;
    int join_timeout_ms;        /* handshake bound, 0 = none */
    int silence_ms;             /* silence bound after the start, 0 = none */
    int silence_timer;          /* armed at the earliest silence deadline, 0 when none */
    int64_t progress_ms;        /* start, or the last label answered */
    int max_pending;            /* connections in their handshake */
    /* rate limit of lines about connections (IMPI_SERVER_LOG_PER_SEC) */
    int log_fd;                 /* fd of a log that can block (pipe, socket, tty), or -1 */
    gimpi_ratelog_t log_rate;   /* the limited lines' one-second windows */
    int log_timer;              /* prints the summary at the end of the window */
    long log_lost;              /* lines dropped because the log was not being read */
    bool verbose;
    int result;                 /* -1 while running */
};

/* ------------------------------------------------------------------ impi_server_out.c */

/*  Prints one line about the job on the server's log (never rate-limited). */
void srv_log(impi_server_t *self, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*  Prints one line about a refused or dropped connection, at most IMPI_SERVER_LOG_PER_SEC
 *  a second; the rest are summed up by srv_log_summary. */
void srv_log_limited(impi_server_t *self, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*  Loop timer (also called directly as the job ends): the summary line of a window. */
void srv_log_summary(gimpi_loop_t *loop, int id, void *arg);
/*  "client 2 (127.0.0.1:40000)" or "connection 5 (127.0.0.1:40000)" into buf. */
const char *srv_who(srv_conn_t *conn, char *buf, size_t size);
/*  A message of len bytes with one reference; NULL when out of memory. */
srv_msg_t *srv_msg_new(size_t len);
/*  Drops one reference. */
void srv_msg_unref(srv_msg_t *msg);
/*  Discards every queued message of a connection. */
void srv_out_clear(srv_conn_t *conn);
/*  Writes what the socket takes: 1 queue empty, 0 socket full, -1 peer gone. */
int srv_flush(srv_conn_t *conn);
/*  Sets the loop interest of a connection from its state and queue. */
void srv_update_interest(srv_conn_t *conn);
/*  Queues a message on a connection (a new reference) and writes what goes now. */
void srv_send(srv_conn_t *conn, srv_msg_t *msg);
/*  Queues msg on every connected rank that has not sent FINI; drops the caller's
 *  reference. */
void srv_send_all(impi_server_t *self, srv_msg_t *msg);

/* ------------------------------------------------------------------ impi_server_job.c */

/*  Closes and frees a connection (its rank, if any, is updated by the caller). */
void srv_conn_free(srv_conn_t *conn);
/*  Ends a connection for reason (NULL: quietly), freeing or dropping its rank. */
void srv_drop(srv_conn_t *conn, const char *reason);
/*  Frees a label entry. */
void srv_label_free(srv_label_t *l);
/*  Records a COLL contribution of rank r; 0 or -1 (out of memory). */
int srv_add_contribution(impi_server_t *self, int r, const impi_coll_t *coll);
/*  Answers the complete labels, sends DONE, ends the job when it is over. */
void srv_check_progress(impi_server_t *self);
/*  Ends the job at once, failed: why is logged, every connection closed (the clients see
 *  the end of their connection and stop), the loop stopped or the owner told. */
void srv_stop_job(impi_server_t *self, const char *why);
/*  (Re)arms the silence timer at the earliest deadline of a rank the job waits for. */
void srv_arm_silence(impi_server_t *self);

/* ------------------------------------------------------------------ impi_server_cmd.c */

/*  Loop callback of a client connection: writes, reads and handles its commands. */
void srv_conn_event(gimpi_loop_t *loop, int fd, int events, void *arg);
#endif
