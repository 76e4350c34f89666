/*  console_out.c — the console's output of `spawn ->` in PVM's console format: the console
 *  numbers each such spawn (its job, "[N]"), and the lines that gimpi_catchout writes for
 *  the caught children ("[t40002] BEGIN", "[t40002] text", "[t40002] EOF") are rewritten
 *  here as PVM's console prints them: no BEGIN, "[N:t40002] text", "[N:t40002] EOF", and
 *  "[N] finished" once every task of job N has ended.  A task is job N's when job N's
 *  spawn returned its tid; before that (its BEGIN and lines may come first), the latest
 *  job's.  The FILE given to gimpi_catchout is a
 *  fopencookie stream whose writer (the collector's thread) splits what comes into lines;
 *  the console's thread numbers jobs; one mutex guards the tables.  The lines of a job
 *  whose spawn has not returned are held back until it has, so that they follow its
 *  "N successful" and tids, as in PVM's console.
 */
#include "config.h"
#include "programs/console_out.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

enum { LINE_MAX_BYTES = 8192 };

/*  One job: tasks started (-1 until its spawn returned), "finished" said. */
typedef struct {
    int started;
    bool said;
} job_t;

/*  A caught task and its job. */
typedef struct {
    int tid, job;
    bool ended;                 /* its EOF came */
} tidjob_t;

struct console_out_t {
    FILE *to;                   /* where the rewritten lines go (stdout) */
    FILE *in;                   /* the stream gimpi_catchout writes */
    pthread_mutex_t lock;
    job_t *jobs;                /* jobs[0] is job 1 */
    int njobs;
    tidjob_t *tids;
    int ntids, captids;
    char line[LINE_MAX_BYTES];  /* the unfinished line */
    size_t len;
    FILE *hold;                 /* lines held until the latest job's spawn returned */
    char *held;
    size_t heldlen;
};

/*  The entry of tid (added, to the latest job, when add), or NULL.  Lock held. */
static tidjob_t *s_entry(console_out_t *self, int tid, bool add)
{
    for (int i = 0; i < self->ntids; i++)
        if (self->tids[i].tid == tid)
            return &self->tids[i];
    if (!add || self->njobs == 0)
        return NULL;
    if (self->ntids == self->captids) {
        int cap = self->captids ? self->captids * 2 : 16;
        tidjob_t *t = realloc(self->tids, (size_t)cap * sizeof *t);
        if (!t)
            return NULL;
        self->tids = t;
        self->captids = cap;
    }
    self->tids[self->ntids] = (tidjob_t){ tid, self->njobs, false };
    return &self->tids[self->ntids++];
}

/*  "[N] finished" when every task of job N has ended.  Lock held. */
static void s_check_finished(console_out_t *self, int job)
{
    job_t *j = &self->jobs[job - 1];
    int ended = 0;
    for (int i = 0; i < self->ntids; i++)
        ended += self->tids[i].job == job && self->tids[i].ended;
    if (j->started > 0 && !j->said && ended >= j->started) {
        fprintf(self->to, "[%d] finished\n", job);
        j->said = true;
    }
}

/*  One whole line from the collector, rewritten.  Lock held. */
static void s_line(console_out_t *self, const char *line, size_t len)
{
    unsigned tid = 0;
    int off = 0;
    if (sscanf(line, "[t%x] %n", &tid, &off) < 1 || off == 0) {
        fprintf(self->to, "%.*s\n", (int)len, line);
        return;
    }
    const char *text = line + off;
    size_t tlen = len - (size_t)off;
    bool begin = tlen == 5 && !memcmp(text, "BEGIN", 5);
    bool eof = tlen == 3 && !memcmp(text, "EOF", 3);
    tidjob_t *e = s_entry(self, (int)tid, begin);
    int job = e ? e->job : 0;
    if (begin)
        return;
    FILE *out = job && self->jobs[job - 1].started < 0 && self->hold ? self->hold : self->to;
    if (job)
        fprintf(out, "[%d:t%x] %.*s\n", job, tid, (int)tlen, text);
    else
        fprintf(out, "[t%x] %.*s\n", tid, (int)tlen, text);
    if (eof && e) {
        e->ended = true;
        s_check_finished(self, job);
    }
}

/*  The cookie stream's writer: splits what comes into lines. */
static ssize_t s_write(void *cookie, const char *buf, size_t size)
{
    console_out_t *self = cookie;
    pthread_mutex_lock(&self->lock);
    for (size_t i = 0; i < size; i++) {
        if (buf[i] == '\n') {
            s_line(self, self->line, self->len);
            self->len = 0;
        } else if (self->len < sizeof self->line - 1)
            self->line[self->len++] = buf[i];
    }
    fflush(self->to);
    pthread_mutex_unlock(&self->lock);
    return (ssize_t)size;
}

/*  A new rewriter writing to `to` (console_out.h). */
console_out_t *console_out_new(FILE *to)
{
    console_out_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->to = to;
    pthread_mutex_init(&self->lock, NULL);
    cookie_io_functions_t io = { .write = s_write };
    self->in = fopencookie(self, "w", io);
    if (!self->in) {
        console_out_destroy(&self);
        return NULL;
    }
    setvbuf(self->in, NULL, _IOLBF, 0);
    self->hold = open_memstream(&self->held, &self->heldlen);
    return self;
}

/*  Frees it (console_out.h). */
void console_out_destroy(console_out_t **self_p)
{
    console_out_t *self = *self_p;
    if (!self)
        return;
    if (self->in)
        fclose(self->in);
    if (self->hold)
        fclose(self->hold);
    free(self->held);
    pthread_mutex_destroy(&self->lock);
    free(self->jobs);
    free(self->tids);
    free(self);
    *self_p = NULL;
}

/*  The stream for gimpi_catchout (console_out.h). */
FILE *console_out_file(console_out_t *self)
{
    return self->in;
}

/*  A new job (console_out.h). */
int console_out_job_new(console_out_t *self)
{
    pthread_mutex_lock(&self->lock);
    job_t *j = realloc(self->jobs, (size_t)(self->njobs + 1) * sizeof *j);
    int n = 0;
    if (j) {
        self->jobs = j;
        self->jobs[self->njobs] = (job_t){ -1, false };
        n = ++self->njobs;
    }
    pthread_mutex_unlock(&self->lock);
    return n;
}

/*  Job's spawn returned with its tids (console_out.h). */
void console_out_job_started(console_out_t *self, int job, const int *tids, int n)
{
    if (job < 1 || job > self->njobs)
        return;
    pthread_mutex_lock(&self->lock);
    int started = 0;
    for (int i = 0; i < n; i++) {
        tidjob_t *e = tids[i] > 0 ? s_entry(self, tids[i], true) : NULL;
        if (e)
            e->job = job;           /* whatever BEGIN said: the spawn knows */
        started += tids[i] > 0;
    }
    self->jobs[job - 1].started = started;
    if (self->hold && fflush(self->hold) == 0 && self->heldlen) {
        fwrite(self->held, 1, self->heldlen, self->to);
        rewind(self->hold);         /* empty again: the next write starts at 0 */
        self->heldlen = 0;
    }
    s_check_finished(self, job);
    fflush(self->to);
    pthread_mutex_unlock(&self->lock);
}

/*  Whether tid's output ended (console_out.h). */
bool console_out_ended(console_out_t *self, int tid)
{
    bool ended = false;
    if (!self)
        return false;
    pthread_mutex_lock(&self->lock);
    for (int i = 0; i < self->ntids; i++)
        ended |= self->tids[i].tid == tid && self->tids[i].ended;
    pthread_mutex_unlock(&self->lock);
    return ended;
}
