/*  t/pvm_job.c — a PVM program (only <pvm3.h> calls) for the tests of PVM messages over
 *  the real data plane, run under gimpirun by t/gimpirun_pvm.sh (or from the shell for
 *  `self`).  argv[1] says what to do:
 *    basic    siblings; ring and all-to-all in PvmDataDefault, Raw and InPlace; mcast;
 *             nrecv/trecv/probe; psend -> recv + upk and pack + send -> precv
 *    big MiB  MiB bytes to every other task before any receive
 *    leave    task 2 (if any) pvm_exits early while others still work; the last task (3)
 *             exits without pvm_exit after sending; the others go on and never hang
 *    self     alone from the shell: tid > 0, no parent, one sibling, send to itself
 *             (`self unreachable`: with no groupd, a blocking recv(-1) fails)
 *    junk     beside t/job_msg pvmjunk: a bad header is PvmBadMsg, later messages fine
 *    groups   every task joins "all" (barrier, freeze); each sends its instance to every
 *             member by the tid pvm_gettid gives and receives them from the tids
 *             pvm_getinst names; bcast, reduce, gather, scatter; leave
 *    lazy     bodies that stay on the data plane until unpacked (task 1 to task 2): two
 *             long messages of one envelope unpacked newest first, one decoded, one freed
 *             unread, one unpacked in halves, one unpacked whole then resent (PvmNoData);
 *             then every task joins "lazy" and instance 0 bcasts five messages with one
 *             tag (two long PvmDataDefault ones; PvmDataInPlace long from one segment,
 *             short, and from two segments, changed after packing), checked whole and as
 *             at bcast time everywhere
 *    inline   every task joins "inl"; instance 0 sends 100 bytes to each other member with
 *             pvm_send, then bcasts 100 bytes, packed (PvmDataDefault) and in place: all
 *             arrive whole (t/gimpirun_pvm.sh runs it under GIMPI_PVM_INLINE and
 *             GIMPI_DEBUG to see which contexts the bodies took)
 *  Every task prints "t<tid> <mode> ok" on success (and a few progress lines); on a
 *  failure "t<tid> FAIL ..." and exit status 1.
 */
#include "pvm3.h"
#include "taskcheck.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int s_me;
static int s_lbl;               /* what "t<N>" prints: position among the siblings + 1 */

#define CHECK(cond, ...) TASK_CHECK("t", s_lbl, cond, __VA_ARGS__)

/*  A reduce function that is not commutative: x = 100x + y. */
static void s_base100(int *datatype, void *x, void *y, int *num, int *info)
{
    (void)datatype;
    (void)info;
    for (int i = 0; i < *num; i++)
        ((int *)x)[i] = 100 * ((int *)x)[i] + ((int *)y)[i];
}

