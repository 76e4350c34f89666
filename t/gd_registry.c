/*  t/gd_registry.c — the rules of groupd (groupd/gd_registry.c) without sockets: tids,
 *  instance recycling, delete-on-empty, every error code of every call, barrier
 *  arbitration (first count wins, mismatch not counted, -1, count > size, count 0 / < -1
 *  refused without poisoning, a dead waiter's arrival counts), freeze rules, a frozen group
 *  losing a member releasing its waiters with PvmNoGroup, exits from many groups, event
 *  versions, STAT records, and memory stability under join/leave churn.
 */
#include "gtap.h"
#include "groupd/gd_registry.h"
#include "gimpi.h"

#include <stdlib.h>
#include <string.h>

/*  What the sink saw. */
typedef struct {
    int nreplies;
    uint32_t reqids[64];
    int32_t statuses[64];
    int nevents;
    uint8_t last_kind;
    uint64_t last_prev, last_version;
    int32_t last_inst, last_tid, last_extra;
    int bad_versions;           /* events whose prev was not the group's last version */
    char names[32][16];         /* last version per group */
    uint64_t seen[32];
    int ngroups;
} rec_t;

static void s_reply(void *arg, const gd_waiter_t *w, int32_t status, uint64_t version)
{
    (void)version;
    rec_t *r = arg;
    if (r->nreplies < 64) {
        r->reqids[r->nreplies] = w->reqid;
        r->statuses[r->nreplies] = status;
    }
    r->nreplies++;
}

static void s_event(void *arg, const char *group, uint8_t kind, uint64_t prev, uint64_t version,
                    int32_t inst, int32_t tid, int32_t extra)
{
    rec_t *r = arg;
    int h = 0;
    while (h < r->ngroups && strcmp(r->names[h], group))
        h++;
    if (h == r->ngroups && h < 31) {
        snprintf(r->names[h], sizeof r->names[h], "%s", group);
        r->seen[h] = 0;
        r->ngroups++;
    }
    if (kind != GD_EV_MARK) {
        if (prev != 0 && prev != r->seen[h])
            r->bad_versions++;
        if (version <= prev)
            r->bad_versions++;
        r->seen[h] = version;
    }
    r->nevents++;
    r->last_kind = kind;
    r->last_prev = prev;
    r->last_version = version;
    r->last_inst = inst;
    r->last_tid = tid;
    r->last_extra = extra;
}

/*  Status of the reply to reqid, or 99 when none came. */
static int32_t s_status_of(const rec_t *r, uint32_t reqid)
{
    for (int k = 0; k < r->nreplies && k < 64; k++)
        if (r->reqids[k] == reqid)
            return r->statuses[k];
    return 99;
}

static gd_waiter_t s_w(uint32_t reqid)
{
    gd_waiter_t w = { .keylen = 1, .reqid = reqid };
    w.key[0] = (uint8_t)reqid;
    return w;
}

/*  Registers task number k. */
static int32_t s_reg(gd_registry_t *r, int k)
{
    gd_taskinfo_t info = { .ospid = 1000 + k };
    snprintf(info.host, sizeof info.host, "host%d", k);
    uint8_t key[4] = { 'k', (uint8_t)(k >> 8), (uint8_t)k, 0 };
    return gd_registry_register(r, key, sizeof key, &info);
}

static void test_tids(void)
{
    rec_t rec = { 0 };
    gd_sink_t sink = { s_reply, s_event, &rec };
    gd_registry_t *r = gd_registry_new(&sink);
    int32_t a = s_reg(r, 1), b = s_reg(r, 2);
    ok(a > 0 && b > 0 && a != b, "tids positive and distinct");
    cmp_ok(s_reg(r, 1), "==", a, "same routing id, same tid");
    cmp_ok(gd_registry_remove(r, a, false), "==", 0, "unregistered");
    int32_t c = s_reg(r, 1);
    ok(c != a && c != b, "tid not reused after the task left");
    cmp_ok(gd_registry_remove(r, a, false), "==", GIMPI_ENOTASK, "unknown tid");
    uint64_t v;
    cmp_ok(gd_registry_join(r, 12345, "g", &v), "==", GIMPI_ENOTASK, "unregistered cannot join");
    gd_registry_destroy(&r);
    ok(r == NULL, "destroy NULLs");
}

