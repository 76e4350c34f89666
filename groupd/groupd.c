/*  groupd.c — the gimpi group daemon: `groupd [--endpoint EP | --port P [--bind ADDR]]
 *  [--foreground] [--verbose|--quiet] [--heartbeat MS] [--idle-exit SECONDS] [--cpu N|none]
 *  [--key FILE] [limits]`.
 *
 *  It binds a ROUTER socket for requests (default: the per-user ipc endpoint) and an XPUB
 *  socket for membership events, prints the request endpoint as its first stdout line, and
 *  serves until SIGTERM/SIGINT or a HALT request (the console's halt) — with --idle-exit
 *  (as when the library or gimpirun start it) only until no task has been registered and
 *  no request has come for that long.  A second groupd on the same ipc endpoint is refused
 *  (an flock on "<path>.lock"; libzmq would silently replace the socket file).  Requests are
 *  decoded by the table-driven codec (gd_proto), answered by the registry (gd_registry);
 *  anything malformed gets an error reply and the daemon keeps serving.  Liveness: every
 *  registered task is tied to the connection its registration came on (ZMQ_SRCFD); the
 *  ROUTER's socket monitor reports the connection's end — at once when a process exits or
 *  is killed, after the ZMTP heartbeat timeout when a peer falls silent — and the task
 *  then leaves every group.  Nothing polls: the loop sleeps in poll(2).  Security: on tcp
 *  both sockets are CURVE servers keyed from the key (--key, else the user's default), and
 *  the ZAP handler, served in the same loop, admits only holders of the key; on ipc it
 *  admits only peers of our own uid (gd_sock.h).  The request handler is gd_serve.c.
 */
#include "config.h"
#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "groupd/gd_registry.h"
#include "groupd/gd_serve.h"
#include "groupd/gd_follow.h"
#include "groupd/gd_witness.h"
#include "groupd/gd_standby.h"
#include "groupd/gd_journal.h"
#include "groupd/gd_replay.h"
#include "groupd/gd_record.h"
#include "base/gd_hash.h"
#include "base/gimpi_key.h"
#include "gimpi.h"
#include "base/gimpi_clock.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <sodium.h>
#include <unistd.h>
#include <zmq.h>

/*  After a HALT, closing the ROUTER waits at most this long for the reply to go out. */
enum { HALT_LINGER_MS = 1000 };

/* ------------------------------------------------------------------ set-up */

/*  Creates the directories above an ipc socket path that do not exist yet (mode 0700,
 *  like the per-user default's), so GIMPI_GROUPD may name a fresh directory.  0 or -1. */
static int s_make_parents(const char *file)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                fprintf(stderr, "groupd: cannot create directory %s: %s\n", dir,
                        strerror(errno));
                return -1;
            }
            *p = c;
            if (!c)
                return 0;
        }
    }
}

/*  True when groupd may serve on endpoint: only ipc:// (the ZAP handler checks the
 *  peer's uid) and tcp:// (CURVE with the key) authenticate their peers; on any other
 *  transport (tipc, ws, inproc, ...) libzmq would admit everyone, so it is refused with
 *  a message. */
static bool s_scheme_ok(const char *endpoint)
{
    if (!strncmp(endpoint, "ipc://", 6) || gd_sock_needs_key(endpoint))
        return true;
    fprintf(stderr, "groupd: refusing endpoint %s: only ipc:// (peers of our uid) and "
            "tcp:// (CURVE with the key) authenticate their peers\n", endpoint);
    return false;
}

/*  For ipc endpoints: takes "<path>.lock"; refuses when another groupd holds it.  The
 *  lock file is opened without following a symbolic link (one planted there by someone
 *  who can write the directory would make us truncate and write the file it names),
 *  and it must be a regular file of ours. */
