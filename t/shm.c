/*  t/shm.c — the shared-memory path between tasks of one machine (libgimpi/net/gimpi_ring.c,
 *  msg_shm.c): the ring codec on its own (wrap-around, full and empty, doorbell flags,
 *  corrupt indices refused), the checks on a passed memory file (seals, size, header), the
 *  descriptor passing; then real jobs: messages of every size class through the rings,
 *  a job where one side says GIMPI_SHM=0 (the socket carries the bytes), a peer killed in
 *  the middle of a transfer into its ring and one killed while we write into a full ring
 *  (survivors get an error at once, and nothing is left mapped or open afterwards), and a
 *  peer that corrupts its ring's index (reported, not followed).
 */
#include "dp_harness.h"
#include "net/gimpi_ring.h"
#include "gtap.h"
#include "testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define TMO 30000
#define RSZ 4096

#define CHECK(cond, ...) do { if (!(cond)) return dp_fail(rank, __VA_ARGS__); } while (0)
#define CALL(expr) do { int rc_ = (expr); \
        CHECK(rc_ == 0, "%s: %s", #expr, gimpi_strerror(rc_)); } while (0)

/*  Mappings of ring memory files in this process. */
static int s_ring_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, "gimpi-ring") != NULL;
    if (f)
        fclose(f);
    return n;
}

/*  The first ring mapping's start address, or NULL. */
static void *s_ring_map(int which)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    void *at = NULL;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "gimpi-ring") && which-- == 0) {
            at = (void *)strtoul(line, NULL, 16);
            break;
        }
    if (f)
        fclose(f);
    return at;
}

/*  Entries of a directory. */
static int s_entries(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return n;
}

/*  Open descriptors of this process. */
static int s_fds(void)
{
    return s_entries("/proc/self/fd");
}

/* ------------------------------------------------------------------ the codec alone */

