/*  run_trace.c — gimpirun -trace FILE.json: the job's trace from start to merge.
 *
 *  Every task records into one directory, FILE.json.d (GIMPI_TRACE, the same path on
 *  every host), one file per task.  When the job's tasks have ended, each other host's
 *  agent sends the files of its directory here (TRACE_GET), unless it is this one, on a
 *  shared file system (the agent sees a file made here for it to find).  Times in a file
 *  are its host's CLOCK_REALTIME; the header's offset (GIMPI_TRACE_OFFSET, "ns,error"
 *  that this file hands to each host's tasks) puts them on this machine's clock, the
 *  job's reference.  The offset is measured as pvm_hostsync does: round trips to the
 *  host's agent (TIME, answered at once with its clock in ns), the one with the smallest
 *  round trip kept, the offset taken at its middle, half the round trip its error bound.
 *  When the job ends the files are merged (trace_merge.c; a file that a task killed while
 *  writing left cut short is merged up to its last whole record) and then removed.
 */
#include "config.h"
#include "programs/run_trace.h"
#include "programs/run_hosts.h"
#include "programs/trace_merge.h"
#include "base/gimpi_tev.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TRACE_ENV_OFFSET "GIMPI_TRACE_OFFSET="

enum {
    TRACE_SAMPLES = 8,          /* round trips per host; the shortest one counts */
    TRACE_SYNC_MS = 5000,       /* the longest the startup waits for the hosts' clocks */
    TRACE_COLLECT_MS = 60000,   /* the longest the job's end waits for the hosts' files */
};

/*  One host's clock, and its files at the job's end. */
typedef struct {
    enum { CLK_NONE, CLK_MEASURING, CLK_DONE, CLK_FAILED } state;
    bool asked, answered;       /* TRACE_GET sent; TRACE_DONE came */
    int n;                      /* samples answered */
    int id;                     /* the sample awaited */
    int64_t sent;               /* our clock when it was asked (ns) */
    int64_t rtt, off;           /* the best sample: its round trip, the offset it gave */
} trace_clock_t;

struct run_trace_t {
    char *json;                 /* the merged file */
    char *dir;                  /* the tasks' files (absolute) */
    trace_clock_t *clocks;      /* by host index */
    int nclocks;
    int next_id;
    char token[64];             /* the file an agent finds in a shared directory */
    bool collecting, collected; /* the job's end: hosts asked for their files; done */
    int timer;                  /* the bound on their answers */
    bool write_failed;          /* a received file could not be written (said once) */
};

/*  CLOCK_REALTIME in ns. */
static int64_t s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*  Removes the task files in dir (a former job's, or the merged ones). */
static void s_clean(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t sl = strlen(GIMPI_TEV_SUFFIX);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > sl && !strcmp(e->d_name + l - sl, GIMPI_TEV_SUFFIX)) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

run_trace_t *run_trace_new(const char *json, char *err, size_t errsize)
{
    assert(json);
    char cwd[PATH_MAX], dir[PATH_MAX];
    if (json[0] != '/' && !getcwd(cwd, sizeof cwd)) {
        snprintf(err, errsize, "-trace: the current directory: %s", strerror(errno));
        return NULL;
    }
    if (snprintf(dir, sizeof dir, "%s%s%s.d", json[0] == '/' ? "" : cwd,
                 json[0] == '/' ? "" : "/", json) >= (int)sizeof dir) {
        snprintf(err, errsize, "-trace: %s: name too long", json);
        return NULL;
    }
    struct stat st;
    if (mkdir(dir, 0777) < 0 && (errno != EEXIST || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))) {
        snprintf(err, errsize, "-trace: cannot make the tasks' directory %s: %s", dir,
                 strerror(errno));
        return NULL;
    }
    s_clean(dir);
    run_trace_t *self = calloc(1, sizeof *self);
    if (self && (!(self->json = strdup(json)) || !(self->dir = strdup(dir))))
        run_trace_destroy(&self);
    if (!self) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    setenv("GIMPI_TRACE", self->dir, 1);
    setenv("GIMPI_TRACE_OFFSET", "0,0", 1);     /* this host: the reference clock */
    return self;
}

void run_trace_destroy(run_trace_t **self_p)
{
    assert(self_p);
    run_trace_t *self = *self_p;
    if (!self)
        return;
    free(self->json);
    free(self->dir);
    free(self->clocks);
    free(self);
    *self_p = NULL;
}

/*  Asks host i's agent for a sample of its clock. */
static void s_ask(launcher_t *self, int i)
{
    trace_clock_t *c = &self->trace->clocks[i];
    size_t len;
    c->id = ++self->trace->next_id;
    c->sent = s_now();
    if (run_hosts_send(self->hosts[i], vmw_encode(&len, AGENT_TIME, c->id)) < 0)
        c->state = c->n ? CLK_DONE : CLK_FAILED;
}

