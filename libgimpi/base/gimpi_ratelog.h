/*  gimpi_ratelog.h — the one rate limit of log lines about strangers.
 *
 *  Strangers can make gimpi write a line at will (a refused connection, a failed
 *  handshake, a malformed request), so every such log goes through a gimpi_ratelog_t: at
 *  most per_sec lines in a window of one second, which opens with the first event after
 *  the previous one closed; the events beyond are counted, and the caller writes one
 *  summary line ("N more ... in the last second") with the count that
 *  gimpi_ratelog_roll hands back once the window is over.  It only counts: each caller
 *  keeps its own words and its own stream.  Used by the dance (net/gimpi_host.c), the
 *  introductions (net/msg_dynhost.c), groupd (groups/gd_sock.c) and impi-server.
 */
#ifndef GIMPI_RATELOG_H
#define GIMPI_RATELOG_H

#include <stdbool.h>
#include <stdint.h>

/*  One kind of event's counts.  Zero it, then set per_sec. */
typedef struct {
    int per_sec;                /* lines allowed in a window */
    bool open;                  /* a window is under way */
    int64_t start_ms;           /* when it opened */
    int shown;                  /* lines let through in it */
    int held;                   /* events counted, not shown, in it */
    uint64_t total;             /* events ever */
} gimpi_ratelog_t;

/*  Closes the window when it is over at now_ms (or at once with force) and returns the
 *  number of events it held back: when > 0 the caller writes its summary line. */
int gimpi_ratelog_roll(gimpi_ratelog_t *rl, int64_t now_ms, bool force);

/*  Counts one event at now_ms (the window must have been rolled first); true when its
 *  line may be written. */
bool gimpi_ratelog_event(gimpi_ratelog_t *rl, int64_t now_ms);

/*  Milliseconds until a held-back summary is due, -1 when none is pending: a loop sleeps
 *  at most this long, so that the summary comes on time. */
int gimpi_ratelog_due_ms(const gimpi_ratelog_t *rl, int64_t now_ms);
#endif
