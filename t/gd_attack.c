/*  t/gd_attack.c — the real tasks and the strangers of t/groupd_auth.sh, one per command,
 *  each printing one result line that the script checks:
 *    member EP GROUP N       registers, joins GROUP, waits in a barrier of N: "member ok"
 *    stranger EP             tries JOIN, LOOKUP, GETTID, GSIZE (its subscription) and STAT
 *                            with whatever key it has; "stranger refused N of 5 in MS ms"
 *                            when each failed with PvmSysErr (STAT: refused or unanswered)
 *    nullmech EP             a raw DEALER without CURVE sends a PING: "nullmech unanswered"
 *    hijack EP               a spawner reserves 3 tids; a stranger of the same key registers
 *                            one without the token (Denied), then the child with it:
 *                            "hijack refused, child ok"
 *    exhaust EP N            one connection asks N RESERVEs of a million tids; then another
 *                            reserves a job's 4: "exhaust ok K refused R job BASE"
 *    bigframe EP MIB         sends one frame of MIB MiB: "bigframe sent"
 *    groups EP NG            a real task in NG groups of 4000-byte names (STAT replies of
 *                            some MB), held until stdin closes: "groups ok NG"
 *    unread EP N             sends N STATs and never reads; holds the connection until
 *                            stdin closes: "unread sent N" after the last send
 *    subs EP N LEN           a SUB connection sends N subscriptions of LEN bytes and holds
 *                            them until stdin closes: "subs sent N"
 *    flood EP N              N connections that send a ZMTP greeting and stall, held until
 *                            stdin closes: "flood opened N"
 *  The key comes as for any client (GIMPI_KEY_FILE ...).  Exit 0 when the line was printed.
 */
#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "gimpi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

/*  Monotonic milliseconds. */
static long long s_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*  A real task: join and barrier. */
static int s_member(const char *ep, const char *group, int n)
{
    gimpi_groups_t *g = gimpi_groups_new(ep, NULL);
    int inst = g ? gimpi_group_join(g, group) : -1;
    int rc = inst >= 0 ? gimpi_group_barrier(g, group, n) : inst;
    if (rc == 0)
        printf("member ok inst %d\n", inst);
    else
        printf("member failed %d %d\n", inst, rc);
    gimpi_groups_destroy(&g);
    return rc == 0 ? 0 : 1;
}

/*  A stranger: every call must fail. */
static int s_stranger(const char *ep)
{
    long long t0 = s_ms();
    int refused = 0, rc;
    gimpi_groups_t *g = gimpi_groups_new(ep, NULL);
    refused += (rc = gimpi_group_join(g, "victims")) == GIMPI_ESYSERR;
    gimpi_groups_destroy(&g);
    g = gimpi_groups_new(ep, NULL);
    gimpi_task_info_t info;
    refused += gimpi_group_lookup(g, 0x40001, &info) == GIMPI_ESYSERR;
    gimpi_groups_destroy(&g);
    g = gimpi_groups_new(ep, NULL);
    refused += gimpi_group_gettid(g, "victims", 0) == GIMPI_ESYSERR;
    gimpi_groups_destroy(&g);
    g = gimpi_groups_new(ep, NULL);
    refused += gimpi_group_gsize(g, "victims") == GIMPI_ESYSERR;
    gimpi_groups_destroy(&g);
    void *zctx = zmq_ctx_new(), *mon = NULL;
    char err[GD_SOCK_ERRLEN], desc[300];
    void *s = gd_sock_tool_new(zctx, ep, &mon, desc, sizeof desc, err, sizeof err);
    if (!s)
        refused++;              /* not even a key to try with */
    else {
        uint8_t hdr[GD_HDR_SIZE];
        gd_header_encode(hdr, GD_STAT, 1);
        gd_frame_t req[2] = { { hdr, sizeof hdr }, { (const uint8_t *)"", 0 } };
        gd_send_frames(s, NULL, 0, req, 2, ZMQ_DONTWAIT);
        refused += gd_sock_tool_wait(s, mon, 3000, *desc != 0, err, sizeof err) <= 0;
        gd_sock_destroy(&s, &mon);
    }
    zmq_ctx_term(zctx);
    printf("stranger refused %d of 5 in %lld ms\n", refused, s_ms() - t0);
    return 0;
}

/*  A client without CURVE: its PING is never answered. */
static int s_nullmech(const char *ep)
{
    void *zctx = zmq_ctx_new();
    void *s = zmq_socket(zctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_connect(s, ep);
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_PING, 1);
    zmq_send(s, hdr, sizeof hdr, ZMQ_DONTWAIT);
    zmq_pollitem_t it = { s, 0, ZMQ_POLLIN, 0 };
    int n = zmq_poll(&it, 1, 1500);
    printf(n == 0 ? "nullmech unanswered\n" : "nullmech answered\n");
    zmq_close(s);
    zmq_ctx_term(zctx);
    return 0;
}

