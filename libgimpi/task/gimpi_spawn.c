/*  gimpi_spawn.c — starting new tasks from a running one (the native side of pvm_spawn):
 *  finding the program (GIMPI_PATH, beside this program, PVM's ep; not PATH), reserving
 *  the children's tids from groupd, and starting each child as a real process that
 *  becomes a dynamic host of the data plane (it calls this task at the contact it is
 *  given, registers its own contact with groupd, and is found by every other task
 *  through groupd's LOOKUP).
 *
 *  Each child is started by a short-lived middle process (double fork), so the children
 *  are never this process's zombies; the middle reports the child's pid, the child
 *  reports a failed execve on the same close-on-exec pipe.  The spawner watches each
 *  child through a pidfd until it calls (gimpi_msg_expect): a child that dies first makes
 *  the operations with it fail instead of waiting.  Output: children write straight to
 *  the spawner's stdout and stderr; with GIMPI_SPAWN_TAG a tagger process per child
 *  (also reparented) copies its lines with a "[t<hex tid>] " prefix, marked for the
 *  launcher when there is one (base/gimpi_tagout.h); when this task or an ancestor
 *  catches output (gimpi_catchout), a copier process per child sends it to the catching
 *  task instead (gimpi_catch.h).  Tagger and copier are the gimpi-tagger program, not
 *  copies of this one.  gimpi_spawn_on
 *  places tasks on the hosts of a virtual machine: on another host (or round-robin), the
 *  children's tids are reserved here and the manager starts them there (gimpi_vm.c).
 *  See doc/spawn.md and doc/multihost.md.
 */
#include "gimpi.h"
#include "task/gimpi_job.h"
#include "base/gimpi_bind.h"
#include "base/gimpi_key.h"
#include "task/gimpi_vm.h"
#include "base/gimpi_vmwire.h"
#include "task/gimpi_catch.h"
#include "task/gimpi_kids.h"
#include "base/gimpi_tunables.h"
#include "base/gimpi_findprog.h"
#include "base/gimpi_tagout.h"

#include <arpa/inet.h>
#include <assert.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#ifndef GIMPI_PKGLIBEXECDIR
#define GIMPI_PKGLIBEXECDIR "/usr/local/libexec/gimpi"
#endif

#define SPAWN_MAX 100000        /* children per call */
#define CATCH_SYNC_MS 10000     /* bound of the wait for our collector's BEGIN lines */

/*  1 when path names an executable regular file. */
static int s_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/*  The folder of the running program into buf ("" when it cannot be known). */
static const char *s_self_dir(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    buf[n > 0 ? n : 0] = 0;
    char *slash = strrchr(buf, '/');
    if (slash)
        *slash = 0;
    return buf;
}

/*  The full path of the program to start: file as given when it has a slash, else as
 *  gimpi_findspawn finds it (GIMPI_PATH, this program's folder, PVM's default ep; never
 *  PATH, as in PVM).  0, or GIMPI_ENOFILE (for a bare name, the places looked are said
 *  on stderr unless quiet). */
static int s_find(const char *file, char *out, size_t size, bool quiet)
{
    if (strchr(file, '/'))              /* the one place: the caller knows it */
        return s_executable(file) && realpath(file, out) ? 0 : GIMPI_ENOFILE;
    char dir[PATH_MAX], tried[2048];
    if (gimpi_findspawn(file, s_self_dir(dir, sizeof dir), out, size, tried, sizeof tried) == 0)
        return 0;
    if (!quiet)
        fprintf(stderr, "gimpi: spawn: no program %s: looked for %s; PATH is not searched, "
                "as in PVM: set GIMPI_PATH to its folder or give its path\n", file, tried);
    return GIMPI_ENOFILE;
}

