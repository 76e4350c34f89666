/*  pvm_notify.c — PVM's pvm_notify: a message when a task ends (PvmTaskExit), when a host
 *  leaves the virtual machine (PvmHostDelete) or when hosts join it (PvmHostAdd), and
 *  PvmNotifyCancel.
 *
 *  The events come from groupd (groups/gimpi_groups_notify.h): it knows every way a task
 *  ends (pvm_exit, the end of its connection, a heartbeat timeout, the manager's word)
 *  and every change of the host table.  The messages are PVM's: source PVM_CTX_DAEMON_TID
 *  (PVM's pvmd, t80000000), the caller's tag, PvmDataDefault ints — the task's tid, the
 *  host's dtid, or for PvmHostAdd the number of new hosts followed by their dtids.  They
 *  are put in the task's own receive queue (pvm_ctx_inject), from the hooks the context
 *  calls while it waits (pvm_ctx_notify_t): a task blocked in pvm_recv(-1, -1) with no
 *  other traffic gets its message within PVM_CTX_NOTIFY_SLICE_MS of groupd's event.  A
 *  task that has already ended, or a host not in the machine, gets its message at once.
 *  Nothing of this costs a task that never calls pvm_notify anything.  See doc/notify.md.
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "groups/gd_proto.h"
#include "groups/gimpi_groups_notify.h"
#include "gimpi.h"

#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/*  One armed request: what (PvmTaskExit or PvmHostDelete), tag, the tid or dtid. */
typedef struct {
    int what, tag, id;
} entry_t;

/*  The notifications of a context (its pvm_ctx_notify_t arg). */
typedef struct {
    gimpi_groups_t *gd;
    entry_t *e;                 /* armed, in the order they were asked for */
    int n, cap;
    int add_tag;                /* PvmHostAdd: the tag ... */
    int add_left;               /* ... messages still due (-1: no limit, 0: none) */
    int *batch;                 /* count + dtids of the host table change being read */
    int nbatch, batchcap;
    pvm_ctx_t *ctx;             /* the context it is plugged into */
    int wake;                   /* pvm_getfds' epoll descriptor (-1: none yet) ... */
    int wake_sub;               /* ... and the watches' descriptor in it, ... */
    int wake_mon;               /* ... and the monitor's of the connection to groupd */
} notify_t;

/*  Frees the notifications (pvm_ctx_notify_t.destroy). */
static void s_destroy(void *arg)
{
    notify_t *self = arg;
    if (self->wake >= 0)
        close(self->wake);
    free(self->e);
    free(self->batch);
    free(self);
}

/*  Sends the message of one event to the caller's own queue. */
static void s_deliver(pvm_ctx_t *ctx, int tag, const int *vals, int n)
{
    pvm_ctx_inject(ctx, PVM_CTX_DAEMON_TID, tag, PvmBaseContext, vals, n);
}

/*  Removes entry k (its task unwatched). */
static void s_drop(notify_t *self, int k)
{
    if (self->e[k].what == PvmTaskExit)
        gimpi_groups_unwatch_task(self->gd, self->e[k].id);
    memmove(&self->e[k], &self->e[k + 1], (size_t)(self->n - k - 1) * sizeof *self->e);
    self->n--;
}

/*  Delivers and removes every entry armed for (what, id). */
static void s_fire(notify_t *self, pvm_ctx_t *ctx, int what, int id)
{
    for (int k = 0; k < self->n;)
        if (self->e[k].what == what && self->e[k].id == id) {
            s_deliver(ctx, self->e[k].tag, &id, 1);
            s_drop(self, k);
        } else
            k++;
}

/*  A host that one table change adds: collected until the change's last, then one
 *  PvmHostAdd message (count, dtids) when one is due. */
