/*  ring_bench.c — `ring-bench [BYTES]`: the floor under gimpi's point-to-point latency
 *  within a node.  Two forked processes, each pinned to a CPU of its own, play ping-pong
 *  with records of BYTES bytes (default 136: an IMPI header and 8 bytes of payload)
 *  through two gimpi_ring's (net/gimpi_ring.h) and nothing else: no packet engine, no
 *  matching, no requests.  Prints the median round trip in the README's line format
 *  (system "ring", figure "rtt"), so that `gimpi-bench rtt8 2` minus this is what the
 *  engine adds per round trip.
 */
#include "bench_stats.h"
#include "net/gimpi_ring.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING (1u << 20)
#define WARM 2000
#define ITERS 20000


/*  The peer process of a forked pair: 0 while it lives (checked now and then while a
 *  copy waits, so that a peer that died ends the benchmark instead of hanging it). */
typedef struct {
    pid_t child;                    /* in the parent: the child's pid; in the child: 0 */
    pid_t parent;                   /* the parent's pid */
    unsigned looks;
} peer_t;

/*  -1 when the peer has gone (looked at every 2^20th call). */
static int s_peer_gone(peer_t *p)
{
    if ((++p->looks & ((1u << 20) - 1)) != 0)
        return 0;
    if (p->child)
        return waitpid(p->child, NULL, WNOHANG) == p->child ? -1 : 0;
    return getppid() != p->parent ? -1 : 0;
}

/*  Copies len bytes into the ring, waiting for room (-1: corrupt, or the peer died). */
static int s_put(gimpi_ring_t *r, const void *buf, size_t len, peer_t *peer)
{
    size_t done = 0;
    int bell;
    while (done < len) {
        struct iovec iv = { (char *)buf + done, len - done };
        ssize_t n = gimpi_ring_writev(r, &iv, 1, &bell);
        if (n < 0 || (n == 0 && s_peer_gone(peer)))
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/*  Copies len bytes out of the ring, waiting for them (-1: corrupt, or the peer died). */
static int s_get(gimpi_ring_t *r, void *buf, size_t len, peer_t *peer)
{
    size_t done = 0;
    int bell;
    while (done < len) {
        struct iovec iv = { (char *)buf + done, len - done };
        ssize_t n = gimpi_ring_readv(r, &iv, 1, &bell);
        if (n < 0 || (n == 0 && s_peer_gone(peer)))
            return -1;
        done += (size_t)n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    size_t len = argc > 1 ? (size_t)atol(argv[1]) : 136;
    if (len == 0 || len > RING) {
        fprintf(stderr, "ring-bench: BYTES must be 1..%u\n", RING);
        return 2;
    }
    char err[256];
    gimpi_ring_t *ring[2] = { gimpi_ring_new(RING, err, sizeof err), NULL };
    if (ring[0])                        /* ring[0]: the parent writes, ring[1]: the child */
        ring[1] = gimpi_ring_new(RING, err, sizeof err);
    double *t = malloc(ITERS * sizeof *t);
    char *buf = calloc(1, len);
    if (!ring[1] || !t || !buf) {
        fprintf(stderr, "ring-bench: %s\n", ring[1] ? "out of memory" : err);
        return 1;
    }
    cpu_set_t all;
    sched_getaffinity(0, sizeof all, &all);
    int cpu[2] = { -1, -1 };
    for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &all))
            cpu[k++] = c;
    fflush(stdout);
    peer_t peer = { 0, getpid(), 0 };
    pid_t pid = fork();
    int me = pid == 0;
    peer.child = me ? 0 : pid;
    if (cpu[1] >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu[me], &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    /* each writes the ring it (or, for the child, its parent) made, and reads the other
       one as its consumer, through the descriptor a peer would have been passed */
    gimpi_ring_t *out = ring[me];
    gimpi_ring_t *in = gimpi_ring_attach(dup(gimpi_ring_fd(ring[1 - me])), err, sizeof err);
    if (pid < 0 || !in) {
        fprintf(stderr, "ring-bench: %s\n", pid < 0 ? "fork failed" : err);
        return 1;
    }
    for (int i = 0; i < WARM + ITERS; i++) {
        double t0 = bench_now_ns();
        if (me == 0 ? s_put(out, buf, len, &peer) || s_get(in, buf, len, &peer)
                    : s_get(in, buf, len, &peer) || s_put(out, buf, len, &peer)) {
            fprintf(stderr, "ring-bench: %s: a ring is corrupt or the other process died\n",
                    me ? "child" : "parent");
            return 1;
        }
        if (i >= WARM)
            t[i - WARM] = (bench_now_ns() - t0) / 1e3;
    }
    if (me)
        return 0;
    int st;
    waitpid(pid, &st, 0);
    qsort(t, ITERS, sizeof *t, bench_cmp);
    printf("ring rtt n=2 median_us=%.3f min_us=%.3f p90_us=%.3f bytes=%zu iters=%d warm=%d "
           "pinned=%s\n", t[ITERS / 2], t[0], t[ITERS * 9 / 10], len, ITERS, WARM,
           cpu[1] >= 0 ? "yes" : "no");
    return 0;
}