static int s_lock(groupd_t *self)
{
    if (strncmp(self->endpoint, "ipc://", 6) != 0)
        return 0;
    if (s_make_parents(self->endpoint + 6) < 0)
        return -1;
    char path[600];
    snprintf(path, sizeof path, "%s.lock", self->endpoint + 6);
    self->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (self->lock_fd < 0) {
        fprintf(stderr, "groupd: cannot open lock file %s: %s%s\n", path, strerror(errno),
                errno == ELOOP ? " (a symbolic link: not followed)" : "");
        return -1;
    }
    struct stat st;
    if (fstat(self->lock_fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        fprintf(stderr, "groupd: lock file %s is not a regular file of ours; not using it\n",
                path);
        return -1;
    }
    if (flock(self->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        char pid[32] = "";
        ssize_t n = pread(self->lock_fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        if (self->quiet)
            ;                   /* (a task's restart that another task won) */
        else if (*pid)
            fprintf(stderr, "groupd: another groupd (pid %s) is already serving %s; "
                    "not starting\n", pid, self->endpoint);
        else
            fprintf(stderr, "groupd: another groupd is already serving %s; not starting\n",
                    self->endpoint);
        return -1;
    }
    return 0;
}

/*  Writes our pid into the lock file (after daemonising). */
static void s_lock_pid(groupd_t *self)
{
    if (self->lock_fd < 0)
        return;
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(self->lock_fd, 0) == 0 && pwrite(self->lock_fd, pid, (size_t)n, 0) < 0)
        return;
}

/*  Derives the PUB endpoint from the request endpoint (on tcp: its address, at --pub-port
 *  or any free port). */
static void s_pub_endpoint(groupd_t *self, char *bind_ep, size_t size)
{
    if (strncmp(self->endpoint, "ipc://", 6) == 0)
        snprintf(bind_ep, size, "%s.pub", self->endpoint);
    else if (strncmp(self->endpoint, "tcp://", 6) == 0) {
        snprintf(bind_ep, size, "%s", self->endpoint);
        char *colon = strrchr(bind_ep, ':');
        if (colon && colon > bind_ep + 5) {
            if (self->pub_port > 0)
                snprintf(colon, size - (size_t)(colon - bind_ep), ":%d", self->pub_port);
            else
                snprintf(colon, size - (size_t)(colon - bind_ep), ":*");
        }
    } else
        snprintf(bind_ep, size, "%s-pub", self->endpoint);
}

/*  Puts the main thread and libzmq's I/O thread on one CPU (before the first socket
 *  starts the I/O thread).  Every request crosses from one to the other twice; on the
 *  same CPU that hand-off is a plain context switch, across CPUs it is a wake-up of
 *  another (often idle, halted) CPU, several times dearer on a VM.  Measured with
 *  bench/gd-bench joinlv: +18 % at n = 2, +7 % at n = 4 (doc/groupd-protocol.md §10). */
static void s_pin(groupd_t *self)
{
    int cpu = self->cpu == -2 ? sched_getcpu() : self->cpu;
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0) {
        if (self->verbose)
            fprintf(stderr, "groupd: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
        return;
    }
    zmq_ctx_set(self->zctx, ZMQ_THREAD_AFFINITY_CPU_ADD, cpu);
    if (self->verbose)
        fprintf(stderr, "groupd: threads on CPU %d\n", cpu);
}

/*  Records the device and inode of an ipc endpoint's socket file into id (zeros when it
 *  is not an ipc endpoint or cannot be seen). */
static void s_note_socket(const char *endpoint, uint64_t id[2])
{
    struct stat st;
    id[0] = id[1] = 0;
    if (!strncmp(endpoint, "ipc://", 6) && lstat(endpoint + 6, &st) == 0
        && S_ISSOCK(st.st_mode)) {
        id[0] = (uint64_t)st.st_dev;
        id[1] = (uint64_t)st.st_ino;
    }
}

/*  Removes an ipc endpoint's socket file if it is still the one we bound (id): a newer
 *  groupd that serves the same path, in a directory removed and made again since we
 *  started, keeps its socket (libzmq leaves ipc socket files behind, so this is ours to
 *  do).  The check and the unlink are two steps; only the directory's owner can swap the
 *  file between them. */
static void s_remove_socket(const char *endpoint, const uint64_t id[2])
{
    struct stat st;
    if (strncmp(endpoint, "ipc://", 6) || !id[1] || lstat(endpoint + 6, &st) < 0)
        return;
    if ((uint64_t)st.st_dev == id[0] && (uint64_t)st.st_ino == id[1])
        unlink(endpoint + 6);
}

/*  SIGTERM, SIGINT and SIGHUP are read from self->sig_fd (made once: a standby makes it
 *  before it follows, so that a stop then ends it cleanly too), and SIGUSR1, the
 *  witness's grant (--witness, gd_follow.h).  0 or -1. */
static int s_signals(groupd_t *self)
{
    if (self->sig_fd >= 0)
        return 0;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    self->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    return self->sig_fd < 0 ? -1 : 0;
}

/*  Opens and binds everything (key: the key, NULL when there is none, which only an ipc
 *  endpoint allows); returns 0 or -1 with a message on stderr. */
static int s_setup(groupd_t *self, const gimpi_key_t *key)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (s_lock(self) < 0)
        return -1;
    self->guard = gd_guard_new(self->max_handshakes ? self->max_handshakes
                                                    : GD_GUARD_MAX_PENDING);
    self->max_handshakes = self->max_handshakes ? self->max_handshakes : GD_GUARD_MAX_PENDING;
    self->zctx = zmq_ctx_new();
    if (!self->guard)
        return -1;
    if (!self->zctx)
        return -1;
    zmq_ctx_set(self->zctx, ZMQ_MAX_SOCKETS, 65536);
    s_pin(self);
    /* the ZAP handler first: a CURVE socket without one would admit every client */
    char mon[64], err[GD_SOCK_ERRLEN];
    self->zap = gd_zap_new(self->zctx, key, (unsigned)geteuid(), stderr, err, sizeof err);
    if (!self->zap) {
        fprintf(stderr, "groupd: %s\n", err);
        return -1;
    }
    /* the ROUTER's monitor reports connections accepted and ended (liveness, doc §7) and
       handshakes that failed (logged) */
    snprintf(mon, sizeof mon, "inproc://groupd-monitor-%d", (int)getpid());
    gd_sock_opts_t o;
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_ROUTER, self->endpoint);
    o.heartbeat_ivl_ms = self->heartbeat_ms;
    o.heartbeat_timeout_ms = self->heartbeat_ms * GD_SOCK_GROUPD_HEARTBEAT_TIMEOUTS;
    if (self->maxmsgsize)
        o.maxmsgsize = self->maxmsgsize;
    o.monitor_events = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED
                     | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    o.monitor_endpoint = mon;
    if (gd_sock_secure(&o, key, err, sizeof err) < 0) {
        fprintf(stderr, "groupd: %s\n", err);
        return -1;
    }
    self->router = gd_sock_new(self->zctx, &o, &self->monitor, err, sizeof err);
    if (!self->router) {
        fprintf(stderr, "groupd: %s\n", err);
        return -1;
    }
    /* a task that reconnects (a restart) may come back while its old connection with the
       same routing id has not ended here yet: the newer one takes the id over */
    int handover = 1;
    zmq_setsockopt(self->router, ZMQ_ROUTER_HANDOVER, &handover, sizeof handover);
    char last[sizeof self->endpoint];
    if (gd_sock_last_endpoint(self->router, last, sizeof last))
        snprintf(self->endpoint, sizeof self->endpoint, "%s", last);
    char pub[600];
    s_pub_endpoint(self, pub, sizeof pub);
    gd_sock_opts_init(&o, GD_SOCK_GROUPD_XPUB, pub);
    if (self->maxmsgsize)
        o.maxmsgsize = self->maxmsgsize;
    if (gd_sock_secure(&o, key, err, sizeof err) < 0) {
        fprintf(stderr, "groupd: %s\n", err);
        return -1;
    }
    /* on tcp the XPUB's connections count for the guard too (gd_guard.h) */
    char pubmon[64];
    snprintf(pubmon, sizeof pubmon, "inproc://groupd-pubmon-%d", (int)getpid());
    o.monitor_events = gd_sock_needs_key(pub) ? ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED : 0;
    o.monitor_endpoint = o.monitor_events ? pubmon : NULL;
    self->xpub = gd_sock_new(self->zctx, &o, o.monitor_events ? &self->pub_monitor : NULL, err,
                             sizeof err);
    gimpi_key_wipe(&o.security, sizeof o.security);
    if (!self->xpub) {
        fprintf(stderr, "groupd: %s\n", err);
        return -1;
    }
    gd_sock_last_endpoint(self->xpub, self->pub_endpoint, sizeof self->pub_endpoint);
    s_note_socket(self->endpoint, self->sock_id[0]);
    s_note_socket(self->pub_endpoint, self->sock_id[1]);
    self->bound = true;
    signal(SIGPIPE, SIG_IGN);
    return s_signals(self);
}

