/*  run_trace.c — gimpirun -trace FILE.json: the job's trace from start to merge.
 *
 *  Every task records into one directory, FILE.json.d (GIMPI_TRACE; on other hosts it
 *  must be the same path on a shared file system), one file per task.  Times in a file
 *  are its host's CLOCK_REALTIME; the header's offset (GIMPI_TRACE_OFFSET, "ns,error"
 *  that this file hands to each host's tasks) puts them on this machine's clock, the
 *  job's reference.  The offset is measured as pvm_hostsync does: round trips to the
 *  host's agent (TIME, answered at once with its clock in ns), the one with the smallest
 *  round trip kept, the offset taken at its middle, half the round trip its error bound.
 *  When the job ends the files are merged (trace_merge.c) and, once merged, removed.
 */
#include "config.h"
#include "programs/run_trace.h"
#include "programs/run_hosts.h"
#include "programs/trace_merge.h"
#include "base/gimpi_tev.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
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
};

/*  One host's clock. */
typedef struct {
    enum { CLK_NONE, CLK_MEASURING, CLK_DONE, CLK_FAILED } state;
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

void run_trace_hosts(launcher_t *self)
{
    assert(self);
    run_trace_t *tr = self->trace;
    if (!tr)
        return;
    if (tr->nclocks < self->nhosts) {
        trace_clock_t *c = realloc(tr->clocks, (size_t)self->nhosts * sizeof *c);
        if (!c)
            return;                 /* measured when memory allows; no offset until then */
        memset(c + tr->nclocks, 0, (size_t)(self->nhosts - tr->nclocks) * sizeof *c);
        tr->clocks = c;
        tr->nclocks = self->nhosts;
    }
    for (int i = 0; i < self->nhosts; i++) {
        trace_clock_t *c = &tr->clocks[i];
        host_t *h = self->hosts[i];
        if (c->state != CLK_NONE || h->state != HOST_UP || h->deleted)
            continue;
        if (h->local) {
            c->state = CLK_DONE;    /* offset 0, error 0 */
            continue;
        }
        c->state = CLK_MEASURING;
        c->rtt = INT64_MAX;
        s_ask(self, i);
    }
}

void run_trace_sample(launcher_t *self, int host, int id, int64_t ns)
{
    assert(self);
    run_trace_t *tr = self->trace;
    if (!tr || host < 0 || host >= tr->nclocks || tr->clocks[host].state != CLK_MEASURING
        || tr->clocks[host].id != id)
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

int run_trace_finish(launcher_t *self)
{
    assert(self);
    run_trace_t *tr = self->trace;
    if (!tr)
        return 0;
    char err[PATH_MAX + 256];
    if (trace_merge(tr->dir, tr->json, err, sizeof err) < 0) {
        fprintf(stderr, "gimpirun: -trace: %s (the tasks' files stay in %s)\n", err, tr->dir);
        return -1;
    }
    s_clean(tr->dir);
    rmdir(tr->dir);
    return 0;
}
