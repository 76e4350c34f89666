/*  t/impi_tables.c — tests of the startup tables (libgimpi/impi/impi_tables.c): the IMPI
 *  draft's worked examples ("seeds" 000 and 003, doc/impi-protocol.md §3.12) fed as
 *  server replies (NHOSTS 3,2,2; PKTLEN 8000/4000/4000; the H_PORT concatenation; the
 *  version example), world ranks and global host ranks, the defaults of XSIZE/MAXLINEAR,
 *  every inconsistency the tables must refuse, a client's own payloads and description
 *  check, printing, and save/load with truncated and garbled files.
 */
#include "gtap.h"
#include "impi/impi_tables.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ a job to play with */

/*  Three clients shaped like the seeds' example; tests change fields to break it. */
typedef struct {
    int nclients;
    int nversions[3];
    uint32_t versions[3][4][2];
    int nhosts[3];              /* C_NHOSTS as announced */
    int nhost_elems[3];         /* host elements actually sent (normally nhosts) */
    int nprocs[3];              /* C_NPROCS as announced */
    uint32_t datalen[3];
    int32_t tagub[3], xsize[3], maxlinear[3];
    int port[3][4], hprocs[3][4];
    uint32_t ack[3][4], hi[3][4];
    int64_t pid[3][8];
    uint32_t mask[IMPI_LABEL_COUNT];    /* 0: every client */
    int skip;                   /* label index not sent, -1: none */
} job_t;

/*  The seed job: NHOSTS 3,2,2; PKTLEN 8000/4000/4000; ports 5001.. 6001.. 7001..;
 *  versions {0.0} {0.0,0.1} {0.0,0.1}; procs 1+2+1, 2+1, 1+1. */
static job_t s_seed_job(void)
{
    job_t j;
    memset(&j, 0, sizeof j);
    j.nclients = 3;
    j.skip = -1;
    static const int nh[3] = { 3, 2, 2 };
    static const int hp[3][4] = { { 1, 2, 1 }, { 2, 1 }, { 1, 1 } };
    static const uint32_t dl[3] = { 8000, 4000, 4000 };
    static const int32_t tu[3] = { 0x7fffffff, 65535, 40000 };
    static const int32_t xs[3] = { -1, 1024, -1 }, ml[3] = { -1, -1, 4 };
    for (int c = 0; c < 3; c++) {
        j.nversions[c] = c == 0 ? 1 : 2;
        j.versions[c][1][1] = 1;        /* {0,0}, {0,1} */
        j.nhosts[c] = j.nhost_elems[c] = nh[c];
        j.datalen[c] = dl[c];
        j.tagub[c] = tu[c];
        j.xsize[c] = xs[c];
        j.maxlinear[c] = ml[c];
        for (int h = 0; h < nh[c]; h++) {
            j.port[c][h] = 5001 + 1000 * c + h;
            j.hprocs[c][h] = hp[c][h];
            j.nprocs[c] += hp[c][h];
            j.ack[c][h] = 10 + (uint32_t)c + (uint32_t)h;
            j.hi[c][h] = 20 + (uint32_t)c + (uint32_t)h;
        }
        for (int p = 0; p < 8; p++)
            j.pid[c][p] = 1000 * c + p;
    }
    j.ack[1][1] = 7;            /* the minima come from different hosts */
    j.hi[2][0] = 12;
    return j;
}

/*  Reply builder. */
typedef struct {
    uint8_t b[4096];
    size_t n;
} rb_t;

static void rb_u32(rb_t *r, uint32_t v) { gimpi_be_put32(r->b + r->n, v); r->n += 4; }
static void rb_u64(rb_t *r, uint64_t v) { gimpi_be_put64(r->b + r->n, v); r->n += 8; }
static void rb_addr(rb_t *r, int c, int h)
{
    impi_addr16_from_ipv4(r->b + r->n, 0x0A000000u | (uint32_t)c << 8 | (uint32_t)h);
    r->n += 16;
}

/*  The host of client c that proc k sits on (by hprocs), for its P_IPV6. */
static int s_proc_host(const job_t *j, int c, int k)
{
    for (int h = 0; h < 4; h++) {
        k -= j->hprocs[c][h];
        if (k < 0)
            return h;
    }
    return 99;
}

