/*  gimpi_trace.h — a task's trace recorder: the records of gimpi_tev.h (library calls,
 *  messages, group events, spawns ...) gathered in a bounded in-memory ring and appended
 *  to the task's file DIR/<tid in hex>.gtev whenever the ring fills, and at the end.  The
 *  layers above own one recorder per task (the PVM layer: while GIMPI_TRACE is set) and
 *  test a pointer before calling it, so that a task that does not trace pays one branch.
 *  A write that fails never stops the task: the records are counted as lost and a
 *  GIMPI_TEV_LOST record says how many before the next ones.
 */
#ifndef GIMPI_TRACE_H
#define GIMPI_TRACE_H

#include "base/gimpi_tev.h"

#include <stddef.h>

typedef struct gimpi_trace_t gimpi_trace_t;

/*  The ring size when GIMPI_TRACE_BUFFER is not set (bytes). */
#define GIMPI_TRACE_BUFFER_DEFAULT ((size_t)1 << 20)

/*  A recorder that will write into folder dir, with a ring of ring_bytes (0: the
 *  default; at least 4 KiB), the header's offset from GIMPI_TRACE_OFFSET.  Nothing is
 *  written before the first flush.  NULL on ENOMEM. */
gimpi_trace_t *gimpi_trace_new(const char *dir, size_t ring_bytes);
/*  Flushes, closes and frees the recorder; nulls the pointer. */
void gimpi_trace_destroy(gimpi_trace_t **self_p);
/*  The task's tid and program (basename), for the file's name and header; set once
 *  known, before the first flush (a recorder with no tid writes pid<pid>.gtev). */
void gimpi_trace_set_task(gimpi_trace_t *self, int tid, const char *program);
/*  The tid set, 0 if none. */
int gimpi_trace_tid(const gimpi_trace_t *self);
/*  Appends one record: kind (gimpi_tev_kind_t), ev (pvmtev.h's event for CALL_*), n ints
 *  (at most GIMPI_TEV_INTS are kept) and a string (NULL: none; cut at 1 KiB). */
void gimpi_trace_rec(gimpi_trace_t *self, int kind, int ev, const int *i, int n,
                     const char *s);
/*  A message left for dst: a SEND record with the next seq for dst. */
void gimpi_trace_send(gimpi_trace_t *self, int dst, int tag, int ctxid, int bytes);
/*  One message sent to each of the n tids of dsts (those > 0 and not skip, one SEND
 *  record each with its seq), recorded at one time: a broadcast. */
void gimpi_trace_sends(gimpi_trace_t *self, const int *dsts, int n, int skip, int tag,
                       int ctxid, int bytes);
/*  A message from src arrived: its seq (counted per source, from 1, in arrival order),
 *  for the RECV record when the task takes it. */
int gimpi_trace_arrive(gimpi_trace_t *self, int src);
/*  Writes what the ring holds to the file and empties it.  0, or -1 when the write
 *  failed (its records are counted as lost). */
int gimpi_trace_flush(gimpi_trace_t *self);
/*  Records lost so far (the write failures'). */
long gimpi_trace_lost(const gimpi_trace_t *self);

#endif
