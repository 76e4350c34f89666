/*  impi_client.h — the client side of the IMPI startup (impi-protocol.md §3).
 *
 *  One impi_client_t plays one IMPI client against the startup server: connect to
 *  "HOST:PORT", AUTH (mask from IMPI_AUTH_NONE / IMPI_AUTH_KEY, else GIMPI, unless the
 *  caller sets it), IMPI (send the client rank, learn nclients), then the 14 COLL labels in ascending
 *  order, lock-step (send one label, read replies until that label's reply arrives,
 *  skipping replies for labels this client does not know), DONE, and the server's DONE.
 *  The replies become an impi_tables_t.  The server connection stays open until
 *  impi_client_fini() sends FINI (the launcher holds it for the life of the job).
 *  Every read and write has a deadline and notices the server closing; errors come back
 *  as an IMPI_CLIENT_ERR_* code with a message in the caller's buffer, never an exit().
 */
#ifndef GIMPI_IMPI_CLIENT_H
#define GIMPI_IMPI_CLIENT_H

#include "impi/impi_tables.h"

#include <stdint.h>
#include <stdio.h>

/*  Result codes (0 or negative). */
typedef enum {
    IMPI_CLIENT_OK = 0,
    IMPI_CLIENT_ERR_USAGE = -1,     /* bad argument, or a call out of order */
    IMPI_CLIENT_ERR_CONNECT = -2,   /* address unparsable, unresolvable or refused */
    IMPI_CLIENT_ERR_AUTH = -3,      /* no method enabled, or the server chose none of ours */
    IMPI_CLIENT_ERR_TIMEOUT = -4,   /* the server did not answer within the deadline */
    IMPI_CLIENT_ERR_CLOSED = -5,    /* the server closed the connection */
    IMPI_CLIENT_ERR_PROTOCOL = -6,  /* a malformed or unexpected message */
    IMPI_CLIENT_ERR_TABLES = -7,    /* the agreed tables do not add up */
    IMPI_CLIENT_ERR_IO = -8,        /* a socket error, or out of memory */
} impi_client_err_t;

/*  Default deadline of every read and write, in milliseconds, when neither the caller nor
 *  the environment (GIMPI_STARTUP_TIMEOUT, seconds) says otherwise. */
#define IMPI_CLIENT_DEFAULT_TIMEOUT_MS 60000

typedef struct impi_client_t impi_client_t;

/*  A client for the server at "HOST:PORT" (HOST a name or a numeric IPv4/IPv6 address;
 *  "[v6]:PORT" accepted).  timeout_ms <= 0: GIMPI_STARTUP_TIMEOUT (seconds) if set, else
 *  60 s.  Nothing is sent yet.  NULL only when out of memory or server is NULL. */
impi_client_t *impi_client_new(const char *server, int timeout_ms);

/*  Closes the connection (without FINI) and frees everything, nulls the pointer. */
void impi_client_destroy(impi_client_t **self_p);

/*  Overrides the environment's AUTH choice: mask bit 0x1 NONE, 0x2 KEY (then `key` is
 *  sent if the server chooses KEY), 0x10000 GIMPI (then the client answers the server's
 *  challenge under the user's gimpi key).  Call before impi_client_start. */
void impi_client_set_auth(impi_client_t *self, uint32_t mask, uint64_t key);

/*  Reads the AUTH mask and key from the environment the way LAM and GridMPI do:
 *  IMPI_AUTH_NONE set -> 0x1; IMPI_AUTH_KEY=<decimal 64-bit, signed or unsigned> -> 0x2.
 *  When neither is set, GIMPI (0x10000): the client proves the user's gimpi key by
 *  answering the server's fresh challenge, which impi-server asks for by default; the
 *  derived KEY, the same for every job, is never sent unasked.  Returns 0, or
 *  IMPI_CLIENT_ERR_AUTH with a message (a key that is not a number, or no gimpi key). */
int impi_client_auth_from_env(uint32_t *mask, uint64_t *key, char *err, size_t errsize);

/*  Writes every command sent and received to `trace` (NULL: off). */
void impi_client_set_trace(impi_client_t *self, FILE *trace);

/*  Connects, authenticates, joins as client desc->rank, runs the COLL exchange with the
 *  payloads built from desc, sends DONE and waits for the server's DONE, then finishes the
 *  tables.  Returns IMPI_CLIENT_OK or an error code with a message in err. */
int impi_client_start(impi_client_t *self, const impi_desc_t *desc, char *err, size_t errsize);

/*  The same in steps: connect + AUTH + IMPI (join) ... */
int impi_client_join(impi_client_t *self, int rank, char *err, size_t errsize);
/*  ... then the COLL labels, DONE, and the tables (desc->rank must be the joined rank). */
int impi_client_exchange(impi_client_t *self, const impi_desc_t *desc, char *err,
                         size_t errsize);

/*  Number of clients the server announced (after join), else -1. */
int impi_client_nclients(const impi_client_t *self);

/*  The agreed tables after a successful start/exchange (owned by the client), else NULL. */
const impi_tables_t *impi_client_tables(const impi_client_t *self);

/*  Takes the tables away from the client (the caller destroys them), else NULL. */
impi_tables_t *impi_client_take_tables(impi_client_t *self);
/*  The job's secret the server handed over (authentication GIMPI_JOB, the default of a
 *  client with a key file): the same for every client of the job, known to no other job.
 *  0, or -1 when there is none (KEY or NONE, or a server that chose GIMPI). */
int impi_client_job_secret(const impi_client_t *self, uint8_t out[IMPI_AUTH_JOB_SECRET_SIZE]);

/*  The server socket (to watch it for the server's death between DONE and FINI), or -1. */
int impi_client_fd(const impi_client_t *self);

/*  Sends FINI and closes the connection.  Returns IMPI_CLIENT_OK or an error code (the
 *  connection is closed either way). */
int impi_client_fini(impi_client_t *self, char *err, size_t errsize);

/*  Text for a result code. */
const char *impi_client_strerror(int code);

#endif