/*  The server's reply for label-table row i of the job. */
static void s_reply(const job_t *j, int i, rb_t *r)
{
    const impi_label_info_t *info = impi_label_at(i);
    uint32_t mask = j->mask[i] ? j->mask[i] : (1u << j->nclients) - 1;
    r->n = 0;
    rb_u32(r, (uint32_t)info->value);
    rb_u32(r, mask);
    for (int c = 0; c < j->nclients; c++) {
        if (!(mask & (1u << c)))
            continue;
        switch (info->value) {
        case IMPI_C_VERSION:
            for (int v = 0; v < j->nversions[c]; v++) {
                rb_u32(r, j->versions[c][v][0]);
                rb_u32(r, j->versions[c][v][1]);
            }
            break;
        case IMPI_C_NHOSTS: rb_u32(r, (uint32_t)j->nhosts[c]); break;
        case IMPI_C_NPROCS: rb_u32(r, (uint32_t)j->nprocs[c]); break;
        case IMPI_C_DATALEN: rb_u32(r, j->datalen[c]); break;
        case IMPI_C_TAGUB: rb_u32(r, (uint32_t)j->tagub[c]); break;
        case IMPI_C_COLL_XSIZE: rb_u32(r, (uint32_t)j->xsize[c]); break;
        case IMPI_C_COLL_MAXLINEAR: rb_u32(r, (uint32_t)j->maxlinear[c]); break;
        default:
            if (info->scope == IMPI_SCOPE_HOST) {
                for (int h = 0; h < j->nhost_elems[c]; h++)
                    switch (info->value) {
                    case IMPI_H_IPV6: rb_addr(r, c, h); break;
                    case IMPI_H_PORT: rb_u32(r, (uint32_t)j->port[c][h]); break;
                    case IMPI_H_NPROCS: rb_u32(r, (uint32_t)j->hprocs[c][h]); break;
                    case IMPI_H_ACKMARK: rb_u32(r, j->ack[c][h]); break;
                    default: rb_u32(r, j->hi[c][h]); break;
                    }
            } else {
                for (int k = 0; k < j->nprocs[c] && k < 8; k++) {
                    if (info->value == IMPI_P_IPV6)
                        rb_addr(r, c, s_proc_host(j, c, k));
                    else
                        rb_u64(r, (uint64_t)j->pid[c][k]);
                }
            }
        }
    }
}

/*  Feeds the job's replies and finishes.  Returns the tables (or NULL with err). */
static impi_tables_t *s_run(const job_t *j, char *err, size_t errsize)
{
    impi_tables_t *t = impi_tables_new(j->nclients, 1);
    err[0] = '\0';
    for (int i = 0; i < IMPI_LABEL_COUNT; i++) {
        if (i == j->skip)
            continue;
        rb_t r;
        s_reply(j, i, &r);
        if (impi_tables_add_reply(t, r.b, r.n, err, errsize) < 0) {
            impi_tables_destroy(&t);
            return NULL;
        }
    }
    if (impi_tables_finish(t, err, errsize) < 0)
        impi_tables_destroy(&t);
    return t;
}

/*  Runs a broken job: it must fail with a message containing `want`. */
static void s_refused(const job_t *j, const char *want, const char *what)
{
    char err[512] = "";
    impi_tables_t *t = s_run(j, err, sizeof err);
    ok(t == NULL && strstr(err, want) != NULL, "%s refused", what);
    if (t || !strstr(err, want))
        diag("  got \"%s\", wanted \"%s\"", err, want);
    else
        note("  %s", err);
    impi_tables_destroy(&t);
}

/* ------------------------------------------------------------------ tests */