/*  Writes and reads through a wrapped ring: wrap-around, full, empty, flags. */
static void s_codec(void)
{
    static _Alignas(64) uint8_t mem[GIMPI_RING_HDR + RSZ];
    memset(mem, 0, sizeof mem);
    gimpi_ring_hdr_t *h = (gimpi_ring_hdr_t *)mem;
    ok(gimpi_ring_wrap(mem, RSZ, 0) == NULL, "memory without a ring header is refused");
    h->magic = GIMPI_RING_MAGIC;
    h->version = GIMPI_RING_VERSION;
    h->hdr = GIMPI_RING_HDR;
    h->size = RSZ;
    gimpi_ring_t *w = gimpi_ring_wrap(mem, RSZ, 0), *r = gimpi_ring_wrap(mem, RSZ, 1);
    ok(w && r, "a ring over our own memory");
    if (!w || !r)
        return;
    uint8_t src[3 * RSZ], dst[3 * RSZ];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 3);
    int bell = 0, good = 1;
    size_t in = 0, out = 0;
    for (int round = 0; round < 50 && good; round++) {   /* odd sizes: every wrap offset */
        size_t k = 1 + (size_t)round * 97 % 1500;
        struct iovec iv[2] = { { src + in % RSZ, k / 2 }, { src + in % RSZ + k / 2, k - k / 2 } };
        ssize_t n = gimpi_ring_writev(w, iv, 2, &bell);
        good &= n == (ssize_t)k;
        in += k;
        struct iovec ov = { dst, sizeof dst };
        n = gimpi_ring_readv(r, &ov, 1, &bell);
        good &= n == (ssize_t)k && memcmp(dst, src + out % RSZ, k) == 0;
        out += k;
    }
    ok(good && bell == 0, "50 writes and reads of odd sizes around the end, no bells");
    /* in place: the writer's room, the reader's contiguous bytes up to the end */
    const uint8_t *at = NULL;
    ok(gimpi_ring_room(w, RSZ) == RSZ && gimpi_ring_peek(r, &at) == 0,
       "an empty ring: all room, nothing to peek");
    size_t lead = RSZ - (size_t)(h->head % RSZ), k = lead + 40;
    struct iovec kv = { src, k };
    ok(gimpi_ring_writev(w, &kv, 1, &bell) == (ssize_t)k && gimpi_ring_room(w, RSZ) == (ssize_t)(RSZ - k),
       "a write across the end leaves the room it should");
    ok(gimpi_ring_peek(r, &at) == (ssize_t)lead && memcmp(at, src, lead) == 0,
       "peek sees the bytes up to the end of the data area, in place");
    gimpi_ring_consume(r, lead - 8, &bell);
    ok(gimpi_ring_peek(r, &at) == 8 && memcmp(at, src + lead - 8, 8) == 0,
       "a partial consume leaves the rest in place");
    gimpi_ring_consume(r, 8, &bell);
    ok(gimpi_ring_peek(r, &at) == 40 && at == mem + GIMPI_RING_HDR
           && memcmp(at, src + lead, 40) == 0, "then the part after the wrap, from the start");
    gimpi_ring_consume(r, 40, &bell);
    ok(gimpi_ring_avail(r) == 0 && gimpi_ring_room(w, RSZ) == RSZ && bell == 0,
       "consumed: empty again, all room");
    /* writing in place: room in one piece only */
    uint8_t *wat = NULL;
    ok(gimpi_ring_reserve(w, 100, &wat) == 1 && wat == mem + GIMPI_RING_HDR + h->head % RSZ,
       "reserve gives the room at the head");
    memcpy(wat, src, 100);
    ok(gimpi_ring_avail(r) == 0, "nothing is seen before the commit");
    gimpi_ring_commit(w, 100, &bell);
    ok(gimpi_ring_peek(r, &at) == 100 && memcmp(at, src, 100) == 0 && bell == 0,
       "the commit publishes it");
    gimpi_ring_consume(r, 100, &bell);
    size_t tail_room = RSZ - (size_t)(h->head % RSZ);
    ok(gimpi_ring_reserve(w, tail_room + 1, &wat) == 0 && gimpi_ring_reserve(w, RSZ + 1, &wat)
           == 0 && gimpi_ring_reserve(w, tail_room, &wat) == 1,
       "room that wraps around the end, or more than the ring, is not reserved");
    struct iovec big = { src, sizeof src };
    ok(gimpi_ring_writev(w, &big, 1, &bell) == RSZ, "a write of 3 sizes takes one size");
    ok(gimpi_ring_writev(w, &big, 1, &bell) == 0, "a full ring takes nothing");
    ok(gimpi_ring_arm_writer(w, 1) == 0, "a writer arming on a full ring sleeps");
    struct iovec half = { dst, RSZ / 2 };
    ok(gimpi_ring_readv(r, &half, 1, &bell) == RSZ / 2 && bell == 1 && h->wsleep == 0,
       "a read that makes room rings the sleeping writer once and clears its flag");
    bell = 0;
    ok(gimpi_ring_arm_writer(w, 1) == 1, "a writer arming with room does not sleep");
    gimpi_ring_arm_writer(w, 0);
    struct iovec rest = { dst, sizeof dst };
    ok(gimpi_ring_readv(r, &rest, 1, &bell) == RSZ / 2 && gimpi_ring_avail(r) == 0,
       "the rest is read; the ring is empty");
    ok(gimpi_ring_arm_reader(r, 1) == 0, "a reader arming on an empty ring sleeps");
    struct iovec one = { src, 1 };
    ok(gimpi_ring_writev(w, &one, 1, &bell) == 1 && bell == 1 && h->rsleep == 0,
       "a write rings the sleeping reader once and clears its flag");
    bell = 0;
    ok(gimpi_ring_arm_reader(r, 1) == 1, "a reader arming with bytes there does not sleep");
    gimpi_ring_arm_reader(r, 0);
    /* corrupt indices: reported (EPROTO), the state untouched, nothing copied */
    uint64_t head = h->head, tail = h->tail;
    h->head = tail + RSZ + 1;
    errno = 0;
    ok(gimpi_ring_readv(r, &rest, 1, &bell) == -1 && errno == EPROTO
           && gimpi_ring_avail(r) == SIZE_MAX, "a head too far ahead is reported");
    h->head = tail - 1;
    ok(gimpi_ring_readv(r, &rest, 1, &bell) == -1 && errno == EPROTO,
       "a head behind the tail is reported");
    errno = 0;
    ok(gimpi_ring_peek(r, &at) == -1 && errno == EPROTO, "and to a reader in place");
    h->head = head;
    ok(gimpi_ring_readv(r, &rest, 1, &bell) == 1, "the good head reads again");
    h->tail = h->head + 5;
    for (int i = 0; i < 3; i++)         /* fill what the writer knows of, then it must look */
        gimpi_ring_writev(w, &big, 1, &bell);
    errno = 0;
    ok(gimpi_ring_writev(w, &big, 1, &bell) == -1 && errno == EPROTO,
       "a tail ahead of the head is reported to the writer");
    h->tail = 0;
    ok(gimpi_ring_writev(w, &big, 1, &bell) == -1 && errno == EPROTO,
       "a tail moving backwards is reported to the writer");
    errno = 0;
    ok(gimpi_ring_room(w, RSZ) == -1 && errno == EPROTO, "and to a writer asking for room");
    uint8_t *wat2 = NULL;
    errno = 0;
    ok(gimpi_ring_reserve(w, RSZ, &wat2) == -1 && errno == EPROTO && wat2 == NULL,
       "and to a writer reserving room");
    gimpi_ring_destroy(&w);
    gimpi_ring_destroy(&r);
    ok(w == NULL && r == NULL, "destroy nulls the handles");
}

