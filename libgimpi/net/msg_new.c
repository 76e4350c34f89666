/*  msg_new.c — creating and destroying the engine's context: the static tables copied,
 *  the static hosts met (gimpi_host_dance), the forwarding hooks installed and the
 *  progress thread started; and everything torn down again.
 */
#include "net/msg_internal.h"
#include "base/gimpi_bind.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>

/*  The local twin of a TCP listener (gimpi_host.c). */
int gimpi_msg_listen_local(int listen_fd)
{
    return gimpi_host_listen_local(listen_fd);
}

/*  Creates the context over a TCP listener only. */
gimpi_msg_t *gimpi_msg_new(const struct impi_tables_t *t, int rank, int listen_fd,
                           int timeout_ms, char *err, size_t errsize)
{
    return gimpi_msg_new_local(t, rank, listen_fd, -1, timeout_ms, err, errsize);
}

/*  A positive number from the environment (scaled by mul), else dflt. */
static int s_env_pos(const char *name, double mul, int dflt)
{
    const char *v = gimpi_env(name);
    double x = v && *v ? strtod(v, NULL) * mul : 0;
    return x >= 1 && x < INT32_MAX ? (int)x : dflt;
}

/*  The context's settings: tables' parameters (IMPI's defaults where they have none),
 *  the environment's (GIMPI_DEBUG, GIMPI_SPIN_US, the limits on callers:
 *  GIMPI_HANDSHAKE_MAX, GIMPI_HANDSHAKE_PER_SOURCE, GIMPI_HANDSHAKE_TIMEOUT in seconds,
 *  GIMPI_MAX_DYN_CONNS), our contact as the tables announce it, locks, listeners. */
static void s_settings(gimpi_msg_t *self, const impi_tables_t *t, int rank, int myhost,
                       int listen_fd, int local_fd, int timeout_ms)
{
    pthread_mutex_init(&self->mu, NULL);
    pthread_mutex_init(&self->prog.doze_mu, NULL);
    pthread_cond_init(&self->cv, NULL);
    pthread_cond_init(&self->prog.doze_cv, NULL);
    self->prog.evfd = -1;
    self->prog.arrive_fd = -1;
    self->dyn.listen_fd = listen_fd;
    self->dyn.local_fd = local_fd;
    self->dyn.born_us = gimpi_now_us();
    self->dyn.log.per_sec = REFUSED_LOG_PER_S;
    self->rank = rank;
    self->nprocs = self->nstatic = self->cap_procs = t->nprocs;
    self->nhosts = self->nstatic_hosts = self->cap_hosts = t->nhosts;
    self->dyn.connect_ms = timeout_ms > 0 ? timeout_ms : 60000;
    self->dyn.handshake_max = s_env_pos("GIMPI_HANDSHAKE_MAX", 1, HANDSHAKE_MAX_DEFAULT);
    self->dyn.per_source = s_env_pos("GIMPI_HANDSHAKE_PER_SOURCE", 1,
                                     HANDSHAKE_PER_SOURCE_DEFAULT);
    self->dyn.handshake_ms = s_env_pos("GIMPI_HANDSHAKE_TIMEOUT", 1000, HANDSHAKE_MS_DEFAULT);
    self->dyn.max_conns = s_env_pos("GIMPI_MAX_DYN_CONNS", 1, DYN_CONNS_DEFAULT);
    memcpy(self->dyn.contact, t->hosts[myhost].addr, 16);
    self->dyn.contact_port = t->hosts[myhost].port;
    self->myhost = myhost;
    self->pktlen = t->pktlen ? t->pktlen : 65536;
    self->ackmark = t->ackmark ? t->ackmark : 10;
    self->hiwater = t->hiwater ? t->hiwater : 20;
    if (self->hiwater < self->ackmark)
        self->hiwater = self->ackmark;
    self->tagub = t->tagub > 0 ? t->tagub : IMPI_MIN_TAGUB;
    self->me = t->procs[rank].id;
    self->match.next_id = 1;
    self->hooks.fwd_hooks = &gimpi_msg_fwd_hooks;
    const char *dbg = gimpi_env("GIMPI_DEBUG");
    self->debug = dbg && *dbg && strcmp(dbg, "0") != 0;
    const char *um = gimpi_env("GIMPI_UNEXPECTED_MAX");
    self->match.unexp_max = um && *um ? (size_t)strtoull(um, NULL, 10) : UNEXPECTED_MAX_DEFAULT;
    um = gimpi_env("GIMPI_UNEXPECTED_P2P_MAX");
    self->match.unexp_p2p_max = um && *um ? (size_t)strtoull(um, NULL, 10)
                                          : UNEXPECTED_P2P_MAX_DEFAULT;
    const char *note = gimpi_env("GIMPI_NOTE_MS");
    self->hooks.note_ms = note && *note ? atoi(note) : NOTE_MS_DEFAULT;
    const char *live = gimpi_env("GIMPI_LIVENESS_MS");
    self->hooks.liveness_ms = live && *live ? atoi(live) : LIVENESS_MS_DEFAULT;
    const char *spin = gimpi_env("GIMPI_SPIN_US");
    self->prog.spin_us = spin ? atoi(spin) : SPIN_US_DEFAULT;
    self->shm_ring = msg_shm_config();
    self->prog.ncpu = gimpi_bind_cpus();
    self->prog.own_core = gimpi_bind_own_core();
}