/*  The seed job: per-client values, minima, pair versions, hosts, procs, ranks. */
static void test_seed_job(void)
{
    job_t j = s_seed_job();
    char err[512] = "";
    impi_tables_t *t = s_run(&j, err, sizeof err);
    ok(t != NULL, "seed job finishes (%s)", err);
    if (!t)
        return;
    cmp_ok(t->nclients, "==", 3, "3 clients");
    cmp_ok(t->myclient, "==", 1, "seen from client 1");
    ok(t->clients[0].nhosts == 3 && t->clients[1].nhosts == 2 && t->clients[2].nhosts == 2,
       "NHOSTS 3,2,2 (seed 000)");
    cmp_ok(t->nhosts, "==", 7, "7 hosts in all");
    cmp_ok(t->nprocs, "==", 9, "9 procs in all");
    cmp_ok(t->pktlen, "==", 4000, "PKTLEN 8000/4000/4000 -> 4000 (seed 000)");
    cmp_ok(t->tagub, "==", 40000, "tag bound = minimum TAGUB");
    cmp_ok(t->xsize, "==", 1024, "XSIZE -1,1024,-1 -> 1024");
    cmp_ok(t->maxlinear, "==", 4, "MAXLINEAR -1,-1,4 -> 4");
    cmp_ok(t->clients[0].xsize, "==", -1, "per-client XSIZE kept as sent");
    cmp_ok(t->ackmark, "==", 7, "global ackmark = minimum over hosts");
    cmp_ok(t->hiwater, "==", 12, "global hiwater = minimum over hosts");
    static const int ports[7] = { 5001, 5002, 5003, 6001, 6002, 7001, 7002 };
    static const int owner[7] = { 0, 0, 0, 1, 1, 2, 2 };
    int good = 1;
    for (int h = 0; h < 7; h++)
        good &= t->hosts[h].port == ports[h] && t->hosts[h].client == owner[h];
    ok(good, "H_PORT concatenation -> host table by global host rank (seed 000)");
    ok(impi_addr16_ipv4(t->hosts[4].addr) == 0x0A000101u, "host 4 is client 1's second host");
    ok(t->clients[0].first_host == 0 && t->clients[1].first_host == 3
       && t->clients[2].first_host == 5, "global host ranks client by client");
    ok(t->clients[0].first_proc == 0 && t->clients[1].first_proc == 4
       && t->clients[2].first_proc == 7, "first world rank of each client");
    ok(t->hosts[1].first_proc == 1 && t->hosts[2].first_proc == 3 && t->hosts[3].first_proc == 4
       && t->hosts[4].first_proc == 6 && t->hosts[6].first_proc == 8,
       "first world rank of each host");
    static const int phost[9] = { 0, 1, 1, 2, 3, 3, 4, 5, 6 };
    good = 1;
    for (int p = 0; p < 9; p++)
        good &= t->procs[p].host == phost[p] && t->procs[p].client == owner[phost[p]];
    ok(good, "world ranks host by host, client by client");
    ok(t->procs[5].id.pid == 1001 && impi_addr16_ipv4(t->procs[5].id.hostid) == 0x0A000100u,
       "proc 5 is client 1's second proc, on its first host");
    ok(t->hosts[0].nprocs == 1 && t->hosts[1].nprocs == 2 && t->hosts[1].ackmark == 11
       && t->hosts[3].hiwater == 21, "per-host nprocs, ackmark, hiwater");
    ok(t->clients[1].nversions == 2 && t->clients[1].versions[1][1] == 1
       && t->clients[0].nversions == 1, "version lists split at {0,0} (seed 003)");
    uint32_t (*pv)[2] = t->pair_version;
    ok(pv[1 * 3 + 2][0] == 0 && pv[1 * 3 + 2][1] == 1 && pv[2 * 3 + 1][1] == 1,
       "clients 1 and 2 use 0.1 with each other (seed 003)");
    ok(pv[0 * 3 + 1][1] == 0 && pv[1 * 3 + 0][1] == 0 && pv[0 * 3 + 2][1] == 0
       && pv[2 * 3 + 0][1] == 0, "pairs with client 0 use 0.0 (seed 003)");
    ok(t->clients[0].datalen == 8000 && t->clients[2].tagub == 40000
       && t->clients[1].nprocs == 3, "per-client datalen, tagub, nprocs");

    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    impi_tables_print(t, mem);
    fclose(mem);
    ok(strstr(text, "3 clients, 7 hosts, 9 procs") && strstr(text, "pktlen 4000")
       && strstr(text, "0.0,0.1") && strstr(text, "10.0.2.1") && strstr(text, "7002"),
       "print shows the summary, versions, addresses and ports");
    free(text);
    impi_tables_destroy(&t);
    ok(t == NULL, "destroy nulls the pointer");
}