static void s_host_added(notify_t *self, pvm_ctx_t *ctx, const gimpi_groups_event_t *ev)
{
    if (ev->index == 0 || self->nbatch == 0)
        self->nbatch = 1;
    if (self->nbatch >= self->batchcap) {
        int cap = self->batchcap ? 2 * self->batchcap : 8;
        int *b = realloc(self->batch, (size_t)cap * sizeof *b);
        if (!b)
            return;
        self->batch = b;
        self->batchcap = cap;
    }
    self->batch[self->nbatch++] = ev->id;
    if (ev->index + 1 < ev->count)
        return;
    self->batch[0] = self->nbatch - 1;
    if (self->add_left != 0)
        s_deliver(ctx, self->add_tag, self->batch, self->nbatch);
    if (self->add_left > 0)
        self->add_left--;
    self->nbatch = 0;
}

/*  Another groupd was reached (the standby that took over): every host watched for
 *  PvmHostDelete that its host table no longer has was deleted meanwhile, its event lost
 *  with the groupd that published it: its message now. */
static void s_hosts_again(notify_t *self, pvm_ctx_t *ctx, gimpi_t *task)
{
    gimpi_host_t *h = NULL;
    int nh = task ? gimpi_hosts(task, &h) : -1;
    for (int k = 0; nh >= 0 && k < self->n;) {
        bool there = self->e[k].what != PvmHostDelete;
        for (int i = 0; i < nh && !there; i++)
            there = h[i].dtid == self->e[k].id;
        if (there)
            k++;
        else
            s_fire(self, ctx, PvmHostDelete, self->e[k].id);
    }
    free(h);
}

/*  Puts fd into the epoll set in place of *slot's (a descriptor made anew may have the
 *  old one's number: added again, as the old one left the set when it was closed).
 *  0 or -1. */
static int s_wake_put(notify_t *self, int fd, int *slot)
{
    if (*slot >= 0 && *slot != fd)
        epoll_ctl(self->wake, EPOLL_CTL_DEL, *slot, NULL);
    *slot = -1;
    struct epoll_event e = { .events = EPOLLIN, .data.fd = fd };
    if (fd >= 0 && epoll_ctl(self->wake, EPOLL_CTL_ADD, fd, &e) < 0 && errno != EEXIST)
        return -1;
    *slot = fd;
    return 0;
}

/*  The watches' socket and the connection's monitor, which a reconnection makes anew,
 *  into pvm_getfds' set.  0 or a PVM code. */
static int s_wake_refresh(notify_t *self)
{
    int sub = gimpi_groups_watch_fd(self->gd);
    if (sub < 0 || s_wake_put(self, sub, &self->wake_sub) < 0
        || s_wake_put(self, gimpi_groups_monitor_fd(self->gd), &self->wake_mon) < 0)
        return PvmSysErr;
    return 0;
}

/*  pvm_ctx_notify_t.poll: turns the events that have come into messages. */
static int s_poll(void *arg, pvm_ctx_t *ctx, int wait_ms)
{
    notify_t *self = arg;
    gimpi_groups_event_t ev;
    int rc;
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_t *task = ops && ops->task ? ops->task(impl) : NULL;
    if (task)                   /* children dead before registering: their exits first */
        gimpi_spawn_reap(task);
    while ((rc = gimpi_groups_watch_next(self->gd, wait_ms, &ev)) > 0) {
        wait_ms = 0;
        if (ev.kind == GD_EV_TASK_EXIT)
            s_fire(self, ctx, PvmTaskExit, ev.id);
        else if (ev.kind == GD_EV_HOST_DEL)
            s_fire(self, ctx, PvmHostDelete, ev.id);
        else if (ev.kind == GIMPI_GROUPS_EV_HOSTS_AGAIN)
            s_hosts_again(self, ctx, task);
        else
            s_host_added(self, ctx, &ev);
    }
    if (self->wake >= 0)
        s_wake_refresh(self);           /* (a reconnection made the sockets anew) */
    return rc;
}