/*  Registers task number k as a given tid (REGISTER_TID) with a block's token. */
static int32_t s_reg_tid(gd_registry_t *r, int k, int32_t tid, const uint8_t *token)
{
    gd_taskinfo_t info = { .ospid = 1000 + k };
    uint8_t key[4] = { 'k', (uint8_t)(k >> 8), (uint8_t)k, 0 };
    return gd_registry_register_tid(r, key, sizeof key, &info, tid, token);
}

/*  RESERVE and REGISTER_TID: blocks from the one counter, idempotent keys, bounds, every
 *  refusal of a tid, and a block forgotten once every tid of it registered. */
static void test_reserve(void)
{
    rec_t rec = { 0 };
    gd_sink_t sink = { s_reply, s_event, &rec };
    gd_registry_t *r = gd_registry_new(&sink);
    int32_t a = s_reg(r, 1);
    uint8_t tk[GD_TOKEN_SIZE], tk2[GD_TOKEN_SIZE], tf[GD_TOKEN_SIZE], tf2[GD_TOKEN_SIZE];
    uint8_t tx[GD_TOKEN_SIZE], bad[GD_TOKEN_SIZE] = { 0 };
    int32_t base = gd_registry_reserve(r, "job1", 4, 3, 0, tk);
    cmp_ok(base, "==", a, "block after the last tid: tids base+1 .. base+3");
    cmp_ok(gd_registry_reserve(r, "job1", 4, 3, 0, tk2), "==", base, "same key, same base");
    ok(memcmp(tk, tk2, sizeof tk) == 0, "and the same token");
    cmp_ok(gd_registry_reserve(r, "job1", 4, 4, 0, tk2), "==", GIMPI_EMISMATCH,
           "same key, other n: Mismatch");
    int32_t fresh = gd_registry_reserve(r, "", 0, 1, 0, tf);
    cmp_ok(fresh, "==", base + 3, "key '' gets a fresh block after it");
    ok(memcmp(tk, tf, sizeof tk) != 0, "with a token of its own");
    int32_t fresh2 = gd_registry_reserve(r, "", 0, 1, 0, tf2);
    cmp_ok(fresh2, "==", fresh + 1, "and again a fresh one");
    cmp_ok(gd_registry_reserve(r, "x", 1, 0, 0, tx), "==", GIMPI_EBADPARAM, "n 0: BadParam");
    cmp_ok(gd_registry_reserve(r, "x", 1, -5, 0, tx), "==", GIMPI_EBADPARAM, "n < 0: BadParam");
    cmp_ok(gd_registry_reserve(r, "x", 1, GIMPI_GROUPS_MAX_RESERVE + 1, 0, tx), "==",
           GIMPI_EBADPARAM, "n over the limit: BadParam");
    cmp_ok(gd_registry_reserve(r, "x", 1, GIMPI_GROUPS_MAX_RESERVE, 0, tx), "==", fresh2 + 1,
           "n at the limit is fine (no owner: no quota)");
    int32_t b = s_reg(r, 2);
    cmp_ok(b, "==", fresh2 + 1 + GIMPI_GROUPS_MAX_RESERVE + 1, "plain REGISTER skips every block");
    cmp_ok(gd_registry_nblocks(r), "==", 4, "4 blocks live");

    cmp_ok(s_reg_tid(r, 10, base + 2, NULL), "==", GIMPI_EDENIED, "no token: Denied");
    cmp_ok(s_reg_tid(r, 10, base + 2, bad), "==", GIMPI_EDENIED, "a wrong token: Denied");
    cmp_ok(s_reg_tid(r, 10, base + 2, tf), "==", GIMPI_EDENIED, "another block's token: Denied");
    cmp_ok(s_reg_tid(r, 10, base + 2, tk), "==", base + 2, "REGISTER_TID in the block");
    cmp_ok(s_reg_tid(r, 10, base + 2, tk), "==", base + 2, "again from the same connection: same");
    cmp_ok(s_reg_tid(r, 10, base + 1, tk), "==", GIMPI_EEXISTS, "same connection, other tid: Exists");
    cmp_ok(s_reg_tid(r, 11, base + 2, tk), "==", GIMPI_EDUPHOST, "tid held by another task: DupHost");
    cmp_ok(s_reg_tid(r, 11, a, tk), "==", GIMPI_EDUPHOST, "a plain task's tid: DupHost");
    cmp_ok(s_reg_tid(r, 11, b + 1, tk), "==", GIMPI_EBADPARAM, "past every block: BadParam");
    cmp_ok(s_reg_tid(r, 11, 0, tk), "==", GIMPI_EBADPARAM, "0: BadParam");
    cmp_ok(s_reg_tid(r, 11, -3, tk), "==", GIMPI_EBADPARAM, "negative: BadParam");
    cmp_ok(s_reg_tid(r, 11, b + 1000, tk), "==", GIMPI_EBADPARAM, "never reserved: BadParam");
    cmp_ok(gd_registry_remove(r, base + 2, false), "==", 0, "the task leaves");
    cmp_ok(s_reg_tid(r, 11, base + 2, tk), "==", GIMPI_EBADPARAM, "its tid is never given again");
    cmp_ok(s_reg_tid(r, 12, base + 1, tk), "==", base + 1, "base+1");
    cmp_ok(s_reg_tid(r, 13, base + 3, tk), "==", base + 3, "base+3");
    cmp_ok(gd_registry_nblocks(r), "==", 3, "a block whose tids all registered is forgotten");
    cmp_ok(s_reg_tid(r, 14, base + 3, tk), "==", GIMPI_EDUPHOST, "held: DupHost");
    int32_t again = gd_registry_reserve(r, "job1", 4, 3, 0, tk2);
    ok(again > base && memcmp(tk, tk2, sizeof tk) != 0,
       "a key whose block is complete gets a fresh block and token");
    cmp_ok(s_reg_tid(r, 15, fresh2 + 1, tf2), "==", fresh2 + 1, "a fresh block's one tid");
    cmp_ok(s_reg_tid(r, 16, fresh + 1, tf), "==", fresh + 1, "blocks register in any order");
    cmp_ok(gd_registry_nblocks(r), "==", 2, "the big block and the new job1 block are left");
    uint64_t v;
    cmp_ok(gd_registry_join(r, base + 1, "g", &v), "==", 0, "a REGISTER_TID task joins");
    cmp_ok(gd_registry_gettid(r, "g", 0, &v), "==", base + 1, "with its tid");
    gd_taskinfo_t info;
    cmp_ok(gd_registry_lookup(r, fresh + 1, &info), "==", 0, "lookup");
    cmp_ok(info.ospid, "==", 1016, "gives what it registered");
    gd_registry_destroy(&r);
    ok(r == NULL, "destroy with live blocks and keys");
}