/*  The seed's literal NHOSTS and PKTLEN bytes, and XSIZE/MAXLINEAR defaults. */
static void test_literal_replies(void)
{
    char err[256] = "";
    impi_tables_t *t = impi_tables_new(3, 0);
    static const uint8_t nhosts[20] = { 0, 0, 0x11, 0, 0, 0, 0, 7, 0, 0, 0, 3, 0, 0, 0, 2,
                                        0, 0, 0, 2 };
    static const uint8_t version[8 + 40] = { 0, 0, 0x10, 0, 0, 0, 0, 7 };
    uint8_t v[48];
    memcpy(v, version, sizeof v);
    v[8 + 8 + 8 + 7] = 1;       /* client 1: 0.0 0.1 */
    v[8 + 8 + 16 + 8 + 7] = 1;  /* client 2: 0.0 0.1 */
    ok(impi_tables_add_reply(t, v, sizeof v, err, sizeof err) == 0, "seed 003 VERSION reply "
       "taken (%s)", err);
    ok(impi_tables_add_reply(t, nhosts, sizeof nhosts, err, sizeof err) == 0
       && t->clients[0].nhosts == 3 && t->clients[2].nhosts == 2, "seed 000 NHOSTS reply taken");
    ok(impi_tables_add_reply(t, nhosts, sizeof nhosts, err, sizeof err) < 0
       && strstr(err, "ascending"), "the same label twice refused: %s", err);
    ok(impi_tables_add_reply(t, nhosts, sizeof nhosts, err, sizeof err) < 0
       && strstr(err, "failed"), "nothing taken after an error");
    impi_tables_destroy(&t);

    job_t j = s_seed_job();
    for (int c = 0; c < 3; c++)
        j.xsize[c] = j.maxlinear[c] = -1;
    t = s_run(&j, err, sizeof err);
    ok(t && t->xsize == IMPI_DEFAULT_XSIZE && t->maxlinear == IMPI_DEFAULT_MAXLINEAR,
       "all -1 -> defaults 1024 and 4");
    impi_tables_destroy(&t);
    j.xsize[1] = 1024;
    j.maxlinear[2] = 4;
    t = s_run(&j, err, sizeof err);
    ok(t && t->xsize == 1024 && t->maxlinear == 4, "-1 agrees with an explicit default");
    impi_tables_destroy(&t);

    /* an unknown label's reply is skipped, even between known ones */
    j = s_seed_job();
    t = impi_tables_new(3, -1);
    int good = 1;
    for (int i = 0; i < IMPI_LABEL_COUNT; i++) {
        rb_t r;
        s_reply(&j, i, &r);
        good &= impi_tables_add_reply(t, r.b, r.n, err, sizeof err) == 0;
        uint8_t unknown[12] = { 0, 0, 0x70, (uint8_t)i, 0, 0, 0, 1, 1, 2, 3, 4 };
        good &= impi_tables_add_reply(t, unknown, sizeof unknown, err, sizeof err) == 0;
    }
    ok(good && impi_tables_finish(t, err, sizeof err) == 0, "unknown labels skipped (%s)", err);
    impi_tables_destroy(&t);

    ok(impi_tables_new(0, -1) == NULL && impi_tables_new(33, -1) == NULL
       && impi_tables_new(2, 2) == NULL && impi_tables_new(2, -2) == NULL,
       "new refuses nclients 0, 33 and a client out of range");
    t = impi_tables_new(1, 0);
    uint8_t tiny[6] = { 0, 0, 0x11, 0, 0, 0 };
    ok(impi_tables_add_reply(t, tiny, sizeof tiny, err, sizeof err) < 0, "6-byte reply refused: "
       "%s", err);
    impi_tables_destroy(&t);
}

