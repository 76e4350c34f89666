/*  gimpi_console.c — `gimpi [-e ENDPOINT] [COMMAND [ARG...]]`: the console, PVM's `pvm`
 *  for gimpi.  It shows and steers what one groupd knows: its hosts (conf, mstat, add,
 *  delete), its tasks (ps, pstat, top, kill, sig, spawn, config) and groupd itself (halt).  With a
 *  command on its command line it runs that one command and exits (`gimpi halt`,
 *  `gimpi ps -a`); otherwise it reads commands from stdin, with a prompt, line editing and
 *  history (libedit or GNU readline, when configure found one) when stdin is a terminal,
 *  plainly from a pipe or file (`echo conf | gimpi`).  Output follows the PVM 3.4 console's
 *  formats; doc/gimpi.1 lists where it differs.
 *
 *  The console is a gimpi task itself, enrolled from the shell with gimpi_init on the
 *  groupd of $GIMPI_GROUPD or the user's default, when a command first needs it: it is
 *  listed by `ps -x` only, as PVM's console is.  It starts no groupd, except when used
 *  interactively or for spawn (as PVM's console starts a pvmd): a one-shot or piped
 *  command with no groupd to ask fails with a message.  halt ends every task groupd lists
 *  (SIGTERM, SIGKILL after HALT_GRACE_MS; gimpi_kill: by process here, through the
 *  virtual machine's manager elsewhere), waits until groupd lists none, then sends groupd
 *  HALT.  In one-shot or piped use the exit status is 1 when a command failed.
 */
#include "config.h"
#include "groups/gd_proto.h"
#include "groups/gd_sock.h"
#include "gimpi.h"
#include "base/gimpi_tunables.h"
#include "base/gimpi_clock.h"
#include "programs/run_jobfile.h"
#include "programs/console_out.h"
#include "programs/live_view.h"
#include "task/gimpi_catch.h"
#include "task/gimpi_vm.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#if defined(HAVE_LIBEDIT)
#include <editline/readline.h>
#define CONSOLE_EDITING 1
#elif defined(HAVE_READLINE)
#include <readline/readline.h>
#include <readline/history.h>
#define CONSOLE_EDITING 1
#endif

enum {
    PROBE_MS = 5000,            /* groupd must answer a PING within this */
    HALT_GRACE_MS = 3000,       /* halt: SIGTERM, then SIGKILL after this */
    HALT_WAIT_MS = 10000,       /* halt: tasks must be gone from groupd within this */
    POLL_MS = 20,               /* how often groupd is asked again meanwhile */
    SPAWN_WAIT_MS = 10000,      /* spawn: the children must have registered within this */
    MAX_ARGS = 128,             /* words of one command line */
    LINE_MAX_BYTES = 4096,      /* longest command line read without line editing */
};

/*  PVM 3.4's data signature of a little-endian LP64 Linux machine, as its conf prints. */
#define CONSOLE_DSIG 0x00408c41

/*  The console's state. */
typedef struct {
    gimpi_t *task;              /* enrolled on first need, NULL before */
    char ep[512];               /* the groupd endpoint, for messages */
    bool may_start;             /* enrolling may start a groupd (interactive use) */
    bool given;                 /* the endpoint came from -e or GIMPI_GROUPD */
    console_out_t *out;         /* spawn -> caught the output of children: their lines */
    bool quit;                  /* quit, or halt done: read no more commands */
    int failed;                 /* commands that failed */
} console_t;

typedef int (*cmd_fn)(console_t *self, int argc, char **argv);

/*  One command: name, words allowed (with the name; max 0: any), handler, help. */
typedef struct {
    const char *name;
    int min, max;
    cmd_fn fn;
    const char *brief;
    const char *syntax;
} cmd_t;

/* ------------------------------------------------------------------ helpers */

/*  Sleeps ms milliseconds (the polling of halt's wait). */
static void s_pause_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/*  A tid as PVM's console reads it: hexadecimal, "t" in front optional.  0 when bad. */
static int s_tid(const char *s)
{
    if (*s == 't' || *s == 'T')
        s++;
    if (!isxdigit((unsigned char)*s))
        return 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 16);
    return *end || errno || v == 0 || v > 0x7fffffff ? 0 : (int)v;
}

/*  For an ipc endpoint: 1 when something accepts connections on its path, else 0 (at
 *  once, where a ZeroMQ socket would wait for the timeout).  1 for other endpoints. */
static int s_ipc_alive(const char *ep)
{
    if (strncmp(ep, "ipc://", 6) != 0)
        return 1;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(ep + 6) >= sizeof sa.sun_path)
        return 1;               /* let ZeroMQ say what is wrong with it */
    strcpy(sa.sun_path, ep + 6);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1;
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return rc;
}

/*  Pings groupd at the console's endpoint with a tool socket (which registers nothing and
 *  starts nothing).  0 when it answers; else -1 with a message. */