/*  The bounds: the reserve quota of an owner (given back as its tids register, and by
 *  nobody else's use), tasks, groups, groups per task, blocks. */
static void test_limits(void)
{
    rec_t rec = { 0 };
    gd_sink_t sink = { s_reply, s_event, &rec };
    gd_registry_t *r = gd_registry_new(&sink);
    gd_registry_set_limits(r, &(gd_registry_limits_t){ .max_tasks = 4, .max_groups = 2,
                                                       .max_groups_per_task = 1,
                                                       .max_blocks = 3, .reserve_quota = 10 });
    uint8_t t1[GD_TOKEN_SIZE], t2[GD_TOKEN_SIZE];
    int32_t b1 = gd_registry_reserve(r, "", 0, 8, 7, t1);
    ok(b1 > 0, "owner 7 reserves 8 of its 10");
    cmp_ok(gd_registry_reserve(r, "", 0, 3, 7, t2), "==", GIMPI_EOUTOFRES, "3 more: OutOfRes");
    int32_t b2 = gd_registry_reserve(r, "", 0, 3, 8, t2);
    ok(b2 > b1, "another owner is not held back");
    cmp_ok(s_reg_tid(r, 1, b1 + 1, t1), "==", b1 + 1, "one of owner 7's tids registers");
    ok(gd_registry_reserve(r, "", 0, 3, 7, t2) > 0, "which gives its quota back");
    cmp_ok(gd_registry_reserve(r, "", 0, 1, 9, t2), "==", GIMPI_EOUTOFRES, "a 4th block: OutOfRes");
    gd_registry_owner_gone(r, 7);
    cmp_ok(s_reg_tid(r, 2, b1 + 2, t1), "==", b1 + 2, "its tids still register when it is gone");
    int32_t x = s_reg(r, 3), y = s_reg(r, 4);
    ok(x > 0 && y > 0, "tasks 3 and 4 of 4");
    cmp_ok(s_reg(r, 5), "==", GIMPI_ENOMEM, "a 5th task: NoMem");
    uint64_t v;
    cmp_ok(gd_registry_join(r, x, "g1", &v), "==", 0, "join g1");
    cmp_ok(gd_registry_join(r, x, "g2", &v), "==", GIMPI_ENOMEM, "a 2nd group for one task: NoMem");
    cmp_ok(gd_registry_join(r, x, "g1", &v), "==", GIMPI_EDUPGROUP, "g1 again: DupGroup");
    cmp_ok(gd_registry_join(r, y, "g2", &v), "==", 0, "another task makes g2");
    cmp_ok(gd_registry_join(r, b1 + 1, "g3", &v), "==", GIMPI_ENOMEM, "a 3rd group: NoMem");
    cmp_ok(gd_registry_join(r, b1 + 1, "g1", &v), "==", 1, "joining one that exists is fine");
    gd_registry_destroy(&r);
}

