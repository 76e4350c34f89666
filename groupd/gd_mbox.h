/*  gd_mbox.h — groupd's message box: PVM 3.4's global mailbox (pvm_putinfo,
 *  pvm_recvinfo, pvm_delinfo, pvm_getmboxinfo and PVM 3.3's insert/lookup/delete built on
 *  it), kept beside the groups so that every task of the virtual machine sees the one
 *  box.  Entries are packed PVM buffers (their bytes and encoding) under a class name and
 *  an index, owned by the task that put them, with PVM 3.4.6's rules (pvmd's msgbox.c):
 *  the owner or anyone for an OverWritable entry may replace or delete it, others get
 *  PvmDenied; MultiInstance takes the next free index; a task's exit removes its entries
 *  but the Persistent ones, which lose their owner (0) and stay until the box is cleared.
 *  A PvmMboxWaitForInfo read that finds nothing waits here until a put of its class
 *  satisfies it; its reply leaves through the sink given at creation (like the registry,
 *  the box knows no sockets, so it can be tested and fuzzed alone).  Bounded: bytes per
 *  entry, entries per task, entries and bytes in all, waiting reads (PvmOutOfRes beyond).
 *  The protocol is in doc/groupd-protocol.md §3.4, the limits in doc/security.md.
 */
#ifndef GIMPI_GD_MBOX_H
#define GIMPI_GD_MBOX_H

#include "groupd/gd_registry.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gd_mbox_t gd_mbox_t;

/*  Bounds (groupd's options change them; 0 in a field: its default).  Whatever is over a
 *  bound is refused with GIMPI_EOUTOFRES and groupd keeps serving: together they bound
 *  the box to max_bytes of entries plus some hundred bytes per entry and waiter. */
enum {
    GD_MBOX_MAX_PER_TASK = 4096,        /* entries one task owns (--mbox-max-per-task) */
    GD_MBOX_MAX_ENTRIES = 65536,        /* entries in all, orphaned persistent ones too */
    GD_MBOX_MAX_WAITERS = 4096,         /* PvmMboxWaitForInfo reads waiting, in all */
    GD_MBOX_MAX_WAITERS_PER_CONN = 16,  /* ... from one connection */
};
#define GD_MBOX_MAX_BYTES ((size_t)256 << 20)   /* bytes of all entries (--mbox-max-bytes) */

/*  PVM 3.4's flag bits (pvm3.h), as groupd sees them. */
enum {
    GD_MBOX_PERSISTENT = 1,
    GD_MBOX_MULTI = 2,
    GD_MBOX_OVERWRITABLE = 4,
    GD_MBOX_FIRSTAVAIL = 8,
    GD_MBOX_READDELETE = 16,
    GD_MBOX_WAIT = 32,
    GD_MBOX_DIRECT_SHIFT = 10,          /* PvmMboxDirectIndex(i): i << 10 in the flags */
};

/*  (the bytes of one entry: GD_MBOX_MAX_ENTRY, gd_proto.h, or groupd --mbox-max-entry) */
typedef struct {
    size_t max_entry, max_bytes;
    int max_per_task, max_entries, max_waiters;
} gd_mbox_limits_t;

/*  Where a read's answer goes (deferred ones, and every answer of gd_mbox_get): status
 *  (the entry's index or an error) and, when status >= 0, the entry's encoding and bytes
 *  (valid during the call only). */
typedef struct {
    void (*reply)(void *arg, const gd_waiter_t *w, int32_t status, int32_t encoding,
                  const uint8_t *data, size_t len);
    void *arg;
} gd_mbox_sink_t;

gd_mbox_t *gd_mbox_new(const gd_mbox_sink_t *sink);
void gd_mbox_destroy(gd_mbox_t **self_p);
/*  Sets the bounds (fields 0: defaults). */
void gd_mbox_set_limits(gd_mbox_t *self, const gd_mbox_limits_t *limits);

