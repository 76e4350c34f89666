/*  dp_harness.c — the job harness of the data-plane tests (see dp_harness.h). */
#include "dp_harness.h"
#include "base/gimpi_bind.h"
#include "net/gimpi_host.h"
#include "net/msg_dynhost.h"
#include "task/gimpi_job.h"
#include "testlib.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*  The job on 127.0.0.1, 127.0.0.2, ... */
int dp_run(const dp_opts_t *o, dp_body_t body, void *arg, int *codes)
{
    return dp_run_at(o, 0x7f000001u, body, arg, codes);
}

/*  Builds the tables, forks the tasks, waits for them. */
int dp_run_at(const dp_opts_t *o, uint32_t base, dp_body_t body, void *arg, int *codes)
{
    int n = o->n;
    impi_tables_t t;
    memset(&t, 0, sizeof t);
    t.nclients = 1;
    t.myclient = 0;
    t.clients = calloc(1, sizeof *t.clients);
    t.nhosts = n;
    t.hosts = calloc((size_t)n, sizeof *t.hosts);
    int extra = o->host1_procs > 1 && n > 1 ? o->host1_procs - 1 : 0;
    t.nprocs = n + extra;
    t.procs = calloc((size_t)t.nprocs, sizeof *t.procs);
    t.pktlen = o->pktlen;
    t.tagub = 0x7fffffff;
    t.ackmark = o->ackmark;
    t.hiwater = o->hiwater;
    t.xsize = 1024;
    t.maxlinear = 4;
    int *lfd = calloc((size_t)n, sizeof *lfd), *llfd = calloc((size_t)n, sizeof *llfd);
    tl_child_t *kids = calloc((size_t)n, sizeof *kids);
    if (!t.clients || !t.hosts || !t.procs || !lfd || !llfd || !kids)
        abort();
    t.clients[0].nhosts = n;
    t.clients[0].nprocs = t.nprocs;
    t.clients[0].datalen = o->pktlen;
    for (int i = 0; i < n; i++) {
        char err[200];
        impi_addr16_from_ipv4(t.hosts[i].addr, base + (uint32_t)i);
        lfd[i] = gimpi_host_listen(t.hosts[i].addr, &t.hosts[i].port, err, sizeof err);
        if (lfd[i] < 0) {
            fprintf(stderr, "harness: %s\n", err);
            abort();
        }
        llfd[i] = o->tcp_only ? -1 : gimpi_host_listen_local(lfd[i]);   /* as gimpirun */
        t.hosts[i].nprocs = i == 1 ? 1 + extra : 1;
        t.hosts[i].ackmark = o->ackmark;
        t.hosts[i].hiwater = o->hiwater;
        t.hosts[i].first_proc = i <= 1 ? i : i + extra;
        for (int k = 0; k < t.hosts[i].nprocs; k++) {
            int p = t.hosts[i].first_proc + k;
            memcpy(t.procs[p].id.hostid, t.hosts[i].addr, 16);
            t.procs[p].id.pid = 1000 + p;
            t.procs[p].host = i;
        }
    }
    fflush(stdout);
    fflush(stderr);
    gimpi_bind_t *cores = gimpi_bind_new(n);    /* a core each, as gimpirun gives */
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            gimpi_bind_child(cores, i);
            for (int j = 0; j < n; j++)
                if (j != i) {
                    close(lfd[j]);
                    if (llfd[j] >= 0)
                        close(llfd[j]);
                }
            if (llfd[i] >= 0) {             /* handed over the way gimpirun does it */
                char v[16];
                snprintf(v, sizeof v, "%d", llfd[i]);
                setenv(GIMPI_ENV_LOCAL_LISTEN_FD, v, 1);
            }
            int null = o->keep_stdout ? -1 : open("/dev/null", O_WRONLY);
            if (null >= 0) {                /* stdout is the parent's TAP */
                dup2(null, 1);
                close(null);
            }
            int rc = body(&t, i, lfd[i], arg);
            exit(rc);           /* exit, not _exit: LeakSanitizer checks the task */
        }
        kids[i] = (tl_child_t){ .pid = pid, .out = -1, .err = -1 };
    }
    gimpi_bind_destroy(&cores);
    for (int i = 0; i < n; i++) {
        close(lfd[i]);
        if (llfd[i] >= 0)
            close(llfd[i]);
    }
    int64_t deadline = tl_now_ms() + o->timeout_ms;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int64_t left = deadline - tl_now_ms();
        int st = tl_wait(&kids[i], left > 0 ? (int)left : 1);
        int code = st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (codes)
            codes[i] = code;
        bad |= code != 0;
    }
    free(t.clients);
    free(t.hosts);
    free(t.procs);
    free(lfd);
    free(llfd);
    free(kids);
    return bad ? -1 : 0;
}

