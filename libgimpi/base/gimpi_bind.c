/*  gimpi_bind.c — a core of its own for each task of a job on this machine (gimpi_bind.h):
 *  the launcher's plan (which CPUs, claimed with lock files), the child's pinning, and what
 *  a task reads back (how many CPUs its node's tasks share, whether it has its own core).
 */
#include "base/gimpi_bind.h"
#include "base/gimpi_key.h"
#include "base/gimpi_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct gimpi_bind_t {
    int n;                      /* tasks planned (0: unbound) */
    int ncpus;                  /* CPUs of the launcher's set */
    int *cpu;                   /* task i's CPU */
    int *lock;                  /* task i's lock descriptor (the launcher's copy) */
    char set[256];              /* the launcher's CPUs as a list ("0-3.8") */
};

/*  Writes the CPUs of set as ranges separated by '.' into buf ("" when too long). */
static void s_set_text(const cpu_set_t *set, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int w = e > c ? snprintf(buf + len, size - len, "%s%d-%d", len ? "." : "", c, e)
                      : snprintf(buf + len, size - len, "%s%d", len ? "." : "", c);
        if (w < 0 || (size_t)w >= size - len) {
            buf[0] = 0;
            return;
        }
        len += (size_t)w;
        c = e;
    }
}

/*  Reads a list written by s_set_text into set: the number of CPUs, or -1. */
static int s_set_parse(const char *text, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = text;
    while (p && *p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a >= CPU_SETSIZE)
            return -1;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a || b >= CPU_SETSIZE)
                return -1;
        }
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, set);
        if (*end && *end != '.')
            return -1;
        p = *end ? end + 1 : end;
    }
    return CPU_COUNT(set) > 0 ? CPU_COUNT(set) : -1;
}

/*  Takes the lock of CPU c in dir: its descriptor, or -1 when another task holds it. */
static int s_claim(const char *dir, int c)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/cpu.%d", dir, c) >= (int)sizeof path)
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/*  What GIMPI_BIND asks: 1 a core per task (unset, empty, "core"), 0 none, -1 a value we
 *  do not know. */
static int s_mode(void)
{
    const char *how = gimpi_env(GIMPI_ENV_BIND);
    if (!how || !*how || strcmp(how, "core") == 0)
        return 1;
    return strcmp(how, "none") == 0 ? 0 : -1;
}

/*  Whether GIMPI_BIND says something we know (gimpi_bind.h). */
int gimpi_bind_check_env(char *err, size_t errsize)
{
    if (s_mode() >= 0)
        return 0;
    snprintf(err, errsize, "%s=\"%.64s\": say \"core\" (a core per task, the default) or "
             "\"none\"", GIMPI_ENV_BIND, gimpi_env(GIMPI_ENV_BIND));
    return -1;
}

/*  Whether GIMPI_BIND asks for cores (gimpi_bind.h). */
bool gimpi_bind_wanted(void)
{
    return s_mode() == 1;
}

/*  The plan for n tasks with the lock files in dir (NULL: no binding). */
static gimpi_bind_t *s_new_in(const char *dir, int n)
{
    gimpi_bind_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    cpu_set_t mine;
    if (n < 1 || !dir || s_mode() != 1 || sched_getaffinity(0, sizeof mine, &mine) < 0 || n > CPU_COUNT(&mine))
        return self;
    self->cpu = malloc((size_t)n * sizeof *self->cpu);
    self->lock = malloc((size_t)n * sizeof *self->lock);
    if (!self->cpu || !self->lock) {
        gimpi_bind_destroy(&self);
        return NULL;
    }
    self->ncpus = CPU_COUNT(&mine);
    s_set_text(&mine, self->set, sizeof self->set);
    int got = 0;
    for (int c = 0; c < CPU_SETSIZE && got < n; c++)
        if (CPU_ISSET(c, &mine) && (self->lock[got] = s_claim(dir, c)) >= 0)
            self->cpu[got++] = c;
    self->n = n;
    if (got < n || !self->set[0]) {     /* too few free: nobody is bound */
        for (int i = 0; i < got; i++)
            close(self->lock[i]);
        self->n = 0;
    }
    return self;
}

/*  Plans cores for n tasks (gimpi_bind.h). */
gimpi_bind_t *gimpi_bind_new(int n)
{
    char dir[PATH_MAX];
    return s_new_in(gimpi_rundir(dir, sizeof dir, NULL, 0) == 0 ? dir : NULL, n);
}

/*  Lets go of the launcher's copies of the claims and frees. */
void gimpi_bind_destroy(gimpi_bind_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    gimpi_bind_t *self = *self_p;
    for (int i = 0; i < self->n; i++)
        close(self->lock[i]);
    free(self->cpu);
    free(self->lock);
    free(self);
    *self_p = NULL;
}