static int s_probe(console_t *self)
{
    if (!s_ipc_alive(self->ep)) {
        if (self->given)
            fprintf(stderr, "gimpi: no groupd at %s: no gimpi task runs on it (is it the "
                    "job's endpoint?)\n", self->ep);
        else
            fprintf(stderr, "gimpi: no groupd at %s: no gimpi task runs on it, and no "
                    "gimpirun job runs on this machine (-e ENDPOINT names another groupd)\n",
                    self->ep);
        return -1;
    }
    void *zctx = zmq_ctx_new();
    if (!zctx) {
        fprintf(stderr, "gimpi: zmq_ctx_new: %s\n", zmq_strerror(errno));
        return -1;
    }
    char err[GD_SOCK_ERRLEN], desc[GIMPI_KEY_PATHLEN + 64];
    void *monitor = NULL;
    void *s = gd_sock_tool_new(zctx, self->ep, &monitor, desc, sizeof desc, err, sizeof err);
    int rc = -1;
    if (!s) {
        fprintf(stderr, "gimpi: no groupd at %s: %s\n", self->ep, err);
        goto out;
    }
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_PING, 1);
    gd_frame_t req = { hdr, sizeof hdr };
    int ready = gd_send_frames(s, NULL, 0, &req, 1, 0) < 0
              ? 0 : gd_sock_tool_wait(s, monitor, PROBE_MS, *desc != 0, err, sizeof err);
    if (ready > 0)
        rc = 0;
    else if (ready < 0)
        fprintf(stderr, "gimpi: groupd at %s refused us: %s\n", self->ep, err);
    else
        fprintf(stderr, "gimpi: groupd at %s does not answer within %d s\n", self->ep,
                PROBE_MS / 1000);
out:
    gd_sock_destroy(&s, &monitor);
    zmq_ctx_term(zctx);
    return rc;
}

/*  The console's task, enrolled on first use (may_start: a groupd may be started when
 *  none serves the endpoint).  NULL with a message when there is no groupd. */
static gimpi_t *s_task(console_t *self, bool may_start)
{
    if (self->task)
        return self->task;
    if (!may_start && !self->may_start && s_probe(self) < 0)
        return NULL;
    char err[256] = "";
    self->task = gimpi_init(err, sizeof err);
    if (!self->task) {
        fprintf(stderr, "gimpi: cannot enrol as a task: %s\n", err);
        return NULL;
    }
    int tid = gimpi_group_mytid(gimpi_groups(self->task));
    if (tid < 0) {
        fprintf(stderr, "gimpi: groupd at %s: %s\n", self->ep, gimpi_strerror(tid));
        gimpi_abort(&self->task);
        return NULL;
    }
    return self->task;
}

/*  This console's tid, 0 before it enrolled. */
static int s_mytid(console_t *self)
{
    return self->task ? gimpi_group_mytid(gimpi_groups(self->task)) : 0;
}

/*  1 when a task that registered host name `host` runs on this host (gimpi_kill's rule). */
static bool s_local(console_t *self, const char *host)
{
    return !*host || !strcmp(host, "localhost") || !strcmp(host, gimpi_hostname(self->task));
}

/*  The tasks groupd lists: their count (*t malloc'ed), or -1 with a message. */
static int s_tasks(console_t *self, gimpi_vm_task_t **t)
{
    int n = 0;
    int rc = gimpi_groups_tasks(gimpi_groups(self->task), "", t, &n);
    if (rc < 0) {
        fprintf(stderr, "gimpi: groupd's tasks: %s\n", gimpi_strerror(rc));
        return -1;
    }
    return n;
}

/*  PVM's task flag text, "6/c,f": the bits in hex, then the letters from the highest. */
static const char *s_flags(int flags, char *buf, size_t size)
{
    static const char *const letters[] = { NULL, "f", "c", "a", "o", "s", NULL, NULL,
                                           "R", "H", "T" };
    int len = snprintf(buf, size, "%x/", (unsigned)flags);
    for (int i = (int)(sizeof letters / sizeof *letters) - 1; i >= 0; i--)
        if ((flags & 1 << i) && letters[i] && len + 3 < (int)size)
            len += snprintf(buf + len, size - (size_t)len, "%s,", letters[i]);
    buf[len - 1] = buf[len - 1] == ',' ? 0 : buf[len - 1];
    return buf;
}

/* ------------------------------------------------------------------ commands */

static const cmd_t *s_find(const char *name);
static void s_help_all(void);

/*  The console's task and the hosts (*h malloc'ed): their count, or -1 with a message. */
static int s_hosts(console_t *self, const char *cmd, gimpi_host_t **h)
{
    *h = NULL;
    gimpi_t *task = s_task(self, false);
    if (!task)
        return -1;
    int n = gimpi_hosts(task, h);
    if (n < 0)
        fprintf(stderr, "%s: %s\n", cmd, gimpi_strerror(n));
    return n < 0 ? -1 : n;
}