/*  1 for the variables a spawner sets itself (not copied from its own environment). */
static int s_ours(const char *var)
{
    static const char *const names[] = {
        GIMPI_ENV_TID, GIMPI_ENV_PARENT, GIMPI_ENV_PARENT_CONTACT, GIMPI_ENV_SIBLINGS,
        "GIMPI_GROUPD", "GIMPI_TIDBASE", "GIMPI_SPAWN_DIR", GIMPI_ENV_LISTEN_FD,
        GIMPI_ENV_TABLES_FD, GIMPI_ENV_GO_FD, GIMPI_ENV_CLIENT, GIMPI_ENV_LOCAL,
        GIMPI_ENV_TID_TOKEN, GIMPI_ENV_CATCHOUT_FD, GIMPI_ENV_BOUND,
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t l = strlen(names[i]);
        if (!strncmp(var, names[i], l) && var[l] == '=')
            return 1;
    }
    return 0;
}

/*  Reads exactly n bytes (or fewer at end of stream); returns how many. */
static size_t s_read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

/*  Closes the descriptors first..last (async-signal-safe). */
static void s_close_range(int first, int last)
{
    if (first > last)
        return;
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, (unsigned)last, 0) == 0)
        return;
#endif
    for (int fd = first; fd <= last && fd < 65536; fd++)
        close(fd);
}

/*  Closes every descriptor from 3 up but a and b (async-signal-safe). */
static void s_close_except(int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    s_close_range(3, lo - 1);
    s_close_range(lo + 1, hi - 1);
    s_close_range(hi + 1, INT_MAX);
}

/*  The copier of a caught child: sends what comes out of its pipe as records on the
 *  collector's socket, then CATCH_EOF (async-signal-safe calls only). */
static void s_copier(int in, int catchfd, int32_t tid)
{
    char buf[CATCH_CHUNK];
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        gimpi_catch_send(catchfd, tid, CATCH_DATA, buf, (size_t)r);
    }
    gimpi_catch_send(catchfd, tid, CATCH_EOF, NULL, 0);
}

/*  Closes a pipe's ends that are open. */
static void s_close_pipe(int p[2])
{
    for (int k = 0; k < 2; k++)
        if (p[k] >= 0)
            close(p[k]);
}

/*  In the forked tagger or copier: runs helper (gimpi-tagger) with *a on descriptor 3
 *  and *b on 4 and every other descriptor closed; returns only when that failed, with *a
 *  and *b the descriptors that hold them now (async-signal-safe calls only). */
static void s_exec_helper(const char *helper, char *const hargv[], int *a, int *b)
{
    if (!helper)
        return;
    int a2 = fcntl(*a, F_DUPFD, 16), b2 = fcntl(*b, F_DUPFD, 16);
    if (a2 < 0 || b2 < 0)
        return;
    *a = a2;                            /* until the helper runs, these hold them */
    *b = b2;
    if (dup2(a2, 3) < 0 || dup2(b2, 4) < 0)
        return;
    s_close_range(5, INT_MAX);
    execve(helper, hargv, environ);
    *a = 3;                             /* no helper: the caller works with these */
    *b = 4;
}

/*  Starts one child through a middle process.  status_w is the close-on-exec pipe the
 *  middle writes the child's pid and its tagger's or copier's (0: none) to, then the
 *  child's execve errno if it failed (the
 *  middle learns it on a close-on-exec pipe of its own before it answers).  With tag, a
 *  tagger copies the child's lines to our stdout and stderr; with catchfd >= 0 (a
 *  collector's socket, gimpi_catch.h) the child's stdout and stderr are one pipe, the
 *  middle sends CATCH_BEGIN and a copier sends the rest.  The tagger or copier is the
 *  program helper with the arguments hargv (gimpi-tagger: no copy of this program stays
 *  behind per child); a fork of the middle does the work when it cannot be run.  Only
 *  async-signal-safe calls after fork. */