/*  Leaves the terminal before any ZeroMQ thread exists (they would not survive a fork):
 *  the child starts a new session and carries on; the parent waits for the child's word
 *  on a pipe and exits 0 once it serves, 3 when --restart found nothing to replay, 1 when
 *  it failed (e.g. a groupd already runs).
 *  Returns the write end of the pipe in the child. */
static int s_daemonise(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0) {
        close(p[1]);
        char c = 0;
        ssize_t n;
        do
            n = read(p[0], &c, 1);
        while (n < 0 && errno == EINTR);
        _exit(n == 1 && c == '1' ? 0 : n == 1 && c == '3' ? 3 : 1);
    }
    close(p[0]);
    setsid();
    return p[1];
}

/*  Tells the waiting parent that we serve, and lets go of the terminal. */
static void s_detach(groupd_t *self, int ready_fd)
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        if (!self->verbose)
            dup2(null, 2);
        if (null > 2)
            close(null);
    }
    if (write(ready_fd, "1", 1) < 0 && self->verbose)
        fprintf(stderr, "groupd: parent gone\n");
    close(ready_fd);
}

/*  Closes everything. */
static void s_teardown(groupd_t *self)
{
    gd_serve_fini(self);
    gd_sock_destroy(&self->router, &self->monitor);
    gd_sock_destroy(&self->xpub, self->pub_monitor ? &self->pub_monitor : NULL);
    gd_guard_destroy(&self->guard);
    gd_zap_destroy(&self->zap);
    if (self->zctx)
        zmq_ctx_term(self->zctx);
    if (self->bound) {
        s_remove_socket(self->endpoint, self->sock_id[0]);
        s_remove_socket(self->pub_endpoint, self->sock_id[1]);
    }
    if (self->sig_fd >= 0)
        close(self->sig_fd);
    if (self->lock_fd >= 0)
        close(self->lock_fd);
}

/* ------------------------------------------------------------------ the journal */

/*  Past its bound the journal is rewritten as the state now (gd_record_dump); when that
 *  fails groupd goes on without a journal (said once). */
static void s_compact(groupd_t *self)
{
    char err[700];
    int64_t t0 = gimpi_now_ms();
    size_t before = gd_journal_size(self->journal);
    if (gd_journal_rewrite(self->journal, gd_record_dump, self, err, sizeof err) < 0) {
        fprintf(stderr, "groupd: cannot compact the journal: %s; going on without one\n", err);
        gd_journal_destroy(&self->journal, true);
        gd_dedup_destroy(&self->dedup);
        return;
    }
    gd_follow_image(self);              /* (a standby gets the new file) */
    if (self->verbose)
        fprintf(stderr, "groupd: journal compacted from %zu to %zu bytes in %lld ms\n", before,
                gd_journal_size(self->journal), (long long)(gimpi_now_ms() - t0));
}

/*  The journal's path (--journal FILE: a bare name goes in the private runtime directory;
 *  else beside an ipc endpoint's socket) into path.  0 or -1 (said). */