/*  pvm_ctx_notify_t.may_match: could a notification still match a receive? */
static int s_may_match(void *arg, int src, int tag, int ctxid)
{
    notify_t *self = arg;
    /* a program that polls pvm_getfds' descriptor: what may have woken it is queued now
       (its socket read to the end, which quiets the descriptor), whatever this looks for,
       and the wait looks at the queue again */
    if (self->wake >= 0 && gimpi_groups_watch_pending(self->gd)) {
        s_poll(self, self->ctx, 0);
        return 1;
    }
    if (ctxid != PvmBaseContext || (src != -1 && src != PVM_CTX_DAEMON_TID))
        return 0;
    if (self->add_left != 0 && (tag == -1 || tag == self->add_tag))
        return 1;
    for (int k = 0; k < self->n; k++)
        if (tag == -1 || self->e[k].tag == tag)
            return 1;
    return 0;
}

/*  The context's notifications, made and plugged in on first use; NULL with *rc set. */
static notify_t *s_notify(pvm_ctx_t *ctx, int *rc)
{
    notify_t *self = pvm_ctx_notify_arg(ctx);
    if (self)
        return self;
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_groups_t *gd = ops && ops->groups ? ops->groups(impl) : NULL;
    if (!gd) {
        *rc = PvmSysErr;
        return NULL;
    }
    if (!(self = calloc(1, sizeof *self))) {
        *rc = PvmNoMem;
        return NULL;
    }
    self->gd = gd;
    self->ctx = ctx;
    self->wake = self->wake_sub = self->wake_mon = -1;
    pvm_ctx_notify_t hooks = { s_poll, s_may_match, s_destroy, self };
    pvm_ctx_set_notify(ctx, &hooks);
    return self;
}

/*  Arms one entry.  0 or PvmNoMem. */
static int s_arm(notify_t *self, int what, int tag, int id)
{
    if (self->n == self->cap) {
        int cap = self->cap ? 2 * self->cap : 16;
        entry_t *e = realloc(self->e, (size_t)cap * sizeof *e);
        if (!e)
            return PvmNoMem;
        self->e = e;
        self->cap = cap;
    }
    self->e[self->n++] = (entry_t){ what, tag, id };
    return 0;
}

/*  PvmNotifyCancel of (what, tag) for ids: each armed entry that matches goes, and its
 *  message is delivered as if the event had happened (as PVM does). */
static void s_cancel(notify_t *self, pvm_ctx_t *ctx, int what, int tag, const int *ids, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < self->n; k++)
            if (self->e[k].what == what && self->e[k].tag == tag && self->e[k].id == ids[i]) {
                s_deliver(ctx, tag, &ids[i], 1);
                s_drop(self, k);
                break;
            }
}

/*  PvmTaskExit for tids[n]: a task that is there is watched, one that is not gets its
 *  message now.  0 or a PVM code. */
static int s_task_exit(notify_t *self, pvm_ctx_t *ctx, int tag, const int *tids, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = gimpi_groups_watch_task(self->gd, tids[i]);
        if (rc < 0)
            return rc;
        if (rc == 0)
            s_deliver(ctx, tag, &tids[i], 1);
        else if (s_arm(self, PvmTaskExit, tag, tids[i]) < 0) {
            gimpi_groups_unwatch_task(self->gd, tids[i]);
            return PvmNoMem;
        }
    }
    return 0;
}

/*  PvmHostDelete for dtids[n]: the table is read after the watch is live, and a host not
 *  in it gets its message now.  0 or a PVM code. */
