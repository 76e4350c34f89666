/*  gimpi_msg.h — point-to-point messaging between the tasks of a gimpi job.
 *
 *  A gimpi_msg_t holds the whole data plane of one task: its IMPI host connections (one
 *  TCP connection per other host), the IMPI packet engine (eager and rendezvous messages,
 *  flow control, cancel, shutdown), the matching queues and the progress thread.  Messages
 *  are addressed by task id (tid): the static tasks of the job have tid = tid base + world
 *  rank + 1 (gimpi_msg_tid()); dynamic hosts (below) have groupd's tids.
 *
 *  Context ids keep traffic apart: a receive only ever matches messages of its own context.
 *  GIMPI_CID_P2P (0, IMPI's MPI_COMM_WORLD point-to-point id) is what the plain calls use;
 *  GIMPI_CID_COLL (1, IMPI's collective id) is for group collectives; GIMPI_CID_INTERNAL
 *  and up are for the library's own traffic.  The *_cid calls take an explicit context.
 *
 *  All calls return 0 (or a positive value where said) or a negative GIMPI_E* code of
 *  <gimpi.h>.  GIMPI_ESYSERR means a peer died (its connection closed without IMPI's
 *  PK_FINI or carried garbage), a peer already finished, or the context timeout expired.
 *  The context may be used from several application threads; it is protected by one lock.
 */
#ifndef GIMPI_MSG_H
#define GIMPI_MSG_H

#include "gimpi_export.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct impi_tables_t;
typedef struct gimpi_msg_t gimpi_msg_t;
typedef struct gimpi_msg_req_t gimpi_msg_req_t;

enum {
    GIMPI_ANY = -1,             /* wildcard source tid or tag in receives and probes */
};

/*  Context ids (IMPI pk_cid). */
#define GIMPI_CID_P2P ((uint64_t)0)
#define GIMPI_CID_COLL ((uint64_t)1)
#define GIMPI_CID_INTERNAL ((uint64_t)2)
/*  The PVM layer's messages (pvm_transport_impi.c): every PVM message is one message on
 *  GIMPI_CID_PVM starting with a 16-byte header; a long one's body follows on
 *  GIMPI_CID_PVM_BODY (see doc/data-plane.md). */
#define GIMPI_CID_PVM ((uint64_t)3)
#define GIMPI_CID_PVM_BODY ((uint64_t)4)
/*  The body of a long pvm_bcast message (tagged with the sender's bcast sequence). */
#define GIMPI_CID_PVM_BCAST ((uint64_t)5)

/*  isend flags. */
enum {
    GIMPI_MSG_SYNC = 1,         /* synchronous: complete only once a receive matched it */
};

/*  What a completed receive or a probe found. */
typedef struct {
    int source;                 /* tid of the sender */
    int tag;
    size_t len;                 /* message length in bytes (may exceed a short buffer) */
    int error;                  /* 0 or GIMPI_E* for this operation */
    int cancelled;              /* 1 when the operation was cancelled */
} gimpi_status_t;

/*  Creates the data plane of world rank `rank` from the startup tables (read only, may be
 *  freed afterwards) and this task's listening socket (the context owns it from now on,
 *  even on failure): meets every other host within timeout_ms and starts the progress
 *  thread.  Each task must be its host's only proc.  Returns NULL with a message in err. */
GIMPI_EXPORT
gimpi_msg_t *gimpi_msg_new(const struct impi_tables_t *tables, int rank, int listen_fd,
                           int timeout_ms, char *err, size_t errsize);

/*  The same with a local listener too (or -1), made by gimpi_msg_listen_local together
 *  with listen_fd before the port was announced; the context owns it as well.  Hosts of
 *  this machine then reach this one through it, and this one reaches theirs, over local
 *  (Unix-domain) sockets instead of loopback TCP, with the same IMPI bytes on them. */
