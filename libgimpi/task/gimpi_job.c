/*  gimpi_job.c — a task's view of its job: reading what gimpirun handed over (listening
 *  socket, startup tables, go byte), or enrolling a shell-started task as a one-task job
 *  whose single-client startup is done locally.  See gimpi_job.h for the hand-over.
 */
#include "task/gimpi_job.h"
#include "base/gimpi_key.h"
#include "net/gimpi_host.h"
#include "base/gimpi_tunables.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

/*  A non-negative integer from the environment, or -1. */
static int s_env_int(const char *name)
{
    const char *v = gimpi_env(name);
    if (!v || !*v)
        return -1;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0 || n > 1 << 30)
        return -1;
    return (int)n;
}

/*  Listening socket on addr, at a port of GIMPI_PORTS or any (gimpi_host_listen). */
int gimpi_job_listen(const char *addr, int *port, char *err, size_t errsize)
{
    struct in_addr in;
    if (inet_pton(AF_INET, addr, &in) != 1) {
        snprintf(err, errsize, "bad IPv4 address '%s'", addr);
        return -1;
    }
    uint8_t a16[16];
    impi_addr16_from_ipv4(a16, ntohl(in.s_addr));
    return gimpi_host_listen(a16, port, err, errsize);
}

/*  Single-client startup: each reply is our own payload under mask 0x1. */
impi_tables_t *gimpi_job_local_startup(const impi_desc_t *desc, char *err, size_t errsize)
{
    impi_tables_t *tables = impi_tables_new(1, 0);
    if (!tables) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    for (int i = 0; i < IMPI_LABEL_COUNT; i++) {
        int32_t label = impi_label_at(i)->value;
        size_t len;
        uint8_t *payload = impi_desc_payload(desc, label, &len);
        if (!payload) {
            snprintf(err, errsize, "cannot build %s", impi_label_name(label));
            impi_tables_destroy(&tables);
            return NULL;
        }
        /* a reply is label, mask, data; the client payload is label, data */
        uint8_t *reply = malloc(len + 4);
        if (!reply) {
            free(payload);
            impi_tables_destroy(&tables);
            snprintf(err, errsize, "out of memory");
            return NULL;
        }
        memcpy(reply, payload, 4);
        gimpi_be_put32(reply + 4, 0x1);
        memcpy(reply + 8, payload + 4, len - 4);
        int rc = impi_tables_add_reply(tables, reply, len + 4, err, errsize);
        free(reply);
        free(payload);
        if (rc < 0) {
            impi_tables_destroy(&tables);
            return NULL;
        }
    }
    if (impi_tables_finish(tables, err, errsize) < 0) {
        impi_tables_destroy(&tables);
        return NULL;
    }
    return tables;
}

/*  The tables of a one-task job listening on the IPv4 address addr (host order):port. */
static impi_tables_t *s_solo_tables(uint32_t addr, int port, char *err, size_t errsize)
{
    impi_desc_host_t host = { .port = port, .nprocs = 1,
                              .ackmark = GIMPI_DEFAULT_ACKMARK,
                              .hiwater = GIMPI_DEFAULT_HIWATER };
    impi_addr16_from_ipv4(host.addr, addr);
    impi_proc_t proc = { .pid = getpid() };
    memcpy(proc.hostid, host.addr, 16);
    impi_desc_t desc = { .rank = 0, .nversions = 1, .datalen = GIMPI_DEFAULT_DATALEN,
                         .tagub = 0x7fffffff, .xsize = -1, .maxlinear = -1,
                         .nhosts = 1, .hosts = &host, .nprocs = 1, .procs = &proc };
    return gimpi_job_local_startup(&desc, err, errsize);
}

/*  The tables of a one-task job listening on 127.0.0.1:port. */
impi_tables_t *gimpi_job_solo_tables(int port, char *err, size_t errsize)
{
    return s_solo_tables(INADDR_LOOPBACK, port, err, errsize);
}

/*  A shell-started or spawned task: one client, one host, one proc, listening on
 *  GIMPI_HOST_ADDR (set by a host agent, or by the user on a machine of a virtual machine),
 *  else on the loopback. */
