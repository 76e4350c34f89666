/*  gdtest.c — private groupd daemons and raw protocol exchanges for the groupd tests.
 *  The tests' sockets come from the control plane's socket factory (groups/gd_sock.h), with
 *  the settings of a tool; "raw" means that the tests write the frames themselves. */
#include "gdtest.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

/*  Starts a private groupd and reads its endpoint line. */
int gdt_start(gdt_daemon_t *d, const char *extra)
{
    return gdt_start_ep(d, NULL, extra);
}

/*  Starts a groupd on a given endpoint (NULL: ipc in a fresh temporary directory). */
int gdt_start_ep(gdt_daemon_t *d, const char *endpoint, const char *extra)
{
    memset(d, 0, sizeof *d);
    snprintf(d->dir, sizeof d->dir, "/tmp/gdtest-XXXXXX");
    if (!mkdtemp(d->dir))
        return -1;
    if (endpoint)
        snprintf(d->endpoint, sizeof d->endpoint, "%s", endpoint);
    else
        snprintf(d->endpoint, sizeof d->endpoint, "ipc://%s/gd", d->dir);
    char bin[4096];
    snprintf(bin, sizeof bin, "%s", tl_prog("groupd/groupd"));
    /* (no journal: a test's groupd killed stays dead, as the tests of its death want) */
    char *argv[8] = { bin, (char *)"--foreground", (char *)"--no-journal", (char *)"--endpoint",
                      d->endpoint };
    int n = 5;
    if (extra)
        argv[n++] = (char *)extra;
    argv[n] = NULL;
    if (tl_spawn(argv, &d->child) < 0)
        return -1;
    d->running = true;
    char line[512];
    if (tl_read_line(d->child.out, line, sizeof line, 20000) < 0)
        return -1;
    if (!strncmp(line, "manager-token ", 14)) {     /* --launcher: its token comes first */
        snprintf(d->token, sizeof d->token, "%.63s", line + 14);
        if (tl_read_line(d->child.out, line, sizeof line, 20000) < 0)
            return -1;
    }
    if (endpoint && strncmp(endpoint, "tcp://", 6) == 0)
        snprintf(d->endpoint, sizeof d->endpoint, "%s", line);
    else if (strcmp(line, d->endpoint))
        return -1;
    return 0;
}

/*  Stops it with SIGTERM. */
int gdt_stop(gdt_daemon_t *d)
{
    if (!d->running)
        return 0;
    kill(d->child.pid, SIGTERM);
    int st = tl_wait(&d->child, 20000);
    tl_child_close(&d->child);
    d->running = false;
    return st;
}

/*  Kills it with SIGKILL. */
void gdt_kill(gdt_daemon_t *d)
{
    if (!d->running)
        return;
    kill(d->child.pid, SIGKILL);
    tl_wait(&d->child, 20000);
    tl_child_close(&d->child);
    d->running = false;
}

/*  Removes the files of the temporary directory, then the directory. */
void gdt_cleanup(gdt_daemon_t *d)
{
    DIR *dir = opendir(d->dir);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", d->dir, e->d_name);
        unlink(path);
    }
    closedir(dir);
    rmdir(d->dir);
}

/*  Fresh directory, endpoint in it, GIMPI_GROUPD_BIN set. */
int gdt_autostart_setup(char *dir, char *ep, size_t epsize)
{
    if (!mkdtemp(dir))
        return -1;
    snprintf(ep, epsize, "ipc://%s/gd", dir);
    char bin[4096];
    snprintf(bin, sizeof bin, "%s", tl_prog("groupd/groupd"));
    setenv("GIMPI_GROUPD_BIN", bin, 1);
    return 0;
}

/*  Pid from the lock file (bounded wait for it to be written). */
pid_t gdt_lock_pid(const char *dir, int wait_ms)
{
    char lock[400];
    snprintf(lock, sizeof lock, "%s/gd.lock", dir);
    for (int64_t end = tl_now_ms() + wait_ms;;) {
        char pidtxt[32] = "";
        FILE *f = fopen(lock, "r");
        if (f) {
            if (!fgets(pidtxt, sizeof pidtxt, f))
                pidtxt[0] = 0;
            fclose(f);
        }
        if (atoi(pidtxt) > 0 || tl_now_ms() >= end)
            return atoi(pidtxt);
        struct timespec ts = { 0, 5 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

/*  Removes the files a started groupd leaves and the directory. */
void gdt_autostart_cleanup(const char *dir)
{
    char path[400];
    const char *files[] = { "gd", "gd.pub", "gd.lock" };
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k]);
        unlink(path);
    }
    rmdir(dir);
    unsetenv("GIMPI_GROUPD_BIN");
}

/*  One request, one reply, bounded. */
int gdt_exchange(void *sock, const gd_frame_t *frames, int nframes, gd_multipart_t *mp,
                 int timeout_ms)
{
    if (gd_send_frames(sock, NULL, 0, frames, nframes, 0) < 0)
        return -1;
    zmq_pollitem_t item = { sock, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll(&item, 1, timeout_ms) <= 0)
        return -1;
    return gd_multipart_recv(sock, mp, 0);
}

/*  A tool DEALER on ep in a context of its own. */
void *gdt_dealer(const char *ep, void **zctx)
{
    *zctx = zmq_ctx_new();
    return *zctx ? gdt_dealer_in(*zctx, ep) : NULL;
}

/*  A tool DEALER on ep in a given context (made by the socket factory; a failure is
 *  reported on stderr). */
void *gdt_dealer_in(void *zctx, const char *ep)
{
    char err[GD_SOCK_ERRLEN];
    void *s = gd_sock_tool_new(zctx, ep, NULL, NULL, 0, err, sizeof err);
    if (!s)
        fprintf(stderr, "# gdtest: %s\n", err);
    return s;
}

/*  Closes a DEALER and its context. */
void gdt_dealer_close(void *sock, void *zctx)
{
    gd_sock_destroy(&sock, NULL);
    zmq_ctx_term(zctx);
}

/*  Barrier (or freeze) arrivals from a STAT record. */
int gdt_arrived(const char *ep, const char *group, bool freeze)
{
    void *zctx;
    void *s = gdt_dealer(ep, &zctx);
    uint8_t hdr[GD_HDR_SIZE];
    gd_header_encode(hdr, GD_STAT, 1);
    gd_frame_t f[2] = { { hdr, sizeof hdr }, { (const uint8_t *)group, strlen(group) } };
    gd_multipart_t mp;
    int n = -1;
    if (gdt_exchange(s, f, 2, &mp, 20000) == 0) {
        gd_groupstat_t st;
        if (mp.nparts == 4 && gd_groupstat_decode(mp.frames[3].data, mp.frames[3].len, &st) == 0) {
            n = freeze ? st.frz_arrived : st.bar_arrived;
            gd_groupstat_clear(&st);
        }
        gd_multipart_close(&mp);
    }
    gdt_dealer_close(s, zctx);
    return n;
}

/*  Waits (bounded) for n arrivals. */
bool gdt_wait_arrived(const char *ep, const char *group, int n, bool freeze)
{
    for (int64_t end = tl_now_ms() + 20000; tl_now_ms() < end;) {
        if (gdt_arrived(ep, group, freeze) == n)
            return true;
        struct timespec ts = { 0, 2 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return false;
}