static int s_journal_path(groupd_t *self, const char *file, char *path, size_t size)
{
    char dir[GIMPI_KEY_PATHLEN], err[700];
    if (!file)
        snprintf(path, size, "%s.journal", self->endpoint + 6);
    else if (!strchr(file, '/')) {      /* a bare name: in our private runtime directory */
        if (gimpi_rundir(dir, sizeof dir, err, sizeof err) < 0) {
            fprintf(stderr, "groupd: --journal %s: %s\n", file, err);
            return -1;
        }
        snprintf(path, size, "%s/%s", dir, file);
    } else
        snprintf(path, size, "%s", file);
    return 0;
}

/*  Opens the journal (--journal FILE, else "<path>.journal" beside an ipc endpoint's
 *  socket; none on tcp without --journal, or with --no-journal) and replays it: a groupd
 *  killed before us is restarted with its state.  0; 1 under --restart when there is
 *  nothing to replay (the groupd before ended on purpose: HALT, idle, a signal); or -1
 *  with a message (a journal that is not ours, or a corrupt one: refused rather than
 *  served half). */
static int s_journal(groupd_t *self, const char *file, size_t max)
{
    char path[600], err[700];
    if (!file && strncmp(self->endpoint, "ipc://", 6) != 0)
        return 0;
    if (s_journal_path(self, file, path, sizeof path) < 0)
        return -1;
    self->journal = gd_journal_open(path, max, err, sizeof err);
    self->dedup = gd_dedup_new();
    if (!self->journal || !self->dedup) {
        fprintf(stderr, "groupd: %s\n", self->journal ? "out of memory" : err);
        return -1;
    }
    int64_t t0 = gimpi_now_ms();
    self->replaying = true;
    long n = gd_journal_replay(self->journal, gd_replay_apply, self, err, sizeof err);
    self->replaying = false;
    if (n < 0) {
        fprintf(stderr, "groupd: %s; not starting (move the file away to start empty)\n",
                err);
        gd_journal_destroy(&self->journal, false);
        return -1;
    }
    if (n == 0 && self->restart_only) {
        gd_journal_destroy(&self->journal, true);
        return 1;               /* --restart: the groupd before us ended on purpose */
    }
    if (n == 0 && gd_journal_append(self->journal, GD_JR_HEAD, (gd_jfield_t[2]){
                      { .i = GD_JOURNAL_FORMAT }, { .q = (uint64_t)t0 } }, 2) < 0) {
        fprintf(stderr, "groupd: cannot write journal %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (n > 0) {
        size_t orphans = gd_serve_orphans_begin(self);
        if (!self->quiet || self->verbose)
            fprintf(stderr, "groupd: restarted from journal %s: %ld records in %lld ms, "
                    "%zu tasks, %zu groups, %zu clients to come back\n", path, n,
                    (long long)(gimpi_now_ms() - t0), gd_registry_ntasks(self->reg),
                    gd_registry_ngroups(self->reg), orphans);
    }
    return 0;
}

/*  zmq_poll timeout under --idle-exit: -1 (no limit) while tasks are registered, a VM
 *  manager is connected, or the option is off, else the milliseconds left of the idle period (0: it is over). */
static long s_idle_timeout(groupd_t *self)
{
    if (self->idle_exit_ms <= 0)
        return -1;
    if (gd_registry_ntasks(self->reg) > 0 || gd_vm_has_manager(self->vm)) {
        self->last_busy_ms = gimpi_now_ms();
        return -1;
    }
    int64_t left = self->last_busy_ms + self->idle_exit_ms - gimpi_now_ms();
    return left > 0 ? (long)left : 0;
}

/*  1 when a ZeroMQ socket has a message to read (ZMQ_EVENTS; this also takes the
 *  activations queued for it), 0 when not, -1 on error. */
static int s_readable(void *socket)
{
    int ev = 0;
    size_t el = sizeof ev;
    if (zmq_getsockopt(socket, ZMQ_EVENTS, &ev, &el) < 0)
        return -1;
    return (ev & ZMQ_POLLIN) != 0;
}

/*  The loop: serves until a signal (0) or a failure (-1).  Cheaper than zmq_poll over
 *  the three sockets, which costs some twenty system calls per request: each round looks
 *  at the ROUTER and the XPUB with ZMQ_EVENTS (a send on them may have taken their
 *  activation, so their fds alone are not enough) and handles what is there until both
 *  are empty; then it sleeps in one poll(2) on the notification fds.  The monitor socket
 *  is only ever read until empty, so its fd alone says when to look at it; so is the ZAP
 *  handler's, which is served only when its fd wakes us (connect time, never per request).
 *  The monitor comes first: a connection's end is known before a recycled fd's requests. */
static int s_serve(groupd_t *self)
{
    struct pollfd pf[6] = { { .events = POLLIN }, { .events = POLLIN },
                            { .events = POLLIN }, { .fd = self->sig_fd, .events = POLLIN },
                            { .events = POLLIN }, { .fd = -1, .events = POLLIN } };
    size_t fl = sizeof pf[0].fd;
    if (zmq_getsockopt(self->router, ZMQ_FD, &pf[0].fd, &fl) < 0
        || zmq_getsockopt(self->xpub, ZMQ_FD, &pf[1].fd, &fl) < 0
        || zmq_getsockopt(self->monitor, ZMQ_FD, &pf[2].fd, &fl) < 0
        || zmq_getsockopt(gd_zap_socket(self->zap), ZMQ_FD, &pf[4].fd, &fl) < 0
        || (self->pub_monitor && zmq_getsockopt(self->pub_monitor, ZMQ_FD, &pf[5].fd, &fl) < 0))
        return -1;
    bool monitor_due = true, zap_due = true;
    self->last_busy_ms = gimpi_now_ms();
    for (;;) {
        gd_follow_tick(self);               /* (a stop of ours seen before any request) */
        if (zap_due)
            gd_zap_serve(self->zap);
        if (monitor_due) {
            gd_serve_drain_monitor(self);
            gd_serve_drain_pub_monitor(self);
        }
        int rc = s_readable(self->router);
        for (int k = 0; rc > 0 && k < 256; k++, rc = s_readable(self->router))
            gd_serve_request_next(self);
        if (self->journal && gd_journal_full(self->journal))
            s_compact(self);
        int fo = gd_follow_tick(self);      /* the standby's heartbeats, busy or not */
        int rx = s_readable(self->xpub);
        for (int k = 0; rx > 0 && k < 256; k++, rx = s_readable(self->xpub))
            gd_serve_subscription(self);
        if (rc < 0 || rx < 0)
            return -1;
        bool marked = gd_hash_size(self->marks) > 0;
        gd_serve_publish_marks(self);
        if (!self->marks)
            return -1;
        if (self->fenced)
            return 0;
        if (self->halted) {
            /* the HALT's reply must still reach its sender: closing waits this long */
            int linger = HALT_LINGER_MS;
            zmq_setsockopt(self->router, ZMQ_LINGER, &linger, sizeof linger);
            if (self->verbose)
                fprintf(stderr, "groupd: halted, exiting\n");
            return 0;
        }
        /* both found empty after the last send on them: sleep (unless a batch bound was
           hit, or MARKs went out on the XPUB since it was looked at).  A round that does
           not sleep looks at the ZAP handler and the monitors too (one ZMQ_EVENTS each):
           their fds are only seen by the poll, and a burst of subscriptions (every task
           back after a restart) or of requests would keep new connections' handshakes
           waiting for it, seen as HELLOs unanswered for a second or more */
        monitor_due = zap_due = rc > 0 || rx > 0 || marked;
        if (monitor_due)
            continue;
        long timeout = s_idle_timeout(self);
        int due = gd_serve_flush_logs(self);        /* a held-back summary line */
        gd_serve_expire_orphans(self);              /* clients that did not come back */
        int od = gd_serve_orphans_due_ms(self);
        if (od >= 0 && (due < 0 || od < due))
            due = od;
        if (fo >= 0 && (due < 0 || fo < due))
            due = fo;
        int fe = gd_standby_tick(self);             /* FENCEs to the old primary */
        if (fe >= 0 && (due < 0 || fe < due))
            due = fe;
        gd_guard_trim(self->guard, gimpi_now_ms());  /* memory back after a flood */
        int trim = gd_guard_trim_due_ms(self->guard, gimpi_now_ms());
        if (trim >= 0 && (due < 0 || trim < due))
            due = trim;
        bool idle_over = timeout == 0;
        if (due >= 0 && (timeout < 0 || due < timeout))
            timeout = due + 1;
        if (idle_over) {
            if (self->verbose)
                fprintf(stderr, "groupd: idle for %d s, exiting\n", self->idle_exit_ms / 1000);
            return 0;
        }
        int np = poll(pf, 6, timeout > INT_MAX ? INT_MAX : (int)timeout);
        if (np < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (np == 0)
            continue;           /* idle period over: s_idle_timeout says so next round */
        if (gd_registry_ntasks(self->reg) > 0 || gd_vm_has_manager(self->vm))
            self->last_busy_ms = gimpi_now_ms();     /* busy until now (a task may leave later) */
        int sig = pf[3].revents ? gd_witness_signal(self) : 0;
        if (sig == SIGUSR1)
            gd_follow_granted(self);    /* (the witness: go on alone) */
        else if (sig) {
            if (self->verbose)
                fprintf(stderr, "groupd: signal, exiting\n");
            return 0;
        }
        monitor_due = pf[2].revents != 0 || pf[5].revents != 0;
        zap_due = pf[4].revents != 0;
    }
}

/*  Prints the synopsis. */
static void s_usage(FILE *out)
{
    fprintf(out, "usage: groupd [--endpoint EP | --port P [--bind ADDR]] [--foreground]\n"
                 "              [--verbose | --quiet] [--heartbeat MS] [--idle-exit SECONDS]\n"
                 "              [--cpu N|none] [--key FILE] [--max-msg-size BYTES]\n"
                 "              [--max-tasks N] [--max-groups N] [--max-reserve N]\n"
                 "              [--max-unregistered N] [--pub-port P]\n"
                 "              [--mbox-max-entry BYTES] [--mbox-max-per-task N]\n"
                 "              [--mbox-max-bytes BYTES] [--max-handshakes N]\n"
                 "              [--max-sub-bytes BYTES] [--launcher]\n"
                 "              [--journal FILE | --no-journal] [--journal-max BYTES]\n"
                 "              [--reattach MS] [--restart] [--standby-of EP] [--witness]\n"
                 "  --port P      requests on tcp://ADDR:P, events on port P+1 (fixed ports)\n"
                 "  --bind ADDR   the address (or interface) of --port (default 0.0.0.0)\n"
                 "  --launcher    print 'manager-token HEX' first: only a HOSTS_SET with it\n"
                 "                makes its connection the VM's manager\n"
                 "  --journal F   journal every change to F (a bare name: in the private\n"
                 "                runtime directory) and replay it at start (default\n"
                 "                on ipc: the endpoint's path + .journal; none on tcp)\n"
                 "  --journal-max compact the journal past this many bytes (64 MiB)\n"
                 "  --reattach MS replayed tasks not back within MS are gone (10000)\n"
                 "  --standby-of EP follow the primary groupd at EP into --journal F, and\n"
                 "                take over (serve at --endpoint) when it falls silent\n"
                 "  --witness     the launcher arbitrates: a standby takes over, and a\n"
                 "                primary goes on without its standby, only when granted\n"
                 "                (SIGUSR1) after asking on stdout\n"
                 "  --restart     only replay: exit 3 when there is no journal to replay\n");
}

/*  Parses a number option within [lo, hi]; false with a message when it is not one. */
static bool s_num(const char *arg, long lo, long hi, const char *name, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || *end || end == arg || v < lo || v > hi) {
        fprintf(stderr, "groupd: bad --%s '%s'\n", name, arg);
        return false;
    }
    *out = v;
    return true;
}

/*  Loads the key: --key FILE, else (tcp only: ipc needs none) the user's default.  0 with
 *  *have set when there is one, or -1 with a message on stderr. */
static int s_load_key(groupd_t *self, const char *file, gimpi_key_t *key, bool *have)
{
    char from[GIMPI_KEY_PATHLEN + 64], err[GIMPI_KEY_ERRLEN];
    *have = false;
    if (!file && !gd_sock_needs_key(self->endpoint))
        return 0;
    int rc = file ? gimpi_key_load(key, file, err, sizeof err)
                  : gimpi_key_default(key, from, sizeof from, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "groupd: %s\n", err);
        return -1;
    }
    if (file)
        snprintf(from, sizeof from, "%s", file);
    *have = true;
    char fp[9];
    if ((gd_sock_needs_key(self->endpoint) && !self->quiet) || self->verbose)
        fprintf(stderr, "groupd: key fingerprint %s from %s\n", gimpi_key_fingerprint(key, fp),
                from);
    return 0;
}

