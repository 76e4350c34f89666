/*  gimpi_task.c — the native API's entry point: a task joins its job (gimpi_job: tables and
 *  listening socket from gimpirun, or a one-task job of its own), brings its data plane up
 *  (gimpi_msg) with groupd's tids, registers with groupd under its tid, and at the end
 *  leaves as IMPI prescribes: the world barrier, then PK_FINI.  The task-level group
 *  operations (gimpi_barrier ... gimpi_scatter) are here too: they run gimpi_coll_group_*
 *  on the task's own coll state and groupd connection.
 *
 *  Tids: a gimpirun task gets the job's tid base from the launcher (groupd reserved the
 *  block); a task started from the shell reserves a block of one itself (starting groupd
 *  if none runs, as a PVM task starts pvmd); GIMPI_TIDBASE in the environment overrides
 *  both.  tid = base + world rank + 1.  Without groupd the task warns once, uses
 *  tid = rank + 1, and its group calls return GIMPI_ESYSERR.
 */
#include "gimpi.h"
#include "base/gimpi_bind.h"
#include "base/gimpi_key.h"
#include "task/gimpi_job.h"
#include "task/gimpi_catch.h"
#include "task/gimpi_kids.h"
#include "coll/impi_coll.h"
#include "groups/gd_proto.h"
#include "base/gimpi_tunables.h"

#include <arpa/inet.h>
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

struct gimpi_t {
    gimpi_job_t job;
    gimpi_msg_t *msg;
    gimpi_groups_t *groups;     /* registered under the data plane's tid */
    gimpi_groups_t *vgroups;    /* the verifier's own connection (never registers), or NULL */
    pthread_mutex_t vmu;        /* the verifier may be called by two threads at once */
    gimpi_coll_t *coll;         /* group operations' state (gimpi_coll.h) */
    int connect_ms;             /* GIMPI_CONNECT_TIMEOUT */
    int parent;                 /* spawner's tid, or GIMPI_ENOPARENT */
    int *siblings;              /* tasks of the same spawn (spawned tasks), or NULL */
    int nsiblings;
    char hostname[256];         /* this host's name in the virtual machine */
    gimpi_catch_t *catch;       /* children's output (gimpi_catchout) */
    gimpi_kids_t *kids;         /* children spawned here that have not registered */
};

/*  Seconds from the environment, else a default, as milliseconds. */
static int s_timeout_ms(const char *name, int dflt_s)
{
    const char *v = gimpi_env(name);
    long s = v && *v ? strtol(v, NULL, 10) : 0;
    return (int)((s > 0 && s < 86400 ? s : dflt_s) * 1000);
}

/*  The tid base: GIMPI_TIDBASE, else the launcher's, else (shell-started) a fresh block of
 *  one from groupd.  -1 when there is none (groupd unreachable).  The token of the block
 *  goes to token ("" when this task reserved the block itself: the groups client keeps
 *  that token): GIMPI_TID_TOKEN with GIMPI_TIDBASE or GIMPI_TID, else the launcher's. */
static int s_tidbase(gimpi_t *self, char *token, size_t toksize)
{
    const char *tok = gimpi_env(GIMPI_ENV_TID_TOKEN);
    snprintf(token, toksize, "%s", tok ? tok : "");
    if (tok)
        unsetenv(GIMPI_ENV_TID_TOKEN);  /* children of this task get their own */
    const char *env = gimpi_env("GIMPI_TIDBASE");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        unsetenv("GIMPI_TIDBASE");      /* children of this task are not part of its job */
        if (!*end && v >= 0 && v < (1L << 30))
            return (int)v;
        fprintf(stderr, "gimpi: warning: ignoring bad GIMPI_TIDBASE '%s'\n", env);
    }
    if (self->job.launched) {
        snprintf(token, toksize, "%s", self->job.tidtoken);
        return self->job.tidbase;
    }
    const char *tid = gimpi_env(GIMPI_ENV_TID);    /* a spawned task: its spawner reserved it */
    if (tid && *tid) {
        char *end;
        long v = strtol(tid, &end, 10);
        if (!*end && v > 0 && v < INT32_MAX)
            return (int)v - 1;
        fprintf(stderr, "gimpi: warning: ignoring bad %s '%s'\n", GIMPI_ENV_TID, tid);
    }
    token[0] = 0;
    int base = gimpi_groups_reserve(self->groups, "", 1);
    return base < 0 ? -1 : base;
}

