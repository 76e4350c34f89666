/*  gimpi_loop.h — a small poll()-based event loop in the style of Redis' ae: it owns a set
 *  of file descriptors, each with a read/write interest and one callback, and a set of
 *  millisecond timers (one-shot or repeating).  gimpi_loop_run() dispatches events until a
 *  callback calls gimpi_loop_stop().  Callbacks may add, change or delete any descriptor
 *  or timer, including their own, while they run.  The loop knows nothing about what the
 *  descriptors carry: the IMPI server, the launcher and the task progress engine all run
 *  on it.  Not thread-safe: one loop belongs to one thread.
 */
#ifndef GIMPI_LOOP_H
#define GIMPI_LOOP_H

#include <stdint.h>

typedef struct gimpi_loop_t gimpi_loop_t;

/*  Interest and event bits.  GIMPI_LOOP_ERROR is only ever reported (POLLERR, POLLHUP or
 *  POLLNVAL); it comes together with the bits of the descriptor's interest, so a read or
 *  write callback finds the error itself by reading or writing. */
enum {
    GIMPI_LOOP_READ = 1,
    GIMPI_LOOP_WRITE = 2,
    GIMPI_LOOP_ERROR = 4,
};

/*  Called when fd is ready; events is a combination of the bits above. */
typedef void (gimpi_loop_fd_fn)(gimpi_loop_t *loop, int fd, int events, void *arg);

/*  Called when timer `id` is due.  A one-shot timer is already gone when this runs; a
 *  repeating one stays until gimpi_loop_timer_cancel(). */
typedef void (gimpi_loop_timer_fn)(gimpi_loop_t *loop, int id, void *arg);

/*  A new loop with no descriptors and no timers; NULL when out of memory. */
gimpi_loop_t *gimpi_loop_new(void);

/*  Frees the loop and NULLs the pointer.  Descriptors are not closed (the caller owns
 *  them); pending timers are dropped. */
void gimpi_loop_destroy(gimpi_loop_t **self_p);

/*  Watches fd for `events` (READ and/or WRITE, possibly 0 = registered but idle) and calls
 *  fn(loop, fd, ready, arg) when it is ready.  Registering a descriptor that is already
 *  watched replaces its interest, callback and argument.  Returns 0, or -1 (fd < 0, or out
 *  of memory). */
int gimpi_loop_fd_add(gimpi_loop_t *self, int fd, int events, gimpi_loop_fd_fn *fn, void *arg);

/*  Changes the interest of a watched descriptor.  Returns 0, or -1 when fd is not watched. */
int gimpi_loop_fd_set(gimpi_loop_t *self, int fd, int events);

/*  Current interest of fd, or -1 when it is not watched. */
int gimpi_loop_fd_events(gimpi_loop_t *self, int fd);

/*  Stops watching fd (it is not closed).  A pending event of this round is not delivered.
 *  Returns 0, or -1 when fd was not watched. */
int gimpi_loop_fd_del(gimpi_loop_t *self, int fd);

/*  Arms a timer due in `ms` milliseconds (>= 0); when `repeat` is non-zero it fires again
 *  every `ms` milliseconds (ms must then be >= 1).  Returns the timer's id (> 0), or -1. */
int gimpi_loop_timer_add(gimpi_loop_t *self, int64_t ms, int repeat,
                         gimpi_loop_timer_fn *fn, void *arg);

/*  Cancels a timer.  Returns 0, or -1 when there is no such timer (already fired or
 *  cancelled). */
int gimpi_loop_timer_cancel(gimpi_loop_t *self, int id);

/*  Waits up to timeout_ms (-1: until something happens or a timer is due; 0: do not wait)
 *  and dispatches one round of ready descriptors and due timers.  Returns the number of
 *  callbacks made, or -1 when poll() failed with something other than EINTR. */
int gimpi_loop_run_once(gimpi_loop_t *self, int timeout_ms);

/*  Dispatches rounds until gimpi_loop_stop() is called or nothing is left to wait for (no
 *  descriptor with an interest and no timer).  Returns 0, or -1 when poll() failed. */
int gimpi_loop_run(gimpi_loop_t *self);

/*  Makes gimpi_loop_run() return after the current round. */
void gimpi_loop_stop(gimpi_loop_t *self);

/*  Milliseconds on the monotonic clock (what the timers count in). */
int64_t gimpi_loop_now_ms(void);

#endif