/*  A tid hijack: a registration without the block's token. */
static int s_hijack(const char *ep)
{
    char tok[GIMPI_GROUPS_TOKEN_LEN + 1];
    gimpi_groups_t *spawner = gimpi_groups_new(ep, NULL);
    int base = gimpi_groups_reserve_token(spawner, "", 3, tok);
    gimpi_groups_t *thief = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid(thief, base + 1);
    int stolen = gimpi_group_mytid(thief);
    gimpi_groups_t *child = gimpi_groups_new(ep, NULL);
    gimpi_groups_set_tid_token(child, base + 1, tok);
    int mine = gimpi_group_mytid(child);
    printf(stolen == GIMPI_EDENIED && mine == base + 1 ? "hijack refused, child ok\n"
                                                       : "hijack %d child %d\n", stolen, mine);
    gimpi_groups_destroy(&thief);
    gimpi_groups_destroy(&child);
    gimpi_groups_destroy(&spawner);
    return 0;
}

/*  Tid-space exhaustion from one connection, then a real job's RESERVE. */
static int s_exhaust(const char *ep, int n)
{
    gimpi_groups_t *a = gimpi_groups_new(ep, NULL);
    int ok = 0, refused = 0;
    for (int k = 0; k < n; k++) {
        int rc = gimpi_groups_reserve(a, "", GIMPI_GROUPS_MAX_RESERVE);
        if (rc >= 0)
            ok++;
        else if (rc == GIMPI_EOUTOFRES)
            refused++;
    }
    gimpi_groups_t *job = gimpi_groups_new(ep, NULL);
    int base = gimpi_groups_reserve(job, "a-real-job", 4);
    printf("exhaust ok %d refused %d job %d\n", ok, refused, base);
    gimpi_groups_destroy(&job);
    gimpi_groups_destroy(&a);
    return 0;
}

/*  One oversized frame. */
static int s_bigframe(const char *ep, int mib)
{
    void *zctx = zmq_ctx_new(), *mon = NULL;
    char err[GD_SOCK_ERRLEN];
    void *s = gd_sock_tool_new(zctx, ep, &mon, NULL, 0, err, sizeof err);
    size_t len = (size_t)mib << 20;
    void *big = calloc(1, len);     /* zero pages: costs this process little */
    zmq_msg_t m;
    if (!s || !big || zmq_msg_init_data(&m, big, len, NULL, NULL) < 0)
        return 1;
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_JOIN, 1);
    zmq_send(s, hdr, sizeof hdr, ZMQ_SNDMORE);
    zmq_msg_send(&m, s, 0);
    /* the frame is gone once groupd has read enough to drop the connection */
    gd_sock_tool_wait(s, mon, 3000, true, err, sizeof err);
    printf("bigframe sent\n");
    gd_sock_destroy(&s, &mon);
    zmq_ctx_term(zctx);
    free(big);
    return 0;
}

/*  A task in many groups with long names, held until stdin closes. */
static int s_groups(const char *ep, int ng)
{
    gimpi_groups_t *g = gimpi_groups_new(ep, NULL);
    char name[4001];
    int joined = 0;
    for (int k = 0; g && k < ng; k++) {
        memset(name, 'a' + k % 26, sizeof name - 1);
        snprintf(name, 16, "g%06d", k);
        name[strlen(name)] = 'x';
        name[sizeof name - 1] = 0;
        joined += gimpi_group_join(g, name) >= 0;
    }
    printf("groups ok %d\n", joined);
    fflush(stdout);
    char line[16];
    while (fgets(line, sizeof line, stdin))
        ;
    gimpi_groups_destroy(&g);
    return 0;
}

/*  STATs never read. */
static int s_unread(const char *ep, int n)
{
    void *zctx = zmq_ctx_new();
    char err[GD_SOCK_ERRLEN];
    void *s = gd_sock_tool_new(zctx, ep, NULL, NULL, 0, err, sizeof err);
    if (!s)
        return 1;
    int rcvbuf = 4096;
    zmq_setsockopt(s, ZMQ_RCVBUF, &rcvbuf, sizeof rcvbuf);
    uint8_t hdr[GD_HDR_SIZE];
    int sent = 0;
    for (int k = 0; k < n; k++) {
        gd_header_encode(hdr, GD_STAT, (uint32_t)k + 1);
        gd_frame_t req[2] = { { hdr, sizeof hdr }, { (const uint8_t *)"", 0 } };
        sent += gd_send_frames(s, NULL, 0, req, 2, 0) == 0;
    }
    printf("unread sent %d\n", sent);
    fflush(stdout);
    char line[16];
    while (fgets(line, sizeof line, stdin))
        ;
    gd_sock_destroy(&s, NULL);
    zmq_ctx_term(zctx);
    return 0;
}