static void test_membership(void)
{
    rec_t rec = { 0 };
    gd_sink_t sink = { s_reply, s_event, &rec };
    gd_registry_t *r = gd_registry_new(&sink);
    int32_t w[6];
    for (int k = 0; k < 6; k++)
        w[k] = s_reg(r, k);
    uint64_t v;
    for (int k = 0; k < 4; k++)
        cmp_ok(gd_registry_join(r, w[k], "g", &v), "==", k, "w%d joins as %d", k, k);
    ok(rec.last_kind == GD_EV_JOIN && rec.last_inst == 3 && rec.last_tid == w[3]
       && rec.last_extra == 4 && rec.last_version == v, "join event with version and size");
    cmp_ok(gd_registry_leave(r, w[1], "g", &v), "==", 0, "w1 leaves");
    cmp_ok(gd_registry_gsize(r, "g", &v), "==", 3, "gsize counts members, not slots");
    cmp_ok(gd_registry_gettid(r, "g", 1, &v), "==", GIMPI_ENOINST, "gettid of the hole");
    cmp_ok(gd_registry_join(r, w[4], "g", &v), "==", 1, "next joiner gets the lowest free (1)");
    cmp_ok(gd_registry_join(r, w[1], "g", &v), "==", 4, "w1 rejoins as 4");
    cmp_ok(gd_registry_gettid(r, "g", 4, &v), "==", w[1], "gettid");
    cmp_ok(gd_registry_getinst(r, "g", w[4], &v), "==", 1, "getinst");
    /* errors of every membership call */
    cmp_ok(gd_registry_join(r, w[0], "g", &v), "==", GIMPI_EDUPGROUP, "join twice: DupGroup");
    cmp_ok(gd_registry_join(r, w[0], "", &v), "==", GIMPI_ENULLGROUP, "join '': NullGroup");
    cmp_ok(gd_registry_join(r, w[0], NULL, &v), "==", GIMPI_ENULLGROUP, "join NULL: NullGroup");
    cmp_ok(gd_registry_leave(r, w[5], "g", &v), "==", GIMPI_ENOTINGROUP, "leave by non-member");
    cmp_ok(gd_registry_leave(r, w[0], "nope", &v), "==", GIMPI_ENOGROUP, "leave unknown group");
    cmp_ok(gd_registry_leave(r, w[0], "", &v), "==", GIMPI_ENULLGROUP, "leave ''");
    cmp_ok(gd_registry_gettid(r, "g", -1, &v), "==", GIMPI_ENOINST, "gettid -1");
    cmp_ok(gd_registry_gettid(r, "g", 8, &v), "==", GIMPI_ENOINST, "gettid at capacity (PVM: garbage)");
    cmp_ok(gd_registry_gettid(r, "g", 1 << 30, &v), "==", GIMPI_ENOINST, "gettid far out");
    cmp_ok(gd_registry_gettid(r, "nope", 0, &v), "==", GIMPI_ENOGROUP, "gettid unknown group");
    cmp_ok(gd_registry_gettid(r, "", 0, &v), "==", GIMPI_ENULLGROUP, "gettid ''");
    cmp_ok(gd_registry_getinst(r, "g", -1, &v), "==", GIMPI_ENOTINGROUP, "getinst -1 (PVM: a free slot)");
    cmp_ok(gd_registry_getinst(r, "g", w[5], &v), "==", GIMPI_ENOTINGROUP, "getinst non-member");
    cmp_ok(gd_registry_getinst(r, "nope", w[0], &v), "==", GIMPI_ENOGROUP, "getinst unknown group");
    cmp_ok(gd_registry_getinst(r, NULL, w[0], &v), "==", GIMPI_ENULLGROUP, "getinst NULL");
    cmp_ok(gd_registry_gsize(r, "nope", &v), "==", GIMPI_ENOGROUP, "gsize unknown group");
    cmp_ok(gd_registry_gsize(r, "", &v), "==", GIMPI_ENULLGROUP, "gsize ''");
    /* delete on empty, rejoin from 0 */
    for (int k = 0; k < 5; k++)
        gd_registry_leave(r, w[k], "g", &v);
    cmp_ok(gd_registry_ngroups(r), "==", 0, "last leave deletes the group");
    cmp_ok(gd_registry_gsize(r, "g", &v), "==", GIMPI_ENOGROUP, "deleted group: NoGroup");
    cmp_ok(gd_registry_join(r, w[3], "g", &v), "==", 0, "rejoin starts at 0");
    cmp_ok(rec.last_prev, "==", 0, "creation event has previous version 0");
    /* many groups, exit from all of them */
    char name[16];
    for (int k = 0; k < 5; k++) {
        snprintf(name, sizeof name, "m%d", k);
        gd_registry_join(r, w[0], name, &v);
        gd_registry_join(r, w[1], name, &v);
    }
    cmp_ok(gd_registry_remove(r, w[0], true), "==", 0, "w0 exits");
    int all = 1;
    for (int k = 0; k < 5; k++) {
        snprintf(name, sizeof name, "m%d", k);
        all &= gd_registry_gsize(r, name, &v) == 1 && gd_registry_getinst(r, name, w[1], &v) == 1;
    }
    ok(all, "removed from all 5 groups, others keep their instances");
    ok(rec.last_kind == GD_EV_EXIT, "exit published as EV_EXIT");
    cmp_ok(rec.bad_versions, "==", 0, "every event's previous version was the group's last");
    gd_registry_destroy(&r);
}