/*  conf: the hosts, as PVM's conf prints them. */
static int s_conf(console_t *self, int argc, char **argv)
{
    (void)argc; (void)argv;
    gimpi_host_t *h;
    int n = s_hosts(self, "conf", &h);
    if (n < 0)
        return -1;
    int narch = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = !strcmp(h[k].arch, h[i].arch);
        narch += !seen;
    }
    printf("%d host%s, %d data format%s\n", n, n == 1 ? "" : "s", narch, narch == 1 ? "" : "s");
    printf("                    HOST     DTID     ARCH   SPEED       DSIG\n");
    for (int i = 0; i < n; i++)
        printf("%24s %8x %8s %7d 0x%08x\n", h[i].name, (unsigned)h[i].dtid, h[i].arch,
               h[i].speed, CONSOLE_DSIG);
    free(h);
    return 0;
}

/*  An option a command does not know: a message, -1. */
static int s_badopt(const char *cmd, const char *opt)
{
    fprintf(stderr, "%s: %s: unknown option (help %s)\n", cmd, opt, cmd);
    return -1;
}

/*  top: the live view (live_view.h): every task of every host, what each blocked one is
 *  in and for how long, and whom it waits for.  Asks groupd on a tool connection: the
 *  console does not enrol for it. */
static int s_top(console_t *self, int argc, char **argv)
{
    bool json = argc == 2 && !strcmp(argv[1], "-j");
    if (argc == 2 && !json)
        return s_badopt("top", argv[1]);
    if (!self->task && s_probe(self) < 0)
        return -1;
    char err[512];
    live_view_t *lv = live_view_new(self->ep, PROBE_MS, err, sizeof err);
    if (!lv) {
        fprintf(stderr, "gimpi: groupd at %s: %s\n", self->ep, err);
        return -1;
    }
    live_view_print(lv, stdout, json);
    live_view_destroy(&lv);
    return 0;
}

/*  ps [-a] [-l] [-x] [-nHOST] [-hDTID]: groupd's tasks, this host's by default. */
static int s_ps(console_t *self, int argc, char **argv)
{
    bool all = false, lflag = false, xflag = false;
    char host[256] = "";
    int hdtid = 0;
    for (int a = 1; a < argc; a++) {
        const char *p = argv[a];
        if (*p++ != '-')
            return s_badopt("ps", argv[a]);
        for (; *p; p++) {
            if (*p == 'a')
                all = true;
            else if (*p == 'l')
                lflag = true;
            else if (*p == 'x')
                xflag = true;
            else if (*p == 'n' && p[1]) {
                snprintf(host, sizeof host, "%s", p + 1);
                break;
            } else if (*p == 'h' && p[1]) {
                char *end;
                hdtid = (int)strtol(p + 1, &end, 16);
                if (*end)
                    return s_badopt("ps", argv[a]);
                break;
            } else
                return s_badopt("ps", argv[a]);
        }
    }
    gimpi_host_t *h;
    int nh = s_hosts(self, "ps", &h);
    if (nh < 0)
        return -1;
    gimpi_t *task = self->task;
    if (hdtid) {
        for (int i = 0; i < nh && !*host; i++)
            if (h[i].dtid == hdtid)
                snprintf(host, sizeof host, "%s", h[i].name);
        if (!*host) {
            printf("unknown host %x\n", (unsigned)hdtid);
            free(h);
            return -1;
        }
    }
    gimpi_vm_task_t *t = NULL;
    int n = s_tasks(self, &t);
    if (n < 0) {
        free(h);
        return -1;
    }
    int me = s_mytid(self);
    if (lflag)
        printf("                    HOST      TID     PTID    PID   FLAG 0x COMMAND\n");
    else
        printf("                    HOST      TID   FLAG 0x COMMAND\n");
    for (int i = 0; i < n; i++) {
        if (t[i].tid == me && !xflag)
            continue;
        if (*host ? strcmp(t[i].host, host) != 0 : !all && !s_local(self, t[i].host))
            continue;
        /* c: connected to groupd (every listed task); f: started by a spawn */
        int flags = 4 | (t[i].ptid ? 2 : 0) | t[i].flags;
        char fl[64];
        printf("%24s", *t[i].host ? t[i].host : gimpi_hostname(task));
        if (t[i].tid == me)
            printf("   (cons)");
        else
            printf(" %8x", (unsigned)t[i].tid);
        if (lflag) {
            if (t[i].ptid && t[i].ptid == me)
                printf("   (cons)");
            else if (t[i].ptid)
                printf(" %8x", (unsigned)t[i].ptid);
            else
                printf("        -");
            printf(" %6d", t[i].pid);
        }
        printf(" %9s %-12s\n", s_flags(flags, fl, sizeof fl), *t[i].name ? t[i].name : "-");
    }
    free(t);
    free(h);
    return 0;
}

/*  Signals every tid of argv[first..] (kill: SIGTERM; sig: any); with children, the
 *  tasks whose parent each tid is instead. */
