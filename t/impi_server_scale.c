/*  t/impi_server_scale.c — the real impi-server under load and under awkward clients:
 *  32 clients joining in random order and running the full startup (all 14 labels,
 *  random send and receive order per label) to FINI with exit 0; a client that sends
 *  every byte separately while the others proceed; 10,000 per-proc entries per client
 *  with three clients, one of which reads nothing until the others have both per-proc
 *  replies (so output is queued per connection and nobody stalls).  Replies are checked
 *  byte for byte against the concatenation of what the clients sent.
 */
#include "gtap.h"
#include "srvtest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int n;                      /* clients */
    int nprocs;                 /* procs per client (1 host each) */
    int bytewise;               /* rank sending byte by byte, -1 none */
    int slow_reader;            /* rank reading per-proc replies late, -1 none */
} job_t;

/*  Client c's contribution for the label at table row `row` (malloc'd, length in *len). */
static uint8_t *contribution(const job_t *job, int c, const impi_label_info_t *info, size_t *len)
{
    size_t n = info->scope == IMPI_SCOPE_PROC ? (size_t)job->nprocs : 1;
    *len = n * info->elem_size;
    uint8_t *b = calloc(1, *len);
    for (size_t i = 0; i < n; i++) {
        uint8_t *e = b + i * info->elem_size;
        int64_t v = (info->min > 0 ? info->min : 1) + c + (int64_t)i;
        if (info->value == IMPI_C_NHOSTS)
            v = 1;
        else if (info->value == IMPI_C_NPROCS || info->value == IMPI_H_NPROCS)
            v = job->nprocs;
        switch (info->type) {
        case IMPI_ELEM_VERSION: break;                     /* {0,0} */
        case IMPI_ELEM_ADDR16: impi_addr16_from_ipv4(e, 0x0a000000u + (uint32_t)(c << 16) + (uint32_t)i); break;
        case IMPI_ELEM_INT8: gimpi_be_put64(e, (uint64_t)(100000 * c + (int64_t)i)); break;
        default: gimpi_be_put32(e, (uint32_t)v); break;
        }
    }
    return b;
}

/*  A random permutation of 0..n-1. */
static void shuffle(int *order, int n)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = rand() % (i + 1);
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/*  Sends a whole frame, byte by byte when `bytewise`. */
static int send_frame(int fd, const uint8_t *frame, size_t len, int bytewise)
{
    if (!bytewise)
        return tl_send_all(fd, frame, len);
    for (size_t i = 0; i < len; i++)
        if (tl_send_all(fd, frame + i, 1) < 0)
            return -1;
    return 0;
}

/*  Sends a command, byte by byte when `bytewise`. */
static int send_cmd(int fd, int32_t cmd, const uint8_t *payload, uint32_t len, int bytewise)
{
    uint8_t *frame = malloc(8 + (size_t)len);
    impi_cmd_encode(frame, cmd, len);
    if (len)
        memcpy(frame + 8, payload, len);
    int rc = send_frame(fd, frame, 8 + (size_t)len, bytewise);
    free(frame);
    return rc;
}

/*  Receives a COLL reply and compares it with the expected payload. */
static int check_reply(int fd, const uint8_t *want, size_t len)
{
    impi_cmd_t cmd;
    uint8_t *p;
    if (st_recv_cmd(fd, &cmd, &p) < 0)
        return 0;
    int same = cmd.cmd == IMPI_CMD_COLL && cmd.len == len && memcmp(p, want, len) == 0;
    free(p);
    return same;
}

/*  One run of a job: the job, its name in the points, the clients' sockets. */
typedef struct {
    const job_t *job;
    const char *name;
    int n, bw;
    int fd[IMPI_MAX_CLIENTS];
    int order[IMPI_MAX_CLIENTS];
} run_t;

/*  AUTH and IMPI of every client in random order, the byte-wise one (if any) stuck
 *  half-way through its AUTH meanwhile; the IMPI reply to all. */