/*  --port P [--bind ADDR]: the endpoint tcp://ADDR:P (ADDR 0.0.0.0 by default), events
 *  on P+1 unless --pub-port says otherwise.  0 (*ep set when --port was given), or -1
 *  with a message when the options do not fit together. */
static int s_port_endpoint(groupd_t *self, int port, const char *bind_addr, const char **ep)
{
    if (!port) {
        if (bind_addr)
            fprintf(stderr, "groupd: --bind needs --port\n");
        return bind_addr ? -1 : 0;
    }
    if (*ep) {
        fprintf(stderr, "groupd: --port and --endpoint exclude each other\n");
        return -1;
    }
    if (!bind_addr)
        bind_addr = "0.0.0.0";
    if (!*bind_addr || strpbrk(bind_addr, "/ :")
        || strlen(bind_addr) + 16 >= sizeof self->endpoint - 8) {
        fprintf(stderr, "groupd: bad --bind '%s' (an IPv4 address, a host or an interface "
                "name)\n", bind_addr);
        return -1;
    }
    snprintf(self->endpoint, sizeof self->endpoint, "tcp://%s:%d", bind_addr, port);
    if (!self->pub_port)
        self->pub_port = port + 1;
    *ep = self->endpoint;
    return 0;
}

/*  --mbox-max-entry (c 'E'), --mbox-max-per-task ('N'), --mbox-max-bytes ('B'): the
 *  message box's bounds; --max-handshakes ('S'), --max-sub-bytes ('Y'): the floods'
 *  (gd_guard.h, gd_serve.h); --journal ('J'), --no-journal ('O'), --journal-max ('X'),
 *  --reattach ('A'): the journal's.  False with a message when arg is not one. */
