/*  impi-startup.c — plays one IMPI client's startup against an IMPI server and prints the
 *  tables the job agreed (see doc/impi-startup.1).
 *
 *  The client's hosts and procs are described on the command line (number of hosts,
 *  procs per host, packet length, tag bound, flow-control marks, collective crossovers,
 *  versions, address, ports); the program runs AUTH, IMPI, the 14 COLL labels and DONE
 *  through libgimpi's impi_client, prints the tables to stdout and sends FINI.  Users run
 *  it beside their real clients to see what a job agrees, or why it does not.
 */
#include "impi/impi_client.h"
#include "base/gimpi_tunables.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROG "impi-startup"

/*  Everything the command line sets. */
typedef struct {
    int rank;
    const char *server;
    long hosts, procs;
    long long datalen, tagub, ackmark, hiwater, xsize, maxlinear, port, timeout;
    const char *versions;
    const char *addr;
    const char *auth;
    const char *key;
    const char *save;
    const char *load;
    bool trace, wait;
} opts_t;

/*  Prints the usage to `out`. */
static void s_usage(FILE *out)
{
    fprintf(out,
            "usage: " PROG " -client RANK HOST:PORT [-hosts N] [-procs P] [-datalen B]\n"
            "       [-tagub T] [-ackmark A] [-hiwater H] [-xsize X] [-maxlinear M]\n"
            "       [-versions 0.0,0.1] [-addr ADDRESS] [-port BASE] [-timeout SECONDS]\n"
            "       [-auth none|key|none,key] [-key KEY] [-save FILE] [-trace] [-wait]\n"
            "       " PROG " -load FILE [-client RANK]\n");
}

/*  Parses a whole decimal integer within lo..hi; exits with a message otherwise. */
static long long s_number(const char *opt, const char *text, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(text ? text : "", &end, 10);
    if (!text || !*text || *end || errno || v < lo || v > hi) {
        fprintf(stderr, PROG ": %s wants an integer in %lld..%lld, not \"%s\"\n", opt, lo, hi,
                text ? text : "");
        exit(2);
    }
    return v;
}

/*  Parses "0.0,0.1" into the description's version list. */
static int s_versions(const char *text, impi_desc_t *desc)
{
    desc->nversions = 0;
    const char *p = text;
    while (*p) {
        unsigned long major, minor;
        char *end;
        if (desc->nversions == 8)
            return -1;
        errno = 0;
        major = strtoul(p, &end, 10);
        if (end == p || *end != '.' || errno || major > UINT32_MAX)
            return -1;
        p = end + 1;
        minor = strtoul(p, &end, 10);
        if (end == p || errno || minor > UINT32_MAX || (*end && *end != ','))
            return -1;
        desc->versions[desc->nversions][0] = (uint32_t)major;
        desc->versions[desc->nversions][1] = (uint32_t)minor;
        desc->nversions++;
        p = *end ? end + 1 : end;
        if (*end && !*p)
            return -1;
    }
    return desc->nversions ? 0 : -1;
}

