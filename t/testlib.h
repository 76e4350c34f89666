/*  testlib.h — what multi-process tests share: starting a program from the build tree with
 *  its output on pipes, reading lines and bytes with deadlines (never sleeps), waiting for
 *  a child with a bound, raw TCP client sockets for playing a peer byte by byte, and
 *  waiting until a task's cache of a group is current.
 */
#ifndef GIMPI_TESTLIB_H
#define GIMPI_TESTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    pid_t pid;
    int out;                    /* child's stdout, read end (-1 if not captured) */
    int err;                    /* child's stderr, read end (-1 if not captured) */
} tl_child_t;

/*  Path of a program of the build tree ("programs/impi-server") in a static buffer. */
const char *tl_prog(const char *relpath);

/*  Starts argv[0] with argv; captures stdout and stderr on pipes.  Returns 0 or -1. */
int tl_spawn(char *const argv[], tl_child_t *child);

/*  Reads one line (without the newline) within timeout_ms.  Returns its length, or -1 on
 *  timeout or end of file. */
int tl_read_line(int fd, char *buf, size_t size, int timeout_ms);

/*  Reads everything until EOF or timeout into buf (NUL-terminated); returns bytes read. */
size_t tl_read_all(int fd, char *buf, size_t size, int timeout_ms);

/*  Waits up to timeout_ms for the child; kills it (SIGKILL) if it is still running.
 *  Returns the wait status, or -1 when it had to be killed. */
int tl_wait(tl_child_t *child, int timeout_ms);

/*  Closes the pipes of a child. */
void tl_child_close(tl_child_t *child);

/*  Parses "A.B.C.D:PORT"; returns 0 or -1. */
int tl_parse_addr(const char *text, char *host, size_t hostsize, int *port);

/*  Blocking TCP connection to host:port; -1 on failure. */
int tl_connect(const char *host, int port);

/*  Writes all bytes; 0 or -1. */
int tl_send_all(int fd, const void *buf, size_t len);

/*  Reads exactly len bytes within timeout_ms.  Returns len, 0 on EOF before len bytes,
 *  -1 on timeout or error. */
long tl_recv_exact(int fd, void *buf, size_t len, int timeout_ms);

/*  1 when the peer closes the socket within timeout_ms (any pending bytes discarded). */
int tl_wait_closed(int fd, int timeout_ms);

/*  Milliseconds on the monotonic clock. */
int64_t tl_now_ms(void);

/*  Queries a group until the answer comes from the task's cache (bounded, 20 s): the
 *  cache becomes current once groupd's MARK for the new subscription has arrived, which
 *  on a loaded machine can take longer than the first queries (each then a SNAPSHOT
 *  round trip).  Tests that count groupd round trips call it first.  1 when current. */
struct gimpi_groups_t;
int tl_group_warm(struct gimpi_groups_t *g, const char *group);

#endif