static bool s_mbox_option(groupd_t *self, int c, const char *arg)
{
    long v;
    if (c == 'S' && s_num(arg, 1, INT32_MAX, "max-handshakes", &v))
        self->max_handshakes = (int)v;
    else if (c == 'Y' && s_num(arg, GD_MAX_NAME + 2, LONG_MAX, "max-sub-bytes", &v))
        self->max_sub_bytes = (size_t)v;
    else if (c == 'E' && s_num(arg, 1, GD_MBOX_MAX_ENTRY, "mbox-max-entry", &v))
        self->mbox_lim.max_entry = (size_t)v;
    else if (c == 'N' && s_num(arg, 1, INT32_MAX, "mbox-max-per-task", &v))
        self->mbox_lim.max_per_task = (int)v;
    else if (c == 'B' && s_num(arg, 1, LONG_MAX, "mbox-max-bytes", &v))
        self->mbox_lim.max_bytes = (size_t)v;
    else if (c == 'J')
        self->journal_file = arg;
    else if (c == 'O')
        self->no_journal = true;
    else if (c == 'X' && s_num(arg, 4096, LONG_MAX, "journal-max", &v))
        self->journal_max = (size_t)v;
    else if (c == 'A' && s_num(arg, 0, 86400000, "reattach", &v))
        self->reattach_ms = (int)v;
    else if (c == 'W')
        self->restart_only = true;
    else
        return false;
    return true;
}