/*  The static peers and connections from the tables (all connections closed yet).  0, or
 *  -1 with a message. */
static int s_static_peers(gimpi_msg_t *self, const impi_tables_t *t, char *err,
                          size_t errsize)
{
    for (int p = 0; p < t->nprocs; p++) {
        int h = t->procs[p].host;
        if (h < 0 || h >= t->nhosts) {
            snprintf(err, errsize, "proc %d on host %d out of range", p, h);
            return -1;
        }
        self->peers[p].id = t->procs[p].id;
        self->peers[p].host = h;
        self->peers[p].client = t->procs[p].client;
        self->peers[p].tid = p + 1;
        self->peers[p].alive_fd = -1;
        self->conns[h].nprocs++;
    }
    self->maxlinear = t->maxlinear > 0 ? t->maxlinear : 4;
    for (int h = 0; h < t->nhosts; h++) {
        conn_t *c = &self->conns[h];
        c->fd = -1;
        c->state = C_CLOSED;
        c->pktlen = self->pktlen;
        c->ackmark = self->ackmark;
        c->hiwater = self->hiwater;
        c->procs = calloc((size_t)c->nprocs + 1, sizeof *c->procs);
        if (!c->procs) {
            snprintf(err, errsize, "out of memory");
            return -1;
        }
        c->nprocs = 0;
    }
    self->myclient = self->peers[self->rank].client;
    for (int h = 0; h < t->nhosts; h++)     /* kin: every proc of the host is of our client */
        self->conns[h].kin = 1;
    for (int p = 0; p < t->nprocs; p++) {
        conn_t *c = &self->conns[t->procs[p].host];
        c->procs[c->nprocs++] = p;
        if (self->peers[p].client != self->myclient)
            c->kin = 0;
    }
    return 0;
}

/*  Opens the static connections on the sockets the hosts' meeting made (fds[]); danced:
 *  by our own meeting, so local peers get the shared-memory link (not for connections
 *  made by the caller).  0, or -1 when out of memory. */
static int s_static_conns(gimpi_msg_t *self, const int *fds, int danced)
{
    for (int h = 0; h < self->nstatic_hosts; h++) {
        if (h == self->myhost)
            continue;
        conn_t *c = &self->conns[h];
        c->fd = fds[h];
        c->state = C_OPEN;
        msg_debug_conn(self, h);
        c->stage = malloc(STAGE_SIZE);
        if (!c->stage)
            return -1;
        if (danced)
            msg_conn_opened(self, h);       /* a failure is the connection's, recorded */
    }
    return 0;
}

/*  Creates the context: tables copied, hosts met (by the dance over listen_fd, or already:
 *  met[h] is then the connection to host h), progress thread started. */
static gimpi_msg_t *s_new(const struct impi_tables_t *t, int rank, int listen_fd, int local_fd,
                          const int *met, int timeout_ms, char *err, size_t errsize)
{
    int myhost = -1;
    gimpi_msg_t *self = NULL;
    if (!t || rank < 0 || rank >= t->nprocs || t->nhosts < 1 || !t->procs || !t->hosts)
        snprintf(err, errsize, "bad tables or rank %d", rank);
    else if ((myhost = t->procs[rank].host) < 0 || myhost >= t->nhosts
             || t->hosts[myhost].nprocs != 1)
        snprintf(err, errsize, "rank %d must be the only proc of its host", rank);
    else if (!(self = calloc(1, sizeof *self)))
        snprintf(err, errsize, "out of memory");
    if (!self) {
        if (listen_fd >= 0)
            close(listen_fd);
        if (local_fd >= 0)
            close(local_fd);
        return NULL;
    }
    s_settings(self, t, rank, myhost, listen_fd, local_fd, timeout_ms);
    self->peers = calloc((size_t)t->nprocs, sizeof *self->peers);
    self->conns = calloc((size_t)t->nhosts, sizeof *self->conns);
    int *fds = calloc((size_t)t->nhosts, sizeof *fds);
    if (!self->peers || !self->conns || !fds)
        goto nomem;
    if (s_static_peers(self, t, err, errsize) < 0)
        goto fail;
    self->prog.evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (self->prog.evfd < 0) {
        snprintf(err, errsize, "eventfd: %s", strerror(errno));
        goto fail;
    }
    if (met)
        memcpy(fds, met, (size_t)t->nhosts * sizeof *fds);
    else if (gimpi_host_dance(t, myhost, listen_fd, local_fd, fds, timeout_ms, err, errsize) < 0)
        goto fail;
    if (s_static_conns(self, fds, !met) < 0)
        goto nomem;
    free(fds);
    fds = NULL;
    /* from now on the listener takes dynamic hosts, from the progress machinery */
    if (listen_fd >= 0)
        fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    if (local_fd >= 0)
        fcntl(local_fd, F_SETFL, fcntl(local_fd, F_GETFL) | O_NONBLOCK);
    self->peers[rank].gone = 0;
    const char *prog = gimpi_env("GIMPI_PROGRESS");     /* "0": no thread (tests, benchmarks) */
    if (!(prog && strcmp(prog, "0") == 0)) {
        if (pthread_create(&self->prog.thread, NULL, msg_progress_main, self) != 0) {
            snprintf(err, errsize, "cannot start the progress thread");
            goto fail;
        }
        self->prog.started = 1;
    }
    return self;
nomem:
    snprintf(err, errsize, "out of memory");
fail:
    free(fds);
    gimpi_msg_destroy(&self);
    return NULL;
}