static pid_t s_start(const char *path, char *const argv[], char *const envp[], int devnull,
                     int status_w, const char *tag, int catchfd, int32_t tid,
                     const cpu_set_t *home, const char *helper, char *const hargv[])
{
    pid_t middle = fork();
    if (middle != 0)
        return middle;
    int out[2] = { -1, -1 }, err[2] = { -1, -1 }, ex[2] = { -1, -1 };
    if (catchfd >= 0)
        tag = NULL;
    if (catchfd >= 0 && pipe(out) < 0)
        catchfd = -1;                       /* no pipe: uncaught output rather than none */
    if (tag && (pipe(out) < 0 || pipe(err) < 0))
        tag = NULL;                         /* no pipes: untagged output rather than none */
    if (pipe2(ex, O_CLOEXEC) < 0)
        ex[0] = ex[1] = -1;
    pid_t child = fork();
    if (child == 0) {
        if (home)                           /* not pinned to its parent's core */
            sched_setaffinity(0, sizeof *home, home);
        if (devnull >= 0)
            dup2(devnull, 0);
        if (tag || catchfd >= 0) {
            dup2(out[1], 1);
            dup2(catchfd >= 0 ? out[1] : err[1], 2);
            s_close_pipe(out);
            s_close_pipe(err);
        }
        if (catchfd >= 0)
            fcntl(catchfd, F_SETFD, 0);     /* its own children are caught here too */
        execve(path, argv, envp);
        int e = errno;
        vmw_write_all(ex[1] >= 0 ? ex[1] : status_w, (const char *)&e, sizeof e);
        _exit(127);
    }
    int e = 0;
    if (ex[1] >= 0) {                       /* until the execve is done or failed */
        close(ex[1]);
        if (child < 0 || s_read_all(ex[0], &e, sizeof e) != sizeof e)
            e = 0;
        close(ex[0]);
    }
    if (child > 0 && !e && catchfd >= 0)
        gimpi_catch_send(catchfd, tid, CATCH_BEGIN, NULL, 0);
    pid_t helper_pid = child > 0 && !e && (tag || catchfd >= 0) ? fork() : -1;
    if (helper_pid == 0) {
        /* named, so that a launcher tells it from the tasks (it ends with their output) */
        prctl(PR_SET_NAME, "gimpi-tagger", 0, 0, 0);
        /* keep nothing of the spawner's (its connections must close when it dies) */
        if (catchfd >= 0) {
            s_close_except(out[0], catchfd);
            close(1);                       /* a caught spawner's stdout is its own pipe */
            close(2);
            s_exec_helper(helper, hargv, &out[0], &catchfd);
            s_copier(out[0], catchfd, tid);
        } else {
            s_close_except(out[0], err[0]);
            s_exec_helper(helper, hargv, &out[0], &err[0]);
            gimpi_tagout_copy(out[0], err[0], tag);
        }
        _exit(0);
    }
    int32_t pids[2] = { child, helper_pid > 0 ? helper_pid : 0 };
    vmw_write_all(status_w, (const char *)pids, sizeof pids);
    if (e)
        vmw_write_all(status_w, (const char *)&e, sizeof e);
    _exit(child > 0 ? 0 : 1);
}

/*  A descriptor that is readable once process pid has ended (a pidfd; for a process
 *  already gone, a pipe whose writer is closed), or -1 when neither can be made. */
static int s_alive_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (fd >= 0) {
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        return fd;
    }
    if (errno == ESRCH) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
            return -1;
        close(p[1]);
        return p[0];
    }
#endif
    (void)pid;
    return -1;
}

/*  Everything a spawn call prepares before forking. */
typedef struct {
    char path[PATH_MAX];
    char **argv;
    char **envp;                /* shared variables, then GIMPI_TID, GIMPI_TID_TOKEN, NULL */
    int nshared;
    int first_ours;             /* envp[first_ours .. nshared-1]: the spawner's hand-over */
    char *strings;              /* the GIMPI_* values (one allocation) */
} plan_t;

/*  Frees a plan. */
static void s_plan_free(plan_t *pl)
{
    free(pl->argv);
    free(pl->envp);
    free(pl->strings);
}

