/*  fuzz/fuzz_intro.c — libFuzzer target for the introduction of dynamic hosts
 *  (msg_dynhost.h): its codec and MACs, and a real gimpi_msg_t's listener taking a
 *  caller that writes the fuzz input.  Input: a mode byte (bit 0: seal the INTRO with the
 *  job's key under the challenge the listener sent, so that the decisions behind the MAC
 *  are reached; bit 1: send a proper HELLO instead of the input's first 8 bytes), then
 *  the HELLO, the 120-byte INTRO, and whatever follows it (packets, or junk).  Invariants:
 *  a record round-trips through the codec; a MAC holds only for the bytes it was made
 *  over; whatever the caller sends, the listener answers with whole records or closes,
 *  never crashes, hangs or leaks, and the context still ends cleanly.
 *  Build: make fuzz; run: make fuzz-run (or fuzz/bin/fuzz_intro -max_total_time=60)
 */
#include "fuzz_check.h"
#include "gimpi.h"
#include "base/gimpi_io.h"
#include "net/msg_dynhost.h"
#include "task/gimpi_job.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/*  The verifier: even tids are registered, odd ones are not. */
static int s_verify(void *arg, int tid, const uint8_t addr[16], int port)
{
    (void)arg;
    (void)addr;
    (void)port;
    return tid % 2 ? GIMPI_ENOTASK : 0;
}

/*  The codec and the MACs on the input's first record. */
static void s_codec(const gimpi_key_t *key, const uint8_t *data)
{
    gimpi_intro_t in;
    uint8_t again[GIMPI_INTRO_SIZE], nonce[GIMPI_INTRO_NONCE] = { 1 };
    if (gimpi_intro_decode(data, &in) == 0) {
        gimpi_intro_encode(again, &in);
        CHECK(memcmp(again, data, GIMPI_INTRO_SIZE) == 0);
    } else
        CHECK(gimpi_intro_head(data) == -1);
    memcpy(again, data, GIMPI_INTRO_SIZE);
    bool forged = gimpi_intro_sealed(key, nonce, again);
    gimpi_intro_seal(key, nonce, again);
    CHECK(gimpi_intro_sealed(key, nonce, again));
    CHECK(forged == (memcmp(again, data, GIMPI_INTRO_SIZE) == 0));
    again[data[0] % GIMPI_INTRO_MAC_AT] ^= 1;
    CHECK(!gimpi_intro_sealed(key, nonce, again));
    uint8_t ans[GIMPI_INTRO_SIZE];
    memcpy(ans, data, sizeof ans);
    gimpi_intro_seal_answer(key, again, ans);
    CHECK(gimpi_intro_answer_sealed(key, again, ans));
    CHECK(!gimpi_intro_answer_sealed(key, data, ans) || memcmp(again, data, sizeof ans) == 0);
}

/*  Reads until the listener closes (or 2 s pass); how many bytes came. */
static size_t s_drain(int fd, uint8_t *first, size_t firstlen)
{
    size_t got = 0;
    uint8_t buf[4096];
    for (;;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 2000) <= 0)
            return got;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            return got;
        for (ssize_t i = 0; i < n && got + (size_t)i < firstlen; i++)
            first[got + (size_t)i] = buf[i];
        got += (size_t)n;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t keybytes[GIMPI_KEY_SIZE] = "the fuzzer's key, not a secret.";
    gimpi_key_t key;
    memcpy(key.bytes, keybytes, sizeof key.bytes);
    if (size >= 1 + GIMPI_INTRO_SIZE)
        s_codec(&key, data + 1);
    if (size < 1)
        return 0;
    setenv("GIMPI_PROGRESS", "1", 1);
    setenv("GIMPI_HANDSHAKE_TIMEOUT", "0.2", 1);
    setenv("GIMPI_LOCAL_SOCKETS", "0", 1);
    char err[256];
    int port, lfd = gimpi_job_listen("127.0.0.1", &port, err, sizeof err);
    CHECK(lfd >= 0);
    impi_tables_t *t = gimpi_job_solo_tables(port, err, sizeof err);
    CHECK(t);
    gimpi_msg_t *m = gimpi_msg_new_local(t, 0, lfd, -1, 3000, err, sizeof err);
    impi_tables_destroy(&t);
    CHECK(m);
    gimpi_msg_set_tidbase(m, 0x1000);
    gimpi_msg_set_key(m, keybytes);
    gimpi_msg_set_verifier(m, s_verify, NULL);
    int mode = data[0];
    data++, size--;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(0x7f000001) };
    /* the harness's own connection: on a machine short of ephemeral ports (a loaded CI
       run) it may fail for a moment; then this input is not run, which is no finding */
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 50; tries++) {
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
            close(fd);
            fd = -1;
            usleep(1000);
        }
    }
    if (fd < 0) {
        gimpi_msg_destroy(&m);          /* closes lfd, which m owns */
        return 0;
    }
    uint8_t hello[GIMPI_INTRO_HELLO_SIZE];
    size_t h = size < sizeof hello ? size : sizeof hello;
    if (mode & 2)
        gimpi_intro_hello(hello);
    else
        memcpy(hello, data, h);
    (void)gimpi_write_all(fd, hello, mode & 2 ? sizeof hello : h);
    data += h, size -= h;
    uint8_t ch[GIMPI_INTRO_CHALLENGE_SIZE], intro[GIMPI_INTRO_SIZE];
    size_t n = size < sizeof intro ? size : sizeof intro;
    memcpy(intro, data, n);
    if ((mode & 1) && n == sizeof intro) {        /* sealed under the challenge */
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, 2000) > 0 && recv(fd, ch, sizeof ch, MSG_WAITALL) == (ssize_t)sizeof ch
            && gimpi_intro_head(ch) == GIMPI_INTRO_OK)
            gimpi_intro_seal(&key, ch + 8, intro);
    }
    (void)gimpi_write_all(fd, intro, n);
    (void)gimpi_write_all(fd, data + n, size - n);
    shutdown(fd, SHUT_WR);
    uint8_t first[GIMPI_INTRO_SIZE];
    s_drain(fd, first, sizeof first);
    close(fd);
    /* the context takes a task again after that, and ends cleanly */
    gimpi_msg_set_timeout(m, 3000);
    gimpi_msg_finalize(m, 3000);
    gimpi_msg_destroy(&m);
    return 0;
}