/*  Makes room for every host's clock: 0, or -1 when out of memory. */
static int s_grow(launcher_t *self)
{
    run_trace_t *tr = self->trace;
    if (tr->nclocks < self->nhosts) {
        trace_clock_t *c = realloc(tr->clocks, (size_t)self->nhosts * sizeof *c);
        if (!c)
            return -1;
        memset(c + tr->nclocks, 0, (size_t)(self->nhosts - tr->nclocks) * sizeof *c);
        tr->clocks = c;
        tr->nclocks = self->nhosts;
    }
    return 0;
}

void run_trace_hosts(launcher_t *self)
{
    assert(self);
    run_trace_t *tr = self->trace;
    if (!tr || s_grow(self) < 0)
        return;                     /* measured when memory allows; no offset until then */
    for (int i = 0; i < self->nhosts; i++) {
        trace_clock_t *c = &tr->clocks[i];
        host_t *h = self->hosts[i];
        if (c->state != CLK_NONE || h->state != HOST_UP || h->deleted)
            continue;
        if (h->local) {
            c->state = CLK_DONE;    /* offset 0, error 0 */
            continue;
        }
        size_t len;
        run_hosts_send(h, vmw_encode(&len, AGENT_TRACE_DIR, tr->dir));
        c->state = CLK_MEASURING;
        c->rtt = INT64_MAX;
        s_ask(self, i);
    }
}

/*  A TIMED answer: a sample of host's clock (ns) for sample id. */
static void s_sample(launcher_t *self, int host, int id, int64_t ns)
{
    run_trace_t *tr = self->trace;
    if (tr->clocks[host].state != CLK_MEASURING || tr->clocks[host].id != id)
        return;
    trace_clock_t *c = &tr->clocks[host];
    int64_t rtt = s_now() - c->sent;
    if (rtt >= 0 && rtt < c->rtt) {
        c->rtt = rtt;
        c->off = c->sent + rtt / 2 - ns;
    }
    if (++c->n >= TRACE_SAMPLES)
        c->state = CLK_DONE;
    else
        s_ask(self, host);
}

/*  run_hosts_wait: no host that is up is still being measured. */
static bool s_synced(launcher_t *self)
{
    for (int i = 0; i < self->trace->nclocks; i++)
        if (self->trace->clocks[i].state == CLK_MEASURING && self->hosts[i]->state == HOST_UP)
            return false;
    return true;
}

int run_trace_sync(launcher_t *self)
{
    assert(self);
    if (!self->trace)
        return 0;
    run_trace_hosts(self);
    run_hosts_wait(self, s_synced, TRACE_SYNC_MS);
    int rc = 0;
    for (int i = 0; i < self->trace->nclocks; i++) {
        trace_clock_t *c = &self->trace->clocks[i];
        if (c->state == CLK_MEASURING)
            c->state = c->n ? CLK_DONE : CLK_FAILED;
        if (c->state == CLK_FAILED && self->hosts[i]->state == HOST_UP) {
            fprintf(stderr, "gimpirun: -trace: host %s did not say its time: its tasks' "
                    "times are not put on this host's clock\n", self->hosts[i]->info.name);
            rc = -1;
        }
    }
    return rc;
}

void run_trace_env(launcher_t *self, const host_t *h, char **env)
{
    assert(self && h);
    run_trace_t *tr = self->trace;
    if (!tr || !env)
        return;
    const trace_clock_t *c = h->index < tr->nclocks ? &tr->clocks[h->index] : NULL;
    char *mine = NULL;
    if (h->local || (c && c->n > 0)) {
        char buf[80];
        long long off = h->local ? 0 : c->off, err = h->local ? 0 : (c->rtt + 1) / 2;
        snprintf(buf, sizeof buf, TRACE_ENV_OFFSET "%lld,%lld", off, err);
        mine = strdup(buf);
    }
    int k = 0;
    for (int e = 0; env[e]; e++) {
        if (strncmp(env[e], TRACE_ENV_OFFSET, sizeof TRACE_ENV_OFFSET - 1))
            env[k++] = env[e];
        else
            free(env[e]);
    }
    env[k++] = mine;
    env[k] = NULL;
}

/*  TRACE_FILE: a piece of a task's file from another host, written where it goes here
 *  (a name of a trace file only: no path, no hidden file). */
static void s_store(launcher_t *self, int host, const vmw_msg_t *m)
{
    run_trace_t *tr = self->trace;
    const char *name = m->s[0];
    size_t l = strlen(name), sl = strlen(GIMPI_TEV_SUFFIX);
    if (name[0] == '.' || strchr(name, '/') || l <= sl || strcmp(name + l - sl, GIMPI_TEV_SUFFIX)
        || m->i[1] < 0)
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tr->dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (m->i[1] ? 0 : O_TRUNC),
                  0666);
    bool ok = fd >= 0 && pwrite(fd, m->b[2], m->blen[2], m->i[1]) == (ssize_t)m->blen[2];
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (!ok && !tr->write_failed) {
        tr->write_failed = true;
        fprintf(stderr, "gimpirun: -trace: %s (from host %s): %s\n", path,
                self->hosts[host]->info.name, strerror(e));
    }
}