/*  The group calls under gimpirun: groupd's tids are the data plane's. */
static void s_groups(int n)
{
    int inst = pvm_joingroup("all");
    CHECK(inst >= 0 && inst < n, "joingroup %d", inst);
    CHECK(pvm_barrier("all", n) == 0, "barrier");
    CHECK(pvm_gsize("all") == n, "gsize");
    CHECK(pvm_freezegroup("all", -1) == n, "freezegroup returns the size");
    CHECK(pvm_gettid("all", inst) == s_me && pvm_getinst("all", s_me) == inst, "own entry");
    for (int i = 0; i < n; i++) {
        if (i == inst)
            continue;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&inst, 1, 1);
        CHECK(pvm_send(pvm_gettid("all", i), 40) == 0, "send to instance %d", i);
    }
    for (int k = 0; k < n - 1; k++) {
        int b = pvm_recv(-1, 40), bytes, tag, src, v = -1;
        CHECK(b > 0 && pvm_bufinfo(b, &bytes, &tag, &src) == 0 && pvm_upkint(&v, 1, 1) == 0,
              "recv");
        CHECK(pvm_getinst("all", src) == v, "t%x sent instance %d, getinst says %d", src, v,
              pvm_getinst("all", src));
    }
    CHECK(pvm_barrier("all", -1) == 0, "barrier after");
    /* the collectives: bcast from instance 0, reduce, gather, scatter to root n-1 */
    int v = 1000 + n;
    if (inst == 0) {
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        CHECK(pvm_bcast("all", 41) == 0, "bcast");
    } else {
        CHECK(pvm_recv(pvm_gettid("all", 0), 41) > 0 && pvm_upkint(&v, 1, 1) == 0
              && v == 1000 + n, "the bcast arrives (%d)", v);
    }
    int sum = inst + 1, root = n - 1;
    CHECK(pvm_reduce(PvmSum, &sum, 1, PVM_INT, 42, "all", root) == 0, "reduce");
    CHECK(inst != root || sum == n * (n + 1) / 2, "reduce sum %d", sum);
    int *all = calloc((size_t)n, sizeof *all), mine = 10 * inst, got = -1;
    CHECK(all && pvm_gather(all, &mine, 1, PVM_INT, 43, "all", root) == 0, "gather");
    for (int i = 0; inst == root && i < n; i++)
        CHECK(all[i] == 10 * i, "gathered[%d] = %d", i, all[i]);
    for (int i = 0; i < n; i++)
        all[i] = 100 + i;
    int sbuf = pvm_getsbuf();
    CHECK(pvm_scatter(&got, all, 1, PVM_INT, 44, "all", root) == 0 && got == 100 + inst,
          "scatter gave %d", got);
    CHECK(pvm_getsbuf() == sbuf && sbuf > 0, "scatter keeps the active send buffer");
    free(all);
    /* PVM_LONG keeps 64 bits and its sign; the same tag back to back never mixes */
    long lv = inst == 0 ? 5000000000L : -3L * inst;
    CHECK(pvm_reduce(PvmSum, &lv, 1, PVM_LONG, 45, "all", root) == 0, "reduce long");
    CHECK(inst != root || lv == 5000000000L - 3L * (n - 1) * n / 2, "long sum %ld", lv);
    for (int it = 0; it < 3; it++) {
        int x = (inst + 1) * (it + 1);
        CHECK(pvm_reduce(PvmSum, &x, 1, PVM_INT, 46, "all", root) == 0, "reduce %d", it);
        CHECK(inst != root || x == (it + 1) * n * (n + 1) / 2, "reduce %d gave %d", it, x);
    }
    /* a user function that is not commutative: the bracketing follows the instances */
    int y = inst + 1;
    CHECK(pvm_reduce(s_base100, &y, 1, PVM_INT, 47, "all", root) == 0, "user reduce");
    CHECK(inst != root || n != 4 || y == 10504, "((1.2).(3.4)) = 10504, got %d", y);
    CHECK(pvm_barrier("all", -1) == 0, "barrier after the collectives");
    CHECK(pvm_lvgroup("all") == 0, "lvgroup");
    CHECK(pvm_lvgroup("all") == PvmNotInGroup || pvm_lvgroup("all") == PvmNoGroup,
          "left: a second leave fails");
    printf("t%d groups: instance %d\n", s_lbl, inst);
}

/*  Milliseconds of a monotonic clock. */
static long long s_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*  Pattern byte i of a message from -> to. */
static unsigned char s_byte(int from, int to, size_t i)
{
    return (unsigned char)(from * 31 + to * 7 + i * 13 + (i >> 12));
}

/*  Packs ints, doubles, a long, a string. */
static void s_pack(int enc, int from, int to, int *iv, double *dv, long *lv, char *str)
{
    for (int i = 0; i < 100; i++) {
        iv[i] = from * 1000 + to * 10 + i;
        dv[i] = from + to / 8.0 + i;
    }
    *lv = -5000000000L * from - to;
    snprintf(str, 64, "from t%d to t%d", from, to);
    CHECK(pvm_initsend(enc) > 0, "initsend %d", enc);
    CHECK(pvm_pkint(iv, 100, 1) == 0, "pkint");
    CHECK(pvm_pkdouble(dv, 50, 2) == 0, "pkdouble");
    CHECK(pvm_pklong(lv, 1, 1) == 0, "pklong");
    CHECK(pvm_pkstr(str) == 0, "pkstr");
}