/*  Memory files: made, passed, checked. */
static void s_files(void)
{
    char err[200];
    int fds0 = s_fds();
    gimpi_ring_t *w = gimpi_ring_new(5000, err, sizeof err);
    ok(w && gimpi_ring_size(w) == 8192, "a new ring rounds 5000 up to 8192 bytes");
    if (!w)
        return;
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    ok(gimpi_ring_send_fd(sv[0], "ring", 4, gimpi_ring_fd(w)) == 0, "its memory file is sent");
    char rec[8] = { 0 };
    int fd = -1;
    ok(gimpi_ring_recv_fd(sv[1], rec, sizeof rec, &fd) == 4 && fd >= 0 && !strcmp(rec, "ring"),
       "the record and a descriptor come out");
    gimpi_ring_t *r = gimpi_ring_attach(fd, err, sizeof err);
    ok(r != NULL, "the consumer maps it (%s)", r ? "ok" : err);
    int bell = 0;
    struct iovec iv = { "abcdef", 6 };
    char buf[8] = { 0 };
    struct iovec ov = { buf, sizeof buf };
    ok(r && gimpi_ring_writev(w, &iv, 1, &bell) == 6 && gimpi_ring_readv(r, &ov, 1, &bell) == 6
           && !memcmp(buf, "abcdef", 6), "bytes cross between the two mappings");
    gimpi_ring_destroy(&r);
    gimpi_ring_destroy(&w);
    int plain = memfd_create("gimpi-ring-test", MFD_CLOEXEC);
    ftruncate(plain, GIMPI_RING_HDR + 8192);
    ok(gimpi_ring_attach(plain, err, sizeof err) == NULL && strstr(err, "not sealed"),
       "an unsealed memory file is refused: %s", err);
    int odd = memfd_create("gimpi-ring-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ftruncate(odd, GIMPI_RING_HDR + 5000);
    fcntl(odd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    ok(gimpi_ring_attach(odd, err, sizeof err) == NULL && strstr(err, "bad size"),
       "a size that is not a power of two is refused: %s", err);
    int zero = memfd_create("gimpi-ring-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ftruncate(zero, GIMPI_RING_HDR + 8192);
    fcntl(zero, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    ok(gimpi_ring_attach(zero, err, sizeof err) == NULL && strstr(err, "bad header"),
       "a file without a ring header is refused: %s", err);
    close(sv[0]);
    close(sv[1]);
    cmp_ok(s_fds(), "==", fds0, "every descriptor is closed again");
    cmp_ok(s_ring_maps(), "==", 0, "nothing stays mapped");
}

/* ------------------------------------------------------------------ jobs */

/*  A synchronous send: complete once a receive matched it. */
static int s_ssend(gimpi_msg_t *ctx, int tid, int tag, const void *buf, size_t len)
{
    gimpi_msg_req_t *q;
    gimpi_status_t st;
    int rc = gimpi_msg_isend(ctx, tid, tag, buf, len, GIMPI_MSG_SYNC, &q);
    return rc ? rc : gimpi_msg_wait(ctx, &q, &st);
}

/*  Messages of every size class both ways through the rings (arg: 1 = rank 0 refuses). */
static int s_sizes_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    int refuse = *(const int *)arg;
    if (refuse && rank == 0)
        setenv("GIMPI_SHM", "0", 1);
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    size_t sizes[] = { 0, 1, 8, 127, 128, 65535, 65536, 65537, 300000, 8u << 20 };
    uint8_t *buf = malloc(8u << 20), *in = malloc(8u << 20);
    CHECK(buf && in, "malloc");
    gimpi_status_t st;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        int maps = s_ring_maps();       /* (looked at once settled, while the peer still
                                           talks to us) */
        CHECK(i == 0 || maps == (refuse ? 0 : 2), "%d ring mappings (want %d)", maps, refuse ? 0 : 2);
        for (int dir = 0; dir < 2; dir++) {
            dp_fill(buf, sizes[i], (uint32_t)(i * 2 + dir));
            if (rank == dir) {
                CALL(s_ssend(ctx, peer, (int)i, buf, sizes[i]));
            } else {
                CALL(gimpi_msg_recv(ctx, peer, (int)i, in, 8u << 20, &st));
                CHECK(st.len == sizes[i] && dp_check(in, sizes[i], (uint32_t)(i * 2 + dir)) < 0,
                      "size %zu: got %zu, or bad bytes", sizes[i], st.len);
            }
        }
    }
    free(buf);
    free(in);
    return dp_close(&ctx) != 0;
}

/*  Both ranks flood each other with NFLOOD small messages of every size up to 300 bytes
 *  (standard sends: written straight into the ring while it has room and credit, queued
 *  once not), then take them with a wildcard tag: every one arrives, in order, intact.
 *  Run over the smallest ring, where packets often wrap around its end. */
#define NFLOOD 3000
static int s_flood_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    uint8_t buf[304], in[304];
    gimpi_status_t st;
    for (int i = 0; i < NFLOOD; i++) {
        size_t len = (size_t)(i * 37 % 301);
        dp_fill(buf, len, (uint32_t)(i + rank * NFLOOD));
        CALL(gimpi_msg_send(ctx, peer, i % 7, buf, len));
    }
    for (int i = 0; i < NFLOOD; i++) {
        size_t len = (size_t)(i * 37 % 301);
        CALL(gimpi_msg_recv(ctx, peer, GIMPI_ANY, in, sizeof in, &st));
        CHECK(st.tag == i % 7 && st.len == len
                  && dp_check(in, len, (uint32_t)(i + (1 - rank) * NFLOOD)) < 0,
              "message %d: tag %d, %zu bytes, or bad bytes", i, st.tag, st.len);
    }
    return dp_close(&ctx) != 0;
}

/*  Ping-pong of NPING small messages, most taken by the receiver straight from the ring:
 *  credit flows (the job's high-water mark is 20 packets), the bytes and the status are
 *  right; every 97th answer is longer than the buffer (EOVERFLOW, its length in the
 *  status, no byte past the buffer); every 50th time two messages come and the second is
 *  asked for first (the first waits, unexpected, for its own receive). */
#define NPING 2000
static int s_ping_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    uint8_t buf[128], in[128];
    gimpi_status_t st;
    for (int i = 0; i < NPING; i++) {
        size_t len = (size_t)(i % 65);
        int tag = i % 5, pair = i % 50 == 49, small = i % 97 == 96;
        if (rank == i % 2) {                   /* the sender of this round */
            dp_fill(buf, len, (uint32_t)i);
            CALL(gimpi_msg_send(ctx, peer, tag, buf, len));
            if (pair)
                CALL(gimpi_msg_send(ctx, peer, 9, buf, 3));
            continue;
        }
        if (pair) {
            CALL(gimpi_msg_recv(ctx, peer, 9, in, sizeof in, &st));
            CHECK(st.len == 3 && st.tag == 9, "round %d: the later message first: %zu", i,
                  st.len);
        }
        memset(in, 0xee, sizeof in);
        size_t room = small && len > 4 ? 4 : sizeof in;
        int rc = gimpi_msg_recv(ctx, peer, tag, in, room, &st);
        CHECK(rc == (room < len ? GIMPI_EOVERFLOW : 0), "round %d: rc %d", i, rc);
        CHECK(st.len == len && st.tag == tag && st.source == peer, "round %d: status %zu %d",
              i, st.len, st.tag);
        CHECK(dp_check(in, len < room ? len : room, (uint32_t)i) < 0 && in[room < len ? room
              : len] == 0xee, "round %d: bad bytes, or bytes past the buffer", i);
    }
    return dp_close(&ctx) != 0;
}