/*  Opens a listening TCP socket on an ephemeral port; returns its fd and port. */
static int s_listen(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
    socklen_t sl = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0
        || getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/*  Reads the options; exits 2 on a usage error. */
static void s_parse(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){ .rank = -1, .hosts = 1, .procs = 1, .datalen = 65536, .tagub = INT32_MAX,
                   .ackmark = 10, .hiwater = 20, .xsize = -1, .maxlinear = -1, .port = 0,
                   .timeout = 0, .versions = "0.0", .addr = "127.0.0.1" };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (strcmp(a, name) == 0 && (v || (fprintf(stderr, PROG ": %s needs a value\n", \
                                                   name), exit(2), 0)) && ++i)
        if (strcmp(a, "-h") == 0 || strcmp(a, "-help") == 0 || strcmp(a, "--help") == 0) {
            s_usage(stdout);
            exit(0);
        } else if (strcmp(a, "-client") == 0 && !o->load) {
            if (i + 2 >= argc) {
                fprintf(stderr, PROG ": -client needs RANK and HOST:PORT\n");
                exit(2);
            }
            o->rank = (int)s_number("-client", argv[i + 1], 0, IMPI_MAX_CLIENTS - 1);
            o->server = argv[i + 2];
            i += 2;
        } else if (OPT("-hosts")) {
            o->hosts = (long)s_number(a, v, 1, 65536);
        } else if (OPT("-procs")) {
            o->procs = (long)s_number(a, v, 1, 1 << 20);
        } else if (OPT("-datalen")) {
            o->datalen = s_number(a, v, 1, INT32_MAX);
        } else if (OPT("-tagub")) {
            o->tagub = s_number(a, v, IMPI_MIN_TAGUB, INT32_MAX);
        } else if (OPT("-ackmark")) {
            o->ackmark = s_number(a, v, 1, INT32_MAX);
        } else if (OPT("-hiwater")) {
            o->hiwater = s_number(a, v, 1, INT32_MAX);
        } else if (OPT("-xsize")) {
            o->xsize = s_number(a, v, -1, INT32_MAX);
        } else if (OPT("-maxlinear")) {
            o->maxlinear = s_number(a, v, -1, INT32_MAX);
        } else if (OPT("-versions")) {
            o->versions = v;
        } else if (OPT("-addr")) {
            o->addr = v;
        } else if (OPT("-port")) {
            o->port = s_number(a, v, 1, 65535);
        } else if (OPT("-timeout")) {
            o->timeout = s_number(a, v, 1, 86400);
        } else if (OPT("-auth")) {
            o->auth = v;
        } else if (OPT("-key")) {
            o->key = v;
        } else if (OPT("-save")) {
            o->save = v;
        } else if (OPT("-load")) {
            o->load = v;
        } else if (o->load && strcmp(a, "-client") == 0 && v) {
            o->rank = (int)s_number(a, v, 0, IMPI_MAX_CLIENTS - 1);
            i++;
        } else if (strcmp(a, "-trace") == 0) {
            o->trace = true;
        } else if (strcmp(a, "-wait") == 0) {
            o->wait = true;
        } else {
            fprintf(stderr, PROG ": unknown option \"%s\"\n", a);
            s_usage(stderr);
            exit(2);
        }
#undef OPT
    }
    if (o->load)
        return;
    if (o->rank < 0) {
        fprintf(stderr, PROG ": -client RANK HOST:PORT is required\n");
        s_usage(stderr);
        exit(2);
    }
    if (o->hosts * o->procs > (1 << 20)) {
        fprintf(stderr, PROG ": at most %d procs in all\n", 1 << 20);
        exit(2);
    }
    if (o->port && o->port + o->hosts - 1 > 65535) {
        fprintf(stderr, PROG ": -port %lld + %ld hosts runs past port 65535\n", o->port, o->hosts);
        exit(2);
    }
}

/*  The AUTH choice from -auth / -key: false when neither is given (the environment
 *  decides); exits 2 on a bad value. */
static bool s_auth(const opts_t *o, uint32_t *mask_p, uint64_t *key_p)
{
    if (!o->auth && !o->key)
        return false;
    uint32_t mask = 0;
    uint64_t key = 0;
    const char *auth = o->auth ? o->auth : "key";
    if (strcmp(auth, "none") == 0)
        mask = 1u << IMPI_AUTH_NONE;
    else if (strcmp(auth, "key") == 0)
        mask = 1u << IMPI_AUTH_KEY;
    else if (strcmp(auth, "none,key") == 0 || strcmp(auth, "key,none") == 0)
        mask = 1u << IMPI_AUTH_NONE | 1u << IMPI_AUTH_KEY;
    else {
        fprintf(stderr, PROG ": -auth wants none, key or none,key, not \"%s\"\n", auth);
        exit(2);
    }
    if (mask & (1u << IMPI_AUTH_KEY)) {
        const char *k = o->key ? o->key : gimpi_env("IMPI_AUTH_KEY");
        if (!k || impi_auth_key_parse(k, &key) < 0) {   /* signed (LAM's) or unsigned */
            fprintf(stderr, PROG ": KEY authentication needs -key or IMPI_AUTH_KEY as a decimal "
                    "64-bit number\n");
            exit(2);
        }
    }
    *mask_p = mask;
    *key_p = key;
    return true;
}

/*  Waits for stdin to close (or the server to go away) before FINI. */
static void s_wait(impi_client_t *client)
{
    fprintf(stderr, PROG ": startup done; close stdin to send FINI\n");
    for (;;) {
        struct pollfd p[2] = { { .fd = 0, .events = POLLIN },
                               { .fd = impi_client_fd(client), .events = POLLIN } };
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (p[1].revents) {
            fprintf(stderr, PROG ": the server closed the connection before FINI\n");
            return;
        }
        if (p[0].revents) {
            char buf[256];
            if (read(0, buf, sizeof buf) <= 0)
                return;
        }
    }
}

/*  -load: prints the tables saved in a file.  Returns the exit status. */
static int s_load(const opts_t *o)
{
    int fd = open(o->load, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, PROG ": %s: %s\n", o->load, strerror(errno));
        return 1;
    }
    char lerr[512];
    impi_tables_t *t = impi_tables_load(fd, o->rank, lerr, sizeof lerr);
    close(fd);
    if (!t) {
        fprintf(stderr, PROG ": %s: %s\n", o->load, lerr);
        return 1;
    }
    impi_tables_print(t, stdout);
    impi_tables_destroy(&t);
    return 0;
}

