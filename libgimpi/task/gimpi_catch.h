/*  gimpi_catch.h — collecting spawned tasks' output in the task that asked for it
 *  (gimpi_catchout, PVM's pvm_catchout): the records that carry it and the collector a
 *  gimpi_t owns.
 *
 *  A catching task owns a Unix SOCK_SEQPACKET socket pair.  Its children get the writing
 *  end as an inherited descriptor named by GIMPI_CATCHOUT_FD, and so do their children
 *  (a task that does not catch itself hands on the end it inherited): every spawn made
 *  with a collector gives the child one pipe for its stdout and stderr and a copier
 *  process that sends what comes out of it, tagged with the child's tid, as records on
 *  that socket.  Each record is one packet: CATCH_HDR bytes (tid, kind; host order, it
 *  never leaves the machine), then for CATCH_DATA the bytes the child wrote.  The spawn's
 *  middle process sends CATCH_BEGIN before the spawn call returns, the copier CATCH_DATA
 *  and, when the pipe ends, CATCH_EOF.  A thread of the catching task reads the records,
 *  joins each task's bytes into lines and writes them to the FILE in PVM's format
 *  ("[t<hex tid>] BEGIN", "[t<hex tid>] <line>", "[t<hex tid>] EOF").  A spawn that
 *  catches into this task's own collector then sends CATCH_SYNC and waits until the
 *  thread has read it: every BEGIN sent before is written and its task counted open when
 *  the spawn returns, as PVM writes BEGIN inside pvm_spawn.  See doc/spawn.md.
 */
#ifndef GIMPI_CATCH_H
#define GIMPI_CATCH_H

#include "gimpi.h"

#include <stdint.h>
#include <stdio.h>

#define GIMPI_ENV_CATCHOUT_FD "GIMPI_CATCHOUT_FD"

enum {
    CATCH_BEGIN = 1,            /* a task started (sent by the spawn) */
    CATCH_DATA = 2,             /* bytes the task wrote */
    CATCH_EOF = 3,              /* its output ended */
    CATCH_SYNC = 4,             /* tid 0, a uint32 number: gimpi_catch_sync's marker */
    CATCH_HDR = 8,              /* int32 tid, int32 kind */
    CATCH_CHUNK = 4096,         /* data bytes per record at most */
};

typedef struct gimpi_catch_t gimpi_catch_t;

/*  The collector state of a task: takes over the descriptor GIMPI_CATCHOUT_FD names
 *  (removing the variable) when the task's spawner caught its output.  NULL on ENOMEM. */
gimpi_catch_t *gimpi_catch_new(void);

/*  Stops the thread, closes the sockets, frees; nulls the pointer. */
void gimpi_catch_destroy(gimpi_catch_t **self_p);

/*  Starts (to not NULL) or stops (NULL) catching: see gimpi_catchout in gimpi.h. */
int gimpi_catch_set(gimpi_catch_t *self, FILE *to, int flags);

/*  The descriptor a spawn hands its children (this task's collector, or the one it
 *  inherited), or -1 when their output is not caught. */
int gimpi_catch_fd(gimpi_catch_t *self);

/*  When fd is this task's own collector and output is caught: waits until the thread
 *  has handled every record sent to it before the call (the BEGIN records of a spawn),
 *  at most timeout_ms.  0, or GIMPI_ESYSERR when the marker was not seen in time. */
int gimpi_catch_sync(gimpi_catch_t *self, int fd, int timeout_ms);

/*  Caught tasks whose output has not ended. */
int gimpi_catch_open(gimpi_catch_t *self);

/*  Waits up to timeout_ms (-1: no limit) for every caught task's output to end; returns
 *  how many are still open. */
int gimpi_catch_wait(gimpi_catch_t *self, int timeout_ms);

/*  The collector of a task (gimpi_task.c). */
gimpi_catch_t *gimpi_task_catch(gimpi_t *self);

/*  Sends one record (never raises SIGPIPE; async-signal-safe).  0 or -1. */
int gimpi_catch_send(int fd, int32_t tid, int32_t kind, const void *data, size_t len);

#endif