/*  pvm_putinfo / pvm_insert by task tid (> 0): stores a copy of the len bytes under name at
 *  the index PVM picks (req -1: PvmMboxDirectIndex of flags, else 0; req >= 0: PVM 3.3's
 *  insert at req, PvmDenied when taken), then answers the waiting reads it satisfies.
 *  Returns the index, or GIMPI_EDENIED, GIMPI_EBADPARAM (empty name, tid <= 0, req < -1),
 *  GIMPI_EOUTOFRES (a bound), GIMPI_ENOMEM. */
int gd_mbox_put(gd_mbox_t *self, int32_t tid, const char *name, int32_t req, int32_t flags,
                int32_t encoding, const uint8_t *data, size_t len);

/*  pvm_recvinfo by task tid from connection conn: answers w through the sink (the entry or
 *  an error) and returns its status, or, for a PvmMboxWaitForInfo read that finds nothing,
 *  returns GD_PENDING and answers when a put satisfies it (or GIMPI_EOUTOFRES at once when
 *  too many wait).  Errors: GIMPI_ENOTFOUND, GIMPI_EDENIED (ReadAndDelete of an entry this
 *  task may not delete), GIMPI_EBADPARAM (empty name, index < 0). */
int gd_mbox_get(gd_mbox_t *self, int32_t tid, uint64_t conn, const char *name, int32_t index,
                int32_t flags, const gd_waiter_t *w);

/*  pvm_delinfo: the index deleted, or GIMPI_ENOTFOUND, GIMPI_EDENIED, GIMPI_EBADPARAM. */
int gd_mbox_del(gd_mbox_t *self, int32_t tid, const char *name, int32_t index);

/*  pvm_getmboxinfo: the classes whose names match pattern (PVM's glob: '*' matches any
 *  run, the rest matches anywhere in the name; "" and "*" match all), in the order they
 *  were made, as one malloc'ed blob (*out: per class Int4 name length, the name, Int4
 *  entries, then per entry Int4 index, owner, flags).  Returns their
 *  number, or GIMPI_ENOMEM. */
int gd_mbox_list(gd_mbox_t *self, const char *pattern, uint8_t **out, size_t *len);

/*  True when name matches pattern as pvmd's pvmmatchstring says. */
bool gd_mbox_match(const char *name, const char *pattern);

/*  Task tid has ended: its entries go but the persistent ones (owner 0 from now on), its
 *  waiting reads are dropped (without a reply). */
void gd_mbox_task_gone(gd_mbox_t *self, int32_t tid);
/*  A connection has ended: its waiting reads are dropped. */
void gd_mbox_conn_gone(gd_mbox_t *self, uint64_t conn);
/*  Empties the box (the virtual machine halts or is reset): every entry goes, persistent
 *  or not, and waiting reads are answered GIMPI_ESYSERR. */
void gd_mbox_clear(gd_mbox_t *self);

/*  Entries, their bytes, the waiting reads (for gimpi-stat and the tests). */
size_t gd_mbox_nentries(const gd_mbox_t *self);
size_t gd_mbox_nbytes(const gd_mbox_t *self);
size_t gd_mbox_nwaiters(const gd_mbox_t *self);

/*  The entries for the journal's compaction: fn gets each (owner 0: orphaned persistent),
 *  class by class in creation order, by index; gd_mbox_restore reads them back in that
 *  order (0, GIMPI_EBADPARAM out of order, GIMPI_ENOMEM).  Waiting reads are not kept:
 *  their tasks send them again after a restart. */
typedef void (*gd_mbox_dump_fn)(void *arg, const char *name, int32_t index, int32_t owner,
                                int32_t flags, int32_t encoding, const uint8_t *data,
                                size_t len);
void gd_mbox_dump(gd_mbox_t *self, gd_mbox_dump_fn fn, void *arg);
int gd_mbox_restore(gd_mbox_t *self, const char *name, int32_t index, int32_t owner,
                    int32_t flags, int32_t encoding, const uint8_t *data, size_t len);

#endif