/*  Rank 1 streams 64 MiB to rank 0 and is killed once rank 0 receives; rank 2 stops
 *  reading (no progress thread, out of the library) until rank 0 has filled the ring to
 *  it and waits for a synchronous send, then is killed; rank 0 must get an error from
 *  each at once, and holds nothing of them afterwards.  arg: a pipe made before the fork
 *  (rank 0 tells rank 2 on it that it waits). */
static int s_killed_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    const int *pp = arg;
    if (rank == 2)
        setenv("GIMPI_PROGRESS", "0", 1);
    int fds0 = s_fds();
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int t0 = gimpi_msg_tid(ctx, 0), t1 = gimpi_msg_tid(ctx, 1), t2 = gimpi_msg_tid(ctx, 2);
    size_t big = 64u << 20;
    uint8_t *buf = malloc(big);
    CHECK(buf, "malloc");
    gimpi_status_t st;
    char b[8];
    if (rank == 1) {
        gimpi_msg_req_t *q;
        dp_fill(buf, big, 1);
        CALL(gimpi_msg_isend(ctx, t0, 1, buf, big, 0, &q));
        CALL(gimpi_msg_recv(ctx, t0, 2, b, sizeof b, &st));    /* "go": it is matched */
        raise(SIGKILL);
    }
    if (rank == 2) {
        CALL(gimpi_msg_recv(ctx, t0, 1, b, sizeof b, &st));
        struct pollfd p = { pp[0], POLLIN, 0 };
        CHECK(poll(&p, 1, TMO) == 1, "rank 0 never said it waits");
        raise(SIGKILL);                 /* rank 0 waits on our full ring */
    }
    gimpi_msg_req_t *q;
    CALL(gimpi_msg_irecv(ctx, t1, 1, buf, big, &q));
    CALL(gimpi_msg_send(ctx, t1, 2, "go", 3));
    int64_t t_start = tl_now_ms();
    int rc = gimpi_msg_wait(ctx, &q, &st);
    CHECK(rc == GIMPI_ESYSERR, "receive from the peer killed mid-transfer: %d", rc);
    CHECK(tl_now_ms() - t_start < 5000, "the error took %lld ms",
          (long long)(tl_now_ms() - t_start));
    CALL(gimpi_msg_send(ctx, t2, 1, "hold", 5));
    for (int k = 0; k < 40; k++)    /* 2.4 MB: the ring is full, the rest is buffered */
        CALL(gimpi_msg_send(ctx, t2, 2, buf, 60000));
    gimpi_msg_req_t *sq;
    CALL(gimpi_msg_isend(ctx, t2, 3, buf, 60000, GIMPI_MSG_SYNC, &sq));
    CHECK(write(pp[1], "w", 1) == 1, "pipe");
    t_start = tl_now_ms();
    rc = gimpi_msg_wait(ctx, &sq, &st);
    CHECK(rc == GIMPI_ESYSERR, "sync send to the peer killed with a full ring: %d", rc);
    CHECK(tl_now_ms() - t_start < 5000, "the error took %lld ms",
          (long long)(tl_now_ms() - t_start));
    dp_close(&ctx);
    free(buf);
    CHECK(s_ring_maps() == 0, "%d ring mappings left", s_ring_maps());
    CHECK(s_fds() == fds0 - 2, "%d descriptors open, %d before (with the two listeners)",
          s_fds(), fds0);
    return 0;
}

