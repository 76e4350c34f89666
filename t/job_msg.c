/*  t/job_msg.c — a messaging task for the launcher tests: joins its job with gimpi_init
 *  (so the tables from gimpirun, the dance and the data plane are all real), then does
 *  what argv[1] says and leaves with gimpi_finalize (IMPI's world barrier and PK_FINI):
 *    ring SIZE       send SIZE checked bytes to the next rank, receive from the previous
 *    alltoall SIZE   send SIZE bytes to every other rank before receiving any
 *    die R           rank R exits at once (status 3); the others receive from it and
 *                    must get an error, not hang: they print "rank X saw error N"
 *    pvmjunk         (rank 1, beside t/pvm_job junk as rank 0) sends hand-made messages
 *                    on the PVM contexts: a truncated header, then two valid ones
 *  Every task prints "rank X of N: <mode> ok" on success and exits 0; 1 on a failure.
 */
#include "gimpi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*  Pattern byte i of the message from `from` to `to`. */
static uint8_t s_byte(int from, int to, size_t i)
{
    return (uint8_t)(from * 31 + to * 7 + i * 13 + (i >> 12));
}

/*  Fills or checks a buffer; check returns the first bad offset or -1. */
static void s_fill(uint8_t *b, size_t n, int from, int to)
{
    for (size_t i = 0; i < n; i++)
        b[i] = s_byte(from, to, i);
}
static long s_check(const uint8_t *b, size_t n, int from, int to)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != s_byte(from, to, i))
            return (long)i;
    return -1;
}

int main(int argc, char **argv)
{
    char err[512];
    gimpi_t *g = gimpi_init(err, sizeof err);
    if (!g) {
        fprintf(stderr, "job_msg: %s\n", err);
        return 1;
    }
    gimpi_msg_t *m = gimpi_msg(g);
    int me = gimpi_rank(g), n = gimpi_size(g);
    const char *mode = argc > 1 ? argv[1] : "ring";
    size_t size = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;
    int bad = 0;
    if (!strcmp(mode, "die")) {
        int victim = argc > 2 ? atoi(argv[2]) : 0;
        if (me == victim)
            _exit(3);
        char c;
        gimpi_status_t st;
        int rc = gimpi_msg_recv(m, gimpi_msg_tid(m, victim), 1, &c, 1, &st);
        printf("rank %d saw error %d\n", me, rc);
        fflush(stdout);
        gimpi_abort(&g);
        return rc < 0 ? 0 : 1;
    }
    if (!strcmp(mode, "pvmjunk")) {
        /* a PVM task (rank 0) gets, on the PVM contexts: a message too short for a
         * header, a valid one carrying int 1234 raw, and a long one whose body follows */
        static const uint8_t junk[3] = { 'P', 1, 0 };
        uint8_t msg[20] = { 'P', 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4 };
        int v = 1234;
        memcpy(msg + 16, &v, 4);
        size_t blen = 100000;
        uint8_t hdr[16] = { 'P', 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                            (uint8_t)(blen >> 16), (uint8_t)(blen >> 8), (uint8_t)blen };
        uint8_t *body = malloc(blen);
        s_fill(body, blen, me, 0);
        int to = gimpi_msg_tid(m, 0);
        int rc = gimpi_msg_send_cid(m, GIMPI_CID_PVM, to, 80, junk, sizeof junk);
        if (!rc)
            rc = gimpi_msg_send_cid(m, GIMPI_CID_PVM, to, 81, msg, sizeof msg);
        if (!rc)
            rc = gimpi_msg_send_cid(m, GIMPI_CID_PVM, to, 82, hdr, sizeof hdr);
        if (!rc)
            rc = gimpi_msg_send_cid(m, GIMPI_CID_PVM_BODY, to, 82, body, blen);
        free(body);
        int rc2 = gimpi_msg_finalize(m, 30000);    /* no barrier: PVM tasks have none */
        gimpi_abort(&g);
        if (rc || rc2)
            fprintf(stderr, "rank %d: pvmjunk: %d %d\n", me, rc, rc2);
        else
            printf("rank %d of %d: %s ok\n", me, n, mode);
        return rc || rc2;
    }
    uint8_t *out = malloc(size ? size : 1), *in = malloc(size ? size : 1);
    if (!strcmp(mode, "ring")) {
        int next = (me + 1) % n, prev = (me + n - 1) % n;
        s_fill(out, size, me, next);
        gimpi_msg_req_t *req;
        int rc = gimpi_msg_isend(m, gimpi_msg_tid(m, next), 5, out, size, 0, &req);
        gimpi_status_t st;
        int rc2 = gimpi_msg_recv(m, gimpi_msg_tid(m, prev), 5, in, size, &st);
        int rc3 = rc < 0 ? rc : gimpi_msg_wait(m, &req, NULL);
        if (rc < 0 || rc2 < 0 || rc3 < 0 || st.len != size || s_check(in, size, prev, me) >= 0) {
            fprintf(stderr, "rank %d: ring failed (%d %d %d len %zu)\n", me, rc, rc2, rc3, st.len);
            bad = 1;
        }
    } else if (!strcmp(mode, "alltoall")) {
        for (int to = 0; to < n && !bad; to++) {
            if (to == me)
                continue;
            s_fill(out, size, me, to);
            int rc = gimpi_msg_send(m, gimpi_msg_tid(m, to), 9, out, size);
            if (rc < 0) {
                fprintf(stderr, "rank %d: send to %d: %d %s\n", me, to, rc, gimpi_msg_errmsg(m));
                bad = 1;
            }
        }
        for (int k = 0; k < n - 1 && !bad; k++) {
            gimpi_status_t st;
            int rc = gimpi_msg_recv(m, GIMPI_ANY, 9, in, size, &st);
            int from = gimpi_msg_rank(m, st.source);
            if (rc < 0 || st.len != size || s_check(in, size, from, me) >= 0) {
                fprintf(stderr, "rank %d: receive %d: %d len %zu\n", me, k, rc, st.len);
                bad = 1;
            }
        }
    } else {
        fprintf(stderr, "job_msg: unknown mode %s\n", mode);
        bad = 1;
    }
    free(out);
    free(in);
    int rc = gimpi_finalize(&g);
    if (rc < 0) {
        fprintf(stderr, "rank %d: finalize: %d\n", me, rc);
        bad = 1;
    }
    if (!bad)
        printf("rank %d of %d: %s ok\n", me, n, mode);
    return bad;
}
