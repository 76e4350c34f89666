/*  impi_server.h — the IMPI startup server as an embeddable object.
 *
 *  An impi_server_t listens on a TCP port and runs the server side of IMPI's startup
 *  (impi-protocol.md §3): AUTH negotiation (NONE, KEY, and gimpi's own GIMPI proof), the
 *  IMPI join of `nclients` uniquely ranked clients, the COLL all-gathers (payloads opaque,
 *  only the IMPI table's labels, each answered to every client as soon as it is
 *  complete), DONE and FINI.  It runs on a gimpi_loop with
 *  non-blocking sockets, buffering partial frames and queueing output per connection, so
 *  a slow client never stalls the others.  Connections that have not joined are bounded
 *  in number and in time, a joined client that goes silent during the startup is dropped,
 *  and messages about refused connections are rate-limited and never block on the log.
 *  The impi-server program is a thin wrapper; tests embed the same object in-process.
 *  Policy choices where the protocol is silent are in doc/protocol-choices.md and
 *  doc/impi-server.1.
 */
#ifndef GIMPI_IMPI_SERVER_H
#define GIMPI_IMPI_SERVER_H

#include "server/gimpi_loop.h"

#include <stdint.h>
#include <stdio.h>

typedef struct impi_server_t impi_server_t;

/*  Called once when an attached server's job is over (result as impi_server_run()).  It
 *  must not destroy the server; stop the loop and destroy it afterwards. */
typedef void (impi_server_done_fn)(impi_server_t *server, int result, void *arg);

/*  Default bound on the handshake: a connection has this long from connect() to a
 *  completed AUTH (and KEY or proof) and IMPI join, then it is closed.  A real client needs one
 *  round trip; 10 s covers a loaded machine and a slow network while an idle stranger
 *  holds a slot only briefly.  impi-server -handshake changes it. */
#define IMPI_SERVER_HANDSHAKE_MS 10000

/*  Default bound on silence after the start: a client that has joined, owes the job its
 *  next COLL label or DONE, and has sent nothing for this long is dropped.  Real clients
 *  answer within milliseconds; 60 s leaves room for an implementation that gathers its
 *  own processes' data between labels.  impi-server -timeout changes it. */
#define IMPI_SERVER_SILENCE_MS 60000

/*  Connections still in their handshake (not joined) at any one time.  When a new one
 *  arrives with this many in the handshake, the oldest of those that got least far (sent
 *  nothing; then not authenticated; then authenticated) is closed, so idle connections
 *  can never keep real clients out: a real client needs a slot for one round trip only,
 *  and once it proved the key no stranger can push it out.  64 is twice the largest job
 *  (32 clients) all connecting at the same instant. */
#define IMPI_SERVER_MAX_HANDSHAKING 64

/*  Lines per second about refused or dropped connections (strangers, idle, evicted);
 *  beyond that they are counted and one summary line follows the second.  Lines about
 *  the job itself (joined clients after the start, the result) are never limited. */
#define IMPI_SERVER_LOG_PER_SEC 10

/*  Bytes of COLL contributions the server holds for one client rank at once (until the
 *  labels are answered).  A real client's largest two labels (P_IPV6 and P_PID of a
 *  million processes, 24 MB) fit; a client over it is dropped.  Only the labels of the
 *  IMPI label table are accepted, so a joined client can make the server hold at most
 *  this much, whatever labels it sends. */
#define IMPI_SERVER_MAX_HELD ((size_t)32 << 20)

/*  Auth mask bits (bit i = method i).  GIMPI is gimpi's own method (impi_wire.h): the
 *  server sends a fresh random challenge on every connection and the client answers with
 *  an HMAC under a sub-key of the user's gimpi key, so nothing a stranger captures works
 *  twice; clients of other implementations never offer it. */
#define IMPI_SERVER_AUTH_NONE  (1u << 0)
#define IMPI_SERVER_AUTH_KEY   (1u << 1)
#define IMPI_SERVER_AUTH_GIMPI (1u << 16)

/*  Creates a server for `nclients` clients (1..32) and starts listening on bind_addr
 *  (dotted IPv4; NULL or "0.0.0.0" = every interface) and `port` (0 = any free port).
 *  auth_mask enables methods (IMPI_SERVER_AUTH_*, at least one); `key` is the expected
 *  key when KEY is enabled; with GIMPI the user's gimpi key is loaded now
 *  (gimpi_key_default), and its absence is an error.  Messages about clients go to `log`
 *  (NULL: stderr).  Returns NULL with a message on `log` when the arguments are bad, the
 *  key is missing or the socket cannot be set up. */
impi_server_t *impi_server_new(int nclients, const char *bind_addr, int port,
                               uint32_t auth_mask, uint64_t key, FILE *log);

/*  Closes every socket, frees the server and NULLs the pointer. */
void impi_server_destroy(impi_server_t **self_p);

/*  "A.B.C.D:PORT" clients should connect to: the bound address, or, when bound to every
 *  interface, the machine's first non-loopback IPv4 address (127.0.0.1 if none). */
const char *impi_server_endpoint(impi_server_t *self);

/*  The listening port. */
int impi_server_port(impi_server_t *self);

/*  Serves on the server's own loop until the job is over.  Returns 0 once all clients
 *  sent FINI; 1 when the job failed (a client that had joined was dropped or
 *  disconnected before FINI, and no client is left); -1 on an internal error (poll,
 *  memory) or when the server is attached to another loop. */
int impi_server_run(impi_server_t *self);

/*  Moves the server onto the caller's loop instead of its own: it then progresses
 *  whenever the caller runs `loop` (next to the caller's own descriptors and timers), and
 *  calls done(server, result, arg) when the job is over instead of stopping anything.
 *  Call it right after impi_server_new(); impi_server_run() is refused afterwards.
 *  impi_server_destroy() removes every descriptor and timer it put on the loop.
 *  Returns 0, or -1 (already attached or running, or out of memory). */
int impi_server_attach(impi_server_t *self, gimpi_loop_t *loop, impi_server_done_fn *done,
                       void *arg);

/*  -1 while the job runs, then its result (0 all FINI, 1 failed). */
int impi_server_result(impi_server_t *self);

/*  Sets how many milliseconds a connection may take from connect() to a completed AUTH
 *  and IMPI before it is closed with a message (default IMPI_SERVER_HANDSHAKE_MS; 0 = no
 *  limit).  Call it before impi_server_run(); it applies to connections accepted
 *  afterwards. */
void impi_server_set_join_timeout(impi_server_t *self, int ms);

/*  Sets how many milliseconds a joined client may stay silent after the start while the
 *  job waits for its next COLL label or DONE before it is dropped (default
 *  IMPI_SERVER_SILENCE_MS; 0 = no limit).  A client that sent DONE is never timed: it
 *  sends FINI only when its tasks end. */
void impi_server_set_silence_timeout(impi_server_t *self, int ms);

/*  Sets the bound on connections in their handshake (default IMPI_SERVER_MAX_HANDSHAKING,
 *  at least 1). */
void impi_server_set_max_handshaking(impi_server_t *self, int n);

/*  When non-zero, every command received and every reply sent is traced on the log. */
void impi_server_set_verbose(impi_server_t *self, int verbose);

#endif
