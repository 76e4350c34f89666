/*  run_proc.c — what gimpirun's files share about the processes they start: a child's
 *  first steps after fork, the programs beside gimpirun, and the environment, working
 *  directory, program path and listening address a task on another host is given, and
 *  where a spawned task's program is found (never on PATH, as in PVM); and the lines the
 *  job's groupd prints, the ports it may take.  It
 *  knows hosts only by their host-set entry and nothing of the launcher's state: every
 *  other file of gimpirun may use it.
 */
#include "config.h"
#include "programs/run_proc.h"
#include "programs/proctree.h"
#include "base/gimpi_tunables.h"
#include "base/gimpi_findprog.h"
#include "gimpi_group.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/*  In a child just forked from gimpirun: default signal mask and SIGPIPE, and deathsig
 *  when gimpirun dies (nothing it starts outlives it); exits at once when gimpirun died
 *  before that was set. */
void run_child_start(pid_t launcher, int deathsig)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    prctl(PR_SET_PDEATHSIG, deathsig);
    if (getppid() != launcher)
        _exit(127);
}

/*  The path of program name in gimpirun's own directory (as installed, or in the build
 *  tree): 0, or -1 when that directory cannot be known. */
int run_beside_me(const char *name, char *out, size_t size)
{
    char me[PATH_MAX - 64];
    ssize_t n = readlink("/proc/self/exe", me, sizeof me - 1);
    char *slash = n > 0 ? (me[n] = 0, strrchr(me, '/')) : NULL;
    if (!slash)
        return -1;
    *slash = 0;
    snprintf(out, size, "%s/%s", me, name);
    return 0;
}

/*  The variables every remote task gets: GIMPI_* settings of ours (not the hand-over
 *  ones, nor keys) and those PVM_EXPORT names, as PVM exports them. */
extern char **environ;
char **run_export_env(const gimpi_hostinfo_t *info, int extra)
{
    int n = 0;
    while (environ[n])
        n++;
    char **env = calloc((size_t)n + (size_t)extra + 8, sizeof *env);
    if (!env)
        return NULL;
    int k = 0;
    const char *exp = gimpi_env("PVM_EXPORT");
    for (int i = 0; i < n; i++) {
        const char *e = environ[i];
        const char *eq = strchr(e, '=');
        if (!eq)
            continue;
        size_t len = (size_t)(eq - e);
        bool take = !strncmp(e, "GIMPI_", 6) && strncmp(e, "GIMPI_KEY", 9)
                    && strncmp(e, "GIMPI_RSH=", 10) && strncmp(e, "GIMPI_HOST", 10)
                    && strncmp(e, PROCTREE_ENV "=", sizeof PROCTREE_ENV);
        for (const char *p = exp; p && *p && !take;) {
            const char *c = strchr(p, ':');
            size_t l = c ? (size_t)(c - p) : strlen(p);
            take = l == len && !strncmp(p, e, len);
            p = c ? c + 1 : NULL;
        }
        if (take)
            env[k++] = strdup(e);
    }
    char buf[1200];
    snprintf(buf, sizeof buf, "GIMPI_HOST=%s", info->name);
    env[k++] = strdup(buf);
    if (info->ep[0]) {
        snprintf(buf, sizeof buf, "GIMPI_PATH=%s", info->ep);
        env[k++] = strdup(buf);
    }
    return env;
}

/*  Frees an environment made by run_export_env. */
void run_free_env(char **env)
{
    for (char **e = env; e && *e; e++)
        free(*e);
    free(env);
}

/*  The working directory of tasks on a host: wd=, else ours (as mpirun does; a directory
 *  that does not exist there fails the start, naming it). */
const char *run_wd(const gimpi_hostinfo_t *info, char *buf, size_t size)
{
    if (info->wd[0])
        return info->wd;
    if (!getcwd(buf, size))
        buf[0] = 0;
    return buf;
}

/*  An absolute program path for other hosts when it was given relative with a slash. */
char *run_abs_prog(const char *prog)
{
    if (!strchr(prog, '/') || prog[0] == '/')
        return strdup(prog);
    char cwd[PATH_MAX], *out = malloc(PATH_MAX * 2);
    if (out && getcwd(cwd, sizeof cwd))
        snprintf(out, PATH_MAX * 2, "%s/%s", cwd, prog);
    else if (out)
        snprintf(out, PATH_MAX * 2, "%s", prog);
    return out;
}