/*  The CPU of task i, or -1. */
int gimpi_bind_cpu(const gimpi_bind_t *self, int i)
{
    return self && i >= 0 && i < self->n ? self->cpu[i] : -1;
}

/*  Pins the forked child of task i to its core (gimpi_bind.h). */
int gimpi_bind_child(const gimpi_bind_t *self, int i)
{
    int c = gimpi_bind_cpu(self, i);
    if (c < 0)
        return 0;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(c, &one);
    if (sched_setaffinity(0, sizeof one, &one) < 0)
        return -1;
    fcntl(self->lock[i], F_SETFD, 0);   /* the claim lives as long as the task */
    char v[320];
    snprintf(v, sizeof v, "%d,%d,%d,%s", c, self->lock[i], self->ncpus, self->set);
    return setenv(GIMPI_ENV_BOUND, v, 1);
}

/*  Reads GIMPI_BOUND: 0 with its fields, or -1 when unset or malformed. */
static int s_bound(int *cpu, int *fd, int *ncpus, cpu_set_t *set)
{
    const char *v = gimpi_env(GIMPI_ENV_BOUND);
    char list[260];
    if (!v || sscanf(v, "%d,%d,%d,%259s", cpu, fd, ncpus, list) != 4 || *cpu < 0
        || *cpu >= CPU_SETSIZE || *ncpus < 1 || s_set_parse(list, set) != *ncpus)
        return -1;
    return 0;
}

/*  The CPUs the tasks of this machine share. */
int gimpi_bind_cpus(void)
{
    int cpu, fd, ncpus;
    cpu_set_t set;
    if (s_bound(&cpu, &fd, &ncpus, &set) == 0)
        return ncpus;
    return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0
           ? CPU_COUNT(&set) : 1;
}

/*  True when this task has a core of its own. */
bool gimpi_bind_own_core(void)
{
    int cpu, fd, ncpus;
    cpu_set_t set, mine;
    return s_bound(&cpu, &fd, &ncpus, &set) == 0
           && sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) == 1
           && CPU_ISSET(cpu, &mine);
}

/*  The launcher's CPUs, in a bound task (gimpi_bind.h). */
int gimpi_bind_home(cpu_set_t *set)
{
    int cpu, fd, ncpus;
    return s_bound(&cpu, &fd, &ncpus, set);
}

/*  Makes the core's lock close-on-exec (gimpi_bind.h). */
void gimpi_bind_settle(void)
{
    int cpu, fd, ncpus;
    cpu_set_t set;
    struct stat st;
    if (s_bound(&cpu, &fd, &ncpus, &set) == 0 && fd > 2 && fstat(fd, &st) == 0
        && S_ISREG(st.st_mode))
        fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/*  Self-test: two plans in a scratch directory; the second finds the first's cores taken. */
int gimpi_bind_selftest(void)
{
    char dir[] = "/tmp/gimpi-bind-XXXXXX";
    if (!mkdtemp(dir))
        return -1;
    cpu_set_t mine, parsed;
    int fails = 0;
    if (sched_getaffinity(0, sizeof mine, &mine) < 0)
        return -1;
    char text[256];
    s_set_text(&mine, text, sizeof text);
    fails += s_set_parse(text, &parsed) != CPU_COUNT(&mine) || !CPU_EQUAL(&parsed, &mine);
    fails += s_set_parse("0-", &parsed) != -1 || s_set_parse("x", &parsed) != -1
             || s_set_parse("3-1", &parsed) != -1 || s_set_parse("0.2-3", &parsed) != 3;
    int all = CPU_COUNT(&mine);
    gimpi_bind_t *a = s_new_in(dir, all), *b = s_new_in(dir, 1);
    fails += !a || gimpi_bind_cpu(a, 0) < 0 || gimpi_bind_cpu(a, all) != -1;
    fails += !b || gimpi_bind_cpu(b, 0) != -1;          /* every core is a's */
    gimpi_bind_destroy(&a);
    fails += a != NULL;
    gimpi_bind_destroy(&b);
    b = s_new_in(dir, 1);                               /* a let go: free again */
    fails += !b || gimpi_bind_cpu(b, 0) < 0;
    gimpi_bind_destroy(&b);
    gimpi_bind_t *c = s_new_in(dir, all + 1);           /* more tasks than CPUs */
    fails += !c || gimpi_bind_cpu(c, 0) != -1;
    gimpi_bind_destroy(&c);
    for (int i = 0; i < CPU_SETSIZE; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/cpu.%d", dir, i);
        unlink(path);
    }
    rmdir(dir);
    return fails ? -1 : 0;
}