static int s_signal(console_t *self, const char *cmd, int sig, int argc, char **argv,
                    int first, bool children)
{
    gimpi_t *task = s_task(self, false);
    if (!task)
        return -1;
    int rc = 0, me = s_mytid(self);
    for (int a = first; a < argc; a++) {
        int tid = s_tid(argv[a]);
        if (!tid) {
            fprintf(stderr, "%s: %s: not a task id\n", cmd, argv[a]);
            rc = -1;
            continue;
        }
        if (tid == me) {
            printf("t%x: that's me.\n", (unsigned)tid);
            continue;
        }
        if (children) {
            gimpi_vm_task_t *t = NULL;
            int n = s_tasks(self, &t);
            if (n < 0)
                return -1;
            for (int i = 0; i < n; i++) {
                int e = t[i].ptid == tid ? gimpi_kill(task, t[i].tid, sig) : 0;
                if (e < 0) {
                    fprintf(stderr, "%s: t%x: %s\n", cmd, (unsigned)t[i].tid,
                            gimpi_strerror(e));
                    rc = -1;
                }
            }
            free(t);
            continue;
        }
        int e = gimpi_kill(task, tid, sig);
        if (e < 0) {
            fprintf(stderr, "%s: t%x: %s\n", cmd, (unsigned)tid, gimpi_strerror(e));
            rc = -1;
        }
    }
    return rc;
}

/*  kill [-c] TID...: SIGTERM to each (with -c: to each one's children). */
static int s_kill(console_t *self, int argc, char **argv)
{
    bool children = argc > 1 && !strcmp(argv[1], "-c");
    if (children && argc < 3) {
        fprintf(stderr, "kill: wrong #args\n");
        return -1;
    }
    return s_signal(self, "kill", SIGTERM, argc, argv, children ? 2 : 1, children);
}

/*  sig SIGNUM TID...: a signal to each task. */
static int s_sig(console_t *self, int argc, char **argv)
{
    char *end;
    long sig = strtol(argv[1], &end, 10);
    if (*end || sig < 1 || sig > 64) {
        fprintf(stderr, "sig: %s: not a signal number\n", argv[1]);
        return -1;
    }
    return s_signal(self, "sig", (int)sig, argc, argv, 2, false);
}

/*  The tasks groupd lists other than the console: their count, or -1 (quietly: during a
 *  halt, a groupd that its job's launcher ran goes with the job's last task). */
static int s_others(console_t *self, int me)
{
    gimpi_vm_task_t *t = NULL;
    int n = 0;
    if (gimpi_groups_tasks(gimpi_groups(self->task), "", &t, &n) < 0)
        n = -1;
    int others = 0;
    for (int i = 0; i < n; i++)
        others += t[i].tid != me;
    free(t);
    return n < 0 ? -1 : others;
}

/*  Sends sig to every task groupd lists but the console; those it could not reach are
 *  printed.  The number it could not reach. */
static int s_signal_all(console_t *self, int me, int sig)
{
    gimpi_vm_task_t *t = NULL;
    int n = s_tasks(self, &t);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].tid == me)
            continue;
        int e = gimpi_kill(self->task, t[i].tid, sig);
        if (e < 0 && e != GIMPI_ENOTASK && sig == SIGTERM) {
            fprintf(stderr, "halt: t%x (%s on %s): %s\n", (unsigned)t[i].tid,
                    *t[i].name ? t[i].name : "-", t[i].host, gimpi_strerror(e));
            bad++;
        }
    }
    free(t);
    return n < 0 ? 1 : bad;
}

/*  halt: ends every task groupd lists, then groupd. */
static int s_halt(console_t *self, int argc, char **argv)
{
    (void)argc; (void)argv;
    if (!s_task(self, false))
        return -1;
    int me = s_mytid(self);
    int bad = s_signal_all(self, me, SIGTERM);
    int64_t start = gimpi_now_ms();
    bool killed = false;
    int left;
    while ((left = s_others(self, me)) > 0 && gimpi_now_ms() - start < HALT_WAIT_MS) {
        if (!killed && gimpi_now_ms() - start >= HALT_GRACE_MS) {
            s_signal_all(self, me, SIGKILL);
            killed = true;
        }
        s_pause_ms(POLL_MS);
    }
    if (left > 0)
        fprintf(stderr, "halt: %d task%s still listed by groupd after %d s\n", left,
                left == 1 ? "" : "s", HALT_WAIT_MS / 1000);
    /* left < 0: groupd went away once the tasks ended (gimpirun, which ran it for the
     * job, ended with them): the halt is done */
    int rc = left < 0 ? 0 : gimpi_groups_halt(gimpi_groups(self->task));
    if (rc < 0)
        fprintf(stderr, "halt: groupd at %s: %s\n", self->ep, gimpi_strerror(rc));
    gimpi_abort(&self->task);      /* groupd is gone: nothing to leave */
    self->quit = true;
    return rc < 0 || left > 0 || bad ? -1 : 0;
}

/*  Prints "N successful" and the per-host table of add and delete. */
static void s_host_results(char **hosts, int n, const int *infos, int done, bool add)
{
    printf("%d successful\n", done);
    printf(add ? "                    HOST     DTID\n" : "                    HOST  STATUS\n");
    for (int i = 0; i < n; i++) {
        if (add && infos[i] > 0)
            printf("%24s %8x\n", hosts[i], (unsigned)infos[i]);
        else if (add)
            printf("%24s %s\n", hosts[i], gimpi_strerror(infos[i]));
        else
            printf("%24s  %s\n", hosts[i], infos[i] < 0 ? gimpi_strerror(infos[i]) : "ok");
    }
}