/*  Default of --cpu: -2 (the CPU groupd starts on), except in sanitizer builds, where
 *  LeakSanitizer's exit-time tracer inherits the pin and was seen to stall for minutes
 *  beside the pinned threads: there -1 (no pin). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GROUPD_DEFAULT_CPU (-1)
#else
#define GROUPD_DEFAULT_CPU (-2)
#endif

/*  Parses the command line into self, lim, *ep (--endpoint or --port's, else NULL) and
 *  *keyfile.  -1 to go on, else the exit status (0 after --help, 2 for a bad option). */
static int s_options(groupd_t *self, int argc, char **argv, gd_registry_limits_t *lim,
                     const char **ep, const char **keyfile)
{
    static const struct option opts[] = {
        { "endpoint", required_argument, NULL, 'e' },
        { "foreground", no_argument, NULL, 'f' },
        { "verbose", no_argument, NULL, 'v' },
        { "quiet", no_argument, NULL, 'q' },
        { "heartbeat", required_argument, NULL, 'H' },
        { "idle-exit", required_argument, NULL, 'I' },
        { "cpu", required_argument, NULL, 'c' },
        { "key", required_argument, NULL, 'k' },
        { "max-msg-size", required_argument, NULL, 'M' },
        { "max-tasks", required_argument, NULL, 'T' },
        { "max-groups", required_argument, NULL, 'G' },
        { "max-reserve", required_argument, NULL, 'R' },
        { "max-unregistered", required_argument, NULL, 'U' },
        { "pub-port", required_argument, NULL, 'P' },
        { "mbox-max-entry", required_argument, NULL, 'E' },
        { "mbox-max-per-task", required_argument, NULL, 'N' },
        { "mbox-max-bytes", required_argument, NULL, 'B' },
        { "port", required_argument, NULL, 'p' },
        { "bind", required_argument, NULL, 'b' },
        { "launcher", no_argument, NULL, 'L' },
        { "max-handshakes", required_argument, NULL, 'S' },
        { "max-sub-bytes", required_argument, NULL, 'Y' },
        { "journal", required_argument, NULL, 'J' },
        { "no-journal", no_argument, NULL, 'O' },
        { "journal-max", required_argument, NULL, 'X' },
        { "reattach", required_argument, NULL, 'A' },
        { "restart", no_argument, NULL, 'W' },
        { "standby-of", required_argument, NULL, 'F' },
        { "witness", no_argument, NULL, 'V' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *bind_addr = NULL;
    int port = 0;
    long v;
    int c;
    while ((c = getopt_long(argc, argv, "e:fvH:I:c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'k': *keyfile = optarg; break;
        case 'M':
            if (!s_num(optarg, GD_MAX_NAME + 1024, INT32_MAX, "max-msg-size", &v))
                return 2;
            self->maxmsgsize = v;
            break;
        case 'T':
            if (!s_num(optarg, 1, INT32_MAX, "max-tasks", &v))
                return 2;
            lim->max_tasks = (int)v;
            break;
        case 'G':
            if (!s_num(optarg, 1, INT32_MAX, "max-groups", &v))
                return 2;
            lim->max_groups = (int)v;
            break;
        case 'R':
            if (!s_num(optarg, 1, INT32_MAX, "max-reserve", &v))
                return 2;
            lim->reserve_quota = (int)v;
            break;
        case 'U':
            if (!s_num(optarg, 1, UINT32_MAX - 1, "max-unregistered", &v))
                return 2;
            self->max_unreg = (uint32_t)v;
            break;
        case 'P':
            if (!s_num(optarg, 1, 65535, "pub-port", &v))
                return 2;
            self->pub_port = (int)v;
            break;
        case 'p':
            if (!s_num(optarg, 1, 65534, "port", &v))
                return 2;
            port = (int)v;
            break;
        case 'b': bind_addr = optarg; break;
        case 'L': self->launcher = true; break;
        case 'F': self->standby_of = optarg; break;
        case 'V': self->witness = true; break;
        case 'e': *ep = optarg; break;
        case 'f': self->foreground = true; break;
        case 'v': self->verbose = true; break;
        case 'q': self->quiet = true; break;
        case 'H':
            if (!s_num(optarg, 0, 3600000, "heartbeat", &v))
                return 2;
            self->heartbeat_ms = (int)v;
            break;
        case 'I':
            if (!s_num(optarg, 0, 86400 * 365, "idle-exit", &v))
                return 2;
            self->idle_exit_ms = (int)v * 1000;
            break;
        case 'c': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (!strcmp(optarg, "none"))
                v = -1;
            else if (*end || v < 0 || v >= CPU_SETSIZE) {
                fprintf(stderr, "groupd: bad --cpu '%s'\n", optarg);
                return 2;
            }
            self->cpu = (int)v;
            break;
        }
        case 'h': s_usage(stdout); return 0;
        case '?': s_usage(stderr); return 2;
        default:
            if (!s_mbox_option(self, c, optarg))
                return 2;
        }
    }
    if (optind < argc) {
        s_usage(stderr);
        return 2;
    }
    return s_port_endpoint(self, port, bind_addr, ep) < 0 ? 2 : -1;
}

/*  --launcher: makes the manager token (random), hands it to the relay and prints it as
 *  the first stdout line, "manager-token HEX", for the launcher that started us (our
 *  stdout is its pipe): only a HOSTS_SET that carries it makes the VM's manager, so a
 *  holder of the key cannot take the role from the job's own launcher. */
static void s_print_token(groupd_t *self)
{
    if (!self->launcher)
        return;
    uint8_t tok[GD_TOKEN_SIZE];
    char hex[2 * GD_TOKEN_SIZE + 1];
    randombytes_buf(tok, sizeof tok);
    gd_vm_set_token(self->vm, tok);
    printf("manager-token %s\n", sodium_bin2hex(hex, sizeof hex, tok, sizeof tok));
    gimpi_key_wipe(tok, sizeof tok);
    gimpi_key_wipe(hex, sizeof hex);
}

/*  --standby-of: follows the primary into the journal (--journal is needed) until it is
 *  to take over.  0, 1 (stopped by a signal: the journal is removed), or -1 (said). */
static int s_standby(groupd_t *self, const gimpi_key_t *key, int *ready_fd)
{
    char path[600];
    if (!self->journal_file || self->no_journal) {
        fprintf(stderr, "groupd: --standby-of needs --journal FILE\n");
        return -1;
    }
    if (s_journal_path(self, self->journal_file, path, sizeof path) < 0)
        return -1;
    return gd_standby_follow(self, self->standby_of, key, path, ready_fd);
}

/*  Parses the command line, sets up, serves until a signal. */
int main(int argc, char **argv)
{
    groupd_t self = { .lock_fd = -1, .sig_fd = -1, .heartbeat_ms = GD_SOCK_GROUPD_HEARTBEAT_MS,
                      .cpu = GROUPD_DEFAULT_CPU };
    const char *ep = NULL, *keyfile = NULL;
    gd_registry_limits_t lim = { 0 };
    int status = s_options(&self, argc, argv, &lim, &ep, &keyfile);
    if (status >= 0)
        return status;
    if (!ep && (ep = gimpi_env("GIMPI_GROUPD")) && !*ep)
        ep = NULL;
    char why[GIMPI_KEY_ERRLEN];
    if (!ep && !(ep = gd_default_endpoint(self.endpoint, sizeof self.endpoint, why, sizeof why))) {
        fprintf(stderr, "groupd: %s\n", why);
        return 1;
    }
    if (strlen(ep) >= sizeof self.endpoint - 8) {
        fprintf(stderr, "groupd: endpoint %.80s... is too long: at most %zu characters\n", ep,
                sizeof self.endpoint - 9);
        return 2;
    }
    if (ep != self.endpoint)
        snprintf(self.endpoint, sizeof self.endpoint, "%s", ep);
    if (!s_scheme_ok(self.endpoint))
        return 2;
    gimpi_key_t key;
    bool have_key;
    if (s_load_key(&self, keyfile, &key, &have_key) < 0)
        return 1;
    int ready_fd = -1;
    if (!self.foreground && (ready_fd = s_daemonise()) < 0) {
        fprintf(stderr, "groupd: fork: %s\n", strerror(errno));
        return 1;
    }
    int sbrc = 0;
    if (self.standby_of && s_signals(&self) < 0) {
        fprintf(stderr, "groupd: signalfd: %s\n", strerror(errno));
        sbrc = -1;
    } else if (self.standby_of)
        sbrc = s_standby(&self, have_key ? &key : NULL, &ready_fd);
    if (sbrc != 0) {                    /* (1: stopped while following) */
        gimpi_key_wipe(&key, sizeof key);
        gd_standby_destroy(&self);
        return sbrc < 0;
    }
    int rc = gd_serve_init(&self, stderr, &lim) < 0 || s_setup(&self, have_key ? &key : NULL);
    gimpi_key_wipe(&key, sizeof key);
    int jrc = rc ? 0 : self.no_journal ? self.restart_only
                     : s_journal(&self, self.journal_file, self.journal_max);
    if (!rc && !jrc && self.standby)
        gd_standby_took_over(&self);
    if (rc || jrc) {
        gd_standby_destroy(&self);
        gd_journal_destroy(&self.journal, false);
        s_teardown(&self);
        if (jrc == 1 && ready_fd >= 0 && write(ready_fd, "3", 1) < 0)
            return 1;
        return jrc == 1 ? 3 : 1;        /* 3: --restart found nothing to replay */
    }
    s_print_token(&self);
    printf("%s\n", self.endpoint);
    fflush(stdout);
    if (ready_fd >= 0)
        s_detach(&self, ready_fd);
    s_lock_pid(&self);
    if (self.verbose)
        fprintf(stderr, "groupd: serving %s, events on %s\n", self.endpoint,
                self.pub_endpoint);
    bool failed = s_serve(&self) < 0;
    if (failed)
        fprintf(stderr, "groupd: poll: %s\n", zmq_strerror(errno));
    /* an end on purpose: nothing to replay (fenced: the newer primary has it all) */
    gd_journal_destroy(&self.journal, !failed && !self.fenced);
    gd_standby_destroy(&self);
    s_teardown(&self);
    return self.fenced ? 4 : 0;
}