/*  Unpacks and checks what s_pack packed. */
static void s_unpack_check(int from, int to)
{
    int iv[100];
    double dv[50];
    long lv;
    char str[64], want[64];
    CHECK(pvm_upkint(iv, 100, 1) == 0, "upkint");
    CHECK(pvm_upkdouble(dv, 50, 1) == 0, "upkdouble");
    CHECK(pvm_upklong(&lv, 1, 1) == 0, "upklong");
    CHECK(pvm_upkstr(str) == 0, "upkstr");
    for (int i = 0; i < 100; i++)
        CHECK(iv[i] == from * 1000 + to * 10 + i, "int %d from t%d: %d", i, from, iv[i]);
    for (int i = 0; i < 50; i++)
        CHECK(dv[i] == from + to / 8.0 + 2 * i, "double %d from t%d", i, from);
    CHECK(lv == -5000000000L * from - to, "long from t%d: %ld", from, lv);
    snprintf(want, sizeof want, "from t%d to t%d", from, to);
    CHECK(strcmp(str, want) == 0, "string '%s'", str);
}

/*  Ring and all-to-all in each encoding. */
static void s_exchange(int *tids, int n, int k)
{
    static const int encs[3] = { PvmDataDefault, PvmDataRaw, PvmDataInPlace };
    int next = tids[(k + 1) % n], prev = tids[(k + n - 1) % n];
    int iv[100];
    double dv[100];
    long lv;
    char str[64];
    for (int e = 0; e < 3; e++) {
        for (int round = 0; round < 20; round++) {
            s_pack(encs[e], s_me, next, iv, dv, &lv, str);
            CHECK(pvm_send(next, 10 + e) == 0, "ring send");
            int b = pvm_recv(prev, 10 + e);
            CHECK(b > 0, "ring recv %d", b);
            s_unpack_check(prev, s_me);
        }
        for (int i = 0; i < n; i++) {
            if (tids[i] == s_me)
                continue;
            s_pack(encs[e], s_me, tids[i], iv, dv, &lv, str);
            CHECK(pvm_send(tids[i], 20 + e) == 0, "all-to-all send");
        }
        for (int i = 0; i < n - 1; i++) {
            int b = pvm_recv(-1, 20 + e), bytes, tag, src;
            CHECK(b > 0, "all-to-all recv %d", b);
            CHECK(pvm_bufinfo(b, &bytes, &tag, &src) == 0 && tag == 20 + e, "bufinfo");
            s_unpack_check(src, s_me);
        }
    }
    printf("t%d ring and all-to-all in 3 encodings\n", s_lbl);
}

/*  mcast from the first task, replies back. */
static void s_mcast(int *tids, int n, int k)
{
    int v = 42, got = 0;
    if (k == 0) {
        CHECK(pvm_initsend(PvmDataDefault) > 0, "initsend");
        pvm_pkint(&v, 1, 1);
        CHECK(pvm_mcast(tids, n, 30) == 0, "mcast");      /* skips ourselves, as PVM */
        for (int i = 1; i < n; i++) {
            int b = pvm_recv(-1, 31), src, bytes, tag;
            CHECK(b > 0 && pvm_bufinfo(b, &bytes, &tag, &src) == 0, "mcast reply");
            CHECK(pvm_upkint(&got, 1, 1) == 0 && got == src + 42, "reply %d from t%d", got, src);
        }
        CHECK(pvm_nrecv(-1, 30) == 0, "mcast did not send to its sender");
    } else {
        CHECK(pvm_recv(tids[0], 30) > 0 && pvm_upkint(&got, 1, 1) == 0 && got == 42, "mcast");
        pvm_initsend(PvmDataRaw);
        v = s_me + 42;
        pvm_pkint(&v, 1, 1);
        CHECK(pvm_send(tids[0], 31) == 0, "reply");
    }
    printf("t%d mcast\n", s_lbl);
}