/*  add HOST... and delete HOST...: through the virtual machine's manager. */
static int s_hostchange(console_t *self, int argc, char **argv)
{
    bool add = !strcmp(argv[0], "add");
    gimpi_t *task = s_task(self, false);
    if (!task)
        return -1;
    int n = argc - 1;
    int *infos = calloc((size_t)n, sizeof *infos);
    if (!infos)
        return -1;
    int rc = add ? gimpi_addhosts(task, argv + 1, n, infos)
                 : gimpi_delhosts(task, argv + 1, n, infos);
    if (rc == GIMPI_ENOHOST)
        fprintf(stderr, "%s: no virtual machine serves this groupd: hosts are added and "
                "deleted in a job of gimpirun -H or -hostfile (gimpirun(1))\n", argv[0]);
    else if (rc < 0)
        fprintf(stderr, "%s: %s\n", argv[0], gimpi_strerror(rc));
    else
        s_host_results(argv + 1, n, infos, rc, add);
    int failed = rc < 0 || rc < n;
    free(infos);
    return failed ? -1 : 0;
}

/*  Waits (at most SPAWN_WAIT_MS) until groupd knows every started task of tids[n]: then
 *  ps lists them, and they have called the console before it may exit.  A caught task
 *  whose output ended (it exited) is not waited for. */
static void s_wait_registered(console_t *self, const int *tids, int n)
{
    int64_t start = gimpi_now_ms();
    for (int i = 0; i < n; i++) {
        gimpi_task_info_t info;
        while (tids[i] > 0 && gimpi_now_ms() - start < SPAWN_WAIT_MS
               && !console_out_ended(self->out, tids[i])
               && gimpi_group_lookup(gimpi_groups(self->task), tids[i], &info) == GIMPI_ENOTFOUND)
            s_pause_ms(POLL_MS);
    }
}

/*  spawn ->: the children's output comes to the console, "[t<tid>] line" (gimpi_catchout),
 *  also from the hosts where the job's gimpirun starts them, when it runs on this machine
 *  (it is handed the collector).  0, or -1 with a message. */
static int s_catch(console_t *self)
{
    if (self->out)
        return 0;
    self->out = console_out_new(stdout);
    int rc = self->out ? gimpi_catchout(self->task, console_out_file(self->out), 0)
                       : GIMPI_ENOMEM;
    if (rc < 0) {
        fprintf(stderr, "spawn: ->: %s\n", gimpi_strerror(rc));
        console_out_destroy(&self->out);
        return -1;
    }
    /* none runs here: the lines of tasks on other hosts stay with their gimpirun */
    run_jobfile_offer_catch(self->ep, s_mytid(self), gimpi_catch_fd(gimpi_task_catch(self->task)));
    return 0;
}

/*  One failed slot of a spawn, as PVM's console prints it ("No such file"), with the
 *  program and where it was looked for. */
static void s_slot_error(console_t *self, int code, const char *file, const char *where,
                         int flags)
{
    if (code == GIMPI_ENOHOST && (flags & GIMPI_SPAWN_ARCH))
        printf("%s: no host of architecture %s\n", gimpi_strerror(code), where);
    else if (code == GIMPI_ENOHOST)
        printf("%s: %s\n", gimpi_strerror(code), where ? where : "-");
    else if (where && (flags & GIMPI_SPAWN_ARCH))
        printf("%s: %s on a host of architecture %s\n", gimpi_strerror(code), file, where);
    else if (where)
        printf("%s: %s on host %s\n", gimpi_strerror(code), file, where);
    else if (gimpi_vm_present(self->task))
        printf("%s: %s on a host of the virtual machine\n", gimpi_strerror(code), file);
    else
        printf("%s: %s on host %s\n", gimpi_strerror(code), file,
               gimpi_hostname(self->task));
}