GIMPI_EXPORT
gimpi_msg_t *gimpi_msg_new_local(const struct impi_tables_t *tables, int rank, int listen_fd,
                                 int local_fd, int timeout_ms, char *err, size_t errsize);

/*  Makes the local twin of TCP listener listen_fd: an abstract Unix-domain listener named
 *  after its address and port, which hosts of this machine dial first.  Returns it, or -1
 *  when GIMPI_LOCAL_SOCKETS=0 or the name is taken (then TCP only). */
GIMPI_EXPORT int gimpi_msg_listen_local(int listen_fd);

/*  Ends the job's data plane: completes every pending send (buffered ones included), then
 *  exchanges IMPI PK_FINI with every connected host and closes each connection once both
 *  sides sent it.  Bounded by timeout_ms.  Returns 0 or GIMPI_ESYSERR. */
GIMPI_EXPORT int gimpi_msg_finalize(gimpi_msg_t *self, int timeout_ms);

/*  Stops the progress thread, closes everything, frees every request not yet waited for
 *  (their handles become invalid) and nulls the pointer.  Does not finalize: a peer still
 *  connected sees the connection drop. */
GIMPI_EXPORT void gimpi_msg_destroy(gimpi_msg_t **self_p);

/*  Bound on every later blocking call (0 = none, the default; death of a peer is always
 *  noticed).  A call that runs out returns GIMPI_ESYSERR. */
GIMPI_EXPORT void gimpi_msg_set_timeout(gimpi_msg_t *self, int timeout_ms);

/*  This task's tid, the number of tasks, and tid <-> world rank (-1 / GIMPI_EBADPARAM for
 *  unknown ones). */
GIMPI_EXPORT int gimpi_msg_mytid(gimpi_msg_t *self);
GIMPI_EXPORT int gimpi_msg_ntasks(gimpi_msg_t *self);
GIMPI_EXPORT int gimpi_msg_tid(gimpi_msg_t *self, int rank);
GIMPI_EXPORT int gimpi_msg_rank(gimpi_msg_t *self, int tid);

/*  Sets where the job's tids start: tid(rank) = base + rank + 1 (default base 0, i.e.
 *  tid = rank + 1).  gimpi_init sets it to the block groupd reserved for the job, so the
 *  data plane and groupd speak the same tids.  Call before any traffic.  0, or
 *  GIMPI_EBADPARAM when base < 0 or base + ntasks overflows. */
GIMPI_EXPORT int gimpi_msg_set_tidbase(gimpi_msg_t *self, int base);

/* ---- dynamic hosts (doc/data-plane.md, "Dynamic hosts") ----
 *  Tasks outside the static tables (spawned children, tasks of other jobs) are reached
 *  by tid over connections made on demand: a task calls another's listening socket with
 *  a gimpi introduction, one connection per pair, used both ways; when both call at
 *  once, the call of the higher tid wins.  The packet protocol is the same.  A dynamic
 *  peer that dies, finishes or cannot be reached makes the operations with it fail
 *  (GIMPI_ESYSERR, or the resolver's error); a wildcard receive fails only once every
 *  other known task is gone.  Both ends of an introduction prove that they hold the job's
 *  key (gimpi_msg_set_key) without sending it; a caller that cannot is refused, and the
 *  callee may check the caller's claimed tid too (gimpi_msg_set_verifier). */

/*  Bytes of the job's key. */
#define GIMPI_MSG_KEY_SIZE 32

/*  Sets the job's key, which introductions prove (gimpi_init gives it the user's key:
 *  GIMPI_KEY_FD, GIMPI_KEY_FILE, ~/.gimpi/key or the runtime directory's).  Without a
 *  key a context neither calls nor admits dynamic hosts.  Call before any traffic. */
GIMPI_EXPORT void gimpi_msg_set_key(gimpi_msg_t *self, const uint8_t key[GIMPI_MSG_KEY_SIZE]);