/*  Builds argv (path first) and the environment of the children. */
static int s_plan(gimpi_t *self, plan_t *pl, char *const argv[], int base, int n)
{
    int argc = 0;
    while (argv && argv[argc])
        argc++;
    int nenv = 0;
    while (environ[nenv])
        nenv++;
    pl->argv = calloc((size_t)argc + 2, sizeof *pl->argv);
    pl->envp = calloc((size_t)nenv + 9, sizeof *pl->envp);
    size_t sibsize = (size_t)n * 12 + 64;
    pl->strings = malloc(sibsize + 1024 + PATH_MAX);
    if (!pl->argv || !pl->envp || !pl->strings)
        return GIMPI_ENOMEM;
    pl->argv[0] = pl->path;
    for (int i = 0; i < argc; i++)
        pl->argv[i + 1] = argv[i];
    int k = 0;
    for (int i = 0; i < nenv; i++)
        if (!s_ours(environ[i]))
            pl->envp[k++] = environ[i];
    uint8_t addr[16];
    int port;
    gimpi_msg_t *msg = gimpi_msg(self);
    if (gimpi_msg_contact(msg, addr, &port) < 0)
        return GIMPI_ESYSERR;
    struct in_addr ia = { htonl(impi_addr16_ipv4(addr)) };
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &ia, ip, sizeof ip);
    char *s = pl->strings;
    size_t left = sibsize + 1024 + PATH_MAX;
    int w;
    pl->first_ours = k;
    pl->envp[k++] = s;
    w = snprintf(s, left, "%s=%d", GIMPI_ENV_PARENT, gimpi_msg_mytid(msg)) + 1;
    s += w, left -= (size_t)w;
    pl->envp[k++] = s;
    w = snprintf(s, left, "%s=%s:%d", GIMPI_ENV_PARENT_CONTACT, ip, port) + 1;
    s += w, left -= (size_t)w;
    pl->envp[k++] = s;
    w = snprintf(s, left, "GIMPI_GROUPD=%s", gimpi_groupd_endpoint(self)) + 1;
    s += w, left -= (size_t)w;
    pl->envp[k++] = s;
    w = snprintf(s, left, "%s=", GIMPI_ENV_SIBLINGS);
    for (int i = 0; i < n; i++)
        w += snprintf(s + w, left - (size_t)w, i ? ",%d" : "%d", base + i + 1);
    pl->nshared = k;
    return 0;
}

/*  The gimpi-tagger program (base/gimpi_findprog.h: beside this program, the build
 *  tree's programs/, the installation's pkglibexecdir, PATH): 1 with its path in out, 0
 *  when there is none (a fork of the spawner does its work then). */
static int s_helper(char *out, size_t size)
{
    return gimpi_findprog("gimpi-tagger", NULL, "programs", GIMPI_PKGLIBEXECDIR, out, size,
                          NULL, 0) == 0;
}