/*  Rank 1 corrupts the heads of both rings of the link (one is the ring rank 0 reads);
 *  rank 0's receive fails with the corruption named, rank 1's too (or it sees rank 0
 *  close the connection). */
static int s_corrupt_body(const impi_tables_t *t, int rank, int lfd, void *arg)
{
    (void)arg;
    gimpi_msg_t *ctx = dp_open(t, rank, lfd, TMO);
    if (!ctx)
        return 1;
    int peer = gimpi_msg_tid(ctx, 1 - rank);
    gimpi_status_t st;
    char b[8];
    if (rank == 0) {
        CALL(gimpi_msg_send(ctx, peer, 1, "go", 3));
        int64_t t_start = tl_now_ms();
        int rc = gimpi_msg_recv(ctx, peer, 2, b, sizeof b, &st);
        CHECK(rc == GIMPI_ESYSERR, "receive over the corrupt ring: %d", rc);
        CHECK(strstr(gimpi_msg_errmsg(ctx), "corrupt"), "error names the corruption: %s",
              gimpi_msg_errmsg(ctx));
        CHECK(tl_now_ms() - t_start < 5000, "the error took %lld ms",
              (long long)(tl_now_ms() - t_start));
    } else {
        CALL(gimpi_msg_recv(ctx, peer, 1, b, sizeof b, &st));
        for (int i = 0; i < 2; i++) {   /* both rings of the link: one is rank 0's input */
            gimpi_ring_hdr_t *h = s_ring_map(i);
            CHECK(h, "no ring mapping %d", i);
            __atomic_store_n(&h->head, h->head + (1ull << 40), __ATOMIC_RELEASE);
        }
        int rc = gimpi_msg_recv(ctx, peer, 2, b, sizeof b, &st);
        CHECK(rc == GIMPI_ESYSERR, "the peer that found us corrupt closes: %d", rc);
    }
    gimpi_msg_destroy(&ctx);
    return 0;
}