/*  nrecv, trecv (timing out and succeeding) and probe. */
static void s_polling(int *tids, int n, int k)
{
    int next = tids[(k + 1) % n], prev = tids[(k + n - 1) % n];
    CHECK(pvm_nrecv(-1, 40) == 0, "nrecv before anything was sent");
    struct timeval tmo = { 0, 200000 };
    long long t0 = s_ms();
    CHECK(pvm_trecv(-1, 40, &tmo) == 0, "trecv times out");
    CHECK(s_ms() - t0 >= 190, "trecv waited %lld ms", s_ms() - t0);
    int dummy = 0;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&dummy, 1, 1);
    CHECK(pvm_send(prev, 41) == 0, "ready");            /* prev may send tag 40 now */
    CHECK(pvm_recv(next, 41) > 0, "ready from next");
    int v = s_me * 3;
    pvm_initsend(PvmDataDefault);
    pvm_pkint(&v, 1, 1);
    CHECK(pvm_send(next, 40) == 0 && pvm_send(next, 42) == 0, "send 40, 42");
    int id = 0;
    long long deadline = s_ms() + 30000;
    while ((id = pvm_probe(prev, 40)) == 0 && s_ms() < deadline)
        ;
    CHECK(id > 0, "probe found the message (%d)", id);
    int bytes, tag, src;
    CHECK(pvm_bufinfo(id, &bytes, &tag, &src) == 0 && tag == 40 && src == prev, "bufinfo");
    CHECK(pvm_probe(prev, 40) == id, "probing again: same id");
    CHECK(pvm_nrecv(prev, 40) == id, "nrecv returns the probed id");
    CHECK(pvm_upkint(&v, 1, 1) == 0 && v == prev * 3, "content");
    struct timeval long_tmo = { 30, 0 };
    CHECK(pvm_trecv(prev, 42, &long_tmo) > 0, "trecv gets a message");
    printf("t%d nrecv trecv probe\n", s_lbl);
}

/*  psend -> recv + upk, and pack + send -> precv. */
static void s_psend(int *tids, int n, int k)
{
    int next = tids[(k + 1) % n], prev = tids[(k + n - 1) % n];
    double d[300];
    int iv[10];
    for (int i = 0; i < 300; i++)
        d[i] = s_me * 0.5 + i;
    for (int i = 0; i < 10; i++)
        iv[i] = s_me + i;
    CHECK(pvm_psend(next, 50, d, 300, PVM_DOUBLE) == 0, "psend");
    pvm_initsend(PvmDataDefault);
    pvm_pkint(iv, 10, 1);
    CHECK(pvm_send(next, 51) == 0, "send");
    double got[300];
    CHECK(pvm_recv(prev, 50) > 0 && pvm_upkdouble(got, 300, 1) == 0, "recv + upk");
    for (int i = 0; i < 300; i++)
        CHECK(got[i] == prev * 0.5 + i, "psend data %d", i);
    int gi[10], rtid, rtag, rcnt;
    CHECK(pvm_precv(prev, 51, gi, 10, PVM_INT, &rtid, &rtag, &rcnt) == 0, "precv");
    CHECK(rtid == prev && rtag == 51, "precv envelope");
    for (int i = 0; i < 10; i++)
        CHECK(gi[i] == prev + i, "precv data %d", i);
    printf("t%d psend precv\n", s_lbl);
}

/*  MiB mebibytes to every other task before receiving. */
static void s_big(int *tids, int n, size_t mib)
{
    size_t len = mib << 20;
    unsigned char *buf = malloc(len);
    CHECK(buf, "malloc");
    for (int i = 0; i < n; i++) {
        if (tids[i] == s_me)
            continue;
        for (size_t j = 0; j < len; j++)
            buf[j] = s_byte(s_me, tids[i], j);
        CHECK(pvm_initsend(i % 2 ? PvmDataRaw : PvmDataInPlace) > 0, "initsend");
        CHECK(pvm_pkbyte((char *)buf, (int)len, 1) == 0, "pkbyte");
        CHECK(pvm_send(tids[i], 60) == 0, "big send");  /* returns: buffered */
        memset(buf, 0, len);                            /* InPlace: reuse after send */
    }
    printf("t%d sent %zu MiB to every other task\n", s_lbl, mib);
    fflush(stdout);
    for (int i = 0; i < n - 1; i++) {
        int b = pvm_recv(-1, 60), bytes, tag, src;
        CHECK(b > 0 && pvm_bufinfo(b, &bytes, &tag, &src) == 0, "big recv");
        CHECK((size_t)bytes == len, "length %d", bytes);
        CHECK(pvm_upkbyte((char *)buf, (int)len, 1) == 0, "upkbyte");
        for (size_t j = 0; j < len; j++)
            CHECK(buf[j] == s_byte(src, s_me, j), "byte %zu from t%d", j, src);
    }
    free(buf);
}