/*  spawn [-COUNT] [-HOST|-ARCH] [->] FILE [ARG...]: starts tasks, prints their tids. */
static int s_spawn(console_t *self, int argc, char **argv)
{
    int count = 1, flags = 0, a = 1;
    const char *where = NULL;
    for (; a < argc && argv[a][0] == '-'; a++) {
        const char *o = argv[a] + 1;
        if (*o && o[strspn(o, "0123456789")] == 0) {     /* -198.51.100.1 is a host */
            char *end;
            long v = strtol(o, &end, 10);
            if (*end || v < 1 || v > 4096) {
                fprintf(stderr, "spawn: %s: bad count\n", argv[a]);
                return -1;
            }
            count = (int)v;
        } else if (!strcmp(o, ">"))
            flags |= GIMPI_SPAWN_TAG;
        else if (*o && *o != '>' && *o != '?' && *o != '@' && *o != ':')
            where = o;
        else {
            fprintf(stderr, "spawn: %s: option not supported (see gimpi(1))\n", argv[a]);
            return -1;
        }
    }
    if (a >= argc) {
        fprintf(stderr, "spawn: wrong #args\n");
        return -1;
    }
    gimpi_t *task = s_task(self, true);
    if (!task)
        return -1;
    if (where) {
        /* a name that is some host's architecture (and no host's name) places by arch */
        gimpi_host_t *h = NULL;
        int nh = gimpi_hosts(task, &h);
        bool arch = false, name = false;
        for (int i = 0; i < nh; i++) {
            arch |= !strcmp(h[i].arch, where);
            name |= !strcmp(h[i].name, where);
        }
        free(h);
        flags |= arch && !name ? GIMPI_SPAWN_ARCH : GIMPI_SPAWN_HOST;
    }
    if ((flags & GIMPI_SPAWN_TAG) && s_catch(self) < 0)
        return -1;
    int *tids = calloc((size_t)count, sizeof *tids);
    if (!tids)
        return -1;
    int job = flags & GIMPI_SPAWN_TAG ? console_out_job_new(self->out) : 0;
    if (job)
        printf("[%d]\n", job);
    fflush(stdout);
    /* the slots' lines below say what failed, as PVM's console does: not the library */
    int rc = gimpi_spawn_on(task, argv[a], a + 1 < argc ? argv + a + 1 : NULL,
                            flags | GIMPI_SPAWN_QUIET, where, count, tids);
    for (int i = 0; rc < 0 && i < count; i++)
        tids[i] = rc;                   /* one line per slot, as PVM's */
    printf("%d successful\n", rc < 0 ? 0 : rc);
    for (int i = 0; i < count; i++) {
        if (tids[i] > 0)
            printf("t%x\n", (unsigned)tids[i]);
        else
            s_slot_error(self, tids[i], argv[a], where, flags);
    }
    fflush(stdout);
    if (job)                            /* its lines held so far, then the rest */
        console_out_job_started(self->out, job, tids, count);
    s_wait_registered(self, tids, count);
    free(tids);
    return rc == count ? 0 : -1;
}

/*  mstat HOST...: "ok" or "No such host" per host. */
static int s_mstat(console_t *self, int argc, char **argv)
{
    gimpi_host_t *h;
    int nh = s_hosts(self, "mstat", &h);
    if (nh < 0)
        return -1;
    for (int a = 1; a < argc; a++) {
        bool found = false;
        for (int i = 0; i < nh && !found; i++)
            found = !strcmp(h[i].name, argv[a]);
        printf("%24s  %s\n", argv[a], found ? "ok" : gimpi_strerror(GIMPI_ENOHOST));
    }
    free(h);
    return 0;
}

/*  pstat TID...: "run" or "No such task" per task. */
static int s_pstat(console_t *self, int argc, char **argv)
{
    gimpi_t *task = s_task(self, false);
    if (!task)
        return -1;
    int rc = 0;
    for (int a = 1; a < argc; a++) {
        int tid = s_tid(argv[a]);
        if (!tid) {
            fprintf(stderr, "pstat: %s: not a task id\n", argv[a]);
            rc = -1;
            continue;
        }
        gimpi_task_info_t info;
        int e = gimpi_group_lookup(gimpi_groups(task), tid, &info);
        if (e < 0 && e != GIMPI_ENOTASK && e != GIMPI_ENOTFOUND) {
            fprintf(stderr, "pstat: t%x: %s\n", (unsigned)tid, gimpi_strerror(e));
            rc = -1;
            continue;
        }
        printf("t%8x  %s\n", (unsigned)tid, e < 0 ? gimpi_strerror(GIMPI_ENOTASK) : "run");
    }
    return rc;
}

/*  config [TID]: what the console, or a task of this machine, runs with: every
 *  environment variable of gimpi with its value and source, as gimpi-stat --config.  A
 *  task's is the environment it was started with (/proc/PID/environ). */
static int s_config(console_t *self, int argc, char **argv)
{
    extern char **environ;
    if (argc < 2) {
        gimpi_tunables_print_config(stdout, environ, false);
        return 0;
    }
    int tid = s_tid(argv[1]);
    if (!tid) {
        fprintf(stderr, "config: %s: not a task id\n", argv[1]);
        return -1;
    }
    gimpi_t *task = s_task(self, false);
    if (!task)
        return -1;
    gimpi_task_info_t info;
    int e = gimpi_group_lookup(gimpi_groups(task), tid, &info);
    if (e < 0) {
        fprintf(stderr, "config: t%x: %s\n", (unsigned)tid,
                gimpi_strerror(e == GIMPI_ENOTFOUND ? GIMPI_ENOTASK : e));
        return -1;
    }
    if (strcmp(info.host, gimpi_hostname(task)) != 0) {
        fprintf(stderr, "config: t%x runs on %s: there, gimpi-stat --config --pid %d\n",
                (unsigned)tid, info.host, info.ospid);
        return -1;
    }
    char **envp = gimpi_env_of_pid(info.ospid);
    if (!envp) {
        fprintf(stderr, "config: t%x (pid %d): %s\n", (unsigned)tid, info.ospid,
                strerror(errno));
        return -1;
    }
    gimpi_tunables_print_config(stdout, envp, false);
    free(envp);
    return 0;
}

/*  id: the console's tid. */
static int s_id(console_t *self, int argc, char **argv)
{
    (void)argc; (void)argv;
    if (!s_task(self, false))
        return -1;
    printf("t%x\n", (unsigned)s_mytid(self));
    return 0;
}