/*  The listening-address spec a task on another host gets ("route:ADDR", the address
 *  that reaches this host, or "if:NAME|CIDR" with -if given as a name or a network). */
void run_addr_spec(const char *myaddr, const char *ifspec, char *out, size_t size)
{
    snprintf(out, size, "route:%s", myaddr);
    struct in_addr plain;
    if (ifspec && inet_pton(AF_INET, ifspec, &plain) != 1)
        snprintf(out, size, "if:%s", ifspec);
}

/*  Where a spawned task's program is (run_proc.h). */
int run_find_spawned(const char *name, char *path, size_t size, char *tried, size_t tsize)
{
    char dir[PATH_MAX];
    const char *d = gimpi_env("GIMPI_SPAWN_DIR");
    snprintf(dir, sizeof dir, "%s", d ? d : "");
    unsetenv("GIMPI_SPAWN_DIR");        /* the spawner's, not the task's own */
    if (tsize)
        tried[0] = 0;
    if (strchr(name, '/')) {
        snprintf(path, size, "%s", name);
        return 0;
    }
    return gimpi_findspawn(name, dir, path, size, tried, tsize) == 0 ? 0 : ENOENT;
}

/*  Monotonic milliseconds. */
static int64_t s_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*  The port of an endpoint "tcp://A:P", or -1. */
int run_ep_port(const char *ep)
{
    const char *colon = strrchr(ep, ':');
    if (strncmp(ep, "tcp://", 6) || !colon)
        return -1;
    long p = strtol(colon + 1, NULL, 10);
    return p > 0 && p < 65536 ? (int)p : -1;
}

/*  Reads one line from fd within ms.  0 or -1. */
int run_read_line(int fd, char *line, size_t size, int ms)
{
    size_t got = 0;
    int64_t end = s_now_ms() + ms;
    while (got < size - 1) {
        int64_t left = end - s_now_ms();
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return -1;
        ssize_t r = read(fd, line + got, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        if (line[got] == '\n') {
            line[got] = 0;
            return 0;
        }
        got++;
    }
    return -1;
}

/*  True when tcp port p is free here (a bind to it on any address works). */
static bool s_port_free(int p)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p) };
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

/*  Two free tcp ports P and P+1 here, below the kernel's ephemeral range (20000-32767, from
 *  a place that depends on our pid): a port there is taken by nothing the system hands
 *  out by itself (a task's listening port, an outgoing connection), on this host or on
 *  another one that uses the same ports later (a standby groupd).  P, or 0. */
int run_free_port(void)
{
    for (int k = 0; k < 6384; k++) {
        int p = 20000 + (int)(((unsigned)getpid() * 7919u + (unsigned)k * 2u) % 12766u);
        if (s_port_free(p) && s_port_free(p + 1))
            return p;
    }
    return 0;
}

/*  A groupd's "manager-token HEX" line (groupd --launcher): the token into out (at least
 *  GIMPI_GROUPS_TOKEN_LEN + 1 bytes).  True when line was one. */
bool run_token_line(const char *line, char *out, size_t size)
{
    static const char tag[] = "manager-token ";
    if (strncmp(line, tag, sizeof tag - 1)
        || strlen(line + sizeof tag - 1) != GIMPI_GROUPS_TOKEN_LEN)
        return false;
    snprintf(out, size, "%s", line + sizeof tag - 1);
    return true;
}

/*  Forks argv[0] (a groupd) with its stdout (and its stderr too when both) to a pipe (our
 *  end in *out, close-on-exec) and its stdin from /dev/null, in its own process group; it
 *  ends when we do (deathsig SIGTERM).  Its pid, or -1 with a message in err. */
pid_t run_fork_piped(char **argv, bool both, int *out, char *err, size_t errsize)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errsize, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        run_child_start(me, SIGTERM);
        setpgid(0, 0);
        dup2(p[1], 1);
        if (both)
            dup2(p[1], 2);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        execv(argv[0], argv);
        fprintf(stderr, "gimpirun: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        snprintf(err, errsize, "fork: %s", strerror(errno));
        return -1;
    }
    *out = p[0];
    return pid;
}