/*  Runs one job of n tasks; want[] are the expected exit codes. */
static void s_job(const char *name, int n, dp_body_t body, void *arg, const int *want)
{
    dp_opts_t o = { n, 65536, 10, 20, 60000, 0, 0, 0 };
    int codes[8];
    int64_t t0 = tl_now_ms();
    dp_run(&o, body, arg, codes);
    int good = 1;
    for (int i = 0; i < n; i++)
        good &= codes[i] == want[i];
    ok(good, "%s", name);
    if (!good)
        for (int i = 0; i < n; i++)
            diag("  task %d exit code %d, want %d", i, codes[i], want[i]);
    note("  %s took %lld ms", name, (long long)(tl_now_ms() - t0));
}


int main(void)
{
    plan(NO_PLAN);
    unsetenv("GIMPI_SHM");
    s_codec();
    s_files();
    int shm0 = s_entries("/dev/shm");
    int on = 0, off = 1;
    int fine[] = { 0, 0, 0 };
    s_job("sizes 0 .. 8 MiB both ways through the rings, synchronous", 2, s_sizes_body, &on,
          fine);
    s_job("one side with GIMPI_SHM=0: the socket carries the bytes", 2, s_sizes_body, &off,
          fine);
    s_job("ping-pong straight from the ring: credit, status, truncation, order", 2,
          s_ping_body, NULL, fine);
    setenv("GIMPI_SHM_RING", "4096", 1);
    s_job("a flood both ways over the smallest ring: all in order, intact", 2, s_flood_body,
          NULL, fine);
    unsetenv("GIMPI_SHM_RING");
    int killed[] = { 0, 128 + SIGKILL, 128 + SIGKILL };
    int pp[2];
    if (pipe(pp) < 0)
        BAIL_OUT("pipe");
    s_job("peers killed mid-transfer and with a full ring: errors at once, nothing left", 3,
          s_killed_body, pp, killed);
    close(pp[0]);
    close(pp[1]);
    s_job("a corrupt ring index is reported, not followed", 2, s_corrupt_body, NULL, fine);
    cmp_ok(s_entries("/dev/shm"), "==", shm0, "nothing was left in /dev/shm");
    done_testing();
}
