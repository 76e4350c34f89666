/*  srvtest.h — what the impi-server tests share: starting the real impi-server from the
 *  build tree and reading its endpoint, collecting its exit status and stderr, and playing
 *  IMPI clients over raw TCP sockets (AUTH, IMPI, COLL, DONE, FINI and receiving replies),
 *  or with libgimpi's own startup client, every wait bounded by a deadline.  Frames are built with impi_wire; tests that check
 *  bytes compare against literal byte arrays.
 */
#ifndef GIMPI_SRVTEST_H
#define GIMPI_SRVTEST_H

#include "impi/impi_client.h"
#include "impi/impi_wire.h"
#include "testlib.h"

#include <stddef.h>
#include <stdint.h>

enum { ST_TIMEOUT_MS = 20000 };

typedef struct {
    tl_child_t child;
    char host[64];
    int port;
    char endpoint[96];
} st_server_t;

/*  Starts `impi-server -host 127.0.0.1 <args...>` (NULL-terminated) and reads its endpoint
 *  line.  Returns 0, or -1 (the child is then reaped). */
int st_start(st_server_t *srv, ...);

/*  Waits (bounded) for the server to exit; returns its exit code, or -1 when it had to be
 *  killed or died by a signal.  Closes its pipes. */
int st_finish(st_server_t *srv);

/*  Reads one stderr line of the server within the deadline; -1 on timeout/EOF. */
int st_errline(st_server_t *srv, char *buf, size_t size);

/*  Reads stderr lines until one contains `needle` (copied into buf); 0 or -1. */
int st_expect_err(st_server_t *srv, const char *needle, char *buf, size_t size);

/*  Opens a client connection to the server; -1 on failure. */
int st_connect(st_server_t *srv);

/*  Sends a command header and payload. */
int st_send_cmd(int fd, int32_t cmd, const void *payload, uint32_t len);

/*  Sends AUTH with `mask`, reads the raw 8-byte reply, sends `key` when KEY was chosen
 *  (and the proof under the user's gimpi key when GIMPI was).
 *  Returns the chosen method, or -1 (connection closed, timeout, garbage). */
int st_auth(int fd, uint32_t mask, uint64_t key);

/*  Sends IMPI with `rank`. */
int st_join(int fd, int32_t rank);

/*  Receives one command (header + payload; *payload malloc'd, NULL when len 0).
 *  Returns 0, or -1 on timeout/EOF/bad header. */
int st_recv_cmd(int fd, impi_cmd_t *cmd, uint8_t **payload);

/*  Receives the IMPI reply; returns the client count, or -1. */
int st_recv_impi(int fd);

/*  Sends COLL with label and data. */
int st_coll(int fd, int32_t label, const void *data, uint32_t len);

/*  Receives a COLL reply (payload malloc'd into *raw; reply points into it). 0 or -1. */
int st_recv_coll(int fd, impi_coll_reply_t *reply, uint8_t **raw);

/*  Receives exactly the bytes `want` (a whole frame); 1 when they match, 0 otherwise. */
int st_recv_bytes(int fd, const uint8_t *want, size_t len);

/*  Expects the DONE reply; 0 or -1. */
int st_recv_done(int fd);

/*  AUTH (NONE) + IMPI(rank) on a new connection; returns the fd or -1. */
int st_client(st_server_t *srv, int32_t rank);

/*  Sends DONE on each of the n joined connections, expects the DONE reply on each, then
 *  sends FINI and waits for the server to close each; the sockets are closed.  0 when
 *  every DONE reply came, else -1. */
int st_done_fini(int *fd, int n);

/*  Runs libgimpi's own startup client (impi_client) for `rank` against server
 *  ("A.B.C.D:PORT") with the AUTH mask and key, through the whole startup and FINI, one
 *  host with one process.  Returns IMPI_CLIENT_OK, or an IMPI_CLIENT_ERR_* code with the
 *  client's message in err. */
int st_real_client(const char *server, int rank, uint32_t mask, uint64_t key, int timeout_ms,
                   char *err, size_t errsize);

/*  An embedded server run in a thread: st_run_server(&runner) is the thread body, it
 *  stores impi_server_run()'s result in rc. */
typedef struct {
    struct impi_server_t *server;
    int rc;
} st_runner_t;
void *st_run_server(void *arg);

#endif