/*  Fills or checks len bytes of a pattern named by seed; check returns 1 when it matches. */
static int s_pattern(unsigned char *p, size_t len, int seed, int check)
{
    for (size_t j = 0; j < len; j++) {
        unsigned char v = (unsigned char)(seed * 37 + j * 7 + (j >> 11));
        if (!check)
            p[j] = v;
        else if (p[j] != v)
            return 0;
    }
    return 1;
}

/*  Sends len pattern bytes (seed) to tid with tag, raw. */
static void s_lazy_send(unsigned char *buf, int tid, int tag, size_t len, int seed)
{
    s_pattern(buf, len, seed, 0);
    CHECK(pvm_initsend(PvmDataRaw) > 0 && pvm_pkbyte((char *)buf, (int)len, 1) == 0
          && pvm_send(tid, tag) == 0, "send tag %d", tag);
}

/*  Mode lazy (see the top). */
static void s_lazy(int *tids, int n, int k)
{
    enum { B = 3 << 19 };       /* 1.5 MiB */
    unsigned char *buf = malloc(B);
    int *iv = malloc(100000 * sizeof *iv);
    CHECK(buf && iv, "malloc");
    pvm_setopt(PvmAutoErr, 0);
    if (k == 0) {
        s_lazy_send(buf, tids[1], 70, 200000, 1);
        s_lazy_send(buf, tids[1], 70, 300000, 2);
        for (int i = 0; i < 100000; i++)
            iv[i] = i * 3 - 7;
        CHECK(pvm_initsend(PvmDataDefault) > 0 && pvm_pkint(iv, 100000, 1) == 0
              && pvm_send(tids[1], 71) == 0, "send 71");
        s_lazy_send(buf, tids[1], 72, 150000, 4);
        s_lazy_send(buf, tids[1], 73, 8, 5);
        s_lazy_send(buf, tids[1], 74, 200000, 6);
        s_lazy_send(buf, tids[1], 75, 100000, 7);
    } else if (k == 1) {
        int a = pvm_recv(tids[0], 70);
        CHECK(pvm_setrbuf(0) == a, "set the first aside (the next recv would free it)");
        int b = pvm_recv(tids[0], 70), bytes, tag, src;
        CHECK(a > 0 && b > 0 && pvm_bufinfo(b, &bytes, &tag, &src) == 0 && bytes == 300000,
              "two long messages of one envelope, lengths known before unpacking (%d)", bytes);
        pvm_setrbuf(b);
        CHECK(pvm_upkbyte((char *)buf, 300000, 1) == 0 && s_pattern(buf, 300000, 2, 1),
              "the newer one unpacked first is its own");
        pvm_setrbuf(a);
        CHECK(pvm_upkbyte((char *)buf, 200000, 1) == 0 && s_pattern(buf, 200000, 1, 1),
              "the older one too");
        CHECK(pvm_recv(tids[0], 71) > 0 && pvm_upkint(iv, 100000, 1) == 0, "recv 71");
        for (int i = 0; i < 100000; i++)
            CHECK(iv[i] == i * 3 - 7, "decoded int %d", i);
        CHECK(pvm_recv(tids[0], 72) > 0, "recv 72 (freed unread by the next recv)");
        CHECK(pvm_recv(tids[0], 73) > 0 && pvm_upkbyte((char *)buf, 8, 1) == 0
              && s_pattern(buf, 8, 5, 1), "the message after it");
        CHECK(pvm_recv(tids[0], 74) > 0 && pvm_upkbyte((char *)buf, 100000, 1) == 0
              && pvm_upkbyte((char *)buf + 100000, 100000, 1) == 0
              && s_pattern(buf, 200000, 6, 1), "unpacked in two halves");
        CHECK(pvm_upkbyte((char *)buf, 1, 1) == PvmNoData, "and nothing more");
        int r = pvm_recv(tids[0], 75);
        CHECK(r > 0 && pvm_upkbyte((char *)buf, 100000, 1) == 0 && s_pattern(buf, 100000, 7, 1),
              "unpacked whole");
        pvm_setsbuf(r);
        CHECK(pvm_send(tids[0], 76) == PvmNoData, "resending it: PvmNoData (its bytes went out)");
        CHECK(pvm_bcast("lazy", 76) == PvmNoData, "bcasting it: PvmNoData too");
    }
    int inst = pvm_joingroup("lazy");
    CHECK(inst >= 0 && pvm_barrier("lazy", n) == 0, "join and meet");
    int root = pvm_gettid("lazy", 0);
    /* 0, 1: PvmDataDefault; 2: one InPlace segment (sent from the caller's memory, as it
       is at bcast time); 3: a short one (inline); 4: two segments (gathered) */
    static const size_t blen[5] = { B, B, B, 100, B };
    for (int m = 0; m < 5; m++) {
        if (inst == 0) {
            int h = (int)blen[m] / 2;
            s_pattern(buf, blen[m], m < 2 ? 10 + m : 99, 0);
            CHECK(pvm_initsend(m < 2 ? PvmDataDefault : PvmDataInPlace) > 0
                  && (m < 4 ? pvm_pkbyte((char *)buf, (int)blen[m], 1)
                            : pvm_pkbyte((char *)buf, h, 1)
                                  | pvm_pkbyte((char *)buf + h, (int)blen[m] - h, 1)) == 0,
                  "pack %d", m);
            s_pattern(buf, blen[m], 10 + m, 0);     /* InPlace: what the bcast sends */
            CHECK(pvm_bcast("lazy", 77) == 0, "bcast %d", m);
        }
    }
    if (inst != 0)
        for (int m = 0; m < 5; m++) {
            memset(buf, 0, B);
            CHECK(pvm_recv(root, 77) > 0 && pvm_upkbyte((char *)buf, (int)blen[m], 1) == 0
                  && s_pattern(buf, blen[m], 10 + m, 1), "bcast %d whole and in order", m);
        }
    CHECK(pvm_barrier("lazy", n) == 0 && pvm_lvgroup("lazy") == 0, "meet and leave");
    free(buf);
    free(iv);
}