/*  Every inconsistency the tables must refuse, with a message. */
static void test_inconsistent(void)
{
    job_t j;
    j = s_seed_job(); j.mask[1] = 0x5;
    s_refused(&j, "client 1 missing from mask 0x5", "NHOSTS without client 1 (mandatory)");
    j = s_seed_job(); j.mask[3] = 0xF;
    s_refused(&j, "beyond the 3", "mask naming client 3 of 3");
    j = s_seed_job(); j.nhost_elems[1] = 1;
    s_refused(&j, "IMPI_H_IPV6 reply", "client 1 sending 1 host for NHOSTS 2");
    j = s_seed_job(); j.nhosts[2] = 3;
    s_refused(&j, "do not match", "NHOSTS larger than the hosts sent");
    j = s_seed_job(); j.hprocs[0][1] = 3;
    s_refused(&j, "add up to 5 but its IMPI_C_NPROCS is 4", "sum of H_NPROCS != NPROCS");
    j = s_seed_job(); j.pid[2][1] = 2000; j.nprocs[2] = 2;
    j.hprocs[2][0] = 2; j.hprocs[2][1] = 0;
    s_refused(&j, "IMPI_H_NPROCS", "a host with 0 procs");
    j = s_seed_job(); j.pid[1][1] = 1000;
    s_refused(&j, "same proc", "duplicate proc ids");
    for (int c = 0; c < 3; c++)
        for (int h = 0; h < 3; h++)
            j.ack[c][h] = 30;
    j = s_seed_job();
    for (int c = 0; c < 3; c++)
        for (int h = 0; h < 3; h++)
            j.ack[c][h] = 30;
    s_refused(&j, "exceeds global hiwater", "ackmark > hiwater");
    j = s_seed_job(); j.xsize[2] = 2048;
    s_refused(&j, "IMPI_C_COLL_XSIZE disagrees", "XSIZE 1024 vs 2048");
    j = s_seed_job(); j.maxlinear[0] = 8;
    s_refused(&j, "IMPI_C_COLL_MAXLINEAR disagrees", "MAXLINEAR 8 vs 4");
    j = s_seed_job(); j.tagub[1] = 1000;
    s_refused(&j, "element 0 is 1000", "TAGUB 1000 < 32767");
    j = s_seed_job(); j.datalen[0] = 0;
    s_refused(&j, "IMPI_C_DATALEN reply: client 0", "DATALEN 0");
    j = s_seed_job(); j.port[1][0] = 70000;
    s_refused(&j, "IMPI_H_PORT reply: client 1", "port 70000");
    j = s_seed_job(); j.xsize[0] = -2;
    s_refused(&j, "IMPI_C_COLL_XSIZE reply", "XSIZE -2");
    j = s_seed_job(); j.versions[1][0][1] = 2;
    s_refused(&j, "IMPI_C_VERSION reply", "a version list without 0.0 first");
    j = s_seed_job(); j.nversions[2] = 4;
    j.versions[2][2][1] = 1;
    s_refused(&j, "IMPI_C_VERSION reply", "a version list not ascending");
    j = s_seed_job(); j.skip = 11;
    s_refused(&j, "no reply for IMPI_H_HIWATER", "a label missing");
    j = s_seed_job(); j.skip = 1;
    s_refused(&j, "before the IMPI_C_NHOSTS reply", "host labels before NHOSTS");
    j = s_seed_job(); j.nprocs[0] = 0;
    s_refused(&j, "IMPI_C_NPROCS reply: client 0", "NPROCS 0");

    /* labels out of order */
    j = s_seed_job();
    char err[256] = "";
    impi_tables_t *t = impi_tables_new(3, 0);
    rb_t r;
    s_reply(&j, 2, &r);
    impi_tables_add_reply(t, r.b, r.n, err, sizeof err);
    s_reply(&j, 1, &r);
    ok(impi_tables_add_reply(t, r.b, r.n, err, sizeof err) < 0 && strstr(err, "ascending"),
       "NHOSTS after NPROCS refused: %s", err);
    ok(impi_tables_finish(t, err, sizeof err) < 0, "finish after an error refused");
    impi_tables_destroy(&t);
}

