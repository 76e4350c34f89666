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
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING (1u << 20)
#define WARM 2000
#define ITERS 20000


/*  An empty ring's header and data in shared anonymous memory (NULL: no memory). */
static void *s_ring_mem(void)
{
    void *m = mmap(NULL, GIMPI_RING_HDR + RING, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    gimpi_ring_hdr_t *h = m;
    h->magic = GIMPI_RING_MAGIC;
    h->version = GIMPI_RING_VERSION;
    h->hdr = GIMPI_RING_HDR;
    h->size = RING;
    return m;
}

/*  Copies len bytes into the ring, waiting for room. */
static int s_put(gimpi_ring_t *r, const void *buf, size_t len)
{
    size_t done = 0;
    int bell;
    while (done < len) {
        struct iovec iv = { (char *)buf + done, len - done };
        ssize_t n = gimpi_ring_writev(r, &iv, 1, &bell);
        if (n < 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

/*  Copies len bytes out of the ring, waiting for them. */
static int s_get(gimpi_ring_t *r, void *buf, size_t len)
{
    size_t done = 0;
    int bell;
    while (done < len) {
        struct iovec iv = { (char *)buf + done, len - done };
        ssize_t n = gimpi_ring_readv(r, &iv, 1, &bell);
        if (n < 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    size_t len = argc > 1 ? (size_t)atol(argv[1]) : 136;
    void *m[2] = { s_ring_mem(), s_ring_mem() };
    double *t = malloc(ITERS * sizeof *t);
    char *buf = calloc(1, len ? len : 1);
    if (!m[0] || !m[1] || !t || !buf || len == 0 || len > RING) {
        fprintf(stderr, "ring-bench: BYTES must be 1..%u\n", RING);
        return 2;
    }
    cpu_set_t all;
    sched_getaffinity(0, sizeof all, &all);
    int cpu[2] = { -1, -1 };
    for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &all))
            cpu[k++] = c;
    fflush(stdout);
    pid_t pid = fork();
    int me = pid == 0;
    if (cpu[1] >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu[me], &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    gimpi_ring_t *out = gimpi_ring_wrap(m[me], RING, 0), *in = gimpi_ring_wrap(m[1 - me], RING, 1);
    if (!out || !in)
        return 1;
    for (int i = 0; i < WARM + ITERS; i++) {
        double t0 = bench_now_ns();
        if (me == 0 ? s_put(out, buf, len) || s_get(in, buf, len)
                    : s_get(in, buf, len) || s_put(out, buf, len))
            return 1;
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
