/*  gd_serve_orphans.c — the clients a restarted groupd knows from its journal but has not
 *  heard from yet (see gd_serve.h): after a replay every task and client is an orphan
 *  until it makes a request; when --reattach's time is up, a task whose process still
 *  runs stays (it has not needed groupd), any other is gone: its task exits, a
 *  manager's place is freed, its journaled replies are forgotten.
 */
#include "config.h"
#include "groupd/gd_serve.h"
#include "groupd/gd_record.h"
#include "base/gimpi_clock.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*  Notes a replayed client as an orphan (visitors of the registry and the table). */
static void s_orphan_task_cb(void *arg, const uint8_t *key, size_t keylen, int32_t tid)
{
    groupd_t *self = arg;
    gd_hash_put(self->orphans, key, keylen, (void *)(intptr_t)(tid ? tid : -1));
}

static void s_orphan_client_cb(void *arg, const uint8_t *key, size_t keylen, uint32_t reqid,
                               const uint8_t *reply, size_t len)
{
    (void)reqid, (void)reply, (void)len;
    groupd_t *self = arg;
    if (!gd_hash_get(self->orphans, key, keylen))
        gd_hash_put(self->orphans, key, keylen, (void *)(intptr_t)-1);
}

/*  After a replay: every client known is an orphan until it makes a request. */
size_t gd_serve_orphans_begin(groupd_t *self)
{
    assert(self);
    gd_hash_destroy(&self->orphans);
    if (!(self->orphans = gd_hash_new()))
        return 0;
    gd_registry_foreach_task(self->reg, s_orphan_task_cb, self);
    if (self->dedup)
        gd_dedup_foreach(self->dedup, s_orphan_client_cb, self);
    self->restarted = true;
    self->restarted_ms = gimpi_now_ms();
    size_t n = gd_hash_size(self->orphans);
    self->orphan_deadline_ms = n ? gimpi_now_ms() + (self->reattach_ms > 0 ? self->reattach_ms
                                                                       : GD_SERVE_REATTACH_MS)
                                 : 0;
    return n;
}

/*  Milliseconds until the orphans are due, -1 when there are none. */
int gd_serve_orphans_due_ms(groupd_t *self)
{
    assert(self);
    if (!self->orphan_deadline_ms || !self->orphans || gd_hash_size(self->orphans) == 0)
        return -1;
    int64_t left = self->orphan_deadline_ms - gimpi_now_ms();
    return left > 0 ? (int)(left > INT32_MAX ? INT32_MAX : left) : 0;
}

/*  True when the process of a replayed task still runs: on ipc every peer is a process
 *  of ours on this machine (the ZAP handler checks), so its OS pid tells.  On tcp its pid
 *  is another host's; with a manager (gimpirun), which tells us of every task that ends
 *  (TASK_EXIT, told again to a groupd it manages anew), a registered task not yet back is
 *  one that has not needed us since (computing, or waiting on the data plane): alive.
 *  Without one, it is gone once --reattach is over. */
static bool s_orphan_alive(groupd_t *self, int32_t tid)
{
    gd_taskinfo_t info;
    if (gd_registry_lookup(self->reg, tid, &info) < 0)
        return false;
    if (strncmp(self->endpoint, "ipc://", 6))
        return gd_vm_has_manager(self->vm);
    if (info.ospid <= 0)
        return false;
    return kill(info.ospid, 0) == 0 || errno == EPERM;
}

/*  One orphan's time is up (hash visitor): a task whose process still runs (it has not
 *  needed groupd since the restart) stays an orphan, looked at again a second later;
 *  any other is gone: its task exits, a manager's place is free, its replies are
 *  forgotten. */
static void s_expire_cb(const void *k, size_t l, void *v, void *a)
{
    groupd_t *self = a;
    int32_t tid = (int32_t)(intptr_t)v;
    if (tid > 0 && s_orphan_alive(self, tid) && gd_hash_put(self->orphans, k, l, v) == 0)
        return;
    if (tid > 0 && gd_registry_tid_of(self->reg, k, l) == tid) {
        if (self->verbose)
            fprintf(stderr, "groupd: task t%x did not come back after the restart: gone\n",
                    (unsigned)tid);
        gd_serve_task_gone(self, tid);
    }
    gd_vm_conn_gone(self->vm, gd_record_pseudo_conn(k, l));
    if (self->dedup)
        gd_dedup_forget(self->dedup, k, l);
}

/*  The orphans' time is up. */
void gd_serve_expire_orphans(groupd_t *self)
{
    assert(self);
    if (gd_serve_orphans_due_ms(self) != 0)
        return;
    gd_hash_t *orphans = self->orphans;
    self->orphans = gd_hash_new();
    gd_hash_foreach(orphans, s_expire_cb, self);
    gd_hash_destroy(&orphans);
    self->orphan_deadline_ms = self->orphans && gd_hash_size(self->orphans)
                             ? gimpi_now_ms() + GD_SERVE_ORPHAN_CHECK_MS : 0;
}

