/*  fuzz/fuzz_packet_stream.c — libFuzzer target for the data plane's receive side: a real
 *  two-host job inside one process (host 1 is a thread that meets host 0 properly and then
 *  writes the fuzz input as its byte stream, then hangs up), host 0 a real gimpi_msg_t
 *  receiving everything it can until the stream breaks.  Whatever the bytes, the engine
 *  must end with an error or clean data — never crash, hang or leak.  The first 256 input
 *  bytes are patched so that the first two packet headers carry the right source and
 *  destination procs, which lets the fuzzer reach the message paths at once.
 *  Build: make fuzz; run: make fuzz-run (or fuzz/bin/fuzz_packet_stream -max_total_time=60)
 */
#include "gimpi.h"
#include "net/gimpi_host.h"
#include "impi/impi_tables.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    impi_tables_t *t;
    int lfd;
    const uint8_t *data;
    size_t size;
} peer_arg_t;

/*  Host 1: dance, write the bytes, hang up, drain until host 0 closes. */
static void *s_peer(void *arg)
{
    peer_arg_t *a = arg;
    int fds[2];
    char err[200];
    if (gimpi_host_dance(a->t, 1, a->lfd, -1, fds, 5000, err, sizeof err) == 0) {
        size_t off = 0;
        while (off < a->size) {
            ssize_t n = send(fds[0], a->data + off, a->size - off, MSG_NOSIGNAL);
            if (n <= 0)
                break;
            off += (size_t)n;
        }
        shutdown(fds[0], SHUT_WR);
        char sink[4096];
        while (read(fds[0], sink, sizeof sink) > 0)
            ;
        close(fds[0]);
    }
    close(a->lfd);
    return NULL;
}

/*  One input: a fresh two-host job, host 1's stream = the input. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static impi_host_info_t hosts[2];
    static impi_proc_info_t procs[2];
    impi_tables_t t;
    memset(&t, 0, sizeof t);
    t.nhosts = t.nprocs = 2;
    t.hosts = hosts;
    t.procs = procs;
    t.pktlen = 64;
    t.tagub = 0x7fffffff;
    t.ackmark = 2;
    t.hiwater = 4;
    setenv("GIMPI_PROGRESS", "0", 1);
    int lfd[2];
    for (int i = 0; i < 2; i++) {
        memset(&hosts[i], 0, sizeof hosts[i]);
        impi_addr16_from_ipv4(hosts[i].addr, 0x7f000001u);
        hosts[i].nprocs = 1;
        lfd[i] = gimpi_host_listen(hosts[i].addr, &hosts[i].port, NULL, 0);
        if (lfd[i] < 0)
            abort();
        memcpy(procs[i].id.hostid, hosts[i].addr, 16);
        procs[i].id.pid = 100 + i;
        procs[i].host = i;
    }
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    for (size_t k = 0; k < 2 && (k + 1) * IMPI_PACKET_SIZE <= size; k++) {
        impi_proc_encode(buf + k * IMPI_PACKET_SIZE + 8, &procs[1].id);
        impi_proc_encode(buf + k * IMPI_PACKET_SIZE + 32, &procs[0].id);
    }
    peer_arg_t a = { &t, lfd[1], buf, size };
    pthread_t th;
    pthread_create(&th, NULL, s_peer, &a);
    char err[200];
    gimpi_msg_t *ctx = gimpi_msg_new(&t, 0, lfd[0], 5000, err, sizeof err);
    if (ctx) {
        gimpi_msg_set_timeout(ctx, 2000);
        static uint8_t rbuf[4096];
        for (int i = 0; i < 64; i++) {
            gimpi_status_t st;
            if (gimpi_msg_recv(ctx, GIMPI_ANY, GIMPI_ANY, rbuf, sizeof rbuf, &st) < 0
                && st.error != GIMPI_EOVERFLOW)
                break;
        }
        gimpi_msg_destroy(&ctx);
    }
    pthread_join(th, NULL);
    free(buf);
    return 0;
}