static void test_barrier(void)
{
    rec_t rec = { 0 };
    gd_sink_t sink = { s_reply, s_event, &rec };
    gd_registry_t *r = gd_registry_new(&sink);
    int32_t w[5];
    uint64_t v;
    for (int k = 0; k < 5; k++)
        w[k] = s_reg(r, k);
    for (int k = 0; k < 3; k++)
        gd_registry_join(r, w[k], "b", &v);
    gd_waiter_t q;
    q = s_w(1);
    cmp_ok(gd_registry_barrier(r, w[0], "b", 3, &q, &v), "==", GD_PENDING, "w0 waits (3)");
    q = s_w(2);
    cmp_ok(gd_registry_barrier(r, w[1], "b", 2, &q, &v), "==", GIMPI_EMISMATCH, "w1 with 2: Mismatch");
    q = s_w(3);
    cmp_ok(gd_registry_barrier(r, w[2], "b", 3, &q, &v), "==", GD_PENDING, "w2 waits");
    cmp_ok(rec.nreplies, "==", 0, "mismatch was not counted: nobody released");
    q = s_w(4);
    cmp_ok(gd_registry_barrier(r, w[1], "b", 3, &q, &v), "==", GD_PENDING, "w1 retries with 3");
    ok(rec.nreplies == 3 && s_status_of(&rec, 1) == 0 && s_status_of(&rec, 3) == 0
       && s_status_of(&rec, 4) == 0, "all three released with 0");
    /* -1 is the current size */
    rec.nreplies = 0;
    q = s_w(5);
    gd_registry_barrier(r, w[0], "b", -1, &q, &v);
    q = s_w(6);
    gd_registry_barrier(r, w[1], "b", -1, &q, &v);
    q = s_w(7);
    gd_registry_barrier(r, w[2], "b", 3, &q, &v);
    cmp_ok(rec.nreplies, "==", 3, "-1 means the size (3)");
    /* count 0 and < -1: BadParam, not poisoned */
    q = s_w(8);
    cmp_ok(gd_registry_barrier(r, w[0], "b", 0, &q, &v), "==", GIMPI_EBADPARAM, "count 0: BadParam");
    cmp_ok(gd_registry_barrier(r, w[0], "b", -5, &q, &v), "==", GIMPI_EBADPARAM, "count -5: BadParam");
    rec.nreplies = 0;
    q = s_w(9);
    gd_registry_barrier(r, w[0], "b", 2, &q, &v);
    q = s_w(10);
    gd_registry_barrier(r, w[1], "b", 2, &q, &v);
    cmp_ok(rec.nreplies, "==", 2, "later barriers work: nothing poisoned");
    /* count < size: the first count pass, the next opens a new episode */
    rec.nreplies = 0;
    q = s_w(11);
    gd_registry_barrier(r, w[2], "b", 2, &q, &v);
    cmp_ok(rec.nreplies, "==", 0, "third member opens a new episode");
    q = s_w(12);
    gd_registry_barrier(r, w[0], "b", 2, &q, &v);
    cmp_ok(rec.nreplies, "==", 2, "and is released by the next arrival");
    /* errors */
    q = s_w(13);
    cmp_ok(gd_registry_barrier(r, w[3], "b", 3, &q, &v), "==", GIMPI_ENOTINGROUP, "non-member");
    cmp_ok(gd_registry_barrier(r, w[0], "nope", 3, &q, &v), "==", GIMPI_ENOGROUP, "unknown group");
    cmp_ok(gd_registry_barrier(r, w[0], "", 3, &q, &v), "==", GIMPI_ENULLGROUP, "''");
    q = s_w(14);
    gd_registry_barrier(r, w[0], "b", 3, &q, &v);
    q = s_w(15);
    cmp_ok(gd_registry_barrier(r, w[0], "b", 3, &q, &v), "==", GIMPI_EALREADY,
           "second arrival of the same task in one episode refused");
    /* count > size waits for joins; a dead waiter's arrival counts */
    rec.nreplies = 0;
    q = s_w(16);
    cmp_ok(gd_registry_barrier(r, w[1], "b", 4, &q, &v), "==", GIMPI_EMISMATCH,
           "episode count is 3 (first arrival fixed it)");
    gd_registry_barrier(r, w[1], "b", 3, &q, &v);
    gd_registry_remove(r, w[0], true);           /* w0 dies while waiting */
    q = s_w(17);
    gd_registry_barrier(r, w[2], "b", 3, &q, &v);
    ok(rec.nreplies == 3 && s_status_of(&rec, 16) == 0 && s_status_of(&rec, 17) == 0,
       "two live members + a dead waiter complete a 3-count barrier");
    rec.nreplies = 0;
    q = s_w(18);
    gd_registry_barrier(r, w[1], "b", 3, &q, &v);
    q = s_w(19);
    gd_registry_barrier(r, w[2], "b", 3, &q, &v);
    cmp_ok(rec.nreplies, "==", 0, "count 3 > size 2 waits");
    gd_registry_join(r, w[4], "b", &v);
    q = s_w(20);
    gd_registry_barrier(r, w[4], "b", 3, &q, &v);
    cmp_ok(rec.nreplies, "==", 3, "a new member's arrival completes it");
    gd_registry_destroy(&r);
}