static void s_startup(run_t *r, st_server_t *srv)
{
    int n = r->n, bw = r->bw;
    uint8_t auth[12], join[12];
    impi_cmd_encode(auth, IMPI_CMD_AUTH, 4);
    gimpi_be_put32(auth + 8, 1u << IMPI_AUTH_NONE);
    static const uint8_t none_reply[8] = { 0 };
    if (bw >= 0) {
        r->fd[bw] = st_connect(srv);
        send_frame(r->fd[bw], auth, 5, 1);
    }
    shuffle(r->order, n);
    int authed = 0;
    for (int k = 0; k < n; k++) {
        int c = r->order[k];
        if (c == bw)
            continue;
        r->fd[c] = st_connect(srv);
        tl_send_all(r->fd[c], auth, sizeof auth);
        authed += st_recv_bytes(r->fd[c], none_reply, 8);
        impi_cmd_encode(join, IMPI_CMD_IMPI, 4);
        gimpi_be_put32(join + 8, (uint32_t)c);
        tl_send_all(r->fd[c], join, sizeof join);
    }
    cmp_ok(authed, "==", bw >= 0 ? n - 1 : n, "%s: clients authenticated in random order%s",
           r->name, bw >= 0 ? " while one is stuck mid-frame" : "");
    if (bw >= 0) {
        send_frame(r->fd[bw], auth + 5, sizeof auth - 5, 1);
        ok(st_recv_bytes(r->fd[bw], none_reply, 8), "%s: byte-wise client authenticated",
           r->name);
        impi_cmd_encode(join, IMPI_CMD_IMPI, 4);
        gimpi_be_put32(join + 8, (uint32_t)bw);
        send_frame(r->fd[bw], join, sizeof join, 1);
    }
    int impi = 0;
    for (int c = 0; c < n; c++)
        impi += st_recv_impi(r->fd[c]) == n;
    cmp_ok(impi, "==", n, "%s: IMPI reply %d to all", r->name, n);
}

/*  The label at table row `row`: every client sends its part in random order, and the
 *  replies are read in random order (the slow reader's per-proc ones later).  1 when
 *  every reply read was the concatenation, byte for byte. */
static int s_label(run_t *r, int row)
{
    const job_t *job = r->job;
    int n = r->n;
    const impi_label_info_t *info = impi_label_at(row);
    uint8_t *data[IMPI_MAX_CLIENTS];
    size_t len[IMPI_MAX_CLIENTS], total = 0;
    for (int c = 0; c < n; c++) {
        data[c] = contribution(job, c, info, &len[c]);
        total += len[c];
    }
    uint8_t *want = malloc(8 + total);
    gimpi_be_put32(want, (uint32_t)info->value);
    gimpi_be_put32(want + 4, n == 32 ? 0xffffffffu : (1u << n) - 1);
    size_t off = 8;
    for (int c = 0; c < n; c++) {
        memcpy(want + off, data[c], len[c]);
        off += len[c];
    }
    shuffle(r->order, n);
    for (int k = 0; k < n; k++) {
        int c = r->order[k];
        uint8_t *payload = malloc(4 + len[c]);
        gimpi_be_put32(payload, (uint32_t)info->value);
        memcpy(payload + 4, data[c], len[c]);
        send_cmd(r->fd[c], IMPI_CMD_COLL, payload, (uint32_t)(4 + len[c]), c == r->bw);
        free(payload);
    }
    int good = 0;
    bool late = info->scope == IMPI_SCOPE_PROC && job->slow_reader >= 0;
    shuffle(r->order, n);
    for (int k = 0; k < n; k++) {
        int c = r->order[k];
        if (late && c == job->slow_reader)
            continue;
        good += check_reply(r->fd[c], want, 8 + total);
    }
    if (late && info->value == IMPI_P_PID) {
        /* the slow reader now takes both per-proc replies, queued for it meanwhile */
        pass("%s: others got the per-proc replies while client %d read nothing", r->name,
             job->slow_reader);
        good += 1;
    }
    free(want);
    for (int c = 0; c < n; c++)
        free(data[c]);
    if (good == (late && info->value != IMPI_P_PID ? n - 1 : n))
        return 1;
    diag("%s: label %s: %d good replies", r->name, info->name, good);
    return 0;
}