/*  A key holder's SUB connection that sends N subscriptions of LEN bytes, each one a
 *  different topic from its second byte on, then holds the connection until stdin
 *  closes (its subscriptions end with it). */
static int s_subs(const char *ep, int n, int len)
{
    void *zctx = zmq_ctx_new();
    char err[GD_SOCK_ERRLEN], pub[GD_MAX_ENDPOINT + 1] = "";
    void *s = gd_sock_tool_new(zctx, ep, NULL, NULL, 0, err, sizeof err);
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_HELLO, 1);
    gd_frame_t req[1] = { { hdr, sizeof hdr } };
    gd_multipart_t mp;
    if (!s || gd_send_frames(s, NULL, 0, req, 1, 0) < 0 || gd_multipart_recv(s, &mp, 0) < 0)
        return 1;
    if (mp.nparts >= 4 && mp.frames[3].len < sizeof pub)
        memcpy(pub, mp.frames[3].data, mp.frames[3].len);
    gd_multipart_close(&mp);
    gimpi_key_t key;
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_TASK_SUB, pub);
    o.sndhwm = 0;                       /* every subscription goes out */
    void *sub = NULL;
    if (gd_sock_client_key(&key, NULL, 0, err, sizeof err) == 0
        && gd_sock_secure(&o, &key, err, sizeof err) == 0)
        sub = gd_sock_new(zctx, &o, NULL, err, sizeof err);
    char *topic = malloc((size_t)len + 1);
    int sent = 0;
    for (int k = 0; sub && topic && k < n; k++) {
        memset(topic, 'x', (size_t)len);
        topic[0] = 'G';
        snprintf(topic + 1, 16, "%09d", k);
        topic[10] = 'x';
        sent += gd_sock_subscribe(sub, topic, (size_t)len) == 0;
    }
    free(topic);
    printf("subs sent %d\n", sent);
    fflush(stdout);
    char line[16];
    while (fgets(line, sizeof line, stdin))
        ;
    gd_sock_destroy(&sub, NULL);
    gd_sock_destroy(&s, NULL);
    zmq_ctx_term(zctx);
    return 0;
}

/*  N TCP connections to EP's port that send a ZMTP greeting for CURVE and nothing more
 *  (a stranger cannot make a HELLO), held until stdin closes or groupd closes them; the
 *  connects are non-blocking, so the flood is as fast as the machine.  "flood opened N"
 *  once every connect was made and every greeting sent (or refused). */
static int s_flood(const char *ep, int n)
{
    const char *colon = strrchr(ep, ':');
    struct sockaddr_in sa = { .sin_family = AF_INET };
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rlim_t)n + 64 > rl.rlim_cur)
        n = (int)rl.rlim_cur - 64;
    if (!colon || strncmp(ep, "tcp://", 6) || n <= 0)
        return 1;
    char host[64];
    snprintf(host, sizeof host, "%.*s", (int)(colon - ep - 6), ep + 6);
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return 1;
    static const uint8_t greeting[64] = { 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 0,
                                          'C', 'U', 'R', 'V', 'E' };
    int *fds = calloc((size_t)n, sizeof *fds), made = 0;
    for (int k = 0; fds && k < n; k++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            break;
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
            close(fd);
            continue;
        }
        fds[made++] = fd;
    }
    for (int k = 0; k < made; k++) {
        struct pollfd p = { .fd = fds[k], .events = POLLOUT };
        if (poll(&p, 1, 2000) == 1 && (p.revents & POLLOUT))
            (void)!write(fds[k], greeting, sizeof greeting);
    }
    printf("flood opened %d\n", made);
    fflush(stdout);
    char line[16];
    while (fgets(line, sizeof line, stdin))
        ;
    for (int k = 0; k < made; k++)
        close(fds[k]);
    free(fds);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 5 && !strcmp(argv[1], "member"))
        return s_member(argv[2], argv[3], atoi(argv[4]));
    if (argc >= 3 && !strcmp(argv[1], "stranger"))
        return s_stranger(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "nullmech"))
        return s_nullmech(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "hijack"))
        return s_hijack(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "exhaust"))
        return s_exhaust(argv[2], atoi(argv[3]));
    if (argc >= 4 && !strcmp(argv[1], "bigframe"))
        return s_bigframe(argv[2], atoi(argv[3]));
    if (argc >= 4 && !strcmp(argv[1], "groups"))
        return s_groups(argv[2], atoi(argv[3]));
    if (argc >= 4 && !strcmp(argv[1], "flood"))
        return s_flood(argv[2], atoi(argv[3]));
    if (argc >= 5 && !strcmp(argv[1], "subs"))
        return s_subs(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc >= 4 && !strcmp(argv[1], "unread"))
        return s_unread(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: gd_attack member|stranger|nullmech|hijack|exhaust|bigframe|unread|subs|flood EP ...\n");
    return 2;
}