/*  Fills in the hosts and procs of desc (allocated by the caller), all at address addr,
 *  opening a listening port per host unless -port was given (listeners[h], -1 when
 *  none).  Returns 0, or the exit status on failure. */
static int s_hosts(const opts_t *o, const uint8_t addr[16], impi_desc_t *desc, int *listeners)
{
    for (int h = 0; h < desc->nhosts; h++)
        listeners[h] = -1;
    int64_t pid = getpid();
    for (int h = 0; h < desc->nhosts; h++) {
        impi_desc_host_t *host = &desc->hosts[h];
        memcpy(host->addr, addr, 16);
        host->nprocs = (int)o->procs;
        host->ackmark = (uint32_t)o->ackmark;
        host->hiwater = (uint32_t)o->hiwater;
        if (o->port)
            host->port = (int)(o->port + h);
        else if ((listeners[h] = s_listen(&host->port)) < 0) {
            fprintf(stderr, PROG ": cannot open a listening port for host %d: %s\n", h,
                    strerror(errno));
            return 1;
        }
        for (long k = 0; k < o->procs; k++) {
            long i = h * o->procs + k;
            memcpy(desc->procs[i].hostid, addr, 16);
            desc->procs[i].pid = i == 0 ? pid : (pid << 32 | i);
        }
    }
    return 0;
}
/*  Builds the description, runs the startup, prints the tables, sends FINI. */
int main(int argc, char **argv)
{
    opts_t o;
    s_parse(argc, argv, &o);
    if (o.load)
        return s_load(&o);
    uint32_t mask = 0;
    uint64_t key = 0;
    bool auth_set = s_auth(&o, &mask, &key);
    impi_desc_t desc = { .rank = o.rank, .datalen = (uint32_t)o.datalen,
                         .tagub = (int32_t)o.tagub, .xsize = (int32_t)o.xsize,
                         .maxlinear = (int32_t)o.maxlinear, .nhosts = (int)o.hosts,
                         .nprocs = (int)(o.hosts * o.procs) };
    if (s_versions(o.versions, &desc) < 0) {
        fprintf(stderr, PROG ": -versions wants up to 8 MAJOR.MINOR separated by commas, not "
                "\"%s\"\n", o.versions);
        return 2;
    }
    uint8_t addr[16] = { 0 };
    struct in_addr v4;
    if (inet_pton(AF_INET, o.addr, &v4) == 1)
        impi_addr16_from_ipv4(addr, ntohl(v4.s_addr));
    else if (inet_pton(AF_INET6, o.addr, addr) != 1) {
        fprintf(stderr, PROG ": -addr wants a numeric IPv4 or IPv6 address, not \"%s\"\n", o.addr);
        return 2;
    }
    desc.hosts = calloc((size_t)desc.nhosts, sizeof *desc.hosts);
    desc.procs = calloc((size_t)desc.nprocs, sizeof *desc.procs);
    int *listeners = calloc((size_t)desc.nhosts, sizeof *listeners);
    impi_client_t *client = NULL;
    int status = 0;
    char err[512];
    if (!desc.hosts || !desc.procs || !listeners) {
        fprintf(stderr, PROG ": out of memory\n");
        status = 1;
        goto out;
    }
    if ((status = s_hosts(&o, addr, &desc, listeners)) != 0)
        goto out;
    if (impi_desc_check(&desc, err, sizeof err) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        status = 2;
        goto out;
    }
    client = impi_client_new(o.server, (int)(o.timeout * 1000));
    if (!client) {
        fprintf(stderr, PROG ": out of memory\n");
        status = 1;
        goto out;
    }
    if (auth_set)
        impi_client_set_auth(client, mask, key);
    if (o.trace)
        impi_client_set_trace(client, stderr);
    int rc = impi_client_start(client, &desc, err, sizeof err);
    if (rc) {
        fprintf(stderr, PROG ": client %d, server %s: %s\n", o.rank, o.server, err);
        status = 1;
    } else {
        const impi_tables_t *t = impi_client_tables(client);
        impi_tables_print(t, stdout);
        fflush(stdout);
        if (o.save) {
            int fd = open(o.save, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            int src = fd < 0 ? -1 : impi_tables_save(t, fd);
            if (fd >= 0 && close(fd) < 0)
                src = -1;
            if (src < 0) {
                fprintf(stderr, PROG ": cannot save the tables to %s: %s\n", o.save,
                        strerror(errno));
                status = 1;
            }
        }
        if (o.wait)
            s_wait(client);
        if (impi_client_fini(client, err, sizeof err)) {
            fprintf(stderr, PROG ": FINI: %s\n", err);
            status = 1;
        }
    }
out:
    impi_client_destroy(&client);
    for (int h = 0; listeners && h < desc.nhosts; h++)
        if (listeners[h] >= 0)
            close(listeners[h]);
    free(listeners);
    free(desc.hosts);
    free(desc.procs);
    return status;
}