/*  A client's own payloads and the description check. */
static void test_desc(void)
{
    impi_desc_host_t hosts[2] = {
        { .port = 4000, .nprocs = 1, .ackmark = 10, .hiwater = 20 },
        { .port = 4001, .nprocs = 2, .ackmark = 10, .hiwater = 20 },
    };
    impi_addr16_from_ipv4(hosts[0].addr, 0x7F000001);
    impi_addr16_from_ipv4(hosts[1].addr, 0x7F000001);
    impi_proc_t procs[3];
    for (int i = 0; i < 3; i++) {
        impi_addr16_from_ipv4(procs[i].hostid, 0x7F000001);
        procs[i].pid = 100 + i;
    }
    impi_desc_t d = { .rank = 2, .nversions = 2, .versions = { { 0, 0 }, { 0, 1 } },
                      .datalen = 65536, .tagub = 0x7fffffff, .xsize = -1, .maxlinear = -1,
                      .nhosts = 2, .hosts = hosts, .nprocs = 3, .procs = procs };
    char err[256] = "";
    ok(impi_desc_check(&d, err, sizeof err) == 0, "a good description passes (%s)", err);
    size_t len;
    uint8_t *p = impi_desc_payload(&d, IMPI_C_NHOSTS, &len);
    ok(p && len == 8 && gimpi_be_get32(p) == IMPI_C_NHOSTS && gimpi_be_get32(p + 4) == 2,
       "NHOSTS payload: label + Int4 2");
    free(p);
    p = impi_desc_payload(&d, IMPI_C_VERSION, &len);
    ok(p && len == 20 && gimpi_be_get32(p + 16) == 1, "VERSION payload: 0.0 0.1");
    free(p);
    p = impi_desc_payload(&d, IMPI_H_PORT, &len);
    ok(p && len == 12 && gimpi_be_get32(p + 8) == 4001, "H_PORT payload: one Int4 per host");
    free(p);
    p = impi_desc_payload(&d, IMPI_P_PID, &len);
    ok(p && len == 28 && gimpi_be_get64(p + 20) == 102, "P_PID payload: Int8 per proc");
    free(p);
    p = impi_desc_payload(&d, IMPI_P_IPV6, &len);
    ok(p && len == 52 && p[4 + 16 + 15] == 1, "P_IPV6 payload: 16 bytes per proc");
    free(p);
    ok(impi_desc_payload(&d, 0x4242, &len) == NULL, "no payload for an unknown label");

    impi_desc_t bad = d;
    bad.nprocs = 2;
    ok(impi_desc_check(&bad, err, sizeof err) < 0 && strstr(err, "add up"),
       "nprocs != sum of hosts refused: %s", err);
    bad = d;
    procs[2].pid = 101;
    ok(impi_desc_check(&bad, err, sizeof err) < 0 && strstr(err, "unique"),
       "duplicate procs refused: %s", err);
    procs[2].pid = 102;
    bad.versions[0][1] = 1;
    ok(impi_desc_check(&bad, err, sizeof err) < 0 && strstr(err, "VERSION"),
       "versions without 0.0 refused: %s", err);
    bad = d;
    bad.tagub = 100;
    ok(impi_desc_check(&bad, err, sizeof err) < 0 && strstr(err, "TAGUB"),
       "tagub 100 refused: %s", err);
    bad = d;
    bad.rank = 32;
    ok(impi_desc_check(&bad, err, sizeof err) < 0, "rank 32 refused: %s", err);
    bad = d;
    bad.nhosts = 0;
    ok(impi_desc_check(&bad, err, sizeof err) < 0, "no hosts refused: %s", err);
    bad = d;
    hosts[1].port = 0;
    ok(impi_desc_check(&bad, err, sizeof err) < 0 && strstr(err, "H_PORT"),
       "port 0 refused: %s", err);
    hosts[1].port = 4001;
}

/*  Writes a buffer to a fresh temporary file and rewinds it; returns the fd. */
static int s_tmpfd(const void *buf, size_t len)
{
    FILE *f = tmpfile();
    int fd = dup(fileno(f));
    fclose(f);
    if (write(fd, buf, len) != (ssize_t)len)
        return -1;
    lseek(fd, 0, SEEK_SET);
    return fd;
}

/*  Reads a whole fd from the start into a malloc'd buffer. */
static uint8_t *s_slurp(int fd, size_t *len)
{
    off_t end = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)end + 1);
    *len = (size_t)read(fd, buf, (size_t)end);
    return buf;
}