/*  Says whether tid is a task registered at contact addr (16-byte IMPI form) and port:
 *  0, or a GIMPI_E* code (the caller is then refused; GIMPI_ENOTASK: no such task, said
 *  only with GIMPI_DEBUG, as the caller that groupd forgot has exited; GIMPI_EMISMATCH:
 *  registered at another contact).  Called without the context's lock held, once per
 *  incoming introduction that proved the key; it may block (bounded). */
typedef int (*gimpi_msg_verify_fn)(void *arg, int tid, const uint8_t addr[16], int port);

/*  Installs the verifier of incoming introductions' tids (NULL: the key alone admits). */
GIMPI_EXPORT void gimpi_msg_set_verifier(gimpi_msg_t *self, gimpi_msg_verify_fn fn, void *arg);

/*  Finds a tid's contact: fills addr (16-byte IMPI form) and *port and returns 0, or a
 *  GIMPI_E* code (GIMPI_ENOTASK: no such task).  Called without the context's lock held,
 *  from the thread whose call first names the tid; it may block (bounded). */
typedef int (*gimpi_msg_resolve_fn)(void *arg, int tid, uint8_t addr[16], int *port);

/*  Installs the resolver used when a call names a tid the context does not know (NULL:
 *  such calls fail with GIMPI_EBADPARAM, as without dynamic hosts). */
GIMPI_EXPORT void gimpi_msg_set_resolver(gimpi_msg_t *self, gimpi_msg_resolve_fn fn, void *arg);

/*  A hook every send call (standard, synchronous, non-blocking, and the large-bcast
 *  forwarding) runs first, once per call however many copies it sends (gimpi_coll_bcast
 *  and the forwarding run it once, not per receiver or chunk), in the calling thread,
 *  without the context's lock.  The task
 *  uses it to make groupd take this task's deferred leaves before anybody can hear from
 *  it (gimpi_groups_flush). */
typedef void (*gimpi_msg_hook_fn)(void *arg);

/*  Installs the send hook (NULL: none). */
GIMPI_EXPORT void gimpi_msg_set_send_hook(gimpi_msg_t *self, gimpi_msg_hook_fn fn, void *arg);

/*  Liveness of the peers a blocked call waits for (doc/data-plane.md, "Peers that stop").
 *  A call blocked for GIMPI_LIVENESS_MS (default 500 ms) asks this hook, again every as
 *  long, about each gimpi peer it waits for (a receive naming it, a send to it): 1 alive,
 *  0 gone (groupd no longer knows it: dead, stopped, or cut off), < 0 unknown.  A peer
 *  reported gone is treated as dead: its connection is closed and every operation with it
 *  fails.  Runs in the blocked thread, without the context's lock. */
typedef int (*gimpi_msg_alive_fn)(void *arg, int tid);
GIMPI_EXPORT void gimpi_msg_set_alive_hook(gimpi_msg_t *self, gimpi_msg_alive_fn fn, void *arg);

/*  Asks the liveness hook about tid now (for waits outside the engine, such as the
 *  collectives' shared memory): 1 alive, 0 gone (then lost as gimpi_msg_set_alive_hook
 *  says: its connection closes and its operations fail), < 0 no verdict (no hook, an
 *  unknown tid).  Runs the hook without the context's lock. */
GIMPI_EXPORT int gimpi_msg_check_peer(gimpi_msg_t *self, int tid);

/*  A hook a blocking call runs once when it has waited GIMPI_NOTE_MS (default 100 ms),
 *  in the blocked thread without the context's lock: the collectives use it to tell
 *  groupd about a barrier that waits on the data plane (gimpi-stat shows it). */
GIMPI_EXPORT void gimpi_msg_set_blocked_hook(gimpi_msg_t *self, gimpi_msg_hook_fn fn, void *arg);