void run_trace_frame(launcher_t *self, int host, const vmw_msg_t *m)
{
    assert(self && m);
    run_trace_t *tr = self->trace;
    if (!tr || host < 0 || host >= tr->nclocks)
        return;
    trace_clock_t *c = &tr->clocks[host];
    if (m->type == AGENT_TIMED)
        s_sample(self, host, m->i[0],
                 (int64_t)((uint64_t)(uint32_t)m->i[1] << 32 | (uint32_t)m->i[2]));
    else if (m->type == AGENT_TRACE_FILE && c->asked && !c->answered)
        s_store(self, host, m);
    else if (m->type == AGENT_TRACE_DONE && c->asked && !c->answered) {
        c->answered = true;
        if (m->i[2])
            fprintf(stderr, "gimpirun: -trace: host %s could not send all its tasks' files "
                    "from %s: %s\n", self->hosts[host]->info.name, tr->dir, strerror(m->i[2]));
        self->ev->check_done(self->ev->arg);
    }
}

/*  The hosts did not all send their files in time: the job ends without the rest. */
static void s_on_collect_timer(gimpi_loop_t *loop, int id, void *arg)
{
    (void)loop, (void)id;
    launcher_t *self = arg;
    self->trace->timer = 0;
    for (int i = 0; i < self->trace->nclocks; i++)
        if (self->trace->clocks[i].asked && !self->trace->clocks[i].answered
            && self->hosts[i]->state == HOST_UP)
            fprintf(stderr, "gimpirun: -trace: host %s did not send its tasks' files within "
                    "%d s\n", self->hosts[i]->info.name, TRACE_COLLECT_MS / 1000);
    self->trace->collected = true;
    self->ev->check_done(self->ev->arg);
}

/*  Asks every other host that is up for its files; the token file lets a host that sees
 *  this directory say so instead. */
static void s_ask_files(launcher_t *self)
{
    run_trace_t *tr = self->trace;
    char path[PATH_MAX];
    snprintf(tr->token, sizeof tr->token, ".gimpirun-%ld-%lld", (long)getpid(),
             (long long)(s_now() % 1000000007));
    snprintf(path, sizeof path, "%s/%s", tr->dir, tr->token);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    else
        tr->token[0] = 0;           /* every host sends its files */
    for (int i = 0; i < tr->nclocks; i++) {
        host_t *h = self->hosts[i];
        size_t len;
        if (h->local || h->state != HOST_UP || h->deleted || h->quit_sent)
            continue;
        tr->clocks[i].asked =
            run_hosts_send(h, vmw_encode(&len, AGENT_TRACE_GET, tr->dir, tr->token)) == 0;
    }
    tr->timer = gimpi_loop_timer_add(self->loop, TRACE_COLLECT_MS, 0, s_on_collect_timer, self);
}

int run_trace_collect(launcher_t *self)
{
    assert(self);
    run_trace_t *tr = self->trace;
    if (!tr || tr->collected || !self->loop)
        return 0;
    if (!tr->collecting) {
        tr->collecting = true;
        if (s_grow(self) < 0) {
            tr->collected = true;
            return 0;
        }
        s_ask_files(self);
    }
    int waiting = 0;
    for (int i = 0; i < tr->nclocks; i++)
        waiting += tr->clocks[i].asked && !tr->clocks[i].answered
                   && self->hosts[i]->state == HOST_UP;
    if (waiting == 0) {
        tr->collected = true;
        if (tr->timer > 0)
            gimpi_loop_timer_cancel(self->loop, tr->timer);
        tr->timer = 0;
    }
    return waiting;
}

int run_trace_finish(launcher_t *self)
{
    assert(self);
    run_trace_t *tr = self->trace;
    if (!tr)
        return 0;
    char err[PATH_MAX + 256];
    if (tr->token[0]) {
        snprintf(err, sizeof err, "%s/%s", tr->dir, tr->token);
        unlink(err);
    }
    int cut = trace_merge_flags(tr->dir, tr->json, TRACE_MERGE_PARTIAL, err, sizeof err);
    if (cut < 0) {
        fprintf(stderr, "gimpirun: -trace: %s (the tasks' files stay in %s)\n", err, tr->dir);
        return -1;
    }
    if (cut > 0)        /* a task killed while it wrote its file */
        fprintf(stderr, "gimpirun: -trace: %d task file%s cut short, merged up to the last "
                "whole record\n", cut, cut > 1 ? "s" : "");
    s_clean(tr->dir);
    rmdir(tr->dir);
    return 0;
}