/*  Starts n tasks. */
int gimpi_spawn(gimpi_t *self, const char *file, char *const argv[], int flags, int n,
                int *tids)
{
    assert(self);
    if (!file || !*file || !tids || n < 1 || n > SPAWN_MAX)
        return GIMPI_EBADPARAM;
    plan_t pl = { .argv = NULL };
    int rc = s_find(file, pl.path, sizeof pl.path, flags & GIMPI_SPAWN_QUIET);
    if (rc < 0) {
        for (int i = 0; i < n; i++)
            tids[i] = rc;
        return 0;
    }
    gimpi_spawn_reap(self);
    char token[GIMPI_GROUPS_TOKEN_LEN + 1];
    int base = gimpi_groups_reserve_token(gimpi_groups(self), "", n, token);
    if (base < 0)
        return GIMPI_ESYSERR;
    /* the children's proof that their tids are theirs: in the environment, which only
       this user can read (never on a command line) */
    char tokvar[sizeof GIMPI_ENV_TID_TOKEN + GIMPI_GROUPS_TOKEN_LEN + 2];
    snprintf(tokvar, sizeof tokvar, "%s=%s", GIMPI_ENV_TID_TOKEN, token);
    rc = s_plan(self, &pl, argv, base, n);
    if (rc < 0) {
        s_plan_free(&pl);
        return rc;
    }
    /* caught output (gimpi_catchout, or a catching ancestor's): replaces the tagging */
    int catchfd = gimpi_catch_fd(gimpi_task_catch(self));
    char catchvar[48];
    snprintf(catchvar, sizeof catchvar, "%s=%d", GIMPI_ENV_CATCHOUT_FD, catchfd);
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    cpu_set_t home;
    int bound = gimpi_bind_home(&home) == 0;
    char helper[PATH_MAX + 256];
    int have_helper = ((flags & GIMPI_SPAWN_TAG) || catchfd >= 0)
                      && s_helper(helper, sizeof helper);
    const char *job = gimpi_env("GIMPI_JOB_PID");          /* a launcher reads our output */
    const char *mark = job && *job ? "\x1e" : "";
    int started = 0;
    for (int i = 0; i < n; i++) {
        int tid = base + i + 1;
        char tidvar[48], tag[32], tidnum[16];
        snprintf(tidvar, sizeof tidvar, "%s=%d", GIMPI_ENV_TID, tid);
        snprintf(tag, sizeof tag, "%s[t%x] ", mark, (unsigned)tid);
        snprintf(tidnum, sizeof tidnum, "%d", tid);
        char *hargv[] = { (char *)"gimpi-tagger", catchfd >= 0 ? (char *)"--catch" : tag,
                          catchfd >= 0 ? tidnum : NULL, NULL };
        pl.envp[pl.nshared] = tidvar;
        pl.envp[pl.nshared + 1] = tokvar;
        pl.envp[pl.nshared + 2] = catchfd >= 0 ? catchvar : NULL;
        pl.envp[pl.nshared + 3] = NULL;
        int st[2];
        if (pipe2(st, O_CLOEXEC) < 0) {
            tids[i] = GIMPI_EOUTOFRES;
            continue;
        }
        fflush(stdout);
        fflush(stderr);
        pid_t middle = s_start(pl.path, pl.argv, pl.envp, devnull, st[1],
                               flags & GIMPI_SPAWN_TAG ? tag : NULL, catchfd, tid,
                               bound ? &home : NULL, have_helper ? helper : NULL, hargv);
        close(st[1]);
        int32_t pids[2] = { -1, 0 }, pid = -1;
        int e = 0;
        if (middle > 0) {
            if (s_read_all(st[0], pids, sizeof pids) == sizeof pids) {
                pid = pids[0];
                if (s_read_all(st[0], &e, sizeof e) == sizeof e)
                    pid = -1;           /* the child's execve failed */
            }
            while (waitpid(middle, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        close(st[0]);
        if (middle < 0 || pid <= 0) {
            tids[i] = middle < 0 || e == 0 || e == EAGAIN || e == ENOMEM ? GIMPI_EOUTOFRES
                                                                          : GIMPI_ENOFILE;
            continue;
        }
        int alive = s_alive_fd(pid);
        int mine = alive >= 0 ? fcntl(alive, F_DUPFD_CLOEXEC, 3) : -1;
        if (mine >= 0 && gimpi_kids_add(gimpi_task_kids(self), tid, mine, token) == 0)
            gimpi_kids_watch(gimpi_task_kids(self),   /* its death before it registers */
                             gimpi_groups_endpoint(gimpi_groups(self)));   /* is told */
        if (pids[1] > 0 && gimpi_kids_adopter(gimpi_task_kids(self)))
            gimpi_kids_add_helper(gimpi_task_kids(self), s_alive_fd(pids[1]));
        gimpi_msg_expect(gimpi_msg(self), tid, alive);
        tids[i] = tid;
        started++;
    }
    /* caught here: the BEGIN lines are written, the children counted, before we return */
    if (started > 0)
        gimpi_catch_sync(gimpi_task_catch(self), catchfd, CATCH_SYNC_MS);
    if (devnull >= 0)
        close(devnull);
    s_plan_free(&pl);
    gimpi_key_wipe(tokvar, sizeof tokvar);
    gimpi_key_wipe(token, sizeof token);
    return started;
}

/*  Reports the children spawned here that died before registering (gimpi_kids.c). */
int gimpi_spawn_reap(gimpi_t *self)
{
    assert(self);
    return gimpi_kids_reap(gimpi_task_kids(self), gimpi_groups(self));
}

/*  1 when where names this host: "", ".", "localhost", its name in the virtual machine
 *  or the system's ("host" matches "host.domain" both ways). */
static int s_this_host(gimpi_t *self, const char *where)
{
    if (!where || !*where || !strcmp(where, ".") || !strcmp(where, "localhost"))
        return 1;
    const char *names[2] = { gimpi_hostname(self), NULL };
    char sys[256] = "";
    if (gethostname(sys, sizeof sys - 1) == 0)
        names[1] = sys;
    for (int k = 0; k < 2; k++) {
        const char *me = names[k];
        if (!me || !*me)
            continue;
        size_t n = strlen(where), m = strlen(me);
        if (!strncmp(me, where, n) ? me[n] == 0 || me[n] == '.'
                                   : !strncmp(me, where, m) && where[m] == '.')
            return 1;
    }
    return 0;
}

/*  1 when environment entry e ("NAME=value") is PVM_EXPORT, PVMTMASK, GIMPI_PVMTRACER
 *  (the children's trace mask and tracer), GIMPI_TRACE (the recording folder),
 *  GIMPI_PVM_CONTEXT (the PVM message context the children start in, pvm_spawn's) or a
 *  variable that list (PVM_EXPORT's value) names. */
static int s_exported(const char *e, const char *list)
{
    const char *eq = strchr(e, '=');
    if (!eq)
        return 0;
    size_t len = (size_t)(eq - e);
    if ((len == 10 && !strncmp(e, "PVM_EXPORT", 10))
        || (len == 8 && !strncmp(e, "PVMTMASK", 8))
        || (len == 15 && !strncmp(e, "GIMPI_PVMTRACER", 15))
        || (len == 11 && !strncmp(e, "GIMPI_TRACE", 11))
        || (len == 17 && !strncmp(e, "GIMPI_PVM_CONTEXT", 17)))
        return 1;
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ':');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        if (l == len && !strncmp(p, e, len))
            return 1;
        p = c ? c + 1 : NULL;
    }
    return 0;
}

/*  What a child on another host gets of our environment, as PVM passes it: PVM_EXPORT,
 *  the variables it names (their values now; never one of the hand-over variables) and
 *  PVMTMASK (the children's trace mask), after the k hand-over entries of head.  A
 *  malloc'd NULL-terminated array of pointers into head and environ, or NULL. */
static char **s_remote_env(char *const head[], int k)
{
    const char *list = gimpi_env("PVM_EXPORT");
    int n = 0;
    while (environ[n])
        n++;
    char **env = calloc((size_t)(n + k) + 1, sizeof *env);
    if (!env)
        return NULL;
    memcpy(env, head, (size_t)k * sizeof *env);
    for (int i = 0; i < n; i++)
        if (s_exported(environ[i], list) && !s_ours(environ[i]))     /* not a hand-over */
            env[k++] = environ[i];
    return env;
}

/*  Asks the virtual machine's manager to start n tasks: tids reserved here, the
 *  hand-over variables of s_plan and the exported ones (s_remote_env) sent along (never
 *  on a command line), one answer per slot.  How many started, or an error for all. */
static int s_spawn_remote(gimpi_t *self, const char *file, char *const argv[], int flags,
                          const char *where, int n, int *tids)
{
    char token[GIMPI_GROUPS_TOKEN_LEN + 1];
    int base = gimpi_groups_reserve_token(gimpi_groups(self), "", n, token);
    if (base < 0)
        return GIMPI_ESYSERR;
    plan_t pl = { .argv = NULL };
    int rc = s_plan(self, &pl, argv, base, n);
    char tokvar[sizeof GIMPI_ENV_TID_TOKEN + GIMPI_GROUPS_TOKEN_LEN + 2];
    snprintf(tokvar, sizeof tokvar, "%s=%s", GIMPI_ENV_TID_TOKEN, token);
    gimpi_key_wipe(token, sizeof token);
    char *env[9] = { NULL };
    int k = 0;
    for (int i = pl.first_ours; rc == 0 && i < pl.nshared && k < 6; i++)
        env[k++] = pl.envp[i];
    env[k++] = tokvar;
    char dirvar[PATH_MAX + 32] = "GIMPI_SPAWN_DIR=";  /* where its manager looks, too */
    s_self_dir(dirvar + 16, sizeof dirvar - 16);
    env[k++] = dirvar;
    char **xenv = s_remote_env(env, k);
    /* a program given with a slash is made absolute against our directory */
    char path[PATH_MAX];
    if (strchr(file, '/') && file[0] != '/' && getcwd(path, sizeof path)
        && strlen(path) + strlen(file) + 2 < sizeof path) {
        strcat(path, "/");
        strcat(path, file);
        file = path;
    }
    int vmflags = (flags & GIMPI_SPAWN_TAG ? VM_SPAWN_TAG : 0)
                  | (flags & GIMPI_SPAWN_HOST ? VM_SPAWN_HOST : 0)
                  | (flags & GIMPI_SPAWN_ARCH ? VM_SPAWN_ARCH : 0)
                  | (flags & GIMPI_SPAWN_NOTHOST ? VM_SPAWN_NOT : 0)
                  | (gimpi_catch_fd(gimpi_task_catch(self)) >= 0 ? VM_SPAWN_CATCH : 0);
    int32_t *res = calloc((size_t)n, sizeof *res);
    size_t len = 0;
    uint8_t *f = rc == 0 && res && xenv
                 ? vmw_encode(&len, VM_SPAWN, file, where ? where : "", pl.argv + 1, xenv,
                              vmflags, n, base + 1)
                 : NULL;
    free(xenv);
    rc = rc < 0 ? rc : !res ? GIMPI_ENOMEM : gimpi_vm_request(self, f, res, n);
    if (f == NULL && rc == 0)
        rc = GIMPI_ENOMEM;
    gimpi_key_wipe(tokvar, sizeof tokvar);
    s_plan_free(&pl);
    int started = 0;
    for (int i = 0; rc >= 0 && i < n; i++) {
        tids[i] = res[i];
        if (res[i] > 0) {               /* it calls us, as a child started here does */
            gimpi_msg_expect(gimpi_msg(self), res[i], -1);
            started++;
        }
    }
    free(res);
    return rc < 0 ? (rc == GIMPI_ENOHOST ? GIMPI_ESYSERR : rc) : started;
}

/*  Starts n tasks where the flags say. */
int gimpi_spawn_on(gimpi_t *self, const char *file, char *const argv[], int flags,
                   const char *where, int n, int *tids)
{
    assert(self);
    if (!file || !*file || !tids || n < 1 || n > SPAWN_MAX)
        return GIMPI_EBADPARAM;
    int placed = flags & (GIMPI_SPAWN_HOST | GIMPI_SPAWN_ARCH | GIMPI_SPAWN_NOTHOST);
    if (placed & (placed - 1))
        return GIMPI_EBADPARAM;         /* at most one way to place */
    bool here = (flags & GIMPI_SPAWN_HOST) && s_this_host(self, where);
    bool not_here = (flags & GIMPI_SPAWN_NOTHOST) && s_this_host(self, where);
    if (!gimpi_vm_present(self)) {
        /* this host alone: a name of another host has no place to go */
        if (((flags & GIMPI_SPAWN_HOST) && !here) || not_here) {
            for (int i = 0; i < n; i++)
                tids[i] = GIMPI_ENOHOST;
            return 0;
        }
        return gimpi_spawn(self, file, argv, flags & (GIMPI_SPAWN_TAG | GIMPI_SPAWN_QUIET),
                           n, tids);
    }
    if (here)
        return gimpi_spawn(self, file, argv, flags & (GIMPI_SPAWN_TAG | GIMPI_SPAWN_QUIET),
                           n, tids);
    if (placed && (!where || !*where))
        return GIMPI_EBADPARAM;
    return s_spawn_remote(self, file, argv, flags, where, n, tids);
}