/*  Causal stamps (doc/data-plane.md, "Stamps").  Every packet to another gimpi task (one
 *  of our own IMPI client, or a dynamic peer) carries, in the header's reserved field, the
 *  stamp last set here: the highest groupd version this task has seen.  Packets to other
 *  implementations carry 0, as before.  The engine keeps the highest stamp that arrived
 *  from gimpi peers; the group layer reads it so that a task that has heard from a peer
 *  sees every group change the peer had seen.  Both are lock-free. */
GIMPI_EXPORT void gimpi_msg_set_stamp(gimpi_msg_t *self, uint64_t stamp);
/*  The highest stamp that has arrived so far (0: none). */
GIMPI_EXPORT uint64_t gimpi_msg_stamp_in(gimpi_msg_t *self);

/*  Calls tid at addr:port now (no resolver); returns at once (0), the connection is made
 *  in the background and messages to tid wait for it.  0 too when tid is already known. */
GIMPI_EXPORT int gimpi_msg_connect(gimpi_msg_t *self, int tid, const uint8_t addr[16], int port);

/*  Announces a task that will call us (a child just spawned): messages to it wait for its
 *  call instead of resolving it.  alive_fd (e.g. a pidfd, or -1) becomes readable when the
 *  task has died: if it has not called by then it is gone.  Without one (a child on
 *  another host), a task that has not called within the connect timeout is looked up in
 *  groupd instead: called when it lives, gone when groupd no longer knows it.  The
 *  context owns alive_fd. */
GIMPI_EXPORT int gimpi_msg_expect(gimpi_msg_t *self, int tid, int alive_fd);

/*  This task's contact: the address (16-byte IMPI form) and port of its listening
 *  socket.  0, or GIMPI_ESYSERR when it has none. */
GIMPI_EXPORT int gimpi_msg_contact(gimpi_msg_t *self, uint8_t addr[16], int *port);

/*  Other tasks known to the context (static and dynamic) that are not gone. */
GIMPI_EXPORT int gimpi_msg_npeers(gimpi_msg_t *self);

/*  Last error text of the context (which peer failed and how), "" when none. */
GIMPI_EXPORT const char *gimpi_msg_errmsg(gimpi_msg_t *self);

/*  Standard send: returns once buf may be reused (sent or copied into the library). */
GIMPI_EXPORT int gimpi_msg_send(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len);
/*  The same in context cid. */
GIMPI_EXPORT
int gimpi_msg_send_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                       size_t len);
/*  Synchronous send: returns once a receive on the destination matched the message. */
GIMPI_EXPORT int gimpi_msg_ssend(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len);
/*  Receive from tid (or GIMPI_ANY) with tag (or GIMPI_ANY) into buf of size bytes.  A
 *  longer message fills buf and returns GIMPI_EOVERFLOW (status->len has its length). */
GIMPI_EXPORT
int gimpi_msg_recv(gimpi_msg_t *self, int tid, int tag, void *buf, size_t size,
                   gimpi_status_t *status);
/*  Waits until a matching message has arrived and describes it without receiving it. */
GIMPI_EXPORT int gimpi_msg_probe(gimpi_msg_t *self, int tid, int tag, gimpi_status_t *status);
/*  Same without waiting: *flag = 1 and status filled when one is there, else *flag = 0. */
GIMPI_EXPORT
int gimpi_msg_iprobe(gimpi_msg_t *self, int tid, int tag, int *flag, gimpi_status_t *status);

/*  Non-blocking send (flags: 0 or GIMPI_MSG_SYNC) and receive; buf must stay valid until
 *  the request completes.  *req receives a handle for wait/test/cancel. */
GIMPI_EXPORT
int gimpi_msg_isend(gimpi_msg_t *self, int tid, int tag, const void *buf, size_t len,
                    int flags, gimpi_msg_req_t **req);
GIMPI_EXPORT
int gimpi_msg_irecv(gimpi_msg_t *self, int tid, int tag, void *buf, size_t size,
                    gimpi_msg_req_t **req);