static int s_standalone(gimpi_job_t *job, char *err, size_t errsize)
{
    const char *addr = gimpi_env(GIMPI_ENV_HOST_ADDR);
    if (!addr || !*addr)
        addr = "127.0.0.1";
    struct in_addr in;
    if (inet_pton(AF_INET, addr, &in) != 1) {
        snprintf(err, errsize, "%s='%s' is not an IPv4 address", GIMPI_ENV_HOST_ADDR, addr);
        return -1;
    }
    int port;
    int fd = gimpi_job_listen(addr, &port, err, errsize);
    if (fd < 0)
        return -1;
    job->tables = s_solo_tables(ntohl(in.s_addr), port, err, errsize);
    if (!job->tables) {
        close(fd);
        return -1;
    }
    job->client = job->local = job->host_rank = job->world_rank = 0;
    job->listen_fd = fd;
    job->local_fd = gimpi_host_listen_local(fd);
    job->launched = false;
    return 0;
}

/*  Copies a shared descriptor's whole content (pread: no shared offset touched) into a
 *  private memfd positioned at 0.  Returns it, or -1 with a message in err. */
static int s_private_copy(int shared, char *err, size_t errsize)
{
    int mine = memfd_create("gimpi-tables-copy", MFD_CLOEXEC);
    if (mine < 0) {
        snprintf(err, errsize, "memfd_create: %s", strerror(errno));
        return -1;
    }
    char buf[65536];
    off_t off = 0;
    for (;;) {
        ssize_t r = pread(shared, buf, sizeof buf, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errsize, "reading the startup tables: %s", strerror(errno));
            close(mine);
            return -1;
        }
        if (r == 0)
            break;
        if (write(mine, buf, (size_t)r) != r) {
            snprintf(err, errsize, "copying the startup tables: %s", strerror(errno));
            close(mine);
            return -1;
        }
        off += r;
    }
    lseek(mine, 0, SEEK_SET);
    return mine;
}

/*  Waits for the launcher's go byte, then reads the tid base and its block's token that
 *  may follow it ("T<base> <token>\n": the launcher writes it in the same write and closes
 *  the pipe, so the token is seen by the task alone): *tidbase, -1 when none. */
static int s_wait_go(int go_fd, int timeout_ms, int *tidbase, char *token, size_t toksize,
                     char *err, size_t errsize)
{
    *tidbase = -1;
    token[0] = 0;
    struct pollfd p = { .fd = go_fd, .events = POLLIN };
    int rc;
    do
        rc = poll(&p, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0) {
        snprintf(err, errsize, "the launcher did not finish the startup in %d ms", timeout_ms);
        return -1;
    }
    char c = 0;
    ssize_t r;
    do
        r = read(go_fd, &c, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1 || c != 'T') {
        snprintf(err, errsize, "the job's startup failed (see gimpirun's message)");
        return -1;
    }
    char line[96];
    size_t got = 0;
    while (got < sizeof line - 1 && poll(&p, 1, timeout_ms) > 0) {
        do
            r = read(go_fd, line + got, sizeof line - 1 - got);
        while (r < 0 && errno == EINTR);
        if (r <= 0)
            break;
        got += (size_t)r;
        if (memchr(line, '\n', got))
            break;
    }
    line[got] = 0;
    char *end;
    long base = strtol(line, &end, 10);
    if (got && end != line && (*end == '\n' || *end == ' ') && base >= 0 && base < INT32_MAX)
        *tidbase = (int)base;
    if (*tidbase >= 0 && *end == ' ') {
        size_t len = strcspn(end + 1, "\n");
        if (len < toksize) {
            memcpy(token, end + 1, len);
            token[len] = 0;
        }
    }
    gimpi_key_wipe(line, sizeof line);
    return 0;
}

/*  Hex FNV-1a digest of every proc's identity. */
void gimpi_job_key(const impi_tables_t *tables, char out[GIMPI_JOB_KEY_SIZE])
{
    uint64_t h[2] = { 0xcbf29ce484222325ULL, 0x84222325cbf29ce4ULL };
    for (int r = 0; r < tables->nprocs; r++) {
        uint8_t id[IMPI_PROC_SIZE];
        impi_proc_encode(id, &tables->procs[r].id);
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; i < sizeof id; i++)
                h[k] = (h[k] ^ id[i]) * 0x100000001b3ULL;
    }
    snprintf(out, GIMPI_JOB_KEY_SIZE, "job-%016llx%016llx", (unsigned long long)h[0],
             (unsigned long long)h[1]);
}