/*  Short messages by pvm_send and pvm_bcast, packed and in place, over a group: the same
 *  bytes arrive whichever way GIMPI_PVM_INLINE makes them travel. */
static void s_inline(int n)
{
    int inst = pvm_joingroup("inl");
    CHECK(inst >= 0 && pvm_barrier("inl", n) == 0, "join and meet");
    int root = pvm_gettid("inl", 0);
    unsigned char buf[100];
    for (int m = 0; m < 4; m++) {       /* send Default, send InPlace, bcast both */
        int enc = m % 2 ? PvmDataInPlace : PvmDataDefault, tag = 80 + m;
        if (inst == 0) {
            for (int j = 0; j < 100; j++)
                buf[j] = (unsigned char)(m * 7 + j);
            CHECK(pvm_initsend(enc) > 0 && pvm_pkbyte((char *)buf, 100, 1) == 0, "pack %d", m);
            for (int i = 1; m < 2 && i < n; i++)
                CHECK(pvm_send(pvm_gettid("inl", i), tag) == 0, "send %d to %d", m, i);
            CHECK(m < 2 || pvm_bcast("inl", tag) == 0, "bcast %d", m);
        } else {
            memset(buf, 0, sizeof buf);
            int b = pvm_recv(root, tag), bytes, t, src;
            CHECK(b > 0 && pvm_bufinfo(b, &bytes, &t, &src) == 0 && bytes == 100
                  && pvm_upkbyte((char *)buf, 100, 1) == 0, "message %d arrived", m);
            for (int j = 0; j < 100; j++)
                CHECK(buf[j] == (unsigned char)(m * 7 + j), "message %d byte %d", m, j);
        }
    }
    CHECK(pvm_barrier("inl", n) == 0 && pvm_lvgroup("inl") == 0, "meet and leave");
}

/*  Waits (bounded) until process pid has gone. */
static int s_wait_gone(int pid)
{
    long long deadline = s_ms() + 30000;
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        struct pollfd p = { fd, POLLIN, 0 };
        int r = poll(&p, 1, 30000);
        close(fd);
        return r == 1;
    }
#endif
    while (kill(pid, 0) == 0 && s_ms() < deadline)
        usleep(10000);
    return kill(pid, 0) != 0;
}