/*  Waits for a request, fills status (when not NULL), frees it and nulls *req.  Returns
 *  the operation's result (status->error). */
GIMPI_EXPORT int gimpi_msg_wait(gimpi_msg_t *self, gimpi_msg_req_t **req, gimpi_status_t *status);
/*  Like wait when the request is complete (*flag = 1); otherwise *flag = 0, returns 0. */
GIMPI_EXPORT
int gimpi_msg_test(gimpi_msg_t *self, gimpi_msg_req_t **req, int *flag,
                   gimpi_status_t *status);
/*  Asks for a request to be cancelled; wait/test then tell (status->cancelled) whether it
 *  was.  A receive is cancelled while unmatched; a send while no receive matched it (this
 *  may need a round trip to the destination, IMPI's CANCEL). */
GIMPI_EXPORT int gimpi_msg_cancel(gimpi_msg_t *self, gimpi_msg_req_t *req);

/*  The same with an explicit context id (see above). */
GIMPI_EXPORT
int gimpi_msg_isend_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, const void *buf,
                        size_t len, int flags, gimpi_msg_req_t **req);
GIMPI_EXPORT
int gimpi_msg_irecv_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, void *buf,
                        size_t size, gimpi_msg_req_t **req);
GIMPI_EXPORT
int gimpi_msg_iprobe_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, int *flag,
                         gimpi_status_t *status);
GIMPI_EXPORT
int gimpi_msg_probe_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag,
                        gimpi_status_t *status);
/*  Probe waiting at most timeout_ms (0: just look, < 0: no limit beyond the context's):
 *  *flag = 1 and status filled when a matching message arrived; *flag = 0 and 0 returned
 *  when the time ran out; < 0 on failure (a named source gone; with no limit, nothing
 *  matching queued and either any source and every other task gone, or watch_tid — a
 *  task whose departure ends the wait, GIMPI_ANY for none — gone). */
GIMPI_EXPORT
int gimpi_msg_tprobe_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, int timeout_ms,
                         int watch_tid, int *flag, gimpi_status_t *status);
/*  A descriptor that becomes readable when a message may have arrived (PVM's
 *  pvm_getfds): an eventfd, made on the first call (rung at once when whole messages are
 *  queued), rung whenever a message is queued for a later receive, and emptied by every
 *  gimpi_msg_tprobe_cid and gimpi_msg_take_cid before they look; a program polls it
 *  among its own descriptors, then probes or takes without waiting.  Owned by the
 *  context.  The descriptor, or GIMPI_EOUTOFRES. */
GIMPI_EXPORT int gimpi_msg_arrival_fd(gimpi_msg_t *self);
/*  Marks this task as listed where tasks it has never met can find it (a PVM message-box
 *  entry, say): from then on a receive from any source keeps waiting after every task it
 *  knew has left, instead of failing with GIMPI_ESYSERR. */
GIMPI_EXPORT void gimpi_msg_set_listed(gimpi_msg_t *self);
/*  Receive with allocation: waits as gimpi_msg_tprobe_cid, then receives the message it
 *  found, whole, into new memory: *data (malloc'd, at least 1 byte; the caller frees it),
 *  status its envelope.  *flag = 0 (and *data NULL) when the time ran out. */
GIMPI_EXPORT
int gimpi_msg_take_cid(gimpi_msg_t *self, uint64_t cid, int tid, int tag, int timeout_ms,
                       int watch_tid, int *flag, gimpi_status_t *status, void **data);

/*  The IMPI client a tid's task belongs to (-1 when unknown), and IMPI's MAXLINEAR (the
 *  collectives' switch from linear to tree algorithms between clients). */
GIMPI_EXPORT int gimpi_msg_client(gimpi_msg_t *self, int tid);
GIMPI_EXPORT int gimpi_msg_maxlinear(gimpi_msg_t *self);

#ifdef __cplusplus
}
#endif
#endif