/*  The slow reader's two per-proc replies, in ascending label order, intact. */
static void s_slow_reader(run_t *r)
{
    const job_t *job = r->job;
    int n = r->n, good = 0;
    for (int row = 0; row < IMPI_LABEL_COUNT; row++) {
        const impi_label_info_t *info = impi_label_at(row);
        if (info->scope != IMPI_SCOPE_PROC)
            continue;
        size_t total = 0, len;
        uint8_t *want = malloc(8 + (size_t)n * job->nprocs * info->elem_size);
        gimpi_be_put32(want, (uint32_t)info->value);
        gimpi_be_put32(want + 4, (1u << n) - 1);
        for (int c = 0; c < n; c++) {
            uint8_t *d = contribution(job, c, info, &len);
            memcpy(want + 8 + total, d, len);
            total += len;
            free(d);
        }
        good += check_reply(r->fd[job->slow_reader], want, 8 + total);
        free(want);
    }
    cmp_ok(good, "==", 2, "%s: the slow reader gets both per-proc replies intact", r->name);
}

/*  DONE to all, then FINI: every client closed. */
static void s_finish(run_t *r)
{
    int n = r->n;
    shuffle(r->order, n);
    for (int k = 0; k < n; k++)
        send_cmd(r->fd[r->order[k]], IMPI_CMD_DONE, NULL, 0, r->order[k] == r->bw);
    int done = 0;
    for (int c = 0; c < n; c++)
        done += st_recv_done(r->fd[c]) == 0;
    cmp_ok(done, "==", n, "%s: DONE to all", r->name);
    shuffle(r->order, n);
    int closed = 0;
    for (int k = 0; k < n; k++) {
        int c = r->order[k];
        send_cmd(r->fd[c], IMPI_CMD_FINI, NULL, 0, c == r->bw);
        closed += tl_wait_closed(r->fd[c], ST_TIMEOUT_MS);
        close(r->fd[c]);
    }
    cmp_ok(closed, "==", n, "%s: every client closed after FINI", r->name);
}

/*  A whole job (startup, every label, the end) against a fresh impi-server; returns the
 *  server's exit status (or -1), reports details as TAP. */
static int run_job(const job_t *job, const char *name)
{
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", job->n);
    st_server_t srv;
    if (st_start(&srv, "-server", nbuf, "-auth", "none", (char *)NULL) < 0)
        BAIL_OUT("cannot start impi-server");
    run_t r = { .job = job, .name = name, .n = job->n, .bw = job->bytewise };
    s_startup(&r, &srv);
    int labels_ok = 0;
    for (int row = 0; row < IMPI_LABEL_COUNT; row++)
        labels_ok += s_label(&r, row);
    cmp_ok(labels_ok, "==", IMPI_LABEL_COUNT, "%s: all %d labels answered byte for byte", name,
           IMPI_LABEL_COUNT);
    if (job->slow_reader >= 0)
        s_slow_reader(&r);
    s_finish(&r);
    return st_finish(&srv);
}

int main(void)
{
    plan(NO_PLAN);
    unsigned seed = (unsigned)getpid();
    note("random seed %u", seed);
    srand(seed);

    job_t many = { .n = 32, .nprocs = 2, .bytewise = -1, .slow_reader = -1 };
    cmp_ok(run_job(&many, "32 clients"), "==", 0, "32 clients: server exits 0");

    job_t bytes = { .n = 3, .nprocs = 3, .bytewise = 1, .slow_reader = -1 };
    cmp_ok(run_job(&bytes, "byte-wise"), "==", 0, "byte-wise client: server exits 0");

    job_t big = { .n = 3, .nprocs = 10000, .bytewise = -1, .slow_reader = 1 };
    cmp_ok(run_job(&big, "10000 procs"), "==", 0, "10,000 procs per client: server exits 0");
    done_testing();
}
