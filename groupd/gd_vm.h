/*  gd_vm.h — groupd's part of the virtual machine: the host table, the VM's manager (the
 *  connection that first set the table, normally gimpirun) and the relay of requests from
 *  tasks to the manager (VMREQ -> VMWAIT, VMREP -> the VMREQ's reply).  Like the
 *  registry it knows no sockets: the replies that complete later leave through the sink
 *  given at creation, so the rules can be tested and fuzzed alone.  A connection is
 *  named by its ROUTER routing id and by groupd's serial number of it (0 when unknown);
 *  its end (gd_vm_conn_gone) frees the manager slot or drops its pending requests.
 *  Limits: GD_VM_MAX_TABLE, GD_VM_MAX_PAYLOAD, GD_VM_MAX_PENDING, GD_VM_MAX_PER_CONN
 *  (gd_proto.h); the protocol is written up in doc/groupd-protocol.md §3.2.
 */
#ifndef GIMPI_GD_VM_H
#define GIMPI_GD_VM_H

#include "groupd/gd_registry.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gd_vm_t gd_vm_t;

/*  Where deferred replies go.  w->cmd says which: GD_VMREQ (status, and the manager's
 *  payload when status >= 0) or GD_VMWAIT (status 0, token, the request's payload). */
typedef struct {
    void (*reply)(void *arg, const gd_waiter_t *w, int32_t status, int32_t token,
                  const uint8_t *data, size_t len);
    void *arg;
} gd_vm_sink_t;

gd_vm_t *gd_vm_new(const gd_vm_sink_t *sink);
void gd_vm_destroy(gd_vm_t **self_p);

/*  True when the connection (routing id key, serial conn) is the manager's. */
bool gd_vm_is_manager(gd_vm_t *self, const uint8_t *key, size_t keylen, uint64_t conn);
/*  True while a manager is connected. */
bool gd_vm_has_manager(gd_vm_t *self);

/*  HOSTS_SET: stores the table, which must be one VM_HOSTS frame (gimpi_vmwire.h) of
 *  exactly nhosts rows "dtid name arch speed slots ncpu" (positive dtids, none twice;
 *  len <= GD_VM_MAX_TABLE), else GIMPI_EBADPARAM.  The first setter becomes the manager;
 *  when gd_vm_set_token gave a token, only a setter that carries it (token_len
 *  GD_TOKEN_SIZE, else 0) may, others get GIMPI_EDENIED.  Another connection is refused
 *  with GIMPI_EEXISTS while the manager's lives.  0 or an error. */
int gd_vm_hosts_set(gd_vm_t *self, const uint8_t *key, size_t keylen, uint64_t conn,
                    int32_t nhosts, const uint8_t *data, size_t len, const uint8_t *token,
                    size_t token_len);
/*  Sets the launcher's token (groupd --launcher): from now on only a HOSTS_SET that
 *  carries it makes its connection the manager. */
void gd_vm_set_token(gd_vm_t *self, const uint8_t token[GD_TOKEN_SIZE]);
/*  HOSTS: the table as last set (*data NULL and *len 0 when none); returns its host count. */
int32_t gd_vm_hosts(gd_vm_t *self, const uint8_t **data, size_t *len);

/*  VMREQ from the connection w (its routing id and request) with serial conn: queued for
 *  the manager (GD_PENDING; the reply comes through the sink), or GIMPI_ENOHOST (no
 *  manager), GIMPI_EBADPARAM (payload over GD_VM_MAX_PAYLOAD), GIMPI_EOUTOFRES (a queue
 *  limit), GIMPI_ENOMEM. */
int gd_vm_request(gd_vm_t *self, const gd_waiter_t *w, uint64_t conn, const uint8_t *data,
                  size_t len);
/*  VMWAIT from the manager: GD_PENDING (answered through the sink, at once when a request
 *  is queued), GIMPI_EDENIED (not the manager), GIMPI_EALREADY (one is parked already). */
int gd_vm_wait(gd_vm_t *self, const gd_waiter_t *w, uint64_t conn);
/*  VMREP from the manager: answers the request of `token` with status and payload
 *  (through the sink).  0, GIMPI_EDENIED, GIMPI_ENOTASK (no such request: answered,
 *  never handed out, or its requester gone), GIMPI_EBADPARAM (payload too long). */
int gd_vm_answer(gd_vm_t *self, const uint8_t *key, size_t keylen, uint64_t conn,
                 int32_t token, int32_t status, const uint8_t *data, size_t len);
/*  The manager came back on a new connection (a groupd restarted from its journal: its
 *  routing id is the same).  True when key is the manager's. */
bool gd_vm_rebind(gd_vm_t *self, const uint8_t *key, size_t keylen, uint64_t conn);
/*  A connection ended: the manager's frees the slot and fails every pending request with
 *  GIMPI_ESYSERR; a requester's pending requests are dropped. */
void gd_vm_conn_gone(gd_vm_t *self, uint64_t conn);
/*  Requests queued or handed to the manager. */
size_t gd_vm_npending(gd_vm_t *self);
/*  The relay's state for the journal's compaction: the host table, the manager's
 *  routing id (length 0: none) and the launcher token.  Pending requests are not: their
 *  requesters send them again after a restart. */
typedef struct {
    const uint8_t *table;
    size_t len;
    int32_t nhosts;
    const uint8_t *mgr_key;
    size_t mgr_keylen;
    bool need_token;
    const uint8_t *token;       /* GD_TOKEN_SIZE bytes */
} gd_vm_state_t;

void gd_vm_state(gd_vm_t *self, gd_vm_state_t *st);
/*  Reads it back into a fresh relay; the manager (if any) on connection conn.  0,
 *  GIMPI_EBADPARAM or GIMPI_ENOMEM. */
int gd_vm_restore(gd_vm_t *self, const gd_vm_state_t *st, uint64_t conn);

#endif