/*  save/load round trip, truncation, garbling, a file that does not add up. */
static void test_save_load(void)
{
    job_t j = s_seed_job();
    char err[512] = "";
    impi_tables_t *t = s_run(&j, err, sizeof err);
    int fd = s_tmpfd("", 0);
    ok(t && impi_tables_save(t, fd) == 0, "save");
    size_t len;
    uint8_t *saved = s_slurp(fd, &len);
    lseek(fd, 0, SEEK_SET);
    impi_tables_t *u = impi_tables_load(fd, 2, err, sizeof err);
    close(fd);
    ok(u != NULL, "load (%s)", err);
    if (u && t) {
        ok(u->nclients == 3 && u->myclient == 2 && u->nhosts == 7 && u->nprocs == 9
           && u->pktlen == 4000 && u->tagub == 40000 && u->ackmark == 7 && u->hiwater == 12
           && u->xsize == 1024 && u->maxlinear == 4, "loaded tables: same derived values");
        ok(memcmp(u->hosts, t->hosts, 7 * sizeof *u->hosts) == 0
           && memcmp(u->procs, t->procs, 9 * sizeof *u->procs) == 0
           && memcmp(u->clients, t->clients, 3 * sizeof *u->clients) == 0
           && memcmp(u->pair_version, t->pair_version, 9 * sizeof *u->pair_version) == 0,
           "loaded tables: same clients, hosts, procs, pair versions");
    }
    impi_tables_destroy(&u);

    int good = 1;
    for (size_t cut = 0; cut < len; cut += (cut < 40 ? 1 : 37)) {
        fd = s_tmpfd(saved, cut);
        u = impi_tables_load(fd, -1, err, sizeof err);
        close(fd);
        good &= u == NULL && strstr(err, "truncated") != NULL;
        if (u || !strstr(err, "truncated"))
            diag("cut at %zu: %s", cut, u ? "loaded" : err);
        impi_tables_destroy(&u);
    }
    ok(good, "every truncated file refused as truncated");
    good = 1;
    for (size_t at = 0; at < len; at += 13) {
        saved[at] ^= 0x40;
        fd = s_tmpfd(saved, len);
        u = impi_tables_load(fd, -1, err, sizeof err);
        close(fd);
        good &= u == NULL;
        if (u)
            diag("garbled at %zu: loaded", at);
        impi_tables_destroy(&u);
        saved[at] ^= 0x40;
    }
    ok(good, "every garbled file refused");
    saved[12] = 0x7f;            /* nreplies: huge */
    fd = s_tmpfd(saved, len);
    u = impi_tables_load(fd, -1, err, sizeof err);
    close(fd);
    ok(u == NULL && strstr(err, "out of range"), "absurd reply count refused: %s", err);
    saved[12] = 0;
    fd = s_tmpfd("NOTGIMPI........", 16);
    u = impi_tables_load(fd, -1, err, sizeof err);
    close(fd);
    ok(u == NULL && strstr(err, "magic"), "foreign file refused: %s", err);
    fd = s_tmpfd(saved, len);
    u = impi_tables_load(fd, 3, err, sizeof err);
    close(fd);
    ok(u == NULL && strstr(err, "client 3"), "loading as a client outside the job refused");
    free(saved);
    impi_tables_destroy(&t);

    /* well-formed file, tables that do not add up: a label missing */
    t = impi_tables_new(3, 0);
    for (int i = 0; i < IMPI_LABEL_COUNT - 1; i++) {
        rb_t r;
        s_reply(&j, i, &r);
        impi_tables_add_reply(t, r.b, r.n, err, sizeof err);
    }
    fd = s_tmpfd("", 0);
    impi_tables_save(t, fd);
    lseek(fd, 0, SEEK_SET);
    u = impi_tables_load(fd, 0, err, sizeof err);
    close(fd);
    ok(u == NULL && strstr(err, "no reply for IMPI_P_PID"),
       "a saved file of unfinished tables refused: %s", err);
    impi_tables_destroy(&t);
}

int main(void)
{
    plan(NO_PLAN);
    test_seed_job();
    test_literal_replies();
    test_inconsistent();
    test_desc();
    test_save_load();
    done_testing();
}
