/*  gimpi_groups_notify.h — watching other tasks' ends and the virtual machine's host table
 *  through groupd (gimpi_groups_notify.c), for PVM's pvm_notify.  Internal to the library.
 *
 *  groupd publishes a task's end on the topic "T" + its tid and the hosts that a change of
 *  the host table adds or removes on the topic "H" (gd_proto.h).  A watch subscribes, on a
 *  SUB socket of its own, waits until groupd's MARK proves the subscription live, and only
 *  then asks whether the task still exists: a task that ends after the question is told by
 *  an event, one that ended before it by the answer, so no end can fall between the two.
 */
#ifndef GIMPI_GROUPS_NOTIFY_H
#define GIMPI_GROUPS_NOTIFY_H

#include "gimpi_group.h"

#include <stdint.h>

#pragma GCC visibility push(hidden)

/*  An event kind of a watch besides groupd's: another groupd was reached (the standby
 *  that took over), and the host table is to be read again (hosts deleted meanwhile are
 *  missing from it; their GD_EV_HOST_DEL went to the socket of the groupd lost). */
enum { GIMPI_GROUPS_EV_HOSTS_AGAIN = -1 };

/*  One event of a watch. */
typedef struct {
    int kind;                   /* GD_EV_TASK_EXIT, GD_EV_HOST_ADD, GD_EV_HOST_DEL or
                                   GIMPI_GROUPS_EV_HOSTS_AGAIN */
    int32_t id;                 /* the task's tid, or the host's dtid */
    int32_t index;              /* host events: place among the hosts of one table change */
    int32_t count;              /* ... and how many hosts that change adds (or removes) */
} gimpi_groups_event_t;

/*  Watches task tid's end (a task watched n times needs n unwatches).  1: it exists (or is
 *  spawned and not registered yet), its end will come as an event; 0: it has ended
 *  already, or never was (no event will come; it is not watched); or an error. */
int gimpi_groups_watch_task(gimpi_groups_t *self, int32_t tid);
/*  Stops one watch of task tid (its events are no longer received once the last goes). */
void gimpi_groups_unwatch_task(gimpi_groups_t *self, int32_t tid);
/*  Watches the host table's changes (once; later calls do nothing).  0 or an error; the
 *  table is to be read after it returns. */
int gimpi_groups_watch_hosts(gimpi_groups_t *self);
/*  The next event of the watches, waiting up to timeout_ms (0: poll).  1 with *ev set,
 *  0 when none came in time or nothing is watched, or an error. */
int gimpi_groups_watch_next(gimpi_groups_t *self, int timeout_ms, gimpi_groups_event_t *ev);
/*  The descriptor of the watches' socket (made on first use, nothing subscribed yet):
 *  readable when an event may have come.  A descriptor, or an error. */
int gimpi_groups_watch_fd(gimpi_groups_t *self);
/*  The descriptor of the monitor of the connection to groupd (made anew with each new
 *  connection), or -1: readable when that connection may have ended, so that a program
 *  polling its own loop notices a lost groupd; gimpi_groups_watch_pending is then 1, and
 *  gimpi_groups_watch_next reconnects and reads the watches anew. */
int gimpi_groups_monitor_fd(gimpi_groups_t *self);
/*  1 when an event may be read now (gimpi_groups_watch_next would find one), or the
 *  connection's monitor has news, else 0.
 *  It lets the socket take in what has come, which quiets its descriptor when nothing
 *  has: a program polling that descriptor calls this (through a receive) after each wake. */
int gimpi_groups_watch_pending(gimpi_groups_t *self);

#pragma GCC visibility pop

#endif