static void test_freeze(void)
{
    rec_t rec = { 0 };
    gd_sink_t sink = { s_reply, s_event, &rec };
    gd_registry_t *r = gd_registry_new(&sink);
    int32_t w[5];
    uint64_t v;
    for (int k = 0; k < 5; k++)
        w[k] = s_reg(r, k);
    for (int k = 0; k < 3; k++)
        gd_registry_join(r, w[k], "f", &v);
    gd_waiter_t q = s_w(1);
    cmp_ok(gd_registry_freeze(r, w[0], "f", 0, &q, &v), "==", GIMPI_EBADPARAM, "freeze 0: BadParam");
    cmp_ok(gd_registry_freeze(r, w[3], "f", 2, &q, &v), "==", GIMPI_ENOTINGROUP, "non-member");
    cmp_ok(gd_registry_freeze(r, w[0], "nope", 2, &q, &v), "==", GIMPI_ENOGROUP, "unknown group");
    cmp_ok(gd_registry_freeze(r, w[0], NULL, 2, &q, &v), "==", GIMPI_ENULLGROUP, "NULL");
    cmp_ok(gd_registry_freeze(r, w[0], "f", 2, &q, &v), "==", GD_PENDING, "w0 freezes (2)");
    q = s_w(2);
    cmp_ok(gd_registry_freeze(r, w[1], "f", 3, &q, &v), "==", GIMPI_EMISMATCH, "w1 with 3: Mismatch");
    cmp_ok(rec.nreplies, "==", 0, "not counted");
    q = s_w(3);
    gd_registry_freeze(r, w[1], "f", -1 + 3, &q, &v);
    ok(rec.nreplies == 2 && s_status_of(&rec, 1) == 2 && s_status_of(&rec, 3) == 2,
       "freeze returns the size (2) to both");
    ok(rec.last_kind == GD_EV_FREEZE && rec.last_extra == 2, "EV_FREEZE published");
    cmp_ok(gd_registry_gsize(r, "f", &v), "==", 3, "frozen membership lists all 3 members");
    q = s_w(4);
    cmp_ok(gd_registry_freeze(r, w[2], "f", 2, &q, &v), "==", GIMPI_EDUPGROUP, "second freeze: DupGroup");
    cmp_ok(gd_registry_join(r, w[3], "f", &v), "==", GIMPI_ENOTINGROUP, "join frozen: NotInGroup");
    /* frozen group losing a member releases the waiters with NoGroup */
    rec.nreplies = 0;
    q = s_w(5);
    gd_registry_barrier(r, w[0], "f", 3, &q, &v);
    q = s_w(6);
    gd_registry_barrier(r, w[1], "f", 3, &q, &v);
    cmp_ok(rec.nreplies, "==", 0, "two wait on the frozen group");
    gd_registry_remove(r, w[2], true);
    ok(rec.nreplies == 2 && s_status_of(&rec, 5) == GIMPI_ENOGROUP
       && s_status_of(&rec, 6) == GIMPI_ENOGROUP, "member lost: waiters released with NoGroup");
    q = s_w(7);
    cmp_ok(gd_registry_barrier(r, w[0], "f", 2, &q, &v), "==", GIMPI_ENOGROUP, "dead static: barrier NoGroup");
    cmp_ok(gd_registry_join(r, w[3], "f", &v), "==", GIMPI_ENOTINGROUP, "dead static: cannot join");
    /* -1 freeze with larger target waits for joins */
    gd_registry_join(r, w[3], "h", &v);
    q = s_w(8);
    gd_registry_freeze(r, w[3], "h", 2, &q, &v);
    rec.nreplies = 0;
    gd_registry_join(r, w[4], "h", &v);
    q = s_w(9);
    gd_registry_freeze(r, w[4], "h", -1, &q, &v);
    cmp_ok(rec.nreplies, "==", 2, "freeze larger than the group completes after a join");
    gd_registry_destroy(&r);
}