/*  version: the library's version. */
static int s_version(console_t *self, int argc, char **argv)
{
    (void)self; (void)argc; (void)argv;
    printf("%s\n", gimpi_version());
    return 0;
}

/*  echo ARG...: its arguments. */
static int s_echo(console_t *self, int argc, char **argv)
{
    (void)self;
    for (int a = 1; a < argc; a++)
        printf("%s%s", argv[a], a + 1 < argc ? " " : "");
    printf("\n");
    return 0;
}

/*  quit: leaves the console (the tasks and groupd go on). */
static int s_quit(console_t *self, int argc, char **argv)
{
    (void)argc; (void)argv;
    self->quit = true;
    return 0;
}

/*  help [COMMAND]. */
static int s_help(console_t *self, int argc, char **argv)
{
    (void)self;
    if (argc < 2) {
        s_help_all();
        return 0;
    }
    const cmd_t *c = s_find(argv[1]);
    if (!c) {
        fprintf(stderr, "help: %s: no such command\n", argv[1]);
        return -1;
    }
    printf("%-11s %s\nSyntax:  %s\n", c->name, c->brief, c->syntax);
    return 0;
}

static const cmd_t s_cmds[] = {
    { "add", 2, 0, s_hostchange, "Add hosts to virtual machine",
      "add hostname ...  (hostfile lines: 'name opt=value ...'; gimpirun -H jobs only)" },
    { "conf", 1, 1, s_conf, "List virtual machine configuration", "conf" },
    { "config", 1, 2, s_config, "Show the environment variables gimpi runs with",
      "config [ tid ]  (a task of this host: what it was started with)" },
    { "delete", 2, 0, s_hostchange, "Delete hosts from virtual machine",
      "delete hostname ...  (gimpirun -H jobs only)" },
    { "echo", 1, 0, s_echo, "Echo arguments", "echo [ arg ... ]" },
    { "halt", 1, 1, s_halt, "Stop every task and groupd", "halt" },
    { "help", 1, 2, s_help, "Print helpful information about a command", "help [ command ]" },
    { "id", 1, 1, s_id, "Print console task id", "id" },
    { "kill", 2, 0, s_kill, "Terminate tasks", "kill [ -c ] tid ...  (-c: kill children of tid)" },
    { "mstat", 2, 0, s_mstat, "Show status of hosts", "mstat name ..." },
    { "ps", 1, 0, s_ps, "List tasks",
      "ps [ -alx ] [ -nhost | -hdtid ]  (-a all hosts, -l parent and pid, -x with the console)" },
    { "pstat", 2, 0, s_pstat, "Show status of tasks", "pstat tid ..." },
    { "quit", 1, 1, s_quit, "Exit console", "quit" },
    { "sig", 3, 0, s_sig, "Send signal to task", "sig signum tid ..." },
    { "top", 1, 2, s_top, "Show what each task is blocked in, and for how long",
      "top [ -j ]  (-j: as JSON; gimpi-stat --watch refreshes it)" },
    { "spawn", 2, 0, s_spawn, "Spawn task",
      "spawn [ -count ] [ -host | -ARCH ] [ -> ] file [ arg ... ]  (->: tag output lines)" },
    { "version", 1, 1, s_version, "Show libgimpi version", "version" },
};

/*  The command of that whole name ("exit" is quit), or NULL. */
static const cmd_t *s_find(const char *name)
{
    for (size_t i = 0; i < sizeof s_cmds / sizeof *s_cmds; i++)
        if (!strcmp(s_cmds[i].name, name))
            return &s_cmds[i];
    if (!strcmp(name, "exit"))
        return s_find("quit");
    return NULL;
}

/*  help without a command: the list. */
static void s_help_all(void)
{
    printf("help        Print helpful information about a command\n"
           "Syntax:  help [ command ]\nCommands are:\n");
    for (size_t i = 0; i < sizeof s_cmds / sizeof *s_cmds; i++)
        printf("  %-11s %s\n", s_cmds[i].name, s_cmds[i].brief);
}

/*  Runs one command of argc words; 0, or -1 when it failed. */
static int s_run(console_t *self, int argc, char **argv)
{
    if (argc == 0)
        return 0;
    const cmd_t *c = s_find(argv[0]);
    if (!c) {
        fprintf(stderr, "%s: not found\n", argv[0]);
        return -1;
    }
    if (argc < c->min || (c->max && argc > c->max)) {
        fprintf(stderr, "%s: wrong #args\n", argv[0]);
        return -1;
    }
    int rc = c->fn(self, argc, argv);
    fflush(stdout);
    return rc;
}

/*  Splits a line into words (blanks separate; single or double quotes group) and runs it. */
static int s_line(console_t *self, char *line)
{
    char *argv[MAX_ARGS];
    int argc = 0;
    char *p = line, *out = line;
    while (*p) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            break;
        if (argc == MAX_ARGS) {
            fprintf(stderr, "gimpi: more than %d words\n", MAX_ARGS);
            return -1;
        }
        argv[argc++] = out;
        char q = 0;
        while (*p && (q || !isspace((unsigned char)*p))) {
            if (!q && (*p == '\'' || *p == '"'))
                q = *p++;
            else if (q && *p == q) {
                q = 0;
                p++;
            } else
                *out++ = *p++;
        }
        if (*p)
            p++;
        *out++ = 0;
    }
    return s_run(self, argc, argv);
}