/*  The groups client: at GIMPI_GROUPD, or at the per-user endpoint in the private runtime
 *  directory, whose check gives the message when it fails (a directory made by someone
 *  else, for one).  NULL with a message in err. */
static gimpi_groups_t *s_groups_new(char *err, size_t errsize)
{
    char ep[GD_MAX_ENDPOINT];
    const char *env = gimpi_env("GIMPI_GROUPD");
    if (!(env && *env) && !gd_default_endpoint(ep, sizeof ep, err, errsize))
        return NULL;
    gimpi_groups_t *g = gimpi_groups_new(env && *env ? env : ep, NULL);
    if (!g)
        snprintf(err, errsize, "out of memory, or GIMPI_GROUPD too long");
    return g;
}

/*  The data plane's verifier of incoming introductions: the claimed tid must be
 *  registered with groupd at the contact the caller gave (a member of the job that holds
 *  the key cannot pass for another task).  It runs in whichever thread drives the data
 *  plane, maybe while the application uses the task's groupd connection, so it asks on
 *  a connection of its own, made at the first use. */
static int s_verify(void *arg, int tid, const uint8_t addr[16], int port)
{
    gimpi_t *self = arg;
    gimpi_task_info_t info;
    pthread_mutex_lock(&self->vmu);
    if (!self->vgroups)
        self->vgroups = gimpi_groups_new(gimpi_groups_endpoint(self->groups), NULL);
    int rc = self->vgroups ? gimpi_groups_lookup_only(self->vgroups, tid, &info) : GIMPI_ENOMEM;
    pthread_mutex_unlock(&self->vmu);
    if (rc)
        return rc;
    return info.port == port && memcmp(info.addr, addr, 16) == 0 ? 0 : GIMPI_EMISMATCH;
}

/*  Tells groupd this task's parent and program, for pvm_tasks (one more round trip at
 *  enrolment; a failure only leaves those fields empty).  It runs right after the
 *  registration, before s_spawned has read the spawner's tid (that needs the tid this
 *  registration gave), so the parent comes from the spawner's variable itself: the
 *  spawner, as PVM's ti_ptid, even when calling it back then fails. */
static void s_taskinfo(gimpi_t *self)
{
    const char *p = gimpi_env(GIMPI_ENV_PARENT);
    long ptid = p && *p ? strtol(p, NULL, 10) : 0;
    char exe[4096], *name = exe;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        name = slash + 1;
    gimpi_groups_taskinfo(self->groups, ptid > 0 && ptid < INT32_MAX ? (int)ptid : 0, name);
}

/*  Registers with groupd under the data plane's tid (identity: the IMPI proc and host). */
static void s_groups_up(gimpi_t *self)
{
    char token[GIMPI_GROUPS_TOKEN_LEN + 8];
    int base = s_tidbase(self, token, sizeof token);
    const char *why = "it reserved no tid for this task";
    if (base >= 0 && gimpi_msg_set_tidbase(self->msg, base) == 0) {
        const impi_tables_t *t = self->job.tables;
        const impi_host_info_t *h = &t->hosts[self->job.host_rank];
        gimpi_groups_set_identity(self->groups, t->procs[self->job.world_rank].id.hostid,
                                  t->procs[self->job.world_rank].id.pid, h->addr, h->port);
        if (!*token || gimpi_groups_set_tid_token(self->groups, gimpi_msg_mytid(self->msg),
                                                  token) < 0)
            gimpi_groups_set_tid(self->groups, gimpi_msg_mytid(self->msg));
        gimpi_key_wipe(token, sizeof token);
        int rc = gimpi_group_mytid(self->groups);
        if (rc > 0) {
            gimpi_msg_set_verifier(self->msg, s_verify, self);
            s_taskinfo(self);
            return;
        }
        why = gimpi_strerror(rc);
    }
    char cause[700] = "";
    if (base < 0)                       /* groupd's own words: no program, unreachable */
        gimpi_groups_errmsg(self->groups, cause, sizeof cause);
    gimpi_groups_disable(self->groups);
    if (*cause)                         /* it names groupd's endpoint itself */
        fprintf(stderr, "gimpi: warning: t%x: its group calls fail: %s\n",
                (unsigned)gimpi_msg_mytid(self->msg), cause);
    else
        fprintf(stderr, "gimpi: warning: groupd at %s unavailable to t%x: %s; its group "
                "calls fail\n", gimpi_groups_endpoint(self->groups),
                (unsigned)gimpi_msg_mytid(self->msg), why);
}