/*  The local listener dp_run made for this task (-1: none); taken once. */
int dp_local_fd(void)
{
    const char *v = getenv(GIMPI_ENV_LOCAL_LISTEN_FD);
    int fd = v && *v ? atoi(v) : -1;
    unsetenv(GIMPI_ENV_LOCAL_LISTEN_FD);
    return fd;
}

/*  The key of the tests' jobs: the same in every process of a test (forked or executed),
 *  so that their dynamic hosts can introduce themselves. */
const uint8_t *dp_key(void)
{
    static const uint8_t key[GIMPI_MSG_KEY_SIZE] = "gimpi test key, not a secret...";
    return key;
}

/*  Opens a context for a task (with the tests' key). */
gimpi_msg_t *dp_open(const impi_tables_t *t, int rank, int listen_fd, int timeout_ms)
{
    char err[256];
    gimpi_msg_t *ctx = gimpi_msg_new_local(t, rank, listen_fd, dp_local_fd(), timeout_ms, err,
                                           sizeof err);
    if (!ctx) {
        fprintf(stderr, "rank %d: gimpi_msg_new: %s\n", rank, err);
        return NULL;
    }
    gimpi_msg_set_timeout(ctx, timeout_ms);
    gimpi_msg_set_key(ctx, dp_key());
    return ctx;
}

/*  Finalizes and destroys. */
int dp_close(gimpi_msg_t **ctx)
{
    int rc = gimpi_msg_finalize(*ctx, 20000);
    if (rc)
        fprintf(stderr, "finalize: %s (%s)\n", gimpi_strerror(rc), gimpi_msg_errmsg(*ctx));
    gimpi_msg_destroy(ctx);
    return rc;
}

/*  Pattern byte at an offset. */
static uint8_t s_pat(size_t off, uint32_t seed)
{
    uint32_t x = (uint32_t)off * 2654435761u + seed * 40503u;
    return (uint8_t)(x >> 13 ^ x >> 24 ^ (off >> 12));
}

/*  Fills a buffer with the pattern of seed. */
void dp_fill(uint8_t *buf, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = s_pat(i, seed);
}

/*  First offset where buf departs from the pattern of seed, or -1. */
long dp_check(const uint8_t *buf, size_t len, uint32_t seed)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != s_pat(i, seed))
            return (long)i;
    return -1;
}

/*  Reports a failure inside a task on stderr; returns 1 (the task's exit code). */
int dp_fail(int rank, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "# rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

/*  A caller's HELLO (with version) on fd and the callee's CHALLENGE: its status (nonce
 *  filled), or -1 when the callee closed or sent garbage within timeout_ms. */
int dp_intro_hello(int fd, uint32_t version, uint8_t nonce[GIMPI_INTRO_NONCE], int timeout_ms)
{
    uint8_t h[GIMPI_INTRO_HELLO_SIZE], ch[GIMPI_INTRO_CHALLENGE_SIZE];
    gimpi_intro_hello(h);
    gimpi_be_put32(h + 4, version);
    if (tl_send_all(fd, h, sizeof h) < 0
        || tl_recv_exact(fd, ch, sizeof ch, timeout_ms) != (long)sizeof ch)
        return -1;
    memcpy(nonce, ch + 8, GIMPI_INTRO_NONCE);
    int64_t st = gimpi_intro_head(ch);
    return st < 0 ? -1 : (int)st;
}

/*  Encodes in as an INTRO into out, sealed with key (32 bytes; NULL: the MAC as in `in`)
 *  under challenge nonce, and sends it on fd.  0 or -1. */
int dp_intro_send(int fd, const gimpi_intro_t *in, const uint8_t *key,
                  const uint8_t nonce[GIMPI_INTRO_NONCE], uint8_t out[GIMPI_INTRO_SIZE])
{
    gimpi_intro_encode(out, in);
    if (key) {
        gimpi_key_t k;
        memcpy(k.bytes, key, sizeof k.bytes);
        gimpi_intro_seal(&k, nonce, out);
    }
    return tl_send_all(fd, out, GIMPI_INTRO_SIZE);
}

/*  Reads the callee's ANSWER on fd: its status (*ans filled, raw bytes in raw when not
 *  NULL), or -1 when the callee closed first. */
int dp_intro_answer(int fd, gimpi_intro_t *ans, uint8_t *raw, int timeout_ms)
{
    uint8_t b[GIMPI_INTRO_SIZE];
    if (tl_recv_exact(fd, b, sizeof b, timeout_ms) != (long)sizeof b
        || gimpi_intro_decode(b, ans) < 0)
        return -1;
    if (raw)
        memcpy(raw, b, sizeof b);
    return (int)ans->word;
}
