/*  gdtest.h — what the groupd tests share: starting a private groupd (its own endpoint in
 *  a fresh temporary directory, never the user's default) and waiting for its endpoint
 *  line, stopping or killing it, and a raw DEALER client for speaking the protocol frame
 *  by frame.
 */
#ifndef GIMPI_GDTEST_H
#define GIMPI_GDTEST_H

#include "gd_proto.h"
#include "testlib.h"

typedef struct {
    tl_child_t child;
    char dir[256];
    char endpoint[600];
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

/*  Sends frames on a socket and receives one reply within timeout_ms into mp.  0 or -1. */
int gdt_exchange(void *sock, const gd_frame_t *frames, int nframes, gd_multipart_t *mp,
                 int timeout_ms);
#endif