/*  Early leavers: task index 2 pvm_exits, the last one (3) exits without it. */
static void s_leave(int *tids, int n, int k)
{
    CHECK(n == 4, "leave needs 4 tasks");
    int v, pid = getpid();
    if (k == 2 || k == 3) {
        char *big = calloc(1, 1 << 20);
        CHECK(big, "calloc");
        big[12345] = (char)k;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&pid, 1, 1);
        CHECK(pvm_send(tids[0], 70) == 0, "bye");
        CHECK(pvm_psend(tids[0], 71, big, 1 << 20, PVM_BYTE) == 0, "a last 1 MiB");
        free(big);
        if (k == 2) {
            long long t0 = s_ms();
            CHECK(pvm_exit() == 0, "pvm_exit");
            printf("t%d pvm_exit returned after %lld ms while others work\n", s_lbl,
                   s_ms() - t0);
        }
        printf("t%d leave ok\n", s_lbl);
        fflush(stdout);
        exit(0);                        /* task 3: no pvm_exit */
    }
    if (k == 1) {                       /* blocked until both leavers are gone */
        CHECK(pvm_recv(tids[0], 72) > 0 && pvm_upkint(&v, 1, 1) == 0 && v == 72, "go");
        pvm_initsend(PvmDataDefault);
        v = 73;
        pvm_pkint(&v, 1, 1);
        CHECK(pvm_send(tids[0], 73) == 0, "answer");
        CHECK(pvm_exit() == 0, "pvm_exit");
        printf("t%d leave ok\n", s_lbl);
        exit(0);
    } else {
        for (int i = 0; i < 2; i++) {
            int b = pvm_recv(-1, 70), bytes, tag, src, lpid;
            CHECK(b > 0 && pvm_bufinfo(b, &bytes, &tag, &src) == 0, "bye");
            CHECK(pvm_upkint(&lpid, 1, 1) == 0, "pid");
            char *got = malloc(1 << 20);
            int rtid, rtag, rcnt;
            CHECK(got && pvm_precv(src, 71, got, 1 << 20, PVM_BYTE, &rtid, &rtag, &rcnt) == 0,
                  "the leaver's last message arrived");
            CHECK(got[12345] == (src == tids[2] ? 2 : 3), "its content");
            free(got);
            CHECK(s_wait_gone(lpid), "t%d's process ended", src);
            printf("t%d saw t%d leave\n", s_lbl, src == tids[2] ? 3 : 4);
        }
        pvm_setopt(PvmAutoErr, 0);
        CHECK(pvm_recv(tids[2], 98) == PvmSysErr, "recv from a task that did pvm_exit");
        CHECK(pvm_recv(tids[3], 98) == PvmSysErr, "recv from a task that exited without it");
        printf("t%d recv from a task that left: PvmSysErr\n", s_lbl);
        v = 0;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        CHECK(pvm_send(tids[2], 74) == 0 && pvm_send(tids[3], 74) == 0,
              "a send to a task that left is dropped, as PVM");
        v = 72;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        CHECK(pvm_send(tids[1], 72) == 0, "go");
        CHECK(pvm_recv(tids[1], 73) > 0 && pvm_upkint(&v, 1, 1) == 0 && v == 73, "answer");
        /* everybody else has left now: a receive from anyone cannot be satisfied */
        pvm_setopt(PvmAutoErr, 0);
        long long t0 = s_ms();
        CHECK(pvm_recv(-1, 99) == PvmSysErr, "recv(-1) when every other task left");
        printf("t%d recv(-1) with everybody gone: PvmSysErr after %lld ms\n", s_lbl, s_ms() - t0);
        struct timeval tmo = { 0, 100000 };
        CHECK(pvm_trecv(-1, 99, &tmo) == 0, "a bounded trecv still just times out");
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "basic";
    s_me = pvm_mytid();
    CHECK(s_me > 0, "pvm_mytid %d", s_me);
    CHECK(pvm_parent() == PvmNoParent, "no parent");
    int *tids = NULL;
    int n = pvm_siblings(&tids);
    CHECK(n >= 1 && tids, "siblings %d", n);
    int k = -1;
    for (int i = 0; i < n; i++)
        if (tids[i] == s_me)
            k = i;
    CHECK(k >= 0, "this task is among its siblings");
    s_lbl = k + 1;
    if (strcmp(mode, "basic") == 0) {
        s_exchange(tids, n, k);
        s_mcast(tids, n, k);
        s_polling(tids, n, k);
        s_psend(tids, n, k);
    } else if (strcmp(mode, "big") == 0) {
        s_big(tids, n, argc > 2 ? (size_t)atoi(argv[2]) : 64);
    } else if (strcmp(mode, "groups") == 0) {
        s_groups(n);
    } else if (strcmp(mode, "lazy") == 0) {
        CHECK(n >= 2, "lazy: at least 2 tasks");
        s_lazy(tids, n, k);
    } else if (strcmp(mode, "inline") == 0) {
        s_inline(n);
    } else if (strcmp(mode, "leave") == 0) {
        s_leave(tids, n, k);
    } else if (strcmp(mode, "junk") == 0) {       /* t/job_msg pvmjunk is the sender */
        CHECK(n == 2 && k == 0, "junk: first of 2 tasks");
        pvm_setopt(PvmAutoErr, 0);
        CHECK(pvm_recv(-1, -1) == PvmBadMsg, "a truncated header: PvmBadMsg");
        int v = 0, bytes, tag, src;
        CHECK(pvm_recv(-1, 81) > 0 && pvm_upkint(&v, 1, 1) == 0 && v == 1234,
              "the next message is fine (%d)", v);
        int b = pvm_recv(-1, 82);
        CHECK(b > 0 && pvm_bufinfo(b, &bytes, &tag, &src) == 0 && bytes == 100000
              && src == tids[1], "a long one with its body (%d bytes)", bytes);
        unsigned char *body = malloc(100000);
        CHECK(body && pvm_upkbyte((char *)body, 100000, 1) == 0, "upkbyte");
        for (size_t j = 0; j < 100000; j++)
            CHECK(body[j] == (unsigned char)(31 + j * 13 + (j >> 12)), "body byte %zu", j);
        free(body);
    } else if (strcmp(mode, "self") == 0) {
        CHECK(n == 1 && tids[0] == s_me, "alone: one sibling, itself");
        int v = 7;
        pvm_initsend(PvmDataDefault);
        pvm_pkint(&v, 1, 1);
        CHECK(pvm_send(s_me, 5) == 0, "send to itself");
        int bytes, tag, src;
        int b = pvm_recv(-1, -1);
        CHECK(b > 0 && pvm_bufinfo(b, &bytes, &tag, &src) == 0 && src == s_me && tag == 5,
              "recv from itself");
        CHECK(pvm_upkint(&v, 1, 1) == 0 && v == 7, "content");
        /* a long one in place: the caller's memory may change right after the send */
        size_t blen = 300000;
        unsigned char *big = malloc(blen), *back = malloc(blen);
        CHECK(big && back, "malloc");
        for (size_t j = 0; j < blen; j++)
            big[j] = s_byte(s_me, s_me, j);
        CHECK(pvm_initsend(PvmDataInPlace) > 0 && pvm_pkbyte((char *)big, (int)blen, 1) == 0,
              "pack in place");
        CHECK(pvm_send(s_me, 7) == 0, "a long send to itself");
        memset(big, 0xee, blen);
        b = pvm_recv(s_me, 7);
        CHECK(b > 0 && pvm_upkbyte((char *)back, (int)blen, 1) == 0, "long recv from itself");
        for (size_t j = 0; j < blen; j++)
            CHECK(back[j] == s_byte(s_me, s_me, j), "byte %zu sent to itself", j);
        free(big);
        free(back);
        pvm_setopt(PvmAutoErr, 0);
        if (argc > 2 && strcmp(argv[2], "unreachable") == 0) {
            /* no groupd: nobody can ever learn this task's tid, so a blocking receive
               that nothing here can satisfy fails instead of hanging */
            CHECK(pvm_recv(-1, 6) == PvmSysErr, "alone and unreachable, a recv fails");
        } else {
            /* known to groupd: a task from another shell may find it through a group
               (t/pvm_shells.sh), so a receive waits, as under PVM; a bounded one times out */
            struct timeval tmo = { 0, 50000 };
            CHECK(pvm_trecv(-1, 6, &tmo) == 0, "alone and reachable, a bounded recv times out");
            CHECK(pvm_nrecv(-1, 6) == 0, "... and nrecv finds nothing");
        }
    } else {
        CHECK(0, "unknown mode %s", mode);
    }
    CHECK(pvm_exit() == 0, "pvm_exit");
    printf("t%d %s ok\n", s_lbl, mode);
    return 0;
}
