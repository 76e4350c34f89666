/*  gdtest.h — what the groupd tests share: starting a private groupd (its own endpoint in
 *  a fresh temporary directory, never the user's default) and waiting for its endpoint
 *  line, stopping or killing it, and a DEALER client for speaking the protocol frame by
 *  frame.
 */
#ifndef GIMPI_GDTEST_H
#define GIMPI_GDTEST_H

#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "testlib.h"

typedef struct {
    tl_child_t child;
    char dir[256];
    char endpoint[600];
    char token[64];             /* --launcher: its manager token ("" without) */
    bool running;
} gdt_daemon_t;

/*  Starts `groupd --foreground --endpoint ipc://<tmpdir>/gd [extra]`; 0 when it printed
 *  its endpoint within 20 s. */
int gdt_start(gdt_daemon_t *d, const char *extra);
/*  Same with a given endpoint (e.g. "tcp://127.0.0.1:*"); d->endpoint is what it printed. */
int gdt_start_ep(gdt_daemon_t *d, const char *endpoint, const char *extra);
/*  SIGTERM, bounded wait; returns the wait status (-1 when it had to be killed). */
int gdt_stop(gdt_daemon_t *d);
/*  SIGKILL and reap. */
void gdt_kill(gdt_daemon_t *d);
/*  Removes the temporary directory's files. */
void gdt_cleanup(gdt_daemon_t *d);

/*  For tests of the library starting groupd by itself: makes a fresh directory from the
 *  template in dir ("/tmp/x-XXXXXX"), writes "ipc://DIR/gd" into ep and points
 *  GIMPI_GROUPD_BIN at the build tree's groupd.  0 or -1. */
int gdt_autostart_setup(char *dir, char *ep, size_t epsize);
/*  The pid such a groupd wrote into DIR/gd.lock, waiting up to wait_ms for it; 0 if none. */
pid_t gdt_lock_pid(const char *dir, int wait_ms);
/*  Removes DIR/gd, gd.pub, gd.lock and DIR; unsets GIMPI_GROUPD_BIN. */
void gdt_autostart_cleanup(const char *dir);

/*  A DEALER connected to ep (a GD_SOCK_TOOL_DEALER of the socket factory: linger 0, no
 *  heartbeats) in a context of its own; close with gdt_dealer_close.  NULL on failure. */
void *gdt_dealer(const char *ep, void **zctx);
void gdt_dealer_close(void *sock, void *zctx);
/*  The same DEALER in an existing context; close with gd_sock_destroy(&sock, NULL). */
void *gdt_dealer_in(void *zctx, const char *ep);
/*  Arrivals groupd at ep counts in the barrier (freeze: the freeze) of a group (raw STAT),
 *  -1 on error; and a bounded (20 s) wait until there are n. */
int gdt_arrived(const char *ep, const char *group, bool freeze);
bool gdt_wait_arrived(const char *ep, const char *group, int n, bool freeze);

/*  Sends frames on a socket and receives one reply within timeout_ms into mp.  0 or -1. */
int gdt_exchange(void *sock, const gd_frame_t *frames, int nframes, gd_multipart_t *mp,
                 int timeout_ms);
#endif