/*  From gimpirun's environment, or standalone. */
int gimpi_job_init(gimpi_job_t *job, int timeout_ms, char *err, size_t errsize)
{
    memset(job, 0, sizeof *job);
    job->listen_fd = job->local_fd = -1;
    job->tidbase = -1;
    int listen_fd = s_env_int(GIMPI_ENV_LISTEN_FD);
    int local_fd = s_env_int(GIMPI_ENV_LOCAL_LISTEN_FD);
    if (local_fd >= 0) {        /* ours from now on, whatever happens next */
        fcntl(local_fd, F_SETFD, FD_CLOEXEC);
        unsetenv(GIMPI_ENV_LOCAL_LISTEN_FD);
        job->local_fd = local_fd;
    }
    int tables_fd = s_env_int(GIMPI_ENV_TABLES_FD);
    int go_fd = s_env_int(GIMPI_ENV_GO_FD);
    int client = s_env_int(GIMPI_ENV_CLIENT);
    int local = s_env_int(GIMPI_ENV_LOCAL);
    if (listen_fd < 0 && tables_fd < 0 && go_fd < 0)
        return s_standalone(job, err, errsize);
    if (listen_fd < 0 || tables_fd < 0 || go_fd < 0 || client < 0 || local < 0) {
        snprintf(err, errsize, "incomplete launcher environment (%s, %s, %s, %s, %s)",
                 GIMPI_ENV_LISTEN_FD, GIMPI_ENV_TABLES_FD, GIMPI_ENV_GO_FD,
                 GIMPI_ENV_CLIENT, GIMPI_ENV_LOCAL);
        return -1;
    }
    /* the descriptors are ours alone: nothing we exec later inherits them */
    fcntl(listen_fd, F_SETFD, FD_CLOEXEC);
    fcntl(tables_fd, F_SETFD, FD_CLOEXEC);
    int rc = s_wait_go(go_fd, timeout_ms, &job->tidbase, job->tidtoken, sizeof job->tidtoken,
                       err, errsize);
    close(go_fd);
    if (rc < 0) {
        close(tables_fd);
        close(listen_fd);
        return -1;
    }
    /* every task inherited the same open memfd, so its file offset is shared: read it with
     * pread into a private copy, whose offset is ours */
    int mine = s_private_copy(tables_fd, err, errsize);
    close(tables_fd);
    if (mine < 0) {
        close(listen_fd);
        return -1;
    }
    job->tables = impi_tables_load(mine, client, err, errsize);
    close(mine);
    if (!job->tables) {
        close(listen_fd);
        return -1;
    }
    const impi_client_info_t *me = client < job->tables->nclients
                                   ? &job->tables->clients[client] : NULL;
    if (!me || local >= me->nhosts || me->nhosts != me->nprocs) {
        snprintf(err, errsize, "task %d of client %d is not in the job's tables", local, client);
        impi_tables_destroy(&job->tables);
        close(listen_fd);
        return -1;
    }
    job->client = client;
    job->local = local;
    job->host_rank = me->first_host + local;
    job->world_rank = me->first_proc + local;
    job->listen_fd = listen_fd;
    job->launched = true;
    unsetenv(GIMPI_ENV_LISTEN_FD);      /* children of this task are not part of the job */
    unsetenv(GIMPI_ENV_TABLES_FD);
    unsetenv(GIMPI_ENV_GO_FD);
    return 0;
}

/*  execv on GIMPI_PATH's directories, then execvp. */
int gimpi_job_exec(char *const argv[])
{
    const char *list = gimpi_env("GIMPI_PATH");
    if (!strchr(argv[0], '/'))
        while (list && *list) {
            const char *colon = strchr(list, ':');
            size_t len = colon ? (size_t)(colon - list) : strlen(list);
            char path[4096];
            if (len && (size_t)snprintf(path, sizeof path, "%.*s/%s", (int)len, list, argv[0])
                           < sizeof path)
                execv(path, argv);
            list = colon ? colon + 1 : NULL;
        }
    execvp(argv[0], argv);
    return errno;
}

/*  Releases what gimpi_job_init took. */
void gimpi_job_fini(gimpi_job_t *job)
{
    if (job->tables)
        impi_tables_destroy(&job->tables);
    if (job->listen_fd >= 0)
        close(job->listen_fd);
    if (job->local_fd >= 0)
        close(job->local_fd);
    job->listen_fd = job->local_fd = -1;
}
