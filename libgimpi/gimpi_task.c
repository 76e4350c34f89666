/*  gimpi_task.c — the native API's entry point: a task joins its job (gimpi_job: tables and
 *  listening socket from gimpirun, or a one-task job of its own), brings its data plane up
 *  (gimpi_msg), and at the end leaves as IMPI prescribes: the world barrier, then PK_FINI.
 */
#include "gimpi.h"
#include "gimpi_job.h"
#include "impi_coll.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

struct gimpi_t {
    gimpi_job_t job;
    gimpi_msg_t *msg;
};

/*  Seconds from the environment, else a default, as milliseconds. */
static int s_timeout_ms(const char *name, int dflt_s)
{
    const char *v = getenv(name);
    long s = v && *v ? strtol(v, NULL, 10) : 0;
    return (int)((s > 0 && s < 86400 ? s : dflt_s) * 1000);
}

/*  Joins the job and brings the data plane up. */
gimpi_t *gimpi_init(char *err, size_t errsize)
{
    gimpi_t *self = calloc(1, sizeof *self);
    if (!self) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    int timeout = s_timeout_ms("GIMPI_CONNECT_TIMEOUT", 60);
    if (gimpi_job_init(&self->job, timeout, err, errsize) < 0) {
        free(self);
        return NULL;
    }
    int fd = self->job.listen_fd;
    self->job.listen_fd = -1;           /* the data plane owns it from now on */
    self->msg = gimpi_msg_new(self->job.tables, self->job.world_rank, fd, timeout, err, errsize);
    if (!self->msg) {
        gimpi_job_fini(&self->job);
        free(self);
        return NULL;
    }
    return self;
}

/*  World barrier, PK_FINI, free. */
int gimpi_finalize(gimpi_t **self_p)
{
    assert(self_p);
    gimpi_t *self = *self_p;
    if (!self)
        return 0;
    int timeout = s_timeout_ms("GIMPI_FINALIZE_TIMEOUT", 60);
    gimpi_msg_set_timeout(self->msg, timeout);
    int rc = impi_world_barrier(self->msg, self->job.tables, self->job.world_rank);
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
    gimpi_msg_destroy(&self->msg);
    gimpi_job_fini(&self->job);
    free(self);
    *self_p = NULL;
}

/*  The data plane. */
gimpi_msg_t *gimpi_msg(gimpi_t *self)
{
    assert(self);
    return self->msg;
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