static int s_host_delete(notify_t *self, pvm_ctx_t *ctx, int tag, const int *dtids, int n)
{
    int rc = gimpi_groups_watch_hosts(self->gd);
    void *impl = NULL;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(ctx, &impl);
    gimpi_t *task = ops && ops->task ? ops->task(impl) : NULL;
    gimpi_host_t *h = NULL;
    int nh = rc < 0 ? rc : task ? gimpi_hosts(task, &h) : PvmSysErr;
    for (int i = 0; nh >= 0 && i < n; i++) {
        bool there = false;
        for (int k = 0; k < nh && !there; k++)
            there = h[k].dtid == dtids[i];
        if (!there)
            s_deliver(ctx, tag, &dtids[i], 1);
        else if (s_arm(self, PvmHostDelete, tag, dtids[i]) < 0)
            nh = PvmNoMem;
    }
    free(h);
    return nh < 0 ? nh : 0;
}

/*  Asks for a message with msgtag when the event `what` happens (see the file comment). */
int pvm_notify(int what, int msgtag, int cnt, int *tids)
{
    PVM_TEV_TOP(TEV_NOTIFY, pvm_notify(what, msgtag, cnt, tids), what, msgtag);
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx)
        return pvm_ctx_fail(NULL, "pvm_notify", PvmNoMem);
    bool cancel = (what & PvmNotifyCancel) != 0;
    int kind = what & ~PvmNotifyCancel;
    if (kind == PvmRouteAdd || kind == PvmRouteDelete)
        return pvm_ctx_fail(ctx, "pvm_notify", PvmNotImpl);
    if ((kind != PvmTaskExit && kind != PvmHostDelete && kind != PvmHostAdd) || msgtag < 0)
        return pvm_ctx_fail(ctx, "pvm_notify", PvmBadParam);
    if (kind != PvmHostAdd) {
        if (cnt < 1 || !tids)
            return pvm_ctx_fail(ctx, "pvm_notify", PvmBadParam);
        for (int i = 0; i < cnt; i++)
            if (tids[i] <= 0)
                return pvm_ctx_fail(ctx, "pvm_notify", PvmBadParam);
    }
    int rc = pvm_ctx_enrol(ctx);
    notify_t *self = rc < 0 ? NULL : s_notify(ctx, &rc);
    if (!self)
        return pvm_ctx_fail(ctx, "pvm_notify", rc);
    if (cancel) {
        if (kind == PvmHostAdd)
            self->add_left = 0;
        else
            s_cancel(self, ctx, kind, msgtag, tids, cnt);
        return 0;
    }
    if (kind == PvmTaskExit)
        rc = s_task_exit(self, ctx, msgtag, tids, cnt);
    else if (kind == PvmHostDelete)
        rc = s_host_delete(self, ctx, msgtag, tids, cnt);
    else {
        rc = cnt != 0 ? gimpi_groups_watch_hosts(self->gd) : 0;
        if (rc >= 0) {
            self->add_tag = msgtag;
            self->add_left = cnt < 0 ? -1 : cnt;
        }
    }
    return rc < 0 ? pvm_ctx_fail(ctx, "pvm_notify", rc) : 0;
}

/*  pvm_getfds' descriptor: an epoll set of the data plane's arrival descriptor, the
 *  watches' socket and the monitor of the connection to groupd, so that one descriptor
 *  wakes a program's poll loop for a message, for a notification, and for a lost groupd
 *  (whose reconnection, in the receive that follows, moves the watches) alike (made once;
 *  the sockets are looked at again on each call and after each notification read, in
 *  case they were made anew).  The descriptor, or a PVM code. */
int pvm_notify_wake_fd(pvm_ctx_t *ctx, int arrival_fd)
{
    int rc = 0;
    notify_t *self = s_notify(ctx, &rc);
    if (!self)
        return rc;
    if (self->wake < 0) {
        self->wake = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event e = { .events = EPOLLIN, .data.fd = arrival_fd };
        if (self->wake < 0 || epoll_ctl(self->wake, EPOLL_CTL_ADD, arrival_fd, &e) < 0) {
            if (self->wake >= 0)
                close(self->wake);
            self->wake = -1;
            return PvmSysErr;
        }
    }
    rc = s_wake_refresh(self);
    return rc < 0 ? rc : self->wake;
}