static void test_stat_churn(void)
{
    rec_t rec = { 0 };
    gd_sink_t sink = { s_reply, s_event, &rec };
    gd_registry_t *r = gd_registry_new(&sink);
    int32_t a = s_reg(r, 1), b = s_reg(r, 2);
    uint64_t v;
    gd_registry_join(r, a, "zz", &v);
    gd_registry_join(r, b, "aa", &v);
    gd_registry_join(r, a, "aa", &v);
    gd_waiter_t q = s_w(1);
    gd_registry_barrier(r, a, "aa", 2, &q, &v);
    uint8_t **recs;
    size_t *lens;
    cmp_ok(gd_registry_stat(r, "", &recs, &lens), "==", 2, "two records");
    gd_groupstat_t st;
    cmp_ok(gd_groupstat_decode(recs[0], lens[0], &st), "==", GD_OK, "first record decodes");
    ok(!strcmp(st.name, "aa") && st.size == 2 && st.bar_count == 2 && st.bar_arrived == 1
       && st.nbar_waiters == 1 && st.bar_waiters[0] == a && st.members[0].tid == b
       && !strcmp(st.members[1].host, "host1"), "sorted by name, barrier and members shown");
    gd_groupstat_clear(&st);
    for (int k = 0; k < 2; k++)
        free(recs[k]);
    free(recs);
    free(lens);
    q = s_w(2);
    gd_registry_barrier(r, b, "aa", 2, &q, &v);
    cmp_ok(gd_registry_stat(r, "aa", &recs, &lens), "==", 1, "one record by name");
    gd_groupstat_decode(recs[0], lens[0], &st);
    ok(st.bar_count == 0 && st.nbar_waiters == 0, "no stale waiters after the barrier completed");
    gd_groupstat_clear(&st);
    free(recs[0]);
    free(recs);
    free(lens);
    cmp_ok(gd_registry_stat(r, "nope", &recs, &lens), "==", GIMPI_ENOGROUP, "stat of unknown group");
    for (int k = 0; k < 200000; k++) {
        gd_registry_join(r, b, "churn", &v);
        gd_registry_leave(r, b, "churn", &v);
    }
    cmp_ok(gd_registry_ngroups(r), "==", 2, "200,000 join/leave pairs leave no group behind");
    cmp_ok(rec.bad_versions, "==", 0, "versions consistent through the churn");
    gd_registry_destroy(&r);
}

int main(void)
{
    plan(NO_PLAN);
    test_tids();
    test_reserve();
    test_limits();
    test_membership();
    test_barrier();
    test_freeze();
    test_stat_churn();
    done_testing();
}