/*  The data plane's send hook: groupd takes this task's deferred leaves before any
 *  message leaves the task (gimpi_group.h), and the message carries the highest groupd
 *  version the task has seen, so that its receiver's cache answers no older (§6). */
static void s_before_send(void *arg)
{
    gimpi_t *self = arg;
    gimpi_groups_flush(self->groups);
    gimpi_msg_set_stamp(self->msg, gimpi_groups_seen(self->groups));
}

/*  The group cache's stamp source: the highest stamp that reached the data plane. */
static uint64_t s_stamp_in(void *msg)
{
    return gimpi_msg_stamp_in(msg);
}

/*  The data plane's resolver: groupd's LOOKUP; a tid reserved but not registered yet (a
 *  task being spawned) is asked again, backing off, for up to GIMPI_CONNECT_TIMEOUT. */
static int s_resolve(void *arg, int tid, uint8_t addr[16], int *port)
{
    gimpi_t *self = arg;
    struct timespec pause = { 0, 1000000 };
    int64_t waited_ns = 0;
    for (;;) {
        gimpi_task_info_t info;
        int rc = gimpi_group_lookup(self->groups, tid, &info);
        if (rc == 0) {
            memcpy(addr, info.addr, 16);
            *port = info.port;
            return info.port > 0 ? 0 : GIMPI_ENOTASK;   /* registered without a contact */
        }
        if (rc != GIMPI_ENOTFOUND)
            return rc;
        if (waited_ns / 1000000 >= self->connect_ms)
            return GIMPI_ESYSERR;
        nanosleep(&pause, NULL);
        waited_ns += pause.tv_nsec;
        if (pause.tv_nsec < 100000000)
            pause.tv_nsec *= 2;
    }
}

/*  The data plane's liveness hook: does groupd still know tid?  A task it dropped (dead,
 *  stopped past its heartbeat, cut off) is gone; one reserved and not registered yet is
 *  being born; any other answer (groupd itself unreachable) is no verdict.  Our own
 *  children that died unregistered are told to groupd first (a blocked call asks every
 *  500 ms: their exits are published while we wait for something else). */
static int s_alive(void *arg, int tid)
{
    gimpi_t *self = arg;
    gimpi_kids_reap(self->kids, self->groups);
    gimpi_task_info_t info;
    int rc = gimpi_group_lookup(self->groups, tid, &info);
    return rc == 0 || rc == GIMPI_ENOTFOUND ? 1 : rc == GIMPI_ENOTASK ? 0 : -1;
}

/*  A spawned task: its parent (called at once at the contact it was given) and siblings
 *  from the spawner's environment (doc/spawn.md), which its own children do not inherit. */
static void s_spawned(gimpi_t *self)
{
    self->parent = GIMPI_ENOPARENT;
    const char *p = gimpi_env(GIMPI_ENV_PARENT), *c = gimpi_env(GIMPI_ENV_PARENT_CONTACT);
    const char *sib = gimpi_env(GIMPI_ENV_SIBLINGS);
    if (p && *p && c && *c) {
        int tid = atoi(p), port = 0;
        char ip[64];
        struct in_addr ia;
        if (tid > 0 && sscanf(c, "%63[0-9.]:%d", ip, &port) == 2 && inet_pton(AF_INET, ip, &ia) == 1) {
            uint8_t addr[16];
            impi_addr16_from_ipv4(addr, ntohl(ia.s_addr));
            if (gimpi_msg_connect(self->msg, tid, addr, port) == 0)
                self->parent = tid;
        }
        if (self->parent < 0)
            fprintf(stderr, "gimpi: warning: bad spawner contact %s=%s %s=%s\n",
                    GIMPI_ENV_PARENT, p, GIMPI_ENV_PARENT_CONTACT, c);
    }
    if (sib && *sib) {
        int n = 1;
        for (const char *q = sib; *q; q++)
            n += *q == ',';
        self->siblings = calloc((size_t)n, sizeof *self->siblings);
        for (const char *q = sib; self->siblings && *q && self->nsiblings < n;) {
            char *end;
            long v = strtol(q, &end, 10);
            if (end == q || v <= 0)
                break;
            self->siblings[self->nsiblings++] = (int)v;
            q = *end == ',' ? end + 1 : end;
        }
    }
    unsetenv(GIMPI_ENV_TID);
    unsetenv(GIMPI_ENV_PARENT);
    unsetenv(GIMPI_ENV_PARENT_CONTACT);
    unsetenv(GIMPI_ENV_SIBLINGS);
}