/*  Reads the next line: with line editing on a terminal, else plainly.  NULL at the end;
 *  the caller frees it. */
static char *s_read(bool tty)
{
#ifdef CONSOLE_EDITING
    if (tty) {
        char *l = readline("gimpi> ");
        if (l && *l)
            add_history(l);
        return l;
    }
#endif
    if (tty) {
        fputs("gimpi> ", stdout);
        fflush(stdout);
    }
    char *buf = malloc(LINE_MAX_BYTES);
    if (!buf || !fgets(buf, LINE_MAX_BYTES, stdin)) {
        free(buf);
        return NULL;
    }
    return buf;
}

/*  Leaves groupd; with output caught (spawn ->) and wait (one-shot or piped use), first
 *  waits until the children's output has ended, at most GIMPI_CATCHOUT_WAIT seconds, as
 *  PVM's pvm_exit does (an interactive quit leaves at once, as PVM's console). */
static void s_leave(console_t *self, bool wait)
{
    if (!self->task) {                  /* halt: gone with groupd */
        console_out_destroy(&self->out);
        return;
    }
    if (wait && self->out && gimpi_catchout_wait(self->task, 0) > 0) {
        const char *v = gimpi_env("GIMPI_CATCHOUT_WAIT");
        long sec = v && *v ? strtol(v, NULL, 10) : 0;
        sec = sec > 0 && sec < 86400 ? sec : 30;
        int left = gimpi_catchout_wait(self->task, (int)sec * 1000);
        if (left)
            fprintf(stderr, "gimpi: the output of %d spawned task%s had not ended after %ld s "
                    "(GIMPI_CATCHOUT_WAIT); leaving\n", left, left == 1 ? "" : "s", sec);
    }
    fflush(stdout);
    gimpi_finalize(&self->task);
    console_out_destroy(&self->out);
}

/*  Prints the synopsis. */
static void s_usage(FILE *out)
{
    fprintf(out, "usage: gimpi [-e ENDPOINT | -j PID] [COMMAND [ARG...]]\n"
                 "       gimpi --help | --version\n"
                 "With no command, commands are read from stdin (help lists them).\n"
                 "Without -e or $GIMPI_GROUPD: the running gimpirun job's groupd (-j: the\n"
                 "job of that gimpirun pid), else the per-user default.\n");
}

/*  The groupd to talk to: -e's or $GIMPI_GROUPD, else the running gimpirun job's (-j
 *  PID: that job's), else the per-user default; a job's becomes GIMPI_GROUPD for the
 *  console's task.  0, or -1 with a message. */
static int s_endpoint(console_t *self, const char *job)
{
    const char *ep = gimpi_env("GIMPI_GROUPD");
    char why[GIMPI_KEY_ERRLEN];
    if (ep && *ep && job) {
        fprintf(stderr, "gimpi: -j %s and a groupd endpoint (-e or GIMPI_GROUPD %s): give "
                "one of them\n", job, ep);
        return -1;
    }
    if (ep && *ep) {
        snprintf(self->ep, sizeof self->ep, "%s", ep);
        self->given = true;
        return 0;
    }
    int found = run_jobfile_pick("gimpi", "-j", job, self->ep, sizeof self->ep);
    if (found < 0)
        return -1;
    if (found)
        return setenv("GIMPI_GROUPD", self->ep, 1);
    if (!gd_default_endpoint(self->ep, sizeof self->ep, why, sizeof why)) {
        fprintf(stderr, "gimpi: %s\n", why);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "endpoint", required_argument, NULL, 'e' },
        { "job", required_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    console_t self = { .task = NULL };
    const char *job = NULL;
    int c;
    /* '+': options stop at the command, whose own options start with '-' */
    while ((c = getopt_long(argc, argv, "+e:j:h", opts, NULL)) != -1) {
        switch (c) {
        case 'e':
            if (setenv("GIMPI_GROUPD", optarg, 1) < 0)
                return 2;
            break;
        case 'j': job = optarg; break;
        case 'h': s_usage(stdout); return 0;
        case 'V': printf("gimpi %s\n", gimpi_version()); return 0;
        default: s_usage(stderr); return 2;
        }
    }
    if (s_endpoint(&self, job) < 0)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    if (optind < argc) {
        int rc = s_run(&self, argc - optind, argv + optind);
        s_leave(&self, true);
        return rc < 0;
    }
    bool tty = isatty(0) && isatty(1);
    self.may_start = tty;
    while (!self.quit) {
        char *line = s_read(tty);
        if (!line)
            break;
        if (s_line(&self, line) < 0)
            self.failed++;
        free(line);
    }
    if (tty && !self.quit)
        printf("\n");
    s_leave(&self, !tty);
    return !tty && self.failed ? 1 : 0;
}