/*  Creates the context over a TCP listener and its local twin. */
gimpi_msg_t *gimpi_msg_new_local(const struct impi_tables_t *t, int rank, int listen_fd,
                                 int local_fd, int timeout_ms, char *err, size_t errsize)
{
    return s_new(t, rank, listen_fd, local_fd, NULL, timeout_ms, err, errsize);
}

/*  Creates the context over connections already made (msg_internal.h). */
gimpi_msg_t *msg_new_met(const struct impi_tables_t *t, int rank, const int *fds, int timeout_ms,
                         char *err, size_t errsize)
{
    return s_new(t, rank, -1, -1, fds, timeout_ms, err, errsize);
}

/*  Frees everything of a context. */
void gimpi_msg_destroy(gimpi_msg_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gimpi_msg_t *self = *self_p;
    if (self->prog.started) {
        pthread_mutex_lock(&self->mu);
        pthread_mutex_lock(&self->prog.doze_mu);
        self->prog.stop = 1;
        pthread_cond_signal(&self->prog.doze_cv);
        pthread_mutex_unlock(&self->prog.doze_mu);
        msg_kick(self);
        pthread_mutex_unlock(&self->mu);
        pthread_join(self->prog.thread, NULL);
    }
    /* requests still in lists are the caller's (not detached) or detached ones: free the
     * detached; the caller's stay valid memory-wise until it frees them */
    if (self->conns)
        for (int h = 0; h < self->nhosts; h++) {
            conn_t *c = &self->conns[h];
            if (c->procs)
                msg_conn_close(self, h);
            if (c->procs)
                msg_host_gone(self, h, GIMPI_ESYSERR, 1);
            free(c->stage);
            free(c->procs);
        }
    for (int k = 0; k < self->dyn.npend; k++)
        close(self->dyn.pend[k].fd);
    free(self->dyn.pend);
    msg_dyn_log_flush(self);
    gimpi_key_wipe(&self->dyn.key, sizeof self->dyn.key);
    if (self->peers)
        for (int p = self->nstatic; p < self->nprocs; p++)
            if (self->peers[p].alive_fd >= 0)
                close(self->peers[p].alive_fd);
    gimpi_msg_fwd_free(self, &self->hooks.fwd);
    while (self->match.unexpected.head) {
        umsg_t *um = self->match.unexpected.head;
        msg_um_remove(self, um);
        if (um->self_sreq)
            msg_complete(self, um->self_sreq, GIMPI_ESYSERR);
        msg_um_free(um);
    }
    while (self->match.posted_recvs.head)
        msg_complete(self, self->match.posted_recvs.head, GIMPI_ESYSERR);
    while (self->match.all_reqs.head) { /* requests never waited for: their handles die here */
        gimpi_msg_req_t *r = self->match.all_reqs.head;
        QUEUE_DEL(r);
        OUT_DEL(r);
        msg_req_free(self, r);
    }
    msg_req_spares_free(self);
    free(self->peers);
    free(self->conns);
    if (self->prog.evfd >= 0)
        close(self->prog.evfd);
    if (self->prog.arrive_fd >= 0)
        close(self->prog.arrive_fd);
    if (self->dyn.listen_fd >= 0)
        close(self->dyn.listen_fd);
    if (self->dyn.local_fd >= 0)
        close(self->dyn.local_fd);
    pthread_cond_destroy(&self->cv);
    pthread_cond_destroy(&self->prog.doze_cv);
    pthread_mutex_destroy(&self->prog.doze_mu);
    pthread_mutex_destroy(&self->mu);
    free(self);
    *self_p = NULL;
}