/*  Frees what gimpi_init made before the job was joined; returns NULL. */
static gimpi_t *s_init_undo(gimpi_t *self)
{
    gimpi_catch_destroy(&self->catch);
    gimpi_kids_destroy(&self->kids);
    free(self);
    return NULL;
}

/*  Joins the job and brings the data plane up. */
gimpi_t *gimpi_init(char *err, size_t errsize)
{
    gimpi_t *self = calloc(1, sizeof *self);
    if (self && (!(self->catch = gimpi_catch_new()) || !(self->kids = gimpi_kids_new())))
        self = s_init_undo(self);
    if (!self) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    int timeout = s_timeout_ms("GIMPI_CONNECT_TIMEOUT", 60);
    gimpi_key_t key;                    /* what introductions of dynamic hosts prove */
    char kerr[GIMPI_KEY_ERRLEN];
    if (gimpi_key_default(&key, NULL, 0, kerr, sizeof kerr) < 0) {
        snprintf(err, errsize, "no job key: %s", kerr);
        return s_init_undo(self);
    }
    gimpi_bind_settle();                /* the core's claim ends with this task */
    if (gimpi_job_init(&self->job, timeout, err, errsize) < 0) {
        gimpi_key_wipe(&key, sizeof key);
        return s_init_undo(self);
    }
    pthread_mutex_init(&self->vmu, NULL);
    int fd = self->job.listen_fd, lfd = self->job.local_fd;
    self->job.listen_fd = self->job.local_fd = -1;  /* the data plane owns them from now on */
    self->msg = gimpi_msg_new_local(self->job.tables, self->job.world_rank, fd, lfd, timeout,
                                    err, errsize);
    if (self->msg)
        gimpi_msg_set_key(self->msg, key.bytes);
    gimpi_key_wipe(&key, sizeof key);
    self->groups = self->msg ? s_groups_new(err, errsize) : NULL;
    self->coll = self->msg ? gimpi_coll_new(self->msg) : NULL;
    if (!self->msg || !self->groups || !self->coll) {
        gimpi_abort(&self);
        return NULL;
    }
    self->connect_ms = timeout;
    s_groups_up(self);
    gimpi_msg_set_resolver(self->msg, s_resolve, self);
    gimpi_msg_set_send_hook(self->msg, s_before_send, self);
    gimpi_groups_set_stamp_source(self->groups, s_stamp_in, self->msg);
    gimpi_msg_set_alive_hook(self->msg, s_alive, self);
    s_spawned(self);
    return self;
}

/*  Children dead before registering told, caught children's output ended (bounded),
 *  world barrier, PK_FINI, free. */
int gimpi_finalize(gimpi_t **self_p)
{
    assert(self_p);
    gimpi_t *self = *self_p;
    if (!self)
        return 0;
    gimpi_kids_reap(self->kids, self->groups);
    gimpi_catch_wait(self->catch, s_timeout_ms("GIMPI_CATCHOUT_WAIT", 30));
    int timeout = s_timeout_ms("GIMPI_FINALIZE_TIMEOUT", 60);
    gimpi_msg_set_timeout(self->msg, timeout);
    int rc = impi_world_barrier(self->msg);
    int rc2 = gimpi_msg_finalize(self->msg, timeout);
    gimpi_abort(self_p);
    return rc ? rc : rc2;
}

/*  Frees without the barrier. */
void gimpi_abort(gimpi_t **self_p)
{
    assert(self_p);
    gimpi_t *self = *self_p;
    if (!self)
        return;
    gimpi_msg_destroy(&self->msg);      /* first: its resolver uses the groups object */
    gimpi_groups_destroy(&self->groups);
    gimpi_groups_destroy(&self->vgroups);
    pthread_mutex_destroy(&self->vmu);
    free(self->siblings);
    gimpi_coll_destroy(&self->coll);
    gimpi_job_fini(&self->job);
    gimpi_catch_destroy(&self->catch);
    gimpi_kids_destroy(&self->kids);
    free(self);
    *self_p = NULL;
}

