/*  fuzz_gd_registry.c — libFuzzer target for groupd's rules (groupd/gd_registry.c): the
 *  input is a program of operations by 8 tasks on 4 groups (register, exit, join, leave,
 *  barrier, freeze, gettid, getinst, gsize, snapshot, stat, reserve, register as a reserved
 *  tid); after each one the invariants are checked: gsize is the number of members, gettid
 *  and getinst agree, no two tasks share a tid, every event's
 *  previous version is the group's last one, versions only grow, no waiter is answered
 *  twice.  Built by `make fuzz`, run by `make fuzz-run`; by hand:
 *      clang -g -fsanitize=fuzzer,address,undefined -Iinclude -Ilibgimpi -I. \
 *          fuzz/fuzz_gd_registry.c groupd/gd_registry.c libgimpi/groups/gd_proto.c \
 *          libgimpi/base/gd_hash.c -lzmq -o fuzz_gd_registry
 */
#include "groupd/gd_registry.h"
#include "gimpi.h"

#include <stdlib.h>
#include <string.h>

enum { NTASKS = 8, NGROUPS = 4, MAXW = 4096 };

typedef struct {
    uint64_t last[NGROUPS];     /* last version per group */
    uint64_t top;               /* highest version seen */
    uint8_t answered[MAXW];     /* replies per reqid */
} state_t;

static const char *s_names[NGROUPS] = { "a", "b", "ab", "" };

static int s_gi(const char *name)
{
    for (int k = 0; k < NGROUPS; k++)
        if (!strcmp(s_names[k], name))
            return k;
    abort();
}

static void s_reply(void *arg, const gd_waiter_t *w, int32_t status, uint64_t version)
{
    (void)status, (void)version;
    state_t *st = arg;
    if (w->reqid < MAXW && st->answered[w->reqid]++)
        abort();                                /* answered twice */
}

static void s_event(void *arg, const char *group, uint8_t kind, uint64_t prev, uint64_t version,
                    int32_t inst, int32_t tid, int32_t extra)
{
    (void)inst, (void)tid, (void)extra;
    state_t *st = arg;
    if (kind == GD_EV_MARK)
        return;
    int g = s_gi(group);
    if ((prev && prev != st->last[g]) || version <= prev || version <= st->top)
        abort();
    st->last[g] = version;
    st->top = version;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    state_t st = { 0 };
    gd_sink_t sink = { s_reply, s_event, &st };
    gd_registry_t *r = gd_registry_new(&sink);
    int32_t tids[NTASKS] = { 0 };
    int32_t base = -1;          /* the last RESERVE's base */
    uint8_t token[GD_TOKEN_SIZE] = { 0 };   /* ... and its token */
    uint32_t reqid = 1;
    for (size_t i = 0; i + 2 < size && reqid < MAXW; i += 3) {
        int op = data[i] % 13, t = data[i + 1] % NTASKS, g = (data[i + 1] >> 3) % NGROUPS;
        int arg = (int8_t)data[i + 2];
        const char *name = s_names[g];
        uint64_t v;
        gd_waiter_t w = { .keylen = 1, .reqid = reqid++ };
        w.key[0] = (uint8_t)t;
        switch (op) {
        case 0: {
            gd_taskinfo_t info = { .ospid = t };
            uint8_t key[2] = { 'k', (uint8_t)t };
            int32_t tid = gd_registry_register(r, key, 2, &info);
            if (tid <= 0 || (tids[t] && tids[t] != tid))
                abort();
            tids[t] = tid;
            break;
        }
        case 1:
            if (tids[t]) {
                gd_registry_remove(r, tids[t], arg & 1);
                tids[t] = 0;
            }
            break;
        case 2: gd_registry_join(r, tids[t], name, &v); break;
        case 3: gd_registry_leave(r, tids[t], name, &v); break;
        case 4: gd_registry_barrier(r, tids[t], name, arg % 6, &w, &v); break;
        case 5: gd_registry_freeze(r, tids[t], name, arg % 6, &w, &v); break;
        case 6: gd_registry_gettid(r, name, arg, &v); break;
        case 7: gd_registry_getinst(r, name, arg, &v); break;
        case 8: gd_registry_gsize(r, name, &v); break;
        case 9: {
            uint8_t **recs;
            size_t *lens;
            int n = gd_registry_stat(r, arg & 1 ? name : "", &recs, &lens);
            for (int k = 0; k < n; k++) {
                gd_groupstat_t gs;
                if (gd_groupstat_decode(recs[k], lens[k], &gs) != GD_OK)
                    abort();
                if (gs.bar_count == 0 && gs.nbar_waiters != 0)
                    abort();                    /* stale waiters */
                gd_groupstat_clear(&gs);
                free(recs[k]);
            }
            if (n >= 0) {
                free(recs);
                free(lens);
            }
            break;
        }
        case 11: {
            int32_t b = gd_registry_reserve(r, arg & 1 ? "key" : "", arg & 1 ? 3 : 0,
                                            (arg >> 1) % 5, 1 + (arg >> 4) % 3, token);
            if (b >= 0)
                base = b;
            break;
        }
        case 12: {
            gd_taskinfo_t info = { .ospid = t };
            uint8_t key[2] = { 'k', (uint8_t)t };
            int32_t want = base + 1 + (arg & 3);
            uint8_t wrong[GD_TOKEN_SIZE] = { 0 };
            int32_t tid = gd_registry_register_tid(r, key, 2, &info, want,
                                                   arg & 4 ? wrong : token);
            if (tid > 0 && (tid != want || (tids[t] && tids[t] != tid)))
                abort();
            if (tid > 0)
                tids[t] = tid;
            break;
        }
        default: break;
        }
        for (int a = 0; a < NTASKS; a++)        /* no two tasks share a tid */
            for (int b = a + 1; b < NTASKS; b++)
                if (tids[a] && tids[a] == tids[b])
                    abort();
        /* invariants of every group */
        for (int k = 0; k < NGROUPS - 1; k++) {
            uint8_t *blob;
            size_t len;
            int size = gd_registry_snapshot(r, s_names[k], &v, &blob, &len);
            if (size == GIMPI_ENOGROUP)
                continue;
            if (size <= 0 || len != GD_SNAP_HEAD + (size_t)size * 8)
                abort();                        /* empty groups are deleted */
            for (size_t off = GD_SNAP_HEAD; off < len; off += 8) {
                int32_t inst = (int32_t)gimpi_be_get32(blob + off);
                int32_t tid = (int32_t)gimpi_be_get32(blob + off + 4);
                if (gd_registry_gettid(r, s_names[k], inst, &v) != tid
                    || gd_registry_getinst(r, s_names[k], tid, &v) != inst)
                    abort();
            }
            if (gd_registry_gsize(r, s_names[k], &v) != size)
                abort();
            free(blob);
        }
    }
    gd_registry_destroy(&r);
    return 0;
}