/*  The children spawned here that have not registered (gimpi_spawn.c). */
gimpi_kids_t *gimpi_task_kids(gimpi_t *self)
{
    assert(self);
    return self->kids;
}

/*  Starts or stops catching children's output (gimpi_catch.c). */
int gimpi_catchout(gimpi_t *self, FILE *to, int flags)
{
    assert(self);
    return gimpi_catch_set(self->catch, to, flags);
}

/*  Waits, bounded, for the caught children's output to end. */
int gimpi_catchout_wait(gimpi_t *self, int timeout_ms)
{
    assert(self);
    return gimpi_catch_wait(self->catch, timeout_ms);
}

/*  The collector of children's output, for gimpi_spawn. */
gimpi_catch_t *gimpi_task_catch(gimpi_t *self)
{
    assert(self);
    return self->catch;
}

/*  The data plane. */
gimpi_msg_t *gimpi_msg(gimpi_t *self)
{
    assert(self);
    return self->msg;
}

/*  The task's connection to groupd. */
gimpi_groups_t *gimpi_groups(gimpi_t *self)
{
    assert(self);
    return self->groups;
}

/*  The group operations' state. */
gimpi_coll_t *gimpi_coll(gimpi_t *self)
{
    assert(self);
    return self->coll;
}

/*  World rank. */
int gimpi_rank(gimpi_t *self)
{
    assert(self);
    return self->job.world_rank;
}

/*  Tasks in the job. */
int gimpi_size(gimpi_t *self)
{
    assert(self);
    return self->job.tables->nprocs;
}

/*  The spawner's tid. */
int gimpi_parent(gimpi_t *self)
{
    assert(self);
    return self->parent;
}

/*  The tasks started by the same spawn. */
int gimpi_siblings(gimpi_t *self, const int **tids)
{
    assert(self);
    if (tids)
        *tids = self->siblings;
    return self->nsiblings;
}

/*  The groupd endpoint the task uses (for its children). */
const char *gimpi_groupd_endpoint(gimpi_t *self)
{
    assert(self);
    return gimpi_groups_endpoint(self->groups);
}

/*  This host's name in the virtual machine: GIMPI_HOST (the launcher's or agent's name for
 *  it), else the system's host name; read once, on first use. */
const char *gimpi_hostname(gimpi_t *self)
{
    assert(self);
    if (!self->hostname[0]) {
        const char *h = gimpi_env(GIMPI_ENV_HOST);
        if (h && *h)
            snprintf(self->hostname, sizeof self->hostname, "%s", h);
        else if (gethostname(self->hostname, sizeof self->hostname - 1) != 0)
            snprintf(self->hostname, sizeof self->hostname, "localhost");
    }
    return self->hostname;
}

/*  pvm_barrier for a task. */
int gimpi_barrier(gimpi_t *self, const char *group, int count)
{
    assert(self);
    return gimpi_coll_group_barrier(self->coll, self->groups, group, count);
}

/*  pvm_bcast for a task (an ordinary message on GIMPI_CID_P2P). */
int gimpi_bcast(gimpi_t *self, const char *group, int tag, const void *buf, size_t len)
{
    assert(self);
    return gimpi_coll_group_bcast(self->coll, self->groups, group, GIMPI_CID_P2P, tag, buf,
                                  len);
}

/*  pvm_reduce for a task. */
int gimpi_reduce(gimpi_t *self, const char *group, int op, gimpi_reduce_fn fn, void *data,
                 int count, int datatype, int tag, int root)
{
    assert(self);
    return gimpi_coll_group_reduce(self->coll, self->groups, group, op, fn, data, count,
                                   datatype, tag, root);
}

/*  pvm_gather for a task. */
int gimpi_gather(gimpi_t *self, const char *group, void *result, const void *data, int count,
                 int datatype, int tag, int root)
{
    assert(self);
    return gimpi_coll_group_gather(self->coll, self->groups, group, result, data, count,
                                   datatype, tag, root);
}

/*  pvm_scatter for a task. */
int gimpi_scatter(gimpi_t *self, const char *group, void *result, const void *data, int count,
                  int datatype, int tag, int root)
{
    assert(self);
    return gimpi_coll_group_scatter(self->coll, self->groups, group, result, data, count,
                                    datatype, tag, root);
}
